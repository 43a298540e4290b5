//! A cgroup v2 leaf per command tree, where one can be made: membership the
//! tree cannot shed.
//!
//! The environment marker (`escapees`) is lost by a process that clears its
//! environment (`env -i setsid -f …`), and the subreaper only helps while pith
//! lives. Cgroup membership survives both: every process a command forks
//! starts in its parent's cgroup, whatever its session, group, parent or
//! environment, and only a write to a `cgroup.procs` file moves it, which the
//! sandbox forbids (read-only outside the writable places).
//!
//! Where pith's own cgroup v2 directory (found from `/proc/self/cgroup` and the
//! cgroup2 mount in `/proc/self/mountinfo`) accepts a new child directory and
//! its `cgroup.procs` is writable (root, or a delegated subtree such as a
//! systemd user service), each command gets `<own cgroup>/pith-<tree id>`; the
//! child enters it first thing after `fork`. Killing the tree's escapees reads
//! the leaf's `cgroup.procs`; killing every tree (shutdown, and the watchdog
//! when pith dies, SIGKILL included) writes `1` to each leaf's `cgroup.kill`
//! (Linux 5.14). A leaf is removed when its call ends, or once it has
//! emptied, at a later spawn; the watchdog removes what is left when pith exits.
//!
//! Elsewhere (no cgroup v2, a read-only or foreign cgroup, older kernels) the
//! environment marker and the subreaper are all there is; docs/reliability.md
//! says what they miss. An unsandboxed command running as root can still move
//! itself out of its leaf: a deliberate escape, not an accident.
//! `PITH_TEST_NO_CGROUP=1` disables the leaves, for tests.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, getpgid};
use tokio::process::Command;

/// What every leaf's name starts with, before the tree id.
const LEAF_PREFIX: &str = "pith-";

/// Rounds of read-and-kill: a process may fork while it is being killed.
const ROUNDS: usize = 4;

/// The directory leaves are made in, if any (probed once per process).
pub(crate) fn base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    if std::env::var_os("PITH_TEST_NO_CGROUP").is_some_and(|v| v == "1") {
        return None;
    }
    BASE.get_or_init(probe).as_deref()
}

/// Pith's own cgroup v2 directory, when a child directory can be made in it
/// and processes moved into that child.
fn probe() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // Fields: id parent major:minor root mount-point options... - fstype source ...
    let mount = mountinfo.lines().find_map(|line| {
        let (fields, rest) = line.split_once(" - ")?;
        rest.starts_with("cgroup2 ")
            .then(|| fields.split(' ').nth(4).map(PathBuf::from))
            .flatten()
    })?;
    let dir = mount.join(own.trim_start_matches('/'));
    let probe = dir.join(format!("{LEAF_PREFIX}probe-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    let usable = probe.join("cgroup.kill").exists()
        && nix::unistd::access(&dir.join("cgroup.procs"), nix::unistd::AccessFlags::W_OK).is_ok()
        && nix::unistd::access(&probe.join("cgroup.procs"), nix::unistd::AccessFlags::W_OK).is_ok();
    let _ = std::fs::remove_dir(&probe);
    usable.then_some(dir)
}

fn leaf(tree: &str) -> Option<PathBuf> {
    base().map(|base| base.join(format!("{LEAF_PREFIX}{tree}")))
}

/// Makes the leaf of `tree` and has `command`'s child enter it before anything
/// else (before the sandbox, which would forbid the write). Without a leaf,
/// or if entering fails in the child, the command runs in pith's cgroup.
pub(super) fn enter_on_spawn(command: &mut Command, tree: &str) {
    let Some(leaf) = leaf(tree) else {
        return;
    };
    remove_emptied();
    if std::fs::create_dir(&leaf).is_err() {
        return;
    }
    let Ok(procs) = CString::new(leaf.join("cgroup.procs").as_os_str().as_bytes()) else {
        return;
    };
    let enter = move || {
        // SAFETY: open, write and close on a NUL-terminated path and a constant
        // buffer: async-signal-safe, nothing allocated. A failure leaves the
        // child where it is.
        unsafe {
            let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd >= 0 {
                libc::write(fd, b"0".as_ptr().cast(), 1);
                libc::close(fd);
            }
        }
        Ok(())
    };
    // SAFETY: the closure makes only raw system calls (see above).
    unsafe {
        command.pre_exec(enter);
    }
}

/// SIGKILLs every process of `tree`'s leaf that is not in group `pgid` (the
/// caller signals the group itself, with its own grace).
pub(super) fn kill_outside_group(tree: &str, pgid: i32) {
    let Some(leaf) = leaf(tree) else {
        return;
    };
    for _ in 0..ROUNDS {
        let Ok(text) = std::fs::read_to_string(leaf.join("cgroup.procs")) else {
            return;
        };
        let mut killed = 0;
        for pid in text
            .lines()
            .filter_map(|line| line.trim().parse::<i32>().ok())
        {
            let outside = getpgid(Some(Pid::from_raw(pid))).is_ok_and(|g| g.as_raw() != pgid);
            if pid > 1 && outside && kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
                killed += 1;
            }
        }
        if killed == 0 {
            return;
        }
    }
}

/// Kills every process in every leaf whose tree id starts with `prefix`
/// (`cgroup.kill`), and removes the leaves that are already empty.
pub(super) fn kill_all(prefix: &str) {
    for leaf in leaves(prefix) {
        let _ = std::fs::write(leaf.join("cgroup.kill"), b"1");
        let _ = std::fs::remove_dir(&leaf);
    }
}

/// Leaves that still held processes (background jobs, a tree being killed)
/// when their call ended: removed at a later spawn once empty.
static LEFT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes `tree`'s leaf, now or, while processes remain in it, at a later
/// spawn (and in any case by the watchdog when pith exits).
pub(super) fn remove(tree: &str) {
    if let Some(leaf) = leaf(tree)
        && still_there(&leaf)
    {
        LEFT.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(leaf);
    }
}

/// Tries to remove `leaf`; whether it is still there.
fn still_there(leaf: &Path) -> bool {
    std::fs::remove_dir(leaf).is_err_and(|error| error.kind() != std::io::ErrorKind::NotFound)
}

fn remove_emptied() {
    LEFT.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|leaf| still_there(leaf));
}

fn leaves(prefix: &str) -> Vec<PathBuf> {
    let Some(base) = base() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let start = format!("{LEAF_PREFIX}{prefix}");
    entries
        .flatten()
        .filter(|entry| entry.file_name().as_bytes().starts_with(start.as_bytes()))
        .map(|entry| entry.path())
        .collect()
}

/// Whether command trees get cgroup leaves here (for `sandbox status`).
pub(crate) fn available() -> bool {
    base().is_some()
}
