//! The near side: [`RemoteEnv`] speaks the protocol to a `pith serve --stdio`
//! started through a transport command.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::wire::{
    self, Call, ClientHello, PROTOCOL_VERSION, RemotePolicyWire, Reply, ServerHello, ToClient,
    ToServer, wpath,
};
use super::{FarPith, RemoteError, RemoteInfo, RemoteOptions};
use crate::{
    DirEntry, Exec, ExecError, ExecOutcome, ExecRequest, FileReader, FileSystem, FindOutput,
    FindRequest, FsError, FsErrorKind, GrepOutput, GrepRequest, Metadata, OutputLog, OutputSink,
    OutputStream, Search, SearchError,
};

/// How long the transport and the far pith get to answer the handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// How many times a call tries to reconnect a lost connection, and the first pause.
const RECONNECT_ATTEMPTS: u32 = 3;
const RECONNECT_FIRST_PAUSE: Duration = Duration::from_millis(100);

/// How much of the transport's stderr is kept for error messages.
const STDERR_TAIL: usize = 4096;

/// What the reader task hands a waiting call.
enum Event {
    Chunk(Vec<u8>),
    Output(bool, Vec<u8>),
    Reply(Reply),
}

/// One live connection: a transport process speaking the protocol.
struct Conn {
    remote: String,
    calls: mpsc::Sender<ToServer>,
    control: mpsc::UnboundedSender<ToServer>,
    pending: Mutex<Pending>,
    next_id: AtomicU64,
    log_errors: Mutex<HashMap<u64, String>>,
    hello: ServerHello,
    child: Child,
}

#[derive(Default)]
struct Pending {
    waiting: HashMap<u64, mpsc::UnboundedSender<Event>>,
    /// Set when the connection is gone: why.
    lost: Option<String>,
}

impl Conn {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lost(&self) -> Option<String> {
        self.lock().lost.clone()
    }

    /// Why a call failed when the connection went away.
    fn lost_message(&self) -> String {
        let cause = self
            .lost()
            .unwrap_or_else(|| "the connection closed".to_owned());
        format!(
            "remote `{}`: connection lost ({cause}); the next call reconnects",
            self.remote
        )
    }

    /// Starts a call: its id and where its events arrive.
    async fn start(self: &Arc<Self>, call: Call) -> Result<Ticket, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, events) = mpsc::unbounded_channel();
        {
            let mut pending = self.lock();
            if pending.lost.is_some() {
                drop(pending);
                return Err(self.lost_message());
            }
            pending.waiting.insert(id, sender);
        }
        let ticket = Ticket {
            conn: self.clone(),
            id,
            events,
            done: false,
        };
        if self.calls.send(ToServer::Call { id, call }).await.is_err() {
            return Err(self.lost_message());
        }
        Ok(ticket)
    }

    fn control(&self, message: ToServer) {
        let _ = self.control.send(message);
    }
}

/// A call in flight; dropping it before its reply cancels it on the far side.
struct Ticket {
    conn: Arc<Conn>,
    id: u64,
    events: mpsc::UnboundedReceiver<Event>,
    done: bool,
}

impl Ticket {
    /// The next event; `Err` when the connection is gone.
    async fn next(&mut self) -> Result<Event, String> {
        match self.events.recv().await {
            Some(event) => {
                if matches!(event, Event::Reply(_)) {
                    self.done = true;
                }
                Ok(event)
            }
            None => {
                self.done = true;
                Err(self.conn.lost_message())
            }
        }
    }

    /// Waits for the reply, ignoring stream events.
    async fn reply(&mut self) -> Result<Reply, String> {
        loop {
            if let Event::Reply(reply) = self.next().await? {
                return Ok(reply);
            }
        }
    }

    fn cancel(&self) {
        self.conn.control(ToServer::Cancel { id: self.id });
    }

    fn credit(&self) {
        self.conn.control(ToServer::Credit {
            id: self.id,
            chunks: 1,
        });
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !self.done {
            self.conn.lock().waiting.remove(&self.id);
            self.cancel();
        }
    }
}

/// The file system, processes and search of another machine, reached through
/// a transport command that runs `pith serve --stdio` there (see the module docs).
///
/// Cheap to clone; clones share the connection. A lost connection fails the
/// calls in flight (naming the remote and the cause) and the next call
/// reconnects, trying a few times with growing pauses.
#[derive(Clone)]
pub struct RemoteEnv {
    inner: Arc<Inner>,
}

