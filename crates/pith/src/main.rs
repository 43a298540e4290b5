//! The pith command line: `pith call`, `pith batch`, `pith tools`, `pith mcp`.
//!
//! Flags are parsed ([`cli`]) into a validated configuration ([`config`]); the commands
//! only ever see the validated value.

mod app;
mod batch;
mod call;
mod cli;
mod config;
mod mcp_cmd;
mod remote;
mod render;
mod signals;
mod tools_cmd;
mod undo_cmd;

fn main() {
    // Exit explicitly: a runtime blocked on reading stdin must not hold the process.
    std::process::exit(app::run());
}
