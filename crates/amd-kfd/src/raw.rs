//! The unsafe edge of the KFD transport: ioctls with their argument structs, mappings
//! the transport creates and removes, and loads and stores to mapped memory. Every
//! other module calls these safe functions, whose arguments carry the proof.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use zerocopy::{FromBytes, IntoBytes};

use crate::abi::{self, Ioctl, NoUserPointers};
use crate::sys::{Fd, MapFlags, Prot, Sys, SysResult};

/// Issues a KFD ioctl whose argument holds no pointers.
pub fn ioctl<T: IntoBytes + FromBytes + NoUserPointers>(
    sys: &dyn Sys,
    fd: Fd,
    req: Ioctl<T>,
    arg: &mut T,
) -> SysResult<i32> {
    // SAFETY: `T: NoUserPointers` — the struct embeds no pointer the implementation
    // could follow, and its own bytes are a live, exclusive buffer.
    unsafe { sys.ioctl(fd, req.request, req.name, arg.as_mut_bytes()) }
}

/// `AMDKFD_IOC_MAP_MEMORY_TO_GPU` (`map`) or `_UNMAP_MEMORY_FROM_GPU` of `handle` on
/// `gpu_ids`; returns how many of them succeeded (`n_success`) with the call's result.
pub fn map_memory(sys: &dyn Sys, fd: Fd, map: bool, handle: u64, gpu_ids: &[u32]) -> (SysResult<i32>, u32) {
    let n_devices = u32::try_from(gpu_ids.len()).unwrap_or(u32::MAX);
    // Map and unmap share one layout (the layout test pins both).
    let mut a = abi::kfd_ioctl_map_memory_to_gpu_args {
        handle,
        device_ids_array_ptr: gpu_ids.as_ptr() as u64,
        n_devices,
        n_success: 0,
    };
    let req = if map {
        abi::AMDKFD_IOC_MAP_MEMORY_TO_GPU.request
    } else {
        abi::AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU.request
    };
    let name = if map {
        abi::AMDKFD_IOC_MAP_MEMORY_TO_GPU.name
    } else {
        abi::AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU.name
    };
    // SAFETY: the one pointer in the argument is `gpu_ids`, live for the call, with
    // `n_devices` no larger than its length; the driver only reads it.
    let r = unsafe { sys.ioctl(fd, req, name, a.as_mut_bytes()) };
    (r, a.n_success)
}

/// `AMDKFD_IOC_WAIT_EVENTS` on `events` (filled in by the driver); returns
/// `wait_result`.
pub fn wait_events(
    sys: &dyn Sys,
    fd: Fd,
    events: &mut [abi::kfd_event_data],
    wait_all: bool,
    timeout_ms: u32,
) -> SysResult<u32> {
    let mut a = abi::kfd_ioctl_wait_events_args {
        events_ptr: events.as_mut_ptr() as u64,
        num_events: u32::try_from(events.len()).unwrap_or(u32::MAX),
        wait_for_all: wait_all as u32,
        timeout: timeout_ms,
        wait_result: 0,
    };
    // SAFETY: `events` is live and exclusively borrowed for the call, and `num_events`
    // is its length (a longer slice than u32 can count is clamped, which is shorter).
    unsafe {
        sys.ioctl(
            fd,
            abi::AMDKFD_IOC_WAIT_EVENTS.request,
            abi::AMDKFD_IOC_WAIT_EVENTS.name,
            a.as_mut_bytes(),
        )
    }?;
    Ok(a.wait_result)
}

