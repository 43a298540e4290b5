use super::*;

fn twenty_lines() -> String {
    (1..=20).map(|n| format!("line {n}\n")).collect()
}

#[test]
fn display_diff_matches_the_reference_example() {
    let old = twenty_lines();
    let new = old.replace("line 10\n", "LINE TEN\nextra\n");
    let diff = display_diff(&old, &new, 4);
    let expected = [
        "    ...",
        "  6 line 6",
        "  7 line 7",
        "  8 line 8",
        "  9 line 9",
        "-10 line 10",
        "+10 LINE TEN",
        "+11 extra",
        " 11 line 11",
        " 12 line 12",
        " 13 line 13",
        " 14 line 14",
        "    ...",
    ]
    .join("\n");
    assert_eq!(diff.diff, expected);
    assert_eq!(diff.first_changed_line, Some(10));
}

#[test]
fn display_diff_of_a_deleted_middle_line() {
    let diff = display_diff("a\nb\nc\n", "a\nc\n", 4);
    assert_eq!(diff.diff, " 1 a\n-2 b\n 3 c");
    assert_eq!(diff.first_changed_line, Some(2));
}

#[test]
fn display_diff_of_identical_texts_is_empty() {
    assert_eq!(
        display_diff("same\n", "same\n", 4),
        DisplayDiff {
            diff: String::new(),
            first_changed_line: None
        }
    );
}

#[test]
fn display_diff_shortens_long_unchanged_runs_between_changes() {
    let old = twenty_lines();
    let new = old
        .replace("line 2\n", "TWO\n")
        .replace("line 19\n", "NINETEEN\n");
    let diff = display_diff(&old, &new, 2);
    let expected = [
        "  1 line 1",
        "- 2 line 2",
        "+ 2 TWO",
        "  3 line 3",
        "  4 line 4",
        "    ...",
        " 17 line 17",
        " 18 line 18",
        "-19 line 19",
        "+19 NINETEEN",
        " 20 line 20",
    ]
    .join("\n");
    assert_eq!(diff.diff, expected);
    assert_eq!(diff.first_changed_line, Some(2));
}

#[test]
fn display_diff_shows_short_runs_between_changes_whole() {
    let diff = display_diff("a\nb\nc\nd\n", "A\nb\nc\nD\n", 1);
    assert_eq!(diff.diff, "-1 a\n+1 A\n 2 b\n 3 c\n-4 d\n+4 D");
}

#[test]
fn display_diff_of_an_added_last_line_without_newline() {
    let diff = display_diff("a\n", "a\nb", 4);
    assert_eq!(diff.diff, " 1 a\n+2 b");
    assert_eq!(diff.first_changed_line, Some(2));
}

#[test]
fn unified_patch_matches_the_reference_example() {
    let patch = unified_patch("f.txt", "a\nb", "a\nB", 4);
    assert_eq!(
        patch,
        "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+B\n\\ No newline at end of file\n"
    );
}

#[test]
fn unified_patch_uses_four_lines_of_context_and_separate_hunks() {
    let old = twenty_lines();
    let new = old
        .replace("line 2\n", "TWO\n")
        .replace("line 19\n", "NINETEEN\n");
    let patch = unified_patch("dir/f.txt", &old, &new, 4);
    let hunks: Vec<&str> = patch
        .lines()
        .filter(|line| line.starts_with("@@"))
        .collect();
    assert_eq!(hunks, vec!["@@ -1,6 +1,6 @@", "@@ -15,6 +15,6 @@"]);
    assert!(patch.starts_with("--- dir/f.txt\n+++ dir/f.txt\n"));
    assert!(patch.ends_with(" line 20\n"));
}

#[test]
fn unified_patch_of_a_new_and_an_emptied_file() {
    assert_eq!(
        unified_patch("f", "", "x\n", 4),
        "--- f\n+++ f\n@@ -0,0 +1,1 @@\n+x\n"
    );
    assert_eq!(
        unified_patch("f", "x\n", "", 4),
        "--- f\n+++ f\n@@ -1,1 +0,0 @@\n-x\n"
    );
}

#[test]
fn unified_patch_without_changes_has_only_headers() {
    assert_eq!(unified_patch("f", "a\n", "a\n", 4), "--- f\n+++ f\n");
}
