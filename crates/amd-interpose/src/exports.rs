//! The C library functions this library defines in front of the real ones. Each
//! answers for the mock's paths, descriptors and mappings, and hands everything else
//! (and every call made from inside the mock) to the C library unchanged, without
//! allocating on that path.
//!
//! `open`, `openat` and `ioctl` are variadic in C; they are defined here with their
//! optional argument as a fixed one, which the x86-64 and AArch64 calling conventions
//! pass in the same register either way (a caller that passed none leaves a value
//! that is only read when `O_CREAT`/`O_TMPFILE` or an ioctl argument says it exists).

#![allow(unsafe_code)]
#![cfg(not(test))]

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_ulong, c_void};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use amd_kfd::abi::{
    AMDKFD_IOC_ACQUIRE_VM, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, AMDKFD_IOC_CREATE_QUEUE, AMDKFD_IOCTL_BASE,
    KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, kfd_ioctl_create_queue_args,
};
use amd_kfd::sys::{MapFlags, Prot, Sys};

use crate::real::{self, set_errno};
use crate::{State, inside, is_device, state, state_or_init, virtual_path, within};

/// The mock path `path` points at, unless this call is the mock's own.
///
/// # Safety
/// `path` is null or a NUL-terminated string.
unsafe fn mock_path<'a>(path: *const c_char) -> Option<&'a [u8]> {
    if inside() || path.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated (the caller's contract).
    virtual_path(unsafe { CStr::from_ptr(path) })
}

/// The written-out file for mock path `b`.
fn rewritten(st: &State, b: &[u8]) -> CString {
    CString::new(st.rewrite(b).into_os_string().into_vec()).unwrap_or_default()
}

/// An open of `path` with `flags`: the mock's device nodes get a placeholder
/// descriptor backed by the mock, its other files their written-out copies.
///
/// # Safety
/// `path` is null or NUL-terminated; `real_open` is the C library's open of the same
/// kind with the caller's other arguments.
unsafe fn open_any(path: *const c_char, flags: c_int, real_open: impl Fn(*const c_char, c_int) -> c_int) -> c_int {
    // SAFETY: the caller's contract.
    let Some(b) = (unsafe { mock_path(path) }) else {
        return real_open(path, flags);
    };
    let st = state_or_init();
    let file = rewritten(st, b);
    if !is_device(b) {
        return within(|| real_open(file.as_ptr(), flags));
    }
    let fd = within(|| real_open(file.as_ptr(), libc::O_RDONLY | (flags & libc::O_CLOEXEC)));
    if fd < 0 {
        return fd;
    }
    let writable = flags & libc::O_ACCMODE != libc::O_RDONLY;
    match st.open_device(b, writable, fd) {
        Ok(()) => {
            within(|| crate::log(&format!("open {} -> fd {fd}", String::from_utf8_lossy(b))));
            fd
        }
        Err(e) => {
            within(|| crate::log(&format!("open {}: errno {e}", String::from_utf8_lossy(b))));
            // SAFETY: `fd` was just opened here and is not the client's yet.
            within(|| unsafe { real::close(fd) });
            set_errno(e);
            -1
        }
    }
}

macro_rules! open_fns {
    ($($(#[$doc:meta])* $name:ident ($($pre:ident : $pt:ty,)* [path, flags] $(, $arg:ident : $t:ty)*) => $real:path;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// As the C library's.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($pre: $pt,)* path: *const c_char, flags: c_int $(, $arg: $t)*) -> c_int {
            // SAFETY: the caller's contract, forwarded.
            unsafe { open_any(path, flags, |p, f| $real($($pre,)* p, f $(, $arg)*)) }
        }
    )*};
}

open_fns! {
    /// `open`.
    open([path, flags], mode: c_uint) => real::open;
    /// `open64`.
    open64([path, flags], mode: c_uint) => real::open64;
    /// `__open_2` (`open` with fortification).
    __open_2([path, flags]) => real::open_2;
    /// `__open64_2`.
    __open64_2([path, flags]) => real::open64_2;
    /// `openat` (the mock's paths are absolute, so `dirfd` does not matter for them).
    openat(dirfd: c_int, [path, flags], mode: c_uint) => real::openat;
    /// `openat64`.
    openat64(dirfd: c_int, [path, flags], mode: c_uint) => real::openat64;
    /// `__openat_2`.
    __openat_2(dirfd: c_int, [path, flags]) => real::openat_2;
    /// `__openat64_2`.
    __openat64_2(dirfd: c_int, [path, flags]) => real::openat64_2;
}

/// `close`: a placeholder's mock descriptor is closed with it.
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if !inside()
        && let Some(st) = state()
        && st.mock_fd(fd).is_some()
    {
        st.close_device(fd);
    }
    // SAFETY: forwarded unchanged.
    unsafe { real::close(fd) }
}

