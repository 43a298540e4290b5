//! The file tools under load through the real binary: concurrent edits in one
//! batch, symlink aliases, SIGKILL during a write, memory on a 2 GiB file.

use std::fs;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::file_tools::{Dir, pith};
use crate::support::run_measured;

fn lines(prefix: &str, count: usize) -> String {
    (0..count).map(|n| format!("{prefix} {n}\n")).collect()
}

fn edit_call(id: usize, path: &str, old: String, new: String) -> Value {
    json!({"id": id, "tool": "edit", "args": {"path": path, "edits": [{"oldText": old, "newText": new}]}})
}

#[test]
fn a_thousand_concurrent_edits_of_one_file_in_one_batch_all_apply() {
    let dir = Dir::new();
    dir.write("shared.txt", lines("line", 1000));
    let calls: Vec<Value> = (0..1000)
        .map(|n| {
            edit_call(
                n,
                "shared.txt",
                format!("line {n}\n"),
                format!("edited {n}\n"),
            )
        })
        .collect();
    let results = dir.batch(&calls);
    assert_eq!(results.len(), 1000);
    for (n, result) in results.iter().enumerate() {
        assert_eq!(result["id"], n, "results come in input order");
        assert_eq!(result["isError"], false, "{result}");
    }
    assert_eq!(
        String::from_utf8(dir.read("shared.txt")).unwrap(),
        lines("edited", 1000)
    );
}

#[test]
fn edits_and_writes_through_symlink_aliases_are_serialised_with_their_target() {
    let dir = Dir::new();
    dir.write("real/file.txt", lines("line", 300));
    std::os::unix::fs::symlink("real", dir.path("alias-dir")).unwrap();
    std::os::unix::fs::symlink("real/file.txt", dir.path("alias.txt")).unwrap();
    let paths = ["real/file.txt", "alias.txt", "alias-dir/file.txt"];
    let mut calls: Vec<Value> = (0..300)
        .map(|n| {
            edit_call(
                n,
                paths[n % 3],
                format!("line {n}\n"),
                format!("done {n}\n"),
            )
        })
        .collect();
    // New files through the symlinked directory queue with the target path.
    for n in 0..30 {
        let path = ["alias-dir/new.txt", "real/new.txt"][n % 2];
        let content = format!("writer {n}\n").repeat(2000);
        calls.push(
            json!({"id": 300 + n, "tool": "write", "args": {"path": path, "content": content}}),
        );
    }
    let results = dir.batch(&calls);
    for result in &results {
        assert_eq!(result["isError"], false, "{result}");
    }
    assert_eq!(
        String::from_utf8(dir.read("real/file.txt")).unwrap(),
        lines("done", 300)
    );
    assert!(
        fs::symlink_metadata(dir.path("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let written = String::from_utf8(dir.read("real/new.txt")).unwrap();
    let first = written.lines().next().unwrap();
    assert!(written.lines().all(|line| line == first));
    assert_eq!(written.lines().count(), 2000);
}

/// A small xorshift generator seeded from the clock: random kill moments.
struct Random(u64);

impl Random {
    fn new() -> Random {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        Random(nanos | 1)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }
}

/// Removes temp files a killed write left behind (they never replace the target)
/// and returns how many there were.
fn remove_leftovers(dir: &Dir) -> usize {
    let mut count = 0;
    for entry in fs::read_dir(&dir.root).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name().to_string_lossy().ends_with(".pith-tmp") {
            fs::remove_file(entry.path()).unwrap();
            count += 1;
        }
    }
    count
}

#[test]
fn a_write_killed_at_random_moments_leaves_the_old_or_the_new_file_never_a_mixture() {
    const SIZE: usize = 50 << 20;
    let dir = Dir::new();
    let versions: Vec<Vec<u8>> = ["A", "B"]
        .iter()
        .map(|mark| {
            format!("{}\n", mark.repeat(63))
                .repeat(SIZE / 64)
                .into_bytes()
        })
        .collect();
    let requests: Vec<Vec<u8>> = versions
        .iter()
        .map(|content| {
            let content = std::str::from_utf8(content).unwrap();
            json!({"path": "big.txt", "content": content})
                .to_string()
                .into_bytes()
        })
        .collect();
    dir.write("big.txt", &versions[0]);
    // One undisturbed write gives the time window to aim the kills at.
    let started = Instant::now();
    let output = pith(&["call", "write", "-", "--cwd", dir.cwd()], &requests[1]);
    assert!(output.status.success(), "{output:?}");
    let window = started.elapsed();
    assert_eq!(dir.read("big.txt"), versions[1]);
    let mut random = Random::new();
    let (mut old, mut new, mut leftovers) = (0, 0, 0);
    for _ in 0..50 {
        let current = usize::from(dir.read("big.txt") == versions[1]);
        let next = 1 - current;
        let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
            .args(["call", "write", "-", "--cwd", dir.cwd()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let request = requests[next].clone();
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(&request);
        });
        let delay = random.below(window.as_millis() as u64 * 11 / 10);
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        child.wait().unwrap();
        feeder.join().unwrap();
        let after = dir.read("big.txt");
        if after == versions[next] {
            new += 1;
        } else {
            assert!(
                after == versions[current],
                "the file is neither the old nor the new version ({} bytes)",
                after.len()
            );
            old += 1;
        }
        leftovers += remove_leftovers(&dir);
    }
    assert_eq!(old + new, 50);
    // The unnamed (O_TMPFILE) temp file vanishes with a killed writer.
    assert_eq!(leftovers, 0, "temp files left behind by killed writes");
}

#[test]
fn reading_the_first_2000_lines_of_a_2_gib_file_keeps_rss_under_64_mib() {
    let dir = Dir::new();
    let path = dir.write("huge.log", lines("line", 3000));
    // The rest is a 2 GiB hole: one last "line" of NUL bytes, streamed like any other.
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let args = json!({"path": "huge.log"}).to_string();
    let mut command = Command::new(env!("CARGO_BIN_EXE_pith"));
    command.args(["call", "read", &args, "--cwd", dir.cwd()]);
    let measured = run_measured(command);
    let text = measured.stdout_text();
    let peak_kib = measured.peak_kib;
    assert!(
        text.ends_with(
            // Counted only a few MiB past the page: the 2 GiB line is not read.
            "line 1999\n\n[Showing lines 1-2000 of at least 3001. Use offset=2001 to continue.]\n"
        ),
        "{}",
        &text[text.len().saturating_sub(200)..]
    );
    assert!(peak_kib > 0, "VmHWM was never sampled");
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}