struct Inner {
    options: RemoteOptions,
    slot: tokio::sync::Mutex<Option<Arc<Conn>>>,
    /// The live connection, for the synchronous methods.
    current: Mutex<Option<Arc<Conn>>>,
    info: RemoteInfo,
}

impl std::fmt::Debug for RemoteEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteEnv")
            .field("remote", &self.inner.options.prefix)
            .finish_non_exhaustive()
    }
}

impl RemoteEnv {
    /// Starts the transport, installs the far pith when needed, and shakes hands.
    pub async fn connect(options: RemoteOptions) -> Result<RemoteEnv, RemoteError> {
        let conn = open(&options).await?;
        let hello = &conn.hello;
        let info = RemoteInfo {
            pith_version: hello.pith_version.clone(),
            os: hello.os.clone(),
            arch: hello.arch.clone(),
            home: hello.home.clone().map(wire::path),
            landlock_abi: hello.landlock_abi,
            cwd: wire::path(hello.cwd.clone()),
            roots: hello.roots.iter().cloned().map(wire::path).collect(),
            sandbox: hello.sandbox.clone().policy().unwrap_or_default(),
        };
        Ok(RemoteEnv {
            inner: Arc::new(Inner {
                options,
                slot: tokio::sync::Mutex::new(Some(conn.clone())),
                current: Mutex::new(Some(conn)),
                info,
            }),
        })
    }

    /// What the far side said about itself in the handshake.
    pub fn info(&self) -> &RemoteInfo {
        &self.inner.info
    }

    /// The process id of the live connection's transport command (the
    /// `sh -c '<prefix> "$@"'` pith started), if connected; for diagnostics
    /// and fault tests.
    pub fn transport_pid(&self) -> Option<u32> {
        self.current().and_then(|conn| conn.child.id())
    }

    /// The transport command, as given.
    pub fn remote(&self) -> &str {
        &self.inner.options.prefix
    }

    /// The live connection, reconnecting when it was lost.
    async fn conn(&self) -> Result<Arc<Conn>, String> {
        let mut slot = self.inner.slot.lock().await;
        if let Some(conn) = slot.as_ref()
            && conn.lost().is_none()
        {
            return Ok(conn.clone());
        }
        let mut pause = RECONNECT_FIRST_PAUSE;
        let mut last = String::new();
        for attempt in 0..RECONNECT_ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(pause).await;
                pause *= 4;
            }
            match open(&self.inner.options).await {
                Ok(conn) => {
                    *slot = Some(conn.clone());
                    *self
                        .inner
                        .current
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(conn.clone());
                    return Ok(conn);
                }
                Err(error) => last = error.to_string(),
            }
        }
        Err(format!(
            "{last} (after {RECONNECT_ATTEMPTS} attempts to reconnect)"
        ))
    }

    /// Starts a call on the live connection. A connection found lost before
    /// the call was sent (so the far side never saw it) is replaced and the
    /// call started once more on the new one.
    async fn begin(&self, call: Call) -> Result<(Arc<Conn>, Ticket), String> {
        let conn = self.conn().await?;
        match conn.start(call.clone()).await {
            Ok(ticket) => Ok((conn, ticket)),
            Err(_) => {
                let conn = self.conn().await?;
                let ticket = conn.start(call).await?;
                Ok((conn, ticket))
            }
        }
    }

    fn current(&self) -> Option<Arc<Conn>> {
        self.inner
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .filter(|conn| conn.lost().is_none())
    }

    /// Runs a file-system call to its reply.
    async fn fs_call(&self, call: Call, path: &Path) -> Result<Reply, FsError> {
        let lost = |message: String| FsError::new(FsErrorKind::Other, path).with_detail(message);
        let (_, mut ticket) = self.begin(call).await.map_err(lost)?;
        match ticket.reply().await.map_err(lost)? {
            Reply::FsError(error) => Err(error.into()),
            reply => Ok(reply),
        }
    }

    /// Runs a search call to its reply, cancelling it on the far side when `cancel` fires.
    async fn search_call(
        &self,
        call: Call,
        root: &Path,
        cancel: CancellationToken,
    ) -> Result<Reply, SearchError> {
        let lost = |message: String| {
            SearchError::Fs(FsError::new(FsErrorKind::Other, root).with_detail(message))
        };
        let (_, mut ticket) = self.begin(call).await.map_err(lost)?;
        let mut cancelled = false;
        loop {
            tokio::select! {
                event = ticket.next() => match event.map_err(lost)? {
                    Event::Reply(Reply::SearchError(error)) => return Err(error.into()),
                    Event::Reply(reply) => return Ok(reply),
                    _ => {}
                },
                () = cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    ticket.cancel();
                }
            }
        }
    }
}

