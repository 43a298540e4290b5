//! The unified patch applies with the real `patch` program.

use std::path::PathBuf;
use std::process::Command;

use pith_text::unified_patch;

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pith-text-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Applies `patch` to `old` with `patch` (or `git apply` when `patch` is missing).
fn apply_with_program(name: &str, old: &str, patch: &str) -> String {
    let dir = scratch_dir(name);
    let file = dir.join("f.txt");
    std::fs::write(&file, old).unwrap();
    std::fs::write(dir.join("change.patch"), patch).unwrap();
    let status = Command::new("patch")
        .current_dir(&dir)
        .args(["--silent", "--batch", "f.txt", "change.patch"])
        .status()
        .or_else(|_| {
            Command::new("git")
                .current_dir(&dir)
                .args(["apply", "--unsafe-paths", "-p0", "change.patch"])
                .status()
        })
        .unwrap();
    assert!(status.success(), "patch failed on:\n{patch}");
    let result = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    result
}

#[test]
fn the_reference_example_applies_with_patch() {
    let patch = unified_patch("f.txt", "a\nb", "a\nB", 4);
    assert_eq!(apply_with_program("example", "a\nb", &patch), "a\nB");
}

#[test]
fn a_multi_hunk_patch_applies_with_patch() {
    let old: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    let new = old
        .replace("line 3\n", "three\n")
        .replace("line 20\n", "")
        .replace("line 38\n", "38\nmore\n");
    let patch = unified_patch("f.txt", &old, &new, 4);
    assert_eq!(patch.matches("@@ -").count(), 3);
    assert_eq!(apply_with_program("hunks", &old, &patch), new);
}

#[test]
fn a_patch_adding_a_final_newline_applies_with_patch() {
    let patch = unified_patch("f.txt", "x\ny", "x\ny\nz\n", 4);
    assert_eq!(apply_with_program("newline", "x\ny", &patch), "x\ny\nz\n");
}

#[test]
fn a_patch_filling_an_empty_file_applies_with_patch() {
    let patch = unified_patch("f.txt", "", "hello\n", 4);
    assert_eq!(apply_with_program("empty", "", &patch), "hello\n");
}
