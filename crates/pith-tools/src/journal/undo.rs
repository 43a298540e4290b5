//! Undo: restores journaled files through the mutation queue and the atomic
//! write, all or nothing, and journals what it did (so it can be undone: redo).
//! Files over [`DIFF_MAX_BYTES`] are hashed and restored by streaming, in
//! bounded memory, and summarised rather than diffed (see
//! [`restore`](super::restore)).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pith_env::{FileSystem, FsErrorKind};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::restore::{Content, DIFF_MAX_BYTES, RestoreError};
use super::{Before, CallTag, Change, FileState, Journal, JournalEntry, Unread};
use crate::messages::undo::{self as messages, Outcome};
use crate::paths::describe_fs_error;
use crate::queue::{ExclusiveError, exclusive_after_earlier};
use crate::queue::{MutationQueue, Ticket};
use crate::session::Session;
use crate::tool::ToolError;

/// Which journaled changes to undo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UndoSelector {
    /// The changes of the last `n` groups (a group: one `pith batch`, one MCP
    /// request group, one undo).
    Last(usize),
    /// The changes of one call (or the one entry with this id).
    Call(String),
    /// The changes of one group.
    Group(String),
    /// Every change made at or after this time.
    Since(SystemTime),
}

/// What an undo does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UndoOptions {
    /// Which changes.
    pub selector: UndoSelector,
    /// Restore files that changed since the journaled change, too.
    pub force: bool,
    /// Only report what would be restored, with the diffs.
    pub dry_run: bool,
}

/// What happened (or would happen) to one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum UndoOutcome {
    /// The previous content was written back.
    Restored,
    /// The file did not exist before: it was removed.
    Removed,
    /// The file already has its previous content (undone before, or the change
    /// never landed): nothing to do.
    Unchanged,
    /// The file changed since the journaled change: refused (use force).
    Changed,
    /// The previous content was not stored (too large, or evicted).
    NotUndoable {
        /// Why.
        reason: String,
    },
}

/// One file of an undo.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoFile {
    /// The file.
    pub path: PathBuf,
    /// What happened to it.
    #[serde(flatten)]
    pub outcome: UndoOutcome,
    /// The journal entries undone for it, newest first.
    pub entries: Vec<String>,
    /// Unified diff from the current content to the restored one (empty
    /// when `summary` is set).
    pub patch: String,
    /// Instead of a diff, for a content over the diff limit (4 MiB): the
    /// sizes and SHA-256 hashes of the current and the restored content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// The result of an undo.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoReport {
    /// Per file, in path order.
    pub files: Vec<UndoFile>,
    /// Nothing was written.
    pub dry_run: bool,
    /// The undo's own call id (undo it to redo), when it wrote anything.
    pub call: Option<String>,
}

impl UndoReport {
    /// One line per file for the model or a terminal.
    pub fn summary(&self) -> String {
        let mut lines = Vec::new();
        for file in &self.files {
            let outcome = match &file.outcome {
                UndoOutcome::Restored => Outcome::Restored,
                UndoOutcome::Removed => Outcome::Removed,
                UndoOutcome::Unchanged => Outcome::Unchanged,
                UndoOutcome::Changed => Outcome::Changed,
                UndoOutcome::NotUndoable { reason } => Outcome::NotUndoable(reason),
            };
            let line = messages::file_line(file.path.display(), outcome, self.dry_run);
            lines.push(match &file.summary {
                Some(summary) => format!("{line}; {summary}"),
                None => line,
            });
        }
        if let Some(call) = &self.call {
            lines.push(messages::undo_call(call));
        }
        lines.join("\n")
    }
}

/// Approves each file of an undo, holding the turns of all its files (the
/// `undo` tool's before-hooks, [`crate::tools::undo`]).
#[async_trait::async_trait]
pub(crate) trait ApproveFiles: Send + Sync {
    /// Approves `paths` one by one, in order; an error refuses the whole undo
    /// (no file has changed yet).
    async fn approve(&self, paths: &[PathBuf]) -> Result<(), ToolError>;
}

/// What undo works with.
pub(crate) struct UndoContext {
    pub(crate) journal: Arc<Journal>,
    pub(crate) queue: Arc<MutationQueue>,
    /// The view the queue keys are computed through.
    pub(crate) lock_fs: Arc<dyn FileSystem>,
    /// The confined write view restores go through.
    pub(crate) write_fs: Arc<dyn FileSystem>,
    pub(crate) session: Session,
    pub(crate) ticket: Ticket,
    pub(crate) group: String,
    /// Approves the files inside their turns, before anything is read or written.
    pub(crate) approve: Option<Box<dyn ApproveFiles>>,
}

