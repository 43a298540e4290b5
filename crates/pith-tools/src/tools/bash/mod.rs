//! `bash`: run a command in its own process group with bounded output.
//!
//! The command runs through the exec port (`context.env.exec`): a new process
//! group, stdin from `/dev/null`, the tree killed on timeout or cancel. Output
//! goes through [`output::OutputAccumulator`]: a streaming UTF-8 decoder, a
//! rolling tail in memory and, past 2000 lines or 50 KiB, the whole raw output
//! in a `pith-bash-<16 hex>.log` file.

mod decode;
mod job;
pub(crate) mod output;
mod shell;

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use pith_env::{
    ExecError, ExecOutcome, ExecRequest, OutputStream, SandboxMode, SandboxPolicy, Termination,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use self::output::{OutputAccumulator, Snapshot};
use super::{Describe, define};
use crate::details::{BashDetails, BashTruncation, OmittedLines};
use crate::messages::bash as messages;
use crate::tool::{
    Content, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, ToolOutput, ToolUpdate,
    UpdateFn, details_value,
};

/// Streaming updates are sent at most this often.
const UPDATE_INTERVAL: Duration = Duration::from_millis(100);
/// Prefix of the full-output file's name.
const LOG_PREFIX: &str = "pith-bash-";
/// Prefix of a background job's full log.
const LOG_PREFIX_JOB: &str = "pith-job-";

/// The environment every command gets unless the host's
/// [`BashConfig::env`] sets the variable otherwise: nothing waits for a
/// terminal, an editor, a pager or a prompt, and Python does not hold its
/// output back in a pipe.
pub const DEFAULT_ENV: &[(&str, &str)] = &[
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_EDITOR", "true"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
    ("PYTHONUNBUFFERED", "1"),
];

/// What is about to be spawned; a [`SpawnHook`] may rewrite it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpawnRequest {
    /// The command line given to the shell's `-c` (command prefix included).
    pub command: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// Variables set on top of the inherited environment (`PITH_SESSION_ID`, ...).
    pub env: Vec<(String, String)>,
}

/// Rewrites a [`SpawnRequest`] before the command is spawned.
pub type SpawnHook = Arc<dyn Fn(&mut SpawnRequest) + Send + Sync>;

/// Options of the `bash` tool.
#[derive(Clone)]
#[non_exhaustive]
pub struct BashConfig {
    /// The shell to run (must exist). Default: `/bin/bash`, `bash` on `PATH`, `sh`.
    pub shell: Option<PathBuf>,
    /// Lines run before every command (joined to it with a newline), e.g.
    /// `shopt -s expand_aliases`.
    pub command_prefix: Option<String>,
    /// Environment variables the host gives every command (e.g. `PITH_*` names).
    pub env: Vec<(String, String)>,
    /// Where full-output files go (created mode 0600). Default: the per-user
    /// private directory `$TMPDIR/pith-<uid>/` (mode 0700).
    pub spill_dir: PathBuf,
    /// Keep the full-output files when the session ends. Default: `false`, a
    /// session removes its files when its last clone is dropped (`pith call`
    /// and `pith batch` keep theirs: the caller reads them after pith exits).
    pub keep_output: bool,
    /// Rewrites command, working directory and environment before spawn.
    pub spawn_hook: Option<SpawnHook>,
    /// Running background jobs a session may hold (default
    /// [`DEFAULT_MAX_JOBS`](crate::jobs::DEFAULT_MAX_JOBS), 16).
    pub max_jobs: usize,
}

impl Default for BashConfig {
    fn default() -> BashConfig {
        BashConfig {
            shell: None,
            command_prefix: None,
            env: Vec::new(),
            spill_dir: pith_env::output_dir(),
            keep_output: false,
            spawn_hook: None,
            max_jobs: crate::jobs::DEFAULT_MAX_JOBS,
        }
    }
}

impl fmt::Debug for BashConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BashConfig")
            .field("shell", &self.shell)
            .field("command_prefix", &self.command_prefix)
            .field("env", &self.env)
            .field("spill_dir", &self.spill_dir)
            .field("keep_output", &self.keep_output)
            .field("max_jobs", &self.max_jobs)
            .field(
                "spawn_hook",
                &self.spawn_hook.as_ref().map(|_| "Fn(&mut SpawnRequest)"),
            )
            .finish()
    }
}

