//! Integration tests of the pith command line, one module per area.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

mod bash;
mod search;
mod cli;
mod mcp;
