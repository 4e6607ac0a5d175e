//! The C library's own functions, found past this library (`dlsym(RTLD_NEXT, …)`),
//! each resolved once at its first call; a symbol the C library lacks fails with
//! `ENOSYS` rather than a call through a null pointer.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

use parking_lot::Mutex;

/// Sets the calling thread's `errno`.
pub fn set_errno(e: c_int) {
    // SAFETY: `__errno_location` returns this thread's errno slot, always valid.
    unsafe { *libc::__errno_location() = e };
}

/// The C library's `dlsym` (this library defines its own, see `exports::dlsym`),
/// found with `dlvsym` under the versions glibc gives it.
pub fn real_dlsym() -> Option<unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void> {
    static SLOT: AtomicUsize = AtomicUsize::new(0);
    let mut a = SLOT.load(Ordering::Relaxed);
    if a == 0 {
        for version in [c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.17"] {
            // SAFETY: NUL-terminated names; RTLD_NEXT looks past this library.
            a = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) } as usize;
            if a != 0 {
                break;
            }
        }
        SLOT.store(a, Ordering::Relaxed);
    }
    // SAFETY: `a` is the C library's `dlsym`, of this signature.
    (a != 0).then(|| unsafe {
        std::mem::transmute::<usize, unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void>(a)
    })
}

/// The address of the next definition of `name` (NUL-terminated), cached in `slot`.
fn resolve(slot: &AtomicUsize, name: &[u8]) -> usize {
    let a = slot.load(Ordering::Relaxed);
    if a != 0 {
        return a;
    }
    let Some(dlsym) = real_dlsym() else { return 0 };
    // SAFETY: `name` is NUL-terminated (the macro appends the NUL); RTLD_NEXT, asked
    // from this library, looks the symbol up in the objects loaded after it.
    let a = unsafe { dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) } as usize;
    slot.store(a, Ordering::Relaxed);
    a
}

macro_rules! real_fns {
    ($(fn $name:ident = $sym:literal ($($arg:ident : $t:ty),*) -> $r:ty, fail = $fail:expr;)*) => {$(
        #[doc = concat!("The C library's `", $sym, "`.")]
        ///
        /// # Safety
        /// As the C function's own contract.
        pub unsafe fn $name($($arg: $t),*) -> $r {
            static SLOT: AtomicUsize = AtomicUsize::new(0);
            let a = resolve(&SLOT, concat!($sym, "\0").as_bytes());
            if a == 0 {
                set_errno(libc::ENOSYS);
                return $fail;
            }
            // SAFETY: `a` is the address of the C library's function of this name,
            // whose C signature is the one written here.
            let f = unsafe { std::mem::transmute::<usize, unsafe extern "C" fn($($t),*) -> $r>(a) };
            // SAFETY: the caller keeps the function's contract.
            unsafe { f($($arg),*) }
        }
    )*};
}

