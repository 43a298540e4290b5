//! Snapshots of what a model and a UI get from every tool: the text, the
//! `details` (their keys are a contract) and the structured result, for each
//! tool's main successes and errors. Paths under the temporary workspace
//! read `[ROOT]`. Review a change with `cargo insta review`.

use std::fs;
use std::path::PathBuf;

use pith_env::Env;
use pith_tools::{CallOptions, Session, ToolResult, ToolSet};
use serde_json::{Value, json};
use tempfile::TempDir;

struct Workspace {
    _dir: TempDir,
    root: PathBuf,
    session: Session,
}

/// A workspace with a few files, and a session over it (overwrite requires a read).
fn workspace() -> Workspace {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::write(root.join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    fs::create_dir_all(root.join("src/nested")).unwrap();
    fs::write(root.join("src/lib.rs"), "fn one() {}\nfn two() {}\n").unwrap();
    fs::write(root.join("src/nested/deep.rs"), "fn three() {}\n").unwrap();
    let long: String = (1..=2100).map(|n| format!("line {n}\n")).collect();
    fs::write(root.join("long.txt"), long).unwrap();
    let session = ToolSet::builder(Env::local()).cwd(&root).build().session();
    Workspace {
        _dir: dir,
        root,
        session,
    }
}

impl Workspace {
    /// Calls `tool` and renders everything the result carries.
    async fn render(&self, tool: &str, args: Value) -> String {
        let result = self.session.call(tool, args, CallOptions::default()).await;
        render(&result).replace(&self.root.display().to_string(), "[ROOT]")
    }
}

fn render(result: &ToolResult) -> String {
    let pretty = |value: &Option<Value>| match value {
        Some(value) => serde_json::to_string_pretty(value).unwrap(),
        None => "(none)".to_owned(),
    };
    format!(
        "isError: {}\n--- text\n{}\n--- details\n{}\n--- structured\n{}\n",
        result.is_error,
        result.text_content(),
        pretty(&result.details),
        pretty(&result.structured)
    )
}

#[tokio::test]
async fn read_snapshots() {
    let ws = workspace();
    insta::assert_snapshot!(
        "read_text",
        ws.render("read", json!({"path": "a.txt"})).await
    );
    insta::assert_snapshot!(
        "read_window",
        ws.render("read", json!({"path": "a.txt", "offset": 2, "limit": 1}))
            .await
    );
    insta::assert_snapshot!(
        "read_truncated",
        ws.render("read", json!({"path": "long.txt", "offset": 2095}))
            .await
            + &ws
                .render("read", json!({"path": "long.txt", "limit": 3}))
                .await
    );
    let first_page = ws.render("read", json!({"path": "long.txt"})).await;
    let tail: Vec<&str> = first_page.lines().skip(2002).collect();
    insta::assert_snapshot!("read_truncated_details", tail.join("\n"));
    insta::assert_snapshot!(
        "read_not_found",
        ws.render("read", json!({"path": "alpah.txt"})).await
    );
    insta::assert_snapshot!(
        "read_directory",
        ws.render("read", json!({"path": "src"})).await
    );
    insta::assert_snapshot!(
        "read_invalid_arguments",
        ws.render("read", json!({"path": "a.txt", "offset": "x", "limt": 2}))
            .await
    );
}

#[tokio::test]
async fn write_snapshots() {
    let ws = workspace();
    insta::assert_snapshot!(
        "write_new",
        ws.render("write", json!({"path": "new/b.txt", "content": "hello\n"}))
            .await
    );
    insta::assert_snapshot!(
        "write_unread",
        ws.render("write", json!({"path": "a.txt", "content": "x"}))
            .await
    );
    insta::assert_snapshot!(
        "write_directory",
        ws.render("write", json!({"path": "src", "content": "x"}))
            .await
    );
}

#[tokio::test]
async fn edit_snapshots() {
    let ws = workspace();
    insta::assert_snapshot!(
        "edit_replaced",
        ws.render(
            "edit",
            json!({"path": "a.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]})
        )
        .await
    );
    insta::assert_snapshot!(
        "edit_fuzzy",
        ws.render(
            "edit",
            json!({"path": "src/lib.rs", "edits": [{"oldText": "fn  one() {}", "newText": "fn one() { 1 }"}]})
        )
        .await
    );
    insta::assert_snapshot!(
        "edit_not_found",
        ws.render(
            "edit",
            json!({"path": "a.txt", "edits": [{"oldText": "delta", "newText": "x"}]})
        )
        .await
    );
    insta::assert_snapshot!(
        "edit_ambiguous",
        ws.render(
            "edit",
            json!({"path": "src/lib.rs", "edits": [{"oldText": "fn ", "newText": "pub fn "}]})
        )
        .await
    );
    insta::assert_snapshot!(
        "edit_no_edits",
        ws.render("edit", json!({"path": "a.txt", "edits": []}))
            .await
    );
    insta::assert_snapshot!(
        "edit_missing_file",
        ws.render(
            "edit",
            json!({"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]})
        )
        .await
    );
}

#[tokio::test]
async fn bash_snapshots() {
    let ws = workspace();
    insta::assert_snapshot!(
        "bash_output",
        ws.render("bash", json!({"command": "echo hello; echo err >&2"}))
            .await
    );
    insta::assert_snapshot!(
        "bash_no_output",
        ws.render("bash", json!({"command": "true"})).await
    );
    insta::assert_snapshot!(
        "bash_exit_code",
        ws.render("bash", json!({"command": "echo partial; exit 3"}))
            .await
    );
    insta::assert_snapshot!(
        "bash_timeout",
        ws.render("bash", json!({"command": "exec sleep 30", "timeout": 0.2}))
            .await
    );
    insta::assert_snapshot!(
        "bash_nonpositive_timeout",
        ws.render("bash", json!({"command": "true", "timeout": 0}))
            .await
    );
}

#[tokio::test]
async fn grep_snapshots() {
    let ws = workspace();
    insta::assert_snapshot!(
        "grep_matches",
        ws.render("grep", json!({"pattern": "fn \\w+", "path": "src"}))
            .await
    );
    insta::assert_snapshot!(
        "grep_limit",
        ws.render("grep", json!({"pattern": "fn", "limit": 1}))
            .await
    );
    insta::assert_snapshot!(
        "grep_none",
        ws.render("grep", json!({"pattern": "zebra"})).await
    );
    insta::assert_snapshot!(
        "grep_invalid_regex",
        ws.render("grep", json!({"pattern": "fn ("})).await
    );
    insta::assert_snapshot!(
        "grep_missing_path",
        ws.render("grep", json!({"pattern": "x", "path": "srcc"}))
            .await
    );
}

#[tokio::test]
async fn find_snapshots() {
    let ws = workspace();
    insta::assert_snapshot!(
        "find_matches",
        ws.render("find", json!({"pattern": "**/*.rs"})).await
    );
    insta::assert_snapshot!(
        "find_limit",
        ws.render("find", json!({"pattern": "*", "limit": 2})).await
    );
    insta::assert_snapshot!(
        "find_none",
        ws.render("find", json!({"pattern": "*.py"})).await
    );
    insta::assert_snapshot!(
        "find_not_a_directory",
        ws.render("find", json!({"pattern": "*", "path": "a.txt"}))
            .await
    );
}

#[tokio::test]
async fn ls_snapshots() {
    let ws = workspace();
    insta::assert_snapshot!("ls_root", ws.render("ls", json!({})).await);
    insta::assert_snapshot!("ls_limit", ws.render("ls", json!({"limit": 2})).await);
    insta::assert_snapshot!(
        "ls_not_found",
        ws.render("ls", json!({"path": "scr"})).await
    );
    insta::assert_snapshot!("ls_file", ws.render("ls", json!({"path": "a.txt"})).await);
}

#[tokio::test]
async fn pipeline_snapshots() {
    let ws = workspace();
    insta::assert_snapshot!(
        "unknown_tool",
        ws.render("raed", json!({"path": "a.txt"})).await
    );
    insta::assert_snapshot!(
        "unknown_field",
        ws.render("grep", json!({"pattern": "x", "ignorecase": true}))
            .await
    );
}

/// A workspace with the optional tools, a journal beside it and bash's
/// spill files inside it; the session's results with the values that change
/// from run to run (times, call ids) masked.
struct History {
    _dir: TempDir,
    root: PathBuf,
    session: Session,
}

fn history() -> History {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir_all(root.join("work")).unwrap();
    fs::write(root.join("work/a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    fs::write(root.join("work/old.txt"), "old\n").unwrap();
    let mut config = pith_tools::ToolConfig::default();
    config.overwrite_policy = pith_tools::OverwritePolicy::Allow;
    config.bash.spill_dir = root.join("spill");
    fs::create_dir_all(&config.bash.spill_dir).unwrap();
    let local: std::sync::Arc<dyn pith_env::FileSystem> =
        std::sync::Arc::new(pith_env::LocalEnv::new());
    config.journal = Some(std::sync::Arc::new(pith_tools::Journal::new(
        local,
        root.join("journal"),
    )));
    let session = ToolSet::builder(Env::local())
        .cwd(root.join("work"))
        .tools(&["bash", "jobs", "apply_patch", "undo", "write"])
        .config(config)
        .build()
        .session();
    History {
        _dir: dir,
        root,
        session,
    }
}

impl History {
    async fn render(&self, tool: &str, args: Value) -> String {
        let mut result = self.session.call(tool, args, CallOptions::default()).await;
        for value in [&mut result.details, &mut result.structured]
            .into_iter()
            .flatten()
        {
            mask(value);
        }
        let text = render(&result).replace(&self.root.display().to_string(), "[ROOT]");
        let times = regex::Regex::new(r"\b\d+\.\ds\b").unwrap();
        let text = times.replace_all(&text, "[TIME]");
        let logs = regex::Regex::new(r"pith-job-[0-9a-f]+\.log").unwrap();
        let text = logs.replace_all(&text, "pith-job-[ID].log").into_owned();
        match result.structured.as_ref().and_then(|s| s["call"].as_str()) {
            Some(call) => text.replace(call, "[CALL]"),
            None => text,
        }
    }
}

/// Masks the keys whose values change from run to run (times, journal entry ids).
fn mask(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if ["startedAt", "elapsedSeconds", "entries"].contains(&key.as_str()) {
                    *value = json!("[VARIES]");
                } else {
                    mask(value);
                }
            }
        }
        Value::Array(values) => values.iter_mut().for_each(mask),
        _ => {}
    }
}

#[tokio::test]
async fn jobs_snapshots() {
    let h = history();
    insta::assert_snapshot!(
        "jobs_none",
        h.render("jobs", json!({"action": "list"})).await
    );
    let started = h
        .session
        .call(
            "bash",
            json!({"command": "printf 'one\\ntwo\\n'; exit 3", "background": true}),
            CallOptions::default(),
        )
        .await;
    assert!(!started.is_error, "{}", started.text_content());
    insta::assert_snapshot!(
        "jobs_output_ended",
        h.render("jobs", json!({"action": "output", "id": 1, "wait": 10}))
            .await
    );
    insta::assert_snapshot!(
        "jobs_list",
        h.render("jobs", json!({"action": "list"})).await
    );
    insta::assert_snapshot!(
        "jobs_unknown_id",
        h.render("jobs", json!({"action": "output", "id": 7})).await
    );
    insta::assert_snapshot!(
        "jobs_input_without_text",
        h.render("jobs", json!({"action": "input", "id": 1})).await
    );
}

#[tokio::test]
async fn apply_patch_snapshots() {
    let h = history();
    insta::assert_snapshot!(
        "apply_patch_applied",
        h.render(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** Add File: new.txt\n+fresh\n*** Update File: old.txt\n*** Move to: moved.txt\n*** End Patch\n"})
        )
        .await
    );
    insta::assert_snapshot!(
        "apply_patch_invalid",
        h.render(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch\n"})
        )
        .await
    );
    insta::assert_snapshot!(
        "apply_patch_hunk_not_found",
        h.render(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-nowhere\n+here\n*** End Patch\n"})
        )
        .await
    );
}

#[tokio::test]
async fn undo_snapshots() {
    let h = history();
    insta::assert_snapshot!("undo_nothing", h.render("undo", json!({})).await);
    let written = h
        .session
        .call(
            "write",
            json!({"path": "a.txt", "content": "changed\n"}),
            CallOptions::default(),
        )
        .await;
    assert!(!written.is_error, "{}", written.text_content());
    insta::assert_snapshot!(
        "undo_dry_run",
        h.render("undo", json!({"dryRun": true})).await
    );
    insta::assert_snapshot!("undo_last", h.render("undo", json!({})).await);
}
