//! [`FileSystem::write_spliced`](crate::FileSystem::write_spliced) for `LocalEnv`:
//! the old file copied into the atomic write's temp file with byte ranges replaced.
//!
//! The unchanged stretches go through `std::io::copy` from file to file, which on
//! Linux is `copy_file_range`: the kernel copies (or, on file systems that can,
//! shares extents) without the bytes passing through this process, so an edit of a
//! 1 GiB file costs a few pages of memory, not the file. Holes of a sparse file
//! are found with `SEEK_DATA`/`SEEK_HOLE` and stay holes, as `cp` keeps them.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::atomic;
use crate::fs::check_splices;
use crate::{FsError, FsErrorKind, Splice};

/// Writes `path` anew from its old bytes and `splices`; runs on the blocking pool.
pub(super) fn write_spliced_blocking(path: &Path, splices: &[Splice]) -> Result<(), FsError> {
    let source = File::open(path).map_err(|error| FsError::from_io(error, path))?;
    let len = source
        .metadata()
        .map_err(|error| FsError::from_io(error, path))?
        .len();
    check_splices(splices, len)
        .map_err(|detail| FsError::new(FsErrorKind::InvalidInput, path).with_detail(detail))?;
    atomic::write_atomic_filled(path, &mut |out| copy_spliced(&source, len, splices, out))
}

/// Writes the old bytes of `source` with the splices applied to `out`.
pub(super) fn copy_spliced(
    source: &File,
    len: u64,
    splices: &[Splice],
    out: &mut File,
) -> io::Result<()> {
    let mut at = 0;
    for splice in splices {
        copy_range(source, at..splice.range.start, out)?;
        out.write_all(&splice.bytes)?;
        at = splice.range.end;
    }
    copy_range(source, at..len, out)?;
    // Seeking past a final hole does not extend the file.
    let end = out.stream_position()?;
    out.set_len(end)
}

/// Copies `range` of `source` to `out`'s position, skipping holes.
fn copy_range(source: &File, range: std::ops::Range<u64>, out: &mut File) -> io::Result<()> {
    let mut position = range.start;
    while position < range.end {
        let data = sparse::next_data(source, position)?
            .unwrap_or(range.end)
            .min(range.end);
        if data > position {
            out.seek(SeekFrom::Current(signed(data - position)?))?;
            position = data;
            continue;
        }
        let hole = sparse::next_hole(source, position)?.min(range.end);
        let mut reader = source;
        reader.seek(SeekFrom::Start(position))?;
        let count = hole - position;
        let copied = io::copy(&mut reader.take(count), out)?;
        if copied != count {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file shrank while it was being rewritten",
            ));
        }
        position = hole;
    }
    Ok(())
}

fn signed(value: u64) -> io::Result<i64> {
    i64::try_from(value).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// Where data and holes are (`SEEK_DATA`/`SEEK_HOLE`).
#[cfg(target_os = "linux")]
mod sparse {
    use std::fs::File;
    use std::io;
    use std::os::unix::io::AsRawFd;

    fn seek(file: &File, offset: u64, whence: libc::c_int) -> io::Result<Option<u64>> {
        let offset = libc::off_t::try_from(offset)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: lseek on a file descriptor this `File` owns; no memory is passed.
        let result = unsafe { libc::lseek(file.as_raw_fd(), offset, whence) };
        if result >= 0 {
            return Ok(u64::try_from(result).ok());
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            // No data (or no hole) after `offset`.
            Some(libc::ENXIO) => Ok(None),
            _ => Err(error),
        }
    }

    /// The first data offset at or after `offset`; `None` if only a hole follows.
    /// A file system without `SEEK_DATA` has data everywhere.
    pub(super) fn next_data(file: &File, offset: u64) -> io::Result<Option<u64>> {
        match seek(file, offset, libc::SEEK_DATA) {
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => Ok(Some(offset)),
            other => other,
        }
    }

    /// The first hole at or after `offset` (the end of the file counts as one).
    pub(super) fn next_hole(file: &File, offset: u64) -> io::Result<u64> {
        match seek(file, offset, libc::SEEK_HOLE) {
            Ok(Some(hole)) => Ok(hole),
            Ok(None) | Err(_) => Ok(u64::MAX),
        }
    }
}

/// Elsewhere a file is all data.
#[cfg(not(target_os = "linux"))]
mod sparse {
    use std::fs::File;
    use std::io;

    pub(super) fn next_data(_file: &File, offset: u64) -> io::Result<Option<u64>> {
        Ok(Some(offset))
    }

    pub(super) fn next_hole(_file: &File, _offset: u64) -> io::Result<u64> {
        Ok(u64::MAX)
    }
}
