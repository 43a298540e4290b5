//! Filling a temp file with early writeback: large contents are written in
//! slices of [`SLICE`] bytes, and after each the kernel is asked to start
//! writing that slice to the disk (`sync_file_range(SYNC_FILE_RANGE_WRITE)`,
//! which does not wait). The temp file's `fsync` (which every atomic write
//! still makes before its rename) then waits only for the last slices instead
//! of the whole file: the page-cache copy, the data's arrival (a streamed
//! write) and the disk overlap.
//!
//! No crate wraps `sync_file_range` (nix 0.32 and rustix 1.1 do not), so it is
//! called through `libc`; it is a hint, and its failure is ignored (the
//! `fsync` that follows makes the write durable either way).

use std::fs::File;
use std::io::{self, Write};

use std::path::Path;

use crate::write_stream::{self, WriteStream};
use crate::{FsError, FsErrorKind};

/// How many bytes are written between two writeback requests.
pub(super) const SLICE: usize = 4 << 20;

/// Writes `contents` into `file`, starting each slice's writeback.
pub(super) fn write_all(file: &mut File, contents: &[u8]) -> io::Result<()> {
    if contents.len() <= SLICE {
        return file.write_all(contents);
    }
    let mut offset = 0_u64;
    for slice in contents.chunks(SLICE) {
        file.write_all(slice)?;
        start_writeback(file, offset, slice.len() as u64);
        offset += slice.len() as u64;
    }
    Ok(())
}

/// Writes the concatenation of `parts` into `file`, starting the writeback of
/// each [`SLICE`] bytes written, as [`write_all`] does for one part.
pub(super) fn write_parts(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
    let total: usize = parts.iter().map(|part| part.len()).sum();
    if total <= SLICE {
        for part in parts {
            file.write_all(part)?;
        }
        return Ok(());
    }
    let (mut offset, mut started) = (0_u64, 0_u64);
    for part in parts {
        for slice in part.chunks(SLICE) {
            file.write_all(slice)?;
            offset += slice.len() as u64;
            if offset - started >= SLICE as u64 {
                start_writeback(file, started, offset - started);
                started = offset;
            }
        }
    }
    if offset > started {
        start_writeback(file, started, offset - started);
    }
    Ok(())
}

/// Why a streamed fill stopped short of its size or ran past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamProblem {
    /// The sender stopped after this many bytes.
    EndedEarly(u64),
    /// More bytes arrived than the stream's size.
    Overran,
    /// A second fill was asked for: the bytes are gone. (The temp-file
    /// writer fills once; an unnamed file it cannot link is copied.)
    Consumed,
}

impl StreamProblem {
    /// The error a write that stopped this way fails with.
    pub(super) fn error(self, path: &Path, size: u64) -> FsError {
        match self {
            StreamProblem::EndedEarly(got) => write_stream::ended_early(path, got, size),
            StreamProblem::Overran => write_stream::overran(path, size),
            StreamProblem::Consumed => FsError::new(FsErrorKind::Other, path).with_detail(
                "the temp file could not be linked and the streamed bytes cannot be read again; \
                 the file was not changed, try again",
            ),
        }
    }
}

/// Fills a temp file from a stream as its chunks arrive (waiting on this
/// thread), starting writeback every [`SLICE`] bytes. Records in `problem` why
/// it stopped when the stream did not deliver exactly its size.
pub(super) struct StreamFill<'a> {
    pub(super) stream: &'a mut WriteStream,
    pub(super) problem: Option<StreamProblem>,
    started: bool,
}

impl<'a> StreamFill<'a> {
    pub(super) fn new(stream: &'a mut WriteStream) -> StreamFill<'a> {
        StreamFill {
            stream,
            problem: None,
            started: false,
        }
    }

    pub(super) fn fill(&mut self, file: &mut File) -> io::Result<()> {
        let stop = |problem: &mut Option<StreamProblem>, why: StreamProblem| {
            *problem = Some(why);
            io::Error::from(io::ErrorKind::InvalidInput)
        };
        if self.started {
            return Err(stop(&mut self.problem, StreamProblem::Consumed));
        }
        self.started = true;
        let size = self.stream.size();
        let mut written = 0_u64;
        let mut unsynced = 0_u64;
        while written < size {
            let Some(chunk) = self.stream.blocking_next() else {
                return Err(stop(&mut self.problem, StreamProblem::EndedEarly(written)));
            };
            if written + chunk.len() as u64 > size {
                return Err(stop(&mut self.problem, StreamProblem::Overran));
            }
            file.write_all(&chunk)?;
            written += chunk.len() as u64;
            unsynced += chunk.len() as u64;
            if unsynced >= SLICE as u64 {
                start_writeback(file, written - unsynced, unsynced);
                unsynced = 0;
            }
        }
        // The stream ends when its sender is gone; a byte more runs past.
        match self.stream.blocking_next() {
            Some(chunk) if !chunk.is_empty() => {
                Err(stop(&mut self.problem, StreamProblem::Overran))
            }
            _ => Ok(()),
        }
    }
}

/// Asks the kernel to start writing `len` bytes at `offset` of `file` to the
/// disk, without waiting (a hint: failures are ignored).
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: sync_file_range only reads its integer arguments; the fd is
    // open for the whole call (borrowed from `file`).
    let _ = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File, _: u64, _: u64) {}

#[cfg(test)]
#[path = "writeback_tests.rs"]
mod tests;
