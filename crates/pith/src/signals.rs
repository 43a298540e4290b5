//! SIGTERM, SIGINT and SIGHUP: kill every process group the tools started, then exit
//! with 128 + the signal number.

use pith_env::Env;
use tokio::signal::unix::{SignalKind, signal};

/// Installs the handler; it runs on the current runtime until a signal arrives.
pub(crate) fn install(env: Env) -> std::io::Result<()> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut hangup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        let kind = tokio::select! {
            _ = terminate.recv() => SignalKind::terminate(),
            _ = interrupt.recv() => SignalKind::interrupt(),
            _ = hangup.recv() => SignalKind::hangup(),
        };
        let number = kind.as_raw_value();
        tracing::info!("signal {number}: killing child processes and exiting");
        env.exec.kill_all();
        std::process::exit(128 + number);
    });
    Ok(())
}
