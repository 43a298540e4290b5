//! The undo journal (`journal.rs`): the notes added to a `write`, `edit` or
//! `apply_patch` result whose change it could not record, and the reasons
//! `undo` gives for such a file.

use std::fmt::Display;

/// The journal failed while recording; the change was made anyway.
pub(crate) fn record_failed(error: impl Display) -> String {
    format!("Note: this change is not undoable ({error}); the change itself was made.")
}

/// The previous content is over the journal's total cap.
pub(crate) fn over_total_cap(path: impl Display, len: u64) -> String {
    format!(
        "Note: {path} is not undoable: its previous content ({len} bytes) is larger than the journal's total cap."
    )
}

/// The previous content is over the journal's per-file cap.
pub(crate) fn over_file_cap(path: impl Display, len: u64, cap: u64) -> String {
    format!(
        "Note: {path} is not undoable: its previous content ({len} bytes) is over the journal's per-file cap of {cap} bytes."
    )
}

/// Why a file over the per-file cap is not undoable (`undo` shows it).
pub(crate) fn reason_file_cap(cap: u64) -> String {
    format!("larger than the journal's per-file cap of {cap} bytes")
}

/// Why a file over the total cap is not undoable (`undo` shows it).
pub(crate) const REASON_TOTAL_CAP: &str = "larger than the journal's total cap";

/// A previous content read in chunks changed before the journal had stored it.
pub(crate) fn changed_while_stored(path: impl Display) -> String {
    format!(
        "Note: {path} is not undoable: it changed while its previous content was being journaled; the change itself was made."
    )
}

/// Why such a file is not undoable (`undo` shows it).
pub(crate) const REASON_CHANGED_WHILE_STORED: &str = "it changed while the journal stored it";
