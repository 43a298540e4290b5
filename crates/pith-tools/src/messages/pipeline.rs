//! The pipeline's own texts (every tool).

/// A before-hook moved a `write`/`edit` call to another file.
pub(crate) fn moved_by_hook(tool: &str) -> String {
    format!(
        "A before_tool_call hook changed the path of this {tool} call; hooks may rewrite the arguments of write and edit but not their path (the call is approved inside that file's queue). Block the call instead."
    )
}
