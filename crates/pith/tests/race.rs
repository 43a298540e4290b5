//! Containment under races: a helper process exchanges a directory and a symlink
//! (`renameat2(RENAME_EXCHANGE)`) in a tight loop while writes, contained reads and
//! edits run through `pith batch` and `pith mcp`. Every call must either succeed inside
//! the root or be refused; nothing may appear or change outside, and no outside byte
//! may come back.
// Marks the helpers as test code, where clippy allows unwrap.
#![cfg(test)]

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pith_env::SandboxPolicy;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::mcp::{Server, text};

const WRITES: usize = 2000;
const READS: usize = 1000;
const EDITS: usize = 500;

const SWAP_A: &str = "PITH_RACE_SWAP_A";
const SWAP_B: &str = "PITH_RACE_SWAP_B";
const SWAP_STOP: &str = "PITH_RACE_SWAP_STOP";
const SWAP_STARTED: &str = "PITH_RACE_SWAP_STARTED";
/// The helper's own limit, so a crashed test never leaves it running.
const SWAP_LIMIT: Duration = Duration::from_secs(300);
const PATIENCE: Duration = Duration::from_secs(30);
const HELPER: &str = "race::swapper_exchanges_a_directory_and_a_symlink";

const INSIDE_SECRET: &str = "INSIDE-READABLE\n";
const OUTSIDE_SECRET: &str = "OUTSIDE-SECRET\n";

/// `renameat2(a, b, RENAME_EXCHANGE)`.
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    let a = CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: both are valid NUL-terminated paths that outlive the call.
    let result = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Exchanges `a` and `b` until `stop` exists (or `max` exchanges); creates
/// `started` after the first. Returns the number of exchanges.
fn swap_until(a: &Path, b: &Path, stop: &Path, started: Option<&Path>, max: u64) -> u64 {
    let begin = Instant::now();
    let mut count = 0;
    while count < max && !stop.exists() && begin.elapsed() < SWAP_LIMIT {
        for _ in 0..64 {
            exchange(a, b).unwrap();
            count += 1;
        }
        if count == 64
            && let Some(started) = started
        {
            std::fs::write(started, b"").unwrap();
        }
    }
    count
}

/// As a test: the helper exchanges a directory and a symlink. Started by the race
/// tests with the `PITH_RACE_SWAP_*` variables set, it is the swapper itself.
#[test]
fn swapper_exchanges_a_directory_and_a_symlink() {
    if let (Some(a), Some(b), Some(stop)) = (
        std::env::var_os(SWAP_A),
        std::env::var_os(SWAP_B),
        std::env::var_os(SWAP_STOP),
    ) {
        let started = std::env::var_os(SWAP_STARTED).map(PathBuf::from);
        let count = swap_until(
            Path::new(&a),
            Path::new(&b),
            Path::new(&stop),
            started.as_deref(),
            u64::MAX,
        );
        assert!(count > 0);
        return;
    }
    let dir = TempDir::new().unwrap();
    let (a, b) = (dir.path().join("d"), dir.path().join("s"));
    std::fs::create_dir(&a).unwrap();
    std::os::unix::fs::symlink("/", &b).unwrap();
    let count = swap_until(&a, &b, &dir.path().join("stop"), None, 64 * 3);
    assert_eq!(count, 192);
    // An even number of exchanges: back where they started; then one more.
    assert!(a.symlink_metadata().unwrap().is_dir());
    exchange(&a, &b).unwrap();
    assert!(a.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(b.symlink_metadata().unwrap().is_dir());
}

/// A base for directories the bash sandbox does not allow (it always allows the temp dirs).
fn unsandboxed_base() -> PathBuf {
    let always: Vec<PathBuf> = SandboxPolicy::always_writable()
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .collect();
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(PathBuf::from),
    ];
    for candidate in candidates.into_iter().flatten() {
        let Ok(real) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        if !always.iter().any(|dir| real.starts_with(dir)) {
            return real;
        }
    }
    panic!("no directory outside the temp dirs to race with")
}

/// Where the symlink leads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Aim {
    /// A directory outside the root.
    Outside,
    /// `.git/hooks` inside the root.
    GitHooks,
}

/// The workspace, the directory the symlink leads to and the swapper's files.
struct Arena {
    ws: TempDir,
    /// The directory that must not change: outside, or `.git/hooks`.
    target: PathBuf,
    /// Removed at the end when it is outside.
    outside: Option<PathBuf>,
    aim: Aim,
}

