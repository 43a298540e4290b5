//! The local file system.
//!
//! Blocking `std::fs` calls run on tokio's blocking pool; streamed reads use
//! `tokio::fs::File`. Writes are atomic: a temp file in the target's directory
//! (unnamed until it is complete, on Linux) is written, fsynced and renamed over
//! the target, then the directory is fsynced so the rename survives a crash; see
//! [`atomic`].
//!
//! Path lookups (`metadata`, `symlink_metadata`, `canonicalize`, the `open`
//! of a file to read) and the first [`INLINE_READ_BYTES`] of a streamed read
//! run in place on the calling thread: a local file system answers them from
//! the kernel's caches in microseconds, while a hop to tokio's blocking pool
//! and back (two thread wake-ups) costs several times that, and was most of
//! the cost of a small `read` in a batch. Whatever may take long (whole-file
//! reads, the rest of a stream, writes and their fsyncs, directory listings)
//! still runs on the pool. Only on local file systems: where a lookup could
//! wait on a server (NFS, SMB, FUSE, ...) it runs on the pool too, see
//! [`inline`].

mod atomic;
#[cfg(unix)]
mod beneath;
#[cfg(unix)]
pub(crate) mod inline;
#[cfg(unix)]
pub(crate) use beneath::LocalBeneath;
#[cfg(unix)]
mod kind;
#[cfg(target_os = "linux")]
mod mapped;
#[cfg(unix)]
mod resolve;
mod splice;
#[cfg(target_os = "linux")]
mod staging;
#[cfg(unix)]
mod temp;
mod writeback;

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use tokio::io::AsyncReadExt;

use crate::{
    Confinement, DirEntry, DirKey, DirPage, FileKind, FileReader, FileSystem, FirstEntries,
    FsError, FsErrorKind, LineCount, LocalEnv, Metadata,
};

/// Runs a blocking file-system call on the blocking pool.
async fn blocking<T, F>(path: &Path, work: F) -> Result<T, FsError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, FsError> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(join) => Err(FsError::new(FsErrorKind::Other, path).with_detail(join.to_string())),
    }
}

/// Runs a blocking call on `contents` without copying them: on a multi-threaded
/// runtime in place (`block_in_place`: the worker hands its other tasks on while the
/// call blocks); on a current-thread runtime, where that is not allowed, on the
/// blocking pool with a copy. A 50 MiB write thus holds its content once, not twice.
async fn blocking_with<T, F>(path: &Path, contents: &[u8], work: F) -> Result<T, FsError>
where
    T: Send + 'static,
    F: FnOnce(&[u8]) -> Result<T, FsError> + Send + 'static,
{
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == RuntimeFlavor::MultiThread)
    {
        return tokio::task::block_in_place(|| work(contents));
    }
    let owned = contents.to_vec();
    blocking(path, move || work(&owned)).await
}

/// [`blocking_with`] for content in parts: in place on a multi-threaded runtime,
/// else on the blocking pool with the parts joined into one copy.
async fn blocking_with_parts<T, F>(path: &Path, parts: &[&[u8]], work: F) -> Result<T, FsError>
where
    T: Send + 'static,
    F: FnOnce(&[&[u8]]) -> Result<T, FsError> + Send + 'static,
{
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == RuntimeFlavor::MultiThread)
    {
        return tokio::task::block_in_place(|| work(parts));
    }
    let owned = parts.concat();
    blocking(path, move || work(&[&owned])).await
}

fn kind_of(file_type: fs::FileType) -> FileKind {
    if file_type.is_symlink() {
        FileKind::Symlink
    } else if file_type.is_dir() {
        FileKind::Directory
    } else if file_type.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    }
}

