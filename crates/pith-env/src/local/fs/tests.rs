use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::*;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[tokio::test]
async fn write_atomic_replaces_a_file_and_keeps_its_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.sh");
    fs::write(&path, "old").unwrap();
    fs::set_permissions(&path, Permissions::from_mode(0o751)).unwrap();
    LocalEnv::new().write_atomic(&path, b"new").await.unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(mode(&path), 0o751);
    let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temp file is left behind");
}

#[tokio::test]
async fn write_atomic_creates_new_files_with_the_usual_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.txt");
    LocalEnv::new().write_atomic(&path, b"x").await.unwrap();
    // 0o666 minus this process's umask, as open(2) gives: not the 0o600 of a bare temp file.
    assert_eq!(mode(&path), 0o666 & !umask(), "umask {:03o}", umask());
}

/// This process's umask, read from /proc (reading it with umask(2) would change it).
fn umask() -> u32 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("Umask:"))
        .unwrap();
    u32::from_str_radix(line.split_whitespace().nth(1).unwrap(), 8).unwrap()
}

#[tokio::test]
async fn write_atomic_writes_through_a_symlink_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.txt");
    let link = dir.path().join("link.txt");
    fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink("target.txt", &link).unwrap();
    LocalEnv::new().write_atomic(&link, b"new").await.unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "new");
}

#[tokio::test]
async fn write_atomic_refuses_a_directory_and_a_missing_parent() {
    let dir = tempfile::tempdir().unwrap();
    let env = LocalEnv::new();
    let error = env.write_atomic(dir.path(), b"x").await.unwrap_err();
    assert_eq!(error.kind, FsErrorKind::IsADirectory);
    let missing = dir.path().join("no/such/file.txt");
    let error = env.write_atomic(&missing, b"x").await.unwrap_err();
    assert_eq!(error.kind, FsErrorKind::NotFound);
    assert_eq!(error.path, missing);
}

#[tokio::test]
async fn reads_whole_ranged_and_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    fs::write(&path, "0123456789").unwrap();
    let env = LocalEnv::new();
    assert_eq!(env.read(&path).await.unwrap(), b"0123456789");
    assert_eq!(env.read_range(&path, 3, 4).await.unwrap(), b"3456");
    assert_eq!(env.read_range(&path, 8, 100).await.unwrap(), b"89");
    let mut reader = env.open(&path).await.unwrap();
    let mut all = Vec::new();
    let mut buf = [0u8; 3];
    loop {
        let n = reader.read_chunk(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        all.extend_from_slice(&buf[..n]);
    }
    assert_eq!(all, b"0123456789");
}

#[tokio::test]
async fn reading_a_directory_or_a_missing_file_is_a_typed_error_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let env = LocalEnv::new();
    let error = env.read(dir.path()).await.unwrap_err();
    assert_eq!(error.kind, FsErrorKind::IsADirectory);
    assert!(env.open(dir.path()).await.is_err());
    let missing = dir.path().join("missing");
    let error = env.read(&missing).await.unwrap_err();
    assert_eq!(error.kind, FsErrorKind::NotFound);
    assert_eq!(error.path, missing);
}

#[tokio::test]
async fn lists_stats_and_canonicalizes() {
    let dir = tempfile::tempdir().unwrap();
    let env = LocalEnv::new();
    env.create_dir_all(&dir.path().join("sub/deeper"))
        .await
        .unwrap();
    fs::write(dir.path().join("f"), "abc").unwrap();
    std::os::unix::fs::symlink("sub", dir.path().join("link")).unwrap();
    let mut entries = env.read_dir(dir.path()).await.unwrap();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let kinds: Vec<_> = entries
        .iter()
        .map(|e| (e.name.to_str().unwrap(), e.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("f", FileKind::File),
            ("link", FileKind::Symlink),
            ("sub", FileKind::Directory)
        ]
    );
    let link = dir.path().join("link");
    assert!(env.metadata(&link).await.unwrap().is_dir());
    assert_eq!(
        env.symlink_metadata(&link).await.unwrap().kind,
        FileKind::Symlink
    );
    assert_eq!(env.metadata(&dir.path().join("f")).await.unwrap().len, 3);
    let real = env.canonicalize(&link.join("deeper")).await.unwrap();
    assert_eq!(
        real,
        fs::canonicalize(dir.path()).unwrap().join("sub/deeper")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_reader_sees_the_old_or_the_new_bytes_never_a_mixture() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let versions = [vec![b'a'; 1 << 20], vec![b'b'; 1 << 20]];
    fs::write(&path, &versions[0]).unwrap();
    let env = std::sync::Arc::new(LocalEnv::new());
    let writer = {
        let (env, path, versions) = (env.clone(), path.clone(), versions.clone());
        tokio::spawn(async move {
            for round in 0..40 {
                env.write_atomic(&path, &versions[round % 2]).await.unwrap();
            }
        })
    };
    while !writer.is_finished() {
        let seen = env.read(&path).await.unwrap();
        assert!(
            seen == versions[0] || seen == versions[1],
            "a torn read of {} bytes",
            seen.len()
        );
    }
    writer.await.unwrap();
}

/// On a multi-threaded runtime the write runs in place (no copy of the content): the
/// plain and the confined file system still write every byte, atomically.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_atomic_in_place_on_a_multi_threaded_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let content: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let plain = dir.path().join("plain.bin");
    fs::write(&plain, "old").unwrap();
    LocalEnv::new()
        .write_atomic(&plain, &content)
        .await
        .unwrap();
    assert!(fs::read(&plain).unwrap() == content, "plain write differs");
    let confined = std::sync::Arc::new(LocalEnv::new())
        .confine(Confinement::new(vec![dir.path().to_path_buf()]));
    let inside = dir.path().join("confined.bin");
    confined.write_atomic(&inside, &content).await.unwrap();
    assert!(
        fs::read(&inside).unwrap() == content,
        "confined write differs"
    );
    let outside = tempfile::tempdir().unwrap();
    let error = confined
        .write_atomic(&outside.path().join("x"), b"x")
        .await
        .unwrap_err();
    assert_eq!(error.kind, FsErrorKind::OutsideRoots);
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temp file left"
    );
}