/// The entries `selector` picks, oldest first.
pub(crate) fn select(entries: Vec<JournalEntry>, selector: &UndoSelector) -> Vec<JournalEntry> {
    match selector {
        UndoSelector::Last(count) => {
            let mut groups: Vec<&str> = Vec::new();
            for entry in entries.iter().rev() {
                if groups.len() >= *count {
                    break;
                }
                if !groups.contains(&entry.group.as_str()) {
                    groups.push(&entry.group);
                }
            }
            let groups: Vec<String> = groups.into_iter().map(str::to_owned).collect();
            entries
                .into_iter()
                .filter(|entry| groups.contains(&entry.group))
                .collect()
        }
        UndoSelector::Call(id) => entries
            .into_iter()
            .filter(|entry| &entry.call == id || &entry.id == id)
            .collect(),
        UndoSelector::Group(group) => entries
            .into_iter()
            .filter(|entry| &entry.group == group)
            .collect(),
        UndoSelector::Since(time) => {
            let since = time
                .duration_since(UNIX_EPOCH)
                .unwrap_or(Duration::ZERO)
                .as_millis() as u64;
            entries
                .into_iter()
                .filter(|entry| entry.time_ms >= since)
                .collect()
        }
    }
}

/// One file's plan: where it is now and what it goes back to.
struct Plan {
    path: PathBuf,
    current: Option<Content>,
    /// The current file's modification time (for the journal's copy of it).
    modified: Option<SystemTime>,
    target: Option<Content>,
    outcome: UndoOutcome,
    entries: Vec<String>,
}

/// Undoes the selected changes (see [`UndoOptions`]).
pub(crate) async fn undo(
    context: UndoContext,
    options: UndoOptions,
) -> Result<UndoReport, ToolError> {
    // The journal is read once every call that arrived before this one has
    // made its change (and journaled it): `undo` after a write in one batch
    // undoes that write.
    let journal = context.journal.clone();
    let selector = options.selector.clone();
    let choose = move || async move {
        let entries = journal
            .entries()
            .await
            .map_err(|error| ToolError::new(error.to_string()))?;
        let selected = select(entries, &selector);
        if selected.is_empty() {
            return Err(ToolError::new(messages::NOTHING));
        }
        let mut by_path: BTreeMap<PathBuf, Vec<JournalEntry>> = BTreeMap::new();
        for entry in selected {
            by_path.entry(entry.path.clone()).or_default().push(entry);
        }
        let paths: Vec<PathBuf> = by_path.keys().cloned().collect();
        Ok((paths, by_path))
    };
    let (queue, lock_fs) = (context.queue.clone(), context.lock_fs.clone());
    let ticket = context.ticket.clone();
    let work = move |by_path, _token: CancellationToken| async move {
        run_locked(&context, by_path, &options).await
    };
    match exclusive_after_earlier(
        &queue,
        &lock_fs,
        ticket,
        &CancellationToken::new(),
        choose,
        work,
    )
    .await
    {
        Ok(Ok(result)) => result,
        Ok(Err(error)) => Err(error),
        Err(ExclusiveError::Lock(error)) => Err(ToolError::new(describe_fs_error(&error))),
        Err(ExclusiveError::Panicked(panic)) => Err(ToolError::internal(messages::INTERNAL, panic)),
    }
}

async fn run_locked(
    context: &UndoContext,
    by_path: BTreeMap<PathBuf, Vec<JournalEntry>>,
    options: &UndoOptions,
) -> Result<UndoReport, ToolError> {
    let fs = &*context.write_fs;
    if let Some(approve) = &context.approve {
        let paths: Vec<PathBuf> = by_path.keys().cloned().collect();
        approve.approve(&paths).await?;
    }
    let mut plans = Vec::with_capacity(by_path.len());
    for (path, mut entries) in by_path {
        entries.reverse();
        plans.push(plan(context, fs, path, &entries, options.force).await?);
    }
    let refused = plans
        .iter()
        .any(|plan| matches!(plan.outcome, UndoOutcome::Changed));
    let mut report = UndoReport {
        files: Vec::new(),
        dry_run: options.dry_run || refused,
        call: None,
    };
    let tag = CallTag::new("undo", &context.group);
    let mut wrote = false;
    for (index, plan) in plans.into_iter().enumerate() {
        let restoring = matches!(plan.outcome, UndoOutcome::Restored | UndoOutcome::Removed);
        let (patch, summary) = if restoring {
            diff(&plan)
        } else {
            (String::new(), None)
        };
        if !report.dry_run && restoring {
            let before = match &plan.current {
                Some(Content {
                    bytes: Some(bytes), ..
                }) => Before::Content(bytes),
                Some(content) => Before::Unread(Unread {
                    fs,
                    path: &plan.path,
                    len: content.len,
                    modified: plan.modified,
                    hash: &content.hash,
                }),
                None => Before::Absent,
            };
            let after = match &plan.target {
                Some(content) => FileState::Content {
                    hash: content.hash.clone(),
                    len: content.len,
                    stored: false,
                },
                None => FileState::Absent,
            };
            let recorded = context
                .journal
                .record(Change {
                    tag: &tag,
                    index,
                    path: &plan.path,
                    before,
                    before_hash: plan.current.as_ref().map(|content| content.hash.clone()),
                    after,
                    undoes: plan.entries.clone(),
                })
                .await;
            if let Some(note) = recorded.note {
                tracing::warn!("{note}");
            }
            restore(context, &plan.path, plan.target.as_ref()).await?;
            wrote = true;
        }
        report.files.push(UndoFile {
            path: plan.path,
            outcome: plan.outcome,
            entries: plan.entries,
            patch,
            summary,
        });
    }
    if refused {
        let changed: Vec<String> = report
            .files
            .iter()
            .filter(|file| matches!(file.outcome, UndoOutcome::Changed))
            .map(|file| file.path.display().to_string())
            .collect();
        return Err(ToolError::new(messages::refused(&changed))
            .with_details(serde_json::to_value(&report).unwrap_or_default()));
    }
    if wrote {
        report.call = Some(tag.call);
    }
    Ok(report)
}

