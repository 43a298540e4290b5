//! Giving back the program's start-up pages before a large argument is read.
//!
//! Any `pith call` maps about 10 MiB of its executable and shared libraries by the
//! time it reads its arguments: the dynamic loader reads the relocation tables,
//! start-up runs the argument parser, the tracing filter, the tool definitions and
//! their schemas, and every page of code it touches maps its neighbours too (the
//! kernel's fault-around, 64 KiB or a whole large folio a fault). A `write` of
//! 50 MiB holds its content once, so these pages are what separates its peak RSS
//! from the content's size (see docs/bounds.md).
//!
//! Most of them are not needed again. [`release_clean_file_pages`] unmaps, from
//! this process only, the pages of every read-only file mapping that holds no
//! private copy of a page (`Anonymous: 0` in `/proc/self/smaps`): such a mapping's
//! pages are the file's pages in the page cache, so `MADV_DONTNEED` loses nothing
//! and the code that runs afterwards maps its pages again (minor faults, no I/O).
//! Mappings with private copies (relocated data made read-only, a debugger's
//! breakpoints, uprobes) and writable ones are left alone.

/// Unmaps the pages of this process's clean read-only file mappings (code,
/// read-only data of the executable and its libraries); returns how many bytes
/// were resident in them. Best effort: anything unexpected (no `/proc`, an
/// unparsable line, a refused `madvise`) leaves that mapping as it is.
#[cfg(target_os = "linux")]
pub(crate) fn release_clean_file_pages() -> u64 {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let mut released = 0;
    for mapping in clean_file_mappings(&smaps) {
        let Ok(start) = usize::try_from(mapping.start) else {
            continue;
        };
        let Ok(len) = usize::try_from(mapping.end - mapping.start) else {
            continue;
        };
        // SAFETY: the range is a whole mapping of this process that is neither
        // writable nor holds private (anonymous) pages: its pages are the file's
        // own, and a later access maps them again from the page cache. No Rust
        // object owns this memory; code and constants in it stay valid.
        let status = unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
        if status == 0 {
            released += mapping.rss_kib * 1024;
        }
    }
    released
}

/// Elsewhere there is nothing to release.
#[cfg(not(target_os = "linux"))]
pub(crate) fn release_clean_file_pages() -> u64 {
    0
}

/// One mapping of `/proc/self/smaps` that may be released.
#[derive(Debug, PartialEq)]
struct Mapping {
    start: u64,
    end: u64,
    rss_kib: u64,
}

/// The mappings of `smaps` (the text of `/proc/PID/smaps`) that map a file
/// read-only (no `w`), privately or shared, with resident pages and none of
/// them a private copy (`Anonymous: 0`); kernel-provided ones (`[vdso]`) are not.
fn clean_file_mappings(smaps: &str) -> Vec<Mapping> {
    let mut found = Vec::new();
    let mut current: Option<(Mapping, bool)> = None;
    let mut anonymous: Option<u64> = None;
    let mut finish = |current: Option<(Mapping, bool)>, anonymous: Option<u64>| {
        if let Some((mapping, true)) = current
            && anonymous == Some(0)
            && mapping.rss_kib > 0
        {
            found.push(mapping);
        }
    };
    for line in smaps.lines() {
        if let Some(header) = header(line) {
            finish(current.take(), anonymous.take());
            current = Some(header);
        } else if let Some((name, value)) = line.split_once(':') {
            let kib = || value.trim().strip_suffix("kB")?.trim().parse::<u64>().ok();
            match name {
                "Rss" => {
                    if let Some((mapping, _)) = current.as_mut() {
                        mapping.rss_kib = kib().unwrap_or(0);
                    }
                }
                "Anonymous" => anonymous = kib(),
                _ => {}
            }
        }
    }
    finish(current, anonymous);
    found
}

/// A mapping's header line (`start-end perms offset dev inode path`): the
/// mapping, and whether it is a candidate (a file, not writable); `None` for
/// the other lines of `smaps`.
fn header(line: &str) -> Option<(Mapping, bool)> {
    let mut fields = line.split_ascii_whitespace();
    let (start, end) = fields.next()?.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    let perms = fields.next()?;
    if perms.len() != 4 {
        return None;
    }
    let _offset = fields.next()?;
    let _device = fields.next()?;
    let inode = fields.next()?.parse::<u64>().ok()?;
    let path = fields.next().unwrap_or("");
    let candidate = inode != 0 && path.starts_with('/') && !perms.contains('w') && end > start;
    Some((
        Mapping {
            start,
            end,
            rss_kib: 0,
        },
        candidate,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0c0000000-55d0c03b5000 r--p 00000000 fe:00 1234 /usr/bin/pith
Size:               3796 kB
Rss:                1900 kB
Anonymous:             0 kB
55d0c03b5000-55d0c0e6e000 r-xp 003b4000 fe:00 1234 /usr/bin/pith
Size:              11000 kB
Rss:                7800 kB
Anonymous:             0 kB
55d0c0e6f000-55d0c0eed000 r--p 00e6d000 fe:00 1234 /usr/bin/pith
Rss:                 500 kB
Anonymous:           500 kB
55d0c0eed000-55d0c0eef000 rw-p 00eeb000 fe:00 1234 /usr/bin/pith
Rss:                   8 kB
Anonymous:             8 kB
7f0000000000-7f0000100000 rw-p 00000000 00:00 0 
Rss:                1024 kB
Anonymous:          1024 kB
7f0000200000-7f0000300000 r-xp 00000000 fe:00 99 /usr/lib/libc.so.6
Rss:                   0 kB
Anonymous:             0 kB
7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0                          [vdso]
Rss:                   4 kB
Anonymous:             0 kB
7f0000400000-7f0000500000 r-xp 00000000 fe:00 98 /usr/lib/libm.so.6 (deleted)
Rss:                 320 kB
Anonymous:             4 kB
7f0000600000-7f0000700000 r--s 00000000 fe:00 97 /tmp/shared map
Rss:                  64 kB
Anonymous:             0 kB
";

    #[test]
    fn only_clean_read_only_file_mappings_with_resident_pages_are_released() {
        let found = clean_file_mappings(SMAPS);
        assert_eq!(
            found,
            [
                Mapping {
                    start: 0x55d0c0000000,
                    end: 0x55d0c03b5000,
                    rss_kib: 1900
                },
                Mapping {
                    start: 0x55d0c03b5000,
                    end: 0x55d0c0e6e000,
                    rss_kib: 7800
                },
                Mapping {
                    start: 0x7f0000600000,
                    end: 0x7f0000700000,
                    rss_kib: 64
                },
            ]
        );
    }

    #[test]
    fn a_mapping_without_an_anonymous_line_is_kept() {
        let smaps =
            "55d0c0000000-55d0c03b5000 r-xp 00000000 fe:00 1234 /usr/bin/pith\nRss: 100 kB\n";
        assert!(clean_file_mappings(smaps).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn releasing_this_process_pages_keeps_it_running() {
        let released = release_clean_file_pages();
        assert!(released > 0, "a test binary has resident code pages");
        // The code and constants still work after their pages were given back.
        assert_eq!(format!("{}", 6 * 7), "42");
    }
}
