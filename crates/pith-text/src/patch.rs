//! The `apply_patch` envelope: a parser for the patch format GPT-family models are
//! trained on, and the application of one file's hunks through the edit ladder.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path          then lines starting with `+`
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path       (optional, right after Update File)
//! @@ optional context line    a hunk: lines starting with ` `, `-` or `+`
//! *** End of File             (optional, ends a hunk that reaches the end of the file)
//! *** End Patch
//! ```
//!
//! Written from the format's public description. Lenient where models commonly
//! slip and the intent is unambiguous: blanks around marker lines, a first hunk
//! without its `@@`, an empty line inside a hunk (an empty context line), a
//! patch without its final newline. Everything else is refused with the line
//! number and what was expected there.

use serde::Serialize;

use crate::edit::{Edit, EditOutcome, MatchTier};

mod apply;

pub use apply::{HunkError, HunkMatch, PatchedFile, apply_hunks};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// A parsed patch: the file operations in the order they were given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// One entry per `*** Add/Delete/Update File:` section.
    pub files: Vec<FilePatch>,
}

/// One file's section of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePatch {
    /// The path as written after the marker.
    pub path: String,
    /// 1-based line of the patch where the section starts.
    pub line: usize,
    /// What happens to the file.
    pub change: FileChange,
}

/// What a patch does to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileChange {
    /// A new file with these contents (every `+` line, each ending in a newline).
    Add {
        /// The new file's text.
        contents: String,
    },
    /// The file is removed.
    Delete,
    /// The file is changed by hunks and possibly moved.
    Update {
        /// `*** Move to:` target, if any.
        move_to: Option<String>,
        /// The hunks, in order.
        hunks: Vec<Hunk>,
    },
}

/// One `@@` hunk of an update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// The text after `@@`, when given (a line of the file before the hunk).
    pub header: Option<String>,
    /// 1-based line of the patch where the hunk starts.
    pub line: usize,
    /// Every line of the hunk with its role, in order.
    pub lines: Vec<HunkLine>,
    /// Context and removed lines, in order: the text the hunk replaces.
    pub old_lines: Vec<String>,
    /// Context and added lines, in order: the text that replaces it.
    pub new_lines: Vec<String>,
    /// The hunk ended with `*** End of File`.
    pub end_of_file: bool,
}

/// One line of a hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HunkLine {
    /// ` line`: kept.
    Context(String),
    /// `-line`: removed.
    Remove(String),
    /// `+line`: added.
    Add(String),
}

/// A patch that cannot be parsed: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("patch line {line}: {message}")]
pub struct PatchError {
    /// 1-based line of the patch.
    pub line: usize,
    /// What was wrong there and what is expected.
    pub message: String,
}

fn error(line: usize, message: impl Into<String>) -> PatchError {
    PatchError {
        line,
        message: message.into(),
    }
}

/// Parses a patch envelope.
///
/// # Errors
///
/// [`PatchError`] naming the first line that does not fit the format, with what was
/// expected there.
pub fn parse_patch(text: &str) -> Result<Patch, PatchError> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    // Skip leading blank lines; the envelope must open the patch.
    let mut index = lines
        .iter()
        .position(|line| !line.trim().is_empty())
        .ok_or_else(|| {
            error(
                1,
                format!("the patch is empty; it must start with '{BEGIN}'"),
            )
        })?;
    if lines[index].trim() != BEGIN {
        return Err(error(
            index + 1,
            format!(
                "expected '{BEGIN}', found '{}'",
                crate::clip_line(lines[index], 80).0
            ),
        ));
    }
    index += 1;
    let mut files = Vec::new();
    loop {
        let Some(line) = lines.get(index) else {
            return Err(error(
                index,
                format!("the patch ends without '{END}'; close it with that line"),
            ));
        };
        let marker = line.trim_end();
        if marker.trim() == END {
            let rest = lines[index + 1..].iter().position(|l| !l.trim().is_empty());
            if let Some(offset) = rest {
                return Err(error(
                    index + offset + 2,
                    format!("text after '{END}'; the patch must end there"),
                ));
            }
            break;
        }
        if let Some(path) = marker.strip_prefix(ADD) {
            let (contents, next) = parse_add(&lines, index + 1)?;
            files.push(file(path, index, FileChange::Add { contents })?);
            index = next;
        } else if let Some(path) = marker.strip_prefix(DELETE) {
            files.push(file(path, index, FileChange::Delete)?);
            index += 1;
        } else if let Some(path) = marker.strip_prefix(UPDATE) {
            let start = index;
            index += 1;
            let mut move_to = None;
            if let Some(target) = lines
                .get(index)
                .and_then(|l| l.trim_end().strip_prefix(MOVE))
            {
                if target.trim().is_empty() {
                    return Err(error(index + 1, "'*** Move to:' needs a path"));
                }
                move_to = Some(target.trim().to_owned());
                index += 1;
            }
            let (hunks, next) = parse_hunks(&lines, index)?;
            if hunks.is_empty() && move_to.is_none() {
                return Err(error(
                    start + 1,
                    format!(
                        "'{UPDATE}{}' has no hunks; add '@@' hunks with ' ', '-' and '+' lines",
                        path.trim()
                    ),
                ));
            }
            files.push(file(path, start, FileChange::Update { move_to, hunks })?);
            index = next;
        } else if marker.trim().is_empty() {
            index += 1;
        } else {
            return Err(error(
                index + 1,
                format!(
                    "expected '{ADD}PATH', '{DELETE}PATH', '{UPDATE}PATH' or '{END}', found '{}'",
                    crate::clip_line(line, 80).0
                ),
            ));
        }
    }
    if files.is_empty() {
        return Err(error(2, "the patch changes no file"));
    }
    Ok(Patch { files })
}

