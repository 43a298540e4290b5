use super::*;

fn window(offset: u64, limit: Option<u64>, max_lines: usize, max_bytes: usize) -> Window {
    Window {
        start: offset.saturating_sub(1),
        limit,
        limits: TruncationLimits {
            max_lines,
            max_bytes,
        },
    }
}

/// Scans `bytes` fed in chunks of every size from 1 to 7 and checks they agree.
fn scan(bytes: &[u8], window: Window) -> Scan {
    let mut whole = Scanner::new(window);
    whole.feed(bytes);
    let whole = whole.finish();
    for size in 1..8 {
        let mut chunked = Scanner::new(window);
        for chunk in bytes.chunks(size) {
            chunked.feed(chunk);
        }
        let chunked = chunked.finish();
        assert_eq!(
            format!("{chunked:?}"),
            format!("{whole:?}"),
            "chunk size {size}"
        );
    }
    whole
}

fn text(bytes: &[u8], offset: u64, limit: Option<u64>) -> String {
    let window = window(offset, limit, 2000, 51_200);
    render(
        &scan(bytes, window),
        &window,
        &Request { raw_path: "f.txt" },
    )
    .0
}

#[test]
fn a_trailing_newline_is_not_an_extra_line() {
    let window = window(1, None, 2000, 51_200);
    assert_eq!(scan(b"a\nb\n", window).total_lines, 2);
    assert_eq!(scan(b"a\nb", window).total_lines, 2);
    assert_eq!(scan(b"\n", window).total_lines, 1);
    assert_eq!(scan(b"", window).total_lines, 0);
    let past = window_at(3);
    let scanned = scan(b"a\nb\n", past);
    assert_eq!(
        offset_error(&scanned, &past, Some(3)).unwrap(),
        "Offset 3 is beyond end of file (2 lines total)"
    );
    assert!(offset_error(&scan(b"a\nb\n", window_at(2)), &window_at(2), Some(2)).is_none());
    assert!(offset_error(&scan(b"", window_at(1)), &window_at(1), Some(1)).is_none());
}

fn window_at(offset: u64) -> Window {
    window(offset, None, 2000, 51_200)
}

#[test]
fn shows_the_whole_file_with_its_trailing_newline() {
    assert_eq!(
        text(b"alpha\nbeta\ngamma\n", 0, None),
        "alpha\nbeta\ngamma\n"
    );
    assert_eq!(text(b"alpha\nbeta", 0, None), "alpha\nbeta");
    assert_eq!(text(b"", 0, None), "(empty file)");
}

#[test]
fn offset_and_limit_say_how_many_lines_remain() {
    let ten: String = (1..=10).map(|n| format!("line {n}\n")).collect();
    assert_eq!(
        text(ten.as_bytes(), 3, Some(4)),
        "line 3\nline 4\nline 5\nline 6\n\n[4 more lines in file. Use offset=7 to continue.]"
    );
    assert_eq!(text(ten.as_bytes(), 9, Some(4)), "line 9\nline 10\n");
    assert_eq!(
        text(ten.as_bytes(), 1, Some(0)),
        "\n\n[10 more lines in file. Use offset=1 to continue.]"
    );
}

#[test]
fn truncates_by_lines_with_the_exact_notice() {
    let many: String = (1..=5000).map(|n| format!("line {n}\n")).collect();
    let window = window_at(1);
    let scanned = scan(many.as_bytes(), window);
    let (text, details) = render(
        &scanned,
        &window,
        &Request {
            raw_path: "big.txt",
        },
    );
    assert!(text.starts_with("line 1\nline 2\n"));
    assert!(
        text.ends_with("line 2000\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]")
    );
    let truncation = &details.unwrap()["truncation"];
    assert_eq!(truncation["truncatedBy"], "lines");
    assert_eq!(truncation["totalLines"], 5000);
    assert_eq!(truncation["outputLines"], 2000);
    assert_eq!(truncation["maxBytes"], 51_200);
}

