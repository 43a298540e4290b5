//! Paths, for every tool that takes one (`paths.rs` calls these).

use std::fmt::Display;

/// A path argument longer than any real path.
pub(crate) fn too_long(shown: &str, bytes: usize, max: usize) -> String {
    format!(
        "The path {shown} is {bytes} bytes long; a path has at most {max} bytes. Send the file's real path."
    )
}

/// A path argument with a NUL byte (`shown` has it as `\\0`).
pub(crate) fn nul_byte(shown: &str) -> String {
    format!("Invalid path {shown}: it contains a NUL byte. Send the path without it.")
}

/// `~` without a home directory.
pub(crate) fn no_home(path: &str) -> String {
    format!("Cannot expand {path}: no home directory is known. Use an absolute path.")
}

/// A `file://` URL that is not one of a local file.
pub(crate) fn invalid_file_url(input: &str, why: &str) -> String {
    format!(
        "Invalid file URL {input}: {why}. Send a plain path or a URL like file:///home/me/a.txt."
    )
}

/// A path that resolved outside the workspace roots.
pub(crate) fn outside_roots(path: impl Display) -> String {
    format!(
        "{path} is outside the workspace (it resolved outside the roots when it was opened). Use a path inside them."
    )
}

/// A device, socket or FIFO where a regular file was expected.
pub(crate) fn special_file(path: impl Display, kind: &str) -> String {
    format!(
        "{path} is a {kind}, not a regular file; the file tools neither read nor replace special files."
    )
}

/// A not-found message with the similar names of its directory.
pub(crate) fn similar_names(lead: &str, parent: impl Display, similar: &[String]) -> String {
    format!("{lead}\nSimilar names in {parent}: {}", similar.join(", "))
}

/// A not-found message with paths under the working directory that
/// have the missing file's name.
pub(crate) fn did_you_mean(message: &str, elsewhere: &[String]) -> String {
    format!("{message}\nDid you mean {}?", elsewhere.join(" or "))
}

/// The workspace check: a path with a NUL byte.
pub(crate) const POLICY_NUL: &str = "The path contains a NUL byte; send the path without it.";

/// The workspace check: where a path outside resolves to, when it differs.
pub(crate) fn resolves_to(real: impl Display) -> String {
    format!(" (it resolves to {real})")
}

/// The workspace check: a path outside every root (`via` from [`resolves_to`] or empty).
pub(crate) fn outside_workspace(path: impl Display, via: &str, roots: &[String]) -> String {
    format!(
        "{path} is outside the workspace{via}. Allowed roots: {}. Use a path inside them.",
        roots.join(", ")
    )
}

/// The workspace check: no ancestor of the path exists.
pub(crate) fn does_not_exist(path: impl Display) -> String {
    format!("{path} does not exist.")
}

/// The workspace check: a symlink on the way whose target cannot be resolved.
pub(crate) fn unresolvable_symlink(link: impl Display, code: &str) -> String {
    format!(
        "{link} is a symbolic link whose target cannot be resolved ({code}); refusing to write through it."
    )
}
