//! The bash tool through the real binary: 2 GiB of output in bounded memory.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::run_measured;

#[test]
fn two_gib_of_output_completes_with_the_tail_shown_every_byte_saved_and_rss_bounded() {
    const TOTAL: u64 = 2 * 1024 * 1024 * 1024;
    let spill = tempfile::tempdir().unwrap();
    let line = "a".repeat(99);
    let args = json!({ "command": format!("yes {line} | head -c {TOTAL}") });
    let mut command = Command::new(env!("CARGO_BIN_EXE_pith"));
    command
        .args(["call", "--json", "bash", &args.to_string()])
        .env("TMPDIR", spill.path());
    let output = run_measured(command);
    let peak_kib = output.peak_kib;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let text = result["content"][0]["text"].as_str().unwrap();
    let path = result["details"]["fullOutputPath"].as_str().unwrap();
    assert!(text.starts_with(&format!("{line}\n")), "{}", &text[..200]);
    assert!(
        text.contains(&format!(". Full output: {path}]")),
        "{}",
        &text[text.len() - 300..]
    );
    // The file is capped on disk: the first and the last half GiB, and a notice between.
    let cap = pith_env::OUTPUT_CAP;
    let len = std::fs::metadata(path).unwrap().len();
    assert!(len > cap && len < cap + 512, "{len}");
    let mut notice = vec![0; 300];
    std::os::unix::fs::FileExt::read_exact_at(
        &std::fs::File::open(path).unwrap(),
        &mut notice,
        cap / 2,
    )
    .unwrap();
    let notice = String::from_utf8_lossy(&notice);
    assert!(
        notice.contains(&format!("bytes of {TOTAL} bytes of output")),
        "{notice}"
    );
    std::fs::remove_file(path).unwrap();
    assert!(peak_kib > 0, "VmHWM was never read");
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}
