//! The OS sandbox for commands: Landlock file-system rules and a seccomp
//! network filter, applied to the child between `fork` and `exec`.
//!
//! A boundary inside the tool is no boundary: a command can always write
//! wherever the user can. So the sandbox is the kernel's. The parent builds
//! everything that allocates (the Landlock ruleset, the BPF program) before
//! spawning; the child only makes the raw `prctl`, `landlock_restrict_self`
//! and `seccomp` system calls, which are async-signal-safe.

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    path_beneath_rules,
};

use crate::ExecError;

/// How much a command may write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SandboxMode {
    /// No sandbox.
    #[default]
    Off,
    /// Writes only inside the workspace roots and temporary directories.
    WorkspaceWrite,
    /// No writes at all (except `/dev/null` and friends).
    ReadOnly,
}

impl SandboxMode {
    /// The flag spelling: `off`, `workspace-write`, `read-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxMode {
    type Err = String;

    fn from_str(text: &str) -> Result<SandboxMode, String> {
        match text {
            "off" => Ok(SandboxMode::Off),
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "read-only" => Ok(SandboxMode::ReadOnly),
            other => Err(format!(
                "unknown sandbox mode {other:?}: use off, workspace-write or read-only"
            )),
        }
    }
}

/// What to do when the kernel cannot enforce the sandbox that was asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SandboxFallback {
    /// Refuse to run the command, with a message saying why.
    #[default]
    Refuse,
    /// Run it without a sandbox.
    RunUnsandboxed,
}

/// The sandbox a command runs in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// How much the command may write.
    pub mode: SandboxMode,
    /// Directories the command may write in (workspace-write mode); the
    /// system temporary directory is always added.
    pub writable: Vec<PathBuf>,
    /// Deny new IPv4/IPv6 sockets (seccomp).
    pub deny_network: bool,
    /// What to do when Landlock is not available.
    pub fallback: SandboxFallback,
}

impl SandboxPolicy {
    /// No sandbox.
    pub fn off() -> SandboxPolicy {
        SandboxPolicy::default()
    }

    /// The directories a workspace-write sandbox always lets commands write in,
    /// besides its writable roots: the temporary directories and `/dev/shm`.
    pub fn always_writable() -> Vec<PathBuf> {
        let mut dirs = temp_dirs();
        dirs.push(PathBuf::from("/dev/shm"));
        dirs
    }

    /// Whether this policy asks for any restriction.
    pub fn is_active(&self) -> bool {
        self.mode != SandboxMode::Off || self.deny_network
    }

    /// Builds what the child will apply. `Ok(None)` means run unsandboxed
    /// (policy off, or unavailable with [`SandboxFallback::RunUnsandboxed`]).
    pub(crate) fn prepare(&self) -> Result<Option<PreparedSandbox>, ExecError> {
        if !self.is_active() {
            return Ok(None);
        }
        let status = SandboxStatus::probe();
        let landlock_fd = if self.mode == SandboxMode::Off {
            None
        } else if status.landlock_abi.is_none() {
            return match self.fallback {
                SandboxFallback::Refuse => Err(ExecError::Sandbox(format!(
                    "the {} sandbox needs Landlock, which this kernel does not provide ({}). \
                     Run with --sandbox off to allow unsandboxed commands.",
                    self.mode,
                    status.landlock_detail()
                ))),
                SandboxFallback::RunUnsandboxed => Ok(None),
            };
        } else {
            Some(self.landlock_ruleset().map_err(ExecError::Sandbox)?)
        };
        let seccomp = if self.deny_network {
            Some(network_filter().map_err(ExecError::Sandbox)?)
        } else {
            None
        };
        Ok(Some(PreparedSandbox {
            landlock_fd,
            seccomp,
        }))
    }

