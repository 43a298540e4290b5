//! Loading and storing a text file for the tools that change files (`edit`, `write`, and
//! any other tool that rewrites a file's text, such as a patch or an undo).
//!
//! - [`load_text`] (or [`LoadedText::decode`] plus [`check_unchanged`] when the caller
//!   reads the bytes itself): decodes the file in its encoding (BOM → UTF-8 → a confident
//!   legacy guess, see [`pith_text::decode`]; anything else is refused as binary for
//!   editing) and refuses when the session saw the file and it changed since (the
//!   staleness check, [`crate::stale`]).
//! - [`store_text`]: encodes the new text in the file's encoding with every byte outside
//!   the changed lines identical ([`pith_text::encode_edited`]), replaces the file
//!   atomically and records what the session now knows of it.
//! - [`encode_new`]: the bytes for a whole new content in a given encoding (`write`).
//! - [`survey`]: one streaming pass over a file about to be replaced whole (`write`):
//!   whether it is UTF-8, and its fingerprint and SHA-256 when asked, in bounded memory.
//!
//! Call them inside the file's mutation-queue turn, after the hooks authorised the call.

use std::borrow::Cow;
use std::path::Path;

use pith_env::{FileSystem, FsError};
use pith_text::{EncodeError, NotText, TextEncoding};
use sha2::Digest;

use crate::messages::textfile as messages;
use crate::paths::describe_fs_error;
use crate::tool::{ToolContext, ToolError};

/// A text file loaded for editing: its text and what is needed to write it back.
#[derive(Debug)]
pub(crate) struct LoadedText {
    /// The text: for UTF-8 the file as is (BOM included, as the edit engine expects);
    /// otherwise decoded, BOM excluded.
    text: String,
    /// The original bytes, for files that are not UTF-8 (UTF-8 bytes are `text`).
    original: Option<Vec<u8>>,
    encoding: TextEncoding,
}

impl LoadedText {
    /// Decodes a whole file's `bytes`. UTF-8 is taken as is (no copy).
    ///
    /// # Errors
    ///
    /// A [`ToolError`] "Could not {verb} file: {raw}. {why}, so {verb} treats it as
    /// binary. …" when the bytes are not text pith can write back faithfully.
    pub(crate) fn decode(bytes: Vec<u8>, raw: &str, verb: &str) -> Result<LoadedText, ToolError> {
        let bytes = match String::from_utf8(bytes) {
            Ok(text) => {
                let bom = text.starts_with('\u{FEFF}');
                let mut encoding = TextEncoding::utf8();
                if bom {
                    encoding = TextEncoding::from_label("utf-8-bom").unwrap_or(encoding);
                }
                return Ok(LoadedText {
                    text,
                    original: None,
                    encoding,
                });
            }
            Err(error) => error.into_bytes(),
        };
        match pith_text::decode(&bytes) {
            Ok(decoded) => {
                let encoding = decoded.encoding;
                let text = decoded.text.into_owned();
                Ok(LoadedText {
                    text,
                    original: Some(bytes),
                    encoding,
                })
            }
            Err(error) => Err(not_text(&error, raw, verb)),
        }
    }

    /// The text (see the field's note on BOMs).
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The file's encoding.
    pub(crate) fn encoding(&self) -> TextEncoding {
        self.encoding
    }

    /// The file's bytes as loaded.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.original.as_deref().unwrap_or(self.text.as_bytes())
    }

    /// The bytes of the file with its text changed to `new_text`: for UTF-8 the text's
    /// bytes; otherwise the unchanged lines' original bytes and the changed lines encoded.
    ///
    /// # Errors
    ///
    /// "Could not {verb} file: {raw}. {character, line, column} cannot be written in
    /// {encoding}…" for a character the encoding lacks.
    pub(crate) fn encode_edit<'a>(
        &self,
        new_text: &'a str,
        raw: &str,
        verb: &str,
    ) -> Result<Cow<'a, [u8]>, ToolError> {
        let Some(original) = &self.original else {
            return Ok(Cow::Borrowed(new_text.as_bytes()));
        };
        pith_text::encode_edited(original, &self.text, new_text, self.encoding)
            .map(Cow::Owned)
            .map_err(|error| match error {
                EncodeError::Unrepresentable(error) => ToolError::new(messages::unrepresentable(
                    verb,
                    raw,
                    error,
                    self.encoding.name(),
                )),
                EncodeError::NotFaithful => {
                    ToolError::new(messages::not_faithful(verb, raw, error))
                }
            })
    }
}

