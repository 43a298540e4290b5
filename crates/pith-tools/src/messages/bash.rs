//! `bash` (`tools/bash/mod.rs`; output notices are in `tools/bash/output.rs`).

use std::fmt::Display;

/// A `yield` that is not a positive number of seconds.
pub(crate) const BAD_YIELD: &str = "yield must be a number of seconds greater than 0 (e.g. 5).";

/// The result of a command that printed nothing.
pub(crate) const NO_OUTPUT: &str = "(no output)";

/// The command was cancelled.
pub(crate) const ABORTED: &str = "Command aborted";

/// A non-zero exit.
pub(crate) fn exited(code: i32) -> String {
    format!("Command exited with code {code}")
}

/// The command ran out of time.
pub(crate) fn timed_out(seconds: &str) -> String {
    format!("Command timed out after {seconds} seconds")
}

/// A failed command's output looks like the read-only sandbox refused it.
pub(crate) fn denied_read_only(network: &str) -> String {
    format!(
        "The sandbox (read-only) may have denied this: commands may not write any file{network}. \
         The user can widen it by restarting pith with --sandbox workspace-write or --sandbox off."
    )
}

/// A failed command's output looks like the workspace-write sandbox refused it.
pub(crate) fn denied_workspace_write(places: &str, network: &str) -> String {
    format!(
        "The sandbox (workspace-write) may have denied this: commands may write only under {places}, and .git/ is read-only{network}. \
         The user can widen it by restarting pith with --allow-write cargo|npm|pip|go|cache|DIR, --root DIR or --sandbox off."
    )
}

/// A failed command's output looks like the network denial refused it.
pub(crate) fn denied_network(network: &str) -> String {
    format!(
        "The sandbox may have denied this{network}. The user can lift it by restarting pith without --deny-network."
    )
}

/// The working directory is gone.
pub(crate) fn missing_cwd(cwd: impl Display) -> String {
    format!("Working directory does not exist: {cwd}\nCannot execute bash commands.")
}

/// Added to a failure to start a command while background jobs run (one of
/// them may hold the processes the start needed).
pub(crate) fn jobs_running(count: usize) -> String {
    let (jobs, them) = if count == 1 {
        ("job is", "it")
    } else {
        ("jobs are", "them")
    };
    format!("{count} background {jobs} running (jobs list shows {them}; jobs kill ID ends one).")
}

/// The configured shell does not exist.
pub(crate) fn shell_not_found(shell: impl Display) -> String {
    format!("Shell not found: {shell}. Configure a shell that exists, or install bash.")
}

/// The output notice (inside `[...]`, after the output) when the middle of
/// the output was left out: the head's lines, then the tail from `from`.
pub(crate) fn showing_head_and_tail(
    head_lines: u64,
    from: u64,
    end: usize,
    total: usize,
) -> String {
    format!("Showing lines 1-{head_lines} and {from}-{end} of {total}.")
}

/// The output notice when only the end of one long last line is shown.
pub(crate) fn showing_end_of_line(shown: &str, line: usize, size: &str) -> String {
    format!("Showing last {shown} of line {line} (line is {size}).")
}

/// The output notice when the tail is cut by the line limit.
pub(crate) fn showing_lines(start: usize, end: usize, total: usize) -> String {
    format!("Showing lines {start}-{end} of {total}.")
}

/// The output notice when the tail is cut by the byte limit.
pub(crate) fn showing_lines_limit(start: usize, end: usize, total: usize, limit: &str) -> String {
    format!("Showing lines {start}-{end} of {total} ({limit} limit).")
}

/// The output notice when long lines were clipped.
pub(crate) fn lines_clipped(max_chars: usize) -> String {
    format!("Some lines truncated to {max_chars} chars.")
}

/// Where the whole output is.
pub(crate) fn full_output(path: impl Display) -> String {
    format!(" Full output: {path}")
}

/// The whole output could not be kept.
pub(crate) fn full_output_failed(error: impl Display) -> String {
    format!(" Full output could not be saved: {error}")
}

/// A `timeout` of 0 or below (before the generic validation, which would
/// only say "must be greater than 0").
pub(crate) const NONPOSITIVE_TIMEOUT: &str =
    "timeout must be greater than 0 seconds (omit it for no timeout)";

/// A `timeout` that is not finite.
pub(crate) const INFINITE_TIMEOUT: &str = "Invalid timeout: must be a finite number of seconds";

/// A `timeout` over the largest.
pub(crate) const TIMEOUT_TOO_LARGE: &str = "Invalid timeout: maximum is 2147483.647 seconds";

/// The configured shell does not exist (when selecting it).
pub(crate) fn custom_shell_not_found(shell: impl Display) -> String {
    format!("Custom shell path not found: {shell}")
}

/// The session's job limit is reached.
pub(crate) fn too_many_jobs(max: usize) -> String {
    format!(
        "{max} jobs are already running in this session (the limit; hosts set it with --max-jobs). \
         Kill one with jobs {{\"action\":\"kill\",\"id\":ID}} or wait for one to end (jobs list shows them)."
    )
}

/// The session is closing.
pub(crate) const SESSION_OVER: &str = "This session is over: no new jobs can start.";

/// How a job was started, after its id: under a terminal or not.
pub(crate) fn job_how(tty: bool) -> &'static str {
    if tty { " under a pseudo-terminal" } else { "" }
}

/// The first line of a job still running.
pub(crate) fn started_as_job(id: u32, how: &str) -> String {
    format!(
        "[started as job {id}{how}; jobs output/input/kill with id {id} — jobs output with wait waits for it]"
    )
}

/// The first line of a job that ended before the call returned.
pub(crate) fn ran_as_job(id: u32, how: &str) -> String {
    format!("[ran as job {id}{how}]")
}

/// A command that ended without output to show (`end`: how it ended).
pub(crate) fn command_ended(end: &str) -> String {
    format!("Command {end}")
}

/// A command that could not run.
pub(crate) const FAILED_TO_RUN: &str = "Command failed to run";
