//! Property tests of the whitespace rung on generated code: blocks of two to four
//! indentation levels, edited (lines changed, inserted, deleted, nested blocks added) and
//! sent the way models garble them (indentation flattened, dedented, in another unit, first
//! line stripped; trailing blanks dropped; whitespace-only boundary lines). Every accepted
//! edit must give exactly the intended file; anything else must be refused.

use pith_text::{Edit, MatchTier, apply_edits};
use proptest::prelude::*;

use crate::properties::check_accepting;

/// One line of a generated Python-like block.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    depth: usize,
    text: String,
    /// Ends with `:` and is followed by a deeper line.
    opener: bool,
    /// Trailing blanks the file has after `text`.
    trailing: &'static str,
    /// Still the line of the original file (not changed or inserted).
    original: bool,
}

impl Line {
    fn statement(depth: usize, id: usize) -> Self {
        Self {
            depth,
            text: format!("s{id} = {id}"),
            opener: false,
            trailing: "",
            original: true,
        }
    }

    fn opener(depth: usize, id: usize) -> Self {
        Self {
            depth,
            text: format!("if c{id}:"),
            opener: true,
            trailing: "",
            original: true,
        }
    }
}

/// How the edit changes the lines it covers.
#[derive(Clone, Copy, Debug)]
enum Change {
    Rewrite,
    InsertStatement,
    InsertBlock,
    Delete,
}

/// How the sender garbles the indentation of `oldText` and `newText`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sending {
    Flattened,
    Dedented,
    OtherUnit,
    FirstLineStripped,
}

#[derive(Clone, Debug)]
struct Case {
    unit: &'static str,
    block: Vec<Line>,
    from: f64,
    length: f64,
    changes: Vec<(Change, f64, f64)>,
    sending: Sending,
}

/// The lines of a block at depths 1 to 4, the body of `def f():`.
fn build_block(shape: &[(bool, usize)]) -> Vec<Line> {
    let mut block: Vec<Line> = Vec::new();
    for (id, &(opens, dedent)) in shape.iter().enumerate() {
        let depth = match block.last() {
            None => 1,
            Some(last) if last.opener => last.depth + 1,
            Some(last) => last.depth.saturating_sub(dedent).max(1),
        };
        block.push(if opens && depth < 4 {
            Line::opener(depth, id)
        } else {
            Line::statement(depth, id)
        });
    }
    if let Some(last) = block.last()
        && last.opener
    {
        let depth = last.depth + 1;
        block.push(Line::statement(depth, shape.len()));
    }
    block
}

fn case() -> impl Strategy<Value = Case> {
    let shape = prop::collection::vec((prop::bool::weighted(0.35), 0..3_usize), 3..14);
    let change = prop_oneof![
        4 => Just(Change::Rewrite),
        3 => Just(Change::InsertStatement),
        1 => Just(Change::InsertBlock),
        2 => Just(Change::Delete),
    ];
    let sending = prop_oneof![
        3 => Just(Sending::Flattened),
        1 => Just(Sending::Dedented),
        1 => Just(Sending::OtherUnit),
        1 => Just(Sending::FirstLineStripped),
    ];
    (
        prop_oneof![Just("    "), Just("  "), Just("\t")],
        shape,
        0.0..1.0_f64,
        0.0..1.0_f64,
        prop::collection::vec((change, 0.0..1.0_f64, 0.0..1.0_f64), 1..3),
        sending,
    )
        .prop_map(|(unit, shape, from, length, changes, sending)| Case {
            unit,
            block: build_block(&shape),
            from,
            length,
            changes,
            sending,
        })
}

/// Where a fraction falls in `0..count`.
fn pick(fraction: f64, count: usize) -> usize {
    ((count as f64 * fraction) as usize).min(count.saturating_sub(1))
}

