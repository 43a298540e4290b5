//! `write`: create or replace a file atomically.
//!
//! Inside the mutation queue: check the overwrite policy, create the parent
//! directories, replace the file atomically (a killed or cancelled write
//! leaves the old file or the new one, never a mixture). The reported size is
//! the UTF-8 byte count (Pi reports UTF-16 code units).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use pith_env::{FileSystem, FsErrorKind, Metadata};
use pith_text::TextEncoding;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{Describe, define};
use crate::journal::{self, Before, CallTag, FileState, Unread};
use crate::messages::write as messages;
use crate::paths::describe_fs_error;
use crate::session::OverwritePolicy;
use crate::stale;
use crate::textfile::{encode_new, survey};
use crate::tool::{
    QueueUse, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, ToolOutput,
};

/// Existing files up to this size are read to keep their encoding and check staleness.
const LOAD_MAX_BYTES: u64 = 64 << 20;
/// Existing files larger than this are read as a stream rather than whole (see
/// [`check_overwrite`]): a UTF-8 file is never held, not even for the journal.
const STREAM_MIN_BYTES: u64 = 1 << 20;

/// Arguments of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct WriteArgs {
    /// Path to the file to write (relative or absolute)
    path: String,
    /// Content to write to the file
    content: String,
    /// Text encoding to write in, e.g. "utf-8", "shift_jis", "windows-1252", "gbk", "utf-16le" (default: an existing file's own encoding, else UTF-8)
    encoding: Option<String>,
}

pub(crate) struct WriteTool {
    definition: ToolDefinition,
}

impl WriteTool {
    pub(crate) fn new() -> WriteTool {
        WriteTool {
            definition: define::<WriteArgs>(Describe {
                name: "write",
                title: "Write file",
                description: "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories. The write is atomic. To overwrite an existing file, read it first in this session.",
                prompt_snippet: "Create or overwrite files",
                prompt_guidelines: &["Use write only for new files or complete rewrites."],
                annotations: ToolAnnotations {
                    read_only: false,
                    destructive: true,
                    idempotent: true,
                    open_world: false,
                },
            }),
        }
    }
}

#[async_trait]
impl Tool for WriteTool {
    type Args = WriteArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn queue_use(&self) -> QueueUse {
        QueueUse::Target
    }

