//! The one door to the operating system: every file, ioctl, mapping, eventfd and poll
//! of `amd-kfd` (and `amd-am`) goes through [`Sys`]. [`HostSys`] is the real one; the
//! mock GPU implements the same trait and emulates the kernel behind it.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::errno::Errno;

use crate::mmio::Mmio;

#[cfg(feature = "test-utils")]
mod forward;
#[cfg(feature = "test-utils")]
pub use forward::ForwardSys;

/// A file descriptor handed out by a [`Sys`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fd(pub i32);

/// How to open a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// `O_RDONLY`
    ReadOnly,
    /// `O_RDWR`
    ReadWrite,
}

/// Page protection of a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prot {
    /// `PROT_NONE`: address space only.
    None,
    /// `PROT_READ`
    Read,
    /// `PROT_READ | PROT_WRITE`
    ReadWrite,
}

/// Mapping flags, as `mmap(2)` takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MapFlags(pub i32);

impl MapFlags {
    /// `MAP_SHARED`
    pub const SHARED: Self = Self(libc::MAP_SHARED);
    /// `MAP_PRIVATE`
    pub const PRIVATE: Self = Self(libc::MAP_PRIVATE);
    /// `MAP_ANONYMOUS`
    pub const ANONYMOUS: Self = Self(libc::MAP_ANONYMOUS);
    /// `MAP_FIXED`
    pub const FIXED: Self = Self(libc::MAP_FIXED);
    /// `MAP_NORESERVE`
    pub const NORESERVE: Self = Self(libc::MAP_NORESERVE);
    /// `MAP_LOCKED`
    pub const LOCKED: Self = Self(libc::MAP_LOCKED);

    /// Both sets of flags.
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// A failed system call: which, on what, and the errno.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{op}{}: {errno} ({})", path.as_ref().map(|p| format!(" {}", p.display())).unwrap_or_default(), errno.desc())]
pub struct SysError {
    /// The call (`open`, `mmap`, `ioctl AMDKFD_IOC_…`).
    pub op: String,
    /// The path involved, if any.
    pub path: Option<PathBuf>,
    /// The error number.
    pub errno: Errno,
}

impl SysError {
    /// An error of `op` with `errno`.
    pub fn new(op: impl Into<String>, errno: Errno) -> Self {
        SysError {
            op: op.into(),
            path: None,
            errno,
        }
    }

    /// An error of `op` on `path` with `errno`.
    pub fn at(op: impl Into<String>, path: &Path, errno: Errno) -> Self {
        SysError {
            op: op.into(),
            path: Some(path.to_path_buf()),
            errno,
        }
    }
}

/// Result of a [`Sys`] call.
pub type SysResult<T> = Result<T, SysError>;

/// One entry of [`Sys::poll`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollFd {
    /// The descriptor.
    pub fd: Fd,
    /// Wait until readable.
    pub readable: bool,
    /// Set by `poll`: the descriptor is readable.
    pub ready: bool,
}

/// Access to the operating system.
///
/// # Safety contract of the unsafe methods
/// `ioctl`, `mmap` and `munmap` are as unsafe as the system calls they stand for: an
/// implementation may dereference pointers embedded in an ioctl argument, and may
/// replace or remove mappings of the calling process.
pub trait Sys: Send + Sync {
    /// Opens `path`.
    fn open(&self, path: &Path, mode: OpenMode) -> SysResult<Fd>;
    /// Closes `fd`.
    fn close(&self, fd: Fd) -> SysResult<()>;

    /// Issues ioctl `request` (named `name` in errors) on `fd` with `arg`, the
    /// argument struct's bytes; returns the call's non-negative result.
    ///
    /// # Safety
    /// Every pointer field inside `arg` must be valid for the reads and writes that
    /// request's ABI defines (sizes and counts as given in `arg`).
    unsafe fn ioctl(&self, fd: Fd, request: u64, name: &str, arg: &mut [u8]) -> SysResult<i32>;

