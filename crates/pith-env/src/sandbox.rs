//! The OS sandbox for commands: Landlock rules (files, TCP, scopes), a mount
//! namespace (read-only outside the writable places and on `.git/`), and a
//! seccomp filter, applied to the child between `fork` and `exec`.
//!
//! A boundary inside the tool is no boundary: a command can always write
//! wherever the user can. So the sandbox is the kernel's. The parent builds
//! everything that allocates (the Landlock ruleset, the BPF program, the mount
//! plan's strings) before spawning; the child only makes raw system calls.
//! The threat model and what each guarantee needs from the kernel are in
//! docs/reliability.md.
//!
//! # Platforms
//!
//! Everything that enforces (Landlock, seccomp, the mount namespace, the
//! subreaper query) is Linux's and compiled only there
//! (`cfg(target_os = "linux")`). Elsewhere the policy types, the report and
//! the fallback stay: a sandbox that is asked for is refused (or, with
//! [`SandboxFallback::RunUnsandboxed`], the command runs without one).

#[cfg(target_os = "linux")]
mod filter;
#[cfg(target_os = "linux")]
mod mount;
mod protect;
mod status;

pub use self::status::SandboxStatus;

use std::fmt;
use std::io;
#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::str::FromStr;

#[cfg(target_os = "linux")]
use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use serde::Serialize;

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
    /// temporary directories and `/dev/shm` are always added.
    pub writable: Vec<PathBuf>,
    /// Paths inside the writable directories that commands may not change
    /// (workspace-write mode; `--protect`). Each writable directory's `.git`
    /// is always added. An entry with glob characters (`*?[{`) that is not an
    /// existing path is a pattern (globset syntax, `/` literal), expanded to
    /// what exists when each command starts. Paths that do not exist when a
    /// command starts are skipped.
    pub read_only: Vec<PathBuf>,
    /// Deny new IPv4/IPv6 sockets (seccomp) and TCP bind/connect (Landlock).
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
        if Path::new("/dev/shm").is_dir() {
            dirs.push(PathBuf::from("/dev/shm"));
        }
        dirs
    }

    /// Whether this policy asks for any restriction.
    pub fn is_active(&self) -> bool {
        self.mode != SandboxMode::Off || self.deny_network
    }

    /// Every place a command may write in (workspace-write mode): the roots,
    /// the temporary directories and `/dev/shm`, canonical and without
    /// duplicates; empty in the other modes.
    pub fn writable_places(&self) -> Vec<PathBuf> {
        if self.mode != SandboxMode::WorkspaceWrite {
            return Vec::new();
        }
        let mut places: Vec<PathBuf> = Vec::new();
        for dir in self.writable.iter().cloned().chain(Self::always_writable()) {
            let dir = dir.canonicalize().unwrap_or(dir);
            if dir.exists() && !places.contains(&dir) {
                places.push(dir);
            }
        }
        places
    }

    /// The paths made read-only inside the writable places: each root's `.git`
    /// (and, for a worktree, the git directory its `.git` file names) and
    /// [`SandboxPolicy::read_only`], globs expanded; only those that exist now.
    pub fn protected_paths(&self) -> Vec<PathBuf> {
        if self.mode != SandboxMode::WorkspaceWrite {
            return Vec::new();
        }
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut add = |path: PathBuf| {
            if let Ok(path) = path.canonicalize()
                && !paths.contains(&path)
            {
                paths.push(path);
            }
        };
        for root in &self.writable {
            let git = root.join(".git");
            if git.is_file()
                && let Ok(text) = std::fs::read_to_string(&git)
                && let Some(dir) = text.trim().strip_prefix("gitdir:")
            {
                add(root.join(dir.trim()));
            }
            add(git);
        }
        for path in &self.read_only {
            if protect::is_glob(path) && !path.exists() {
                protect::expand(path).into_iter().for_each(&mut add);
            } else {
                add(path.clone());
            }
        }
        paths
    }

    /// Builds what the child will apply. `Ok(None)` means run unsandboxed
    /// (policy off, or unavailable with [`SandboxFallback::RunUnsandboxed`]).
    /// Outside Linux there is no sandbox to build: an active policy is refused,
    /// or runs unsandboxed when its fallback says so.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn prepare(&self, _cwd: &Path) -> Result<Option<PreparedSandbox>, ExecError> {
        if !self.is_active() || self.fallback == SandboxFallback::RunUnsandboxed {
            return Ok(None);
        }
        Err(ExecError::Sandbox(format!(
            "the {} sandbox needs Linux (Landlock, seccomp, a mount namespace). \
             Run with --sandbox off to allow unsandboxed commands.",
            self.mode
        )))
    }

    /// Builds what the child will apply. `Ok(None)` means run unsandboxed
    /// (policy off, or unavailable with [`SandboxFallback::RunUnsandboxed`]).
    #[cfg(target_os = "linux")]
    pub(crate) fn prepare(&self, cwd: &Path) -> Result<Option<PreparedSandbox>, ExecError> {
        if !self.is_active() {
            return Ok(None);
        }
        let status = SandboxStatus::probe();
        let files = self.mode != SandboxMode::Off;
        if files && status.landlock_abi.is_none() && self.fallback == SandboxFallback::Refuse {
            return Err(ExecError::Sandbox(format!(
                "the {} sandbox needs Landlock, which this kernel does not provide ({}). \
                 Run with --sandbox off to allow unsandboxed commands.",
                self.mode,
                status.landlock_detail()
            )));
        }
        let landlock_fd = match status.landlock_abi {
            Some(abi) => self.landlock_ruleset(abi).map_err(ExecError::Sandbox)?,
            None => None,
        };
        let mount = (files && landlock_fd.is_some() && status.mount_ns.is_ok())
            .then(|| mount::MountPlan::new(&self.writable_places(), &self.protected_paths(), cwd));
        let seccomp = filter::build(filter::FilterOptions {
            deny_inet: self.deny_network,
            deny_mounts: mount.is_some(),
        })
        .map_err(ExecError::Sandbox)?;
        Ok(Some(PreparedSandbox {
            landlock_fd,
            seccomp,
            mount,
        }))
    }

    /// The Landlock ruleset; `None` when it would handle nothing on this kernel.
    #[cfg(target_os = "linux")]
    fn landlock_ruleset(&self, kernel_abi: i32) -> Result<Option<OwnedFd>, String> {
        let abi = ABI::V6;
        let files = self.mode != SandboxMode::Off;
        let net = self.deny_network && kernel_abi >= 4;
        let scopes = kernel_abi >= 6;
        if !files && !net && !scopes {
            return Ok(None);
        }
        let error =
            |error: landlock::RulesetError| format!("cannot build the Landlock ruleset: {error}");
        let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
        if files {
            ruleset = ruleset
                .handle_access(AccessFs::from_all(abi))
                .map_err(error)?;
        }
        if net {
            // Handled with no rule: every TCP bind and connect is denied.
            ruleset = ruleset
                .handle_access(AccessNet::from_all(abi))
                .map_err(error)?;
        }
        if scopes {
            ruleset = ruleset.scope(Scope::from_all(abi)).map_err(error)?;
        }
        let mut created = ruleset.create().map_err(error)?;
        if files {
            let existing = |paths: &'static [&'static str]| {
                paths.iter().map(Path::new).filter(|path| path.exists())
            };
            let terminal = AccessFs::from_read(abi) | AccessFs::WriteFile;
            created = created
                .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
                .and_then(|r| {
                    r.add_rules(path_beneath_rules(existing(SINKS), AccessFs::from_all(abi)))
                })
                .and_then(|r| r.add_rules(path_beneath_rules(existing(TERMINALS), terminal)))
                .and_then(|r| {
                    r.add_rules(path_beneath_rules(
                        self.writable_places(),
                        AccessFs::from_all(abi),
                    ))
                })
                .map_err(error)?;
        }
        let fd: Option<OwnedFd> = created.into();
        fd.map(Some)
            .ok_or_else(|| "Landlock is not enforced on this kernel".to_owned())
    }
}

