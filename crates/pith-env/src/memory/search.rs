//! [`Search`] over the in-memory files, on ripgrep's matcher and searcher.
//!
//! Kept deliberately small, for the tools' unit tests. What it does: hidden
//! files are searched, `.git/` never; `.gitignore` and `.ignore` files in the
//! search root, below it and in its ancestors apply hierarchically (the
//! nearest file that has an opinion wins, `!` re-includes); files containing a
//! NUL byte are searched up to it (and named in `binary` when they match); symlinks are not followed (find lists them,
//! grep skips them); results are sorted by path. What it does not do:
//! `.git/info/exclude`, global git excludes, `.rgignore`, file-size limits.
//!
//! Like [`LocalEnv`](crate::LocalEnv): grep's `limit_reached` is set once
//! `limit` matches are found (it stops there), find's only when more entries
//! exist than were returned.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use grep::searcher::{Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use tokio_util::sync::CancellationToken;

use super::MemoryEnv;
use super::tree::{Follow, Node, Tree};
use crate::matcher::build_matcher;
use crate::{
    FindEntry, FindOutput, FindRequest, FsError, GrepLine, GrepOutput, GrepRequest, Search,
    SearchError,
};

/// One walked path below the search root.
struct Entry {
    /// Relative to the root, `/`-separated.
    relative: String,
    node: Node,
}

/// What a search sees: the root and, for a directory, the entries not ignored.
enum Snapshot {
    File { name: String, data: Arc<Vec<u8>> },
    Dir(Vec<Entry>),
}

impl MemoryEnv {
    fn snapshot(&self, root: &Path) -> Result<Snapshot, SearchError> {
        let tree = self.lock();
        let (real, node) = tree
            .lookup(root, Follow::Final)
            .map_err(|_| SearchError::NotFound(root.to_owned()))?;
        match node {
            Node::File { data, .. } => {
                let name = root
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Ok(Snapshot::File {
                    name,
                    data: data.clone(),
                })
            }
            Node::Dir { .. } => Ok(Snapshot::Dir(walk(&tree, &real))),
            Node::Symlink { .. } => Err(SearchError::NotFound(root.to_owned())),
        }
    }
}

/// Every entry below `root` that is not ignored and not in `.git/`, sorted by relative path.
fn walk(tree: &Tree, root: &Path) -> Vec<Entry> {
    let mut ignores: HashMap<PathBuf, Gitignore> = HashMap::new();
    for dir in root.ancestors() {
        load_ignores(tree, dir, &mut ignores);
    }
    let mut skipped: Vec<PathBuf> = Vec::new();
    let mut entries = Vec::new();
    // Path order visits a directory before its children, so its ignore files
    // are loaded and its verdict known before they are checked.
    for (absolute, node) in tree.descendants(root) {
        if skipped.iter().any(|dir| absolute.starts_with(dir)) {
            continue;
        }
        let is_dir = matches!(node, Node::Dir { .. });
        if absolute.file_name().is_some_and(|name| name == ".git")
            || is_ignored(&ignores, absolute, is_dir)
        {
            if is_dir {
                skipped.push(absolute.clone());
            }
            continue;
        }
        if is_dir {
            load_ignores(tree, absolute, &mut ignores);
        }
        let Ok(relative) = absolute.strip_prefix(root) else {
            continue;
        };
        entries.push(Entry {
            relative: relative.to_string_lossy().into_owned(),
            node: node.clone(),
        });
    }
    entries.sort_by(|a, b| a.relative.cmp(&b.relative));
    entries
}

fn load_ignores(tree: &Tree, dir: &Path, ignores: &mut HashMap<PathBuf, Gitignore>) {
    let mut builder = GitignoreBuilder::new(dir);
    let mut any = false;
    for name in [".gitignore", ".ignore"] {
        if let Ok(data) = tree.read_file(&dir.join(name)) {
            any = true;
            for line in String::from_utf8_lossy(&data).lines() {
                // A line that is not a valid glob is skipped, as git does.
                let _ = builder.add_line(None, line);
            }
        }
    }
    if let (true, Ok(gitignore)) = (any, builder.build()) {
        ignores.insert(dir.to_owned(), gitignore);
    }
}

/// The verdict of the nearest ignore file that has one.
fn is_ignored(ignores: &HashMap<PathBuf, Gitignore>, path: &Path, is_dir: bool) -> bool {
    for dir in path.ancestors().skip(1) {
        if let Some(gitignore) = ignores.get(dir) {
            match gitignore.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
    }
    false
}

/// A glob matched against the relative path when it contains `/`, against
/// the file name otherwise (ripgrep's `--glob`); a leading `!` negates it.
struct PathFilter {
    matcher: GlobMatcher,
    whole_path: bool,
    negated: bool,
}

impl PathFilter {
    fn new(glob: &str) -> Result<PathFilter, SearchError> {
        let (negated, glob) = match glob.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, glob),
        };
        let mut glob = glob;
        while let Some(rest) = glob.strip_prefix("./") {
            glob = rest;
        }
        let glob = glob.strip_prefix('/').unwrap_or(glob);
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .map_err(|error| SearchError::InvalidGlob(error.to_string()))?
            .compile_matcher();
        Ok(PathFilter {
            matcher,
            whole_path: glob.contains('/'),
            negated,
        })
    }

    fn accepts(&self, relative: &str) -> bool {
        let candidate = if self.whole_path {
            relative
        } else {
            relative.rsplit('/').next().unwrap_or(relative)
        };
        self.matcher.is_match(candidate) != self.negated
    }
}

/// Collects matching and context rows of one file.
#[derive(Default)]
struct Rows {
    rows: Vec<(u64, Vec<u8>, bool)>,
    matches: usize,
}