    fn landlock_ruleset(&self) -> Result<OwnedFd, String> {
        let abi = ABI::V6;
        let mut writable: Vec<PathBuf> = Vec::new();
        if self.mode == SandboxMode::WorkspaceWrite {
            writable.extend(self.writable.iter().cloned());
            writable.extend(temp_dirs());
        }
        let devices = DEVICES.iter().map(Path::new).filter(|path| path.exists());
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|ruleset| ruleset.create())
            .and_then(|ruleset| {
                ruleset.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
            })
            .and_then(|ruleset| {
                ruleset.add_rules(path_beneath_rules(devices, AccessFs::from_all(abi)))
            })
            .and_then(|ruleset| {
                ruleset.add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi)))
            })
            .map_err(|error| format!("cannot build the Landlock ruleset: {error}"))?;
        let fd: Option<OwnedFd> = created.into();
        fd.ok_or_else(|| "Landlock is not enforced on this kernel".to_owned())
    }
}

/// Device files every command may write (`/dev/null` and friends), never disks.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

fn temp_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
    ];
    dirs.sort();
    dirs.dedup();
    dirs.into_iter().filter(|dir| dir.is_dir()).collect()
}

fn network_filter() -> Result<seccompiler::BpfProgram, String> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => TargetArch::x86_64,
        "aarch64" => TargetArch::aarch64,
        other => return Err(format!("network denial is not supported on {other}")),
    };
    let family = |family: libc::c_int| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, family as u64)
            .and_then(|condition| SeccompRule::new(vec![condition]))
    };
    let rules = (|| {
        Ok::<_, seccompiler::BackendError>(vec![family(libc::AF_INET)?, family(libc::AF_INET6)?])
    })()
    .map_err(|error| format!("cannot build the network filter: {error}"))?;
    let filter = SeccompFilter::new(
        [(libc::SYS_socket, rules)].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(|error| format!("cannot build the network filter: {error}"))?;
    filter
        .try_into()
        .map_err(|error: seccompiler::BackendError| {
            format!("cannot compile the network filter: {error}")
        })
}

/// A sandbox built in the parent, applied in the child.
#[derive(Debug)]
pub(crate) struct PreparedSandbox {
    landlock_fd: Option<OwnedFd>,
    seccomp: Option<seccompiler::BpfProgram>,
}

impl PreparedSandbox {
    /// Restricts the calling process. Call it in the child, after `fork` and
    /// before `exec` (from `pre_exec`).
    ///
    /// # Safety
    ///
    /// Only async-signal-safe system calls are made; nothing allocates. The
    /// caller must be in a freshly forked child.
    pub(crate) unsafe fn apply(&self) -> io::Result<()> {
        // SAFETY: prctl with constant arguments.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(fd) = &self.landlock_fd {
            // SAFETY: landlock_restrict_self(ruleset_fd, flags=0) on a valid fd we own.
            let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(program) = &self.seccomp {
            seccompiler::apply_filter(program).map_err(io::Error::other)?;
        }
        Ok(())
    }
}

/// What the kernel can enforce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SandboxStatus {
    /// The Landlock ABI version, when Landlock is available.
    pub landlock_abi: Option<i32>,
    /// Why Landlock is not available (an errno), when it is not.
    landlock_errno: Option<i32>,
}

impl SandboxStatus {
    /// Asks the kernel.
    pub fn probe() -> SandboxStatus {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
        // Tests force the no-Landlock path on a kernel that has it (docs/architecture.md).
        if std::env::var_os("PITH_TEST_NO_LANDLOCK").is_some_and(|value| value == "1") {
            return SandboxStatus {
                landlock_abi: None,
                landlock_errno: None,
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
            }
        } else {
            SandboxStatus {
                landlock_abi: None,
                landlock_errno: io::Error::last_os_error().raw_os_error(),
            }
        }
    }

    /// Whether Landlock can be enforced.
    pub fn landlock_available(&self) -> bool {
        self.landlock_abi.is_some()
    }

    fn landlock_detail(&self) -> String {
        match (self.landlock_abi, self.landlock_errno) {
            (Some(abi), _) => format!("Landlock ABI {abi}"),
            (None, Some(libc::EOPNOTSUPP)) => "Landlock is built in but disabled at boot".into(),
            (None, Some(libc::ENOSYS)) => "the kernel has no Landlock".into(),
            (None, _) => "Landlock is unavailable".into(),
        }
    }

