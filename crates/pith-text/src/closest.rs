//! Finding the region of a file most similar to an `old_text` that was not found.
//!
//! Candidates come cheaply and in linear time. Every line of the needle votes for the
//! window that would put it on each file line equal to it (modulo whitespace), so a window
//! where most of the needle lines up wins whichever line has the typo; and the few longest
//! needle lines also vote through the file lines whose bytes look most like them, for
//! needles where no line survives intact. Only a handful of windows get the precise (and
//! quadratic) similarity of the whole needle, and a best one below [`MIN_SIMILARITY`] is no
//! answer: better to say nothing is close than to point at the wrong place.

use std::collections::HashMap;

use crate::error::ClosestFragment;
use crate::lines::lines;
use crate::whitespace::key_hash;

/// Candidate windows scored precisely, from each kind of vote.
const CANDIDATES: usize = 8;
/// Below this similarity nothing is shown.
const MIN_SIMILARITY: f64 = 0.6;
/// Texts longer than this (in bytes, both together) are compared line by line instead of
/// character by character.
const CHARACTER_DIFF_LIMIT: usize = 4000;
/// A needle line occurring more often than this in the needle does not vote (a run of
/// closing braces would make every position look alike and cost needle × file).
const MAX_REPEATS: usize = 4;
/// Needle lines voting through byte likeness, and file lines each one votes for.
const LIKENESS_LINES: usize = 3;
const LIKENESS_CANDIDATES: usize = 4;

