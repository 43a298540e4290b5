//! The bash tool through the real binary: 2 GiB of output in bounded memory.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// Peak resident memory (VmHWM) of a process, in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn two_gib_of_output_completes_with_the_tail_shown_every_byte_saved_and_rss_bounded() {
    const TOTAL: u64 = 2 * 1024 * 1024 * 1024;
    let spill = tempfile::tempdir().unwrap();
    let line = "a".repeat(99);
    let args = json!({ "command": format!("yes {line} | head -c {TOTAL}") });
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["call", "--json", "bash", &args.to_string()])
        .env("TMPDIR", spill.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak_kib = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(kib) = peak_rss_kib(pid) {
            peak_kib = peak_kib.max(kib);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let text = result["content"][0]["text"].as_str().unwrap();
    let path = result["details"]["fullOutputPath"].as_str().unwrap();
    assert!(text.starts_with(&format!("{line}\n")), "{}", &text[..200]);
    assert!(
        text.contains(&format!("(50.0KB limit). Full output: {path}]")),
        "{}",
        &text[text.len() - 300..]
    );
    assert_eq!(std::fs::metadata(path).unwrap().len(), TOTAL);
    std::fs::remove_file(path).unwrap();
    assert!(peak_kib > 0, "VmHWM was never read");
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}