/// The whole file: a header, the block, a line after it and a second function.
fn file_lines(block: &[Line]) -> Vec<Line> {
    let mut lines = vec![Line::opener(0, 1000)];
    lines[0].text = "def f():".to_owned();
    lines.extend(block.iter().cloned());
    let mut after = Line::statement(1, 1001);
    after.text = "return 0".to_owned();
    lines.push(after);
    let mut next = Line::opener(0, 1002);
    next.text = "def g():".to_owned();
    lines.push(next);
    let mut body = Line::statement(1, 1003);
    body.text = "pass".to_owned();
    lines.push(body);
    lines
}

/// Whether the lines form valid Python-like structure.
fn valid(lines: &[Line]) -> bool {
    lines.windows(2).all(|pair| match pair {
        [first, second] if first.opener => second.depth == first.depth + 1,
        [first, second] => second.depth <= first.depth,
        _ => true,
    })
}

/// Applies `changes` to the lines `range` of the file; returns the new file and the range
/// of the changed lines in it.
fn edit(
    file: &[Line],
    range: std::ops::Range<usize>,
    changes: &[(Change, f64, f64)],
    next_id: &mut usize,
) -> (Vec<Line>, std::ops::Range<usize>) {
    let mut lines = file.to_vec();
    let (start, mut end) = (range.start, range.end);
    for &(change, at, depth_choice) in changes {
        match change {
            Change::Rewrite => {
                let statements: Vec<usize> =
                    (start..end).filter(|&index| !lines[index].opener).collect();
                if statements.is_empty() {
                    continue;
                }
                let line = &mut lines[statements[pick(at, statements.len())]];
                line.text = format!("{} + 1", line.text);
                line.original = false;
            }
            Change::InsertStatement | Change::InsertBlock => {
                // Insert before `position` (start..=end).
                let position = start + pick(at, end - start + 1);
                let previous = &lines[position - 1];
                let next_depth = lines[position].depth;
                let depth = if previous.opener {
                    previous.depth + 1
                } else {
                    let (low, high) = (next_depth.max(1), previous.depth);
                    if low > high {
                        continue;
                    }
                    low + pick(depth_choice, high - low + 1)
                };
                *next_id += 1;
                let mut inserted = vec![Line::statement(depth, *next_id)];
                if matches!(change, Change::InsertBlock) {
                    inserted = vec![
                        Line::opener(depth, *next_id),
                        Line::statement(depth + 1, *next_id + 1),
                    ];
                    *next_id += 1;
                }
                for line in &mut inserted {
                    line.original = false;
                }
                end += inserted.len();
                lines.splice(position..position, inserted);
            }
            Change::Delete => {
                if end - start < 2 {
                    continue;
                }
                let index = start + pick(at, end - start);
                let mut candidate = lines.clone();
                candidate.remove(index);
                if !lines[index].opener && valid(&candidate) {
                    lines = candidate;
                    end -= 1;
                }
            }
        }
    }
    (lines, start..end)
}

fn render_file(lines: &[Line], unit: &str) -> String {
    lines
        .iter()
        .map(|line| {
            format!(
                "{}{}{}\n",
                unit.repeat(line.depth),
                line.text,
                line.trailing
            )
        })
        .collect()
}

/// The sender's view of `lines`: their text with the garbled indentation.
fn render_sent(lines: &[Line], base: usize, sending: Sending, unit: &str) -> Vec<String> {
    let other = if unit == "  " { "    " } else { "  " };
    lines
        .iter()
        .enumerate()
        .map(|(index, line)| {
            let relative = line.depth.saturating_sub(base);
            let indent = match sending {
                Sending::Flattened => String::new(),
                Sending::Dedented => unit.repeat(relative),
                Sending::OtherUnit => other.repeat(relative),
                Sending::FirstLineStripped if index == 0 => String::new(),
                Sending::FirstLineStripped => unit.repeat(line.depth),
            };
            format!("{indent}{}", line.text)
        })
        .collect()
}

