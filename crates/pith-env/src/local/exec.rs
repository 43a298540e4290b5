//! Local processes: process groups, tree kill, waiting that never hangs.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::{Exec, ExecError, ExecOutcome, ExecRequest, LocalEnv, OutputSink};

/// The live process groups this adapter started.
#[derive(Debug, Default)]
pub(crate) struct ProcessTable {}

#[async_trait]
impl Exec for LocalEnv {
    async fn exec(
        &self,
        _request: ExecRequest,
        _sink: &mut dyn OutputSink,
        _cancel: CancellationToken,
    ) -> Result<ExecOutcome, ExecError> {
        let _ = &self.processes;
        Err(ExecError::Unsupported)
    }

    fn kill_all(&self) {}
}