/// Walks one file's entries newest first from its current content.
async fn plan(
    context: &UndoContext,
    fs: &dyn FileSystem,
    path: PathBuf,
    entries: &[JournalEntry],
    force: bool,
) -> Result<Plan, ToolError> {
    let (current, modified) = match super::restore::current(fs, &path).await {
        Ok(Some((content, metadata))) => (
            Some(content),
            metadata.and_then(|metadata| metadata.modified),
        ),
        Ok(None) => (None, None),
        Err(error) => {
            return Err(ToolError::new(messages::cannot_read(
                path.display(),
                &describe_fs_error(&error),
            )));
        }
    };
    let mut state = match &current {
        Some(content) => FileState::Content {
            hash: content.hash.clone(),
            len: content.len,
            stored: false,
        },
        None => FileState::Absent,
    };
    let mut target = current.clone();
    let mut undone = Vec::new();
    let mut outcome = UndoOutcome::Unchanged;
    for entry in entries {
        if !state.same_content(&entry.after) {
            if state.same_content(&entry.before) {
                continue;
            }
            if !force {
                outcome = UndoOutcome::Changed;
                break;
            }
        }
        match &entry.before {
            FileState::Absent => target = None,
            FileState::Content { hash, len, .. } => {
                match context.journal.stored(hash, *len).await {
                    Ok(content) => target = Some(content),
                    Err(error) => {
                        outcome = UndoOutcome::NotUndoable {
                            reason: messages::content_unreadable(error, &entry.id),
                        };
                        break;
                    }
                }
            }
            FileState::NotUndoable { reason, .. } => {
                outcome = UndoOutcome::NotUndoable {
                    reason: reason.clone(),
                };
                break;
            }
        }
        state = entry.before.clone();
        undone.push(entry.id.clone());
    }
    let same = match (&target, &current) {
        (Some(target), Some(current)) => target.hash == current.hash,
        (None, None) => true,
        _ => false,
    };
    if !matches!(outcome, UndoOutcome::Changed) && !same {
        // Restore as far as the walk got, even if it stopped at an older entry.
        outcome = if target.is_none() {
            UndoOutcome::Removed
        } else {
            UndoOutcome::Restored
        };
    }
    Ok(Plan {
        path,
        current,
        modified,
        target,
        outcome,
        entries: undone,
    })
}

/// The diff from the current content to the restored one, or (when either is
/// over [`DIFF_MAX_BYTES`], so not read whole) a summary instead.
fn diff(plan: &Plan) -> (String, Option<String>) {
    fn side(content: &Option<Content>) -> Option<&[u8]> {
        match content {
            None => Some(&[]),
            Some(content) => content.bytes.as_deref(),
        }
    }
    match (side(&plan.current), side(&plan.target)) {
        (Some(old), Some(new)) => {
            let old = String::from_utf8_lossy(old);
            let new = String::from_utf8_lossy(new);
            let path = plan.path.display().to_string();
            (pith_text::unified_patch(&path, &old, &new, 3), None)
        }
        _ => {
            fn facts(content: &Option<Content>) -> Option<(u64, &str)> {
                content
                    .as_ref()
                    .map(|content| (content.len, content.hash.as_str()))
            }
            let summary =
                messages::large_summary(facts(&plan.current), facts(&plan.target), DIFF_MAX_BYTES);
            (String::new(), Some(summary))
        }
    }
}

