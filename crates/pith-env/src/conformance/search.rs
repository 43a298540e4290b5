//! The search conformance suite: grep and find behaviour every [`Search`]
//! adapter keeps, written once and run against each adapter (as the
//! file-system suite is). The fixture builds its trees through the adapter's
//! own [`FileSystem`], so one fixture serves both suites.
//!
//! Checks (each works in a subdirectory named after it):
//! `grep_lists_matches_in_path_order`, `grep_context_and_limit`,
//! `grep_ignore_case_and_literal`, `grep_glob_filters_files`,
//! `grep_respects_ignore_files_and_never_dot_git`,
//! `grep_stops_at_the_first_nul_byte`, `grep_strips_carriage_returns`,
//! `grep_single_file_root_shows_its_name`, `grep_invalid_pattern_is_one_line`,
//! `grep_missing_root_is_not_found`, `grep_cancelled_is_cancelled`,
//! `find_matches_globs_in_path_order`, `find_stops_at_the_limit`,
//! `find_respects_ignore_files`, `find_missing_root_is_not_found`.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{CHECK_TIMEOUT, CheckResult, Report, ensure, ok};
use crate::{FileSystem, FindRequest, GrepOutput, GrepRequest, Search, SearchError};

/// What the search suite needs from the adapter under test.
pub trait SearchFixture: Send + Sync {
    /// The adapter's search port.
    fn search(&self) -> Arc<dyn Search>;

    /// The adapter's file system, used to build the trees searched.
    fn fs(&self) -> Arc<dyn FileSystem>;

    /// An existing, empty directory (absolute) the suite may write in.
    fn root(&self) -> PathBuf;
}

/// What a check works with.
struct Ctx {
    search: Arc<dyn Search>,
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
}

impl Ctx {
    /// Writes `files` (relative path, contents) below the check's directory.
    async fn tree(&self, files: &[(&str, &[u8])]) -> CheckResult {
        for (relative, contents) in files {
            let path = self.dir.join(relative);
            if let Some(parent) = path.parent() {
                ok(self.fs.create_dir_all(parent).await, "create_dir_all")?;
            }
            ok(
                self.fs.write_atomic(&path, contents).await,
                &format!("write_atomic({relative})"),
            )?;
        }
        Ok(())
    }

    fn grep_request(&self, pattern: &str) -> GrepRequest {
        GrepRequest {
            pattern: pattern.to_owned(),
            root: self.dir.clone(),
            glob: None,
            ignore_case: false,
            literal: false,
            context: 0,
            limit: 100,
        }
    }

    async fn grep(&self, request: GrepRequest) -> Result<GrepOutput, SearchError> {
        self.search.grep(request, CancellationToken::new()).await
    }

    /// The rows of a grep as `path:line: text` (`-` for context rows).
    async fn rows(&self, request: GrepRequest) -> Result<Vec<String>, String> {
        let output = searched(self.grep(request).await, "grep")?;
        Ok(output
            .lines
            .iter()
            .map(|line| {
                let mark = if line.is_match { ':' } else { '-' };
                format!(
                    "{}{mark}{}{mark} {}",
                    line.path, line.line_number, line.text
                )
            })
            .collect())
    }

    /// The paths find returns for `pattern` (directories end in `/`).
    async fn found(&self, pattern: &str, limit: usize) -> Result<(Vec<String>, bool), String> {
        let request = FindRequest {
            pattern: pattern.to_owned(),
            root: self.dir.clone(),
            limit,
        };
        let output = searched(
            self.search.find(request, CancellationToken::new()).await,
            "find",
        )?;
        let paths = output
            .entries
            .iter()
            .map(|entry| {
                if entry.is_dir {
                    format!("{}/", entry.path)
                } else {
                    entry.path.clone()
                }
            })
            .collect();
        Ok((paths, output.limit_reached))
    }
}

/// A search result, or what failed.
fn searched<T>(result: Result<T, SearchError>, operation: &str) -> Result<T, String> {
    result.map_err(|error| format!("{operation} failed: {error}"))
}

fn expect_rows(actual: &[String], expected: &[&str], when: &str) -> CheckResult {
    ensure(actual == expected, || {
        format!("{when}: expected rows {expected:?}, got {actual:?}")
    })
}

