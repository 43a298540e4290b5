//! Atomic writes: readers and crashes see the old file or the new one, never a mixture.
//!
//! On Linux the new bytes go to an unnamed file (`O_TMPFILE`) in the target's
//! directory: written, fsynced, then given a temp name with
//! `linkat("/proc/self/fd/N", AT_SYMLINK_FOLLOW)` and renamed over the target
//! at once. A writer killed before the link leaves nothing behind (the kernel
//! frees the unnamed file); only a kill in the microseconds between link and
//! rename leaves a `.<name>.<random>.pith-tmp` file. Where `O_TMPFILE` or the
//! link is not available (some file systems, no `/proc`, other systems) a named
//! temp file is created, written, fsynced and renamed, which a kill leaves
//! behind. Either way the directory is fsynced after the rename.

use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::{FsError, FsErrorKind};

/// Symlinks followed at most when writing through a chain of links (Linux's own limit).
const MAX_SYMLINK_HOPS: usize = 40;
/// What every temp file's name ends with.
const TEMP_SUFFIX: &str = ".pith-tmp";

/// Follows symlinks at `path` (dangling ones too) to the path a write must replace.
fn write_target(path: &Path) -> Result<PathBuf, FsError> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let link = fs::read_link(&current).map_err(|e| FsError::from_io(e, &current))?;
                current = match current.parent() {
                    Some(parent) => parent.join(link),
                    None => link,
                };
            }
            Ok(_) => return Ok(current),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(current),
            Err(error) => return Err(FsError::from_io(error, &current)),
        }
    }
    Err(FsError::new(FsErrorKind::SymlinkLoop, path))
}

/// What one write replaces.
struct Target<'a> {
    /// The path the caller named (errors name it).
    path: &'a Path,
    /// `path` with its symlinks followed: the file the rename replaces.
    file: PathBuf,
    /// The directory holding `file`.
    directory: PathBuf,
    /// The start of every temp name: `.` and a short prefix of the file's name.
    prefix: String,
    /// The replaced file's metadata, when it exists.
    existing: Option<fs::Metadata>,
}

impl Target<'_> {
    fn error(&self, error: io::Error) -> FsError {
        FsError::from_io(error, self.path)
    }
}

/// Writes the new content of a file into its (empty) temp file. It may be
/// called a second time, on a fresh temp file, when the first way fails.
pub(super) type Fill<'a> = &'a mut dyn FnMut(&mut File) -> io::Result<()>;

/// Writes `contents` to `path` atomically; runs on the blocking pool.
pub(super) fn write_atomic_blocking(path: &Path, contents: &[u8]) -> Result<(), FsError> {
    write_atomic_filled(path, &mut |file| file.write_all(contents))
}

/// Replaces `path` atomically with what `fill` writes; runs on the blocking pool.
pub(super) fn write_atomic_filled(path: &Path, fill: Fill<'_>) -> Result<(), FsError> {
    let file = write_target(path)?;
    let existing = match fs::metadata(&file) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(FsError::new(FsErrorKind::IsADirectory, path));
        }
        Ok(metadata) => {
            // A FIFO, socket or device is not replaced by a regular file.
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                if let Some(kind) = super::beneath::special_kind(metadata.mode()) {
                    return Err(FsError::new(FsErrorKind::SpecialFile, path).with_detail(kind));
                }
            }
            Some(metadata)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(FsError::from_io(e, path)),
    };
    let directory = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // A short prefix of the name keeps the temp name under NAME_MAX.
    let name: String = file
        .file_name()
        .map(|name| name.to_string_lossy().chars().take(64).collect())
        .unwrap_or_default();
    let target = Target {
        path,
        file,
        directory,
        prefix: format!(".{name}."),
        existing,
    };
    if !unnamed::write_filled(&target, fill)? {
        write_named_filled(&target, fill)?;
    }
    // Durability of the rename; some file systems refuse to fsync a directory.
    if let Ok(dir) = File::open(&target.directory) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// The portable path: a named temp file, written, fsynced and renamed.
#[cfg(test)]
fn write_named(target: &Target<'_>, contents: &[u8]) -> Result<(), FsError> {
    write_named_filled(target, &mut |file| file.write_all(contents))
}

