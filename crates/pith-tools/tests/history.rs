//! The undo journal and apply_patch on LocalEnv over real files in temp dirs.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pith_env::fault::{Fault, FaultyEnv, Operation};
use pith_env::{Env, FileSystem, FsErrorKind, LocalEnv};
use pith_tools::{
    CallOptions, EntryStatus, Journal, OverwritePolicy, Session, ToolConfig, ToolResult, ToolSet,
    UndoOptions, UndoOutcome, UndoSelector,
};
use serde_json::{Value, json};
use tempfile::TempDir;

const TOOLS: [&str; 9] = [
    "read",
    "bash",
    "edit",
    "write",
    "grep",
    "find",
    "ls",
    "apply_patch",
    "undo",
];

/// A workspace, a journal beside it, and a session over both.
struct History {
    _dir: TempDir,
    root: PathBuf,
    state: PathBuf,
    tools: ToolSet,
    session: Session,
}

impl History {
    fn new() -> History {
        History::over(Env::local(), None)
    }

    /// Over `env` (the workspace's ports); the journal always uses the local file system.
    fn over(env: Env, dir: Option<TempDir>) -> History {
        let dir = dir.unwrap_or_else(|| TempDir::new().unwrap());
        let base = fs::canonicalize(dir.path()).unwrap();
        let root = base.join("work");
        let state = base.join("state");
        fs::create_dir_all(&root).unwrap();
        let tools = toolset(env, &root, &state);
        let session = tools.session();
        History {
            _dir: dir,
            root,
            state,
            tools,
            session,
        }
    }

