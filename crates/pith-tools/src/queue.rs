//! The file mutation queue: writes to one real file are serialised in arrival order.
//!
//! The key of a path is the realpath of its nearest existing ancestor plus the
//! components below it, so symlink aliases share a queue, and so do new files
//! created through a symlinked directory (Pi #9389, where the key fell back to
//! the unresolved path). The tools compute it through the same view they then
//! write or read through (confined beneath the roots by handles when the
//! workspace is), so the key names the file that view resolves to. Each key has a fair (FIFO) async mutex. A guard
//! is released when dropped, on success, error or cancellation alike; map
//! entries are removed when no call holds or waits for them.
//!
//! # Arrival order: the turnstile
//!
//! A call takes a [`Ticket`] synchronously when it arrives (in
//! [`Session::call`](crate::session::Session::call) before its first await, or earlier,
//! where a front end reads the request: [`Session::admit`](crate::session::Session::admit)).
//! Keys are then computed concurrently, but calls enter their key's FIFO
//! strictly in ticket order: each waits until every earlier ticket has entered
//! its queue or been given up (a call that fails before the queue, or a tool
//! that never uses it, drops its ticket). Whatever the awaits before the queue
//! (path resolution, policy checks, the task a write runs on), a write and the
//! edit after it cannot swap.
//!
//! The wait is per file system: a ticket taken for one (a [`Session`]'s calls
//! take theirs for the tool set's file system) waits only for earlier tickets
//! of the same file system or of none, since paths on another file system can
//! never share a key. So a slow realpath on a remote file system does not
//! stall the calls on the local one. Within one file system a later call must
//! wait for an earlier call still computing its key: only that key says
//! whether the two calls touch the same file. The map of keys is locked only
//! to claim or release a slot, never across an await.
//!
//! [`Session`]: crate::session::Session

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::future::{Future, poll_fn};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as SyncMutex, PoisonError};
use std::task::{Poll, Waker};

use pith_env::{FileSystem, FsError, FsErrorKind};

use crate::paths::nearest_existing;
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    /// The queue (by address) whose turns this task holds while a call's
    /// work runs, its in-queue hooks included (see [`exclusive_all`]).
    static WITHIN: usize;

    /// Set around a call by [`yield_after_turn`].
    static YIELD_AFTER_TURN: ();
}

/// Runs `call` (a [`Session::call`](crate::session::Session::call) future) so
/// that it yields once as soon as its place in arrival order no longer
/// matters: right after it has entered the queues of its files, or at its
/// start for a tool that uses no queue.
///
/// For a front end that makes each call's first poll where the calls arrive,
/// in their order, and lets other threads finish them (`pith batch`): that
/// first poll then ends at the yield, and whatever the call does next (the
/// read itself, the diff, the result's text) runs wherever the call is polled
/// again. Without it, a call that never waits (a small local read) would run
/// whole in its first poll.
pub fn yield_after_turn<F: Future>(call: F) -> impl Future<Output = F::Output> {
    YIELD_AFTER_TURN.scope((), call)
}

