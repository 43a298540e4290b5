use std::fs::{self, Permissions};
use std::io::Write as _;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use super::super::atomic::tests::names;
use super::super::temp::{TempIn, Unnamed};
use super::*;

fn directory(path: &Path) -> OwnedFd {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    rfs::open(path, flags, Mode::empty()).unwrap()
}

/// The temp-file writer of `dir` for files named `name`, staging in `staging`.
fn writer<'a>(dir: &'a OwnedFd, name: &str, staging: &'a OwnedFd) -> TempIn<'a> {
    TempIn {
        dir: dir.as_fd(),
        prefix: format!(".{name}."),
        staging: Some(staging.as_fd()),
    }
}

/// Links an unnamed file with `contents` for `name` in `dir`, staging through
/// `staging`, and returns what became of it, without renaming it (as a writer
/// killed between link and rename leaves it).
fn link<'a>(
    temp: &'a TempIn<'a>,
    name: &str,
    contents: &[u8],
    existing: Option<&rfs::Stat>,
) -> Unnamed<'a> {
    temp.unnamed(
        OsStr::new(name),
        &mut |_, _, out| out.write_all(contents),
        existing,
    )
    .unwrap()
}

#[test]
fn a_replacing_file_is_named_in_the_staging_directory_and_renamed_from_there() {
    let target = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    fs::write(target.path().join("f.txt"), "old").unwrap();
    let dir = directory(target.path());
    let stage = open(staging.path(), STALE_AFTER).unwrap();
    let temp = writer(&dir, "f.txt", &stage);
    let existing = rfs::statat(dir.as_fd(), "f.txt", AtFlags::empty()).unwrap();
    let Unnamed::Linked(staged) = link(&temp, "f.txt", b"new", Some(&existing)) else {
        panic!("the unnamed file was not linked");
    };
    // Killed here, the writer would leave its stray in the staging directory
    // only: the user's directory holds just the old file.
    assert_eq!(names(target.path()), ["f.txt"]);
    let staged_names = names(staging.path());
    assert_eq!(staged_names.len(), 1, "{staged_names:?}");
    assert!(staged_names[0].starts_with(".f.txt.") && staged_names[0].ends_with(".pith-tmp"));
    assert_eq!(
        fs::read_to_string(target.path().join("f.txt")).unwrap(),
        "old"
    );
    temp.rename_staged(&staged, OsStr::new("f.txt")).unwrap();
    assert_eq!(
        fs::read_to_string(target.path().join("f.txt")).unwrap(),
        "new"
    );
    assert_eq!(names(target.path()), ["f.txt"]);
    assert!(names(staging.path()).is_empty());
}

#[test]
fn a_new_file_is_linked_under_its_own_name_with_no_temp_name_anywhere() {
    let target = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    let dir = directory(target.path());
    let stage = open(staging.path(), STALE_AFTER).unwrap();
    let temp = writer(&dir, "n.txt", &stage);
    assert!(matches!(
        link(&temp, "n.txt", b"fresh", None),
        Unnamed::Placed
    ));
    assert_eq!(
        fs::read_to_string(target.path().join("n.txt")).unwrap(),
        "fresh"
    );
    assert_eq!(names(target.path()), ["n.txt"]);
    assert!(names(staging.path()).is_empty());
    // A name that appeared since the caller looked is replaced by a rename, as before.
    fs::write(target.path().join("late.txt"), "raced in").unwrap();
    let Unnamed::Linked(staged) = link(&temp, "late.txt", b"mine", None) else {
        panic!("the unnamed file was not linked");
    };
    temp.rename_staged(&staged, OsStr::new("late.txt")).unwrap();
    assert_eq!(
        fs::read_to_string(target.path().join("late.txt")).unwrap(),
        "mine"
    );
    assert_eq!(names(target.path()), ["late.txt", "n.txt"]);
}

#[test]
fn a_staging_directory_on_another_mount_falls_back_to_the_targets_directory() {
    let target = tempfile::tempdir().unwrap();
    fs::write(target.path().join("f.txt"), "old").unwrap();
    let dir = directory(target.path());
    // /proc is always another mount: a link into it fails with EXDEV.
    let elsewhere = directory(Path::new("/proc"));
    let temp = writer(&dir, "f.txt", &elsewhere);
    let existing = rfs::statat(dir.as_fd(), "f.txt", AtFlags::empty()).unwrap();
    let Unnamed::Linked(staged) = link(&temp, "f.txt", b"new", Some(&existing)) else {
        panic!("the unnamed file was not linked");
    };
    let here = names(target.path());
    assert_eq!(here.len(), 2, "{here:?}");
    assert!(here.iter().any(|name| name.ends_with(".pith-tmp")));
    temp.rename_staged(&staged, OsStr::new("f.txt")).unwrap();
    assert_eq!(names(target.path()), ["f.txt"]);
    assert_eq!(
        fs::read_to_string(target.path().join("f.txt")).unwrap(),
        "new"
    );
}

#[test]
fn opening_sweeps_strays_older_than_the_limit_and_keeps_the_rest() {
    let staging = tempfile::tempdir().unwrap();
    fs::write(staging.path().join(".a.1.pith-tmp"), "stray").unwrap();
    fs::create_dir(staging.path().join("sub")).unwrap();
    fs::set_permissions(staging.path(), Permissions::from_mode(0o700)).unwrap();
    // Just written: younger than a minute, kept (it may be a write in flight).
    assert!(open(staging.path(), STALE_AFTER).is_some());
    assert_eq!(names(staging.path()), [".a.1.pith-tmp", "sub"]);
    // Older than the limit: removed; a directory is not a stray.
    std::thread::sleep(Duration::from_millis(20));
    assert!(open(staging.path(), Duration::from_millis(10)).is_some());
    assert_eq!(names(staging.path()), ["sub"]);
}

#[test]
fn a_staging_directory_others_may_write_in_is_not_used_and_a_missing_one_is_made_private() {
    let base = tempfile::tempdir().unwrap();
    let shared = base.path().join("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, Permissions::from_mode(0o777)).unwrap();
    assert!(open(&shared, STALE_AFTER).is_none());
    let made = base.path().join("state/pith/staging");
    assert!(open(&made, STALE_AFTER).is_some());
    let meta = fs::metadata(&made).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o700);
    // A symbolic link in its place is not followed.
    let link = base.path().join("link");
    std::os::unix::fs::symlink(&made, &link).unwrap();
    assert!(open(&link, STALE_AFTER).is_none());
}