/// Device files every sandboxed command may write: sinks and sources, never disks.
#[cfg(target_os = "linux")]
const SINKS: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Terminals: read and write, but no `ioctl` (Landlock ABI 5's `IOCTL_DEV`).
#[cfg(target_os = "linux")]
const TERMINALS: &[&str] = &["/dev/tty", "/dev/ptmx", "/dev/pts"];

fn temp_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = [
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
    ]
    .into_iter()
    .filter(|dir| dir.is_dir())
    .map(|dir| dir.canonicalize().unwrap_or(dir))
    .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Outside Linux no sandbox is ever prepared.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub(crate) enum PreparedSandbox {}

#[cfg(not(target_os = "linux"))]
impl PreparedSandbox {
    /// Never called: there is no value of this type.
    ///
    /// # Safety
    ///
    /// Nothing to uphold; the signature matches the Linux one.
    pub(crate) unsafe fn apply(&mut self) -> io::Result<()> {
        match *self {}
    }
}

/// A sandbox built in the parent, applied in the child.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub(crate) struct PreparedSandbox {
    landlock_fd: Option<OwnedFd>,
    seccomp: seccompiler::BpfProgram,
    mount: Option<mount::MountPlan>,
}

#[cfg(target_os = "linux")]
impl PreparedSandbox {
    /// Restricts the calling process. Call it in the child, after `fork` and
    /// before `exec` (from `pre_exec`), after `setsid`.
    ///
    /// # Safety
    ///
    /// Only async-signal-safe system calls are made; nothing allocates. The
    /// caller must be in a freshly forked child.
    pub(crate) unsafe fn apply(&mut self) -> io::Result<()> {
        if let Some(mount) = &mut self.mount {
            // SAFETY: forwarded from the caller.
            unsafe { mount.apply()? };
        }
        nix::sys::prctl::set_no_new_privs()?;
        if let Some(fd) = &self.landlock_fd {
            // SAFETY: landlock_restrict_self(ruleset_fd, flags=0) on a valid fd we own.
            let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if seccompiler::apply_filter(&self.seccomp).is_err() {
            // Not `io::Error::other(error)`: that boxes the error, an
            // allocation in the forked child. The failed seccomp(2) or
            // prctl(2) left its errno (the filter is never empty).
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(all(test, target_os = "linux"))]
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
            writable: vec![PathBuf::from(env!("CARGO_MANIFEST_DIR"))],
            ..SandboxPolicy::default()
        };
        let text = status.describe(&policy);
        assert!(text.contains("sandbox mode: workspace-write"), "{text}");
        if status.landlock_available() {
            let expected = format!("may write only under {}", env!("CARGO_MANIFEST_DIR"));
            assert!(text.contains(&expected), "{text}");
        } else {
            assert!(text.contains("refused"), "{text}");
        }
    }

