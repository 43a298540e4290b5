use super::*;

fn edit(old_text: &str, new_text: &str) -> Edit {
    Edit {
        old_text: old_text.to_owned(),
        new_text: new_text.to_owned(),
    }
}

fn apply(original: &str, old_text: &str, new_text: &str) -> EditOutcome {
    apply_edits(original, &[edit(old_text, new_text)]).unwrap()
}

fn error(original: &str, edits: &[Edit]) -> EditError {
    apply_edits(original, edits).unwrap_err()
}

#[test]
fn replaces_a_unique_exact_match() {
    let outcome = apply("a\nb\nc\n", "b", "B");
    assert_eq!(outcome.new_content, "a\nB\nc\n");
    assert_eq!(outcome.file_text, "a\nB\nc\n");
    assert_eq!(outcome.old_content, "a\nb\nc\n");
    assert_eq!(
        outcome.matches,
        vec![EditMatch {
            index: 0,
            tier: MatchTier::Exact,
            start_line: 2,
            end_line: 2
        }]
    );
}

#[test]
fn applies_several_edits_against_the_original() {
    let edits = [edit("c", "C\nC2"), edit("a", "A")];
    let outcome = apply_edits("a\nb\nc\n", &edits).unwrap();
    assert_eq!(outcome.new_content, "A\nb\nC\nC2\n");
    let lines: Vec<_> = outcome
        .matches
        .iter()
        .map(|m| (m.index, m.start_line))
        .collect();
    assert_eq!(lines, vec![(0, 3), (1, 1)]);
}

#[test]
fn reports_the_lines_a_multi_line_match_covers() {
    let outcome = apply("0\n1\n2\n3\n", "1\n2\n", "x\n");
    assert_eq!(
        (outcome.matches[0].start_line, outcome.matches[0].end_line),
        (2, 3)
    );
}

#[test]
fn touching_edits_are_allowed() {
    let outcome = apply_edits("abcd", &[edit("ab", "1"), edit("cd", "2")]).unwrap();
    assert_eq!(outcome.new_content, "12");
}

#[test]
fn keeps_crlf_line_endings() {
    let outcome = apply("one\r\ntwo\r\nthree\r\n", "two\n", "2\n2b\n");
    assert_eq!(outcome.file_text, "one\r\n2\r\n2b\r\nthree\r\n");
    assert_eq!(outcome.new_content, "one\n2\n2b\nthree\n");
    assert_eq!(outcome.old_content, "one\ntwo\nthree\n");
}

#[test]
fn old_text_sent_with_crlf_matches_too() {
    let outcome = apply("one\r\ntwo\r\n", "one\r\ntwo", "1\r\n2");
    assert_eq!(outcome.file_text, "1\r\n2\r\n");
}

#[test]
fn keeps_mixed_line_endings_per_line() {
    let original = "a\r\nb\nc\r\nd\n";
    let outcome = apply(original, "c", "C");
    assert_eq!(outcome.file_text, "a\r\nb\nC\r\nd\n");
    let outcome = apply(original, "b\nc", "x\ny\nz");
    assert_eq!(outcome.file_text, "a\r\nx\ny\r\nz\r\nd\n");
}

#[test]
fn a_lone_carriage_return_is_a_line_ending() {
    let outcome = apply("a\rb\rc", "b\n", "B\nB2\n");
    assert_eq!(outcome.old_content, "a\nb\nc");
    assert_eq!(outcome.file_text, "a\rB\rB2\rc");
}

#[test]
fn keeps_a_byte_order_mark() {
    let outcome = apply("\u{feff}x = 1\r\n", "x = 1", "x = 2");
    assert_eq!(outcome.file_text, "\u{feff}x = 2\r\n");
    assert_eq!(outcome.old_content, "x = 1\n");
    let outcome = apply("\u{feff}x = 1\n", "x = 1", "x = 2");
    assert_eq!(outcome.file_text, "\u{feff}x = 2\n");
    assert_eq!(outcome.new_content, "x = 2\n");
}

#[test]
fn recovers_curly_quotes_and_keeps_the_rest_of_the_line() {
    let original =
        "say(\u{201c}hi\u{201d}, \u{2018}x\u{2019})  // keep \u{2019}this\u{2019}  \nnext\n";
    let outcome = apply(original, "say(\"hi\", 'x')", "say(\"hello\", 'x')");
    assert_eq!(outcome.matches[0].tier, MatchTier::Normalized);
    assert_eq!(
        outcome.file_text,
        "say(\"hello\", 'x')  // keep \u{2019}this\u{2019}  \nnext\n"
    );
}

