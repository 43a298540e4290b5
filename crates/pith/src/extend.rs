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

/// Starts a tool set over `env`, with the host's tools when there are any.
pub(crate) fn builder(env: Env) -> ToolSetBuilder {
    let builder = ToolSet::builder(env);
    match EXTEND.get() {
        Some(extend) => extend(builder),
        None => builder,
    }
}
