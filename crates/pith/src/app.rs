//! From the command line to an exit status: parse, validate, set up logging and the
//! runtime, dispatch, clean up.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use clap::Parser;
use pith_env::Env;
use tracing_subscriber::EnvFilter;

use crate::cli::{Cli, LogLevel};
use crate::config::{Command, Config, UsageError};
use crate::{batch, call, mcp_cmd, remote, signals, tools_cmd, undo_cmd};

/// Exit status for usage errors and failures that are not a tool's result.
const USAGE: i32 = 2;

/// Runs pith; returns the process exit status.
pub(crate) fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help and version to stdout, errors to stderr (status 2).
            let _ = error.print();
            return error.exit_code();
        }
    };
    let config = match Config::from_cli(cli) {
        Ok(config) => config,
        Err(error) => return report(&error.into()),
    };
    init_logging(config.log_level);
    // Orphans of the commands (`setsid -f`, double forks, scrubbed environments
    // included) re-parent to pith, which kills them with the rest at exit; old
    // full-output files (older than 24 hours, then the oldest beyond 2 GiB) are
    // pruned. Both only once a command starts (a batch of reads or a one-shot
    // find starts none), except where a child may start elsewhere first.
    let eager = starts_children_elsewhere(&config.command);
    if eager {
        if let Err(error) = pith_env::LocalEnv::become_subreaper() {
            tracing::warn!("cannot become a child subreaper: {error}");
        }
    } else {
        pith_env::LocalEnv::set_up_on_first_command();
    }

    // Blocking-pool threads, once started, stay (a year's keep-alive): when no
    // new thread can start (a command forking without end has used up the
    // process limit), a blocking task queues for one of them instead of
    // waiting for a thread that never comes (tokio only starts threads when a
    // task arrives, and stdin's reader holds one for good).
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_keep_alive(Duration::from_secs(365 * 24 * 60 * 60))
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return report(&error.into()),
    };
    reserve_blocking_threads(&runtime);
    if eager {
        pith_env::prune_output_dir(&pith_env::output_dir());
    }
    let local = Env::local();
    let outcome = runtime.block_on(async {
        // With --remote the tools run against the far side's ports.
        let (command, env) = remote::connect(config.command, &local).await?;
        signals::install(env.clone())?;
        let outcome = dispatch(command, &env).await;
        env.exec.kill_all();
        outcome
    });
    // Every process group a tool started dies with pith (nothing to do, and
    // no sweep of `/proc`, when no command was started).
    local.exec.kill_all();
    // A blocking stdin read cannot be cancelled: do not wait for it.
    runtime.shutdown_background();
    match outcome {
        Ok(code) => code,
        Err(error) => report(&error),
    }
}

/// Blocking-pool threads started up front (stdin's reader, in `batch` and
/// `mcp`, keeps one of them): with the long keep-alive they stay, so blocking
/// work (file system calls, a command's start) always has a thread even when
/// the system refuses new ones.
const RESERVED_BLOCKING_THREADS: usize = 3;

/// Starts [`RESERVED_BLOCKING_THREADS`] blocking-pool threads at once: each
/// task waits (at most 100 ms) until all have arrived, so each holds a thread
/// of its own. Best effort: a refused thread only means fewer in reserve.
fn reserve_blocking_threads(runtime: &tokio::runtime::Runtime) {
    let arrived = Arc::new((Mutex::new(0usize), Condvar::new()));
    let wait_for_all = |arrived: &(Mutex<usize>, Condvar)| {
        let (count, changed) = arrived;
        let guard = count.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = changed.wait_timeout_while(guard, Duration::from_millis(100), |count| {
            *count < RESERVED_BLOCKING_THREADS
        });
    };
    for _ in 0..RESERVED_BLOCKING_THREADS {
        let arrived = arrived.clone();
        let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runtime.spawn_blocking(move || {
                let (count, changed) = &*arrived;
                *count.lock().unwrap_or_else(PoisonError::into_inner) += 1;
                changed.notify_all();
                wait_for_all(&arrived);
            })
        }));
        if spawned.is_err() {
            return;
        }
    }
    // Not waited for here: the threads start on the other core while this
    // one goes on (the session, the first line); no command starts before
    // they are up (a command starts in milliseconds, a thread in microseconds),
    // and a task that finds them all waiting gets a thread of its own.
}

/// Whether a child process may start other than through the local
/// environment's exec (whose first command does the process set-up, see
/// [`pith_env::LocalEnv::set_up_on_first_command`]): the connection of
/// `--remote` (its ssh), or a host's own tools, which may spawn what they
/// like. Those keep the set-up at start.
fn starts_children_elsewhere(command: &Command) -> bool {
    let remote = match command {
        Command::Call(call) => call.workspace.remote.is_some(),
        Command::Batch(batch) => batch.workspace.remote.is_some(),
        Command::Mcp(workspace) => workspace.remote.is_some(),
        _ => false,
    };
    remote || !crate::extend::added_names().is_empty()
}

async fn dispatch(command: Command, env: &Env) -> anyhow::Result<i32> {
    match command {
        Command::Call(config) => call::run(config, env).await,
        Command::Batch(config) => {
            // On a worker, not this thread: the reading and the calls then share
            // the runtime's threads (one per core) instead of three threads
            // taking turns on two cores.
            let env = env.clone();
            tokio::spawn(async move { batch::run(config, &env).await }).await?
        }
        Command::Prompt(tools) => tools_cmd::prompt(&tools, env),
        Command::Tools(config) => tools_cmd::run(&config, env),
        Command::Mcp(workspace) => mcp_cmd::run(workspace, env).await,
        Command::Undo(config) => undo_cmd::run(config, env).await,
        Command::Serve => {
            // This machine's ports for a near pith, until it closes stdin.
            let local = std::sync::Arc::new(pith_env::LocalEnv::new());
            pith_env::remote::serve_stdio(local).await?;
            Ok(0)
        }
        Command::SandboxStatus(workspace, json) => {
            let mut stdout = std::io::stdout().lock();
            if json {
                writeln!(stdout, "{}", workspace.safety_json())?;
            } else {
                writeln!(stdout, "{}", workspace.describe_safety())?;
            }
            Ok(0)
        }
    }
}

/// Prints `error: ...` on one line and returns the usage exit status.
fn report(error: &anyhow::Error) -> i32 {
    let message = match error.downcast_ref::<UsageError>() {
        Some(usage) => usage.to_string(),
        None => format!("{error:#}"),
    };
    let _ = writeln!(std::io::stderr(), "error: {message}");
    USAGE
}

/// Logs go to stderr only (stdout may carry the MCP protocol). RUST_LOG wins over
/// `--log-level`.
fn init_logging(level: LogLevel) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level.directive()));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(filter)
        .try_init();
}
