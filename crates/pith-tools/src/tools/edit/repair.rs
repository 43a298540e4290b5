//! Repairs of `edit` arguments that models commonly get wrong (reference §6.2, plus spellings).
//!
//! In order: `edits` sent as a JSON string is parsed; a single replacement
//! object is wrapped in an array; inside each replacement and at the top level
//! the spellings `old_string`/`new_string`, `old_text`/`new_text` and
//! `oldString`/`newString` become `oldText`/`newText`; a legacy top-level
//! `oldText`/`newText` pair is appended after the existing edits.

use serde_json::{Map, Value};

/// Alternative spellings and the key they stand for.
const SPELLINGS: [(&str, &str); 6] = [
    ("old_string", "oldText"),
    ("old_text", "oldText"),
    ("oldString", "oldText"),
    ("new_string", "newText"),
    ("new_text", "newText"),
    ("newString", "newText"),
];

/// Renames alternative spellings to `oldText`/`newText` (an existing key wins).
fn respell(object: &mut Map<String, Value>) {
    for (alias, key) in SPELLINGS {
        if !object.contains_key(key)
            && let Some(value) = object.remove(alias)
        {
            object.insert(key.to_owned(), value);
        }
    }
}

/// Whether `object` is one replacement: string `oldText` and `newText`.
fn is_replacement(object: &Map<String, Value>) -> bool {
    object.get("oldText").is_some_and(Value::is_string)
        && object.get("newText").is_some_and(Value::is_string)
}

/// Applies the repairs; anything that is not an object (or a JSON string of
/// one) is returned unchanged.
pub(crate) fn repair_edit_args(args: Value) -> Value {
    let args = match args {
        Value::String(text) => match serde_json::from_str(&text) {
            Ok(object @ Value::Object(_)) => object,
            _ => Value::String(text),
        },
        other => other,
    };
    let Value::Object(mut args) = args else {
        return args;
    };
    if let Some(Value::String(text)) = args.get("edits")
        && let Ok(parsed @ (Value::Array(_) | Value::Object(_))) = serde_json::from_str(text)
    {
        args.insert("edits".to_owned(), parsed);
    }
    if let Some(Value::Object(single)) = args.get_mut("edits") {
        respell(single);
        if is_replacement(single) {
            let single = Value::Object(std::mem::take(single));
            args.insert("edits".to_owned(), Value::Array(vec![single]));
        }
    }
    if let Some(Value::Array(items)) = args.get_mut("edits") {
        for item in items {
            if let Value::Object(item) = item {
                respell(item);
            }
        }
    }
    respell(&mut args);
    if is_replacement(&args) {
        let mut legacy = Map::new();
        for key in ["oldText", "newText"] {
            if let Some(value) = args.remove(key) {
                legacy.insert(key.to_owned(), value);
            }
        }
        let mut edits = match args.remove("edits") {
            Some(Value::Array(edits)) => edits,
            _ => Vec::new(),
        };
        edits.push(Value::Object(legacy));
        args.insert("edits".to_owned(), Value::Array(edits));
    }
    Value::Object(args)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parses_edits_sent_as_a_json_string() {
        let repaired = repair_edit_args(json!({
            "path": "a", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"
        }));
        assert_eq!(repaired["edits"], json!([{"oldText": "x", "newText": "y"}]));
        let single = repair_edit_args(
            json!({"path": "a", "edits": "{\"oldText\":\"x\",\"newText\":\"y\"}"}),
        );
        assert_eq!(single["edits"], json!([{"oldText": "x", "newText": "y"}]));
        let broken = repair_edit_args(json!({"path": "a", "edits": "[{"}));
        assert_eq!(broken["edits"], "[{");
    }

    #[test]
    fn wraps_a_single_object_and_fixes_spellings() {
        let repaired =
            repair_edit_args(json!({"path": "a", "edits": {"old_string": "x", "new_string": "y"}}));
        assert_eq!(repaired["edits"], json!([{"oldText": "x", "newText": "y"}]));
        let items = repair_edit_args(json!({"path": "a", "edits": [
            {"old_text": "1", "new_text": "2"},
            {"oldString": "3", "newString": "4", "extra": true}
        ]}));
        assert_eq!(
            items["edits"],
            json!([{"oldText": "1", "newText": "2"}, {"oldText": "3", "newText": "4", "extra": true}])
        );
    }

    #[test]
    fn appends_a_legacy_top_level_pair_after_the_edits() {
        let repaired = repair_edit_args(json!({
            "path": "a", "edits": [{"oldText": "1", "newText": "2"}], "old_string": "3", "new_string": "4"
        }));
        assert_eq!(
            repaired,
            json!({"path": "a", "edits": [{"oldText": "1", "newText": "2"}, {"oldText": "3", "newText": "4"}]})
        );
        let alone = repair_edit_args(json!({"path": "a", "oldText": "x", "newText": "y"}));
        assert_eq!(
            alone,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );
    }

    #[test]
    fn leaves_other_input_alone() {
        assert_eq!(repair_edit_args(json!("text")), json!("text"));
        assert_eq!(
            repair_edit_args(json!(
                "{\"path\":\"a\",\"oldText\":\"x\",\"newText\":\"y\"}"
            )),
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );
        assert_eq!(
            repair_edit_args(json!({"path": "a", "edits": []})),
            json!({"path": "a", "edits": []})
        );
        assert_eq!(
            repair_edit_args(json!({"path": "a", "oldText": "x"})),
            json!({"path": "a", "oldText": "x"})
        );
    }
}
