//! Hooks a host installs around tool calls: approve, block or rewrite a call
//! before it runs, inspect or rewrite its result after.
//!
//! For `write` and `edit` the before-hook runs inside the file's mutation
//! queue, so a check and the write it approves cannot interleave with another
//! write to the same file.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::tool::ToolResult;

/// A call as a hook sees it.
#[derive(Clone, Copy, Debug)]
pub struct HookCall<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The arguments, after repair.
    pub args: &'a Value,
    /// The working directory.
    pub cwd: &'a Path,
}

/// What a before-hook decides.
#[derive(Clone, Debug, PartialEq)]
pub enum HookDecision {
    /// Run the call as it is.
    Allow,
    /// Do not run it; the model sees the reason.
    Block(String),
    /// Run it with these arguments instead.
    Rewrite(Value),
}

/// Hooks around tool calls. Both methods have pass-through defaults.
#[async_trait]
pub trait ToolHooks: Send + Sync {
    /// Called before a tool runs.
    async fn before_tool_call(&self, _call: HookCall<'_>) -> HookDecision {
        HookDecision::Allow
    }

    /// Called after a tool ran, with its result; returns the result to use.
    async fn after_tool_call(&self, _call: HookCall<'_>, result: ToolResult) -> ToolResult {
        result
    }
}

/// An ordered list of hooks.
#[derive(Clone, Default)]
pub struct Hooks(Vec<Arc<dyn ToolHooks>>);

impl Hooks {
    /// Adds a hook; hooks run in the order they were added.
    pub fn push(&mut self, hook: Arc<dyn ToolHooks>) {
        self.0.push(hook);
    }

    /// Whether there are no hooks.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Runs every before-hook in order: the first block wins; rewrites chain.
    /// Returns the arguments to run with, or the block reason.
    pub async fn before(&self, tool: &str, args: Value, cwd: &Path) -> Result<Value, String> {
        let mut args = args;
        for hook in &self.0 {
            match hook
                .before_tool_call(HookCall {
                    tool,
                    args: &args,
                    cwd,
                })
                .await
            {
                HookDecision::Allow => {}
                HookDecision::Block(reason) => return Err(reason),
                HookDecision::Rewrite(rewritten) => args = rewritten,
            }
        }
        Ok(args)
    }

    /// Runs every after-hook in order.
    pub async fn after(
        &self,
        tool: &str,
        args: &Value,
        cwd: &Path,
        result: ToolResult,
    ) -> ToolResult {
        let mut result = result;
        for hook in &self.0 {
            result = hook
                .after_tool_call(HookCall { tool, args, cwd }, result)
                .await;
        }
        result
    }
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hooks({})", self.0.len())
    }
}
