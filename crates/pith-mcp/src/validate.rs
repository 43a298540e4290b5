//! The shape check [`LineTransport`](crate::LineTransport) makes before rmcp sees a
//! message, so that a malformed one gets a JSON-RPC error naming what is wrong (rmcp
//! itself would answer `Method not found` or nothing at all).
//!
//! What is checked, in order:
//!
//! - the message is one JSON object (a batch, an array, is refused: MCP over stdio since
//!   2025-06-18 sends one message per line);
//! - a request's `id` is a string or an integer (else the answer has id `null`),
//!   `jsonrpc` is `"2.0"`, `method` is a string, `params` an object when present;
//! - a `tools/call` has `params` with a string `name` and, when present and not `null`,
//!   an object `arguments` (JSON-RPC `-32602` otherwise; `"arguments": null` means no
//!   arguments, which the tool then reports field by field).
//!
//! A broken notification or response is dropped: JSON-RPC answers neither.

use serde_json::{Map, Value};

/// JSON-RPC code: the line is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC code: JSON, but not a valid request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC code: a known method with parameters of the wrong shape.
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// How many characters of a client's value an error message repeats.
const ECHO_CHARS: usize = 60;

/// What to do with a message that failed the check.
#[derive(Debug, PartialEq)]
pub(crate) enum Problem {
    /// Answer with a JSON-RPC error.
    Reply {
        /// The request's id, or `null` when it has none that is valid.
        id: Value,
        /// The JSON-RPC error code.
        code: i64,
        /// One line naming what is wrong.
        message: String,
    },
    /// Drop it (a notification or a response gets no answer); the reason, for the log.
    Drop(String),
}

/// Checks the shape of one JSON-RPC message; `tools` are the tool names, for messages.
pub(crate) fn check(message: &Value, tools: &[String]) -> Result<(), Problem> {
    let object = match message {
        Value::Object(object) => object,
        Value::Array(items) if items.is_empty() => {
            return Err(invalid(
                Value::Null,
                "an empty batch; send one JSON-RPC message (an object) per line",
            ));
        }
        Value::Array(_) => {
            return Err(invalid(
                Value::Null,
                "batches (JSON arrays) are not supported; send one JSON-RPC message (an object) per line",
            ));
        }
        other => {
            return Err(invalid(
                Value::Null,
                format!(
                    "a JSON-RPC message must be an object, got {}",
                    describe(other)
                ),
            ));
        }
    };
    let Some(id) = object.get("id") else {
        return check_notification_or_response(object);
    };
    if object.get("method").is_none() {
        if object.contains_key("result") || object.contains_key("error") {
            // A response; rmcp matches it to a request of ours or drops it.
            return Ok(());
        }
        return Err(invalid(
            reply_id(id),
            "a request needs a `method` (a string, e.g. \"tools/list\")",
        ));
    }
    check_request(object, id, tools)
}

/// A message without an id: a notification or a response to nothing; never answered.
fn check_notification_or_response(object: &Map<String, Value>) -> Result<(), Problem> {
    match object.get("method") {
        Some(Value::String(_)) if object.get("jsonrpc") == Some(&Value::from("2.0")) => Ok(()),
        Some(_) => Err(Problem::Drop(
            "a notification without `jsonrpc: \"2.0\"` or a string `method`".to_owned(),
        )),
        None if object.contains_key("result") || object.contains_key("error") => Ok(()),
        None => Err(invalid(
            Value::Null,
            "a message needs a `method` (a request or notification) or a `result`/`error` (a response)",
        )),
    }
}