#[test]
fn canonicalize_by_handle_answers_as_realpath_does() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    fs::create_dir(&real).unwrap();
    fs::write(real.join("f.txt"), "x").unwrap();
    std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
    std::os::unix::fs::symlink("nowhere", dir.path().join("dangling")).unwrap();
    for path in [
        dir.path().join("link/f.txt"),
        dir.path().join("link/../real/./f.txt"),
        dir.path().join("link"),
        dir.path().to_path_buf(),
        // Spelled as a real path: answered without asking for the handle's path.
        fs::canonicalize(dir.path()).unwrap().join("real/f.txt"),
        fs::canonicalize(dir.path()).unwrap().join("real"),
        PathBuf::from("/"),
    ] {
        assert_eq!(
            canonicalize_by_handle(&path).unwrap(),
            fs::canonicalize(&path).unwrap(),
            "{}",
            path.display()
        );
    }
    for (path, kind) in [
        (dir.path().join("link/missing"), FsErrorKind::NotFound),
        (dir.path().join("dangling"), FsErrorKind::NotFound),
        (dir.path().join("link/f.txt/x"), FsErrorKind::NotADirectory),
        (dir.path().join("real/missing"), FsErrorKind::NotFound),
        (dir.path().join("real/f.txt/x"), FsErrorKind::NotADirectory),
    ] {
        assert_eq!(
            canonicalize_by_handle(&path).unwrap_err().kind,
            kind,
            "{}",
            path.display()
        );
    }
}

/// A lookup beneath a root that crosses into another mount (here `/dev/shm`, a
/// tmpfs mounted on `/dev`) stops in place with `EXDEV` and is answered by the
/// full resolution on the blocking pool: the same answers as any other path.
#[tokio::test]
async fn the_confined_view_answers_for_a_path_across_a_mount_inside_its_root() {
    use std::os::unix::fs::MetadataExt;
    let test = "the_confined_view_answers_for_a_path_across_a_mount_inside_its_root";
    let (Ok(outer), Ok(inner)) = (fs::metadata("/dev"), fs::metadata("/dev/shm")) else {
        return pith_testkit::skip(test, pith_testkit::Prerequisite::Other, "no /dev/shm");
    };
    if outer.dev() == inner.dev() {
        return pith_testkit::skip(
            test,
            pith_testkit::Prerequisite::Other,
            "/dev/shm is not a mount of its own here",
        );
    }
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = dir.path().join("f.txt");
    fs::write(&file, "across\n").unwrap();
    let view = std::sync::Arc::new(LocalEnv::new())
        .confine(crate::Confinement::new(vec![PathBuf::from("/dev")]));
    assert_eq!(view.metadata(&file).await.unwrap().len, 7);
    assert_eq!(
        view.canonicalize(&file).await.unwrap(),
        fs::canonicalize(&file).unwrap()
    );
    let mut reader = view.open(&file).await.unwrap();
    let mut buf = [0u8; 16];
    let read = reader.read_chunk(&mut buf).await.unwrap();
    assert_eq!(&buf[..read], b"across\n");
    assert_eq!(
        view.metadata(&dir.path().join("missing"))
            .await
            .unwrap_err()
            .kind,
        FsErrorKind::NotFound
    );
}
