//! The near side: [`RemoteEnv`] speaks the protocol to a `pith serve --stdio`
//! started through a transport command ([`conn`](super::conn)), reconnects
//! when the connection was lost, and forwards each port's calls.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::conn::{Conn, Event, Ticket, open};
use super::streams::{RemoteLog, RemoteReader};
use super::wire::{self, Call, Reply, ToServer, ViewWire, wpath};
use super::{RemoteError, RemoteInfo, RemoteOptions};
use crate::{
    DirEntry, Exec, ExecError, ExecOutcome, ExecRequest, FileReader, FileSystem, FindOutput,
    FindRequest, FsError, FsErrorKind, GrepOutput, GrepRequest, Metadata, OutputLog, OutputSink,
    OutputStream, ProcessInput, Search, SearchError, Splice,
};

/// How many times a call tries to reconnect a lost connection, and the first pause.
const RECONNECT_ATTEMPTS: u32 = 3;
const RECONNECT_FIRST_PAUSE: Duration = Duration::from_millis(100);

/// The file system, processes and search of another machine, reached through
/// a transport command that runs `pith serve --stdio` there (see the module docs).
///
/// Cheap to clone; clones share the connection. A lost connection fails the
/// calls in flight (naming the remote and the cause) and the next call
/// reconnects, trying a few times with growing pauses.
///
/// Its confined views ([`FileSystem::confine`], [`Search::confine`]) are
/// enforced by the far side: each call of a view travels wrapped in the view
/// (roots and write rules), and `pith serve` runs it through `LocalEnv`'s
/// view there, resolving beneath root handles it holds (see docs/remote.md).
#[derive(Clone)]
pub struct RemoteEnv {
    inner: Arc<Inner>,
    /// The confinements this handle is a view through, outermost first
    /// (empty: the far side's unconfined ports).
    views: Arc<[ViewWire]>,
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
            views: Arc::from(Vec::new()),
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
        let call = self.within_views(call);
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

    /// [`RemoteEnv::begin`] for a call whose data follows it straight from
    /// the caller's bytes ([`Conn::send_data`]).
    async fn begin_direct(&self, call: Call) -> Result<(Arc<Conn>, Ticket), String> {
        let call = self.within_views(call);
        let conn = self.conn().await?;
        match conn.start_direct(call.clone()).await {
            Ok(ticket) => Ok((conn, ticket)),
            Err(_) => {
                let conn = self.conn().await?;
                let ticket = conn.start_direct(call).await?;
                Ok((conn, ticket))
            }
        }
    }

    /// `call` wrapped in this handle's views (innermost closest to the call);
    /// commands are never wrapped (the sandbox confines them).
    fn within_views(&self, call: Call) -> Call {
        if matches!(call, Call::Exec(_)) {
            return call;
        }
        self.views
            .iter()
            .rev()
            .fold(call, |call, view| Call::Confined {
                view: view.clone(),
                call: Box::new(call),
            })
    }

    /// This handle seen through `confinement` as well.
    fn view(&self, confinement: &crate::Confinement) -> RemoteEnv {
        let mut views = self.views.to_vec();
        views.push(ViewWire::from(confinement));
        RemoteEnv {
            inner: self.inner.clone(),
            views: Arc::from(views),
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
        // As LocalEnv: a cancelled search is `Cancelled`, even one whose
        // results would arrive a moment later.
        if cancel.is_cancelled() {
            return Err(SearchError::Cancelled);
        }
        let (_, mut ticket) = self.begin(call).await.map_err(lost)?;
        loop {
            tokio::select! {
                event = ticket.next() => match event.map_err(lost)? {
                    Event::Reply(Reply::SearchError(error)) => return Err(error.into()),
                    Event::Reply(reply) => return Ok(reply),
                    _ => {}
                },
                // Dropping the ticket cancels the search on the far side.
                () = cancel.cancelled() => return Err(SearchError::Cancelled),
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
        match ticket.next().await.map_err(lost)? {
            Event::Chunk(bytes) => Ok(Box::new(RemoteReader::new(ticket, path, bytes))),
            Event::Reply(Reply::FsError(error)) => Err(error.into()),
            Event::Reply(_) => Ok(Box::new(RemoteReader::ended(path))),
            Event::Output(..) | Event::Counted(_) => Err(unexpected(path)),
        }
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        let lost = |message: String| FsError::new(FsErrorKind::Other, path).with_detail(message);
        let call = Call::WriteAtomic {
            path: wpath(path),
            len: contents.len() as u64,
        };
        let (conn, mut ticket) = self.begin_direct(call).await.map_err(lost)?;
        conn.send_data(ticket.id, contents).await.map_err(lost)?;
        match ticket.reply().await.map_err(lost)? {
            Reply::Unit => Ok(()),
            Reply::FsError(error) => Err(error.into()),
            _ => Err(unexpected(path)),
        }
    }

    /// Forwarded: the far side rewrites the file from its old bytes, and only
    /// the splices cross the wire (changes too large for one frame go the
    /// portable way: the whole file read, spliced here and written back).
    async fn write_spliced(&self, path: &Path, splices: &[Splice]) -> Result<(), FsError> {
        let size: usize = splices.iter().map(|splice| splice.bytes.len()).sum();
        if size > wire::MAX_FRAME / 2 {
            return crate::fs::write_spliced_portably(self, path, splices).await;
        }
        let call = Call::WriteSpliced {
            path: wpath(path),
            splices: splices.iter().map(Into::into).collect(),
        };
        match self.fs_call(call, path).await? {
            Reply::Unit => Ok(()),
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

    async fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        match self
            .fs_call(Call::RemoveFile { path: wpath(path) }, path)
            .await?
        {
            Reply::Unit => Ok(()),
            _ => Err(unexpected(path)),
        }
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.inner.info.home.clone()
    }

    /// A view enforced by the far side: its calls travel wrapped in the
    /// confinement, and `pith serve` resolves them beneath root handles there.
    fn confine(self: Arc<Self>, confinement: crate::Confinement) -> Arc<dyn FileSystem> {
        Arc::new(self.view(&confinement))
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
        let stdin = request.stdin;
        let (conn, mut ticket) = self
            .begin(Call::Exec((&request).into()))
            .await
            .map_err(ExecError::Io)?;
        // A pipe or a terminal: what the caller writes travels as `Input`
        // messages, in order after the call; dropping every handle closes it.
        let mut input = (stdin != crate::StdinMode::Null).then(|| {
            let (handle, receiver) = ProcessInput::channel();
            sink.input(handle);
            receiver
        });
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
                bytes = async { input.as_mut()?.recv().await }, if input.is_some() => {
                    let message = match bytes {
                        Some(bytes) => ToServer::Input { id: ticket.id, bytes },
                        None => {
                            input = None;
                            ToServer::CloseInput { id: ticket.id }
                        }
                    };
                    ticket.send_in_order(message).await.map_err(ExecError::Io)?;
                }
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

    /// A view enforced by the far side (see [`FileSystem::confine`] here).
    fn confine(self: Arc<Self>, confinement: crate::Confinement) -> Arc<dyn Search> {
        Arc::new(self.view(&confinement))
    }
}
