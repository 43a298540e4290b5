//! `pith call`, `pith batch` and `pith tools`, driven through the real binary.
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;

const ALL_TOOLS: [&str; 8] = [
    "read", "bash", "edit", "write", "grep", "find", "ls", "jobs",
];

/// Runs pith with `args`, feeding `stdin`.
fn pith(args: &[&str], stdin: &str) -> Output {
    pith_bytes(args, stdin.as_bytes())
}

/// Runs pith with `args`, feeding `stdin` (any bytes).
fn pith_bytes(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// A workspace with one file, `hello.txt`.
fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello\nworld\n").unwrap();
    dir
}

fn cwd(dir: &TempDir) -> &str {
    dir.path().to_str().unwrap()
}

fn call_json(dir: &TempDir, tool: &str, args: &Value) -> (Value, Option<i32>) {
    let output = pith(
        &["call", tool, &args.to_string(), "--json", "--cwd", cwd(dir)],
        "",
    );
    let value = serde_json::from_str(&stdout(&output)).unwrap();
    (value, output.status.code())
}

#[test]
fn call_prints_the_model_facing_text_and_exits_zero() {
    let dir = workspace();
    let output = pith(&["call", "ls", r#"{"path":"."}"#, "--cwd", cwd(&dir)], "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "hello.txt\n");
}

#[test]
fn call_json_prints_one_object_with_content_details_and_is_error() {
    let dir = workspace();
    let (value, code) = call_json(&dir, "ls", &json!({}));
    assert_eq!(code, Some(0));
    let object = value.as_object().unwrap();
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    assert_eq!(keys, ["content", "details", "isError"]);
    assert_eq!(
        value["content"],
        json!([{"type": "text", "text": "hello.txt"}])
    );
    assert!(value["details"].is_null() || value["details"].is_object());
    assert_eq!(value["isError"], false);
}

#[test]
fn call_exits_one_when_the_tool_reports_an_error() {
    let dir = workspace();
    let (value, code) = call_json(&dir, "read", &json!({"path": "missing.txt"}));
    assert_eq!(code, Some(1));
    assert_eq!(value["isError"], true);
    let text = value["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("missing.txt"), "{text}");
}

#[test]
fn call_names_the_bad_field_when_arguments_are_invalid() {
    let dir = workspace();
    let output = pith(
        &["call", "read", r#"{"offset":"ten"}"#, "--cwd", cwd(&dir)],
        "",
    );
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("path"), "{text}");
    assert!(text.contains("offset"), "{text}");
}

#[test]
fn call_reads_the_arguments_from_stdin_when_omitted_or_dash() {
    let dir = workspace();
    let args = r#"{"path":"hello.txt"}"#;
    for extra in [&[][..], &["-"][..]] {
        let mut command = vec!["call", "read"];
        command.extend_from_slice(extra);
        command.extend_from_slice(&["--cwd", cwd(&dir)]);
        let output = pith(&command, args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(stdout(&output), "hello\nworld\n");
    }
}

#[test]
fn call_exits_two_with_one_line_on_stderr_when_the_json_is_invalid() {
    let dir = workspace();
    for (args, stdin) in [
        (&["call", "ls", "{nope"][..], ""),
        (&["call", "ls"][..], "[1,"),
    ] {
        let mut command = args.to_vec();
        command.extend_from_slice(&["--cwd", cwd(&dir)]);
        let output = pith(&command, stdin);
        assert_eq!(output.status.code(), Some(2));
        assert_eq!(stdout(&output), "");
        let message = stderr(&output);
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(
            message.starts_with("error: ") && message.contains("not valid JSON"),
            "{message}"
        );
    }
}

#[test]
fn usage_errors_exit_two() {
    let dir = workspace();
    let missing = dir.path().join("no-such-dir");
    let cases: [&[&str]; 4] = [
        &["call", "ls", "{}", "--frobnicate"],
        &["call"],
        &["call", "ls", "{}", "--cwd", missing.to_str().unwrap()],
        &["nonsense"],
    ];
    for args in cases {
        let output = pith(args, "");
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(!stderr(&output).is_empty(), "{args:?}");
    }
    let output = pith(
        &["call", "ls", "{}", "--cwd", missing.to_str().unwrap()],
        "",
    );
    assert!(
        stderr(&output).contains("no such directory"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_unknown_tool_is_a_usage_error_listing_the_tools() {
    let dir = workspace();
    let output = pith(&["call", "nope", "{}", "--cwd", cwd(&dir)], "");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "");
    assert_eq!(
        stderr(&output),
        "error: unknown tool \"nope\"; the tools are read, bash, edit, write, grep, find, ls, jobs\n"
    );
}

#[test]
fn tools_flag_restricts_the_tool_set() {
    let dir = workspace();
    let output = pith(
        &[
            "call",
            "bash",
            r#"{"command":"true"}"#,
            "--tools",
            "read,ls",
            "--cwd",
            cwd(&dir),
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("the tools are read, ls"),
        "{}",
        stderr(&output)
    );

    let output = pith(
        &[
            "call",
            "ls",
            "{}",
            "--tools",
            "read,lss",
            "--cwd",
            cwd(&dir),
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("'lss'"), "{message}");
    assert!(
        message.contains("read, bash, edit, write, grep, find, ls"),
        "{message}"
    );
}

#[test]
fn tools_json_lists_the_seven_definitions_with_schemas() {
    let output = pith(&["tools", "--json"], "");
    assert_eq!(output.status.code(), Some(0));
    let list: Vec<Value> = serde_json::from_str(&stdout(&output)).unwrap();
    let names: Vec<&str> = list.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ALL_TOOLS);
    for tool in &list {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["inputSchema"]["properties"].is_object(), "{tool}");
        assert!(!tool["description"].as_str().unwrap().is_empty(), "{tool}");
        assert!(tool["promptSnippet"].is_string(), "{tool}");
        assert!(tool["promptGuidelines"].is_array(), "{tool}");
    }

    let output = pith(&["tools", "--json", "--tools", "ls,read"], "");
    let list: Vec<Value> = serde_json::from_str(&stdout(&output)).unwrap();
    let names: Vec<&str> = list.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read", "ls"]);
}

#[test]
fn tools_text_shows_each_tool_with_its_arguments() {
    let output = pith(&["tools"], "");
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    for name in ALL_TOOLS {
        assert!(
            text.contains(&format!("\n{name} — ")) || text.starts_with(&format!("{name} — ")),
            "{name}"
        );
    }
    assert!(text.contains("path (string, required)"), "{text}");
}

fn batch(dir: &TempDir, lines: &[String]) -> Vec<Value> {
    let output = pith(&["batch", "--cwd", cwd(dir)], &(lines.join("\n") + "\n"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn batch_prints_one_line_per_call_in_input_order_with_the_ids() {
    let dir = workspace();
    let mut lines = vec![
        // The slowest call comes first: its line must still be printed first.
        json!({"id": "slow", "tool": "bash", "args": {"command": "sleep 0.3; echo slow"}})
            .to_string(),
        "{this is not json".to_owned(),
    ];
    for index in 0..40 {
        let line = match index % 3 {
            0 => json!({"id": index, "tool": "ls", "args": {}}),
            1 => json!({"id": index, "tool": "read", "args": {"offset": "x"}}),
            _ => json!({"id": index, "tool": "nope"}),
        };
        lines.push(line.to_string());
    }
    lines.push(json!({"tool": "ls"}).to_string());
    let results = batch(&dir, &lines);
    assert_eq!(results.len(), lines.len());

    assert_eq!(results[0]["id"], "slow");
    assert_eq!(results[1]["id"], Value::Null);
    assert_eq!(results[1]["isError"], true);
    let text = results[1]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Invalid JSON on line 2"), "{text}");
    for index in 0..40 {
        let result = &results[index + 2];
        assert_eq!(result["id"], index, "{result}");
        let keys: Vec<&str> = result
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["id", "content", "details", "isError"]);
        assert_eq!(result["isError"], index % 3 != 0, "{result}");
    }
    assert_eq!(results[42]["id"], Value::Null);
    assert_eq!(results[42]["content"][0]["text"], "hello.txt");
}

#[test]
fn batch_runs_calls_concurrently() {
    let dir = workspace();
    // The first call waits for a file only the second call creates: run one after the
    // other, the first would time out.
    let lines = [
        json!({"id": 1, "tool": "bash", "args": {"command": "while [ ! -f go ]; do sleep 0.02; done; echo waited", "timeout": 20}}).to_string(),
        json!({"id": 2, "tool": "bash", "args": {"command": "touch go; echo started"}}).to_string(),
    ];
    let results = batch(&dir, &lines);
    assert_eq!(
        results[0]["content"][0]["text"], "waited\n",
        "{}",
        results[0]
    );
    assert_eq!(
        results[1]["content"][0]["text"], "started\n",
        "{}",
        results[1]
    );
}

#[test]
fn batch_is_one_session_that_refuses_to_overwrite_unread_files() {
    let dir = workspace();
    let write = json!({"id": 1, "tool": "write", "args": {"path": "hello.txt", "content": "new"}});
    let results = batch(&dir, &[write.to_string()]);
    assert_eq!(results[0]["isError"], true, "{}", results[0]);
    assert_eq!(read(dir.path(), "hello.txt"), "hello\nworld\n");

    // `pith call` is a one-shot: it may overwrite.
    let (value, code) = call_json(
        &dir,
        "write",
        &json!({"path": "hello.txt", "content": "new"}),
    );
    assert_eq!(code, Some(0), "{value}");
    assert_eq!(read(dir.path(), "hello.txt"), "new");
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// The text of a `pith call --json` result.
fn text_of(value: &Value) -> String {
    value["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn an_unknown_argument_is_an_error_with_a_did_you_mean() {
    let dir = workspace();
    let (value, code) = call_json(
        &dir,
        "grep",
        &json!({"pattern": "HELLO", "ignorecase": true}),
    );
    assert_eq!(code, Some(1));
    let text = text_of(&value);
    assert!(
        text.contains("unknown field ignorecase (did you mean ignoreCase?)"),
        "{text}"
    );
    let (value, _) = call_json(&dir, "ls", &json!({"path": ".", "qqqqqq": 1}));
    let text = text_of(&value);
    assert!(text.contains("unknown field qqqqqq"), "{text}");
    assert!(!text.contains("did you mean"), "{text}");
}

#[test]
fn other_agents_argument_spellings_are_accepted() {
    let dir = workspace();
    let (value, code) = call_json(
        &dir,
        "grep",
        &json!({"pattern": "HELLO", "ignore_case": true}),
    );
    assert_eq!(code, Some(0), "{value}");
    assert!(text_of(&value).contains("hello.txt:1: hello"), "{value}");
    let (value, code) = call_json(&dir, "read", &json!({"file_path": "hello.txt"}));
    assert_eq!(
        (code, text_of(&value)),
        (Some(0), "hello\nworld\n".to_owned())
    );
    let (value, code) = call_json(&dir, "read", &json!({"filePath": "hello.txt"}));
    assert_eq!(
        (code, text_of(&value)),
        (Some(0), "hello\nworld\n".to_owned())
    );
    let (value, code) = call_json(
        &dir,
        "edit",
        &json!({"file_path": "hello.txt", "edits": [{"old_string": "world", "new_string": "there"}]}),
    );
    assert_eq!(code, Some(0), "{value}");
    let content = std::fs::read_to_string(dir.path().join("hello.txt")).unwrap();
    assert_eq!(content, "hello\nthere\n");
}

#[test]
fn edit_replace_all_replaces_every_exact_occurrence_and_says_how_many() {
    let dir = workspace();
    std::fs::write(dir.path().join("a.txt"), "x = 1\ny = x\nz = x + x\n").unwrap();
    let (value, code) = call_json(
        &dir,
        "edit",
        &json!({"path": "a.txt", "edits": [{"oldText": "x", "newText": "w", "replace_all": true}]}),
    );
    assert_eq!(code, Some(0), "{value}");
    let text = text_of(&value);
    assert!(text.contains("edits[0] replaced 4 occurrences"), "{text}");
    let content = std::fs::read_to_string(dir.path().join("a.txt")).unwrap();
    assert_eq!(content, "w = 1\ny = w\nz = w + w\n");
    // Without replaceAll the same oldText is ambiguous.
    let (value, code) = call_json(
        &dir,
        "edit",
        &json!({"path": "a.txt", "edits": [{"oldText": "w", "newText": "v"}]}),
    );
    assert_eq!(code, Some(1), "{value}");
}

#[test]
fn bash_timeout_of_zero_or_below_is_rejected() {
    let dir = workspace();
    for timeout in [json!(0), json!(-2)] {
        let (value, code) = call_json(
            &dir,
            "bash",
            &json!({"command": "echo ran", "timeout": timeout}),
        );
        assert_eq!(code, Some(1));
        assert_eq!(
            text_of(&value),
            "timeout must be greater than 0 seconds (omit it for no timeout)"
        );
    }
    let output = pith(&["tools", "--json"], "");
    let tools: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let bash = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "bash")
        .unwrap();
    let schema = &bash["inputSchema"];
    assert_eq!(
        schema["properties"]["timeout"]["exclusiveMinimum"], 0,
        "{schema}"
    );
}

#[test]
fn grep_stopped_by_its_output_cap_says_so_and_where() {
    let dir = workspace();
    // 400 matching lines of about 300 bytes: the 50 KB cap comes before limit 1000.
    let body: String = (1..=400)
        .map(|n| format!("needle {n} {}\n", "x".repeat(290)))
        .collect();
    std::fs::write(dir.path().join("defs.rs"), body).unwrap();
    let (value, code) = call_json(&dir, "grep", &json!({"pattern": "needle", "limit": 1000}));
    assert_eq!(code, Some(0));
    let text = text_of(&value);
    let notice = text.lines().last().unwrap();
    let shown = text.lines().filter(|l| l.starts_with("defs.rs:")).count();
    let last = text.lines().rfind(|l| l.starts_with("defs.rs:")).unwrap();
    let line = last.split(':').nth(1).unwrap();
    assert_eq!(
        notice,
        format!(
            "[Showing {shown} matches, output limit 50.0KB reached at defs.rs:{line}; narrow with path or glob]"
        )
    );
    assert!(!text.contains("Use limit="), "{text}");
    assert_eq!(value["details"]["truncation"]["truncated"], true);
}

#[test]
fn grep_points_at_bash_for_lines_longer_than_it_keeps() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/min.js"),
        format!("short\nneedle {}\n", "y".repeat(100_000)),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("src/mid.js"),
        format!("needle {}\n", "z".repeat(600)),
    )
    .unwrap();
    let (value, _) = call_json(&dir, "grep", &json!({"pattern": "needle", "path": "src"}));
    let text = text_of(&value);
    assert!(
        text.contains("See a long line with bash, e.g. sed -n '2p' src/min.js | cut -c1-2000"),
        "{text}"
    );
    assert!(!text.contains("Use read tool"), "{text}");
    let (value, _) = call_json(
        &dir,
        "grep",
        &json!({"pattern": "needle", "glob": "mid.js"}),
    );
    let text = text_of(&value);
    assert!(text.contains("Use read tool to see full lines"), "{text}");
}

#[test]
fn an_empty_file_reads_as_empty_file() {
    let dir = workspace();
    std::fs::write(dir.path().join("empty.txt"), "").unwrap();
    let (value, code) = call_json(&dir, "read", &json!({"path": "empty.txt"}));
    assert_eq!(code, Some(0));
    assert_eq!(text_of(&value), "(empty file)");
    assert!(value["details"].is_null(), "{value}");
}

#[test]
fn missing_paths_suggest_close_names_and_the_same_name_elsewhere() {
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join("src/parser")).unwrap();
    std::fs::write(dir.path().join("src/config.rs"), "").unwrap();
    std::fs::write(dir.path().join("lexer.rs"), "").unwrap();
    // A dropped `src/`: the file's name exists under the working directory.
    let (value, code) = call_json(&dir, "read", &json!({"path": "config.rs"}));
    assert_eq!(code, Some(1));
    let text = text_of(&value);
    assert!(text.ends_with("Did you mean src/config.rs?"), "{text}");
    // Only close names are suggested.
    let (value, _) = call_json(&dir, "read", &json!({"path": "parser.rs"}));
    let text = text_of(&value);
    assert!(!text.contains("lexer"), "{text}");
    assert!(!text.contains("Did you mean"), "{text}");
    let (value, _) = call_json(&dir, "read", &json!({"path": "lexr.rs"}));
    assert!(text_of(&value).contains("Similar names in"), "{value}");
    // ls suggests too.
    let (value, code) = call_json(&dir, "ls", &json!({"path": "src/parsr"}));
    assert_eq!(code, Some(1));
    let text = text_of(&value);
    assert!(
        text.contains("Similar names in") && text.contains("parser"),
        "{text}"
    );
}

#[test]
fn find_patterns_with_a_slash_are_relative_to_the_search_directory() {
    let dir = workspace();
    for file in ["src/a.ts", "pkg/src/b.ts", "pkg/c.ts"] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "needle\n").unwrap();
    }
    let find = |args: Value| {
        let (value, code) = call_json(&dir, "find", &args);
        assert_eq!(code, Some(0), "{value}");
        let mut rows: Vec<String> = text_of(&value).lines().map(str::to_owned).collect();
        rows.sort();
        rows
    };
    assert_eq!(find(json!({"pattern": "src/*.ts"})), ["src/a.ts"]);
    assert_eq!(find(json!({"pattern": "./src/*.ts"})), ["src/a.ts"]);
    assert_eq!(
        find(json!({"pattern": "**/src/*.ts"})),
        ["pkg/src/b.ts", "src/a.ts"]
    );
    assert_eq!(
        find(json!({"pattern": "*.ts"})),
        ["pkg/c.ts", "pkg/src/b.ts", "src/a.ts"]
    );
    assert_eq!(
        find(json!({"pattern": "src/*.ts", "path": "pkg"})),
        ["src/b.ts"]
    );
    // grep's glob is relative to its path the same way.
    let grep = |args: Value| {
        let (value, _) = call_json(&dir, "grep", &args);
        text_of(&value)
    };
    assert_eq!(
        grep(json!({"pattern": "needle", "glob": "src/*.ts"})),
        "src/a.ts:1: needle"
    );
    assert_eq!(
        grep(json!({"pattern": "needle", "glob": "./src/*.ts", "path": "pkg"})),
        "src/b.ts:1: needle"
    );
}

#[test]
fn a_command_killed_by_a_signal_is_an_error_with_exit_code_128_plus_n() {
    let dir = workspace();
    let (value, code) = call_json(&dir, "bash", &json!({"command": "kill -9 $$"}));
    assert_eq!(code, Some(1));
    assert_eq!(value["isError"], true);
    assert!(
        text_of(&value).ends_with("Command exited with code 137"),
        "{value}"
    );
    assert_eq!(value["details"]["exitCode"], 137);
    let (value, code) = call_json(&dir, "bash", &json!({"command": "exit 3"}));
    assert_eq!(
        (code, value["details"]["exitCode"].clone()),
        (Some(1), json!(3))
    );
}

#[test]
fn call_usage_is_the_same_in_the_error_and_in_help() {
    let error = stderr(&pith(&["call"], ""));
    let help = stdout(&pith(&["call", "--help"], ""));
    let usage = |text: &str| {
        text.lines()
            .find(|line| line.starts_with("Usage:"))
            .unwrap()
            .to_owned()
    };
    assert_eq!(usage(&error), "Usage: pith call [OPTIONS] <TOOL> [JSON]");
    assert_eq!(usage(&error), usage(&help));
}

#[test]
fn batch_help_examples_are_one_line_each() {
    let help = stdout(&pith(&["batch", "--help"], ""));
    let examples = help.split("Examples:\n").nth(1).unwrap();
    let lines: Vec<&str> = examples.lines().filter(|line| !line.is_empty()).collect();
    assert!(lines.len() >= 2, "{help}");
    for line in lines {
        assert!(
            line.starts_with("  echo ") || line.starts_with("  pith "),
            "{line}"
        );
    }
}

#[test]
fn batch_format_text_prints_each_result_readably_in_input_order() {
    let dir = workspace();
    let input = concat!(
        r#"{"id":1,"tool":"bash","args":{"command":"sleep 0.3; echo slow"}}"#,
        "\n",
        r#"{"id":"b","tool":"read","args":{"path":"hello.txt"}}"#,
        "\n",
        r#"{"id":3,"tool":"read","args":{"path":"missing.txt"}}"#,
        "\n",
    );
    let output = pith(&["batch", "--format", "text", "--cwd", cwd(&dir)], input);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(
        text.starts_with(
            "== 1 bash ==\nslow\n== b read ==\nhello\nworld\n== 3 read: error ==\nFile not found: "
        ),
        "{text}"
    );
}

#[test]
fn prompt_prints_the_snippets_and_guidelines_of_the_enabled_tools() {
    let output = pith(&["prompt", "--tools", "read,grep"], "");
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.starts_with("Available tools:\n- read: "), "{text}");
    assert!(text.contains("\n- grep: "), "{text}");
    assert!(!text.contains("- edit:"), "{text}");
    assert!(
        text.contains("Guidelines:\n- Use read to examine files"),
        "{text}"
    );
}

/// The coloured output of an edit and a write with `--color always`, temp paths redacted.
#[test]
fn edit_and_write_show_a_coloured_numbered_diff_with_color_always() {
    let dir = workspace();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    let edit = pith(
        &[
            "call",
            "edit",
            r#"{"path":"a.txt","edits":[{"oldText":"two","newText":"TWO"}]}"#,
            "--color",
            "always",
            "--cwd",
            cwd(&dir),
        ],
        "",
    );
    let write = pith(
        &[
            "call",
            "write",
            r#"{"path":"a.txt","content":"one\nTWO\n3\n"}"#,
            "--color",
            "always",
            "--cwd",
            cwd(&dir),
        ],
        "",
    );
    let missing = pith(
        &[
            "call",
            "read",
            r#"{"path":"nope.txt"}"#,
            "--color",
            "always",
            "--cwd",
            cwd(&dir),
        ],
        "",
    );
    let shown = format!(
        "{}---\n{}---\n{}",
        stdout(&edit),
        stdout(&write),
        stdout(&missing)
    )
    .replace(cwd(&dir), "[TMP]")
    .replace('\x1b', "<ESC>");
    insta::assert_snapshot!(shown);
    // Never colour with --color never (or NO_COLOR and no terminal).
    let plain = pith(
        &[
            "call",
            "read",
            r#"{"path":"nope.txt"}"#,
            "--color",
            "never",
            "--cwd",
            cwd(&dir),
        ],
        "",
    );
    assert!(!stdout(&plain).contains('\x1b'), "{}", stdout(&plain));
}

/// `pith call bash` on a terminal streams the command's output while it runs:
/// the command prints its first line, then waits until the test has seen that
/// line on the terminal (a marker file), so the test passes only if the line
/// arrived before the command ended. The final text does not repeat it. The
/// terminal is Python's `pty.spawn`, which copies it to our pipe as it comes.
#[test]
fn call_bash_on_a_terminal_streams_output_while_the_command_runs() {
    use std::io::Read;

    let dir = TempDir::new().unwrap();
    let mark = dir.path().join("seen");
    let command = format!(
        // Bounded, so a pith that does not stream fails the test instead of hanging it.
        "echo first-line; for i in $(seq 3000); do [ -e {0} ] && break; sleep 0.02; done; \
         [ -e {0} ] && echo second-line",
        mark.display()
    );
    let args = json!({ "command": command }).to_string();
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)",
        ])
        .args([
            env!("CARGO_BIN_EXE_pith"),
            "call",
            "bash",
            &args,
            "--color",
            "never",
        ])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    let mut marked = false;
    loop {
        let read = out.read(&mut buffer).unwrap();
        if read == 0 {
            break;
        }
        seen.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&seen);
        if !marked && text.contains("first-line") {
            assert!(
                !text.contains("second-line"),
                "the second line came before the marker: {text}"
            );
            std::fs::write(&mark, b"").unwrap();
            marked = true;
        }
    }
    let status = child.wait().unwrap();
    let text = String::from_utf8_lossy(&seen).replace('\r', "");
    assert!(marked, "first-line never streamed: {text}");
    assert!(status.success(), "{status:?}: {text}");
    assert_eq!(
        text.matches("first-line").count(),
        1,
        "streamed output printed twice: {text}"
    );
    assert!(text.contains("second-line"), "{text}");
}

