//! Bad input: a table of malformed calls sent to one `pith mcp` in raw JSON-RPC
//! (and a sample through `pith batch`). Each answer is an error result (or a JSON-RPC
//! error for protocol garbage) of one to three lines that names what is wrong, and the
//! server answers a ping after each.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{PATIENCE, PITH, Server};

/// The longest acceptable error text.
const MAX_MESSAGE_BYTES: usize = 4096;

/// What a malformed line must get back.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// A JSON-RPC `error` object.
    RpcError,
    /// Either of the two.
    Either,
    /// Nothing (a notification, or garbage a server may ignore); a ping must still work.
    Nothing,
}

/// One malformed input: a label, the raw line (with `ID` standing for its id), what
/// it gets, and a word the message must contain.
struct Case {
    label: String,
    line: Vec<u8>,
    expect: Expect,
    mention: Option<String>,
}

fn call(label: &str, tool: &str, arguments: Value, mention: &str) -> Case {
    let line = json!({"jsonrpc": "2.0", "id": "ID", "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}});
    Case {
        label: format!("{tool}: {label}"),
        line: line.to_string().into_bytes(),
        expect: Expect::ToolError,
        mention: (!mention.is_empty()).then(|| mention.to_owned()),
    }
}

fn raw(label: &str, line: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        label: label.to_owned(),
        line: line.into(),
        expect,
        mention: None,
    }
}

/// The table: over a hundred malformed calls.
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Wrong types, missing fields, bad numbers, per tool.
    // (A number or a bool is coerced to a string path, as in Pi: not malformed.)
    let wrong_paths: [(&str, Value); 2] = [
        ("path is an array", json!(["a"])),
        ("path is an object", json!({"p": 1})),
    ];
    for tool in ["read", "write", "edit", "ls"] {
        for (label, path) in &wrong_paths {
            let mut arguments =
                json!({"path": path, "content": "x", "edits": [{"oldText": "a", "newText": "b"}]});
            if tool == "ls" || tool == "read" {
                arguments = json!({"path": path});
            }
            cases.push(call(label, tool, arguments, "path"));
        }
        cases.push(call(
            "NUL in the path",
            tool,
            json!({"path": "a\u{0}b", "content": "x", "edits": [{"oldText": "a", "newText": "b"}]}),
            "",
        ));
        cases.push(call("path is 1 MB", tool, json!({"path": "p".repeat(1 << 20), "content": "x", "edits": [{"oldText": "a", "newText": "b"}]}), ""));
    }
    for (label, offset) in [
        ("offset is text", json!("abc")),
        ("offset is negative", json!(-1)),
        ("offset is huge", json!(1e300)),
        ("offset is fractional", json!(1.5)),
        ("offset is 2^64", json!(18_446_744_073_709_551_616_f64)),
        ("offset is -2^63-1", json!(-9_223_372_036_854_775_809_f64)),
        ("offset is an array", json!([1])),
        ("offset is beyond the file", json!(1_000_000)),
    ] {
        cases.push(call(
            label,
            "read",
            json!({"path": "f.txt", "offset": offset}),
            "offset",
        ));
    }
    for (label, limit) in [
        ("limit is zero", json!(0)),
        ("limit is negative", json!(-5)),
        ("limit is text", json!("x")),
        ("limit is an object", json!({})),
    ] {
        for tool in ["read", "grep", "find", "ls"] {
            let mut arguments = json!({"path": "f.txt", "pattern": "a", "limit": limit});
            if tool == "ls" {
                arguments = json!({"path": ".", "limit": limit});
            } else if tool == "find" {
                arguments = json!({"pattern": "*", "limit": limit});
            }
            cases.push(call(label, tool, arguments, "limit"));
        }
    }
    cases.push(call("missing path", "read", json!({}), "path"));
    cases.push(call(
        "missing content",
        "write",
        json!({"path": "n.txt"}),
        "content",
    ));
    cases.push(call(
        "content is an array",
        "write",
        json!({"path": "n.txt", "content": ["x"]}),
        "content",
    ));
    cases.push(call(
        "content is null",
        "write",
        json!({"path": "n.txt", "content": null}),
        "content",
    ));
    cases.push(call(
        "missing path",
        "write",
        json!({"content": "x"}),
        "path",
    ));
    cases.push(call(
        "missing edits",
        "edit",
        json!({"path": "f.txt"}),
        "edits",
    ));
    cases.push(call(
        "edits is not JSON",
        "edit",
        json!({"path": "f.txt", "edits": "not json"}),
        "edits",
    ));
    cases.push(call(
        "edits is empty",
        "edit",
        json!({"path": "f.txt", "edits": []}),
        "",
    ));
    cases.push(call(
        "edit is empty",
        "edit",
        json!({"path": "f.txt", "edits": [{}]}),
        "oldText",
    ));
    cases.push(call(
        "oldText is a number",
        "edit",
        json!({"path": "f.txt", "edits": [{"oldText": 1, "newText": "b"}]}),
        "oldText",
    ));
    cases.push(call(
        "edits is a number",
        "edit",
        json!({"path": "f.txt", "edits": 7}),
        "edits",
    ));
    cases.push(call(
        "oldText not found",
        "edit",
        json!({"path": "f.txt", "edits": [{"oldText": "zzz", "newText": "b"}]}),
        "f.txt",
    ));
    cases.push(call(
        "oldText is empty",
        "edit",
        json!({"path": "f.txt", "edits": [{"oldText": "", "newText": "b"}]}),
        "",
    ));
    cases.push(call("missing command", "bash", json!({}), "command"));
    cases.push(call(
        "command is an object",
        "bash",
        json!({"command": {"run": "ls"}}),
        "command",
    ));
    cases.push(call(
        "command is null",
        "bash",
        json!({"command": null}),
        "command",
    ));
    for (label, timeout) in [
        ("timeout is text", json!("abc")),
        ("timeout is negative", json!(-1)),
        ("timeout is zero", json!(0)),
        ("timeout is an array", json!([1])),
        ("timeout is NaN text", json!("NaN")),
    ] {
        cases.push(call(
            label,
            "bash",
            json!({"command": "true", "timeout": timeout}),
            "timeout",
        ));
    }
    cases.push(call("missing pattern", "grep", json!({}), "pattern"));
    cases.push(call(
        "pattern is an array",
        "grep",
        json!({"pattern": ["a"]}),
        "pattern",
    ));
    cases.push(call(
        "pattern does not compile",
        "grep",
        json!({"pattern": "("}),
        "",
    ));
    cases.push(call(
        "context is text",
        "grep",
        json!({"pattern": "a", "context": "x"}),
        "context",
    ));
    cases.push(call(
        "context is negative",
        "grep",
        json!({"pattern": "a", "context": -2}),
        "context",
    ));
    cases.push(call(
        "glob is an object",
        "grep",
        json!({"pattern": "a", "glob": {}}),
        "glob",
    ));
    cases.push(call(
        "path is missing",
        "grep",
        json!({"pattern": "a", "path": "nope/"}),
        "nope",
    ));
    cases.push(call("missing pattern", "find", json!({}), "pattern"));
    cases.push(call(
        "glob does not compile",
        "find",
        json!({"pattern": "a[" }),
        "",
    ));
    cases.push(call(
        "path is a file",
        "find",
        json!({"pattern": "*", "path": "f.txt"}),
        "f.txt",
    ));
    cases.push(call(
        "path is missing",
        "ls",
        json!({"path": "nope"}),
        "nope",
    ));
    // Unknown tools.
    for name in ["nope", "", "READ", "read ", "x".repeat(10_000).as_str()] {
        cases.push(call(
            "unknown tool",
            name,
            json!({}),
            if name.is_empty() { "" } else { "not found" },
        ));
    }
    // Arguments of the wrong shape.
    for (label, arguments) in [
        ("arguments is an array", json!(["f.txt"])),
        ("arguments is a string", json!("f.txt")),
        ("arguments is a number", json!(7)),
        ("arguments is null", Value::Null),
        ("arguments is true", json!(true)),
    ] {
        let mut case = call(label, "read", arguments, "arguments");
        case.expect = Expect::Either;
        cases.push(case);
    }
    // Broken params of tools/call.
    for (label, params, mention) in [
        ("params missing", None, "params"),
        ("params is an array", Some(json!(["read"])), "params"),
        ("name missing", Some(json!({"arguments": {}})), "name"),
        (
            "name is a number",
            Some(json!({"name": 5, "arguments": {}})),
            "name",
        ),
        ("params is a string", Some(json!("read")), "params"),
    ] {
        let mut message = json!({"jsonrpc": "2.0", "id": "ID", "method": "tools/call"});
        if let Some(params) = params {
            message["params"] = params;
        }
        let mut case = raw(label, message.to_string(), Expect::Either);
        case.mention = Some(mention.to_owned());
        cases.push(case);
    }
    // Invalid UTF-8 and lone surrogates.
    let surrogate = br#"{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"read","arguments":{"path":"\ud800.txt"}}}"#;
    cases.push(raw(
        "lone surrogate in a path",
        surrogate.to_vec(),
        Expect::Either,
    ));
    let surrogate = br#"{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"bash","arguments":{"command":"echo \udfff"}}}"#;
    cases.push(raw(
        "lone low surrogate in a command",
        surrogate.to_vec(),
        Expect::Either,
    ));
    let surrogate = br#"{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"\ud800","arguments":{}}}"#;
    cases.push(raw(
        "lone surrogate in a tool name",
        surrogate.to_vec(),
        Expect::Either,
    ));
    let mut invalid = br#"{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"read","arguments":{"path":""#.to_vec();
    invalid.extend_from_slice(b"\xff\xfe.txt\"}}}");
    cases.push(raw(
        "invalid UTF-8 bytes in a path",
        invalid,
        Expect::Either,
    ));
    cases.push(raw(
        "invalid UTF-8 garbage",
        b"\xc3\x28\xa0\xa1".to_vec(),
        Expect::Either,
    ));
    // Protocol garbage.
    for (label, line) in [
        ("an open brace", "{"),
        (
            "a truncated request",
            r#"{"jsonrpc":"2.0","id":"ID","method":"pi"#,
        ),
        ("plain text", "hello server"),
        ("a bare number", "42"),
        ("a bare string", "\"tools/call\""),
        ("null", "null"),
        ("an empty array", "[]"),
        ("an array of numbers", "[1,2,3]"),
        (
            "trailing garbage",
            r#"{"jsonrpc":"2.0","id":"ID","method":"ping"} x"#,
        ),
        (
            "a number too big for f64",
            r#"{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"read","arguments":{"path":"f.txt","offset":1e400}}}"#,
        ),
        (
            "a control character in a string",
            "{\"jsonrpc\":\"2.0\",\"id\":\"ID\",\"method\":\"ping\u{1}\"}",
        ),
    ] {
        cases.push(raw(label, line, Expect::Either));
    }
    for (label, message) in [
        (
            "an unknown method",
            json!({"jsonrpc": "2.0", "id": "ID", "method": "tools/destroy"}),
        ),
        (
            "the method is a number",
            json!({"jsonrpc": "2.0", "id": "ID", "method": 5}),
        ),
        ("no method", json!({"jsonrpc": "2.0", "id": "ID"})),
        (
            "jsonrpc 1.0",
            json!({"jsonrpc": "1.0", "id": "ID", "method": "ping"}),
        ),
        ("no jsonrpc", json!({"id": "ID", "method": "tools/list"})),
        (
            "the id is an object",
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
        ),
        (
            "the id is an array",
            json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
        ),
        (
            "resources/read unsupported",
            json!({"jsonrpc": "2.0", "id": "ID", "method": "resources/read", "params": {"uri": "file:///etc/passwd"}}),
        ),
        (
            "prompts/get unsupported",
            json!({"jsonrpc": "2.0", "id": "ID", "method": "prompts/get", "params": {"name": "x"}}),
        ),
        (
            "initialize again",
            json!({"jsonrpc": "2.0", "id": "ID", "method": "initialize", "params": {}}),
        ),
        (
            "a batch of requests",
            json!([{"jsonrpc": "2.0", "id": "ID", "method": "ping"}]),
        ),
    ] {
        cases.push(raw(label, message.to_string(), Expect::Either));
    }
    for (label, message) in [
        (
            "an unknown notification",
            json!({"jsonrpc": "2.0", "method": "notifications/whatever"}),
        ),
        (
            "a cancel of nothing",
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}),
        ),
        (
            "a cancel with bad params",
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 5}),
        ),
        (
            "a response to nothing",
            json!({"jsonrpc": "2.0", "id": "ID", "result": {}}),
        ),
        (
            "an error to nothing",
            json!({"jsonrpc": "2.0", "id": "ID", "error": {"code": 1, "message": "x"}}),
        ),
        (
            "a progress notification",
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}),
        ),
    ] {
        cases.push(raw(label, message.to_string(), Expect::Nothing));
    }
    // Deep nesting: past serde_json's recursion limit, and just under it.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{{"name":"read","arguments":{{"path":{}1{}}}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    cases.push(raw("arguments nested 100,000 deep", deep, Expect::Either));
    let nested = format!(
        r#"{{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{{"name":"read","arguments":{{"path":{}1{}}}}}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    cases.push(raw("a path nested 100 deep", nested, Expect::Either));
    cases
}

