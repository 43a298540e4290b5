//! The pith command line: `pith call`, `pith batch`, `pith tools`, `pith mcp`.
//!
//! Flags are parsed (`cli`) into a validated configuration (`config`); the commands
//! only ever see the validated value. The binary's `main` is [`run`]; a host
//! that wants the same binary with tools of its own calls [`run_with`] from
//! its `main` (see `examples/custom-tool`).

mod allocator;
mod app;
mod args_in_place;
mod batch;
mod call;
mod cli;
mod config;
mod extend;
mod mcp_cmd;
mod remote;
mod render;
mod resident;
mod signals;
mod tools_cmd;
mod undo_cmd;

pub use crate::allocator::Allocator;
pub use crate::extend::Extend;

/// Runs the `pith` command line on this process's arguments; returns the exit status.
pub fn run() -> i32 {
    app::run()
}

/// [`run`] with a host's own tools: `extend` adds them to every tool set the
/// command builds (`call`, `batch`, `tools`, `mcp`), e.g.
/// `pith::run_with(|tools| tools.tool(MyTool::new()))`. They run through the
/// same pipeline as the built-in tools, are always present (`--tools`
/// selects among the built-in ones) and are listed after them.
pub fn run_with(extend: Extend) -> i32 {
    extend::install(extend);
    app::run()
}
