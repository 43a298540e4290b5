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
//! - Lookups (`metadata`, `symlink_metadata`, `canonicalize`, the `open` of a
//!   file to read) beneath a root on a local file system run in place on the
//!   calling thread, as the unconfined view's do: one `openat2` with
//!   `RESOLVE_NO_XDEV` added, so it never enters another mount. Anything but
//!   a found file or a definite "not found" (an escape, a symlink to an
//!   absolute path, a mount crossed, no `openat2`) is decided again on the
//!   blocking pool by the full resolution above.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::inline::fd_is_local;
use super::kind::{convert, kind_of_mode, mode_of, special_error, special_kind};
use super::resolve::{Found, Root, Walk, nearest_real, os_error, retry, walk};
use super::temp::{Filler, TempIn, staging};
use super::writeback::StreamFill;
use super::{LocalReader, blocking, blocking_with, blocking_with_parts};
use crate::fs::check_splices;
use crate::{
    Confinement, DirEntry, DirKey, DirPage, FileKind, FileReader, FileSystem, FirstEntries,
    FsError, FsErrorKind, Metadata, Splice, WriteRules, WriteStream,
};

const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

struct Inner {
    roots: Vec<Root>,
    guard: Option<WriteRules>,
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
                in_place: fd_is_local(&fd),
                fd,
            });
        }
        LocalBeneath {
            inner: Arc::new(Inner {
                roots,
                guard: confinement.write_rules,
                home,
                openat2: AtomicBool::new(cfg!(target_os = "linux") && !walk_only),
            }),
        }
    }

    /// This view beneath `confinement`'s roots, those that are beneath this
    /// view's roots (a view of a view).
    pub(crate) fn narrow(&self, confinement: Confinement) -> LocalBeneath {
        let inner_roots: Vec<PathBuf> = confinement
            .roots
            .iter()
            .filter(|root| self.inner.locate(root).is_ok())
            .cloned()
            .collect();
        let walk_only = !self.inner.openat2.load(Ordering::Relaxed);
        LocalBeneath::new(
            Confinement {
                roots: inner_roots,
                write_rules: confinement.write_rules,
            },
            self.inner.home.clone(),
            walk_only,
        )
    }

    /// Opens the start of a search (a directory or a file) with `flags`,
    /// following symlinks beneath the roots: the handle the search reads from.
    /// Blocking; call it on the blocking pool.
    pub(crate) fn open_search_start(&self, path: &Path, flags: OFlags) -> Result<OwnedFd, FsError> {
        match self.inner.open_beneath(path, flags) {
            Err(error) if error.kind == FsErrorKind::Other || error.detail.is_some() => {
                Err(self.inner.explain_open_error(path, error))
            }
            opened => opened,
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

    /// Opens `path` with `flags` in place, on the calling thread, when that
    /// cannot wait on a server: the root is on a local file system and one
    /// `openat2` beneath it that crosses no mount answers. `None`: decide on
    /// the blocking pool (not under a root by prefix, no `openat2`, a network
    /// root, an escape or absolute symlink, a mount crossed, any other error).
    #[cfg(target_os = "linux")]
    fn open_in_place(&self, path: &Path, flags: OFlags) -> Option<Result<OwnedFd, FsError>> {
        use rustix::fs::ResolveFlags;
        if !self.openat2.load(Ordering::Relaxed) {
            return None;
        }
        let (root, relative) = self.roots.iter().find_map(|root| {
            [&root.configured, &root.real]
                .into_iter()
                .find_map(|base| path.strip_prefix(base).ok())
                .map(|relative| (root, relative))
        })?;
        if !root.in_place {
            return None;
        }
        let target: &Path = if relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            relative
        };
        match rfs::openat2(
            root.fd.as_fd(),
            target,
            flags | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS | ResolveFlags::NO_XDEV,
        ) {
            Ok(fd) => Some(Ok(fd)),
            // Found missing on the root's own file system: the full
            // resolution would say the same.
            Err(errno @ (Errno::NOENT | Errno::NOTDIR)) => Some(Err(os_error(errno, path))),
            Err(_) => None,
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn open_in_place(&self, _path: &Path, _flags: OFlags) -> Option<Result<OwnedFd, FsError>> {
        None
    }

    /// [`Inner::open_file`] in place, or `None` (see [`Inner::open_in_place`]).
    fn open_file_in_place(&self, path: &Path) -> Option<Result<File, FsError>> {
        Some(
            self.open_in_place(path, READ_FLAGS)?
                .and_then(|fd| checked_file(fd, path)),
        )
    }

    /// `stat` in place, or `None` (see [`Inner::open_in_place`]).
    fn stat_in_place(&self, path: &Path, follow: bool) -> Option<Result<rfs::Stat, FsError>> {
        let flags = if follow {
            OFlags::PATH
        } else {
            OFlags::PATH | OFlags::NOFOLLOW
        };
        Some(
            self.open_in_place(path, flags)?
                .and_then(|fd| rfs::fstat(&fd).map_err(|errno| os_error(errno, path))),
        )
    }

    /// [`Inner::canonicalize`] in place, or `None` (see
    /// [`Inner::open_in_place`]): the path the kernel gives the handle, which
    /// lies beneath the root's real path (no mount was crossed).
    fn canonicalize_in_place(&self, path: &Path) -> Option<Result<PathBuf, FsError>> {
        #[cfg(target_os = "linux")]
        if let Some(real) = self.real_as_spelled(path) {
            return Some(Ok(real));
        }
        let fd = match self.open_in_place(path, OFlags::PATH)? {
            Ok(fd) => fd,
            Err(error) => return Some(Err(error)),
        };
        use std::os::fd::AsRawFd;
        let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
        let real = PathBuf::from(OsStr::from_bytes(
            rfs::readlink(link, Vec::new()).ok()?.as_bytes(),
        ));
        let beneath = self.roots.iter().any(|root| real.starts_with(&root.real));
        // " (deleted)": removed since it was opened; let the walk say so.
        (beneath && !real.as_os_str().as_bytes().ends_with(b" (deleted)")).then_some(Ok(real))
    }

    /// The real path of `path` without asking for a handle's path, when it
    /// is spelled beneath a root's real path with no `.`, `..` or empty
    /// component and one `openat2` with `RESOLVE_NO_SYMLINKS` (in place, as
    /// [`Inner::open_in_place`]) finds it: then no component is a symlink
    /// and the spelling is the real path. `None` otherwise (the caller
    /// decides the long way, errors included).
    #[cfg(target_os = "linux")]
    fn real_as_spelled(&self, path: &Path) -> Option<PathBuf> {
        use rustix::fs::ResolveFlags;
        if !self.openat2.load(Ordering::Relaxed) {
            return None;
        }
        let (root, relative) = self.roots.iter().find_map(|root| {
            path.strip_prefix(&root.real)
                .ok()
                .map(|relative| (root, relative))
        })?;
        if !root.in_place {
            return None;
        }
        let bytes = relative.as_os_str().as_bytes();
        let target: &Path = if bytes.is_empty() {
            Path::new(".")
        } else if bytes
            .split(|&b| b == b'/')
            .all(|part| !matches!(part, b"" | b"." | b".."))
        {
            relative
        } else {
            return None;
        };
        rfs::openat2(
            root.fd.as_fd(),
            target,
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH
                | ResolveFlags::NO_MAGICLINKS
                | ResolveFlags::NO_XDEV
                | ResolveFlags::NO_SYMLINKS,
        )
        .ok()?;
        Some(if bytes.is_empty() {
            root.real.clone()
        } else {
            root.real.join(relative)
        })
    }

    /// `walk` from the root `path` is under, as an [`FsError`] on failure.
    fn resolve(&self, path: &Path, mode: Walk) -> Result<Found<'_>, FsError> {
        let (root, relative) = self.locate(path)?;
        walk(root, &relative, mode, self.guard.as_ref()).map_err(|error| error.into_fs(path))
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
            let found = walk(root, &relative, Walk::Follow, self.guard.as_ref())
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
                // `O_PATH | O_NOFOLLOW` opens a symlink itself instead of
                // failing: the final component became a symlink after the
                // walk read it, so resolve again.
                Ok(fd)
                    if flags.contains(OFlags::PATH)
                        && found.name.is_some()
                        && rfs::fstat(&fd).is_ok_and(|stat| {
                            kind_of_mode(mode_of(&stat)) == FileKind::Symlink
                        }) =>
                {
                    retry(&mut retries).map_err(|error| error.into_fs(path))?;
                }
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
        checked_file(fd, path)
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
        let mut entries = Vec::new();
        self.list_dir(path, &mut |entry| entries.push(entry))?;
        Ok(entries)
    }

    /// Hands each entry of the directory at `path` to `sink`, as it is listed.
    fn list_dir(&self, path: &Path, sink: &mut dyn FnMut(DirEntry)) -> Result<(), FsError> {
        let fd = self.open_beneath(path, OFlags::RDONLY | OFlags::DIRECTORY)?;
        let error = |errno| os_error(errno, path);
        let dir = rfs::Dir::read_from(&fd).map_err(error)?;
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
            sink(DirEntry {
                name: name.to_os_string(),
                kind,
            });
        }
        Ok(())
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
            Some(guard) => guard
                .check(&found.root.configured, &found.relative())
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
        self.write_with(path, false, &mut |_, _, out| {
            super::writeback::write_all(out, contents)
        })
    }

    /// [`Inner::write_atomic`] with the content in parts.
    fn write_atomic_parts(&self, path: &Path, parts: &[&[u8]]) -> Result<(), FsError> {
        self.write_with(path, false, &mut |_, _, out| {
            super::writeback::write_parts(out, parts)
        })
    }

    /// [`Inner::write_atomic_parts`] renamed only when `gate` says so.
    fn write_atomic_parts_gated(
        &self,
        path: &Path,
        parts: &[&[u8]],
        gate: std::sync::mpsc::Receiver<bool>,
    ) -> Result<(), FsError> {
        let mut gated = super::atomic::gated_fill(parts, gate);
        let result = self.write_with(path, false, &mut |_, _, out| gated.fill(out));
        gated.result(path, result)
    }

    /// [`Inner::write_atomic`] with bytes that arrive while it writes.
    fn write_atomic_streamed(&self, path: &Path, stream: &mut WriteStream) -> Result<(), FsError> {
        let size = stream.size();
        let mut fill = StreamFill::new(stream);
        let result = self.write_with(path, false, &mut |_, _, out| fill.fill(out));
        match fill.problem {
            Some(problem) => Err(problem.error(path, size)),
            None => result,
        }
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
            staging: staging(),
        };
        temp.write_and_rename(&name, write, existing.as_ref())
            .map_err(|errno| os_error(errno, path))?;
        temp.sync_dir();
        Ok(())
    }
}

