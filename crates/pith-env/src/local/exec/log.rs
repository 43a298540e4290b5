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

/// A new file in a directory, written in order, capped on disk.
pub(super) struct LocalOutputLog {
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
                Ok(file) => {
                    return Ok(LocalOutputLog {
                        path,
                        file,
                        cap: cap.max(2),
                        written: 0,
                    });
                }
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
        Ok(LocalOutputLog {
            path: path.to_path_buf(),
            file,
            cap: OUTPUT_CAP,
            written: 0,
        })
    }

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

impl OutputLog for LocalOutputLog {
    fn path(&self) -> &Path {
        &self.path
    }

    fn write_all(&mut self, mut bytes: &[u8]) -> Result<(), ExecError> {
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
}

impl Drop for LocalOutputLog {
    fn drop(&mut self) {
        if self.written > self.cap
            && let Err(error) = self.unwrap_ring()
        {
            tracing::warn!("cannot finish {}: {error}", self.path.display());
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