impl Drop for Arena {
    fn drop(&mut self) {
        if let Some(outside) = &self.outside {
            let _ = std::fs::remove_dir_all(outside);
        }
    }
}

impl Arena {
    /// `ws/d` is a real directory, `ws/s` a symlink to the target; both hold
    /// `secret.txt` and the files the edits change.
    fn new(name: &str, aim: Aim) -> Arena {
        Arena::with_edits(name, aim, EDITS)
    }

    /// As [`Arena::new`] with `edits` files for edits on each side.
    fn with_edits(name: &str, aim: Aim, edits: usize) -> Arena {
        let ws = TempDir::new().unwrap();
        let root = ws.path();
        let (target, outside, link) = match aim {
            Aim::Outside => {
                let dir =
                    unsandboxed_base().join(format!("pith-race-{name}-{}", std::process::id()));
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).unwrap();
                (dir.clone(), Some(dir.clone()), dir)
            }
            Aim::GitHooks => {
                let dir = root.join(".git/hooks");
                std::fs::create_dir_all(&dir).unwrap();
                (dir, None, PathBuf::from(".git/hooks"))
            }
        };
        let inside = root.join("d");
        std::fs::create_dir(&inside).unwrap();
        std::os::unix::fs::symlink(&link, root.join("s")).unwrap();
        std::fs::write(inside.join("secret.txt"), INSIDE_SECRET).unwrap();
        let secret = match aim {
            Aim::Outside => OUTSIDE_SECRET,
            // Inside the root: reading it is allowed.
            Aim::GitHooks => "HOOK-READABLE\n",
        };
        std::fs::write(target.join("secret.txt"), secret).unwrap();
        for n in 0..edits {
            std::fs::write(inside.join(format!("e{n}.txt")), format!("old {n}\n")).unwrap();
            std::fs::write(target.join(format!("e{n}.txt")), format!("old {n}\n")).unwrap();
        }
        Arena {
            ws,
            target,
            outside,
            aim,
        }
    }

    fn root(&self) -> &Path {
        self.ws.path()
    }

    fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(&self.target)
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                let name = entry.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(entry.path()).unwrap())
            })
            .collect()
    }

    /// The real directory, wherever the exchanges left it.
    fn inside(&self) -> PathBuf {
        for name in ["d", "s"] {
            let path = self.root().join(name);
            if path.symlink_metadata().unwrap().is_dir() {
                return path;
            }
        }
        panic!("neither d nor s is a directory")
    }

    /// The environment that makes the test binary the swapper.
    fn swapper_env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            (SWAP_A, self.root().join("d")),
            (SWAP_B, self.root().join("s")),
            (SWAP_STOP, self.root().join("stop")),
            (SWAP_STARTED, self.root().join("started")),
        ]
    }

    fn wait_started(&self) {
        let deadline = Instant::now() + PATIENCE;
        while !self.root().join("started").exists() {
            assert!(Instant::now() < deadline, "the swapper did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn stop(&self) {
        std::fs::write(self.root().join("stop"), b"").unwrap();
    }

    /// The calls: writes of new files, contained reads and edits, interleaved.
    fn calls(&self) -> Vec<(Call, Value)> {
        let mut calls = Vec::new();
        for n in 0..WRITES {
            calls.push((
                Call::Write(n),
                json!({"tool": "write", "args": {"path": format!("d/f{n}.txt"), "content": format!("inside {n}\n")}}),
            ));
            if n % 2 == 0 && n / 2 < READS {
                calls.push((
                    Call::Read,
                    json!({"tool": "read", "args": {"path": "d/secret.txt"}}),
                ));
            }
            if n % 4 == 0 && n / 4 < EDITS {
                let e = n / 4;
                calls.push((
                    Call::Edit(e),
                    json!({"tool": "edit", "args": {"path": format!("d/e{e}.txt"), "edits": [{"oldText": format!("old {e}"), "newText": format!("new {e}")}]}}),
                ));
            }
        }
        calls
    }

    /// Checks every result and the target directory; returns (succeeded, refused).
    fn judge(
        &self,
        before: &BTreeMap<String, Vec<u8>>,
        results: &[(Call, bool, String)],
    ) -> (usize, usize) {
        let inside = self.inside();
        let (mut succeeded, mut refused) = (0, 0);
        for (call, is_error, message) in results {
            assert!(
                !message.contains(OUTSIDE_SECRET.trim()),
                "{call:?} returned outside bytes: {message}"
            );
            if *is_error {
                let refusal = message.contains("outside the workspace")
                    || message.contains("inside .git/")
                    || message.contains("try again");
                assert!(refusal, "{call:?} failed without being refused: {message}");
                refused += 1;
                continue;
            }
            succeeded += 1;
            match call {
                Call::Write(n) => assert_eq!(
                    std::fs::read_to_string(inside.join(format!("f{n}.txt"))).unwrap(),
                    format!("inside {n}\n"),
                    "{call:?} reported success: {message}"
                ),
                Call::Read => assert!(
                    message.contains(INSIDE_SECRET.trim())
                        || (self.aim == Aim::GitHooks && message.contains("HOOK-READABLE")),
                    "{call:?}: {message}"
                ),
                Call::Edit(n) => assert_eq!(
                    std::fs::read_to_string(inside.join(format!("e{n}.txt"))).unwrap(),
                    format!("new {n}\n"),
                    "{call:?} reported success: {message}"
                ),
            }
        }
        assert_eq!(
            &self.snapshot(),
            before,
            "files appeared or changed in {}",
            self.target.display()
        );
        let strays = temp_files(self.root());
        assert!(strays.is_empty(), "temp files left behind: {strays:?}");
        assert!(
            succeeded > 0 && refused > 0,
            "the race was not exercised ({succeeded} succeeded, {refused} refused, aim {:?})",
            self.aim
        );
        (succeeded, refused)
    }
}

/// What one call was.
#[derive(Clone, Copy, Debug)]
enum Call {
    Write(usize),
    Read,
    Edit(usize),
}

/// Every `.pith-tmp` file under `dir` (symlinks not followed).
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().ends_with(".pith-tmp") {
                found.push(path.clone());
            }
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path);
            }
        }
    }
    found
}