    /// A new tool set and session over the same workspace and journal directory:
    /// what a restarted pith sees.
    fn restart(&mut self) {
        self.tools = toolset(Env::local(), &self.root, &self.state);
        self.session = self.tools.session();
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn put(&self, relative: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    fn bytes(&self, relative: &str) -> Vec<u8> {
        fs::read(self.path(relative)).unwrap()
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.session.call(tool, args, CallOptions::default()).await
    }

    async fn call_in(&self, group: &str, tool: &str, args: Value) -> ToolResult {
        let options = CallOptions {
            group: Some(group.to_owned()),
            ..CallOptions::default()
        };
        self.session.call(tool, args, options).await
    }

    async fn undo_last(
        &self,
        force: bool,
    ) -> Result<pith_tools::UndoReport, pith_tools::ToolError> {
        self.session
            .undo(
                UndoOptions {
                    selector: UndoSelector::Last(1),
                    force,
                    dry_run: false,
                },
                None,
            )
            .await
    }
}

fn toolset(env: Env, root: &Path, state: &Path) -> ToolSet {
    let mut config = ToolConfig::default();
    config.overwrite_policy = OverwritePolicy::Allow;
    let local: Arc<dyn FileSystem> = Arc::new(LocalEnv::new());
    config.journal = Some(Arc::new(Journal::new(local, state.join("journal"))));
    ToolSet::builder(env)
        .cwd(root)
        .tools(&TOOLS)
        .config(config)
        .build()
}

fn ok(result: &ToolResult) -> String {
    assert!(!result.is_error, "{}", result.text_content());
    result.text_content()
}

#[tokio::test]
async fn undo_of_an_edit_restores_the_bytes_exactly_crlf_and_bom() {
    let history = History::new();
    let original = b"\xEF\xBB\xBFfirst line\r\nsecond \xE2\x80\x9Cquoted\xE2\x80\x9D\r\nthird\r\n";
    history.put("a.txt", original);
    ok(&history
        .call(
            "edit",
            json!({"path": "a.txt", "edits": [{"oldText": "second \"quoted\"", "newText": "changed"}]}),
        )
        .await);
    assert_eq!(
        history.bytes("a.txt"),
        b"\xEF\xBB\xBFfirst line\r\nchanged\r\nthird\r\n"
    );
    let report = history.undo_last(false).await.unwrap();
    assert_eq!(report.files.len(), 1);
    assert_eq!(report.files[0].outcome, UndoOutcome::Restored);
    assert!(history.bytes("a.txt") == original);
}

#[tokio::test]
async fn undo_of_a_write_that_created_a_file_removes_it() {
    let history = History::new();
    ok(&history
        .call(
            "write",
            json!({"path": "new/dir/b.txt", "content": "hello"}),
        )
        .await);
    assert!(history.path("new/dir/b.txt").exists());
    let report = history.undo_last(false).await.unwrap();
    assert_eq!(report.files[0].outcome, UndoOutcome::Removed);
    assert!(!history.path("new/dir/b.txt").exists());
}

#[tokio::test]
async fn undo_refuses_a_file_changed_since_and_force_overrides() {
    let history = History::new();
    history.put("c.txt", "one\n");
    ok(&history
        .call("write", json!({"path": "c.txt", "content": "two\n"}))
        .await);
    history.put("c.txt", "someone else\n");
    let error = history.undo_last(false).await.unwrap_err();
    assert!(
        error.message.starts_with("Undo refused: "),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("c.txt changed since"),
        "{}",
        error.message
    );
    assert!(error.message.contains("force"), "{}", error.message);
    assert_eq!(history.bytes("c.txt"), b"someone else\n");
    let report = history.undo_last(true).await.unwrap();
    assert_eq!(report.files[0].outcome, UndoOutcome::Restored);
    assert_eq!(history.bytes("c.txt"), b"one\n");
}

#[tokio::test]
async fn undoing_an_undo_redoes_the_change() {
    let history = History::new();
    history.put("d.txt", "before\n");
    ok(&history
        .call("write", json!({"path": "d.txt", "content": "after\n"}))
        .await);
    let undone = history.undo_last(false).await.unwrap();
    assert_eq!(history.bytes("d.txt"), b"before\n");
    let call = undone.call.unwrap();
    let redone = history
        .session
        .undo(
            UndoOptions {
                selector: UndoSelector::Call(call),
                force: false,
                dry_run: false,
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!(redone.files[0].outcome, UndoOutcome::Restored);
    assert_eq!(history.bytes("d.txt"), b"after\n");
}

#[tokio::test]
async fn undo_of_the_last_group_reverts_every_call_of_the_group_and_only_those() {
    let history = History::new();
    history.put("e.txt", "e0\n");
    history.put("f.txt", "f0\n");
    ok(&history
        .call_in("g1", "write", json!({"path": "e.txt", "content": "e1\n"}))
        .await);
    ok(&history
        .call_in("g2", "write", json!({"path": "e.txt", "content": "e2\n"}))
        .await);
    ok(&history
        .call_in("g2", "write", json!({"path": "f.txt", "content": "f2\n"}))
        .await);
    let dry = history
        .session
        .undo(
            UndoOptions {
                selector: UndoSelector::Last(1),
                force: false,
                dry_run: true,
            },
            None,
        )
        .await
        .unwrap();
    assert!(dry.dry_run);
    assert!(
        dry.files[0].patch.contains("-e2\n+e1\n"),
        "{}",
        dry.files[0].patch
    );
    assert_eq!(history.bytes("e.txt"), b"e2\n");
    history.undo_last(false).await.unwrap();
    assert_eq!(history.bytes("e.txt"), b"e1\n");
    assert_eq!(history.bytes("f.txt"), b"f0\n");
}

#[tokio::test]
async fn the_journal_survives_a_restart() {
    let mut history = History::new();
    history.put("g.txt", "kept\n");
    ok(&history
        .call("write", json!({"path": "g.txt", "content": "replaced\n"}))
        .await);
    history.restart();
    let entries = history.session.journal_entries().await.unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].status, EntryStatus::Current);
    history.undo_last(false).await.unwrap();
    assert_eq!(history.bytes("g.txt"), b"kept\n");
}

#[tokio::test]
async fn a_crash_between_the_journal_and_the_rename_loses_nothing() {
    // The workspace's write fails where a crash would stop it: after the journal
    // recorded the change and before the file was replaced.
    let faulty = FaultyEnv::new(Env::local());
    let history = History::over(faulty.env(), None);
    history.put("h.txt", "old content\n");
    faulty.inject(Fault::on(Operation::WriteAtomic).fs(FsErrorKind::Other));
    let result = history
        .call(
            "write",
            json!({"path": "h.txt", "content": "new content\n"}),
        )
        .await;
    assert!(result.is_error);
    assert_eq!(history.bytes("h.txt"), b"old content\n");
    let entries = history.session.journal_entries().await.unwrap();
    assert_eq!(entries.len(), 1, "the journal recorded the change first");
    assert_eq!(entries[0].status, EntryStatus::Before);
    let report = history.undo_last(false).await.unwrap();
    assert_eq!(report.files[0].outcome, UndoOutcome::Unchanged);
    assert_eq!(history.bytes("h.txt"), b"old content\n");
}

#[tokio::test]
async fn apply_patch_adds_deletes_updates_and_moves_in_one_patch() {
    let history = History::new();
    history.put("del.txt", "bye\n");
    history.put("upd.txt", "a\nb\nc\n");
    history.put("src/old.rs", "fn x() {}\n");
    let patch = "*** Begin Patch\n\
                 *** Add File: added/new.txt\n\
                 +fresh\n\
                 *** Delete File: del.txt\n\
                 *** Update File: upd.txt\n\
                 @@\n a\n-b\n+B\n c\n\
                 *** Update File: src/old.rs\n\
                 *** Move to: src/new.rs\n\
                 @@\n-fn x() {}\n+fn y() {}\n\
                 *** End Patch\n";
    let result = history.call("apply_patch", json!({"patch": patch})).await;
    let text = ok(&result);
    assert!(text.contains("A added/new.txt"), "{text}");
    assert!(text.contains("R src/old.rs -> src/new.rs"), "{text}");
    assert_eq!(history.bytes("added/new.txt"), b"fresh\n");
    assert!(!history.path("del.txt").exists());
    assert_eq!(history.bytes("upd.txt"), b"a\nB\nc\n");
    assert!(!history.path("src/old.rs").exists());
    assert_eq!(history.bytes("src/new.rs"), b"fn y() {}\n");
    let details = result.details.unwrap();
    let files = details["files"].as_array().unwrap();
    assert_eq!(files.len(), 4);
    assert_eq!(files[2]["hunks"][0]["tier"], "exact");
    assert!(files[2]["patch"].as_str().unwrap().contains("-b\n+B"));
    // One undo puts all four back.
    history.undo_last(false).await.unwrap();
    assert!(!history.path("added/new.txt").exists());
    assert_eq!(history.bytes("del.txt"), b"bye\n");
    assert_eq!(history.bytes("upd.txt"), b"a\nb\nc\n");
    assert_eq!(history.bytes("src/old.rs"), b"fn x() {}\n");
    assert!(!history.path("src/new.rs").exists());
}

#[tokio::test]
async fn a_patch_whose_third_file_fails_leaves_the_first_two_untouched() {
    let history = History::new();
    history.put("one.txt", "1\n");
    history.put("two.txt", "2\n");
    history.put("three.txt", "3\n");
    let patch = "*** Begin Patch\n\
                 *** Update File: one.txt\n@@\n-1\n+uno\n\
                 *** Update File: two.txt\n@@\n-2\n+dos\n\
                 *** Update File: three.txt\n@@\n-not there\n+tres\n\
                 *** End Patch";
    let result = history.call("apply_patch", json!({"patch": patch})).await;
    assert!(result.is_error);
    let text = result.text_content();
    assert!(text.contains("hunk 1 (patch line 11)"), "{text}");
    assert!(text.contains("three.txt"), "{text}");
    assert!(text.contains("no file was changed"), "{text}");
    assert_eq!(history.bytes("one.txt"), b"1\n");
    assert_eq!(history.bytes("two.txt"), b"2\n");
    assert_eq!(history.bytes("three.txt"), b"3\n");
}

#[tokio::test]
async fn a_patch_whose_commit_fails_half_way_puts_back_the_files_already_changed() {
    let faulty = FaultyEnv::new(Env::local());
    let history = History::over(faulty.env(), None);
    history.put("p.txt", "p\n");
    history.put("q.txt", "q\n");
    // The second file's atomic write fails (the first already committed).
    faulty.inject(
        Fault::on(Operation::WriteAtomic)
            .nth(2)
            .fs(FsErrorKind::NoSpace),
    );
    let patch = "*** Begin Patch\n*** Update File: p.txt\n@@\n-p\n+P\n*** Update File: q.txt\n@@\n-q\n+Q\n*** End Patch";
    let result = history.call("apply_patch", json!({"patch": patch})).await;
    assert!(result.is_error, "{}", result.text_content());
    assert!(
        result.text_content().contains("were put back"),
        "{}",
        result.text_content()
    );
    assert_eq!(history.bytes("p.txt"), b"p\n");
    assert_eq!(history.bytes("q.txt"), b"q\n");
}

#[tokio::test]
async fn apply_patch_locates_fuzzy_context_and_names_the_rung() {
    let history = History::new();
    history.put(
        "f.py",
        "def f():\n\tprint(\u{201C}hi\u{201D})\n\treturn 1\n",
    );
    let patch = "*** Begin Patch\n*** Update File: f.py\n@@ def f():\n     print(\"hi\")\n-    return 1\n+    return 2\n*** End Patch";
    let result = history.call("apply_patch", json!({"patch": patch})).await;
    let text = ok(&result);
    assert!(text.contains("hunk 1 matched after"), "{text}");
    assert_eq!(
        String::from_utf8(history.bytes("f.py")).unwrap(),
        "def f():\n\tprint(\u{201C}hi\u{201D})\n\treturn 2\n"
    );
}

#[tokio::test]
async fn a_malformed_envelope_gets_an_error_naming_the_line() {
    let history = History::new();
    let patch = "*** Begin Patch\n*** Update File: x.txt\n@@\n a\nb without prefix\n*** End Patch";
    let result = history.call("apply_patch", json!({"patch": patch})).await;
    assert!(result.is_error);
    let text = result.text_content();
    assert!(text.starts_with("Invalid patch: patch line 5: "), "{text}");
}

#[tokio::test]
async fn apply_patch_refuses_a_protected_path_and_changes_nothing() {
    let history = History::new();
    history.put("ok.txt", "x\n");
    fs::create_dir_all(history.path(".git")).unwrap();
    let patch = "*** Begin Patch\n*** Update File: ok.txt\n@@\n-x\n+y\n*** Add File: .git/config\n+evil\n*** End Patch";
    let result = history.call("apply_patch", json!({"patch": patch})).await;
    assert!(result.is_error);
    assert!(
        result.text_content().contains(".git"),
        "{}",
        result.text_content()
    );
    assert_eq!(history.bytes("ok.txt"), b"x\n");
    assert!(!history.path(".git/config").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_patches_on_overlapping_files_never_deadlock() {
    let history = History::new();
    let names: Vec<String> = (0..6).map(|i| format!("n{i}.txt")).collect();
    for name in &names {
        history.put(name, "0\n");
    }
    // 100 random pairs of patches, each touching two or three of six files in
    // opposite orders, run at once; the test finishing is the assertion.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut tasks = Vec::new();
    for _ in 0..100 {
        for _ in 0..2 {
            let count = 2 + (next() % 2) as usize;
            let mut chosen: Vec<&String> = Vec::new();
            while chosen.len() < count {
                let name = &names[(next() % names.len() as u64) as usize];
                if !chosen.contains(&name) {
                    chosen.push(name);
                }
            }
            let mut patch = String::from("*** Begin Patch\n");
            for name in chosen {
                patch.push_str(&format!("*** Update File: {name}\n@@\n+x\n"));
            }
            patch.push_str("*** End Patch\n");
            let session = history.session.clone();
            tasks.push(tokio::spawn(async move {
                session
                    .call(
                        "apply_patch",
                        json!({"patch": patch}),
                        CallOptions::default(),
                    )
                    .await
            }));
        }
    }
    let mut applied = 0;
    for task in tasks {
        let result = task.await.unwrap();
        assert!(!result.is_error, "{}", result.text_content());
        applied += 1;
    }
    assert_eq!(applied, 200);
    let lines: usize = names
        .iter()
        .map(|name| history.bytes(name).iter().filter(|b| **b == b'\n').count() - 1)
        .sum();
    assert!(lines >= 400, "every hunk landed: {lines}");
}
