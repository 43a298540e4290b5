//! The undo journal: what every write, edit and apply_patch replaced.
//!
//! Before a mutation is made visible, the file's previous content (or its
//! absence) and the new content's hash are recorded: the content in
//! `objects/<sha256>` (content-addressed, so a file edited back and forth is
//! stored once), the record in `entries/<millis>-<sequence>-<call>-<n>.json`. Both go
//! through [`FileSystem::write_atomic`](pith_env::FileSystem::write_atomic),
//! which fsyncs the file and its directory, so a record is durable before the
//! rename that publishes the mutation: a crash between the two leaves the old
//! file and a record whose `after` hash the file does not have, which a listing
//! reports as "not applied" and an undo skips.
//!
//! Bounded: a total cap (default 1 GiB) with oldest-first eviction of whole
//! entries and the objects only they used, and a per-file cap (default
//! 64 MiB) above which the previous content is not stored and the change is
//! recorded as not undoable. The journal's own failures never fail a mutation:
//! they come back as a note for the result.
//!
//! Undo ([`undo`](crate::journal::undo)) restores through the same queue and
//! atomic write, and is journaled itself, so an undo can be undone (redo).
//! Files over 4 MiB are hashed and restored by streaming, never held whole
//! (`journal/restore.rs`).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use pith_env::{FileSystem, FsError, FsErrorKind};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::messages::journal as messages;

mod hash;
mod restore;
mod stream;
pub(crate) mod undo;
mod when;

pub(crate) use hash::{CheckpointedHash, hashes_of_edit};
pub(crate) use stream::Unread;
#[cfg(unix)]
use stream::same_bytes;
use stream::{Samples, in_place};

pub use undo::{
    EntryStatus, ListedEntry, UndoFile, UndoOptions, UndoOutcome, UndoReport, UndoSelector,
};
pub use when::parse_since;

/// Default total size of a journal: 1 GiB.
pub const DEFAULT_TOTAL_CAP: u64 = 1 << 30;
/// Default largest previous content a journal stores: 64 MiB.
pub const DEFAULT_FILE_CAP: u64 = 64 << 20;
/// What an entry record costs at most, for the cap (paths are clipped to fit).
const ENTRY_ALLOWANCE: u64 = 4096;

/// The caps of a journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JournalLimits {
    /// Total bytes of objects and entries; the oldest entries are evicted to stay below.
    pub total_bytes: u64,
    /// Previous contents larger than this are not stored (the change is not undoable).
    pub file_bytes: u64,
}

impl Default for JournalLimits {
    fn default() -> JournalLimits {
        JournalLimits {
            total_bytes: DEFAULT_TOTAL_CAP,
            file_bytes: DEFAULT_FILE_CAP,
        }
    }
}

/// A file's state before or after a journaled mutation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum FileState {
    /// The file did not exist.
    Absent,
    /// Content with this SHA-256 and length; `stored` when the journal holds the bytes.
    Content {
        /// Lowercase hex SHA-256.
        hash: String,
        /// Length in bytes.
        len: u64,
        /// The bytes are in the journal (previous contents are; new ones only by hash).
        stored: bool,
    },
    /// Not recorded: the change cannot be undone.
    NotUndoable {
        /// Length in bytes.
        len: u64,
        /// Why (over the per-file cap, the total cap, a journal error).
        reason: String,
    },
}

impl FileState {
    /// The state of `bytes` (or absence), by hash.
    pub(crate) fn of(bytes: Option<&[u8]>) -> FileState {
        match bytes {
            None => FileState::Absent,
            Some(bytes) => FileState::Content {
                hash: pith_env::remote::sha256_hex(bytes),
                len: bytes.len() as u64,
                stored: false,
            },
        }
    }

    /// Whether two states describe the same content (absence included).
    pub(crate) fn same_content(&self, other: &FileState) -> bool {
        match (self, other) {
            (FileState::Absent, FileState::Absent) => true,
            (FileState::Content { hash: a, .. }, FileState::Content { hash: b, .. }) => a == b,
            _ => false,
        }
    }
}

