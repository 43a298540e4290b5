//! The `pith` binary: the command line of [`pith::run`].

/// mimalloc for small blocks, the system's malloc for large ones (see
/// [`pith::Allocator`]).
#[global_allocator]
static ALLOCATOR: pith::Allocator = pith::Allocator;

fn main() {
    // Exit explicitly: a runtime blocked on reading stdin must not hold the process.
    std::process::exit(pith::run());
}
