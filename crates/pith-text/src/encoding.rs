//! Text encodings: detect a file's encoding, decode it, and encode edited text back so
//! that every byte outside the edited lines stays exactly as it was.
//!
//! Detection, in order: a byte-order mark (UTF-8, UTF-16LE, UTF-16BE) → valid UTF-8 → a
//! legacy encoding guessed by `chardetng` and decoded by `encoding_rs`. A guess is only
//! trusted when it is confident ([`decode`] says what "confident" means) and the bytes
//! round-trip (decode, then encode, gives the original bytes exactly); anything else is
//! [`NotText`], which the tools treat as binary for editing.
//!
//! `encoding_rs` encodes UTF-16 as UTF-8 (the WHATWG rule for form submission), so UTF-16
//! is encoded here from `str::encode_utf16`. UTF-32 is not supported (its BOM starts like
//! UTF-16LE's, and `encoding_rs` has no UTF-32): such a file is binary for editing.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{
    EncoderResult, Encoding, GB18030, GBK, ISO_2022_JP, REPLACEMENT, UTF_8, UTF_16BE, UTF_16LE,
    X_USER_DEFINED,
};
use similar::{Algorithm, DiffOp, capture_diff_slices};
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const UTF16LE_BOM: &[u8] = b"\xFF\xFE";
const UTF16BE_BOM: &[u8] = b"\xFE\xFF";
/// Lines a [`LineHasher`] keeps hashes for; a longer file is remembered without them.
pub const MAX_HASHED_LINES: usize = 1 << 18;

/// A text file's encoding: the character encoding and whether the file starts with a
/// byte-order mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextEncoding {
    encoding: &'static Encoding,
    bom: bool,
}

impl TextEncoding {
    /// UTF-8 without a BOM (what new files get).
    pub fn utf8() -> TextEncoding {
        TextEncoding {
            encoding: UTF_8,
            bom: false,
        }
    }

    /// The encoding a `write` call names: a WHATWG label (`shift_jis`, `latin1`, `gbk`,
    /// `utf-16le`, …, any case) or `utf-8-bom`. UTF-16 is always written with its BOM (it
    /// is how a reader recognises it); `utf-16` means UTF-16LE. ISO-2022-JP (stateful,
    /// so not byte-faithful) and the replacement encoding are refused (`None`).
    pub fn from_label(label: &str) -> Option<TextEncoding> {
        let label = label.trim().to_ascii_lowercase();
        let (encoding, bom) = match label.as_str() {
            "utf-8-bom" | "utf8-bom" | "utf-8 bom" | "utf-8 with bom" => (UTF_8, true),
            "utf-16" => (UTF_16LE, true),
            _ => {
                let encoding = Encoding::for_label(label.as_bytes())?;
                (encoding, encoding == UTF_16LE || encoding == UTF_16BE)
            }
        };
        if encoding == ISO_2022_JP || encoding == REPLACEMENT {
            return None;
        }
        Some(TextEncoding { encoding, bom })
    }

    /// The encoding's name (`UTF-8`, `UTF-16LE`, `Shift_JIS`, `windows-1252`, `GBK`, …).
    pub fn name(&self) -> &'static str {
        self.encoding.name()
    }

    /// The name with the BOM when there is one (`UTF-8 with BOM`, `UTF-16LE with BOM`).
    pub fn describe(&self) -> String {
        if self.bom {
            format!("{} with BOM", self.name())
        } else {
            self.name().to_owned()
        }
    }

    /// UTF-8, with or without a BOM.
    pub fn is_utf8(&self) -> bool {
        self.encoding == UTF_8
    }

    /// Whether the file starts with a byte-order mark.
    pub fn has_bom(&self) -> bool {
        self.bom
    }

    /// The byte-order mark's bytes (empty without one).
    pub fn bom_bytes(&self) -> &'static [u8] {
        match (self.bom, self.encoding) {
            (false, _) => b"",
            (true, e) if e == UTF_16LE => UTF16LE_BOM,
            (true, e) if e == UTF_16BE => UTF16BE_BOM,
            (true, _) => UTF8_BOM,
        }
    }
}

