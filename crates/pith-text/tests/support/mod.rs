//! Helpers shared by the integration tests.

/// Applies a unified patch (as written by `unified_patch`) to `old`; `None` when a hunk does
/// not fit. Strict: context and removed lines must equal the old lines.
pub(crate) fn apply_patch(old: &str, patch: &str) -> Option<String> {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut next_old = 0;
    let mut lines = patch.split_inclusive('\n').peekable();
    let (first, second) = (lines.next()?, lines.next()?);
    if !first.starts_with("--- ") || !second.starts_with("+++ ") {
        return None;
    }
    while let Some(header) = lines.next() {
        let ranges = header.strip_prefix("@@ -")?.strip_suffix(" @@\n")?;
        let (old_range, _) = ranges.split_once(" +")?;
        let (start, len) = old_range.split_once(',')?;
        let (start, len): (usize, usize) = (start.parse().ok()?, len.parse().ok()?);
        let hunk_start = if len == 0 {
            start
        } else {
            start.checked_sub(1)?
        };
        for line in old_lines.get(next_old..hunk_start)? {
            out.push_str(line);
        }
        next_old = hunk_start;
        while let Some(line) = lines.next_if(|line| !line.starts_with("@@")) {
            let (sign, body) = line.split_at(1);
            let no_newline = lines.next_if(|next| next.starts_with('\\')).is_some();
            let body = if no_newline {
                body.strip_suffix('\n')?
            } else {
                body
            };
            match sign {
                " " | "-" => {
                    if *old_lines.get(next_old)? != body {
                        return None;
                    }
                    next_old += 1;
                    if sign == " " {
                        out.push_str(body);
                    }
                }
                "+" => out.push_str(body),
                _ => return None,
            }
        }
    }
    for line in old_lines.get(next_old..)? {
        out.push_str(line);
    }
    Some(out)
}

/// Reads every `\r\n` and lone `\r` as `\n`.
pub(crate) fn to_lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}
