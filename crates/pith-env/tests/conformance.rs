//! The file-system conformance suite against every adapter.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pith_env::conformance::{Confined, Fixture, Report, run_all};
use pith_env::{FileSystem, LocalEnv, MemoryEnv};

struct Memory {
    env: MemoryEnv,
}

impl Fixture for Memory {
    fn fs(&self) -> Arc<dyn FileSystem> {
        Arc::new(self.env.clone())
    }

    fn root(&self) -> PathBuf {
        PathBuf::from("/home/user/suite")
    }

    fn symlink(&self, link: &Path, target: &Path) -> Result<(), String> {
        self.env
            .symlink(link, target)
            .map_err(|error| error.to_string())
    }

    fn set_mode(&self, path: &Path, mode: u32) -> Result<(), String> {
        self.env
            .set_mode(path, mode)
            .map_err(|error| error.to_string())
    }
}

struct Local {
    env: Arc<LocalEnv>,
    dir: tempfile::TempDir,
}

impl Fixture for Local {
    fn fs(&self) -> Arc<dyn FileSystem> {
        self.env.clone()
    }

    fn root(&self) -> PathBuf {
        self.dir.path().to_owned()
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

/// Runs the suite and fails with every failed check listed.
async fn run(fixture: &dyn Fixture) -> Report {
    let started = Instant::now();
    let report = run_all(fixture).await;
    assert!(report.is_success(), "{report}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the suite took {:?}: something hangs",
        started.elapsed()
    );
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_env_keeps_the_file_system_contract() {
    let env = MemoryEnv::new();
    let fixture = Memory { env };
    fixture.env.create_dir_all(&fixture.root()).await.unwrap();
    let report = run(&fixture).await;
    assert_eq!(report.passed.len(), 26);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_env_confined_keeps_the_file_system_contract() {
    let env = MemoryEnv::new();
    let fixture = Memory { env };
    fixture.env.create_dir_all(&fixture.root()).await.unwrap();
    let report = run(&Confined(&fixture)).await;
    assert_eq!(report.passed.len(), 26);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_env_confined_keeps_the_file_system_contract() {
    let fixture = Local {
        env: Arc::new(LocalEnv::new()),
        dir: tempfile::tempdir().unwrap(),
    };
    let report = run(&Confined(&fixture)).await;
    assert_eq!(report.passed.len(), 26);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_env_keeps_the_file_system_contract() {
    let fixture = Local {
        env: Arc::new(LocalEnv::new()),
        dir: tempfile::tempdir().unwrap(),
    };
    run(&fixture).await;
}

/// The local adapter confined by the component walk alone (no `openat2`).
struct LocalWalk {
    local: Local,
}

impl Fixture for LocalWalk {
    fn fs(&self) -> Arc<dyn FileSystem> {
        self.local
            .env
            .confine_by_walk(pith_env::Confinement::new(vec![self.local.root()]))
    }

    fn root(&self) -> PathBuf {
        self.local.root()
    }

    fn symlink(&self, link: &Path, target: &Path) -> Result<(), String> {
        self.local.symlink(link, target)
    }

    fn set_mode(&self, path: &Path, mode: u32) -> Result<(), String> {
        self.local.set_mode(path, mode)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_env_confined_by_the_walk_alone_keeps_the_file_system_contract() {
    let fixture = LocalWalk {
        local: Local {
            env: Arc::new(LocalEnv::new()),
            dir: tempfile::tempdir().unwrap(),
        },
    };
    let report = run(&fixture).await;
    assert_eq!(report.passed.len(), 26);
}

/// The search suite's fixture: an adapter's search port and the file system
/// its trees are built through.
struct Searching {
    search: Arc<dyn pith_env::Search>,
    fs: Arc<dyn FileSystem>,
    root: PathBuf,
}

impl pith_env::conformance::SearchFixture for Searching {
    fn search(&self) -> Arc<dyn pith_env::Search> {
        self.search.clone()
    }

    fn fs(&self) -> Arc<dyn FileSystem> {
        self.fs.clone()
    }

    fn root(&self) -> PathBuf {
        self.root.clone()
    }
}

#[tokio::test]
async fn memory_env_keeps_the_search_contract() {
    let env = MemoryEnv::new();
    let root = PathBuf::from("/home/user/search-suite");
    env.create_dir_all(&root).await.unwrap();
    let fixture = Searching {
        search: Arc::new(env.clone()),
        fs: Arc::new(env),
        root,
    };
    let report = pith_env::conformance::run_search(&fixture).await;
    assert!(report.is_success(), "{report}");
    assert_eq!(report.passed.len(), 15);
}

#[tokio::test]
async fn local_env_keeps_the_search_contract() {
    let dir = tempfile::TempDir::new().unwrap();
    let env = Arc::new(LocalEnv::new());
    let fixture = Searching {
        search: env.clone(),
        fs: env,
        root: std::fs::canonicalize(dir.path()).unwrap(),
    };
    let report = pith_env::conformance::run_search(&fixture).await;
    assert!(report.is_success(), "{report}");
    assert_eq!(report.passed.len(), 15);
}