/// A file's text and the encoding it came in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedText<'a> {
    /// The text. For UTF-8 it is the file as is, BOM (U+FEFF) included, so its bytes are
    /// the file's bytes; for other encodings the BOM is not part of it.
    pub text: Cow<'a, str>,
    /// The encoding [`encode`] writes it back in.
    pub encoding: TextEncoding,
}

/// Why bytes are not text pith will edit (they are binary for editing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotText {
    /// A NUL byte (and no UTF-16 BOM).
    Binary {
        /// Offset of the first NUL byte.
        offset: usize,
    },
    /// The BOM names an encoding the bytes do not follow.
    Malformed {
        /// The encoding the BOM names.
        encoding: &'static str,
    },
    /// Not valid UTF-8, and no encoding could be guessed with confidence.
    Unsure {
        /// Offset of the first byte that is not valid UTF-8.
        offset: usize,
        /// Why the guess is not trusted.
        reason: String,
    },
    /// The guessed encoding decodes the bytes, but encoding the text again would not give
    /// the same bytes.
    NoRoundTrip {
        /// The guessed encoding.
        encoding: &'static str,
        /// Offset of the first byte that would differ.
        offset: usize,
    },
}

impl fmt::Display for NotText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotText::Binary { offset } => write!(f, "It has a NUL byte at offset {offset}"),
            NotText::Malformed { encoding } => write!(
                f,
                "It starts with a {encoding} byte-order mark but is not valid {encoding}"
            ),
            NotText::Unsure { offset, reason } => write!(
                f,
                "It is not valid UTF-8 text (invalid byte at offset {offset}), and its encoding cannot be told with confidence ({reason})"
            ),
            NotText::NoRoundTrip { encoding, offset } => write!(
                f,
                "It looks like {encoding}, but re-encoding it would change byte {offset}"
            ),
        }
    }
}

