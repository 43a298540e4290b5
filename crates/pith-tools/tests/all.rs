//! Integration tests of pith-tools on real files and processes, one module per area.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

mod bash;
mod faults;
mod file_tools;
mod file_tools_edit;
mod file_tools_ls;
mod file_tools_write;
mod history;
mod hook_reentry;
mod jobs;
mod pipeline;
mod safety;
mod search_tools;
mod snapshots;
mod undo_hooks;
mod wording;