/// Arguments of `bash`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct BashArgs {
    /// Bash command to execute
    command: String,
    /// Timeout in seconds, greater than 0 (optional, no default timeout)
    #[schemars(extend("exclusiveMinimum" = 0))]
    timeout: Option<f64>,
    /// Start it as a background job and return at once with its job id (see the jobs tool)
    background: Option<bool>,
    /// Seconds: if still running after this long, return the output so far and a job id; it keeps running
    #[serde(rename = "yield")]
    #[schemars(rename = "yield", extend("exclusiveMinimum" = 0))]
    yield_after: Option<f64>,
    /// Run under a pseudo-terminal (REPLs, programs that insist on a terminal); the job accepts input
    tty: Option<bool>,
}

pub(crate) struct BashTool {
    definition: ToolDefinition,
}

impl BashTool {
    pub(crate) fn new() -> BashTool {
        BashTool {
            definition: define::<BashArgs>(Describe {
                name: "bash",
                title: "Run shell command",
                description: "Execute a bash command in the current working directory. Returns stdout and stderr. Past 2000 lines or 50KB, shows the head and the tail, with error lines from the middle, and saves the full output to a file. Optional timeout in seconds. background, yield or tty: runs as a job (see jobs). Stdin is empty without tty.",
                prompt_snippet: "Execute bash commands (ls, grep, find, etc.)",
                prompt_guidelines: &[],
                annotations: ToolAnnotations {
                    read_only: false,
                    destructive: true,
                    idempotent: false,
                    open_world: true,
                },
            }),
        }
    }
}

#[async_trait]
impl Tool for BashTool {
    type Args = BashArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// A timeout of 0 or below gets its own message rather than the schema's.
    fn precheck(&self, args: &Value) -> Result<(), ToolError> {
        match shell::nonpositive_timeout(args) {
            Some(message) => Err(ToolError::invalid(message)),
            None => Ok(()),
        }
    }

    async fn execute(
        &self,
        args: BashArgs,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let timeout = shell::timeout(args.timeout).map_err(ToolError::invalid)?;
        let config = &context.config.bash;
        let shell = shell::select(context.env.fs.as_ref(), config.shell.as_deref())
            .await
            .map_err(ToolError::new)?;
        if let Some(after) = args.yield_after
            && !(after.is_finite() && after > 0.0)
        {
            return Err(ToolError::invalid(messages::BAD_YIELD));
        }
        let tty = args.tty == Some(true);
        let background = args.background == Some(true);
        let command = args.command.clone();
        let spawn = spawn_request(args.command, context, tty);
        let mut request = ExecRequest::new(
            shell,
            vec![OsString::from("-c"), OsString::from(spawn.command)],
            spawn.cwd,
        );
        request.env = spawn
            .env
            .into_iter()
            .map(|(key, value)| (OsString::from(key), OsString::from(value)))
            .collect();
        request.timeout = timeout;
        request.sandbox = context.config.sandbox.clone();
        if background || tty || args.yield_after.is_some() {
            let mode = job::JobMode {
                background: background || (tty && args.yield_after.is_none()),
                yield_after: args.yield_after.map(Duration::from_secs_f64),
                tty,
            };
            return job::start(mode, &command, request, args.timeout, context, cancel).await;
        }
        let (outcome, snapshot) = run(context, request, cancel).await;
        let outcome = outcome.map_err(|error| {
            let mut message = exec_error_message(&error);
            if matches!(error, ExecError::Spawn { .. }) {
                let running = context
                    .session
                    .jobs()
                    .list()
                    .iter()
                    .filter(|job| job.end.is_none())
                    .count();
                if running > 0 {
                    message.push('\n');
                    message.push_str(&messages::jobs_running(running));
                }
            }
            ToolError::new(message)
        })?;
        let structured = structured(&outcome, &snapshot);
        match finish(outcome, &snapshot, args.timeout, &context.config.sandbox) {
            Ok(output) => Ok(output.with_structured(structured)),
            Err(error) => Err(error.with_structured(structured)),
        }
    }
}

