//! `pith mcp` spoken to in raw JSON-RPC over stdio.
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

/// Long enough for any answer on a loaded machine; only reached when something hangs.
const PATIENCE: Duration = Duration::from_secs(20);

/// A running `pith mcp` and what it wrote.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// What the server wrote to stderr so far (printed when a test fails).
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Notifications (and requests from the server) seen while waiting for responses.
    pub(crate) notifications: Vec<Value>,
}

impl Server {
    /// Starts `pith mcp --cwd dir` without the handshake.
    pub(crate) fn spawn(dir: &TempDir) -> Server {
        Server::spawn_with(dir, &[])
    }

    /// Starts `pith mcp --cwd dir EXTRA...` without the handshake.
    pub(crate) fn spawn_with(dir: &TempDir, extra: &[&str]) -> Server {
        Server::spawn_env(dir, extra, &[])
    }

    /// Starts `pith mcp --cwd dir EXTRA...` with extra environment variables, no handshake.
    pub(crate) fn spawn_env(dir: &TempDir, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
            .args(["mcp", "--cwd", dir.path().to_str().unwrap()])
            .args(extra)
            .env_remove("RUST_LOG")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buffer = [0; 4096];
            while let Ok(read @ 1..) = err.read(&mut buffer) {
                sink.lock().unwrap().extend_from_slice(&buffer[..read]);
            }
        });
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line).unwrap_or_else(|error| {
                    panic!("stdout carried a non-JSON line {line:?}: {error}")
                });
                if sender.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            lines,
            stderr,
            notifications: Vec::new(),
        }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Starts the server and completes the handshake.
    pub(crate) fn start(dir: &TempDir) -> Server {
        Server::start_with(dir, &[])
    }

    /// Starts the server with extra flags and completes the handshake.
    pub(crate) fn start_with(dir: &TempDir, extra: &[&str]) -> Server {
        let mut server = Server::spawn_with(dir, extra);
        let response = server.request(
            0,
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "pith-tests", "version": "0"},
            }),
        );
        assert!(response["result"].is_object(), "{response}");
        server.send_line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        server
    }

    pub(crate) fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn send(&mut self, id: i64, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&message.to_string());
    }

    /// The next message with this id; notifications on the way are kept (and so
    /// are responses to other ids, which a later call finds there).
    pub(crate) fn response(&mut self, id: &Value) -> Value {
        let is_response =
            |message: &Value| message.get("id") == Some(id) && message.get("method").is_none();
        if let Some(index) = self.notifications.iter().position(is_response) {
            return self.notifications.remove(index);
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.lines.recv_timeout(left) {
                Ok(message) => message,
                Err(RecvTimeoutError::Timeout) => panic!("no response to {id} in {PATIENCE:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
            };
            if is_response(&message) {
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// The next message the server sends, whatever it is.
    pub(crate) fn next_message(&mut self) -> Value {
        match self.lines.recv_timeout(PATIENCE) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => panic!("no message in {PATIENCE:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
        }
    }

    /// The responses to `ids`, whatever order they arrive in, in the order of `ids`.
    pub(crate) fn responses(&mut self, ids: &[i64]) -> Vec<Value> {
        let mut found = std::collections::HashMap::new();
        let deadline = Instant::now() + PATIENCE;
        while found.len() < ids.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.lines.recv_timeout(left) {
                Ok(message) => message,
                Err(error) => panic!("{} of {} responses: {error}", found.len(), ids.len()),
            };
            match message.get("id").and_then(Value::as_i64) {
                Some(id) if message.get("method").is_none() && ids.contains(&id) => {
                    found.insert(id, message);
                }
                _ => self.notifications.push(message),
            }
        }
        ids.iter().map(|id| found.remove(id).unwrap()).collect()
    }

    pub(crate) fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(id, method, params);
        self.response(&json!(id))
    }

    pub(crate) fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        let response = self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        response["result"].clone()
    }

    /// Closes stdin and waits for the exit; `None` if it did not exit in time.
    pub(crate) fn close_and_wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        drop(self.stdin.take());
        self.wait_exit(limit)
    }

    /// Waits for the exit; `None` if it did not exit in time.
    pub(crate) fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- pith mcp stderr ---\n{}", self.stderr_text());
        }
    }
}

