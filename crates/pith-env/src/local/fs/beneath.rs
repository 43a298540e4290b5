//! The local file system confined beneath roots, by file descriptors.
//!
//! Each root is opened once (an `O_PATH` directory handle) when the view is
//! made. Every operation then resolves its path *relative to that handle* and
//! acts on what the resolution returned — a descriptor, never the path walked
//! again — so a process that renames directories or swaps a directory and a
//! symlink while pith works can make an operation fail but never make it act
//! outside the root:
//!
//! - Reads and `stat` first try one `openat2(RESOLVE_BENEATH |
//!   RESOLVE_NO_MAGICLINKS)` (Linux ≥ 5.6): the kernel itself refuses any step
//!   that leaves the root. It refuses absolute symlinks too, even to a place
//!   inside the root; then, and where `openat2` is missing, the walk below decides.
//! - The walk opens one component at a time with `O_NOFOLLOW | O_DIRECTORY`
//!   relative to the previous directory's handle. A symlink is read
//!   (`readlinkat`) and its target resolved the same way from the directory
//!   holding it (an absolute target from the root, when it names a path under
//!   the root's real path); `..` goes back to the handle it came from and is
//!   refused above the root. The walk knows the resolved path of every handle,
//!   which the write guard (`.git/`, protected globs) judges.
//! - A write resolves its parent directory this way, creates the temp file
//!   *in that directory handle* (`O_TMPFILE`, or an exclusive named file), and
//!   `renameat`s it relative to the same handle; on any failure the temp file
//!   is unlinked relative to that handle, so nothing is left anywhere.
//! - Every open uses `O_NONBLOCK` and `O_NOCTTY`, and a FIFO, socket or device
//!   is refused after `fstat` on the opened handle: nothing blocks.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{LocalReader, blocking};
use crate::fs::check_splices;
use crate::{
    Confinement, DirEntry, FileKind, FileReader, FileSystem, FsError, FsErrorKind, Metadata,
    Splice, WriteGuard,
};

/// Symlinks followed at most in one resolution (Linux's own limit).
const MAX_HOPS: usize = 40;
/// Times a resolution is retried when the tree changed under it.
const RETRIES: usize = 16;
/// What every temp file's name ends with.
const TEMP_SUFFIX: &str = ".pith-tmp";

/// One root: the directory as configured, its real path and its handle.
struct Root {
    configured: PathBuf,
    real: PathBuf,
    fd: OwnedFd,
}

struct Inner {
    roots: Vec<Root>,
    guard: Option<WriteGuard>,
    home: Option<PathBuf>,
    /// Whether `openat2` is still worth trying (cleared on `ENOSYS`; off in
    /// the view tests use to exercise the walk alone).
    openat2: AtomicBool,
}

/// The local file system confined beneath roots (see the module docs).
#[derive(Clone)]
pub(crate) struct LocalBeneath {
    inner: Arc<Inner>,
}

impl LocalBeneath {
    /// Opens every root that exists (one that does not is not a root: paths
    /// under it are outside).
    pub(crate) fn new(
        confinement: Confinement,
        home: Option<PathBuf>,
        walk_only: bool,
    ) -> LocalBeneath {
        let mut roots = Vec::new();
        for configured in confinement.roots {
            let Ok(real) = std::fs::canonicalize(&configured) else {
                continue;
            };
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let Ok(fd) = rfs::open(&real, flags, Mode::empty()) else {
                continue;
            };
            roots.push(Root {
                configured,
                real,
                fd,
            });
        }
        LocalBeneath {
            inner: Arc::new(Inner {
                roots,
                guard: confinement.write_guard,
                home,
                openat2: AtomicBool::new(cfg!(target_os = "linux") && !walk_only),
            }),
        }
    }

    async fn run<T, F>(&self, path: &Path, work: F) -> Result<T, FsError>
    where
        T: Send + 'static,
        F: FnOnce(&Inner, &Path) -> Result<T, FsError> + Send + 'static,
    {
        let inner = self.inner.clone();
        let owned = path.to_path_buf();
        blocking(path, move || work(&inner, &owned)).await
    }
}