/// The lines of the file the edit covers: at least two, since a one-line old text sent
/// without its indentation is found exactly inside its line, and exact matches replace
/// exactly what they match (the new text is not re-indented).
fn edited_range(case: &Case) -> (usize, usize) {
    let block_len = case.block.len();
    let start = 1 + pick(case.from, block_len - 1);
    let length = 2 + pick(case.length, block_len - start);
    (start, start + length)
}

/// The file, the edit as sent, and the intended result of a generated case; `None` when
/// the case changes nothing or leaves invalid structure.
fn materialise(case: &Case) -> Option<(String, Edit, String)> {
    let file = file_lines(&case.block);
    let (start, end) = edited_range(case);
    // A line deleted next to an inserted one reads as one changed line, which keeps the
    // depth of the line it replaces: the intended depth of the inserted line is unknown.
    let deletes = case
        .changes
        .iter()
        .any(|(change, _, _)| matches!(change, Change::Delete));
    let inserts = case
        .changes
        .iter()
        .any(|(change, _, _)| matches!(change, Change::InsertStatement | Change::InsertBlock));
    if deletes && inserts {
        return None;
    }
    let mut next_id = 2000;
    let (edited, new_range) = edit(&file, start..end, &case.changes, &mut next_id);
    if edited == file || !valid(&edited) {
        return None;
    }
    let old = &file[start..end];
    let new = &edited[new_range];
    // A first line sent without its indentation says nothing about its depth: when it is
    // a new line, its depth is anyone's guess (exact matches place it where the old first
    // line started).
    if case.sending == Sending::FirstLineStripped && !new[0].text.starts_with(&old[0].text) {
        return None;
    }
    let base = old
        .iter()
        .chain(new)
        .map(|line| line.depth)
        .min()
        .unwrap_or(0);
    let old_text = render_sent(old, base, case.sending, case.unit).join("\n");
    let new_text = render_sent(new, base, case.sending, case.unit).join("\n");
    Some((
        render_file(&file, case.unit),
        Edit { old_text, new_text },
        render_file(&edited, case.unit),
    ))
}

/// `lines` written with braces: each `if cN:` opens `if cN {` and a `}` closes it before
/// the first line back at its depth (or shallower).
fn with_braces(lines: &[Line]) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let close = |out: &mut Vec<Line>, depth: usize| {
        let mut closer = Line::statement(depth, 0);
        closer.text = "}".to_owned();
        closer.original = true;
        out.push(closer);
    };
    for line in lines {
        while open.last().is_some_and(|&depth| depth >= line.depth) {
            let depth = open.pop().unwrap_or_default();
            close(&mut out, depth);
        }
        let mut line = line.clone();
        if line.opener {
            open.push(line.depth);
            line.text = format!("{} {{", line.text.trim_end_matches(':'));
        }
        out.push(line);
    }
    while let Some(depth) = open.pop() {
        close(&mut out, depth);
    }
    out
}

/// The brace-language form of a case: the lines that differ between the file and the
/// edited file (at least two old lines), sent garbled.
fn materialise_braces(case: &Case) -> Option<(String, Edit, String)> {
    let file = file_lines(&case.block);
    let (start, end) = edited_range(case);
    let mut next_id = 2000;
    let (edited, _) = edit(&file, start..end, &case.changes, &mut next_id);
    if edited == file || !valid(&edited) {
        return None;
    }
    let (file, edited) = (with_braces(&file), with_braces(&edited));
    let prefix = file.iter().zip(&edited).take_while(|(a, b)| a == b).count();
    let suffix = file
        .iter()
        .rev()
        .zip(edited.iter().rev())
        .take_while(|(a, b)| a == b)
        .count()
        .min(file.len().min(edited.len()) - prefix);
    let mut first = prefix.max(1);
    let (mut old_end, mut new_end) = (file.len() - suffix, edited.len() - suffix);
    while old_end - first < 2 {
        if first > 1 {
            first -= 1;
        } else if old_end < file.len() {
            old_end += 1;
            new_end += 1;
        } else {
            return None;
        }
    }
    let (old, new) = (&file[first..old_end], &edited[first..new_end]);
    let base = old
        .iter()
        .chain(new)
        .map(|line| line.depth)
        .min()
        .unwrap_or(0);
    let sending = if case.sending == Sending::FirstLineStripped {
        Sending::Flattened
    } else {
        case.sending
    };
    let mut old_text = render_sent(old, base, sending, case.unit).join("\n");
    let new_text = render_sent(new, base, sending, case.unit).join("\n");
    if new.is_empty() {
        // Deleting whole lines takes their newline too.
        old_text.push('\n');
    }
    Some((
        render_file(&file, case.unit),
        Edit { old_text, new_text },
        render_file(&edited, case.unit),
    ))
}

