//! Job-end notices as MCP logging notifications (`notifications/message`).

use std::sync::Arc;

use pith_tools::Session;
use rmcp::{Peer, RoleServer};

/// The logger name job notices carry.
const LOGGER: &str = "pith/jobs";

/// Sends each of `session`'s job-end notices (`[job 3 `npm run dev` exited
/// with code 1; jobs output 3 for its output]`) to the client as an `info`
/// log message. The same line also rides on the session's next tool result.
#[allow(
    deprecated,
    reason = "MCP logging is the notification the jobs contract names; rmcp marks it deprecated by SEP-2577"
)]
pub(crate) fn forward(session: &Session, peer: Peer<RoleServer>) {
    session.on_job_end(Arc::new(move |line: &str| {
        let peer = peer.clone();
        let param = rmcp::model::LoggingMessageNotificationParam::new(
            rmcp::model::LoggingLevel::Info,
            serde_json::Value::String(line.to_owned()),
        )
        .with_logger(LOGGER);
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if let Err(error) = peer.notify_logging_message(param).await {
                    tracing::debug!("job notice not sent: {error}");
                }
            });
        }
    }));
}
