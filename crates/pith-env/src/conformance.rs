//! The file-system conformance suite: behaviour every [`FileSystem`]
//! adapter keeps, written once and run against each adapter.
//!
//! An adapter's test implements [`Fixture`] (the adapter, an empty directory
//! to work in, and the two things the port cannot do itself: create a symlink
//! and change permission bits) and calls [`run_all`]. Every check runs in its
//! own subdirectory, named after the check, so a failure in one does not
//! cascade into the others; the [`Report`] names each failed check and says
//! what went wrong.
//!
//! ```no_run
//! # async fn demo() {
//! use std::path::{Path, PathBuf};
//! use std::sync::Arc;
//! use pith_env::conformance::{run_all, Fixture};
//! use pith_env::{FileSystem, MemoryEnv};
//!
//! struct Memory(MemoryEnv);
//!
//! impl Fixture for Memory {
//!     fn fs(&self) -> Arc<dyn FileSystem> {
//!         Arc::new(self.0.clone())
//!     }
//!     fn root(&self) -> PathBuf {
//!         PathBuf::from("/suite")
//!     }
//!     fn symlink(&self, link: &Path, target: &Path) -> Result<(), String> {
//!         self.0.symlink(link, target).map_err(|error| error.to_string())
//!     }
//!     fn set_mode(&self, path: &Path, mode: u32) -> Result<(), String> {
//!         self.0.set_mode(path, mode).map_err(|error| error.to_string())
//!     }
//! }
//!
//! let env = MemoryEnv::new();
//! env.create_dir_all(Path::new("/suite")).await.unwrap();
//! let report = run_all(&Memory(env)).await;
//! assert!(report.is_success(), "{report}");
//! # }
//! ```
//!
//! Checks (each name is the subdirectory it works in):
//! - read: `write_then_read`, `read_range_windows`, `open_streams_in_chunks`,
//!   `count_lines_reads_past_between_reads`;
//! - write: `write_atomic_replaces_whole_under_concurrent_reads`,
//!   `write_atomic_keeps_permissions`, `write_atomic_writes_through_symlinks`,
//!   `write_atomic_needs_an_existing_parent`, `write_atomic_leaves_no_temp_files`;
//! - splice: `write_spliced_replaces_ranges`, `write_spliced_refuses_bad_ranges`;
//! - tree: `metadata_follows_symlinks`, `read_dir_lists_names_and_kinds`,
//!   `read_dir_first_pages_in_key_order`, `canonicalize_resolves_symlinks`, `create_dir_all_is_nested_and_idempotent`,
//!   `home_dir_is_absolute`, `remove_dir_refuses_a_non_empty_directory`,
//!   `remove_file_unlinks_a_file_or_a_link_never_its_target`;
//! - errors: `missing_paths_are_not_found`, `directories_are_not_files`,
//!   `files_are_not_directories`, `symlink_loops_are_reported`;
//! - confine: `confined_refuses_paths_outside_the_roots`,
//!   `confined_follows_symlinks_beneath_the_root`,
//!   `confined_write_guard_judges_the_resolved_path`.
//!
//! [`Confined`] wraps a fixture so that the whole suite runs again through a
//! view confined to the fixture's root: a confined view keeps every promise
//! of the port.
//!
//! The [`Search`](crate::Search) port has its own suite, [`run_search`] with
//! a [`SearchFixture`]: grep and find cases every adapter answers the same way.

mod confine;
mod errors;
mod read;
mod search;
mod splice;
mod tree;
mod write;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::{FileSystem, FsError, FsErrorKind};

pub use self::search::{SearchFixture, run_search};

/// A check that has not finished after this long has failed (it would hang).
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// What the suite needs from the adapter under test.
pub trait Fixture: Send + Sync {
    /// The adapter under test.
    fn fs(&self) -> Arc<dyn FileSystem>;

    /// An existing, empty directory (absolute) the suite may write in.
    fn root(&self) -> PathBuf;

