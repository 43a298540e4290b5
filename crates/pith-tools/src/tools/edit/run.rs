//! The read-modify-write of one edit call, run while holding the file's turn.

use std::path::PathBuf;

use pith_env::{FileKind, FileSystem, FsError, FsErrorKind, Metadata};
use pith_text::{
    DisplayDiff, Edit, EditMatch, TextEncoding, apply_edits_borrowed, check_representable,
    display_diff, locate_exact, unified_patch,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::details::EditDetails;
use crate::journal::{self, Before, CallTag, CheckpointedHash, FileState};
use crate::messages::edit::{self as messages, engine_error, fuzzy_note, replace_all_note};
use crate::paths::{describe_fs_error, not_found_hint};
use crate::session::{Fingerprint, WrittenHashes};
use crate::textfile::{LoadedText, check_unchanged, encoding_note};
use crate::tool::{ToolContext, ToolError, ToolOutput};

/// Context lines around each change in the diff and the patch.
pub(super) const CONTEXT_LINES: usize = 4;

/// One edit call's work.
pub(super) struct EditJob<'a> {
    pub(super) fs: &'a dyn FileSystem,
    pub(super) context: &'a ToolContext,
    /// The resolved absolute path.
    pub(super) path: PathBuf,
    /// The path as the model sent it (used in every message).
    pub(super) raw_path: String,
    pub(super) edits: Vec<Edit>,
    /// Per edit: replace every exact occurrence.
    pub(super) replace_all: Vec<bool>,
}

