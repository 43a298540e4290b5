//! Output truncation by lines and bytes, size formatting and line clipping.
//!
//! Follows the reference §3 with two fixes: cuts never split a UTF-8 character, and a text
//! whose only excess is its trailing newline is reported as truncated by bytes (Pi says
//! "lines" there, although no line was dropped).

use std::borrow::Cow;

use serde::Serialize;

/// Default maximum number of lines kept by [`truncate_head`] and [`truncate_tail`].
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Default maximum number of bytes (50 KiB) kept by [`truncate_head`] and [`truncate_tail`].
pub const DEFAULT_MAX_BYTES: usize = 51_200;
/// Default maximum number of characters of one line shown by [`clip_line`] callers.
pub const MAX_LINE_CHARS: usize = 500;

/// The marker appended by [`clip_line`] to a clipped line.
const CLIP_MARKER: &str = "... [truncated]";

/// How much text a truncation may keep; whichever limit is hit first wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TruncationLimits {
    /// Maximum number of lines kept.
    pub max_lines: usize,
    /// Maximum number of UTF-8 bytes kept.
    pub max_bytes: usize,
}

impl Default for TruncationLimits {
    fn default() -> Self {
        Self {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Which limit stopped a truncation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    /// The line limit was reached.
    Lines,
    /// The byte limit was reached.
    Bytes,
}

/// The kept text and what was cut, in the shape of the reference's `TruncationResult`.
///
/// Serialises (camelCase, without `content`) to the `details.truncation` object tools report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    /// The kept text. When truncated it has no trailing newline.
    #[serde(skip)]
    pub content: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Which limit was hit, if any.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines in the input, as counted by [`count_lines`].
    pub total_lines: usize,
    /// UTF-8 bytes in the input.
    pub total_bytes: usize,
    /// Lines in `content`.
    pub output_lines: usize,
    /// UTF-8 bytes in `content`.
    pub output_bytes: usize,
    /// Tail truncation kept only the end of one over-long line.
    pub last_line_partial: bool,
    /// Head truncation kept nothing because the first line alone exceeds the byte limit.
    pub first_line_exceeds_limit: bool,
    /// The line limit that applied.
    pub max_lines: usize,
    /// The byte limit that applied.
    pub max_bytes: usize,
}

impl Truncation {
    fn untouched(text: &str, total_lines: usize, limits: TruncationLimits) -> Self {
        Self {
            content: text.to_owned(),
            truncated: false,
            truncated_by: None,
            total_lines,
            total_bytes: text.len(),
            output_lines: total_lines,
            output_bytes: text.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines: limits.max_lines,
            max_bytes: limits.max_bytes,
        }
    }

    fn cut(text: &str, total_lines: usize, limits: TruncationLimits, kept: Kept<'_>) -> Self {
        Self {
            content: kept.content.to_owned(),
            truncated: true,
            truncated_by: Some(kept.by),
            total_lines,
            total_bytes: text.len(),
            output_lines: kept.lines,
            output_bytes: kept.content.len(),
            last_line_partial: kept.partial,
            first_line_exceeds_limit: kept.first_line_exceeds_limit,
            max_lines: limits.max_lines,
            max_bytes: limits.max_bytes,
        }
    }
}

/// What a truncation kept, before it is copied into a [`Truncation`].
struct Kept<'a> {
    content: &'a str,
    lines: usize,
    by: TruncatedBy,
    partial: bool,
    first_line_exceeds_limit: bool,
}

/// Counts lines the way the tools report them: `""` has 0 lines, and a trailing newline does
/// not start an extra line (`"a\nb\n"` and `"a\nb"` both have 2, `"\n"` has 1).
#[must_use]
pub fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let newlines = crate::search::count_newlines(text.as_bytes());
    if text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// Keeps the beginning of `text`: whole lines only, at most `limits.max_lines` lines and
