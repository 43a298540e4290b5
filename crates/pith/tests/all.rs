//! Integration tests of the pith command line, one module per area.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

mod bash_files;
mod bounds;
mod cli;
mod containment;
mod encodings;
mod file_tools;
mod file_tools_stress;
mod history;
mod jobs;
mod mcp;
mod promises;
mod race;
mod reliability;
mod remote;
mod safety;
mod sandbox_escapes;
mod special_files;
mod stale;
#[allow(dead_code, reason = "huge_files uses the rest of the shared helpers")]
mod support;
mod watchdog;
