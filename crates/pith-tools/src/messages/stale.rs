//! What changed in a file since the session last read it (`stale.rs`); the
//! tools put it after their own "changed since" refusal.

/// The file changed and no line hashes say where, at the same size.
pub(crate) fn content_changed_same_size(size: &str) -> String {
    format!("Its content changed ({size}, same size).")
}

/// The file changed and no line hashes say where, to another size.
pub(crate) fn content_changed_size(old: &str, new: &str) -> String {
    format!("Its content changed (size {old} → {new}).")
}

/// The lines hash the same but the bytes differ.
pub(crate) const SAME_LINES: &str =
    "Its lines are the same but its bytes are not (encoding or byte-order mark).";

/// The runs of changed lines past those named.
pub(crate) fn more_runs(count: usize) -> String {
    format!("{count} more")
}

/// The runs of changed lines (each from [`run`]).
pub(crate) fn changed_lines(named: &[String]) -> String {
    format!("Changed since: {}.", named.join(", "))
}

/// The first changed line as it is now (`more`: `…` when clipped).
pub(crate) fn line_now(line: usize, shown: &str, more: &str) -> String {
    format!("\nLine {line} is now: {shown}{more}")
}

/// How a run of lines changed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Run {
    /// Lines only in the current file.
    Added,
    /// Lines only in the old one.
    Removed,
    /// Lines replaced.
    Changed,
}

/// `line 3 changed`, `lines 4-6 added` (1-based, inclusive).
pub(crate) fn run(first: usize, last: usize, how: Run) -> String {
    let span = if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    };
    let how = match how {
        Run::Added => "added",
        Run::Removed => "removed",
        Run::Changed => "changed",
    };
    format!("{span} {how}")
}