/// Why a resolution failed.
enum WalkError {
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
    fn into_fs(self, path: &Path) -> FsError {
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

fn os_error(errno: Errno, path: &Path) -> FsError {
    FsError::from_io(io::Error::from(errno), path)
}

/// Where a resolution ended.
struct Found<'r> {
    root: &'r Root,
    /// The directory holding the entry, or the entry itself when `name` is
    /// `None`; `None` is the root's own handle.
    dir: Option<OwnedFd>,
    /// `dir`'s path relative to the root, as resolved.
    dir_parts: Vec<OsString>,
    /// The entry in `dir`; `None` when the path names `dir` itself.
    name: Option<OsString>,
}

impl Found<'_> {
    fn dir_fd(&self) -> BorrowedFd<'_> {
        match &self.dir {
            Some(fd) => fd.as_fd(),
            None => self.root.fd.as_fd(),
        }
    }

    /// The resolved path relative to the root.
    fn relative(&self) -> PathBuf {
        let mut path: PathBuf = self.dir_parts.iter().collect();
        if let Some(name) = &self.name {
            path.push(name);
        }
        path
    }
}

/// How to resolve.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
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

/// `st_mode`, whose integer type differs between targets.
#[allow(
    clippy::unnecessary_cast,
    reason = "st_mode is u32 here but not on every target"
)]
fn mode_of(stat: &rfs::Stat) -> u32 {
    stat.st_mode as u32
}

fn kind_of_mode(mode: u32) -> FileKind {
    match FileType::from_raw_mode(mode as _) {
        FileType::RegularFile => FileKind::File,
        FileType::Directory => FileKind::Directory,
        FileType::Symlink => FileKind::Symlink,
        _ => FileKind::Other,
    }
}

/// The name of a special file's kind, or `None` for files, directories and links.
pub(crate) fn special_kind(mode: u32) -> Option<&'static str> {
    match FileType::from_raw_mode(mode as _) {
        FileType::Fifo => Some("FIFO (named pipe)"),
        FileType::Socket => Some("socket"),
        FileType::CharacterDevice => Some("character device"),
        FileType::BlockDevice => Some("block device"),
        _ => None,
    }
}

fn special_error(kind: &str, path: &Path) -> FsError {
    FsError::new(FsErrorKind::SpecialFile, path).with_detail(kind)
}

fn convert(stat: &rfs::Stat) -> Metadata {
    let mode = mode_of(stat);
    let modified = SystemTime::UNIX_EPOCH
        .checked_add(Duration::new(
            stat.st_mtime.max(0) as u64,
            (stat.st_mtime_nsec as u32).min(999_999_999),
        ))
        .filter(|_| stat.st_mtime >= 0);
    Metadata {
        kind: kind_of_mode(mode),
        len: stat.st_size.max(0) as u64,
        modified,
        mode: Some(mode & 0o7777),
    }
}

const DIR_FLAGS: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

impl Inner {
    /// The root `path` is under and the path relative to it.
    fn locate(&self, path: &Path) -> Result<(&Root, PathBuf), FsError> {
        for root in &self.roots {
            for base in [&root.configured, &root.real] {
                if let Ok(relative) = path.strip_prefix(base) {
                    return Ok((root, relative.to_path_buf()));
                }
            }
        }
        // Reached through a symlink outside the roots (`/link/x` with `/link`
        // pointing into a root): the realpath only picks the root; the walk
        // beneath it still decides what is reached.
        if let Some(real) = nearest_real(path) {
            for root in &self.roots {
                if let Ok(relative) = real.strip_prefix(&root.real) {
                    return Ok((root, relative.to_path_buf()));
                }
            }
        }
        Err(FsError::new(FsErrorKind::OutsideRoots, path))
    }

