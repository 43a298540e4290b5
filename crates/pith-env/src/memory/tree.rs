//! The in-memory tree behind [`MemoryEnv`](super::MemoryEnv): nodes keyed by
//! their real (symlink-free) absolute path, and POSIX-like path resolution.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::{DirEntry, FileKind, FsErrorKind, Metadata};

/// Linux gives up after 40 symlinks in one lookup (`ELOOP`).
const MAX_SYMLINKS: usize = 40;

/// Permission bits of a new file (a typical umask of 022 applied to 0o666).
pub(crate) const FILE_MODE: u32 = 0o644;
/// Permission bits of a new directory.
pub(crate) const DIR_MODE: u32 = 0o755;
const SYMLINK_MODE: u32 = 0o777;

/// One file-system object.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    File {
        data: Arc<Vec<u8>>,
        mode: u32,
        modified: SystemTime,
    },
    Dir {
        mode: u32,
        modified: SystemTime,
    },
    Symlink {
        target: PathBuf,
        modified: SystemTime,
    },
}

impl Node {
    pub(crate) fn kind(&self) -> FileKind {
        match self {
            Node::File { .. } => FileKind::File,
            Node::Dir { .. } => FileKind::Directory,
            Node::Symlink { .. } => FileKind::Symlink,
        }
    }

    fn metadata(&self) -> Metadata {
        let (len, modified, mode) = match self {
            Node::File {
                data,
                mode,
                modified,
            } => (data.len() as u64, *modified, *mode),
            Node::Dir { mode, modified } => (0, *modified, *mode),
            Node::Symlink { target, modified } => {
                (target.as_os_str().len() as u64, *modified, SYMLINK_MODE)
            }
        };
        Metadata {
            kind: self.kind(),
            len,
            modified: Some(modified),
            mode: Some(mode),
            changed: None,
            id: None,
        }
    }
}

/// Whether a lookup follows a symlink in the last component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Follow {
    /// Follow it (`stat`, `open`).
    Final,
    /// Stop at it (`lstat`).
    NotFinal,
}

/// Where a path leads.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// The real path (every followed symlink resolved).
    pub(crate) path: PathBuf,
    /// False when only the last component is missing (its parent is a directory).
    pub(crate) exists: bool,
}

/// A path component that matters for resolution (`.` and `/` are dropped).
enum Step {
    Name(OsString),
    Parent,
}

fn steps(path: &Path) -> VecDeque<Step> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(Step::Name(name.to_owned())),
            Component::ParentDir => Some(Step::Parent),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Every node, keyed by real absolute path. `/` always exists.
#[derive(Debug)]
pub(crate) struct Tree {
    nodes: BTreeMap<PathBuf, Node>,
}

impl Default for Tree {
    fn default() -> Tree {
        let mut nodes = BTreeMap::new();
        nodes.insert(
            PathBuf::from("/"),
            Node::Dir {
                mode: DIR_MODE,
                modified: SystemTime::now(),
            },
        );
        Tree { nodes }
    }
}

impl Tree {
    /// Resolves `path` the way the kernel does: component by component,
    /// expanding symlinks (relative targets from the link's directory), `..`
    /// applied to the real path reached so far.
    pub(crate) fn resolve(&self, path: &Path, follow: Follow) -> Result<Resolved, FsErrorKind> {
        if !path.is_absolute() {
            return Err(FsErrorKind::InvalidInput);
        }
        let mut pending = steps(path);
        let mut current = PathBuf::from("/");
        let mut links = 0;
        while let Some(step) = pending.pop_front() {
            let name = match step {
                Step::Parent => {
                    current.pop();
                    continue;
                }
                Step::Name(name) => name,
            };
            let candidate = current.join(&name);
            let last = pending.is_empty();
            match self.nodes.get(&candidate) {
                None if last => {
                    return Ok(Resolved {
                        path: candidate,
                        exists: false,
                    });
                }
                None => return Err(FsErrorKind::NotFound),
                Some(Node::Symlink { target, .. }) if !last || follow == Follow::Final => {
                    links += 1;
                    if links > MAX_SYMLINKS {
                        return Err(FsErrorKind::SymlinkLoop);
                    }
                    if target.as_os_str().is_empty() {
                        return Err(FsErrorKind::NotFound);
                    }
                    if target.is_absolute() {
                        current = PathBuf::from("/");
                    }
                    let mut expanded = steps(target);
                    expanded.extend(pending.drain(..));
                    pending = expanded;
                }
                Some(Node::File { .. }) if !last => return Err(FsErrorKind::NotADirectory),
                Some(_) => current = candidate,
            }
        }
        Ok(Resolved {
            path: current,
            exists: true,
        })
    }

