//! Text files: one streaming pass that keeps only the lines shown.
//!
//! The file is fed through [`Scanner`] chunk by chunk. It counts every line
//! (a trailing newline does not start an extra line, fixing Pi #7329), keeps
//! the selected lines until the line or byte limit is hit (never more than the
//! byte limit plus one line's worth of bytes is buffered), and measures the
//! rest. Head truncation follows the reference (§3.3, §4.2 step 6).
//!
//! A read costs what it shows: for a file too large to hash (see
//! [`HASHED_MAX_BYTES`](crate::session::HASHED_MAX_BYTES)) the scanner is told
//! to count only [`COUNT_AHEAD_BYTES`] past the shown lines
//! ([`Scanner::count_ahead`]); when the file goes on, the total is a lower
//! bound and the notice says "of at least N". Lines 1–2000 of a 10 GiB file
//! thus read a few MiB, and a page further in reads up to that page.

use memchr::memchr;
use pith_text::{TruncatedBy, Truncation, TruncationLimits, format_size};
use serde_json::{Value, json};

use super::index::{Checkpoint, LineIndex};
use crate::details::ReadDetails;
use crate::messages::read as messages;
use crate::tool::details_value;

/// How far past the shown lines a large file's lines are still counted.
pub(super) const COUNT_AHEAD_BYTES: u64 = 4 * 1024 * 1024;
/// Lines are skipped by counting the newlines of blocks this large at a time
/// (SIMD counting; the exact newline is looked for only in the block it is in).
const SKIP_BLOCK_BYTES: usize = 64 * 1024;

/// Which lines to show.
#[derive(Clone, Copy, Debug)]
pub(super) struct Window {
    /// 0-based index of the first line to show.
    pub(super) start: u64,
    /// How many lines at most (the `limit` argument).
    pub(super) limit: Option<u64>,
    /// The output limits.
    pub(super) limits: TruncationLimits,
}

impl Window {
    /// 0-based index of the first line after the selection.
    fn end(&self) -> u64 {
        match self.limit {
            Some(limit) => self.start.saturating_add(limit),
            None => u64::MAX,
        }
    }
}

/// What a pass over the file found.
#[derive(Debug)]
pub(super) struct Scan {
    /// The kept lines, joined by `\n`.
    text: String,
    kept_lines: u64,
    kept_bytes: u64,
    truncated_by: Option<TruncatedBy>,
    /// Length of the first selected line when it alone exceeds the byte limit.
    first_line_bytes: Option<u64>,
    /// Lines in the file (counted up to where the pass stopped).
    pub(super) total_lines: u64,
    /// Whether the pass reached the end of the file, so `total_lines` is exact.
    pub(super) complete: bool,
    selected_lines: u64,
    selected_bytes: u64,
    ends_with_newline: bool,
    /// Some shown line was not valid UTF-8 and was decoded lossily.
    lossy: bool,
}

impl Scan {
    /// Whether some shown line was not valid UTF-8 (shown lossily).
    pub(super) fn lossy(&self) -> bool {
        self.lossy
    }
}

/// The streaming line scanner.
pub(super) struct Scanner {
    window: Window,
    /// 0-based index of the line being read.
    line: u64,
    /// Bytes of the current line so far.
    line_len: u64,
    /// The current line's bytes, when it may be kept (capped).
    buf: Vec<u8>,
    /// False once a line did not fit the byte limit.
    keeping: bool,
    /// Bytes consumed.
    pos: u64,
    /// Where the selection starts and ends, once reached.
    selection_start: Option<u64>,
    selection_end: Option<u64>,
    last_byte: Option<u8>,
    /// Count only this many bytes past the window (`None`: to the end).
    count_ahead: Option<u64>,
    /// Where the window was complete, once it is.
    window_done_at: Option<u64>,
    /// Line starts noted for the session's line index, when asked for.
    checkpoints: Option<LineIndex>,
    scan: Scan,
}

impl Scanner {
    pub(super) fn new(window: Window) -> Scanner {
        let mut scanner = Scanner {
            window,
            line: 0,
            line_len: 0,
            // Room for a usual line and a usual page: no regrowth per line.
            buf: Vec::with_capacity(256),
            keeping: true,
            pos: 0,
            selection_start: None,
            selection_end: None,
            last_byte: None,
            count_ahead: None,
            window_done_at: None,
            checkpoints: None,
            scan: Scan {
                text: String::with_capacity(4096),
                kept_lines: 0,
                kept_bytes: 0,
                truncated_by: None,
                first_line_bytes: None,
                total_lines: 0,
                complete: true,
                selected_lines: 0,
                selected_bytes: 0,
                ends_with_newline: false,
                lossy: false,
            },
        };
        scanner.mark_line_start();
        scanner
    }

