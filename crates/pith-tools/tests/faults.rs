//! Fault injection through the Env port: every tool, every n-th operation,
//! every relevant error kind.
//!
//! Each scenario runs its call once without faults to learn the operations it
//! makes and the state it ends in, then once per (n, error kind) on a fresh
//! copy of the starting files with the n-th operation failing. Afterwards:
//! - nothing panicked;
//! - the files are byte for byte the old state or the new state (no temp
//!   files left, nothing half-written);
//! - the result is an error whose text is one to three lines, names the path
//!   for file-system faults and dumps no debug representation; or, if the
//!   tool tolerated the fault, a success whose files are the new state;
//! - the same call without faults then succeeds.
//!
//! Real failures inside `write_atomic` (the temp file cannot be created, the
//! rename fails) are produced on the real file system with `chattr +i`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use pith_env::fault::{Fault, FaultError, FaultyEnv, Fired, Operation};
use pith_env::{Env, FsErrorKind};
use pith_tools::{CallOptions, OverwritePolicy, ToolConfig, ToolResult, ToolSet};
use serde_json::{Value, json};
use tempfile::TempDir;

/// What a path in the tree is, for byte comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    File(Vec<u8>),
    Dir,
    Link(PathBuf),
}

type Snapshot = BTreeMap<String, Node>;

