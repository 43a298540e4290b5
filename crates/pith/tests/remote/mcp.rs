//! `pith mcp --remote … --cwd /far/project` driven over JSON-RPC: list, read,
//! edit, bash with progress, cancel, and the end of the session.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{pith_exe, process_with};
use crate::mcp::{Server, text};

#[test]
fn mcp_over_remote_env_lists_reads_edits_runs_with_progress_and_cancels() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\n").unwrap();
    let exe = pith_exe();
    let mut server = Server::start_with(
        &dir,
        &["--remote", "env", "--remote-pith", exe.to_str().unwrap()],
    );

    let listed = server.request(1, "tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"].as_array().unwrap().len(),
        8,
        "{listed}"
    );

    let read = server.call(2, "read", json!({"path": "notes.txt"}));
    assert_eq!(text(&read), "one\ntwo\n", "{read}");
    let edit = server.call(
        3,
        "edit",
        json!({"path": "notes.txt", "edits": [{"oldText": "two", "newText": "TWO"}]}),
    );
    assert_eq!(edit["isError"], false, "{edit}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\nTWO\n"
    );

    server.send(
        4,
        "tools/call",
        json!({
            "name": "bash",
            "arguments": {"command": "for i in 1 2 3 4; do echo line$i; sleep 0.3; done; pwd"},
            "_meta": {"progressToken": "far"},
        }),
    );
    let response = server.response(&json!(4));
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert!(text(&response["result"]).ends_with(&format!("line4\n{}\n", dir.path().display())));
    let progress: Vec<&Value> = server
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(progress.len() >= 2, "{:?}", server.notifications);

    let marker = format!("sleep 100.{}13", std::process::id());
    server.send(
        5,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": marker}}),
    );
    let start = Instant::now();
    while !process_with(&marker) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the far command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.send_line(
        &json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 5, "reason": "test"},
        })
        .to_string(),
    );
    let start = Instant::now();
    while process_with(&marker) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{marker} outlived the cancel"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let response = server.request(6, "ping", json!({}));
    assert!(response["result"].is_object(), "{response}");

    // Closing the session ends the far side too.
    let status = server.close_and_wait(Duration::from_secs(20));
    assert!(
        status.is_some(),
        "pith mcp did not exit when its stdin closed"
    );
}
