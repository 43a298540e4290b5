//! Edits of files too large to hold in memory: exact matches only, streamed.
//!
//! Above [`IN_MEMORY_MAX_BYTES`] the file is never loaded. One streaming pass
//! (a 1 MiB window plus the longest `oldText`) finds every `oldText` with
//! `memchr::memmem`, checks the bytes are UTF-8 and counts lines up to each
//! match; then [`FileSystem::write_spliced`] writes the old bytes with the
//! matched ranges replaced into the atomic write's temp file (the kernel copies
//! the rest on a local disk). The diff and patch cover only the changed lines
//! and a few around them, read back by range. Memory is a few MiB whatever the
//! file's size; the fuzzy rungs of the engine (which need the whole text) do not
//! run, and a miss says so.
//!
//! Measured (`bench/bounds/run`, release build, 2026-11-30, loaded 2-core
//! machine): one exact edit of a 1 GiB file took 1.93x a `cp` of it in the same
//! run at 11.6 MiB peak RSS (a 256 MiB file 1.57x at 13 MiB); a 20 MiB file,
//! below this threshold and so edited in memory, took 34x its `cp` (7.2x an
//! fsynced copy) at 54 MiB. Figures and goals: docs/bounds.md.

use std::path::Path;

use memchr::memmem::Finder;
use pith_env::{FileSystem, Splice};
use pith_text::{Edit, EditMatch, MatchTier, format_size};

use crate::details::EditDetails;
use crate::messages::edit as messages;
use crate::paths::describe_fs_error;
use crate::tool::{ToolError, ToolOutput};

/// The largest file edited in memory, with the whole matching ladder (64 MiB).
pub(super) const IN_MEMORY_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes read per step of the streaming pass.
const WINDOW_BYTES: usize = 1024 * 1024;
/// Lines of context around each change in the diff and the patch.
const CONTEXT_LINES: usize = 4;
/// How far before and after a match its context is looked for.
const CONTEXT_BYTES: u64 = 16 * 1024;

/// Where one `oldText` was found.
#[derive(Clone, Copy, Debug)]
struct Found {
    start: u64,
    end: u64,
    /// 1-based line of `start`.
    line: u64,
}

/// What the streaming pass found for each edit: its matches (at most two are kept).
struct Scan {
    found: Vec<Vec<Found>>,
}

/// The needles and the replacements, with the file's line ending applied.
struct Prepared {
    old: Vec<Vec<u8>>,
    new: Vec<Vec<u8>>,
}

/// Edits the large file at `path` (of `len` bytes); `raw` is the path as the model sent it.
pub(super) async fn edit(
    fs: &dyn FileSystem,
    path: &Path,
    raw: &str,
    len: u64,
    edits: &[Edit],
) -> Result<(ToolOutput, u64), ToolError> {
    let fail = |reason: String| ToolError::new(messages::failed(raw, reason));
    let io = |error: pith_env::FsError| fail(messages::fs_reason(&describe_fs_error(&error)));
    let head = fs.read_range(path, 0, 64 * 1024).await.map_err(io)?;
    let prepared = prepare(edits, uses_crlf(&head)).map_err(&fail)?;
    let scan = scan(fs, path, &prepared.old).await.map_err(&fail)?;
    let matches = unique_matches(&scan, len, raw)?;
    let mut splices: Vec<(usize, Found)> = matches.iter().copied().enumerate().collect();
    splices.sort_by_key(|(_, found)| found.start);
    for pair in splices.windows(2) {
        if let [(first, a), (second, b)] = pair
            && b.start < a.end
        {
            return Err(fail(messages::large_overlap(*first, *second)));
        }
    }
    // The context of each change, read before the file is replaced.
    let mut hunks = Vec::new();
    for &(index, found) in &splices {
        hunks.push(
            Hunk::read(fs, path, len, found, &prepared.new[index])
                .await
                .map_err(io)?,
        );
    }
    let splice_list: Vec<Splice> = splices
        .iter()
        .map(|&(index, found)| Splice {
            range: found.start..found.end,
            bytes: prepared.new[index].clone(),
        })
        .collect();
    fs.write_spliced(path, &splice_list).await.map_err(io)?;
    let new_len = splice_list.iter().fold(len, |total, splice| {
        total - (splice.range.end - splice.range.start) + splice.bytes.len() as u64
    });
    let edit_matches: Vec<EditMatch> = matches
        .iter()
        .enumerate()
        .map(|(index, found)| EditMatch {
            index,
            tier: MatchTier::Exact,
            start_line: to_usize(found.line),
            end_line: to_usize(found.line + newlines(&prepared.old[index])),
        })
        .collect();
    let (diff, patch, first_changed_line) = render_hunks(raw, &hunks);
    let text = messages::replaced(edits.len(), raw);
    let result = ToolOutput::text(text).with_details_of(&EditDetails {
        diff,
        patch,
        first_changed_line,
        matches: edit_matches,
        encoding: None,
    });
    Ok((result, new_len))
}

