//! The call pipeline every tool goes through: after-hooks see the arguments
//! that ran, and a host's own tool gets validation, hooks and the queue.

use std::fs;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pith_env::Env;
use pith_tools::{
    CallOptions, HookCall, HookDecision, OverwritePolicy, QueueUse, Tool, ToolAnnotations,
    ToolConfig, ToolContext, ToolDefinition, ToolError, ToolHooks, ToolOutput, ToolResult, ToolSet,
    schema_of,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// Rewrites `content`/`text` to upper case, blocks text containing "forbidden",
/// and records the arguments each after-hook call saw.
#[derive(Default)]
struct Recorder {
    after: Mutex<Vec<(String, Value)>>,
}

#[async_trait]
impl ToolHooks for Recorder {
    async fn before_tool_call(&self, call: HookCall<'_>) -> HookDecision {
        let mut args = call.args.clone();
        for key in ["content", "text"] {
            if let Some(text) = args.get(key).and_then(Value::as_str) {
                if text.contains("forbidden") {
                    return HookDecision::Block(format!("{key} is forbidden"));
                }
                args[key] = json!(text.to_uppercase());
                return HookDecision::Rewrite(args);
            }
        }
        HookDecision::Allow
    }

    async fn after_tool_call(&self, call: HookCall<'_>, result: ToolResult) -> ToolResult {
        self.after
            .lock()
            .unwrap()
            .push((call.tool.to_owned(), call.args.clone()));
        result
    }
}

fn toolset(root: &std::path::Path, hook: Arc<Recorder>) -> ToolSet {
    let mut config = ToolConfig::default();
    config.overwrite_policy = OverwritePolicy::Allow;
    config.hooks.push(hook);
    ToolSet::builder(Env::local())
        .cwd(root)
        .config(config)
        .tool(Stamp::new())
        .build()
}

#[tokio::test]
async fn after_hooks_see_the_arguments_a_before_hook_rewrote() {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let hook = Arc::new(Recorder::default());
    let session = toolset(&root, hook.clone()).session();
    let written = session
        .call(
            "write",
            json!({"path": "a.txt", "content": "quiet"}),
            CallOptions::default(),
        )
        .await;
    assert!(!written.is_error, "{}", written.text_content());
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "QUIET");
    let after = hook.after.lock().unwrap().clone();
    assert_eq!(
        after,
        vec![(
            "write".to_owned(),
            json!({"path": "a.txt", "content": "QUIET"})
        )]
    );
}

/// Arguments of the host's tool.
#[derive(Deserialize, JsonSchema)]
struct StampArgs {
    /// The file to append to.
    path: String,
    /// The line to append.
    text: String,
}

/// A host's tool: appends a line to a file, inside that file's queue.
struct Stamp {
    definition: ToolDefinition,
}

impl Stamp {
    fn new() -> Stamp {
        Stamp {
            definition: ToolDefinition {
                name: "stamp",
                title: "Stamp a file",
                description: "Append a line to a file.",
                input_schema: schema_of::<StampArgs>(),
                output_schema: json!({"type": "object"}),
                prompt_snippet: "Append a line to a file",
                prompt_guidelines: &[],
                annotations: ToolAnnotations {
                    read_only: false,
                    destructive: false,
                    idempotent: false,
                    open_world: false,
                },
            },
        }
    }
}

#[async_trait]
impl Tool for Stamp {
    type Args = StampArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn queue_use(&self) -> QueueUse {
        QueueUse::Target
    }

    fn target<'a>(&self, args: &'a StampArgs) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn execute(
        &self,
        args: StampArgs,
        context: &ToolContext,
        _cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let path = context.resolve_target(&args.path)?;
        // The call holds the file's turn while it runs.
        let claims = context.queue.claims();
        let fs = context.write_fs();
        let mut bytes = fs.read(&path).await.unwrap_or_default();
        bytes.extend_from_slice(args.text.as_bytes());
        bytes.push(b'\n');
        fs.write_atomic(&path, &bytes)
            .await
            .map_err(|error| ToolError::internal("could not stamp", error))?;
        Ok(ToolOutput::text(format!(
            "stamped {} (claims {claims})",
            args.path
        )))
    }
}

