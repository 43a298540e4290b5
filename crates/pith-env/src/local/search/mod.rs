//! Local search on ripgrep's library crates (`grep`, `ignore`, `globset`).
//!
//! Both searches walk with the same rules ([`walker`]): hidden files are
//! included, `.git/` never is, and `.gitignore` (nested, applied
//! hierarchically), `.ignore`, `.git/info/exclude` and the global git excludes
//! are honoured inside and outside git repositories. Symbolic links are not
//! followed, so a link loop cannot make a walk spin. The blocking work runs on
//! tokio's blocking pool; a cancelled call returns at once and the blocking
//! job notices the token at its next entry, match or read.

mod find;
mod glob;
mod grep;

use std::io;
use std::num::NonZero;
use std::path::Path;

use async_trait::async_trait;
use ignore::WalkBuilder;
use tokio_util::sync::CancellationToken;

use crate::{
    FindOutput, FindRequest, FsError, FsErrorKind, GrepOutput, GrepRequest, LocalEnv, Search,
    SearchError,
};

#[async_trait]
impl Search for LocalEnv {
    async fn grep(
        &self,
        request: GrepRequest,
        cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        let token = cancel.clone();
        run_blocking(&request.root.clone(), cancel, move || {
            grep::grep(&request, &token)
        })
        .await
    }

    async fn find(
        &self,
        request: FindRequest,
        cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        let token = cancel.clone();
        run_blocking(&request.root.clone(), cancel, move || {
            find::find(&request, &token)
        })
        .await
    }
}

/// Runs `job` on the blocking pool; returns `Cancelled` as soon as `cancel`
/// fires (the job stops on its own shortly after).
async fn run_blocking<T, F>(
    root: &Path,
    cancel: CancellationToken,
    job: F,
) -> Result<T, SearchError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, SearchError> + Send + 'static,
{
    if cancel.is_cancelled() {
        return Err(SearchError::Cancelled);
    }
    let handle = tokio::task::spawn_blocking(job);
    tokio::select! {
        joined = handle => joined.unwrap_or_else(|error| {
            Err(SearchError::Fs(
                FsError::new(FsErrorKind::Other, root).with_detail(format!("search failed: {error}")),
            ))
        }),
        () = cancel.cancelled() => Err(SearchError::Cancelled),
    }
}

/// What the search root is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RootKind {
    Directory,
    File,
}

/// Stats the root: `NotFound` when it does not exist.
fn root_kind(root: &Path) -> Result<RootKind, SearchError> {
    match std::fs::metadata(root) {
        Ok(metadata) if metadata.is_dir() => Ok(RootKind::Directory),
        Ok(_) => Ok(RootKind::File),
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            Err(SearchError::NotFound(root.to_path_buf()))
        }
        Err(error) => Err(SearchError::Fs(FsError::from_io(error, root))),
    }
}

/// The walk both searches share: ripgrep's and fd's defaults, except that
/// hidden files are included and `.gitignore` counts outside git repositories.
fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        // `hidden(true)` would *skip* hidden files: ignore's flag names the filter.
        .hidden(false)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// Worker threads for a search: one per core, at most 12 (ripgrep's cap).
fn thread_count() -> usize {
    std::thread::available_parallelism()
        .map_or(1, NonZero::get)
        .min(12)
}

/// `root`-relative path with `/` separators, lossily decoded.
fn relative_display(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut display = String::new();
    for (index, component) in relative.components().enumerate() {
        if index > 0 {
            display.push('/');
        }
        display.push_str(&component.as_os_str().to_string_lossy());
    }
    display
}
