//! The confined view of a [`RemoteEnv`](super::RemoteEnv): every operation first
//! resolves its path through the port (the far side's `realpath` of the nearest
//! existing ancestor, plus the missing components) and refuses what lands outside
//! the roots or what the write guard protects; then it runs the operation.
//!
//! This keeps the confinement contract (the conformance suite's `confined_*`
//! checks pass over a remote), but it is a check followed by an act, two round
//! trips apart: unlike `LocalEnv`'s view, which acts on the very directory handle
//! it resolved, it does not hold against a process on the far side that swaps a
//! directory for a symlink between the two. Forwarding `confine` itself (the far
//! side holding root handles) closes that; docs/remote.md lists it as a limit.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;

use crate::{
    Confinement, DirEntry, FileReader, FileSystem, FsError, FsErrorKind, Metadata, Splice,
};

/// A file system confined by resolving each path through the port first.
pub(crate) struct CheckedView {
    inner: Arc<dyn FileSystem>,
    confinement: Confinement,
}

impl CheckedView {
    pub(crate) fn new(inner: Arc<dyn FileSystem>, confinement: Confinement) -> CheckedView {
        CheckedView { inner, confinement }
    }

    /// The real path of `path`: the realpath of its nearest existing ancestor plus
    /// the missing components; with `follow` false a final symlink is not followed.
    async fn real_of(&self, path: &Path, follow: bool) -> Result<PathBuf, FsError> {
        if let (false, Some(parent), Some(name)) = (follow, path.parent(), path.file_name()) {
            let mut real = Box::pin(self.real_of(parent, true)).await?;
            real.push(name);
            return Ok(real);
        }
        let mut existing = path.to_path_buf();
        let mut rest: Vec<OsString> = Vec::new();
        loop {
            match self.inner.canonicalize(&existing).await {
                Ok(mut real) => {
                    real.extend(rest.iter().rev());
                    return Ok(real);
                }
                Err(error) if error.kind == FsErrorKind::NotFound => {
                    let Some(name) = existing.file_name() else {
                        return Err(FsError::new(FsErrorKind::NotFound, path));
                    };
                    rest.push(name.to_os_string());
                    if !existing.pop() {
                        return Err(FsError::new(FsErrorKind::NotFound, path));
                    }
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// The root `path` lands beneath (as configured) and the path relative to it.
    async fn beneath(&self, path: &Path, follow: bool) -> Result<(PathBuf, PathBuf), FsError> {
        let real = self.real_of(path, follow).await?;
        for root in &self.confinement.roots {
            let Ok(root_real) = self.inner.canonicalize(root).await else {
                continue;
            };
            if let Ok(relative) = real.strip_prefix(&root_real) {
                return Ok((root.clone(), relative.to_path_buf()));
            }
        }
        Err(FsError::new(FsErrorKind::OutsideRoots, path))
    }

    /// [`beneath`](Self::beneath), then the write guard.
    async fn guarded(&self, path: &Path) -> Result<(), FsError> {
        let (root, relative) = self.beneath(path, true).await?;
        match &self.confinement.write_guard {
            Some(guard) => guard(&root, &relative)
                .map_err(|reason| FsError::new(FsErrorKind::Protected, path).with_detail(reason)),
            None => Ok(()),
        }
    }
}

#[async_trait]
impl FileSystem for CheckedView {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        self.beneath(path, true).await?;
        self.inner.read(path).await
    }

    async fn read_range(
        &self,
        path: &Path,
        offset: u64,
        max_len: usize,
    ) -> Result<Vec<u8>, FsError> {
        self.beneath(path, true).await?;
        self.inner.read_range(path, offset, max_len).await
    }

    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError> {
        self.beneath(path, true).await?;
        self.inner.open(path).await
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        self.guarded(path).await?;
        self.inner.write_atomic(path, contents).await
    }

    async fn write_spliced(&self, path: &Path, splices: &[Splice]) -> Result<(), FsError> {
        self.guarded(path).await?;
        self.inner.write_spliced(path, splices).await
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        self.beneath(path, true).await?;
        self.inner.metadata(path).await
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        self.beneath(path, false).await?;
        self.inner.symlink_metadata(path).await
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        self.beneath(path, true).await?;
        self.inner.read_dir(path).await
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        self.beneath(path, true).await?;
        self.inner.canonicalize(path).await
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        self.guarded(path).await?;
        self.inner.create_dir_all(path).await
    }

    async fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        self.guarded(path).await?;
        self.inner.remove_dir(path).await
    }

    async fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        self.guarded(path).await?;
        self.inner.remove_file(path).await
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.inner.home_dir()
    }
}
