use std::fs::{self, Permissions};
use std::os::unix::fs::PermissionsExt;

use super::*;

/// The names in `dir`, sorted.
pub(in crate::local::fs) fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[cfg(target_os = "linux")]
#[test]
fn the_unnamed_temp_file_replaces_the_target_keeps_its_mode_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.sh");
    fs::write(&path, "old").unwrap();
    fs::set_permissions(&path, Permissions::from_mode(0o750)).unwrap();
    // Every Linux file system pith is tested on (ext4, tmpfs, btrfs, xfs) has O_TMPFILE.
    assert!(write_unnamed(&path, b"new").unwrap());
    assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o750
    );
    assert_eq!(names(dir.path()), ["f.sh"]);
}

#[test]
fn a_missing_directory_is_reported_as_the_targets_own_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing/f.txt");
    let error = write_atomic_blocking(&path, b"x").unwrap_err();
    assert_eq!(error.kind, FsErrorKind::NotFound);
    assert_eq!(error.path, path);
}

#[test]
fn the_named_fallback_replaces_the_target_keeps_its_mode_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.sh");
    fs::write(&path, "old").unwrap();
    fs::set_permissions(&path, Permissions::from_mode(0o741)).unwrap();
    write_named(&path, b"new").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o741
    );
    assert_eq!(names(dir.path()), ["f.sh"]);
}

#[test]
fn new_files_get_0o666_minus_the_umask_on_both_paths() {
    let dir = tempfile::tempdir().unwrap();
    let named = dir.path().join("named.txt");
    write_named(&named, b"x").unwrap();
    let atomic = dir.path().join("atomic.txt");
    write_atomic_blocking(&atomic, b"x").unwrap();
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    // Read from /proc: umask(2) would change it for the other tests' threads.
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let umask = status
        .lines()
        .find_map(|line| line.strip_prefix("Umask:"))
        .unwrap();
    let umask = u32::from_str_radix(umask.trim(), 8).unwrap();
    assert_eq!(mode(&named), 0o666 & !umask, "umask {umask:03o}");
    assert_eq!(mode(&atomic), 0o666 & !umask, "umask {umask:03o}");
    assert_eq!(names(dir.path()), ["atomic.txt", "named.txt"]);
}

#[cfg(target_os = "linux")]
#[test]
fn a_streamed_write_whose_unnamed_temp_file_cannot_be_linked_lands_through_a_named_one() {
    // As where /proc is missing: the unnamed file was written from the
    // stream, which cannot be read twice; its bytes are copied instead.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bin");
    fs::write(&path, "old").unwrap();
    fs::set_permissions(&path, Permissions::from_mode(0o604)).unwrap();
    let content: Vec<u8> = (0..3_000_017u32).map(|i| (i % 253) as u8).collect();
    let (sender, mut stream) = crate::WriteStream::channel(content.len() as u64, 4);
    let chunks = content.clone();
    let feeder = std::thread::spawn(move || {
        for chunk in chunks.chunks(500_009) {
            sender.blocking_send(chunk.to_vec()).unwrap();
        }
    });
    super::super::temp::tests::REFUSE_LINK.with(|refuse| refuse.set(true));
    let result = write_atomic_streamed_blocking(&path, &mut stream);
    super::super::temp::tests::REFUSE_LINK.with(|refuse| refuse.set(false));
    feeder.join().unwrap();
    result.unwrap();
    assert!(fs::read(&path).unwrap() == content);
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o604
    );
    assert_eq!(names(dir.path()), ["f.bin"]);
}