/// Runs every search check against the fixture's adapter.
pub async fn run_search(fixture: &dyn SearchFixture) -> Report {
    let mut report = Report::default();
    macro_rules! run {
        ($($check:ident),* $(,)?) => {$(
            let name = stringify!($check);
            let ctx = Ctx {
                search: fixture.search(),
                fs: fixture.fs(),
                dir: fixture.root().join(name),
            };
            let result = match ok(ctx.fs.create_dir_all(&ctx.dir).await, "create_dir_all") {
                Ok(()) => tokio::time::timeout(CHECK_TIMEOUT, $check(&ctx))
                    .await
                    .unwrap_or_else(|_| Err(format!("did not finish within {CHECK_TIMEOUT:?}"))),
                Err(message) => Err(message),
            };
            report.record(name, result);
        )*};
    }
    run!(
        grep_lists_matches_in_path_order,
        grep_context_and_limit,
        grep_ignore_case_and_literal,
        grep_glob_filters_files,
        grep_respects_ignore_files_and_never_dot_git,
        grep_stops_at_the_first_nul_byte,
        grep_strips_carriage_returns,
        grep_single_file_root_shows_its_name,
        grep_invalid_pattern_is_one_line,
        grep_missing_root_is_not_found,
        grep_cancelled_is_cancelled,
        find_matches_globs_in_path_order,
        find_stops_at_the_limit,
        find_respects_ignore_files,
        find_missing_root_is_not_found,
    );
    report
}

/// Matches come sorted by path, then line; paths are relative to the root.
async fn grep_lists_matches_in_path_order(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[
        ("b.txt", b"two\n"),
        ("a.txt", b"one\ntwo\nthree two\n"),
        ("sub/c.txt", b"none\ntwo\n"),
    ])
    .await?;
    let output = searched(ctx.grep(ctx.grep_request("two")).await, "grep")?;
    ensure(output.match_count == 4 && !output.limit_reached, || {
        format!(
            "expected 4 matches, no limit; got {} (limit reached: {})",
            output.match_count, output.limit_reached
        )
    })?;
    let rows = ctx.rows(ctx.grep_request("two")).await?;
    expect_rows(
        &rows,
        &[
            "a.txt:2: two",
            "a.txt:3: three two",
            "b.txt:1: two",
            "sub/c.txt:2: two",
        ],
        "grep two",
    )
}

/// Context rows surround matches without duplicates; the limit keeps the
/// first matches and says it was reached.
async fn grep_context_and_limit(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[("f.txt", b"a\nhit 1\nb\nhit 2\nc\nd\nhit 3\n")])
        .await?;
    let mut request = ctx.grep_request("hit");
    request.context = 1;
    let rows = ctx.rows(request).await?;
    expect_rows(
        &rows,
        &[
            "f.txt-1- a",
            "f.txt:2: hit 1",
            "f.txt-3- b",
            "f.txt:4: hit 2",
            "f.txt-5- c",
            "f.txt-6- d",
            "f.txt:7: hit 3",
        ],
        "grep hit with context 1",
    )?;
    let mut request = ctx.grep_request("hit");
    request.limit = 2;
    let output = searched(ctx.grep(request.clone()).await, "grep limit 2")?;
    ensure(output.limit_reached && output.match_count == 2, || {
        format!(
            "limit 2: expected 2 matches and the limit reached, got {} ({})",
            output.match_count, output.limit_reached
        )
    })?;
    expect_rows(
        &ctx.rows(request).await?,
        &["f.txt:2: hit 1", "f.txt:4: hit 2"],
        "grep hit limit 2",
    )
}

async fn grep_ignore_case_and_literal(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[("f.txt", b"A.B\naxb\n-n flag\n")]).await?;
    let mut request = ctx.grep_request("a.b");
    request.ignore_case = true;
    expect_rows(
        &ctx.rows(request.clone()).await?,
        &["f.txt:1: A.B", "f.txt:2: axb"],
        "ignore case regex",
    )?;
    request.literal = true;
    expect_rows(&ctx.rows(request).await?, &["f.txt:1: A.B"], "literal")?;
    expect_rows(
        &ctx.rows(ctx.grep_request("-n")).await?,
        &["f.txt:3: -n flag"],
        "a pattern starting with a dash",
    )
}

async fn grep_glob_filters_files(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[("a.rs", b"x\n"), ("a.txt", b"x\n"), ("deep/b.rs", b"x\n")])
        .await?;
    let mut request = ctx.grep_request("x");
    request.glob = Some("*.rs".to_owned());
    expect_rows(
        &ctx.rows(request).await?,
        &["a.rs:1: x", "deep/b.rs:1: x"],
        "glob *.rs",
    )
}

/// `.gitignore` and `.ignore` apply (also outside a git repository), hidden
/// files are searched, `.git/` never.
async fn grep_respects_ignore_files_and_never_dot_git(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[
        (".gitignore", b"ignored.txt\nbuild/\n"),
        ("sub/.ignore", b"local.txt\n"),
        ("ignored.txt", b"needle\n"),
        ("build/out.txt", b"needle\n"),
        ("sub/local.txt", b"needle\n"),
        ("sub/kept.txt", b"needle\n"),
        (".hidden", b"needle\n"),
        (".git/config", b"needle\n"),
    ])
    .await?;
    expect_rows(
        &ctx.rows(ctx.grep_request("needle")).await?,
        &[".hidden:1: needle", "sub/kept.txt:1: needle"],
        "grep needle",
    )
}

