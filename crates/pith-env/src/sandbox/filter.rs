//! The seccomp filter every sandboxed command gets.
//!
//! Denied (with `EACCES`), whatever the mode:
//! - `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)`: typing into a terminal;
//! - `io_uring_setup`, `io_uring_enter`, `io_uring_register`: io_uring runs
//!   operations (sockets, opens) that no other filter below sees;
//! - `socket()` of `AF_PACKET`, `AF_VSOCK`, `AF_XDP`, and `AF_NETLINK` with any
//!   protocol but `NETLINK_ROUTE` (libc's interface look-ups use that one);
//! - with `--deny-network`: `socket(AF_INET)` and `socket(AF_INET6)`;
//! - with the mount namespace: every call that changes mounts (`mount`,
//!   `umount2`, `mount_setattr`, `move_mount`, `open_tree`, `fsopen`, `fsmount`,
//!   `fspick`, `pivot_root`), so a command cannot undo its read-only mounts.
//!
//! Every rule is also installed for the x32 numbers (`nr | 0x4000_0000`) on
//! x86_64; another architecture (i386 `int 0x80`) kills the process.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// `TIOCSTI`: push a byte into a terminal's input queue.
const TIOCSTI: u64 = 0x5412;
/// `TIOCLINUX`: the Linux console's multiplexer (selection paste included).
const TIOCLINUX: u64 = 0x541C;
/// `AF_XDP` (not in every libc).
const AF_XDP: i32 = 44;
/// The x32 bit of x86_64 system call numbers.
const X32: i64 = 0x4000_0000;
/// The x32 number of `ioctl` (a compat entry, not `16 | X32`).
const X32_IOCTL: i64 = 514;

/// What the filter must deny beyond its fixed rules.
#[derive(Clone, Copy, Debug)]
pub(super) struct FilterOptions {
    /// Deny IPv4 and IPv6 sockets.
    pub(super) deny_inet: bool,
    /// Deny every mount-changing system call.
    pub(super) deny_mounts: bool,
}

/// Builds the filter (in the parent: this allocates).
pub(super) fn build(options: FilterOptions) -> Result<BpfProgram, String> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => TargetArch::x86_64,
        "aarch64" => TargetArch::aarch64,
        other => return Err(format!("the seccomp filter is not supported on {other}")),
    };
    let rules =
        rules(options).map_err(|error| format!("cannot build the seccomp filter: {error}"))?;
    let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (nr, rule) in rules {
        map.insert(nr, rule.clone());
        if arch == TargetArch::x86_64 {
            let x32 = if nr == libc::SYS_ioctl { X32_IOCTL } else { nr };
            map.insert(x32 | X32, rule);
        }
    }
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(|error| format!("cannot build the seccomp filter: {error}"))?;
    filter
        .try_into()
        .map_err(|error: seccompiler::BackendError| {
            format!("cannot compile the seccomp filter: {error}")
        })
}

type Rules = Vec<(i64, Vec<SeccompRule>)>;

fn rules(options: FilterOptions) -> Result<Rules, seccompiler::BackendError> {
    let eq = |arg: u8, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
    };
    let family = |family: i32| -> Result<SeccompRule, seccompiler::BackendError> {
        SeccompRule::new(vec![eq(0, family as u64)?])
    };
    let mut sockets = vec![
        family(libc::AF_PACKET)?,
        family(libc::AF_VSOCK)?,
        family(AF_XDP)?,
        SeccompRule::new(vec![
            eq(0, libc::AF_NETLINK as u64)?,
            SeccompCondition::new(
                2,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::NETLINK_ROUTE as u64,
            )?,
        ])?,
    ];
    if options.deny_inet {
        sockets.push(family(libc::AF_INET)?);
        sockets.push(family(libc::AF_INET6)?);
    }
    let mut rules: Rules = vec![
        (
            libc::SYS_ioctl,
            vec![
                SeccompRule::new(vec![eq(1, TIOCSTI)?])?,
                SeccompRule::new(vec![eq(1, TIOCLINUX)?])?,
            ],
        ),
        (libc::SYS_socket, sockets),
        (libc::SYS_io_uring_setup, Vec::new()),
        (libc::SYS_io_uring_enter, Vec::new()),
        (libc::SYS_io_uring_register, Vec::new()),
    ];
    if options.deny_mounts {
        for nr in [
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_mount_setattr,
            libc::SYS_move_mount,
            libc::SYS_open_tree,
            libc::SYS_fsopen,
            libc::SYS_fsmount,
            libc::SYS_fspick,
            libc::SYS_pivot_root,
        ] {
            rules.push((nr, Vec::new()));
        }
    }
    Ok(rules)
}