/// The error for a reply of the wrong shape (a far side that does not follow the protocol).
fn unexpected(path: &Path) -> FsError {
    FsError::new(FsErrorKind::Other, path).with_detail("unexpected reply from the remote pith")
}

#[async_trait]
impl FileSystem for RemoteEnv {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        match self.fs_call(Call::Read { path: wpath(path) }, path).await? {
            Reply::Bytes(bytes) => Ok(bytes),
            _ => Err(unexpected(path)),
        }
    }

    async fn read_range(
        &self,
        path: &Path,
        offset: u64,
        max_len: usize,
    ) -> Result<Vec<u8>, FsError> {
        let call = Call::ReadRange {
            path: wpath(path),
            offset,
            max_len: max_len as u64,
        };
        match self.fs_call(call, path).await? {
            Reply::Bytes(bytes) => Ok(bytes),
            _ => Err(unexpected(path)),
        }
    }

    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError> {
        let lost = |message: String| FsError::new(FsErrorKind::Other, path).with_detail(message);
        let call = Call::Open { path: wpath(path) };
        let (_, mut ticket) = self.begin(call).await.map_err(lost)?;
        // The first event says whether the file opened.
        let mut reader = RemoteReader {
            ticket: None,
            path: path.to_path_buf(),
            chunk: Vec::new(),
            pos: 0,
        };
        match ticket.next().await.map_err(lost)? {
            Event::Chunk(bytes) => {
                ticket.credit();
                reader.chunk = bytes;
                reader.ticket = Some(ticket);
            }
            Event::Reply(Reply::FsError(error)) => return Err(error.into()),
            Event::Reply(_) => {}
            Event::Output(..) => return Err(unexpected(path)),
        }
        Ok(Box::new(reader))
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        let lost = |message: String| FsError::new(FsErrorKind::Other, path).with_detail(message);
        let call = Call::WriteAtomic {
            path: wpath(path),
            len: contents.len() as u64,
        };
        let (conn, mut ticket) = self.begin(call).await.map_err(lost)?;
        for chunk in contents.chunks(wire::CHUNK) {
            let data = ToServer::Data {
                id: ticket.id,
                bytes: chunk.to_vec(),
            };
            if conn.calls.send(data).await.is_err() {
                return Err(lost(conn.lost_message()));
            }
        }
        match ticket.reply().await.map_err(lost)? {
            Reply::Unit => Ok(()),
            Reply::FsError(error) => Err(error.into()),
            _ => Err(unexpected(path)),
        }
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        match self
            .fs_call(Call::Metadata { path: wpath(path) }, path)
            .await?
        {
            Reply::Metadata(metadata) => Ok(metadata.into()),
            _ => Err(unexpected(path)),
        }
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        let call = Call::SymlinkMetadata { path: wpath(path) };
        match self.fs_call(call, path).await? {
            Reply::Metadata(metadata) => Ok(metadata.into()),
            _ => Err(unexpected(path)),
        }
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        match self
            .fs_call(Call::ReadDir { path: wpath(path) }, path)
            .await?
        {
            Reply::Entries(entries) => Ok(wire::dir_entries(entries)),
            _ => Err(unexpected(path)),
        }
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        let call = Call::Canonicalize { path: wpath(path) };
        match self.fs_call(call, path).await? {
            Reply::Path(resolved) => Ok(wire::path(resolved)),
            _ => Err(unexpected(path)),
        }
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        let call = Call::CreateDirAll { path: wpath(path) };
        match self.fs_call(call, path).await? {
            Reply::Unit => Ok(()),
            _ => Err(unexpected(path)),
        }
    }

    async fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        match self
            .fs_call(Call::RemoveDir { path: wpath(path) }, path)
            .await?
        {
            Reply::Unit => Ok(()),
            _ => Err(unexpected(path)),
        }
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.inner.info.home.clone()
    }

    /// A view that resolves each path through this port before acting
    /// (`remote/checked.rs`): the confinement contract
    /// holds, but not against a swapper racing on the far side (docs/remote.md).
    fn confine(self: Arc<Self>, confinement: crate::Confinement) -> Arc<dyn FileSystem> {
        Arc::new(super::checked::CheckedView::new(self, confinement))
    }
}

