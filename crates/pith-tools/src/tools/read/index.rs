//! A per-session line index: where some lines of a large file start, so that a
//! second page deep in the file is read from near that page rather than from
//! its first byte.
//!
//! The line scanner ([`super::text::Scanner`]) notes checkpoints as it counts
//! (the start of a line, at least [`FIRST_SPACING`] bytes after the last one);
//! the read tool keeps them per file in [`LineIndexes`], keyed by the file's
//! identity as the file system reports it: its path, size, modification and
//! status-change times and device and inode (the last two where the adapter
//! knows them). A file that changes gets a new key, even one replaced by a file
//! of the same size and modification time, so a stale index is never used. Bounded: at most [`MAX_CHECKPOINTS`] per file
//! (the spacing doubles when a file would need more) and [`MAX_FILES`] files,
//! least recently used first out: under 300 KiB in all.
//!
//! Only files read by stamp (too large to hash, see
//! [`HASHED_MAX_BYTES`](crate::session::HASHED_MAX_BYTES)) use it: a hashed
//! file is read whole anyway.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Bytes between checkpoints to start with.
pub(super) const FIRST_SPACING: u64 = 1 << 20;
/// Checkpoints kept per file.
const MAX_CHECKPOINTS: usize = 2048;
/// Files indexed at once.
const MAX_FILES: usize = 8;

/// The start of a line: its 0-based index and its byte offset (after a BOM).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Checkpoint {
    pub(super) line: u64,
    pub(super) pos: u64,
}

/// The checkpoints of one file, sorted, at least `spacing` bytes apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct LineIndex {
    spacing: u64,
    points: Vec<Checkpoint>,
}

impl Default for LineIndex {
    fn default() -> LineIndex {
        LineIndex {
            spacing: FIRST_SPACING,
            points: Vec::new(),
        }
    }
}

impl LineIndex {
    /// The offset after which the next checkpoint is due, given the last one.
    pub(super) fn due_after(&self) -> u64 {
        self.points
            .last()
            .map_or(self.spacing, |last| last.pos + self.spacing)
    }

    /// Notes a line start found while scanning forward (positions only grow).
    pub(super) fn push(&mut self, point: Checkpoint) {
        if point.pos >= self.due_after() {
            self.points.push(point);
            if self.points.len() > MAX_CHECKPOINTS {
                self.thin();
            }
        }
    }

    /// The last checkpoint at or before line `line`.
    pub(super) fn before(&self, line: u64) -> Option<Checkpoint> {
        let after = self.points.partition_point(|point| point.line <= line);
        after
            .checked_sub(1)
            .and_then(|at| self.points.get(at))
            .copied()
    }

    /// Adds what another scan of the same file found.
    pub(super) fn merge(&mut self, other: &LineIndex) {
        self.spacing = self.spacing.max(other.spacing);
        let mut points: Vec<Checkpoint> =
            self.points.iter().chain(&other.points).copied().collect();
        points.sort_by_key(|point| point.pos);
        points.dedup_by_key(|point| point.pos);
        self.points = points;
        self.respace();
        while self.points.len() > MAX_CHECKPOINTS {
            self.thin();
        }
    }

    /// Doubles the spacing and drops the checkpoints it no longer needs.
    fn thin(&mut self) {
        self.spacing *= 2;
        self.respace();
    }

    /// Keeps checkpoints at least `spacing` apart, first to last.
    fn respace(&mut self) {
        let spacing = self.spacing;
        let mut last: Option<u64> = None;
        self.points.retain(|point| {
            let keep = last.is_none_or(|last| point.pos >= last + spacing);
            if keep {
                last = Some(point.pos);
            }
            keep
        });
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.points.len()
    }
}

/// What identifies one version of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FileKey {
    pub(super) path: PathBuf,
    pub(super) len: u64,
    pub(super) modified: SystemTime,
    pub(super) changed: Option<SystemTime>,
    pub(super) id: Option<pith_env::FileId>,
}

impl FileKey {
    /// The key of `path` with this metadata, when the file system knows its modification time.
    pub(super) fn of(path: &Path, metadata: &pith_env::Metadata) -> Option<FileKey> {
        Some(FileKey {
            path: path.to_path_buf(),
            len: metadata.len,
            modified: metadata.modified?,
            changed: metadata.changed,
            id: metadata.id,
        })
    }
}

