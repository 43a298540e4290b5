//! Placing the lines of a `new_text` matched on the whitespace rung at the file's own
//! indentation.
//!
//! The lines of `new_text` are aligned with those of `old_text` by a line diff that ignores
//! whitespace; inside a replaced run, lines pair up by similarity. Then each line of
//! `new_text` gets its indentation from the file:
//!
//! - a line equal (modulo whitespace) to its `old_text` line is that file line, byte for
//!   byte, shifted only when the sender changed its indentation relative to its own
//!   `old_text` line;
//! - a changed line takes the indentation of the file line it replaces, shifted the same way;
//! - an inserted line takes the indentation of the lines around it (the file lines outside
//!   the match when it is at an edge), shifted by the sender's relative indentation; when
//!   the lines before and after it disagree, a block opened just before it or closed just
//!   after it decides, and otherwise the edit is refused.
//!
//! When the sender's `old_text` kept the file's indentation structure (its depths map onto
//! the file's one to one, in order) and the sender indented anything at all, its
//! indentation is trusted instead and translated into the file's characters ([`Style`]).
//! Either way, a result whose lines open a block without indenting its body, or close one
//! without dedenting, is refused rather than written.

use similar::{Algorithm, DiffTag, capture_diff_slices};

use crate::style::{
    Style, Units, check_structure, delta, ends_with_opener, file_indent_unit, starts_with_closer,
};
use crate::whitespace::{columns, is_blank, key_string, leading};

/// Replaced runs up to this many old × new lines are paired by similarity.
const PAIRED_CELLS: usize = 1024;
/// Characters of a line compared when pairing.
const PAIRED_CHARS: usize = 120;
/// Two lines of a replaced run pair up when at least this similar.
const PAIR_SIMILARITY: f64 = 0.5;

/// The file around a whitespace-rung match.
pub(crate) struct Region<'a> {
    /// The sender's `old_text` lines.
    pub(crate) old: &'a [&'a str],
    /// The file lines they matched (the last without the trailing blanks the match leaves).
    pub(crate) window: &'a [&'a str],
    /// The nearest non-blank file line before the window, if any.
    pub(crate) before: Option<&'a str>,
    /// The nearest non-blank file line after the window, if any.
    pub(crate) after: Option<&'a str>,
    /// Every line of the file, to learn its habits from.
    pub(crate) file: &'a [&'a str],
}

/// `new_text` could not be placed: the depth of its 0-based line `new_line` is ambiguous.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unplaceable {
    pub(crate) new_line: usize,
}

/// How a line of `new_text` lines up with `old_text`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Aligned {
    /// Equal modulo whitespace to this old line.
    Kept(usize),
    /// A changed version of this old line.
    Changed(usize),
    /// No counterpart.
    Inserted,
}

/// One line of the result.
pub(crate) struct Placed {
    pub(crate) text: String,
    /// Whether the engine chose its indentation (false for a file line copied as it is).
    pub(crate) placed: bool,
}

/// Rewrites `new` (LF text) for the file.
pub(crate) fn reindent(region: &Region<'_>, new: &str) -> Result<String, Unplaceable> {
    if new.is_empty() {
        return Ok(String::new());
    }
    let (new_body, newline) = match new.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (new, ""),
    };
    let new_lines: Vec<&str> = new_body.split('\n').collect();
    let aligned = align(region.old, region.window, &new_lines);
    let placed = place(region, &new_lines, &aligned)?;
    check_structure(region, &placed)?;
    let mut out = String::with_capacity(new.len() + new.len() / 4);
    for (index, line) in placed.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&line.text);
    }
    out.push_str(newline);
    Ok(out)
}

