//! What a tool is: a definition and an `execute`.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use pith_env::Env;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{Access, MutationQueue, Session, Ticket, ToolConfig};

/// One part of a result for the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 of the image bytes.
        data: String,
        /// `image/png`, `image/jpeg`, ...
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text { text: text.into() }
    }

    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            Content::Image { .. } => None,
        }
    }
}

/// The result of a tool call: `content` for the model, `details` for a UI.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// What the model sees.
    pub content: Vec<Content>,
    /// Structured data for a user interface (diff, truncation, ...); never shown to the model.
    pub details: Option<Value>,
    /// Whether the call failed.
    pub is_error: bool,
    /// A small typed result matching the tool's [`ToolDefinition::output_schema`] (MCP's
    /// `structuredContent`); not part of the JSON a `pith call --json` prints.
    #[serde(skip)]
    pub structured: Option<Value>,
}

impl ToolResult {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: vec![Content::text(text)],
            details: None,
            is_error: false,
            structured: None,
        }
    }

    /// A failed result with a message for the model.
    pub fn error(message: impl Into<String>) -> ToolResult {
        ToolResult {
            content: vec![Content::text(message)],
            details: None,
            is_error: true,
            structured: None,
        }
    }

    /// Sets the details.
    pub fn with_details(mut self, details: Value) -> ToolResult {
        self.details = Some(details);
        self
    }

    /// Sets the structured result.
    pub fn with_structured(mut self, structured: Value) -> ToolResult {
        self.structured = Some(structured);
        self
    }

    /// All text parts joined with newlines.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }
}

/// A failure a tool reports to the model: a correctable message, and details
/// that a UI may still want (unlike Pi, errors keep their details).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// One to three lines saying what was wrong and what to do next.
    pub message: String,
    /// Details for a UI.
    pub details: Option<Value>,
}

impl ToolError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError {
            message: message.into(),
            details: None,
        }
    }

    /// Sets the details.
    pub fn with_details(mut self, details: Value) -> ToolError {
        self.details = Some(details);
        self
    }
}

impl From<ToolError> for ToolResult {
    fn from(error: ToolError) -> ToolResult {
        ToolResult {
            content: vec![Content::text(error.message)],
            details: error.details,
            is_error: true,
            structured: None,
        }
    }
}

/// A partial result streamed while a tool runs (bash's current output tail).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolUpdate {
    /// The current partial content.
    pub content: Vec<Content>,
    /// Partial details.
    pub details: Option<Value>,
}

/// Receives [`ToolUpdate`]s.
pub type UpdateFn = Arc<dyn Fn(ToolUpdate) + Send + Sync>;

/// Hints for clients (MCP tool annotations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolAnnotations {
    /// The tool does not modify its environment.
    pub read_only: bool,
    /// The tool may perform destructive updates.
    pub destructive: bool,
    /// Calling it again with the same arguments has no additional effect.
    pub idempotent: bool,
    /// The tool may reach beyond the workspace (bash: the network), unless the
    /// configuration denies it.
    pub open_world: bool,
}

/// A tool's definition: what a model and a client are told about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// The tool's name (`read`, ...).
    pub name: &'static str,
    /// A human-readable title.
    pub title: &'static str,
    /// The description the model reads (at most 330 characters, stating its limits).
    pub description: &'static str,
    /// JSON Schema of the parameters.
    pub input_schema: Value,
    /// JSON Schema of [`ToolResult::structured`].
    pub output_schema: Value,
    /// One line for a system prompt's tool list.
    pub prompt_snippet: &'static str,
    /// Guidelines for a system prompt.
    pub prompt_guidelines: &'static [&'static str],
    /// Client hints.
    pub annotations: ToolAnnotations,
}

/// Everything a tool call can use.
#[derive(Clone)]
pub struct ToolContext {
    /// The environment (file system, processes, search).
    pub env: Env,
    /// The working directory relative paths resolve against.
    pub cwd: PathBuf,
    /// The configuration of the tool set.
    pub config: Arc<ToolConfig>,
    /// The session making the call.
    pub session: Session,
    /// The file mutation queue shared by every session of the tool set.
    pub queue: Arc<MutationQueue>,
    /// Where streaming updates go, if anywhere.
    pub updates: Option<UpdateFn>,
    /// The undo group this call's changes are journaled in.
    pub group: String,
    /// The call's place in arrival order, until its queue step takes it.
    pub(crate) ticket: Arc<std::sync::Mutex<Option<Ticket>>>,
    pub(crate) read_fs: Arc<dyn pith_env::FileSystem>,
    pub(crate) write_fs: Arc<dyn pith_env::FileSystem>,
}

impl ToolContext {
    /// The call's place in arrival order for its queue step (a new place when
    /// the call has none or already used it).
    pub(crate) fn ticket(&self) -> Ticket {
        let taken = self
            .ticket
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        taken.unwrap_or_else(|| self.queue.ticket())
    }

    /// Resolves a path argument against the working directory (see [`crate::resolve_path`]).
    pub fn resolve(&self, raw: &str) -> Result<std::path::PathBuf, ToolError> {
        crate::resolve_path(raw, &self.cwd, self.env.fs.home_dir().as_deref())
    }

    /// Resolves a path argument and checks it against the workspace roots.
    pub async fn resolve_checked(
        &self,
        raw: &str,
        access: Access,
    ) -> Result<std::path::PathBuf, ToolError> {
        let path = self.resolve(raw)?;
        self.check_path(&path, access).await?;
        Ok(path)
    }

