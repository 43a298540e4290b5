//! Fault injection: wrappers around any port that fail the n-th operation.
//!
//! [`FaultyEnv`] wraps an [`Env`]; every call through its ports is logged as
//! an [`Operation`] and passed to the wrapped adapter, unless an armed
//! [`Fault`] selects it: then the call fails with the fault's error instead
//! (or, with [`Fault::after`], runs and *then* reports the failure, like a
//! write that landed but whose final `fsync` failed). The same wrappers exist
//! per port ([`FaultyFs`], [`FaultyExec`], [`FaultySearch`]) sharing one
//! [`Faults`] handle, so the n-th operation counts across all of them.
//!
//! A test typically runs a call once without faults to learn how many
//! operations it makes, then once per `n` with the n-th failing:
//!
//! ```
//! # async fn demo() {
//! use std::path::Path;
//! use pith_env::fault::{Fault, FaultyEnv, Operation};
//! use pith_env::{Env, FsErrorKind, MemoryEnv};
//!
//! let faulty = FaultyEnv::new(Env::memory(MemoryEnv::new()));
//! let env = faulty.env();
//! env.fs.create_dir_all(Path::new("/w")).await.unwrap();
//! faulty.inject(Fault::on(Operation::WriteAtomic).fs(FsErrorKind::NoSpace));
//! let error = env.fs.write_atomic(Path::new("/w/a"), b"x").await.unwrap_err();
//! assert_eq!(error.kind, FsErrorKind::NoSpace);
//! assert_eq!(error.path, Path::new("/w/a"));
//! // A fault fires once; the next write goes through.
//! env.fs.write_atomic(Path::new("/w/a"), b"x").await.unwrap();
//! assert_eq!(faulty.operations().len(), 3);
//! # }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo());
//! ```
//!
//! The port has no separate rename or fsync operation (both happen inside an
//! adapter's [`write_atomic`](crate::FileSystem::write_atomic)): a failed rename is a
//! `write_atomic` fault before the write, a failed final fsync one after it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::{Env, ExecError, FsError, FsErrorKind, SearchError};

mod ports;

pub use self::ports::{FaultyExec, FaultyFs, FaultySearch};

/// One call through a port, as counted and failed by the wrappers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// [`FileSystem::read`](crate::FileSystem::read).
    Read,
    /// [`FileSystem::read_range`](crate::FileSystem::read_range).
    ReadRange,
    /// [`FileSystem::open`](crate::FileSystem::open).
    Open,
    /// [`FileReader::read_chunk`](crate::FileReader::read_chunk) on a stream opened through the wrapper.
    ReadChunk,
    /// [`FileSystem::write_atomic`](crate::FileSystem::write_atomic) (temp file, write, fsync, rename).
    WriteAtomic,
    /// [`FileSystem::metadata`](crate::FileSystem::metadata).
    Metadata,
    /// [`FileSystem::symlink_metadata`](crate::FileSystem::symlink_metadata).
    SymlinkMetadata,
    /// [`FileSystem::read_dir`](crate::FileSystem::read_dir).
    ReadDir,
    /// [`FileSystem::canonicalize`](crate::FileSystem::canonicalize).
    Canonicalize,
    /// [`FileSystem::create_dir_all`](crate::FileSystem::create_dir_all).
    CreateDirAll,
    /// [`FileSystem::remove_file`](crate::FileSystem::remove_file).
    RemoveFile,
    /// [`Exec::exec`](crate::Exec::exec) (the spawn and the wait).
    Exec,
    /// [`Exec::create_output_log`](crate::Exec::create_output_log).
    CreateOutputLog,
    /// [`OutputLog::write_all`](crate::OutputLog::write_all) on a log created through the wrapper.
    OutputLogWrite,
    /// [`Search::grep`](crate::Search::grep).
    Grep,
    /// [`Search::find`](crate::Search::find).
    Find,
}

