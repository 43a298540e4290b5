//! Promises of the README and docs/mcp.md that only the real binary can show: the
//! no-Landlock path (forced with `PITH_TEST_NO_LANDLOCK=1`), signals, `--deny-network`,
//! stdin EOF, a clean stdout under logging, the safety flags through `batch` and `mcp`,
//! the roots/list timeout, the instructions, and `~` on the local file system.

use std::io::Write;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::file_tools::Dir;
use crate::mcp::{Server, process_alive, text, unique_sleep, wait_until_gone};

/// Long enough for anything on a loaded machine; reached only when something hangs.
const PATIENCE: Duration = Duration::from_secs(30);

/// Command-line flags and environment variables for one run of pith.
type Flags<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);

/// Forces pith-env's sandbox probe to report no Landlock.
const NO_LANDLOCK: (&str, &str) = ("PITH_TEST_NO_LANDLOCK", "1");

fn pith_with(args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(args)
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Waits for `path` to exist (a command's explicit "I have started").
fn wait_for_file(path: &std::path::Path) {
    let deadline = Instant::now() + PATIENCE;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_exit(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "pith did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn without_landlock_a_sandboxed_bash_is_refused_unless_unsandboxed_is_allowed() {
    let dir = Dir::new();
    let args = json!({"command": "touch ran"}).to_string();
    let base = ["call", "bash", &args, "--cwd", dir.cwd(), "--sandbox"];
    for mode in ["workspace-write", "read-only"] {
        let refused = pith_with(&[&base[..], &[mode]].concat(), b"", &[NO_LANDLOCK]);
        let text = stdout(&refused);
        assert_eq!(refused.status.code(), Some(1), "{refused:?}");
        assert!(
            text.contains(&format!("the {mode} sandbox needs Landlock"))
                && text.contains("--sandbox off"),
            "{text}"
        );
        assert!(text.trim_end().lines().count() <= 3, "{text}");
        assert!(!dir.path("ran").exists(), "a refused command ran");
    }
    let allowed = pith_with(
        &[&base[..], &["workspace-write", "--allow-unsandboxed"]].concat(),
        b"",
        &[NO_LANDLOCK],
    );
    assert_eq!(allowed.status.code(), Some(0), "{allowed:?}");
    assert!(
        dir.path("ran").exists(),
        "--allow-unsandboxed did not run the command"
    );
}

#[test]
fn without_landlock_pith_mcp_falls_back_to_unsandboxed_and_says_so() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::spawn_env(&dir, &[], &[NO_LANDLOCK]);
    let instructions = initialize(&mut server);
    assert!(instructions.contains("sandbox mode: off"), "{instructions}");
    assert!(instructions.contains("not sandboxed"), "{instructions}");
    let result = server.call(1, "bash", json!({"command": "touch ran && echo ran"}));
    assert_eq!(result["isError"], false, "{result}");
    assert!(dir.path().join("ran").exists());
}

/// The handshake; returns the instructions.
fn initialize(server: &mut Server) -> String {
    let response = server.request(
        0,
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "pith-tests", "version": "0"},
        }),
    );
    server.send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    response["result"]["instructions"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn the_mcp_instructions_state_what_sandbox_status_reports() {
    let dir = TempDir::new().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let cases: [Flags; 3] = [
        (&[], &[]),
        (&["--deny-network", "--sandbox", "read-only"], &[]),
        (&[], &[NO_LANDLOCK]),
    ];
    for (flags, env) in cases {
        let status = pith_with(
            &[&["sandbox", "status", "--mcp", "--cwd", cwd][..], flags].concat(),
            b"",
            env,
        );
        assert!(status.status.success(), "{status:?}");
        let status = stdout(&status);
        let mut server = Server::spawn_env(&dir, flags, env);
        let instructions = initialize(&mut server);
        // The sandbox part: the lines before the workspace roots.
        let sandbox: Vec<&str> = status
            .lines()
            .take_while(|line| !line.starts_with("workspace roots:"))
            .collect();
        assert!(sandbox.len() >= 4, "{status}");
        for line in sandbox {
            assert!(
                instructions.lines().any(|have| have == line),
                "{flags:?} {env:?}: `{line}` of sandbox status is not in the instructions:\n{instructions}"
            );
        }
    }
}

/// Starts a command tree through `pith call` or `pith batch` and returns pith and the
/// tree's marker; the tree creates `started` once every process in it runs.
fn start_tree(front: &str, dir: &Dir) -> (Child, String) {
    let marker = unique_sleep();
    let command = format!("{marker} & {marker} & touch started; wait");
    let args = json!({"command": command});
    match front {
        "call" => {
            let child = Command::new(env!("CARGO_BIN_EXE_pith"))
                .args(["call", "bash", &args.to_string(), "--cwd", dir.cwd()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            (child, marker)
        }
        "batch" => {
            let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
                .args(["batch", "--cwd", dir.cwd()])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            // Stdin stays open: batch is still reading when the signal comes.
            let line = json!({"id": 1, "tool": "bash", "args": args});
            writeln!(child.stdin.as_mut().unwrap(), "{line}").unwrap();
            child.stdin.as_mut().unwrap().flush().unwrap();
            (child, marker)
        }
        _ => unreachable!(),
    }
}

#[test]
fn sigterm_sigint_and_sighup_kill_every_command_tree_and_exit_128_plus_n() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        for front in ["call", "batch", "mcp"] {
            let dir = Dir::new();
            let marker;
            let status = if front == "mcp" {
                let temp = TempDir::new_in(&dir.root).unwrap();
                let mut server = Server::start(&temp);
                marker = unique_sleep();
                let command = format!("{marker} & {marker} & touch started; wait");
                server.send(
                    1,
                    "tools/call",
                    json!({"name": "bash", "arguments": {"command": command}}),
                );
                wait_for_file(&temp.path().join("started"));
                assert!(process_alive(&marker));
                // SAFETY: kill with the pid of our child and a valid signal.
                unsafe { libc::kill(server.pid() as i32, signal) };
                server.wait_exit(PATIENCE).expect("pith mcp did not exit")
            } else {
                let (mut child, tree) = start_tree(front, &dir);
                marker = tree;
                wait_for_file(&dir.path("started"));
                assert!(process_alive(&marker));
                // SAFETY: kill with the pid of our child and a valid signal.
                unsafe { libc::kill(child.id() as i32, signal) };
                wait_exit(&mut child)
            };
            assert_eq!(
                status.code(),
                Some(128 + signal),
                "pith {front}, signal {signal}: {status:?}"
            );
            assert!(
                wait_until_gone(&marker),
                "pith {front}, signal {signal}: the command tree outlived pith"
            );
        }
    }
}

#[test]
fn deny_network_through_the_binary_blocks_ip_sockets() {
    let dir = Dir::new();
    // Port 9 (discard) on loopback: with sockets allowed the connect is refused;
    // with --deny-network the socket itself is denied.
    let command = "exec 3<>/dev/tcp/127.0.0.1/9 && echo connected || echo failed";
    let args = json!({"command": command}).to_string();
    let open = pith_with(&["call", "bash", &args, "--cwd", dir.cwd()], b"", &[]);
    let open = stdout(&open);
    assert!(!open.contains("Permission denied"), "{open}");
    let denied = pith_with(
        &["call", "bash", &args, "--cwd", dir.cwd(), "--deny-network"],
        b"",
        &[],
    );
    let denied = stdout(&denied);
    assert!(denied.contains("Permission denied"), "{denied}");
    assert!(denied.contains("failed"), "{denied}");
    // Unix sockets stay allowed: sandbox.rs's builds_the_network_filter shows that.
}

#[test]
fn on_stdin_eof_pith_mcp_answers_in_flight_calls_then_kills_what_is_left() {
    let dir = TempDir::new().unwrap();
    let mut server = Server::start(&dir);
    let marker = unique_sleep();
    // A call that finishes within the 5 s grace, and one that never would.
    let quick = "touch quick-started; sleep 1; echo finished";
    server.send(
        1,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": quick}}),
    );
    server.send(
        2,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": marker}}),
    );
    wait_for_file(&dir.path().join("quick-started"));
    let deadline = Instant::now() + PATIENCE;
    while !process_alive(&marker) {
        assert!(Instant::now() < deadline, "the long command never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = server.close_and_wait(PATIENCE);
    assert!(status.is_some(), "pith mcp did not exit after stdin closed");
    let answer = server.response(&json!(1));
    assert_eq!(text(&answer["result"]), "finished\n", "{answer}");
    assert!(
        wait_until_gone(&marker),
        "the long command outlived the server"
    );
}

#[test]
fn stdout_stays_pure_json_rpc_at_debug_and_trace_logging() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let runs: [Flags; 2] = [
        (&["--log-level", "debug"], &[]),
        (&[], &[("RUST_LOG", "trace")]),
    ];
    for (flags, env) in runs {
        let mut server = Server::spawn_env(&dir, flags, env);
        initialize(&mut server);
        // The reader thread fails the test on any stdout line that is not JSON.
        let calls = [
            ("read", json!({"path": "a.txt"})),
            ("bash", json!({"command": "echo out; echo err >&2"})),
            ("grep", json!({"pattern": "alpha"})),
            ("read", json!({"path": "missing.txt"})),
        ];
        for (id, (tool, args)) in (1..).zip(calls) {
            let result = server.call(id, tool, args);
            assert!(result["content"].is_array(), "{result}");
        }
        let status = server.close_and_wait(PATIENCE);
        assert!(status.is_some_and(|status| status.success()), "{status:?}");
        let log = server.stderr_text();
        assert!(
            log.contains("DEBUG") || log.contains("TRACE"),
            "{flags:?} {env:?}: no debug logging on stderr, so the check proves nothing:\n{log}"
        );
    }
}

#[test]
fn root_protect_and_contain_reads_hold_through_batch() {
    let dir = Dir::new();
    dir.write("inside/a.txt", "inside\n");
    dir.write("inside/.env", "SECRET=1\n");
    dir.write("outside/b.txt", "outside\n");
    let inside = dir.path("inside");
    let calls: Vec<Value> = vec![
        json!({"id": "write-in", "tool": "write", "args": {"path": "new.txt", "content": "x\n"}}),
        json!({"id": "write-out", "tool": "write", "args": {"path": "../outside/new.txt", "content": "x\n"}}),
        json!({"id": "protected", "tool": "edit", "args": {"path": ".env", "edits": [{"oldText": "1", "newText": "2"}]}}),
        json!({"id": "read-in", "tool": "read", "args": {"path": "a.txt"}}),
        json!({"id": "read-out", "tool": "read", "args": {"path": "../outside/b.txt"}}),
        json!({"id": "grep-out", "tool": "grep", "args": {"pattern": "outside", "path": "../outside"}}),
    ];
    let input: String = calls.iter().map(|call| format!("{call}\n")).collect();
    let inside_str = inside.to_str().unwrap();
    let output = pith_with(
        &[
            "batch",
            "--cwd",
            inside_str,
            "--root",
            inside_str,
            "--protect",
            ".env",
            "--contain-reads",
        ],
        input.as_bytes(),
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let results: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let errors: Vec<&str> = results
        .iter()
        .filter(|result| result["isError"] == true)
        .map(|result| result["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        errors,
        ["write-out", "protected", "read-out", "grep-out"],
        "{results:?}"
    );
    assert!(dir.path("inside/new.txt").exists());
    assert!(!dir.path("outside/new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path("inside/.env")).unwrap(),
        "SECRET=1\n"
    );
}

#[test]
fn root_protect_and_contain_reads_hold_through_mcp() {
    let dir = TempDir::new().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("inside")).unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::create_dir_all(root.join("shared")).unwrap();
    std::fs::write(root.join("inside/.env"), "SECRET=1\n").unwrap();
    std::fs::write(root.join("outside/b.txt"), "outside\n").unwrap();
    let workspace = TempDir::new_in(root.join("inside")).unwrap();
    std::fs::write(workspace.path().join(".env"), "SECRET=1\n").unwrap();
    let shared = root.join("shared");
    let mut server = Server::start_with(
        &workspace,
        &[
            "--root",
            shared.to_str().unwrap(),
            "--protect",
            ".env",
            "--contain-reads",
        ],
    );
    let outside = root.join("outside/b.txt");
    let outside = outside.to_str().unwrap();
    let shared_file = shared.join("s.txt");
    let cases = [
        ("write", json!({"path": "new.txt", "content": "x\n"}), false),
        (
            "write",
            json!({"path": shared_file.to_str().unwrap(), "content": "x\n"}),
            false,
        ),
        (
            "write",
            json!({"path": root.join("outside/new.txt").to_str().unwrap(), "content": "x\n"}),
            true,
        ),
        (
            "edit",
            json!({"path": ".env", "edits": [{"oldText": "1", "newText": "2"}]}),
            true,
        ),
        ("read", json!({"path": outside}), true),
        (
            "ls",
            json!({"path": root.join("outside").to_str().unwrap()}),
            true,
        ),
    ];
    for (id, (tool, args, refused)) in (1..).zip(cases) {
        let result = server.call(id, tool, args.clone());
        assert_eq!(result["isError"], refused, "{tool} {args}: {result}");
    }
    assert!(workspace.path().join("new.txt").exists());
    assert!(shared_file.exists());
    assert!(!root.join("outside/new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(workspace.path().join(".env")).unwrap(),
        "SECRET=1\n"
    );
}

#[test]
fn an_unanswered_roots_list_times_out_and_the_server_works_in_its_cwd() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("here.txt"), "x\n").unwrap();
    let mut server = Server::spawn(&dir);
    let response = server.request(
        0,
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "pith-tests", "version": "0"},
        }),
    );
    assert!(response["result"].is_object(), "{response}");
    server.send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    server.send(
        1,
        "tools/call",
        json!({"name": "ls", "arguments": {"path": "."}}),
    );
    // The server asks for the roots; this client never answers. After its 5 s timeout
    // the call runs in --cwd (the patience of `response` is far longer).
    let answer = server.response(&json!(1));
    let asked = server
        .notifications
        .iter()
        .any(|message| message["method"] == "roots/list" && message.get("id").is_some());
    assert!(
        asked,
        "the server never sent roots/list: {:?}",
        server.notifications
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(text(&answer["result"]), "here.txt", "{answer}");
    let log = server.stderr_text();
    assert!(log.contains("roots/list got no answer"), "{log}");
}

#[test]
fn tilde_paths_expand_to_home_on_the_local_file_system() {
    let home = Dir::new();
    let work = Dir::new();
    home.write("notes.md", "from home\n");
    let env = [("HOME", home.cwd())];
    let read = json!({"path": "~/notes.md"}).to_string();
    let output = pith_with(&["call", "read", &read, "--cwd", work.cwd()], b"", &env);
    assert_eq!(stdout(&output), "from home\n", "{output:?}");
    let read = json!({"path": "@~/notes.md"}).to_string();
    let output = pith_with(&["call", "read", &read, "--cwd", work.cwd()], b"", &env);
    assert_eq!(stdout(&output), "from home\n", "{output:?}");
    let write = json!({"path": "~/new/made.txt", "content": "made\n"}).to_string();
    let output = pith_with(&["call", "write", &write, "--cwd", work.cwd()], b"", &env);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(home.read("new/made.txt"), b"made\n");
}
