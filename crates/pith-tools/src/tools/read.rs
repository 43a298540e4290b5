//! `read`: text files with paging, images as attachments.
//!
//! The file is opened once and streamed: the first bytes decide between an
//! image, a binary file and text; text goes through a line scanner that keeps
//! only what is shown (see [`text`]). Differences from Pi (reference §4): a
//! trailing newline is not an extra line (#7329), a UTF-8 BOM is not shown,
//! binary files, directories and missing files get correctable messages, and
//! memory stays bounded whatever the file's size.

mod image;
mod index;
mod text;

use std::path::Path;

use async_trait::async_trait;
use pith_env::{FileKind, FileReader, FsErrorKind};
use pith_text::{LineHasher, TruncationLimits, format_size};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Describe, READ_ONLY, define};
use crate::details::ImageDetails;
use crate::messages::read as messages;
use crate::paths::resolve_read_path;
use crate::paths::{describe_fs_error, not_found_hint};
use crate::policy::Access;
use crate::session::{ContentHasher, Fingerprint};
use crate::tool::{
    Content, QueueUse, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput, details_value,
};

/// Bytes read before deciding what kind of file this is.
const HEADER_BYTES: usize = 8192;
/// A file up to this size is read whole by the first read (its size plus one
/// byte asked for, to see its end): a small file costs one buffer and no
/// streaming pass. Only its first [`HEADER_BYTES`] decide its kind.
const WHOLE_FIRST_MAX: u64 = 64 * 1024;
/// Chunk size of the streaming pass (reached by growing from 8 KiB while reads fill
/// the buffer): 1 MiB, so that a page deep in a large file is reached in few reads.
const CHUNK_BYTES: usize = 1024 * 1024;
/// Bytes a reader skips at most per call before a deep page
/// ([`FileReader::skip_lines`]); a line index checkpoint is noted after each.
const SKIP_STEP_BYTES: u64 = 4 * 1024 * 1024;
/// Image files larger than this are not loaded.
const MAX_IMAGE_FILE_BYTES: u64 = 64 * 1024 * 1024;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
/// Files that are not plain UTF-8 up to this size are decoded whole (larger ones are
/// shown lossily, as UTF-8).
const DECODE_MAX_BYTES: u64 = 64 << 20;

/// Options of the `read` tool.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReadConfig {
    /// Resize images to fit the limits (default true).
    pub auto_resize_images: bool,
}

impl Default for ReadConfig {
    fn default() -> ReadConfig {
        ReadConfig {
            auto_resize_images: true,
        }
    }
}

/// Arguments of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ReadArgs {
    /// Path to the file to read (relative or absolute)
    path: String,
    /// Line number to start reading from (1-indexed)
    offset: Option<u64>,
    /// Maximum number of lines to read
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

pub(crate) struct ReadTool {
    definition: ToolDefinition,
    /// Where lines of the large files this session read start.
    lines: index::LineIndexes,
}

impl ReadTool {
    pub(crate) fn new() -> ReadTool {
        ReadTool {
            definition: define::<ReadArgs>(Describe {
                name: "read",
                title: "Read file",
                description: "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.",
                prompt_snippet: "Read file contents",
                prompt_guidelines: &["Use read to examine files instead of cat or sed."],
                annotations: READ_ONLY,
            }),
            lines: index::LineIndexes::default(),
        }
    }
}

#[async_trait]
impl Tool for ReadTool {
    type Args = ReadArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn queue_use(&self) -> QueueUse {
        QueueUse::Turn
    }

    async fn execute(
        &self,
        args: ReadArgs,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        read(&args, context, &cancel, &self.lines).await
    }
}

