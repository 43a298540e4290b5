//! Fuzzes truncation: never panics, never exceeds its limits, keeps a prefix or suffix.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pith_text::{TruncationLimits, clip_line, truncate_head, truncate_tail};

fuzz_target!(|data: &[u8]| {
    let Some((&[lines, bytes], rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let limits = TruncationLimits {
        max_lines: usize::from(lines % 32),
        max_bytes: usize::from(bytes),
    };
    let head = truncate_head(text, limits);
    let tail = truncate_tail(text, limits);
    for result in [&head, &tail] {
        if result.truncated {
            assert!(result.output_bytes <= limits.max_bytes);
            assert!(result.output_lines <= limits.max_lines);
        } else {
            assert_eq!(result.content, text);
        }
        assert_eq!(result.output_bytes, result.content.len());
    }
    assert!(text.starts_with(&head.content));
    assert!(
        text.ends_with(&tail.content)
            || text
                .strip_suffix('\n')
                .is_some_and(|t| t.ends_with(&tail.content))
    );
    let _ = clip_line(text, usize::from(lines));
});
