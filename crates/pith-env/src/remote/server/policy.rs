//! The far side's policy: the handshake's answer, the directories and
//! sandbox floor it resolves, and raising a command's sandbox to that floor.

use std::path::{Path, PathBuf};

use super::super::wire::{
    self, ClientHello, PROTOCOL_VERSION, RemotePolicyWire, ServerHello, path,
};
use crate::{
    FileSystem, LocalEnv, SandboxFallback, SandboxMode, SandboxPolicy, SandboxStatus, WriteRules,
};

/// Checks the near side's greeting and resolves its policy here; returns
/// the answer and the sandbox floor.
pub(super) fn handshake(env: &LocalEnv, hello: ClientHello) -> (ServerHello, SandboxPolicy) {
    let status = SandboxStatus::probe();
    let home = env.home_dir();
    let resolved = if hello.protocol == PROTOCOL_VERSION {
        resolve_policy(&hello.policy, home.as_deref(), status.landlock_available())
    } else {
        Err(format!(
            "protocol version mismatch: the near pith {} speaks {}, this pith {} speaks {PROTOCOL_VERSION}",
            hello.pith_version,
            hello.protocol,
            env!("CARGO_PKG_VERSION")
        ))
    };
    let (cwd, roots, floor, refused) = match resolved {
        Ok((cwd, roots, floor)) => (cwd, roots, floor, None),
        Err(message) => (
            PathBuf::new(),
            Vec::new(),
            SandboxPolicy::off(),
            Some(message),
        ),
    };
    let answer = ServerHello {
        protocol: PROTOCOL_VERSION,
        pith_version: env!("CARGO_PKG_VERSION").to_owned(),
        os: std::env::consts::OS.to_owned(),
        arch: std::env::consts::ARCH.to_owned(),
        home: home.map(|home| wire::wpath(&home)),
        landlock_abi: status.landlock_abi,
        refused,
        cwd: wire::wpath(&cwd),
        roots: roots.iter().map(|root| wire::wpath(root)).collect(),
        sandbox: (&floor).into(),
    };
    (answer, floor)
}

/// Expands a leading `~` with this side's home and resolves the directory.
fn resolve_dir(given: &Path, home: Option<&Path>, flag: &str) -> Result<PathBuf, String> {
    let expanded = match (given.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => given.to_path_buf(),
    };
    let canonical = std::fs::canonicalize(&expanded).map_err(|error| {
        let reason = if error.kind() == std::io::ErrorKind::NotFound {
            "no such directory".to_owned()
        } else {
            error.to_string()
        };
        format!("{flag} {}: {reason} on the remote", given.display())
    })?;
    if !canonical.is_dir() {
        return Err(format!(
            "{flag} {}: not a directory on the remote",
            given.display()
        ));
    }
    Ok(canonical)
}

