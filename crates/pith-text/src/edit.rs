//! The edit engine: find each `old_text` exactly once, replace it, keep everything else.

use std::borrow::Cow;
use std::ops::Range;

use serde::Serialize;

use crate::closest::closest_fragment;
use crate::error::EditError;
use crate::lines::{LfText, to_lf};
use crate::normalize::{Normalized, normalize_for_fuzzy};
use crate::search::{Occurrences, count_newlines, find_all};
use crate::whitespace::{self, WhitespaceMatch};

const BOM: &str = "\u{FEFF}";

/// One replacement: `old_text` must occur exactly once in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The text to find.
    pub old_text: String,
    /// The text to put in its place.
    pub new_text: String,
}

/// The rung of the matching ladder that found an edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchTier {
    /// Byte-for-byte (line endings aside).
    Exact,
    /// After normalisation (NFKC, trailing whitespace, quotes, dashes, special spaces).
    Normalized,
    /// Whole lines equal modulo indentation and runs of blanks.
    Whitespace,
}

/// Where and how one edit matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditMatch {
    /// 0-based index of the edit.
    pub index: usize,
    /// The rung that matched.
    pub tier: MatchTier,
    /// 1-based first line of the original file the match covers.
    pub start_line: usize,
    /// 1-based last line of the original file the match covers.
    pub end_line: usize,
}

/// The result of [`apply_edits`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditOutcome {
    /// The original, BOM removed, LF-normalised (what diffs are computed from).
    pub old_content: String,
    /// The result, BOM removed, LF-normalised.
    pub new_content: String,
    /// The exact text to write: BOM restored, every untouched line with its own ending, and
    /// inserted lines with the ending of the lines they replace.
    pub file_text: String,
    /// One entry per edit, in the order of the edits.
    pub matches: Vec<EditMatch>,
}

/// [`apply_edits_borrowed`]'s result: an [`EditOutcome`] that copies the file only
/// where it must. For a file without `\r` or BOM the old content is the original
/// text itself and the file text is the new content, so an edit holds one new copy
/// of the file rather than three.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditResult<'a> {
    /// As [`EditOutcome::old_content`] (borrowed from the original when it is LF text).
    pub old_content: Cow<'a, str>,
    /// As [`EditOutcome::new_content`].
    pub new_content: String,
    /// The file text when it differs from `new_content` (a BOM, `\r` endings).
    file_text: Option<String>,
    /// As [`EditOutcome::matches`].
    pub matches: Vec<EditMatch>,
}

impl EditResult<'_> {
    /// As [`EditOutcome::file_text`].
    #[must_use]
    pub fn file_text(&self) -> &str {
        self.file_text.as_deref().unwrap_or(&self.new_content)
    }

    /// The owned [`EditOutcome`].
    #[must_use]
    pub fn into_outcome(self) -> EditOutcome {
        let file_text = self.file_text.unwrap_or_else(|| self.new_content.clone());
        EditOutcome {
            old_content: self.old_content.into_owned(),
            new_content: self.new_content,
            file_text,
            matches: self.matches,
        }
    }
}

/// One located edit: `range` of the LF text becomes `replacement`.
pub(crate) struct Located<'a> {
    pub(crate) index: usize,
    pub(crate) tier: MatchTier,
    pub(crate) range: Range<usize>,
    pub(crate) replacement: Cow<'a, str>,
}

/// Applies `edits` to `original` (a whole file's text), all or nothing.
///
/// Every edit is matched against the original, not against the result of earlier edits,
/// on LF-normalised text (a BOM is set aside and restored). Each edit climbs a ladder from
/// strict to lenient; the first rung where it occurs at all decides, and it must occur
/// there exactly once (overlapping occurrences count):
///
/// 1. [`MatchTier::Exact`]: byte for byte.
/// 2. [`MatchTier::Normalized`]: both sides passed through
///    [`normalize_for_fuzzy`](crate::normalize_for_fuzzy); the match maps back to the exact
///    original bytes it came from, and only those are replaced (the rest of the line stays
///    as it was, trailing spaces and curly quotes included). A match starting at the start
///    of a line starts at the start of the file line (a whitespace-only first line is
///    replaced whole), and blanks ending `old_text` take the same blanks of the file.
/// 3. [`MatchTier::Whitespace`]: whole lines, ignoring the kind and amount of indentation
///    and the length of inner runs of spaces and tabs; blanks after the last matched
///    character stay when `old_text` stops before them. Every line of `new_text` is placed
///    at the depth it belongs at: a line equal to its `old_text` line is the file's line
///    (shifted only when the sender changed its indentation relative to that `old_text`
///    line), a changed line takes the indentation of the line it replaces, an inserted line
///    that of the lines around it; where `old_text` kept the file's structure its
///    indentation is translated into the file's characters. When a line's depth is
///    ambiguous, or the result would open a block without indenting it, the edit is refused
///    with [`EditError::AmbiguousIndentation`].
///
/// `new_text` is otherwise inserted verbatim; its newlines take the endings of the lines it
/// replaces, and lines outside the matches keep their bytes and endings.
///
/// # Errors
///
/// [`EditError::NoEdits`] for an empty list, then the first of
/// [`EditError::EmptyOldText`], [`EditError::NotFound`], [`EditError::Ambiguous`] or
/// [`EditError::AmbiguousIndentation`] in edit order, then [`EditError::Overlap`], then
/// [`EditError::NoChange`].
pub fn apply_edits(original: &str, edits: &[Edit]) -> Result<EditOutcome, EditError> {
    apply_edits_replacing_all(original, edits, &[])
}

