//! `find`: every entry whose path matches a glob, sorted.
//!
//! Determinism versus stopping early: the result is the first `limit` matches
//! in path order, which only a complete walk can know (a parallel walk visits
//! directories in no fixed order, and a sorted single-threaded walk that stops
//! at `limit` is slower than fd on large trees). So the tree is walked in
//! parallel to the end, each walker thread keeping only its `limit` smallest
//! matches in a bounded heap; the heaps are merged, sorted and cut. Memory is
//! O(threads × limit) whatever the tree size, the output never depends on
//! thread timing, and the match count is exact, so `limit_reached` means that
//! more matches exist.

use std::collections::BinaryHeap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ignore::{DirEntry, WalkState};
use tokio_util::sync::CancellationToken;

use super::glob::PathGlob;
use super::{RootKind, relative_display, root_kind, thread_count, walker};
use crate::{FindEntry, FindOutput, FindRequest, FsError, FsErrorKind, SearchError};

/// A match: its path relative to the root and whether it is a directory.
/// Ordered by path (component-wise, so `a/b` sorts before `a.txt`).
type Found = (PathBuf, bool);

pub(super) fn find(
    request: &FindRequest,
    cancel: &CancellationToken,
) -> Result<FindOutput, SearchError> {
    let glob = PathGlob::new(&request.pattern)?;
    if root_kind(&request.root)? != RootKind::Directory {
        return Err(SearchError::Fs(FsError::new(
            FsErrorKind::NotADirectory,
            &request.root,
        )));
    }
    let limit = request.limit.max(1);
    let shared = Shared {
        heaps: Mutex::new(Vec::new()),
        total: AtomicUsize::new(0),
    };
    walker(&request.root)
        .threads(thread_count())
        .build_parallel()
        .run(|| {
            let mut collector = Collector {
                heap: BinaryHeap::new(),
                limit,
                shared: &shared,
            };
            let glob = &glob;
            let root = &request.root;
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                if let Ok(entry) = entry {
                    collector.visit(&entry, root, glob);
                }
                WalkState::Continue
            })
        });
    if cancel.is_cancelled() {
        return Err(SearchError::Cancelled);
    }
    let heaps = shared.heaps.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut found: Vec<Found> = heaps.into_iter().flatten().collect();
    found.sort_unstable();
    found.truncate(limit);
    let entries = found
        .into_iter()
        .map(|(path, is_dir)| FindEntry {
            path: relative_display(std::path::Path::new(""), &path),
            is_dir,
        })
        .collect();
    Ok(FindOutput {
        entries,
        limit_reached: shared.total.into_inner() > limit,
    })
}

struct Shared {
    heaps: Mutex<Vec<Vec<Found>>>,
    total: AtomicUsize,
}

/// One walker thread's bounded max-heap of its smallest matches; handed to
/// [`Shared`] when the thread's visitor is dropped at the end of the walk.
struct Collector<'s> {
    heap: BinaryHeap<Found>,
    limit: usize,
    shared: &'s Shared,
}

impl Collector<'_> {
    fn visit(&mut self, entry: &DirEntry, root: &std::path::Path, glob: &PathGlob) {
        if entry.depth() == 0 {
            return;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            return;
        };
        let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
        if !glob.is_match(relative, is_dir) {
            return;
        }
        self.shared.total.fetch_add(1, Ordering::Relaxed);
        if self.heap.len() == self.limit
            && self
                .heap
                .peek()
                .is_some_and(|largest| largest.0.as_path() <= relative)
        {
            return;
        }
        self.heap.push((relative.to_path_buf(), is_dir));
        if self.heap.len() > self.limit {
            self.heap.pop();
        }
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        let heap = std::mem::take(&mut self.heap).into_vec();
        let mut heaps = self.shared.heaps.lock().unwrap_or_else(|e| e.into_inner());
        heaps.push(heap);
    }
}