    /// Creates a symbolic link at `link` pointing to `target`, stored exactly
    /// as given (relative targets resolve from the link's directory).
    fn symlink(&self, link: &Path, target: &Path) -> Result<(), String>;

    /// Sets the permission bits of `path` (like `chmod`).
    fn set_mode(&self, path: &Path, mode: u32) -> Result<(), String>;
}

/// A fixture whose adapter is the inner fixture's, confined to its root.
pub struct Confined<'a>(pub &'a dyn Fixture);

impl Fixture for Confined<'_> {
    fn fs(&self) -> Arc<dyn FileSystem> {
        self.0
            .fs()
            .confine(crate::Confinement::new(vec![self.0.root()]))
    }

    fn root(&self) -> PathBuf {
        self.0.root()
    }

    fn symlink(&self, link: &Path, target: &Path) -> Result<(), String> {
        self.0.symlink(link, target)
    }

    fn set_mode(&self, path: &Path, mode: u32) -> Result<(), String> {
        self.0.set_mode(path, mode)
    }
}

/// One failed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The check's name.
    pub check: &'static str,
    /// What went wrong.
    pub message: String,
}

/// The outcome of [`run_all`]. Its `Display` lists every failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Checks that passed, in run order.
    pub passed: Vec<&'static str>,
    /// Checks that failed, in run order.
    pub failures: Vec<Failure>,
}

impl Report {
    /// Whether every check passed.
    pub fn is_success(&self) -> bool {
        self.failures.is_empty()
    }

    fn record(&mut self, check: &'static str, result: CheckResult) {
        match result {
            Ok(()) => self.passed.push(check),
            Err(message) => self.failures.push(Failure { check, message }),
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.passed.len() + self.failures.len();
        writeln!(
            f,
            "{} of {total} conformance checks failed",
            self.failures.len()
        )?;
        for failure in &self.failures {
            writeln!(f, "- {}: {}", failure.check, failure.message)?;
        }
        Ok(())
    }
}

/// Runs every check against the fixture's adapter.
pub async fn run_all(fixture: &dyn Fixture) -> Report {
    let mut report = Report::default();
    macro_rules! run {
        ($($module:ident :: $check:ident),* $(,)?) => {$(
            let name = stringify!($check);
            let result = match Ctx::new(fixture, name).await {
                Ok(ctx) => tokio::time::timeout(CHECK_TIMEOUT, $module::$check(&ctx))
                    .await
                    .unwrap_or_else(|_| Err(format!("did not finish within {CHECK_TIMEOUT:?}"))),
                Err(message) => Err(message),
            };
            report.record(name, result);
        )*};
    }
    run!(
        read::write_then_read,
        read::read_range_windows,
        read::open_streams_in_chunks,
        read::count_lines_reads_past_between_reads,
        write::write_atomic_replaces_whole_under_concurrent_reads,
        write::write_atomic_keeps_permissions,
        write::write_atomic_writes_through_symlinks,
        write::write_atomic_needs_an_existing_parent,
        write::write_atomic_leaves_no_temp_files,
        splice::write_spliced_replaces_ranges,
        splice::write_spliced_refuses_bad_ranges,
        tree::metadata_follows_symlinks,
        tree::read_dir_lists_names_and_kinds,
        tree::read_dir_first_pages_in_key_order,
        tree::canonicalize_resolves_symlinks,
        tree::create_dir_all_is_nested_and_idempotent,
        tree::home_dir_is_absolute,
        tree::remove_dir_refuses_a_non_empty_directory,
        tree::remove_file_unlinks_a_file_or_a_link_never_its_target,
        errors::missing_paths_are_not_found,
        errors::directories_are_not_files,
        errors::files_are_not_directories,
        errors::symlink_loops_are_reported,
        confine::confined_refuses_paths_outside_the_roots,
        confine::confined_follows_symlinks_beneath_the_root,
        confine::confined_write_guard_judges_the_resolved_path,
    );
    report
}

/// A check's result: `Err` says what went wrong.
type CheckResult = Result<(), String>;

/// What a check works with: the adapter and its own empty directory.
struct Ctx<'a> {
    fixture: &'a dyn Fixture,
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
}