fn file(path: &str, index: usize, change: FileChange) -> Result<FilePatch, PatchError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(error(index + 1, "the file marker needs a path after ': '"));
    }
    Ok(FilePatch {
        path: path.to_owned(),
        line: index + 1,
        change,
    })
}

fn is_marker(line: &str) -> bool {
    line.trim_start().starts_with("*** ")
}

/// The `+` lines of an added file, up to the next marker.
fn parse_add(lines: &[&str], mut index: usize) -> Result<(String, usize), PatchError> {
    let mut contents = String::new();
    while let Some(line) = lines.get(index) {
        if is_marker(line) {
            break;
        }
        match line.strip_prefix('+') {
            Some(text) => {
                contents.push_str(text);
                contents.push('\n');
            }
            None => {
                return Err(error(
                    index + 1,
                    "every line of an added file must start with '+'",
                ));
            }
        }
        index += 1;
    }
    Ok((contents, index))
}

/// The hunks of an update, up to the next file marker or the end of the patch.
fn parse_hunks(lines: &[&str], mut index: usize) -> Result<(Vec<Hunk>, usize), PatchError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    while let Some(line) = lines.get(index) {
        let trimmed = line.trim();
        if trimmed == END_OF_FILE {
            match hunks.last_mut() {
                Some(hunk) if !hunk.end_of_file => hunk.end_of_file = true,
                _ => {
                    return Err(error(index + 1, format!("'{END_OF_FILE}' must end a hunk")));
                }
            }
            index += 1;
            continue;
        }
        if is_marker(line) {
            break;
        }
        if let Some(header) = line.trim_end().strip_prefix("@@") {
            let header = header.trim();
            hunks.push(Hunk {
                header: (!header.is_empty()).then(|| header.to_owned()),
                line: index + 1,
                lines: Vec::new(),
                old_lines: Vec::new(),
                new_lines: Vec::new(),
                end_of_file: false,
            });
            index += 1;
            continue;
        }
        let hunk = match hunks.last_mut() {
            Some(hunk) if !hunk.end_of_file => hunk,
            Some(_) => {
                return Err(error(
                    index + 1,
                    format!("a hunk line after '{END_OF_FILE}'; start a new hunk with '@@'"),
                ));
            }
            // The first hunk may omit its '@@'.
            None => {
                hunks.push(Hunk {
                    header: None,
                    line: index + 1,
                    lines: Vec::new(),
                    old_lines: Vec::new(),
                    new_lines: Vec::new(),
                    end_of_file: false,
                });
                hunks
                    .last_mut()
                    .ok_or_else(|| error(index + 1, "no hunk"))?
            }
        };
        if line.is_empty() {
            // A blank line inside a hunk is an empty context line whose ' ' was lost.
            hunk.old_lines.push(String::new());
            hunk.new_lines.push(String::new());
            hunk.lines.push(HunkLine::Context(String::new()));
        } else if let Some(text) = line.strip_prefix(' ') {
            hunk.old_lines.push(text.to_owned());
            hunk.new_lines.push(text.to_owned());
            hunk.lines.push(HunkLine::Context(text.to_owned()));
        } else if let Some(text) = line.strip_prefix('-') {
            hunk.old_lines.push(text.to_owned());
            hunk.lines.push(HunkLine::Remove(text.to_owned()));
        } else if let Some(text) = line.strip_prefix('+') {
            hunk.new_lines.push(text.to_owned());
            hunk.lines.push(HunkLine::Add(text.to_owned()));
        } else {
            return Err(error(
                index + 1,
                format!(
                    "a hunk line must start with ' ' (context), '-' (remove) or '+' (add), found '{}'",
                    crate::clip_line(line, 80).0
                ),
            ));
        }
        index += 1;
    }
    // A trailing blank line before the next marker is layout, not context.
    for hunk in &mut hunks {
        while hunk.old_lines.last().is_some_and(String::is_empty)
            && hunk.new_lines.last().is_some_and(String::is_empty)
            && hunk.old_lines.len() > 1
        {
            hunk.old_lines.pop();
            hunk.new_lines.pop();
            hunk.lines.pop();
        }
        if hunk.old_lines.is_empty() && hunk.new_lines.is_empty() {
            return Err(error(
                hunk.line,
                "an empty hunk; give it ' ', '-' or '+' lines",
            ));
        }
    }
    Ok((hunks, index))
}

/// Builds the edits for a file's hunks (pure additions are handled apart).
fn hunk_edit(hunk: &Hunk) -> Edit {
    let mut old_text = hunk.old_lines.join("\n");
    old_text.push('\n');
    let mut new_text = hunk.new_lines.join("\n");
    if !hunk.new_lines.is_empty() {
        new_text.push('\n');
    }
    Edit { old_text, new_text }
}

/// The rung a hunk matched on, for hosts that report it.
pub(crate) fn tier_of(outcome: &EditOutcome, index: usize) -> Option<MatchTier> {
    outcome
        .matches
        .iter()
        .find(|found| found.index == index)
        .map(|found| found.tier)
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
