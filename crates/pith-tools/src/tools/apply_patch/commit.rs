//! Committing a staged patch: each file journaled, then replaced atomically,
//! in an order that keeps every named path old or new; put back on failure.

use std::path::{Path, PathBuf};

use pith_env::{FileSystem, FsError, FsErrorKind};
use serde_json::json;

use super::stage::{Action, Staged};
use crate::details::{PatchDetails, PatchFile, PatchFileDetails};
use crate::journal::{self, Before, CallTag};
use crate::messages::apply_patch as messages;
use crate::paths::describe_fs_error;
use crate::tool::{ToolContext, ToolError, ToolOutput, details_value};
use crate::tools::write::{missing_ancestors, remove_created};

/// One step of the commit: `path` goes from `old` to `new` (`None`: absent).
struct Step<'a> {
    path: &'a Path,
    old: Option<&'a [u8]>,
    new: Option<&'a [u8]>,
}

/// What a committed step left to undo if a later one fails.
struct Done<'a> {
    step: Step<'a>,
    created_dirs: Vec<PathBuf>,
}

/// The steps in commit order: new files, updates in place, then removals.
fn steps(staged: &[Staged]) -> Vec<Step<'_>> {
    let mut creations = Vec::new();
    let mut updates = Vec::new();
    let mut removals = Vec::new();
    for file in staged {
        match (file.action, &file.target) {
            (Action::Add, _) => creations.push(Step {
                path: &file.path,
                old: None,
                new: file.new.as_deref(),
            }),
            (Action::Move, Some((_, target))) if target != &file.path => {
                creations.push(Step {
                    path: target,
                    old: None,
                    new: file.new.as_deref(),
                });
                removals.push(Step {
                    path: &file.path,
                    old: file.old.as_deref(),
                    new: None,
                });
            }
            (Action::Update | Action::Move, _) => updates.push(Step {
                path: &file.path,
                old: file.old.as_deref(),
                new: file.new.as_deref(),
            }),
            (Action::Delete, _) => removals.push(Step {
                path: &file.path,
                old: file.old.as_deref(),
                new: None,
            }),
        }
    }
    creations.extend(updates);
    creations.extend(removals);
    creations
}

/// Commits every staged file, all or nothing.
pub(crate) async fn commit_all(
    context: &ToolContext,
    staged: Vec<Staged>,
) -> Result<ToolOutput, ToolError> {
    let fs = context.write_fs().clone();
    let fs = &*fs;
    let tag = CallTag::new("apply_patch", &context.group);
    let mut notes = Vec::new();
    let mut done: Vec<Done<'_>> = Vec::new();
    for (index, step) in steps(&staged).into_iter().enumerate() {
        let before = match step.old {
            Some(bytes) => Before::Content(bytes),
            None => Before::Absent,
        };
        // Journaled (and fsynced) before the file changes.
        if let Some(note) =
            journal::record_change(context, &tag, index, step.path, before, step.new).await
        {
            notes.push(note);
        }
        match apply(fs, &step).await {
            Ok(created_dirs) => done.push(Done { step, created_dirs }),
            Err(error) => {
                let put_back = roll_back(fs, done).await;
                return Err(ToolError::new(messages::commit_failed(
                    step.path.display(),
                    &describe_fs_error(&error),
                    put_back,
                )));
            }
        }
    }
    for file in &staged {
        if let Some(bytes) = &file.new {
            let path = file
                .target
                .as_ref()
                .map_or(&file.path, |(_, target)| target);
            let text = String::from_utf8_lossy(bytes);
            context
                .session
                .record_written_text(fs, path, bytes, &text)
                .await;
        }
    }
    Ok(result(&staged, notes))
}

/// Performs one step; returns the directories it created.
async fn apply(fs: &dyn FileSystem, step: &Step<'_>) -> Result<Vec<PathBuf>, FsError> {
    match step.new {
        Some(bytes) => {
            let created = match (step.old, step.path.parent()) {
                (None, Some(parent)) => {
                    let created = missing_ancestors(fs, parent).await;
                    fs.create_dir_all(parent).await?;
                    created
                }
                _ => Vec::new(),
            };
            if let Err(error) = fs.write_atomic(step.path, bytes).await {
                remove_created(fs, &created).await;
                return Err(error);
            }
            Ok(created)
        }
        None => fs.remove_file(step.path).await.map(|()| Vec::new()),
    }
}

/// Puts back committed steps, newest first; the paths it could not put back.
async fn roll_back(fs: &dyn FileSystem, done: Vec<Done<'_>>) -> Result<(), Vec<String>> {
    let mut failed = Vec::new();
    for Done { step, created_dirs } in done.into_iter().rev() {
        let result = match step.old {
            Some(bytes) => fs.write_atomic(step.path, bytes).await,
            None => match fs.remove_file(step.path).await {
                Err(error) if error.kind == FsErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        if result.is_err() {
            failed.push(step.path.display().to_string());
        }
        remove_created(fs, &created_dirs).await;
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed)
    }
}

fn result(staged: &[Staged], notes: Vec<String>) -> ToolOutput {
    let mut lines = vec![messages::applied(staged.len())];
    let mut files = Vec::new();
    let mut details = Vec::new();
    for file in staged {
        let target = file.target.as_ref().map(|(raw, _)| raw.as_str());
        lines.push(match (file.action, target) {
            (Action::Add, _) => format!("A {}", file.raw),
            (Action::Delete, _) => format!("D {}", file.raw),
            (Action::Move, Some(target)) => format!("R {} -> {target}", file.raw),
            _ => format!("M {}", file.raw),
        });
        for hunk in &file.hunks {
            lines.extend(messages::loose_match(
                &file.raw,
                hunk.index + 1,
                hunk.tier,
                hunk.start_line,
            ));
        }
        let entry = PatchFile {
            path: file.raw.clone(),
            action: file.action.name().to_owned(),
            moved_to: target.map(str::to_owned),
        };
        files.push(entry.clone());
        details.push(PatchFileDetails {
            file: entry,
            diff: file.diff.clone(),
            patch: file.patch.clone(),
            hunks: file.hunks.clone(),
        });
    }
    lines.extend(notes);
    ToolOutput::text(lines.join("\n"))
        .with_structured(details_value(&json!({ "files": files })))
        .with_details_of(&PatchDetails { files: details })
}
