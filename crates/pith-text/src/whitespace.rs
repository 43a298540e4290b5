//! The third rung of the matching ladder: whole lines compared modulo whitespace, and the
//! re-indentation of the replacement into the file's own style.
//!
//! Two lines are equal here when they are equal after dropping leading and trailing spaces
//! and tabs and shrinking every inner run of spaces and tabs to one space. Lines are hashed
//! under that equality, and the needle's hash sequence is searched with Knuth–Morris–Pratt,
//! so the rung is linear in the size of the file.

use std::ops::Range;

use similar::{Algorithm, DiffTag, capture_diff_slices};

use crate::lines::lines;
use crate::search::{REPORTED_OCCURRENCES, kmp};

/// Candidates up to this many are verified line by line; past it the hashes are trusted for
/// counting (the count only feeds an ambiguity message).
const VERIFIED_CANDIDATES: usize = 64;
/// Width of a tab when comparing indentation depths.
const TAB_COLUMNS: usize = 4;

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
        (1, Some(&first)) => {
            let window = file_lines
                .get(first..first + old_lines.len())
                .unwrap_or_default();
            let span = span_of(
                text,
                &starts,
                first..first + window.len(),
                old.ends_with('\n'),
            );
            let replacement = reindent(&old_lines, window, new, || file_indent_unit(&file_lines));
            WhitespaceMatch::Unique { span, replacement }
        }
        (0, _) | (_, None) => WhitespaceMatch::None,
        (count, _) => WhitespaceMatch::Ambiguous {
            count,
            lines: found.iter().map(|line| line + 1).collect(),
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

fn is_blank(line: &str) -> bool {
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

pub(crate) fn key_hash(line: &str) -> u64 {
    // FNV-1a: tiny, and collisions are re-checked by `same_key`.
    key_bytes(line).fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn same_key(left: &str, right: &str) -> bool {
    key_bytes(left).eq(key_bytes(right))
}

fn leading(line: &str) -> &str {
    let rest = line.trim_start_matches([' ', '\t']);
    line.get(..line.len() - rest.len()).unwrap_or_default()
}

fn columns(indent: &str) -> usize {
    indent
        .bytes()
        .map(|byte| if byte == b'\t' { TAB_COLUMNS } else { 1 })
        .sum()
}

/// Rewrites `new` for the file: lines it keeps from `old` are copied from the file as they
/// are, and other lines get the file's indentation at the same relative depth.
fn reindent(
    old_lines: &[&str],
    file_lines: &[&str],
    new: &str,
    file_unit: impl FnOnce() -> Option<String>,
) -> String {
    if new.is_empty() {
        return String::new();
    }
    let (new_body, newline) = match new.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (new, ""),
    };
    let new_lines: Vec<&str> = new_body.split('\n').collect();
    let mut kept: Vec<Option<usize>> = vec![None; new_lines.len()];
    for op in capture_diff_slices(Algorithm::Myers, old_lines, &new_lines) {
        if op.tag() == DiffTag::Equal {
            for (old_index, new_index) in op.old_range().zip(op.new_range()) {
                if let Some(slot) = kept.get_mut(new_index) {
                    *slot = Some(old_index);
                }
            }
        }
    }
    let style = Style::learn(old_lines, file_lines, &new_lines, file_unit);
    let mut out = String::with_capacity(new.len() + new.len() / 4);
    for (index, line) in new_lines.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        match kept
            .get(index)
            .copied()
            .flatten()
            .and_then(|old| file_lines.get(old))
        {
            Some(file_line) => out.push_str(file_line),
            None if is_blank(line) => {}
            None => {
                let indent = leading(line);
                out.push_str(&style.indent(indent));
                out.push_str(line.get(indent.len()..).unwrap_or_default());
            }
        }
    }
    out.push_str(newline);
    out
}

/// How the sender's indentation translates into the file's.
struct Style<'a> {
    /// (sender's indentation, file's indentation) of each non-blank matched line.
    pairs: Vec<(&'a str, &'a str)>,
    /// Depth of the shallowest matched line as the sender wrote it, in columns.
    sender_base: usize,
    /// The file's indentation of that line.
    file_base: &'a str,
    /// One level of the sender's indentation, in columns.
    sender_unit: usize,
    /// One level of the file's indentation, as written in the file.
    file_unit: String,
}