/// `close_range`: placeholders in the range are forgotten as `close` forgets them
/// (unless the range is only marked close-on-exec).
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn close_range(first: c_uint, last: c_uint, flags: c_int) -> c_int {
    if flags & libc::CLOSE_RANGE_CLOEXEC as c_int == 0
        && first <= last
        && !inside()
        && let Some(st) = state()
    {
        st.close_devices_in(first, last);
    }
    // SAFETY: forwarded unchanged.
    unsafe { real::close_range(first, last, flags) }
}

/// `closefrom`: `close_range(low, ~0, 0)`, as the C library's does it (a negative
/// `low` closes nothing).
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn closefrom(low: c_int) {
    if let Ok(first) = u32::try_from(low) {
        // SAFETY: as close_range's contract (closing descriptors the caller owns).
        unsafe { close_range(first, u32::MAX, 0) };
    }
}

/// Notes `copy` as a duplicate of `of` when `of` is a mock device's descriptor.
fn note_dup(of: c_int, copy: c_int) {
    if copy >= 0
        && !inside()
        && let Some(st) = state()
    {
        within(|| st.duplicated(of, copy));
    }
}

/// `dup`: a duplicate of a mock device's descriptor reaches the same device.
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dup(fd: c_int) -> c_int {
    // SAFETY: forwarded unchanged.
    let copy = unsafe { real::dup(fd) };
    note_dup(fd, copy);
    copy
}

/// `dup2`.
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dup2(fd: c_int, to: c_int) -> c_int {
    // SAFETY: forwarded unchanged.
    let copy = unsafe { real::dup2(fd, to) };
    note_dup(fd, copy);
    copy
}

/// `dup3`.
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dup3(fd: c_int, to: c_int, flags: c_int) -> c_int {
    // SAFETY: forwarded unchanged.
    let copy = unsafe { real::dup3(fd, to, flags) };
    note_dup(fd, copy);
    copy
}

/// `fcntl` (variadic in C; its optional argument is passed on as it came): a
/// descriptor duplicated with `F_DUPFD`/`F_DUPFD_CLOEXEC` reaches the same device.
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    // SAFETY: forwarded unchanged.
    let r = unsafe { real::fcntl(fd, cmd, arg) };
    if cmd == libc::F_DUPFD || cmd == libc::F_DUPFD_CLOEXEC {
        note_dup(fd, r);
    }
    r
}

/// `fcntl64`, the name glibc 2.28+ gives `fcntl` for programs built with 64-bit file
/// offsets (libdrm duplicates a render node's descriptor through it): as [`fcntl`].
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    // SAFETY: forwarded unchanged.
    let r = unsafe { real::fcntl64(fd, cmd, arg) };
    if cmd == libc::F_DUPFD || cmd == libc::F_DUPFD_CLOEXEC {
        note_dup(fd, r);
    }
    r
}