/// Detects the encoding of a whole file and decodes it.
///
/// UTF-8 (with or without BOM) and UTF-16 with a BOM are taken as they are (bytes that are
/// valid UTF-8 are UTF-8, whatever they contain). Otherwise a NUL byte makes the file
/// binary, and `chardetng` guesses a legacy encoding (never ISO-2022-JP). The guess is
/// confident when:
/// - the bytes are not mostly UTF-8 (as many valid multi-byte UTF-8 sequences as invalid
///   bytes means a UTF-8 file with a few broken bytes, not a legacy file),
/// - the encoding decodes every byte (no malformed sequence),
/// - the text has no control characters but tab, newline, carriage return, form feed and
///   escape (C0 or C1 controls are what a wrong single-byte guess produces from binary),
/// - and encoding the text again gives exactly the original bytes.
///
/// # Errors
///
/// [`NotText`] saying why the bytes are not text pith will edit.
pub fn decode(bytes: &[u8]) -> Result<DecodedText<'_>, NotText> {
    for (bom, encoding) in [(UTF16LE_BOM, UTF_16LE), (UTF16BE_BOM, UTF_16BE)] {
        if let Some(body) = bytes.strip_prefix(bom) {
            let text = encoding
                .decode_without_bom_handling_and_without_replacement(body)
                .ok_or(NotText::Malformed {
                    encoding: encoding.name(),
                })?;
            return Ok(DecodedText {
                text,
                encoding: TextEncoding {
                    encoding,
                    bom: true,
                },
            });
        }
    }
    let invalid_at = match std::str::from_utf8(bytes) {
        Ok(text) => {
            return Ok(DecodedText {
                text: Cow::Borrowed(text),
                encoding: TextEncoding {
                    encoding: UTF_8,
                    bom: bytes.starts_with(UTF8_BOM),
                },
            });
        }
        Err(error) => error.valid_up_to(),
    };
    if let Some(offset) = memchr::memchr(0, bytes) {
        return Err(NotText::Binary { offset });
    }
    let unsure = |reason: String| NotText::Unsure {
        offset: invalid_at,
        reason,
    };
    let (valid, invalid) = utf8_census(bytes);
    if valid > 0 && valid >= invalid {
        return Err(unsure(format!(
            "it looks like UTF-8 with {invalid} invalid byte sequence(s)"
        )));
    }
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let encoding = detector.guess(None, Utf8Detection::Deny);
    if encoding == X_USER_DEFINED || encoding == REPLACEMENT || encoding == ISO_2022_JP {
        return Err(unsure(format!("the best guess is {}", encoding.name())));
    }
    let text = encoding
        .decode_without_bom_handling_and_without_replacement(bytes)
        .ok_or_else(|| {
            unsure(format!(
                "the best guess, {}, does not decode it",
                encoding.name()
            ))
        })?;
    if let Some(control) = text.chars().find(|&c| is_suspicious(c)) {
        return Err(unsure(format!(
            "as {} it would contain the control character U+{:04X}",
            encoding.name(),
            u32::from(control)
        )));
    }
    let mut encoding = encoding;
    let mut encoded = encode_legacy(&text, encoding);
    if encoding == GBK && encoded.as_deref().ok() != Some(bytes) {
        // chardetng names GBK for GB18030 too; the decoders are the same, the encoders
        // differ (four-byte sequences, the euro sign), so the bytes decide.
        let wider = encode_legacy(&text, GB18030);
        if wider.as_deref().ok() == Some(bytes) {
            encoding = GB18030;
            encoded = wider;
        }
    }
    let encoded = encoded.map_err(|_| NotText::NoRoundTrip {
        encoding: encoding.name(),
        offset: 0,
    })?;
    if encoded != bytes {
        let offset = encoded
            .iter()
            .zip(bytes)
            .position(|(a, b)| a != b)
            .unwrap_or(encoded.len().min(bytes.len()));
        return Err(NotText::NoRoundTrip {
            encoding: encoding.name(),
            offset,
        });
    }
    Ok(DecodedText {
        text: Cow::Owned(text.into_owned()),
        encoding: TextEncoding {
            encoding,
            bom: false,
        },
    })
}

/// Valid multi-byte UTF-8 sequences and invalid sequences in `bytes`.
fn utf8_census(bytes: &[u8]) -> (usize, usize) {
    let (mut valid, mut invalid) = (0, 0);
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                valid += count_multibyte(text.as_bytes());
                return (valid, invalid);
            }
            Err(error) => {
                valid += count_multibyte(&rest[..error.valid_up_to()]);
                invalid += 1;
                let skip = error
                    .error_len()
                    .unwrap_or(rest.len() - error.valid_up_to());
                rest = &rest[error.valid_up_to() + skip.max(1)..];
            }
        }
    }
}

/// Lead bytes of multi-byte sequences in valid UTF-8.
fn count_multibyte(valid: &[u8]) -> usize {
    valid.iter().filter(|&&b| b >= 0xC0).count()
}

/// Control characters that do not occur in text files.
fn is_suspicious(c: char) -> bool {
    let code = u32::from(c);
    (code < 0x20 && !matches!(c, '\t' | '\n' | '\r' | '\x0c' | '\x1b'))
        || (0x7F..=0x9F).contains(&code)
        || c == '\u{FFFD}'
}

/// A character the target encoding has no bytes for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unrepresentable {
    /// The character.
    pub character: char,
    /// 1-based line of the text it is in.
    pub line: usize,
    /// 1-based column (in characters) within that line.
    pub column: usize,
    /// The encoding's name.
    pub encoding: &'static str,
}

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} (U+{:04X}) at line {}, column {} cannot be written in {}",
            self.character,
            u32::from(self.character),
            self.line,
            self.column,
            self.encoding
        )
    }
}

impl std::error::Error for Unrepresentable {}

