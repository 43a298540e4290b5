//! [`Session`]: one conversation's view of a tool set.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::{CallOptions, ToolContext, ToolResult, ToolSet};

/// What `write` does with an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverwritePolicy {
    /// Refuse to overwrite a file the session has not read, or that changed
    /// since it was read (content hash), with a message to read it first.
    RequireRead,
    /// Overwrite freely (one-shot calls).
    Allow,
}

struct SessionInner {
    toolset: ToolSet,
}

/// One conversation (a batch, an MCP connection, an agent session). Cheap to clone.
#[derive(Clone)]
pub struct Session {
    inner: Arc<SessionInner>,
}

impl Session {
    pub(crate) fn new(toolset: ToolSet) -> Session {
        Session {
            inner: Arc::new(SessionInner { toolset }),
        }
    }

    /// The tool set this session uses.
    pub fn toolset(&self) -> &ToolSet {
        &self.inner.toolset
    }

    /// Calls a tool with the JSON arguments a model produced.
    pub async fn call(&self, name: &str, args: Value, options: CallOptions) -> ToolResult {
        let toolset = &self.inner.toolset;
        let Some(tool) = toolset.tool(name) else {
            let names: Vec<&str> = toolset.definitions().iter().map(|d| d.name).collect();
            return ToolResult::error(format!(
                "Tool {name} not found. Available tools: {}",
                names.join(", ")
            ));
        };
        if options.cancel.is_cancelled() {
            return ToolResult::error("Operation aborted");
        }
        let args = tool.repair(args);
        let context = ToolContext {
            env: toolset.env().clone(),
            cwd: toolset.cwd().to_path_buf(),
            config: toolset.config().clone(),
            session: self.clone(),
            queue: toolset.queue().clone(),
            updates: options.updates.clone(),
        };
        tool.execute(args, &context, options.cancel).await
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}
