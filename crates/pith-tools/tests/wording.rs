//! The texts of `pith_tools`' messages module that no snapshot or other test
//! names, pinned byte for byte through the tools that show them: the
//! staging refusals of apply_patch, undo's refusals and summary lines, the
//! pipeline's own texts, the argument checks' enum message, the jobs tool's,
//! and edit's refusals around the engine.

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use pith_env::{Env, FileSystem, LocalEnv};
use pith_tools::{
    CallOptions, HookCall, HookDecision, Journal, OverwritePolicy, Session, ToolConfig, ToolHooks,
    ToolResult, ToolSet,
};
use serde_json::{Value, json};
use tempfile::TempDir;

struct Workspace {
    _dir: TempDir,
    root: PathBuf,
    session: Session,
}

/// A workspace with `a.txt` and the directory `d`, and a session with every
/// tool and a journal beside the workspace.
fn workspace(config: ToolConfig) -> Workspace {
    let dir = TempDir::new().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let root = base.join("work");
    fs::create_dir_all(root.join("d")).unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let session = ToolSet::builder(Env::local())
        .cwd(&root)
        .tools(&["read", "write", "edit", "jobs", "apply_patch", "undo"])
        .config(config)
        .build()
        .session();
    Workspace {
        _dir: dir,
        root,
        session,
    }
}

fn journaled(base: &TempDir) -> ToolConfig {
    let mut config = ToolConfig::default();
    config.overwrite_policy = OverwritePolicy::Allow;
    let local: Arc<dyn FileSystem> = Arc::new(LocalEnv::new());
    config.journal = Some(Arc::new(Journal::new(local, base.path().join("journal"))));
    config
}

impl Workspace {
    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.session.call(tool, args, CallOptions::default()).await
    }

    /// The text of a call that must fail.
    async fn error(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert!(result.is_error, "{}", result.text_content());
        result
            .text_content()
            .replace(&self.root.display().to_string(), "[ROOT]")
    }

    async fn patch_error(&self, body: &str) -> String {
        self.error(
            "apply_patch",
            json!({"patch": format!("*** Begin Patch\n{body}*** End Patch\n")}),
        )
        .await
    }
}

#[tokio::test]
async fn apply_patch_staging_refusals() {
    let ws = workspace(ToolConfig::default());
    fs::write(ws.root.join("file"), "x\n").unwrap();
    assert_eq!(
        ws.patch_error("*** Add File: a.txt\n+x\n").await,
        "Could not apply the patch: a.txt: 'Add File' names a path that already exists; use '*** Update File:' to change it. No file was changed."
    );
    assert_eq!(
        ws.patch_error("*** Update File: a.txt\n*** Move to: d\n@@\n-alpha\n+beta\n")
            .await,
        "Could not apply the patch: d: 'Move to' names a path that already exists; use '*** Update File:' to change it. No file was changed."
    );
    assert_eq!(
        ws.patch_error("*** Delete File: nope.txt\n").await,
        "Could not apply the patch: nope.txt: file not found; check the path (use '*** Add File:' for a new file). No file was changed."
    );
    assert_eq!(
        ws.patch_error("*** Delete File: d\n").await,
        "Could not apply the patch: d: it is a directory. No file was changed."
    );
    assert_eq!(
        ws.patch_error("*** Add File: file/new.txt\n+x\n").await,
        "Could not apply the patch: file/new.txt: a parent of it is a file, not a directory. No file was changed."
    );
    assert_eq!(
        ws.patch_error("*** Delete File: a.txt\n*** Delete File: ./a.txt\n")
            .await,
        "Invalid patch: [ROOT]/a.txt appears twice (patch line 3). Put all changes to one file in one section; no file was changed."
    );
    assert_eq!(
        fs::read_to_string(ws.root.join("a.txt")).unwrap(),
        "alpha\n"
    );
}

