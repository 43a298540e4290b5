//! `pith call TOOL [JSON]`: one call, printed as text (or JSON with `--json`).

use std::io::{IsTerminal, Read, Write};

use pith_env::Env;
use std::sync::{Arc, Mutex};

use pith_tools::{CallOptions, OverwritePolicy, ToolUpdate, UpdateFn};
use serde_json::Value;

use crate::args_in_place::parse_args_in_place;
use crate::config::{ArgsInput, CallConfig, UsageError};
use crate::render;

/// Exit status when the tool reports an error.
const TOOL_ERROR: i32 = 1;

/// Runs the call and prints its result; returns the exit status.
pub(crate) async fn run(config: CallConfig, env: &Env) -> anyhow::Result<i32> {
    // A one-shot call has no earlier read to check against: overwriting is allowed.
    // Built before large arguments are read from stdin, so that its pages are among
    // those given back meanwhile ([`read_stdin_args`]).
    let toolset = config.workspace.toolset(env, OverwritePolicy::Allow, true);
    let args = match config.input {
        ArgsInput::Inline(args) => args,
        ArgsInput::Stdin => read_stdin_args().await?,
    };
    let show_diff = !config.json && (config.color || std::io::stdout().is_terminal());
    // write's result has no diff: the CLI takes the file's text before and after.
    let before = (show_diff && config.tool == "write")
        .then(|| written_path(&args, &config.workspace.cwd))
        .flatten()
        .map(|path| (std::fs::read_to_string(&path).unwrap_or_default(), path));
    let stream = (config.tool == "bash" && !config.json && std::io::stdout().is_terminal())
        .then(|| Arc::new(Mutex::new(String::new())));
    let options = CallOptions {
        updates: stream.clone().map(live_output),
        // Not printed, with or without --json.
        skip_structured: true,
        ..CallOptions::default()
    };
    let result = toolset.session().call(&config.tool, args, options).await;
    let streamed = stream.map(|printed| std::mem::take(&mut *lock(&printed)));

    let mut out = String::new();
    if config.json {
        out.push_str(&render::json(&result).to_string());
        out.push('\n');
    } else {
        let mut text = render::text(&result);
        // What bash streamed is not printed twice.
        if let Some(streamed) = streamed.filter(|streamed| !streamed.is_empty()) {
            text = match text.strip_prefix(streamed.as_str()) {
                Some(rest) => rest.to_owned(),
                None => format!("\n{text}"),
            };
        }
        if result.is_error && config.color {
            out.push_str(&render::red(&text));
        } else {
            out.push_str(&text);
        }
        let write_diff = before.filter(|_| !result.is_error).and_then(|(old, path)| {
            let new = std::fs::read_to_string(path).ok()?;
            Some(pith_text::display_diff(&old, &new, 4).diff)
        });
        let diff = write_diff.or_else(|| {
            render::diff(&result)
                .filter(|_| show_diff)
                .map(str::to_owned)
        });
        if let Some(diff) = diff.filter(|diff| !diff.is_empty()) {
            out.push('\n');
            out.push_str(&render::diff_for_people(&diff, config.color));
        }
    }
    let mut stdout = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) is not an error worth reporting.
    let _ = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush());
    Ok(if result.is_error { TOOL_ERROR } else { 0 })
}

/// Prints bash's output as it grows: each update's text, when it extends what was
/// printed (a cut tail is not streamed; the final result then follows in full).
fn live_output(printed: Arc<Mutex<String>>) -> UpdateFn {
    Arc::new(move |update: ToolUpdate| {
        if update.details.is_some() {
            return;
        }
        let text: String = update
            .content
            .iter()
            .filter_map(|part| part.as_text())
            .collect();
        let mut printed = lock(&printed);
        if let Some(rest) = text.strip_prefix(printed.as_str())
            && !rest.is_empty()
        {
            let mut stdout = std::io::stdout().lock();
            if stdout
                .write_all(rest.as_bytes())
                .and_then(|()| stdout.flush())
                .is_ok()
            {
                printed.push_str(rest);
            }
        }
    })
}

fn lock(printed: &Mutex<String>) -> std::sync::MutexGuard<'_, String> {
    printed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The file a `write` call names, resolved against the working directory.
fn written_path(args: &Value, cwd: &std::path::Path) -> Option<std::path::PathBuf> {
    let raw = ["path", "file_path", "filePath"]
        .iter()
        .find_map(|key| args.get(key)?.as_str())?;
    pith_tools::resolve_path(raw, cwd, std::env::home_dir().as_deref()).ok()
}

/// Reads the arguments from stdin. On a terminal with nothing piped in, a call without
/// arguments gets `{}` instead of waiting for input. The largest string (a `write`'s
/// content) is unescaped within the text read, so it is held once, not twice
/// ([`crate::args_in_place`]); once the input passes [`RELEASE_AT_BYTES`], the pages
/// start-up mapped are given back before the rest is read ([`crate::resident`]).
async fn read_stdin_args() -> anyhow::Result<Value> {
    if std::io::stdin().is_terminal() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    let text = tokio::task::spawn_blocking(|| read_all(&mut std::io::stdin().lock()))
        .await?
        .map_err(|error| {
            UsageError(format!(
                "cannot read the JSON arguments from stdin: {error}"
            ))
        })?;
    Ok(parse_args_in_place(text, "the JSON on stdin")?)
}

/// Arguments larger than this are big enough that the pages start-up mapped
/// weigh on the call's peak: they are given back once the input passes it.
const RELEASE_AT_BYTES: usize = 1 << 20;

/// Reads `input` to its end as UTF-8 (as `read_to_string` does), giving back the
/// start-up pages once it passes [`RELEASE_AT_BYTES`].
fn read_all(input: &mut impl Read) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    let mut released = false;
    loop {
        let read = input
            .by_ref()
            .take(RELEASE_AT_BYTES as u64)
            .read_to_end(&mut bytes)?;
        if read == 0 {
            break;
        }
        if !released && bytes.len() > RELEASE_AT_BYTES {
            released = true;
            let bytes = crate::resident::release_clean_file_pages();
            tracing::debug!(bytes, "released the start-up pages before a large argument");
        }
    }
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}
