//! Finding the region of a file most similar to an `old_text` that was not found.
//!
//! Candidates come cheaply and in linear time: windows of the needle's height holding the
//! most lines equal to needle lines (modulo whitespace), or else the lines whose bytes look
//! most like the needle's longest line. Only a handful of candidates get the precise (and
//! quadratic) similarity.

use std::collections::HashSet;

use crate::error::ClosestFragment;
use crate::lines::lines;
use crate::whitespace::key_hash;

/// Candidate windows scored precisely.
const CANDIDATES: usize = 16;
/// Below this similarity nothing is shown.
const MIN_SIMILARITY: f64 = 0.3;
/// Texts longer than this (in bytes, both together) are compared line by line instead of
/// character by character.
const CHARACTER_DIFF_LIMIT: usize = 4000;

/// The region of `text` most similar to `needle`, if any is reasonably similar.
pub(crate) fn closest_fragment(text: &str, needle: &str) -> Option<ClosestFragment> {
    let needle = needle.strip_suffix('\n').unwrap_or(needle);
    let needle_lines: Vec<&str> = needle.split('\n').collect();
    let (starts, file_lines): (Vec<usize>, Vec<&str>) = lines(text).unzip();
    if file_lines.is_empty() || needle.trim().is_empty() {
        return None;
    }
    let height = needle_lines.len().min(file_lines.len());
    let mut candidates = windows_sharing_lines(&file_lines, &needle_lines, height);
    if candidates.is_empty() {
        candidates = lines_like_the_longest(&file_lines, &needle_lines);
    }
    candidates
        .into_iter()
        .filter_map(|first| {
            let last = (first + height).min(file_lines.len()).checked_sub(1)?;
            let start = *starts.get(first)?;
            let end = starts.get(last)? + file_lines.get(last)?.len();
            let fragment = text.get(start..end)?;
            Some(ClosestFragment {
                start_line: first + 1,
                text: fragment.to_owned(),
                similarity: similarity(fragment, needle),
            })
        })
        .filter(|fragment| fragment.similarity >= MIN_SIMILARITY)
        .max_by(|left, right| {
            // On equal similarity the earlier fragment wins.
            left.similarity
                .total_cmp(&right.similarity)
                .then(right.start_line.cmp(&left.start_line))
        })
}

/// First lines of the windows of `height` lines that hold the most lines equal (modulo
/// whitespace) to a non-blank needle line; empty when no line is shared at all.
fn windows_sharing_lines(file_lines: &[&str], needle_lines: &[&str], height: usize) -> Vec<usize> {
    let wanted: HashSet<u64> = needle_lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| key_hash(line))
        .collect();
    let shared: Vec<usize> = file_lines
        .iter()
        .map(|line| usize::from(wanted.contains(&key_hash(line))))
        .collect();
    let mut in_window: usize = shared.iter().take(height).sum();
    let mut best = in_window;
    let mut firsts = vec![0];
    for first in 1..=file_lines.len().saturating_sub(height) {
        in_window += shared.get(first + height - 1).copied().unwrap_or(0);
        in_window -= shared.get(first - 1).copied().unwrap_or(0);
        if in_window > best {
            best = in_window;
            firsts.clear();
        }
        if in_window == best && firsts.len() < CANDIDATES {
            firsts.push(first);
        }
    }
    if best == 0 { Vec::new() } else { firsts }
}

/// First lines of the windows placing the needle's longest line on the file lines whose
/// bytes are most like it (Dice coefficient of the byte multisets, linear per line).
fn lines_like_the_longest(file_lines: &[&str], needle_lines: &[&str]) -> Vec<usize> {
    let Some((anchor_index, anchor)) = needle_lines
        .iter()
        .enumerate()
        .max_by_key(|(index, line)| (line.trim().len(), usize::MAX - index))
    else {
        return Vec::new();
    };
    let anchor = anchor.trim();
    let mut available = [0_u32; 256];
    for byte in anchor.bytes() {
        available[usize::from(byte)] += 1;
    }
    let mut used = [0_u32; 256];
    let mut scored: Vec<(f64, usize)> = file_lines
        .iter()
        .enumerate()
        .map(|(index, line)| {
            let line = line.trim();
            let mut common = 0_usize;
            for byte in line.bytes() {
                let slot = usize::from(byte);
                if available[slot] > used[slot] {
                    used[slot] += 1;
                    common += 1;
                }
            }
            for byte in line.bytes() {
                used[usize::from(byte)] = 0;
            }
            let total = anchor.len() + line.len();
            let score = if total == 0 {
                0.0
            } else {
                (2 * common) as f64 / total as f64
            };
            (score, index)
        })
        .collect();
    let keep = CANDIDATES.min(scored.len());
    if keep == 0 {
        return Vec::new();
    }
    scored.select_nth_unstable_by(keep - 1, |left, right| right.0.total_cmp(&left.0));
    scored.truncate(keep);
    scored
        .into_iter()
        .map(|(_, index)| index.saturating_sub(anchor_index))
        .collect()
}

/// Similarity of two texts from 0 to 1: by characters for short texts, by lines otherwise.
fn similarity(left: &str, right: &str) -> f64 {
    if left.len() + right.len() <= CHARACTER_DIFF_LIMIT {
        strsim::normalized_levenshtein(left, right)
    } else {
        f64::from(similar::TextDiff::from_lines(left, right).ratio())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_lines_sharing_most_of_the_needle() {
        let text = "fn a() {\n    one();\n}\nfn b() {\n    two();\n    three();\n}\n";
        let closest = closest_fragment(text, "    two();\n    thre();\n").unwrap();
        assert_eq!(closest.start_line, 5);
        assert_eq!(closest.text, "    two();\n    three();");
        assert!(closest.similarity > 0.9);
    }

    #[test]
    fn finds_a_single_line_with_a_typo() {
        let text = "alpha\nlet value = compute(42);\nomega\n";
        let closest = closest_fragment(text, "let valeu = compute(42);").unwrap();
        assert_eq!(closest.start_line, 2);
        assert_eq!(closest.text, "let value = compute(42);");
    }

    #[test]
    fn shows_nothing_when_nothing_is_alike() {
        assert_eq!(closest_fragment("aaaa\nbbbb\n", "zzzzzzzzzzzz"), None);
        assert_eq!(closest_fragment("", "anything"), None);
        assert_eq!(closest_fragment("text", "   "), None);
    }

    #[test]
    fn a_needle_taller_than_the_file_compares_the_whole_file() {
        let closest = closest_fragment("a\nb\n", "a\nb\nc\nd\n").unwrap();
        assert_eq!((closest.start_line, closest.text.as_str()), (1, "a\nb"));
    }
}
