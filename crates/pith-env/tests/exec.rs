//! The exec port with real processes: groups, tree kill, waits that never hang.
//! Run against LocalEnv here and, included by the pith crate's remote tests,
//! against a RemoteEnv (`super::port` says which).
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::ffi::OsString;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::port::{Env, env};
use pith_env::{
    CancellationToken, Exec, ExecError, ExecOutcome, ExecRequest, ExitStatus, OutputStream,
    Termination,
};

/// "Returns promptly" for a call whose processes would run 100 s: generous on a loaded
/// 2-core machine, and still far from the 100 s a hang would take.
const PROMPTLY: Duration = Duration::from_secs(15);

fn request(script: &str) -> ExecRequest {
    ExecRequest::new(
        "/bin/bash",
        vec![OsString::from("-c"), OsString::from(script)],
        std::env::temp_dir(),
    )
}

struct Ran {
    output: String,
    outcome: ExecOutcome,
    took: Duration,
}

async fn run_request(env: &Env, request: ExecRequest, cancel: CancellationToken) -> Ran {
    let mut output = Vec::new();
    let start = Instant::now();
    let mut sink = |_: OutputStream, bytes: &[u8]| output.extend_from_slice(bytes);
    let outcome = env.exec(request, &mut sink, cancel).await.unwrap();
    Ran {
        output: String::from_utf8(output).unwrap(),
        outcome,
        took: start.elapsed(),
    }
}

async fn run(env: &Env, script: &str, timeout: Option<f64>) -> Ran {
    let mut request = request(script);
    request.timeout = timeout.map(Duration::from_secs_f64);
    run_request(env, request, CancellationToken::new()).await
}

/// `(pid, pgrp, state)` of every process, from `/proc/*/stat`.
fn processes() -> Vec<(i32, i32, char)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: parse after the last ')'.
        let Some(rest) = stat.rfind(')').map(|at| &stat[at + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let state = fields[0].chars().next().unwrap_or('?');
        let pgrp = fields[2].parse().unwrap_or(0);
        all.push((pid, pgrp, state));
    }
    all
}

/// Processes of group `pgid` that are not zombies.
fn live_members(pgid: i32) -> Vec<i32> {
    processes()
        .into_iter()
        .filter(|&(_, pgrp, state)| pgrp == pgid && state != 'Z')
        .map(|(pid, _, _)| pid)
        .collect()
}

fn is_live(pid: i32) -> bool {
    processes()
        .into_iter()
        .any(|(other, _, state)| other == pid && state != 'Z')
}

/// Waits for a condition (a SIGKILLed process takes a moment to go); gives up
/// after 10 s, a bound only a broken kill reaches, even on a loaded machine.
async fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    condition()
}

fn first_line_number(output: &str) -> i32 {
    output.lines().next().unwrap().trim().parse().unwrap()
}

fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
}

#[tokio::test]
async fn background_sleep_does_not_hang_the_call_and_kill_all_reaches_it() {
    let env = env().await;
    let ran = run(&env, "sleep 100 & echo $!; echo started", None).await;
    assert!(ran.took < PROMPTLY, "took {:?}", ran.took);
    assert!(ran.output.ends_with("started\n"), "{:?}", ran.output);
    assert_eq!(ran.outcome.status, ExitStatus::Code(0));
    assert_eq!(ran.outcome.termination, Termination::Exited);
    let sleeper = first_line_number(&ran.output);
    assert!(
        is_live(sleeper),
        "the background sleep should outlive the call"
    );
    env.kill_all();
    assert!(
        eventually(|| !is_live(sleeper)).await,
        "kill_all left {sleeper} alive"
    );
}

#[tokio::test]
async fn nohup_background_job_does_not_hang_the_call() {
    let env = env().await;
    let ran = run(
        &env,
        "nohup sleep 100 >/dev/null 2>&1 & echo $!; echo started",
        None,
    )
    .await;
    assert!(ran.took < PROMPTLY, "took {:?}", ran.took);
    assert!(ran.output.ends_with("started\n"), "{:?}", ran.output);
    let sleeper = first_line_number(&ran.output);
    env.kill_all();
    assert!(eventually(|| !is_live(sleeper)).await);
}

