use super::*;

fn bytes_in(label: &str, text: &str) -> Vec<u8> {
    let encoding = TextEncoding::from_label(label).unwrap();
    encode(text, encoding).unwrap()
}

const JAPANESE: &str =
    "日本語のテキストです。\r\n二行目はここにあります。\r\n最後の行も日本語で書かれています。\r\n";

#[test]
fn shift_jis_is_guessed_and_edited_byte_for_byte() {
    let original = bytes_in("shift_jis", JAPANESE);
    let decoded = decode(&original).unwrap();
    assert_eq!(decoded.encoding.name(), "Shift_JIS");
    assert_eq!(decoded.text, JAPANESE);
    let new_text = JAPANESE.replace("二行目", "第二行");
    let edited = encode_edited(&original, &decoded.text, &new_text, decoded.encoding).unwrap();
    let lines: Vec<&[u8]> = original.split_inclusive(|&b| b == b'\n').collect();
    let edited_lines: Vec<&[u8]> = edited.split_inclusive(|&b| b == b'\n').collect();
    assert_eq!(lines[0], edited_lines[0]);
    assert_eq!(lines[2], edited_lines[2]);
    assert_eq!(edited, bytes_in("shift_jis", &new_text));
}

#[test]
fn utf16_keeps_its_bom_and_untouched_lines() {
    let text = "alpha\nbeta\ngamma\n";
    let original = bytes_in("utf-16be", text);
    assert!(original.starts_with(b"\xFE\xFF"));
    let decoded = decode(&original).unwrap();
    assert_eq!(decoded.encoding.describe(), "UTF-16BE with BOM");
    assert_eq!(decoded.text, text);
    let edited =
        encode_edited(&original, text, "alpha\nBETA ✓\ngamma\n", decoded.encoding).unwrap();
    assert_eq!(edited, bytes_in("utf-16be", "alpha\nBETA ✓\ngamma\n"));
}

#[test]
fn unrepresentable_characters_are_named_with_their_place() {
    let encoding = TextEncoding::from_label("latin1").unwrap();
    let error = check_representable("ok\nnot ok: 日", encoding).unwrap_err();
    assert_eq!(
        error.to_string(),
        "'日' (U+65E5) at line 2, column 9 cannot be written in windows-1252"
    );
    let original = bytes_in("latin1", "café\nthé\n");
    let decoded = decode(&original).unwrap();
    let error = encode_edited(
        &original,
        &decoded.text,
        "café\nthé\n日\n",
        decoded.encoding,
    )
    .unwrap_err();
    assert!(matches!(error, EncodeError::Unrepresentable(u) if u.line == 3 && u.column == 1));
}

#[test]
fn mostly_utf8_with_a_broken_byte_is_not_guessed() {
    let mut bytes = "naïve café résumé\n".as_bytes().to_vec();
    bytes.push(0xFF);
    let error = decode(&bytes).unwrap_err();
    assert!(
        matches!(error, NotText::Unsure { offset: 22, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("looks like UTF-8"), "{error}");
}

#[test]
fn control_bytes_are_not_text_and_nul_is_binary() {
    assert!(matches!(
        decode(b"ab\x81\x02\x03\xfe"),
        Err(NotText::Unsure { .. })
    ));
    assert_eq!(decode(b"a\xff\x00b"), Err(NotText::Binary { offset: 2 }));
    assert!(matches!(
        decode(b"\xFF\xFEa"),
        Err(NotText::Malformed { .. })
    ));
}

#[test]
fn utf8_is_borrowed_with_its_bom() {
    let decoded = decode("\u{FEFF}x\n".as_bytes()).unwrap();
    assert!(matches!(decoded.text, Cow::Borrowed(_)));
    assert!(decoded.encoding.has_bom() && decoded.encoding.is_utf8());
    assert_eq!(
        encode(&decoded.text, decoded.encoding).unwrap(),
        "\u{FEFF}x\n".as_bytes()
    );
    let bom = TextEncoding::from_label("utf-8-bom").unwrap();
    assert_eq!(encode("x", bom).unwrap(), b"\xEF\xBB\xBFx");
    assert!(TextEncoding::from_label("iso-2022-jp").is_none());
    assert!(TextEncoding::from_label("klingon").is_none());
}

#[test]
fn changed_lines_name_the_runs_that_differ() {
    let old = LineHasher::of("a\nb\nc\nd\n").unwrap();
    let new = LineHasher::of("a\nB\nc\nd\r\ne").unwrap();
    let changes = changed_lines(&old, &new);
    assert_eq!(
        changes,
        vec![
            ChangedLines {
                old: 1..2,
                new: 1..2
            },
            ChangedLines {
                old: 3..4,
                new: 3..5
            },
        ]
    );
    let mut chunked = LineHasher::new();
    for chunk in b"a\nb\nc\nd\n".chunks(3) {
        chunked.update(chunk);
    }
    assert_eq!(chunked.finish().unwrap(), old);
}

#[test]
fn gb18030_four_byte_sequences_are_kept() {
    let text = "这是一个简体中文的文本文件，里面有表情😀。\n第二行包含一些常用的汉字。\n我们在北京学习编程和数学。\n";
    let original = bytes_in("gb18030", text);
    let decoded = decode(&original).unwrap();
    assert_eq!(decoded.encoding.name(), "gb18030");
    assert_eq!(decoded.text, text);
    let gbk = bytes_in(
        "gbk",
        "我们在北京学习编程和数学，价格是五€。\n今天的天气非常好，阳光明媚。\n",
    );
    assert_eq!(gbk.iter().filter(|&&b| b == 0x80).count(), 1);
    assert_eq!(decode(&gbk).unwrap().encoding.name(), "GBK");
}

/// The hashes of `text`'s lines (each with its newline; the last without one
/// if the text does not end in a newline), one `xxh3_64` call each.
fn line_hashes_one_by_one(text: &[u8]) -> Vec<u64> {
    text.split_inclusive(|&b| b == b'\n')
        .map(xxhash_rust::xxh3::xxh3_64)
        .collect()
}

proptest::proptest! {
    /// Lines found 64 bytes at a time and hashed whole or through the
    /// streaming state give the hashes of the lines one by one, however the
    /// text is cut into chunks (cuts inside lines, at newlines, inside a
    /// 64-byte block, between blocks).
    #[test]
    fn line_hashes_do_not_depend_on_how_the_text_arrives(
        lines in proptest::collection::vec("[a-z \\t]{0,150}", 0..60),
        last in "[a-z]{0,70}",
        cuts in proptest::collection::vec(0usize..4000, 0..8),
    ) {
        let mut text = lines.join("\n").into_bytes();
        if !lines.is_empty() {
            text.push(b'\n');
        }
        text.extend_from_slice(last.as_bytes());
        let want = line_hashes_one_by_one(&text);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|cut| cut.min(text.len())).collect();
        cuts.sort_unstable();
        let mut hasher = LineHasher::new();
        let mut from = 0;
        for cut in cuts.into_iter().chain([text.len()]) {
            hasher.update(&text[from..cut]);
            from = cut;
        }
        proptest::prop_assert_eq!(hasher.finish().unwrap(), want);
    }
}
