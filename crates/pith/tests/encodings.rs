//! Text encodings through the real binary: files generated with Python's codecs in each
//! encoding, read (decoded, with the encoding line), multi-edited and rewritten with
//! byte-exact comparisons against Python's own encoding of the expected text;
//! unrepresentable characters refused; a weakly guessed file refused unchanged; grep in
//! UTF-16.

use std::process::Command;

use pith_testkit::{Prerequisite, skip};
use serde_json::{Value, json};

use crate::file_tools::Dir;

/// Writes every case's files into the directory `argv[1]` and prints the cases as JSON:
/// `NAME.orig` (the text in the encoding), `NAME.edited` (after the edits),
/// `NAME.rewritten` (the rewrite content in the same encoding).
const GENERATE: &str = r#"
import json, sys, os
d = sys.argv[1]
BOM = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff", "utf-8": b"\xef\xbb\xbf"}
cases = [
    ("cp1252", "cp1252", "windows-1252",
     "Le café de la gare\r\nest ouvert à côté du théâtre.\r\nÇa coûte cinq euros — très cher, dit Noël!\r\nLes crêpes sont délicieuses, même froides.\r\n",
     [("café", "bistrot"), ("cinq euros", "six € «seulement»")],
     "Nouveau contenu: été, hiver, ½ et ¾.\n", "日"),
    ("latin1", "latin-1", "windows-1252",
     "Über den Bergen liegt Schnee.\nDie Straße nach Süden ist gesperrt.\nMänner und Frauen warten geduldig.\nGrüße aus München, schön ist es hier.\n",
     [("Schnee", "frischer Schnee"), ("Süden", "Norden"), ("schön", "kühl")],
     "Größe: groß, Fußball und Käse.\n", "日"),
    ("shift_jis", "shift_jis", "Shift_JIS",
     "日本語のテキストファイルです。\n二行目には漢字とひらがなとカタカナがあります。\n三行目は最後の行ではありません。\n東京は今日も晴れています。\n",
     [("二行目", "第二行"), ("晴れ", "雨")],
     "書き直した内容です。漢字も大丈夫。\n", "😀"),
    ("euc_jp", "euc_jp", "EUC-JP",
     "これは日本語の文章です。\r\n漢字とひらがなを混ぜて書いています。\r\n最後の行には句読点があります。\r\n京都の寺はとても静かです。\r\n",
     [("文章", "文書"), ("静か", "賑やか")],
     "新しい内容。\r\n", "€"),
    ("gbk", "gbk", "GBK",
     "这是一个简体中文的文本文件。\n第二行包含一些常用的汉字。\n我们在北京学习编程和数学。\n今天的天气非常好，阳光明媚。\n",
     [("文本文件", "测试文件"), ("北京", "上海")],
     "重新写入的内容，仍然是中文。\n", "😀"),
    ("gb18030", "gb18030", "gb18030",
     "这是一个简体中文的文本文件，里面有表情😀。\n第二行包含一些常用的汉字。\n我们在北京学习编程和数学。\n",
     [("表情", "笑脸"), ("数学", "物理😀")],
     "重新写入😀。\n", None),
    ("big5", "big5", "Big5",
     "這是一個繁體中文的文字檔案。\n第二行包含一些常用的漢字。\n我們在臺北學習程式設計與數學。\n今天的天氣非常好，陽光明媚。\n",
     [("文字檔案", "測試檔案"), ("臺北", "高雄")],
     "重新寫入的內容，仍然是繁體中文。\n", "😀"),
    ("euc_kr", "euc_kr", "EUC-KR",
     "이것은 한국어 텍스트 파일입니다.\n두 번째 줄에는 한글이 있습니다.\n서울의 날씨는 오늘 맑습니다.\n우리는 프로그래밍을 공부합니다.\n",
     [("텍스트", "문서"), ("맑습니다", "흐립니다")],
     "다시 쓴 내용입니다.\n", "😀"),
    ("cp1251", "cp1251", "windows-1251",
     "Это текстовый файл на русском языке.\nВо второй строке есть несколько слов.\nМосква — столица России, большой город.\nСегодня хорошая погода и светит солнце.\n",
     [("текстовый", "тестовый"), ("хорошая", "плохая")],
     "Новое содержимое файла.\n", "日"),
    # chardetng names KOI8-U, the superset, for Russian KOI8-R text: the bytes are the same.
    ("koi8_r", "koi8_r", "KOI8-U",
     "Это текстовый файл в кодировке КОИ-8.\nВо второй строке есть несколько слов.\nПетербург стоит на берегу Невы, красивый город.\nСегодня холодно и идёт снег.\n",
     [("несколько", "много"), ("снег", "дождь")],
     "Новое содержимое.\n", "日"),
    ("cp1250", "cp1250", "windows-1250",
     "Příliš žluťoučký kůň úpěl ďábelské ódy.\nDruhý řádek obsahuje česká slova.\nPraha je hlavní město České republiky.\nDnes je krásné počasí a svítí slunce.\n",
     [("žluťoučký", "hnědý"), ("krásné", "ošklivé")],
     "Nový obsah souboru, řádek s háčky.\n", "日"),
    ("utf16le", "utf-16-le", "UTF-16LE with BOM",
     "First line of a UTF-16 file\r\nsecond line with ünïcödé and 日本語\r\nthird line\r\n",
     [("second line", "2nd line"), ("third", "3rd 😀")],
     "rewritten 😀 content\r\n", None),
    ("utf16be", "utf-16-be", "UTF-16BE with BOM",
     "alpha\nbeta ✓\ngamma\n",
     [("alpha", "ALPHA"), ("gamma", "Γάμμα")],
     "rewritten\n", None),
]
out = []
for name, codec, shown, text, edits, rewrite, foreign in cases:
    bom = BOM.get(codec, b"")
    edited = text
    for old, new in edits:
        edited = edited.replace(old, new, 1)
    for suffix, content in (("orig", text), ("edited", edited), ("rewritten", rewrite)):
        with open(os.path.join(d, name + "." + suffix), "wb") as f:
            f.write(bom + content.encode(codec))
    if foreign is not None:
        try:
            foreign.encode(codec)
            raise SystemExit(name + ": the foreign character is representable")
        except UnicodeEncodeError:
            pass
    out.append({"name": name, "shown": shown, "first": text.splitlines()[0],
                "edits": [{"oldText": o, "newText": n} for o, n in edits],
                "rewrite": rewrite, "foreign": foreign})
