//! `jobs`: list, read, feed and kill the background jobs `bash` started.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Describe, define};
use crate::details::{JobEndDetails, JobEntry, JobOutputDetails, JobsListDetails};
use crate::jobs::{Job, JobEnd, JobOutput, format_elapsed};
use crate::messages::jobs as messages;
use crate::tool::{
    Content, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, ToolOutput, ToolResult,
};

/// How long a job must be quiet before `input` (and `bash` with
/// `background`) returns, and before a tty job counts as waiting for input.
pub(crate) const QUIET: Duration = Duration::from_millis(500);
/// `input` and `background` return after this long even while output flows.
pub(crate) const SETTLE_MAX: Duration = Duration::from_secs(3);
/// `kill` waits this long for the tree to be gone.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// The longest `wait` honoured (one hour).
const MAX_WAIT: f64 = 3600.0;
/// The largest compiled `until` pattern.
const UNTIL_SIZE_LIMIT: usize = 1 << 20;

/// What to do.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Action {
    /// Every job of this session with its state.
    List,
    /// The output since the last `output` call.
    Output,
    /// Write `text` to the job's stdin.
    Input,
    /// Kill the job's whole process tree.
    Kill,
}

/// A job id: a number or its string form.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum JobId {
    Number(u64),
    Text(String),
}

/// Arguments of `jobs`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct JobsArgs {
    /// list, output, input or kill
    action: Action,
    /// The job id (output, input, kill), as bash's details.jobId gives it
    id: Option<JobId>,
    /// output: wait up to this many seconds for the job to exit (or `until` to match)
    #[schemars(extend("minimum" = 0))]
    wait: Option<f64>,
    /// output: a regex; with wait, return as soon as new output matches it
    until: Option<String>,
    /// input: the text to write, sent as is ("\n" is Enter, "\u0003" is Ctrl-C)
    text: Option<String>,
}

pub(crate) struct JobsTool {
    definition: ToolDefinition,
}

impl JobsTool {
    pub(crate) fn new() -> JobsTool {
        JobsTool {
            definition: define::<JobsArgs>(Describe {
                name: "jobs",
                title: "Manage background jobs",
                description: "Manage commands bash started with background, yield or tty. action: list (every job and its state), output (new output since the last call, truncated like bash, with the full log's path; wait seconds for it to exit or until a regex matches), input (write text to its stdin), kill (kill its whole tree).",
                prompt_snippet: "Read, feed and stop background commands started by bash",
                prompt_guidelines: &[],
                annotations: ToolAnnotations {
                    read_only: false,
                    destructive: true,
                    idempotent: false,
                    // Its commands reach what bash reaches (issue 19: bash and jobs).
                    open_world: true,
                },
            }),
        }
    }
}

#[async_trait]
impl Tool for JobsTool {
    type Args = JobsArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(
        &self,
        args: JobsArgs,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let mut output = if args.action == Action::List {
            list(context)
        } else {
            let job = find(context, args.id.as_ref()).map_err(ToolError::new)?;
            match args.action {
                Action::List => list(context),
                Action::Output => self::output(context, &job, &args, &cancel).await?,
                Action::Input => input(context, &job, args.text.as_deref(), &cancel).await?,
                Action::Kill => kill(context, &job).await?,
            }
        };
        output.structured = Some(structured(args.action, output.details.as_ref()));
        Ok(output)
    }
}

/// The typed result: the action and the job's id, state, exit and log (or the list).
fn structured(action: Action, details: Option<&Value>) -> Value {
    let name = match action {
        Action::List => "list",
        Action::Output => "output",
        Action::Input => "input",
        Action::Kill => "kill",
    };
    let mut structured = json!({"action": name});
    if let Some(details) = details {
        for key in ["jobId", "state", "exitCode", "signal", "jobs"] {
            if let Some(value) = details.get(key) {
                structured[key] = value.clone();
            }
        }
        if let Some(path) = details.get("logPath") {
            structured["fullOutputPath"] = path.clone();
        }
        if action != Action::List {
            structured["truncated"] = json!(details.get("truncation").is_some());
        }
    }
    structured
}

