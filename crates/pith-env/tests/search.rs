//! The search port on fixture trees built in temp dirs. Run against LocalEnv
//! here and, included by the pith crate's remote tests, against a RemoteEnv
//! (`super::port` says which).

use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::port::env;
use pith_env::{
    BinaryFile, CancellationToken, FindOutput, FindRequest, GrepLine, GrepOutput, GrepRequest,
    Search, SearchError,
};
use tempfile::TempDir;

fn write(root: &Path, relative: &str, contents: &[u8]) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

fn request(root: &Path, pattern: &str) -> GrepRequest {
    GrepRequest {
        pattern: pattern.to_owned(),
        root: root.to_path_buf(),
        glob: None,
        ignore_case: false,
        literal: false,
        context: 0,
        limit: 100,
    }
}

async fn grep(request: GrepRequest) -> Result<GrepOutput, SearchError> {
    env().await.grep(request, CancellationToken::new()).await
}

async fn grep_rows(request: GrepRequest) -> Vec<String> {
    let output = grep(request).await.unwrap();
    output
        .lines
        .iter()
        .map(|line| {
            let mark = if line.is_match { ':' } else { '-' };
            format!(
                "{}{mark}{}{mark} {}",
                line.path, line.line_number, line.text
            )
        })
        .collect()
}

async fn find(root: &Path, pattern: &str, limit: usize) -> Result<FindOutput, SearchError> {
    let request = FindRequest {
        pattern: pattern.to_owned(),
        root: root.to_path_buf(),
        limit,
    };
    env().await.find(request, CancellationToken::new()).await
}

async fn found(root: &Path, pattern: &str) -> Vec<String> {
    let output = find(root, pattern, 1000).await.unwrap();
    output
        .entries
        .iter()
        .map(|e| format!("{}{}", e.path, if e.is_dir { "/" } else { "" }))
        .collect()
}

/// `.gitignore` at the root ignores `*.log`; `a/.gitignore` ignores `secret.txt`
/// (only below `a/`). No git repository anywhere.
fn ignore_tree() -> TempDir {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    write(root, ".gitignore", b"*.log\n");
    write(root, "a/.gitignore", b"secret.txt\n");
    write(root, "a/secret.txt", b"needle a secret\n");
    write(root, "a/kept.txt", b"needle a kept\n");
    write(root, "b/secret.txt", b"needle b secret\n");
    write(root, "debug.log", b"needle log\n");
    write(root, ".hidden/inside.txt", b"needle hidden\n");
    write(root, ".env", b"needle env\n");
    write(root, ".git/config", b"needle git\n");
    write(root, ".ignore", b"skipped-by-dot-ignore.txt\n");
    write(root, "skipped-by-dot-ignore.txt", b"needle dot ignore\n");
    dir
}

#[tokio::test]
async fn grep_applies_nested_gitignore_hierarchically_outside_git_repositories() {
    let dir = ignore_tree();
    let rows = grep_rows(request(dir.path(), "needle")).await;
    assert_eq!(
        rows,
        [
            ".env: 1: needle env",
            ".hidden/inside.txt: 1: needle hidden",
            "a/kept.txt: 1: needle a kept",
            "b/secret.txt: 1: needle b secret",
        ]
        .map(|row| row.replacen(": ", ":", 1))
    );
}

#[tokio::test]
async fn grep_searches_hidden_files_and_never_dot_git() {
    let dir = ignore_tree();
    let output = grep(request(dir.path(), "needle")).await.unwrap();
    let paths: Vec<&str> = output.lines.iter().map(|l| l.path.as_str()).collect();
    assert!(paths.contains(&".env"));
    assert!(paths.contains(&".hidden/inside.txt"));
    assert!(!paths.iter().any(|p| p.starts_with(".git/")), "{paths:?}");
}

#[tokio::test]
async fn gitignore_counts_inside_a_git_repository_too() {
    let dir = ignore_tree();
    fs::create_dir_all(dir.path().join(".git/info")).unwrap();
    write(dir.path(), ".git/info/exclude", b"kept.txt\n");
    let rows = grep_rows(request(dir.path(), "needle")).await;
    assert!(!rows.iter().any(|r| r.contains("kept.txt")), "{rows:?}");
    assert!(!rows.iter().any(|r| r.contains("a/secret")), "{rows:?}");
    assert!(
        rows.iter().any(|r| r.starts_with("b/secret.txt")),
        "{rows:?}"
    );
}

