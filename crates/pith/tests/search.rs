//! `pith call grep` on a 1 GiB file: memory stays bounded (peak RSS of the child).

use std::fs;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// Runs `pith call grep ARGS`; returns its stdout and its peak RSS in KiB.
#[expect(
    clippy::zombie_processes,
    reason = "the child is reaped with wait4, which also reports its peak RSS"
)]
fn pith_grep(args: &serde_json::Value) -> (String, u64) {
    let child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["call", "grep", &args.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut stdout = child.stdout.unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child; both pointers are valid for writes.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid);
    // On Linux `ru_maxrss` is the peak resident set in KiB (VmHWM).
    (text, u64::try_from(usage.ru_maxrss).unwrap())
}

#[test]
fn grep_through_a_one_gib_file_keeps_peak_memory_under_64_mib() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("huge.txt");
    {
        let mut file = fs::File::create(&path).unwrap();
        let chunk =
            "filler text without the word, just a source-like line of code;\n".repeat(16_384);
        file.write_all(b"first line\nneedle here\n").unwrap();
        let mut written = 0u64;
        while written < 1 << 30 {
            file.write_all(chunk.as_bytes()).unwrap();
            written += chunk.len() as u64;
        }
        file.write_all(b"needle at the end\n").unwrap();
    }
    let root = dir.path().to_string_lossy().into_owned();

    let started = Instant::now();
    let (text, _) = pith_grep(&serde_json::json!({"pattern": "needle", "path": root, "limit": 1}));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(text.starts_with("huge.txt:2: needle here"), "{text}");
    assert!(text.contains("[1 matches limit reached"), "{text}");

    // Without a limit in reach the whole GiB is read, through a bounded buffer.
    let (text, peak_kib) = pith_grep(&serde_json::json!({"pattern": "needle", "path": root}));
    drop(dir);
    assert!(text.contains("huge.txt:2: needle here"), "{text}");
    assert!(text.contains(": needle at the end"), "{text}");
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}
