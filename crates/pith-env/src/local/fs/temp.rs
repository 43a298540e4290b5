//! The temp-file writer of every local write: a temp file in one directory
//! handle, written, fsynced and renamed over the target *relative to the same
//! handle*, so the directory the caller verified is the one written in.
//!
//! On Linux the new bytes go to an unnamed file (`O_TMPFILE`) in the directory:
//! written, fsynced, then given a name with
//! `linkat("/proc/self/fd/N", AT_SYMLINK_FOLLOW)`. A new file is linked under
//! its own name at once (no temp name at all). A file that exists is replaced
//! by a rename, which needs a name to rename from: the unnamed file is linked
//! under a temp name in pith's private staging directory (see [`staging`])
//! and renamed from there over the target, so a writer killed in the
//! microseconds between link and rename leaves its stray there, where the
//! next writer sweeps it, and nothing in the user's directory. Where the
//! staging directory is on another mount (or missing), the temp name
//! `.<name>.<random>.pith-tmp` is in the target's directory, as a kill in that
//! window then leaves it. A writer killed before the link leaves nothing
//! behind (the kernel frees the unnamed file). Where `O_TMPFILE` is not
//! available (some file systems, other systems) a named temp file is created
//! exclusively (`O_EXCL | O_NOFOLLOW`), written, fsynced and renamed, which a
//! kill leaves behind. Where the unnamed file was written but cannot be linked
//! (no `/proc`), the named one is filled by copying it: the bytes are written
//! by the caller once, as a stream can give them only once. On any failure the
//! temp file is unlinked relative to its handle, so nothing is left anywhere.
//!
//! [`staging`]: super::staging

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::BorrowedFd;

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::kind::mode_of;

/// What every temp file's name ends with.
pub(super) const TEMP_SUFFIX: &str = ".pith-tmp";

/// A temp file in one directory handle, renamed over a name in the same handle.
pub(super) struct TempIn<'a> {
    pub(super) dir: BorrowedFd<'a>,
    /// The start of every temp name: `.` and a short prefix of the file's name.
    pub(super) prefix: String,
    /// Where a replacing file gets its temp name first (see [`staging`]);
    /// `None` to use `dir` only.
    ///
    /// [`staging`]: super::staging
    pub(super) staging: Option<BorrowedFd<'a>>,
}

impl TempIn<'_> {
    fn temp_name(&self) -> OsString {
        OsString::from(format!(
            "{}{:016x}{TEMP_SUFFIX}",
            self.prefix,
            rand::random::<u64>()
        ))
    }

    /// Writes a temp file with `write` (keeping `existing`'s mode and owner) and
    /// renames it over `name`.
    pub(super) fn write_and_rename(
        &self,
        name: &OsStr,
        write: &mut Filler<'_>,
        existing: Option<&rfs::Stat>,
    ) -> Result<(), Errno> {
        #[cfg(target_os = "linux")]
        match self.unnamed(name, write, existing)? {
            Unnamed::Placed => return Ok(()),
            Unnamed::Linked(staged) => return self.rename_staged(&staged, name),
            Unnamed::Unavailable => {}
            // The bytes were written once (a stream cannot give them again):
            // the named temp file is filled from the unnamed one.
            Unnamed::Unlinked(mut filled) => {
                return self.named(
                    name,
                    &mut |_, _, out| {
                        io::Seek::seek(&mut filled, io::SeekFrom::Start(0))?;
                        io::copy(&mut filled, out).map(drop)
                    },
                    existing,
                );
            }
        }
        self.named(name, write, existing)
    }

    /// The portable path: a named temp file, created exclusively, written,
    /// fsynced and renamed.
    pub(super) fn named(
        &self,
        name: &OsStr,
        write: &mut Filler<'_>,
        existing: Option<&rfs::Stat>,
    ) -> Result<(), Errno> {
        let mut attempts = 0;
        let (file, temp) = loop {
            let temp = self.temp_name();
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rfs::openat(
                self.dir,
                temp.as_os_str(),
                flags,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => break (File::from(fd), temp),
                Err(Errno::EXIST) if attempts < 8 => attempts += 1,
                Err(errno) => return Err(errno),
            }
        };
        let mut file = file;
        if let Err(errno) = fill(self.dir, name, &mut file, write, existing) {
            let _ = rfs::unlinkat(self.dir, temp.as_os_str(), AtFlags::empty());
            return Err(errno);
        }
        drop(file);
        self.rename(&temp, name)
    }

    /// Fsyncs the directory, for the durability of the rename (some file
    /// systems refuse to fsync a directory: then it is skipped).
    pub(super) fn sync_dir(&self) {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if let Ok(handle) = rfs::openat(self.dir, ".", flags, Mode::empty()) {
            let _ = rfs::fsync(&handle);
        }
    }

    /// Renames `temp` over `name`; on failure removes `temp`.
    pub(super) fn rename(&self, temp: &OsStr, name: &OsStr) -> Result<(), Errno> {
        rename_from(self.dir, temp, self.dir, name)
    }

    /// Renames a linked unnamed file over `name`, then closes it (after the
    /// rename: the window in which a kill leaves the temp name is only
    /// between the two calls).
    #[cfg(target_os = "linux")]
    pub(super) fn rename_staged(&self, staged: &Staged<'_>, name: &OsStr) -> Result<(), Errno> {
        rename_from(staged.dir, &staged.temp, self.dir, name)
    }

    /// Writes an unnamed (`O_TMPFILE`) file in the directory and links it:
    /// under `name` when there is no file there, else under a temp name in
    /// the staging directory (or, where that cannot be, in this one).
    #[cfg(target_os = "linux")]
    pub(super) fn unnamed(
        &self,
        name: &OsStr,
        write: &mut Filler<'_>,
        existing: Option<&rfs::Stat>,
    ) -> Result<Unnamed<'_>, Errno> {
        // Readable too: when it cannot be linked, its bytes are copied.
        let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
        let Ok(fd) = rfs::openat(self.dir, ".", flags, Mode::from_raw_mode(0o666)) else {
            return Ok(Unnamed::Unavailable);
        };
        let mut file = File::from(fd);
        fill(self.dir, name, &mut file, write, existing)?;
        let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
        // A new file: its own name, unless one appeared meanwhile (then it is
        // replaced by a rename, as it would have been).
        if existing.is_none() {
            match link_unnamed(&proc_path, self.dir, name) {
                Ok(()) => return Ok(Unnamed::Placed),
                Err(Errno::EXIST) => {}
                Err(_) => return Ok(Unnamed::Unlinked(file)),
            }
        }
        for dir in self.staging.into_iter().chain([self.dir]) {
            for _ in 0..8 {
                let temp = self.temp_name();
                match link_unnamed(&proc_path, dir, &temp) {
                    Ok(()) => {
                        return Ok(Unnamed::Linked(Staged {
                            dir,
                            temp,
                            _file: file,
                        }));
                    }
                    Err(Errno::EXIST) => {}
                    // Another mount (EXDEV), or no link here: the next place.
                    Err(_) => break,
                }
            }
        }
        Ok(Unnamed::Unlinked(file))
    }
}

