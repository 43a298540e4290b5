//! [`LineTransport`]: JSON-RPC messages, one per line, over any byte streams.
//!
//! rmcp's own stream transport silently skips a line that is not JSON, and maps a
//! request it cannot deserialize to `Method not found` or to nothing at all. pith checks
//! each line first ([`crate::validate`]): a line that is not JSON gets a parse error
//! (`-32700`, id `null`), a malformed request an invalid-request (`-32600`) or
//! invalid-params (`-32602`) error naming what is wrong, with the request's id when it
//! has a usable one (else `null`). Only well-formed messages reach rmcp. Either way the
//! server keeps serving.

use std::future::Future;
use std::io;
use std::sync::Arc;

use pith_tools::MutationQueue;
use rmcp::RoleServer;
use rmcp::model::{ClientRequest, ErrorCode, JsonRpcError, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::validate::{self, INVALID_REQUEST, PARSE_ERROR, Problem};

/// A server-side MCP transport over newline-delimited JSON (the stdio transport of the
/// spec), for any `AsyncRead` / `AsyncWrite` pair.
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read; kept across cancelled `receive` calls so no bytes are lost.
    line: Vec<u8>,
    write: Arc<Mutex<W>>,
    /// The tool names, for error messages about a `tools/call`'s `name`.
    tools: Vec<String>,
    /// Where each `tools/call` takes its place in arrival order, when set.
    queue: Option<Arc<MutationQueue>>,
    /// The ids (as JSON text) of the client's requests that have not been answered: a
    /// request reusing one gets an error instead of a call that would never be answered.
    in_flight: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading requests from `read` and writing responses to `write`.
    pub fn new(read: R, write: W) -> LineTransport<R, W> {
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            write: Arc::new(Mutex::new(write)),
            tools: Vec::new(),
            queue: None,
            in_flight: Arc::default(),
        }
    }

    /// Gives each `tools/call` a [`Ticket`](pith_tools::Ticket) from `queue` as it is read, in the
    /// request's extensions: rmcp runs each request on a task of its own, and
    /// tasks start in any order, so this is the last point where the order of
    /// arrival is known. [`PithServer`](crate::PithServer) calls the tool in that place.
    pub fn with_arrival_order(mut self, queue: Arc<MutationQueue>) -> LineTransport<R, W> {
        self.queue = Some(queue);
        self
    }

    /// Names these tools in the error for a `tools/call` without a valid `name`.
    pub fn with_tool_names(mut self, tools: Vec<String>) -> LineTransport<R, W> {
        self.tools = tools;
        self
    }

    /// Answers a line that is not a valid message, from a task of its own (so a
    /// cancelled `receive` can never leave half a reply on the stream).
    fn reply_error(&self, id: Value, code: i64, message: String) {
        let reply =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let write = self.write.clone();
        tokio::spawn(async move {
            if let Err(error) = write_line(&write, reply.to_string().into_bytes()).await {
                tracing::warn!("could not send an error reply: {error}");
            }
        });
    }

    /// Handles one complete line: a message to deliver, or `None` after replying to it.
    fn decode(&self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
        let value = match serde_json::from_slice::<Value>(line) {
            Ok(value) => value,
            Err(error) => {
                tracing::debug!("unparsable message: {error}");
                let message = validate::parse_error_message(&error);
                self.reply_error(Value::Null, PARSE_ERROR, message);
                return None;
            }
        };
        match validate::check(&value, &self.tools) {
            Ok(()) => {}
            Err(Problem::Reply { id, code, message }) => {
                tracing::debug!("invalid message {id}: {message}");
                self.reply_error(id, code, message);
                return None;
            }
            Err(Problem::Drop(why)) => {
                tracing::debug!("ignoring a message it cannot read: {why}");
                return None;
            }
        }
        // Only a request is answered; the check has made its id usable.
        let request_id = value
            .get("method")
            .and(value.get("id"))
            .map(validate::reply_id);
        if let Some(id) = &request_id {
            let mut in_flight = self.in_flight_ids();
            if !in_flight.insert(id.to_string()) {
                drop(in_flight);
                tracing::debug!("request id {id} is already in flight");
                self.reply_error(
                    id.clone(),
                    INVALID_REQUEST,
                    format!("Request id {id} is already in use by a request in progress; send each request with a new id."),
                );
                return None;
            }
        }
        if value.get("method").and_then(Value::as_str) == Some("notifications/cancelled")
            && let Some(id) = value.pointer("/params/requestId")
        {
            self.in_flight_ids().remove(&id.to_string());
        }
        match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
            Ok(message) => Some(message),
            Err(error) => {
                match request_id {
                    Some(id) => {
                        self.in_flight_ids().remove(&id.to_string());
                        tracing::debug!("invalid request {id}: {error}");
                        self.reply_error(id, INVALID_REQUEST, format!("Invalid request: {error}"));
                    }
                    None => tracing::debug!("ignoring a message it cannot read: {error}"),
                }
                None
            }
        }
    }
}