/// The file `fd` opened for reading, unless it is a directory or special file.
fn checked_file(fd: OwnedFd, path: &Path) -> Result<File, FsError> {
    let stat = rfs::fstat(&fd).map_err(|errno| os_error(errno, path))?;
    if let Some(kind) = special_kind(mode_of(&stat)) {
        return Err(special_error(kind, path));
    }
    if kind_of_mode(mode_of(&stat)) == FileKind::Directory {
        return Err(FsError::new(FsErrorKind::IsADirectory, path));
    }
    Ok(File::from(fd))
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
        if let Some(file) = self.inner.open_file_in_place(path) {
            return Ok(Box::new(LocalReader::new(file?, path)));
        }
        let file = self.run(path, |inner, path| inner.open_file(path)).await?;
        Ok(Box::new(LocalReader::pooled(file, path)))
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        let inner = self.inner.clone();
        let owned = path.to_path_buf();
        blocking_with(path, contents, move |contents| {
            inner.write_atomic(&owned, contents)
        })
        .await
    }

    async fn write_atomic_parts(&self, path: &Path, parts: &[&[u8]]) -> Result<(), FsError> {
        let inner = self.inner.clone();
        let owned = path.to_path_buf();
        blocking_with_parts(path, parts, move |parts| {
            inner.write_atomic_parts(&owned, parts)
        })
        .await
    }

    async fn write_atomic_parts_gated(
        &self,
        path: &Path,
        parts: &[&[u8]],
        gate: std::sync::mpsc::Receiver<bool>,
    ) -> Result<(), FsError> {
        let inner = self.inner.clone();
        let owned = path.to_path_buf();
        blocking_with_parts(path, parts, move |parts| {
            inner.write_atomic_parts_gated(&owned, parts, gate)
        })
        .await
    }

    async fn write_atomic_streamed(
        &self,
        path: &Path,
        mut stream: WriteStream,
    ) -> Result<(), FsError> {
        self.run(path, move |inner, path| {
            inner.write_atomic_streamed(path, &mut stream)
        })
        .await
    }

    async fn write_spliced(&self, path: &Path, splices: &[Splice]) -> Result<(), FsError> {
        let splices = splices.to_vec();
        self.run(path, move |inner, path| inner.write_spliced(path, &splices))
            .await
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        if let Some(stat) = self.inner.stat_in_place(path, true) {
            return stat.map(|s| convert(&s));
        }
        self.run(path, |inner, path| {
            inner.stat(path, true).map(|s| convert(&s))
        })
        .await
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        if let Some(stat) = self.inner.stat_in_place(path, false) {
            return stat.map(|s| convert(&s));
        }
        self.run(path, |inner, path| {
            inner.stat(path, false).map(|s| convert(&s))
        })
        .await
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        self.run(path, |inner, path| inner.read_dir(path)).await
    }

    async fn read_dir_first(
        &self,
        path: &Path,
        limit: usize,
        key: DirKey,
    ) -> Result<DirPage, FsError> {
        self.run(path, move |inner, path| {
            let mut first = FirstEntries::new(limit, key);
            inner.list_dir(path, &mut |entry| first.offer(entry))?;
            Ok(first.finish())
        })
        .await
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        if let Some(real) = self.inner.canonicalize_in_place(path) {
            return real;
        }
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
        Arc::new(self.narrow(confinement))
    }
}
