//! The wrappers of each port.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{FaultError, Faults, Operation, Timing};
use crate::{
    DirEntry, Exec, ExecError, ExecOutcome, ExecRequest, FileReader, FileSystem, FindOutput,
    FindRequest, FsError, GrepOutput, GrepRequest, Metadata, OutputLog, OutputSink, Search,
    SearchError,
};

/// A [`FileSystem`] that fails the operations its [`Faults`] select.
pub struct FaultyFs {
    inner: Arc<dyn FileSystem>,
    faults: Faults,
}

impl FaultyFs {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn FileSystem>, faults: Faults) -> FaultyFs {
        FaultyFs { inner, faults }
    }

    /// Runs `work` unless a fault selects `operation`.
    async fn guard<T, Fut>(
        &self,
        operation: Operation,
        path: &Path,
        work: Fut,
    ) -> Result<T, FsError>
    where
        Fut: Future<Output = Result<T, FsError>>,
    {
        match self.faults.check(operation, path) {
            None => work.await,
            Some((error, Timing::Before)) => Err(error.fs_error(path)),
            Some((error, Timing::After)) => {
                let _ = work.await;
                Err(error.fs_error(path))
            }
        }
    }
}

impl fmt::Debug for FaultyFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultyFs").finish_non_exhaustive()
    }
}

#[async_trait]
impl FileSystem for FaultyFs {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        self.guard(Operation::Read, path, self.inner.read(path))
            .await
    }

    async fn read_range(
        &self,
        path: &Path,
        offset: u64,
        max_len: usize,
    ) -> Result<Vec<u8>, FsError> {
        let work = self.inner.read_range(path, offset, max_len);
        self.guard(Operation::ReadRange, path, work).await
    }

    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError> {
        let inner = self
            .guard(Operation::Open, path, self.inner.open(path))
            .await?;
        Ok(Box::new(FaultyReader {
            inner,
            path: path.to_path_buf(),
            faults: self.faults.clone(),
        }))
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        let work = self.inner.write_atomic(path, contents);
        self.guard(Operation::WriteAtomic, path, work).await
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        self.guard(Operation::Metadata, path, self.inner.metadata(path))
            .await
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        let work = self.inner.symlink_metadata(path);
        self.guard(Operation::SymlinkMetadata, path, work).await
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        self.guard(Operation::ReadDir, path, self.inner.read_dir(path))
            .await
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        let work = self.inner.canonicalize(path);
        self.guard(Operation::Canonicalize, path, work).await
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        let work = self.inner.create_dir_all(path);
        self.guard(Operation::CreateDirAll, path, work).await
    }

    /// Not a fault point: it is how a failed write undoes its directories.
    async fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        self.inner.remove_dir(path).await
    }

    async fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        let work = self.inner.remove_file(path);
        self.guard(Operation::RemoveFile, path, work).await
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.inner.home_dir()
    }

    fn confine(self: Arc<Self>, confinement: crate::Confinement) -> Arc<dyn FileSystem> {
        Arc::new(FaultyFs {
            inner: self.inner.clone().confine(confinement),
            faults: self.faults.clone(),
        })
    }
}

/// A stream opened through a [`FaultyFs`]: each chunk read is an operation.
struct FaultyReader {
    inner: Box<dyn FileReader>,
    path: PathBuf,
    faults: Faults,
}

#[async_trait]
impl FileReader for FaultyReader {
    async fn read_chunk(&mut self, buf: &mut [u8]) -> Result<usize, FsError> {
        match self.faults.check(Operation::ReadChunk, &self.path) {
            None => self.inner.read_chunk(buf).await,
            Some((error, Timing::Before)) => Err(error.fs_error(&self.path)),
            Some((error, Timing::After)) => {
                let _ = self.inner.read_chunk(buf).await;
                Err(error.fs_error(&self.path))
            }
        }
    }
}

