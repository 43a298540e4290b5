//! `grep` (`tools/grep.rs`); its notices go inside `[...]` after the matches,
//! joined by ". ".

/// The result when nothing matched.
pub(crate) const NO_MATCHES: &str = "No matches found";

/// The output hit its byte cap before the match limit.
pub(crate) fn output_limit(shown: usize, size: &str, at: &str) -> String {
    format!("Showing {shown} matches, output limit {size} reached{at}; narrow with path or glob")
}

/// The search stopped at the match limit.
pub(crate) fn match_limit(limit: usize) -> String {
    format!(
        "{limit} matches limit reached. Use limit={} for more, or refine pattern",
        limit.saturating_mul(2)
    )
}

/// Some lines were clipped; one was longer than grep keeps, so bash shows it.
pub(crate) fn long_line_clipped(max_chars: usize, number: u64, path: &str) -> String {
    format!(
        "Some lines truncated to {max_chars} chars. See a long line with bash, e.g. sed -n '{number}p' {path} | cut -c1-2000"
    )
}

/// Some lines were clipped; read shows them whole.
pub(crate) fn lines_clipped(max_chars: usize) -> String {
    format!("Some lines truncated to {max_chars} chars. Use read tool to see full lines")
}

/// Files searched only up to their first NUL byte.
pub(crate) fn binary(names: &str) -> String {
    format!(
        "Binary data from the first NUL byte on ({names}): only the lines before it were searched"
    )
}

/// Files skipped for a line too long to search.
pub(crate) fn oversized(files: &str, size: &str, names: &str, them: &str, first: &str) -> String {
    format!(
        "Skipped {files} with a line over {size} ({names}): search {them} with bash, e.g. grep -o -m 5 'pattern' {first} | cut -c1-500"
    )
}

/// grep and find: the output hit its byte cap.
pub(crate) fn byte_limit(size: &str) -> String {
    format!("{size} limit reached")
}

/// A search root that does not exist (similar names are added after).
pub(crate) fn path_not_found(path: impl std::fmt::Display) -> String {
    format!("Path not found: {path}")
}

/// A pattern the regex engine refused.
pub(crate) fn invalid_regex(reason: &str) -> String {
    format!(
        "Invalid regex: {reason}. Fix the pattern, or set literal: true to search for the text as written."
    )
}

/// A file searched up to its first NUL byte, in [`binary`]'s list.
pub(crate) fn at_byte(path: &str, offset: u64) -> String {
    format!("{path} at byte {offset}")
}

/// The files of a list past those named.
pub(crate) fn and_more(count: usize) -> String {
    format!(" and {count} more")
}

/// How many files [`oversized`] names, and the pronoun for them.
pub(crate) fn files(count: usize) -> (String, &'static str) {
    if count == 1 {
        ("1 file".to_owned(), "it")
    } else {
        (format!("{count} files"), "them")
    }
}
