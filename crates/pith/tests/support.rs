//! Helpers shared by the test modules.
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::Duration;

/// A finished process: its status, output and peak resident memory.
pub(crate) struct Measured {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    /// The highest VmHWM sampled, in KiB.
    pub(crate) peak_kib: u64,
}

impl Measured {
    pub(crate) fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Peak resident memory (VmHWM) of a live process, in KiB.
pub(crate) fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `command` (stdin from /dev/null) to completion, sampling its VmHWM every 5 ms.
///
/// VmHWM belongs to the memory of the program after `exec`, so it measures pith alone.
/// (`wait4`'s `ru_maxrss` does not: it keeps the high-water mark of the test process the
/// child was forked from, which other tests running in parallel can make large.)
pub(crate) fn run_measured(command: Command) -> Measured {
    run_measured_with_input(command, None)
}

/// [`run_measured`] with `input` written to the command's stdin (then closed).
pub(crate) fn run_measured_with_input(mut command: Command, input: Option<Vec<u8>>) -> Measured {
    let mut child = command
        .env_remove("RUST_LOG")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let writer = input.map(|input| {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        thread::spawn(move || stdin.write_all(&input))
    });
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let err = thread::spawn(move || {
        let mut bytes = Vec::new();
        stderr.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let mut peak_kib = 0;
    let status = loop {
        if let Some(kib) = peak_rss_kib(pid) {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        thread::sleep(Duration::from_millis(5));
    };
    if let Some(writer) = writer {
        writer.join().unwrap().unwrap();
    }
    Measured {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        peak_kib,
    }
}
