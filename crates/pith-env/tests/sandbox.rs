//! The OS sandbox with real processes: Landlock keeps writes inside the roots, and
//! each escape the sandbox closes is tried for real under the mode it concerns.
// Marks the helpers as test code, where clippy allows printing and unwrap.
#![cfg(test)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use pith_env::{
    CancellationToken, Exec, ExecError, ExecRequest, LocalEnv, OutputStream, SandboxMode,
    SandboxPolicy, SandboxStatus,
};
use pith_testkit::{Prerequisite, skip};

/// A base for directories the sandbox does not always allow (it always allows the
/// temp dirs): the target dir, or the home directory when the checkout itself lives
/// under a temp dir.
fn unsandboxed_base() -> PathBuf {
    let always: Vec<PathBuf> = SandboxPolicy::always_writable()
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .collect();
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(PathBuf::from),
        Some(PathBuf::from("/var/lib")),
    ];
    for candidate in candidates.into_iter().flatten() {
        let Ok(real) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        if !always.iter().any(|dir| real.starts_with(dir)) {
            return real;
        }
    }
    panic!("no directory outside the temp dirs to test the sandbox with")
}

/// A directory removed when the test ends.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Two fresh directories outside the system temp dir (which the sandbox
/// always allows): one to allow, one that must stay untouched.
fn dirs(name: &str) -> (Scratch, PathBuf, PathBuf) {
    let base = unsandboxed_base().join(format!("pith-sandbox-{name}-{}", std::process::id()));
    let inside = base.join("inside");
    let outside = base.join("outside");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (Scratch(base), inside, outside)
}

async fn run(policy: SandboxPolicy, cwd: &Path, script: &str) -> Result<(i32, String), ExecError> {
    let mut request = ExecRequest::new(
        "/bin/bash",
        vec![OsString::from("-c"), OsString::from(script)],
        cwd,
    );
    request.sandbox = policy;
    let mut output = Vec::new();
    let mut sink = |_: OutputStream, bytes: &[u8]| output.extend_from_slice(bytes);
    let outcome = LocalEnv::new()
        .exec(request, &mut sink, CancellationToken::new())
        .await?;
    Ok((
        outcome.status.code(),
        String::from_utf8_lossy(&output).into_owned(),
    ))
}

/// Landlock is on these machines' kernels; where it is not, say why the
/// test did not run instead of passing silently.
fn landlock_or_explain(test: &str) -> bool {
    let status = SandboxStatus::probe();
    if !status.landlock_available() {
        skip(
            test,
            Prerequisite::Landlock,
            "Landlock is not available on this kernel",
        );
    }
    status.landlock_available()
}

/// Landlock and the mount namespace, or a visible skip.
fn mounts_or_explain(test: &str) -> bool {
    if !landlock_or_explain(test) {
        return false;
    }
    let status = SandboxStatus::probe();
    if !status.mount_namespace_available() {
        skip(
            test,
            Prerequisite::UserNamespaces,
            "user and mount namespaces are not usable here",
        );
    }
    status.mount_namespace_available()
}

/// Landlock ABI 6 (scopes), or a visible skip.
fn scopes_or_explain(test: &str) -> bool {
    if !landlock_or_explain(test) {
        return false;
    }
    let abi = SandboxStatus::probe().landlock_abi.unwrap_or(0);
    if abi < 6 {
        skip(
            test,
            Prerequisite::Landlock,
            "Landlock ABI 6 (scopes) is not available",
        );
    }
    abi >= 6
}

fn read_only() -> SandboxPolicy {
    SandboxPolicy {
        mode: SandboxMode::ReadOnly,
        ..SandboxPolicy::default()
    }
}

fn workspace_write(root: &Path) -> SandboxPolicy {
    SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        writable: vec![root.to_path_buf()],
        ..SandboxPolicy::default()
    }
}

/// A shell line running `code` with python3.
fn python(code: &str) -> String {
    format!("python3 - <<'PY'\n{code}\nPY")
}

