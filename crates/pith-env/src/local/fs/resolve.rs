//! Resolution beneath one root's handle, one component at a time (see the
//! [`beneath`](super::beneath) module docs).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::kind::{kind_of_mode, mode_of};
use crate::{FileKind, FsError, FsErrorKind, WriteRules};

/// Symlinks followed at most in one resolution (Linux's own limit).
const MAX_HOPS: usize = 40;
/// Times a resolution is retried when the tree changed under it.
const RETRIES: usize = 16;

const DIR_FLAGS: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// One root: the directory as configured, its real path and its handle.
pub(super) struct Root {
    pub(super) configured: PathBuf,
    pub(super) real: PathBuf,
    pub(super) fd: OwnedFd,
    /// Whether the root is on a local file system (`fstatfs`), where lookups
    /// beneath it may run in place (see [`inline`](super::inline)).
    pub(super) in_place: bool,
}

/// Why a resolution failed.
pub(super) enum WalkError {
    /// A step left the root.
    Escape,
    /// The write guard refused a directory to create.
    Protected(String),
    /// Too many symlinks.
    Loop,
    /// The tree kept changing under the walk.
    Unstable,
    /// An OS error.
    Os(Errno),
}

impl WalkError {
    pub(super) fn into_fs(self, path: &Path) -> FsError {
        match self {
            WalkError::Escape => FsError::new(FsErrorKind::OutsideRoots, path),
            WalkError::Protected(reason) => {
                FsError::new(FsErrorKind::Protected, path).with_detail(reason)
            }
            WalkError::Loop => FsError::new(FsErrorKind::SymlinkLoop, path),
            WalkError::Unstable => FsError::new(FsErrorKind::Other, path)
                .with_detail("the directory changed while it was being resolved; try again"),
            WalkError::Os(errno) => os_error(errno, path),
        }
    }
}

pub(super) fn os_error(errno: Errno, path: &Path) -> FsError {
    FsError::from_io(io::Error::from(errno), path)
}

/// Where a resolution ended.
pub(super) struct Found<'r> {
    pub(super) root: &'r Root,
    /// The directory holding the entry, or the entry itself when `name` is
    /// `None`; `None` is the root's own handle.
    pub(super) dir: Option<OwnedFd>,
    /// `dir`'s path relative to the root, as resolved.
    pub(super) dir_parts: Vec<OsString>,
    /// The entry in `dir`; `None` when the path names `dir` itself.
    pub(super) name: Option<OsString>,
}

impl Found<'_> {
    pub(super) fn dir_fd(&self) -> BorrowedFd<'_> {
        match &self.dir {
            Some(fd) => fd.as_fd(),
            None => self.root.fd.as_fd(),
        }
    }

    /// The resolved path relative to the root.
    pub(super) fn relative(&self) -> PathBuf {
        let mut path: PathBuf = self.dir_parts.iter().collect();
        if let Some(name) = &self.name {
            path.push(name);
        }
        path
    }
}

/// How to resolve.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Walk {
    /// Follow a final symlink; the final component need not exist.
    Follow,
    /// Stop at a final symlink.
    NoFollow,
    /// Every component is a directory; create the missing ones.
    CreateDirs,
}

/// The components of a relative path as names and `..`.
fn components(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect()
}