    /// The node a path leads to; missing → `NotFound`.
    pub(crate) fn lookup(
        &self,
        path: &Path,
        follow: Follow,
    ) -> Result<(PathBuf, &Node), FsErrorKind> {
        let resolved = self.resolve(path, follow)?;
        match self.nodes.get(&resolved.path) {
            Some(node) if resolved.exists => Ok((resolved.path, node)),
            _ => Err(FsErrorKind::NotFound),
        }
    }

    /// The contents of a regular file.
    pub(crate) fn read_file(&self, path: &Path) -> Result<Arc<Vec<u8>>, FsErrorKind> {
        match self.lookup(path, Follow::Final)?.1 {
            Node::File { data, .. } => Ok(data.clone()),
            Node::Dir { .. } => Err(FsErrorKind::IsADirectory),
            Node::Symlink { .. } => Err(FsErrorKind::Other),
        }
    }

    pub(crate) fn metadata(&self, path: &Path, follow: Follow) -> Result<Metadata, FsErrorKind> {
        Ok(self.lookup(path, follow)?.1.metadata())
    }

    /// Replaces or creates a file in one step, keeping an existing file's mode
    /// and writing through symlinks.
    pub(crate) fn write_file(&mut self, path: &Path, contents: &[u8]) -> Result<(), FsErrorKind> {
        let resolved = self.resolve(path, Follow::Final)?;
        let now = SystemTime::now();
        let mode = match self.nodes.get(&resolved.path) {
            Some(Node::File { mode, .. }) => *mode,
            Some(Node::Dir { .. }) => return Err(FsErrorKind::IsADirectory),
            Some(Node::Symlink { .. }) => return Err(FsErrorKind::Other),
            None => FILE_MODE,
        };
        self.nodes.insert(
            resolved.path.clone(),
            Node::File {
                data: Arc::new(contents.to_vec()),
                mode,
                modified: now,
            },
        );
        self.touch_parent(&resolved.path, now);
        Ok(())
    }

    /// Lists a directory's children.
    pub(crate) fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, FsErrorKind> {
        let (real, node) = self.lookup(path, Follow::Final)?;
        if !matches!(node, Node::Dir { .. }) {
            return Err(FsErrorKind::NotADirectory);
        }
        Ok(self
            .descendants(&real)
            .filter(|(child, _)| child.parent() == Some(real.as_path()))
            .filter_map(|(child, node)| {
                Some(DirEntry {
                    name: child.file_name()?.to_owned(),
                    kind: node.kind(),
                })
            })
            .collect())
    }