fn write_named_filled(target: &Target<'_>, fill: Fill<'_>) -> Result<(), FsError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(&target.prefix).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // New files get the usual 0o666 minus the umask, as with open(2).
        builder.permissions(Permissions::from_mode(0o666));
    }
    // A missing directory is reported as the target's own path.
    let mut temp = builder
        .tempfile_in(&target.directory)
        .map_err(|e| target.error(e))?;
    if let Some(existing) = &target.existing {
        keep_owner_and_mode(temp.as_file(), existing).map_err(|e| target.error(e))?;
    }
    fill(temp.as_file_mut()).map_err(|e| target.error(e))?;
    temp.as_file().sync_all().map_err(|e| target.error(e))?;
    temp.persist(&target.file)
        .map_err(|e| target.error(e.error))?;
    Ok(())
}

/// Gives the temp file the replaced file's permissions (exactly, not minus
/// the umask) and, where allowed, its owner.
#[cfg(unix)]
fn keep_owner_and_mode(temp: &File, existing: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    temp.set_permissions(Permissions::from_mode(existing.mode() & 0o7777))?;
    // Only root (or the owner keeping its own ids) may chown; a failure leaves
    // the writer as owner, which is what a plain write by this user means anyway.
    let _ = std::os::unix::fs::fchown(temp, Some(existing.uid()), Some(existing.gid()));
    Ok(())
}

#[cfg(not(unix))]
fn keep_owner_and_mode(temp: &File, existing: &fs::Metadata) -> io::Result<()> {
    temp.set_permissions(existing.permissions())
}

/// The `O_TMPFILE` path (Linux).
#[cfg(target_os = "linux")]
mod unnamed {
    use std::ffi::CString;
    use std::fs::{File, OpenOptions};
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    use std::path::{Path, PathBuf};

    use super::{Fill, TEMP_SUFFIX, Target, keep_owner_and_mode};
    use crate::FsError;

    /// Temp names tried before giving up on the link (a clash needs a 64-bit collision).
    const NAME_ATTEMPTS: usize = 8;

    /// Writes through an unnamed file. `Ok(false)`: this path is not available
    /// here and nothing was changed; the caller falls back to a named temp file.
    #[cfg(test)]
    pub(super) fn write(target: &Target<'_>, contents: &[u8]) -> Result<bool, FsError> {
        use std::io::Write as _;
        write_filled(target, &mut |file| file.write_all(contents))
    }

    pub(super) fn write_filled(target: &Target<'_>, fill: Fill<'_>) -> Result<bool, FsError> {
        // Any failure to open (EOPNOTSUPP, EISDIR on kernels without O_TMPFILE,
        // EINVAL, or a real error such as a missing directory) falls back, so the
        // named path reports real errors exactly as it always has.
        let Ok(mut file) = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .mode(0o666)
            .open(&target.directory)
        else {
            return Ok(false);
        };
        if let Some(existing) = &target.existing {
            keep_owner_and_mode(&file, existing).map_err(|e| target.error(e))?;
        }
        fill(&mut file).map_err(|e| target.error(e))?;
        file.sync_all().map_err(|e| target.error(e))?;
        let Some(temp) = link(&file, target) else {
            return Ok(false);
        };
        if let Err(error) = std::fs::rename(&temp, &target.file) {
            let _ = std::fs::remove_file(&temp);
            return Err(target.error(error));
        }
        Ok(true)
    }

    /// Gives the unnamed file a fresh temp name in the target's directory.
    /// `None` when it cannot be linked (no `/proc`, a file system that refuses).
    fn link(file: &File, target: &Target<'_>) -> Option<PathBuf> {
        let proc_path = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
        for _ in 0..NAME_ATTEMPTS {
            let temp = target.directory.join(format!(
                "{}{:016x}{TEMP_SUFFIX}",
                target.prefix,
                rand::random::<u64>()
            ));
            match linkat_proc(&proc_path, &temp) {
                Ok(()) => return Some(temp),
                Err(error) if error.raw_os_error() == Some(libc::EEXIST) => {}
                Err(_) => return None,
            }
        }
        None
    }

    fn linkat_proc(proc_path: &CString, temp: &Path) -> io::Result<()> {
        let temp = CString::new(temp.as_os_str().as_bytes())?;
        // SAFETY: both paths are valid NUL-terminated strings that outlive the call.
        let result = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                proc_path.as_ptr(),
                libc::AT_FDCWD,
                temp.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if result == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Elsewhere only the named temp file exists.
#[cfg(not(target_os = "linux"))]
mod unnamed {
    use super::{Fill, Target};
    use crate::FsError;

    pub(super) fn write_filled(_target: &Target<'_>, _fill: Fill<'_>) -> Result<bool, FsError> {
        Ok(false)
    }
}

#[cfg(test)]
#[path = "atomic_tests.rs"]
mod tests;
