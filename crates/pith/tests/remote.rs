//! Remote environments: RemoteEnv against `pith serve --stdio` started through a
//! transport command (`env`, the same machine; a real sshd in `remote/ssh.rs`).
//!
//! - `ports`: the file-system conformance suite and the exec and search ports,
//!   each compared with LocalEnv on the same files;
//! - `cli`: `--remote` on `call` and `batch` gives the same results as local;
//!   installing the far pith (upload, cache, refusal, wrong checksum);
//! - `faults`: the connection lost mid-write and mid-command, and reconnecting;
//! - `streamed`: writes streamed into the far temp file: dropped mid-stream, a full far disk;
//! - `env_exec`, `env_search`: pith-env's exec and search suites (the files
//!   `crates/pith-env/tests/{exec,search}.rs`, included as they are) with a
//!   RemoteEnv over `env` as the adapter ([`port`]).
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

mod cli;
#[path = "../../pith-env/tests/exec.rs"]
mod env_exec;
#[path = "../../pith-env/tests/search.rs"]
mod env_search;
mod faults;
mod mcp;
mod ports;
mod ssh;
mod streamed;

use std::path::PathBuf;

use pith_env::RemoteEnv;
use pith_env::remote::{FarPith, RemoteOptions, RemotePolicy};

/// The adapter pith-env's exec and search suites run against here: a fresh
/// RemoteEnv over `env` per test (each test has its own runtime).
mod port {
    pub(crate) type Env = pith_env::RemoteEnv;

    pub(crate) async fn env() -> Env {
        super::connect("env").await
    }
}

/// The pith under test.
pub(crate) fn pith_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pith"))
}

/// A RemoteEnv over `prefix`, running this build's pith on the far side.
pub(crate) async fn connect(prefix: &str) -> RemoteEnv {
    RemoteEnv::connect(RemoteOptions {
        prefix: prefix.to_owned(),
        far_pith: FarPith::Path(pith_exe()),
        policy: RemotePolicy::default(),
    })
    .await
    .unwrap()
}

/// The ids of the live processes whose parent is `pid`.
pub(crate) fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // The fields after the command name (which may hold spaces): state, ppid, ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or_default();
        if state != "Z" && fields.next().and_then(|p| p.parse().ok()) == Some(pid) {
            found.push(child);
        }
    }
    found
}

/// Whether a live process's command line contains `marker`.
pub(crate) fn process_with(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        let mut cmdline = std::fs::read(format!("/proc/{name}/cmdline")).unwrap_or_default();
        // Arguments are NUL-separated: `sleep\0100` reads as `sleep 100`.
        for byte in &mut cmdline {
            if *byte == 0 {
                *byte = b' ';
            }
        }
        let state = std::fs::read_to_string(format!("/proc/{name}/stat")).unwrap_or_default();
        let zombie = state
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
    })
}