    /// Every node strictly below `dir` (a real path), in path order.
    pub(crate) fn descendants<'a>(
        &'a self,
        dir: &'a Path,
    ) -> impl Iterator<Item = (&'a PathBuf, &'a Node)> + 'a {
        self.nodes
            .range::<Path, _>((std::ops::Bound::Excluded(dir), std::ops::Bound::Unbounded))
            .take_while(move |(path, _)| path.starts_with(dir))
    }

    /// `mkdir -p`.
    pub(crate) fn create_dir_all(&mut self, path: &Path) -> Result<(), FsErrorKind> {
        if !path.is_absolute() {
            return Err(FsErrorKind::InvalidInput);
        }
        let mut prefix = PathBuf::new();
        let count = path.components().count();
        for (index, component) in path.components().enumerate() {
            prefix.push(component);
            if !matches!(component, Component::Normal(_)) {
                continue;
            }
            let resolved = self.resolve(&prefix, Follow::Final)?;
            match self.nodes.get(&resolved.path) {
                Some(Node::Dir { .. }) if resolved.exists => {}
                Some(_) if resolved.exists => {
                    // A file here: as a last component it exists; before one,
                    // the next lookup reports NotADirectory.
                    if index + 1 == count {
                        return Err(FsErrorKind::AlreadyExists);
                    }
                }
                _ => {
                    // mkdir refuses to create through a dangling symlink.
                    if self.resolve(&prefix, Follow::NotFinal)?.exists {
                        return Err(FsErrorKind::AlreadyExists);
                    }
                    let now = SystemTime::now();
                    self.nodes.insert(
                        resolved.path.clone(),
                        Node::Dir {
                            mode: DIR_MODE,
                            modified: now,
                        },
                    );
                    self.touch_parent(&resolved.path, now);
                }
            }
        }
        Ok(())
    }

    /// `rmdir`: removes an empty directory (not through a final symlink).
    pub(crate) fn remove_dir(&mut self, path: &Path) -> Result<(), FsErrorKind> {
        let resolved = self.resolve(path, Follow::NotFinal)?;
        if !resolved.exists {
            return Err(FsErrorKind::NotFound);
        }
        match self.nodes.get(&resolved.path) {
            Some(Node::Dir { .. }) => {}
            _ => return Err(FsErrorKind::NotADirectory),
        }
        if self.descendants(&resolved.path).next().is_some() {
            return Err(FsErrorKind::Other);
        }
        self.nodes.remove(&resolved.path);
        self.touch_parent(&resolved.path, SystemTime::now());
        Ok(())
    }

    /// `unlink`: removes a file or a symlink (not through a final symlink).
    pub(crate) fn remove_file(&mut self, path: &Path) -> Result<(), FsErrorKind> {
        let resolved = self.resolve(path, Follow::NotFinal)?;
        if !resolved.exists {
            return Err(FsErrorKind::NotFound);
        }
        if let Some(Node::Dir { .. }) = self.nodes.get(&resolved.path) {
            return Err(FsErrorKind::IsADirectory);
        }
        self.nodes.remove(&resolved.path);
        self.touch_parent(&resolved.path, SystemTime::now());
        Ok(())
    }

    /// Creates a symlink at `link` (not followed) pointing to `target`, stored as given.
    pub(crate) fn symlink(&mut self, link: &Path, target: &Path) -> Result<(), FsErrorKind> {
        let resolved = self.resolve(link, Follow::NotFinal)?;
        if resolved.exists {
            return Err(FsErrorKind::AlreadyExists);
        }
        let now = SystemTime::now();
        self.nodes.insert(
            resolved.path.clone(),
            Node::Symlink {
                target: target.to_owned(),
                modified: now,
            },
        );
        self.touch_parent(&resolved.path, now);
        Ok(())
    }

    /// `chmod` (follows symlinks).
    pub(crate) fn set_mode(&mut self, path: &Path, new_mode: u32) -> Result<(), FsErrorKind> {
        let (real, _) = self.lookup(path, Follow::Final)?;
        match self.nodes.get_mut(&real) {
            Some(Node::File { mode, .. } | Node::Dir { mode, .. }) => {
                *mode = new_mode & 0o7777;
                Ok(())
            }
            _ => Err(FsErrorKind::Other),
        }
    }

    fn touch_parent(&mut self, path: &Path, now: SystemTime) {
        if let Some(Node::Dir { modified, .. }) =
            path.parent().and_then(|parent| self.nodes.get_mut(parent))
        {
            *modified = now;
        }
    }
}
