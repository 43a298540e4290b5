//! The grep and find tools on LocalEnv, on fixture trees in temp dirs.

use std::fs;
use std::path::Path;

use pith_env::{CancellationToken, Env};
use pith_tools::{CallOptions, ToolResult, ToolSet};
use serde_json::{Value, json};
use tempfile::TempDir;

fn write(root: &Path, relative: &str, contents: &[u8]) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

async fn call(cwd: &Path, tool: &str, args: Value) -> ToolResult {
    ToolSet::builder(Env::local())
        .cwd(cwd)
        .build()
        .session()
        .call(tool, args, CallOptions::default())
        .await
}

fn tree() -> TempDir {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    write(root, ".gitignore", b"build/\n");
    write(root, "build/out.js", b"const needle = 1;\n");
    write(
        root,
        "src/a.ts",
        b"let x = 1;\nconst needle = 2;\nlet y = 3;\n",
    );
    write(root, "src/b.ts", b"// needle\n");
    write(root, ".config/settings.json", b"{\"needle\": true}\n");
    dir
}

#[tokio::test]
async fn grep_rows_name_the_path_and_line() {
    let dir = tree();
    let result = call(dir.path(), "grep", json!({"pattern": "needle"})).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        result.text_content(),
        ".config/settings.json:1: {\"needle\": true}\nsrc/a.ts:2: const needle = 2;\nsrc/b.ts:1: // needle"
    );
    assert_eq!(result.details, None);
}

#[tokio::test]
async fn grep_context_rows_use_dashes() {
    let dir = tree();
    let args = json!({"pattern": "needle", "path": "src", "context": 1, "glob": "a.ts"});
    let result = call(dir.path(), "grep", args).await;
    assert_eq!(
        result.text_content(),
        "a.ts-1- let x = 1;\na.ts:2: const needle = 2;\na.ts-3- let y = 3;"
    );
}

#[tokio::test]
async fn grep_of_one_file_shows_its_name() {
    let dir = tree();
    let result = call(
        dir.path(),
        "grep",
        json!({"pattern": "needle", "path": "src/b.ts"}),
    )
    .await;
    assert_eq!(result.text_content(), "b.ts:1: // needle");
}

#[tokio::test]
async fn grep_says_when_nothing_matches() {
    let dir = tree();
    let result = call(dir.path(), "grep", json!({"pattern": "absent"})).await;
    assert!(!result.is_error);
    assert_eq!(result.text_content(), "No matches found");
}

#[tokio::test]
async fn grep_limit_below_one_is_an_error_naming_the_field() {
    let dir = tree();
    for limit in [json!(0), json!(-3)] {
        let result = call(
            dir.path(),
            "grep",
            json!({"pattern": "needle", "limit": limit}),
        )
        .await;
        assert!(result.is_error);
        assert!(
            result
                .text_content()
                .contains(&format!("limit must be at least 1, got {limit}")),
            "{}",
            result.text_content()
        );
    }
}

#[tokio::test]
async fn grep_limit_notice_suggests_double_the_limit() {
    let dir = tree();
    for limit in [json!(1), json!("1")] {
        let result = call(
            dir.path(),
            "grep",
            json!({"pattern": "needle", "limit": limit}),
        )
        .await;
        assert_eq!(
            result.text_content(),
            ".config/settings.json:1: {\"needle\": true}\n\n\
             [1 matches limit reached. Use limit=2 for more, or refine pattern]"
        );
        assert_eq!(result.details.unwrap()["matchLimitReached"], 1);
    }
}

#[tokio::test]
async fn grep_clips_long_lines_and_caps_output_at_50_kib() {
    let dir = TempDir::new().unwrap();
    let long = format!("needle {}\n", "é".repeat(600));
    write(dir.path(), "long.txt", long.repeat(200).as_bytes());
    let result = call(
        dir.path(),
        "grep",
        json!({"pattern": "needle", "limit": 150}),
    )
    .await;
    let text = result.text_content();
    let first = text.lines().next().unwrap();
    assert!(first.ends_with("... [truncated]"), "{first}");
    assert!(text.len() < 52 * 1024);
    // The output cap came before the match limit: the notice says where, not "raise the limit".
    let shown = text
        .lines()
        .filter(|line| line.starts_with("long.txt:"))
        .count();
    assert!(shown < 150, "{shown}");
    assert!(
        text.ends_with(&format!(
            "[Showing {shown} matches, output limit 50.0KB reached at long.txt:{shown}; \
             narrow with path or glob. \
             Some lines truncated to 500 chars. Use read tool to see full lines]"
        )),
        "{}",
        text.lines().last().unwrap()
    );
    let details = result.details.unwrap();
    assert_eq!(details["linesTruncated"], true);
    assert_eq!(details["truncation"]["truncated"], true);
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    assert_eq!(details["matchLimitReached"], 150);
}

