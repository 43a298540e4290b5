//! The process port.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::{ExecError, SandboxPolicy};

/// Which pipe a chunk of output came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Receives output chunks in arrival order (stdout and stderr interleaved).
pub trait OutputSink: Send {
    /// Called for every chunk read from the child's pipes.
    fn output(&mut self, stream: OutputStream, bytes: &[u8]);

    /// Called once, right after the spawn, when the request asked for a
    /// writable stdin ([`StdinMode::Pipe`] or [`StdinMode::Tty`]) and the
    /// adapter provides one. Default: the input is dropped (stdin then reads
    /// end of file once the adapter notices).
    fn input(&mut self, input: ProcessInput) {
        drop(input);
    }
}

impl<F: FnMut(OutputStream, &[u8]) + Send> OutputSink for F {
    fn output(&mut self, stream: OutputStream, bytes: &[u8]) {
        self(stream, bytes)
    }
}

/// What a command's stdin is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StdinMode {
    /// `/dev/null`: a read sees end of file at once (the default; no command
    /// can hang waiting for input).
    #[default]
    Null,
    /// A pipe the caller writes through the [`ProcessInput`] handed to
    /// [`OutputSink::input`]. There is still no controlling terminal.
    Pipe,
    /// A pseudo-terminal: stdin, stdout and stderr are its slave side and it
    /// is the command's controlling terminal (output arrives as
    /// [`OutputStream::Stdout`]); input goes through the [`ProcessInput`].
    Tty,
}

/// Writes to a running command's stdin (a pipe or a pseudo-terminal).
///
/// Writes are queued and performed in order by the adapter, so a command that
/// does not read never blocks the writer. Dropping every clone closes the pipe
/// (a pseudo-terminal stays open until the command ends).
#[derive(Clone, Debug)]
pub struct ProcessInput {
    sender: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
}

impl ProcessInput {
    /// A handle and the receiving end an adapter drains into the stdin.
    pub fn channel() -> (ProcessInput, tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>) {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        (ProcessInput { sender }, receiver)
    }

    /// Queues `bytes` for the command's stdin. Fails once the command's stdin
    /// is closed (the command ended or closed it).
    pub fn send(&self, bytes: &[u8]) -> Result<(), ExecError> {
        self.sender
            .send(bytes.to_vec())
            .map_err(|_| ExecError::Io("the command's input is closed".to_owned()))
    }
}

/// A command to run.
#[derive(Clone, Debug)]
pub struct ExecRequest {
    /// The program (for the bash tool: the shell).
    pub program: PathBuf,
    /// Its arguments (for the bash tool: `-c`, the command).
    pub args: Vec<OsString>,
    /// Working directory; must exist.
    pub cwd: PathBuf,
    /// Environment variables set on top of the inherited environment
    /// (or instead of it when `inherit_env` is false).
    pub env: Vec<(OsString, OsString)>,
    /// Whether the child inherits this process's environment.
    pub inherit_env: bool,
    /// Kill the whole process tree after this long.
    pub timeout: Option<Duration>,
    /// After the main process exits, keep reading while output flows and stop
    /// after this much silence on pipes that descendants still hold.
    pub idle_grace: Duration,
    /// The OS sandbox to run the command in (default: none).
    pub sandbox: SandboxPolicy,
    /// What stdin is (default: `/dev/null`). Adapters that cannot provide a
    /// pipe or a pseudo-terminal refuse [`StdinMode::Tty`] with
    /// [`ExecError::Unsupported`]-like errors and may run [`StdinMode::Pipe`]
    /// requests with stdin at end of file (never calling [`OutputSink::input`]).
    pub stdin: StdinMode,
}

impl ExecRequest {
    /// A request to run `program` with `args` in `cwd`, inheriting the environment,
    /// with no timeout and a 100 ms idle grace.
    pub fn new(program: impl Into<PathBuf>, args: Vec<OsString>, cwd: impl Into<PathBuf>) -> Self {
        ExecRequest {
            program: program.into(),
            args,
            cwd: cwd.into(),
            env: Vec::new(),
            inherit_env: true,
            timeout: None,
            idle_grace: Duration::from_millis(100),
            sandbox: SandboxPolicy::off(),
            stdin: StdinMode::Null,
        }
    }
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

impl ExitStatus {
    /// The shell convention: the exit code, or 128 + the signal number.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Code(code) => code,
            ExitStatus::Signal(signal) => 128 + signal,
        }
    }

    /// Whether the process exited with code 0.
    pub fn success(self) -> bool {
        self == ExitStatus::Code(0)
    }
}

/// Why the wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// The process exited by itself.
    Exited,
    /// The timeout fired and the tree was killed.
    TimedOut,
    /// The cancellation token fired and the tree was killed.
    Cancelled,
}

/// The result of a command that ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecOutcome {
    /// Exit status of the main process.
    pub status: ExitStatus,
    /// Why the wait ended.
    pub termination: Termination,
}

/// A file that receives a command's full raw output (the bash tool's
/// full-output file), created by [`Exec::create_output_log`].
///
/// Writes are synchronous so that they apply backpressure to the reading of
/// the pipes inside an [`OutputSink`]; adapters keep them short (a local file
/// write lands in the page cache).
pub trait OutputLog: Send {
    /// Where the file is, as the environment's file system sees it.
    fn path(&self) -> &Path;

    /// Appends `bytes`. The error names the path.
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), ExecError>;
}

/// The process port.
///
/// Contract every adapter keeps:
/// - The command runs in a new process group with no controlling terminal
///   and stdin from `/dev/null` (unless the request asks for a pipe or a
///   pseudo-terminal, see [`StdinMode`]); stdout and stderr are pipes read
///   concurrently and handed to the sink in arrival order.
/// - On timeout or cancel the whole group is killed; the call then returns
///   promptly (it never waits on pipes a killed tree left open).
/// - After the main process exits, output is read until the pipes close or
///   stay silent for `idle_grace`; later output is dropped. Background
///   descendants holding the pipes never hang the call.
/// - Processes the adapter started are killed with their trees when the
///   adapter's owner shuts down ([`Exec::kill_all`]).
#[async_trait]
pub trait Exec: Send + Sync {
    /// Runs a command to completion, timeout or cancellation.
    async fn exec(
        &self,
        request: ExecRequest,
        sink: &mut dyn OutputSink,
        cancel: CancellationToken,
    ) -> Result<ExecOutcome, ExecError>;

    /// Kills every live process tree this adapter started (shutdown path).
    fn kill_all(&self);

    /// Creates a new file `<dir>/<prefix><16 random hex digits>.log` for a
    /// command's full output, on the machine the commands run on (so the
    /// environment's file system can read it back). Synchronous: callers may
    /// create it from inside an [`OutputSink`]. Default: unsupported.
    fn create_output_log(&self, dir: &Path, prefix: &str) -> Result<Box<dyn OutputLog>, ExecError> {
        let _ = (dir, prefix);
        Err(ExecError::Unsupported)
    }
}
