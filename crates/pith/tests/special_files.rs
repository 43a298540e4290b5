//! FIFOs, sockets and devices: write refuses to replace them (naming the kind),
//! read, grep, find and ls never block on them, and cancelled blocked calls leave
//! the MCP server answering.
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pith_testkit::{Prerequisite, skip};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::mcp::{Server, text};

/// Only reached when a call hangs.
const PATIENCE: Duration = Duration::from_secs(30);

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn mknod(path: &Path, kind: libc::mode_t, major: u32, minor: u32) -> bool {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::mknod(c.as_ptr(), kind | 0o644, libc::makedev(major, minor)) == 0 }
}

/// Runs `pith call TOOL ARGS --cwd DIR`; a call still running after `PATIENCE` is
/// killed and fails the test (it blocked).
fn call(dir: &Path, tool: &str, args: &Value) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args([
            "call",
            tool,
            &args.to_string(),
            "--cwd",
            dir.to_str().unwrap(),
        ])
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + PATIENCE;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("pith call {tool} {args} blocked");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The special files of a directory: (path, the kind's name in messages).
struct Specials {
    dir: TempDir,
    files: Vec<(PathBuf, &'static str)>,
    _listener: std::os::unix::net::UnixListener,
}

fn specials(test: &str) -> Specials {
    let dir = TempDir::new().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    let socket = dir.path().join("sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let mut files = vec![(fifo, "FIFO"), (socket, "socket")];
    // /dev/null's numbers: a character device that exists everywhere.
    let char_device = dir.path().join("chardev");
    if mknod(&char_device, libc::S_IFCHR, 1, 3) {
        files.push((char_device, "character device"));
    } else {
        files.push((PathBuf::from("/dev/null"), "character device"));
    }
    let block_device = dir.path().join("blockdev");
    if mknod(&block_device, libc::S_IFBLK, 7, 0) {
        files.push((block_device, "block device"));
    } else {
        skip(
            test,
            Prerequisite::Root,
            "creating a block device node (mknod) needs CAP_MKNOD; the block-device case is left out",
        );
    }
    std::fs::write(dir.path().join("plain.txt"), "needle here\n").unwrap();
    Specials {
        dir,
        files,
        _listener: listener,
    }
}

#[test]
fn write_refuses_to_replace_a_fifo_a_socket_or_a_device_and_names_the_kind() {
    let specials =
        specials("write_refuses_to_replace_a_fifo_a_socket_or_a_device_and_names_the_kind");
    for (path, kind) in &specials.files {
        let was = path.symlink_metadata().unwrap().file_type();
        let output = call(
            specials.dir.path(),
            "write",
            &json!({"path": path, "content": "replaced\n"}),
        );
        assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
        assert!(
            stdout(&output).contains(kind),
            "writing {} does not name a {kind}: {}",
            path.display(),
            stdout(&output)
        );
        let now = path.symlink_metadata().unwrap().file_type();
        assert!(
            now.is_fifo() == was.is_fifo()
                && now.is_socket() == was.is_socket()
                && now.is_char_device() == was.is_char_device()
                && now.is_block_device() == was.is_block_device(),
            "{} was replaced",
            path.display()
        );
    }
    let names: Vec<String> = std::fs::read_dir(specials.dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|name| name.ends_with(".pith-tmp")),
        "temp files left: {names:?}"
    );
}

#[test]
fn read_grep_find_and_ls_answer_at_once_beside_and_on_special_files() {
    let specials = specials("read_grep_find_and_ls_answer_at_once_beside_and_on_special_files");
    let dir = specials.dir.path();
    for (path, kind) in &specials.files {
        let output = call(dir, "read", &json!({"path": path}));
        assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
        assert!(stdout(&output).contains(kind), "read: {}", stdout(&output));
        let output = call(dir, "grep", &json!({"pattern": "x", "path": path}));
        assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
        assert!(stdout(&output).contains(kind), "grep: {}", stdout(&output));
    }
    // A directory holding them: grep skips them, find and ls list them.
    let output = call(dir, "grep", &json!({"pattern": "needle"}));
    assert!(
        stdout(&output).contains("plain.txt:1: needle here"),
        "{}",
        stdout(&output)
    );
    let output = call(dir, "find", &json!({"pattern": "*"}));
    assert!(
        stdout(&output).contains("pipe") && stdout(&output).contains("plain.txt"),
        "{}",
        stdout(&output)
    );
    let output = call(dir, "ls", &json!({}));
    assert!(
        stdout(&output).contains("pipe") && stdout(&output).contains("sock"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn five_hundred_cancelled_blocked_calls_leave_the_server_answering() {
    let dir = TempDir::new().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    std::fs::write(dir.path().join("plain.txt"), "still here\n").unwrap();
    let mut server = Server::start(&dir);
    // Calls that would block on the FIFO: reads, greps, edits and writes of it, and
    // (every tenth) a command reading it, which blocks until it is cancelled.
    // Unique per run: another copy of this test may run on the same machine.
    let marker = format!("pith-blocked-cat-{}", std::process::id());
    for id in 1..=500_i64 {
        let (tool, args) = match id % 10 {
            0 => (
                "bash",
                json!({"command": format!("cat {} # {marker}", fifo.display())}),
            ),
            1 | 5 => ("grep", json!({"pattern": "x", "path": "pipe"})),
            2 | 6 => (
                "edit",
                json!({"path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}),
            ),
            3 => ("write", json!({"path": "pipe", "content": "x"})),
            _ => ("read", json!({"path": "pipe"})),
        };
        server.send(id, "tools/call", json!({"name": tool, "arguments": args}));
    }
    for id in 1..=500_i64 {
        server.send_line(
            &json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "test"},
            })
            .to_string(),
        );
    }
    let result = server.call(1000, "read", json!({"path": "plain.txt"}));
    assert!(text(&result).contains("still here"), "{result}");
    let result = server.call(1001, "grep", json!({"pattern": "still"}));
    assert!(text(&result).contains("plain.txt"), "{result}");
    // No blocked command survives its cancel.
    let deadline = Instant::now() + PATIENCE;
    loop {
        let alive = Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap()
            .status
            .success();
        if !alive {
            break;
        }
        assert!(Instant::now() < deadline, "cancelled commands still run");
        std::thread::sleep(Duration::from_millis(50));
    }
}
