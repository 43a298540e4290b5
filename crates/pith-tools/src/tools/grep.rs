//! `grep`: search file contents on ripgrep's crates.

use async_trait::async_trait;
use pith_env::{GrepLine, GrepOutput, GrepRequest, SearchError};
use pith_text::{
    DEFAULT_MAX_BYTES, MAX_LINE_CHARS, TruncationLimits, clip_line, format_size, truncate_head,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Describe, READ_ONLY, define};
use crate::details::{BinaryFile, SearchDetails};
use crate::messages::grep as messages;
use crate::paths::{describe_fs_error, not_found_hint};
use crate::tool::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// Matches returned when the model gives no limit.
const DEFAULT_LIMIT: usize = 100;

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GrepArgs {
    /// Search pattern (regex or literal string)
    pattern: String,
    /// Directory or file to search (default: current directory)
    path: Option<String>,
    /// Filter files by glob pattern relative to path, e.g. '*.ts' (names at any depth) or 'src/**/*.spec.ts'
    glob: Option<String>,
    /// Case-insensitive search (default: false)
    ignore_case: Option<bool>,
    /// Treat pattern as literal string instead of regex (default: false)
    literal: Option<bool>,
    // Signed, so that a negative value gets "must be at least 0" rather than a type error.
    /// Number of lines to show before and after each match (default: 0)
    #[schemars(range(min = 0))]
    context: Option<i64>,
    /// Maximum number of matches to return (default: 100)
    #[schemars(range(min = 1))]
    limit: Option<i64>,
}

pub(crate) struct GrepTool {
    definition: ToolDefinition,
}

impl GrepTool {
    pub(crate) fn new() -> GrepTool {
        GrepTool {
            definition: define::<GrepArgs>(Describe {
                name: "grep",
                title: "Search file contents",
                description: "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.",
                prompt_snippet: "Search file contents for patterns (respects .gitignore)",
                prompt_guidelines: &[],
                annotations: READ_ONLY,
            }),
        }
    }
}

#[async_trait]
impl Tool for GrepTool {
    type Args = GrepArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(
        &self,
        args: GrepArgs,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        // The walk does not follow symlinks, so a contained root keeps the search inside.
        let root = context
            .search_root(args.path.as_deref().unwrap_or("."))
            .await?;
        let limit = args.limit.map_or(DEFAULT_LIMIT, |limit| {
            usize::try_from(limit.max(1)).unwrap_or(usize::MAX)
        });
        let request = GrepRequest {
            pattern: args.pattern,
            root,
            glob: args.glob,
            ignore_case: args.ignore_case.unwrap_or(false),
            literal: args.literal.unwrap_or(false),
            context: args.context.map_or(0, |lines| {
                usize::try_from(lines.max(0)).unwrap_or(usize::MAX)
            }),
            limit,
        };
        let base = match (&args.path, context.env.fs.metadata(&request.root).await) {
            (Some(path), Ok(metadata)) if metadata.is_file() => Base::File(path.clone()),
            (Some(path), _) if path != "." => Base::Dir(path.clone()),
            _ => Base::Cwd,
        };
        let output = match context.read_search().grep(request, cancel).await {
            Ok(output) => output,
            Err(error) => return Err(search_error(error, context).await),
        };
        let result = render(&output, limit, &base);
        let files: std::collections::HashSet<&str> =
            output.lines.iter().map(|line| line.path.as_str()).collect();
        let structured = json!({
            "matches": output.match_count,
            "files": files.len(),
            "limitReached": output.limit_reached,
            "truncated": cut(&result),
        });
        Ok(result.with_structured(structured))
    }
}

/// Whether a search result was cut (by its limit or the output cap).
pub(super) fn cut(result: &ToolOutput) -> bool {
    result.details.as_ref().is_some_and(|details| {
        ["truncation", "matchLimitReached", "resultLimitReached"]
            .iter()
            .any(|key| details.get(key).is_some())
    })
}

/// What the rows' paths are relative to, as the model named it.
pub(super) enum Base {
    /// The working directory (no path, or `.`).
    Cwd,
    /// A directory below it.
    Dir(String),
    /// A single file: every row names it.
    File(String),
}