/// rmcp answers a method it has no handler for with just the method's name as the
/// message: say what it is and what there is instead.
impl<R, W> LineTransport<R, W> {
    fn in_flight_ids(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The id an answer to the client carries, as JSON text.
fn answered_id(item: &TxJsonRpcMessage<RoleServer>) -> Option<String> {
    match item {
        JsonRpcMessage::Response(response) => serde_json::to_string(&response.id).ok(),
        JsonRpcMessage::Error(JsonRpcError { id: Some(id), .. }) => serde_json::to_string(id).ok(),
        _ => None,
    }
}

fn explain_method_not_found(item: &mut TxJsonRpcMessage<RoleServer>) {
    if let JsonRpcMessage::Error(JsonRpcError { error, .. }) = item
        && error.code == ErrorCode::METHOD_NOT_FOUND
        && !error.message.contains(char::is_whitespace)
    {
        error.message = validate::method_not_found_message(&error.message).into();
    }
}

async fn write_line<W: AsyncWrite + Unpin>(write: &Mutex<W>, mut bytes: Vec<u8>) -> io::Result<()> {
    bytes.push(b'\n');
    let mut write = write.lock().await;
    write.write_all(&bytes).await?;
    write.flush().await
}

/// The line without its line ending and without a leading UTF-8 BOM.
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        explain_method_not_found(&mut item);
        if let Some(id) = answered_id(&item) {
            self.in_flight_ids().remove(&id);
        }
        let write = self.write.clone();
        async move { write_line(&write, serde_json::to_vec(&item)?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // `read_until` appends to `self.line`, so a cancelled call resumes the line.
            match self.read.read_until(b'\n', &mut self.line).await {
                Ok(0) if self.line.is_empty() => return None,
                Ok(_) => {}
                Err(error) => {
                    tracing::error!("reading a message failed: {error}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let message = trim_line(&line);
            if message.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if let Some(mut message) = self.decode(message) {
                if let (Some(queue), JsonRpcMessage::Request(request)) = (&self.queue, &mut message)
                    && let ClientRequest::CallToolRequest(call) = &mut request.request
                {
                    call.extensions.insert(queue.ticket());
                }
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        let mut write = self.write.lock().await;
        write.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn answers_a_line_that_is_not_json_and_keeps_reading() {
        let input = b"{nope\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".to_vec();
        let (writer, mut peer) = tokio::io::duplex(4096);
        let mut transport = LineTransport::new(std::io::Cursor::new(input), writer);
        let message = transport.receive().await.unwrap();
        assert_eq!(serde_json::to_value(message).unwrap()["method"], "ping");
        assert!(transport.receive().await.is_none());
        let mut reply = vec![0_u8; 4096];
        let length = peer.read(&mut reply).await.unwrap();
        let reply: Value = serde_json::from_slice(&reply[..length]).unwrap();
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["error"]["code"], PARSE_ERROR);
    }

    #[tokio::test]
    async fn answers_an_unreadable_request_with_its_id() {
        let input =
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":5}\n".to_vec();
        let (writer, mut peer) = tokio::io::duplex(4096);
        let mut transport = LineTransport::new(std::io::Cursor::new(input), writer);
        assert!(transport.receive().await.is_none());
        let mut reply = vec![0_u8; 4096];
        let length = peer.read(&mut reply).await.unwrap();
        let reply: Value = serde_json::from_slice(&reply[..length]).unwrap();
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], validate::INVALID_PARAMS);
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("`params` must be an object"), "{message}");
    }
}
