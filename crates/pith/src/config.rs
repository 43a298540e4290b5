//! The validated configuration: what the commands run with. Everything a user can get
//! wrong on the command line is caught here, as a [`UsageError`] (exit status 2).

use std::fmt;
use std::path::{Path, PathBuf};

use pith_env::{Env, SandboxFallback, SandboxMode, SandboxPolicy, SandboxStatus};
use pith_tools::{OverwritePolicy, TOOL_NAMES, ToolConfig, ToolSet, WorkspacePolicy};
use serde_json::Value;

use crate::cli::{self, Cli, LogLevel};

/// A mistake on the command line: one line for stderr, exit status 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UsageError(pub(crate) String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The whole configuration.
#[derive(Debug)]
pub(crate) struct Config {
    /// `--log-level`.
    pub(crate) log_level: LogLevel,
    /// What to run.
    pub(crate) command: Command,
}

/// What to run, validated.
#[derive(Debug)]
pub(crate) enum Command {
    /// `pith call`.
    Call(CallConfig),
    /// `pith batch`.
    Batch(Workspace),
    /// `pith tools`.
    Tools(ToolsConfig),
    /// `pith mcp`.
    Mcp(Workspace),
    /// `pith sandbox status`.
    SandboxStatus(Workspace),
    /// `pith serve --stdio`.
    Serve,
}

/// Where the tools work and which ones exist: the shared flags, validated.
#[derive(Clone, Debug)]
pub(crate) struct Workspace {
    /// The canonical working directory.
    pub(crate) cwd: PathBuf,
    /// The selected tools, in the canonical order.
    pub(crate) tools: Vec<&'static str>,
    /// Roots, protected paths and the sandbox.
    pub(crate) safety: Safety,
    /// `--remote`: where the tools run instead of here. Until connected, `cwd`
    /// and `safety` are placeholders: the far side resolves them.
    pub(crate) remote: Option<pith_env::remote::RemoteOptions>,
}

/// The safety flags, validated.
#[derive(Clone, Debug)]
pub(crate) struct Safety {
    /// Containment of the file tools (`None`: off).
    pub(crate) workspace: Option<WorkspacePolicy>,
    /// The OS sandbox bash commands run in.
    pub(crate) sandbox: SandboxPolicy,
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Workspace) -> bool {
        (&self.cwd, &self.tools, &self.safety) == (&other.cwd, &other.tools, &other.safety)
            && self.remote.as_ref().map(|r| (&r.prefix, &r.policy))
                == other.remote.as_ref().map(|r| (&r.prefix, &r.policy))
    }
}

impl Eq for Workspace {}

impl PartialEq for Safety {
    fn eq(&self, other: &Safety) -> bool {
        self.sandbox == other.sandbox
            && self.workspace.as_ref().map(|w| (w.roots(), w.protected()))
                == other.workspace.as_ref().map(|w| (w.roots(), w.protected()))
    }
}

impl Eq for Safety {}

impl Workspace {
    /// The tool set over `env` in this workspace.
    pub(crate) fn toolset(&self, env: &Env, policy: OverwritePolicy) -> ToolSet {
        let mut config = ToolConfig::default();
        config.overwrite_policy = policy;
        config.workspace = self.safety.workspace.clone();
        config.sandbox = self.safety.sandbox.clone();
        ToolSet::builder(env.clone())
            .cwd(&self.cwd)
            .tools(&self.tools)
            .config(config)
            .build()
    }

    /// What the sandbox and the roots enforce here, line by line.
    pub(crate) fn describe_safety(&self) -> String {
        let mut text = SandboxStatus::probe().describe(&self.safety.sandbox);
        text.push('\n');
        text.push_str(&match &self.safety.workspace {
            Some(policy) => {
                let roots: Vec<String> =
                    policy.roots().iter().map(|root| root.display().to_string()).collect();
                let mut protected = vec![".git/".to_owned()];
                protected.extend(policy.protected().iter().cloned());
                format!(
                    "workspace roots: {} (write and edit{} refuse paths that resolve outside them)\nprotected: {}",
                    roots.join(", "),
                    if policy.contains_reads() { ", read, ls, grep and find" } else { "" },
                    protected.join(", ")
                )
            }
            None => "workspace roots: none (the file tools may touch any path this user can; pass --root DIR to confine them)".to_owned(),
        });
        text
    }
}

