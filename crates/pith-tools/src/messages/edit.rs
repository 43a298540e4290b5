//! `edit`.

use std::fmt::Write as _;

use pith_text::{ClosestFragment, EditError};

/// Fragment lines shown in a not-found message at most.
const SHOWN_FRAGMENT_LINES: usize = 12;
/// Characters of one fragment line shown at most.
const SHOWN_LINE_CHARS: usize = 200;

/// An edit call without edits.
pub(crate) const NO_EDITS: &str =
    "Edit tool input is invalid. edits must contain at least one replacement.";

/// The edit engine's refusal, in one to three lines naming the edit's
/// arguments: `path` is the path as the model gave it, `edit_count` the
/// number of edits (a single edit is "the text" and `oldText`, several are
/// `edits[i]` and `edits[i].oldText`). A not-found message shows the
/// closest fragment with its line number, an ambiguity the lines of the
/// first occurrences, and each says what to do next.
pub(crate) fn engine_error(error: &EditError, path: &str, edit_count: usize) -> String {
    let single = edit_count <= 1;
    let edit = |index: &usize| {
        if single {
            "the text".to_owned()
        } else {
            format!("edits[{index}]")
        }
    };
    let old_text = |index: &usize| {
        if single {
            "oldText".to_owned()
        } else {
            format!("edits[{index}].oldText")
        }
    };
    match error {
        EditError::NoEdits => NO_EDITS.to_owned(),
        EditError::EmptyOldText { index } => format!(
            "{} must not be empty in {path}. Put the exact text to replace in it.",
            old_text(index)
        ),
        EditError::NotFound { index, closest } => {
            let mut message = if single {
                format!("Could not find the exact text in {path}.")
            } else {
                format!("Could not find edits[{index}] in {path}.")
            };
            match closest {
                Some(closest) => write_closest(&mut message, closest),
                None => message.push_str(
                    " No text in it is close to that; grep for a distinctive part of it \
                     to find where it is.",
                ),
            }
            let _ = write!(
                message,
                "\nRead the file again and retry with the exact text of {}, \
                 including whitespace and newlines.",
                old_text(index)
            );
            message
        }
        EditError::Ambiguous {
            index,
            count,
            lines,
        } => {
            let mut distinct = lines.clone();
            distinct.dedup();
            let mut shown: Vec<String> = distinct.iter().map(ToString::to_string).collect();
            if *count > lines.len() {
                shown.push("...".to_owned());
            }
            format!(
                "Found {count} occurrences of {} in {path} (starting at lines {}). \
                 {} must match exactly once: add surrounding lines to make it unique.",
                edit(index),
                shown.join(", "),
                old_text(index),
            )
        }
        EditError::AmbiguousIndentation {
            index,
            start_line,
            lines,
            new_line,
        } => {
            let count = lines.split('\n').count();
            let place = if count > 1 {
                format!("lines {start_line}-{}", start_line + count - 1)
            } else {
                format!("line {start_line}")
            };
            let new_text = if single {
                "newText".to_owned()
            } else {
                format!("edits[{index}].newText")
            };
            let mut message = format!(
                "{} matches {place} of {path} only when indentation is ignored, and the \
                 depth of line {new_line} of {new_text} is ambiguous. The file's lines are:",
                old_text(index)
            );
            write_lines(&mut message, lines);
            let _ = write!(
                message,
                "\nRetry with {} and {new_text} indented exactly as in the file.",
                old_text(index)
            );
            message
        }
        EditError::Overlap { first, second } => format!(
            "edits[{first}] and edits[{second}] overlap in {path}. \
             Merge them into one edit or target disjoint regions."
        ),
        EditError::NoChange if single => format!(
            "No changes made to {path}. The replacement produced identical content. \
             Make newText differ from the text it replaces."
        ),
        EditError::NoChange => format!(
            "No changes made to {path}. The replacements produced identical content. \
             Make each newText differ from the text it replaces."
        ),
        other => format!("Could not edit {path}: {other}."),
    }
}

fn write_closest(message: &mut String, closest: &ClosestFragment) {
    let count = closest.text.split('\n').count();
    let last = closest.start_line + count.saturating_sub(1);
    let place = if count > 1 {
        format!("lines {}-{last}", closest.start_line)
    } else {
        format!("line {}", closest.start_line)
    };
    let percent = (closest.similarity * 100.0).round();
    let _ = write!(
        message,
        " The most similar text ({percent}% similar) is at {place}:"
    );
    write_lines(message, &closest.text);
}

/// Appends the first lines of `text`, one per line, clipped.
fn write_lines(message: &mut String, text: &str) {
    let count = text.split('\n').count();
    for line in text.split('\n').take(SHOWN_FRAGMENT_LINES) {
        let (line, _) = pith_text::clip_line(line, SHOWN_LINE_CHARS);
        let _ = write!(message, "\n{line}");
    }
    if count > SHOWN_FRAGMENT_LINES {
        let _ = write!(
            message,
            "\n[... {} more lines]",
            count - SHOWN_FRAGMENT_LINES
        );
    }
}

