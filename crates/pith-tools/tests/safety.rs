//! Workspace roots, protected paths and hooks, over real files: the escape
//! corpus must find zero escapes, and hooks must see serialised writes.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pith_env::Env;
use pith_tools::{
    CallOptions, HookCall, HookDecision, OverwritePolicy, Session, ToolConfig, ToolHooks,
    ToolResult, ToolSet, WorkspacePolicy,
};
use serde_json::{Value, json};
use tempfile::TempDir;

/// `<tmp>/ws` (the root) and `<tmp>/outside`, with a tool set contained to the root.
struct Contained {
    _dir: TempDir,
    root: PathBuf,
    outside: PathBuf,
    session: Session,
}

fn contained(protect: &[&str], contain_reads: bool) -> Contained {
    let dir = TempDir::new().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    fs::create_dir_all(root.join(".git")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "outside\n").unwrap();
    let protect: Vec<String> = protect.iter().map(|glob| (*glob).to_owned()).collect();
    let mut config = ToolConfig::default();
    config.overwrite_policy = OverwritePolicy::Allow;
    config.workspace =
        Some(WorkspacePolicy::new(vec![root.clone()], &protect, contain_reads).unwrap());
    let tools = ToolSet::builder(Env::local())
        .cwd(&root)
        .config(config)
        .build();
    Contained {
        _dir: dir,
        session: tools.session(),
        root,
        outside,
    }
}

impl Contained {
    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.session.call(tool, args, CallOptions::default()).await
    }

    /// Every file under `outside`, with its content: must never change.
    fn outside_state(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut state = Vec::new();
        let mut stack = vec![self.outside.clone()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if entry.file_type().unwrap().is_dir() {
                    stack.push(path);
                } else {
                    state.push((path.clone(), fs::read(&path).unwrap_or_default()));
                }
            }
        }
        state.sort();
        state
    }
}

#[tokio::test]
async fn the_escape_corpus_finds_no_way_out_of_the_roots() {
    let ws = contained(&[], false);
    let root = &ws.root;
    let outside = &ws.outside;
    symlink(outside, root.join("link_dir")).unwrap();
    symlink(outside.join("secret.txt"), root.join("link_file")).unwrap();
    symlink(outside.join("new.txt"), root.join("dangling")).unwrap();
    symlink("/etc", root.join("etc")).unwrap();
    fs::create_dir_all(root.join("nested")).unwrap();
    symlink(outside, root.join("nested/up")).unwrap();
    fs::hard_link(outside.join("secret.txt"), root.join("hard")).unwrap();
    let before = ws.outside_state();

    let outside_abs = outside.join("abs.txt").display().to_string();
    let attempts: Vec<(&str, Value)> = vec![
        (
            "write",
            json!({"path": "../outside/dotdot.txt", "content": "x"}),
        ),
        ("write", json!({"path": outside_abs, "content": "x"})),
        (
            "write",
            json!({"path": "link_dir/through-dir.txt", "content": "x"}),
        ),
        ("write", json!({"path": "link_file", "content": "x"})),
        ("write", json!({"path": "dangling", "content": "x"})),
        (
            "write",
            json!({"path": "nested/up/deep/new.txt", "content": "x"}),
        ),
        (
            "write",
            json!({"path": "nested/../../outside/x.txt", "content": "x"}),
        ),
        (
            "write",
            json!({"path": "etc/pith-escape-test", "content": "x"}),
        ),
        (
            "write",
            json!({"path": "WS/../../outside/case.txt", "content": "x"}),
        ),
        (
            "write",
            json!({"path": "ok\u{0}/../../outside/nul.txt", "content": "x"}),
        ),
        (
            "write",
            json!({"path": format!("file://{}", outside.join("url.txt").display()), "content": "x"}),
        ),
        (
            "edit",
            json!({"path": "link_file", "edits": [{"oldText": "outside", "newText": "pwned"}]}),
        ),
        (
            "edit",
            json!({"path": "link_dir/secret.txt", "edits": [{"oldText": "outside", "newText": "pwned"}]}),
        ),
        (
            "edit",
            json!({"path": "../outside/secret.txt", "edits": [{"oldText": "outside", "newText": "pwned"}]}),
        ),
    ];
    let mut escapes = Vec::new();
    for (tool, args) in &attempts {
        let result = ws.call(tool, args.clone()).await;
        if !result.is_error {
            escapes.push(format!("{tool} {args}: {}", result.text_content()));
            continue;
        }
        let text = result.text_content();
        assert!(text.lines().count() <= 3, "{tool} {args}: {text}");
    }
    assert!(escapes.is_empty(), "escapes: {escapes:#?}");
    assert_eq!(
        ws.outside_state(),
        before,
        "a file outside the root changed"
    );
    assert!(!Path::new("/etc/pith-escape-test").exists());

    // A hard link inside the root is replaced by a write, never written through.
    let result = ws
        .call("write", json!({"path": "hard", "content": "replaced\n"}))
        .await;
    assert!(!result.is_error, "{}", result.text_content());
    assert_eq!(fs::read_to_string(root.join("hard")).unwrap(), "replaced\n");
    assert_eq!(
        fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "outside\n"
    );
}

