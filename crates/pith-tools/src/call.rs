//! The call pipeline every tool runs through (see the contract on
//! [`Tool`]): repair, hooks, validation, cancellation, the file's queue,
//! `execute`, after-hooks, and last the lines of the session's background
//! jobs that ended since its previous result. One place, so a tool's
//! `execute` starts with its own logic and a host's tools get the same
//! treatment as the built-in ones.
//!
//! # Hooks inside the queue
//!
//! For a [`QueueUse::Target`] tool (write, edit) the arguments are validated
//! and the target path resolved once, before the queue; holding the file's
//! turn, the before-hooks run and the workspace write check. A hook's rewrite
//! is validated again (the rewritten arguments are what runs) and its path
//! is resolved again only when the hook changed the path text; a rewrite that
//! moves the call to another file is refused, because the approval happened
//! inside this file's queue. The after-hooks see the arguments that ran.
//!
//! A [`QueueUse::Files`] tool (apply_patch, undo) names its files only once
//! its arguments (or the journal) are read; it locks them all and runs the
//! before-hooks itself, once per file inside their turns, and reports a rewrite
//! ([`ToolContext::ran_with`]) so that the after-hooks see what ran.
//!
//! # Hooks that call tools
//!
//! A [`QueueUse::Turn`] call (read) holds its place in arrival order while
//! its before-hooks run, before it enters its file's queue, and every later
//! call on the same file system waits for that place. A hook that calls a
//! queued tool of the same tool set and awaits it would wait for its own
//! call: the pipeline marks the task while such hooks run
//! ([`HOOKS_HOLD_TURN`]) and refuses a queued call made from it at once. A
//! hook that hands the call to another task is not seen; a hook inside a
//! file's queue (write, edit, apply_patch, undo) has given its place up and
//! may call file tools on other files, not on the file it approves (that
//! file's turn is held until the hook returns). Such a call takes the place
//! of the call it is made in, not a place after every call that arrived
//! since: it waits for no turn, only for its own file's queue (an `undo` that
//! arrived later waits for the earlier call, so it must not wait for the undo).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::args::parse_args;
use crate::paths::describe_fs_error;
use crate::policy::Access;
use crate::queue::{ExclusiveError, Ticket, exclusive};
use crate::session::Session;
use crate::tool::{
    CallOptions, QueueUse, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput, ToolResult,
};

tokio::task_local! {
    /// While the before-hooks of a call that holds an unused place in
    /// arrival order run on this task: that queue (by address) and the
    /// call's tool.
    static HOOKS_HOLD_TURN: (usize, &'static str);
}

/// Runs the before-hooks of a call that holds its place in arrival order,
/// marking the task (see the module docs).
async fn authorize_holding_turn(
    context: &ToolContext,
    name: &'static str,
    args: Value,
) -> Result<Value, ToolError> {
    HOOKS_HOLD_TURN
        .scope((context.queue.id(), name), context.authorize(name, args))
        .await
}

/// One call of `name` by `session`: the whole pipeline, then the notices of
/// the session's jobs that ended (`[job 3 ... exited with code 1; ...]`)
/// added to whatever result the call has, an error's too.
pub(crate) async fn call(
    session: &Session,
    ticket: Option<Ticket>,
    name: &str,
    args: Value,
    options: CallOptions,
) -> ToolResult {
    let mut result = dispatch(session, ticket, name, args, options).await;
    crate::tools::jobs::add_notices(&mut result, &session.jobs().take_notices());
    result
}

/// Finds the tool and runs the call through it.
async fn dispatch(
    session: &Session,
    ticket: Option<Ticket>,
    name: &str,
    args: Value,
    options: CallOptions,
) -> ToolResult {
    let toolset = session.toolset();
    let Some(tool) = toolset.tool(name) else {
        let names: Vec<&str> = toolset.definitions().iter().map(|d| d.name).collect();
        return ToolError::invalid(crate::messages::pipeline::tool_not_found(
            &crate::paths::clip_chars(name, 60),
            &names,
        ))
        .into();
    };
    if tool.takes_queue_turn()
        && let Ok((queue, outer)) = HOOKS_HOLD_TURN.try_with(|held| *held)
        && queue == toolset.queue().id()
    {
        let name = tool.name();
        return ToolError::refused(crate::messages::pipeline::called_from_hook(name, outer)).into();
    }
    // A tool that never queues gives its place up at once.
    let ticket = tool
        .takes_queue_turn()
        .then(|| ticket.unwrap_or_else(|| toolset.queue().ticket_on(&toolset.env().fs)));
    if ticket.is_none() {
        crate::queue::turn_taken().await;
    }
    if options.cancel.is_cancelled() {
        return ToolError::aborted().into();
    }
    let context = session.context(ticket, &options);
    Arc::clone(tool).call(args, context, options.cancel).await
}

/// A tool behind the pipeline: what a [`ToolSet`](crate::toolset::ToolSet) stores.
#[async_trait]
pub(crate) trait RegisteredTool: Send + Sync {
    /// The tool's name (its definition's), without building the definition.
    fn name(&self) -> &'static str {
        self.definition().name
    }

    /// The definition.
    fn definition(&self) -> &ToolDefinition;

    /// Whether a call takes its place in arrival order when it arrives.
    fn takes_queue_turn(&self) -> bool;

    /// The tool's argument repair alone (the pipeline's first step).
    fn repair_args(&self, args: Value) -> Value;

    /// Runs one call through the whole pipeline.
    async fn call(
        self: Arc<Self>,
        args: Value,
        context: ToolContext,
        cancel: CancellationToken,
    ) -> ToolResult;
}

