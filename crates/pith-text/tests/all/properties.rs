//! Property tests of the whole engine.

use pith_text::{
    Edit, EditError, MatchTier, TruncationLimits, apply_edits, count_lines, display_diff,
    normalize_for_fuzzy, truncate_head, truncate_tail, unified_patch,
};
use std::cell::Cell;

use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, RngAlgorithm, TestRunner};
use unicode_normalization::UnicodeNormalization;

use crate::support::{apply_patch, to_lf};

/// Failing inputs are kept in `properties.regressions` beside this file (checked in) and
/// replayed first on every run. XorShift rather than ChaCha: in a debug build, ChaCha made
/// most of the time of these tests.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        rng_algorithm: RngAlgorithm::XorShift,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::default()
    }
}

/// Runs `test` on `cases` generated inputs, with failures persisted like [`config`]'s.
/// `test` says whether the engine accepted the input (`Some(true)`), refused it
/// (`Some(false)`) or the input did not count (`None`); fewer than `min_percent` accepted
/// inputs fail the test, so a property that holds only for refused edits cannot pass
/// unnoticed.
pub(crate) fn check_accepting<S: Strategy>(
    strategy: S,
    cases: u32,
    min_percent: u32,
    test: impl Fn(S::Value) -> Result<Option<bool>, TestCaseError>,
) {
    let (accepted, counted) = (Cell::new(0_u32), Cell::new(0_u32));
    let mut runner = TestRunner::new(ProptestConfig {
        cases,
        source_file: Some(file!()),
        ..config()
    });
    let result = runner.run(&strategy, |input| {
        if let Some(was_accepted) = test(input)? {
            counted.set(counted.get() + 1);
            accepted.set(accepted.get() + u32::from(was_accepted));
        }
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    let (accepted, counted) = (accepted.get(), counted.get());
    assert!(
        counted * 2 >= cases,
        "only {counted} of {cases} generated inputs counted"
    );
    assert!(
        accepted * 100 >= counted * min_percent,
        "only {accepted} of {counted} inputs were accepted (at least {min_percent}% wanted)"
    );
}

/// Text built from pieces that exercise every rule: indentation, endings, quotes, dashes,
/// special spaces, full-width forms, combining marks, emoji.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => Just("a"), 4 => Just("foo"), 2 => Just("x = 1;"), 4 => Just(" "), 2 => Just("\t"),
        6 => Just("\n"), 2 => Just("\r\n"), 1 => Just("\r"), 1 => Just("\u{201c}"),
        1 => Just("\u{2019}"), 1 => Just("'"), 1 => Just("\u{2013}"), 1 => Just("-"),
        1 => Just("\u{a0}"), 1 => Just("\u{3000}"), 1 => Just("ｘ"), 1 => Just("é"),
        1 => Just("e\u{301}"), 1 => Just("😀"), 1 => Just("\u{feff}"), 1 => Just("\u{fb01}"),
        1 => Just("\u{3131}"), 1 => Just("\u{314f}"),
    ];
    prop::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
}

/// LF text without carriage returns, for diffs.
fn lf_text() -> impl Strategy<Value = String> {
    text().prop_map(|text| to_lf(&text))
}

/// A file of many short, often repeated lines, and a copy with a few lines replaced,
/// inserted or deleted.
fn long_file_and_change() -> impl Strategy<Value = (String, String)> {
    let line = prop_oneof![Just(""), Just("a"), Just("b"), Just("}"), Just("x = 1;")];
    let lines = prop::collection::vec(line, 0..120);
    let changes = prop::collection::vec((0.0..1.0_f64, 0..3_u8, "[a-c}]{0,3}"), 1..4);
    (lines, changes, any::<bool>()).prop_map(|(mut lines, changes, final_newline)| {
        let join = |lines: &[&str]| {
            let mut text = lines.join("\n");
            if final_newline && !lines.is_empty() {
                text.push('\n');
            }
            text
        };
        let old = join(&lines);
        let mut owned: Vec<String> = lines.drain(..).map(str::to_owned).collect();
        for (at, kind, text) in changes {
            let index = (owned.len() as f64 * at) as usize;
            match kind {
                0 if index < owned.len() => owned[index] = text,
                1 if index < owned.len() => {
                    owned.remove(index);
                }
                _ => owned.insert(index, text),
            }
        }
        let new = join(&owned.iter().map(String::as_str).collect::<Vec<_>>());
        (old, new)
    })
}

/// How a model might garble the old text it copies.
#[derive(Clone, Copy, Debug)]
enum Garble {
    None,
    AsciiQuotes,
    SpacesForTabs,
    NoIndentation,
    NoTrailingSpaces,
}

fn garble(text: &str, how: Garble) -> String {
    let lines =
        |map: &dyn Fn(&str) -> String| text.split('\n').map(map).collect::<Vec<_>>().join("\n");
    match how {
        Garble::None => text.to_owned(),
        Garble::AsciiQuotes => text
            .replace(['\u{201c}', '\u{201d}'], "\"")
            .replace('\u{2019}', "'"),
        Garble::SpacesForTabs => text.replace('\t', "    "),
        Garble::NoIndentation => lines(&|line| line.trim_start_matches([' ', '\t']).to_owned()),
        Garble::NoTrailingSpaces => lines(&|line| line.trim_end_matches([' ', '\t']).to_owned()),
    }
}

