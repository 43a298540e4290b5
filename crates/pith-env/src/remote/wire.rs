//! The wire protocol of `pith serve --stdio`: message types and framing.
//!
//! Every message is one frame: a 4-byte big-endian length, then the message
//! encoded with `postcard`; bulk bytes (file data, output) are `serde_bytes`,
//! copied whole rather than element by element. Paths and OS strings travel as raw bytes (Unix
//! paths need not be UTF-8). The port types get wire twins here rather than
//! serde derives on the ports themselves, so the ports stay free of the
//! protocol and the protocol can be versioned on its own.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::{
    DirEntry, ExecError, ExecOutcome, ExecRequest, ExitStatus, FileKind, FindEntry, FindOutput,
    FindRequest, FsError, FsErrorKind, GrepLine, GrepOutput, GrepRequest, Metadata,
    SandboxFallback, SandboxMode, SandboxPolicy, SearchError, StdinMode, Termination,
};

/// The protocol version; both sides must speak the same one.
pub const PROTOCOL_VERSION: u32 = 3;

/// The largest frame either side accepts (a whole-file read or a search
/// result travels in one frame; writes and streams are chunked).
pub(crate) const MAX_FRAME: usize = 1 << 30;

/// How many bytes one stream chunk (file data, write data) carries at most.
pub(crate) const CHUNK: usize = 256 * 1024;

/// How many unacknowledged chunks a command's output may have in flight.
pub(crate) const WINDOW: u32 = 8;

/// How many bytes of a file stream the far side sends before the near side
/// says it wants more ([`ToServer::Want`]): the first page of a file
/// arrives with the open, and a small read costs no more.
pub(crate) const FIRST_WANT: u64 = 64 * 1024;

/// How many bytes of a file stream the near side lets be in flight at most
/// (its window starts at [`FIRST_WANT`] and doubles while it is read).
pub(crate) const MAX_WANT: u64 = 2 * 1024 * 1024;

/// A path as raw bytes.
pub(crate) type WPath = Vec<u8>;

pub(crate) fn wpath(path: &Path) -> WPath {
    path.as_os_str().as_bytes().to_vec()
}

pub(crate) fn path(bytes: WPath) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes))
}

pub(crate) fn wos(text: &OsStr) -> Vec<u8> {
    text.as_bytes().to_vec()
}

pub(crate) fn os(bytes: Vec<u8>) -> OsString {
    OsString::from_vec(bytes)
}

