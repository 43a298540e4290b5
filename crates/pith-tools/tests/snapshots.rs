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
