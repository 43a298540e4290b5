//! `apply_patch`: the `*** Begin Patch` envelope, applied to several files
//! all or nothing (optional; `--tools …,apply_patch`).
//!
//! Every file's queue is taken at once in one fixed order
//! ([`MutationQueue::lock_all_in_turn`](crate::queue::MutationQueue::lock_all_in_turn)),
//! every file is staged (read, checked, hunks applied in memory), and only when
//! all of them staged are they committed, each atomically and journaled first:
//! new files (added, or move targets) first, then updates in place, then the
//! sources of moves and the deleted files, so that at every step each path the
//! patch names holds its old or its new content and nothing is lost. A commit
//! that fails half-way puts back the files already committed.

mod commit;
mod hooks;
mod stage;

use std::path::PathBuf;

use async_trait::async_trait;
use pith_text::{FileChange, parse_patch};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Describe, define};
use crate::messages::apply_patch as messages;
use crate::paths::describe_fs_error;
use crate::queue::{ExclusiveError, exclusive_all};
use crate::tool::{
    QueueUse, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, ToolOutput,
};

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ApplyPatchArgs {
    /// The patch: '*** Begin Patch', then per file '*** Add File: P' (+lines), '*** Delete File: P' or '*** Update File: P' (optional '*** Move to: Q', '@@' hunks of ' ', '-', '+' lines), then '*** End Patch'.
    patch: String,
}

pub(crate) struct ApplyPatchTool {
    definition: ToolDefinition,
}

impl ApplyPatchTool {
    pub(crate) fn new() -> ApplyPatchTool {
        ApplyPatchTool {
            definition: define::<ApplyPatchArgs>(Describe {
                name: "apply_patch",
                title: "Apply patch",
                description: "Add, delete, update and move files with one patch in the '*** Begin Patch' format. All or nothing: if any hunk fails, no file changes. Hunk context must match one place in the file (quotes and indentation may differ).",
                prompt_snippet: "Change several files at once with a '*** Begin Patch' patch, all or nothing",
                prompt_guidelines: &[
                    "Use apply_patch for changes that span several files; give each hunk 3 lines of context.",
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

/// One file operation of a parsed patch, its paths resolved.
#[derive(Debug)]
pub(crate) struct Operation {
    /// The path as the patch wrote it.
    pub(crate) raw: String,
    /// The resolved path.
    pub(crate) path: PathBuf,
    /// `*** Move to:` resolved, with the raw text.
    pub(crate) move_to: Option<(String, PathBuf)>,
    pub(crate) change: FileChange,
    /// 1-based line of the patch where the file's section starts.
    pub(crate) line: usize,
}

fn operations(patch: &str, context: &ToolContext) -> Result<Vec<Operation>, ToolError> {
    let patch = parse_patch(patch).map_err(|error| ToolError::new(messages::invalid(error)))?;
    let mut operations = Vec::with_capacity(patch.files.len());
    let mut seen: Vec<PathBuf> = Vec::new();
    for file in patch.files {
        let path = context.resolve(&file.path)?;
        let move_to = match &file.change {
            FileChange::Update {
                move_to: Some(target),
                ..
            } => Some((target.clone(), context.resolve(target)?)),
            _ => None,
        };
        for named in std::iter::once(&path).chain(move_to.as_ref().map(|(_, p)| p)) {
            if seen.contains(named) {
                return Err(ToolError::new(messages::appears_twice(
                    named.display(),
                    file.line,
                )));
            }
            seen.push(named.clone());
        }
        operations.push(Operation {
            raw: file.path,
            path,
            move_to,
            change: file.change,
            line: file.line,
        });
    }
    Ok(operations)
}

#[async_trait]
impl Tool for ApplyPatchTool {
    type Args = ApplyPatchArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// The call takes its place on arrival and, once the patch names its
    /// files, waits for all their turns at once ([`crate::queue::exclusive_all`]);
    /// holding them, the before-hooks run once per file, each on that file's
    /// section of the patch ([`hooks::authorize_each`]).
    fn queue_use(&self) -> QueueUse {
        QueueUse::Files
    }

    fn repair(&self, args: Value) -> Value {
        // A bare patch string, or the patch under `input` (Codex's freeform tool).
        match args {
            Value::String(patch) => serde_json::json!({ "patch": patch }),
            Value::Object(mut map) if !map.contains_key("patch") => {
                if let Some(patch) = map.remove("input") {
                    map.insert("patch".to_owned(), patch);
                }
                Value::Object(map)
            }
            other => other,
        }
    }

    async fn execute(
        &self,
        args: ApplyPatchArgs,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let operations = operations(&args.patch, context)?;
        ToolError::check_cancelled(&cancel)?;
        let paths: Vec<PathBuf> = operations
            .iter()
            .flat_map(|op| {
                std::iter::once(op.path.clone()).chain(op.move_to.clone().map(|(_, p)| p))
            })
            .collect();
        let job_context = context.clone();
        let work = move |token: CancellationToken| async move {
            let operations = hooks::authorize_each(&job_context, &args.patch, operations).await?;
            ToolError::check_cancelled(&token)?;
            let staged = stage::stage_all(&job_context, operations).await?;
            ToolError::check_cancelled(&token)?;
            commit::commit_all(&job_context, staged).await
        };
        match exclusive_all(
            &context.queue,
            &context.env.fs,
            paths,
            context.ticket(),
            &cancel,
            work,
        )
        .await
        {
            Ok(result) => result,
            Err(ExclusiveError::Lock(error)) => {
                Err(ToolError::internal(describe_fs_error(&error), error))
            }
            Err(ExclusiveError::Panicked(panic)) => {
                Err(ToolError::internal(messages::INTERNAL, panic))
            }
        }
    }
}
