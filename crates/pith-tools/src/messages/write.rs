//! `write` (`tools/write.rs`).

use std::fmt::Display;

/// An encoding name write does not know.
pub(crate) fn unknown_encoding(raw: &str, label: &str) -> String {
    format!(
        "Cannot write {raw}: unknown encoding {label:?}. Use a name such as utf-8, utf-8-bom, utf-16le, utf-16be, windows-1252, shift_jis, euc-jp, gbk, gb18030, big5, euc-kr or koi8-r."
    )
}

/// The path is a directory.
pub(crate) fn directory(raw: &str, path: impl Display) -> String {
    format!("Cannot write {raw}: {path} is a directory. Write to a file path inside it.")
}

/// The path cannot be written (`reason`: one line from the file system).
pub(crate) fn cannot_write(raw: &str, reason: &str) -> String {
    format!("Cannot write {raw}: {reason}")
}

/// A parent of the path is a file.
pub(crate) fn parent_is_file(raw: &str, path: impl Display) -> String {
    format!("Cannot write {raw}: a parent of {path} is a file, not a directory.")
}

/// The parent directories could not be made.
pub(crate) fn cannot_create_dir(raw: &str, parent: impl Display, reason: &str) -> String {
    format!("Cannot write {raw}: could not create the directory {parent}: {reason}.")
}

/// The write itself failed (the file is as it was).
pub(crate) fn write_failed(raw: &str, reason: &str) -> String {
    format!("Could not write {raw}: {reason}")
}

/// An existing file the session has not read (overwrite policy).
pub(crate) fn not_read(raw: &str) -> String {
    format!(
        "{raw} already exists and has not been read in this session. Read it first, then write it (or use edit for targeted changes)."
    )
}

/// A file that changed since the session read it.
pub(crate) fn changed_since_read(raw: &str, detail: &str) -> String {
    format!(
        "{raw} has changed since this session last read it. Read it again before overwriting it.\n{detail}"
    )
}

/// The reason a parent directory could not be made: a file is where it goes.
pub(crate) const FILE_IN_THE_WAY: &str = "a file is in the way";

/// The result (`encoding`: the encoding written, when not plain UTF-8).
pub(crate) fn wrote(bytes: usize, raw: &str, encoding: Option<&str>) -> String {
    match encoding {
        Some(encoding) => format!("Successfully wrote {bytes} bytes to {raw} in {encoding}"),
        None => format!("Successfully wrote {bytes} bytes to {raw}"),
    }
}
