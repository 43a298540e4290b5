//! Typed errors of the ports. Every error names the path or command it is about.

use std::io;
use std::path::PathBuf;

/// What kind of file-system failure happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FsErrorKind {
    /// The path (or a parent of it) does not exist.
    NotFound,
    /// The operating system refused access.
    PermissionDenied,
    /// A component of the path that must be a directory is not one.
    NotADirectory,
    /// The path is a directory where a file was expected.
    IsADirectory,
    /// The path already exists.
    AlreadyExists,
    /// Too many levels of symbolic links.
    SymlinkLoop,
    /// The path or the request is invalid (for example a NUL byte in it).
    InvalidInput,
    /// No space left on the device, or a quota was hit.
    NoSpace,
    /// The file system is read-only.
    ReadOnly,
    /// The adapter does not support this operation.
    Unsupported,
    /// The operation was cancelled.
    Cancelled,
    /// The path resolves outside every root of a confined view.
    OutsideRoots,
    /// A confined view's write guard refused the path (the detail says why).
    Protected,
    /// The path is a FIFO, socket or device (the detail names which), which
    /// the file tools neither read nor replace.
    SpecialFile,
    /// Anything else.
    Other,
}

impl FsErrorKind {
    /// A short lowercase code, stable for scripts: `not_found`, `permission_denied`, ...
    pub fn code(self) -> &'static str {
        match self {
            FsErrorKind::NotFound => "not_found",
            FsErrorKind::PermissionDenied => "permission_denied",
            FsErrorKind::NotADirectory => "not_a_directory",
            FsErrorKind::IsADirectory => "is_a_directory",
            FsErrorKind::AlreadyExists => "already_exists",
            FsErrorKind::SymlinkLoop => "symlink_loop",
            FsErrorKind::InvalidInput => "invalid_input",
            FsErrorKind::NoSpace => "no_space",
            FsErrorKind::ReadOnly => "read_only",
            FsErrorKind::Unsupported => "unsupported",
            FsErrorKind::Cancelled => "cancelled",
            FsErrorKind::OutsideRoots => "outside_roots",
            FsErrorKind::Protected => "protected",
            FsErrorKind::SpecialFile => "special_file",
            FsErrorKind::Other => "other",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            FsErrorKind::NotFound => "no such file or directory",
            FsErrorKind::PermissionDenied => "permission denied",
            FsErrorKind::NotADirectory => "not a directory",
            FsErrorKind::IsADirectory => "is a directory",
            FsErrorKind::AlreadyExists => "already exists",
            FsErrorKind::SymlinkLoop => "too many levels of symbolic links",
            FsErrorKind::InvalidInput => "invalid path or argument",
            FsErrorKind::NoSpace => "no space left on device",
            FsErrorKind::ReadOnly => "read-only file system",
            FsErrorKind::Unsupported => "operation not supported",
            FsErrorKind::Cancelled => "cancelled",
            FsErrorKind::OutsideRoots => "outside the allowed roots",
            FsErrorKind::Protected => "protected path",
            FsErrorKind::SpecialFile => "not a regular file",
            FsErrorKind::Other => "I/O error",
        }
    }

    /// Classifies an OS error.
    pub fn from_io(error: &io::Error) -> FsErrorKind {
        match error.raw_os_error() {
            Some(libc::ENOENT) => return FsErrorKind::NotFound,
            Some(libc::EACCES) | Some(libc::EPERM) => return FsErrorKind::PermissionDenied,
            Some(libc::ENOTDIR) => return FsErrorKind::NotADirectory,
            Some(libc::EISDIR) => return FsErrorKind::IsADirectory,
            Some(libc::EEXIST) => return FsErrorKind::AlreadyExists,
            Some(libc::ELOOP) => return FsErrorKind::SymlinkLoop,
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => return FsErrorKind::NoSpace,
            Some(libc::EROFS) => return FsErrorKind::ReadOnly,
            Some(libc::EINVAL) | Some(libc::ENAMETOOLONG) => return FsErrorKind::InvalidInput,
            _ => {}
        }
        match error.kind() {
            io::ErrorKind::NotFound => FsErrorKind::NotFound,
            io::ErrorKind::PermissionDenied => FsErrorKind::PermissionDenied,
            io::ErrorKind::AlreadyExists => FsErrorKind::AlreadyExists,
            io::ErrorKind::InvalidInput | io::ErrorKind::InvalidFilename => {
                FsErrorKind::InvalidInput
            }
            io::ErrorKind::Unsupported => FsErrorKind::Unsupported,
            _ => FsErrorKind::Other,
        }
    }
}

/// A file-system failure: its kind, the path it concerns and the OS detail.
#[derive(Debug, thiserror::Error)]
#[error("{}: {}{}", .kind.describe(), .path.display(), .detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
pub struct FsError {
    /// The kind of failure.
    pub kind: FsErrorKind,
    /// The path the failure concerns.
    pub path: PathBuf,
    /// Extra detail, e.g. the OS message when the kind is [`FsErrorKind::Other`].
    pub detail: Option<String>,
}

impl FsError {
    /// An error of `kind` about `path`.
    pub fn new(kind: FsErrorKind, path: impl Into<PathBuf>) -> FsError {
        FsError {
            kind,
            path: path.into(),
            detail: None,
        }
    }

    /// Wraps an OS error about `path`.
    pub fn from_io(error: io::Error, path: impl Into<PathBuf>) -> FsError {
        let kind = FsErrorKind::from_io(&error);
        let detail = (kind == FsErrorKind::Other).then(|| error.to_string());
        FsError {
            kind,
            path: path.into(),
            detail,
        }
    }

    /// Adds a detail to the message.
    pub fn with_detail(mut self, detail: impl Into<String>) -> FsError {
        self.detail = Some(detail.into());
        self
    }
}

/// A failure to run a command (not a command that ran and failed: that is an
/// [`ExecOutcome`](crate::ExecOutcome) with a non-zero status).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The working directory does not exist or is not a directory.
    #[error("Working directory does not exist: {}", .0.display())]
    MissingCwd(PathBuf),
    /// The shell or program to run was not found.
    #[error("Shell not found: {}", .0.display())]
    ShellNotFound(PathBuf),
    /// Spawning failed for another reason.
    #[error("Failed to start {}: {message}", .program.display())]
    Spawn {
        /// The program that could not be started.
        program: PathBuf,
        /// The OS message.
        message: String,
    },
    /// The sandbox that was asked for cannot be applied.
    #[error("Sandbox unavailable: {0}")]
    Sandbox(String),
    /// The adapter cannot run processes.
    #[error("This environment cannot run processes")]
    Unsupported,
    /// Reading the output failed.
    #[error("Failed to read command output: {0}")]
    Io(String),
    /// The adapter cannot do what the request asks (e.g. a pseudo-terminal
    /// over a remote environment); the message says what and what to do.
    #[error("{0}")]
    NotSupported(String),
}

/// A failure of a search request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The regular expression does not compile.
    #[error("Invalid regex: {0}")]
    InvalidPattern(String),
    /// The glob does not compile.
    #[error("Invalid glob: {0}")]
    InvalidGlob(String),
    /// The path to search does not exist.
    #[error("Path not found: {}", .0.display())]
    NotFound(PathBuf),
    /// The search was cancelled.
    #[error("Operation aborted")]
    Cancelled,
    /// The adapter does not support search.
    #[error("This environment cannot search")]
    Unsupported,
    /// Another I/O failure.
    #[error(transparent)]
    Fs(#[from] FsError),
}