    fn target<'a>(&self, args: &'a WriteArgs) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn execute(
        &self,
        args: WriteArgs,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let path = context.resolve_target(&args.path)?;
        let content = std::sync::Arc::new(args.content);
        let fs = &**context.write_fs();
        let session = &context.session;
        let policy = context.config.overwrite_policy;
        let raw = &args.path;
        let aborted = || ToolError::check_cancelled(&cancel);
        let encoding = match args.encoding.as_deref() {
            Some(label) => Some(
                TextEncoding::from_label(label)
                    .ok_or_else(|| ToolError::new(messages::unknown_encoding(raw, label)))?,
            ),
            None => None,
        };
        // What the file being replaced is: its encoding and modification time, its
        // SHA-256 when it was streamed.
        let mut existing = Existing::default();
        match fs.metadata(&path).await {
            Ok(metadata) if metadata.is_dir() => {
                return Err(ToolError::new(messages::directory(raw, path.display())));
            }
            Ok(metadata) if !metadata.is_file() => {
                // A FIFO, socket or device: the read says which, at once.
                if let Err(error) = fs.read_range(&path, 0, 0).await {
                    return Err(ToolError::new(messages::cannot_write(
                        raw,
                        &describe_fs_error(&error),
                    )));
                }
            }
            Ok(metadata) => {
                // The journal's hash of the new content runs while the old file is read.
                if metadata.len > STREAM_MIN_BYTES
                    && content.len() as u64 > STREAM_MIN_BYTES
                    && context.config.journal.is_some()
                {
                    let content = std::sync::Arc::clone(&content);
                    existing.new_hash = Some(tokio::task::spawn_blocking(move || {
                        pith_env::remote::sha256_hex(content.as_bytes())
                    }));
                }
                let new_hash = existing.new_hash.take();
                existing = check_overwrite(context, fs, &path, raw, &metadata, policy).await?;
                existing.new_hash = new_hash;
                existing.modified = metadata.modified;
            }
            Err(error) if error.kind == FsErrorKind::NotFound => {}
            Err(error) if error.kind == FsErrorKind::NotADirectory => {
                return Err(ToolError::new(messages::parent_is_file(
                    raw,
                    path.display(),
                )));
            }
            Err(error) => return Err(ToolError::new(describe_fs_error(&error))),
        }
        aborted()?;
        let created = match path.parent() {
            Some(parent) => missing_ancestors(fs, parent).await,
            None => Vec::new(),
        };
        if let Some(parent) = path.parent()
            && let Err(error) = fs.create_dir_all(parent).await
        {
            remove_created(fs, &created).await;
            let reason = match error.kind {
                FsErrorKind::AlreadyExists | FsErrorKind::NotADirectory => {
                    messages::FILE_IN_THE_WAY.to_owned()
                }
                _ => describe_fs_error(&error),
            };
            return Err(ToolError::new(messages::cannot_create_dir(
                raw,
                parent.display(),
                &reason,
            )));
        }
        // Last check: once the atomic write starts it completes.
        if let Err(error) = aborted() {
            remove_created(fs, &created).await;
            return Err(error);
        }
        let encoding = encoding
            .or(existing.encoding)
            .unwrap_or_else(TextEncoding::utf8);
        let bytes = match encode_new(&content, encoding, raw) {
            Ok(bytes) => bytes,
            Err(error) => {
                remove_created(fs, &created).await;
                return Err(error);
            }
        };
        // The hash computed beside the read is of the content's UTF-8 bytes.
        let after_hash = match (existing.new_hash.take(), &bytes) {
            (Some(hashing), std::borrow::Cow::Borrowed(_)) => hashing.await.ok(),
            _ => None,
        };
        let bytes = &*bytes;
        // Journaled (and fsynced) before the rename makes the new content visible.
        let previous = match &existing.streamed {
            Some(_) => Ok(None),
            None => journal::previous_content(context, fs, &path).await,
        };
        let before = match (&existing.streamed, &previous) {
            (Some((len, hash)), _) => Before::Unread(Unread {
                fs,
                path: &path,
                len: *len,
                modified: existing.modified,
                hash,
            }),
            (None, Ok(Some(old))) => Before::Content(old),
            (None, Ok(None)) => Before::Absent,
            (None, Err(len)) => Before::TooLarge(*len),
        };
        let tag = CallTag::new("write", &context.group);
        let note = match after_hash {
            Some(hash) => {
                let after = FileState::Content {
                    hash,
                    len: bytes.len() as u64,
                    stored: false,
                };
                journal::record_hashed(context, &tag, 0, &path, before, None, after).await
            }
            None => journal::record_change(context, &tag, 0, &path, before, Some(bytes)).await,
        };
        if let Err(error) = fs.write_atomic(&path, bytes).await {
            // A failed write leaves the file system as it was: no new directories either.
            remove_created(fs, &created).await;
            return Err(ToolError::new(messages::write_failed(
                raw,
                &describe_fs_error(&error),
            )));
        }
        session
            .record_written_text(fs, &path, bytes, &content)
            .await;
        let written_in = (encoding != TextEncoding::utf8()).then(|| encoding.describe());
        let mut text = messages::wrote(bytes.len(), raw, written_in.as_deref());
        let mut structured = serde_json::json!({"path": raw, "bytes": bytes.len()});
        if let Some(described) = &written_in {
            structured["encoding"] = serde_json::json!(described);
        }
        if let Some(note) = note {
            text.push('\n');
            text.push_str(&note);
        }
        Ok(ToolOutput::text(text).with_structured(structured))
    }
}

/// The ancestors of `dir` (itself included) that do not exist yet, deepest first.
pub(crate) async fn missing_ancestors(fs: &dyn FileSystem, dir: &Path) -> Vec<PathBuf> {
    let mut missing = Vec::new();
    let mut current = Some(dir);
    while let Some(dir) = current {
        match fs.symlink_metadata(dir).await {
            Err(error) if error.kind == FsErrorKind::NotFound => missing.push(dir.to_path_buf()),
            _ => break,
        }
        current = dir.parent();
    }
    missing
}