    /// Resolves `relative` beneath `root` (see the module docs).
    fn walk<'r>(
        &self,
        root: &'r Root,
        relative: &Path,
        mode: Walk,
    ) -> Result<Found<'r>, WalkError> {
        let mut stack: Vec<OwnedFd> = Vec::new();
        let mut parts: Vec<OsString> = Vec::new();
        let mut pending = components(relative);
        let mut hops = 0;
        let mut retries = 0;
        while let Some(name) = pending.pop_front() {
            if name == ".." {
                if stack.pop().is_none() {
                    return Err(WalkError::Escape);
                }
                parts.pop();
                continue;
            }
            let current = stack.last().map_or(root.fd.as_fd(), AsFd::as_fd);
            if pending.is_empty() && mode != Walk::CreateDirs {
                if mode == Walk::Follow {
                    match rfs::readlinkat(current, name.as_os_str(), Vec::new()) {
                        Ok(target) => {
                            let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
                            follow(
                                root,
                                &target,
                                &mut hops,
                                &mut stack,
                                &mut parts,
                                &mut pending,
                            )?;
                            continue;
                        }
                        Err(Errno::INVAL | Errno::NOENT) => {}
                        Err(errno) => return Err(WalkError::Os(errno)),
                    }
                }
                return Ok(Found {
                    root,
                    dir: stack.pop(),
                    dir_parts: parts,
                    name: Some(name),
                });
            }
            match rfs::openat(current, name.as_os_str(), DIR_FLAGS, Mode::empty()) {
                Ok(fd) => {
                    stack.push(fd);
                    parts.push(name);
                }
                Err(Errno::NOENT) if mode == Walk::CreateDirs => {
                    if let Some(guard) = &self.guard {
                        let mut wanted: PathBuf = parts.iter().collect();
                        wanted.push(&name);
                        guard(&root.configured, &wanted).map_err(WalkError::Protected)?;
                    }
                    match rfs::mkdirat(current, name.as_os_str(), Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(errno) => return Err(WalkError::Os(errno)),
                    }
                    retry(&mut retries)?;
                    pending.push_front(name);
                }
                Err(Errno::NOTDIR | Errno::LOOP) => {
                    match rfs::readlinkat(current, name.as_os_str(), Vec::new()) {
                        Ok(target) => {
                            let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
                            follow(
                                root,
                                &target,
                                &mut hops,
                                &mut stack,
                                &mut parts,
                                &mut pending,
                            )?;
                        }
                        // Not a symlink: a file where a directory must be,
                        // or a directory again (swapped back since the open).
                        Err(Errno::INVAL) => {
                            let now =
                                rfs::statat(current, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                                    .map_err(WalkError::Os)?;
                            if !matches!(
                                kind_of_mode(mode_of(&now)),
                                FileKind::Directory | FileKind::Symlink
                            ) {
                                return Err(WalkError::Os(Errno::NOTDIR));
                            }
                            retry(&mut retries)?;
                            pending.push_front(name);
                        }
                        // Changed between the two calls.
                        Err(Errno::NOENT) => {
                            retry(&mut retries)?;
                            pending.push_front(name);
                        }
                        Err(errno) => return Err(WalkError::Os(errno)),
                    }
                }
                Err(errno) => return Err(WalkError::Os(errno)),
            }
        }
        Ok(Found {
            root,
            dir: stack.pop(),
            dir_parts: parts,
            name: None,
        })
    }

    /// `walk` from the root `path` is under, as an [`FsError`] on failure.
    fn resolve(&self, path: &Path, mode: Walk) -> Result<Found<'_>, FsError> {
        let (root, relative) = self.locate(path)?;
        self.walk(root, &relative, mode)
            .map_err(|error| error.into_fs(path))
    }

    /// Opens `path` with `flags` (which must not create), following symlinks
    /// beneath the root.
    fn open_beneath(&self, path: &Path, flags: OFlags) -> Result<OwnedFd, FsError> {
        let (root, relative) = self.locate(path)?;
        #[cfg(target_os = "linux")]
        if self.openat2.load(Ordering::Relaxed) {
            use rustix::fs::ResolveFlags;
            let target: &Path = if relative.as_os_str().is_empty() {
                Path::new(".")
            } else {
                &relative
            };
            match rfs::openat2(
                root.fd.as_fd(),
                target,
                flags | OFlags::CLOEXEC,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
            ) {
                Ok(fd) => return Ok(fd),
                Err(Errno::NOSYS) => self.openat2.store(false, Ordering::Relaxed),
                // An escape or an absolute symlink, a concurrent rename, or a
                // magic link: the walk decides.
                Err(Errno::XDEV | Errno::AGAIN | Errno::LOOP) => {}
                Err(errno) => return Err(os_error(errno, path)),
            }
        }
        let mut retries = 0;
        loop {
            let found = self
                .walk(root, &relative, Walk::Follow)
                .map_err(|error| error.into_fs(path))?;
            let opened = match &found.name {
                Some(name) => rfs::openat(
                    found.dir_fd(),
                    name.as_os_str(),
                    flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                ),
                None => rfs::openat(found.dir_fd(), ".", flags | OFlags::CLOEXEC, Mode::empty()),
            };
            match opened {
                Ok(fd) => return Ok(fd),
                // The final component became a symlink after the walk read it.
                Err(Errno::LOOP) if found.name.is_some() => {
                    retry(&mut retries).map_err(|error| error.into_fs(path))?;
                }
                Err(errno) => return Err(os_error(errno, path)),
            }
        }
    }

    /// Opens a regular file for reading; refuses directories and special files.
    fn open_file(&self, path: &Path) -> Result<File, FsError> {
        let fd = match self.open_beneath(path, READ_FLAGS) {
            Ok(fd) => fd,
            // open(2) of a socket: say what it is.
            Err(error) if error.kind == FsErrorKind::Other || error.detail.is_some() => {
                return Err(self.explain_open_error(path, error));
            }
            Err(error) => return Err(error),
        };
        let stat = rfs::fstat(&fd).map_err(|errno| os_error(errno, path))?;
        if let Some(kind) = special_kind(mode_of(&stat)) {
            return Err(special_error(kind, path));
        }
        if kind_of_mode(mode_of(&stat)) == FileKind::Directory {
            return Err(FsError::new(FsErrorKind::IsADirectory, path));
        }
        Ok(File::from(fd))
    }

    fn explain_open_error(&self, path: &Path, error: FsError) -> FsError {
        match self.stat(path, true) {
            Ok(stat) => match special_kind(mode_of(&stat)) {
                Some(kind) => special_error(kind, path),
                None => error,
            },
            Err(_) => error,
        }
    }

    fn stat(&self, path: &Path, follow: bool) -> Result<rfs::Stat, FsError> {
        if follow {
            let fd = self.open_beneath(path, OFlags::PATH)?;
            return rfs::fstat(&fd).map_err(|errno| os_error(errno, path));
        }
        let found = self.resolve(path, Walk::NoFollow)?;
        match &found.name {
            Some(name) => rfs::statat(found.dir_fd(), name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW),
            None => rfs::fstat(found.dir_fd()),
        }
        .map_err(|errno| os_error(errno, path))
    }

    fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        let fd = self.open_beneath(path, OFlags::RDONLY | OFlags::DIRECTORY)?;
        let error = |errno| os_error(errno, path);
        let dir = rfs::Dir::read_from(&fd).map_err(error)?;
        let mut entries = Vec::new();
        for entry in dir {
            let entry = entry.map_err(error)?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => rfs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|stat| kind_of_mode(mode_of(&stat)))
                    .unwrap_or(FileKind::Other),
                FileType::RegularFile => FileKind::File,
                FileType::Directory => FileKind::Directory,
                FileType::Symlink => FileKind::Symlink,
                _ => FileKind::Other,
            };
            entries.push(DirEntry {
                name: name.to_os_string(),
                kind,
            });
        }
        Ok(entries)
    }

    fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        let found = self.resolve(path, Walk::Follow)?;
        if let Some(name) = &found.name {
            rfs::statat(found.dir_fd(), name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|errno| os_error(errno, path))?;
        }
        Ok(found.root.real.join(found.relative()))
    }

    fn check_guard(&self, found: &Found<'_>, path: &Path) -> Result<(), FsError> {
        match &self.guard {
            Some(guard) => guard(&found.root.configured, &found.relative())
                .map_err(|reason| FsError::new(FsErrorKind::Protected, path).with_detail(reason)),
            None => Ok(()),
        }
    }

    fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        let found = self.resolve(path, Walk::NoFollow)?;
        let Some(name) = &found.name else {
            return Err(FsError::new(FsErrorKind::InvalidInput, path)
                .with_detail("cannot remove a root or a path ending in .."));
        };
        self.check_guard(&found, path)?;
        rfs::unlinkat(found.dir_fd(), name.as_os_str(), AtFlags::REMOVEDIR)
            .map_err(|errno| os_error(errno, path))
    }

    fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        let found = self.resolve(path, Walk::NoFollow)?;
        let Some(name) = &found.name else {
            return Err(FsError::new(FsErrorKind::InvalidInput, path)
                .with_detail("cannot remove a root or a path ending in .."));
        };
        self.check_guard(&found, path)?;
        rfs::unlinkat(found.dir_fd(), name.as_os_str(), AtFlags::empty())
            .map_err(|errno| os_error(errno, path))
    }

    fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        self.write_with(path, false, &mut |_, _, out| out.write_all(contents))
    }

    /// Rewrites an existing file from its old bytes with `splices` applied, the
    /// unchanged stretches copied in the kernel: the source is opened in the same
    /// verified directory handle the temp file is renamed in.
    fn write_spliced(&self, path: &Path, splices: &[Splice]) -> Result<(), FsError> {
        let mut checked = Ok(());
        let result = self.write_with(path, true, &mut |dir, name, out| {
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let source =
                File::from(rfs::openat(dir, name, flags, Mode::empty()).map_err(io::Error::from)?);
            let len = source.metadata()?.len();
            if let Err(detail) = check_splices(splices, len) {
                checked = Err(detail);
                return Err(io::Error::from(io::ErrorKind::InvalidInput));
            }
            super::splice::copy_spliced(&source, len, splices, out)
        });
        if let Err(detail) = checked {
            return Err(FsError::new(FsErrorKind::InvalidInput, path).with_detail(detail));
        }
        result
    }

    /// Resolves `path`'s parent by handle, then writes a temp file there with
    /// `write` and renames it over the name. `must_exist`: the file must already be a
    /// regular file (a splice rewrites one).
    fn write_with(
        &self,
        path: &Path,
        must_exist: bool,
        write: &mut Filler<'_>,
    ) -> Result<(), FsError> {
        let found = self.resolve(path, Walk::Follow)?;
        let Some(name) = found.name.clone() else {
            return Err(FsError::new(FsErrorKind::IsADirectory, path));
        };
        self.check_guard(&found, path)?;
        let dir = found.dir_fd();
        let existing = match rfs::statat(dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => {
                let mode = mode_of(&stat);
                if let Some(kind) = special_kind(mode) {
                    return Err(special_error(kind, path));
                }
                match kind_of_mode(mode) {
                    FileKind::Directory => {
                        return Err(FsError::new(FsErrorKind::IsADirectory, path));
                    }
                    // Swapped in after the walk followed the links.
                    FileKind::Symlink => {
                        return Err(FsError::new(FsErrorKind::Other, path).with_detail(
                            "the file was replaced by a symbolic link while writing; try again",
                        ));
                    }
                    _ => Some(stat),
                }
            }
            Err(Errno::NOENT) if !must_exist => None,
            Err(errno) => return Err(os_error(errno, path)),
        };
        let prefix: String = name.to_string_lossy().chars().take(64).collect();
        let temp = TempIn {
            dir,
            prefix: format!(".{prefix}."),
        };
        temp.write_and_rename(&name, write, existing.as_ref())
            .map_err(|errno| os_error(errno, path))?;
        // Durability of the rename; some file systems refuse to fsync a directory.
        if let Ok(handle) = rfs::openat(
            dir,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            let _ = rfs::fsync(&handle);
        }
        Ok(())
    }
}

