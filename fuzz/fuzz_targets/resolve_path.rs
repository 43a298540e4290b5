//! Fuzzes path resolution: any input string against a fixed cwd and home. Never
//! panics; a resolved path is absolute and contains no NUL.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pith_tools::resolve_path;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let cwd = Path::new("/work/project");
    for home in [Some(Path::new("/home/user")), None] {
        if let Ok(path) = resolve_path(input, cwd, home) {
            assert!(path.is_absolute(), "{input:?} -> {path:?}");
            assert!(!path.as_os_str().as_encoded_bytes().contains(&0), "{input:?}");
        }
    }
});
