//! The indentation units of a whitespace-rung match, the sender-to-file translation, and
//! what marks a line as opening or closing a block.

use crate::indent::{Placed, Region, Unplaceable, depth};
use crate::whitespace::{TAB_COLUMNS, columns, is_blank, leading};

/// The indentation units of a region, for shifting lines by the sender's relative depth.
pub(crate) struct Units {
    /// One level of the sender's indentation, in columns.
    pub(crate) sender: usize,
    /// One level of the file's indentation, as written in the file.
    file: String,
}

impl Units {
    pub(crate) fn learn(region: &Region<'_>, new_lines: &[&str]) -> Self {
        let min_step = |depths: &mut Vec<usize>| {
            depths.sort_unstable();
            depths.dedup();
            depths
                .windows(2)
                .filter_map(|pair| match pair {
                    [low, high] => Some(high - low),
                    _ => None,
                })
                .min()
        };
        let mut sender_depths: Vec<usize> = region
            .old
            .iter()
            .chain(new_lines)
            .filter(|line| !is_blank(line))
            .map(|line| depth(line))
            .collect();
        let sender = min_step(&mut sender_depths).unwrap_or(TAB_COLUMNS);
        let mut indents: Vec<&str> = region
            .window
            .iter()
            .chain(region.before.iter())
            .chain(region.after.iter())
            .filter(|line| !is_blank(line))
            .map(|line| leading(line))
            .collect();
        indents.sort_unstable_by_key(|indent| (columns(indent), indent.len()));
        indents.dedup();
        let step = indents
            .windows(2)
            .filter_map(|pair| match pair {
                [low, high] => high.strip_prefix(low).filter(|extra| !extra.is_empty()),
                _ => None,
            })
            .min_by_key(|extra| columns(extra));
        let file = step
            .map(str::to_owned)
            .or_else(|| file_indent_unit(region.file))
            .unwrap_or_else(|| " ".repeat(TAB_COLUMNS));
        Self { sender, file }
    }

    /// `indent` moved by `delta` columns of the sender's indentation.
    pub(crate) fn shift(&self, indent: &str, delta: isize) -> String {
        let steps = delta.unsigned_abs();
        if delta >= 0 {
            let mut out = indent.to_owned();
            out.push_str(&self.file.repeat(steps / self.sender));
            out.push_str(&" ".repeat(steps % self.sender));
            return out;
        }
        let mut base = indent;
        for _ in 0..steps.div_ceil(self.sender) {
            base = base
                .strip_suffix(self.file.as_str())
                .unwrap_or_else(|| base.get(..base.len().saturating_sub(1)).unwrap_or_default());
        }
        base.to_owned()
    }
}

/// The sender's relative depth of `line` against `reference`, in columns.
pub(crate) fn delta(line: &str, reference: &str) -> isize {
    let (line, reference) = (depth(line), depth(reference));
    if line >= reference {
        isize::try_from(line - reference).unwrap_or(isize::MAX)
    } else {
        -isize::try_from(reference - line).unwrap_or(isize::MAX)
    }
}

/// Whether `text` ends by opening a block (`{`, `(`, `[`, or `:` where the file uses it so).
pub(crate) fn ends_with_opener(text: &str, colon_opens: bool) -> bool {
    let trimmed = text.trim();
    if is_comment(trimmed) {
        return false;
    }
    match trimmed.chars().last() {
        Some('{' | '(' | '[') => true,
        Some(':') => colon_opens,
        _ => false,
    }
}

pub(crate) fn starts_with_closer(text: &str) -> bool {
    matches!(text.trim_start().chars().next(), Some('}' | ')' | ']'))
}

fn is_comment(trimmed: &str) -> bool {
    ["#", "//", "/*", "*", "--", ";"]
        .iter()
        .any(|marker| trimmed.starts_with(marker))
}