async fn read(
    args: &ReadArgs,
    context: &ToolContext,
    cancel: &CancellationToken,
    indexes: &index::LineIndexes,
) -> Result<ToolOutput, ToolError> {
    let fs = &**context.read_fs();
    let path = resolve_read_path(&args.path, &context.cwd, fs).await?;
    context.check_path(&path, Access::Read).await?;
    let fs = &**context.read_fs_for(&path);
    // A read takes its turn in the file's queue like a write: it sees every write and
    // edit of the file that arrived before it, and none that arrived after.
    let turn = context
        .queue
        .lock_in_turn(fs, &path, context.ticket())
        .await
        .map_err(|error| ToolError::new(describe_fs_error(&error)))?;
    let metadata = match fs.metadata(&path).await {
        Ok(metadata) => metadata,
        Err(error) if error.kind == FsErrorKind::NotFound => {
            let lead = messages::not_found(path.display());
            return Err(ToolError::new(not_found_hint(context, lead, &path).await));
        }
        Err(error) => return Err(ToolError::new(describe_fs_error(&error))),
    };
    match metadata.kind {
        FileKind::Directory => {
            return Err(ToolError::new(messages::directory(path.display())));
        }
        FileKind::File => {}
        _ => {
            // The port names the kind (FIFO, socket, device) without blocking.
            let kind = match fs.read_range(&path, 0, 0).await {
                Err(error) if error.kind == FsErrorKind::SpecialFile => error.detail,
                _ => None,
            };
            return Err(ToolError::new(messages::special(
                path.display(),
                kind.as_deref().unwrap_or("a socket, FIFO or device"),
            )));
        }
    }
    let mut reader = fs
        .open(&path)
        .await
        .map_err(|error| ToolError::new(describe_fs_error(&error)))?;
    let stamp = Fingerprint::stamp(&metadata);
    let mut hasher = stamp.is_none().then(ContentHasher::new);
    // A file read whole in its first bytes ends where its size says: the
    // read that would return nothing after them is spared (a file that grew
    // meanwhile was read as it was at the `stat`, and is stale from then on;
    // a size of 0, as procfs gives, reads on to the end).
    let (first, size) = if metadata.len < WHOLE_FIRST_MAX {
        let size = (metadata.len > 0).then(|| to_usize(metadata.len));
        (to_usize(metadata.len + 1).max(HEADER_BYTES), size)
    } else {
        (HEADER_BYTES, None)
    };
    let (header, at_end) = read_header(&mut *reader, &mut hasher, first, size, cancel).await?;
    // What decides the kind: the first bytes, however many were read.
    let head = &header[..header.len().min(HEADER_BYTES)];
    if let Some(kind) = image::sniff(head) {
        drop(reader);
        return read_image(&path, metadata.len, kind, context, cancel).await;
    }
    if needs_decoding(head) && metadata.len <= DECODE_MAX_BYTES {
        drop(reader);
        return read_decoded(args, &path, context, cancel).await;
    }
    let body = header.strip_prefix(UTF8_BOM).unwrap_or(&header);
    let bom = header.len() - body.len();
    if memchr::memchr(0, &head[bom.min(head.len())..]).is_some() {
        return Err(binary_file(&args.path, metadata.len));
    }
    let mut lines = hasher.is_some().then(LineHasher::new);
    if let Some(lines) = &mut lines {
        lines.update(body);
    }
    // A file read by stamp is read only as far as the page: its line index helps.
    let index = hasher
        .is_none()
        .then(|| index::FileKey::of(&path, &metadata))
        .flatten()
        .map(|key| Indexed {
            key,
            indexes,
            bom: bom as u64,
        });
    let text = TextFile {
        path: &path,
        // The queue key is the file's real path, computed through this view
        // inside the turn: what the session records it under.
        real: turn.key(),
        reader: &mut *reader,
        hasher,
        lines,
        stamp,
        may_decode: metadata.len <= DECODE_MAX_BYTES,
        index,
        at_end,
    };
    let result = read_text(args, text, body, context, cancel).await?;
    match result {
        // Invalid UTF-8 past the first bytes: decode the whole file after all.
        Streamed::Lossy => read_decoded(args, &path, context, cancel).await,
        Streamed::Shown(result) => Ok(result),
    }
}

/// Whether the first bytes of a file show it is not plain UTF-8: a UTF-16 BOM, or a byte
/// sequence that is not UTF-8 (one cut by the end of the header aside).
fn needs_decoding(header: &[u8]) -> bool {
    if header.starts_with(b"\xFF\xFE") || header.starts_with(b"\xFE\xFF") {
        return true;
    }
    matches!(std::str::from_utf8(header), Err(error) if error.error_len().is_some())
}