fn check_request(object: &Map<String, Value>, id: &Value, tools: &[String]) -> Result<(), Problem> {
    if !is_valid_id(id) {
        return Err(invalid(
            Value::Null,
            format!("`id` must be a string or an integer, got {}", describe(id)),
        ));
    }
    let id = id.clone();
    match object.get("jsonrpc") {
        Some(Value::String(version)) if version == "2.0" => {}
        Some(other) => {
            return Err(invalid(
                id,
                format!("`jsonrpc` must be \"2.0\", got {}", describe(other)),
            ));
        }
        None => {
            return Err(invalid(
                id,
                "`jsonrpc` is missing; send \"jsonrpc\": \"2.0\"",
            ));
        }
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => method,
        other => {
            let got = other.map_or("nothing".to_owned(), describe);
            return Err(invalid(id, format!("`method` must be a string, got {got}")));
        }
    };
    if object.contains_key("result") || object.contains_key("error") {
        return Err(invalid(
            id,
            "a request cannot also carry `result` or `error`",
        ));
    }
    match object.get("params") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(other) => {
            return Err(invalid_params(
                id,
                method,
                format!("`params` must be an object, got {}", describe(other)),
            ));
        }
    }
    if method == "tools/call" {
        check_tool_call(object.get("params"), tools)
            .map_err(|why| invalid_params(id, method, why))?;
    }
    Ok(())
}

/// The `params` of a `tools/call`: what is wrong with them.
fn check_tool_call(params: Option<&Value>, tools: &[String]) -> Result<(), String> {
    let Some(Value::Object(params)) = params else {
        return Err("`params` is missing; send {\"name\": TOOL, \"arguments\": {...}}".to_owned());
    };
    let tools = tools.join(", ");
    match params.get("name") {
        Some(Value::String(_)) => {}
        Some(other) => {
            return Err(format!(
                "`name` must be a string naming a tool ({tools}), got {}",
                describe(other)
            ));
        }
        None => {
            return Err(format!(
                "`name` is missing; it names the tool to call ({tools})"
            ));
        }
    }
    match params.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => Ok(()),
        Some(other) => Err(format!(
            "`arguments` must be an object of the tool's arguments, got {}",
            describe(other)
        )),
    }
}

/// JSON-RPC ids are strings or numbers; MCP's are strings or integers.
fn is_valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(number) => {
            number.is_i64()
                || number.is_u64()
                || number.as_f64().is_some_and(|float| {
                    float.fract() == 0.0 && float.abs() < 9_007_199_254_740_992.0
                })
        }
        _ => false,
    }
}

/// The id an answer carries: the request's when it is a string or a number, else null.
pub(crate) fn reply_id(id: &Value) -> Value {
    match id {
        Value::String(_) | Value::Number(_) => id.clone(),
        _ => Value::Null,
    }
}

fn invalid(id: Value, why: impl Into<String>) -> Problem {
    Problem::Reply {
        id,
        code: INVALID_REQUEST,
        message: format!("Invalid request: {}", why.into()),
    }
}

fn invalid_params(id: Value, method: &str, why: String) -> Problem {
    Problem::Reply {
        id,
        code: INVALID_PARAMS,
        message: invalid_params_message(method, &why),
    }
}

/// The message for a line that is not JSON: serde's reason, and for text that is not
/// Unicode what a string may hold.
pub(crate) fn parse_error_message(error: &serde_json::Error) -> String {
    let reason = error.to_string();
    let hint = if reason.contains("surrogate") || reason.contains("hex escape") {
        "; a \\u escape must be a Unicode character (a lone surrogate \\ud800-\\udfff is not)"
    } else if reason.contains("unicode code point") {
        "; strings must be valid UTF-8"
    } else {
        ""
    };
    format!("Parse error: the line is not valid JSON: {reason}{hint}")
}

/// `Invalid params for <method>: <why>`.
pub(crate) fn invalid_params_message(method: &str, why: &str) -> String {
    format!("Invalid params for {}: {why}", clip(method))
}

/// The message for a method this server does not have.
pub(crate) fn method_not_found_message(method: &str) -> String {
    format!(
        "Method not found: {}. This server offers tools (tools/list, tools/call), resources/read for output files, and ping.",
        clip(method)
    )
}

/// A value as an error message mentions it: its type, and a short one in full.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => format!("a string ({:?})", clip(text)),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// At most [`ECHO_CHARS`] characters of a client's text, marked when cut.
fn clip(text: &str) -> String {
    match text.char_indices().nth(ECHO_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
