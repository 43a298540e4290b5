//! Scans of a local file through memory-mapped windows, kept safe against the
//! file shrinking while it is mapped.
//!
//! Counting the lines of a large file through `read(2)` costs the kernel a copy
//! of every byte out of the page cache; a mapped window is scanned where the
//! pages are (a deep page of a 1 GiB file scans ~600 MiB). Windows are at most
//! [`WINDOW_BYTES`] and unmapped after each scan, so the file's pages count in
//! the process's RSS only one window at a time.
//!
//! **A file truncated while it is mapped.** Touching a mapped page past the new
//! end of the file raises `SIGBUS`, whose default action kills the process. A
//! `SIGBUS` handler (installed once, on the first scan) checks whether the
//! faulting address lies in a window being scanned (each scan registers its
//! window in a small table, [`SLOTS`]); if it does, it maps an anonymous zero
//! page over the faulting page and notes the hit, and the scan goes on over
//! zeros. The scan then reports the file as changed ([`Scanned::Shrank`]) and
//! its result is dropped: the caller returns an error, never data of a file
//! that changed under it. A fault anywhere else goes to the handler that was
//! installed before (or takes its default course). When every slot is in use,
//! the window is read with `pread` instead.

use std::fs::File;
use std::io;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The largest window mapped at once.
pub(super) const WINDOW_BYTES: usize = 4 * 1024 * 1024;

/// What a scan of a window gave.
pub(super) enum Scanned<T> {
    /// The scan's result.
    Done(T),
    /// The file shrank while the window was scanned: the result is void.
    Shrank,
}

/// A window being scanned: `start..end` addresses, and whether a page of it
/// faulted (the file shrank).
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    hit: AtomicBool,
}

#[expect(
    clippy::declare_interior_mutable_const,
    reason = "the initial value of each slot of SLOTS, copied into the array"
)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    hit: AtomicBool::new(false),
};

/// Windows scanned at once, process-wide (more fall back to `pread`).
static SLOTS: [Slot; 64] = [FREE; 64];
/// The page size, set before the handler is installed.
static PAGE: AtomicUsize = AtomicUsize::new(4096);
/// The `SIGBUS` disposition before ours, to pass other faults on to.
static mut PREVIOUS: Option<libc::sigaction> = None;
static INSTALL: Once = Once::new();
/// Whether the handler is in place (mapping is not used without it).
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Runs `scan` over the `len` bytes of `file` from `offset` (the caller keeps
/// them within the file's size as it last knew it), mapped when it can be.
pub(super) fn scan<T>(
    file: &File,
    offset: u64,
    len: usize,
    scan: impl FnOnce(&[u8]) -> T,
) -> io::Result<Scanned<T>> {
    install();
    if len == 0 {
        return Ok(Scanned::Done(scan(&[])));
    }
    let slot = INSTALLED
        .load(Ordering::Acquire)
        .then(|| {
            SLOTS.iter().find(|slot| {
                slot.start
                    .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            })
        })
        .flatten();
    let Some(slot) = slot else {
        return read_window(file, offset, len, scan);
    };
    let released = Release(slot);
    // SAFETY: the map is read only through the slice below, while the slot is
    // registered; a page that stops being backed by the file (it was truncated)
    // faults into `on_sigbus`, which backs it with zeros and records the hit, so
    // the access completes and the result is discarded (`Scanned::Shrank`).
    let map = unsafe {
        memmap2::MmapOptions::new()
            .offset(offset)
            .len(len)
            .map(file)?
    };
    let _ = map.advise(memmap2::Advice::Sequential);
    let bytes: &[u8] = &map;
    let start = bytes.as_ptr() as usize;
    // The page-aligned start of the mapping (memmap2 maps from a page boundary).
    let page = PAGE.load(Ordering::Relaxed);
    released.0.hit.store(false, Ordering::Release);
    released.0.end.store(start + len, Ordering::Release);
    released
        .0
        .start
        .store(start & !(page - 1), Ordering::Release);
    let result = scan(bytes);
    let hit = released.0.hit.load(Ordering::Acquire);
    drop(map);
    drop(released);
    Ok(if hit {
        Scanned::Shrank
    } else {
        Scanned::Done(result)
    })
}

/// Frees a slot when the scan ends (also if `scan` panics).
struct Release(&'static Slot);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.end.store(0, Ordering::Release);
        self.0.start.store(0, Ordering::Release);
    }
}

