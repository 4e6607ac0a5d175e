//! GPU memory: allocation with the flag rules of tinygrad 0.10.1's `KFDIface.alloc`,
//! mapping to one or several GPUs, and release on drop.

use std::sync::Arc;

use nix::errno::Errno;
use parking_lot::Mutex;

use crate::abi::*;
use crate::process::DeviceShared;
use crate::raw::PAGE_SIZE;
use crate::raw::{Cell64, RawCell};
use crate::{KfdError, Result, raw};

/// What kind of memory to allocate (tinygrad 0.10.1's buffer options).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MemoryKind {
    /// System memory the CPU owns (USERPTR), mapped for the GPU.
    pub host: bool,
    /// Uncached, coherent GTT memory (rings, signals, write pointers).
    pub uncached: bool,
    /// The CPU must be able to read and write it (`PUBLIC`).
    pub cpu_access: bool,
}

impl MemoryKind {
    /// VRAM, GPU only.
    pub const DEVICE: Self = MemoryKind {
        host: false,
        uncached: false,
        cpu_access: false,
    };
    /// VRAM the CPU can reach through the BAR (needs resizable BAR for large sizes).
    pub const DEVICE_CPU_VISIBLE: Self = MemoryKind {
        host: false,
        uncached: false,
        cpu_access: true,
    };
    /// Uncached coherent GTT, CPU-visible.
    pub const UNCACHED: Self = MemoryKind {
        host: false,
        uncached: true,
        cpu_access: true,
    };
    /// Host memory (USERPTR), CPU-visible.
    pub const HOST: Self = MemoryKind {
        host: true,
        uncached: false,
        cpu_access: true,
    };

    /// The `KFD_IOC_ALLOC_MEM_FLAGS_*` for this kind: always writable, executable and
    /// no-substitute; uncached → GTT|COHERENT|UNCACHED, else host → USERPTR, else VRAM;
    /// PUBLIC when the CPU needs access or the memory is the host's.
    pub const fn flags(self) -> u32 {
        let mut f = KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
            | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
            | KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;
        if self.uncached {
            f |= KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED | KFD_IOC_ALLOC_MEM_FLAGS_GTT;
        } else if self.host {
            f |= KFD_IOC_ALLOC_MEM_FLAGS_USERPTR;
        } else {
            f |= KFD_IOC_ALLOC_MEM_FLAGS_VRAM;
        }
        if self.cpu_access || self.host {
            f |= KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;
        }
        f
    }

    /// Whether the CPU may read and write the memory.
    pub const fn cpu_visible(self) -> bool {
        self.host || self.uncached || self.cpu_access
    }

    /// A name for messages.
    pub const fn name(self) -> &'static str {
        match (self.uncached, self.host, self.cpu_access) {
            (true, _, _) => "uncached GTT memory",
            (false, true, _) => "host memory",
            (false, false, true) => "host-visible VRAM",
            (false, false, false) => "VRAM",
        }
    }
}

/// A GPU allocation. The GPU virtual address equals the CPU address (`va`). Dropping
/// it unmaps it from every GPU, removes the CPU mapping and frees it.
#[derive(Debug)]
pub struct KfdMemory {
    va: usize,
    size: usize,
    handle: u64,
    kind: MemoryKind,
    owner: Arc<DeviceShared>,
    mapped: Mutex<Vec<Arc<DeviceShared>>>,
}