print(json.dumps(out))
"#;

/// Runs `script` with `python3` and the arguments; `None` (after `skip`) without Python.
fn python(test: &str, script: &str, args: &[&str]) -> Option<String> {
    match Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
    {
        Ok(output) => {
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            Some(String::from_utf8(output.stdout).unwrap())
        }
        Err(error) => {
            skip(test, Prerequisite::Python, &format!("python3: {error}"));
            None
        }
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn every_encoding_is_read_multi_edited_and_rewritten_byte_for_byte() {
    let dir = Dir::new();
    let Some(cases) = python(
        "every_encoding_is_read_multi_edited_and_rewritten_byte_for_byte",
        GENERATE,
        &[dir.cwd()],
    ) else {
        return;
    };
    let cases: Vec<Value> = serde_json::from_str(&cases).unwrap();
    assert_eq!(cases.len(), 13);
    let mut calls = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let path = format!("{name}.txt");
        std::fs::copy(dir.path(&format!("{name}.orig")), dir.path(&path)).unwrap();
        calls.push(json!({"tool": "read", "args": {"path": path}}));
        calls.push(json!({"tool": "edit", "args": {"path": path, "edits": case["edits"]}}));
        if let Some(foreign) = case["foreign"].as_str() {
            let edit =
                json!({"oldText": case["edits"][0]["newText"], "newText": format!("x{foreign}")});
            calls.push(json!({"tool": "edit", "args": {"path": path, "edits": [edit]}}));
        }
    }
    let results = dir.batch(&calls);
    let mut results = results.iter();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let shown = case["shown"].as_str().unwrap();
        let read = results.next().unwrap();
        assert_eq!(read["isError"], false, "{name}: {read}");
        let read_text = text(read);
        assert!(
            read_text.starts_with(case["first"].as_str().unwrap()),
            "{name}: {read_text}"
        );
        assert!(
            read_text.ends_with(&format!("[file is {shown}; edits keep it]")),
            "{name}: {read_text}"
        );
        let edit = results.next().unwrap();
        assert_eq!(edit["isError"], false, "{name}: {edit}");
        let path = format!("{name}.txt");
        assert_eq!(
            dir.read(&path),
            dir.read(&format!("{name}.edited")),
            "{name}: the edit changed bytes it was not asked to"
        );
        if let Some(foreign) = case["foreign"].as_str() {
            let refused = results.next().unwrap();
            assert_eq!(refused["isError"], true, "{name}: {refused}");
            let message = text(refused);
            let code = format!("U+{:04X}", u32::from(foreign.chars().next().unwrap()));
            let bare = shown.trim_end_matches(" with BOM");
            assert!(
                message.contains(&code) && message.contains(bare) && message.contains("line 1"),
                "{name}: {message}"
            );
            assert_eq!(dir.read(&path), dir.read(&format!("{name}.edited")));
        }
    }
    // A write over each file (seen by the session through its edit) keeps its encoding.
    let writes: Vec<Value> = cases
        .iter()
        .map(|case| {
            let path = format!("{}.txt", case["name"].as_str().unwrap());
            json!({"tool": "write", "args": {"path": path, "content": case["rewrite"]}})
        })
        .collect();
    let reads: Vec<Value> = cases
        .iter()
        .map(|case| json!({"tool": "read", "args": {"path": format!("{}.txt", case["name"].as_str().unwrap())}}))
        .collect();
    let results = dir.batch(&[reads, writes].concat());
    for (case, written) in cases.iter().zip(&results[cases.len()..]) {
        let name = case["name"].as_str().unwrap();
        assert_eq!(written["isError"], false, "{name}: {written}");
        assert_eq!(
            dir.read(&format!("{name}.txt")),
            dir.read(&format!("{name}.rewritten")),
            "{name}: write did not keep the encoding"
        );
    }
}