impl Base {
    /// A row's path as the model would name it.
    fn path_of(&self, row_path: &str) -> String {
        match self {
            Base::Cwd => row_path.to_owned(),
            Base::Dir(dir) => format!("{}/{row_path}", dir.trim_end_matches('/')),
            Base::File(file) => file.clone(),
        }
    }
}

/// Rows `path:line: text` (matches) and `path-line- text` (context), then the notices.
fn render(output: &GrepOutput, limit: usize, base: &Base) -> ToolOutput {
    if output.match_count == 0 {
        let mut notices = Notices::default();
        push_oversized(&mut notices, output);
        return notices.finish(&mut messages::NO_MATCHES.to_owned());
    }
    // The first clipped line, and whether any was longer than the text grep keeps
    // (its length is then unknown, possibly more than read can show).
    let mut clipped_line: Option<(&str, u64, bool)> = None;
    let rows: Vec<String> = output
        .lines
        .iter()
        .map(|line| {
            let (text, clipped) = clip_line(&line.text, MAX_LINE_CHARS);
            if clipped {
                let long = line.text.len() >= GrepLine::MAX_TEXT_BYTES;
                match &mut clipped_line {
                    None => clipped_line = Some((&line.path, line.line_number, long)),
                    Some((path, number, any_long)) if long && !*any_long => {
                        (*path, *number, *any_long) = (&line.path, line.line_number, true);
                    }
                    Some(_) => {}
                }
            }
            let mark = if line.is_match { ':' } else { '-' };
            format!("{}{mark}{}{mark} {text}", line.path, line.line_number)
        })
        .collect();
    let mut notices = Notices::default();
    let joined = rows.join("\n");
    let truncation = truncate_head(
        &joined,
        TruncationLimits {
            max_lines: usize::MAX,
            max_bytes: DEFAULT_MAX_BYTES,
        },
    );
    if truncation.truncated {
        // The output cap came first: a higher limit cannot help, a narrower search can.
        let kept = &output.lines[..truncation.output_lines.min(output.lines.len())];
        let shown = kept.iter().filter(|line| line.is_match).count();
        let at = kept
            .last()
            .map(|line| format!(" at {}:{}", line.path, line.line_number))
            .unwrap_or_default();
        let size = format_size(DEFAULT_MAX_BYTES as u64);
        notices.push(messages::output_limit(shown, &size, &at));
        notices.details.truncation = Some(truncation.clone());
        if output.limit_reached {
            notices.details.match_limit_reached = Some(limit);
        }
    } else if output.limit_reached {
        notices.push(messages::match_limit(limit));
        notices.details.match_limit_reached = Some(limit);
    }
    let mut text = truncation.content;
    if let Some((path, number, long)) = clipped_line {
        let hint = if long {
            messages::long_line_clipped(MAX_LINE_CHARS, number, &shell_word(&base.path_of(path)))
        } else {
            messages::lines_clipped(MAX_LINE_CHARS)
        };
        notices.push(hint);
        notices.details.lines_truncated = Some(true);
    }
    push_oversized(&mut notices, output);
    push_binary(&mut notices, output);
    notices.finish(&mut text)
}

/// The notice about files with matches that turn binary: searched only up to
/// the line holding their first NUL byte, as ripgrep does.
fn push_binary(notices: &mut Notices, output: &GrepOutput) {
    if output.binary.is_empty() {
        return;
    }
    let count = output.binary_count.max(output.binary.len());
    let mut names = output
        .binary
        .iter()
        .take(OVERSIZED_SHOWN)
        .map(|file| messages::at_byte(&file.path, file.offset))
        .collect::<Vec<_>>()
        .join(", ");
    let shown = output.binary.len().min(OVERSIZED_SHOWN);
    if count > shown {
        names.push_str(&messages::and_more(count - shown));
    }
    notices.push(messages::binary(&names));
    notices.details.binary_files = Some(
        output
            .binary
            .iter()
            .map(|file| BinaryFile {
                path: file.path.clone(),
                offset: file.offset,
            })
            .collect(),
    );
}

/// Names shown in the notice about skipped files.
const OVERSIZED_SHOWN: usize = 3;