/// The [`Unrepresentable`] for the character at byte `at` of `text`.
fn unrepresentable(text: &str, at: usize, encoding: TextEncoding) -> Unrepresentable {
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    Unrepresentable {
        character: text[at..].chars().next().unwrap_or('\u{FFFD}'),
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
        encoding: encoding.name(),
    }
}

/// Encodes `text` with an encoding `encoding_rs` can encode, without replacement: the
/// error is the byte offset in `text` of the first character it cannot represent.
fn encode_legacy(text: &str, encoding: &'static Encoding) -> Result<Vec<u8>, usize> {
    let mut encoder = encoding.new_encoder();
    let mut out = Vec::with_capacity(text.len() + 16);
    let mut read_total = 0;
    loop {
        if out.capacity() - out.len() < 16 {
            out.reserve(text.len() - read_total + 16);
        }
        let (result, read) = encoder.encode_from_utf8_to_vec_without_replacement(
            &text[read_total..],
            &mut out,
            true,
        );
        read_total += read;
        match result {
            EncoderResult::InputEmpty => return Ok(out),
            EncoderResult::OutputFull => out.reserve(text.len() - read_total + 16),
            EncoderResult::Unmappable(c) => return Err(read_total - c.len_utf8()),
        }
    }
}

/// `text` without its BOM in `encoding`, BOM not included.
fn encode_body(text: &str, encoding: TextEncoding) -> Result<Vec<u8>, Unrepresentable> {
    let e = encoding.encoding;
    if e == UTF_8 {
        return Ok(text.as_bytes().to_vec());
    }
    if e == UTF_16LE || e == UTF_16BE {
        let mut out = Vec::with_capacity(text.len() * 2);
        for unit in text.encode_utf16() {
            let pair = if e == UTF_16LE {
                unit.to_le_bytes()
            } else {
                unit.to_be_bytes()
            };
            out.extend_from_slice(&pair);
        }
        return Ok(out);
    }
    encode_legacy(text, e).map_err(|at| unrepresentable(text, at, encoding))
}

/// Encodes a whole file's `text` in `encoding`, with its BOM. For UTF-8 the BOM is added
/// only when `text` does not start with U+FEFF already (see [`DecodedText::text`]), so
/// `encode(&decode(bytes)?.text, encoding)` gives `bytes` back.
///
/// # Errors
///
/// [`Unrepresentable`]: the first character the encoding has no bytes for, with its line
/// and column in `text`.
pub fn encode(text: &str, encoding: TextEncoding) -> Result<Vec<u8>, Unrepresentable> {
    let body = encode_body(text, encoding)?;
    let bom = if encoding.is_utf8() && text.starts_with('\u{FEFF}') {
        b"".as_slice()
    } else {
        encoding.bom_bytes()
    };
    let mut out = Vec::with_capacity(bom.len() + body.len());
    out.extend_from_slice(bom);
    out.extend_from_slice(&body);
    Ok(out)
}

/// Checks that every character of `text` (an edit's new text, say) can be written in
/// `encoding`.
///
/// # Errors
///
/// The first [`Unrepresentable`] character, its line and column counted in `text`.
pub fn check_representable(text: &str, encoding: TextEncoding) -> Result<(), Unrepresentable> {
    let e = encoding.encoding;
    if e == UTF_8 || e == UTF_16LE || e == UTF_16BE {
        return Ok(());
    }
    encode_legacy(text, e)
        .map(drop)
        .map_err(|at| unrepresentable(text, at, encoding))
}

