//! The third rung of the matching ladder: whole lines compared modulo whitespace, and the
//! re-indentation of the replacement into the file's own style.
//!
//! Two lines are equal here when they are equal after dropping leading and trailing spaces
//! and tabs and shrinking every inner run of spaces and tabs to one space. Lines are hashed
//! under that equality, and the needle's hash sequence is searched with Knuth–Morris–Pratt,
//! so the rung is linear in the size of the file.

use std::ops::Range;

use crate::indent::{Region, Unplaceable, reindent};
use crate::lines::lines;
use crate::search::{REPORTED_OCCURRENCES, kmp};

/// Candidates up to this many are verified line by line; past it the hashes are trusted for
/// counting (the count only feeds an ambiguity message).
const VERIFIED_CANDIDATES: usize = 64;
/// Width of a tab when comparing indentation depths.
pub(crate) const TAB_COLUMNS: usize = 4;

/// What the whitespace rung found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum WhitespaceMatch {
    /// No run of lines matches.
    None,
    /// Exactly one run matches: replace `span` (bytes of the text) with `replacement`.
    Unique {
        span: Range<usize>,
        replacement: String,
    },
    /// Several runs match; `lines` are the 1-based first lines of the first few.
    Ambiguous { count: usize, lines: Vec<usize> },
    /// One run matches, but where a line of `new` goes is ambiguous: the run starts at
    /// 1-based line `start_line` and is `lines` in the file; `new_line` is 1-based in `new`.
    Unplaceable {
        start_line: usize,
        lines: String,
        new_line: usize,
    },
}

/// Looks for the lines of `old` in `text` modulo whitespace and, when they occur exactly once,
/// re-indents `new` to replace them.
///
/// Lines are compared through their keys, taken from `keys_text` and `keys_old`: the
/// normalised forms of `text` and `old` (quotes, dashes, special spaces, NFKC), which have
/// the same lines. So a snippet that was re-indented *and* had its quotes curled still
/// matches. Where normalisation changed the line count (a last line of only whitespace),
/// the original lines are their own keys.
pub(crate) fn find(
    text: &str,
    keys_text: &str,
    old: &str,
    keys_old: &str,
    new: &str,
) -> WhitespaceMatch {
    let old_body = old.strip_suffix('\n').unwrap_or(old);
    let old_lines: Vec<&str> = old_body.split('\n').collect();
    if old_lines.iter().all(|line| is_blank(line)) {
        return WhitespaceMatch::None;
    }
    let keys_old_body = keys_old.strip_suffix('\n').unwrap_or(keys_old);
    let old_keys: Vec<&str> = keys_old_body.split('\n').collect();
    let old_keys = if old_keys.len() == old_lines.len() {
        old_keys
    } else {
        old_lines.clone()
    };
    let needle: Vec<u64> = old_keys.iter().map(|line| key_hash(line)).collect();
    let (starts, file_lines): (Vec<usize>, Vec<&str>) = lines(text).unzip();
    let file_keys: Vec<&str> = lines(keys_text).map(|(_, line)| line).collect();
    let file_keys = if file_keys.len() == file_lines.len() {
        file_keys
    } else {
        file_lines.clone()
    };
    let hashes: Vec<u64> = file_keys.iter().map(|line| key_hash(line)).collect();
    let mut count = 0;
    let mut found = Vec::new();
    kmp(&hashes, &needle, |first| {
        let window = file_keys
            .get(first..first + old_keys.len())
            .unwrap_or_default();
        let verified = count >= VERIFIED_CANDIDATES
            || window
                .iter()
                .zip(&old_keys)
                .all(|(line, old_line)| same_key(line, old_line));
        if verified {
            count += 1;
            if found.len() < REPORTED_OCCURRENCES {
                found.push(first);
            }
        }
    });
    match (count, found.first()) {
        (1, Some(&first)) => unique(text, &starts, &file_lines, first, &old_lines, old, new),
        (0, _) | (_, None) => WhitespaceMatch::None,
        (count, _) => WhitespaceMatch::Ambiguous {
            count,
            lines: found.iter().map(|line| line + 1).collect(),
        },
    }
}

