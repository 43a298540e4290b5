//! `edit`: exact-then-fuzzy text replacement through the pith-text engine.
//!
//! Arguments are repaired first (see [`repair_edit_args`]); then, inside the
//! mutation queue, the file is read, checked to be UTF-8, edited all-or-nothing
//! by [`pith_text::apply_edits`] and replaced atomically. Editing does not
//! require a prior read: a unique `oldText` match is the check.

mod budget;
mod large;
mod repair;
mod run;
mod spliced;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Describe, define};
use crate::tool::{
    QueueUse, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, ToolOutput,
};
use repair::repair_edit_args;

/// One replacement.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct EditItem {
    /// Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.
    #[serde(rename = "oldText")]
    old_text: String,
    /// Replacement text for this targeted edit.
    #[serde(rename = "newText")]
    new_text: String,
    /// Replace every exact occurrence of oldText instead of requiring a unique one (default: false; exact matches only).
    #[serde(rename = "replaceAll")]
    replace_all: Option<bool>,
}

/// Arguments of `edit`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct EditArgs {
    /// Path to the file to edit (relative or absolute)
    path: String,
    /// One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.
    edits: Vec<EditItem>,
}

pub(crate) struct EditTool {
    definition: ToolDefinition,
}

impl EditTool {
    pub(crate) fn new() -> EditTool {
        EditTool {
            definition: define::<EditArgs>(Describe {
                name: "edit",
                title: "Edit file",
                description: "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
                prompt_snippet: "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
                prompt_guidelines: &[
                    "Use edit for precise changes (edits[].oldText must match exactly)",
                    "When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] instead of multiple edit calls",
                    "Each edits[].oldText is matched against the original file, not after earlier edits are applied. Do not emit overlapping or nested edits. Merge nearby changes into one edit.",
                    "Keep edits[].oldText as small as possible while still being unique in the file. Do not pad with large unchanged regions.",
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

/// The engine's edits, and which of them replace every occurrence.
pub(crate) fn edits_of(items: Vec<EditItem>) -> (Vec<pith_text::Edit>, Vec<bool>) {
    items
        .into_iter()
        .map(|item| {
            let edit = pith_text::Edit {
                old_text: item.old_text,
                new_text: item.new_text,
            };
            (edit, item.replace_all.unwrap_or(false))
        })
        .unzip()
}

#[async_trait]
impl Tool for EditTool {
    type Args = EditArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn repair(&self, args: Value) -> Value {
        repair_edit_args(args)
    }

    fn validate(&self, args: &EditArgs) -> Result<(), ToolError> {
        if args.edits.is_empty() {
            return Err(ToolError::invalid(crate::messages::edit::NO_EDITS));
        }
        Ok(())
    }

    fn queue_use(&self) -> QueueUse {
        QueueUse::Target
    }

    fn target<'a>(&self, args: &'a EditArgs) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn execute(
        &self,
        args: EditArgs,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let (edits, replace_all) = edits_of(args.edits);
        let job = run::EditJob {
            fs: &**context.write_fs(),
            context,
            path: context.resolve_target(&args.path)?,
            raw_path: args.path,
            edits,
            replace_all,
        };
        job.run(&cancel).await
    }
}

#[cfg(test)]
mod tests;
