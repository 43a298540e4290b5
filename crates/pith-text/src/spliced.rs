//! Exact edits as splices of the original text, for callers that keep the
//! original where it is (a large file) and never build the new text whole.
//!
//! [`locate_exact`] answers only when the engine's answer is certain to be the
//! plain exact rung: UTF-8 text without a BOM or any `\r`, every `old_text` found
//! exactly once (overlapping occurrences count, as in the engine), no overlaps,
//! and something changes. Anything else is `None`, and the caller runs
//! [`apply_edits_borrowed`](crate::apply_edits_borrowed), whose ladder, errors
//! and hints then decide. What [`ExactEdits`] gives (matches, display diff,
//! unified patch) is what the engine path gives for the same edit, computed
//! only around the changes: the common prefix and suffix are compared piece by
//! piece, and only the narrowed middle of the new text is built.

use std::borrow::Cow;
use std::ops::Range;

use crate::diff::{DisplayDiff, display_diff_of, unified_patch_of};
use crate::edit::{Edit, EditMatch, Located, MatchTier, line_numbers};
use crate::middle::{Middle, common_prefix, common_suffix, cut_points};
use crate::search::{Occurrences, count_newlines, find_all};

/// Exact, unique, non-overlapping replacements in an LF text without a BOM.
#[derive(Clone, Debug)]
pub struct ExactEdits<'a> {
    original: &'a str,
    /// Byte ranges of `original` and their replacements, sorted, not overlapping.
    splices: Vec<(Range<usize>, &'a str)>,
    matches: Vec<EditMatch>,
    /// Newlines of `original` before the first splice.
    lines_before: usize,
}

/// The edits as splices of `original` when each is an exact, unique match the
/// engine would take as is (see the module docs); `None` otherwise.
#[must_use]
pub fn locate_exact<'a>(
    original: &'a str,
    edits: &'a [Edit],
    replace_all: &[bool],
) -> Option<ExactEdits<'a>> {
    if edits.is_empty()
        || replace_all.iter().any(|all| *all)
        || original.starts_with('\u{FEFF}')
        || memchr::memchr(b'\r', original.as_bytes()).is_some()
    {
        return None;
    }
    let mut located = Vec::with_capacity(edits.len());
    for (index, edit) in edits.iter().enumerate() {
        let (old, new) = (edit.old_text.as_str(), edit.new_text.as_str());
        if old.is_empty() || old.contains('\r') || new.contains('\r') {
            return None;
        }
        let Occurrences { count: 1, starts } = find_all(original.as_bytes(), old.as_bytes()) else {
            return None;
        };
        let start = starts.first().copied()?;
        located.push(Located {
            index,
            tier: MatchTier::Exact,
            range: start..start + old.len(),
            replacement: Cow::Borrowed(new),
        });
    }
    located.sort_by_key(|edit| (edit.range.start, edit.range.end));
    if located
        .windows(2)
        .any(|pair| pair[0].range.end > pair[1].range.start)
        || located
            .iter()
            .all(|edit| original.get(edit.range.clone()) == Some(&*edit.replacement))
    {
        return None;
    }
    let matches = line_numbers(original, &located);
    let lines_before = located
        .first()
        .and_then(|first| matches.iter().find(|found| found.index == first.index))
        .map_or(0, |found| found.start_line - 1);
    let splices = located
        .iter()
        .map(|edit| (edit.range.clone(), edits[edit.index].new_text.as_str()))
        .collect();
    Some(ExactEdits {
        original,
        splices,
        matches,
        lines_before,
    })
}

impl<'a> ExactEdits<'a> {
    /// One entry per edit, in the order of the edits (as the engine reports them).
    #[must_use]
    pub fn matches(&self) -> &[EditMatch] {
        &self.matches
    }

    /// The replaced byte ranges of the original and what replaces each, in file order.
    #[must_use]
    pub fn splices(&self) -> &[(Range<usize>, &'a str)] {
        &self.splices
    }

    /// The new text as consecutive pieces: unchanged stretches of the original
    /// and the replacements between them.
    #[must_use]
    pub fn pieces(&self) -> Vec<&'a [u8]> {
        let bytes = self.original.as_bytes();
        let mut pieces = Vec::with_capacity(2 * self.splices.len() + 1);
        let mut at = 0;
        for (range, replacement) in &self.splices {
            pieces.push(bytes.get(at..range.start).unwrap_or_default());
            pieces.push(replacement.as_bytes());
            at = range.end;
        }
        pieces.push(bytes.get(at..).unwrap_or_default());
        pieces
    }

