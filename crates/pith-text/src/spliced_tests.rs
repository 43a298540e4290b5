use proptest::prelude::*;

use super::*;
use crate::{apply_edits_borrowed, display_diff, unified_patch};

fn edit(old: &str, new: &str) -> Edit {
    Edit {
        old_text: old.to_owned(),
        new_text: new.to_owned(),
    }
}

/// The spliced answer equals the engine's: the new text, the matches, the diff and the patch.
fn assert_same_as_engine(original: &str, edits: &[Edit]) {
    let replace_all = vec![false; edits.len()];
    let exact = locate_exact(original, edits, &replace_all).expect("an exact edit");
    let engine = apply_edits_borrowed(original, edits, &replace_all).expect("the engine edits");
    assert_eq!(exact.new_text(), engine.new_content);
    assert_eq!(exact.new_len(), engine.new_content.len());
    assert_eq!(exact.matches(), &engine.matches[..]);
    for context in [0, 1, 4] {
        assert_eq!(
            exact.display_diff(context),
            display_diff(&engine.old_content, &engine.new_content, context),
            "context {context}"
        );
        assert_eq!(
            exact.unified_patch("f.txt", context),
            unified_patch("f.txt", &engine.old_content, &engine.new_content, context),
            "context {context}"
        );
    }
}

fn numbered(lines: usize) -> String {
    (1..=lines).map(|n| format!("line {n}\n")).collect()
}

#[test]
fn one_edit_in_the_middle_gives_what_the_engine_gives() {
    let text = numbered(200);
    assert_same_as_engine(&text, &[edit("line 100\n", "changed\n")]);
    assert_same_as_engine(&text, &[edit("line 100\n", "")]);
    assert_same_as_engine(&text, &[edit("ne 150\n", "NE 150\n")]);
    assert_same_as_engine(&text, &[edit("line 1\n", "first\nsecond\n")]);
    assert_same_as_engine(&text, &[edit("line 200\n", "last")]);
}

#[test]
fn several_edits_and_repeated_lines_give_what_the_engine_gives() {
    let text = numbered(300);
    assert_same_as_engine(
        &text,
        &[edit("line 250\n", "x\n"), edit("line 3\n", "y\nz\n")],
    );
    // Deleting one of many equal lines: the common prefix runs past the splice.
    let repeated = format!(
        "head\n{}unique\n{}tail",
        "same\n".repeat(50),
        "same\n".repeat(50)
    );
    assert_same_as_engine(&repeated, &[edit("unique\nsame\n", "")]);
    assert_same_as_engine(&repeated, &[edit("same\nunique\n", "unique\n")]);
    assert_same_as_engine(&repeated, &[edit("head\n", "")]);
    assert_same_as_engine("no newline at all", &[edit("newline", "NL")]);
    assert_same_as_engine("é ü\nñ\n", &[edit("ü", "u")]);
}

#[test]
fn anything_but_a_plain_exact_edit_is_left_to_the_engine() {
    let text = numbered(20);
    let none = |original: &str, edits: &[Edit], all: &[bool]| {
        assert!(locate_exact(original, edits, all).is_none());
    };
    none(&text, &[edit("line 1", "x")], &[false]); // line 1, 10..19
    none(&text, &[edit("missing", "x")], &[false]);
    none(&text, &[edit("", "x")], &[false]);
    none(&text, &[edit("line 5\n", "line 5\n")], &[false]);
    none(&text, &[edit("line 5\n", "x")], &[true]);
    none(&text, &[edit("line 5\n", "x\r\n")], &[false]);
    none(
        &text,
        &[edit("line 5\nline 6", "x"), edit("6\nline 7", "y")],
        &[false, false],
    );
    none("a\r\nb\r\n", &[edit("b", "c")], &[false]);
    none("\u{FEFF}a\nb\n", &[edit("b", "c")], &[false]);
    none("aaa", &[edit("aa", "b")], &[false]); // overlapping occurrences count
    none(&text, &[], &[]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_exact_edits_give_what_the_engine_gives(
        lines in proptest::collection::vec("[ab]{0,3}", 1..40),
        start in 0usize..400,
        len in 1usize..40,
        new in "[ab\n]{0,12}",
    ) {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        let start = start % text.len();
        let end = (start + len).min(text.len());
        let old = &text[start..end];
        let edits = [edit(old, &new)];
        if let Some(exact) = locate_exact(&text, &edits, &[false]) {
            prop_assert!(exact.matches().len() == 1);
            assert_same_as_engine(&text, &edits);
        }
    }
}