/// A far file streamed in chunks, at most a window ahead.
struct RemoteReader {
    /// `None` once the stream ended.
    ticket: Option<Ticket>,
    path: PathBuf,
    chunk: Vec<u8>,
    pos: usize,
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

#[async_trait]
impl Exec for RemoteEnv {
    async fn exec(
        &self,
        request: ExecRequest,
        sink: &mut dyn OutputSink,
        cancel: CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        // Input is not forwarded yet: a pipe request runs with stdin at end of
        // file (the sink never gets an input handle); a terminal is refused.
        if request.stdin == crate::StdinMode::Tty {
            return Err(ExecError::NotSupported(
                "tty is not supported over a remote environment yet; run the command without tty"
                    .to_owned(),
            ));
        }
        let (conn, mut ticket) = self
            .begin(Call::Exec((&request).into()))
            .await
            .map_err(ExecError::Io)?;
        let mut cancelled = false;
        loop {
            tokio::select! {
                event = ticket.next() => match event.map_err(ExecError::Io)? {
                    Event::Output(stderr, bytes) => {
                        let stream = if stderr { OutputStream::Stderr } else { OutputStream::Stdout };
                        sink.output(stream, &bytes);
                        ticket.credit();
                    }
                    Event::Reply(Reply::Exec(outcome)) => return Ok(outcome.into()),
                    Event::Reply(Reply::ExecError(error)) => return Err(error.into()),
                    _ => return Err(ExecError::Io(format!("remote `{}`: unexpected reply", conn.remote))),
                },
                () = cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    ticket.cancel();
                }
            }
        }
    }

    fn kill_all(&self) {
        if let Some(conn) = self.current() {
            conn.control(ToServer::KillAll);
        }
    }

    fn create_output_log(&self, dir: &Path, prefix: &str) -> Result<Box<dyn OutputLog>, ExecError> {
        let conn = self.current().ok_or_else(|| {
            ExecError::Io(format!(
                "remote `{}`: not connected; the next call reconnects",
                self.inner.options.prefix
            ))
        })?;
        let log = conn.next_id.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{prefix}{:016x}.log", rand::random::<u64>()));
        conn.control(ToServer::LogCreate {
            log,
            path: wpath(&path),
        });
        Ok(Box::new(RemoteLog { conn, log, path }))
    }
}

/// An output log on the far side; writes are sent without waiting, a far
/// failure is reported by the next write.
struct RemoteLog {
    conn: Arc<Conn>,
    log: u64,
    path: PathBuf,
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

#[async_trait]
impl Search for RemoteEnv {
    async fn grep(
        &self,
        request: GrepRequest,
        cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        let call = Call::Grep((&request).into());
        match self.search_call(call, &request.root, cancel).await? {
            Reply::Grep(output) => Ok(output.into()),
            _ => Err(SearchError::Fs(unexpected(&request.root))),
        }
    }

