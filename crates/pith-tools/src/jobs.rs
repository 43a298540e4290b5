//! Background jobs: commands a session started with `background`, `yield` or
//! `tty` that keep running between calls.
//!
//! Each job runs through the exec port in a task of its own (so it is a
//! process tree the adapter tracks, kills on cancel with its escapees, and the
//! watchdog kills if pith dies). What it prints goes to two places: its full
//! log on disk (a `pith-job-<16 hex>.log` full-output file, capped and cleaned
//! up like bash's) and a bounded accumulator of the output not yet read by
//! `jobs output` (head and tail, like bash's result). The session owns the
//! table: dropping the session's last clone cancels every job, which kills
//! its tree.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use pith_env::{
    ExecError, ExecOutcome, ExitStatus, OutputLog, OutputSink, OutputStream, ProcessInput,
    Termination,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::messages::jobs as messages;
use crate::tools::bash::output::{OpenLog, OutputAccumulator, Snapshot};

/// Running jobs a session may hold unless configured otherwise (`--max-jobs`).
pub const DEFAULT_MAX_JOBS: usize = 16;
/// A job's command is clipped to this many characters in lists and notices.
const COMMAND_CHARS: usize = 60;
/// The carry kept between chunks when matching `until` (bytes).
const UNTIL_CARRY: usize = 4096;

/// Called with the one-line notice when a job ends (MCP sends it as a log message).
pub type JobListener = Arc<dyn Fn(&str) + Send + Sync>;

/// How a job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum JobEnd {
    /// It ran to an exit code.
    Exited(i32),
    /// A signal ended it (its own, our kill, a timeout).
    Killed { signal: i32, why: Termination },
    /// It could not run.
    Failed(String),
}

impl JobEnd {
    fn from_outcome(outcome: &Result<ExecOutcome, ExecError>) -> JobEnd {
        match outcome {
            Ok(outcome) => match (outcome.termination, outcome.status) {
                (Termination::Exited, ExitStatus::Code(code)) => JobEnd::Exited(code),
                (why, ExitStatus::Signal(signal)) => JobEnd::Killed { signal, why },
                (why, ExitStatus::Code(_)) => JobEnd::Killed { signal: 9, why },
            },
            Err(error) => JobEnd::Failed(error.to_string()),
        }
    }

    /// `exited with code 1`, `was killed (signal 9)`, ...
    pub(crate) fn describe(&self) -> String {
        match self {
            JobEnd::Exited(code) => messages::exited(*code),
            JobEnd::Killed {
                signal,
                why: Termination::TimedOut,
            } => messages::timed_out(*signal),
            JobEnd::Killed {
                signal,
                why: Termination::Cancelled,
            } => messages::killed(*signal),
            JobEnd::Killed { signal, .. } => messages::killed_by(*signal),
            JobEnd::Failed(message) => messages::failed_to_run(message),
        }
    }

    /// `exited`, `killed` or `failed`.
    pub(crate) fn state(&self) -> &'static str {
        match self {
            JobEnd::Exited(_) => "exited",
            JobEnd::Killed { .. } => "killed",
            JobEnd::Failed(_) => "failed",
        }
    }
}

/// What a job holds between calls.
struct JobState {
    /// Output not read yet by `jobs output` (bounded: head and tail).
    unread: OutputAccumulator,
    /// The full log, while it can be written.
    log: Option<Box<dyn OutputLog>>,
    log_error: Option<String>,
    total_bytes: u64,
    last_output: Instant,
    /// The last byte printed was a newline (or nothing was printed).
    ends_in_newline: bool,
    input: Option<ProcessInput>,
    end: Option<JobEnd>,
    outcome: Option<ExecOutcome>,
    ended_at: Option<Instant>,
    /// The end was already shown in some result (no notice needed).
    reported: bool,
    /// The pattern a `jobs output … until` waits for, and whether it matched.
    until: Option<regex::Regex>,
    until_matched: bool,
    carry: String,
}

/// One background job.
pub(crate) struct Job {
    /// Its id within the session (1, 2, ...).
    pub(crate) id: u32,
    /// The command, clipped for display.
    pub(crate) command: String,
    /// It runs under a pseudo-terminal.
    pub(crate) tty: bool,
    pub(crate) started: Instant,
    started_at: SystemTime,
    log_path: Option<PathBuf>,
    state: Mutex<JobState>,
    /// Bumped on an `until` match and at the end. Not on every output chunk:
    /// a waiter woken per 64 KiB chunk costs the printing job a thread
    /// hand-off and a lock round per chunk (`settle` rereads the time of the
    /// last output on its own timer instead).
    changed: watch::Sender<u64>,
    /// Cancelling it kills the job's tree.
    pub(crate) cancel: CancellationToken,
}