/// An [`Exec`] that fails the operations its [`Faults`] select.
/// [`kill_all`](Exec::kill_all) is passed through and not counted.
pub struct FaultyExec {
    inner: Arc<dyn Exec>,
    faults: Faults,
}

impl FaultyExec {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Exec>, faults: Faults) -> FaultyExec {
        FaultyExec { inner, faults }
    }
}

impl fmt::Debug for FaultyExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultyExec").finish_non_exhaustive()
    }
}

#[async_trait]
impl Exec for FaultyExec {
    async fn exec(
        &self,
        request: ExecRequest,
        sink: &mut dyn OutputSink,
        cancel: CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        let Some((error, timing)) = self.faults.check(Operation::Exec, &request.program) else {
            return self.inner.exec(request, sink, cancel).await;
        };
        let failure = error.exec_error(&request.program, &request.cwd);
        if timing == Timing::After {
            let _ = self.inner.exec(request, sink, cancel).await;
        }
        Err(failure)
    }

    fn kill_all(&self) {
        self.inner.kill_all();
    }

    fn create_output_log(&self, dir: &Path, prefix: &str) -> Result<Box<dyn OutputLog>, ExecError> {
        let log = match self.faults.check(Operation::CreateOutputLog, dir) {
            None => self.inner.create_output_log(dir, prefix)?,
            Some((error, timing)) => {
                if timing == Timing::After {
                    // A created file the caller never hears of is left behind,
                    // as a real failure after creation would leave it.
                    let _ = self.inner.create_output_log(dir, prefix);
                }
                return Err(error.exec_error(dir, dir));
            }
        };
        Ok(Box::new(FaultyOutputLog {
            inner: log,
            faults: self.faults.clone(),
        }))
    }
}

/// A full-output file created through a [`FaultyExec`]: each write is an operation.
struct FaultyOutputLog {
    inner: Box<dyn OutputLog>,
    faults: Faults,
}

impl OutputLog for FaultyOutputLog {
    fn path(&self) -> &Path {
        self.inner.path()
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), ExecError> {
        match self
            .faults
            .check(Operation::OutputLogWrite, self.inner.path())
        {
            None => self.inner.write_all(bytes),
            Some((error, timing)) => {
                if timing == Timing::After {
                    let _ = self.inner.write_all(bytes);
                }
                let path = self.inner.path();
                Err(match error {
                    FaultError::Fs(_) => ExecError::Io(error.fs_error(path).to_string()),
                    other => other.exec_error(path, path),
                })
            }
        }
    }
}

/// A [`Search`] that fails the operations its [`Faults`] select.
pub struct FaultySearch {
    inner: Arc<dyn Search>,
    faults: Faults,
}

impl FaultySearch {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Search>, faults: Faults) -> FaultySearch {
        FaultySearch { inner, faults }
    }
}

impl fmt::Debug for FaultySearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultySearch").finish_non_exhaustive()
    }
}

#[async_trait]
impl Search for FaultySearch {
    async fn grep(
        &self,
        request: GrepRequest,
        cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        let Some((error, timing)) = self.faults.check(Operation::Grep, &request.root) else {
            return self.inner.grep(request, cancel).await;
        };
        let failure = error.search_error(&request.root);
        if timing == Timing::After {
            let _ = self.inner.grep(request, cancel).await;
        }
        Err(failure)
    }

    async fn find(
        &self,
        request: FindRequest,
        cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        let Some((error, timing)) = self.faults.check(Operation::Find, &request.root) else {
            return self.inner.find(request, cancel).await;
        };
        let failure = error.search_error(&request.root);
        if timing == Timing::After {
            let _ = self.inner.find(request, cancel).await;
        }
        Err(failure)
    }

    fn confine(self: Arc<Self>, confinement: crate::Confinement) -> Arc<dyn Search> {
        Arc::new(FaultySearch {
            inner: self.inner.clone().confine(confinement),
            faults: self.faults.clone(),
        })
    }
}
