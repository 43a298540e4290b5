//! Head-and-tail output: the lines worth promoting out of an omitted middle
//! ("signal" lines: errors, failures, panics, tracebacks, assertions) and the
//! marker that stands for the middle.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

use serde::Serialize;

use crate::clip_line;

/// At most this many signal lines are promoted into a marker.
pub const MAX_SIGNAL_LINES: usize = 20;
/// A promoted line is clipped to this many characters.
pub const SIGNAL_LINE_CHARS: usize = 200;

/// Lower-case fragments that make a line a signal line.
const SIGNALS: &[&str] = &[
    "error",
    "failed",
    "failure",
    "panicked",
    "traceback",
    "assert",
    "exception",
    "fatal",
    "segmentation fault",
];

/// The signal fragments as one case-insensitive automaton (`None` if it could
/// not be built, which a fixed list of short words never causes).
fn matcher() -> Option<&'static AhoCorasick> {
    static MATCHER: OnceLock<Option<AhoCorasick>> = OnceLock::new();
    MATCHER
        .get_or_init(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(SIGNALS)
                .ok()
        })
        .as_ref()
}

/// The signal fragments as a case-sensitive automaton, for text already
/// folded to ASCII lower case: its packed prefilter (Teddy, SIMD, on the
/// first bytes of the fragments) skips ordinary output at memory speed, where
/// the case-insensitive automaton has to step through every byte. The packed
/// prefilter needs leftmost match semantics (with the default `Standard`
/// semantics aho-corasick builds none); any match marks its line, so which
/// of two overlapping fragments is reported does not matter.
fn folded_matcher() -> Option<&'static AhoCorasick> {
    static MATCHER: OnceLock<Option<AhoCorasick>> = OnceLock::new();
    MATCHER
        .get_or_init(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build(SIGNALS)
                .ok()
        })
        .as_ref()
}

/// Text is folded to lower case in blocks of this many bytes (on the stack,
/// so a block stays in the cache between folding and searching).
const FOLD_BLOCK: usize = 16 * 1024;
/// Consecutive blocks overlap by this much, so a fragment across a block
/// boundary is found (the longest fragment's length minus one).
const FOLD_OVERLAP: usize = "segmentation fault".len() - 1;

/// Whether `line` looks like it reports a problem (`error: …`, `FAILED`,
/// `panicked at`, `Traceback`, `error[E0308]`, `AssertionError`, …).
pub fn is_signal_line(line: &str) -> bool {
    matcher().is_some_and(|matcher| matcher.is_match(line))
}

/// A promoted line and its 1-based line number in the whole output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SignalLine {
    /// 1-based line number in the whole output.
    pub number: u64,
    /// The line, clipped to [`SIGNAL_LINE_CHARS`].
    pub text: String,
}

/// The signal lines of an omitted stretch of output, in bounded memory: the
/// first ten and the last ten (all of them when there are at most twenty).
#[derive(Clone, Debug, Default)]
pub struct SignalLines {
    first: Vec<SignalLine>,
    last: VecDeque<SignalLine>,
    total: u64,
}

impl SignalLines {
    /// Offers line `number`; kept when it is a signal line.
    pub fn offer(&mut self, number: u64, line: &str) {
        if !is_signal_line(line) {
            return;
        }
        self.total += 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let signal = SignalLine {
            number,
            text: clip_line(line.trim_end(), SIGNAL_LINE_CHARS).0.into_owned(),
        };
        let half = MAX_SIGNAL_LINES / 2;
        if self.first.len() < half {
            self.first.push(signal);
            return;
        }
        if self.last.len() == MAX_SIGNAL_LINES - half {
            self.last.pop_front();
        }
        self.last.push_back(signal);
    }

    /// Offers every complete or partial line of `text`, the first numbered
    /// `first_number`, skipping lines numbered at most `skip_through`; returns
    /// the number of newlines in `text`. Runs at memory speed: the text is
    /// folded to lower case a cache-sized block at a time, one automaton pass
    /// over each block finds the candidate lines, and the block's newlines are
    /// counted while it is in the cache.
    pub fn offer_text(&mut self, text: &str, first_number: u64, skip_through: u64) -> u64 {
        let Some(matcher) = folded_matcher() else {
            return memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
        };
        let bytes = text.as_bytes();
        let mut folded = [0u8; FOLD_BLOCK];
        let mut number = first_number;
        let mut counted_to = 0;
        let mut next_line_start = 0;
        let mut block_start = 0;
        // Newlines in `bytes[..newlines_to]`.
        let mut newlines = 0;
        let mut newlines_to = 0;
        loop {
            let block_end = (block_start + FOLD_BLOCK).min(bytes.len());
            let block = bytes.get(block_start..block_end).unwrap_or_default();
            let fresh = bytes.get(newlines_to..block_end).unwrap_or_default();
            newlines += memchr::memchr_iter(b'\n', fresh).count() as u64;
            newlines_to = block_end;
            let buffer = folded.get_mut(..block.len()).unwrap_or_default();
            // Folding ASCII letters keeps every byte offset (and line) in place.
            for (to, from) in buffer.iter_mut().zip(block) {
                *to = from.to_ascii_lowercase();
            }
            for found in matcher.find_iter(&*buffer) {
                let at = block_start + found.start();
                if at < next_line_start {
                    continue;
                }
                let before = bytes.get(..at).unwrap_or_default();
                let start = memchr::memrchr(b'\n', before).map_or(0, |newline| newline + 1);
                let after = bytes.get(at..).unwrap_or_default();
                let end = memchr::memchr(b'\n', after).map_or(bytes.len(), |offset| at + offset);
                let skipped = bytes.get(counted_to..start).unwrap_or_default();
                number += memchr::memchr_iter(b'\n', skipped).count() as u64;
                counted_to = start;
                next_line_start = end + 1;
                if number > skip_through {
                    self.offer(number, text.get(start..end).unwrap_or_default());
                }
            }
            if block_end == bytes.len() {
                return newlines;
            }
            block_start = block_end - FOLD_OVERLAP;
        }
    }

