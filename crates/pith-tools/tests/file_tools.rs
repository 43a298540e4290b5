//! The read tool on LocalEnv over real files in temp dirs, and the fixture the
//! other file-tool modules (`file_tools_*`) share.

use std::fs;
use std::io::Cursor;
use std::path::PathBuf;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use pith_env::{CancellationToken, Env};
use pith_tools::{CallOptions, Content, OverwritePolicy, Session, ToolResult, ToolSet};
use serde_json::{Value, json};
use tempfile::TempDir;

/// A temp dir, a tool set whose cwd is that dir, and one session over it.
pub(crate) struct Fixture {
    _dir: TempDir,
    pub(crate) root: PathBuf,
    pub(crate) tools: ToolSet,
    pub(crate) session: Session,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        Fixture::with_policy(OverwritePolicy::RequireRead)
    }

    pub(crate) fn with_policy(policy: OverwritePolicy) -> Fixture {
        let dir = TempDir::new().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let tools = ToolSet::builder(Env::local())
            .cwd(&root)
            .overwrite_policy(policy)
            .build();
        let session = tools.session();
        Fixture {
            _dir: dir,
            root,
            tools,
            session,
        }
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub(crate) fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, contents).unwrap();
        path
    }

    pub(crate) fn read(&self, relative: &str) -> String {
        fs::read_to_string(self.path(relative)).unwrap()
    }

    pub(crate) async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.session.call(tool, args, CallOptions::default()).await
    }

    /// The text of a call, with the temp dir replaced by `<root>`.
    pub(crate) async fn text(&self, tool: &str, args: Value) -> String {
        self.redact(&self.call(tool, args).await.text_content())
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(self.root.to_str().unwrap(), "<root>")
    }
}

/// A cancelled token, for calls that must not start.
pub(crate) fn cancelled() -> CallOptions {
    let cancel = CancellationToken::new();
    cancel.cancel();
    CallOptions {
        cancel,
        ..CallOptions::default()
    }
}

pub(crate) fn encoded_image(width: u32, height: u32, format: ImageFormat) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 251) as u8, (y % 241) as u8, ((x * y) % 239) as u8])
    });
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(image)
        .write_to(&mut Cursor::new(&mut out), format)
        .unwrap();
    out
}

fn numbered(lines: usize) -> String {
    (1..=lines).map(|n| format!("line {n}\n")).collect()
}

#[tokio::test]
async fn read_returns_the_file_with_its_trailing_newline() {
    let fx = Fixture::new();
    fx.write("small.txt", "alpha\nbeta\ngamma\n");
    let result = fx.call("read", json!({"path": "small.txt"})).await;
    assert!(!result.is_error);
    assert_eq!(result.text_content(), "alpha\nbeta\ngamma\n");
    assert_eq!(result.details, None);
}

#[tokio::test]
async fn read_pages_with_offset_and_limit_counting_real_lines() {
    let fx = Fixture::new();
    fx.write("ten.txt", numbered(10));
    assert_eq!(
        fx.text("read", json!({"path": "ten.txt", "offset": 3, "limit": 4}))
            .await,
        "line 3\nline 4\nline 5\nline 6\n\n[4 more lines in file. Use offset=7 to continue.]"
    );
    assert_eq!(
        fx.text("read", json!({"path": "ten.txt", "offset": "10"}))
            .await,
        "line 10\n"
    );
}

#[tokio::test]
async fn read_past_the_end_is_an_error_and_a_trailing_newline_is_not_a_line() {
    let fx = Fixture::new();
    fx.write("ab.txt", "a\nb\n");
    let result = fx
        .call("read", json!({"path": "ab.txt", "offset": 3}))
        .await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "Offset 3 is beyond end of file (2 lines total)"
    );
    fx.write("empty.txt", "");
    let result = fx.call("read", json!({"path": "empty.txt"})).await;
    assert!(!result.is_error);
    assert_eq!(result.text_content(), "(empty file)");
    assert!(result.details.is_none());
}

