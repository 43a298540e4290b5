//! Workspace roots and protected paths: where the file tools may write (and,
//! when configured, read).
//!
//! A path is checked through the realpath of its nearest existing ancestor,
//! so `..`, symlinks to elsewhere, and new files created through a symlinked
//! directory are all judged by where they really land. This is pith's own
//! check for its file tools; commands run by `bash` are confined by the OS
//! sandbox instead (see `pith_env::SandboxPolicy`).

use std::path::{Path, PathBuf};

use pith_env::{Confinement, FileKind, FileSystem, FsErrorKind, WriteRules};

use crate::messages::paths as messages;
use crate::paths::nearest_existing;
use crate::tool::ToolError;

/// What a tool wants to do with a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// read, ls, grep, find.
    Read,
    /// write, edit.
    Write,
}

/// The workspace roots and protected paths.
#[derive(Clone, Debug)]
pub struct WorkspacePolicy {
    roots: Vec<PathBuf>,
    contain_reads: bool,
    protect_patterns: Vec<String>,
    rules: WriteRules,
}

impl WorkspacePolicy {
    /// A policy over `roots` (absolute; they are canonicalised when checked).
    /// `protect` are gitignore-style globs relative to a root that write and
    /// edit may not touch: a leading `/` anchors to the root, a glob without
    /// `/` matches a name at any depth, `**` matches everything; `.git/` is
    /// always protected. `contain_reads` extends containment to read, ls,
    /// grep and find.
    ///
    /// # Errors
    ///
    /// A pattern that can never match (empty, `..`, an absolute path outside
    /// every root) or is not a valid glob, named as given.
    pub fn new(
        roots: Vec<PathBuf>,
        protect: &[String],
        contain_reads: bool,
    ) -> Result<WorkspacePolicy, String> {
        let rules = WriteRules::new(&roots, protect)?;
        Ok(WorkspacePolicy {
            roots,
            contain_reads,
            protect_patterns: protect.to_vec(),
            rules,
        })
    }

    /// The roots as configured.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The `--protect` globs as absolute patterns, one per root and glob
    /// (`<root>/<glob>`, the root escaped), for the OS sandbox to expand when
    /// each command starts (see `pith_env::SandboxPolicy::read_only`).
    pub fn protected_under_roots(&self) -> Vec<String> {
        let mut globs = Vec::new();
        for glob in self.rules.globs() {
            for root in &self.roots {
                let root = globset::escape(&root.to_string_lossy());
                globs.push(format!("{}/{}", root.trim_end_matches('/'), glob.glob));
            }
        }
        globs
    }

    /// The protected globs as configured (besides `.git/`).
    pub fn protected(&self) -> &[String] {
        &self.protect_patterns
    }

    /// Whether read, ls, grep and find are confined too.
    pub fn contains_reads(&self) -> bool {
        self.contain_reads
    }

    /// Adds a root (e.g. one an MCP client offered).
    pub fn add_root(&mut self, root: PathBuf) {
        if !self.roots.contains(&root) {
            self.roots.push(root);
        }
    }

    /// Checks that `path` (absolute, lexically normalised) may be accessed.
    pub async fn check(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        access: Access,
    ) -> Result<(), ToolError> {
        if access == Access::Read && !self.contain_reads {
            return Ok(());
        }
        if path.as_os_str().as_encoded_bytes().contains(&0) {
            return Err(ToolError::new(messages::POLICY_NUL));
        }
        let real = real_target(fs, path).await?;
        for root in &self.roots {
            let Ok(root) = fs.canonicalize(root).await else {
                continue;
            };
            let Ok(relative) = real.strip_prefix(&root) else {
                continue;
            };
            if access == Access::Write {
                self.check_protected(path, relative)?;
            }
            return Ok(());
        }
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|root| root.display().to_string())
            .collect();
        let via = if real == path {
            String::new()
        } else {
            messages::resolves_to(real.display())
        };
        Err(ToolError::new(messages::outside_workspace(
            path.display(),
            &via,
            &roots,
        )))
    }

    fn check_protected(&self, path: &Path, relative: &Path) -> Result<(), ToolError> {
        match self.rules.reason(path, relative) {
            Some(reason) => Err(ToolError::new(reason)),
            None => Ok(()),
        }
    }

    /// The rules a confined file-system view judges every write, new
    /// directory and removal by, on the path *as resolved by handle*:
    /// `.git/` and the `--protect` globs.
    pub fn write_rules(&self) -> &WriteRules {
        &self.rules
    }

    /// The confinement of the file-system view for `access`: beneath the
    /// roots, with the write guard for writes. `None`: reads are not contained.
    pub fn confinement(&self, access: Access) -> Option<Confinement> {
        match access {
            Access::Read if !self.contain_reads => None,
            Access::Read => Some(Confinement::new(self.roots.clone())),
            Access::Write => {
                Some(Confinement::new(self.roots.clone()).with_write_rules(self.rules.clone()))
            }
        }
    }
}

/// The confinement of writes without workspace roots: anywhere (beneath
/// `/`), but never inside a `.git/` directory, judged on the resolved path.
pub(crate) fn unrooted_write_confinement() -> Confinement {
    Confinement::new(vec![PathBuf::from("/")]).with_write_rules(WriteRules::default())
}

/// The refusal for a path inside a `.git/` directory.
pub(crate) fn git_reason(path: &Path, relative: &Path) -> Option<String> {
    pith_env::git_reason(path, relative)
}

/// Where a write to `path` really lands: the realpath of the nearest existing
/// ancestor joined with the components that do not exist yet. A final
/// component that is a symlink to a missing target is refused: writing
/// through it would create a file wherever the link points.
pub(crate) async fn real_target(fs: &dyn FileSystem, path: &Path) -> Result<PathBuf, ToolError> {
    let missing = |kind| kind == FsErrorKind::NotFound;
    let found = nearest_existing(path, missing, |ancestor| async move {
        let metadata = fs.symlink_metadata(&ancestor).await?;
        Ok((ancestor, metadata))
    })
    .await
    .map_err(|error| ToolError::new(error.to_string()))?;
    let Some(((existing, metadata), rest)) = found else {
        return Err(ToolError::new(messages::does_not_exist(path.display())));
    };
    match fs.canonicalize(&existing).await {
        Ok(real) if rest.as_os_str().is_empty() => Ok(real),
        Ok(real) => Ok(real.join(rest)),
        Err(error) if metadata.kind == FileKind::Symlink => Err(ToolError::new(
            messages::unresolvable_symlink(existing.display(), error.kind.code()),
        )),
        Err(error) => Err(ToolError::new(error.to_string())),
    }
}