fn convert(metadata: &fs::Metadata) -> Metadata {
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        Some(metadata.permissions().mode() & 0o7777)
    };
    #[cfg(not(unix))]
    let mode = None;
    #[cfg(unix)]
    let (changed, id) = {
        use std::os::unix::fs::MetadataExt;
        (
            kind::time_of(
                metadata.ctime(),
                u64::try_from(metadata.ctime_nsec()).unwrap_or(0),
            ),
            Some(crate::FileId {
                device: metadata.dev(),
                inode: metadata.ino(),
            }),
        )
    };
    #[cfg(not(unix))]
    let (changed, id) = (None, None);
    Metadata {
        kind: kind_of(metadata.file_type()),
        len: metadata.len(),
        modified: metadata.modified().ok(),
        mode,
        changed,
        id,
    }
}

/// Opens `path` for reading, refusing directories (which `open(2)` accepts on
/// Unix) and special files. The open never blocks: `O_NONBLOCK` makes a FIFO
/// open return at once, and the kind is checked on the opened handle.
fn open_file(path: &Path) -> Result<File, FsError> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(error) => {
            // open(2) of a socket fails with ENXIO: say what it is.
            #[cfg(unix)]
            if let Ok(metadata) = fs::metadata(path) {
                use std::os::unix::fs::MetadataExt;
                if let Some(kind) = kind::special_kind(metadata.mode()) {
                    return Err(FsError::new(FsErrorKind::SpecialFile, path).with_detail(kind));
                }
            }
            return Err(FsError::from_io(error, path));
        }
    };
    let metadata = file.metadata().map_err(|e| FsError::from_io(e, path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Some(kind) = kind::special_kind(metadata.mode()) {
            return Err(FsError::new(FsErrorKind::SpecialFile, path).with_detail(kind));
        }
    }
    if metadata.is_dir() {
        return Err(FsError::new(FsErrorKind::IsADirectory, path));
    }
    Ok(file)
}

/// Bytes of a file read in place on the calling thread before the rest is
/// streamed from the blocking pool (see [`LocalReader`]).
const INLINE_READ_BYTES: usize = 64 * 1024;

/// Streams a local file. The first [`INLINE_READ_BYTES`] are read in place:
/// a small file (most reads) then costs no hop to the blocking pool, whose
/// thread wake-ups cost more than the read; the rest of a large file is read
/// on the pool, as every other blocking call.
struct LocalReader {
    /// The file while it is read in place.
    inline: Option<File>,
    /// Bytes still to be read in place.
    inline_left: usize,
    /// The file once it is streamed from the blocking pool.
    file: Option<tokio::fs::File>,
    path: PathBuf,
    /// Bytes of the file consumed so far (read, counted or skipped).
    offset: u64,
    /// A handle for scans of memory-mapped windows, once one is asked for.
    #[cfg(target_os = "linux")]
    mapped: Option<std::sync::Arc<File>>,
}

impl LocalReader {
    fn new(file: File, path: &Path) -> LocalReader {
        LocalReader {
            inline: Some(file),
            inline_left: INLINE_READ_BYTES,
            file: None,
            path: path.to_path_buf(),
            offset: 0,
            #[cfg(target_os = "linux")]
            mapped: None,
        }
    }

    /// A reader that streams everything from the blocking pool (a file on a
    /// file system where reads may wait on a server).
    fn pooled(file: File, path: &Path) -> LocalReader {
        LocalReader {
            inline_left: 0,
            ..LocalReader::new(file, path)
        }
    }

    /// Counts the lines of up to `max` bytes from the current offset, through
    /// memory-mapped windows ([`mapped`]), stopping after the `stop_after`-th
    /// newline when given; then moves the read position past them.
    #[cfg(target_os = "linux")]
    async fn count_mapped(
        &mut self,
        max: u64,
        stop_after: Option<u64>,
    ) -> Result<LineCount, FsError> {
        let error = |e| FsError::from_io(e, &self.path);
        let file = match &self.mapped {
            Some(file) => file.clone(),
            None => {
                let file = match (&self.inline, &self.file) {
                    (Some(file), _) => file.try_clone().map_err(error)?,
                    (None, Some(file)) => file.try_clone().await.map_err(error)?.into_std().await,
                    (None, None) => return Ok(LineCount::default()),
                };
                let file = std::sync::Arc::new(file);
                self.mapped = Some(file.clone());
                file
            }
        };
        let (path, offset) = (self.path.clone(), self.offset);
        let count = blocking(&self.path, move || {
            count_windows(&file, offset, max, stop_after)
                .map_err(|e| FsError::from_io(e, &path))?
                .ok_or_else(|| {
                    FsError::new(FsErrorKind::Other, &path)
                        .with_detail("it was truncated while being read; read it again")
                })
        })
        .await?;
        self.offset += count.bytes;
        let at = SeekFrom::Start(self.offset);
        match (&mut self.inline, &mut self.file) {
            (Some(file), _) => {
                file.seek(at).map_err(error)?;
            }
            (None, Some(file)) => {
                tokio::io::AsyncSeekExt::seek(file, at)
                    .await
                    .map_err(error)?;
            }
            (None, None) => {}
        }
        Ok(count)
    }
}

