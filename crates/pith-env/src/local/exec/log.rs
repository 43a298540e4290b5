//! The local full-output file: private, capped, pruned.
//!
//! Files live in a per-user directory (`$TMPDIR/pith-<uid>/`, mode 0700, see
//! [`output_dir`]) and are created mode 0600. A file keeps at most
//! [`OUTPUT_CAP`] bytes on disk: past that, the first half stays and the rest
//! of the cap is a ring holding the latest bytes; when the log is dropped the
//! file is rewritten as first part, a line saying how much was dropped, last part.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use crate::{ExecError, OutputLog};

/// The most a full-output file keeps on disk (1 GiB).
pub const OUTPUT_CAP: u64 = 1 << 30;
/// Files older than this are removed by [`prune_output_dir`] (24 hours).
const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);
/// Beyond this total, [`prune_output_dir`] removes the oldest files (2 GiB).
const MAX_TOTAL: u64 = 2 << 30;

/// The per-user directory for bash full-output files: `$TMPDIR/pith-<uid>`.
pub fn output_dir() -> PathBuf {
    let uid = nix::unistd::geteuid();
    std::env::temp_dir().join(format!("pith-{uid}"))
}

/// Removes pith's files in `dir` older than 24 hours, then the oldest until
/// the rest total at most 2 GiB. Errors are ignored: pruning is best effort.
pub fn prune_output_dir(dir: &Path) {
    prune(dir, MAX_AGE, MAX_TOTAL);
}

fn prune(dir: &Path, max_age: Duration, max_total: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let mut kept: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let name = entry.file_name();
        if !meta.is_file() || !name.to_string_lossy().starts_with("pith-") {
            continue;
        }
        let modified = meta.modified().unwrap_or(now);
        if now.duration_since(modified).unwrap_or_default() > max_age {
            let _ = std::fs::remove_file(entry.path());
        } else {
            kept.push((modified, meta.len(), entry.path()));
        }
    }
    kept.sort();
    let mut total: u64 = kept.iter().map(|(_, len, _)| len).sum();
    for (_, len, path) in kept {
        if total <= max_total {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
        }
    }
}

/// A directory named `pith-*` (the private one, see [`output_dir`]) is
/// created if missing, made private (0700) and must belong to this user; any
/// other directory must exist and is left as it is.
fn ensure_dir(dir: &Path) -> io::Result<()> {
    let private = dir
        .file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with("pith-"));
    match std::fs::symlink_metadata(dir) {
        Err(error) if error.kind() == io::ErrorKind::NotFound && private => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
            Ok(())
        }
        Err(error) => Err(error),
        Ok(meta) => {
            if !private {
                return Ok(());
            }
            let uid = nix::unistd::geteuid().as_raw();
            if !meta.is_dir() || meta.uid() != uid {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "not a directory of this user",
                ));
            }
            if meta.mode() & 0o777 != 0o700 {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            }
            Ok(())
        }
    }
}

/// A log hands its writes to a thread of its own once it holds this much:
/// reading the command's output and writing the log then overlap (the page
/// cache copy of a write is as dear as everything else a chunk costs), while a
/// small log, and every job that prints little, costs no thread.
const THREAD_AFTER: u64 = 4 << 20;
/// Chunks queued for the writer thread before `write_all` waits (backpressure).
const QUEUE_DEPTH: usize = 8;

/// A new file in a directory, written in order, capped on disk.
pub(super) struct LocalOutputLog {
    path: PathBuf,
    writer: Writer,
    /// Bytes written in the caller before a writer thread takes over.
    thread_after: u64,
}

/// Who writes the file.
enum Writer {
    /// The caller, in `write_all`.
    Inline(Ring),
    /// A thread fed through a bounded queue; buffers come back for reuse.
    Thread(Worker),
    /// The writer thread failed; the error was reported and later writes are dropped.
    Failed,
}

/// The writer thread and its queues.
struct Worker {
    queue: Option<mpsc::SyncSender<Vec<u8>>>,
    recycled: mpsc::Receiver<Vec<u8>>,
    /// The thread; it gives the ring back, or the first write error.
    thread: Option<std::thread::JoinHandle<Result<Ring, ExecError>>>,
}