    /// A scanner that starts at a known line start (`at`, from a line index)
    /// instead of the start of the file: fed the bytes from `at.pos` on, it
    /// finds what a scanner fed from the start would.
    pub(super) fn resume(window: Window, at: Checkpoint) -> Scanner {
        let mut scanner = Scanner::new(window);
        if at.line == 0 {
            return scanner;
        }
        scanner.selection_start = None;
        scanner.selection_end = None;
        scanner.line = at.line;
        scanner.pos = at.pos;
        scanner.last_byte = Some(b'\n');
        scanner.mark_line_start();
        scanner
    }

    /// Notes line starts for a line index as the scan goes ([`Scanner::checkpoints`]).
    pub(super) fn noting_checkpoints(mut self) -> Scanner {
        self.checkpoints = Some(LineIndex::default());
        self
    }

    /// The line starts noted (see [`Scanner::noting_checkpoints`]).
    pub(super) fn checkpoints(&self) -> Option<&LineIndex> {
        self.checkpoints.as_ref()
    }

    /// Counts lines only `bytes` past the shown ones; see [`Scanner::satisfied`].
    pub(super) fn count_ahead(mut self, bytes: u64) -> Scanner {
        self.count_ahead = Some(bytes);
        self
    }

    /// Whether the pass may stop here: the shown lines and the selection's
    /// end are known, and the count has run [`Scanner::count_ahead`] bytes
    /// past them. Never true without a count-ahead. The scanner takes no byte
    /// past that point, so where it stops (and the count) does not depend on
    /// how the file was cut into chunks.
    pub(super) fn satisfied(&mut self) -> bool {
        self.ahead_left() == Some(0)
    }

    /// Notes where the window was complete, once it is (with a count-ahead).
    fn note_window_done(&mut self) {
        if self.count_ahead.is_some()
            && self.window_done_at.is_none()
            && self.line > self.window.start
            && !self.collecting()
            && self.pending_mark().is_none()
        {
            self.window_done_at = Some(self.pos);
        }
    }

    /// Once the shown lines and the selection's end are known (see
    /// [`Scanner::satisfied`]): how many bytes are still to be counted past
    /// them, which [`Scanner::skip_counted`] can take without the bytes.
    pub(super) fn ahead_left(&mut self) -> Option<u64> {
        self.note_window_done();
        let (ahead, done) = (self.count_ahead?, self.window_done_at?);
        Some(done.saturating_add(ahead).saturating_sub(self.pos))
    }

    /// Takes bytes past the shown lines by their line count alone (after
    /// [`Scanner::ahead_left`]): what [`Scanner::feed`] does with them there.
    pub(super) fn skip_counted(&mut self, count: &pith_env::LineCount) {
        self.pos += count.bytes;
        if count.newlines == 0 {
            self.line_len += count.after_last_newline;
        } else {
            self.line += count.newlines;
            self.line_len = count.after_last_newline;
        }
        if count.last_byte.is_some() {
            self.last_byte = count.last_byte;
        }
    }

    /// Lines to pass before the next line start the scanner must note (the
    /// first shown line, or the one after the selection), when it is before
    /// one and keeps nothing meanwhile: a reader may skip them
    /// ([`pith_env::FileReader::skip_lines`]) and report [`Scanner::skipped`].
    pub(super) fn lines_to_skip(&self) -> Option<u64> {
        if self.collecting() {
            return None;
        }
        let target = self.pending_mark()?;
        (target > self.line).then(|| target - self.line)
    }

    /// Takes bytes a reader skipped by their line count (after
    /// [`Scanner::lines_to_skip`]): what [`Scanner::feed`] does with them,
    /// a checkpoint noted at the last line start they pass.
    pub(super) fn skipped(&mut self, count: &pith_env::LineCount) {
        self.skip_counted(count);
        if count.newlines > 0 {
            if let Some(checkpoints) = &mut self.checkpoints {
                checkpoints.push(Checkpoint {
                    line: self.line,
                    pos: self.pos - self.line_len,
                });
            }
            if self.line_len == 0 {
                self.mark_line_start();
            }
        }
    }

    /// Ends a pass stopped before the end of the file (after
    /// [`Scanner::satisfied`]): the line count is a lower bound.
    pub(super) fn finish_early(mut self) -> Scan {
        // The line being read is a line, whether or not more of it follows.
        if self.line_len > 0 {
            self.line += 1;
            self.line_len = 0;
        }
        let mut scan = self.finish();
        scan.complete = false;
        // The file goes on past the last byte read: there is at least one more line
        // unless that byte ended one and nothing else follows, which is unknown.
        scan.ends_with_newline = false;
        scan
    }

    fn collecting(&self) -> bool {
        self.keeping
            && self.line >= self.window.start
            && self.line < self.window.end()
            && self.scan.kept_lines < self.window.limits.max_lines as u64
    }

