//! `pith batch`: JSON-lines calls on stdin, run concurrently in one session, results on
//! stdout in input order.
//!
//! Each line's call starts as soon as the line is read. Before the call is handed on it
//! is polled once right here, so the start of every call (argument validation, its place
//! in the file mutation queue) happens in input order even though the calls then run
//! concurrently. That first poll ends as soon as the call's place no longer matters
//! ([`yield_after_turn`]); the rest of the calls runs on the runtime's workers, up to
//! [`RUN_CALLS`] calls to a task, while the reading task (itself on a worker, see
//! `app.rs`) reads and starts the next lines. Starting calls in one place and finishing
//! them in others only pays with an allocator that frees across threads cheaply (see
//! `allocator.rs`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use pith_env::Env;
use pith_tools::{CallOptions, OverwritePolicy, Session, ToolResult, yield_after_turn};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use crate::config::BatchConfig;
use crate::render;

/// One input line's call.
#[derive(Debug, PartialEq)]
struct Request {
    id: Value,
    tool: String,
    args: Value,
}

/// An output line, finished or on its way, in input order.
enum Pending {
    /// A line that finished in its first poll (or never started).
    Done(String),
    /// The lines of a run of started calls, finishing on their task.
    Run {
        ids: Vec<Value>,
        task: JoinHandle<Vec<String>>,
    },
}

/// A started call: its output line when it finishes.
type Call = Pin<Box<dyn Future<Output = String> + Send>>;

/// Started calls are finished on one task per this many: a task per call
/// would cost a hand-off (and a wake of the printer) per call.
const RUN_CALLS: usize = 16;

/// At most this many started calls are on their way at once: when the
/// workers fall behind, the reader waits instead of starting every line of a
/// long input. Every unfinished call counts, also one that waits (for a lock
/// an earlier call holds, for a process): a read that waits for the read of
/// the same file before it would otherwise let the reader run ahead without
/// end. Past it the batch starts a call when an earlier one finishes. Four
/// runs of [`RUN_CALLS`]: enough to keep every worker busy, and few enough
/// that what the calls hold stays in memory already touched (1,000 small
/// reads: 25.9 ms with 64, 27.6 ms with 128, 27.9 ms with 256 and a third
/// more page faults; 31.3 ms with 32, two runs for two workers).
const CALLS_ON_THEIR_WAY: usize = 64;

/// Started calls that have not been handed to a task yet.
#[derive(Default)]
struct Unfinished {
    ids: Vec<Value>,
    calls: Vec<Call>,
    permits: Vec<Option<OwnedSemaphorePermit>>,
}

impl Unfinished {
    fn push(
        &mut self,
        id: Value,
        call: Call,
        permit: OwnedSemaphorePermit,
        ready: &mut Vec<Pending>,
    ) {
        self.ids.push(id);
        self.calls.push(call);
        self.permits.push(Some(permit));
        if self.calls.len() >= RUN_CALLS {
            self.hand_over(ready);
        }
    }

    /// Hands the calls to one task (their lines in input order) and queues its
    /// lines after those already in `ready`.
    fn hand_over(&mut self, ready: &mut Vec<Pending>) {
        if self.calls.is_empty() {
            return;
        }
        let calls = std::mem::take(&mut self.calls);
        let ids = std::mem::take(&mut self.ids);
        let permits = std::mem::take(&mut self.permits);
        ready.push(Pending::Run {
            task: tokio::spawn(RunOfCalls::new(ids.clone(), calls, permits)),
            ids,
        });
    }
}

/// Drives several calls at once on one task; ready with all their lines, in
/// order, when the last one finishes (the lines are printed in input order
/// anyway, so none waits longer for its turn to be printed). A call that
/// panics gets an error line of its own; the others go on.
struct RunOfCalls {
    ids: Vec<Value>,
    calls: Vec<Option<Call>>,
    lines: Vec<String>,
    /// Each call's place among [`CALLS_ON_THEIR_WAY`], given back when it finishes.
    permits: Vec<Option<OwnedSemaphorePermit>>,
}

impl RunOfCalls {
    fn new(
        ids: Vec<Value>,
        calls: Vec<Call>,
        permits: Vec<Option<OwnedSemaphorePermit>>,
    ) -> RunOfCalls {
        RunOfCalls {
            ids,
            permits,
            lines: vec![String::new(); calls.len()],
            calls: calls.into_iter().map(Some).collect(),
        }
    }
}

