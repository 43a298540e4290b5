//! MCP roots: the client's idea of the workspace.
//!
//! The first root that is a directory becomes the session's working directory. Every root
//! becomes an allowed root of the workspace policy and a writable directory of the sandbox.

use std::path::PathBuf;

use pith_tools::ToolSet;

/// The workspace a client's roots describe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClientWorkspace {
    /// The working directory: the first root that is an existing directory.
    pub(crate) cwd: PathBuf,
    /// Every `file://` root, in the client's order.
    pub(crate) roots: Vec<PathBuf>,
}

/// Reads the client's root URIs; `None` when none is a usable directory.
pub(crate) async fn client_workspace(
    toolset: &ToolSet,
    uris: &[String],
) -> Option<ClientWorkspace> {
    let paths: Vec<PathBuf> = uris.iter().filter_map(|uri| file_uri_path(uri)).collect();
    let fs = &toolset.env().fs;
    for path in &paths {
        let Ok(real) = fs.canonicalize(path).await else {
            continue;
        };
        if fs.metadata(&real).await.is_ok_and(|m| m.is_dir()) {
            return Some(ClientWorkspace {
                cwd: real,
                roots: paths.clone(),
            });
        }
    }
    None
}

/// The tool set for a client's workspace: `base` with another working directory, sharing
/// its environment, configuration, tool selection and mutation queue.
pub(crate) fn toolset_for(base: &ToolSet, workspace: &ClientWorkspace) -> ToolSet {
    let names: Vec<&str> = base.definitions().iter().map(|d| d.name).collect();
    let mut config = base.config().as_ref().clone();
    // The client's roots are allowed roots too, for the file tools and the sandbox.
    if let Some(policy) = &mut config.workspace {
        for root in &workspace.roots {
            policy.add_root(root.clone());
        }
    }
    for root in &workspace.roots {
        if !config.sandbox.writable.contains(root) {
            config.sandbox.writable.push(root.clone());
        }
    }
    ToolSet::builder(base.env().clone())
        .cwd(&workspace.cwd)
        .config(config)
        .tools(&names)
        .queue(base.queue().clone())
        .build()
}

/// The path of a `file://` URI (`file:///a%20b` → `/a b`); `None` for other schemes.
pub(crate) fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` and `file:///x` name the same path; other hosts are remote.
    let path = match rest.strip_prefix("localhost") {
        Some(path) => path,
        None => rest,
    };
    if !path.starts_with('/') {
        return None;
    }
    let bytes = percent_decode(path)?;
    Some(PathBuf::from(String::from_utf8(bytes).ok()?))
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_file_uris_and_ignores_other_schemes() {
        assert_eq!(
            file_uri_path("file:///tmp/a%20b"),
            Some(PathBuf::from("/tmp/a b"))
        );
        assert_eq!(
            file_uri_path("file://localhost/srv"),
            Some(PathBuf::from("/srv"))
        );
        assert_eq!(
            file_uri_path("file:///caf%C3%A9"),
            Some(PathBuf::from("/café"))
        );
        assert_eq!(file_uri_path("https://example.com/x"), None);
        assert_eq!(file_uri_path("file://host/share"), None);
        assert_eq!(file_uri_path("file:///bad%zz"), None);
    }
}
