//! The flags as clap parses them. Only [`crate::config`] reads these: commands see the
//! validated [`crate::config::Config`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use pith_env::SandboxMode;

const MAIN_EXAMPLES: &str = "\
Examples:
  pith call read '{\"path\":\"src/main.rs\",\"limit\":40}'
  echo '{\"command\":\"cargo test\"}' | pith call bash --cwd ~/project
  pith batch --cwd ~/project < calls.jsonl
  pith tools --tools read,edit
  claude mcp add pith -- pith mcp --cwd ~/project";

const CALL_EXAMPLES: &str = "\
Examples:
  pith call ls '{\"path\":\".\"}'
  pith call read '{\"path\":\"Cargo.toml\",\"offset\":10,\"limit\":20}' --json
  echo '{\"command\":\"ls -la\"}' | pith call bash
  pith call edit '{\"path\":\"a.txt\",\"edits\":[{\"oldText\":\"foo\",\"newText\":\"bar\"}]}'

Exit status: 0 on success, 1 when the tool reports an error, 2 on a usage error.";

const BATCH_EXAMPLES: &str = "\
Every stdin line is one call: {\"id\":ID,\"tool\":NAME,\"args\":{...}}. Calls start as soon as
they are read and run concurrently (mutations of one file run in arrival order); stdout gets
one line per call, in input order: {\"id\":ID,\"content\":[...],\"details\":...,\"isError\":BOOL}.
Writes refuse to overwrite a file this batch has not read.

Examples:
  echo '{\"id\":1,\"tool\":\"read\",\"args\":{\"path\":\"README.md\"}}' | pith batch
  pith batch --cwd ~/project --tools read,grep,find < calls.jsonl
  pith batch --format text < calls.jsonl";

const PROMPT_EXAMPLES: &str = "\
Prints the tools' part of a system prompt (one-line snippets and guidelines), for hosts
that build their own prompt.

Examples:
  pith prompt
  pith prompt --tools read,grep,find,ls";

const TOOLS_EXAMPLES: &str = "\
Examples:
  pith tools
  pith tools --json --tools read,write";

const SANDBOX_EXAMPLES: &str = "\
Examples:
  pith sandbox status
  pith sandbox status --mcp --cwd ~/project
  pith sandbox status --sandbox read-only --deny-network";

const MCP_EXAMPLES: &str = "\
Serves the tools over MCP on stdin/stdout (logs go to stderr). When the client offers
MCP roots, the first root becomes the working directory.

Examples:
  pith mcp --cwd ~/project
  pith mcp --tools read,grep,find,ls --log-level info
  pith mcp --cwd ~/project --root ~/shared-lib --protect .env --sandbox read-only
  claude mcp add pith -- pith mcp --cwd ~/project";

/// pith: the seven coding-agent tools (read, bash, edit, write, grep, find, ls) from the
/// command line and as an MCP server.
#[derive(Debug, Parser)]
#[command(name = "pith", version, after_help = MAIN_EXAMPLES)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,

    /// How much to log on stderr: off, error, warn, info, debug or trace (RUST_LOG, when set,
    /// takes precedence). Example: --log-level info
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t = LogLevel::Warn,
        value_name = "LEVEL",
        hide_possible_values = true
    )]
    pub(crate) log_level: LogLevel,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Call one tool with JSON arguments and print its result.
    #[command(after_help = CALL_EXAMPLES, override_usage = CALL_USAGE)]
    Call(CallArgs),
    /// Run tool calls from stdin (JSON lines) concurrently; print results in input order.
    #[command(after_help = BATCH_EXAMPLES)]
    Batch(BatchArgs),
    /// Show the tool definitions (description, arguments, prompt guidelines).
    #[command(after_help = TOOLS_EXAMPLES)]
    Tools(ToolsArgs),
    /// Print the system-prompt section for the enabled tools.
    #[command(after_help = PROMPT_EXAMPLES)]
    Prompt(PromptArgs),
    /// Serve the tools over MCP (JSON-RPC on stdin/stdout).
    #[command(after_help = MCP_EXAMPLES)]
    Mcp(McpArgs),
    /// List or undo journaled file changes (write, edit, apply_patch).
    #[command(after_help = UNDO_EXAMPLES)]
    Undo(UndoArgs),
    /// Say what the OS sandbox enforces on this kernel.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Serve this machine's file system, processes and search to a remote pith
    /// (`--remote`) over stdin/stdout; see docs/remote.md.
    #[command(after_help = SERVE_EXAMPLES)]
    Serve(ServeArgs),
}

const UNDO_EXAMPLES: &str = "\
Every write, edit and apply_patch is journaled under $XDG_STATE_HOME/pith/journal (by
working directory); an undo is journaled too, so undoing it redoes the change.

Examples:
  pith undo --list --cwd ~/project
  pith undo --cwd ~/project                 # the last group (one batch, one MCP request group)
  pith undo --last 3 --dry-run
  pith undo --call 1f2e3d4c --force
  pith undo --since 10m";

/// `pith undo`.
#[derive(Debug, Args)]
pub(crate) struct UndoArgs {
    #[command(flatten)]
    pub(crate) workspace: WorkspaceArgs,