/// The point after which a call no longer depends on its order (see
/// [`yield_after_turn`]): yields once when the task asked for it.
pub(crate) async fn turn_taken() {
    if YIELD_AFTER_TURN.try_with(|()| ()).is_ok() {
        // Not `tokio::task::yield_now`: it defers its wake to the worker's
        // next park, and a task that ran `block_in_place` (a local write, the
        // journal) is no longer on a worker that parks: the wake was lost and
        // the batch hung. Waking at once always reschedules the task.
        let mut yielded = false;
        poll_fn(|cx| {
            if std::mem::replace(&mut yielded, true) {
                Poll::Ready(())
            } else {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
        .await;
    }
}

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
    turnstile: Arc<Turnstile>,
    slots: Slots,
}

/// Lets calls enter their key's queue in the order their tickets were issued.
#[derive(Default)]
struct Turnstile {
    state: SyncMutex<TurnState>,
}

#[derive(Default)]
struct TurnState {
    /// The next ticket number to issue.
    issued: u64,
    /// Every ticket below this has entered its queue or been given up.
    next: u64,
    /// Tickets at or after `next` that are already done.
    done: BTreeSet<u64>,
    /// The file system of each issued ticket that has one and is not done.
    domains: HashMap<u64, usize>,
    /// Calls waiting for their turn, by file system and ticket number. Only
    /// the first waiter of each file system can be next to enter (every later
    /// one of the same file system waits for it), so a change wakes at most
    /// one task per file system instead of every waiter: a batch of a
    /// thousand calls costs a thousand wake-ups, not half a million.
    waiters: HashMap<Option<usize>, BTreeMap<u64, Waker>>,
}

impl TurnState {
    /// Whether `number` (of file system `domain`) may enter its queue: every
    /// earlier ticket is done, or (with a domain) the earlier tickets not
    /// done all belong to other file systems.
    fn may_enter(&self, number: u64, domain: Option<usize>) -> bool {
        if self.next >= number {
            return true;
        }
        let Some(domain) = domain else {
            return false;
        };
        (self.next..number).all(|earlier| {
            self.done.contains(&earlier)
                || self
                    .domains
                    .get(&earlier)
                    .is_some_and(|other| *other != domain)
        })
    }
}

impl Turnstile {
    fn state(&self) -> std::sync::MutexGuard<'_, TurnState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn issue(self: &Arc<Self>, domain: Option<usize>) -> Ticket {
        let mut state = self.state();
        let number = state.issued;
        state.issued += 1;
        if let Some(domain) = domain {
            state.domains.insert(number, domain);
        }
        Ticket {
            inner: Arc::new(TicketInner {
                number,
                domain,
                turnstile: Arc::clone(self),
                done: AtomicBool::new(false),
                within: false,
            }),
        }
    }

    /// A ticket outside arrival order: done from the start, so it neither
    /// waits for a turn nor holds one up.
    fn within(self: &Arc<Self>) -> Ticket {
        Ticket {
            inner: Arc::new(TicketInner {
                number: u64::MAX,
                domain: None,
                turnstile: Arc::clone(self),
                done: AtomicBool::new(true),
                within: true,
            }),
        }
    }

    fn finish(&self, number: u64) {
        let mut state = self.state();
        state.domains.remove(&number);
        if number != state.next {
            // A later ticket of another file system may be waiting for this one.
            state.done.insert(number);
        } else {
            state.next += 1;
            loop {
                let next = state.next;
                if !state.done.remove(&next) {
                    break;
                }
                state.next += 1;
            }
        }
        let ready = state.take_ready();
        drop(state);
        for waker in ready {
            waker.wake();
        }
    }

    /// Waits until every ticket before `number` that may share its file
    /// system is done.
    async fn wait_turn(&self, number: u64, domain: Option<usize>) {
        let mut waiting = Waiting {
            turnstile: self,
            number,
            domain,
            registered: false,
        };
        poll_fn(|cx| waiting.poll(cx)).await;
    }
}

impl TurnState {
    /// Removes and returns the wakers of the waiters that may enter now: at
    /// most the first one of each file system (see `waiters`).
    fn take_ready(&mut self) -> Vec<Waker> {
        let mut ready = Vec::new();
        let firsts: Vec<(Option<usize>, u64)> = self
            .waiters
            .iter()
            .filter_map(|(domain, waiting)| {
                waiting
                    .first_key_value()
                    .map(|(number, _)| (*domain, *number))
            })
            .collect();
        for (domain, number) in firsts {
            if self.may_enter(number, domain)
                && let Some(waiting) = self.waiters.get_mut(&domain)
                && let Some(waker) = waiting.remove(&number)
            {
                if waiting.is_empty() {
                    self.waiters.remove(&domain);
                }
                ready.push(waker);
            }
        }
        ready
    }
}

/// A call waiting in [`Turnstile::wait_turn`]; its waker is removed when it
/// is dropped before its turn (a cancelled call).
struct Waiting<'a> {
    turnstile: &'a Turnstile,
    number: u64,
    domain: Option<usize>,
    registered: bool,
}

impl Waiting<'_> {
    fn poll(&mut self, cx: &mut std::task::Context<'_>) -> Poll<()> {
        let mut state = self.turnstile.state();
        if state.may_enter(self.number, self.domain) {
            self.unregister(&mut state);
            return Poll::Ready(());
        }
        state
            .waiters
            .entry(self.domain)
            .or_default()
            .insert(self.number, cx.waker().clone());
        self.registered = true;
        Poll::Pending
    }

    fn unregister(&mut self, state: &mut TurnState) {
        if !std::mem::take(&mut self.registered) {
            return;
        }
        if let Some(waiting) = state.waiters.get_mut(&self.domain) {
            waiting.remove(&self.number);
            if waiting.is_empty() {
                state.waiters.remove(&self.domain);
            }
        }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.registered {
            let turnstile = self.turnstile;
            let mut state = turnstile.state();
            self.unregister(&mut state);
        }
    }
}

