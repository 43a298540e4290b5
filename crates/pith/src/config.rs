//! The validated configuration: what the commands run with. Everything a user can get
//! wrong on the command line is caught here, as a [`UsageError`] (exit status 2).

use std::fmt;
use std::path::{Path, PathBuf};

use pith_env::{Env, SandboxFallback, SandboxMode, SandboxPolicy, SandboxStatus};
use pith_tools::{
    OPTIONAL_TOOL_NAMES, OverwritePolicy, TOOL_NAMES, ToolConfig, ToolSet, WorkspacePolicy,
};
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
    Batch(BatchConfig),
    /// `pith tools`.
    Tools(ToolsConfig),
    /// `pith prompt`: the selected tools.
    Prompt(Vec<&'static str>),
    /// `pith mcp`.
    Mcp(Workspace),
    /// `pith sandbox status` (`--json`).
    SandboxStatus(Workspace, bool),
    /// `pith serve --stdio`.
    Serve,
    /// `pith undo`.
    Undo(UndoConfig),
}

/// `pith undo`, validated.
#[derive(Debug)]
pub(crate) struct UndoConfig {
    /// Whose journal, and where restores are confined.
    pub(crate) workspace: Workspace,
    /// `--list`, or what to undo.
    pub(crate) action: UndoAction,
    /// `--json`.
    pub(crate) json: bool,
}

/// What `pith undo` does.
#[derive(Debug)]
pub(crate) enum UndoAction {
    /// `--list`.
    List,
    /// Undo.
    Undo(pith_tools::UndoOptions),
}

/// Where the tools work and which ones exist: the shared flags, validated.
#[derive(Clone, Debug)]
pub(crate) struct Workspace {
    /// The canonical working directory.
    pub(crate) cwd: PathBuf,
    /// It was given with `--cwd` (for `pith mcp`, it then wins over the client's roots).
    pub(crate) cwd_given: bool,
    /// The selected tools, in the canonical order.
    pub(crate) tools: Vec<&'static str>,
    /// Roots, protected paths and the sandbox.
    pub(crate) safety: Safety,
    /// `--keep-output`: a long-lived session keeps its bash full-output files.
    pub(crate) keep_output: bool,
    /// Journal write, edit and apply_patch (not `--no-journal`).
    pub(crate) journal: bool,
    /// Not `--no-stale-check`: edit and write refuse a file that changed since it was read.
    pub(crate) stale_check: bool,
    /// `--max-jobs`: running background jobs per session.
    pub(crate) max_jobs: usize,
    /// `--env NAME=VALUE`: variables every command gets, over the defaults.
    pub(crate) env: Vec<(String, String)>,
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
    /// The tool set over `env` in this workspace. `keep_output`: the session
    /// keeps bash's full-output files when it ends (`call`, `batch`, `--keep-output`).
    pub(crate) fn toolset(&self, env: &Env, policy: OverwritePolicy, keep_output: bool) -> ToolSet {
        let mut config = ToolConfig::default();
        config.overwrite_policy = policy;
        config.bash.keep_output = keep_output || self.keep_output;
        config.stale_check = self.stale_check;
        config.bash.max_jobs = self.max_jobs;
        config.bash.env.clone_from(&self.env);
        config.workspace = self.safety.workspace.clone();
        config.sandbox = self.safety.sandbox.clone();
        if self.journal
            && let Some(dir) = pith_tools::Journal::default_dir(&self.cwd)
        {
            // The journal lives on this machine, with the user's state.
            let local: std::sync::Arc<dyn pith_env::FileSystem> =
                std::sync::Arc::new(pith_env::LocalEnv::new());
            config.journal = Some(std::sync::Arc::new(
                pith_tools::Journal::new(local, dir).with_hard_links(),
            ));
        }
        crate::extend::builder(env.clone(), &self.tools)
            .cwd(&self.cwd)
            .config(config)
            .build()
    }

    /// What the sandbox enforces here, as `pith sandbox status --json` prints it.
    pub(crate) fn safety_json(&self) -> Value {
        let report = SandboxStatus::probe().report(&self.safety.sandbox);
        serde_json::to_value(report).unwrap_or(Value::Null)
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
            None => "workspace roots: none (the file tools may touch any path this user can, but write and edit never .git/; pass --root DIR to confine them)".to_owned(),
        });
        text
    }
}

/// `pith call`, validated.
#[derive(Debug)]
pub(crate) struct CallConfig {
    /// Where and with which tools.
    pub(crate) workspace: Workspace,
    /// The tool name, one of the selected tools.
    pub(crate) tool: String,
    /// Where the arguments come from.
    pub(crate) input: ArgsInput,
    /// `--json`.
    pub(crate) json: bool,
    /// Whether the text output is coloured (`--color`, `NO_COLOR`, a terminal).
    pub(crate) color: bool,
}

