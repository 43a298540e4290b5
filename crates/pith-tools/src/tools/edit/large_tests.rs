use std::path::PathBuf;

use pith_env::MemoryEnv;

use super::*;

fn numbered(count: usize) -> String {
    (1..=count).map(|n| format!("line {n}\n")).collect()
}

async fn env_with(bytes: &[u8]) -> (MemoryEnv, PathBuf) {
    let env = MemoryEnv::new();
    let path = PathBuf::from("/big.txt");
    env.write_atomic(&path, bytes).await.unwrap();
    (env, path)
}

fn edit_of(old: &str, new: &str) -> Edit {
    Edit {
        old_text: old.to_owned(),
        new_text: new.to_owned(),
    }
}

async fn run(bytes: &[u8], edits: &[Edit]) -> (Result<ToolOutput, ToolError>, Vec<u8>) {
    let (env, path) = env_with(bytes).await;
    let result = edit(&env, &path, "big.txt", bytes.len() as u64, edits).await;
    let after = env.read(&path).await.unwrap();
    let result = result.map(|(result, new_len)| {
        assert_eq!(new_len, after.len() as u64, "the new length");
        result
    });
    (result, after)
}

#[tokio::test]
async fn replaces_exact_text_and_shows_only_the_lines_around_it() {
    let file = numbered(100);
    let (result, after) = run(
        file.as_bytes(),
        &[edit_of("line 50\nline 51", "fifty\nfifty-one\nextra")],
    )
    .await;
    let result = result.unwrap();
    assert_eq!(
        String::from_utf8(after).unwrap(),
        file.replace("line 50\nline 51\n", "fifty\nfifty-one\nextra\n")
    );
    let details = result.details.unwrap();
    assert_eq!(
        details["diff"],
        " 46 line 46\n 47 line 47\n 48 line 48\n 49 line 49\n-50 line 50\n-51 line 51\n\
         +50 fifty\n+51 fifty-one\n+52 extra\n 52 line 52\n 53 line 53\n 54 line 54\n 55 line 55"
    );
    assert_eq!(
        details["patch"],
        "--- big.txt\n+++ big.txt\n@@ -46,10 +46,11 @@\n line 46\n line 47\n line 48\n line 49\n\
         -line 50\n-line 51\n+fifty\n+fifty-one\n+extra\n line 52\n line 53\n line 54\n line 55\n"
    );
    assert_eq!(details["firstChangedLine"], 50);
    assert_eq!(details["matches"][0]["startLine"], 50);
    assert_eq!(details["matches"][0]["endLine"], 51);
}

#[tokio::test]
async fn finds_text_that_straddles_two_reads_and_counts_its_line() {
    // The needle crosses the 1 MiB read boundary.
    let mut file = "x".repeat(WINDOW_BYTES - 3);
    file.push_str("\nneedle across\n");
    file.push_str(&numbered(10));
    let (result, after) = run(file.as_bytes(), &[edit_of("needle across", "found")]).await;
    let result = result.unwrap();
    assert_eq!(
        String::from_utf8(after).unwrap(),
        file.replace("needle across", "found")
    );
    assert_eq!(result.details.unwrap()["matches"][0]["startLine"], 2);
}

#[tokio::test]
async fn keeps_crlf_line_endings() {
    let file = "a\r\nb\r\nc\r\n";
    let (result, after) = run(file.as_bytes(), &[edit_of("a\nb", "A\nB\nB2")]).await;
    result.unwrap();
    assert_eq!(after, b"A\r\nB\r\nB2\r\nc\r\n");
}

#[tokio::test]
async fn a_missing_text_says_only_exact_matches_run_at_this_size() {
    let file = numbered(10);
    let (result, after) = run(file.as_bytes(), &[edit_of("line  5", "x")]).await;
    let message = result.unwrap_err().message;
    assert!(
        message.starts_with("Could not find edits[0] in big.txt. The file is "),
        "{message}"
    );
    assert!(message.contains("only exact text matches"), "{message}");
    assert_eq!(after, file.as_bytes());
}

#[tokio::test]
async fn a_repeated_text_names_two_of_its_lines() {
    let file = numbered(12);
    let (result, after) = run(file.as_bytes(), &[edit_of("line 1", "x")]).await;
    let message = result.unwrap_err().message;
    assert!(message.contains("(lines 1 and 10)"), "{message}");
    assert_eq!(after, file.as_bytes());
}

#[tokio::test]
async fn overlapping_edits_and_invalid_utf8_are_refused_untouched() {
    let file = numbered(5);
    let (result, after) = run(
        file.as_bytes(),
        &[
            edit_of("line 2\nline 3", "x"),
            edit_of("line 3\nline 4", "y"),
        ],
    )
    .await;
    let message = result.unwrap_err().message;
    assert!(
        message.contains("edits[0] and edits[1] overlap"),
        "{message}"
    );
    assert_eq!(after, file.as_bytes());

    let mut bytes = file.into_bytes();
    bytes.extend_from_slice(b"bad \xFF byte\n");
    let (result, after) = run(&bytes, &[edit_of("line 2", "x")]).await;
    let message = result.unwrap_err().message;
    assert!(message.contains("invalid byte at offset 39"), "{message}");
    assert_eq!(after, bytes);
}
