//! `ls` (`tools/ls.rs`); its notices go inside `[...]` after the listing.

use std::fmt::Display;

/// The listing of an empty directory.
pub(crate) const EMPTY: &str = "(empty directory)";

/// The path is a file.
pub(crate) fn not_a_directory(path: impl Display) -> String {
    format!("Not a directory: {path}")
}

/// The directory does not exist (similar names are added after).
pub(crate) fn not_found(path: impl Display) -> String {
    format!("Path not found: {path}")
}

/// The directory could not be listed.
pub(crate) fn cannot_read(reason: &str) -> String {
    format!("Cannot read directory: {reason}")
}

/// The listing stopped at the entry limit.
pub(crate) fn entry_limit(limit: u64, more: u64) -> String {
    format!("{limit} entries limit reached. Use limit={more} for more")
}
