//! Atomic writes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{CheckResult, Ctx, describe, ensure, expect_error, ok};
use crate::{FileKind, FileSystem, FsErrorKind};

const REWRITES: usize = 24;

/// Reads `path` whole, alternately with `read` and with `open` + `read_chunk`.
async fn read_either_way(
    fs: &dyn FileSystem,
    path: &Path,
    streamed: bool,
) -> Result<Vec<u8>, String> {
    if !streamed {
        return ok(fs.read(path).await, "read during rewrites");
    }
    let mut reader = ok(fs.open(path).await, "open during rewrites")?;
    let mut buffer = vec![0u8; 64 * 1024];
    let mut collected = Vec::new();
    loop {
        let count = ok(
            reader.read_chunk(&mut buffer).await,
            "read_chunk during rewrites",
        )?;
        if count == 0 {
            return Ok(collected);
        }
        collected.extend_from_slice(&buffer[..count]);
    }
}

/// A reader looping while another task rewrites a file between two large,
/// different contents only ever sees one of them whole.
pub(super) async fn write_atomic_replaces_whole_under_concurrent_reads(
    ctx: &Ctx<'_>,
) -> CheckResult {
    let path = ctx.path("big.bin");
    let old: Arc<Vec<u8>> = Arc::new(b"old line\n".repeat(32 * 1024));
    let new: Arc<Vec<u8>> = Arc::new(b"the new line\n".repeat(24 * 1024));
    ctx.write(&path, &old).await?;
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (fs, path, done) = (ctx.fs.clone(), path.clone(), done.clone());
        let (old, new) = (old.clone(), new.clone());
        tokio::spawn(async move {
            let mut reads = 0usize;
            while reads == 0 || !done.load(Ordering::Acquire) {
                let seen = read_either_way(fs.as_ref(), &path, reads % 2 == 1).await?;
                if seen != *old && seen != *new {
                    return Err(format!(
                        "a reader saw {} while the file was rewritten between {} and {}",
                        describe(&seen),
                        describe(&old),
                        describe(&new)
                    ));
                }
                reads += 1;
                tokio::task::yield_now().await;
            }
            Ok(reads)
        })
    };
    let mut written = Ok(());
    for round in 0..REWRITES {
        let contents = if round % 2 == 0 { &new } else { &old };
        written = ctx.write(&path, contents).await;
        if written.is_err() {
            break;
        }
    }
    done.store(true, Ordering::Release);
    let read = reader
        .await
        .map_err(|error| format!("the reader task failed: {error}"))?;
    written?;
    read?;
    ctx.expect_contents(&path, &old, "after the rewrites")
        .await?;
    let names = ctx.names(&ctx.dir).await?;
    ensure(names == ["big.bin"], || {
        format!("after the rewrites the directory holds {names:?}, expected only big.bin")
    })
}

/// A rewrite keeps the file's permission bits, also when written through a symlink.
pub(super) async fn write_atomic_keeps_permissions(ctx: &Ctx<'_>) -> CheckResult {
    let path = ctx.path("script.sh");
    let link = ctx.path("link.sh");
    ctx.write(&path, b"one\n").await?;
    ctx.symlink(&link, Path::new("script.sh"))?;
    for (mode, via) in [(0o600, &path), (0o755, &path), (0o640, &link)] {
        ctx.set_mode(&path, mode)?;
        ctx.write(via, format!("mode {mode:o}\n").as_bytes())
            .await?;
        let metadata = ok(ctx.fs.metadata(&path).await, "metadata after a rewrite")?;
        let Some(kept) = metadata.mode else {
            // The adapter does not know permission bits: nothing to keep.
            return Ok(());
        };
        ensure(kept & 0o7777 == mode, || {
            format!(
                "rewriting {} (mode {mode:o}) via {} left mode {:o}",
                path.display(),
                via.display(),
                kept & 0o7777
            )
        })?;
    }
    ctx.expect_contents(&path, b"mode 640\n", "after rewrites")
        .await
}