/// The notice about files skipped for a line too long to search, if any:
/// one line naming up to three of them and how to search them instead.
fn push_oversized(notices: &mut Notices, output: &GrepOutput) {
    let Some(first) = output.oversized.first() else {
        return;
    };
    let count = output.oversized_count.max(output.oversized.len());
    let mut names = output
        .oversized
        .iter()
        .take(OVERSIZED_SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    let shown = output.oversized.len().min(OVERSIZED_SHOWN);
    if count > shown {
        names.push_str(&messages::and_more(count - shown));
    }
    let (files, them) = messages::files(count);
    let size = format_size(GrepRequest::MAX_LINE_BYTES as u64);
    notices.push(messages::oversized(
        &files,
        &size,
        &names,
        them,
        &shell_word(first),
    ));
    notices.details.oversized_files = Some(output.oversized.clone());
}

/// `word` as one shell word: as is when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"._-/+,:@".contains(&byte));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The notices of a search result and their `details`.
#[derive(Default)]
pub(super) struct Notices {
    texts: Vec<String>,
    pub(super) details: SearchDetails,
}

impl Notices {
    /// Adds a notice's text; the caller sets its field of [`Notices::details`].
    pub(super) fn push(&mut self, text: String) {
        self.texts.push(text);
    }

    /// Keeps whole lines up to 50 KiB, noting a cut.
    pub(super) fn cap_bytes(&mut self, raw: &str) -> String {
        let truncation = truncate_head(
            raw,
            TruncationLimits {
                max_lines: usize::MAX,
                max_bytes: DEFAULT_MAX_BYTES,
            },
        );
        if truncation.truncated {
            let size = format_size(DEFAULT_MAX_BYTES as u64);
            self.push(messages::byte_limit(&size));
            self.details.truncation = Some(truncation.clone());
        }
        truncation.content
    }

    /// Appends `[notice. notice]` after a blank line and attaches the details.
    pub(super) fn finish(self, text: &mut String) -> ToolOutput {
        if self.texts.is_empty() {
            return ToolOutput::text(std::mem::take(text));
        }
        text.push_str("\n\n[");
        text.push_str(&self.texts.join(". "));
        text.push(']');
        ToolOutput::text(std::mem::take(text)).with_details_of(&self.details)
    }
}

/// One line naming what was wrong (plus similar names for a missing path).
pub(super) async fn search_error(error: SearchError, context: &ToolContext) -> ToolError {
    let message = match error {
        SearchError::NotFound(path) => {
            let lead = messages::path_not_found(path.display());
            not_found_hint(context, lead, &path).await
        }
        SearchError::Fs(error) => describe_fs_error(&error),
        SearchError::InvalidPattern(reason) => messages::invalid_regex(&reason),
        SearchError::Cancelled => return ToolError::aborted(),
        other => other.to_string(),
    };
    ToolError::new(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skipped_files_notice_names_three_and_counts_the_rest() {
        let output = GrepOutput {
            oversized: ["my file.txt", "b", "c", "d"].map(str::to_owned).to_vec(),
            oversized_count: 5,
            ..GrepOutput::default()
        };
        let result = render(&output, 100, &Base::Cwd);
        assert_eq!(
            result.text_content(),
            "No matches found\n\n[Skipped 5 files with a line over 16.0MB (my file.txt, b, c and 2 more): \
             search them with bash, e.g. grep -o -m 5 'pattern' 'my file.txt' | cut -c1-500]"
        );
        assert_eq!(
            result.details.unwrap()["oversizedFiles"],
            json!(["my file.txt", "b", "c", "d"])
        );
    }

    #[test]
    fn files_with_matches_before_binary_data_are_named_with_the_offset() {
        let output = GrepOutput {
            lines: vec![pith_env::GrepLine {
                path: "a.dat".to_owned(),
                line_number: 1,
                text: "needle one".to_owned(),
                is_match: true,
            }],
            match_count: 1,
            binary: vec![pith_env::BinaryFile {
                path: "a.dat".to_owned(),
                offset: 11,
            }],
            binary_count: 1,
            ..GrepOutput::default()
        };
        let result = render(&output, 100, &Base::Cwd);
        assert_eq!(
            result.text_content(),
            "a.dat:1: needle one\n\n[Binary data from the first NUL byte on (a.dat at byte 11): \
             only the lines before it were searched]"
        );
        assert_eq!(
            result.details.unwrap()["binaryFiles"],
            json!([{"path": "a.dat", "offset": 11}])
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("src/a-b_c.min.js"), "src/a-b_c.min.js");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