#[test]
fn a_large_write_on_stdin_keeps_every_escape_and_a_broken_one_writes_nothing() {
    let dir = workspace();
    let target = dir.path().join("big.txt");
    let call = |stdin: &[u8]| pith_bytes(&["call", "write", "-", "--cwd", cwd(&dir)], stdin);
    // 3 MiB of every kind of escape, past the 1 MiB after which start-up's pages
    // are given back, and \u escapes serde_json's own output does not use.
    let unit = "line \"q\" back\\slash /\tt\u{8}\u{c}\r\n é € 😀 \u{1}\n";
    let content = unit.repeat((3 << 20) / unit.len());
    let escaped = serde_json::to_string(&content).unwrap();
    let extra = r"\u00e9\u20ac\ud83d\ude00\/";
    let json = format!(
        r#"{{"path": "big.txt", "content": {}{extra}""#,
        &escaped[..escaped.len() - 1]
    ) + "}";
    let output = call(json.as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let expected = format!("{content}é€😀/");
    assert!(std::fs::read(&target).unwrap() == expected.as_bytes());
    assert_eq!(
        stdout(&output),
        format!("Successfully wrote {} bytes to big.txt\n", expected.len())
    );
    std::fs::remove_file(&target).unwrap();
    // Broken input: one line on stderr, usage status, nothing written.
    let body = &escaped[..escaped.len() - 1];
    let mut not_utf8 = format!(r#"{{"path": "big.txt", "content": {body}"#).into_bytes();
    not_utf8.extend_from_slice(b"\xff\"}");
    for (stdin, says) in [
        (
            format!(r#"{{"path": "big.txt", "content": {body}\x"}}"#).into_bytes(),
            "the JSON on stdin is not valid JSON (invalid escape",
        ),
        (
            format!(r#"{{"path": "big.txt", "content": {body}\ud800"}}"#).into_bytes(),
            "the JSON on stdin is not valid JSON (unexpected end of hex escape",
        ),
        (
            format!(r#"{{"path": "big.txt", "content": {body}"#).into_bytes(),
            "the JSON on stdin is not valid JSON (EOF while parsing",
        ),
        (
            not_utf8,
            "cannot read the JSON arguments from stdin: stream did not contain valid UTF-8",
        ),
    ] {
        let output = call(&stdin);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{message}");
        assert_eq!(stdout(&output), "");
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(message.starts_with(&format!("error: {says}")), "{message}");
        assert!(!target.exists(), "{says}");
    }
}
