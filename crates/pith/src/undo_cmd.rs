//! `pith undo`: list the journal, or undo journaled changes through the tools' queue.

use std::io::Write;

use pith_env::Env;
use pith_tools::{EntryStatus, FileState, OverwritePolicy};

use crate::config::{UndoAction, UndoConfig};

/// Runs `pith undo`; returns the exit status (1 when the undo was refused or failed).
pub(crate) async fn run(config: UndoConfig, env: &Env) -> anyhow::Result<i32> {
    let session = config
        .workspace
        .toolset(env, OverwritePolicy::Allow, true)
        .session();
    let mut stdout = std::io::stdout().lock();
    match config.action {
        UndoAction::List => {
            let entries = match session.journal_entries().await {
                Ok(entries) => entries,
                Err(error) => anyhow::bail!("{}", error.message),
            };
            if config.json {
                writeln!(stdout, "{}", serde_json::to_string(&entries)?)?;
                return Ok(0);
            }
            if entries.is_empty() {
                writeln!(stdout, "The journal is empty.")?;
            }
            for listed in entries.iter().rev() {
                let entry = &listed.entry;
                let status = match listed.status {
                    EntryStatus::Current => "current",
                    EntryStatus::Before => "undone",
                    EntryStatus::Changed => "changed since",
                };
                let undoable = match entry.before {
                    FileState::NotUndoable { .. } => " (not undoable)",
                    _ => "",
                };
                let what = match (&entry.before, &entry.after) {
                    (FileState::Absent, _) => "created",
                    (_, FileState::Absent) => "deleted",
                    _ => "changed",
                };
                writeln!(
                    stdout,
                    "{}  group {}  call {}  {:<11} {what} {}  [{status}]{undoable}",
                    clock(entry.time_ms),
                    entry.group,
                    entry.call,
                    entry.tool,
                    entry.path.display(),
                )?;
            }
            Ok(0)
        }
        UndoAction::Undo(options) => match session.undo(options, None).await {
            Ok(report) => {
                if config.json {
                    writeln!(stdout, "{}", serde_json::to_string(&report)?)?;
                } else {
                    writeln!(stdout, "{}", report.summary())?;
                    if report.dry_run {
                        for file in &report.files {
                            write!(stdout, "{}", file.patch)?;
                        }
                    }
                }
                Ok(0)
            }
            Err(error) => {
                if config.json {
                    let details = error.details().cloned().unwrap_or_default();
                    writeln!(
                        stdout,
                        "{}",
                        serde_json::json!({"error": error.message, "report": details})
                    )?;
                } else {
                    writeln!(std::io::stderr(), "error: {}", error.message)?;
                }
                Ok(1)
            }
        },
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of milliseconds since the epoch.
fn clock(millis: u64) -> String {
    let seconds = millis / 1000;
    let days = (seconds / 86_400) as i64;
    let rest = seconds % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn prints_utc_times() {
        assert_eq!(super::clock(1_796_047_500_000), "2026-11-30 14:05:00");
        assert_eq!(super::clock(0), "1970-01-01 00:00:00");
    }
}