#[tokio::test]
async fn undo_refusals_and_summary_lines() {
    let journal = TempDir::new().unwrap();
    let ws = workspace(journaled(&journal));
    assert_eq!(
        ws.error("undo", json!({"last": 1, "call": "x"})).await,
        "Give only one of last, call and since."
    );
    assert_eq!(
        ws.error("undo", json!({"since": "yesterday"})).await,
        "invalid time \"yesterday\": give a duration ago (90s, 10m, 2h, 1d), a UTC time (2026-11-30T14:05:00Z) or @UNIX_SECONDS"
    );
    let write = ws
        .call("write", json!({"path": "a.txt", "content": "beta\n"}))
        .await;
    assert!(!write.is_error, "{}", write.text_content());
    fs::write(ws.root.join("a.txt"), "changed by hand\n").unwrap();
    assert_eq!(
        ws.error("undo", json!({})).await,
        "Undo refused: [ROOT]/a.txt changed since the journaled change, so restoring would lose that work. Nothing was restored. Undo with force to overwrite it anyway."
    );
    fs::write(ws.root.join("a.txt"), "alpha\n").unwrap();
    let unchanged = ws.call("undo", json!({})).await;
    assert!(!unchanged.is_error, "{}", unchanged.text_content());
    assert_eq!(
        unchanged
            .text_content()
            .replace(&ws.root.display().to_string(), "[ROOT]"),
        "[ROOT]/a.txt: already at its previous content"
    );

    let off = workspace(ToolConfig::default());
    assert_eq!(
        off.error("undo", json!({})).await,
        "Undo is off: this tool set has no journal (pith journals unless --no-journal)."
    );
}

/// Blocks every call without a reason.
struct Silent;

#[async_trait]
impl ToolHooks for Silent {
    async fn before_tool_call(&self, _call: HookCall<'_>) -> HookDecision {
        HookDecision::Block(String::new())
    }
}

#[tokio::test]
async fn the_pipelines_and_the_argument_checks_texts() {
    // No built-in tool's schema has a string enum; a host's tool may.
    let schema = json!({"type": "object", "properties": {"mode": {"type": "string", "enum": ["fast", "slow"]}}});
    let error =
        pith_tools::parse_args::<Value>("host", &schema, json!({"mode": "warp"})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Invalid arguments for tool \"host\": mode must be one of \"fast\", \"slow\", got \"warp\".\nExpected arguments: {\"mode\"?: string}"
    );
    let mut config = ToolConfig::default();
    config.hooks.push(Arc::new(Silent));
    let blocked = workspace(config);
    assert_eq!(
        blocked.error("read", json!({"path": "a.txt"})).await,
        "Tool execution was blocked"
    );
}

#[tokio::test]
async fn the_jobs_tools_texts_without_jobs() {
    let ws = workspace(ToolConfig::default());
    assert_eq!(
        ws.error("jobs", json!({"action": "output", "id": 1})).await,
        "No job 1 in this session. This session has no jobs; start one with bash and background, yield or tty."
    );
    let list = ws.call("jobs", json!({"action": "list"})).await;
    assert_eq!(list.text_content(), "No jobs in this session.");
}

#[tokio::test]
async fn edits_refusals_around_the_engine() {
    let ws = workspace(ToolConfig::default());
    let edit = |path: &str| json!({"path": path, "edits": [{"oldText": "a", "newText": "b"}]});
    assert_eq!(
        ws.error("edit", edit("d")).await,
        "Could not edit file: d. It is a directory; edit changes files."
    );
    fs::write(
        ws.root.join("bin.dat"),
        b"\x00\x01\x02\xff\xfe\x00binary\x00",
    )
    .unwrap();
    let binary = ws.error("edit", edit("bin.dat")).await;
    assert!(
        binary.starts_with("Could not edit file: bin.dat. ")
            && binary.ends_with(
                ", so edit treats it as binary. Replace it whole with write, or change its bytes with bash."
            ),
        "{binary}"
    );
}
