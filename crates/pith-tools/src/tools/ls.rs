//! `ls`: list a directory (reference §10).
//!
//! Entries are sorted by their lowercased names, ties broken by the exact
//! names (Pi sorts with ICU collation, which also orders punctuation before
//! digits before letters and puts accented letters next to their base letter;
//! the lowercased code-point order used here puts `_x` after `10`, `~t` after
//! the letters and `é` after `z`). Directories get a `/`, following symlinks; dangling symlinks
//! are listed without one (Pi skipped them silently).

use async_trait::async_trait;
use pith_env::{FileKind, FsErrorKind};
use pith_text::{TruncationLimits, format_size, truncate_head};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Describe, READ_ONLY, define};
use crate::details::LsDetails;
use crate::messages::ls as messages;
use crate::paths::{describe_fs_error, not_found_hint};
use crate::policy::Access;
use crate::tool::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// Entries listed when no `limit` is given.
const DEFAULT_LIMIT: u64 = 500;

/// Arguments of `ls`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct LsArgs {
    /// Directory to list (default: current directory)
    path: Option<String>,
    /// Maximum number of entries to return (default: 500)
    #[schemars(range(min = 1))]
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
    type Args = LsArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(
        &self,
        args: LsArgs,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        list(&args, context, &cancel).await
    }
}

/// Entries are ordered by their lowercased names, ties by the exact names
/// (see [`pith_env::DirKey`]).
fn sort_key(name: &std::ffi::OsStr) -> String {
    name.to_string_lossy().to_lowercase()
}

async fn list(
    args: &LsArgs,
    context: &ToolContext,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let fs = &**context.read_fs();
    let dir = context
        .resolve_checked(args.path.as_deref().unwrap_or("."), Access::Read)
        .await?;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    match fs.metadata(&dir).await {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => {
            return Err(ToolError::new(messages::not_a_directory(dir.display())));
        }
        Err(error) if error.kind == FsErrorKind::NotFound => {
            let lead = messages::not_found(dir.display());
            return Err(ToolError::new(not_found_hint(context, lead, &dir).await));
        }
        Err(error) => return Err(ToolError::new(describe_fs_error(&error))),
    }
    // Only the first `limit` entries are held while the directory is listed.
    let page = fs
        .read_dir_first(&dir, usize::try_from(limit).unwrap_or(usize::MAX), sort_key)
        .await
        .map_err(|error| ToolError::new(messages::cannot_read(&describe_fs_error(&error))))?;
    let limit_reached = page.total > limit;
    let mut lines = Vec::with_capacity(page.entries.len());
    for entry in &page.entries {
        ToolError::check_cancelled(cancel)?;
        let name = entry.name.to_string_lossy();
        let is_dir = match entry.kind {
            FileKind::Directory => true,
            // A dangling link or one we may not follow is listed as it is.
            FileKind::Symlink => fs
                .metadata(&dir.join(&entry.name))
                .await
                .is_ok_and(|metadata| metadata.is_dir()),
            _ => false,
        };
        lines.push(if is_dir {
            format!("{name}/")
        } else {
            name.into_owned()
        });
    }
    let structured = |truncated: bool| json!({"count": lines.len(), "limitReached": limit_reached, "truncated": truncated});
    if lines.is_empty() && !limit_reached {
        return Ok(ToolOutput::text(messages::EMPTY).with_structured(structured(false)));
    }
    let limits = TruncationLimits {
        max_lines: usize::MAX,
        ..TruncationLimits::default()
    };
    let truncation = truncate_head(&lines.join("\n"), limits);
    let mut notices = Vec::new();
    let mut details = LsDetails::default();
    if limit_reached {
        let more = if limit == 0 {
            DEFAULT_LIMIT
        } else {
            limit.saturating_mul(2)
        };
        notices.push(messages::entry_limit(limit, more));
        details.entry_limit_reached = Some(limit);
    }
    if truncation.truncated {
        notices.push(crate::messages::grep::byte_limit(&format_size(
            truncation.max_bytes as u64,
        )));
        details.truncation = Some(truncation.clone());
    }
    let mut text = truncation.content.clone();
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let result =
        ToolOutput::text(text).with_structured(structured(limit_reached || truncation.truncated));
    Ok(if details == LsDetails::default() {
        result
    } else {
        result.with_details_of(&details)
    })
}

#[cfg(test)]
#[path = "ls_tests.rs"]
mod tests;