/// [`apply_edits`], except that each edit whose index is `true` in `replace_all` replaces
/// every non-overlapping exact occurrence of its `old_text` (the exact rung only; none at
/// all is [`EditError::NotFound`]). Such an edit gets one [`EditMatch`] per occurrence, so
/// the matches say how many were replaced.
///
/// # Errors
///
/// As [`apply_edits`].
pub fn apply_edits_replacing_all(
    original: &str,
    edits: &[Edit],
    replace_all: &[bool],
) -> Result<EditOutcome, EditError> {
    apply_edits_borrowed(original, edits, replace_all).map(EditResult::into_outcome)
}

/// [`apply_edits_replacing_all`] returning an [`EditResult`], which borrows the
/// original where it can instead of copying it.
///
/// # Errors
///
/// As [`apply_edits`].
pub fn apply_edits_borrowed<'a>(
    original: &'a str,
    edits: &[Edit],
    replace_all: &[bool],
) -> Result<EditResult<'a>, EditError> {
    if edits.is_empty() {
        return Err(EditError::NoEdits);
    }
    if let Some(index) = edits.iter().position(|edit| edit.old_text.is_empty()) {
        return Err(EditError::EmptyOldText { index });
    }
    let (bom, body) = match original.strip_prefix(BOM) {
        Some(body) => (BOM, body),
        None => ("", original),
    };
    let document = LfText::new(body);
    let text = document.lf();
    let mut normalized = None;
    let mut located = Vec::with_capacity(edits.len());
    for (index, edit) in edits.iter().enumerate() {
        if replace_all.get(index).copied().unwrap_or(false) {
            located.extend(locate_every(text, index, edit)?);
        } else {
            located.push(locate(text, &mut normalized, index, edit)?);
        }
    }
    located.sort_by_key(|edit| (edit.range.start, edit.range.end));
    for pair in located.windows(2) {
        if let [before, after] = pair
            && before.range.end > after.range.start
        {
            let (first, second) = (before.index.min(after.index), before.index.max(after.index));
            return Err(EditError::Overlap { first, second });
        }
    }
    if located
        .iter()
        .all(|edit| text.get(edit.range.clone()) == Some(&*edit.replacement))
    {
        return Err(EditError::NoChange);
    }
    let new_content = splice(text, &located);
    let file_text = if document.had_carriage_returns() {
        let replacements: Vec<(Range<usize>, &str)> = located
            .iter()
            .map(|edit| (edit.range.clone(), &*edit.replacement))
            .collect();
        let mut file_text = String::with_capacity(bom.len() + body.len() + new_content.len() / 8);
        file_text.push_str(bom);
        file_text.push_str(&document.rebuild(&replacements, body.len()));
        Some(file_text)
    } else if bom.is_empty() {
        None
    } else {
        Some(format!("{bom}{new_content}"))
    };
    let matches = line_numbers(text, &located);
    drop(located);
    Ok(EditResult {
        old_content: document.into_lf(),
        new_content,
        file_text,
        matches,
    })
}

/// Finds one edit in `text`, climbing the ladder; `normalized` caches the normalised text.
fn locate<'a>(
    text: &str,
    normalized: &mut Option<Normalized>,
    index: usize,
    edit: &'a Edit,
) -> Result<Located<'a>, EditError> {
    let old = to_lf(&edit.old_text);
    let new = to_lf(&edit.new_text);
    let found = |tier, range, replacement| {
        Ok(Located {
            index,
            tier,
            range,
            replacement,
        })
    };
    let ambiguous = |count, starts: &[usize], within: &str| {
        let lines = starts.iter().map(|&start| line_of(within, start)).collect();
        Err(EditError::Ambiguous {
            index,
            count,
            lines,
        })
    };

    let exact = find_all(text.as_bytes(), old.as_bytes());
    match exact {
        Occurrences {
            count: 1,
            ref starts,
        } => {
            let start = starts.first().copied().unwrap_or(0);
            return found(MatchTier::Exact, start..start + old.len(), new);
        }
        Occurrences { count: 0, .. } => {}
        Occurrences { count, ref starts } => return ambiguous(count, starts, text),
    }

    let needle = normalize_for_fuzzy(&old);
    if !needle.as_str().is_empty() {
        let haystack = normalized.get_or_insert_with(|| normalize_for_fuzzy(text));
        match find_all(haystack.as_str().as_bytes(), needle.as_str().as_bytes()) {
            Occurrences { count: 1, starts } => {
                let start = starts.first().copied().unwrap_or(0);
                let range = haystack.original_range(start..start + needle.as_str().len());
                let range = whole_line_edges(text, haystack.as_str(), &old, start, range);
                return found(MatchTier::Normalized, range, new);
            }
            Occurrences { count: 0, .. } => {}
            // Normalisation keeps every newline, so line numbers agree with the original's.
            Occurrences { count, starts } => return ambiguous(count, &starts, haystack.as_str()),
        }
    }

    let haystack = normalized.get_or_insert_with(|| normalize_for_fuzzy(text));
    match whitespace::find(text, haystack.as_str(), &old, needle.as_str(), &new) {
        WhitespaceMatch::Unique { span, replacement } => {
            found(MatchTier::Whitespace, span, Cow::Owned(replacement))
        }
        WhitespaceMatch::Ambiguous { count, lines } => Err(EditError::Ambiguous {
            index,
            count,
            lines,
        }),
        WhitespaceMatch::Unplaceable {
            start_line,
            lines,
            new_line,
        } => Err(EditError::AmbiguousIndentation {
            index,
            start_line,
            lines,
            new_line,
        }),
        WhitespaceMatch::None => Err(EditError::NotFound {
            index,
            closest: closest_fragment(text, &old),
        }),
    }
}

