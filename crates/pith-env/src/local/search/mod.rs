//! Local search on ripgrep's library crates (`grep`, `ignore`, `globset`).
//!
//! Both searches walk with the same rules, ripgrep's and fd's defaults except
//! that hidden files are included: `.git/` never is, and `.gitignore` (nested,
//! applied hierarchically), `.ignore`, `.git/info/exclude`, the global git
//! excludes and the ignore files of the directories above the root are
//! honoured inside and outside git repositories ([`rules`]). Symbolic links
//! are not followed, so a link loop cannot make a walk spin, and the walk
//! descends through directory handles, so a directory swapped for a symlink
//! mid-walk cannot lead it outside its start directory ([`walk`]). The [`walk`] is
//! parallel yet yields entries in path order, so both searches are
//! deterministic and stop as soon as their limit is reached. The blocking work runs on
//! tokio's blocking pool; a cancelled (or dropped) call returns at once and
//! the blocking job notices a [`Stop`] flag at its next entry, match or read.
//! (The flag is an atomic load; the token's own check takes a mutex, and the
//! workers of a search would contend on it for every read.)

mod budget;
mod find;
mod glob;
mod grep;
mod rules;
mod walk;

use std::io;
use std::num::NonZero;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::local::fs::LocalBeneath;
use crate::{
    Confinement, FindOutput, FindRequest, FsError, FsErrorKind, GrepOutput, GrepRequest, LocalEnv,
    Search, SearchError,
};

#[async_trait]
impl Search for LocalEnv {
    async fn grep(
        &self,
        request: GrepRequest,
        cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        grep_from(request, cancel, None).await
    }

    async fn find(
        &self,
        request: FindRequest,
        cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        find_from(request, cancel, None).await
    }

    /// Searches that open their start beneath the roots by handle (as the
    /// confined file system view does), then walk down from that very handle.
    fn confine(self: Arc<Self>, confinement: Confinement) -> Arc<dyn Search> {
        Arc::new(SearchBeneath {
            beneath: LocalBeneath::new(confinement, None, false),
        })
    }
}

/// [`LocalEnv`]'s search confined beneath roots.
struct SearchBeneath {
    beneath: LocalBeneath,
}

#[async_trait]
impl Search for SearchBeneath {
    async fn grep(
        &self,
        request: GrepRequest,
        cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        grep_from(request, cancel, Some(self.beneath.clone())).await
    }

    async fn find(
        &self,
        request: FindRequest,
        cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        find_from(request, cancel, Some(self.beneath.clone())).await
    }

    fn confine(self: Arc<Self>, confinement: Confinement) -> Arc<dyn Search> {
        // A view of a view: beneath the new roots that are beneath these.
        Arc::new(SearchBeneath {
            beneath: self.beneath.narrow(confinement),
        })
    }
}

/// grep from the start `request.root` names, opened by path or beneath the
/// roots of `beneath`.
async fn grep_from(
    request: GrepRequest,
    cancel: CancellationToken,
    beneath: Option<LocalBeneath>,
) -> Result<GrepOutput, SearchError> {
    let threads = thread_count();
    let Some(_reserved) = budget::BUDGET
        .reserve(budget::grep_cost(threads), &cancel)
        .await
    else {
        return Err(SearchError::Cancelled);
    };
    run_blocking(&request.root.clone(), cancel, move |stop| {
        let start = open_start(&request.root, beneath.as_ref())?;
        grep::grep(&request, start, threads, &stop)
    })
    .await
}

/// find from the start `request.root` names (see [`grep_from`]).
async fn find_from(
    request: FindRequest,
    cancel: CancellationToken,
    beneath: Option<LocalBeneath>,
) -> Result<FindOutput, SearchError> {
    let Some(_reserved) = budget::BUDGET.reserve(budget::FIND_COST, &cancel).await else {
        return Err(SearchError::Cancelled);
    };
    run_blocking(&request.root.clone(), cancel, move |stop| {
        let start = open_start(&request.root, beneath.as_ref())?;
        find::find(&request, start, &stop)
    })
    .await
}

/// Where a search starts: the handle its start path was opened as, once.
/// Everything the search reads is reached from this handle, so the start path
/// itself swapped for a symlink after it was opened changes nothing.
enum Start {
    /// A directory: the walk lists it and descends from it by handle.
    Dir(OwnedFd),
    /// A regular file, searched whole.
    File(std::fs::File),
}