/// Whether the file's first line ends with CRLF (then `\n` in the edits means CRLF).
fn uses_crlf(head: &[u8]) -> bool {
    memchr::memchr(b'\n', head).is_some_and(|at| at > 0 && head[at - 1] == b'\r')
}

fn prepare(edits: &[Edit], crlf: bool) -> Result<Prepared, String> {
    let ending = |text: &str| -> Vec<u8> {
        let lf = text.replace("\r\n", "\n");
        if crlf {
            lf.replace('\n', "\r\n").into_bytes()
        } else {
            lf.into_bytes()
        }
    };
    let mut prepared = Prepared {
        old: Vec::new(),
        new: Vec::new(),
    };
    for (index, edit) in edits.iter().enumerate() {
        if edit.old_text.is_empty() {
            return Err(messages::large_empty_old_text(index));
        }
        prepared.old.push(ending(&edit.old_text));
        prepared.new.push(ending(&edit.new_text));
    }
    Ok(prepared)
}

/// One streaming pass: every needle's first two matches, UTF-8 checked.
async fn scan(fs: &dyn FileSystem, path: &Path, needles: &[Vec<u8>]) -> Result<Scan, String> {
    let finders: Vec<Finder<'_>> = needles.iter().map(Finder::new).collect();
    let overlap = needles.iter().map(Vec::len).max().unwrap_or(1) - 1;
    let mut reader = fs
        .open(path)
        .await
        .map_err(|error| messages::fs_reason(&describe_fs_error(&error)))?;
    let mut found: Vec<Vec<Found>> = vec![Vec::new(); needles.len()];
    let mut window: Vec<u8> = Vec::with_capacity(WINDOW_BYTES + overlap);
    let mut chunk = vec![0; WINDOW_BYTES];
    // Absolute offset of `window[0]`, and newlines before it.
    let (mut base, mut lines_before) = (0u64, 0u64);
    let mut carried = 0;
    let mut utf8 = Utf8Check::default();
    loop {
        let read = reader
            .read_chunk(&mut chunk)
            .await
            .map_err(|error| messages::fs_reason(&describe_fs_error(&error)))?;
        if read == 0 {
            utf8.finish(base + window.len() as u64)?;
            return Ok(Scan { found });
        }
        utf8.feed(&chunk[..read], base + window.len() as u64)?;
        window.extend_from_slice(&chunk[..read]);
        for (index, finder) in finders.iter().enumerate() {
            for at in finder.find_iter(&window) {
                // A match wholly inside the carried bytes was seen in the last window.
                if at + needles[index].len() <= carried || found[index].len() >= 2 {
                    continue;
                }
                let line = lines_before + newlines(&window[..at]) + 1;
                let start = base + at as u64;
                found[index].push(Found {
                    start,
                    end: start + needles[index].len() as u64,
                    line,
                });
            }
        }
        let keep = overlap.min(window.len());
        let drop = window.len() - keep;
        lines_before += newlines(&window[..drop]);
        base += drop as u64;
        window.drain(..drop);
        carried = window.len();
    }
}

/// Streaming UTF-8 validation: carries an incomplete character across chunks.
#[derive(Default)]
struct Utf8Check {
    tail: Vec<u8>,
}

impl Utf8Check {
    /// Checks `bytes`, which start at absolute offset `at`.
    fn feed(&mut self, bytes: &[u8], at: u64) -> Result<(), String> {
        let mut joined;
        let (data, start) = if self.tail.is_empty() {
            (bytes, at)
        } else {
            joined = std::mem::take(&mut self.tail);
            let start = at - joined.len() as u64;
            joined.extend_from_slice(bytes);
            (&joined[..], start)
        };
        match std::str::from_utf8(data) {
            Ok(_) => Ok(()),
            Err(error) if error.error_len().is_none() => {
                self.tail = data[error.valid_up_to()..].to_vec();
                Ok(())
            }
            Err(error) => Err(not_utf8(start + error.valid_up_to() as u64)),
        }
    }

    fn finish(&self, end: u64) -> Result<(), String> {
        if self.tail.is_empty() {
            Ok(())
        } else {
            Err(not_utf8(end - self.tail.len() as u64))
        }
    }
}

fn not_utf8(offset: u64) -> String {
    messages::large_not_utf8(offset)
}

/// Each edit's one match, or the error for the first edit with none or several.
fn unique_matches(scan: &Scan, len: u64, raw: &str) -> Result<Vec<Found>, ToolError> {
    let mut matches = Vec::new();
    for (index, found) in scan.found.iter().enumerate() {
        match found.as_slice() {
            [only] => matches.push(*only),
            [] => {
                return Err(ToolError::new(messages::large_not_found(
                    index,
                    raw,
                    &format_size(len),
                    &format_size(IN_MEMORY_MAX_BYTES),
                )));
            }
            [first, second, ..] => {
                return Err(ToolError::new(messages::large_ambiguous(
                    index,
                    raw,
                    first.line,
                    second.line,
                )));
            }
        }
    }
    Ok(matches)
}

