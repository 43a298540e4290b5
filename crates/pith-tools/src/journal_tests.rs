use std::path::Path;
use std::sync::Arc;

use pith_env::fault::{Fault, FaultyEnv, Operation};
use pith_env::{Env, FileSystem, FsErrorKind, MemoryEnv};

use super::*;

fn journal(limits: JournalLimits) -> (Arc<dyn FileSystem>, Journal) {
    let fs: Arc<dyn FileSystem> = Arc::new(MemoryEnv::new());
    let journal = Journal::new(fs.clone(), "/state/pith/journal/w").with_limits(limits);
    (fs, journal)
}

fn tag() -> CallTag {
    CallTag::new("edit", "g1")
}

async fn objects(fs: &dyn FileSystem) -> usize {
    match fs
        .read_dir(Path::new("/state/pith/journal/w/objects"))
        .await
    {
        Ok(listing) => listing.len(),
        Err(error) if error.kind == FsErrorKind::NotFound => 0,
        Err(error) => panic!("{error}"),
    }
}

#[tokio::test]
async fn stores_one_copy_of_identical_previous_contents() {
    let (fs, journal) = journal(JournalLimits::default());
    let after = FileState::of(Some(b"new"));
    for index in 0..3 {
        let recorded = journal
            .record(Change {
                tag: &tag(),
                index,
                path: Path::new("/w/a"),
                before: Before::Content(b"same old"),
                before_hash: None,
                after: after.clone(),
                undoes: Vec::new(),
            })
            .await;
        assert_eq!(recorded.note, None);
    }
    assert_eq!(journal.entries().await.unwrap().len(), 3);
    assert_eq!(objects(&*fs).await, 1);
    let FileState::Content { hash, stored, .. } = &journal.entries().await.unwrap()[0].before
    else {
        panic!("no content");
    };
    assert!(stored);
    assert_eq!(journal.content(hash).await.unwrap(), b"same old");
}

#[tokio::test]
async fn evicts_the_oldest_entries_to_stay_under_the_total_cap() {
    let limits = JournalLimits {
        total_bytes: 20_000,
        file_bytes: 10_000,
    };
    let (fs, journal) = journal(limits);
    for index in 0..10_u8 {
        let content = vec![b'a' + index; 3000];
        let recorded = journal
            .record(Change {
                tag: &tag(),
                index: usize::from(index),
                path: Path::new("/w/a"),
                before: Before::Content(&content),
                before_hash: None,
                after: FileState::Absent,
                undoes: Vec::new(),
            })
            .await;
        assert_eq!(recorded.note, None);
        assert!(journal.size().await.unwrap() <= limits.total_bytes);
    }
    let entries = journal.entries().await.unwrap();
    assert!(
        entries.len() < 10 && entries.len() >= 2,
        "{}",
        entries.len()
    );
    // The newest survive, the oldest went, with their objects.
    let last = entries.last().unwrap();
    let FileState::Content { hash, .. } = &last.before else {
        panic!("no content");
    };
    assert!(journal.content(hash).await.unwrap() == vec![b'j'; 3000]);
    assert_eq!(objects(&*fs).await, entries.len());
    assert!(entries.iter().all(|entry| !entry.id.ends_with("-0")));
}

#[tokio::test]
async fn records_a_file_over_the_per_file_cap_as_not_undoable_with_a_note() {
    let limits = JournalLimits {
        total_bytes: 1 << 20,
        file_bytes: 100,
    };
    let (fs, journal) = journal(limits);
    let recorded = journal
        .record(Change {
            tag: &tag(),
            index: 0,
            path: Path::new("/w/big"),
            before: Before::Content(&[b'x'; 101]),
            before_hash: None,
            after: FileState::Absent,
            undoes: Vec::new(),
        })
        .await;
    let note = recorded.note.unwrap();
    assert!(note.contains("/w/big is not undoable"), "{note}");
    assert!(note.contains("per-file cap of 100 bytes"), "{note}");
    assert_eq!(objects(&*fs).await, 0);
    assert!(matches!(
        journal.entries().await.unwrap()[0].before,
        FileState::NotUndoable { len: 101, .. }
    ));
}

