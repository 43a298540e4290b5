//! The file mutation queue: writes to one real file are serialised in arrival order.
//!
//! The key of a path is the realpath of its nearest existing ancestor plus the
//! components below it, so symlink aliases share a queue, and so do new files
//! created through a symlinked directory (Pi #9389, where the key fell back to
//! the unresolved path). Each key has a fair (FIFO) async mutex; registrations
//! (key computation + enqueue) are themselves serialised, so calls queue in the
//! order they arrived although computing a key awaits the file system. A guard
//! is released when dropped, on success, error or cancellation alike; map
//! entries are removed when no call holds or waits for them.

use std::collections::HashMap;
use std::fmt;
use std::future::{Future, poll_fn};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex as SyncMutex, PoisonError};
use std::task::Poll;

use pith_env::{FileSystem, FsError, FsErrorKind};
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio_util::sync::CancellationToken;

/// One key's lock and how many calls hold or wait for it.
struct Slot {
    lock: Arc<Mutex<()>>,
    users: usize,
}

type Slots = Arc<SyncMutex<HashMap<PathBuf, Slot>>>;

/// Serialises mutations of the same real file, in arrival order; different
/// files proceed in parallel.
#[derive(Default)]
pub struct MutationQueue {
    registration: Mutex<()>,
    slots: Slots,
}

impl fmt::Debug for MutationQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutationQueue")
            .field("active_keys", &self.active_keys())
            .finish()
    }
}

/// A call's claim on a key; the slot is dropped with the last claim.
struct Claim {
    key: PathBuf,
    slots: Slots,
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = slots.get_mut(&self.key) {
            slot.users -= 1;
            if slot.users == 0 {
                slots.remove(&self.key);
            }
        }
    }
}

/// Holds a file's turn in the queue; the next waiter runs when it drops.
pub struct MutationGuard {
    // Field order matters: the lock is released before the claim is dropped.
    _lock: OwnedMutexGuard<()>,
    claim: Claim,
}

impl MutationGuard {
    /// The queue key: the real path of the file this guard serialises.
    pub fn key(&self) -> &Path {
        &self.claim.key
    }
}

impl fmt::Debug for MutationGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutationGuard")
            .field("key", &self.claim.key)
            .finish()
    }
}

impl MutationQueue {
    /// An empty queue.
    pub fn new() -> MutationQueue {
        MutationQueue::default()
    }

    /// Waits for `path`'s turn (`path` is absolute).
    ///
    /// # Errors
    ///
    /// The realpath of an existing ancestor fails for a reason other than a
    /// missing component (permission denied, a symlink loop).
    pub async fn lock(&self, fs: &dyn FileSystem, path: &Path) -> Result<MutationGuard, FsError> {
        let registration = self.registration.lock().await;
        let key = queue_key(fs, path).await?;
        let (lock, claim) = self.claim(key);
        let mut acquire = Box::pin(lock.lock_owned());
        // Poll once while registration is held: this enqueues the waiter in
        // the mutex's FIFO (or takes the lock), fixing the arrival order.
        let ready = poll_fn(|cx| match acquire.as_mut().poll(cx) {
            Poll::Ready(guard) => Poll::Ready(Some(guard)),
            Poll::Pending => Poll::Ready(None),
        })
        .await;
        drop(registration);
        let lock = match ready {
            Some(guard) => guard,
            None => acquire.await,
        };
        Ok(MutationGuard { _lock: lock, claim })
    }

    fn claim(&self, key: PathBuf) -> (Arc<Mutex<()>>, Claim) {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = slots.entry(key.clone()).or_insert_with(|| Slot {
            lock: Arc::new(Mutex::new(())),
            users: 0,
        });
        slot.users += 1;
        let lock = slot.lock.clone();
        let claim = Claim {
            key,
            slots: self.slots.clone(),
        };
        (lock, claim)
    }

    /// How many files currently have a call running or waiting.
    pub fn active_keys(&self) -> usize {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// How many calls currently hold or wait for a turn, over all files (lets a
    /// caller, such as a test, wait until a call has queued).
    pub fn claims(&self) -> usize {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .map(|slot| slot.users)
            .sum()
    }
}

/// Why [`exclusive`] could not run its work.
#[derive(Debug)]
pub(crate) enum ExclusiveError {
    /// The queue key could not be computed.
    Lock(FsError),
    /// The work panicked.
    Panicked,
}

/// Runs `work` holding `path`'s turn in `queue`, on a task of its own.
///
/// The task owns the guard, so the turn is released only when the work's
/// in-flight I/O has settled, even if the caller's future is dropped. A
/// dropped caller cancels the token handed to `work` (as cancelling `cancel`
/// does); `work` checks it between steps and never stops half-way through a write.
pub(crate) async fn exclusive<T, Fut>(
    queue: &Arc<MutationQueue>,
    fs: &Arc<dyn FileSystem>,
    path: &Path,
    cancel: &CancellationToken,
    work: impl FnOnce(CancellationToken) -> Fut + Send + 'static,
) -> Result<T, ExclusiveError>
where
    T: Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    let token = cancel.child_token();
    let on_drop = token.clone().drop_guard();
    let (queue, fs, path) = (queue.clone(), fs.clone(), path.to_path_buf());
    let task = tokio::spawn(async move {
        let guard = queue
            .lock(&*fs, &path)
            .await
            .map_err(ExclusiveError::Lock)?;
        let output = work(token).await;
        drop(guard);
        Ok(output)
    });
    let result = task.await.unwrap_or(Err(ExclusiveError::Panicked));
    on_drop.disarm();
    result
}

/// The realpath of the nearest existing ancestor of `path`, plus the rest.
pub(crate) async fn queue_key(fs: &dyn FileSystem, path: &Path) -> Result<PathBuf, FsError> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        match fs.canonicalize(&existing).await {
            Ok(mut key) => {
                key.extend(rest.iter().rev());
                return Ok(key);
            }
            Err(error)
                if matches!(
                    error.kind,
                    FsErrorKind::NotFound | FsErrorKind::NotADirectory
                ) =>
            {
                match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        rest.push(name.to_os_string());
                        existing = parent.to_path_buf();
                    }
                    _ => return Ok(path.to_path_buf()),
                }
            }
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
