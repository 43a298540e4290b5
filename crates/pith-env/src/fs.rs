//! The file-system port.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;

use crate::{FsError, WriteRules, WriteStream};

/// What a path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (only from [`FileSystem::symlink_metadata`] and [`FileSystem::read_dir`]).
    Symlink,
    /// A socket, FIFO, device or anything else.
    Other,
}

/// What `stat` says about a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// The kind of the path.
    pub kind: FileKind,
    /// Size in bytes.
    pub len: u64,
    /// Last modification time, where the adapter knows it.
    pub modified: Option<SystemTime>,
    /// Unix permission bits (`0o644`), where the adapter knows them.
    pub mode: Option<u32>,
    /// Last status change (`ctime`), where the adapter knows it. Unlike the
    /// modification time no program can set it back: any write, `chmod`, link or
    /// rename moves it on, so it tells one version of a file from another when the
    /// size and modification time agree (`cp -p`, `rsync -t`, `touch -r`).
    pub changed: Option<SystemTime>,
    /// The file's device and inode number, where the adapter knows them: a file
    /// replaced by another (a rename over it) has another.
    pub id: Option<FileId>,
}

/// Which file a path leads to on its machine: device and inode number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    /// The device the file is on.
    pub device: u64,
    /// The file's inode number on that device.
    pub inode: u64,
}

impl Metadata {
    /// Whether this is a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == FileKind::Directory
    }

    /// Whether this is a regular file.
    pub fn is_file(&self) -> bool {
        self.kind == FileKind::File
    }
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's file name (not a path).
    pub name: OsString,
    /// The entry's kind, without following symlinks.
    pub kind: FileKind,
}

/// How [`FileSystem::read_dir_first`] orders entries: by this key of each
/// name, ties by the names' bytes.
pub type DirKey = fn(&std::ffi::OsStr) -> String;

/// The first entries of a directory in some order, and how many it has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirPage {
    /// At most the asked number of entries, in order.
    pub entries: Vec<DirEntry>,
    /// Every entry of the directory (without `.` and `..`).
    pub total: u64,
}

/// The first `limit` entries offered, in [`DirKey`] order, holding at most
/// `limit` of them at any time (a max-heap of the kept ones): a directory of
/// millions of entries is paged in the memory of its first page.
#[derive(Debug)]
pub struct FirstEntries {
    kept: std::collections::BinaryHeap<Ranked>,
    limit: usize,
    key: DirKey,
    total: u64,
}

#[derive(Debug)]
struct Ranked {
    key: String,
    entry: DirEntry,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> std::cmp::Ordering {
        self.key.cmp(&other.key).then_with(|| {
            self.entry
                .name
                .as_encoded_bytes()
                .cmp(other.entry.name.as_encoded_bytes())
        })
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Ranked) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl FirstEntries {
    /// Keeps the first `limit` entries in `key` order.
    pub fn new(limit: usize, key: DirKey) -> FirstEntries {
        FirstEntries {
            kept: std::collections::BinaryHeap::new(),
            limit,
            key,
            total: 0,
        }
    }

    /// Counts `entry` and keeps it if it is among the first `limit` so far.
    pub fn offer(&mut self, entry: DirEntry) {
        self.total += 1;
        if self.limit == 0 {
            return;
        }
        let ranked = Ranked {
            key: (self.key)(&entry.name),
            entry,
        };
        if self.kept.len() == self.limit {
            match self.kept.peek() {
                Some(last) if ranked < *last => {
                    self.kept.pop();
                }
                _ => return,
            }
        }
        self.kept.push(ranked);
    }

    /// The kept entries in order, and the count of all offered.
    pub fn finish(self) -> DirPage {
        DirPage {
            entries: self
                .kept
                .into_sorted_vec()
                .into_iter()
                .map(|ranked| ranked.entry)
                .collect(),
            total: self.total,
        }
    }
}

/// One change of [`FileSystem::write_spliced`]: the bytes `range` of the old
/// file are replaced by `bytes` (an empty range inserts, empty bytes delete).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Splice {
    /// Byte range of the old file.
    pub range: std::ops::Range<u64>,
    /// What replaces it.
    pub bytes: Vec<u8>,
}

