use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::*;

/// An output log in memory, shared with the test.
struct MemoryLog {
    path: PathBuf,
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl OutputLog for MemoryLog {
    fn path(&self) -> &Path {
        &self.path
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), ExecError> {
        self.bytes.lock().unwrap().extend_from_slice(bytes);
        Ok(())
    }
}

fn accumulator() -> (OutputAccumulator, Arc<Mutex<Vec<u8>>>) {
    let bytes = Arc::new(Mutex::new(Vec::new()));
    let shared = bytes.clone();
    let open: OpenLog = Box::new(move || {
        Ok(Box::new(MemoryLog {
            path: PathBuf::from("/tmp/pith-bash-0000000000000000.log"),
            bytes: shared.clone(),
        }) as Box<dyn OutputLog>)
    });
    (OutputAccumulator::new(open), bytes)
}

#[test]
fn short_output_is_shown_verbatim_without_a_file() {
    let (mut output, log) = accumulator();
    output.push(b"a\r\n\x1b[31mb\n");
    output.finish();
    let snapshot = output.snapshot(true);
    assert_eq!(snapshot.content, "a\r\n\x1b[31mb\n");
    assert!(!snapshot.truncation.truncated);
    assert_eq!(snapshot.truncation.total_lines, 2);
    assert!(snapshot.notice().is_none());
    assert!(snapshot.full_output_path.is_none());
    assert!(log.lock().unwrap().is_empty());
}

#[test]
fn many_lines_keep_the_last_2000_and_spill_every_byte() {
    let (mut output, log) = accumulator();
    let mut all = Vec::new();
    for i in 1..=3000 {
        let line = format!("{i}\n");
        all.extend_from_slice(line.as_bytes());
        output.push(line.as_bytes());
    }
    output.finish();
    let snapshot = output.snapshot(true);
    assert!(snapshot.content.starts_with("1\n2\n"));
    assert!(snapshot.content.contains(
        "\n500\n… 1,022 lines omitted (lines 501-1,522); \
         full output: /tmp/pith-bash-0000000000000000.log …\n1523\n"
    ));
    assert!(snapshot.content.ends_with("\n3000"));
    assert_eq!(
        snapshot.notice().unwrap(),
        "[Showing lines 1-500 and 1523-3000 of 3000. Full output: /tmp/pith-bash-0000000000000000.log]"
    );
    assert_eq!(snapshot.omitted, Some((501, 1522)));
    assert!(snapshot.truncation.output_lines <= 2000);
    assert_eq!(*log.lock().unwrap(), all);
}

#[test]
fn many_bytes_say_the_byte_limit_and_memory_stays_bounded() {
    let (mut output, log) = accumulator();
    let line = "x".repeat(99) + "\n";
    for _ in 0..20_000 {
        output.push(line.as_bytes());
    }
    assert!(output.tail.len() <= CUT_AT);
    let snapshot = output.snapshot(true);
    assert_eq!(snapshot.truncation.total_lines, 20_000);
    assert_eq!(snapshot.truncation.total_bytes, 2_000_000);
    assert!(snapshot.truncation.output_bytes <= 50 * 1024);
    assert_eq!(snapshot.head_lines, 122);
    assert!(snapshot.content.ends_with(&"x".repeat(99)));
    let (_, last_omitted) = snapshot.omitted.unwrap();
    assert_eq!(
        snapshot.notice().unwrap(),
        format!(
            "[Showing lines 1-122 and {}-20000 of 20000. \
             Full output: /tmp/pith-bash-0000000000000000.log]",
            last_omitted + 1
        )
    );
    assert_eq!(log.lock().unwrap().len(), 2_000_000);
}

#[test]
fn a_huge_single_line_shows_its_last_2000_chars() {
    let (mut output, _log) = accumulator();
    for _ in 0..100 {
        output.push(&[b'a'; 10_000]);
    }
    output.push(b"END");
    let snapshot = output.snapshot(true);
    assert_eq!(snapshot.content.len(), MAX_LINE_CHARS);
    assert!(snapshot.content.ends_with("aEND"));
    assert_eq!(
        snapshot.notice().unwrap(),
        "[Showing last 2.0KB of line 1 (line is 976.6KB). \
         Full output: /tmp/pith-bash-0000000000000000.log]"
    );
}

#[test]
fn a_long_line_among_short_ones_is_clipped_and_saved() {
    let (mut output, log) = accumulator();
    let text = format!("short\n{}\nend\n", "y".repeat(3000));
    output.push(text.as_bytes());
    output.finish();
    let snapshot = output.snapshot(true);
    assert!(!snapshot.truncation.truncated);
    assert!(snapshot.lines_clipped);
    assert_eq!(
        snapshot.content,
        format!(
            "short\n{}... [truncated]\nend\n",
            "y".repeat(MAX_LINE_CHARS)
        )
    );
    assert_eq!(
        snapshot.notice().unwrap(),
        "[Some lines truncated to 2000 chars. Full output: /tmp/pith-bash-0000000000000000.log]"
    );
    assert_eq!(*log.lock().unwrap(), text.as_bytes());
}

#[test]
fn a_failed_log_is_reported_instead_of_a_path() {
    let open: OpenLog = Box::new(|| Err(ExecError::Unsupported));
    let mut output = OutputAccumulator::new(open);
    for i in 0..2500 {
        output.push(format!("{i}\n").as_bytes());
    }
    let snapshot = output.snapshot(true);
    assert_eq!(
        snapshot.notice().unwrap(),
        "[Showing lines 1-500 and 1023-2500 of 2500. Full output could not be saved: \
         This environment cannot run processes]"
    );
}

#[test]
fn signal_lines_of_the_omitted_middle_are_promoted_with_their_numbers() {
    let (mut output, _log) = accumulator();
    for i in 1..=100_000 {
        let line = if i == 50_000 {
            "error: boom\n".to_owned()
        } else {
            format!("{i}\n")
        };
        output.push(line.as_bytes());
    }
    output.finish();
    let snapshot = output.snapshot(true);
    assert!(
        snapshot
            .content
            .contains("… 1 signal line among them:\n  50000: error: boom\n"),
        "{}",
        snapshot.content
    );
    assert_eq!(snapshot.signal_lines, vec![50_000]);
    assert!(snapshot.truncation.output_lines <= 2000);
    assert!(snapshot.content.len() <= 50 * 1024);
    assert!(snapshot.content.ends_with("\n100000"));
}

#[test]
fn uneven_chunks_keep_every_count_and_find_signal_words_split_between_chunks() {
    // 4 MiB of numbered lines (several cuts of the tail), twelve signal lines
    // in the middle, pushed in chunks of uneven sizes: every signal word
    // also straddles a chunk boundary in one of the runs.
    let mut text = String::new();
    let mut expected = Vec::new();
    let mut line = 0u64;
    while text.len() < 4 << 20 {
        line += 1;
        if line.is_multiple_of(3_000) && expected.len() < 12 {
            expected.push(line);
            let word = ["Error", "FAILED", "panicked", "Segmentation fault"][expected.len() % 4];
            text.push_str(&format!("{line} {word} here\n"));
        } else {
            text.push_str(&format!("{line} ok\n"));
        }
    }
    let bytes = text.as_bytes();
    for seed in [1usize, 7, 4093, 65_536] {
        let (mut output, log) = accumulator();
        let mut at = 0;
        let mut step = seed;
        while at < bytes.len() {
            step = (step * 1_103_515_245 + 12_345) % 70_001;
            let end = (at + step.max(1)).min(bytes.len());
            output.push(&bytes[at..end]);
            at = end;
        }
        output.finish();
        let snapshot = output.snapshot(true);
        assert_eq!(snapshot.truncation.total_lines as u64, line, "seed {seed}");
        assert_eq!(snapshot.truncation.total_bytes, bytes.len(), "seed {seed}");
        assert_eq!(snapshot.signal_lines, expected, "seed {seed}");
        assert!(
            snapshot.content.ends_with(&format!("\n{line} ok")),
            "seed {seed}"
        );
        assert_eq!(*log.lock().unwrap(), bytes, "seed {seed}");
        assert!(output.tail.len() <= CUT_AT, "seed {seed}");
    }
}
