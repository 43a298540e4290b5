//! The bash tool with real processes: texts, timeouts, cancel, output bounds, streaming.
#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pith_env::{CancellationToken, Env};
use pith_tools::{BashConfig, CallOptions, SpawnHook, ToolConfig, ToolResult, ToolSet, ToolUpdate};
use serde_json::{Value, json};
use tempfile::TempDir;

struct Bench {
    dir: TempDir,
    tools: ToolSet,
}

fn bench_with(configure: impl FnOnce(&mut BashConfig)) -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ToolConfig::default();
    config.bash.spill_dir = dir.path().to_path_buf();
    // Each call is a session of its own; the tests read the files after it ends.
    config.bash.keep_output = true;
    configure(&mut config.bash);
    let tools = ToolSet::builder(Env::local())
        .cwd(dir.path())
        .config(config)
        .build();
    Bench { dir, tools }
}

fn bench() -> Bench {
    bench_with(|_| {})
}

impl Bench {
    async fn call(&self, args: Value) -> ToolResult {
        self.call_with(args, CallOptions::default()).await
    }

    async fn call_with(&self, args: Value, options: CallOptions) -> ToolResult {
        self.tools.session().call("bash", args, options).await
    }

    fn kill_background(&self) {
        self.tools.env().exec.kill_all();
    }
}

/// Processes of group `pgid` that are not zombies, from `/proc/*/stat`.
fn live_members(pgid: i32) -> Vec<i32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|at| &stat[at + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields[2].parse() == Ok(pgid) && fields[0] != "Z" {
            live.push(pid);
        }
    }
    live
}

/// Gives up after 10 s, a bound only a broken kill reaches.
async fn group_is_gone(pgid: i32) -> bool {
    for _ in 0..200 {
        if live_members(pgid).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn first_number(text: &str) -> i32 {
    text.lines().next().unwrap().trim().parse().unwrap()
}

#[tokio::test]
async fn success_shows_the_output_verbatim_with_the_exit_code_in_details() {
    let bench = bench();
    let result = bench
        .call(json!({"command": "echo hi; echo err >&2"}))
        .await;
    assert!(!result.is_error);
    assert_eq!(result.text_content(), "hi\nerr\n");
    assert_eq!(result.details.unwrap(), json!({"exitCode": 0}));
}

#[tokio::test]
async fn empty_output_says_no_output() {
    let bench = bench();
    let result = bench.call(json!({"command": "true"})).await;
    assert_eq!(result.text_content(), "(no output)");
    // stdin is /dev/null: cat ends at once.
    let result = bench.call(json!({"command": "cat"})).await;
    assert_eq!(result.text_content(), "(no output)");
}

#[tokio::test]
async fn non_zero_exit_is_an_error_with_the_code() {
    let bench = bench();
    let result = bench.call(json!({"command": "exit 3"})).await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "(no output)\n\nCommand exited with code 3"
    );
    let result = bench.call(json!({"command": "echo out; exit 3"})).await;
    assert_eq!(result.text_content(), "out\n\n\nCommand exited with code 3");
    assert_eq!(result.details.unwrap()["exitCode"], 3);
}

#[tokio::test]
async fn a_command_that_sigkills_itself_exits_with_137() {
    let bench = bench();
    let result = bench.call(json!({"command": "kill -9 $$"})).await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "(no output)\n\nCommand exited with code 137"
    );
}

#[tokio::test]
async fn timeout_kills_the_group_and_says_so() {
    let bench = bench();
    let start = Instant::now();
    let result = bench
        .call(json!({"command": "echo $$; sleep 100; echo x", "timeout": 1}))
        .await;
    assert!(
        start.elapsed() < Duration::from_secs(15), // promptly: generous, far from the 100 s sleep
        "took {:?}",
        start.elapsed()
    );
    assert!(result.is_error);
    let text = result.text_content();
    assert!(
        text.ends_with("\n\n\nCommand timed out after 1 seconds"),
        "{text:?}"
    );
    assert!(!text.contains('x'));
    assert!(group_is_gone(first_number(&text)).await);
    let result = bench
        .call(json!({"command": "sleep 5", "timeout": 0.05}))
        .await;
    assert_eq!(
        result.text_content(),
        "Command timed out after 0.05 seconds"
    );
}

