//! [`WriteRules`]: which paths beneath a root writes may not change — `.git/`
//! always, and the `--protect` globs — as data, so that a confined view can
//! be built from them anywhere (here, or by `pith serve` on a remote).

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// One `--protect` pattern: as the user gave it (for messages) and the glob
/// it compiles to, relative to a root.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProtectGlob {
    /// The pattern as given.
    pub pattern: String,
    /// The compiled glob (`**/.env`, `{secrets/**}`...), matched with `/`
    /// as a literal separator against the path relative to a root.
    pub glob: String,
}

/// The rules a confined view judges every write, new directory and removal
/// by, on the path *as resolved by handle*: nothing inside a `.git`
/// directory, nothing a protect glob matches. The default protects `.git/` only.
#[derive(Clone, Default)]
pub struct WriteRules {
    protect: Vec<ProtectGlob>,
    set: GlobSet,
}

impl fmt::Debug for WriteRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteRules")
            .field("protect", &self.protect)
            .finish()
    }
}

impl PartialEq for WriteRules {
    fn eq(&self, other: &WriteRules) -> bool {
        self.protect == other.protect
    }
}

impl Eq for WriteRules {}

impl WriteRules {
    /// Rules protecting `.git/` and every pattern of `protect`, each
    /// gitignore-style relative to a root: a leading `/` anchors it to the
    /// root (an absolute path under one of `roots` is that path), a `/` in
    /// the middle anchors it too, a pattern without one matches a name at any
    /// depth, `**` matches any number of directories, and a trailing `/`
    /// matches what is inside a directory of that name. A matched directory
    /// protects everything inside it.
    ///
    /// # Errors
    ///
    /// A pattern that can never match a path beneath a root (empty, `..`, an
    /// absolute path outside every root, the root itself) or is not a valid
    /// glob, named as given.
    pub fn new(roots: &[PathBuf], protect: &[String]) -> Result<WriteRules, String> {
        let globs = protect
            .iter()
            .map(|pattern| {
                protect_glob(pattern, roots).map(|glob| ProtectGlob {
                    pattern: pattern.clone(),
                    glob,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        WriteRules::from_globs(globs)
    }

    /// Rules from globs compiled before (e.g. received from the near side of
    /// a remote connection): no pattern is checked against a file system.
    ///
    /// # Errors
    ///
    /// A glob that does not compile, named with its pattern.
    pub fn from_globs(protect: Vec<ProtectGlob>) -> Result<WriteRules, String> {
        let mut builder = GlobSetBuilder::new();
        for glob in &protect {
            builder.add(compile(&glob.glob).map_err(|error| {
                format!("--protect {:?}: not a valid glob ({error})", glob.pattern)
            })?);
        }
        let set = builder
            .build()
            .map_err(|error| format!("invalid --protect glob: {error}"))?;
        Ok(WriteRules { protect, set })
    }

    /// The protect globs (besides `.git/`).
    pub fn globs(&self) -> &[ProtectGlob] {
        &self.protect
    }

    /// Judges a write to `relative` beneath `root` (the root as configured;
    /// the message names `root/relative`): `Err` with the reason the model
    /// sees when it is protected.
    ///
    /// # Errors
    ///
    /// The path is inside `.git/` or matches a protect glob.
    pub fn check(&self, root: &Path, relative: &Path) -> Result<(), String> {
        match self.reason(&root.join(relative), relative) {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    /// Why `relative` (beneath a root; `path` is what the message names)
    /// may not be written, if it may not.
    pub fn reason(&self, path: &Path, relative: &Path) -> Option<String> {
        if let Some(reason) = git_reason(path, relative) {
            return Some(reason);
        }
        if self.set.is_match(relative) {
            let matched: Vec<&str> = self
                .set
                .matches(relative)
                .into_iter()
                .filter_map(|index| self.protect.get(index).map(|glob| glob.pattern.as_str()))
                .collect();
            return Some(format!(
                "{} is protected (--protect {}): write and edit may not change it.",
                path.display(),
                matched.join(", ")
            ));
        }
        None
    }
}

/// The refusal for a path inside a `.git/` directory (`relative` is judged,
/// `path` named).
pub fn git_reason(path: &Path, relative: &Path) -> Option<String> {
    relative
        .components()
        .any(|component| component.as_os_str() == OsStr::new(".git"))
        .then(|| {
            format!(
                "{} is inside .git/, which write and edit may not change. Use git commands through bash instead.",
                path.display()
            )
        })
}

fn compile(glob: &str) -> Result<globset::Glob, globset::ErrorKind> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map_err(|error| error.kind().clone())
}

/// Compiles one `--protect` pattern (see [`WriteRules::new`]) to its glob.
fn protect_glob(pattern: &str, roots: &[PathBuf]) -> Result<String, String> {
    let refuse = |why: &str| format!("--protect {pattern:?}: {why}");
    if pattern.trim().is_empty() {
        return Err(refuse(
            "an empty pattern matches nothing; pass a glob such as .env or 'secrets/**'",
        ));
    }
    let mut body: String = pattern.to_owned();
    let mut anchored = false;
    if body.starts_with('/') {
        let under = roots.iter().find_map(|root| {
            Path::new(&body)
                .strip_prefix(root)
                .ok()
                .map(Path::to_path_buf)
        });
        if let Some(relative) = under {
            body = relative.to_string_lossy().into_owned();
        } else {
            let first = body.trim_start_matches('/').split('/').next().unwrap_or("");
            let outside = !first.is_empty()
                && !first.contains(['*', '?', '[', '{'])
                && Path::new("/").join(first).exists()
                && !roots.iter().any(|root| root.join(first).exists());
            if outside {
                let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
                return Err(refuse(&format!(
                    "an absolute path outside every root ({}) can never match; a leading / anchors a pattern to the root (like /build), so name a path inside a root",
                    roots.join(", ")
                )));
            }
            body = body.trim_start_matches('/').to_owned();
        }
        anchored = true;
    }
    while let Some(rest) = body.strip_prefix("./") {
        body = rest.to_owned();
        anchored = true;
    }
    let dir_only = body.ends_with('/');
    let body = body.trim_end_matches('/');
    if body.is_empty() || body == "." {
        return Err(refuse(
            "this names the root itself, not a path in it; use '**' to protect everything",
        ));
    }
    if body.split('/').any(|part| part == "..") {
        return Err(refuse(
            "patterns match paths inside a root, which never contain '..'; name the path inside the root",
        ));
    }
    if body.contains('/') {
        anchored = true;
    }
    let glob = if anchored {
        body.to_owned()
    } else {
        format!("**/{body}")
    };
    let glob = if dir_only {
        format!("{glob}/**")
    } else {
        // A protected directory protects what is inside it too.
        format!("{{{glob},{glob}/**}}")
    };
    compile(&glob).map_err(|error| refuse(&format!("not a valid glob ({error})")))?;
    Ok(glob)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_and_protect_globs_are_refused_with_the_users_pattern() {
        let root = PathBuf::from("/w");
        let rules = WriteRules::new(
            std::slice::from_ref(&root),
            &[".env".to_owned(), "/build/".to_owned()],
        )
        .unwrap();
        let error = rules.check(&root, Path::new("a/.env")).unwrap_err();
        assert_eq!(
            error,
            "/w/a/.env is protected (--protect .env): write and edit may not change it."
        );
        assert!(rules.check(&root, Path::new("build/x")).is_err());
        assert!(rules.check(&root, Path::new("a/build/x")).is_ok());
        assert!(
            rules
                .check(&root, Path::new(".git/hooks/pre-commit"))
                .unwrap_err()
                .contains("inside .git/")
        );
        let again = WriteRules::from_globs(rules.globs().to_vec()).unwrap();
        assert_eq!(again, rules);
        assert!(again.check(&root, Path::new("x/y/.env")).is_err());
        assert!(
            WriteRules::default()
                .check(&root, Path::new("x/.env"))
                .is_ok()
        );
    }

    #[test]
    fn patterns_that_never_match_are_refused_by_name() {
        let error = WriteRules::new(&[PathBuf::from("/w")], &["../x".to_owned()]).unwrap_err();
        assert!(error.starts_with("--protect \"../x\":"), "{error}");
        assert!(WriteRules::new(&[], &[String::new()]).is_err());
    }
}