/// A file is searched up to its first NUL byte and named with that offset.
async fn grep_stops_at_the_first_nul_byte(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[("a.dat", b"needle one\nxx\0 needle two\n")])
        .await?;
    let output = searched(ctx.grep(ctx.grep_request("needle")).await, "grep")?;
    ensure(output.match_count == 1, || {
        format!(
            "expected 1 match before the NUL, got {}",
            output.match_count
        )
    })?;
    ensure(
        output.binary.len() == 1
            && output.binary[0].path == "a.dat"
            && output.binary[0].offset == 13,
        || {
            format!(
                "expected a.dat named binary at byte 13, got {:?}",
                output.binary
            )
        },
    )
}

async fn grep_strips_carriage_returns(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[("crlf.txt", b"one\r\ntwo\r\n")]).await?;
    expect_rows(
        &ctx.rows(ctx.grep_request("o")).await?,
        &["crlf.txt:1: one", "crlf.txt:2: two"],
        "grep in a CRLF file",
    )
}

async fn grep_single_file_root_shows_its_name(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[("only.txt", b"x\n")]).await?;
    let mut request = ctx.grep_request("x");
    request.root = ctx.dir.join("only.txt");
    expect_rows(&ctx.rows(request).await?, &["only.txt:1: x"], "file root")
}

/// An invalid pattern is `InvalidPattern` with a one-line reason, the same
/// for every adapter (they share one matcher builder).
async fn grep_invalid_pattern_is_one_line(ctx: &Ctx) -> CheckResult {
    match ctx.grep(ctx.grep_request("fn (")).await {
        Err(SearchError::InvalidPattern(reason)) => ensure(reason == "unclosed group", || {
            format!("expected the reason \"unclosed group\", got {reason:?}")
        }),
        other => Err(format!("expected InvalidPattern, got {other:?}")),
    }
}

async fn grep_missing_root_is_not_found(ctx: &Ctx) -> CheckResult {
    let mut request = ctx.grep_request("x");
    request.root = ctx.dir.join("missing");
    match ctx.grep(request).await {
        Err(SearchError::NotFound(path)) => ensure(path == ctx.dir.join("missing"), || {
            format!("NotFound names {}", path.display())
        }),
        other => Err(format!("expected NotFound, got {other:?}")),
    }
}

async fn grep_cancelled_is_cancelled(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[("f.txt", b"x\n")]).await?;
    let cancel = CancellationToken::new();
    cancel.cancel();
    match ctx.search.grep(ctx.grep_request("x"), cancel).await {
        Err(SearchError::Cancelled) => Ok(()),
        other => Err(format!("expected Cancelled, got {other:?}")),
    }
}

async fn find_matches_globs_in_path_order(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[
        ("src/lib.rs", b""),
        ("src/deep/mod.rs", b""),
        ("README.md", b""),
        ("top.rs", b""),
    ])
    .await?;
    let (paths, reached) = ctx.found("**/*.rs", 100).await?;
    ensure(
        paths == ["src/deep/mod.rs", "src/lib.rs", "top.rs"] && !reached,
        || format!("find **/*.rs: got {paths:?} (limit reached: {reached})"),
    )?;
    let (paths, _) = ctx.found("*.md", 100).await?;
    ensure(paths == ["README.md"], || {
        format!("find *.md: got {paths:?}")
    })
}

async fn find_stops_at_the_limit(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[("a.txt", b""), ("b.txt", b""), ("c.txt", b"")])
        .await?;
    let (paths, reached) = ctx.found("*.txt", 2).await?;
    ensure(paths == ["a.txt", "b.txt"] && reached, || {
        format!("find *.txt limit 2: got {paths:?} (limit reached: {reached})")
    })
}

async fn find_respects_ignore_files(ctx: &Ctx) -> CheckResult {
    ctx.tree(&[
        (".gitignore", b"*.log\n"),
        ("keep.txt", b""),
        ("drop.log", b""),
        (".hidden.txt", b""),
        (".git/HEAD", b""),
    ])
    .await?;
    let (paths, _) = ctx.found("**/*", 100).await?;
    ensure(paths == [".gitignore", ".hidden.txt", "keep.txt"], || {
        format!("find **/*: got {paths:?}")
    })
}

async fn find_missing_root_is_not_found(ctx: &Ctx) -> CheckResult {
    let request = FindRequest {
        pattern: "*".to_owned(),
        root: ctx.dir.join("missing"),
        limit: 10,
    };
    match ctx.search.find(request, CancellationToken::new()).await {
        Err(SearchError::NotFound(_)) => Ok(()),
        other => Err(format!("expected NotFound, got {other:?}")),
    }
}
