//! `libamd_interpose.so`: preloaded into an unmodified program (`LD_PRELOAD`), it shows
//! the program amd-mockgpu's GPUs behind `/dev/kfd`: the same mock driver, engines and
//! RDNA3 interpreter the Rust tests use, reached through the C library calls a real
//! KFD client makes.
//!
//! ```text
//! client ──open("/dev/kfd")──▶ exports ──▶ MockSys::open   (a placeholder fd is the client's)
//!        ──ioctl(fd, …)──────▶ exports ──▶ MockSys::ioctl  (argument structs in place)
//!        ──mmap(fd, …)───────▶ exports ──▶ MockSys::mmap   (ranges remembered for munmap)
//!        ──open("/sys/…kfd…")─▶ exports ──▶ the mock's topology, written out once to a
//!                                          directory under $TMPDIR at first use
//!        ──*doorbell = wptr──▶ (a plain store) ─ the doorbell watcher thread notices
//!                                          the page changed ─▶ Sys::doorbell_written
//!        ──anything else─────▶ the real C library (dlsym RTLD_NEXT)
//! ```
//!
//! Configuration, read at first use: `AMD_MOCK_GPUS` (GPUs, default 1),
//! `AMD_MOCK_PROFILE` (`gfx1100`, the default, `gfx1201`, `gfx942`, `gfx942-spx` or `gfx1030`), `AMD_MOCK_VRAM_MIB`
//! (VRAM per GPU), `AMD_MOCK_LARGE_BAR=0` (a GPU whose VRAM the CPU sees only 256 MiB
//! of: VRAM is then allocated GPU-only), `AMD_MOCK_SANITIZE=1` (the mock's sanitizer), `AMD_INTERPOSE_LOG=1` (a line on stderr for each device opened
//! and each ioctl or mapping the mock refused: what a client did that the mock does
//! not do).
//!
//! Calls the mock makes into the C library itself (its host files, its memory) go
//! straight to the real functions: a thread-local flag marks the time spent inside
//! the mock, and the doorbell watcher runs with it set.

#![deny(unsafe_code)]
// The unit tests build without the exported functions (they would interpose the test
// binary itself), which leaves their helpers unused there.
#![cfg_attr(test, allow(dead_code))]

mod doorbells;
mod exports;
mod real;

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

use amd_kfd::sys::{Fd, OpenMode, Sys};
use amd_mockgpu::{GpuProfile, MockConfig, MockSys};
use parking_lot::Mutex;

/// File descriptors the table covers (a client's descriptors above it are never the
/// mock's: placeholders are opened below it or refused).
pub const MAX_FDS: usize = 1 << 16;

/// Most GPUs `AMD_MOCK_GPUS` asks for.
pub const MAX_GPUS: usize = 8;

/// Paths the mock answers for; everything else is the host's.
const VIRTUAL: &[&[u8]] = &[
    b"/dev/kfd",
    b"/dev/dri/renderD",
    b"/sys/devices/virtual/kfd",
    b"/sys/class/kfd",
    b"/sys/class/drm",
    b"/sys/dev/char/226:",
    b"/sys/module/amdgpu",
    b"/proc/modules",
];

/// Whether `path` is one the mock answers for.
pub fn is_virtual(path: &[u8]) -> bool {
    VIRTUAL.iter().any(|p| {
        path.starts_with(p)
            && (*p != b"/dev/kfd" || path.len() == p.len())
            && (path.len() == p.len() || p.ends_with(b"D") || p.ends_with(b":") || path[p.len()] == b'/')
    })
}

/// Whether `path` is a device node the mock opens (`/dev/kfd`, a render node).
fn is_device(path: &[u8]) -> bool {
    path == b"/dev/kfd" || path.starts_with(b"/dev/dri/renderD")
}

/// What the interposer holds once a client touched a mock path.
pub struct State {
    mock: Arc<MockSys>,
    /// The mock's files, written out (`<root>/sys/…`, `<root>/dev/kfd`, …).
    root: PathBuf,
    /// Real descriptor → the mock's descriptor + 1 (0: not the mock's).
    fds: Box<[AtomicI32]>,
    /// Ranges the mock mapped for the client (munmap goes back to it).
    maps: Mutex<Vec<(usize, usize)>>,
    /// How many real descriptors (the placeholder and its duplicates) refer to each
    /// mock descriptor: the mock's is closed with the last.
    refs: Mutex<std::collections::BTreeMap<i32, u32>>,
    doorbells: doorbells::Watcher,
    /// The mock's sanitizer is on (`AMD_MOCK_SANITIZE=1`): the client's address-space
    /// reservations go through the mock, which leaves a guard gap after each.
    sanitize: bool,
}

