//! pith's types to MCP's: tool definitions for `tools/list`, results for `tools/call`.

use std::sync::Arc;

use pith_tools::{Content, ToolDefinition, ToolResult};
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, MetaObject, Resource, Tool, ToolAnnotations,
};
use serde_json::{Value, json};

/// The `_meta` key of a `tools/call` result that holds the tool's details (diff, patch,
/// truncation, fullOutputPath, exitCode, match tiers): for a UI, never for the model.
pub const DETAILS_META_KEY: &str = "pith/details";

/// A tool definition as MCP lists it; `network_denied` makes no tool open-world.
pub(crate) fn tool(definition: &ToolDefinition, network_denied: bool) -> Tool {
    let schema: JsonObject = match &definition.input_schema {
        Value::Object(schema) => schema.clone(),
        _ => JsonObject::from_iter([("type".to_owned(), json!("object"))]),
    };
    let hints = definition.annotations;
    let annotations = ToolAnnotations::with_title(definition.title)
        .read_only(hints.read_only)
        .destructive(hints.destructive)
        .idempotent(hints.idempotent)
        .open_world(hints.open_world && !network_denied);
    let output_schema: JsonObject = match &definition.output_schema {
        Value::Object(schema) => schema.clone(),
        _ => JsonObject::from_iter([("type".to_owned(), json!("object"))]),
    };
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
        .with_raw_output_schema(Arc::new(output_schema))
        .with_meta(meta)
}

/// A tool result as MCP returns it: the model's parts as content, the typed result as
/// `structuredContent`, details in `_meta`, and a resource link to a full-output file.
pub(crate) fn call_result(result: ToolResult) -> CallToolResult {
    let mut content: Vec<ContentBlock> = result.content.into_iter().map(content_block).collect();
    if let Some(path) = full_output_path(result.details.as_ref()) {
        content.push(output_link(path));
    }
    let mut call = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if let Some(structured) = result.structured {
        call.structured_content = Some(structured);
    }
    if let Some(details) = result.details {
        call = call.with_meta(Some(MetaObject(JsonObject::from_iter([(
            DETAILS_META_KEY.to_owned(),
            details,
        )]))));
    }
    call
}

/// The full-output file a result points at, if any.
pub(crate) fn full_output_path(details: Option<&Value>) -> Option<&str> {
    details?.get("fullOutputPath")?.as_str()
}

/// A resource link to a full-output file (`resources/read` serves it).
fn output_link(path: &str) -> ContentBlock {
    let name = path.rsplit('/').next().unwrap_or(path).to_owned();
    let mut resource = Resource::new(file_uri(path), name)
        .with_description("The command's full output (resources/read serves it in pages)");
    resource.mime_type = Some("text/plain".to_owned());
    ContentBlock::resource_link(resource)
}

/// `file://` and the path, percent-encoding what a URI cannot hold.
pub(crate) fn file_uri(path: &str) -> String {
    let mut uri = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
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
            structured: None,
        };
        let value = serde_json::to_value(call_result(result)).unwrap();
        assert_eq!(
            value["content"],
            json!([{"type": "image", "data": "aGk=", "mimeType": "image/png"}])
        );
        assert!(value.get("_meta").is_none());
    }
}