/// Whether the file opens blocks with a final `:` (Python, YAML): most such lines are
/// followed by a deeper one.
fn colon_opens_blocks(file: &[&str]) -> bool {
    let (mut deeper, mut other) = (0_usize, 0_usize);
    let mut lines = file.iter().filter(|line| !is_blank(line)).peekable();
    while let Some(line) = lines.next() {
        if !ends_with_opener(line, true) || !line.trim_end().ends_with(':') {
            continue;
        }
        match lines.peek() {
            Some(next) if depth(next) > depth(line) => deeper += 1,
            Some(_) => other += 1,
            None => {}
        }
    }
    deeper > 0 && deeper >= other
}

/// Refuses a result that opens a block without indenting its body, or closes one without
/// dedenting, on a line whose indentation the engine chose.
pub(crate) fn check_structure(region: &Region<'_>, placed: &[Placed]) -> Result<(), Unplaceable> {
    let mut colon_opens = None;
    let mut previous: Option<(Option<usize>, &str, bool)> =
        region.before.map(|line| (None, line, false));
    let lines = placed
        .iter()
        .enumerate()
        .filter(|(_, line)| !line.text.trim().is_empty())
        .map(|(index, line)| (Some(index), line.text.as_str(), line.placed))
        .chain(region.after.map(|line| (None, line, false)));
    for current in lines {
        if let Some(before) = previous
            && (before.2 || current.2)
        {
            let (first, second) = (before.1, current.1);
            let colon = first.trim_end().ends_with(':')
                && *colon_opens.get_or_insert_with(|| colon_opens_blocks(region.file));
            let opens = ends_with_opener(first, colon);
            let closes = starts_with_closer(second);
            let fine = match (opens, closes) {
                (true, false) => depth(second) > depth(first),
                (false, true) => depth(second) < depth(first),
                (true, true) => depth(second) == depth(first),
                (false, false) => true,
            };
            if !fine {
                let new_line = if current.2 { current.0 } else { before.0 };
                return Err(Unplaceable {
                    new_line: new_line.unwrap_or_default(),
                });
            }
        }
        previous = Some(current);
    }
    Ok(())
}

/// How the sender's indentation translates into the file's.
pub(crate) struct Style<'a> {
    /// (sender's indentation, file's indentation) of each non-blank matched line.
    pairs: Vec<(&'a str, &'a str)>,
    /// Depth of the shallowest matched line as the sender wrote it, in columns.
    sender_base: usize,
    /// The file's indentation of that line.
    file_base: &'a str,
    /// One level of the sender's indentation, in columns.
    sender_unit: usize,
    /// One level of the file's indentation, as written in the file.
    file_unit: String,
}

