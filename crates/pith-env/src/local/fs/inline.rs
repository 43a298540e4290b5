//! Which path lookups may run in place on the calling thread.
//!
//! A lookup in place (see the [module docs](super)) is only safe where it
//! cannot hang: a file system the kernel answers from its own caches and
//! devices. A network or user-space file system (NFS, CIFS/SMB, 9p, Ceph,
//! FUSE, virtiofs) can stall a lookup for as long as its server does, and a
//! stalled runtime worker stalls every call scheduled on it; an automount
//! point (autofs) can mount one on first access. So:
//!
//! - A confined view decides **per root**, once, from `fstatfs` of the root's
//!   handle ([`is_local_magic`]), and its in-place `openat2` adds
//!   `RESOLVE_NO_XDEV`: a resolution that would cross into any other mount
//!   (a network file system mounted below the root) stops with `EXDEV`
//!   before touching it and is retried on the blocking pool.
//! - The unconfined view has no root: a path, or a symlink on it, can lead
//!   anywhere. It looks up in place only while **every** mount of the
//!   process's mount namespace is of a local type ([`is_local_type_name`],
//!   from `/proc/self/mountinfo`); a single network, FUSE or unknown mount
//!   sends its lookups to the pool. The table is read again whenever the
//!   kernel reports a mount or unmount (`poll` on the open mountinfo file
//!   reports `POLLPRI`), checked before a lookup at most once a millisecond.
//!
//! Everything not known to be local — unknown types included — goes through
//! the pool, where a hang holds one pool thread and the call's cancellation
//! still answers.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Instant;

/// Whether a file system whose `statfs` `f_type` is `magic` is local: served
/// by the kernel from memory or a local device, so a lookup cannot wait on a
/// server. Unknown types are not.
pub(crate) fn is_local_magic(magic: u64) -> bool {
    matches!(
        magic,
        0xEF53 // ext2, ext3, ext4
            | 0x5846_5342 // xfs
            | 0x9123_683E // btrfs
            | 0x0102_1994 // tmpfs (and devtmpfs)
            | 0x8584_58F6 // ramfs
            | 0x794C_7630 // overlay
            | 0xF2F5_2010 // f2fs
            | 0xCA45_1A4E // bcachefs
            | 0x2FC1_2FC1 // zfs
            | 0x5265_4973 // reiserfs
            | 0x3153_464A // jfs
            | 0x7371_7368 // squashfs
            | 0xE0F5_E1E2 // erofs
            | 0x9660 // iso9660
            | 0x4D44 // vfat, msdos
            | 0x2011_BAB0 // exfat
            | 0x7366_746E // ntfs3 (the kernel driver; ntfs-3g is FUSE)
            | 0x9FA0 // proc
            | 0x6265_6572 // sysfs
            | 0x1CD1 // devpts
            | 0x6367_7270 // cgroup2
            | 0x0027_E0EB // cgroup
            | 0x1980_0202 // mqueue
            | 0x6462_6720 // debugfs
            | 0x7472_6163 // tracefs
            | 0x7363_6673 // securityfs
            | 0xCAFE_4A11 // bpf
            | 0x6165_676C // pstore
            | 0x6265_6570 // configfs
            | 0x9584_58F6 // hugetlbfs
            | 0xDE5E_81E4 // efivarfs
            | 0x4249_4E4D // binfmt_misc
            | 0x6E73_6673 // nsfs
    )
}

/// Whether a mount whose type `/proc/self/mountinfo` names `name` is local
/// (the same set as [`is_local_magic`], by name). `fuse.*`, `fuseblk`,
/// `nfs*`, `cifs`, `smb3`, `9p`, `ceph`, `virtiofs`, `autofs` and every
/// unknown name are not.
pub(crate) fn is_local_type_name(name: &str) -> bool {
    matches!(
        name,
        "ext2"
            | "ext3"
            | "ext4"
            | "xfs"
            | "btrfs"
            | "tmpfs"
            | "devtmpfs"
            | "ramfs"
            | "overlay"
            | "f2fs"
            | "bcachefs"
            | "zfs"
            | "reiserfs"
            | "jfs"
            | "squashfs"
            | "erofs"
            | "iso9660"
            | "vfat"
            | "msdos"
            | "exfat"
            | "ntfs3"
            | "proc"
            | "sysfs"
            | "devpts"
            | "cgroup2"
            | "cgroup"
            | "mqueue"
            | "debugfs"
            | "tracefs"
            | "securityfs"
            | "bpf"
            | "pstore"
            | "configfs"
            | "hugetlbfs"
            | "efivarfs"
            | "binfmt_misc"
            | "fusectl"
            | "nsfs"
    )
}