/// Lines up `new` with `old` by a whitespace-insensitive line diff. When no line of a
/// replaced run pairs with an old line, its lines replace the old ones as a whole if those
/// share one indentation in the file.
fn align(old: &[&str], window: &[&str], new: &[&str]) -> Vec<Aligned> {
    let old_keys: Vec<String> = old.iter().map(|line| key_string(line)).collect();
    let new_keys: Vec<String> = new.iter().map(|line| key_string(line)).collect();
    let mut aligned = vec![Aligned::Inserted; new.len()];
    for op in capture_diff_slices(Algorithm::Myers, &old_keys, &new_keys) {
        match op.tag() {
            DiffTag::Equal => {
                for (old_index, new_index) in op.old_range().zip(op.new_range()) {
                    if let Some(slot) = aligned.get_mut(new_index) {
                        *slot = Aligned::Kept(old_index);
                    }
                }
            }
            DiffTag::Replace => {
                let pairs = pair_by_similarity(
                    old_keys.get(op.old_range()).unwrap_or_default(),
                    new_keys.get(op.new_range()).unwrap_or_default(),
                );
                let replaced = op.old_range().filter(|&index| {
                    window.get(index).is_some_and(|line| !is_blank(line))
                        && old.get(index).is_some_and(|line| !is_blank(line))
                });
                let mut indents = replaced
                    .clone()
                    .filter_map(|index| window.get(index))
                    .map(|line| leading(line));
                let shared = indents
                    .next()
                    .filter(|first| indents.all(|other| other == *first));
                // Only when no line pairs: next to a paired line, the others are insertions.
                let fallback = shared
                    .filter(|_| pairs.is_empty())
                    .and_then(|_| replaced.clone().next());
                if let Some(fallback) = fallback {
                    for index in op.new_range() {
                        if let Some(slot) = aligned.get_mut(index) {
                            *slot = Aligned::Changed(fallback);
                        }
                    }
                }
                for (old_offset, new_offset) in pairs {
                    if let Some(slot) = aligned.get_mut(op.new_range().start + new_offset) {
                        *slot = Aligned::Changed(op.old_range().start + old_offset);
                    }
                }
            }
            DiffTag::Delete | DiffTag::Insert => {}
        }
    }
    aligned
}

/// Pairs of (old, new) offsets of a replaced run: the order-keeping pairing of the most
/// total similarity (lines at least [`PAIR_SIMILARITY`] alike), or position by position for
/// a big run of equal length.
fn pair_by_similarity(old: &[String], new: &[String]) -> Vec<(usize, usize)> {
    let (rows, cols) = (old.len(), new.len());
    if rows * cols > PAIRED_CELLS {
        return if rows == cols {
            (0..rows).map(|index| (index, index)).collect()
        } else {
            Vec::new()
        };
    }
    let clip = |line: &str| line.chars().take(PAIRED_CHARS).collect::<String>();
    let old: Vec<String> = old.iter().map(|line| clip(line)).collect();
    let new: Vec<String> = new.iter().map(|line| clip(line)).collect();
    let similar = |row: usize, col: usize| -> Option<f64> {
        let (left, right) = (old.get(row)?, new.get(col)?);
        if left.is_empty() || right.is_empty() {
            return None;
        }
        let score = strsim::normalized_levenshtein(left, right);
        (score >= PAIR_SIMILARITY).then_some(score)
    };
    let width = cols + 1;
    let mut scores = vec![None; rows * cols];
    let mut best = vec![0.0_f64; (rows + 1) * width];
    for row in 1..=rows {
        for col in 1..=cols {
            let score = similar(row - 1, col - 1);
            if let Some(slot) = scores.get_mut((row - 1) * cols + col - 1) {
                *slot = score;
            }
            let up = best.get((row - 1) * width + col).copied().unwrap_or(0.0);
            let left = best.get(row * width + col - 1).copied().unwrap_or(0.0);
            let diagonal = score.map_or(0.0, |score| {
                best.get((row - 1) * width + col - 1)
                    .copied()
                    .unwrap_or(0.0)
                    + score
            });
            if let Some(slot) = best.get_mut(row * width + col) {
                *slot = up.max(left).max(diagonal);
            }
        }
    }
    let mut pairs = Vec::new();
    let (mut row, mut col) = (rows, cols);
    let at = |row: usize, col: usize| best.get(row * width + col).copied().unwrap_or(0.0);
    while row > 0 && col > 0 {
        let here = at(row, col);
        if let Some(Some(score)) = scores.get((row - 1) * cols + col - 1)
            && (at(row - 1, col - 1) + score - here).abs() < 1e-9
        {
            pairs.push((row - 1, col - 1));
            row -= 1;
            col -= 1;
        } else if (at(row - 1, col) - here).abs() < 1e-9 {
            row -= 1;
        } else {
            col -= 1;
        }
    }
    pairs.reverse();
    pairs
}

/// Depth in columns of each non-blank line's indentation.
pub(crate) fn depth(line: &str) -> usize {
    columns(leading(line))
}