/// This process's staging directory for temp names (Linux only; see
/// [`staging`](super::staging)).
pub(super) fn staging() -> Option<BorrowedFd<'static>> {
    #[cfg(target_os = "linux")]
    return super::staging::staging();
    #[cfg(not(target_os = "linux"))]
    None
}

/// Renames `temp` in `from` over `name` in `to`; on failure removes `temp`.
fn rename_from(
    from: BorrowedFd<'_>,
    temp: &OsStr,
    to: BorrowedFd<'_>,
    name: &OsStr,
) -> Result<(), Errno> {
    if let Err(errno) = rfs::renameat(from, temp, to, name) {
        let _ = rfs::unlinkat(from, temp, AtFlags::empty());
        return Err(errno);
    }
    Ok(())
}

/// An unnamed temp file linked under a temp name, to be renamed over the target.
#[cfg(target_os = "linux")]
pub(super) struct Staged<'a> {
    /// The staging directory, or the target's own where that is not available.
    pub(super) dir: BorrowedFd<'a>,
    pub(super) temp: OsString,
    /// Kept open until the rename is done.
    _file: File,
}

/// What became of an unnamed temp file.
#[cfg(target_os = "linux")]
pub(super) enum Unnamed<'a> {
    /// Written, fsynced and linked under the target's own name (it was new).
    Placed,
    /// Written, fsynced and linked under a temp name.
    Linked(Staged<'a>),
    /// `O_TMPFILE` is not available here: nothing was created or written.
    Unavailable,
    /// Written and fsynced, but it could not be given a name (no `/proc`, a
    /// file system that refuses the link): the file, to copy from.
    Unlinked(File),
}

#[cfg(target_os = "linux")]
fn link_unnamed(proc_path: &str, dir: BorrowedFd<'_>, temp: &OsStr) -> Result<(), Errno> {
    #[cfg(test)]
    if tests::REFUSE_LINK.with(std::cell::Cell::get) {
        return Err(Errno::NOENT);
    }
    rfs::linkat(rfs::CWD, proc_path, dir, temp, AtFlags::SYMLINK_FOLLOW)
}

/// Writes a temp file's bytes: given the directory handle and the name of the
/// file being replaced, and the temp file.
pub(super) type Filler<'a> = dyn FnMut(BorrowedFd<'_>, &OsStr, &mut File) -> io::Result<()> + 'a;

/// Writes the temp file with `write`, keeps the replaced file's mode (and owner
/// where allowed), and fsyncs.
fn fill(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    file: &mut File,
    write: &mut Filler<'_>,
    existing: Option<&rfs::Stat>,
) -> Result<(), Errno> {
    if let Some(stat) = existing {
        rfs::fchmod(&*file, Mode::from_raw_mode(mode_of(stat) & 0o7777))?;
        // Only root (or the owner keeping its own ids) may chown; a failure
        // leaves the writer as owner, which is what a plain write means anyway.
        let _ = rfs::fchown(
            &*file,
            Some(rustix::fs::Uid::from_raw(stat.st_uid)),
            Some(rustix::fs::Gid::from_raw(stat.st_gid)),
        );
    }
    write(dir, name, file).map_err(errno_of)?;
    file.sync_all().map_err(errno_of)?;
    Ok(())
}

fn errno_of(error: io::Error) -> Errno {
    error
        .raw_os_error()
        .map_or(Errno::IO, Errno::from_raw_os_error)
}

#[cfg(test)]
pub(super) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Makes this thread's links of unnamed temp files fail, as where
        /// `/proc` is missing.
        pub(in super::super) static REFUSE_LINK: Cell<bool> = const { Cell::new(false) };
    }
}
