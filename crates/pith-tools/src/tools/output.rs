//! The tools' output schemas: the typed result each returns beside its text
//! ([`crate::tool::ToolResult::structured`], MCP's `structuredContent`).

use serde_json::{Value, json};

/// The JSON Schema of `tool`'s structured result.
pub(crate) fn schema(tool: &str) -> Value {
    let integer = json!({"type": "integer"});
    let boolean = json!({"type": "boolean"});
    let string = json!({"type": "string"});
    let (properties, required) = match tool {
        "read" => (
            json!({
                "path": string,
                "startLine": {"type": "integer", "description": "First line shown (1-based)"},
                "endLine": {"type": "integer", "description": "Last line shown"},
                "totalLines": {"type": "integer", "description": "Lines in the file"},
                "encoding": {"type": "string", "enum": ["utf-8", "utf-8-lossy"]},
                "truncated": boolean,
                "mimeType": {"type": "string", "description": "For an image"},
            }),
            json!(["path"]),
        ),
        "write" => (json!({"path": string, "bytes": integer}), json!(["path"])),
        "edit" => (
            json!({
                "path": string,
                "replaced": {"type": "integer", "description": "Occurrences replaced"},
                "matches": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "index": integer,
                        "tier": {"type": "string", "enum": ["exact", "normalized", "whitespace"]},
                        "startLine": integer,
                        "endLine": integer,
                    },
                    "required": ["index", "tier", "startLine", "endLine"],
                }},
                "firstChangedLine": {"type": ["integer", "null"]},
            }),
            json!(["path", "matches"]),
        ),
        "bash" => (
            json!({
                "exitCode": integer,
                "timedOut": boolean,
                "cancelled": boolean,
                "truncated": boolean,
                "fullOutputPath": string,
                "jobId": string,
                "running": boolean,
            }),
            json!(["exitCode", "timedOut", "truncated"]),
        ),
        "jobs" => (
            json!({
                "action": {"type": "string", "enum": ["list", "output", "input", "kill"]},
                "jobId": string,
                "state": {"type": "string", "enum": ["running", "exited", "killed", "failed"]},
                "exitCode": integer,
                "signal": integer,
                "truncated": boolean,
                "fullOutputPath": string,
                "jobs": {"type": "array", "items": {"type": "object"}},
            }),
            json!(["action"]),
        ),
        "grep" => (
            json!({
                "matches": integer,
                "files": integer,
                "limitReached": boolean,
                "truncated": boolean,
            }),
            json!(["matches", "truncated"]),
        ),
        "find" | "ls" => (
            json!({"count": integer, "limitReached": boolean, "truncated": boolean}),
            json!(["count", "truncated"]),
        ),
        "apply_patch" => (
            json!({
                "files": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "path": string,
                        "action": {"type": "string", "enum": ["add", "delete", "update", "move"]},
                        "movedTo": string,
                    },
                    "required": ["path", "action"],
                }},
            }),
            json!(["files"]),
        ),
        "undo" => (
            json!({
                "files": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"path": string, "outcome": string},
                    "required": ["path", "outcome"],
                }},
                "dryRun": boolean,
                "call": {"type": ["string", "null"]},
            }),
            json!(["files", "dryRun"]),
        ),
        _ => (json!({}), json!([])),
    };
    json!({"type": "object", "properties": properties, "required": required})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_with_its_required_fields() {
        for tool in crate::tools::TOOL_NAMES
            .into_iter()
            .chain(crate::tools::OPTIONAL_TOOL_NAMES)
        {
            let schema = schema(tool);
            assert_eq!(schema["type"], "object", "{tool}");
            let required = schema["required"].as_array().unwrap();
            assert!(!required.is_empty(), "{tool}");
            for field in required {
                assert!(
                    schema["properties"].get(field.as_str().unwrap()).is_some(),
                    "{tool}: {field}"
                );
            }
        }
    }
}
