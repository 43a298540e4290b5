//! Local search on ripgrep's library crates.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::{FindOutput, FindRequest, GrepOutput, GrepRequest, LocalEnv, Search, SearchError};

#[async_trait]
impl Search for LocalEnv {
    async fn grep(
        &self,
        _request: GrepRequest,
        _cancel: CancellationToken,
    ) -> Result<GrepOutput, SearchError> {
        Err(SearchError::Unsupported)
    }

    async fn find(
        &self,
        _request: FindRequest,
        _cancel: CancellationToken,
    ) -> Result<FindOutput, SearchError> {
        Err(SearchError::Unsupported)
    }
}