fn snapshot(root: &Path) -> Snapshot {
    fn walk(root: &Path, dir: &Path, out: &mut Snapshot) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let name = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                out.insert(name, Node::Link(fs::read_link(&path).unwrap()));
            } else if kind.is_dir() {
                out.insert(name, Node::Dir);
                walk(root, &path, out);
            } else {
                out.insert(name, Node::File(fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Snapshot::new();
    walk(root, root, &mut out);
    out
}

/// What differs from `old`: added, removed and changed paths.
fn difference(old: &Snapshot, state: &Snapshot) -> String {
    let mut parts = Vec::new();
    for (name, node) in state {
        match old.get(name) {
            None => parts.push(format!("+{name}")),
            Some(before) if before != node => parts.push(format!("~{name}")),
            Some(_) => {}
        }
    }
    parts.extend(
        old.keys()
            .filter(|name| !state.contains_key(*name))
            .map(|name| format!("-{name}")),
    );
    format!("{} (vs the old files)", parts.join(" "))
}

/// The starting files of every scenario.
fn populate(root: &Path) {
    fs::write(root.join("f.txt"), "alpha\nbeta\ngamma\n").unwrap();
    fs::create_dir(root.join("sub")).unwrap();
    fs::write(root.join("sub/g.txt"), "beta in sub\n").unwrap();
    fs::write(root.join("sub/h.rs"), "fn beta() {}\n").unwrap();
    std::os::unix::fs::symlink("f.txt", root.join("link.txt")).unwrap();
}

/// One workspace: a temp dir with the starting files, a spill dir for bash,
/// and a tool set over a faulty LocalEnv.
struct Workspace {
    _dir: TempDir,
    _spill: TempDir,
    root: PathBuf,
    faulty: FaultyEnv,
    tools: ToolSet,
}

impl Workspace {
    fn new() -> Workspace {
        let dir = TempDir::new().unwrap();
        let spill = TempDir::new().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        populate(&root);
        let faulty = FaultyEnv::new(Env::local());
        let mut config = ToolConfig::default();
        config.overwrite_policy = OverwritePolicy::Allow;
        config.bash.spill_dir = spill.path().to_path_buf();
        let tools = ToolSet::builder(faulty.env())
            .cwd(&root)
            .config(config)
            .build();
        Workspace {
            _dir: dir,
            _spill: spill,
            root,
            faulty,
            tools,
        }
    }

    /// Runs the call in its own task so that a panic is reported, not propagated.
    async fn call(&self, tool: &str, args: &Value) -> Result<ToolResult, String> {
        let session = self.tools.session();
        let (tool, args) = (tool.to_owned(), args.clone());
        tokio::spawn(async move { session.call(&tool, args, CallOptions::default()).await })
            .await
            .map_err(|error| format!("the call panicked: {error}"))
    }
}

/// Text in an error that shows a debug dump or a raw internal name, not a message.
const DUMPS: [&str; 10] = [
    "Unsupported",
    "FsError",
    "ExecError",
    "SearchError",
    "Os {",
    "kind:",
    "Custom {",
    "panicked",
    "JoinError",
    "{ kind",
];

/// Checks an error text: one to three lines, no dumps, and for file-system
/// faults the path (its file name) of the failed operation or of the argument.
fn check_message(text: &str, fired: &[Fired], arg_path: Option<&str>) -> Result<(), String> {
    let lines = text.trim_end().lines().count();
    if text.trim().is_empty() || lines > 3 {
        return Err(format!("{lines} lines"));
    }
    if let Some(dump) = DUMPS.iter().find(|dump| text.contains(*dump)) {
        return Err(format!("contains {dump:?}"));
    }
    let Some(fault) = fired.first() else {
        return Ok(());
    };
    if fault.operation.is_fs() {
        let mut names: Vec<String> = fault
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .into_iter()
            .collect();
        if let Some(arg) = arg_path {
            names.push(arg.trim_start_matches("./").to_owned());
        }
        if !names.iter().any(|name| text.contains(name.as_str())) {
            return Err(format!("names no path (fault on {})", fault.path.display()));
        }
    }
    Ok(())
}

/// The error kinds worth injecting into `operation`.
fn errors_for(operation: Operation) -> Vec<FaultError> {
    if operation.is_exec() {
        FaultError::exec_errors()
    } else if operation.is_search() {
        FaultError::search_errors()
    } else {
        FaultError::FS_KINDS
            .iter()
            .map(|kind| FaultError::Fs(*kind))
            .collect()
    }
}

/// Runs one scenario through every (n, error kind, timing); returns the number
/// of faulted calls and the problems found.
#[expect(
    clippy::print_stderr,
    reason = "PITH_FAULTS_VERBOSE prints every error text"
)]
async fn exercise(tool: &str, args: Value) -> (usize, Vec<String>) {
    let arg_path = args.get("path").and_then(Value::as_str).map(str::to_owned);
    let baseline = Workspace::new();
    let old = snapshot(&baseline.root);
    let result = baseline.call(tool, &args).await;
    let operations = baseline.faulty.operations();
    let new = snapshot(&baseline.root);
    let mut problems = Vec::new();
    match &result {
        Ok(result) if !result.is_error => {}
        other => {
            problems.push(format!("{tool}: the call fails without faults: {other:?}"));
            return (0, problems);
        }
    }
    let baseline_text = result.map(|r| r.text_content()).unwrap_or_default();
    let mut calls = 0;
    for (index, operation) in operations.iter().enumerate() {
        let n = index as u64 + 1;
        let mut plans: Vec<Fault> = errors_for(*operation)
            .into_iter()
            .map(|error| Fault::on_any(&[]).nth(n).error(error))
            .collect();
        if matches!(operation, Operation::WriteAtomic | Operation::CreateDirAll) {
            // The write landed but reporting it failed (a final fsync error).
            plans.push(Fault::on_any(&[]).nth(n).fs(FsErrorKind::Other).after());
        }
        for plan in plans {
            calls += 1;
            let label = format!("{tool} n={n} ({operation}) {plan:?}");
            let workspace = Workspace::new();
            workspace.faulty.inject(plan);
            let result = workspace.call(tool, &args).await;
            let fired = workspace.faulty.faults().fired();
            let state = snapshot(&workspace.root);
            let state_is_new = state == new;
            if state != old && !state_is_new {
                problems.push(format!(
                    "{label}: files neither old nor new: {}",
                    difference(&old, &state)
                ));
            }
            match &result {
                Err(panic) => problems.push(format!("{label}: {panic}")),
                Ok(result) if result.is_error => {
                    let text = result.text_content();
                    if std::env::var_os("PITH_FAULTS_VERBOSE").is_some() {
                        eprintln!("{label}: {text:?}");
                    }
                    if fired.is_empty() {
                        problems.push(format!("{label}: error without a fault: {text}"));
                    } else if let Err(why) = check_message(&text, &fired, arg_path.as_deref()) {
                        problems.push(format!("{label}: bad message ({why}): {text:?}"));
                    }
                }
                Ok(result) => {
                    // Tolerated (or the fault never fired): the call must have done its job.
                    if !state_is_new {
                        problems.push(format!("{label}: success but the files are not new"));
                    }
                    if tool != "bash" && result.text_content() != baseline_text {
                        problems.push(format!(
                            "{label}: success with a different text: {:?}",
                            result.text_content()
                        ));
                    }
                }
            }
            // The same call without faults succeeds (an edit whose change landed
            // is retried from the old files, since its old text is gone).
            workspace.faulty.reset();
            if tool == "edit" && state_is_new {
                continue;
            }
            match workspace.call(tool, &args).await {
                Ok(retry) if !retry.is_error => {
                    if snapshot(&workspace.root) != new {
                        problems.push(format!("{label}: the retry left other files"));
                    }
                }
                other => problems.push(format!("{label}: the retry fails: {other:?}")),
            }
        }
    }
    (calls, problems)
}

