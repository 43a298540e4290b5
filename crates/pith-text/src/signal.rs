//! Head-and-tail output: the lines worth promoting out of an omitted middle
//! ("signal" lines: errors, failures, panics, tracebacks, assertions) and the
//! marker that stands for the middle.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, Input, MatchKind, Span, packed};

use serde::Serialize;

use crate::clip_line;
use crate::prefilter::Prefixes;

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

/// Candidates are found by the first this many bytes of the fragments.
const PREFIX: usize = 3;

/// The fragments' distinct first [`PREFIX`] bytes as a packed (Teddy, SIMD)
/// searcher, for text already folded to lower case; each candidate is then
/// checked against the whole fragments. Eight 3-byte prefixes make a Slim
/// Teddy with 3-byte masks, ~10-15 % faster over a block than the automaton of
/// the whole fragments (whose prefilter uses 4-byte masks). `None` where no
/// packed searcher can be built (a target without SIMD support for it).
fn prefix_searcher() -> Option<&'static packed::Searcher> {
    static SEARCHER: OnceLock<Option<packed::Searcher>> = OnceLock::new();
    SEARCHER
        .get_or_init(|| {
            let mut prefixes: Vec<&[u8]> = Vec::new();
            for fragment in SIGNALS {
                let prefix = fragment.as_bytes().get(..PREFIX)?;
                if !prefixes.contains(&prefix) {
                    prefixes.push(prefix);
                }
            }
            packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostFirst)
                .builder()
                .extend(prefixes)
                .build()
        })
        .as_ref()
}

/// Prefix candidates that are not fragments, per block, before the rest of
/// the block goes to the automaton of the whole fragments (text dense with
/// `err`, `tra`, `ass` would otherwise cost a search call every few bytes).
const MAX_MISSES: u32 = 64;

/// The first position at or after `from` in folded `block` where a signal
/// fragment starts. `misses` counts the candidates of this block that were
/// not fragments.
fn next_fragment(
    block: &[u8],
    mut from: usize,
    matcher: &AhoCorasick,
    misses: &mut u32,
) -> Option<usize> {
    if from >= block.len() {
        return None;
    }
    let Some(searcher) = prefix_searcher().filter(|_| *misses < MAX_MISSES) else {
        let input = Input::new(block).span(from..block.len());
        return matcher.find(input).map(|found| found.start());
    };
    while from < block.len() {
        let at = searcher
            .find_in(block, Span::from(from..block.len()))?
            .start();
        let rest = block.get(at..).unwrap_or_default();
        if SIGNALS
            .iter()
            .any(|fragment| rest.starts_with(fragment.as_bytes()))
        {
            return Some(at);
        }
        // A fragment may start inside a prefix that was not one (`trassert`).
        from = at + 1;
        *misses += 1;
        if *misses == MAX_MISSES {
            return next_fragment(block, from, matcher, misses);
        }
    }
    None
}

/// Text is folded to lower case in blocks of this many bytes (on the stack,
/// so a block stays in the cache between folding and searching).
const FOLD_BLOCK: usize = 16 * 1024;
/// Consecutive blocks overlap by this much, so a fragment across a block
/// boundary is found (the longest fragment's length minus one).
const FOLD_OVERLAP: usize = "segmentation fault".len() - 1;

/// Blocks with more prefix candidates than this go to the automaton of the
/// whole fragments (each candidate costs a check; the automaton's pass does
/// not).
const MAX_CANDIDATES: usize = 256;

/// The fragments' prefixes for the one-pass kernel (`None` if they do not
/// suit it, which the fixed list never causes).
fn kernel_prefixes() -> Option<&'static Prefixes> {
    static PREFIXES: OnceLock<Option<Prefixes>> = OnceLock::new();
    PREFIXES.get_or_init(|| Prefixes::of(SIGNALS)).as_ref()
}

/// Whether a signal fragment starts at the start of `text`, in any case.
fn fragment_at(text: &[u8]) -> bool {
    SIGNALS.iter().any(|fragment| {
        text.get(..fragment.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(fragment.as_bytes()))
    })
}

/// Where a scan of a text is: the number of the line at `counted_to` (a
/// line start, or a position whose line's number is known), and where the
/// line after the last one offered starts.
struct LineWalk {
    number: u64,
    counted_to: usize,
    next_line_start: usize,
    skip_through: u64,
}

