//! Previous contents the tool did not read: a file `write` replaces whole is
//! journaled without loading it. Its SHA-256 was computed in a streaming pass
//! ([`crate::textfile::survey`]); the journal then hard-links the file into
//! `objects/` when it can (the same checks as for a read content: a regular
//! file with one link, the same size and time, the same first and last 64 KiB),
//! or copies it there in 1 MiB chunks, hashing as it copies. Memory stays at
//! one chunk whatever the file's size.

use std::fmt;
use std::path::Path;
use std::time::SystemTime;

use pith_env::{FileSystem, FsError};
use sha2::Digest;

use super::{Journal, JournalError, random_id};

/// A previous content left in its file (see the module docs).
#[derive(Clone, Copy)]
pub(crate) struct Unread<'a> {
    /// The tool's file system, where the file is.
    pub(crate) fs: &'a dyn FileSystem,
    pub(crate) path: &'a Path,
    /// Its size when it was hashed.
    pub(crate) len: u64,
    /// Its modification time when it was hashed, where known.
    pub(crate) modified: Option<SystemTime>,
    /// Its SHA-256 (lowercase hex), computed by streaming.
    pub(crate) hash: &'a str,
}

impl fmt::Debug for Unread<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unread")
            .field("path", &self.path)
            .field("len", &self.len)
            .field("hash", &self.hash)
            .finish()
    }
}

/// Bytes copied at a time.
const CHUNK: usize = 1 << 20;
/// Bytes compared at each end of a file before trusting a link.
pub(super) const SAMPLE: usize = 64 * 1024;

impl Journal {
    /// Stores `unread` as `object`: a hard link when possible, else a copy made
    /// in chunks. `Ok(false)` when the file no longer has the hashed content.
    pub(super) async fn store_unread(
        &self,
        unread: Unread<'_>,
        object: &Path,
    ) -> Result<bool, JournalError> {
        let Unread {
            fs,
            path,
            len,
            hash,
            ..
        } = unread;
        if self.hard_links
            && let Some(modified) = unread.modified
        {
            let head = fs.read_range(path, 0, SAMPLE).await?;
            let tail_at = len.saturating_sub(SAMPLE as u64);
            let tail = fs.read_range(path, tail_at, SAMPLE).await?;
            let samples = Samples {
                len,
                head: &head,
                tail: &tail,
            };
            if self.link_object(path, modified, object, samples) {
                return Ok(true);
            }
        }
        if self.hard_links {
            return self.copy_unread(unread, object).await;
        }
        // The journal's file system offers whole writes only: the content is
        // read whole (it is within the per-file cap).
        let bytes = fs.read(path).await?;
        if pith_env::remote::sha256_hex(&bytes) != hash {
            return Ok(false);
        }
        self.fs.write_atomic(object, &bytes).await?;
        Ok(true)
    }

    /// Copies `unread` into a temp file beside `object` in chunks, hashing as it
    /// goes; renames it to `object` (both fsynced) when the hash is the one
    /// recorded. The journal is on this machine (see
    /// [`Journal::with_hard_links`]), so the copy is written with the
    /// operating system's calls.
    async fn copy_unread(&self, unread: Unread<'_>, object: &Path) -> Result<bool, JournalError> {
        use std::io::Write;
        let objects = self.objects();
        let temp = objects.join(format!(".copy-{}", random_id()));
        let io = |error: std::io::Error| JournalError::Io(FsError::from_io(error, &temp));
        let mut reader = unread.fs.open(unread.path).await?;
        let mut file = std::fs::File::create(&temp).map_err(io)?;
        let copied = async {
            let mut buf = vec![0_u8; CHUNK];
            let mut sha = sha2::Sha256::new();
            loop {
                let read = reader.read_chunk(&mut buf).await?;
                if read == 0 {
                    break;
                }
                let chunk = &buf[..read];
                in_place(|| {
                    crate::beside::beside(|| sha.update(chunk), || file.write_all(chunk)).1
                })
                .map_err(io)?;
            }
            if crate::textfile::hex(&sha.finalize()) != unread.hash {
                return Ok(false);
            }
            in_place(|| -> std::io::Result<()> {
                file.sync_all()?;
                std::fs::rename(&temp, object)?;
                std::fs::File::open(&objects)?.sync_all()
            })
            .map_err(io)?;
            Ok(true)
        }
        .await;
        if !matches!(copied, Ok(true)) {
            let _ = std::fs::remove_file(&temp);
        }
        copied
    }
}

/// The first and last bytes (up to 64 KiB each) of a content of `len` bytes,
/// to compare with a file before linking it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Samples<'a> {
    pub(super) len: u64,
    pub(super) head: &'a [u8],
    pub(super) tail: &'a [u8],
}

impl Samples<'_> {
    pub(super) fn of(bytes: &[u8]) -> Samples<'_> {
        let sample = SAMPLE.min(bytes.len());
        Samples {
            len: bytes.len() as u64,
            head: &bytes[..sample],
            tail: &bytes[bytes.len() - sample..],
        }
    }
}

/// Whether the file at `path` starts and ends with the sampled bytes (the size
/// and time were compared already). A full comparison would read the file
/// again; the journal checks every object's SHA-256 before an undo uses it, so
/// a file that differs in between is never restored, only reported damaged.
#[cfg(unix)]
pub(super) fn same_bytes(path: &Path, samples: Samples<'_>) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path)?;
    let tail_at = samples.len.saturating_sub(samples.tail.len() as u64);
    for (at, expected) in [(0, samples.head), (tail_at, samples.tail)] {
        let mut buffer = vec![0; expected.len()];
        file.read_exact_at(&mut buffer, at)?;
        if buffer != expected {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Runs blocking file-system calls from async code: in place on a
/// multi-threaded runtime (the worker hands its other tasks on), directly
/// otherwise (a current-thread runtime has nothing else to run meanwhile).
pub(super) fn in_place<T>(work: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == RuntimeFlavor::MultiThread)
    {
        tokio::task::block_in_place(work)
    } else {
        work()
    }
}
