//! Processes that left their command's process group (`setsid`, `setpgid`): found
//! by an environment variable every command's tree inherits, and killed with it.
//!
//! Each command gets `PITH_TREE_ID=<adapter id>-<call number>`. A descendant that
//! starts a new session or group leaves the group kill behind, and a double fork
//! re-parents it away from the shell, but it keeps its environment: on timeout,
//! cancel and shutdown, `/proc/*/environ` is scanned for the variable and every
//! marked process outside the group is SIGKILLed. Not caught: a process that
//! clears or rewrites its environment (`env -i`, `exec -c`), or one of another
//! user whose environment cannot be read. Where the tree has a cgroup leaf
//! (`cgroup`), its members are killed too, whatever their environment.

use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(target_os = "linux")]
use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, getpgid};

/// The variable that marks a command's whole tree.
pub(super) const TREE_VAR: &str = "PITH_TREE_ID";

/// Rounds of scan-and-kill: an escapee may fork while it is being killed.
#[cfg(target_os = "linux")]
const ROUNDS: usize = 4;

/// Hands out the tree ids of one adapter.
#[derive(Debug)]
pub(super) struct TreeIds {
    adapter: u64,
    next: AtomicU64,
}

impl Default for TreeIds {
    fn default() -> TreeIds {
        TreeIds {
            adapter: rand::random(),
            next: AtomicU64::new(1),
        }
    }
}

impl TreeIds {
    /// A new id for one command's tree.
    pub(super) fn next(&self) -> String {
        let call = self.next.fetch_add(1, Ordering::Relaxed);
        format!("{}{call}", self.prefix())
    }

    /// Whether any id was handed out (else no process carries one of ours).
    pub(super) fn issued(&self) -> bool {
        self.next.load(Ordering::Relaxed) > 1
    }

    /// What every id of this adapter starts with.
    pub(super) fn prefix(&self) -> String {
        format!("{:016x}-", self.adapter)
    }
}

/// SIGKILLs every process marked with exactly `tree` that is not in group `pgid`
/// (the group itself is signalled by the caller, with its own grace).
pub(super) fn kill_escapees(tree: &str, pgid: i32) {
    super::cgroup::kill_outside_group(tree, pgid);
    let value = format!("{TREE_VAR}={tree}\0");
    kill_matching(|environ, pid| {
        contains(environ, value.as_bytes())
            && getpgid(Some(Pid::from_raw(pid))).map_or(true, |group| group.as_raw() != pgid)
    });
}

/// SIGKILLs every process marked with an id starting with `prefix`.
pub(super) fn kill_all_marked(prefix: &str) {
    super::cgroup::kill_all(prefix);
    let needle = format!("{TREE_VAR}={prefix}");
    kill_matching(|environ, _| {
        environ
            .split(|&byte| byte == 0)
            .any(|entry| entry.starts_with(needle.as_bytes()))
    });
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(target_os = "linux")]
fn kill_matching(matches: impl Fn(&[u8], i32) -> bool) {
    let me = std::process::id() as i32;
    for _ in 0..ROUNDS {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        let mut killed = 0;
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            // Unreadable (another user's, or gone): not ours to kill.
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if matches(&environ, pid) && kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
                killed += 1;
            }
        }
        if killed == 0 {
            return;
        }
    }
}

/// Without `/proc` escapees are not found.
#[cfg(not(target_os = "linux"))]
fn kill_matching(_matches: impl Fn(&[u8], i32) -> bool) {}
