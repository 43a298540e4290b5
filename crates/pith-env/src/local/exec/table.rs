//! [`ProcessTable`]: the process groups the local adapter started.

use std::collections::HashMap;
use std::io;
use std::sync::{Mutex, MutexGuard, PoisonError};

use nix::sys::signal::Signal;
use tokio::process::{Child, Command};

use super::escapees::{self, TreeIds};
use super::unix;

/// Where a tracked group stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// Its leader (our direct child) runs or is not reaped yet; tokio reaps it.
    Running,
    /// The call returned but background members (`sleep 100 &`) remain.
    Background,
}

/// The live process groups this adapter started, keyed by group id (the pid
/// of the group's leader, the shell).
///
/// Groups stay tracked after their call returns while background members
/// remain, so [`kill_all`](ProcessTable::kill_all) at shutdown reaches them
/// too. Emptied groups are forgotten at the next spawn. A group that empties
/// and whose id the kernel reuses for a new group before that spawn would be
/// signalled wrongly; the window is small (pid reuse needs a wrap of the pid
/// space) and only `kill_all` acts on it.
#[derive(Debug, Default)]
pub(crate) struct ProcessTable {
    groups: Mutex<HashMap<i32, Group>>,
    /// The ids that mark each command's tree, escapees included.
    pub(super) trees: TreeIds,
}

impl ProcessTable {
    fn lock(&self) -> MutexGuard<'_, HashMap<i32, Group>> {
        self.groups.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Spawns `command` (which must start a new process group) and tracks its group.
    ///
    /// The table stays locked across the spawn so that [`kill_all`](Self::kill_all)
    /// and [`reap_orphans`](Self::reap_orphans) never see a child that is not tracked yet.
    pub(super) fn spawn(&self, command: &mut Command) -> io::Result<(Child, i32)> {
        let mut groups = self.lock();
        groups.retain(|&pgid, group| *group == Group::Running || unix::group_alive(pgid));
        let child = command.spawn()?;
        let pgid = child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .unwrap_or_default();
        groups.insert(pgid, Group::Running);
        Ok((child, pgid))
    }

    /// The leader of `pgid` was reaped (or abandoned to tokio's reaper): keep
    /// tracking the group only while members remain.
    pub(super) fn leader_done(&self, pgid: i32) {
        let mut groups = self.lock();
        if unix::group_alive(pgid) {
            groups.insert(pgid, Group::Background);
        } else {
            groups.remove(&pgid);
        }
    }

    /// SIGKILLs every tracked group. Synchronous and non-blocking: safe to call
    /// from a signal-handling task or on the way out of the process.
    pub(crate) fn kill_all(&self) {
        let groups = self.lock();
        for &pgid in groups.keys() {
            unix::signal_group(pgid, Signal::SIGKILL);
        }
        // Processes that left their group (setsid) but carry one of our tree ids.
        escapees::kill_all_marked(&self.trees.prefix());
    }

    /// Reaps exited children that are not group leaders tracked as running
    /// (orphans re-parented to pith when it is a child subreaper).
    pub(crate) fn reap_orphans(&self) {
        let groups = self.lock();
        for pid in unix::children() {
            if groups.get(&pid) != Some(&Group::Running) {
                unix::reap(pid);
            }
        }
    }
}
