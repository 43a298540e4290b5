//! [`WriteStream`]: the bytes of an atomic write that arrive while it is being
//! written (see [`FileSystem::write_atomic_streamed`](crate::FileSystem::write_atomic_streamed)).

use std::path::Path;

use tokio::sync::mpsc;

use crate::{FsError, FsErrorKind};

/// The bytes of a write, in chunks and in order, as they arrive from a
/// [`WriteStreamSender`]; `size` bytes in all. The stream ends when the
/// sender is dropped: dropped before `size` bytes were sent, the write is
/// abandoned (a lost connection, a cancelled call) and fails; more than
/// `size` bytes fail it too. Either way the file keeps its old bytes.
#[derive(Debug)]
pub struct WriteStream {
    size: u64,
    chunks: mpsc::Receiver<Vec<u8>>,
}

/// Where a [`WriteStream`]'s chunks are sent from.
pub type WriteStreamSender = mpsc::Sender<Vec<u8>>;

impl WriteStream {
    /// A stream of `size` bytes and its sender; at most `buffered` chunks
    /// wait at once (the sender waits for the writer beyond that).
    pub fn channel(size: u64, buffered: usize) -> (WriteStreamSender, WriteStream) {
        let (sender, chunks) = mpsc::channel(buffered.max(1));
        (sender, WriteStream { size, chunks })
    }

    /// How many bytes the write has in all.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The next chunk; `None` when the sender is gone.
    pub async fn next(&mut self) -> Option<Vec<u8>> {
        self.chunks.recv().await
    }

    /// The next chunk, waiting on this thread; `None` when the sender is
    /// gone. For the blocking pool: it must not run on a runtime's worker.
    pub fn blocking_next(&mut self) -> Option<Vec<u8>> {
        self.chunks.blocking_recv()
    }

    /// Gathers the whole content (what an adapter without a streaming
    /// write of its own does); an error when the sender stopped early or
    /// sent more than [`size`](WriteStream::size) bytes.
    pub async fn gather(mut self, path: &Path) -> Result<Vec<u8>, FsError> {
        let capacity = usize::try_from(self.size.min(1 << 30)).unwrap_or(0);
        let mut bytes = Vec::with_capacity(capacity);
        while let Some(chunk) = self.next().await {
            bytes.extend_from_slice(&chunk);
            if bytes.len() as u64 > self.size {
                return Err(overran(path, self.size));
            }
        }
        if (bytes.len() as u64) < self.size {
            return Err(ended_early(path, bytes.len() as u64, self.size));
        }
        Ok(bytes)
    }
}

/// A streamed write whose sender stopped after `got` of `size` bytes.
pub(crate) fn ended_early(path: &Path, got: u64, size: u64) -> FsError {
    FsError::new(FsErrorKind::Cancelled, path).with_detail(format!(
        "the write's data stopped after {got} of {size} bytes; the file was not changed"
    ))
}

/// A streamed write that received more than its `size` bytes.
pub(crate) fn overran(path: &Path, size: u64) -> FsError {
    FsError::new(FsErrorKind::InvalidInput, path).with_detail(format!(
        "the write's data ran past the {size} bytes announced; the file was not changed"
    ))
}
