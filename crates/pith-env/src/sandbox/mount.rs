//! The mount namespace: everything outside the writable places read-only, and
//! the protected paths (`.git/`, `--protect`) read-only inside them.
//!
//! Landlock grants rights beneath a path and cannot take them back for a
//! subtree, and it does not cover metadata (chmod, chown, utimes, setxattr).
//! A read-only mount covers both. As bubblewrap does, the child enters a new
//! mount namespace (inside a new user namespace unless it runs as root), marks
//! every mount a slave of the parent namespace (nothing propagates back), then:
//!
//! 1. clones each writable place (`open_tree(OPEN_TREE_CLONE | AT_RECURSIVE)`:
//!    a detached copy with the original flags);
//! 2. makes the whole tree read-only (`mount_setattr("/", AT_RECURSIVE, RDONLY)`);
//! 3. attaches the clones back on their places (`move_mount`): writable again;
//! 4. clones each protected path, makes the clone read-only and attaches it on
//!    the path;
//! 5. changes into the working directory again (the old one is on the
//!    read-only mount underneath).
//!
//! The seccomp filter then denies every mount-changing call, so a command
//! cannot undo this. Everything here runs in the forked child: raw system
//! calls only, on buffers the parent prepared.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const READ_ONLY: MountAttr = MountAttr {
    attr_set: MOUNT_ATTR_RDONLY,
    attr_clr: 0,
    propagation: 0,
    userns_fd: 0,
};

/// Everything the child needs, built in the parent.
#[derive(Debug)]
pub(super) struct MountPlan {
    /// The `uid_map` and `gid_map` lines when a user namespace is needed (not root).
    id_maps: Option<(Vec<u8>, Vec<u8>)>,
    /// Places that stay writable.
    writable: Vec<CString>,
    /// One slot per writable place for its clone's descriptor (filled in the child).
    clones: Vec<libc::c_int>,
    /// Paths made read-only inside the writable places.
    read_only: Vec<CString>,
    /// The command's working directory.
    cwd: CString,
}

impl MountPlan {
    /// A plan keeping `writable` writable and `read_only` read-only.
    pub(super) fn new(writable: &[PathBuf], read_only: &[PathBuf], cwd: &Path) -> MountPlan {
        let (uid, gid) = (
            nix::unistd::geteuid().as_raw(),
            nix::unistd::getegid().as_raw(),
        );
        let c = |path: &Path| CString::new(path.as_os_str().as_bytes()).ok();
        let writable: Vec<CString> = writable.iter().filter_map(|p| c(p)).collect();
        MountPlan {
            id_maps: (uid != 0).then(|| {
                (
                    format!("{uid} {uid} 1\n").into_bytes(),
                    format!("{gid} {gid} 1\n").into_bytes(),
                )
            }),
            clones: vec![-1; writable.len()],
            writable,
            read_only: read_only.iter().filter_map(|p| c(p)).collect(),
            cwd: c(cwd).unwrap_or_else(|| CString::from(c"/")),
        }
    }

    /// Sets the namespace up. In the child, after `fork`, before `exec`.
    ///
    /// # Safety
    ///
    /// Only raw system calls on memory the parent prepared; must run in a
    /// freshly forked, single-threaded child.
    pub(super) unsafe fn apply(&mut self) -> io::Result<()> {
        let mut flags = libc::CLONE_NEWNS;
        if self.id_maps.is_some() {
            flags |= libc::CLONE_NEWUSER;
        }
        // SAFETY: every call below takes constants, NUL-terminated strings the
        // parent built, or descriptors this function opened.
        unsafe {
            check(libc::unshare(flags))?;
            if let Some((uid_map, gid_map)) = &self.id_maps {
                write_file(c"/proc/self/setgroups".as_ptr(), b"deny")?;
                write_file(c"/proc/self/uid_map".as_ptr(), uid_map)?;
                write_file(c"/proc/self/gid_map".as_ptr(), gid_map)?;
            }
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ))?;
            for (path, slot) in self.writable.iter().zip(self.clones.iter_mut()) {
                *slot = clone_tree(path.as_ptr())?;
            }
            set_read_only(libc::AT_FDCWD, c"/".as_ptr(), 0)?;
            for (path, &fd) in self.writable.iter().zip(self.clones.iter()) {
                attach(fd, path.as_ptr())?;
            }
            for path in &self.read_only {
                let fd = clone_tree(path.as_ptr())?;
                set_read_only(fd, c"".as_ptr(), libc::AT_EMPTY_PATH as libc::c_uint)?;
                attach(fd, path.as_ptr())?;
            }
            check(libc::chdir(self.cwd.as_ptr()))?;
        }
        Ok(())
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn check_long(rc: libc::c_long) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as libc::c_int)
    }
}

/// # Safety
/// `path` must be a NUL-terminated string.
unsafe fn write_file(path: *const libc::c_char, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: open, write and close on a valid path and buffer.
    unsafe {
        let fd = libc::open(path, libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A detached recursive copy of the mount tree at `path`.
///
/// # Safety
/// `path` must be a NUL-terminated string.
unsafe fn clone_tree(path: *const libc::c_char) -> io::Result<libc::c_int> {
    // SAFETY: open_tree on a valid path.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path,
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | AT_RECURSIVE,
        )
    })
}

/// Makes the tree at (`dirfd`, `path`) read-only, recursively.
///
/// # Safety
/// `path` must be a NUL-terminated string.
unsafe fn set_read_only(
    dirfd: libc::c_int,
    path: *const libc::c_char,
    flags: libc::c_uint,
) -> io::Result<()> {
    // SAFETY: mount_setattr with a valid path and a live `mount_attr`.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path,
            flags | AT_RECURSIVE,
            &READ_ONLY as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
    .map(|_| ())
}

/// Attaches the detached tree `fd` on `path` and closes `fd`.
///
/// # Safety
/// `path` must be a NUL-terminated string.
unsafe fn attach(fd: libc::c_int, path: *const libc::c_char) -> io::Result<()> {
    // SAFETY: move_mount of a descriptor this module opened.
    let moved = check_long(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            path,
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    });
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(fd) };
    moved.map(|_| ())
}

/// Whether the mount namespace can be set up here (tried once, in a child
/// running `/bin/sh -c :`); the reason when not. `PITH_TEST_NO_MOUNT_NS=1`
/// makes it unavailable, for tests.
pub(super) fn available() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    if std::env::var_os("PITH_TEST_NO_MOUNT_NS").is_some_and(|v| v == "1") {
        return Err("disabled by PITH_TEST_NO_MOUNT_NS=1".to_owned());
    }
    PROBE.get_or_init(probe).clone()
}

fn probe() -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let tmp = std::env::temp_dir();
    let mut plan = MountPlan::new(&[tmp], &[], Path::new("/"));
    let mut command = std::process::Command::new("/bin/sh");
    command
        .args(["-c", ":"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the closure only makes raw system calls on the plan's buffers.
    unsafe {
        command.pre_exec(move || plan.apply());
    }
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("a test namespace exited with {status}")),
        Err(error) => Err(format!(
            "user or mount namespaces are not usable here ({error})"
        )),
    }
}
