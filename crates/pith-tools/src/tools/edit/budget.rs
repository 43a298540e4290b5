//! The memory budget that concurrent edits of large files share.
//!
//! One edit is bounded by its file (an edit of a file up to 64 MiB holds the
//! old and the new text, about three times the file at its peak on the fuzzy rungs;
//! a larger file is streamed within about 128 MiB), but a batch or an MCP
//! client may send many at once: 16 edits of 30 MiB files in one batch peaked
//! at 889 MiB (530 MiB for exact ones). Each edit of a file of 1 MiB or more
//! now reserves its worst case from one process-wide budget of
//! [`BUDGET_MIB`] (a [`MemoryBudget`]) before it reads the file, and waits, in
//! arrival order, while the budget is spent. An edit reserves once and
//! inside its file's turn, and holds nothing else a waiting edit needs, so
//! reservations cannot wait on each other in a circle. Smaller files reserve
//! nothing: they cost little, and most edits are of them.

use pith_env::MemoryBudget;

/// The budget, in MiB, shared by all edits of the process.
pub(super) const BUDGET_MIB: u32 = 512;

/// The budget itself.
pub(super) static BUDGET: MemoryBudget = MemoryBudget::new(BUDGET_MIB);

const MIB: u64 = 1024 * 1024;

/// What an edit of a `len`-byte file reserves, in MiB: nothing under 1 MiB;
/// four times the file up to the in-memory limit (the old text, the new one,
/// the engine's normalised copy and the read: one fuzzy edit of a 30 MiB file
/// peaked at 104 MiB); the streamed path's bound above it.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_reserves_four_times_its_file_and_never_more_than_the_budget() {
        assert_eq!(cost(1000), 0);
        assert_eq!(cost(MIB), 4);
        assert_eq!(cost(30 * MIB), 120);
        assert_eq!(cost(64 * MIB), 256);
        assert_eq!(cost(64 * MIB + 1), 128);
        assert_eq!(cost(u64::MAX), 128);
    }
}