#[test]
fn write_takes_an_encoding_and_refuses_characters_it_lacks() {
    let dir = Dir::new();
    let script = r#"
import sys, os
d = sys.argv[1]
open(os.path.join(d, "expected.sjis"), "wb").write("新しいファイル\n".encode("shift_jis"))
open(os.path.join(d, "expected.u16"), "wb").write(b"\xff\xfe" + "wide ✓\n".encode("utf-16-le"))
"#;
    if python(
        "write_takes_an_encoding_and_refuses_characters_it_lacks",
        script,
        &[dir.cwd()],
    )
    .is_none()
    {
        return;
    }
    let results = dir.batch(&[
        json!({"tool": "write", "args": {"path": "new.txt", "content": "新しいファイル\n", "encoding": "Shift_JIS"}}),
        json!({"tool": "write", "args": {"path": "wide.txt", "content": "wide ✓\n", "encoding": "utf-16le"}}),
        json!({"tool": "write", "args": {"path": "latin.txt", "content": "ok\nthen 日\n", "encoding": "latin1"}}),
        json!({"tool": "write", "args": {"path": "odd.txt", "content": "x", "encoding": "klingon"}}),
    ]);
    assert_eq!(results[0]["isError"], false, "{}", results[0]);
    assert_eq!(dir.read("new.txt"), dir.read("expected.sjis"));
    assert_eq!(dir.read("wide.txt"), dir.read("expected.u16"));
    assert_eq!(
        text(&results[2]),
        "Could not write latin.txt: '日' (U+65E5) at line 2, column 6 cannot be written in windows-1252. Use characters windows-1252 has, or pass encoding \"utf-8\"."
    );
    assert!(!dir.path("latin.txt").exists());
    assert!(
        text(&results[3]).starts_with("Cannot write odd.txt: unknown encoding \"klingon\""),
        "{}",
        results[3]
    );
}

