//! Reliability of the real binary, the fast parts (the long runs are in `scripts/soak`):
//! process bounds (11 process-tree shapes, each with a timeout and with a cancel),
//! bad input (`reliability/bad_input.rs`) and a memory bound.
//!
//! Every command carries a unique marker (`sleep 31<pid><nn>.<v>`); afterwards no
//! process whose command line holds the marker may be alive (checked through
//! `/proc/*/cmdline`). Measured times are printed (`--nocapture` shows them).
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

mod bad_input;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

const PITH: &str = env!("CARGO_BIN_EXE_pith");

/// Long enough for any answer on a loaded machine; only reached when something hangs.
const PATIENCE: Duration = Duration::from_secs(60);

/// The bound on returning after a timeout or cancel, on top of the 1 s: generous for a
/// loaded two-core CI machine, and still far from the 100+ s the shapes would run.
/// Measured times are printed.
const SLACK: Duration = Duration::from_secs(10);

/// A `pith mcp` spoken to in raw JSON-RPC lines.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Messages that were not the awaited response.
    pub(crate) others: Vec<Value>,
}

impl Server {
    /// Starts `pith mcp --cwd dir` and completes the handshake.
    pub(crate) fn start(dir: &TempDir) -> Server {
        let mut child = Command::new(PITH)
            .args(["mcp", "--cwd", dir.path().to_str().unwrap()])
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value =
                    serde_json::from_str(&line).unwrap_or_else(|_| json!({"non-json line": line}));
                if sender.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut server = Server {
            child,
            stdin,
            lines,
            others: Vec::new(),
        };
        let init = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "pith-reliability", "version": "0"},
        });
        server.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}));
        let response = server.response(&json!(0), PATIENCE).unwrap();
        assert!(response["result"].is_object(), "{response}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    pub(crate) fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn send(&mut self, message: &Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    /// The next response with this id (`None` after `limit`); other messages are kept.
    pub(crate) fn response(&mut self, id: &Value, limit: Duration) -> Option<Value> {
        self.response_to_any(std::slice::from_ref(id), limit)
    }

    /// The next response with one of these ids (`None` after `limit`).
    pub(crate) fn response_to_any(&mut self, ids: &[Value], limit: Duration) -> Option<Value> {
        let deadline = Instant::now() + limit;
        let wanted = |m: &Value| ids.iter().any(|id| is_response_to(m, id));
        if let Some(index) = self.others.iter().position(wanted) {
            return Some(self.others.remove(index));
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.lines.recv_timeout(left) {
                Ok(message) => message,
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
            };
            if wanted(&message) {
                return Some(message);
            }
            self.others.push(message);
        }
    }

    /// Sends a ping and asserts the answer.
    pub(crate) fn assert_alive(&mut self, id: i64, after: &str) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let response = self.response(&json!(id), PATIENCE);
        assert!(
            response.as_ref().is_some_and(|r| r["result"].is_object()),
            "no ping answer after {after}: {response:?}"
        );
    }
}

fn is_response_to(message: &Value, id: &Value) -> bool {
    message.get("id") == Some(id) && message.get("method").is_none()
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The pids of live processes whose command line contains `marker` (not this process).
fn marker_pids(marker: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if pid != me && cmdline.contains(marker) {
            pids.push(pid);
        }
    }
    pids
}

/// How many live processes run a `sleep` (`sleep`, `sleep-<marker>`) marked with `marker`.
fn marker_sleeps(marker: &str) -> usize {
    marker_pids(marker)
        .into_iter()
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let program = cmdline.split(|&byte| byte == 0).next().unwrap_or_default();
            let name = program
                .rsplit(|&byte| byte == b'/')
                .next()
                .unwrap_or_default();
            name.starts_with(b"sleep")
        })
        .count()
}

