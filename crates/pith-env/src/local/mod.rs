//! [`LocalEnv`]: the ports on this machine.

mod exec;

pub(crate) use exec::tree_cgroups_available;
pub use exec::{OUTPUT_CAP, output_dir, prune_output_dir};
pub(crate) mod fs;
mod search;

/// The file system, processes and search of this machine.
///
/// File writes are atomic (temp file in the same directory, fsync, rename);
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