/// The message for bytes that are not text pith writes back.
pub(crate) fn not_text(error: &NotText, raw: &str, verb: &str) -> ToolError {
    ToolError::new(messages::not_text(verb, raw, error))
}

/// Refuses when the session saw `path` and its content (`loaded`) changed since; see
/// [`crate::stale`].
///
/// # Errors
///
/// "Could not {verb} file: {raw}. It changed since this session last read it; read it
/// again, then {verb}." and what changed.
pub(crate) async fn check_unchanged(
    context: &ToolContext,
    fs: &dyn FileSystem,
    path: &Path,
    loaded: &LoadedText,
    raw: &str,
    verb: &str,
) -> Result<(), ToolError> {
    crate::stale::check_fresh(context, fs, path, loaded.bytes(), Some(loaded.text()))
        .await
        .map_err(|changed| ToolError::new(messages::changed_since_read(verb, raw, &changed.detail)))
}

/// Reads, decodes and checks a text file for a tool that will rewrite it: the whole
/// [`LoadedText::decode`] + [`check_unchanged`] sequence. For files up to 64 MiB (the
/// caller checks the size and kind first; edit streams larger files).
///
/// # Errors
///
/// "Could not {verb} file: {raw}. {reason}" for a failed read, a file that is not text,
/// or a stale one.
#[allow(
    dead_code,
    reason = "shared with the tools that rewrite files (patches, undo); edit reads and writes itself for its own messages"
)]
pub(crate) async fn load_text(
    context: &ToolContext,
    fs: &dyn FileSystem,
    path: &Path,
    raw: &str,
    verb: &str,
) -> Result<LoadedText, ToolError> {
    let bytes = fs
        .read(path)
        .await
        .map_err(|error| ToolError::new(messages::failed(verb, raw, describe_fs_error(&error))))?;
    let loaded = LoadedText::decode(bytes, raw, verb)?;
    check_unchanged(context, fs, path, &loaded, raw, verb).await?;
    Ok(loaded)
}

/// Encodes `new_text` byte-faithfully ([`LoadedText::encode_edit`]), replaces the file
/// atomically and records the result as seen by the session (so the next edit of it
/// passes the staleness check). Returns the bytes written.
///
/// # Errors
///
/// An unrepresentable character, or "Could not {verb} file: {raw}. {write failure}."
/// (the file is then as it was).
#[allow(
    dead_code,
    reason = "shared with the tools that rewrite files (patches, undo); edit reads and writes itself for its own messages"
)]
pub(crate) async fn store_text<'a>(
    context: &ToolContext,
    fs: &dyn FileSystem,
    path: &Path,
    loaded: &LoadedText,
    new_text: &'a str,
    raw: &str,
    verb: &str,
) -> Result<Cow<'a, [u8]>, ToolError> {
    let bytes = loaded.encode_edit(new_text, raw, verb)?;
    fs.write_atomic(path, &bytes)
        .await
        .map_err(|error| ToolError::new(messages::failed(verb, raw, describe_fs_error(&error))))?;
    context
        .session
        .record_written_text(fs, path, &bytes, new_text)
        .await;
    Ok(bytes)
}

/// The bytes of a whole new content in `encoding` (with its BOM when it has one).
///
/// # Errors
///
/// "Could not write {raw}: {character, line, column} cannot be written in {encoding}. …"
pub(crate) fn encode_new<'a>(
    content: &'a str,
    encoding: TextEncoding,
    raw: &str,
) -> Result<Cow<'a, [u8]>, ToolError> {
    if encoding == TextEncoding::utf8() {
        return Ok(Cow::Borrowed(content.as_bytes()));
    }
    pith_text::encode(content, encoding)
        .map(Cow::Owned)
        .map_err(|error| {
            ToolError::new(messages::write_unrepresentable(raw, error, encoding.name()))
        })
}

/// The note a result adds for a file that is not plain UTF-8, e.g. ` The file stays
/// Shift_JIS.` (empty for UTF-8 without BOM).
pub(crate) fn encoding_note(encoding: TextEncoding) -> String {
    if encoding.is_utf8() {
        String::new()
    } else {
        messages::encoding_note(&encoding.describe())
    }
}

/// What [`survey`] learnt of a file in one streaming pass.
#[derive(Debug)]
pub(crate) struct Survey {
    /// The whole file is UTF-8 (a BOM included).
    pub(crate) utf8: bool,
    /// Its bytes.
    pub(crate) len: u64,
    /// The session's content fingerprint, when asked for.
    pub(crate) fingerprint: Option<crate::session::Fingerprint>,
    /// Lowercase hex SHA-256, when asked for (the journal's name for the content).
    pub(crate) sha256: Option<String>,
}

