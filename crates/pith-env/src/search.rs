//! The search port: content search (grep) and file finding (glob).

use std::path::PathBuf;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::SearchError;

/// A content search.
#[derive(Clone, Debug)]
pub struct GrepRequest {
    /// The pattern: a regex, or a literal string when `literal` is set.
    pub pattern: String,
    /// Directory or file to search (absolute).
    pub root: PathBuf,
    /// Only search files whose path relative to `root` matches this glob.
    pub glob: Option<String>,
    /// Case-insensitive matching.
    pub ignore_case: bool,
    /// Treat the pattern as a literal string.
    pub literal: bool,
    /// Lines of context before and after each match.
    pub context: usize,
    /// Stop after this many matching lines (at least 1).
    pub limit: usize,
}

/// One output row: a matching line or a context line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepLine {
    /// Path relative to the search root with `/` separators; for a single-file
    /// search, the file's name.
    pub path: String,
    /// 1-based line number.
    pub line_number: u64,
    /// The line, without its line ending (lossily decoded if not UTF-8).
    pub text: String,
    /// Whether this line matched (false for context lines).
    pub is_match: bool,
}

/// The result of a content search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrepOutput {
    /// Rows sorted by path, then line number; context rows shared by nearby
    /// matches appear once.
    pub lines: Vec<GrepLine>,
    /// Number of matching lines in `lines`.
    pub match_count: usize,
    /// Whether the search stopped because `limit` matches were found.
    pub limit_reached: bool,
}

/// A file search by glob.
#[derive(Clone, Debug)]
pub struct FindRequest {
    /// The glob (`*.rs`, `src/**/*.spec.ts`, `some/dir/**`).
    pub pattern: String,
    /// Directory to search (absolute).
    pub root: PathBuf,
    /// Stop after this many results.
    pub limit: usize,
}

/// One found path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FindEntry {
    /// Path relative to the search root with `/` separators.
    pub path: String,
    /// Whether it is a directory.
    pub is_dir: bool,
}

/// The result of a file search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FindOutput {
    /// Entries sorted by path.
    pub entries: Vec<FindEntry>,
    /// Whether the search stopped at `limit`.
    pub limit_reached: bool,
}

/// The search port.
///
/// Contract: hidden files are searched, `.git/` never; `.gitignore` (nested,
/// applied hierarchically), `.ignore` and `.git/info/exclude` are honoured
/// inside and outside git repositories; binary files are skipped by grep;
/// results are deterministic (sorted); memory stays bounded whatever the file
/// sizes; cancellation stops the walk promptly.
#[async_trait]
pub trait Search: Send + Sync {
    /// Searches file contents.
    async fn grep(
        &self,
        request: GrepRequest,
        cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError>;

    /// Finds files by glob.
    async fn find(
        &self,
        request: FindRequest,
        cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError>;
}