#[tokio::test]
async fn daemon_in_its_own_session_holding_stdout_does_not_hang_the_call() {
    let env = env().await;
    // setsid -f forks into a new session: it escapes the group and keeps the pipes.
    let ran = run(
        &env,
        // The daemon's pid line comes first: the shell waits for the daemon's marker file.
        "m=$(mktemp -u); setsid -f bash -c \"echo \\$\\$; touch $m; exec sleep 100\"; \
         until [ -e $m ]; do sleep 0.01; done; rm $m; echo started",
        None,
    )
    .await;
    assert!(ran.took < PROMPTLY, "took {:?}", ran.took);
    assert!(ran.output.ends_with("started\n"), "{:?}", ran.output);
    let daemon = first_line_number(&ran.output);
    kill(daemon);
    assert!(eventually(|| !is_live(daemon)).await);
}

#[tokio::test]
async fn timeout_kills_the_whole_group_and_returns_promptly() {
    let env = env().await;
    let ran = run(&env, "echo $$; sleep 100; echo x", Some(1.0)).await;
    assert!(
        ran.took >= Duration::from_millis(900),
        "took {:?}",
        ran.took
    );
    assert!(ran.took < PROMPTLY, "took {:?}", ran.took);
    assert_eq!(ran.outcome.termination, Termination::TimedOut);
    assert!(!ran.output.contains('x'), "{:?}", ran.output);
    let pgid = first_line_number(&ran.output);
    assert!(
        eventually(|| live_members(pgid).is_empty()).await,
        "{:?}",
        live_members(pgid)
    );
}

#[tokio::test]
async fn timeout_kills_a_double_forked_grandchild() {
    let env = env().await;
    let ran = run(
        &env,
        "echo $$; (sleep 100 &); (bash -c 'sleep 100 &' &); sleep 100",
        Some(1.0),
    )
    .await;
    assert!(ran.took < PROMPTLY, "took {:?}", ran.took);
    assert_eq!(ran.outcome.termination, Termination::TimedOut);
    let pgid = first_line_number(&ran.output);
    assert!(
        eventually(|| live_members(pgid).is_empty()).await,
        "{:?}",
        live_members(pgid)
    );
}

#[tokio::test]
async fn timeout_kills_a_tree_that_ignores_sigterm() {
    let env = env().await;
    let ran = run(&env, "trap '' TERM; echo $$; sleep 100", Some(1.0)).await;
    assert!(ran.took < PROMPTLY, "took {:?}", ran.took);
    assert_eq!(ran.outcome.termination, Termination::TimedOut);
    assert_eq!(ran.outcome.status, ExitStatus::Signal(9));
    let pgid = first_line_number(&ran.output);
    assert!(
        eventually(|| live_members(pgid).is_empty()).await,
        "{:?}",
        live_members(pgid)
    );
}

/// Runs `script`; `on_output` runs once, when the first output arrives (explicit
/// synchronisation: the command is running).
async fn run_then(
    env: &Env,
    script: &str,
    cancel: CancellationToken,
    on_output: impl FnOnce() + Send,
) -> Ran {
    let mut output = Vec::new();
    let mut on_output = Some(on_output);
    let start = Instant::now();
    let mut sink = |_: OutputStream, bytes: &[u8]| {
        output.extend_from_slice(bytes);
        if let Some(action) = on_output.take() {
            action();
        }
    };
    let outcome = env.exec(request(script), &mut sink, cancel).await.unwrap();
    Ran {
        output: String::from_utf8(output).unwrap(),
        outcome,
        took: start.elapsed(),
    }
}

#[tokio::test]
async fn cancel_kills_the_tree() {
    let env = env().await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let script = "sleep 100 & echo $$; sleep 100";
    let ran = run_then(&env, script, cancel, move || trigger.cancel()).await;
    assert!(ran.took < PROMPTLY, "took {:?}", ran.took);
    assert_eq!(ran.outcome.termination, Termination::Cancelled);
    let pgid = first_line_number(&ran.output);
    assert!(
        eventually(|| live_members(pgid).is_empty()).await,
        "{:?}",
        live_members(pgid)
    );
}