    /// The next line index whose start position still has to be recorded.
    fn pending_mark(&self) -> Option<u64> {
        if self.selection_start.is_none() {
            Some(self.window.start)
        } else if self.selection_end.is_none() && self.window.limit.is_some() {
            Some(self.window.end())
        } else {
            None
        }
    }

    fn mark_line_start(&mut self) {
        if self.line == self.window.start && self.selection_start.is_none() {
            self.selection_start = Some(self.pos);
        }
        if self.window.limit.is_some() && self.line == self.window.end() {
            self.selection_end.get_or_insert(self.pos);
        }
    }

    /// Feeds the next chunk of the file (BOM already removed).
    pub(super) fn feed(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        let mut taken = chunk.len();
        while !rest.is_empty() {
            self.note_window_done();
            if let Some(left) = self.ahead_left()
                && left < rest.len() as u64
            {
                // The count-ahead ends inside this chunk: the rest is not taken.
                taken -= rest.len() - to_usize(left);
                rest = &rest[..to_usize(left)];
                if rest.is_empty() {
                    break;
                }
            }
            if self.collecting() {
                match memchr(b'\n', rest) {
                    Some(index) => {
                        self.extend(&rest[..index]);
                        self.pos += 1;
                        self.end_kept_line();
                        rest = &rest[index + 1..];
                    }
                    None => {
                        self.extend(rest);
                        rest = &[];
                    }
                }
            } else {
                let target = self.pending_mark();
                rest = self.skip(rest, target);
            }
        }
        if let Some(&last) = chunk.get(..taken).and_then(<[u8]>::last) {
            self.last_byte = Some(last);
        }
    }

    /// Skips lines of `bytes` without keeping any: up to the start of line
    /// `target` (the rest of `bytes` is returned), or all of them. Counts a
    /// block at a time and notes checkpoints at block ends.
    fn skip<'a>(&mut self, bytes: &'a [u8], target: Option<u64>) -> &'a [u8] {
        let mut rest = bytes;
        while !rest.is_empty() {
            let block = &rest[..rest.len().min(SKIP_BLOCK_BYTES)];
            let newlines = memchr::memchr_iter(b'\n', block).count() as u64;
            if let Some(target) = target {
                let needed = target.saturating_sub(self.line).max(1);
                if newlines >= needed {
                    // The newline that ends line `target - 1` is in this block.
                    let index = memchr::memchr_iter(b'\n', block)
                        .nth(to_usize(needed - 1))
                        .unwrap_or(block.len() - 1);
                    self.pos += index as u64 + 1;
                    self.line = target;
                    self.line_len = 0;
                    self.mark_line_start();
                    return &rest[index + 1..];
                }
            }
            self.pos += block.len() as u64;
            if newlines == 0 {
                self.line_len += block.len() as u64;
            } else {
                self.line += newlines;
                let after_last = memchr::memrchr(b'\n', block).map_or(0, |index| index + 1);
                self.line_len = (block.len() - after_last) as u64;
                if let Some(checkpoints) = &mut self.checkpoints {
                    checkpoints.push(Checkpoint {
                        line: self.line,
                        pos: self.pos - self.line_len,
                    });
                }
            }
            rest = &rest[block.len()..];
        }
        rest
    }

    fn extend(&mut self, bytes: &[u8]) {
        self.pos += bytes.len() as u64;
        self.line_len += bytes.len() as u64;
        let cap = self.window.limits.max_bytes + 1;
        if self.buf.len() < cap {
            let take = bytes.len().min(cap - self.buf.len());
            self.buf.extend_from_slice(&bytes[..take]);
        }
    }

    /// A selected line is complete: keep it if it fits, else stop keeping.
    fn end_kept_line(&mut self) {
        let max_bytes = self.window.limits.max_bytes as u64;
        let separator = u64::from(self.scan.kept_lines > 0);
        let fits = self.line_len <= max_bytes && {
            // The strict check is the fast one; the lossy one only for bad bytes.
            let text = match std::str::from_utf8(&self.buf) {
                Ok(text) => std::borrow::Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(&self.buf),
            };
            let cost = separator + text.len() as u64;
            let fits = self.scan.kept_bytes + cost <= max_bytes;
            if fits {
                if separator == 1 {
                    self.scan.text.push('\n');
                }
                self.scan.lossy |= matches!(text, std::borrow::Cow::Owned(_));
                self.scan.text.push_str(&text);
                self.scan.kept_lines += 1;
                self.scan.kept_bytes += cost;
            }
            fits
        };
        if !fits {
            self.keeping = false;
            self.scan.truncated_by = Some(TruncatedBy::Bytes);
            if self.scan.kept_lines == 0 {
                self.scan.first_line_bytes = Some(self.line_len);
            }
        }
        self.buf.clear();
        self.line_len = 0;
        self.line += 1;
        self.mark_line_start();
    }

    /// Ends the pass.
    pub(super) fn finish(mut self) -> Scan {
        if self.line_len > 0 {
            if self.collecting() {
                self.end_kept_line();
            } else {
                self.line += 1;
                self.line_len = 0;
                self.mark_line_start();
            }
        }
        let total = self.line;
        let start = self.window.start;
        let end = self.window.end().min(total);
        let mut scan = self.scan;
        scan.total_lines = total;
        scan.ends_with_newline = self.last_byte == Some(b'\n');
        scan.selected_lines = end.saturating_sub(start);
        scan.selected_bytes = match self.selection_start {
            Some(from) => self.selection_end.unwrap_or(self.pos).saturating_sub(from),
            None => 0,
        };
        if scan.truncated_by.is_none() && scan.selected_lines > scan.kept_lines {
            scan.truncated_by = Some(TruncatedBy::Lines);
        }
        scan
    }
}

