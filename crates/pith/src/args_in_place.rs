//! JSON arguments parsed without a second copy of their largest string.
//!
//! `pith call write -` gets the whole file content as one JSON string on stdin.
//! Parsing that text into a [`Value`] the usual way holds the text and the
//! parsed string at once: twice the content. Here the object's members are
//! located first (borrowed [`RawValue`]s), the small ones parsed as usual, and
//! the largest string is unescaped *within the input buffer*, which then
//! becomes that string: the content is held once.
//!
//! serde_json has no in-place unescaping, so the unescaping of that one string
//! is written here (escapes are at most as long as what they stand for, so the
//! output never overtakes the input). Anything unusual (not an object, a
//! repeated key, a lone surrogate escape, small input) takes the ordinary
//! parse, so errors and results are serde_json's own.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::config::{UsageError, parse_json_args};

/// Strings shorter than this (in their JSON form) are parsed the ordinary way.
const IN_PLACE_MIN_BYTES: usize = 64 * 1024;

/// Parses `text` (JSON arguments; empty means `{}`) as [`parse_json_args`] does,
/// reusing `text`'s buffer for its largest string member.
///
/// # Errors
///
/// As [`parse_json_args`].
pub(crate) fn parse_args_in_place(text: String, origin: &str) -> Result<Value, UsageError> {
    let Some(plan) = plan(&text) else {
        return parse_json_args(&text, origin);
    };
    let mut bytes = text.into_bytes();
    let Some(len) = unescape_in_place(&mut bytes, plan.span.clone()) else {
        // Not reachable after `plan` checked the escapes; parse as usual to be sure.
        let text = String::from_utf8(bytes)
            .map_err(|error| UsageError(format!("{origin} is not valid UTF-8 ({error})")))?;
        return parse_json_args(&text, origin);
    };
    bytes.truncate(len);
    bytes.shrink_to_fit();
    let content = String::from_utf8(bytes)
        .map_err(|error| UsageError(format!("{origin} is not valid UTF-8 ({error})")))?;
    let mut object = serde_json::Map::new();
    let mut content = Some(content);
    for (key, value) in plan.members {
        match value {
            Some(value) => object.insert(key, value),
            None => object.insert(key, Value::String(content.take().unwrap_or_default())),
        };
    }
    Ok(Value::Object(object))
}

/// What [`parse_args_in_place`] will do: the members parsed (`None` for the
/// large string) and the byte span of that string's JSON text, quotes excluded.
struct Plan {
    members: Vec<(String, Option<Value>)>,
    span: std::ops::Range<usize>,
}

/// The plan for `text`, or `None` when the ordinary parse should run.
fn plan(text: &str) -> Option<Plan> {
    if text.len() < IN_PLACE_MIN_BYTES {
        return None;
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let members = (&mut deserializer).deserialize_map(MembersVisitor).ok()?;
    // Characters after the object are the ordinary parse's error.
    deserializer.end().ok()?;
    let (large, (key, raw)) = members
        .iter()
        .enumerate()
        .filter(|(_, (_, raw))| raw.get().starts_with('"'))
        .max_by_key(|(_, (_, raw))| raw.get().len())?;
    if raw.get().len() < IN_PLACE_MIN_BYTES {
        return None;
    }
    if members.iter().filter(|(name, _)| name == key).count() > 1 {
        return None;
    }
    let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
    let span = start + 1..start + raw.get().len() - 1;
    if !surrogates_paired(text.as_bytes().get(span.clone())?) {
        return None;
    }
    let mut parsed = Vec::with_capacity(members.len());
    for (index, (name, raw)) in members.iter().enumerate() {
        let value = if index == large {
            None
        } else {
            Some(serde_json::from_str(raw.get()).ok()?)
        };
        parsed.push((name.clone(), value));
    }
    Some(Plan {
        members: parsed,
        span,
    })
}

/// Collects the top-level object's members, in order, their values unparsed.
struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Vec<(String, &'de RawValue)>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut list = Vec::new();
        while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
            list.push(entry);
        }
        Ok(list)
    }
}