/// [`FileSystem::write_spliced`] the portable way: the whole file read, spliced
/// in memory and written back atomically.
pub(crate) async fn write_spliced_portably<F: FileSystem + ?Sized>(
    fs: &F,
    path: &Path,
    splices: &[Splice],
) -> Result<(), FsError> {
    let old = fs.read(path).await?;
    let new = splice_bytes(&old, splices).map_err(|detail| {
        FsError::new(crate::FsErrorKind::InvalidInput, path).with_detail(detail)
    })?;
    drop(old);
    fs.write_atomic(path, &new).await
}

/// Checks that `splices` are sorted, disjoint and within a file of `len` bytes.
pub(crate) fn check_splices(splices: &[Splice], len: u64) -> Result<(), String> {
    let mut end = 0;
    for splice in splices {
        if splice.range.start < end || splice.range.end < splice.range.start {
            return Err("splices must be sorted and must not overlap".to_owned());
        }
        end = splice.range.end;
    }
    if end > len {
        return Err(format!(
            "a splice ends at byte {end}, past the end of the {len}-byte file"
        ));
    }
    Ok(())
}

/// `old` with the splices applied (for adapters that hold files in memory).
pub(crate) fn splice_bytes(old: &[u8], splices: &[Splice]) -> Result<Vec<u8>, String> {
    check_splices(splices, old.len() as u64)?;
    let added: usize = splices.iter().map(|splice| splice.bytes.len()).sum();
    let mut new = Vec::with_capacity(old.len() + added);
    let mut at = 0;
    for splice in splices {
        // In range: checked above against `old.len()`.
        let (start, end) = (splice.range.start as usize, splice.range.end as usize);
        new.extend_from_slice(&old[at..start]);
        new.extend_from_slice(&splice.bytes);
        at = end;
    }
    new.extend_from_slice(&old[at..]);
    Ok(new)
}

/// A file opened for sequential reading.
#[async_trait]
pub trait FileReader: Send {
    /// Reads up to `buf.len()` bytes into `buf`; returns 0 at end of file.
    async fn read_chunk(&mut self, buf: &mut [u8]) -> Result<usize, FsError>;

    /// Reads past the next `max` bytes (fewer at end of file) without
    /// returning them, counting their lines; the next [`read_chunk`]
    /// continues after them. The default reads them through
    /// [`read_chunk`](FileReader::read_chunk); a remote reader counts them
    /// where the file is, so they do not cross the wire.
    ///
    /// [`read_chunk`]: FileReader::read_chunk
    async fn count_lines(&mut self, max: u64) -> Result<LineCount, FsError> {
        let mut buf = vec![0_u8; usize::try_from(max.min(256 * 1024)).unwrap_or(256 * 1024)];
        let mut count = LineCount::default();
        while count.bytes < max {
            let want = usize::try_from(max - count.bytes)
                .unwrap_or(usize::MAX)
                .min(buf.len());
            let read = self.read_chunk(&mut buf[..want]).await?;
            if read == 0 {
                break;
            }
            count.add(&buf[..read]);
        }
        Ok(count)
    }

    /// Reads past the next bytes up to and including the `lines`-th newline
    /// (`lines` ≥ 1), or `max` bytes if that comes first (fewer at end of
    /// file), without returning them: where a page deep in a file starts.
    /// The next [`read_chunk`](FileReader::read_chunk) continues after them.
    /// `None` when the reader cannot (the default; the caller reads chunks):
    /// a local reader scans memory-mapped windows of the file, sparing the
    /// copy `read_chunk` makes.
    async fn skip_lines(&mut self, lines: u64, max: u64) -> Result<Option<LineCount>, FsError> {
        let _ = (lines, max);
        Ok(None)
    }
}

