//! The OS sandbox with real processes: Landlock keeps writes inside the roots.
// Marks the helpers as test code, where clippy allows printing and unwrap.
#![cfg(test)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use pith_env::{
    CancellationToken, Exec, ExecError, ExecRequest, LocalEnv, OutputStream, SandboxMode,
    SandboxPolicy, SandboxStatus,
};

/// A base for directories the sandbox does not always allow (it always allows the
/// temp dirs): the target dir, or the home directory when the checkout itself lives
/// under a temp dir.
fn unsandboxed_base() -> PathBuf {
    let always: Vec<PathBuf> = SandboxPolicy::always_writable()
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .collect();
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(PathBuf::from),
        Some(PathBuf::from("/var/lib")),
    ];
    for candidate in candidates.into_iter().flatten() {
        let Ok(real) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        if !always.iter().any(|dir| real.starts_with(dir)) {
            return real;
        }
    }
    panic!("no directory outside the temp dirs to test the sandbox with")
}

/// A directory removed when the test ends.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Two fresh directories outside the system temp dir (which the sandbox
/// always allows): one to allow, one that must stay untouched.
fn dirs(name: &str) -> (Scratch, PathBuf, PathBuf) {
    let base = unsandboxed_base().join(format!("pith-sandbox-{name}-{}", std::process::id()));
    let inside = base.join("inside");
    let outside = base.join("outside");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (Scratch(base), inside, outside)
}

async fn run(policy: SandboxPolicy, cwd: &Path, script: &str) -> Result<(i32, String), ExecError> {
    let mut request = ExecRequest::new(
        "/bin/bash",
        vec![OsString::from("-c"), OsString::from(script)],
        cwd,
    );
    request.sandbox = policy;
    let mut output = Vec::new();
    let mut sink = |_: OutputStream, bytes: &[u8]| output.extend_from_slice(bytes);
    let outcome = LocalEnv::new()
        .exec(request, &mut sink, CancellationToken::new())
        .await?;
    Ok((
        outcome.status.code(),
        String::from_utf8_lossy(&output).into_owned(),
    ))
}

/// Landlock is on these machines' kernels; where it is not, say why the
/// test did not run instead of passing silently.
fn landlock_or_explain(test: &str) -> bool {
    let status = SandboxStatus::probe();
    if !status.landlock_available() {
        eprintln!("{test}: NOT RUN — Landlock is not available on this kernel");
    }
    status.landlock_available()
}

#[tokio::test]
async fn workspace_write_allows_the_roots_and_refuses_everything_else() {
    if !landlock_or_explain("workspace_write_allows_the_roots_and_refuses_everything_else") {
        return;
    }
    let (_scratch, inside, outside) = dirs("ww");
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        writable: vec![inside.clone()],
        ..SandboxPolicy::default()
    };
    let script = format!(
        "echo in > {inside}/a.txt && echo tmp > \"${{TMPDIR:-/tmp}}/pith-sandbox-$$\" && rm \"${{TMPDIR:-/tmp}}/pith-sandbox-$$\" && echo ok; \
         echo out > {outside}/b.txt; echo status=$?; cat /etc/hostname >/dev/null && echo read-ok",
        inside = inside.display(),
        outside = outside.display()
    );
    let (code, output) = run(policy, &inside, &script).await.unwrap();
    assert_eq!(code, 0, "{output}");
    assert!(output.contains("ok\n"), "{output}");
    assert!(output.contains("Permission denied"), "{output}");
    assert!(output.contains("status=1"), "{output}");
    assert!(output.contains("read-ok"), "{output}");
    assert_eq!(
        std::fs::read_to_string(inside.join("a.txt")).unwrap(),
        "in\n"
    );
    assert!(
        !outside.join("b.txt").exists(),
        "a file was created outside the roots"
    );
}

#[tokio::test]
async fn read_only_refuses_every_write_but_dev_null() {
    if !landlock_or_explain("read_only_refuses_every_write_but_dev_null") {
        return;
    }
    let (_scratch, inside, _) = dirs("ro");
    let policy = SandboxPolicy {
        mode: SandboxMode::ReadOnly,
        ..SandboxPolicy::default()
    };
    let script = format!(
        "echo x > /dev/null && echo devnull-ok; echo x > {}/c.txt; echo status=$?",
        inside.display()
    );
    let (_, output) = run(policy, &inside, &script).await.unwrap();
    assert!(output.contains("devnull-ok"), "{output}");
    assert!(output.contains("status=1"), "{output}");
    assert!(!inside.join("c.txt").exists());
}

#[tokio::test]
async fn network_denial_refuses_inet_sockets_but_not_unix_ones() {
    let (_scratch, inside, _) = dirs("net");
    let policy = SandboxPolicy {
        deny_network: true,
        ..SandboxPolicy::default()
    };
    let script = "python3 - <<'PY'\nimport socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    print('inet-allowed')\nexcept OSError as e:\n    print('inet-denied', e.errno)\nsocket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\nprint('unix-ok')\nPY";
    let (_, output) = run(policy, &inside, script).await.unwrap();
    assert!(output.contains("inet-denied"), "{output}");
    assert!(output.contains("unix-ok"), "{output}");
}

#[tokio::test]
async fn the_sandbox_does_not_leak_into_later_unsandboxed_commands() {
    let (_scratch, inside, outside) = dirs("leak");
    let (_, _) = run(
        SandboxPolicy {
            mode: SandboxMode::ReadOnly,
            ..SandboxPolicy::default()
        },
        &inside,
        "true",
    )
    .await
    .unwrap();
    let script = format!("echo free > {}/d.txt && echo wrote", outside.display());
    let (code, output) = run(SandboxPolicy::off(), &inside, &script).await.unwrap();
    assert_eq!(code, 0, "{output}");
    assert!(outside.join("d.txt").exists());
}