    async fn find(
        &self,
        request: FindRequest,
        cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        let call = Call::Find((&request).into());
        match self.search_call(call, &request.root, cancel).await? {
            Reply::Find(output) => Ok(output.into()),
            _ => Err(SearchError::Fs(unexpected(&request.root))),
        }
    }
}

/// Starts the transport, installs the far pith when needed and shakes hands.
async fn open(options: &RemoteOptions) -> Result<Arc<Conn>, RemoteError> {
    let remote = options.prefix.clone();
    let fail = |message: String| RemoteError {
        remote: remote.clone(),
        message,
    };
    let far: Vec<String> = match &options.far_pith {
        FarPith::Path(path) => vec![
            path.display().to_string(),
            "serve".to_owned(),
            "--stdio".to_owned(),
        ],
        FarPith::Install { .. } => vec!["sh".to_owned()],
    };
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("{} \"$@\"", options.prefix))
        .arg("pith-remote")
        .args(&far)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|error| {
        fail(format!(
            "cannot start the transport command ({error}); check that `{}` runs a command on the far side",
            options.prefix
        ))
    })?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(fail("the transport's pipes are missing".to_owned()));
    };
    let tail = Arc::new(Mutex::new(Vec::new()));
    tokio::spawn(keep_tail(stderr, tail.clone()));
    let mut stdin = BufWriter::with_capacity(256 * 1024, stdin);
    let mut stdout = BufReader::with_capacity(256 * 1024, stdout);

    let handshake = async {
        if let FarPith::Install { upload, executable } = &options.far_pith {
            install(&mut stdin, &mut stdout, *upload, executable).await?;
        }
        let hello = ToServer::Hello(ClientHello {
            protocol: PROTOCOL_VERSION,
            pith_version: env!("CARGO_PKG_VERSION").to_owned(),
            policy: policy_wire(&options.policy),
        });
        wire::write_frame(&mut stdin, &hello)
            .await
            .map_err(|error| format!("cannot send the handshake: {error}"))?;
        stdin
            .flush()
            .await
            .map_err(|error| format!("cannot send the handshake: {error}"))?;
        match wire::read_frame::<_, ToClient>(&mut stdout).await {
            Ok(Some(ToClient::Hello(hello))) => Ok(hello),
            Ok(Some(ToClient::Fatal { message })) => Err(message),
            Ok(Some(_)) => Err("the far side did not answer the handshake".to_owned()),
            Ok(None) => Err("the transport closed before the handshake".to_owned()),
            Err(error) => Err(format!(
                "the far side did not speak the pith protocol ({error})"
            )),
        }
    };
    let hello = match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(hello)) => hello,
        Ok(Err(message)) => {
            let status = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            let stderr = stderr_text(&tail);
            let status = match status {
                Ok(Ok(status)) => format!("; the transport exited with {status}"),
                _ => String::new(),
            };
            return Err(fail(format!("{message}{status}{stderr}")));
        }
        Err(_) => {
            return Err(fail(format!(
                "no handshake within {HANDSHAKE_TIMEOUT:?} (is the transport waiting for a password? use key authentication){}",
                stderr_text(&tail)
            )));
        }
    };
    if let Some(refused) = &hello.refused {
        return Err(fail(format!(
            "the far pith refused the connection: {refused}"
        )));
    }
    if hello.pith_version != env!("CARGO_PKG_VERSION") {
        return Err(fail(format!(
            "version mismatch: the far pith is {}, this one is {}; install pith {} there or pass --remote-pith PATH to one",
            hello.pith_version,
            env!("CARGO_PKG_VERSION"),
            env!("CARGO_PKG_VERSION")
        )));
    }

    let (calls, calls_rx) = mpsc::channel(16);
    let (control, control_rx) = mpsc::unbounded_channel();
    tokio::spawn(write_loop(stdin, calls_rx, control_rx));
    let conn = Arc::new(Conn {
        remote: remote.clone(),
        calls,
        control,
        pending: Mutex::new(Pending::default()),
        next_id: AtomicU64::new(1),
        log_errors: Mutex::new(HashMap::new()),
        hello,
        child,
    });
    tokio::spawn(read_loop(Arc::downgrade(&conn), stdout, tail));
    Ok(conn)
}

fn policy_wire(policy: &super::RemotePolicy) -> RemotePolicyWire {
    RemotePolicyWire {
        cwd: policy.cwd.as_deref().map(wpath),
        roots: policy.roots.iter().map(|p| wpath(p)).collect(),
        cwd_is_root: policy.cwd_is_root,
        protected: policy.protected.clone(),
        contain_reads: policy.contain_reads,
        sandbox_mode: policy.sandbox_mode.as_str().to_owned(),
        auto_sandbox: policy.auto_sandbox,
        deny_network: policy.deny_network,
        run_unsandboxed: policy.run_unsandboxed,
    }
}