/// The region of `text` most similar to `needle`, if any is similar enough.
pub(crate) fn closest_fragment(text: &str, needle: &str) -> Option<ClosestFragment> {
    let needle = needle.strip_suffix('\n').unwrap_or(needle);
    let needle_lines: Vec<&str> = needle.split('\n').collect();
    let (starts, file_lines): (Vec<usize>, Vec<&str>) = lines(text).unzip();
    if file_lines.is_empty() || needle.trim().is_empty() {
        return None;
    }
    let height = needle_lines.len().min(file_lines.len());
    let mut candidates = windows_by_equal_lines(&file_lines, &needle_lines, height);
    candidates.extend(windows_by_likeness(&file_lines, &needle_lines, height));
    candidates.sort_unstable();
    candidates.dedup();
    let needle_key = without_indentation(needle);
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
                similarity: similarity(&without_indentation(fragment), &needle_key),
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

/// `text` with each line's leading blanks removed: a whitespace-insensitive view, since the
/// ladder already ignored indentation when it failed.
fn without_indentation(text: &str) -> String {
    text.split('\n')
        .map(|line| line.trim_start_matches([' ', '\t']))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last first line a window of `height` lines can have.
fn last_start(file_lines: &[&str], height: usize) -> usize {
    file_lines.len().saturating_sub(height)
}

/// First lines of the windows where the most needle lines (weighted by their length) land
/// on file lines equal to them modulo whitespace.
fn windows_by_equal_lines(file_lines: &[&str], needle_lines: &[&str], height: usize) -> Vec<usize> {
    let mut positions: HashMap<u64, Vec<usize>> = HashMap::new();
    for (index, line) in needle_lines.iter().enumerate() {
        let weight = line.trim().len();
        if weight > 0 {
            positions.entry(key_hash(line)).or_default().push(index);
        }
    }
    positions.retain(|_, found| found.len() <= MAX_REPEATS);
    let last = last_start(file_lines, height);
    let mut votes = vec![0_usize; last + 1];
    for (file_index, line) in file_lines.iter().enumerate() {
        let Some(found) = positions.get(&key_hash(line)) else {
            continue;
        };
        for &needle_index in found {
            if let Some(first) = file_index.checked_sub(needle_index)
                && let Some(slot) = votes.get_mut(first)
            {
                *slot += line.trim().len().max(1);
            }
        }
    }
    best_windows(&votes)
}

/// First lines of the windows placing each of the longest needle lines on the file lines
/// whose bytes are most like it (Dice coefficient of the byte multisets, linear per line).
fn windows_by_likeness(file_lines: &[&str], needle_lines: &[&str], height: usize) -> Vec<usize> {
    let mut longest: Vec<(usize, &str)> = needle_lines
        .iter()
        .map(|line| line.trim())
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .collect();
    longest.sort_by_key(|(index, line)| (usize::MAX - line.len(), *index));
    longest.truncate(LIKENESS_LINES);
    let last = last_start(file_lines, height);
    let mut votes = vec![0.0_f64; last + 1];
    let mut used = [0_u32; 256];
    for (needle_index, anchor) in longest {
        let mut available = [0_u32; 256];
        for byte in anchor.bytes() {
            available[usize::from(byte)] += 1;
        }
        let mut scored: Vec<(f64, usize)> = file_lines
            .iter()
            .enumerate()
            .map(|(index, line)| {
                let score = likeness(&available, anchor.len(), line.trim(), &mut used);
                (score, index)
            })
            .collect();
        let keep = LIKENESS_CANDIDATES.min(scored.len());
        if keep == 0 {
            continue;
        }
        scored.select_nth_unstable_by(keep - 1, |left, right| right.0.total_cmp(&left.0));
        for &(score, file_index) in scored.iter().take(keep) {
            let first = file_index.saturating_sub(needle_index).min(last);
            if let Some(slot) = votes.get_mut(first) {
                *slot += score;
            }
        }
    }
    let mut order: Vec<usize> = (0..votes.len())
        .filter(|&first| votes.get(first).is_some_and(|&vote| vote > 0.0))
        .collect();
    order.sort_by(|&left, &right| {
        let vote = |first: usize| votes.get(first).copied().unwrap_or(0.0);
        vote(right).total_cmp(&vote(left)).then(left.cmp(&right))
    });
    order.truncate(CANDIDATES);
    order
}

/// The [`CANDIDATES`] positions with the most votes (earlier first on ties), if any voted.
fn best_windows(votes: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..votes.len())
        .filter(|&first| votes.get(first).is_some_and(|&vote| vote > 0))
        .collect();
    order.sort_by_key(|&first| (usize::MAX - votes.get(first).copied().unwrap_or(0), first));
    order.truncate(CANDIDATES);
    order
}

/// Dice coefficient of the byte multisets of a line and an anchor line, whose byte counts
/// are `available`; `used` is scratch space, all zero before and after.
fn likeness(available: &[u32; 256], anchor_len: usize, line: &str, used: &mut [u32; 256]) -> f64 {
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
    let total = anchor_len + line.len();
    if total == 0 {
        0.0
    } else {
        (2 * common) as f64 / total as f64
    }
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

    /// The 7-line file of the report, and its `"alpha"` block with one typo per line.
    const MATCH: &str =
        "fn a() {\n    match x {\n        A => {\n            \"alpha\"\n        }\n    }\n}\n";

    #[test]
    fn lands_on_the_block_whichever_line_has_the_typo() {
        let block = ["        A => {", "            \"alpha\"", "        }"];
        let typos = ["        A =>  {;", "            \"alpha\";", "        };"];
        for (line, typo) in typos.iter().enumerate() {
            let mut needle = block;
            needle[line] = typo;
            let closest = closest_fragment(MATCH, &needle.join("\n")).unwrap();
            assert_eq!(closest.start_line, 3, "typo in line {line}");
            assert_eq!(closest.text, block.join("\n"));
            assert!(closest.similarity > 0.85, "{}", closest.similarity);
        }
    }

    #[test]
    fn a_needle_with_every_line_changed_still_finds_its_place() {
        let text = "one();\nlet total = compute(alpha, beta);\nprint(total);\nend();\n";
        let closest =
            closest_fragment(text, "let totl = compute(alpha, beta)\nprint(totl);").unwrap();
        assert_eq!(closest.start_line, 2);
    }

    #[test]
    fn a_weak_best_match_is_no_answer() {
        let text = "fn main() {\n    run();\n}\n";
        assert_eq!(closest_fragment(text, "class Widget:\n    pass"), None);
    }

    #[test]
    fn a_needle_taller_than_the_file_compares_the_whole_file() {
        let text = "first line\nsecond line\n";
        let closest = closest_fragment(text, "first line\nsecond line\nthird\n").unwrap();
        assert_eq!(
            (closest.start_line, closest.text.as_str()),
            (1, "first line\nsecond line")
        );
    }
}
