use std::path::Path;

use super::*;
use crate::FileKind;

fn path(text: &str) -> &Path {
    Path::new(text)
}

#[tokio::test]
async fn with_files_creates_parents_and_file_reads_back() {
    let env = MemoryEnv::with_files(&[("/a/b/c.txt", "one"), ("/a/d.txt", "two")]);
    assert_eq!(env.file("/a/b/c.txt"), Some(b"one".to_vec()));
    assert!(env.metadata(path("/a/b")).await.unwrap().is_dir());
    assert_eq!(env.file("/a/b"), None);
    assert_eq!(env.file("/missing"), None);
}

#[tokio::test]
async fn clones_share_files() {
    let env = MemoryEnv::new();
    let clone = env.clone();
    clone.write_atomic(path("/x"), b"shared").await.unwrap();
    assert_eq!(env.file("/x"), Some(b"shared".to_vec()));
}

#[tokio::test]
async fn relative_symlink_with_parent_steps_resolves_from_the_link_directory() {
    let env = MemoryEnv::with_files(&[("/w/real/f.txt", "x"), ("/w/links/.keep", "")]);
    env.symlink("/w/links/up", "../real").unwrap();
    assert_eq!(
        env.canonicalize(path("/w/links/up/f.txt")).await.unwrap(),
        path("/w/real/f.txt")
    );
    // `..` after a symlinked directory applies to the real path, as in POSIX.
    assert_eq!(
        env.canonicalize(path("/w/links/up/../real/f.txt"))
            .await
            .unwrap(),
        path("/w/real/f.txt")
    );
}

#[tokio::test]
async fn symlink_loops_and_dangling_links_give_typed_errors() {
    let env = MemoryEnv::with_files(&[("/w/.keep", "")]);
    env.symlink("/w/a", "b").unwrap();
    env.symlink("/w/b", "/w/a").unwrap();
    env.symlink("/w/dangling", "nowhere").unwrap();
    let error = env.read(path("/w/a")).await.unwrap_err();
    assert_eq!(error.kind, FsErrorKind::SymlinkLoop);
    assert_eq!(error.path, path("/w/a"));
    let error = env.metadata(path("/w/dangling")).await.unwrap_err();
    assert_eq!(error.kind, FsErrorKind::NotFound);
    let link = env.symlink_metadata(path("/w/dangling")).await.unwrap();
    assert_eq!(link.kind, FileKind::Symlink);
    // Writing through a dangling link creates its target, like open(O_CREAT).
    env.write_atomic(path("/w/dangling"), b"made")
        .await
        .unwrap();
    assert_eq!(env.file("/w/nowhere"), Some(b"made".to_vec()));
    assert_eq!(
        env.symlink("/w/a", "c").unwrap_err().kind,
        FsErrorKind::AlreadyExists
    );
}

#[tokio::test]
async fn open_stream_keeps_the_bytes_it_was_opened_with() {
    let env = MemoryEnv::with_files(&[("/f", "old bytes")]);
    let mut reader = env.open(path("/f")).await.unwrap();
    env.write_atomic(path("/f"), b"new").await.unwrap();
    let mut buf = [0u8; 64];
    let count = reader.read_chunk(&mut buf).await.unwrap();
    assert_eq!(&buf[..count], b"old bytes");
    assert_eq!(reader.read_chunk(&mut buf).await.unwrap(), 0);
}

#[tokio::test]
async fn relative_paths_are_invalid_input() {
    let env = MemoryEnv::new();
    let error = env.read(path("a.txt")).await.unwrap_err();
    assert_eq!(error.kind, FsErrorKind::InvalidInput);
    assert_eq!(error.path, path("a.txt"));
}

#[tokio::test]
async fn set_mode_follows_symlinks_and_modes_start_sensible() {
    let env = MemoryEnv::with_files(&[("/d/f", "x")]);
    env.symlink("/d/l", "f").unwrap();
    assert_eq!(env.metadata(path("/d/f")).await.unwrap().mode, Some(0o644));
    assert_eq!(env.metadata(path("/d")).await.unwrap().mode, Some(0o755));
    env.set_mode("/d/l", 0o700).unwrap();
    assert_eq!(env.metadata(path("/d/f")).await.unwrap().mode, Some(0o700));
    assert_eq!(
        env.set_mode("/d/missing", 0o700).unwrap_err().kind,
        FsErrorKind::NotFound
    );
}

#[tokio::test]
async fn root_and_home_behave() {
    let env = MemoryEnv::new();
    assert!(env.metadata(path("/")).await.unwrap().is_dir());
    assert_eq!(env.read_dir(path("/")).await.unwrap(), Vec::new());
    assert_eq!(
        env.write_atomic(path("/"), b"x").await.unwrap_err().kind,
        FsErrorKind::IsADirectory
    );
    assert_eq!(env.home_dir(), Some(PathBuf::from("/home/user")));
}

#[tokio::test]
async fn exec_is_unsupported() {
    let env = MemoryEnv::new();
    let mut sink = |_: crate::OutputStream, _: &[u8]| {};
    let result = env
        .exec(
            ExecRequest::new("/bin/sh", Vec::new(), "/"),
            &mut sink,
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(result, Err(ExecError::Unsupported)));
}