/// Follows a symlink whose target is `target`: its components are resolved
/// next, from the directory holding the link (relative) or the root
/// (absolute, when under the root's real path).
fn follow(
    root: &Root,
    target: &Path,
    hops: &mut usize,
    stack: &mut Vec<OwnedFd>,
    parts: &mut Vec<OsString>,
    pending: &mut VecDeque<OsString>,
) -> Result<(), WalkError> {
    *hops += 1;
    if *hops > MAX_HOPS {
        return Err(WalkError::Loop);
    }
    let relative = if target.is_absolute() {
        let Ok(relative) = target.strip_prefix(&root.real) else {
            return Err(WalkError::Escape);
        };
        stack.clear();
        parts.clear();
        relative
    } else {
        target
    };
    for name in components(relative).into_iter().rev() {
        pending.push_front(name);
    }
    Ok(())
}

fn retry(retries: &mut usize) -> Result<(), WalkError> {
    *retries += 1;
    if *retries > RETRIES {
        Err(WalkError::Unstable)
    } else {
        Ok(())
    }
}

/// The realpath of the nearest existing ancestor of `path`, plus the rest.
fn nearest_real(path: &Path) -> Option<PathBuf> {
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

/// A temp file in one directory handle, renamed over a name in the same handle.
struct TempIn<'a> {
    dir: BorrowedFd<'a>,
    prefix: String,
}

