//! Confined views ([`FileSystem::confine`](crate::FileSystem::confine)):
//! every path resolves beneath a root, symlinks are followed only while they
//! stay beneath it, and the write guard judges the resolved path.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{CheckResult, Ctx, ensure, expect_error, ok};
use crate::{Confinement, FileSystem, FsErrorKind, WriteRules};

/// `root/` with `sub/deep/`, `sub/file.txt` and a sibling `outside/secret.txt`.
async fn layout(ctx: &Ctx<'_>) -> Result<(PathBuf, PathBuf), String> {
    let (root, outside) = (ctx.path("root"), ctx.path("outside"));
    ok(
        ctx.fs.create_dir_all(&root.join("sub/deep")).await,
        "create_dir_all(root/sub/deep)",
    )?;
    ok(
        ctx.fs.create_dir_all(&outside).await,
        "create_dir_all(outside)",
    )?;
    ctx.write(&root.join("sub/file.txt"), b"inside\n").await?;
    ctx.write(&outside.join("secret.txt"), b"outside\n").await?;
    Ok((root, outside))
}

fn view(ctx: &Ctx<'_>, root: &Path, guard: Option<WriteRules>) -> Arc<dyn FileSystem> {
    let mut confinement = Confinement::new(vec![root.to_path_buf()]);
    confinement.write_rules = guard;
    ctx.fs.clone().confine(confinement)
}

/// Paths outside the root — directly, by `..`, through a relative or an
/// absolute symlink — fail with `OutsideRoots` for every operation, and a
/// refused write or mkdir creates nothing outside.
pub(super) async fn confined_refuses_paths_outside_the_roots(ctx: &Ctx<'_>) -> CheckResult {
    let (root, outside) = layout(ctx).await?;
    ctx.symlink(&root.join("up"), Path::new("../outside"))?;
    ctx.symlink(&root.join("abs"), &outside)?;
    let fs = view(ctx, &root, None);
    let escapes = [
        outside.join("secret.txt"),
        root.join("../outside/secret.txt"),
        root.join("sub/../../outside/secret.txt"),
        root.join("up/secret.txt"),
        root.join("abs/secret.txt"),
    ];
    for path in &escapes {
        let shown = path.display();
        let outside_roots = [FsErrorKind::OutsideRoots];
        expect_error(
            fs.read(path).await,
            &outside_roots,
            path,
            &format!("read({shown})"),
        )?;
        expect_error(
            fs.metadata(path).await,
            &outside_roots,
            path,
            &format!("metadata({shown})"),
        )?;
        expect_error(
            fs.canonicalize(path).await,
            &outside_roots,
            path,
            &format!("canonicalize({shown})"),
        )?;
        expect_error(
            fs.write_atomic(path, b"escaped\n").await,
            &outside_roots,
            path,
            &format!("write_atomic({shown})"),
        )?;
        let dir = path.with_file_name("newdir");
        expect_error(
            fs.create_dir_all(&dir).await,
            &outside_roots,
            &dir,
            &format!("create_dir_all({})", dir.display()),
        )?;
    }
    for dir in [root.join("up"), root.join("abs"), outside.clone()] {
        expect_error(
            fs.read_dir(&dir).await,
            &[FsErrorKind::OutsideRoots],
            &dir,
            &format!("read_dir({})", dir.display()),
        )?;
    }
    let names = ctx.names(&outside).await?;
    ensure(names == ["secret.txt"], || {
        format!("refused writes changed the outside directory: it holds {names:?}")
    })?;
    ctx.expect_contents(
        &outside.join("secret.txt"),
        b"outside\n",
        "after refused writes",
    )
    .await
}