#[tokio::test]
async fn the_refusal_names_the_path_where_it_resolves_and_the_roots() {
    let ws = contained(&[], false);
    symlink(&ws.outside, ws.root.join("link_dir")).unwrap();
    let result = ws
        .call("write", json!({"path": "link_dir/a.txt", "content": "x"}))
        .await;
    let text = result.text_content();
    assert!(result.is_error);
    assert!(text.contains("is outside the workspace"), "{text}");
    assert!(
        text.contains(&format!(
            "resolves to {}",
            ws.outside.join("a.txt").display()
        )),
        "{text}"
    );
    assert!(text.contains(&ws.root.display().to_string()), "{text}");
}

#[tokio::test]
async fn writes_inside_the_roots_still_work_including_new_directories() {
    let ws = contained(&[], false);
    let result = ws
        .call(
            "write",
            json!({"path": "src/new/mod.rs", "content": "fn a() {}\n"}),
        )
        .await;
    assert!(!result.is_error, "{}", result.text_content());
    let result = ws
        .call(
            "edit",
            json!({"path": "src/new/mod.rs", "edits": [{"oldText": "a()", "newText": "b()"}]}),
        )
        .await;
    assert!(!result.is_error, "{}", result.text_content());
    assert_eq!(
        fs::read_to_string(ws.root.join("src/new/mod.rs")).unwrap(),
        "fn b() {}\n"
    );
}

