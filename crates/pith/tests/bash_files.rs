//! Bash's full-output files through the real binary: private, kept by `pith call`,
//! removed when a `pith mcp` session ends (unless `--keep-output`); and the line a
//! sandbox denial adds to a failed command.
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use pith_env::SandboxStatus;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::mcp::Server;

/// A command whose output is cut, so it gets a full-output file.
const LONG: &str = "seq 1 5000";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o777
}

#[test]
fn pith_call_keeps_a_private_full_output_file() {
    let tmp = TempDir::new().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args([
            "call",
            "--json",
            "bash",
            &json!({ "command": LONG }).to_string(),
        ])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let path = result["details"]["fullOutputPath"].as_str().unwrap();
    let path = Path::new(path);
    assert!(path.exists(), "pith call removed {}", path.display());
    assert_eq!(mode(path), 0o600);
    let dir = path.parent().unwrap();
    assert!(
        dir.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("pith-")
    );
    assert_eq!(dir.parent().unwrap(), tmp.path());
    assert_eq!(mode(dir), 0o700);
}

fn mcp_output_file(extra: &[&str]) -> (TempDir, std::path::PathBuf, bool) {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start_with(&dir, extra);
    let result = server.call(1, "bash", json!({ "command": LONG }));
    let details = &result["_meta"]["pith/details"];
    let path = std::path::PathBuf::from(details["fullOutputPath"].as_str().unwrap());
    assert!(path.exists(), "{result}");
    assert!(server.close_and_wait(Duration::from_secs(20)).is_some());
    let exists = path.exists();
    if exists {
        let _ = std::fs::remove_file(&path);
    }
    (dir, path, exists)
}

#[test]
fn an_mcp_session_removes_its_full_output_files_when_it_ends() {
    let (_dir, path, exists) = mcp_output_file(&[]);
    assert!(!exists, "{} outlived the session", path.display());
}

#[test]
fn keep_output_keeps_them() {
    let (_dir, path, exists) = mcp_output_file(&["--keep-output"]);
    assert!(
        exists,
        "{} was removed despite --keep-output",
        path.display()
    );
}

#[test]
fn a_sandbox_denial_is_explained_in_one_line() {
    if !SandboxStatus::probe().landlock_available() {
        return pith_testkit::skip(
            "a_sandbox_denial_is_explained_in_one_line",
            pith_testkit::Prerequisite::Landlock,
            "Landlock is not available on this kernel",
        );
    }
    let ws = TempDir::new().unwrap();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
    let target = format!("{home}/.pith-denial-test-{}", std::process::id());
    let output = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args([
            "call",
            "bash",
            &json!({ "command": format!("mkdir {target}") }).to_string(),
        ])
        .args([
            "--cwd",
            ws.path().to_str().unwrap(),
            "--sandbox",
            "workspace-write",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir(&target);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let hint: Vec<&str> = text.lines().filter(|l| l.contains("The sandbox")).collect();
    assert_eq!(hint.len(), 1, "{text}");
    assert!(hint[0].contains("may write only under"), "{text}");
    assert!(hint[0].contains(ws.path().to_str().unwrap()), "{text}");
    assert!(hint[0].contains("--allow-write"), "{text}");

    // A failure without a denial gets no such line.
    let output = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["call", "bash", r#"{"command":"exit 3"}"#])
        .args([
            "--cwd",
            ws.path().to_str().unwrap(),
            "--sandbox",
            "workspace-write",
        ])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&output.stdout).contains("The sandbox"));
}

/// `--allow-write cache` makes the cache directory writable for commands.
#[test]
fn allow_write_presets_widen_the_sandbox() {
    if !SandboxStatus::probe().landlock_available() {
        return pith_testkit::skip(
            "allow_write_presets_widen_the_sandbox",
            pith_testkit::Prerequisite::Landlock,
            "Landlock is not available on this kernel",
        );
    }
    let ws = TempDir::new().unwrap();
    // Outside the always-writable temp dirs, also when the checkout lives under /tmp.
    let cache =
        crate::safety::unsandboxed_base().join(format!("pith-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let run = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_pith"))
            .args([
                "call",
                "bash",
                r#"{"command":"mkdir -p \"$XDG_CACHE_HOME/x\" && echo made"}"#,
            ])
            .args([
                "--cwd",
                ws.path().to_str().unwrap(),
                "--sandbox",
                "workspace-write",
            ])
            .args(extra)
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    std::fs::create_dir_all(&cache).unwrap();
    let denied = run(&[]);
    assert!(!denied.contains("made"), "{denied}");
    let allowed = run(&["--allow-write", "cache"]);
    assert!(allowed.contains("made"), "{allowed}");
    assert!(cache.join("x").is_dir());
    let _ = std::fs::remove_dir_all(&cache);
}
