//! The staleness check: a tool that changes a file the session has seen refuses when the
//! file's content is no longer what the session last saw (read, wrote or edited), and
//! says which lines changed since.
//!
//! Content, not timestamps: [`Session`](crate::session::Session) remembers a hash of the bytes
//! (and one hash per line of the text) each time the model sees a file, so `touch` or a
//! rewrite of identical bytes passes, while CRLF/LF or BOM-only differences are changes.
//! A file the session never saw passes (edit needs no prior read). Files too large to hash
//! (over 32 MiB) are compared by size, modification and status-change times and inode, so
//! a file replaced by one of the same size and modification time is a change. Hosts turn the check off with
//! [`ToolConfig::stale_check`](crate::toolset::ToolConfig::stale_check) (`--no-stale-check`).

use std::path::Path;

use pith_env::{FileSystem, Metadata};
use pith_text::{ChangedLines, LineHasher, changed_lines, format_size};

use crate::messages::stale::{self as messages, Run};
use crate::session::{Fingerprint, Seen};
use crate::tool::ToolContext;

/// Runs of changed lines named in the message; the rest are counted.
const NAMED_RUNS: usize = 3;
/// Characters of a changed line shown.
const SHOWN_CHARS: usize = 100;

/// The file changed since the session last saw it.
#[derive(Debug)]
pub(crate) struct Changed {
    /// One or two lines saying what changed (the changed line ranges, and the first
    /// changed line as it is now).
    pub(crate) detail: String,
}

/// What the session last saw at `path`, when the check applies: it is on and the
/// session has seen the file.
pub(crate) async fn remembered(
    context: &ToolContext,
    fs: &dyn FileSystem,
    path: &Path,
) -> Option<Seen> {
    if !context.config.stale_check {
        return None;
    }
    let real = fs.canonicalize(path).await.ok()?;
    context.session.seen_entry(&real)
}

/// Checks a file whose whole current content is `bytes` (its text, BOM excluded or
/// included, is `text` when it is text) against what the session last saw there.
///
/// Returns `Ok` when the check is off, the session never saw the file, or the content is
/// what it saw.
///
/// # Errors
///
/// [`Changed`] with the changed line ranges.
pub(crate) async fn check_fresh(
    context: &ToolContext,
    fs: &dyn FileSystem,
    path: &Path,
    bytes: &[u8],
    text: Option<&str>,
) -> Result<(), Changed> {
    let Some(seen) = remembered(context, fs, path).await else {
        return Ok(());
    };
    compare(&seen, fs, path, bytes, text).await
}

/// [`check_fresh`] against a given record, whatever the configuration says.
///
/// # Errors
///
/// [`Changed`] with the changed line ranges.
pub(crate) async fn compare(
    seen: &Seen,
    fs: &dyn FileSystem,
    path: &Path,
    bytes: &[u8],
    text: Option<&str>,
) -> Result<(), Changed> {
    let current = match seen.fingerprint {
        Fingerprint::Content { .. } => Fingerprint::of(bytes),
        Fingerprint::Stamp { .. } => match fs.metadata(path).await {
            Ok(metadata) => Fingerprint::stamp(&metadata).unwrap_or(Fingerprint::of(bytes)),
            Err(_) => Fingerprint::of(bytes),
        },
    };
    if current == seen.fingerprint {
        return Ok(());
    }
    Err(describe(seen, current.len(), text))
}

/// [`check_fresh`] for a file too large to load (the size, times and inode in
/// `metadata` are compared, or the content hash when the session hashed it).
///
/// # Errors
///
/// [`Changed`] saying the file changed.
pub(crate) async fn check_fresh_large(
    context: &ToolContext,
    fs: &dyn FileSystem,
    path: &Path,
    metadata: &Metadata,
) -> Result<(), Changed> {
    let Some(seen) = remembered(context, fs, path).await else {
        return Ok(());
    };
    compare_large(&seen, fs, path, metadata).await
}