impl<'a> Ctx<'a> {
    async fn new(fixture: &'a dyn Fixture, name: &str) -> Result<Ctx<'a>, String> {
        let fs = fixture.fs();
        let dir = fixture.root().join(name);
        ok(
            fs.create_dir_all(&dir).await,
            "create_dir_all of the check's directory",
        )?;
        Ok(Ctx { fixture, fs, dir })
    }

    /// A path inside the check's directory.
    fn path(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    fn symlink(&self, link: &Path, target: &Path) -> CheckResult {
        self.fixture.symlink(link, target).map_err(|error| {
            format!(
                "fixture could not create symlink {} -> {}: {error}",
                link.display(),
                target.display()
            )
        })
    }

    fn set_mode(&self, path: &Path, mode: u32) -> CheckResult {
        self.fixture
            .set_mode(path, mode)
            .map_err(|error| format!("fixture could not chmod {}: {error}", path.display()))
    }

    /// Writes a file, failing the check if the write fails.
    async fn write(&self, path: &Path, contents: &[u8]) -> CheckResult {
        ok(
            self.fs.write_atomic(path, contents).await,
            &format!("write_atomic({})", path.display()),
        )
    }

    /// Reads a file and compares it with `expected`.
    async fn expect_contents(&self, path: &Path, expected: &[u8], when: &str) -> CheckResult {
        let actual = ok(
            self.fs.read(path).await,
            &format!("read({}) {when}", path.display()),
        )?;
        expect_bytes(
            &actual,
            expected,
            &format!("read({}) {when}", path.display()),
        )
    }

    /// The sorted names in a directory.
    async fn names(&self, dir: &Path) -> Result<Vec<String>, String> {
        let entries = ok(
            self.fs.read_dir(dir).await,
            &format!("read_dir({})", dir.display()),
        )?;
        let mut names: Vec<String> = entries
            .iter()
            .map(|entry| entry.name.to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }
}

/// Turns an adapter error into a check failure naming the operation.
fn ok<T>(result: Result<T, FsError>, operation: &str) -> Result<T, String> {
    result.map_err(|error| format!("{operation} failed: {error} [{}]", error.kind.code()))
}

/// Fails with `message` unless `condition` holds.
fn ensure(condition: bool, message: impl FnOnce() -> String) -> CheckResult {
    if condition { Ok(()) } else { Err(message()) }
}

/// Checks that an operation failed with `kind` and that the error carries `path`.
fn expect_error<T: fmt::Debug>(
    result: Result<T, FsError>,
    kinds: &[FsErrorKind],
    path: &Path,
    operation: &str,
) -> CheckResult {
    let expected: Vec<&str> = kinds.iter().map(|kind| kind.code()).collect();
    let expected = expected.join(" or ");
    match result {
        Ok(value) => Err(format!(
            "{operation}: expected a {expected} error, got Ok({})",
            short_debug(&value)
        )),
        Err(error) if !kinds.contains(&error.kind) => Err(format!(
            "{operation}: expected a {expected} error, got {} ({error})",
            error.kind.code()
        )),
        Err(error) if error.path != path => Err(format!(
            "{operation}: the {} error carries path {}, expected {}",
            error.kind.code(),
            error.path.display(),
            path.display()
        )),
        Err(_) => Ok(()),
    }
}

fn short_debug<T: fmt::Debug>(value: &T) -> String {
    let text = format!("{value:?}");
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// A short description of some bytes, for failure messages.
fn describe(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(24)];
    let ellipsis = if bytes.len() > head.len() { "…" } else { "" };
    format!(
        "{} bytes \"{}{ellipsis}\"",
        bytes.len(),
        head.escape_ascii()
    )
}

fn expect_bytes(actual: &[u8], expected: &[u8], what: &str) -> CheckResult {
    ensure(actual == expected, || {
        format!(
            "{what}: got {}, expected {}",
            describe(actual),
            describe(expected)
        )
    })
}
