//! Test support shared by pith's crates.
//!
//! A test that cannot run on this machine (no Landlock, not root, no `chattr`)
//! must not pass silently. It calls [`skip`], which
//!
//! - prints `SKIPPED <test>: <reason>` to stderr,
//! - appends `<test>\t<prerequisite>\t<reason>` to the file named by
//!   `PITH_SKIP_LOG` (the test command sets it, counts the lines and prints
//!   them in its summary), and
//! - panics when the prerequisite is listed in `PITH_PRESENT` (a comma-separated
//!   list of [`Prerequisite::key`]s the test command verified on this machine):
//!   a skip where the prerequisite exists is a failure, not a skip.
//!
//! ```no_run
//! use pith_testkit::{Prerequisite, skip};
//! fn landlock_here() -> bool { false }
//! #[test]
//! fn sandboxed() {
//!     if !landlock_here() {
//!         return skip("sandboxed", Prerequisite::Landlock, "Landlock is not available on this kernel");
//!     }
//!     // ...
//! }
//! ```

use std::io::Write;

/// Something a test needs from the machine it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prerequisite {
    /// Landlock in the running kernel.
    Landlock,
    /// Running as root (uid 0).
    Root,
    /// Running as a user other than root (root bypasses permission checks).
    NotRoot,
    /// `chattr +i` works on the temp directory's file system.
    Chattr,
    /// Unprivileged user and mount namespaces.
    UserNamespaces,
    /// An OpenSSH server (`sshd`) and client (`ssh`) are installed.
    Ssh,
    /// A Python interpreter with the packages the test needs.
    Python,
    /// A cgroup v2 directory where this process may create a child cgroup
    /// and move processes into it (root, or a delegated subtree).
    Cgroup2,
    /// The cgroup v1 pids controller (`/sys/fs/cgroup/pids`), where this
    /// process may create a child cgroup, set its `pids.max` and move
    /// processes into it (root).
    Pids,
    /// Anything else; the key is `other`.
    Other,
}

impl Prerequisite {
    /// The name the test command uses for this prerequisite in `PITH_PRESENT`.
    pub fn key(self) -> &'static str {
        match self {
            Prerequisite::Landlock => "landlock",
            Prerequisite::Root => "root",
            Prerequisite::NotRoot => "not-root",
            Prerequisite::Chattr => "chattr",
            Prerequisite::UserNamespaces => "userns",
            Prerequisite::Ssh => "ssh",
            Prerequisite::Python => "python",
            Prerequisite::Cgroup2 => "cgroup2",
            Prerequisite::Pids => "pids",
            Prerequisite::Other => "other",
        }
    }
}

/// Records that `test` did not run because `prerequisite` is missing; see the crate docs.
///
/// # Panics
///
/// When `PITH_PRESENT` lists the prerequisite: the test command checked that it exists,
/// so the test should have run.
#[allow(
    clippy::print_stderr,
    reason = "a skip must be visible in the test's output"
)]
pub fn skip(test: &str, prerequisite: Prerequisite, reason: &str) {
    let key = prerequisite.key();
    let present = std::env::var("PITH_PRESENT").unwrap_or_default();
    if present.split(',').any(|item| item.trim() == key) {
        panic!(
            "{test} would be skipped ({reason}), but the test command found `{key}` on this machine"
        );
    }
    eprintln!("SKIPPED {test}: {reason}");
    if let Some(path) = std::env::var_os("PITH_SKIP_LOG") {
        let line = format!("{test}\t{key}\t{}\n", reason.replace(['\t', '\n'], " "));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(line.as_bytes()));
        if let Err(error) = written {
            panic!("{test}: could not record the skip in PITH_SKIP_LOG: {error}");
        }
    }
}
