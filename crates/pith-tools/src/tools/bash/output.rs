//! Bounded memory for unbounded output: counters, a rolling tail, and the
//! whole raw output spilled to a file once it passes the limits.

use std::path::PathBuf;

use pith_env::{ExecError, OutputLog};
use pith_text::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, SignalLines, TruncatedBy, Truncation, TruncationLimits,
    format_size, omission_marker, truncate_tail,
};

use super::decode::Utf8Decoder;
use crate::messages::bash as messages;

/// Lines longer than this (in characters) are clipped in the shown tail.
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// The tail buffer is cut back to about `KEEP` bytes when it passes `CUT_AT`
/// bytes: each cut moves the kept bytes to the front, so the cut comes every
/// ~200 KiB of output, while what a cut scans stays inside the per-core cache
/// and fifty chatty jobs' unread tails stay well under their 64 MiB.
const CUT_AT: usize = 6 * DEFAULT_MAX_BYTES;
const KEEP: usize = 2 * DEFAULT_MAX_BYTES;
/// The head shown before the omission marker: at most this many lines ...
const HEAD_LINES: usize = 500;
/// ... and this many bytes (whole lines only).
const HEAD_BYTES: usize = 12 * 1024;
/// Room kept for the marker (its lines and bytes) within the limits.
const MARKER_LINES: usize = 2 + pith_text::MAX_SIGNAL_LINES;
const MARKER_BYTES: usize =
    512 + pith_text::MAX_SIGNAL_LINES * (pith_text::SIGNAL_LINE_CHARS * 4 + 16);

/// Opens the full-output file when it is first needed.
pub(crate) type OpenLog = Box<dyn FnMut() -> Result<Box<dyn OutputLog>, ExecError> + Send>;

/// The state of the full-output file.
enum Spill {
    /// Not needed yet: the raw output so far is kept in memory (at most the limits).
    Buffered(Vec<u8>),
    /// Every raw byte so far is in the file.
    Open(Box<dyn OutputLog>),
    /// Opening or writing failed; the error says where.
    Failed(String),
}

/// Everything a command printed, in bounded memory.
pub(crate) struct OutputAccumulator {
    decoder: Utf8Decoder,
    /// The end of the decoded text (at most `CUT_AT` bytes).
    tail: String,
    /// The tail was cut inside a line: its first line is partial.
    tail_cut_mid_line: bool,
    /// 1-based number of the first (maybe partial) line in `tail`.
    tail_first_line: u64,
    /// Newlines in `tail[..counted_to]` (the rest is counted when needed:
    /// while the output is small, at a cut, for a snapshot).
    tail_newlines: u64,
    counted_to: usize,
    /// The first lines of the output, taken when the tail is first cut.
    head: Option<Head>,
    /// Signal lines of the stretch between the head and the tail buffer.
    signals: SignalLines,
    total_raw_bytes: u64,
    total_decoded_bytes: u64,
    /// Bytes after the last newline.
    open_line_bytes: u64,
    /// Bytes of the last completed line.
    last_line_bytes: u64,
    spill: Spill,
    open_log: OpenLog,
}

/// What the model is shown of the output at one moment.
#[derive(Debug)]
pub(crate) struct Snapshot {
    /// The shown text (the whole output when not truncated), lines clipped.
    pub(crate) content: String,
    /// Truncation counters over the whole stream.
    pub(crate) truncation: Truncation,
    /// Some shown lines were clipped to [`MAX_LINE_CHARS`].
    pub(crate) lines_clipped: bool,
    /// Bytes of the last line of the output.
    pub(crate) last_line_bytes: u64,
    /// Where the whole raw output is, when it was saved.
    pub(crate) full_output_path: Option<PathBuf>,
    /// Why it could not be saved, when that failed.
    pub(crate) spill_error: Option<String>,
    /// The omitted middle (first and last line number) when head and tail are shown.
    pub(crate) omitted: Option<(u64, u64)>,
    /// Line numbers of the signal lines promoted into the marker.
    pub(crate) signal_lines: Vec<u64>,
    /// Lines shown before the marker (0 when only the tail is shown).
    pub(crate) head_lines: u64,
}

