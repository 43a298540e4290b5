//! LocalEnv's own exec behaviour (the far side's output logs report a failure
//! at the next write, so this runs on LocalEnv only).

use pith_env::{Exec, LocalEnv};

#[tokio::test]
async fn output_log_is_a_new_file_with_the_prefix() {
    let env = LocalEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let mut log = env.create_output_log(dir.path(), "pith-bash-").unwrap();
    log.write_all(b"abc").unwrap();
    log.write_all(b"def").unwrap();
    let path = log.path().to_path_buf();
    drop(log);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("pith-bash-") && name.ends_with(".log"),
        "{name}"
    );
    assert_eq!(name.len(), "pith-bash-".len() + 16 + 4);
    assert_eq!(std::fs::read(&path).unwrap(), b"abcdef");
    let error = env
        .create_output_log(&dir.path().join("missing"), "x-")
        .err()
        .unwrap();
    assert!(error.to_string().contains("missing"), "{error}");
}
