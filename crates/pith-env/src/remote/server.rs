//! The far side: [`serve`] runs a [`LocalEnv`]'s ports for one connection.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::wire::{self, Call, ExecWire, Reply, ToClient, ToServer, ViewWire, WINDOW, path};
mod incoming;
mod policy;

pub use self::incoming::serve_stdio;
use self::incoming::{Incoming, read_incoming};
use self::policy::{apply_floor, handshake};
use crate::{
    Exec, FileSystem, FsError, FsErrorKind, LocalEnv, OutputLog, OutputSink, OutputStream,
    ProcessInput, SandboxPolicy, Search, WriteStream, WriteStreamSender,
};

/// A request that is running: how to cancel it and, for streams, its credits.
struct Active {
    cancel: CancellationToken,
    credits: Option<Arc<Semaphore>>,
    /// A file stream's wants and counts, in arrival order.
    demands: Option<mpsc::UnboundedSender<Demand>>,
    /// A command's stdin (dropping it closes the stdin).
    input: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// The other end of `input` until a command takes it: input that
    /// arrives before the command runs waits here, none is lost.
    waiting_input: Option<mpsc::UnboundedReceiver<Vec<u8>>>,
}

impl Active {
    /// A request just read: cancellable (and given input) from the moment it
    /// arrives, before its task runs — a `Cancel` or `Input` that follows at
    /// once is never lost.
    fn arrived() -> Active {
        let (input, waiting_input) = mpsc::unbounded_channel();
        Active {
            cancel: CancellationToken::new(),
            credits: None,
            demands: None,
            input: Some(input),
            waiting_input: Some(waiting_input),
        }
    }
}

/// What the near side asks of a file stream.
enum Demand {
    /// Send this many more bytes.
    Bytes(u64),
    /// After the bytes asked for, count the lines of up to this many.
    Count(u64),
}

/// A write whose bytes are still arriving: they go on to its task, which
/// writes them into the temp file as they come.
struct PendingWrite {
    len: u64,
    /// How many bytes arrived so far.
    received: u64,
    /// Where the bytes go; `None` once the write's task stopped taking them
    /// (it failed: the rest of its data is read and dropped).
    sender: Option<WriteStreamSender>,
}

impl PendingWrite {
    /// Passes `piece` on to the write's task (waiting while it is
    /// [`STREAM_BUFFERED`] pieces behind).
    async fn feed(&mut self, piece: Vec<u8>) {
        self.received += piece.len() as u64;
        if let Some(sender) = &self.sender
            && sender.send(piece).await.is_err()
        {
            self.sender = None;
        }
    }

    fn complete(&self) -> bool {
        self.received >= self.len
    }
}

/// How many bytes of a `Data` frame the far side reads before passing them
/// on to the write's task (so the disk starts before a 4 MiB frame is in).
const STREAM_PIECE: usize = 1 << 20;

/// How many pieces may wait for a write's task: the connection's reading
/// waits beyond that, so a write holds at most this many MiB here.
const STREAM_BUFFERED: usize = 8;

/// What the connection's tasks share.
struct Shared {
    env: Arc<LocalEnv>,
    out: mpsc::UnboundedSender<ToClient>,
    active: Mutex<HashMap<u64, Active>>,
    /// The sandbox the near side asked for in the handshake: every command
    /// runs in at least this one.
    floor: SandboxPolicy,
    /// The confined views calls asked for, built once (their roots opened
    /// once) and kept for the connection.
    views: Mutex<HashMap<Vec<ViewWire>, Ports>>,
}

/// A file-system and a search port, confined or not.
#[derive(Clone)]
struct Ports {
    fs: Arc<dyn FileSystem>,
    search: Arc<dyn Search>,
}

/// How many distinct views a connection keeps (a session uses two or three).
const MAX_VIEWS: usize = 64;

impl Shared {
    fn send(&self, message: ToClient) {
        // A closed channel means the connection is gone; the run loop is ending.
        let _ = self.out.send(message);
    }

    fn reply(&self, id: u64, reply: Reply) {
        self.active
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        self.send(ToClient::Reply { id, reply });
    }

