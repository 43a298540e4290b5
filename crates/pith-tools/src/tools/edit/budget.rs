//! The memory budget that concurrent edits of large files share.
//!
//! One edit is bounded by its file (an edit of a file up to 64 MiB holds the
//! old and the new text, about 2.7x the file at its peak on the fuzzy rungs;
//! a larger file is streamed within about 128 MiB), but a batch or an MCP
//! client may send many at once: 16 edits of 30 MiB files in one batch peaked
//! at 889 MiB (530 MiB for exact ones). Each edit of a file of 1 MiB or more
//! now reserves its worst case from one process-wide budget of
//! [`BUDGET_MIB`] before it reads the file, and waits, in arrival order (tokio's
//! semaphore is fair), while the budget is spent. An edit reserves once and
//! inside its file's turn, and holds nothing else a waiting edit needs, so
//! reservations cannot wait on each other in a circle. Smaller files reserve
//! nothing: they cost little, and most edits are of them.

use tokio::sync::{Semaphore, SemaphorePermit};

/// The budget, in MiB, shared by all edits of the process.
pub(super) const BUDGET_MIB: u32 = 512;

static BUDGET: Semaphore = Semaphore::const_new(BUDGET_MIB as usize);

const MIB: u64 = 1024 * 1024;

/// What an edit of a `len`-byte file reserves, in MiB: nothing under 1 MiB;
/// three times the file up to the in-memory limit (the old text, the new one
/// and the engine's normalised copy); the streamed path's bound above it.
pub(super) fn cost(len: u64) -> u32 {
    if len < MIB {
        return 0;
    }
    let mib = if len > super::large::IN_MEMORY_MAX_BYTES {
        128
    } else {
        (len * 4).div_ceil(MIB)
    };
    u32::try_from(mib).unwrap_or(BUDGET_MIB).min(BUDGET_MIB)
}

/// Waits until `mib` of the budget is free and holds it until dropped
/// (`None` for a reservation of nothing).
pub(super) async fn reserve(mib: u32) -> Option<SemaphorePermit<'static>> {
    if mib == 0 {
        return None;
    }
    // The semaphore is never closed; if it were, the edit would run unbudgeted.
    BUDGET.acquire_many(mib.min(BUDGET_MIB)).await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_reserves_three_times_its_file_and_never_more_than_the_budget() {
        assert_eq!(cost(1000), 0);
        assert_eq!(cost(MIB), 4);
        assert_eq!(cost(30 * MIB), 120);
        assert_eq!(cost(64 * MIB), 256);
        assert_eq!(cost(64 * MIB + 1), 128);
        assert_eq!(cost(u64::MAX), 128);
    }

    #[tokio::test]
    async fn reservations_wait_while_the_budget_is_spent() {
        let first = reserve(BUDGET_MIB - 10).await;
        assert!(first.is_some());
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), reserve(20));
        assert!(waiting.await.is_err(), "the second reservation must wait");
        drop(first);
        assert!(reserve(20).await.is_some());
        assert!(reserve(0).await.is_none());
    }
}
