//! Edit errors: which edit failed and why, as data. The words a model reads
//! (which name the tool's arguments) are the tool layer's: pith-tools formats
//! these.

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
