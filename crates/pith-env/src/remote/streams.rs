//! The near side's streams: a far file read in chunks ([`RemoteReader`]) and
//! a far output log written without waiting ([`RemoteLog`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};

use async_trait::async_trait;

use super::conn::{Conn, Event, Ticket};
use super::wire::{self, Reply, ToServer};
use crate::{ExecError, FileReader, FsError, FsErrorKind, LineCount, OutputLog};

/// A far file streamed in chunks, as fast as it is read: the far side sends
/// what this side wants ([`ToServer::Want`]), starting with
/// [`FIRST_WANT`](wire::FIRST_WANT) bytes with the open; the window doubles
/// each time it is topped up, up to [`MAX_WANT`](wire::MAX_WANT). Lines are
/// counted where the file is ([`FileReader::count_lines`]).
pub(super) struct RemoteReader {
    /// `None` once the stream ended.
    ticket: Option<Ticket>,
    path: PathBuf,
    chunk: Vec<u8>,
    pos: usize,
    /// Bytes asked for so far (the open's first want included) and bytes
    /// that arrived (or were counted on the far side).
    wanted: u64,
    received: u64,
    window: u64,
}

impl RemoteReader {
    /// A reader for the stream of `ticket`, whose first chunk was `first`.
    pub(super) fn new(ticket: Ticket, path: &Path, first: Vec<u8>) -> RemoteReader {
        RemoteReader {
            ticket: Some(ticket),
            path: path.to_path_buf(),
            received: first.len() as u64,
            chunk: first,
            pos: 0,
            wanted: wire::FIRST_WANT,
            window: wire::FIRST_WANT,
        }
    }

    /// A reader of an empty file (the far side ended the stream at once).
    pub(super) fn ended(path: &Path) -> RemoteReader {
        RemoteReader {
            ticket: None,
            path: path.to_path_buf(),
            chunk: Vec::new(),
            pos: 0,
            wanted: 0,
            received: 0,
            window: 0,
        }
    }

    fn lost(&self, message: String) -> FsError {
        FsError::new(FsErrorKind::Other, &self.path).with_detail(message)
    }

    /// Asks for more once at most half the window is on its way.
    fn top_up(&mut self) {
        let Some(ticket) = &self.ticket else { return };
        let outstanding = self.wanted - self.received;
        if outstanding > self.window / 2 {
            return;
        }
        self.window = (self.window * 2).min(wire::MAX_WANT);
        let more = self.window - outstanding;
        self.wanted += more;
        ticket.control(ToServer::Want {
            id: ticket.id,
            bytes: more,
        });
    }

    /// The next chunk of the stream; `None` at its end.
    async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, FsError> {
        let Some(ticket) = self.ticket.as_mut() else {
            return Ok(None);
        };
        match ticket.next().await {
            Ok(Event::Chunk(bytes)) => {
                self.received += bytes.len() as u64;
                Ok(Some(bytes))
            }
            Ok(Event::Reply(Reply::FsError(error))) => {
                self.ticket = None;
                Err(error.into())
            }
            Ok(Event::Reply(_)) => {
                self.ticket = None;
                Ok(None)
            }
            Ok(_) => {
                self.ticket = None;
                Err(self.lost("unexpected message from the remote pith".to_owned()))
            }
            Err(message) => {
                self.ticket = None;
                Err(self.lost(message))
            }
        }
    }
}

#[async_trait]
impl FileReader for RemoteReader {
    async fn read_chunk(&mut self, buf: &mut [u8]) -> Result<usize, FsError> {
        while self.pos >= self.chunk.len() {
            self.top_up();
            match self.next_chunk().await? {
                Some(bytes) => {
                    self.chunk = bytes;
                    self.pos = 0;
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }

    /// Counts what already arrived here, then asks the far side to count the
    /// rest: one round trip, and the bytes stay there.
    async fn count_lines(&mut self, max: u64) -> Result<LineCount, FsError> {
        let mut count = LineCount::default();
        let take = |count: &LineCount, available: usize| {
            usize::try_from(max - count.bytes).map_or(available, |left| left.min(available))
        };
        let n = take(&count, self.chunk.len() - self.pos);
        count.add(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        // What was asked for is on its way: count it as it arrives.
        while count.bytes < max && self.received < self.wanted {
            let Some(bytes) = self.next_chunk().await? else {
                return Ok(count);
            };
            let n = take(&count, bytes.len());
            count.add(&bytes[..n]);
            if n < bytes.len() {
                self.chunk = bytes;
                self.pos = n;
                return Ok(count);
            }
        }
        if count.bytes == max {
            return Ok(count);
        }
        let Some(ticket) = self.ticket.as_mut() else {
            return Ok(count);
        };
        ticket.control(ToServer::Count {
            id: ticket.id,
            max: max - count.bytes,
        });
        loop {
            let Some(ticket) = self.ticket.as_mut() else {
                return Ok(count);
            };
            match ticket.next().await {
                Ok(Event::Counted(far)) => {
                    self.wanted += far.bytes;
                    self.received += far.bytes;
                    count.extend(&far);
                    return Ok(count);
                }
                Ok(Event::Reply(Reply::FsError(error))) => {
                    self.ticket = None;
                    return Err(error.into());
                }
                Ok(Event::Reply(_)) => {
                    self.ticket = None;
                    return Ok(count);
                }
                Ok(_) => {}
                Err(message) => {
                    self.ticket = None;
                    return Err(self.lost(message));
                }
            }
        }
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
