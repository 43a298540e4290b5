//! Where a signal fragment may start, and how many newlines there are: one
//! pass over the text that matches the fragments' 3-byte prefixes in any
//! case and counts newlines together.
//!
//! The scan of a command's omitted output is most of what the reading thread
//! does per byte. As three passes (fold to lower case into a buffer, a packed
//! search of the folded text, a newline count) it ran at 3.3 GB/s here on
//! 256 KiB of lines in the cache; this AVX2 kernel does all three in one pass
//! over the text as it is, at 4.1 GB/s (4.0 against 3.0 on a build log).
//! Without AVX2 the caller keeps the three passes.
//!
//! The prefix match is exact, not approximate (no candidate to check
//! twice): each of the (at most eight) prefixes has its own bit, and the
//! per-position nibble tables (as in Teddy) set that bit only for the
//! prefix's own letter at that position, in either case. A byte with both
//! nibbles of a letter in one of its cases is that letter (the cases differ
//! only in bit 5), so a match is the prefix in some mix of case and nothing
//! else, with no folding pass. (A fragment's non-letter bytes, such as the
//! space of `segmentation fault`, come after its prefix and are checked by
//! the caller.)

/// Bytes per prefix.
pub(crate) const PREFIX: usize = 3;

/// Distinct lower-case ASCII letter prefixes, at most eight, and the
/// kernel's tables for them.
pub(crate) struct Prefixes {
    prefixes: Vec<[u8; PREFIX]>,
    #[cfg(target_arch = "x86_64")]
    tables: avx2::Tables,
}

impl Prefixes {
    /// The distinct first [`PREFIX`] bytes of `fragments`; `None` if one is
    /// shorter, has a byte that is not a lower-case ASCII letter, or there are
    /// more than eight distinct prefixes.
    pub(crate) fn of(fragments: &[&str]) -> Option<Prefixes> {
        let mut prefixes: Vec<[u8; PREFIX]> = Vec::new();
        for fragment in fragments {
            let prefix: [u8; PREFIX] = fragment.as_bytes().get(..PREFIX)?.try_into().ok()?;
            if !prefix.iter().all(u8::is_ascii_lowercase) {
                return None;
            }
            if !prefixes.contains(&prefix) {
                prefixes.push(prefix);
            }
        }
        if prefixes.len() > 8 {
            return None;
        }
        Some(Prefixes {
            #[cfg(target_arch = "x86_64")]
            tables: avx2::Tables::new(&prefixes),
            prefixes,
        })
    }

    /// Whether a prefix starts at `at` in `text`, in any case.
    fn starts_at(&self, text: &[u8], at: usize) -> bool {
        let Some(window) = text.get(at..at + PREFIX) else {
            return false;
        };
        self.prefixes.iter().any(|prefix| {
            window
                .iter()
                .zip(prefix)
                .all(|(byte, low)| byte | 0x20 == *low)
        })
    }

    /// Whether [`Prefixes::scan`] runs the kernel here (an x86-64 CPU with
    /// AVX2); elsewhere it goes one byte at a time, slower than the caller's
    /// own three passes.
    pub(crate) fn available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx2")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// Scans `text[start..end]`: pushes onto `found` (in order) each position
    /// in that range where a prefix starts in any case (the prefix may run
    /// past `end`, not past the text), and returns the number of newlines in
    /// the range. Stops pushing once `found` holds `limit` positions; the
    /// count covers the whole range all the same. One byte at a time where
    /// the kernel cannot run (see [`Prefixes::available`]).
    pub(crate) fn scan(
        &self,
        text: &[u8],
        start: usize,
        end: usize,
        found: &mut Vec<usize>,
        limit: usize,
    ) -> u64 {
        let end = end.min(text.len());
        let start = start.min(end);
        #[cfg(target_arch = "x86_64")]
        {
            if Self::available() {
                // SAFETY: AVX2 is present (checked just above).
                return unsafe { avx2::scan(self, text, start, end, found, limit) };
            }
        }
        self.scan_portable(text, start, end, found, limit)
    }

    /// [`Prefixes::scan`] one byte at a time (the kernel's last bytes, and
    /// all of it without the kernel).
    fn scan_portable(
        &self,
        text: &[u8],
        start: usize,
        end: usize,
        found: &mut Vec<usize>,
        limit: usize,
    ) -> u64 {
        let range = text.get(start..end).unwrap_or_default();
        let newlines = memchr::memchr_iter(b'\n', range).count() as u64;
        for at in start..end {
            if found.len() >= limit {
                break;
            }
            if self.starts_at(text, at) {
                found.push(at);
            }
        }
        newlines
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_extract_epi64, _mm256_loadu_si256,
        _mm256_movemask_epi8, _mm256_sad_epu8, _mm256_set1_epi8, _mm256_setzero_si256,
        _mm256_shuffle_epi8, _mm256_srli_epi16, _mm256_sub_epi8,
    };

    use super::{PREFIX, Prefixes};

