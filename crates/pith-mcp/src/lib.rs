//! The pith tools as an MCP server (the official Rust SDK, `rmcp`).
//!
//! [`PithServer`] serves one connection over a [`pith_tools::ToolSet`]:
//!
//! - `tools/list`: the tools with title, description, input schema and annotations
//!   (read-only, destructive, idempotent hints; bash is open-world unless the network is
//!   denied) and an `outputSchema`.
//! - `tools/call`: the model-facing parts as content (text, images), the typed result as
//!   `structuredContent`, `isError` for tool errors, and the details for a UI in the
//!   result's `_meta` under [`DETAILS_META_KEY`]. A result whose full output was saved to
//!   a file carries a resource link to it, which `resources/read` serves in pages.
//! - A request that reuses the id of one still in progress gets a JSON-RPC error.
//!   Bad arguments come back as an error result naming the field, like everywhere else.
//! - Progress: with a `progressToken`, bash's output tail arrives as
//!   `notifications/progress` (at most every 100 ms); `notifications/cancelled` cancels
//!   the call (bash kills its process group).
//! - Roots: when the client offers MCP roots, the first one is the working directory,
//!   unless [`PithServer::keep_cwd`] (an explicit `--cwd`); every root bounds containment.
//!
//! [`serve`] runs it over any pair of byte streams with [`LineTransport`] (which answers
//! malformed JSON with a JSON-RPC parse error, and a malformed request with an error
//! naming what is wrong); [`serve_stdio`] over stdin/stdout.
//!
//! ```no_run
//! # async fn demo() -> Result<(), pith_mcp::Error> {
//! use pith_env::Env;
//! use pith_tools::ToolSet;
//!
//! let toolset = ToolSet::builder(Env::local()).cwd("/path/to/project").build();
//! pith_mcp::serve_stdio(toolset).await?;
//! # Ok(()) }
//! ```

mod convert;
mod notices;
mod progress;
mod resources;
mod roots;
mod server;
mod transport;
mod validate;

pub use crate::convert::DETAILS_META_KEY;
pub use crate::server::PithServer;
pub use crate::transport::LineTransport;

use pith_tools::ToolSet;
use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncRead, AsyncWrite};

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The MCP handshake failed.
    #[error("MCP initialization failed: {0}")]
    Initialize(#[source] Box<ServerInitializeError>),
    /// The server task failed.
    #[error("the MCP server task failed: {0}")]
    Task(#[source] tokio::task::JoinError),
}

/// Serves one connection over `read` / `write` until the client closes `read`. In-flight
/// calls get a few seconds to answer, then are cancelled.
pub async fn serve<R, W>(server: PithServer, read: R, write: W) -> Result<(), Error>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let transport = LineTransport::new(read, write)
        .with_tool_names(server.tool_names())
        .with_arrival_order(server.queue());
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // The client left before the handshake: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(context)) => {
            tracing::info!("connection closed before initialization ({context})");
            return Ok(());
        }
        Err(error) => return Err(Error::Initialize(Box::new(error))),
    };
    let reason = running.waiting().await.map_err(Error::Task)?;
    tracing::info!("MCP connection ended: {reason:?}");
    Ok(())
}

/// Serves `toolset` over stdin/stdout (the MCP stdio transport).
pub async fn serve_stdio(toolset: ToolSet) -> Result<(), Error> {
    serve_server_stdio(PithServer::new(toolset)).await
}

/// Serves a configured [`PithServer`] over stdin/stdout.
pub async fn serve_server_stdio(server: PithServer) -> Result<(), Error> {
    let (read, write) = rmcp::transport::stdio_pipes();
    serve(server, read, write).await
}
