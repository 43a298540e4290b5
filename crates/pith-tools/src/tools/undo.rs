//! `undo`: restores files from the undo journal (optional; `--tools …,undo`).
//!
//! The call takes its place on arrival and waits until every call that
//! arrived before it has made its change; only then is the journal read (an
//! undo after a write in one batch undoes that write), and the turns of the
//! files it names are taken at once. Holding them, the before-hooks run
//! once per file, in path order, each on the call's arguments with that
//! file's `path` added (`{"last": 1, "path": "/abs/a.txt"}`). A hook may
//! allow or block a file (the whole undo is refused; no file changes), not
//! rewrite it: which files an undo restores is the journal's to say.

use std::path::PathBuf;
use std::time::SystemTime;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Describe, define};
use crate::details::UndoDetails;
use crate::journal::undo::ApproveFiles;
use crate::journal::{UndoOptions, UndoSelector, parse_since};
use crate::messages::undo as messages;
use crate::tool::{
    QueueUse, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, ToolOutput,
};

/// Arguments of `undo` (serialized again, with a file's `path`, for the
/// before-hooks).
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct UndoArgs {
    /// Undo the changes of the last N groups of calls (default 1: the last group). Undoing an undo redoes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    last: Option<u32>,
    /// Undo one call's changes, by the call id a listing or an undo result shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    call: Option<String>,
    /// Undo every change since this time: 10m, 2h, 1d, or a UTC time like 2026-11-30T14:05:00Z.
    #[serde(skip_serializing_if = "Option::is_none")]
    since: Option<String>,
    /// Restore even files that changed since (losing those changes). Default false.
    #[serde(skip_serializing_if = "Option::is_none")]
    force: Option<bool>,
    /// Only show what would be restored, with diffs. Default false.
    #[serde(rename = "dryRun", skip_serializing_if = "Option::is_none")]
    dry_run: Option<bool>,
}

pub(crate) struct UndoTool {
    definition: ToolDefinition,
}

impl UndoTool {
    pub(crate) fn new() -> UndoTool {
        UndoTool {
            definition: define::<UndoArgs>(Describe {
                name: "undo",
                title: "Undo file changes",
                description: "Undo earlier write, edit and apply_patch changes from the undo journal: the last group of calls by default, or one call, or everything since a time. Refuses files changed since unless force. An undo can itself be undone (redo).",
                prompt_snippet: "Undo earlier file changes (write, edit, apply_patch)",
                prompt_guidelines: &[
                    "Use undo to revert your own recent file changes instead of rewriting files by hand.",
                ],
                annotations: ToolAnnotations {
                    read_only: false,
                    destructive: true,
                    idempotent: false,
                    open_world: false,
                },
            }),
        }
    }
}

/// The before-hooks, run per file inside the files' turns.
struct Hooks {
    context: ToolContext,
    /// The call's arguments as validated.
    args: Value,
}

#[async_trait]
impl ApproveFiles for Hooks {
    async fn approve(&self, paths: &[PathBuf]) -> Result<(), ToolError> {
        for path in paths {
            let mut args = self.args.clone();
            if let Value::Object(map) = &mut args {
                map.insert("path".to_owned(), json!(path.display().to_string()));
            }
            let decided = self.context.authorize("undo", args.clone()).await?;
            if decided != args {
                return Err(ToolError::refused(messages::hook_rewrite(path.display())));
            }
        }
        Ok(())
    }
}

fn options(args: UndoArgs) -> Result<UndoOptions, ToolError> {
    let chosen = [
        args.last.is_some(),
        args.call.is_some(),
        args.since.is_some(),
    ];
    if chosen.iter().filter(|set| **set).count() > 1 {
        return Err(ToolError::new(messages::ONE_SELECTOR));
    }
    let selector = if let Some(call) = args.call {
        UndoSelector::Call(call)
    } else if let Some(since) = args.since {
        UndoSelector::Since(parse_since(&since, SystemTime::now()).map_err(ToolError::new)?)
    } else {
        UndoSelector::Last(args.last.unwrap_or(1).max(1) as usize)
    };
    Ok(UndoOptions {
        selector,
        force: args.force.unwrap_or(false),
        dry_run: args.dry_run.unwrap_or(false),
    })
}

#[async_trait]
impl Tool for UndoTool {
    type Args = UndoArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// The call takes its place on arrival; once every earlier call has made
    /// its change, the journal names its files and it waits for all their
    /// turns at once; holding them, the before-hooks run once per file (see
    /// the module docs).
    fn queue_use(&self) -> QueueUse {
        QueueUse::Files
    }

    async fn execute(
        &self,
        args: UndoArgs,
        context: &ToolContext,
        _cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let approve: Option<Box<dyn ApproveFiles>> = if context.config.hooks.is_empty() {
            None
        } else {
            Some(Box::new(Hooks {
                context: context.clone(),
                args: serde_json::to_value(&args).unwrap_or_default(),
            }))
        };
        let options = options(args)?;
        match context
            .session
            .undo_in_turn(context.ticket(), options, None, approve)
            .await
        {
            Ok(report) => {
                let files: Vec<Value> = report
                    .files
                    .iter()
                    .map(|file| {
                        let outcome = serde_json::to_value(&file.outcome).unwrap_or_default();
                        json!({"path": file.path, "outcome": outcome["outcome"]})
                    })
                    .collect();
                Ok(ToolOutput::text(report.summary())
                    .with_structured(
                        json!({"files": files, "dryRun": report.dry_run, "call": report.call}),
                    )
                    .with_details_of::<UndoDetails>(&report))
            }
            Err(error) => Err(error),
        }
    }
}
