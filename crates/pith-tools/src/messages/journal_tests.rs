//! The journal's notes and reasons, word for word, from a real [`Journal`].

use std::path::Path;
use std::sync::Arc;

use pith_env::fault::{Fault, FaultyEnv, Operation};
use pith_env::{Env, FileSystem, FsErrorKind, MemoryEnv};

use crate::journal::{Before, CallTag, Change, FileState, Journal, JournalLimits};

fn journal(limits: JournalLimits) -> Journal {
    let fs: Arc<dyn FileSystem> = Arc::new(MemoryEnv::new());
    Journal::new(fs, "/state/j").with_limits(limits)
}

fn change<'a>(tag: &'a CallTag, before: Before<'a>) -> Change<'a> {
    Change {
        tag,
        index: 0,
        path: Path::new("/w/big"),
        before,
        before_hash: None,
        after: FileState::Absent,
        undoes: Vec::new(),
    }
}

async fn reason(journal: &Journal) -> String {
    match &journal.entries().await.unwrap()[0].before {
        FileState::NotUndoable { reason, .. } => reason.clone(),
        other => panic!("recorded as {other:?}"),
    }
}

#[tokio::test]
async fn over_the_per_file_cap() {
    let journal = journal(JournalLimits {
        total_bytes: 1 << 20,
        file_bytes: 100,
    });
    let tag = CallTag::new("write", "g1");
    let recorded = journal
        .record(change(&tag, Before::Content(&[b'x'; 101])))
        .await;
    assert_eq!(
        recorded.note.as_deref(),
        Some(
            "Note: /w/big is not undoable: its previous content (101 bytes) is over the journal's per-file cap of 100 bytes."
        )
    );
    assert_eq!(
        reason(&journal).await,
        "larger than the journal's per-file cap of 100 bytes"
    );
}

#[tokio::test]
async fn over_the_total_cap() {
    let journal = journal(JournalLimits {
        total_bytes: 5000,
        file_bytes: 1 << 20,
    });
    let tag = CallTag::new("edit", "g1");
    let recorded = journal
        .record(change(&tag, Before::Content(&[b'x'; 2000])))
        .await;
    assert_eq!(
        recorded.note.as_deref(),
        Some(
            "Note: /w/big is not undoable: its previous content (2000 bytes) is larger than the journal's total cap."
        )
    );
    assert_eq!(
        reason(&journal).await,
        "larger than the journal's total cap"
    );
}

#[tokio::test]
async fn a_journal_that_cannot_write() {
    let faulty = FaultyEnv::new(Env::memory(MemoryEnv::new()));
    let journal = Journal::new(faulty.env().fs, "/state/j");
    faulty.inject(Fault::on(Operation::WriteAtomic).fs(FsErrorKind::NoSpace));
    let tag = CallTag::new("apply_patch", "g1");
    let recorded = journal.record(change(&tag, Before::Content(b"old"))).await;
    assert_eq!(
        recorded.note.as_deref(),
        Some(
            "Note: this change is not undoable (undo journal: no space left on device: \
             /state/j/objects/cba06b5736faf67e54b07b561eae94395e774c517a7d910a54369e1263ccfbd4); \
             the change itself was made."
        )
    );
}
