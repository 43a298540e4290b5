//! read over MemoryEnv: the tool logic without a disk.

use pith_env::{Env, MemoryEnv};
use serde_json::json;

use crate::tool::{CallOptions, ToolResult};
use crate::toolset::ToolSet;

async fn read(env: &MemoryEnv, args: serde_json::Value) -> ToolResult {
    ToolSet::builder(Env::memory(env.clone()))
        .cwd("/work")
        .build()
        .session()
        .call("read", args, CallOptions::default())
        .await
}

#[tokio::test]
async fn pages_through_a_file_counting_real_lines() {
    let env = MemoryEnv::with_files(&[("/work/ab.txt", "a\nb\n")]);
    assert_eq!(
        read(&env, json!({"path": "ab.txt"})).await.text_content(),
        "a\nb\n"
    );
    assert_eq!(
        read(&env, json!({"path": "ab.txt", "limit": 1}))
            .await
            .text_content(),
        "a\n\n[1 more lines in file. Use offset=2 to continue.]"
    );
    let past = read(&env, json!({"path": "/work/ab.txt", "offset": 3})).await;
    assert!(past.is_error);
    assert_eq!(
        past.text_content(),
        "Offset 3 is beyond end of file (2 lines total)"
    );
}

#[tokio::test]
async fn expands_the_home_directory() {
    let env = MemoryEnv::with_files(&[("/home/user/notes.md", "hi\n")]);
    assert_eq!(
        read(&env, json!({"path": "~/notes.md"}))
            .await
            .text_content(),
        "hi\n"
    );
    assert_eq!(
        read(&env, json!({"path": "@~/notes.md"}))
            .await
            .text_content(),
        "hi\n"
    );
}

#[tokio::test]
async fn follows_symlinks_and_reports_dangling_ones_as_missing() {
    let env = MemoryEnv::with_files(&[("/work/real.txt", "real\n")]);
    env.symlink("/work/link.txt", "real.txt").unwrap();
    env.symlink("/work/dangling.txt", "gone.txt").unwrap();
    assert_eq!(
        read(&env, json!({"path": "link.txt"})).await.text_content(),
        "real\n"
    );
    let dangling = read(&env, json!({"path": "dangling.txt"})).await;
    assert!(dangling.is_error);
    assert!(
        dangling
            .text_content()
            .starts_with("File not found: /work/dangling.txt"),
        "{}",
        dangling.text_content()
    );
}

#[tokio::test]
async fn tells_directories_binaries_and_missing_files_apart() {
    let env = MemoryEnv::with_files(&[("/work/src/lib.rs", "x"), ("/work/blob", "\0\x01\x02")]);
    assert_eq!(
        read(&env, json!({"path": "src"})).await.text_content(),
        "/work/src is a directory; read only reads files. Use ls to list it."
    );
    assert_eq!(
        read(&env, json!({"path": "blob"})).await.text_content(),
        "blob is a binary file (3B); read cannot show it. Inspect it with bash, e.g. xxd blob | head."
    );
    assert_eq!(
        read(&env, json!({"path": "src/lib.rs.bak"}))
            .await
            .text_content(),
        "File not found: /work/src/lib.rs.bak\nSimilar names in /work/src: lib.rs"
    );
}

/// A file under 64 KiB is read whole at once, but only its first 8 KiB
/// decide whether it is binary, as when it was read in 8 KiB steps: a NUL
/// byte further on is shown as text, and the line count is still the file's.
#[tokio::test]
async fn a_nul_byte_past_the_first_8_kib_of_a_small_file_does_not_make_it_binary() {
    let content = format!("first\n{}\n\0tail\n", "x".repeat(9000));
    let env = MemoryEnv::with_files(&[("/work/late-nul.txt", content.as_str())]);
    let result = read(&env, json!({"path": "late-nul.txt", "limit": 1})).await;
    assert!(!result.is_error, "{}", result.text_content());
    assert_eq!(
        result.text_content(),
        "first\n\n[2 more lines in file. Use offset=2 to continue.]"
    );
    let last = read(&env, json!({"path": "late-nul.txt", "offset": 3})).await;
    assert_eq!(last.text_content(), "\0tail\n");
}

/// A reader over `bytes` that hands out at most `chunk` bytes a call and
/// counts the calls.
struct CountingReader {
    bytes: Vec<u8>,
    at: usize,
    chunk: usize,
    calls: usize,
}

#[async_trait::async_trait]
impl pith_env::FileReader for CountingReader {
    async fn read_chunk(&mut self, buf: &mut [u8]) -> Result<usize, pith_env::FsError> {
        self.calls += 1;
        let n = buf.len().min(self.chunk).min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// `read_header` over `bytes` handed out `chunk` bytes a call, with the size
/// a `stat` gave: the header, whether it is the end, and the reads made.
async fn header_of(bytes: &[u8], chunk: usize, size: Option<usize>) -> (Vec<u8>, bool, usize) {
    let mut reader = CountingReader {
        bytes: bytes.to_vec(),
        at: 0,
        chunk,
        calls: 0,
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let (header, at_end) = super::read_header(&mut reader, &mut None, 8192, size, &cancel)
        .await
        .unwrap();
    (header, at_end, reader.calls)
}

#[tokio::test]
async fn a_file_read_whole_ends_where_its_size_says_without_a_read_for_nothing() {
    let text = b"one\ntwo\n".to_vec();
    // The size the stat gave: one read, the whole file, at its end.
    assert_eq!(
        header_of(&text, usize::MAX, Some(8)).await,
        (text.clone(), true, 1)
    );
    // Short reads still add up to the size.
    assert_eq!(header_of(&text, 3, Some(8)).await, (text.clone(), true, 3));
    // A size that overstates the content (sysfs says 4096): read to the end.
    assert_eq!(
        header_of(b"5\n", usize::MAX, Some(4096)).await,
        (b"5\n".to_vec(), true, 2)
    );
    // No size (procfs says 0): read to the end.
    assert_eq!(header_of(&text, usize::MAX, None).await, (text, true, 2));
}

#[tokio::test]
async fn the_structured_result_is_built_only_for_a_caller_that_uses_it() {
    let env = MemoryEnv::with_files(&[("/work/ab.txt", "a\nb\n")]);
    let toolset = ToolSet::builder(Env::memory(env)).cwd("/work").build();
    let args = json!({"path": "ab.txt"});
    let wanted = toolset
        .session()
        .call("read", args.clone(), CallOptions::default())
        .await;
    let skipped = toolset
        .session()
        .call(
            "read",
            args,
            CallOptions {
                skip_structured: true,
                ..CallOptions::default()
            },
        )
        .await;
    assert_eq!(wanted.structured.as_ref().unwrap()["totalLines"], 2);
    assert_eq!(skipped.structured, None);
    assert_eq!(
        (skipped.text_content(), &skipped.details),
        (wanted.text_content(), &wanted.details)
    );
}
