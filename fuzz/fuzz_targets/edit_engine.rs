//! Fuzzes the edit engine: it must never panic, and an accepted edit must keep its promises.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pith_text::{Edit, apply_edits, display_diff, unified_patch};

// Input layout: fields separated by NUL bytes; the first is the file, then pairs of
// old/new texts.
fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut fields = text.split('\0');
    let original = fields.next().unwrap_or_default();
    let fields: Vec<&str> = fields.collect();
    let edits: Vec<Edit> = fields
        .chunks(2)
        .map(|pair| Edit {
            old_text: pair.first().copied().unwrap_or_default().to_owned(),
            new_text: pair.get(1).copied().unwrap_or_default().to_owned(),
        })
        .collect();
    match apply_edits(original, &edits) {
        Ok(outcome) => {
            let lf = |text: &str| text.replace("\r\n", "\n").replace('\r', "\n");
            let body = outcome
                .file_text
                .strip_prefix('\u{feff}')
                .unwrap_or(&outcome.file_text);
            if original.starts_with('\u{feff}') {
                assert!(outcome.file_text.starts_with('\u{feff}'));
            }
            let written = if original.starts_with('\u{feff}') {
                body
            } else {
                &outcome.file_text
            };
            assert_eq!(lf(written), outcome.new_content);
            assert_eq!(outcome.matches.len(), edits.len());
            let _ = display_diff(&outcome.old_content, &outcome.new_content, 4);
            let patch = unified_patch("f", &outcome.old_content, &outcome.new_content, 4);
            assert!(patch.ends_with('\n'));
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
});
