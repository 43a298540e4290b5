//! The one regex matcher builder every [`Search`](crate::Search) adapter
//! uses, so a pattern compiles (or fails, with the same reason) the same way
//! whatever the adapter.

use grep::regex::{RegexMatcher, RegexMatcherBuilder};

use crate::{GrepRequest, SearchError};

/// ripgrep's default matcher: lines end at `\n`, which enables its fast line
/// search; the pattern is always a pattern, never a flag. (`rg --crlf` mode,
/// where `$` also matches before `\r\n`, breaks `$` on `\n` lines in grep-regex
/// 0.1.14, so like rg's default, `x$` does not match `x\r\n`.)
///
/// Compile memory is capped per call ([`GrepRequest::REGEX_SIZE_LIMIT`] for the
/// compiled program, [`GrepRequest::REGEX_DFA_LIMIT`] for each worker's lazy DFA
/// cache) instead of grep-regex's 100 MiB and 1000 MiB: a short pattern such as
/// `\w{500}` otherwise costs hundreds of MiB, per concurrent search.
pub(crate) fn build_matcher(request: &GrepRequest) -> Result<RegexMatcher, SearchError> {
    RegexMatcherBuilder::new()
        .case_insensitive(request.ignore_case)
        .fixed_strings(request.literal)
        .line_terminator(Some(b'\n'))
        .size_limit(GrepRequest::REGEX_SIZE_LIMIT)
        .dfa_size_limit(GrepRequest::REGEX_DFA_LIMIT)
        .build(&request.pattern)
        .map_err(|error| SearchError::InvalidPattern(regex_error(&error.to_string())))
}

/// The reason for a pattern that did not compile.
fn regex_error(message: &str) -> String {
    if message.contains("size limit") || message.contains("exceeded limit") {
        return format!(
            "the compiled pattern would need more than {} MiB; use fewer or smaller repetitions, \
             or ASCII classes ([a-zA-Z0-9_] for \\w, [0-9] for \\d)",
            GrepRequest::REGEX_SIZE_LIMIT / (1024 * 1024)
        );
    }
    short_regex_error(message)
}

/// The regex crate's reason without the pattern echo and caret lines.
fn short_regex_error(message: &str) -> String {
    let reason = message
        .lines()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .or_else(|| message.lines().map(str::trim).find(|line| !line.is_empty()))
        .unwrap_or("invalid pattern");
    let mut reason = reason.to_owned();
    if let Some((cut, _)) = reason.char_indices().nth(200) {
        reason.truncate(cut);
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_errors_are_one_short_line() {
        let message = "regex parse error:\n    (abc\n    ^\nerror: unclosed group";
        assert_eq!(short_regex_error(message), "unclosed group");
        assert_eq!(short_regex_error("something odd"), "something odd");
    }
}
