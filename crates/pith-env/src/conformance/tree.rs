//! Metadata, listings, realpath and directory creation.

use std::path::Path;

use super::{CheckResult, Ctx, ensure, expect_error, ok};
use crate::{FileKind, FsErrorKind};

/// `metadata` follows symlinks, `symlink_metadata` does not; a dangling link
/// has link metadata only.
pub(super) async fn metadata_follows_symlinks(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    let (file, sub) = (ctx.path("five.txt"), ctx.path("sub"));
    ctx.write(&file, b"12345").await?;
    ok(fs.create_dir_all(&sub).await, "create_dir_all(sub)")?;
    let (file_link, dir_link, dangling) = (
        ctx.path("file_link"),
        ctx.path("dir_link"),
        ctx.path("dangling"),
    );
    ctx.symlink(&file_link, Path::new("five.txt"))?;
    ctx.symlink(&dir_link, &sub)?;
    ctx.symlink(&dangling, Path::new("nowhere"))?;

    let cases = [
        (&file, FileKind::File, FileKind::File),
        (&sub, FileKind::Directory, FileKind::Directory),
        (&file_link, FileKind::File, FileKind::Symlink),
        (&dir_link, FileKind::Directory, FileKind::Symlink),
    ];
    for (path, followed, not_followed) in cases {
        let shown = path.display();
        let stat = ok(fs.metadata(path).await, &format!("metadata({shown})"))?;
        ensure(stat.kind == followed, || {
            format!(
                "metadata({shown}) says {:?}, expected {followed:?}",
                stat.kind
            )
        })?;
        let lstat = ok(
            fs.symlink_metadata(path).await,
            &format!("symlink_metadata({shown})"),
        )?;
        ensure(lstat.kind == not_followed, || {
            format!(
                "symlink_metadata({shown}) says {:?}, expected {not_followed:?}",
                lstat.kind
            )
        })?;
        if followed == FileKind::File {
            ensure(stat.len == 5 && stat.is_file() && !stat.is_dir(), || {
                format!("metadata({shown}) of a 5-byte file says {stat:?}")
            })?;
        }
    }
    expect_error(
        fs.metadata(&dangling).await,
        &[FsErrorKind::NotFound],
        &dangling,
        "metadata of a dangling symlink",
    )?;
    let lstat = ok(
        fs.symlink_metadata(&dangling).await,
        "symlink_metadata of a dangling link",
    )?;
    ensure(lstat.kind == FileKind::Symlink, || {
        format!("symlink_metadata of a dangling link says {:?}", lstat.kind)
    })?;
    ctx.write(&file, b"123").await?;
    let stat = ok(fs.metadata(&file).await, "metadata after a rewrite")?;
    ensure(stat.len == 3, || {
        format!("metadata after rewriting 3 bytes says len {}", stat.len)
    })
}

/// `read_dir_first` gives the first entries in key order (ties by the names'
/// bytes) with their kinds, and counts every entry.
pub(super) async fn read_dir_first_pages_in_key_order(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    for name in ["b.txt", "A.txt", "a.txt", "c.txt", "B.txt"] {
        ctx.write(&ctx.path(name), name.as_bytes()).await?;
    }
    ok(
        fs.create_dir_all(&ctx.path("a_dir")).await,
        "create_dir_all(a_dir)",
    )?;
    let lower: crate::DirKey = |name| name.to_string_lossy().to_lowercase();
    let page = ok(
        fs.read_dir_first(&ctx.dir, 4, lower).await,
        "read_dir_first",
    )?;
    let listed: Vec<(String, FileKind)> = page
        .entries
        .iter()
        .map(|entry| (entry.name.to_string_lossy().into_owned(), entry.kind))
        .collect();
    let expected = [
        ("A.txt", FileKind::File),
        ("a.txt", FileKind::File),
        ("a_dir", FileKind::Directory),
        ("B.txt", FileKind::File),
    ];
    let matches = listed.len() == expected.len()
        && listed
            .iter()
            .zip(expected)
            .all(|(got, want)| got.0 == want.0 && got.1 == want.1);
    ensure(matches && page.total == 6, || {
        format!(
            "read_dir_first(4) lists {listed:?} of {}, expected {expected:?} of 6",
            page.total
        )
    })?;
    let all = ok(
        fs.read_dir_first(&ctx.dir, 100, lower).await,
        "read_dir_first",
    )?;
    ensure(all.entries.len() == 6 && all.total == 6, || {
        format!(
            "read_dir_first(100) lists {} of {}",
            all.entries.len(),
            all.total
        )
    })
}

