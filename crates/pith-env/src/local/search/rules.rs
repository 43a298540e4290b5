//! The ignore rules of a walk: `ignore`'s semantics with `require_git(false)`,
//! rebuilt over [`Gitignore`] matchers so that any thread can list any
//! directory.
//!
//! Each directory with ignore files gets a [`Node`] pointing to its nearest
//! ancestor node. An entry is ignored by the deepest match of each kind, and
//! the kinds rank `.ignore` over `.gitignore` over `.git/info/exclude` over
//! the global git excludes (a `!` whitelist at a deeper level overrides an
//! ignore above it; `.ignore`'s whitelist overrides any `.gitignore`). The
//! directories above the search root count too, as with ripgrep's `parents`
//! option; they are matched against the canonical path of the root joined with
//! the entry's relative path, as `ignore` does.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The rules one directory adds.
#[derive(Debug)]
pub(super) struct Node {
    parent: Option<Arc<Node>>,
    ignore: Gitignore,
    gitignore: Gitignore,
    exclude: Gitignore,
    /// A directory above the search root.
    above_root: bool,
}

/// Which ignore files a directory listing showed.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Found {
    pub(super) ignore: bool,
    pub(super) gitignore: bool,
    pub(super) git: bool,
}

impl Found {
    /// Notes `name` if it is one of the files that carry rules.
    pub(super) fn note(&mut self, name: &[u8]) {
        match name {
            b".ignore" => self.ignore = true,
            b".gitignore" => self.gitignore = true,
            b".git" => self.git = true,
            _ => {}
        }
    }
}

/// The rules outside any directory of the walk.
#[derive(Debug)]
pub(super) struct Rules {
    global: Gitignore,
    /// `root` as the search names it, and its canonical form when that
    /// differs (the base that rules above the root match against).
    root: PathBuf,
    canonical_root: Option<PathBuf>,
    /// The nodes of the directories above the root.
    above: Option<Arc<Node>>,
}

impl Rules {
    /// The global excludes (relative to the working directory, as ripgrep's)
    /// and the rules of every directory above `root`.
    pub(super) fn new(root: &Path) -> Rules {
        let global = match std::env::current_dir() {
            Ok(cwd) => GitignoreBuilder::new(cwd).build_global().0,
            Err(_) => Gitignore::empty(),
        };
        let canonical = root.canonicalize().ok();
        let mut above = None;
        if let Some(canonical) = &canonical {
            let mut ancestors: Vec<&Path> = canonical.ancestors().skip(1).collect();
            ancestors.reverse();
            for dir in ancestors {
                let found = Found {
                    ignore: true,
                    gitignore: true,
                    git: true,
                };
                above = node_for(dir, None, above, found, true);
            }
        }
        let canonical_root = canonical.filter(|canonical| canonical != root);
        Rules {
            global,
            root: root.to_path_buf(),
            canonical_root,
            above,
        }
    }

    /// The node in force at the search root, before the root's own files.
    pub(super) fn above_root(&self) -> Option<Arc<Node>> {
        self.above.clone()
    }

    /// The node in force inside `dir` (opened as `handle`), whose listing
    /// showed `found`.
    pub(super) fn enter(
        &self,
        dir: &Path,
        handle: impl std::os::fd::AsFd,
        parent: Option<Arc<Node>>,
        found: Found,
    ) -> Option<Arc<Node>> {
        node_for(dir, Some(handle.as_fd()), parent, found, false)
    }

