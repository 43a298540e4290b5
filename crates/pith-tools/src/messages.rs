//! Every text a model can see from a tool that is not the tool's output
//! itself: errors, notices and hints, one section per tool, so that a
//! reviewer reads them all in one place. The tools call into these; the
//! texts are pinned by the insta snapshots (tests/snapshots.rs) and the
//! tests that name them.

/// The pipeline's own texts (every tool).
pub(crate) mod pipeline {
    /// A before-hook moved a `write`/`edit` call to another file.
    pub(crate) fn moved_by_hook(tool: &str) -> String {
        format!(
            "A before_tool_call hook changed the path of this {tool} call; hooks may rewrite the arguments of write and edit but not their path (the call is approved inside that file's queue). Block the call instead."
        )
    }
}

/// Paths, for every tool that takes one (`paths.rs` calls these).
pub(crate) mod paths {
    use std::fmt::Display;

    /// A path argument longer than any real path.
    pub(crate) fn too_long(shown: &str, bytes: usize, max: usize) -> String {
        format!(
            "The path {shown} is {bytes} bytes long; a path has at most {max} bytes. Send the file's real path."
        )
    }

    /// A path argument with a NUL byte (`shown` has it as `\\0`).
    pub(crate) fn nul_byte(shown: &str) -> String {
        format!("Invalid path {shown}: it contains a NUL byte. Send the path without it.")
    }

    /// `~` without a home directory.
    pub(crate) fn no_home(path: &str) -> String {
        format!("Cannot expand {path}: no home directory is known. Use an absolute path.")
    }

    /// A `file://` URL that is not one of a local file.
    pub(crate) fn invalid_file_url(input: &str, why: &str) -> String {
        format!(
            "Invalid file URL {input}: {why}. Send a plain path or a URL like file:///home/me/a.txt."
        )
    }

    /// A path that resolved outside the workspace roots.
    pub(crate) fn outside_roots(path: impl Display) -> String {
        format!(
            "{path} is outside the workspace (it resolved outside the roots when it was opened). Use a path inside them."
        )
    }

    /// A device, socket or FIFO where a regular file was expected.
    pub(crate) fn special_file(path: impl Display, kind: &str) -> String {
        format!(
            "{path} is a {kind}, not a regular file; the file tools neither read nor replace special files."
        )
    }

    /// A not-found message with the similar names of its directory.
    pub(crate) fn similar_names(lead: &str, parent: impl Display, similar: &[String]) -> String {
        format!("{lead}\nSimilar names in {parent}: {}", similar.join(", "))
    }

    /// A not-found message with paths under the working directory that
    /// have the missing file's name.
    pub(crate) fn did_you_mean(message: &str, elsewhere: &[String]) -> String {
        format!("{message}\nDid you mean {}?", elsewhere.join(" or "))
    }
}

/// `grep` (`tools/grep.rs`); its notices go inside `[...]` after the matches,
/// joined by ". ".
pub(crate) mod grep {
    /// The result when nothing matched.
    pub(crate) const NO_MATCHES: &str = "No matches found";

    /// The output hit its byte cap before the match limit.
    pub(crate) fn output_limit(shown: usize, size: &str, at: &str) -> String {
        format!(
            "Showing {shown} matches, output limit {size} reached{at}; narrow with path or glob"
        )
    }

    /// The search stopped at the match limit.
    pub(crate) fn match_limit(limit: usize) -> String {
        format!(
            "{limit} matches limit reached. Use limit={} for more, or refine pattern",
            limit.saturating_mul(2)
        )
    }

    /// Some lines were clipped; one was longer than grep keeps, so bash shows it.
    pub(crate) fn long_line_clipped(max_chars: usize, number: u64, path: &str) -> String {
        format!(
            "Some lines truncated to {max_chars} chars. See a long line with bash, e.g. sed -n '{number}p' {path} | cut -c1-2000"
        )
    }

    /// Some lines were clipped; read shows them whole.
    pub(crate) fn lines_clipped(max_chars: usize) -> String {
        format!("Some lines truncated to {max_chars} chars. Use read tool to see full lines")
    }

    /// Files searched only up to their first NUL byte.
    pub(crate) fn binary(names: &str) -> String {
        format!(
            "Binary data from the first NUL byte on ({names}): only the lines before it were searched"
        )
    }

