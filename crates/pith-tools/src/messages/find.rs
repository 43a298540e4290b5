//! `find` (`tools/find.rs`); it shares grep's byte-limit notice and search errors.

/// The result when nothing matched.
pub(crate) const NO_FILES: &str = "No files found matching pattern";

/// The search root is a file.
pub(crate) fn not_a_directory(path: impl std::fmt::Display) -> String {
    format!("Not a directory: {path}. find searches a directory; use read for a file.")
}

/// The search stopped at the result limit.
pub(crate) fn result_limit(limit: usize) -> String {
    format!(
        "{limit} results limit reached. Use limit={} for more, or refine pattern",
        limit.saturating_mul(2)
    )
}
