//! The connection lost mid-write and mid-command, over a relay transport
//! whose copying processes the tests kill (what a dead SSH client does to the
//! far side: its stdin ends and its stdout breaks).

use std::time::{Duration, Instant};

use pith_env::{CancellationToken, FileSystem};

use super::ports::run;
use super::{children, connect, process_with};

/// A transport that relays both directions through `cat`s.
pub(crate) const RELAY: &str = "sh -c 'cat | \"$@\" | cat' relay";

/// Every descendant of `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut todo = vec![pid];
    while let Some(next) = todo.pop() {
        for child in children(next) {
            all.push(child);
            todo.push(child);
        }
    }
    all
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Kills the transport's processes named `name` (the relay's `cat`s, the
/// `ssh` client): the far side sees its stdin end. Returns the whole tree.
fn cut(transport: u32, name: &str) -> Vec<u32> {
    let mut tree = descendants(transport);
    tree.push(transport);
    for &pid in &tree {
        if comm(pid) == name {
            // SAFETY: kill(2) on a pid read from /proc a moment ago.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
    tree
}

/// Waits (up to 20 s) until none of `pids` is alive.
async fn gone(pids: &[u32]) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let alive = pids.iter().any(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                !stat
                    .rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            })
        });
        if !alive {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// A prefix that marks the far side's environment, so the test can find the
/// far processes (over SSH they are not its descendants).
fn marked(prefix: &str) -> (String, String) {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mark = format!("PITH_FAULT_MARK=m{}x{n}", std::process::id());
    (format!("{prefix} env {mark}"), mark)
}

/// Waits (up to 20 s) until no process carries `mark` in its environment.
async fn far_gone(mark: &str) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let alive = std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            environ.split(|&b| b == 0).any(|var| var == mark.as_bytes())
        });
        if !alive {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Waits (up to 20 s) until the near side noticed its connection is gone.
async fn noticed(remote: &pith_env::RemoteEnv) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if remote.transport_pid().is_none() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_lost_mid_command_kills_the_far_tree_and_the_next_call_reconnects() {
    lost_mid_command_over(RELAY, "cat").await;
}

/// Cuts the connection (kills the transport's `name` processes) during a
/// long command: the call fails naming the remote, the far tree dies, the
/// next call reconnects.
pub(crate) async fn lost_mid_command_over(prefix: &str, name: &str) {
    let (prefix, mark) = marked(prefix);
    let prefix = prefix.as_str();
    let remote = connect(prefix).await;
    let transport = remote.transport_pid().unwrap();
    let marker = format!("31{}09", std::process::id());
    let script = format!("sleep {marker} & sleep {marker}");
    let remote2 = remote.clone();
    let call =
        tokio::spawn(async move { run(&remote2, &script, None, CancellationToken::new()).await });
    // Wait until the far command runs, then cut the connection.
    let start = Instant::now();
    while !process_with(&format!("sleep {marker}")) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the far command never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let far = cut(transport, name);
    let (outcome, _) = call.await.unwrap();
    let error = outcome.unwrap_err().to_string();
    assert!(error.contains(&format!("remote `{prefix}`")), "{error}");
    assert!(error.contains("connection lost"), "{error}");
    assert!(gone(&far).await, "the far side outlived its connection");
    assert!(
        far_gone(&mark).await,
        "the far side outlived its connection"
    );
    assert!(
        !process_with(&format!("sleep {marker}")),
        "the far tree outlived the connection"
    );

    // The next call reconnects.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a"), b"after").unwrap();
    assert_eq!(remote.read(&dir.path().join("a")).await.unwrap(), b"after");
    assert_ne!(remote.transport_pid(), Some(transport));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_lost_mid_write_leaves_the_old_bytes_or_the_new_and_no_temp_file() {
    lost_mid_write_over(RELAY, "cat", 6, 24 << 20).await;
}

/// How many connections [`lost_mid_write_over`] cuts at the same time: the
/// rounds are spread over them, so most of the waiting (reconnecting, the far
/// side ending) overlaps.
const LANES: u64 = 5;

/// Cuts the connection `rounds` times into a write of `size` bytes, at delays
/// that cycle through 0 to 165 ms (from before the first byte arrives to the
/// rename), over [`LANES`] connections at once: the file is the old bytes or
/// the new every time, no temp file.
pub(crate) async fn lost_mid_write_over(prefix: &str, name: &str, rounds: u64, size: usize) {
    let new = std::sync::Arc::new(vec![b'n'; size]);
    let lanes: Vec<_> = (0..LANES.min(rounds))
        .map(|lane| {
            let (prefix, name, new) = (prefix.to_owned(), name.to_owned(), new.clone());
            // Lane `lane` takes rounds lane, lane + LANES, ...
            let rounds: Vec<u64> = (lane..rounds).step_by(LANES as usize).collect();
            tokio::spawn(async move { lost_mid_write_lane(&prefix, &name, &rounds, new).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for lane in lanes {
        outcomes.extend(lane.await.unwrap());
    }
    outcomes.sort_unstable();
    assert_eq!(outcomes.len() as u64, rounds);
    let renamed: Vec<u64> = outcomes
        .iter()
        .filter(|(_, new)| *new)
        .map(|(round, _)| *round)
        .collect();
    eprintln!("new bytes after the cut in rounds {renamed:?}, old bytes in the others");
}

/// One connection's share of [`lost_mid_write_over`]: (round, whether the
/// file held the new bytes) per round.
async fn lost_mid_write_lane(
    prefix: &str,
    name: &str,
    rounds: &[u64],
    new: std::sync::Arc<Vec<u8>>,
) -> Vec<(u64, bool)> {
    let (prefix, mark) = marked(prefix);
    let remote = connect(&prefix).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("target.bin");
    let old = vec![b'o'; 1 << 20];
    let mut outcomes = Vec::new();
    for &round in rounds {
        std::fs::write(&path, &old).unwrap();
        // Connect now, so the cut below hits this round's write.
        remote.metadata(dir.path()).await.unwrap();
        let transport = remote.transport_pid().unwrap();
        let writer = {
            let remote = remote.clone();
            let path = path.clone();
            let new = new.clone();
            tokio::spawn(async move { remote.write_atomic(&path, &new).await })
        };
        tokio::time::sleep(Duration::from_millis((round % 12) * 15)).await;
        let far = cut(transport, name);
        let result = writer.await.unwrap();
        assert!(
            gone(&far).await,
            "round {round}: the transport outlived the cut"
        );
        assert!(
            far_gone(&mark).await,
            "round {round}: the far side outlived its connection"
        );
        assert!(
            noticed(&remote).await,
            "round {round}: the loss went unnoticed"
        );
        let contents = std::fs::read(&path).unwrap();
        assert!(
            contents == old || contents == *new,
            "round {round}: torn file of {} bytes",
            contents.len()
        );
        if let Err(error) = &result {
            assert!(error.to_string().contains("connection lost"), "{error}");
        }
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["target.bin"], "round {round}: a temp file was left");
        outcomes.push((round, contents == *new));
    }
    outcomes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_read_tracking_survives_a_reconnect() {
    use pith_tools::{CallOptions, OverwritePolicy, ToolSet};
    use std::sync::Arc;

    let remote = connect(RELAY).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("read.txt"), "before\n").unwrap();
    std::fs::write(dir.path().join("unread.txt"), "before\n").unwrap();
    let far = Arc::new(remote.clone());
    let env = pith_env::Env {
        fs: far.clone(),
        exec: far.clone(),
        search: far,
    };
    let session = ToolSet::builder(env)
        .cwd(dir.path())
        .overwrite_policy(OverwritePolicy::RequireRead)
        .build()
        .session();
    let call = |tool: &'static str, args: serde_json::Value| {
        let session = session.clone();
        async move { session.call(tool, args, CallOptions::default()).await }
    };
    let read = call("read", serde_json::json!({"path": "read.txt"})).await;
    assert!(!read.is_error);

    let transport = remote.transport_pid().unwrap();
    let far = cut(transport, "cat");
    assert!(gone(&far).await, "the far side outlived its connection");
    assert!(noticed(&remote).await, "the loss went unnoticed");

    // The write reconnects, and the session still knows the file was read.
    let wrote = call(
        "write",
        serde_json::json!({"path": "read.txt", "content": "after\n"}),
    )
    .await;
    assert!(!wrote.is_error, "{wrote:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("read.txt")).unwrap(),
        "after\n"
    );
    assert_ne!(remote.transport_pid(), Some(transport));
    // ... and still refuses a file it never read.
    let refused = call(
        "write",
        serde_json::json!({"path": "unread.txt", "content": "x\n"}),
    )
    .await;
    assert!(refused.is_error, "{refused:?}");
}
