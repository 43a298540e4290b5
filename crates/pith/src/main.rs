//! The `pith` binary: the command line of [`pith::run`].

use std::io::Write;

/// mimalloc for small blocks, the system's malloc for large ones (see
/// [`pith::Allocator`]).
#[global_allocator]
static ALLOCATOR: pith::Allocator = pith::Allocator;

fn main() {
    let code = pith::run();
    // Exit at once, explicitly: a runtime blocked on reading stdin must not
    // hold the process, and the exit handlers have nothing to do that matters
    // (mimalloc would hand its free pages back one `madvise` at a time: 0.5 ms
    // of a batch of 1,000 reads, 1.5 ms of 5,000). What pith wrote is flushed
    // first; files, processes and temporary paths were cleaned up by `run`.
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` ends the process without running exit handlers; no
    // handler of this program or its libraries must run (Rust has no static
    // destructors; the standard streams are flushed above).
    unsafe { libc::_exit(code) }
}
