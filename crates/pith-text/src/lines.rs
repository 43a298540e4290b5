//! Line endings: LF-normalised views of a text and the way back to each line's own ending.

use std::borrow::Cow;
use std::ops::Range;

/// A text as the edit engine sees it (every `\r\n` and lone `\r` read as `\n`), remembering
/// where the original had `\r\n` so positions and endings map back.
pub(crate) struct LfText<'a> {
    original: &'a str,
    lf: Cow<'a, str>,
    /// Offsets in `lf` of the newlines that were `\r\n` in `original`, ascending.
    crlf: Vec<usize>,
}

impl<'a> LfText<'a> {
    pub(crate) fn new(original: &'a str) -> Self {
        if memchr::memchr(b'\r', original.as_bytes()).is_none() {
            return Self {
                original,
                lf: Cow::Borrowed(original),
                crlf: Vec::new(),
            };
        }
        let bytes = original.as_bytes();
        let mut lf = String::with_capacity(original.len());
        let mut crlf = Vec::new();
        let mut copied = 0;
        for carriage_return in memchr::memchr_iter(b'\r', bytes) {
            if carriage_return < copied {
                continue;
            }
            lf.push_str(original.get(copied..carriage_return).unwrap_or_default());
            if bytes.get(carriage_return + 1) == Some(&b'\n') {
                crlf.push(lf.len());
                copied = carriage_return + 2;
            } else {
                copied = carriage_return + 1;
            }
            lf.push('\n');
        }
        lf.push_str(original.get(copied..).unwrap_or_default());
        Self {
            original,
            lf: Cow::Owned(lf),
            crlf,
        }
    }

    /// The LF-normalised text.
    pub(crate) fn lf(&self) -> &str {
        &self.lf
    }

    /// The LF-normalised text, borrowed from the original when it had no `\r`.
    pub(crate) fn into_lf(self) -> Cow<'a, str> {
        self.lf
    }

    /// Whether the original had any `\r` (otherwise it equals [`Self::lf`]).
    pub(crate) fn had_carriage_returns(&self) -> bool {
        matches!(self.lf, Cow::Owned(_))
    }

    /// The original position of a position in the LF text (never between `\r` and `\n`).
    fn to_original(&self, position: usize) -> usize {
        position + self.crlf.partition_point(|&newline| newline < position)
    }

    /// The original ending of the newline at `position` of the LF text.
    fn ending_at(&self, position: usize) -> &'static str {
        if self.crlf.binary_search(&position).is_ok() {
            return "\r\n";
        }
        match self.original.as_bytes().get(self.to_original(position)) {
            Some(b'\r') => "\r",
            _ => "\n",
        }
    }

    /// Rebuilds the original text with `replacements` (sorted, disjoint ranges of the LF text
    /// and their LF texts) applied: untouched bytes are copied as they are, and the newlines
    /// of each replacement take the endings of the lines it replaces.
    pub(crate) fn rebuild(&self, replacements: &[(Range<usize>, &str)], capacity: usize) -> String {
        let mut out = String::with_capacity(capacity);
        let mut copied = 0;
        let lf = self.lf.as_bytes();
        for (range, text) in replacements {
            let start = self.to_original(range.start);
            push_joined(
                &mut out,
                self.original.get(copied..start).unwrap_or_default(),
            );
            // The endings of the lines the replacement covers: those inside it, and that of
            // the line it ends in when it stops before a newline.
            let replaced = lf.get(range.clone()).unwrap_or_default();
            let mut endings: Vec<&str> = memchr::memchr_iter(b'\n', replaced)
                .map(|offset| self.ending_at(range.start + offset))
                .collect();
            if !replaced.ends_with(b"\n") {
                endings.push(self.ending_near(range));
            }
            let fallback = endings.last().copied().unwrap_or("\n");
            let mut lines = text.split('\n');
            if let Some(first) = lines.next() {
                push_joined(&mut out, first);
                for (index, line) in lines.enumerate() {
                    push_joined(&mut out, endings.get(index).copied().unwrap_or(fallback));
                    push_joined(&mut out, line);
                }
            }
            copied = self.to_original(range.end);
        }
        push_joined(&mut out, self.original.get(copied..).unwrap_or_default());
        out
    }

    /// The ending of the line `range` sits on, else of the line before it, else `\n`.
    fn ending_near(&self, range: &Range<usize>) -> &'static str {
        let lf = self.lf.as_bytes();
        if let Some(offset) = memchr::memchr(b'\n', lf.get(range.end..).unwrap_or_default()) {
            return self.ending_at(range.end + offset);
        }
        memchr::memrchr(b'\n', lf.get(..range.start).unwrap_or_default())
            .map_or("\n", |newline| self.ending_at(newline))
    }
}

/// Appends `piece`, keeping a lone `\r` ending apart from a `\n` that follows it: the pair is
/// written `\r\r\n`, which still reads as the two newlines it stands for, and changes only
/// the second (the ending of an edited line), never the line before it.
fn push_joined(out: &mut String, piece: &str) {
    if out.ends_with('\r') && piece.starts_with('\n') {
        out.push('\r');
    }
    out.push_str(piece);
}

/// The lines of `text` with their byte offsets, as the tools count them (no empty line after
/// a final newline).
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .filter(move |_| !text.is_empty())
        .map(move |line| {
            let start = offset;
            offset += line.len() + 1;
            (start, line)
        })
}

/// Reads every `\r\n` and lone `\r` as `\n`.
pub(crate) fn to_lf(text: &str) -> Cow<'_, str> {
    match LfText::new(text).lf {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(lf) => Cow::Owned(lf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_crlf_and_lone_cr_as_lf() {
        assert_eq!(to_lf("a\r\nb\rc\nd\r"), "a\nb\nc\nd\n");
        assert!(matches!(to_lf("plain\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn rebuild_keeps_each_line_ending() {
        let text = LfText::new("a\r\nb\nc\rd");
        assert_eq!(text.lf(), "a\nb\nc\nd");
        let rebuilt = text.rebuild(&[(2..3, "B")], 16);
        assert_eq!(rebuilt, "a\r\nB\nc\rd");
    }

    #[test]
    fn replaced_newlines_take_the_endings_they_replace() {
        let text = LfText::new("a\r\nb\nc\r\n");
        let rebuilt = text.rebuild(&[(0..4, "x\ny\nz\n")], 16);
        assert_eq!(rebuilt, "x\r\ny\nz\nc\r\n");
    }

    #[test]
    fn new_lines_inside_one_line_take_that_line_ending() {
        let text = LfText::new("a\nfoo\r\nb\n");
        assert_eq!(text.rebuild(&[(2..5, "f\no")], 16), "a\nf\r\no\r\nb\n");
        let last_line = LfText::new("a\r\nfoo");
        assert_eq!(last_line.rebuild(&[(2..5, "f\no")], 16), "a\r\nf\r\no");
    }

    #[test]
    fn a_lone_cr_never_merges_with_a_following_lf() {
        let text = LfText::new("a\rb\nc");
        let rebuilt = text.rebuild(&[(2..3, "")], 16);
        assert_eq!(to_lf(&rebuilt), "a\n\nc");
    }
}