#[tokio::test]
async fn grep_skips_binary_files() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "blob.bin", b"needle\0\x01\x02needle\n");
    write(dir.path(), "text.txt", b"needle\n");
    let rows = grep_rows(request(dir.path(), "needle")).await;
    assert_eq!(rows, ["text.txt:1: needle"]);
}

#[tokio::test]
async fn grep_reports_matches_before_the_first_nul_and_names_the_file_binary() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "a.dat", b"needle one\n\0\nneedle two\n");
    // A NUL far past the first read: every line before its line is searched.
    let mut late = Vec::new();
    for line in 0..100_000 {
        late.extend_from_slice(format!("line {line}\n").as_bytes());
    }
    late.extend_from_slice(b"needle late\n");
    let nul_offset = late.len() as u64 + 3;
    late.extend_from_slice(b"abc\0needle after\n");
    write(dir.path(), "b.dat", &late);
    write(dir.path(), "c.dat", b"\0needle\n");
    let output = grep(request(dir.path(), "needle")).await.unwrap();
    let rows: Vec<String> = output
        .lines
        .iter()
        .map(|line| format!("{}:{}: {}", line.path, line.line_number, line.text))
        .collect();
    assert_eq!(rows, ["a.dat:1: needle one", "b.dat:100001: needle late"]);
    let binary = |path: &str, offset| BinaryFile {
        path: path.to_owned(),
        offset,
    };
    assert_eq!(
        output.binary,
        [binary("a.dat", 11), binary("b.dat", nul_offset)]
    );
    assert_eq!(output.binary_count, 2);
    // A single file named as the root behaves the same.
    let output = grep(request(&dir.path().join("a.dat"), "needle"))
        .await
        .unwrap();
    assert_eq!(output.match_count, 1);
    assert_eq!(output.binary, [binary("a.dat", 11)]);
}

#[tokio::test]
async fn grep_output_has_no_carriage_returns_from_crlf_files() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "dos.txt", b"one\r\nneedle two\r\nthree\r\n");
    let mut req = request(dir.path(), "two");
    req.context = 1;
    let rows = grep_rows(req).await;
    assert_eq!(
        rows,
        [
            "dos.txt-1- one",
            "dos.txt:2: needle two",
            "dos.txt-3- three"
        ]
    );
}

#[tokio::test]
async fn grep_survives_a_file_name_that_is_not_utf8() {
    let dir = TempDir::new().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    fs::write(dir.path().join(name), b"needle\n").unwrap();
    let rows = grep_rows(request(dir.path(), "needle")).await;
    assert_eq!(rows, ["caf\u{fffd}.txt:1: needle"]);
    let entries = found(dir.path(), "*.txt").await;
    assert_eq!(entries, ["caf\u{fffd}.txt"]);
}

#[tokio::test]
async fn a_symlink_loop_neither_hangs_nor_crashes() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "a/file.txt", b"needle\n");
    std::os::unix::fs::symlink("..", dir.path().join("a/up")).unwrap();
    std::os::unix::fs::symlink("self", dir.path().join("self")).unwrap();
    let started = Instant::now();
    let rows = grep_rows(request(dir.path(), "needle")).await;
    assert_eq!(rows, ["a/file.txt:1: needle"]);
    let entries = found(dir.path(), "*").await;
    assert_eq!(entries, ["a/", "a/file.txt", "a/up", "self"]);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn nearby_context_windows_merge_without_duplicate_rows() {
    let dir = TempDir::new().unwrap();
    let text: String = (1..=12).map(|n| format!("line {n}\n")).collect();
    write(dir.path(), "f.txt", text.as_bytes());
    let mut req = request(dir.path(), "^line (4|6|11)$");
    req.context = 2;
    let rows = grep_rows(req).await;
    assert_eq!(
        rows,
        [
            "f.txt-2- line 2",
            "f.txt-3- line 3",
            "f.txt:4: line 4",
            "f.txt-5- line 5",
            "f.txt:6: line 6",
            "f.txt-7- line 7",
            "f.txt-8- line 8",
            "f.txt-9- line 9",
            "f.txt-10- line 10",
            "f.txt:11: line 11",
            "f.txt-12- line 12",
        ]
    );
}

