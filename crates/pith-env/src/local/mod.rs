//! [`LocalEnv`]: the ports on this machine.

mod exec;

pub(crate) use exec::tree_cgroups_available;
pub use exec::{OUTPUT_CAP, output_dir, prune_output_dir};
pub(crate) mod fs;
mod search;

/// The file system, processes and search of this machine.
///
/// File writes are atomic (temp file in the same directory, fsync, rename;
/// see `fs/temp.rs` for where the temp file is named);
/// commands run in their own process group and are killed with their whole
/// tree; search runs ripgrep's library crates in process.
#[derive(Debug, Default)]
pub struct LocalEnv {
    processes: exec::ProcessTable,
}

impl LocalEnv {
    /// A local environment.
    pub fn new() -> LocalEnv {
        LocalEnv::default()
    }
}

/// The user's state directory: `$XDG_STATE_HOME`, or `~/.local/state` when it
/// is unset or empty; `None` without either. pith keeps its undo journal and
/// the staging directory of its atomic writes under `pith/` there.
pub fn state_dir() -> Option<std::path::PathBuf> {
    match std::env::var_os("XDG_STATE_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) => Some(dir.into()),
        None => Some(std::path::PathBuf::from(std::env::var_os("HOME")?).join(".local/state")),
    }
}
