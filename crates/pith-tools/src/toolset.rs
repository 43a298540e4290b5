//! [`ToolSet`]: the tools, their configuration, the environment and the mutation queue.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pith_env::{Env, FileSystem, SandboxPolicy};

use crate::call::RegisteredTool;
use crate::hooks::Hooks;
use crate::journal::Journal;
use crate::policy::{Access, WorkspacePolicy};
use crate::queue::MutationQueue;
use crate::session::{OverwritePolicy, Session};
use crate::tool::{Tool, ToolDefinition};
use crate::tools::{self, BashConfig, ReadConfig};

/// Configuration shared by every call of a tool set.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolConfig {
    /// What `write` does with an existing file the session has not read.
    pub overwrite_policy: OverwritePolicy,
    /// Options of the `read` tool.
    pub read: ReadConfig,
    /// Options of the `bash` tool.
    pub bash: BashConfig,
    /// Hooks around every call.
    pub hooks: Hooks,
    /// Workspace roots and protected paths (off when `None`).
    pub workspace: Option<WorkspacePolicy>,
    /// The OS sandbox bash commands run in.
    pub sandbox: SandboxPolicy,
    /// The undo journal write, edit and apply_patch record into (off when `None`).
    pub journal: Option<Arc<Journal>>,
    /// The staleness check (default on): `edit`, and `write` over an existing file,
    /// refuse a file the session has seen whose content changed since, naming the
    /// changed lines. Files the session never saw are not checked.
    pub stale_check: bool,
}

impl Default for ToolConfig {
    fn default() -> ToolConfig {
        ToolConfig {
            overwrite_policy: OverwritePolicy::RequireRead,
            read: ReadConfig::default(),
            bash: BashConfig::default(),
            hooks: Hooks::default(),
            workspace: None,
            sandbox: SandboxPolicy::off(),
            journal: None,
            stale_check: true,
        }
    }
}

pub(crate) struct Inner {
    pub(crate) env: Env,
    pub(crate) cwd: PathBuf,
    pub(crate) config: Arc<ToolConfig>,
    pub(crate) queue: Arc<MutationQueue>,
    pub(crate) tools: Vec<Arc<dyn RegisteredTool>>,
    /// The file-system view read, ls (and the search roots) go through.
    pub(crate) read_fs: Arc<dyn FileSystem>,
    /// The file-system view write and edit go through.
    pub(crate) write_fs: Arc<dyn FileSystem>,
    /// The search grep and find go through: confined beneath the roots (the
    /// start opened by handle there) when reads are contained.
    pub(crate) read_search: Arc<dyn pith_env::Search>,
}

/// The tools over one environment. Cheap to clone; clones share the mutation queue.
#[derive(Clone)]
pub struct ToolSet {
    pub(crate) inner: Arc<Inner>,
}

impl ToolSet {
    /// Starts building a tool set over `env`.
    pub fn builder(env: Env) -> ToolSetBuilder {
        ToolSetBuilder {
            env,
            cwd: PathBuf::from("/"),
            config: ToolConfig::default(),
            names: None,
            select_added: false,
            queue: None,
            extra: Vec::new(),
        }
    }

    /// The definitions of the tools in this set, in the canonical order.
    pub fn definitions(&self) -> Vec<&ToolDefinition> {
        self.inner
            .tools
            .iter()
            .map(|tool| tool.definition())
            .collect()
    }

    /// The tool `name`'s argument repair alone, the pipeline's first step, which
    /// runs nothing (`None` for an unknown tool): for fuzzing and for hosts that
    /// want to show what a call will be validated as.
    pub fn repair_args(&self, name: &str, args: serde_json::Value) -> Option<serde_json::Value> {
        self.tool(name).map(|tool| tool.repair_args(args))
    }

    /// The tool called `name`.
    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<dyn RegisteredTool>> {
        self.inner.tools.iter().find(|tool| tool.name() == name)
    }

    /// A new session (one conversation, batch or MCP connection).
    pub fn session(&self) -> Session {
        Session::new(self.clone())
    }

    /// The environment.
    pub fn env(&self) -> &Env {
        &self.inner.env
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    /// The configuration.
    pub fn config(&self) -> &Arc<ToolConfig> {
        &self.inner.config
    }

    /// The mutation queue.
    pub fn queue(&self) -> &Arc<MutationQueue> {
        &self.inner.queue
    }
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.definitions().iter().map(|d| d.name).collect();
        f.debug_struct("ToolSet")
            .field("cwd", &self.inner.cwd)
            .field("tools", &names)
            .finish()
    }
}

