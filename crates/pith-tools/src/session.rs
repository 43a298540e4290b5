//! [`Session`]: one conversation's view of a tool set.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use pith_env::{FileSystem, FsError, Metadata};
use serde_json::Value;
use xxhash_rust::xxh3::Xxh3Default;

use crate::queue::Ticket;
use crate::tool::{CallOptions, ToolContext, ToolResult};
use crate::toolset::ToolSet;

/// What `write` does with an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverwritePolicy {
    /// Refuse to overwrite a file the session has not read, or that changed
    /// since it was read (content hash), with a message to read it first.
    RequireRead,
    /// Overwrite freely (one-shot calls).
    Allow,
}

/// Files larger than this are fingerprinted by size and modification time
/// rather than by hashing their bytes: reading lines 1–2000 of a 10 GiB log
/// should not cost a hash of all of it.
pub(crate) const HASHED_MAX_BYTES: u64 = 32 << 20;

/// What a session remembers of a file it has seen, to notice later changes.
/// Not a defence against an adversary: a 64-bit XXH3 hash of the bytes
/// (`xxhash-rust`, much cheaper than std's SipHash), or for large files the
/// size, modification and status-change times and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fingerprint {
    /// Length and hash of the content.
    Content { len: u64, hash: u64 },
    /// Length, modification time, status-change time and file identity (the
    /// last two where the adapter knows them: a file replaced by one of the same
    /// size and modification time differs in them).
    Stamp {
        len: u64,
        modified: SystemTime,
        changed: Option<SystemTime>,
        id: Option<pith_env::FileId>,
    },
}

impl Fingerprint {
    /// The fingerprint of `bytes`.
    pub(crate) fn of(bytes: &[u8]) -> Fingerprint {
        let mut hasher = ContentHasher::new();
        hasher.update(bytes);
        hasher.finish()
    }

    /// The size-and-time fingerprint, for files too large to hash (`None`
    /// when the file is small enough or the adapter knows no mtime).
    pub(crate) fn stamp(metadata: &Metadata) -> Option<Fingerprint> {
        if metadata.len <= HASHED_MAX_BYTES {
            return None;
        }
        metadata.modified.map(|modified| Fingerprint::Stamp {
            len: metadata.len,
            modified,
            changed: metadata.changed,
            id: metadata.id,
        })
    }

    /// The current fingerprint of the file at `path` described by `metadata`.
    pub(crate) async fn current(
        fs: &dyn FileSystem,
        path: &Path,
        metadata: &Metadata,
    ) -> Result<Fingerprint, FsError> {
        match Fingerprint::stamp(metadata) {
            Some(stamp) => Ok(stamp),
            None => Ok(Fingerprint::of(&fs.read(path).await?)),
        }
    }

    /// The length of the file it describes.
    pub(crate) fn len(self) -> u64 {
        match self {
            Fingerprint::Content { len, .. } | Fingerprint::Stamp { len, .. } => len,
        }
    }
}

/// Hashes content that arrives in chunks; any split gives the same hash.
pub(crate) struct ContentHasher {
    len: u64,
    hasher: Box<Xxh3Default>,
}

impl ContentHasher {
    pub(crate) fn new() -> ContentHasher {
        ContentHasher {
            len: 0,
            hasher: Box::new(Xxh3Default::new()),
        }
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        self.hasher.update(bytes);
    }

    pub(crate) fn finish(&self) -> Fingerprint {
        Fingerprint::Content {
            len: self.len,
            hash: self.hasher.digest(),
        }
    }
}

/// What a session remembers of content it wrote, computed from the content: the
/// fingerprint (when the content is small enough to hash, see [`HASHED_MAX_BYTES`])
/// and the hashes of the text's lines (BOM excluded).
pub(crate) struct WrittenHashes {
    content: Option<Fingerprint>,
    lines: Option<Vec<u64>>,
}

/// Content from which the fingerprint and the line hashes are computed on two
/// threads at once.
const PARALLEL_HASH_BYTES: usize = 1 << 20;

