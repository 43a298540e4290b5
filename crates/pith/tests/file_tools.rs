//! read, write, edit and ls through the real binary (`pith call`, `pith batch`):
//! every notice and error, CRLF/BOM, images, NFD and U+202F paths.

use std::fs;
use std::io::{Cursor, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::{Value, json};
use tempfile::TempDir;

/// A temp dir that `pith` runs in (`--cwd`), with its canonical path.
pub(crate) struct Dir {
    _temp: TempDir,
    pub(crate) root: PathBuf,
}

impl Dir {
    pub(crate) fn new() -> Dir {
        let temp = TempDir::new().unwrap();
        let root = fs::canonicalize(temp.path()).unwrap();
        Dir { _temp: temp, root }
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

    pub(crate) fn read(&self, relative: &str) -> Vec<u8> {
        fs::read(self.path(relative)).unwrap()
    }

    pub(crate) fn cwd(&self) -> &str {
        self.root.to_str().unwrap()
    }

    /// `pith call TOOL ARGS --cwd DIR`: (text with the dir as `<root>`, exit code).
    pub(crate) fn call(&self, tool: &str, args: Value) -> (String, i32) {
        let output = pith(&["call", tool, &args.to_string(), "--cwd", self.cwd()], b"");
        let text = String::from_utf8(output.stdout).unwrap();
        (self.redact(&text), output.status.code().unwrap())
    }

    /// `pith call TOOL ARGS --json`: the result object.
    pub(crate) fn call_json(&self, tool: &str, args: Value) -> Value {
        let output = pith(
            &[
                "call",
                tool,
                &args.to_string(),
                "--json",
                "--cwd",
                self.cwd(),
            ],
            b"",
        );
        serde_json::from_slice(&output.stdout).unwrap()
    }

    /// `pith batch`: one result per line, in input order.
    pub(crate) fn batch(&self, calls: &[Value]) -> Vec<Value> {
        let input: String = calls.iter().map(|call| format!("{call}\n")).collect();
        let output = pith(&["batch", "--cwd", self.cwd()], input.as_bytes());
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(self.cwd(), "<root>")
    }
}

/// Runs pith with `args`, feeding `stdin` (written from a thread, so large
/// inputs cannot deadlock against a full stdout pipe).
pub(crate) fn pith(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    output
}

fn image_bytes(width: u32, height: u32, format: ImageFormat) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 251) as u8, (y % 241) as u8, ((x ^ y) % 239) as u8])
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