/// Counts lines from `offset`, up to `max` bytes or the end of the file, and
/// at most through the `stop_after`-th newline, one mapped window at a time;
/// `None` when the file shrank during a scan.
#[cfg(target_os = "linux")]
fn count_windows(
    file: &File,
    offset: u64,
    max: u64,
    stop_after: Option<u64>,
) -> std::io::Result<Option<LineCount>> {
    let size = file.metadata()?.len();
    let end = size.min(offset.saturating_add(max));
    let mut count = LineCount::default();
    let mut at = offset;
    while at < end {
        let len = usize::try_from(end - at)
            .unwrap_or(usize::MAX)
            .min(mapped::WINDOW_BYTES);
        let needed = stop_after.map(|lines| lines.saturating_sub(count.newlines).max(1));
        let scanned = mapped::scan(file, at, len, |bytes| {
            let mut window = LineCount::default();
            let stop = needed.and_then(|needed| {
                let newlines = memchr::memchr_iter(b'\n', bytes).count() as u64;
                (newlines >= needed).then(|| {
                    memchr::memchr_iter(b'\n', bytes)
                        .nth(usize::try_from(needed - 1).unwrap_or(usize::MAX))
                        .map_or(bytes.len(), |index| index + 1)
                })
            });
            let stopped = stop.is_some();
            window.add(&bytes[..stop.unwrap_or(bytes.len())]);
            (window, stopped)
        })?;
        let (window, stopped) = match scanned {
            mapped::Scanned::Done(done) => done,
            mapped::Scanned::Shrank => return Ok(None),
        };
        count.extend(&window);
        at += window.bytes;
        if stopped {
            break;
        }
    }
    Ok(Some(count))
}

/// `realpath` in three system calls: open the path (`O_PATH`), ask the kernel
/// for the open handle's path (`/proc/self/fd/N`), close it. glibc's
/// `realpath` instead calls `readlink` on every prefix of the path, each
/// walking it again from `/` (ten calls for a path ten components deep). Falls
/// back to `realpath` where `/proc` is missing or the path cannot be told
/// (the file was removed meanwhile, or lies outside this process's root).
///
/// A path already spelled as a real path (absolute, no `.`, `..`, empty or
/// trailing components) costs one call fewer and no `/proc` lookup: opened
/// with `RESOLVE_NO_SYMLINKS`, it is its own real path when the open
/// succeeds (no component is a symlink); a symlink on the way (`ELOOP`)
/// sends it the long way.
fn canonicalize_by_handle(path: &Path) -> Result<PathBuf, FsError> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        use rustix::io::Errno;
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let flags = OFlags::PATH | OFlags::CLOEXEC;
        if spelled_real(path) {
            match rustix::fs::openat2(
                rustix::fs::CWD,
                path,
                flags,
                Mode::empty(),
                ResolveFlags::NO_SYMLINKS,
            ) {
                Ok(_) => return Ok(path.to_path_buf()),
                // A symlink on the way (ELOOP), or no openat2: the long way.
                Err(Errno::LOOP | Errno::NOSYS | Errno::INVAL | Errno::PERM) => {}
                Err(errno) => return Err(FsError::from_io(std::io::Error::from(errno), path)),
            }
        }
        match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => {
                let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
                if let Ok(real) = rustix::fs::readlink(link, Vec::new()) {
                    let bytes = real.as_bytes();
                    if bytes.starts_with(b"/") && !bytes.ends_with(b" (deleted)") {
                        return Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)));
                    }
                }
            }
            // What realpath would say: the lookup failed the same way.
            Err(errno) => return Err(FsError::from_io(std::io::Error::from(errno), path)),
        }
    }
    fs::canonicalize(path).map_err(|e| FsError::from_io(e, path))
}