#[test]
fn a_file_of_exactly_the_line_limit_is_not_truncated() {
    let exact: String = (1..=2000).map(|n| format!("{n}\n")).collect();
    let window = window_at(1);
    let (text, details) = render(
        &scan(exact.as_bytes(), window),
        &window,
        &Request { raw_path: "f" },
    );
    assert!(details.is_none());
    assert!(text.ends_with("2000\n"));
}

#[test]
fn truncates_by_bytes_with_the_limit_in_the_notice() {
    let window = window(2, None, 100, 10);
    let scanned = scan(b"skip\n1234\n5678\nabcdefgh\n", window);
    let (text, details) = render(&scanned, &window, &Request { raw_path: "f" });
    assert_eq!(
        text,
        "1234\n5678\n\n[Showing lines 2-3 of 4 (10B limit). Use offset=4 to continue.]"
    );
    let truncation = &details.unwrap()["truncation"];
    assert_eq!(truncation["truncatedBy"], "bytes");
    assert_eq!(truncation["outputBytes"], 9);
    assert_eq!(truncation["totalLines"], 3);
    assert_eq!(truncation["totalBytes"], 19);
}

#[test]
fn a_first_line_over_the_limit_gets_a_sed_hint() {
    let window = window(2, None, 100, 10);
    let scanned = scan(b"short\nthis line is too long\nnext\n", window);
    let (text, details) = render(
        &scanned,
        &window,
        &Request {
            raw_path: "my file.txt",
        },
    );
    assert_eq!(
        text,
        "[Line 2 is 21B, exceeds 10B limit. Use bash: sed -n '2p' 'my file.txt' | head -c 10]"
    );
    assert_eq!(
        details.unwrap()["truncation"]["firstLineExceedsLimit"],
        true
    );
}

#[test]
fn buffers_at_most_the_byte_limit_of_a_huge_line() {
    let window = window(1, None, 2000, 16);
    let mut scanner = Scanner::new(window);
    let chunk = vec![b'x'; 1 << 16];
    for _ in 0..64 {
        scanner.feed(&chunk);
        assert!(scanner.buf.len() <= 17);
    }
    scanner.feed(b"\nnext\n");
    let scanned = scanner.finish();
    assert_eq!(scanned.first_line_bytes, Some(64 << 16));
    assert_eq!(scanned.total_lines, 2);
}

#[test]
fn invalid_utf8_is_shown_lossily_with_a_notice() {
    let shown = text(b"caf\xe9\nok\n", 0, None);
    assert!(shown.starts_with("caf\u{FFFD}\nok\n"), "{shown}");
    assert!(shown.contains("not valid UTF-8"), "{shown}");
}

#[test]
fn crlf_line_endings_are_kept() {
    assert_eq!(text(b"a\r\nb\r\n", 0, None), "a\r\nb\r\n");
}

#[test]
fn quotes_only_paths_that_need_it() {
    assert_eq!(shell_quote("src/main.rs"), "src/main.rs");
    assert_eq!(shell_quote("it's here"), r"'it'\''s here'");
}

/// Feeds `bytes` in chunks of `chunk` until the scanner is satisfied; whether it stopped early.
fn scan_lazily(bytes: &[u8], window: Window, ahead: u64, chunk: usize) -> (Scan, u64) {
    let mut scanner = Scanner::new(window).count_ahead(ahead);
    let mut read = 0;
    for piece in bytes.chunks(chunk) {
        scanner.feed(piece);
        read += piece.len() as u64;
        if scanner.satisfied() {
            return (scanner.finish_early(), read);
        }
    }
    (scanner.finish(), read)
}

