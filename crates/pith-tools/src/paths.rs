//! Resolving the paths models send.
//!
//! [`resolve_path`] is the reference's `resolveToCwd` (§2.1, §2.2): unicode
//! spaces become ASCII spaces, one leading `@` is dropped, `~` and `~/` expand
//! to the home directory, `file://` URLs are percent-decoded, relative paths
//! join the working directory and `.` is dropped; `..` is kept for the file
//! system to resolve like the kernel does (through symlinks). [`resolve_read_path`] adds the spellings file systems use
//! that models cannot type (§2.3).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use pith_env::{FileSystem, FsError, FsErrorKind};
use unicode_normalization::UnicodeNormalization;

use crate::messages::paths as messages;
use crate::tool::ToolError;

/// Spaces models copy from rendered text that file names rarely contain.
fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Resolves a path argument against `cwd`; `home` expands `~`.
///
/// # Errors
///
/// A NUL byte in the path, a malformed `file://` URL, or `~` without a home directory.
pub fn resolve_path(input: &str, cwd: &Path, home: Option<&Path>) -> Result<PathBuf, ToolError> {
    if input.len() > MAX_PATH_BYTES {
        return Err(ToolError::new(messages::too_long(
            &clip_for_message(input),
            input.len(),
            MAX_PATH_BYTES,
        )));
    }
    if input.contains('\0') {
        return Err(ToolError::new(messages::nul_byte(&clip_for_message(
            &input.replace('\0', "\\0"),
        ))));
    }
    let spaced: std::borrow::Cow<'_, str> = if input.chars().any(is_unicode_space) {
        input
            .chars()
            .map(|c| if is_unicode_space(c) { ' ' } else { c })
            .collect::<String>()
            .into()
    } else {
        input.into()
    };
    let path = spaced.strip_prefix('@').unwrap_or(&spaced);
    let expanded = if path == "~" || path.starts_with("~/") {
        let Some(home) = home else {
            return Err(ToolError::new(messages::no_home(path)));
        };
        match path.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => home.to_path_buf(),
        }
    } else if let Some(url) = path.strip_prefix("file://") {
        file_url_path(url, input)?
    } else {
        PathBuf::from(path)
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    Ok(normalize_lexically(&absolute))
}

/// The home directory, for an `input` that [`resolve_path`] expands with
/// it (`~`, `~/…`, also after an `@`): other paths do not look it up.
pub(crate) fn home_for(input: &str, fs: &dyn FileSystem) -> Option<PathBuf> {
    input
        .strip_prefix('@')
        .unwrap_or(input)
        .starts_with('~')
        .then(|| fs.home_dir())
        .flatten()
}

/// Drops `.` components and `..` at the root (`/..` is `/`), and keeps every
/// other `..`: `link/../x` is resolved by the file system like the kernel
/// does (through the symlink, to the link target's parent), not folded into
/// `x`, which could be a different file than a shell would touch.
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if out.parent().is_some() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// The path of a `file://` URL (the part after the scheme is `url`).
fn file_url_path(url: &str, input: &str) -> Result<PathBuf, ToolError> {
    let malformed = |why: &str| ToolError::new(messages::invalid_file_url(input, why));
    let url = url.split(['?', '#']).next().unwrap_or_default();
    let path = if url.starts_with('/') {
        url
    } else if let Some(rest) = url.strip_prefix("localhost") {
        if !rest.starts_with('/') {
            return Err(malformed("it has no path"));
        }
        rest
    } else {
        return Err(malformed("a host other than localhost is not supported"));
    };
    let bytes = percent_decode(path).ok_or_else(|| malformed("bad percent-encoding"))?;
    if bytes.contains(&0) {
        return Err(malformed("it contains an encoded NUL byte"));
    }
    if path.to_ascii_lowercase().contains("%2f") {
        return Err(malformed("it must not contain an encoded /"));
    }
    let text = String::from_utf8(bytes).map_err(|_| malformed("it decodes to invalid UTF-8"))?;
    Ok(PathBuf::from(OsString::from(text)))
}

/// Decodes `%XX` escapes; `None` when a `%` is not followed by two hex digits.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = bytes.get(index + 1..index + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    Some(out)
}