/// The job `id` names, or a message listing the ones there are.
fn find(context: &ToolContext, id: Option<&JobId>) -> Result<Arc<Job>, String> {
    let jobs = context.session.jobs();
    let known = || {
        let ids: Vec<String> = jobs.ids().iter().map(u32::to_string).collect();
        if ids.is_empty() {
            messages::NONE.to_owned()
        } else {
            messages::known(&ids)
        }
    };
    let number = match id {
        None => return Err(messages::needs_id(&known())),
        Some(JobId::Number(number)) => u32::try_from(*number).ok(),
        Some(JobId::Text(text)) => text.trim().trim_start_matches('%').parse::<u32>().ok(),
    };
    number.and_then(|number| jobs.get(number)).ok_or_else(|| {
        let shown = match id {
            Some(JobId::Number(number)) => number.to_string(),
            Some(JobId::Text(text)) => crate::paths::clip_chars(text, 20),
            None => String::new(),
        };
        messages::no_such_job(&shown, &known())
    })
}

fn list(context: &ToolContext) -> ToolOutput {
    let jobs = context.session.jobs().list();
    if jobs.is_empty() {
        return ToolOutput::text(messages::NONE_LISTED)
            .with_details_of(&JobsListDetails::default());
    }
    let mut text = String::new();
    let mut entries = Vec::new();
    for job in &jobs {
        let state = match &job.end {
            None => messages::RUNNING.to_owned(),
            Some(end) => end.describe(),
        };
        let _ = writeln!(
            text,
            "{}  {}  {}  {}{}  {}",
            job.id,
            state,
            format_elapsed(job.elapsed),
            pith_text::format_size(job.bytes),
            if job.tty { "  tty" } else { "" },
            job.command
        );
        entries.push(JobEntry {
            id: job.id.to_string(),
            command: job.command.clone(),
            state: job.end.as_ref().map_or("running", JobEnd::state).to_owned(),
            tty: job.tty,
            started_at: job
                .started_at
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            elapsed_seconds: job.elapsed.as_secs_f64(),
            output_bytes: job.bytes,
            end: end_details(job.end.as_ref()),
        });
    }
    ToolOutput::text(text.trim_end().to_owned()).with_details_of(&JobsListDetails { jobs: entries })
}

/// `exitCode` / `signal` / `error` for an ended job.
fn end_details(end: Option<&JobEnd>) -> JobEndDetails {
    let mut details = JobEndDetails::default();
    match end {
        Some(JobEnd::Exited(code)) => details.exit_code = Some(*code),
        Some(JobEnd::Killed { signal, .. }) => details.signal = Some(*signal),
        Some(JobEnd::Failed(message)) => details.error = Some(message.clone()),
        None => {}
    }
    details
}

async fn output(
    context: &ToolContext,
    job: &Arc<Job>,
    args: &JobsArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let until = match args.until.as_deref() {
        None => None,
        Some(pattern) => match regex::RegexBuilder::new(pattern)
            .size_limit(UNTIL_SIZE_LIMIT)
            .build()
        {
            Ok(regex) => Some(regex),
            Err(error) => {
                return Err(ToolError::invalid(messages::invalid_until(
                    error.to_string().lines().last().unwrap_or("syntax error"),
                )));
            }
        },
    };
    if let Some(wait) = args.wait
        && !(wait.is_finite() && wait >= 0.0)
    {
        return Err(ToolError::invalid(messages::BAD_WAIT));
    }
    let mut changes = job.subscribe();
    let already = job.watch_for(until);
    if let Some(wait) = args.wait.filter(|wait| *wait > 0.0)
        && !already
        && job.end().is_none()
    {
        let deadline = tokio::time::sleep(Duration::from_secs_f64(wait.min(MAX_WAIT)));
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                () = cancel.cancelled() => break,
                () = &mut deadline => break,
                changed = changes.changed() => {
                    if changed.is_err() || job.end().is_some() || job.until_matched() {
                        break;
                    }
                }
            }
        }
    }
    let taken = job.take_output(true);
    if taken.end.is_some() {
        context.session.jobs().reported(job.id);
    }
    Ok(render(job, &taken, None))
}

async fn input(
    context: &ToolContext,
    job: &Arc<Job>,
    text: Option<&str>,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let Some(text) = text else {
        return Err(ToolError::invalid(messages::INPUT_WITHOUT_TEXT));
    };
    let changes = job.subscribe();
    if let Err(message) = job.send_input(text.as_bytes()) {
        return Err(ToolError::new(messages::input_failed(&message)));
    }
    settle(job, changes, SETTLE_MAX, cancel).await;
    let taken = job.take_output(true);
    if taken.end.is_some() {
        context.session.jobs().reported(job.id);
    }
    Ok(render(job, &taken, None))
}

