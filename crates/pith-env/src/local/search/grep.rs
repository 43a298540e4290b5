//! `grep`: content search, deterministic and stopping at the limit.
//!
//! # Why an ordered walk feeding a bounded lookahead
//!
//! The output must be the first `limit` matching lines in (path, line) order,
//! and the search must stop reading as soon as they are known. A parallel
//! walk visits files in no fixed order, so it can give neither. Instead:
//!
//! 1. The [ordered walk](super::walk) yields the files to search in path
//!    order and numbers them; N worker threads take files from it (and list
//!    directories for it when it has none ready), so neither the walk nor
//!    the search is sequential, and searching starts with the first file
//!    instead of after a whole-tree walk.
//! 2. Workers search their files in parallel, each file capped at `limit`
//!    matches (it can never contribute more). A worker hands in its file's
//!    rows, under one lock, when it has claimed the next file; rows
//!    that complete the prefix in file order go straight into the output.
//!    (No collector thread and no channel: one short lock per file in the
//!    walk and one here, and no wake-up
//!    unless a worker waits for the window, because the futex calls of a
//!    channel plus a condvar per file cost more than the searching in
//!    profiles of trees of small files.)
//! 3. Workers may run at most a window of files ahead of the first file not
//!    yet put in order, which bounds both the wasted work after the limit and
//!    the rows held out of order.
//! 4. When the rows in order reach `limit` matches at file `k`, files after
//!    `k` are abandoned mid-read (the reader they search returns an error as
//!    soon as it sees the cutoff) and no file is claimed any more.
//!
//! Context lines come from the searcher (before/after context), which emits
//! each line once, so the windows of nearby matches are merged for free.
//! Memory is bounded by the searcher's rolling buffer per worker plus the rows
//! kept; files are streamed, never read whole.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use grep::regex::{RegexMatcher, RegexMatcherBuilder};
use grep::searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use super::glob::PathGlob;
use super::walk::{OrderedWalk, Select};
use super::{RootKind, Stop, relative_display, root_kind, thread_count};
use crate::{FsError, GrepLine, GrepOutput, GrepRequest, SearchError};

/// How many files per worker may be searched ahead of the ordered output.
const WINDOW_PER_THREAD: usize = 64;

pub(super) fn grep(request: &GrepRequest, cancel: &Stop) -> Result<GrepOutput, SearchError> {
    let matcher = build_matcher(request)?;
    let glob = request.glob.as_deref().map(PathGlob::new).transpose()?;
    let limit = request.limit.max(1);
    let output = match root_kind(&request.root)? {
        RootKind::File => search_single_file(request, &matcher, limit, cancel)?,
        RootKind::Directory => {
            let select = |relative: &[u8], _: bool, is_file: bool| {
                is_file
                    && glob
                        .as_ref()
                        .is_none_or(|glob| glob.is_match(relative, false))
            };
            let select: &Select<'_> = &select;
            let threads = thread_count();
            let engine = Engine {
                request,
                matcher: &matcher,
                cancel,
                limit,
                walk: OrderedWalk::new(&request.root, select, cancel),
                state: Mutex::new(State {
                    pending: BTreeMap::new(),
                    consumed: 0,
                    output: GrepOutput::default(),
                    waiting: 0,
                }),
                window_open: Condvar::new(),
                window: WINDOW_PER_THREAD * threads,
                cutoff: AtomicUsize::new(usize::MAX),
            };
            engine.run(threads)
        }
    };
    if cancel.is_set() {
        return Err(SearchError::Cancelled);
    }
    Ok(output)
}

/// ripgrep's default matcher: lines end at `\n`, which enables its fast line
/// search; the pattern is always a pattern, never a flag. (`rg --crlf` mode,
/// where `$` also matches before `\r\n`, breaks `$` on `\n` lines in grep-regex
/// 0.1.14, so like rg's default, `x$` does not match `x\r\n`.)
fn build_matcher(request: &GrepRequest) -> Result<RegexMatcher, SearchError> {
    RegexMatcherBuilder::new()
        .case_insensitive(request.ignore_case)
        .fixed_strings(request.literal)
        .line_terminator(Some(b'\n'))
        .build(&request.pattern)
        .map_err(|error| SearchError::InvalidPattern(short_regex_error(&error.to_string())))
}

/// The regex crate's reason without the pattern echo and caret lines.
fn short_regex_error(message: &str) -> String {
    let reason = message
        .lines()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .or_else(|| message.lines().map(str::trim).find(|line| !line.is_empty()))
        .unwrap_or("invalid pattern");
    let mut reason = reason.to_owned();
    if let Some((cut, _)) = reason.char_indices().nth(200) {
        reason.truncate(cut);
    }
    reason
}

fn build_searcher(context: usize, limit: usize) -> Searcher {
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(true)
        .before_context(context)
        .after_context(context)
        .max_matches(Some(u64::try_from(limit).unwrap_or(u64::MAX)))
        .build()
}