/// What [`FileReader::count_lines`] read past.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCount {
    /// Bytes read past (less than asked only at end of file).
    pub bytes: u64,
    /// Newline bytes among them.
    pub newlines: u64,
    /// Bytes after the last newline (all of them when there is none).
    pub after_last_newline: u64,
    /// The last byte, if any.
    pub last_byte: Option<u8>,
}

impl LineCount {
    /// Counts `bytes`, which follow the bytes counted so far.
    pub fn add(&mut self, bytes: &[u8]) {
        let Some(&last) = bytes.last() else {
            return;
        };
        self.bytes += bytes.len() as u64;
        self.last_byte = Some(last);
        let newlines = memchr::memchr_iter(b'\n', bytes).count() as u64;
        if newlines == 0 {
            self.after_last_newline += bytes.len() as u64;
        } else {
            self.newlines += newlines;
            let after = memchr::memrchr(b'\n', bytes).map_or(0, |index| index + 1);
            self.after_last_newline = (bytes.len() - after) as u64;
        }
    }

    /// Adds the count of the bytes that follow the ones counted so far.
    pub fn extend(&mut self, next: &LineCount) {
        if next.bytes == 0 {
            return;
        }
        self.bytes += next.bytes;
        self.last_byte = next.last_byte;
        if next.newlines == 0 {
            self.after_last_newline += next.after_last_newline;
        } else {
            self.newlines += next.newlines;
            self.after_last_newline = next.after_last_newline;
        }
    }
}

/// Where a confined view of a file system may go (see [`FileSystem::confine`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Confinement {
    /// Absolute directories; every path must resolve beneath one of them.
    pub roots: Vec<PathBuf>,
    /// Judge writes, new directories and removals, when set.
    pub write_rules: Option<WriteRules>,
}

impl Confinement {
    /// Confinement beneath `roots`, without write rules.
    pub fn new(roots: Vec<PathBuf>) -> Confinement {
        Confinement {
            roots,
            write_rules: None,
        }
    }

    /// Adds write rules.
    pub fn with_write_rules(mut self, rules: WriteRules) -> Confinement {
        self.write_rules = Some(rules);
        self
    }
}

/// The file-system port.
///
/// Contract every adapter keeps:
/// - Paths are absolute; adapters do not resolve relative paths.
/// - [`write_atomic`](FileSystem::write_atomic) replaces the file whole: a
///   concurrent reader sees the old bytes or the new bytes, never a mixture or
///   a truncated file; on failure the old file is untouched. An existing
///   file's permissions are kept; a symlink is written through (its target is
///   replaced, the link stays).
/// - Reads never load more than asked: [`open`](FileSystem::open) streams and
///   [`read_range`](FileSystem::read_range) reads a window.
/// - Every error carries the path it concerns.
/// - Reads never block on a special file: reading a FIFO, socket or device
///   fails at once with [`FsErrorKind::SpecialFile`](crate::FsErrorKind::SpecialFile)
///   naming its kind, and `write_atomic` refuses to replace one the same way.
///
/// Confined views ([`confine`](FileSystem::confine)) add, for every operation:
/// - The path is resolved beneath one of the roots *by the adapter, at the
///   moment of the operation*, and the operation acts on what that resolution
///   found (an open handle, never the path re-walked): a concurrent rename or
///   symlink swap can make it fail, never make it act outside the roots.
///   Symlinks are followed like the kernel does (also `link/..`, which is the
///   link target's parent) as long as every step stays beneath the root.
/// - A path that resolves outside every root fails with
///   [`FsErrorKind::OutsideRoots`](crate::FsErrorKind::OutsideRoots).
/// - `write_atomic`, `create_dir_all`, `remove_dir` and `remove_file` ask
///   the [`WriteRules`] about the resolved path first; a refusal is
///   [`FsErrorKind::Protected`](crate::FsErrorKind::Protected) and nothing is changed.
/// - A failed `write_atomic` leaves no temp file anywhere.
#[async_trait]
pub trait FileSystem: Send + Sync {
    /// Reads a whole file.
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError>;