/// [`check_fresh_large`] against a given record, whatever the configuration says.
///
/// # Errors
///
/// [`Changed`] saying the file changed.
pub(crate) async fn compare_large(
    seen: &Seen,
    fs: &dyn FileSystem,
    path: &Path,
    metadata: &Metadata,
) -> Result<(), Changed> {
    let current = match Fingerprint::current(fs, path, metadata).await {
        Ok(current) => current,
        Err(_) => return Err(describe(seen, metadata.len, None)),
    };
    if current == seen.fingerprint {
        return Ok(());
    }
    Err(describe(seen, metadata.len, None))
}

/// What changed, from the line hashes when both sides have them.
fn describe(seen: &Seen, len: u64, text: Option<&str>) -> Changed {
    let text = text.map(|text| text.strip_prefix('\u{FEFF}').unwrap_or(text));
    let lines = match (&seen.lines, text) {
        (Some(old), Some(text)) => LineHasher::of(text).map(|new| (old, new, text)),
        _ => None,
    };
    let Some((old, new, text)) = lines else {
        let detail = if seen.fingerprint.len() == len {
            messages::content_changed_same_size(&format_size(len))
        } else {
            messages::content_changed_size(&format_size(seen.fingerprint.len()), &format_size(len))
        };
        return Changed { detail };
    };
    let runs = changed_lines(old, &new);
    if runs.is_empty() {
        return Changed {
            detail: messages::SAME_LINES.to_owned(),
        };
    }
    let mut named: Vec<String> = runs.iter().take(NAMED_RUNS).map(name_run).collect();
    if runs.len() > NAMED_RUNS {
        named.push(messages::more_runs(runs.len() - NAMED_RUNS));
    }
    let mut detail = messages::changed_lines(&named);
    if let Some(first) = runs.iter().find(|run| !run.new.is_empty())
        && let Some(line) = text.split_inclusive('\n').nth(first.new.start)
    {
        let line = line.trim_end_matches(['\n', '\r']);
        let shown: String = line.chars().take(SHOWN_CHARS).collect();
        let more = if shown.len() < line.len() { "…" } else { "" };
        detail.push_str(&messages::line_now(first.new.start + 1, &shown, more));
    }
    Changed { detail }
}

/// `line 3 changed`, `lines 4-6 added`, `lines 9-10 removed` (numbers of the current
/// file, or of the old one for removed lines).
fn name_run(run: &ChangedLines) -> String {
    let (range, how) = if run.old.is_empty() {
        (&run.new, Run::Added)
    } else if run.new.is_empty() {
        (&run.old, Run::Removed)
    } else {
        (&run.new, Run::Changed)
    };
    messages::run(range.start + 1, range.end, how)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn seen(text: &str) -> Seen {
        Seen {
            fingerprint: Fingerprint::of(text.as_bytes()),
            lines: LineHasher::of(text).map(Arc::from),
        }
    }

    #[test]
    fn names_changed_added_and_removed_runs_and_shows_the_first_changed_line() {
        let old = seen("a\nb\nc\nd\ne\n");
        let changed = describe(&old, 0, Some("a\nB!\nc\nd\ne\nf\n"));
        assert_eq!(
            changed.detail,
            "Changed since: line 2 changed, line 6 added.\nLine 2 is now: B!"
        );
        let removed = describe(&old, 0, Some("a\nb\ne\n"));
        assert_eq!(removed.detail, "Changed since: lines 3-4 removed.");
        let crlf = describe(&old, 0, Some("a\r\nb\nc\nd\ne\n"));
        assert!(crlf.detail.starts_with("Changed since: line 1 changed."));
        let bom = describe(&old, 0, Some("\u{FEFF}a\nb\nc\nd\ne\n"));
        assert!(bom.detail.contains("byte-order mark"), "{}", bom.detail);
        let unknown = describe(&old, 7, None);
        assert_eq!(unknown.detail, "Its content changed (size 10B → 7B).");
    }
}
