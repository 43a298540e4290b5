//! The unsafe and Linux-specific parts of local process handling.

use std::io;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::Command;

use crate::sandbox::PreparedSandbox;

/// Prepares the child's last steps before `exec`: a new session (`setsid`: no
/// controlling terminal, and a new process group whose id is the child's pid),
/// on Linux `PR_SET_PDEATHSIG(SIGKILL)` so it dies with pith, close-on-exec on
/// every descriptor but 0, 1 and 2, then the sandbox, if any.
///
/// The parent-death signal fires when the *thread* that spawned the child
/// exits, which for a tokio runtime is a worker thread living as long as the
/// runtime. It reaches the direct child only (usually the shell); descendants
/// are reached through the process group by [`Exec::kill_all`](crate::Exec::kill_all).
///
/// With `controlling_tty`, stdin is the slave side of a pseudo-terminal and
/// becomes the new session's controlling terminal (`TIOCSCTTY`).
pub(super) fn configure_child(
    command: &mut Command,
    sandbox: Option<PreparedSandbox>,
    controlling_tty: bool,
) {
    let parent = std::process::id();
    let mut sandbox = sandbox;
    let before_exec = move || {
        // The child is not a group leader (no `process_group` on the
        // command), so this cannot fail with EPERM.
        nix::unistd::setsid()?;
        // SAFETY: ioctl on descriptor 0 with an integer argument; a raw system call.
        if controlling_tty && unsafe { libc::ioctl(0, libc::TIOCSCTTY as _, 0) } < 0 {
            return Err(io::Error::last_os_error());
        }
        set_death_signal(parent)?;
        close_inherited();
        if let Some(sandbox) = &mut sandbox {
            // SAFETY: this runs in the freshly forked child, before exec.
            unsafe { sandbox.apply()? };
        }
        Ok(())
    };
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe calls are allowed. It makes only raw system calls
    // (`setsid`, `ioctl`, `prctl`, `getppid`, `raise`, `close_range`, and the sandbox's
    // own, documented as async-signal-safe; nix's wrappers of them return an
    // errno, which becomes an `io::Error` without allocating), allocates
    // nothing and takes no locks: everything it uses (the sandbox's ruleset,
    // BPF program and mount plan) was built before the fork.
    unsafe {
        command.pre_exec(before_exec);
    }
}

/// In the child: marks every descriptor from 3 up close-on-exec, so the
/// command inherits only stdin, stdout and stderr. (Close-on-exec rather than
/// close: the standard library's exec-error pipe and the sandbox's descriptors
/// are still needed until `exec`.) Without `close_range` (Linux < 5.11), each
/// descriptor below the open-files limit is marked one by one.
fn close_inherited() {
    #[cfg(target_os = "linux")]
    if close_range_cloexec() {
        return;
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct; fcntl on any number is harmless.
    unsafe {
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as libc::c_int
        } else {
            1024
        };
        for fd in 3..max {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

/// `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)`: whether the kernel did it (Linux 5.11 and later).
#[cfg(target_os = "linux")]
fn close_range_cloexec() -> bool {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range with constant arguments only changes descriptor flags.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    rc == 0
}

/// In the child: SIGKILL when the parent goes; and at once if it already went.
#[cfg(target_os = "linux")]
fn set_death_signal(parent: u32) -> io::Result<()> {
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
    // pith died between fork and prctl: the signal will never come.
    if nix::unistd::getppid().as_raw() as u32 != parent {
        let _ = nix::sys::signal::raise(Signal::SIGKILL);
    }
    Ok(())
}

/// Parent-death signals exist only on Linux.
#[cfg(not(target_os = "linux"))]
fn set_death_signal(_parent: u32) -> io::Result<()> {
    Ok(())
}

/// Sends `signal` to every process of group `pgid`; a group that is gone is not an error.
pub(super) fn signal_group(pgid: i32, signal: Signal) {
    if pgid > 1 {
        let _ = killpg(Pid::from_raw(pgid), signal);
    }
}

/// Whether any process (a zombie included) is still in group `pgid`.
pub(super) fn group_alive(pgid: i32) -> bool {
    pgid > 1 && !matches!(killpg(Pid::from_raw(pgid), None), Err(Errno::ESRCH))
}

/// Set once this process is a child subreaper.
static SUBREAPER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks this process as a child subreaper (`PR_SET_CHILD_SUBREAPER`).
#[cfg(target_os = "linux")]
pub(super) fn set_child_subreaper() -> io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true).map_err(io::Error::from)?;
    SUBREAPER.store(true, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// Whether [`set_child_subreaper`] succeeded in this process.
pub(super) fn is_subreaper() -> bool {
    SUBREAPER.load(std::sync::atomic::Ordering::Relaxed)
}

/// The process group of `pid`, if it still exists.
pub(super) fn group_of(pid: i32) -> Option<i32> {
    nix::unistd::getpgid(Some(Pid::from_raw(pid)))
        .ok()
        .map(Pid::as_raw)
}

/// SIGKILLs one process; a process that is gone is not an error.
pub(super) fn kill_process(pid: i32) {
    if pid > 1 {
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// Subreapers exist only on Linux.
#[cfg(not(target_os = "linux"))]
pub(super) fn set_child_subreaper() -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// The pids of this process's children (every thread's), from `/proc`.
#[cfg(target_os = "linux")]
pub(super) fn children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            pids.extend(
                text.split_whitespace()
                    .filter_map(|pid| pid.parse::<i32>().ok()),
            );
        }
    }
    pids
}

/// Without `/proc` there is no cheap list of children.
#[cfg(not(target_os = "linux"))]
pub(super) fn children() -> Vec<i32> {
    Vec::new()
}

/// Reaps `pid` if it is a zombie; never blocks.
pub(super) fn reap(pid: i32) {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
}
