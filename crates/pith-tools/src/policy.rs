//! Workspace roots and protected paths: where the file tools may write (and,
//! when configured, read).
//!
//! A path is checked through the realpath of its nearest existing ancestor,
//! so `..`, symlinks to elsewhere, and new files created through a symlinked
//! directory are all judged by where they really land. This is pith's own
//! check for its file tools; commands run by `bash` are confined by the OS
//! sandbox instead (see `pith_env::SandboxPolicy`).

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use pith_env::{FileKind, FileSystem, FsErrorKind};

use crate::ToolError;

/// What a tool wants to do with a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// read, ls, grep, find.
    Read,
    /// write, edit.
    Write,
}

/// The workspace roots and protected paths.
#[derive(Clone, Debug)]
pub struct WorkspacePolicy {
    roots: Vec<PathBuf>,
    contain_reads: bool,
    protect_patterns: Vec<String>,
    protect: GlobSet,
}

impl WorkspacePolicy {
    /// A policy over `roots` (absolute; they are canonicalised when checked).
    /// `protect` are globs relative to a root that write and edit may not
    /// touch (a glob without `/` matches a name at any depth); `.git/` is
    /// always protected. `contain_reads` extends containment to read, ls,
    /// grep and find.
    pub fn new(
        roots: Vec<PathBuf>,
        protect: &[String],
        contain_reads: bool,
    ) -> Result<WorkspacePolicy, String> {
        let mut builder = GlobSetBuilder::new();
        for pattern in protect {
            builder.add(protect_glob(pattern)?);
        }
        let protect_set = builder
            .build()
            .map_err(|error| format!("invalid --protect glob: {error}"))?;
        Ok(WorkspacePolicy {
            roots,
            contain_reads,
            protect_patterns: protect.to_vec(),
            protect: protect_set,
        })
    }

    /// The roots as configured.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The protected globs as configured (besides `.git/`).
    pub fn protected(&self) -> &[String] {
        &self.protect_patterns
    }

    /// Whether read, ls, grep and find are confined too.
    pub fn contains_reads(&self) -> bool {
        self.contain_reads
    }

    /// Adds a root (e.g. one an MCP client offered).
    pub fn add_root(&mut self, root: PathBuf) {
        if !self.roots.contains(&root) {
            self.roots.push(root);
        }
    }

    /// Checks that `path` (absolute, lexically normalised) may be accessed.
    pub async fn check(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        access: Access,
    ) -> Result<(), ToolError> {
        if access == Access::Read && !self.contain_reads {
            return Ok(());
        }
        if path.as_os_str().as_encoded_bytes().contains(&0) {
            return Err(ToolError::new(
                "The path contains a NUL byte; send the path without it.",
            ));
        }
        let real = real_target(fs, path).await?;
        for root in &self.roots {
            let Ok(root) = fs.canonicalize(root).await else {
                continue;
            };
            let Ok(relative) = real.strip_prefix(&root) else {
                continue;
            };
            if access == Access::Write {
                self.check_protected(path, relative)?;
            }
            return Ok(());
        }
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|root| root.display().to_string())
            .collect();
        let via = if real == path {
            String::new()
        } else {
            format!(" (it resolves to {})", real.display())
        };
        Err(ToolError::new(format!(
            "{} is outside the workspace{via}. Allowed roots: {}. Use a path inside them.",
            path.display(),
            roots.join(", ")
        )))
    }

    fn check_protected(&self, path: &Path, relative: &Path) -> Result<(), ToolError> {
        if relative
            .components()
            .any(|component| component.as_os_str() == OsStr::new(".git"))
        {
            return Err(ToolError::new(format!(
                "{} is inside .git/, which write and edit may not change. Use git commands through bash instead.",
                path.display()
            )));
        }
        if self.protect.is_match(relative) {
            let matched: Vec<&str> = self
                .protect
                .matches(relative)
                .into_iter()
                .filter_map(|index| self.protect_patterns.get(index).map(String::as_str))
                .collect();
            return Err(ToolError::new(format!(
                "{} is protected (--protect {}): write and edit may not change it.",
                path.display(),
                matched.join(", ")
            )));
        }
        Ok(())
    }
}

fn protect_glob(pattern: &str) -> Result<Glob, String> {
    let trimmed = pattern.trim_start_matches("./").trim_end_matches('/');
    let anchored = if trimmed.contains('/') {
        trimmed.to_owned()
    } else {
        format!("**/{trimmed}")
    };
    // A protected directory protects what is inside it too.
    let pattern = format!("{{{anchored},{anchored}/**}}");
    GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|error| format!("invalid --protect glob {pattern:?}: {error}"))
}

/// Where a write to `path` really lands: the realpath of the nearest existing
/// ancestor joined with the components that do not exist yet. A final
/// component that is a symlink to a missing target is refused: writing
/// through it would create a file wherever the link points.
pub(crate) async fn real_target(fs: &dyn FileSystem, path: &Path) -> Result<PathBuf, ToolError> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<PathBuf> = Vec::new();
    loop {
        match fs.symlink_metadata(&existing).await {
            Ok(metadata) => {
                return match fs.canonicalize(&existing).await {
                    Ok(real) => Ok(rest.iter().rev().fold(real, |real, part| real.join(part))),
                    Err(error) if metadata.kind == FileKind::Symlink => {
                        Err(ToolError::new(format!(
                            "{} is a symbolic link whose target cannot be resolved ({}); refusing to write through it.",
                            existing.display(),
                            error.kind.code()
                        )))
                    }
                    Err(error) => Err(ToolError::new(error.to_string())),
                };
            }
            Err(error) if error.kind == FsErrorKind::NotFound => {
                let Some(name) = existing.file_name().map(PathBuf::from) else {
                    return Err(ToolError::new(format!(
                        "{} does not exist.",
                        path.display()
                    )));
                };
                rest.push(name);
                if !existing.pop() {
                    return Err(ToolError::new(format!(
                        "{} does not exist.",
                        path.display()
                    )));
                }
            }
            Err(error) => return Err(ToolError::new(error.to_string())),
        }
        if existing
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Prefix(_)))
        {
            let real = rest
                .iter()
                .rev()
                .fold(existing.clone(), |real, part| real.join(part));
            return Ok(real);
        }
    }
}