/// Applies the command prefix, the environment (`PITH_SESSION_ID`, the
/// [`DEFAULT_ENV`], `TERM=dumb` under a pseudo-terminal, then the host's) and
/// the spawn hook.
fn spawn_request(command: String, context: &ToolContext, tty: bool) -> SpawnRequest {
    let config = &context.config.bash;
    let command = match config.command_prefix.as_deref() {
        Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
        _ => command,
    };
    let mut env = vec![(
        "PITH_SESSION_ID".to_owned(),
        context.session.id().to_owned(),
    )];
    for (key, value) in DEFAULT_ENV {
        if !config.env.iter().any(|(host, _)| host == key) {
            env.push(((*key).to_owned(), (*value).to_owned()));
        }
    }
    if tty && !config.env.iter().any(|(host, _)| host == "TERM") {
        env.push(("TERM".to_owned(), "dumb".to_owned()));
    }
    env.extend(config.env.iter().cloned());
    let mut spawn = SpawnRequest {
        command,
        cwd: context.cwd.clone(),
        env,
    };
    if let Some(hook) = &config.spawn_hook {
        hook(&mut spawn);
    }
    spawn
}

/// The accumulator and the update throttle, shared by the sink and the ticker.
struct Shared {
    output: OutputAccumulator,
    dirty: bool,
    last_update: Instant,
}

struct Progress {
    shared: Mutex<Shared>,
    updates: Option<UpdateFn>,
}

impl Progress {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends the current tail if something changed and (unless `force`) the
    /// last update is at least [`UPDATE_INTERVAL`] old.
    fn maybe_update(&self, shared: &mut Shared, force: bool) {
        let Some(updates) = &self.updates else {
            return;
        };
        if !shared.dirty || (!force && shared.last_update.elapsed() < UPDATE_INTERVAL) {
            return;
        }
        shared.dirty = false;
        shared.last_update = Instant::now();
        let snapshot = shared.output.snapshot(true);
        let details = details(&snapshot, None);
        updates(ToolUpdate {
            content: vec![Content::text(snapshot.content)],
            details: (!details.is_empty()).then(|| details_value(&details)),
        });
    }
}

/// Runs the request, streaming throttled updates; returns the outcome and the final snapshot.
async fn run(
    context: &ToolContext,
    request: ExecRequest,
    cancel: CancellationToken,
) -> (Result<ExecOutcome, ExecError>, Snapshot) {
    let exec = context.env.exec.clone();
    let spill_dir = context.config.bash.spill_dir.clone();
    let open_log = Box::new(move || exec.create_output_log(&spill_dir, LOG_PREFIX));
    let progress = Progress {
        shared: Mutex::new(Shared {
            output: OutputAccumulator::new(open_log),
            dirty: false,
            last_update: Instant::now(),
        }),
        updates: context.updates.clone(),
    };
    context.update(ToolUpdate {
        content: Vec::new(),
        details: None,
    });
    let mut sink = |_: OutputStream, bytes: &[u8]| {
        let mut shared = progress.lock();
        shared.output.push(bytes);
        shared.dirty = true;
        progress.maybe_update(&mut shared, false);
    };
    let ticker = async {
        if progress.updates.is_none() {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(UPDATE_INTERVAL).await;
            progress.maybe_update(&mut progress.lock(), false);
        }
    };
    let outcome = tokio::select! {
        outcome = context.env.exec.exec(request, &mut sink, cancel) => outcome,
        () = ticker => unreachable!("the ticker never ends"),
    };
    let mut shared = progress.lock();
    shared.output.finish();
    progress.maybe_update(&mut shared, true);
    let snapshot = shared.output.snapshot(true);
    if let Some(path) = &snapshot.full_output_path {
        context.session.record_output(path.clone());
    }
    (outcome, snapshot)
}