/// One file's record of one mutation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalEntry {
    /// Unique and ordered by time: `<millis>-<sequence>-<call>-<n>`.
    pub id: String,
    /// The call that made the change (shared by the files of one apply_patch or undo).
    pub call: String,
    /// The group of the call (one `pith batch`, one MCP request group, one undo).
    pub group: String,
    /// The tool (`write`, `edit`, `apply_patch`, `undo`).
    pub tool: String,
    /// Milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The absolute path the tool wrote.
    pub path: PathBuf,
    /// The file before the change.
    pub before: FileState,
    /// The file after the change.
    pub after: FileState,
    /// For an undo: the entries it undid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undoes: Vec<String>,
}

/// Who is making a change: the call and group ids entries carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallTag {
    /// The call id (8 hex digits, new per call).
    pub call: String,
    /// The group id.
    pub group: String,
    /// The tool name.
    pub tool: String,
}

impl CallTag {
    /// A new call id in `group`.
    pub fn new(tool: &str, group: &str) -> CallTag {
        CallTag {
            call: random_id(),
            group: group.to_owned(),
            tool: tool.to_owned(),
        }
    }
}

/// Orders the entries this process records within one millisecond.
fn next_sequence() -> u64 {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    SEQUENCE.fetch_add(1, Ordering::Relaxed) % 100_000_000
}

/// A new undo group id (for a host that starts a group of calls).
pub fn new_group_id() -> String {
    random_id()
}

/// 8 hex digits from std's randomly keyed hasher, unique within the process.
pub(crate) fn random_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    format!("{:08x}", hasher.finish() as u32)
}

/// Why the journal could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// An I/O error on a journal file.
    #[error("undo journal: {0}")]
    Io(#[from] FsError),
    /// A stored object does not have the content its name says.
    #[error("undo journal: the stored copy {0} is damaged")]
    Damaged(PathBuf),
}

/// The undo journal of one workspace.
pub struct Journal {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    limits: JournalLimits,
    /// Previous contents may be hard-linked into `objects/` (see [`Journal::with_hard_links`]).
    hard_links: bool,
    /// Serialises this process's writers and caches the journal's size.
    state: Mutex<Option<u64>>,
}

impl fmt::Debug for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal")
            .field("dir", &self.dir)
            .field("limits", &self.limits)
            .finish()
    }
}

/// What recording a change gave: a note for the result when it is not undoable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Recorded {
    /// One line for the model, when the change could not be journaled whole.
    pub(crate) note: Option<String>,
}

impl Journal {
    /// A journal in `dir` (created when first written), reached through `fs`
    /// (the machine's own file system: the journal lives with the user's state,
    /// not in the workspace).
    pub fn new(fs: Arc<dyn FileSystem>, dir: impl Into<PathBuf>) -> Journal {
        Journal {
            fs,
            dir: dir.into(),
            limits: JournalLimits::default(),
            hard_links: false,
            state: Mutex::new(None),
        }
    }

    /// Lets the journal store a previous content by hard-linking the file that
    /// holds it into `objects/` rather than writing a copy, when the file is on
    /// this machine and on the journal's file system, is a regular file with no
    /// other link, and still holds exactly those bytes (compared byte for byte
    /// after linking, so a file elsewhere, such as a remote workspace's file at
    /// the same path, is never taken for it). The tool then replaces the file
    /// by renaming a new one over it, so the linked bytes stay as they were.
    /// The old bytes are not written a second time; they are as durable as the
    /// file was. Only for a journal whose file system is this machine's
    /// (`LocalEnv`): the link is made with the operating system's calls.
    #[must_use]
    pub fn with_hard_links(mut self) -> Journal {
        self.hard_links = true;
        self
    }