    /// List the journal (newest first) instead of undoing.
    #[arg(long, conflicts_with_all = ["last", "call", "since", "force", "dry_run"])]
    pub(crate) list: bool,

    /// Undo the last N groups of calls [default: 1].
    #[arg(long, value_name = "N", conflicts_with_all = ["call", "since"])]
    pub(crate) last: Option<u32>,

    /// Undo one call (its id from --list or an undo's output).
    #[arg(long, value_name = "ID", conflicts_with = "since")]
    pub(crate) call: Option<String>,

    /// Undo everything since TIME: 90s, 10m, 2h, 1d, 2026-11-30T14:05:00Z or @UNIX_SECONDS.
    #[arg(long, value_name = "TIME")]
    pub(crate) since: Option<String>,

    /// Show what would be restored, with diffs, and change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Restore files even if they changed since the journaled change.
    #[arg(long)]
    pub(crate) force: bool,

    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

const SERVE_EXAMPLES: &str = "\
pith starts this itself on the far side of --remote; you rarely run it by hand.

Examples:
  pith call ls '{\"path\":\".\"}' --remote 'ssh -T dev@box' --cwd '~/project'
  pith mcp --remote 'docker exec -i app' --cwd /work";

/// `pith serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Speak the remote protocol on stdin/stdout (the only transport).
    #[arg(long, required = true)]
    pub(crate) stdio: bool,
}

/// Where the tools run: this machine, or another one through a transport command.
#[derive(Debug, Args, Default)]
pub(crate) struct RemoteArgs {
    /// Run the tools on another machine, container or pod: pith runs
    /// `PREFIX <far pith> serve --stdio`. Paths, `~` and --cwd are the far side's
    /// (quote `~`). Examples: --remote 'ssh -T dev@box', --remote 'docker exec -i app',
    /// --remote 'kubectl exec -i pod/agent-7 --'
    #[arg(long, value_name = "PREFIX")]
    pub(crate) remote: Option<String>,

    /// The pith executable on the far side [default: ~/.cache/pith/VERSION/pith there,
    /// uploaded from this one when missing]. Example: --remote-pith /usr/local/bin/pith
    #[arg(long, value_name = "PATH", requires = "remote")]
    pub(crate) remote_pith: Option<PathBuf>,

    /// Do not upload this pith to the far side when it has none: fail instead.
    #[arg(long, requires = "remote")]
    pub(crate) no_remote_install: bool,
}

/// `pith sandbox ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum SandboxCommand {
    /// Print exactly what is enforced with these flags on this kernel.
    #[command(after_help = SANDBOX_EXAMPLES)]
    Status(SandboxStatusArgs),
}

/// `pith sandbox status`.
#[derive(Debug, Args)]
pub(crate) struct SandboxStatusArgs {
    /// Show what `pith mcp` would enforce with these flags (its defaults differ).
    #[arg(long)]
    pub(crate) mcp: bool,

    /// Print one JSON object: mode, kernel features, writable and read-only places, and
    /// each guarantee with whether it holds.
    #[arg(long)]
    pub(crate) json: bool,

    #[command(flatten)]
    pub(crate) workspace: WorkspaceArgs,
}

/// Flags every command that runs tools shares. The safety flags (`--root`, `--sandbox`,
/// `--protect`) belong here too, so `call`, `batch` and `mcp` get them alike.
#[derive(Debug, Args)]
pub(crate) struct WorkspaceArgs {
    /// Directory relative paths resolve against and commands run in [default: the current
    /// directory]. Example: --cwd ~/project
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) selection: SelectionArgs,

    #[command(flatten)]
    pub(crate) safety: SafetyArgs,

    /// Keep bash's full-output files when the session ends (`pith mcp` removes its own
    /// by default; `call` and `batch` always keep theirs).
    #[arg(long)]
    pub(crate) keep_output: bool,

    /// Do not journal write, edit and apply_patch changes (they cannot be undone).
    #[arg(long)]
    pub(crate) no_journal: bool,
    /// Let edit and write change a file that changed since this session read it (by
    /// default they refuse and name the changed lines; files never read are not checked).
    #[arg(long)]
    pub(crate) no_stale_check: bool,
    /// Running background jobs (bash with background, yield or tty) a session may hold.
    /// Example: --max-jobs 4
    #[arg(long, value_name = "N", default_value_t = pith_tools::DEFAULT_MAX_JOBS)]
    pub(crate) max_jobs: usize,

    /// Set an environment variable for every command, over pith's defaults
    /// (GIT_TERMINAL_PROMPT=0, GIT_EDITOR=true, PAGER=cat, GIT_PAGER=cat,
    /// DEBIAN_FRONTEND=noninteractive, PIP_NO_INPUT=1, PYTHONUNBUFFERED=1); repeatable.
    /// Example: --env GIT_PAGER=less
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub(crate) env: Vec<String>,
}