/// A point-in-time view of a job for `jobs list`.
pub(crate) struct JobInfo {
    pub(crate) id: u32,
    pub(crate) command: String,
    pub(crate) tty: bool,
    pub(crate) end: Option<JobEnd>,
    pub(crate) started_at: SystemTime,
    pub(crate) elapsed: Duration,
    pub(crate) bytes: u64,
}

/// What `take_output` hands back.
pub(crate) struct JobOutput {
    pub(crate) snapshot: Snapshot,
    pub(crate) end: Option<JobEnd>,
    pub(crate) elapsed: Duration,
    pub(crate) total_bytes: u64,
    pub(crate) log_path: Option<PathBuf>,
    pub(crate) log_error: Option<String>,
    /// A tty job whose last line has no newline and that has been quiet a moment.
    pub(crate) waiting_for_input: bool,
}

/// A log that discards: the unread accumulator names the job's full log
/// (written separately) instead of spilling a second copy.
struct NamedLog(PathBuf);

impl OutputLog for NamedLog {
    fn path(&self) -> &std::path::Path {
        &self.0
    }

    fn write_all(&mut self, _bytes: &[u8]) -> Result<(), ExecError> {
        Ok(())
    }
}

fn unread_accumulator(log_path: Option<PathBuf>, log_error: Option<String>) -> OutputAccumulator {
    let open: OpenLog = Box::new(move || match (&log_path, &log_error) {
        (Some(path), _) => Ok(Box::new(NamedLog(path.clone())) as Box<dyn OutputLog>),
        (None, Some(error)) => Err(ExecError::Io(error.clone())),
        (None, None) => Err(ExecError::Unsupported),
    });
    OutputAccumulator::new(open)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Job {
    fn state(&self) -> MutexGuard<'_, JobState> {
        lock(&self.state)
    }

    /// A receiver that sees every later change (output, match, end).
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    fn bump(&self) {
        self.changed
            .send_modify(|count| *count = count.wrapping_add(1));
    }

    /// Whether the job has ended.
    pub(crate) fn end(&self) -> Option<JobEnd> {
        self.state().end.clone()
    }

    /// The exec outcome, once it ended (none when it failed to run).
    pub(crate) fn outcome(&self) -> Option<ExecOutcome> {
        self.state().outcome
    }

    /// When it last printed something.
    pub(crate) fn last_output(&self) -> Instant {
        self.state().last_output
    }

    /// Adds output: to the log, the unread accumulator, the `until` matcher.
    fn push(&self, bytes: &[u8]) {
        let mut state = self.state();
        state.total_bytes += bytes.len() as u64;
        state.last_output = Instant::now();
        if let Some(&last) = bytes.last() {
            state.ends_in_newline = last == b'\n';
        }
        if let Some(log) = &mut state.log
            && let Err(error) = log.write_all(bytes)
        {
            state.log = None;
            state.log_error = Some(error.to_string());
        }
        state.unread.push(bytes);
        let mut matched = false;
        if !state.until_matched
            && let Some(until) = state.until.clone()
        {
            let mut text = std::mem::take(&mut state.carry);
            text.push_str(&String::from_utf8_lossy(bytes));
            state.until_matched = until.is_match(&text);
            matched = state.until_matched;
            let tail_start = text.rfind('\n').map_or(0, |at| at + 1);
            let mut start = tail_start.max(text.len().saturating_sub(UNTIL_CARRY));
            while !text.is_char_boundary(start) {
                start += 1;
            }
            state.carry = text.get(start..).unwrap_or_default().to_owned();
        }
        drop(state);
        if matched {
            self.bump();
        }
    }

    /// Starts waiting for `until` in output that arrives from now on; returns
    /// whether the unread output already matches.
    pub(crate) fn watch_for(&self, until: Option<regex::Regex>) -> bool {
        let mut state = self.state();
        state.carry.clear();
        state.until_matched = false;
        let already = match &until {
            Some(until) => {
                let unread = state.unread.snapshot(false).content;
                until.is_match(&unread)
            }
            None => false,
        };
        state.until = until;
        already
    }

    /// Whether the `until` pattern matched since [`Job::watch_for`].
    pub(crate) fn until_matched(&self) -> bool {
        self.state().until_matched
    }

    /// Takes the output produced since the last call (the accumulator starts
    /// afresh). With `report`, an ended job counts as reported.
    pub(crate) fn take_output(&self, report: bool) -> JobOutput {
        let mut state = self.state();
        state.unread.finish();
        let snapshot = state.unread.snapshot(true);
        state.unread = unread_accumulator(self.log_path.clone(), state.log_error.clone());
        state.until = None;
        if report && state.end.is_some() {
            state.reported = true;
        }
        let elapsed = match state.ended_at {
            Some(ended) => ended.duration_since(self.started),
            None => self.started.elapsed(),
        };
        JobOutput {
            snapshot,
            end: state.end.clone(),
            elapsed,
            total_bytes: state.total_bytes,
            log_path: self.log_path.clone(),
            log_error: state.log_error.clone(),
            waiting_for_input: self.tty
                && state.end.is_none()
                && !state.ends_in_newline
                && state.last_output.elapsed() >= crate::tools::jobs::QUIET,
        }
    }

    /// Writes to the job's stdin.
    pub(crate) fn send_input(&self, bytes: &[u8]) -> Result<(), String> {
        let state = self.state();
        if let Some(end) = &state.end {
            return Err(messages::input_after_end(self.id, &end.describe()));
        }
        match &state.input {
            Some(input) => input.send(bytes).map_err(|error| error.to_string()),
            None => Err(messages::no_input(self.id)),
        }
    }

    fn info(&self) -> JobInfo {
        let state = self.state();
        JobInfo {
            id: self.id,
            command: self.command.clone(),
            tty: self.tty,
            end: state.end.clone(),
            started_at: self.started_at,
            elapsed: match state.ended_at {
                Some(ended) => ended.duration_since(self.started),
                None => self.started.elapsed(),
            },
            bytes: state.total_bytes,
        }
    }

    /// The one-line notice for the end of this job.
    fn notice(&self, end: &JobEnd) -> String {
        messages::ended_notice(self.id, &self.command, &end.describe())
    }
}

