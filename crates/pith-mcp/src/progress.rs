//! Tool updates (bash's current output tail) as MCP `notifications/progress`.

use std::sync::Arc;
use std::time::Duration;

use pith_tools::{ToolUpdate, UpdateFn};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// At most one notification per this interval; newer updates replace unsent ones.
const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// A call that sends nothing for this long sends a heartbeat (its elapsed
/// time), so clients that reset their timeout on progress keep waiting.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(3);

/// Forwards the updates of one call to the client while the call runs.
pub(crate) struct Progress {
    latest: Arc<watch::Sender<String>>,
    done: CancellationToken,
    task: JoinHandle<()>,
}

impl Progress {
    /// Starts forwarding to `peer` under the request's progress token.
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Progress {
        let (latest, mut receiver) = watch::channel(String::new());
        let done = CancellationToken::new();
        let stop = done.clone();
        let task = tokio::spawn(async move {
            let mut count = 0_u32;
            let started = tokio::time::Instant::now();
            loop {
                let message = tokio::select! {
                    biased;
                    () = stop.cancelled() => break,
                    changed = receiver.changed() => {
                        if changed.is_err() {
                            break;
                        }
                        receiver.borrow_and_update().clone()
                    }
                    () = tokio::time::sleep(HEARTBEAT) => {
                        format!("running for {}s", started.elapsed().as_secs())
                    }
                };
                count += 1;
                let param = ProgressNotificationParam::new(token.clone(), f64::from(count))
                    .with_message(message);
                if let Err(error) = peer.notify_progress(param).await {
                    tracing::debug!("progress notification not sent: {error}");
                    break;
                }
                tokio::select! {
                    biased;
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(MIN_INTERVAL) => {}
                }
            }
        });
        Progress {
            latest: Arc::new(latest),
            done,
            task,
        }
    }

    /// The callback the tool calls with each update.
    pub(crate) fn updates(&self) -> UpdateFn {
        let latest = self.latest.clone();
        Arc::new(move |update: ToolUpdate| {
            let text: Vec<&str> = update.content.iter().filter_map(|c| c.as_text()).collect();
            latest.send_replace(text.join("\n"));
        })
    }

    /// Stops forwarding; returns once no notification can follow the call's response.
    pub(crate) async fn finish(self) {
        self.done.cancel();
        let _ = self.task.await;
    }
}
