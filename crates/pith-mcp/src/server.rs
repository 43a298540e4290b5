//! [`PithServer`]: the MCP handler for one connection.

use std::time::Duration;

use pith_env::SandboxStatus;
use pith_tools::{CallOptions, Session, Ticket, ToolSet};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    Implementation, InitializeRequestParams, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::progress::Progress;
use crate::validate::{invalid_params_message, method_not_found_message};
use crate::{convert, resources, roots};

/// How long the server waits for the client to answer `roots/list`.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

/// The pith tools as an MCP server, for one connection: one [`Session`] (the overwrite
/// policy's read tracking), created when the client has initialised, in the client's
/// first root when it offers MCP roots.
pub struct PithServer {
    base: ToolSet,
    tools: Vec<Tool>,
    info: ServerConfig,
    session: OnceCell<Session>,
    /// The toolset's working directory was chosen explicitly (`--cwd`): it wins over the
    /// client's roots, which still bound containment.
    keep_cwd: bool,
    /// The lowest level of log message the client asked for (`logging/setLevel`).
    log_level: crate::notices::LogLevel,
}

impl PithServer {
    /// A server over `toolset` (its working directory applies unless the client offers
    /// roots).
    pub fn new(toolset: ToolSet) -> PithServer {
        let network_denied = toolset.config().sandbox.deny_network;
        let tools = toolset
            .definitions()
            .into_iter()
            .map(|definition| convert::tool(definition, network_denied))
            .collect();
        PithServer {
            info: server_config(&toolset, false),
            base: toolset,
            tools,
            session: OnceCell::new(),
            keep_cwd: false,
            log_level: crate::notices::LogLevel::default(),
        }
    }

    /// Keeps the toolset's working directory even when the client offers MCP roots (for an
    /// explicit `--cwd`); the roots still become allowed roots of the workspace.
    pub fn keep_cwd(mut self) -> PithServer {
        self.keep_cwd = true;
        self.info = server_config(&self.base, true);
        self
    }

    /// The names of the tools it serves.
    pub(crate) fn tool_names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }

    /// The mutation queue every session of this server shares.
    pub(crate) fn queue(&self) -> std::sync::Arc<pith_tools::MutationQueue> {
        self.base.queue().clone()
    }

    /// The connection's session, opened on first use.
    async fn session(&self, peer: &Peer<RoleServer>) -> &Session {
        self.session
            .get_or_init(|| async {
                let session = self.open_session(peer).await;
                crate::notices::forward(&session, peer.clone(), self.log_level.clone());
                session
            })
            .await
    }

    async fn open_session(&self, peer: &Peer<RoleServer>) -> Session {
        match self.client_workspace(peer).await {
            Some(mut workspace) => {
                if self.keep_cwd {
                    workspace.cwd = self.base.cwd().to_path_buf();
                    tracing::info!(
                        "working directory {} (--cwd); MCP roots bound containment",
                        workspace.cwd.display()
                    );
                } else {
                    tracing::info!(
                        "working directory from MCP roots: {}",
                        workspace.cwd.display()
                    );
                }
                roots::toolset_for(&self.base, &workspace).session()
            }
            None => self.base.session(),
        }
    }

    /// The workspace the client's roots describe, when it offers roots.
    async fn client_workspace(&self, peer: &Peer<RoleServer>) -> Option<roots::ClientWorkspace> {
        let offers_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !offers_roots {
            return None;
        }
        #[expect(
            deprecated,
            reason = "roots are deprecated by SEP-2577 but clients still offer them"
        )]
        let request = peer.list_roots();
        match tokio::time::timeout(ROOTS_TIMEOUT, request).await {
            Ok(Ok(result)) => roots::client_workspace(&self.base, &root_uris(result)).await,
            Ok(Err(error)) => {
                tracing::warn!("roots/list failed: {error}");
                None
            }
            Err(_) => {
                tracing::warn!("roots/list got no answer in {ROOTS_TIMEOUT:?}");
                None
            }
        }
    }
}

#[expect(
    deprecated,
    reason = "roots are deprecated by SEP-2577 but clients still offer them"
)]
fn root_uris(result: rmcp::model::ListRootsResult) -> Vec<String> {
    result.roots.into_iter().map(|root| root.uri).collect()
}

impl std::fmt::Debug for PithServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PithServer")
            .field("toolset", &self.base)
            .finish()
    }
}

/// Why `params` do not deserialize as `P` (`None` when they do).
fn params_problem<P: serde::de::DeserializeOwned>(params: Value) -> Option<String> {
    serde_json::from_value::<P>(params)
        .err()
        .map(|error| error.to_string())
}

