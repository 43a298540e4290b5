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

/// Only a guard against a hang when something is broken; no speed is asserted.
const PATIENCE: Duration = Duration::from_secs(30);

/// Waits until the process `pid` has exited (gone, or a zombie not reaped yet).
fn wait_exited(pid: i32) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let zombie_or_gone =
            std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
                stat.rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z'))
            });
        if zombie_or_gone {
            return;
        }
        assert!(Instant::now() < deadline, "process {pid} never exited");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `child` was SIGKILLed (it would otherwise sleep 100 s): waits for
/// its end, which the watchdog's SIGKILL makes immediate.
fn was_killed(child: &mut StdChild) -> bool {
    use std::os::unix::process::ExitStatusExt;
    wait_exited(pgid(child));
    child.wait().unwrap().signal() == Some(libc::SIGKILL)
}

/// Drops `watchdog` (end of file on its socket) and waits until it has done
/// its work and exited: what it killed is dead by then, what it spared lives.
fn finish(watchdog: Watchdog) {
    let pid = watchdog.pid().unwrap();
    drop(watchdog);
    wait_exited(pid);
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
    finish(watchdog);
    assert!(was_killed(&mut registered), "a registered group survived");
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
    finish(watchdog);
    assert!(was_killed(&mut escapee), "a marked escapee survived");
    let spared = other.try_wait().unwrap().is_none();
    other.kill().unwrap();
    other.wait().unwrap();
    assert!(spared, "another tree's process was killed");
}