    #[test]
    fn builds_the_network_filter() {
        let filter = filter::build(filter::FilterOptions {
            deny_inet: true,
            deny_mounts: false,
        })
        .unwrap();
        // Seccomp filters belong to the thread that installs them (no TSYNC): apply it
        // in a thread of its own, which then may not open IP sockets but Unix ones.
        let (inet, inet6, unix, packet) = std::thread::spawn(move || {
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
                open(libc::AF_PACKET),
            )
        })
        .join()
        .unwrap();
        assert_eq!(inet, Err(Some(libc::EACCES)));
        assert_eq!(inet6, Err(Some(libc::EACCES)));
        assert_eq!(unix, Ok(()));
        assert_eq!(packet, Err(Some(libc::EACCES)));
    }

    #[test]
    fn lists_each_guarantee_and_each_writable_place_once() {
        let status = SandboxStatus::probe();
        let tmp = std::env::temp_dir();
        let policy = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            writable: vec![tmp.clone(), tmp.clone(), PathBuf::from("/tmp")],
            deny_network: true,
            ..SandboxPolicy::default()
        };
        let guarantees = status.guarantees(&policy);
        let mut ids: Vec<&str> = guarantees.iter().map(|g| g.id).collect();
        let count = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), count, "{guarantees:?}");
        let places = policy.writable_places();
        let mut unique = places.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), places.len(), "{places:?}");
        if status.landlock_available() {
            let text = status.describe(&policy);
            assert!(!text.contains("/tmp, /tmp"), "{text}");
        }
    }
}
