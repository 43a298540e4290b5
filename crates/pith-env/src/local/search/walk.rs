//! A parallel walk that yields entries in path order and can stop anywhere.
//!
//! Directories are listed (read, sorted by name, filtered by the ignore
//! [`rules`](super::rules) and the caller's selection) by whichever thread
//! gets to them, most urgent first: pending directories wait in a priority
//! queue keyed by path, so the next one the ordered output needs is always
//! listed first, and the others are listed ahead of need by idle threads.
//! A cursor shared by the consumers walks the listings depth first, which is
//! path order (component-wise: `a/b` before `a.txt`). A consumer that finds
//! the next directory unlisted lists it itself; one that finds it being
//! listed by another thread lists the next pending one meanwhile.
//!
//! At most [`AHEAD`] directories are listed ahead of the cursor, which bounds
//! both memory and the work wasted when the consumer stops early.
//! Hidden entries are included, anything named `.git` is not, and symbolic
//! links are listed but never followed.
//!
//! The walk is confined to its start directory by handles: the start directory
//! is the handle the search opened (by path, or beneath the roots by handle),
//! and every directory below it is opened relative
//! to its parent's handle with `O_NOFOLLOW | O_DIRECTORY` (the ignore files it
//! holds are read through that handle too), and every entry carries its
//! directory's handle so that grep opens files relative to it, with
//! `O_NOFOLLOW`. A directory swapped for a symlink to elsewhere after it was
//! listed fails to open and is skipped; nothing outside the start directory is
//! ever listed or searched, whatever renames race the walk.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};

use super::Stop;
use super::relative_bytes;
use super::rules::{Found, Node, Rules};

/// How many directories may be listed ahead of the cursor.
const AHEAD: usize = 256;

/// An entry the caller selected.
#[derive(Debug)]
pub(super) struct Entry {
    /// The root joined with the entry's relative path.
    pub(super) path: PathBuf,
    pub(super) is_dir: bool,
    /// The handle of the directory holding the entry: files are opened
    /// relative to it, never by `path`.
    pub(super) dir: Arc<OwnedFd>,
}

/// Decides which entries the walk yields: `(relative path, is_dir, is_file)`.
/// Directories are descended whatever it says.
pub(super) type Select<'a> = dyn Fn(&[u8], bool, bool) -> bool + Sync + 'a;

/// One listed entry: selected, or a directory to descend (or both).
struct Listed {
    entry: Entry,
    selected: bool,
    /// The directory's slot, when it is one.
    child: Option<usize>,
}

/// A directory to list and the rules in force in its parent.
struct Task {
    path: PathBuf,
    rules: Option<Arc<Node>>,
    /// The handle of the parent directory; `None` for the start directory.
    parent: Option<Arc<OwnedFd>>,
    /// The start directory's handle, opened by the search (taken when listed).
    start: Option<OwnedFd>,
}

/// How a directory is opened for listing.
const LIST_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

impl Task {
    /// The directory's handle: the start directory's own, any other
    /// relative to its parent's handle without following a symlink.
    fn open(&mut self) -> Option<OwnedFd> {
        if let Some(start) = self.start.take() {
            return Some(start);
        }
        match &self.parent {
            None => None,
            Some(parent) => rfs::openat(
                &**parent,
                self.path.file_name()?,
                LIST_FLAGS | OFlags::NOFOLLOW,
                Mode::empty(),
            )
            .ok(),
        }
    }
}

enum Slot {
    Pending(Task),
    Listing,
    Listed(Vec<Listed>),
}

struct Inner {
    slots: HashMap<usize, Slot>,
    /// Pending directories by path order (stale ids are skipped).
    queue: BinaryHeap<Reverse<(Vec<u8>, usize)>>,
    /// Depth-first position: the remaining entries of each open directory.
    stack: Vec<std::vec::IntoIter<Listed>>,
    /// The directory the cursor enters next.
    entering: Option<usize>,
    /// Directories being listed or listed but not yet entered.
    ahead: usize,
    /// Entries yielded so far.
    yielded: usize,
    /// Threads sleeping on the condvar.
    sleepers: usize,
    finished: bool,
}

/// The walk; shared by reference between the threads of one search.
pub(super) struct OrderedWalk<'a> {
    rules: Rules,
    root: PathBuf,
    select: &'a Select<'a>,
    stop: &'a Stop,
    next_id: AtomicUsize,
    inner: Mutex<Inner>,
    changed: Condvar,
}

