//! The write tool and the overwrite policy on LocalEnv.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use pith_tools::OverwritePolicy;
use serde_json::json;

use crate::file_tools::{Fixture, cancelled, replace_keeping_time};

#[tokio::test]
async fn write_creates_parents_and_reports_utf8_bytes() {
    let fx = Fixture::new();
    let result = fx
        .call(
            "write",
            json!({"path": "new/deep/dir/file.txt", "content": "héllo 😀\n"}),
        )
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        result.text_content(),
        "Successfully wrote 12 bytes to new/deep/dir/file.txt"
    );
    assert_eq!(fx.read("new/deep/dir/file.txt"), "héllo 😀\n");
}

#[tokio::test]
async fn write_refuses_to_overwrite_a_file_the_session_has_not_read() {
    let fx = Fixture::new();
    fx.write("a.txt", "original\n");
    let result = fx
        .call("write", json!({"path": "a.txt", "content": "new\n"}))
        .await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "a.txt already exists and has not been read in this session. Read it first, then write it (or use edit for targeted changes)."
    );
    assert_eq!(fx.read("a.txt"), "original\n");
    fx.call("read", json!({"path": "a.txt"})).await;
    let result = fx
        .call("write", json!({"path": "a.txt", "content": "new\n"}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(fx.read("a.txt"), "new\n");
    // Its own write counts as seen: writing again is fine.
    let again = fx
        .call("write", json!({"path": "a.txt", "content": "newer\n"}))
        .await;
    assert!(!again.is_error, "{again:?}");
}

#[tokio::test]
async fn write_refuses_a_file_that_changed_since_it_was_read() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1\n");
    fx.call("read", json!({"path": "a.txt"})).await;
    fx.write("a.txt", "v2\n");
    let result = fx
        .call("write", json!({"path": "a.txt", "content": "mine\n"}))
        .await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "a.txt has changed since this session last read it. Read it again before overwriting it.\nChanged since: line 1 changed.\nLine 1 is now: v2"
    );
    assert_eq!(fx.read("a.txt"), "v2\n");
}

#[tokio::test]
async fn a_read_through_a_symlink_counts_for_its_target() {
    let fx = Fixture::new();
    fx.write("real.txt", "x\n");
    std::os::unix::fs::symlink(fx.path("real.txt"), fx.path("alias.txt")).unwrap();
    fx.call("read", json!({"path": "alias.txt"})).await;
    let result = fx
        .call("write", json!({"path": "real.txt", "content": "y\n"}))
        .await;
    assert!(!result.is_error, "{result:?}");
}

#[tokio::test]
async fn a_new_session_has_read_nothing() {
    let fx = Fixture::new();
    fx.write("a.txt", "x\n");
    fx.call("read", json!({"path": "a.txt"})).await;
    let other = fx.tools.session();
    let result = other
        .call(
            "write",
            json!({"path": "a.txt", "content": "y\n"}),
            Default::default(),
        )
        .await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "a.txt already exists and has not been read in this session. Read it first, then write it (or use edit for targeted changes)."
    );
    assert_eq!(fx.read("a.txt"), "x\n");
}