/// Resolves `relative` beneath `root` (see the [`beneath`](super::beneath)
/// module docs); `guard` judges every directory [`Walk::CreateDirs`] creates.
pub(super) fn walk<'r>(
    root: &'r Root,
    relative: &Path,
    mode: Walk,
    guard: Option<&WriteRules>,
) -> Result<Found<'r>, WalkError> {
    let mut state = State {
        root,
        stack: Vec::new(),
        parts: Vec::new(),
        pending: components(relative),
        hops: 0,
        retries: 0,
    };
    while let Some(name) = state.pending.pop_front() {
        if name == ".." {
            if state.stack.pop().is_none() {
                return Err(WalkError::Escape);
            }
            state.parts.pop();
            continue;
        }
        let current = state.current();
        let last = state.pending.is_empty() && mode != Walk::CreateDirs;
        let opened = if last {
            // The final component: only a symlink to follow is opened.
            Err(Errno::LOOP)
        } else {
            rfs::openat(current, name.as_os_str(), DIR_FLAGS, Mode::empty())
        };
        match opened {
            Ok(fd) => {
                state.stack.push(fd);
                state.parts.push(name);
            }
            Err(Errno::NOENT) if mode == Walk::CreateDirs => {
                if let Some(guard) = guard {
                    let mut wanted: PathBuf = state.parts.iter().collect();
                    wanted.push(&name);
                    guard
                        .check(&root.configured, &wanted)
                        .map_err(WalkError::Protected)?;
                }
                match rfs::mkdirat(current, name.as_os_str(), Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(errno) => return Err(WalkError::Os(errno)),
                }
                state.retry(name)?;
            }
            // A symlink (to follow), or not a directory.
            Err(Errno::NOTDIR | Errno::LOOP) => {
                let link = if last && mode != Walk::Follow {
                    Ok(None)
                } else {
                    read_link(current, &name)
                };
                match link {
                    Ok(Some(target)) => state.follow(&target)?,
                    // The final component as it is (or missing).
                    Ok(None) | Err(Errno::NOENT) if last => {
                        return Ok(Found {
                            root,
                            dir: state.stack.pop(),
                            dir_parts: state.parts,
                            name: Some(name),
                        });
                    }
                    // Not a symlink: a file where a directory must be, or a
                    // directory again (swapped back since the open).
                    Ok(None) => {
                        let now = rfs::statat(current, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                            .map_err(WalkError::Os)?;
                        if !matches!(
                            kind_of_mode(mode_of(&now)),
                            FileKind::Directory | FileKind::Symlink
                        ) {
                            return Err(WalkError::Os(Errno::NOTDIR));
                        }
                        state.retry(name)?;
                    }
                    // Changed between the two calls.
                    Err(Errno::NOENT) => state.retry(name)?,
                    Err(errno) => return Err(WalkError::Os(errno)),
                }
            }
            Err(errno) => return Err(WalkError::Os(errno)),
        }
    }
    Ok(Found {
        root,
        dir: state.stack.pop(),
        dir_parts: state.parts,
        name: None,
    })
}

/// A walk in progress.
struct State<'r> {
    root: &'r Root,
    /// The handles of the directories walked into, below the root.
    stack: Vec<OwnedFd>,
    /// Their names (the resolved path relative to the root).
    parts: Vec<OsString>,
    /// The components still to resolve.
    pending: VecDeque<OsString>,
    hops: usize,
    retries: usize,
}

impl State<'_> {
    /// The directory the next component is resolved in.
    fn current(&self) -> BorrowedFd<'_> {
        self.stack.last().map_or(self.root.fd.as_fd(), AsFd::as_fd)
    }

    /// Follows a symlink whose target is `target`: its components are
    /// resolved next, from the directory holding the link (relative) or the
    /// root (absolute, when under the root's real path).
    fn follow(&mut self, target: &Path) -> Result<(), WalkError> {
        self.hops += 1;
        if self.hops > MAX_HOPS {
            return Err(WalkError::Loop);
        }
        let relative = if target.is_absolute() {
            let Ok(relative) = target.strip_prefix(&self.root.real) else {
                return Err(WalkError::Escape);
            };
            self.stack.clear();
            self.parts.clear();
            relative
        } else {
            target
        };
        for name in components(relative).into_iter().rev() {
            self.pending.push_front(name);
        }
        Ok(())
    }

    /// Resolves `name` again, unless the tree changed too often already.
    fn retry(&mut self, name: OsString) -> Result<(), WalkError> {
        retry(&mut self.retries)?;
        self.pending.push_front(name);
        Ok(())
    }
}

/// The target of the symlink `name` in `dir`; `None` when it is not a symlink.
fn read_link(dir: BorrowedFd<'_>, name: &OsString) -> Result<Option<PathBuf>, Errno> {
    match rfs::readlinkat(dir, name.as_os_str(), Vec::new()) {
        Ok(target) => Ok(Some(PathBuf::from(OsString::from_vec(target.into_bytes())))),
        Err(Errno::INVAL) => Ok(None),
        Err(errno) => Err(errno),
    }
}

/// Counts a retry; [`WalkError::Unstable`] past [`RETRIES`].
pub(super) fn retry(retries: &mut usize) -> Result<(), WalkError> {
    *retries += 1;
    if *retries > RETRIES {
        Err(WalkError::Unstable)
    } else {
        Ok(())
    }
}

/// The realpath of the nearest existing ancestor of `path`, plus the rest.
pub(super) fn nearest_real(path: &Path) -> Option<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<OsString> = Vec::new();
    loop {
        if let Ok(mut real) = std::fs::canonicalize(&existing) {
            real.extend(rest.iter().rev());
            return Some(real);
        }
        rest.push(existing.file_name()?.to_os_string());
        if !existing.pop() {
            return None;
        }
    }
}