/// The window read into a buffer (no slot free, or no handler).
fn read_window<T>(
    file: &File,
    offset: u64,
    len: usize,
    scan: impl FnOnce(&[u8]) -> T,
) -> io::Result<Scanned<T>> {
    use std::os::unix::fs::FileExt;
    let mut buffer = vec![0; len];
    let mut filled = 0;
    while filled < len {
        match file.read_at(&mut buffer[filled..], offset + filled as u64)? {
            0 => return Ok(Scanned::Shrank),
            read => filled += read,
        }
    }
    Ok(Scanned::Done(scan(&buffer)))
}

/// Installs the `SIGBUS` handler once.
fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if let Ok(page) = usize::try_from(page)
            && page.is_power_of_two()
        {
            PAGE.store(page, Ordering::Relaxed);
        }
        // SAFETY: a zeroed sigaction is a valid value to fill in; the handler
        // is an `extern "C"` function of the SA_SIGINFO signature; PREVIOUS is
        // written once here, before the handler that reads it can run.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut previous) == 0 {
                *std::ptr::addr_of_mut!(PREVIOUS) = Some(previous);
                INSTALLED.store(true, Ordering::Release);
            }
        }
    });
}

/// The `SIGBUS` handler: a fault in a registered window gets a zero page (and
/// the window's scan is void); any other goes to the previous disposition.
extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let address = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for slot in &SLOTS {
        let start = slot.start.load(Ordering::Acquire);
        if start == 0 || start == usize::MAX {
            continue;
        }
        if address >= start && address < slot.end.load(Ordering::Acquire) {
            let at = address & !(page - 1);
            // SAFETY: the page lies in the window's own mapping, which is
            // replaced (MAP_FIXED) by a private zero page; mmap is a plain
            // system call, safe to make in a signal handler.
            let mapped = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if mapped != libc::MAP_FAILED {
                slot.hit.store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not ours: what was there before.
    // SAFETY: PREVIOUS was set before this handler was installed and is not
    // written again; the previous handler is called with the arguments its
    // flags say it takes.
    unsafe {
        let Some(previous) = *std::ptr::addr_of!(PREVIOUS) else {
            return;
        };
        let handler = previous.sa_sigaction;
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            // Restored, the fault repeats on return and takes its default course.
            libc::sigaction(libc::SIGBUS, &previous, std::ptr::null_mut());
        } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
            let function: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(handler);
            function(signal, info, context);
        } else {
            let function: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
            function(signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(len: usize) -> (tempfile::NamedTempFile, File) {
        let mut temp = tempfile::NamedTempFile::new().unwrap();
        let line = b"0123456789abcde\n";
        for _ in 0..len / line.len() {
            temp.write_all(line).unwrap();
        }
        temp.flush().unwrap();
        let file = File::open(temp.path()).unwrap();
        (temp, file)
    }

    #[test]
    fn a_mapped_window_is_scanned_in_place() {
        let (_temp, file) = file_of(1 << 20);
        let count = scan(&file, 4096, 64 * 1024, |bytes| {
            memchr::memchr_iter(b'\n', bytes).count()
        })
        .unwrap();
        assert!(matches!(count, Scanned::Done(4096)));
    }

    #[test]
    fn a_file_truncated_while_mapped_voids_the_scan_and_the_process_lives() {
        let (temp, file) = file_of(1 << 20);
        let scanned = scan(&file, 0, 1 << 20, |bytes| {
            // Cut the file under the map, then touch every page of it.
            std::fs::OpenOptions::new()
                .write(true)
                .open(temp.path())
                .unwrap()
                .set_len(8192)
                .unwrap();
            bytes
                .iter()
                .step_by(4096)
                .map(|&b| u64::from(b))
                .sum::<u64>()
        })
        .unwrap();
        assert!(matches!(scanned, Scanned::Shrank));
        // The next scan of what is left is whole again.
        let left = scan(&file, 0, 8192, |bytes| bytes.len()).unwrap();
        assert!(matches!(left, Scanned::Done(8192)));
    }
}
