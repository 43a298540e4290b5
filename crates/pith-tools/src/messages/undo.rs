//! `undo` (`tools/undo.rs`, `journal/undo.rs`, `journal/when.rs`); `pith
//! undo` prints the same texts.

use std::fmt::Display;

/// More than one selector.
pub(crate) const ONE_SELECTOR: &str = "Give only one of last, call and since.";

/// A `since` that is none of the accepted forms.
pub(crate) fn invalid_since(text: &str) -> String {
    format!(
        "invalid time {text:?}: give a duration ago (90s, 10m, 2h, 1d), a UTC time (2026-11-30T14:05:00Z) or @UNIX_SECONDS"
    )
}

/// The tool set has no journal.
pub(crate) const OFF: &str =
    "Undo is off: this tool set has no journal (pith journals unless --no-journal).";

/// The selector picks no journaled change.
pub(crate) const NOTHING: &str = "Nothing to undo: no journaled change matches. List the journal (pith undo --list) to see the calls and groups.";

/// Files changed since their journaled change, without `force`.
pub(crate) fn refused(changed: &[String]) -> String {
    format!(
        "Undo refused: {} changed since the journaled change, so restoring would lose that work. Nothing was restored. Undo with force to overwrite it anyway.",
        changed.join(", ")
    )
}

/// A file's current content could not be read.
pub(crate) fn cannot_read(path: impl Display, reason: &str) -> String {
    format!("Could not undo {path}: {reason}")
}

/// A file could not be restored.
pub(crate) fn cannot_restore(path: impl Display, reason: &str) -> String {
    format!("Could not restore {path}: {reason}")
}

/// The call failed inside (a panic).
pub(crate) const INTERNAL: &str = "Could not undo: internal error";

/// A journaled content that cannot be read back (`entry`: the entry's id).
pub(crate) fn content_unreadable(error: impl Display, entry: &str) -> String {
    format!("{error} (entry {entry})")
}

/// What happened to one file, as a summary line says it.
pub(crate) enum Outcome<'a> {
    /// Written back (or would be).
    Restored,
    /// Removed: it was created (or would be).
    Removed,
    /// Already at its previous content.
    Unchanged,
    /// Changed since; refused.
    Changed,
    /// Its previous content was not kept.
    NotUndoable(&'a str),
}

/// One line of the summary.
pub(crate) fn file_line(path: impl Display, outcome: Outcome<'_>, dry_run: bool) -> String {
    let what = match outcome {
        Outcome::Restored if dry_run => "would be restored".to_owned(),
        Outcome::Restored => "restored".to_owned(),
        Outcome::Removed if dry_run => "would be removed (it was created)".to_owned(),
        Outcome::Removed => "removed (it was created)".to_owned(),
        Outcome::Unchanged => "already at its previous content".to_owned(),
        Outcome::Changed => "changed since; not restored (use force)".to_owned(),
        Outcome::NotUndoable(reason) => format!("not undoable: {reason}"),
    };
    format!("{path}: {what}")
}

/// The summary's last line: the undo's own call id.
pub(crate) fn undo_call(call: &str) -> String {
    format!("Undo call {call} (undo it to redo).")
}

/// A before-hook rewrote an undo's arguments for one file.
pub(crate) fn hook_rewrite(path: impl Display) -> String {
    format!(
        "A before_tool_call hook rewrote this undo call's arguments for {path}; hooks may allow or block each file of an undo, not rewrite it. Block the call instead. No file was changed."
    )
}

/// Instead of a diff, for a file over the diff limit (`max` bytes) on either
/// side: each side's size and SHA-256 (`None`: the file is absent).
pub(crate) fn large_summary(
    current: Option<(u64, &str)>,
    target: Option<(u64, &str)>,
    max: u64,
) -> String {
    let side = |facts: Option<(u64, &str)>| match facts {
        Some((len, hash)) => format!(
            "{} ({len} bytes, sha256 {})",
            pith_text::format_size(len),
            hash.get(..16).unwrap_or(hash)
        ),
        None => "absent".to_owned(),
    };
    format!(
        "no diff shown, the file is over {}: {} -> {}",
        pith_text::format_size(max),
        side(current),
        side(target)
    )
}
