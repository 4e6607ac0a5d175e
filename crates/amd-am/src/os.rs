//! The crate's unsafe calls into [`Sys`]: BAR mappings (map, volatile and bulk copies,
//! and the VFIO ioctls, whose arguments hold no pointers.

#![allow(unsafe_code)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use amd_kfd::mmio::Mmio;
use amd_kfd::sys::{Fd, MapFlags, Prot, Sys, SysError, SysResult};
use nix::errno::Errno;

/// A BAR (or a window of one) mapped shared into the process through a [`Sys`]. It
/// owns the mapping and unmaps it when dropped; every access through it is
/// bounds-checked, and volatile (the memory is the device's) except the bulk copies of
/// buffer contents.
pub struct BarMapping {
    sys: Arc<dyn Sys>,
    addr: usize,
    len: usize,
}

impl std::fmt::Debug for BarMapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BarMapping")
            .field("addr", &format_args!("{:#x}", self.addr))
            .field("len", &format_args!("{:#x}", self.len))
            .finish()
    }
}

impl BarMapping {
    /// Maps `len` bytes of `fd` (a sysfs `resourceN` file) from `offset`, readable and
    /// writable, shared, at an address the system picks. `path` names the file in
    /// errors.
    pub(crate) fn map(sys: &Arc<dyn Sys>, fd: Fd, len: usize, offset: u64, path: &Path) -> SysResult<Self> {
        if len == 0 {
            return Err(SysError::at("mmap", path, Errno::EINVAL));
        }
        // SAFETY: without MAP_FIXED the system picks free address space, so no mapping
        // of this process is replaced.
        let addr =
            unsafe { sys.mmap(0, len, Prot::ReadWrite, MapFlags::SHARED, Some(fd), offset) }.map_err(|e| SysError {
                path: e.path.or_else(|| Some(path.to_path_buf())),
                ..e
            })?;
        Ok(BarMapping {
            sys: sys.clone(),
            addr,
            len,
        })
    }

    /// Maps `len` bytes (a whole number of pages) of anonymous, shared, locked host
    /// memory, each page touched so that it has a frame for `/proc/self/pagemap`
    /// (tinygrad 0.10.1's `PCIIface.alloc(host=True)`: the GPU reaches it by those
    /// frames).
    pub fn anonymous(sys: &Arc<dyn Sys>, len: usize) -> SysResult<Self> {
        if len == 0 || len % 4096 != 0 {
            return Err(SysError::new("mmap", Errno::EINVAL));
        }
        let flags = MapFlags::SHARED.with(MapFlags::ANONYMOUS).with(MapFlags::LOCKED);
        let addr = if len >= amd_kfd::sys::HUGE_PAGE {
            // At a huge-page boundary: a buffer whose 2 MiB regions line up with huge
            // pages can be backed by them (by the kernel where shared memory may have
            // huge pages, and by the mock GPU, which asks for them on the memory its DMA
            // copies move).
            amd_kfd::sys::mmap_aligned(&**sys, amd_kfd::sys::HUGE_PAGE, len, Prot::ReadWrite, flags, None, 0)?
        } else {
            // SAFETY: without MAP_FIXED the system picks free address space, so no
            // mapping of this process is replaced.
            unsafe { sys.mmap(0, len, Prot::ReadWrite, flags, None, 0) }?
        };
        let m = BarMapping {
            sys: sys.clone(),
            addr,
            len,
        };
        for page in (0..len).step_by(4096) {
            m.write(page as u64, &[0]);
        }
        Ok(m)
    }

    /// The mapping's address in the process.
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (never: a mapping has at least one byte).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn range(&self, offset: u64, n: usize) -> Option<usize> {
        let start = usize::try_from(offset).ok()?;
        (start.checked_add(n)? <= self.len).then_some(start)
    }

