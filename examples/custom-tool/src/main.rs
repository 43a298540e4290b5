//! `pith-with-append`: the `pith` command line with the `append` tool added.
//! `pith-with-append tools --json` lists it after the built-in tools; `call`, `batch`
//! and `mcp` run it like any other tool.

use pith_example_custom_tool::AppendTool;

/// The allocator the `pith` binary uses (see `pith::Allocator`).
#[global_allocator]
static ALLOCATOR: pith::Allocator = pith::Allocator;

fn main() {
    std::process::exit(pith::run_with(|tools| tools.tool(AppendTool::new())));
}