    /// Files skipped for a line too long to search.
    pub(crate) fn oversized(
        files: &str,
        size: &str,
        names: &str,
        them: &str,
        first: &str,
    ) -> String {
        format!(
            "Skipped {files} with a line over {size} ({names}): search {them} with bash, e.g. grep -o -m 5 'pattern' {first} | cut -c1-500"
        )
    }

    /// grep and find: the output hit its byte cap.
    pub(crate) fn byte_limit(size: &str) -> String {
        format!("{size} limit reached")
    }

    /// A search root that does not exist (similar names are added after).
    pub(crate) fn path_not_found(path: impl std::fmt::Display) -> String {
        format!("Path not found: {path}")
    }

    /// A pattern the regex engine refused.
    pub(crate) fn invalid_regex(reason: &str) -> String {
        format!(
            "Invalid regex: {reason}. Fix the pattern, or set literal: true to search for the text as written."
        )
    }
}

/// `find` (`tools/find.rs`); it shares grep's byte-limit notice and search errors.
pub(crate) mod find {
    /// The result when nothing matched.
    pub(crate) const NO_FILES: &str = "No files found matching pattern";

    /// The search root is a file.
    pub(crate) fn not_a_directory(path: impl std::fmt::Display) -> String {
        format!("Not a directory: {path}. find searches a directory; use read for a file.")
    }

    /// The search stopped at the result limit.
    pub(crate) fn result_limit(limit: usize) -> String {
        format!(
            "{limit} results limit reached. Use limit={} for more, or refine pattern",
            limit.saturating_mul(2)
        )
    }
}

/// `ls` (`tools/ls.rs`); its notices go inside `[...]` after the listing.
pub(crate) mod ls {
    use std::fmt::Display;

    /// The listing of an empty directory.
    pub(crate) const EMPTY: &str = "(empty directory)";

    /// The path is a file.
    pub(crate) fn not_a_directory(path: impl Display) -> String {
        format!("Not a directory: {path}")
    }

    /// The directory does not exist (similar names are added after).
    pub(crate) fn not_found(path: impl Display) -> String {
        format!("Path not found: {path}")
    }

    /// The directory could not be listed.
    pub(crate) fn cannot_read(reason: &str) -> String {
        format!("Cannot read directory: {reason}")
    }

    /// The listing stopped at the entry limit.
    pub(crate) fn entry_limit(limit: u64, more: u64) -> String {
        format!("{limit} entries limit reached. Use limit={more} for more")
    }
}

/// `read` (`tools/read.rs`; the text window's notices are in `tools/read/text.rs`).
pub(crate) mod read {
    use std::fmt::Display;

    /// The file does not exist (similar names are added after).
    pub(crate) fn not_found(path: impl Display) -> String {
        format!("File not found: {path}")
    }

    /// The path is a directory.
    pub(crate) fn directory(path: impl Display) -> String {
        format!("{path} is a directory; read only reads files. Use ls to list it.")
    }

    /// The path is a FIFO, socket or device.
    pub(crate) fn special(path: impl Display, kind: &str) -> String {
        format!("{path} is not a regular file ({kind}); read only reads files.")
    }

    /// A file that is not text.
    pub(crate) fn binary(raw_path: &str, size: &str, quoted: &str) -> String {
        format!(
            "{raw_path} is a binary file ({size}); read cannot show it. Inspect it with bash, e.g. xxd {quoted} | head."
        )
    }

    /// An image too large to attach.
    pub(crate) fn image_too_large(mime: &str, size: &str, max: &str) -> String {
        format!(
            "Read image file [{mime}]\n[Image omitted: the file is {size}, more than the {max} an image may have to be attached.]"
        )
    }

    /// The image decoder's task failed.
    pub(crate) fn image_failed(path: impl Display) -> String {
        format!("Could not process the image {path}")
    }
}

/// `write` (`tools/write.rs`).
pub(crate) mod write {
    use std::fmt::Display;

    /// An encoding name write does not know.
    pub(crate) fn unknown_encoding(raw: &str, label: &str) -> String {
        format!(
            "Cannot write {raw}: unknown encoding {label:?}. Use a name such as utf-8, utf-8-bom, utf-16le, utf-16be, windows-1252, shift_jis, euc-jp, gbk, gb18030, big5, euc-kr or koi8-r."
        )
    }