/// The first whole lines of the output.
#[derive(Clone, Debug)]
struct Head {
    text: String,
    lines: u64,
}

impl Head {
    /// The first whole lines of `text` (which starts at line 1) within the head limits.
    fn of(text: &str) -> Head {
        let mut end = 0;
        let mut lines = 0;
        for newline in memchr::memchr_iter(b'\n', text.as_bytes()) {
            if newline + 1 > HEAD_BYTES || lines as usize == HEAD_LINES {
                break;
            }
            end = newline + 1;
            lines += 1;
        }
        Head {
            text: text.get(..end).unwrap_or_default().to_owned(),
            lines,
        }
    }
}

impl Snapshot {
    /// Whether anything of the output is not shown as printed.
    pub(crate) fn is_cut(&self) -> bool {
        self.truncation.truncated || self.lines_clipped
    }

    /// The bracketed note that says what was cut and where the rest is, if anything was cut.
    pub(crate) fn notice(&self) -> Option<String> {
        if !self.is_cut() {
            return None;
        }
        let t = &self.truncation;
        let mut notice = String::from("[");
        if t.truncated {
            let end = t.total_lines;
            let start = (end + 1).saturating_sub(t.output_lines);
            if let Some((_, last_omitted)) = self.omitted {
                notice.push_str(&messages::showing_head_and_tail(
                    self.head_lines,
                    last_omitted + 1,
                    end,
                    t.total_lines,
                ));
            } else if t.last_line_partial {
                notice.push_str(&messages::showing_end_of_line(
                    &format_size(t.output_bytes as u64),
                    end,
                    &format_size(self.last_line_bytes),
                ));
            } else if t.truncated_by == Some(TruncatedBy::Lines) {
                notice.push_str(&messages::showing_lines(start, end, t.total_lines));
            } else {
                notice.push_str(&messages::showing_lines_limit(
                    start,
                    end,
                    t.total_lines,
                    &format_size(t.max_bytes as u64),
                ));
            }
        }
        if self.lines_clipped {
            if notice.len() > 1 {
                notice.push(' ');
            }
            notice.push_str(&messages::lines_clipped(MAX_LINE_CHARS));
        }
        match (&self.full_output_path, &self.spill_error) {
            (Some(path), _) => {
                notice.push_str(&messages::full_output(path.display()));
            }
            (None, Some(error)) => {
                notice.push_str(&messages::full_output_failed(error));
            }
            (None, None) => {}
        }
        notice.push(']');
        Some(notice)
    }
}

impl OutputAccumulator {
    pub(crate) fn new(open_log: OpenLog) -> OutputAccumulator {
        OutputAccumulator {
            decoder: Utf8Decoder::default(),
            tail: String::new(),
            tail_cut_mid_line: false,
            tail_first_line: 1,
            tail_newlines: 0,
            counted_to: 0,
            head: None,
            signals: SignalLines::default(),
            total_raw_bytes: 0,
            total_decoded_bytes: 0,
            open_line_bytes: 0,
            last_line_bytes: 0,
            spill: Spill::Buffered(Vec::new()),
            open_log,
        }
    }

