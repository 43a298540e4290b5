//! Integration tests of pith-env, one module per area.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

mod conformance;
mod exec;
mod sandbox;
mod search;