    /// Bytes per vector.
    const LANES: usize = 32;

    /// Per position of a prefix, two 16-entry tables (repeated in both
    /// 128-bit halves, as `vpshufb` looks up within each half): bit `k` of
    /// `low[i][n]` is set when prefix `k`'s byte `i` has low nibble `n`, and
    /// of `high[i][n]` when that letter in lower or upper case has high
    /// nibble `n`. A byte has both nibbles of a letter only if it is that
    /// letter in one of its cases, so no folding pass is needed.
    pub(super) struct Tables {
        low: [[u8; LANES]; PREFIX],
        high: [[u8; LANES]; PREFIX],
    }

    impl Tables {
        pub(super) fn new(prefixes: &[[u8; PREFIX]]) -> Tables {
            let mut low = [[0u8; LANES]; PREFIX];
            let mut high = [[0u8; LANES]; PREFIX];
            for (bit, prefix) in prefixes.iter().enumerate().take(8) {
                for (position, byte) in prefix.iter().enumerate() {
                    for half in [0, 16] {
                        let nibble = usize::from(byte & 0x0f) + half;
                        if let Some(entry) = low.get_mut(position).and_then(|t| t.get_mut(nibble)) {
                            *entry |= 1 << bit;
                        }
                        // The letter in either case: the cases differ in bit 5,
                        // which is in the high nibble.
                        for case in [*byte, byte & !0x20] {
                            let nibble = usize::from(case >> 4) + half;
                            if let Some(entry) =
                                high.get_mut(position).and_then(|t| t.get_mut(nibble))
                            {
                                *entry |= 1 << bit;
                            }
                        }
                    }
                }
            }
            Tables { low, high }
        }
    }

    /// The sum of the 32 bytes of `counts` (each at most 255).
    #[target_feature(enable = "avx2")]
    fn horizontal_sum(counts: __m256i) -> u64 {
        let sums = _mm256_sad_epu8(counts, _mm256_setzero_si256());
        [
            _mm256_extract_epi64::<0>(sums),
            _mm256_extract_epi64::<1>(sums),
            _mm256_extract_epi64::<2>(sums),
            _mm256_extract_epi64::<3>(sums),
        ]
        .iter()
        .map(|sum| *sum as u64)
        .sum()
    }

