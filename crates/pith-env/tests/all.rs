//! Integration tests of pith-env, one module per area.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

mod conformance;
mod exec;
mod exec_local;
mod sandbox;
mod search;

/// The adapter the exec and search suites run against: LocalEnv here (the pith
/// crate's remote tests include the same suites with a RemoteEnv).
mod port {
    pub(crate) type Env = pith_env::LocalEnv;

    pub(crate) async fn env() -> Env {
        pith_env::LocalEnv::new()
    }
}
