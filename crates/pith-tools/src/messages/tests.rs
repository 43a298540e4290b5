//! The edit engine's refusals and apply_patch's hunk errors, in the words a
//! model reads (moved here from pith-text with the wording).

use pith_text::{ClosestFragment, Edit, EditError, apply_edits, apply_hunks, parse_patch};

use super::apply_patch::hunk_error;
use super::edit::engine_error as render;

fn edit(old_text: &str, new_text: &str) -> Edit {
    Edit {
        old_text: old_text.to_owned(),
        new_text: new_text.to_owned(),
    }
}

fn error(original: &str, edits: &[Edit]) -> EditError {
    apply_edits(original, edits).unwrap_err()
}

#[test]
fn renders_not_found_for_one_edit_with_the_closest_fragment() {
    let failure = EditError::NotFound {
        index: 0,
        closest: Some(ClosestFragment {
            start_line: 12,
            text: "    if x {\n        y()".to_owned(),
            similarity: 0.874,
        }),
    };
    assert_eq!(
        render(&failure, "src/a.rs", 1),
        "Could not find the exact text in src/a.rs. The most similar text (87% similar) is at \
         lines 12-13:\n    if x {\n        y()\nRead the file again and retry with the exact \
         text of oldText, including whitespace and newlines."
    );
}

#[test]
fn renders_not_found_for_several_edits_without_a_fragment() {
    let failure = EditError::NotFound {
        index: 2,
        closest: None,
    };
    assert_eq!(
        render(&failure, "a.txt", 3),
        "Could not find edits[2] in a.txt. No text in it is close to that; grep for a \
         distinctive part of it to find where it is.\nRead the file again and retry with the exact text \
         of edits[2].oldText, including whitespace and newlines."
    );
}

#[test]
fn renders_ambiguity_with_the_first_lines() {
    let failure = EditError::Ambiguous {
        index: 0,
        count: 7,
        lines: vec![1, 4, 9, 12, 20],
    };
    assert_eq!(
        render(&failure, "a.txt", 1),
        "Found 7 occurrences of the text in a.txt (starting at lines 1, 4, 9, 12, 20, ...). \
         oldText must match exactly once: add surrounding lines to make it unique."
    );
    let failure = EditError::Ambiguous {
        index: 1,
        count: 2,
        lines: vec![3, 5],
    };
    assert_eq!(
        render(&failure, "a.txt", 2),
        "Found 2 occurrences of edits[1] in a.txt (starting at lines 3, 5). \
         edits[1].oldText must match exactly once: add surrounding lines to make it unique."
    );
}

#[test]
fn renders_the_other_errors() {
    assert_eq!(
        render(&EditError::NoEdits, "a", 0),
        "Edit tool input is invalid. edits must contain at least one replacement."
    );
    assert_eq!(
        render(&EditError::EmptyOldText { index: 0 }, "a", 1),
        "oldText must not be empty in a. Put the exact text to replace in it."
    );
    assert_eq!(
        render(&EditError::EmptyOldText { index: 1 }, "a", 2),
        "edits[1].oldText must not be empty in a. Put the exact text to replace in it."
    );
    assert_eq!(
        render(
            &EditError::Overlap {
                first: 0,
                second: 1
            },
            "a",
            2
        ),
        "edits[0] and edits[1] overlap in a. Merge them into one edit or target disjoint regions."
    );
    assert_eq!(
        render(&EditError::NoChange, "a", 1),
        "No changes made to a. The replacement produced identical content. Make newText differ \
         from the text it replaces."
    );
    assert_eq!(
        render(&EditError::NoChange, "a", 2),
        "No changes made to a. The replacements produced identical content. Make each newText \
         differ from the text it replaces."
    );
}

#[test]
fn the_hint_points_at_the_block_with_the_typo_and_says_how_close() {
    let original =
        "fn a() {\n    match x {\n        A => {\n            \"alpha\"\n        }\n    }\n}\n";
    let failure = error(
        original,
        &[edit(
            "        A => {\n            \"alpha\";\n        }",
            "x",
        )],
    );
    assert_eq!(
        render(&failure, "a.rs", 1),
        "Could not find the exact text in a.rs. The most similar text (94% similar) is at lines \
         3-5:\n        A => {\n            \"alpha\"\n        }\nRead the file again and retry \
         with the exact text of oldText, including whitespace and newlines."
    );
}

#[test]
fn no_close_text_suggests_grep() {
    let failure = error(
        "fn main() {\n    run();\n}\n",
        &[edit("class Widget:\n    pass", "x")],
    );
    assert_eq!(
        render(&failure, "a.rs", 1),
        "Could not find the exact text in a.rs. No text in it is close to that; grep for a \
         distinctive part of it to find where it is.\nRead the file again and retry with the \
         exact text of oldText, including whitespace and newlines."
    );
}