/// Receives a job's output and its stdin handle from the exec port.
pub(crate) struct JobSink(pub(crate) Arc<Job>);

impl OutputSink for JobSink {
    fn output(&mut self, _stream: OutputStream, bytes: &[u8]) {
        self.0.push(bytes);
    }

    fn input(&mut self, input: ProcessInput) {
        self.0.state().input = Some(input);
    }
}

/// The jobs of one session.
#[derive(Default)]
pub(crate) struct Jobs {
    table: Mutex<Table>,
    listeners: Mutex<Vec<JobListener>>,
}

#[derive(Default)]
struct Table {
    jobs: Vec<Arc<Job>>,
    next_id: u32,
    /// Ended jobs whose end no result has shown yet, in order.
    pending: Vec<Arc<Job>>,
    /// The session is over: no new jobs.
    closed: bool,
}

impl Jobs {
    /// Registers a new job, unless `max` jobs are running already
    /// (`Err(true)`) or the session is over (`Err(false)`).
    pub(crate) fn create(
        &self,
        command: &str,
        tty: bool,
        max: usize,
        log: Result<Box<dyn OutputLog>, String>,
    ) -> Result<Arc<Job>, bool> {
        let mut table = lock(&self.table);
        if table.closed {
            return Err(false);
        }
        let running = table
            .jobs
            .iter()
            .filter(|job| job.state().end.is_none())
            .count();
        if running >= max {
            return Err(true);
        }
        table.next_id += 1;
        let (log, log_error) = match log {
            Ok(log) => (Some(log), None),
            Err(error) => (None, Some(error)),
        };
        let log_path = log.as_ref().map(|log| log.path().to_path_buf());
        let (changed, _) = watch::channel(0);
        let job = Arc::new(Job {
            id: table.next_id,
            command: clip_command(command),
            tty,
            started: Instant::now(),
            started_at: SystemTime::now(),
            log_path: log_path.clone(),
            state: Mutex::new(JobState {
                unread: unread_accumulator(log_path, log_error.clone()),
                log,
                log_error,
                total_bytes: 0,
                last_output: Instant::now(),
                ends_in_newline: true,
                input: None,
                end: None,
                outcome: None,
                ended_at: None,
                reported: false,
                until: None,
                until_matched: false,
                carry: String::new(),
            }),
            changed,
            cancel: CancellationToken::new(),
        });
        table.jobs.push(job.clone());
        Ok(job)
    }

    /// Records how `job` ended; unless a result already showed it, queues
    /// its notice for the next result and tells the listeners.
    pub(crate) fn finish(&self, job: &Arc<Job>, outcome: &Result<ExecOutcome, ExecError>) {
        let end = JobEnd::from_outcome(outcome);
        let mut state = job.state();
        state.end = Some(end.clone());
        state.outcome = outcome.as_ref().ok().copied();
        state.ended_at = Some(Instant::now());
        state.input = None;
        state.log = None;
        let reported = state.reported;
        drop(state);
        job.bump();
        if reported {
            return;
        }
        lock(&self.table).pending.push(job.clone());
        let notice = job.notice(&end);
        let listeners: Vec<JobListener> = lock(&self.listeners).clone();
        for listener in listeners {
            listener(&notice);
        }
    }

