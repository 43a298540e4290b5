//! The glob rule shared by `find` and grep's file filter (Pi's find, §9.2).
//!
//! - A pattern without `/` matches the file name at any depth (`*.ts`).
//! - A pattern with `/` matches the path relative to the search root, as Pi
//!   1.6 does: `src/*.ts` finds `src/a.ts` but not `pkg/src/a.ts`;
//!   `**/src/*.ts` finds both. A leading `./` or `/` is dropped (both name the
//!   search root).
//! - A trailing `/` matches directories only.
//! - `*` and `?` never cross `/`; `**` does; `{a,b}` and `[...]` work.
//! - Smart case, like fd: case-insensitive unless the pattern has an
//!   uppercase letter, so `readme*` finds `README.md`. Such a pattern is
//!   already lowercase, so it is compiled case-sensitively and matched
//!   against the lowercased name: globset's case-insensitive mode compiles
//!   every glob to a regex, while `*.ts` as written is an extension lookup.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};

use crate::SearchError;

/// A compiled glob.
#[derive(Clone, Debug)]
pub(super) struct PathGlob {
    matcher: GlobMatcher,
    name_only: bool,
    dirs_only: bool,
    /// Lowercase candidates before matching (smart case, no uppercase).
    fold_case: bool,
}

impl PathGlob {
    /// Compiles `pattern`; `InvalidGlob` with globset's one-line reason.
    pub(super) fn new(pattern: &str) -> Result<PathGlob, SearchError> {
        let dirs_only = pattern.len() > 1 && pattern.ends_with('/');
        let trimmed = if dirs_only {
            pattern.trim_end_matches('/')
        } else {
            pattern
        };
        let mut relative = trimmed;
        while let Some(rest) = relative.strip_prefix("./") {
            relative = rest.trim_start_matches('/');
        }
        let relative = relative.strip_prefix('/').unwrap_or(relative);
        let name_only = !relative.contains('/');
        let effective = relative.to_owned();
        let fold_case = !pattern.chars().any(char::is_uppercase);
        let glob = GlobBuilder::new(&effective)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|error| SearchError::InvalidGlob(short_glob_error(pattern, &error)))?;
        Ok(PathGlob {
            matcher: glob.compile_matcher(),
            name_only,
            dirs_only,
            fold_case,
        })
    }

    /// Whether the entry at `bytes` (its path relative to the root) matches.
    pub(super) fn is_match(&self, bytes: &[u8], is_dir: bool) -> bool {
        if self.dirs_only && !is_dir {
            return false;
        }
        let candidate = if self.name_only {
            // The last component, without `Path::file_name`'s parsing.
            let name = bytes.rsplit(|&byte| byte == b'/').next().unwrap_or(bytes);
            if name.is_empty() || name == b".." {
                return false;
            }
            name
        } else {
            bytes
        };
        if self.fold_case {
            self.matcher
                .is_match(Path::new(OsStr::from_bytes(&lowercase(candidate))))
        } else {
            self.matcher
                .is_match(Path::new(OsStr::from_bytes(candidate)))
        }
    }
}

/// `bytes` lowercased (Unicode when it is UTF-8), borrowed when already so.
fn lowercase(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !bytes
        .iter()
        .any(|&byte| byte.is_ascii_uppercase() || !byte.is_ascii())
    {
        return Cow::Borrowed(bytes);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) if text.is_ascii() => Cow::Owned(bytes.to_ascii_lowercase()),
        Ok(text) => Cow::Owned(text.to_lowercase().into_bytes()),
        Err(_) => Cow::Owned(bytes.to_ascii_lowercase()),
    }
}

/// `'[' unclosed character class; missing ']'` style, naming the user's pattern.
fn short_glob_error(pattern: &str, error: &globset::Error) -> String {
    format!("{pattern}: {}", error.kind())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        PathGlob::new(pattern)
            .unwrap()
            .is_match(path.as_bytes(), false)
    }

    #[test]
    fn a_pattern_without_a_slash_matches_the_name_at_any_depth() {
        assert!(matches("*.ts", "a.ts"));
        assert!(matches("*.ts", "src/deep/a.ts"));
        assert!(!matches("*.ts", "src/a.tsx"));
    }

    #[test]
    fn a_pattern_with_a_slash_is_relative_to_the_search_root() {
        assert!(matches("src/**/*.spec.ts", "src/a/b.spec.ts"));
        assert!(matches("src/**/*.spec.ts", "src/b.spec.ts"));
        assert!(!matches("src/**/*.spec.ts", "pkg/src/b.spec.ts"));
        assert!(!matches("src/*.ts", "pkg/src/a.ts"));
        assert!(matches("**/src/*.ts", "pkg/src/a.ts"));
        assert!(matches("**/src/*.ts", "src/a.ts"));
        assert!(matches("./src/*.ts", "src/a.ts"));
        assert!(matches("./*.ts", "a.ts"));
        assert!(matches("./*.ts", "deep/a.ts"));
        assert!(!matches("src/*.ts", "src/a/b.ts"));
        assert!(matches("some/dir/**", "some/dir/x/y"));
        assert!(matches("**/parent/child/*", "x/parent/child/f"));
        assert!(!matches("**/parent/child/*", "x/parent/child/g/f"));
    }

    #[test]
    fn a_leading_slash_anchors_at_the_root() {
        assert!(matches("/src/*.ts", "src/a.ts"));
        assert!(!matches("/src/*.ts", "pkg/src/a.ts"));
    }

    #[test]
    fn case_is_smart() {
        assert!(matches("readme*", "README.md"));
        assert!(!matches("README*", "readme.md"));
        assert!(matches("*.ts", "src/Deep/A.TS"));
        assert!(matches("src/**/*.ts", "SRC/x/a.Ts"));
        assert!(matches("straße*", "STRAßE.md"));
        assert!(!matches("*.ts", "a.tsx"));
    }

    #[test]
    fn a_trailing_slash_matches_directories_only() {
        let glob = PathGlob::new("src/").unwrap();
        assert!(glob.is_match(b"a/src", true));
        assert!(!glob.is_match(b"a/src", false));
    }

    #[test]
    fn an_unclosed_class_is_an_invalid_glob() {
        let error = PathGlob::new("[").unwrap_err();
        assert!(matches!(error, SearchError::InvalidGlob(_)), "{error}");
        assert!(!error.to_string().contains('\n'));
    }
}