    /// Issues ioctl `request` (named `name` in errors) on `fd` with an integer
    /// argument passed by value (VFIO's `VFIO_CHECK_EXTENSION` and `VFIO_SET_IOMMU`
    /// take one; requests without an argument take 0); returns the call's
    /// non-negative result. The default refuses (`ENOTTY`).
    ///
    /// # Safety
    /// `request` must be one that takes its argument by value (or none): a request
    /// that reads `value` as a pointer would dereference an arbitrary address.
    unsafe fn ioctl_value(&self, fd: Fd, request: u64, name: &str, value: u64) -> SysResult<i32> {
        let _ = (fd, request, value);
        Err(SysError::new(format!("ioctl {name}"), Errno::ENOTTY))
    }

    /// Maps `len` bytes; returns the address. `addr` is a hint, or the exact address
    /// with [`MapFlags::FIXED`]. `fd` is `None` for anonymous mappings.
    ///
    /// # Safety
    /// With [`MapFlags::FIXED`], `addr..addr + len` must be address space the caller
    /// owns and no longer accesses through any other mapping (it is replaced).
    unsafe fn mmap(
        &self,
        addr: usize,
        len: usize,
        prot: Prot,
        flags: MapFlags,
        fd: Option<Fd>,
        offset: u64,
    ) -> SysResult<usize>;

    /// Removes the mappings in `addr..addr + len`.
    ///
    /// # Safety
    /// The range must belong to mappings the caller owns, and nothing may access it
    /// afterwards.
    unsafe fn munmap(&self, addr: usize, len: usize) -> SysResult<()>;

    /// Reads from `fd` at byte `offset` without moving a file position (`pread(2)`):
    /// PCI configuration space (`config`, or the VFIO device's config region) and
    /// `/proc/self/pagemap` are read this way. Returns the bytes read (fewer at the
    /// end of the file). The default refuses (`ENOSYS`).
    fn pread(&self, fd: Fd, buf: &mut [u8], offset: u64) -> SysResult<usize> {
        let _ = (fd, buf, offset);
        Err(SysError::new("pread", Errno::ENOSYS))
    }

    /// Writes to `fd` at byte `offset` (`pwrite(2)`): PCI configuration space.
    /// Returns the bytes written. The default refuses (`ENOSYS`).
    fn pwrite(&self, fd: Fd, buf: &[u8], offset: u64) -> SysResult<usize> {
        let _ = (fd, buf, offset);
        Err(SysError::new("pwrite", Errno::ENOSYS))
    }

    /// The register model behind a register BAR mapped at `addr` (the address an
    /// [`mmap`](Sys::mmap) of `resource5`, or of the VFIO device's BAR 5 region,
    /// returned), for an implementation whose registers are not memory (see
    /// [`crate::mmio`]). The real implementation returns `None`: the caller then
    /// accesses the mapping with volatile loads and stores.
    fn mmio(&self, addr: usize) -> Option<Arc<dyn Mmio>> {
        let _ = addr;
        None
    }

    /// Reads a small file (sysfs attributes and the like) whole.
    fn read_file(&self, path: &Path) -> SysResult<Vec<u8>>;
    /// Writes a small file whole.
    fn write_file(&self, path: &Path, data: &[u8]) -> SysResult<()>;
    /// Names of the entries of a directory, in no particular order.
    fn list_dir(&self, path: &Path) -> SysResult<Vec<String>>;
    /// Whether `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// The target of a symbolic link.
    fn readlink(&self, path: &Path) -> SysResult<PathBuf>;

    /// Creates a non-blocking eventfd with counter `init` (a read with nothing pending
    /// is EAGAIN: several waiters may poll one eventfd).
    fn eventfd(&self, init: u32) -> SysResult<Fd>;
    /// Reads from `fd` (an eventfd: 8 bytes).
    fn read(&self, fd: Fd, buf: &mut [u8]) -> SysResult<usize>;
    /// Writes to `fd` (an eventfd: 8 bytes).
    fn write(&self, fd: Fd, buf: &[u8]) -> SysResult<usize>;
    /// Waits until one of `fds` is readable or `timeout_ms` passes (negative: forever);
    /// returns how many are ready.
    fn poll(&self, fds: &mut [PollFd], timeout_ms: i32) -> SysResult<usize>;

