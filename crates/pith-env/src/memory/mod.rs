//! [`MemoryEnv`]: an in-memory file system for the tools' unit tests.

mod beneath;
mod search;
mod tree;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::{
    Confinement, DirEntry, Exec, ExecError, ExecOutcome, ExecRequest, FileReader, FileSystem,
    FsError, FsErrorKind, Metadata, OutputSink,
};

use self::tree::{Follow, Tree};

/// An in-memory file system. Cheap to clone: clones share the same files.
///
/// It keeps the whole [`FileSystem`] contract the way a POSIX system does:
/// absolute paths only; directories, regular files and symlinks (relative
/// targets resolve from the link's directory, `..` applies to the real path,
/// more than 40 links in one lookup is [`FsErrorKind::SymlinkLoop`]);
/// permission bits (`0o644` for new files, `0o755` for directories, kept when
/// a file is rewritten); modification times. Writes replace a file's bytes in
/// one step, so readers (and already [opened](FileSystem::open) streams,
/// which keep the old bytes like an open file descriptor) never see a partial
/// file.
///
/// [`Search`](crate::Search) runs ripgrep's matcher and searcher over the
/// in-memory files: hidden files are searched, `.git/` never; `.gitignore`
/// and `.ignore` files in the search root, below it and above it apply
/// hierarchically (the nearest file with a verdict wins, `!` re-includes);
/// grep skips files with a NUL byte; symlinks are not followed (find lists
/// them, grep skips them); results are sorted by path. As with
/// [`LocalEnv`](crate::LocalEnv), grep's `limit_reached` is set once `limit`
/// matches are found, find's only when more entries exist. It does not read
/// `.git/info/exclude`, global git excludes or `.rgignore`.
///
/// [`Exec`] is unsupported. The home directory is `/home/user` (it exists
/// only if a test creates it).
///
/// ```
/// # async fn demo() -> Result<(), pith_env::FsError> {
/// use std::path::Path;
/// use pith_env::{FileSystem, MemoryEnv};
///
/// let env = MemoryEnv::with_files(&[("/work/src/lib.rs", "fn main() {}\n")]);
/// env.symlink("/work/lib.rs", "src/lib.rs")?;
/// env.set_mode("/work/src/lib.rs", 0o600)?;
/// env.write_atomic(Path::new("/work/lib.rs"), b"// new\n").await?;
/// assert_eq!(env.file("/work/src/lib.rs").as_deref(), Some(&b"// new\n"[..]));
/// assert_eq!(env.metadata(Path::new("/work/lib.rs")).await?.mode, Some(0o600));
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, Default)]
pub struct MemoryEnv {
    tree: Arc<Mutex<Tree>>,
}

impl MemoryEnv {
    /// An empty file system containing only `/`.
    pub fn new() -> MemoryEnv {
        MemoryEnv::default()
    }

    /// A file system holding these files (path, contents), their parent
    /// directories created as needed.
    ///
    /// # Panics
    ///
    /// If a path is relative or runs through an existing file: a broken
    /// fixture is a bug in the test.
    pub fn with_files<P: AsRef<Path>, B: AsRef<[u8]>>(files: &[(P, B)]) -> MemoryEnv {
        let env = MemoryEnv::new();
        {
            let mut tree = env.lock();
            for (path, contents) in files {
                let path = path.as_ref();
                let created = match path.parent() {
                    Some(parent) => tree.create_dir_all(parent),
                    None => Ok(()),
                }
                .and_then(|()| tree.write_file(path, contents.as_ref()));
                if let Err(kind) = created {
                    panic!("MemoryEnv::with_files: {}", FsError::new(kind, path));
                }
            }
        }
        env
    }

    /// Creates a symbolic link at `link` pointing to `target`. The target is
    /// stored as given: a relative one resolves from the link's directory,
    /// and it need not exist. The link's parent must exist.
    pub fn symlink(&self, link: impl AsRef<Path>, target: impl AsRef<Path>) -> Result<(), FsError> {
        let link = link.as_ref();
        self.lock()
            .symlink(link, target.as_ref())
            .map_err(|kind| FsError::new(kind, link))
    }

    /// Sets the permission bits of a file or directory (following symlinks), like `chmod`.
    pub fn set_mode(&self, path: impl AsRef<Path>, mode: u32) -> Result<(), FsError> {
        let path = path.as_ref();
        self.lock()
            .set_mode(path, mode)
            .map_err(|kind| FsError::new(kind, path))
    }

    /// The contents of a regular file (following symlinks), or `None` if
    /// there is no file at `path`.
    pub fn file(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        self.lock()
            .read_file(path.as_ref())
            .ok()
            .map(|data| data.as_ref().clone())
    }

    fn lock(&self) -> MutexGuard<'_, Tree> {
        // A panic while holding the lock cannot leave the tree half-updated
        // (every mutation is a single map insert), so poisoning is ignored.
        self.tree
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn with_tree<T>(
        &self,
        path: &Path,
        operation: impl FnOnce(&mut Tree) -> Result<T, FsErrorKind>,
    ) -> Result<T, FsError> {
        operation(&mut self.lock()).map_err(|kind| FsError::new(kind, path))
    }
}

/// A stream over the bytes a file had when it was opened.
struct MemoryReader {
    data: Arc<Vec<u8>>,
    position: usize,
}

#[async_trait]
impl FileReader for MemoryReader {
    async fn read_chunk(&mut self, buf: &mut [u8]) -> Result<usize, FsError> {
        let rest = self.data.get(self.position..).unwrap_or_default();
        let count = rest.len().min(buf.len());
        buf[..count].copy_from_slice(&rest[..count]);
        self.position += count;
        Ok(count)
    }
}

#[async_trait]
impl FileSystem for MemoryEnv {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        self.with_tree(path, |tree| tree.read_file(path))
            .map(|data| data.as_ref().clone())
    }

    async fn read_range(
        &self,
        path: &Path,
        offset: u64,
        max_len: usize,
    ) -> Result<Vec<u8>, FsError> {
        let data = self.with_tree(path, |tree| tree.read_file(path))?;
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(data.len());
        let end = start.saturating_add(max_len).min(data.len());
        Ok(data[start..end].to_vec())
    }

    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError> {
        let data = self.with_tree(path, |tree| tree.read_file(path))?;
        Ok(Box::new(MemoryReader { data, position: 0 }))
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        self.with_tree(path, |tree| tree.write_file(path, contents))
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        self.with_tree(path, |tree| tree.metadata(path, Follow::Final))
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        self.with_tree(path, |tree| tree.metadata(path, Follow::NotFinal))
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        self.with_tree(path, |tree| tree.read_dir(path))
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        self.with_tree(path, |tree| Ok(tree.lookup(path, Follow::Final)?.0))
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        self.with_tree(path, |tree| tree.create_dir_all(path))
    }

    async fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        self.with_tree(path, |tree| tree.remove_dir(path))
    }

    async fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        self.with_tree(path, |tree| tree.remove_file(path))
    }

    fn home_dir(&self) -> Option<PathBuf> {
        Some(PathBuf::from("/home/user"))
    }

    fn confine(self: Arc<Self>, confinement: Confinement) -> Arc<dyn FileSystem> {
        Arc::new(beneath::MemoryBeneath::new((*self).clone(), confinement))
    }
}

#[async_trait]
impl Exec for MemoryEnv {
    async fn exec(
        &self,
        _request: ExecRequest,
        _sink: &mut dyn OutputSink,
        _cancel: CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        Err(ExecError::Unsupported)
    }

    fn kill_all(&self) {}
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
