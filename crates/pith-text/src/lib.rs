//! The pure text engine of pith: everything the tools do to text, with no I/O and no async.
//!
//! Every function is total: any input, however hostile, yields a value or a typed error,
//! never a panic.
//!
//! - **Truncation** ([`truncate_head`], [`truncate_tail`] → [`Truncation`]): cut tool output
//!   to [`TruncationLimits`] (2000 lines / 50 KiB by default) on character boundaries, with
//!   the metadata tools report. Also [`count_lines`], [`format_size`], [`clip_line`] and
//!   [`similar_names`] for "did you mean" hints.
//! - **Normalisation** ([`normalize_for_fuzzy`] → [`Normalized`]): NFKC, trailing
//!   whitespace, quotes, dashes and special spaces folded, with an offset map back to the
//!   exact original bytes.
//! - **The edit engine** ([`apply_edits`] → [`EditOutcome`] or [`EditError`]): each
//!   [`Edit`] must match exactly once, on a ladder of [`MatchTier`]s (exact, normalised,
//!   whitespace-insensitive with re-indentation); only the matched bytes change, line
//!   endings and a BOM are kept, and errors say which edit failed and why, as data
//!   (the tool layer, pith-tools, words them for the model). On the whitespace rung every line of the new text is placed at the depth
//!   it belongs at in the file (kept lines byte for byte, changed lines at the depth of the
//!   line they replace, inserted lines where their neighbours agree), and an edit whose
//!   depths cannot be told is refused rather than written with a broken structure.
//! - **Encodings** ([`decode`] → [`DecodedText`] or [`NotText`], [`encode`],
//!   [`encode_edited`]): BOM → UTF-8 → a confident `chardetng` guess that round-trips;
//!   edited text re-encoded with every unchanged line's bytes copied from the original;
//!   characters an encoding lacks named as [`Unrepresentable`]. [`LineHasher`] and
//!   [`changed_lines`] say which lines of a file changed (the staleness check).
//! - **Patches** ([`parse_patch`] → [`Patch`], [`apply_hunks`] → [`PatchedFile`]): the
//!   `*** Begin Patch` envelope GPT-family models write, parsed with errors naming the line,
//!   and one file's hunks applied through the same ladder as edits.
//! - **Diffs** ([`display_diff`] → [`DisplayDiff`], [`unified_patch`]): a numbered diff for
//!   display and a unified patch that `patch` and `git apply` accept.
//!
//! # Example
//!
//! ```
//! use pith_text::{Edit, MatchTier, apply_edits, display_diff};
//!
//! // A tab-indented file, and an edit written with spaces and a curly-quote-free string.
//! let file = "func main() {\r\n\tif ok {\r\n\t\tprintln(\"hi\")\r\n\t}\r\n}\r\n";
//! let edit = Edit {
//!     old_text: "    if ok {\n        println(\"hi\")\n    }".to_owned(),
//!     new_text: "    if ok {\n        println(\"hello\")\n    }".to_owned(),
//! };
//! let outcome = apply_edits(file, &[edit])?;
//! assert_eq!(outcome.matches[0].tier, MatchTier::Whitespace);
//! // Tabs and CRLF endings are kept.
//! assert_eq!(outcome.file_text, "func main() {\r\n\tif ok {\r\n\t\tprintln(\"hello\")\r\n\t}\r\n}\r\n");
//!
//! let diff = display_diff(&outcome.old_content, &outcome.new_content, 4);
//! assert_eq!(diff.first_changed_line, Some(3));
//! # Ok::<(), pith_text::EditError>(())
//! ```
//!
//! # Performance
//!
//! Everything is linear in the size of the input. Measured with `cargo bench -p pith-text`
//! (divan, release, fastest of 10–20 samples) on a shared 2-core x86-64 machine while other
//! builds ran, so take the numbers as orders of magnitude; the input is a generated
//! four-space-indented source file with the edited line in its middle:
//!
//! | benchmark | time |
//! | --- | --- |
//! | copy 20 MiB once (allocator reuses warm memory) | 1.5 ms |
//! | copy 20 MiB three times, keeping all three (fresh memory) | 48–51 ms |
//! | exact edit of one line, 20 MiB | 39–50 ms |
//! | normalised edit (curly quotes), 5 / 10 / 20 MiB | 4.4 / 30 / 67 ms |
//! | whitespace edit (tab for spaces), 5 / 10 / 20 MiB | 13 / 44 / 98 ms |
//! | display diff + unified patch of that edit, 20 MiB | 6.1 ms |
//! | `truncate_head` / `truncate_tail`, 100 MiB | 15 / 15 ms |
//!
//! An exact edit costs what its result costs: an [`EditOutcome`] holds three owned copies
//! of the file (old content, new content, file text), and writing them into fresh memory
//! is nearly all of the time; the search itself (`memchr`/`memmem` scans) takes about 2 ms.
//! [`apply_edits_borrowed`] (what `edit` uses) returns an [`EditResult`] that borrows the
//! old content and shares the new content as the file text when the file has no `\r` or
//! BOM: one copy instead of three.
//! So the edit runs within 3× of copying the file into fresh memory, but not of the warm
//! single copy. The fuzzy rungs add one normalisation pass (and, for the whitespace rung,
//! one hashing pass over the lines); they roughly double from 10 to 20 MiB, which is linear
//! plus allocation. Diffs only look at the changed lines and a few lines of context around
//! them, and truncation is bounded by one SIMD newline count over the input.

mod closest;
mod diff;
mod edit;
mod encoding;
mod error;
mod indent;
mod lines;
mod middle;
mod names;
mod normalize;
mod patch;
mod prefilter;
mod search;
mod signal;
mod spliced;
mod style;
mod truncate;
mod whitespace;

pub use diff::{DisplayDiff, display_diff, unified_patch};
pub use edit::{
    Edit, EditMatch, EditOutcome, EditResult, MatchTier, apply_edits, apply_edits_borrowed,
    apply_edits_replacing_all,
};
pub use encoding::{
    ChangedLines, DecodedText, EncodeError, LineHasher, MAX_HASHED_LINES, NotText, TextEncoding,
    Unrepresentable, changed_lines, check_representable, decode, encode, encode_edited,
};
pub use error::{ClosestFragment, EditError};
pub use names::similar_names;
pub use normalize::{Normalized, normalize_for_fuzzy};
pub use patch::{
    FileChange, FilePatch, Hunk, HunkError, HunkLine, HunkMatch, Patch, PatchError, PatchedFile,
    apply_hunks, parse_patch,
};
pub use signal::{
    MAX_SIGNAL_LINES, SIGNAL_LINE_CHARS, SignalLine, SignalLines, format_count, is_signal_line,
    omission_marker,
};
pub use spliced::{ExactEdits, locate_exact};
pub use truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, MAX_LINE_CHARS, TruncatedBy, Truncation,
    TruncationLimits, clip_line, count_lines, format_size, truncate_head, truncate_tail,
};