#[tokio::test]
async fn workspace_write_allows_the_roots_and_refuses_everything_else() {
    if !landlock_or_explain("workspace_write_allows_the_roots_and_refuses_everything_else") {
        return;
    }
    let (_scratch, inside, outside) = dirs("ww");
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        writable: vec![inside.clone()],
        ..SandboxPolicy::default()
    };
    let script = format!(
        "echo in > {inside}/a.txt && echo tmp > \"${{TMPDIR:-/tmp}}/pith-sandbox-$$\" && rm \"${{TMPDIR:-/tmp}}/pith-sandbox-$$\" && echo ok; \
         echo out > {outside}/b.txt; echo status=$?; cat /etc/hostname >/dev/null && echo read-ok",
        inside = inside.display(),
        outside = outside.display()
    );
    let (code, output) = run(policy, &inside, &script).await.unwrap();
    assert_eq!(code, 0, "{output}");
    assert!(output.contains("ok\n"), "{output}");
    assert!(
        output.contains("Permission denied") || output.contains("Read-only file system"),
        "{output}"
    );
    assert!(output.contains("status=1"), "{output}");
    assert!(output.contains("read-ok"), "{output}");
    assert_eq!(
        std::fs::read_to_string(inside.join("a.txt")).unwrap(),
        "in\n"
    );
    assert!(
        !outside.join("b.txt").exists(),
        "a file was created outside the roots"
    );
}

#[tokio::test]
async fn read_only_refuses_every_write_but_dev_null() {
    if !landlock_or_explain("read_only_refuses_every_write_but_dev_null") {
        return;
    }
    let (_scratch, inside, _) = dirs("ro");
    let policy = SandboxPolicy {
        mode: SandboxMode::ReadOnly,
        ..SandboxPolicy::default()
    };
    let script = format!(
        "echo x > /dev/null && echo devnull-ok; echo x > {}/c.txt; echo status=$?",
        inside.display()
    );
    let (_, output) = run(policy, &inside, &script).await.unwrap();
    assert!(output.contains("devnull-ok"), "{output}");
    assert!(output.contains("status=1"), "{output}");
    assert!(!inside.join("c.txt").exists());
}

#[tokio::test]
async fn network_denial_refuses_inet_sockets_but_not_unix_ones() {
    let (_scratch, inside, _) = dirs("net");
    let policy = SandboxPolicy {
        deny_network: true,
        ..SandboxPolicy::default()
    };
    let script = "python3 - <<'PY'\nimport socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    print('inet-allowed')\nexcept OSError as e:\n    print('inet-denied', e.errno)\nsocket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\nprint('unix-ok')\nPY";
    let (_, output) = run(policy, &inside, script).await.unwrap();
    assert!(output.contains("inet-denied"), "{output}");
    assert!(output.contains("unix-ok"), "{output}");
}

#[tokio::test]
async fn the_sandbox_does_not_leak_into_later_unsandboxed_commands() {
    let (_scratch, inside, outside) = dirs("leak");
    let (_, _) = run(
        SandboxPolicy {
            mode: SandboxMode::ReadOnly,
            ..SandboxPolicy::default()
        },
        &inside,
        "true",
    )
    .await
    .unwrap();
    let script = format!("echo free > {}/d.txt && echo wrote", outside.display());
    let (code, output) = run(SandboxPolicy::off(), &inside, &script).await.unwrap();
    assert_eq!(code, 0, "{output}");
    assert!(outside.join("d.txt").exists());
}

