use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{Confinement, FileSystem, FsErrorKind, LocalEnv, WriteStream};

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The plain local file system and a view confined to `dir`.
fn both(dir: &Path) -> [Arc<dyn FileSystem>; 2] {
    let plain: Arc<dyn FileSystem> = Arc::new(LocalEnv::new());
    let confined = Arc::new(LocalEnv::new()).confine(Confinement::new(vec![dir.to_path_buf()]));
    [plain, confined]
}

/// Runs a streamed write of `size` bytes to `path` while `send` feeds it.
async fn streamed<F, Fut>(
    fs: &Arc<dyn FileSystem>,
    path: &Path,
    size: u64,
    send: F,
) -> Result<(), crate::FsError>
where
    F: FnOnce(crate::WriteStreamSender) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (sender, stream) = WriteStream::channel(size, 4);
    let feeder = tokio::spawn(send(sender));
    let result = fs.write_atomic_streamed(path, stream).await;
    feeder.await.unwrap();
    result
}

/// 10 MiB and a bit, in chunks that do not divide the writeback slice.
fn content() -> Vec<u8> {
    (0..(10 << 20) + 12_345)
        .map(|i: u32| (i % 251) as u8)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_write_lands_whole_keeps_the_mode_and_leaves_no_temp_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let content = Arc::new(content());
    for (n, fs) in both(dir.path()).iter().enumerate() {
        let path = dir.path().join(format!("f{n}.bin"));
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let chunks = content.clone();
        streamed(fs, &path, content.len() as u64, |sender| async move {
            for chunk in chunks.chunks(700_001) {
                sender.send(chunk.to_vec()).await.unwrap();
            }
        })
        .await
        .unwrap();
        assert!(std::fs::read(&path).unwrap() == *content, "view {n}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640, "view {n}");
    }
    assert_eq!(names(dir.path()), ["f0.bin", "f1.bin"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_stops_early_or_runs_past_its_size_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("f.bin");
    std::fs::write(&path, "old").unwrap();
    for fs in both(dir.path()) {
        // The sender gone after 6 of 8 MiB (a lost connection, a cancel).
        let error = streamed(&fs, &path, 8 << 20, |sender| async move {
            for _ in 0..6 {
                sender.send(vec![b'n'; 1 << 20]).await.unwrap();
            }
        })
        .await
        .unwrap_err();
        assert_eq!(error.kind, FsErrorKind::Cancelled, "{error}");
        assert!(
            error.to_string().contains("6291456 of 8388608 bytes"),
            "{error}"
        );
        // Three chunks of 1.5 MiB for 4 MiB announced: the third runs past.
        let error = streamed(&fs, &path, 4 << 20, |sender| async move {
            for _ in 0..3 {
                if sender.send(vec![b'n'; 3 << 19]).await.is_err() {
                    break;
                }
            }
        })
        .await
        .unwrap_err();
        assert_eq!(error.kind, FsErrorKind::InvalidInput, "{error}");
        assert!(
            error.to_string().contains("ran past the 4194304 bytes"),
            "{error}"
        );
        // Exactly the size, then a byte more.
        let error = streamed(&fs, &path, 4 << 20, |sender| async move {
            for size in [4 << 20, 1] {
                if sender.send(vec![b'n'; size]).await.is_err() {
                    break;
                }
            }
        })
        .await
        .unwrap_err();
        assert_eq!(error.kind, FsErrorKind::InvalidInput, "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["f.bin"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_contents_are_written_in_slices_on_both_views() {
    let dir = tempfile::tempdir().unwrap();
    let content = content();
    for (n, fs) in both(dir.path()).iter().enumerate() {
        let path = dir.path().join(format!("f{n}.bin"));
        fs.write_atomic(&path, &content).await.unwrap();
        assert!(std::fs::read(&path).unwrap() == content, "view {n}");
    }
    assert_eq!(names(dir.path()), ["f0.bin", "f1.bin"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_in_parts_holds_their_concatenation_plain_and_confined() {
    let dir = tempfile::tempdir().unwrap();
    // Parts that straddle the writeback slices, and an empty one.
    let big: Vec<u8> = (0..super::SLICE + 12_345)
        .map(|i| (i % 251) as u8)
        .collect();
    let parts: [&[u8]; 4] = [&big[..100], b"middle", &[], &big[100..]];
    for (index, fs) in both(dir.path()).iter().enumerate() {
        let path = dir.path().join(format!("parts-{index}.bin"));
        std::fs::write(&path, b"old").unwrap();
        fs.write_atomic_parts(&path, &parts).await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), parts.concat());
        let small = dir.path().join(format!("small-{index}.txt"));
        fs.write_atomic_parts(&small, &[b"a", b"b"]).await.unwrap();
        assert_eq!(std::fs::read(&small).unwrap(), b"ab");
    }
    let mut left = names(dir.path());
    left.sort();
    assert_eq!(
        left,
        ["parts-0.bin", "parts-1.bin", "small-0.txt", "small-1.txt"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_write_in_parts_works_on_a_current_thread_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    for fs in both(dir.path()) {
        fs.write_atomic_parts(&path, &[b"x", b"yz"]).await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"xyz");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_write_renames_only_when_the_gate_opens() {
    let dir = tempfile::tempdir().unwrap();
    for (index, fs) in both(dir.path()).iter().enumerate() {
        let path = dir.path().join(format!("gated-{index}.txt"));
        std::fs::write(&path, b"old").unwrap();
        // Closed (the sender says no, or goes away): nothing changes, no temp file.
        for say in [Some(false), None] {
            let (gate, gated) = std::sync::mpsc::channel();
            match say {
                Some(open) => gate.send(open).unwrap(),
                None => drop(gate),
            }
            let error = fs
                .write_atomic_parts_gated(&path, &[b"new"], gated)
                .await
                .unwrap_err();
            assert_eq!(error.kind, FsErrorKind::Cancelled);
            assert_eq!(std::fs::read(&path).unwrap(), b"old");
        }
        // Opened from another thread while the write waits.
        let (gate, gated) = std::sync::mpsc::channel();
        let opener = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            gate.send(true).unwrap();
        });
        fs.write_atomic_parts_gated(&path, &[b"ne", b"w"], gated)
            .await
            .unwrap();
        opener.join().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }
    assert_eq!(names(dir.path()), ["gated-0.txt", "gated-1.txt"]);
}