static STATE: OnceLock<State> = OnceLock::new();

thread_local! {
    /// Set while this thread runs inside the mock (or is one of the interposer's own
    /// threads): its C library calls are the mock's own and go straight through.
    static INSIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Set in the child of a `fork`: the mock's threads and locks did not come along, so
/// everything goes to the C library there (a child that uses the GPU must exec, as a
/// KFD client must: KFD refuses the child's descriptors too).
static FORKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the calling thread is inside the mock (or in a forked child, where the
/// mock is not).
pub fn inside() -> bool {
    FORKED.load(Ordering::Relaxed) || INSIDE.with(|c| c.get()) || real::foreign_process()
}

extern "C" fn forked_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Runs `f` marked as inside the mock.
pub fn within<R>(f: impl FnOnce() -> R) -> R {
    let was = INSIDE.with(|c| c.replace(true));
    let r = f();
    INSIDE.with(|c| c.set(was));
    r
}

/// Writes `line` to stderr when `AMD_INTERPOSE_LOG=1`.
pub fn log(line: &str) {
    static ON: OnceLock<bool> = OnceLock::new();
    if *ON.get_or_init(|| std::env::var("AMD_INTERPOSE_LOG").is_ok_and(|v| v.trim() == "1")) {
        eprintln!("amd-interpose: {line}");
    }
}

/// The state if a client already touched a mock path.
pub fn state() -> Option<&'static State> {
    STATE.get()
}

/// The state, made at first use.
pub fn state_or_init() -> &'static State {
    STATE.get_or_init(|| within(State::new))
}

