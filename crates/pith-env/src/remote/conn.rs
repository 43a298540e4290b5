//! One connection to a far `pith serve --stdio`: starting the transport,
//! installing the far pith, the handshake, and the tasks that write the
//! outgoing frames and hand each incoming one to the call it belongs to.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;

use super::wire::{
    self, Call, ClientHello, PROTOCOL_VERSION, RemotePolicyWire, Reply, ServerHello, ToClient,
    ToServer, wpath,
};
use super::{FarPith, RemoteError, RemoteOptions};

/// How long the transport and the far pith get to answer the handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// How much of the transport's stderr is kept for error messages.
const STDERR_TAIL: usize = 4096;

/// What the reader task hands a waiting call.
pub(super) enum Event {
    Chunk(Vec<u8>),
    Output(bool, Vec<u8>),
    Reply(Reply),
    Counted(crate::LineCount),
}

/// The transport's stdin, shared by the task that writes queued messages
/// and the writes that send their bytes straight from the caller's buffer
/// ([`Conn::send_data`]).
type Outgoing = Arc<tokio::sync::Mutex<Out>>;

/// The transport's stdin (`None` once closed), and whether a frame is being
/// written: found set by the next writer, the frame was left half written
/// (its writer was cancelled) and nothing more can be sent.
pub(super) struct Out {
    stdin: Option<BufWriter<ChildStdin>>,
    writing: bool,
}

impl Out {
    /// Starts writing a frame: the stdin, unless it is closed or an earlier
    /// frame was torn (then it closes it and sets `torn`).
    fn begin(&mut self, torn: &AtomicBool) -> Option<&mut BufWriter<ChildStdin>> {
        if self.writing {
            self.stdin = None;
            torn.store(true, Ordering::Release);
        }
        self.writing = self.stdin.is_some();
        self.stdin.as_mut()
    }

    /// Ends a frame: `ok` if it was written whole; else the stdin is closed.
    fn end(&mut self, ok: bool) -> bool {
        self.writing = false;
        if !ok {
            self.stdin = None;
        }
        ok
    }
}

/// Marks the connection torn when dropped: held while a frame is written
/// straight to the transport and forgotten once it is written, so a caller
/// dropped in the middle of a frame marks it at once, and the next call
/// reconnects instead of failing on it.
struct TearOnDrop<'a>(&'a AtomicBool);

impl Drop for TearOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// One live connection: a transport process speaking the protocol.
pub(super) struct Conn {
    pub(super) remote: String,
    pub(super) calls: mpsc::Sender<ToServer>,
    control: mpsc::UnboundedSender<ToServer>,
    outgoing: Outgoing,
    /// Set when a frame was left half written (a write cancelled in the
    /// middle of its bytes): nothing more can be sent on this connection.
    torn: Arc<AtomicBool>,
    pending: Mutex<Pending>,
    pub(super) next_id: AtomicU64,
    pub(super) log_errors: Mutex<HashMap<u64, String>>,
    pub(super) hello: ServerHello,
    pub(super) child: Child,
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

    pub(super) fn lost(&self) -> Option<String> {
        if self.torn.load(Ordering::Acquire) {
            return Some("a write was cancelled in the middle of its data".to_owned());
        }
        self.lock().lost.clone()
    }

    /// Why a call failed when the connection went away.
    pub(super) fn lost_message(&self) -> String {
        let cause = self
            .lost()
            .unwrap_or_else(|| "the connection closed".to_owned());
        format!(
            "remote `{}`: connection lost ({cause}); the next call reconnects",
            self.remote
        )
    }

    /// Starts a call: its id and where its events arrive.
    pub(super) async fn start(self: &Arc<Self>, call: Call) -> Result<Ticket, String> {
        let ticket = self.register()?;
        let id = ticket.id;
        if self.calls.send(ToServer::Call { id, call }).await.is_err() {
            return Err(self.lost_message());
        }
        Ok(ticket)
    }

    pub(super) fn control(&self, message: ToServer) {
        let _ = self.control.send(message);
    }

    /// Starts a call by writing it to the transport at once, not through the
    /// queue, so that [`Conn::send_data`] may follow it directly.
    pub(super) async fn start_direct(self: &Arc<Self>, call: Call) -> Result<Ticket, String> {
        let ticket = self.register()?;
        let message = ToServer::Call {
            id: ticket.id,
            call,
        };
        let mut out = self.outgoing.lock().await;
        let tear = TearOnDrop(&self.torn);
        let sent = match out.begin(&self.torn) {
            Some(stdin) => wire::write_frame(stdin, &message).await.is_ok(),
            None => false,
        };
        std::mem::forget(tear);
        if !out.end(sent) {
            return Err(self.lost_message());
        }
        Ok(ticket)
    }

