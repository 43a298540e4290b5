//! The local full-output file.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::{ExecError, OutputLog};

/// A new file in a directory, written in order.
pub(super) struct LocalOutputLog {
    path: PathBuf,
    file: File,
}

impl LocalOutputLog {
    /// Creates `<dir>/<prefix><16 hex>.log`; never replaces an existing file.
    pub(super) fn create(dir: &Path, prefix: &str) -> Result<LocalOutputLog, ExecError> {
        let mut attempts = 0;
        loop {
            let path = dir.join(format!("{prefix}{:016x}.log", rand::random::<u64>()));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => return Ok(LocalOutputLog { path, file }),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempts < 8 => {
                    attempts += 1;
                }
                Err(error) => return Err(log_error(&path, &error)),
            }
        }
    }
}

impl OutputLog for LocalOutputLog {
    fn path(&self) -> &Path {
        &self.path
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), ExecError> {
        self.file
            .write_all(bytes)
            .map_err(|error| log_error(&self.path, &error))
    }
}

fn log_error(path: &Path, error: &io::Error) -> ExecError {
    let kind = crate::FsErrorKind::from_io(error);
    ExecError::Io(format!(
        "{}: {}",
        path.display(),
        kind.code().replace('_', " ")
    ))
}
