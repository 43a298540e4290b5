//! `pith batch`: JSON-lines calls on stdin, run concurrently in one session, results on
//! stdout in input order.
//!
//! Each line's call starts as soon as the line is read. Before the call is handed to its
//! own task it is polled once right here, so the synchronous start of every call (argument
//! validation, its place in the file mutation queue) happens in input order even though
//! the calls then run concurrently.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use pith_env::Env;
use pith_tools::{CallOptions, OverwritePolicy, Session, ToolResult};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
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
    Done(String),
    Running { id: Value, task: JoinHandle<String> },
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
            ready.push(match parse_line(&text, number) {
                Ok(request) => start(&session, request, text_format),
                Err((id, message)) => Pending::Done(render::batch_entry(
                    &id,
                    "",
                    &ToolResult::error(message),
                    text_format,
                )),
            });
        }
        // Hand the started calls over before waiting for more input (the next
        // read would wait when nothing is buffered), or every so many lines.
        if (stdin.buffer().is_empty() || ready.len() >= HANDOVER_LINES)
            && !ready.is_empty()
            && sender.send(std::mem::take(&mut ready)).is_err()
        {
            break; // the printer stopped: stdout is gone
        }
    }
    if !ready.is_empty() {
        let _ = sender.send(ready);
    }
    drop(sender);
    printer.await??;
    Ok(0)
}

/// Parses one line; a bad line becomes its error message (with the id when it has one).
fn parse_line(text: &str, number: usize) -> Result<Request, (Value, String)> {
    const SHAPE: &str = r#"each line must be {"id":...,"tool":"NAME","args":{...}}"#;
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

/// Starts a call: polls it once here (in input order), then lets a task finish it.
fn start(session: &Session, request: Request, text: bool) -> Pending {
    let Request { id, tool, args } = request;
    let session = session.clone();
    let line_id = id.clone();
    let mut call = Box::pin(async move {
        let result = session.call(&tool, args, CallOptions::default()).await;
        render::batch_entry(&line_id, &tool, &result, text)
    });
    // A spurious poll is allowed by the Future contract; the task's first poll
    // re-registers the real waker with whatever the call is waiting on. The
    // first poll is exempt from tokio's cooperative budget: the reader polls
    // call after call without yielding, and once the budget is spent every
    // call would stop at its first await and go to a task on another worker
    // (a thread hand-off per call) although most, like a small read, finish
    // in this poll.
    let first = std::pin::pin!(tokio::task::coop::unconstrained(call.as_mut()))
        .poll(&mut Context::from_waker(Waker::noop()));
    match first {
        Poll::Ready(line) => Pending::Done(line),
        Poll::Pending => Pending::Running {
            id,
            task: tokio::spawn(call),
        },
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
            let line = match pending {
                Pending::Done(line) => line,
                Pending::Running { id, task } => {
                    if !task.is_finished() {
                        stdout.flush().await?;
                    }
                    match task.await {
                        Ok(line) => line,
                        Err(error) => {
                            tracing::error!("batch call {id} failed: {error}");
                            let message =
                                format!("Internal error: the call did not finish ({error}).");
                            render::batch_line(&id, &ToolResult::error(message))
                        }
                    }
                }
            };
            stdout.write_all(line.as_bytes()).await?;
            stdout.write_all(b"\n").await?;
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