impl TempIn<'_> {
    fn temp_name(&self) -> OsString {
        OsString::from(format!(
            "{}{:016x}{TEMP_SUFFIX}",
            self.prefix,
            rand::random::<u64>()
        ))
    }

    fn write_and_rename(
        &self,
        name: &OsStr,
        write: &mut Filler<'_>,
        existing: Option<&rfs::Stat>,
    ) -> Result<(), Errno> {
        #[cfg(target_os = "linux")]
        if let Some(temp) = self.unnamed(name, write, existing)? {
            return self.rename(&temp, name);
        }
        let mut attempts = 0;
        let (file, temp) = loop {
            let temp = self.temp_name();
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rfs::openat(
                self.dir,
                temp.as_os_str(),
                flags,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => break (File::from(fd), temp),
                Err(Errno::EXIST) if attempts < 8 => attempts += 1,
                Err(errno) => return Err(errno),
            }
        };
        let mut file = file;
        if let Err(errno) = fill(self.dir, name, &mut file, write, existing) {
            let _ = rfs::unlinkat(self.dir, temp.as_os_str(), AtFlags::empty());
            return Err(errno);
        }
        drop(file);
        self.rename(&temp, name)
    }

    /// Renames `temp` over `name`; on failure removes `temp`.
    fn rename(&self, temp: &OsStr, name: &OsStr) -> Result<(), Errno> {
        if let Err(errno) = rfs::renameat(self.dir, temp, self.dir, name) {
            let _ = rfs::unlinkat(self.dir, temp, AtFlags::empty());
            return Err(errno);
        }
        Ok(())
    }

    /// Writes an unnamed (`O_TMPFILE`) file in the directory and links it
    /// under a temp name. `Ok(None)`: not available here, nothing was created.
    #[cfg(target_os = "linux")]
    fn unnamed(
        &self,
        name: &OsStr,
        write: &mut Filler<'_>,
        existing: Option<&rfs::Stat>,
    ) -> Result<Option<OsString>, Errno> {
        let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
        let Ok(fd) = rfs::openat(self.dir, ".", flags, Mode::from_raw_mode(0o666)) else {
            return Ok(None);
        };
        let mut file = File::from(fd);
        fill(self.dir, name, &mut file, write, existing)?;
        let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
        for _ in 0..8 {
            let temp = self.temp_name();
            match rfs::linkat(
                rfs::CWD,
                proc_path.as_str(),
                self.dir,
                temp.as_os_str(),
                AtFlags::SYMLINK_FOLLOW,
            ) {
                Ok(()) => return Ok(Some(temp)),
                Err(Errno::EXIST) => {}
                Err(_) => return Ok(None),
            }
        }
        Ok(None)
    }
}

