//! The private directory where a finished unnamed temp file gets the name it
//! is renamed from, so that a writer killed between that link and the rename
//! leaves its stray in pith's own directory, not in the user's.
//!
//! Linux has no "link over an existing name": an unnamed (`O_TMPFILE`) file
//! must be linked under some name before `renameat` can put it over the
//! target. Linked in the target's own directory, a SIGKILL in the microseconds
//! between the two calls leaves a `.<name>.<random>.pith-tmp` file beside the
//! user's files (it shows in `git status`). Linked here instead, the stray is
//! in `$XDG_STATE_HOME/pith/staging` (`~/.local/state/pith/staging` when
//! unset), and the next pith process that writes removes strays older than
//! [`STALE_AFTER`] when it opens the directory.
//!
//! A link (and a rename) works only within one mount: where the target's
//! directory is on another mount than the staging directory (a container's
//! bind mount, another disk, tmpfs), the link fails with `EXDEV` and the
//! writer links in the target's directory as before. The directory is
//! created mode 0700 and used only while it belongs to this user and no one
//! else may write in it.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};

/// A stray older than this (by its status change time, which its link set)
/// belongs to no write in progress: a write holds its staged name for
/// microseconds.
pub(super) const STALE_AFTER: Duration = Duration::from_secs(60);

/// This process's staging directory, opened (and swept) on first use; `None`
/// where it cannot be made or is not private.
pub(super) fn staging() -> Option<BorrowedFd<'static>> {
    static DIR: OnceLock<Option<OwnedFd>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = crate::local::state_dir()?.join("pith/staging");
        open(&dir, STALE_AFTER)
    })
    .as_ref()
    .map(AsFd::as_fd)
}

/// Opens (creating it if missing) the staging directory at `path`, refuses it
/// unless it is this user's and private, and removes its strays older than
/// `stale_after`.
pub(super) fn open(path: &Path, stale_after: Duration) -> Option<OwnedFd> {
    if let Err(error) = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        && error.kind() != std::io::ErrorKind::AlreadyExists
    {
        return None;
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rfs::open(path, flags, Mode::empty()).ok()?;
    let stat = rfs::fstat(&fd).ok()?;
    if stat.st_uid != rustix::process::geteuid().as_raw() || stat.st_mode & 0o022 != 0 {
        return None;
    }
    sweep(fd.as_fd(), stale_after);
    Some(fd)
}

/// Removes the regular files in `dir` whose status changed more than
/// `stale_after` ago. Best effort: errors are ignored.
fn sweep(dir: BorrowedFd<'_>, stale_after: Duration) {
    let Some(limit) = SystemTime::now()
        .checked_sub(stale_after)
        .and_then(|limit| limit.duration_since(UNIX_EPOCH).ok())
    else {
        return;
    };
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(listing) = rfs::openat(dir, ".", flags, Mode::empty()) else {
        return;
    };
    let Ok(mut entries) = rfs::Dir::read_from(&listing) else {
        return;
    };
    let mut stale: Vec<OsString> = Vec::new();
    while let Some(Ok(entry)) = entries.read() {
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let Ok(stat) = rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let changed = Duration::new(
            u64::try_from(stat.st_ctime).unwrap_or(0),
            u32::try_from(stat.st_ctime_nsec).unwrap_or(0),
        );
        if FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile && changed < limit {
            stale.push(name.to_owned());
        }
    }
    for name in stale {
        let _ = rfs::unlinkat(dir, name.as_os_str(), AtFlags::empty());
    }
}

#[cfg(test)]
#[path = "staging_tests.rs"]
mod tests;
