//! `resources/read`: the full-output files a session's commands created, in pages.
//!
//! A bash result whose output was cut carries a resource link to its full-output file
//! (`file:///tmp/pith-bash-….log`). Reading that URI returns the first
//! [`PAGE_BYTES`]; when more follows, the contents' `_meta` names the URI of the next
//! page (`…?offset=N`, a byte offset). Only files the session's own commands created are
//! served, whatever the containment flags say.

use std::path::Path;

use pith_tools::Session;
use rmcp::ErrorData as McpError;
use rmcp::model::{JsonObject, MetaObject, ReadResourceResult, ResourceContents};
use serde_json::json;

use crate::convert::file_uri;
use crate::roots::file_uri_path;

/// The most bytes one `resources/read` returns.
pub(crate) const PAGE_BYTES: usize = 256 * 1024;

/// The `_meta` key naming the next page's URI.
pub(crate) const NEXT_PAGE_META_KEY: &str = "pith/nextUri";

/// Reads one page of an output file the session created.
pub(crate) async fn read(session: &Session, uri: &str) -> Result<ReadResourceResult, McpError> {
    let (base, offset) = match uri.split_once("?offset=") {
        Some((base, offset)) => {
            let offset = offset.parse::<u64>().map_err(|_| {
                McpError::invalid_params(
                    format!("Invalid offset in {uri}: give a byte offset, e.g. ?offset=262144"),
                    None,
                )
            })?;
            (base, offset)
        }
        None => (uri, 0),
    };
    let unknown = || {
        McpError::resource_not_found(
            format!(
                "No such resource: {}. pith serves the full-output files linked from this session's results.",
                clip(uri)
            ),
            None,
        )
    };
    let path = file_uri_path(base).ok_or_else(unknown)?;
    if !session.created_output(&path) {
        return Err(unknown());
    }
    let (text, next) = page(session, &path, offset)
        .await
        .map_err(|message| McpError::internal_error(message, None))?;
    let meta = next.map(|next| {
        MetaObject(JsonObject::from_iter([(
            NEXT_PAGE_META_KEY.to_owned(),
            json!(format!(
                "{}?offset={next}",
                file_uri(&path.display().to_string())
            )),
        )]))
    });
    let contents = ResourceContents::TextResourceContents {
        uri: uri.to_owned(),
        mime_type: Some("text/plain".to_owned()),
        text,
        meta,
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

/// The text from byte `offset` (at most [`PAGE_BYTES`], lossily decoded) and the offset
/// of the next page, if the file goes on.
async fn page(
    session: &Session,
    path: &Path,
    offset: u64,
) -> Result<(String, Option<u64>), String> {
    let fs = &session.toolset().env().fs;
    let mut reader = fs
        .open(path)
        .await
        .map_err(|error| format!("Could not read {}: {error}", path.display()))?;
    let mut buffer = vec![0; 64 * 1024];
    let mut skipped = 0u64;
    let mut kept = Vec::new();
    let mut more = false;
    loop {
        let read = reader
            .read_chunk(&mut buffer)
            .await
            .map_err(|error| format!("Could not read {}: {error}", path.display()))?;
        if read == 0 {
            break;
        }
        let mut chunk = buffer.get(..read).unwrap_or_default();
        if skipped < offset {
            let skip = usize::try_from(offset - skipped)
                .unwrap_or(usize::MAX)
                .min(chunk.len());
            skipped += skip as u64;
            chunk = chunk.get(skip..).unwrap_or_default();
        }
        let room = PAGE_BYTES - kept.len();
        if chunk.len() > room {
            kept.extend_from_slice(chunk.get(..room).unwrap_or_default());
            more = true;
            break;
        }
        kept.extend_from_slice(chunk);
    }
    let next = more.then(|| offset + kept.len() as u64);
    Ok((String::from_utf8_lossy(&kept).into_owned(), next))
}

fn clip(text: &str) -> String {
    let clipped: String = text.chars().take(200).collect();
    if clipped.len() < text.len() {
        format!("{clipped}…")
    } else {
        clipped
    }
}
