//! The staleness check through the real binary: `pith batch` (fed one line at a time, so
//! each call finishes before the next starts), `pith mcp`, and `pith batch --remote`.
//! A bash call changes a line after the model read the file: the edit is refused naming
//! that line; `touch` does not refuse; after a fresh read the edit goes through.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::mcp::{Server, text};

/// A `pith batch` answering one call at a time.
struct Batch {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Batch {
    fn start(dir: &TempDir, extra: &[&str]) -> Batch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
            .args(["batch", "--cwd", dir.path().to_str().unwrap()])
            .args(extra)
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Batch {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends one call and waits for its result.
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let line = json!({"tool": tool, "args": args}).to_string();
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap()
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn result_text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The scenario, over any way of making calls: read, touch (edit passes), a bash change
/// of line 2 (edit refused naming it, file untouched), write refused too, fresh read (edit
/// passes).
fn scenario(dir: &TempDir, call: &mut dyn FnMut(&str, Value) -> (bool, String)) {
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    let (error, _) = call("read", json!({"path": "a.txt"}));
    assert!(!error);
    let (error, out) = call("bash", json!({"command": "touch -d '2001-01-01' a.txt"}));
    assert!(!error, "{out}");
    let edit_four = json!({"path": "a.txt", "edits": [{"oldText": "four", "newText": "FOUR"}]});
    let (error, out) = call("edit", edit_four);
    assert!(!error, "touch must not refuse: {out}");
    let (error, out) = call("bash", json!({"command": "sed -i 's/two/2/' a.txt"}));
    assert!(!error, "{out}");
    let edit_three = json!({"path": "a.txt", "edits": [{"oldText": "three", "newText": "3"}]});
    let (error, out) = call("edit", edit_three.clone());
    assert!(error, "{out}");
    assert_eq!(
        out,
        "Could not edit file: a.txt. It changed since this session last read it; read it again, then edit.\nChanged since: line 2 changed.\nLine 2 is now: 2"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n2\nthree\nFOUR\n"
    );
    let (error, out) = call("write", json!({"path": "a.txt", "content": "mine\n"}));
    assert!(
        error && out.contains("Changed since: line 2 changed."),
        "{out}"
    );
    let (error, _) = call("read", json!({"path": "a.txt", "offset": 3, "limit": 1}));
    assert!(!error);
    let (error, out) = call("edit", edit_three);
    assert!(!error, "after a fresh read: {out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n2\n3\nFOUR\n"
    );
}

#[test]
fn batch_refuses_an_edit_of_a_line_bash_changed_since_the_read() {
    let dir = TempDir::new().unwrap();
    let mut batch = Batch::start(&dir, &[]);
    scenario(&dir, &mut |tool, args| {
        let result = batch.call(tool, args);
        (result["isError"] == true, result_text(&result).to_owned())
    });
}

#[test]
fn no_stale_check_lets_the_edit_through() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let mut batch = Batch::start(&dir, &["--no-stale-check"]);
    batch.call("read", json!({"path": "a.txt"}));
    std::fs::write(dir.path().join("a.txt"), "one\nTWO\n").unwrap();
    let edit = batch.call(
        "edit",
        json!({"path": "a.txt", "edits": [{"oldText": "one", "newText": "1"}]}),
    );
    assert_eq!(edit["isError"], false, "{edit}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "1\nTWO\n"
    );
}

#[test]
fn a_file_never_read_is_edited_as_before_and_crlf_or_bom_changes_count() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("never.txt"), "x\n").unwrap();
    std::fs::write(dir.path().join("crlf.txt"), "a\nb\n").unwrap();
    std::fs::write(dir.path().join("bom.txt"), "a\nb\n").unwrap();
    let mut batch = Batch::start(&dir, &[]);
    let edit = batch.call(
        "edit",
        json!({"path": "never.txt", "edits": [{"oldText": "x", "newText": "y"}]}),
    );
    assert_eq!(edit["isError"], false, "{edit}");
    batch.call("read", json!({"path": "crlf.txt"}));
    batch.call("read", json!({"path": "bom.txt"}));
    std::fs::write(dir.path().join("crlf.txt"), "a\r\nb\n").unwrap();
    std::fs::write(dir.path().join("bom.txt"), "\u{FEFF}a\nb\n").unwrap();
    let crlf = batch.call(
        "edit",
        json!({"path": "crlf.txt", "edits": [{"oldText": "b", "newText": "B"}]}),
    );
    assert!(
        result_text(&crlf).ends_with("Changed since: line 1 changed.\nLine 1 is now: a"),
        "{crlf}"
    );
    let bom = batch.call(
        "edit",
        json!({"path": "bom.txt", "edits": [{"oldText": "b", "newText": "B"}]}),
    );
    assert!(
        result_text(&bom).ends_with(
            "Its lines are the same but its bytes are not (encoding or byte-order mark)."
        ),
        "{bom}"
    );
}

#[test]
fn mcp_refuses_an_edit_of_a_line_bash_changed_since_the_read() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let mut id = 10;
    scenario(&dir, &mut |tool, args| {
        id += 1;
        let result = server.call(id, tool, args);
        (result["isError"] == true, text(&result).to_owned())
    });
}

#[test]
fn batch_over_a_remote_refuses_an_edit_of_a_line_bash_changed_since_the_read() {
    let dir = TempDir::new().unwrap();
    let home = TempDir::new().unwrap();
    let prefix = format!("env HOME={}", home.path().display());
    let far_pith = format!("--remote-pith={}", env!("CARGO_BIN_EXE_pith"));
    let mut batch = Batch::start(&dir, &["--remote", &prefix, &far_pith]);
    scenario(&dir, &mut |tool, args| {
        let result = batch.call(tool, args);
        (result["isError"] == true, result_text(&result).to_owned())
    });
}
