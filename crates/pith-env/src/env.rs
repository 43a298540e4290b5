//! [`Env`]: one adapter per port, shared by every tool call.

use std::fmt;
use std::sync::Arc;

use crate::{Exec, FileSystem, LocalEnv, MemoryEnv, Search};

/// The execution environment a tool runs against: a file system, a process
/// runner and a searcher. Cheap to clone.
#[derive(Clone)]
pub struct Env {
    /// File-system port.
    pub fs: Arc<dyn FileSystem>,
    /// Process port.
    pub exec: Arc<dyn Exec>,
    /// Search port.
    pub search: Arc<dyn Search>,
}

impl Env {
    /// All three ports on this machine.
    pub fn local() -> Env {
        let local = Arc::new(LocalEnv::new());
        Env {
            fs: local.clone(),
            exec: local.clone(),
            search: local,
        }
    }

    /// All three ports over one in-memory file system (exec is unsupported).
    pub fn memory(memory: MemoryEnv) -> Env {
        let memory = Arc::new(memory);
        Env {
            fs: memory.clone(),
            exec: memory.clone(),
            search: memory,
        }
    }
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Env").finish_non_exhaustive()
    }
}
