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
//!
//! # Why two buffer sizes
//!
//! Files are streamed through the searcher's rolling buffer, never read
//! whole, but the buffer must hold a whole line (plus its before-context), so
//! one giant line would be held whole. Each worker's searcher therefore has a
//! heap limit of [`WORKER_HEAP_LIMIT`] (1 MiB); a file that overflows it is
//! searched again from the start with the one shared searcher whose limit is
//! [`GrepRequest::MAX_LINE_BYTES`] (16 MiB), taken under a lock. A file that
//! overflows that too is skipped (none of its rows kept, not even the matches
//! before the long line: the output reports it as not searched) and listed in
//! [`GrepOutput::oversized`]. Memory is thus at most one 1 MiB buffer per
//! worker (12 at most, each with a 64 KiB buffer for a file's first bytes) plus one
//! 16 MiB buffer, whatever the thread count,
//! plus the rows kept, whose texts are clipped to [`GrepLine::MAX_TEXT_BYTES`].
//! (A buffer per worker of 16 MiB would cost 192 MiB on 12 cores, and a
//! grown buffer stays grown for the worker's next files.)

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use grep::regex::RegexMatcher;
use grep::searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use super::glob::PathGlob;
use super::walk::{Entry, OrderedWalk, Select};
use super::{Start, Stop, relative_display};
use crate::matcher::build_matcher;
use crate::{GrepLine, GrepOutput, GrepRequest, SearchError};

/// Bytes of each file read before its search starts (see [`search_file`]).
const HEAD_BYTES: usize = 64 * 1024;

/// How many files per worker may be searched ahead of the ordered output.
const WINDOW_PER_THREAD: usize = 64;

/// The heap limit of each worker's searcher; files with longer lines go to
/// the shared searcher limited to [`GrepRequest::MAX_LINE_BYTES`].
const WORKER_HEAP_LIMIT: usize = 1024 * 1024;

/// Searches with `threads` workers (the count the call's memory was reserved for).
pub(super) fn grep(
    request: &GrepRequest,
    start: Start,
    threads: usize,
    cancel: &Stop,
) -> Result<GrepOutput, SearchError> {
    let matcher = build_matcher(request)?;
    let glob = request.glob.as_deref().map(PathGlob::new).transpose()?;
    let limit = request.limit.max(1);
    let output = match start {
        Start::File(file) => search_single_file(request, &file, &matcher, limit, cancel)?,
        Start::Dir(start) => {
            let select = |relative: &[u8], _: bool, is_file: bool| {
                is_file
                    && glob
                        .as_ref()
                        .is_none_or(|glob| glob.is_match(relative, false))
            };
            let select: &Select<'_> = &select;
            let engine = Engine {
                request,
                matcher: &matcher,
                cancel,
                limit,
                walk: OrderedWalk::new(&request.root, start, select, cancel),
                state: Mutex::new(State {
                    pending: BTreeMap::new(),
                    consumed: 0,
                    output: GrepOutput::default(),
                    waiting: 0,
                }),
                window_open: Condvar::new(),
                window: WINDOW_PER_THREAD * threads,
                cutoff: AtomicUsize::new(usize::MAX),
                large: Mutex::new(build_searcher(
                    request.context,
                    limit,
                    GrepRequest::MAX_LINE_BYTES,
                )),
            };
            engine.run(threads)
        }
    };
    if cancel.is_set() {
        return Err(SearchError::Cancelled);
    }
    Ok(output)
}

/// A searcher whose rolling buffer never grows past `heap_limit` bytes: a
/// line longer than that fails the search of its file.
fn build_searcher(context: usize, limit: usize, heap_limit: usize) -> Searcher {
    SearcherBuilder::new()
        .heap_limit(Some(heap_limit))
        // The reader ends the file at its first NUL (see `StoppableReader`): the
        // searcher's own quit mode drops the matches in the buffer holding it.
        .binary_detection(BinaryDetection::none())
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
    file: &std::fs::File,
    matcher: &RegexMatcher,
    limit: usize,
    cancel: &Stop,
) -> Result<GrepOutput, SearchError> {
    let mut searcher = build_searcher(request.context, limit, GrepRequest::MAX_LINE_BYTES);
    let stop = || cancel.is_set();
    let outcome = search_file(&mut searcher, matcher, file, &mut Vec::new(), &stop);
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
    /// The file has a line longer than the searcher's heap limit: it was not
    /// searched to the end, and `rows` is empty.
    oversized: bool,
    /// Offset of the first NUL byte, where the search of the file ended.
    binary_offset: Option<u64>,
}

#[derive(Debug)]
struct Row {
    line_number: u64,
    text: String,
    is_match: bool,
}

