//! The before-hooks of `apply_patch`, once per file inside the files' turns.
//!
//! A hook sees a call of `apply_patch` whose `patch` is the one section of
//! the file it approves, in its own `*** Begin Patch` envelope: the same shape
//! as the tool's arguments, so a hook written for whole patches reads it. It
//! may allow it, block it (the whole patch is refused; no file changes) or
//! rewrite that section, which must still name the same file (and the same
//! move target). The after-hooks see the whole patch that ran.

use pith_text::{FileChange, parse_patch};
use serde_json::{Value, json};

use super::Operation;
use crate::messages::apply_patch as messages;
use crate::tool::{ToolContext, ToolError};

const BEGIN: &str = "*** Begin Patch\n";
const END: &str = "*** End Patch\n";

/// Runs the before-hooks for each file's section; returns the operations to
/// stage (rewritten where a hook rewrote them).
pub(super) async fn authorize_each(
    context: &ToolContext,
    patch: &str,
    operations: Vec<Operation>,
) -> Result<Vec<Operation>, ToolError> {
    if context.config.hooks.is_empty() {
        return Ok(operations);
    }
    let starts: Vec<usize> = operations.iter().map(|op| op.line).collect();
    let sections = sections(patch, &starts);
    let mut approved = Vec::with_capacity(operations.len());
    let mut ran = Vec::with_capacity(operations.len());
    let mut rewritten = false;
    for (operation, section) in operations.into_iter().zip(sections) {
        let one = format!("{BEGIN}{section}{END}");
        let args = json!({ "patch": one });
        let decided = context.authorize("apply_patch", args.clone()).await?;
        if decided == args {
            approved.push(operation);
            ran.push(section);
            continue;
        }
        let (operation, section) = rewrite(context, operation, &decided)?;
        rewritten = true;
        approved.push(operation);
        ran.push(section);
    }
    if rewritten {
        context.ran_with(json!({ "patch": format!("{BEGIN}{}{END}", ran.concat()) }));
    }
    Ok(approved)
}

/// The sections of the patch text starting at these lines (1-based, in
/// order): each one's lines up to the next section (or `*** End Patch`),
/// each ending in a newline.
fn sections(patch: &str, starts: &[usize]) -> Vec<String> {
    let lines: Vec<&str> = patch.split('\n').collect();
    let end = lines
        .iter()
        .rposition(|line| line.trim() == END.trim())
        .unwrap_or(lines.len());
    starts
        .iter()
        .enumerate()
        .map(|(index, start)| {
            let from = start.saturating_sub(1);
            let to = starts
                .get(index + 1)
                .map_or(end, |next| next.saturating_sub(1));
            lines
                .get(from..to.max(from))
                .unwrap_or_default()
                .iter()
                .map(|line| format!("{line}\n"))
                .collect()
        })
        .collect()
}

/// A hook's rewrite of one file's section: parsed, and held to the same file.
fn rewrite(
    context: &ToolContext,
    operation: Operation,
    decided: &Value,
) -> Result<(Operation, String), ToolError> {
    let text = decided
        .get("patch")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::refused(messages::HOOK_REWRITE_NOT_A_PATCH))?;
    let parsed = parse_patch(text)
        .map_err(|error| ToolError::refused(messages::hook_rewrite_invalid(&error)))?;
    let [file] = <[_; 1]>::try_from(parsed.files)
        .map_err(|_| ToolError::refused(messages::hook_rewrite_moved(&operation.raw)))?;
    let path = context.resolve(&file.path)?;
    let move_to = match &file.change {
        FileChange::Update {
            move_to: Some(target),
            ..
        } => Some(context.resolve(target)?),
        _ => None,
    };
    if path != operation.path || move_to != operation.move_to.as_ref().map(|(_, p)| p.clone()) {
        return Err(ToolError::refused(messages::hook_rewrite_moved(
            &operation.raw,
        )));
    }
    let section = sections(text, &[file.line]).pop().unwrap_or_default();
    Ok((
        Operation {
            change: file.change,
            ..operation
        },
        section,
    ))
}