#[tokio::test]
async fn the_limit_keeps_the_after_context_of_the_last_match() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "f.txt", b"a\nneedle 1\nb\nc\nneedle 2\n");
    let mut req = request(dir.path(), "needle");
    req.context = 1;
    req.limit = 1;
    let output = grep(req).await.unwrap();
    assert!(output.limit_reached);
    assert_eq!(output.match_count, 1);
    let lines: Vec<u64> = output.lines.iter().map(|l| l.line_number).collect();
    assert_eq!(lines, [1, 2, 3]);
}

#[tokio::test]
async fn glob_filters_by_name_at_any_depth_or_by_path() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "a.ts", b"needle\n");
    write(dir.path(), "src/deep/b.ts", b"needle\n");
    write(dir.path(), "src/deep/b.spec.ts", b"needle\n");
    write(dir.path(), "src/c.js", b"needle\n");
    let mut req = request(dir.path(), "needle");
    req.glob = Some("*.ts".into());
    let rows = grep_rows(req.clone()).await;
    assert_eq!(
        rows,
        [
            "a.ts:1: needle",
            "src/deep/b.spec.ts:1: needle",
            "src/deep/b.ts:1: needle"
        ]
    );
    req.glob = Some("src/**/*.spec.ts".into());
    assert_eq!(grep_rows(req).await, ["src/deep/b.spec.ts:1: needle"]);
}

#[tokio::test]
async fn ignore_case_literal_and_dash_patterns_match_as_asked() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "f.txt", b"Needle\naxb\na.b\nrun -v now\n");
    let mut req = request(dir.path(), "needle");
    assert!(grep_rows(req.clone()).await.is_empty());
    req.ignore_case = true;
    assert_eq!(grep_rows(req).await, ["f.txt:1: Needle"]);

    let mut req = request(dir.path(), "a.b");
    assert_eq!(grep_rows(req.clone()).await.len(), 2);
    req.literal = true;
    assert_eq!(grep_rows(req).await, ["f.txt:3: a.b"]);

    let req = request(dir.path(), "-v");
    assert_eq!(grep_rows(req).await, ["f.txt:4: run -v now"]);
}

#[tokio::test]
async fn an_invalid_regex_is_one_line_naming_the_problem() {
    let dir = TempDir::new().unwrap();
    let error = grep(request(dir.path(), "foo(")).await.unwrap_err();
    let SearchError::InvalidPattern(message) = &error else {
        panic!("{error:?}");
    };
    assert!(message.contains("unclosed group"), "{message}");
    assert!(!error.to_string().contains('\n'), "{error}");
}

#[tokio::test]
async fn a_missing_root_is_not_found() {
    let dir = TempDir::new().unwrap();
    let missing = dir.path().join("nope");
    let error = grep(request(&missing, "x")).await.unwrap_err();
    assert!(
        matches!(&error, SearchError::NotFound(path) if path == &missing),
        "{error:?}"
    );
    let error = find(&missing, "*", 10).await.unwrap_err();
    assert!(matches!(error, SearchError::NotFound(_)), "{error:?}");
}

#[tokio::test]
async fn a_single_file_root_shows_the_file_name() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "sub/only.txt", b"x\nneedle\n");
    let rows = grep_rows(request(&dir.path().join("sub/only.txt"), "needle")).await;
    assert_eq!(rows, ["only.txt:2: needle"]);
}

