//! `pith tools`: the tool definitions, readable for people or as JSON.

use std::fmt::Write as _;
use std::io::Write as _;

use pith_env::Env;
use pith_tools::{OverwritePolicy, ToolDefinition};
use serde_json::{Value, json};

use crate::config::ToolsConfig;

/// Prints the definitions; returns the exit status.
pub(crate) fn run(config: &ToolsConfig, env: &Env) -> anyhow::Result<i32> {
    let toolset = crate::extend::builder(env.clone(), &config.tools)
        .overwrite_policy(OverwritePolicy::RequireRead)
        .build();
    let definitions = toolset.definitions();
    let out = if config.json {
        let list: Vec<Value> = definitions.iter().map(|d| definition_json(d)).collect();
        format!("{}\n", serde_json::to_string_pretty(&list)?)
    } else {
        definitions
            .iter()
            .map(|d| definition_text(d))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush());
    Ok(0)
}

/// `pith prompt`: the system-prompt section for `tools`, as Pi builds it (the tool list
/// with one-line snippets, then the guidelines); returns the exit status.
pub(crate) fn prompt(tools: &[&str], env: &Env) -> anyhow::Result<i32> {
    let toolset = crate::extend::builder(env.clone(), tools).build();
    let out = prompt_section(&toolset.definitions());
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush());
    Ok(0)
}

/// The tools' part of a system prompt.
pub(crate) fn prompt_section(definitions: &[&ToolDefinition]) -> String {
    let mut out = String::from("Available tools:\n");
    for definition in definitions {
        let _ = writeln!(out, "- {}: {}", definition.name, definition.prompt_snippet);
    }
    let guidelines: Vec<&str> = definitions
        .iter()
        .flat_map(|definition| definition.prompt_guidelines.iter().copied())
        .collect();
    if !guidelines.is_empty() {
        out.push_str("\nGuidelines:\n");
        for guideline in guidelines {
            let _ = writeln!(out, "- {guideline}");
        }
    }
    out
}

/// A definition as JSON (the keys Pi's tool definitions use).
pub(crate) fn definition_json(definition: &ToolDefinition) -> Value {
    json!({
        "name": definition.name,
        "title": definition.title,
        "description": definition.description,
        "inputSchema": definition.input_schema,
        "promptSnippet": definition.prompt_snippet,
        "promptGuidelines": definition.prompt_guidelines,
        "annotations": {
            "readOnly": definition.annotations.read_only,
            "destructive": definition.annotations.destructive,
            "idempotent": definition.annotations.idempotent,
        },
    })
}

/// A definition for people: name, description, arguments and guidelines.
fn definition_text(definition: &ToolDefinition) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", definition.name, definition.title);
    let _ = writeln!(out, "  {}", definition.description);
    let schema = &definition.input_schema;
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(properties) = schema["properties"].as_object() {
        let _ = writeln!(out, "  Arguments:");
        for (name, property) in properties {
            let kind = type_name(property);
            let required = if required.contains(&name.as_str()) {
                ", required"
            } else {
                ""
            };
            let description = property["description"].as_str().unwrap_or("");
            let _ = writeln!(out, "    {name} ({kind}{required}): {description}");
        }
    }
    if !definition.prompt_guidelines.is_empty() {
        let _ = writeln!(out, "  Guidelines:");
        for guideline in definition.prompt_guidelines {
            let _ = writeln!(out, "    - {guideline}");
        }
    }
    out
}

fn type_name(property: &Value) -> String {
    match &property["type"] {
        Value::String(kind) if kind == "array" => match property["items"]["type"].as_str() {
            Some(item) => format!("array of {item}"),
            None => "array".to_owned(),
        },
        Value::String(kind) => kind.clone(),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_owned(),
    }
}