/// Searches one file; whatever was found before a read error or a stop is
/// kept (a file that stops being readable mid-way still shows its first
/// matches). A line over the searcher's heap limit drops the rows and marks
/// the outcome `oversized`.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: &File,
    head: &mut Vec<u8>,
    stop: &dyn Fn() -> bool,
) -> FileOutcome {
    let mut sink = RowSink {
        outcome: FileOutcome::default(),
        stop,
    };
    // The file's first bytes are read into `head` (one read: most files are
    // smaller than it), then searched from there followed by the rest of the
    // file: the byte-order mark is checked on them without a read of its own.
    head.resize(HEAD_BYTES, 0);
    let mut reading = file;
    let read = if stop() {
        0
    } else {
        reading.read(head).unwrap_or(0)
    };
    let head = &head[..read];
    // A UTF-16 file (with its BOM) is searched as the UTF-8 it decodes to, as ripgrep
    // does; its NULs would otherwise end it at once.
    let mut decoded;
    let mut plain = head.chain(file);
    let inner: &mut dyn Read = if matches!(head, [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..]) {
        decoded = encoding_rs_io::DecodeReaderBytesBuilder::new().build(head.chain(file));
        &mut decoded
    } else {
        &mut plain
    };
    let mut reader = StoppableReader {
        inner,
        stop,
        failed: false,
        position: 0,
        binary_offset: None,
    };
    let searched = searcher.search_reader(matcher, &mut reader, &mut sink);
    // The sink never fails, so an error the reader did not raise is the
    // searcher's own, which for a reader search is only the heap limit.
    if searched.is_err() && !reader.failed {
        return FileOutcome {
            oversized: true,
            ..FileOutcome::default()
        };
    }
    sink.outcome.binary_offset = reader.binary_offset;
    sink.outcome
}

/// A reader that fails as soon as the search must stop, so a long file with
/// no matches (where the sink is never called) is abandoned promptly; it
/// records whether it failed, to tell its errors from the searcher's. It ends
/// the file before the line holding the first NUL byte, so the lines before it
/// are still searched (as ripgrep does) and nothing binary is. (A line begun in
/// an earlier read keeps the part already handed over.)
struct StoppableReader<'a> {
    inner: &'a mut dyn Read,
    stop: &'a dyn Fn() -> bool,
    failed: bool,
    /// Bytes handed to the searcher so far.
    position: u64,
    binary_offset: Option<u64>,
}

impl Read for StoppableReader<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.binary_offset.is_some() {
            return Ok(0);
        }
        if (self.stop)() {
            self.failed = true;
            return Err(io::Error::other("search stopped"));
        }
        let read = self.inner.read(buffer);
        self.failed |= read.is_err();
        let mut read = read?;
        if let Some(nul) = memchr::memchr(0, &buffer[..read]) {
            self.binary_offset = Some(self.position + nul as u64);
            // The line holding the NUL is binary: hand over only the lines before it.
            read = memchr::memrchr(b'\n', &buffer[..nul]).map_or(0, |newline| newline + 1);
        }
        self.position += read as u64;
        Ok(read)
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

/// The line without its terminator or any `\r`, clipped to
/// [`GrepLine::MAX_TEXT_BYTES`] and lossily decoded.
fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = GrepLine::clip_text(bytes);
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
    if outcome.oversized {
        if output.oversized.len() < GrepRequest::OVERSIZED_LISTED {
            output.oversized.push(path);
        }
        output.oversized_count += 1;
        return;
    }
    let needed = limit.saturating_sub(output.match_count);
    if outcome.matches >= needed {
        keep_first_matches(&mut outcome.rows, needed, context);
        outcome.matches = needed;
        output.limit_reached = true;
    }
    output.match_count += outcome.matches;
    if let Some(offset) = outcome.binary_offset
        && outcome.matches > 0
    {
        output.push_binary(path.clone(), offset);
    }
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
    /// The one searcher allowed a buffer of [`GrepRequest::MAX_LINE_BYTES`],
    /// for files whose lines overflow a worker's.
    large: Mutex<Searcher>,
}

impl Engine<'_> {
    fn run(&self, threads: usize) -> GrepOutput {
        std::thread::scope(|scope| {
            // Where a thread is refused (a `pids` limit) fewer workers search.
            for _ in 1..threads {
                let _ = std::thread::Builder::new().spawn_scoped(scope, || self.work());
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
        let mut searcher = build_searcher(self.request.context, self.limit, WORKER_HEAP_LIMIT);
        // Each worker its own matcher, as ripgrep does: no shared cache pool.
        let matcher = self.matcher.clone();
        let mut searched: Option<Found> = None;
        let mut head = Vec::new();
        while let Some((index, entry)) = self.hand_in_and_claim(searched.take()) {
            let outcome = match super::open_regular_at(&entry.dir, &entry.path) {
                Ok(file) => self.search(index, &file, &mut searcher, &matcher, &mut head),
                // Unreadable files are skipped, as ripgrep does (it warns), and
                // so is a special file swapped in since the walk listed it.
                Err(_) => FileOutcome::default(),
            };
            searched = Some((index, entry.path, outcome));
        }
    }

    /// Searches file `index` with the worker's searcher, then, if a line
    /// overflowed it, again from the start with the large one.
    fn search(
        &self,
        index: usize,
        file: &File,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        head: &mut Vec<u8>,
    ) -> FileOutcome {
        let stop = || self.finished(index);
        let outcome = search_file(searcher, matcher, file, head, &stop);
        if !outcome.oversized {
            return outcome;
        }
        let mut large = self.large.lock().unwrap_or_else(|e| e.into_inner());
        if stop() {
            return FileOutcome::default();
        }
        let mut file = file;
        if file.seek(SeekFrom::Start(0)).is_err() {
            return FileOutcome::default();
        }
        search_file(&mut large, matcher, file, head, &stop)
    }

    /// Takes the next file from the walk, hands in the last searched one,
    /// then waits until the new one is inside the window; `None` when the
    /// search is over.
    fn hand_in_and_claim(&self, searched: Option<Found>) -> Option<(usize, Entry)> {
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
                return Some((index, entry));
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
            if !outcome.rows.is_empty() || outcome.oversized {
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
#[path = "grep_tests.rs"]
mod tests;