/// Removes directories this write created, deepest first (each only if still empty).
pub(crate) async fn remove_created(fs: &dyn FileSystem, created: &[PathBuf]) {
    for dir in created {
        if fs.remove_dir(dir).await.is_err() {
            break;
        }
    }
}

/// What `write` learnt of the file it replaces.
#[derive(Debug, Default)]
struct Existing {
    /// Its encoding, when it is not UTF-8 (kept unless the call names one).
    encoding: Option<TextEncoding>,
    /// Its modification time when it was checked.
    modified: Option<std::time::SystemTime>,
    /// Its size and SHA-256 when it was read as a stream for the journal (it is
    /// journaled from its file, not from memory).
    streamed: Option<(u64, String)>,
    /// The SHA-256 of the new content's UTF-8 bytes, computed meanwhile.
    new_hash: Option<tokio::task::JoinHandle<String>>,
}

/// The checks before replacing an existing file, and what it is ([`Existing`]).
/// [`OverwritePolicy::RequireRead`]: the session must have read the file. Then, when the
/// session saw it (and the policy requires a read or the staleness check is on), its
/// content must be what the session saw.
///
/// A file over [`STREAM_MIN_BYTES`] is read once as a stream (UTF-8 check, fingerprint,
/// the journal's SHA-256) and never held; only when it turns out not to be UTF-8, or to
/// have changed, is it read whole (for its encoding, or to say which lines changed).
async fn check_overwrite(
    context: &ToolContext,
    fs: &dyn FileSystem,
    path: &Path,
    raw: &str,
    metadata: &Metadata,
    policy: OverwritePolicy,
) -> Result<Existing, ToolError> {
    let require = policy == OverwritePolicy::RequireRead;
    let not_read = || ToolError::new(messages::not_read(raw));
    let changed = |detail: String| ToolError::new(messages::changed_since_read(raw, &detail));
    let seen = match fs.canonicalize(path).await {
        Ok(real) => context.session.seen_entry(&real),
        Err(_) if require => return Err(not_read()),
        Err(_) => None,
    };
    if require && seen.is_none() {
        return Err(not_read());
    }
    let check = seen.filter(|_| require || context.config.stale_check);
    if metadata.len > LOAD_MAX_BYTES {
        if let Some(seen) = &check {
            stale::compare_large(seen, fs, path, metadata)
                .await
                .map_err(|c| changed(c.detail))?;
        }
        return Ok(Existing::default());
    }
    if metadata.len > STREAM_MIN_BYTES {
        let journal = context
            .config
            .journal
            .as_ref()
            .is_some_and(|journal| metadata.len <= journal.limits().file_bytes);
        let content = check.as_ref().is_some_and(|seen| {
            matches!(
                seen.fingerprint,
                crate::session::Fingerprint::Content { .. }
            )
        });
        let surveyed = survey(fs, path, content, journal)
            .await
            .map_err(|error| ToolError::new(describe_fs_error(&error)))?;
        let fresh = match &check {
            Some(seen) if content => surveyed.fingerprint == Some(seen.fingerprint),
            Some(seen) => stale::compare_large(seen, fs, path, metadata).await.is_ok(),
            None => true,
        };
        if surveyed.utf8 && fresh {
            return Ok(Existing {
                streamed: surveyed.sha256.map(|hash| (surveyed.len, hash)),
                ..Existing::default()
            });
        }
    }
    let bytes = fs
        .read(path)
        .await
        .map_err(|error| ToolError::new(describe_fs_error(&error)))?;
    let decoded = pith_text::decode(&bytes).ok();
    if let Some(seen) = &check {
        let text = decoded.as_ref().map(|decoded| &*decoded.text);
        stale::compare(seen, fs, path, &bytes, text)
            .await
            .map_err(|c| changed(c.detail))?;
    }
    Ok(Existing {
        encoding: decoded
            .map(|decoded| decoded.encoding)
            .filter(|encoding| !encoding.is_utf8()),
        ..Existing::default()
    })
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