/// Issue 21, escape 1: commands run in a new session without a controlling
/// terminal, and TIOCSTI is denied even on a terminal opened by path (root
/// may use TIOCSTI on any terminal).
#[tokio::test]
async fn a_command_cannot_type_into_a_terminal() {
    if !landlock_or_explain("a_command_cannot_type_into_a_terminal") {
        return;
    }
    let (_scratch, inside, _) = dirs("tty");
    // SAFETY: the usual pty calls on a descriptor this test owns.
    let (master, slave) = unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0);
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let slave = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        (master, slave)
    };
    let attack = python(&format!(
        "import fcntl, os, termios\n\
         try:\n    os.open('/dev/tty', os.O_RDWR)\n    print('ctty-open')\n\
         except OSError as e:\n    print('no-ctty', e.errno)\n\
         fd = os.open('{slave}', os.O_RDWR | os.O_NOCTTY)\n\
         try:\n    fcntl.ioctl(fd, termios.TIOCSTI, b'x')\n    print('injected')\n\
         except OSError as e:\n    print('tiocsti-denied', e.errno)"
    ));
    let (_, output) = run(read_only(), &inside, &attack).await.unwrap();
    let (_, control) = run(SandboxPolicy::off(), &inside, &attack).await.unwrap();
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(master) };
    assert!(output.contains("no-ctty"), "{output}");
    assert!(output.contains("tiocsti-denied"), "{output}");
    assert!(!output.contains("injected"), "{output}");
    // Unsandboxed, the same command still has no controlling terminal.
    assert!(control.contains("no-ctty"), "{control}");
}

/// Issue 21, escape 2: io_uring cannot open a socket past --deny-network, and
/// a plain connect to a local listener fails too.
#[tokio::test]
async fn io_uring_and_tcp_cannot_reach_a_local_listener_under_deny_network() {
    let (_scratch, inside, _) = dirs("uring");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // The attack itself: io_uring's own socket and connect operations.
    let uring = python(&URING_CONNECT.replace("PORT", &port.to_string()));
    // Control: unsandboxed, it reaches the listener (so the denials below are the sandbox's).
    let (_, output) = run(SandboxPolicy::off(), &inside, &uring).await.unwrap();
    assert!(output.contains("uring-connect-submitted"), "{output}");
    assert!(
        listener.accept().is_ok(),
        "control: the io_uring connect did not arrive: {output}"
    );
    let deny = SandboxPolicy {
        deny_network: true,
        ..SandboxPolicy::default()
    };
    let (_, output) = run(deny, &inside, &uring).await.unwrap();
    assert!(output.contains("uring-denied"), "{output}");
    assert!(listener.accept().is_err(), "io_uring got through: {output}");
    let attack = python(&format!(
        "import ctypes, socket\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         params = ctypes.create_string_buffer(120)\n\
         fd = libc.syscall(425, 8, params)\n\
         print('uring-denied', ctypes.get_errno()) if fd < 0 else print('uring-open')\n\
         try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('connected')\n\
         except OSError as e:\n    print('connect-denied', e.errno)"
    ));
    let policy = SandboxPolicy {
        deny_network: true,
        ..SandboxPolicy::default()
    };
    let (_, output) = run(policy, &inside, &attack).await.unwrap();
    assert!(output.contains("uring-denied"), "{output}");
    assert!(!output.contains("uring-open"), "{output}");
    assert!(output.contains("connect-denied"), "{output}");
    assert!(listener.accept().is_err(), "the listener got a connection");
    // io_uring is denied under any sandbox mode, not only with --deny-network.
    let (_, output) = run(read_only(), &inside, &attack).await.unwrap();
    if SandboxStatus::probe().landlock_available() {
        assert!(output.contains("uring-denied"), "{output}");
    }
}

/// `io_uring_setup`, then `IORING_OP_SOCKET(AF_INET)` and `IORING_OP_CONNECT`
/// to `127.0.0.1:PORT` through the rings: the path that bypassed the socket filter.
const URING_CONNECT: &str = r#"import ctypes, mmap, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
port = PORT
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 8, params)
if fd < 0:
    print('uring-denied', ctypes.get_errno()); sys.exit()