/// Widens a normalised match (`range` of `text`, found at `normalized_start` of the
/// normalised `normalized`) to the whole-line edges its `old` text asks for.
///
/// Normalisation strips trailing blanks, so a whitespace-only line of the file normalises to
/// nothing and a match that starts on it would start after its blanks: a match starting at
/// the start of a normalised line starts at the start of the file line. And blanks that end
/// `old` (stripped from the needle) take the same blanks of the file after the match.
fn whole_line_edges(
    text: &str,
    normalized: &str,
    old: &str,
    normalized_start: usize,
    range: Range<usize>,
) -> Range<usize> {
    let bytes = text.as_bytes();
    let at_line_start =
        normalized_start == 0 || normalized.as_bytes().get(normalized_start - 1) == Some(&b'\n');
    let start = if at_line_start {
        let head = bytes.get(..range.start).unwrap_or_default();
        memchr::memrchr(b'\n', head).map_or(0, |newline| newline + 1)
    } else {
        range.start
    };
    let last_line = old.rsplit('\n').next().unwrap_or_default();
    let tail = last_line
        .get(last_line.trim_end_matches([' ', '\t']).len()..)
        .unwrap_or_default();
    let end = if !tail.is_empty()
        && text
            .get(range.end..)
            .is_some_and(|rest| rest.starts_with(tail))
    {
        range.end + tail.len()
    } else {
        range.end
    };
    start..end
}

/// Every non-overlapping exact occurrence of one edit, left to right.
fn locate_every<'a>(
    text: &str,
    index: usize,
    edit: &'a Edit,
) -> Result<Vec<Located<'a>>, EditError> {
    let old = to_lf(&edit.old_text);
    let new = to_lf(&edit.new_text);
    // `match_indices` is left to right and skips overlapping occurrences.
    let located: Vec<Located<'a>> = text
        .match_indices(&*old)
        .map(|(start, _)| Located {
            index,
            tier: MatchTier::Exact,
            range: start..start + old.len(),
            replacement: new.clone(),
        })
        .collect();
    if located.is_empty() {
        return Err(EditError::NotFound {
            index,
            closest: closest_fragment(text, &old),
        });
    }
    Ok(located)
}

/// 1-based line of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    1 + count_newlines(text.as_bytes().get(..offset).unwrap_or_default())
}

/// `text` with the sorted, disjoint `located` ranges replaced.
fn splice(text: &str, located: &[Located<'_>]) -> String {
    let inserted: usize = located.iter().map(|edit| edit.replacement.len()).sum();
    let mut out = String::with_capacity(text.len() + inserted);
    let mut copied = 0;
    for edit in located {
        out.push_str(text.get(copied..edit.range.start).unwrap_or_default());
        out.push_str(&edit.replacement);
        copied = edit.range.end;
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    out
}

/// Match info for the sorted `located` edits, returned in edit order; one pass over `text`.
pub(crate) fn line_numbers(text: &str, located: &[Located<'_>]) -> Vec<EditMatch> {
    let bytes = text.as_bytes();
    let mut line = 1;
    let mut counted = 0;
    let mut matches: Vec<EditMatch> = located
        .iter()
        .map(|edit| {
            line += count_newlines(bytes.get(counted..edit.range.start).unwrap_or_default());
            counted = edit.range.start;
            let matched = bytes.get(edit.range.clone()).unwrap_or_default();
            let inner = matched.strip_suffix(b"\n").unwrap_or(matched);
            EditMatch {
                index: edit.index,
                tier: edit.tier,
                start_line: line,
                end_line: line + count_newlines(inner),
            }
        })
        .collect();
    matches.sort_by_key(|found| found.index);
    matches
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