/// `ioctl`: on a mock descriptor, the mock's driver with the argument struct in
/// place (`_IOC_SIZE` bytes at `arg`).
///
/// # Safety
/// As the C library's: `arg` points at the request's argument.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    let mock = if inside() {
        None
    } else {
        state().and_then(|st| Some((st, st.mock_fd(fd)?)))
    };
    let Some((st, mfd)) = mock else {
        // SAFETY: forwarded unchanged.
        return unsafe { real::ioctl(fd, request, arg) };
    };
    // `c_ulong` is `u64` on the 64-bit targets this library builds for.
    #[allow(clippy::useless_conversion)]
    let request = u64::from(request);
    let size = amd_kfd::abi::ioc::size(request);
    if size > 0 && arg.is_null() {
        set_errno(libc::EFAULT);
        return -1;
    }
    let args: &mut [u8] = if size == 0 {
        &mut []
    } else {
        // SAFETY: the request says its argument is `size` bytes at `arg`, which the
        // caller provides (the C contract of ioctl).
        unsafe { std::slice::from_raw_parts_mut(arg.cast::<u8>(), size) }
    };
    // KFD takes a command by its number at any argument size (older and newer
    // headers alike): so are the two it needs to see here.
    let kfd_command = if amd_kfd::abi::ioc::ty(request) == AMDKFD_IOCTL_BASE {
        amd_kfd::abi::command(request).map(|c| c.request)
    } else {
        None
    };
    if kfd_command == Some(AMDKFD_IOC_ACQUIRE_VM.request) && args.len() >= 8 {
        // The render node's descriptor, as the mock knows it (the client holds the
        // placeholder); the kernel writes nothing back.
        let drm = i32::from_ne_bytes(args[0..4].try_into().unwrap_or([0; 4]));
        let mut local = [0u8; 8];
        local.copy_from_slice(&args[..8]);
        if let Some(m) = st.mock_fd(drm) {
            local[0..4].copy_from_slice(&m.0.to_ne_bytes());
        }
        let acquire = AMDKFD_IOC_ACQUIRE_VM.request;
        // SAFETY: `local` is a whole argument struct of the current header's request
        // (what the kernel reads of a larger one; it writes nothing back).
        return match within(|| unsafe { st.mock().ioctl(mfd, acquire, "interposed", &mut local) }) {
            Ok(v) => v,
            Err(e) => {
                set_errno(e.errno as c_int);
                -1
            }
        };
    }
    if kfd_command == Some(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU.request) && args.len() >= 40 {
        // A user-pointer allocation: the client's own pages become GPU-reachable.
        let word = |o: usize| u64::from_ne_bytes(args[o..o + 8].try_into().unwrap_or([0; 8]));
        let flags = u32::from_ne_bytes(args[36..40].try_into().unwrap_or([0; 4]));
        if flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 {
            let (va, len) = (word(0), word(8));
            within(|| st.mock().note_host_memory(va as usize, len as usize));
        }
    }
    // SAFETY: `args` is the client's argument struct; pointers inside it are the
    // client's, which the mock reads and writes as the kernel would.
    match within(|| unsafe { st.mock().ioctl(mfd, request, "interposed", args) }) {
        Ok(v) => {
            if kfd_command == Some(AMDKFD_IOC_CREATE_QUEUE.request)
                && let Some(id) = args.get(QUEUE_ID..QUEUE_ID + 4).and_then(|b| b.try_into().ok())
            {
                // `queue_id`, written by the mock (at the same offset in every header's
                // struct).
                within(|| st.queue_created(u32::from_ne_bytes(id)));
            }
            v
        }
        Err(e) => {
            within(|| crate::log(&format!("ioctl {request:#x} (nr {:#x}): {}", request & 0xff, e.errno)));
            set_errno(e.errno as c_int);
            -1
        }
    }
}

/// Where CREATE_QUEUE's argument holds the queue id the kernel writes back.
const QUEUE_ID: usize = std::mem::offset_of!(kfd_ioctl_create_queue_args, queue_id);

/// The shared body of `mmap` and `mmap64`.
///
/// # Safety
/// As the C library's `mmap`; `real_mmap` is it.
unsafe fn mmap_any(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: i64,
    real_mmap: impl Fn() -> *mut c_void,
) -> *mut c_void {
    let mock = if inside() {
        None
    } else if fd < 0 {
        // The sanitizer's guarded reservations: through the mock, with no descriptor.
        state()
            .filter(|st| st.guards_anonymous(addr as usize, prot, flags))
            .map(|st| (st, None))
    } else {
        state().and_then(|st| Some((st, Some(st.mock_fd(fd)?))))
    };
    let Some((st, mfd)) = mock else {
        return real_mmap();
    };
    let prot = match prot {
        libc::PROT_NONE => Prot::None,
        libc::PROT_READ => Prot::Read,
        p if p == libc::PROT_READ | libc::PROT_WRITE => Prot::ReadWrite,
        _ => {
            set_errno(libc::EINVAL);
            return libc::MAP_FAILED;
        }
    };
    let Ok(off) = u64::try_from(off) else {
        set_errno(libc::EINVAL);
        return libc::MAP_FAILED;
    };
    // SAFETY: the client's mmap contract (a FIXED range is the client's to replace).
    match within(|| unsafe { st.mock().mmap(addr as usize, len, prot, MapFlags(flags), mfd, off) }) {
        Ok(a) => {
            within(|| st.mapped(a, len));
            a as *mut c_void
        }
        Err(e) => {
            within(|| {
                crate::log(&format!(
                    "mmap of fd {fd} at offset {off:#x}, {len:#x} bytes: {}",
                    e.errno
                ))
            });
            set_errno(e.errno as c_int);
            libc::MAP_FAILED
        }
    }
}

