//! The safety flags through the real binary: `--root`, `--protect`, `--sandbox`,
//! `pith sandbox status`, and the contained, sandboxed defaults of `pith mcp`.
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

use std::path::PathBuf;
use std::process::{Command, Output};

use pith_env::{SandboxPolicy, SandboxStatus};
use serde_json::json;
use tempfile::TempDir;

use crate::mcp::{Server, text};

fn pith(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn out(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn err(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A base for directories the sandbox does not always allow (it always allows the
/// temp dirs): the target dir, or the home directory when the checkout itself lives
/// under a temp dir.
pub(crate) fn unsandboxed_base() -> PathBuf {
    let always: Vec<PathBuf> = SandboxPolicy::always_writable()
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .collect();
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(PathBuf::from),
        Some(PathBuf::from("/var/lib")),
    ];
    for candidate in candidates.into_iter().flatten() {
        let Ok(real) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        if !always.iter().any(|dir| real.starts_with(dir)) {
            return real;
        }
    }
    panic!("no directory outside the temp dirs to test the sandbox with")
}

/// A directory removed when the test ends.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A directory outside the system temp dir, which the sandbox always allows:
/// writes there must be refused under workspace-write.
fn outside_tmp(name: &str) -> Scratch {
    let dir = unsandboxed_base().join(format!("pith-safety-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

fn landlock_or_explain(test: &str) -> bool {
    let available = SandboxStatus::probe().landlock_available();
    if !available {
        pith_testkit::skip(
            test,
            pith_testkit::Prerequisite::Landlock,
            "Landlock is not available on this kernel",
        );
    }
    available
}

#[test]
fn a_root_confines_write_and_edit_and_says_where_the_path_went() {
    let ws = TempDir::new().unwrap();
    let outside = TempDir::new().unwrap();
    let target = outside.path().join("x.txt");
    let root = ws.path().to_str().unwrap();
    let output = pith(&[
        "call",
        "write",
        &json!({"path": target, "content": "x"}).to_string(),
        "--cwd",
        root,
        "--root",
        root,
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", out(&output));
    assert!(
        out(&output).contains("is outside the workspace"),
        "{}",
        out(&output)
    );
    assert!(!target.exists());

    let output = pith(&[
        "call",
        "write",
        r#"{"path":"inside.txt","content":"ok"}"#,
        "--cwd",
        root,
        "--root",
        root,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", out(&output));
}

#[test]
fn protect_and_git_are_refused_and_protect_needs_a_root() {
    let ws = TempDir::new().unwrap();
    std::fs::create_dir_all(ws.path().join(".git")).unwrap();
    let root = ws.path().to_str().unwrap();
    for path in [".git/HEAD", ".env"] {
        let output = pith(&[
            "call",
            "write",
            &json!({"path": path, "content": "x"}).to_string(),
            "--cwd",
            root,
            "--root",
            root,
            "--protect",
            ".env",
        ]);
        assert_eq!(output.status.code(), Some(1), "{path}: {}", out(&output));
        assert!(!ws.path().join(path).exists());
    }
    let output = pith(&["call", "ls", "{}", "--cwd", root, "--protect", ".env"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        err(&output).contains("need workspace roots"),
        "{}",
        err(&output)
    );
}

#[test]
fn bash_under_workspace_write_cannot_create_a_file_outside_the_roots() {
    if !landlock_or_explain("bash_under_workspace_write_cannot_create_a_file_outside_the_roots") {
        return;
    }
    let ws = outside_tmp("ww-root");
    let outside = outside_tmp("ww-outside");
    let command = format!(
        "touch {ws}/made-inside && touch {out}/made-outside; echo done",
        ws = ws.display(),
        out = outside.display()
    );
    let root = ws.to_str().unwrap();
    let output = pith(&[
        "call",
        "bash",
        &json!({"command": command}).to_string(),
        "--cwd",
        root,
        "--root",
        root,
        "--sandbox",
        "workspace-write",
    ]);
    assert!(
        out(&output).contains("Permission denied")
            || out(&output).contains("Read-only file system"),
        "{}",
        out(&output)
    );
    assert!(ws.join("made-inside").exists());
    assert!(
        !outside.join("made-outside").exists(),
        "the sandbox let a write out"
    );
}

#[test]
fn sandbox_status_says_what_is_enforced() {
    let ws = TempDir::new().unwrap();
    let root = ws.path().to_str().unwrap();
    let output = pith(&[
        "sandbox",
        "status",
        "--cwd",
        root,
        "--sandbox",
        "read-only",
        "--deny-network",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", err(&output));
    let report = out(&output);
    assert!(report.contains("sandbox mode: read-only"), "{report}");
    assert!(
        report.contains("new IPv4/IPv6 sockets are denied"),
        "{report}"
    );
    if SandboxStatus::probe().landlock_available() {
        assert!(report.contains("Landlock ABI"), "{report}");
        assert!(report.contains("may not write any file"), "{report}");
    } else {
        assert!(report.contains("refused"), "{report}");
    }
    let output = pith(&["sandbox", "status", "--mcp", "--cwd", root]);
    let report = out(&output);
    assert!(
        report.contains(&format!(
            "workspace roots: {}",
            std::fs::canonicalize(root).unwrap().display()
        )),
        "{report}"
    );
    let output = pith(&["sandbox", "status", "--sandbox", "strict"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn mcp_contains_writes_to_the_workspace_and_sandboxes_bash_by_default() {
    let ws = TempDir::new().unwrap();
    let outside = outside_tmp("mcp-outside");
    let mut server = Server::start(&ws);
    let target = outside.join("escape.txt");
    let result = server.call(1, "write", json!({"path": target, "content": "x"}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("outside the workspace"), "{result}");
    assert!(!target.exists());

    let result = server.call(2, "write", json!({"path": "inside.txt", "content": "ok"}));
    assert_eq!(result["isError"], false, "{result}");

    if landlock_or_explain("mcp_contains_writes_to_the_workspace_and_sandboxes_bash_by_default") {
        let command = format!(
            "touch {}; echo status=$?",
            outside.join("bash-escape").display()
        );
        let result = server.call(3, "bash", json!({"command": command}));
        assert!(text(&result).contains("status=1"), "{result}");
        assert!(
            !outside.join("bash-escape").exists(),
            "bash wrote outside the workspace"
        );
    }
}

#[test]
fn mcp_sandbox_off_lets_bash_write_anywhere_this_user_can() {
    let ws = TempDir::new().unwrap();
    let outside = outside_tmp("mcp-off");
    let mut server = Server::start_with(&ws, &["--sandbox", "off"]);
    let command = format!("touch {} && echo made", outside.join("free").display());
    let result = server.call(1, "bash", json!({"command": command}));
    assert_eq!(result["isError"], false, "{result}");
    assert!(outside.join("free").exists());
}