/// `pith batch`, validated.
#[derive(Debug)]
pub(crate) struct BatchConfig {
    /// Where and with which tools.
    pub(crate) workspace: Workspace,
    /// `--format text`.
    pub(crate) text: bool,
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
            cli::Command::Call(args) => {
                let workspace = workspace(args.workspace, args.remote, Front::OneShot)?;
                if !workspace.tools.contains(&args.tool.as_str()) {
                    return Err(UsageError(format!(
                        "unknown tool {:?}; the tools are {}",
                        args.tool.chars().take(60).collect::<String>(),
                        workspace.tools.join(", ")
                    )));
                }
                Command::Call(CallConfig {
                    workspace,
                    input: match args.args.as_deref() {
                        None | Some("-") => ArgsInput::Stdin,
                        Some(text) => {
                            ArgsInput::Inline(parse_json_args(text, "the JSON argument")?)
                        }
                    },
                    tool: args.tool,
                    json: args.json,
                    color: use_color(args.color),
                })
            }
            cli::Command::Batch(args) => Command::Batch(BatchConfig {
                workspace: workspace(args.workspace, args.remote, Front::OneShot)?,
                text: args.format == cli::BatchFormat::Text,
            }),
            cli::Command::Prompt(args) => {
                Command::Prompt(selection(args.selection.tools.as_deref())?)
            }
            cli::Command::Tools(args) => Command::Tools(ToolsConfig {
                tools: selection(args.selection.tools.as_deref())?,
                json: args.json,
            }),
            cli::Command::Mcp(args) => {
                Command::Mcp(workspace(args.workspace, args.remote, Front::Mcp)?)
            }
            cli::Command::Serve(_) => Command::Serve,
            cli::Command::Undo(args) => Command::Undo(undo_config(args)?),
            cli::Command::Sandbox(cli::SandboxCommand::Status(args)) => {
                let front = if args.mcp { Front::Mcp } else { Front::OneShot };
                Command::SandboxStatus(
                    workspace(args.workspace, cli::RemoteArgs::default(), front)?,
                    args.json,
                )
            }
        };
        Ok(Config {
            log_level: cli.log_level,
            command,
        })
    }
}

fn undo_config(args: cli::UndoArgs) -> Result<UndoConfig, UsageError> {
    use pith_tools::{UndoOptions, UndoSelector};
    let workspace = workspace(args.workspace, cli::RemoteArgs::default(), Front::OneShot)?;
    if !workspace.journal {
        return Err(UsageError(
            "pith undo needs the journal; drop --no-journal".to_owned(),
        ));
    }
    let action = if args.list {
        UndoAction::List
    } else {
        let selector = if let Some(call) = args.call {
            UndoSelector::Call(call)
        } else if let Some(since) = args.since {
            UndoSelector::Since(
                pith_tools::parse_since(&since, std::time::SystemTime::now())
                    .map_err(|error| UsageError(format!("--since: {error}")))?,
            )
        } else {
            UndoSelector::Last(args.last.unwrap_or(1).max(1) as usize)
        };
        UndoAction::Undo(UndoOptions {
            selector,
            force: args.force,
            dry_run: args.dry_run,
        })
    };
    Ok(UndoConfig {
        workspace,
        action,
        json: args.json,
    })
}