macro_rules! mmap_fns {
    ($($(#[$doc:meta])* $name:ident => $real:path;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// As the C library's.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            addr: *mut c_void,
            len: usize,
            prot: c_int,
            flags: c_int,
            fd: c_int,
            off: i64,
        ) -> *mut c_void {
            // SAFETY: the caller's contract, forwarded.
            unsafe {
                mmap_any(addr, len, prot, flags, fd, off, || {
                    $real(addr, len, prot, flags, fd, off)
                })
            }
        }
    )*};
}

mmap_fns! {
    /// `mmap`: of a mock descriptor, the mock's memory.
    mmap => real::mmap;
    /// `mmap64`.
    mmap64 => real::mmap64;
}

/// `munmap`: a range the mock mapped goes back through the mock.
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    if !inside()
        && let Some(st) = state()
        && within(|| st.unmapping(addr as usize, len))
    {
        // SAFETY: the client's munmap contract.
        return match within(|| unsafe { st.mock().munmap(addr as usize, len) }) {
            Ok(()) => 0,
            Err(e) => {
                set_errno(e.errno as c_int);
                -1
            }
        };
    }
    // SAFETY: forwarded unchanged.
    unsafe { real::munmap(addr, len) }
}

/// Calls `real_call` with `path`, or with its written-out copy if it is a mock path.
///
/// # Safety
/// `path` is null or NUL-terminated.
unsafe fn with_path<R>(path: *const c_char, real_call: impl Fn(*const c_char) -> R) -> R {
    // SAFETY: the caller's contract.
    match unsafe { mock_path(path) } {
        None => real_call(path),
        Some(b) => {
            let file = rewritten(state_or_init(), b);
            within(|| real_call(file.as_ptr()))
        }
    }
}

macro_rules! path_fns {
    ($($name:ident ($($pre:ident : $pt:ty,)* [path] $(, $arg:ident : $t:ty)*) -> $r:ty => $real:path;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: the mock's paths read its written-out files.")]
        ///
        /// # Safety
        /// As the C library's.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($pre: $pt,)* path: *const c_char $(, $arg: $t)*) -> $r {
            // SAFETY: the caller's contract, forwarded.
            unsafe { with_path(path, |p| $real($($pre,)* p $(, $arg)*)) }
        }
    )*};
}

path_fns! {
    access([path], mode: c_int) -> c_int => real::access;
    faccessat(dirfd: c_int, [path], mode: c_int, flags: c_int) -> c_int => real::faccessat;
    readlink([path], buf: *mut c_char, size: usize) -> isize => real::readlink;
    opendir([path]) -> *mut c_void => real::opendir;
    fopen([path], mode: *const c_char) -> *mut c_void => real::fopen;
    fopen64([path], mode: *const c_char) -> *mut c_void => real::fopen64;
}

/// The character device (major, minor) mock path `path` is, if it is a render node.
///
/// # Safety
/// `path` is null or NUL-terminated.
unsafe fn path_device(path: *const c_char) -> Option<(u32, u32)> {
    // SAFETY: the caller's contract.
    let b = unsafe { mock_path(path) }.filter(|b| is_device(b))?;
    let p = std::path::Path::new(std::ffi::OsStr::from_bytes(b));
    state_or_init().mock().device_number(p)
}

/// The character device (major, minor) descriptor `fd` is open on, if it is a mock
/// render node.
fn fd_device(fd: c_int) -> Option<(u32, u32)> {
    if inside() {
        return None;
    }
    let st = state()?;
    st.mock().fd_device_number(st.mock_fd(fd)?)
}

/// Makes `(mode, rdev)` of a stat result a character device `dev`, read-write for all:
/// a render node is one, its placeholder file is not (libdrm tells a DRM node by
/// `S_ISCHR` and the device number).
fn char_device(mode: &mut u32, rdev: &mut u64, (major, minor): (u32, u32)) {
    *mode = libc::S_IFCHR | 0o666;
    *rdev = libc::makedev(major, minor);
}

