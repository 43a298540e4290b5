//! Writes streamed into the far side's temp file: a write dropped mid-stream
//! and a far disk that fills up.

use std::path::Path;
use std::time::Duration;

use pith_env::{FileSystem, FsErrorKind};
use pith_testkit::{Prerequisite, skip};

use super::connect;
use super::faults::RELAY;

/// The names in `dir` as the far side sees it.
async fn far_names(remote: &pith_env::RemoteEnv, dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = remote
        .read_dir(dir)
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.name.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A write whose future is dropped while its data is on the way (between
/// frames or in the middle of one, at delays from 0 to 90 ms): the file is
/// the old bytes or the new, never torn, no temp file is left, and the next
/// call works (on the same connection, or a new one when a frame was torn).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_dropped_mid_stream_leaves_old_or_new_bytes_no_temp_file_and_calls_go_on() {
    let remote = connect(RELAY).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("target.bin");
    let new = std::sync::Arc::new(vec![b'n'; 48 << 20]);
    let mut old_seen = 0;
    for round in 0..8_u64 {
        let old = format!("old {round}").into_bytes();
        std::fs::write(&path, &old).unwrap();
        remote.metadata(dir.path()).await.unwrap();
        let writer = {
            let (remote, path, new) = (remote.clone(), path.clone(), new.clone());
            tokio::spawn(async move { remote.write_atomic(&path, &new).await })
        };
        tokio::time::sleep(Duration::from_millis(round * 12)).await;
        writer.abort();
        let _ = writer.await;
        // The next call answers (reconnecting if the drop tore a frame); by
        // then a cancelled write has failed on the far side.
        remote.metadata(dir.path()).await.unwrap();
        let mut contents = std::fs::read(&path).unwrap();
        for _ in 0..100 {
            // A write whose bytes all arrived runs to its end: wait for it.
            if contents == old || contents == *new {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            contents = std::fs::read(&path).unwrap();
        }
        assert!(
            contents == old || contents == *new,
            "round {round}: torn file of {} bytes",
            contents.len()
        );
        old_seen += usize::from(contents == old);
        let mut names = Vec::new();
        for _ in 0..100 {
            names = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect::<Vec<_>>();
            if names == ["target.bin"] {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(names, ["target.bin"], "round {round}: a temp file was left");
    }
    assert!(old_seen > 0, "no write was dropped before its end");
    // A whole write still lands.
    remote.write_atomic(&path, &new).await.unwrap();
    assert!(std::fs::read(&path).unwrap() == *new);
}

/// The far side writes into a 4 MiB file system (a tmpfs mounted in the far
/// side's own mount namespace by the transport): an 8 MiB write fails with
/// "no space left", the old file stays, no temp file is left, and the
/// connection serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_far_disk_fails_the_write_clearly_and_leaves_the_old_file_and_no_temp_file() {
    const TEST: &str =
        "a_full_far_disk_fails_the_write_clearly_and_leaves_the_old_file_and_no_temp_file";
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let probe = std::process::Command::new("unshare")
        .args([
            "-rm",
            "sh",
            "-c",
            "mount -t tmpfs -o size=4m pith-full \"$0\"",
        ])
        .arg(&small)
        .output();
    if !probe.is_ok_and(|output| output.status.success()) {
        skip(
            TEST,
            Prerequisite::UserNamespaces,
            "cannot mount a tmpfs in a new user and mount namespace (`unshare -rm`)",
        );
        return;
    }
    let prefix = format!(
        "unshare -rm sh -c 'mount -t tmpfs -o size=4m pith-full {} && exec \"$@\"' full",
        small.display()
    );
    let remote = connect(&prefix).await;
    let path = small.join("f.bin");
    remote.write_atomic(&path, b"old").await.unwrap();
    let error = remote
        .write_atomic(&path, &vec![b'n'; 8 << 20])
        .await
        .unwrap_err();
    assert_eq!(error.kind, FsErrorKind::NoSpace, "{error}");
    assert!(error.to_string().contains("no space left"), "{error}");
    assert!(error.to_string().contains("f.bin"), "{error}");
    assert_eq!(remote.read(&path).await.unwrap(), b"old");
    assert_eq!(far_names(&remote, &small).await, ["f.bin"]);
    // The same connection writes what fits.
    remote
        .write_atomic(&path, &vec![b'm'; 1 << 20])
        .await
        .unwrap();
    assert_eq!(remote.read(&path).await.unwrap().len(), 1 << 20);
    assert_eq!(far_names(&remote, &small).await, ["f.bin"]);
}