    /// Called right after the transport stored to the doorbell at `addr`. Hardware
    /// needs nothing more than the store, so the real implementation does nothing; an
    /// emulated GPU uses it to wake the engine that owns the doorbell.
    #[inline(always)]
    fn doorbell_written(&self, addr: usize) {
        let _ = addr;
    }

    /// Whether the memory behind this boundary is being watched for uses after free (an
    /// emulated GPU's sanitizer): a runtime on it should give freed memory back to the
    /// driver rather than keep it for reuse, so that a dangling pointer reaches freed
    /// memory, not the next buffer. The real implementation has no such watch.
    fn watches_freed_memory(&self) -> bool {
        false
    }

    /// Why the queues of GPU `gpu_id` stopped, one line each, naming the packet or
    /// instruction, where the implementation knows (an emulated GPU does). The kernel
    /// driver reports faults only through its events, so the real implementation
    /// returns nothing.
    fn stop_reasons(&self, gpu_id: u32) -> Vec<String> {
        let _ = gpu_id;
        Vec::new()
    }

    /// [`Sys::stop_reasons`] for the PCI GPU at `address` (`0000:03:00.0`), driven
    /// without a kernel driver. The real implementation returns nothing (the hardware
    /// reports faults through its registers and interrupts only).
    fn pci_stop_reasons(&self, address: &str) -> Vec<String> {
        let _ = address;
        Vec::new()
    }
}

/// Bytes of a transparent huge page (x86-64's and arm64's PMD with 4 KiB pages).
pub const HUGE_PAGE: usize = 2 << 20;

/// Maps `len` bytes as [`Sys::mmap`] does with `prot`, `flags`, `fd` and `offset`, at
/// an address the system picks that is a multiple of `align` (a power of two; 2 MiB
/// lines a mapping up with huge pages): address space reserved with room to align,
/// the mapping made over its aligned part, the rest given back. `flags` may not hold
/// `MAP_FIXED` (EINVAL): no mapping of the process is replaced.
pub fn mmap_aligned(
    sys: &(impl Sys + ?Sized),
    align: usize,
    len: usize,
    prot: Prot,
    flags: MapFlags,
    fd: Option<Fd>,
    offset: u64,
) -> SysResult<usize> {
    if flags.contains(MapFlags::FIXED) || !align.is_power_of_two() || len == 0 {
        return Err(SysError::new("mmap", Errno::EINVAL));
    }
    let room = len
        .checked_add(align)
        .ok_or_else(|| SysError::new("mmap", Errno::ENOMEM))?;
    let reserve = MapFlags::PRIVATE.with(MapFlags::ANONYMOUS).with(MapFlags::NORESERVE);
    // SAFETY: without MAP_FIXED the system picks free address space, so no mapping of
    // this process is replaced.
    let at = unsafe { sys.mmap(0, room, Prot::None, reserve, None, 0) }?;
    let addr = at.next_multiple_of(align);
    // SAFETY: `addr..addr + len` lies inside the reservation just made, which nothing
    // else uses: MAP_FIXED replaces only it.
    let mapped = unsafe { sys.mmap(addr, len, prot, flags.with(MapFlags::FIXED), fd, offset) };
    // SAFETY: the reservation's parts before and after the mapping are ours and unused
    // (one not given back stays reserved, which is harmless).
    unsafe {
        if addr > at {
            let _ = sys.munmap(at, addr - at);
        }
        if at + room > addr + len {
            let _ = sys.munmap(addr + len, at + room - (addr + len));
        }
    }
    match mapped {
        Ok(_) => Ok(addr),
        Err(e) => {
            // SAFETY: the reservation's aligned part, ours and unused.
            let _ = unsafe { sys.munmap(addr, len) };
            Err(e)
        }
    }
}

/// The real operating system.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostSys;