impl Worker {
    /// Starts the thread with `ring`; gives the ring back when no thread can start.
    fn start(ring: Ring) -> Result<Worker, Ring> {
        let (queue, chunks) = mpsc::sync_channel::<Vec<u8>>(QUEUE_DEPTH);
        let (give_back, recycled) = mpsc::channel::<Vec<u8>>();
        // The ring is handed over only once the thread exists.
        let (ring_in, ring_out) = mpsc::sync_channel::<Ring>(1);
        let spawned = std::thread::Builder::new()
            .name("pith-output-log".to_owned())
            .spawn(move || {
                let mut ring = ring_out
                    .recv()
                    .map_err(|_| ExecError::Io("the output log's writer got no file".to_owned()))?;
                for chunk in chunks {
                    // On an error the queue's receiver goes: the next send fails.
                    ring.write(&chunk)?;
                    let _ = give_back.send(chunk);
                }
                Ok(ring)
            });
        match spawned {
            Ok(thread) => match ring_in.send(ring) {
                Ok(()) => Ok(Worker {
                    queue: Some(queue),
                    recycled,
                    thread: Some(thread),
                }),
                Err(mpsc::SendError(ring)) => Err(ring),
            },
            Err(_) => Err(ring),
        }
    }

    /// Queues a copy of `bytes`; the error of an earlier write if the thread
    /// stopped (then the thread is gone and its ring with it).
    fn write(&mut self, bytes: &[u8]) -> Result<(), ExecError> {
        let mut chunk = self
            .recycled
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(bytes.len()));
        chunk.clear();
        chunk.extend_from_slice(bytes);
        let sent = match &self.queue {
            Some(queue) => queue.send(chunk).is_ok(),
            None => false,
        };
        if sent {
            return Ok(());
        }
        match self.finish() {
            Ok(_) => Err(ExecError::Io("the output log's writer stopped".to_owned())),
            Err(error) => Err(error),
        }
    }

    /// Waits until everything queued is written; the ring back, or the first
    /// write error.
    fn finish(&mut self) -> Result<Ring, ExecError> {
        self.queue = None;
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) | None => Err(ExecError::Io("the output log's writer failed".to_owned())),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // The ring comes back and is dropped here: a wrapped file is put in order.
        if self.thread.is_some()
            && let Err(error) = self.finish()
        {
            tracing::warn!("output log: {error}");
        }
    }
}

/// The file and where the next byte goes: the first half of the cap, then a
/// ring holding the latest bytes.
struct Ring {
    path: PathBuf,
    file: File,
    cap: u64,
    /// Bytes received so far (may exceed `cap`).
    written: u64,
}

impl LocalOutputLog {
    /// Creates `<dir>/<prefix><16 hex>.log` (mode 0600); never replaces an existing file.
    pub(super) fn create(dir: &Path, prefix: &str) -> Result<LocalOutputLog, ExecError> {
        LocalOutputLog::with_cap(dir, prefix, OUTPUT_CAP)
    }

    fn with_cap(dir: &Path, prefix: &str, cap: u64) -> Result<LocalOutputLog, ExecError> {
        ensure_dir(dir).map_err(|error| log_error(dir, &error))?;
        let mut attempts = 0;
        loop {
            let path = dir.join(format!("{prefix}{:016x}.log", rand::random::<u64>()));
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => return Ok(LocalOutputLog::new(path, file, cap)),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempts < 8 => {
                    attempts += 1;
                }
                Err(error) => return Err(log_error(&path, &error)),
            }
        }
    }

    /// Creates the new file `path` (mode 0600; its `pith-*` directory made
    /// private as for [`LocalOutputLog::create`]), capped as usual: the far
    /// side of a remote environment, whose near side picked the name.
    pub(super) fn create_named(path: &Path) -> Result<LocalOutputLog, ExecError> {
        if let Some(dir) = path.parent() {
            ensure_dir(dir).map_err(|error| log_error(dir, &error))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(|error| log_error(path, &error))?;
        Ok(LocalOutputLog::new(path.to_path_buf(), file, OUTPUT_CAP))
    }

    fn new(path: PathBuf, file: File, cap: u64) -> LocalOutputLog {
        LocalOutputLog {
            writer: Writer::Inline(Ring {
                path: path.clone(),
                file,
                cap: cap.max(2),
                written: 0,
            }),
            path,
            thread_after: THREAD_AFTER,
        }
    }
}