impl WrittenHashes {
    /// The hashes of `bytes`, whose text is `text`: on two threads when large.
    pub(crate) fn of(bytes: &[u8], text: &str) -> WrittenHashes {
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        let hashed = bytes.len() as u64 <= HASHED_MAX_BYTES;
        if !hashed || bytes.len() < PARALLEL_HASH_BYTES {
            return WrittenHashes {
                content: hashed.then(|| Fingerprint::of(bytes)),
                lines: pith_text::LineHasher::of(text),
            };
        }
        let (lines, content) = crate::beside::beside(
            || pith_text::LineHasher::of(text),
            || Some(Fingerprint::of(bytes)),
        );
        WrittenHashes { content, lines }
    }

    /// [`WrittenHashes::of`] for UTF-8 text without a BOM given as consecutive
    /// `parts` (an edit's unchanged stretches and replacements), `len` bytes in all.
    pub(crate) fn of_parts(parts: &[&[u8]], len: usize) -> WrittenHashes {
        let hashed = len as u64 <= HASHED_MAX_BYTES;
        let content = || {
            hashed.then(|| {
                let mut hasher = ContentHasher::new();
                for part in parts {
                    hasher.update(part);
                }
                hasher.finish()
            })
        };
        let lines = || {
            let mut hasher = pith_text::LineHasher::new();
            for part in parts {
                hasher.update(part);
            }
            hasher.finish()
        };
        if !hashed || len < PARALLEL_HASH_BYTES {
            return WrittenHashes {
                content: content(),
                lines: lines(),
            };
        }
        let (lines, content) = crate::beside::beside(lines, content);
        WrittenHashes { content, lines }
    }
}

/// 16 hex digits from std's randomly keyed hasher (no extra dependency), made
/// unique within the process by a counter.
fn new_session_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}

/// What a session remembers of one file: the fingerprint of its bytes and, when it was
/// text of at most [`pith_text::MAX_HASHED_LINES`] lines, one hash per line of its text
/// (to say which lines changed since, see [`crate::stale`]).
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub(crate) fingerprint: Fingerprint,
    pub(crate) lines: Option<Arc<[u64]>>,
}

struct SessionInner {
    toolset: ToolSet,
    /// Real path → what this session last read or wrote there.
    seen: Mutex<HashMap<PathBuf, Seen>>,
    /// A random id (16 hex digits), given to commands as `PITH_SESSION_ID`.
    id: String,
    /// The bash full-output files this session created.
    outputs: Mutex<std::collections::HashSet<PathBuf>>,
    /// Its background jobs.
    jobs: Arc<crate::jobs::Jobs>,
    /// Two "File not found" hints at a time (see [`Session::hint_turn`]).
    hints: tokio::sync::Semaphore,
}