/// The result of a successful edit.
pub(crate) fn replaced(count: usize, raw: &str) -> String {
    format!("Successfully replaced {count} block(s) in {raw}.")
}

/// The edit cannot go on (`reason`: one or more sentences, with their stops).
pub(crate) fn failed(raw: &str, reason: impl std::fmt::Display) -> String {
    format!("Could not edit file: {raw}. {reason}")
}

/// The reason for a file-system failure (`describe`: one line without a stop).
pub(crate) fn fs_reason(describe: &str) -> String {
    format!("{describe}.")
}

/// The reason when permission is denied.
pub(crate) const PERMISSION_DENIED: &str = "Permission denied.";

/// The reason when the path is a directory.
pub(crate) const IS_DIRECTORY: &str = "It is a directory; edit changes files.";

/// The reason when the path is a FIFO, socket or device.
pub(crate) const NOT_REGULAR: &str = "It is not a regular file.";

/// The reason when the file does not exist (similar names are added after).
pub(crate) const NOT_FOUND: &str = "File not found.";

/// A `newText` with a character the file's encoding lacks.
pub(crate) fn new_text_unrepresentable(
    raw: &str,
    index: usize,
    error: impl std::fmt::Display,
    encoding: &str,
) -> String {
    format!(
        "Could not edit file: {raw}. In edits[{index}].newText, {error}. Use characters {encoding} has (the file stays {encoding}), or rewrite it with write and encoding \"utf-8\"."
    )
}

/// A file over the journal's cap, edited as a stream, is not undoable.
pub(crate) fn streamed_not_undoable(raw: &str, len: u64) -> String {
    format!(
        "Note: {raw} is not undoable: its {len} bytes were edited as a stream, which the journal does not record (over its per-file cap)."
    )
}

/// A large file (streamed): an empty `oldText`.
pub(crate) fn large_empty_old_text(index: usize) -> String {
    format!("edits[{index}].oldText is empty. Give the exact text to replace.")
}

/// A large file (streamed): two edits overlap.
pub(crate) fn large_overlap(first: usize, second: usize) -> String {
    format!("edits[{first}] and edits[{second}] overlap. Merge them into one edit.")
}

/// A large file (streamed) that is not UTF-8.
pub(crate) fn large_not_utf8(offset: u64) -> String {
    format!(
        "It is not valid UTF-8 text (invalid byte at offset {offset}), and edit only changes UTF-8 files. Change its bytes with bash."
    )
}

/// A large file (streamed, exact matches only): an edit's text is not in it.
pub(crate) fn large_not_found(index: usize, raw: &str, size: &str, max: &str) -> String {
    format!(
        "Could not find edits[{index}] in {raw}. The file is {size}, larger than the {max} up to which edit also matches loosely (whitespace, quotes, indentation), so only exact text matches. Read the lines and retry with oldText copied exactly."
    )
}

/// A large file (streamed): an edit's text occurs more than once.
pub(crate) fn large_ambiguous(index: usize, raw: &str, first: u64, second: u64) -> String {
    format!(
        "Found more than one occurrence of edits[{index}] in {raw} (lines {first} and {second}). Each oldText must be unique: add more surrounding lines to it."
    )
}

/// One line saying how many occurrences each replaceAll edit replaced.
pub(crate) fn replace_all_note(
    matches: &[pith_text::EditMatch],
    replace_all: &[bool],
) -> Option<String> {
    let parts: Vec<String> = replace_all
        .iter()
        .enumerate()
        .filter(|(_, all)| **all)
        .map(|(index, _)| {
            let count = matches.iter().filter(|m| m.index == index).count();
            let noun = if count == 1 {
                "occurrence"
            } else {
                "occurrences"
            };
            format!("edits[{index}] replaced {count} {noun}")
        })
        .collect();
    (!parts.is_empty()).then(|| format!("replaceAll: {}.", parts.join("; ")))
}

/// One line naming the edits that matched only after normalisation.
pub(crate) fn fuzzy_note(matches: &[pith_text::EditMatch]) -> Option<String> {
    use pith_text::MatchTier;
    let parts: Vec<String> = matches
        .iter()
        .filter_map(|found| {
            let how = match found.tier {
                MatchTier::Exact => return None,
                MatchTier::Normalized => "after normalising quotes/whitespace",
                MatchTier::Whitespace => "after ignoring indentation (newText was re-indented)",
            };
            let lines = if found.start_line == found.end_line {
                format!("line {}", found.start_line)
            } else {
                format!("lines {}-{}", found.start_line, found.end_line)
            };
            Some(format!("edits[{}] matched {how} at {lines}", found.index))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("Note: {}.", parts.join("; ")))
}