/// Whether `path` is spelled as `realpath` would spell it, symlinks aside:
/// absolute, without `.`, `..`, empty components or a trailing slash.
#[cfg(target_os = "linux")]
fn spelled_real(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    if bytes == b"/" {
        return true;
    }
    let Some(rest) = bytes.strip_prefix(b"/") else {
        return false;
    };
    rest.split(|&b| b == b'/')
        .all(|part| !matches!(part, b"" | b"." | b".."))
}

/// `lookup` of `path` (following symlinks or not), in place on a local file
/// system (see the module docs), else on the blocking pool.
async fn stat(
    path: &Path,
    lookup: fn(&Path) -> std::io::Result<fs::Metadata>,
) -> Result<Metadata, FsError> {
    let answer = move |path: &Path| {
        lookup(path)
            .map(|metadata| convert(&metadata))
            .map_err(|e| FsError::from_io(e, path))
    };
    if !in_place() {
        let owned = path.to_path_buf();
        return blocking(path, move || answer(&owned)).await;
    }
    answer(path)
}

/// Whether the unconfined view looks paths up in place (see [`inline`]).
fn in_place() -> bool {
    #[cfg(unix)]
    return inline::unconfined_in_place();
    #[cfg(not(unix))]
    return false;
}

#[async_trait]
impl FileReader for LocalReader {
    async fn read_chunk(&mut self, buf: &mut [u8]) -> Result<usize, FsError> {
        if let Some(file) = &mut self.inline {
            if self.inline_left > 0 {
                let len = buf.len().min(self.inline_left);
                let read = file
                    .read(&mut buf[..len])
                    .map_err(|e| FsError::from_io(e, &self.path))?;
                self.inline_left -= read;
                self.offset += read as u64;
                return Ok(read);
            }
            // The in-place part is read: the rest streams from the pool.
            self.file = self.inline.take().map(tokio::fs::File::from_std);
        }
        let read = match &mut self.file {
            Some(file) => file
                .read(buf)
                .await
                .map_err(|e| FsError::from_io(e, &self.path))?,
            None => 0,
        };
        self.offset += read as u64;
        Ok(read)
    }

    #[cfg(target_os = "linux")]
    async fn count_lines(&mut self, max: u64) -> Result<LineCount, FsError> {
        self.count_mapped(max, None).await
    }

    #[cfg(target_os = "linux")]
    async fn skip_lines(&mut self, lines: u64, max: u64) -> Result<Option<LineCount>, FsError> {
        self.count_mapped(max, Some(lines.max(1))).await.map(Some)
    }
}

/// Hands each entry of the directory at `path` to `sink`, as it is listed.
fn list_dir(path: &Path, sink: &mut dyn FnMut(DirEntry)) -> Result<(), FsError> {
    let error = |e| FsError::from_io(e, path);
    for entry in fs::read_dir(path).map_err(error)? {
        let entry = entry.map_err(error)?;
        let kind = entry.file_type().map(kind_of).unwrap_or(FileKind::Other);
        sink(DirEntry {
            name: entry.file_name(),
            kind,
        });
    }
    Ok(())
}

