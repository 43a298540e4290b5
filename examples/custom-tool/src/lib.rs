//! A host's own tool for pith: `append` adds a line to a file.
//!
//! It declares [`QueueUse::Target`], so each call runs inside that file's
//! mutation queue like `write` and `edit`: the before-hooks and the workspace
//! write check run there, and two appends to one file never interleave.
//! Registering it is one line: `ToolSet::builder(env).tool(AppendTool::new())`
//! for a library host, or [`pith::run_with`] for the whole `pith` binary
//! (`src/main.rs`).

use async_trait::async_trait;
use pith_env::FsErrorKind;
use pith_tools::{
    QueueUse, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, ToolOutput, schema_of,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Arguments of `append`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AppendArgs {
    /// Path to the file to append to (relative or absolute); created if missing
    pub path: String,
    /// The line to append (a newline is added)
    pub line: String,
}

/// The `append` tool.
pub struct AppendTool {
    definition: ToolDefinition,
}

impl AppendTool {
    /// The tool with its definition.
    pub fn new() -> AppendTool {
        AppendTool {
            definition: ToolDefinition {
                name: "append",
                title: "Append a line",
                description: "Append one line to a file, creating the file if it does not exist.",
                input_schema: schema_of::<AppendArgs>(),
                output_schema: json!({
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "bytes": {"type": "integer"}},
                    "required": ["path", "bytes"],
                }),
                prompt_snippet: "Append a line to a file",
                prompt_guidelines: &[],
                annotations: ToolAnnotations {
                    read_only: false,
                    destructive: false,
                    idempotent: false,
                    open_world: false,
                },
            },
        }
    }
}

impl Default for AppendTool {
    fn default() -> AppendTool {
        AppendTool::new()
    }
}

#[async_trait]
impl Tool for AppendTool {
    type Args = AppendArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn validate(&self, args: &AppendArgs) -> Result<(), ToolError> {
        if args.line.contains('\n') {
            return Err(ToolError::invalid(
                "line must be a single line; call append once per line.",
            ));
        }
        Ok(())
    }

    fn queue_use(&self) -> QueueUse {
        QueueUse::Target
    }

    fn target<'a>(&self, args: &'a AppendArgs) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn execute(
        &self,
        args: AppendArgs,
        context: &ToolContext,
        _cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let path = context.resolve_target(&args.path)?;
        let fs = context.write_fs();
        let mut bytes = match fs.read(&path).await {
            Ok(bytes) => bytes,
            Err(error) if error.kind == FsErrorKind::NotFound => Vec::new(),
            Err(error) => {
                return Err(ToolError::new(format!(
                    "Cannot append to {}: {error}",
                    args.path
                )));
            }
        };
        bytes.extend_from_slice(args.line.as_bytes());
        bytes.push(b'\n');
        fs.write_atomic(&path, &bytes)
            .await
            .map_err(|error| ToolError::new(format!("Cannot append to {}: {error}", args.path)))?;
        Ok(
            ToolOutput::text(format!("Appended 1 line to {}", args.path))
                .with_structured(json!({"path": args.path, "bytes": bytes.len()})),
        )
    }
}
