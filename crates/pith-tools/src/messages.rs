//! Every text a model can see from a tool that is not the tool's output
//! itself: errors, notices and hints, one section per tool, so that a
//! reviewer reads them all in one place. The tools call into these; the
//! texts are pinned by the insta snapshots (tests/snapshots.rs) and the
//! tests that name them.

/// The pipeline's own texts (every tool).
pub(crate) mod pipeline {
    /// A before-hook moved a `write`/`edit` call to another file.
    pub(crate) fn moved_by_hook(tool: &str) -> String {
        format!(
            "A before_tool_call hook changed the path of this {tool} call; hooks may rewrite the arguments of write and edit but not their path (the call is approved inside that file's queue). Block the call instead."
        )
    }
}

/// `edit`.
pub(crate) mod edit {
    use std::fmt::Write as _;

    use pith_text::{ClosestFragment, EditError};

    /// Fragment lines shown in a not-found message at most.
    const SHOWN_FRAGMENT_LINES: usize = 12;
    /// Characters of one fragment line shown at most.
    const SHOWN_LINE_CHARS: usize = 200;

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
            EditError::NoEdits => {
                "Edit tool input is invalid. edits must contain at least one replacement."
                    .to_owned()
            }
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
}

/// `apply_patch`.
pub(crate) mod apply_patch {
    use std::fmt::Display;
    use std::fmt::Write as _;

    use pith_text::{EditError, HunkError};

    /// A hunk the engine refused, in one to three lines: which file, which
    /// hunk, the closest text when nothing matched, and what to do next.
    pub(crate) fn hunk_error(error: &HunkError, path: &str) -> String {
        let hunk = format!("hunk {} (patch line {})", error.index + 1, error.line);
        let mut message = match &error.error {
            EditError::NotFound { .. } => {
                format!("Could not find the context and '-' lines of {hunk} in {path}.")
            }
            EditError::Ambiguous { count, lines, .. } => {
                let shown: Vec<String> = lines.iter().map(ToString::to_string).collect();
                format!(
                    "The context of {hunk} occurs {count} times in {path} (at lines {}); add context lines or an '@@ line' naming a line above it to make it unique.",
                    shown.join(", ")
                )
            }
            EditError::NoChange => {
                format!("{hunk} of {path} changes nothing; give it '-' or '+' lines.")
            }
            other => format!(
                "{hunk} of {path}: {}",
                super::edit::engine_error(other, path, 1)
            ),
        };
        if let EditError::NotFound {
            closest: Some(closest),
            ..
        } = &error.error
        {
            let _ = write!(
                message,
                " The closest text starts at line {} ({:.0}% similar):\n{}",
                closest.start_line,
                closest.similarity * 100.0,
                closest.text
            );
        }
        message.push_str("\nRead the file again and retry the whole patch with its exact lines; no file was changed.");
        message
    }

    /// A before-hook's rewrite has no `patch` string.
    pub(crate) const HOOK_REWRITE_NOT_A_PATCH: &str = "A before_tool_call hook rewrote a section of this apply_patch call without a 'patch' string; hooks may rewrite one file's section or block the call. No file was changed.";

    /// A before-hook's rewrite of a file's section does not parse.
    pub(crate) fn hook_rewrite_invalid(error: impl Display) -> String {
        format!(
            "A before_tool_call hook rewrote a section of this apply_patch call into an invalid patch ({error}). No file was changed."
        )
    }

    /// A before-hook's rewrite names another file than the section it approved.
    pub(crate) fn hook_rewrite_moved(path: &str) -> String {
        format!(
            "A before_tool_call hook changed which file the apply_patch section for {path} changes; hooks may rewrite a file's section but not its path (it is approved inside that file's queue). Block the call instead. No file was changed."
        )
    }
}

#[cfg(test)]
mod tests;
