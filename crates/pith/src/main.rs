//! The pith command line.

fn main() {}
