//! What a tool is: a definition and an `execute`.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use pith_env::Env;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::policy::Access;
use crate::queue::{MutationQueue, Ticket};
use crate::session::Session;
use crate::toolset::ToolConfig;

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

/// Typed details as JSON (they are plain data: serializing cannot fail).
pub(crate) fn details_value<T: Serialize>(details: &T) -> Value {
    serde_json::to_value(details).unwrap_or(Value::Null)
}

/// All text parts of `content` joined with newlines.
fn joined_text(content: &[Content]) -> String {
    let texts: Vec<&str> = content.iter().filter_map(Content::as_text).collect();
    texts.join("\n")
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
        joined_text(&self.content)
    }
}

/// What a successful call produced: `content` for the model, `details` for a
/// UI, `structured` for MCP's `structuredContent`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    /// What the model sees.
    pub content: Vec<Content>,
    /// Structured data for a user interface; never shown to the model.
    pub details: Option<Value>,
    /// A small typed result matching [`ToolDefinition::output_schema`].
    pub structured: Option<Value>,
}

impl ToolOutput {
    /// A text output.
    pub fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: vec![Content::text(text)],
            details: None,
            structured: None,
        }
    }

    /// All text parts joined with newlines.
    pub fn text_content(&self) -> String {
        joined_text(&self.content)
    }

    /// Sets the details from a typed [`crate::details`] struct.
    pub fn with_details_of<T: Serialize>(self, details: &T) -> ToolOutput {
        self.with_details(details_value(details))
    }

    /// Sets the details.
    pub fn with_details(mut self, details: Value) -> ToolOutput {
        self.details = Some(details);
        self
    }

    /// Sets the structured result.
    pub fn with_structured(mut self, structured: Value) -> ToolOutput {
        self.structured = Some(structured);
        self
    }
}

impl From<ToolOutput> for ToolResult {
    fn from(output: ToolOutput) -> ToolResult {
        ToolResult {
            content: output.content,
            details: output.details,
            is_error: false,
            structured: output.structured,
        }
    }
}

/// The text every tool reports for a cancelled call.
pub(crate) const ABORTED: &str = crate::messages::pipeline::ABORTED;

/// What kind of failure a [`ToolError`] is: the first four are for the model
/// to act on (fix the call, pick another path, ask the user); [`Internal`]
/// is a fault of pith or its environment that no change of arguments fixes.
///
/// [`Internal`]: ErrorKind::Internal
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The arguments do not match the schema, or a tool's own checks of them.
    InvalidArguments,
    /// A before-hook or the workspace policy refused the call.
    Refused,
    /// The call was cancelled.
    Aborted,
    /// The call ran and failed for a reason the model can act on: not found,
    /// not unique, not a directory, a command's non-zero exit, ...
    Failed,
    /// An internal failure: an I/O fault the model cannot fix, a panic caught
    /// at the boundary. The source error is kept ([`std::error::Error::source`]).
    Internal,
}

/// A failed call: a message for the model (one to three lines: what was
/// wrong, what to do next), its kind, and details a UI may still want
/// (unlike Pi, errors keep their details).
#[derive(Clone, Debug)]
pub struct ToolError {
    /// What kind of failure this is.
    pub kind: ErrorKind,
    /// One to three lines saying what was wrong and what to do next.
    pub message: String,
    /// Details, structured result and source, boxed: most errors have none.
    extra: Option<Box<Extra>>,
}

/// The rarely present parts of a [`ToolError`].
#[derive(Clone, Debug, Default)]
struct Extra {
    details: Option<Value>,
    structured: Option<Value>,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl ToolError {
    fn of_kind(kind: ErrorKind, message: impl Into<String>) -> ToolError {
        ToolError {
            kind,
            message: message.into(),
            extra: None,
        }
    }

    fn extra(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// A failure the model can act on ([`ErrorKind::Failed`]).
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError::of_kind(ErrorKind::Failed, message)
    }

    /// Arguments that do not fit the tool ([`ErrorKind::InvalidArguments`]).
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::of_kind(ErrorKind::InvalidArguments, message)
    }

    /// A call a hook or the workspace policy refused ([`ErrorKind::Refused`]).
    pub fn refused(message: impl Into<String>) -> ToolError {
        ToolError::of_kind(ErrorKind::Refused, message)
    }

    /// A cancelled call ([`ErrorKind::Aborted`]), with the one text every tool uses.
    pub fn aborted() -> ToolError {
        ToolError::of_kind(ErrorKind::Aborted, ABORTED)
    }

    /// `Err(aborted())` once `cancel` is cancelled: tools call it between steps.
    pub fn check_cancelled(cancel: &CancellationToken) -> Result<(), ToolError> {
        if cancel.is_cancelled() {
            Err(ToolError::aborted())
        } else {
            Ok(())
        }
    }

