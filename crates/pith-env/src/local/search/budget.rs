//! The memory budget that concurrent searches share (finds reserve a fixed
//! part of it, see [`FIND_COST`]).
//!
//! Each search's regex memory is capped ([`GrepRequest::REGEX_SIZE_LIMIT`] to
//! compile, [`GrepRequest::REGEX_DFA_LIMIT`] per worker's lazy DFA), and the
//! line buffers are capped too, so a grep's worst case is known before it
//! starts. A grep reserves that worst case from one process-wide budget of
//! [`BUDGET_MIB`] and waits, in arrival order (tokio's semaphore is fair), while
//! the budget is spent: 32 concurrent heavy patterns then cost at most the
//! budget, not 32 times a search. Most searches use a small part of what they
//! reserve; the price is that only a handful run at once, which on a machine
//! with a few cores costs little, since each search already uses every core.

use crate::{GrepRequest, MemoryBudget};

/// The budget, in MiB, shared by all searches of the process.
pub(super) const BUDGET_MIB: u32 = 320;

/// The budget itself.
pub(super) static BUDGET: MemoryBudget = MemoryBudget::new(BUDGET_MIB);

const MIB: usize = 1024 * 1024;

/// A grep's worst case in MiB with `threads` workers: the compiled program
/// (forward and reverse NFAs, plus grep-regex's fixed 10 MiB one-pass and
/// 1 MiB DFA limits), two lazy DFA caches and a 1 MiB line buffer per worker,
/// and the one shared buffer for long lines.
pub(super) fn grep_cost(threads: usize) -> u32 {
    let program = 2 * GrepRequest::REGEX_SIZE_LIMIT / MIB + 12;
    let per_thread = 2 * GrepRequest::REGEX_DFA_LIMIT / MIB + 1;
    let cost = program + threads * per_thread + GrepRequest::MAX_LINE_BYTES / MIB;
    u32::try_from(cost).unwrap_or(BUDGET_MIB).min(BUDGET_MIB)
}

/// What a find reserves, in MiB: its walk's buffers (the listings the ordered
/// walk holds while it yields entries in path order) and its threads (a
/// blocking-pool thread and a helper per core, each with its allocator's
/// pages). One find of a 43,000-file tree peaks about 2 MiB over a call's
/// baseline, several at once about 8 MiB each, and the listings grow with the
/// tree; the reservation is nominal and bounds how many walks run at once
/// (four, each of which already uses every core): 100 finds at once in a batch
/// used to hold 100 walks (171-206 MiB under that tree; now 45-50 MiB in the
/// same time).
pub(super) const FIND_COST: u32 = BUDGET_MIB / 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grep_reserves_its_worst_case_and_never_more_than_the_budget() {
        assert_eq!(grep_cost(2), 2 * 8 + 12 + 2 * 5 + 16);
        assert_eq!(grep_cost(10_000), BUDGET_MIB);
    }
}