    /// The path is a directory.
    pub(crate) fn directory(raw: &str, path: impl Display) -> String {
        format!("Cannot write {raw}: {path} is a directory. Write to a file path inside it.")
    }

    /// The path cannot be written (`reason`: one line from the file system).
    pub(crate) fn cannot_write(raw: &str, reason: &str) -> String {
        format!("Cannot write {raw}: {reason}")
    }

    /// A parent of the path is a file.
    pub(crate) fn parent_is_file(raw: &str, path: impl Display) -> String {
        format!("Cannot write {raw}: a parent of {path} is a file, not a directory.")
    }

    /// The parent directories could not be made.
    pub(crate) fn cannot_create_dir(raw: &str, parent: impl Display, reason: &str) -> String {
        format!("Cannot write {raw}: could not create the directory {parent}: {reason}.")
    }

    /// The write itself failed (the file is as it was).
    pub(crate) fn write_failed(raw: &str, reason: &str) -> String {
        format!("Could not write {raw}: {reason}")
    }

    /// An existing file the session has not read (overwrite policy).
    pub(crate) fn not_read(raw: &str) -> String {
        format!(
            "{raw} already exists and has not been read in this session. Read it first, then write it (or use edit for targeted changes)."
        )
    }

    /// A file that changed since the session read it.
    pub(crate) fn changed_since_read(raw: &str, detail: &str) -> String {
        format!(
            "{raw} has changed since this session last read it. Read it again before overwriting it.\n{detail}"
        )
    }
}

/// `bash` (`tools/bash/mod.rs`; output notices are in `tools/bash/output.rs`).
pub(crate) mod bash {
    use std::fmt::Display;

    /// A `yield` that is not a positive number of seconds.
    pub(crate) const BAD_YIELD: &str = "yield must be a number of seconds greater than 0 (e.g. 5).";

    /// The result of a command that printed nothing.
    pub(crate) const NO_OUTPUT: &str = "(no output)";

    /// The command was cancelled.
    pub(crate) const ABORTED: &str = "Command aborted";

    /// A non-zero exit.
    pub(crate) fn exited(code: i32) -> String {
        format!("Command exited with code {code}")
    }

    /// The command ran out of time.
    pub(crate) fn timed_out(seconds: &str) -> String {
        format!("Command timed out after {seconds} seconds")
    }

    /// A failed command's output looks like the read-only sandbox refused it.
    pub(crate) fn denied_read_only(network: &str) -> String {
        format!(
            "The sandbox (read-only) may have denied this: commands may not write any file{network}. \
             The user can widen it by restarting pith with --sandbox workspace-write or --sandbox off."
        )
    }

    /// A failed command's output looks like the workspace-write sandbox refused it.
    pub(crate) fn denied_workspace_write(places: &str, network: &str) -> String {
        format!(
            "The sandbox (workspace-write) may have denied this: commands may write only under {places}, and .git/ is read-only{network}. \
             The user can widen it by restarting pith with --allow-write cargo|npm|pip|go|cache|DIR, --root DIR or --sandbox off."
        )
    }

    /// A failed command's output looks like the network denial refused it.
    pub(crate) fn denied_network(network: &str) -> String {
        format!(
            "The sandbox may have denied this{network}. The user can lift it by restarting pith without --deny-network."
        )
    }

    /// The working directory is gone.
    pub(crate) fn missing_cwd(cwd: impl Display) -> String {
        format!("Working directory does not exist: {cwd}\nCannot execute bash commands.")
    }

    /// The configured shell does not exist.
    pub(crate) fn shell_not_found(shell: impl Display) -> String {
        format!("Shell not found: {shell}. Configure a shell that exists, or install bash.")
    }
}

/// `jobs` (`tools/jobs.rs`).
pub(crate) mod jobs {
    /// A session without jobs.
    pub(crate) const NONE: &str =
        "This session has no jobs; start one with bash and background, yield or tty.";

    /// The `list` result of a session without jobs.
    pub(crate) const NONE_LISTED: &str = "No jobs in this session.";

    /// A `wait` that is not a number of seconds.
    pub(crate) const BAD_WAIT: &str = "wait must be a number of seconds (0 or more).";

    /// `input` without `text`.
    pub(crate) const INPUT_WITHOUT_TEXT: &str = "input needs text: the characters to send, e.g. {\"action\":\"input\",\"id\":1,\"text\":\"y\\n\"}.";