impl Future for RunOfCalls {
    type Output = Vec<String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<String>> {
        let this = &mut *self;
        let mut finished = true;
        let calls = this.calls.iter_mut().zip(&mut this.lines);
        for (((slot, line), id), permit) in calls.zip(&this.ids).zip(&mut this.permits) {
            let Some(call) = slot else { continue };
            let polled =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call.as_mut().poll(cx)));
            match polled {
                Ok(Poll::Ready(done)) => *line = done,
                Ok(Poll::Pending) => {
                    finished = false;
                    continue;
                }
                Err(_) => {
                    tracing::error!("batch call {id} panicked");
                    let message = "Internal error: the call did not finish (it panicked).";
                    *line = render::batch_line(id, &ToolResult::error(message.to_owned()));
                }
            }
            *slot = None;
            *permit = None;
        }
        if finished {
            Poll::Ready(std::mem::take(&mut this.lines))
        } else {
            Poll::Pending
        }
    }
}

/// Started calls handed to the printer at most this many at a time.
const HANDOVER_LINES: usize = 256;

/// Runs the batch until stdin ends and every call has been printed; returns the exit status.
pub(crate) async fn run(config: BatchConfig, env: &Env) -> anyhow::Result<i32> {
    let session = config
        .workspace
        .toolset(env, OverwritePolicy::RequireRead, true)
        .session();
    let text_format = config.text;
    let (sender, receiver) = mpsc::unbounded_channel();
    let printer = tokio::spawn(print_in_order(receiver));

    let mut stdin = BufReader::with_capacity(64 * 1024, tokio::io::stdin());
    let mut line = Vec::new();
    let mut number = 0_usize;
    let mut ready = Vec::new();
    let mut unfinished = Unfinished::default();
    let on_their_way = Arc::new(Semaphore::new(CALLS_ON_THEIR_WAY));
    loop {
        line.clear();
        if stdin.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        number += 1;
        // `from_utf8` is the vectorised check; the lossy one walks a large
        // argument (a 50 MiB write) several times slower.
        let text = match std::str::from_utf8(&line) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&line),
        };
        if !text.trim().is_empty() {
            // A place among the calls on their way, taken before the call
            // starts: the reader never holds a started call unpolled while it
            // waits (one waiting for a reply over a remote connection would
            // hold up the replies of the calls it waits for).
            let permit = match on_their_way.clone().try_acquire_owned() {
                Ok(permit) => permit,
                Err(_) => {
                    // The workers are behind: hand them what is started and
                    // wait for a call to finish.
                    if !pass_on(&mut unfinished, &mut ready, &sender) {
                        break;
                    }
                    on_their_way.clone().acquire_owned().await?
                }
            };
            let line = match parse_line(&text, number) {
                Ok(request) => start(&session, request, text_format),
                Err((id, message)) => Started::Done(render::batch_entry(
                    &id,
                    "",
                    &ToolResult::error(message),
                    text_format,
                )),
            };
            match line {
                Started::Done(line) => {
                    drop(permit);
                    unfinished.hand_over(&mut ready);
                    ready.push(Pending::Done(line));
                }
                Started::Running { id, call } => unfinished.push(id, call, permit, &mut ready),
            }
        }
        // Hand the started calls over before waiting for more input (the next
        // read waits when no whole line is buffered), or every so many lines.
        if (memchr::memchr(b'\n', stdin.buffer()).is_none() || ready.len() >= HANDOVER_LINES)
            && !pass_on(&mut unfinished, &mut ready, &sender)
        {
            break;
        }
    }
    pass_on(&mut unfinished, &mut ready, &sender);
    drop(sender);
    printer.await??;
    Ok(0)
}

/// Hands the started calls to a task and everything in `ready` to the
/// printer; `false` when the printer stopped (stdout is gone).
fn pass_on(
    unfinished: &mut Unfinished,
    ready: &mut Vec<Pending>,
    printer: &mpsc::UnboundedSender<Vec<Pending>>,
) -> bool {
    unfinished.hand_over(ready);
    ready.is_empty() || printer.send(std::mem::take(ready)).is_ok()
}

/// Parses one line; a bad line becomes its error message (with the id when it has one).
fn parse_line(text: &str, number: usize) -> Result<Request, (Value, String)> {
    /// A well-formed line, read without building a map of its three fields.
    #[derive(serde::Deserialize)]
    struct Line {
        #[serde(default)]
        id: Value,
        tool: String,
        #[serde(default)]
        args: Value,
    }
    const SHAPE: &str = r#"each line must be {"id":...,"tool":"NAME","args":{...}}"#;
    // Anything else (no tool, a field twice, not an object...) takes the long
    // way below, which says what is wrong and keeps the id.
    if let Ok(Line { id, tool, args }) = serde_json::from_str::<Line>(text) {
        let args = match args {
            Value::Null => Value::Object(serde_json::Map::new()),
            args => args,
        };
        return Ok(Request { id, tool, args });
    }
    let value: Value = serde_json::from_str(text).map_err(|error| {
        (
            Value::Null,
            format!("Invalid JSON on line {number} ({error}); {SHAPE}."),
        )
    })?;
    let Value::Object(mut object) = value else {
        return Err((
            Value::Null,
            format!("Line {number} is not a JSON object; {SHAPE}."),
        ));
    };
    let id = object.remove("id").unwrap_or(Value::Null);
    let tool = match object.remove("tool") {
        Some(Value::String(tool)) => tool,
        Some(_) | None => {
            return Err((
                id,
                format!("Line {number} has no \"tool\" string; {SHAPE}."),
            ));
        }
    };
    let args = match object.remove("args") {
        Some(Value::Null) | None => Value::Object(serde_json::Map::new()),
        Some(args) => args,
    };
    Ok(Request { id, tool, args })
}