#[async_trait]
impl<T: Tool> RegisteredTool for T {
    fn definition(&self) -> &ToolDefinition {
        Tool::definition(self)
    }

    fn takes_queue_turn(&self) -> bool {
        self.queue_use() != QueueUse::None
    }

    fn repair_args(&self, args: Value) -> Value {
        self.repair(args)
    }

    async fn call(
        self: Arc<Self>,
        args: Value,
        context: ToolContext,
        cancel: CancellationToken,
    ) -> ToolResult {
        let args = self.repair(args);
        let name = Tool::definition(&*self).name;
        let hooks = context.config.hooks.clone();
        if self.queue_use() == QueueUse::Target {
            let (result, ran) = in_target_queue(self, args, &context, cancel).await;
            return if hooks.is_empty() {
                result.into()
            } else {
                hooks.after(name, &ran, &context.cwd, result.into()).await
            };
        }
        if hooks.is_empty() {
            return run(&*self, args, &context, cancel).await.into();
        }
        if self.queue_use() == QueueUse::Files {
            let (result, ran) = hooked_per_file(&*self, args, context.clone(), cancel).await;
            return hooks.after(name, &ran, &context.cwd, result.into()).await;
        }
        let approved = if self.takes_queue_turn() {
            authorize_holding_turn(&context, name, args).await
        } else {
            context.authorize(name, args).await
        };
        let args = match approved {
            Ok(args) => args,
            Err(blocked) => return blocked.into(),
        };
        let result = run(&*self, args.clone(), &context, cancel).await;
        hooks.after(name, &args, &context.cwd, result.into()).await
    }
}

/// Prechecks, validates and checks `args` (steps 3 and 4 of the contract).
fn parse<T: Tool>(tool: &T, args: Value) -> Result<T::Args, ToolError> {
    tool.precheck(&args)?;
    let definition = Tool::definition(tool);
    let parsed = parse_args(definition.name, &definition.input_schema, args)?;
    tool.validate(&parsed)?;
    Ok(parsed)
}

/// Validates the arguments and runs a tool that does not change a file.
async fn run<T: Tool>(
    tool: &T,
    args: Value,
    context: &ToolContext,
    cancel: CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let parsed = parse(tool, args)?;
    ToolError::check_cancelled(&cancel)?;
    tool.execute(parsed, context, cancel).await
}