/// Writes a temp file's bytes: given the directory handle and the name of the
/// file being replaced, and the temp file.
type Filler<'a> = dyn FnMut(BorrowedFd<'_>, &OsStr, &mut File) -> io::Result<()> + 'a;

/// Writes the temp file with `write`, keeps the replaced file's mode (and owner
/// where allowed), and fsyncs.
fn fill(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    file: &mut File,
    write: &mut Filler<'_>,
    existing: Option<&rfs::Stat>,
) -> Result<(), Errno> {
    if let Some(stat) = existing {
        rfs::fchmod(&*file, Mode::from_raw_mode(mode_of(stat) & 0o7777))?;
        // Only root (or the owner keeping its own ids) may chown; a failure
        // leaves the writer as owner, which is what a plain write means anyway.
        let _ = rfs::fchown(
            &*file,
            Some(rustix::fs::Uid::from_raw(stat.st_uid)),
            Some(rustix::fs::Gid::from_raw(stat.st_gid)),
        );
    }
    write(dir, name, file).map_err(errno_of)?;
    file.sync_all().map_err(errno_of)?;
    Ok(())
}

fn errno_of(error: io::Error) -> Errno {
    error
        .raw_os_error()
        .map_or(Errno::IO, Errno::from_raw_os_error)
}