impl<'a> OrderedWalk<'a> {
    /// A walk of the directory `start` (opened as `root`).
    pub(super) fn new(
        root: &Path,
        start: OwnedFd,
        select: &'a Select<'a>,
        stop: &'a Stop,
    ) -> OrderedWalk<'a> {
        let rules = Rules::new(root);
        let task = Task {
            path: root.to_path_buf(),
            rules: rules.above_root(),
            parent: None,
            start: Some(start),
        };
        let mut slots = HashMap::new();
        slots.insert(0, Slot::Pending(task));
        OrderedWalk {
            rules,
            root: root.to_path_buf(),
            select,
            stop,
            next_id: AtomicUsize::new(1),
            inner: Mutex::new(Inner {
                slots,
                queue: BinaryHeap::new(),
                stack: Vec::new(),
                entering: Some(0),
                ahead: 0,
                yielded: 0,
                sleepers: 0,
                finished: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends the walk for every thread (nothing more is yielded).
    pub(super) fn finish(&self) {
        let mut inner = self.lock();
        inner.finished = true;
        if inner.sleepers > 0 {
            self.changed.notify_all();
        }
    }

    /// The next selected entry in path order and its number among them;
    /// `None` at the end, after [`finish`](Self::finish) or once stopped.
    pub(super) fn next(&self) -> Option<(usize, Entry)> {
        let mut inner = self.lock();
        loop {
            if inner.finished || self.stop.is_set() {
                return None;
            }
            if let Some(id) = inner.entering {
                match inner.slots.remove(&id) {
                    Some(Slot::Listed(listed)) => {
                        inner.stack.push(listed.into_iter());
                        inner.entering = None;
                        inner.ahead -= 1;
                        if inner.sleepers > 0 {
                            self.changed.notify_all();
                        }
                    }
                    Some(Slot::Pending(task)) => {
                        inner.slots.insert(id, Slot::Listing);
                        inner.ahead += 1;
                        inner = self.list(inner, id, task);
                    }
                    Some(Slot::Listing) => {
                        inner.slots.insert(id, Slot::Listing);
                        if let Some((other, task)) = take_pending(&mut inner) {
                            inner.ahead += 1;
                            inner = self.list(inner, other, task);
                        } else {
                            inner = self.sleep(inner);
                        }
                    }
                    None => inner.entering = None,
                }
                continue;
            }
            let Some(top) = inner.stack.last_mut() else {
                inner.finished = true;
                if inner.sleepers > 0 {
                    self.changed.notify_all();
                }
                return None;
            };
            let Some(listed) = top.next() else {
                inner.stack.pop();
                continue;
            };
            inner.entering = listed.child;
            if listed.selected {
                let index = inner.yielded;
                inner.yielded += 1;
                return Some((index, listed.entry));
            }
        }
    }

    /// Lists directories ahead of the cursor until the walk ends.
    pub(super) fn help(&self) {
        let mut inner = self.lock();
        loop {
            if inner.finished || self.stop.is_set() {
                return;
            }
            if inner.ahead < AHEAD
                && let Some((id, task)) = take_pending(&mut inner)
            {
                inner.ahead += 1;
                inner = self.list(inner, id, task);
            } else {
                inner = self.sleep(inner);
            }
        }
    }

    fn sleep<'g>(&self, mut inner: MutexGuard<'g, Inner>) -> MutexGuard<'g, Inner> {
        inner.sleepers += 1;
        let mut inner = self.changed.wait(inner).unwrap_or_else(|e| e.into_inner());
        inner.sleepers -= 1;
        inner
    }

    /// Lists `task` (slot `id`, already marked as being listed) without the
    /// lock, then files the listing and its subdirectories.
    fn list<'g>(
        &'g self,
        inner: MutexGuard<'g, Inner>,
        id: usize,
        task: Task,
    ) -> MutexGuard<'g, Inner> {
        drop(inner);
        let (listed, children) = self.read(task);
        let mut inner = self.lock();
        for (key, child, task) in children {
            inner.slots.insert(child, Slot::Pending(task));
            inner.queue.push(Reverse((key, child)));
        }
        inner.slots.insert(id, Slot::Listed(listed));
        if inner.sleepers > 0 {
            self.changed.notify_all();
        }
        inner
    }

    /// Reads, sorts and filters one directory.
    #[expect(clippy::type_complexity, reason = "a private helper's pair")]
    fn read(&self, mut task: Task) -> (Vec<Listed>, Vec<(Vec<u8>, usize, Task)>) {
        let mut listed = Vec::new();
        let mut children = Vec::new();
        let Some(dir) = task.open() else {
            return (listed, children);
        };
        let mut found = Found::default();
        let mut names: Vec<(OsString, FileType)> = Vec::new();
        let mut note = |name: &OsStr, kind: FileType| {
            if name == "." || name == ".." {
                return;
            }
            found.note(name.as_bytes());
            if name.as_bytes() == b".git" {
                return;
            }
            let kind = match kind {
                FileType::Unknown => match rfs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) => FileType::from_raw_mode(stat.st_mode as _),
                    Err(_) => return,
                },
                kind => kind,
            };
            names.push((name.to_os_string(), kind));
        };
        if !list_entries(&dir, &mut note) {
            return (listed, children);
        }
        if self.stop.is_set() {
            return (listed, children);
        }
        names.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let rules = self.rules.enter(&task.path, &dir, task.rules, found);
        let dir = Arc::new(dir);
        // Each entry's path is built in one buffer; only kept ones are copied.
        let mut buffer = task.path.into_os_string().into_vec();
        if buffer.last() != Some(&b'/') {
            buffer.push(b'/');
        }
        let base = buffer.len();
        for (name, kind) in names {
            buffer.truncate(base);
            buffer.extend_from_slice(name.as_bytes());
            let path = Path::new(OsStr::from_bytes(&buffer));
            let is_dir = kind == FileType::Directory;
            if self.rules.is_ignored(rules.as_ref(), path, is_dir) {
                continue;
            }
            let relative = relative_bytes(&self.root, path).unwrap_or_default();
            let selected = (self.select)(relative, is_dir, kind == FileType::RegularFile);
            if !selected && !is_dir {
                continue;
            }
            let path = path.to_path_buf();
            let child = if is_dir {
                let child = self.next_id.fetch_add(1, Ordering::Relaxed);
                let key = relative
                    .iter()
                    .map(|&byte| if byte == b'/' { 0 } else { byte })
                    .collect();
                let task = Task {
                    path: path.clone(),
                    rules: rules.clone(),
                    parent: Some(Arc::clone(&dir)),
                    start: None,
                };
                children.push((key, child, task));
                Some(child)
            } else {
                None
            };
            listed.push(Listed {
                entry: Entry {
                    path,
                    is_dir,
                    dir: Arc::clone(&dir),
                },
                selected,
                child,
            });
        }
        (listed, children)
    }
}

