//! write over MemoryEnv: the overwrite policy and what it remembers.

use pith_env::{Env, FileSystem, MemoryEnv};
use serde_json::json;

use crate::policy::WorkspacePolicy;
use crate::session::{OverwritePolicy, Session};
use crate::tool::CallOptions;
use crate::toolset::{ToolConfig, ToolSet};

fn session(env: &MemoryEnv, policy: OverwritePolicy) -> Session {
    ToolSet::builder(Env::memory(env.clone()))
        .cwd("/work")
        .overwrite_policy(policy)
        .build()
        .session()
}

#[tokio::test]
async fn requires_a_read_of_the_current_content_before_overwriting() {
    let env = MemoryEnv::with_files(&[("/work/a.txt", "v1\n")]);
    let session = session(&env, OverwritePolicy::RequireRead);
    let write = json!({"path": "a.txt", "content": "mine\n"});
    let refused = session
        .call("write", write.clone(), CallOptions::default())
        .await;
    assert!(refused.is_error);
    session
        .call("read", json!({"path": "a.txt"}), CallOptions::default())
        .await;
    assert!(
        session
            .has_seen(&env, std::path::Path::new("/work/a.txt"))
            .await
    );
    env.write_atomic(std::path::Path::new("/work/a.txt"), b"v2\n")
        .await
        .unwrap();
    let changed = session
        .call("write", write.clone(), CallOptions::default())
        .await;
    assert!(changed.text_content().contains("has changed since"));
    session
        .call("read", json!({"path": "a.txt"}), CallOptions::default())
        .await;
    let written = session.call("write", write, CallOptions::default()).await;
    assert_eq!(
        written.text_content(),
        "Successfully wrote 5 bytes to a.txt"
    );
    assert_eq!(env.file("/work/a.txt").unwrap(), b"mine\n");
}

#[tokio::test]
async fn creates_parent_directories_and_new_files_without_a_read() {
    let env = MemoryEnv::new();
    let session = session(&env, OverwritePolicy::RequireRead);
    let result = session
        .call(
            "write",
            json!({"path": "/work/a/b/c.txt", "content": "€"}),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        result.text_content(),
        "Successfully wrote 3 bytes to /work/a/b/c.txt"
    );
    assert_eq!(env.file("/work/a/b/c.txt").unwrap(), "€".as_bytes());
}

#[tokio::test]
async fn write_edit_and_read_respect_the_workspace_roots() {
    let env = MemoryEnv::with_files(&[("/work/a.txt", "a\n"), ("/etc/passwd", "root\n")]);
    env.symlink("/work/escape", "/etc").unwrap();
    let config = ToolConfig {
        overwrite_policy: OverwritePolicy::Allow,
        workspace: Some(WorkspacePolicy::new(vec!["/work".into()], &[], true).unwrap()),
        ..ToolConfig::default()
    };
    let session = ToolSet::builder(Env::memory(env.clone()))
        .cwd("/work")
        .config(config)
        .build()
        .session();
    let outside = [
        ("write", json!({"path": "/etc/passwd", "content": "x"})),
        ("write", json!({"path": "escape/new.txt", "content": "x"})),
        (
            "edit",
            json!({"path": "escape/passwd", "edits": [{"oldText": "root", "newText": "x"}]}),
        ),
        ("read", json!({"path": "/etc/passwd"})),
        ("ls", json!({"path": "/etc"})),
    ];
    for (tool, args) in outside {
        let result = session
            .call(tool, args.clone(), CallOptions::default())
            .await;
        assert!(result.is_error, "{tool} {args}");
        assert!(
            result.text_content().contains("outside the workspace"),
            "{}",
            result.text_content()
        );
    }
    assert_eq!(env.file("/etc/passwd").unwrap(), b"root\n");
    let inside = session
        .call(
            "write",
            json!({"path": "a.txt", "content": "b\n"}),
            CallOptions::default(),
        )
        .await;
    assert!(!inside.is_error, "{inside:?}");
}

