//! Atomic writes of the unconfined local file system: readers and crashes see
//! the old file or the new one, never a mixture.
//!
//! The target's symlinks are followed (dangling ones too) to the file the write
//! replaces; its directory is opened once, and the [temp-file writer](super::temp)
//! that confined writes use too writes the new bytes in that directory handle
//! and renames them over the target relative to it; then the directory is fsynced.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::kind::{kind_of_mode, mode_of, special_error, special_kind};
use super::resolve::os_error;
use super::temp::{TempIn, staging};
use super::writeback::{self, StreamFill};
use crate::{FileKind, FsError, FsErrorKind, WriteStream};

/// Symlinks followed at most when writing through a chain of links (Linux's own limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// Follows symlinks at `path` (dangling ones too) to the path a write must replace.
fn write_target(path: &Path) -> Result<PathBuf, FsError> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let link = fs::read_link(&current).map_err(|e| FsError::from_io(e, &current))?;
                current = match current.parent() {
                    Some(parent) => parent.join(link),
                    None => link,
                };
            }
            Ok(_) => return Ok(current),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(current),
            Err(error) => return Err(FsError::from_io(error, &current)),
        }
    }
    Err(FsError::new(FsErrorKind::SymlinkLoop, path))
}

/// Writes the new content of a file into its (empty) temp file. It may be
/// called a second time, on a fresh temp file, when the first way fails.
pub(super) type Fill<'a> = &'a mut dyn FnMut(&mut File) -> io::Result<()>;

/// Writes `contents` to `path` atomically (large contents with early
/// writeback, see [`super::writeback`]); runs on the blocking pool.
pub(super) fn write_atomic_blocking(path: &Path, contents: &[u8]) -> Result<(), FsError> {
    write_atomic_filled(path, &mut |file| writeback::write_all(file, contents))
}

/// Writes the concatenation of `parts` to `path` atomically (see
/// [`write_atomic_blocking`]); runs on the blocking pool.
pub(super) fn write_atomic_parts_blocking(path: &Path, parts: &[&[u8]]) -> Result<(), FsError> {
    write_atomic_filled(path, &mut |file| writeback::write_parts(file, parts))
}

/// [`write_atomic_parts_blocking`] that renames only when `gate` says `true`
/// (see `FileSystem::write_atomic_parts_gated`): the parts are written and the
/// temp file synced before it waits.
pub(super) fn write_atomic_parts_gated_blocking(
    path: &Path,
    parts: &[&[u8]],
    gate: std::sync::mpsc::Receiver<bool>,
) -> Result<(), FsError> {
    let mut gated = gated_fill(parts, gate);
    let result = write_atomic_filled(path, &mut |file| gated.fill(file));
    gated.result(path, result)
}

/// The fill of a gated write: the parts, a sync, then the gate (asked once).
pub(super) struct GatedFill<'a> {
    parts: &'a [&'a [u8]],
    gate: std::sync::mpsc::Receiver<bool>,
    open: Option<bool>,
}

pub(super) fn gated_fill<'a>(
    parts: &'a [&'a [u8]],
    gate: std::sync::mpsc::Receiver<bool>,
) -> GatedFill<'a> {
    GatedFill {
        parts,
        gate,
        open: None,
    }
}

impl GatedFill<'_> {
    pub(super) fn fill(&mut self, file: &mut File) -> io::Result<()> {
        writeback::write_parts(file, self.parts)?;
        file.sync_data()?;
        let gate = &self.gate;
        if *self
            .open
            .get_or_insert_with(|| gate.recv().unwrap_or(false))
        {
            Ok(())
        } else {
            Err(io::Error::from(io::ErrorKind::Interrupted))
        }
    }

    /// The write's result: called off when the gate said no.
    pub(super) fn result(&self, path: &Path, result: Result<(), FsError>) -> Result<(), FsError> {
        if self.open == Some(false) {
            return Err(FsError::new(FsErrorKind::Cancelled, path));
        }
        result
    }
}

