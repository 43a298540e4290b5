//! A before-hook that calls the file tools itself, in the same tool set.
//!
//! A read takes its place in arrival order when it arrives, and its
//! before-hooks run before it enters its file's queue; every later call on
//! the same file system waits for that place. A file tool called from the
//! hook would wait for the read, which waits for the hook: such a call is
//! refused at once with a message saying so, while tools that do not queue
//! (ls, grep, find, bash) still run.

use std::fs;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use pith_env::Env;
use pith_tools::{
    CallOptions, HookCall, HookDecision, OverwritePolicy, Session, ToolConfig, ToolHooks, ToolSet,
};
use serde_json::json;
use tempfile::TempDir;

/// Before each read, writes a file and lists the directory through the
/// same session, and records both results.
#[derive(Default)]
struct Reentrant {
    session: OnceLock<Session>,
    nested: Mutex<Vec<(bool, String)>>,
}

#[async_trait]
impl ToolHooks for Reentrant {
    async fn before_tool_call(&self, call: HookCall<'_>) -> HookDecision {
        if call.tool != "read" {
            return HookDecision::Allow;
        }
        let session = self.session.get().unwrap();
        for (tool, args) in [
            ("write", json!({"path": "audit.txt", "content": "read\n"})),
            ("ls", json!({})),
        ] {
            let result = session.call(tool, args, CallOptions::default()).await;
            self.nested
                .lock()
                .unwrap()
                .push((result.is_error, result.text_content()));
        }
        HookDecision::Allow
    }
}

#[tokio::test]
async fn a_read_hook_calling_a_file_tool_of_its_own_tool_set_gets_an_error_not_a_hang() {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let hook = Arc::new(Reentrant::default());
    let mut config = ToolConfig::default();
    config.overwrite_policy = OverwritePolicy::Allow;
    config.hooks.push(hook.clone());
    let session = ToolSet::builder(Env::local())
        .cwd(&root)
        .config(config)
        .build()
        .session();
    hook.session.set(session.clone()).ok().unwrap();

    // Without the check this call never returns: the bound only turns a hang
    // into a failure.
    let read = tokio::time::timeout(
        Duration::from_secs(10),
        session.call("read", json!({"path": "a.txt"}), CallOptions::default()),
    )
    .await
    .expect("the read and the write its hook made waited for each other");
    assert!(!read.is_error, "{}", read.text_content());
    assert_eq!(read.text_content(), "alpha\n");

    let nested = hook.nested.lock().unwrap().clone();
    let (write_failed, write_text) = &nested[0];
    assert!(*write_failed, "{write_text}");
    assert_eq!(
        write_text,
        "write was called from a before_tool_call hook of read, which holds its place in the file queue until its hooks return, so write would wait for it forever. Call file tools after the read (in an after_tool_call hook) or through a tool set with a queue of its own."
    );
    assert!(!root.join("audit.txt").exists());
    let (ls_failed, ls_text) = &nested[1];
    assert!(!*ls_failed, "{ls_text}");
    assert!(ls_text.contains("a.txt"), "{ls_text}");

    // Outside the hook the same session writes as usual.
    let write = session
        .call(
            "write",
            json!({"path": "audit.txt", "content": "later\n"}),
            CallOptions::default(),
        )
        .await;
    assert!(!write.is_error, "{}", write.text_content());
}
