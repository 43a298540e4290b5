use super::*;
use crate::error::EditError;

fn hunks_of(patch: &Patch, file: usize) -> &[Hunk] {
    match &patch.files[file].change {
        FileChange::Update { hunks, .. } => hunks,
        other => panic!("not an update: {other:?}"),
    }
}

#[test]
fn parses_add_delete_update_and_move_in_one_patch() {
    let patch = parse_patch(
        "*** Begin Patch\n\
         *** Add File: new.txt\n\
         +hello\n\
         +world\n\
         *** Delete File: old.txt\n\
         *** Update File: src/a.rs\n\
         *** Move to: src/b.rs\n\
         @@ fn main() {\n \
         let x = 1;\n\
         -let y = 2;\n\
         +let y = 3;\n\
         *** End of File\n\
         *** End Patch\n",
    )
    .unwrap();
    assert_eq!(patch.files.len(), 3);
    assert_eq!(patch.files[0].path, "new.txt");
    assert_eq!(
        patch.files[0].change,
        FileChange::Add {
            contents: "hello\nworld\n".to_owned()
        }
    );
    assert_eq!(patch.files[1].change, FileChange::Delete);
    assert_eq!(patch.files[1].line, 5);
    let FileChange::Update { move_to, hunks } = &patch.files[2].change else {
        panic!("not an update");
    };
    assert_eq!(move_to.as_deref(), Some("src/b.rs"));
    assert_eq!(hunks.len(), 1);
    assert_eq!(hunks[0].header.as_deref(), Some("fn main() {"));
    assert_eq!(hunks[0].old_lines, ["let x = 1;", "let y = 2;"]);
    assert_eq!(hunks[0].new_lines, ["let x = 1;", "let y = 3;"]);
    assert!(hunks[0].end_of_file);
    assert_eq!(hunks[0].line, 8);
}

#[test]
fn names_the_line_of_a_malformed_hunk() {
    let error = parse_patch(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\nc wrong\n*** End Patch\n",
    )
    .unwrap_err();
    assert_eq!(error.line, 6);
    assert!(
        error
            .message
            .contains("' ' (context), '-' (remove) or '+' (add)")
    );
    assert!(error.message.contains("c wrong"));
    assert!(error.to_string().starts_with("patch line 6: "));
}

#[test]
fn names_the_line_of_a_missing_envelope() {
    let error = parse_patch("\n*** Update File: a.txt\n").unwrap_err();
    assert_eq!(error.line, 2);
    assert!(error.message.contains("*** Begin Patch"), "{error}");
    let error = parse_patch("*** Begin Patch\n*** Delete File: a\n").unwrap_err();
    assert!(error.message.contains("*** End Patch"), "{error}");
    let error = parse_patch("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch").unwrap_err();
    assert_eq!(error.line, 2);
    let error =
        parse_patch("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch").unwrap_err();
    assert_eq!(error.line, 3);
    let error = parse_patch("*** Begin Patch\n*** End Patch\n").unwrap_err();
    assert!(error.message.contains("no file"), "{error}");
}

#[test]
fn accepts_a_first_hunk_without_its_header_and_crlf_patches() {
    let patch =
        parse_patch("*** Begin Patch\r\n*** Update File: a.txt\r\n a\r\n-b\r\n+c\r\n*** End Patch")
            .unwrap();
    let hunks = hunks_of(&patch, 0);
    assert_eq!(hunks[0].old_lines, ["a", "b"]);
    assert_eq!(hunks[0].new_lines, ["a", "c"]);
}

#[test]
fn applies_hunks_keeping_crlf_and_bom() {
    let patch = parse_patch(
        "*** Begin Patch\n*** Update File: a\n@@\n one\n-two\n+TWO\n@@\n-four\n+FOUR\n*** End Patch",
    )
    .unwrap();
    let original = "\u{FEFF}one\r\ntwo\r\nthree\r\nfour\r\n";
    let patched = apply_hunks(original, hunks_of(&patch, 0)).unwrap();
    assert_eq!(patched.text, "\u{FEFF}one\r\nTWO\r\nthree\r\nFOUR\r\n");
    assert_eq!(patched.old_content, "one\ntwo\nthree\nfour\n");
    assert_eq!(patched.hunks[0].tier, Some(MatchTier::Exact));
    assert_eq!(patched.hunks[1].start_line, 4);
}

