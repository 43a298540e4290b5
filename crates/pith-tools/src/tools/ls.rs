//! `ls`: list a directory.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Describe, READ_ONLY, define};
use crate::{Tool, ToolContext, ToolDefinition, ToolError, ToolResult, parse_args};

/// Arguments of `ls`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct LsArgs {
    /// Directory to list (default: current directory)
    path: Option<String>,
    /// Maximum number of entries to return (default: 500)
    limit: Option<u64>,
}

pub(crate) struct LsTool {
    definition: ToolDefinition,
}

impl LsTool {
    pub(crate) fn new() -> LsTool {
        LsTool {
            definition: define::<LsArgs>(Describe {
                name: "ls",
                title: "List directory",
                description: "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).",
                prompt_snippet: "List directory contents",
                prompt_guidelines: &[],
                annotations: READ_ONLY,
            }),
        }
    }
}

#[async_trait]
impl Tool for LsTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(
        &self,
        args: Value,
        _context: &ToolContext,
        _cancel: CancellationToken,
    ) -> ToolResult {
        let args: LsArgs = match parse_args("ls", &self.definition.input_schema, args) {
            Ok(args) => args,
            Err(error) => return ToolError::from(error).into(),
        };
        let _ = (args.path, args.limit);
        ToolResult::error("ls is not built yet")
    }
}