/// Big cases, sent on their own: 100 MB arguments.
fn huge_cases() -> Vec<Case> {
    let big = "x".repeat(100 << 20);
    vec![
        // A path is echoed in errors: 10 MB is enough to show an unbounded echo.
        call(
            "a 10 MB path",
            "read",
            json!({"path": "x".repeat(10 << 20)}),
            "",
        ),
        call(
            "a 100 MB unknown field",
            "bash",
            json!({"command": "true", "timeout": "x", "junk": big}),
            "timeout",
        ),
        call(
            "a 100 MB oldText",
            "edit",
            json!({"path": "f.txt", "edits": [{"oldText": big, "newText": ""}]}),
            "",
        ),
    ]
}

/// The text of an answer, and whether it is the expected kind.
fn answer_text(response: &Value) -> Option<(Expect, String)> {
    if let Some(error) = response.get("error") {
        return Some((
            Expect::RpcError,
            error["message"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    let result = response.get("result")?;
    if result["isError"] != json!(true) {
        return None;
    }
    let text: Vec<&str> = result["content"]
        .as_array()?
        .iter()
        .filter_map(|part| part["text"].as_str())
        .collect();
    Some((Expect::ToolError, text.join("\n")))
}

fn check(case: &Case, response: Option<Value>) -> Result<String, String> {
    let Some(response) = response else {
        return match case.expect {
            Expect::Nothing => Ok("(no answer)".to_owned()),
            _ => Err("no answer".to_owned()),
        };
    };
    let Some((kind, text)) = answer_text(&response) else {
        return Err(format!("not an error: {}", clip(&response.to_string())));
    };
    match (case.expect, kind) {
        (Expect::Either | Expect::Nothing, _) => {}
        (expected, got) if expected == got => {}
        (expected, got) => {
            return Err(format!(
                "expected {expected:?}, got {got:?}: {}",
                clip(&text)
            ));
        }
    }
    let lines = text.trim_end().lines().count();
    if text.trim().is_empty() || lines > 3 {
        return Err(format!("{lines} lines: {}", clip(&text)));
    }
    // One to three lines a model can read, not an echo of a huge argument.
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(format!("{} bytes: {}", text.len(), clip(&text)));
    }
    if let Some(word) = &case.mention
        && !text.to_lowercase().contains(&word.to_lowercase())
    {
        return Err(format!("does not mention {word:?}: {}", clip(&text)));
    }
    for dump in ["panicked", "Unsupported", "FsError", "Os {", "kind:"] {
        if text.contains(dump) {
            return Err(format!("contains {dump:?}: {}", clip(&text)));
        }
    }
    Ok(clip(&text))
}

fn clip(text: &str) -> String {
    let mut clipped: String = text.chars().take(200).collect();
    if clipped.len() < text.len() {
        clipped.push_str(&format!("… ({} bytes)", text.len()));
    }
    clipped
}

/// Sends each case with a fresh id, checks the answer, then pings.
fn run_table(
    server: &mut Server,
    cases: &[Case],
    first_id: i64,
    patience: Duration,
) -> Vec<String> {
    let mut failures = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let id = format!("bad-{}", first_id + index as i64);
        let line = replace_id(&case.line, &id);
        let start = Instant::now();
        server.send_raw(&line);
        let limit = match case.expect {
            Expect::Nothing => Duration::from_millis(200),
            _ => patience,
        };
        // Garbage without a usable id is answered with id null.
        let response = server.response_to_any(&[json!(id), Value::Null], limit);
        let outcome = check(case, response);
        eprintln!(
            "{:44} | {:6.0?} | {:?}",
            case.label,
            start.elapsed(),
            outcome
        );
        if let Err(why) = outcome {
            failures.push(format!("{}: {why}", case.label));
        }
        server.assert_alive(1_000_000 + first_id + index as i64, &case.label);
    }
    failures
}

fn replace_id(line: &[u8], id: &str) -> Vec<u8> {
    let needle = b"\"ID\"";
    let quoted = format!("\"{id}\"");
    let mut out = Vec::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.windows(needle.len()).position(|w| w == needle) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(quoted.as_bytes());
        rest = &rest[at + needle.len()..];
    }
    out.extend_from_slice(rest);
    out
}

fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("f.txt"), "alpha\nbeta\n").unwrap();
    dir
}