/// Symlinks that stay beneath the root work (relative and absolute), and
/// `link/..` is the link target's parent, as the kernel resolves it.
pub(super) async fn confined_follows_symlinks_beneath_the_root(ctx: &Ctx<'_>) -> CheckResult {
    let (root, _) = layout(ctx).await?;
    ctx.symlink(&root.join("rel"), Path::new("sub"))?;
    ctx.symlink(&root.join("abs"), &root.join("sub"))?;
    ctx.symlink(&root.join("deep_link"), Path::new("sub/deep"))?;
    let fs = view(ctx, &root, None);
    for path in [
        root.join("sub/file.txt"),
        root.join("rel/file.txt"),
        root.join("abs/file.txt"),
        root.join("deep_link/../file.txt"),
        root.join("sub/deep/../file.txt"),
    ] {
        let bytes = ok(fs.read(&path).await, &format!("read({})", path.display()))?;
        ensure(bytes == b"inside\n", || {
            format!("read({}) gave {bytes:?}", path.display())
        })?;
    }
    let real = ok(
        fs.canonicalize(&root.join("deep_link/../file.txt")).await,
        "canonicalize(deep_link/../file.txt)",
    )?;
    let expected = ok(
        ctx.fs.canonicalize(&root.join("sub/file.txt")).await,
        "canonicalize(sub/file.txt) unconfined",
    )?;
    ensure(real == expected, || {
        format!(
            "canonicalize(deep_link/../file.txt) = {}, expected {}",
            real.display(),
            expected.display()
        )
    })?;
    ok(
        fs.write_atomic(&root.join("rel/new.txt"), b"new\n").await,
        "write_atomic(rel/new.txt)",
    )?;
    ctx.expect_contents(&root.join("sub/new.txt"), b"new\n", "written through rel/")
        .await?;
    ok(
        fs.create_dir_all(&root.join("abs/made/deeper")).await,
        "create_dir_all(abs/made/deeper)",
    )?;
    let made = ok(
        ctx.fs.metadata(&root.join("sub/made/deeper")).await,
        "metadata(sub/made/deeper)",
    )?;
    ensure(made.is_dir(), || {
        "abs/made/deeper is not a directory".to_owned()
    })
}

/// The write guard sees the path as resolved (an alias cannot hide a
/// guarded directory), and a refused write or mkdir changes nothing and
/// leaves no temp file.
pub(super) async fn confined_write_guard_judges_the_resolved_path(ctx: &Ctx<'_>) -> CheckResult {
    let (root, _) = layout(ctx).await?;
    ok(
        ctx.fs.create_dir_all(&root.join("guarded")).await,
        "create_dir_all(guarded)",
    )?;
    ctx.symlink(&root.join("alias"), Path::new("guarded"))?;
    let guard = WriteRules::new(std::slice::from_ref(&root), &["guarded".to_owned()])
        .map_err(|error| format!("WriteRules::new: {error}"))?;
    let fs = view(ctx, &root, Some(guard));
    for path in [
        root.join("guarded/x.txt"),
        root.join("alias/x.txt"),
        root.join("sub/../alias/x.txt"),
    ] {
        expect_error(
            fs.write_atomic(&path, b"x\n").await,
            &[FsErrorKind::Protected],
            &path,
            &format!("write_atomic({})", path.display()),
        )?;
    }
    ctx.write(&root.join("guarded/kept.txt"), b"kept\n").await?;
    let kept = root.join("alias/kept.txt");
    expect_error(
        fs.remove_file(&kept).await,
        &[FsErrorKind::Protected, FsErrorKind::Unsupported],
        &kept,
        "remove_file(alias/kept.txt)",
    )?;
    let dir = root.join("alias/newdir");
    expect_error(
        fs.create_dir_all(&dir).await,
        &[FsErrorKind::Protected],
        &dir,
        "create_dir_all(alias/newdir)",
    )?;
    let names = ctx.names(&root.join("guarded")).await?;
    ensure(names == ["kept.txt"], || {
        format!("refused writes left {names:?} in the guarded directory")
    })?;
    ok(
        fs.write_atomic(&root.join("sub/ok.txt"), b"ok\n").await,
        "write_atomic(sub/ok.txt) outside the guarded directory",
    )?;
    // A failed write (missing parent) leaves no temp file either.
    let missing = root.join("sub/missing/x.txt");
    expect_error(
        fs.write_atomic(&missing, b"x\n").await,
        &[FsErrorKind::NotFound],
        &missing,
        "write_atomic with a missing parent",
    )?;
    let names = ctx.names(&root.join("sub")).await?;
    ensure(names == ["deep", "file.txt", "ok.txt"], || {
        format!("after writes root/sub holds {names:?}, expected [deep, file.txt, ok.txt]")
    })
}
