//! What the sandbox can enforce on this machine, probed once, and the report
//! `pith sandbox status` prints from it.

use super::*;

/// What the kernel can enforce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxStatus {
    /// The Landlock ABI version, when Landlock is available.
    pub landlock_abi: Option<i32>,
    /// Why Landlock is not available (an errno), when it is not.
    landlock_errno: Option<i32>,
    /// Whether the mount namespace can be set up; why not, when not.
    pub(super) mount_ns: Result<(), String>,
}

/// One promise of the sandbox, and whether it holds on this kernel with this policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Guarantee {
    /// A stable name (`new-session`, `writes-confined`, ...).
    pub id: &'static str,
    /// Whether it holds.
    pub holds: bool,
    /// What it means, or why it does not hold, in one line.
    pub text: String,
}

/// Everything `pith sandbox status --json` prints.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxReport {
    /// `off`, `workspace-write` or `read-only`.
    pub mode: &'static str,
    /// The kernel's Landlock ABI, if any.
    pub landlock_abi: Option<i32>,
    /// Whether commands get the read-only mount namespace.
    pub mount_namespace: bool,
    /// Where commands may write (workspace-write), besides the device sinks.
    pub writable: Vec<PathBuf>,
    /// Paths inside those that commands may not change.
    pub read_only: Vec<PathBuf>,
    /// Whether commands may create IPv4/IPv6 sockets.
    pub deny_network: bool,
    /// Each guarantee, holding or not.
    pub guarantees: Vec<Guarantee>,
}

impl SandboxStatus {
    /// Outside Linux: no Landlock and no mount namespace to ask about.
    #[cfg(not(target_os = "linux"))]
    pub fn probe() -> SandboxStatus {
        SandboxStatus {
            landlock_abi: None,
            landlock_errno: Some(libc::ENOSYS),
            mount_ns: Err("mount namespaces are Linux's".to_owned()),
        }
    }

