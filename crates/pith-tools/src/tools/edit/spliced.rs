//! The plain exact edit of UTF-8 text, written without building the new content.
//!
//! When [`pith_text::locate_exact`] finds every `oldText` exactly once in UTF-8
//! text without a BOM or `\r` (what the engine's first rung would take as is),
//! the new content is the old bytes with the matched ranges replaced, and every
//! cost of the edit follows the change rather than the file:
//!
//! - the diff and the patch narrow both texts to the changed lines piece by
//!   piece (the engine's results, see `pith-text/src/spliced.rs`);
//! - the journal's SHA-256 of the old and of the new content share the bytes
//!   before the first change, then run on two threads, the new one fed the parts;
//! - the session's fingerprint and line hashes are fed the parts beside the write;
//! - the atomic write writes the parts into the temp file in turn, with early
//!   writeback, so no second copy of the file is made; on a multi-threaded
//!   runtime it starts at once and syncs while the journal hashes and records,
//!   and renames only when the record is made
//!   ([`FileSystem::write_atomic_parts_gated`](pith_env::FileSystem::write_atomic_parts_gated)):
//!   the journal's promise (recorded before the change is visible) holds, and
//!   the disk's wait overlaps the hashing.
//!
//! Results, messages, `details`, the journal entry and the staleness record are
//! those of the engine path (`run.rs`); anything else (fuzzy rungs, CRLF,
//! BOMs, other encodings, `replaceAll`, errors) goes that way.

use pith_env::Metadata;
use pith_text::{ExactEdits, TextEncoding};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio_util::sync::CancellationToken;

use super::run::{CONTEXT_LINES, EditJob, PARALLEL_BYTES, alongside, beside};
use crate::journal::{self, Before, CallTag, FileState, hashes_of_edit};
use crate::session::WrittenHashes;
use crate::tool::{ToolError, ToolOutput};

impl EditJob<'_> {
    /// Writes the exact edit `exact` of `old` (the file's bytes, as checked
    /// unchanged since the session read it) and returns the edit's result.
    pub(super) async fn spliced(
        &self,
        metadata: &Metadata,
        old: &[u8],
        exact: ExactEdits<'_>,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let (fs, raw) = (self.fs, self.raw_path.as_str());
        let journaled = self.context.config.journal.is_some();
        let parts = exact.pieces();
        let new_len = exact.new_len();
        let same = exact.splices().first().map_or(0, |(range, _)| range.start);
        // The journal's hashes of both contents, beside the diff.
        let prepare = || {
            beside(
                || journaled.then(|| hashes_of_edit(old, same, &parts)),
                || {
                    (
                        exact.display_diff(CONTEXT_LINES),
                        exact.unified_patch(raw, CONTEXT_LINES),
                    )
                },
                journaled && old.len() >= PARALLEL_BYTES,
            )
        };
        let tag = CallTag::new("edit", &self.context.group);
        let before = match metadata.modified {
            Some(modified) => Before::ContentAt(old, &self.path, modified),
            None => Before::Content(old),
        };
        let record = |hashes: Option<(String, String)>| {
            let (before_hash, after) = match hashes {
                Some((old_hash, new_hash)) => (
                    Some(old_hash),
                    FileState::Content {
                        hash: new_hash,
                        len: new_len as u64,
                        stored: false,
                    },
                ),
                // No journal: nothing is recorded.
                None => (None, FileState::Absent),
            };
            journal::record_hashed(
                self.context,
                &tag,
                0,
                &self.path,
                before,
                before_hash,
                after,
            )
        };
        let handle = Handle::try_current()
            .ok()
            .filter(|handle| handle.runtime_flavor() == RuntimeFlavor::MultiThread);
        let (note, written, hashes, (diff, patch)) = match handle
            .filter(|_| new_len >= PARALLEL_BYTES)
        {
            // The parts go to the disk while the journal hashes and records; the
            // rename waits for the record (the gate), as the journal requires.
            Some(handle) => {
                // Without a thread for the writer it runs last: the gate is
                // open (or shut) by then, so it writes and renames (or not) at once.
                let (go, done) = tokio::task::block_in_place(|| {
                    let (gate, gated) = std::sync::mpsc::channel();
                    let (written, (go, note, written_hashes, diff_patch)) = crate::beside::beside(
                        || handle.block_on(fs.write_atomic_parts_gated(&self.path, &parts, gated)),
                        || {
                            let (hashes, diff_patch) = prepare();
                            // Last check: once the gate opens the write completes.
                            let go = !cancel.is_cancelled();
                            // The session's hashes run while the journal waits for its fsyncs.
                            let (written_hashes, note) = beside(
                                || WrittenHashes::of_parts(&parts, new_len),
                                || go.then(|| handle.block_on(record(hashes))).flatten(),
                                true,
                            );
                            let _ = gate.send(go);
                            (go, note, written_hashes, diff_patch)
                        },
                    );
                    (go, (note, written, written_hashes, diff_patch))
                });
                if !go {
                    ToolError::check_cancelled(cancel)?;
                }
                done
            }
            None => {
                let (hashes, diff_patch) = prepare();
                // Last check: once the atomic write starts it completes.
                ToolError::check_cancelled(cancel)?;
                let note = record(hashes).await;
                let (written, written_hashes) = alongside(
                    fs.write_atomic_parts(&self.path, &parts),
                    || WrittenHashes::of_parts(&parts, new_len),
                    new_len >= PARALLEL_BYTES,
                )
                .await;
                (note, written, written_hashes, diff_patch)
            }
        };
        written.map_err(|error| self.failure(&error))?;
        self.context
            .session
            .record_written_hashes(fs, &self.path, &parts, hashes)
            .await;
        Ok(self.output(
            exact.matches().to_vec(),
            TextEncoding::utf8(),
            note,
            diff,
            patch,
        ))
    }
}