    /// The ports `views` name: `LocalEnv`'s own, or its views confined
    /// beneath the views' roots by directory handles (opened here, once).
    fn ports(&self, views: &[ViewWire]) -> Result<Ports, String> {
        let unconfined = || Ports {
            fs: self.env.clone(),
            search: self.env.clone(),
        };
        if views.is_empty() {
            return Ok(unconfined());
        }
        let mut cache = self.views.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(ports) = cache.get(views) {
            return Ok(ports.clone());
        }
        let mut ports = unconfined();
        for view in views {
            let confinement = view.confinement()?;
            ports = Ports {
                fs: ports.fs.confine(confinement.clone()),
                search: ports.search.confine(confinement),
            };
        }
        if cache.len() >= MAX_VIEWS {
            cache.clear();
        }
        cache.insert(views.to_vec(), ports.clone());
        Ok(ports)
    }

    fn register(&self, id: u64, stream: bool) -> (CancellationToken, Option<Arc<Semaphore>>) {
        let credits = stream.then(|| Arc::new(Semaphore::new(WINDOW as usize)));
        let cancel = self.insert_active(id, credits.clone(), None);
        (cancel, credits)
    }

    /// Registers file stream `id`: its cancel token and its demands.
    fn register_file(&self, id: u64) -> (CancellationToken, mpsc::UnboundedReceiver<Demand>) {
        let (demands, receiver) = mpsc::unbounded_channel();
        let cancel = self.insert_active(id, None, Some(demands));
        (cancel, receiver)
    }

    /// Records request `id` as arrived (see [`Active::arrived`]).
    fn arrive(&self, id: u64) {
        self.active
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Active::arrived());
    }

    /// Records request `id` as running, with its credits or demands; returns
    /// the token that cancels it (the one it got when it arrived).
    fn insert_active(
        &self,
        id: u64,
        credits: Option<Arc<Semaphore>>,
        demands: Option<mpsc::UnboundedSender<Demand>>,
    ) -> CancellationToken {
        let mut active = self.active.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = active.entry(id).or_insert_with(Active::arrived);
        entry.credits = credits;
        entry.demands = demands;
        entry.cancel.clone()
    }

    /// Passes a demand to file stream `id`, if it is still running.
    fn demand(&self, id: u64, demand: Demand) {
        let active = self.active.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(demands) = active.get(&id).and_then(|a| a.demands.as_ref()) {
            let _ = demands.send(demand);
        }
    }
}

