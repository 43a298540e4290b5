//! ls over MemoryEnv.

use pith_env::{Env, MemoryEnv};
use serde_json::json;

use crate::tool::{CallOptions, ToolResult};
use crate::toolset::ToolSet;

async fn ls(env: &MemoryEnv, args: serde_json::Value) -> ToolResult {
    ToolSet::builder(Env::memory(env.clone()))
        .cwd("/work")
        .build()
        .session()
        .call("ls", args, CallOptions::default())
        .await
}

#[tokio::test]
async fn lists_sorted_with_directory_slashes_and_dangling_links() {
    let env =
        MemoryEnv::with_files(&[("/work/b.txt", ""), ("/work/A.md", ""), ("/work/sub/x", "")]);
    env.symlink("/work/to-sub", "sub").unwrap();
    env.symlink("/work/broken", "nowhere").unwrap();
    assert_eq!(
        ls(&env, json!({})).await.text_content(),
        "A.md\nb.txt\nbroken\nsub/\nto-sub/"
    );
    assert_eq!(
        ls(&env, json!({"path": "sub/x"})).await.text_content(),
        "Not a directory: /work/sub/x"
    );
}
