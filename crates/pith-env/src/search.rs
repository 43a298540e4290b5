//! The search port: content search (grep) and file finding (glob).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::{Confinement, FsError, FsErrorKind, SearchError};

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

impl GrepRequest {
    /// The longest line a search holds in memory, 16 MiB.
    ///
    /// A file with a longer line (say a 1 GiB minified bundle or JSON dump
    /// on one line) is skipped whole and listed in [`GrepOutput::oversized`]:
    /// streaming keeps at least one whole line in memory, so without a cap one
    /// such line would cost its full size. 16 MiB is far above the longest
    /// lines of real source and minified files (a few MiB), yet one buffer
    /// this size, with the small per-thread buffers, keeps a search well under
    /// the 64 MiB memory bound.
    pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

    /// How many oversized files [`GrepOutput::oversized`] names at most.
    pub const OVERSIZED_LISTED: usize = 10;

    /// Most heap a pattern may take to compile, 8 MiB (the regex crate's
    /// default is 10 MiB, grep-regex's 100 MiB). A larger pattern is an
    /// [`SearchError::InvalidPattern`](crate::SearchError::InvalidPattern) that says so.
    pub const REGEX_SIZE_LIMIT: usize = 8 * 1024 * 1024;

    /// Most memory each search thread's lazy DFA cache may hold, 2 MiB; past it
    /// the cache is cleared (or the search falls back to a slower engine).
    pub const REGEX_DFA_LIMIT: usize = 2 * 1024 * 1024;

    /// How many binary files [`GrepOutput::binary`] names at most.
    pub const BINARY_LISTED: usize = 10;
}

/// A file with matches whose content turned binary: only the lines before the
/// one holding its first NUL byte were searched, as ripgrep does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryFile {
    /// Same form as [`GrepLine::path`].
    pub path: String,
    /// Byte offset of the first NUL byte; nothing from it on was searched.
    pub offset: u64,
}

/// One output row: a matching line or a context line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepLine {
    /// Path relative to the search root with `/` separators; for a single-file
    /// search, the file's name.
    pub path: String,
    /// 1-based line number.
    pub line_number: u64,
    /// The line, without its line ending (lossily decoded if not UTF-8),
    /// clipped to its first [`GrepLine::MAX_TEXT_BYTES`] bytes (at a
    /// character boundary), so that long matching lines cannot fill memory.
    pub text: String,
    /// Whether this line matched (false for context lines).
    pub is_match: bool,
}

impl GrepLine {
    /// The longest [`GrepLine::text`] kept, 4 KiB: more than the grep tool
    /// shows (500 characters, at most 2000 bytes), so a clipped line is still
    /// seen as longer than that.
    pub const MAX_TEXT_BYTES: usize = 4096;

    /// The first [`GrepLine::MAX_TEXT_BYTES`] bytes of a line, cut before a
    /// UTF-8 continuation byte so that no character is split (bytes that are
    /// not UTF-8 may be cut anywhere).
    pub(crate) fn clip_text(bytes: &[u8]) -> &[u8] {
        let max = GrepLine::MAX_TEXT_BYTES;
        if bytes.len() <= max {
            return bytes;
        }
        let mut cut = max;
        // At most three continuation bytes follow a character's first byte.
        while cut > max - 3 && bytes[cut] & 0xC0 == 0x80 {
            cut -= 1;
        }
        &bytes[..cut]
    }
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
    /// The first [`GrepRequest::OVERSIZED_LISTED`] files skipped because a
    /// line is longer than [`GrepRequest::MAX_LINE_BYTES`], in path order
    /// (same form as [`GrepLine::path`]). None of their rows are in `lines`,
    /// not even matches before the long line: the file was not searched.
    /// Files after the one where the limit was reached are not looked at.
    pub oversized: Vec<String>,
    /// How many files were skipped for such a line (may exceed `oversized`'s length).
    pub oversized_count: usize,
    /// The first [`GrepRequest::BINARY_LISTED`] files, in path order, that
    /// contributed matches from before their first NUL byte; nothing after it
    /// was searched. A file whose first NUL comes before any match contributes
    /// nothing and is not named (ripgrep's default too).
    pub binary: Vec<BinaryFile>,
    /// How many files [`GrepOutput::binary`] would name without its cap.
    pub binary_count: usize,
}

impl GrepOutput {
    /// Records a file with matches whose content turned binary at `offset`.
    pub fn push_binary(&mut self, path: String, offset: u64) {
        if self.binary.len() < GrepRequest::BINARY_LISTED {
            self.binary.push(BinaryFile { path, offset });
        }
        self.binary_count += 1;
    }
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
/// inside and outside git repositories; grep searches a file only up to its
/// first NUL byte (binary from there on) and names the files with matches
/// before one in [`GrepOutput::binary`];
/// results are deterministic (sorted); memory stays bounded whatever the file
/// sizes: a file with a line over [`GrepRequest::MAX_LINE_BYTES`] is skipped
/// and reported in [`GrepOutput::oversized`], row texts are clipped to
/// [`GrepLine::MAX_TEXT_BYTES`]; cancellation stops the walk promptly.
///
/// Confined views ([`confine`](Search::confine)) add: the start path (the
/// directory or the single file a request names) is resolved beneath one of
/// the roots *by the adapter, at the moment of the search*, as
/// [`FileSystem::confine`](crate::FileSystem::confine) resolves paths, and the
/// search reads from what that resolution opened (never the path walked
/// again); a start outside every root fails with
/// [`FsErrorKind::OutsideRoots`](crate::FsErrorKind::OutsideRoots). Below the
/// start nothing is followed out of it (symlinks are not followed).
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

    /// A view of this search confined beneath `confinement`'s roots (see the
    /// contract above; write rules do not apply to a search). Adapters that
    /// cannot confine keep the default: a view that refuses every search with
    /// `Unsupported`, never one that silently does not confine.
    fn confine(self: Arc<Self>, confinement: Confinement) -> Arc<dyn Search> {
        let _ = confinement;
        Arc::new(Unconfinable)
    }
}

/// The default confined search: refuses everything.
struct Unconfinable;

fn unsupported(root: &std::path::Path) -> SearchError {
    SearchError::Fs(
        FsError::new(FsErrorKind::Unsupported, root)
            .with_detail("this environment cannot confine searches to roots"),
    )
}

#[async_trait]
impl Search for Unconfinable {
    async fn grep(
        &self,
        request: GrepRequest,
        _: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        Err(unsupported(&request.root))
    }

    async fn find(
        &self,
        request: FindRequest,
        _: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        Err(unsupported(&request.root))
    }
}