#[tokio::test]
async fn grep_errors_are_one_line() {
    let dir = tree();
    let result = call(dir.path(), "grep", json!({"pattern": "a(b"})).await;
    assert!(result.is_error);
    let text = result.text_content();
    assert!(text.starts_with("Invalid regex: unclosed group"), "{text}");
    assert_eq!(text.lines().count(), 1);

    let result = call(dir.path(), "grep", json!({"pattern": "x", "path": "nope"})).await;
    assert!(result.is_error);
    let missing = dir.path().join("nope");
    assert_eq!(
        result.text_content(),
        format!("Path not found: {}", missing.display())
    );

    let result = call(dir.path(), "grep", json!({"pattern": "x", "glob": "[a"})).await;
    assert!(result.is_error);
    assert!(
        result.text_content().starts_with("Invalid glob: [a"),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_cancelled_call_is_aborted() {
    let dir = tree();
    let cancel = CancellationToken::new();
    cancel.cancel();
    for tool in ["grep", "find"] {
        let result = ToolSet::builder(Env::local())
            .cwd(dir.path())
            .build()
            .session()
            .call(
                tool,
                json!({"pattern": "*"}),
                CallOptions {
                    cancel: cancel.clone(),
                    ..CallOptions::default()
                },
            )
            .await;
        assert!(result.is_error);
        assert_eq!(result.text_content(), "Operation aborted");
    }
}

#[tokio::test]
async fn find_lists_sorted_paths_with_directories_marked() {
    let dir = tree();
    let result = call(dir.path(), "find", json!({"pattern": "*"})).await;
    assert_eq!(
        result.text_content(),
        ".config/\n.config/settings.json\n.gitignore\nsrc/\nsrc/a.ts\nsrc/b.ts"
    );
    let result = call(dir.path(), "find", json!({"pattern": "src/*.ts"})).await;
    assert_eq!(result.text_content(), "src/a.ts\nsrc/b.ts");
}

#[tokio::test]
async fn find_limit_notice_and_empty_result() {
    let dir = tree();
    let result = call(dir.path(), "find", json!({"pattern": "*.ts", "limit": 1})).await;
    assert_eq!(
        result.text_content(),
        "src/a.ts\n\n[1 results limit reached. Use limit=2 for more, or refine pattern]"
    );
    assert_eq!(result.details.unwrap()["resultLimitReached"], 1);

    let result = call(dir.path(), "find", json!({"pattern": "*.rs"})).await;
    assert!(!result.is_error);
    assert_eq!(result.text_content(), "No files found matching pattern");
}

#[tokio::test]
async fn find_errors_are_one_line() {
    let dir = tree();
    let result = call(dir.path(), "find", json!({"pattern": "{a"})).await;
    assert!(result.is_error);
    let text = result.text_content();
    assert!(text.starts_with("Invalid glob: {a"), "{text}");
    assert_eq!(text.lines().count(), 1);

    let result = call(
        dir.path(),
        "find",
        json!({"pattern": "*", "path": "src/a.ts"}),
    )
    .await;
    assert!(result.is_error);
    assert!(
        result.text_content().starts_with("Not a directory: "),
        "{result:?}"
    );
}

/// Writes a file holding `needle` on one line of 17 MiB: over grep's 16 MiB line limit.
fn write_oversized(path: &Path) {
    use std::io::Write;
    let mut file = fs::File::create(path).unwrap();
    file.write_all(b"needle ").unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..17 {
        file.write_all(&chunk).unwrap();
    }
    file.write_all(b"\n").unwrap();
}

#[tokio::test]
async fn grep_names_a_file_skipped_for_a_giant_line_and_how_to_search_it() {
    let dir = TempDir::new().unwrap();
    write_oversized(&dir.path().join("huge.txt"));
    write(dir.path(), "small.txt", b"a needle\n");
    let notice = "[Skipped 1 file with a line over 16.0MB (huge.txt): search it with bash, \
                  e.g. grep -o -m 5 'pattern' huge.txt | cut -c1-500]";

    let result = call(dir.path(), "grep", json!({"pattern": "needle"})).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        result.text_content(),
        format!("small.txt:1: a needle\n\n{notice}")
    );
    assert_eq!(
        result.details.unwrap()["oversizedFiles"],
        json!(["huge.txt"])
    );

    // Nothing found elsewhere: the notice still says what was not searched.
    let result = call(dir.path(), "grep", json!({"pattern": "absent"})).await;
    drop(dir);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        result.text_content(),
        format!("No matches found\n\n{notice}")
    );
}