    /// The new text's length in bytes.
    #[must_use]
    pub fn new_len(&self) -> usize {
        self.splices
            .iter()
            .fold(self.original.len(), |len, (range, replacement)| {
                len - range.len() + replacement.len()
            })
    }

    /// The new text, built whole (for tests and small texts).
    #[must_use]
    pub fn new_text(&self) -> String {
        let mut text = String::with_capacity(self.new_len());
        for piece in self.pieces() {
            text.push_str(&String::from_utf8_lossy(piece));
        }
        text
    }

    /// [`display_diff`](crate::display_diff) of the original and the new text.
    #[must_use]
    pub fn display_diff(&self, context: usize) -> DisplayDiff {
        let old_lines = self.newlines_before(self.original.len());
        let new_lines = self
            .splices
            .iter()
            .fold(old_lines, |lines, (range, replacement)| {
                let removed = count_newlines(
                    self.original
                        .as_bytes()
                        .get(range.clone())
                        .unwrap_or_default(),
                );
                lines - removed + count_newlines(replacement.as_bytes())
            });
        let new = self.middle_new(context + 1);
        let middle = self.middle(context + 1, &new);
        display_diff_of(&middle, old_lines.max(new_lines) + 1, context)
    }

    /// [`unified_patch`](crate::unified_patch) of the original and the new text.
    #[must_use]
    pub fn unified_patch(&self, path: &str, context: usize) -> String {
        let new = self.middle_new(context + 1);
        let middle = self.middle(context + 1, &new);
        unified_patch_of(path, &middle, context)
    }

    /// Where [`Middle::new`] would cut both texts: `(start, dropped)`, the bytes
    /// dropped before the middle (both texts) and after it (both texts).
    fn cuts(&self, keep: usize) -> (usize, usize) {
        let old = self.original.as_bytes();
        let pieces = self.pieces();
        let new_len = self.new_len();
        // The first piece is the original's own prefix; so is the last piece its suffix.
        let mut prefix = pieces.first().map_or(0, |piece| piece.len());
        for piece in pieces.iter().skip(1) {
            let same = common_prefix(old.get(prefix..).unwrap_or_default(), piece);
            prefix += same;
            if same < piece.len() {
                break;
            }
        }
        let mut suffix = pieces.last().map_or(0, |piece| piece.len());
        for piece in pieces.iter().rev().skip(1) {
            let same = common_suffix(old.get(..old.len() - suffix).unwrap_or_default(), piece);
            suffix += same;
            if same < piece.len() {
                break;
            }
        }
        cut_points(
            old,
            new_len,
            prefix.min(old.len()).min(new_len),
            suffix,
            keep,
        )
    }

    /// The new text's middle (see [`ExactEdits::cuts`]), built from the pieces.
    fn middle_new(&self, keep: usize) -> String {
        let (start, dropped) = self.cuts(keep);
        let end = self.new_len() - dropped;
        let mut bytes = Vec::with_capacity(end.saturating_sub(start));
        let mut at = 0;
        for piece in self.pieces() {
            let piece_end = at + piece.len();
            if piece_end > start && at < end {
                let from = start.saturating_sub(at);
                let to = piece.len().min(end - at);
                bytes.extend_from_slice(piece.get(from..to).unwrap_or_default());
            }
            at = piece_end;
        }
        match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
        }
    }

    fn middle<'m>(&'m self, keep: usize, new: &'m str) -> Middle<'m> {
        let (start, dropped) = self.cuts(keep);
        let old = self.original;
        Middle {
            old: old.get(start..old.len() - dropped).unwrap_or(old),
            new,
            skipped_lines: self.newlines_before(start),
        }
    }

    /// Newlines of the original before byte `at`, counted from the first splice
    /// (whose line the matches know already).
    fn newlines_before(&self, at: usize) -> usize {
        let bytes = self.original.as_bytes();
        let first = self.splices.first().map_or(0, |(range, _)| range.start);
        if at >= first {
            self.lines_before + count_newlines(bytes.get(first..at).unwrap_or_default())
        } else {
            self.lines_before - count_newlines(bytes.get(at..first).unwrap_or_default())
        }
    }
}

#[cfg(test)]
#[path = "spliced_tests.rs"]
mod tests;