/// Reads a file that is not plain UTF-8 whole and shows it decoded, with a line naming
/// its encoding; a file whose encoding cannot be told is shown lossily, as UTF-8.
async fn read_decoded(
    args: &ReadArgs,
    path: &Path,
    context: &ToolContext,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let fs = &**context.read_fs_for(path);
    let bytes = read_whole(fs, path, cancel).await?;
    let len = bytes.len() as u64;
    let fingerprint = match fs
        .metadata(path)
        .await
        .ok()
        .and_then(|m| Fingerprint::stamp(&m))
    {
        Some(stamp) => stamp,
        None => Fingerprint::of(&bytes),
    };
    let decoded = pith_text::decode(&bytes)
        .ok()
        .filter(|decoded| !decoded.encoding.is_utf8());
    let (shown, encoding): (&[u8], _) = match &decoded {
        Some(decoded) => (decoded.text.as_bytes(), Some(decoded.encoding)),
        None => {
            let body = bytes.strip_prefix(UTF8_BOM).unwrap_or(&bytes);
            if memchr::memchr(0, body).is_some() {
                return Err(binary_file(&args.path, len));
            }
            (body, None)
        }
    };
    let window = text::Window {
        start: args.offset.unwrap_or(0).saturating_sub(1),
        limit: args.limit,
        limits: TruncationLimits::default(),
    };
    let mut scanner = text::Scanner::new(window);
    scanner.feed(shown);
    let scan = scanner.finish();
    if let Some(message) = text::offset_error(&scan, &window, args.offset) {
        return Err(ToolError::new(message));
    }
    let mut lines = LineHasher::new();
    lines.update(shown);
    context
        .session
        .record_seen_lines(fs, path, fingerprint, lines.finish())
        .await;
    let request = text::Request {
        raw_path: &args.path,
    };
    let (mut text, details) = text::render(&scan, &window, &request);
    let mut structured = text::structured(&scan, &window, path);
    if let Some(encoding) = encoding {
        text.push_str(if text.ends_with('\n') { "\n" } else { "\n\n" });
        text.push_str(&messages::encoding(&encoding.describe()));
        structured["encoding"] = json!(encoding.describe());
    }
    let result = ToolOutput::text(text).with_structured(structured);
    Ok(match details {
        Some(details) => result.with_details(details),
        None => result,
    })
}

/// The whole file, unless the call was cancelled meanwhile.
async fn read_whole(
    fs: &dyn pith_env::FileSystem,
    path: &Path,
    cancel: &CancellationToken,
) -> Result<Vec<u8>, ToolError> {
    let bytes = fs
        .read(path)
        .await
        .map_err(|error| ToolError::new(describe_fs_error(&error)))?;
    ToolError::check_cancelled(cancel)?;
    Ok(bytes)
}

fn binary_file(raw_path: &str, len: u64) -> ToolError {
    ToolError::new(messages::binary(
        raw_path,
        &format_size(len),
        &text::shell_quote(raw_path),
    ))
}

/// An open text file and what the session will remember of it.
struct TextFile<'a> {
    path: &'a Path,
    /// Its real path (the queue key).
    real: &'a Path,
    reader: &'a mut dyn FileReader,
    hasher: Option<ContentHasher>,
    /// Line hashes of the text, when the content is hashed.
    lines: Option<LineHasher>,
    stamp: Option<Fingerprint>,
    /// Small enough to be decoded whole when it turns out not to be UTF-8.
    may_decode: bool,
    /// The session's line index, for a file read only as far as the page.
    index: Option<Indexed<'a>>,
    /// The first read reached the end of the file: there is nothing more.
    at_end: bool,
}

/// A file's entry in the session's line indexes.
struct Indexed<'a> {
    key: index::FileKey,
    indexes: &'a index::LineIndexes,
    /// Bytes of the BOM before the text (line positions count from after it).
    bom: u64,
}

/// What [`read_text`] found.
enum Streamed {
    /// The answer.
    Shown(ToolOutput),
    /// Lines to show were not valid UTF-8 (nothing was recorded).
    Lossy,
}

