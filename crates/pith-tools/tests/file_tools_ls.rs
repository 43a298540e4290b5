//! The ls tool on LocalEnv.

use std::fs;

use serde_json::json;

use crate::file_tools::Fixture;

#[tokio::test]
async fn ls_sorts_case_insensitively_marks_directories_and_lists_dotfiles() {
    let fx = Fixture::new();
    for name in [
        "Zeta.txt",
        "apple.txt",
        "README.md",
        ".gitignore",
        ".hidden.ts",
    ] {
        fx.write(name, "x");
    }
    fs::create_dir_all(fx.path("src")).unwrap();
    fs::create_dir_all(fx.path("dist")).unwrap();
    std::os::unix::fs::symlink(fx.path("src"), fx.path("linked")).unwrap();
    std::os::unix::fs::symlink(fx.path("gone"), fx.path("dangling")).unwrap();
    let result = fx.call("ls", json!({})).await;
    assert!(!result.is_error);
    assert_eq!(
        result.text_content(),
        ".gitignore\n.hidden.ts\napple.txt\ndangling\ndist/\nlinked/\nREADME.md\nsrc/\nZeta.txt"
    );
    assert_eq!(result.details, None);
}

#[tokio::test]
async fn ls_breaks_case_ties_deterministically() {
    let fx = Fixture::new();
    for name in ["b", "B", "a", "A"] {
        fx.write(name, "x");
    }
    assert_eq!(fx.text("ls", json!({"path": "."})).await, "A\na\nB\nb");
}

#[tokio::test]
async fn ls_of_an_empty_directory_says_so() {
    let fx = Fixture::new();
    fs::create_dir(fx.path("empty")).unwrap();
    assert_eq!(
        fx.text("ls", json!({"path": "empty"})).await,
        "(empty directory)"
    );
}

#[tokio::test]
async fn ls_stops_at_the_entry_limit_and_says_how_to_see_more() {
    let fx = Fixture::new();
    for n in 0..10 {
        fx.write(&format!("f{n}"), "x");
    }
    let result = fx.call("ls", json!({"limit": 3})).await;
    assert_eq!(
        result.text_content(),
        "f0\nf1\nf2\n\n[3 entries limit reached. Use limit=6 for more]"
    );
    assert_eq!(result.details.unwrap()["entryLimitReached"], 3);
    let exact = fx.call("ls", json!({"limit": 10})).await;
    assert!(!exact.text_content().contains("limit reached"));
}

#[tokio::test]
async fn ls_caps_its_output_at_50kb() {
    let fx = Fixture::new();
    for n in 0..400 {
        fx.write(&format!("{n:03}{}", "n".repeat(200)), "x");
    }
    let result = fx.call("ls", json!({})).await;
    let text = result.text_content();
    assert!(
        text.ends_with("\n\n[50.0KB limit reached]"),
        "{}",
        &text[text.len() - 60..]
    );
    assert!(text.len() < 52_000);
    assert_eq!(
        result.details.unwrap()["truncation"]["truncatedBy"],
        "bytes"
    );
}

#[tokio::test]
async fn ls_reports_missing_paths_and_files() {
    let fx = Fixture::new();
    fx.write("README.md", "x");
    let missing = fx.call("ls", json!({"path": "nope"})).await;
    assert!(missing.is_error);
    assert_eq!(
        fx.redact(&missing.text_content()),
        "Path not found: <root>/nope"
    );
    let file = fx.call("ls", json!({"path": "README.md"})).await;
    assert!(file.is_error);
    assert_eq!(
        fx.redact(&file.text_content()),
        "Not a directory: <root>/README.md"
    );
}