/// Calls `note` with each entry of the open directory `dir` (`.` and `..`
/// included); false when the directory cannot be read at all.
///
/// On Linux the entries are read with `getdents64` straight from `dir` into
/// one buffer ([`rfs::RawDir`]): `rfs::Dir` would first reopen the directory
/// (`fcntl` and `openat(dir, ".")`), three system calls per directory that a
/// walk of many small directories pays thousands of times.
#[cfg(target_os = "linux")]
fn list_entries(dir: &OwnedFd, note: &mut dyn FnMut(&OsStr, FileType)) -> bool {
    /// Enough for hundreds of entries per `getdents64` and any one name.
    const BUFFER: usize = 32 * 1024;
    let mut buffer = Vec::with_capacity(BUFFER);
    let mut reader = rfs::RawDir::new(dir, buffer.spare_capacity_mut());
    let mut first = true;
    while let Some(entry) = reader.next() {
        let Ok(entry) = entry else {
            return !first;
        };
        first = false;
        note(
            OsStr::from_bytes(entry.file_name().to_bytes()),
            entry.file_type(),
        );
    }
    true
}

/// Calls `note` with each entry of the open directory `dir`; false when the
/// directory cannot be read at all.
#[cfg(not(target_os = "linux"))]
fn list_entries(dir: &OwnedFd, note: &mut dyn FnMut(&OsStr, FileType)) -> bool {
    let Ok(reader) = rfs::Dir::read_from(dir) else {
        return false;
    };
    for entry in reader {
        let Ok(entry) = entry else {
            break;
        };
        note(
            OsStr::from_bytes(entry.file_name().to_bytes()),
            entry.file_type(),
        );
    }
    true
}

/// The pending directory first in path order.
fn take_pending(inner: &mut Inner) -> Option<(usize, Task)> {
    while let Some(Reverse((_, id))) = inner.queue.pop() {
        if let Some(Slot::Pending(_)) = inner.slots.get(&id)
            && let Some(Slot::Pending(task)) = inner.slots.insert(id, Slot::Listing)
        {
            return Some((id, task));
        }
    }
    None
}
