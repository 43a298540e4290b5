//! `--protect` globs for commands: expanded to the paths that exist when each
//! command starts, which the mount namespace then makes read-only.
//!
//! A read-only bind mount needs a path, not a pattern, so a glob protects what
//! matches it at the moment the command starts: a file the command creates
//! later is not covered (docs/reliability.md). The walk starts at the longest
//! literal directory of the pattern, does not follow symbolic links, does not
//! descend into a match (the mount of a directory covers its contents) nor into
//! `.git` directories (protected whole already), and stops after
//! [`WALK_LIMIT`] entries or [`MATCH_LIMIT`] matches, with a warning.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use globset::GlobBuilder;

/// Entries visited per glob and command start, at most.
const WALK_LIMIT: usize = 100_000;
/// Paths one glob may protect (one mount each), at most.
const MATCH_LIMIT: usize = 1_000;

/// Whether `path` is a pattern rather than a path.
pub(super) fn is_glob(path: &Path) -> bool {
    path.to_string_lossy().contains(['*', '?', '[', '{'])
}

/// The existing paths `pattern` (absolute, gitignore-style with `/` literal)
/// matches. A directory matches when it or everything inside it does.
pub(super) fn expand(pattern: &Path) -> Vec<PathBuf> {
    let text = pattern.to_string_lossy();
    let Ok(glob) = GlobBuilder::new(&text).literal_separator(true).build() else {
        tracing::warn!("--protect {text}: not a valid glob; not applied to commands");
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    let mut base = PathBuf::new();
    for component in pattern.components() {
        if matches!(component, Component::Normal(name) if is_glob(Path::new(name))) {
            break;
        }
        base.push(component);
    }
    if base.as_os_str().is_empty() || base == Path::new("/") || !base.is_dir() {
        return Vec::new();
    }
    let found = Arc::new(Mutex::new(Vec::new()));
    let visited = Arc::new(AtomicUsize::new(0));
    let (sink, count) = (Arc::clone(&found), Arc::clone(&visited));
    let walk = ignore::WalkBuilder::new(&base)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            if count.fetch_add(1, Ordering::Relaxed) >= WALK_LIMIT {
                return false;
            }
            let path = entry.path();
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            let whole = matcher.is_match(path)
                || (is_dir && matcher.is_match(path.join(".pith-any-child")));
            if whole {
                let mut found = sink.lock().unwrap_or_else(PoisonError::into_inner);
                if found.len() < MATCH_LIMIT {
                    found.push(path.to_path_buf());
                }
                return false;
            }
            !(is_dir && entry.file_name() == ".git")
        })
        .build();
    for _ in walk {}
    if visited.load(Ordering::Relaxed) >= WALK_LIMIT {
        tracing::warn!(
            "--protect {text}: stopped after {WALK_LIMIT} entries under {}; later matches are not read-only for this command",
            base.display()
        );
    }
    let found = std::mem::take(&mut *found.lock().unwrap_or_else(PoisonError::into_inner));
    if found.len() >= MATCH_LIMIT {
        tracing::warn!(
            "--protect {text}: only the first {MATCH_LIMIT} matches are read-only for commands"
        );
    }
    found
}