p = params.raw
sq_entries, cq_entries = struct.unpack_from('II', p, 0)
sq_head, sq_tail, sq_mask, _, _, _, sq_array = struct.unpack_from('7I', p, 40)
cq_head, cq_tail, cq_mask, _, _, cqes = struct.unpack_from('6I', p, 80)
sq = mmap.mmap(fd, sq_array + sq_entries * 4, offset=0)
sqes = mmap.mmap(fd, sq_entries * 64, offset=0x10000000)
cq = mmap.mmap(fd, cqes + cq_entries * 16, offset=0x8000000)
def run(opcode, target, off, addr, length):
    tail = struct.unpack_from('I', sq, sq_tail)[0]
    i = tail & sq_mask
    sqes[i * 64:(i + 1) * 64] = struct.pack('BBHiQQII', opcode, 0, 0, target, off, addr, length, 0) + bytes(32)
    struct.pack_into('I', sq, sq_array + i * 4, i)
    struct.pack_into('I', sq, sq_tail, tail + 1)
    if libc.syscall(426, fd, 1, 1, 1, None, 0) < 0:
        return -ctypes.get_errno()
    head = struct.unpack_from('I', cq, cq_head)[0]
    res = struct.unpack_from('i', cq, cqes + (head & cq_mask) * 16 + 8)[0]
    struct.pack_into('I', cq, cq_head, head + 1)
    return res
sock = run(45, socket.AF_INET, socket.SOCK_STREAM, 0, 0)
if sock < 0:
    print('uring-socket-failed', -sock); sys.exit()
addr = ctypes.create_string_buffer(struct.pack('!HH4s8x', 0, port, socket.inet_aton('127.0.0.1')))
struct.pack_into('H', addr, 0, socket.AF_INET)
run(16, sock, 16, ctypes.addressof(addr), 0)
print('uring-connect-submitted')
"#;

/// Issue 21, escape 2: raw packet, vsock, XDP and netlink sockets (but
/// NETLINK_ROUTE) are denied in a sandbox.
#[tokio::test]
async fn raw_socket_families_are_denied() {
    if !landlock_or_explain("raw_socket_families_are_denied") {
        return;
    }
    let (_scratch, inside, _) = dirs("families");
    let attack = python(
        "import socket\n\
         tries = [('packet', 17, socket.SOCK_RAW, 0), ('vsock', 40, socket.SOCK_STREAM, 0),\n\
                  ('xdp', 44, socket.SOCK_RAW, 0), ('netlink-audit', 16, socket.SOCK_RAW, 9),\n\
                  ('netlink-uevent', 16, socket.SOCK_RAW, 15), ('netlink-route', 16, socket.SOCK_RAW, 0)]\n\
         for name, family, kind, proto in tries:\n\
         \x20   try:\n\
         \x20       socket.socket(family, kind, proto).close()\n\
         \x20       print(name, 'open')\n\
         \x20   except OSError as e:\n\
         \x20       print(name, 'denied' if e.errno == 13 else 'error %d' % e.errno)",
    );
    let (_, output) = run(workspace_write(&inside), &inside, &attack)
        .await
        .unwrap();
    for name in ["packet", "vsock", "xdp", "netlink-audit", "netlink-uevent"] {
        assert!(output.contains(&format!("{name} denied")), "{output}");
    }
    assert!(output.contains("netlink-route open"), "{output}");
}

/// Issue 21, escape 3: a sandboxed command cannot stop a process outside it.
#[tokio::test]
async fn a_command_cannot_signal_a_process_outside_the_sandbox() {
    if !scopes_or_explain("a_command_cannot_signal_a_process_outside_the_sandbox") {
        return;
    }
    let (_scratch, inside, _) = dirs("signal");
    let mut outside = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let script = format!("kill -STOP {}; echo status=$?", outside.id());
    let (_, output) = run(read_only(), &inside, &script).await.unwrap();
    let state = std::fs::read_to_string(format!("/proc/{}/stat", outside.id())).unwrap();
    let _ = outside.kill();
    let _ = outside.wait();
    assert!(output.contains("status=1"), "{output}");
    let state = state.rsplit(')').next().unwrap().split_whitespace().next();
    assert_ne!(state, Some("T"), "the outside process was stopped");
}