#[tokio::test]
async fn a_journal_that_cannot_write_gives_a_note_instead_of_an_error() {
    let faulty = FaultyEnv::new(Env::memory(MemoryEnv::new()));
    let journal = Journal::new(faulty.env().fs, "/state/j");
    faulty.inject(Fault::on(Operation::WriteAtomic).fs(FsErrorKind::NoSpace));
    let recorded = journal
        .record(Change {
            tag: &tag(),
            index: 0,
            path: Path::new("/w/a"),
            before: Before::Content(b"old"),
            before_hash: None,
            after: FileState::Absent,
            undoes: Vec::new(),
        })
        .await;
    let note = recorded.note.unwrap();
    assert!(
        note.starts_with("Note: this change is not undoable (undo journal:"),
        "{note}"
    );
    assert!(note.ends_with("the change itself was made."), "{note}");
}

#[tokio::test]
async fn a_new_journal_over_the_same_directory_sees_every_entry() {
    let (fs, first) = journal(JournalLimits::default());
    first
        .record(Change {
            tag: &tag(),
            index: 0,
            path: Path::new("/w/a"),
            before: Before::Absent,
            before_hash: None,
            after: FileState::of(Some(b"x")),
            undoes: Vec::new(),
        })
        .await;
    let second = Journal::new(fs, "/state/pith/journal/w");
    let entries = second.entries().await.unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].before, FileState::Absent);
    assert_eq!(entries[0].group, "g1");
    assert_eq!(entries[0].tool, "edit");
}

#[test]
fn the_default_directory_is_under_the_state_home_keyed_by_workspace() {
    let dir = Journal::default_dir(Path::new("/home/u/my project")).unwrap();
    let other = Journal::default_dir(Path::new("/home/v/my project")).unwrap();
    assert_ne!(dir, other);
    let name = dir.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("my_project-"), "{name}");
    assert!(
        dir.parent().unwrap().ends_with("pith/journal"),
        "{}",
        dir.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_previous_content_still_in_its_file_is_hard_linked_not_copied() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::TempDir::new().unwrap();
    let local: Arc<dyn FileSystem> = Arc::new(pith_env::LocalEnv::new());
    let journal = Journal::new(local, dir.path().join("journal")).with_hard_links();
    let record = |path: std::path::PathBuf, bytes: &'static [u8]| {
        let journal = &journal;
        async move {
            let recorded = journal
                .record(Change {
                    tag: &tag(),
                    index: 0,
                    path: &path,
                    before: Before::ContentAt(
                        bytes,
                        &path,
                        std::fs::metadata(&path).unwrap().modified().unwrap(),
                    ),
                    before_hash: None,
                    after: FileState::of(Some(b"new")),
                    undoes: Vec::new(),
                })
                .await;
            assert_eq!(recorded.note, None);
            let entries = journal.entries().await.unwrap();
            let Some(FileState::Content { hash, .. }) = entries.last().map(|e| e.before.clone())
            else {
                panic!("no content");
            };
            assert_eq!(journal.content(&hash).await.unwrap(), bytes);
            std::fs::metadata(journal.object(&hash)).unwrap()
        }
    };
    // The file holds the bytes: its inode becomes the object.
    let linked = dir.path().join("linked.txt");
    std::fs::write(&linked, b"old content\n").unwrap();
    let object = record(linked.clone(), b"old content\n").await;
    assert_eq!(object.ino(), std::fs::metadata(&linked).unwrap().ino());
    assert_eq!(object.nlink(), 2);
    // The file no longer holds the bytes (changed since they were read): a copy.
    let changed = dir.path().join("changed.txt");
    std::fs::write(&changed, b"changed since\n").unwrap();
    let object = record(changed.clone(), b"read before!!\n").await;
    assert_ne!(object.ino(), std::fs::metadata(&changed).unwrap().ino());
    // A file with another link could change under the journal: a copy.
    let shared = dir.path().join("shared.txt");
    std::fs::write(&shared, b"two names\n").unwrap();
    std::fs::hard_link(&shared, dir.path().join("other-name.txt")).unwrap();
    let object = record(shared.clone(), b"two names\n").await;
    assert_ne!(object.ino(), std::fs::metadata(&shared).unwrap().ino());
    // No temp links are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("journal/objects"))
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Records `path`'s current content as an unread previous content (hashed by
/// streaming, as `write` does) and returns the note and the entry's `before`.
async fn record_unread(journal: &Journal, fs: &dyn FileSystem, path: &Path) -> Recorded {
    let metadata = fs.metadata(path).await.unwrap();
    let survey = crate::textfile::survey(fs, path, false, true)
        .await
        .unwrap();
    let hash = survey.sha256.unwrap();
    journal
        .record(Change {
            tag: &tag(),
            index: 0,
            path,
            before: Before::Unread(Unread {
                fs,
                path,
                len: survey.len,
                modified: metadata.modified,
                hash: &hash,
            }),
            before_hash: None,
            after: FileState::of(Some(b"new")),
            undoes: Vec::new(),
        })
        .await
}

