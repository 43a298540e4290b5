//! Reading: whole files, windows and streams.

use super::{CheckResult, Ctx, ensure, expect_bytes, ok};

/// Bytes 0..len with a pattern that makes misplaced windows visible.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|index| (index % 251) as u8).collect()
}

/// What is written reads back exactly: text, empty, every byte value, and a
/// shorter rewrite leaves no stale tail.
pub(super) async fn write_then_read(ctx: &Ctx<'_>) -> CheckResult {
    let path = ctx.path("hello.txt");
    ctx.write(&path, b"hello\n").await?;
    ctx.expect_contents(&path, b"hello\n", "after a write")
        .await?;

    ctx.write(&path, b"").await?;
    ctx.expect_contents(&path, b"", "after writing nothing")
        .await?;

    let mut bytes: Vec<u8> = (0..=255).collect();
    bytes.extend_from_slice(b"\xff\xfe not utf-8 \r\n\0");
    ctx.write(&path, &bytes).await?;
    ctx.expect_contents(&path, &bytes, "of every byte value")
        .await?;

    ctx.write(&path, b"a much longer first version\n").await?;
    ctx.write(&path, b"short\n").await?;
    ctx.expect_contents(&path, b"short\n", "after a shorter rewrite")
        .await?;
    let metadata = ok(ctx.fs.metadata(&path).await, "metadata after a rewrite")?;
    ensure(metadata.is_file() && metadata.len == 6, || {
        format!("metadata after writing 6 bytes says {metadata:?}")
    })
}

/// `read_range` returns the asked window, fewer bytes at the end, nothing past it.
pub(super) async fn read_range_windows(ctx: &Ctx<'_>) -> CheckResult {
    let path = ctx.path("data.bin");
    let data = pattern(1000);
    ctx.write(&path, &data).await?;
    let cases: [(u64, usize, std::ops::Range<usize>); 8] = [
        (0, 10, 0..10),
        (100, 50, 100..150),
        (990, 50, 990..1000),
        (999, 1, 999..1000),
        (1000, 10, 1000..1000),
        (5000, 10, 1000..1000),
        (10, 0, 10..10),
        (0, 1 << 20, 0..1000),
    ];
    for (offset, max_len, expected) in cases {
        let what = format!("read_range(offset {offset}, max_len {max_len})");
        let window = ok(ctx.fs.read_range(&path, offset, max_len).await, &what)?;
        expect_bytes(&window, &data[expected], &what)?;
    }
    Ok(())
}

/// `open` streams a file in chunks no larger than the buffer, then reports
/// end of file (again and again).
pub(super) async fn open_streams_in_chunks(ctx: &Ctx<'_>) -> CheckResult {
    let (large, small) = (ctx.path("large.bin"), ctx.path("small.bin"));
    let (large_data, small_data) = (pattern(300_000), pattern(2000));
    ctx.write(&large, &large_data).await?;
    ctx.write(&small, &small_data).await?;
    let cases = [
        (&large, &large_data, 4096),
        (&large, &large_data, 1 << 20),
        (&small, &small_data, 7),
    ];
    for (path, data, chunk_size) in cases {
        let what = format!(
            "streaming {} bytes with a {chunk_size}-byte buffer",
            data.len()
        );
        let mut reader = ok(ctx.fs.open(path).await, &format!("open for {what}"))?;
        let mut buffer = vec![0u8; chunk_size];
        let mut collected = Vec::new();
        loop {
            let count = ok(reader.read_chunk(&mut buffer).await, &what)?;
            ensure(count <= chunk_size, || {
                format!("{what}: read_chunk returned {count}")
            })?;
            if count == 0 {
                break;
            }
            collected.extend_from_slice(&buffer[..count]);
            ensure(collected.len() <= data.len(), || {
                format!("{what}: read more bytes than the file holds")
            })?;
        }
        expect_bytes(&collected, data, &what)?;
        let again = ok(reader.read_chunk(&mut buffer).await, &what)?;
        ensure(again == 0, || {
            format!("{what}: read_chunk after end of file returned {again}")
        })?;
    }
    let empty = ctx.path("empty");
    ctx.write(&empty, b"").await?;
    let mut reader = ok(ctx.fs.open(&empty).await, "open of an empty file")?;
    let count = ok(
        reader.read_chunk(&mut [0u8; 16]).await,
        "read of an empty file",
    )?;
    ensure(count == 0, || {
        format!("read_chunk of an empty file returned {count}")
    })
}

/// `count_lines` reads past bytes counting their lines, between reads of the
/// same stream: a read after it continues after what it counted, and at end
/// of file it counts what is left.
pub(super) async fn count_lines_reads_past_between_reads(ctx: &Ctx<'_>) -> CheckResult {
    let path = ctx.path("lines.txt");
    let mut data = Vec::new();
    let mut line = 0;
    while data.len() < 3 << 20 {
        data.extend_from_slice(format!("line {line} {}\n", "x".repeat(line % 150)).as_bytes());
        line += 1;
    }
    data.extend_from_slice(b"no newline at the end");
    ctx.write(&path, &data).await?;
    let mut reader = ok(ctx.fs.open(&path).await, "open")?;
    let mut at = 0;
    // Reads and counts, in turn: (bytes to read, bytes to count).
    let steps: [(usize, u64); 5] = [
        (1000, 50),
        (10, 100_000),
        (300_000, 2 << 20),
        (7, 3),
        (0, u64::MAX),
    ];
    for (read, count) in steps {
        let mut buffer = vec![0u8; read];
        let mut filled = 0;
        while filled < read {
            let n = ok(reader.read_chunk(&mut buffer[filled..]).await, "read_chunk")?;
            ensure(n > 0, || {
                format!("end of file at {} of {}", at + filled, data.len())
            })?;
            filled += n;
        }
        expect_bytes(
            &buffer,
            &data[at..at + read],
            &format!("{read} bytes read at {at}"),
        )?;
        at += read;
        let counted = ok(reader.count_lines(count).await, "count_lines")?;
        let end = usize::try_from(count)
            .map_or(data.len(), |count| at.saturating_add(count).min(data.len()));
        let mut expected = crate::LineCount::default();
        expected.add(&data[at..end]);
        ensure(counted == expected, || {
            format!("count_lines({count}) at {at}: got {counted:?}, expected {expected:?}")
        })?;
        at = end;
    }
    let again = ok(
        reader.read_chunk(&mut [0u8; 16]).await,
        "read after the end",
    )?;
    ensure(again == 0, || {
        format!("read_chunk after counting to the end returned {again}")
    })
}