/// Builds a [`ToolSet`].
pub struct ToolSetBuilder {
    env: Env,
    cwd: PathBuf,
    config: ToolConfig,
    names: Option<Vec<String>>,
    /// Whether `names` selects among the host's tools too ([`ToolSetBuilder::select`]).
    select_added: bool,
    queue: Option<Arc<MutationQueue>>,
    /// The host's own tools, in the order they were added.
    extra: Vec<Arc<dyn RegisteredTool>>,
}

impl fmt::Debug for ToolSetBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let extra: Vec<&str> = self.extra.iter().map(|t| t.name()).collect();
        f.debug_struct("ToolSetBuilder")
            .field("cwd", &self.cwd)
            .field("names", &self.names)
            .field("extra", &extra)
            .finish_non_exhaustive()
    }
}

impl ToolSetBuilder {
    /// The working directory (absolute).
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> ToolSetBuilder {
        self.cwd = cwd.into();
        self
    }

    /// The configuration.
    pub fn config(mut self, config: ToolConfig) -> ToolSetBuilder {
        self.config = config;
        self
    }

    /// What `write` does with an existing file the session has not read.
    pub fn overwrite_policy(mut self, policy: OverwritePolicy) -> ToolSetBuilder {
        self.config.overwrite_policy = policy;
        self
    }

    /// Turns the staleness check on or off (see [`ToolConfig::stale_check`]).
    pub fn stale_check(mut self, on: bool) -> ToolSetBuilder {
        self.config.stale_check = on;
        self
    }

    /// Only these tools (unknown names are ignored; see [`crate::tools::TOOL_NAMES`]
    /// and [`crate::tools::OPTIONAL_TOOL_NAMES`], which are on only when named here).
    pub fn tools<S: AsRef<str>>(mut self, names: &[S]) -> ToolSetBuilder {
        self.names = Some(names.iter().map(|name| name.as_ref().to_owned()).collect());
        self
    }

    /// Only these tools, built-in and host's own ([`tool`](Self::tool)) alike:
    /// unlike [`tools`](Self::tools), a host's tool not named here is left out
    /// (unknown names are ignored). For a front end whose `--tools` names both.
    pub fn select<S: AsRef<str>>(mut self, names: &[S]) -> ToolSetBuilder {
        self.select_added = true;
        self.tools(names)
    }

    /// Adds a tool of the host's own, after the built-in ones. Its calls run
    /// through the same pipeline (repair, validation, hooks, the file's queue
    /// when it names one; see [`Tool`]) and it is listed with the others. A
    /// tool with a built-in tool's name replaces that tool; [`tools`](Self::tools)
    /// selects among the built-in tools only.
    pub fn tool<T: Tool>(mut self, tool: T) -> ToolSetBuilder {
        self.extra.push(Arc::new(tool));
        self
    }

    /// Shares a mutation queue with other tool sets in this process.
    pub fn queue(mut self, queue: Arc<MutationQueue>) -> ToolSetBuilder {
        self.queue = Some(queue);
        self
    }

    /// Builds the tool set.
    pub fn build(self) -> ToolSet {
        let mut all = tools::all();
        match &self.names {
            Some(names) => {
                all.retain(|tool| names.iter().any(|name| name == tool.name()));
            }
            None => all.retain(|tool| tools::TOOL_NAMES.contains(&tool.name())),
        }
        for tool in self.extra {
            if self.select_added
                && let Some(names) = &self.names
                && !names.iter().any(|name| name == tool.name())
            {
                continue;
            }
            all.retain(|builtin| builtin.name() != tool.name());
            all.push(tool);
        }
        // The roots are opened once, here: every later file operation
        // resolves beneath these handles (see `pith_env::FileSystem::confine`).
        let fs = self.env.fs.clone();
        let read_search = match self
            .config
            .workspace
            .as_ref()
            .and_then(|policy| policy.confinement(Access::Read))
        {
            Some(confinement) => self.env.search.clone().confine(confinement),
            None => self.env.search.clone(),
        };
        let (read_fs, write_fs) = match &self.config.workspace {
            Some(policy) => (
                match policy.confinement(Access::Read) {
                    Some(confinement) => fs.clone().confine(confinement),
                    None => fs.clone(),
                },
                match policy.confinement(Access::Write) {
                    Some(confinement) => fs.clone().confine(confinement),
                    None => fs.clone(),
                },
            ),
            None => (
                fs.clone(),
                fs.clone()
                    .confine(crate::policy::unrooted_write_confinement()),
            ),
        };
        ToolSet {
            inner: Arc::new(Inner {
                env: self.env,
                cwd: self.cwd,
                config: Arc::new(self.config),
                queue: self.queue.unwrap_or_default(),
                tools: all,
                read_fs,
                write_fs,
                read_search,
            }),
        }
    }
}