    /// Says, line by line, exactly what `policy` enforces on this kernel.
    pub fn describe(&self, policy: &SandboxPolicy) -> String {
        let mut lines = vec![format!(
            "kernel: {} ({})",
            self.landlock_detail(),
            if self.landlock_available() {
                "available"
            } else {
                "not available"
            }
        )];
        lines.push(format!("sandbox mode: {}", policy.mode));
        match policy.mode {
            SandboxMode::Off => {
                lines.push("bash commands: not sandboxed; they can write wherever this user can".into());
            }
            _ if !self.landlock_available() => lines.push(match policy.fallback {
                SandboxFallback::Refuse => "bash commands: refused (the sandbox cannot be enforced)".into(),
                SandboxFallback::RunUnsandboxed => {
                    "bash commands: run WITHOUT a sandbox (Landlock unavailable)".into()
                }
            }),
            SandboxMode::WorkspaceWrite => {
                let mut dirs: Vec<String> =
                    policy.writable.iter().map(|dir| dir.display().to_string()).collect();
                dirs.extend(temp_dirs().iter().map(|dir| dir.display().to_string()));
                lines.push(format!(
                    "bash commands: may read everywhere; may write only under {} (Landlock, enforced by the kernel)",
                    dirs.join(", ")
                ));
            }
            SandboxMode::ReadOnly => lines.push(
                "bash commands: may read everywhere; may not write any file (Landlock, enforced by the kernel)"
                    .into(),
            ),
        }
        lines.push(if policy.deny_network {
            "network: new IPv4/IPv6 sockets denied (seccomp); Unix sockets allowed".into()
        } else {
            "network: not restricted".into()
        });
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_modes_and_rejects_others() {
        assert_eq!("off".parse(), Ok(SandboxMode::Off));
        assert_eq!("workspace-write".parse(), Ok(SandboxMode::WorkspaceWrite));
        assert_eq!("read-only".parse(), Ok(SandboxMode::ReadOnly));
        assert!(
            "strict"
                .parse::<SandboxMode>()
                .unwrap_err()
                .contains("workspace-write")
        );
    }

    #[test]
    fn describes_what_is_enforced() {
        let status = SandboxStatus::probe();
        let policy = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            writable: vec![PathBuf::from("/work")],
            ..SandboxPolicy::default()
        };
        let text = status.describe(&policy);
        assert!(text.contains("sandbox mode: workspace-write"), "{text}");
        if status.landlock_available() {
            assert!(text.contains("may write only under /work"), "{text}");
        } else {
            assert!(text.contains("refused"), "{text}");
        }
    }

    #[test]
    fn builds_the_network_filter() {
        let filter = network_filter().unwrap();
        // Seccomp filters belong to the thread that installs them (no TSYNC): apply it
        // in a thread of its own, which then may not open IP sockets but Unix ones.
        let (inet, inet6, unix) = std::thread::spawn(move || {
            seccompiler::apply_filter(&filter).unwrap();
            let open = |family| {
                // SAFETY: socket(2) with constant arguments; a returned fd is closed below.
                let fd = unsafe { libc::socket(family, libc::SOCK_STREAM, 0) };
                let errno = io::Error::last_os_error().raw_os_error();
                if fd >= 0 {
                    // SAFETY: fd was just returned by socket(2) and is ours.
                    unsafe { libc::close(fd) };
                    Ok(())
                } else {
                    Err(errno)
                }
            };
            (
                open(libc::AF_INET),
                open(libc::AF_INET6),
                open(libc::AF_UNIX),
            )
        })
        .join()
        .unwrap();
        assert_eq!(inet, Err(Some(libc::EACCES)));
        assert_eq!(inet6, Err(Some(libc::EACCES)));
        assert_eq!(unix, Ok(()));
    }
}
