//! What the far side reads: frames, with a write's `Data` read straight into
//! that write's buffer; and stdin/stdout as non-blocking pipes.

use std::collections::HashMap;
use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::{PendingWrite, STREAM_PIECE};
use crate::remote::wire::{self, ToServer};

/// One frame read by [`read_incoming`].
pub(super) enum Incoming {
    /// Any message but the `Data` of a write still receiving its bytes.
    Message(Box<ToServer>),
    /// `Data` of write `id`, passed on to its task already.
    Data(u64),
}

/// Reads the next frame; `Ok(None)` at a clean end of stream (between
/// frames). The body of a `Data` frame for a write in `writes` is read in
/// pieces of [`STREAM_PIECE`] bytes, each passed on to the write's task as
/// soon as it is in (the task writes it to the temp file meanwhile), without
/// a frame buffer or a decoded message between.
pub(super) async fn read_incoming<R: AsyncRead + Unpin>(
    reader: &mut R,
    writes: &mut HashMap<u64, PendingWrite>,
) -> io::Result<Option<Incoming>> {
    let mut len = [0_u8; 4];
    match reader.read_exact(&mut len).await {
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > wire::MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "frame of {len} bytes exceeds the limit of {}",
                wire::MAX_FRAME
            ),
        ));
    }
    let mut head = [0_u8; wire::DATA_HEAD_MAX];
    let taken = len.min(head.len());
    reader.read_exact(&mut head[..taken]).await?;
    let rest = (len - taken) as u64;
    if let Some((id, bytes, used)) = wire::parse_data_head(&head[..taken])
        && used as u64 + bytes == len as u64
        && let Some(write) = writes.get_mut(&id)
    {
        let mut piece = head[used..taken].to_vec();
        let mut left = rest;
        loop {
            let more = (STREAM_PIECE - piece.len().min(STREAM_PIECE)) as u64;
            let take = more.min(left);
            read_rest(reader, take, &mut piece).await?;
            left -= take;
            if left == 0 || piece.len() >= STREAM_PIECE {
                let full = std::mem::take(&mut piece);
                if !full.is_empty() {
                    write.feed(full).await;
                }
            }
            if left == 0 {
                return Ok(Some(Incoming::Data(id)));
            }
            piece.reserve_exact(STREAM_PIECE);
        }
    }
    let mut body = Vec::with_capacity(len);
    body.extend_from_slice(&head[..taken]);
    read_rest(reader, rest, &mut body).await?;
    postcard::from_bytes(&body)
        .map(|message| Some(Incoming::Message(Box::new(message))))
        .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))
}

/// Appends exactly `count` more bytes from `reader` to `into` (into its
/// spare capacity first: no zeroing, no growth when it has room).
async fn read_rest<R: AsyncRead + Unpin>(
    reader: &mut R,
    count: u64,
    into: &mut Vec<u8>,
) -> io::Result<()> {
    let target = into.len() as u64 + count;
    into.reserve(usize::try_from(count).unwrap_or(usize::MAX));
    while (into.len() as u64) < target {
        let left = target - into.len() as u64;
        if (&mut *reader).take(left).read_buf(into).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok(())
}

/// Serves the connection on this process's stdin and stdout (what `pith
/// serve --stdio` runs). When they are pipes or sockets they are read and
/// written without blocking, on the runtime's own threads (and a pipe's
/// buffer is raised to 1 MiB where the system allows): tokio's `stdin()` and
/// `stdout()` hand every read and write to a blocking thread and copy
/// through its buffer, a thread wake-up per message each way.
pub async fn serve_stdio(env: std::sync::Arc<crate::LocalEnv>) -> io::Result<()> {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;

    let reader = nonblocking(std::io::stdin().as_fd()).and_then(|fd| {
        if is_fifo(&fd) {
            pipe::Receiver::from_owned_fd(fd).ok()
        } else {
            pipe::Receiver::from_owned_fd_unchecked(fd).ok()
        }
    });
    let writer = nonblocking(std::io::stdout().as_fd()).and_then(|fd| {
        if is_fifo(&fd) {
            pipe::Sender::from_owned_fd(fd).ok()
        } else {
            pipe::Sender::from_owned_fd_unchecked(fd).ok()
        }
    });
    match (reader, writer) {
        (Some(reader), Some(writer)) => super::serve(reader, writer, env).await,
        _ => super::serve(tokio::io::stdin(), tokio::io::stdout(), env).await,
    }
}

/// The size pith asks for the buffer of a pipe it is served on.
const PIPE_BUFFER: i32 = 1 << 20;

/// A duplicate of `fd` in non-blocking mode, when it is a pipe (its buffer
/// raised to [`PIPE_BUFFER`], best effort) or a socket; `None` for anything
/// else (a file, a terminal), which the blocking stdio handles serve.
fn nonblocking(fd: std::os::fd::BorrowedFd<'_>) -> Option<std::os::fd::OwnedFd> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use nix::sys::stat::{SFlag, fstat};

    let kind = SFlag::from_bits_truncate(fstat(fd).ok()?.st_mode) & SFlag::S_IFMT;
    if kind != SFlag::S_IFIFO && kind != SFlag::S_IFSOCK {
        return None;
    }
    let owned = fd.try_clone_to_owned().ok()?;
    if kind == SFlag::S_IFIFO {
        let _ = fcntl(&owned, FcntlArg::F_SETPIPE_SZ(PIPE_BUFFER));
    }
    let flags = OFlag::from_bits_truncate(fcntl(&owned, FcntlArg::F_GETFL).ok()?);
    fcntl(&owned, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).ok()?;
    Some(owned)
}

fn is_fifo(fd: &std::os::fd::OwnedFd) -> bool {
    use nix::sys::stat::{SFlag, fstat};
    fstat(fd)
        .is_ok_and(|stat| SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFIFO)
}