#[tokio::test]
async fn the_allow_policy_overwrites_freely() {
    let fx = Fixture::with_policy(OverwritePolicy::Allow);
    fx.write("a.txt", "original\n");
    let result = fx
        .call("write", json!({"path": "a.txt", "content": "new\n"}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(fx.read("a.txt"), "new\n");
}

#[tokio::test]
async fn write_keeps_permissions_and_writes_through_symlinks() {
    let fx = Fixture::with_policy(OverwritePolicy::Allow);
    let script = fx.write("run.sh", "#!/bin/sh\n");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::symlink("run.sh", fx.path("link.sh")).unwrap();
    let result = fx
        .call(
            "write",
            json!({"path": "link.sh", "content": "#!/bin/sh\necho hi\n"}),
        )
        .await;
    assert!(!result.is_error, "{result:?}");
    assert!(
        fs::symlink_metadata(fx.path("link.sh"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fx.read("run.sh"), "#!/bin/sh\necho hi\n");
    assert_eq!(
        fs::metadata(&script).unwrap().permissions().mode() & 0o777,
        0o750
    );
}

#[tokio::test]
async fn write_to_a_directory_or_under_a_file_is_a_clear_error() {
    let fx = Fixture::new();
    fs::create_dir(fx.path("dir")).unwrap();
    fx.write("file.txt", "x");
    let result = fx
        .call("write", json!({"path": "dir", "content": "x"}))
        .await;
    assert!(result.is_error);
    assert_eq!(
        fx.redact(&result.text_content()),
        "Cannot write dir: <root>/dir is a directory. Write to a file path inside it."
    );
    let result = fx
        .call(
            "write",
            json!({"path": "file.txt/inner.txt", "content": "x"}),
        )
        .await;
    assert!(result.is_error);
    assert_eq!(
        fx.redact(&result.text_content()),
        "Cannot write file.txt/inner.txt: a parent of <root>/file.txt/inner.txt is a file, not a directory."
    );
    let result = fx
        .call(
            "write",
            json!({"path": "file.txt/deeper/inner.txt", "content": "x"}),
        )
        .await;
    assert!(result.is_error);
    assert!(
        result.text_content().contains("is a file, not a directory")
            || result.text_content().contains("a file is in the way"),
        "{}",
        result.text_content()
    );
}

#[tokio::test]
async fn a_cancelled_write_leaves_the_file_untouched() {
    let fx = Fixture::with_policy(OverwritePolicy::Allow);
    fx.write("a.txt", "old\n");
    let result = fx
        .session
        .call(
            "write",
            json!({"path": "a.txt", "content": "new\n"}),
            cancelled(),
        )
        .await;
    assert!(result.is_error);
    assert_eq!(result.text_content(), "Operation aborted");
    assert_eq!(fx.read("a.txt"), "old\n");
}

#[tokio::test]
async fn write_validates_its_arguments() {
    let fx = Fixture::new();
    let result = fx.call("write", json!({"path": "a.txt"})).await;
    assert!(result.is_error);
    assert!(
        result.text_content().contains("content is required"),
        "{}",
        result.text_content()
    );
}

#[tokio::test]
async fn a_large_file_is_remembered_by_size_and_time() {
    let fx = Fixture::new();
    let path = fx.write("big.log", "log line\n".repeat(5 << 20));
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    fx.call("read", json!({"path": "big.log", "limit": 1}))
        .await;
    // Touched since the read: refused.
    let later =
        fs::metadata(&path).unwrap().modified().unwrap() + std::time::Duration::from_secs(5);
    file.set_modified(later).unwrap();
    let result = fx
        .call("write", json!({"path": "big.log", "content": "small\n"}))
        .await;
    assert!(result.is_error);
    assert!(
        result.text_content().contains("has changed since"),
        "{}",
        result.text_content()
    );
    fx.call("read", json!({"path": "big.log", "limit": 1}))
        .await;
    let result = fx
        .call("write", json!({"path": "big.log", "content": "small\n"}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(fx.read("big.log"), "small\n");
}

#[tokio::test]
async fn a_large_file_replaced_by_one_of_the_same_size_and_time_is_noticed() {
    let fx = Fixture::new();
    let path = fx.write("big.log", "log line\n".repeat(5 << 20));
    fx.call("read", json!({"path": "big.log", "limit": 1}))
        .await;
    replace_keeping_time(&path, &"LOG LINE\n".repeat(5 << 20));
    let result = fx
        .call("write", json!({"path": "big.log", "content": "small\n"}))
        .await;
    assert!(result.is_error, "{result:?}");
    assert!(
        result.text_content().contains("has changed since"),
        "{}",
        result.text_content()
    );
    assert!(fx.read("big.log").starts_with("LOG LINE\n"));
}
