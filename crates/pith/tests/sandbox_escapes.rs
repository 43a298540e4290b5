//! Issue 21 through the real binary: inherited descriptors, escapees with a
//! scrubbed environment (after `pith call` and after `pith mcp`), and
//! `pith sandbox status --json`, each claimed guarantee tried for real.
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pith_env::SandboxStatus;
use pith_testkit::{Prerequisite, skip};
use serde_json::{Value, json};

const PITH: &str = env!("CARGO_BIN_EXE_pith");

/// Only reached when something is wrong.
const PATIENCE: Duration = Duration::from_secs(10);

/// A fresh directory outside the temp dirs (which workspace-write always allows).
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = Command::new("chattr")
            .arg("-R")
            .arg("-i")
            .arg(&self.0)
            .output();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    // Outside the always-writable temp dirs, also when the checkout lives under /tmp.
    let base = crate::safety::unsandboxed_base();
    let dir = base.join(format!("pith-escape-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::create_dir_all(dir.join("outside")).unwrap();
    Scratch(dir)
}

/// Whether every directory from `/` down to `path` is searchable by other users.
fn reachable_by_others(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.ancestors()
        .all(|dir| std::fs::metadata(dir).is_ok_and(|meta| meta.permissions().mode() & 0o001 != 0))
}

fn landlock_or_explain(test: &str) -> bool {
    let available = SandboxStatus::probe().landlock_available();
    if !available {
        skip(
            test,
            Prerequisite::Landlock,
            "Landlock is not available on this kernel",
        );
    }
    available
}

fn bash(command: &str, flags: &[&str]) -> Output {
    Command::new(PITH)
        .args(["call", "bash", &json!({ "command": command }).to_string()])
        .args(flags)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Live processes whose command line is exactly `sleep <marker>`.
pub(crate) fn sleeps(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .collect();
        if args.len() == 2 && args[0].ends_with(b"sleep") && args[1] == marker.as_bytes() {
            found.push(pid);
        }
    }
    found
}

/// Waits (at most [`PATIENCE`]) for every `sleep <marker>` to be gone; returns the survivors.
pub(crate) fn survivors(marker: &str) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let left = sleeps(marker);
        if left.is_empty() || start.elapsed() > PATIENCE {
            for &pid in &left {
                // SAFETY: killing a leftover of this test.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn marker(n: u32) -> String {
    format!("1234.{}0{n}3", std::process::id())
}

/// Issue 21, escape 8: `env -i setsid -f` leaves the group and the environment
/// marker behind; pith still kills it when the call ends: through the tree's
/// cgroup leaf where there is one, and as a child subreaper without one (the
/// fallback, forced with `PITH_TEST_NO_CGROUP=1`).
#[test]
fn a_scrubbed_escapee_dies_with_pith_call() {
    let dir = scratch("call");
    let root = dir.0.join("root");
    for (n, no_cgroup) in [(1, "0"), (4, "1")] {
        let marker = marker(n);
        let output = Command::new(PITH)
            .args(["call", "bash"])
            .arg(
                json!({ "command": format!("env -i setsid -f sleep {marker}; echo started") })
                    .to_string(),
            )
            .args(["--cwd", root.to_str().unwrap(), "--sandbox", "off"])
            .env_remove("RUST_LOG")
            .env("PITH_TEST_NO_CGROUP", no_cgroup)
            .output()
            .unwrap();
        assert!(text(&output).contains("started"), "{}", text(&output));
        assert_eq!(
            survivors(&marker),
            Vec::<u32>::new(),
            "the escapee survived pith call (PITH_TEST_NO_CGROUP={no_cgroup})"
        );
    }
}

/// Issue 21, escape 8, under `pith mcp` (sandboxed by default): the escapee dies
/// when the server exits.
#[test]
fn a_scrubbed_escapee_dies_with_pith_mcp() {
    let dir = tempfile::TempDir::new().unwrap();
    let marker = marker(2);
    let mut server = crate::mcp::Server::start(&dir);
    let result = server.call(
        1,
        "bash",
        json!({ "command": format!("env -i setsid -f sleep {marker}; echo started") }),
    );
    assert!(crate::mcp::text(&result).contains("started"), "{result}");
    assert_eq!(sleeps(&marker).len(), 1, "the escapee did not start");
    assert!(
        server.close_and_wait(PATIENCE).is_some(),
        "pith mcp did not exit"
    );
    assert_eq!(
        survivors(&marker),
        Vec::<u32>::new(),
        "the escapee survived pith mcp"
    );
}

/// Runs `pith call bash` with descriptor 7 open on `file` (inherited from pith's parent).
fn bash_with_fd7(file: &Path, command: &str, flags: &[&str]) -> Output {
    let handle = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&handle);
    let mut cmd = Command::new(PITH);
    cmd.args(["call", "bash", &json!({ "command": command }).to_string()])
        .args(flags)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    // SAFETY: dup2 in the forked child onto a fixed number (clears close-on-exec).
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(fd, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = cmd.output().unwrap();
    drop(handle);
    output
}

/// Issue 21, escape 6: a descriptor open in pith's parent is not the command's.
#[test]
fn a_descriptor_inherited_by_pith_is_closed_for_commands() {
    let dir = scratch("fd");
    let root = dir.0.join("root");
    let file = dir.0.join("outside").join("secret.log");
    std::fs::write(&file, "").unwrap();
    for mode in ["off", "read-only", "workspace-write"] {
        let output = bash_with_fd7(
            &file,
            "echo leaked >&7; echo status=$?",
            &["--cwd", root.to_str().unwrap(), "--sandbox", mode],
        );
        assert!(
            text(&output).contains("status=1"),
            "{mode}: {}",
            text(&output)
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "", "{mode}");
    }
}

/// `pith sandbox status --json` for `flags`.
fn status_json(flags: &[&str]) -> Value {
    let output = Command::new(PITH)
        .args(["sandbox", "status", "--json"])
        .args(flags)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Python attack snippets, one per guarantee; each prints `DENIED` when the attack fails.
fn python(code: &str) -> String {
    format!("python3 - <<'PY'\n{code}\nPY")
}

/// Every guarantee `pith sandbox status --json` claims holds is tried with the same
/// flags; a claim without an attack here fails the test.
#[test]
fn every_claimed_guarantee_holds() {
    if !landlock_or_explain("every_claimed_guarantee_holds") {
        return;
    }
    let dir = scratch("status");
    let root = dir.0.join("root");
    let outside = dir.0.join("outside");
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&root)
            .status()
            .unwrap()
            .success()
    );
    let target = outside.join("target.txt");
    std::fs::write(&target, "x").unwrap();
    let flags = [
        "--cwd",
        root.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
        "--sandbox",
        "workspace-write",
        "--deny-network",
    ];
    let status = status_json(&flags);
    assert_eq!(status["mode"], "workspace-write");
    let guarantees = status["guarantees"].as_array().unwrap();
    let mut ids: Vec<&str> = guarantees
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "duplicate guarantees: {status}");
    let writable: Vec<&str> = status["writable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let mut unique = writable.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), writable.len(), "duplicate places: {status}");

    let mut outside_sleep = Command::new("sleep").arg("30").spawn().unwrap();
    let abstract_name = format!("pith-test-{}", std::process::id());
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
        std::os::unix::net::UnixListener::bind_addr(&addr).unwrap()
    };
    abstract_listener.set_nonblocking(true).unwrap();
    let t = target.display().to_string();
    let denied = |ok: &str| format!("print('DENIED' if not ({ok}) else 'ALLOWED')");
    for guarantee in guarantees.iter().filter(|g| g["holds"] == true) {
        let id = guarantee["id"].as_str().unwrap();
        let command = match id {
            "new-session" => python(
                "import os\ntry:\n    os.open('/dev/tty', os.O_RDWR)\n    print('ALLOWED')\nexcept OSError:\n    print('DENIED' if os.getsid(0) in (os.getpid(), os.getppid()) else 'ALLOWED')",
            ),
            "no-inherited-fds" => {
                let output = bash_with_fd7(
                    &target,
                    "echo leaked >&7 && echo ALLOWED || echo DENIED",
                    &flags,
                );
                assert!(text(&output).contains("DENIED"), "{id}: {}", text(&output));
                assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");
                continue;
            }
            "escapees-killed" => {
                let marker = marker(3);
                let output = bash(&format!("env -i setsid -f sleep {marker}"), &flags);
                assert!(output.status.success(), "{id}: {}", text(&output));
                assert_eq!(survivors(&marker), Vec::<u32>::new(), "{id}");
                continue;
            }
            "escapees-after-sigkill" => {
                let marks = [
                    crate::watchdog::marker(),
                    crate::watchdog::marker(),
                    crate::watchdog::marker(),
                ];
                let request = json!({ "command": crate::watchdog::scrubbed_escapees(&marks) });
                let mut pith = Command::new(PITH)
                    .args(["call", "bash", &request.to_string()])
                    .args(flags)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                crate::watchdog::sigkill_then_nothing_is_left(pith.id(), &marks, "pith call");
                pith.wait().unwrap();
                continue;
            }
            "writes-confined" => format!("echo x > {t}.new && echo ALLOWED || echo DENIED"),
            "git-read-only" => {
                "echo '[x]' >> .git/config && echo ALLOWED || echo DENIED".to_owned()
            }
            "metadata-confined" => python(&format!(
                "import os\ntry:\n    os.chmod('{t}', 0o777)\n    print('ALLOWED')\nexcept OSError:\n    print('DENIED')"
            )),
            "tty-ioctl" => python(
                "import fcntl, os, termios, struct\nfd = os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY)\ntry:\n    fcntl.ioctl(fd, 0x80045430, struct.pack('I', 0))\n    print('ALLOWED')\nexcept OSError:\n    print('DENIED')",
            ),
            "tty-injection" => python(
                "import fcntl, os, termios\nfd = os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY)\ntry:\n    fcntl.ioctl(fd, termios.TIOCSTI, b'x')\n    print('ALLOWED')\nexcept OSError as e:\n    print('DENIED' if e.errno == 13 else 'ALLOWED')",
            ),
            "io-uring-denied" => python(&format!(
                "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nfd = libc.syscall(425, 8, ctypes.create_string_buffer(120))\n{}",
                denied("fd >= 0")
            )),
            "socket-families" => python(
                "import socket\ntry:\n    socket.socket(17, socket.SOCK_RAW, 0)\n    print('ALLOWED')\nexcept OSError:\n    print('DENIED')",
            ),
            "signal-scoped" => format!(
                "kill -STOP {} && echo ALLOWED || echo DENIED",
                outside_sleep.id()
            ),
            "abstract-unix-scoped" => python(&format!(
                "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('\\0{abstract_name}')\n    print('ALLOWED')\nexcept OSError:\n    print('DENIED')"
            )),
            "network-denied" => python(
                "import socket\ntry:\n    socket.socket(socket.AF_INET)\n    print('ALLOWED')\nexcept OSError:\n    print('DENIED')",
            ),
            other => panic!("no attack tries the claimed guarantee {other:?}: {guarantee}"),
        };
        let output = bash(&command, &flags);
        assert!(
            text(&output).contains("DENIED") && !text(&output).contains("ALLOWED"),
            "{id} is claimed but the attack worked: {}",
            text(&output)
        );
    }
    let _ = outside_sleep.kill();
    let _ = outside_sleep.wait();
    assert!(
        abstract_listener.accept().is_err(),
        "an abstract connection got through"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");
    assert!(!Path::new(&format!("{t}.new")).exists());
}

/// A pty pair: the master descriptor and the slave's path.
fn open_pty() -> (i32, String) {
    // SAFETY: the usual pty calls on a descriptor this test owns.
    unsafe {
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
    }
}

/// Runs `pith call bash` with the pty slave as pith's controlling terminal; returns
/// the output and what arrived in the terminal's input queue.
fn bash_on_a_terminal(command: &str, flags: &[&str]) -> (String, Vec<u8>) {
    let (master, slave) = open_pty();
    let slave_c = std::ffi::CString::new(slave.clone()).unwrap();
    // Raw mode, so injected bytes are readable at once without a newline.
    // SAFETY: termios calls on a descriptor this test opens and closes.
    let reader = unsafe {
        let fd = libc::open(
            slave_c.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_NONBLOCK,
        );
        assert!(fd >= 0);
        let mut attr: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(fd, &mut attr), 0);
        libc::cfmakeraw(&mut attr);
        assert_eq!(libc::tcsetattr(fd, libc::TCSANOW, &attr), 0);
        fd
    };
    let mut cmd = Command::new(PITH);
    cmd.args(["call", "bash", &json!({ "command": command }).to_string()])
        .args(flags)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    // SAFETY: in the forked child: a new session, then the slave as its controlling terminal.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let fd = libc::open(slave_c.as_ptr(), libc::O_RDWR);
            if fd < 0 || libc::ioctl(fd, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = cmd.output().unwrap();
    let mut queued = vec![0u8; 256];
    // SAFETY: a non-blocking read into a buffer of the given size.
    let n = unsafe { libc::read(reader, queued.as_mut_ptr().cast(), queued.len()) };
    queued.truncate(usize::try_from(n).unwrap_or(0));
    // SAFETY: closing our own descriptors.
    unsafe {
        libc::close(reader);
        libc::close(master);
    }
    (text(&output), queued)
}

/// Issue 21, escape 1, with a real pty as pith's controlling terminal: the command
/// (read-only sandbox) has no controlling terminal, and TIOCSTI on the terminal
/// opened by path is denied; nothing reaches the terminal's input.
#[test]
fn terminal_injection_fails_with_a_real_controlling_terminal() {
    if !landlock_or_explain("terminal_injection_fails_with_a_real_controlling_terminal") {
        return;
    }
    let dir = scratch("tty");
    let root = dir.0.join("root");
    let script = "import fcntl, os, termios\n\
                  paths = ['/dev/tty']\n\
                  sid = os.getsid(0)\n\
                  pith = int(open('/proc/%d/stat' % os.getsid(0)).read().rsplit(')', 1)[1].split()[1])\n\
                  tty = int(open('/proc/%d/stat' % pith).read().rsplit(')', 1)[1].split()[4])\n\
                  if tty:\n\
                  \x20   paths.append('/dev/pts/%d' % (tty & 0xff | (tty >> 12) & 0xfff00))\n\
                  for path in paths:\n\
                  \x20   try:\n\
                  \x20       fd = os.open(path, os.O_RDWR | os.O_NOCTTY)\n\
                  \x20       for c in b'touch pwned':\n\
                  \x20           fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))\n\
                  \x20       print(path, 'INJECTED')\n\
                  \x20   except OSError as e:\n\
                  \x20       print(path, 'denied', e.errno)";
    let flags = ["--cwd", root.to_str().unwrap(), "--sandbox", "read-only"];
    let (output, queued) = bash_on_a_terminal(&python(script), &flags);
    assert!(output.contains("/dev/tty denied"), "{output}");
    assert!(
        output.contains("/dev/pts/"),
        "pith had no terminal: {output}"
    );
    assert!(!output.contains("INJECTED"), "{output}");
    assert!(queued.is_empty(), "typed into the terminal: {queued:?}");
    // Without the sandbox, root can still type into the terminal by path: the test
    // sees an injection when there is one.
    let legacy = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti").unwrap_or_default();
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 && legacy.trim() == "1" {
        let flags = ["--cwd", root.to_str().unwrap(), "--sandbox", "off"];
        let (output, queued) = bash_on_a_terminal(&python(script), &flags);
        assert!(output.contains("INJECTED"), "{output}");
        assert_eq!(queued, b"touch pwned", "{output}");
    }
}

/// Without mount namespaces (simulated), the status no longer claims `.git/` or
/// metadata protection, and commands still run under Landlock.
#[test]
fn without_mount_namespaces_the_status_says_what_is_lost() {
    if !landlock_or_explain("without_mount_namespaces_the_status_says_what_is_lost") {
        return;
    }
    let dir = scratch("nomnt");
    let root = dir.0.join("root");
    let outside = dir.0.join("outside");
    let flags = [
        "--cwd",
        root.to_str().unwrap(),
        "--sandbox",
        "workspace-write",
    ];
    let status = Command::new(PITH)
        .args(["sandbox", "status", "--json"])
        .args(flags)
        .env("PITH_TEST_NO_MOUNT_NS", "1")
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["mountNamespace"], false, "{status}");
    for id in ["git-read-only", "metadata-confined"] {
        let entry = status["guarantees"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["id"] == id)
            .unwrap_or_else(|| panic!("{id} missing: {status}"));
        assert_eq!(entry["holds"], false, "{status}");
        assert!(
            entry["text"]
                .as_str()
                .unwrap()
                .contains("PITH_TEST_NO_MOUNT_NS"),
            "{status}"
        );
    }
    let output = Command::new(PITH)
        .args(["call", "bash"])
        .arg(json!({ "command": format!("echo in > inside.txt; echo out > {}/x.txt; echo done", outside.display()) }).to_string())
        .args(flags)
        .env("PITH_TEST_NO_MOUNT_NS", "1")
        .output()
        .unwrap();
    let shown = text(&output);
    assert!(
        shown.contains("done") && shown.contains("Permission denied"),
        "{shown}"
    );
    assert!(root.join("inside.txt").exists());
    assert!(!outside.join("x.txt").exists());
}

