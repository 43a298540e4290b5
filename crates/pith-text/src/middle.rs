//! Narrowing two texts to the part a line diff has to look at.

use crate::search::count_newlines;

/// Both texts minus their longest common run of leading and trailing lines, keeping `keep`
/// of those lines on each side, so that context and skip markers come out as for the whole
/// texts. Without it a one-line edit of a 20 MiB file would cost a line diff of 20 MiB.
pub(crate) struct Middle<'a> {
    pub(crate) old: &'a str,
    pub(crate) new: &'a str,
    /// Lines dropped from the start of both texts.
    pub(crate) skipped_lines: usize,
}

impl<'a> Middle<'a> {
    pub(crate) fn new(old: &'a str, new: &'a str, keep: usize) -> Self {
        let (old_bytes, new_bytes) = (old.as_bytes(), new.as_bytes());
        let prefix = common_prefix(old_bytes, new_bytes);
        let suffix = common_suffix(old_bytes, new_bytes);
        let (start, dropped) = cut_points(old_bytes, new.len(), prefix, suffix, keep);
        Self {
            old: old.get(start..old.len() - dropped).unwrap_or(old),
            new: new.get(start..new.len() - dropped).unwrap_or(new),
            skipped_lines: count_newlines(old_bytes.get(..start).unwrap_or_default()),
        }
    }
}

/// Where to cut two texts that share `prefix` leading and `suffix` trailing bytes
/// (`old` is the first text, `new_len` the second's length): `(start, dropped)`, the
/// bytes dropped before the middle and after it, in both texts. The cuts fall on line
/// starts of `old` with `keep` shared lines left on each side.
pub(crate) fn cut_points(
    old: &[u8],
    new_len: usize,
    prefix: usize,
    suffix: usize,
    keep: usize,
) -> (usize, usize) {
    let line_start = |end: usize| {
        memchr::memrchr(b'\n', old.get(..end).unwrap_or_default()).map_or(0, |newline| newline + 1)
    };
    let mut start = line_start(prefix);
    for _ in 0..keep {
        let Some(previous) = start.checked_sub(1) else {
            break;
        };
        start = line_start(previous);
    }
    let room = old.len().min(new_len) - start;
    let suffix = suffix.min(room);
    // Keep the line the common suffix starts in and `keep` more; every newline passed
    // lies inside the common suffix, so the cut is at a line start in both texts.
    let mut suffix_start = old.len() - suffix;
    for _ in 0..=keep {
        suffix_start = memchr::memchr(b'\n', old.get(suffix_start..).unwrap_or_default())
            .map_or(old.len(), |offset| suffix_start + offset + 1);
    }
    (start, old.len() - suffix_start)
}

pub(crate) fn common_prefix(left: &[u8], right: &[u8]) -> usize {
    // Block compares run at memcmp speed; the last block is finished byte by byte.
    const BLOCK: usize = 4096;
    let mut length = 0;
    while let (Some(block), Some(other)) = (
        left.get(length..length + BLOCK),
        right.get(length..length + BLOCK),
    ) && block == other
    {
        length += BLOCK;
    }
    let rest = left.iter().skip(length).zip(right.iter().skip(length));
    length + rest.take_while(|(a, b)| a == b).count()
}

pub(crate) fn common_suffix(left: &[u8], right: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let mut length = 0;
    while length + BLOCK <= left.len().min(right.len())
        && left.get(left.len() - length - BLOCK..left.len() - length)
            == right.get(right.len() - length - BLOCK..right.len() - length)
    {
        length += BLOCK;
    }
    let rest = left
        .iter()
        .rev()
        .skip(length)
        .zip(right.iter().rev().skip(length));
    length + rest.take_while(|(a, b)| a == b).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(range: std::ops::RangeInclusive<usize>) -> String {
        range.map(|n| format!("{n}\n")).collect()
    }

    #[test]
    fn keeps_the_changed_lines_and_some_context() {
        let old = numbered(1..=100);
        let new = old.replace("\n50\n", "\nfifty\n");
        let middle = Middle::new(&old, &new, 2);
        assert_eq!(middle.old, "48\n49\n50\n51\n52\n");
        assert_eq!(middle.new, "48\n49\nfifty\n51\n52\n");
        assert_eq!(middle.skipped_lines, 47);
    }

    #[test]
    fn keeps_everything_near_the_edges() {
        let middle = Middle::new("a\nb\n", "a\nc\n", 3);
        assert_eq!(
            (middle.old, middle.new, middle.skipped_lines),
            ("a\nb\n", "a\nc\n", 0)
        );
        let middle = Middle::new("same", "same", 1);
        assert_eq!((middle.old, middle.new), ("same", "same"));
    }

    #[test]
    fn a_common_suffix_never_overlaps_the_kept_prefix() {
        let middle = Middle::new("x\nx\nx\n", "x\nx\n", 0);
        assert!(middle.old.len() > middle.new.len());
        assert!(middle.old.ends_with(middle.new) || middle.new.is_empty());
    }

    #[test]
    fn long_texts_compare_in_blocks() {
        let old = "a".repeat(10_000) + "b" + &"c".repeat(10_000);
        let new = "a".repeat(10_000) + "B" + &"c".repeat(10_000);
        assert_eq!(common_prefix(old.as_bytes(), new.as_bytes()), 10_000);
        assert_eq!(common_suffix(old.as_bytes(), new.as_bytes()), 10_000);
    }
}