/// `--color`: `auto` colours a terminal unless `NO_COLOR` is set (to anything non-empty).
fn use_color(choice: cli::ColorChoice) -> bool {
    use std::io::IsTerminal;
    match choice {
        cli::ColorChoice::Always => true,
        cli::ColorChoice::Never => false,
        cli::ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
                && std::io::stdout().is_terminal()
        }
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
    if front == Front::Mcp && args.cwd.is_none() && cwd == Path::new("/") {
        // The MCP workspace is the cwd: `/` would contain nothing.
        return Err(UsageError(
            "pith mcp was started in / and would use the whole file system as its workspace; pass the project directory with --cwd DIR (in the client's server configuration: \"args\": [\"mcp\", \"--cwd\", \"/path/to/project\"])".to_owned(),
        ));
    }
    let safety = safety(&args.safety, &cwd, front)?;
    Ok(Workspace {
        cwd,
        cwd_given: args.cwd.is_some(),
        tools: selection(args.selection.tools.as_deref())?,
        safety,
        keep_output: args.keep_output,
        journal: !args.no_journal,
        stale_check: !args.no_stale_check,
        max_jobs: args.max_jobs,
        env: env_vars(&args.env)?,
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
    let mut writable = if contain {
        roots
    } else {
        vec![cwd.to_path_buf()]
    };
    // Each --protect glob under each root; the sandbox expands them when each command starts.
    let read_only: Vec<PathBuf> = workspace
        .as_ref()
        .map(|workspace| {
            workspace
                .protected_under_roots()
                .into_iter()
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default();
    for dir in allow_write(&args.allow_write)? {
        if !writable.contains(&dir) {
            writable.push(dir);
        }
    }
    let sandbox = SandboxPolicy {
        mode,
        writable,
        read_only,
        deny_network: args.deny_network,
        fallback: if args.allow_unsandboxed {
            SandboxFallback::RunUnsandboxed
        } else {
            SandboxFallback::Refuse
        },
    };
    Ok(Safety { workspace, sandbox })
}

/// The directories `--allow-write` names: the presets `cargo`, `npm`, `pip`, `go` and
/// `cache`, or absolute directories. Missing preset directories are created.
fn allow_write(names: &[String]) -> Result<Vec<PathBuf>, UsageError> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let under_home = |path: &str| home.as_ref().map(|home| home.join(path));
    let cache = var("XDG_CACHE_HOME").or_else(|| under_home(".cache"));
    let mut dirs = Vec::new();
    for name in names {
        let preset: Vec<Option<PathBuf>> = match name.as_str() {
            "cargo" => {
                let cargo = var("CARGO_HOME").or_else(|| under_home(".cargo"));
                vec![
                    cargo.as_ref().map(|dir| dir.join("registry")),
                    cargo.as_ref().map(|dir| dir.join("git")),
                ]
            }
            "npm" => vec![var("npm_config_cache").or_else(|| under_home(".npm"))],
            "pip" => vec![var("PIP_CACHE_DIR").or_else(|| cache.as_ref().map(|c| c.join("pip")))],
            "go" => vec![
                var("GOMODCACHE").or_else(|| {
                    var("GOPATH")
                        .or_else(|| under_home("go"))
                        .map(|dir| dir.join("pkg").join("mod"))
                }),
                var("GOCACHE").or_else(|| cache.as_ref().map(|c| c.join("go-build"))),
            ],
            "cache" => vec![cache.clone()],
            other if Path::new(other).is_absolute() => {
                let dir = Path::new(other).canonicalize().map_err(|error| {
                    UsageError(format!("--allow-write {other}: {}", io_reason(&error)))
                })?;
                vec![Some(dir)]
            }
            other => {
                return Err(UsageError(format!(
                    "unknown --allow-write {other:?}: use cargo, npm, pip, go, cache or an absolute directory"
                )));
            }
        };
        if preset.iter().any(Option::is_none) {
            return Err(UsageError(format!(
                "--allow-write {name}: HOME is not set; pass the directory as an absolute path"
            )));
        }
        for dir in preset.into_iter().flatten() {
            std::fs::create_dir_all(&dir).map_err(|error| {
                UsageError(format!("--allow-write {name}: {}: {error}", dir.display()))
            })?;
            let dir = dir.canonicalize().unwrap_or(dir);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    Ok(dirs)
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

/// `--env NAME=VALUE` entries, checked.
pub(crate) fn env_vars(entries: &[String]) -> Result<Vec<(String, String)>, UsageError> {
    entries
        .iter()
        .map(|entry| match entry.split_once('=') {
            Some((name, value)) if !name.is_empty() && !name.contains('\0') => {
                Ok((name.to_owned(), value.to_owned()))
            }
            _ => Err(UsageError(format!(
                "--env takes NAME=VALUE, got '{entry}'; example: --env GIT_PAGER=less"
            ))),
        })
        .collect()
}

/// Validates `--tools`; every name must be a tool of the tool set: a built-in
/// one or one the host added ([`crate::run_with`]). Without `--tools`: the
/// default tools and the host's.
pub(crate) fn selection(names: Option<&[String]>) -> Result<Vec<&'static str>, UsageError> {
    selection_among(names, &crate::extend::added_names())
}

/// [`selection`] with the host's tool names given.
fn selection_among(
    names: Option<&[String]>,
    added: &[&'static str],
) -> Result<Vec<&'static str>, UsageError> {
    let with_added = |builtin: &[&'static str]| -> Vec<&'static str> {
        let mut all: Vec<&'static str> = builtin.to_vec();
        all.extend(added.iter().filter(|name| !builtin.contains(name)));
        all
    };
    let Some(names) = names else {
        return Ok(with_added(&TOOL_NAMES));
    };
    let known = with_added(
        &TOOL_NAMES
            .into_iter()
            .chain(OPTIONAL_TOOL_NAMES)
            .collect::<Vec<_>>(),
    );
    let mut wanted = Vec::new();
    for name in names
        .iter()
        .map(|name| name.trim())
        .filter(|n| !n.is_empty())
    {
        if !known.contains(&name) {
            return Err(UsageError(format!(
                "unknown tool '{name}' in --tools; valid tools: {}",
                known.join(", ")
            )));
        }
        wanted.push(name);
    }
    if wanted.is_empty() {
        return Err(UsageError(format!(
            "--tools needs at least one tool: {}",
            with_added(&TOOL_NAMES).join(", ")
        )));
    }
    Ok(known
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
            "unknown tool 'reed' in --tools; valid tools: read, bash, edit, write, grep, find, ls, jobs, apply_patch, undo"
        );
    }

    #[test]
    fn selects_a_host_tool_by_name_after_the_built_in_ones() {
        let names = vec!["append".to_owned(), "read".to_owned()];
        assert_eq!(
            selection_among(Some(&names), &["append"]).unwrap(),
            vec!["read", "append"]
        );
        let mut default = TOOL_NAMES.to_vec();
        default.push("append");
        assert_eq!(selection_among(None, &["append"]).unwrap(), default);
        let error = selection_among(Some(&["apend".to_owned()]), &["append"]).unwrap_err();
        assert!(
            error.0.ends_with("apply_patch, undo, append"),
            "{}",
            error.0
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