/// One change with the lines around it.
struct Hunk {
    /// 1-based old line number of `before[0]`.
    first_line: u64,
    before: Vec<String>,
    old: Vec<String>,
    new: Vec<String>,
    after: Vec<String>,
}

impl Hunk {
    async fn read(
        fs: &dyn FileSystem,
        path: &Path,
        len: u64,
        found: Found,
        replacement: &[u8],
    ) -> Result<Hunk, pith_env::FsError> {
        let from = found.start.saturating_sub(CONTEXT_BYTES);
        let before = fs
            .read_range(path, from, to_usize(found.start - from))
            .await?;
        let to = (found.end + CONTEXT_BYTES).min(len);
        let after = fs
            .read_range(path, found.end, to_usize(to - found.end))
            .await?;
        let old = fs
            .read_range(path, found.start, to_usize(found.end - found.start))
            .await?;
        // The changed lines run from the line start before the match to the line end after it.
        let line_start = memchr::memrchr(b'\n', &before).map_or(0, |at| at + 1);
        let (context_before, prefix) = before.split_at(line_start);
        let line_end = memchr::memchr(b'\n', &after).unwrap_or(after.len());
        let (suffix, context_after) = after.split_at(line_end);
        let joined = |middle: &[u8]| [prefix, middle, suffix].concat();
        let mut before_lines = lines(context_before);
        // A partial first line (the context window began mid-line) is dropped.
        if from > 0 && !before_lines.is_empty() {
            before_lines.remove(0);
        }
        let keep_from = before_lines.len().saturating_sub(CONTEXT_LINES);
        let before_lines = before_lines.split_off(keep_from);
        let mut after_lines = lines(context_after.strip_prefix(b"\n").unwrap_or(&[]));
        after_lines.truncate(CONTEXT_LINES);
        Ok(Hunk {
            first_line: found.line - before_lines.len() as u64,
            before: before_lines,
            old: lines(&joined(&old)),
            new: lines(&joined(replacement)),
            after: after_lines,
        })
    }
}

/// Lines of `bytes` without their endings (a final newline ends the last line).
fn lines(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    if text.is_empty() && bytes.is_empty() {
        return Vec::new();
    }
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line).to_owned())
        .collect()
}

/// The display diff, the unified patch and the first changed line of the hunks (in file order).
fn render_hunks(raw: &str, hunks: &[Hunk]) -> (String, String, Option<u64>) {
    let width = hunks
        .iter()
        .map(|hunk| {
            hunk.first_line
                + (hunk.before.len() + hunk.old.len().max(hunk.new.len()) + hunk.after.len()) as u64
        })
        .max()
        .unwrap_or(1)
        .to_string()
        .len();
    let mut diff = Vec::new();
    let mut patch = format!("--- {raw}\n+++ {raw}\n");
    let mut shift: i64 = 0;
    let mut first_changed = None;
    for hunk in hunks {
        let old_start = hunk.first_line;
        let changed_old = old_start + hunk.before.len() as u64;
        let changed_new = changed_old.saturating_add_signed(shift);
        first_changed.get_or_insert(changed_new);
        if !diff.is_empty() {
            diff.push(format!(" {} ...", " ".repeat(width)));
        }
        for (offset, line) in hunk.before.iter().enumerate() {
            diff.push(format!(" {:>width$} {line}", old_start + offset as u64));
        }
        for (offset, line) in hunk.old.iter().enumerate() {
            diff.push(format!("-{:>width$} {line}", changed_old + offset as u64));
        }
        for (offset, line) in hunk.new.iter().enumerate() {
            diff.push(format!("+{:>width$} {line}", changed_new + offset as u64));
        }
        let after_start = changed_old + hunk.old.len() as u64;
        for (offset, line) in hunk.after.iter().enumerate() {
            diff.push(format!(" {:>width$} {line}", after_start + offset as u64));
        }
        let context = hunk.before.len() + hunk.after.len();
        patch.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            old_start,
            context + hunk.old.len(),
            old_start.saturating_add_signed(shift),
            context + hunk.new.len()
        ));
        for (sign, lines) in [
            (' ', &hunk.before),
            ('-', &hunk.old),
            ('+', &hunk.new),
            (' ', &hunk.after),
        ] {
            for line in lines {
                patch.push(sign);
                patch.push_str(line);
                patch.push('\n');
            }
        }
        shift += hunk.new.len() as i64 - hunk.old.len() as i64;
    }
    (diff.join("\n"), patch, first_changed)
}

fn newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

#[cfg(test)]
#[path = "large_tests.rs"]
mod tests;
