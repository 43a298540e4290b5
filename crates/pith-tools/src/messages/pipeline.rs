//! The pipeline's own texts (every tool).

/// A before-hook moved a `write`/`edit` call to another file.
pub(crate) fn moved_by_hook(tool: &str) -> String {
    format!(
        "A before_tool_call hook changed the path of this {tool} call; hooks may rewrite the arguments of write and edit but not their path (the call is approved inside that file's queue). Block the call instead."
    )
}

/// A before-hook of `outer` (a call holding its place in arrival order while
/// its hooks run) called `tool`, which would wait for that place.
pub(crate) fn called_from_hook(tool: &str, outer: &str) -> String {
    format!(
        "{tool} was called from a before_tool_call hook of {outer}, which holds its place in the file queue until its hooks return, so {tool} would wait for it forever. Call file tools after the {outer} (in an after_tool_call hook) or through a tool set with a queue of its own."
    )
}

/// A call of a tool the tool set does not have (`name` clipped).
pub(crate) fn tool_not_found(name: &str, names: &[&str]) -> String {
    format!(
        "Tool {name} not found. Available tools: {}",
        names.join(", ")
    )
}

/// A call that panicked inside its file's queue.
pub(crate) fn internal(tool: &str, path: impl std::fmt::Display) -> String {
    format!("Could not {tool} {path}: internal error")
}

/// Every tool's text for a cancelled call.
pub(crate) const ABORTED: &str = "Operation aborted";

/// A before-hook blocked the call without a reason.
pub(crate) const BLOCKED: &str = "Tool execution was blocked";