/// A file named as the root is searched whatever the glob and the ignore
/// rules say, as ripgrep does with an explicit path.
fn search_single_file(
    request: &GrepRequest,
    matcher: &RegexMatcher,
    limit: usize,
    cancel: &Stop,
) -> Result<GrepOutput, SearchError> {
    let file = File::open(&request.root)
        .map_err(|error| SearchError::Fs(FsError::from_io(error, &request.root)))?;
    let mut searcher = build_searcher(request.context, limit);
    let stop = || cancel.is_set();
    let outcome = search_file(&mut searcher, matcher, file, &stop);
    let name = request
        .root
        .file_name()
        .map_or_else(
            || request.root.to_string_lossy(),
            |name| name.to_string_lossy(),
        )
        .into_owned();
    let mut output = GrepOutput::default();
    append(&mut output, name, outcome, limit, request.context);
    Ok(output)
}

/// The rows one file contributed.
#[derive(Debug, Default)]
struct FileOutcome {
    rows: Vec<Row>,
    matches: usize,
}

#[derive(Debug)]
struct Row {
    line_number: u64,
    text: String,
    is_match: bool,
}

/// Searches one file; whatever was found before an error or a stop is kept
/// (a file that stops being readable mid-way still shows its first matches).
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: File,
    stop: &dyn Fn() -> bool,
) -> FileOutcome {
    let mut sink = RowSink {
        outcome: FileOutcome::default(),
        stop,
    };
    let reader = StoppableReader { inner: file, stop };
    // An error here is a read failure or a stop; the rows so far stand.
    let _ = searcher.search_reader(matcher, reader, &mut sink);
    sink.outcome
}

/// A reader that fails as soon as the search must stop, so a long file with
/// no matches (where the sink is never called) is abandoned promptly.
struct StoppableReader<'a> {
    inner: File,
    stop: &'a dyn Fn() -> bool,
}

impl Read for StoppableReader<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if (self.stop)() {
            return Err(io::Error::other("search stopped"));
        }
        self.inner.read(buffer)
    }
}

struct RowSink<'a> {
    outcome: FileOutcome,
    stop: &'a dyn Fn() -> bool,
}

impl RowSink<'_> {
    fn push(&mut self, line_number: u64, bytes: &[u8], is_match: bool) {
        self.outcome.rows.push(Row {
            line_number,
            text: line_text(bytes),
            is_match,
        });
    }
}

impl Sink for RowSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if (self.stop)() {
            return Ok(false);
        }
        let first = found.line_number().unwrap_or(0);
        for (offset, line) in (0u64..).zip(found.lines()) {
            self.push(first + offset, line, true);
            self.outcome.matches += 1;
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        if (self.stop)() {
            return Ok(false);
        }
        self.push(context.line_number().unwrap_or(0), context.bytes(), false);
        Ok(true)
    }
}

/// The line without its terminator or any `\r`, lossily decoded.
fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    if text.contains('\r') {
        text.replace('\r', "")
    } else {
        text.into_owned()
    }
}

/// Adds one file's rows to `output`, keeping only the matches still needed
/// (and the after-context of the last one kept).
fn append(
    output: &mut GrepOutput,
    path: String,
    mut outcome: FileOutcome,
    limit: usize,
    context: usize,
) {
    let needed = limit.saturating_sub(output.match_count);
    if outcome.matches >= needed {
        keep_first_matches(&mut outcome.rows, needed, context);
        outcome.matches = needed;
        output.limit_reached = true;
    }
    output.match_count += outcome.matches;
    output
        .lines
        .extend(outcome.rows.into_iter().map(|row| GrepLine {
            path: path.clone(),
            line_number: row.line_number,
            text: row.text,
            is_match: row.is_match,
        }));
}

fn keep_first_matches(rows: &mut Vec<Row>, needed: usize, context: usize) {
    let mut seen = 0;
    let mut last_match_line = 0;
    let mut cut = rows.len();
    for (index, row) in rows.iter().enumerate() {
        if row.is_match {
            if seen == needed {
                cut = index;
                break;
            }
            seen += 1;
            last_match_line = row.line_number;
        }
    }
    rows.truncate(cut);
    let last_context_line = last_match_line.saturating_add(context as u64);
    while rows
        .last()
        .is_some_and(|row| !row.is_match && row.line_number > last_context_line)
    {
        rows.pop();
    }
}

/// A searched file: its number in path order, its path and its rows.
type Found = (usize, PathBuf, FileOutcome);

/// What the workers share under one lock.
struct State {
    /// Searched files that are not yet next in order.
    pending: BTreeMap<usize, (PathBuf, FileOutcome)>,
    /// Files `0..consumed` are in `output`.
    consumed: usize,
    output: GrepOutput,
    /// Workers waiting for the window to move.
    waiting: usize,
}

