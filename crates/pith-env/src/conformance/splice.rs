//! Spliced writes ([`FileSystem::write_spliced`](crate::FileSystem::write_spliced)).

use std::path::Path;

use super::{CheckResult, Ctx, ensure, expect_error, ok};
use crate::{FsErrorKind, Splice};

fn splice(start: u64, end: u64, bytes: &[u8]) -> Splice {
    Splice {
        range: start..end,
        bytes: bytes.to_vec(),
    }
}

/// Replacing, inserting and deleting ranges gives the old bytes with those
/// ranges changed; the permissions and a symlink stay as `write_atomic` keeps them.
pub(super) async fn write_spliced_replaces_ranges(ctx: &Ctx<'_>) -> CheckResult {
    let path = ctx.path("spliced.txt");
    let link = ctx.path("link.txt");
    let old: Vec<u8> = (0..20_000)
        .flat_map(|n| format!("line {n}\n").into_bytes())
        .collect();
    ctx.write(&path, &old).await?;
    ctx.symlink(&link, Path::new("spliced.txt"))?;
    ctx.set_mode(&path, 0o640)?;
    let len = old.len() as u64;
    let splices = [
        splice(0, 0, b"inserted\n"),
        splice(7, 14, b"ONE\n"),
        splice(100_000, 100_010, b""),
        splice(len - 3, len, b"end\n"),
    ];
    ok(ctx.fs.write_spliced(&link, &splices).await, "write_spliced")?;
    let mut expected = b"inserted\n".to_vec();
    expected.extend_from_slice(&old[..7]);
    expected.extend_from_slice(b"ONE\n");
    expected.extend_from_slice(&old[14..100_000]);
    expected.extend_from_slice(&old[100_010..old.len() - 3]);
    expected.extend_from_slice(b"end\n");
    ctx.expect_contents(&path, &expected, "after write_spliced")
        .await?;
    let metadata = ok(ctx.fs.symlink_metadata(&link).await, "symlink_metadata")?;
    ensure(metadata.kind == crate::FileKind::Symlink, || {
        "write_spliced through a symlink replaced the link".to_owned()
    })?;
    if let Some(mode) = ok(ctx.fs.metadata(&path).await, "metadata")?.mode {
        ensure(mode & 0o7777 == 0o640, || {
            format!("write_spliced left mode {:o}, not 640", mode & 0o7777)
        })?;
    }
    ok(ctx.fs.write_spliced(&path, &[]).await, "write_spliced([])")?;
    ctx.expect_contents(&path, &expected, "after an empty write_spliced")
        .await
}

/// Splices out of order, overlapping or past the end are refused and the
/// file is untouched.
pub(super) async fn write_spliced_refuses_bad_ranges(ctx: &Ctx<'_>) -> CheckResult {
    let path = ctx.path("small.txt");
    ctx.write(&path, b"0123456789").await?;
    let cases: [&[Splice]; 3] = [
        &[splice(5, 6, b"x"), splice(1, 2, b"y")],
        &[splice(1, 5, b"x"), splice(4, 6, b"y")],
        &[splice(8, 11, b"x")],
    ];
    for splices in cases {
        expect_error(
            ctx.fs.write_spliced(&path, splices).await,
            &[FsErrorKind::InvalidInput],
            &path,
            &format!("write_spliced({splices:?})"),
        )?;
    }
    ctx.expect_contents(&path, b"0123456789", "after refused splices")
        .await
}