/// The mock's configuration from the environment.
pub fn config_from_env() -> MockConfig {
    let n = std::env::var("AMD_MOCK_GPUS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| (1..=MAX_GPUS).contains(&n))
        .unwrap_or(1);
    let mut profile = std::env::var("AMD_MOCK_PROFILE")
        .ok()
        .and_then(|name| GpuProfile::named(&name))
        .unwrap_or_else(GpuProfile::gfx1100);
    if let Some(mib) = std::env::var("AMD_MOCK_VRAM_MIB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&m| (64..=1 << 20).contains(&m))
    {
        profile.vram_size = mib << 20;
    }
    if std::env::var("AMD_MOCK_LARGE_BAR").is_ok_and(|v| v.trim() == "0") {
        profile = profile.without_large_bar();
    }
    MockConfig {
        gpus: vec![profile; n],
        kernel_log: Some(kernel_log),
        ..MockConfig::default()
    }
}

/// The mock's kernel log (a queue that stopped, and why) on stderr, where a client on
/// real hardware would find it in `dmesg`.
fn kernel_log(line: &str) {
    eprintln!("amd-interpose: {line}");
}

impl State {
    fn new() -> State {
        let config = config_from_env();
        let renders = config.gpus.len();
        let sanitize = config.sanitize;
        let mock = Arc::new(MockSys::new(config));
        // The process id and the time: a program this one execs (its own tree, the
        // same id) never shares a name with the tree this one's cleaner removes.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let root = std::env::temp_dir().join(format!("amd-interpose-{}-{nanos:08x}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        materialize(&mock, &root, renders);
        real::remove_at_exit(&root);
        real::at_fork_child(forked_child);
        real::spawn_cleaner(&root);
        State {
            mock,
            root,
            fds: (0..MAX_FDS).map(|_| AtomicI32::new(0)).collect(),
            maps: Mutex::new(Vec::new()),
            refs: Mutex::new(std::collections::BTreeMap::new()),
            doorbells: doorbells::Watcher::default(),
            sanitize,
        }
    }

    /// A queue the mock just made (its `CREATE_QUEUE` returned to this library, not
    /// yet to the client): the doorbell watcher takes its slot's value as the mock
    /// set it, so the client's first doorbell is a change even if it writes the value
    /// the slot held before the mock set it (an AQL queue's first index, 0).
    fn queue_created(&self, id: u32) {
        if let Some(slot) = self
            .mock
            .queues()
            .into_iter()
            .find(|q| q.id == id)
            .and_then(|q| q.doorbell)
        {
            self.doorbells.resync(slot as usize);
        }
    }

    /// Whether an anonymous `mmap` goes through the mock, for the sanitizer's guard
    /// gap after it: with the sanitizer on, at an address the kernel picks, and of
    /// the two kinds GPU clients make for buffers (an inaccessible reservation that a
    /// buffer is mapped over later; shared read-write memory for a host buffer).
    pub fn guards_anonymous(&self, addr: usize, prot: i32, flags: i32) -> bool {
        let anon = flags & libc::MAP_ANONYMOUS != 0 && flags & libc::MAP_FIXED == 0 && addr == 0;
        let reserve = prot == libc::PROT_NONE && flags & libc::MAP_NORESERVE != 0;
        let shared = prot == libc::PROT_READ | libc::PROT_WRITE && flags & libc::MAP_SHARED != 0;
        self.sanitize && anon && (reserve || shared)
    }

    /// The mock.
    pub fn mock(&self) -> &Arc<MockSys> {
        &self.mock
    }

    /// Where `path` (a mock path) lives in the written-out tree.
    pub fn rewrite(&self, path: &[u8]) -> PathBuf {
        let rel = String::from_utf8_lossy(path.strip_prefix(b"/").unwrap_or(path)).into_owned();
        self.root.join(rel)
    }

    /// The mock's descriptor behind real descriptor `fd`.
    pub fn mock_fd(&self, fd: i32) -> Option<Fd> {
        let slot = self.fds.get(usize::try_from(fd).ok()?)?;
        // Acquire: pairs with the Release store when the placeholder was recorded.
        match slot.load(Ordering::Acquire) {
            0 => None,
            m => Some(Fd(m - 1)),
        }
    }

    /// Opens device node `path` in the mock; records the placeholder `real_fd` the
    /// client gets. On failure, the errno.
    fn open_device(&self, path: &[u8], writable: bool, real_fd: i32) -> Result<(), i32> {
        let slot = usize::try_from(real_fd)
            .ok()
            .and_then(|i| self.fds.get(i))
            .ok_or(libc::EMFILE)?;
        let p = Path::new(std::str::from_utf8(path).map_err(|_| libc::ENOENT)?);
        let mode = if writable {
            OpenMode::ReadWrite
        } else {
            OpenMode::ReadOnly
        };
        let fd = within(|| self.mock.open(p, mode)).map_err(|e| e.errno as i32)?;
        *self.refs.lock().entry(fd.0).or_insert(0) += 1;
        // Release: the mock's descriptor is open before another thread can find it.
        slot.store(fd.0 + 1, Ordering::Release);
        Ok(())
    }

    /// Records that real descriptor `copy` (from `dup`, `dup2`, `dup3` or `fcntl`) is a
    /// duplicate of `of`, a mock device's placeholder.
    fn duplicated(&self, of: i32, copy: i32) {
        if copy == of {
            return;
        }
        // `dup2`/`dup3` onto a placeholder closed that one first.
        self.close_device(copy);
        let Some(m) = self.mock_fd(of) else { return };
        let Some(slot) = usize::try_from(copy).ok().and_then(|i| self.fds.get(i)) else {
            return;
        };
        *self.refs.lock().entry(m.0).or_insert(0) += 1;
        // Release: counted before another thread can find it.
        slot.store(m.0 + 1, Ordering::Release);
    }

    /// Forgets the descriptor behind `real_fd`; the mock's is closed with its last
    /// real descriptor.
    fn close_device(&self, real_fd: i32) {
        let Some(slot) = usize::try_from(real_fd).ok().and_then(|i| self.fds.get(i)) else {
            return;
        };
        let m = slot.swap(0, Ordering::AcqRel);
        if m == 0 {
            return;
        }
        let last = {
            let mut refs = self.refs.lock();
            match refs.get_mut(&(m - 1)) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    false
                }
                _ => {
                    refs.remove(&(m - 1));
                    true
                }
            }
        };
        if last {
            let _ = within(|| self.mock.close(Fd(m - 1)));
        }
    }

    /// Forgets every placeholder in `first..=last` (`close_range`, `closefrom`).
    fn close_devices_in(&self, first: u32, last: u32) {
        let last = (last as usize).min(MAX_FDS - 1);
        for fd in first as usize..=last {
            if self.fds[fd].load(Ordering::Relaxed) != 0 {
                // `fd` < MAX_FDS fits an i32.
                self.close_device(fd as i32);
            }
        }
    }

    /// Notes a range the mock mapped, and any doorbell page it now has.
    fn mapped(&self, addr: usize, len: usize) {
        self.maps.lock().push((addr, len));
        let pages: Vec<(usize, usize)> = (0..MAX_GPUS).filter_map(|g| self.mock.doorbell_page(g)).collect();
        for (a, l) in pages {
            if a >= addr && a < addr.saturating_add(len) {
                self.doorbells.watch(&self.mock, a, l);
            }
        }
    }

    /// Whether `[addr, addr + len)` touches a range the mock mapped; if so the
    /// ranges inside it are forgotten (and their doorbells no longer watched).
    fn unmapping(&self, addr: usize, len: usize) -> bool {
        let end = addr.saturating_add(len);
        let mut maps = self.maps.lock();
        let hit = maps.iter().any(|&(a, l)| a < end && a.saturating_add(l) > addr);
        if hit {
            maps.retain(|&(a, l)| !(a >= addr && a.saturating_add(l) <= end));
            self.doorbells.forget(addr, end);
        }
        hit
    }
}

