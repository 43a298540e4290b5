use std::path::{Path, PathBuf};

use super::*;

fn grep_request(pattern: &str, root: &str) -> GrepRequest {
    GrepRequest {
        pattern: pattern.to_owned(),
        root: PathBuf::from(root),
        glob: None,
        ignore_case: false,
        literal: false,
        context: 0,
        limit: 100,
    }
}

fn find_request(pattern: &str, root: &str, limit: usize) -> FindRequest {
    FindRequest {
        pattern: pattern.to_owned(),
        root: PathBuf::from(root),
        limit,
    }
}

fn rows(output: &GrepOutput) -> Vec<String> {
    output
        .lines
        .iter()
        .map(|line| {
            let mark = if line.is_match { ':' } else { '-' };
            format!("{}{mark}{}{mark}{}", line.path, line.line_number, line.text)
        })
        .collect()
}

fn paths(output: &FindOutput) -> Vec<String> {
    output
        .entries
        .iter()
        .map(|entry| format!("{}{}", entry.path, if entry.is_dir { "/" } else { "" }))
        .collect()
}

#[tokio::test]
async fn grep_finds_matches_sorted_with_relative_paths() {
    let env = MemoryEnv::with_files(&[
        ("/w/src/b.rs", "fn beta() {}\r\n"),
        ("/w/a.rs", "fn alpha() {}\nlet x = 1;\nfn again() {}\n"),
        ("/w/.hidden.rs", "fn hidden() {}\n"),
        ("/w/bin.dat", "fn \0binary\n"),
    ]);
    let output = env
        .grep(grep_request("^fn", "/w"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        rows(&output),
        [
            ".hidden.rs:1:fn hidden() {}",
            "a.rs:1:fn alpha() {}",
            "a.rs:3:fn again() {}",
            "src/b.rs:1:fn beta() {}",
        ]
    );
    assert_eq!(output.match_count, 4);
    assert!(!output.limit_reached);
}

#[tokio::test]
async fn grep_context_rows_appear_once_and_the_limit_stops_the_search() {
    let env = MemoryEnv::with_files(&[("/w/f.txt", "a\nhit1\nb\nhit2\nc\nd\nhit3\n")]);
    let mut request = grep_request("hit", "/w");
    request.context = 1;
    request.limit = 2;
    let output = env
        .grep(request.clone(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        rows(&output),
        [
            "f.txt-1-a",
            "f.txt:2:hit1",
            "f.txt-3-b",
            "f.txt:4:hit2",
            "f.txt-5-c"
        ]
    );
    assert!(output.limit_reached);
    request.limit = 3;
    let output = env
        .grep(request.clone(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(output.match_count, 3);
    assert!(
        output.limit_reached,
        "grep stops once `limit` matches are found"
    );
    request.limit = 4;
    let output = env.grep(request, CancellationToken::new()).await.unwrap();
    assert_eq!(output.match_count, 3);
    assert!(!output.limit_reached);
}

#[tokio::test]
async fn grep_honours_case_literal_glob_and_single_file_roots() {
    let env = MemoryEnv::with_files(&[
        ("/w/a.ts", "Foo(1)\n"),
        ("/w/sub/b.spec.ts", "foo(1)\n"),
        ("/w/c.md", "FOO(1)\n"),
    ]);
    let mut request = grep_request("foo(1)", "/w");
    request.literal = true;
    request.ignore_case = true;
    request.glob = Some("*.ts".to_owned());
    let output = env
        .grep(request.clone(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(rows(&output), ["a.ts:1:Foo(1)", "sub/b.spec.ts:1:foo(1)"]);
    request.glob = Some("sub/*.ts".to_owned());
    let output = env
        .grep(request.clone(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(rows(&output), ["sub/b.spec.ts:1:foo(1)"]);
    request.root = PathBuf::from("/w/c.md");
    let output = env.grep(request, CancellationToken::new()).await.unwrap();
    assert_eq!(rows(&output), ["c.md:1:FOO(1)"]);
}

#[tokio::test]
async fn grep_reports_bad_patterns_missing_roots_and_cancellation() {
    let env = MemoryEnv::with_files(&[("/w/a", "x\n")]);
    let error = env
        .grep(grep_request("(", "/w"), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, SearchError::InvalidPattern(_)), "{error}");
    let error = env
        .grep(grep_request("x", "/nope"), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, SearchError::NotFound(path) if path == Path::new("/nope")));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = env.grep(grep_request("x", "/w"), cancel).await.unwrap_err();
    assert!(matches!(error, SearchError::Cancelled));
}

#[tokio::test]
async fn gitignore_rules_apply_hierarchically_and_git_dir_is_skipped() {
    let env = MemoryEnv::with_files(&[
        ("/w/.gitignore", "*.log\ntarget/\n"),
        ("/w/keep.txt", "needle\n"),
        ("/w/debug.log", "needle\n"),
        ("/w/target/out.txt", "needle\n"),
        ("/w/.git/config", "needle\n"),
        ("/w/sub/.gitignore", "!important.log\nlocal.txt\n"),
        ("/w/sub/important.log", "needle\n"),
        ("/w/sub/local.txt", "needle\n"),
    ]);
    let output = env
        .grep(grep_request("needle", "/w"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        rows(&output),
        ["keep.txt:1:needle", "sub/important.log:1:needle"]
    );
    // Rules from above the search root still apply.
    let output = env
        .find(find_request("*", "/w/sub", 100), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(paths(&output), [".gitignore", "important.log"]);
}

#[tokio::test]
async fn find_matches_names_or_paths_like_fd() {
    let env = MemoryEnv::with_files(&[
        ("/w/a.rs", ""),
        ("/w/src/lib.rs", ""),
        ("/w/src/deep/mod.rs", ""),
        ("/w/src/notes.md", ""),
    ]);
    env.symlink("/w/link.rs", "a.rs").unwrap();
    let output = env
        .find(find_request("*.rs", "/w", 100), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        paths(&output),
        ["a.rs", "link.rs", "src/deep/mod.rs", "src/lib.rs"]
    );
    let output = env
        .find(
            find_request("src/*.rs", "/w", 100),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(paths(&output), ["src/lib.rs"]);
    let output = env
        .find(find_request("src/**", "/w", 100), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        paths(&output),
        ["src/deep/", "src/deep/mod.rs", "src/lib.rs", "src/notes.md"]
    );
    let output = env
        .find(find_request("*.rs", "/w", 2), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(paths(&output), ["a.rs", "link.rs"]);
    assert!(output.limit_reached);
    let output = env
        .find(find_request("*.rs", "/w", 4), CancellationToken::new())
        .await
        .unwrap();
    assert!(
        !output.limit_reached,
        "exactly `limit` entries is not over it"
    );
    let error = env
        .find(find_request("[", "/w", 2), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, SearchError::InvalidGlob(_)), "{error}");
}

#[tokio::test]
async fn grep_reports_matches_before_the_first_nul_and_names_the_file_binary() {
    let env = MemoryEnv::with_files(&[
        ("/w/mixed.dat", "needle one\n\0\nneedle two\n"),
        ("/w/zeros.dat", "\0needle\n"),
    ]);
    let output = env
        .grep(grep_request("needle", "/w"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(rows(&output), ["mixed.dat:1:needle one"]);
    assert_eq!(
        output.binary,
        [pith_env_binary("mixed.dat", 11)],
        "a file with no match before its NUL is not named"
    );
    assert_eq!(output.binary_count, 1);
}

fn pith_env_binary(path: &str, offset: u64) -> crate::BinaryFile {
    crate::BinaryFile {
        path: path.to_owned(),
        offset,
    }
}
