//! Cgroups are Linux's: outside Linux no command tree gets a leaf, and the
//! process group and the environment marker (`escapees`) are all there is.
//! The same functions as `cgroup.rs`, doing nothing.

use std::path::Path;

use tokio::process::Command;

/// No directory for leaves.
pub(crate) fn base() -> Option<&'static Path> {
    None
}

/// No leaf to enter.
pub(super) fn enter_on_spawn(_command: &mut Command, _tree: &str) {}

/// No leaf to read.
pub(super) fn kill_outside_group(_tree: &str, _pgid: i32) {}

/// No leaves to kill.
pub(super) fn kill_all(_prefix: &str) {}

/// No leaf to remove.
pub(super) fn remove(_tree: &str) {}

/// Command trees get no cgroup leaves here.
pub(crate) fn available() -> bool {
    false
}
