//! Edit errors and the messages the model reads.

use std::fmt::Write as _;

use thiserror::Error;

/// The lines of the file most similar to an `old_text` that was not found.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosestFragment {
    /// 1-based line of the file where the fragment starts.
    pub start_line: usize,
    /// The fragment, exactly as in the file (LF line endings).
    pub text: String,
    /// How similar it is to `old_text`, from 0 (nothing alike) to 1 (equal).
    pub similarity: f64,
}

/// Why a set of edits was rejected. Nothing is applied when any edit fails.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum EditError {
    /// The list of edits was empty.
    #[error("no edits were given")]
    NoEdits,
    /// `edits[index].old_text` was empty.
    #[error("edit {index} has an empty old text")]
    EmptyOldText {
        /// 0-based index of the edit.
        index: usize,
    },
    /// `edits[index].old_text` matches nowhere, not even modulo normalisation or whitespace.
    #[error("edit {index}: old text not found")]
    NotFound {
        /// 0-based index of the edit.
        index: usize,
        /// The most similar region of the file, when one is reasonably similar.
        closest: Option<ClosestFragment>,
    },
    /// `edits[index].old_text` matches more than once (overlapping matches included).
    #[error("edit {index}: old text occurs {count} times")]
    Ambiguous {
        /// 0-based index of the edit.
        index: usize,
        /// Number of occurrences.
        count: usize,
        /// 1-based lines where the first few occurrences start.
        lines: Vec<usize>,
    },
    /// `edits[index].old_text` matches one run of lines only when indentation is ignored,
    /// and the depth of a line of `new_text` cannot be told from the file.
    #[error("edit {index}: the indentation of new text line {new_line} is ambiguous")]
    AmbiguousIndentation {
        /// 0-based index of the edit.
        index: usize,
        /// 1-based first line of the file the match covers.
        start_line: usize,
        /// The matched lines exactly as in the file (LF line endings).
        lines: String,
        /// 1-based line of `new_text` whose depth is ambiguous.
        new_line: usize,
    },
    /// Two edits match overlapping regions (touching regions are fine).
    #[error("edits {first} and {second} overlap")]
    Overlap {
        /// 0-based index of the edit whose match comes first in the file.
        first: usize,
        /// 0-based index of the edit whose match overlaps it.
        second: usize,
    },
    /// The edits leave the file exactly as it was.
    #[error("the edits produce identical content")]
    NoChange,
}

/// Fragment lines shown in a not-found message at most.
const SHOWN_FRAGMENT_LINES: usize = 12;
/// Characters of one fragment line shown at most.
const SHOWN_LINE_CHARS: usize = 200;

impl EditError {
    /// One-to-three line message for the model; `path` is the path as the caller gave it,
    /// `edit_count` the number of edits (a single edit is "the text", several are
    /// `edits[i]`), and it says what to do next: a not-found message shows the closest
    /// fragment with its line number, an ambiguity the lines of the first occurrences.
    #[must_use]
    pub fn render(&self, path: &str, edit_count: usize) -> String {
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
        match self {
            Self::NoEdits => {
                "Edit tool input is invalid. edits must contain at least one replacement."
                    .to_owned()
            }
            Self::EmptyOldText { index } => format!(
                "{} must not be empty in {path}. Put the exact text to replace in it.",
                old_text(index)
            ),
            Self::NotFound { index, closest } => {
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
            Self::Ambiguous {
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
            Self::AmbiguousIndentation {
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
            Self::Overlap { first, second } => format!(
                "edits[{first}] and edits[{second}] overlap in {path}. \
                 Merge them into one edit or target disjoint regions."
            ),
            Self::NoChange if single => format!(
                "No changes made to {path}. The replacement produced identical content. \
                 Make newText differ from the text it replaces."
            ),
            Self::NoChange => format!(
                "No changes made to {path}. The replacements produced identical content. \
                 Make each newText differ from the text it replaces."
            ),
        }
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
        let (line, _) = crate::truncate::clip_line(line, SHOWN_LINE_CHARS);
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