fn spawn_swapper(arena: &Arena) -> Child {
    spawn_swapper_with(&arena.swapper_env())
}

/// A swapper exchanging the `PITH_RACE_SWAP_A` and `_B` of `env`.
fn spawn_swapper_with(env: &[(&'static str, PathBuf)]) -> Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([HELPER, "--exact", "--nocapture", "--test-threads=1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command.spawn().unwrap()
}

/// Runs `lines` (each with its `tool` and `args`) through one `pith batch
/// --root --contain-reads` while the swapper runs; the results in call order.
fn batch_under_swaps(arena: &Arena, lines: &[Value]) -> Vec<Value> {
    batch_under_swaps_with(arena, lines, &[], &[])
}

/// [`batch_under_swaps`] with more `pith batch` flags (`--remote`) and more
/// pairs to exchange, each by its own swapper.
fn batch_under_swaps_with(
    arena: &Arena,
    lines: &[Value],
    flags: &[&str],
    more_pairs: &[(PathBuf, PathBuf)],
) -> Vec<Value> {
    let mut input = String::new();
    for (id, line) in lines.iter().enumerate() {
        let mut line = line.clone();
        line["id"] = json!(id);
        input.push_str(&line.to_string());
        input.push('\n');
    }
    let mut swappers = vec![spawn_swapper(arena)];
    arena.wait_started();
    for (n, (a, b)) in more_pairs.iter().enumerate() {
        let started = arena.root().join(format!("started-{n}"));
        swappers.push(spawn_swapper_with(&[
            (SWAP_A, a.clone()),
            (SWAP_B, b.clone()),
            (SWAP_STOP, arena.root().join("stop")),
            (SWAP_STARTED, started.clone()),
        ]));
        let deadline = Instant::now() + PATIENCE;
        while !started.exists() {
            assert!(Instant::now() < deadline, "a swapper did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let root = arena.root().to_str().unwrap();
    let mut pith = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["batch", "--cwd", root, "--root", root, "--contain-reads"])
        .args(flags)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = pith.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let output = pith.wait_with_output().unwrap();
    writer.join().unwrap();
    arena.stop();
    for mut swapper in swappers {
        swapper.wait().unwrap();
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut results: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        results.len(),
        lines.len(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    results.sort_by_key(|line| line["id"].as_u64().unwrap());
    results
}

fn race_batch(aim: Aim) {
    race_batch_with(aim, &[]);
}

/// [`race_batch`] with more `pith batch` flags.
fn race_batch_with(aim: Aim, flags: &[&str]) {
    let arena = Arena::new(&format!("batch-{aim:?}-{}", flags.len()), aim);
    let before = arena.snapshot();
    let calls = arena.calls();
    let lines: Vec<Value> = calls.iter().map(|(_, line)| line.clone()).collect();
    let results: Vec<(Call, bool, String)> = batch_under_swaps_with(&arena, &lines, flags, &[])
        .iter()
        .map(|line| {
            let id = line["id"].as_u64().unwrap() as usize;
            (
                calls[id].0,
                line["isError"].as_bool().unwrap(),
                text(line).to_owned(),
            )
        })
        .collect();
    arena.judge(&before, &results);
}

/// Deeper trees on both sides of a search race, so the walk has directories
/// to descend after listing the swapped one, and a name found only outside.
fn search_trees(arena: &Arena) {
    for (dir, text) in [
        (arena.inside(), INSIDE_SECRET),
        (arena.target.clone(), OUTSIDE_SECRET),
    ] {
        std::fs::create_dir_all(dir.join("sub/deeper")).unwrap();
        std::fs::write(dir.join("sub/deeper/nested.txt"), text).unwrap();
    }
    std::fs::write(arena.target.join("outside-only.txt"), OUTSIDE_SECRET).unwrap();
}

/// Searches per tool in the search race.
const SEARCHES: usize = 300;

#[test]
fn batch_grep_and_find_never_list_or_search_outside_while_a_directory_and_a_symlink_swap() {
    let arena = Arena::with_edits("search", Aim::Outside, 0);
    search_trees(&arena);
    let mut lines = Vec::new();
    for _ in 0..SEARCHES {
        lines.push(json!({"tool": "grep", "args": {"pattern": "SECRET|READABLE", "path": "."}}));
        lines.push(json!({"tool": "find", "args": {"pattern": "*.txt", "path": "."}}));
    }
    let results = batch_under_swaps(&arena, &lines);
    let mut through = std::collections::BTreeSet::new();
    let mut inside_found = 0;
    for (line, result) in lines.iter().zip(&results) {
        let output = text(result);
        assert_eq!(result["isError"], json!(false), "{line}: {output}");
        assert!(
            !output.contains(OUTSIDE_SECRET.trim()) && !output.contains("outside-only"),
            "{line} reported something outside the root: {output}"
        );
        for name in ["d", "s"] {
            if output.contains(&format!("{name}/sub/deeper/nested.txt")) {
                through.insert(name);
                inside_found += 1;
            }
        }
    }
    assert!(inside_found > 0, "no search found the inside files");
    // The inside directory was seen under both names: the swaps ran during the searches.
    assert_eq!(
        through.len(),
        2,
        "the race was not exercised: seen through {through:?}"
    );
}

/// Searches per kind (grep of the directory, find in it, grep of the file)
/// in the start race.
const START_SEARCHES: usize = 400;

/// The start of a search swapped: `d` (given as grep's and find's path) is
/// exchanged with `s`, a symlink to an outside directory, and `f.txt` (given
/// as grep's path) with `l.txt`, a symlink to an outside file, while 1,200
/// searches run. Each either searches inside or is refused; nothing outside
/// is ever listed or read.
#[test]
fn batch_grep_and_find_never_search_outside_while_their_start_is_swapped_for_a_symlink() {
    let arena = Arena::with_edits("search-start", Aim::Outside, 0);
    search_trees(&arena);
    let (file, link) = (arena.root().join("f.txt"), arena.root().join("l.txt"));
    std::fs::write(&file, INSIDE_SECRET).unwrap();
    std::os::unix::fs::symlink(arena.target.join("secret.txt"), &link).unwrap();
    let mut lines = Vec::new();
    for _ in 0..START_SEARCHES {
        lines.push(json!({"tool": "grep", "args": {"pattern": "SECRET|READABLE", "path": "d"}}));
        lines.push(json!({"tool": "find", "args": {"pattern": "*.txt", "path": "d"}}));
        lines
            .push(json!({"tool": "grep", "args": {"pattern": "SECRET|READABLE", "path": "f.txt"}}));
    }
    let results = batch_under_swaps_with(&arena, &lines, &[], &[(file, link)]);
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (line, result) in lines.iter().zip(&results) {
        let output = text(result);
        assert!(
            !output.contains(OUTSIDE_SECRET.trim()) && !output.contains("outside-only"),
            "{line} reported something outside the root: {output}"
        );
        let key = format!("{} {}", line["tool"], line["args"]["path"]);
        let count = counts.entry(key).or_default();
        if result["isError"] == json!(true) {
            assert!(
                output.contains("outside the workspace") || output.contains("try again"),
                "{line} failed without being refused: {output}"
            );
            count.1 += 1;
            continue;
        }
        count.0 += 1;
        let expected = if line["tool"] == json!("find") {
            "sub/deeper/nested.txt"
        } else {
            INSIDE_SECRET.trim()
        };
        assert!(output.contains(expected), "{line}: {output}");
    }
    assert_eq!(counts.len(), 3);
    for (search, (succeeded, refused)) in &counts {
        assert!(
            *succeeded > 0 && *refused > 0,
            "the race was not exercised for {search}: {succeeded} succeeded, {refused} refused"
        );
    }
}

/// The write/read/edit race with the tools running on the far side of
/// `--remote env` (this machine, where the swapper runs): `pith serve`
/// enforces the roots by directory handles there.
#[test]
fn remote_batch_writes_reads_and_edits_stay_inside_while_a_far_directory_and_symlink_swap() {
    let pith = format!("--remote-pith={}", env!("CARGO_BIN_EXE_pith"));
    race_batch_with(Aim::Outside, &["--remote", "env", &pith]);
}

/// As above, aimed at `.git/hooks` on the far side.
#[test]
fn remote_batch_writes_and_edits_never_reach_far_git_hooks_through_a_swapped_symlink() {
    let pith = format!("--remote-pith={}", env!("CARGO_BIN_EXE_pith"));
    race_batch_with(Aim::GitHooks, &["--remote", "env", &pith]);
}

#[test]
fn batch_writes_reads_and_edits_stay_inside_while_a_directory_and_a_symlink_swap() {
    race_batch(Aim::Outside);
}

#[test]
fn batch_writes_and_edits_never_reach_git_hooks_through_a_swapped_symlink() {
    race_batch(Aim::GitHooks);
}

fn race_mcp(aim: Aim) {
    let arena = Arena::new(&format!("mcp-{aim:?}"), aim);
    let before = arena.snapshot();
    let calls = arena.calls();
    let mut server = Server::start_with(&arena.ws, &["--contain-reads"]);
    // The swapper is started by the model's own bash tool (sandboxed where Landlock is).
    let mut command = String::new();
    for (key, value) in arena.swapper_env() {
        command.push_str(&format!("{key}='{}' ", value.display()));
    }
    command.push_str(&format!(
        "'{}' {HELPER} --exact --nocapture --test-threads=1 >/dev/null 2>&1; echo swapper-exit=$?",
        std::env::current_exe().unwrap().display()
    ));
    server.send(
        1,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": command, "timeout": 600}}),
    );
    arena.wait_started();
    // Pipelined in chunks: the calls run concurrently in the server, like a model's.
    let mut results = Vec::new();
    let ids: Vec<i64> = (0..calls.len())
        .map(|index| i64::try_from(index).unwrap() + 2)
        .collect();
    for (chunk, chunk_ids) in calls.chunks(250).zip(ids.chunks(250)) {
        for ((_, line), id) in chunk.iter().zip(chunk_ids) {
            server.send(
                *id,
                "tools/call",
                json!({"name": line["tool"], "arguments": line["args"]}),
            );
        }
        for ((call, _), response) in chunk.iter().zip(server.responses(chunk_ids)) {
            let result = &response["result"];
            results.push((
                *call,
                result["isError"].as_bool().unwrap_or(false),
                text(result).to_owned(),
            ));
        }
    }
    arena.stop();
    let bash = server.response(&json!(1));
    assert!(
        text(&bash["result"]).contains("swapper-exit=0"),
        "the swapper did not run cleanly under bash: {bash}"
    );
    arena.judge(&before, &results);
}

#[test]
fn mcp_writes_reads_and_edits_stay_inside_while_bash_swaps_a_directory_and_a_symlink() {
    race_mcp(Aim::Outside);
}

#[test]
fn mcp_writes_and_edits_never_reach_git_hooks_while_bash_swaps_a_symlink() {
    race_mcp(Aim::GitHooks);
}
