//! The seven pith tools: `read`, `write`, `edit`, `bash`, `grep`, `find`, `ls`.
//!
//! A [`ToolSet`] holds the tools, their configuration, the execution
//! environment ([`pith_env::Env`]) and the file mutation queue. A [`Session`]
//! is one conversation's view of it (the overwrite policy's read tracking
//! lives there). Tools take the JSON arguments a model produced, repair and
//! validate them, run, and return a [`ToolResult`]: `content` for the model,
//! `details` for a user interface.
//!
//! ```
//! # async fn demo() {
//! use pith_env::{Env, MemoryEnv};
//! use pith_tools::{CallOptions, ToolSet};
//!
//! let tools = ToolSet::builder(Env::memory(MemoryEnv::new())).cwd("/").build();
//! let session = tools.session();
//! let result = session
//!     .call("nope", serde_json::json!({}), CallOptions::default())
//!     .await;
//! assert!(result.is_error);
//! # }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo());
//! ```
//!
//! Memory stays bounded for every input (big files, image bombs, heavy regexes);
//! the bounds and their measured figures (`bench/bounds/run`: a 1 GiB exact edit
//! in 1.93x a `cp` of the file at 11.6 MiB RSS) are in the repository's
//! docs/bounds.md.

/// The README, whose library example runs as a doc test so that it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExample;

mod args;
mod beside;
mod call;
pub mod details;
mod hooks;
mod jobs;
mod journal;
mod messages;
mod paths;
mod policy;
mod queue;
mod session;
mod stale;
mod textfile;
mod tool;
mod tools;
mod toolset;

pub use crate::args::{ArgsError, parse_args, schema_of};
pub use crate::hooks::{HookCall, HookDecision, Hooks, ToolHooks};
pub use crate::jobs::{DEFAULT_MAX_JOBS, JobListener};
pub use crate::journal::{
    CallTag, DEFAULT_FILE_CAP, DEFAULT_TOTAL_CAP, EntryStatus, FileState, Journal, JournalEntry,
    JournalError, JournalLimits, ListedEntry, UndoFile, UndoOptions, UndoOutcome, UndoReport,
    UndoSelector, new_group_id, parse_since,
};
pub use crate::paths::{resolve_path, resolve_read_path};
pub use crate::policy::{Access, WorkspacePolicy};
pub use crate::queue::{MutationGuard, MutationQueue, Ticket, yield_after_turn};
pub use crate::session::{OverwritePolicy, Session};
pub use crate::tool::{
    CallOptions, Content, ErrorKind, QueueUse, Tool, ToolAnnotations, ToolContext, ToolDefinition,
    ToolError, ToolOutput, ToolResult, ToolUpdate, UpdateFn,
};
pub use crate::tools::{
    BashConfig, DEFAULT_ENV, OPTIONAL_TOOL_NAMES, ReadConfig, SpawnHook, SpawnRequest, TOOL_NAMES,
};
pub use crate::toolset::{ToolConfig, ToolSet, ToolSetBuilder};