    /// The kept lines in output order (at most [`MAX_SIGNAL_LINES`]).
    pub fn lines(&self) -> Vec<&SignalLine> {
        self.first.iter().chain(self.last.iter()).collect()
    }

    /// How many signal lines were offered in all.
    pub fn total(&self) -> u64 {
        self.total
    }
}

/// `48113` → `48,113`.
pub fn format_count(count: u64) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The marker between a head and a tail: how many lines are omitted (which),
/// where the full output is, then each promoted signal line with its number:
///
/// ```text
/// … 48,113 lines omitted (lines 501-48,613); full output: /tmp/x.log …
/// … 2 signal lines among them:
///   50000: error: boom
/// ```
pub fn omission_marker(
    first_omitted: u64,
    last_omitted: u64,
    full_output: Option<&str>,
    signals: &SignalLines,
) -> String {
    let count = last_omitted.saturating_sub(first_omitted) + 1;
    let noun = if count == 1 { "line" } else { "lines" };
    let mut marker = format!(
        "… {} {noun} omitted (lines {}-{})",
        format_count(count),
        format_count(first_omitted),
        format_count(last_omitted)
    );
    match full_output {
        Some(path) => {
            let _ = write!(marker, "; full output: {path} …");
        }
        None => marker.push_str(" …"),
    }
    let lines = signals.lines();
    if !lines.is_empty() {
        let total = signals.total();
        if total as usize > lines.len() {
            let _ = write!(
                marker,
                "\n… {total} signal lines among them; the first and last {}:",
                lines.len()
            );
        } else if total == 1 {
            marker.push_str("\n… 1 signal line among them:");
        } else {
            let _ = write!(marker, "\n… {total} signal lines among them:");
        }
        for line in lines {
            let _ = write!(marker, "\n  {}: {}", line.number, line.text);
        }
    }
    marker
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_lines_are_recognised_and_noise_is_not() {
        for line in [
            "error: boom",
            "error[E0308]: mismatched types",
            "test foo ... FAILED",
            "thread 'main' panicked at src/main.rs:1:1",
            "Traceback (most recent call last):",
            "AssertionError: 1 != 2",
        ] {
            assert!(is_signal_line(line), "{line}");
        }
        for line in ["compiling foo v0.1.0", "ok", "line 12345"] {
            assert!(!is_signal_line(line), "{line}");
        }
    }

    #[test]
    fn keeps_the_first_and_last_ten_of_many() {
        let mut signals = SignalLines::default();
        for number in 1..=100 {
            signals.offer(number, &format!("error {number}"));
            signals.offer(number, "fine");
        }
        let numbers: Vec<u64> = signals.lines().iter().map(|l| l.number).collect();
        let expected: Vec<u64> = (1..=10).chain(91..=100).collect();
        assert_eq!(numbers, expected);
        assert_eq!(signals.total(), 100);
    }

    /// Line by line, the way `offer_text` must agree with.
    fn offered_each(text: &str, first: u64, skip_through: u64) -> Vec<SignalLine> {
        let mut signals = SignalLines::default();
        for (index, line) in text.split('\n').enumerate() {
            let number = first + index as u64;
            if number > skip_through {
                signals.offer(number, line);
            }
        }
        signals.lines().into_iter().cloned().collect()
    }

    #[test]
    fn offer_text_finds_fragments_across_fold_blocks_in_any_case() {
        // Fragments of every kind and case, placed so some straddle the
        // boundaries of the folding blocks, among lines of noise.
        let words = [
            "ERROR",
            "Failed",
            "panicked",
            "TraceBack",
            "aSsErT",
            "Segmentation Fault",
        ];
        for shift in [0, 1, 3, 9, 17] {
            let mut text = String::new();
            let mut word = 0;
            while text.len() < 5 * FOLD_BLOCK {
                let boundary = (text.len() / FOLD_BLOCK + 1) * FOLD_BLOCK;
                let room = boundary - text.len();
                if room > shift + 2 && room < 60 {
                    text.push_str(&"-".repeat(room - shift - 2));
                    text.push_str(words[word % words.len()]);
                    text.push('\n');
                    word += 1;
                } else {
                    text.push_str("noise ok line with nothing in it\n");
                }
            }
            text.push_str("last line, an exception");
            let mut signals = SignalLines::default();
            let newlines = signals.offer_text(&text, 7, 9);
            assert_eq!(
                newlines as usize,
                text.matches('\n').count(),
                "shift {shift}"
            );
            let found: Vec<SignalLine> = signals.lines().into_iter().cloned().collect();
            assert_eq!(found, offered_each(&text, 7, 9), "shift {shift}");
            assert!(
                word >= 4 && signals.total() == word as u64 + 1,
                "shift {shift}"
            );
        }
    }

    #[test]
    fn marker_names_the_range_the_path_and_each_promoted_line() {
        let mut signals = SignalLines::default();
        signals.offer_text("a\nerror: boom\nb\n", 49_999, 0);
        let marker = omission_marker(501, 98_000, Some("/tmp/x.log"), &signals);
        assert_eq!(
            marker,
            "… 97,500 lines omitted (lines 501-98,000); full output: /tmp/x.log …\n\
             … 1 signal line among them:\n  50000: error: boom"
        );
        assert_eq!(format_count(1_000_000), "1,000,000");
        assert_eq!(format_count(999), "999");
    }
}