pub(crate) fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// A `sleep` command no other process has: 1000 s with a fraction unique to this
/// run (process id, a counter and the clock), so that `pgrep -f` finds only ours.
pub(crate) fn unique_sleep() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("sleep 1000.{}{count}{nanos}", std::process::id())
}

/// Whether a process whose command line contains `marker` is alive.
pub(crate) fn process_alive(marker: &str) -> bool {
    let output = Command::new("pgrep").args(["-f", marker]).output().unwrap();
    output.status.success()
}

pub(crate) fn wait_until_gone(marker: &str) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if !process_alive(marker) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn initialize_names_the_server_and_offers_tools() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::spawn(&dir);
    let response = server.request(
        1,
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "pith-tests", "version": "0"},
        }),
    );
    let result = &response["result"];
    assert_eq!(result["serverInfo"]["name"], "pith");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    let instructions = result["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("read, bash, edit, write, grep, find, ls"),
        "{instructions}"
    );
}

#[test]
fn tools_list_gives_the_eight_tools_with_annotations() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let response = server.request(1, "tools/list", json!({}));
    let tools = response["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "read", "bash", "edit", "write", "grep", "find", "ls", "jobs"
        ]
    );
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let annotations = &tool["annotations"];
        let read_only = matches!(name, "read" | "grep" | "find" | "ls");
        assert_eq!(annotations["readOnlyHint"], read_only, "{tool}");
        assert_eq!(annotations["destructiveHint"], !read_only, "{tool}");
        assert_eq!(
            annotations["openWorldHint"],
            matches!(name, "bash" | "jobs"),
            "{tool}"
        );
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        assert!(annotations["idempotentHint"].is_boolean(), "{tool}");
        assert!(tool["title"].is_string(), "{tool}");
        assert!(tool["description"].is_string(), "{tool}");
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
}

#[test]
fn bad_arguments_give_an_error_result_naming_the_field() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let result = server.call(1, "read", json!({"path": "a.txt", "limit": "lots"}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("limit"), "{result}");

    let response = server.request(2, "tools/call", json!({"name": "edit"}));
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(text(&response["result"]).contains("path"), "{response}");
}

#[test]
fn an_unknown_tool_gives_an_error_result() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let result = server.call(1, "nope", json!({}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).starts_with("Tool nope not found"), "{result}");
}

#[test]
fn malformed_json_gets_a_parse_error_and_the_server_keeps_answering() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    server.send_line("{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": ");
    let response = server.response(&Value::Null);
    assert_eq!(response["error"]["code"], -32700, "{response}");

    let response = server.request(6, "tools/list", json!({}));
    assert_eq!(response["result"]["tools"].as_array().unwrap().len(), 8);
}

#[test]
fn an_unknown_method_gets_a_json_rpc_error() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let response = server.request(1, "tools/frobnicate", json!({}));
    assert_eq!(response["error"]["code"], -32601, "{response}");
    let response = server.request(2, "ping", json!({}));
    assert!(response["result"].is_object(), "{response}");
}

#[test]
fn a_tool_call_with_malformed_params_gets_invalid_params_naming_the_field() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let cases = [
        (
            json!({"name": "read", "arguments": ["a.txt"]}),
            "`arguments` must be an object",
        ),
        (
            json!({"name": 5, "arguments": {}}),
            "`name` must be a string naming a tool (read,",
        ),
        (json!({"arguments": {}}), "`name` is missing"),
        (json!("read"), "`params` must be an object, got a string"),
    ];
    for (id, (params, expected)) in (1..).zip(cases) {
        let response = server.request(id, "tools/call", params);
        assert_eq!(response["error"]["code"], -32602, "{response}");
        let message = response["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Invalid params for tools/call: "),
            "{message}"
        );
        assert!(message.contains(expected), "{message}");
    }
    server.send_line(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call"}).to_string());
    let response = server.response(&json!(9));
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`params` is missing")
    );
    let response = server.request(10, "ping", json!({}));
    assert!(response["result"].is_object(), "{response}");
}

#[test]
fn a_request_whose_id_is_an_object_gets_invalid_request_with_id_null() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    for id in [json!({"a": 1}), json!([1])] {
        server.send_line(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string());
        let response = server.response(&Value::Null);
        assert_eq!(response["error"]["code"], -32600, "{response}");
        let message = response["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`id` must be a string or an integer"),
            "{message}"
        );
    }
    let response = server.request(1, "ping", json!({}));
    assert!(response["result"].is_object(), "{response}");
}