impl Sink for Rows {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.rows.push((
            found.line_number().unwrap_or(0),
            found.bytes().to_vec(),
            true,
        ));
        self.matches += 1;
        Ok(true)
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, io::Error> {
        self.rows.push((
            context.line_number().unwrap_or(0),
            context.bytes().to_vec(),
            false,
        ));
        Ok(true)
    }
}

fn strip_line_ending(mut line: &[u8]) -> &[u8] {
    if let Some(rest) = line.strip_suffix(b"\n") {
        line = rest;
    }
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[async_trait]
impl Search for MemoryEnv {
    async fn grep(
        &self,
        request: GrepRequest,
        cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        let matcher = build_matcher(&request)?;
        let filter = request.glob.as_deref().map(PathFilter::new).transpose()?;
        let files: Vec<(String, Arc<Vec<u8>>)> = match self.snapshot(&request.root)? {
            // An explicit file is searched whatever the glob says, as ripgrep does.
            Snapshot::File { name, data } => vec![(name, data)],
            Snapshot::Dir(entries) => entries
                .into_iter()
                .filter_map(|entry| match entry.node {
                    Node::File { data, .. } => Some((entry.relative, data)),
                    _ => None,
                })
                .filter(|(relative, _)| filter.as_ref().is_none_or(|f| f.accepts(relative)))
                .collect(),
        };
        let limit = request.limit.max(1);
        let mut output = GrepOutput::default();
        for (path, data) in &files {
            if cancel.is_cancelled() {
                return Err(SearchError::Cancelled);
            }
            // Searched up to the first NUL byte, as LocalEnv does.
            let binary_offset = memchr::memchr(0, data);
            let data = match binary_offset {
                Some(nul) => &data[..memchr::memrchr(b'\n', &data[..nul]).map_or(0, |at| at + 1)],
                None => &data[..],
            };
            // As LocalEnv does (whose memory it bounds): a file with a line
            // too long to hold is skipped and reported.
            if data
                .split(|&byte| byte == b'\n')
                .any(|line| line.len() > GrepRequest::MAX_LINE_BYTES)
            {
                if output.oversized.len() < GrepRequest::OVERSIZED_LISTED {
                    output.oversized.push(path.clone());
                }
                output.oversized_count += 1;
                continue;
            }
            let remaining = limit - output.match_count;
            let mut rows = Rows::default();
            SearcherBuilder::new()
                .line_number(true)
                .before_context(request.context)
                .after_context(request.context)
                .max_matches(Some(remaining as u64))
                .build()
                .search_slice(&matcher, data, &mut rows)
                .map_err(|error| FsError::from_io(error, request.root.join(path)))?;
            output.match_count += rows.matches;
            if let Some(offset) = binary_offset
                && rows.matches > 0
            {
                output.push_binary(path.clone(), offset as u64);
            }
            output
                .lines
                .extend(rows.rows.into_iter().map(|(line_number, text, is_match)| {
                    GrepLine {
                        path: path.clone(),
                        line_number,
                        text: String::from_utf8_lossy(GrepLine::clip_text(strip_line_ending(
                            &text,
                        )))
                        .into_owned(),
                        is_match,
                    }
                }));
            if output.match_count == limit {
                output.limit_reached = true;
                break;
            }
        }
        Ok(output)
    }

    async fn find(
        &self,
        request: FindRequest,
        cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        // A pattern with `/` matches the path relative to the root (Pi 1.6), one
        // without matches the file name; a leading `./` names the root.
        let glob = request.pattern.clone();
        let filter = PathFilter::new(&glob)?;
        let entries = match self.snapshot(&request.root)? {
            Snapshot::Dir(entries) => entries,
            Snapshot::File { .. } => {
                return Err(FsError::new(crate::FsErrorKind::NotADirectory, &request.root).into());
            }
        };
        let mut output = FindOutput::default();
        for entry in entries {
            if cancel.is_cancelled() {
                return Err(SearchError::Cancelled);
            }
            if !filter.accepts(&entry.relative) {
                continue;
            }
            if output.entries.len() == request.limit {
                output.limit_reached = true;
                break;
            }
            output.entries.push(FindEntry {
                path: entry.relative,
                is_dir: matches!(entry.node, Node::Dir { .. }),
            });
        }
        Ok(output)
    }

    /// The start resolved through the confined file-system view (an
    /// in-memory tree has no concurrent swapper to race), then searched.
    fn confine(self: Arc<Self>, confinement: crate::Confinement) -> Arc<dyn Search> {
        let view = crate::FileSystem::confine(self.clone(), confinement);
        Arc::new(MemorySearchBeneath { env: self, view })
    }
}

/// [`MemoryEnv`]'s search confined beneath roots.
struct MemorySearchBeneath {
    env: Arc<MemoryEnv>,
    view: Arc<dyn crate::FileSystem>,
}

impl MemorySearchBeneath {
    /// The start's real path, beneath a root.
    async fn start(&self, root: &Path) -> Result<PathBuf, SearchError> {
        match self.view.canonicalize(root).await {
            Ok(real) => Ok(real),
            Err(error) if error.kind == crate::FsErrorKind::NotFound => {
                Err(SearchError::NotFound(root.to_path_buf()))
            }
            Err(error) => Err(SearchError::Fs(error)),
        }
    }
}

#[async_trait]
impl Search for MemorySearchBeneath {
    async fn grep(
        &self,
        mut request: GrepRequest,
        cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        request.root = self.start(&request.root).await?;
        self.env.grep(request, cancel).await
    }

    async fn find(
        &self,
        mut request: FindRequest,
        cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        request.root = self.start(&request.root).await?;
        self.env.find(request, cancel).await
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