#[test]
fn recovers_an_en_dash_and_keeps_bytes_around_the_match() {
    let original = "\u{201c}keep\u{201d} a \u{2013} b \u{201c}keep\u{201d}\n";
    let outcome = apply(original, "a - b", "a + b");
    assert_eq!(
        outcome.file_text,
        "\u{201c}keep\u{201d} a + b \u{201c}keep\u{201d}\n"
    );
}

#[test]
fn recovers_a_non_breaking_space() {
    let outcome = apply("let\u{a0}x = 1;\n", "let x = 1;", "let x = 2;");
    assert_eq!(outcome.matches[0].tier, MatchTier::Normalized);
    assert_eq!(outcome.file_text, "let x = 2;\n");
}

#[test]
fn recovers_trailing_spaces_and_keeps_them_outside_the_match() {
    let original = "a = 1   \nb = 2\t\nc = 3  \n";
    let outcome = apply(original, "a = 1\nb = 2\n", "a = 10\nb = 20\n");
    assert_eq!(outcome.matches[0].tier, MatchTier::Normalized);
    assert_eq!(outcome.file_text, "a = 10\nb = 20\nc = 3  \n");
    let outcome = apply(original, "b = 2", "b = 20");
    assert_eq!(outcome.matches[0].tier, MatchTier::Exact);
    let outcome = apply(original, "a = 1\nb", "a = 10\nb");
    assert_eq!(outcome.file_text, "a = 10\nb = 2\t\nc = 3  \n");
}

#[test]
fn recovers_full_width_forms() {
    let original = "print（ｘ，ｙ） # 表示\n";
    let outcome = apply(original, "print(x,y)", "print(x, y)");
    assert_eq!(outcome.matches[0].tier, MatchTier::Normalized);
    assert_eq!(outcome.file_text, "print(x, y) # 表示\n");
}

#[test]
fn edits_a_tab_indented_file_sent_with_spaces() {
    let original = "func main() {\n\tif ok {\n\t\tcall()\n\t}\n}\n";
    let outcome = apply(
        original,
        "    if ok {\n        call()\n    }\n",
        "    if ok {\n        call()\n        other(1,  2)\n    }\n",
    );
    assert_eq!(outcome.matches[0].tier, MatchTier::Whitespace);
    assert_eq!(
        outcome.file_text,
        "func main() {\n\tif ok {\n\t\tcall()\n\t\tother(1,  2)\n\t}\n}\n"
    );
    assert_eq!(
        (outcome.matches[0].start_line, outcome.matches[0].end_line),
        (2, 4)
    );
}

#[test]
fn lands_a_dedented_snippet_at_the_right_depth() {
    let original =
        "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        pass\n";
    let outcome = apply(
        original,
        "def f(self):\n    return 1",
        "def f(self):\n    if self.x:\n        return 2\n    return 1",
    );
    assert_eq!(outcome.matches[0].tier, MatchTier::Whitespace);
    assert_eq!(
        outcome.file_text,
        "class A:\n    def f(self):\n        if self.x:\n            return 2\n        return 1\n\n    def g(self):\n        pass\n"
    );
}

#[test]
fn whitespace_tier_ignores_the_length_of_inner_blank_runs() {
    let original = "x  =   1;\ny = 2;\n";
    let outcome = apply(original, "x = 1;", "x = 3;");
    assert_eq!(outcome.matches[0].tier, MatchTier::Whitespace);
    assert_eq!(outcome.file_text, "x = 3;\ny = 2;\n");
}

#[test]
fn whitespace_tier_keeps_unchanged_lines_byte_for_byte() {
    let original = "\tif a  {\n\t\tb()\n\t}\n";
    let outcome = apply(
        original,
        "if a {\n    b()\n}",
        "if a {\n    b()\n    c()\n}",
    );
    assert_eq!(outcome.file_text, "\tif a  {\n\t\tb()\n\t\tc()\n\t}\n");
}

#[test]
fn whitespace_tier_never_accepts_a_line_that_differs_in_more_than_whitespace() {
    let original = "\tif ok {\n\t\tcall()\n\t}\n";
    let failure = error(original, &[edit("if ok {\n    call();\n}", "x")]);
    assert!(matches!(failure, EditError::NotFound { index: 0, .. }));
}

#[test]
fn whitespace_tier_must_be_unique() {
    let original = "\tx  = 1\n  x =  1\n";
    let failure = error(original, &[edit("x = 1", "x = 2")]);
    assert_eq!(
        failure,
        EditError::Ambiguous {
            index: 0,
            count: 2,
            lines: vec![1, 2]
        }
    );
}

