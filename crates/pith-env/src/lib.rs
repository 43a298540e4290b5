//! Ports and adapters for pith.
//!
//! Every byte the pith tools read or write, every process they start and every
//! search they run goes through the ports defined here:
//!
//! - [`FileSystem`]: read (whole, ranged, streamed), write atomically, stat,
//!   list, realpath, create directories.
//! - [`Exec`]: spawn a command in its own process group, stream its output,
//!   kill its whole tree on timeout, cancel or exit.
//! - [`Search`]: content search (grep) and file finding (glob) with
//!   `.gitignore` rules, on ripgrep's own library crates locally.
//!
//! [`Env`] bundles one adapter for each port. Adapters:
//! [`LocalEnv`] (this machine) and [`MemoryEnv`] (an in-memory file system
//! for unit tests of the tools).
//!
//! ```
//! # async fn demo() -> Result<(), pith_env::FsError> {
//! use std::path::Path;
//! use pith_env::{FileSystem, MemoryEnv};
//!
//! let fs = MemoryEnv::new();
//! fs.create_dir_all(Path::new("/work")).await?;
//! fs.write_atomic(Path::new("/work/a.txt"), b"hello\n").await?;
//! assert_eq!(fs.read(Path::new("/work/a.txt")).await?, b"hello\n");
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```

mod budget;
mod env;
mod error;
mod exec;
pub mod fault;
mod fs;
mod local;
mod matcher;
mod memory;
pub mod remote;
mod sandbox;
mod search;
mod write_rules;
mod write_stream;

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;

pub use crate::budget::{MemoryBudget, Reservation};
pub use crate::env::Env;
pub use crate::error::{ExecError, FsError, FsErrorKind, SearchError};
pub use crate::exec::{
    Exec, ExecOutcome, ExecRequest, ExitStatus, OutputLog, OutputSink, OutputStream, ProcessInput,
    StdinMode, Termination,
};
pub use crate::fs::{
    Confinement, DirEntry, DirKey, DirPage, FileId, FileKind, FileReader, FileSystem, FirstEntries,
    LineCount, Metadata, Splice,
};
pub use crate::local::{LocalEnv, OUTPUT_CAP, output_dir, prune_output_dir, state_dir};
pub use crate::memory::MemoryEnv;
pub use crate::remote::RemoteEnv;
pub use crate::sandbox::{SandboxFallback, SandboxMode, SandboxPolicy, SandboxStatus};
pub use crate::search::{
    BinaryFile, FindEntry, FindOutput, FindRequest, GrepLine, GrepOutput, GrepRequest, Search,
};
pub use crate::write_rules::{ProtectGlob, WriteRules, git_reason};
pub use crate::write_stream::{WriteStream, WriteStreamSender};

/// Re-exported so callers can build the cancellation tokens the ports take.
pub use tokio_util::sync::CancellationToken;