#[tokio::test]
async fn a_hosts_tool_runs_through_validation_hooks_and_the_queue() {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let hook = Arc::new(Recorder::default());
    let tools = toolset(&root, hook.clone());
    let names: Vec<&str> = tools.definitions().iter().map(|d| d.name).collect();
    assert_eq!(names.last(), Some(&"stamp"), "{names:?}");
    let session = tools.session();

    let invalid = session
        .call("stamp", json!({"path": "s.txt"}), CallOptions::default())
        .await;
    assert!(invalid.is_error);
    assert!(
        invalid
            .text_content()
            .starts_with("Invalid arguments for tool \"stamp\": text is required"),
        "{}",
        invalid.text_content()
    );

    let blocked = session
        .call(
            "stamp",
            json!({"path": "s.txt", "text": "forbidden"}),
            CallOptions::default(),
        )
        .await;
    assert!(blocked.is_error);
    assert_eq!(blocked.text_content(), "text is forbidden");

    let stamped = session
        .call(
            "stamp",
            json!({"path": "s.txt", "text": "hello"}),
            CallOptions::default(),
        )
        .await;
    assert_eq!(stamped.text_content(), "stamped s.txt (claims 1)");
    assert_eq!(fs::read_to_string(root.join("s.txt")).unwrap(), "HELLO\n");
    assert!(fs::read_to_string(root.join("s.txt")).is_ok());

    // The workspace write check applies to it too: `.git/` is refused.
    let refused = session
        .call(
            "stamp",
            json!({"path": ".git/config", "text": "x"}),
            CallOptions::default(),
        )
        .await;
    assert!(refused.is_error, "{}", refused.text_content());
    assert!(!root.join(".git").exists());

    let after = hook.after.lock().unwrap().clone();
    assert!(after.contains(&(
        "stamp".to_owned(),
        json!({"path": "s.txt", "text": "HELLO"})
    )));
}

/// A hook for apply_patch: records every before call's patch; blocks a section
/// naming `secret.txt`, moves a section naming `moved.txt` to another file and
/// rewrites `+hello` to `+HELLO`.
#[derive(Default)]
struct PatchHook {
    before: Mutex<Vec<String>>,
    after: Mutex<Vec<Value>>,
}

#[async_trait]
impl ToolHooks for PatchHook {
    async fn before_tool_call(&self, call: HookCall<'_>) -> HookDecision {
        let patch = call.args["patch"].as_str().unwrap().to_owned();
        self.before.lock().unwrap().push(patch.clone());
        if patch.contains("secret.txt") {
            return HookDecision::Block("secret.txt is off limits".to_owned());
        }
        if patch.contains("moved.txt") {
            return HookDecision::Rewrite(
                json!({"patch": patch.replace("moved.txt", "elsewhere.txt")}),
            );
        }
        if patch.contains("+hello") {
            return HookDecision::Rewrite(json!({"patch": patch.replace("+hello", "+HELLO")}));
        }
        HookDecision::Allow
    }

    async fn after_tool_call(&self, call: HookCall<'_>, result: ToolResult) -> ToolResult {
        self.after.lock().unwrap().push(call.args.clone());
        result
    }
}

fn patch_session(root: &std::path::Path, hook: Arc<PatchHook>) -> pith_tools::Session {
    let mut config = ToolConfig::default();
    config.hooks.push(hook);
    ToolSet::builder(Env::local())
        .cwd(root)
        .config(config)
        .tools(&["apply_patch"])
        .build()
        .session()
}

#[tokio::test]
async fn apply_patch_hooks_see_and_rewrite_each_file_in_its_turn() {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let hook = Arc::new(PatchHook::default());
    let session = patch_session(&root, hook.clone());
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** Add File: b.txt\n+world\n*** End Patch\n";
    let result = session
        .call(
            "apply_patch",
            json!({ "patch": patch }),
            CallOptions::default(),
        )
        .await;
    assert!(!result.is_error, "{}", result.text_content());
    assert_eq!(
        *hook.before.lock().unwrap(),
        [
            "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n",
            "*** Begin Patch\n*** Add File: b.txt\n+world\n*** End Patch\n",
        ]
    );
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "HELLO\n");
    assert_eq!(fs::read_to_string(root.join("b.txt")).unwrap(), "world\n");
    assert_eq!(
        *hook.after.lock().unwrap(),
        [
            json!({"patch": "*** Begin Patch\n*** Add File: a.txt\n+HELLO\n*** Add File: b.txt\n+world\n*** End Patch\n"})
        ]
    );
}

#[tokio::test]
async fn an_apply_patch_hook_refuses_one_file_and_no_file_changes() {
    let dir = TempDir::new().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let hook = Arc::new(PatchHook::default());
    let session = patch_session(&root, hook.clone());
    let patch = "*** Begin Patch\n*** Add File: c.txt\n+fine\n*** Add File: secret.txt\n+no\n*** End Patch\n";
    let blocked = session
        .call(
            "apply_patch",
            json!({ "patch": patch }),
            CallOptions::default(),
        )
        .await;
    assert!(blocked.is_error);
    assert_eq!(blocked.text_content(), "secret.txt is off limits");
    assert!(!root.join("c.txt").exists());
    assert!(!root.join("secret.txt").exists());

    let moved = session
        .call(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: moved.txt\n+x\n*** End Patch\n"}),
            CallOptions::default(),
        )
        .await;
    assert!(moved.is_error);
    assert!(
        moved.text_content().contains("changed which file"),
        "{}",
        moved.text_content()
    );
    assert!(!root.join("moved.txt").exists());
    assert!(!root.join("elsewhere.txt").exists());
}
