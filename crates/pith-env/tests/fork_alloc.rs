//! Nothing allocates in a command's child between `fork` and `exec`.
//!
//! The heap's lock may be held by another thread at the moment of the fork; a
//! child that allocates can then hang forever. This test binary's allocator
//! writes a marker to descriptor 2 whenever it runs in a process other than
//! the test's own: in a forked child before `exec`, where descriptor 2 is
//! already the command's stderr, so the marker shows in the command's output.
//! Its own binary, because the allocator is the whole binary's.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "integration tests: a panic is a failed test"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicI32, Ordering};

use pith_env::{
    CancellationToken, Exec, ExecRequest, LocalEnv, OutputStream, SandboxMode, SandboxPolicy,
    SandboxStatus, StdinMode,
};
use pith_testkit::{Prerequisite, skip};

const MARK: &[u8] = b"[allocated after fork]\n";

/// The test process's pid, once a test starts watching (0: not watching).
static PARENT: AtomicI32 = AtomicI32::new(0);

/// The system allocator, marking every call made in another process.
struct Watching;

fn note() {
    let parent = PARENT.load(Ordering::Relaxed);
    // SAFETY: getpid and write are raw system calls on a constant buffer.
    unsafe {
        if parent != 0 && libc::getpid() != parent {
            libc::write(2, MARK.as_ptr().cast(), MARK.len());
        }
    }
}

// SAFETY: forwards to the system allocator; `note` neither allocates nor panics.
unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note();
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Watching = Watching;

fn watch() {
    // SAFETY: getpid cannot fail.
    PARENT.store(unsafe { libc::getpid() }, Ordering::Relaxed);
}

#[test]
fn the_marker_shows_a_child_that_allocates() {
    watch();
    let mut command = std::process::Command::new("/bin/sh");
    command.args(["-c", "true"]);
    // SAFETY: this closure allocates on purpose: the control case.
    unsafe {
        command.pre_exec(|| {
            drop(std::hint::black_box(Box::new(7_u64)));
            Ok(())
        });
    }
    let output = command.output().unwrap();
    assert!(
        output.stderr.windows(MARK.len()).any(|w| w == MARK),
        "{output:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_on_a_terminal_allocates_nothing_before_exec() {
    let status = SandboxStatus::probe();
    if !status.landlock_available() {
        skip(
            "a_sandboxed_command_on_a_terminal_allocates_nothing_before_exec",
            Prerequisite::Landlock,
            "Landlock is not available on this kernel",
        );
        return;
    }
    watch();
    let dir = tempfile::tempdir().unwrap();
    for stdin in [StdinMode::Null, StdinMode::Tty] {
        let mut request = ExecRequest::new(
            "/bin/sh",
            vec![OsString::from("-c"), OsString::from("echo ran")],
            dir.path(),
        );
        request.stdin = stdin;
        request.sandbox = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            writable: vec![dir.path().to_path_buf()],
            deny_network: true,
            ..SandboxPolicy::default()
        };
        let mut output = Vec::new();
        let mut sink = |_: OutputStream, bytes: &[u8]| output.extend_from_slice(bytes);
        let outcome = LocalEnv::new()
            .exec(request, &mut sink, CancellationToken::new())
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&output).replace("\r\n", "\n");
        assert_eq!((outcome.status.code(), text.as_str()), (0, "ran\n"));
    }
}
