//! Benchmarks of pith-text: one-line edits of a 20 MiB file on each rung of the matching
//! ladder (against a plain copy of the same text), and truncation of 100 MiB.
//!
//! Run with `cargo bench -p pith-text`; the numbers are quoted in the crate docs.

use divan::{Bencher, black_box};
use pith_text::{
    Edit, LineHasher, MatchTier, TruncationLimits, apply_edits, truncate_head, truncate_tail,
};

fn main() {
    divan::main();
}

const MIB: usize = 1024 * 1024;

/// A Rust-like source file of about `size` bytes, four-space indented.
fn source(size: usize) -> String {
    let mut text = String::with_capacity(size + 128);
    let mut index = 0;
    while text.len() < size {
        text.push_str(&format!(
            "    let value_{index} = compute({index}, \"item\"); // note\n"
        ));
        index += 1;
    }
    text
}

/// The line of `text` in its middle, without its newline.
fn middle_line(text: &str) -> String {
    let middle = text.len() / 2;
    let start = text[..middle].rfind('\n').map_or(0, |newline| newline + 1);
    let end = text[start..]
        .find('\n')
        .map_or(text.len(), |newline| start + newline);
    text[start..end].to_owned()
}

fn bench_edit(bencher: Bencher<'_, '_>, text: &str, old_text: String, tier: MatchTier) {
    let edits = [Edit {
        new_text: "    changed();".to_owned(),
        old_text,
    }];
    assert_eq!(
        apply_edits(text, &edits).map(|outcome| outcome.matches[0].tier),
        Ok(tier)
    );
    bencher.bench(|| apply_edits(black_box(text), black_box(&edits)));
}

/// The baseline: copying the text once, as reading it into memory does. The allocator
/// hands the same, already mapped memory back on every iteration.
#[divan::bench(sample_count = 20)]
fn copy_20_mib(bencher: Bencher<'_, '_>) {
    let text = source(20 * MIB);
    bencher.bench(|| black_box(&text).to_owned());
}

/// Three live copies, which is what an `EditOutcome` holds (old, new and file text): fresh
/// memory each time, so this includes the page faults an edit pays too.
#[divan::bench(sample_count = 20)]
fn copy_20_mib_three_times(bencher: Bencher<'_, '_>) {
    let text = source(20 * MIB);
    bencher.bench(|| {
        let text = black_box(&text);
        (text.to_owned(), text.to_owned(), text.to_owned())
    });
}

#[divan::bench(sample_count = 20)]
fn exact_edit_20_mib(bencher: Bencher<'_, '_>) {
    let text = source(20 * MIB);
    let old_text = middle_line(&text);
    bench_edit(bencher, &text, old_text, MatchTier::Exact);
}

/// The file has curly quotes where the model wrote straight ones.
#[divan::bench(args = [5, 10, 20], sample_count = 10)]
fn normalized_edit_mib(bencher: Bencher<'_, '_>, mib: usize) {
    let text = source(mib * MIB);
    let old_text = middle_line(&text);
    let curly = old_text.replace("\"item\"", "\u{201c}item\u{201d}");
    let text = text.replacen(&old_text, &curly, 1);
    bench_edit(bencher, &text, old_text, MatchTier::Normalized);
}

/// The model indented with a tab where the file has four spaces.
#[divan::bench(args = [5, 10, 20], sample_count = 10)]
fn whitespace_edit_mib(bencher: Bencher<'_, '_>, mib: usize) {
    let text = source(mib * MIB);
    let old_text = middle_line(&text).replacen("    ", "\t", 1);
    bench_edit(bencher, &text, old_text, MatchTier::Whitespace);
}

#[divan::bench(sample_count = 20)]
fn truncate_head_100_mib(bencher: Bencher<'_, '_>) {
    let text = source(100 * MIB);
    bencher.bench(|| truncate_head(black_box(&text), TruncationLimits::default()));
}

#[divan::bench(sample_count = 20)]
fn truncate_tail_100_mib(bencher: Bencher<'_, '_>) {
    let text = source(100 * MIB);
    bencher.bench(|| truncate_tail(black_box(&text), TruncationLimits::default()));
}

/// The display diff and the unified patch of a one-line edit of a 20 MiB file.
#[divan::bench(sample_count = 10)]
fn diffs_of_one_line_edit_20_mib(bencher: Bencher<'_, '_>) {
    let old = source(20 * MIB);
    let line = middle_line(&old);
    let new = old.replacen(&line, "    changed();", 1);
    bencher.bench(|| {
        let display = pith_text::display_diff(black_box(&old), black_box(&new), 4);
        let patch = pith_text::unified_patch("f.rs", black_box(&old), black_box(&new), 4);
        (display, patch)
    });
}

/// The line hashes of a 10 KB source file, what a read of such a file computes for the
/// session (one hash per line, ~180 lines).
#[divan::bench(sample_count = 200)]
fn line_hashes_10_kb(bencher: Bencher<'_, '_>) {
    let text = source(10 * 1024);
    bencher.bench(|| LineHasher::of(black_box(&text)));
}