#[tokio::test]
async fn the_limit_takes_the_first_matches_in_path_order_every_time() {
    let dir = TempDir::new().unwrap();
    for top in ["b", "a", "c"] {
        for file in 0..40 {
            write(
                dir.path(),
                &format!("{top}/{file:02}.txt"),
                b"needle\nneedle\n",
            );
        }
    }
    write(dir.path(), "a.txt", b"needle\n");
    let mut req = request(dir.path(), "needle");
    req.limit = 5;
    let first = grep(req.clone()).await.unwrap();
    assert!(first.limit_reached);
    assert_eq!(first.match_count, 5);
    let rows: Vec<String> = first
        .lines
        .iter()
        .map(|l| format!("{}:{}", l.path, l.line_number))
        .collect();
    assert_eq!(
        rows,
        [
            "a/00.txt:1",
            "a/00.txt:2",
            "a/01.txt:1",
            "a/01.txt:2",
            "a/02.txt:1"
        ]
    );
    for _ in 0..5 {
        assert_eq!(grep(req.clone()).await.unwrap(), first);
    }
    req.limit = 1000;
    let all = grep(req).await.unwrap();
    assert!(!all.limit_reached);
    assert_eq!(all.match_count, 241);
    assert_eq!(all.lines[80].path, "a.txt");
}

/// Bytes this process has read through `read(2)` so far.
fn bytes_read_by_this_process() -> u64 {
    let io = fs::read_to_string("/proc/self/io").unwrap();
    io.lines()
        .find_map(|line| line.strip_prefix("rchar: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_one_gib_file_with_an_early_match_returns_at_once_without_reading_it() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("huge.txt");
    {
        let mut file = fs::File::create(&path).unwrap();
        let chunk =
            "filler text without the word, just a source-like line of code;\n".repeat(16_384);
        file.write_all(b"first line\nneedle here\n").unwrap();
        let mut written = 0u64;
        while written < 1 << 30 {
            file.write_all(chunk.as_bytes()).unwrap();
            written += chunk.len() as u64;
        }
        file.write_all(b"needle at the end\n").unwrap();
    }
    let mut req = request(dir.path(), "needle");
    req.limit = 1;
    let before = bytes_read_by_this_process();
    let started = Instant::now();
    let output = grep(req).await.unwrap();
    let elapsed = started.elapsed();
    let read = bytes_read_by_this_process() - before;
    drop(dir);
    assert_eq!(output.match_count, 1);
    assert!(output.limit_reached);
    assert_eq!(output.lines[0].text, "needle here");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    // Other tests run in this process, but they read kilobytes, not 64 MiB.
    assert!(read < 64 << 20, "read {read} bytes");
}

#[tokio::test]
async fn a_cancelled_search_reports_cancelled() {
    let dir = ignore_tree();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = env()
        .await
        .grep(request(dir.path(), "needle"), cancel)
        .await
        .unwrap_err();
    assert!(matches!(error, SearchError::Cancelled));
}

#[tokio::test]
async fn find_matches_path_globs() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    for file in [
        "src/a.spec.ts",
        "src/x/b.spec.ts",
        "src/x/c.ts",
        "pkg/src/d.spec.ts",
        "some/dir/e.txt",
        "some/dir/f/g.txt",
        "q/parent/child/h.txt",
        "q/parent/child/i/j.txt",
    ] {
        write(root, file, b"");
    }
    assert_eq!(
        found(root, "src/**/*.spec.ts").await,
        ["src/a.spec.ts", "src/x/b.spec.ts"]
    );
    assert_eq!(
        found(root, "**/src/**/*.spec.ts").await,
        ["pkg/src/d.spec.ts", "src/a.spec.ts", "src/x/b.spec.ts"]
    );
    assert_eq!(found(root, "./src/*.ts").await, ["src/a.spec.ts"]);
    assert_eq!(
        found(root, "some/dir/**").await,
        ["some/dir/e.txt", "some/dir/f/", "some/dir/f/g.txt"]
    );
    assert_eq!(
        found(root, "**/parent/child/*").await,
        ["q/parent/child/h.txt", "q/parent/child/i/"]
    );
    assert_eq!(found(root, "*.ts").await.len(), 4);
}

#[tokio::test]
async fn find_applies_nested_gitignore_hierarchically_and_lists_hidden_files() {
    let dir = ignore_tree();
    assert_eq!(
        found(dir.path(), "*").await,
        [
            ".env",
            ".gitignore",
            ".hidden/",
            ".hidden/inside.txt",
            ".ignore",
            "a/",
            "a/.gitignore",
            "a/kept.txt",
            "b/",
            "b/secret.txt",
        ]
    );
}

#[tokio::test]
async fn find_stops_at_the_limit_with_the_first_paths_in_order() {
    let dir = TempDir::new().unwrap();
    for n in 0..50 {
        write(dir.path(), &format!("d{}/f{n:02}.txt", n % 3), b"");
    }
    let output = find(dir.path(), "*.txt", 4).await.unwrap();
    assert!(output.limit_reached);
    let paths: Vec<&str> = output.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        ["d0/f00.txt", "d0/f03.txt", "d0/f06.txt", "d0/f09.txt"]
    );
    let exact = find(dir.path(), "*.txt", 50).await.unwrap();
    assert!(!exact.limit_reached);
    assert_eq!(exact.entries.len(), 50);
}

