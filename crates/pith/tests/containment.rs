//! Containment flags through the real binary: `--protect` validation and meaning,
//! `.git/` protected without `--root`, `link/..` resolved like the kernel, and
//! `pith mcp` refusing `/` as its workspace.
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use tempfile::TempDir;

fn pith_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(args)
        .current_dir(dir)
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

fn write_call(dir: &Path, path: &str, extra: &[&str]) -> Output {
    let args = json!({"path": path, "content": "new\n"}).to_string();
    let root = dir.to_str().unwrap();
    let mut all = vec!["call", "write", &args, "--cwd", root];
    all.extend_from_slice(extra);
    pith_in(dir, &all)
}

#[test]
fn protect_patterns_that_can_never_match_are_usage_errors_naming_the_pattern() {
    let ws = TempDir::new().unwrap();
    let root = ws.path().to_str().unwrap();
    for pattern in ["", "../x", "/etc/passwd", "a/../../b", "/"] {
        let output = pith_in(
            ws.path(),
            &["call", "ls", "{}", "--root", root, "--protect", pattern],
        );
        assert_eq!(
            output.status.code(),
            Some(2),
            "{pattern:?}: {}",
            err(&output)
        );
        assert!(
            err(&output).contains(&format!("--protect {pattern:?}")),
            "{pattern:?}: {}",
            err(&output)
        );
    }
    let inside = format!("{root}/secrets");
    for pattern in [
        "/build",
        "**",
        ".env",
        "secrets/",
        "src/*.rs",
        inside.as_str(),
    ] {
        let output = pith_in(
            ws.path(),
            &["call", "ls", "{}", "--root", root, "--protect", pattern],
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{pattern:?}: {}",
            err(&output)
        );
    }
}

#[test]
fn protect_globs_are_gitignore_style_and_judged_where_the_path_lands() {
    let ws = TempDir::new().unwrap();
    let root = ws.path().to_str().unwrap();
    std::fs::create_dir_all(ws.path().join("sub/cfg")).unwrap();
    std::fs::create_dir_all(ws.path().join("cfg")).unwrap();
    std::os::unix::fs::symlink("cfg", ws.path().join("alias")).unwrap();
    let flags = [
        "--root",
        root,
        "--protect",
        "/top.txt",
        "--protect",
        ".env",
        "--protect",
        "/cfg/",
    ];
    let cases = [
        ("top.txt", false),
        ("sub/top.txt", true),
        (".env", false),
        ("sub/deep/.env", false),
        ("cfg/a.txt", false),
        ("alias/a.txt", false),
        ("sub/cfg/a.txt", true),
        ("sub/../cfg/b.txt", false),
        ("other.txt", true),
    ];
    for (path, allowed) in cases {
        let output = write_call(ws.path(), path, &flags);
        let text = out(&output);
        if allowed {
            assert_eq!(output.status.code(), Some(0), "{path}: {text}");
        } else {
            assert_eq!(output.status.code(), Some(1), "{path}: {text}");
            assert!(text.contains("is protected (--protect "), "{path}: {text}");
        }
    }
    assert!(!ws.path().join("cfg/a.txt").exists());
    assert!(
        !ws.path().join("sub/deep").exists(),
        "a refused write left directories"
    );
}

#[test]
fn git_is_protected_without_a_root_also_through_aliases() {
    let ws = TempDir::new().unwrap();
    std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
    std::fs::write(ws.path().join(".git/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink(".git", ws.path().join("g")).unwrap();
    std::os::unix::fs::symlink(".git/hooks", ws.path().join("h")).unwrap();
    for path in [
        ".git/config",
        "g/config",
        "h/pre-commit",
        "sub/../.git/new",
        ".git/new/deep",
    ] {
        let output = write_call(ws.path(), path, &[]);
        assert_eq!(output.status.code(), Some(1), "{path}: {}", out(&output));
        assert!(
            out(&output).contains("inside .git/"),
            "{path}: {}",
            out(&output)
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!ws.path().join(".git/hooks/pre-commit").exists());
    assert!(!ws.path().join(".git/new").exists());
    let edit = json!({"path": "g/config", "edits": [{"oldText": "core", "newText": "x"}]});
    let root = ws.path().to_str().unwrap();
    let output = pith_in(
        ws.path(),
        &["call", "edit", &edit.to_string(), "--cwd", root],
    );
    assert_eq!(output.status.code(), Some(1), "{}", out(&output));
    assert!(out(&output).contains("inside .git/"), "{}", out(&output));
    // Outside .git, writing without a root works as before.
    let output = write_call(ws.path(), "notes.txt", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", out(&output));
}

#[test]
fn link_dir_dot_dot_resolves_through_the_symlink_like_the_kernel() {
    let ws = TempDir::new().unwrap();
    std::fs::create_dir_all(ws.path().join("a/b")).unwrap();
    std::fs::write(ws.path().join("a/x.txt"), "the kernel's x\n").unwrap();
    std::fs::write(ws.path().join("x.txt"), "the lexical x\n").unwrap();
    std::os::unix::fs::symlink("a/b", ws.path().join("link")).unwrap();
    let root = ws.path().to_str().unwrap();
    for extra in [&[][..], &["--root", root, "--contain-reads"][..]] {
        let args = json!({"path": "link/../x.txt"}).to_string();
        let mut all = vec!["call", "read", &args, "--cwd", root];
        all.extend_from_slice(extra);
        let output = pith_in(ws.path(), &all);
        assert!(
            out(&output).contains("the kernel's x"),
            "{extra:?}: {}",
            out(&output)
        );
    }
}

#[test]
fn mcp_started_in_the_file_system_root_without_cwd_refuses_and_says_how() {
    let output = pith_in(Path::new("/"), &["mcp"]);
    assert_eq!(output.status.code(), Some(2), "{}", err(&output));
    assert!(err(&output).contains("--cwd"), "{}", err(&output));
    let value: Option<Value> = serde_json::from_slice(&output.stdout).ok();
    assert!(value.is_none(), "it answered on stdout: {}", out(&output));
}
