//! Background jobs through the library: a session's jobs die with the session.

use std::time::{Duration, Instant};

use pith_env::Env;
use pith_tools::{CallOptions, ToolConfig, ToolSet};
use serde_json::json;

/// Live processes whose command line is `sleep <marker>`.
fn sleeping(marker: &str) -> usize {
    let mut found = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .collect();
        if args.len() == 2 && args[0].ends_with(b"sleep") && args[1] == marker.as_bytes() {
            found += 1;
        }
    }
    found
}

/// Polls until `sleeping(marker) == count` or 10 s pass; returns the last count.
async fn settle_at(marker: &str, count: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = sleeping(marker);
        if now == count || Instant::now() >= deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_session_kills_its_jobs_and_their_escapees() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ToolConfig::default();
    config.bash.spill_dir = dir.path().to_path_buf();
    let tools = ToolSet::builder(Env::local())
        .cwd(dir.path())
        .config(config)
        .build();
    let marker = format!("300.{}0417", std::process::id());
    let session = tools.session();
    let started = session
        .call(
            "bash",
            json!({"command": format!("setsid sleep {marker} & exec sleep {marker}"), "background": true}),
            CallOptions::default(),
        )
        .await;
    assert!(!started.is_error, "{}", started.text_content());
    assert_eq!(settle_at(&marker, 2).await, 2);
    let listed = session
        .call("jobs", json!({"action": "list"}), CallOptions::default())
        .await;
    assert!(
        listed.text_content().contains("running"),
        "{}",
        listed.text_content()
    );
    drop(session);
    assert_eq!(settle_at(&marker, 0).await, 0);
    // The tool set (and its environment) lives on: only the session's jobs died.
    let again = tools
        .session()
        .call(
            "bash",
            json!({"command": "echo alive"}),
            CallOptions::default(),
        )
        .await;
    assert_eq!(again.text_content(), "alive\n");
}