/// A call's place in arrival order (see the module docs). Clones share the
/// place; it is given up when the last clone drops without entering a queue.
#[derive(Clone)]
pub struct Ticket {
    inner: Arc<TicketInner>,
}

struct TicketInner {
    number: u64,
    /// The file system the ticket was taken for (see the module docs).
    domain: Option<usize>,
    turnstile: Arc<Turnstile>,
    done: AtomicBool,
    /// Taken by a call made from inside another call's turns (a hook that
    /// calls a tool): it belongs to that earlier call's place, so it waits
    /// for no turn (see [`MutationQueue::ticket_on`]).
    within: bool,
}

impl Ticket {
    fn finish(&self) {
        if !self.inner.done.swap(true, Ordering::AcqRel) {
            self.inner.turnstile.finish(self.inner.number);
        }
    }
}

impl Drop for TicketInner {
    fn drop(&mut self) {
        if !self.done.swap(true, Ordering::AcqRel) {
            self.turnstile.finish(self.number);
        }
    }
}

impl fmt::Debug for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Ticket").field(&self.inner.number).finish()
    }
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

    /// Takes the next place in arrival order, to hand to [`MutationQueue::lock_in_turn`].
    /// It waits for every earlier ticket, and every later one waits for it.
    pub fn ticket(&self) -> Ticket {
        if self.is_within() {
            return self.turnstile.within();
        }
        self.turnstile.issue(None)
    }

    /// Takes the next place in arrival order for a call on `fs`: it waits
    /// only for earlier tickets of the same file system (or of none).
    pub fn ticket_on(&self, fs: &Arc<dyn FileSystem>) -> Ticket {
        if self.is_within() {
            return self.turnstile.within();
        }
        self.turnstile.issue(Some(domain_of(fs)))
    }

    /// Whether this task runs inside a call's turns of this queue: a call it
    /// makes (from a hook) takes its place in that earlier call's, not after
    /// every call that arrived since. Were it put after them, a later call
    /// that waits for the earlier one (an `undo` waits for every earlier
    /// call) would wait for it in turn, and neither would ever run.
    fn is_within(&self) -> bool {
        WITHIN
            .try_with(|queue| *queue == self.id())
            .unwrap_or(false)
    }

    /// This queue's identity (its address) for the task-locals that name it.
    pub(crate) fn id(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Waits for `path`'s turn (`path` is absolute), entering its queue after
    /// every call that took a ticket before this one.
    ///
    /// # Errors
    ///
    /// The realpath of an existing ancestor fails for a reason other than a
    /// missing component (permission denied, a symlink loop).
    pub async fn lock(&self, fs: &dyn FileSystem, path: &Path) -> Result<MutationGuard, FsError> {
        self.lock_in_turn(fs, path, self.ticket()).await
    }

    /// Waits for `path`'s turn, entering its queue in `ticket`'s place.
    ///
    /// # Errors
    ///
    /// As [`MutationQueue::lock`].
    pub async fn lock_in_turn(
        &self,
        fs: &dyn FileSystem,
        path: &Path,
        ticket: Ticket,
    ) -> Result<MutationGuard, FsError> {
        // Keys are computed concurrently; only entering the queue waits for the turn.
        let mut guards = self
            .lock_all_in_turn(fs, &[path.to_path_buf()], ticket)
            .await?;
        guards
            .pop()
            .ok_or_else(|| FsError::new(FsErrorKind::Other, path))
    }

    /// Waits for the turns of every path in `paths` (absolute) at once, entering
    /// all their queues in `ticket`'s place, in one fixed order (sorted keys).
    ///
    /// Calls enter every queue they need while holding their place in arrival
    /// order, so a call is behind another in one queue only if it is behind it in
    /// all of them: two multi-file calls on overlapping files cannot deadlock.
    ///
    /// # Errors
    ///
    /// As [`MutationQueue::lock`], for any of the paths.
    pub async fn lock_all_in_turn(
        &self,
        fs: &dyn FileSystem,
        paths: &[PathBuf],
        ticket: Ticket,
    ) -> Result<Vec<MutationGuard>, FsError> {
        let keys = keys_of(fs, paths).await?;
        self.wait_turn(&ticket).await;
        Ok(self.enter(keys, ticket).await)
    }

    async fn wait_turn(&self, ticket: &Ticket) {
        if !ticket.inner.within {
            self.turnstile
                .wait_turn(ticket.inner.number, ticket.inner.domain)
                .await;
        }
    }

    /// Enters the queue of every key (sorted, distinct) in `ticket`'s place,
    /// whose turn it is: enqueued in every FIFO before the turn passes on,
    /// then waits until each is this call's.
    async fn enter(&self, keys: Vec<PathBuf>, ticket: Ticket) -> Vec<MutationGuard> {
        let mut waiting = Vec::with_capacity(keys.len());
        for key in keys {
            let (lock, claim) = self.claim(key);
            let mut acquire = Box::pin(lock.lock_owned());
            let ready = poll_fn(|cx| match acquire.as_mut().poll(cx) {
                Poll::Ready(guard) => Poll::Ready(Some(guard)),
                Poll::Pending => Poll::Ready(None),
            })
            .await;
            waiting.push((ready, acquire, claim));
        }
        ticket.finish();
        let mut guards = Vec::with_capacity(waiting.len());
        for (ready, acquire, claim) in waiting {
            let lock = match ready {
                Some(guard) => guard,
                None => acquire.await,
            };
            guards.push(MutationGuard { _lock: lock, claim });
        }
        turn_taken().await;
        guards
    }

    /// Waits for `ticket`'s turn, then until every call that entered a
    /// queue before it has left it; then `choose` names the files (from state
    /// those calls may have changed, such as the undo journal) and their
    /// queues are entered in the ticket's place. Later calls (of the same file
    /// system) wait for their turn all the while: `choose` sees exactly what
    /// the calls that arrived before this one left.
    ///
    /// # Errors
    ///
    /// `Ok(Err(_))`: what `choose` failed with (no queue was entered);
    /// `Err(_)`: as [`MutationQueue::lock`], for any of the paths.
    pub(crate) async fn lock_all_after_earlier<S, E, Fut>(
        &self,
        fs: &dyn FileSystem,
        ticket: Ticket,
        choose: impl FnOnce() -> Fut,
    ) -> Result<Result<(Vec<MutationGuard>, S), E>, FsError>
    where
        Fut: Future<Output = Result<(Vec<PathBuf>, S), E>>,
    {
        self.wait_turn(&ticket).await;
        // Every earlier call has entered its queues (its turn passed on only
        // then); a FIFO lock taken and let go after it has left. A call made
        // from inside another's turns would wait for that call, which waits
        // for it: it reads what is there now.
        let earlier: Vec<Arc<Mutex<()>>> = if ticket.inner.within {
            Vec::new()
        } else {
            self.slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .values()
                .map(|slot| slot.lock.clone())
                .collect()
        };
        for lock in earlier {
            drop(lock.lock().await);
        }
        let (paths, chosen) = match choose().await {
            Ok(chosen) => chosen,
            Err(error) => return Ok(Err(error)),
        };
        let keys = keys_of(fs, &paths).await?;
        let guards = self.enter(keys, ticket).await;
        Ok(Ok((guards, chosen)))
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

/// The identity of a file system for the turnstile: the address of the
/// shared object (clones of one [`pith_env::Env`] share it).
fn domain_of(fs: &Arc<dyn FileSystem>) -> usize {
    Arc::as_ptr(fs).cast::<()>() as usize
}

/// Why [`exclusive`] could not run its work.
#[derive(Debug)]
pub(crate) enum ExclusiveError {
    /// The queue key could not be computed.
    Lock(FsError),
    /// The work panicked.
    Panicked(tokio::task::JoinError),
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
    ticket: Ticket,
    cancel: &CancellationToken,
    work: impl FnOnce(CancellationToken) -> Fut + Send + 'static,
) -> Result<T, ExclusiveError>
where
    T: Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    exclusive_all(queue, fs, vec![path.to_path_buf()], ticket, cancel, work).await
}

/// [`exclusive`] for several files: runs `work` holding the turns of all of
/// `paths` (taken by [`MutationQueue::lock_all_in_turn`]), on a task of its own.
pub(crate) async fn exclusive_all<T, Fut>(
    queue: &Arc<MutationQueue>,
    fs: &Arc<dyn FileSystem>,
    paths: Vec<PathBuf>,
    ticket: Ticket,
    cancel: &CancellationToken,
    work: impl FnOnce(CancellationToken) -> Fut + Send + 'static,
) -> Result<T, ExclusiveError>
where
    T: Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    // The ticket was taken before the task is spawned: tasks start in any order.
    let (queue, fs) = (queue.clone(), fs.clone());
    on_own_task(cancel, move |token| async move {
        let guards = queue
            .lock_all_in_turn(&*fs, &paths, ticket)
            .await
            .map_err(ExclusiveError::Lock)?;
        let output = WITHIN.scope(queue.id(), work(token)).await;
        drop(guards);
        Ok(output)
    })
    .await
}

