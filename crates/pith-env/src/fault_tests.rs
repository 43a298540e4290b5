use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Fault, FaultError, Faults, FaultyEnv, FaultyFs, Fired, Operation};
use crate::conformance::{Fixture, run_all};
use crate::{
    Env, ExecError, ExecRequest, FileSystem, FindRequest, FsErrorKind, GrepRequest, LocalEnv,
    MemoryEnv, OutputStream, SearchError,
};

fn path(text: &str) -> &Path {
    Path::new(text)
}

fn memory() -> (FaultyEnv, MemoryEnv) {
    let memory = MemoryEnv::with_files(&[("/w/a.txt", "old\n")]);
    (FaultyEnv::new(Env::memory(memory.clone())), memory)
}

#[tokio::test]
async fn fails_only_the_nth_watched_operation() {
    let (faulty, _) = memory();
    let fs = faulty.env().fs;
    faulty.inject(
        Fault::on(Operation::Read)
            .nth(2)
            .fs(FsErrorKind::PermissionDenied),
    );
    fs.metadata(path("/w/a.txt")).await.unwrap();
    fs.read(path("/w/a.txt")).await.unwrap();
    let error = fs.read(path("/w/a.txt")).await.unwrap_err();
    assert_eq!(error.kind, FsErrorKind::PermissionDenied);
    assert_eq!(error.path, path("/w/a.txt"));
    fs.read(path("/w/a.txt")).await.unwrap();
    assert_eq!(
        faulty.operations(),
        [
            Operation::Metadata,
            Operation::Read,
            Operation::Read,
            Operation::Read
        ]
    );
    assert_eq!(
        faulty.faults().fired(),
        [Fired {
            operation: Operation::Read,
            path: PathBuf::from("/w/a.txt"),
            error: FaultError::Fs(FsErrorKind::PermissionDenied),
        }]
    );
}

#[tokio::test]
async fn a_fault_before_leaves_the_file_and_one_after_writes_it() {
    let (faulty, memory) = memory();
    let fs = faulty.env().fs;
    faulty.inject(Fault::on(Operation::WriteAtomic).fs(FsErrorKind::NoSpace));
    let error = fs
        .write_atomic(path("/w/a.txt"), b"new\n")
        .await
        .unwrap_err();
    assert_eq!(error.kind, FsErrorKind::NoSpace);
    assert_eq!(memory.file("/w/a.txt").as_deref(), Some(&b"old\n"[..]));

    faulty.reset();
    faulty.inject(Fault::on(Operation::WriteAtomic).after());
    let error = fs
        .write_atomic(path("/w/a.txt"), b"new\n")
        .await
        .unwrap_err();
    assert_eq!(error.kind, FsErrorKind::Other);
    assert!(error.to_string().contains("/w/a.txt"), "{error}");
    assert_eq!(memory.file("/w/a.txt").as_deref(), Some(&b"new\n"[..]));
}

#[tokio::test]
async fn a_persistent_fault_fails_every_watched_operation_from_the_nth() {
    let (faulty, _) = memory();
    let fs = faulty.env().fs;
    faulty.inject(
        Fault::on_any(&[Operation::Metadata, Operation::Canonicalize])
            .nth(2)
            .persistent(),
    );
    assert!(fs.metadata(path("/w")).await.is_ok());
    assert!(fs.read(path("/w/a.txt")).await.is_ok());
    assert!(fs.canonicalize(path("/w")).await.is_err());
    assert!(fs.metadata(path("/w")).await.is_err());
    assert!(fs.metadata(path("/w")).await.is_err());
}

#[tokio::test]
async fn an_empty_operation_list_watches_everything() {
    let (faulty, _) = memory();
    let fs = faulty.env().fs;
    faulty.inject(Fault::on_any(&[]).nth(3).fs(FsErrorKind::ReadOnly));
    fs.metadata(path("/w")).await.unwrap();
    fs.read_dir(path("/w")).await.unwrap();
    let error = fs.create_dir_all(path("/w/new")).await.unwrap_err();
    assert_eq!(error.kind, FsErrorKind::ReadOnly);
    assert_eq!(error.path, path("/w/new"));
}