    /// Reads at most `max_len` bytes starting at byte `offset` (fewer at end of file).
    async fn read_range(
        &self,
        path: &Path,
        offset: u64,
        max_len: usize,
    ) -> Result<Vec<u8>, FsError>;

    /// Opens a file for streaming reads from its start.
    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError>;

    /// Replaces (or creates) a file atomically. The parent directory must exist.
    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError>;

    /// Replaces (or creates) a file atomically, as [`write_atomic`](FileSystem::write_atomic)
    /// does, with the concatenation of `parts` (an edit writes the unchanged
    /// stretches of the old content and the replacements between them, never
    /// building the new content whole). The default concatenates and calls
    /// `write_atomic`; `LocalEnv` writes each part into the temp file in turn.
    async fn write_atomic_parts(&self, path: &Path, parts: &[&[u8]]) -> Result<(), FsError> {
        let bytes = parts.concat();
        self.write_atomic(path, &bytes).await
    }

    /// [`write_atomic_parts`](FileSystem::write_atomic_parts) that makes the new
    /// file visible only when `gate` says so: the parts are written into the temp
    /// file and synced, then it waits for the gate; `true` renames it over `path`,
    /// `false` (or a sender dropped without a word) discards it and fails with
    /// [`FsErrorKind::Cancelled`](crate::FsErrorKind::Cancelled), the file untouched.
    /// A caller runs it beside what must precede the rename (the undo journal's
    /// record), so the bytes go to the disk meanwhile. The default waits for the
    /// gate first, then writes.
    async fn write_atomic_parts_gated(
        &self,
        path: &Path,
        parts: &[&[u8]],
        gate: std::sync::mpsc::Receiver<bool>,
    ) -> Result<(), FsError> {
        let open = tokio::task::spawn_blocking(move || gate.recv().unwrap_or(false))
            .await
            .unwrap_or(false);
        if !open {
            return Err(FsError::new(crate::FsErrorKind::Cancelled, path));
        }
        self.write_atomic_parts(path, parts).await
    }

    /// Replaces (or creates) a file atomically, as [`write_atomic`](FileSystem::write_atomic)
    /// does, with bytes that arrive while it is written: `LocalEnv` writes each
    /// chunk into the temp file as it comes (and starts its writeback), so the
    /// transfer, the page-cache copy and the disk overlap; the far side of a
    /// remote connection writes this way. When the stream stops before
    /// [`size`](WriteStream::size) bytes (its sender dropped) or runs past
    /// them, the write fails and the file is untouched, no temp file left.
    /// The default gathers the bytes and calls `write_atomic`.
    async fn write_atomic_streamed(&self, path: &Path, stream: WriteStream) -> Result<(), FsError> {
        let bytes = stream.gather(path).await?;
        self.write_atomic(path, &bytes).await
    }

    /// Replaces an existing file atomically, as [`write_atomic`](FileSystem::write_atomic)
    /// does, with its current bytes except that each splice's byte range is
    /// replaced by the splice's bytes: an edit of a file of any size without
    /// holding the file in memory.
    ///
    /// Contract: `splices` are sorted by range and do not overlap, and every
    /// range lies within the file (else an `InvalidInput` error, and the file
    /// is untouched); an empty list rewrites the file unchanged. Adapters copy
    /// the unchanged bytes from the old file to the new one without holding
    /// them whole where they can (`LocalEnv` copies in the kernel); the default
    /// reads the file, splices in memory and calls `write_atomic`, which is
    /// right for adapters whose files are in memory anyway, and for a remote
    /// adapter is correct but moves the whole file, so a remote adapter should
    /// forward the call and splice on the far side.
    async fn write_spliced(&self, path: &Path, splices: &[Splice]) -> Result<(), FsError> {
        write_spliced_portably(self, path, splices).await
    }

    /// `stat`: follows symlinks.
    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError>;

    /// `lstat`: does not follow a final symlink.
    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError>;

    /// Lists a directory (without `.` and `..`), in no particular order.
    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError>;