impl Operation {
    /// Every operation.
    pub const ALL: [Operation; 16] = [
        Operation::Read,
        Operation::ReadRange,
        Operation::Open,
        Operation::ReadChunk,
        Operation::WriteAtomic,
        Operation::Metadata,
        Operation::SymlinkMetadata,
        Operation::ReadDir,
        Operation::Canonicalize,
        Operation::CreateDirAll,
        Operation::RemoveFile,
        Operation::Exec,
        Operation::CreateOutputLog,
        Operation::OutputLogWrite,
        Operation::Grep,
        Operation::Find,
    ];

    /// The snake_case name (`read_range`, `write_atomic`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Operation::Read => "read",
            Operation::ReadRange => "read_range",
            Operation::Open => "open",
            Operation::ReadChunk => "read_chunk",
            Operation::WriteAtomic => "write_atomic",
            Operation::Metadata => "metadata",
            Operation::SymlinkMetadata => "symlink_metadata",
            Operation::ReadDir => "read_dir",
            Operation::Canonicalize => "canonicalize",
            Operation::CreateDirAll => "create_dir_all",
            Operation::RemoveFile => "remove_file",
            Operation::Exec => "exec",
            Operation::CreateOutputLog => "create_output_log",
            Operation::OutputLogWrite => "output_log_write",
            Operation::Grep => "grep",
            Operation::Find => "find",
        }
    }

    /// Whether the file-system port performs it.
    pub fn is_fs(self) -> bool {
        !self.is_exec() && !self.is_search()
    }

    /// Whether the process port performs it.
    pub fn is_exec(self) -> bool {
        matches!(
            self,
            Operation::Exec | Operation::CreateOutputLog | Operation::OutputLogWrite
        )
    }

    /// Whether the search port performs it.
    pub fn is_search(self) -> bool {
        matches!(self, Operation::Grep | Operation::Find)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error an injected fault produces. Each is turned into the error type
/// of the port that failed: a file-system kind on an exec operation becomes
/// [`ExecError::Io`], on a search operation [`SearchError::Fs`]; an exec or
/// search error on a file-system operation becomes [`FsErrorKind::Other`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultError {
    /// A file-system error of this kind about the operation's path.
    Fs(FsErrorKind),
    /// [`ExecError::MissingCwd`] for the request's working directory.
    MissingCwd,
    /// [`ExecError::ShellNotFound`] for the request's program.
    ShellNotFound,
    /// [`ExecError::Spawn`] with this OS message.
    Spawn(String),
    /// [`ExecError::Io`] with this message.
    ExecIo(String),
    /// [`ExecError::Unsupported`].
    ExecUnsupported,
    /// [`SearchError::NotFound`] for the search root.
    SearchNotFound,
    /// [`SearchError::Cancelled`].
    SearchCancelled,
}

impl FaultError {
    /// The file-system kinds a real adapter produces for I/O failures.
    pub const FS_KINDS: [FsErrorKind; 8] = [
        FsErrorKind::NotFound,
        FsErrorKind::PermissionDenied,
        FsErrorKind::NotADirectory,
        FsErrorKind::IsADirectory,
        FsErrorKind::NoSpace,
        FsErrorKind::ReadOnly,
        FsErrorKind::SymlinkLoop,
        FsErrorKind::Other,
    ];

    /// The exec failures a real adapter produces.
    pub fn exec_errors() -> Vec<FaultError> {
        vec![
            FaultError::MissingCwd,
            FaultError::ShellNotFound,
            FaultError::Spawn("Resource temporarily unavailable (os error 11)".to_owned()),
            FaultError::ExecIo("Broken pipe (os error 32)".to_owned()),
            FaultError::ExecUnsupported,
            FaultError::Fs(FsErrorKind::NoSpace),
        ]
    }

    /// The search failures a real adapter produces.
    pub fn search_errors() -> Vec<FaultError> {
        vec![
            FaultError::SearchNotFound,
            FaultError::SearchCancelled,
            FaultError::Fs(FsErrorKind::PermissionDenied),
            FaultError::Fs(FsErrorKind::Other),
        ]
    }