/// Resolves a path for `read`, trying the variants real file systems use.
///
/// When the resolved path does not exist, these are tried in order and the
/// first that exists wins: U+202F before `AM.`/`PM.` (macOS screenshots, any
/// case), NFD (macOS file names), U+2019 for `'`, and NFD with U+2019. The
/// variants apply to the whole path. Without a match the resolved path is
/// returned and the caller reports it missing.
///
/// # Errors
///
/// Those of [`resolve_path`].
pub async fn resolve_read_path(
    input: &str,
    cwd: &Path,
    fs: &dyn FileSystem,
) -> Result<PathBuf, ToolError> {
    let resolved = resolve_path(input, cwd, home_for(input, fs).as_deref())?;
    let Some(text) = resolved.to_str() else {
        return Ok(resolved);
    };
    // Without another spelling the answer is the resolved path whether it
    // exists or not: no lookup (most paths; the read looks the file up anyway).
    if !has_variants(text) {
        return Ok(resolved);
    }
    if fs.metadata(&resolved).await.is_ok() {
        return Ok(resolved);
    }
    for variant in read_variants(text) {
        if variant != text {
            let candidate = PathBuf::from(variant);
            if fs.metadata(&candidate).await.is_ok() {
                return Ok(candidate);
            }
        }
    }
    Ok(resolved)
}

/// Whether some spelling of [`read_variants`] differs from `path`: an ASCII
/// path is its own NFD, so only a `'` or a ` AM.`/` PM.` (any case) give one.
fn has_variants(path: &str) -> bool {
    !path.is_ascii()
        || path.contains('\'')
        || path.as_bytes().windows(4).any(|w| {
            w[0] == b' '
                && matches!(w[1], b'a' | b'A' | b'p' | b'P')
                && matches!(w[2], b'm' | b'M')
                && w[3] == b'.'
        })
}

/// The alternative spellings of §2.3, in the order they are tried.
fn read_variants(path: &str) -> [String; 4] {
    let nfd: String = path.nfd().collect();
    let curly = |text: &str| text.replace('\'', "\u{2019}");
    let nfd_curly = curly(&nfd);
    [narrow_space_before_am_pm(path), nfd, curly(path), nfd_curly]
}

/// Replaces the space in every ` AM.` / ` PM.` (any case) with U+202F.
fn narrow_space_before_am_pm(path: &str) -> String {
    let chars: Vec<char> = path.chars().collect();
    let mut out = String::with_capacity(path.len() + 8);
    for (index, &c) in chars.iter().enumerate() {
        let am_pm = c == ' '
            && matches!(chars.get(index + 1), Some('a' | 'A' | 'p' | 'P'))
            && matches!(chars.get(index + 2), Some('m' | 'M'))
            && chars.get(index + 3) == Some(&'.');
        out.push(if am_pm { '\u{202F}' } else { c });
    }
    out
}

/// One line describing a file-system failure, naming its path
/// (`Permission denied: /etc/shadow`), without the raw OS dump.
pub(crate) fn describe_fs_error(error: &FsError) -> String {
    let path = error.path.display();
    let text = match (error.kind, &error.detail) {
        (FsErrorKind::Protected, Some(reason)) => return clip_middle(reason, 400),
        (FsErrorKind::OutsideRoots, _) => messages::outside_roots(path),
        (FsErrorKind::SpecialFile, Some(kind)) => messages::special_file(path, kind),
        _ => error.to_string(),
    };
    let text = clip_middle(&text, 300);
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

/// The nearest ancestor of `path` (itself included) that `probe` finds, what
/// it found, and the components below it that do not exist yet. A probe
/// error whose kind `missing` accepts means "does not exist, try the parent";
/// any other error is returned. `None`: not even the root was found.
///
/// The one walk behind the queue key ([`crate::queue`], probing with
/// realpath) and the workspace check ([`crate::policy`], probing with lstat).
pub(crate) async fn nearest_existing<T, F, Fut>(
    path: &Path,
    missing: fn(FsErrorKind) -> bool,
    probe: F,
) -> Result<Option<(T, PathBuf)>, FsError>
where
    F: Fn(PathBuf) -> Fut,
    Fut: std::future::Future<Output = Result<T, FsError>>,
{
    let mut ancestor = path;
    loop {
        match probe(ancestor.to_path_buf()).await {
            Ok(found) => {
                let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
                return Ok(Some((found, rest.to_path_buf())));
            }
            Err(error) if missing(error.kind) => match ancestor.parent() {
                Some(parent) if ancestor.file_name().is_some() => ancestor = parent,
                _ => return Ok(None),
            },
            Err(error) => return Err(error),
        }
    }
}

/// Linux's `PATH_MAX`: no longer path can be opened.
const MAX_PATH_BYTES: usize = 4096;

/// A model-sent value quoted for an error message: at most 60 characters.
pub(crate) fn clip_for_message(text: &str) -> String {
    format!("\"{}\"", clip_chars(text, 60))
}

/// `text` cut to `max` characters, with `…` when something was cut.
pub(crate) fn clip_chars(text: &str, max: usize) -> String {
    let clipped: String = text.chars().take(max).collect();
    if clipped.len() < text.len() {
        format!("{clipped}…")
    } else {
        clipped
    }
}

/// `text` with its middle replaced by `…` when it is longer than `max` characters.
pub(crate) fn clip_middle(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max / 2).collect();
    let tail: String = text.chars().skip(count - max / 3).collect();
    format!("{head}…{tail}")
}