#[tokio::test]
async fn with_overwrite_allowed_the_staleness_check_still_guards_a_file_the_session_saw() {
    let env = MemoryEnv::with_files(&[("/work/seen.txt", "v1\n"), ("/work/never.txt", "x\n")]);
    let write = |path: &str| json!({"path": path, "content": "mine\n"});
    for (stale_check, refused) in [(true, true), (false, false)] {
        let session = ToolSet::builder(Env::memory(env.clone()))
            .cwd("/work")
            .overwrite_policy(OverwritePolicy::Allow)
            .stale_check(stale_check)
            .build()
            .session();
        env.write_atomic(std::path::Path::new("/work/seen.txt"), b"v1\n")
            .await
            .unwrap();
        session
            .call("read", json!({"path": "seen.txt"}), CallOptions::default())
            .await;
        env.write_atomic(std::path::Path::new("/work/seen.txt"), b"v2\n")
            .await
            .unwrap();
        let result = session
            .call("write", write("seen.txt"), CallOptions::default())
            .await;
        assert_eq!(result.is_error, refused, "{}", result.text_content());
        let never = session
            .call("write", write("never.txt"), CallOptions::default())
            .await;
        assert!(!never.is_error, "{}", never.text_content());
    }
}

#[tokio::test]
async fn keeps_the_encoding_of_the_file_it_replaces() {
    // "déjà vu" in windows-1252, with a curly apostrophe (0x92) for a confident guess.
    let env = MemoryEnv::with_files(&[("/work/fr.txt", "")]);
    env.write_atomic(
        std::path::Path::new("/work/fr.txt"),
        b"d\xe9j\xe0 vu, c\x92est la vie\nl\x92\xe9t\xe9 est chaud\n",
    )
    .await
    .unwrap();
    let session = session(&env, OverwritePolicy::RequireRead);
    session
        .call("read", json!({"path": "fr.txt"}), CallOptions::default())
        .await;
    let result = session
        .call(
            "write",
            json!({"path": "fr.txt", "content": "été\n"}),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        result.text_content(),
        "Successfully wrote 4 bytes to fr.txt in windows-1252"
    );
    assert_eq!(env.file("/work/fr.txt").unwrap(), b"\xe9t\xe9\n");
}

/// A file over the size `write` reads as a stream (1 MiB): 2 MiB of `line(n)`.
fn two_mib(line: impl Fn(usize) -> String) -> String {
    let mut out = String::new();
    for n in 0.. {
        if out.len() >= 2 << 20 {
            break;
        }
        out.push_str(&line(n));
    }
    out
}

#[tokio::test]
async fn a_streamed_overwrite_still_refuses_a_changed_file_and_names_the_lines() {
    let old = two_mib(|n| format!("line {n:07} of the file\n"));
    let env = MemoryEnv::with_files(&[("/work/big.txt", old.as_str())]);
    let session = session(&env, OverwritePolicy::RequireRead);
    session
        .call("read", json!({"path": "big.txt"}), CallOptions::default())
        .await;
    // Line 50001 changes, the size stays.
    let changed = old.replacen("line 0050000 of", "LINE 0050000 of", 1);
    env.write_atomic(std::path::Path::new("/work/big.txt"), changed.as_bytes())
        .await
        .unwrap();
    let write = json!({"path": "big.txt", "content": "mine\n"});
    let refused = session
        .call("write", write.clone(), CallOptions::default())
        .await;
    assert!(refused.is_error);
    let text = refused.text_content();
    assert!(text.contains("has changed since"), "{text}");
    assert!(text.contains("50001"), "{text}");
    assert!(env.file("/work/big.txt").unwrap() == changed.as_bytes());
    session
        .call("read", json!({"path": "big.txt"}), CallOptions::default())
        .await;
    let written = session.call("write", write, CallOptions::default()).await;
    assert!(!written.is_error, "{}", written.text_content());
    assert_eq!(env.file("/work/big.txt").unwrap(), b"mine\n");
}

#[tokio::test]
async fn a_streamed_overwrite_keeps_a_legacy_encoding() {
    let line = b"d\xe9j\xe0 vu, c\x92est la vie\n";
    let old: Vec<u8> = line.repeat((2 << 20) / line.len() + 1);
    let env = MemoryEnv::with_files(&[("/work/fr.txt", "")]);
    env.write_atomic(std::path::Path::new("/work/fr.txt"), &old)
        .await
        .unwrap();
    let session = session(&env, OverwritePolicy::Allow);
    let result = session
        .call(
            "write",
            json!({"path": "fr.txt", "content": "été\n"}),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        result.text_content(),
        "Successfully wrote 4 bytes to fr.txt in windows-1252"
    );
    assert_eq!(env.file("/work/fr.txt").unwrap(), b"\xe9t\xe9\n");
}