#[test]
fn garbled_brace_blocks_give_the_intended_file_or_a_refusal() {
    check_accepting(case(), 384, 30, |case| {
        let Some((file, edit, intended)) = materialise_braces(&case) else {
            return Ok(None);
        };
        let Ok(outcome) = apply_edits(&file, std::slice::from_ref(&edit)) else {
            return Ok(Some(false));
        };
        if outcome.matches[0].tier == MatchTier::Exact {
            let literal = file.replacen(&edit.old_text, &edit.new_text, 1);
            prop_assert_eq!(&outcome.file_text, &literal);
            return Ok(Some(true));
        }
        prop_assert_eq!(
            &outcome.file_text,
            &intended,
            "file:\n{}\nold:\n{}\nnew:\n{}",
            file,
            edit.old_text,
            edit.new_text
        );
        Ok(Some(true))
    });
}

#[test]
fn garbled_indentation_gives_the_intended_file_or_a_refusal() {
    check_accepting(case(), 384, 45, |case| {
        let Some((file, edit, intended)) = materialise(&case) else {
            return Ok(None);
        };
        let result = apply_edits(&file, std::slice::from_ref(&edit));
        let Ok(outcome) = result else {
            return Ok(Some(false));
        };
        // Text sent with some of its lines exactly as in the file (say, the first without
        // its indentation and the rest with the file's) is found exactly, and an exact
        // match replaces exactly what it matched.
        if outcome.matches[0].tier == MatchTier::Exact {
            let literal = file.replacen(&edit.old_text, &edit.new_text, 1);
            prop_assert_eq!(&outcome.file_text, &literal);
            return Ok(Some(true));
        }
        prop_assert_eq!(outcome.matches[0].tier, MatchTier::Whitespace);
        prop_assert_eq!(
            &outcome.file_text,
            &intended,
            "file:\n{}\nold:\n{}\nnew:\n{}",
            file,
            edit.old_text,
            edit.new_text
        );
        Ok(Some(true))
    });
}

#[test]
fn flattened_edits_that_only_rewrite_lines_are_always_accepted() {
    let rewrite = (
        prop_oneof![Just("    "), Just("  "), Just("\t")],
        prop::collection::vec((prop::bool::weighted(0.35), 0..3_usize), 3..14),
        0.0..1.0_f64,
        0.0..1.0_f64,
        0.0..1.0_f64,
    )
        .prop_map(|(unit, shape, from, length, at)| Case {
            unit,
            block: build_block(&shape),
            from,
            length,
            changes: vec![(Change::Rewrite, at, 0.0)],
            sending: Sending::Flattened,
        });
    check_accepting(rewrite, 128, 100, |case| {
        let Some((file, edit, intended)) = materialise(&case) else {
            return Ok(None);
        };
        let outcome = apply_edits(&file, std::slice::from_ref(&edit));
        prop_assert_eq!(outcome.map(|outcome| outcome.file_text), Ok(intended));
        Ok(Some(true))
    });
}

/// A case whose file has trailing blanks on its lines, sent without them (and without a
/// final newline, so the blanks of the last line are after the match).
fn trailing_case() -> impl Strategy<Value = (Case, Vec<usize>, bool)> {
    (case(), prop::collection::vec(0..4_usize, 32), any::<bool>())
        .prop_map(|(case, trailing, flatten)| (case, trailing, flatten))
}