/// Runs the far side's installer script: uses the cached pith, or uploads this one.
async fn install(
    stdin: &mut BufWriter<ChildStdin>,
    stdout: &mut BufReader<ChildStdout>,
    upload: bool,
    executable: &Path,
) -> Result<(), String> {
    let send = |error: std::io::Error| format!("cannot write to the transport: {error}");
    stdin
        .write_all(super::bootstrap_script(env!("CARGO_PKG_VERSION")).as_bytes())
        .await
        .map_err(send)?;
    stdin.flush().await.map_err(send)?;
    let mut line = String::new();
    loop {
        line.clear();
        let n = stdout
            .read_line(&mut line)
            .await
            .map_err(|error| format!("cannot read from the transport: {error}"))?;
        if n == 0 {
            return Err("the transport closed before pith started on the far side".to_owned());
        }
        let text = line.trim_end();
        if text == "PITH-EXEC" {
            return Ok(());
        }
        if let Some(got) = text.strip_prefix("PITH-BADSUM ") {
            return Err(format!(
                "the uploaded pith arrived with checksum {got}, not the one sent: the transport altered it; nothing was installed"
            ));
        }
        let Some(uname) = text.strip_prefix("PITH-MISSING ") else {
            continue; // e.g. a banner from the far shell's startup files
        };
        let far = super::uname_platform(uname);
        let near = (
            std::env::consts::OS.to_owned(),
            std::env::consts::ARCH.to_owned(),
        );
        if far != near {
            let _ = stdin.write_all(b"abort\n").await;
            let _ = stdin.flush().await;
            return Err(format!(
                "the far side is {uname} but this pith is built for {} {}: install a pith {} for {uname} there and pass --remote-pith PATH",
                near.0,
                near.1,
                env!("CARGO_PKG_VERSION")
            ));
        }
        if !upload {
            let _ = stdin.write_all(b"abort\n").await;
            let _ = stdin.flush().await;
            return Err(format!(
                "pith {} is not installed on the far side (~/.cache/pith/{}/pith) and --no-remote-install forbids uploading it; install it there or pass --remote-pith PATH",
                env!("CARGO_PKG_VERSION"),
                env!("CARGO_PKG_VERSION")
            ));
        }
        let bytes = tokio::fs::read(executable).await.map_err(|error| {
            format!("cannot read {} to upload it: {error}", executable.display())
        })?;
        let sum = super::sha256_hex(&bytes);
        stdin
            .write_all(format!("upload {} {sum}\n", bytes.len()).as_bytes())
            .await
            .map_err(send)?;
        stdin.write_all(&bytes).await.map_err(send)?;
        stdin.flush().await.map_err(send)?;
    }
}

/// Writes outgoing messages: control messages (credits, cancels) first.
async fn write_loop(
    mut stdin: BufWriter<ChildStdin>,
    mut calls: mpsc::Receiver<ToServer>,
    mut control: mpsc::UnboundedReceiver<ToServer>,
) {
    loop {
        let message = tokio::select! {
            biased;
            Some(message) = control.recv() => message,
            Some(message) = calls.recv() => message,
            else => break,
        };
        if wire::write_frame(&mut stdin, &message).await.is_err() {
            break;
        }
        if control.is_empty() && calls.is_empty() && stdin.flush().await.is_err() {
            break;
        }
    }
}

/// Keeps the last [`STDERR_TAIL`] bytes of the transport's stderr.
async fn keep_tail(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0_u8; 4096];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > STDERR_TAIL {
            let cut = tail.len() - STDERR_TAIL;
            tail.drain(..cut);
        }
    }
}

fn stderr_text(tail: &Mutex<Vec<u8>>) -> String {
    let tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
    let text = String::from_utf8_lossy(&tail);
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        format!("; its stderr: {}", text.replace('\n', " | "))
    }
}

/// Reads the far side's messages and hands each to the call it belongs to.
/// At the end of the stream every waiting call learns the connection is lost.
/// It holds the connection weakly: dropping the last [`RemoteEnv`] drops the
/// connection, which closes the far side's stdin and ends it.
async fn read_loop(
    weak: std::sync::Weak<Conn>,
    mut stdout: BufReader<ChildStdout>,
    tail: Arc<Mutex<Vec<u8>>>,
) {
    let cause = loop {
        let message = match wire::read_frame::<_, ToClient>(&mut stdout).await {
            Ok(Some(message)) => message,
            Ok(None) => break "the far side closed the connection".to_owned(),
            Err(error) => break format!("reading from the far side failed: {error}"),
        };
        let (id, event) = match message {
            ToClient::Reply { id, reply } => (id, Event::Reply(reply)),
            ToClient::Chunk { id, bytes } => (id, Event::Chunk(bytes)),
            ToClient::Output { id, stderr, bytes } => (id, Event::Output(stderr, bytes)),
            ToClient::LogError { log, message } => {
                let Some(conn) = weak.upgrade() else { return };
                conn.log_errors
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(log, message);
                continue;
            }
            ToClient::Fatal { message } => break format!("the far pith stopped: {message}"),
            ToClient::Hello(_) => continue,
        };
        let Some(conn) = weak.upgrade() else { return };
        let mut pending = conn.lock();
        let is_reply = matches!(event, Event::Reply(_));
        if let Some(waiting) = pending.waiting.get(&id) {
            let _ = waiting.send(event);
        }
        if is_reply {
            pending.waiting.remove(&id);
        }
    };
    let cause = format!("{cause}{}", stderr_text(&tail));
    let Some(conn) = weak.upgrade() else { return };
    let mut pending = conn.lock();
    pending.lost = Some(cause);
    pending.waiting.clear();
}