impl<'a> Style<'a> {
    pub(crate) fn learn(
        pairs: Vec<(&'a str, &'a str)>,
        new_lines: &[&str],
        file_unit: impl FnOnce() -> Option<String>,
    ) -> Result<Self, usize> {
        let (sender_base, file_base) = pairs
            .iter()
            .min_by_key(|(old, _)| columns(old))
            .map_or((0, ""), |(old, file)| (columns(old), *file));
        let depth = |indent: &str| columns(indent).checked_sub(sender_base).filter(|&d| d > 0);
        // One level of the file: the file's own habit when the deeper matched lines are
        // whole multiples of it, else the smallest step the matched lines show.
        let extras = pairs.iter().filter_map(|(_, file)| {
            file.strip_prefix(file_base)
                .filter(|extra| !extra.is_empty())
        });
        let step = extras.clone().min_by_key(|extra| columns(extra));
        let habit = file_unit();
        let file_unit = match (step, habit) {
            (Some(step), Some(habit)) if is_repeat(step, &habit) => habit,
            (Some(step), _) => step.to_owned(),
            (None, Some(habit)) => habit,
            (None, None) if file_base.contains('\t') => "\t".to_owned(),
            (None, None) => String::new(),
        };
        // One level of the sender: its depth of a matched line over that line's file levels.
        let learned = pairs
            .iter()
            .filter_map(|(old, file)| {
                let levels = file
                    .strip_prefix(file_base)
                    .and_then(|extra| repeats(extra, &file_unit))?;
                let sender = depth(old)?;
                sender.is_multiple_of(levels).then_some(sender / levels)
            })
            .min();
        // Else the step the new lines show where a block opens or closes; without one, a new
        // line at another depth than the matched ones has no known depth (eight columns
        // deeper: one level of eight, or two of four?).
        let guessed = || {
            let lines: Vec<(usize, &str)> = new_lines
                .iter()
                .enumerate()
                .filter(|(_, line)| !is_blank(line))
                .map(|(index, line)| (index, *line))
                .collect();
            let step = lines
                .windows(2)
                .filter_map(|pair| match pair {
                    [(_, first), (_, second)] => {
                        let (high, low) = (columns(leading(first)), columns(leading(second)));
                        if ends_with_opener(first, true) && low > high {
                            Some(low - high)
                        } else if starts_with_closer(second) && high > low {
                            Some(high - low)
                        } else {
                            None
                        }
                    }
                    _ => None,
                })
                .min();
            match step {
                Some(step) => Some(Ok(step)),
                None => lines
                    .iter()
                    .find(|(_, line)| {
                        !pairs
                            .iter()
                            .any(|(old, _)| columns(old) == columns(leading(line)))
                    })
                    .map(|(index, _)| Err(*index)),
            }
        };
        let sender_unit = match learned.map(Ok).or_else(guessed) {
            Some(Ok(unit)) => unit,
            Some(Err(index)) => return Err(index),
            None => TAB_COLUMNS,
        };
        let file_unit = if file_unit.is_empty() {
            " ".repeat(sender_unit)
        } else {
            file_unit
        };
        Ok(Self {
            pairs,
            sender_base,
            file_base,
            sender_unit,
            file_unit,
        })
    }

    /// The file's indentation for a line the sender indented with `indent`.
    pub(crate) fn indent(&self, indent: &str) -> String {
        if let Some((_, file)) = self.pairs.iter().find(|(old, _)| *old == indent) {
            return (*file).to_owned();
        }
        let width = columns(indent);
        if width >= self.sender_base {
            let depth = width - self.sender_base;
            let mut out = self.file_base.to_owned();
            out.push_str(&self.file_unit.repeat(depth / self.sender_unit));
            out.push_str(&" ".repeat(depth % self.sender_unit));
            return out;
        }
        let levels = (self.sender_base - width).div_ceil(self.sender_unit);
        let mut base = self.file_base;
        for _ in 0..levels {
            base = base
                .strip_suffix(self.file_unit.as_str())
                .unwrap_or_else(|| base.get(..base.len().saturating_sub(1)).unwrap_or_default());
        }
        base.to_owned()
    }
}

/// How many times `unit` repeats to make `text`, if it does (at least once).
fn repeats(text: &str, unit: &str) -> Option<usize> {
    if unit.is_empty() || text.is_empty() || !text.len().is_multiple_of(unit.len()) {
        return None;
    }
    let count = text.len() / unit.len();
    (unit.repeat(count) == text).then_some(count)
}

fn is_repeat(text: &str, unit: &str) -> bool {
    repeats(text, unit).is_some()
}

/// The file's indentation unit, guessed from all its lines: a tab when most indented lines
/// start with one, else the smallest common count of leading spaces.
pub(crate) fn file_indent_unit(file_lines: &[&str]) -> Option<String> {
    let mut tabs = 0;
    let mut spaces = [0_usize; 9];
    for line in file_lines {
        let indent = leading(line);
        if indent.len() == line.len() {
            continue;
        }
        if indent.starts_with('\t') {
            tabs += 1;
        } else if let Some(slot) = spaces.get_mut(indent.len()) {
            *slot += 1;
        }
    }
    let spaced: usize = spaces.iter().skip(1).sum();
    if tabs > spaced {
        return Some("\t".to_owned());
    }
    let common = (2..spaces.len()).find(|&width| {
        spaces
            .get(width)
            .is_some_and(|&lines| lines > 0 && lines * 10 >= spaced)
    })?;
    Some(" ".repeat(common))
}
