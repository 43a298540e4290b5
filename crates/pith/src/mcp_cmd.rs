//! `pith mcp`: the tools as an MCP server on stdin/stdout.

use pith_env::Env;
use pith_tools::OverwritePolicy;

use crate::config::Workspace;

/// Serves until the client closes stdin; returns the exit status.
pub(crate) async fn run(workspace: Workspace, env: &Env) -> anyhow::Result<i32> {
    // One connection is one session: writes need an earlier read of the file.
    let toolset = workspace.toolset(env, OverwritePolicy::RequireRead, false);
    let mut server = pith_mcp::PithServer::new(toolset);
    if workspace.cwd_given {
        server = server.keep_cwd();
    }
    pith_mcp::serve_server_stdio(server).await?;
    Ok(0)
}