    /// Asks the kernel. `PITH_TEST_NO_LANDLOCK=1` makes Landlock unavailable,
    /// for tests.
    #[cfg(target_os = "linux")]
    pub fn probe() -> SandboxStatus {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
        let mount_ns = mount::available();
        // Tests force the no-Landlock path on a kernel that has it (docs/architecture.md).
        if std::env::var_os("PITH_TEST_NO_LANDLOCK").is_some_and(|value| value == "1") {
            return SandboxStatus {
                landlock_abi: None,
                landlock_errno: Some(libc::ENOSYS),
                mount_ns,
            };
        }
        // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns the ABI version.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        if version > 0 {
            SandboxStatus {
                landlock_abi: i32::try_from(version).ok(),
                landlock_errno: None,
                mount_ns,
            }
        } else {
            SandboxStatus {
                landlock_abi: None,
                landlock_errno: io::Error::last_os_error().raw_os_error(),
                mount_ns,
            }
        }
    }

    /// Whether Landlock can be enforced.
    pub fn landlock_available(&self) -> bool {
        self.landlock_abi.is_some()
    }

    /// Whether the read-only mount namespace can be set up.
    pub fn mount_namespace_available(&self) -> bool {
        self.mount_ns.is_ok()
    }

    pub(super) fn landlock_detail(&self) -> String {
        match (self.landlock_abi, self.landlock_errno) {
            (Some(abi), _) => format!("Landlock ABI {abi}"),
            (None, Some(libc::EOPNOTSUPP)) => "Landlock is built in but disabled at boot".into(),
            (None, Some(libc::ENOSYS)) => "the kernel has no Landlock".into(),
            (None, _) => "Landlock is unavailable".into(),
        }
    }

    /// Each guarantee `policy` gives on this kernel, holding or not, without duplicates.
    pub fn guarantees(&self, policy: &SandboxPolicy) -> Vec<Guarantee> {
        let mut list = Vec::new();
        let mut say = |id: &'static str, holds: bool, text: String| {
            list.push(Guarantee { id, holds, text });
        };
        say(
            "new-session",
            true,
            "every command starts in a new session with no controlling terminal (setsid)".into(),
        );
        say(
            "no-inherited-fds",
            true,
            "commands inherit no descriptor of pith's but stdin, stdout and stderr (close_range)"
                .into(),
        );
        let reaper = is_subreaper();
        let cgroups = crate::local::tree_cgroups_available();
        say(
            "escapees-killed",
            reaper || cgroups,
            match (cgroups, reaper) {
                (true, _) => "processes that leave a command's process group (setsid, double fork, a cleared environment) are killed on timeout, on cancel and when pith exits (a cgroup v2 leaf per command)".into(),
                (false, true) => "processes that leave a command's process group (setsid, double fork, a cleared environment) are killed when pith exits; on timeout and cancel those that keep the environment are killed at once".into(),
                (false, false) => "processes that leave a command's process group and clear their environment (env -i setsid) outlive pith: this process is not a child subreaper and no cgroup v2 leaf can be made".into(),
            },
        );
        say(
            "escapees-after-sigkill",
            cgroups,
            if cgroups {
                "if pith itself is SIGKILLed, its watchdog still kills every process of every command, escapees with a cleared environment included (cgroup.kill)".into()
            } else {
                "if pith itself is SIGKILLed, an escapee that cleared its environment survives: no writable cgroup v2 directory for a leaf per command".into()
            },
        );
        let landlock = self.landlock_available();
        if policy.mode != SandboxMode::Off && !landlock {
            say(
                "writes-confined",
                false,
                match policy.fallback {
                    SandboxFallback::Refuse => format!(
                        "bash commands are refused: the {} sandbox needs Landlock ({})",
                        policy.mode,
                        self.landlock_detail()
                    ),
                    SandboxFallback::RunUnsandboxed => format!(
                        "bash commands run WITHOUT the {} sandbox ({}); they can write wherever this user can",
                        policy.mode,
                        self.landlock_detail()
                    ),
                },
            );
            if policy.fallback == SandboxFallback::Refuse {
                return list;
            }
        }
        if !policy.is_active() {
            say(
                "writes-confined",
                false,
                "bash commands are not sandboxed: they can write wherever this user can".into(),
            );
            say("network-denied", false, "network: not restricted".into());
            return list;
        }
        let abi = self.landlock_abi.unwrap_or(0);
        let files = policy.mode != SandboxMode::Off && landlock;
        let mounts = files && self.mount_ns.is_ok();
        let sinks = "/dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom and terminals";
        match policy.mode {
            SandboxMode::Off => say(
                "writes-confined",
                false,
                "bash commands may write wherever this user can (--sandbox off)".into(),
            ),
            SandboxMode::WorkspaceWrite if files => {
                let places: Vec<String> = policy
                    .writable_places()
                    .iter()
                    .map(|dir| dir.display().to_string())
                    .collect();
                say(
                    "writes-confined",
                    true,
                    format!(
                        "bash commands may read everywhere; may write only under {} and to {sinks} (Landlock, enforced by the kernel)",
                        places.join(", ")
                    ),
                );
            }
            SandboxMode::ReadOnly if files => say(
                "writes-confined",
                true,
                format!(
                    "bash commands may read everywhere; may not write any file, /tmp and /dev/shm included; only {sinks} accept writes (Landlock, enforced by the kernel)"
                ),
            ),
            _ => {}
        }
        if policy.mode == SandboxMode::WorkspaceWrite {
            let protected: Vec<String> = policy
                .protected_paths()
                .iter()
                .map(|path| path.display().to_string())
                .collect();
            let listed = if protected.is_empty() {
                "none exists yet".to_owned()
            } else {
                protected.join(", ")
            };
            say(
                "git-read-only",
                mounts,
                match &self.mount_ns {
                    Ok(()) if mounts => format!(
                        "each root's .git/ and the --protect paths are read-only for commands too, so hooks and git config cannot be planted (read-only mounts): {listed}"
                    ),
                    Ok(()) => {
                        "commands can change .git/ (hooks, config) and --protect paths: no Landlock"
                            .into()
                    }
                    Err(why) => format!(
                        "commands can change .git/ (hooks, config) and --protect paths: the mount namespace is unavailable ({why})"
                    ),
                },
            );
        }
        if policy.mode != SandboxMode::Off {
            say(
                "metadata-confined",
                mounts,
                match &self.mount_ns {
                    Ok(()) if mounts => "chmod, chown, utimes and setxattr fail outside the writable places (read-only mounts)".into(),
                    Ok(()) => "chmod, chown, utimes and setxattr outside the writable places are not confined: no Landlock".into(),
                    Err(why) => format!(
                        "chmod, chown, utimes and setxattr outside the writable places are not confined: the mount namespace is unavailable ({why})"
                    ),
                },
            );
            say(
                "tty-ioctl",
                files && abi >= 5,
                if files && abi >= 5 {
                    "no ioctl on /dev/tty and /dev/pts (Landlock ABI 5)".into()
                } else {
                    "ioctl on /dev/tty and /dev/pts is not restricted by Landlock (needs ABI 5)"
                        .into()
                },
            );
        }
        say(
            "tty-injection",
            true,
            "TIOCSTI and TIOCLINUX ioctls are denied (seccomp): no typing into a terminal".into(),
        );
        say(
            "io-uring-denied",
            true,
            "io_uring_setup, io_uring_enter and io_uring_register are denied (seccomp)".into(),
        );
        say(
            "socket-families",
            true,
            "AF_PACKET, AF_VSOCK, AF_XDP and netlink sockets other than NETLINK_ROUTE are denied (seccomp)".into(),
        );
        say(
            "signal-scoped",
            abi >= 6,
            if abi >= 6 {
                "commands cannot signal processes outside their sandbox (Landlock ABI 6 scope)"
                    .into()
            } else {
                "commands can signal this user's other processes (needs Landlock ABI 6)".into()
            },
        );
        say(
            "abstract-unix-scoped",
            abi >= 6,
            if abi >= 6 {
                "commands cannot connect to abstract Unix sockets created outside their sandbox (Landlock ABI 6 scope)".into()
            } else {
                "commands can connect to any abstract Unix socket (needs Landlock ABI 6)".into()
            },
        );
        if policy.deny_network {
            say(
                "network-denied",
                true,
                "new IPv4/IPv6 sockets are denied (seccomp); Unix sockets are allowed".into(),
            );
        } else {
            say("network-denied", false, "network: not restricted".into());
        }
        list
    }

    /// The status as `pith sandbox status --json` prints it.
    pub fn report(&self, policy: &SandboxPolicy) -> SandboxReport {
        let files = policy.mode != SandboxMode::Off && self.landlock_available();
        let mounts = files && self.mount_ns.is_ok();
        SandboxReport {
            mode: policy.mode.as_str(),
            landlock_abi: self.landlock_abi,
            mount_namespace: mounts,
            writable: policy.writable_places(),
            read_only: if mounts {
                policy.protected_paths()
            } else {
                Vec::new()
            },
            deny_network: policy.deny_network,
            guarantees: self.guarantees(policy),
        }
    }

    /// Says, line by line, exactly what `policy` enforces on this kernel.
    pub fn describe(&self, policy: &SandboxPolicy) -> String {
        let mut lines = vec![
            format!(
                "kernel: {} ({}); mount namespaces: {}",
                self.landlock_detail(),
                if self.landlock_available() {
                    "available"
                } else {
                    "not available"
                },
                match &self.mount_ns {
                    Ok(()) => "available".to_owned(),
                    Err(why) => format!("not available ({why})"),
                }
            ),
            format!("sandbox mode: {}", policy.mode),
        ];
        for guarantee in self.guarantees(policy) {
            lines.push(format!(
                "{} {}",
                if guarantee.holds {
                    "holds:"
                } else {
                    "does NOT hold:"
                },
                guarantee.text
            ));
        }
        lines.join("\n")
    }
}

/// Whether this process is a child subreaper (`PR_GET_CHILD_SUBREAPER`).
#[cfg(target_os = "linux")]
fn is_subreaper() -> bool {
    nix::sys::prctl::get_child_subreaper().unwrap_or(false)
}

/// Subreapers are Linux's.
#[cfg(not(target_os = "linux"))]
fn is_subreaper() -> bool {
    false
}
