//! [`MemoryEnv`]'s confined view: the same contract as the local one, on a
//! tree that cannot change during one operation (every operation holds the
//! tree's lock while it resolves and acts).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;

use super::MemoryEnv;
use super::tree::{Follow, Tree};
use crate::{
    Confinement, DirEntry, FileReader, FileSystem, FsError, FsErrorKind, Metadata, WriteRules,
};

/// A [`MemoryEnv`] confined beneath roots.
pub(crate) struct MemoryBeneath {
    env: MemoryEnv,
    /// (root as configured, its real path); roots that do not exist are left out.
    roots: Vec<(PathBuf, PathBuf)>,
    guard: Option<WriteRules>,
}

impl MemoryBeneath {
    pub(crate) fn new(env: MemoryEnv, confinement: Confinement) -> MemoryBeneath {
        let roots = {
            let tree = env.lock();
            confinement
                .roots
                .into_iter()
                .filter_map(|root| {
                    let real = tree.lookup(&root, Follow::Final).ok()?.0;
                    Some((root, real))
                })
                .collect()
        };
        MemoryBeneath {
            env,
            roots,
            guard: confinement.write_rules,
        }
    }

    /// Where `path` really lands (missing trailing components appended) and
    /// the root it is beneath, or `OutsideRoots`.
    fn beneath(
        &self,
        tree: &Tree,
        path: &Path,
        follow: Follow,
    ) -> Result<(PathBuf, PathBuf), FsError> {
        let real = real_of(tree, path, follow).map_err(|kind| FsError::new(kind, path))?;
        for (configured, root) in &self.roots {
            if let Ok(relative) = real.strip_prefix(root) {
                return Ok((configured.clone(), relative.to_path_buf()));
            }
        }
        Err(FsError::new(FsErrorKind::OutsideRoots, path))
    }

    fn guarded(&self, tree: &Tree, path: &Path, follow: Follow) -> Result<(), FsError> {
        let (root, relative) = self.beneath(tree, path, follow)?;
        match &self.guard {
            Some(guard) => guard
                .check(&root, &relative)
                .map_err(|reason| FsError::new(FsErrorKind::Protected, path).with_detail(reason)),
            None => Ok(()),
        }
    }

    /// Checks `path` under the tree's lock, then runs `operation` on the
    /// unconfined tree while still holding it.
    fn with<T>(
        &self,
        path: &Path,
        follow: Follow,
        write: bool,
        operation: impl FnOnce(&mut Tree) -> Result<T, FsErrorKind>,
    ) -> Result<T, FsError> {
        let mut tree = self.env.lock();
        if write {
            self.guarded(&tree, path, follow)?;
        } else {
            self.beneath(&tree, path, follow)?;
        }
        operation(&mut tree).map_err(|kind| FsError::new(kind, path))
    }
}

/// The real path of `path`: every existing component resolved, the missing
/// ones appended as they are.
fn real_of(tree: &Tree, path: &Path, follow: Follow) -> Result<PathBuf, FsErrorKind> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<OsString> = Vec::new();
    let mut follow = follow;
    loop {
        match tree.resolve(&existing, follow) {
            Ok(resolved) => {
                let mut real = resolved.path;
                real.extend(rest.iter().rev());
                return Ok(real);
            }
            Err(FsErrorKind::NotFound) => {
                let Some(name) = existing.file_name() else {
                    return Err(FsErrorKind::NotFound);
                };
                rest.push(name.to_os_string());
                existing.pop();
                follow = Follow::Final;
            }
            Err(kind) => return Err(kind),
        }
    }
}

#[async_trait]
impl FileSystem for MemoryBeneath {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        self.with(path, Follow::Final, false, |tree| tree.read_file(path))
            .map(|data| data.as_ref().clone())
    }

    async fn read_range(
        &self,
        path: &Path,
        offset: u64,
        max_len: usize,
    ) -> Result<Vec<u8>, FsError> {
        self.with(path, Follow::Final, false, |_| Ok(()))?;
        self.env.read_range(path, offset, max_len).await
    }

    async fn open(&self, path: &Path) -> Result<Box<dyn FileReader>, FsError> {
        self.with(path, Follow::Final, false, |_| Ok(()))?;
        self.env.open(path).await
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        self.with(path, Follow::Final, true, |tree| {
            tree.write_file(path, contents)
        })
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        self.with(path, Follow::Final, false, |tree| {
            tree.metadata(path, Follow::Final)
        })
    }

    async fn symlink_metadata(&self, path: &Path) -> Result<Metadata, FsError> {
        self.with(path, Follow::NotFinal, false, |tree| {
            tree.metadata(path, Follow::NotFinal)
        })
    }

    async fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsError> {
        self.with(path, Follow::Final, false, |tree| tree.read_dir(path))
    }

    async fn canonicalize(&self, path: &Path) -> Result<PathBuf, FsError> {
        self.with(path, Follow::Final, false, |tree| {
            Ok(tree.lookup(path, Follow::Final)?.0)
        })
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        self.with(path, Follow::Final, true, |tree| tree.create_dir_all(path))
    }

    async fn remove_dir(&self, path: &Path) -> Result<(), FsError> {
        self.with(path, Follow::NotFinal, true, |tree| tree.remove_dir(path))
    }

    async fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        self.with(path, Follow::NotFinal, true, |tree| tree.remove_file(path))
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.env.home_dir()
    }

    fn confine(self: Arc<Self>, confinement: Confinement) -> Arc<dyn FileSystem> {
        let roots = confinement
            .roots
            .into_iter()
            .filter(|root| {
                let tree = self.env.lock();
                self.beneath(&tree, root, Follow::Final).is_ok()
            })
            .collect();
        Arc::new(MemoryBeneath::new(
            self.env.clone(),
            Confinement {
                roots,
                write_rules: confinement.write_rules,
            },
        ))
    }
}