    /// Sets the caps.
    #[must_use]
    pub fn with_limits(mut self, limits: JournalLimits) -> Journal {
        self.limits = limits;
        self
    }

    /// The directory for `workspace`'s journal under the user's state directory:
    /// `$XDG_STATE_HOME/pith/journal/<name>-<hash>` (`~/.local/state` when unset).
    pub fn default_dir(workspace: &Path) -> Option<PathBuf> {
        let state = pith_env::state_dir()?;
        let name: String = workspace
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "root".to_owned())
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let hash = pith_env::remote::sha256_hex(workspace.as_os_str().as_encoded_bytes());
        Some(
            state
                .join("pith/journal")
                .join(format!("{name}-{}", &hash[..16])),
        )
    }

    /// The journal's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The caps.
    pub fn limits(&self) -> JournalLimits {
        self.limits
    }

    fn objects(&self) -> PathBuf {
        self.dir.join("objects")
    }

    fn entries_dir(&self) -> PathBuf {
        self.dir.join("entries")
    }

    fn object(&self, hash: &str) -> PathBuf {
        self.objects().join(hash)
    }

    /// Every entry, oldest first.
    ///
    /// # Errors
    ///
    /// The entries directory cannot be listed (a missing journal has no entries).
    pub async fn entries(&self) -> Result<Vec<JournalEntry>, JournalError> {
        let dir = self.entries_dir();
        let listing = match self.fs.read_dir(&dir).await {
            Ok(listing) => listing,
            Err(error) if error.kind == FsErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(error.into()),
        };
        let mut names: Vec<String> = listing
            .into_iter()
            .map(|entry| entry.name.to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".json"))
            .collect();
        names.sort();
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            // An entry evicted or half-written by another process is skipped.
            if let Ok(bytes) = self.fs.read(&dir.join(&name)).await
                && let Ok(entry) = serde_json::from_slice::<JournalEntry>(&bytes)
            {
                entries.push(entry);
            }
        }
        Ok(entries)
    }

    /// The stored bytes of a previous content, checked against their hash.
    ///
    /// # Errors
    ///
    /// The object is missing (evicted) or damaged.
    pub async fn content(&self, hash: &str) -> Result<Vec<u8>, JournalError> {
        let path = self.object(hash);
        let bytes = self.fs.read(&path).await?;
        if pith_env::remote::sha256_hex(&bytes) != hash {
            return Err(JournalError::Damaged(path));
        }
        Ok(bytes)
    }

    /// Records one file's change before it is made visible: `before` is the
    /// previous content (`None`: the file did not exist), `before_len` its size
    /// when it was too large to read, `after` the new content (`None`: removed).
    /// Never fails: a journal error becomes the note of a not-undoable change.
    pub(crate) async fn record(&self, change: Change<'_>) -> Recorded {
        let mut size = self.state.lock().await;
        match self.record_locked(&mut size, change).await {
            Ok(recorded) => recorded,
            Err(error) => {
                *size = None;
                Recorded {
                    note: Some(messages::record_failed(error)),
                }
            }
        }
    }

    async fn record_locked(
        &self,
        size: &mut Option<u64>,
        change: Change<'_>,
    ) -> Result<Recorded, JournalError> {
        let Change {
            tag,
            index,
            path,
            before,
            before_hash,
            after,
            undoes,
        } = change;
        let mut total = match *size {
            Some(total) => total,
            None => self.measure().await?,
        };
        let mut note = None;
        // Over the per-file cap: only the size is recorded.
        let (before, source) = match before {
            Before::ContentAt(bytes, source, modified) => {
                (Before::Content(bytes), Some((source, modified)))
            }
            other => (other, None),
        };
        let before = match before {
            Before::Content(bytes) if bytes.len() as u64 > self.limits.file_bytes => {
                Before::TooLarge(bytes.len() as u64)
            }
            Before::Unread(unread) if unread.len > self.limits.file_bytes => {
                Before::TooLarge(unread.len)
            }
            other => other,
        };
        let before_state = match before {
            Before::Absent | Before::ContentAt(..) => FileState::Absent,
            Before::TooLarge(len) => {
                note = Some(self.too_large_note(path, len));
                FileState::NotUndoable {
                    len,
                    reason: messages::reason_file_cap(self.limits.file_bytes),
                }
            }
            Before::Content(_) | Before::Unread(_) => {
                let (hash, len) = match before {
                    Before::Unread(unread) => (unread.hash.to_owned(), unread.len),
                    Before::Content(bytes) => (
                        before_hash.unwrap_or_else(|| pith_env::remote::sha256_hex(bytes)),
                        bytes.len() as u64,
                    ),
                    _ => (String::new(), 0),
                };
                let object = self.object(&hash);
                let present = self.fs.metadata(&object).await.is_ok();
                let need = if present { 0 } else { len } + ENTRY_ALLOWANCE;
                if need > self.limits.total_bytes {
                    note = Some(messages::over_total_cap(path.display(), len));
                    FileState::NotUndoable {
                        len,
                        reason: messages::REASON_TOTAL_CAP.to_owned(),
                    }
                } else {
                    if total + need > self.limits.total_bytes {
                        total = self
                            .evict(total + need - self.limits.total_bytes, &hash)
                            .await?;
                    }
                    let mut stored = true;
                    if !present {
                        self.fs.create_dir_all(&self.objects()).await?;
                        stored = match before {
                            Before::Unread(unread) => self.store_unread(unread, &object).await?,
                            Before::Content(bytes) => {
                                let linked = match source {
                                    Some((source, modified)) if self.hard_links => self
                                        .link_object(source, modified, &object, Samples::of(bytes)),
                                    _ => false,
                                };
                                if !linked {
                                    self.fs.write_atomic(&object, bytes).await?;
                                }
                                true
                            }
                            _ => false,
                        };
                        if stored {
                            total += len;
                        }
                    }
                    if stored {
                        FileState::Content {
                            hash,
                            len,
                            stored: true,
                        }
                    } else {
                        note = Some(messages::changed_while_stored(path.display()));
                        FileState::NotUndoable {
                            len,
                            reason: messages::REASON_CHANGED_WHILE_STORED.to_owned(),
                        }
                    }
                }
            }
        };
        if !matches!(before_state, FileState::Content { .. })
            && total + ENTRY_ALLOWANCE > self.limits.total_bytes
        {
            total = self
                .evict(total + ENTRY_ALLOWANCE - self.limits.total_bytes, "")
                .await?;
        }
        let time_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as u64);
        let entry = JournalEntry {
            id: format!("{time_ms:013}-{:08}-{}-{index}", next_sequence(), tag.call),
            call: tag.call.clone(),
            group: tag.group.clone(),
            tool: tag.tool.clone(),
            time_ms,
            path: path.to_path_buf(),
            before: before_state,
            after,
            undoes,
        };
        let bytes = serde_json::to_vec(&entry).unwrap_or_default();
        self.fs.create_dir_all(&self.entries_dir()).await?;
        self.fs
            .write_atomic(
                &self.entries_dir().join(format!("{}.json", entry.id)),
                &bytes,
            )
            .await?;
        total += bytes.len() as u64;
        *size = Some(total);
        Ok(Recorded { note })
    }

    /// Hard links need Unix here: a copy is written.
    #[cfg(not(unix))]
    fn link_object(&self, _: &Path, _: SystemTime, _: &Path, _: Samples<'_>) -> bool {
        false
    }

    /// Hard-links `source` to `object` when it is a regular file with no other
    /// link that still is what the tool read (`samples` of it, last modified at
    /// `modified`: the same size and time, and the same first and last bytes; see
    /// [`Journal::with_hard_links`]); whether it did. Any failure (another file
    /// system, permissions) is a `false`: the caller writes a copy.
    #[cfg(unix)]
    fn link_object(
        &self,
        source: &Path,
        modified: SystemTime,
        object: &Path,
        samples: Samples<'_>,
    ) -> bool {
        let objects = self.objects();
        let link = || -> std::io::Result<bool> {
            use std::os::unix::fs::MetadataExt;
            let metadata = std::fs::symlink_metadata(source)?;
            if !metadata.file_type().is_file()
                || metadata.nlink() != 1
                || metadata.len() != samples.len
                || metadata.modified()? != modified
            {
                return Ok(false);
            }
            let temp = objects.join(format!(".link-{}", random_id()));
            std::fs::hard_link(source, &temp)?;
            let verified = (|| -> std::io::Result<bool> {
                let linked = std::fs::symlink_metadata(&temp)?;
                if (linked.dev(), linked.ino()) != (metadata.dev(), metadata.ino()) {
                    return Ok(false);
                }
                same_bytes(&temp, samples)
            })();
            if !matches!(verified, Ok(true)) {
                let _ = std::fs::remove_file(&temp);
                return verified;
            }
            if let Err(error) = std::fs::rename(&temp, object) {
                let _ = std::fs::remove_file(&temp);
                return Err(error);
            }
            // The new name survives a crash (the bytes are as durable as the file was).
            std::fs::File::open(&objects)?.sync_all()?;
            Ok(true)
        };
        in_place(|| link().unwrap_or(false))
    }

    fn too_large_note(&self, path: &Path, len: u64) -> String {
        messages::over_file_cap(path.display(), len, self.limits.file_bytes)
    }

    /// The journal's size in bytes (objects and entries).
    ///
    /// # Errors
    ///
    /// A journal directory cannot be listed.
    pub async fn size(&self) -> Result<u64, JournalError> {
        self.measure().await
    }

    async fn measure(&self) -> Result<u64, JournalError> {
        let mut total = 0;
        for dir in [self.objects(), self.entries_dir()] {
            let listing = match self.fs.read_dir(&dir).await {
                Ok(listing) => listing,
                Err(error) if error.kind == FsErrorKind::NotFound => continue,
                Err(error) => return Err(error.into()),
            };
            for entry in listing {
                if let Ok(metadata) = self.fs.metadata(&dir.join(&entry.name)).await {
                    total += metadata.len;
                }
            }
        }
        Ok(total)
    }

    /// Removes the oldest entries (and the objects only they used, never `keep`)
    /// until `needed` bytes are freed or nothing is left; returns the new size.
    async fn evict(&self, needed: u64, keep: &str) -> Result<u64, JournalError> {
        let entries = self.entries().await?;
        let mut users: HashMap<String, usize> = HashMap::new();
        for entry in &entries {
            if let FileState::Content {
                hash, stored: true, ..
            } = &entry.before
            {
                *users.entry(hash.clone()).or_default() += 1;
            }
        }
        let mut freed = 0;
        let mut removed = BTreeMap::new();
        for entry in &entries {
            if freed >= needed {
                break;
            }
            let path = self.entries_dir().join(format!("{}.json", entry.id));
            if let Ok(metadata) = self.fs.metadata(&path).await {
                freed += metadata.len;
            }
            self.fs.remove_file(&path).await?;
            if let FileState::Content {
                hash,
                stored: true,
                len,
            } = &entry.before
                && let Some(count) = users.get_mut(hash)
            {
                *count -= 1;
                if *count == 0 && hash != keep {
                    removed.insert(hash.clone(), *len);
                }
            }
        }
        for (hash, len) in removed {
            match self.fs.remove_file(&self.object(&hash)).await {
                Ok(()) => freed += len,
                Err(error) if error.kind == FsErrorKind::NotFound => {}
                Err(error) => return Err(error.into()),
            }
        }
        let _ = freed;
        self.measure().await
    }
}

