//! Throughput of the bash tool: 1 GiB of output through the tool (decoder,
//! tail, full-output file) against `cat` of the same bytes to /dev/null.
//!
//! `cargo bench -p pith-tools --bench bash_throughput` (set `PITH_BENCH_MIB`
//! to change the size).
#![expect(clippy::print_stdout, reason = "a benchmark prints its result")]

use std::error::Error;
use std::process::Command;
use std::time::{Duration, Instant};

use pith_env::Env;
use pith_tools::{CallOptions, ToolConfig, ToolSet};

fn generator(mib: u64) -> String {
    // 100-byte lines: realistic for build logs, and `yes` is far faster than any reader.
    format!(
        "yes 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' | head -c {}",
        mib * 1024 * 1024
    )
}

fn main() -> Result<(), Box<dyn Error>> {
    let mib: u64 = std::env::var("PITH_BENCH_MIB")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1024);
    let command = generator(mib);

    let start = Instant::now();
    let status = Command::new("/bin/bash")
        .args(["-c", &format!("{command} | cat > /dev/null")])
        .status()?;
    let cat = start.elapsed();
    if !status.success() {
        return Err("the cat baseline failed".into());
    }

    let spill = tempfile::tempdir()?;
    let mut config = ToolConfig::default();
    config.bash.spill_dir = spill.path().to_path_buf();
    let tools = ToolSet::builder(Env::local())
        .cwd(spill.path())
        .config(config)
        .build();
    let runtime = tokio::runtime::Runtime::new()?;
    let start = Instant::now();
    let result = runtime.block_on(tools.session().call(
        "bash",
        serde_json::json!({ "command": command }),
        CallOptions::default(),
    ));
    let tool = start.elapsed();
    if result.is_error {
        return Err(result.text_content().into());
    }

    let rate = |took: Duration| mib as f64 / took.as_secs_f64();
    println!("bytes:        {mib} MiB");
    println!(
        "cat:          {:>8.3} s  {:>8.1} MiB/s",
        cat.as_secs_f64(),
        rate(cat)
    );
    println!(
        "bash tool:    {:>8.3} s  {:>8.1} MiB/s",
        tool.as_secs_f64(),
        rate(tool)
    );
    println!(
        "ratio (tool time / cat time): {:.2}",
        tool.as_secs_f64() / cat.as_secs_f64()
    );
    Ok(())
}
