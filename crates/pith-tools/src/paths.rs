//! Resolving the paths models send.

use std::path::{Path, PathBuf};

use pith_env::FileSystem;

use crate::ToolError;

/// Resolves a path argument against `cwd`.
pub fn resolve_path(input: &str, cwd: &Path, _home: Option<&Path>) -> Result<PathBuf, ToolError> {
    Ok(cwd.join(input))
}

/// Resolves a path for `read`, trying the variants real file systems use.
pub async fn resolve_read_path(
    input: &str,
    cwd: &Path,
    fs: &dyn FileSystem,
) -> Result<PathBuf, ToolError> {
    resolve_path(input, cwd, fs.home_dir().as_deref())
}
