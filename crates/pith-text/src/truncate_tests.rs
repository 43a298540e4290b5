use super::*;

fn limits(max_lines: usize, max_bytes: usize) -> TruncationLimits {
    TruncationLimits {
        max_lines,
        max_bytes,
    }
}

#[test]
fn counts_lines_without_an_extra_line_for_the_trailing_newline() {
    assert_eq!(count_lines(""), 0);
    assert_eq!(count_lines("a\nb\n"), 2);
    assert_eq!(count_lines("a\nb"), 2);
    assert_eq!(count_lines("\n"), 1);
    assert_eq!(count_lines("a\r\nb"), 2);
}

#[test]
fn default_limits_are_2000_lines_and_50_kib() {
    assert_eq!(TruncationLimits::default(), limits(2000, 51_200));
}

#[test]
fn text_within_limits_is_returned_unchanged() {
    let result = truncate_head("a\nb\n", limits(2, 4));
    assert_eq!(result.content, "a\nb\n");
    assert!(!result.truncated);
    assert_eq!(result.truncated_by, None);
    assert_eq!((result.output_lines, result.output_bytes), (2, 4));
    assert_eq!(truncate_tail("a\nb\n", limits(2, 4)), result);
}

#[test]
fn head_keeps_whole_lines_up_to_the_line_limit() {
    let result = truncate_head("1\n2\n3\n4\n", limits(2, 100));
    assert_eq!(result.content, "1\n2");
    assert_eq!(result.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!(
        (result.total_lines, result.output_lines, result.output_bytes),
        (4, 2, 3)
    );
}

#[test]
fn head_stops_at_the_first_line_that_does_not_fit_the_bytes() {
    let result = truncate_head("aaa\nbbb\nccc\n", limits(100, 9));
    assert_eq!(result.content, "aaa\nbbb");
    assert_eq!(result.truncated_by, Some(TruncatedBy::Bytes));
    assert!(!result.first_line_exceeds_limit);
}

#[test]
fn head_reports_a_first_line_longer_than_the_byte_limit() {
    let result = truncate_head("abcdef\nx\n", limits(100, 3));
    assert_eq!(result.content, "");
    assert!(result.truncated && result.first_line_exceeds_limit);
    assert_eq!(result.truncated_by, Some(TruncatedBy::Bytes));
    assert_eq!((result.output_lines, result.output_bytes), (0, 0));
}

#[test]
fn head_blames_bytes_when_only_the_trailing_newline_does_not_fit() {
    let result = truncate_head("ab\n", limits(10, 2));
    assert_eq!(result.content, "ab");
    assert!(result.truncated);
    assert_eq!(result.truncated_by, Some(TruncatedBy::Bytes));
}

#[test]
fn head_never_splits_an_accented_character() {
    let text = "é\né\né\n";
    let result = truncate_head(text, limits(100, 4));
    assert_eq!(result.content, "é");
    assert_eq!(result.output_bytes, 2);
}

#[test]
fn tail_keeps_the_last_lines() {
    let result = truncate_tail("1\n2\n3\n4\n", limits(2, 100));
    assert_eq!(result.content, "3\n4");
    assert_eq!(result.total_lines, 4);
    assert_eq!(result.truncated_by, Some(TruncatedBy::Lines));
    assert!(!result.last_line_partial);
}

#[test]
fn tail_keeps_the_end_of_a_last_line_that_does_not_fit() {
    let result = truncate_tail(&format!("x\n{}", "y".repeat(10)), limits(100, 5));
    assert_eq!(result.content, "yyyyy");
    assert!(result.last_line_partial);
    assert_eq!(result.truncated_by, Some(TruncatedBy::Bytes));
    assert_eq!(result.output_lines, 1);
}

#[test]
fn tail_of_a_300000_byte_single_line_keeps_its_last_bytes() {
    let text = format!("{}\n", "X".repeat(300_000));
    let result = truncate_tail(&text, limits(2000, 1024));
    assert_eq!(result.content, "X".repeat(1024));
    assert_eq!((result.output_lines, result.output_bytes), (1, 1024));
    assert!(result.last_line_partial);
    assert_eq!(result.total_bytes, 300_001);
}

#[test]
fn head_of_a_300000_byte_single_line_keeps_nothing() {
    let text = "X".repeat(300_000);
    let result = truncate_head(&text, TruncationLimits::default());
    assert!(result.first_line_exceeds_limit);
    assert_eq!(result.content, "");
    assert_eq!(result.total_lines, 1);
}

#[test]
fn tail_partial_line_cuts_forward_to_an_emoji_boundary() {
    // Four 4-byte emoji; 6 bytes allow only one whole emoji from the end.
    let result = truncate_tail("😀😁😂🤣", limits(10, 6));
    assert_eq!(result.content, "🤣");
    assert!(result.last_line_partial);
    assert_eq!(result.output_bytes, 4);
}

#[test]
fn tail_partial_line_cuts_forward_to_an_e_acute_boundary() {
    let result = truncate_tail("ééé", limits(10, 3));
    assert_eq!(result.content, "é");
}

#[test]
fn tail_with_a_zero_byte_limit_keeps_no_line() {
    let result = truncate_tail("abc", limits(10, 0));
    assert_eq!(result.content, "");
    assert_eq!(result.output_lines, 0);
    assert!(result.last_line_partial);
}

#[test]
fn zero_line_limit_keeps_nothing() {
    assert_eq!(truncate_head("a\nb", limits(0, 100)).content, "");
    assert_eq!(truncate_tail("a\nb", limits(0, 100)).content, "");
    assert_eq!(
        truncate_tail("a\nb", limits(0, 100)).truncated_by,
        Some(TruncatedBy::Lines)
    );
}

#[test]
fn truncation_serialises_to_camel_case_without_content() {
    let result = truncate_head("1\n2\n3\n", limits(1, 100));
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "truncated": true, "truncatedBy": "lines", "totalLines": 3, "totalBytes": 6,
            "outputLines": 1, "outputBytes": 1, "lastLinePartial": false,
            "firstLineExceedsLimit": false, "maxLines": 1, "maxBytes": 100
        })
    );
}

#[test]
fn formats_sizes_like_the_reference_table() {
    let table = [
        (0, "0B"),
        (1023, "1023B"),
        (1024, "1.0KB"),
        (51_200, "50.0KB"),
        (1_048_575, "1024.0KB"),
        (1_048_576, "1.0MB"),
        (1280, "1.3KB"),
        (u64::MAX, "17592186044416.0MB"),
    ];
    for (bytes, expected) in table {
        assert_eq!(format_size(bytes), expected, "{bytes}");
    }
}

#[test]
fn clips_long_lines_on_character_boundaries() {
    assert_eq!(clip_line("abc", 3), (Cow::Borrowed("abc"), false));
    assert_eq!(clip_line("abcd", 3).0, "abc... [truncated]");
    assert_eq!(
        clip_line("😀😁😂", 2),
        (Cow::Owned("😀😁... [truncated]".to_owned()), true)
    );
    assert_eq!(clip_line("ééé", 0).0, "... [truncated]");
}
