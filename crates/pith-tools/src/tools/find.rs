//! `find`: find files by glob.

use async_trait::async_trait;
use pith_env::{FindOutput, FindRequest, FsErrorKind, SearchError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::grep::{Notices, search_error};
use super::{Describe, READ_ONLY, define};
use crate::messages::find as messages;
use crate::tool::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// Results returned when the model gives no limit.
const DEFAULT_LIMIT: usize = 1000;

/// Arguments of `find`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct FindArgs {
    /// Glob pattern to match files, e.g. '*.ts' (names at any depth), 'src/**/*.spec.ts' (relative to path) or '**/src/*.ts'
    pattern: String,
    /// Directory to search in (default: current directory)
    path: Option<String>,
    /// Maximum number of results (default: 1000)
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

pub(crate) struct FindTool {
    definition: ToolDefinition,
}

impl FindTool {
    pub(crate) fn new() -> FindTool {
        FindTool {
            definition: define::<FindArgs>(Describe {
                name: "find",
                title: "Find files",
                description: "Search for files by glob pattern. A pattern without / matches names at any depth ('*.ts'); one with / is relative to the search directory ('src/*.ts'; '**/src/*.ts' at any depth). Returns paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).",
                prompt_snippet: "Find files by glob pattern (respects .gitignore)",
                prompt_guidelines: &[],
                annotations: READ_ONLY,
            }),
        }
    }
}

#[async_trait]
impl Tool for FindTool {
    type Args = FindArgs;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(
        &self,
        args: FindArgs,
        context: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        // The walk does not follow symlinks, so a contained root keeps the search inside.
        let root = context
            .search_root(args.path.as_deref().unwrap_or("."))
            .await?;
        let limit = args.limit.map_or(DEFAULT_LIMIT, |limit| {
            usize::try_from(limit.max(1)).unwrap_or(usize::MAX)
        });
        let request = FindRequest {
            pattern: args.pattern,
            root,
            limit,
        };
        let output = match context.read_search().find(request, cancel).await {
            Ok(output) => output,
            Err(SearchError::Fs(error)) if error.kind == FsErrorKind::NotADirectory => {
                return Err(ToolError::new(messages::not_a_directory(
                    error.path.display(),
                )));
            }
            Err(error) => return Err(search_error(error, context).await),
        };
        let result = render(&output, limit);
        let structured = json!({
            "count": output.entries.len(),
            "limitReached": output.limit_reached,
            "truncated": super::grep::cut(&result),
        });
        Ok(result.with_structured(structured))
    }
}

/// One path per line, directories ending in `/`, then the notices.
fn render(output: &FindOutput, limit: usize) -> ToolOutput {
    if output.entries.is_empty() {
        return ToolOutput::text(messages::NO_FILES);
    }
    let rows: Vec<String> = output
        .entries
        .iter()
        .map(|entry| {
            if entry.is_dir {
                format!("{}/", entry.path)
            } else {
                entry.path.clone()
            }
        })
        .collect();
    let mut notices = Notices::default();
    if output.limit_reached {
        notices.push(messages::result_limit(limit));
        notices.details.result_limit_reached = Some(limit);
    }
    let mut text = notices.cap_bytes(&rows.join("\n"));
    notices.finish(&mut text)
}