impl HostSys {
    /// Asks the kernel to back `addr..addr + len` with transparent huge pages (a
    /// hint for large buffers: one fault per 2 MiB on first touch instead of 512).
    pub fn advise_huge_pages(&self, addr: usize, len: usize) -> SysResult<()> {
        // SAFETY: MADV_HUGEPAGE changes neither the contents nor the extent of any
        // mapping; on a range that is not mapped it fails with ENOMEM.
        let r = unsafe { libc::madvise(addr as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
        if r < 0 {
            Err(SysError::new("madvise", Errno::last()))
        } else {
            Ok(())
        }
    }

    /// Faults `addr..addr + len` in for writing now (`MADV_POPULATE_WRITE`, Linux
    /// 5.14), as memory that is resident from the start (VRAM) is; huge pages where
    /// [`HostSys::advise_huge_pages`] asked for them. An older kernel answers EINVAL.
    pub fn populate(&self, addr: usize, len: usize) -> SysResult<()> {
        // MADV_POPULATE_WRITE: not in every libc crate version's constants.
        const MADV_POPULATE_WRITE: libc::c_int = 23;
        // SAFETY: populating changes neither the contents (fresh anonymous pages read
        // as zero either way) nor the extent of any mapping; on a range that is not
        // mapped it fails with ENOMEM.
        let r = unsafe { libc::madvise(addr as *mut libc::c_void, len, MADV_POPULATE_WRITE) };
        if r < 0 {
            Err(SysError::new("madvise", Errno::last()))
        } else {
            Ok(())
        }
    }
}

fn cpath(path: &Path) -> SysResult<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SysError::at("open", path, Errno::EINVAL))
}

fn io_err(op: &str, path: &Path, e: std::io::Error) -> SysError {
    SysError::at(op, path, Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))
}

impl Sys for HostSys {
    fn open(&self, path: &Path, mode: OpenMode) -> SysResult<Fd> {
        let c = cpath(path)?;
        let flags = libc::O_CLOEXEC
            | match mode {
                OpenMode::ReadOnly => libc::O_RDONLY,
                OpenMode::ReadWrite => libc::O_RDWR,
            };
        // SAFETY: `c` is a NUL-terminated string that outlives the call.
        let fd = unsafe { libc::open(c.as_ptr(), flags) };
        if fd < 0 {
            Err(SysError::at("open", path, Errno::last()))
        } else {
            Ok(Fd(fd))
        }
    }

    fn close(&self, fd: Fd) -> SysResult<()> {
        // SAFETY: closing a descriptor has no memory-safety effect; the caller owns `fd`.
        let r = unsafe { libc::close(fd.0) };
        if r < 0 {
            Err(SysError::new("close", Errno::last()))
        } else {
            Ok(())
        }
    }

    unsafe fn ioctl(&self, fd: Fd, request: u64, name: &str, arg: &mut [u8]) -> SysResult<i32> {
        // SAFETY: `arg` is a live, writable buffer of the struct the request names (its
        // size is encoded in `request`); pointers inside it are valid per this
        // method's contract.
        let r = unsafe { libc::ioctl(fd.0, request as libc::c_ulong, arg.as_mut_ptr()) };
        if r < 0 {
            Err(SysError::new(format!("ioctl {name}"), Errno::last()))
        } else {
            Ok(r)
        }
    }

    unsafe fn ioctl_value(&self, fd: Fd, request: u64, name: &str, value: u64) -> SysResult<i32> {
        let value =
            libc::c_ulong::try_from(value).map_err(|_| SysError::new(format!("ioctl {name}"), Errno::EINVAL))?;
        // SAFETY: the request takes its argument by value (this method's contract), so
        // the kernel dereferences nothing.
        let r = unsafe { libc::ioctl(fd.0, request as libc::c_ulong, value) };
        if r < 0 {
            Err(SysError::new(format!("ioctl {name}"), Errno::last()))
        } else {
            Ok(r)
        }
    }

    fn pread(&self, fd: Fd, buf: &mut [u8], offset: u64) -> SysResult<usize> {
        let offset = libc::off_t::try_from(offset).map_err(|_| SysError::new("pread", Errno::EINVAL))?;
        // SAFETY: `buf` is writable for `buf.len()` bytes for the duration of the call.
        let n = unsafe { libc::pread(fd.0, buf.as_mut_ptr().cast(), buf.len(), offset) };
        usize::try_from(n).map_err(|_| SysError::new("pread", Errno::last()))
    }

