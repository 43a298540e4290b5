//! The ports over `--remote env`: the conformance suite, and exec and search
//! compared with LocalEnv on the same files.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pith_env::conformance::{Confined, Fixture, run_all};
use pith_env::{
    CancellationToken, Exec, ExecError, ExecRequest, ExitStatus, FileSystem, FindRequest,
    GrepRequest, LocalEnv, OutputStream, Search, SearchError, Termination,
};

use super::{connect, process_with};

struct Remote {
    fs: Arc<dyn FileSystem>,
    dir: tempfile::TempDir,
}

impl Fixture for Remote {
    fn fs(&self) -> Arc<dyn FileSystem> {
        self.fs.clone()
    }

    fn root(&self) -> PathBuf {
        self.dir.path().to_owned()
    }

    // The far side is this machine: the fixture works on its files directly.
    fn symlink(&self, link: &Path, target: &Path) -> Result<(), String> {
        std::os::unix::fs::symlink(target, link).map_err(|error| error.to_string())
    }

    fn set_mode(&self, path: &Path, mode: u32) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|error| error.to_string())
    }
}

/// Runs the file-system conformance suite over `prefix`, then again through
/// a view confined to the fixture's root (enforced by the far side).
pub(crate) async fn conformance_over(prefix: &str) {
    let fixture = Remote {
        fs: Arc::new(connect(prefix).await),
        dir: tempfile::tempdir().unwrap(),
    };
    let report = run_all(&fixture).await;
    assert!(report.is_success(), "{report}");
    assert_eq!(report.passed.len(), 26, "{report}");
    let fixture = Remote {
        fs: fixture.fs.clone(),
        dir: tempfile::tempdir().unwrap(),
    };
    let report = run_all(&Confined(&fixture)).await;
    assert!(report.is_success(), "confined: {report}");
    assert_eq!(report.passed.len(), 26, "confined: {report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_env_keeps_the_file_system_contract_over_env() {
    conformance_over("env").await;
}

/// Runs a shell script; returns the outcome and the output as `o:`/`e:` lines.
pub(crate) async fn run(
    exec: &dyn Exec,
    script: &str,
    timeout: Option<Duration>,
    cancel: CancellationToken,
) -> (Result<pith_env::ExecOutcome, ExecError>, String) {
    let mut request = ExecRequest::new("/bin/sh", vec!["-c".into(), script.into()], "/tmp");
    request.timeout = timeout;
    let mut output = String::new();
    let mut sink = |stream: OutputStream, bytes: &[u8]| {
        let tag = if stream == OutputStream::Stdout {
            "o"
        } else {
            "e"
        };
        output.push_str(&format!("{tag}:{}", String::from_utf8_lossy(bytes)));
    };
    let outcome = exec.exec(request, &mut sink, cancel).await;
    (outcome, output)
}

/// The exec port's observable results over `prefix` equal LocalEnv's.
pub(crate) async fn exec_matches_local_over(prefix: &str) {
    let remote = connect(prefix).await;
    let local = LocalEnv::new();
    let marks = tempfile::tempdir().unwrap();
    for exec in [&local as &dyn Exec, &remote as &dyn Exec] {
        // Explicit synchronisation instead of sleeps: the command writes its next line
        // only after the sink has received the previous one (the sink creates a file).
        let seen = |name: &str| marks.path().join(name);
        for name in ["o", "e"] {
            let _ = std::fs::remove_file(seen(name));
        }
        let script = format!(
            "echo out1; until [ -e {o} ]; do sleep 0.01; done; echo err1 >&2; \
             until [ -e {e} ]; do sleep 0.01; done; echo out2; \
             printf 'A=%s\\n' \"$PITH_REMOTE_TEST\"; exit 3",
            o = seen("o").display(),
            e = seen("e").display(),
        );
        let mut request = ExecRequest::new("/bin/sh", vec!["-c".into(), script.into()], "/tmp");
        request.env = vec![("PITH_REMOTE_TEST".into(), "x y".into())];
        // Chunking depends on timing: adjacent chunks of one stream are merged.
        let mut output = String::new();
        let mut last = None;
        let mut sink = |stream: OutputStream, bytes: &[u8]| {
            if last != Some(stream) {
                let tag = if stream == OutputStream::Stdout {
                    "o"
                } else {
                    "e"
                };
                output.push_str(&format!("{tag}:"));
                last = Some(stream);
                std::fs::write(seen(tag), b"").unwrap();
            }
            output.push_str(&String::from_utf8_lossy(bytes));
        };
        let outcome = exec
            .exec(request, &mut sink, CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(outcome.status, ExitStatus::Code(3));
        assert_eq!(outcome.termination, Termination::Exited);
        assert_eq!(output, "o:out1\ne:err1\no:out2\nA=x y\n");
    }

    // Binary output arrives byte for byte, and a lot of it (backpressure).
    let (outcome, _) = run(
        &remote,
        "head -c 20000000 /dev/zero | tr '\\0' 'z'",
        None,
        CancellationToken::new(),
    )
    .await;
    assert!(outcome.unwrap().status.success());

    let missing = ExecRequest::new("/bin/sh", vec![], "/no/such/dir");
    let error = remote
        .exec(
            missing,
            &mut |_: OutputStream, _: &[u8]| {},
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, ExecError::MissingCwd(ref dir) if dir == Path::new("/no/such/dir")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_over_env_gives_what_local_gives() {
    exec_matches_local_over("env").await;
}

/// Cancelling and timing out reach the far side and kill the far tree.
pub(crate) async fn cancel_and_timeout_kill_the_far_tree_over(prefix: &str) {
    let remote = connect(prefix).await;
    let marker = format!("31{}07", std::process::id());
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        canceller.cancel();
    });
    let script = format!("sleep {marker} & sleep {marker}; echo never");
    let (outcome, output) = run(&remote, &script, None, cancel).await;
    assert_eq!(outcome.unwrap().termination, Termination::Cancelled);
    assert!(!output.contains("never"));
    assert!(
        !process_with(&format!("sleep {marker}")),
        "the cancelled tree lives on"
    );

    let marker = format!("31{}08", std::process::id());
    let script = format!("sleep {marker} & sleep {marker}");
    let (outcome, _) = run(
        &remote,
        &script,
        Some(Duration::from_millis(300)),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(outcome.unwrap().termination, Termination::TimedOut);
    assert!(
        !process_with(&format!("sleep {marker}")),
        "the timed-out tree lives on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_and_timeout_kill_the_far_tree_over_env() {
    cancel_and_timeout_kill_the_far_tree_over("env").await;
}

/// A tree to search: ignored files, hidden files, a binary file, nesting.
fn search_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files: [(&str, &[u8]); 7] = [
        (".gitignore", b"ignored.txt\nbuild/\n"),
        ("ignored.txt", b"needle ignored\n"),
        ("build/out.txt", b"needle built\n"),
        ("src/a.rs", b"fn main() {\n    needle();\n}\n"),
        ("src/deep/b.rs", b"// Needle\nlet x = 1;\nneedle\n"),
        (".hidden/c.txt", b"needle hidden\n"),
        ("bin.dat", b"needle\0\x01\x02"),
    ];
    for (path, contents) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    dir
}

/// The search port over `prefix` returns exactly what LocalEnv returns.
pub(crate) async fn search_matches_local_over(prefix: &str) {
    let remote = connect(prefix).await;
    let local = LocalEnv::new();
    let tree = search_tree();
    let root = tree.path().to_path_buf();
    for (pattern, ignore_case, context) in [("needle", false, 0), ("needle", true, 1)] {
        let request = GrepRequest {
            pattern: pattern.to_owned(),
            root: root.clone(),
            glob: None,
            ignore_case,
            literal: false,
            context,
            limit: 100,
        };
        let near = local
            .grep(request.clone(), CancellationToken::new())
            .await
            .unwrap();
        let far = remote
            .grep(request, CancellationToken::new())
            .await
            .unwrap();
        assert!(near.match_count >= 3);
        assert_eq!(far, near);
    }
    for pattern in ["*.rs", "**", "src/**"] {
        let request = FindRequest {
            pattern: pattern.to_owned(),
            root: root.clone(),
            limit: 100,
        };
        let near = local
            .find(request.clone(), CancellationToken::new())
            .await
            .unwrap();
        let far = remote
            .find(request, CancellationToken::new())
            .await
            .unwrap();
        assert!(!near.entries.is_empty());
        assert_eq!(far, near);
    }
    let bad = GrepRequest {
        pattern: "(".to_owned(),
        root: root.clone(),
        glob: None,
        ignore_case: false,
        literal: false,
        context: 0,
        limit: 10,
    };
    let error = remote
        .grep(bad, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, SearchError::InvalidPattern(_)), "{error}");
    let missing = FindRequest {
        pattern: "*".to_owned(),
        root: root.join("nope"),
        limit: 10,
    };
    let error = remote
        .find(missing, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, SearchError::NotFound(_)), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_over_env_gives_what_local_gives() {
    search_matches_local_over("env").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_streams_a_large_file_and_output_logs_land_on_the_far_side() {
    let remote = connect("env").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.bin");
    let bytes: Vec<u8> = (0..9_000_000_u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &bytes).unwrap();
    let mut reader = remote.open(&path).await.unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0_u8; 100_000];
    loop {
        let n = reader.read_chunk(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    assert!(
        got == bytes,
        "streamed {} bytes, expected {}",
        got.len(),
        bytes.len()
    );
    drop(reader);
    assert_eq!(
        remote.read_range(&path, 8_999_990, 100).await.unwrap(),
        &bytes[8_999_990..]
    );

    let mut log = remote.create_output_log(dir.path(), "bash-").unwrap();
    log.write_all(b"first ").unwrap();
    log.write_all(b"second").unwrap();
    let log_path = log.path().to_path_buf();
    drop(log);
    assert!(
        log_path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("bash-")
    );
    // The far side handles a log's messages before any later call.
    assert_eq!(remote.read(&log_path).await.unwrap(), b"first second");
}