/// Bytes read at a time by [`survey`] (what it holds, besides the reader's own buffer).
const SURVEY_CHUNK: usize = 256 * 1024;

/// Reads the file at `path` once, in 256 KiB chunks, checking that it is UTF-8 and
/// computing the session's fingerprint (`fingerprint`) and the SHA-256 (`sha256`) of
/// its bytes: what `write` needs of a file it replaces, without holding the file (the
/// two hashes run on two threads).
///
/// # Errors
///
/// The file cannot be opened or read.
pub(crate) async fn survey(
    fs: &dyn FileSystem,
    path: &Path,
    fingerprint: bool,
    sha256: bool,
) -> Result<Survey, FsError> {
    let mut reader = fs.open(path).await?;
    let mut buf = vec![0_u8; SURVEY_CHUNK];
    // Bytes of a character cut by the end of the previous chunk (at most 3).
    let mut carry = 0;
    let mut utf8 = true;
    let mut len = 0_u64;
    let mut content = fingerprint.then(crate::session::ContentHasher::new);
    let mut sha = sha256.then(sha2::Sha256::new);
    loop {
        let read = reader.read_chunk(&mut buf[carry..]).await?;
        if read == 0 {
            utf8 &= carry == 0;
            break;
        }
        let chunk = &buf[carry..carry + read];
        len += read as u64;
        let check = |utf8: bool| -> Option<usize> {
            if !utf8 {
                return None;
            }
            let text = &buf[..carry + read];
            match std::str::from_utf8(text) {
                Ok(_) => Some(0),
                // A character cut at the end of the chunk: checked with the next one.
                Err(error) if error.error_len().is_none() => Some(text.len() - error.valid_up_to()),
                Err(_) => None,
            }
        };
        let next = match &mut sha {
            Some(sha) if chunk.len() >= 64 * 1024 => {
                let ((), next) = crate::beside::beside(
                    || sha.update(chunk),
                    || {
                        if let Some(content) = &mut content {
                            content.update(chunk);
                        }
                        check(utf8)
                    },
                );
                next
            }
            _ => {
                if let Some(sha) = &mut sha {
                    sha.update(chunk);
                }
                if let Some(content) = &mut content {
                    content.update(chunk);
                }
                check(utf8)
            }
        };
        match next {
            Some(cut) => {
                let end = carry + read;
                buf.copy_within(end - cut..end, 0);
                carry = cut;
            }
            None => {
                utf8 = false;
                carry = 0;
            }
        }
    }
    Ok(Survey {
        utf8,
        len,
        fingerprint: content.map(|content| content.finish()),
        sha256: sha.map(|sha| hex(&sha.finalize())),
    })
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use pith_env::{FileSystem, MemoryEnv};

    use super::survey;
    use crate::session::Fingerprint;

    async fn surveyed(bytes: &[u8]) -> super::Survey {
        let fs = MemoryEnv::new();
        fs.create_dir_all(Path::new("/w")).await.unwrap();
        fs.write_atomic(Path::new("/w/f"), bytes).await.unwrap();
        survey(&fs, Path::new("/w/f"), true, true).await.unwrap()
    }

    #[tokio::test]
    async fn a_survey_checks_utf8_across_chunks_and_hashes_like_the_whole() {
        // "é" cut by the first 1 MiB chunk's end, a 4-byte character by the second's.
        let mut bytes = vec![b'a'; (1 << 20) - 1];
        bytes.extend_from_slice("é".as_bytes());
        bytes.resize((2 << 20) - 2, b'b');
        bytes.extend_from_slice("🦀 end\n".as_bytes());
        let text = surveyed(&bytes).await;
        assert!(text.utf8);
        assert_eq!(text.len, bytes.len() as u64);
        assert_eq!(text.fingerprint, Some(Fingerprint::of(&bytes)));
        assert_eq!(
            text.sha256.as_deref(),
            Some(&*pith_env::remote::sha256_hex(&bytes))
        );
        // A character cut by the end of the file, or a byte that is never UTF-8.
        for bad in [
            &bytes[..bytes.len() - 7],
            &[b"ok \xff ok", &bytes[..]].concat(),
        ] {
            assert!(!surveyed(bad).await.utf8);
        }
        assert!(surveyed(b"").await.utf8);
    }
}
