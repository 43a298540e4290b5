//! The edit tool on LocalEnv, and the mutation queue under concurrency.

use std::fs;
use std::sync::Arc;

use pith_env::{CancellationToken, LocalEnv};
use pith_tools::CallOptions;
use serde_json::json;

use crate::file_tools::{Fixture, cancelled};

/// On real files: an edit cancelled while it waits for its file's turn changes nothing.
#[tokio::test]
async fn an_edit_cancelled_while_queued_changes_nothing_on_disk() {
    let fx = Fixture::new();
    let path = fx.write("f.txt", "x\n");
    let queue = fx.tools.queue();
    let holder = queue.lock(&LocalEnv::new(), &path).await.unwrap();
    let cancel = CancellationToken::new();
    let options = CallOptions {
        cancel: cancel.clone(),
        ..CallOptions::default()
    };
    let session = fx.tools.session();
    let args = json!({"path": "f.txt", "edits": [{"oldText": "x", "newText": "y"}]});
    let call = tokio::spawn(async move { session.call("edit", args, options).await });
    // Explicit synchronisation: the edit has claimed its place behind the holder.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while queue.claims() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the edit never queued"
        );
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    cancel.cancel();
    drop(holder);
    let result = call.await.unwrap();
    assert!(result.is_error, "{result:?}");
    assert_eq!(result.text_content(), "Operation aborted");
    assert_eq!(fx.read("f.txt"), "x\n");
    assert_eq!(queue.claims(), 0);
}

#[tokio::test]
async fn edit_replaces_exact_text_and_reports_diff_and_patch() {
    let fx = Fixture::new();
    fx.write(
        "exact.py",
        "def greet(name):\n    return 'Hello, ' + name\n",
    );
    let result = fx
        .call(
            "edit",
            json!({"path": "exact.py", "edits": [{"oldText": "'Hello, '", "newText": "'Hi, '"}]}),
        )
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block(s) in exact.py."
    );
    assert_eq!(
        fx.read("exact.py"),
        "def greet(name):\n    return 'Hi, ' + name\n"
    );
    let details = result.details.unwrap();
    assert_eq!(
        details["diff"],
        " 1 def greet(name):\n-2     return 'Hello, ' + name\n+2     return 'Hi, ' + name"
    );
    assert_eq!(details["firstChangedLine"], 2);
    assert!(
        details["patch"]
            .as_str()
            .unwrap()
            .starts_with("--- exact.py\n+++ exact.py\n@@ -1,2 +1,2 @@\n")
    );
    assert_eq!(
        details["matches"],
        json!([{"index": 0, "tier": "exact", "startLine": 2, "endLine": 2}])
    );
}

#[tokio::test]
async fn a_fuzzy_match_adds_one_note_and_keeps_untouched_lines() {
    let fx = Fixture::new();
    fx.write(
        "curly.md",
        "Title \u{2013} draft  \nHe said \u{201C}hello\u{201D} to me.\nShe said \u{2018}bye\u{2019}.\n",
    );
    let result = fx
        .call(
            "edit",
            json!({"path": "curly.md", "edits": [{"oldText": "He said \"hello\" to me.", "newText": "He said \"hi\" to me."}]}),
        )
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block(s) in curly.md.\nNote: edits[0] matched after normalising quotes/whitespace at line 2."
    );
    assert_eq!(
        fx.read("curly.md"),
        "Title \u{2013} draft  \nHe said \"hi\" to me.\nShe said \u{2018}bye\u{2019}.\n"
    );
    assert_eq!(result.details.unwrap()["matches"][0]["tier"], "normalized");
}

#[tokio::test]
async fn edit_keeps_crlf_and_bom() {
    let fx = Fixture::new();
    fx.write("crlf.txt", "\u{FEFF}first\r\nsecond\r\nthird\r\n");
    let result = fx
        .call(
            "edit",
            json!({"path": "crlf.txt", "edits": [{"oldText": "second\nthird", "newText": "2nd\nthird"}]}),
        )
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(fx.read("crlf.txt"), "\u{FEFF}first\r\n2nd\r\nthird\r\n");
    assert_eq!(
        result.details.unwrap()["diff"],
        " 1 first\n-2 second\n+2 2nd\n 3 third"
    );
}

#[tokio::test]
async fn edit_reports_a_missing_match_with_the_closest_text_and_leaves_the_file() {
    let fx = Fixture::new();
    fx.write("f.txt", "one\ntwo\nthree\n");
    let result = fx
        .call(
            "edit",
            json!({"path": "f.txt", "edits": [{"oldText": "thre", "newText": "3"}, {"oldText": "fours", "newText": "4"}]}),
        )
        .await;
    assert!(result.is_error);
    let text = result.text_content();
    assert!(
        text.starts_with("Could not find edits[1] in f.txt."),
        "{text}"
    );
    assert!(text.contains("Read the file again"), "{text}");
    assert_eq!(fx.read("f.txt"), "one\ntwo\nthree\n");
}

