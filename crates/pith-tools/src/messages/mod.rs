//! Every text a model can see from a tool that is not the tool's output
//! itself: errors, notices and hints, one file per tool (and one for the
//! pipeline, the argument checks, path arguments, and the load/store steps
//! the tools that change files share), so that a reviewer reads them all in
//! one place. The tools call into these; the texts are pinned by the insta
//! snapshots (tests/snapshots.rs) and the tests that name them.

pub(crate) mod apply_patch;
pub(crate) mod args;
pub(crate) mod bash;
pub(crate) mod edit;
pub(crate) mod find;
pub(crate) mod grep;
pub(crate) mod jobs;
pub(crate) mod journal;
pub(crate) mod ls;
pub(crate) mod paths;
pub(crate) mod pipeline;
pub(crate) mod read;
pub(crate) mod stale;
pub(crate) mod textfile;
pub(crate) mod undo;
pub(crate) mod write;

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "journal_tests.rs"]
mod journal_tests;
