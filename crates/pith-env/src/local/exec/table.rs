//! [`ProcessTable`]: the process groups the local adapter started.

use std::collections::HashMap;
use std::io;
use std::sync::{Mutex, MutexGuard, PoisonError};

use nix::sys::signal::Signal;
use tokio::process::{Child, Command};

use super::escapees::{self, TreeIds};
use super::unix;
use super::watchdog::Watchdog;

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
///
/// Every tracked group is also registered with the table's [`Watchdog`], which
/// kills them all if pith dies without doing so itself.
#[derive(Debug, Default)]
pub(crate) struct ProcessTable {
    state: Mutex<State>,
    /// The ids that mark each command's tree, escapees included.
    pub(super) trees: TreeIds,
}

#[derive(Debug, Default)]
struct State {
    groups: HashMap<i32, Group>,
    /// Started with the first command; `None` before, or when it could not start.
    watchdog: Option<Watchdog>,
}

impl State {
    /// Starts the watchdog if there is none (again, with every tracked group,
    /// if the last one died). Without a shell to run it, commands run unwatched.
    fn ensure_watchdog(&mut self, prefix: &str) {
        if self.watchdog.is_some() {
            return;
        }
        let watchdog = match Watchdog::start(prefix) {
            Ok(watchdog) => watchdog,
            Err(error) => {
                tracing::warn!("process watchdog not started: {error}");
                return;
            }
        };
        for &pgid in self.groups.keys() {
            if watchdog.started(pgid).is_err() {
                return;
            }
        }
        self.watchdog = Some(watchdog);
    }

    fn watch(&mut self, pgid: i32) {
        if let Some(watchdog) = &self.watchdog
            && let Err(error) = watchdog.started(pgid)
        {
            tracing::warn!("process watchdog gone: {error}");
            self.watchdog = None;
        }
    }

    fn unwatch(&mut self, pgid: i32) {
        if let Some(watchdog) = &self.watchdog
            && let Err(error) = watchdog.ended(pgid)
        {
            tracing::warn!("process watchdog gone: {error}");
            self.watchdog = None;
        }
    }
}

impl State {
    /// In a child subreaper: every orphan re-parented to this process whose
    /// group is not tracked left its command's group (`setsid -f`, a double
    /// fork), whatever its environment. Its group is tracked from now on, as a
    /// background group: [`ProcessTable::kill_all`] and the watchdog kill it.
    /// Exited orphans are reaped.
    fn adopt_orphans(&mut self) {
        if !unix::is_subreaper() {
            return;
        }
        let watchdog = self.watchdog.as_ref().and_then(Watchdog::pid);
        for pid in unix::children() {
            if Some(pid) == watchdog || self.groups.get(&pid) == Some(&Group::Running) {
                continue;
            }
            unix::reap(pid);
            match unix::group_of(pid) {
                Some(group) if group > 1 && !self.groups.contains_key(&group) => {
                    self.groups.insert(group, Group::Background);
                    self.watch(group);
                }
                _ => {}
            }
        }
    }
}

impl ProcessTable {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Spawns `command` (which must start a new process group) and tracks its group.
    ///
    /// The table stays locked across the spawn so that [`kill_all`](Self::kill_all)
    /// and [`reap_orphans`](Self::reap_orphans) never see a child that is not tracked yet.
    pub(super) fn spawn(&self, command: &mut Command) -> io::Result<(Child, i32)> {
        // A subreaper from before the first child (and its watchdog) is spawned.
        super::before_first_command();
        let mut state = self.lock();
        let gone: Vec<i32> = state
            .groups
            .iter()
            .filter(|&(&pgid, &group)| group == Group::Background && !unix::group_alive(pgid))
            .map(|(&pgid, _)| pgid)
            .collect();
        for pgid in gone {
            state.groups.remove(&pgid);
            state.unwatch(pgid);
        }
        state.ensure_watchdog(&self.trees.prefix());
        let child = command.spawn()?;
        let pgid = child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .unwrap_or_default();
        state.groups.insert(pgid, Group::Running);
        state.watch(pgid);
        Ok((child, pgid))
    }

    /// The leader of `pgid` was reaped (or abandoned to tokio's reaper): keep
    /// tracking the group only while members remain. In a child subreaper,
    /// also adopts the call's escapees (see [`State::adopt_orphans`]).
    pub(super) fn leader_done(&self, pgid: i32) {
        let mut state = self.lock();
        if unix::group_alive(pgid) {
            state.groups.insert(pgid, Group::Background);
        } else if state.groups.remove(&pgid).is_some() {
            state.unwatch(pgid);
        }
        state.adopt_orphans();
    }

    /// SIGKILLs every tracked group. Synchronous and non-blocking: safe to call
    /// from a signal-handling task or on the way out of the process.
    pub(crate) fn kill_all(&self) {
        let state = self.lock();
        for &pgid in state.groups.keys() {
            unix::signal_group(pgid, Signal::SIGKILL);
        }
        // Processes that left their group (setsid) but carry one of our tree ids.
        if self.trees.any_issued() {
            escapees::kill_all_marked(&self.trees.prefix());
        }
        // In a child subreaper every orphan of a command is our child, whatever
        // its group or environment: kill them all (in rounds: a dying escapee's
        // own children are re-parented to us in turn).
        if unix::is_subreaper() {
            let watchdog = state.watchdog.as_ref().and_then(Watchdog::pid);
            for _ in 0..4 {
                let children: Vec<i32> = unix::children()
                    .into_iter()
                    .filter(|&pid| Some(pid) != watchdog)
                    .collect();
                if children.is_empty() {
                    break;
                }
                for pid in children {
                    unix::kill_process(pid);
                    // A running command's leader is reaped by its call's own
                    // wait, which reports how it ended (reaping it here made
                    // that wait fail with ECHILD).
                    if state.groups.get(&pid) != Some(&Group::Running) {
                        unix::reap(pid);
                    }
                }
            }
        }
    }

    /// Reaps exited children that are not group leaders tracked as running
    /// (orphans re-parented to pith when it is a child subreaper).
    pub(crate) fn reap_orphans(&self) {
        let state = self.lock();
        for pid in unix::children() {
            if state.groups.get(&pid) != Some(&Group::Running) {
                unix::reap(pid);
            }
        }
    }
}