#[test]
fn exact_match_wins_over_fuzzy_ones() {
    let outcome = apply("\u{201c}a\u{201d}\n\"a\"\n", "\"a\"", "\"b\"");
    assert_eq!(outcome.matches[0].tier, MatchTier::Exact);
    assert_eq!(outcome.file_text, "\u{201c}a\u{201d}\n\"b\"\n");
}

#[test]
fn overlapping_occurrences_are_ambiguous() {
    let failure = error("foo\nfoo\nfoo\n", &[edit("foo\nfoo\n", "bar\n")]);
    assert_eq!(
        failure,
        EditError::Ambiguous {
            index: 0,
            count: 2,
            lines: vec![1, 2]
        }
    );
}

#[test]
fn fuzzy_occurrences_are_counted_too() {
    let failure = error(
        "\u{2018}a\u{2019}\n\u{201b}a\u{2019}\n",
        &[edit("'a'", "b")],
    );
    assert_eq!(
        failure,
        EditError::Ambiguous {
            index: 0,
            count: 2,
            lines: vec![1, 2]
        }
    );
}

#[test]
fn an_empty_edit_list_is_an_error() {
    assert_eq!(error("x", &[]), EditError::NoEdits);
}

#[test]
fn an_empty_old_text_is_an_error() {
    let failure = error("x", &[edit("x", "y"), edit("", "z")]);
    assert_eq!(failure, EditError::EmptyOldText { index: 1 });
}

#[test]
fn missing_text_is_not_found_with_the_closest_fragment() {
    let original = "fn main() {\n    let total = sum(1, 2);\n    println!(\"{total}\");\n}\n";
    let failure = error(original, &[edit("let totl = sum(1, 2);", "x")]);
    let EditError::NotFound {
        index: 0,
        closest: Some(closest),
    } = failure
    else {
        panic!("expected not found, got {failure:?}");
    };
    assert_eq!(closest.start_line, 2);
    assert_eq!(closest.text, "    let total = sum(1, 2);");
}

#[test]
fn whitespace_only_old_text_that_is_missing_is_not_found() {
    assert_eq!(
        error("abc", &[edit("   ", "x")]),
        EditError::NotFound {
            index: 0,
            closest: None
        }
    );
}

#[test]
fn overlapping_edits_are_an_error() {
    let failure = error("abcdef", &[edit("cde", "1"), edit("abc", "2")]);
    assert_eq!(
        failure,
        EditError::Overlap {
            first: 0,
            second: 1
        }
    );
    let failure = error("abcdef", &[edit("abc", "1"), edit("abc", "2")]);
    assert!(matches!(failure, EditError::Overlap { .. }));
}

#[test]
fn an_edit_that_changes_nothing_is_an_error() {
    assert_eq!(error("a\nb\n", &[edit("b", "b")]), EditError::NoChange);
    assert_eq!(
        error("a\r\nb\r\n", &[edit("b\r\n", "b\n")]),
        EditError::NoChange
    );
}

#[test]
fn the_first_failing_edit_in_order_decides() {
    let failure = error("a a b", &[edit("zzz", "1"), edit("a", "2")]);
    assert!(matches!(failure, EditError::NotFound { index: 0, .. }));
}

#[test]
fn nothing_is_applied_when_one_edit_fails() {
    assert!(apply_edits("a b", &[edit("a", "1"), edit("zzz", "2")]).is_err());
}

#[test]
fn new_text_is_inserted_verbatim_in_the_normalized_tier() {
    let outcome = apply(
        "x = \u{201c}a\u{201d}  \n",
        "x = \"a\"",
        "x = \u{201c}b\u{201d}\t",
    );
    assert_eq!(outcome.file_text, "x = \u{201c}b\u{201d}\t  \n");
}

#[test]
fn match_info_serialises_in_camel_case() {
    let found = EditMatch {
        index: 1,
        tier: MatchTier::Whitespace,
        start_line: 3,
        end_line: 4,
    };
    assert_eq!(
        serde_json::to_value(found).unwrap(),
        serde_json::json!({"index": 1, "tier": "whitespace", "startLine": 3, "endLine": 4})
    );
}

#[test]
fn a_huge_pathological_file_is_handled_in_linear_time() {
    let original = "a".repeat(2_000_000);
    let failure = error(&original, &[edit(&"a".repeat(1000), "b")]);
    let EditError::Ambiguous { count, lines, .. } = failure else {
        panic!("{failure:?}")
    };
    assert_eq!(count, 2_000_000 - 1000 + 1);
    assert_eq!(lines, vec![1; 5]);
}