/// Waits up to `limit` for every marked process to be gone; returns the survivors
/// (after killing them, by pid, so that one failure does not leak processes).
fn survivors(marker: &str, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let pids = marker_pids(marker);
        if pids.is_empty() {
            return Vec::new();
        }
        if Instant::now() >= deadline {
            let described = pids
                .iter()
                .map(|pid| {
                    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    format!("{pid} {}", String::from_utf8_lossy(&cmd).replace('\0', " "))
                })
                .collect();
            for pid in pids {
                // SAFETY: kill with a pid we found and a valid signal number.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            return described;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// A process-tree shape: its name and its command for a marker.
struct Shape {
    name: &'static str,
    command: fn(&str) -> String,
    /// How many marked `sleep` processes run once the shape is fully started.
    sleeps: usize,
}

/// The shapes. Each keeps its foreground busy, so the timeout or the cancel is
/// what ends it; every process it starts carries the marker in its command line.
const SHAPES: [Shape; 11] = [
    Shape {
        name: "background job",
        command: |m| format!("sleep {m} & wait"),
        sleeps: 1,
    },
    Shape {
        name: "nohup",
        command: |m| format!("nohup sleep {m} >/dev/null 2>&1 & wait"),
        sleeps: 1,
    },
    Shape {
        name: "double fork",
        command: |m| format!("(sleep {m} &); sleep {m}"),
        sleeps: 2,
    },
    Shape {
        name: "setsid escapee (child of the shell)",
        command: |m| format!("setsid sleep {m} & sleep {m}"),
        sleeps: 2,
    },
    Shape {
        name: "setsid escapee (forked, orphaned)",
        command: |m| format!("setsid -f sleep {m}; sleep {m}"),
        sleeps: 2,
    },
    Shape {
        name: "trap \"\" TERM",
        command: |m| format!("trap '' TERM; sleep {m}"),
        sleeps: 1,
    },
    Shape {
        // Root is not bound by RLIMIT_NPROC, so the loop is bounded by itself.
        name: "fork loop capped by ulimit -u",
        command: |m| {
            format!("ulimit -u 512 2>/dev/null; for i in $(seq 30); do sleep {m} & done; wait")
        },
        sleeps: 30,
    },
    Shape {
        name: "daemon holding stdout",
        command: |m| {
            format!(
                "nohup sh -c 'trap \"\" HUP TERM INT; while :; do sleep {m}; done' & \
                 echo started; sleep {m}"
            )
        },
        sleeps: 2,
    },
    Shape {
        name: "endless output",
        command: |m| format!("while :; do echo {m}; done"),
        sleeps: 0,
    },
    Shape {
        name: "read from stdin",
        command: |m| format!("read line; cat; sleep {m}"),
        sleeps: 1,
    },
    Shape {
        name: "sleep infinity",
        command: |m| format!("exec -a sleep-{m} sleep infinity"),
        sleeps: 1,
    },
];

/// A marker unique to this test process, shape and variant.
fn marker(shape: usize, variant: u32) -> String {
    format!("31{}{shape:02}.{variant}", std::process::id() % 10_000)
}

/// Removes a full-output file a result points to (endless output spills one).
fn remove_full_output(result: &Value) {
    let details = result
        .get("details")
        .or_else(|| result.get("_meta").and_then(|m| m.get("pith/details")));
    if let Some(path) = details
        .and_then(|d| d.get("fullOutputPath"))
        .and_then(Value::as_str)
    {
        let _ = std::fs::remove_file(path);
    }
}

/// `pith call bash` with `"timeout": 1`, all shapes at once (one process each).
#[test]
fn every_process_shape_ends_within_its_timeout_through_pith_call() {
    let dir = TempDir::new().unwrap();
    let runs: Vec<_> = SHAPES
        .iter()
        .enumerate()
        .map(|(index, shape)| {
            let marker = marker(index, 1);
            let args = json!({"command": (shape.command)(&marker), "timeout": 1});
            let cwd = dir.path().to_path_buf();
            let handle = std::thread::spawn(move || {
                let start = Instant::now();
                let mut child = Command::new(PITH)
                    .args(["call", "--json", "bash", "-"])
                    .current_dir(&cwd)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                // The arguments go through stdin, so pith's own command line has no marker.
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(args.to_string().as_bytes())
                    .unwrap();
                let mut out = String::new();
                child
                    .stdout
                    .take()
                    .unwrap()
                    .read_to_string(&mut out)
                    .unwrap();
                child.wait().unwrap();
                (start.elapsed(), out)
            });
            (shape.name, marker, handle)
        })
        .collect();
    let mut failures = Vec::new();
    for (name, marker, handle) in runs {
        let (elapsed, out) = handle.join().unwrap();
        let result: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        remove_full_output(&result);
        let left = survivors(&marker, Duration::from_secs(2));
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        eprintln!("timeout 1 s | {name:38} | returned in {elapsed:.2?} | survivors {left:?}");
        if elapsed > Duration::from_secs(1) + SLACK {
            failures.push(format!("{name}: returned after {elapsed:?}"));
        }
        if !text.contains("timed out after 1 second") {
            failures.push(format!("{name}: not a timeout: {}", truncate(text)));
        }
        if !left.is_empty() {
            failures.push(format!("{name}: left {left:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `pith mcp`: every shape with `"timeout": 1`, concurrently on one server that stays
/// up, so the processes must die with the call, not with pith.
#[test]
fn every_process_shape_ends_within_its_timeout_through_mcp() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let start = Instant::now();
    for (index, shape) in SHAPES.iter().enumerate() {
        let arguments = json!({"command": (shape.command)(&marker(index, 2)), "timeout": 1});
        server.send(&json!({
            "jsonrpc": "2.0", "id": index + 1, "method": "tools/call",
            "params": {"name": "bash", "arguments": arguments},
        }));
    }
    let mut failures = Vec::new();
    for (index, shape) in SHAPES.iter().enumerate() {
        let response = server.response(&json!(index + 1), PATIENCE);
        let elapsed = start.elapsed();
        let result = response.map(|r| r["result"].clone()).unwrap_or(Value::Null);
        remove_full_output(&result);
        // Checked at once: the server is still running, so only the call's own kill counts.
        let left = survivors(&marker(index, 2), Duration::from_secs(5));
        let name = shape.name;
        eprintln!("mcp timeout 1 s | {name:38} | returned by {elapsed:.2?} | survivors {left:?}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if elapsed > Duration::from_secs(1) + SLACK {
            failures.push(format!("{name}: returned after {elapsed:?}"));
        }
        if !text.contains("timed out after 1 second") {
            failures.push(format!("{name}: not a timeout: {}", truncate(text)));
        }
        if !left.is_empty() {
            failures.push(format!("{name}: left {left:?}"));
        }
    }
    server.assert_alive(1000, "the timeouts");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `pith mcp` + `notifications/cancelled`: every shape, concurrently on one server.
#[test]
fn every_process_shape_ends_when_its_call_is_cancelled_through_mcp() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    for (index, shape) in SHAPES.iter().enumerate() {
        let arguments = json!({"command": (shape.command)(&marker(index, 3))});
        server.send(&json!({
            "jsonrpc": "2.0", "id": index + 1, "method": "tools/call",
            "params": {"name": "bash", "arguments": arguments},
        }));
    }
    // Every shape is running (its marker is in the shell's command line).
    let deadline = Instant::now() + PATIENCE;
    for (index, shape) in SHAPES.iter().enumerate() {
        while marker_pids(&marker(index, 3)).is_empty() {
            assert!(Instant::now() < deadline, "{} never started", shape.name);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // And so is every process inside it (setsid -f, the loop): its sleeps run.
    for (index, shape) in SHAPES.iter().enumerate() {
        while marker_sleeps(&marker(index, 3)) < shape.sleeps {
            assert!(
                Instant::now() < deadline,
                "{} never fully started",
                shape.name
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let mut failures = Vec::new();
    for (index, shape) in SHAPES.iter().enumerate() {
        let marker = marker(index, 3);
        let start = Instant::now();
        server.send(&json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": index + 1, "reason": "reliability test"},
        }));
        let gone_in = wait_gone(&marker, Duration::from_secs(1) + SLACK);
        let left = survivors(&marker, Duration::ZERO);
        let name = shape.name;
        eprintln!("mcp cancel | {name:38} | gone in {gone_in:.2?} | survivors {left:?}");
        if !left.is_empty() {
            failures.push(format!(
                "{name}: left {left:?} {:.2?} after the cancel",
                start.elapsed()
            ));
        }
    }
    server.assert_alive(1000, "the cancels");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How long until no marked process is left (capped at `limit`).
fn wait_gone(marker: &str, limit: Duration) -> Duration {
    let start = Instant::now();
    while start.elapsed() < limit && !marker_pids(marker).is_empty() {
        std::thread::sleep(Duration::from_millis(10));
    }
    start.elapsed()
}

fn truncate(text: &str) -> String {
    text.chars().take(300).collect()
}

/// Runs `pith` with `args` in `cwd`; returns stdout and the peak RSS in KiB: the
/// largest `VmHWM` read from `/proc/<pid>/status` every 2 ms until the process exits.
/// (Not `wait4`'s `ru_maxrss`: it keeps the RSS of the forked copy of this test
/// process from before the exec, hundreds of MiB while other tests run.)
fn run_measured(args: &[&str], cwd: &std::path::Path) -> (String, u64) {
    let mut child = Command::new(PITH)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status_path = format!("/proc/{}/status", child.id());
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        stdout.read_to_string(&mut out).unwrap();
        out
    });
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(status) = std::fs::read_to_string(&status_path)
            && let Some(kib) = status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        {
            peak = peak.max(kib);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    (reader.join().unwrap(), peak)
}

/// 1,000,000 matching lines and `limit` 10: pith stays under 64 MiB.
#[test]
fn grep_with_a_million_matches_and_a_limit_stays_under_64_mib() {
    let dir = TempDir::new().unwrap();
    let line = "a matching line\n";
    std::fs::write(dir.path().join("big.txt"), line.repeat(1_000_000)).unwrap();
    let args = r#"{"pattern":"matching","limit":10}"#;
    let (out, peak_kib) = run_measured(&["call", "grep", args], dir.path());
    eprintln!("grep 1,000,000 matches, limit 10: peak RSS {peak_kib} KiB");
    assert!(out.contains("big.txt:10:"), "{}", truncate(&out));
    assert!(!out.contains("big.txt:11:"), "{}", truncate(&out));
    assert!(
        peak_kib > 0,
        "VmHWM was never sampled: the bound below would hold vacuously"
    );
    assert!(peak_kib <= 64 * 1024, "peak RSS {peak_kib} KiB");
}
