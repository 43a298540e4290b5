//! `pith call grep` on huge files: memory stays bounded (peak RSS of the child).

use std::fs;
use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::support::run_measured;

/// Runs `pith call grep ARGS`; returns its stdout and its peak RSS in KiB.
fn pith_grep(args: &serde_json::Value) -> (String, u64) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pith"));
    command.args(["call", "grep", &args.to_string()]);
    let measured = run_measured(command);
    assert!(measured.peak_kib > 0, "VmHWM was never sampled");
    (measured.stdout_text(), measured.peak_kib)
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

#[test]
fn grep_skips_a_file_that_is_one_64_mib_line_and_keeps_peak_memory_under_64_mib() {
    let dir = TempDir::new().unwrap();
    {
        let mut file = fs::File::create(dir.path().join("huge.txt")).unwrap();
        file.write_all(b"needle ").unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..64 {
            file.write_all(&chunk).unwrap();
        }
        file.write_all(b" needle\n").unwrap();
    }
    fs::write(dir.path().join("small.txt"), "one needle\n").unwrap();
    let root = dir.path().to_string_lossy().into_owned();

    let (text, peak_kib) = pith_grep(&serde_json::json!({"pattern": "needle", "path": root}));
    drop(dir);
    assert!(
        text.starts_with("small.txt:1: one needle\n\n[Skipped 1 file"),
        "{text}"
    );
    assert!(text.contains("(huge.txt)"), "{text}");
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}