/// `limits.max_bytes` bytes (lines are joined by `\n`, without a trailing newline).
///
/// If the first line alone is longer than the byte limit, nothing is kept and
/// `first_line_exceeds_limit` is set, so the caller can say how to read that line instead.
#[must_use]
pub fn truncate_head(text: &str, limits: TruncationLimits) -> Truncation {
    let total_lines = count_lines(text);
    if total_lines <= limits.max_lines && text.len() <= limits.max_bytes {
        return Truncation::untouched(text, total_lines, limits);
    }
    let mut kept_end = 0;
    let mut lines = 0;
    let mut by = TruncatedBy::Bytes;
    let mut first_line_exceeds_limit = false;
    let mut start = 0;
    while start < text.len() {
        let end = memchr::memchr(b'\n', text.as_bytes().get(start..).unwrap_or_default())
            .map_or(text.len(), |offset| start + offset);
        if lines >= limits.max_lines {
            by = TruncatedBy::Lines;
            break;
        }
        // Kept lines are contiguous in `text`, so the cost of one more line is simply the
        // distance to its end (its bytes plus the separating newline).
        if end > limits.max_bytes {
            first_line_exceeds_limit = lines == 0;
            break;
        }
        kept_end = end;
        lines += 1;
        start = end + 1;
    }
    let content = text.get(..kept_end).unwrap_or_default();
    Truncation::cut(
        text,
        total_lines,
        limits,
        Kept {
            content,
            lines,
            by,
            partial: false,
            first_line_exceeds_limit,
        },
    )
}

/// Keeps the end of `text`: at most `limits.max_lines` lines and `limits.max_bytes` bytes.
///
/// Whole lines are kept, except when even the last line does not fit: then its final bytes
/// are kept (cut forward to a character boundary) and `last_line_partial` is set.
#[must_use]
pub fn truncate_tail(text: &str, limits: TruncationLimits) -> Truncation {
    let total_lines = count_lines(text);
    if total_lines <= limits.max_lines && text.len() <= limits.max_bytes {
        return Truncation::untouched(text, total_lines, limits);
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut kept_start = body.len();
    let mut lines = 0;
    let mut by = TruncatedBy::Bytes;
    let mut partial = false;
    // `end` is the end of the line being considered; lines are walked from the last one.
    let mut end = body.len();
    loop {
        let line_start = memchr::memrchr(b'\n', body.as_bytes().get(..end).unwrap_or_default())
            .map_or(0, |newline| newline + 1);
        if lines >= limits.max_lines {
            by = TruncatedBy::Lines;
            break;
        }
        if body.len() - line_start > limits.max_bytes {
            if lines == 0 {
                kept_start = ceil_char_boundary(body, end.saturating_sub(limits.max_bytes));
                lines = usize::from(kept_start < end);
                partial = true;
            }
            break;
        }
        kept_start = line_start;
        lines += 1;
        if line_start == 0 {
            break;
        }
        end = line_start - 1;
    }
    let content = body.get(kept_start..).unwrap_or_default();
    Truncation::cut(
        text,
        total_lines,
        limits,
        Kept {
            content,
            lines,
            by,
            partial,
            first_line_exceeds_limit: false,
        },
    )
}

/// The smallest character boundary of `text` at or after `index`.
fn ceil_char_boundary(text: &str, index: usize) -> usize {
    (index..text.len())
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(text.len())
}

/// Formats a byte count as the tools print it: `1023B`, `1.0KB`, `50.0KB`, `1.0MB`.
///
/// One decimal, rounded half up (as JavaScript's `toFixed(1)`).
#[must_use]
pub fn format_size(bytes: u64) -> String {
    const KIB: u128 = 1024;
    const MIB: u128 = 1024 * 1024;
    let value = u128::from(bytes);
    let (unit, divisor) = match value {
        _ if value < KIB => return format!("{bytes}B"),
        _ if value < MIB => ("KB", KIB),
        _ => ("MB", MIB),
    };
    let tenths = (value * 10 + divisor / 2) / divisor;
    format!("{}.{}{unit}", tenths / 10, tenths % 10)
}

/// Clips `line` to `max_chars` characters followed by `... [truncated]`, and says whether it
/// did. Counts Unicode scalar values, so a character is never split.
#[must_use]
pub fn clip_line(line: &str, max_chars: usize) -> (Cow<'_, str>, bool) {
    match line.char_indices().nth(max_chars) {
        Some((cut, _)) => {
            let kept = line.get(..cut).unwrap_or_default();
            (Cow::Owned(format!("{kept}{CLIP_MARKER}")), true)
        }
        None => (Cow::Borrowed(line), false),
    }
}

#[cfg(test)]
#[path = "truncate_tests.rs"]
mod tests;