impl LineWalk {
    fn new(first_number: u64, skip_through: u64) -> LineWalk {
        LineWalk {
            number: first_number,
            counted_to: 0,
            next_line_start: 0,
            skip_through,
        }
    }
}

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
    /// the number of newlines in `text`. Runs at memory speed, a cache-sized
    /// block at a time: where the CPU has AVX2, one pass of a SIMD kernel per
    /// block finds where the fragments' prefixes start, in any case, and
    /// counts the newlines; elsewhere the block is folded to lower case into
    /// a buffer, a packed searcher finds the candidates there and the
    /// newlines are counted apart. Each candidate is checked against the
    /// whole fragments.
    pub fn offer_text(&mut self, text: &str, first_number: u64, skip_through: u64) -> u64 {
        match kernel_prefixes().filter(|_| Prefixes::available()) {
            Some(prefixes) => self.offer_text_kernel(prefixes, text, first_number, skip_through),
            None => self.offer_text_folded(text, first_number, skip_through),
        }
    }

    /// [`SignalLines::offer_text`] with the one-pass kernel.
    fn offer_text_kernel(
        &mut self,
        prefixes: &Prefixes,
        text: &str,
        first_number: u64,
        skip_through: u64,
    ) -> u64 {
        let bytes = text.as_bytes();
        let mut walk = LineWalk::new(first_number, skip_through);
        let mut candidates = Vec::new();
        // Newlines in `bytes[..block_start]`.
        let mut newlines = 0;
        let mut block_start = 0;
        while block_start < bytes.len() {
            let block_end = (block_start + FOLD_BLOCK).min(bytes.len());
            candidates.clear();
            let count = prefixes.scan(
                bytes,
                block_start,
                block_end,
                &mut candidates,
                MAX_CANDIDATES + 1,
            );
            let anchor = (block_start, first_number + newlines);
            if candidates.len() > MAX_CANDIDATES {
                // Text dense with prefixes that are mostly not fragments
                // (`errerr…`): the automaton of the whole fragments.
                self.offer_block_by_automaton(text, block_start, block_end, &mut walk, anchor);
            } else {
                for &at in &candidates {
                    if at >= walk.next_line_start
                        && fragment_at(bytes.get(at..).unwrap_or_default())
                    {
                        self.offer_line_at(text, at, &mut walk, anchor);
                    }
                }
            }
            newlines += count;
            block_start = block_end;
        }
        newlines
    }

    /// Offers the lines of `text` that hold a fragment starting in
    /// `block_start..block_end`, found by the automaton on a folded copy of
    /// the block (and of the bytes a fragment starting in it may run into).
    fn offer_block_by_automaton(
        &mut self,
        text: &str,
        block_start: usize,
        block_end: usize,
        walk: &mut LineWalk,
        anchor: (usize, u64),
    ) {
        let Some(matcher) = folded_matcher() else {
            return;
        };
        let bytes = text.as_bytes();
        let end = (block_end + FOLD_OVERLAP).min(bytes.len());
        let mut folded = [0u8; FOLD_BLOCK + FOLD_OVERLAP];
        let block = bytes.get(block_start..end).unwrap_or_default();
        let buffer = folded.get_mut(..block.len()).unwrap_or_default();
        for (to, from) in buffer.iter_mut().zip(block) {
            *to = from.to_ascii_lowercase();
        }
        let buffer = &*buffer;
        loop {
            let from = walk.next_line_start.max(block_start) - block_start;
            if from >= buffer.len() {
                return;
            }
            let Some(found) = matcher.find(Input::new(buffer).span(from..buffer.len())) else {
                return;
            };
            let at = block_start + found.start();
            if at >= block_end {
                return;
            }
            self.offer_line_at(text, at, walk, anchor);
        }
    }

    /// [`SignalLines::offer_text`] folding each block into a buffer first.
    fn offer_text_folded(&mut self, text: &str, first_number: u64, skip_through: u64) -> u64 {
        let Some(matcher) = folded_matcher() else {
            return memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
        };
        let bytes = text.as_bytes();
        let mut folded = [0u8; FOLD_BLOCK];
        let mut walk = LineWalk::new(first_number, skip_through);
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
            let buffer = &*buffer;
            let mut from = walk.next_line_start.saturating_sub(block_start);
            let mut misses = 0;
            while let Some(found) = next_fragment(buffer, from, matcher, &mut misses) {
                self.offer_line_at(text, block_start + found, &mut walk, (0, first_number));
                from = walk.next_line_start - block_start;
            }
            if block_end == bytes.len() {
                return newlines;
            }
            block_start = block_end - FOLD_OVERLAP;
        }
    }

    /// Offers the line of `text` that holds position `at` (where a fragment
    /// starts), numbered by `walk`; `anchor` is a position at or before `at`
    /// and the number of its line, so the newlines before a line are counted
    /// from there rather than from the last line offered.
    fn offer_line_at(&mut self, text: &str, at: usize, walk: &mut LineWalk, anchor: (usize, u64)) {
        let bytes = text.as_bytes();
        let before = bytes.get(..at).unwrap_or_default();
        let start = memchr::memrchr(b'\n', before).map_or(0, |newline| newline + 1);
        let after = bytes.get(at..).unwrap_or_default();
        let end = memchr::memchr(b'\n', after).map_or(bytes.len(), |offset| at + offset);
        let (anchor_at, anchor_number) = anchor;
        if walk.counted_to < anchor_at {
            walk.counted_to = anchor_at;
            walk.number = anchor_number;
        }
        if start > walk.counted_to {
            let skipped = bytes.get(walk.counted_to..start).unwrap_or_default();
            walk.number += memchr::memchr_iter(b'\n', skipped).count() as u64;
            walk.counted_to = start;
        }
        walk.next_line_start = end + 1;
        if walk.number > walk.skip_through {
            self.offer(walk.number, text.get(start..end).unwrap_or_default());
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

    /// `offer_text` on `signals` both ways (the one-pass kernel where the CPU
    /// has it, and the folded blocks), which must agree; the newlines.
    fn offer_both_ways(signals: &mut SignalLines, text: &str, first: u64, skip: u64) -> u64 {
        let mut kernel = signals.clone();
        let newlines = signals.offer_text_folded(text, first, skip);
        if let Some(prefixes) = kernel_prefixes().filter(|_| Prefixes::available()) {
            let kernel_newlines = kernel.offer_text_kernel(prefixes, text, first, skip);
            assert_eq!(kernel_newlines, newlines);
            assert_eq!(kernel.lines(), signals.lines());
            assert_eq!(kernel.total(), signals.total());
        }
        newlines
    }

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
            let newlines = offer_both_ways(&mut signals, &text, 7, 9);
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

    /// Pieces the random texts are made of besides the fragments themselves:
    /// prefixes that are not fragments (`err`, `trassert`), lookalikes and noise.
    const NOT_FRAGMENTS: &[&str] = &[
        "segmentation",
        "err",
        "erro",
        "fai",
        "fat",
        "tra",
        "trassert",
        "asseg",
        "errerror",
        "pan",
        "exc",
        "ass",
        "\n",
        "\r\n",
        " ",
        "é",
        "ok line",
    ];

    /// Every piece a random text is made of: the fragments, then the rest.
    fn pieces() -> Vec<&'static str> {
        SIGNALS.iter().chain(NOT_FRAGMENTS).copied().collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The block scan agrees with offering each line on its own, for
        /// texts of pieces in mixed case, with runs of filler that push the
        /// pieces across the 16 KiB folding blocks.
        #[test]
        fn offer_text_agrees_with_the_line_by_line_scan(
            parts in proptest::collection::vec(
                (0..SIGNALS.len() + NOT_FRAGMENTS.len(), proptest::prelude::any::<u32>(), 0usize..6000),
                1..48,
            ),
            first in 1u64..1000,
            skip in 0u64..1200,
        ) {
            let pieces = pieces();
            let mut text = String::new();
            for (piece, case, filler) in parts {
                // Filler mostly without newlines: long lines cross blocks too.
                text.push_str(&"x".repeat(filler % 4000));
                if filler % 7 == 0 {
                    text.push('\n');
                }
                for (index, ch) in pieces[piece].chars().enumerate() {
                    if case >> (index % 32) & 1 == 1 {
                        text.extend(ch.to_uppercase());
                    } else {
                        text.push(ch);
                    }
                }
            }
            let mut signals = SignalLines::default();
            let newlines = offer_both_ways(&mut signals, &text, first, skip);
            proptest::prop_assert_eq!(newlines as usize, text.matches('\n').count());
            let found: Vec<SignalLine> = signals.lines().into_iter().cloned().collect();
            proptest::prop_assert_eq!(found, offered_each(&text, first, skip));
            let mut each = SignalLines::default();
            for (index, line) in text.split('\n').enumerate() {
                let number = first + index as u64;
                if number > skip {
                    each.offer(number, line);
                }
            }
            proptest::prop_assert_eq!(signals.total(), each.total());
        }
    }

    #[test]
    fn text_dense_with_prefixes_that_are_not_fragments_is_scanned_alike() {
        // Hundreds of `err`/`tra`/`ass` candidates per block send the rest of
        // each block to the automaton; its findings must be the same.
        let mut text = String::new();
        let mut line = 0;
        while text.len() < 3 * FOLD_BLOCK {
            text.push_str(&"errTRAass".repeat(40));
            if line % 5 == 0 {
                text.push_str(" Error here");
            }
            text.push('\n');
            line += 1;
        }
        let mut signals = SignalLines::default();
        let newlines = offer_both_ways(&mut signals, &text, 1, 0);
        assert_eq!(newlines as usize, text.matches('\n').count());
        let found: Vec<SignalLine> = signals.lines().into_iter().cloned().collect();
        assert_eq!(found, offered_each(&text, 1, 0));
        assert_eq!(signals.total(), (line as u64).div_ceil(5));
    }

    #[test]
    fn marker_names_the_range_the_path_and_each_promoted_line() {
        let mut signals = SignalLines::default();
        offer_both_ways(&mut signals, "a\nerror: boom\nb\n", 49_999, 0);
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