    fn fs_error(&self, path: &Path) -> FsError {
        match self {
            FaultError::Fs(kind) => {
                let error = FsError::new(*kind, path);
                // A real adapter gives `Other` the OS message.
                match kind {
                    FsErrorKind::Other => error.with_detail("Input/output error (os error 5)"),
                    _ => error,
                }
            }
            other => FsError::new(FsErrorKind::Other, path).with_detail(other.to_string()),
        }
    }

    fn exec_error(&self, program: &Path, cwd: &Path) -> ExecError {
        match self {
            FaultError::MissingCwd => ExecError::MissingCwd(cwd.to_path_buf()),
            FaultError::ShellNotFound => ExecError::ShellNotFound(program.to_path_buf()),
            FaultError::Spawn(message) => ExecError::Spawn {
                program: program.to_path_buf(),
                message: message.clone(),
            },
            FaultError::ExecIo(message) => ExecError::Io(message.clone()),
            FaultError::ExecUnsupported => ExecError::Unsupported,
            other => ExecError::Io(format!("{}: {}", program.display(), other)),
        }
    }

    fn search_error(&self, root: &Path) -> SearchError {
        match self {
            FaultError::SearchNotFound => SearchError::NotFound(root.to_path_buf()),
            FaultError::SearchCancelled => SearchError::Cancelled,
            other => SearchError::Fs(other.fs_error(root)),
        }
    }
}

impl fmt::Display for FaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultError::Fs(kind) => f.write_str(kind.code()),
            FaultError::MissingCwd => f.write_str("missing working directory"),
            FaultError::ShellNotFound => f.write_str("shell not found"),
            FaultError::Spawn(message) => write!(f, "spawn failed: {message}"),
            FaultError::ExecIo(message) => write!(f, "output failed: {message}"),
            FaultError::ExecUnsupported => f.write_str("exec unsupported"),
            FaultError::SearchNotFound => f.write_str("search root not found"),
            FaultError::SearchCancelled => f.write_str("search cancelled"),
        }
    }
}

/// Whether the failing operation's work is done before the error is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// The wrapped adapter is not called (a failed open, a failed rename).
    Before,
    /// The wrapped adapter runs, then the error replaces its result (a write
    /// that landed but whose final fsync failed).
    After,
}

/// A planned failure: which operations it watches, which of them (the n-th)
/// fails, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    operations: Vec<Operation>,
    nth: u64,
    error: FaultError,
    timing: Timing,
    persistent: bool,
}

impl Fault {
    /// Fails the first `operation` (change it with [`nth`](Fault::nth)) with
    /// [`FsErrorKind::Other`] (change it with [`error`](Fault::error)).
    pub fn on(operation: Operation) -> Fault {
        Fault::on_any(&[operation])
    }

    /// Watches several operations together; an empty slice watches every one.
    pub fn on_any(operations: &[Operation]) -> Fault {
        Fault {
            operations: operations.to_vec(),
            nth: 1,
            error: FaultError::Fs(FsErrorKind::Other),
            timing: Timing::Before,
            persistent: false,
        }
    }

    /// Fails the n-th watched operation (1-based; 0 is taken as 1).
    pub fn nth(mut self, n: u64) -> Fault {
        self.nth = n.max(1);
        self
    }

    /// The error to fail with.
    pub fn error(mut self, error: FaultError) -> Fault {
        self.error = error;
        self
    }

    /// Shorthand for `error(FaultError::Fs(kind))`.
    pub fn fs(self, kind: FsErrorKind) -> Fault {
        self.error(FaultError::Fs(kind))
    }

    /// Runs the failing operation before reporting the error.
    pub fn after(mut self) -> Fault {
        self.timing = Timing::After;
        self
    }

    /// Fails every watched operation from the n-th on, not only the n-th.
    pub fn persistent(mut self) -> Fault {
        self.persistent = true;
        self
    }

