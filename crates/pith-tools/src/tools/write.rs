//! `write`: create or replace a file atomically.
//!
//! Inside the mutation queue: check the overwrite policy, create the parent
//! directories, replace the file atomically (a killed or cancelled write
//! leaves the old file or the new one, never a mixture). The reported size is
//! the UTF-8 byte count (Pi reports UTF-16 code units).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pith_env::{FileSystem, FsErrorKind, Metadata};
use pith_text::TextEncoding;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Describe, define};
use crate::journal::{self, Before, CallTag};
use crate::paths::describe_fs_error;
use crate::queue::{ExclusiveError, exclusive};
use crate::stale;
use crate::textfile::encode_new;
use crate::{
    OverwritePolicy, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, ToolResult,
    parse_args,
};

const ABORTED: &str = "Operation aborted";
/// Existing files up to this size are read to keep their encoding and check staleness.
const LOAD_MAX_BYTES: u64 = 64 << 20;

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
    fn authorizes_in_queue(&self) -> bool {
        true
    }

    fn takes_queue_turn(&self) -> bool {
        true
    }

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(
        &self,
        args: Value,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> ToolResult {
        // Only the before-hooks need the arguments as sent: without hooks, no copy of
        // the content (a 50 MiB write would hold it twice).
        let raw_args = if context.config.hooks.is_empty() {
            Value::Null
        } else {
            args.clone()
        };
        let schema = &self.definition.input_schema;
        let (args, path) = match parse_and_resolve(schema, args, context) {
            Ok(parsed) => parsed,
            Err(error) => return error.into(),
        };
        if cancel.is_cancelled() {
            return ToolResult::error(ABORTED);
        }
        let fs = context.write_fs().clone();
        let job = WriteJob {
            fs: fs.clone(),
            context: context.clone(),
            schema: schema.clone(),
            raw_args,
            path: path.clone(),
            args,
        };
        match exclusive(
            &context.queue,
            &fs,
            &path,
            context.ticket(),
            &cancel,
            move |token| job.run(token),
        )
        .await
        {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => error.into(),
            Err(ExclusiveError::Lock(error)) => ToolResult::error(describe_fs_error(&error)),
            Err(ExclusiveError::Panicked) => ToolResult::error(format!(
                "Could not write {}: internal error",
                path.display()
            )),
        }
    }
}

fn parse_and_resolve(
    schema: &Value,
    args: Value,
    context: &ToolContext,
) -> Result<(WriteArgs, PathBuf), ToolError> {
    let args: WriteArgs = parse_args("write", schema, args)?;
    let path = context.resolve(&args.path)?;
    Ok((args, path))
}

/// One write, run while holding the file's turn in the queue.
struct WriteJob {
    fs: Arc<dyn FileSystem>,
    context: ToolContext,
    schema: Value,
    raw_args: Value,
    path: PathBuf,
    args: WriteArgs,
}