#[test]
fn blanks_after_a_match_stay_and_kept_lines_keep_theirs() {
    const BLANKS: [&str; 4] = ["", " ", "  \t", "   "];
    check_accepting(trailing_case(), 256, 40, |(mut case, trailing, flatten)| {
        for (line, blanks) in case.block.iter_mut().zip(&trailing) {
            line.trailing = BLANKS[*blanks];
        }
        case.changes
            .retain(|(change, _, _)| matches!(change, Change::Rewrite));
        case.changes.push((Change::Rewrite, case.length, 0.0));
        case.sending = if flatten {
            Sending::Flattened
        } else {
            Sending::Dedented
        };
        let Some((file, edit, _)) = materialise(&case) else {
            return Ok(None);
        };
        // The intended file: rewritten lines lose their blanks, others keep them.
        let file_lines = file_lines(&case.block);
        let (start, end) = edited_range(&case);
        let (mut edited, _) = edit_lines(&file_lines, start..end, &case.changes);
        for line in &mut edited {
            if !line.original {
                line.trailing = "";
            }
        }
        // The last matched line's blanks follow the match whatever replaced that line.
        let last_blanks = file_lines[end - 1].trailing;
        edited[end - 1].trailing = last_blanks;
        let intended = render_file(&edited, case.unit);
        let outcome = apply_edits(&file, std::slice::from_ref(&edit));
        let Ok(outcome) = outcome else {
            return Ok(Some(false));
        };
        prop_assert_eq!(
            &outcome.file_text,
            &intended,
            "old:\n{}\nnew:\n{}",
            edit.old_text,
            edit.new_text
        );
        Ok(Some(true))
    });
}

fn edit_lines(
    file: &[Line],
    range: std::ops::Range<usize>,
    changes: &[(Change, f64, f64)],
) -> (Vec<Line>, std::ops::Range<usize>) {
    let mut next_id = 2000;
    edit(file, range, changes, &mut next_id)
}

#[test]
fn whitespace_only_boundary_lines_are_replaced_whole() {
    // A file with a whitespace-only line before and after a quoted line; the edit's old
    // text starts or ends with that line sent empty and its quotes straightened.
    let strategy = (
        prop_oneof![Just(""), Just(" "), Just("  "), Just("\t"), Just("    ")],
        prop_oneof![Just(""), Just(" "), Just("  "), Just("\t")],
        any::<bool>(),
        any::<bool>(),
    );
    check_accepting(strategy, 64, 100, |(above, below, lead, trail)| {
        let file = format!("a = 1\n{above}\nb = \u{201c}x\u{201d}\n{below}\nc = 2\n");
        let mut old_text = String::from("b = \"x\"");
        let mut new_text = String::from("b = \"y\"");
        let mut intended_middle = String::from("b = \"y\"");
        if lead {
            old_text.insert(0, '\n');
            new_text.insert_str(0, "NEW\n");
            // The empty first line of old text is the whole line above.
            intended_middle.insert_str(0, "NEW\n");
        } else {
            intended_middle.insert_str(0, &format!("{above}\n"));
        }
        if trail {
            old_text.push_str("\n\n");
            new_text.push_str("\n\nEND\n");
            intended_middle.push_str("\n\nEND\n");
        } else {
            intended_middle.push_str(&format!("\n{below}\n"));
        }
        let intended = format!("a = 1\n{intended_middle}c = 2\n");
        let edits = [Edit {
            old_text: old_text.clone(),
            new_text: new_text.clone(),
        }];
        let Ok(outcome) = apply_edits(&file, &edits) else {
            return Ok(Some(false));
        };
        prop_assert_eq!(
            &outcome.file_text,
            &intended,
            "file {:?} old {:?} new {:?}",
            file,
            old_text,
            new_text
        );
        Ok(Some(true))
    });
}