/// `pith call`, validated.
#[derive(Debug)]
pub(crate) struct CallConfig {
    /// Where and with which tools.
    pub(crate) workspace: Workspace,
    /// The tool name as given (an unknown name is the tool's error, like in batch and MCP).
    pub(crate) tool: String,
    /// Where the arguments come from.
    pub(crate) input: ArgsInput,
    /// `--json`.
    pub(crate) json: bool,
}

/// The arguments of `pith call`.
#[derive(Debug, PartialEq)]
pub(crate) enum ArgsInput {
    /// Given on the command line (already parsed).
    Inline(Value),
    /// To be read from stdin.
    Stdin,
}

/// `pith tools`, validated.
#[derive(Debug)]
pub(crate) struct ToolsConfig {
    /// The selected tools.
    pub(crate) tools: Vec<&'static str>,
    /// `--json`.
    pub(crate) json: bool,
}

impl Config {
    /// Validates parsed flags.
    pub(crate) fn from_cli(cli: Cli) -> Result<Config, UsageError> {
        let command = match cli.command {
            cli::Command::Call(args) => Command::Call(CallConfig {
                workspace: workspace(args.workspace, args.remote, Front::OneShot)?,
                input: match args.args.as_deref() {
                    None | Some("-") => ArgsInput::Stdin,
                    Some(text) => ArgsInput::Inline(parse_json_args(text, "the JSON argument")?),
                },
                tool: args.tool,
                json: args.json,
            }),
            cli::Command::Batch(args) => {
                Command::Batch(workspace(args.workspace, args.remote, Front::OneShot)?)
            }
            cli::Command::Tools(args) => Command::Tools(ToolsConfig {
                tools: selection(args.selection.tools.as_deref())?,
                json: args.json,
            }),
            cli::Command::Mcp(args) => {
                Command::Mcp(workspace(args.workspace, args.remote, Front::Mcp)?)
            }
            cli::Command::Serve(_) => Command::Serve,
            cli::Command::Sandbox(cli::SandboxCommand::Status(args)) => {
                let front = if args.mcp { Front::Mcp } else { Front::OneShot };
                Command::SandboxStatus(workspace(
                    args.workspace,
                    cli::RemoteArgs::default(),
                    front,
                )?)
            }
        };
        Ok(Config {
            log_level: cli.log_level,
            command,
        })
    }
}

/// Parses tool arguments given as JSON text; blank text means no arguments (`{}`).
pub(crate) fn parse_json_args(text: &str, origin: &str) -> Result<Value, UsageError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(text).map_err(|error| {
        UsageError(format!(
            "{origin} is not valid JSON ({error}); pass an object such as '{{\"path\":\"src/main.rs\"}}'"
        ))
    })
}

/// Which front end the flags are for: their safety defaults differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Front {
    /// `call` and `batch`: containment and sandbox only when asked for.
    OneShot,
    /// `mcp`: contained to the cwd (plus roots) and sandboxed where Landlock is available.
    Mcp,
}

fn workspace(
    args: cli::WorkspaceArgs,
    remote: cli::RemoteArgs,
    front: Front,
) -> Result<Workspace, UsageError> {
    if let Some(prefix) = remote.remote.clone() {
        return crate::remote::workspace(args, prefix, remote, front == Front::Mcp);
    }
    let cwd = working_directory(args.cwd.as_deref())?;
    let safety = safety(&args.safety, &cwd, front)?;
    Ok(Workspace {
        cwd,
        tools: selection(args.selection.tools.as_deref())?,
        safety,
        remote: None,
    })
}