/// The policy's paths resolved here, and the sandbox floor built from them
/// with the rules `pith` uses locally (writable: the roots, else the cwd).
fn resolve_policy(
    policy: &RemotePolicyWire,
    home: Option<&Path>,
    landlock: bool,
) -> Result<(PathBuf, Vec<PathBuf>, SandboxPolicy), String> {
    let cwd = match &policy.cwd {
        Some(cwd) => resolve_dir(&path(cwd.clone()), home, "--cwd")?,
        None => match home {
            Some(home) => resolve_dir(home, None, "--cwd")?,
            None => std::env::current_dir()
                .map_err(|error| format!("no home directory and no current directory: {error}"))?,
        },
    };
    let mut roots = Vec::new();
    if policy.cwd_is_root {
        roots.push(cwd.clone());
    }
    for root in &policy.roots {
        let root = resolve_dir(&path(root.clone()), home, "--root")?;
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    let mut mode = if policy.sandbox_mode.is_empty() {
        SandboxMode::Off
    } else {
        policy.sandbox_mode.parse::<SandboxMode>()?
    };
    if mode == SandboxMode::Off && policy.auto_sandbox && landlock {
        mode = SandboxMode::WorkspaceWrite;
    }
    let writable = if roots.is_empty() {
        vec![cwd.clone()]
    } else {
        roots.clone()
    };
    // `.git/` and the --protect globs stay read-only for commands, as pith
    // makes them locally (the sandbox expands the globs when each command
    // starts); the patterns are judged here, against this file system.
    let mut read_only: Vec<PathBuf> = writable.iter().map(|root| root.join(".git")).collect();
    let rules = WriteRules::new(&roots, &policy.protected)?;
    for glob in rules.globs() {
        for root in &roots {
            let root = globset::escape(&root.to_string_lossy());
            read_only.push(PathBuf::from(format!(
                "{}/{}",
                root.trim_end_matches('/'),
                glob.glob
            )));
        }
    }
    let floor = SandboxPolicy {
        mode,
        writable,
        read_only,
        deny_network: policy.deny_network,
        fallback: if policy.run_unsandboxed {
            SandboxFallback::RunUnsandboxed
        } else {
            SandboxFallback::Refuse
        },
    };
    Ok((cwd, roots, floor))
}

/// The stricter of two sandbox modes.
fn stricter(a: SandboxMode, b: SandboxMode) -> SandboxMode {
    let rank = |mode| match mode {
        SandboxMode::Off => 0,
        SandboxMode::WorkspaceWrite => 1,
        SandboxMode::ReadOnly => 2,
    };
    if rank(a) >= rank(b) { a } else { b }
}

/// Raises a command's sandbox to at least the handshake's.
pub(super) fn apply_floor(policy: &mut SandboxPolicy, floor: &SandboxPolicy) {
    if !floor.is_active() {
        return;
    }
    let mode = stricter(policy.mode, floor.mode);
    if mode != policy.mode {
        policy.mode = mode;
        policy.writable = floor.writable.clone();
        policy.fallback = floor.fallback;
    }
    for path in &floor.read_only {
        if !policy.read_only.contains(path) {
            policy.read_only.push(path.clone());
        }
    }
    policy.deny_network |= floor.deny_network;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_raises_a_weaker_sandbox_and_keeps_a_stronger_one() {
        let floor = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            writable: vec![PathBuf::from("/work")],
            read_only: vec![PathBuf::from("/work/.git")],
            deny_network: true,
            fallback: SandboxFallback::Refuse,
        };
        let mut off = SandboxPolicy::off();
        apply_floor(&mut off, &floor);
        assert_eq!(off, floor);
        let mut read_only = SandboxPolicy {
            mode: SandboxMode::ReadOnly,
            ..SandboxPolicy::off()
        };
        apply_floor(&mut read_only, &floor);
        assert_eq!(read_only.mode, SandboxMode::ReadOnly);
        assert!(read_only.deny_network);
        let mut unchanged = SandboxPolicy::off();
        apply_floor(&mut unchanged, &SandboxPolicy::off());
        assert_eq!(unchanged, SandboxPolicy::off());
    }

    #[test]
    fn the_policy_resolves_here_expanding_the_home_and_refusing_missing_roots() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("project")).unwrap();
        let home_path = home.path().canonicalize().unwrap();
        let policy = RemotePolicyWire {
            cwd: Some(b"~/project".to_vec()),
            cwd_is_root: true,
            sandbox_mode: "workspace-write".to_owned(),
            protected: vec![".env".to_owned()],
            ..RemotePolicyWire::default()
        };
        let (cwd, roots, floor) = resolve_policy(&policy, Some(&home_path), true).unwrap();
        assert_eq!(cwd, home_path.join("project"));
        assert_eq!(roots, vec![cwd.clone()]);
        assert_eq!(floor.mode, SandboxMode::WorkspaceWrite);
        assert_eq!(floor.writable, vec![cwd.clone()]);
        // .git/ and the --protect glob stay read-only for commands.
        assert_eq!(floor.read_only.len(), 2, "{:?}", floor.read_only);
        assert_eq!(floor.read_only[0], cwd.join(".git"));
        assert!(
            floor.read_only[1]
                .to_string_lossy()
                .ends_with("/{**/.env,**/.env/**}"),
            "{:?}",
            floor.read_only
        );

        let auto = RemotePolicyWire {
            auto_sandbox: true,
            ..RemotePolicyWire::default()
        };
        let (_, _, floor) = resolve_policy(&auto, Some(&home_path), false).unwrap();
        assert_eq!(
            floor.mode,
            SandboxMode::Off,
            "no Landlock there: auto stays off"
        );

        let missing = RemotePolicyWire {
            roots: vec![b"/no/such/root".to_vec()],
            ..RemotePolicyWire::default()
        };
        let error = resolve_policy(&missing, Some(&home_path), true).unwrap_err();
        assert_eq!(
            error,
            "--root /no/such/root: no such directory on the remote"
        );
    }
}
