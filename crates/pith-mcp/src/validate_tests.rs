use serde_json::json;

use super::*;

fn tools() -> Vec<String> {
    vec!["read".to_owned(), "bash".to_owned()]
}

/// The reply a message gets: (id, code, message).
fn reply(message: Value) -> (Value, i64, String) {
    match check(&message, &tools()) {
        Err(Problem::Reply { id, code, message }) => (id, code, message),
        other => panic!("expected a reply, got {other:?}"),
    }
}

#[test]
fn passes_well_formed_messages() {
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "read", "arguments": {"path": "f"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read"}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": "read", "arguments": null}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 1.0, "method": "ping"}),
    ] {
        assert_eq!(check(&message, &tools()), Ok(()), "{message}");
    }
}

#[test]
fn names_a_tool_call_argument_that_is_not_an_object() {
    let (id, code, message) = reply(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                           "params": {"name": "read", "arguments": ["f"]}}));
    assert_eq!((id, code), (json!(7), INVALID_PARAMS));
    assert_eq!(
        message,
        "Invalid params for tools/call: `arguments` must be an object of the tool's \
         arguments, got an array"
    );
}

#[test]
fn names_a_missing_or_mistyped_tool_name_and_lists_the_tools() {
    let (_, code, message) = reply(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                          "params": {"name": 5}}));
    assert_eq!(code, INVALID_PARAMS);
    assert_eq!(
        message,
        "Invalid params for tools/call: `name` must be a string naming a tool (read, bash), got 5"
    );
    let (_, _, message) = reply(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                       "params": {"arguments": {}}}));
    assert!(message.contains("`name` is missing"), "{message}");
}

#[test]
fn names_missing_or_mistyped_params() {
    let (_, code, message) = reply(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}));
    assert_eq!(code, INVALID_PARAMS);
    assert!(message.contains("`params` is missing"), "{message}");
    let (_, code, message) =
        reply(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": "x"}));
    assert_eq!(code, INVALID_PARAMS);
    assert_eq!(
        message,
        "Invalid params for tools/list: `params` must be an object, got a string (\"x\")"
    );
}

#[test]
fn answers_an_id_that_is_an_object_or_array_with_id_null() {
    for bad in [
        json!({"a": 1}),
        json!([1]),
        Value::Null,
        json!(true),
        json!(1.5),
    ] {
        let (id, code, message) = reply(json!({"jsonrpc": "2.0", "id": bad, "method": "ping"}));
        assert_eq!((id, code), (Value::Null, INVALID_REQUEST), "{bad}");
        assert!(
            message.contains("`id` must be a string or an integer"),
            "{message}"
        );
    }
}

#[test]
fn names_what_is_wrong_with_the_envelope() {
    let cases = [
        (json!(42), "must be an object, got 42"),
        (json!([]), "an empty batch"),
        (
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
            "batches",
        ),
        (
            json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
            "`jsonrpc` must be \"2.0\"",
        ),
        (json!({"id": 1, "method": "ping"}), "`jsonrpc` is missing"),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": 5}),
            "`method` must be a string, got 5",
        ),
        (json!({"jsonrpc": "2.0", "id": 1}), "needs a `method`"),
        (json!({"jsonrpc": "2.0"}), "needs a `method`"),
    ];
    for (message, expected) in cases {
        let (_, code, text) = reply(message.clone());
        assert_eq!(code, INVALID_REQUEST, "{message}");
        assert!(text.contains(expected), "{message}: {text}");
        assert_eq!(text.lines().count(), 1, "{text}");
    }
}

#[test]
fn drops_a_broken_notification_without_an_answer() {
    let message = json!({"jsonrpc": "2.0", "method": 5});
    assert!(matches!(check(&message, &tools()), Err(Problem::Drop(_))));
}

#[test]
fn clips_a_huge_method_name_in_messages() {
    let message = method_not_found_message(&"x".repeat(100_000));
    assert!(message.len() < 200, "{message}");
    assert!(message.starts_with("Method not found: xxx"), "{message}");
}

#[test]
fn explains_a_lone_surrogate_in_a_parse_error() {
    let line = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#;
    let error = serde_json::from_slice::<Value>(line).unwrap_err();
    let message = parse_error_message(&error);
    assert!(
        message.starts_with("Parse error: the line is not valid JSON: "),
        "{message}"
    );
    assert!(message.contains("lone surrogate"), "{message}");
}