    /// An internal failure ([`ErrorKind::Internal`]) keeping its source error.
    pub fn internal(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> ToolError {
        let mut error = ToolError::of_kind(ErrorKind::Internal, message);
        error.extra().source = Some(Arc::new(source));
        error
    }

    /// Whether the model can act on this failure (every kind but [`ErrorKind::Internal`]).
    pub fn is_model_fixable(&self) -> bool {
        self.kind != ErrorKind::Internal
    }

    /// Details for a UI.
    pub fn details(&self) -> Option<&Value> {
        self.extra.as_ref()?.details.as_ref()
    }

    /// A structured result, for failures that still have one (bash's exit code).
    pub fn structured(&self) -> Option<&Value> {
        self.extra.as_ref()?.structured.as_ref()
    }

    /// Sets the details from a typed [`crate::details`] struct.
    pub fn with_details_of<T: Serialize>(self, details: &T) -> ToolError {
        self.with_details(details_value(details))
    }

    /// Sets the details.
    pub fn with_details(mut self, details: Value) -> ToolError {
        self.extra().details = Some(details);
        self
    }

    /// Sets the structured result.
    pub fn with_structured(mut self, structured: Value) -> ToolError {
        self.extra().structured = Some(structured);
        self
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {
    /// The underlying error of an [`ErrorKind::Internal`] failure.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let source = self.extra.as_ref()?.source.as_ref()?;
        Some(&**source as &(dyn std::error::Error + 'static))
    }
}

impl PartialEq for ToolError {
    /// Kind, message, details and structured result; the source error is not compared.
    fn eq(&self, other: &ToolError) -> bool {
        self.kind == other.kind
            && self.message == other.message
            && self.details() == other.details()
            && self.structured() == other.structured()
    }
}

impl From<ToolError> for ToolResult {
    fn from(error: ToolError) -> ToolResult {
        let extra = error.extra.map(|extra| *extra).unwrap_or_default();
        ToolResult {
            content: vec![Content::text(error.message)],
            details: extra.details,
            is_error: true,
            structured: extra.structured,
        }
    }
}

impl From<Result<ToolOutput, ToolError>> for ToolResult {
    fn from(result: Result<ToolOutput, ToolError>) -> ToolResult {
        match result {
            Ok(output) => output.into(),
            Err(error) => error.into(),
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
    pub(crate) read_search: Arc<dyn pith_env::Search>,
    /// See [`ToolContext::target`].
    pub(crate) target: Option<PathBuf>,
    /// For a [`QueueUse::Files`] call with hooks: the arguments that ran,
    /// when a per-file before-hook rewrote them ([`ToolContext::ran_with`]).
    pub(crate) ran: Option<Arc<std::sync::Mutex<Option<Value>>>>,
    /// See [`ToolContext::wants_structured`].
    pub(crate) skip_structured: bool,
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
        taken.unwrap_or_else(|| self.queue.ticket_on(&self.env.fs))
    }

    /// Whether the caller uses the structured result
    /// ([`ToolOutput::with_structured`]); when not
    /// ([`CallOptions::skip_structured`]), a tool need not build it.
    pub fn wants_structured(&self) -> bool {
        !self.skip_structured
    }

    /// Resolves a path argument against the working directory (see [`crate::resolve_path`]).
    pub fn resolve(&self, raw: &str) -> Result<std::path::PathBuf, ToolError> {
        let home = crate::paths::home_for(raw, &*self.env.fs);
        crate::paths::resolve_path(raw, &self.cwd, home.as_deref())
    }

    /// The resolved path of the file a call changes: [`target`](Self::target)
    /// inside the file's queue (resolved once, before it), else `raw` resolved.
    pub fn resolve_target(&self, raw: &str) -> Result<PathBuf, ToolError> {
        match &self.target {
            Some(path) => Ok(path.clone()),
            None => self.resolve(raw),
        }
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
            .is_some_and(crate::policy::WorkspacePolicy::contains_reads);
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

    /// The search grep and find use: confined beneath the roots when reads
    /// are contained (the start directory or file is opened by handle
    /// beneath them at the moment of the search), the environment's otherwise.
    pub fn read_search(&self) -> &Arc<dyn pith_env::Search> {
        &self.read_search
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
                ToolError::refused(if reason.is_empty() {
                    crate::messages::pipeline::BLOCKED.to_owned()
                } else {
                    reason
                })
            })
    }

    /// For a [`QueueUse::Files`] tool whose before-hooks rewrote part of the
    /// call: the whole arguments that ran, which the after-hooks then see
    /// instead of the arguments the call came with.
    pub fn ran_with(&self, args: Value) {
        if let Some(ran) = &self.ran {
            *ran.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(args);
        }
    }

    /// For a tool whose calls change one file ([`QueueUse::Target`]): the
    /// resolved path of that file, whose turn in the mutation queue this call
    /// holds while [`Tool::execute`] runs.
    pub fn target(&self) -> Option<&std::path::Path> {
        self.target.as_deref()
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
    /// The caller has no use for [`ToolResult::structured`] (`pith batch` and
    /// `pith call` print the content and details only): a tool may leave it
    /// out and spare building it ([`ToolContext::wants_structured`]). The
    /// default builds it, as the MCP server needs.
    pub skip_structured: bool,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("cancelled", &self.cancel.is_cancelled())
            .finish()
    }
}

/// How a tool's calls use the file mutation queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueUse {
    /// Not at all (bash, grep, find, ls).
    None,
    /// The call takes its place in arrival order when it arrives and locks
    /// the file itself, when it knows which (read: it waits for the writes
    /// that arrived before it).
    Turn,
    /// Each call changes the one file [`Tool::target`] names (write, edit):
    /// the before-hooks and the workspace write check run inside that file's
    /// queue, together with [`Tool::execute`].
    Target,
    /// Each call changes several files, known once its arguments are read
    /// (apply_patch) or the journal is (undo): it takes its place on arrival like [`QueueUse::Turn`],
    /// and [`Tool::execute`] locks the files and runs the before-hooks itself,
    /// once per file inside the files' turns ([`ToolContext::authorize`]),
    /// reporting a rewrite with [`ToolContext::ran_with`]. The pipeline does
    /// not run the before-hooks for it.
    Files,
}

/// A tool: a definition, typed arguments and an `execute`.
///
/// # The contract
///
/// A [`Session`] runs every call through one pipeline, so that a tool only
/// writes its own logic:
///
/// 1. [`repair`](Tool::repair) fixes what models commonly get wrong;
/// 2. for a tool that is not [`QueueUse::Target`] or [`QueueUse::Files`],
///    the before-hooks approve, block or rewrite the arguments;
/// 3. [`precheck`](Tool::precheck) looks at the raw arguments, then they are
///    coerced and validated against the definition's schema
///    ([`crate::parse_args`]) into [`Tool::Args`], and
///    [`validate`](Tool::validate) runs the tool's own checks; any failure is
///    an [`ErrorKind::InvalidArguments`] error the model sees;
/// 4. a cancelled call stops here with [`ToolError::aborted`];
/// 5. for a [`QueueUse::Target`] tool, the path [`target`](Tool::target)
///    names is resolved once and the call waits for that file's turn; inside
///    it the before-hooks run (a rewrite is parsed again and may not change
///    the file) and the workspace write check; a [`QueueUse::Files`] tool
///    runs them itself, per file, inside the files' turns;
/// 6. [`execute`](Tool::execute) runs;
/// 7. the after-hooks see the result and the arguments that actually ran.
///
/// So `execute` may assume: its arguments passed the schema and `validate`,
/// the hooks approved them, the call was not cancelled before it started, and
/// for a `Target` tool the call holds the file's turn and
/// [`ToolContext::target`] is the resolved path. It must: go through
/// [`ToolContext::read_fs`] / [`ToolContext::write_fs`] for file access (they
/// enforce the workspace), check `cancel` between steps
/// ([`ToolError::check_cancelled`]) and never stop half-way through a change,
/// and return errors the model can act on (one to three lines) or
/// [`ToolError::internal`] for faults it cannot fix.
///
/// `execute` is the raw entry point: it skips the pipeline. Only a
/// [`Session`] can build the [`ToolContext`] it needs, so a host runs tools
/// through [`Session::call`] (and registers its own with
/// [`ToolSetBuilder::tool`](crate::toolset::ToolSetBuilder::tool)).
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The arguments, deserialized after validation against the definition's schema.
    type Args: DeserializeOwned + Send + 'static;

    /// The definition (its `input_schema` is what arguments are validated against).
    fn definition(&self) -> &ToolDefinition;

    /// Repairs what models commonly get wrong before validation (default: nothing).
    fn repair(&self, args: Value) -> Value {
        args
    }

    /// Checks on the raw arguments whose message must win over the schema's
    /// (default: none).
    fn precheck(&self, _args: &Value) -> Result<(), ToolError> {
        Ok(())
    }

    /// The tool's own checks of validated arguments (default: none).
    fn validate(&self, _args: &Self::Args) -> Result<(), ToolError> {
        Ok(())
    }

    /// How calls use the file mutation queue (default: [`QueueUse::None`]).
    fn queue_use(&self) -> QueueUse {
        QueueUse::None
    }

    /// For a [`QueueUse::Target`] tool: the path argument naming the file the
    /// call changes (default: none; the call then runs outside any queue).
    fn target<'a>(&self, _args: &'a Self::Args) -> Option<&'a str> {
        None
    }

    /// Runs the tool on validated, approved arguments (see the contract above).
    async fn execute(
        &self,
        args: Self::Args,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError>;
}
