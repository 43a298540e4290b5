//! Local processes: process groups, tree kill, a watchdog for pith's death, waiting
//! that never hangs.

// The cgroup v2 leaves are Linux's; elsewhere the same functions do nothing.
#[cfg_attr(not(target_os = "linux"), path = "cgroup_other.rs")]
mod cgroup;
mod escapees;
mod log;
mod table;
mod unix;
mod watchdog;

use std::io;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use nix::sys::signal::Signal;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

pub(crate) use cgroup::available as tree_cgroups_available;
pub use log::{OUTPUT_CAP, output_dir, prune_output_dir};
pub(crate) use table::ProcessTable;

use crate::{
    Exec, ExecError, ExecOutcome, ExecRequest, ExitStatus, LocalEnv, OutputLog, OutputSink,
    OutputStream, ProcessInput, StdinMode, Termination,
};

/// A pipe or pseudo-terminal end the output is read from.
type Reader = Box<dyn AsyncRead + Unpin + Send>;
/// Rows and columns of a command's pseudo-terminal.
const TTY_SIZE: (u16, u16) = (24, 120);

/// How long a killed tree gets between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(200);
/// After the shell exits, output is read for at most this long even while it
/// keeps flowing (a background `yes &` must not hang the call).
const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// Size of each pipe read. Larger reads were measured slower: what a read
/// brings in is written to the log, decoded and scanned while it is still in
/// the core's cache, and a 64 KiB chunk stays there.
const READ_SIZE: usize = 64 * 1024;
/// The capacity asked for the output pipes (the kernel's default is 64 KiB).
/// A command that prints fast then runs ahead by a few reads instead of
/// waiting for each one: bash printing 1 GiB with its log kept went from
/// 0.65x to 0.69x the throughput of `cat | cat` (best of twelve runs each,
/// docs/jobs.md). It is only capacity: the kernel allocates a pipe's pages
/// as they fill. Linux
/// counts every pipe's capacity against a per-user soft limit
/// (`/proc/sys/fs/pipe-user-pages-soft`, 64 MiB): 256 KiB keeps even fifty
/// jobs' pipes (25 MiB) under it.
const PIPE_SIZE: i32 = 256 * 1024;

impl LocalEnv {
    /// Makes this process a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`):
    /// orphaned descendants of the commands (a double-forked daemon) are
    /// re-parented to it instead of to PID 1.
    ///
    /// A subreaper must reap them: call [`LocalEnv::reap_orphans`] regularly
    /// (on `SIGCHLD` or a timer). Only do this when every child of the process
    /// is spawned through this adapter, or the reaper steals their exit status.
    pub fn become_subreaper() -> io::Result<()> {
        unix::set_child_subreaper()
    }

