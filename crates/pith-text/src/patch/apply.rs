//! Applying one file's hunks: each hunk is an edit climbing the same ladder as
//! `edit` (exact → normalised → whitespace), unique or refused.

use serde::Serialize;

use super::{Hunk, HunkLine, hunk_edit, tier_of};
use crate::edit::{Edit, MatchTier, apply_edits};
use crate::error::EditError;

const BOM: &str = "\u{FEFF}";

/// Where and how one hunk matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HunkMatch {
    /// 0-based index of the hunk in its file section.
    pub index: usize,
    /// The rung that located it (`None` for a pure addition at the end of the file).
    pub tier: Option<MatchTier>,
    /// 1-based line where the hunk's text started, in the file as the earlier hunks left it.
    pub start_line: usize,
}

/// A file with its hunks applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchedFile {
    /// The exact text to write (BOM and line endings kept).
    pub text: String,
    /// The original, BOM removed, LF line endings (for diffs).
    pub old_content: String,
    /// The result, BOM removed, LF line endings (for diffs).
    pub new_content: String,
    /// One entry per hunk, in order.
    pub hunks: Vec<HunkMatch>,
}

/// A hunk that could not be applied; nothing of the file is changed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("hunk {} (patch line {line}): {error}", index + 1)]
pub struct HunkError {
    /// 0-based index of the hunk in its file section.
    pub index: usize,
    /// 1-based line of the patch where the hunk starts.
    pub line: usize,
    /// Why the engine refused it.
    pub error: EditError,
}

/// Applies `hunks` to `original` (a whole file's text) in order, each to the text the
/// earlier ones left, all or nothing.
///
/// Each hunk's context and `-` lines must occur exactly once on the first rung of the
/// ladder where they occur at all (see [`apply_edits`](crate::apply_edits)); when they
/// occur several times and the hunk has an `@@ line`, only the text after that line
/// (itself unique) is searched. A hunk without `-` or context lines inserts its `+` lines
/// after its `@@ line`, or at the end of the file when it has none. A hunk whose text
/// ends at the end of a file without a final newline matches there too.
///
/// # Errors
///
/// [`HunkError`] for the first hunk that does not apply.
pub fn apply_hunks(original: &str, hunks: &[Hunk]) -> Result<PatchedFile, HunkError> {
    let mut text = original.to_owned();
    let mut matches = Vec::with_capacity(hunks.len());
    for (index, hunk) in hunks.iter().enumerate() {
        let fail = |error| HunkError {
            index,
            line: hunk.line,
            error,
        };
        let (next, tier, start_line) = apply_one(&text, hunk).map_err(fail)?;
        text = next;
        matches.push(HunkMatch {
            index,
            tier,
            start_line,
        });
    }
    let old_content = lf_content(original);
    let new_content = lf_content(&text);
    if old_content == new_content && original == text {
        let index = hunks.len().saturating_sub(1);
        return Err(HunkError {
            index,
            line: hunks.get(index).map_or(0, |hunk| hunk.line),
            error: EditError::NoChange,
        });
    }
    Ok(PatchedFile {
        text,
        old_content,
        new_content,
        hunks: matches,
    })
}

/// The text without its BOM and with LF line endings.
fn lf_content(text: &str) -> String {
    text.strip_prefix(BOM).unwrap_or(text).replace("\r\n", "\n")
}

type Applied = (String, Option<MatchTier>, usize);

fn apply_one(text: &str, hunk: &Hunk) -> Result<Applied, EditError> {
    if hunk.old_lines.is_empty() {
        return insert(text, hunk);
    }
    let edit = hunk_edit(hunk);
    match apply_with_eof_fallback(text, &edit, hunk) {
        Err(EditError::Ambiguous { .. }) if hunk.header.is_some() => {
            let ambiguous = apply_with_eof_fallback(text, &edit, hunk);
            match split_after_header(text, hunk) {
                Some((head, tail, head_lines)) => {
                    let (tail, tier, line) = apply_with_eof_fallback(tail, &edit, hunk)?;
                    Ok((format!("{head}{tail}"), tier, line + head_lines))
                }
                None => ambiguous,
            }
        }
        other => other,
    }
}