/// Writing a symlink replaces its target's contents; the link stays a link.
/// Relative, absolute, `..` and chained links, and a symlinked directory.
pub(super) async fn write_atomic_writes_through_symlinks(ctx: &Ctx<'_>) -> CheckResult {
    let target = ctx.path("target.txt");
    ctx.write(&target, b"old\n").await?;
    ok(
        ctx.fs.create_dir_all(&ctx.path("sub")).await,
        "create_dir_all(sub)",
    )?;
    let links: [(PathBuf, PathBuf); 4] = [
        (ctx.path("relative"), PathBuf::from("target.txt")),
        (ctx.path("absolute"), target.clone()),
        (ctx.path("sub/up"), PathBuf::from("../target.txt")),
        (ctx.path("chain"), PathBuf::from("relative")),
    ];
    for (link, to) in &links {
        ctx.symlink(link, to)?;
    }
    for (link, _) in &links {
        let contents = format!("written via {}\n", link.display());
        ctx.write(link, contents.as_bytes()).await?;
        ctx.expect_contents(
            &target,
            contents.as_bytes(),
            &format!("after writing {}", link.display()),
        )
        .await?;
        let kind = ok(ctx.fs.symlink_metadata(link).await, "symlink_metadata")?.kind;
        ensure(kind == FileKind::Symlink, || {
            format!(
                "after writing through {} it is a {kind:?}, not a symlink",
                link.display()
            )
        })?;
    }
    let alias = ctx.path("alias");
    ctx.symlink(&alias, Path::new("sub"))?;
    ctx.write(&alias.join("new.txt"), b"in sub\n").await?;
    ctx.expect_contents(
        &ctx.path("sub/new.txt"),
        b"in sub\n",
        "written via a symlinked directory",
    )
    .await?;
    let names = ctx.names(&ctx.dir).await?;
    let expected = [
        "absolute",
        "alias",
        "chain",
        "relative",
        "sub",
        "target.txt",
    ];
    ensure(names == expected, || {
        format!(
            "after writes through symlinks the directory holds {names:?}, expected {expected:?}"
        )
    })
}

/// A write into a missing directory fails with `not_found` and creates nothing.
pub(super) async fn write_atomic_needs_an_existing_parent(ctx: &Ctx<'_>) -> CheckResult {
    let path = ctx.path("missing/file.txt");
    expect_error(
        ctx.fs.write_atomic(&path, b"x").await,
        &[FsErrorKind::NotFound],
        &path,
        "write_atomic into a missing directory",
    )?;
    let names = ctx.names(&ctx.dir).await?;
    ensure(names.is_empty(), || {
        format!("a failed write_atomic into a missing directory left {names:?} behind")
    })
}

/// Successful and failed writes leave no temporary files next to the target.
pub(super) async fn write_atomic_leaves_no_temp_files(ctx: &Ctx<'_>) -> CheckResult {
    let (first, second, sub) = (ctx.path("a.txt"), ctx.path("b.txt"), ctx.path("sub"));
    for round in 0..4 {
        ctx.write(&first, format!("round {round}\n").as_bytes())
            .await?;
    }
    ctx.write(&second, b"b\n").await?;
    ok(ctx.fs.create_dir_all(&sub).await, "create_dir_all(sub)")?;
    expect_error(
        ctx.fs.write_atomic(&sub, b"x").await,
        &[FsErrorKind::IsADirectory],
        &sub,
        "write_atomic over a directory",
    )?;
    let names = ctx.names(&ctx.dir).await?;
    ensure(names == ["a.txt", "b.txt", "sub"], || {
        format!("after writes the directory holds {names:?}, expected [a.txt, b.txt, sub]")
    })?;
    let inside = ctx.names(&sub).await?;
    ensure(inside.is_empty(), || {
        format!("a refused write over directory sub left {inside:?} inside it")
    })?;
    ctx.expect_contents(&first, b"round 3\n", "after four rewrites")
        .await
}
