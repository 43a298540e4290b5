//! The pith tools as an MCP server.
