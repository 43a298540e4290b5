//! Error kinds, and the path every error carries.

use std::path::Path;

use super::{CheckResult, Ctx, ensure, expect_error, ok};
use crate::{FileKind, FsErrorKind};

use FsErrorKind::{AlreadyExists, IsADirectory, NotADirectory, NotFound, SymlinkLoop};

/// Every operation on a missing path fails with `not_found` naming that path.
pub(super) async fn missing_paths_are_not_found(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    for path in [ctx.path("missing"), ctx.path("missing/child.txt")] {
        let shown = path.display();
        expect_error(
            fs.read(&path).await,
            &[NotFound],
            &path,
            &format!("read({shown})"),
        )?;
        expect_error(
            fs.read_range(&path, 0, 10).await,
            &[NotFound],
            &path,
            &format!("read_range({shown})"),
        )?;
        expect_error(
            fs.open(&path).await.map(|_| ()),
            &[NotFound],
            &path,
            &format!("open({shown})"),
        )?;
        expect_error(
            fs.metadata(&path).await,
            &[NotFound],
            &path,
            &format!("metadata({shown})"),
        )?;
        expect_error(
            fs.symlink_metadata(&path).await,
            &[NotFound],
            &path,
            &format!("symlink_metadata({shown})"),
        )?;
        expect_error(
            fs.read_dir(&path).await,
            &[NotFound],
            &path,
            &format!("read_dir({shown})"),
        )?;
        expect_error(
            fs.canonicalize(&path).await,
            &[NotFound],
            &path,
            &format!("canonicalize({shown})"),
        )?;
    }
    Ok(())
}

/// A directory cannot be read or written as a file.
pub(super) async fn directories_are_not_files(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    let dir = ctx.path("sub");
    ok(fs.create_dir_all(&dir).await, "create_dir_all(sub)")?;
    expect_error(
        fs.read(&dir).await,
        &[IsADirectory],
        &dir,
        "read of a directory",
    )?;
    expect_error(
        fs.read_range(&dir, 0, 10).await,
        &[IsADirectory],
        &dir,
        "read_range of a directory",
    )?;
    // Opening a directory may succeed (as open(2) does); reading from it must not.
    match fs.open(&dir).await {
        Ok(mut reader) => expect_error(
            reader.read_chunk(&mut [0u8; 16]).await,
            &[IsADirectory],
            &dir,
            "read_chunk of an opened directory",
        )?,
        Err(error) => expect_error::<()>(Err(error), &[IsADirectory], &dir, "open of a directory")?,
    }
    expect_error(
        fs.write_atomic(&dir, b"x").await,
        &[IsADirectory],
        &dir,
        "write_atomic over a directory",
    )?;
    let metadata = ok(fs.metadata(&dir).await, "metadata after a refused write")?;
    ensure(metadata.is_dir(), || {
        format!("a refused write_atomic over a directory left {metadata:?}")
    })
}

/// A file in the middle of a path is `not_a_directory`.
pub(super) async fn files_are_not_directories(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    let file = ctx.path("file.txt");
    ctx.write(&file, b"keep").await?;
    let through = file.join("child");
    expect_error(
        fs.read(&through).await,
        &[NotADirectory],
        &through,
        "read through a file",
    )?;
    expect_error(
        fs.metadata(&through).await,
        &[NotADirectory],
        &through,
        "metadata through a file",
    )?;
    expect_error(
        fs.write_atomic(&through, b"x").await,
        &[NotADirectory],
        &through,
        "write_atomic through a file",
    )?;
    expect_error(
        fs.create_dir_all(&through).await,
        &[NotADirectory],
        &through,
        "create_dir_all through a file",
    )?;
    expect_error(
        fs.read_dir(&file).await,
        &[NotADirectory],
        &file,
        "read_dir of a file",
    )?;
    expect_error(
        fs.create_dir_all(&file).await,
        &[AlreadyExists, NotADirectory],
        &file,
        "create_dir_all over a file",
    )?;
    ctx.expect_contents(&file, b"keep", "after the refused operations")
        .await
}

/// Symlinks that point at each other fail with `symlink_loop`; `lstat` still works.
pub(super) async fn symlink_loops_are_reported(ctx: &Ctx<'_>) -> CheckResult {
    let fs = &ctx.fs;
    let (first, second, itself) = (ctx.path("a"), ctx.path("b"), ctx.path("self"));
    ctx.symlink(&first, Path::new("b"))?;
    ctx.symlink(&second, &first)?;
    ctx.symlink(&itself, Path::new("self"))?;
    for path in [&first, &itself] {
        let shown = path.display();
        expect_error(
            fs.read(path).await,
            &[SymlinkLoop],
            path,
            &format!("read({shown})"),
        )?;
        expect_error(
            fs.metadata(path).await,
            &[SymlinkLoop],
            path,
            &format!("metadata({shown})"),
        )?;
        expect_error(
            fs.canonicalize(path).await,
            &[SymlinkLoop],
            path,
            &format!("canonicalize({shown})"),
        )?;
        let link = ok(
            fs.symlink_metadata(path).await,
            &format!("symlink_metadata({shown})"),
        )?;
        ensure(link.kind == FileKind::Symlink, || {
            format!(
                "symlink_metadata({shown}) of a looping link says {:?}",
                link.kind
            )
        })?;
    }
    let inner = first.join("x");
    expect_error(
        fs.read(&inner).await,
        &[SymlinkLoop],
        &inner,
        "read through a looping link",
    )
}
