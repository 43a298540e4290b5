//! `bash` with `background`, `yield` or `tty`: the command becomes a job of
//! the session that keeps running after the call returns.

use std::time::Duration;

use pith_env::{ExecRequest, StdinMode};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{LOG_PREFIX_JOB, finish, structured};
use crate::jobs::{Job, JobSink};
use crate::messages::bash as messages;
use crate::tool::{ToolContext, ToolError, ToolOutput};
use crate::tools::jobs::{render, settle};

/// `background` and `tty` return after the first moments: once the command
/// has been quiet a moment, and after this long at most.
const START_MAX: Duration = Duration::from_secs(1);

/// How a job-mode call was asked for.
pub(super) struct JobMode {
    /// `background`: return after the first moments.
    pub(super) background: bool,
    /// `yield`: return after this long if still running.
    pub(super) yield_after: Option<Duration>,
    /// `tty`: a pseudo-terminal.
    pub(super) tty: bool,
}

/// Starts `request` as a job and returns when the mode says.
pub(super) async fn start(
    mode: JobMode,
    command: &str,
    mut request: ExecRequest,
    timeout: Option<f64>,
    context: &ToolContext,
    cancel: CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let jobs = context.session.jobs().clone();
    let max = context.config.bash.max_jobs;
    request.stdin = if mode.tty {
        StdinMode::Tty
    } else if mode.background {
        StdinMode::Pipe
    } else {
        StdinMode::Null
    };
    let log = context
        .env
        .exec
        .create_output_log(&context.config.bash.spill_dir, LOG_PREFIX_JOB)
        .map_err(|error| error.to_string());
    if let Ok(log) = &log {
        context.session.record_output(log.path().to_path_buf());
    }
    let job = match jobs.create(command, mode.tty, max, log) {
        Ok(job) => job,
        Err(true) => {
            return Err(ToolError::new(messages::too_many_jobs(max)));
        }
        Err(false) => {
            return Err(ToolError::new(messages::SESSION_OVER));
        }
    };
    let exec = context.env.exec.clone();
    let task_job = job.clone();
    let task_jobs = jobs.clone();
    let changes = job.subscribe();
    tokio::spawn(async move {
        let mut sink = JobSink(task_job.clone());
        let outcome = exec.exec(request, &mut sink, task_job.cancel.clone()).await;
        drop(sink);
        task_jobs.finish(&task_job, &outcome);
    });
    match mode.yield_after {
        Some(after) if !mode.background => {
            if !wait_for_end(&job, changes, after, &cancel).await {
                // Cancelled: as a plain command, the call's cancel kills it.
                job.cancel.cancel();
                let mut changes = job.subscribe();
                while job.end().is_none() {
                    if changes.changed().await.is_err() {
                        break;
                    }
                }
            }
            if job.end().is_some() {
                return completed(&job, timeout, context);
            }
        }
        _ => settle(&job, changes, START_MAX, &cancel).await,
    }
    let taken = job.take_output(true);
    if taken.end.is_some() {
        jobs.reported(job.id);
    }
    let how = messages::job_how(mode.tty);
    let lead = match &taken.end {
        None => messages::started_as_job(job.id, how),
        Some(_) => messages::ran_as_job(job.id, how),
    };
    let mut result = render(&job, &taken, Some(&lead));
    let exit_code = match &taken.end {
        Some(crate::jobs::JobEnd::Exited(code)) => *code,
        Some(crate::jobs::JobEnd::Killed { signal, .. }) => 128 + signal,
        _ => -1,
    };
    let mut structured = json!({
        "exitCode": exit_code,
        "timedOut": false,
        "cancelled": false,
        "truncated": taken.snapshot.is_cut(),
        "jobId": job.id.to_string(),
        "running": taken.end.is_none(),
    });
    if let Some(path) = &taken.log_path {
        structured["fullOutputPath"] = json!(path.display().to_string());
    }
    result.structured = Some(structured);
    Ok(result)
}

/// Waits until the job ends or `after` passes; `false` when the call was cancelled.
async fn wait_for_end(
    job: &Job,
    mut changes: tokio::sync::watch::Receiver<u64>,
    after: Duration,
    cancel: &CancellationToken,
) -> bool {
    let deadline = tokio::time::sleep(after);
    tokio::pin!(deadline);
    while job.end().is_none() {
        tokio::select! {
            () = cancel.cancelled() => return false,
            () = &mut deadline => return true,
            changed = changes.changed() => if changed.is_err() { return true },
        }
    }
    true
}

/// A `yield` command that ended within its wait: the result a plain command
/// gets, and no job is left behind.
fn completed(
    job: &Job,
    timeout: Option<f64>,
    context: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let jobs = context.session.jobs();
    let taken = job.take_output(true);
    jobs.remove(job.id);
    match job.outcome() {
        Some(outcome) => {
            let structured = structured(&outcome, &taken.snapshot);
            match finish(outcome, &taken.snapshot, timeout, &context.config.sandbox) {
                Ok(output) => Ok(output.with_structured(structured)),
                Err(error) => Err(error.with_structured(structured)),
            }
        }
        None => Err(ToolError::new(match &taken.end {
            Some(end) => messages::command_ended(&end.describe()),
            None => messages::FAILED_TO_RUN.to_owned(),
        })),
    }
}
