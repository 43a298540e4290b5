//! The `details` of each tool's results: typed, and documented field by field.
//!
//! `details` are for a user interface (pith's `--json`, MCP's
//! `_meta["pith/details"]`); the model never sees them. Their camelCase keys
//! are a contract: a field that does not apply is left out (never `null`),
//! and the order of the fields is the order of the keys in the JSON. A tool
//! attaches them with [`ToolOutput::with_details_of`](crate::tool::ToolOutput::with_details_of).

use pith_text::{EditMatch, HunkMatch, Truncation};
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

/// How an ended job ended; no field while it runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobEndDetails {
    /// The exit code, when it ran to one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Why it could not run, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `jobs list`: the session's jobs, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct JobsListDetails {
    /// One entry per job.
    pub jobs: Vec<JobEntry>,
}

/// One job of `jobs list`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobEntry {
    /// The job's id (a number, as text).
    pub id: String,
    /// The command line it runs.
    pub command: String,
    /// `running`, `exited`, `killed` or `failed`.
    pub state: String,
    /// Whether it runs on a pseudo-terminal.
    pub tty: bool,
    /// When it started, in seconds since the Unix epoch.
    pub started_at: f64,
    /// How long it has run (or ran), in seconds.
    pub elapsed_seconds: f64,
    /// The bytes of output it has written in all.
    pub output_bytes: u64,
    /// How it ended, when it did.
    #[serde(flatten)]
    pub end: JobEndDetails,
}

/// `jobs output`, `input` and `kill` (and `bash` with `background`): the
/// job's new output, how it was cut, the job's state and where its log is.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobOutputDetails {
    /// The job's id (a number, as text).
    pub job_id: String,
    /// `running`, `exited`, `killed` or `failed`.
    pub state: String,
    /// How the output shown was cut, as bash's (`truncation`,
    /// `fullOutputPath`, `linesTruncated`); its `exit_code` stays `None`
    /// here: [`JobOutputDetails::end`] carries how the job ended.
    #[serde(flatten)]
    pub output: BashDetails,
    /// The job's full log, when it could be saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_path: Option<String>,
    /// `true` when the job is probably waiting for input (quiet, and its
    /// last line does not end in a newline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for_input: Option<bool>,
    /// How it ended, when it did.
    #[serde(flatten)]
    pub end: JobEndDetails,
}

/// `apply_patch`: what changed, per file in the order of the patch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PatchDetails {
    /// One entry per file section of the patch.
    pub files: Vec<PatchFileDetails>,
}

/// One file `apply_patch` changed: what happened (the structured result
/// holds this part alone) and the diff.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchFile {
    /// The path as the patch wrote it.
    pub path: String,
    /// `add`, `delete`, `update` or `move`.
    pub action: String,
    /// Where a moved file went, as the patch wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
}

/// One file of [`PatchDetails`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PatchFileDetails {
    /// The path, the action and the move target.
    #[serde(flatten)]
    pub file: PatchFile,
    /// A display diff with line numbers and 4 lines of context.
    pub diff: String,
    /// A unified patch of the change.
    pub patch: String,
    /// Per hunk: which one, how it matched and the line it matched at.
    pub hunks: Vec<HunkMatch>,
}

/// `undo`: per file what was (or, for a dry run, would be) restored, with
/// the journal entries and the patch; whether it was a dry run; the undo's
/// own call id. The same report `pith undo --json` prints.
pub type UndoDetails = crate::journal::UndoReport;
