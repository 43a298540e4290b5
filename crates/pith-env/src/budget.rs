//! A process-wide memory budget in MiB that concurrent work reserves its worst
//! case from: greps and finds share one (`local/search/budget.rs`), large edits
//! another (`pith-tools`' `tools/edit/budget.rs`).

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

/// MiB that callers reserve before work whose memory they know in advance,
/// waiting in arrival order (tokio's semaphore is fair) while it is spent: many
/// such calls at once then cost at most the budget, not their sum.
#[derive(Debug)]
pub struct MemoryBudget {
    permits: Semaphore,
    mib: u32,
}

/// Part of a [`MemoryBudget`], given back when dropped.
#[derive(Debug)]
#[must_use = "the reservation is given back when dropped"]
pub struct Reservation<'a> {
    _permit: Option<SemaphorePermit<'a>>,
}

impl MemoryBudget {
    /// A budget of `mib` MiB (usable in a `static`).
    pub const fn new(mib: u32) -> MemoryBudget {
        MemoryBudget {
            permits: Semaphore::const_new(mib as usize),
            mib,
        }
    }

    /// The whole budget, in MiB.
    pub const fn mib(&self) -> u32 {
        self.mib
    }

    /// Waits until `mib` (at most the whole budget) is free and holds it until
    /// the reservation is dropped; `None` if `cancel` fires first. Reserving 0
    /// waits for nothing.
    pub async fn reserve(&self, mib: u32, cancel: &CancellationToken) -> Option<Reservation<'_>> {
        if mib == 0 {
            return Some(Reservation { _permit: None });
        }
        tokio::select! {
            // The semaphore is never closed; if it were, the work would run
            // unbudgeted rather than fail.
            permit = self.permits.acquire_many(mib.min(self.mib)) => Some(Reservation { _permit: permit.ok() }),
            () = cancel.cancelled() => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn reservations_wait_while_the_budget_is_spent_and_give_way_to_a_cancel() {
        static BUDGET: MemoryBudget = MemoryBudget::new(100);
        let cancel = CancellationToken::new();
        let first = BUDGET.reserve(90, &cancel).await;
        assert!(first.is_some());
        let waiting = tokio::time::timeout(Duration::from_millis(50), BUDGET.reserve(20, &cancel));
        assert!(waiting.await.is_err(), "the second reservation must wait");
        // More than the whole budget asks for the whole budget.
        let cancelled = CancellationToken::new();
        let whole = BUDGET.reserve(1000, &cancelled);
        cancelled.cancel();
        assert!(whole.await.is_none(), "a cancel ends the wait");
        assert!(
            BUDGET.reserve(0, &cancel).await.is_some(),
            "nothing to wait for"
        );
        drop(first);
        assert!(BUDGET.reserve(1000, &cancel).await.is_some());
    }
}
