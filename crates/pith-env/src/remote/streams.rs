//! The near side's streams: a far file read in chunks ([`RemoteReader`]) and
//! a far output log written without waiting ([`RemoteLog`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};

use async_trait::async_trait;

use super::conn::{Conn, Event, Ticket};
use super::wire::{Reply, ToServer};
use crate::{ExecError, FileReader, FsError, FsErrorKind, OutputLog};

/// A far file streamed in chunks, at most a window ahead.
pub(super) struct RemoteReader {
    /// `None` once the stream ended.
    pub(super) ticket: Option<Ticket>,
    pub(super) path: PathBuf,
    pub(super) chunk: Vec<u8>,
    pub(super) pos: usize,
}

#[async_trait]
impl FileReader for RemoteReader {
    async fn read_chunk(&mut self, buf: &mut [u8]) -> Result<usize, FsError> {
        while self.pos >= self.chunk.len() {
            let Some(ticket) = self.ticket.as_mut() else {
                return Ok(0);
            };
            match ticket.next().await {
                Ok(Event::Chunk(bytes)) => {
                    ticket.credit();
                    self.chunk = bytes;
                    self.pos = 0;
                }
                Ok(Event::Reply(Reply::FsError(error))) => {
                    self.ticket = None;
                    return Err(error.into());
                }
                Ok(_) => {
                    self.ticket = None;
                    return Ok(0);
                }
                Err(message) => {
                    self.ticket = None;
                    return Err(FsError::new(FsErrorKind::Other, &self.path).with_detail(message));
                }
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// An output log on the far side; writes are sent without waiting, a far
/// failure is reported by the next write.
pub(super) struct RemoteLog {
    pub(super) conn: Arc<Conn>,
    pub(super) log: u64,
    pub(super) path: PathBuf,
}

impl OutputLog for RemoteLog {
    fn path(&self) -> &Path {
        &self.path
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), ExecError> {
        let failed = self
            .conn
            .log_errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.log);
        if let Some(message) = failed {
            return Err(ExecError::Io(format!("{}: {message}", self.path.display())));
        }
        if self.conn.lost().is_some() {
            return Err(ExecError::Io(self.conn.lost_message()));
        }
        self.conn.control(ToServer::LogAppend {
            log: self.log,
            bytes: bytes.to_vec(),
        });
        Ok(())
    }
}

impl Drop for RemoteLog {
    fn drop(&mut self) {
        self.conn.control(ToServer::LogClose { log: self.log });
    }
}