/// Messages from the near side (RemoteEnv) to the far side (`pith serve`).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum ToServer {
    /// The first message: who is asking, and the policy the far side enforces.
    Hello(ClientHello),
    /// Starts request `id`.
    Call { id: u64, call: Call },
    /// Body bytes of request `id` (the contents of a write).
    Data {
        id: u64,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// The near side consumed `chunks` more chunks of stream `id`.
    Credit { id: u64, chunks: u32 },
    /// Cancels request `id` (kills a command's tree, stops a search or stream).
    Cancel { id: u64 },
    /// Kills every process tree the far side started ([`crate::Exec::kill_all`]).
    KillAll,
    /// Creates the new file `path` as output log `log` (the near side picks
    /// the random name, so that [`crate::Exec::create_output_log`] can stay
    /// synchronous); no reply, a failure comes back as [`ToClient::LogError`].
    LogCreate { log: u64, path: WPath },
    /// Appends to output log `log`; no reply,
    /// a failure comes back as [`ToClient::LogError`].
    LogAppend {
        log: u64,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// Closes output log `log`.
    LogClose { log: u64 },
    /// The near side wants `bytes` more bytes of file stream `id` (an
    /// [`Call::Open`]); the far side sends at most what was wanted.
    Want { id: u64, bytes: u64 },
    /// After the bytes wanted so far, read past up to `max` bytes of file
    /// stream `id` counting their lines; answered by [`ToClient::Counted`].
    Count { id: u64, max: u64 },
    /// Bytes for the stdin (a pipe or a pseudo-terminal) of command `id`.
    Input {
        id: u64,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// Closes the stdin of command `id` (every input handle was dropped).
    CloseInput { id: u64 },
}

/// Messages from the far side to the near side.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum ToClient {
    /// The answer to [`ToServer::Hello`].
    Hello(ServerHello),
    /// The final answer to request `id`.
    Reply { id: u64, reply: Reply },
    /// A chunk of stream `id` (file bytes of `open`).
    Chunk {
        id: u64,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// Output of command `id`.
    Output {
        id: u64,
        stderr: bool,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// Writing to output log `log` failed.
    LogError { log: u64, message: String },
    /// The far side refuses the connection or hit a protocol error.
    Fatal { message: String },
    /// The answer to [`ToServer::Count`] on file stream `id`.
    Counted {
        id: u64,
        bytes: u64,
        newlines: u64,
        after_last_newline: u64,
        last_byte: Option<u8>,
    },
}

/// The near side's greeting.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ClientHello {
    pub(crate) protocol: u32,
    pub(crate) pith_version: String,
    pub(crate) policy: RemotePolicyWire,
}

/// The far side's greeting.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ServerHello {
    pub(crate) protocol: u32,
    pub(crate) pith_version: String,
    pub(crate) os: String,
    pub(crate) arch: String,
    pub(crate) home: Option<WPath>,
    pub(crate) landlock_abi: Option<i32>,
    /// Set when the far side refuses the policy (e.g. a root that does not exist there).
    pub(crate) refused: Option<String>,
    /// The working directory, resolved on the far side.
    pub(crate) cwd: WPath,
    /// The workspace roots, resolved on the far side.
    pub(crate) roots: Vec<WPath>,
    /// The sandbox every command runs in at least.
    pub(crate) sandbox: SandboxWire,
}

/// The policy in the handshake (see [`crate::remote::RemotePolicy`]); paths
/// as given, resolved by the far side.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct RemotePolicyWire {
    pub(crate) cwd: Option<WPath>,
    pub(crate) roots: Vec<WPath>,
    pub(crate) cwd_is_root: bool,
    pub(crate) protected: Vec<String>,
    pub(crate) contain_reads: bool,
    pub(crate) sandbox_mode: String,
    pub(crate) auto_sandbox: bool,
    pub(crate) deny_network: bool,
    pub(crate) run_unsandboxed: bool,
}

/// One port call. Adding a port method = one variant here, one arm in the
/// server's dispatcher, one forwarding method in the client.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Call {
    Read {
        path: WPath,
    },
    ReadRange {
        path: WPath,
        offset: u64,
        max_len: u64,
    },
    /// Streams the file as [`ToClient::Chunk`]s, [`FIRST_WANT`] bytes and
    /// then as many as the near side wants ([`ToServer::Want`]); ends with
    /// [`Reply::Unit`] at end of file.
    Open {
        path: WPath,
    },
    /// Followed by `len` bytes of [`ToServer::Data`]; the far side writes
    /// only once every byte arrived.
    WriteAtomic {
        path: WPath,
        len: u64,
    },
    Metadata {
        path: WPath,
    },
    SymlinkMetadata {
        path: WPath,
    },
    ReadDir {
        path: WPath,
    },
    Canonicalize {
        path: WPath,
    },
    CreateDirAll {
        path: WPath,
    },
    RemoveDir {
        path: WPath,
    },
    /// Streams output as [`ToClient::Output`], ends with [`Reply::Exec`].
    Exec(ExecWire),
    Grep(GrepWire),
    Find(FindWire),
    /// [`FileSystem::write_spliced`](crate::FileSystem::write_spliced) on the
    /// far side: only the changes cross the wire; ends with [`Reply::Unit`].
    WriteSpliced {
        path: WPath,
        splices: Vec<SpliceWire>,
    },
    /// [`FileSystem::remove_file`](crate::FileSystem::remove_file); ends with [`Reply::Unit`].
    RemoveFile {
        path: WPath,
    },
    /// `call` (a file-system or search call, or another `Confined`) run in
    /// a view confined beneath `view` on the far side: the far side opens the
    /// roots and resolves every path beneath them by directory handle, and
    /// judges writes by the view's rules there (protocol 2).
    Confined {
        view: ViewWire,
        call: Box<Call>,
    },
}