impl KfdMemory {
    pub(crate) fn alloc(dev: &Arc<DeviceShared>, size: usize, kind: MemoryKind) -> Result<Self> {
        let size = size
            .checked_next_multiple_of(PAGE_SIZE)
            .filter(|&s| s > 0)
            .ok_or_else(|| KfdError::InvalidArgument(format!("allocation size {size}")))?;
        let sys = dev.process.sys.as_ref();
        let flags = kind.flags();
        let userptr = flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0;
        // Address space for the buffer (host memory itself for USERPTR): running out
        // of it is running out of memory for this request.
        let space = if userptr {
            raw::anon_shared(sys, size)
        } else {
            raw::reserve(sys, size)
        };
        let addr = space.map_err(|e| match e.errno {
            Errno::ENOMEM => KfdError::OutOfMemory {
                size: size as u64,
                kind: kind.name(),
            },
            _ => e.into(),
        })?;
        let mut args = kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr: addr as u64,
            size: size as u64,
            handle: 0,
            mmap_offset: if userptr { addr as u64 } else { 0 },
            gpu_id: dev.gpu_id,
            flags,
        };
        if let Err(e) = dev.process.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut args) {
            let _ = raw::unmap(sys, addr, size);
            return Err(match e.errno {
                Errno::EINVAL if flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 && kind.cpu_access => {
                    KfdError::HostVisibleVram
                }
                Errno::ENOMEM => KfdError::OutOfMemory {
                    size: size as u64,
                    kind: kind.name(),
                },
                _ => e.into(),
            });
        }
        let mem = KfdMemory {
            va: addr,
            size,
            handle: args.handle,
            kind,
            owner: dev.clone(),
            mapped: Mutex::new(Vec::new()),
        };
        if !userptr {
            let got = raw::map_over_reservation(sys, dev.drm_fd, addr, size, args.mmap_offset).map_err(|e| match e
                .errno
            {
                Errno::ENOMEM => KfdError::OutOfMemory {
                    size: size as u64,
                    kind: kind.name(),
                },
                _ => e.into(),
            })?;
            if got != addr {
                return Err(KfdError::BadReply(format!(
                    "render node mapped at {got:#x}, asked {addr:#x}"
                )));
            }
        }
        mem.map_to_shared(dev)?;
        Ok(mem)
    }

    /// Address (CPU and GPU).
    pub fn va(&self) -> usize {
        self.va
    }
    /// Size in bytes (a whole number of pages).
    pub fn size(&self) -> usize {
        self.size
    }
    /// KFD's handle.
    pub fn handle(&self) -> u64 {
        self.handle
    }
    /// The kind asked for.
    pub fn kind(&self) -> MemoryKind {
        self.kind
    }
    /// GPU ids the memory is mapped to.
    pub fn mapped_gpu_ids(&self) -> Vec<u32> {
        self.mapped.lock().iter().map(|d| d.gpu_id).collect()
    }

    pub(crate) fn map_to_shared(&self, dev: &Arc<DeviceShared>) -> Result<()> {
        let mut mapped = self.mapped.lock();
        if mapped.iter().any(|d| d.gpu_id == dev.gpu_id) {
            return Ok(());
        }
        if !Arc::ptr_eq(&dev.process, &self.owner.process) {
            return Err(KfdError::InvalidArgument(
                "memory and device belong to different KFD handles".into(),
            ));
        }
        let mut ids: Vec<u32> = mapped.iter().map(|d| d.gpu_id).collect();
        ids.push(dev.gpu_id);
        let (r, n) = raw::map_memory(dev.process.sys.as_ref(), dev.process.kfd_fd, true, self.handle, &ids);
        r?;
        if n as usize != ids.len() {
            return Err(KfdError::BadReply(format!("mapped to {n} of {} GPUs", ids.len())));
        }
        mapped.push(dev.clone());
        Ok(())
    }

    pub(crate) fn unmap_from_shared(&self, dev: &Arc<DeviceShared>) -> Result<()> {
        let mut mapped = self.mapped.lock();
        let Some(i) = mapped.iter().position(|d| d.gpu_id == dev.gpu_id) else {
            return Ok(());
        };
        let (r, n) = raw::map_memory(
            dev.process.sys.as_ref(),
            dev.process.kfd_fd,
            false,
            self.handle,
            &[dev.gpu_id],
        );
        r?;
        if n != 1 {
            return Err(KfdError::BadReply(format!("unmapped from {n} of 1 GPUs")));
        }
        mapped.remove(i);
        Ok(())
    }

    /// Writes the low `bytes` (1, 2, 4 or 8) bytes of `v`, little-endian, at `offset`;
    /// the memory must be CPU-visible.
    #[inline]
    pub fn write_le(&self, offset: usize, v: u64, bytes: usize) -> Result<()> {
        if !matches!(bytes, 1 | 2 | 4 | 8) {
            return Err(KfdError::InvalidArgument(format!("a store of {bytes} bytes")));
        }
        let addr = self.cpu_range(offset, bytes)?;
        raw::store_le(addr, v, bytes);
        Ok(())
    }

    /// Stores each `(offset, value, bytes)` of `items` as [`KfdMemory::write_le`] does,
    /// offsets counted from `base` and each store inside `base..base + limit` (a view
    /// of the buffer); the memory must be CPU-visible. Stops at the first bad item,
    /// after storing the ones before it.
    pub fn write_le_all(&self, base: usize, limit: usize, items: &[(usize, u64, usize)]) -> Result<()> {
        let view = View {
            start: self.cpu_range(base, limit)?,
            base,
            limit,
        };
        for &(offset, v, bytes) in items {
            if !view.store(offset, v, bytes) {
                return Err(view.refused(offset, bytes));
            }
        }
        Ok(())
    }

    /// For each [`Spread`] of `values`, stores the low `bytes` of its value at each
    /// offset of `offsets[from..to]` (offsets from `base`, each store inside
    /// `base..base + limit`): one value at several places, as a bound command list's
    /// sites take them. The memory must be CPU-visible. Stops at the first bad
    /// spread or offset, after storing the ones before it.
    pub fn write_le_spread(&self, base: usize, limit: usize, values: &[Spread], offsets: &[usize]) -> Result<()> {
        let view = View {
            start: self.cpu_range(base, limit)?,
            base,
            limit,
        };
        for s in values {
            let Some(at) = offsets.get(s.from as usize..s.to as usize) else {
                return Err(offsets_error(s, offsets.len()));
            };
            let bytes = usize::from(s.bytes);
            let stored = match bytes {
                8 => view.store_each(at, s.value, 8),
                4 => view.store_each(at, s.value, 4),
                2 => view.store_each(at, s.value, 2),
                1 => view.store_each(at, s.value, 1),
                _ => false,
            };
            if !stored {
                return Err(view.refused_any(at, bytes));
            }
        }
        Ok(())
    }

    /// Copies `data` into the memory at `offset`; the memory must be CPU-visible.
    #[inline]
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        let addr = self.cpu_range(offset, data.len())?;
        raw::copy_in(addr, data);
        Ok(())
    }

    /// Copies from the memory at `offset` into `out`; the memory must be CPU-visible.
    #[inline]
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        let addr = self.cpu_range(offset, out.len())?;
        raw::copy_out(addr, out);
        Ok(())
    }

    /// The 64-bit cell at `offset` (8-aligned) of CPU-visible memory, for values the
    /// GPU and the CPU both update (signals, pointers). It stays valid while `self`
    /// lives; the caller keeps the memory alive for as long as it uses the cell.
    pub fn cell(&self, offset: usize) -> Result<Cell64<'_>> {
        let addr = self.cpu_range(offset, 8)?;
        let raw = RawCell::new(addr)
            .ok_or_else(|| KfdError::InvalidArgument(format!("offset {offset:#x} is not 8-byte aligned")))?;
        Ok(Cell64::borrowed(raw, self))
    }

    #[inline]
    fn cpu_range(&self, offset: usize, len: usize) -> Result<usize> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size && self.kind.cpu_visible() => Ok(self.va + offset),
            _ => Err(self.range_error(offset, len)),
        }
    }

    /// Why [`KfdMemory::cpu_range`] refused `offset..offset + len`.
    #[cold]
    fn range_error(&self, offset: usize, len: usize) -> KfdError {
        if !self.kind.cpu_visible() {
            return KfdError::InvalidArgument(format!("{} is not CPU-visible", self.kind.name()));
        }
        KfdError::InvalidArgument(format!(
            "range {offset:#x}+{len:#x} outside a buffer of {:#x} bytes",
            self.size
        ))
    }
}

