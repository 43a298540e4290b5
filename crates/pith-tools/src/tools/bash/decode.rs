//! A streaming UTF-8 decoder: characters split across chunks stay whole.

/// Decodes a byte stream chunk by chunk, like a non-fatal `TextDecoder`:
/// invalid bytes become U+FFFD (one per maximal invalid subpart), an
/// incomplete character at the end of a chunk waits for the next one, and a
/// byte-order mark at the start of the stream is dropped.
#[derive(Debug, Default)]
pub(crate) struct Utf8Decoder {
    /// The start of a character cut by the end of the last chunk (at most 3 bytes).
    pending: Vec<u8>,
    /// Whether any text came out yet (the BOM is only stripped before that).
    started: bool,
}

impl Utf8Decoder {
    /// Decodes `bytes`, appending the text to `out`.
    pub(crate) fn decode(&mut self, bytes: &[u8], out: &mut String) {
        let joined;
        let mut input = if self.pending.is_empty() {
            bytes
        } else {
            joined = [self.pending.as_slice(), bytes].concat();
            self.pending.clear();
            joined.as_slice()
        };
        let start = out.len();
        // The common case, valid text, checked with SIMD; std's check finds
        // where invalid text goes wrong.
        if let Ok(text) = simdutf8::basic::from_utf8(input) {
            out.push_str(text);
            self.strip_bom(out, start);
            return;
        }
        loop {
            match std::str::from_utf8(input) {
                Ok(text) => {
                    out.push_str(text);
                    break;
                }
                Err(error) => {
                    let (valid, rest) = input.split_at(error.valid_up_to());
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match error.error_len() {
                        Some(invalid) => {
                            out.push('\u{FFFD}');
                            input = rest.get(invalid..).unwrap_or_default();
                        }
                        None => {
                            self.pending.extend_from_slice(rest);
                            break;
                        }
                    }
                }
            }
        }
        self.strip_bom(out, start);
    }

    /// Ends the stream: an incomplete character left over becomes U+FFFD.
    pub(crate) fn finish(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            self.pending.clear();
            let start = out.len();
            out.push('\u{FFFD}');
            self.strip_bom(out, start);
        }
    }

    fn strip_bom(&mut self, out: &mut String, start: usize) {
        if self.started || out.len() == start {
            return;
        }
        self.started = true;
        if out
            .get(start..)
            .is_some_and(|text| text.starts_with('\u{FEFF}'))
        {
            out.replace_range(start..start + '\u{FEFF}'.len_utf8(), "");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_chunks(chunks: &[&[u8]]) -> String {
        let mut decoder = Utf8Decoder::default();
        let mut out = String::new();
        for chunk in chunks {
            decoder.decode(chunk, &mut out);
        }
        decoder.finish(&mut out);
        out
    }

    #[test]
    fn keeps_a_character_split_across_chunks_whole() {
        let euro = "€".as_bytes();
        assert_eq!(
            decode_chunks(&[b"a", &euro[..1], &euro[1..2], &euro[2..], b"b"]),
            "a€b"
        );
        assert_eq!(decode_chunks(&[&euro[..2], &euro[2..]]), "€");
        let emoji = "😀".as_bytes();
        assert_eq!(decode_chunks(&[&emoji[..3], &emoji[3..]]), "😀");
    }

    #[test]
    fn replaces_invalid_bytes_with_replacement_characters() {
        assert_eq!(decode_chunks(&[b"a\xffb"]), "a\u{FFFD}b");
        assert_eq!(decode_chunks(&[b"a\xe2\x82", b"b"]), "a\u{FFFD}b");
        assert_eq!(decode_chunks(&[b"a\xe2\x82"]), "a\u{FFFD}");
        assert_eq!(decode_chunks(&[b"\xc0\x80"]), "\u{FFFD}\u{FFFD}");
    }

    #[test]
    fn drops_a_byte_order_mark_only_at_the_start() {
        assert_eq!(
            decode_chunks(&[b"\xef\xbb", b"\xbfhi\xef\xbb\xbf"]),
            "hi\u{FEFF}"
        );
        assert_eq!(decode_chunks(&[b"", b"\xef\xbb\xbfx"]), "x");
    }
}
