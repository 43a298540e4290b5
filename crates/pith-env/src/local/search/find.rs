//! `find`: every entry whose path matches a glob, sorted.
//!
//! Determinism versus stopping early: the result is the first `limit` matches
//! in path order, which only a complete walk can know (a parallel walk visits
//! directories in no fixed order, and a sorted single-threaded walk that stops
//! at `limit` is slower than fd on large trees). So the tree is walked in
//! parallel to the end, each walker thread keeping only its `limit` smallest
//! matches in a bounded heap; the heaps are merged, sorted and cut. Memory is
//! O(threads × limit) whatever the tree size and the output never depends on
//! thread timing.
//!
//! A thread whose heap is full skips every entry that sorts after its largest
//! kept match, and whole directories that do (everything below them sorts
//! after them too). The match count is then a lower bound; `limit_reached`
//! must mean that more than `limit` matches exist, so in the one case where
//! the count stops at exactly `limit` after something was skipped, the walk is
//! repeated without skipping.

use std::collections::BinaryHeap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ignore::{DirEntry, WalkState};

use super::glob::PathGlob;
use super::{RootKind, Stop, relative_path, root_kind, thread_count, walker};
use crate::{FindEntry, FindOutput, FindRequest, FsError, FsErrorKind, SearchError};

/// A match: its sort key (the relative path's bytes with `/` as `\0`, which
/// orders paths component-wise, so `a/b` sorts before `a.txt`, with a plain
/// byte comparison) and whether it is a directory.
type Found = (Vec<u8>, bool);

pub(super) fn find(request: &FindRequest, cancel: &Stop) -> Result<FindOutput, SearchError> {
    let glob = PathGlob::new(&request.pattern)?;
    if root_kind(&request.root)? != RootKind::Directory {
        return Err(SearchError::Fs(FsError::new(
            FsErrorKind::NotADirectory,
            &request.root,
        )));
    }
    let limit = request.limit.max(1);
    let output = walk(request, &glob, limit, cancel, true)?;
    match output {
        Walked::Done(output) => Ok(output),
        Walked::Unsure => match walk(request, &glob, limit, cancel, false)? {
            Walked::Done(output) => Ok(output),
            Walked::Unsure => Err(SearchError::Cancelled),
        },
    }
}

enum Walked {
    Done(FindOutput),
    /// Exactly `limit` matches seen after skipping: more may exist.
    Unsure,
}

fn walk(
    request: &FindRequest,
    glob: &PathGlob,
    limit: usize,
    cancel: &Stop,
    prune: bool,
) -> Result<Walked, SearchError> {
    let shared = Shared {
        heaps: Mutex::new(Vec::new()),
        total: AtomicUsize::new(0),
        pruned: AtomicBool::new(false),
    };
    walker(&request.root)
        .threads(thread_count())
        .build_parallel()
        .run(|| {
            let mut collector = Collector {
                heap: BinaryHeap::new(),
                limit,
                prune,
                key: Vec::new(),
                shared: &shared,
            };
            let root = &request.root;
            Box::new(move |entry| {
                if cancel.is_set() {
                    return WalkState::Quit;
                }
                match entry {
                    Ok(entry) => collector.visit(&entry, root, glob),
                    Err(_) => WalkState::Continue,
                }
            })
        });
    if cancel.is_set() {
        return Err(SearchError::Cancelled);
    }
    let total = shared.total.into_inner();
    if total == limit && shared.pruned.into_inner() {
        return Ok(Walked::Unsure);
    }
    let heaps = shared.heaps.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut found: Vec<Found> = heaps.into_iter().flatten().collect();
    found.sort_unstable();
    found.truncate(limit);
    let entries = found
        .into_iter()
        .map(|(mut key, is_dir)| {
            for byte in &mut key {
                if *byte == 0 {
                    *byte = b'/';
                }
            }
            let path = match String::from_utf8(key) {
                Ok(path) => path,
                Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
            };
            FindEntry { path, is_dir }
        })
        .collect();
    Ok(Walked::Done(FindOutput {
        entries,
        limit_reached: total > limit,
    }))
}

struct Shared {
    heaps: Mutex<Vec<Vec<Found>>>,
    total: AtomicUsize,
    /// Whether any thread skipped entries (see the module docs).
    pruned: AtomicBool,
}

/// One walker thread's bounded max-heap of its smallest matches; handed to
/// [`Shared`] when the thread's visitor is dropped at the end of the walk.
struct Collector<'s> {
    heap: BinaryHeap<Found>,
    limit: usize,
    prune: bool,
    /// The current entry's key (reused).
    key: Vec<u8>,
    shared: &'s Shared,
}

impl Collector<'_> {
    fn visit(&mut self, entry: &DirEntry, root: &std::path::Path, glob: &PathGlob) -> WalkState {
        if entry.depth() == 0 {
            return WalkState::Continue;
        }
        let relative = relative_path(root, entry.path());
        let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
        let full = self.heap.len() == self.limit;
        let mut keyed = false;
        if full && self.prune {
            set_key(&mut self.key, relative);
            keyed = true;
            if self.heap.peek().is_some_and(|largest| largest.0 < self.key) {
                // This entry and everything below it sort after `limit`
                // matches this thread already holds.
                self.shared.pruned.store(true, Ordering::Relaxed);
                return if is_dir {
                    WalkState::Skip
                } else {
                    WalkState::Continue
                };
            }
        }
        if !glob.is_match(relative, is_dir) {
            return WalkState::Continue;
        }
        self.shared.total.fetch_add(1, Ordering::Relaxed);
        if !keyed {
            set_key(&mut self.key, relative);
        }
        if full
            && self
                .heap
                .peek()
                .is_some_and(|largest| largest.0 <= self.key)
        {
            return WalkState::Continue;
        }
        self.heap.push((self.key.clone(), is_dir));
        if self.heap.len() > self.limit {
            self.heap.pop();
        }
        WalkState::Continue
    }
}

/// Sets `key` to the sort key of `relative` (see [`Found`]).
fn set_key(key: &mut Vec<u8>, relative: &std::path::Path) {
    key.clear();
    key.extend(
        relative
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .map(|&byte| if byte == b'/' { 0 } else { byte }),
    );
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        let heap = std::mem::take(&mut self.heap).into_vec();
        let mut heaps = self.shared.heaps.lock().unwrap_or_else(|e| e.into_inner());
        heaps.push(heap);
    }
}