/// A [`Confinement`](crate::Confinement) on the wire: the roots (far
/// paths) and the write rules as compiled globs, so the far side builds the
/// same rules without judging the patterns again.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct ViewWire {
    roots: Vec<WPath>,
    /// `None`: no write rules (a read view); else the protect globs as
    /// (pattern as given, glob); `.git/` is always part of write rules.
    rules: Option<Vec<(String, String)>>,
}

impl From<&crate::Confinement> for ViewWire {
    fn from(confinement: &crate::Confinement) -> ViewWire {
        ViewWire {
            roots: confinement.roots.iter().map(|root| wpath(root)).collect(),
            rules: confinement.write_rules.as_ref().map(|rules| {
                rules
                    .globs()
                    .iter()
                    .map(|glob| (glob.pattern.clone(), glob.glob.clone()))
                    .collect()
            }),
        }
    }
}

impl ViewWire {
    /// The confinement; a glob that does not compile is refused.
    pub(crate) fn confinement(&self) -> Result<crate::Confinement, String> {
        let roots = self.roots.iter().cloned().map(path).collect();
        let write_rules = match &self.rules {
            None => None,
            Some(globs) => Some(crate::WriteRules::from_globs(
                globs
                    .iter()
                    .map(|(pattern, glob)| crate::ProtectGlob {
                        pattern: pattern.clone(),
                        glob: glob.clone(),
                    })
                    .collect(),
            )?),
        };
        Ok(crate::Confinement { roots, write_rules })
    }
}

/// One [`Splice`](crate::Splice) on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SpliceWire {
    start: u64,
    end: u64,
    #[serde(with = "serde_bytes")]
    bytes: Vec<u8>,
}

impl From<&crate::Splice> for SpliceWire {
    fn from(splice: &crate::Splice) -> SpliceWire {
        SpliceWire {
            start: splice.range.start,
            end: splice.range.end,
            bytes: splice.bytes.clone(),
        }
    }
}

impl From<SpliceWire> for crate::Splice {
    fn from(splice: SpliceWire) -> crate::Splice {
        crate::Splice {
            range: splice.start..splice.end,
            bytes: splice.bytes,
        }
    }
}

/// The final answer to a call.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    Unit,
    Bytes(#[serde(with = "serde_bytes")] Vec<u8>),
    Metadata(MetadataWire),
    Entries(Vec<(Vec<u8>, KindWire)>),
    Path(WPath),
    Exec(ExecOutcomeWire),
    Grep(GrepOutputWire),
    Find(FindOutputWire),
    FsError(FsErrorWire),
    ExecError(ExecErrorWire),
    SearchError(SearchErrorWire),
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) enum KindWire {
    File,
    Directory,
    Symlink,
    Other,
}

impl From<FileKind> for KindWire {
    fn from(kind: FileKind) -> KindWire {
        match kind {
            FileKind::File => KindWire::File,
            FileKind::Directory => KindWire::Directory,
            FileKind::Symlink => KindWire::Symlink,
            FileKind::Other => KindWire::Other,
        }
    }
}

