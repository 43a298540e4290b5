//! The same suites over a real OpenSSH server on 127.0.0.1, started here:
//! throwaway host and client keys in a temp dir, a random port, `StrictModes
//! no`, `UsePAM no`. `scripts/sshd-for-tests` installs Debian's
//! openssh-server where it is missing; without it these tests are skipped.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pith_testkit::{Prerequisite, skip};

use super::{faults, ports};

const SSHD: &str = "/usr/sbin/sshd";

/// A running sshd and the `--remote` prefix that reaches it.
struct Sshd {
    child: Child,
    prefix: String,
    _dir: tempfile::TempDir,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "ssh-keygen failed");
}

/// Starts sshd, or records the skip and returns `None`.
fn sshd(test: &str) -> Option<Sshd> {
    let has = |program: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    };
    if !Path::new(SSHD).is_file() || !has("ssh") || !has("ssh-keygen") {
        skip(
            test,
            Prerequisite::Ssh,
            "OpenSSH (sshd, ssh, ssh-keygen) is not installed; run scripts/sshd-for-tests",
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("host_key");
    let client = dir.path().join("client_key");
    keygen(&host);
    keygen(&client);
    std::fs::copy(
        dir.path().join("client_key.pub"),
        dir.path().join("authorized_keys"),
    )
    .unwrap();
    // Privilege separation needs this directory.
    std::fs::create_dir_all("/run/sshd").unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = dir.path().join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nAuthorizedKeysFile {keys}\n\
             PidFile {pid}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin yes\n\
             PermitUserEnvironment no\nMaxStartups 100\nMaxSessions 100\nLogLevel ERROR\n",
            host = host.display(),
            keys = dir.path().join("authorized_keys").display(),
            pid = dir.path().join("sshd.pid").display(),
        ),
    )
    .unwrap();
    // Its log (errors only) goes to a file: the readiness probe below makes it complain.
    let log = std::fs::File::create(dir.path().join("sshd.log")).unwrap();
    let child = Command::new(SSHD)
        .args(["-D", "-e", "-f"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "sshd did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
    let prefix = format!(
        "ssh -T -F /dev/null -i {client} -p {port} -o BatchMode=yes -o StrictHostKeyChecking=no \
         -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR {user}@127.0.0.1",
        client = client.display(),
        user = user.trim(),
    );
    Some(Sshd {
        child,
        prefix,
        _dir: dir,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_env_keeps_the_file_system_contract_over_ssh() {
    let Some(sshd) = sshd("remote_env_keeps_the_file_system_contract_over_ssh") else {
        return;
    };
    ports::conformance_over(&sshd.prefix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_and_search_over_ssh_give_what_local_gives() {
    let Some(sshd) = sshd("exec_and_search_over_ssh_give_what_local_gives") else {
        return;
    };
    ports::exec_matches_local_over(&sshd.prefix).await;
    ports::search_matches_local_over(&sshd.prefix).await;
    ports::cancel_and_timeout_kill_the_far_tree_over(&sshd.prefix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_ssh_client_mid_command_kills_the_far_tree_and_the_next_call_reconnects() {
    let Some(sshd) = sshd("killing_the_ssh_client_mid_command_kills_the_far_tree") else {
        return;
    };
    faults::lost_mid_command_over(&sshd.prefix, "ssh").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_ssh_client_mid_write_leaves_old_or_new_bytes_and_no_temp_file() {
    let Some(sshd) = sshd("killing_the_ssh_client_mid_write_leaves_old_or_new_bytes") else {
        return;
    };
    faults::lost_mid_write_over(&sshd.prefix, "ssh", 50, 100 << 20).await;
}

#[test]
fn batch_and_upload_over_ssh_give_the_model_what_local_gives() {
    let Some(sshd) = sshd("batch_and_upload_over_ssh_give_the_model_what_local_gives") else {
        return;
    };
    super::cli::batch_matches_local_over(&sshd.prefix);
    super::cli::upload_over(&format!("{} env", sshd.prefix));
}