    /// Sends `bytes` as the `Data` of request `id`, in frames of up to
    /// [`wire::DATA_CHUNK`] written straight from `bytes` (no copy; the
    /// transport's buffer is bypassed for each frame's body). Other messages
    /// (cancels, credits, other calls) go out between frames. Dropping this
    /// future in the middle of a frame tears the connection: it is closed,
    /// the far side drops the incomplete write, and the next call reconnects.
    pub(super) async fn send_data(&self, id: u64, bytes: &[u8]) -> Result<(), String> {
        if bytes.is_empty() {
            // No data frame follows the call: send it on.
            let mut out = self.outgoing.lock().await;
            let flushed = match out.begin(&self.torn) {
                Some(stdin) => stdin.flush().await.is_ok(),
                None => false,
            };
            return if out.end(flushed) {
                Ok(())
            } else {
                Err(self.lost_message())
            };
        }
        let chunks = bytes.chunks(wire::DATA_CHUNK);
        let last = chunks.len();
        for (index, chunk) in chunks.enumerate() {
            let head = wire::data_head(id, chunk.len()).map_err(|error| error.to_string())?;
            let mut out = self.outgoing.lock().await;
            let Some(stdin) = out.begin(&self.torn) else {
                return Err(self.lost_message());
            };
            let tear = TearOnDrop(&self.torn);
            let mut sent =
                stdin.write_all(&head).await.is_ok() && stdin.write_all(chunk).await.is_ok();
            if index + 1 == last {
                sent = sent && stdin.flush().await.is_ok();
            }
            std::mem::forget(tear);
            if !out.end(sent) {
                return Err(self.lost_message());
            }
        }
        Ok(())
    }

    /// Registers a new call: its id and where its events arrive.
    fn register(self: &Arc<Self>) -> Result<Ticket, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, events) = mpsc::unbounded_channel();
        let mut pending = self.lock();
        if pending.lost.is_some() || self.torn.load(Ordering::Acquire) {
            drop(pending);
            return Err(self.lost_message());
        }
        pending.waiting.insert(id, sender);
        Ok(Ticket {
            conn: self.clone(),
            id,
            events,
            done: false,
        })
    }
}

/// A call in flight; dropping it before its reply cancels it on the far side.
pub(super) struct Ticket {
    conn: Arc<Conn>,
    pub(super) id: u64,
    events: mpsc::UnboundedReceiver<Event>,
    done: bool,
}

impl Ticket {
    /// The next event; `Err` when the connection is gone.
    pub(super) async fn next(&mut self) -> Result<Event, String> {
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
    pub(super) async fn reply(&mut self) -> Result<Reply, String> {
        loop {
            if let Event::Reply(reply) = self.next().await? {
                return Ok(reply);
            }
        }
    }

    pub(super) fn cancel(&self) {
        self.conn.control(ToServer::Cancel { id: self.id });
    }

    /// Sends a control message (it overtakes queued call data).
    pub(super) fn control(&self, message: ToServer) {
        self.conn.control(message);
    }

    /// Sends a message after the call data queued before it (in order with
    /// the call itself).
    pub(super) async fn send_in_order(&self, message: ToServer) -> Result<(), String> {
        self.conn
            .calls
            .send(message)
            .await
            .map_err(|_| self.conn.lost_message())
    }

    pub(super) fn credit(&self) {
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

/// Starts the transport, installs the far pith when needed and shakes hands.
pub(super) async fn open(options: &RemoteOptions) -> Result<Arc<Conn>, RemoteError> {
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
    // Larger pipe buffers: fewer wake-ups per MiB of a write's data or a
    // stream's chunks (best effort; the system may cap or refuse it).
    {
        use nix::fcntl::{FcntlArg, fcntl};
        use std::os::fd::AsFd;
        let _ = fcntl(stdin.as_fd(), FcntlArg::F_SETPIPE_SZ(1 << 20));
        let _ = fcntl(stdout.as_fd(), FcntlArg::F_SETPIPE_SZ(1 << 20));
    }
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
    let outgoing: Outgoing = Arc::new(tokio::sync::Mutex::new(Out {
        stdin: Some(stdin),
        writing: false,
    }));
    let torn = Arc::new(AtomicBool::new(false));
    tokio::spawn(write_loop(
        outgoing.clone(),
        torn.clone(),
        calls_rx,
        control_rx,
    ));
    let conn = Arc::new(Conn {
        remote: remote.clone(),
        calls,
        control,
        outgoing,
        torn,
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

/// Writes queued messages: control messages (credits, cancels) first. It
/// stops, closing the transport's stdin, when the connection is dropped or
/// a frame was torn (see [`Conn::send_data`]).
async fn write_loop(
    outgoing: Outgoing,
    torn: Arc<AtomicBool>,
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
        let mut out = outgoing.lock().await;
        let Some(stdin) = out.begin(&torn) else { break };
        let mut sent = wire::write_frame(stdin, &message).await.is_ok();
        if control.is_empty() && calls.is_empty() {
            sent = sent && stdin.flush().await.is_ok();
        }
        if !out.end(sent) {
            break;
        }
    }
    // Closing stdin ends the far side (and its incomplete writes).
    outgoing.lock().await.stdin = None;
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
            ToClient::Counted {
                id,
                bytes,
                newlines,
                after_last_newline,
                last_byte,
            } => (
                id,
                Event::Counted(crate::LineCount {
                    bytes,
                    newlines,
                    after_last_newline,
                    last_byte,
                }),
            ),
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