/// The error of a [`Spread`] whose offsets are not in the list of `len`.
#[cold]
fn offsets_error(s: &Spread, len: usize) -> KfdError {
    KfdError::InvalidArgument(format!("offsets {}..{} of {len}", s.from, s.to))
}

/// One value for [`KfdMemory::write_le_spread`]: its low `bytes` (1, 2, 4 or 8),
/// little-endian, go to each offset of `offsets[from..to]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spread {
    /// The value (its low `bytes` are stored).
    pub value: u64,
    /// Its first offset: `offsets[from]`.
    pub from: u32,
    /// The end of its offsets: `offsets[from..to]`.
    pub to: u32,
    /// Bytes stored at each offset: 1, 2, 4 or 8.
    pub bytes: u8,
}

/// `limit` bytes of CPU-visible memory at `start`, byte `base` of their buffer: where
/// the batched stores go.
struct View {
    start: usize,
    base: usize,
    limit: usize,
}

impl View {
    /// Stores the low `bytes` of `v` at byte `offset` of the view; false (nothing
    /// stored) when that is not 1, 2, 4 or 8 bytes inside it.
    #[inline(always)]
    fn store(&self, offset: usize, v: u64, bytes: usize) -> bool {
        let limit = self.limit;
        // `bytes` is 1, 2, 4 or 8 (bit `bytes` of 0x116) and the store ends inside the
        // view, without an overflow: `offset <= limit - bytes`.
        let fits = bytes <= 8 && (0x116 >> bytes) & 1 == 1 && limit >= bytes && offset <= limit - bytes;
        if fits {
            raw::store_le(self.start + offset, v, bytes);
        }
        fits
    }

    /// Stores the low `bytes` (1, 2, 4 or 8) of `v` at each offset of `at`, in order,
    /// up to the first that is not inside the view; whether it stored them all.
    #[inline(always)]
    fn store_each(&self, at: &[usize], v: u64, bytes: usize) -> bool {
        // The store ends inside the view, without an overflow: `offset <= last`.
        let Some(last) = self.limit.checked_sub(bytes) else {
            return at.is_empty();
        };
        for &offset in at {
            if offset > last {
                return false;
            }
            raw::store_le(self.start + offset, v, bytes);
        }
        true
    }

