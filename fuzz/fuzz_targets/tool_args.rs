//! Fuzzes argument repair and validation: arbitrary JSON for every tool through the
//! tool's own repair and `parse_args` against its schema. Never panics; an error
//! names the tool and is one to three lines.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use pith_env::{Env, MemoryEnv};
use pith_tools::{ToolSet, parse_args};
use serde_json::Value;

fn toolset() -> &'static ToolSet {
    static TOOLS: OnceLock<ToolSet> = OnceLock::new();
    TOOLS.get_or_init(|| ToolSet::builder(Env::memory(MemoryEnv::new())).cwd("/").build())
}

fuzz_target!(|data: &[u8]| {
    let Ok(args) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for definition in toolset().definitions() {
        let Some(repaired) = toolset().repair_args(definition.name, args.clone()) else {
            continue;
        };
        if let Err(error) = parse_args::<Value>(definition.name, &definition.input_schema, repaired)
        {
            let message = error.to_string();
            assert!(message.contains(definition.name), "{message}");
            assert!((1..=3).contains(&message.lines().count()), "{message}");
        }
    }
});
