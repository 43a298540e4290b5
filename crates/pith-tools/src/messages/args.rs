//! The argument pipeline (`args.rs`): every tool's invalid-argument message.
//! One message names every problem, each a field and what was expected, then
//! the shape of the expected arguments.

use serde_json::Value;

/// The whole message: `problems` joined, then the expected shape (none
/// when `signature` is empty).
pub(crate) fn invalid(tool: &str, problems: &[String], signature: &str) -> String {
    let mut message = format!(
        "Invalid arguments for tool \"{tool}\": {}.",
        problems.join("; ")
    );
    if !signature.is_empty() {
        message.push_str("\nExpected arguments: ");
        message.push_str(signature);
    }
    message
}

/// The field name of the arguments as a whole.
pub(crate) const ARGUMENTS: &str = "arguments";

/// A value of the wrong JSON type (`expected` is a schema type name).
pub(crate) fn wrong_type(name: &str, expected: &str, value: &Value) -> String {
    format!(
        "{name} must be {}, got {}",
        describe_type(expected),
        describe(value)
    )
}

/// A number below the schema's `minimum`.
pub(crate) fn below_minimum(name: &str, minimum: f64, number: f64) -> String {
    format!("{name} must be at least {minimum}, got {number}")
}

/// A number at or below the schema's `exclusiveMinimum`.
pub(crate) fn not_above(name: &str, exclusive: f64, number: f64) -> String {
    format!("{name} must be greater than {exclusive}, got {number}")
}

/// A string that is not one of the schema's `enum` (`options` as JSON).
pub(crate) fn not_one_of(name: &str, options: &[String], value: &Value) -> String {
    format!(
        "{name} must be one of {}, got {}",
        options.join(", "),
        describe(value)
    )
}

/// A required field that is absent or null (`expected` is a schema type name).
pub(crate) fn required(field: &str, expected: &str) -> String {
    format!("{field} is required ({})", describe_type(expected))
}

/// A key the schema does not know, with the closest known one if any
/// (without one, the expected shape after the problems lists them).
pub(crate) fn unknown_field(shown: &str, close: Option<&str>) -> String {
    match close {
        Some(close) => format!("unknown field {shown} (did you mean {close}?)"),
        None => format!("unknown field {shown}"),
    }
}

/// The unknown fields past those named.
pub(crate) fn more_unknown(count: usize) -> String {
    format!("and {count} more unknown fields")
}

/// A schema type, as a model reads it.
fn describe_type(expected: &str) -> &'static str {
    match expected {
        "object" => "an object",
        "array" => "an array",
        "string" => "a string",
        "boolean" => "true or false",
        "integer" => "an integer",
        "number" => "a number",
        _ => "a value",
    }
}

/// A value as a model reads it: strings clipped to 40 characters and quoted.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => {
            let clipped: String = text.chars().take(40).collect();
            let more = if clipped.len() < text.len() {
                "…"
            } else {
                ""
            };
            format!("{:?}", format!("{clipped}{more}"))
        }
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}