/// Journals one file's change for a tool call, when the tool set has a
/// journal: the note for the result, if the change is not undoable.
pub(crate) async fn record_change(
    context: &crate::tool::ToolContext,
    tag: &CallTag,
    index: usize,
    path: &Path,
    before: Before<'_>,
    after: Option<&[u8]>,
) -> Option<String> {
    context.config.journal.as_ref()?;
    let (before_hash, after) = hash_both(before, after);
    record_hashed(context, tag, index, path, before, before_hash, after).await
}

/// [`record_change`] with the hashes computed already: `before_hash` of the
/// previous content (`None`: computed here), `after` the new content's state.
pub(crate) async fn record_hashed(
    context: &crate::tool::ToolContext,
    tag: &CallTag,
    index: usize,
    path: &Path,
    before: Before<'_>,
    before_hash: Option<String>,
    after: FileState,
) -> Option<String> {
    let journal = context.config.journal.as_ref()?;
    let change = Change {
        tag,
        index,
        path,
        before,
        before_hash,
        after,
        undoes: Vec::new(),
    };
    journal.record(change).await.note
}

/// Contents from which the SHA-256 of the previous and the new content are
/// computed on two threads at once.
const PARALLEL_HASH_BYTES: usize = 1 << 20;

/// The previous content's SHA-256 (when it has content) and the new content's
/// state: on two threads when both are large (a 20 MiB edit hashes 40 MiB).
fn hash_both(before: Before<'_>, after: Option<&[u8]>) -> (Option<String>, FileState) {
    let old = match before {
        Before::Content(bytes) | Before::ContentAt(bytes, ..) => Some(bytes),
        Before::Absent | Before::TooLarge(_) | Before::Unread(_) => None,
    };
    match (old, after) {
        (Some(old), Some(new))
            if old.len() >= PARALLEL_HASH_BYTES && new.len() >= PARALLEL_HASH_BYTES =>
        {
            let (hash, after) = crate::beside::beside(
                || pith_env::remote::sha256_hex(old),
                || FileState::of(Some(new)),
            );
            (Some(hash), after)
        }
        _ => (None, FileState::of(after)),
    }
}