#[tokio::test]
async fn read_truncates_at_2000_lines_with_the_exact_notice_and_details() {
    let fx = Fixture::new();
    fx.write("big.txt", numbered(5000));
    let result = fx.call("read", json!({"path": "big.txt"})).await;
    let text = result.text_content();
    assert!(text.starts_with("line 1\nline 2\n"));
    assert!(
        text.ends_with("line 2000\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]"),
        "{}",
        &text[text.len() - 100..]
    );
    let truncation = &result.details.unwrap()["truncation"];
    let keys: Vec<&str> = truncation
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "truncated",
            "truncatedBy",
            "totalLines",
            "totalBytes",
            "outputLines",
            "outputBytes",
            "lastLinePartial",
            "firstLineExceedsLimit",
            "maxLines",
            "maxBytes"
        ]
    );
    assert_eq!(truncation["truncatedBy"], "lines");
    assert_eq!(truncation["totalLines"], 5000);
    let continued = fx
        .text("read", json!({"path": "big.txt", "offset": 4990}))
        .await;
    assert_eq!(continued.lines().count(), 11);
    assert!(continued.ends_with("line 5000\n"));
}

#[tokio::test]
async fn read_truncates_at_50kb_and_says_so() {
    let fx = Fixture::new();
    let line = "x".repeat(99);
    fx.write("wide.txt", format!("{line}\n").repeat(1000));
    let result = fx.call("read", json!({"path": "wide.txt"})).await;
    let text = result.text_content();
    assert!(
        text.ends_with(
            "\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]"
        ),
        "{}",
        &text[text.len() - 120..]
    );
    assert_eq!(
        result.details.unwrap()["truncation"]["truncatedBy"],
        "bytes"
    );
}

#[tokio::test]
async fn read_of_a_line_over_the_limit_says_how_to_get_it() {
    let fx = Fixture::new();
    fx.write("one.txt", format!("short\n{}\n", "y".repeat(60_000)));
    let result = fx
        .call("read", json!({"path": "one.txt", "offset": 2}))
        .await;
    assert!(!result.is_error);
    assert_eq!(
        result.text_content(),
        "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' one.txt | head -c 51200]"
    );
    assert_eq!(
        result.details.unwrap()["truncation"]["firstLineExceedsLimit"],
        true
    );
}

#[tokio::test]
async fn read_hides_a_bom_and_keeps_crlf() {
    let fx = Fixture::new();
    fx.write("bom.txt", "\u{FEFF}first\r\nsecond\r\n");
    assert_eq!(
        fx.text("read", json!({"path": "bom.txt"})).await,
        "first\r\nsecond\r\n"
    );
    assert_eq!(
        fx.text("read", json!({"path": "bom.txt", "limit": 1}))
            .await,
        "first\r\n\n[1 more lines in file. Use offset=2 to continue.]"
    );
}

#[tokio::test]
async fn read_of_a_missing_file_suggests_similar_names() {
    let fx = Fixture::new();
    fx.write("notes.txt", "n");
    fx.write("unrelated.bin", "u");
    let result = fx.call("read", json!({"path": "note.txt"})).await;
    assert!(result.is_error);
    assert_eq!(
        fx.redact(&result.text_content()),
        "File not found: <root>/note.txt\nSimilar names in <root>: notes.txt"
    );
    let result = fx.call("read", json!({"path": "nothing/like/it.rs"})).await;
    assert_eq!(
        fx.redact(&result.text_content()),
        "File not found: <root>/nothing/like/it.rs"
    );
}

#[tokio::test]
async fn read_of_a_directory_points_to_ls() {
    let fx = Fixture::new();
    fs::create_dir(fx.path("sub")).unwrap();
    let result = fx.call("read", json!({"path": "sub"})).await;
    assert!(result.is_error);
    assert_eq!(
        fx.redact(&result.text_content()),
        "<root>/sub is a directory; read only reads files. Use ls to list it."
    );
}

#[tokio::test]
async fn read_of_a_binary_file_says_so_instead_of_showing_garbage() {
    let fx = Fixture::new();
    let mut bytes = b"\x7fELF\x02\x01\x01\0\0\0".to_vec();
    bytes.resize(3000, 0);
    fx.write("prog", bytes);
    let result = fx.call("read", json!({"path": "prog"})).await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "prog is a binary file (2.9KB); read cannot show it. Inspect it with bash, e.g. xxd prog | head."
    );
}

#[tokio::test]
async fn read_of_non_utf8_text_decodes_lossily_and_says_so() {
    let fx = Fixture::new();
    // 0x81 is a control character in every single-byte guess: no encoding is certain.
    fx.write("latin1.txt", b"caf\x81\n");
    let result = fx.call("read", json!({"path": "latin1.txt"})).await;
    assert!(!result.is_error);
    let text = result.text_content();
    assert!(
        text.starts_with("caf\u{FFFD}\n\n[This file is not valid UTF-8"),
        "{text}"
    );
    assert_eq!(text.matches('\n').count(), 2, "{text}");
}