#[tokio::test]
async fn git_internals_and_protected_globs_cannot_be_written() {
    let ws = contained(&[".env", "secrets/**"], false);
    fs::write(ws.root.join(".git/config"), "[core]\n").unwrap();
    fs::write(ws.root.join(".env"), "KEY=1\n").unwrap();
    for (tool, args, needle) in [
        (
            "write",
            json!({"path": ".git/config", "content": "x"}),
            ".git/",
        ),
        (
            "write",
            json!({"path": ".git/hooks/pre-commit", "content": "x"}),
            ".git/",
        ),
        (
            "edit",
            json!({"path": ".git/config", "edits": [{"oldText": "core", "newText": "x"}]}),
            ".git/",
        ),
        (
            "write",
            json!({"path": ".env", "content": "KEY=2\n"}),
            "--protect .env",
        ),
        (
            "write",
            json!({"path": "app/.env", "content": "x"}),
            "--protect .env",
        ),
        (
            "write",
            json!({"path": "secrets/api/token", "content": "x"}),
            "secrets/**",
        ),
    ] {
        let result = ws.call(tool, args.clone()).await;
        assert!(result.is_error, "{tool} {args} was allowed");
        assert!(
            result.text_content().contains(needle),
            "{}",
            result.text_content()
        );
    }
    assert_eq!(
        fs::read_to_string(ws.root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(fs::read_to_string(ws.root.join(".env")).unwrap(), "KEY=1\n");
    assert!(!ws.root.join("secrets").exists());
    // Reading them is fine.
    let result = ws.call("read", json!({"path": ".env"})).await;
    assert!(!result.is_error, "{}", result.text_content());
}

#[tokio::test]
async fn reads_are_contained_only_when_configured() {
    let open = contained(&[], false);
    let result = open.call("read", json!({"path": "/etc/hostname"})).await;
    assert!(!result.is_error, "{}", result.text_content());

    let closed = contained(&[], true);
    symlink("/etc", closed.root.join("etc")).unwrap();
    for (tool, args) in [
        ("read", json!({"path": "/etc/hostname"})),
        ("read", json!({"path": "etc/hostname"})),
        ("read", json!({"path": "../outside/secret.txt"})),
        ("ls", json!({"path": ".."})),
        ("grep", json!({"pattern": "outside", "path": "../outside"})),
        ("find", json!({"pattern": "*.txt", "path": "etc"})),
    ] {
        let result = closed.call(tool, args.clone()).await;
        assert!(result.is_error, "{tool} {args}: {}", result.text_content());
        assert!(
            result.text_content().contains("outside the workspace"),
            "{}",
            result.text_content()
        );
    }
    let result = closed.call("ls", json!({})).await;
    assert!(!result.is_error, "{}", result.text_content());
}

/// Records what the file held when each write was approved.
struct SnapshotHook {
    path: PathBuf,
    seen: Mutex<Vec<String>>,
}

#[async_trait]
impl ToolHooks for SnapshotHook {
    async fn before_tool_call(&self, call: HookCall<'_>) -> HookDecision {
        if call.tool == "write" {
            let current = fs::read_to_string(&self.path).unwrap_or_default();
            self.seen.lock().unwrap().push(current);
            // Give a racing write every chance to slip in between check and write.
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        }
        HookDecision::Allow
    }
}

#[tokio::test]
async fn a_write_hook_runs_inside_the_queue_so_checks_and_writes_do_not_interleave() {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let path = root.join("f.txt");
    fs::write(&path, "v0").unwrap();
    let hook = Arc::new(SnapshotHook {
        path: path.clone(),
        seen: Mutex::new(Vec::new()),
    });
    let mut config = ToolConfig::default();
    config.overwrite_policy = OverwritePolicy::Allow;
    config.hooks.push(hook.clone());
    let tools = ToolSet::builder(Env::local())
        .cwd(&root)
        .config(config)
        .build();
    let session = tools.session();
    let calls = (1..=4).map(|n| {
        let session = session.clone();
        async move {
            session
                .call(
                    "write",
                    json!({"path": "f.txt", "content": format!("v{n}")}),
                    CallOptions::default(),
                )
                .await
        }
    });
    let results = futures_join_all(calls).await;
    assert!(results.iter().all(|result| !result.is_error));
    let seen = hook.seen.lock().unwrap().clone();
    // Each approval saw the previous write's result: v0, v1, v2, v3.
    assert_eq!(seen, vec!["v0", "v1", "v2", "v3"]);
    assert_eq!(fs::read_to_string(&path).unwrap(), "v4");
}

async fn futures_join_all<F: std::future::Future<Output = ToolResult> + Send + 'static>(
    futures: impl Iterator<Item = F>,
) -> Vec<ToolResult> {
    // Start every call before awaiting any, in order (the queue is FIFO by arrival).
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut results = Vec::new();
    for handle in handles {
        results.push(handle.await.unwrap());
    }
    results
}

/// Blocks `rm -rf`, rewrites `echo` commands, and tags every result.
struct Policy;

#[async_trait]
impl ToolHooks for Policy {
    async fn before_tool_call(&self, call: HookCall<'_>) -> HookDecision {
        let command = call
            .args
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if command.contains("rm -rf") {
            return HookDecision::Block("rm -rf is not allowed here".to_owned());
        }
        if call.tool == "write" {
            let mut args = call.args.clone();
            args["content"] = json!("rewritten by hook\n");
            return HookDecision::Rewrite(args);
        }
        if let Some(rest) = command.strip_prefix("echo ") {
            return HookDecision::Rewrite(json!({"command": format!("echo hooked {rest}")}));
        }
        HookDecision::Allow
    }

    async fn after_tool_call(&self, call: HookCall<'_>, mut result: ToolResult) -> ToolResult {
        result.details = Some(json!({"auditedTool": call.tool}));
        result
    }
}

#[tokio::test]
async fn hooks_block_rewrite_and_inspect_calls() {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let mut config = ToolConfig::default();
    config.overwrite_policy = OverwritePolicy::Allow;
    config.hooks.push(Arc::new(Policy));
    let tools = ToolSet::builder(Env::local())
        .cwd(&root)
        .config(config)
        .build();
    let session = tools.session();

    let blocked = session
        .call(
            "bash",
            json!({"command": "rm -rf /tmp/nothing"}),
            CallOptions::default(),
        )
        .await;
    assert!(blocked.is_error);
    assert_eq!(blocked.text_content(), "rm -rf is not allowed here");

    let echoed = session
        .call(
            "bash",
            json!({"command": "echo hi"}),
            CallOptions::default(),
        )
        .await;
    assert_eq!(echoed.text_content(), "hooked hi\n");
    assert_eq!(echoed.details, Some(json!({"auditedTool": "bash"})));

    let written = session
        .call(
            "write",
            json!({"path": "w.txt", "content": "original"}),
            CallOptions::default(),
        )
        .await;
    assert!(!written.is_error, "{}", written.text_content());
    assert_eq!(
        fs::read_to_string(root.join("w.txt")).unwrap(),
        "rewritten by hook\n"
    );
}

/// Moves every write to another file: refused, because the call was approved in the
/// original file's queue.
struct Mover;

#[async_trait]
impl ToolHooks for Mover {
    async fn before_tool_call(&self, call: HookCall<'_>) -> HookDecision {
        let mut args = call.args.clone();
        args["path"] = json!("elsewhere.txt");
        HookDecision::Rewrite(args)
    }
}

#[tokio::test]
async fn a_hook_may_not_move_a_write_to_another_file() {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let mut config = ToolConfig::default();
    config.hooks.push(Arc::new(Mover));
    let tools = ToolSet::builder(Env::local())
        .cwd(&root)
        .config(config)
        .build();
    let result = tools
        .session()
        .call(
            "write",
            json!({"path": "here.txt", "content": "x"}),
            CallOptions::default(),
        )
        .await;
    assert!(result.is_error);
    assert!(
        result.text_content().contains("changed the path"),
        "{}",
        result.text_content()
    );
    assert!(!root.join("here.txt").exists() && !root.join("elsewhere.txt").exists());
}

#[tokio::test]
async fn contained_reads_may_still_read_the_sessions_own_output_files() {
    let ws = contained(&[], true);
    let result = ws.call("bash", json!({"command": "seq 1 30000"})).await;
    let path = result.details.unwrap()["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!Path::new(&path).starts_with(&ws.root), "{path}");
    let read = ws.call("read", json!({"path": path, "limit": 2})).await;
    assert!(!read.is_error, "{}", read.text_content());
    assert!(
        read.text_content().starts_with("1\n2\n"),
        "{}",
        read.text_content()
    );
    // Another session did not create it: contained, it may not read it.
    let other = contained(&[], true);
    let refused = other.call("read", json!({"path": path})).await;
    assert!(refused.is_error, "{}", refused.text_content());
    let secret = ws.outside.join("secret.txt");
    let refused = ws.call("read", json!({"path": secret})).await;
    assert!(refused.is_error, "{}", refused.text_content());
}