/// `read_dir` lists every name (dotfiles too, `.` and `..` never) with its
/// unfollowed kind, and follows a symlinked directory given as the path.
pub(super) async fn read_dir_lists_names_and_kinds(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    ctx.write(&ctx.path("a.txt"), b"a").await?;
    ctx.write(&ctx.path(".hidden"), b"h").await?;
    ok(
        fs.create_dir_all(&ctx.path("sub")).await,
        "create_dir_all(sub)",
    )?;
    ctx.symlink(&ctx.path("link"), Path::new("a.txt"))?;
    ctx.symlink(&ctx.path("dir_link"), Path::new("sub"))?;

    let entries = ok(fs.read_dir(&ctx.dir).await, "read_dir")?;
    let mut listed: Vec<(String, FileKind)> = entries
        .iter()
        .map(|entry| (entry.name.to_string_lossy().into_owned(), entry.kind))
        .collect();
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    let expected = [
        (".hidden", FileKind::File),
        ("a.txt", FileKind::File),
        ("dir_link", FileKind::Symlink),
        ("link", FileKind::Symlink),
        ("sub", FileKind::Directory),
    ];
    let matches = listed.len() == expected.len()
        && listed
            .iter()
            .zip(expected)
            .all(|(got, want)| got.0 == want.0 && got.1 == want.1);
    ensure(matches, || {
        format!("read_dir lists {listed:?}, expected {expected:?}")
    })?;

    let empty = ctx.names(&ctx.path("sub")).await?;
    ensure(empty.is_empty(), || {
        format!("read_dir of an empty directory lists {empty:?}")
    })?;
    ctx.write(&ctx.path("sub/inner.txt"), b"i").await?;
    let via_link = ctx.names(&ctx.path("dir_link")).await?;
    ensure(via_link == ["inner.txt"], || {
        format!("read_dir through a symlinked directory lists {via_link:?}, expected [inner.txt]")
    })
}

/// `canonicalize` resolves relative, absolute and chained links, `.` and `..`,
/// and fails on a missing path.
pub(super) async fn canonicalize_resolves_symlinks(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    let base = ok(
        fs.canonicalize(&ctx.dir).await,
        "canonicalize of the check's directory",
    )?;
    ensure(base.is_absolute(), || {
        format!("canonicalize gave a relative path {}", base.display())
    })?;
    ok(
        fs.create_dir_all(&ctx.path("real")).await,
        "create_dir_all(real)",
    )?;
    ctx.write(&ctx.path("real/f.txt"), b"f").await?;
    ctx.symlink(&ctx.path("alias"), Path::new("real"))?;
    ctx.symlink(&ctx.path("absolute"), &ctx.path("real"))?;
    ctx.symlink(&ctx.path("chain"), Path::new("alias/f.txt"))?;
    let real_dir = base.join("real");
    let real_file = real_dir.join("f.txt");
    let cases = [
        ("alias", &real_dir),
        ("alias/f.txt", &real_file),
        ("absolute/f.txt", &real_file),
        ("chain", &real_file),
        ("real/./../alias/f.txt", &real_file),
        ("real", &real_dir),
    ];
    for (relative, expected) in cases {
        let resolved = ok(
            fs.canonicalize(&ctx.path(relative)).await,
            &format!("canonicalize({relative})"),
        )?;
        ensure(&resolved == expected, || {
            format!(
                "canonicalize({relative}) gave {}, expected {}",
                resolved.display(),
                expected.display()
            )
        })?;
    }
    for relative in ["missing", "alias/missing"] {
        let path = ctx.path(relative);
        expect_error(
            fs.canonicalize(&path).await,
            &[FsErrorKind::NotFound],
            &path,
            &format!("canonicalize({relative})"),
        )?;
    }
    Ok(())
}

/// `create_dir_all` creates every level, succeeds when they exist, and
/// creates through a symlinked directory.
pub(super) async fn create_dir_all_is_nested_and_idempotent(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    let deep = ctx.path("a/b/c");
    ok(fs.create_dir_all(&deep).await, "create_dir_all(a/b/c)")?;
    ok(
        fs.create_dir_all(&deep).await,
        "create_dir_all(a/b/c) again",
    )?;
    ok(
        fs.create_dir_all(&ctx.path("a")).await,
        "create_dir_all(a) when it exists",
    )?;
    for relative in ["a", "a/b", "a/b/c"] {
        let stat = ok(
            fs.metadata(&ctx.path(relative)).await,
            &format!("metadata({relative})"),
        )?;
        ensure(stat.is_dir(), || {
            format!("create_dir_all made {relative} a {:?}", stat.kind)
        })?;
    }
    let listed = ctx.names(&ctx.path("a/b")).await?;
    ensure(listed == ["c"], || {
        format!("a/b lists {listed:?}, expected [c]")
    })?;
    ctx.symlink(&ctx.path("alias"), Path::new("a"))?;
    ok(
        fs.create_dir_all(&ctx.path("alias/x/y")).await,
        "create_dir_all(alias/x/y)",
    )?;
    let stat = ok(fs.metadata(&ctx.path("a/x/y")).await, "metadata(a/x/y)")?;
    ensure(stat.is_dir(), || {
        "create_dir_all through a symlink did not create a/x/y".to_owned()
    })?;
    let kind = ok(
        fs.symlink_metadata(&ctx.path("alias")).await,
        "symlink_metadata(alias)",
    )?
    .kind;
    ensure(kind == FileKind::Symlink, || {
        format!("alias became a {kind:?}")
    })
}