    /// [`Prefixes::scan`] 32 positions at a time while 34 bytes past the
    /// position can be loaded; the rest one byte at a time.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn scan(
        prefixes: &Prefixes,
        text: &[u8],
        start: usize,
        end: usize,
        found: &mut Vec<usize>,
        limit: usize,
    ) -> u64 {
        let load = |table: &[u8; LANES]| {
            // SAFETY: `table` is 32 readable bytes; the load is unaligned.
            unsafe { _mm256_loadu_si256(table.as_ptr().cast()) }
        };
        let [low0, low1, low2] = prefixes.tables.low.each_ref().map(load);
        let [high0, high1, high2] = prefixes.tables.high.each_ref().map(load);
        let nibble = _mm256_set1_epi8(0x0f);
        let newline = _mm256_set1_epi8(b'\n' as i8);
        let zero = _mm256_setzero_si256();
        let mut newlines: u64 = 0;
        let mut counts = zero;
        let mut rounds = 0u32;
        let mut at = start;
        // Vectors at `at`, `at + 1` and `at + 2` must lie inside the text.
        while at + LANES <= end && at + LANES + PREFIX - 1 <= text.len() {
            // SAFETY: `at + 2 + 32 <= text.len()` (the loop condition), so all
            // three 32-byte unaligned loads read inside `text`.
            let (raw, next, after) = unsafe {
                let base = text.as_ptr().add(at);
                (
                    _mm256_loadu_si256(base.cast()),
                    _mm256_loadu_si256(base.add(1).cast()),
                    _mm256_loadu_si256(base.add(2).cast()),
                )
            };
            // Newlines: each 0xff lane adds one to its byte counter, which is
            // summed into `newlines` before it could reach 256.
            counts = _mm256_sub_epi8(counts, _mm256_cmpeq_epi8(raw, newline));
            rounds += 1;
            if rounds == 255 {
                newlines += horizontal_sum(counts);
                counts = zero;
                rounds = 0;
            }
            let bits = |bytes: __m256i, low: __m256i, high: __m256i| {
                let lows = _mm256_shuffle_epi8(low, _mm256_and_si256(bytes, nibble));
                let highs = _mm256_shuffle_epi8(
                    high,
                    _mm256_and_si256(_mm256_srli_epi16::<4>(bytes), nibble),
                );
                _mm256_and_si256(lows, highs)
            };
            let matched = _mm256_and_si256(
                bits(raw, low0, high0),
                _mm256_and_si256(bits(next, low1, high1), bits(after, low2, high2)),
            );
            let none = _mm256_movemask_epi8(_mm256_cmpeq_epi8(matched, zero)) as u32;
            let mut hits = !none;
            while hits != 0 && found.len() < limit {
                found.push(at + hits.trailing_zeros() as usize);
                hits &= hits - 1;
            }
            at += LANES;
        }
        newlines += horizontal_sum(counts);
        newlines + prefixes.scan_portable(text, at, end, found, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAGMENTS: &[&str] = &["error", "failed", "fatal", "panicked", "segmentation fault"];

    fn prefixes() -> Prefixes {
        Prefixes::of(FRAGMENTS).unwrap_or_else(|| unreachable!())
    }

    /// What the kernel (where the CPU has it) finds in `text[start..end]`
    /// beside what one byte at a time finds.
    #[allow(clippy::type_complexity, reason = "a pair of test results")]
    fn both(
        text: &[u8],
        start: usize,
        end: usize,
        limit: usize,
    ) -> ((Vec<usize>, u64), (Vec<usize>, u64)) {
        let prefixes = prefixes();
        let mut found = Vec::new();
        let newlines = prefixes.scan(text, start, end, &mut found, limit);
        let mut slow = Vec::new();
        let slow_newlines = prefixes.scan_portable(text, start, end, &mut slow, limit);
        ((found, newlines), (slow, slow_newlines))
    }

    #[test]
    fn prefixes_must_be_letters_and_at_most_eight() {
        assert!(Prefixes::of(&["error", "fatal"]).is_some());
        assert!(Prefixes::of(&["er"]).is_none());
        assert!(Prefixes::of(&["e-rror"]).is_none());
        assert!(Prefixes::of(&["Error"]).is_none());
        let nine = [
            "aaa", "bbb", "ccc", "ddd", "eee", "fff", "ggg", "hhh", "iii",
        ];
        assert!(Prefixes::of(&nine).is_none());
        assert!(Prefixes::of(&nine[..8]).is_some());
    }

    #[test]
    fn the_byte_at_a_time_scan_finds_prefixes_in_any_case_and_no_lookalike() {
        let prefixes = prefixes();
        let text = b"ERR eRr @rr e\x12r Fai\nfAT pan {rr seg";
        let mut found = Vec::new();
        let newlines = prefixes.scan_portable(text, 0, text.len(), &mut found, usize::MAX);
        assert_eq!(found, vec![0, 4, 16, 20, 24, 32]);
        assert_eq!(newlines, 1);
    }

    #[test]
    fn finds_each_prefix_in_any_case_at_every_offset_and_nothing_else() {
        // Lookalikes that differ in bit 5 outside letters (`@` for `` ` ``,
        // a control byte for a space), and the prefixes in mixed case, at
        // every alignment, in ranges that start and end anywhere.
        let pieces = [
            "ERR", "eRr", "Fai", "FAT", "pAn", "SEG", "@rr", "e\x12r", "err", "\n",
        ];
        for shift in 0..40 {
            let mut text = vec![b'.'; shift];
            for round in 0..30 {
                text.extend_from_slice(pieces[round % pieces.len()].as_bytes());
                text.extend(std::iter::repeat_n(b'x', round % 7));
            }
            for (start, end) in [(0, text.len()), (shift, text.len() - 1), (3, 70)] {
                let (fast, slow) = both(&text, start, end, usize::MAX);
                assert_eq!(fast, slow, "shift {shift}, range {start}..{end}");
                assert!(!fast.0.is_empty());
            }
        }
    }

    #[test]
    fn counts_many_newlines_past_the_byte_counters_range() {
        let text = b"\n".repeat(100_003);
        let (fast, slow) = both(&text, 1, text.len(), 8);
        assert_eq!(fast, (Vec::new(), 100_002));
        assert_eq!(fast, slow);
    }

    #[test]
    fn stops_collecting_at_the_limit_but_counts_every_newline() {
        let text = b"errerr\n".repeat(1000);
        let (fast, slow) = both(&text, 0, text.len(), 5);
        assert_eq!(fast, (vec![0, 3, 7, 10, 14], 1000));
        assert_eq!(fast, slow);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// The kernel agrees with the byte-at-a-time scan on texts of prefix
        /// pieces and noise, for any range.
        #[test]
        fn agrees_with_one_byte_at_a_time(
            parts in proptest::collection::vec((0usize..12, proptest::prelude::any::<u8>()), 0..200),
            cut in (0usize..400, 0usize..400),
        ) {
            let pieces: [&[u8]; 12] = [b"err", b"FAI", b"fAt", b"pan", b"seg", b"er", b"\n", b" ", b"x", b"Err\n", b"\xe9", b"`rr"];
            let mut text = Vec::new();
            for (piece, noise) in parts {
                text.extend_from_slice(pieces[piece]);
                if noise % 3 == 0 {
                    text.push(noise);
                }
            }
            let start = cut.0.min(text.len());
            let end = (start + cut.1).min(text.len());
            let (fast, slow) = both(&text, start, end, usize::MAX);
            proptest::prop_assert_eq!(fast, slow);
        }
    }
}