/// Whether every `\u` escape of a UTF-16 surrogate in the JSON string text
/// `json` is a leading one followed by a trailing one (what serde_json requires
/// of a string).
fn surrogates_paired(json: &[u8]) -> bool {
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'\\', json.get(at..).unwrap_or_default()) {
        let escape = at + found;
        match json.get(escape + 1) {
            Some(b'u') => {
                let Some(unit) = hex4(json, escape + 2) else {
                    return false;
                };
                match unit {
                    0xD800..=0xDBFF => {
                        let trailing = (json.get(escape + 6) == Some(&b'\\')
                            && json.get(escape + 7) == Some(&b'u'))
                        .then(|| hex4(json, escape + 8))
                        .flatten();
                        if !matches!(trailing, Some(0xDC00..=0xDFFF)) {
                            return false;
                        }
                        at = escape + 12;
                    }
                    0xDC00..=0xDFFF => return false,
                    _ => at = escape + 6,
                }
            }
            Some(_) => at = escape + 2,
            None => return false,
        }
    }
    true
}

/// The four hex digits at `at`.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

/// Unescapes the JSON string text at `span` of `bytes` (checked by serde_json
/// and [`surrogates_paired`]) into the start of `bytes`; returns its length.
fn unescape_in_place(bytes: &mut [u8], span: std::ops::Range<usize>) -> Option<usize> {
    let (mut read, end) = (span.start, span.end);
    let mut write = 0;
    while read < end {
        let Some(found) = memchr::memchr(b'\\', bytes.get(read..end)?) else {
            bytes.copy_within(read..end, write);
            write += end - read;
            break;
        };
        bytes.copy_within(read..read + found, write);
        write += found;
        read += found;
        let (character, used) = match *bytes.get(read + 1)? {
            b'"' => ('"', 2),
            b'\\' => ('\\', 2),
            b'/' => ('/', 2),
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => {
                let unit = hex4(bytes, read + 2)?;
                if (0xD800..=0xDBFF).contains(&unit) {
                    let low = hex4(bytes, read + 8)?;
                    let code = 0x1_0000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    (char::from_u32(code)?, 12)
                } else {
                    (char::from_u32(unit)?, 6)
                }
            }
            _ => return None,
        };
        let mut utf8 = [0; 4];
        let encoded = character.encode_utf8(&mut utf8).as_bytes();
        // An escape is at least as long as its UTF-8 encoding: `write` stays behind `read`.
        bytes
            .get_mut(write..write + encoded.len())?
            .copy_from_slice(encoded);
        write += encoded.len();
        read += used;
    }
    Some(write)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(text: &str) -> (Result<Value, String>, Result<Value, String>) {
        let ordinary = parse_json_args(text, "stdin").map_err(|error| error.0);
        let in_place = parse_args_in_place(text.to_owned(), "stdin").map_err(|error| error.0);
        (ordinary, in_place)
    }

    fn big(escaped: &str) -> String {
        escaped.repeat(IN_PLACE_MIN_BYTES / escaped.len() + 1)
    }

    #[test]
    fn a_large_string_with_every_escape_parses_as_serde_json_does() {
        let content =
            big(r#"line \"one\"\n\ttab \\ slash \/ \b\f\r é \u00e9 \u20ac \ud83d\ude00 z"#);
        let text =
            format!(r#"{{"path": "a.txt", "content": "{content}", "n": [1, {{"x": null}}]}}"#);
        let (ordinary, in_place) = both(&text);
        assert!(ordinary.is_ok());
        assert_eq!(in_place, ordinary);
        let keys: Vec<String> = in_place
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["path", "content", "n"]);
    }

    #[test]
    fn the_planned_string_is_the_largest_and_the_input_buffer_is_reused() {
        let content = big("abc");
        let text = format!(r#"  {{"a": "{}", "content": "{content}"}}  "#, big("x"));
        let plan = plan(&text).unwrap();
        assert_eq!(&text[plan.span.clone()], content);
        assert!(plan.members[1].1.is_none());
        assert_eq!(both(&text).0, both(&text).1);
    }

    #[test]
    fn unusual_input_gets_the_ordinary_result_or_error() {
        let content = big("q");
        for text in [
            format!(r#"{{"content": "{content}"}} trailing"#),
            format!(r#"{{"content": "{content}", "content": "again"}}"#),
            format!(r#"{{"content": "{content}\ud800"}}"#),
            format!(r#"{{"content": "{content}\udc00\ud800"}}"#),
            format!(r#"["{content}"]"#),
            format!(r#"{{"content": "{content}"#),
            format!(r#"{{"content": "{content}\x"}}"#),
            r#"{"small": "string"}"#.to_owned(),
            String::new(),
        ] {
            let (ordinary, in_place) = both(&text);
            assert_eq!(
                in_place,
                ordinary,
                "{}",
                &text[text.len().saturating_sub(40)..]
            );
        }
        assert!(plan(&format!(r#"{{"content": "{content}\ud800"}}"#)).is_none());
    }
}
