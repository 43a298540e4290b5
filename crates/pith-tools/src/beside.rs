//! Two pieces of work at once: one on a scoped thread, one on this thread.
//!
//! Large files' hashes, their line index and the writing of their bytes run
//! side by side. A thread is a resource like any other: a container's `pids`
//! limit or `RLIMIT_NPROC` can refuse one, and `std::thread::scope`'s `spawn`
//! panics then. Here a refused thread only costs the overlap: the work runs
//! on this thread, after the other piece, with the same results.

use std::sync::{Mutex, PoisonError};

/// Runs `other` on a scoped thread while `here` runs on this one, and returns
/// both results. Where no thread can be started, `other` runs here after
/// `here` (work that waits for something `here` does still finds it done). A
/// panic in `other` resumes on this thread.
pub(crate) fn beside<A: Send, B>(
    other: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> B,
) -> (A, B) {
    // The thread takes `other` from the slot; a refused spawn leaves it there.
    let slot = Mutex::new(Some(other));
    let take = || slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    std::thread::scope(|scope| {
        let spawned = if refused() {
            None
        } else {
            std::thread::Builder::new()
                .spawn_scoped(scope, || take().map(|other| other()))
                .ok()
        };
        let here = here();
        let other = match spawned.map(std::thread::ScopedJoinHandle::join) {
            Some(Ok(Some(done))) => done,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            // Refused, or (never) started without taking the work.
            Some(Ok(None)) | None => match take() {
                Some(other) => other(),
                None => unreachable!("the work was taken by a thread that returned it"),
            },
        };
        (other, here)
    })
}

#[cfg(not(test))]
fn refused() -> bool {
    false
}

#[cfg(test)]
fn refused() -> bool {
    tests::REFUSE.with(std::cell::Cell::get)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    use super::*;

    thread_local! {
        /// Makes this thread's [`beside`] calls find no thread, as under a
        /// container's `pids` limit.
        pub(crate) static REFUSE: Cell<bool> = const { Cell::new(false) };
    }

    #[test]
    fn both_run_on_two_threads_or_in_order_on_one_when_no_thread_is_given() {
        let here_thread = std::thread::current().id();
        for refuse in [false, true] {
            REFUSE.with(|cell| cell.set(refuse));
            let order = Mutex::new(Vec::new());
            let (a, b) = beside(
                || {
                    order.lock().unwrap().push("other");
                    (std::thread::current().id() == here_thread, 6 * 7)
                },
                || {
                    order.lock().unwrap().push("here");
                    "b"
                },
            );
            REFUSE.with(|cell| cell.set(false));
            assert_eq!(a.1, 42);
            assert_eq!(b, "b");
            // On one thread the other piece runs last (it may wait for `here`).
            assert_eq!(a.0, refuse, "refused: {refuse}");
            if refuse {
                assert_eq!(*order.lock().unwrap(), ["here", "other"]);
            }
        }
    }

    #[test]
    fn a_panic_of_the_other_piece_resumes_here() {
        let caught = std::panic::catch_unwind(|| beside(|| panic!("boom"), || 1));
        assert!(caught.is_err());
    }
}
