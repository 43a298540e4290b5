//! Integration tests of the pith command line, one module per area.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

mod bash;
mod cli;
mod file_tools;
mod file_tools_stress;
mod mcp;
mod reliability;
mod remote;
mod safety;
mod search;
mod support;
mod watchdog;
