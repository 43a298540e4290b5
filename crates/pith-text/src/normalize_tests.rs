use super::*;

fn normalized(text: &str) -> String {
    normalize_for_fuzzy(text).as_str().to_owned()
}

#[test]
fn follows_the_reference_example() {
    assert_eq!(
        normalized("Ａ\u{a0}\u{2013}\u{2019}\u{201c}\u{3000}x \t"),
        "A -'\" x"
    );
}

#[test]
fn applies_nfkc_to_full_width_forms_and_ligatures() {
    assert_eq!(normalized("ｆｕｎｃ（ａ，ｂ）"), "func(a,b)");
    assert_eq!(normalized("\u{fb01}le"), "file");
    assert_eq!(normalized("e\u{301}"), "\u{e9}");
}

#[test]
fn folds_quotes_dashes_and_special_spaces() {
    assert_eq!(normalized("\u{2018}a\u{2019} \u{201a}\u{201b}"), "'a' ''");
    assert_eq!(normalized("\u{201c}\u{201d}\u{201e}\u{201f}"), "\"\"\"\"");
    assert_eq!(
        normalized("\u{2010}\u{2011}\u{2012}\u{2013}\u{2014}\u{2015}\u{2212}"),
        "-------"
    );
    assert_eq!(
        normalized("a\u{a0}b\u{2002}c\u{202f}d\u{205f}e\u{3000}f"),
        "a b c d e f"
    );
}

#[test]
fn strips_trailing_whitespace_per_line_but_keeps_indentation() {
    assert_eq!(
        normalized("  a  \n\tb\t\r\n c\u{feff}\u{a0}"),
        "  a\n\tb\n c"
    );
}

#[test]
fn keeps_u0085_at_line_end_like_javascript() {
    assert_eq!(normalized("a\u{85}"), "a\u{85}");
}

#[test]
fn never_adds_or_removes_newlines() {
    let text = "\u{2028}\n \n\u{3000}\n\n\u{fe0f}\n";
    assert_eq!(
        normalized(text).matches('\n').count(),
        text.matches('\n').count()
    );
}

#[test]
fn ascii_text_maps_to_itself() {
    let result = normalize_for_fuzzy("hello\nworld\n");
    assert_eq!(result.as_str(), "hello\nworld\n");
    assert_eq!(result.original_range(2..8), 2..8);
}

#[test]
fn maps_a_match_after_curly_quotes_back_to_the_original_bytes() {
    let original = "say(\u{201c}hi\u{201d}) // ok";
    let result = normalize_for_fuzzy(original);
    assert_eq!(result.as_str(), "say(\"hi\") // ok");
    let found = result.as_str().find("\"hi\"").unwrap();
    let range = result.original_range(found..found + 4);
    assert_eq!(&original[range], "\u{201c}hi\u{201d}");
}

#[test]
fn a_range_ending_at_stripped_whitespace_leaves_it_out() {
    let original = "ab  \ncd";
    let result = normalize_for_fuzzy(original);
    assert_eq!(result.as_str(), "ab\ncd");
    assert_eq!(result.original_range(0..2), 0..2);
    assert_eq!(result.original_range(2..4), 4..6);
    assert_eq!(result.original_range(0..4), 0..6);
}

#[test]
fn a_position_inside_a_changed_character_widens_to_it() {
    let original = "x\u{fb01}y";
    let result = normalize_for_fuzzy(original);
    assert_eq!(result.as_str(), "xfiy");
    // "i" alone comes from the middle of the ligature: the whole ligature is the answer.
    assert_eq!(result.original_range(2..3), 1..4);
}

#[test]
fn cjk_text_maps_character_by_character() {
    let original = "你好，世界";
    let result = normalize_for_fuzzy(original);
    assert_eq!(result.as_str(), "你好,世界");
    let found = result.as_str().find("世界").unwrap();
    assert_eq!(&original[result.original_range(found..found + 6)], "世界");
}

#[test]
fn composes_across_what_would_otherwise_be_separate_characters() {
    // Compatibility jamo decompose to conjoining jamo that compose into one syllable.
    assert_eq!(normalized("\u{3131}\u{314f}"), "\u{ac00}");
    assert_eq!(normalized("\u{1100}\u{1161}\u{11a8}"), "\u{ac01}");
}

#[test]
fn out_of_range_positions_are_clamped() {
    let result = normalize_for_fuzzy("abc");
    assert_eq!(result.original_range(2..99), 2..3);
    assert_eq!(result.original_range(Range { start: 5, end: 1 }), 3..3);
    assert_eq!(normalize_for_fuzzy("").original_range(0..3), 0..0);
}