#[tokio::test]
async fn read_attaches_a_png_unchanged() {
    let fx = Fixture::new();
    let png = encoded_image(3, 2, ImageFormat::Png);
    fx.write("pixel.dat", &png);
    let result = fx.call("read", json!({"path": "pixel.dat"})).await;
    assert!(!result.is_error);
    assert_eq!(result.content.len(), 2);
    assert_eq!(
        result.content[0],
        Content::text("Read image file [image/png]")
    );
    assert_eq!(
        result.content[1],
        Content::Image {
            data: STANDARD.encode(&png),
            mime_type: "image/png".into()
        }
    );
}

#[tokio::test]
async fn read_converts_a_bmp_to_png() {
    let fx = Fixture::new();
    fx.write("icon.bmp", encoded_image(8, 8, ImageFormat::Bmp));
    let result = fx.call("read", json!({"path": "icon.bmp"})).await;
    assert_eq!(
        result.text_content(),
        "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    );
    let Content::Image { data, mime_type } = &result.content[1] else {
        panic!("no image part: {result:?}");
    };
    assert_eq!(mime_type, "image/png");
    let png = STANDARD.decode(data).unwrap();
    assert_eq!(image::guess_format(&png).unwrap(), ImageFormat::Png);
}

#[tokio::test]
async fn read_shrinks_a_large_image_within_the_limits() {
    let fx = Fixture::new();
    fx.write("wide.png", encoded_image(2400, 600, ImageFormat::Png));
    let result = fx.call("read", json!({"path": "wide.png"})).await;
    assert!(
        result.text_content().ends_with(
            "[Image: original 2400x600, displayed at 2000x500. Multiply coordinates by 1.20 to map to original image.]"
        ),
        "{}",
        result.text_content()
    );
    let Content::Image { data, .. } = &result.content[1] else {
        panic!("no image part");
    };
    assert!(data.len() < 4_718_592);
    let shown = image::load_from_memory(&STANDARD.decode(data).unwrap()).unwrap();
    assert_eq!((shown.width(), shown.height()), (2000, 500));
}

#[tokio::test]
async fn read_finds_macos_spellings_of_a_path() {
    let fx = Fixture::new();
    fx.write(
        "Screenshot 2024-01-01 at 10.00.00\u{202F}AM.png.txt",
        "shot",
    );
    fx.write("cafe\u{301}.txt", "nfd");
    fx.write("Capture d\u{2019}e\u{301}cran.txt", "both");
    fx.write("it\u{2019}s.txt", "curly");
    let cases = [
        ("Screenshot 2024-01-01 at 10.00.00 AM.png.txt", "shot"),
        ("Screenshot 2024-01-01 at 10.00.00 am.png.txt", ""),
        ("café.txt", "nfd"),
        ("Capture d'écran.txt", "both"),
        ("it's.txt", "curly"),
        ("@it's.txt", "curly"),
    ];
    for (asked, expected) in cases {
        let result = fx.call("read", json!({"path": asked})).await;
        if expected.is_empty() {
            // The U+202F variant keeps the case asked for: "am" is not "AM" on disk.
            assert!(result.is_error, "{asked}");
        } else {
            assert_eq!(result.text_content(), expected, "{asked}");
        }
    }
    fx.write("Shot 1.02.03\u{202F}pm.txt", "lower");
    assert_eq!(
        fx.text("read", json!({"path": "Shot 1.02.03 pm.txt"}))
            .await,
        "lower"
    );
}

#[tokio::test]
async fn read_accepts_file_urls_and_absolute_paths() {
    let fx = Fixture::new();
    let path = fx.write("a b.txt", "spaced");
    let url = format!("file://{}/a%20b.txt", fx.root.display());
    assert_eq!(fx.text("read", json!({"path": url})).await, "spaced");
    assert_eq!(
        fx.text("read", json!({"path": path.to_str().unwrap()}))
            .await,
        "spaced"
    );
    let bad = fx.call("read", json!({"path": "file:///%E0%A4%A"})).await;
    assert!(bad.is_error);
    assert!(bad.text_content().starts_with("Invalid file URL"));
}

#[tokio::test]
async fn read_validates_its_arguments() {
    let fx = Fixture::new();
    let result = fx.call("read", json!({"path": "x", "offset": "abc"})).await;
    assert!(result.is_error);
    assert!(result.text_content().contains("offset must be an integer"));
}

#[tokio::test]
async fn a_cancelled_read_does_not_start() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let result = fx
        .session
        .call("read", json!({"path": "a.txt"}), cancelled())
        .await;
    assert!(result.is_error);
    assert_eq!(result.text_content(), "Operation aborted");
}

