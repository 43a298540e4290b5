//! Background jobs, tty, yield, hang-proof defaults and head+tail output through
//! `pith batch`, driven one line at a time (each call waits for the previous result).
//!
//! Readiness is awaited through the tools themselves (`jobs output` with `wait` and
//! `until`), never by sleeping; long-lived commands carry unique markers
//! (`sleep 300.<pid><n>`) so the process checks see only this test's processes.
#![cfg(test)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

const PITH: &str = env!("CARGO_BIN_EXE_pith");
/// Only reached when something is wrong.
const PATIENCE: Duration = Duration::from_secs(10);

/// A `pith batch` fed one call at a time.
struct Batch {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Batch {
    fn start(dir: &Path, extra: &[&str]) -> Batch {
        let mut command = Command::new(PITH);
        command.arg("batch").arg("--cwd").arg(dir).args(extra);
        Batch::spawn(command, dir)
    }

    /// `pith batch` moved into a cgroup first (its `cgroup.procs` file).
    fn start_in_cgroup(dir: &Path, procs: &Path) -> Batch {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(r#"echo $$ > "$0" && exec "$1" batch --cwd "$2""#)
            .arg(procs)
            .arg(PITH)
            .arg(dir);
        Batch::spawn(command, dir)
    }

    fn spawn(mut command: Command, dir: &Path) -> Batch {
        let mut child = command
            .env("TMPDIR", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Batch {
            child,
            stdin,
            stdout,
            next: 1,
        }
    }

    /// Sends one call and returns its result line.
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let line = json!({"id": id, "tool": tool, "args": args}).to_string();
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut reply = String::new();
        self.stdout.read_line(&mut reply).unwrap();
        let reply: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    /// Sends several calls at once (the batch runs them concurrently) and
    /// returns their results in order.
    fn call_many(&mut self, calls: &[(&str, Value)]) -> Vec<Value> {
        let first = self.next;
        let stdin = self.stdin.as_mut().unwrap();
        for (tool, args) in calls {
            let line = json!({"id": self.next, "tool": tool, "args": args}).to_string();
            self.next += 1;
            writeln!(stdin, "{line}").unwrap();
        }
        stdin.flush().unwrap();
        (0..calls.len() as u64)
            .map(|offset| {
                let mut reply = String::new();
                self.stdout.read_line(&mut reply).unwrap();
                let reply: Value = serde_json::from_str(&reply).unwrap();
                assert_eq!(reply["id"], first + offset, "{reply}");
                reply
            })
            .collect()
    }

    /// Closes stdin (the batch ends) and waits for pith to exit.
    fn end(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn job_id(result: &Value) -> Value {
    let id = result["details"]["jobId"].clone();
    assert!(id.is_string(), "no job id: {result}");
    id
}

fn has_python() -> bool {
    Command::new("python3")
        .arg("-c")
        .arg("import http.server")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// A marker no other test uses: `300.<test pid>0<n>7` is a valid `sleep` argument.
fn marker() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("300.{}0{n}7", std::process::id())
}

/// Live `sleep <marker>` processes, and the wait (at most 10 s) for them to be
/// gone (the helpers of the sandbox escape tests).
use crate::sandbox_escapes::{sleeps, survivors};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_server_in_the_background_is_waited_for_fetched_and_killed() {
    if !has_python() {
        return pith_testkit::skip(
            "a_server_in_the_background_is_waited_for_fetched_and_killed",
            pith_testkit::Prerequisite::Python,
            "python3 with http.server is not installed",
        );
    }
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("page.html"), "hello from the job\n").unwrap();
    let port = free_port();
    let mut batch = Batch::start(dir.path(), &[]);
    let started = batch.call(
        "bash",
        json!({"command": format!("sleep 0.5; exec python3 -m http.server {port} --bind 127.0.0.1"), "background": true}),
    );
    assert_eq!(started["isError"], false, "{started}");
    let id = job_id(&started);
    let serving = batch.call(
        "jobs",
        json!({"action": "output", "id": id, "wait": 30, "until": "Serving HTTP"}),
    );
    assert!(text(&serving).contains("Serving HTTP"), "{serving}");
    assert_eq!(serving["details"]["state"], "running", "{serving}");
    let page = batch.call(
        "bash",
        json!({"command": format!("python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:{port}/page.html\").read().decode())'")}),
    );
    assert!(text(&page).contains("hello from the job"), "{page}");
    let killed = batch.call("jobs", json!({"action": "kill", "id": id}));
    assert_eq!(killed["details"]["state"], "killed", "{killed}");
    assert!(text(&killed).contains("GET /page.html"), "{killed}");
    // Nothing listens any more: a connection is refused.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    let list = batch.call("jobs", json!({"action": "list"}));
    assert_eq!(list["details"]["jobs"][0]["state"], "killed", "{list}");
    batch.end();
}

/// A child of the cgroup v1 pids controller with a `pids.max`, removed when
/// dropped (once its processes are gone).
struct PidsCgroup {
    dir: std::path::PathBuf,
}

impl PidsCgroup {
    fn new(max: u32) -> Option<PidsCgroup> {
        let dir =
            Path::new("/sys/fs/cgroup/pids").join(format!("pith-test-{}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let cgroup = PidsCgroup { dir };
        std::fs::write(cgroup.dir.join("pids.max"), max.to_string()).ok()?;
        Some(cgroup)
    }

    fn procs(&self) -> std::path::PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Tasks (processes and threads) in the cgroup now.
    fn current(&self) -> u32 {
        std::fs::read_to_string(self.dir.join("pids.current"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Waits (at most 20 s) until `ready` holds of the task count.
    fn wait_for(&self, what: &str, ready: impl Fn(u32) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ready(self.current()) {
            assert!(
                Instant::now() < deadline,
                "{what}: {} tasks",
                self.current()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::remove_dir(&self.dir).is_err() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A job that forks until the process limit refuses it (a fork bomb, bounded
/// here by a pids cgroup around pith) leaves pith answering: the file tools
/// still work, a command that cannot start says the limit is reached and that a
/// job is running, and killing the job frees the processes for the next command.
#[test]
fn a_job_that_uses_up_the_process_limit_leaves_pith_answering_and_says_how_to_recover() {
    const MAX: u32 = 64;
    let Some(cgroup) = PidsCgroup::new(MAX) else {
        return pith_testkit::skip(
            "a_job_that_uses_up_the_process_limit_leaves_pith_answering_and_says_how_to_recover",
            pith_testkit::Prerequisite::Pids,
            "no child of the cgroup v1 pids controller can be made here",
        );
    };
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let mut batch = Batch::start_in_cgroup(dir.path(), &cgroup.procs());
    // A pith that stops answering fails the test (its output ends) instead of
    // hanging the test run.
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let pid = batch.child.id();
    let watchdog = std::thread::spawn(move || {
        if watch.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
    });
    assert_eq!(
        text(&batch.call("read", json!({"path": "a.txt"}))),
        "hello\n"
    );
    let mark = marker();
    let bomb = batch.call(
        "bash",
        json!({"command": format!("while :; do sleep {mark} & done"), "background": true}),
    );
    let id = job_id(&bomb);
    cgroup.wait_for("the job fills the cgroup", |tasks| tasks >= MAX);

    // The file tools answer while no process can start.
    assert_eq!(
        text(&batch.call("read", json!({"path": "a.txt"}))),
        "hello\n"
    );
    let written = batch.call("write", json!({"path": "b.txt", "content": "new\n"}));
    assert_eq!(written["isError"], false, "{written}");
    let edited = batch.call(
        "edit",
        json!({"path": "b.txt", "edits": [{"oldText": "new", "newText": "edited"}]}),
    );
    assert_eq!(edited["isError"], false, "{edited}");
    let found = batch.call("grep", json!({"pattern": "edited"}));
    assert!(text(&found).contains("b.txt:1: edited"), "{found}");

    // A command cannot start, and says why and what to do.
    let refused = batch.call("bash", json!({"command": "echo started"}));
    assert_eq!(refused["isError"], true, "{refused}");
    let message = text(&refused);
    assert!(
        message.contains("the process limit is reached"),
        "{message}"
    );
    assert!(
        message.contains("1 background job is running (jobs list shows it; jobs kill ID ends one)"),
        "{message}"
    );

    let killed = batch.call("jobs", json!({"action": "kill", "id": id}));
    assert_eq!(killed["details"]["state"], "killed", "{killed}");
    cgroup.wait_for("the job's processes are gone", |tasks| tasks < MAX / 2);
    assert_eq!(survivors(&mark), Vec::<u32>::new());
    let ran = batch.call("bash", json!({"command": "echo started"}));
    assert_eq!(text(&ran), "started\n", "{ran}");
    batch.end();
    let _ = done.send(());
    watchdog.join().unwrap();
}

#[test]
fn a_python_repl_under_tty_answers_input() {
    if !has_python() {
        return pith_testkit::skip(
            "a_python_repl_under_tty_answers_input",
            pith_testkit::Prerequisite::Python,
            "python3 is not installed",
        );
    }
    python_repl_under_tty(&[]);
}

#[test]
fn a_python_repl_under_tty_answers_input_over_remote_env() {
    if !has_python() {
        return pith_testkit::skip(
            "a_python_repl_under_tty_answers_input_over_remote_env",
            pith_testkit::Prerequisite::Python,
            "python3 is not installed",
        );
    }
    python_repl_under_tty(&["--remote", "env", "--remote-pith", PITH]);
}

/// The REPL test with `extra` flags (`--remote env`: a far `pith serve` on this machine).
fn python_repl_under_tty(extra: &[&str]) {
    let dir = TempDir::new().unwrap();
    let mut batch = Batch::start(dir.path(), extra);
    let started = batch.call("bash", json!({"command": "python3 -q", "tty": true}));
    let id = job_id(&started);
    let sent = batch.call(
        "jobs",
        json!({"action": "input", "id": id, "text": "1+1\n"}),
    );
    assert_eq!(sent["isError"], false, "{sent}");
    let answer = batch.call(
        "jobs",
        json!({"action": "output", "id": id, "wait": 30, "until": "(?m)^2\\r?$"}),
    );
    let seen = format!("{}{}", text(&sent), text(&answer));
    assert!(seen.contains("\n2\r\n") || seen.contains("\n2\n"), "{seen}");
    // Quiet, with the prompt `>>> ` as its last line: probably waiting for input.
    let idle = batch.call("jobs", json!({"action": "output", "id": id, "wait": 1}));
    assert!(text(&idle).contains("probably waiting for input"), "{idle}");
    assert_eq!(idle["details"]["waitingForInput"], true, "{idle}");
    batch.end();
}

#[test]
fn yield_returns_a_job_whose_output_wait_returns_exit_0() {
    let dir = TempDir::new().unwrap();
    let mut batch = Batch::start(dir.path(), &[]);
    let yielded = batch.call(
        "bash",
        json!({"command": "echo begun; sleep 3; echo ended", "yield": 0.5}),
    );
    let id = job_id(&yielded);
    assert!(text(&yielded).contains("begun"), "{yielded}");
    let done = batch.call("jobs", json!({"action": "output", "id": id, "wait": 60}));
    assert_eq!(done["details"]["state"], "exited", "{done}");
    assert_eq!(done["details"]["exitCode"], 0, "{done}");
    assert!(text(&done).contains("ended"), "{done}");
    // A command that ends within its yield is a plain result: no job id.
    let quick = batch.call("bash", json!({"command": "echo quick", "yield": 30}));
    assert_eq!(text(&quick), "quick\n", "{quick}");
    assert!(quick["details"].get("jobId").is_none(), "{quick}");
    batch.end();
}

#[test]
fn input_reaches_a_read_prompt() {
    input_to_a_read_prompt(&[]);
}

#[test]
fn input_reaches_a_read_prompt_over_remote_env() {
    input_to_a_read_prompt(&["--remote", "env", "--remote-pith", PITH]);
}

fn input_to_a_read_prompt(extra: &[&str]) {
    let dir = TempDir::new().unwrap();
    let mut batch = Batch::start(dir.path(), extra);
    let started = batch.call(
        "bash",
        json!({"command": "read -r -p 'name? ' name; echo \"hello $name\"", "background": true}),
    );
    let id = job_id(&started);
    batch.call(
        "jobs",
        json!({"action": "input", "id": id, "text": "pith\n"}),
    );
    let done = batch.call("jobs", json!({"action": "output", "id": id, "wait": 30}));
    assert_eq!(done["details"]["exitCode"], 0, "{done}");
    // The log is read through the tools: over a remote it is on the far side,
    // written by messages that go ahead of this call on the connection.
    let log = batch.call("read", json!({"path": done["details"]["logPath"]}));
    assert_eq!(text(&log), "hello pith\n", "{log}");
    batch.end();
}

#[test]
fn a_job_that_ends_by_itself_is_announced_in_the_next_result() {
    let dir = TempDir::new().unwrap();
    let flag = dir.path().join("go");
    let mut batch = Batch::start(dir.path(), &[]);
    let started = batch.call(
        "bash",
        json!({"command": format!("until [ -e {} ]; do sleep 0.05; done; exit 3", flag.display()), "background": true}),
    );
    let id = job_id(&started);
    std::fs::write(&flag, "").unwrap();
    // The job's end is seen through the tool, not by sleeping: the list shows it.
    let deadline = Instant::now() + PATIENCE;
    let mut announced = String::new();
    while Instant::now() < deadline {
        let result = batch.call("ls", json!({"path": "."}));
        let shown = text(&result);
        if shown.contains("[job ") {
            announced = shown;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let expected = format!(
        "[job {} `until [ -e {}",
        id.as_str().unwrap(),
        flag.display()
    );
    assert!(announced.contains(&expected), "{announced}");
    assert!(
        announced.contains("exited with code 3; jobs output"),
        "{announced}"
    );
    // Once only.
    let again = batch.call("ls", json!({"path": "."}));
    assert!(!text(&again).contains("[job "), "{again}");
    batch.end();
}

#[test]
fn max_jobs_refuses_one_more_running_job() {
    let dir = TempDir::new().unwrap();
    let mark = marker();
    let mut batch = Batch::start(dir.path(), &["--max-jobs", "2"]);
    for _ in 0..2 {
        let started = batch.call(
            "bash",
            json!({"command": format!("sleep {mark}"), "background": true}),
        );
        assert_eq!(started["isError"], false, "{started}");
    }
    let refused = batch.call(
        "bash",
        json!({"command": format!("sleep {mark}"), "background": true}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text(&refused).contains("--max-jobs"), "{refused}");
    batch.end();
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}

/// Starts 50 jobs whose children escape their group (`setsid`, `nohup`, a double fork).
fn fifty_escaping_jobs(batch: &mut Batch, mark: &str) {
    let command = format!(
        "setsid sleep {mark} & nohup sleep {mark} >/dev/null 2>&1 & (sleep {mark} &); exec sleep {mark}"
    );
    let calls: Vec<(&str, Value)> = (0..50)
        .map(|_| ("bash", json!({"command": command, "background": true})))
        .collect();
    for started in batch.call_many(&calls) {
        assert_eq!(started["isError"], false, "{started}");
    }
    let deadline = Instant::now() + PATIENCE;
    while sleeps(mark).len() < 200 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(sleeps(mark).len(), 200);
}

#[test]
fn fifty_jobs_and_their_escapees_are_gone_when_the_batch_ends() {
    let dir = TempDir::new().unwrap();
    let mark = marker();
    let mut batch = Batch::start(dir.path(), &["--max-jobs", "50"]);
    fifty_escaping_jobs(&mut batch, &mark);
    batch.end();
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}

#[test]
fn fifty_jobs_and_their_escapees_are_gone_when_pith_is_sigkilled() {
    let dir = TempDir::new().unwrap();
    let mark = marker();
    let mut batch = Batch::start(dir.path(), &["--max-jobs", "50"]);
    fifty_escaping_jobs(&mut batch, &mark);
    batch.child.kill().unwrap();
    batch.child.wait().unwrap();
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}

#[test]
fn programs_that_want_a_terminal_or_input_fail_at_once() {
    let dir = TempDir::new().unwrap();
    let mut batch = Batch::start(dir.path(), &[]);
    let tty = batch.call("bash", json!({"command": "cat /dev/tty", "timeout": 60}));
    assert_eq!(tty["isError"], true, "{tty}");
    assert_eq!(tty["details"]["exitCode"], 1, "{tty}");
    if has_python() {
        let input = batch.call(
            "bash",
            json!({"command": "python3 -c 'input()'", "timeout": 60}),
        );
        assert!(text(&input).contains("EOFError"), "{input}");
        assert_eq!(input["details"]["exitCode"], 1, "{input}");
    }
    let git = Command::new("git").arg("--version").output();
    if git.is_ok_and(|output| output.status.success()) {
        let commit = batch.call(
            "bash",
            json!({"command": "git init -q . && git -c user.name=t -c user.email=t@t commit -q --allow-empty", "timeout": 60}),
        );
        assert_eq!(commit["isError"], true, "{commit}");
        assert!(text(&commit).contains("empty commit message"), "{commit}");
    } else {
        pith_testkit::skip(
            "programs_that_want_a_terminal_or_input_fail_at_once (git commit)",
            pith_testkit::Prerequisite::Other,
            "git is not installed",
        );
    }
    let env = batch.call(
        "bash",
        json!({"command": "echo $GIT_TERMINAL_PROMPT $GIT_EDITOR $PAGER $GIT_PAGER $DEBIAN_FRONTEND $PIP_NO_INPUT"}),
    );
    assert_eq!(text(&env), "0 true cat cat noninteractive 1\n", "{env}");
    batch.end();
    // The host overrides a default with --env.
    let mut batch = Batch::start(dir.path(), &["--env", "PAGER=more"]);
    let env = batch.call("bash", json!({"command": "echo $PAGER $GIT_PAGER"}));
    assert_eq!(text(&env), "more cat\n", "{env}");
    batch.end();
}

#[test]
fn head_and_tail_promote_the_error_line_with_its_number() {
    let dir = TempDir::new().unwrap();
    let mut batch = Batch::start(dir.path(), &[]);
    let result = batch.call(
        "bash",
        json!({"command": "seq 1 100000 | sed '50000s/.*/error: boom/'; exit 2"}),
    );
    let shown = text(&result);
    assert!(shown.starts_with("1\n2\n"), "{}", &shown[..40]);
    assert!(shown.contains("\n  50000: error: boom\n"), "{shown}");
    assert!(shown.contains("lines omitted (lines 501-"), "{shown}");
    assert!(shown.contains("\n100000\n"), "{shown}");
    // A failed command keeps every details field.
    let details = &result["details"];
    assert_eq!(result["isError"], true);
    assert_eq!(details["exitCode"], 2, "{details}");
    assert!(details["fullOutputPath"].is_string(), "{details}");
    assert_eq!(
        details["truncation"]["signalLines"],
        json!([50000]),
        "{details}"
    );
    assert_eq!(
        details["truncation"]["omittedLines"]["from"], 501,
        "{details}"
    );
    assert_eq!(details["truncation"]["totalLines"], 100_000, "{details}");
    batch.end();
}

/// Fragments that make a line a signal line (pith-text's list), and noise that contains none.
const SIGNAL_WORDS: [&str; 9] = [
    "error",
    "failed",
    "failure",
    "panicked",
    "traceback",
    "assert",
    "exception",
    "fatal",
    "segmentation fault",
];
const NOISE: [&str; 8] = ["lorem", "ipsum", "dolor", "sit", "amet", "é", "€", "12345"];

/// About `size` bytes of varied lines: multi-byte characters, an invalid byte
/// now and then, and a signal word in some case every 1,999 lines.
fn flood(size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 200);
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut number = 0u64;
    while out.len() < size {
        number += 1;
        let words = 3 + (seed >> 60) as usize;
        for index in 0..words {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            if index > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(NOISE[(seed >> 33) as usize % NOISE.len()].as_bytes());
        }
        if number % 1999 == 7 {
            let word = SIGNAL_WORDS[(number / 1999) as usize % SIGNAL_WORDS.len()];
            let word: String = match number % 3 {
                0 => word.to_owned(),
                1 => word.to_uppercase(),
                _ => word
                    .chars()
                    .enumerate()
                    .map(|(at, c)| {
                        if at % 2 == 0 {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        }
                    })
                    .collect(),
            };
            out.extend_from_slice(format!(" {word}: line {number}").as_bytes());
        }
        if number.is_multiple_of(777) {
            out.extend_from_slice(b" \xff\xfe");
        }
        out.push(b'\n');
    }
    out
}

/// 1-based numbers of the lines of `bytes` that hold a signal word, in any case.
fn signal_line_numbers(bytes: &[u8]) -> Vec<u64> {
    bytes
        .split(|&byte| byte == b'\n')
        .enumerate()
        .filter(|(_, line)| {
            let line = String::from_utf8_lossy(line).to_ascii_lowercase();
            SIGNAL_WORDS.iter().any(|word| line.contains(word))
        })
        .map(|(index, _)| index as u64 + 1)
        .collect()
}

/// The head+tail details of a result for `data`: every line counted, the
/// signal lines of the omitted middle (the first and last ten) promoted with
/// their numbers and counted in the marker.
fn check_flood_result(result: &Value, data: &[u8], details: &Value) {
    let truncation = &details["truncation"];
    let lines = data.iter().filter(|&&byte| byte == b'\n').count() as u64;
    assert_eq!(truncation["totalLines"], lines, "{truncation}");
    let from = truncation["omittedLines"]["from"].as_u64().unwrap();
    let to = truncation["omittedLines"]["to"].as_u64().unwrap();
    assert!(from > 1 && to > from + 50_000, "{truncation}");
    let omitted: Vec<u64> = signal_line_numbers(data)
        .into_iter()
        .filter(|number| (from..=to).contains(number))
        .collect();
    assert!(omitted.len() > 20, "{}", omitted.len());
    let promoted: Vec<u64> = omitted[..10]
        .iter()
        .chain(&omitted[omitted.len() - 10..])
        .copied()
        .collect();
    assert_eq!(truncation["signalLines"], json!(promoted), "{truncation}");
    let shown = text(result);
    assert!(
        shown.contains(&format!("… {} signal lines among them", omitted.len())),
        "{shown}"
    );
    let last = data[..data.len() - 1]
        .rsplit(|&byte| byte == b'\n')
        .next()
        .unwrap();
    assert!(
        shown.contains(&format!("{}\n", String::from_utf8_lossy(last))),
        "{shown}"
    );
}

#[test]
fn a_flood_of_output_keeps_every_byte_in_its_log_and_numbers_its_signal_lines() {
    let dir = TempDir::new().unwrap();
    // Past the point where a stream gets bigger reads and a bigger pipe, and
    // many times the size at which the kept tail is cut.
    let data = flood(8 << 20);
    let file = dir.path().join("flood.txt");
    std::fs::write(&file, &data).unwrap();
    let command = format!("cat '{}'", file.display());
    let mut batch = Batch::start(dir.path(), &[]);
    let logged = |path: &Value| {
        let bytes = std::fs::read(path.as_str().unwrap()).unwrap();
        assert!(
            bytes == data,
            "the log differs from the output ({} bytes)",
            bytes.len()
        );
    };
    // A plain command.
    let plain = batch.call("bash", json!({ "command": command }));
    check_flood_result(&plain, &data, &plain["details"]);
    logged(&plain["details"]["fullOutputPath"]);
    // The same through a job that ends within its yield: the job's own log.
    let yielded = batch.call("bash", json!({ "command": command, "yield": 300 }));
    check_flood_result(&yielded, &data, &yielded["details"]);
    logged(&yielded["details"]["fullOutputPath"]);
    // The same cut (only the log's name in the marker differs in length).
    for key in [
        "totalLines",
        "totalBytes",
        "outputLines",
        "omittedLines",
        "signalLines",
    ] {
        assert_eq!(
            yielded["details"]["truncation"][key], plain["details"]["truncation"][key],
            "{key}"
        );
    }
    // A background job's full log.
    let started = batch.call("bash", json!({ "command": command, "background": true }));
    let id = job_id(&started);
    let mut done = batch.call("jobs", json!({"action": "output", "id": id, "wait": 300}));
    while done["details"]["state"] == "running" {
        done = batch.call("jobs", json!({"action": "output", "id": id, "wait": 300}));
    }
    assert_eq!(done["details"]["state"], "exited", "{done}");
    logged(&done["details"]["logPath"]);
    batch.end();
}