/// Runs a [`QueueUse::Files`] call, whose tool runs the before-hooks per file
/// inside the files' turns; returns the result and the arguments that ran.
async fn hooked_per_file<T: Tool>(
    tool: &T,
    args: Value,
    mut context: ToolContext,
    cancel: CancellationToken,
) -> (Result<ToolOutput, ToolError>, Value) {
    let ran = Arc::new(std::sync::Mutex::new(None));
    context.ran = Some(Arc::clone(&ran));
    let result = run(tool, args.clone(), &context, cancel).await;
    let rewritten = ran
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    (result, rewritten.unwrap_or(args))
}

/// Runs a [`QueueUse::Target`] call inside its file's queue; returns the
/// result and the arguments that ran (for the after-hooks; `Null` when there
/// are no hooks: the arguments, possibly large, are then never copied).
async fn in_target_queue<T: Tool>(
    tool: Arc<T>,
    args: Value,
    context: &ToolContext,
    cancel: CancellationToken,
) -> (Result<ToolOutput, ToolError>, Value) {
    let name = Tool::definition(&*tool).name;
    let hooked = !context.config.hooks.is_empty();
    let (parsed, args) = if hooked {
        (parse(&*tool, args.clone()), args)
    } else {
        (parse(&*tool, args), Value::Null)
    };
    let prepared = parsed.and_then(|parsed| {
        let raw_path = tool.target(&parsed).map(str::to_owned);
        let path = raw_path
            .as_deref()
            .map(|raw| context.resolve(raw))
            .transpose()?;
        Ok((parsed, raw_path, path))
    });
    let (parsed, raw_path, path) = match prepared {
        Ok(prepared) => prepared,
        Err(error) => return (Err(error), args),
    };
    if let Err(error) = ToolError::check_cancelled(&cancel) {
        return (Err(error), args);
    }
    let Some(path) = path else {
        // No file named: no queue, the hooks run as for any tool.
        let args = match authorize_holding_turn(context, name, args.clone()).await {
            Ok(args) => args,
            Err(blocked) => return (Err(blocked), args),
        };
        let result = match parse(&*tool, args.clone()) {
            Ok(parsed) => tool.execute(parsed, context, cancel).await,
            Err(error) => Err(error),
        };
        return (result, args);
    };
    let mut inner = context.clone();
    inner.target = Some(path.clone());
    let ticket = context.ticket();
    let unrun = if hooked { args.clone() } else { Value::Null };
    let work = {
        let path = path.clone();
        move |token: CancellationToken| async move {
            let mut ran = args;
            let result = async {
                let mut parsed = parsed;
                if hooked {
                    let approved = inner.authorize(name, ran.clone()).await?;
                    if approved != ran {
                        let rewritten = parse(&*tool, approved.clone())?;
                        let new_raw = tool.target(&rewritten);
                        if new_raw != raw_path.as_deref()
                            && new_raw.map(|raw| inner.resolve(raw)).transpose()?
                                != Some(path.clone())
                        {
                            return Err(moved_by_hook(name));
                        }
                        parsed = rewritten;
                        ran = approved;
                    }
                }
                inner.check_path(&path, Access::Write).await?;
                ToolError::check_cancelled(&token)?;
                tool.execute(parsed, &inner, token).await
            }
            .await;
            (result, ran)
        }
    };
    // The key is computed through the view the tool writes through (confined
    // beneath the roots when the workspace is), so it names the file written.
    match exclusive(
        &context.queue,
        context.write_fs(),
        &path,
        ticket,
        &cancel,
        work,
    )
    .await
    {
        Ok((result, ran)) => (result, ran),
        Err(ExclusiveError::Lock(error)) => (
            Err(ToolError::internal(describe_fs_error(&error), error)),
            unrun,
        ),
        Err(ExclusiveError::Panicked(panic)) => (
            Err(ToolError::internal(
                crate::messages::pipeline::internal(name, path.display()),
                panic,
            )),
            unrun,
        ),
    }
}

/// The error for a hook that moved a call to another file.
fn moved_by_hook(tool: &str) -> ToolError {
    ToolError::refused(crate::messages::pipeline::moved_by_hook(tool))
}