async fn kill(context: &ToolContext, job: &Arc<Job>) -> Result<ToolOutput, ToolError> {
    let mut changes = job.subscribe();
    job.cancel.cancel();
    let deadline = tokio::time::sleep(KILL_WAIT);
    tokio::pin!(deadline);
    while job.end().is_none() {
        tokio::select! {
            () = &mut deadline => break,
            changed = changes.changed() => if changed.is_err() { break },
        }
    }
    let taken = job.take_output(true);
    context.session.jobs().reported(job.id);
    if taken.end.is_none() {
        return Err(ToolError::new(messages::still_killing(
            job.id,
            KILL_WAIT.as_secs(),
        )));
    }
    Ok(render(job, &taken, None))
}

/// Waits until the job has been quiet for [`QUIET`] (at least that long in
/// all, at most `max`), or ended, or the call is cancelled.
pub(crate) async fn settle(
    job: &Job,
    mut changes: tokio::sync::watch::Receiver<u64>,
    max: Duration,
    cancel: &CancellationToken,
) {
    let start = Instant::now();
    loop {
        if job.end().is_some() || start.elapsed() >= max {
            return;
        }
        let quiet_for = job.last_output().elapsed().min(start.elapsed());
        if quiet_for >= QUIET {
            return;
        }
        let pause = (QUIET - quiet_for).max(Duration::from_millis(10));
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(pause) => {}
            changed = changes.changed() => if changed.is_err() { return },
        }
    }
}

/// The result for a job's output: the text, what was cut, the job's state
/// and where its full log is. `lead` goes first (bash's "started as job" line).
pub(crate) fn render(job: &Job, taken: &JobOutput, lead: Option<&str>) -> ToolOutput {
    let snapshot = &taken.snapshot;
    let mut text = String::new();
    if let Some(lead) = lead {
        text.push_str(lead);
        text.push_str("\n\n");
    }
    if snapshot.content.is_empty() && !snapshot.is_cut() {
        text.push_str("(no new output)");
    } else {
        text.push_str(
            snapshot
                .content
                .strip_suffix('\n')
                .unwrap_or(&snapshot.content),
        );
        if let Some(notice) = snapshot.notice() {
            text.push_str("\n\n");
            text.push_str(&notice);
        }
    }
    let state = match &taken.end {
        None => messages::running_for(&format_elapsed(taken.elapsed)),
        Some(end) => messages::ended_after(&end.describe(), &format_elapsed(taken.elapsed)),
    };
    let log = match (&taken.log_path, &taken.log_error) {
        (Some(path), _) => messages::full_log(path.display()),
        (None, Some(error)) => messages::full_log_failed(error),
        (None, None) => messages::NO_FULL_LOG.to_owned(),
    };
    text.push_str(&messages::output_footer(
        job.id,
        &state,
        &pith_text::format_size(taken.total_bytes),
        &log,
    ));
    if taken.waiting_for_input {
        text.push_str(&messages::waiting_for_input(job.id));
    }
    ToolOutput::text(text).with_details_of(&JobOutputDetails {
        job_id: job.id.to_string(),
        state: taken
            .end
            .as_ref()
            .map_or("running", JobEnd::state)
            .to_owned(),
        output: super::bash::details(snapshot, None),
        log_path: taken
            .log_path
            .as_ref()
            .map(|path| path.display().to_string()),
        waiting_for_input: taken.waiting_for_input.then_some(true),
        end: end_details(taken.end.as_ref()),
    })
}

/// Adds the notices of ended jobs to a result, after its last text.
pub(crate) fn add_notices(result: &mut ToolResult, notices: &[String]) {
    if notices.is_empty() {
        return;
    }
    let lines = notices.join("\n");
    match result
        .content
        .iter_mut()
        .rev()
        .find_map(|content| match content {
            Content::Text { text } => Some(text),
            _ => None,
        }) {
        Some(text) => {
            text.push_str("\n\n");
            text.push_str(&lines);
        }
        None => result.content.push(Content::text(lines)),
    }
}
