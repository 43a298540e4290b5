//! `apply_patch`.

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
