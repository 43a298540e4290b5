//! Loading and storing a text file for the tools that change files
//! (`textfile.rs`: edit, write, apply_patch): `verb` is the tool's verb
//! (`edit`, `patch`), `raw` the path as the model gave it.

use std::fmt::Display;

/// A step of loading or storing failed (`reason`: one sentence without its
/// full stop, e.g. from the file system).
pub(crate) fn failed(verb: &str, raw: &str, reason: impl Display) -> String {
    format!("Could not {verb} file: {raw}. {reason}.")
}

/// The changed text has a character the file's encoding lacks.
pub(crate) fn unrepresentable(
    verb: &str,
    raw: &str,
    error: impl Display,
    encoding: &str,
) -> String {
    format!(
        "Could not {verb} file: {raw}. In the result, {error}. Use characters {encoding} has (the file stays {encoding}), or rewrite it with write and encoding \"utf-8\"."
    )
}

/// The changed text would not encode back to the file's bytes faithfully.
pub(crate) fn not_faithful(verb: &str, raw: &str, error: impl Display) -> String {
    format!("Could not {verb} file: {raw}. {error}; the file is unchanged. Change it with bash.")
}

/// Bytes that are not text pith can write back.
pub(crate) fn not_text(verb: &str, raw: &str, error: impl Display) -> String {
    let next = match verb {
        "edit" => "Replace it whole with write, or change its bytes with bash.",
        _ => "Change its bytes with bash.",
    };
    format!("Could not {verb} file: {raw}. {error}, so {verb} treats it as binary. {next}")
}

/// The session saw the file and it changed since (`detail`: what changed).
pub(crate) fn changed_since_read(verb: &str, raw: &str, detail: &str) -> String {
    format!(
        "Could not {verb} file: {raw}. It changed since this session last read it; read it again, then {verb}.\n{detail}"
    )
}

/// A whole new content (`write`) has a character the chosen encoding lacks.
pub(crate) fn write_unrepresentable(raw: &str, error: impl Display, encoding: &str) -> String {
    format!(
        "Could not write {raw}: {error}. Use characters {encoding} has, or pass encoding \"utf-8\"."
    )
}

/// The note a result adds for a file that is not plain UTF-8 (`describe`:
/// the encoding as read shows it, e.g. `Shift_JIS`).
pub(crate) fn encoding_note(describe: &str) -> String {
    format!(" The file stays {describe}.")
}