impl Drop for SessionInner {
    /// Kills the session's jobs (their trees and escapees), and removes its
    /// full-output files unless the bash config keeps them.
    fn drop(&mut self) {
        self.jobs.kill_all();
        if self.toolset.config().bash.keep_output {
            return;
        }
        let outputs = std::mem::take(
            self.outputs
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for path in outputs {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// One conversation (a batch, an MCP connection, an agent session). Cheap to clone.
#[derive(Clone)]
pub struct Session {
    inner: Arc<SessionInner>,
}

impl Session {
    pub(crate) fn new(toolset: ToolSet) -> Session {
        Session {
            inner: Arc::new(SessionInner {
                toolset,
                seen: Mutex::new(HashMap::new()),
                id: new_session_id(),
                outputs: Mutex::new(std::collections::HashSet::new()),
                jobs: Arc::default(),
                hints: tokio::sync::Semaphore::new(2),
            }),
        }
    }

    /// Waits for this session's turn to look for a missing file's look-alikes
    /// (a listing of its directory, a walk of the working directory for its
    /// name). Two at a time: each walk runs helper threads and a listing holds
    /// the whole directory, so a batch of hundreds of misses at once held
    /// hundreds of walks and listings (300 misses under a 5,000-file tree
    /// peaked at 84 MiB, 200 under a 43,000-file one at 159-191 MiB; now 17
    /// and 49 MiB), while two keep both cores busy. `None` if the session's
    /// hint machinery is closed (never, today).
    pub(crate) async fn hint_turn(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.inner.hints.acquire().await.ok()
    }

    /// This session's background jobs.
    pub(crate) fn jobs(&self) -> &Arc<crate::jobs::Jobs> {
        &self.inner.jobs
    }

    /// Calls `listener` with the one-line notice (`[job 3 `npm run dev` exited
    /// with code 1; jobs output 3 for its output]`) whenever one of this
    /// session's background jobs ends and no result has shown that yet. The
    /// same line is also added to the session's next tool result.
    pub fn on_job_end(&self, listener: crate::jobs::JobListener) {
        self.inner.jobs.listen(listener);
    }

    /// Kills every background job of this session (as dropping its last
    /// clone does); later calls may not start new ones.
    pub fn kill_jobs(&self) {
        self.inner.jobs.kill_all();
    }

    /// This session's id: 16 random hex digits (bash exports it as `PITH_SESSION_ID`).
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// Records that this session has seen `content` at `path` (after a
    /// successful read, edit or write). The key is the real path, so aliases
    /// count as the same file; a path that cannot be resolved is not recorded.
    pub(crate) async fn record_seen(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        fingerprint: Fingerprint,
    ) {
        self.record_seen_lines(fs, path, fingerprint, None).await;
    }

    /// [`Session::record_seen`] with the hashes of the text's lines
    /// ([`pith_text::LineHasher`], BOM not included).
    pub(crate) async fn record_seen_lines(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        fingerprint: Fingerprint,
        lines: Option<Vec<u64>>,
    ) {
        if let Ok(real) = fs.canonicalize(path).await {
            self.record_seen_real(real, fingerprint, lines);
        }
    }

    /// [`Session::record_seen_lines`] for a path already resolved to its real
    /// path (a queue key), without resolving it again.
    pub(crate) fn record_seen_real(
        &self,
        real: PathBuf,
        fingerprint: Fingerprint,
        lines: Option<Vec<u64>>,
    ) {
        let seen = Seen {
            fingerprint,
            lines: lines.map(Arc::from),
        };
        self.seen_map().insert(real, seen);
    }

    /// Records what this session just wrote to `path`: `bytes`, whose text is `text`.
    pub(crate) async fn record_written_text(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        bytes: &[u8],
        text: &str,
    ) {
        let hashes = WrittenHashes::of(bytes, text);
        self.record_written_hashes(fs, path, &[bytes], hashes).await;
    }

    /// [`Session::record_written_text`] with the hashes computed already
    /// ([`WrittenHashes::of`], e.g. beside other work).
    pub(crate) async fn record_written_hashes(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        parts: &[&[u8]],
        hashes: WrittenHashes,
    ) {
        let fingerprint = match hashes.content {
            Some(content) => content,
            None => self.written_fingerprint(fs, path, parts).await,
        };
        self.record_seen_lines(fs, path, fingerprint, hashes.lines)
            .await;
    }

    async fn written_fingerprint(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        parts: &[&[u8]],
    ) -> Fingerprint {
        let of_parts = || {
            let mut hasher = ContentHasher::new();
            for part in parts {
                hasher.update(part);
            }
            hasher.finish()
        };
        let len: usize = parts.iter().map(|part| part.len()).sum();
        if len as u64 > HASHED_MAX_BYTES {
            match fs
                .metadata(path)
                .await
                .ok()
                .and_then(|m| Fingerprint::stamp(&m))
            {
                Some(stamp) => stamp,
                None => of_parts(),
            }
        } else {
            of_parts()
        }
    }

    /// Records a full-output file one of this session's commands created: it may
    /// read it back, and it is removed when the session ends (unless
    /// `BashConfig::keep_output`).
    pub(crate) fn record_output(&self, path: PathBuf) {
        self.inner
            .outputs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path);
    }

    /// Whether `path` is a full-output file this session's commands created
    /// (it may read those back even when reads are contained).
    pub fn created_output(&self, path: &Path) -> bool {
        self.inner
            .outputs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(path)
    }

    /// What this session last saw at the real path `real`, if anything.
    pub(crate) fn seen(&self, real: &Path) -> Option<Fingerprint> {
        self.seen_map().get(real).map(|seen| seen.fingerprint)
    }

    /// [`Session::seen`] with the line hashes, if they were kept.
    pub(crate) fn seen_entry(&self, real: &Path) -> Option<Seen> {
        self.seen_map().get(real).cloned()
    }

    /// Whether this session has read, edited or written the file at `path`
    /// (any alias of it) and recorded its content.
    pub async fn has_seen(&self, fs: &dyn FileSystem, path: &Path) -> bool {
        match fs.canonicalize(path).await {
            Ok(real) => self.seen(&real).is_some(),
            Err(_) => false,
        }
    }

    fn seen_map(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Seen>> {
        self.inner
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The tool set this session uses.
    pub fn toolset(&self) -> &ToolSet {
        &self.inner.toolset
    }

    /// Takes the next place in arrival order, for a front end to hand to
    /// [`Session::call_in_turn`] when the request arrives (before any await or
    /// task spawn that could reorder requests).
    pub fn admit(&self) -> Ticket {
        let toolset = &self.inner.toolset;
        toolset.queue().ticket_on(&toolset.env().fs)
    }

    /// Calls a tool with the JSON arguments a model produced.
    ///
    /// A read, write or edit takes its place in arrival order (see
    /// [`MutationQueue`](crate::queue::MutationQueue)) when this future is first
    /// polled: calls polled in order reach their file's queue in that order.
    pub async fn call(&self, name: &str, args: Value, options: CallOptions) -> ToolResult {
        self.call_with(None, name, args, options).await
    }

    /// [`Session::call`] in the place `ticket` took when the request arrived.
    pub async fn call_in_turn(
        &self,
        ticket: Ticket,
        name: &str,
        args: Value,
        options: CallOptions,
    ) -> ToolResult {
        self.call_with(Some(ticket), name, args, options).await
    }

    async fn call_with(
        &self,
        ticket: Option<Ticket>,
        name: &str,
        args: Value,
        options: CallOptions,
    ) -> ToolResult {
        crate::call::call(self, ticket, name, args, options).await
    }

    /// The context of one call of this session.
    pub(crate) fn context(&self, ticket: Option<Ticket>, options: &CallOptions) -> ToolContext {
        let toolset = &self.inner.toolset;
        ToolContext {
            env: toolset.env().clone(),
            cwd: toolset.cwd().to_path_buf(),
            config: toolset.config().clone(),
            session: self.clone(),
            queue: toolset.queue().clone(),
            updates: options.updates.clone(),
            group: options
                .group
                .clone()
                .unwrap_or_else(|| self.id().to_owned()),
            ticket: Arc::new(Mutex::new(ticket)),
            read_fs: toolset.inner.read_fs.clone(),
            write_fs: toolset.inner.write_fs.clone(),
            read_search: toolset.inner.read_search.clone(),
            target: None,
            ran: None,
            skip_structured: options.skip_structured,
        }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_hash_does_not_depend_on_how_the_bytes_arrive() {
        let whole = Fingerprint::of(b"hello world, this is some content");
        let mut hasher = ContentHasher::new();
        for chunk in b"hello world, this is some content".chunks(3) {
            hasher.update(chunk);
        }
        assert_eq!(hasher.finish(), whole);
        assert_ne!(Fingerprint::of(b"hello"), Fingerprint::of(b"hellp"));
        assert_eq!(whole.len(), 33);
    }

    #[test]
    fn a_large_texts_hashes_are_the_same_without_a_second_thread() {
        let text = "line of text\n".repeat(200_000);
        let bytes = text.as_bytes();
        let parts = [&bytes[..1_000_003], &bytes[1_000_003..]];
        let mut runs = Vec::new();
        for refuse in [false, true] {
            crate::beside::tests::REFUSE.with(|cell| cell.set(refuse));
            let whole = WrittenHashes::of(bytes, &text);
            let split = WrittenHashes::of_parts(&parts, bytes.len());
            crate::beside::tests::REFUSE.with(|cell| cell.set(false));
            runs.push((whole.content, whole.lines, split.content, split.lines));
        }
        let (content, lines, _, _) = &runs[0];
        assert!(content.is_some());
        assert_eq!(lines.as_ref().map(Vec::len), Some(200_000));
        assert_eq!(runs[0], runs[1]);
        assert_eq!(runs[0].0, runs[0].2);
        assert_eq!(runs[0].1, runs[0].3);
    }
}