/// How the output refers to the request.
pub(super) struct Request<'a> {
    /// The path as the model sent it.
    pub(super) raw_path: &'a str,
}

/// The model-facing text and the details of a scan.
pub(super) fn render(
    scan: &Scan,
    window: &Window,
    request: &Request<'_>,
) -> (String, Option<Value>) {
    let limits = window.limits;
    let first_shown = window.start + 1;
    let details = scan.truncated_by.map(|by| {
        let truncation = Truncation {
            content: String::new(),
            truncated: true,
            truncated_by: Some(by),
            total_lines: to_usize(scan.selected_lines),
            total_bytes: to_usize(scan.selected_bytes),
            output_lines: to_usize(scan.kept_lines),
            output_bytes: to_usize(scan.kept_bytes),
            last_line_partial: false,
            first_line_exceeds_limit: scan.first_line_bytes.is_some(),
            max_lines: limits.max_lines,
            max_bytes: limits.max_bytes,
        };
        details_value(&ReadDetails { truncation })
    });
    // Spelled only for a notice that names it (formatting a size is not free).
    let limit_text = || format_size(limits.max_bytes as u64);
    let mut text = if let Some(size) = scan.first_line_bytes {
        messages::line_too_long(
            first_shown,
            &format_size(size),
            &limit_text(),
            &shell_quote(request.raw_path),
            limits.max_bytes,
        )
    } else if let Some(by) = scan.truncated_by {
        let last_shown = window.start + scan.kept_lines;
        let limit_note = match by {
            TruncatedBy::Bytes => messages::byte_limit(&limit_text()),
            TruncatedBy::Lines => String::new(),
        };
        messages::showing_lines(
            &scan.text,
            first_shown,
            last_shown,
            !scan.complete,
            scan.total_lines,
            &limit_note,
        )
    } else {
        let after = window.start + scan.selected_lines;
        if !scan.complete {
            messages::at_least_more_lines(
                &scan.text,
                scan.total_lines.saturating_sub(after).max(1),
                after + 1,
            )
        } else if after < scan.total_lines {
            messages::more_lines(&scan.text, scan.total_lines - after, after + 1)
        } else if scan.total_lines == 0 {
            // An empty string would look like a failed call.
            messages::EMPTY_FILE.to_owned()
        } else if scan.ends_with_newline && scan.kept_lines > 0 {
            format!("{}\n", scan.text)
        } else {
            scan.text.clone()
        }
    };
    if scan.lossy {
        text.push_str(if text.ends_with('\n') { "\n" } else { "\n\n" });
        text.push_str(messages::NOT_UTF8);
    }
    (text, details)
}

/// The structured result: the path, the lines shown, the file's line count and encoding.
pub(super) fn structured(scan: &Scan, window: &Window, path: &std::path::Path) -> Value {
    let start = window.start;
    json!({
        "path": path.display().to_string(),
        "startLine": start + 1,
        "endLine": start + scan.kept_lines,
        "totalLines": scan.total_lines,
        "encoding": if scan.lossy { "utf-8-lossy" } else { "utf-8" },
        "truncated": scan.truncated_by.is_some(),
    })
}

/// The offset error, when the window starts past the end of the file.
pub(super) fn offset_error(scan: &Scan, window: &Window, offset: Option<u64>) -> Option<String> {
    (window.start > 0 && window.start >= scan.total_lines)
        .then(|| messages::beyond_end(offset.unwrap_or(window.start + 1), scan.total_lines))
}

fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// Quotes a path for a shell command line when it needs it.
pub(super) fn shell_quote(path: &str) -> String {
    let plain = !path.is_empty()
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%".contains(&b));
    if plain {
        path.to_owned()
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