#[tokio::test]
async fn find_reports_an_invalid_glob() {
    let dir = TempDir::new().unwrap();
    let error = find(dir.path(), "[abc", 10).await.unwrap_err();
    assert!(matches!(error, SearchError::InvalidGlob(_)), "{error:?}");
    assert!(!error.to_string().contains('\n'));
}

/// Every kind of ignore rule, at several levels, and one above the root.
/// Returns the temp dir and the search root (`outer/root`).
fn rules_tree() -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new().unwrap();
    let outer = dir.path().join("outer");
    write(&outer, ".gitignore", b"above.txt\n");
    let root = outer.join("root");
    for (path, text) in [
        (
            ".gitignore",
            "*.log\n!keep.log\n/anchored.txt\nbuild/\nnested-ok.txt\n",
        ),
        (".ignore", "dot-ignored.txt\n!force.txt\n"),
        (".git/info/exclude", "excluded.txt\n"),
        ("sub/.gitignore", "!*.log\nforce.txt\n!excluded.txt\n"),
        ("sub/.ignore", "!nested-ok.txt\n"),
    ] {
        write(&root, path, text.as_bytes());
    }
    for path in [
        "x.log",
        "keep.log",
        "anchored.txt",
        "build/out.txt",
        "nested-ok.txt",
        "dot-ignored.txt",
        "excluded.txt",
        "above.txt",
        "plain.txt",
        "sub/x.log",
        "sub/anchored.txt",
        "sub/build",
        "sub/deeper/build/out.txt",
        "sub/deeper/kept.txt",
        "sub/force.txt",
        "sub/nested-ok.txt",
        "sub/excluded.txt",
        "sub/above.txt",
        "sub/dot-ignored.txt",
    ] {
        write(&root, path, b"needle\n");
    }
    (dir, root)
}

#[tokio::test]
async fn ignore_rules_nest_negate_anchor_and_apply_to_directories_only_where_asked() {
    let (_dir, root) = rules_tree();
    assert_eq!(
        found(&root, "*").await,
        [
            ".gitignore",
            ".ignore",
            "keep.log",
            "plain.txt",
            "sub/",
            "sub/.gitignore",
            "sub/.ignore",
            // A deeper `!*.log` re-includes what the root ignored.
            "sub/anchored.txt",
            // `build/` matches directories only; `/anchored.txt` the root's.
            "sub/build",
            "sub/deeper/",
            "sub/deeper/kept.txt",
            // A deeper .gitignore whitelist beats .git/info/exclude.
            "sub/excluded.txt",
            // The root's .ignore whitelist beats sub/.gitignore's rule.
            "sub/force.txt",
            // sub/.ignore's whitelist beats the root's .gitignore.
            "sub/nested-ok.txt",
            "sub/x.log",
        ]
    );
    let rows = grep_rows(request(&root, "needle")).await;
    let paths: Vec<&str> = rows
        .iter()
        .map(|row| row.split(':').next().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "keep.log",
            "plain.txt",
            "sub/anchored.txt",
            "sub/build",
            "sub/deeper/kept.txt",
            "sub/excluded.txt",
            "sub/force.txt",
            "sub/nested-ok.txt",
            "sub/x.log",
        ]
    );
}