/// Issue 21, escape 4: under workspace-write, `.git/` is read-only for
/// commands, so neither a hook nor `core.fsmonitor` can be planted for the
/// user's next, unsandboxed `git status`.
#[tokio::test]
async fn git_hooks_and_config_cannot_be_planted() {
    if !mounts_or_explain("git_hooks_and_config_cannot_be_planted") {
        return;
    }
    let (_scratch, inside, outside) = dirs("git");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(&inside)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &outside)
            .output()
            .unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    let marker = outside.join("planted");
    let script = format!(
        "printf '#!/bin/sh\\ntouch {m}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
         git config core.fsmonitor 'touch {m}; true'; echo config=$?; \
         echo '[core]' >> .git/config; echo append=$?; echo ok > file.txt && echo wrote-file",
        m = marker.display()
    );
    let (_, output) = run(workspace_write(&inside), &inside, &script)
        .await
        .unwrap();
    assert!(output.contains("wrote-file"), "{output}");
    assert!(
        output.contains("config=") && !output.contains("config=0"),
        "{output}"
    );
    assert!(output.contains("append=1"), "{output}");
    assert!(!inside.join(".git/hooks/pre-commit").exists(), "{output}");
    let status = git(&["status", "--short"]);
    assert!(status.status.success());
    assert!(!marker.exists(), "git status ran planted code: {output}");
    let config = std::fs::read_to_string(inside.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
}

/// A file's mode, modification time and user xattr.
fn metadata_of(path: &Path) -> (u32, i64, Option<Vec<u8>>) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    let name = std::ffi::CString::new("user.pith").unwrap();
    let file = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut buf = [0u8; 64];
    // SAFETY: getxattr into a buffer of the given size.
    let len = unsafe {
        libc::getxattr(
            file.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let xattr = (len >= 0).then(|| buf[..len as usize].to_vec());
    (meta.mode(), meta.mtime(), xattr)
}

/// Issue 21, escape 5: chmod, chown, utimes and setxattr outside the writable
/// places fail, in both modes.
#[tokio::test]
async fn metadata_outside_the_roots_cannot_change() {
    if !mounts_or_explain("metadata_outside_the_roots_cannot_change") {
        return;
    }
    let (_scratch, inside, outside) = dirs("meta");
    let target = outside.join("target.txt");
    std::fs::write(&target, "x").unwrap();
    let before = metadata_of(&target);
    let attack = python(&format!(
        "import os\n\
         path = '{}'\n\
         for name, op in [('chmod', lambda: os.chmod(path, 0o777)), ('chown', lambda: os.chown(path, 1, 1)),\n\
         \x20                ('utime', lambda: os.utime(path, (1, 1))), ('xattr', lambda: os.setxattr(path, 'user.pith', b'x'))]:\n\
         \x20   try:\n\
         \x20       op()\n\
         \x20       print(name, 'changed')\n\
         \x20   except OSError as e:\n\
         \x20       print(name, 'denied', e.errno)",
        target.display()
    ));
    for policy in [workspace_write(&inside), read_only()] {
        let (_, output) = run(policy, &inside, &attack).await.unwrap();
        for name in ["chmod", "chown", "utime", "xattr"] {
            assert!(output.contains(&format!("{name} denied")), "{output}");
        }
        assert_eq!(metadata_of(&target), before, "{output}");
    }
}

/// Issue 21, escape 7: read-only means read-only, `/dev/shm` and `/tmp` included.
#[tokio::test]
async fn read_only_denies_dev_shm_and_tmp() {
    if !landlock_or_explain("read_only_denies_dev_shm_and_tmp") {
        return;
    }
    let (_scratch, inside, _) = dirs("shm");
    let name = format!("pith-ro-{}", std::process::id());
    let script = format!(
        "echo x > /dev/shm/{name}; echo shm=$?; echo x > /tmp/{name}; echo tmp=$?; echo x > /dev/null && echo null-ok"
    );
    let (_, output) = run(read_only(), &inside, &script).await.unwrap();
    let shm = Path::new("/dev/shm").join(&name);
    let tmp = Path::new("/tmp").join(&name);
    let leaked = (shm.exists(), tmp.exists());
    let _ = std::fs::remove_file(shm);
    let _ = std::fs::remove_file(tmp);
    assert!(output.contains("shm=1"), "{output}");
    assert!(output.contains("tmp=1"), "{output}");
    assert!(output.contains("null-ok"), "{output}");
    assert_eq!(leaked, (false, false), "{output}");
}