/// `AMDKFD_IOC_GET_PROCESS_APERTURES_NEW`: with an empty `out`, asks how many GPUs
/// there are; else fills `out`. Returns `num_of_nodes`.
pub fn process_apertures(sys: &dyn Sys, fd: Fd, out: &mut [abi::kfd_process_device_apertures]) -> SysResult<u32> {
    let mut a = abi::kfd_ioctl_get_process_apertures_new_args {
        kfd_process_device_apertures_ptr: if out.is_empty() { 0 } else { out.as_mut_ptr() as u64 },
        num_of_nodes: u32::try_from(out.len()).unwrap_or(u32::MAX),
        pad: 0,
    };
    let req = abi::AMDKFD_IOC_GET_PROCESS_APERTURES_NEW;
    // SAFETY: the pointer is `out`'s (or null with a count of 0), live and exclusive
    // for the call, with `num_of_nodes` no larger than its length.
    unsafe { sys.ioctl(fd, req.request, req.name, a.as_mut_bytes()) }?;
    Ok(a.num_of_nodes)
}

/// `AMDKFD_IOC_SET_CU_MASK` of `queue_id` to `mask` (bit i = CU i).
pub fn set_cu_mask(sys: &dyn Sys, fd: Fd, queue_id: u32, mask: &[u32]) -> SysResult<i32> {
    let bits = u32::try_from(mask.len())
        .ok()
        .and_then(|n| n.checked_mul(32))
        .unwrap_or(0);
    let mut a = abi::kfd_ioctl_set_cu_mask_args {
        queue_id,
        num_cu_mask: bits,
        cu_mask_ptr: mask.as_ptr() as u64,
    };
    let req = abi::AMDKFD_IOC_SET_CU_MASK;
    // SAFETY: the pointer is `mask`'s, live for the call; `num_cu_mask / 32` is its
    // length (or 0 if that overflows); the kernel only reads it.
    unsafe { sys.ioctl(fd, req.request, req.name, a.as_mut_bytes()) }
}

/// Reserves `len` bytes of address space (PROT_NONE, NORESERVE) for a GPU buffer.
pub fn reserve(sys: &dyn Sys, len: usize) -> SysResult<usize> {
    let flags = MapFlags::PRIVATE.with(MapFlags::ANONYMOUS).with(MapFlags::NORESERVE);
    // SAFETY: not MAP_FIXED: the kernel picks unused address space, nothing is replaced.
    unsafe { sys.mmap(0, len, Prot::None, flags, None, 0) }
}

/// Maps `len` bytes of anonymous shared memory at a kernel-chosen address.
pub fn anon_shared(sys: &dyn Sys, len: usize) -> SysResult<usize> {
    // SAFETY: not MAP_FIXED: nothing is replaced.
    unsafe {
        sys.mmap(
            0,
            len,
            Prot::ReadWrite,
            MapFlags::SHARED.with(MapFlags::ANONYMOUS),
            None,
            0,
        )
    }
}

/// Maps `fd` at `offset` over the reservation `addr..addr + len` made by [`reserve`].
///
/// The caller passes a reservation it made and owns; it is replaced in place.
pub fn map_over_reservation(sys: &dyn Sys, fd: Fd, addr: usize, len: usize, offset: u64) -> SysResult<usize> {
    // SAFETY: the range is a PROT_NONE reservation owned by the calling buffer and
    // never accessed through another mapping.
    unsafe {
        sys.mmap(
            addr,
            len,
            Prot::ReadWrite,
            MapFlags::SHARED.with(MapFlags::FIXED),
            Some(fd),
            offset,
        )
    }
}

/// Maps `len` bytes of `fd` at `offset`, shared, read-write, at a kernel-chosen address.
pub fn map_file(sys: &dyn Sys, fd: Fd, len: usize, offset: u64) -> SysResult<usize> {
    // SAFETY: not MAP_FIXED: nothing is replaced.
    unsafe { sys.mmap(0, len, Prot::ReadWrite, MapFlags::SHARED, Some(fd), offset) }
}

/// Unmaps a range this crate mapped; called once, by its owner, when nothing can use
/// it any more.
pub fn unmap(sys: &dyn Sys, addr: usize, len: usize) -> SysResult<()> {
    // SAFETY: only owners call this, from Drop, after which the range is not used.
    unsafe { sys.munmap(addr, len) }
}