impl From<KindWire> for FileKind {
    fn from(kind: KindWire) -> FileKind {
        match kind {
            KindWire::File => FileKind::File,
            KindWire::Directory => FileKind::Directory,
            KindWire::Symlink => FileKind::Symlink,
            KindWire::Other => FileKind::Other,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct MetadataWire {
    kind: KindWire,
    len: u64,
    /// Seconds and nanoseconds since the Unix epoch.
    modified: Option<(u64, u32)>,
    mode: Option<u32>,
    /// Seconds and nanoseconds since the Unix epoch.
    changed: Option<(u64, u32)>,
    /// Device and inode number.
    id: Option<(u64, u64)>,
}

impl From<Metadata> for MetadataWire {
    fn from(metadata: Metadata) -> MetadataWire {
        MetadataWire {
            kind: metadata.kind.into(),
            len: metadata.len,
            modified: metadata.modified.and_then(time_wire),
            mode: metadata.mode,
            changed: metadata.changed.and_then(time_wire),
            id: metadata.id.map(|id| (id.device, id.inode)),
        }
    }
}

impl From<MetadataWire> for Metadata {
    fn from(wire: MetadataWire) -> Metadata {
        Metadata {
            kind: wire.kind.into(),
            len: wire.len,
            modified: wire.modified.map(time_of_wire),
            mode: wire.mode,
            changed: wire.changed.map(time_of_wire),
            id: wire
                .id
                .map(|(device, inode)| crate::FileId { device, inode }),
        }
    }
}

/// A time as seconds and nanoseconds since the Unix epoch (`None` before it).
fn time_wire(time: SystemTime) -> Option<(u64, u32)> {
    let since = time.duration_since(UNIX_EPOCH).ok()?;
    Some((since.as_secs(), since.subsec_nanos()))
}

fn time_of_wire((secs, nanos): (u64, u32)) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::new(secs, nanos)
}

pub(crate) fn entries(entries: Vec<DirEntry>) -> Vec<(Vec<u8>, KindWire)> {
    entries
        .into_iter()
        .map(|entry| (wos(&entry.name), entry.kind.into()))
        .collect()
}

pub(crate) fn dir_entries(wire: Vec<(Vec<u8>, KindWire)>) -> Vec<DirEntry> {
    wire.into_iter()
        .map(|(name, kind)| DirEntry {
            name: os(name),
            kind: kind.into(),
        })
        .collect()
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct FsErrorWire {
    kind: String,
    path: WPath,
    detail: Option<String>,
}

const FS_KINDS: [FsErrorKind; 15] = [
    FsErrorKind::NotFound,
    FsErrorKind::PermissionDenied,
    FsErrorKind::NotADirectory,
    FsErrorKind::IsADirectory,
    FsErrorKind::AlreadyExists,
    FsErrorKind::SymlinkLoop,
    FsErrorKind::InvalidInput,
    FsErrorKind::NoSpace,
    FsErrorKind::ReadOnly,
    FsErrorKind::Unsupported,
    FsErrorKind::Cancelled,
    FsErrorKind::OutsideRoots,
    FsErrorKind::Protected,
    FsErrorKind::SpecialFile,
    FsErrorKind::Other,
];

impl From<FsError> for FsErrorWire {
    fn from(error: FsError) -> FsErrorWire {
        FsErrorWire {
            kind: error.kind.code().to_owned(),
            path: wpath(&error.path),
            detail: error.detail,
        }
    }
}

impl From<FsErrorWire> for FsError {
    fn from(wire: FsErrorWire) -> FsError {
        // Kinds travel by their stable code, so a newer far side's kind reads as `Other`.
        let kind = FS_KINDS
            .into_iter()
            .find(|kind| kind.code() == wire.kind)
            .unwrap_or(FsErrorKind::Other);
        FsError {
            kind,
            path: path(wire.path),
            detail: wire.detail,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum ExecErrorWire {
    MissingCwd(WPath),
    ShellNotFound(WPath),
    Spawn { program: WPath, message: String },
    Sandbox(String),
    Unsupported,
    Io(String),
}

impl From<ExecError> for ExecErrorWire {
    fn from(error: ExecError) -> ExecErrorWire {
        match error {
            ExecError::MissingCwd(dir) => ExecErrorWire::MissingCwd(wpath(&dir)),
            ExecError::ShellNotFound(program) => ExecErrorWire::ShellNotFound(wpath(&program)),
            ExecError::Spawn { program, message } => ExecErrorWire::Spawn {
                program: wpath(&program),
                message,
            },
            ExecError::Sandbox(message) => ExecErrorWire::Sandbox(message),
            ExecError::Unsupported => ExecErrorWire::Unsupported,
            ExecError::Io(message) | ExecError::NotSupported(message) => ExecErrorWire::Io(message),
        }
    }
}

impl From<ExecErrorWire> for ExecError {
    fn from(wire: ExecErrorWire) -> ExecError {
        match wire {
            ExecErrorWire::MissingCwd(dir) => ExecError::MissingCwd(path(dir)),
            ExecErrorWire::ShellNotFound(program) => ExecError::ShellNotFound(path(program)),
            ExecErrorWire::Spawn { program, message } => ExecError::Spawn {
                program: path(program),
                message,
            },
            ExecErrorWire::Sandbox(message) => ExecError::Sandbox(message),
            ExecErrorWire::Unsupported => ExecError::Unsupported,
            ExecErrorWire::Io(message) => ExecError::Io(message),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum SearchErrorWire {
    InvalidPattern(String),
    InvalidGlob(String),
    NotFound(WPath),
    Cancelled,
    Unsupported,
    Fs(FsErrorWire),
}

impl From<SearchError> for SearchErrorWire {
    fn from(error: SearchError) -> SearchErrorWire {
        match error {
            SearchError::InvalidPattern(message) => SearchErrorWire::InvalidPattern(message),
            SearchError::InvalidGlob(message) => SearchErrorWire::InvalidGlob(message),
            SearchError::NotFound(dir) => SearchErrorWire::NotFound(wpath(&dir)),
            SearchError::Cancelled => SearchErrorWire::Cancelled,
            SearchError::Unsupported => SearchErrorWire::Unsupported,
            SearchError::Fs(error) => SearchErrorWire::Fs(error.into()),
        }
    }
}

impl From<SearchErrorWire> for SearchError {
    fn from(wire: SearchErrorWire) -> SearchError {
        match wire {
            SearchErrorWire::InvalidPattern(message) => SearchError::InvalidPattern(message),
            SearchErrorWire::InvalidGlob(message) => SearchError::InvalidGlob(message),
            SearchErrorWire::NotFound(dir) => SearchError::NotFound(path(dir)),
            SearchErrorWire::Cancelled => SearchError::Cancelled,
            SearchErrorWire::Unsupported => SearchError::Unsupported,
            SearchErrorWire::Fs(error) => SearchError::Fs(error.into()),
        }
    }
}

/// The exec and search port mirrors live in their own module.
mod ports;
pub(crate) use self::ports::*;

/// `Data` frames framed by hand (no copy of a write's bytes).
mod data;
pub(crate) use self::data::*;

/// Writes one frame.
pub(crate) async fn write_frame<W: AsyncWrite + Unpin, T: Serialize>(
    writer: &mut W,
    message: &T,
) -> std::io::Result<()> {
    let body = postcard::to_stdvec(message)
        .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))?;
    let len = u32::try_from(body.len())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "frame too large"))?;
    writer.write_all(&len.to_be_bytes()).await?;
    writer.write_all(&body).await
}

/// Reads one frame; `Ok(None)` at a clean end of stream (between frames).
pub(crate) async fn read_frame<R: AsyncRead + Unpin, T: for<'de> Deserialize<'de>>(
    reader: &mut R,
) -> std::io::Result<Option<T>> {
    let mut len = [0_u8; 4];
    match reader.read_exact(&mut len).await {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("frame of {len} bytes exceeds the limit of {MAX_FRAME}"),
        ));
    }
    let mut body = vec![0_u8; len];
    reader.read_exact(&mut body).await?;
    postcard::from_bytes(&body)
        .map(Some)
        .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))
}