    fn pwrite(&self, fd: Fd, buf: &[u8], offset: u64) -> SysResult<usize> {
        let offset = libc::off_t::try_from(offset).map_err(|_| SysError::new("pwrite", Errno::EINVAL))?;
        // SAFETY: `buf` is readable for `buf.len()` bytes for the duration of the call.
        let n = unsafe { libc::pwrite(fd.0, buf.as_ptr().cast(), buf.len(), offset) };
        usize::try_from(n).map_err(|_| SysError::new("pwrite", Errno::last()))
    }

    unsafe fn mmap(
        &self,
        addr: usize,
        len: usize,
        prot: Prot,
        flags: MapFlags,
        fd: Option<Fd>,
        offset: u64,
    ) -> SysResult<usize> {
        let prot = match prot {
            Prot::None => libc::PROT_NONE,
            Prot::Read => libc::PROT_READ,
            Prot::ReadWrite => libc::PROT_READ | libc::PROT_WRITE,
        };
        let offset = libc::off_t::try_from(offset).map_err(|_| SysError::new("mmap", Errno::EINVAL))?;
        // SAFETY: with MAP_FIXED the caller owns the replaced range (contract); without
        // it the kernel picks free address space, so no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                addr as *mut libc::c_void,
                len,
                prot,
                flags.0,
                fd.map_or(-1, |f| f.0),
                offset,
            )
        };
        if p == libc::MAP_FAILED {
            Err(SysError::new("mmap", Errno::last()))
        } else {
            Ok(p as usize)
        }
    }

    unsafe fn munmap(&self, addr: usize, len: usize) -> SysResult<()> {
        // SAFETY: the caller owns the range and no longer uses it (contract).
        let r = unsafe { libc::munmap(addr as *mut libc::c_void, len) };
        if r < 0 {
            Err(SysError::new("munmap", Errno::last()))
        } else {
            Ok(())
        }
    }

    fn read_file(&self, path: &Path) -> SysResult<Vec<u8>> {
        std::fs::read(path).map_err(|e| io_err("read", path, e))
    }

    fn write_file(&self, path: &Path, data: &[u8]) -> SysResult<()> {
        std::fs::write(path, data).map_err(|e| io_err("write", path, e))
    }

    fn list_dir(&self, path: &Path) -> SysResult<Vec<String>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| io_err("readdir", path, e))? {
            let entry = entry.map_err(|e| io_err("readdir", path, e))?;
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn readlink(&self, path: &Path) -> SysResult<PathBuf> {
        std::fs::read_link(path).map_err(|e| io_err("readlink", path, e))
    }

    fn eventfd(&self, init: u32) -> SysResult<Fd> {
        // SAFETY: eventfd takes no pointers.
        let fd = unsafe { libc::eventfd(init, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            Err(SysError::new("eventfd", Errno::last()))
        } else {
            Ok(Fd(fd))
        }
    }

    fn read(&self, fd: Fd, buf: &mut [u8]) -> SysResult<usize> {
        // SAFETY: `buf` is writable for `buf.len()` bytes for the duration of the call.
        let n = unsafe { libc::read(fd.0, buf.as_mut_ptr().cast(), buf.len()) };
        usize::try_from(n).map_err(|_| SysError::new("read", Errno::last()))
    }

    fn write(&self, fd: Fd, buf: &[u8]) -> SysResult<usize> {
        // SAFETY: `buf` is readable for `buf.len()` bytes for the duration of the call.
        let n = unsafe { libc::write(fd.0, buf.as_ptr().cast(), buf.len()) };
        usize::try_from(n).map_err(|_| SysError::new("write", Errno::last()))
    }

    fn poll(&self, fds: &mut [PollFd], timeout_ms: i32) -> SysResult<usize> {
        let mut raw: Vec<libc::pollfd> = fds
            .iter()
            .map(|p| libc::pollfd {
                fd: p.fd.0,
                events: if p.readable { libc::POLLIN } else { 0 },
                revents: 0,
            })
            .collect();
        // SAFETY: `raw` holds `raw.len()` initialised pollfd entries for the call.
        let n = unsafe { libc::poll(raw.as_mut_ptr(), raw.len() as libc::nfds_t, timeout_ms) };
        let n = usize::try_from(n).map_err(|_| SysError::new("poll", Errno::last()))?;
        for (p, r) in fds.iter_mut().zip(&raw) {
            p.ready = r.revents & libc::POLLIN != 0;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Aligned mappings start at a multiple of the alignment and are usable; MAP_FIXED,
    /// an alignment that is not a power of two, no bytes and too many are refused.
    #[test]
    fn aligned_mappings_line_up() {
        let anon = MapFlags::PRIVATE.with(MapFlags::ANONYMOUS);
        for (align, len) in [
            (4096, 4096),
            (HUGE_PAGE, 4096),
            (HUGE_PAGE, 2 * HUGE_PAGE + 4096),
            (1 << 30, 8192),
        ] {
            let a = mmap_aligned(&HostSys, align, len, Prot::ReadWrite, anon, None, 0).expect("mapped");
            assert_eq!(a % align, 0, "{len:#x} at {a:#x}, aligned to {align:#x}");
            // SAFETY: `a..a + len` is the mapping just made, readable and writable.
            unsafe {
                let p = (a + len - 1) as *mut u8;
                assert_eq!(p.read_volatile(), 0);
                p.write_volatile(7);
                assert_eq!(p.read_volatile(), 7);
                HostSys.munmap(a, len).expect("unmapped");
            }
        }
        let refused = |align, len, flags| mmap_aligned(&HostSys, align, len, Prot::ReadWrite, flags, None, 0);
        assert_eq!(
            refused(4096, 4096, anon.with(MapFlags::FIXED)).unwrap_err().errno,
            Errno::EINVAL
        );
        assert_eq!(refused(3 << 20, 4096, anon).unwrap_err().errno, Errno::EINVAL);
        assert_eq!(refused(4096, 0, anon).unwrap_err().errno, Errno::EINVAL);
        assert_eq!(refused(4096, usize::MAX, anon).unwrap_err().errno, Errno::ENOMEM);
    }

    #[test]
    fn host_files_eventfd_and_anonymous_memory() {
        let sys = HostSys;
        assert!(sys.exists(Path::new("/proc/self")));
        assert!(
            sys.list_dir(Path::new("/proc/self"))
                .unwrap()
                .iter()
                .any(|n| n == "maps")
        );
        let e = sys
            .open(Path::new("/nonexistent/amd-hcq"), OpenMode::ReadOnly)
            .unwrap_err();
        assert_eq!(e.errno, Errno::ENOENT);
        assert!(e.to_string().contains("/nonexistent/amd-hcq"));

        let fd = sys.eventfd(0).unwrap();
        let mut p = [PollFd {
            fd,
            readable: true,
            ready: false,
        }];
        assert_eq!(sys.poll(&mut p, 0).unwrap(), 0);
        sys.write(fd, &1u64.to_ne_bytes()).unwrap();
        assert_eq!(sys.poll(&mut p, 0).unwrap(), 1);
        assert!(p[0].ready);
        let mut b = [0u8; 8];
        assert_eq!(sys.read(fd, &mut b).unwrap(), 8);
        assert_eq!(u64::from_ne_bytes(b), 1);
        sys.close(fd).unwrap();

        let f = sys.open(Path::new("/proc/self/pagemap"), OpenMode::ReadOnly).unwrap();
        let mut entry = [0u8; 8];
        // Unprivileged readers get the entries with the frame number zeroed.
        assert_eq!(sys.pread(f, &mut entry, 8 * 16).unwrap(), 8);
        sys.close(f).unwrap();
        assert!(sys.mmio(0x1000).is_none());

        // SAFETY: an anonymous mapping at a kernel-chosen address replaces nothing; it
        // is unmapped below and not used after.
        unsafe {
            let a = sys
                .mmap(
                    0,
                    8192,
                    Prot::ReadWrite,
                    MapFlags::PRIVATE.with(MapFlags::ANONYMOUS),
                    None,
                    0,
                )
                .unwrap();
            assert_ne!(a, 0);
            sys.munmap(a, 8192).unwrap();
        }
    }
}
