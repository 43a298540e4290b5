//! Shell selection and the timeout argument.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pith_env::FileSystem;

/// The largest timeout, in milliseconds (what a JavaScript timer accepts).
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;

/// What a `timeout` of 0 or below gets.
pub(crate) use crate::messages::bash::NONPOSITIVE_TIMEOUT;

/// The error for a `timeout` argument (number or numeric string) of 0 or below.
pub(crate) fn nonpositive_timeout(args: &serde_json::Value) -> Option<&'static str> {
    let seconds = match args.get("timeout")? {
        serde_json::Value::Number(number) => number.as_f64()?,
        serde_json::Value::String(text) => text.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    (seconds <= 0.0).then_some(NONPOSITIVE_TIMEOUT)
}

/// Checks the `timeout` argument (seconds).
pub(crate) fn timeout(seconds: Option<f64>) -> Result<Option<Duration>, String> {
    let Some(seconds) = seconds else {
        return Ok(None);
    };
    if seconds <= 0.0 {
        return Err(NONPOSITIVE_TIMEOUT.to_owned());
    }
    if !seconds.is_finite() {
        return Err(crate::messages::bash::INFINITE_TIMEOUT.to_owned());
    }
    if seconds * 1000.0 > MAX_TIMEOUT_MS {
        return Err(crate::messages::bash::TIMEOUT_TOO_LARGE.to_owned());
    }
    Ok(Some(Duration::from_secs_f64(seconds)))
}

/// Prints seconds the way JavaScript prints a number in this range: `5`, `0.05`, `1.5`.
pub(crate) fn format_seconds(seconds: f64) -> String {
    format!("{seconds}")
}

/// The shell to run: the configured one (which must exist), `/bin/bash`,
/// `bash` on `PATH`, else `sh`.
pub(crate) async fn select(
    fs: &dyn FileSystem,
    configured: Option<&Path>,
) -> Result<PathBuf, String> {
    if let Some(shell) = configured {
        return match fs.metadata(shell).await {
            Ok(_) => Ok(shell.to_path_buf()),
            Err(_) => Err(crate::messages::bash::custom_shell_not_found(
                shell.display(),
            )),
        };
    }
    let bin_bash = Path::new("/bin/bash");
    if fs.metadata(bin_bash).await.is_ok_and(|m| m.is_file()) {
        return Ok(bin_bash.to_path_buf());
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path).filter(|dir| dir.is_absolute()) {
            let candidate = dir.join("bash");
            if fs.metadata(&candidate).await.is_ok_and(|m| m.is_file()) {
                return Ok(candidate);
            }
        }
    }
    Ok(PathBuf::from("sh"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_the_timeout_with_the_reference_messages() {
        assert_eq!(timeout(None), Ok(None));
        assert_eq!(timeout(Some(1.5)), Ok(Some(Duration::from_millis(1500))));
        let finite = Err("Invalid timeout: must be a finite number of seconds".to_owned());
        let positive = Err(NONPOSITIVE_TIMEOUT.to_owned());
        assert_eq!(timeout(Some(0.0)), positive);
        assert_eq!(timeout(Some(-1.0)), positive);
        assert_eq!(timeout(Some(f64::NAN)), finite);
        assert_eq!(timeout(Some(f64::INFINITY)), finite);
        assert_eq!(
            timeout(Some(2_147_483.647)),
            Ok(Some(Duration::from_millis(2_147_483_647)))
        );
        assert_eq!(
            timeout(Some(2_147_483.648)),
            Err("Invalid timeout: maximum is 2147483.647 seconds".to_owned())
        );
    }

    #[test]
    fn prints_seconds_like_javascript() {
        assert_eq!(format_seconds(5.0), "5");
        assert_eq!(format_seconds(0.05), "0.05");
        assert_eq!(format_seconds(1.5), "1.5");
        assert_eq!(format_seconds(2_147_483.647), "2147483.647");
    }
}