impl Ring {
    fn head(&self) -> u64 {
        self.cap / 2
    }

    /// Where stream offset `at` lands in the file, and how many bytes fit there
    /// before the ring wraps.
    fn place(&self, at: u64) -> (u64, u64) {
        let head = self.head();
        if at < head {
            return (at, head - at);
        }
        let ring = self.cap - head;
        let offset = head + (at - head) % ring;
        (offset, self.cap - offset)
    }

    fn write(&mut self, mut bytes: &[u8]) -> Result<(), ExecError> {
        while !bytes.is_empty() {
            let (offset, room) = self.place(self.written);
            let n = bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            let (now, rest) = bytes.split_at(n);
            self.file
                .write_all_at(now, offset)
                .map_err(|error| log_error(&self.path, &error))?;
            self.written += n as u64;
            bytes = rest;
        }
        Ok(())
    }

    /// Rewrites a wrapped file as first part, notice, last part.
    fn unwrap_ring(&mut self) -> io::Result<()> {
        let head = self.head();
        let ring = self.cap - head;
        let oldest = self.place(self.written - ring).0;
        let dropped = self.written - self.cap;
        let tmp = self.path.with_extension("log.tmp");
        let mut out = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        let mut copy = |from: u64, len: u64, out: &mut File| -> io::Result<()> {
            self.file.seek(SeekFrom::Start(from))?;
            io::copy(&mut (&self.file).take(len), out).map(|_| ())
        };
        copy(0, head, &mut out)?;
        write!(
            out,
            "\n\n[pith: this file keeps the first {head} and the last {ring} bytes of {} bytes of output; {dropped} bytes in between were dropped]\n\n",
            self.written
        )?;
        copy(oldest, self.cap - oldest, &mut out)?;
        copy(head, oldest - head, &mut out)?;
        std::fs::rename(&tmp, &self.path)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        if self.written > self.cap
            && let Err(error) = self.unwrap_ring()
        {
            tracing::warn!("cannot finish {}: {error}", self.path.display());
        }
    }
}

impl OutputLog for LocalOutputLog {
    fn path(&self) -> &Path {
        &self.path
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), ExecError> {
        if let Writer::Inline(ring) = &self.writer
            && ring.written >= self.thread_after
            && let Writer::Inline(ring) = std::mem::replace(&mut self.writer, Writer::Failed)
        {
            // Past the threshold: the rest goes through a writer thread.
            self.writer = match Worker::start(ring) {
                Ok(worker) => Writer::Thread(worker),
                Err(ring) => Writer::Inline(ring),
            };
        }
        let written = match &mut self.writer {
            Writer::Inline(ring) => return ring.write(bytes),
            Writer::Thread(worker) => worker.write(bytes),
            Writer::Failed => return Ok(()),
        };
        if written.is_err() {
            self.writer = Writer::Failed;
        }
        written
    }

    fn flush(&mut self) -> Result<(), ExecError> {
        let Writer::Thread(worker) = &mut self.writer else {
            return Ok(());
        };
        match worker.finish() {
            Ok(ring) => {
                self.writer = Writer::Inline(ring);
                Ok(())
            }
            Err(error) => {
                self.writer = Writer::Failed;
                Err(error)
            }
        }
    }
}