/// The edit, and when its text is not found, the same edit without the final newline
/// (a hunk reaching the end of a file that has none).
fn apply_with_eof_fallback(text: &str, edit: &Edit, hunk: &Hunk) -> Result<Applied, EditError> {
    if text.ends_with('\n') || !edit.old_text.ends_with('\n') {
        return run(text, edit, hunk);
    }
    // The file has no final newline: its last line matches without one.
    let trimmed = Edit {
        old_text: edit.old_text[..edit.old_text.len() - 1].to_owned(),
        new_text: edit
            .new_text
            .strip_suffix('\n')
            .unwrap_or(&edit.new_text)
            .to_owned(),
    };
    match run(text, &trimmed, hunk) {
        Ok(applied) => Ok(applied),
        Err(EditError::NotFound { .. }) => run(text, edit, hunk),
        Err(error) => Err(error),
    }
}

fn run(text: &str, edit: &Edit, hunk: &Hunk) -> Result<Applied, EditError> {
    let outcome = apply_edits(text, std::slice::from_ref(edit))?;
    let Some(found) = outcome.matches.first() else {
        return Ok((outcome.file_text, None, 1));
    };
    let tier = tier_of(&outcome, 0);
    if tier == Some(MatchTier::Normalized)
        && let Some(rebuilt) = keep_context_lines(text, hunk, found.start_line, found.end_line)
    {
        return Ok((rebuilt, tier, found.start_line));
    }
    Ok((outcome.file_text, tier, found.start_line))
}

/// On the normalised rung, rebuilds the matched lines from the hunk's roles so that
/// context lines keep the file's bytes (curly quotes, trailing blanks) instead of the
/// patch's: `None` when the match does not cover exactly the hunk's old lines.
fn keep_context_lines(text: &str, hunk: &Hunk, start: usize, end: usize) -> Option<String> {
    let (bom, body) = match text.strip_prefix(BOM) {
        Some(body) => (BOM, body),
        None => ("", text),
    };
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let region = lines.get(start.checked_sub(1)?..end)?;
    if region.len() != hunk.old_lines.len() {
        return None;
    }
    let ending = if region[0].ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut result = String::with_capacity(body.len());
    result.push_str(bom);
    lines[..start - 1]
        .iter()
        .for_each(|line| result.push_str(line));
    let mut next = 0;
    for line in &hunk.lines {
        match line {
            HunkLine::Context(_) => {
                result.push_str(region[next]);
                next += 1;
            }
            HunkLine::Remove(_) => next += 1,
            HunkLine::Add(added) => {
                if !result.is_empty() && !result.ends_with('\n') {
                    result.push_str(ending);
                }
                result.push_str(added);
                result.push_str(ending);
            }
        }
    }
    lines[end..].iter().for_each(|line| result.push_str(line));
    Some(result)
}

/// Splits `text` after the unique line equal to the hunk's header (blanks ignored):
/// the head, the tail and the number of lines in the head.
fn split_after_header<'a>(text: &'a str, hunk: &Hunk) -> Option<(&'a str, &'a str, usize)> {
    let header = hunk.header.as_deref()?.trim();
    let mut found = None;
    let mut offset = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        offset += line.len();
        if line.trim() == header {
            if found.is_some() {
                return None;
            }
            found = Some((offset, number + 1));
        }
    }
    let (end, lines) = found?;
    Some((&text[..end], &text[end..], lines))
}

/// A hunk with only `+` lines: after its `@@ line`, or at the end of the file.
fn insert(text: &str, hunk: &Hunk) -> Result<Applied, EditError> {
    let added = hunk.new_lines.join("\n");
    if let Some(header) = &hunk.header {
        let edit = Edit {
            old_text: format!("{header}\n"),
            new_text: format!("{header}\n{added}\n"),
        };
        return apply_with_eof_fallback(text, &edit, hunk)
            .map(|(text, tier, line)| (text, tier, line + 1));
    }
    let ending = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut result = text.to_owned();
    if !result.is_empty() && !result.ends_with('\n') {
        result.push_str(ending);
    }
    let start_line = result.matches('\n').count() + 1;
    for line in &hunk.new_lines {
        result.push_str(line);
        result.push_str(ending);
    }
    Ok((result, None, start_line))
}
