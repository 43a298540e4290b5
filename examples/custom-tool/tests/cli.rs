//! The binary built with the host's tool lists it and runs it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_pith-with-append");

#[test]
fn tools_json_lists_the_added_tool_after_the_built_in_ones() {
    let output = Command::new(BIN)
        .args(["tools", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let list: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = list.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "read", "bash", "edit", "write", "grep", "find", "ls", "jobs", "append"
        ]
    );
    let append = &list[8];
    assert_eq!(
        append["inputSchema"]["required"],
        serde_json::json!(["path", "line"])
    );
}

#[test]
fn call_runs_the_added_tool_with_the_same_argument_errors() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &str| {
        Command::new(BIN)
            .current_dir(dir.path())
            .args(["call", "append", args])
            .output()
            .unwrap()
    };
    let first = run(r#"{"path":"notes.txt","line":"one"}"#);
    assert!(first.status.success(), "{first:?}");
    assert_eq!(
        String::from_utf8_lossy(&first.stdout).trim(),
        "Appended 1 line to notes.txt"
    );
    assert!(run(r#"{"path":"notes.txt","line":"two"}"#).status.success());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\ntwo\n"
    );
    let invalid = run(r#"{"path":"notes.txt"}"#);
    assert!(!invalid.status.success());
    let text = String::from_utf8_lossy(&invalid.stdout).to_string()
        + &String::from_utf8_lossy(&invalid.stderr);
    assert!(
        text.contains("Invalid arguments for tool \"append\": line is required"),
        "{text}"
    );
}

#[test]
fn tools_flag_selects_the_added_tool_by_name() {
    let listed = |selection: &str| -> Vec<String> {
        let output = Command::new(BIN)
            .args(["tools", "--json", "--tools", selection])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let list: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
        list.iter()
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(listed("append,read"), ["read", "append"]);
    assert_eq!(listed("read"), ["read"]);

    let dir = tempfile::tempdir().unwrap();
    let call = Command::new(BIN)
        .current_dir(dir.path())
        .args(["call", "--tools", "append", "append"])
        .arg(r#"{"path":"notes.txt","line":"one"}"#)
        .output()
        .unwrap();
    assert!(call.status.success(), "{call:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\n"
    );

    let unknown = Command::new(BIN)
        .args(["tools", "--tools", "apend"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("unknown tool 'apend' in --tools; valid tools: read, bash, edit, write, grep, find, ls, jobs, apply_patch, undo, append"),
        "{stderr}"
    );
}