#[test]
fn repeated_lines_in_an_ambiguity_are_shown_once() {
    let failure = error("aaaa\nb\naa\n", &[edit("aa", "x")]);
    assert_eq!(
        render(&failure, "f", 1),
        "Found 4 occurrences of the text in f (starting at lines 1, 3). oldText must match \
         exactly once: add surrounding lines to make it unique."
    );
}

#[test]
fn renders_an_ambiguous_indentation_with_the_file_lines() {
    // The engine's side of this case is pith-text's
    // `reports_an_ambiguous_indentation_with_the_file_lines`.
    let failure = EditError::AmbiguousIndentation {
        index: 0,
        start_line: 2,
        lines: "    if a:\n        y = 1".to_owned(),
        new_line: 3,
    };
    assert_eq!(
        render(&failure, "f.py", 1),
        "oldText matches lines 2-3 of f.py only when indentation is ignored, and the depth of \
         line 3 of newText is ambiguous. The file's lines are:\n    if a:\n        y = 1\n\
         Retry with oldText and newText indented exactly as in the file."
    );
}

#[test]
fn a_hunk_in_two_places_says_how_often_and_where() {
    let file = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
    let plain =
        parse_patch("*** Begin Patch\n*** Update File: f\n@@\n-    x();\n+    y();\n*** End Patch")
            .unwrap();
    let pith_text::FileChange::Update { hunks, .. } = &plain.files[0].change else {
        panic!("an update");
    };
    let error = apply_hunks(file, hunks).unwrap_err();
    assert!(hunk_error(&error, "f").contains("occurs 2 times"));
}

#[test]
fn a_missing_hunk_names_the_hunk_and_the_closest_text() {
    let patch = parse_patch(
        "*** Begin Patch\n*** Update File: f\n@@\n-let total = compute(a, b);\n+let total = 0;\n*** End Patch",
    )
    .unwrap();
    let pith_text::FileChange::Update { hunks, .. } = &patch.files[0].change else {
        panic!("an update");
    };
    let error = apply_hunks("fn f() {\n    let total = compute(a, c);\n}\n", hunks).unwrap_err();
    let message = hunk_error(&error, "f");
    assert!(
        message
            .starts_with("Could not find the context and '-' lines of hunk 1 (patch line 3) in f."),
        "{message}"
    );
    assert!(message.contains("compute(a, c)"), "{message}");
}

/// pith-text's edit fixtures whose `expected/error.txt` is the text a model reads.
#[test]
fn every_edit_fixture_error_reads_as_its_error_txt() {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pith-text/tests/fixtures/edit");
    let mut checked = 0;
    for case in std::fs::read_dir(&root).unwrap() {
        let case = case.unwrap().path();
        let Ok(wanted) = std::fs::read_to_string(case.join("expected/error.txt")) else {
            continue;
        };
        let spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("edit.json")).unwrap())
                .unwrap();
        let path = spec["path"].as_str().unwrap();
        let edits: Vec<Edit> = spec["edits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                edit(
                    e["oldText"].as_str().unwrap(),
                    e["newText"].as_str().unwrap(),
                )
            })
            .collect();
        let input = std::fs::read_to_string(case.join("input").join(path)).unwrap();
        let failure = error(&input, &edits);
        assert_eq!(
            render(&failure, path, edits.len()),
            wanted.trim_end(),
            "{}",
            case.display()
        );
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn names_each_fuzzy_edit_with_its_rung_and_lines() {
    use pith_text::{EditMatch, MatchTier};

    use super::edit::fuzzy_note;

    let matches = [
        EditMatch {
            index: 0,
            tier: MatchTier::Normalized,
            start_line: 3,
            end_line: 4,
        },
        EditMatch {
            index: 1,
            tier: MatchTier::Exact,
            start_line: 9,
            end_line: 9,
        },
    ];
    assert_eq!(
        fuzzy_note(&matches).unwrap(),
        "Note: edits[0] matched after normalising quotes/whitespace at lines 3-4."
    );
    assert!(fuzzy_note(&matches[1..]).is_none());
    let indent = [EditMatch {
        index: 2,
        tier: MatchTier::Whitespace,
        start_line: 7,
        end_line: 7,
    }];
    assert_eq!(
        fuzzy_note(&indent).unwrap(),
        "Note: edits[2] matched after ignoring indentation (newText was re-indented) at line 7."
    );
}
