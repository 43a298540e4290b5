//! File kinds and metadata from a raw `stat`, shared by the confined view and
//! the temp-file writer.

use std::path::Path;
use std::time::{Duration, SystemTime};

use rustix::fs::{self as rfs, FileType};

use crate::{FileKind, FsError, FsErrorKind, Metadata};

/// `st_mode`, whose integer type differs between targets.
#[allow(
    clippy::unnecessary_cast,
    reason = "st_mode is u32 here but not on every target"
)]
pub(super) fn mode_of(stat: &rfs::Stat) -> u32 {
    stat.st_mode as u32
}

pub(super) fn kind_of_mode(mode: u32) -> FileKind {
    match FileType::from_raw_mode(mode as _) {
        FileType::RegularFile => FileKind::File,
        FileType::Directory => FileKind::Directory,
        FileType::Symlink => FileKind::Symlink,
        _ => FileKind::Other,
    }
}

/// The name of a special file's kind, or `None` for files, directories and links.
pub(crate) fn special_kind(mode: u32) -> Option<&'static str> {
    match FileType::from_raw_mode(mode as _) {
        FileType::Fifo => Some("FIFO (named pipe)"),
        FileType::Socket => Some("socket"),
        FileType::CharacterDevice => Some("character device"),
        FileType::BlockDevice => Some("block device"),
        _ => None,
    }
}

pub(super) fn special_error(kind: &str, path: &Path) -> FsError {
    FsError::new(FsErrorKind::SpecialFile, path).with_detail(kind)
}

pub(super) fn convert(stat: &rfs::Stat) -> Metadata {
    let mode = mode_of(stat);
    Metadata {
        kind: kind_of_mode(mode),
        len: stat.st_size.max(0) as u64,
        modified: time_of(stat.st_mtime, stat.st_mtime_nsec),
        mode: Some(mode & 0o7777),
        changed: time_of(stat.st_ctime, stat.st_ctime_nsec),
        id: Some(crate::FileId {
            device: stat.st_dev,
            inode: stat.st_ino,
        }),
    }
}

/// A `stat` time (seconds and nanoseconds since the epoch); `None` before the epoch.
pub(super) fn time_of(seconds: i64, nanos: u64) -> Option<SystemTime> {
    let seconds = u64::try_from(seconds).ok()?;
    let nanos = u32::try_from(nanos).unwrap_or(0).min(999_999_999);
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(seconds, nanos))
}