fn garbling() -> impl Strategy<Value = Garble> {
    prop_oneof![
        Just(Garble::None),
        Just(Garble::AsciiQuotes),
        Just(Garble::SpacesForTabs),
        Just(Garble::NoIndentation),
        Just(Garble::NoTrailingSpaces),
    ]
}

/// A substring of `text` on character boundaries, from two fractions of its length.
fn slice(text: &str, from: f64, length: f64) -> &str {
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(index, _)| index)
        .chain([text.len()])
        .collect();
    let pick = |fraction: f64| ((boundaries.len() - 1) as f64 * fraction) as usize;
    let start = pick(from);
    let end = (start + pick(length)).min(boundaries.len() - 1);
    &text[boundaries[start]..boundaries[end]]
}

fn lines_with_endings(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let width = match bytes[index] {
            b'\r' if bytes.get(index + 1) == Some(&b'\n') => 2,
            b'\r' | b'\n' => 1,
            _ => 0,
        };
        if width > 0 {
            lines.push(&text[start..index + width]);
            start = index + width;
            index += width;
        } else {
            index += 1;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_engine_never_panics(
        original in any::<String>(),
        edits in prop::collection::vec((any::<String>(), any::<String>()), 0..4),
    ) {
        let edits: Vec<Edit> = edits
            .into_iter()
            .map(|(old_text, new_text)| Edit { old_text, new_text })
            .collect();
        if let Err(error) = apply_edits(&original, &edits) {
            prop_assert!(!error.to_string().is_empty());
        }
    }

    #[test]
    fn the_engine_never_panics_on_structured_text(
        original in text(),
        edits in prop::collection::vec((text(), text()), 1..4),
    ) {
        let edits: Vec<Edit> = edits
            .into_iter()
            .map(|(old_text, new_text)| Edit { old_text, new_text })
            .collect();
        match apply_edits(&original, &edits) {
            Ok(outcome) => prop_assert_eq!(outcome.matches.len(), edits.len()),
            Err(EditError::NoEdits) => prop_assert!(false, "edits were given"),
            Err(_) => {}
        }
    }

    #[test]
    fn the_unified_patch_turns_old_into_new(old in lf_text(), new in lf_text()) {
        let patch = unified_patch("f", &old, &new, 4);
        prop_assert!(patch.ends_with('\n'));
        prop_assert_eq!(apply_patch(&old, &patch), Some(new));
    }

    #[test]
    fn the_unified_patch_of_a_long_file_turns_old_into_new((old, new) in long_file_and_change()) {
        let patch = unified_patch("f", &old, &new, 4);
        prop_assert_eq!(apply_patch(&old, &patch), Some(new));
    }

    #[test]
    fn the_display_diff_numbers_every_line_right((old, new) in long_file_and_change()) {
        let diff = display_diff(&old, &new, 4);
        let old_lines: Vec<&str> = old.split('\n').collect();
        let new_lines: Vec<&str> = new.split('\n').collect();
        prop_assert_eq!(diff.diff.is_empty(), old == new);
        for line in diff.diff.split('\n').filter(|line| !line.trim().is_empty()) {
            let (sign, rest) = line.split_at(1);
            let rest = rest.trim_start();
            if rest == "..." {
                continue;
            }
            let (number, text) = rest.split_once(' ').unwrap_or((rest, ""));
            let number: usize = number.parse().unwrap();
            let source = if sign == "+" { &new_lines } else { &old_lines };
            prop_assert_eq!(source.get(number - 1).copied(), Some(text), "{}", line);
        }
        if let Some(first) = diff.first_changed_line {
            let same = old_lines.iter().zip(&new_lines).take_while(|(a, b)| a == b).count();
            prop_assert!(first <= same + 1);
        }
    }

    #[test]
    fn truncation_stays_within_limits(
        text in text(),
        max_lines in 0..12_usize,
        max_bytes in 0..64_usize,
    ) {
        let limits = TruncationLimits { max_lines, max_bytes };
        let total_lines = count_lines(&text);
        for (result, head) in [(truncate_head(&text, limits), true), (truncate_tail(&text, limits), false)] {
            prop_assert_eq!(result.total_lines, total_lines);
            prop_assert_eq!(result.output_bytes, result.content.len());
            if !result.truncated {
                prop_assert_eq!(&result.content, &text);
                continue;
            }
            prop_assert!(result.output_bytes <= max_bytes);
            prop_assert!(result.output_lines <= max_lines);
            prop_assert!(result.output_lines >= count_lines(&result.content));
            if head {
                prop_assert!(text.starts_with(&result.content));
            } else {
                prop_assert!(text.strip_suffix('\n').unwrap_or(&text).ends_with(&result.content));
            }
        }
    }

    #[test]
    fn normalisation_keeps_the_line_count_and_equals_whole_text_nfkc(text in text()) {
        let normalized = normalize_for_fuzzy(&text);
        prop_assert_eq!(normalized.as_str().matches('\n').count(), text.matches('\n').count());
        prop_assert_eq!(normalized.as_str(), reference_normalisation(&text));
    }

    #[test]
    fn normalisation_matches_the_reference_on_any_string(text in any::<String>()) {
        let normalized = normalize_for_fuzzy(&text);
        prop_assert_eq!(normalized.as_str(), reference_normalisation(&text));
    }

    #[test]
    fn original_ranges_are_in_bounds_on_char_boundaries_and_ordered(
        text in text(),
        a in 0.0..1.0_f64,
        b in 0.0..1.0_f64,
    ) {
        let normalized = normalize_for_fuzzy(&text);
        let len = normalized.as_str().len();
        let (from, to) = ((len as f64 * a.min(b)) as usize, (len as f64 * a.max(b)) as usize);
        let range = normalized.original_range(from..to);
        prop_assert!(range.start <= range.end && range.end <= text.len());
        prop_assert!(text.is_char_boundary(range.start) && text.is_char_boundary(range.end));
        // Within a line, the original of a range normalises to text containing the range.
        if let Some(wanted) = normalized.as_str().get(from..to)
            && !wanted.contains('\n')
        {
            let piece = normalize_for_fuzzy(&text[range]);
            prop_assert!(piece.as_str().contains(wanted.trim_end_matches(is_js_whitespace)));
        }
    }
}

#[test]
fn accepted_edits_change_only_the_matched_lines() {
    let inputs = (text(), 0.0..1.0_f64, 0.05..0.5_f64, garbling(), text());
    check_accepting(
        inputs,
        256,
        MIN_ACCEPTED_PERCENT,
        |(original, from, length, how, new_text)| {
            let old_text = garble(slice(&original, from, length), how);
            let edits = [Edit {
                old_text: old_text.clone(),
                new_text: new_text.clone(),
            }];
            let Ok(outcome) = apply_edits(&original, &edits) else {
                return Ok(Some(false));
            };
            let body = original.strip_prefix('\u{feff}').unwrap_or(&original);
            prop_assert_eq!(&outcome.old_content, &to_lf(body));
            let bom = &original[..original.len() - body.len()];
            let written = outcome.file_text.strip_prefix(bom);
            prop_assert!(written.is_some(), "the BOM is kept");
            let written = written.unwrap_or_default();
            prop_assert_eq!(&to_lf(written), &outcome.new_content);

            let found = &outcome.matches[0];
            if found.tier == MatchTier::Exact {
                let at = outcome.old_content.find(&to_lf(&old_text)).unwrap();
                let expected = format!(
                    "{}{}{}",
                    &outcome.old_content[..at],
                    to_lf(&new_text),
                    &outcome.old_content[at + to_lf(&old_text).len()..]
                );
                prop_assert_eq!(&outcome.new_content, &expected);
            }
            // Lines before the match and after it are byte-for-byte the original's, endings
            // included.
            let old_lines = lines_with_endings(body);
            let new_lines = lines_with_endings(written);
            let before = found.start_line - 1;
            let after = old_lines.len().saturating_sub(found.end_line);
            prop_assert!(new_lines.len() >= before + after.saturating_sub(1));
            prop_assert_eq!(&old_lines[..before], &new_lines[..before]);
            // The last matched line may lose or gain its ending, which merges it with the next.
            let tail = after.saturating_sub(1);
            prop_assert_eq!(
                &old_lines[old_lines.len() - tail..],
                &new_lines[new_lines.len() - tail..]
            );
            Ok(Some(true))
        },
    );
}

#[test]
fn the_patch_of_an_accepted_edit_turns_old_into_new() {
    let inputs = (text(), 0.0..1.0_f64, 0.05..0.5_f64, text());
    check_accepting(
        inputs,
        256,
        MIN_ACCEPTED_PERCENT,
        |(original, from, length, new_text)| {
            let old_text = slice(&original, from, length).to_owned();
            let Ok(outcome) = apply_edits(&original, &[Edit { old_text, new_text }]) else {
                return Ok(Some(false));
            };
            let patch = unified_patch("f", &outcome.old_content, &outcome.new_content, 4);
            prop_assert_eq!(
                apply_patch(&outcome.old_content, &patch),
                Some(outcome.new_content)
            );
            Ok(Some(true))
        },
    );
}

/// Share of generated edits the engine must accept in the properties that skip refusals.
const MIN_ACCEPTED_PERCENT: u32 = 50;

/// §6.5 done the obvious, whole-text way.
fn reference_normalisation(text: &str) -> String {
    let nfkc: String = text.nfkc().collect();
    nfkc.split('\n')
        .map(|line| line.trim_end_matches(is_js_whitespace))
        .collect::<Vec<_>>()
        .join("\n")
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
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
