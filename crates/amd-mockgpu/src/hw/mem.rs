//! The GPU's view of memory: every access a packet or a kernel makes is checked
//! against the GPU's mappings (from the driver half) and against the host mappings
//! that back them; only then is host memory touched.
//!
//! Accesses run with the driver lock held, and the mock's `munmap` takes that lock
//! and drops GPU mappings of the range first, so checked memory cannot be unmapped
//! while it is being read or written.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use amd_kfd::abi::KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;

use crate::MemoryFault;
use crate::driver::Driver;

/// Result of a checked access.
pub type MemResult<T> = Result<T, MemoryFault>;

fn not_present(va: u64) -> MemoryFault {
    MemoryFault {
        va,
        not_present: true,
        ..Default::default()
    }
}

impl Driver {
    /// Checks that GPU `g` may access `[addr, addr + len)`, for writing if `write`.
    pub(crate) fn gpu_check(&self, g: usize, addr: u64, len: u64, write: bool) -> MemResult<()> {
        if len == 0 {
            return Ok(());
        }
        let gpu = self.gpus.get(g).ok_or_else(|| not_present(addr))?;
        let end = addr.checked_add(len).ok_or_else(|| not_present(addr))?;
        let (&va, &(size, handle)) = gpu.mapped.range(..=addr).next_back().ok_or_else(|| not_present(addr))?;
        if end > va + size {
            // The access runs off the end of the buffer: the first byte past it faults.
            return Err(not_present((va + size).max(addr)));
        }
        if let Some(&bad) = gpu.fault_addrs.range(addr..end).next() {
            return Err(not_present(bad));
        }
        if write
            && self
                .handles
                .get(&handle)
                .is_some_and(|h| h.flags & KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE == 0)
        {
            return Err(MemoryFault {
                va: addr,
                read_only: true,
                ..Default::default()
            });
        }
        // The GPU mapping must be backed by a host mapping the mock can touch.
        let (Ok(a), Ok(e)) = (usize::try_from(addr), usize::try_from(end)) else {
            return Err(not_present(addr));
        };
        if !self.accessible.contains(a, e) {
            return Err(not_present(addr));
        }
        Ok(())
    }