    /// Defers the process-wide set-up that only commands need to the first
    /// command this process starts through any `LocalEnv`: just before it is
    /// spawned, the process becomes a child subreaper
    /// ([`LocalEnv::become_subreaper`], a failure is logged) and old
    /// full-output files are pruned ([`prune_output_dir`] of [`output_dir`]).
    /// A process that never starts a command (one that only reads files)
    /// pays for neither, and its exit skips the sweep for orphans (there
    /// can be none). Call it once at start-up instead of doing both, when
    /// every child the process starts is spawned through this adapter.
    pub fn set_up_on_first_command() {
        SET_UP_ON_FIRST_COMMAND.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Whether [`LocalEnv::set_up_on_first_command`] was asked for.
static SET_UP_ON_FIRST_COMMAND: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Runs the deferred set-up of [`LocalEnv::set_up_on_first_command`], once
/// per process, before the first command is spawned (a no-op unless asked
/// for).
fn before_first_command() {
    static DONE: std::sync::Once = std::sync::Once::new();
    if !SET_UP_ON_FIRST_COMMAND.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    DONE.call_once(|| {
        if let Err(error) = unix::set_child_subreaper() {
            tracing::warn!("cannot become a child subreaper: {error}");
        }
        prune_output_dir(&output_dir());
    });
}

impl LocalEnv {
    /// Reaps exited children that this adapter is not waiting for (see
    /// [`LocalEnv::become_subreaper`]). Never blocks.
    pub fn reap_orphans(&self) {
        self.processes.reap_orphans();
    }
}

/// Runs commands on this machine.
///
/// - Each command gets a new session (`setsid`: its own process group and no
///   controlling terminal), stdin from `/dev/null` and piped stdout/stderr,
///   read concurrently in 64 KiB chunks, and no other descriptor of pith's
///   (close-on-exec from 3 up). On Linux the child also gets
///   `PR_SET_PDEATHSIG(SIGKILL)`, so the shell dies if pith is killed
///   outright, and then the request's sandbox.
/// - Timeout and cancel: SIGTERM to the group, then SIGKILL to the group as
///   soon as the shell has exited or after 200 ms, whichever comes first.
///   Pipes the killed tree left open are read for at most `idle_grace` more.
/// - After the shell exits, output is read while it flows; the wait ends after
///   `idle_grace` of silence, or 2 s after the exit whatever flows. The
///   timeout keeps applying until the call returns.
/// - Background members of a group outlive their call (as in a terminal) but
///   stay tracked: [`Exec::kill_all`] SIGKILLs every tracked group.
/// - A watchdog process (see `watchdog.rs`), started with the first command,
///   SIGKILLs every tracked group and marked escapee when this process dies,
///   SIGKILL included, or when the `LocalEnv` is dropped.
#[async_trait]
impl Exec for LocalEnv {
    async fn exec(
        &self,
        request: ExecRequest,
        sink: &mut dyn OutputSink,
        cancel: CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        match tokio::fs::metadata(&request.cwd).await {
            Ok(metadata) if metadata.is_dir() => {}
            _ => return Err(ExecError::MissingCwd(request.cwd)),
        }
        let mut command = Command::new(&request.program);
        command.args(&request.args).current_dir(&request.cwd);
        let pty = match request.stdin {
            StdinMode::Null => {
                command
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                None
            }
            StdinMode::Pipe => {
                command
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                None
            }
            StdinMode::Tty => Some(attach_pty(&mut command, &request.program)?),
        };
        if !request.inherit_env {
            command.env_clear();
        }
        command.envs(request.env.iter().map(|(key, value)| (key, value)));
        let tree = self.processes.trees.next();
        command.env(escapees::TREE_VAR, &tree);
        let sandbox = request.sandbox.prepare(&request.cwd)?;
        cgroup::enter_on_spawn(&mut command, &tree);
        unix::configure_child(&mut command, sandbox, pty.is_some());
        let spawned = self.processes.spawn(&mut command);
        // The command holds our copies of the terminal's slave side: closing
        // them lets the master read end of file once the command's tree is gone.
        drop(command);
        let (child, pgid) = spawned.map_err(|error| {
            cgroup::remove(&tree);
            spawn_error(error, &request.program)
        })?;
        let mut run = Run {
            guard: GroupGuard {
                table: &self.processes,
                pgid,
                tree,
                finished: false,
            },
            stdout: None,
            stderr: None,
            child,
        };
        let writer: Option<Box<dyn AsyncWrite + Unpin + Send>> = match pty {
            Some(master) => {
                let (read, write) = master.into_split();
                run.stdout = Some(Box::new(read));
                Some(Box::new(write))
            }
            None => {
                if let Some(out) = &run.child.stdout {
                    widen_pipe(out);
                }
                if let Some(err) = &run.child.stderr {
                    widen_pipe(err);
                }
                run.stdout = run.child.stdout.take().map(|out| Box::new(out) as Reader);
                run.stderr = run.child.stderr.take().map(|err| Box::new(err) as Reader);
                run.child
                    .stdin
                    .take()
                    .map(|stdin| Box::new(stdin) as Box<dyn AsyncWrite + Unpin + Send>)
            }
        };
        let _writer = writer.map(|writer| {
            let (input, receiver) = ProcessInput::channel();
            sink.input(input);
            AbortOnDrop(tokio::spawn(feed_input(writer, receiver)))
        });
        let outcome = run.wait(&request, sink, &cancel).await;
        run.guard.finished = true;
        outcome
    }

    fn kill_all(&self) {
        self.processes.kill_all();
    }

    fn create_output_log(&self, dir: &Path, prefix: &str) -> Result<Box<dyn OutputLog>, ExecError> {
        Ok(Box::new(log::LocalOutputLog::create(dir, prefix)?))
    }
}

impl LocalEnv {
    /// Creates the output log `path` (a new file, capped like the ones
    /// [`Exec::create_output_log`] makes): the far side of a remote
    /// environment, whose near side picked the name.
    pub(crate) fn create_output_log_at(
        &self,
        path: &Path,
    ) -> Result<Box<dyn OutputLog>, ExecError> {
        Ok(Box::new(log::LocalOutputLog::create_named(path)?))
    }
}

/// Opens a pseudo-terminal (`pty-process`) and makes its slave side the
/// command's stdin, stdout and stderr; returns the master.
fn attach_pty(command: &mut Command, program: &Path) -> Result<pty_process::Pty, ExecError> {
    let failed = |message: String| ExecError::Spawn {
        program: program.to_path_buf(),
        message: format!("cannot open a pseudo-terminal: {message}"),
    };
    let (master, slave) = pty_process::open().map_err(|error| failed(error.to_string()))?;
    master
        .resize(pty_process::Size::new(TTY_SIZE.0, TTY_SIZE.1))
        .map_err(|error| failed(error.to_string()))?;
    let mut ends = Vec::with_capacity(3);
    for _ in 0..3 {
        let end = std::os::fd::AsFd::as_fd(&slave)
            .try_clone_to_owned()
            .map_err(|error| failed(error.to_string()))?;
        ends.push(Stdio::from(end));
    }
    let (Some(stderr), Some(stdout), Some(stdin)) = (ends.pop(), ends.pop(), ends.pop()) else {
        return Err(failed("no descriptor".to_owned()));
    };
    command.stdin(stdin).stdout(stdout).stderr(stderr);
    Ok(master)
}

/// Writes queued input to the command's stdin, in order, until the command
/// closes it or every input handle is dropped.
async fn feed_input(
    mut writer: Box<dyn AsyncWrite + Unpin + Send>,
    mut receiver: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(bytes) = receiver.recv().await {
        if writer.write_all(&bytes).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
}

/// Aborts a task when dropped (the input feeder ends with its call).
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Why a spawn failed when the system refused a new process.
pub(crate) const PROCESS_LIMIT: &str =
    "the process limit is reached (too many processes are running; end some, then try again)";

fn spawn_error(error: io::Error, program: &Path) -> ExecError {
    if error.kind() == io::ErrorKind::NotFound {
        return ExecError::ShellNotFound(program.to_path_buf());
    }
    let message = match error.kind() {
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        // fork refused: RLIMIT_NPROC, a cgroup's pids.max or the system's pid
        // space is used up (a command forking without end, say).
        _ if error.raw_os_error() == Some(nix::errno::Errno::EAGAIN as i32) => {
            PROCESS_LIMIT.to_owned()
        }
        _ => error.to_string(),
    };
    ExecError::Spawn {
        program: program.to_path_buf(),
        message,
    }
}

/// Kills the group if the call is dropped before it finished, and hands the
/// group back to the table's bookkeeping either way.
struct GroupGuard<'a> {
    table: &'a ProcessTable,
    pgid: i32,
    /// The `PITH_TREE_ID` of the command's tree (see `escapees`).
    tree: String,
    finished: bool,
}

impl Drop for GroupGuard<'_> {
    fn drop(&mut self) {
        if !self.finished {
            unix::signal_group(self.pgid, Signal::SIGKILL);
            escapees::kill_escapees(&self.tree, self.pgid);
        }
        self.table.leader_done(self.pgid);
        cgroup::remove(&self.tree);
    }
}

/// A kill in progress.
#[derive(Clone, Copy)]
struct Kill {
    reason: Termination,
    /// When SIGKILL follows the SIGTERM, if not sent yet.
    escalate_at: Option<Instant>,
}

/// One running command.
struct Run<'a> {
    guard: GroupGuard<'a>,
    child: Child,
    stdout: Option<Reader>,
    stderr: Option<Reader>,
}