#[tokio::test]
async fn edit_reports_an_ambiguous_match() {
    let fx = Fixture::new();
    fx.write("dup.txt", "foo = 1\nbar\nfoo = 1\n");
    let result = fx
        .call(
            "edit",
            json!({"path": "dup.txt", "edits": [{"oldText": "foo = 1", "newText": "foo = 3"}]}),
        )
        .await;
    assert!(result.is_error);
    assert!(
        result
            .text_content()
            .starts_with("Found 2 occurrences of the text in dup.txt"),
        "{}",
        result.text_content()
    );
}

#[tokio::test]
async fn edit_of_a_missing_file_suggests_similar_names() {
    let fx = Fixture::new();
    fx.write("ghost.txt.bak", "x");
    let result = fx
        .call(
            "edit",
            json!({"path": "ghost.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
        )
        .await;
    assert!(result.is_error);
    assert_eq!(
        fx.redact(&result.text_content()),
        "Could not edit file: ghost.txt. File not found.\nSimilar names in <root>: ghost.txt.bak"
    );
    fs::create_dir(fx.path("dir")).unwrap();
    let result = fx
        .call(
            "edit",
            json!({"path": "dir", "edits": [{"oldText": "a", "newText": "b"}]}),
        )
        .await;
    assert_eq!(
        result.text_content(),
        "Could not edit file: dir. It is a directory; edit changes files."
    );
}

#[tokio::test]
async fn edit_refuses_a_file_that_is_not_utf8_and_never_writes_replacement_characters() {
    let fx = Fixture::new();
    // 0x81 is a control character in every single-byte guess: no encoding is certain.
    fx.write("latin1.txt", b"caf\x81 au lait\n");
    let result = fx
        .call(
            "edit",
            json!({"path": "latin1.txt", "edits": [{"oldText": "au lait", "newText": "noir"}]}),
        )
        .await;
    assert!(result.is_error);
    assert!(
        result.text_content().starts_with(
            "Could not edit file: latin1.txt. It is not valid UTF-8 text (invalid byte at offset 3)"
        ),
        "{}",
        result.text_content()
    );
    assert_eq!(
        fs::read(fx.path("latin1.txt")).unwrap(),
        b"caf\x81 au lait\n"
    );
}

#[tokio::test]
async fn edit_repairs_legacy_and_misspelled_arguments() {
    let fx = Fixture::new();
    fx.write("f.txt", "a\nb\nc\n");
    let legacy = fx
        .call(
            "edit",
            json!({"path": "f.txt", "edits": "[{\"old_string\":\"a\",\"new_string\":\"A\"}]", "oldText": "c", "newText": "C"}),
        )
        .await;
    assert_eq!(
        legacy.text_content(),
        "Successfully replaced 2 block(s) in f.txt."
    );
    let single = fx
        .call(
            "edit",
            json!({"path": "f.txt", "edits": {"oldString": "b", "newString": "B"}}),
        )
        .await;
    assert!(!single.is_error, "{single:?}");
    assert_eq!(fx.read("f.txt"), "A\nB\nC\n");
    let empty = fx.call("edit", json!({"path": "f.txt", "edits": []})).await;
    assert!(empty.is_error);
    assert_eq!(
        empty.text_content(),
        "Edit tool input is invalid. edits must contain at least one replacement."
    );
}

#[tokio::test]
async fn edit_does_not_require_a_prior_read() {
    let fx = Fixture::new();
    fx.write("f.txt", "x\n");
    let result = fx
        .call(
            "edit",
            json!({"path": "f.txt", "edits": [{"oldText": "x", "newText": "y"}]}),
        )
        .await;
    assert!(!result.is_error, "{result:?}");
    // ...and counts as seen for a following write.
    let write = fx
        .call("write", json!({"path": "f.txt", "content": "z\n"}))
        .await;
    assert!(!write.is_error, "{write:?}");
}

#[tokio::test]
async fn a_cancelled_edit_leaves_the_file_untouched() {
    let fx = Fixture::new();
    fx.write("f.txt", "x\n");
    let result = fx
        .session
        .call(
            "edit",
            json!({"path": "f.txt", "edits": [{"oldText": "x", "newText": "y"}]}),
            cancelled(),
        )
        .await;
    assert_eq!(result.text_content(), "Operation aborted");
    assert_eq!(fx.read("f.txt"), "x\n");
}

fn lines(count: usize) -> String {
    (0..count).map(|n| format!("line {n}\n")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_concurrent_edits_of_distinct_lines_all_apply() {
    let fx = Arc::new(Fixture::new());
    fx.write("shared.txt", lines(200));
    let mut tasks = Vec::new();
    for n in 0..200 {
        let fx = fx.clone();
        tasks.push(tokio::spawn(async move {
            fx.call(
                "edit",
                json!({"path": "shared.txt", "edits": [{"oldText": format!("line {n}\n"), "newText": format!("edited {n}\n")}]}),
            )
            .await
        }));
    }
    for task in tasks {
        let result = task.await.unwrap();
        assert!(!result.is_error, "{result:?}");
    }
    let expected: String = (0..200).map(|n| format!("edited {n}\n")).collect();
    assert_eq!(fx.read("shared.txt"), expected);
    assert_eq!(fx.tools.queue().active_keys(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn edits_and_writes_through_a_symlink_alias_are_serialised_with_the_target() {
    let fx = Arc::new(Fixture::new());
    fx.write("dir/real.txt", lines(100));
    std::os::unix::fs::symlink(fx.path("dir"), fx.path("alias-dir")).unwrap();
    std::os::unix::fs::symlink(fx.path("dir/real.txt"), fx.path("alias.txt")).unwrap();
    let mut tasks = Vec::new();
    for n in 0..100 {
        let fx = fx.clone();
        let path = ["dir/real.txt", "alias.txt", "alias-dir/real.txt"][n % 3];
        tasks.push(tokio::spawn(async move {
            fx.call(
                "edit",
                json!({"path": path, "edits": [{"oldText": format!("line {n}\n"), "newText": format!("done {n}\n")}]}),
            )
            .await
        }));
    }
    for task in tasks {
        let result = task.await.unwrap();
        assert!(!result.is_error, "{result:?}");
    }
    let expected: String = (0..100).map(|n| format!("done {n}\n")).collect();
    assert_eq!(fx.read("dir/real.txt"), expected);
    assert!(
        fs::symlink_metadata(fx.path("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // New files through the symlinked directory share the queue with the target.
    let mut writers = Vec::new();
    for n in 0..20 {
        let fx = fx.clone();
        let path = if n % 2 == 0 {
            "alias-dir/new.txt"
        } else {
            "dir/new.txt"
        };
        writers.push(tokio::spawn(async move {
            fx.call(
                "write",
                json!({"path": path, "content": format!("{n}\n").repeat(1000)}),
            )
            .await
        }));
    }
    for writer in writers {
        let result = writer.await.unwrap();
        assert!(!result.is_error, "{result:?}");
    }
    let content = fx.read("dir/new.txt");
    let first = content.lines().next().unwrap().to_owned();
    assert!(
        content.lines().all(|line| line == first),
        "one whole write wins"
    );
    assert_eq!(content.lines().count(), 1000);
}

/// A plain exact edit of LF text is written from the old bytes and the replacements
/// (`edit/spliced.rs`); the same edit of the CRLF copy goes through the engine. Both
/// report the same: text, diff, patch, matches and first changed line.
#[tokio::test]
async fn a_spliced_exact_edit_reports_what_the_engine_reports() {
    let lines: Vec<String> = (0..40_000)
        .map(|n| format!("row {n:05} {}", "y".repeat(30)))
        .collect();
    let edits = json!([
        {"oldText": "row 30000 ", "newText": "row thirty thousand\nand one more "},
        {"oldText": "row 00002 yy", "newText": "second"},
        {"oldText": "row 39999 ", "newText": ""},
    ]);
    let mut reports = Vec::new();
    for ending in ["\n", "\r\n"] {
        let fx = Fixture::new();
        let old = lines.join(ending) + ending;
        fx.write("big.txt", &old);
        let result = fx
            .call("edit", json!({"path": "big.txt", "edits": edits}))
            .await;
        assert!(!result.is_error, "{result:?}");
        let expected = old
            .replacen(
                "row 30000 ",
                &format!("row thirty thousand{ending}and one more "),
                1,
            )
            .replacen("row 00002 yy", "second", 1)
            .replacen("row 39999 ", "", 1);
        assert!(fx.read("big.txt") == expected, "{ending:?}");
        let mut details = result.details.clone().unwrap();
        details.as_object_mut().unwrap().remove("encoding");
        reports.push((result.text_content(), details, result.structured.clone()));
    }
    assert_eq!(reports[0], reports[1]);
    assert_eq!(
        reports[0].1["matches"],
        json!([
            {"index": 0, "tier": "exact", "startLine": 30001, "endLine": 30001},
            {"index": 1, "tier": "exact", "startLine": 3, "endLine": 3},
            {"index": 2, "tier": "exact", "startLine": 40000, "endLine": 40000},
        ])
    );
}