#[tokio::test]
async fn invalid_timeouts_are_rejected_with_the_reference_messages() {
    let bench = bench();
    for timeout in [json!(0), json!(-1), json!("-0.5")] {
        let result = bench
            .call(json!({"command": "true", "timeout": timeout}))
            .await;
        assert!(result.is_error);
        assert_eq!(
            result.text_content(),
            "timeout must be greater than 0 seconds (omit it for no timeout)"
        );
    }
    let result = bench
        .call(json!({"command": "true", "timeout": 3_000_000}))
        .await;
    assert_eq!(
        result.text_content(),
        "Invalid timeout: maximum is 2147483.647 seconds"
    );
}

#[tokio::test]
async fn background_jobs_and_daemons_do_not_hang_the_call() {
    let bench = bench();
    for command in [
        "sleep 100 & echo started",
        "nohup sleep 100 >/dev/null 2>&1 & echo started",
        "setsid -f bash -c 'echo $$ > daemon.pid; exec sleep 100'; echo started",
    ] {
        let start = Instant::now();
        let result = bench.call(json!({ "command": command })).await;
        assert!(
            start.elapsed() < Duration::from_secs(15), // promptly: generous, far from the 100 s sleep
            "{command}: {:?}",
            start.elapsed()
        );
        assert_eq!(result.text_content(), "started\n", "{command}");
    }
    bench.kill_background();
    let daemon: i32 = std::fs::read_to_string(bench.dir.path().join("daemon.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = std::process::Command::new("kill")
        .args(["-9", &daemon.to_string()])
        .status();
}

#[tokio::test]
async fn cancel_kills_the_tree_and_says_aborted() {
    let bench = bench();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    // Explicit synchronisation: cancel once the command's first output (its pid) arrived.
    let options = CallOptions {
        cancel,
        updates: Some(Arc::new(move |update: ToolUpdate| {
            let printed = update.content.iter().any(|part| match part {
                pith_tools::Content::Text { text } => text.trim().parse::<u32>().is_ok(),
                _ => false,
            });
            if printed {
                trigger.cancel();
            }
        })),
        ..CallOptions::default()
    };
    let start = Instant::now();
    let result = bench
        .call_with(
            json!({"command": "sleep 100 & echo $$; sleep 100"}),
            options,
        )
        .await;
    assert!(
        start.elapsed() < Duration::from_secs(15), // promptly: generous, far from the 100 s sleep
        "took {:?}",
        start.elapsed()
    );
    let text = result.text_content();
    assert!(text.ends_with("\n\n\nCommand aborted"), "{text:?}");
    assert!(group_is_gone(first_number(&text)).await);
}

#[tokio::test]
async fn five_thousand_fast_chunks_give_fewer_than_25_updates() {
    let bench = bench();
    let updates: Arc<Mutex<Vec<ToolUpdate>>> = Arc::default();
    let sink = updates.clone();
    let options = CallOptions {
        updates: Some(Arc::new(move |update| sink.lock().unwrap().push(update))),
        ..CallOptions::default()
    };
    let result = bench
        .call_with(
            json!({"command": "for i in $(seq 5000); do echo $i; done"}),
            options,
        )
        .await;
    assert!(
        result
            .text_content()
            .contains("\n5000\n\n[Showing lines 1-500 and 3523-5000 of 5000.")
    );
    let updates = updates.lock().unwrap();
    assert!(updates.len() < 25, "{} updates", updates.len());
    assert!(updates.len() >= 2, "{} updates", updates.len());
    let last = updates.last().unwrap().content[0]
        .as_text()
        .unwrap()
        .to_owned();
    assert!(last.ends_with("\n5000"), "{last:?}");
}

#[tokio::test]
async fn updates_arrive_while_the_command_is_silent() {
    let bench = bench();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let options = CallOptions {
        updates: Some(Arc::new(move |update: ToolUpdate| {
            if update.content.first().and_then(|c| c.as_text()) == Some("early\n") {
                seen.fetch_add(1, Ordering::SeqCst);
            }
        })),
        ..CallOptions::default()
    };
    let watcher = count.clone();
    let result = bench
        .call_with(
            json!({"command": "echo early; sleep 0.5; echo late"}),
            options,
        )
        .await;
    assert_eq!(result.text_content(), "early\nlate\n");
    assert_eq!(
        watcher.load(Ordering::SeqCst),
        1,
        "the tail was sent once while silent"
    );
}

#[tokio::test]
async fn a_character_split_across_chunks_stays_whole() {
    // Each byte of "€" is written only once pith has read everything before it
    // (FIONREAD on the pipe says 0 unread bytes), so each arrives in its own
    // read: the chunks are made explicit, not left to timing.
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_err()
    {
        return pith_testkit::skip(
            "a_character_split_across_chunks_stays_whole",
            pith_testkit::Prerequisite::Python,
            "python3 is needed to watch the pipe drain",
        );
    }
    let script = "import fcntl, os, struct, termios, time\n\
                  def unread():\n    \
                  return struct.unpack('i', fcntl.ioctl(1, termios.FIONREAD, b'0000'))[0]\n\
                  for b in (b'\\xe2', b'\\x82', b'\\xac\\n'):\n    \
                  os.write(1, b)\n    \
                  while unread():\n        \
                  time.sleep(0.001)\n";
    let bench = bench();
    let result = bench
        .call(json!({"command": format!("python3 -c \"{script}\"")}))
        .await;
    assert_eq!(result.text_content(), "€\n");
}

#[tokio::test]
async fn long_output_shows_head_and_tail_and_is_saved_whole() {
    let bench = bench();
    let result = bench.call(json!({"command": "seq 1 100000"})).await;
    assert!(!result.is_error);
    let details = result.details.clone().unwrap();
    let path = PathBuf::from(details["fullOutputPath"].as_str().unwrap());
    assert_eq!(path.parent().unwrap(), bench.dir.path());
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("pith-bash-") && name.ends_with(".log"),
        "{name}"
    );
    let text = result.text_content();
    assert!(text.starts_with("1\n2\n"), "{}", &text[..20]);
    assert!(text.contains(&format!(
        "\n500\n… 98,022 lines omitted (lines 501-98,522); full output: {} …\n98523\n",
        path.display()
    )));
    assert!(text.ends_with(&format!(
        "\n100000\n\n[Showing lines 1-500 and 98523-100000 of 100000. Full output: {}]",
        path.display()
    )));
    assert_eq!(
        details["truncation"]["omittedLines"],
        json!({"from": 501, "to": 98522})
    );
    assert_eq!(details["truncation"]["signalLines"], json!([]));
    let expected: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    assert_eq!(details["truncation"]["totalLines"], 100_000);
    assert_eq!(details["exitCode"], 0);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn a_session_removes_its_full_output_files_when_it_ends() {
    let bench = bench_with(|bash| bash.keep_output = false);
    let session = bench.tools.session();
    let result = session
        .call(
            "bash",
            json!({"command": "seq 1 5000"}),
            CallOptions::default(),
        )
        .await;
    let path = PathBuf::from(result.details.unwrap()["fullOutputPath"].as_str().unwrap());
    assert!(path.exists());
    let clone = session.clone();
    drop(session);
    assert!(path.exists(), "removed while a clone of the session lives");
    drop(clone);
    assert!(!path.exists(), "{} outlived its session", path.display());
}

#[tokio::test]
async fn a_long_line_is_clipped_and_the_notice_says_so() {
    let bench = bench();
    let result = bench
        .call(json!({"command": "echo a; head -c 5000 /dev/zero | tr '\\0' y; echo; echo b"}))
        .await;
    let text = result.text_content();
    let path = result.details.as_ref().unwrap()["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        text,
        format!(
            "a\n{}... [truncated]\nb\n\n\n[Some lines truncated to 2000 chars. Full output: {path}]",
            "y".repeat(2000)
        )
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 5005);
}

#[tokio::test]
async fn missing_cwd_and_missing_shell_are_clear_errors() {
    let bench = bench();
    let gone = bench.dir.path().join("gone");
    let tools = ToolSet::builder(Env::local()).cwd(&gone).build();
    let result = tools
        .session()
        .call("bash", json!({"command": "true"}), CallOptions::default())
        .await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            gone.display()
        )
    );
    let bench = bench_with(|bash| bash.shell = Some(PathBuf::from("/nope/bash")));
    let result = bench.call(json!({"command": "true"})).await;
    assert_eq!(
        result.text_content(),
        "Custom shell path not found: /nope/bash"
    );
}

#[tokio::test]
async fn prefix_environment_and_spawn_hook_shape_the_command() {
    let hook: SpawnHook = Arc::new(|request| {
        request
            .command
            .push_str("\necho hooked $(basename \"$PWD\")");
        request.cwd = Path::new("/").to_path_buf();
        request.env.push(("PITH_HOOK".to_owned(), "yes".to_owned()));
    });
    let bench = bench_with(|bash| {
        bash.command_prefix = Some("export A=pre".to_owned());
        bash.env.push(("PITH_HOST".to_owned(), "h".to_owned()));
        bash.spawn_hook = Some(hook);
        bash.shell = Some(PathBuf::from("/bin/bash"));
    });
    let result = bench
        .call(json!({"command": "echo $A $PITH_HOST $PITH_HOOK ${#PITH_SESSION_ID}"}))
        .await;
    assert_eq!(result.text_content(), "pre h yes 16\nhooked /\n");
}
