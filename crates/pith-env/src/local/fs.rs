//! The local file system.

use std::path::{Path, PathBuf};

use async_trait::async_trait;

use crate::{DirEntry, FileReader, FileSystem, FsError, FsErrorKind, LocalEnv, Metadata};

#[async_trait]
impl FileSystem for LocalEnv {
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
        std::env::var_os("HOME").map(PathBuf::from)
    }
}