impl EditJob<'_> {
    pub(super) async fn run(self, cancel: &CancellationToken) -> Result<ToolOutput, ToolError> {
        let fs = self.fs;
        let raw = self.raw_path.as_str();
        let aborted = || ToolError::check_cancelled(cancel);
        let metadata = self.check_file(fs).await?;
        let len = metadata.len;
        // Held until the edit is done: many large edits at once wait their turn.
        let Some(_reserved) = super::budget::BUDGET
            .reserve(super::budget::cost(len), cancel)
            .await
        else {
            return Err(ToolError::aborted());
        };
        if len > super::large::IN_MEMORY_MAX_BYTES {
            crate::stale::check_fresh_large(self.context, fs, &self.path, &metadata)
                .await
                .map_err(|changed| {
                    ToolError::new(crate::messages::textfile::changed_since_read(
                        "edit",
                        raw,
                        &changed.detail,
                    ))
                })?;
            // Streamed, exact matches only: the file is never held in memory,
            // and so it is not journaled (it is over the journal's per-file cap).
            let (mut result, _) = super::large::edit(fs, &self.path, raw, len, &self.edits).await?;
            if self.context.config.journal.is_some() {
                result
                    .content
                    .push(crate::tool::Content::text(messages::streamed_not_undoable(
                        raw, len,
                    )));
            }
            if let Ok(metadata) = fs.metadata(&self.path).await
                && let Some(stamp) = Fingerprint::stamp(&metadata)
            {
                self.context
                    .session
                    .record_seen(fs, &self.path, stamp)
                    .await;
            }
            return Ok(result);
        }
        let bytes = self.read(fs).await?;
        let loaded = LoadedText::decode(bytes, raw, "edit")?;
        check_unchanged(self.context, fs, &self.path, &loaded, raw, "edit").await?;
        aborted()?;
        let encoding = loaded.encoding();
        // A plain exact edit of UTF-8 text is written from the old bytes and the
        // replacements, never built whole (see `spliced.rs`).
        if encoding == TextEncoding::utf8()
            && let Some(exact) = locate_exact(loaded.text(), &self.edits, &self.replace_all)
        {
            return self.spliced(&metadata, loaded.bytes(), exact, cancel).await;
        }
        if !encoding.is_utf8() {
            for (index, edit) in self.edits.iter().enumerate() {
                check_representable(&edit.new_text, encoding).map_err(|error| {
                    ToolError::new(messages::new_text_unrepresentable(
                        raw,
                        index,
                        error,
                        encoding.name(),
                    ))
                })?;
            }
        }
        // The journal's hash of the previous content runs beside the engine.
        let journaled = self.context.config.journal.is_some();
        let (old_hash, outcome) = beside(
            || journaled.then(|| CheckpointedHash::of(loaded.bytes())),
            || apply_edits_borrowed(loaded.text(), &self.edits, &self.replace_all),
            journaled && loaded.bytes().len() >= PARALLEL_BYTES,
        );
        let outcome =
            outcome.map_err(|error| ToolError::new(engine_error(&error, raw, self.edits.len())))?;
        let bytes = loaded.encode_edit(outcome.file_text(), raw, "edit")?;
        // Last check: once the atomic write starts it completes.
        aborted()?;
        let tag = CallTag::new("edit", &self.context.group);
        // The new content is hashed from its first changed byte on.
        let (before_hash, after) = match &old_hash {
            Some(old) => (
                Some(old.hash().to_owned()),
                FileState::Content {
                    hash: old.hash_of_edit(loaded.bytes(), &bytes),
                    len: bytes.len() as u64,
                    stored: false,
                },
            ),
            // No journal: nothing is recorded.
            None => (None, FileState::Absent),
        };
        let note = journal::record_hashed(
            self.context,
            &tag,
            0,
            &self.path,
            match metadata.modified {
                Some(modified) => Before::ContentAt(loaded.bytes(), &self.path, modified),
                None => Before::Content(loaded.bytes()),
            },
            before_hash,
            after,
        )
        .await;
        // The session's hashes of the new content and the diff, side by side, while
        // the atomic write waits for the disk.
        let parallel = bytes.len() >= PARALLEL_BYTES;
        let (written, (hashes, (diff, patch))) = alongside(
            fs.write_atomic(&self.path, &bytes),
            || {
                beside(
                    || WrittenHashes::of(&bytes, outcome.file_text()),
                    || {
                        let diff =
                            display_diff(&outcome.old_content, &outcome.new_content, CONTEXT_LINES);
                        let patch = unified_patch(
                            raw,
                            &outcome.old_content,
                            &outcome.new_content,
                            CONTEXT_LINES,
                        );
                        (diff, patch)
                    },
                    parallel,
                )
            },
            parallel,
        )
        .await;
        written.map_err(|error| self.failure(&error))?;
        self.context
            .session
            .record_written_hashes(fs, &self.path, &[&bytes], hashes)
            .await;
        Ok(self.output(outcome.matches, encoding, note, diff, patch))
    }

    /// The result of an edit that was written: `note` is the journal's, if any.
    pub(super) fn output(
        &self,
        matches: Vec<EditMatch>,
        encoding: TextEncoding,
        note: Option<String>,
        diff: DisplayDiff,
        patch: String,
    ) -> ToolOutput {
        let raw = self.raw_path.as_str();
        let mut text = messages::replaced(matches.len(), raw);
        if let Some(note) = replace_all_note(&matches, &self.replace_all) {
            text.push('\n');
            text.push_str(&note);
        }
        if let Some(note) = fuzzy_note(&matches) {
            text.push('\n');
            text.push_str(&note);
        }
        text.push_str(&encoding_note(encoding));
        if let Some(note) = note {
            text.push('\n');
            text.push_str(&note);
        }
        let structured = json!({
            "path": raw,
            "replaced": matches.len(),
            "matches": matches,
            "firstChangedLine": diff.first_changed_line,
        });
        ToolOutput::text(text)
            .with_structured(structured)
            .with_details_of(&EditDetails {
                diff: diff.diff,
                patch,
                first_changed_line: diff.first_changed_line.map(|line| line as u64),
                matches,
                encoding: Some(encoding.describe()),
            })
    }

    /// Reads the file (checked by [`EditJob::check_file`]).
    async fn read(&self, fs: &dyn FileSystem) -> Result<Vec<u8>, ToolError> {
        match fs.read(&self.path).await {
            Ok(bytes) => Ok(bytes),
            Err(error) => Err(self.missing_or_failure(&error).await),
        }
    }

    /// The file's metadata, refusing anything but a regular file (a FIFO would block).
    async fn check_file(&self, fs: &dyn FileSystem) -> Result<Metadata, ToolError> {
        let metadata = match fs.metadata(&self.path).await {
            Ok(metadata) => metadata,
            Err(error) => return Err(self.missing_or_failure(&error).await),
        };
        match metadata.kind {
            FileKind::File => {}
            FileKind::Directory => {
                return Err(ToolError::new(messages::failed(
                    &self.raw_path,
                    messages::IS_DIRECTORY,
                )));
            }
            _ => {
                return Err(ToolError::new(messages::failed(
                    &self.raw_path,
                    messages::NOT_REGULAR,
                )));
            }
        }
        Ok(metadata)
    }

    async fn missing_or_failure(&self, error: &FsError) -> ToolError {
        if error.kind == FsErrorKind::NotFound {
            let lead = messages::failed(&self.raw_path, messages::NOT_FOUND);
            ToolError::new(not_found_hint(self.context, lead, &self.path).await)
        } else {
            self.failure(error)
        }
    }

    pub(super) fn failure(&self, error: &FsError) -> ToolError {
        let reason = match error.kind {
            FsErrorKind::PermissionDenied => messages::PERMISSION_DENIED.to_owned(),
            FsErrorKind::IsADirectory => messages::IS_DIRECTORY.to_owned(),
            _ => messages::fs_reason(&describe_fs_error(error)),
        };
        ToolError::new(messages::failed(&self.raw_path, reason))
    }
}

/// Files from which the session's hashes and the diff are computed on separate threads.
pub(super) const PARALLEL_BYTES: usize = 1 << 20;

/// Awaits `future` (I/O: the atomic write and its fsyncs) while `work` (CPU) runs on
/// another thread, when `parallel` and the runtime has worker threads (the future then
/// runs to completion in place, see [`tokio::task::block_in_place`]); otherwise
/// one after the other, the future first.
pub(super) async fn alongside<T, A: Send>(
    future: impl std::future::Future<Output = T>,
    work: impl FnOnce() -> A + Send,
    parallel: bool,
) -> (T, A) {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let handle = Handle::try_current()
        .ok()
        .filter(|handle| handle.runtime_flavor() == RuntimeFlavor::MultiThread);
    let Some(handle) = handle.filter(|_| parallel) else {
        let output = future.await;
        return (output, work());
    };
    tokio::task::block_in_place(|| {
        let (done, output) = crate::beside::beside(work, || handle.block_on(future));
        (output, done)
    })
}

/// Runs `first` and `second`, on two threads when `parallel` (CPU work over a large
/// file's text: tens of milliseconds each for 20 MiB).
pub(super) fn beside<A: Send, B>(
    first: impl FnOnce() -> A + Send,
    second: impl FnOnce() -> B,
    parallel: bool,
) -> (A, B) {
    if !parallel {
        return (first(), second());
    }
    crate::beside::beside(first, second)
}