/// Writes the mock's topology (and empty device nodes) under `root`.
fn materialize(mock: &MockSys, root: &Path, renders: usize) {
    for top in [
        "/sys/devices/virtual/kfd/kfd/topology",
        "/sys/module/amdgpu",
        "/sys/class/drm",
        // The render nodes by device number (links into /sys/class/drm).
        "/sys/dev/char",
    ] {
        copy_tree(mock, Path::new(top), root);
    }
    // The loaded modules, amdgpu among them (ROCm's tools ask libkmod, which reads this).
    let mut modules = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    if !modules.lines().any(|l| l.starts_with("amdgpu ")) {
        modules.push_str("amdgpu 16384 0 - Live 0x0000000000000000\n");
    }
    let _ = std::fs::create_dir_all(root.join("proc"));
    let _ = std::fs::write(root.join("proc/modules"), modules);
    let dev = root.join("dev/dri");
    let _ = std::fs::create_dir_all(&dev);
    let _ = std::fs::write(root.join("dev/kfd"), b"");
    for i in 0..renders {
        let _ = std::fs::write(dev.join(format!("renderD{}", 128 + i)), b"");
    }
}

fn copy_tree(mock: &MockSys, path: &Path, root: &Path) {
    let to = root.join(path.strip_prefix("/").unwrap_or(path));
    if let Ok(target) = mock.readlink(path) {
        // A link of the mock's (sysfs names IP blocks by links): the same link.
        if let Some(parent) = to.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::os::unix::fs::symlink(target, &to);
        return;
    }
    match mock.list_dir(path) {
        Ok(entries) => {
            let _ = std::fs::create_dir_all(&to);
            for e in entries {
                copy_tree(mock, &path.join(e), root);
            }
        }
        Err(_) => {
            if let Ok(b) = mock.read_file(path) {
                if let Some(parent) = to.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                let _ = std::fs::write(&to, b);
            }
        }
    }
}

/// The bytes of a C path, if it is one the mock answers for.
fn virtual_path(path: &CStr) -> Option<&[u8]> {
    let b = path.to_bytes();
    is_virtual(b).then_some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_paths_are_the_mocks_only() {
        for p in [
            "/dev/kfd",
            "/dev/dri/renderD128",
            "/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties",
            "/sys/class/kfd",
            "/sys/class/drm",
            "/sys/class/drm/renderD128/device/ip_discovery/die/0/GC",
            "/sys/module/amdgpu",
            "/sys/module/amdgpu/parameters",
            "/sys/dev/char/226:128/device/drm",
            "/proc/modules",
        ] {
            assert!(is_virtual(p.as_bytes()), "{p}");
        }
        for p in [
            "/dev/kfdx",
            "/dev/dri/card0",
            "/sys/module/amdgpux",
            "/sys/dev/char/1:3",
            "/sys/dev/char",
            "/sys/class/drmx",
            "/sys/devices/virtual/kfdx",
            "/etc/passwd",
            "",
        ] {
            assert!(!is_virtual(p.as_bytes()), "{p}");
        }
        assert!(is_device(b"/dev/kfd") && is_device(b"/dev/dri/renderD129"));
    }
}