/// The line indexes of the files a session read, least recently used first.
#[derive(Debug, Default)]
pub(crate) struct LineIndexes {
    files: Mutex<Vec<(FileKey, LineIndex)>>,
}

impl LineIndexes {
    /// The last checkpoint at or before line `line` of the file `key` names.
    pub(super) fn before(&self, key: &FileKey, line: u64) -> Option<Checkpoint> {
        let files = self.files.lock().unwrap_or_else(|error| error.into_inner());
        files
            .iter()
            .find(|(known, _)| known == key)
            .and_then(|(_, index)| index.before(line))
    }

    /// Adds the checkpoints a scan of `key` noted; drops any index of an older
    /// version of the same path.
    pub(super) fn add(&self, key: FileKey, found: &LineIndex) {
        let mut files = self.files.lock().unwrap_or_else(|error| error.into_inner());
        let mut index = match files.iter().position(|(known, _)| known == &key) {
            Some(at) => files.remove(at).1,
            None => LineIndex::default(),
        };
        files.retain(|(known, _)| known.path != key.path);
        index.merge(found);
        files.push((key, index));
        if files.len() > MAX_FILES {
            files.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(line: u64, pos: u64) -> Checkpoint {
        Checkpoint { line, pos }
    }

    #[test]
    fn keeps_checkpoints_a_spacing_apart_and_finds_the_one_before_a_line() {
        let mut index = LineIndex::default();
        index.push(point(10, 100));
        index.push(point(20_000, FIRST_SPACING));
        index.push(point(20_001, FIRST_SPACING + 5));
        index.push(point(40_000, 2 * FIRST_SPACING + 1));
        assert_eq!(index.len(), 2);
        assert_eq!(index.before(5), None);
        assert_eq!(index.before(20_000), Some(point(20_000, FIRST_SPACING)));
        assert_eq!(index.before(39_999), Some(point(20_000, FIRST_SPACING)));
        assert_eq!(
            index.before(u64::MAX),
            Some(point(40_000, 2 * FIRST_SPACING + 1))
        );
    }

    #[test]
    fn a_full_index_doubles_its_spacing() {
        let mut index = LineIndex::default();
        for n in 1..=(MAX_CHECKPOINTS as u64 + 1) {
            index.push(point(n * 1000, n * FIRST_SPACING));
        }
        assert!(index.len() <= MAX_CHECKPOINTS / 2 + 1, "{}", index.len());
        assert_eq!(index.spacing, 2 * FIRST_SPACING);
        let mut other = LineIndex::default();
        other.push(point(1500, FIRST_SPACING + FIRST_SPACING / 2));
        index.merge(&other);
        assert!(index.len() <= MAX_CHECKPOINTS);
        assert!(
            index
                .points
                .windows(2)
                .all(|pair| pair[1].pos >= pair[0].pos + index.spacing)
        );
    }

    #[test]
    fn a_changed_file_is_not_looked_up_and_old_files_go_first() {
        let indexes = LineIndexes::default();
        let key = |name: &str, len| FileKey {
            path: PathBuf::from(name),
            len,
            modified: SystemTime::UNIX_EPOCH,
            changed: None,
            id: None,
        };
        let mut found = LineIndex::default();
        found.push(point(9000, FIRST_SPACING));
        indexes.add(key("/a", 10), &found);
        assert_eq!(
            indexes.before(&key("/a", 10), 10_000),
            Some(point(9000, FIRST_SPACING))
        );
        assert_eq!(indexes.before(&key("/a", 11), 10_000), None);
        // Same size and modification time, but another file or another version.
        let replaced = FileKey {
            id: Some(pith_env::FileId {
                device: 1,
                inode: 2,
            }),
            ..key("/a", 10)
        };
        assert_eq!(indexes.before(&replaced, 10_000), None);
        let touched = FileKey {
            changed: Some(SystemTime::UNIX_EPOCH),
            ..key("/a", 10)
        };
        assert_eq!(indexes.before(&touched, 10_000), None);
        indexes.add(key("/a", 11), &LineIndex::default());
        assert_eq!(indexes.before(&key("/a", 10), 10_000), None);
        for n in 0..MAX_FILES as u64 {
            indexes.add(key(&format!("/f{n}"), 1), &found);
        }
        assert_eq!(indexes.before(&key("/a", 11), 10_000), None);
        assert!(indexes.before(&key("/f0", 1), 10_000).is_some());
    }
}