/// Serves one connection: reads requests from `reader`, answers on `writer`,
/// until `reader` ends. Then it kills every process tree it started, lets
/// the writes whose bytes all arrived finish (a write still receiving its
/// bytes fails: its temp file is removed and the file keeps its old bytes),
/// and returns.
///
/// Commands stream their output with backpressure, which blocks the reading
/// task while the near side is behind: run this on a multi-threaded runtime.
pub async fn serve<R, W>(reader: R, writer: W, env: Arc<LocalEnv>) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let mut reader = tokio::io::BufReader::with_capacity(256 * 1024, reader);
    let (out, mut outgoing) = mpsc::unbounded_channel::<ToClient>();
    let writer_task = tokio::spawn(async move {
        let mut writer = BufWriter::with_capacity(256 * 1024, writer);
        while let Some(message) = outgoing.recv().await {
            wire::write_frame(&mut writer, &message).await?;
            if outgoing.is_empty() {
                writer.flush().await?;
            }
        }
        writer.flush().await
    });

    let hello: Option<ToServer> = wire::read_frame(&mut reader).await?;
    let Some(ToServer::Hello(hello)) = hello else {
        let _ = out.send(ToClient::Fatal {
            message: "the first message must be the handshake".to_owned(),
        });
        drop(out);
        let _ = writer_task.await;
        return Ok(());
    };
    let (answer, floor) = handshake(&env, hello);
    let refused = answer.refused.is_some();
    let _ = out.send(ToClient::Hello(answer));
    if refused {
        drop(out);
        let _ = writer_task.await;
        return Ok(());
    }

    let shared = Arc::new(Shared {
        env,
        out,
        active: Mutex::new(HashMap::new()),
        floor,
        views: Mutex::new(HashMap::new()),
    });
    let mut tasks = JoinSet::new();
    let mut writes: HashMap<u64, PendingWrite> = HashMap::new();
    let mut logs: HashMap<u64, Box<dyn OutputLog>> = HashMap::new();
    let result = loop {
        // Reap finished tasks so the set does not grow with the connection's age.
        while tasks.try_join_next().is_some() {}
        let message: ToServer = match read_incoming(&mut reader, &mut writes).await {
            Ok(Some(Incoming::Message(message))) => *message,
            Ok(Some(Incoming::Data(id))) => {
                if writes.get(&id).is_some_and(PendingWrite::complete) {
                    writes.remove(&id);
                }
                continue;
            }
            Ok(None) => break Ok(()),
            Err(error) => break Err(error),
        };
        match message {
            ToServer::Hello(_) => {}
            ToServer::Call { id, call } => match unwrap_views(call) {
                (views, Call::WriteAtomic { path: target, len }) => {
                    let (sender, stream) = WriteStream::channel(len, STREAM_BUFFERED);
                    tasks.spawn(stream_write(
                        shared.clone(),
                        id,
                        views,
                        path(target),
                        stream,
                    ));
                    if len > 0 {
                        let sender = Some(sender);
                        let write = PendingWrite {
                            len,
                            received: 0,
                            sender,
                        };
                        writes.insert(id, write);
                    }
                }
                (views, call) => {
                    shared.arrive(id);
                    tasks.spawn(run_call(shared.clone(), id, views, call));
                }
            },
            ToServer::Data { id, bytes } => {
                if let Some(write) = writes.get_mut(&id) {
                    write.feed(bytes).await;
                    if write.complete() {
                        writes.remove(&id);
                    }
                }
            }
            ToServer::Credit { id, chunks } => {
                let active = shared.active.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(credits) = active.get(&id).and_then(|a| a.credits.as_ref()) {
                    credits.add_permits(chunks as usize);
                }
            }
            ToServer::Cancel { id } => {
                writes.remove(&id);
                let active = shared.active.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(active) = active.get(&id) {
                    active.cancel.cancel();
                }
            }
            ToServer::KillAll => shared.env.kill_all(),
            ToServer::LogCreate { log, path: file } => {
                match shared.env.create_output_log_at(&path(file)) {
                    Ok(handle) => {
                        logs.insert(log, handle);
                    }
                    Err(error) => shared.send(ToClient::LogError {
                        log,
                        message: log_message(error),
                    }),
                }
            }
            ToServer::LogAppend { log, bytes } => {
                if let Some(file) = logs.get_mut(&log)
                    && let Err(error) = file.write_all(&bytes)
                {
                    logs.remove(&log);
                    shared.send(ToClient::LogError {
                        log,
                        message: log_message(error),
                    });
                }
            }
            ToServer::LogClose { log } => {
                logs.remove(&log);
            }
            ToServer::Want { id, bytes } => shared.demand(id, Demand::Bytes(bytes)),
            ToServer::Count { id, max } => shared.demand(id, Demand::Count(max)),
            ToServer::Input { id, bytes } => {
                let active = shared.active.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(input) = active.get(&id).and_then(|a| a.input.as_ref()) {
                    let _ = input.send(bytes);
                }
            }
            ToServer::CloseInput { id } => {
                let mut active = shared.active.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(entry) = active.get_mut(&id) {
                    entry.input = None;
                }
            }
        }
    };

    // The connection is gone (or broken): stop everything it started.
    drop(writes);
    {
        let active = shared.active.lock().unwrap_or_else(PoisonError::into_inner);
        for entry in active.values() {
            entry.cancel.cancel();
            if let Some(credits) = &entry.credits {
                credits.close();
            }
        }
    }
    shared.env.kill_all();
    while tasks.join_next().await.is_some() {}
    drop(shared);
    let _ = writer_task.await;
    result
}

/// An output log's failure, as the near side reports it after the log's path.
fn log_message(error: crate::ExecError) -> String {
    match error {
        crate::ExecError::Io(message) => message
            .rsplit_once(": ")
            .map_or(message.clone(), |(_, reason)| reason.to_owned()),
        other => other.to_string(),
    }
}

/// Writes the bytes of write `id` into its temp file as they arrive (see
/// [`FileSystem::write_atomic_streamed`]). Once every byte arrived the write
/// runs to its end even if the connection drops; a connection lost or a
/// cancel before that ends the stream early: the write fails, its temp file
/// is removed and the file keeps its old bytes.
async fn stream_write(
    shared: Arc<Shared>,
    id: u64,
    views: Vec<ViewWire>,
    target: PathBuf,
    stream: WriteStream,
) {
    let fs = match shared.ports(&views) {
        Ok(ports) => ports.fs,
        Err(message) => return shared.reply(id, bad_view(&target, message)),
    };
    let reply = match fs.write_atomic_streamed(&target, stream).await {
        Ok(()) => Reply::Unit,
        Err(error) => Reply::FsError(error.into()),
    };
    shared.reply(id, reply);
}