/// Runs `body` on a task of its own with a child token of `cancel`, which is
/// cancelled when the caller's future is dropped: the task (and the turns it
/// holds) ends only when its work has settled.
async fn on_own_task<T, Fut>(
    cancel: &CancellationToken,
    body: impl FnOnce(CancellationToken) -> Fut,
) -> Result<T, ExclusiveError>
where
    T: Send + 'static,
    Fut: Future<Output = Result<T, ExclusiveError>> + Send + 'static,
{
    let token = cancel.child_token();
    let on_drop = token.clone().drop_guard();
    let result = tokio::spawn(body(token))
        .await
        .unwrap_or_else(|panic| Err(ExclusiveError::Panicked(panic)));
    on_drop.disarm();
    result
}

/// [`exclusive_all`] for a call whose files depend on what the calls before
/// it did (undo reads the journal they write): `choose` runs once every
/// earlier call has left its queues (see
/// [`MutationQueue::lock_all_after_earlier`]), then `work` runs with what it
/// chose, holding the turns of the files it named, on a task of its own.
pub(crate) async fn exclusive_after_earlier<S, T, E, Choose, Work>(
    queue: &Arc<MutationQueue>,
    fs: &Arc<dyn FileSystem>,
    ticket: Ticket,
    cancel: &CancellationToken,
    choose: impl FnOnce() -> Choose + Send + 'static,
    work: impl FnOnce(S, CancellationToken) -> Work + Send + 'static,
) -> Result<Result<T, E>, ExclusiveError>
where
    S: Send + 'static,
    T: Send + 'static,
    E: Send + 'static,
    Choose: Future<Output = Result<(Vec<PathBuf>, S), E>> + Send,
    Work: Future<Output = T> + Send,
{
    let (queue, fs) = (queue.clone(), fs.clone());
    on_own_task(cancel, move |token| async move {
        let (guards, chosen) = match queue
            .lock_all_after_earlier(&*fs, ticket, choose)
            .await
            .map_err(ExclusiveError::Lock)?
        {
            Ok(locked) => locked,
            Err(error) => return Ok(Err(error)),
        };
        let output = WITHIN.scope(queue.id(), work(chosen, token)).await;
        drop(guards);
        Ok(Ok(output))
    })
    .await
}