    fn watches(&self, operation: Operation) -> bool {
        self.operations.is_empty() || self.operations.contains(&operation)
    }
}

/// An armed fault and how many watched operations it has seen.
#[derive(Debug)]
struct Armed {
    fault: Fault,
    seen: u64,
}

/// A fault that fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fired {
    /// The operation that failed.
    pub operation: Operation,
    /// The path it concerned: the file or directory; for [`Operation::Exec`]
    /// the program; for a search its root.
    pub path: PathBuf,
    /// The injected error.
    pub error: FaultError,
}

#[derive(Debug, Default)]
struct State {
    armed: Vec<Armed>,
    log: Vec<Operation>,
    fired: Vec<Fired>,
}

/// The shared handle of a set of faulty wrappers: arms faults and records
/// every operation. Cheap to clone; clones share the state.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    state: Arc<Mutex<State>>,
}

impl Faults {
    /// No faults armed, nothing recorded.
    pub fn new() -> Faults {
        Faults::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Arms a fault; it counts operations from now on.
    pub fn inject(&self, fault: Fault) {
        self.lock().armed.push(Armed { fault, seen: 0 });
    }

    /// Disarms every fault and forgets the recorded operations.
    pub fn reset(&self) {
        let mut state = self.lock();
        state.armed.clear();
        state.log.clear();
        state.fired.clear();
    }

    /// Every operation since the last [`reset`](Faults::reset), in call order.
    pub fn operations(&self) -> Vec<Operation> {
        self.lock().log.clone()
    }

    /// The faults that fired since the last reset, in order.
    pub fn fired(&self) -> Vec<Fired> {
        self.lock().fired.clone()
    }

    /// Records `operation`; returns the error to fail it with, if a fault selects it.
    fn check(&self, operation: Operation, path: &Path) -> Option<(FaultError, Timing)> {
        let mut state = self.lock();
        state.log.push(operation);
        let mut hit = None;
        for armed in state.armed.iter_mut() {
            if !armed.fault.watches(operation) {
                continue;
            }
            armed.seen += 1;
            let fires = armed.seen == armed.fault.nth
                || (armed.fault.persistent && armed.seen > armed.fault.nth);
            if fires && hit.is_none() {
                hit = Some((armed.fault.error.clone(), armed.fault.timing));
            }
        }
        if let Some((error, _)) = &hit {
            state.fired.push(Fired {
                operation,
                path: path.to_path_buf(),
                error: error.clone(),
            });
        }
        hit
    }
}

/// An [`Env`] whose three ports are wrapped by [`FaultyFs`], [`FaultyExec`]
/// and [`FaultySearch`] sharing one [`Faults`].
#[derive(Clone, Debug)]
pub struct FaultyEnv {
    faults: Faults,
    env: Env,
}

impl FaultyEnv {
    /// Wraps every port of `inner`.
    pub fn new(inner: Env) -> FaultyEnv {
        let faults = Faults::new();
        let env = Env {
            fs: Arc::new(FaultyFs::new(inner.fs, faults.clone())),
            exec: Arc::new(FaultyExec::new(inner.exec, faults.clone())),
            search: Arc::new(FaultySearch::new(inner.search, faults.clone())),
        };
        FaultyEnv { faults, env }
    }

    /// The wrapped environment to hand to the code under test.
    pub fn env(&self) -> Env {
        self.env.clone()
    }

    /// The shared fault handle.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Arms a fault (see [`Faults::inject`]).
    pub fn inject(&self, fault: Fault) {
        self.faults.inject(fault);
    }

    /// Disarms every fault and forgets the log (see [`Faults::reset`]).
    pub fn reset(&self) {
        self.faults.reset();
    }

    /// The operations since the last reset (see [`Faults::operations`]).
    pub fn operations(&self) -> Vec<Operation> {
        self.faults.operations()
    }
}

#[cfg(test)]
#[path = "fault_tests.rs"]
mod tests;