#[test]
fn locates_fuzzy_context_on_the_normalised_and_whitespace_rungs() {
    let patch = parse_patch(
        "*** Begin Patch\n*** Update File: a\n@@\n print(\"hi\")\n-x = 1\n+x = 2\n*** End Patch",
    )
    .unwrap();
    // Curly quotes in the file, straight ones in the patch.
    let patched = apply_hunks("print(\u{201C}hi\u{201D})\nx = 1\n", hunks_of(&patch, 0)).unwrap();
    assert_eq!(patched.text, "print(\u{201C}hi\u{201D})\nx = 2\n");
    assert_eq!(patched.hunks[0].tier, Some(MatchTier::Normalized));
    // Re-indented context: the file is tab-indented, the patch uses no indentation.
    let patch = parse_patch(
        "*** Begin Patch\n*** Update File: a\n@@\n if ok {\n-    a()\n+    b()\n }\n*** End Patch",
    )
    .unwrap();
    let patched = apply_hunks(
        "fn f() {\n\tif ok {\n\t\ta()\n\t}\n}\n",
        hunks_of(&patch, 0),
    )
    .unwrap();
    assert_eq!(patched.text, "fn f() {\n\tif ok {\n\t\tb()\n\t}\n}\n");
    assert_eq!(patched.hunks[0].tier, Some(MatchTier::Whitespace));
}

#[test]
fn refuses_ambiguous_context_and_uses_the_header_to_decide() {
    let file = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
    let plain =
        parse_patch("*** Begin Patch\n*** Update File: f\n@@\n-    x();\n+    y();\n*** End Patch")
            .unwrap();
    let error = apply_hunks(file, hunks_of(&plain, 0)).unwrap_err();
    assert!(
        matches!(error.error, EditError::Ambiguous { count: 2, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("occurs 2 times"));
    let headed = parse_patch(
        "*** Begin Patch\n*** Update File: f\n@@ fn b() {\n-    x();\n+    y();\n*** End Patch",
    )
    .unwrap();
    let patched = apply_hunks(file, hunks_of(&headed, 0)).unwrap();
    assert_eq!(
        patched.text,
        "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n"
    );
    assert_eq!(patched.hunks[0].start_line, 5);
}

#[test]
fn a_missing_context_names_the_hunk_and_the_closest_text() {
    let patch = parse_patch(
        "*** Begin Patch\n*** Update File: f\n@@\n-let total = compute(a, b);\n+let total = 0;\n*** End Patch",
    )
    .unwrap();
    let error = apply_hunks(
        "fn f() {\n    let total = compute(a, c);\n}\n",
        hunks_of(&patch, 0),
    )
    .unwrap_err();
    assert_eq!((error.index, error.line), (0, 3));
    let EditError::NotFound {
        closest: Some(closest),
        ..
    } = &error.error
    else {
        panic!("{error:?}");
    };
    assert!(closest.text.contains("compute(a, c)"), "{closest:?}");
}
#[test]
fn appends_pure_additions_and_matches_at_a_missing_final_newline() {
    let patch =
        parse_patch("*** Begin Patch\n*** Update File: f\n@@\n+tail\n*** End Patch").unwrap();
    let patched = apply_hunks("a\nb", hunks_of(&patch, 0)).unwrap();
    assert_eq!(patched.text, "a\nb\ntail\n");
    let patch = parse_patch(
        "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+c\n*** End of File\n*** End Patch",
    )
    .unwrap();
    let patched = apply_hunks("a\nb", hunks_of(&patch, 0)).unwrap();
    assert_eq!(patched.text, "a\nc");
    let patch =
        parse_patch("*** Begin Patch\n*** Update File: f\n@@ b\n+inserted\n*** End Patch").unwrap();
    let patched = apply_hunks("a\nb\nc\n", hunks_of(&patch, 0)).unwrap();
    assert_eq!(patched.text, "a\nb\ninserted\nc\n");
}

#[test]
fn removes_whole_lines() {
    let patch =
        parse_patch("*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n c\n*** End Patch").unwrap();
    let patched = apply_hunks("a\nb\nc\n", hunks_of(&patch, 0)).unwrap();
    assert_eq!(patched.text, "a\nc\n");
}
