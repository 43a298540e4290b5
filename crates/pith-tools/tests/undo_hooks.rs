//! undo's before-hooks run once per file inside the files' turns, like
//! apply_patch's: in path order, able to block the whole undo, and ordered
//! with the writes of the same batch by arrival.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pith_env::{Env, FileSystem, LocalEnv};
use pith_tools::{
    CallOptions, HookCall, HookDecision, Journal, OverwritePolicy, Session, ToolConfig, ToolHooks,
    ToolResult, ToolSet,
};
use serde_json::{Value, json};
use tempfile::TempDir;

/// Records each `undo` hook call's arguments and what `watched` held when a
/// write or an undo was approved; blocks an undo of a file named
/// `secret.txt`; approves writes slowly, so that anything not queued behind
/// a write would run first.
struct UndoHook {
    watched: PathBuf,
    undo_args: Mutex<Vec<Value>>,
    seen: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl ToolHooks for UndoHook {
    async fn before_tool_call(&self, call: HookCall<'_>) -> HookDecision {
        let current = fs::read_to_string(&self.watched).unwrap_or_default();
        match call.tool {
            "undo" => {
                self.undo_args.lock().unwrap().push(call.args.clone());
                let path = call.args["path"].as_str().unwrap_or_default();
                if path == self.watched.to_str().unwrap() {
                    self.seen.lock().unwrap().push(("undo".to_owned(), current));
                }
                if path.ends_with("secret.txt") {
                    return HookDecision::Block("secret.txt is off limits".to_owned());
                }
            }
            "write" => {
                if call.args["path"] == "f.txt" {
                    self.seen
                        .lock()
                        .unwrap()
                        .push(("write".to_owned(), current));
                }
                tokio::time::sleep(std::time::Duration::from_millis(30)).await;
            }
            _ => {}
        }
        HookDecision::Allow
    }
}

struct Workspace {
    _dir: TempDir,
    root: PathBuf,
    hook: Arc<UndoHook>,
    session: Session,
}

fn workspace() -> Workspace {
    let dir = TempDir::new().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let root = base.join("work");
    fs::create_dir_all(&root).unwrap();
    let hook = Arc::new(UndoHook {
        watched: root.join("f.txt"),
        undo_args: Mutex::new(Vec::new()),
        seen: Mutex::new(Vec::new()),
    });
    let mut config = ToolConfig::default();
    config.overwrite_policy = OverwritePolicy::Allow;
    let local: Arc<dyn FileSystem> = Arc::new(LocalEnv::new());
    config.journal = Some(Arc::new(Journal::new(local, base.join("journal"))));
    config.hooks.push(hook.clone());
    let session = ToolSet::builder(Env::local())
        .cwd(&root)
        .tools(&["write", "undo"])
        .config(config)
        .build()
        .session();
    Workspace {
        _dir: dir,
        root,
        hook,
        session,
    }
}

fn in_group(group: &str) -> CallOptions {
    CallOptions {
        group: Some(group.to_owned()),
        ..CallOptions::default()
    }
}

fn ok(result: &ToolResult) -> String {
    assert!(!result.is_error, "{}", result.text_content());
    result.text_content()
}

fn text(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

#[tokio::test]
async fn undo_hooks_see_each_file_in_path_order_and_a_block_refuses_the_whole_undo() {
    let space = workspace();
    let session = &space.session;
    for (path, content) in [("b.txt", "B"), ("a.txt", "A")] {
        ok(&session
            .call(
                "write",
                json!({"path": path, "content": content}),
                in_group("one"),
            )
            .await);
    }
    let summary = ok(&session
        .call("undo", json!({"last": "1"}), CallOptions::default())
        .await);
    assert!(summary.contains("removed (it was created)"), "{summary}");
    let a = space.root.join("a.txt").display().to_string();
    let b = space.root.join("b.txt").display().to_string();
    assert_eq!(
        *space.hook.undo_args.lock().unwrap(),
        [json!({"last": 1, "path": a}), json!({"last": 1, "path": b})]
    );
    assert!(!space.root.join("a.txt").exists());
    assert!(!space.root.join("b.txt").exists());

    space.hook.undo_args.lock().unwrap().clear();
    for (path, content) in [("c.txt", "C"), ("secret.txt", "S")] {
        ok(&session
            .call(
                "write",
                json!({"path": path, "content": content}),
                in_group("two"),
            )
            .await);
    }
    let blocked = session
        .call("undo", json!({"last": 1}), CallOptions::default())
        .await;
    assert!(blocked.is_error);
    assert_eq!(blocked.text_content(), "secret.txt is off limits");
    // c.txt was approved first, then secret.txt blocked: nothing restored.
    assert_eq!(space.hook.undo_args.lock().unwrap().len(), 2);
    assert_eq!(text(&space.root.join("c.txt")), "C");
    assert_eq!(text(&space.root.join("secret.txt")), "S");
}

#[tokio::test]
async fn an_undo_between_two_writes_of_its_file_in_one_batch_is_approved_and_runs_in_arrival_order()
{
    let space = workspace();
    let session = &space.session;
    let f = space.root.join("f.txt");
    fs::write(&f, "v0").unwrap();
    ok(&session
        .call(
            "write",
            json!({"path": "f.txt", "content": "v1"}),
            in_group("first"),
        )
        .await);
    let entries = session.journal_entries().await.unwrap();
    let call = entries[0].entry.call.clone();
    space.hook.seen.lock().unwrap().clear();

    // One batch: a write, the undo of the first write, another write; each
    // takes its place on arrival and runs on its own task.
    let calls = [
        ("write", json!({"path": "f.txt", "content": "v2"})),
        ("undo", json!({"call": call, "force": true})),
        ("write", json!({"path": "f.txt", "content": "v3"})),
    ];
    let mut running = Vec::new();
    for (tool, args) in calls {
        let ticket = session.admit();
        let session = session.clone();
        running.push(tokio::spawn(async move {
            session
                .call_in_turn(ticket, tool, args, in_group("batch"))
                .await
        }));
    }
    let mut results = Vec::new();
    for call in running {
        results.push(call.await.unwrap());
    }
    for result in &results {
        ok(result);
    }
    assert!(
        results[1].text_content().contains(": restored"),
        "{}",
        results[1].text_content()
    );
    // The undo was approved after the first write and before the second:
    // each approval saw the result of the call that arrived before it.
    assert_eq!(
        *space.hook.seen.lock().unwrap(),
        [
            ("write".to_owned(), "v1".to_owned()),
            ("undo".to_owned(), "v2".to_owned()),
            ("write".to_owned(), "v0".to_owned()),
        ]
    );
    assert_eq!(text(&f), "v3");
}