macro_rules! stat_fns {
    ($($name:ident ($($pre:ident : $pt:ty,)* [path] $(, $arg:ident : $t:ty)*) => $real:path, $ty:ty;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: the mock's paths read its written-out files, a render node as a character device.")]
        ///
        /// # Safety
        /// As the C library's.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($pre: $pt,)* path: *const c_char, buf: *mut c_void $(, $arg: $t)*) -> c_int {
            // SAFETY: the caller's contract, forwarded.
            let r = unsafe { with_path(path, |p| $real($($pre,)* p, buf $(, $arg)*)) };
            // SAFETY: the caller's contract (`path` null or NUL-terminated).
            let dev = if r == 0 { unsafe { path_device(path) } } else { None };
            if let Some(dev) = dev {
                // SAFETY: the call succeeded, so `buf` points at the result it filled.
                let s = unsafe { &mut *(buf as *mut $ty) };
                char_device(&mut s.st_mode, &mut s.st_rdev, dev);
            }
            r
        }
    )*};
}

stat_fns! {
    stat([path]) => real::stat, libc::stat;
    stat64([path]) => real::stat64, libc::stat64;
    lstat([path]) => real::lstat, libc::stat;
    lstat64([path]) => real::lstat64, libc::stat64;
    fstatat(dirfd: c_int, [path], flags: c_int) => real::fstatat, libc::stat;
    fstatat64(dirfd: c_int, [path], flags: c_int) => real::fstatat64, libc::stat64;
}

/// `statx`: the mock's paths read its written-out files, a render node as a character
/// device.
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut c_void,
) -> c_int {
    // SAFETY: the caller's contract, forwarded.
    let r = unsafe { with_path(path, |p| real::statx(dirfd, p, flags, mask, buf)) };
    // SAFETY: the caller's contract (`path` null or NUL-terminated).
    let dev = if r == 0 { unsafe { path_device(path) } } else { None };
    if let Some((major, minor)) = dev {
        // SAFETY: the call succeeded, so `buf` points at the `struct statx` it filled.
        let s = unsafe { &mut *(buf as *mut libc::statx) };
        s.stx_mode = (libc::S_IFCHR | 0o666) as u16;
        (s.stx_rdev_major, s.stx_rdev_minor) = (major, minor);
    }
    r
}

macro_rules! fstat_fns {
    ($($name:ident => $real:path, $ty:ty;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: a descriptor of a mock render node is a character device.")]
        ///
        /// # Safety
        /// As the C library's.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(fd: c_int, buf: *mut c_void) -> c_int {
            // SAFETY: forwarded unchanged.
            let r = unsafe { $real(fd, buf) };
            if r == 0 && let Some(dev) = fd_device(fd) {
                // SAFETY: the call succeeded, so `buf` points at the result it filled.
                let s = unsafe { &mut *(buf as *mut $ty) };
                char_device(&mut s.st_mode, &mut s.st_rdev, dev);
            }
            r
        }
    )*};
}

fstat_fns! {
    fstat => real::fstat, libc::stat;
    fstat64 => real::fstat64, libc::stat64;
}

/// This library's definition of `name`, if it defines one in front of the C library.
fn own(name: &[u8]) -> Option<*mut c_void> {
    macro_rules! table {
        ($($f:ident),*) => {
            match name {
                $(n if n == stringify!($f).as_bytes() => Some($f as *mut c_void),)*
                _ => None,
            }
        };
    }
    table!(
        open,
        open64,
        __open_2,
        __open64_2,
        openat,
        openat64,
        __openat_2,
        __openat64_2,
        close,
        close_range,
        closefrom,
        dup,
        dup2,
        dup3,
        fcntl,
        fcntl64,
        ioctl,
        mmap,
        mmap64,
        munmap,
        stat,
        stat64,
        lstat,
        lstat64,
        fstat,
        fstat64,
        fstatat,
        fstatat64,
        statx,
        access,
        faccessat,
        readlink,
        opendir,
        fopen,
        fopen64
    )
}

/// `dlsym`: a program that looks the C library's functions up by handle (Python's
/// ctypes does: `CDLL("libc.so.6").mmap`) gets this library's definitions, as a
/// program linked against them does. `RTLD_NEXT` and `RTLD_DEFAULT` lookups are the
/// C library's.
///
/// # Safety
/// As the C library's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    if handle != libc::RTLD_NEXT && handle != libc::RTLD_DEFAULT && !name.is_null() {
        // SAFETY: a non-null symbol name is NUL-terminated (dlsym's contract).
        if let Some(f) = own(unsafe { CStr::from_ptr(name) }.to_bytes()) {
            return f;
        }
    }
    match real::real_dlsym() {
        // SAFETY: forwarded unchanged. An `RTLD_NEXT` lookup is now relative to this
        // library, not to its caller (see docs/limits.md).
        Some(f) => unsafe { f(handle, name) },
        None => std::ptr::null_mut(),
    }
}
