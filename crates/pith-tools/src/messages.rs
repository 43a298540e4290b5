//! Every text a model can see from a tool that is not the tool's output
//! itself: errors, notices and hints, one section per tool, so that a
//! reviewer reads them all in one place. The tools call into these; the
//! texts are pinned by the insta snapshots (tests/snapshots.rs) and the
//! tests that name them.

/// The pipeline's own texts (every tool).
pub(crate) mod pipeline {
    /// A before-hook moved a `write`/`edit` call to another file.
    pub(crate) fn moved_by_hook(tool: &str) -> String {
        format!(
            "A before_tool_call hook changed the path of this {tool} call; hooks may rewrite the arguments of write and edit but not their path (the call is approved inside that file's queue). Block the call instead."
        )
    }
}

/// `apply_patch`.
pub(crate) mod apply_patch {
    use std::fmt::Display;

    /// A before-hook's rewrite has no `patch` string.
    pub(crate) const HOOK_REWRITE_NOT_A_PATCH: &str = "A before_tool_call hook rewrote a section of this apply_patch call without a 'patch' string; hooks may rewrite one file's section or block the call. No file was changed.";

    /// A before-hook's rewrite of a file's section does not parse.
    pub(crate) fn hook_rewrite_invalid(error: impl Display) -> String {
        format!(
            "A before_tool_call hook rewrote a section of this apply_patch call into an invalid patch ({error}). No file was changed."
        )
    }

    /// A before-hook's rewrite names another file than the section it approved.
    pub(crate) fn hook_rewrite_moved(path: &str) -> String {
        format!(
            "A before_tool_call hook changed which file the apply_patch section for {path} changes; hooks may rewrite a file's section but not its path (it is approved inside that file's queue). Block the call instead. No file was changed."
        )
    }
}