/// Places every line of `new_lines`.
fn place(
    region: &Region<'_>,
    new_lines: &[&str],
    aligned: &[Aligned],
) -> Result<Vec<Placed>, Unplaceable> {
    let file_of = |old: usize| {
        region
            .window
            .get(old)
            .copied()
            .filter(|line| !is_blank(line))
    };
    // A sender who indented nothing says nothing about depths.
    let mut sender_depths = region
        .old
        .iter()
        .chain(new_lines)
        .filter(|line| !is_blank(line))
        .map(|line| depth(line));
    let first_depth = sender_depths.next();
    let flat = sender_depths.all(|other| Some(other) == first_depth);
    if !flat {
        let old_pairs: Vec<(&str, &str)> = region
            .old
            .iter()
            .zip(region.window)
            .filter(|(old, file)| !is_blank(old) && !is_blank(file))
            .map(|(old, file)| (leading(old), leading(file)))
            .collect();
        if faithful(&old_pairs) {
            return place_by_style(region, new_lines, aligned, old_pairs);
        }
        // The old text lost its indentation but the new text kept the file's structure.
        let new_pairs: Vec<(&str, &str)> = new_lines
            .iter()
            .zip(aligned)
            .filter_map(|(new, aligned)| match aligned {
                Aligned::Kept(old) | Aligned::Changed(old) if !is_blank(new) => {
                    Some((leading(new), leading(file_of(*old)?)))
                }
                _ => None,
            })
            .collect();
        if !new_pairs.is_empty() && faithful(&new_pairs) {
            return place_by_style(region, new_lines, aligned, new_pairs);
        }
    }
    place_by_anchors(region, new_lines, aligned)
}

/// Whether the sender's depths map onto the file's one to one and in the same order.
fn faithful(pairs: &[(&str, &str)]) -> bool {
    let mut by_depth: Vec<(usize, &str)> = pairs
        .iter()
        .map(|(sender, file)| (columns(sender), *file))
        .collect();
    by_depth.sort_unstable();
    by_depth.dedup();
    by_depth.windows(2).all(|pair| match pair {
        [(sender, file), (next_sender, next_file)] => {
            sender != next_sender && columns(file) < columns(next_file)
        }
        _ => true,
    })
}

/// Places lines by translating the sender's indentation (learnt from `pairs`).
fn place_by_style(
    region: &Region<'_>,
    new_lines: &[&str],
    aligned: &[Aligned],
    pairs: Vec<(&str, &str)>,
) -> Result<Vec<Placed>, Unplaceable> {
    let style = Style::learn(pairs, new_lines, || file_indent_unit(region.file))
        .map_err(|new_line| Unplaceable { new_line })?;
    Ok(new_lines
        .iter()
        .zip(aligned)
        .map(|(line, aligned)| {
            let kept = match aligned {
                Aligned::Kept(old) => region.window.get(*old).zip(region.old.get(*old)),
                _ => None,
            };
            match kept {
                Some((file, old)) if leading(old) == leading(line) || is_blank(line) => Placed {
                    text: (*file).to_owned(),
                    placed: false,
                },
                Some((file, _)) => Placed {
                    text: style.indent(leading(line))
                        + file.get(leading(file).len()..).unwrap_or_default(),
                    placed: true,
                },
                None if is_blank(line) => Placed {
                    text: String::new(),
                    placed: false,
                },
                None => Placed {
                    text: style.indent(leading(line))
                        + line.get(leading(line).len()..).unwrap_or_default(),
                    placed: true,
                },
            }
        })
        .collect())
}

/// Places lines relative to the file lines they replace or sit between.
fn place_by_anchors(
    region: &Region<'_>,
    new_lines: &[&str],
    aligned: &[Aligned],
) -> Result<Vec<Placed>, Unplaceable> {
    let units = Units::learn(region, new_lines);
    // First the lines with a counterpart in the file, then the others between them.
    let mut placed: Vec<Option<Placed>> = new_lines
        .iter()
        .zip(aligned)
        .map(|(line, aligned)| place_counterpart(region, &units, line, *aligned))
        .collect();
    let anchored: Vec<bool> = placed
        .iter()
        .map(|line| {
            line.as_ref()
                .is_some_and(|line| !line.text.trim().is_empty())
        })
        .collect();
    let (previous, next) = nearest(&anchored);
    let lowest = new_lines
        .iter()
        .filter(|line| !is_blank(line))
        .map(|line| depth(line))
        .min()
        .unwrap_or(0);
    let mut out = Vec::with_capacity(new_lines.len());
    for (index, line) in new_lines.iter().enumerate() {
        if let Some(Some(done)) = placed.get_mut(index).map(Option::take) {
            out.push(done);
            continue;
        }
        // An anchor in the new text: its placed text, and the sender's line.
        let anchor = |at: Option<usize>| {
            let at = at?;
            Some((at, *new_lines.get(at)?))
        };
        let before = anchor(previous.get(index).copied().flatten());
        let after = anchor(next.get(index).copied().flatten());
        let indent_of = |at: usize| -> Option<String> {
            out_or_placed(&out, &placed, at).map(|text| leading(text).to_owned())
        };
        let relative = |anchor: Option<(usize, &str)>| match anchor {
            Some((_, sender)) => delta(line, sender),
            None => delta(line, &" ".repeat(lowest)),
        };
        let (before_indent, before_text) = match before {
            Some((at, _)) => (
                units.shift(&indent_of(at).unwrap_or_default(), relative(before)),
                out_or_placed(&out, &placed, at).map(str::to_owned),
            ),
            None => (
                units.shift(leading(region.before.unwrap_or_default()), relative(after)),
                region.before.map(str::to_owned),
            ),
        };
        let (after_indent, after_text) = match after {
            Some((at, _)) => (
                units.shift(&indent_of(at).unwrap_or_default(), relative(after)),
                out_or_placed(&out, &placed, at).map(str::to_owned),
            ),
            None => (
                units.shift(leading(region.after.unwrap_or_default()), relative(before)),
                region.after.map(str::to_owned),
            ),
        };
        let indent = resolve(
            &units,
            Side {
                indent: before_indent,
                text: before_text.as_deref(),
            },
            Side {
                indent: after_indent,
                text: after_text.as_deref(),
            },
            line,
        )
        .ok_or(Unplaceable { new_line: index })?;
        out.push(Placed {
            text: indent + content(line),
            placed: true,
        });
    }
    Ok(out)
}

