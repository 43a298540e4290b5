//! The undo journal and apply_patch through `pith batch` and `pith undo`.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

fn pith(state: &Path, cwd: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(args)
        .arg("--cwd")
        .arg(cwd)
        .env("XDG_STATE_HOME", state)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_batch_is_one_undo_group_and_pith_undo_restores_its_bytes_then_redoes() {
    let dir = TempDir::new().unwrap();
    let work = fs::canonicalize(dir.path()).unwrap().join("work");
    let state = dir.path().join("state");
    fs::create_dir_all(&work).unwrap();
    let crlf = b"\xEF\xBB\xBFkeep\r\nold\r\n";
    fs::write(work.join("crlf.txt"), crlf).unwrap();
    fs::write(work.join("gone.txt"), "bye\n").unwrap();
    let patch = "*** Begin Patch\\n*** Add File: new.txt\\n+fresh\\n*** Delete File: gone.txt\\n*** End Patch";
    let batch = format!(
        "{}\n{}\n",
        r#"{"id":1,"tool":"edit","args":{"path":"crlf.txt","edits":[{"oldText":"old","newText":"new"}]}}"#,
        format_args!(r#"{{"id":2,"tool":"apply_patch","args":{{"patch":"{patch}"}}}}"#),
    );
    let output = pith(
        &state,
        &work,
        &["batch", "--tools", "read,edit,write,apply_patch"],
        &batch,
    );
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(!out.contains("\"isError\":true"), "{out}");
    assert_eq!(
        fs::read(work.join("crlf.txt")).unwrap(),
        b"\xEF\xBB\xBFkeep\r\nnew\r\n"
    );
    assert!(!work.join("gone.txt").exists());

    let list = text(&pith(&state, &work, &["undo", "--list"], ""));
    assert_eq!(list.lines().count(), 3, "{list}");
    let groups: Vec<&str> = list
        .lines()
        .map(|line| {
            line.split("group ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
        })
        .collect();
    assert!(groups.iter().all(|group| *group == groups[0]), "{list}");

    let dry = text(&pith(&state, &work, &["undo", "--dry-run"], ""));
    assert!(dry.contains("would be removed (it was created)"), "{dry}");
    assert!(dry.contains("-new") && dry.contains("+old"), "{dry}");
    assert!(work.join("new.txt").exists());

    let undo = pith(&state, &work, &["undo"], "");
    assert!(undo.status.success(), "{}", text(&undo));
    assert!(fs::read(work.join("crlf.txt")).unwrap() == crlf);
    assert_eq!(fs::read_to_string(work.join("gone.txt")).unwrap(), "bye\n");
    assert!(!work.join("new.txt").exists());

    let redo = pith(&state, &work, &["undo"], "");
    assert!(redo.status.success(), "{}", text(&redo));
    assert_eq!(
        fs::read(work.join("crlf.txt")).unwrap(),
        b"\xEF\xBB\xBFkeep\r\nnew\r\n"
    );
    assert!(work.join("new.txt").exists());
    assert!(!work.join("gone.txt").exists());
}

#[test]
fn pith_undo_refuses_a_file_changed_since_and_exits_1() {
    let dir = TempDir::new().unwrap();
    let work = fs::canonicalize(dir.path()).unwrap().join("work");
    let state = dir.path().join("state");
    fs::create_dir_all(&work).unwrap();
    let write = r#"{"id":1,"tool":"write","args":{"path":"a.txt","content":"mine\n"}}"#;
    let output = pith(&state, &work, &["batch"], &format!("{write}\n"));
    assert!(output.status.success());
    fs::write(work.join("a.txt"), "theirs\n").unwrap();
    let refused = pith(&state, &work, &["undo"], "");
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("Undo refused"), "{stderr}");
    assert_eq!(fs::read_to_string(work.join("a.txt")).unwrap(), "theirs\n");
    let forced = pith(&state, &work, &["undo", "--force"], "");
    assert!(forced.status.success());
    assert!(!work.join("a.txt").exists());
}

#[test]
fn no_journal_turns_undo_off() {
    let dir = TempDir::new().unwrap();
    let work = fs::canonicalize(dir.path()).unwrap();
    let output = pith(&work.join("state"), &work, &["undo", "--no-journal"], "");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--no-journal"));
}

#[test]
fn an_edit_of_a_large_file_is_journaled_by_its_hashes_and_undone_exactly() {
    let dir = TempDir::new().unwrap();
    let work = fs::canonicalize(dir.path()).unwrap().join("work");
    let state = dir.path().join("state");
    fs::create_dir_all(&work).unwrap();
    // 3 MiB: the previous content is hashed beside the engine, the new one from the
    // first changed byte (past the first 1 MiB checkpoint), the write beside the diff.
    let old: String = (0..60_000)
        .map(|n| format!("line {n:06} {}\n", "x".repeat(40)))
        .collect();
    fs::write(work.join("big.txt"), &old).unwrap();
    let call =
        r#"{"path":"big.txt","edits":[{"oldText":"line 030000 ","newText":"the middle line "}]}"#;
    let edited = pith(&state, &work, &["call", "edit", call], "");
    assert!(edited.status.success(), "{}", text(&edited));
    assert_eq!(
        text(&edited).trim_end(),
        "Successfully replaced 1 block(s) in big.txt."
    );
    let new = old.replacen("line 030000 ", "the middle line ", 1);
    assert!(fs::read_to_string(work.join("big.txt")).unwrap() == new);
    // The journal's new-content hash is the file's: undo finds it unchanged since.
    let undo = pith(&state, &work, &["undo"], "");
    assert!(undo.status.success(), "{}", text(&undo));
    assert!(fs::read_to_string(work.join("big.txt")).unwrap() == old);
    let redo = pith(&state, &work, &["undo"], "");
    assert!(redo.status.success(), "{}", text(&redo));
    assert!(fs::read_to_string(work.join("big.txt")).unwrap() == new);
}

#[test]
fn an_undo_in_a_batch_sees_every_change_that_arrived_before_it() {
    // The writes' journal entries are made while the undo waits: it must
    // read the journal only after them, every time (it used to read it on
    // arrival and, about half the time, found nothing of this batch).
    for trial in 0..12 {
        let dir = TempDir::new().unwrap();
        let work = fs::canonicalize(dir.path()).unwrap().join("work");
        let state = dir.path().join("state");
        fs::create_dir_all(&work).unwrap();
        fs::write(work.join("a.txt"), "orig\n").unwrap();
        let batch = [
            r#"{"id":0,"tool":"read","args":{"path":"a.txt"}}"#,
            r#"{"id":1,"tool":"write","args":{"path":"a.txt","content":"one\n"}}"#,
            r#"{"id":2,"tool":"write","args":{"path":"b.txt","content":"B\n"}}"#,
            r#"{"id":3,"tool":"edit","args":{"path":"a.txt","edits":[{"oldText":"one","newText":"two"}]}}"#,
            r#"{"id":4,"tool":"undo","args":{"last":1}}"#,
        ]
        .join("\n");
        let output = pith(
            &state,
            &work,
            &["batch", "--tools", "read,write,edit,undo"],
            &format!("{batch}\n"),
        );
        let out = text(&output);
        assert!(output.status.success(), "trial {trial}: {out}");
        assert!(!out.contains("\"isError\":true"), "trial {trial}: {out}");
        assert_eq!(
            fs::read_to_string(work.join("a.txt")).unwrap(),
            "orig\n",
            "trial {trial}: {out}"
        );
        assert!(!work.join("b.txt").exists(), "trial {trial}: {out}");
    }
}
