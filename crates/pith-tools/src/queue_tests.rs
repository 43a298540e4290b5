use std::sync::Mutex as StdMutex;
use std::time::Duration;

use pith_env::LocalEnv;

use super::*;

fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

#[tokio::test]
async fn symlink_aliases_share_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file.txt");
    std::fs::write(&file, "x").unwrap();
    std::os::unix::fs::symlink(&file, dir.path().join("alias.txt")).unwrap();
    let fs = LocalEnv::new();
    let direct = queue_key(&fs, &file).await.unwrap();
    let alias = queue_key(&fs, &dir.path().join("alias.txt")).await.unwrap();
    assert_eq!(direct, alias);
    assert_eq!(direct, real(&file));
}

#[tokio::test]
async fn new_files_through_a_symlinked_directory_share_a_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("target")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("target"), dir.path().join("alias")).unwrap();
    let fs = LocalEnv::new();
    let through_alias = queue_key(&fs, &dir.path().join("alias/new/deep.txt"))
        .await
        .unwrap();
    let direct = queue_key(&fs, &dir.path().join("target/new/deep.txt"))
        .await
        .unwrap();
    assert_eq!(through_alias, direct);
    assert_eq!(
        direct,
        real(&dir.path().join("target")).join("new/deep.txt")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn serves_one_file_in_arrival_order_and_forgets_idle_keys() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.txt");
    let queue = Arc::new(MutationQueue::new());
    let order = Arc::new(StdMutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for index in 0..20 {
        let (queue, order, file) = (queue.clone(), order.clone(), file.clone());
        tasks.push(tokio::spawn(async move {
            let _guard = queue.lock(&LocalEnv::new(), &file).await.unwrap();
            order.lock().unwrap().push(index);
            tokio::time::sleep(Duration::from_millis(1)).await;
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(*order.lock().unwrap(), (0..20).collect::<Vec<_>>());
    assert_eq!(queue.active_keys(), 0);
}

#[tokio::test]
async fn different_files_do_not_wait_for_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let queue = MutationQueue::new();
    let fs = LocalEnv::new();
    let _a = queue.lock(&fs, &dir.path().join("a")).await.unwrap();
    let b_path = dir.path().join("b");
    let b = tokio::time::timeout(Duration::from_secs(5), queue.lock(&fs, &b_path));
    assert!(b.await.is_ok(), "b must not wait for a");
    assert_eq!(queue.active_keys(), 1, "b's guard was dropped");
}

#[tokio::test]
async fn a_cancelled_waiter_neither_jumps_the_queue_nor_leaks_its_entry() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    let queue = MutationQueue::new();
    let fs = LocalEnv::new();
    let first = queue.lock(&fs, &file).await.unwrap();
    // A waiter that gives up: its future is dropped while queued.
    let gave_up = tokio::time::timeout(Duration::from_millis(20), queue.lock(&fs, &file)).await;
    assert!(gave_up.is_err());
    // The next waiter still waits for the holder.
    let next = tokio::time::timeout(Duration::from_millis(50), queue.lock(&fs, &file)).await;
    assert!(next.is_err(), "the lock is still held");
    drop(first);
    let after = queue.lock(&fs, &file).await.unwrap();
    assert_eq!(after.key(), real(dir.path()).join("f"));
    drop(after);
    assert_eq!(queue.active_keys(), 0);
}

/// Polls `future` once.
fn poll_once<F: Future + Unpin>(future: &mut F) -> Option<F::Output> {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::Pin::new(future).poll(&mut context) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

#[tokio::test]
async fn a_call_on_another_file_system_does_not_wait_for_an_earlier_key() {
    let queue = MutationQueue::new();
    let slow: Arc<dyn FileSystem> = Arc::new(pith_env::MemoryEnv::new());
    let other: Arc<dyn FileSystem> = Arc::new(pith_env::MemoryEnv::new());
    // An earlier call on `slow` that has not reached the queue yet (its key
    // is still being computed).
    let earlier = queue.ticket_on(&slow);
    let file = Path::new("/f.txt");
    let mut entered = Box::pin(queue.lock_in_turn(&*other, file, queue.ticket_on(&other)));
    let entered = poll_once(&mut entered);
    assert!(
        matches!(entered, Some(Ok(_))),
        "the other file system's call waited"
    );
    drop(entered);
    // A later call on the same file system, or with no file system, waits for it.
    let mut same = Box::pin(queue.lock_in_turn(&*slow, file, queue.ticket_on(&slow)));
    assert!(poll_once(&mut same).is_none());
    drop(earlier);
    assert!(same.await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_made_inside_an_earlier_calls_turn_does_not_wait_for_a_later_undo() {
    // A write holds `a`; its hook calls a tool on `b`. Meanwhile an undo
    // that arrived after the write waits for every earlier call to finish.
    // The hook's call belongs to the write's place: were it put after the
    // undo, the undo would wait for the write, the write for its hook's
    // call, and that call for the undo.
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a.txt"),
        dir.path().join("b.txt"),
        dir.path().join("c.txt"),
    );
    let queue = Arc::new(MutationQueue::new());
    let fs: Arc<dyn FileSystem> = Arc::new(LocalEnv::new());
    let write_ticket = queue.ticket_on(&fs);
    let undo_ticket = queue.ticket_on(&fs);
    let (go, gone) = tokio::sync::oneshot::channel::<()>();
    let order = Arc::new(StdMutex::new(Vec::new()));
    let write = {
        let (queue, fs, order) = (queue.clone(), fs.clone(), order.clone());
        tokio::spawn(async move {
            let inner = (queue.clone(), fs.clone(), order.clone());
            exclusive(
                &queue,
                &fs,
                &a,
                write_ticket,
                &CancellationToken::new(),
                |_| async move {
                    let (queue, fs, order) = inner;
                    gone.await.unwrap();
                    // The hook's call, taking its ticket now, from inside the turn.
                    let guard = queue
                        .lock_in_turn(&*fs, &b, queue.ticket_on(&fs))
                        .await
                        .unwrap();
                    order.lock().unwrap().push("hook's call");
                    drop(guard);
                    order.lock().unwrap().push("write");
                },
            )
            .await
            .map_err(|_| "lock failed")
        })
    };
    let undo = {
        let (queue, fs, order) = (queue.clone(), fs.clone(), order.clone());
        tokio::spawn(async move {
            let chosen =
                queue
                    .lock_all_after_earlier(&*fs, undo_ticket, || async move {
                        Ok::<_, ()>((vec![c], ()))
                    })
                    .await;
            order.lock().unwrap().push("undo");
            chosen.map(|_| ()).map_err(|_| ())
        })
    };
    // Let the undo reach its wait for the write, then let the hook call.
    tokio::time::sleep(Duration::from_millis(100)).await;
    go.send(()).unwrap();
    let both = tokio::time::timeout(Duration::from_secs(10), async {
        (write.await.unwrap(), undo.await.unwrap())
    })
    .await
    .expect("the undo, the write and its hook's call waited for each other");
    assert!(both.0.is_ok() && both.1.is_ok());
    assert_eq!(*order.lock().unwrap(), ["hook's call", "write", "undo"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undo_made_inside_a_calls_turn_does_not_wait_for_that_call() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    let queue = Arc::new(MutationQueue::new());
    let fs: Arc<dyn FileSystem> = Arc::new(LocalEnv::new());
    let ticket = queue.ticket_on(&fs);
    let inner = (queue.clone(), fs.clone());
    let done =
        tokio::time::timeout(
            Duration::from_secs(10),
            exclusive(
                &queue,
                &fs,
                &a,
                ticket,
                &CancellationToken::new(),
                |_| async move {
                    let (queue, fs) = inner;
                    let ticket = queue.ticket_on(&fs);
                    queue
                        .lock_all_after_earlier(&*fs, ticket, || async move {
                            Ok::<_, ()>((vec![b], 7))
                        })
                        .await
                        .unwrap()
                        .unwrap()
                        .1
                },
            ),
        )
        .await
        .expect("the inner undo waited for the call it was made in");
    assert_eq!(done.unwrap(), 7);
}
