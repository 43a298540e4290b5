//! [`MemoryEnv`]: an in-memory file system for the tools' unit tests.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::{
    DirEntry, Exec, ExecError, ExecOutcome, ExecRequest, FileReader, FileSystem, FindOutput,
    FindRequest, FsError, FsErrorKind, GrepOutput, GrepRequest, Metadata, OutputSink, Search,
    SearchError,
};

/// An in-memory file system. Cheap to clone: clones share the same files.
#[derive(Clone, Debug, Default)]
pub struct MemoryEnv {}

impl MemoryEnv {
    /// An empty file system containing only `/`.
    pub fn new() -> MemoryEnv {
        MemoryEnv::default()
    }
}

#[async_trait]
impl FileSystem for MemoryEnv {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        Err(FsError::new(FsErrorKind::Unsupported, path))
    }

    async fn read_range(
        &self,
        path: &Path,
        _offset: u64,
        _max_len: usize,
    ) -> Result<Vec<u8>, FsError> {
        Err(FsError::new(FsErrorKind::Unsupported, path))
    }

    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError> {
        Err(FsError::new(FsErrorKind::Unsupported, path))
    }

    async fn write_atomic(&self, path: &Path, _contents: &[u8]) -> Result<(), FsError> {
        Err(FsError::new(FsErrorKind::Unsupported, path))
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        Err(FsError::new(FsErrorKind::Unsupported, path))
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        Err(FsError::new(FsErrorKind::Unsupported, path))
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        Err(FsError::new(FsErrorKind::Unsupported, path))
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        Err(FsError::new(FsErrorKind::Unsupported, path))
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        Err(FsError::new(FsErrorKind::Unsupported, path))
    }

    fn home_dir(&self) -> Option<PathBuf> {
        Some(PathBuf::from("/home/user"))
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

#[async_trait]
impl Search for MemoryEnv {
    async fn grep(
        &self,
        _request: GrepRequest,
        _cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        Err(SearchError::Unsupported)
    }

    async fn find(
        &self,
        _request: FindRequest,
        _cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        Err(SearchError::Unsupported)
    }
}
