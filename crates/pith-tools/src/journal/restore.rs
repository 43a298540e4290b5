//! Undo of large files in bounded memory: a content above
//! [`DIFF_MAX_BYTES`] is never held whole. The current file's SHA-256 is
//! computed by reading it in [`CHUNK`]s; the stored object is checked the same
//! way when the undo is planned, and restored by streaming it chunk by chunk
//! into the atomic write's temp file
//! ([`FileSystem::write_atomic_streamed`]), hashing again as it goes: the last
//! chunk is held back until the hash matches, so a copy that changed in
//! between is never published (the write fails and the file keeps its bytes).
//! Such a file gets a summary (sizes and hashes) instead of a diff. Memory
//! stays at a few chunks whatever the file's size: the reader's buffer, the
//! [`BUFFERED`] chunks waiting, the one being written and the one held back,
//! 5 MiB; docs/bounds.md asserts 8 MiB.

use std::path::Path;

use pith_env::{FileSystem, FsError, FsErrorKind, Metadata, WriteStream};
use sha2::Digest;

use super::{Journal, JournalError};
use crate::session::{ContentHasher, Fingerprint};

/// The largest content an undo reads whole, to show a diff (4 MiB): above
/// it, on either side, the file is streamed and summarised.
pub(crate) const DIFF_MAX_BYTES: u64 = 4 << 20;
/// Bytes read and written at a time.
const CHUNK: usize = 1 << 20;
/// Chunks waiting for the writer at once.
const BUFFERED: usize = 2;

/// A content an undo works with: its hash and length, and its bytes when it
/// is small enough to diff (`None`: it is only in its file or the journal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Content {
    pub(super) hash: String,
    pub(super) len: u64,
    pub(super) bytes: Option<Vec<u8>>,
}

impl Content {
    pub(super) fn read(bytes: Vec<u8>) -> Content {
        Content {
            hash: pith_env::remote::sha256_hex(&bytes),
            len: bytes.len() as u64,
            bytes: Some(bytes),
        }
    }
}

/// The SHA-256 and length of the file at `path`, read in chunks.
pub(super) async fn hash_file(fs: &dyn FileSystem, path: &Path) -> Result<(String, u64), FsError> {
    let mut reader = fs.open(path).await?;
    let mut buf = vec![0_u8; CHUNK];
    let mut sha = sha2::Sha256::new();
    let mut len = 0_u64;
    loop {
        let read = reader.read_chunk(&mut buf).await?;
        if read == 0 {
            break;
        }
        sha.update(&buf[..read]);
        len += read as u64;
    }
    Ok((crate::textfile::hex(&sha.finalize()), len))
}

/// The file at `path` as an undo sees it now: read whole up to
/// [`DIFF_MAX_BYTES`], else hashed by streaming; `None` when it does not exist.
pub(super) async fn current(
    fs: &dyn FileSystem,
    path: &Path,
) -> Result<Option<(Content, Option<Metadata>)>, FsError> {
    let metadata = match fs.metadata(path).await {
        Ok(metadata) => metadata,
        Err(error) if error.kind == FsErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    if metadata.len <= DIFF_MAX_BYTES {
        return match fs.read(path).await {
            Ok(bytes) => Ok(Some((Content::read(bytes), Some(metadata)))),
            Err(error) if error.kind == FsErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        };
    }
    let (hash, len) = hash_file(fs, path).await?;
    Ok(Some((
        Content {
            hash,
            len,
            bytes: None,
        },
        Some(metadata).filter(|metadata| metadata.len == len),
    )))
}

/// Why a streamed restore failed.
#[derive(Debug)]
pub(super) enum RestoreError {
    /// The stored copy could not be read, or changed.
    Journal(JournalError),
    /// The file could not be written.
    Write(FsError),
}

impl Journal {
    /// The stored previous content `hash` of `len` bytes: read whole (and
    /// checked) up to [`DIFF_MAX_BYTES`], else checked by streaming it.
    pub(super) async fn stored(&self, hash: &str, len: u64) -> Result<Content, JournalError> {
        if len <= DIFF_MAX_BYTES {
            return Ok(Content::read(self.content(hash).await?));
        }
        let path = self.object(hash);
        let (actual, actual_len) = hash_file(&*self.fs, &path).await?;
        if actual != hash || actual_len != len {
            return Err(JournalError::Damaged(path));
        }
        Ok(Content {
            hash: hash.to_owned(),
            len,
            bytes: None,
        })
    }

    /// Writes the stored content `hash` of `len` bytes to `path` through
    /// `fs`'s streamed atomic write; the fingerprint of what it wrote, for the
    /// session. The object is hashed again on the way: a changed one fails the
    /// write (the last chunk is sent only once the hash matches).
    pub(super) async fn restore_streamed(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        hash: &str,
        len: u64,
    ) -> Result<Fingerprint, RestoreError> {
        let object = self.object(hash);
        let (sender, stream) = WriteStream::channel(len, BUFFERED);
        let produce = async {
            let sender = sender;
            let mut reader = self.fs.open(&object).await?;
            let mut sha = sha2::Sha256::new();
            let mut fingerprint = ContentHasher::new();
            let mut held: Option<Vec<u8>> = None;
            loop {
                let mut buf = vec![0_u8; CHUNK];
                let read = reader.read_chunk(&mut buf).await?;
                if read == 0 {
                    break;
                }
                buf.truncate(read);
                sha.update(&buf);
                fingerprint.update(&buf);
                if let Some(chunk) = held.replace(buf)
                    && sender.send(chunk).await.is_err()
                {
                    // The writer stopped: its error says why.
                    return Ok(fingerprint.finish());
                }
            }
            if crate::textfile::hex(&sha.finalize()) != hash {
                return Err(JournalError::Damaged(object.clone()));
            }
            if let Some(chunk) = held {
                let _ = sender.send(chunk).await;
            }
            Ok(fingerprint.finish())
        };
        let (produced, written) = tokio::join!(produce, fs.write_atomic_streamed(path, stream));
        // The write's own failure first: a short stream is only its echo.
        written.map_err(RestoreError::Write)?;
        let fingerprint = produced.map_err(RestoreError::Journal)?;
        if len > crate::session::HASHED_MAX_BYTES
            && let Ok(metadata) = fs.metadata(path).await
            && let Some(stamp) = Fingerprint::stamp(&metadata)
        {
            return Ok(stamp);
        }
        Ok(fingerprint)
    }
}