#[async_trait]
impl FileSystem for LocalBeneath {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        self.run(path, |inner, path| {
            let mut file = inner.open_file(path)?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|e| FsError::from_io(e, path))?;
            Ok(bytes)
        })
        .await
    }

    async fn read_range(
        &self,
        path: &Path,
        offset: u64,
        max_len: usize,
    ) -> Result<Vec<u8>, FsError> {
        self.run(path, move |inner, path| {
            let error = |e| FsError::from_io(e, path);
            let mut file = inner.open_file(path)?;
            file.seek(SeekFrom::Start(offset)).map_err(error)?;
            let mut bytes = Vec::new();
            file.take(max_len as u64)
                .read_to_end(&mut bytes)
                .map_err(error)?;
            Ok(bytes)
        })
        .await
    }

    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError> {
        let file = self.run(path, |inner, path| inner.open_file(path)).await?;
        Ok(Box::new(LocalReader {
            file: tokio::fs::File::from_std(file),
            path: path.to_path_buf(),
        }))
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        let contents = contents.to_vec();
        self.run(path, move |inner, path| inner.write_atomic(path, &contents))
            .await
    }

    async fn write_spliced(&self, path: &Path, splices: &[Splice]) -> Result<(), FsError> {
        let splices = splices.to_vec();
        self.run(path, move |inner, path| inner.write_spliced(path, &splices))
            .await
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        self.run(path, |inner, path| {
            inner.stat(path, true).map(|s| convert(&s))
        })
        .await
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        self.run(path, |inner, path| {
            inner.stat(path, false).map(|s| convert(&s))
        })
        .await
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        self.run(path, |inner, path| inner.read_dir(path)).await
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        self.run(path, |inner, path| inner.canonicalize(path)).await
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        self.run(path, |inner, path| {
            inner.resolve(path, Walk::CreateDirs).map(|_| ())
        })
        .await
    }

    async fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        self.run(path, |inner, path| inner.remove_dir(path)).await
    }

    async fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        self.run(path, |inner, path| inner.remove_file(path)).await
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.inner.home.clone()
    }

    fn confine(self: Arc<Self>, confinement: Confinement) -> Arc<dyn FileSystem> {
        // A view of a view: beneath the new roots, which must themselves be
        // beneath this view's roots to be reachable at all.
        let inner_roots: Vec<PathBuf> = confinement
            .roots
            .iter()
            .filter(|root| self.inner.locate(root).is_ok())
            .cloned()
            .collect();
        let walk_only = !self.inner.openat2.load(Ordering::Relaxed);
        Arc::new(LocalBeneath::new(
            Confinement {
                roots: inner_roots,
                write_guard: confinement.write_guard,
            },
            self.inner.home.clone(),
            walk_only,
        ))
    }
}