    /// Checks `path` (absolute) against the workspace roots and protected
    /// paths, when they are configured (`.git/` is protected from writes
    /// always). This check explains a refusal; the confined file-system views
    /// ([`read_fs`](Self::read_fs), [`write_fs`](Self::write_fs)) enforce it
    /// again at the moment of the I/O, by handle.
    pub async fn check_path(
        &self,
        path: &std::path::Path,
        access: Access,
    ) -> Result<(), ToolError> {
        // The session may always read back the output files its commands created.
        if access == Access::Read && self.session.created_output(path) {
            return Ok(());
        }
        match &self.config.workspace {
            Some(policy) => policy.check(self.env.fs.as_ref(), path, access).await,
            None if access == Access::Write => {
                // The write view refuses `.git/` on the resolved path in any
                // case; this gives the clear message in the common case.
                let real = crate::policy::real_target(self.env.fs.as_ref(), path).await;
                match real
                    .ok()
                    .and_then(|real| crate::policy::git_reason(path, &real))
                {
                    Some(reason) => Err(ToolError::new(reason)),
                    None => Ok(()),
                }
            }
            None => Ok(()),
        }
    }

    /// Resolves and checks the path grep or find searches. A special file is
    /// refused at once (naming its kind); with contained reads the root is
    /// resolved by handle beneath the roots and the search starts from that
    /// real path.
    pub(crate) async fn search_root(&self, raw: &str) -> Result<std::path::PathBuf, ToolError> {
        let root = self.resolve_checked(raw, Access::Read).await?;
        let fs = self.read_fs();
        if let Ok(metadata) = fs.metadata(&root).await
            && !metadata.is_file()
            && !metadata.is_dir()
            && let Err(error) = fs.read_range(&root, 0, 0).await
        {
            return Err(ToolError::new(crate::paths::describe_fs_error(&error)));
        }
        let contained = self
            .config
            .workspace
            .as_ref()
            .is_some_and(crate::WorkspacePolicy::contains_reads);
        if !contained {
            return Ok(root);
        }
        match fs.canonicalize(&root).await {
            Ok(real) => Ok(real),
            Err(error) if error.kind == pith_env::FsErrorKind::NotFound => Ok(root),
            Err(error) => Err(ToolError::new(crate::paths::describe_fs_error(&error))),
        }
    }

    /// The file-system view read, ls, grep and find use: confined beneath
    /// the roots when reads are contained, the environment's otherwise.
    pub fn read_fs(&self) -> &Arc<dyn pith_env::FileSystem> {
        &self.read_fs
    }

    /// The view a read of `path` goes through: the session's own full-output
    /// files (which it created, possibly outside the roots) unconfined, everything
    /// else through [`read_fs`](Self::read_fs).
    pub fn read_fs_for(&self, path: &std::path::Path) -> &Arc<dyn pith_env::FileSystem> {
        if self.session.created_output(path) {
            &self.env.fs
        } else {
            &self.read_fs
        }
    }

    /// The file-system view write and edit use: confined beneath the roots
    /// (or `/` without roots) with `.git/` and the protected globs refused on
    /// the resolved path.
    pub fn write_fs(&self) -> &Arc<dyn pith_env::FileSystem> {
        &self.write_fs
    }

    /// Runs the before-hooks for a call of `tool`: the arguments to run
    /// with, or an error carrying the block reason.
    pub async fn authorize(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        self.config
            .hooks
            .before(tool, args, &self.cwd)
            .await
            .map_err(|reason| {
                ToolError::new(if reason.is_empty() {
                    "Tool execution was blocked".to_owned()
                } else {
                    reason
                })
            })
    }

    /// For write and edit, inside the file's mutation queue: runs the
    /// before-hooks on `args` and the workspace check on `path`. Returns the
    /// rewritten arguments when a hook rewrote them (`None`: unchanged).
    pub(crate) async fn authorize_mutation(
        &self,
        tool: &str,
        args: &Value,
        path: &std::path::Path,
    ) -> Result<Option<Value>, ToolError> {
        let mut rewritten = None;
        if !self.config.hooks.is_empty() {
            let approved = self.authorize(tool, args.clone()).await?;
            if &approved != args {
                rewritten = Some(approved);
            }
        }
        self.check_path(path, Access::Write).await?;
        Ok(rewritten)
    }

    /// The error for a hook that moved a write or edit to another file.
    pub(crate) fn moved_by_hook(tool: &str) -> ToolError {
        ToolError::new(format!(
            "A before_tool_call hook changed the path of this {tool} call; hooks may rewrite the arguments of write and edit but not their path (the call is approved inside that file's queue). Block the call instead."
        ))
    }

    /// Sends an update if someone listens.
    pub fn update(&self, update: ToolUpdate) {
        if let Some(updates) = &self.updates {
            updates(update);
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

/// Per-call options.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Cancels the call (the tool stops promptly; bash kills its process tree).
    pub cancel: CancellationToken,
    /// Receives streaming updates.
    pub updates: Option<UpdateFn>,
    /// The undo group of the call (default: the session's id, so one `pith
    /// batch` is one group; the MCP server gives each request group its own).
    pub group: Option<String>,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("cancelled", &self.cancel.is_cancelled())
            .finish()
    }
}

/// A tool.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The definition.
    fn definition(&self) -> &ToolDefinition;

    /// Repairs what models commonly get wrong before validation (default: nothing).
    fn repair(&self, args: Value) -> Value {
        args
    }

    /// Whether the tool runs the before-hooks itself, inside the file's
    /// mutation queue (write and edit), instead of [`Session::call`] running
    /// them first.
    fn authorizes_in_queue(&self) -> bool {
        false
    }

    /// Whether the tool takes a turn in the file mutation queue (read, write,
    /// edit): such a call takes its place in arrival order when it arrives.
    fn takes_queue_turn(&self) -> bool {
        false
    }

    /// Runs the tool. Arguments are validated inside (see [`crate::parse_args`]).
    async fn execute(
        &self,
        args: Value,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> ToolResult;
}