/// Why [`encode_edited`] produced nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// A character of the new text the encoding cannot represent.
    Unrepresentable(Unrepresentable),
    /// The original bytes are not `old_text` in `encoding` (the file was not decoded by
    /// [`decode`], or it changed), or the result would not decode to `new_text`.
    NotFaithful,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::Unrepresentable(error) => error.fmt(f),
            EncodeError::NotFaithful => {
                f.write_str("the edited text would not encode back to the file's bytes")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

/// The bytes of a file whose text went from `old_text` to `new_text`, in `encoding`.
///
/// `original` holds the file's bytes, which [`decode`] turned into `old_text`. The lines
/// of `old_text` that a line diff finds unchanged are copied from `original` byte for
/// byte (with the BOM); only the changed lines are encoded. The result is checked to
/// decode to `new_text`. For UTF-8 the result is `new_text`'s bytes.
///
/// # Errors
///
/// [`EncodeError::Unrepresentable`] naming the first character of a changed line the
/// encoding cannot represent (line and column in `new_text`), or
/// [`EncodeError::NotFaithful`].
pub fn encode_edited(
    original: &[u8],
    old_text: &str,
    new_text: &str,
    encoding: TextEncoding,
) -> Result<Vec<u8>, EncodeError> {
    if encoding.is_utf8() {
        return Ok(new_text.as_bytes().to_vec());
    }
    let bom = encoding.bom_bytes();
    if !original.starts_with(bom) {
        return Err(EncodeError::NotFaithful);
    }
    let old_lines: Vec<&str> = old_text.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new_text.split_inclusive('\n').collect();
    // Byte offset in `original` where each old line starts (and one past the end).
    let mut offsets = Vec::with_capacity(old_lines.len() + 1);
    let mut offset = bom.len();
    offsets.push(offset);
    for line in &old_lines {
        offset += encoded_len(line, encoding).ok_or(EncodeError::NotFaithful)?;
        offsets.push(offset);
    }
    if offset != original.len() {
        return Err(EncodeError::NotFaithful);
    }
    // Where each new line starts in `new_text`, to name an unrepresentable character.
    let mut new_starts = Vec::with_capacity(new_lines.len());
    let mut start = 0;
    for line in &new_lines {
        new_starts.push(start);
        start += line.len();
    }
    let mut out = Vec::with_capacity(original.len() + new_text.len() / 2);
    out.extend_from_slice(bom);
    for op in capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                out.extend_from_slice(&original[offsets[old_index]..offsets[old_index + len]]);
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => {
                let range = new_index..new_index + new_len;
                let from = new_starts.get(new_index).copied().unwrap_or(new_text.len());
                let to = new_starts.get(range.end).copied().unwrap_or(new_text.len());
                let chunk = &new_text[from..to];
                let bytes = encode_body(chunk, encoding).map_err(|mut error| {
                    error.line += new_index;
                    EncodeError::Unrepresentable(error)
                })?;
                out.extend_from_slice(&bytes);
            }
        }
    }
    let decoded = encoding
        .encoding
        .decode_without_bom_handling_and_without_replacement(&out[bom.len()..]);
    if decoded.as_deref() != Some(new_text) {
        return Err(EncodeError::NotFaithful);
    }
    Ok(out)
}

/// Encoded length of `line` (`None` when it cannot be encoded).
fn encoded_len(line: &str, encoding: TextEncoding) -> Option<usize> {
    let e = encoding.encoding;
    if e == UTF_16LE || e == UTF_16BE {
        return Some(line.encode_utf16().count() * 2);
    }
    encode_legacy(line, e).ok().map(|bytes| bytes.len())
}

/// Hashes text line by line as it arrives in chunks (a line ends after `\n`, which it
/// includes, so CRLF and LF lines differ), to tell later which lines changed (see
/// [`changed_lines`]). Keeps at most [`MAX_HASHED_LINES`] hashes; past that it gives none.
///
/// The hash is XXH3-64 (`xxhash-rust`): a line that arrives whole, the usual case, is
/// hashed in one call; only a line cut by the end of a chunk goes through the streaming
/// state, which gives the same hash.
#[derive(Clone, Default)]
pub struct LineHasher {
    /// The start of a line cut by the end of a chunk (boxed: the state is ~600 bytes).
    current: Option<Box<Xxh3Default>>,
    hashes: Vec<u64>,
    overflow: bool,
}

impl fmt::Debug for LineHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineHasher")
            .field("open", &self.current.is_some())
            .field("hashes", &self.hashes.len())
            .field("overflow", &self.overflow)
            .finish()
    }
}

