//! The watchdog: a small shell process that kills every command's tree when pith
//! dies, however it dies (SIGKILL and OOM kills included).
//!
//! `PR_SET_PDEATHSIG` reaches only the direct child (the shell); its children,
//! background jobs and escapees would outlive a SIGKILLed pith. So each
//! [`ProcessTable`](super::ProcessTable) starts, with its first command, one
//! `/bin/sh -c <SCRIPT> pith-watchdog <tree-id prefix> <cgroup dir> <pith pid>`
//! (POSIX sh: dash or bash; `grep` for the escapee scan, `sleep` while cgroup
//! leaves empty; nothing else). It runs in its own process
//! group (no command's group, not pith's, so a signal to either leaves it alive),
//! with stdout and stderr on `/dev/null` (it holds none of pith's pipes) and its
//! stdin on one end of a Unix socket pair whose other end only pith holds
//! (close-on-exec, so no command inherits it).
//!
//! Protocol, one line per event: `+PGID` when a command's group starts, `-PGID`
//! once its call is over and the group is empty (a group left with background
//! members is removed when a later spawn finds it empty). A line is one
//! non-blocking `send` (`MSG_NOSIGNAL`: a dead watchdog is an error, not a
//! SIGPIPE), so the cost per call is two small writes.
//!
//! At end of file (pith exited or was killed: the kernel closes the socket) the
//! watchdog SIGKILLs every group still registered, then every process in the
//! trees' cgroup leaves (`cgroup.kill`, where leaves are in use: see `cgroup`;
//! this catches escapees that cleared their environment), then, in up to four
//! rounds, every process whose environment holds `PITH_TREE_ID=<prefix>`
//! (escapees that left their group, see `escapees`), removes the leaves once
//! empty (for up to 5 s), and exits. On a clean exit pith has
//! already killed them all, so the watchdog finds nothing and leaves within
//! milliseconds. A watchdog that dies is started again by the next spawn, with
//! every tracked group registered anew.
//!
//! Limits: a group that empties while pith is alive but is not yet unregistered
//! (a background group, until the next spawn) could have its id reused by an
//! unrelated group before pith dies; that needs a wrap of the pid space. If the
//! socket's buffer is ever full (the watchdog stopped), lines are dropped rather
//! than blocking pith.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, Command};

/// The watchdog's program. `$1` is the tree-id prefix; `$2` the directory of
/// the trees' cgroup leaves, or empty; `$3` (pith's pid) only names the
/// process for people and tests.
const SCRIPT: &str = r#"trap '' HUP INT QUIT TERM PIPE
groups=' '
while IFS= read -r line; do
  g=${line#?}
  case $g in ''|*[!0-9]*) continue ;; esac
  case $line in
    +*) groups="$groups$g " ;;
    -*) case $groups in *" $g "*) groups="${groups%% $g *} ${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
if [ -n "$2" ]; then
  for d in "$2/pith-$1"*; do [ -d "$d" ] && echo 1 >"$d/cgroup.kill" 2>/dev/null; done
fi
round=0
while [ "$round" -lt 4 ]; do
  found=$(grep -las -- "PITH_TREE_ID=$1" /proc/[0-9]*/environ)
  [ -n "$found" ] || break
  for f in $found; do p=${f#/proc/}; kill -s KILL "${p%/environ}" 2>/dev/null; done
  round=$((round + 1))
done
[ -n "$2" ] || exit 0
round=0
while [ "$round" -lt 100 ]; do
  left=
  for d in "$2/pith-$1"*; do [ -d "$d" ] && ! rmdir "$d" 2>/dev/null && left=1; done
  [ -n "$left" ] || break
  sleep 0.05
  round=$((round + 1))
done
"#;

/// The name the watchdog runs under (`$0`).
pub(super) const NAME: &str = "pith-watchdog";

#[cfg(any(target_os = "linux", target_os = "android"))]
const SEND_FLAGS: libc::c_int = libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const SEND_FLAGS: libc::c_int = libc::MSG_DONTWAIT;

/// A running watchdog and pith's end of its stdin.
#[derive(Debug)]
pub(super) struct Watchdog {
    /// Closing it (drop, or pith's death) tells the watchdog to kill and leave.
    socket: OwnedFd,
    /// Dropped without a wait: tokio reaps it once it exits.
    _child: Child,
}

impl Watchdog {
    /// Starts a watchdog for the trees whose ids start with `prefix`. Must run
    /// inside a tokio runtime.
    pub(super) fn start(prefix: &str) -> io::Result<Watchdog> {
        let (ours, theirs) = UnixStream::pair()?;
        ours.set_nonblocking(true)?;
        let shell = if Path::new("/bin/sh").exists() {
            "/bin/sh"
        } else {
            "sh"
        };
        let child = Command::new(shell)
            .arg("-c")
            .arg(SCRIPT)
            .arg(NAME)
            .arg(prefix)
            .arg(super::cgroup::base().unwrap_or(Path::new("")))
            .arg(std::process::id().to_string())
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        Ok(Watchdog {
            socket: OwnedFd::from(ours),
            _child: child,
        })
    }

    /// The watchdog's pid.
    pub(super) fn pid(&self) -> Option<i32> {
        self._child.id().and_then(|pid| i32::try_from(pid).ok())
    }

    /// Registers a group that started.
    pub(super) fn started(&self, pgid: i32) -> io::Result<()> {
        self.send(&format!("+{pgid}\n"))
    }

    /// Unregisters a group that is over and empty.
    pub(super) fn ended(&self, pgid: i32) -> io::Result<()> {
        self.send(&format!("-{pgid}\n"))
    }

    /// Sends one line. A full buffer drops the line (a half-sent line garbles
    /// at most itself and the next, which the script then ignores); any other
    /// error means the watchdog is gone.
    fn send(&self, line: &str) -> io::Result<()> {
        let bytes = line.as_bytes();
        // SAFETY: the pointer and length describe `bytes`, alive for the call;
        // the descriptor is owned by `self`.
        let sent = unsafe {
            libc::send(
                self.socket.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                SEND_FLAGS,
            )
        };
        if sent >= 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        match error.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => {
                tracing::warn!("process watchdog is not reading; dropped {line:?}");
                Ok(())
            }
            _ => Err(error),
        }
    }
}

#[cfg(test)]
#[path = "watchdog_tests.rs"]
mod tests;