real_fns! {
    fn open = "open" (path: *const c_char, flags: c_int, mode: c_uint) -> c_int, fail = -1;
    fn open64 = "open64" (path: *const c_char, flags: c_int, mode: c_uint) -> c_int, fail = -1;
    fn openat = "openat" (dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int, fail = -1;
    fn openat64 = "openat64" (dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int, fail = -1;
    fn open_2 = "__open_2" (path: *const c_char, flags: c_int) -> c_int, fail = -1;
    fn open64_2 = "__open64_2" (path: *const c_char, flags: c_int) -> c_int, fail = -1;
    fn openat_2 = "__openat_2" (dirfd: c_int, path: *const c_char, flags: c_int) -> c_int, fail = -1;
    fn openat64_2 = "__openat64_2" (dirfd: c_int, path: *const c_char, flags: c_int) -> c_int, fail = -1;
    fn close = "close" (fd: c_int) -> c_int, fail = -1;
    fn dup = "dup" (fd: c_int) -> c_int, fail = -1;
    fn dup2 = "dup2" (fd: c_int, to: c_int) -> c_int, fail = -1;
    fn dup3 = "dup3" (fd: c_int, to: c_int, flags: c_int) -> c_int, fail = -1;
    fn fcntl = "fcntl" (fd: c_int, cmd: c_int, arg: c_ulong) -> c_int, fail = -1;
    fn fcntl64 = "fcntl64" (fd: c_int, cmd: c_int, arg: c_ulong) -> c_int, fail = -1;
    fn close_range = "close_range" (first: c_uint, last: c_uint, flags: c_int) -> c_int, fail = -1;
    fn ioctl = "ioctl" (fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int, fail = -1;
    fn mmap = "mmap" (addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, off: i64) -> *mut c_void, fail = libc::MAP_FAILED;
    fn mmap64 = "mmap64" (addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, off: i64) -> *mut c_void, fail = libc::MAP_FAILED;
    fn munmap = "munmap" (addr: *mut c_void, len: usize) -> c_int, fail = -1;
    fn stat = "stat" (path: *const c_char, buf: *mut c_void) -> c_int, fail = -1;
    fn stat64 = "stat64" (path: *const c_char, buf: *mut c_void) -> c_int, fail = -1;
    fn lstat = "lstat" (path: *const c_char, buf: *mut c_void) -> c_int, fail = -1;
    fn lstat64 = "lstat64" (path: *const c_char, buf: *mut c_void) -> c_int, fail = -1;
    fn fstatat = "fstatat" (dirfd: c_int, path: *const c_char, buf: *mut c_void, flags: c_int) -> c_int, fail = -1;
    fn fstatat64 = "fstatat64" (dirfd: c_int, path: *const c_char, buf: *mut c_void, flags: c_int) -> c_int, fail = -1;
    fn statx = "statx" (dirfd: c_int, path: *const c_char, flags: c_int, mask: c_uint, buf: *mut c_void) -> c_int, fail = -1;
    fn fstat = "fstat" (fd: c_int, buf: *mut c_void) -> c_int, fail = -1;
    fn fstat64 = "fstat64" (fd: c_int, buf: *mut c_void) -> c_int, fail = -1;
    fn access = "access" (path: *const c_char, mode: c_int) -> c_int, fail = -1;
    fn faccessat = "faccessat" (dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int, fail = -1;
    fn readlink = "readlink" (path: *const c_char, buf: *mut c_char, size: usize) -> isize, fail = -1;
    fn opendir = "opendir" (path: *const c_char) -> *mut c_void, fail = std::ptr::null_mut();
    fn fopen = "fopen" (path: *const c_char, mode: *const c_char) -> *mut c_void, fail = std::ptr::null_mut();
    fn fopen64 = "fopen64" (path: *const c_char, mode: *const c_char) -> *mut c_void, fail = std::ptr::null_mut();
}

static TREE: Mutex<Option<PathBuf>> = Mutex::new(None);

extern "C" fn remove_tree() {
    if let Some(root) = TREE.lock().take() {
        crate::within(|| {
            let _ = std::fs::remove_dir_all(root);
        });
    }
}

/// Removes the written-out tree when the process exits normally.
pub fn remove_at_exit(root: &Path) {
    *TREE.lock() = Some(root.to_path_buf());
    // SAFETY: `remove_tree` is a plain `extern "C" fn()` that lives as long as the
    // process (this library is never unloaded while it is preloaded).
    unsafe { libc::atexit(remove_tree) };
}

/// Starts a process that removes the written-out tree at `root` when this one ends,
/// however it ends (`abort`, a fatal signal, `SIGKILL`), where `atexit` does not run.
///
/// It waits on a pipe whose only writer is this process (close-on-exec, so an `exec`
/// ends it too, and a `fork` child that keeps it delays the removal until it is gone
/// as well) and removes the tree at end-of-file. It is a `/bin/sh` run by a child's
/// child in a session of its own: the client's `wait`s and its terminal's signals
/// never meet it, and it holds none of the client's descriptors (its output goes to
/// `/dev/null`). Between `fork` and `execve` only system calls are made (the client
/// may have threads). Without `/bin/sh` the tree is left to the `atexit` removal.
pub fn spawn_cleaner(root: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(dir) = std::ffi::CString::new(root.as_os_str().as_bytes()) else {
        return;
    };
    let sh = c"/bin/sh";
    let argv = [
        sh.as_ptr(),
        c"-c".as_ptr(),
        c"while read -r _; do :; done; exec rm -rf -- \"$1\"".as_ptr(),
        c"amd-interpose-cleaner".as_ptr(),
        dir.as_ptr(),
        std::ptr::null(),
    ];
    let envp = [c"PATH=/usr/bin:/bin".as_ptr(), std::ptr::null()];
    let mut fds = [0 as c_int; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let [r, w] = fds;
    // SAFETY: fork has no preconditions; what each side does next is below.
    match unsafe { libc::fork() } {
        // SAFETY: closing the two descriptors just made.
        -1 => unsafe {
            libc::syscall(libc::SYS_close, r);
            libc::syscall(libc::SYS_close, w);
        },
        // SAFETY: the child makes only system calls (async-signal-safe) before
        // `execve` or `_exit`; `argv` and `envp` are NUL-terminated arrays of C strings
        // that outlive the call (the child has its own copy of this memory).
        0 => unsafe {
            libc::setsid();
            if libc::fork() == 0 {
                libc::syscall(libc::SYS_close, w);
                libc::syscall(libc::SYS_dup3, r, 0, 0);
                let null = libc::syscall(libc::SYS_openat, libc::AT_FDCWD, c"/dev/null".as_ptr(), libc::O_RDWR);
                if null >= 0 {
                    libc::syscall(libc::SYS_dup3, null, 1, 0);
                    libc::syscall(libc::SYS_dup3, null, 2, 0);
                }
                libc::syscall(libc::SYS_close_range, 3, u32::MAX, 0);
                libc::execve(sh.as_ptr(), argv.as_ptr(), envp.as_ptr());
            }
            libc::_exit(0);
        },
        // SAFETY: closing our copy of the read end, and reaping the child just made.
        child => unsafe {
            // The write end stays open for the process's life.
            libc::syscall(libc::SYS_close, r);
            libc::waitpid(child, std::ptr::null_mut(), 0);
        },
    }
}

/// Runs `child` in the child of every later `fork`.
pub fn at_fork_child(child: extern "C" fn()) {
    // SAFETY: `child` is a plain `extern "C" fn()` living as long as the process; it
    // only stores to an atomic, which is async-signal-safe.
    unsafe { libc::pthread_atfork(None, None, Some(child)) };
}

/// The process this library was loaded into (0 before its constructor ran).
static OWNER: AtomicI32 = AtomicI32::new(0);

extern "C" fn note_owner() {
    // SAFETY: getpid has no preconditions.
    OWNER.store(unsafe { libc::getpid() }, Ordering::Relaxed);
}

/// Runs `note_owner` when the library is loaded (before `main` and before any
/// interposed call can make the mock).
#[used]
#[unsafe(link_section = ".init_array")]
static NOTE_OWNER: extern "C" fn() = note_owner;

/// Whether the caller runs in another process than the one the library was loaded
/// into: the child of a `vfork` (or `clone(CLONE_VM)`), which shares the parent's
/// memory, and with it the mock's state, until it execs, but has its own
/// descriptors — or the child of a `fork`. Its calls must not touch that state.
pub fn foreign_process() -> bool {
    let owner = OWNER.load(Ordering::Relaxed);
    // SAFETY: getpid has no preconditions.
    owner != 0 && owner != unsafe { libc::getpid() }
}