impl LineHasher {
    /// A hasher with nothing fed.
    pub fn new() -> LineHasher {
        LineHasher::default()
    }

    /// The hashes of the lines of `text`.
    pub fn of(text: &str) -> Option<Vec<u64>> {
        let mut hasher = LineHasher::new();
        hasher.update(text.as_bytes());
        hasher.finish()
    }

    /// Feeds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        if self.overflow {
            return;
        }
        // Most lines are short: a `memchr` call per line costs more than
        // finding the newlines of 64 bytes at once.
        let room = MAX_HASHED_LINES.saturating_sub(self.hashes.len()) + 1;
        self.hashes.reserve((bytes.len() / 32).min(room));
        let mut start = 0;
        let mut block_start = 0;
        while block_start < bytes.len() {
            let block = &bytes[block_start..bytes.len().min(block_start + 64)];
            let mut newlines = newline_mask(block);
            while newlines != 0 {
                let end = block_start + newlines.trailing_zeros() as usize + 1;
                newlines &= newlines - 1;
                let line = &bytes[start..end];
                start = end;
                let hash = match self.current.take() {
                    None => xxh3_64(line),
                    Some(mut open) => {
                        open.update(line);
                        open.digest()
                    }
                };
                self.push(hash);
                if self.overflow {
                    return;
                }
            }
            block_start += block.len();
        }
        if start < bytes.len() {
            self.current
                .get_or_insert_with(|| Box::new(Xxh3Default::new()))
                .update(&bytes[start..]);
        }
    }

    fn push(&mut self, hash: u64) {
        if self.hashes.len() >= MAX_HASHED_LINES {
            self.overflow = true;
            self.current = None;
            self.hashes = Vec::new();
            return;
        }
        self.hashes.push(hash);
    }

    /// The line hashes (`None` past [`MAX_HASHED_LINES`] lines).
    pub fn finish(mut self) -> Option<Vec<u64>> {
        if let Some(open) = self.current.take() {
            self.push(open.digest());
        }
        (!self.overflow).then_some(self.hashes)
    }
}

/// Bit `i` set where `block[i]` is a newline (`block` is at most 64 bytes).
fn newline_mask(block: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if let Ok(block) = <&[u8; 64]>::try_from(block) {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of x86_64; each load reads 16 of the 64 bytes
        // `block` holds (unaligned loads).
        unsafe {
            let newline = _mm_set1_epi8(b'\n' as i8);
            let mut mask = 0u64;
            for part in 0..4 {
                let bytes = _mm_loadu_si128(block.as_ptr().add(part * 16).cast::<__m128i>());
                let found = _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, newline)) as u16;
                mask |= u64::from(found) << (part * 16);
            }
            return mask;
        }
    }
    block
        .iter()
        .enumerate()
        .fold(0, |mask, (i, &byte)| mask | (u64::from(byte == b'\n') << i))
}

/// One run of changed lines between two versions of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedLines {
    /// 0-based lines of the old version that were replaced or removed.
    pub old: Range<usize>,
    /// 0-based lines of the new version that replaced them (empty when lines were only
    /// removed: then `start` is where they were).
    pub new: Range<usize>,
}

/// The runs of lines that differ between two line-hash lists ([`LineHasher`]).
pub fn changed_lines(old: &[u64], new: &[u64]) -> Vec<ChangedLines> {
    capture_diff_slices(Algorithm::Myers, old, new)
        .into_iter()
        .filter_map(|op| match op {
            DiffOp::Equal { .. } => None,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => Some(ChangedLines {
                old: old_index..old_index + old_len,
                new: new_index..new_index,
            }),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => Some(ChangedLines {
                old: old_index..old_index,
                new: new_index..new_index + new_len,
            }),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => Some(ChangedLines {
                old: old_index..old_index + old_len,
                new: new_index..new_index + new_len,
            }),
        })
        .collect()
}

#[cfg(test)]
#[path = "encoding_tests.rs"]
mod tests;