/// Writes the bytes of `stream` to `path` atomically as they arrive; runs on
/// the blocking pool (it waits there for the chunks).
pub(super) fn write_atomic_streamed_blocking(
    path: &Path,
    stream: &mut WriteStream,
) -> Result<(), FsError> {
    let size = stream.size();
    let mut fill = StreamFill::new(stream);
    let result = write_atomic_filled(path, &mut |file| fill.fill(file));
    match fill.problem {
        Some(problem) => Err(problem.error(path, size)),
        None => result,
    }
}

/// Replaces `path` atomically with what `fill` writes; runs on the blocking pool.
pub(super) fn write_atomic_filled(path: &Path, fill: Fill<'_>) -> Result<(), FsError> {
    write_in_directory(path, &mut |temp, name, existing| {
        temp.write_and_rename(name, &mut |_, _, out| fill(out), existing)
    })
}

/// The temp-file writer's way in: `write` runs with the writer in the
/// directory of the file `path` replaces, that file's name and its `stat`.
type Writer<'a> = &'a mut dyn FnMut(&TempIn<'_>, &OsStr, Option<&rfs::Stat>) -> Result<(), Errno>;

/// Opens the directory of the file `path` replaces, refuses a directory or a
/// special file there, and runs `write`; then fsyncs the directory.
fn write_in_directory(path: &Path, write: Writer<'_>) -> Result<(), FsError> {
    let file = write_target(path)?;
    let Some(name) = file.file_name() else {
        return Err(FsError::new(FsErrorKind::IsADirectory, path));
    };
    let directory = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    // A missing directory is reported as the target's own path.
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let dir = rfs::open(directory, flags, Mode::empty()).map_err(|errno| os_error(errno, path))?;
    let existing = existing(dir.as_fd(), name, path)?;
    // A short prefix of the name keeps the temp name under NAME_MAX.
    let prefix: String = name.to_string_lossy().chars().take(64).collect();
    let temp = TempIn {
        dir: dir.as_fd(),
        prefix: format!(".{prefix}."),
        staging: staging(),
    };
    write(&temp, name, existing.as_ref()).map_err(|errno| os_error(errno, path))?;
    temp.sync_dir();
    Ok(())
}

/// The `stat` of the file a write replaces (following a link swapped in since);
/// `None` when there is none. A directory or a FIFO, socket or device is not
/// replaced by a regular file.
fn existing(dir: BorrowedFd<'_>, name: &OsStr, path: &Path) -> Result<Option<rfs::Stat>, FsError> {
    match rfs::statat(dir, name, AtFlags::empty()) {
        Ok(stat) => {
            if let Some(kind) = special_kind(mode_of(&stat)) {
                return Err(special_error(kind, path));
            }
            if kind_of_mode(mode_of(&stat)) == FileKind::Directory {
                return Err(FsError::new(FsErrorKind::IsADirectory, path));
            }
            Ok(Some(stat))
        }
        Err(Errno::NOENT) => Ok(None),
        Err(errno) => Err(os_error(errno, path)),
    }
}

/// The portable path alone (a named temp file), for tests.
#[cfg(test)]
fn write_named(path: &Path, contents: &[u8]) -> Result<(), FsError> {
    write_in_directory(path, &mut |temp, name, existing| {
        temp.named(
            name,
            &mut |_, _, out| io::Write::write_all(out, contents),
            existing,
        )
    })
}

/// The unnamed path alone (`O_TMPFILE`), for tests: `Ok(false)` when it is
/// not available here and nothing was changed.
#[cfg(all(test, target_os = "linux"))]
fn write_unnamed(path: &Path, contents: &[u8]) -> Result<bool, FsError> {
    let mut written = false;
    write_in_directory(path, &mut |temp, name, existing| {
        match temp.unnamed(
            name,
            &mut |_, _, out| io::Write::write_all(out, contents),
            existing,
        )? {
            super::temp::Unnamed::Placed => written = true,
            super::temp::Unnamed::Linked(staged) => {
                temp.rename_staged(&staged, name)?;
                written = true;
            }
            super::temp::Unnamed::Unavailable | super::temp::Unnamed::Unlinked(_) => {}
        }
        Ok(())
    })?;
    Ok(written)
}

#[cfg(test)]
#[path = "atomic_tests.rs"]
pub(super) mod tests;
