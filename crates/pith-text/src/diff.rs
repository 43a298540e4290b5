//! Line diffs for people (numbered, with context) and for programs (unified patches).

use std::fmt::Write as _;
use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use crate::middle::Middle;
use crate::search::count_newlines;

/// Diffs of huge, very different texts stop refining after this long (the result is still a
/// correct diff, just not a minimal one).
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// A numbered line diff for display, and where the first change is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplayDiff {
    /// The diff, lines joined by `\n`, without a trailing newline.
    pub diff: String,
    /// 1-based line of the new text where the first change is; `None` if nothing changed.
    pub first_changed_line: Option<usize>,
}

fn line_diff<'a>(old: &'a str, new: &'a str) -> TextDiff<'a, 'a, str> {
    TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new)
}

/// A run of consecutive lines with the same role in the diff.
struct Run<'a> {
    tag: ChangeTag,
    lines: Vec<&'a str>,
}

/// Groups the line diff into runs; in each block of changes, removals come before additions.
fn runs<'a>(diff: &'a TextDiff<'a, 'a, str>) -> Vec<Run<'a>> {
    let mut runs: Vec<Run<'a>> = Vec::new();
    let mut removed = Vec::new();
    let mut added = Vec::new();
    let flush = |runs: &mut Vec<Run<'a>>, removed: &mut Vec<&'a str>, added: &mut Vec<&'a str>| {
        for (tag, lines) in [(ChangeTag::Delete, removed), (ChangeTag::Insert, added)] {
            if !lines.is_empty() {
                runs.push(Run {
                    tag,
                    lines: std::mem::take(lines),
                });
            }
        }
    };
    for change in diff.iter_all_changes() {
        let line = change.value();
        let line = line.strip_suffix('\n').unwrap_or(line);
        match change.tag() {
            ChangeTag::Delete => removed.push(line),
            ChangeTag::Insert => added.push(line),
            ChangeTag::Equal => {
                flush(&mut runs, &mut removed, &mut added);
                match runs.last_mut() {
                    Some(last) if last.tag == ChangeTag::Equal => last.lines.push(line),
                    _ => runs.push(Run {
                        tag: ChangeTag::Equal,
                        lines: vec![line],
                    }),
                }
            }
        }
    }
    flush(&mut runs, &mut removed, &mut added);
    runs
}

/// The display diff of the reference §6.6: changed lines as `-` / `+`, the old (or new) line
/// number right-aligned, and up to `context` unchanged lines around each change, with a
/// `...` line where unchanged lines are skipped.
#[must_use]
pub fn display_diff(old: &str, new: &str, context: usize) -> DisplayDiff {
    let largest = count_newlines(old.as_bytes()).max(count_newlines(new.as_bytes())) + 1;
    display_diff_of(&Middle::new(old, new, context + 1), largest, context)
}

/// [`display_diff`] of texts already narrowed to `middle` (with `context + 1` lines kept),
/// whose longer text has `largest` lines counting a last one without a newline.
pub(crate) fn display_diff_of(middle: &Middle<'_>, largest: usize, context: usize) -> DisplayDiff {
    let width = largest.to_string().len();
    let diff = line_diff(middle.old, middle.new);
    let runs = runs(&diff);
    let skip = format!(" {} ...", " ".repeat(width));
    let mut out: Vec<String> = Vec::new();
    let (mut old_line, mut new_line) = (1 + middle.skipped_lines, 1 + middle.skipped_lines);
    let mut first_changed_line = None;
    let mut last_was_change = false;
    for (index, run) in runs.iter().enumerate() {
        if run.tag != ChangeTag::Equal {
            first_changed_line.get_or_insert(new_line);
            for line in &run.lines {
                let (sign, number) = if run.tag == ChangeTag::Insert {
                    new_line += 1;
                    ('+', new_line - 1)
                } else {
                    old_line += 1;
                    ('-', old_line - 1)
                };
                out.push(format!("{sign}{number:>width$} {line}"));
            }
            last_was_change = true;
            continue;
        }
        let next_is_change = runs
            .get(index + 1)
            .is_some_and(|next| next.tag != ChangeTag::Equal);
        let count = run.lines.len();
        let shown = |from: usize, to: usize, out: &mut Vec<String>| {
            for (offset, line) in run
                .lines
                .get(from..to)
                .unwrap_or_default()
                .iter()
                .enumerate()
            {
                out.push(format!(" {:>width$} {line}", old_line + from + offset));
            }
        };
        match (last_was_change, next_is_change) {
            (true, true) if count <= 2 * context => shown(0, count, &mut out),
            (true, true) => {
                shown(0, context, &mut out);
                out.push(skip.clone());
                shown(count - context, count, &mut out);
            }
            (true, false) => {
                shown(0, context.min(count), &mut out);
                if count > context {
                    out.push(skip.clone());
                }
            }
            (false, true) => {
                if count > context {
                    out.push(skip.clone());
                }
                shown(count.saturating_sub(context), count, &mut out);
            }
            (false, false) => {}
        }
        old_line += count;
        new_line += count;
        last_was_change = false;
    }
    DisplayDiff {
        diff: out.join("\n"),
        first_changed_line,
    }
}

/// A unified patch (reference §6.7) from `old` to `new`, with `context` lines of context:
/// `--- path` / `+++ path` headers, `@@ -a,b +c,d @@` hunks and `\ No newline at end of file`
/// markers. It always ends with a newline, and `patch` or `git apply` apply it to `old`.
#[must_use]
pub fn unified_patch(path: &str, old: &str, new: &str, context: usize) -> String {
    unified_patch_of(path, &Middle::new(old, new, context + 1), context)
}

/// [`unified_patch`] of texts already narrowed to `middle` (with `context + 1` lines kept).
pub(crate) fn unified_patch_of(path: &str, middle: &Middle<'_>, context: usize) -> String {
    let diff = line_diff(middle.old, middle.new);
    let skipped = middle.skipped_lines;
    let mut out = format!("--- {path}\n+++ {path}\n");
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = skipped + first.old_range().start..skipped + last.old_range().end;
        let new_range = skipped + first.new_range().start..skipped + last.new_range().end;
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            hunk_range(old_range.start, old_range.len()),
            hunk_range(new_range.start, new_range.len())
        );
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                out.push(sign);
                out.push_str(change.value());
                if change.missing_newline() {
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
    }
    out
}

/// `start,len` of a hunk side, 1-based, where an empty side names the line before it.
fn hunk_range(start: usize, len: usize) -> String {
    let first = if len == 0 { start } else { start + 1 };
    format!("{first},{len}")
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