/// The safety flags: workspace roots, protected paths and the OS sandbox for bash.
#[derive(Debug, Args)]
pub(crate) struct SafetyArgs {
    /// Confine write and edit (and read, ls, grep, find with --contain-reads) to this
    /// directory; repeatable. Giving one turns containment on (`pith mcp` always contains:
    /// to the cwd, these roots and the client's MCP roots). Example: --root ~/project
    #[arg(long = "root", value_name = "DIR")]
    pub(crate) roots: Vec<PathBuf>,

    /// OS sandbox for bash commands: off, workspace-write (writes only under the roots, the
    /// cwd and temp dirs) or read-only [default: off; for `pith mcp` workspace-write where
    /// Landlock is available]. Example: --sandbox workspace-write
    #[arg(long, value_name = "MODE", value_parser = parse_sandbox_mode)]
    pub(crate) sandbox: Option<SandboxMode>,

    /// A gitignore-style glob (relative to a root) that write and edit may not change;
    /// repeatable. A leading / anchors it to the root, a glob without / matches a name at any
    /// depth, ** matches everything; a pattern that can never match is refused. `.git/` is
    /// always protected, with or without --root. Example: --protect .env --protect '/secrets/**'
    #[arg(long = "protect", value_name = "GLOB")]
    pub(crate) protect: Vec<String>,

    /// Also confine read, ls, grep and find to the roots.
    #[arg(long)]
    pub(crate) contain_reads: bool,

    /// Deny bash commands new IPv4/IPv6 sockets (seccomp) and TCP bind/connect (Landlock).
    /// Example: --deny-network
    #[arg(long)]
    pub(crate) deny_network: bool,

    /// Let sandboxed commands also write a tool's cache: cargo, npm, pip, go, cache (all of
    /// ~/.cache), or an absolute directory; repeatable. Example: --allow-write cargo
    #[arg(long = "allow-write", value_name = "PRESET|DIR")]
    pub(crate) allow_write: Vec<String>,

    /// Where the kernel cannot enforce the requested sandbox, run commands without it
    /// instead of refusing them.
    #[arg(long)]
    pub(crate) allow_unsandboxed: bool,
}

fn parse_sandbox_mode(text: &str) -> Result<SandboxMode, String> {
    text.parse()
}

/// `--tools`.
#[derive(Debug, Args)]
pub(crate) struct SelectionArgs {
    /// Only these tools, comma-separated [default: the seven; apply_patch and undo are on
    /// only when named]. Example: --tools read,grep,find,ls or --tools read,edit,apply_patch,undo
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub(crate) tools: Option<Vec<String>>,
}

/// `pith call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool to call: read, bash, edit, write, grep, find or ls.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: String,

    /// The arguments as a JSON object; read from stdin when omitted or `-`.
    /// Example: '{"path":"src/lib.rs"}'
    #[arg(value_name = "JSON")]
    pub(crate) args: Option<String>,

    /// Print one JSON object {"content":[...],"details":...,"isError":...} instead of text.
    #[arg(long)]
    pub(crate) json: bool,

    /// Colour the text output: auto (on a terminal, unless NO_COLOR is set), always or
    /// never. Example: --color never
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub(crate) color: ColorChoice,

    #[command(flatten)]
    pub(crate) workspace: WorkspaceArgs,

    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
}

/// The usage line of `pith call`, the same in its errors and in --help.
const CALL_USAGE: &str = "pith call [OPTIONS] <TOOL> [JSON]";

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// `pith batch --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum BatchFormat {
    /// One JSON object per line.
    Json,
    /// Each result's text under a `== ID TOOL ==` header.
    Text,
}

/// `pith prompt`.
#[derive(Debug, Args)]
pub(crate) struct PromptArgs {
    #[command(flatten)]
    pub(crate) selection: SelectionArgs,
}

/// `pith batch`.
#[derive(Debug, Args)]
pub(crate) struct BatchArgs {
    /// How results are printed, in input order: json (one object per line) or text (each
    /// result's text under a header). Example: --format text
    #[arg(long, value_enum, default_value_t = BatchFormat::Json, value_name = "FORMAT")]
    pub(crate) format: BatchFormat,

    #[command(flatten)]
    pub(crate) workspace: WorkspaceArgs,

    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
}

/// `pith tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Print the definitions as a JSON array (name, title, description, inputSchema,
    /// promptSnippet, promptGuidelines, annotations).
    #[arg(long)]
    pub(crate) json: bool,

    #[command(flatten)]
    pub(crate) selection: SelectionArgs,
}

/// `pith mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    pub(crate) workspace: WorkspaceArgs,

    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
}

/// `--log-level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogLevel {
    /// Nothing.
    Off,
    /// Errors only.
    Error,
    /// Errors and warnings.
    Warn,
    /// Also what the server does.
    Info,
    /// Also protocol details.
    Debug,
    /// Everything.
    Trace,
}

impl LogLevel {
    /// The directive for `tracing_subscriber::EnvFilter`.
    pub(crate) fn directive(self) -> &'static str {
        match self {
            LogLevel::Off => "off",
            LogLevel::Error => "error",
            // rmcp warns about every error it answers (an unknown method, bad params):
            // those are the client's mistakes, logged by pith at debug.
            LogLevel::Warn => "warn,rmcp::service=error",
            LogLevel::Info => "info,rmcp::service=error",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}