/// The home directory, where there is one, is absolute.
pub(super) async fn home_dir_is_absolute(ctx: &Ctx<'_>) -> CheckResult {
    match ctx.fs.home_dir() {
        Some(home) => ensure(home.is_absolute(), || {
            format!("home_dir is relative: {}", home.display())
        }),
        None => Ok(()),
    }
}

/// `remove_dir` refuses a directory that holds anything (it protects user data when
/// a failed nested write undoes the directories it created) and removes an empty one.
/// An adapter that cannot remove directories reports `Unsupported` for both.
pub(super) async fn remove_dir_refuses_a_non_empty_directory(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    let (full, nested, empty) = (ctx.path("full"), ctx.path("nested"), ctx.path("empty"));
    ok(fs.create_dir_all(&full).await, "create_dir_all(full)")?;
    ctx.write(&full.join("keep.txt"), b"user data").await?;
    ok(
        fs.create_dir_all(&nested.join("sub")).await,
        "create_dir_all(nested/sub)",
    )?;
    ok(fs.create_dir_all(&empty).await, "create_dir_all(empty)")?;
    let mut unsupported = false;
    for dir in [&full, &nested] {
        match fs.remove_dir(dir).await {
            Ok(()) => {
                return Err(format!(
                    "remove_dir removed the non-empty directory {}",
                    dir.display()
                ));
            }
            Err(error) => unsupported |= error.kind == FsErrorKind::Unsupported,
        }
    }
    let kept = ok(fs.read(&full.join("keep.txt")).await, "read(full/keep.txt)")?;
    ensure(kept == b"user data", || {
        "remove_dir changed the contents of a directory it refused".to_owned()
    })?;
    let stat = ok(
        fs.metadata(&nested.join("sub")).await,
        "metadata(nested/sub)",
    )?;
    ensure(stat.is_dir(), || "nested/sub is gone".to_owned())?;
    match fs.remove_dir(&empty).await {
        Ok(()) => {
            let gone = fs.metadata(&empty).await;
            ensure(
                gone.as_ref()
                    .is_err_and(|error| error.kind == FsErrorKind::NotFound),
                || format!("remove_dir(empty) left it: {gone:?}"),
            )
        }
        Err(error) if error.kind == FsErrorKind::Unsupported && unsupported => Ok(()),
        Err(error) => Err(format!("remove_dir(empty) failed: {error}")),
    }
}

/// `remove_file` unlinks a file, and a symlink without touching its target;
/// a missing file is `NotFound`. An adapter that cannot remove files reports
/// `Unsupported`.
pub(super) async fn remove_file_unlinks_a_file_or_a_link_never_its_target(
    ctx: &Ctx<'_>,
) -> CheckResult {
    let fs = &ctx.fs;
    let (file, target, link) = (
        ctx.path("file.txt"),
        ctx.path("target.txt"),
        ctx.path("link"),
    );
    ctx.write(&file, b"x").await?;
    ctx.write(&target, b"kept").await?;
    ctx.symlink(&link, Path::new("target.txt"))?;
    match fs.remove_file(&file).await {
        Ok(()) => {}
        Err(error) if error.kind == FsErrorKind::Unsupported => return Ok(()),
        Err(error) => return Err(format!("remove_file(file.txt) failed: {error}")),
    }
    ok(fs.remove_file(&link).await, "remove_file(link)")?;
    let kept = ok(fs.read(&target).await, "read(target.txt)")?;
    ensure(kept == b"kept", || {
        "removing the link changed its target".to_owned()
    })?;
    let names = ctx.names(&ctx.dir).await?;
    ensure(names == ["target.txt"], || {
        format!("after the removals the directory holds {names:?}, expected [target.txt]")
    })?;
    let error = fs.remove_file(&file).await;
    ensure(
        error
            .as_ref()
            .is_err_and(|error| error.kind == FsErrorKind::NotFound),
        || format!("remove_file of a missing file: {error:?}"),
    )
}