impl Run<'_> {
    async fn wait(
        &mut self,
        request: &ExecRequest,
        sink: &mut dyn OutputSink,
        cancel: &CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        let pgid = self.guard.pgid;
        let tree = self.guard.tree.as_str();
        let deadline = request
            .timeout
            .and_then(|timeout| Instant::now().checked_add(timeout));
        let mut stdout_buf = vec![0; READ_SIZE];
        let mut stderr_buf = vec![0; READ_SIZE];
        let mut status: Option<ExitStatus> = None;
        let mut kill: Option<Kill> = None;
        // Both set once the shell has exited.
        let mut idle_at: Option<Instant> = None;
        let mut drain_until: Option<Instant> = None;
        loop {
            if status.is_some() && self.stdout.is_none() && self.stderr.is_none() {
                break;
            }
            tokio::select! {
                biased;
                () = cancel.cancelled(), if kill.is_none() => {
                    kill = Some(start_kill(pgid, tree, Termination::Cancelled, status.is_some()));
                    settle_drain(&mut drain_until, status.is_some(), request);
                }
                () = sleep_opt(deadline), if kill.is_none() => {
                    kill = Some(start_kill(pgid, tree, Termination::TimedOut, status.is_some()));
                    settle_drain(&mut drain_until, status.is_some(), request);
                }
                () = sleep_opt(kill.and_then(|k| k.escalate_at)) => {
                    unix::signal_group(pgid, Signal::SIGKILL);
                    escapees::kill_escapees(tree, pgid);
                    kill = kill.map(|k| Kill { escalate_at: None, ..k });
                }
                exited = self.child.wait(), if status.is_none() => {
                    let exited = match exited {
                        Ok(exited) => exit_status(exited),
                        Err(error) => {
                            unix::signal_group(pgid, Signal::SIGKILL);
                            return Err(ExecError::Io(error.to_string()));
                        }
                    };
                    status = Some(exited);
                    let now = Instant::now();
                    idle_at = Some(now + request.idle_grace);
                    drain_until = Some(match kill {
                        Some(_) => now + request.idle_grace,
                        None => now + DRAIN_LIMIT,
                    });
                    if let Some(pending) = kill.filter(|k| k.escalate_at.is_some()) {
                        unix::signal_group(pgid, Signal::SIGKILL);
                        kill = Some(Kill { escalate_at: None, ..pending });
                    }
                }
                read = read_opt(&mut self.stdout, &mut stdout_buf) => {
                    if chunk(read, &mut self.stdout, &stdout_buf, OutputStream::Stdout, sink) {
                        idle_at = status.map(|_| Instant::now() + request.idle_grace);
                    }
                }
                read = read_opt(&mut self.stderr, &mut stderr_buf) => {
                    if chunk(read, &mut self.stderr, &stderr_buf, OutputStream::Stderr, sink) {
                        idle_at = status.map(|_| Instant::now() + request.idle_grace);
                    }
                }
                () = sleep_opt(idle_at) => break,
                () = sleep_opt(drain_until) => break,
            }
        }
        let status = status.unwrap_or(ExitStatus::Code(-1));
        let termination = kill.map_or(Termination::Exited, |k| k.reason);
        Ok(ExecOutcome {
            status,
            termination,
        })
    }
}