/// The result for a command that ran.
fn finish(
    outcome: ExecOutcome,
    snapshot: &Snapshot,
    timeout: Option<f64>,
    sandbox: &SandboxPolicy,
) -> Result<ToolOutput, ToolError> {
    let code = outcome.status.code();
    let details = details_value(&details(snapshot, Some(code)));
    let mut shown = snapshot.content.clone();
    if let Some(notice) = snapshot.notice() {
        shown.push_str("\n\n");
        shown.push_str(&notice);
    }
    let failure = match outcome.termination {
        Termination::Exited if code == 0 => None,
        Termination::Exited => Some(messages::exited(code)),
        Termination::TimedOut => Some(messages::timed_out(&shell::format_seconds(
            timeout.unwrap_or_default(),
        ))),
        Termination::Cancelled => Some(messages::ABORTED.to_owned()),
    };
    let empty = snapshot.content.is_empty() && !snapshot.is_cut();
    match failure {
        None if empty => Ok(ToolOutput::text(messages::NO_OUTPUT).with_details(details)),
        None => Ok(ToolOutput::text(shown).with_details(details)),
        Some(message) if outcome.termination == Termination::Exited => {
            let message = match sandbox_denial(&snapshot.content, sandbox) {
                Some(hint) => format!("{message}\n{hint}"),
                None => message,
            };
            let shown = if empty {
                messages::NO_OUTPUT.to_owned()
            } else {
                shown
            };
            Err(ToolError::new(format!("{shown}\n\n{message}")).with_details(details))
        }
        Some(message) if empty => Err(ToolError::new(message).with_details(details)),
        Some(message) => Err(ToolError::new(format!("{shown}\n\n{message}")).with_details(details)),
    }
}

/// What the output of a failed command shows when the sandbox refused something.
const DENIALS: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "EACCES",
    "EPERM",
    "EROFS",
];

/// One line for a failed command whose output shows a denial under an active
/// sandbox: that the sandbox may be the cause, where commands may write, and
/// how the user widens it.
fn sandbox_denial(output: &str, sandbox: &SandboxPolicy) -> Option<String> {
    if !sandbox.is_active() || !DENIALS.iter().any(|denial| output.contains(denial)) {
        return None;
    }
    let places: Vec<String> = sandbox
        .writable_places()
        .iter()
        .map(|dir| dir.display().to_string())
        .collect();
    let network = if sandbox.deny_network {
        "; network sockets are denied (--deny-network)"
    } else {
        ""
    };
    Some(match sandbox.mode {
        SandboxMode::ReadOnly => messages::denied_read_only(network),
        SandboxMode::WorkspaceWrite => {
            messages::denied_workspace_write(&places.join(", "), network)
        }
        SandboxMode::Off => messages::denied_network(network),
    })
}

/// The structured result: exit code, how it ended, whether the output was cut and where
/// the full output is.
fn structured(outcome: &ExecOutcome, snapshot: &Snapshot) -> Value {
    let mut structured = json!({
        "exitCode": outcome.status.code(),
        "timedOut": outcome.termination == Termination::TimedOut,
        "cancelled": outcome.termination == Termination::Cancelled,
        "truncated": snapshot.is_cut(),
    });
    if let Some(path) = &snapshot.full_output_path {
        structured["fullOutputPath"] = json!(path.display().to_string());
    }
    structured
}

/// `truncation`, `fullOutputPath` and `linesTruncated` when the output was cut, and `exitCode`.
pub(crate) fn details(snapshot: &Snapshot, exit_code: Option<i32>) -> BashDetails {
    BashDetails {
        truncation: snapshot.truncation.truncated.then(|| BashTruncation {
            truncation: snapshot.truncation.clone(),
            omitted_lines: snapshot.omitted.map(|(from, to)| OmittedLines { from, to }),
            signal_lines: snapshot
                .omitted
                .is_some()
                .then(|| snapshot.signal_lines.clone()),
        }),
        full_output_path: snapshot
            .full_output_path
            .as_ref()
            .map(|path| path.display().to_string()),
        lines_truncated: snapshot.lines_clipped.then_some(true),
        exit_code,
    }
}

fn exec_error_message(error: &ExecError) -> String {
    match error {
        ExecError::MissingCwd(cwd) => messages::missing_cwd(cwd.display()),
        ExecError::ShellNotFound(shell) => messages::shell_not_found(shell.display()),
        other => other.to_string(),
    }
}