/// A 64-bit cell in memory a live mapping of this crate holds (write/read pointers,
/// doorbells): 8-byte aligned and mapped for as long as its owner lives. Only owners
/// that keep the mapping alive hold one; others get a borrowing [`Cell64`].
/// Page size KFD allocations are rounded to.
pub const PAGE_SIZE: usize = 4096;

#[derive(Debug, Clone, Copy)]
pub(crate) struct RawCell {
    addr: usize,
}

/// A 64-bit cell of CPU-visible GPU memory (a signal, a pointer), borrowed from the
/// buffer that holds it.
#[derive(Debug, Clone, Copy)]
pub struct Cell64<'a> {
    raw: RawCell,
    _mem: std::marker::PhantomData<&'a ()>,
}

impl<'a> Cell64<'a> {
    pub(crate) fn borrowed<T>(raw: RawCell, _mem: &'a T) -> Self {
        Cell64 {
            raw,
            _mem: std::marker::PhantomData,
        }
    }

    /// The address.
    pub fn addr(&self) -> usize {
        self.raw.addr
    }

    /// Loads the value with `order`.
    pub fn load(&self, order: Ordering) -> u64 {
        self.raw.load(order)
    }

    /// Stores `v` with `order`.
    pub fn store(&self, v: u64, order: Ordering) {
        self.raw.store(v, order)
    }
}

impl RawCell {
    /// A cell at `addr`, which must be 8-aligned and inside a mapping that outlives
    /// every use of the cell. Returns `None` if misaligned or null.
    pub(crate) fn new(addr: usize) -> Option<Self> {
        (addr != 0 && addr % 8 == 0).then_some(RawCell { addr })
    }

    /// The address.
    pub fn addr(&self) -> usize {
        self.addr
    }

    fn atomic(&self) -> &AtomicU64 {
        // SAFETY: `new`'s contract: the address is 8-aligned, mapped read-write and
        // outlives the cell's owner; AtomicU64 has the size and alignment of u64, and
        // every access through it is atomic, so concurrent device writes do not race.
        unsafe { &*(self.addr as *const AtomicU64) }
    }

    /// Loads the value with `order`.
    pub fn load(&self, order: Ordering) -> u64 {
        self.atomic().load(order)
    }

    /// Stores `v` with `order`.
    pub fn store(&self, v: u64, order: Ordering) {
        self.atomic().store(v, order)
    }
}

/// Copies `data` into mapped memory at `addr`; the caller checked that
/// `addr..addr + data.len()` lies inside a CPU-accessible mapping it owns.
#[inline]
pub(crate) fn copy_in(addr: usize, data: &[u8]) {
    // SAFETY: the range is inside a live mapping (checked by the caller, the owning
    // buffer) and cannot overlap `data`, which is ordinary process memory.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) }
}

/// Writes the low `n` (1, 2, 4 or 8) bytes of `v`, little-endian, at `addr`, under
/// the same conditions as [`copy_in`] for `addr..addr + n`: a fixed-size store rather
/// than a call to `memcpy`, for the small patches of bound command lists.
#[inline]
pub(crate) fn store_le(addr: usize, v: u64, n: usize) {
    let p = addr as *mut u8;
    // SAFETY: the caller checked that `addr..addr + n` lies inside a live, writable
    // mapping; unaligned stores are allowed by `write_unaligned`.
    unsafe {
        match n {
            8 => std::ptr::write_unaligned(p as *mut u64, v.to_le()),
            4 => std::ptr::write_unaligned(p as *mut u32, (v as u32).to_le()),
            2 => std::ptr::write_unaligned(p as *mut u16, (v as u16).to_le()),
            _ => std::ptr::write_unaligned(p, v as u8),
        }
    }
}

/// Copies from mapped memory at `addr` into `out`, under the same conditions as
/// [`copy_in`].
#[inline]
pub(crate) fn copy_out(addr: usize, out: &mut [u8]) {
    // SAFETY: as for `copy_in`, with the roles swapped.
    unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), out.len()) }
}
