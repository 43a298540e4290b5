//! `find`: the first `limit` entries whose path matches a glob, in path order.
//!
//! The [ordered walk](super::walk) lists directories in parallel but yields
//! entries in path order, so the search stops as soon as it has seen one match
//! past the limit (which proves `limit_reached`): the output is deterministic
//! and a limited search reads only the part of the tree it reports.

use super::glob::PathGlob;
use super::walk::{OrderedWalk, Select};
use super::{Start, Stop, thread_count};
use crate::{FindEntry, FindOutput, FindRequest, FsError, FsErrorKind, SearchError};

pub(super) fn find(
    request: &FindRequest,
    start: Start,
    cancel: &Stop,
) -> Result<FindOutput, SearchError> {
    let glob = PathGlob::new(&request.pattern)?;
    let Start::Dir(start) = start else {
        return Err(SearchError::Fs(FsError::new(
            FsErrorKind::NotADirectory,
            &request.root,
        )));
    };
    let limit = request.limit.max(1);
    let select = |relative: &[u8], is_dir: bool, _: bool| glob.is_match(relative, is_dir);
    let select: &Select<'_> = &select;
    let walk = OrderedWalk::new(&request.root, start, select, cancel);
    let mut output = FindOutput::default();
    std::thread::scope(|scope| {
        // Helpers only: where a thread is refused (a `pids` limit) this
        // thread walks alone, as on one core.
        for _ in 1..thread_count() {
            let _ = std::thread::Builder::new().spawn_scoped(scope, || walk.help());
        }
        while let Some((_, entry)) = walk.next() {
            if output.entries.len() == limit {
                output.limit_reached = true;
                break;
            }
            output.entries.push(FindEntry {
                path: super::relative_display(&request.root, &entry.path),
                is_dir: entry.is_dir,
            });
        }
        walk.finish();
    });
    if cancel.is_set() {
        return Err(SearchError::Cancelled);
    }
    Ok(output)
}
