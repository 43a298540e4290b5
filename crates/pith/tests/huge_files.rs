//! Tests that move GiB-scale data (2 GiB of bash output, a 1 GiB grep), in a test
//! binary of their own: cargo runs test binaries one after another, so this I/O never
//! competes with the tests in `all` that bound time or synchronise with processes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

mod bash;
mod search;
#[allow(dead_code, reason = "this binary uses only some of the shared helpers")]
mod support;