/// A line with a counterpart in the old text, placed from the file line it keeps or
/// replaces; `None` for a line without one.
fn place_counterpart(
    region: &Region<'_>,
    units: &Units,
    line: &str,
    aligned: Aligned,
) -> Option<Placed> {
    let pair = match aligned {
        Aligned::Kept(old) | Aligned::Changed(old) => {
            region.window.get(old).zip(region.old.get(old))
        }
        Aligned::Inserted => None,
    };
    if is_blank(line) {
        let text = match (aligned, pair) {
            (Aligned::Kept(_), Some((file, _))) => (*file).to_owned(),
            _ => String::new(),
        };
        return Some(Placed {
            text,
            placed: false,
        });
    }
    let (file, old) = pair.filter(|(file, _)| !is_blank(file))?;
    let shifted = || units.shift(leading(file), delta(line, old));
    Some(match aligned {
        Aligned::Kept(_) if depth(old) == depth(line) => Placed {
            text: (*file).to_owned(),
            placed: false,
        },
        Aligned::Kept(_) => Placed {
            text: shifted() + content(file),
            placed: true,
        },
        _ => Placed {
            text: shifted() + content(line),
            placed: true,
        },
    })
}

/// A line without its indentation.
fn content(line: &str) -> &str {
    line.get(leading(line).len()..).unwrap_or_default()
}

/// For each position, the nearest anchored position before it and after it.
fn nearest(anchored: &[bool]) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    let mut previous = vec![None; anchored.len()];
    let mut last = None;
    for (index, slot) in previous.iter_mut().enumerate() {
        *slot = last;
        if anchored.get(index) == Some(&true) {
            last = Some(index);
        }
    }
    let mut next = vec![None; anchored.len()];
    last = None;
    for (index, slot) in next.iter_mut().enumerate().rev() {
        *slot = last;
        if anchored.get(index) == Some(&true) {
            last = Some(index);
        }
    }
    (previous, next)
}

/// The text of line `at` of the result: already placed (`out`) or placed in the first pass.
fn out_or_placed<'a>(
    out: &'a [Placed],
    placed: &'a [Option<Placed>],
    at: usize,
) -> Option<&'a str> {
    match out.get(at) {
        Some(line) => Some(&line.text),
        None => placed
            .get(at)
            .and_then(Option::as_ref)
            .map(|line| line.text.as_str()),
    }
}

/// One neighbour of an inserted line: the indentation it suggests and its text.
struct Side<'a> {
    indent: String,
    text: Option<&'a str>,
}

/// The indentation of an inserted `line` between two neighbours, when they agree or a block
/// boundary between them decides.
fn resolve(units: &Units, before: Side<'_>, after: Side<'_>, line: &str) -> Option<String> {
    let opens = before.text.is_some_and(|text| ends_with_opener(text, true));
    let closes = after.text.is_some_and(starts_with_closer);
    let (low, high) = (columns(&before.indent), columns(&after.indent));
    if before.indent == after.indent {
        // Between the two sides of an empty block: one level into it.
        if opens && closes && !starts_with_closer(line) {
            let sender = isize::try_from(units.sender).unwrap_or(isize::MAX);
            return Some(units.shift(&before.indent, sender));
        }
        return Some(before.indent);
    }
    if starts_with_closer(line) {
        return None;
    }
    if low > high && closes {
        // Last line of the block the next line closes.
        return Some(before.indent);
    }
    if high > low && opens {
        // First line of the block the previous line opens.
        return Some(after.indent);
    }
    None
}

#[cfg(test)]
#[path = "indent_tests.rs"]
mod tests;