#[tokio::test]
async fn kill_all_stops_a_running_command() {
    let env = Arc::new(env().await);
    let killer = env.clone();
    let started = Arc::new(tokio::sync::Notify::new());
    let notify = started.clone();
    tokio::spawn(async move {
        started.notified().await;
        killer.kill_all();
    });
    let script = "echo started; sleep 100";
    let ran = run_then(&env, script, CancellationToken::new(), move || {
        notify.notify_one()
    })
    .await;
    assert!(ran.took < PROMPTLY, "took {:?}", ran.took);
    assert_eq!(ran.outcome.status, ExitStatus::Signal(9));
}

#[tokio::test]
async fn exit_code_and_signal_are_reported() {
    let env = env().await;
    let ran = run(&env, "exit 3", None).await;
    assert_eq!(ran.outcome.status, ExitStatus::Code(3));
    let ran = run(&env, "kill -9 $$", None).await;
    assert_eq!(ran.outcome.status, ExitStatus::Signal(9));
    assert_eq!(ran.outcome.status.code(), 137);
}

#[tokio::test]
async fn stdout_and_stderr_arrive_in_order_and_stdin_is_empty() {
    let env = env().await;
    let dir = tempfile::tempdir().unwrap();
    // Explicit synchronisation instead of sleeps: the command writes its next line only
    // after the sink has received the previous one (the sink creates a file for it).
    let seen = |name: &str| dir.path().join(name);
    let script = format!(
        "cat; echo out; until [ -e {out} ]; do sleep 0.01; done; \
         echo err >&2; until [ -e {err} ]; do sleep 0.01; done; echo out2",
        out = seen("out").display(),
        err = seen("err").display(),
    );
    let mut chunks = Vec::new();
    let mut sink = |stream: OutputStream, bytes: &[u8]| {
        let name = if stream == OutputStream::Stdout {
            "out"
        } else {
            "err"
        };
        std::fs::write(seen(name), b"").unwrap();
        chunks.push((stream, bytes.to_vec()));
    };
    let mut request = request(&script);
    request.timeout = Some(Duration::from_secs(60));
    let outcome = env
        .exec(request, &mut sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, ExitStatus::Code(0));
    assert_eq!(
        chunks,
        vec![
            (OutputStream::Stdout, b"out\n".to_vec()),
            (OutputStream::Stderr, b"err\n".to_vec()),
            (OutputStream::Stdout, b"out2\n".to_vec()),
        ]
    );
}

#[tokio::test]
async fn output_after_the_idle_grace_is_dropped() {
    let env = env().await;
    // 3 s against the 100 ms grace: generous, and the call does not wait for it.
    let ran = run(&env, "(sleep 3; echo late) & echo early", None).await;
    assert_eq!(ran.output, "early\n");
    env.kill_all();
}

#[tokio::test]
async fn output_that_keeps_flowing_after_exit_is_read() {
    let env = env().await;
    let ran = run(
        &env,
        "(for i in 1 2 3 4 5; do sleep 0.02; echo $i; done) &",
        None,
    )
    .await;
    assert_eq!(ran.output, "1\n2\n3\n4\n5\n");
}

#[tokio::test]
async fn environment_variables_are_set_and_can_replace_the_inherited_ones() {
    let env = env().await;
    let mut with_env = request("echo \"$PITH_TEST_VAR ${HOME:-nohome}\"");
    with_env.env.push(("PITH_TEST_VAR".into(), "set".into()));
    let ran = run_request(&env, with_env.clone(), CancellationToken::new()).await;
    assert!(ran.output.starts_with("set "), "{:?}", ran.output);
    assert_ne!(ran.output, "set nohome\n");
    with_env.inherit_env = false;
    let ran = run_request(&env, with_env, CancellationToken::new()).await;
    assert_eq!(ran.output, "set nohome\n");
}

#[tokio::test]
async fn missing_cwd_and_missing_program_are_typed_errors() {
    let env = env().await;
    let mut sink = |_: OutputStream, _: &[u8]| {};
    let mut missing_cwd = request("true");
    missing_cwd.cwd = "/nonexistent/pith-dir".into();
    let error = env
        .exec(missing_cwd, &mut sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, ExecError::MissingCwd(ref path) if path.ends_with("pith-dir")));
    let missing_program = ExecRequest::new("/nonexistent/shell", vec![], std::env::temp_dir());
    let error = env
        .exec(missing_program, &mut sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, ExecError::ShellNotFound(_)), "{error:?}");
}

