use super::*;

/// The rung with the lines as their own keys (no normalisation).
fn find(text: &str, old: &str, new: &str) -> WhitespaceMatch {
    super::find(text, text, old, old, new)
}

fn unique(text: &str, old: &str, new: &str) -> (String, String) {
    match find(text, old, new) {
        WhitespaceMatch::Unique { span, replacement } => (text[span].to_owned(), replacement),
        other => panic!("expected a unique match, got {other:?}"),
    }
}

#[test]
fn keys_ignore_indentation_and_run_lengths() {
    assert!(same_key("\t\tfoo(a,  b)  ", "foo(a, b)"));
    assert!(same_key("x\t=\ty", "x = y"));
    assert!(!same_key("foo(a,b)", "foo(a, b)"));
    assert!(!same_key("foo;", "foo"));
}

#[test]
fn matches_whole_lines_and_spans_the_newline_only_when_asked() {
    let text = "a\n\tb  c\nd\n";
    assert_eq!(unique(text, "b c", "x").0, "\tb  c");
    assert_eq!(unique(text, "b c\n", "x\n").0, "\tb  c\n");
    assert_eq!(unique("a\n  b", "b\n", "x\n").0, "  b");
}

#[test]
fn blank_needles_and_partial_lines_do_not_match() {
    assert_eq!(find("a\n\n  \nb\n", "  \n\t", "x"), WhitespaceMatch::None);
    assert_eq!(
        find("let a = 1;\n", "a = 1;", "a = 2;"),
        WhitespaceMatch::None
    );
    assert_eq!(find("", "a", "b"), WhitespaceMatch::None);
}

#[test]
fn translates_space_levels_into_tabs() {
    let text = "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n";
    let (_, replacement) = unique(
        text,
        "if x {\n    y()\n}",
        "if x {\n    for {\n        y()\n    }\n}",
    );
    assert_eq!(replacement, "\tif x {\n\t\tfor {\n\t\t\ty()\n\t\t}\n\t}");
}

#[test]
fn translates_tab_levels_into_two_spaces() {
    let text = "a:\n  b:\n    c: 1\n";
    let (_, replacement) = unique(text, "b:\n\tc: 1", "b:\n\tc: 2\n\td:\n\t\te: 3");
    assert_eq!(replacement, "  b:\n    c: 2\n    d:\n      e: 3");
}

#[test]
fn dedents_lines_shallower_than_the_match() {
    let text = "mod m {\n    fn f() {\n        g();\n    }\n}\n";
    let (_, replacement) = unique(text, "    g();", "    g();\n}\nfn h() {\n    i();");
    // With a single matched line, one level is the default four columns.
    assert_eq!(
        replacement,
        "        g();\n    }\n    fn h() {\n        i();"
    );
    // A closing brace sent at the depth of the line before it has no place: refused.
    assert_eq!(
        find(text, "g();", "g();\n}"),
        WhitespaceMatch::Unplaceable {
            start_line: 3,
            lines: "        g();".to_owned(),
            new_line: 2
        }
    );
}

#[test]
fn keeps_alignment_spaces_beyond_whole_levels() {
    let text = "\tcall(a,\n\t     b)\n";
    let (_, replacement) = unique(text, "call(a,\n     b)", "call(a,\n     b,\n     c)");
    assert_eq!(replacement, "\tcall(a,\n\t     b,\n\t     c)");
}

#[test]
fn guesses_the_file_unit_when_the_match_shows_none() {
    let text = "fn a() {\n\tx();\n}\nfn b() {}\n";
    let (_, replacement) = unique(text, "fn b() {}", "fn b() {\n    y();\n}");
    assert_eq!(replacement, "fn b() {\n\ty();\n}");
    let spaces = "a:\n  b: 1\n  c: 2\nd: 3\n";
    let (_, replacement) = unique(spaces, "d: 3", "d:\n    e: 3");
    assert_eq!(replacement, "d:\n  e: 3");
}

#[test]
fn an_empty_new_text_deletes_the_lines() {
    let (span, replacement) = unique("a\n  b\nc\n", "b\n", "");
    assert_eq!((span.as_str(), replacement.as_str()), ("  b\n", ""));
}

#[test]
fn blank_lines_in_new_text_stay_empty() {
    let (_, replacement) = unique("\tx\n\tz\n", "x", "x\n   \ny");
    assert_eq!(replacement, "\tx\n\n\ty");
}
