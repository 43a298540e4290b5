//! Staging: every file of a patch read, checked and changed in memory.

use std::path::{Path, PathBuf};

use pith_env::{FileKind, FileSystem, FsErrorKind};
use pith_text::{FileChange, HunkMatch, apply_hunks, display_diff, unified_patch};

use super::Operation;
use crate::messages::apply_patch as messages;
use crate::paths::describe_fs_error;
use crate::policy::Access;
use crate::textfile::{LoadedText, check_unchanged};
use crate::tool::{ToolContext, ToolError};

/// Context lines around each change in the diff and the patch.
const CONTEXT_LINES: usize = 4;

/// What one section of the patch does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Add,
    Delete,
    Update,
    Move,
}

impl Action {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Delete => "delete",
            Action::Update => "update",
            Action::Move => "move",
        }
    }
}

/// One file, ready to commit.
pub(crate) struct Staged {
    pub(crate) raw: String,
    pub(crate) path: PathBuf,
    pub(crate) action: Action,
    /// The content now (`None`: a new file).
    pub(crate) old: Option<Vec<u8>>,
    /// The content to write (`None`: delete).
    pub(crate) new: Option<Vec<u8>>,
    /// Where a moved file goes.
    pub(crate) target: Option<(String, PathBuf)>,
    pub(crate) diff: String,
    pub(crate) patch: String,
    pub(crate) hunks: Vec<HunkMatch>,
}

fn refuse(raw: &str, reason: impl std::fmt::Display) -> ToolError {
    ToolError::new(messages::refused(raw, reason))
}

/// Adds that nothing changed to a refusal from the shared load/store helpers.
fn unchanged(mut error: ToolError) -> ToolError {
    error.message.push_str(messages::NO_FILE_CHANGED);
    error
}

/// Stages every operation; the first that cannot be staged fails the whole patch.
pub(crate) async fn stage_all(
    context: &ToolContext,
    operations: Vec<Operation>,
) -> Result<Vec<Staged>, ToolError> {
    let fs = context.write_fs().clone();
    let mut staged = Vec::with_capacity(operations.len());
    for operation in operations {
        staged.push(stage(context, &*fs, operation).await?);
    }
    Ok(staged)
}

async fn stage(
    context: &ToolContext,
    fs: &dyn FileSystem,
    operation: Operation,
) -> Result<Staged, ToolError> {
    let Operation {
        raw,
        path,
        move_to,
        change,
        ..
    } = operation;
    // The workspace check, as for edit and write (the confined view enforces it again).
    context.check_path(&path, Access::Write).await?;
    if let Some((_, target)) = &move_to {
        context.check_path(target, Access::Write).await?;
    }
    match change {
        FileChange::Add { contents } => {
            expect_absent(fs, &path, &raw, "Add File").await?;
            let diff = display_diff("", &contents, CONTEXT_LINES).diff;
            let patch = unified_patch(&raw, "", &contents, CONTEXT_LINES);
            Ok(Staged {
                raw,
                path,
                action: Action::Add,
                old: None,
                new: Some(contents.into_bytes()),
                target: None,
                diff,
                patch,
                hunks: Vec::new(),
            })
        }
        FileChange::Delete => {
            let old = read_regular(fs, &path, &raw).await?;
            // Deleting is overwriting: refused when the session saw the file and it changed since.
            crate::stale::check_fresh(context, fs, &path, &old, None)
                .await
                .map_err(|changed| refuse(&raw, messages::changed_since_read(&changed.detail)))?;
            let text = String::from_utf8_lossy(&old).into_owned();
            Ok(Staged {
                diff: display_diff(&text, "", CONTEXT_LINES).diff,
                patch: unified_patch(&raw, &text, "", CONTEXT_LINES),
                raw,
                path,
                action: Action::Delete,
                old: Some(old),
                new: None,
                target: None,
                hunks: Vec::new(),
            })
        }
        FileChange::Update { move_to: _, hunks } => {
            let old = read_regular(fs, &path, &raw).await?;
            if let Some((target_raw, target)) = &move_to
                && target != &path
            {
                expect_absent(fs, target, target_raw, "Move to").await?;
            }
            // Decoded and checked for staleness exactly as edit does; written back
            // in the file's own encoding.
            let loaded = LoadedText::decode(old.clone(), &raw, "patch").map_err(unchanged)?;
            check_unchanged(context, fs, &path, &loaded, &raw, "patch")
                .await
                .map_err(unchanged)?;
            let text = loaded.text();
            let (new, old_content, new_content, matches) = if hunks.is_empty() {
                (text.to_owned(), String::new(), String::new(), Vec::new())
            } else {
                let patched = apply_hunks(text, &hunks)
                    .map_err(|error| ToolError::new(messages::hunk_refused(&error, &raw)))?;
                (
                    patched.text,
                    patched.old_content,
                    patched.new_content,
                    patched.hunks,
                )
            };
            let new = loaded
                .encode_edit(&new, &raw, "patch")
                .map_err(unchanged)?
                .into_owned();
            let shown = move_to.as_ref().map_or(raw.as_str(), |(target, _)| target);
            Ok(Staged {
                diff: display_diff(&old_content, &new_content, CONTEXT_LINES).diff,
                patch: unified_patch(shown, &old_content, &new_content, CONTEXT_LINES),
                action: if move_to.is_some() {
                    Action::Move
                } else {
                    Action::Update
                },
                raw,
                path,
                old: Some(old),
                new: Some(new),
                target: move_to,
                hunks: matches,
            })
        }
    }
}

async fn expect_absent(
    fs: &dyn FileSystem,
    path: &Path,
    raw: &str,
    marker: &str,
) -> Result<(), ToolError> {
    match fs.symlink_metadata(path).await {
        Ok(_) => Err(refuse(raw, messages::already_exists(marker))),
        Err(error) if error.kind == FsErrorKind::NotFound => Ok(()),
        Err(error) if error.kind == FsErrorKind::NotADirectory => {
            Err(refuse(raw, messages::PARENT_IS_FILE))
        }
        Err(error) => Err(refuse(raw, describe_fs_error(&error))),
    }
}

async fn read_regular(fs: &dyn FileSystem, path: &Path, raw: &str) -> Result<Vec<u8>, ToolError> {
    let metadata = fs.metadata(path).await.map_err(|error| match error.kind {
        FsErrorKind::NotFound => refuse(raw, messages::NOT_FOUND),
        _ => refuse(raw, describe_fs_error(&error)),
    })?;
    match metadata.kind {
        FileKind::File => {}
        FileKind::Directory => return Err(refuse(raw, messages::IS_DIRECTORY)),
        _ => return Err(refuse(raw, messages::NOT_REGULAR)),
    }
    fs.read(path)
        .await
        .map_err(|error| refuse(raw, describe_fs_error(&error)))
}