    /// Reads `out.len()` bytes at `addr`.
    pub(crate) fn gpu_read(&self, g: usize, addr: u64, out: &mut [u8]) -> MemResult<()> {
        self.gpu_check(g, addr, out.len() as u64, false)?;
        // SAFETY: the range is mapped, readable host memory (checked above) that cannot
        // be unmapped while the driver lock is held; `out` is ordinary memory.
        unsafe { std::ptr::copy_nonoverlapping(addr as usize as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Reads `n` dwords at `addr`.
    pub(crate) fn gpu_read_words(&self, g: usize, addr: u64, n: usize) -> MemResult<Vec<u32>> {
        let mut words = vec![0u32; n];
        let bytes = zerocopy::IntoBytes::as_mut_bytes(words.as_mut_slice());
        self.gpu_read(g, addr, bytes)?;
        Ok(words)
    }

    /// Writes `data` at `addr`.
    pub(crate) fn gpu_write(&self, g: usize, addr: u64, data: &[u8]) -> MemResult<()> {
        self.gpu_check(g, addr, data.len() as u64, true)?;
        // SAFETY: the range is mapped, writable host memory (checked above), pinned by
        // the driver lock; `data` is ordinary memory and cannot overlap it.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as usize as *mut u8, data.len()) };
        Ok(())
    }

    /// Loads a dword (atomically, with Acquire, where aligned: signals and pointers).
    pub(crate) fn gpu_load_u32(&self, g: usize, addr: u64) -> MemResult<u32> {
        self.gpu_check(g, addr, 4, false)?;
        if addr % 4 == 0 {
            // SAFETY: 4 aligned, mapped readable bytes (checked), pinned by the lock;
            // the atomic view makes a concurrent CPU store to the same word well defined.
            Ok(unsafe { &*(addr as usize as *const AtomicU32) }.load(Ordering::Acquire))
        } else {
            let mut b = [0u8; 4];
            self.gpu_read(g, addr, &mut b)?;
            Ok(u32::from_le_bytes(b))
        }
    }

    /// Loads a qword (atomically, Acquire, where aligned).
    pub(crate) fn gpu_load_u64(&self, g: usize, addr: u64) -> MemResult<u64> {
        self.gpu_check(g, addr, 8, false)?;
        if addr % 8 == 0 {
            // SAFETY: as for `gpu_load_u32`, with 8 aligned bytes.
            Ok(unsafe { &*(addr as usize as *const AtomicU64) }.load(Ordering::Acquire))
        } else {
            let mut b = [0u8; 8];
            self.gpu_read(g, addr, &mut b)?;
            Ok(u64::from_le_bytes(b))
        }
    }

    /// Stores a dword (atomically, with Release, where aligned).
    pub(crate) fn gpu_store_u32(&self, g: usize, addr: u64, v: u32) -> MemResult<()> {
        self.gpu_check(g, addr, 4, true)?;
        if addr % 4 == 0 {
            // SAFETY: 4 aligned, mapped writable bytes (checked), pinned by the lock.
            unsafe { &*(addr as usize as *const AtomicU32) }.store(v, Ordering::Release);
            Ok(())
        } else {
            self.gpu_write(g, addr, &v.to_le_bytes())
        }
    }

    /// Stores a qword (atomically, Release, where aligned).
    pub(crate) fn gpu_store_u64(&self, g: usize, addr: u64, v: u64) -> MemResult<()> {
        self.gpu_check(g, addr, 8, true)?;
        if addr % 8 == 0 {
            // SAFETY: 8 aligned, mapped writable bytes (checked), pinned by the lock.
            unsafe { &*(addr as usize as *const AtomicU64) }.store(v, Ordering::Release);
            Ok(())
        } else {
            self.gpu_write(g, addr, &v.to_le_bytes())
        }
    }

    /// Copies `len` bytes from `src` to `dst` (memmove semantics where they overlap).
    pub(crate) fn gpu_copy(&self, g: usize, dst: u64, src: u64, len: u64) -> MemResult<()> {
        self.gpu_check(g, src, len, false)?;
        self.gpu_check(g, dst, len, true)?;
        // SAFETY: both ranges are mapped host memory (checked), readable and writable
        // respectively, pinned by the lock; `copy` allows overlap.
        unsafe { std::ptr::copy(src as usize as *const u8, dst as usize as *mut u8, len as usize) };
        Ok(())
    }

    /// Fills `len` bytes at `dst` with the little-endian bytes of `pattern`, repeated.
    pub(crate) fn gpu_fill(&self, g: usize, dst: u64, pattern: u32, len: u64) -> MemResult<()> {
        self.gpu_check(g, dst, len, true)?;
        let bytes = pattern.to_le_bytes();
        // SAFETY: the range is mapped writable host memory (checked), pinned by the
        // lock, and no reference to it exists while this slice lives.
        let out = unsafe { std::slice::from_raw_parts_mut(dst as usize as *mut u8, len as usize) };
        if bytes.iter().all(|&b| b == bytes[0]) {
            out.fill(bytes[0]);
        } else {
            for (i, b) in out.iter_mut().enumerate() {
                *b = bytes[i % 4];
            }
        }
        Ok(())
    }

    /// Reads a qword of host memory the mock mapped (event-page slots), without a GPU.
    pub(crate) fn host_load_u64(&self, addr: u64) -> Option<u64> {
        let a = usize::try_from(addr).ok().filter(|a| a % 8 == 0)?;
        if !self.accessible.contains(a, a.checked_add(8)?) {
            return None;
        }
        // SAFETY: 8 aligned bytes of a live read-write host mapping made through the
        // mock (checked), pinned by the driver lock.
        Some(unsafe { &*(a as *const AtomicU64) }.load(Ordering::Acquire))
    }

    /// Writes a qword of host memory the mock mapped (event-page slots).
    pub(crate) fn host_store_u64(&self, addr: u64, v: u64) -> bool {
        let Some(a) = usize::try_from(addr).ok().filter(|a| a % 8 == 0) else {
            return false;
        };
        if !a.checked_add(8).is_some_and(|e| self.accessible.contains(a, e)) {
            return false;
        }
        // SAFETY: as for `host_load_u64`.
        unsafe { &*(a as *const AtomicU64) }.store(v, Ordering::Release);
        true
    }
}