/// Opens the start `root` once, never blocking: by its path, or beneath the
/// roots of `beneath` (refused with `OutsideRoots` when it resolves outside
/// them); a special file is refused naming its kind.
fn open_start(root: &Path, beneath: Option<&LocalBeneath>) -> Result<Start, SearchError> {
    use rustix::fs::{self as rfs, FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let opened = match beneath {
        Some(beneath) => beneath.open_search_start(root, flags),
        None => rfs::open(root, flags, Mode::empty())
            .map_err(|errno| FsError::from_io(io::Error::from(errno), root)),
    };
    let fd = match opened {
        Ok(fd) => fd,
        Err(error) if error.kind == FsErrorKind::NotFound => {
            return Err(SearchError::NotFound(root.to_path_buf()));
        }
        Err(error) => {
            // open(2) of a socket fails (ENXIO): say what it is.
            if beneath.is_none()
                && let Ok(metadata) = std::fs::metadata(root)
                && let Some(kind) = special_kind(&metadata)
            {
                return Err(SearchError::Fs(
                    FsError::new(FsErrorKind::SpecialFile, root).with_detail(kind),
                ));
            }
            return Err(SearchError::Fs(error));
        }
    };
    let stat = rfs::fstat(&fd)
        .map_err(|errno| SearchError::Fs(FsError::from_io(io::Error::from(errno), root)))?;
    match FileType::from_raw_mode(stat.st_mode as _) {
        FileType::Directory => Ok(Start::Dir(fd)),
        FileType::RegularFile => Ok(Start::File(std::fs::File::from(fd))),
        other => {
            let kind = match other {
                FileType::Fifo => "FIFO (named pipe)",
                FileType::Socket => "socket",
                FileType::CharacterDevice => "character device",
                FileType::BlockDevice => "block device",
                _ => "special file",
            };
            Err(SearchError::Fs(
                FsError::new(FsErrorKind::SpecialFile, root).with_detail(kind),
            ))
        }
    }
}

/// The kind of a special file, for its error.
fn special_kind(metadata: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_fifo() {
        Some("FIFO (named pipe)")
    } else if kind.is_socket() {
        Some("socket")
    } else if kind.is_char_device() {
        Some("character device")
    } else if kind.is_block_device() {
        Some("block device")
    } else {
        None
    }
}

/// Set when the caller no longer wants the result: the token fired or the
/// call's future was dropped.
#[derive(Debug, Default)]
struct Stop(AtomicBool);

impl Stop {
    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Sets the job's [`Stop`] when the call ends, however it ends.
struct StopOnDrop(Arc<Stop>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        (self.0).0.store(true, Ordering::Relaxed);
    }
}

/// Runs `job` on the blocking pool; returns `Cancelled` as soon as `cancel`
/// fires (the job sees its [`Stop`] and ends on its own shortly after).
async fn run_blocking<T, F>(
    root: &Path,
    cancel: CancellationToken,
    job: F,
) -> Result<T, SearchError>
where
    T: Send + 'static,
    F: FnOnce(Arc<Stop>) -> Result<T, SearchError> + Send + 'static,
{
    if cancel.is_cancelled() {
        return Err(SearchError::Cancelled);
    }
    let stop = Arc::new(Stop::default());
    let _guard = StopOnDrop(Arc::clone(&stop));
    let handle = tokio::task::spawn_blocking(move || job(stop));
    tokio::select! {
        joined = handle => joined.unwrap_or_else(|error| {
            Err(SearchError::Fs(
                FsError::new(FsErrorKind::Other, root).with_detail(format!("search failed: {error}")),
            ))
        }),
        () = cancel.cancelled() => Err(SearchError::Cancelled),
    }
}

/// Opens the file a walk listed at `path`, relative to its directory's handle
/// `dir` and without following a symlink; anything but a regular file (checked
/// on the opened handle) is refused, and the open never blocks.
pub(super) fn open_regular_at(
    dir: impl std::os::fd::AsFd,
    path: &Path,
) -> Result<std::fs::File, FsError> {
    use rustix::fs::{self as rfs, FileType, Mode, OFlags};
    let Some(name) = path.file_name() else {
        return Err(FsError::new(FsErrorKind::NotFound, path));
    };
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let error = |errno: rustix::io::Errno| FsError::from_io(io::Error::from(errno), path);
    let fd = rfs::openat(dir, name, flags, Mode::empty()).map_err(error)?;
    let stat = rfs::fstat(&fd).map_err(error)?;
    if FileType::from_raw_mode(stat.st_mode as _) != FileType::RegularFile {
        return Err(FsError::new(FsErrorKind::SpecialFile, path).with_detail("not a regular file"));
    }
    Ok(std::fs::File::from(fd))
}

/// Worker threads for a search: one per core, at most 12 (ripgrep's cap).
fn thread_count() -> usize {
    std::thread::available_parallelism()
        .map_or(1, NonZero::get)
        .min(12)
}

/// `root`-relative path with `/` separators, lossily decoded.
fn relative_display(root: &Path, path: &Path) -> String {
    if let Some(relative) = relative_bytes(root, path) {
        return String::from_utf8_lossy(relative).into_owned();
    }
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

/// The bytes of `path` after `root` and its separator, when `path` is `root`
/// joined with more (as the walker builds them): a byte comparison instead of
/// `Path::strip_prefix`'s component parsing, which showed in profiles.
fn relative_bytes<'p>(root: &Path, path: &'p Path) -> Option<&'p [u8]> {
    use std::os::unix::ffi::OsStrExt;
    let rest = path
        .as_os_str()
        .as_bytes()
        .strip_prefix(root.as_os_str().as_bytes())?;
    if root.as_os_str().as_bytes().ends_with(b"/") {
        Some(rest)
    } else {
        rest.strip_prefix(b"/")
    }
}
