//! `edit`: exact-then-fuzzy text replacement through the pith-text engine.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Describe, define};
use crate::{
    Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, ToolResult, parse_args,
};

/// One replacement.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct EditItem {
    /// Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.
    #[serde(rename = "oldText")]
    old_text: String,
    /// Replacement text for this targeted edit.
    #[serde(rename = "newText")]
    new_text: String,
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
                },
            }),
        }
    }
}

#[async_trait]
impl Tool for EditTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(
        &self,
        args: Value,
        _context: &ToolContext,
        _cancel: CancellationToken,
    ) -> ToolResult {
        let args: EditArgs = match parse_args("edit", &self.definition.input_schema, args) {
            Ok(args) => args,
            Err(error) => return ToolError::from(error).into(),
        };
        let _ = args.path;
        let _ = args.edits.first().map(|e| (&e.old_text, &e.new_text));
        ToolResult::error("edit is not built yet")
    }
}
