//! Unit tests of grep's row handling.

use super::*;

fn row(line_number: u64, is_match: bool) -> Row {
    Row {
        line_number,
        text: String::new(),
        is_match,
    }
}

#[test]
fn keeping_the_first_matches_keeps_only_the_last_ones_after_context() {
    // Matches at 3, 6 and 8 with context 2: 1 2 [3] 4 5 [6] 7 [8] 9 10.
    let mut rows: Vec<Row> = (1..=10).map(|n| row(n, matches!(n, 3 | 6 | 8))).collect();
    keep_first_matches(&mut rows, 1, 2);
    let lines: Vec<u64> = rows.iter().map(|r| r.line_number).collect();
    assert_eq!(lines, [1, 2, 3, 4, 5]);

    let mut rows: Vec<Row> = (1..=10).map(|n| row(n, matches!(n, 3 | 6 | 8))).collect();
    keep_first_matches(&mut rows, 2, 2);
    let lines: Vec<u64> = rows.iter().map(|r| r.line_number).collect();
    assert_eq!(lines, [1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn lines_lose_their_terminator_and_carriage_returns() {
    assert_eq!(line_text(b"a\r\n"), "a");
    assert_eq!(line_text(b"a\rb\n"), "ab");
    assert_eq!(line_text(b"\xffx"), "\u{fffd}x");
}

#[test]
fn long_lines_are_clipped_without_splitting_a_character() {
    let max = GrepLine::MAX_TEXT_BYTES;
    let mut line = vec![b'a'; max - 1];
    line.extend_from_slice("é and more\n".as_bytes());
    let text = line_text(&line);
    assert_eq!(text.len(), max - 1);
    assert!(text.bytes().all(|byte| byte == b'a'));
    assert_eq!(line_text(&vec![b'b'; max + 10]).len(), max);
    assert_eq!(line_text(&vec![b'c'; max]).len(), max);
}