#[tokio::test]
async fn each_streamed_chunk_is_an_operation() {
    let (faulty, _) = memory();
    let fs = faulty.env().fs;
    faulty.inject(Fault::on(Operation::ReadChunk).nth(2));
    let mut reader = fs.open(path("/w/a.txt")).await.unwrap();
    let mut buf = [0u8; 2];
    assert_eq!(reader.read_chunk(&mut buf).await.unwrap(), 2);
    let error = reader.read_chunk(&mut buf).await.unwrap_err();
    assert_eq!(error.path, path("/w/a.txt"));
    assert_eq!(reader.read_chunk(&mut buf).await.unwrap(), 2);
    assert_eq!(reader.read_chunk(&mut buf).await.unwrap(), 0);
}

#[tokio::test]
async fn exec_faults_become_exec_errors_naming_the_program_or_directory() {
    let dir = tempfile::tempdir().unwrap();
    let faulty = FaultyEnv::new(Env::local());
    let exec = faulty.env().exec;
    let request = || ExecRequest::new("/bin/sh", vec!["-c".into(), "echo hi".into()], dir.path());
    let mut output = Vec::new();
    let mut sink = |_: OutputStream, bytes: &[u8]| output.extend_from_slice(bytes);

    faulty.inject(Fault::on(Operation::Exec).error(FaultError::MissingCwd));
    let error = exec
        .exec(request(), &mut sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, ExecError::MissingCwd(ref cwd) if cwd == dir.path()));

    faulty.inject(Fault::on(Operation::Exec).fs(FsErrorKind::NoSpace));
    let error = exec
        .exec(request(), &mut sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("/bin/sh"), "{error}");

    let outcome = exec
        .exec(request(), &mut sink, CancellationToken::new())
        .await
        .unwrap();
    assert!(outcome.status.success());
    assert_eq!(output, b"hi\n");
}

#[tokio::test]
async fn output_log_faults_name_the_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let faulty = FaultyEnv::new(Env::local());
    let exec = faulty.env().exec;
    faulty.inject(Fault::on(Operation::CreateOutputLog).error(FaultError::ShellNotFound));
    assert!(exec.create_output_log(dir.path(), "pith-").is_err());
    faulty.inject(Fault::on(Operation::OutputLogWrite).fs(FsErrorKind::NoSpace));
    let mut log = exec.create_output_log(dir.path(), "pith-").unwrap();
    let error = log.write_all(b"x").unwrap_err();
    let text = error.to_string();
    assert!(text.contains(&*log.path().to_string_lossy()), "{text}");
    log.write_all(b"y").unwrap();
    assert_eq!(std::fs::read(log.path()).unwrap(), b"y");
}

#[tokio::test]
async fn search_faults_become_search_errors() {
    let (faulty, _) = memory();
    let search = faulty.env().search;
    faulty.inject(Fault::on(Operation::Grep).error(FaultError::SearchNotFound));
    faulty.inject(Fault::on(Operation::Find).fs(FsErrorKind::PermissionDenied));
    let grep = GrepRequest {
        pattern: "old".into(),
        root: PathBuf::from("/w"),
        glob: None,
        ignore_case: false,
        literal: false,
        context: 0,
        limit: 10,
    };
    let find = FindRequest {
        pattern: "*.txt".into(),
        root: PathBuf::from("/w"),
        limit: 10,
    };
    let cancel = CancellationToken::new;
    assert!(matches!(
        search.grep(grep.clone(), cancel()).await,
        Err(SearchError::NotFound(_))
    ));
    assert!(matches!(
        search.find(find.clone(), cancel()).await,
        Err(SearchError::Fs(ref error)) if error.kind == FsErrorKind::PermissionDenied
    ));
    assert_eq!(search.grep(grep, cancel()).await.unwrap().match_count, 1);
    assert_eq!(search.find(find, cancel()).await.unwrap().entries.len(), 1);
}

struct Wrapped {
    local: Arc<LocalEnv>,
    dir: tempfile::TempDir,
}

impl Fixture for Wrapped {
    fn fs(&self) -> Arc<dyn FileSystem> {
        Arc::new(FaultyFs::new(self.local.clone(), Faults::new()))
    }

    fn root(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    fn symlink(&self, link: &Path, target: &Path) -> Result<(), String> {
        std::os::unix::fs::symlink(target, link).map_err(|error| error.to_string())
    }

    fn set_mode(&self, path: &Path, mode: u32) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|error| error.to_string())
    }
}

#[tokio::test]
async fn without_faults_the_wrapper_keeps_the_whole_contract() {
    let fixture = Wrapped {
        local: Arc::new(LocalEnv::new()),
        dir: tempfile::tempdir().unwrap(),
    };
    let report = run_all(&fixture).await;
    assert!(report.is_success(), "{report}");
}
