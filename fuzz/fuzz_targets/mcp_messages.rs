//! Fuzzes MCP message handling: after a valid handshake, arbitrary bytes as JSON-RPC
//! lines to an in-process server over an in-memory file system. The server never
//! panics, every output line is JSON, and a ping after the garbage is answered.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pith_env::{Env, MemoryEnv};
use pith_mcp::PithServer;
use pith_tools::ToolSet;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);
const PING: &str = "{\"jsonrpc\":\"2.0\",\"id\":\"fuzz-ping\",\"method\":\"ping\"}\n";

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        let memory = MemoryEnv::with_files(&[("/w/a.txt", "alpha\nbeta\n")]);
        let toolset = ToolSet::builder(Env::memory(memory)).cwd("/w").build();
        let (client, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let server = tokio::spawn(pith_mcp::serve(
            PithServer::new(toolset),
            server_read,
            server_write,
        ));
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut input = HANDSHAKE.as_bytes().to_vec();
        input.extend_from_slice(data);
        input.extend_from_slice(b"\n");
        input.extend_from_slice(PING.as_bytes());
        let writer = tokio::spawn(async move {
            let _ = client_write.write_all(&input).await;
            client_write
        });
        let mut lines = BufReader::new(client_read).lines();
        let answered = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while let Ok(Some(line)) = lines.next_line().await {
                let value: serde_json::Value = serde_json::from_str(&line)
                    .unwrap_or_else(|error| panic!("non-JSON output {line:?}: {error}"));
                if value["id"] == "fuzz-ping" && value.get("result").is_some() {
                    return true;
                }
            }
            false
        })
        .await;
        // The fuzz input may itself close the session (e.g. an unparseable handshake
        // reply is impossible, but a shutdown-like message is not); only a hang fails.
        assert!(answered.is_ok(), "the server hung");
        drop(writer.await);
        drop(lines);
        server.abort();
    });
});