impl<'a> Style<'a> {
    fn learn(
        old_lines: &[&'a str],
        file_lines: &[&'a str],
        new_lines: &[&str],
        file_unit: impl FnOnce() -> Option<String>,
    ) -> Self {
        let pairs: Vec<(&str, &str)> = old_lines
            .iter()
            .zip(file_lines)
            .filter(|(old, _)| !is_blank(old))
            .map(|(old, file)| (leading(old), leading(file)))
            .collect();
        let (sender_base, file_base) = pairs
            .iter()
            .min_by_key(|(old, _)| columns(old))
            .map_or((0, ""), |(old, file)| (columns(old), *file));
        let depth = |indent: &str| columns(indent).checked_sub(sender_base).filter(|&d| d > 0);
        let sender_unit = pairs
            .iter()
            .filter_map(|(old, _)| depth(old))
            .min()
            .or_else(|| {
                new_lines
                    .iter()
                    .filter(|line| !is_blank(line))
                    .filter_map(|line| depth(leading(line)))
                    .min()
            })
            .unwrap_or(TAB_COLUMNS);
        let learned = pairs.iter().find_map(|(old, file)| {
            let levels = depth(old).filter(|d| d % sender_unit == 0)? / sender_unit;
            let extra = file.strip_prefix(file_base)?;
            let unit = extra.get(..extra.len() / levels)?;
            (!unit.is_empty() && unit.repeat(levels) == extra).then(|| unit.to_owned())
        });
        let file_unit = learned
            .or_else(|| file_base.contains('\t').then(|| "\t".to_owned()))
            .or_else(|| (!file_base.is_empty()).then(|| " ".repeat(sender_unit)))
            .or_else(file_unit)
            .unwrap_or_else(|| " ".repeat(sender_unit));
        Self {
            pairs,
            sender_base,
            file_base,
            sender_unit,
            file_unit,
        }
    }

    /// The file's indentation for a line the sender indented with `indent`.
    fn indent(&self, indent: &str) -> String {
        if let Some((_, file)) = self.pairs.iter().find(|(old, _)| *old == indent) {
            return (*file).to_owned();
        }
        let width = columns(indent);
        if width >= self.sender_base {
            let depth = width - self.sender_base;
            let mut out = self.file_base.to_owned();
            out.push_str(&self.file_unit.repeat(depth / self.sender_unit));
            out.push_str(&" ".repeat(depth % self.sender_unit));
            return out;
        }
        let levels = (self.sender_base - width).div_ceil(self.sender_unit);
        let mut base = self.file_base;
        for _ in 0..levels {
            base = base
                .strip_suffix(self.file_unit.as_str())
                .unwrap_or_else(|| base.get(..base.len().saturating_sub(1)).unwrap_or_default());
        }
        base.to_owned()
    }
}

/// The file's indentation unit, guessed from all its lines: a tab when most indented lines
/// start with one, else the smallest common count of leading spaces.
fn file_indent_unit(file_lines: &[&str]) -> Option<String> {
    let mut tabs = 0;
    let mut spaces = [0_usize; 9];
    for line in file_lines {
        let indent = leading(line);
        if indent.len() == line.len() {
            continue;
        }
        if indent.starts_with('\t') {
            tabs += 1;
        } else if let Some(slot) = spaces.get_mut(indent.len()) {
            *slot += 1;
        }
    }
    let spaced: usize = spaces.iter().skip(1).sum();
    if tabs > spaced {
        return Some("\t".to_owned());
    }
    let common = (2..spaces.len()).find(|&width| {
        spaces
            .get(width)
            .is_some_and(|&lines| lines > 0 && lines * 10 >= spaced)
    })?;
    Some(" ".repeat(common))
}

#[cfg(test)]
#[path = "whitespace_tests.rs"]
mod tests;
