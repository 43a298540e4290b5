//! `--since TIME`: a duration ago (`90s`, `10m`, `2h`, `1d`), a UTC date and
//! time (`2026-11-30T14:05:00Z`, `2026-11-30 14:05`, `2026-11-30`) or Unix
//! seconds (`@1795000000`). Written here: the three forms are a few lines
//! each, not worth a date-time dependency.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses a `--since` value relative to `now`.
///
/// # Errors
///
/// A message naming the accepted forms.
pub fn parse_since(text: &str, now: SystemTime) -> Result<SystemTime, String> {
    let text = text.trim();
    let invalid = || crate::messages::undo::invalid_since(text);
    if let Some(seconds) = text.strip_prefix('@') {
        let seconds: u64 = seconds.parse().map_err(|_| invalid())?;
        return Ok(UNIX_EPOCH + Duration::from_secs(seconds));
    }
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if let Some(unit) = text.chars().last().filter(|_| {
        !digits.is_empty()
            && text.len() == digits.len() + 1
            && digits.bytes().all(|b| b.is_ascii_digit())
    }) {
        let number: u64 = digits.parse().map_err(|_| invalid())?;
        let seconds = match unit {
            's' => number,
            'm' => number * 60,
            'h' => number * 3600,
            'd' => number * 86_400,
            _ => return Err(invalid()),
        };
        return now
            .checked_sub(Duration::from_secs(seconds))
            .ok_or_else(invalid);
    }
    utc(text)
        .map(|seconds| UNIX_EPOCH + Duration::from_secs(seconds))
        .ok_or_else(invalid)
}

/// `YYYY-MM-DD[( |T)HH:MM[:SS]][Z]` as Unix seconds.
fn utc(text: &str) -> Option<u64> {
    let text = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = match text.split_once(['T', ' ']) {
        Some((date, time)) => (date, Some(time)),
        None => (text, None),
    };
    let mut parts = date.split('-').map(|part| part.parse::<i64>().ok());
    let (year, month, day) = (parts.next()??, parts.next()??, parts.next()??);
    if parts.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut seconds = 0;
    if let Some(time) = time {
        let fields: Vec<i64> = time
            .split(':')
            .map(|part| part.parse().ok())
            .collect::<Option<_>>()?;
        let (hour, minute, second) = match fields.as_slice() {
            [hour, minute] => (*hour, *minute, 0),
            [hour, minute, second] => (*hour, *minute, *second),
            _ => return None,
        };
        if hour > 23 || minute > 59 || second > 60 {
            return None;
        }
        seconds = hour * 3600 + minute * 60 + second;
    }
    let days = days_from_civil(year, month, day);
    u64::try_from(days * 86_400 + seconds).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_durations_utc_times_and_unix_seconds() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(
            parse_since("10m", now).unwrap(),
            now - Duration::from_secs(600)
        );
        assert_eq!(
            parse_since("1d", now).unwrap(),
            now - Duration::from_secs(86_400)
        );
        assert_eq!(
            parse_since("@42", now).unwrap(),
            UNIX_EPOCH + Duration::from_secs(42)
        );
        assert_eq!(
            parse_since("2026-11-30T14:05:00Z", now).unwrap(),
            UNIX_EPOCH + Duration::from_secs(1_796_047_500)
        );
        assert_eq!(
            parse_since("1970-01-02", now).unwrap(),
            UNIX_EPOCH + Duration::from_secs(86_400)
        );
        assert!(
            parse_since("yesterday", now)
                .unwrap_err()
                .contains("90s, 10m")
        );
    }
}
