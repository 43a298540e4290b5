//! read over MemoryEnv: the tool logic without a disk.

use pith_env::{Env, MemoryEnv};
use serde_json::json;

use crate::tool::{CallOptions, ToolResult};
use crate::toolset::ToolSet;

async fn read(env: &MemoryEnv, args: serde_json::Value) -> ToolResult {
    ToolSet::builder(Env::memory(env.clone()))
        .cwd("/work")
        .build()
        .session()
        .call("read", args, CallOptions::default())
        .await
}

#[tokio::test]
async fn pages_through_a_file_counting_real_lines() {
    let env = MemoryEnv::with_files(&[("/work/ab.txt", "a\nb\n")]);
    assert_eq!(
        read(&env, json!({"path": "ab.txt"})).await.text_content(),
        "a\nb\n"
    );
    assert_eq!(
        read(&env, json!({"path": "ab.txt", "limit": 1}))
            .await
            .text_content(),
        "a\n\n[1 more lines in file. Use offset=2 to continue.]"
    );
    let past = read(&env, json!({"path": "/work/ab.txt", "offset": 3})).await;
    assert!(past.is_error);
    assert_eq!(
        past.text_content(),
        "Offset 3 is beyond end of file (2 lines total)"
    );
}

#[tokio::test]
async fn expands_the_home_directory() {
    let env = MemoryEnv::with_files(&[("/home/user/notes.md", "hi\n")]);
    assert_eq!(
        read(&env, json!({"path": "~/notes.md"}))
            .await
            .text_content(),
        "hi\n"
    );
    assert_eq!(
        read(&env, json!({"path": "@~/notes.md"}))
            .await
            .text_content(),
        "hi\n"
    );
}

#[tokio::test]
async fn follows_symlinks_and_reports_dangling_ones_as_missing() {
    let env = MemoryEnv::with_files(&[("/work/real.txt", "real\n")]);
    env.symlink("/work/link.txt", "real.txt").unwrap();
    env.symlink("/work/dangling.txt", "gone.txt").unwrap();
    assert_eq!(
        read(&env, json!({"path": "link.txt"})).await.text_content(),
        "real\n"
    );
    let dangling = read(&env, json!({"path": "dangling.txt"})).await;
    assert!(dangling.is_error);
    assert!(
        dangling
            .text_content()
            .starts_with("File not found: /work/dangling.txt"),
        "{}",
        dangling.text_content()
    );
}

#[tokio::test]
async fn tells_directories_binaries_and_missing_files_apart() {
    let env = MemoryEnv::with_files(&[("/work/src/lib.rs", "x"), ("/work/blob", "\0\x01\x02")]);
    assert_eq!(
        read(&env, json!({"path": "src"})).await.text_content(),
        "/work/src is a directory; read only reads files. Use ls to list it."
    );
    assert_eq!(
        read(&env, json!({"path": "blob"})).await.text_content(),
        "blob is a binary file (3B); read cannot show it. Inspect it with bash, e.g. xxd blob | head."
    );
    assert_eq!(
        read(&env, json!({"path": "src/lib.rs.bak"}))
            .await
            .text_content(),
        "File not found: /work/src/lib.rs.bak\nSimilar names in /work/src: lib.rs"
    );
}

/// A file under 64 KiB is read whole at once, but only its first 8 KiB
/// decide whether it is binary, as when it was read in 8 KiB steps: a NUL
/// byte further on is shown as text, and the line count is still the file's.
#[tokio::test]
async fn a_nul_byte_past_the_first_8_kib_of_a_small_file_does_not_make_it_binary() {
    let content = format!("first\n{}\n\0tail\n", "x".repeat(9000));
    let env = MemoryEnv::with_files(&[("/work/late-nul.txt", content.as_str())]);
    let result = read(&env, json!({"path": "late-nul.txt", "limit": 1})).await;
    assert!(!result.is_error, "{}", result.text_content());
    assert_eq!(
        result.text_content(),
        "first\n\n[2 more lines in file. Use offset=2 to continue.]"
    );
    let last = read(&env, json!({"path": "late-nul.txt", "offset": 3})).await;
    assert_eq!(last.text_content(), "\0tail\n");
}
