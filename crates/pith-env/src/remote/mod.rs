//! [`RemoteEnv`]: the ports of another machine, container or pod, reached
//! through any command that runs its arguments there, and [`serve`], the far
//! side (`pith serve --stdio`).
//!
//! The near side starts `sh -c '<prefix> "$@"' - <far command>` locally, so
//! the prefix is any transport: `ssh -T dev@box`, `docker exec -i app`,
//! `kubectl exec -i pod/agent-7 --`, or `env` (this machine). The far command
//! is either a given pith (`<path> serve --stdio`) or `sh` fed the
//! [`bootstrap_script`], which runs the cached `~/.cache/pith/<version>/pith`
//! or receives this pith's executable, checks its SHA-256 and runs it.
//!
//! Then both sides speak the protocol in [`wire`](self): length-prefixed
//! postcard frames, a versioned handshake carrying the policy, requests
//! multiplexed by id, streams (file reads, command output) with credit-based
//! backpressure, and cancellation that kills the far process tree. The
//! protocol is written down in docs/remote.md.

mod client;
mod conn;
mod server;
mod streams;
mod wire;

use std::path::PathBuf;

pub use client::RemoteEnv;
pub use server::{serve, serve_stdio};
pub use wire::PROTOCOL_VERSION;

use crate::{SandboxMode, SandboxPolicy};

/// How to reach the far side.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// The transport command prefix, run by `sh -c` (e.g. `ssh -T dev@box`).
    pub prefix: String,
    /// Which pith runs on the far side.
    pub far_pith: FarPith,
    /// The policy sent in the handshake.
    pub policy: RemotePolicy,
}

/// Which pith runs on the far side.
#[derive(Clone, Debug)]
pub enum FarPith {
    /// This executable on the far side (`--remote-pith PATH`).
    Path(PathBuf),
    /// The cached `~/.cache/pith/<version>/pith` there; when it is missing and
    /// `upload` is set, `executable` (this pith) is uploaded through the
    /// transport when the far OS and architecture match.
    Install {
        /// Whether uploading is allowed (`--no-remote-install` clears it).
        upload: bool,
        /// The executable to upload (normally this process's own).
        executable: PathBuf,
    },
}

/// The policy the far side is told about in the handshake. Paths are far
/// paths as the user gave them: the far side expands `~`, resolves them,
/// checks they are directories (refusing the connection otherwise), and
/// answers with the resolved values ([`RemoteInfo`]), which the near side's
/// tools then use. The far side runs every command in at least the sandbox
/// these flags ask for (Landlock and seccomp there); path containment is
/// enforced there too, by directory handles, through the confined views the
/// tools make of the [`RemoteEnv`] (each call carries its view; see
/// docs/remote.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemotePolicy {
    /// The working directory (default: the far user's home).
    pub cwd: Option<PathBuf>,
    /// Workspace roots (`--root`).
    pub roots: Vec<PathBuf>,
    /// Whether the cwd is a root too (`pith mcp` contains to its cwd).
    pub cwd_is_root: bool,
    /// Protected globs (`--protect`).
    pub protected: Vec<String>,
    /// `--contain-reads`.
    pub contain_reads: bool,
    /// `--sandbox`.
    pub sandbox_mode: SandboxMode,
    /// With `sandbox_mode` off: use workspace-write where the far kernel has
    /// Landlock (`pith mcp`'s default).
    pub auto_sandbox: bool,
    /// `--deny-network`.
    pub deny_network: bool,
    /// `--allow-unsandboxed`.
    pub run_unsandboxed: bool,
}

/// What the far side said about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteInfo {
    /// Its pith version.
    pub pith_version: String,
    /// Its OS (`linux`).
    pub os: String,
    /// Its architecture (`x86_64`).
    pub arch: String,
    /// Its user's home directory.
    pub home: Option<PathBuf>,
    /// Its kernel's Landlock ABI, when it has Landlock.
    pub landlock_abi: Option<i32>,
    /// The working directory, resolved there.
    pub cwd: PathBuf,
    /// The workspace roots, resolved there (the cwd first when it is one).
    pub roots: Vec<PathBuf>,
    /// The sandbox every command runs in at least.
    pub sandbox: SandboxPolicy,
}

/// Connecting failed: which remote, and what happened (with what to do).
#[derive(Clone, Debug, thiserror::Error)]
#[error("remote `{remote}`: {message}")]
pub struct RemoteError {
    /// The transport prefix.
    pub remote: String,
    /// What happened.
    pub message: String,
}

/// The far side's installer, fed to `sh` on its stdin. It prints
/// `PITH-EXEC` and execs the cached pith; or prints `PITH-MISSING <uname -sm>`
/// and reads `upload <size> <sha256>` and the bytes (or `abort`), checks the
/// checksum (`PITH-BADSUM <got>`, nothing installed, on a mismatch), installs
/// and execs it. The whole script is one compound command, so the shell has
/// read all of it before anything else arrives on stdin.
pub fn bootstrap_script(version: &str) -> String {
    format!(
        r#"{{ d="${{HOME:?}}/.cache/pith/{version}"; p="$d/pith"
if [ -x "$p" ]; then echo PITH-EXEC; exec "$p" serve --stdio; fi
echo "PITH-MISSING $(uname -sm)"
read -r cmd size sum || exit 3
[ "$cmd" = upload ] || exit 3
mkdir -p "$d" || exit 4
t="$d/.pith.upload.$$"
head -c "$size" > "$t" || {{ rm -f "$t"; exit 4; }}
got=$(sha256sum "$t" | cut -d' ' -f1)
if [ "$got" != "$sum" ]; then rm -f "$t"; echo "PITH-BADSUM $got"; exit 5; fi
chmod 755 "$t" && mv -f "$t" "$p" || {{ rm -f "$t"; exit 4; }}
echo PITH-EXEC; exec "$p" serve --stdio
}}
"#
    )
}

/// `uname -sm` output (`Linux x86_64`) as Rust's OS and architecture names.
fn uname_platform(uname: &str) -> (String, String) {
    let mut words = uname.split_whitespace();
    let os = words.next().unwrap_or_default().to_lowercase();
    let arch = match words.next().unwrap_or_default() {
        "arm64" => "aarch64".to_owned(),
        "amd64" => "x86_64".to_owned(),
        other => other.to_owned(),
    };
    let os = if os == "darwin" {
        "macos".to_owned()
    } else {
        os
    };
    (os, arch)
}

/// The lowercase hex SHA-256 of `bytes`, as `sha256sum` prints it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    use std::fmt::Write;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uname_names_map_to_rust_names() {
        assert_eq!(
            uname_platform("Linux x86_64"),
            ("linux".to_owned(), "x86_64".to_owned())
        );
        assert_eq!(
            uname_platform("Darwin arm64"),
            ("macos".to_owned(), "aarch64".to_owned())
        );
    }

    #[test]
    fn sha256_matches_the_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