/// The file-system type of each line of a `/proc/PID/mountinfo` text (the
/// first field after the ` - ` separator).
pub(crate) fn mount_types(mountinfo: &str) -> impl Iterator<Item = &str> {
    mountinfo.lines().filter_map(|line| {
        let (_, after) = line.split_once(" - ")?;
        after.split_whitespace().next()
    })
}

/// Whether every mount listed in a mountinfo text is local (an empty or
/// unreadable table is not).
pub(crate) fn all_mounts_local(mountinfo: &str) -> bool {
    let mut any = false;
    for kind in mount_types(mountinfo) {
        if !is_local_type_name(kind) {
            return false;
        }
        any = true;
    }
    any
}

/// Whether the file system holding `fd` is local (`fstatfs`); `false` when
/// it cannot be told.
pub(crate) fn fd_is_local(fd: impl AsFd) -> bool {
    #[allow(
        clippy::unnecessary_cast,
        reason = "f_type's integer type differs between targets"
    )]
    rustix::fs::fstatfs(fd).is_ok_and(|stat| is_local_magic(stat.f_type as u64))
}

/// The process's mount table, open, and whether every mount in it is local.
///
/// Asked before every lookup, from every thread: the answer is an atomic and
/// the table's `poll` needs no lock, so threads do not queue on each other
/// (a mutex around the poll was a contended lock per lookup once a batch's
/// calls ran on several threads). Only a re-read takes the lock.
struct MountWatch {
    file: File,
    local: AtomicBool,
    reread: Mutex<()>,
    /// When the table was last polled, in microseconds since `start`.
    polled: AtomicU64,
    start: Instant,
}

/// The table is polled at most once per this long: a batch's read looks up
/// its path three times (its queue key, its metadata, its open), and a
/// `poll` costs more than the rest of a cached lookup. A mount made in the
/// window is seen by the first lookup after it, as one made just after a
/// poll always was.
const POLL_INTERVAL_MICROS: u64 = 1_000;

impl MountWatch {
    fn open() -> Option<MountWatch> {
        let file = File::open("/proc/self/mountinfo").ok()?;
        let local = read_all_local(&file);
        Some(MountWatch {
            file,
            local: AtomicBool::new(local),
            reread: Mutex::new(()),
            polled: AtomicU64::new(0),
            start: Instant::now(),
        })
    }

    /// Whether every mount is local now: the table is read again when the
    /// kernel reports that it changed since the last look. The kernel reports
    /// a change to one `poll` only, so the thread that sees it first says
    /// "not local" until its re-read is done: the others send their lookups
    /// to the pool meanwhile rather than trust the old answer.
    fn all_local(&self) -> bool {
        let now = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        let last = self.polled.load(Ordering::Relaxed);
        if now.saturating_sub(last) < POLL_INTERVAL_MICROS && last != 0 {
            return self.local.load(Ordering::SeqCst);
        }
        self.polled.store(now.max(1), Ordering::Relaxed);
        if changed(&self.file) {
            self.local.store(false, Ordering::SeqCst);
            let _reread = self.reread.lock().unwrap_or_else(PoisonError::into_inner);
            self.local
                .store(read_all_local(&self.file), Ordering::SeqCst);
        }
        self.local.load(Ordering::SeqCst)
    }
}