impl WriteJob {
    async fn run(self, cancel: CancellationToken) -> Result<ToolResult, ToolError> {
        let WriteJob {
            fs,
            context,
            schema,
            raw_args,
            path,
            mut args,
        } = self;
        // Hooks and the workspace check run here, holding the file's turn, so
        // an approval and the write it approves cannot interleave with another write.
        if let Some(rewritten) = context
            .authorize_mutation("write", &raw_args, &path)
            .await?
        {
            let (new_args, new_path) = parse_and_resolve(&schema, rewritten, &context)?;
            if new_path != path {
                return Err(ToolContext::moved_by_hook("write"));
            }
            args = new_args;
        }
        let session = context.session.clone();
        let policy = context.config.overwrite_policy;
        let fs = &*fs;
        let raw = &args.path;
        let aborted = || {
            cancel
                .is_cancelled()
                .then(|| ToolError::new(ABORTED))
                .map_or(Ok(()), Err)
        };
        aborted()?;
        let encoding = match args.encoding.as_deref() {
            Some(label) => Some(TextEncoding::from_label(label).ok_or_else(|| {
                ToolError::new(format!(
                    "Cannot write {raw}: unknown encoding {label:?}. Use a name such as utf-8, utf-8-bom, utf-16le, utf-16be, windows-1252, shift_jis, euc-jp, gbk, gb18030, big5, euc-kr or koi8-r."
                ))
            })?),
            None => None,
        };
        // The encoding of the file being replaced, when it is not UTF-8.
        let mut existing = None;
        match fs.metadata(&path).await {
            Ok(metadata) if metadata.is_dir() => {
                return Err(ToolError::new(format!(
                    "Cannot write {raw}: {} is a directory. Write to a file path inside it.",
                    path.display()
                )));
            }
            Ok(metadata) if !metadata.is_file() => {
                // A FIFO, socket or device: the read says which, at once.
                if let Err(error) = fs.read_range(&path, 0, 0).await {
                    return Err(ToolError::new(format!(
                        "Cannot write {raw}: {}",
                        describe_fs_error(&error)
                    )));
                }
            }
            Ok(metadata) => {
                existing = check_overwrite(&context, fs, &path, raw, &metadata, policy).await?;
            }
            Err(error) if error.kind == FsErrorKind::NotFound => {}
            Err(error) if error.kind == FsErrorKind::NotADirectory => {
                return Err(ToolError::new(format!(
                    "Cannot write {raw}: a parent of {} is a file, not a directory.",
                    path.display()
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
                    "a file is in the way".to_owned()
                }
                _ => describe_fs_error(&error),
            };
            return Err(ToolError::new(format!(
                "Cannot write {raw}: could not create the directory {}: {reason}.",
                parent.display()
            )));
        }
        // Last check: once the atomic write starts it completes.
        if let Err(error) = aborted() {
            remove_created(fs, &created).await;
            return Err(error);
        }
        let encoding = encoding.or(existing).unwrap_or_else(TextEncoding::utf8);
        let bytes = match encode_new(&args.content, encoding, raw) {
            Ok(bytes) => bytes,
            Err(error) => {
                remove_created(fs, &created).await;
                return Err(error);
            }
        };
        let bytes = &*bytes;
        // Journaled (and fsynced) before the rename makes the new content visible.
        let previous = journal::previous_content(&context, fs, &path).await;
        let before = match &previous {
            Ok(Some(old)) => Before::Content(old),
            Ok(None) => Before::Absent,
            Err(len) => Before::TooLarge(*len),
        };
        let tag = CallTag::new("write", &context.group);
        let note = journal::record_change(&context, &tag, 0, &path, before, Some(bytes)).await;
        if let Err(error) = fs.write_atomic(&path, bytes).await {
            // A failed write leaves the file system as it was: no new directories either.
            remove_created(fs, &created).await;
            return Err(ToolError::new(format!(
                "Could not write {raw}: {}",
                describe_fs_error(&error)
            )));
        }
        session
            .record_written_text(fs, &path, bytes, &args.content)
            .await;
        let mut text = format!("Successfully wrote {} bytes to {raw}", bytes.len());
        let mut structured = serde_json::json!({"path": raw, "bytes": bytes.len()});
        if encoding != TextEncoding::utf8() {
            text.push_str(&format!(" in {}", encoding.describe()));
            structured["encoding"] = serde_json::json!(encoding.describe());
        }
        if let Some(note) = note {
            text.push('\n');
            text.push_str(&note);
        }
        Ok(ToolResult::text(text).with_structured(structured))
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

/// The checks before replacing an existing file, and its encoding when it is not
/// UTF-8 (kept unless the call names one). [`OverwritePolicy::RequireRead`]: the session
/// must have read the file. Then, when the session saw it (and the policy requires a read
/// or the staleness check is on), its content must be what the session saw.
async fn check_overwrite(
    context: &ToolContext,
    fs: &dyn FileSystem,
    path: &Path,
    raw: &str,
    metadata: &Metadata,
    policy: OverwritePolicy,
) -> Result<Option<TextEncoding>, ToolError> {
    let require = policy == OverwritePolicy::RequireRead;
    let not_read = || {
        ToolError::new(format!(
            "{raw} already exists and has not been read in this session. Read it first, then write it (or use edit for targeted changes)."
        ))
    };
    let changed = |detail: String| {
        ToolError::new(format!(
            "{raw} has changed since this session last read it. Read it again before overwriting it.\n{detail}"
        ))
    };
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
        return Ok(None);
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
    Ok(decoded
        .map(|decoded| decoded.encoding)
        .filter(|encoding| !encoding.is_utf8()))
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