#[tokio::test]
async fn read_streams_a_huge_sparse_file_without_loading_it() {
    let fx = Fixture::new();
    let path = fx.write("huge.log", numbered(3000));
    // 1 GiB of hole after the text: a last "line" of NUL bytes.
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(1 << 30).unwrap();
    let result = fx
        .call("read", json!({"path": "huge.log", "limit": 2}))
        .await;
    assert_eq!(
        result.text_content(),
        // Counted only a few MiB past the page: the 1 GiB line is not read.
        "line 1\nline 2\n\n[At least 2999 more lines in file. Use offset=3 to continue.]"
    );
}

/// Lines `<n>:xxx…` of varied lengths, about `size` bytes.
fn varied_lines(size: usize) -> String {
    let mut text = String::with_capacity(size + 200);
    let mut line = 0usize;
    while text.len() < size {
        let width = (line * 37) % 150;
        text.push_str(&format!("{line}:{}\n", "x".repeat(width)));
        line += 1;
    }
    text
}

#[tokio::test]
async fn deep_pages_of_a_file_too_large_to_hash_are_the_lines_at_that_offset() {
    // Over 32 MiB: lines before the page are skipped by the reader (mapped windows of a
    // local file), the count ahead is a lower bound; a second session reads the same
    // pages from the start and a third from its line index, and all agree.
    let fx = Fixture::new();
    let text = varied_lines(40 << 20);
    fx.write("big.log", &text);
    let lines: Vec<&str> = text.lines().collect();
    for offset in [2usize, 50_000, 123_457, lines.len() - 3] {
        for session in [fx.tools.session(), fx.session.clone()] {
            let result = session
                .call(
                    "read",
                    json!({"path": "big.log", "offset": offset, "limit": 3}),
                    CallOptions::default(),
                )
                .await;
            let shown = result.text_content();
            let expected = lines[offset - 1..(offset + 2).min(lines.len())].join("\n");
            assert!(shown.starts_with(&expected), "{offset}: {shown:.200}");
            assert_eq!(
                shown.as_bytes().get(expected.len()),
                Some(&b'\n'),
                "{offset}: {shown:.200}"
            );
        }
    }
    let past = fx
        .call(
            "read",
            json!({"path": "big.log", "offset": lines.len() + 1}),
        )
        .await;
    assert_eq!(
        past.text_content(),
        format!(
            "Offset {} is beyond end of file ({} lines total)",
            lines.len() + 1,
            lines.len()
        )
    );
}

/// Renames `replacement` over `path` with `path`'s modification time, as `cp -p`,
/// `rsync -t` or `tar -x` leave a file: same size and time, other content.
pub(crate) fn replace_keeping_time(path: &std::path::Path, replacement: &str) {
    let modified = fs::metadata(path).unwrap().modified().unwrap();
    let other = path.with_extension("replacement");
    fs::write(&other, replacement).unwrap();
    fs::File::options()
        .write(true)
        .open(&other)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    fs::rename(&other, path).unwrap();
    let now = fs::metadata(path).unwrap();
    assert_eq!(
        (now.len(), now.modified().unwrap()),
        (replacement.len() as u64, modified)
    );
}

#[tokio::test]
async fn a_deep_page_after_the_file_was_replaced_by_one_of_the_same_size_and_time_is_its_own() {
    // Over 32 MiB, so the session keeps a line index of it; the replacement has lines
    // twice as long, so the old index's checkpoints would land on wrong line numbers.
    let fx = Fixture::new();
    let lines = 4_200_000usize;
    let old: String = (0..lines).map(|i| format!("a{i:07}\n")).collect();
    let path = fx.write("big.log", &old);
    let deep = fx
        .call(
            "read",
            json!({"path": "big.log", "offset": 4_000_001, "limit": 1}),
        )
        .await;
    assert!(
        deep.text_content().starts_with("a4000000\n"),
        "{:.100}",
        deep.text_content()
    );
    let new: String = (0..lines / 2).map(|i| format!("b{i:016}\n")).collect();
    replace_keeping_time(&path, &new);
    let page = fx
        .call(
            "read",
            json!({"path": "big.log", "offset": 2_000_001, "limit": 1}),
        )
        .await;
    assert!(
        page.text_content().starts_with("b0000000002000000\n"),
        "{:.100}",
        page.text_content()
    );
}