/// Reads the whole table from its start (positioned reads: no shared
/// offset to move); `false` when that fails.
fn read_all_local(file: &File) -> bool {
    let mut text = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match file.read_at(&mut chunk, text.len() as u64) {
            Ok(0) => break,
            Ok(read) => text.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    std::str::from_utf8(&text).is_ok_and(all_mounts_local)
}

/// Whether the mount table changed since `file` was opened or last polled
/// (the kernel reports a change as `POLLPRI`, once); a failed poll counts as
/// a change.
fn changed(file: &File) -> bool {
    let mut poll = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLPRI,
        revents: 0,
    };
    // SAFETY: one valid `pollfd` that lives across the call, `nfds` = 1,
    // timeout 0 (no wait); `file` keeps the descriptor open.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    ready < 0 || poll.revents & (libc::POLLPRI | libc::POLLERR) != 0
}

/// Whether the unconfined view may look up paths in place: every mount of
/// this process is of a local type (see the module docs). Never blocks on a
/// file system: it reads procfs.
pub(crate) fn unconfined_in_place() -> bool {
    static WATCH: OnceLock<Option<MountWatch>> = OnceLock::new();
    WATCH
        .get_or_init(MountWatch::open)
        .as_ref()
        .is_some_and(MountWatch::all_local)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_disk_and_memory_file_systems_are_local() {
        for magic in [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0x794C_7630] {
            assert!(is_local_magic(magic), "{magic:#x}");
        }
        for name in [
            "ext4", "xfs", "btrfs", "tmpfs", "overlay", "proc", "cgroup2",
        ] {
            assert!(is_local_type_name(name), "{name}");
        }
    }

    #[test]
    fn network_user_space_and_unknown_file_systems_are_not() {
        // nfs, smb, cifs, smb2, fuse, 9p, ceph, afs, autofs, an unknown one.
        for magic in [
            0x6969,
            0x517B,
            0xFF53_4D42,
            0xFE53_4D42,
            0x6573_5546,
            0x0102_1997,
            0x00C3_6400,
            0x5346_414F,
            0x0187,
            0x1234_5678,
        ] {
            assert!(!is_local_magic(magic), "{magic:#x}");
        }
        for name in [
            "nfs",
            "nfs4",
            "cifs",
            "smb3",
            "9p",
            "ceph",
            "fuse",
            "fuse.sshfs",
            "fuseblk",
            "virtiofs",
            "autofs",
            "",
            "somethingnew",
        ] {
            assert!(!is_local_type_name(name), "{name:?}");
        }
    }

    const LOCAL_TABLE: &str = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:21 / /proc rw,nosuid - proc proc rw
24 22 0:5 / /dev rw - devtmpfs udev rw,size=10k
25 22 0:30 / /mnt/my\\040disk rw - xfs /dev/sdb1 rw
";

    #[test]
    fn a_table_of_local_mounts_allows_lookups_in_place() {
        let kinds: Vec<&str> = mount_types(LOCAL_TABLE).collect();
        assert_eq!(kinds, ["ext4", "proc", "devtmpfs", "xfs"]);
        assert!(all_mounts_local(LOCAL_TABLE));
    }

    #[test]
    fn one_network_fuse_or_automount_entry_sends_every_lookup_to_the_pool() {
        for line in [
            "30 22 0:40 / /home/shared rw - nfs4 server:/export rw,vers=4.2",
            "31 22 0:41 / /mnt/remote rw,nosuid - fuse.sshfs host:/ rw,user_id=0",
            "32 22 0:42 / /net rw - autofs /etc/auto.net rw,fd=7",
            "33 22 0:43 / /srv rw - newfs none rw",
        ] {
            let table = format!("{LOCAL_TABLE}{line}\n");
            assert!(!all_mounts_local(&table), "{line}");
        }
        assert!(!all_mounts_local(""), "an empty table tells nothing");
    }

    #[test]
    fn fstatfs_of_proc_and_of_a_pipe_decide_as_their_magic_says() {
        // procfs is local; a pipe lives on pipefs, which no lookup reaches
        // and which is not in the list.
        assert!(fd_is_local(File::open("/proc").unwrap()));
        let (reader, _writer) = std::io::pipe().unwrap();
        assert!(!fd_is_local(&reader));
    }

    #[test]
    fn the_watch_agrees_with_this_machines_mount_table() {
        let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        assert_eq!(unconfined_in_place(), all_mounts_local(&table));
        // Asked again without a mount in between: the same answer.
        assert_eq!(unconfined_in_place(), all_mounts_local(&table));
    }
}