/// The server's capabilities, identity and instructions. Logging is on for the
/// job-end notices (see `notices`).
#[allow(
    deprecated,
    reason = "MCP logging carries the job-end notices; rmcp marks it deprecated by SEP-2577"
)]
fn server_config(toolset: &ToolSet, keep_cwd: bool) -> ServerConfig {
    let capabilities = ServerCapabilities::builder()
        .enable_tools()
        .enable_resources()
        .enable_logging()
        .build();
    ServerConfig::new(capabilities)
        .with_server_info(Implementation::new("pith", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions(toolset, keep_cwd))
}

/// What the client (and its model) is told about the server.
fn instructions(toolset: &ToolSet, keep_cwd: bool) -> String {
    let definitions = toolset.definitions();
    let names: Vec<&str> = definitions.iter().map(|d| d.name).collect();
    let cwd = if keep_cwd {
        format!("{} (set with --cwd)", toolset.cwd().display())
    } else {
        format!(
            "the client's first MCP root, else {}",
            toolset.cwd().display()
        )
    };
    let mut text = format!(
        "pith: tools for working on a code base ({}). Relative paths resolve against the \
         working directory: {cwd}.",
        names.join(", "),
    );
    for definition in definitions {
        text.push_str(&format!(
            "\n- {}: {}",
            definition.name, definition.prompt_snippet
        ));
    }
    let config = toolset.config();
    text.push_str("\nSafety, as enforced:\n");
    text.push_str(&SandboxStatus::probe().describe(&config.sandbox));
    if let Some(policy) = &config.workspace {
        let roots: Vec<String> = policy
            .roots()
            .iter()
            .map(|root| root.display().to_string())
            .collect();
        text.push_str(&format!(
            "\nworkspace roots: {} and the client's MCP roots (write and edit refuse paths outside them; .git/{} protected)",
            roots.join(", "),
            policy.protected().iter().map(|glob| format!(", {glob}")).collect::<String>()
        ));
    }
    text
}

impl ServerHandler for PithServer {
    fn get_info(&self) -> ServerConfig {
        self.info.clone()
    }

    #[allow(
        deprecated,
        reason = "MCP logging carries the job-end notices; rmcp marks it deprecated by SEP-2577"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log_level.set(request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // The place in arrival order the transport gave the request as it was read.
        let ticket = context.extensions.remove::<Ticket>();
        let session = self.session(&context.peer).await;
        // Arguments are validated by the tool (errors name the field), not by rmcp.
        let args = Value::Object(request.arguments.unwrap_or_default());
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| Progress::start(context.peer.clone(), token));
        let options = CallOptions {
            cancel: context.ct.clone(),
            updates: progress.as_ref().map(Progress::updates),
            // Calls sharing `_meta["pith/group"]` are undone together; otherwise
            // each request is its own group.
            group: Some(
                context
                    .meta
                    .get("pith/group")
                    .and_then(Value::as_str)
                    .map_or_else(pith_tools::new_group_id, str::to_owned),
            ),
            // structuredContent is part of every result.
            skip_structured: false,
        };
        let result = match ticket {
            Some(ticket) => {
                session
                    .call_in_turn(ticket, &request.name, args, options)
                    .await
            }
            None => session.call(&request.name, args, options).await,
        };
        if let Some(progress) = progress {
            progress.finish().await;
        }
        Ok(convert::call_result(result).into())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let session = self.session(&context.peer).await;
        Ok(resources::read(session, &request.uri).await?.into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        // rmcp hands over a known method whose params it could not deserialize.
        let params = request.params.unwrap_or(Value::Null);
        let problem = match request.method.as_str() {
            "tools/call" => params_problem::<CallToolRequestParams>(params),
            "tools/list" => params_problem::<Option<PaginatedRequestParams>>(params),
            "initialize" => params_problem::<InitializeRequestParams>(params),
            _ => None,
        };
        Err(match problem {
            Some(why) => {
                McpError::invalid_params(invalid_params_message(&request.method, &why), None)
            }
            None => {
                tracing::debug!("unknown method {}", request.method);
                McpError::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    method_not_found_message(&request.method),
                    None,
                )
            }
        })
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Ask for the roots now, so the first call does not wait for them.
        let _ = self.session(&context.peer).await;
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        // The working directory stays for the connection (a session's cwd is fixed); the
        // safety issue will refresh the allowed roots here.
        tracing::info!("the client's roots changed; the working directory stays");
    }
}