    /// Adds a raw chunk (stdout and stderr interleaved in arrival order).
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.total_raw_bytes += bytes.len() as u64;
        self.write_raw(bytes);
        let start = self.tail.len();
        self.decoder.decode(bytes, &mut self.tail);
        self.count(start);
        if matches!(self.spill, Spill::Buffered(_)) && self.over_limits() {
            self.open_spill();
        }
    }

    /// Ends the stream (an incomplete character at the end becomes U+FFFD).
    pub(crate) fn finish(&mut self) {
        let start = self.tail.len();
        self.decoder.finish(&mut self.tail);
        self.count(start);
    }

    fn write_raw(&mut self, bytes: &[u8]) {
        match &mut self.spill {
            Spill::Buffered(buffer) => buffer.extend_from_slice(bytes),
            Spill::Open(log) => {
                if let Err(error) = log.write_all(bytes) {
                    self.spill = Spill::Failed(spill_error(error));
                }
            }
            Spill::Failed(_) => {}
        }
    }

    /// Updates the counters with the text decoded at `tail[start..]`, then bounds the tail.
    /// Each byte's newlines are counted once: while the output is still
    /// under the limits, as it arrives; after that, by the signal scan of the
    /// part a cut removes, or for a snapshot (see [`Self::total_lines`]).
    fn count(&mut self, start: usize) {
        let text = self.tail.get(start..).unwrap_or_default().as_bytes();
        self.total_decoded_bytes += text.len() as u64;
        match memchr::memrchr(b'\n', text) {
            Some(last) => {
                let before = text.get(..last).unwrap_or_default();
                self.last_line_bytes = match memchr::memrchr(b'\n', before) {
                    Some(previous) => (last - previous - 1) as u64,
                    None => self.open_line_bytes + last as u64,
                };
                self.open_line_bytes = (text.len() - last - 1) as u64;
            }
            None => self.open_line_bytes += text.len() as u64,
        }
        if matches!(self.spill, Spill::Buffered(_)) {
            self.count_tail();
        }
        if self.tail.len() > CUT_AT {
            // Cut after a newline where there is one in the second half of
            // what may go (a signal word is never split by a cut), else
            // anywhere (one huge line).
            let limit = self.tail.len() - KEEP;
            let floor = limit / 2;
            let mut cut = match memchr::memrchr(
                b'\n',
                self.tail.as_bytes().get(floor..limit).unwrap_or_default(),
            ) {
                Some(newline) => floor + newline + 1,
                None => limit,
            };
            while !self.tail.is_char_boundary(cut) {
                cut += 1;
            }
            if self.head.is_none() && self.tail_first_line == 1 && !self.tail_cut_mid_line {
                self.head = Some(Head::of(&self.tail));
            }
            let head_lines = self.head.as_ref().map_or(0, |head| head.lines);
            let removed_newlines = self.signals.offer_text(
                self.tail.get(..cut).unwrap_or_default(),
                self.tail_first_line,
                head_lines,
            );
            if self.counted_to >= cut {
                self.tail_newlines -= removed_newlines;
                self.counted_to -= cut;
            } else {
                self.tail_newlines = 0;
                self.counted_to = 0;
            }
            self.tail_first_line += removed_newlines;
            self.tail_cut_mid_line = self.tail.as_bytes().get(cut.wrapping_sub(1)) != Some(&b'\n');
            self.tail.replace_range(..cut, "");
        }
    }

    /// Counts the newlines of the tail not counted yet.
    fn count_tail(&mut self) {
        let fresh = self
            .tail
            .as_bytes()
            .get(self.counted_to..)
            .unwrap_or_default();
        self.tail_newlines += memchr::memchr_iter(b'\n', fresh).count() as u64;
        self.counted_to = self.tail.len();
    }

    /// Lines so far (a last line without a newline counts).
    fn total_lines(&mut self) -> u64 {
        self.count_tail();
        let completed = self.tail_first_line - 1 + self.tail_newlines;
        completed + u64::from(self.open_line_bytes > 0)
    }

    fn over_limits(&mut self) -> bool {
        let max_bytes = DEFAULT_MAX_BYTES as u64;
        self.total_raw_bytes > max_bytes
            || self.total_decoded_bytes > max_bytes
            || self.total_lines() > DEFAULT_MAX_LINES as u64
    }

    /// Opens the full-output file and replays what was buffered.
    fn open_spill(&mut self) {
        let Spill::Buffered(buffer) = &mut self.spill else {
            return;
        };
        let buffered = std::mem::take(buffer);
        self.spill = match (self.open_log)() {
            Ok(mut log) => match log.write_all(&buffered) {
                Ok(()) => Spill::Open(log),
                Err(error) => Spill::Failed(spill_error(error)),
            },
            Err(error) => Spill::Failed(spill_error(error)),
        };
    }

    /// What the model would be shown now. With `persist`, output that is cut
    /// is saved to the full-output file even when it stayed under the limits
    /// (a clipped long line).
    pub(crate) fn snapshot(&mut self, persist: bool) -> Snapshot {
        let over_lines = self.total_lines() > DEFAULT_MAX_LINES as u64;
        let over_bytes = self.total_decoded_bytes > DEFAULT_MAX_BYTES as u64;
        if (over_lines || over_bytes)
            && let Some(snapshot) = self.head_and_tail(persist)
        {
            return snapshot;
        }
        let mut text = self.tail.as_str();
        if self.tail_cut_mid_line
            && let Some(newline) = memchr::memchr(b'\n', text.as_bytes())
        {
            text = text.get(newline + 1..).unwrap_or_default();
        }
        let mut truncation = truncate_tail(text, TruncationLimits::default());
        truncation.truncated = over_lines || over_bytes;
        if truncation.truncated && truncation.truncated_by.is_none() {
            truncation.truncated_by = Some(if over_bytes {
                TruncatedBy::Bytes
            } else {
                TruncatedBy::Lines
            });
        }
        truncation.total_lines = usize::try_from(self.total_lines()).unwrap_or(usize::MAX);
        truncation.total_bytes = usize::try_from(self.total_decoded_bytes).unwrap_or(usize::MAX);
        let (content, lines_clipped) =
            clip_lines(&truncation.content, truncation.last_line_partial);
        truncation.output_bytes = content.len();
        let cut = truncation.truncated || lines_clipped;
        if persist && cut {
            self.open_spill();
        }
        let (full_output_path, spill_error) = match &self.spill {
            Spill::Open(log) if cut => (Some(log.path().to_path_buf()), None),
            Spill::Failed(error) if cut => (None, Some(error.clone())),
            _ => (None, None),
        };
        Snapshot {
            content,
            truncation,
            lines_clipped,
            last_line_bytes: if self.open_line_bytes > 0 {
                self.open_line_bytes
            } else {
                self.last_line_bytes
            },
            full_output_path,
            spill_error,
            omitted: None,
            signal_lines: Vec::new(),
            head_lines: 0,
        }
    }

    /// Head, marker (with the signal lines of the omitted middle) and tail,
    /// within the limits; `None` when there is no middle to omit (one huge
    /// line, or a head that covers what the tail would show).
    fn head_and_tail(&mut self, persist: bool) -> Option<Snapshot> {
        let head = match &self.head {
            Some(head) => head.clone(),
            None if self.tail_first_line == 1 && !self.tail_cut_mid_line => Head::of(&self.tail),
            None => return None,
        };
        if head.lines == 0 {
            return None;
        }
        if persist {
            self.open_spill();
        }
        let (full_output_path, spill_error) = match &self.spill {
            Spill::Open(log) => (Some(log.path().to_path_buf()), None),
            Spill::Failed(error) => (None, Some(error.clone())),
            Spill::Buffered(_) => (None, None),
        };
        let path = full_output_path
            .as_ref()
            .map(|path| path.display().to_string());
        let total_lines = self.total_lines();
        // The tail buffer's complete lines that follow the head.
        let mut text = self.tail.as_str();
        let mut first_line = self.tail_first_line;
        if self.tail_cut_mid_line {
            let newline = memchr::memchr(b'\n', text.as_bytes())?;
            text = text.get(newline + 1..).unwrap_or_default();
            first_line += 1;
        }
        while first_line <= head.lines {
            let newline = memchr::memchr(b'\n', text.as_bytes())?;
            text = text.get(newline + 1..).unwrap_or_default();
            first_line += 1;
        }
        // First with room for the marker as it is likely to be, then, if the
        // whole does not fit, with room for the largest marker.
        let mut built = None;
        for reserve in [
            self.signals.lines().len() * (pith_text::SIGNAL_LINE_CHARS + 16) + 1024,
            MARKER_BYTES,
        ] {
            let limits = TruncationLimits {
                max_lines: DEFAULT_MAX_LINES - head.lines as usize - MARKER_LINES,
                max_bytes: DEFAULT_MAX_BYTES
                    .saturating_sub(head.text.len() + reserve)
                    .max(1),
            };
            let tail = truncate_tail(text, limits);
            if tail.last_line_partial || tail.output_lines == 0 {
                return None;
            }
            let tail_first = total_lines + 1 - tail.output_lines as u64;
            if tail_first <= head.lines + 1 {
                return None;
            }
            // Lines of the buffer between the head and the shown tail are omitted too.
            let mut signals = self.signals.clone();
            let skipped = (tail_first - first_line) as usize;
            if skipped > 0 {
                let cut = text
                    .match_indices('\n')
                    .nth(skipped - 1)
                    .map_or(text.len(), |(at, _)| at + 1);
                signals.offer_text(text.get(..cut).unwrap_or_default(), first_line, head.lines);
            }
            let omitted = (head.lines + 1, tail_first - 1);
            let marker = omission_marker(omitted.0, omitted.1, path.as_deref(), &signals);
            let fits = head.text.len() + marker.len() + 1 + tail.content.len() <= DEFAULT_MAX_BYTES;
            built = Some((tail, signals, omitted, marker));
            if fits {
                break;
            }
        }
        let (tail, signals, omitted, marker) = built?;
        let (head_text, head_clipped) = clip_lines(&head.text, false);
        let (tail_text, tail_clipped) = clip_lines(&tail.content, false);
        let content = format!("{head_text}{marker}\n{tail_text}");
        let over_lines = total_lines > DEFAULT_MAX_LINES as u64;
        let mut truncation = tail;
        truncation.truncated = true;
        truncation.truncated_by = Some(truncation.truncated_by.unwrap_or(if over_lines {
            TruncatedBy::Lines
        } else {
            TruncatedBy::Bytes
        }));
        truncation.total_lines = usize::try_from(total_lines).unwrap_or(usize::MAX);
        truncation.total_bytes = usize::try_from(self.total_decoded_bytes).unwrap_or(usize::MAX);
        truncation.output_lines = pith_text::count_lines(&content);
        truncation.output_bytes = content.len();
        truncation.max_lines = DEFAULT_MAX_LINES;
        truncation.max_bytes = DEFAULT_MAX_BYTES;
        Some(Snapshot {
            content,
            truncation,
            lines_clipped: head_clipped || tail_clipped,
            last_line_bytes: if self.open_line_bytes > 0 {
                self.open_line_bytes
            } else {
                self.last_line_bytes
            },
            full_output_path,
            spill_error,
            omitted: Some(omitted),
            signal_lines: signals.lines().iter().map(|line| line.number).collect(),
            head_lines: head.lines,
        })
    }
}

/// The message of a failure to save the full output.
fn spill_error(error: ExecError) -> String {
    match error {
        ExecError::Io(message) => message,
        other => other.to_string(),
    }
}

/// Clips over-long lines to [`MAX_LINE_CHARS`]. The fragment of a partial
/// last line keeps its end (the latest output); whole lines keep their start.
fn clip_lines(content: &str, partial_line: bool) -> (String, bool) {
    if partial_line {
        let chars = content.chars().count();
        let skip = chars.saturating_sub(MAX_LINE_CHARS);
        let start = content
            .char_indices()
            .nth(skip)
            .map_or(content.len(), |(at, _)| at);
        return (content.get(start..).unwrap_or_default().to_owned(), false);
    }
    // Cheap exit: no line can be longer than the whole text.
    if content.len() <= MAX_LINE_CHARS {
        return (content.to_owned(), false);
    }
    let mut clipped = false;
    let mut out = String::with_capacity(content.len());
    for (index, line) in content.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let (line, was_clipped) = pith_text::clip_line(line, MAX_LINE_CHARS);
        clipped |= was_clipped;
        out.push_str(&line);
    }
    (out, clipped)
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