fn assert_clean(tool: &str, (calls, problems): (usize, Vec<String>)) {
    assert!(
        calls > 0 || !problems.is_empty(),
        "{tool}: no faulted calls"
    );
    assert!(
        problems.is_empty(),
        "{tool}: {} problems in {calls} faulted calls:\n{}",
        problems.len(),
        problems
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_survives_a_fault_in_every_operation() {
    assert_clean("read", exercise("read", json!({"path": "f.txt"})).await);
    let ranged = json!({"path": "link.txt", "offset": 2, "limit": 1});
    assert_clean("read", exercise("read", ranged).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_survives_a_fault_in_every_operation() {
    let existing = json!({"path": "f.txt", "content": "new content\n"});
    assert_clean("write", exercise("write", existing).await);
    let through_link = json!({"path": "link.txt", "content": "via link\n"});
    assert_clean("write", exercise("write", through_link).await);
}

/// A failed write of a new file in new directories must not leave the
/// directories it created behind (the old state had none of them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_write_of_a_nested_new_file_leaves_no_created_directories() {
    let nested = json!({"path": "new/dir/x.txt", "content": "x\n"});
    assert_clean("write", exercise("write", nested).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_survives_a_fault_in_every_operation() {
    let args = json!({"path": "f.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]});
    assert_clean("edit", exercise("edit", args).await);
    let fuzzy = json!({"path": "link.txt", "edits": [
        {"oldText": "alpha", "newText": "A"}, {"oldText": "gamma  ", "newText": "G"}
    ]});
    assert_clean("edit", exercise("edit", fuzzy).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_survives_a_fault_in_every_operation() {
    assert_clean("ls", exercise("ls", json!({})).await);
    assert_clean("ls", exercise("ls", json!({"path": "sub"})).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_survives_a_fault_in_every_operation() {
    assert_clean("grep", exercise("grep", json!({"pattern": "beta"})).await);
    let args = json!({"pattern": "beta", "path": "sub", "glob": "*.rs", "context": 1});
    assert_clean("grep", exercise("grep", args).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_survives_a_fault_in_every_operation() {
    assert_clean("find", exercise("find", json!({"pattern": "*.txt"})).await);
    assert_clean(
        "find",
        exercise("find", json!({"pattern": "**/*.rs", "path": "sub"})).await,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_survives_a_fault_in_every_operation() {
    assert_clean(
        "bash",
        exercise("bash", json!({"command": "cat f.txt"})).await,
    );
    // Over 2000 lines: the output is spilled to a full-output file.
    let spilling = json!({"command": "cat f.txt; seq 1 3000"});
    assert_clean("bash", exercise("bash", spilling).await);
}

/// Sets or clears the immutable attribute (`chattr`); false where unsupported.
fn set_immutable(path: &Path, on: bool) -> bool {
    let flag = if on { "+i" } else { "-i" };
    std::process::Command::new("chattr")
        .arg(flag)
        .arg(path)
        .status()
        .is_ok_and(|status| status.success())
}

/// Clears the immutable attribute even when the test fails.
struct Immutable(PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        set_immutable(&self.0, false);
    }
}

/// A real `write_atomic` failure on the local file system: the temp file
/// cannot be created (immutable directory) or the rename over the target is
/// refused (immutable target). Skipped where `chattr` does not work.
#[tokio::test]
async fn real_temp_file_and_rename_failures_leave_the_old_file_and_no_temp_file() {
    for (tool, args) in [
        ("write", json!({"path": "sub/g.txt", "content": "new\n"})),
        (
            "edit",
            json!({"path": "sub/g.txt", "edits": [{"oldText": "beta", "newText": "B"}]}),
        ),
    ] {
        for immutable in ["sub", "sub/g.txt"] {
            let workspace = Workspace::new();
            let old = snapshot(&workspace.root);
            let target = workspace.root.join(immutable);
            if !set_immutable(&target, true) {
                return pith_testkit::skip(
                    "real_temp_file_and_rename_failures_leave_the_old_file_and_no_temp_file",
                    pith_testkit::Prerequisite::Chattr,
                    "chattr +i does not work on the temp directory's file system",
                );
            }
            let guard = Immutable(target);
            let result = workspace.call(tool, &args).await.unwrap();
            drop(guard);
            let label = format!("{tool} with {immutable} immutable");
            assert!(result.is_error, "{label}: {result:?}");
            let text = result.text_content();
            check_message(&text, &[], None).unwrap_or_else(|why| panic!("{label}: {why}: {text}"));
            assert!(text.contains("g.txt"), "{label}: {text}");
            assert_eq!(snapshot(&workspace.root), old, "{label}");
            let retry = workspace.call(tool, &args).await.unwrap();
            assert!(!retry.is_error, "{label}: retry {retry:?}");
        }
    }
}

/// The fault wrapper is shared, so the same handle counts a whole call, on
/// each of the three ports (file system, processes, search).
#[tokio::test]
async fn the_operation_log_covers_every_port_a_call_uses() {
    let workspace = Workspace::new();
    let calls = [
        ("grep", json!({"pattern": "beta"})),
        ("read", json!({"path": "f.txt"})),
        ("bash", json!({"command": "echo done"})),
    ];
    let mut logs = Vec::new();
    for (tool, args) in &calls {
        workspace.faulty.reset();
        let result = workspace.call(tool, args).await.unwrap();
        assert!(!result.is_error, "{tool}: {result:?}");
        logs.push(workspace.faulty.operations());
    }
    let [grep, read, bash] = &logs[..] else {
        unreachable!()
    };
    assert!(grep.contains(&Operation::Grep), "grep: {grep:?}");
    assert!(grep.iter().all(|op| !op.is_exec()), "grep: {grep:?}");
    assert!(
        read.iter().any(|op| op.is_fs()) && read.iter().all(|op| op.is_fs()),
        "read: {read:?}"
    );
    assert!(bash.contains(&Operation::Exec), "bash: {bash:?}");
    assert!(bash.iter().all(|op| !op.is_search()), "bash: {bash:?}");
}