    /// The session's job ids.
    pub(crate) fn known(ids: &[String]) -> String {
        format!("Jobs of this session: {}.", ids.join(", "))
    }

    /// An action without the job's id.
    pub(crate) fn needs_id(known: &str) -> String {
        format!("This action needs the job's id. {known}")
    }

    /// An id that names no job of the session.
    pub(crate) fn no_such_job(shown: &str, known: &str) -> String {
        format!("No job {shown} in this session. {known}")
    }

    /// An `until` pattern the regex engine refused.
    pub(crate) fn invalid_until(reason: &str) -> String {
        format!(
            "Invalid until regex: {reason}. Give a regular expression (Rust syntax), e.g. \"Serving HTTP\"."
        )
    }

    /// A kill that has not finished in time.
    pub(crate) fn still_killing(id: u32, seconds: u64) -> String {
        format!("job {id} is still being killed after {seconds}s; check jobs list shortly.")
    }
}

/// `edit`.
pub(crate) mod edit {
    use std::fmt::Write as _;

    use pith_text::{ClosestFragment, EditError};

    /// Fragment lines shown in a not-found message at most.
    const SHOWN_FRAGMENT_LINES: usize = 12;
    /// Characters of one fragment line shown at most.
    const SHOWN_LINE_CHARS: usize = 200;

    /// The edit engine's refusal, in one to three lines naming the edit's
    /// arguments: `path` is the path as the model gave it, `edit_count` the
    /// number of edits (a single edit is "the text" and `oldText`, several are
    /// `edits[i]` and `edits[i].oldText`). A not-found message shows the
    /// closest fragment with its line number, an ambiguity the lines of the
    /// first occurrences, and each says what to do next.
    pub(crate) fn engine_error(error: &EditError, path: &str, edit_count: usize) -> String {
        let single = edit_count <= 1;
        let edit = |index: &usize| {
            if single {
                "the text".to_owned()
            } else {
                format!("edits[{index}]")
            }
        };
        let old_text = |index: &usize| {
            if single {
                "oldText".to_owned()
            } else {
                format!("edits[{index}].oldText")
            }
        };
        match error {
            EditError::NoEdits => {
                "Edit tool input is invalid. edits must contain at least one replacement."
                    .to_owned()
            }
            EditError::EmptyOldText { index } => format!(
                "{} must not be empty in {path}. Put the exact text to replace in it.",
                old_text(index)
            ),
            EditError::NotFound { index, closest } => {
                let mut message = if single {
                    format!("Could not find the exact text in {path}.")
                } else {
                    format!("Could not find edits[{index}] in {path}.")
                };
                match closest {
                    Some(closest) => write_closest(&mut message, closest),
                    None => message.push_str(
                        " No text in it is close to that; grep for a distinctive part of it \
                         to find where it is.",
                    ),
                }
                let _ = write!(
                    message,
                    "\nRead the file again and retry with the exact text of {}, \
                     including whitespace and newlines.",
                    old_text(index)
                );
                message
            }
            EditError::Ambiguous {
                index,
                count,
                lines,
            } => {
                let mut distinct = lines.clone();
                distinct.dedup();
                let mut shown: Vec<String> = distinct.iter().map(ToString::to_string).collect();
                if *count > lines.len() {
                    shown.push("...".to_owned());
                }
                format!(
                    "Found {count} occurrences of {} in {path} (starting at lines {}). \
                     {} must match exactly once: add surrounding lines to make it unique.",
                    edit(index),
                    shown.join(", "),
                    old_text(index),
                )
            }
            EditError::AmbiguousIndentation {
                index,
                start_line,
                lines,
                new_line,
            } => {
                let count = lines.split('\n').count();
                let place = if count > 1 {
                    format!("lines {start_line}-{}", start_line + count - 1)
                } else {
                    format!("line {start_line}")
                };
                let new_text = if single {
                    "newText".to_owned()
                } else {
                    format!("edits[{index}].newText")
                };
                let mut message = format!(
                    "{} matches {place} of {path} only when indentation is ignored, and the \
                     depth of line {new_line} of {new_text} is ambiguous. The file's lines are:",
                    old_text(index)
                );
                write_lines(&mut message, lines);
                let _ = write!(
                    message,
                    "\nRetry with {} and {new_text} indented exactly as in the file.",
                    old_text(index)
                );
                message
            }
            EditError::Overlap { first, second } => format!(
                "edits[{first}] and edits[{second}] overlap in {path}. \
                 Merge them into one edit or target disjoint regions."
            ),
            EditError::NoChange if single => format!(
                "No changes made to {path}. The replacement produced identical content. \
                 Make newText differ from the text it replaces."
            ),
            EditError::NoChange => format!(
                "No changes made to {path}. The replacements produced identical content. \
                 Make each newText differ from the text it replaces."
            ),
            other => format!("Could not edit {path}: {other}."),
        }
    }

