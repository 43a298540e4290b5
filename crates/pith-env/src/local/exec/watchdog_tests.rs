use std::process::{Child as StdChild, Command as StdCommand};
use std::time::{Duration, Instant};

use super::*;

/// A `sleep 100` in a process group of its own, with `env` added.
fn sleeper(env: &[(&str, &str)]) -> StdChild {
    use std::os::unix::process::CommandExt;
    StdCommand::new("sleep")
        .arg("100")
        .envs(env.iter().copied())
        .process_group(0)
        .spawn()
        .unwrap()
}

fn pgid(child: &StdChild) -> i32 {
    i32::try_from(child.id()).unwrap()
}

/// Whether `child` is killed within 5 s (it would otherwise sleep 100 s).
fn dies_soon(child: &mut StdChild) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[tokio::test]
async fn at_end_of_file_registered_groups_die_and_unregistered_ones_live() {
    let watchdog = Watchdog::start("0000000000000000-").unwrap();
    let mut registered = sleeper(&[]);
    let mut finished = sleeper(&[]);
    watchdog.started(pgid(&registered)).unwrap();
    watchdog.started(pgid(&finished)).unwrap();
    // A removed group is spared even though its process still runs.
    watchdog.ended(pgid(&finished)).unwrap();
    drop(watchdog);
    assert!(dies_soon(&mut registered), "a registered group survived");
    let spared = finished.try_wait().unwrap().is_none();
    finished.kill().unwrap();
    finished.wait().unwrap();
    assert!(spared, "an unregistered group was killed");
}

#[tokio::test]
async fn at_end_of_file_marked_escapees_die_and_other_trees_live() {
    let prefix = format!("{:016x}-", rand::random::<u64>());
    let watchdog = Watchdog::start(&prefix).unwrap();
    let mut escapee = sleeper(&[("PITH_TREE_ID", &format!("{prefix}7"))]);
    let mut other = sleeper(&[("PITH_TREE_ID", "ffffffffffffffff-7")]);
    drop(watchdog);
    assert!(dies_soon(&mut escapee), "a marked escapee survived");
    let spared = other.try_wait().unwrap().is_none();
    other.kill().unwrap();
    other.wait().unwrap();
    assert!(spared, "another tree's process was killed");
}
