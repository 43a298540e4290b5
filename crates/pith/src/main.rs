//! The `pith` binary: the command line of [`pith::run`].

fn main() {
    // Exit explicitly: a runtime blocked on reading stdin must not hold the process.
    std::process::exit(pith::run());
}