/// The views a call is wrapped in (outermost first) and the call itself.
fn unwrap_views(mut call: Call) -> (Vec<ViewWire>, Call) {
    let mut views = Vec::new();
    while let Call::Confined { view, call: inner } = call {
        views.push(view);
        call = *inner;
    }
    (views, call)
}

/// The reply to a call whose view cannot be built (a glob that does not compile).
fn bad_view(target: &Path, message: String) -> Reply {
    Reply::FsError(
        FsError::new(FsErrorKind::InvalidInput, target)
            .with_detail(message)
            .into(),
    )
}

/// Runs one call in `views` and sends its reply. One arm per port method.
async fn run_call(shared: Arc<Shared>, id: u64, views: Vec<ViewWire>, call: Call) {
    let ports = match shared.ports(&views) {
        Ok(ports) => ports,
        Err(message) => return shared.reply(id, bad_view(Path::new(""), message)),
    };
    if !views.is_empty() && matches!(call, Call::Exec(_)) {
        let error = crate::ExecError::Io("a command cannot run in a file-system view".to_owned());
        return shared.reply(id, Reply::ExecError(error.into()));
    }
    let (env, search) = (&ports.fs, &ports.search);
    let fs = |result: Result<Reply, FsError>| result.unwrap_or_else(|e| Reply::FsError(e.into()));
    let reply = match call {
        Call::Read { path: p } => fs(env.read(&path(p)).await.map(Reply::Bytes)),
        Call::ReadRange {
            path: p,
            offset,
            max_len,
        } => {
            let max_len = usize::try_from(max_len).unwrap_or(usize::MAX);
            fs(env
                .read_range(&path(p), offset, max_len)
                .await
                .map(Reply::Bytes))
        }
        Call::Metadata { path: p } => fs(env
            .metadata(&path(p))
            .await
            .map(|m| Reply::Metadata(m.into()))),
        Call::SymlinkMetadata { path: p } => fs(env
            .symlink_metadata(&path(p))
            .await
            .map(|m| Reply::Metadata(m.into()))),
        Call::ReadDir { path: p } => fs(env
            .read_dir(&path(p))
            .await
            .map(|e| Reply::Entries(wire::entries(e)))),
        Call::Canonicalize { path: p } => fs(env
            .canonicalize(&path(p))
            .await
            .map(|p| Reply::Path(wire::wpath(&p)))),
        Call::CreateDirAll { path: p } => {
            fs(env.create_dir_all(&path(p)).await.map(|()| Reply::Unit))
        }
        Call::RemoveDir { path: p } => fs(env.remove_dir(&path(p)).await.map(|()| Reply::Unit)),
        Call::RemoveFile { path: p } => fs(env.remove_file(&path(p)).await.map(|()| Reply::Unit)),
        Call::Open { path: p } => open_stream(&shared, env.as_ref(), id, &path(p)).await,
        Call::Exec(request) => exec(&shared, id, request).await,
        Call::Grep(request) => {
            let (cancel, _) = shared.register(id, false);
            match search.grep(request.into(), cancel).await {
                Ok(output) => Reply::Grep(output.into()),
                Err(error) => Reply::SearchError(error.into()),
            }
        }
        Call::Find(request) => {
            let (cancel, _) = shared.register(id, false);
            match search.find(request.into(), cancel).await {
                Ok(output) => Reply::Find(output.into()),
                Err(error) => Reply::SearchError(error.into()),
            }
        }
        Call::WriteSpliced { path: p, splices } => {
            let splices: Vec<crate::Splice> = splices.into_iter().map(Into::into).collect();
            fs(env
                .write_spliced(&path(p), &splices)
                .await
                .map(|()| Reply::Unit))
        }
        Call::WriteAtomic { path: p, .. } => Reply::FsError(
            FsError::new(FsErrorKind::InvalidInput, path(p))
                .with_detail("write without its data")
                .into(),
        ),
        // Unwrapped above; a view nested in the call it wraps is malformed.
        Call::Confined { .. } => bad_view(Path::new(""), "malformed confined call".to_owned()),
    };
    shared.reply(id, reply);
}

