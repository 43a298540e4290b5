//! pith's types to MCP's: tool definitions for `tools/list`, results for `tools/call`.

use std::sync::Arc;

use pith_tools::{Content, ToolDefinition, ToolResult};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// The `_meta` key of a `tools/call` result that holds the tool's details (diff, patch,
/// truncation, fullOutputPath, exitCode, match tiers): for a UI, never for the model.
pub const DETAILS_META_KEY: &str = "pith/details";

/// A tool definition as MCP lists it.
pub(crate) fn tool(definition: &ToolDefinition) -> Tool {
    let schema: JsonObject = match &definition.input_schema {
        Value::Object(schema) => schema.clone(),
        _ => JsonObject::from_iter([("type".to_owned(), json!("object"))]),
    };
    let hints = definition.annotations;
    let annotations = ToolAnnotations::with_title(definition.title)
        .read_only(hints.read_only)
        .destructive(hints.destructive)
        .idempotent(hints.idempotent)
        .open_world(false);
    let meta = MetaObject(JsonObject::from_iter([
        (
            "pith/promptSnippet".to_owned(),
            json!(definition.prompt_snippet),
        ),
        (
            "pith/promptGuidelines".to_owned(),
            json!(definition.prompt_guidelines),
        ),
    ]));
    Tool::new(definition.name, definition.description, Arc::new(schema))
        .with_title(definition.title)
        .with_annotations(annotations)
        .with_meta(meta)
}

/// A tool result as MCP returns it: the model's parts as content, details in `_meta`.
pub(crate) fn call_result(result: ToolResult) -> CallToolResult {
    let content = result.content.into_iter().map(content_block).collect();
    let mut call = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if let Some(details) = result.details {
        call = call.with_meta(Some(MetaObject(JsonObject::from_iter([(
            DETAILS_META_KEY.to_owned(),
            details,
        )]))));
    }
    call
}

fn content_block(content: Content) -> ContentBlock {
    match content {
        Content::Text { text } => ContentBlock::text(text),
        Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puts_details_in_meta_and_never_in_the_content() {
        let result = ToolResult::error("boom").with_details(json!({"exitCode": 3}));
        let value = serde_json::to_value(call_result(result)).unwrap();
        assert_eq!(value["isError"], true);
        assert_eq!(value["content"], json!([{"type": "text", "text": "boom"}]));
        assert_eq!(value["_meta"]["pith/details"], json!({"exitCode": 3}));
    }

    #[test]
    fn returns_images_as_image_content() {
        let result = ToolResult {
            content: vec![Content::Image {
                data: "aGk=".to_owned(),
                mime_type: "image/png".to_owned(),
            }],
            details: None,
            is_error: false,
        };
        let value = serde_json::to_value(call_result(result)).unwrap();
        assert_eq!(
            value["content"],
            json!([{"type": "image", "data": "aGk=", "mimeType": "image/png"}])
        );
        assert!(value.get("_meta").is_none());
    }
}