/// The match of `old_lines` at line `first` of `text`: its span and the re-indented `new`.
fn unique(
    text: &str,
    starts: &[usize],
    file_lines: &[&str],
    first: usize,
    old_lines: &[&str],
    old: &str,
    new: &str,
) -> WhitespaceMatch {
    let end = (first + old_lines.len()).min(file_lines.len());
    let mut window: Vec<&str> = file_lines.get(first..end).unwrap_or_default().to_vec();
    let mut span = span_of(text, starts, first..end, old.ends_with('\n'));
    // Blanks after the last matched character stay when old_text stops before them.
    let old_stops_early = !old.ends_with('\n')
        && old_lines
            .last()
            .is_some_and(|line| !line.ends_with([' ', '\t']));
    if old_stops_early && let Some(last) = window.last_mut() {
        let trimmed = last.trim_end_matches([' ', '\t']);
        if !trimmed.is_empty() {
            span.end -= last.len() - trimmed.len();
            *last = trimmed;
        }
    }
    let before = file_lines
        .get(..first)
        .unwrap_or_default()
        .iter()
        .rev()
        .find(|line| !is_blank(line))
        .copied();
    let after = file_lines
        .get(end..)
        .unwrap_or_default()
        .iter()
        .find(|line| !is_blank(line))
        .copied();
    let region = Region {
        old: old_lines,
        window: &window,
        before,
        after,
        file: file_lines,
    };
    match reindent(&region, new) {
        Ok(replacement) => WhitespaceMatch::Unique { span, replacement },
        Err(Unplaceable { new_line }) => WhitespaceMatch::Unplaceable {
            start_line: first + 1,
            lines: file_lines.get(first..end).unwrap_or_default().join("\n"),
            new_line: new_line + 1,
        },
    }
}

/// The byte span of the lines `window` of `text` (whose lines start at `starts`), with the
/// newline after its last line when the needle ended with one.
fn span_of(text: &str, starts: &[usize], window: Range<usize>, with_newline: bool) -> Range<usize> {
    let start = starts.get(window.start).copied().unwrap_or(text.len());
    let end = match starts.get(window.end) {
        Some(&next) => next - 1,
        None => text.strip_suffix('\n').unwrap_or(text).len(),
    };
    let end = end.max(start);
    let end = if with_newline && text.as_bytes().get(end) == Some(&b'\n') {
        end + 1
    } else {
        end
    };
    start..end
}

fn is_indent(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

pub(crate) fn is_blank(line: &str) -> bool {
    line.bytes().all(is_indent)
}

/// The bytes of a line's whitespace-insensitive key: no leading or trailing blanks, inner
/// runs of blanks shrunk to one space.
fn key_bytes(line: &str) -> impl Iterator<Item = u8> + '_ {
    let mut bytes = line.trim_matches([' ', '\t']).bytes().peekable();
    std::iter::from_fn(move || {
        let byte = bytes.next()?;
        if is_indent(byte) {
            while bytes.next_if(|&next| is_indent(next)).is_some() {}
            return Some(b' ');
        }
        Some(byte)
    })
}

/// A line's whitespace-insensitive key.
pub(crate) fn key_string(line: &str) -> String {
    String::from_utf8_lossy(&key_bytes(line).collect::<Vec<u8>>()).into_owned()
}

pub(crate) fn key_hash(line: &str) -> u64 {
    // FNV-1a: tiny, and collisions are re-checked by `same_key`.
    key_bytes(line).fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn same_key(left: &str, right: &str) -> bool {
    key_bytes(left).eq(key_bytes(right))
}

pub(crate) fn leading(line: &str) -> &str {
    let rest = line.trim_start_matches([' ', '\t']);
    line.get(..line.len() - rest.len()).unwrap_or_default()
}

pub(crate) fn columns(indent: &str) -> usize {
    indent
        .bytes()
        .map(|byte| if byte == b'\t' { TAB_COLUMNS } else { 1 })
        .sum()
}

#[cfg(test)]
#[path = "whitespace_tests.rs"]
mod tests;