/// The entries ripgrep's `ignore` walker yields with the rules pith documents
/// (hidden files, `.gitignore` outside git, parents, no `.git/`), in path order.
fn ignore_crate_walk(root: &Path) -> Vec<String> {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.depth() > 0)
        .map(|entry| {
            let relative = entry.path().strip_prefix(root).unwrap();
            let slash = if entry.file_type().unwrap().is_dir() {
                "/"
            } else {
                ""
            };
            format!("{}{slash}", relative.to_str().unwrap())
        })
        .collect()
}

#[tokio::test]
async fn find_yields_exactly_what_the_ignore_crate_walks_on_a_larger_tree() {
    let (_dir, root) = rules_tree();
    for n in 0..300 {
        let name = ["a.log", "b.txt", "build/c.txt", "force.txt", "d.rs"][n % 5];
        write(
            &root,
            &format!("t{}/u{}/{n}-{name}", n % 7, n % 11),
            b"needle\n",
        );
        if n % 37 == 0 {
            write(&root, &format!("t{}/.gitignore", n % 7), b"*.rs\n!1*.rs\n");
        }
        if n % 53 == 0 {
            write(
                &root,
                &format!("t{}/u{}/.ignore", n % 7, n % 11),
                b"*.txt\n",
            );
        }
    }
    let expected = ignore_crate_walk(&root);
    assert!(expected.len() > 300, "{}", expected.len());
    for _ in 0..3 {
        assert_eq!(found_all(&root).await, expected);
    }
    let limited = find(&root, "*", 100).await.unwrap();
    assert!(limited.limit_reached);
    let paths: Vec<String> = limited
        .entries
        .iter()
        .map(|e| format!("{}{}", e.path, if e.is_dir { "/" } else { "" }))
        .collect();
    assert_eq!(paths, expected[..100]);
}

async fn found_all(root: &Path) -> Vec<String> {
    let output = find(root, "*", 100_000).await.unwrap();
    assert!(!output.limit_reached);
    output
        .entries
        .iter()
        .map(|e| format!("{}{}", e.path, if e.is_dir { "/" } else { "" }))
        .collect()
}

/// Writes `prefix`, then one line of `bytes` bytes of `x` holding `needle` at its start, then
/// `suffix`.
fn write_long_line(path: &Path, prefix: &[u8], bytes: usize, suffix: &[u8]) {
    let mut file = fs::File::create(path).unwrap();
    file.write_all(prefix).unwrap();
    file.write_all(b"needle ").unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut written = 7;
    while written < bytes {
        let part = chunk.len().min(bytes - written);
        file.write_all(&chunk[..part]).unwrap();
        written += part;
    }
    file.write_all(b"\n").unwrap();
    file.write_all(suffix).unwrap();
}

#[tokio::test]
async fn a_file_with_a_line_over_the_limit_is_skipped_and_reported_while_others_are_searched() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    write(root, "a.txt", b"needle in a\n");
    let over = GrepRequest::MAX_LINE_BYTES + (1 << 20);
    // Its match before the long line is dropped too: the file counts as not searched.
    write_long_line(
        &root.join("b.txt"),
        b"needle before\n",
        over,
        b"needle after\n",
    );
    write(root, "c.txt", b"needle in c\n");
    write_long_line(&root.join("d.txt"), b"", over, b"");
    write(root, "e.txt", b"nothing\nneedle in e\n");

    let output = grep(request(root, "needle")).await.unwrap();
    let rows: Vec<String> = output
        .lines
        .iter()
        .map(|line| format!("{}:{}: {}", line.path, line.line_number, line.text))
        .collect();
    assert_eq!(
        rows,
        [
            "a.txt:1: needle in a",
            "c.txt:1: needle in c",
            "e.txt:2: needle in e"
        ]
    );
    assert_eq!(output.match_count, 3);
    assert_eq!(output.oversized, ["b.txt", "d.txt"]);
    assert_eq!(output.oversized_count, 2);

    // The same file as the root: skipped and named.
    let output = grep(request(&root.join("d.txt"), "needle")).await.unwrap();
    drop(dir);
    assert!(output.lines.is_empty());
    assert_eq!(output.oversized, ["d.txt"]);
    assert_eq!(output.oversized_count, 1);
}