    fn write_closest(message: &mut String, closest: &ClosestFragment) {
        let count = closest.text.split('\n').count();
        let last = closest.start_line + count.saturating_sub(1);
        let place = if count > 1 {
            format!("lines {}-{last}", closest.start_line)
        } else {
            format!("line {}", closest.start_line)
        };
        let percent = (closest.similarity * 100.0).round();
        let _ = write!(
            message,
            " The most similar text ({percent}% similar) is at {place}:"
        );
        write_lines(message, &closest.text);
    }

    /// Appends the first lines of `text`, one per line, clipped.
    fn write_lines(message: &mut String, text: &str) {
        let count = text.split('\n').count();
        for line in text.split('\n').take(SHOWN_FRAGMENT_LINES) {
            let (line, _) = pith_text::clip_line(line, SHOWN_LINE_CHARS);
            let _ = write!(message, "\n{line}");
        }
        if count > SHOWN_FRAGMENT_LINES {
            let _ = write!(
                message,
                "\n[... {} more lines]",
                count - SHOWN_FRAGMENT_LINES
            );
        }
    }
}

/// `apply_patch`.
pub(crate) mod apply_patch {
    use std::fmt::Display;
    use std::fmt::Write as _;

    use pith_text::{EditError, HunkError};

    /// A hunk the engine refused, in one to three lines: which file, which
    /// hunk, the closest text when nothing matched, and what to do next.
    pub(crate) fn hunk_error(error: &HunkError, path: &str) -> String {
        let hunk = format!("hunk {} (patch line {})", error.index + 1, error.line);
        let mut message = match &error.error {
            EditError::NotFound { .. } => {
                format!("Could not find the context and '-' lines of {hunk} in {path}.")
            }
            EditError::Ambiguous { count, lines, .. } => {
                let shown: Vec<String> = lines.iter().map(ToString::to_string).collect();
                format!(
                    "The context of {hunk} occurs {count} times in {path} (at lines {}); add context lines or an '@@ line' naming a line above it to make it unique.",
                    shown.join(", ")
                )
            }
            EditError::NoChange => {
                format!("{hunk} of {path} changes nothing; give it '-' or '+' lines.")
            }
            other => format!(
                "{hunk} of {path}: {}",
                super::edit::engine_error(other, path, 1)
            ),
        };
        if let EditError::NotFound {
            closest: Some(closest),
            ..
        } = &error.error
        {
            let _ = write!(
                message,
                " The closest text starts at line {} ({:.0}% similar):\n{}",
                closest.start_line,
                closest.similarity * 100.0,
                closest.text
            );
        }
        message.push_str("\nRead the file again and retry the whole patch with its exact lines; no file was changed.");
        message
    }

    /// A before-hook's rewrite has no `patch` string.
    pub(crate) const HOOK_REWRITE_NOT_A_PATCH: &str = "A before_tool_call hook rewrote a section of this apply_patch call without a 'patch' string; hooks may rewrite one file's section or block the call. No file was changed.";

    /// A before-hook's rewrite of a file's section does not parse.
    pub(crate) fn hook_rewrite_invalid(error: impl Display) -> String {
        format!(
            "A before_tool_call hook rewrote a section of this apply_patch call into an invalid patch ({error}). No file was changed."
        )
    }

    /// A before-hook's rewrite names another file than the section it approved.
    pub(crate) fn hook_rewrite_moved(path: &str) -> String {
        format!(
            "A before_tool_call hook changed which file the apply_patch section for {path} changes; hooks may rewrite a file's section but not its path (it is approved inside that file's queue). Block the call instead. No file was changed."
        )
    }
}

#[cfg(test)]
mod tests;