#[test]
fn a_weakly_guessed_file_is_refused_unchanged() {
    let dir = Dir::new();
    // UTF-8 text with one broken byte: a legacy guess would turn its é into mojibake.
    let mut broken = "naïve café, résumé\nsecond line\n".as_bytes().to_vec();
    broken.insert(6, 0xFF);
    dir.write("broken.txt", &broken);
    let results = dir.batch(&[
        json!({"tool": "read", "args": {"path": "broken.txt"}}),
        json!({"tool": "edit", "args": {"path": "broken.txt", "edits": [{"oldText": "second", "newText": "2nd"}]}}),
    ]);
    assert!(
        text(&results[0]).contains("[This file is not valid UTF-8"),
        "{}",
        results[0]
    );
    assert_eq!(results[1]["isError"], true);
    assert!(
        text(&results[1]).starts_with("Could not edit file: broken.txt. It is not valid UTF-8 text (invalid byte at offset 6), and its encoding cannot be told with confidence (it looks like UTF-8 with 1 invalid byte sequence(s)), so edit treats it as binary."),
        "{}",
        results[1]
    );
    assert_eq!(dir.read("broken.txt"), broken);
}

#[test]
fn grep_finds_matches_in_utf16_files_and_reports_them_decoded() {
    let dir = Dir::new();
    let script = r#"
import sys, os
d = sys.argv[1]
open(os.path.join(d, "le.txt"), "wb").write("\ufeffheader\r\nthe needle is here ✓\r\n".encode("utf-16-le"))
open(os.path.join(d, "be.txt"), "wb").write("\ufeffnothing\nanother needle 日本\n".encode("utf-16-be"))
"#;
    if python(
        "grep_finds_matches_in_utf16_files_and_reports_them_decoded",
        script,
        &[dir.cwd()],
    )
    .is_none()
    {
        return;
    }
    let (found, code) = dir.call("grep", json!({"pattern": "needle"}));
    assert_eq!(code, 0, "{found}");
    assert!(found.contains("be.txt:2: another needle 日本"), "{found}");
    assert!(found.contains("le.txt:2: the needle is here ✓"), "{found}");
}

#[test]
fn the_loose_rungs_match_in_decoded_text_and_keep_the_other_bytes() {
    let dir = Dir::new();
    let script = r#"
import sys, os
d = sys.argv[1]
text = "def salut():\r\n    print(“Ça va?”)   \r\n    return 'déjà'\r\n\r\nfin = “oui”\r\n"
edited = text.replace("print(“Ça va?”)", "print(“Ça va bien?”)").replace("    return 'déjà'", "    return 'été'")
open(os.path.join(d, "quotes.txt"), "wb").write(text.encode("cp1252"))
open(os.path.join(d, "expected.txt"), "wb").write(edited.encode("cp1252"))
"#;
    if python(
        "the_loose_rungs_match_in_decoded_text_and_keep_the_other_bytes",
        script,
        &[dir.cwd()],
    )
    .is_none()
    {
        return;
    }
    let results = dir.batch(&[
        json!({"tool": "edit", "args": {"path": "quotes.txt", "edits": [
            // Straight quotes for the file's curly ones: the normalised rung.
            {"oldText": "print(\"Ça va?\")", "newText": "print(“Ça va bien?”)"},
            // A tab for the file's four spaces: the whitespace rung.
            {"oldText": "\treturn 'déjà'", "newText": "\treturn 'été'"},
        ]}}),
    ]);
    assert_eq!(results[0]["isError"], false, "{}", results[0]);
    let tiers: Vec<&str> = results[0]["details"]["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tier"].as_str().unwrap())
        .collect();
    assert_eq!(tiers, ["normalized", "whitespace"]);
    assert_eq!(dir.read("quotes.txt"), dir.read("expected.txt"));
}