fn log_error(path: &Path, error: &io::Error) -> ExecError {
    let kind = crate::FsErrorKind::from_io(error);
    ExecError::Io(format!(
        "{}: {}",
        path.display(),
        kind.code().replace('_', " ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_private_in_a_private_directory() {
        let base = tempfile::TempDir::new().unwrap();
        let dir = base.path().join("pith-test");
        let log = LocalOutputLog::create(&dir, "pith-bash-").unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(log.path()), 0o600);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let _again = LocalOutputLog::create(&dir, "pith-bash-").unwrap();
        assert_eq!(mode(&dir), 0o700);
    }

    #[test]
    fn a_capped_file_keeps_the_first_and_last_part_and_says_so() {
        let dir = tempfile::TempDir::new().unwrap();
        let mut log = LocalOutputLog::with_cap(dir.path(), "pith-bash-", 10).unwrap();
        let path = log.path().to_path_buf();
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"qrstuvwxyz"] {
            log.write_all(chunk).unwrap();
        }
        assert!(std::fs::metadata(&path).unwrap().len() <= 10);
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("abcde\n\n[pith: "), "{text}");
        assert!(
            text.contains("of 26 bytes of output; 16 bytes in between were dropped"),
            "{text}"
        );
        assert!(text.ends_with("]\n\nvwxyz"), "{text}");
    }

    #[test]
    fn an_uncapped_file_is_left_as_written() {
        let dir = tempfile::TempDir::new().unwrap();
        let mut log = LocalOutputLog::with_cap(dir.path(), "pith-bash-", 100).unwrap();
        let path = log.path().to_path_buf();
        log.write_all(b"hello ").unwrap();
        log.write_all(b"world").unwrap();
        drop(log);
        assert_eq!(std::fs::read_to_string(path).unwrap(), "hello world");
    }

    /// A log whose writes go through the writer thread after `thread_after` bytes.
    fn threaded(dir: &Path, cap: u64, thread_after: u64) -> LocalOutputLog {
        let mut log = LocalOutputLog::with_cap(dir, "pith-bash-", cap).unwrap();
        log.thread_after = thread_after;
        log
    }

    #[test]
    fn a_log_written_through_its_thread_is_byte_identical() {
        let dir = tempfile::TempDir::new().unwrap();
        let mut log = threaded(dir.path(), 1 << 30, 100);
        let path = log.path().to_path_buf();
        let mut expected = Vec::new();
        for index in 0..2000u32 {
            let chunk: Vec<u8> = (0..(index * 37 % 5000))
                .map(|at| (at ^ index) as u8)
                .collect();
            log.write_all(&chunk).unwrap();
            expected.extend_from_slice(&chunk);
        }
        assert!(matches!(log.writer, Writer::Thread(_)));
        log.flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), expected);
        // Writing goes on after a flush, through a new thread.
        log.write_all(b"more").unwrap();
        expected.extend_from_slice(b"more");
        drop(log);
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }

    #[test]
    fn a_capped_log_written_through_its_thread_keeps_the_first_and_last_part() {
        let dir = tempfile::TempDir::new().unwrap();
        let mut log = threaded(dir.path(), 10, 4);
        let path = log.path().to_path_buf();
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"qrstuvwxyz"] {
            log.write_all(chunk).unwrap();
        }
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("abcde\n\n[pith: "), "{text}");
        assert!(text.ends_with("]\n\nvwxyz"), "{text}");
    }

    #[test]
    fn a_write_failure_in_the_thread_is_reported_by_flush() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("pith-bash-readonly.log");
        std::fs::write(&path, "").unwrap();
        let file = File::open(&path).unwrap();
        let mut log = LocalOutputLog::new(path.clone(), file, 1 << 20);
        log.thread_after = 0;
        log.write_all(b"lost").unwrap();
        let error = log.flush().unwrap_err().to_string();
        assert!(error.contains("pith-bash-readonly.log"), "{error}");
        // Later writes are dropped, not reported again.
        log.write_all(b"more").unwrap();
        log.flush().unwrap();
    }

    #[test]
    fn pruning_removes_old_files_then_the_oldest_beyond_the_total() {
        let dir = tempfile::TempDir::new().unwrap();
        let old = dir.path().join("pith-bash-old.log");
        std::fs::write(&old, "x").unwrap();
        let file = File::options().write(true).open(&old).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(25 * 3600))
            .unwrap();
        let older = dir.path().join("pith-bash-a.log");
        std::fs::write(&older, vec![b'a'; 60]).unwrap();
        let a = File::options().write(true).open(&older).unwrap();
        a.set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        let newer = dir.path().join("pith-bash-b.log");
        std::fs::write(&newer, vec![b'b'; 60]).unwrap();
        let other = dir.path().join("unrelated.txt");
        std::fs::write(&other, "keep").unwrap();
        prune(dir.path(), MAX_AGE, 100);
        assert!(!old.exists());
        assert!(!older.exists());
        assert!(newer.exists());
        assert!(other.exists());
    }
}
