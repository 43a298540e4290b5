//! How results look on stdout: model-facing text for people, JSON for scripts.

use pith_tools::{Content, ToolResult};
use serde_json::{Value, json};

/// The model-facing text: text parts as they are, an image as a one-line placeholder.
/// Ends with a newline unless empty.
pub(crate) fn text(result: &ToolResult) -> String {
    let mut out = String::new();
    for part in &result.content {
        match part {
            Content::Text { text } => out.push_str(text),
            Content::Image { data, mime_type } => {
                out.push_str(&format!(
                    "[image: {mime_type}, {} bytes base64]",
                    data.len()
                ));
            }
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// `{"content":[...],"details":...,"isError":...}`.
pub(crate) fn json(result: &ToolResult) -> Value {
    json!({
        "content": result.content,
        "details": result.details,
        "isError": result.is_error,
    })
}

/// One `pith batch` output line: the result with the call's id first.
pub(crate) fn batch_line(id: &Value, result: &ToolResult) -> String {
    /// The line's fields, borrowed: serialised straight to text, without a
    /// copy of the content as a `Value` first.
    #[derive(serde::Serialize)]
    struct Line<'a> {
        id: &'a Value,
        content: &'a [Content],
        details: &'a Option<Value>,
        #[serde(rename = "isError")]
        is_error: bool,
    }
    let line = Line {
        id,
        content: &result.content,
        details: &result.details,
        is_error: result.is_error,
    };
    // Sized for the content at once: grown from serde_json's 128 bytes, a
    // page of text was copied four times over.
    let text: usize = result
        .content
        .iter()
        .map(|part| match part {
            Content::Text { text } => text.len(),
            Content::Image { data, .. } => data.len(),
        })
        .sum();
    let mut out = Vec::with_capacity(text + text / 8 + 96);
    let written = serde_json::to_writer(&mut out, &line).map(|()| String::from_utf8(out));
    written.ok().and_then(Result::ok).unwrap_or_else(|| {
        json!({
            "id": id,
            "content": result.content,
            "details": result.details,
            "isError": result.is_error,
        })
        .to_string()
    })
}

/// One `pith batch` entry: a JSON line, or with `text` the result's text under a
/// `== ID TOOL ==` header (`== ID TOOL: error ==` for an error).
pub(crate) fn batch_entry(id: &Value, tool: &str, result: &ToolResult, text: bool) -> String {
    if !text {
        return batch_line(id, result);
    }
    let id = match id {
        Value::String(id) => id.clone(),
        other => other.to_string(),
    };
    let status = if result.is_error { ": error" } else { "" };
    let tool = if tool.is_empty() {
        String::new()
    } else {
        format!(" {tool}")
    };
    let body = self::text(result);
    format!(
        "== {id}{tool}{status} ==\n{}",
        body.strip_suffix('\n').unwrap_or(&body)
    )
}

/// The display diff in `details.diff`, if the result has one.
pub(crate) fn diff(result: &ToolResult) -> Option<&str> {
    result.details.as_ref()?.get("diff")?.as_str()
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// `text` in red (each line, so that a pager keeps the colour).
pub(crate) fn red(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        out.push_str(RED);
        out.push_str(body);
        out.push_str(RESET);
        out.push_str(end);
    }
    out
}

/// The display diff for a person: coloured when `color`, else as it is.
pub(crate) fn diff_for_people(diff: &str, color: bool) -> String {
    if color {
        colored_diff(diff)
    } else {
        let mut out = diff.to_owned();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out
    }
}

/// The display diff with removed lines red, added lines green and context dim.
pub(crate) fn colored_diff(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    for line in diff.lines() {
        let color = match line.as_bytes().first() {
            Some(b'-') => RED,
            Some(b'+') => GREEN,
            _ => DIM,
        };
        out.push_str(color);
        out.push_str(line);
        out.push_str(RESET);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_an_image_as_a_placeholder_line() {
        let result = ToolResult {
            content: vec![
                Content::text("Read image file [image/png]"),
                Content::Image {
                    data: "aGVsbG8=".to_owned(),
                    mime_type: "image/png".to_owned(),
                },
            ],
            details: None,
            is_error: false,
            structured: None,
        };
        assert_eq!(
            text(&result),
            "Read image file [image/png]\n[image: image/png, 8 bytes base64]\n"
        );
    }

    #[test]
    fn serialises_the_result_with_camel_case_keys() {
        let result = ToolResult::error("boom").with_details(json!({"exitCode": 2}));
        assert_eq!(
            json(&result),
            json!({"content":[{"type":"text","text":"boom"}],"details":{"exitCode":2},"isError":true})
        );
        assert_eq!(
            batch_line(&json!("a"), &ToolResult::text("ok")),
            r#"{"id":"a","content":[{"type":"text","text":"ok"}],"details":null,"isError":false}"#
        );
    }

    #[test]
    fn colours_removed_and_added_lines() {
        let colored = colored_diff(" 1 a\n-2 b\n+2 c");
        assert_eq!(
            colored,
            "\x1b[2m 1 a\x1b[0m\n\x1b[31m-2 b\x1b[0m\n\x1b[32m+2 c\x1b[0m\n"
        );
    }
}
