//! `find`: find files by glob.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Describe, READ_ONLY, define};
use crate::{Tool, ToolContext, ToolDefinition, ToolError, ToolResult, parse_args};

/// Arguments of `find`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct FindArgs {
    /// Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'
    pattern: String,
    /// Directory to search in (default: current directory)
    path: Option<String>,
    /// Maximum number of results (default: 1000)
    limit: Option<u64>,
}

pub(crate) struct FindTool {
    definition: ToolDefinition,
}

impl FindTool {
    pub(crate) fn new() -> FindTool {
        FindTool {
            definition: define::<FindArgs>(Describe {
                name: "find",
                title: "Find files",
                description: "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).",
                prompt_snippet: "Find files by glob pattern (respects .gitignore)",
                prompt_guidelines: &[],
                annotations: READ_ONLY,
            }),
        }
    }
}

#[async_trait]
impl Tool for FindTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(
        &self,
        args: Value,
        _context: &ToolContext,
        _cancel: CancellationToken,
    ) -> ToolResult {
        let args: FindArgs = match parse_args("find", &self.definition.input_schema, args) {
            Ok(args) => args,
            Err(error) => return ToolError::from(error).into(),
        };
        let _ = (args.pattern, args.path, args.limit);
        ToolResult::error("find is not built yet")
    }
}