/// The queue keys of `paths`, sorted and distinct (the one order every
/// multi-file call enters its queues in).
async fn keys_of(fs: &dyn FileSystem, paths: &[PathBuf]) -> Result<Vec<PathBuf>, FsError> {
    let mut keys = Vec::with_capacity(paths.len());
    for path in paths {
        keys.push(queue_key(fs, path).await?);
    }
    keys.sort();
    keys.dedup();
    Ok(keys)
}

/// The realpath of the nearest existing ancestor of `path`, plus the rest.
pub(crate) async fn queue_key(fs: &dyn FileSystem, path: &Path) -> Result<PathBuf, FsError> {
    let missing = |kind| matches!(kind, FsErrorKind::NotFound | FsErrorKind::NotADirectory);
    let found = nearest_existing(path, missing, |ancestor| async move {
        fs.canonicalize(&ancestor).await
    })
    .await;
    Ok(match found {
        Ok(Some((real, rest))) if rest.as_os_str().is_empty() => real,
        Ok(Some((real, rest))) => real.join(rest),
        Ok(None) => path.to_path_buf(),
        // A confined view refuses a path outside its roots: so will the
        // call, with the policy's message naming where it resolves, and
        // its key serialises nothing real.
        Err(error) if error.kind == FsErrorKind::OutsideRoots => path.to_path_buf(),
        Err(error) => return Err(error),
    })
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