struct Engine<'a> {
    request: &'a GrepRequest,
    matcher: &'a RegexMatcher,
    cancel: &'a Stop,
    limit: usize,
    walk: OrderedWalk<'a>,
    state: Mutex<State>,
    /// Signalled when `consumed` advances or the search ends.
    window_open: Condvar,
    window: usize,
    /// The file at which the limit was reached; later files are abandoned.
    cutoff: AtomicUsize,
}

impl Engine<'_> {
    fn run(&self, threads: usize) -> GrepOutput {
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(|| self.work());
            }
            // The calling thread is a worker too.
            self.work();
        });
        std::mem::take(&mut self.lock().output)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn finished(&self, index: usize) -> bool {
        self.cancel.is_set() || index > self.cutoff.load(Ordering::Acquire)
    }

    fn work(&self) {
        let mut searcher = build_searcher(self.request.context, self.limit);
        // Each worker its own matcher, as ripgrep does: no shared cache pool.
        let matcher = self.matcher.clone();
        let mut searched: Option<Found> = None;
        while let Some((index, path)) = self.hand_in_and_claim(searched.take()) {
            let stop = || self.finished(index);
            let outcome = match File::open(&path) {
                Ok(file) => search_file(&mut searcher, &matcher, file, &stop),
                // Unreadable files are skipped, as ripgrep does (it warns).
                Err(_) => FileOutcome::default(),
            };
            searched = Some((index, path, outcome));
        }
    }

    /// Takes the next file from the walk, hands in the last searched one,
    /// then waits until the new one is inside the window; `None` when the
    /// search is over.
    fn hand_in_and_claim(&self, searched: Option<Found>) -> Option<(usize, PathBuf)> {
        let claimed = if self.finished(0) {
            None
        } else {
            self.walk.next()
        };
        let mut state = self.lock();
        if let Some(found) = searched {
            self.hand_in(&mut state, found);
        }
        let (index, entry) = claimed?;
        loop {
            if self.finished(index) {
                return None;
            }
            if index < state.consumed + self.window {
                return Some((index, entry.path));
            }
            state.waiting += 1;
            state = self
                .window_open
                .wait_timeout(state, Duration::from_millis(50))
                .map_or_else(|e| e.into_inner().0, |(state, _)| state);
            state.waiting -= 1;
        }
    }

    /// Puts a searched file in order; appends every file now next in order.
    fn hand_in(&self, state: &mut State, (index, path, outcome): Found) {
        if self.cutoff.load(Ordering::Acquire) != usize::MAX {
            return;
        }
        if index != state.consumed {
            state.pending.insert(index, (path, outcome));
            return;
        }
        let mut next = Some((path, outcome));
        while let Some((path, outcome)) = next {
            if !outcome.rows.is_empty() {
                let display = relative_display(&self.request.root, &path);
                append(
                    &mut state.output,
                    display,
                    outcome,
                    self.limit,
                    self.request.context,
                );
            }
            if state.output.limit_reached {
                self.cutoff.store(state.consumed, Ordering::Release);
                self.walk.finish();
                break;
            }
            state.consumed += 1;
            next = state.pending.remove(&state.consumed);
        }
        if state.waiting > 0 {
            self.window_open.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(line_number: u64, is_match: bool) -> Row {
        Row {
            line_number,
            text: String::new(),
            is_match,
        }
    }

    #[test]
    fn keeping_the_first_matches_keeps_only_the_last_ones_after_context() {
        // Matches at 3, 6 and 8 with context 2: 1 2 [3] 4 5 [6] 7 [8] 9 10.
        let mut rows: Vec<Row> = (1..=10).map(|n| row(n, matches!(n, 3 | 6 | 8))).collect();
        keep_first_matches(&mut rows, 1, 2);
        let lines: Vec<u64> = rows.iter().map(|r| r.line_number).collect();
        assert_eq!(lines, [1, 2, 3, 4, 5]);

        let mut rows: Vec<Row> = (1..=10).map(|n| row(n, matches!(n, 3 | 6 | 8))).collect();
        keep_first_matches(&mut rows, 2, 2);
        let lines: Vec<u64> = rows.iter().map(|r| r.line_number).collect();
        assert_eq!(lines, [1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn regex_errors_are_one_short_line() {
        let message = "regex parse error:\n    (abc\n    ^\nerror: unclosed group";
        assert_eq!(short_regex_error(message), "unclosed group");
        assert_eq!(short_regex_error("something odd"), "something odd");
    }

    #[test]
    fn lines_lose_their_terminator_and_carriage_returns() {
        assert_eq!(line_text(b"a\r\n"), "a");
        assert_eq!(line_text(b"a\rb\n"), "ab");
        assert_eq!(line_text(b"\xffx"), "\u{fffd}x");
    }
}