fn safety(args: &cli::SafetyArgs, cwd: &Path, front: Front) -> Result<Safety, UsageError> {
    let mut roots = Vec::new();
    if front == Front::Mcp {
        roots.push(cwd.to_path_buf());
    }
    for root in &args.roots {
        let root = root.canonicalize().map_err(|error| {
            UsageError(format!("--root {}: {}", root.display(), io_reason(&error)))
        })?;
        if !root.is_dir() {
            return Err(UsageError(format!(
                "--root {}: not a directory",
                root.display()
            )));
        }
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    let contain = !roots.is_empty();
    if !contain && (!args.protect.is_empty() || args.contain_reads) {
        return Err(UsageError(
            "--protect and --contain-reads need workspace roots: add --root DIR".to_owned(),
        ));
    }
    let workspace = if contain {
        Some(
            WorkspacePolicy::new(roots.clone(), &args.protect, args.contain_reads)
                .map_err(UsageError)?,
        )
    } else {
        None
    };
    let mode = match (args.sandbox, front) {
        (Some(mode), _) => mode,
        (None, Front::Mcp) if SandboxStatus::probe().landlock_available() => {
            SandboxMode::WorkspaceWrite
        }
        (None, _) => SandboxMode::Off,
    };
    let sandbox = SandboxPolicy {
        mode,
        writable: if contain {
            roots
        } else {
            vec![cwd.to_path_buf()]
        },
        deny_network: args.deny_network,
        fallback: if args.allow_unsandboxed {
            SandboxFallback::RunUnsandboxed
        } else {
            SandboxFallback::Refuse
        },
    };
    Ok(Safety { workspace, sandbox })
}

fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such directory".to_owned(),
        _ => error.to_string(),
    }
}

fn working_directory(cwd: Option<&Path>) -> Result<PathBuf, UsageError> {
    let given = match cwd {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().map_err(|error| {
            UsageError(format!(
                "cannot read the current directory ({error}); pass --cwd DIR"
            ))
        })?,
    };
    let canonical = given.canonicalize().map_err(|error| {
        let reason = match error.kind() {
            std::io::ErrorKind::NotFound => "no such directory".to_owned(),
            _ => error.to_string(),
        };
        UsageError(format!("--cwd {}: {reason}", given.display()))
    })?;
    if !canonical.is_dir() {
        return Err(UsageError(format!(
            "--cwd {}: not a directory",
            given.display()
        )));
    }
    Ok(canonical)
}

/// Validates `--tools`; every name must be a known tool.
pub(crate) fn selection(names: Option<&[String]>) -> Result<Vec<&'static str>, UsageError> {
    let Some(names) = names else {
        return Ok(TOOL_NAMES.to_vec());
    };
    let mut wanted = Vec::new();
    for name in names
        .iter()
        .map(|name| name.trim())
        .filter(|n| !n.is_empty())
    {
        if !TOOL_NAMES.contains(&name) {
            return Err(UsageError(format!(
                "unknown tool '{name}' in --tools; valid tools: {}",
                TOOL_NAMES.join(", ")
            )));
        }
        wanted.push(name);
    }
    if wanted.is_empty() {
        return Err(UsageError(format!(
            "--tools needs at least one tool: {}",
            TOOL_NAMES.join(", ")
        )));
    }
    Ok(TOOL_NAMES
        .into_iter()
        .filter(|tool| wanted.contains(tool))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_canonical_order_of_a_tool_selection() {
        let names = vec!["ls".to_owned(), " read".to_owned()];
        assert_eq!(selection(Some(&names)).unwrap(), vec!["read", "ls"]);
        assert_eq!(selection(None).unwrap(), TOOL_NAMES.to_vec());
    }

    #[test]
    fn rejects_an_unknown_tool_listing_the_valid_ones() {
        let error = selection(Some(&["reed".to_owned()])).unwrap_err();
        assert_eq!(
            error.0,
            "unknown tool 'reed' in --tools; valid tools: read, bash, edit, write, grep, find, ls"
        );
    }

    #[test]
    fn reads_blank_arguments_as_an_empty_object() {
        assert_eq!(
            parse_json_args(" \n", "stdin").unwrap(),
            serde_json::json!({})
        );
        assert!(parse_json_args("{nope", "stdin").is_err());
    }
}