#[tokio::test]
async fn an_oversized_file_after_the_limit_is_not_reported() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    write(root, "a.txt", b"needle\n");
    write_long_line(
        &root.join("b.txt"),
        b"",
        GrepRequest::MAX_LINE_BYTES + 1024,
        b"",
    );
    let mut req = request(root, "needle");
    req.limit = 1;
    let output = grep(req).await.unwrap();
    drop(dir);
    assert!(output.limit_reached);
    assert_eq!(output.match_count, 1);
    assert!(output.oversized.is_empty());
    assert_eq!(output.oversized_count, 0);
}

#[tokio::test]
async fn a_long_line_under_the_limit_is_searched_and_its_text_clipped() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    // 4 MiB: over a worker's own buffer, under the limit.
    write_long_line(
        &root.join("long.txt"),
        b"first\n",
        4 << 20,
        b"last needle\n",
    );
    write(root, "short.txt", b"needle\n");

    // No match anywhere: nothing found, nothing skipped.
    let output = grep(request(root, "absent")).await.unwrap();
    assert_eq!(output, GrepOutput::default());

    let output = grep(request(root, "needle")).await.unwrap();
    drop(dir);
    assert!(output.oversized.is_empty());
    let rows: Vec<(&str, u64, usize)> = output
        .lines
        .iter()
        .map(|line| (line.path.as_str(), line.line_number, line.text.len()))
        .collect();
    assert_eq!(
        rows,
        [
            ("long.txt", 2, GrepLine::MAX_TEXT_BYTES),
            ("long.txt", 3, 11),
            ("short.txt", 1, 6)
        ]
    );
    assert!(output.lines[0].text.starts_with("needle xxx"));
}

/// A confined search ([`Search::confine`]) opens its start beneath the roots:
/// a start that resolves outside them (a symlinked directory or file, `..`)
/// is refused with `OutsideRoots`; a start inside, and one reached through a
/// symlink that stays inside, is searched.
#[tokio::test]
async fn a_confined_search_refuses_a_start_that_resolves_outside_the_roots() {
    use pith_env::{Confinement, FsErrorKind};
    use std::sync::Arc;
    let dir = TempDir::new().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, outside) = (base.join("root"), base.join("outside"));
    write(&root, "d/a.txt", b"needle inside\n");
    write(&outside, "secret.txt", b"needle outside\n");
    std::os::unix::fs::symlink("../outside", root.join("up")).unwrap();
    std::os::unix::fs::symlink("../outside/secret.txt", root.join("lf")).unwrap();
    std::os::unix::fs::symlink("d", root.join("alias")).unwrap();
    let search = Arc::new(env().await).confine(Confinement::new(vec![root.clone()]));
    for start in [
        root.join("up"),
        root.join("lf"),
        root.join("d/../../outside"),
        outside.clone(),
    ] {
        let error = search
            .grep(request(&start, "needle"), CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&error, SearchError::Fs(e) if e.kind == FsErrorKind::OutsideRoots),
            "grep {}: {error:?}",
            start.display()
        );
        let find = FindRequest {
            pattern: "*".to_owned(),
            root: start.clone(),
            limit: 10,
        };
        let error = search
            .find(find, CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&error, SearchError::Fs(e) if e.kind == FsErrorKind::OutsideRoots),
            "find {}: {error:?}",
            start.display()
        );
    }
    for start in [root.clone(), root.join("alias"), root.join("d/a.txt")] {
        let output = search
            .grep(request(&start, "needle"), CancellationToken::new())
            .await
            .unwrap();
        let texts: Vec<&str> = output.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["needle inside"], "grep {}", start.display());
    }
    let find = FindRequest {
        pattern: "*.txt".to_owned(),
        root: root.join("alias"),
        limit: 10,
    };
    let output = search.find(find, CancellationToken::new()).await.unwrap();
    assert_eq!(output.entries.len(), 1, "{output:?}");
    assert_eq!(output.entries[0].path, "a.txt");
}
