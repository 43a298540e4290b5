//! Integration tests of the pith command line, one module per area.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

mod cli;
mod file_tools;
mod file_tools_stress;
mod mcp;
mod promises;
mod reliability;
mod safety;
#[allow(dead_code, reason = "huge_files uses the rest of the shared helpers")]
mod support;
mod watchdog;