/// A call after its first poll.
enum Started {
    Done(String),
    Running { id: Value, call: Call },
}

/// Starts a call: polls it once here (in input order) up to the point where its
/// place stops mattering; what is left runs on a task ([`Unfinished`]).
fn start(session: &Session, request: Request, text: bool) -> Started {
    let Request { id, tool, args } = request;
    let session = session.clone();
    let line_id = id.clone();
    let mut call: Call = Box::pin(yield_after_turn(async move {
        let result = session
            .call(
                &tool,
                args,
                CallOptions {
                    skip_structured: true,
                    ..CallOptions::default()
                },
            )
            .await;
        render::batch_entry(&line_id, &tool, &result, text)
    }));
    // A spurious poll is allowed by the Future contract; the task's first poll
    // re-registers the real waker with whatever the call is waiting on. The
    // first poll is exempt from tokio's cooperative budget: the reader polls
    // call after call without yielding, and once the budget is spent every
    // call would stop at its first await instead of where it has taken its
    // place.
    let first = std::pin::pin!(tokio::task::coop::unconstrained(call.as_mut()))
        .poll(&mut Context::from_waker(Waker::noop()));
    match first {
        Poll::Ready(line) => Started::Done(line),
        Poll::Pending => Started::Running { id, call },
    }
}

/// Prints the lines in input order as they finish. Lines are written as
/// soon as they are next in order, but flushed together: before waiting for
/// a call still running or for more input, and at the end (one `write` for a
/// run of finished calls instead of one each). The reader hands calls over
/// in runs too (all the lines it read before it would wait for input), so a
/// batch of calls that finish at once costs a few wake-ups, not one per line.
async fn print_in_order(
    mut receiver: mpsc::UnboundedReceiver<Vec<Pending>>,
) -> std::io::Result<()> {
    let mut stdout = tokio::io::BufWriter::with_capacity(64 * 1024, tokio::io::stdout());
    let mut run = Vec::new().into_iter();
    let written = async {
        loop {
            let pending = match run.next() {
                Some(pending) => pending,
                None => match receiver.try_recv() {
                    Ok(next) => {
                        run = next.into_iter();
                        continue;
                    }
                    Err(mpsc::error::TryRecvError::Empty) => {
                        stdout.flush().await?;
                        match receiver.recv().await {
                            Some(next) => {
                                run = next.into_iter();
                                continue;
                            }
                            None => break,
                        }
                    }
                    Err(mpsc::error::TryRecvError::Disconnected) => break,
                },
            };
            let lines = match pending {
                Pending::Done(line) => vec![line],
                Pending::Run { ids, task } => {
                    if !task.is_finished() {
                        stdout.flush().await?;
                    }
                    match task.await {
                        Ok(lines) => lines,
                        Err(error) => {
                            let message =
                                format!("Internal error: the call did not finish ({error}).");
                            ids.iter()
                                .map(|id| {
                                    tracing::error!("batch call {id} failed: {error}");
                                    render::batch_line(id, &ToolResult::error(message.clone()))
                                })
                                .collect()
                        }
                    }
                }
            };
            for line in lines {
                stdout.write_all(line.as_bytes()).await?;
                stdout.write_all(b"\n").await?;
            }
        }
        stdout.flush().await
    }
    .await;
    match written {
        // stdout closed: nothing more can be reported.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_a_line_and_defaults_missing_args_to_an_empty_object() {
        let request = parse_line(r#"{"id":7,"tool":"ls"}"#, 1).unwrap();
        assert_eq!(
            request,
            Request {
                id: json!(7),
                tool: "ls".to_owned(),
                args: json!({})
            }
        );
    }

    #[test]
    fn reports_a_malformed_line_with_its_number_and_the_expected_shape() {
        let (id, message) = parse_line("{nope", 3).unwrap_err();
        assert_eq!(id, Value::Null);
        assert!(message.starts_with("Invalid JSON on line 3 ("), "{message}");
        assert!(message.contains(r#""tool":"NAME""#), "{message}");
    }

    #[test]
    fn keeps_the_id_when_the_tool_is_missing() {
        let (id, message) = parse_line(r#"{"id":"x","args":{}}"#, 2).unwrap_err();
        assert_eq!(id, json!("x"));
        assert!(message.starts_with("Line 2 has no \"tool\""), "{message}");
    }
}
