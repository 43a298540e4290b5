//! The validated configuration: what the commands run with. Everything a user can get
//! wrong on the command line is caught here, as a [`UsageError`] (exit status 2).

use std::fmt;
use std::path::{Path, PathBuf};

use pith_env::Env;
use pith_tools::{OverwritePolicy, TOOL_NAMES, ToolSet};
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
}

/// Where the tools work and which ones exist: the shared flags, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Workspace {
    /// The canonical working directory.
    pub(crate) cwd: PathBuf,
    /// The selected tools, in the canonical order.
    pub(crate) tools: Vec<&'static str>,
}

impl Workspace {
    /// The tool set over `env` in this workspace.
    pub(crate) fn toolset(&self, env: &Env, policy: OverwritePolicy) -> ToolSet {
        ToolSet::builder(env.clone())
            .cwd(&self.cwd)
            .tools(&self.tools)
            .overwrite_policy(policy)
            .build()
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
                workspace: workspace(args.workspace)?,
                input: match args.args.as_deref() {
                    None | Some("-") => ArgsInput::Stdin,
                    Some(text) => ArgsInput::Inline(parse_json_args(text, "the JSON argument")?),
                },
                tool: args.tool,
                json: args.json,
            }),
            cli::Command::Batch(args) => Command::Batch(workspace(args.workspace)?),
            cli::Command::Tools(args) => Command::Tools(ToolsConfig {
                tools: selection(args.selection.tools.as_deref())?,
                json: args.json,
            }),
            cli::Command::Mcp(args) => Command::Mcp(workspace(args.workspace)?),
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

fn workspace(args: cli::WorkspaceArgs) -> Result<Workspace, UsageError> {
    Ok(Workspace {
        cwd: working_directory(args.cwd.as_deref())?,
        tools: selection(args.selection.tools.as_deref())?,
    })
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