#[test]
fn read_notices_through_pith_call() {
    let dir = Dir::new();
    dir.write("small.txt", "alpha\nbeta\ngamma\n");
    dir.write("ten.txt", numbered(10));
    dir.write("big.txt", numbered(5000));
    dir.write("wide.txt", format!("{}\n", "x".repeat(99)).repeat(1000));
    dir.write("one.txt", format!("short\n{}\n", "y".repeat(60_000)));
    let cases = [
        (json!({"path": "small.txt"}), "alpha\nbeta\ngamma\n"),
        (
            json!({"path": "ten.txt", "offset": 3, "limit": 4}),
            "line 3\nline 4\nline 5\nline 6\n\n[4 more lines in file. Use offset=7 to continue.]\n",
        ),
        (
            json!({"path": "one.txt", "offset": 2}),
            "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' one.txt | head -c 51200]\n",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(
            dir.call("read", args.clone()),
            (expected.to_owned(), 0),
            "{args}"
        );
    }
    let (text, code) = dir.call("read", json!({"path": "big.txt"}));
    assert_eq!(code, 0);
    assert!(
        text.ends_with(
            "line 2000\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]\n"
        )
    );
    let (text, _) = dir.call("read", json!({"path": "wide.txt"}));
    assert!(text.ends_with(
        "\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]\n"
    ));
    let result = dir.call_json("read", json!({"path": "big.txt"}));
    assert_eq!(result["isError"], false);
    assert_eq!(result["details"]["truncation"]["truncatedBy"], "lines");
    assert_eq!(result["details"]["truncation"]["totalLines"], 5000);
    assert_eq!(result["details"]["truncation"]["outputLines"], 2000);
}

#[test]
fn read_errors_through_pith_call() {
    let dir = Dir::new();
    dir.write("ab.txt", "a\nb\n");
    dir.write("notes.txt", "n");
    fs::create_dir(dir.path("sub")).unwrap();
    let mut elf = b"\x7fELF\x02\x01\x01\0".to_vec();
    elf.resize(2048, 0);
    dir.write("prog", elf);
    let cases = [
        (
            json!({"path": "ab.txt", "offset": 3}),
            "Offset 3 is beyond end of file (2 lines total)\n",
        ),
        (
            json!({"path": "note.txt"}),
            "File not found: <root>/note.txt\nSimilar names in <root>: notes.txt\n",
        ),
        (
            json!({"path": "sub"}),
            "<root>/sub is a directory; read only reads files. Use ls to list it.\n",
        ),
        (
            json!({"path": "prog"}),
            "prog is a binary file (2.0KB); read cannot show it. Inspect it with bash, e.g. xxd prog | head.\n",
        ),
        (
            json!({"path": "file:///%E0%A4%A"}),
            "Invalid file URL file:///%E0%A4%A: bad percent-encoding. Send a plain path or a URL like file:///home/me/a.txt.\n",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(
            dir.call("read", args.clone()),
            (expected.to_owned(), 1),
            "{args}"
        );
    }
}

#[test]
fn read_shows_non_utf8_lossily_and_hides_a_bom_but_keeps_crlf() {
    let dir = Dir::new();
    dir.write("latin1.txt", b"caf\x81\n"); // no encoding is certain
    dir.write("bom.txt", "\u{FEFF}first\r\nsecond\r\n");
    let (text, code) = dir.call("read", json!({"path": "latin1.txt"}));
    assert_eq!(code, 0);
    assert!(
        text.starts_with("caf\u{FFFD}\n\n[This file is not valid UTF-8"),
        "{text}"
    );
    assert_eq!(
        dir.call("read", json!({"path": "bom.txt"})),
        ("first\r\nsecond\r\n".to_owned(), 0)
    );
}

#[test]
fn read_attaches_images_within_the_limits() {
    let dir = Dir::new();
    let png = image_bytes(3, 2, ImageFormat::Png);
    dir.write("pixel.png", &png);
    dir.write("icon.bmp", image_bytes(16, 16, ImageFormat::Bmp));
    dir.write("huge.png", image_bytes(3000, 2400, ImageFormat::Png));

    let result = dir.call_json("read", json!({"path": "pixel.png"}));
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "Read image file [image/png]"},
            {"type": "image", "data": STANDARD.encode(&png), "mimeType": "image/png"}
        ])
    );

    let result = dir.call_json("read", json!({"path": "icon.bmp"}));
    assert_eq!(
        result["content"][0]["text"],
        "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    );
    assert_eq!(result["content"][1]["mimeType"], "image/png");
    let converted = STANDARD
        .decode(result["content"][1]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(image::guess_format(&converted).unwrap(), ImageFormat::Png);

    let result = dir.call_json("read", json!({"path": "huge.png"}));
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.ends_with("[Image: original 3000x2400, displayed at 2000x1600. Multiply coordinates by 1.50 to map to original image.]"),
        "{text}"
    );
    let data = result["content"][1]["data"].as_str().unwrap();
    assert!(data.len() < 4_718_592, "base64 of {} bytes", data.len());
    let shown = image::load_from_memory(&STANDARD.decode(data).unwrap()).unwrap();
    assert!(shown.width() <= 2000 && shown.height() <= 2000);
}

#[test]
fn read_finds_nfd_and_narrow_space_spellings() {
    let dir = Dir::new();
    dir.write(
        "Screenshot 2025-03-04 at 9.41.07\u{202F}PM.png.txt",
        "shot\n",
    );
    dir.write("re\u{301}sume\u{301}.md", "nfd\n");
    dir.write("Capture d\u{2019}e\u{301}cran.txt", "both\n");
    assert_eq!(
        dir.call(
            "read",
            json!({"path": "Screenshot 2025-03-04 at 9.41.07 PM.png.txt"})
        ),
        ("shot\n".to_owned(), 0)
    );
    assert_eq!(
        dir.call("read", json!({"path": "résumé.md"})),
        ("nfd\n".to_owned(), 0)
    );
    assert_eq!(
        dir.call("read", json!({"path": "Capture d'écran.txt"})),
        ("both\n".to_owned(), 0)
    );
}

#[test]
fn write_through_pith_call_overwrites_but_a_batch_asks_for_a_read_first() {
    let dir = Dir::new();
    assert_eq!(
        dir.call(
            "write",
            json!({"path": "new/deep/file.txt", "content": "héllo\n"})
        ),
        (
            "Successfully wrote 7 bytes to new/deep/file.txt\n".to_owned(),
            0
        )
    );
    assert_eq!(dir.read("new/deep/file.txt"), "héllo\n".as_bytes());
    dir.write("a.txt", "old\n");
    assert_eq!(
        dir.call("write", json!({"path": "a.txt", "content": "one-shot\n"}))
            .1,
        0
    );
    let results = dir.batch(&[
        json!({"id": 1, "tool": "write", "args": {"path": "a.txt", "content": "batch\n"}}),
    ]);
    assert_eq!(results[0]["isError"], true);
    assert_eq!(
        results[0]["content"][0]["text"],
        "a.txt already exists and has not been read in this session. Read it first, then write it (or use edit for targeted changes)."
    );
    assert_eq!(dir.read("a.txt"), b"one-shot\n");
    fs::create_dir(dir.path("d")).unwrap();
    assert_eq!(
        dir.call("write", json!({"path": "d", "content": "x"})),
        (
            "Cannot write d: <root>/d is a directory. Write to a file path inside it.\n".to_owned(),
            1
        )
    );
}