#[async_trait]
impl FileSystem for LocalEnv {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        let owned = path.to_path_buf();
        blocking(path, move || {
            let mut file = open_file(&owned)?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|e| FsError::from_io(e, &owned))?;
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
        let owned = path.to_path_buf();
        blocking(path, move || {
            let error = |e| FsError::from_io(e, &owned);
            let mut file = open_file(&owned)?;
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
        // In place on a local file system: see the module docs.
        if !in_place() {
            let owned = path.to_path_buf();
            let file = blocking(path, move || open_file(&owned)).await?;
            return Ok(Box::new(LocalReader::pooled(file, path)));
        }
        let file = open_file(path)?;
        Ok(Box::new(LocalReader::new(file, path)))
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        let owned = path.to_path_buf();
        blocking_with(path, contents, move |contents| {
            atomic::write_atomic_blocking(&owned, contents)
        })
        .await
    }

    async fn write_atomic_parts(&self, path: &Path, parts: &[&[u8]]) -> Result<(), FsError> {
        let owned = path.to_path_buf();
        blocking_with_parts(path, parts, move |parts| {
            atomic::write_atomic_parts_blocking(&owned, parts)
        })
        .await
    }

    async fn write_atomic_parts_gated(
        &self,
        path: &Path,
        parts: &[&[u8]],
        gate: std::sync::mpsc::Receiver<bool>,
    ) -> Result<(), FsError> {
        let owned = path.to_path_buf();
        blocking_with_parts(path, parts, move |parts| {
            atomic::write_atomic_parts_gated_blocking(&owned, parts, gate)
        })
        .await
    }

    async fn write_atomic_streamed(
        &self,
        path: &Path,
        mut stream: crate::WriteStream,
    ) -> Result<(), FsError> {
        let owned = path.to_path_buf();
        blocking(path, move || {
            atomic::write_atomic_streamed_blocking(&owned, &mut stream)
        })
        .await
    }

    async fn write_spliced(&self, path: &Path, splices: &[crate::Splice]) -> Result<(), FsError> {
        let owned = path.to_path_buf();
        let splices = splices.to_vec();
        blocking(path, move || {
            splice::write_spliced_blocking(&owned, &splices)
        })
        .await
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        stat(path, |path| fs::metadata(path)).await
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        stat(path, |path| fs::symlink_metadata(path)).await
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        let owned = path.to_path_buf();
        blocking(path, move || {
            let mut entries = Vec::new();
            list_dir(&owned, &mut |entry| entries.push(entry))?;
            Ok(entries)
        })
        .await
    }

    async fn read_dir_first(
        &self,
        path: &Path,
        limit: usize,
        key: DirKey,
    ) -> Result<DirPage, FsError> {
        let owned = path.to_path_buf();
        blocking(path, move || {
            let mut first = FirstEntries::new(limit, key);
            list_dir(&owned, &mut |entry| first.offer(entry))?;
            Ok(first.finish())
        })
        .await
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        // In place on a local file system: see the module docs.
        if !in_place() {
            let owned = path.to_path_buf();
            return blocking(path, move || {
                fs::canonicalize(&owned).map_err(|e| FsError::from_io(e, &owned))
            })
            .await;
        }
        canonicalize_by_handle(path)
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        tokio::fs::create_dir_all(path)
            .await
            .map_err(|e| FsError::from_io(e, path))
    }

    async fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        tokio::fs::remove_dir(path)
            .await
            .map_err(|e| FsError::from_io(e, path))
    }

    async fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        tokio::fs::remove_file(path)
            .await
            .map_err(|e| FsError::from_io(e, path))
    }

    fn home_dir(&self) -> Option<PathBuf> {
        std::env::var_os("HOME").map(PathBuf::from)
    }

    #[cfg(unix)]
    fn confine(
        self: std::sync::Arc<Self>,
        confinement: Confinement,
    ) -> std::sync::Arc<dyn FileSystem> {
        std::sync::Arc::new(beneath::LocalBeneath::new(
            confinement,
            self.home_dir(),
            false,
        ))
    }
}

impl LocalEnv {
    /// [`FileSystem::confine`] without the `openat2` fast path: every
    /// resolution is the component walk (what kernels before 5.6 get). For
    /// tests of the walk.
    #[cfg(unix)]
    #[doc(hidden)]
    pub fn confine_by_walk(&self, confinement: Confinement) -> std::sync::Arc<dyn FileSystem> {
        std::sync::Arc::new(beneath::LocalBeneath::new(
            confinement,
            self.home_dir(),
            true,
        ))
    }
}

#[cfg(test)]
mod tests;