/// Up to three names in `path`'s directory that look like its file name.
///
/// Names are compared without their extensions, so a shared `.txt` does not
/// make `ab.txt` look like `note.txt`, while `main.py` still answers `main.rs`.
pub(crate) async fn similar_siblings(fs: &dyn FileSystem, path: &Path) -> Vec<String> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let Ok(entries) = fs.read_dir(parent).await else {
        return Vec::new();
    };
    let stem = |name: &Path| {
        name.file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let names: Vec<String> = entries
        .iter()
        .map(|entry| entry.name.to_string_lossy().into_owned())
        .collect();
    let stems: Vec<String> = names.iter().map(|name| stem(Path::new(name))).collect();
    let candidates: Vec<&str> = stems.iter().map(String::as_str).collect();
    let mut similar = Vec::new();
    for found in pith_text::similar_names(&stem(Path::new(name)), &candidates, 3) {
        for (candidate, full) in stems.iter().zip(&names) {
            if candidate == found && similar.len() < 3 && !similar.contains(full) {
                similar.push(full.clone());
            }
        }
    }
    similar
}

/// The "File not found" message with the similar names of its directory, if any.
pub(crate) async fn not_found_message(fs: &dyn FileSystem, lead: String, path: &Path) -> String {
    let similar = similar_siblings(fs, path).await;
    match (similar.is_empty(), path.parent()) {
        (false, Some(parent)) => messages::similar_names(&lead, parent.display(), &similar),
        _ => lead,
    }
}

/// How long a miss may spend on its hint: waiting for the session's turn (see
/// `Session::hint_turn`) and looking for its file name under the working directory.
const HINT_BUDGET: std::time::Duration = std::time::Duration::from_millis(500);

/// [`not_found_message`], and when no sibling looks alike, up to three paths under the
/// working directory that have the missing file's exact name (the common miss is a
/// dropped `src/`). The search respects ignore files. The session looks for two misses'
/// hints at a time; a miss that has waited, and searched, half a second in all gets
/// what was found by then (the bare `lead` if its turn never came).
pub(crate) async fn not_found_hint(
    context: &crate::tool::ToolContext,
    lead: String,
    path: &Path,
) -> String {
    let deadline = tokio::time::Instant::now() + HINT_BUDGET;
    let Ok(Some(_turn)) = tokio::time::timeout_at(deadline, context.session.hint_turn()).await
    else {
        return lead;
    };
    let fs = &*context.env.fs;
    let message = not_found_message(fs, lead, path).await;
    if message.contains('\n') {
        return message;
    }
    let elsewhere = elsewhere(context, path, deadline).await;
    if elsewhere.is_empty() {
        return message;
    }
    messages::did_you_mean(&message, &elsewhere)
}

