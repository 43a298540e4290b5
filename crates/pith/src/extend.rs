//! A host's own tools in the pith binary ([`crate::run_with`]).

use std::sync::OnceLock;

use pith_env::Env;
use pith_tools::{ToolSet, ToolSetBuilder};

/// Adds a host's tools to a tool set being built.
pub type Extend = fn(ToolSetBuilder) -> ToolSetBuilder;

/// Set once, before the command runs.
static EXTEND: OnceLock<Extend> = OnceLock::new();

/// Makes every tool set this process builds include the host's tools.
pub(crate) fn install(extend: Extend) {
    let _ = EXTEND.set(extend);
}

/// Starts a tool set over `env` with the tools `names` selects (`--tools`,
/// validated by [`crate::config::selection`]): built-in and the host's alike.
pub(crate) fn builder<S: AsRef<str>>(env: Env, names: &[S]) -> ToolSetBuilder {
    let builder = ToolSet::builder(env);
    match EXTEND.get() {
        Some(extend) => extend(builder),
        None => builder,
    }
    .select(names)
}

/// The names of the host's tools (empty without [`crate::run_with`]).
pub(crate) fn added_names() -> Vec<&'static str> {
    let Some(extend) = EXTEND.get() else {
        return Vec::new();
    };
    let none: [&str; 0] = [];
    let toolset = extend(ToolSet::builder(Env::memory(pith_env::MemoryEnv::new())))
        .tools(&none)
        .build();
    toolset.definitions().iter().map(|d| d.name).collect()
}