/// Starts killing the group: SIGTERM now and SIGKILL later, or SIGKILL at once
/// when the shell is already gone.
/// Processes that left the group (`setsid`) are SIGKILLed at once either way.
fn start_kill(pgid: i32, tree: &str, reason: Termination, shell_exited: bool) -> Kill {
    escapees::kill_escapees(tree, pgid);
    if shell_exited {
        unix::signal_group(pgid, Signal::SIGKILL);
        return Kill {
            reason,
            escalate_at: None,
        };
    }
    unix::signal_group(pgid, Signal::SIGTERM);
    Kill {
        reason,
        escalate_at: Some(Instant::now() + TERM_GRACE),
    }
}

/// A kill after the shell exited shortens the remaining drain to `idle_grace`.
fn settle_drain(drain_until: &mut Option<Instant>, shell_exited: bool, request: &ExecRequest) {
    if shell_exited {
        let limit = Instant::now() + request.idle_grace;
        *drain_until = drain_until.map(|until| until.min(limit));
    }
}

/// Hands a read chunk to the sink, or closes the pipe at end of file or on an
/// error. Returns whether data arrived.
fn chunk<R>(
    read: io::Result<usize>,
    pipe: &mut Option<R>,
    buf: &[u8],
    stream: OutputStream,
    sink: &mut dyn OutputSink,
) -> bool {
    match read {
        Ok(0) | Err(_) => {
            *pipe = None;
            false
        }
        Ok(n) => {
            sink.output(stream, buf.get(..n).unwrap_or_default());
            true
        }
    }
}

/// Asks for a [`PIPE_SIZE`] pipe; best effort (a lower ceiling or another
/// platform keeps the default).
fn widen_pipe(pipe: &impl std::os::fd::AsFd) {
    #[cfg(target_os = "linux")]
    let _ = nix::fcntl::fcntl(pipe, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_SIZE));
    #[cfg(not(target_os = "linux"))]
    let _ = (pipe, PIPE_SIZE);
}

async fn read_opt<R: AsyncReadExt + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(at) => sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn exit_status(status: std::process::ExitStatus) -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitStatus::Code(code),
        (None, Some(signal)) => ExitStatus::Signal(signal),
        (None, None) => ExitStatus::Code(-1),
    }
}
