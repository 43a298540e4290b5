//! Job-end notices as MCP logging notifications (`notifications/message`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use pith_tools::Session;
use rmcp::{Peer, RoleServer};

/// The logger name job notices carry.
const LOGGER: &str = "pith/jobs";

/// The lowest level of log message the client wants (`logging/setLevel`); every
/// level until the client sets one.
#[derive(Clone, Debug, Default)]
pub(crate) struct LogLevel(Arc<AtomicU8>);

#[allow(
    deprecated,
    reason = "MCP logging is the notification the jobs contract names; rmcp marks it deprecated by SEP-2577"
)]
impl LogLevel {
    /// Records the client's choice.
    pub(crate) fn set(&self, level: rmcp::model::LoggingLevel) {
        self.0.store(level as u8, Ordering::Relaxed);
    }

    /// Whether a message at `level` is wanted.
    pub(crate) fn wants(&self, level: rmcp::model::LoggingLevel) -> bool {
        level as u8 >= self.0.load(Ordering::Relaxed)
    }
}

/// Sends each of `session`'s job-end notices (`[job 3 `npm run dev` exited
/// with code 1; jobs output 3 for its output]`) to the client as an `info`
/// log message. The same line also rides on the session's next tool result.
#[allow(
    deprecated,
    reason = "MCP logging is the notification the jobs contract names; rmcp marks it deprecated by SEP-2577"
)]
pub(crate) fn forward(session: &Session, peer: Peer<RoleServer>, level: LogLevel) {
    session.on_job_end(Arc::new(move |line: &str| {
        if !level.wants(rmcp::model::LoggingLevel::Info) {
            return;
        }
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
