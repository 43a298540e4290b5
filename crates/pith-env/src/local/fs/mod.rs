//! The local file system.
//!
//! Blocking `std::fs` calls run on tokio's blocking pool; streamed reads use
//! `tokio::fs::File`. Writes are atomic: a temp file in the target's directory
//! is written, fsynced and renamed over the target, then the directory is
//! fsynced so the rename survives a crash.

use std::fs::{self, File, Permissions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use tokio::io::AsyncReadExt;

use crate::{DirEntry, FileKind, FileReader, FileSystem, FsError, FsErrorKind, LocalEnv, Metadata};

/// Symlinks followed at most when writing through a chain of links (Linux's own limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// Runs a blocking file-system call on the blocking pool.
async fn blocking<T, F>(path: &Path, work: F) -> Result<T, FsError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, FsError> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(join) => Err(FsError::new(FsErrorKind::Other, path).with_detail(join.to_string())),
    }
}

fn kind_of(file_type: fs::FileType) -> FileKind {
    if file_type.is_symlink() {
        FileKind::Symlink
    } else if file_type.is_dir() {
        FileKind::Directory
    } else if file_type.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    }
}

fn convert(metadata: &fs::Metadata) -> Metadata {
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        Some(metadata.permissions().mode() & 0o7777)
    };
    #[cfg(not(unix))]
    let mode = None;
    Metadata {
        kind: kind_of(metadata.file_type()),
        len: metadata.len(),
        modified: metadata.modified().ok(),
        mode,
    }
}

/// Opens `path` for reading, refusing directories (which `open(2)` accepts on Unix).
fn open_file(path: &Path) -> Result<File, FsError> {
    let file = File::open(path).map_err(|e| FsError::from_io(e, path))?;
    let metadata = file.metadata().map_err(|e| FsError::from_io(e, path))?;
    if metadata.is_dir() {
        return Err(FsError::new(FsErrorKind::IsADirectory, path));
    }
    Ok(file)
}

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

/// The temp-file-and-rename write, run on the blocking pool.
fn write_atomic_blocking(path: &Path, contents: &[u8]) -> Result<(), FsError> {
    let target = write_target(path)?;
    let error = |e: io::Error| FsError::from_io(e, path);
    let existing = match fs::metadata(&target) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(FsError::new(FsErrorKind::IsADirectory, path));
        }
        Ok(metadata) => Some(metadata),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(error(e)),
    };
    let directory = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // A short prefix of the name keeps the temp name under NAME_MAX.
    let name: String = target
        .file_name()
        .map(|name| name.to_string_lossy().chars().take(64).collect())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".pith-tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // New files get the usual 0o666 minus the umask, as with open(2).
        builder.permissions(Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(&directory).map_err(|e| {
        // A missing directory is reported as the target's own path.
        FsError::from_io(e, path)
    })?;
    if let Some(existing) = &existing {
        keep_owner_and_mode(temp.as_file(), existing).map_err(error)?;
    }
    temp.write_all(contents).map_err(error)?;
    temp.as_file().sync_all().map_err(error)?;
    temp.persist(&target).map_err(|e| error(e.error))?;
    // Durability of the rename; some file systems refuse to fsync a directory.
    if let Ok(dir) = File::open(&directory) {
        let _ = dir.sync_all();
    }
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

/// Streams a local file.
struct LocalReader {
    file: tokio::fs::File,
    path: PathBuf,
}

#[async_trait]
impl FileReader for LocalReader {
    async fn read_chunk(&mut self, buf: &mut [u8]) -> Result<usize, FsError> {
        self.file
            .read(buf)
            .await
            .map_err(|e| FsError::from_io(e, &self.path))
    }
}

#[async_trait]
impl FileSystem for LocalEnv {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        let owned = path.to_path_buf();
        blocking(path, move || {
            let mut file = open_file(&owned)?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|e| FsError::from_io(e, &owned))?;
            Ok(bytes)
        })
        .await
    }

    async fn read_range(
        &self,
        path: &Path,
        offset: u64,
        max_len: usize,
    ) -> Result<Vec<u8>, FsError> {
        let owned = path.to_path_buf();
        blocking(path, move || {
            let error = |e| FsError::from_io(e, &owned);
            let mut file = open_file(&owned)?;
            file.seek(SeekFrom::Start(offset)).map_err(error)?;
            let mut bytes = Vec::new();
            file.take(max_len as u64)
                .read_to_end(&mut bytes)
                .map_err(error)?;
            Ok(bytes)
        })
        .await
    }

    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError> {
        let owned = path.to_path_buf();
        let file = blocking(path, move || open_file(&owned)).await?;
        Ok(Box::new(LocalReader {
            file: tokio::fs::File::from_std(file),
            path: path.to_path_buf(),
        }))
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        let owned = path.to_path_buf();
        let contents = contents.to_vec();
        blocking(path, move || write_atomic_blocking(&owned, &contents)).await
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        tokio::fs::metadata(path)
            .await
            .map(|metadata| convert(&metadata))
            .map_err(|e| FsError::from_io(e, path))
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        tokio::fs::symlink_metadata(path)
            .await
            .map(|metadata| convert(&metadata))
            .map_err(|e| FsError::from_io(e, path))
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        let owned = path.to_path_buf();
        blocking(path, move || {
            let error = |e| FsError::from_io(e, &owned);
            let mut entries = Vec::new();
            for entry in fs::read_dir(&owned).map_err(error)? {
                let entry = entry.map_err(error)?;
                let kind = entry.file_type().map(kind_of).unwrap_or(FileKind::Other);
                entries.push(DirEntry {
                    name: entry.file_name(),
                    kind,
                });
            }
            Ok(entries)
        })
        .await
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        tokio::fs::canonicalize(path)
            .await
            .map_err(|e| FsError::from_io(e, path))
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        tokio::fs::create_dir_all(path)
            .await
            .map_err(|e| FsError::from_io(e, path))
    }

    async fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        tokio::fs::remove_dir(path)
            .await
            .map_err(|e| FsError::from_io(e, path))
    }

    fn home_dir(&self) -> Option<PathBuf> {
        std::env::var_os("HOME").map(PathBuf::from)
    }
}

#[cfg(test)]
mod tests;