#[test]
fn an_unsupported_mcp_method_says_what_the_server_offers() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let response = server.request(1, "prompts/get", json!({"name": "x"}));
    assert_eq!(response["error"]["code"], -32601, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Method not found: prompts/get. "),
        "{message}"
    );
    assert!(message.contains("tools/call"), "{message}");
    assert!(message.contains("resources/read"), "{message}");
}

#[test]
fn resources_read_serves_only_output_files_the_session_created() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let response = server.request(1, "resources/read", json!({"uri": "file:///etc/hosts"}));
    assert_eq!(response["error"]["code"], -32002, "{response}");
    let response = server.request(
        2,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "seq 1 30000"}}),
    );
    let result = &response["result"];
    let path = result["structuredContent"]["fullOutputPath"]
        .as_str()
        .unwrap();
    let link = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|part| part["type"] == "resource_link")
        .unwrap();
    assert_eq!(link["uri"], format!("file://{path}"), "{link}");
    let response = server.request(3, "resources/read", json!({"uri": link["uri"]}));
    let text = response["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("1\n2\n"), "{response}");
    assert!(text.ends_with("29999\n30000\n"), "{response}");
}

#[test]
fn details_go_to_meta_and_never_into_the_text() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let mut server = Server::start(&dir);
    let result = server.call(
        1,
        "edit",
        json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]}),
    );
    assert_eq!(result["isError"], false, "{result}");
    let diff = result["_meta"]["pith/details"]["diff"].as_str().unwrap();
    assert!(diff.contains("+2 2"), "{diff}");
    assert!(!text(&result).contains("+2 2"), "{result}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n2\n"
    );
}

#[test]
fn a_running_bash_reports_progress_when_asked() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    // Explicit synchronisation instead of sleeps: the command goes on only after a
    // progress notification carrying its output reached this client (it creates `go`).
    let go = dir.path().join("go");
    let command = format!(
        "echo line1; until [ -e {} ]; do sleep 0.01; done; echo line2",
        go.display()
    );
    server.send(
        1,
        "tools/call",
        json!({
            "name": "bash",
            "arguments": {"command": command, "timeout": 60},
            "_meta": {"progressToken": "tail"},
        }),
    );
    let mut progress = Vec::new();
    let response = loop {
        let message = server.next_message();
        if message.get("id") == Some(&json!(1)) {
            break message;
        }
        if message["method"] == "notifications/progress" {
            let params = message["params"].clone();
            if params["message"]
                .as_str()
                .is_some_and(|m| m.contains("line1"))
            {
                std::fs::write(&go, b"").unwrap();
            }
            progress.push(params);
        }
    };
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert_eq!(text(&response["result"]), "line1\nline2\n", "{response}");
    assert!(!progress.is_empty(), "no progress while the command ran");
    assert!(progress.iter().all(|p| p["progressToken"] == "tail"));
    let counters: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(counters.windows(2).all(|w| w[0] < w[1]), "{counters:?}");
}

#[test]
fn cancelling_a_call_kills_its_process() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let marker = &unique_sleep();
    server.send(
        1,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": marker}}),
    );
    let deadline = Instant::now() + PATIENCE;
    while !process_alive(marker) {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.send_line(
        &json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "test"},
        })
        .to_string(),
    );
    assert!(
        wait_until_gone(marker),
        "{marker} still runs after the cancel"
    );
    // The server still serves.
    let response = server.request(2, "ping", json!({}));
    assert!(response["result"].is_object(), "{response}");
}

#[test]
fn stdin_eof_ends_the_server_and_its_children() {
    let dir = TempDir::new().unwrap();
    let mut idle = Server::start(&dir);
    let status = idle.close_and_wait(Duration::from_secs(10));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");

    let mut busy = Server::start(&dir);
    let marker = &unique_sleep();
    busy.send(
        1,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": marker}}),
    );
    let deadline = Instant::now() + PATIENCE;
    while !process_alive(marker) {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = busy.close_and_wait(Duration::from_secs(15));
    assert!(
        status.is_some(),
        "the server did not exit after stdin closed"
    );
    assert!(wait_until_gone(marker), "{marker} outlived the server");
}