/// Paths below the working directory (relative to it) named like `path`.
async fn elsewhere(
    context: &crate::tool::ToolContext,
    path: &Path,
    deadline: tokio::time::Instant,
) -> Vec<String> {
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
        return Vec::new();
    };
    // Every glob character taken literally.
    let pattern: String = name
        .chars()
        .map(|c| match c {
            '*' | '?' | '[' | ']' | '{' | '}' | '\\' => format!("[{c}]"),
            c => c.to_string(),
        })
        .collect();
    let request = pith_env::FindRequest {
        pattern,
        root: context.cwd.clone(),
        limit: 3,
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let search = context.env.search.find(request, cancel.clone());
    let found = match tokio::time::timeout_at(deadline, search).await {
        Ok(Ok(output)) => output.entries,
        Ok(Err(_)) => Vec::new(),
        Err(_) => {
            cancel.cancel();
            Vec::new()
        }
    };
    found
        .into_iter()
        // Smart case matches `readme.md` to `README.md`; only the exact name is a hint.
        .filter(|entry| !entry.is_dir && entry.path.rsplit('/').next() == Some(name))
        .map(|entry| entry.path)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(input: &str) -> Result<PathBuf, ToolError> {
        resolve_path(
            input,
            Path::new("/work/project"),
            Some(Path::new("/home/me")),
        )
    }

    fn ok(input: &str) -> String {
        resolve(input).unwrap().to_string_lossy().into_owned()
    }

    #[test]
    fn joins_relative_paths_to_the_working_directory_and_folds_dots() {
        assert_eq!(ok("src/main.rs"), "/work/project/src/main.rs");
        assert_eq!(ok("./a/../b//c/"), "/work/project/a/../b/c");
        assert_eq!(ok("/../../etc"), "/etc");
        assert_eq!(ok("link/../x"), "/work/project/link/../x");
        assert_eq!(ok("/etc/./hosts"), "/etc/hosts");
        assert_eq!(ok(""), "/work/project");
    }

    #[test]
    fn strips_one_leading_at_and_turns_unicode_spaces_into_spaces() {
        assert_eq!(ok("@foo.ts"), "/work/project/foo.ts");
        assert_eq!(ok("@@foo.ts"), "/work/project/@foo.ts");
        assert_eq!(ok("a\u{00A0}b\u{202F}c\u{3000}d"), "/work/project/a b c d");
    }

    #[test]
    fn expands_only_a_bare_tilde_and_tilde_slash() {
        assert_eq!(ok("~"), "/home/me");
        assert_eq!(ok("~/notes.md"), "/home/me/notes.md");
        assert_eq!(ok("@~/notes.md"), "/home/me/notes.md");
        assert_eq!(ok("~draft.md"), "/work/project/~draft.md");
        assert_eq!(ok("~user/x"), "/work/project/~user/x");
        let error = resolve_path("~", Path::new("/"), None).unwrap_err();
        assert!(
            error.message.contains("no home directory"),
            "{}",
            error.message
        );
    }

    #[test]
    fn decodes_file_urls_and_rejects_malformed_ones() {
        assert_eq!(ok("file:///tmp/a%20b.txt"), "/tmp/a b.txt");
        assert_eq!(ok("file://localhost/tmp/x"), "/tmp/x");
        assert_eq!(ok("file:///tmp/caf%C3%A9"), "/tmp/café");
        assert_eq!(ok("/tmp/100%.txt"), "/tmp/100%.txt");
        for bad in [
            "file:///%E0%A4%A",
            "file:///a%zz",
            "file://host/x",
            "file:///a%2Fb",
        ] {
            let error = resolve(bad).unwrap_err();
            assert!(
                error.message.starts_with("Invalid file URL"),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn refuses_a_nul_byte() {
        let error = resolve("a\0b").unwrap_err();
        assert!(error.message.contains("NUL byte"), "{}", error.message);
    }

    #[test]
    fn has_variants_whenever_a_read_variant_differs() {
        for path in [
            "/s/Shot 10.22.33 am.png'é",
            "/work/project/src/main.rs",
            "/a/it's.txt",
            "/s/Shot 1 PM.png",
            "/s/Shot 1 pM.png",
            "/s/Shot 1 am",
            "/s/Shot 1 am .png",
            "/s/x am.",
            "/s/xam.png",
            "/s/café.txt",
            "/s/cafe\u{301}.txt",
            "/s/\u{2019}.txt",
            "/s/a\u{202F}am.png",
            "/s/ Am.",
            "",
        ] {
            let differs = read_variants(path).iter().any(|variant| variant != path);
            // A path said to have none is resolved without a lookup.
            assert!(has_variants(path) || !differs, "{path:?}");
        }
        for plain in [
            "/work/project/src/main.rs",
            "/s/xam.png",
            "/s/Shot 1 am",
            "",
        ] {
            assert!(!has_variants(plain), "{plain:?}");
        }
        assert!(has_variants("/s/caf\u{e9}.txt"));
    }

    #[test]
    fn builds_read_variants_in_reference_order() {
        let [am_pm, nfd, curly, both] = read_variants("/s/Shot 10.22.33 am.png'é");
        assert_eq!(am_pm, "/s/Shot 10.22.33\u{202F}am.png'é");
        assert_eq!(nfd, "/s/Shot 10.22.33 am.png'e\u{301}");
        assert_eq!(curly, "/s/Shot 10.22.33 am.png\u{2019}é");
        assert_eq!(both, "/s/Shot 10.22.33 am.png\u{2019}e\u{301}");
        assert_eq!(
            narrow_space_before_am_pm("a PM. b Pm. c pmx"),
            "a\u{202F}PM. b\u{202F}Pm. c pmx"
        );
    }
}