#[test]
fn a_hundred_malformed_calls_each_get_a_short_error_and_the_server_keeps_answering() {
    let dir = workspace();
    let cases = cases();
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let mut server = Server::start(&dir);
    let failures = run_table(&mut server, &cases, 0, Duration::from_secs(5));
    assert!(
        failures.is_empty(),
        "{} of {} malformed calls were answered badly:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    // Nothing was written by the bad calls.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "alpha\nbeta\n"
    );
}

#[test]
fn hundred_megabyte_arguments_get_a_short_error_and_the_server_keeps_answering() {
    let dir = workspace();
    let cases = huge_cases();
    let mut server = Server::start(&dir);
    let failures = run_table(&mut server, &cases, 500, PATIENCE);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn malformed_batch_lines_each_get_an_error_line_and_the_batch_goes_on() {
    let dir = workspace();
    let lines: Vec<String> = vec![
        "{".into(),
        "[]".into(),
        "42".into(),
        r#"{"id":1}"#.into(),
        r#"{"id":2,"tool":5,"args":{}}"#.into(),
        r#"{"id":3,"tool":"nope","args":{}}"#.into(),
        r#"{"id":4,"tool":"read","args":[]}"#.into(),
        r#"{"id":5,"tool":"read","args":{"path":"f.txt","offset":-1}}"#.into(),
        r#"{"id":6,"tool":"read","args":{"path":"\ud800"}}"#.into(),
        r#"{"id":7,"tool":"bash","args":{"command":"true","timeout":"x"}}"#.into(),
        r#"{"id":8,"tool":"edit","args":{"path":"f.txt","edits":"zz"}}"#.into(),
        r#"{"id":9,"tool":"read","args":{"path":"f.txt"}}"#.into(),
    ];
    let mut input = lines.join("\n").into_bytes();
    input.extend_from_slice(b"\n\xff\xfe\n");
    let mut child = Command::new(PITH)
        .args(["batch"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child.wait().unwrap();
    let answers: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), lines.len() + 1, "{out}");
    for (index, answer) in answers.iter().enumerate() {
        let text = answer["content"][0]["text"].as_str().unwrap_or_default();
        eprintln!("batch line {} | {}", index + 1, clip(text));
        let lines_in_text = text.trim_end().lines().count();
        if index == lines.len() - 1 {
            assert_eq!(answer["isError"], json!(false), "{answer}");
            continue;
        }
        assert_eq!(
            answer["isError"],
            json!(true),
            "line {}: {answer}",
            index + 1
        );
        assert!(
            (1..=3).contains(&lines_in_text),
            "line {}: {text}",
            index + 1
        );
    }
}
