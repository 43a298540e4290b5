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
