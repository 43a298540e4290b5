//! `pith call TOOL [JSON]`: one call, printed as text (or JSON with `--json`).

use std::io::{IsTerminal, Read, Write};

use pith_env::Env;
use pith_tools::{CallOptions, OverwritePolicy};
use serde_json::Value;

use crate::config::{ArgsInput, CallConfig, UsageError, parse_json_args};
use crate::render;

/// Exit status when the tool reports an error.
const TOOL_ERROR: i32 = 1;

/// Runs the call and prints its result; returns the exit status.
pub(crate) async fn run(config: CallConfig, env: &Env) -> anyhow::Result<i32> {
    let args = match config.input {
        ArgsInput::Inline(args) => args,
        ArgsInput::Stdin => read_stdin_args().await?,
    };
    // A one-shot call has no earlier read to check against: overwriting is allowed.
    let toolset = config.workspace.toolset(env, OverwritePolicy::Allow, true);
    let result = toolset
        .session()
        .call(&config.tool, args, CallOptions::default())
        .await;

    let mut out = String::new();
    if config.json {
        out.push_str(&render::json(&result).to_string());
        out.push('\n');
    } else {
        out.push_str(&render::text(&result));
        if let Some(diff) = render::diff(&result).filter(|_| std::io::stdout().is_terminal()) {
            out.push('\n');
            out.push_str(&render::colored_diff(diff));
        }
    }
    let mut stdout = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) is not an error worth reporting.
    let _ = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush());
    Ok(if result.is_error { TOOL_ERROR } else { 0 })
}

/// Reads the arguments from stdin. On a terminal with nothing piped in, a call without
/// arguments gets `{}` instead of waiting for input.
async fn read_stdin_args() -> anyhow::Result<Value> {
    if std::io::stdin().is_terminal() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    let text = tokio::task::spawn_blocking(|| {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map(|_| text)
    })
    .await?
    .map_err(|error| {
        UsageError(format!(
            "cannot read the JSON arguments from stdin: {error}"
        ))
    })?;
    Ok(parse_json_args(&text, "the JSON on stdin")?)
}
