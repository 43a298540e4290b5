//! `--remote` on the command line: same results as local, and installing the far pith.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::pith_exe;

fn pith(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(pith_exe())
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn project(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(dir.join("b.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub fn beta() {}\n").unwrap();
}

const CALLS: &str = r#"{"id":1,"tool":"ls","args":{}}
{"id":2,"tool":"read","args":{"path":"b.txt","offset":2}}
{"id":3,"tool":"edit","args":{"path":"a.txt","edits":[{"oldText":"beta","newText":"BETA"}]}}
{"id":4,"tool":"write","args":{"path":"src/new.rs","content":"fn new() {}\n"}}
{"id":5,"tool":"bash","args":{"command":"cat src/lib.rs; pwd; echo err >&2; exit 4"}}
{"id":6,"tool":"grep","args":{"pattern":"pub fn","ignoreCase":true}}
{"id":7,"tool":"find","args":{"pattern":"**/lib.rs"}}
{"id":8,"tool":"read","args":{"path":"missing.txt"}}
{"id":9,"tool":"write","args":{"path":"src/lib.rs","content":"unread overwrite\n"}}
"#;
// (Calls of a batch run concurrently: no call reads what another one changes.)

/// The batch's output lines with the working directory replaced by `<cwd>`.
fn batch(dir: &Path, remote: &[&str]) -> Vec<Value> {
    let cwd = dir.to_str().unwrap();
    let mut args = vec!["batch", "--cwd", cwd];
    args.extend_from_slice(remote);
    let output = pith(&args, CALLS.as_bytes());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .replace(cwd, "<cwd>")
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            // Durations differ from run to run.
            if let Some(details) = value.get_mut("details").and_then(Value::as_object_mut) {
                details.remove("durationMs");
            }
            value
        })
        .collect()
}

#[test]
fn batch_over_remote_env_gives_the_model_what_local_gives() {
    let exe = pith_exe();
    batch_matches_local_over(&format!("env --remote-pith={}", exe.display()));
}

/// A batch of every tool gives the same lines over `remote` as locally.
/// `remote` is the prefix, optionally followed by `--remote-pith=PATH`.
pub(crate) fn batch_matches_local_over(remote: &str) {
    let (prefix, pith_flag) = match remote.split_once(" --remote-pith=") {
        Some((prefix, path)) => (prefix, Some(format!("--remote-pith={path}"))),
        None => (remote, None),
    };
    let local = tempfile::tempdir().unwrap();
    let far = tempfile::tempdir().unwrap();
    project(local.path());
    project(far.path());
    let near = batch(local.path(), &[]);
    let home = tempfile::tempdir().unwrap();
    let prefix = format!("{prefix} env HOME={}", home.path().display());
    let mut flags = vec!["--remote", prefix.as_str()];
    if let Some(flag) = &pith_flag {
        flags.push(flag);
    }
    let remote = batch(far.path(), &flags);
    assert_eq!(near.len(), 9);
    assert_eq!(near[8]["isError"], true, "{:?}", near[8]);
    assert_eq!(remote, near);
    assert_eq!(
        std::fs::read_to_string(far.path().join("a.txt")).unwrap(),
        "alpha\nBETA\ngamma\n"
    );
    assert!(far.path().join("src/new.rs").is_file());
}

#[test]
fn a_far_side_without_pith_gets_this_one_and_uses_it_from_then_on() {
    upload_over("env");
}

/// `transport` runs `env` on the far side (`env`, `ssh ... env`): with HOME set
/// to a fresh directory there, the far side has no pith and gets this one.
pub(crate) fn upload_over(transport: &str) {
    let home = tempfile::tempdir().unwrap();
    project(home.path());
    let prefix = format!("{transport} HOME={}", home.path().display());
    let output = pith(
        &[
            "call",
            "read",
            r#"{"path":"a.txt"}"#,
            "--remote",
            &prefix,
            "--cwd",
            "~",
        ],
        b"",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "alpha\nbeta\ngamma\n"
    );
    let installed = home
        .path()
        .join(".cache/pith")
        .join(env!("CARGO_PKG_VERSION"))
        .join("pith");
    assert!(
        std::fs::read(&installed).unwrap() == std::fs::read(pith_exe()).unwrap(),
        "the installed pith differs from this one"
    );
    let cache = installed.parent().unwrap();
    assert_eq!(
        std::fs::read_dir(cache).unwrap().count(),
        1,
        "upload leftovers"
    );

    // The second connection runs the cached pith, so it needs no upload.
    let output = pith(
        &[
            "call",
            "ls",
            "{}",
            "--remote",
            &prefix,
            "--cwd",
            "~/src",
            "--no-remote-install",
        ],
        b"",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "lib.rs\n");
}