#[test]
fn edit_results_and_errors_through_pith_call() {
    let dir = Dir::new();
    dir.write("f.txt", "one\ntwo\nthree\n");
    dir.write("dup.txt", "x = 1\nx = 1\n");
    dir.write("curly.md", "He said \u{201C}hello\u{201D}.\n");
    dir.write("latin1.txt", b"caf\x81\n"); // no encoding is certain
    dir.write("ghost.txt.orig", "g");
    let edit = |path: &str, old: &str, new: &str| {
        dir.call(
            "edit",
            json!({"path": path, "edits": [{"oldText": old, "newText": new}]}),
        )
    };
    assert_eq!(
        edit("f.txt", "two", "2"),
        ("Successfully replaced 1 block(s) in f.txt.\n".to_owned(), 0)
    );
    assert_eq!(
        edit("curly.md", "He said \"hello\".", "He said \"hi\"."),
        (
            "Successfully replaced 1 block(s) in curly.md.\nNote: edits[0] matched after normalising quotes/whitespace at line 1.\n".to_owned(),
            0
        )
    );
    let (text, code) = edit("f.txt", "four", "4");
    assert_eq!(code, 1);
    assert!(
        text.starts_with("Could not find the exact text in f.txt."),
        "{text}"
    );
    let (text, code) = edit("dup.txt", "x = 1", "x = 2");
    assert_eq!(code, 1);
    assert!(
        text.starts_with("Found 2 occurrences of the text in dup.txt"),
        "{text}"
    );
    assert_eq!(
        edit("ghost.txt", "a", "b"),
        (
            "Could not edit file: ghost.txt. File not found.\nSimilar names in <root>: ghost.txt.orig\n".to_owned(),
            1
        )
    );
    let (text, code) = edit("latin1.txt", "caf", "tea");
    assert_eq!(code, 1);
    assert!(
        text.starts_with("Could not edit file: latin1.txt. It is not valid UTF-8 text"),
        "{text}"
    );
    assert_eq!(dir.read("latin1.txt"), b"caf\x81\n");
    assert_eq!(
        dir.call("edit", json!({"path": "f.txt", "edits": []})),
        (
            "Edit tool input is invalid. edits must contain at least one replacement.\n".to_owned(),
            1
        )
    );
    let result = dir.call_json(
        "edit",
        json!({"path": "f.txt", "oldText": "three", "newText": "3"}),
    );
    assert_eq!(result["details"]["diff"], " 1 one\n 2 2\n-3 three\n+3 3");
    assert_eq!(result["details"]["firstChangedLine"], 3);
    assert!(
        result["details"]["patch"]
            .as_str()
            .unwrap()
            .starts_with("--- f.txt\n+++ f.txt\n")
    );
    assert_eq!(result["details"]["matches"][0]["tier"], "exact");
    assert_eq!(dir.read("f.txt"), b"one\n2\n3\n");
}

#[test]
fn edit_keeps_crlf_and_a_bom() {
    let dir = Dir::new();
    dir.write("win.txt", "\u{FEFF}first\r\nsecond\r\nthird\r\n");
    let (_, code) = dir.call(
        "edit",
        json!({"path": "win.txt", "edits": [{"oldText": "second\nthird", "newText": "2nd\nthird"}]}),
    );
    assert_eq!(code, 0);
    assert_eq!(
        dir.read("win.txt"),
        "\u{FEFF}first\r\n2nd\r\nthird\r\n".as_bytes()
    );
}

#[test]
fn ls_listings_and_errors_through_pith_call() {
    let dir = Dir::new();
    for name in ["Zeta.txt", "apple.txt", ".hidden"] {
        dir.write(name, "x");
    }
    fs::create_dir(dir.path("src")).unwrap();
    fs::create_dir(dir.path("empty")).unwrap();
    std::os::unix::fs::symlink("src", dir.path("link")).unwrap();
    assert_eq!(
        dir.call("ls", json!({})),
        (
            ".hidden\napple.txt\nempty/\nlink/\nsrc/\nZeta.txt\n".to_owned(),
            0
        )
    );
    assert_eq!(
        dir.call("ls", json!({"limit": 2})),
        (
            ".hidden\napple.txt\n\n[2 entries limit reached. Use limit=4 for more]\n".to_owned(),
            0
        )
    );
    assert_eq!(
        dir.call("ls", json!({"path": "empty"})),
        ("(empty directory)\n".to_owned(), 0)
    );
    assert_eq!(
        dir.call("ls", json!({"path": "nope"})),
        ("Path not found: <root>/nope\n".to_owned(), 1)
    );
    assert_eq!(
        dir.call("ls", json!({"path": "apple.txt"})),
        ("Not a directory: <root>/apple.txt\n".to_owned(), 1)
    );
    let many = Dir::new();
    for n in 0..300 {
        many.write(&format!("{n:03}{}", "n".repeat(200)), "");
    }
    let (text, code) = many.call("ls", json!({}));
    assert_eq!(code, 0);
    assert!(text.ends_with("\n\n[50.0KB limit reached]\n"));
}
