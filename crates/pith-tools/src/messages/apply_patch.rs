//! `apply_patch`.

use std::fmt::Display;
use std::fmt::Write as _;

use pith_text::{EditError, HunkError, MatchTier};

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

/// The patch does not parse.
pub(crate) fn invalid(error: impl Display) -> String {
    format!(
        "Invalid patch: {error}. Fix that line and send the whole patch again; no file was changed."
    )
}

/// Two sections name the same file.
pub(crate) fn appears_twice(path: impl Display, line: usize) -> String {
    format!(
        "Invalid patch: {path} appears twice (patch line {line}). Put all changes to one file in one section; no file was changed."
    )
}

/// A file's section cannot be staged (`reason`: without its full stop).
pub(crate) fn refused(raw: &str, reason: impl Display) -> String {
    format!("Could not apply the patch: {raw}: {reason}. No file was changed.")
}

/// Added after a refusal worded by the shared load/store steps.
pub(crate) const NO_FILE_CHANGED: &str = " No file was changed.";

/// Reason: the file changed since the session read it.
pub(crate) fn changed_since_read(detail: &str) -> String {
    format!("it changed since this session last read it; read it again, then patch.\n{detail}")
}

/// Reason: an `Add File` or `Move to` path exists (`marker`: which of the two).
pub(crate) fn already_exists(marker: &str) -> String {
    format!("'{marker}' names a path that already exists; use '*** Update File:' to change it")
}

/// Reason: a parent of the path is a file.
pub(crate) const PARENT_IS_FILE: &str = "a parent of it is a file, not a directory";

/// Reason: the file to update or delete does not exist.
pub(crate) const NOT_FOUND: &str =
    "file not found; check the path (use '*** Add File:' for a new file)";

/// Reason: the path is a directory.
pub(crate) const IS_DIRECTORY: &str = "it is a directory";

/// Reason: the path is a FIFO, socket or device.
pub(crate) const NOT_REGULAR: &str = "it is not a regular file";

/// A hunk the engine refused (see [`hunk_error`]).
pub(crate) fn hunk_refused(error: &HunkError, path: &str) -> String {
    format!("Could not apply the patch: {}", hunk_error(error, path))
}

/// A file's change failed half-way through the commit, and whether the
/// files already changed were put back (`Err`: the paths that were not).
pub(crate) fn commit_failed(
    path: impl Display,
    reason: &str,
    put_back: Result<(), Vec<String>>,
) -> String {
    let mut message = format!("Could not apply the patch: changing {path} failed: {reason}.");
    match put_back {
        Ok(()) => {
            message.push_str(" The files already changed were put back; no file was changed.")
        }
        Err(failed) => {
            let _ = write!(
                message,
                " Putting back the files already changed failed for {}; check them.",
                failed.join(", ")
            );
        }
    }
    message
}

/// The call failed inside (a panic); nothing of the patch is reported done.
pub(crate) const INTERNAL: &str = "Could not apply the patch: internal error";

/// The first line of the result.
pub(crate) fn applied(files: usize) -> String {
    format!("Applied the patch to {files} file(s):")
}

/// A hunk that matched only after normalisation.
/// (`None` for an exact match).
pub(crate) fn loose_match(
    raw: &str,
    hunk: usize,
    tier: Option<MatchTier>,
    line: usize,
) -> Option<String> {
    let how = match tier {
        Some(MatchTier::Normalized) => "after normalising quotes/whitespace",
        Some(MatchTier::Whitespace) => "after ignoring indentation",
        _ => return None,
    };
    Some(format!(
        "Note: {raw} hunk {hunk} matched {how} at line {line}."
    ))
}