    /// Whether the entry at `path` (inside the walk) is ignored under `node`.
    pub(super) fn is_ignored(&self, node: Option<&Arc<Node>>, path: &Path, is_dir: bool) -> bool {
        let mut by_ignore = Match::None;
        let mut by_gitignore = Match::None;
        let mut by_exclude = Match::None;
        let mut above_path: Option<PathBuf> = None;
        let mut current = node;
        while let Some(node) = current {
            let candidate = if node.above_root {
                match &self.canonical_root {
                    Some(canonical) => above_path.get_or_insert_with(|| {
                        canonical.join(path.strip_prefix(&self.root).unwrap_or(path))
                    }),
                    None => path,
                }
            } else {
                path
            };
            if by_ignore.is_none() {
                by_ignore = node.ignore.matched(candidate, is_dir);
            }
            if by_gitignore.is_none() {
                by_gitignore = node.gitignore.matched(candidate, is_dir);
            }
            if by_exclude.is_none() {
                by_exclude = node.exclude.matched(candidate, is_dir);
            }
            if !by_ignore.is_none() {
                // Nothing below `.ignore` can change the verdict.
                return by_ignore.is_ignore();
            }
            current = node.parent.as_ref();
        }
        by_ignore
            .or(by_gitignore)
            .or(by_exclude)
            .or(self.global.matched(path, is_dir))
            .is_ignore()
    }
}

/// `dir`'s node, or `parent` when `dir` adds no rules. Its ignore files are
/// read through `handle` when given (a directory of the walk), by path otherwise.
fn node_for(
    dir: &Path,
    handle: Option<BorrowedFd<'_>>,
    parent: Option<Arc<Node>>,
    found: Found,
    above_root: bool,
) -> Option<Arc<Node>> {
    let read = |name: &str| match handle {
        Some(handle) => gitignore_at(dir, handle, OsStr::new(name)),
        None => Gitignore::new(dir.join(name)).0,
    };
    let ignore = if found.ignore {
        read(".ignore")
    } else {
        Gitignore::empty()
    };
    let gitignore = if found.gitignore {
        read(".gitignore")
    } else {
        Gitignore::empty()
    };
    let exclude = if found.git {
        exclude_of(dir)
    } else {
        Gitignore::empty()
    };
    if ignore.is_empty() && gitignore.is_empty() && exclude.is_empty() {
        return parent;
    }
    Some(Arc::new(Node {
        parent,
        ignore,
        gitignore,
        exclude,
        above_root,
    }))
}

/// What [`Gitignore::new`] builds from `dir/name`, the file opened relative to
/// `handle` without following a symlink (a regular file only).
fn gitignore_at(dir: &Path, handle: BorrowedFd<'_>, name: &OsStr) -> Gitignore {
    use rustix::fs::{self as rfs, FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rfs::openat(handle, name, flags, Mode::empty()) else {
        return Gitignore::empty();
    };
    match rfs::fstat(&fd) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode as _) == FileType::RegularFile => {}
        _ => return Gitignore::empty(),
    }
    let path = dir.join(name);
    let mut builder = GitignoreBuilder::new(dir);
    // As `GitignoreBuilder::add`: line by line, a leading BOM dropped, a bad
    // line skipped.
    for (index, line) in BufReader::new(File::from(fd)).lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(error) if error.kind() == std::io::ErrorKind::InvalidData => continue,
            Err(_) => break,
        };
        let line = if index == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            &line
        };
        let _ = builder.add_line(Some(path.clone()), line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The rules of `dir/.git/info/exclude` (through the `gitdir:` indirection of
/// a worktree's `.git` file), rooted at `dir`.
fn exclude_of(dir: &Path) -> Gitignore {
    let dot_git = dir.join(".git");
    let Ok(metadata) = fs::metadata(&dot_git) else {
        return Gitignore::empty();
    };
    let git_dir = if metadata.is_file() {
        match common_dir(&dot_git) {
            Some(git_dir) => git_dir,
            None => return Gitignore::empty(),
        }
    } else {
        dot_git
    };
    let mut builder = GitignoreBuilder::new(dir);
    let _ = builder.add(git_dir.join("info/exclude"));
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The common git directory a worktree's `.git` file points to.
fn common_dir(dot_git: &Path) -> Option<PathBuf> {
    let first_line = |path: &Path| -> Option<String> {
        BufReader::new(File::open(path).ok()?).lines().next()?.ok()
    };
    let real = PathBuf::from(first_line(dot_git)?.strip_prefix("gitdir: ")?);
    let common = first_line(&real.join("commondir"))?;
    Some(if common.starts_with('.') {
        real.join(common)
    } else {
        PathBuf::from(common)
    })
}
