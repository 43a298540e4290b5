//! `jobs` (`tools/jobs.rs`).

/// A session without jobs.
pub(crate) const NONE: &str =
    "This session has no jobs; start one with bash and background, yield or tty.";

/// The `list` result of a session without jobs.
pub(crate) const NONE_LISTED: &str = "No jobs in this session.";

/// A `wait` that is not a number of seconds.
pub(crate) const BAD_WAIT: &str = "wait must be a number of seconds (0 or more).";

/// `input` without `text`.
pub(crate) const INPUT_WITHOUT_TEXT: &str = "input needs text: the characters to send, e.g. {\"action\":\"input\",\"id\":1,\"text\":\"y\\n\"}.";

/// The session's job ids.
pub(crate) fn known(ids: &[String]) -> String {
    format!("Jobs of this session: {}.", ids.join(", "))
}

/// An action without the job's id.
pub(crate) fn needs_id(known: &str) -> String {
    format!("This action needs the job's id. {known}")
}

/// An id that names no job of the session.
pub(crate) fn no_such_job(shown: &str, known: &str) -> String {
    format!("No job {shown} in this session. {known}")
}

/// An `until` pattern the regex engine refused.
pub(crate) fn invalid_until(reason: &str) -> String {
    format!(
        "Invalid until regex: {reason}. Give a regular expression (Rust syntax), e.g. \"Serving HTTP\"."
    )
}

/// A kill that has not finished in time.
pub(crate) fn still_killing(id: u32, seconds: u64) -> String {
    format!("job {id} is still being killed after {seconds}s; check jobs list shortly.")
}

/// How a job ended: `exited with code 1`.
pub(crate) fn exited(code: i32) -> String {
    format!("exited with code {code}")
}

/// How a job ended: killed at its timeout.
pub(crate) fn timed_out(signal: i32) -> String {
    format!("timed out and was killed (signal {signal})")
}

/// How a job ended: killed by a jobs kill or a cancel.
pub(crate) fn killed(signal: i32) -> String {
    format!("was killed (signal {signal})")
}

/// How a job ended: killed by a signal from elsewhere.
pub(crate) fn killed_by(signal: i32) -> String {
    format!("was killed by signal {signal}")
}

/// How a job ended: it could not run.
pub(crate) fn failed_to_run(message: &str) -> String {
    format!("failed to run: {message}")
}

/// The state of a job still running, in a listing.
pub(crate) const RUNNING: &str = "running";

/// Input for a job that ended (`end`: how).
pub(crate) fn input_after_end(id: u32, end: &str) -> String {
    format!("job {id} {end}")
}

/// Input for a job without stdin.
pub(crate) fn no_input(id: u32) -> String {
    format!(
        "job {id} does not accept input: start it with background or tty (a job started with yield alone has no stdin)"
    )
}

/// Input could not be sent (`reason`: without its stop).
pub(crate) fn input_failed(reason: &str) -> String {
    format!("{reason}.")
}

/// The line a session's next result carries for a job that ended.
pub(crate) fn ended_notice(id: u32, command: &str, end: &str) -> String {
    format!("[job {id} `{command}` {end}; jobs output {id} for its output]")
}

/// A job's state in its output's last line: still running.
pub(crate) fn running_for(elapsed: &str) -> String {
    format!("running for {elapsed}")
}

/// A job's state in its output's last line: ended.
pub(crate) fn ended_after(end: &str, elapsed: &str) -> String {
    format!("{end} after {elapsed}")
}

/// Where a job's whole output is.
pub(crate) fn full_log(path: impl std::fmt::Display) -> String {
    format!("full log: {path}")
}

/// The job's whole output could not be kept.
pub(crate) fn full_log_failed(error: impl std::fmt::Display) -> String {
    format!("full log could not be saved: {error}")
}

/// The job keeps no whole output.
pub(crate) const NO_FULL_LOG: &str = "no full log";

/// The last line of a job's output (`size`: all the output it printed).
pub(crate) fn output_footer(id: u32, state: &str, size: &str, log: &str) -> String {
    format!("\n\n[job {id} {state}; {size} of output in all; {log}]")
}

/// A quiet job whose last line is unfinished.
pub(crate) fn waiting_for_input(id: u32) -> String {
    format!(
        "\n[job {id} is probably waiting for input: it is quiet and its last line does not end in a newline; send it with jobs input]"
    )
}