    /// The error of [`View::store_each`] refusing `bytes` at one of `at`'s offsets.
    #[cold]
    fn refused_any(&self, at: &[usize], bytes: usize) -> KfdError {
        if !matches!(bytes, 1 | 2 | 4 | 8) {
            return KfdError::InvalidArgument(format!("a store of {bytes} bytes"));
        }
        let bad = at
            .iter()
            .copied()
            .find(|&o| o.checked_add(bytes).is_none_or(|end| end > self.limit));
        self.refused(bad.unwrap_or(0), bytes)
    }

    /// The error of a store [`View::store`] or [`View::store_each`] refused.
    fn refused(&self, offset: usize, bytes: usize) -> KfdError {
        let View { base, limit, .. } = *self;
        KfdError::InvalidArgument(format!(
            "a store of {bytes} bytes at {offset:#x} outside {limit:#x} bytes at {base:#x}"
        ))
    }
}

impl Drop for KfdMemory {
    fn drop(&mut self) {
        let process = &self.owner.process;
        let sys = process.sys.as_ref();
        let ids = self.mapped_gpu_ids();
        if !ids.is_empty() {
            let (r, n) = raw::map_memory(sys, process.kfd_fd, false, self.handle, &ids);
            if let Err(e) = r {
                process.defer(e.into());
            } else if n as usize != ids.len() {
                process.defer(KfdError::BadReply(format!("unmapped from {n} of {} GPUs", ids.len())));
            }
        }
        if let Err(e) = raw::unmap(sys, self.va, self.size) {
            process.defer(e.into());
        }
        let mut args = kfd_ioctl_free_memory_of_gpu_args { handle: self.handle };
        if let Err(e) = process.ioctl(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut args) {
            process.defer(e.into());
        }
        // `mapped` drops here, releasing the devices (and their VMs) after the memory.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view's stores (the raw stores of every bound replay) land little-endian at
    /// any alignment, only inside the view: a store reaching past its end, or of a width
    /// other than 1, 2, 4 or 8, stores nothing. Runs under Miri (`cargo xtask miri`),
    /// which checks the raw stores themselves.
    #[test]
    fn view_stores_stay_inside_and_are_little_endian() {
        let mut mem = vec![0xeeu8; 32];
        // The view is bytes 8..24 of `mem`: 8 guard bytes either side.
        let view = View {
            start: mem.as_mut_ptr() as usize + 8,
            base: 0x1000,
            limit: 16,
        };
        assert!(view.store_each(&[0, 9], 0x0102_0304_0506_0708, 4));
        assert!(view.store(13, 0xa1a2, 2));
        assert!(view.store(15, 0x77, 1));
        assert!(view.store_each(&[1], 0x1122_3344_5566_7788, 8));
        let mut want = vec![0xeeu8; 32];
        want[8..12].copy_from_slice(&[8, 7, 6, 5]);
        want[17..21].copy_from_slice(&[8, 7, 6, 5]);
        want[21..23].copy_from_slice(&[0xa2, 0xa1]);
        want[23] = 0x77;
        want[9..17].copy_from_slice(&0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(mem, want);
        for (at, bytes) in [(9, 8), (13, 4), (15, 2), (16, 1), (usize::MAX, 1), (0, 3), (0, 16)] {
            assert!(!view.store(at, u64::MAX, bytes), "{bytes} bytes at {at}");
        }
        // The stores before the first refused offset are made, none after it.
        assert!(!view.store_each(&[0, 14, 2], 0, 4));
        want[8..12].fill(0);
        assert_eq!(mem, want);
        let e = view.refused_any(&[0, 14, 2], 4).to_string();
        assert!(e.contains("4 bytes at 0xe outside 0x10 bytes at 0x1000"), "{e}");
        let tiny = View {
            start: view.start,
            base: 0,
            limit: 2,
        };
        assert!(!tiny.store_each(&[0], 0, 4) && tiny.store_each(&[], 0, 4));
    }

    #[test]
    fn flag_rules() {
        let f = MemoryKind::DEVICE.flags();
        assert_ne!(f & KFD_IOC_ALLOC_MEM_FLAGS_VRAM, 0);
        assert_eq!(f & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC, 0);
        assert_ne!(
            MemoryKind::DEVICE_CPU_VISIBLE.flags() & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
            0
        );
        let u = MemoryKind::UNCACHED.flags();
        let want = KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
        assert_eq!(u & want, want);
        assert_eq!(u & KFD_IOC_ALLOC_MEM_FLAGS_VRAM, 0);
        let h = MemoryKind::HOST.flags();
        assert_ne!(h & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, 0);
        assert_ne!(h & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC, 0);
        for k in [MemoryKind::DEVICE, MemoryKind::UNCACHED, MemoryKind::HOST] {
            let common = KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
                | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
                | KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;
            assert_eq!(k.flags() & common, common);
        }
    }
}