#[test]
fn a_large_file_is_read_only_a_little_past_the_page_and_counted_as_at_least() {
    let bytes: Vec<u8> = (0..100_000)
        .flat_map(|line| format!("line {line}\n").into_bytes())
        .collect();
    let first = window(1, None, 2000, 51_200);
    let page = window(5001, Some(10), 2000, 51_200);
    let window = first;
    let (scanned, read) = scan_lazily(&bytes, window, 1000, 512);
    assert!(!scanned.complete);
    assert!(read < 30_000, "read {read} of {} bytes", bytes.len());
    assert!(scanned.total_lines > 2000 && scanned.total_lines < 100_000);
    let (shown, _) = render(&scanned, &window, &Request { raw_path: "f.txt" });
    assert!(
        shown.ends_with(&format!(
            "line 1999\n\n[Showing lines 1-2000 of at least {}. Use offset=2001 to continue.]",
            scanned.total_lines
        )),
        "{}",
        &shown[shown.len() - 120..]
    );
    // A page with a limit inside the file: more lines follow, count unknown.
    let (scanned, _) = scan_lazily(&bytes, page, 1000, 512);
    let (shown, _) = render(&scanned, &page, &Request { raw_path: "f.txt" });
    assert!(
        shown.ends_with(&format!(
            "line 5009\n\n[At least {} more lines in file. Use offset=5011 to continue.]",
            scanned.total_lines - 5010
        )),
        "{shown}"
    );
}

#[test]
fn a_count_ahead_that_reaches_the_end_gives_the_exact_count() {
    let bytes: Vec<u8> = (0..3000)
        .flat_map(|line| format!("line {line}\n").into_bytes())
        .collect();
    let window = window(1, None, 2000, 51_200);
    let (scanned, read) = scan_lazily(&bytes, window, 1 << 20, 512);
    assert!(scanned.complete);
    assert_eq!(read, bytes.len() as u64);
    assert_eq!(scanned.total_lines, 3000);
    let (shown, _) = render(&scanned, &window, &Request { raw_path: "f.txt" });
    assert!(
        shown.ends_with("[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]"),
        "{shown}"
    );
}

/// Lines of varied lengths, about `size` bytes.
fn varied_lines(size: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(size + 200);
    let mut line = 0usize;
    while bytes.len() < size {
        let width = (line * 37) % 150;
        bytes.extend_from_slice(format!("{line}:{}\n", "x".repeat(width)).as_bytes());
        line += 1;
    }
    bytes
}

#[test]
fn skipping_to_a_deep_line_finds_the_line_that_counting_one_by_one_does() {
    let bytes = varied_lines(300_000);
    for start in [1u64, 2, 999, 1000, 2345, 3999] {
        let window = window(start, Some(3), 2000, 51_200);
        let scanned = scan(&bytes, window);
        let expected: Vec<&str> = std::str::from_utf8(&bytes)
            .unwrap()
            .lines()
            .skip(start as usize - 1)
            .take(3)
            .collect();
        let (shown, _) = render(&scanned, &window, &Request { raw_path: "f.txt" });
        assert!(shown.starts_with(&expected.join("\n")), "{start}: {shown}");
    }
}

#[test]
fn a_scan_resumed_at_a_checkpoint_gives_what_a_scan_from_the_start_gives() {
    let bytes = varied_lines(5 << 20);
    let mut noting = Scanner::new(window(1, Some(1), 2000, 51_200)).noting_checkpoints();
    for piece in bytes.chunks(100_000) {
        noting.feed(piece);
    }
    let index = noting.checkpoints().unwrap().clone();
    assert!(index.len() >= 3, "{} checkpoints", index.len());
    let total = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    for (offset, limit) in [
        (total / 2, None),
        (total - 10, Some(5)),
        (total * 3 / 4, Some(2000)),
    ] {
        let window = window(offset, limit, 2000, 51_200);
        let at = index.before(window.start).unwrap();
        assert!(at.pos > 0);
        let line_start = &bytes[..at.pos as usize];
        assert_eq!(line_start.last(), Some(&b'\n'));
        assert_eq!(
            line_start.iter().filter(|&&b| b == b'\n').count() as u64,
            at.line
        );
        for ahead in [1000, 1 << 30] {
            let (cold, _) = scan_lazily(&bytes, window, ahead, 65_536);
            let mut resumed = Scanner::resume(window, at).count_ahead(ahead);
            let mut stopped = false;
            for piece in bytes[at.pos as usize..].chunks(65_536) {
                resumed.feed(piece);
                if resumed.satisfied() {
                    stopped = true;
                    break;
                }
            }
            let warm = if stopped {
                resumed.finish_early()
            } else {
                resumed.finish()
            };
            assert_eq!(format!("{warm:?}"), format!("{cold:?}"), "offset {offset}");
        }
    }
}