#[test]
fn reindented_snippet_with_curly_quotes_still_matches_on_the_whitespace_rung() {
    let file = "def greet(name):\n\treturn 'Hello, ' + name\n";
    let edits = [Edit {
        old_text: "    return \u{2018}Hello, \u{2019} + name".to_owned(),
        new_text: "    return f'Hi, {name}!'".to_owned(),
    }];
    let outcome = apply_edits(file, &edits).unwrap();
    assert_eq!(
        outcome.file_text,
        "def greet(name):\n\treturn f'Hi, {name}!'\n"
    );
    assert_eq!(outcome.matches[0].tier, MatchTier::Whitespace);
    assert_eq!(
        (outcome.matches[0].start_line, outcome.matches[0].end_line),
        (2, 2)
    );
}

#[test]
fn a_flattened_block_keeps_each_line_at_its_depth() {
    let original = "def f(a, x):\n    if a:\n        y = 1\n        return x\n    return 0\n";
    let outcome = apply(original, "if a:\ny = 1\nreturn x", "if a:\ny = 2\nreturn x");
    assert_eq!(outcome.matches[0].tier, MatchTier::Whitespace);
    assert_eq!(
        outcome.file_text,
        "def f(a, x):\n    if a:\n        y = 2\n        return x\n    return 0\n"
    );
}

#[test]
fn a_whitespace_only_first_line_is_replaced_whole() {
    let outcome = apply(
        "a\n  \nb = \u{201c}x\u{201d}\nc\n",
        "\nb = \"x\"\n",
        "NEW\n\nb = \"y\"\n",
    );
    assert_eq!(outcome.matches[0].tier, MatchTier::Normalized);
    assert_eq!(outcome.file_text, "a\nNEW\n\nb = \"y\"\nc\n");
}

#[test]
fn blanks_after_the_match_stay() {
    let outcome = apply("keep\nfoo  bar   \nnext\n", "foo bar", "X");
    assert_eq!(outcome.matches[0].tier, MatchTier::Whitespace);
    assert_eq!(outcome.file_text, "keep\nX   \nnext\n");
}

#[test]
fn reports_an_ambiguous_indentation_with_the_file_lines() {
    let original = "def f(a):\n    if a:\n        y = 1\n    return 0\n";
    let failure = error(original, &[edit("if a:\ny = 1", "if a:\ny = 1\nz = 2")]);
    assert_eq!(
        failure,
        EditError::AmbiguousIndentation {
            index: 0,
            start_line: 2,
            lines: "    if a:\n        y = 1".to_owned(),
            new_line: 3
        }
    );
}

#[test]
fn replace_all_replaces_every_exact_occurrence_and_counts_them() {
    let edits = [Edit {
        old_text: "foo".into(),
        new_text: "bar".into(),
    }];
    let outcome = apply_edits_replacing_all("foo\nx foo\nfoofoo\n", &edits, &[true]).unwrap();
    assert_eq!(outcome.file_text, "bar\nx bar\nbarbar\n");
    let lines: Vec<usize> = outcome.matches.iter().map(|m| m.start_line).collect();
    assert_eq!(lines, vec![1, 2, 3, 3]);
    assert!(outcome.matches.iter().all(|m| m.tier == MatchTier::Exact));
    let missing = apply_edits_replacing_all("abc\n", &edits, &[true]).unwrap_err();
    assert!(
        matches!(missing, EditError::NotFound { index: 0, .. }),
        "{missing:?}"
    );
}

#[test]
fn the_borrowed_result_equals_the_owned_one_and_copies_lf_text_once() {
    let edit = Edit {
        old_text: "b = 1".to_owned(),
        new_text: "b = 2".to_owned(),
    };
    for file in [
        "a\nb = 1\nc\n",
        "a\r\nb = 1\r\nc\r\n",
        "\u{FEFF}a\nb = 1\nc\n",
    ] {
        let owned = apply_edits(file, std::slice::from_ref(&edit)).unwrap();
        let borrowed = apply_edits_borrowed(file, std::slice::from_ref(&edit), &[]).unwrap();
        assert_eq!(borrowed.file_text(), owned.file_text);
        assert_eq!(borrowed.clone().into_outcome(), owned);
        let plain_lf = !file.contains('\r');
        assert_eq!(
            matches!(borrowed.old_content, Cow::Borrowed(_)),
            plain_lf,
            "{file:?}"
        );
    }
}