/// Issue 21, escape 8: where commands get a cgroup v2 leaf, an escapee that
/// cleared its environment (`env -i`) and left the group (`setsid -f`) dies at
/// the call's timeout, not only when pith exits. The escapee reports its pid.
#[tokio::test]
async fn a_scrubbed_escapee_dies_at_the_timeout() {
    let status = pith_env::SandboxStatus::probe();
    let leaves = status
        .guarantees(&pith_env::SandboxPolicy::off())
        .iter()
        .any(|g| g.id == "escapees-after-sigkill" && g.holds);
    if !leaves {
        return pith_testkit::skip(
            "a_scrubbed_escapee_dies_at_the_timeout",
            pith_testkit::Prerequisite::Cgroup2,
            "no writable cgroup v2 directory for a leaf per command",
        );
    }
    let env = env().await;
    let ran = run(
        &env,
        // The shell waits for the escapee's marker file: its pid line is out by then.
        "m=$(mktemp -u); env -i setsid -f sh -c \"echo \\$\\$; touch $m; exec sleep 100\"; \
         until [ -e $m ]; do sleep 0.01; done; rm $m; sleep 100",
        Some(1.0),
    )
    .await;
    assert_eq!(ran.outcome.termination, Termination::TimedOut);
    let escapee = first_line_number(&ran.output);
    let environ = std::fs::read(format!("/proc/{escapee}/environ")).unwrap_or_default();
    assert!(
        !String::from_utf8_lossy(&environ).contains("PITH_TREE_ID"),
        "the escapee kept the tree marker"
    );
    assert!(
        eventually(|| !is_live(escapee)).await,
        "the scrubbed escapee outlived the timeout"
    );
}

/// A sink that writes `input` to the command's stdin as soon as it gets the
/// handle, then drops the handle (closing a pipe) unless `keep` is set.
struct Feeding {
    output: Vec<u8>,
    input: &'static [u8],
    keep: Option<pith_env::ProcessInput>,
    keep_open: bool,
    got_handle: bool,
}

impl pith_env::OutputSink for Feeding {
    fn output(&mut self, _: OutputStream, bytes: &[u8]) {
        self.output.extend_from_slice(bytes);
    }

    fn input(&mut self, input: pith_env::ProcessInput) {
        self.got_handle = true;
        input.send(self.input).unwrap();
        if self.keep_open {
            self.keep = Some(input);
        }
    }
}

async fn feed(
    env: &Env,
    script: &str,
    stdin: pith_env::StdinMode,
    input: &'static [u8],
) -> Feeding {
    let mut sink = Feeding {
        output: Vec::new(),
        input,
        keep: None,
        keep_open: stdin == pith_env::StdinMode::Tty,
        got_handle: false,
    };
    let mut request = request(script);
    request.stdin = stdin;
    request.timeout = Some(Duration::from_secs(60));
    let outcome = env
        .exec(request, &mut sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.termination, Termination::Exited);
    assert_eq!(outcome.status, ExitStatus::Code(0));
    sink
}

#[tokio::test]
async fn pipe_input_reaches_the_command_and_dropping_the_handle_closes_it() {
    let env = env().await;
    let fed = feed(
        &env,
        "[ -t 0 ] && echo terminal; read -r line; echo \"got $line\"; cat; echo done",
        pith_env::StdinMode::Pipe,
        b"hello\nrest\n",
    )
    .await;
    assert!(fed.got_handle);
    assert_eq!(
        String::from_utf8_lossy(&fed.output),
        "got hello\nrest\ndone\n"
    );
}

#[tokio::test]
async fn a_tty_command_has_a_terminal_and_reads_its_input() {
    let env = env().await;
    let fed = feed(
        &env,
        "[ -t 0 ] && [ -t 1 ] && echo terminal; read -r line; echo \"got $line\"",
        pith_env::StdinMode::Tty,
        b"hi\n",
    )
    .await;
    assert!(fed.got_handle);
    let output = String::from_utf8_lossy(&fed.output).replace('\r', "");
    // The terminal echoes the input, perhaps before the first line.
    assert!(output.contains("terminal\n"), "{output:?}");
    assert!(output.contains("got hi\n"), "{output:?}");
}
