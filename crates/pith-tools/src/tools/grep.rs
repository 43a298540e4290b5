//! `grep`: search file contents on ripgrep's crates.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Describe, READ_ONLY, define};
use crate::{Tool, ToolContext, ToolDefinition, ToolError, ToolResult, parse_args};

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GrepArgs {
    /// Search pattern (regex or literal string)
    pattern: String,
    /// Directory or file to search (default: current directory)
    path: Option<String>,
    /// Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'
    glob: Option<String>,
    /// Case-insensitive search (default: false)
    ignore_case: Option<bool>,
    /// Treat pattern as literal string instead of regex (default: false)
    literal: Option<bool>,
    /// Number of lines to show before and after each match (default: 0)
    context: Option<u64>,
    /// Maximum number of matches to return (default: 100)
    limit: Option<u64>,
}

pub(crate) struct GrepTool {
    definition: ToolDefinition,
}

impl GrepTool {
    pub(crate) fn new() -> GrepTool {
        GrepTool {
            definition: define::<GrepArgs>(Describe {
                name: "grep",
                title: "Search file contents",
                description: "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.",
                prompt_snippet: "Search file contents for patterns (respects .gitignore)",
                prompt_guidelines: &[],
                annotations: READ_ONLY,
            }),
        }
    }
}

#[async_trait]
impl Tool for GrepTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(
        &self,
        args: Value,
        _context: &ToolContext,
        _cancel: CancellationToken,
    ) -> ToolResult {
        let args: GrepArgs = match parse_args("grep", &self.definition.input_schema, args) {
            Ok(args) => args,
            Err(error) => return ToolError::from(error).into(),
        };
        let _ = (
            args.pattern,
            args.path,
            args.glob,
            args.ignore_case,
            args.literal,
            args.context,
            args.limit,
        );
        ToolResult::error("grep is not built yet")
    }
}
