//! Normalisation for fuzzy matching (reference §6.5), with an offset map back to the original.
//!
//! The text is cut into segments that NFKC normalises independently: a segment starts at a
//! character whose (compatibility) decomposition begins with a starter that never composes
//! with what precedes it (every ASCII character, CJK ideographs, Hangul syllables, curly
//! quotes, special spaces...). So the normalised text is the concatenation of the normalised
//! segments, and each segment is one entry of the offset map. Runs of segments that are left
//! as they are merge into one identity entry, so a mostly-ASCII file has a map of a few
//! entries, and normalisation is linear in the size of the text.

use std::ops::Range;

use unicode_normalization::char::{canonical_combining_class, decompose_compatible};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// Text normalised for fuzzy matching, with a map back to the text it came from.
///
/// Built by [`normalize_for_fuzzy`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Normalized {
    text: String,
    pieces: Vec<Piece>,
    original_len: usize,
}

/// One entry of the offset map: `original` bytes became `normalized` bytes.
///
/// Pieces tile both texts in order. An identity piece maps byte for byte; any other piece
/// maps only as a whole (a position inside it widens to its edges).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    normalized_start: usize,
    normalized_len: usize,
    original_start: usize,
    original_len: usize,
    identity: bool,
}

impl Piece {
    fn normalized_end(&self) -> usize {
        self.normalized_start + self.normalized_len
    }
}

impl Normalized {
    /// The normalised text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Maps a byte range of the normalised text back to the exact byte range of the original
    /// text it came from.
    ///
    /// The result is the smallest original range whose normalisation covers `normalized`:
    /// a boundary inside a character that normalisation changed widens to that character,
    /// and stripped trailing whitespace at either edge is left out. Positions inside a
    /// character widen to it and out-of-range input is clamped, so the result always lies on
    /// character boundaries of the original.
    #[must_use]
    pub fn original_range(&self, normalized: Range<usize>) -> Range<usize> {
        let mut start = normalized.start.min(self.text.len());
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = normalized.end.min(self.text.len());
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        let start = self.original_start(start);
        let end = self.original_end(end).max(start);
        start..end
    }

    fn original_start(&self, position: usize) -> usize {
        let index = self
            .pieces
            .partition_point(|piece| piece.normalized_end() <= position);
        match self.pieces.get(index) {
            Some(piece) if piece.identity => {
                piece.original_start + position.saturating_sub(piece.normalized_start)
            }
            Some(piece) => piece.original_start,
            None => self.original_len,
        }
    }

    fn original_end(&self, position: usize) -> usize {
        let index = self
            .pieces
            .partition_point(|piece| piece.normalized_start < position);
        let Some(piece) = index.checked_sub(1).and_then(|last| self.pieces.get(last)) else {
            return 0;
        };
        if piece.identity {
            piece.original_start + (position - piece.normalized_start).min(piece.normalized_len)
        } else {
            piece.original_start + piece.original_len
        }
    }
}

/// Normalises `text` for fuzzy matching, in the order of the reference §6.5: NFKC, trailing
/// whitespace stripped from every line, curly single quotes to `'`, curly double quotes to
/// `"`, Unicode dashes and minus to `-`, special spaces to a space.
///
/// Leading indentation is left alone, and no `\n` is ever added or removed.
#[must_use]
pub fn normalize_for_fuzzy(text: &str) -> Normalized {
    let mut builder = Builder {
        text: String::with_capacity(text.len()),
        pieces: Vec::new(),
        original_position: 0,
        scratch: String::new(),
    };
    let mut lines = text.split('\n');
    if let Some(first) = lines.next() {
        builder.line(first);
        for line in lines {
            builder.identity("\n");
            builder.line(line);
        }
    }
    Normalized {
        text: builder.text,
        pieces: builder.pieces,
        original_len: text.len(),
    }
}

struct Builder {
    text: String,
    pieces: Vec<Piece>,
    original_position: usize,
    scratch: String,
}

impl Builder {
    fn line(&mut self, line: &str) {
        let line_start = self.text.len();
        if line.is_ascii() {
            self.identity(line);
        } else {
            let mut segment_start = 0;
            for (offset, character) in line.char_indices().skip(1) {
                if starts_segment(character) {
                    self.segment(line.get(segment_start..offset).unwrap_or_default());
                    segment_start = offset;
                }
            }
            self.segment(line.get(segment_start..).unwrap_or_default());
        }
        let content = self.text.get(line_start..).unwrap_or_default();
        let trimmed = line_start + content.trim_end_matches(is_js_whitespace).len();
        if trimmed < self.text.len() {
            self.strip_tail(trimmed);
        }
    }

    fn segment(&mut self, segment: &str) {
        if segment.is_ascii() {
            return self.identity(segment);
        }
        self.scratch.clear();
        self.scratch.extend(segment.nfkc().map(fold_punctuation));
        if self.scratch == segment {
            return self.identity(segment);
        }
        self.pieces.push(Piece {
            normalized_start: self.text.len(),
            normalized_len: self.scratch.len(),
            original_start: self.original_position,
            original_len: segment.len(),
            identity: false,
        });
        self.text.push_str(&self.scratch);
        self.original_position += segment.len();
    }

    fn identity(&mut self, unchanged: &str) {
        if unchanged.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(last) if last.identity => {
                last.normalized_len += unchanged.len();
                last.original_len += unchanged.len();
            }
            _ => self.pieces.push(Piece {
                normalized_start: self.text.len(),
                normalized_len: unchanged.len(),
                original_start: self.original_position,
                original_len: unchanged.len(),
                identity: true,
            }),
        }
        self.text.push_str(unchanged);
        self.original_position += unchanged.len();
    }

    /// Drops the normalised text after `trimmed` (trailing whitespace of the current line)
    /// and records the dropped original bytes as a piece that normalises to nothing.
    fn strip_tail(&mut self, trimmed: usize) {
        let mut dropped_original = 0;
        while let Some(last) = self.pieces.last_mut() {
            if last.normalized_end() <= trimmed {
                break;
            }
            if last.normalized_start >= trimmed {
                dropped_original += last.original_len;
                self.pieces.pop();
                continue;
            }
            let kept = trimmed - last.normalized_start;
            if last.identity {
                dropped_original += last.original_len - kept;
                last.original_len = kept;
            }
            // A changed segment keeps its whole original, now mapped to its kept prefix.
            last.normalized_len = kept;
            break;
        }
        self.text.truncate(trimmed);
        if dropped_original > 0 {
            self.pieces.push(Piece {
                normalized_start: trimmed,
                normalized_len: 0,
                original_start: self.original_position - dropped_original,
                original_len: dropped_original,
                identity: false,
            });
        }
    }
}

/// Whether NFKC may treat the text before `character` independently of the text from it on.
fn starts_segment(character: char) -> bool {
    if character.is_ascii() {
        return true;
    }
    let mut first = None;
    decompose_compatible(character, |part| {
        first.get_or_insert(part);
    });
    first.is_some_and(|first| {
        canonical_combining_class(first) == 0
            && is_nfkc_quick(std::iter::once(first)) == IsNormalized::Yes
    })
}

/// Steps 3–6 of §6.5, applied after NFKC.
fn fold_punctuation(character: char) -> char {
    match character {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    }
}

/// The whitespace JavaScript's `trimEnd` strips (it keeps U+0085, Rust's set does not).
fn is_js_whitespace(character: char) -> bool {
    matches!(
        character,
        '\t' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

#[cfg(test)]
#[path = "normalize_tests.rs"]
mod tests;