/// Streams a file as chunks: [`wire::FIRST_WANT`] bytes, then as many as
/// the near side wants; counts lines in place when it asks.
async fn open_stream(shared: &Shared, fs: &dyn FileSystem, id: u64, file: &Path) -> Reply {
    let (cancel, mut demands) = shared.register_file(id);
    let cancelled = || Reply::FsError(FsError::new(FsErrorKind::Cancelled, file).into());
    let mut reader = match fs.open(file).await {
        Ok(reader) => reader,
        Err(error) => return Reply::FsError(error.into()),
    };
    let mut owed = wire::FIRST_WANT;
    let mut buf = vec![0_u8; wire::CHUNK];
    loop {
        if owed == 0 {
            let demand = tokio::select! {
                demand = demands.recv() => demand,
                () = cancel.cancelled() => return cancelled(),
            };
            match demand {
                Some(Demand::Bytes(bytes)) => owed = bytes,
                Some(Demand::Count(max)) => {
                    let count = tokio::select! {
                        count = reader.count_lines(max) => count,
                        () = cancel.cancelled() => return cancelled(),
                    };
                    match count {
                        Ok(count) => shared.send(ToClient::Counted {
                            id,
                            bytes: count.bytes,
                            newlines: count.newlines,
                            after_last_newline: count.after_last_newline,
                            last_byte: count.last_byte,
                        }),
                        Err(error) => return Reply::FsError(error.into()),
                    }
                }
                None => return cancelled(),
            }
            continue;
        }
        if cancel.is_cancelled() {
            return cancelled();
        }
        let want = usize::try_from(owed).map_or(buf.len(), |owed| owed.min(buf.len()));
        let n = match reader.read_chunk(&mut buf[..want]).await {
            Ok(0) => return Reply::Unit,
            Ok(n) => n,
            Err(error) => return Reply::FsError(error.into()),
        };
        owed -= n as u64;
        shared.send(ToClient::Chunk {
            id,
            bytes: buf[..n].to_vec(),
        });
    }
}

/// Runs a command, streaming its output with backpressure.
async fn exec(shared: &Shared, id: u64, request: ExecWire) -> Reply {
    let mut request = match request.request() {
        Ok(request) => request,
        Err(message) => return Reply::ExecError(crate::ExecError::Sandbox(message).into()),
    };
    apply_floor(&mut request.sandbox, &shared.floor);
    let (cancel, credits) = shared.register(id, true);
    let Some(credits) = credits else {
        return Reply::Unit;
    };
    // Input for a pipe or a terminal arrives as `Input` messages, passed on
    // once the command runs (earlier ones, even those read before this task
    // ran, wait in the channel made when the call arrived).
    let input = {
        let mut active = shared.active.lock().unwrap_or_else(PoisonError::into_inner);
        active.get_mut(&id).and_then(|entry| {
            if request.stdin == crate::StdinMode::Null {
                entry.input = None;
                None
            } else {
                entry.waiting_input.take()
            }
        })
    };
    let out = shared.out.clone();
    let output = move |stream: OutputStream, bytes: &[u8]| {
        // Wait for the near side to take earlier chunks: the pipes stay
        // unread meanwhile, so a fast command slows down instead of filling
        // memory. A closed semaphore (connection gone) lets it run on.
        match credits.try_acquire() {
            Ok(permit) => permit.forget(),
            Err(tokio::sync::TryAcquireError::Closed) => return,
            Err(tokio::sync::TryAcquireError::NoPermits) => {
                let handle = tokio::runtime::Handle::current();
                let acquired = tokio::task::block_in_place(|| handle.block_on(credits.acquire()));
                match acquired {
                    Ok(permit) => permit.forget(),
                    Err(_) => return,
                }
            }
        }
        let _ = out.send(ToClient::Output {
            id,
            stderr: stream == OutputStream::Stderr,
            bytes: bytes.to_vec(),
        });
    };
    let mut sink = ExecSink { output, input };
    match shared.env.exec(request, &mut sink, cancel).await {
        Ok(outcome) => Reply::Exec(outcome.into()),
        Err(error) => Reply::ExecError(error.into()),
    }
}

/// A command's output going to the near side, and its input coming from there.
struct ExecSink<F> {
    output: F,
    input: Option<mpsc::UnboundedReceiver<Vec<u8>>>,
}

impl<F: FnMut(OutputStream, &[u8]) + Send> OutputSink for ExecSink<F> {
    fn output(&mut self, stream: OutputStream, bytes: &[u8]) {
        (self.output)(stream, bytes);
    }

    /// Passes the near side's input on until it closes the stdin, the call
    /// ends or the command's stdin is closed.
    fn input(&mut self, input: ProcessInput) {
        if let Some(mut receiver) = self.input.take() {
            tokio::spawn(async move {
                while let Some(bytes) = receiver.recv().await {
                    if input.send(&bytes).is_err() {
                        break;
                    }
                }
            });
        }
    }
}

#[cfg(test)]
#[path = "server/stream_tests.rs"]
mod stream_tests;
