//! Edit-engine cases as fixture folders: `input/<file>`, `edit.json` and either
//! `expected/<file>` (the file as written) or `expected/error.txt` (the error as a
//! model reads it: pith-tools formats the engine's errors and checks that text,
//! in its `messages` tests; here, that the engine refuses).

use std::path::Path;

use pith_text::{Edit, apply_edits};

#[test]
fn every_edit_fixture_produces_its_expected_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/edit");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    cases.sort();
    assert!(!cases.is_empty());
    for case in cases {
        let spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("edit.json")).unwrap())
                .unwrap();
        let path = spec["path"].as_str().unwrap();
        let edits: Vec<Edit> = spec["edits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|edit| Edit {
                old_text: edit["oldText"].as_str().unwrap().to_owned(),
                new_text: edit["newText"].as_str().unwrap().to_owned(),
            })
            .collect();
        let input = std::fs::read_to_string(case.join("input").join(path)).unwrap();
        let expected = case.join("expected");
        match apply_edits(&input, &edits) {
            Ok(outcome) => {
                let wanted = std::fs::read_to_string(expected.join(path)).unwrap();
                assert_eq!(outcome.file_text, wanted, "{}", case.display());
            }
            Err(error) => {
                assert!(
                    expected.join("error.txt").is_file(),
                    "{}: {error}",
                    case.display()
                );
            }
        }
    }
}