/// Writes `target` to `path` atomically (streamed from the journal when it was
/// not read whole), or removes the file; the session records what it wrote.
async fn restore(
    context: &UndoContext,
    path: &Path,
    target: Option<&Content>,
) -> Result<(), ToolError> {
    let fs = &*context.write_fs;
    let failed = |error: pith_env::FsError| {
        ToolError::new(messages::cannot_restore(
            path.display(),
            &describe_fs_error(&error),
        ))
    };
    match target {
        Some(content) => {
            if let Some(parent) = path.parent() {
                fs.create_dir_all(parent).await.map_err(failed)?;
            }
            match &content.bytes {
                Some(bytes) => {
                    fs.write_atomic(path, bytes).await.map_err(failed)?;
                    let text = String::from_utf8_lossy(bytes);
                    context
                        .session
                        .record_written_text(fs, path, bytes, &text)
                        .await;
                }
                None => {
                    let fingerprint = context
                        .journal
                        .restore_streamed(fs, path, &content.hash, content.len)
                        .await
                        .map_err(|error| match error {
                            RestoreError::Write(error) => failed(error),
                            RestoreError::Journal(error) => ToolError::new(
                                messages::cannot_restore(path.display(), &error.to_string()),
                            ),
                        })?;
                    context.session.record_seen(fs, path, fingerprint).await;
                }
            }
            Ok(())
        }
        None => match fs.remove_file(path).await {
            Err(error) if error.kind != FsErrorKind::NotFound => Err(failed(error)),
            _ => Ok(()),
        },
    }
}

/// Where a journaled change stands now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EntryStatus {
    /// The file has the content the change wrote.
    Current,
    /// The file has the content from before the change (undone, or it never landed).
    Before,
    /// The file changed since (or cannot be read).
    Changed,
}

/// A journal entry and where it stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedEntry {
    /// The entry.
    #[serde(flatten)]
    pub entry: JournalEntry,
    /// Where it stands.
    pub status: EntryStatus,
}

impl Session {
    /// The journal's entries, oldest first, each with where it stands now
    /// (an error when the tool set has no journal).
    ///
    /// # Errors
    ///
    /// No journal, or it cannot be read.
    pub async fn journal_entries(&self) -> Result<Vec<ListedEntry>, ToolError> {
        let journal = self.journal()?;
        let entries = journal
            .entries()
            .await
            .map_err(|error| ToolError::new(error.to_string()))?;
        let fs = self.toolset().inner.write_fs.clone();
        let mut listed = Vec::with_capacity(entries.len());
        for entry in entries {
            // Hashed in chunks: a large file is not read whole.
            let current = match super::restore::hash_file(&*fs, &entry.path).await {
                Ok((hash, len)) => Some(FileState::Content {
                    hash,
                    len,
                    stored: false,
                }),
                Err(error) if error.kind == FsErrorKind::NotFound => Some(FileState::Absent),
                Err(_) => None,
            };
            let status = match current {
                Some(state) if state.same_content(&entry.after) => EntryStatus::Current,
                Some(state) if state.same_content(&entry.before) => EntryStatus::Before,
                _ => EntryStatus::Changed,
            };
            listed.push(ListedEntry { entry, status });
        }
        Ok(listed)
    }

    /// Undoes journaled changes through the mutation queue (see [`UndoOptions`]);
    /// the undo is journaled in `group` (a new group when `None`), so it can be undone.
    ///
    /// # Errors
    ///
    /// No journal, nothing selected, a file changed since (without `force`), or a
    /// restore failed; the error's details carry the per-file report.
    pub async fn undo(
        &self,
        options: UndoOptions,
        group: Option<String>,
    ) -> Result<UndoReport, ToolError> {
        let ticket = self.admit();
        self.undo_in_turn(ticket, options, group, None).await
    }

    /// [`Session::undo`] in `ticket`'s place, with `approve` run on the
    /// files inside their turns.
    pub(crate) async fn undo_in_turn(
        &self,
        ticket: Ticket,
        options: UndoOptions,
        group: Option<String>,
        approve: Option<Box<dyn ApproveFiles>>,
    ) -> Result<UndoReport, ToolError> {
        let journal = self.journal()?;
        let toolset = self.toolset();
        let context = UndoContext {
            journal,
            queue: toolset.queue().clone(),
            lock_fs: toolset.env().fs.clone(),
            write_fs: toolset.inner.write_fs.clone(),
            session: self.clone(),
            ticket,
            group: group.unwrap_or_else(super::random_id),
            approve,
        };
        undo(context, options).await
    }

    fn journal(&self) -> Result<Arc<Journal>, ToolError> {
        self.toolset()
            .config()
            .journal
            .clone()
            .ok_or_else(|| ToolError::new(messages::OFF))
    }
}