/// Streams the text after its first bytes (`body`) through the line scanner.
async fn read_text(
    args: &ReadArgs,
    file: TextFile<'_>,
    body: &[u8],
    context: &ToolContext,
    cancel: &CancellationToken,
) -> Result<Streamed, ToolError> {
    let TextFile {
        path,
        real,
        reader,
        mut hasher,
        mut lines,
        stamp,
        may_decode,
        index,
        at_end,
    } = file;
    let fs = &**context.read_fs_for(path);
    let window = text::Window {
        start: args.offset.unwrap_or(0).saturating_sub(1),
        limit: args.limit,
        limits: TruncationLimits::default(),
    };
    // A line start known from an earlier read, past the first bytes, is read from.
    let resume = index
        .as_ref()
        .and_then(|indexed| indexed.indexes.before(&indexed.key, window.start))
        .filter(|at| at.pos > body.len() as u64);
    let mut scanner = match resume {
        Some(at) => text::Scanner::resume(window, at),
        None => text::Scanner::new(window),
    };
    if hasher.is_none() {
        // Too large to hash: read only as far as the answer needs.
        scanner = scanner.count_ahead(text::COUNT_AHEAD_BYTES);
    }
    if index.is_some() {
        scanner = scanner.noting_checkpoints();
    }
    let stopped = match (resume, &index) {
        (Some(at), Some(indexed)) => {
            stream_from(fs, path, indexed.bom + at.pos, &mut scanner, cancel).await?
        }
        _ => {
            scanner.feed(body);
            if at_end {
                Stopped::ToEnd
            } else {
                stream_rest(reader, &mut scanner, &mut hasher, &mut lines, cancel).await?
            }
        }
    };
    if let (Some(indexed), Some(found)) = (index, scanner.checkpoints()) {
        indexed.indexes.add(indexed.key, found);
    }
    let scan = match stopped {
        Stopped::ToEnd => scanner.finish(),
        Stopped::Enough => scanner.finish_early(),
    };
    if let Some(message) = text::offset_error(&scan, &window, args.offset) {
        return Err(ToolError::new(message));
    }
    if scan.lossy() && may_decode {
        return Ok(Streamed::Lossy);
    }
    if let Some(fingerprint) = hasher.map_or(stamp, |hasher| Some(hasher.finish())) {
        let lines = lines.and_then(LineHasher::finish);
        context
            .session
            .record_seen_real(real.to_path_buf(), fingerprint, lines);
    }
    let request = text::Request {
        raw_path: &args.path,
    };
    let (text, details) = text::render(&scan, &window, &request);
    let mut result = ToolOutput::text(text);
    if context.wants_structured() {
        result = result.with_structured(text::structured(&scan, &window, path));
    }
    Ok(Streamed::Shown(match details {
        Some(details) => result.with_details(details),
        None => result,
    }))
}

/// Reads up to `want` bytes (less only at end of file); says whether the
/// end of the file was seen.
async fn read_header(
    reader: &mut dyn FileReader,
    hasher: &mut Option<ContentHasher>,
    want: usize,
    size: Option<usize>,
    cancel: &CancellationToken,
) -> Result<(Vec<u8>, bool), ToolError> {
    let mut header = vec![0; want];
    let mut filled = 0;
    while filled < header.len() && Some(filled) != size {
        ToolError::check_cancelled(cancel)?;
        let read = reader
            .read_chunk(&mut header[filled..])
            .await
            .map_err(|error| ToolError::new(describe_fs_error(&error)))?;
        if read == 0 {
            break;
        }
        filled += read;
    }
    let at_end = filled < header.len();
    header.truncate(filled);
    if let Some(hasher) = hasher {
        hasher.update(&header);
    }
    Ok((header, at_end))
}

fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// Where [`stream_rest`] stopped.
enum Stopped {
    /// At the end of the file.
    ToEnd,
    /// Before it: the scanner had what it needs.
    Enough,
}

