//! `--remote`: the tools run against another machine's ports, through
//! [`pith_env::RemoteEnv`]. The flags are sent in the handshake; the far side
//! resolves `--cwd` and `--root` there and answers with the resolved values.

use std::path::PathBuf;
use std::sync::Arc;

use pith_env::remote::{FarPith, RemoteOptions, RemotePolicy};
use pith_env::{Env, RemoteEnv, SandboxMode, SandboxPolicy};
use pith_tools::WorkspacePolicy;

use crate::cli;
use crate::config::{Command, Safety, UsageError, Workspace, selection};

/// The workspace of a `--remote` command, before connecting: the flags as given.
pub(crate) fn workspace(
    args: cli::WorkspaceArgs,
    prefix: String,
    remote: cli::RemoteArgs,
    mcp: bool,
) -> Result<Workspace, UsageError> {
    if prefix.trim().is_empty() {
        return Err(UsageError(
            "--remote needs a command prefix, e.g. --remote 'ssh -T dev@box'".to_owned(),
        ));
    }
    let safety = &args.safety;
    if !mcp && safety.roots.is_empty() && (!safety.protect.is_empty() || safety.contain_reads) {
        return Err(UsageError(
            "--protect and --contain-reads need workspace roots: add --root DIR".to_owned(),
        ));
    }
    let far_pith = match remote.remote_pith {
        Some(path) => FarPith::Path(path),
        None => FarPith::Install {
            upload: !remote.no_remote_install,
            executable: std::env::current_exe().map_err(|error| {
                UsageError(format!(
                    "cannot find this pith's executable to upload it ({error}); pass --remote-pith PATH"
                ))
            })?,
        },
    };
    let policy = RemotePolicy {
        cwd: args.cwd.clone(),
        roots: safety.roots.clone(),
        cwd_is_root: mcp,
        protected: safety.protect.clone(),
        contain_reads: safety.contain_reads,
        sandbox_mode: safety.sandbox.unwrap_or(SandboxMode::Off),
        auto_sandbox: mcp && safety.sandbox.is_none(),
        deny_network: safety.deny_network,
        run_unsandboxed: safety.allow_unsandboxed,
    };
    Ok(Workspace {
        cwd: PathBuf::new(),
        cwd_given: args.cwd.is_some(),
        keep_output: args.keep_output,
        journal: !args.no_journal,
        stale_check: !args.no_stale_check,
        max_jobs: args.max_jobs,
        env: crate::config::env_vars(&args.env)?,
        tools: selection(args.selection.tools.as_deref())?,
        safety: Safety {
            workspace: None,
            sandbox: SandboxPolicy::off(),
        },
        remote: Some(RemoteOptions {
            prefix,
            far_pith,
            policy,
        }),
    })
}

/// Connects a `--remote` command; other commands keep `local`.
pub(crate) async fn connect(command: Command, local: &Env) -> anyhow::Result<(Command, Env)> {
    Ok(match command {
        Command::Call(mut config) if config.workspace.remote.is_some() => {
            let (workspace, env) = resolve(config.workspace).await?;
            config.workspace = workspace;
            (Command::Call(config), env)
        }
        Command::Batch(mut config) if config.workspace.remote.is_some() => {
            let (workspace, env) = resolve(config.workspace).await?;
            config.workspace = workspace;
            (Command::Batch(config), env)
        }
        Command::Mcp(workspace) if workspace.remote.is_some() => {
            let (workspace, env) = resolve(workspace).await?;
            (Command::Mcp(workspace), env)
        }
        command => (command, local.clone()),
    })
}

/// Connects and fills the workspace in with what the far side resolved.
async fn resolve(mut workspace: Workspace) -> anyhow::Result<(Workspace, Env)> {
    let Some(options) = workspace.remote.clone() else {
        anyhow::bail!("not a remote workspace");
    };
    let policy = options.policy.clone();
    let remote = RemoteEnv::connect(options).await?;
    let info = remote.info().clone();
    tracing::info!(
        "remote `{}`: pith {} on {} {}, cwd {}",
        remote.remote(),
        info.pith_version,
        info.os,
        info.arch,
        info.cwd.display()
    );
    workspace.cwd = info.cwd.clone();
    workspace.safety = Safety {
        workspace: if info.roots.is_empty() {
            None
        } else {
            Some(
                WorkspacePolicy::new(info.roots.clone(), &policy.protected, policy.contain_reads)
                    .map_err(UsageError)?,
            )
        },
        sandbox: info.sandbox.clone(),
    };
    let remote = Arc::new(remote);
    let env = Env {
        fs: remote.clone(),
        exec: remote.clone(),
        search: remote,
    };
    Ok((workspace, env))
}
