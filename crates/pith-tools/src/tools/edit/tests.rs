//! edit over MemoryEnv, including cancellation while waiting in the queue.

use std::path::Path;
use std::time::Duration;

use pith_env::{CancellationToken, Env, MemoryEnv};
use serde_json::{Value, json};

use crate::tool::CallOptions;
use crate::toolset::ToolSet;

fn tools(env: &MemoryEnv) -> ToolSet {
    ToolSet::builder(Env::memory(env.clone()))
        .cwd("/work")
        .build()
}

fn edit_args(old: &str, new: &str) -> Value {
    json!({"path": "f.txt", "edits": [{"oldText": old, "newText": new}]})
}

#[tokio::test]
async fn applies_an_edit_and_writes_through_a_symlink() {
    let env = MemoryEnv::with_files(&[("/work/real.txt", "one\ntwo\n")]);
    env.symlink("/work/f.txt", "real.txt").unwrap();
    let result = tools(&env)
        .session()
        .call("edit", edit_args("two", "2"), CallOptions::default())
        .await;
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block(s) in f.txt."
    );
    assert_eq!(env.file("/work/real.txt").unwrap(), b"one\n2\n");
    assert_eq!(result.details.unwrap()["firstChangedLine"], 2);
}

#[tokio::test]
async fn a_call_cancelled_while_queued_changes_nothing() {
    let env = MemoryEnv::with_files(&[("/work/f.txt", "x\n")]);
    let tools = tools(&env);
    let holder = tools
        .queue()
        .lock(&env, Path::new("/work/f.txt"))
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    let options = CallOptions {
        cancel: cancel.clone(),
        ..CallOptions::default()
    };
    let session = tools.session();
    let call =
        tokio::spawn(async move { session.call("edit", edit_args("x", "y"), options).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    cancel.cancel();
    drop(holder);
    let result = call.await.unwrap();
    assert_eq!(result.text_content(), "Operation aborted");
    assert_eq!(env.file("/work/f.txt").unwrap(), b"x\n");
}

#[tokio::test]
async fn a_call_whose_future_is_dropped_while_queued_changes_nothing() {
    let env = MemoryEnv::with_files(&[("/work/f.txt", "x\n")]);
    let tools = tools(&env);
    let holder = tools
        .queue()
        .lock(&env, Path::new("/work/f.txt"))
        .await
        .unwrap();
    let session = tools.session();
    let call = session.call("edit", edit_args("x", "y"), CallOptions::default());
    assert!(
        tokio::time::timeout(Duration::from_millis(20), call)
            .await
            .is_err()
    );
    drop(holder);
    // The queued work still runs to release its turn, but sees its caller gone.
    let next = tools
        .queue()
        .lock(&env, Path::new("/work/f.txt"))
        .await
        .unwrap();
    drop(next);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(env.file("/work/f.txt").unwrap(), b"x\n");
    assert_eq!(tools.queue().active_keys(), 0);
}