/// Feeds the rest of the file to the scanner, chunk by chunk, until the end
/// or, when nothing is hashed, until the shown lines are complete; then the
/// lines past them are counted by the reader ([`FileReader::count_lines`]:
/// over a remote, where the file is).
async fn stream_rest(
    reader: &mut dyn FileReader,
    scanner: &mut text::Scanner,
    hasher: &mut Option<ContentHasher>,
    lines: &mut Option<LineHasher>,
    cancel: &CancellationToken,
) -> Result<Stopped, ToolError> {
    // Start small and grow while reads fill the buffer: a batch of many small
    // reads then costs kilobytes each, a large file still streams in big chunks.
    let mut chunk = vec![0; 8 * 1024];
    loop {
        ToolError::check_cancelled(cancel)?;
        if hasher.is_none()
            && let Some(left) = scanner.ahead_left()
        {
            if left > 0 {
                let counted = reader
                    .count_lines(left)
                    .await
                    .map_err(|error| ToolError::new(describe_fs_error(&error)))?;
                ToolError::check_cancelled(cancel)?;
                scanner.skip_counted(&counted);
                if counted.bytes < left {
                    return Ok(Stopped::ToEnd);
                }
            }
            return Ok(Stopped::Enough);
        }
        // Lines before the page: a reader that can skips them without copying them.
        if hasher.is_none()
            && let Some(lines) = scanner.lines_to_skip()
            && let Some(skipped) = reader
                .skip_lines(lines, SKIP_STEP_BYTES)
                .await
                .map_err(|error| ToolError::new(describe_fs_error(&error)))?
        {
            if skipped.bytes == 0 {
                return Ok(Stopped::ToEnd);
            }
            scanner.skipped(&skipped);
            continue;
        }
        let read = reader
            .read_chunk(&mut chunk)
            .await
            .map_err(|error| ToolError::new(describe_fs_error(&error)))?;
        if read == 0 {
            return Ok(Stopped::ToEnd);
        }
        if read == chunk.len() && chunk.len() < CHUNK_BYTES {
            chunk.resize(CHUNK_BYTES.min(chunk.len() * 4), 0);
        }
        if let Some(hasher) = hasher {
            hasher.update(&chunk[..read]);
        }
        if let Some(lines) = lines {
            lines.update(&chunk[..read]);
        }
        scanner.feed(&chunk[..read]);
    }
}

/// Feeds the file from byte `offset` on to a scanner resumed there, until the
/// end or until the scanner is satisfied (reads by range: the reader opened
/// first is at the start of the file).
async fn stream_from(
    fs: &dyn pith_env::FileSystem,
    path: &Path,
    mut offset: u64,
    scanner: &mut text::Scanner,
    cancel: &CancellationToken,
) -> Result<Stopped, ToolError> {
    loop {
        ToolError::check_cancelled(cancel)?;
        let chunk = fs
            .read_range(path, offset, CHUNK_BYTES)
            .await
            .map_err(|error| ToolError::new(describe_fs_error(&error)))?;
        if chunk.is_empty() {
            return Ok(Stopped::ToEnd);
        }
        offset += chunk.len() as u64;
        scanner.feed(&chunk);
        if scanner.satisfied() {
            return Ok(Stopped::Enough);
        }
    }
}

async fn read_image(
    path: &Path,
    len: u64,
    kind: image::ImageKind,
    context: &ToolContext,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    if len > MAX_IMAGE_FILE_BYTES {
        return Ok(ToolOutput::text(messages::image_too_large(
            kind.mime(),
            &format_size(len),
            &format_size(MAX_IMAGE_FILE_BYTES),
        )));
    }
    let fs = &**context.read_fs_for(path);
    let bytes = read_whole(fs, path, cancel).await?;
    let seen = Fingerprint::of(&bytes);
    let auto_resize = context.config.read.auto_resize_images;
    let attachment = tokio::task::spawn_blocking(move || image::attach(&bytes, kind, auto_resize))
        .await
        .map_err(|_| ToolError::new(messages::image_failed(path.display())))?;
    context.session.record_seen(fs, path, seen).await;
    let mut content = vec![Content::text(attachment.text)];
    let mut details = ImageDetails {
        mime_type: kind.mime().to_owned(),
        width: attachment.size.map(|(width, _)| width),
        height: attachment.size.map(|(_, height)| height),
    };
    if let Some((data, mime_type)) = attachment.image {
        content.push(Content::Image {
            data,
            mime_type: mime_type.to_owned(),
        });
        mime_type.clone_into(&mut details.mime_type);
    }
    let structured = json!({
        "path": path.display().to_string(),
        "mimeType": details.mime_type,
    });
    Ok(ToolOutput {
        content,
        details: Some(details_value(&details)),
        structured: Some(structured),
    })
}

#[cfg(test)]
mod tests;