#[test]
fn no_remote_install_refuses_and_says_what_to_do() {
    let home = tempfile::tempdir().unwrap();
    let prefix = format!("env HOME={}", home.path().display());
    let output = pith(
        &[
            "call",
            "ls",
            "{}",
            "--remote",
            &prefix,
            "--no-remote-install",
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("remote `{prefix}`")), "{stderr}");
    assert!(stderr.contains("not installed on the far side"), "{stderr}");
    assert!(stderr.contains("--remote-pith PATH"), "{stderr}");
    assert!(
        !home
            .path()
            .join(".cache/pith")
            .join(env!("CARGO_PKG_VERSION"))
            .join("pith")
            .exists()
    );
}

#[test]
fn an_upload_with_a_wrong_checksum_is_refused_and_not_installed() {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new("sh")
        .env("HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(pith_env::remote::bootstrap_script("9.9.9").as_bytes())
        .unwrap();
    // The script answers PITH-MISSING, then reads the upload (the near side
    // sends nothing before that line, as pith does).
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert!(line.starts_with("PITH-MISSING "), "{line}");
    let wrong = "0".repeat(64);
    stdin
        .write_all(format!("upload 5 {wrong}\nhello").as_bytes())
        .unwrap();
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    child.wait().unwrap();
    let stdout = rest;
    assert!(
        stdout.contains(&format!(
            "PITH-BADSUM {}",
            pith_env::remote::sha256_hex(b"hello")
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("PITH-EXEC"), "{stdout}");
    let cache = home.path().join(".cache/pith/9.9.9");
    let left: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert!(left.is_empty(), "the refused upload left {left:?}");
}

#[test]
fn a_failing_transport_is_reported_with_its_stderr() {
    let output = pith(
        &[
            "call",
            "ls",
            "{}",
            "--remote",
            "sh -c 'echo ssh: connect to host box port 22: refused >&2; exit 255'",
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("remote `sh -c"), "{stderr}");
    assert!(
        stderr.contains("connect to host box port 22: refused"),
        "{stderr}"
    );
    assert!(stderr.contains("255"), "{stderr}");
}

#[test]
fn a_missing_far_directory_is_refused_by_the_far_side() {
    let exe = pith_exe();
    let output = pith(
        &[
            "call",
            "ls",
            "{}",
            "--remote",
            "env",
            "--remote-pith",
            exe.to_str().unwrap(),
            "--cwd",
            "/no/such/far/dir",
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--cwd /no/such/far/dir: no such directory on the remote"),
        "{stderr}"
    );
}

/// Deleting files crosses the wire (`RemoveFile`), in the far side's
/// confined view: apply_patch deletes a far file, and one the write rules
/// protect (`--protect`, `.git/`) stays.
#[test]
fn apply_patch_deletes_far_files_and_the_write_rules_hold_over_remote_env() {
    let far = tempfile::tempdir().unwrap();
    let root = far.path().canonicalize().unwrap();
    std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
    std::fs::write(root.join("keep.txt"), "keep\n").unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    let delete = |name: &str| {
        format!(
            r#"{{"tool":"apply_patch","args":{{"patch":"*** Begin Patch\n*** Delete File: {name}\n*** End Patch"}}}}"#
        )
    };
    let input = format!(
        "{}\n{}\n{}\n",
        delete("gone.txt"),
        delete("keep.txt"),
        delete(".git/config")
    );
    let exe = format!("--remote-pith={}", pith_exe().display());
    let root_arg = root.to_str().unwrap();
    let output = pith(
        &[
            "batch",
            "--tools",
            "read,write,apply_patch",
            "--remote",
            "env",
            &exe,
            "--cwd",
            root_arg,
            "--root",
            root_arg,
            "--protect",
            "keep.txt",
        ],
        input.as_bytes(),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["isError"], false, "{}", lines[0]);
    assert!(!root.join("gone.txt").exists());
    assert_eq!(lines[1]["isError"], true, "{}", lines[1]);
    assert!(
        lines[1].to_string().contains("--protect keep.txt"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2]["isError"], true, "{}", lines[2]);
    assert!(lines[2].to_string().contains(".git/"), "{}", lines[2]);
    assert_eq!(std::fs::read(root.join("keep.txt")).unwrap(), b"keep\n");
    assert_eq!(
        std::fs::read(root.join(".git/config")).unwrap(),
        b"[core]\n"
    );
}