/// The last entry's stored previous content: checked to be `content`, its object's metadata.
async fn last_object(journal: &Journal, content: &[u8]) -> std::fs::Metadata {
    let entries = journal.entries().await.unwrap();
    let Some(FileState::Content { hash, len, .. }) = entries.last().map(|e| e.before.clone())
    else {
        panic!("no content: {entries:?}");
    };
    assert_eq!(len, content.len() as u64);
    assert!(journal.content(&hash).await.unwrap() == content);
    std::fs::metadata(journal.object(&hash)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_previous_content_is_linked_or_copied_in_chunks_and_restores_exactly() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::TempDir::new().unwrap();
    let local: Arc<dyn FileSystem> = Arc::new(pith_env::LocalEnv::new());
    let journal = Journal::new(local.clone(), dir.path().join("journal")).with_hard_links();
    // 3 MiB and a bit: several chunks, a character cut at a chunk boundary.
    let content: Vec<u8> = "é0123456789abcdef\n"
        .repeat(180_000)
        .into_bytes()
        .into_iter()
        .chain(*b"end")
        .collect();
    // A file with one link: its inode becomes the object.
    let linked = dir.path().join("linked.txt");
    std::fs::write(&linked, &content).unwrap();
    assert_eq!(record_unread(&journal, &*local, &linked).await.note, None);
    let object = last_object(&journal, &content).await;
    assert_eq!(object.ino(), std::fs::metadata(&linked).unwrap().ino());
    std::fs::remove_file(journal.object(&pith_env::remote::sha256_hex(&content))).unwrap();
    // A file with another link could change under the journal: a copy, in chunks.
    std::fs::hard_link(&linked, dir.path().join("other-name.txt")).unwrap();
    assert_eq!(record_unread(&journal, &*local, &linked).await.note, None);
    let object = last_object(&journal, &content).await;
    assert_ne!(object.ino(), std::fs::metadata(&linked).unwrap().ino());
    assert_eq!(object.nlink(), 1);
    // No temp files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("journal/objects"))
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_content_that_changed_after_it_was_hashed_is_not_undoable() {
    let dir = tempfile::TempDir::new().unwrap();
    let local: Arc<dyn FileSystem> = Arc::new(pith_env::LocalEnv::new());
    let journal = Journal::new(local.clone(), dir.path().join("journal")).with_hard_links();
    let path = dir.path().join("moving.txt");
    std::fs::write(&path, "hashed content\n".repeat(10_000)).unwrap();
    let metadata = local.metadata(&path).await.unwrap();
    let survey = crate::textfile::survey(&*local, &path, false, true)
        .await
        .unwrap();
    // Changed in place after the hash, to another content of the same size.
    std::fs::write(&path, "HASHED content\n".repeat(10_000)).unwrap();
    let recorded = journal
        .record(Change {
            tag: &tag(),
            index: 0,
            path: &path,
            before: Before::Unread(Unread {
                fs: &*local,
                path: &path,
                len: survey.len,
                modified: metadata.modified,
                hash: &survey.sha256.unwrap(),
            }),
            before_hash: None,
            after: FileState::of(Some(b"new")),
            undoes: Vec::new(),
        })
        .await;
    let note = recorded.note.unwrap();
    assert!(
        note.contains("changed while its previous content"),
        "{note}"
    );
    assert!(matches!(
        journal.entries().await.unwrap()[0].before,
        FileState::NotUndoable { .. }
    ));
    let objects: Vec<_> = std::fs::read_dir(dir.path().join("journal/objects"))
        .unwrap()
        .collect();
    assert!(objects.is_empty(), "{objects:?}");
}

#[tokio::test]
async fn an_unread_content_in_a_journal_without_links_is_stored_whole_and_checked() {
    let (fs, journal) = journal(JournalLimits::default());
    let path = Path::new("/w/big.txt");
    fs.create_dir_all(Path::new("/w")).await.unwrap();
    let content = "line of text\n".repeat(200_000);
    fs.write_atomic(path, content.as_bytes()).await.unwrap();
    assert_eq!(record_unread(&journal, &*fs, path).await.note, None);
    let entries = journal.entries().await.unwrap();
    let FileState::Content { hash, .. } = &entries[0].before else {
        panic!("no content");
    };
    assert!(journal.content(hash).await.unwrap() == content.as_bytes());
}