    /// Copies `buf.len()` bytes from `offset` into `buf` with volatile loads (8 bytes
    /// at a time where aligned); false (and nothing read) if the range leaves the
    /// mapping.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> bool {
        let Some(start) = self.range(offset, buf.len()) else {
            return false;
        };
        let base = self.addr + start;
        let (head, words, tail) = split_aligned(base, buf.len());
        let mut i = 0;
        for _ in 0..head {
            // SAFETY: `start + i < len` (checked above), and `addr..addr + len` is a
            // live shared mapping this value owns.
            buf[i] = unsafe { ((base + i) as *const u8).read_volatile() };
            i += 1;
        }
        for _ in 0..words {
            // SAFETY: as above, for the 8 bytes at `base + i`, which is 8-aligned
            // (`split_aligned`).
            let w = unsafe { ((base + i) as *const u64).read_volatile() };
            buf[i..i + 8].copy_from_slice(&w.to_ne_bytes());
            i += 8;
        }
        for _ in 0..tail {
            // SAFETY: as for the head bytes.
            buf[i] = unsafe { ((base + i) as *const u8).read_volatile() };
            i += 1;
        }
        true
    }

    /// Copies `data` to `offset` with volatile stores (8 bytes at a time where
    /// aligned); false (and nothing written) if the range leaves the mapping.
    pub fn write(&self, offset: u64, data: &[u8]) -> bool {
        self.store(
            offset,
            data.len(),
            |i| data[i],
            |i| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&data[i..i + 8]);
                u64::from_ne_bytes(w)
            },
        )
    }

    /// Copies `data` to `offset` as one bulk copy, for a buffer's contents: the width
    /// and order of the stores are unspecified (`memcpy`, as Linux's `memcpy_toio`
    /// and tinygrad's copies into a BAR make them), which lets it move whole cache
    /// lines; false (and nothing written) if the range leaves the mapping. Values the
    /// device reads as it runs (rings, page tables) take [`BarMapping::write`].
    pub fn copy_from(&self, offset: u64, data: &[u8]) -> bool {
        let Some(start) = self.range(offset, data.len()) else {
            return false;
        };
        // SAFETY: `start + data.len() <= len` (checked above) inside a live, shared,
        // writable mapping this value owns; `data` is process memory outside it (no
        // reference into the mapping is ever handed out), so they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), (self.addr + start) as *mut u8, data.len()) };
        true
    }

    /// Copies `out.len()` bytes from `offset` into `out` as one bulk copy, for a
    /// buffer's contents (as [`BarMapping::copy_from`], the other way); false (and
    /// nothing read) if the range leaves the mapping.
    pub fn copy_to(&self, offset: u64, out: &mut [u8]) -> bool {
        let Some(start) = self.range(offset, out.len()) else {
            return false;
        };
        // SAFETY: as in `copy_from`, with the roles swapped.
        unsafe { std::ptr::copy_nonoverlapping((self.addr + start) as *const u8, out.as_mut_ptr(), out.len()) };
        true
    }

    /// Writes `len` zero bytes at `offset` with volatile stores; false (and nothing
    /// written) if the range leaves the mapping.
    pub fn zero(&self, offset: u64, len: usize) -> bool {
        self.store(offset, len, |_| 0, |_| 0)
    }

    fn store(&self, offset: u64, len: usize, byte: impl Fn(usize) -> u8, word: impl Fn(usize) -> u64) -> bool {
        let Some(start) = self.range(offset, len) else {
            return false;
        };
        let base = self.addr + start;
        let (head, words, tail) = split_aligned(base, len);
        let mut i = 0;
        for _ in 0..head {
            // SAFETY: `start + i < len` (checked above); the mapping is live, shared
            // and writable.
            unsafe { ((base + i) as *mut u8).write_volatile(byte(i)) };
            i += 1;
        }
        for _ in 0..words {
            // SAFETY: as above, for the 8 bytes at the 8-aligned `base + i`.
            unsafe { ((base + i) as *mut u64).write_volatile(word(i)) };
            i += 8;
        }
        for _ in 0..tail {
            // SAFETY: as for the head bytes.
            unsafe { ((base + i) as *mut u8).write_volatile(byte(i)) };
            i += 1;
        }
        true
    }

    /// The 64-bit cell at `offset` (8-aligned, inside the mapping) as an atomic, or
    /// `None`.
    fn cell(&self, offset: u64) -> Option<&AtomicU64> {
        let start = self.range(offset, 8).filter(|s| (self.addr + s) % 8 == 0)?;
        // SAFETY: `start + 8 <= len` and the address is 8-aligned (checked above);
        // the shared mapping lives as long as `self`, which the reference borrows.
        // Device memory is only ever accessed through volatile or atomic operations
        // by this crate.
        Some(unsafe { AtomicU64::from_ptr((self.addr + start) as *mut u64) })
    }

    /// Stores `v` into the 64-bit cell at `offset` with `order` (one 64-bit store, as
    /// a doorbell needs); false if the cell is misaligned or outside the mapping.
    pub fn store_u64(&self, offset: u64, v: u64, order: Ordering) -> bool {
        self.cell(offset).map(|c| c.store(v, order)).is_some()
    }

    /// Loads the 64-bit cell at `offset` with `order`; `None` if it is misaligned or
    /// outside the mapping.
    pub fn load_u64(&self, offset: u64, order: Ordering) -> Option<u64> {
        self.cell(offset).map(|c| c.load(order))
    }

    /// The registers of this mapping when it is the register BAR: the `Sys`'s model
    /// (the mock) or volatile access. The result keeps the mapping alive.
    pub(crate) fn registers(self: &Arc<Self>) -> Arc<dyn Mmio> {
        // SAFETY: `addr..addr + len` is the live register mapping, and the result
        // holds an `Arc` of it, so the mapping outlives every access.
        let inner = unsafe { crate::bar::registers(&*self.sys, self.addr, self.len) };
        Arc::new(MappedRegisters {
            inner,
            _mapping: self.clone(),
        })
    }
}

impl Drop for BarMapping {
    fn drop(&mut self) {
        // SAFETY: the mapping is this value's own, and nothing reaches it after drop
        // (registers over it hold an `Arc` of this value). An error is ignored: the
        // address space is lost, nothing unsafe follows.
        let _ = unsafe { self.sys.munmap(self.addr, self.len) };
    }
}

