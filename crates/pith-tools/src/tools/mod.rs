//! One module per tool: its arguments, definition and logic.

use std::sync::Arc;

use schemars::JsonSchema;

use crate::args::schema_of;
use crate::call::RegisteredTool;
use crate::tool::{ToolAnnotations, ToolDefinition};

mod apply_patch;
pub(crate) mod bash;
mod edit;
mod find;
mod grep;
pub(crate) mod jobs;
mod ls;
mod output;
mod read;
mod undo;
pub(crate) mod write;

pub use bash::{BashConfig, DEFAULT_ENV, SpawnHook, SpawnRequest};
pub use read::ReadConfig;

/// Every tool name, in the canonical order.
pub const TOOL_NAMES: [&str; 8] = [
    "read", "bash", "edit", "write", "grep", "find", "ls", "jobs",
];

/// The optional tools, on only when named (`--tools …,apply_patch,undo`).
pub const OPTIONAL_TOOL_NAMES: [&str; 2] = ["apply_patch", "undo"];

/// Every tool, in the canonical order, the optional ones last. Each is built
/// (its definition's JSON Schemas generated) when first used, not here: a
/// batch of reads builds `read` alone (the ten schemas were ~9 % of a `pith
/// batch` start-up).
pub(crate) fn all() -> Vec<Arc<dyn RegisteredTool>> {
    let lazy = |name, make| -> Arc<dyn RegisteredTool> {
        Arc::new(Lazy {
            name,
            make,
            tool: std::sync::OnceLock::new(),
        })
    };
    vec![
        lazy("read", || Arc::new(read::ReadTool::new())),
        lazy("bash", || Arc::new(bash::BashTool::new())),
        lazy("edit", || Arc::new(edit::EditTool::new())),
        lazy("write", || Arc::new(write::WriteTool::new())),
        lazy("grep", || Arc::new(grep::GrepTool::new())),
        lazy("find", || Arc::new(find::FindTool::new())),
        lazy("ls", || Arc::new(ls::LsTool::new())),
        lazy("jobs", || Arc::new(jobs::JobsTool::new())),
        lazy("apply_patch", || {
            Arc::new(apply_patch::ApplyPatchTool::new())
        }),
        lazy("undo", || Arc::new(undo::UndoTool::new())),
    ]
}

/// A built-in tool built on first use; its name is known before.
struct Lazy {
    name: &'static str,
    make: fn() -> Arc<dyn RegisteredTool>,
    tool: std::sync::OnceLock<Arc<dyn RegisteredTool>>,
}

impl Lazy {
    fn tool(&self) -> &Arc<dyn RegisteredTool> {
        self.tool.get_or_init(|| {
            let tool = (self.make)();
            debug_assert_eq!(tool.definition().name, self.name);
            tool
        })
    }
}

#[async_trait::async_trait]
impl RegisteredTool for Lazy {
    fn name(&self) -> &'static str {
        self.name
    }

    fn definition(&self) -> &ToolDefinition {
        self.tool().definition()
    }

    fn takes_queue_turn(&self) -> bool {
        self.tool().takes_queue_turn()
    }

    fn repair_args(&self, args: serde_json::Value) -> serde_json::Value {
        self.tool().repair_args(args)
    }

    async fn call(
        self: Arc<Self>,
        args: serde_json::Value,
        context: crate::tool::ToolContext,
        cancel: tokio_util::sync::CancellationToken,
    ) -> crate::tool::ToolResult {
        Arc::clone(self.tool()).call(args, context, cancel).await
    }
}

/// The parts of a definition that are not derived from the argument type.
pub(crate) struct Describe {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    pub(crate) prompt_snippet: &'static str,
    pub(crate) prompt_guidelines: &'static [&'static str],
    pub(crate) annotations: ToolAnnotations,
}

/// Builds a definition whose schema comes from the argument type `A`.
pub(crate) fn define<A: JsonSchema>(describe: Describe) -> ToolDefinition {
    ToolDefinition {
        name: describe.name,
        title: describe.title,
        description: describe.description,
        input_schema: schema_of::<A>(),
        output_schema: output::schema(describe.name),
        prompt_snippet: describe.prompt_snippet,
        prompt_guidelines: describe.prompt_guidelines,
        annotations: describe.annotations,
    }
}

pub(crate) const READ_ONLY: ToolAnnotations = ToolAnnotations {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_description_states_its_limits_within_330_characters() {
        for tool in all() {
            let definition = tool.definition();
            let length = definition.description.chars().count();
            assert!(
                length <= 330,
                "{} description is {length} characters",
                definition.name
            );
            assert_eq!(
                definition.input_schema["type"], "object",
                "{}",
                definition.name
            );
        }
        let names: Vec<&str> = all().iter().map(|t| t.definition().name).collect();
        let expected: Vec<&str> = TOOL_NAMES.into_iter().chain(OPTIONAL_TOOL_NAMES).collect();
        assert_eq!(names, expected);
    }
}