    /// Forgets a job (a `yield` command that ended within its wait).
    pub(crate) fn remove(&self, id: u32) {
        let mut table = lock(&self.table);
        table.jobs.retain(|job| job.id != id);
        table.pending.retain(|job| job.id != id);
    }

    /// Marks a job's end as shown (by a `jobs` result about it).
    pub(crate) fn reported(&self, id: u32) {
        if let Some(job) = self.get(id) {
            job.state().reported = true;
        }
        lock(&self.table).pending.retain(|job| job.id != id);
    }

    /// The job with this id.
    pub(crate) fn get(&self, id: u32) -> Option<Arc<Job>> {
        lock(&self.table)
            .jobs
            .iter()
            .find(|job| job.id == id)
            .cloned()
    }

    /// The ids of every job, in order.
    pub(crate) fn ids(&self) -> Vec<u32> {
        lock(&self.table).jobs.iter().map(|job| job.id).collect()
    }

    /// Every job, in order.
    pub(crate) fn list(&self) -> Vec<JobInfo> {
        let jobs: Vec<Arc<Job>> = lock(&self.table).jobs.clone();
        jobs.iter().map(|job| job.info()).collect()
    }

    /// The notices of jobs that ended since the last result, each once.
    pub(crate) fn take_notices(&self) -> Vec<String> {
        let pending = std::mem::take(&mut lock(&self.table).pending);
        let mut notices = Vec::new();
        for job in pending {
            let mut state = job.state();
            if state.reported {
                continue;
            }
            state.reported = true;
            if let Some(end) = state.end.clone() {
                drop(state);
                notices.push(job.notice(&end));
            }
        }
        notices
    }

    /// Adds a listener for job-end notices.
    pub(crate) fn listen(&self, listener: JobListener) {
        lock(&self.listeners).push(listener);
    }

    /// Kills every job (the session is over) and accepts no new ones.
    pub(crate) fn kill_all(&self) {
        let mut table = lock(&self.table);
        table.closed = true;
        for job in &table.jobs {
            job.cancel.cancel();
        }
    }
}

/// The command's first line, clipped to [`COMMAND_CHARS`] characters.
fn clip_command(command: &str) -> String {
    let first = command.trim().lines().next().unwrap_or_default();
    let mut out: String = first.chars().take(COMMAND_CHARS).collect();
    if out.len() < first.len() || command.trim().lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

/// `12.3s`, `4m05s`, `2h03m`.
pub(crate) fn format_elapsed(elapsed: Duration) -> String {
    let seconds = elapsed.as_secs();
    let mut out = String::new();
    if seconds < 60 {
        let _ = write!(out, "{:.1}s", elapsed.as_secs_f64());
    } else if seconds < 3600 {
        let _ = write!(out, "{}m{:02}s", seconds / 60, seconds % 60);
    } else {
        let _ = write!(out, "{}h{:02}m", seconds / 3600, (seconds % 3600) / 60);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_wakes_waiters_only_on_an_until_match_and_at_the_end() {
        let jobs = Jobs::default();
        let Ok(job) = jobs.create("printer", false, 4, Err("no log here".to_owned())) else {
            panic!("the job was not created");
        };
        let mut changes = job.subscribe();
        job.push(b"compiling\n");
        assert!(!changes.has_changed().unwrap(), "plain output woke waiters");
        assert!(!job.watch_for(Some(regex::Regex::new("listening").unwrap())));
        job.push(b"still compiling\n");
        assert!(
            !changes.has_changed().unwrap(),
            "output without a match woke waiters"
        );
        job.push(b"listening on :8000\n");
        assert!(
            changes.has_changed().unwrap(),
            "the match did not wake waiters"
        );
        assert!(job.until_matched());
        changes.mark_unchanged();
        job.push(b"listening again\n");
        assert!(
            !changes.has_changed().unwrap(),
            "a second match woke waiters again"
        );
        jobs.finish(
            &job,
            &Ok(ExecOutcome {
                status: ExitStatus::Code(0),
                termination: Termination::Exited,
            }),
        );
        assert!(
            changes.has_changed().unwrap(),
            "the end did not wake waiters"
        );
        assert_eq!(job.take_output(true).total_bytes, 61);
    }
}