/// The previous content of `path` for the journal: `Ok(None)` when it does
/// not exist, `Err(len)` when it is over the per-file cap (or unreadable).
pub(crate) async fn previous_content(
    context: &crate::tool::ToolContext,
    fs: &dyn FileSystem,
    path: &Path,
) -> Result<Option<Vec<u8>>, u64> {
    let Some(journal) = context.config.journal.as_ref() else {
        return Ok(None);
    };
    match fs.metadata(path).await {
        Err(error) if error.kind == FsErrorKind::NotFound => Ok(None),
        Err(_) => Err(0),
        Ok(metadata) if metadata.len > journal.limits.file_bytes => Err(metadata.len),
        Ok(metadata) => fs.read(path).await.map(Some).map_err(|_| metadata.len),
    }
}

/// One file's change, as [`Journal::record`] takes it.
pub(crate) struct Change<'a> {
    pub(crate) tag: &'a CallTag,
    /// The file's index within its call.
    pub(crate) index: usize,
    pub(crate) path: &'a Path,
    pub(crate) before: Before<'a>,
    /// The SHA-256 of `before`'s content, when the caller computed it already.
    pub(crate) before_hash: Option<String>,
    pub(crate) after: FileState,
    /// For an undo: the entries it undoes.
    pub(crate) undoes: Vec<String>,
}

/// The previous content of a file being changed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Before<'a> {
    /// It did not exist.
    Absent,
    /// Its bytes.
    Content(&'a [u8]),
    /// Its bytes, read from the file at this path of the tool's file system, last
    /// modified at this time when it was read (a journal
    /// [`with_hard_links`](Journal::with_hard_links) may link it rather than copy).
    ContentAt(&'a [u8], &'a Path, SystemTime),
    /// It has this many bytes, too many to read for the journal.
    TooLarge(u64),
    /// Its bytes are still in its file, hashed but not read whole (`write`).
    Unread(Unread<'a>),
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
