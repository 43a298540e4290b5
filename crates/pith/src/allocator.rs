//! The binary's global allocator: mimalloc for small blocks, the system's
//! malloc for large ones.
//!
//! Why not one of them for everything:
//!
//! - `pith batch` starts its calls on the thread that reads them and finishes
//!   them on the runtime's workers, so much of what a call allocates (its
//!   arguments, its future, its result line) is freed on another thread. glibc
//!   frees such a block into the arena it came from, under that arena's lock,
//!   and the reading thread allocates from the same arena all the while: the
//!   contention cost more CPU than the second core gave back (1,000 small
//!   reads: 0.25 s on one thread, 0.22-0.30 s on two with glibc, 0.14-0.16 s
//!   on two with mimalloc, whose cross-thread frees take no lock).
//! - For large blocks glibc is the better citizen: a block past its mmap
//!   threshold is its own mapping, grown by `mremap` without a copy and
//!   unmapped at once when freed. mimalloc grows a large block by allocating
//!   a new one and copying, so a 50 MiB argument read from stdin peaked at
//!   2.5x its size instead of 1.2x, and keeps freed memory for a while.
//!
//! So a block's size decides: below [`LARGE`] mimalloc, from it on the
//! system's malloc. `dealloc` and `realloc` get the block's layout, with the
//! size it was allocated (or last reallocated) with, so the same rule always
//! names the allocator that owns a block; a `realloc` across the line moves
//! the block from one to the other.

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// Blocks of this size and more come from the system's malloc (above glibc's
/// default mmap threshold of 128 KiB, so they are mappings of their own).
pub(crate) const LARGE: usize = 256 * 1024;

/// The allocator the `pith` binary installs; a host binary built on
/// [`run_with`](crate::run_with) can install it too:
/// `#[global_allocator] static ALLOCATOR: pith::Allocator = pith::Allocator;`.
#[derive(Debug, Default, Clone, Copy)]
pub struct Allocator;

fn is_large(size: usize) -> bool {
    size >= LARGE
}

// SAFETY: every method forwards to the allocator that owns the block, and
// ownership is a function of the size in the layout the caller must pass
// unchanged (GlobalAlloc's contract): blocks below `LARGE` are mimalloc's,
// the others the system's. A `realloc` across `LARGE` allocates from the new
// size's allocator, copies the smaller of the two sizes and frees the old
// block with its own.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees (non-zero size).
        unsafe {
            if is_large(layout.size()) {
                System.alloc(layout)
            } else {
                MiMalloc.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if is_large(layout.size()) {
                System.alloc_zeroed(layout)
            } else {
                MiMalloc.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator with `layout`, so by
        // the allocator its size names.
        unsafe {
            if is_large(layout.size()) {
                System.dealloc(ptr, layout);
            } else {
                MiMalloc.dealloc(ptr, layout);
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (was_large, now_large) = (is_large(layout.size()), is_large(new_size));
        // SAFETY: `ptr` is owned by the allocator `layout.size()` names; the
        // caller guarantees `new_size` is non-zero and, rounded up to the
        // alignment, does not overflow `isize`, so the new layout is valid.
        unsafe {
            match (was_large, now_large) {
                (true, true) => System.realloc(ptr, layout, new_size),
                (false, false) => MiMalloc.realloc(ptr, layout, new_size),
                _ => {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let moved = self.alloc(new_layout);
                    if !moved.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    moved
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocates `size` bytes filled with a pattern through [`Allocator`].
    fn filled(size: usize) -> (*mut u8, Layout) {
        let layout = Layout::from_size_align(size, 16).unwrap();
        // SAFETY: non-zero size.
        let ptr = unsafe { Allocator.alloc(layout) };
        assert!(!ptr.is_null());
        for i in 0..size {
            // SAFETY: within the block.
            unsafe { ptr.add(i).write(i as u8) };
        }
        (ptr, layout)
    }

    fn assert_pattern(ptr: *const u8, size: usize) {
        for i in 0..size {
            // SAFETY: within the block.
            assert_eq!(unsafe { ptr.add(i).read() }, i as u8, "byte {i}");
        }
    }

    #[test]
    fn realloc_keeps_the_bytes_across_the_line_both_ways_and_within_each_side() {
        for (from, to) in [
            (100, LARGE - 1),
            (LARGE - 1, LARGE),
            (1000, 3 * LARGE),
            (3 * LARGE, 100),
            (LARGE, LARGE - 1),
            (2 * LARGE, 5 * LARGE),
            (5 * LARGE, 2 * LARGE),
        ] {
            let (ptr, layout) = filled(from);
            // SAFETY: `ptr` came from `Allocator` with `layout`; `to` > 0.
            let grown = unsafe { Allocator.realloc(ptr, layout, to) };
            assert!(!grown.is_null(), "{from} -> {to}");
            assert_eq!(grown as usize % 16, 0, "alignment kept: {from} -> {to}");
            assert_pattern(grown, from.min(to));
            let new_layout = Layout::from_size_align(to, 16).unwrap();
            // SAFETY: the block now has `new_layout`.
            unsafe { Allocator.dealloc(grown, new_layout) };
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_on_both_sides() {
        for size in [64, LARGE - 8, LARGE, 4 * LARGE] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            // SAFETY: non-zero size; freed with the same layout.
            unsafe {
                let ptr = Allocator.alloc_zeroed(layout);
                assert!(!ptr.is_null());
                assert!(
                    std::slice::from_raw_parts(ptr, size)
                        .iter()
                        .all(|&b| b == 0)
                );
                Allocator.dealloc(ptr, layout);
            }
        }
    }
}
