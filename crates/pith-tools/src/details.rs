//! The `details` of each tool's results: typed, and documented field by field.
//!
//! `details` are for a user interface (pith's `--json`, MCP's
//! `_meta["pith/details"]`); the model never sees them. Their camelCase keys
//! are a contract: a field that does not apply is left out (never `null`),
//! and the order of the fields is the order of the keys in the JSON. A tool
//! attaches them with [`ToolOutput::with_details_of`](crate::tool::ToolOutput::with_details_of).

use pith_text::{EditMatch, Truncation};
use serde::Serialize;

/// `read` of a text file, when the output was cut.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadDetails {
    /// How the shown lines were cut from the selected window (lines or bytes
    /// limit, totals of the window, what was kept).
    pub truncation: Truncation,
}

/// `read` of an image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageDetails {
    /// The MIME type of the attached image (after a resize, the re-encoded
    /// one), or of the file when no image was attached.
    pub mime_type: String,
    /// Width of the original image in pixels, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Height of the original image in pixels, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
}

/// `edit`: what changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditDetails {
    /// A display diff: changed lines with line numbers and 4 lines of context.
    pub diff: String,
    /// A unified patch of the change (`--- a/path`, `+++ b/path`, hunks).
    pub patch: String,
    /// The first line (1-based, in the new file) that changed, if any.
    pub first_changed_line: Option<u64>,
    /// Per replaced block: which edit, how it matched (exact, normalised,
    /// whitespace) and the lines it matched in the original file.
    pub matches: Vec<EditMatch>,
    /// The file's encoding, kept by the edit (`utf-8`, `utf-8 with BOM`,
    /// `utf-16le`, ...); absent for a file too large to hold in memory
    /// (edited as UTF-8 bytes, streamed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// `bash`: how the output was kept and how the command ended. Empty (and
/// then not attached to a streaming update) when nothing applies.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BashDetails {
    /// How the output shown was cut (head and tail, or the last 2000 lines
    /// or 50 KiB), when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation: Option<BashTruncation>,
    /// The file holding the whole output, when it was too long to show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// `true` when some output line was clipped to its first characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_truncated: Option<bool>,
    /// The exit code (absent in streaming updates; a signal's is 128 + its number).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

/// `bash` (and `jobs output`): how the output was cut.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BashTruncation {
    /// The limits, totals and what was kept.
    #[serde(flatten)]
    pub truncation: Truncation,
    /// The omitted middle, when head and tail are shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted_lines: Option<OmittedLines>,
    /// Line numbers in the omitted middle that look like errors or warnings
    /// (shown with the marker), when head and tail are shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal_lines: Option<Vec<u64>>,
}

/// A range of omitted output lines (1-based, inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OmittedLines {
    /// The first omitted line.
    pub from: u64,
    /// The last omitted line.
    pub to: u64,
}

impl BashDetails {
    /// Whether no field applies.
    pub fn is_empty(&self) -> bool {
        self == &BashDetails::default()
    }
}

/// A file grep searched only up to its first NUL byte.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BinaryFile {
    /// The path as shown in the output.
    pub path: String,
    /// The byte offset of the first NUL byte.
    pub offset: u64,
}

/// `grep` and `find`: the notices of a search, one field per notice. Absent
/// (no details at all) when the result was complete.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchDetails {
    /// How the output was cut at 50 KiB, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// grep: the match limit, when the search stopped at it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_limit_reached: Option<usize>,
    /// find: the result limit, when the search stopped at it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_limit_reached: Option<usize>,
    /// grep: `true` when some line was clipped to 500 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_truncated: Option<bool>,
    /// grep: the files skipped for a line too long to search (at most a few named).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oversized_files: Option<Vec<String>>,
    /// grep: files searched only up to their first NUL byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary_files: Option<Vec<BinaryFile>>,
}

/// `ls`: why the listing is incomplete. Absent when it is complete.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LsDetails {
    /// The entry limit, when the listing stopped at it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_limit_reached: Option<u64>,
    /// How the listing was cut at 50 KiB, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
}