/// Whether the read-only mount namespace is available; otherwise a visible skip.
fn mount_namespace_or_explain(test: &str) -> bool {
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

/// Issue 21, `--protect` for commands: a glob (`*.pem`, at any depth;
/// `keys/**`) protects what it matches when each command starts; a file an
/// earlier command created is protected in the next one. Mutation: building
/// the sandbox's read-only list from literal `--protect` paths only (as before)
/// lets every write below through.
#[test]
fn protect_globs_are_read_only_for_commands_from_their_next_start() {
    let test = "protect_globs_are_read_only_for_commands_from_their_next_start";
    if !landlock_or_explain(test) || !mount_namespace_or_explain(test) {
        return;
    }
    let dir = scratch("globs");
    let root = dir.0.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(root.join("keys")).unwrap();
    for (path, text) in [("a.pem", "a"), ("sub/b.pem", "b"), ("keys/k", "k")] {
        std::fs::write(root.join(path), text).unwrap();
    }
    let r = root.to_str().unwrap();
    let flags = [
        "--cwd",
        r,
        "--root",
        r,
        "--sandbox",
        "workspace-write",
        "--protect",
        "*.pem",
        "--protect",
        "keys/**",
    ];
    let output = bash(
        "for f in a.pem sub/b.pem keys/k keys/new; do echo x >> $f && echo WROTE $f || echo DENIED $f; done; \
         echo p > plain.txt && echo WROTE plain; echo c > sub/c.pem && echo WROTE c.pem",
        &flags,
    );
    let shown = text(&output);
    for denied in ["a.pem", "sub/b.pem", "keys/k", "keys/new"] {
        assert!(
            shown.contains(&format!("DENIED {denied}")),
            "{denied}: {shown}"
        );
    }
    assert!(shown.contains("WROTE plain"), "{shown}");
    // Created during the command: not protected yet (docs/reliability.md).
    assert!(shown.contains("WROTE c.pem"), "{shown}");
    for (path, text) in [("a.pem", "a"), ("sub/b.pem", "b"), ("keys/k", "k")] {
        assert_eq!(std::fs::read_to_string(root.join(path)).unwrap(), text);
    }
    assert!(!root.join("keys/new").exists());
    let output = bash("echo x >> sub/c.pem && echo WROTE || echo DENIED", &flags);
    assert!(text(&output).contains("DENIED"), "{}", text(&output));
    assert_eq!(
        std::fs::read_to_string(root.join("sub/c.pem")).unwrap(),
        "c\n"
    );
}

/// Issue 21, the non-root path: as an unprivileged user (uid 65534 through
/// `setpriv`), the sandbox enters a user namespace before the mount namespace;
/// writes outside the root, to `.git` and to a `--protect` path still fail.
#[test]
fn the_sandbox_holds_for_an_unprivileged_user() {
    let test = "the_sandbox_holds_for_an_unprivileged_user";
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return skip(
            test,
            Prerequisite::Root,
            "switching to an unprivileged user needs root",
        );
    }
    if !landlock_or_explain(test) || !mount_namespace_or_explain(test) {
        return;
    }
    let setpriv = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    if !Command::new("setpriv")
        .args(setpriv)
        .arg("true")
        .status()
        .is_ok_and(|s| s.success())
    {
        return skip(
            test,
            Prerequisite::Other,
            "setpriv (util-linux) is not installed",
        );
    }
    // The test's directories and the binary must be reachable for uid 65534, also when
    // the checkout lives under a private home (/root is 0700): fall back to /var/lib.
    let always: Vec<PathBuf> = pith_env::SandboxPolicy::always_writable()
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .collect();
    let base = [crate::safety::unsandboxed_base(), PathBuf::from("/var/lib")]
        .into_iter()
        .find(|base| reachable_by_others(base) && !always.iter().any(|dir| base.starts_with(dir)));
    let Some(base) = base else {
        return skip(
            test,
            Prerequisite::Other,
            "no directory outside the temp dirs is searchable by other users",
        );
    };
    let dir = Scratch(base.join(format!("pith-escape-nobody-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    let root = dir.0.join("root");
    let outside = dir.0.join("outside");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("secret.pem"), "s").unwrap();
    std::fs::write(outside.join("x.txt"), "x").unwrap();
    // The binary, at a path uid 65534 can reach (a hard link when it can, else a copy).
    let bin_dir = dir.0.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let pith = bin_dir.join("pith");
    if std::fs::hard_link(PITH, &pith).is_err() {
        std::fs::copy(PITH, &pith).unwrap();
    }
    // Everything the test made belongs to the unprivileged user, so only the sandbox refuses.
    let own = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(&root)
        .arg(&outside)
        .status()
        .unwrap()
        .success()
        && Command::new("chown")
            .args(["65534:65534"])
            .arg(&dir.0)
            .status()
            .unwrap()
            .success();
    assert!(own);
    let r = root.to_str().unwrap();
    let o = outside.display();
    let command = format!(
        "id -u; echo in > in.txt && echo WROTE in; \
         echo x >> {o}/x.txt && echo WROTE outside || echo DENIED outside; \
         touch {o}/x.txt && echo TOUCHED outside || echo DENIED utime; \
         echo h > .git/hook && echo WROTE git || echo DENIED git; \
         echo x >> secret.pem && echo WROTE pem || echo DENIED pem"
    );
    let output = Command::new("setpriv")
        .args(setpriv)
        .arg(&pith)
        .args(["call", "bash", &json!({ "command": command }).to_string()])
        .args(["--cwd", r, "--root", r, "--sandbox", "workspace-write"])
        .args(["--protect", "*.pem"])
        .env_remove("RUST_LOG")
        .env("HOME", &dir.0)
        .env("TMPDIR", &root)
        .output()
        .unwrap();
    let shown = text(&output);
    assert!(shown.starts_with("65534\n"), "{shown}");
    assert!(shown.contains("WROTE in"), "{shown}");
    for denied in ["outside", "utime", "git", "pem"] {
        assert!(
            shown.contains(&format!("DENIED {denied}")),
            "{denied}: {shown}"
        );
    }
    assert_eq!(std::fs::read_to_string(outside.join("x.txt")).unwrap(), "x");
    assert_eq!(
        std::fs::read_to_string(root.join("secret.pem")).unwrap(),
        "s"
    );
    assert!(!root.join(".git/hook").exists());
}
