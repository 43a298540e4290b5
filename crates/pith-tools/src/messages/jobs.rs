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