    /// The first `limit` entries of a directory in `key` order (see
    /// [`DirKey`]), and how many entries it has. The local file system holds
    /// only the first `limit` while it lists; this default lists the whole
    /// directory first, then keeps them.
    async fn read_dir_first(
        &self,
        path: &Path,
        limit: usize,
        key: DirKey,
    ) -> Result<DirPage, FsError> {
        let mut first = FirstEntries::new(limit, key);
        for entry in self.read_dir(path).await? {
            first.offer(entry);
        }
        Ok(first.finish())
    }

    /// `realpath`: the absolute path with every symlink resolved; the path must exist.
    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError>;

    /// `mkdir -p`.
    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError>;

    /// `rmdir`: removes an empty directory (a write uses it to undo the
    /// directories it created when the write itself fails). Adapters that
    /// cannot remove directories keep the default, which reports `Unsupported`.
    async fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        Err(FsError::new(crate::FsErrorKind::Unsupported, path))
    }

    /// `unlink`: removes a file or a symlink (never what a symlink points to;
    /// `apply_patch` deletes files and `undo` removes a file a write created).
    /// Confined views ask the write guard first. Adapters that cannot remove
    /// files keep the default, which reports `Unsupported`.
    async fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        Err(FsError::new(crate::FsErrorKind::Unsupported, path))
    }

    /// The user's home directory as this environment sees it, if any.
    fn home_dir(&self) -> Option<PathBuf>;

    /// A view of this file system confined beneath `confinement`'s roots (see
    /// the contract above). Adapters that cannot confine keep the default: a
    /// view that refuses every operation with `Unsupported`, never one that
    /// silently does not confine.
    fn confine(self: Arc<Self>, confinement: Confinement) -> Arc<dyn FileSystem> {
        let _ = confinement;
        Arc::new(Unconfinable {
            home: self.home_dir(),
        })
    }
}

/// The default confined view: refuses everything.
struct Unconfinable {
    home: Option<PathBuf>,
}

#[async_trait]
impl FileSystem for Unconfinable {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        Err(unsupported(path))
    }
    async fn read_range(&self, path: &Path, _: u64, _: usize) -> Result<Vec<u8>, FsError> {
        Err(unsupported(path))
    }
    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError> {
        Err(unsupported(path))
    }
    async fn write_atomic(&self, path: &Path, _: &[u8]) -> Result<(), FsError> {
        Err(unsupported(path))
    }
    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        Err(unsupported(path))
    }
    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        Err(unsupported(path))
    }
    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        Err(unsupported(path))
    }
    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        Err(unsupported(path))
    }
    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        Err(unsupported(path))
    }
    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }
}

fn unsupported(path: &Path) -> FsError {
    FsError::new(crate::FsErrorKind::Unsupported, path)
        .with_detail("this environment cannot confine file operations to roots")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> DirEntry {
        DirEntry {
            name: name.into(),
            kind: FileKind::File,
        }
    }

    proptest::proptest! {
        /// Whatever order the listing comes in, the first `limit` entries are
        /// those of the sorted listing, and every entry is counted.
        #[test]
        fn first_entries_are_the_sorted_listings_first(
            names in proptest::collection::hash_set("[a-cA-C_.]{1,4}", 0..60),
            limit in 0usize..70,
        ) {
            let key: DirKey = |name| name.to_string_lossy().to_lowercase();
            let mut first = FirstEntries::new(limit, key);
            for name in &names {
                first.offer(entry(name));
            }
            let page = first.finish();
            let mut sorted: Vec<&String> = names.iter().collect();
            sorted.sort_by(|a, b| a.to_lowercase().cmp(&b.to_lowercase()).then_with(|| a.cmp(b)));
            let expected: Vec<String> = sorted.into_iter().take(limit).cloned().collect();
            let got: Vec<String> = page
                .entries
                .iter()
                .map(|entry| entry.name.to_string_lossy().into_owned())
                .collect();
            proptest::prop_assert_eq!(got, expected);
            proptest::prop_assert_eq!(page.total, names.len() as u64);
        }
    }
}