/// Registers over a [`BarMapping`] that they keep alive.
struct MappedRegisters {
    inner: Arc<dyn Mmio>,
    _mapping: Arc<BarMapping>,
}

impl Mmio for MappedRegisters {
    fn read32(&self, reg: u32) -> u32 {
        self.inner.read32(reg)
    }
    fn write32(&self, reg: u32, value: u32) {
        self.inner.write32(reg, value)
    }
    fn size_dwords(&self) -> u32 {
        self.inner.size_dwords()
    }
}

/// A VFIO ioctl whose argument is passed by value (`VFIO_CHECK_EXTENSION`,
/// `VFIO_SET_IOMMU`, `VFIO_DEVICE_RESET`).
pub(crate) fn vfio_value(sys: &dyn Sys, fd: Fd, request: u64, name: &str, value: u64) -> SysResult<i32> {
    debug_assert!(matches!(
        request,
        crate::vfio::VFIO_CHECK_EXTENSION | crate::vfio::VFIO_SET_IOMMU | crate::vfio::VFIO_DEVICE_RESET
    ));
    // SAFETY: these requests take their argument by value (or none): nothing is
    // dereferenced.
    unsafe { sys.ioctl_value(fd, request, name, value) }
}

/// A VFIO ioctl whose argument is a buffer without pointers inside
/// (`VFIO_GROUP_SET_CONTAINER`: an `int`; `VFIO_GROUP_GET_DEVICE_FD`: a
/// NUL-terminated name; `VFIO_DEVICE_SET_IRQS`: `vfio_irq_set` and its eventfds;
/// the `GET_*INFO` structs).
pub(crate) fn vfio_buf(sys: &dyn Sys, fd: Fd, request: u64, name: &str, arg: &mut [u8]) -> SysResult<i32> {
    debug_assert!(matches!(
        request,
        crate::vfio::VFIO_GROUP_SET_CONTAINER
            | crate::vfio::VFIO_GROUP_GET_DEVICE_FD
            | crate::vfio::VFIO_DEVICE_SET_IRQS
            | crate::vfio::VFIO_DEVICE_GET_REGION_INFO
            | crate::vfio::VFIO_DEVICE_GET_INFO
            | crate::vfio::VFIO_GROUP_GET_STATUS
    ));
    // SAFETY: the argument is the whole struct (or string) the request reads and
    // writes, and holds no pointers (its `argsz`, where it has one, is its length).
    unsafe { sys.ioctl(fd, request, name, arg) }
}

/// `len` bytes from address `addr` as unaligned head bytes, whole aligned 8-byte
/// words, and tail bytes.
fn split_aligned(addr: usize, len: usize) -> (usize, usize, usize) {
    let head = (addr.wrapping_neg() % 8).min(len);
    let words = (len - head) / 8;
    (head, words, len - head - words * 8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use amd_kfd::sys::HostSys;

    /// Host memory of a huge page or more starts at a huge-page boundary, reads zero
    /// and holds what is written; smaller memory is mapped where the system puts it.
    #[test]
    fn large_host_memory_lines_up_with_huge_pages() {
        let sys: Arc<dyn Sys> = Arc::new(HostSys);
        use amd_kfd::sys::HUGE_PAGE;
        for len in [HUGE_PAGE, 3 * HUGE_PAGE + 4096] {
            let m = BarMapping::anonymous(&sys, len).expect("anonymous mapping");
            assert_eq!(m.addr() % HUGE_PAGE, 0, "{len:#x} bytes at {:#x}", m.addr());
            let mut first = [1u8; 8];
            assert!(m.copy_to(len as u64 - 8, &mut first));
            assert_eq!(first, [0; 8]);
            assert!(m.copy_from(len as u64 - 8, &[7; 8]));
            assert!(m.copy_to(len as u64 - 8, &mut first));
            assert_eq!(first, [7; 8]);
        }
        assert!(BarMapping::anonymous(&sys, 4096).is_ok());
    }

    /// The bulk copies move buffer contents both ways, at any offset and length inside
    /// the mapping, agree with the volatile accessors, and refuse a range that leaves it.
    #[test]
    fn bulk_copies_stay_inside_the_mapping() {
        let sys: Arc<dyn Sys> = Arc::new(HostSys);
        let m = BarMapping::anonymous(&sys, 2 * 4096).expect("anonymous mapping");
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 + 3) as u8).collect();
        assert!(m.copy_from(1001, &data));
        let mut back = vec![0u8; data.len()];
        assert!(m.copy_to(1001, &mut back));
        assert_eq!(back, data);
        let mut volatile = vec![0u8; 16];
        assert!(m.read(1001 + 4000, &mut volatile));
        assert_eq!(volatile, data[4000..4016]);
        // The last byte, and one past it.
        assert!(m.copy_from(8191, &[9]));
        assert!(!m.copy_from(8191, &[9, 9]));
        assert!(!m.copy_to(8192, &mut [0]));
        assert!(!m.copy_from(u64::MAX, &[1]));
        let mut last = [0u8; 2];
        assert!(!m.copy_to(8191, &mut last));
        assert!(m.copy_to(8191, &mut last[..1]));
        assert_eq!(last[0], 9);
    }
}
