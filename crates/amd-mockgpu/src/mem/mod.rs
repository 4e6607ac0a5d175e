//! The GPU's view of memory: every access a packet or a kernel makes is checked
//! against the GPU's mappings (from the driver half) and against the host mappings
//! that back them; only then is host memory touched.
//!
//! The mappings live in an [`AddressSpace`] behind a read-write lock of its own,
//! apart from the driver lock. Engines hold the shared lock for a bounded slice of
//! work (a few packets, a slice of a copy, a thousand kernel instructions), and the
//! driver takes the exclusive lock to change mappings: the mock's `munmap` removes
//! the range from [`AddressSpace::accessible`] under it before the host memory goes,
//! so checked memory cannot be unmapped while it is being read or written, and an
//! access after a free is a memory fault. An [`AddressSpace`] exists only behind that
//! lock (its constructor is crate-private and the driver owns the one instance).

#![allow(unsafe_code)]

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLockReadGuard;

pub(crate) mod dma;
pub(crate) mod gpuvm;
pub(crate) mod pci;
pub(crate) mod ranges;
pub(crate) mod sanitize;
pub(crate) mod word;

pub use amd_isa::MemoryFault;
use ranges::RangeSet;
use sanitize::{Graveyard, Shadow};
use word::Word;

/// Bytes of a page, as the host's page tables, the pagemap and the GPU's PTEs count
/// them.
pub(crate) const PAGE: usize = 4096;

/// Result of a checked access.
pub type MemResult<T> = Result<T, MemoryFault>;

/// A GPU mapping of a buffer.
#[derive(Debug, Clone)]
pub(crate) struct Mapped {
    pub(crate) size: u64,
    pub(crate) writable: bool,
    /// What memory it is, for messages ("VRAM", "host memory", …).
    pub(crate) kind: &'static str,
    /// Which bytes something wrote, where the sanitizer watches the buffer (shared by
    /// the buffer's mappings on every GPU).
    pub(crate) shadow: Option<std::sync::Arc<Shadow>>,
}

impl Mapped {
    /// Marks `[addr, addr + len)` of the mapping at `va` written.
    #[inline]
    fn wrote(&self, va: u64, addr: u64, len: u64) {
        if let Some(s) = &self.shadow {
            s.mark(addr - va, len);
        }
    }
}

/// What one GPU may reach.
#[derive(Debug, Default)]
pub(crate) struct GpuSpace {
    /// GPU mappings: va → mapping.
    pub(crate) mapped: BTreeMap<u64, Mapped>,
    /// Addresses that fault even where mapped (fault injection).
    pub(crate) fault_addrs: BTreeSet<u64>,
}

/// Every GPU's mappings and the host mappings behind them.
#[derive(Debug, Default)]
pub(crate) struct AddressSpace {
    pub(crate) gpus: Vec<GpuSpace>,
    /// Host mappings the mock made that are readable and writable.
    pub(crate) accessible: RangeSet,
    /// Allocations the GPUs had, for explaining a later fault there.
    pub(crate) gone: Graveyard,
}

fn not_present(va: u64, write: bool) -> MemoryFault {
    MemoryFault {
        va,
        not_present: true,
        write,
        ..Default::default()
    }
}

/// A whole GPU mapping a check passed: mapped to GPU `g`, backed all through by host
/// memory the mock can touch, with no injected fault inside; writable or not. It
/// stays so only while the shared lock it was found under is held ([`Held`] keeps
/// that true).
#[derive(Debug, Clone, Copy)]
struct Window {
    g: usize,
    lo: u64,
    hi: u64,
    writable: bool,
}

impl Window {
    /// A window that covers nothing (no GPU's, and empty): an empty slot.
    const NONE: Window = Window {
        g: usize::MAX,
        lo: 0,
        hi: 0,
        writable: false,
    };

    #[inline(always)]
    fn covers(&self, g: usize, addr: u64, len: usize, write: bool) -> bool {
        // `hi - addr` cannot wrap once `addr` lies inside, and an access fits when
        // its length is at most what is left (no end address to overflow).
        self.g == g && addr >= self.lo && addr < self.hi && len as u64 <= self.hi - addr && (self.writable || !write)
    }
}

/// Copies `len` bytes from `src` to `dst`, the sizes kernels move most (a dword, a
/// qword, 16 bytes) as one move each rather than a call into the C library.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`]: `src` readable and `dst` writable for `len`
/// bytes, the two apart (neither need be aligned).
#[inline(always)]
unsafe fn copy_small(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the caller's promise, for the `len` bytes each arm moves.
    unsafe {
        match len {
            4 => dst.cast::<u32>().write_unaligned(src.cast::<u32>().read_unaligned()),
            8 => dst.cast::<u64>().write_unaligned(src.cast::<u64>().read_unaligned()),
            16 => dst.cast::<u128>().write_unaligned(src.cast::<u128>().read_unaligned()),
            _ => std::ptr::copy_nonoverlapping(src, dst, len),
        }
    }
}

/// Windows a [`Held`] lock remembers (a kernel reads and writes a few buffers).
const WINDOWS: usize = 4;

/// Asks the host CPU to bring the cache line at `p` near (a hint: nothing is read).
#[inline]
fn prefetch_line(p: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 needs SSE, which every x86-64 CPU has; it reads nothing into
    // the program and never faults, whatever the address. (A line about to be written
    // is fetched the same way: x86-64's baseline has no prefetch for writing.)
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The shared lock on the address space as a kernel executor holds it, with the last
/// few GPU mappings a read or write was checked against ([`Window`]s): accesses that
/// fall inside one are not checked again. The windows are forgotten whenever the lock
/// is let go ([`Held::bump`], [`Held::unlocked`]), since mappings may change then.
pub(crate) struct Held<'a> {
    guard: RwLockReadGuard<'a, AddressSpace>,
    windows: [Cell<Window>; WINDOWS],
    next: Cell<usize>,
}

impl<'a> Held<'a> {
    pub(crate) fn new(guard: RwLockReadGuard<'a, AddressSpace>) -> Self {
        Held {
            guard,
            windows: [const { Cell::new(Window::NONE) }; WINDOWS],
            next: Cell::new(0),
        }
    }

    /// The address space.
    pub(crate) fn space(&self) -> &AddressSpace {
        &self.guard
    }

    fn forget(&self) {
        self.windows.iter().for_each(|w| w.set(Window::NONE));
    }

    /// Lets a waiting writer in (the windows go).
    pub(crate) fn bump(&mut self) {
        self.forget();
        RwLockReadGuard::bump(&mut self.guard);
    }

    /// Runs `f` with the lock released (the windows go).
    pub(crate) fn unlocked<T>(&mut self, f: impl FnOnce() -> T) -> T {
        self.forget();
        RwLockReadGuard::unlocked(&mut self.guard, f)
    }

    /// Whether a window covers the access.
    #[inline(always)]
    fn window(&self, g: usize, addr: u64, len: usize, write: bool) -> bool {
        self.windows.iter().any(|w| w.get().covers(g, addr, len, write))
    }

    /// Remembers the mapping around `addr` after a check passed there.
    fn remember(&self, g: usize, addr: u64) {
        if let Some(w) = self.guard.gpu_window(g, addr) {
            let k = self.next.get();
            self.windows[k].set(w);
            self.next.set((k + 1) % WINDOWS);
        }
    }

    /// Reads bytes at `addr` of `vm`.
    #[inline]
    pub(crate) fn read(&self, vm: &Vm, addr: u64, out: &mut [u8]) -> MemResult<()> {
        self.read_as(vm, addr, out, false)
    }

    /// [`Held::read`]; `ahead`: a read the engine repeats in pieces where it fails,
    /// whose failure a PCI GPU does not latch (the KFD GPUs latch nothing).
    #[inline(always)]
    pub(crate) fn read_as(&self, vm: &Vm, addr: u64, out: &mut [u8], ahead: bool) -> MemResult<()> {
        let g = match *vm {
            Vm::Kfd(g) => g,
            Vm::Pci(ref p) => return p.read_as(&self.guard, addr, out, ahead),
        };
        if self.window(g, addr, out.len(), false) {
            // SAFETY: a window covers the range: mapped, readable host memory, checked
            // under the shared lock that has been held since (the windows go when it
            // is let go), so it cannot have been unmapped; `out` is ordinary memory.
            unsafe { copy_small(addr as usize as *const u8, out.as_mut_ptr(), out.len()) };
            return Ok(());
        }
        self.guard.gpu_read_as(g, addr, out, true)?;
        self.remember(g, addr);
        Ok(())
    }

    /// Brings the host line behind `addr` of `vm` into the caches, where `addr` is
    /// memory a window covers (a KFD GPU: the address is the host's) or that a PCI
    /// GPU translates without latching a fault; anything else is let be.
    pub(crate) fn prefetch(&self, vm: &Vm, addr: u64, write: bool) {
        let host = match *vm {
            Vm::Kfd(g) => self.window(g, addr, 1, write).then_some(addr as usize),
            Vm::Pci(ref p) => p.resolve_for_prefetch(&self.guard, addr, write),
        };
        if let Some(p) = host {
            prefetch_line(p);
        }
    }

    /// Writes `data` at `addr` of `vm`.
    pub(crate) fn write(&self, vm: &Vm, addr: u64, data: &[u8]) -> MemResult<()> {
        self.write_as(vm, addr, data, false)
    }

    /// [`Held::write`]; `ahead` as in [`Held::read_as`].
    pub(crate) fn write_as(&self, vm: &Vm, addr: u64, data: &[u8], ahead: bool) -> MemResult<()> {
        let g = match *vm {
            Vm::Kfd(g) => g,
            Vm::Pci(ref p) => return p.write_as(&self.guard, addr, data, ahead),
        };
        if self.window(g, addr, data.len(), true) {
            // SAFETY: a writable window covers the range: mapped, writable host memory,
            // checked under the shared lock held since, so still there; `data` is
            // ordinary memory and cannot overlap it.
            unsafe { copy_small(data.as_ptr(), addr as usize as *mut u8, data.len()) };
            return Ok(());
        }
        self.guard.gpu_write(g, addr, data)?;
        self.remember(g, addr);
        Ok(())
    }
}

impl AddressSpace {
    /// The whole GPU mapping around `addr` as a [`Window`], when no injected fault
    /// lies inside it and host memory backs all of it.
    fn gpu_window(&self, g: usize, addr: u64) -> Option<Window> {
        let gpu = self.gpus.get(g)?;
        let (&lo, m) = gpu.mapped.range(..=addr).next_back()?;
        let hi = lo.checked_add(m.size)?;
        // A buffer the sanitizer watches has every access checked.
        if addr >= hi || m.shadow.is_some() || gpu.fault_addrs.range(lo..hi).next().is_some() {
            return None;
        }
        let (a, e) = (usize::try_from(lo).ok()?, usize::try_from(hi).ok()?);
        self.accessible.contains(a, e).then_some(Window {
            g,
            lo,
            hi,
            writable: m.writable,
        })
    }

    pub(crate) fn new(n_gpus: usize) -> Self {
        AddressSpace {
            gpus: (0..n_gpus).map(|_| GpuSpace::default()).collect(),
            accessible: RangeSet::default(),
            gone: Graveyard::default(),
        }
    }

    /// Whether `[addr, addr + len)` lies in memory mapped to GPU `g`.
    pub(crate) fn gpu_mapped(&self, g: usize, addr: u64, len: u64) -> bool {
        let Some(end) = addr.checked_add(len) else { return false };
        self.gpus.get(g).is_some_and(|gpu| {
            gpu.mapped
                .range(..=addr)
                .next_back()
                .is_some_and(|(&va, m)| va.checked_add(m.size).is_some_and(|e| end <= e))
        })
    }

    /// Checks that GPU `g` may access `[addr, addr + len)`, for writing if `write`.
    pub(crate) fn gpu_check(&self, g: usize, addr: u64, len: u64, write: bool) -> MemResult<()> {
        self.gpu_mapping(g, addr, len, write).map(|_| ())
    }

    /// [`AddressSpace::gpu_check`], returning the mapping the access lies in (its
    /// address and itself; `None` for an empty access).
    fn gpu_mapping(&self, g: usize, addr: u64, len: u64, write: bool) -> MemResult<Option<(u64, &Mapped)>> {
        if len == 0 {
            return Ok(None);
        }
        let gpu = self.gpus.get(g).ok_or_else(|| not_present(addr, write))?;
        let end = addr.checked_add(len).ok_or_else(|| not_present(addr, write))?;
        let (&va, m) = gpu
            .mapped
            .range(..=addr)
            .next_back()
            .ok_or_else(|| not_present(addr, write))?;
        let map_end = va.saturating_add(m.size);
        if end > map_end {
            // The access runs off the end of the buffer: the first byte past it faults.
            return Err(not_present(map_end.max(addr), write));
        }
        if let Some(&bad) = gpu.fault_addrs.range(addr..end).next() {
            return Err(not_present(bad, write));
        }
        if write && !m.writable {
            return Err(MemoryFault {
                va: addr,
                read_only: true,
                write: true,
                ..Default::default()
            });
        }
        // The GPU mapping must be backed by a host mapping the mock can touch.
        let (Ok(a), Ok(e)) = (usize::try_from(addr), usize::try_from(end)) else {
            return Err(not_present(addr, write));
        };
        if !self.accessible.contains(a, e) {
            return Err(not_present(addr, write));
        }
        Ok(Some((va, m)))
    }

    /// Checks a kernel's use of `[addr, addr + len)` (a load, or an atomic's read of
    /// the old value): mapped, and, where the sanitizer watches the buffer, not all
    /// of it unwritten (see [`sanitize`]); returns the mapping as
    /// [`AddressSpace::gpu_mapping`].
    pub(crate) fn gpu_used(&self, g: usize, addr: u64, len: u64, write: bool) -> MemResult<Option<(u64, &Mapped)>> {
        let found = self.gpu_mapping(g, addr, len, write)?;
        if let Some((va, m)) = found
            && let Some(s) = &m.shadow
            && !s.any_written(addr - va, len)
        {
            // Told as such by `explain`, which finds the byte's bit clear.
            return Err(not_present(addr, write));
        }
        Ok(found)
    }

    /// Reads `out.len()` bytes at `addr`.
    pub(crate) fn gpu_read(&self, g: usize, addr: u64, out: &mut [u8]) -> MemResult<()> {
        self.gpu_read_as(g, addr, out, false)
    }

    /// [`AddressSpace::gpu_read`]; `kernel`: a kernel's load, for which memory the
    /// sanitizer watches must have been written.
    pub(crate) fn gpu_read_as(&self, g: usize, addr: u64, out: &mut [u8], kernel: bool) -> MemResult<()> {
        let n = out.len() as u64;
        if kernel {
            self.gpu_used(g, addr, n, false)?;
        } else {
            self.gpu_check(g, addr, n, false)?;
        }
        // SAFETY: the range is mapped, readable host memory (checked above) that cannot
        // be unmapped while the shared lock on the address space is held; `out` is
        // ordinary memory.
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
        if let Some((va, m)) = self.gpu_mapping(g, addr, data.len() as u64, true)? {
            m.wrote(va, addr, data.len() as u64);
        }
        // SAFETY: the range is mapped, writable host memory (checked above), pinned by
        // the driver lock; `data` is ordinary memory and cannot overlap it.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as usize as *mut u8, data.len()) };
        Ok(())
    }

    /// Loads a word (atomically, with Acquire, where aligned: signals and pointers).
    pub(crate) fn gpu_load<W: Word>(&self, g: usize, addr: u64) -> MemResult<W> {
        self.gpu_check(g, addr, W::BYTES as u64, false)?;
        if addr % W::BYTES as u64 == 0 {
            // SAFETY: aligned, mapped readable bytes (checked), pinned by the shared
            // lock on the address space.
            Ok(unsafe { W::load(addr as usize as *const u8) })
        } else {
            word::read_unaligned(|b| self.gpu_read(g, addr, b))
        }
    }

    /// Stores a word (atomically, with Release, where aligned).
    pub(crate) fn gpu_store<W: Word>(&self, g: usize, addr: u64, v: W) -> MemResult<()> {
        if let Some((va, m)) = self.gpu_mapping(g, addr, W::BYTES as u64, true)? {
            m.wrote(va, addr, W::BYTES as u64);
        }
        if addr % W::BYTES as u64 == 0 {
            // SAFETY: aligned, mapped writable bytes (checked), pinned by the shared
            // lock on the address space.
            unsafe { W::store(addr as usize as *mut u8, v) };
            Ok(())
        } else {
            let (b, n) = word::bytes_of(v);
            self.gpu_write(g, addr, &b[..n])
        }
    }

    /// Copies `len` bytes from `src` to `dst` (memmove semantics where they overlap),
    /// a piece of a transfer of `whole` bytes (which decides the stores, see
    /// [`dma::copy`]).
    pub(crate) fn gpu_copy(&self, g: usize, dst: u64, src: u64, len: u64, whole: u64) -> MemResult<()> {
        let from = self.gpu_mapping(g, src, len, false)?;
        if let Some((va, m)) = self.gpu_mapping(g, dst, len, true)?
            && let Some(to) = &m.shadow
        {
            // The bytes' shadow moves with them (memory without one is all written).
            let from = from.and_then(|(sva, sm)| Some((sm.shadow.as_deref()?, src - sva)));
            Shadow::copy(to, dst - va, from.map(|f| f.0), from.map_or(0, |f| f.1), len);
        }
        let len = usize::try_from(len).map_err(|_| not_present(dst, true))?;
        // SAFETY: both ranges are mapped host memory (checked), readable and writable
        // respectively, pinned by the shared lock on the address space, and nothing
        // holds a reference into them; `dma::copy` allows overlap.
        unsafe { dma::copy(dst as usize as *mut u8, src as usize as *const u8, len, whole) };
        Ok(())
    }

    /// Fills `len` bytes at `dst` with the little-endian bytes of `pattern`, repeated,
    /// a piece of a fill of `whole` bytes.
    pub(crate) fn gpu_fill(&self, g: usize, dst: u64, pattern: u32, len: u64, whole: u64) -> MemResult<()> {
        if let Some((va, m)) = self.gpu_mapping(g, dst, len, true)? {
            m.wrote(va, dst, len);
        }
        let len = usize::try_from(len).map_err(|_| not_present(dst, true))?;
        // SAFETY: the range is mapped writable host memory (checked), pinned by the
        // shared lock on the address space, and no reference to it exists.
        unsafe { dma::fill(dst as usize as *mut u8, pattern, len, whole) };
        Ok(())
    }

    /// Reads a qword of host memory the mock mapped (event-page slots), without a GPU.
    pub(crate) fn host_load_u64(&self, addr: u64) -> Option<u64> {
        let a = usize::try_from(addr).ok().filter(|a| a % 8 == 0)?;
        if !self.accessible.contains(a, a.checked_add(8)?) {
            return None;
        }
        // SAFETY: 8 aligned bytes of a live read-write host mapping made through the
        // mock (checked), pinned by the shared lock on the address space.
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

    /// Replaces the word at `addr` by `f(old)` unless `f` refuses (its error is
    /// returned, memory unchanged); returns the old word. Atomic against every other
    /// engine and the host where aligned ([`Word::update`]).
    pub(crate) fn gpu_rmw<W: Word, E>(
        &self,
        g: usize,
        addr: u64,
        f: impl FnMut(W) -> Result<W, E>,
    ) -> Result<Result<W, E>, MemoryFault> {
        self.gpu_rmw_as(g, addr, f, false)
    }

    /// [`AddressSpace::gpu_rmw`]; `kernel`: a kernel's atomic, whose read of the old
    /// value must find memory the sanitizer watches written.
    pub(crate) fn gpu_rmw_as<W: Word, E>(
        &self,
        g: usize,
        addr: u64,
        mut f: impl FnMut(W) -> Result<W, E>,
        kernel: bool,
    ) -> Result<Result<W, E>, MemoryFault> {
        let n = W::BYTES as u64;
        let found = if kernel {
            self.gpu_used(g, addr, n, true)?
        } else {
            self.gpu_mapping(g, addr, n, true)?
        };
        if addr % W::BYTES as u64 != 0 {
            let old = self.gpu_load(g, addr)?;
            return Ok(match f(old) {
                Ok(new) => self.gpu_store(g, addr, new).map(|_| Ok(old))?,
                Err(e) => Err(e),
            });
        }
        // SAFETY: aligned, mapped writable bytes (checked), pinned by the shared lock
        // on the address space.
        let r = unsafe { W::update(addr as usize as *mut u8, f) };
        if let (Ok(_), Some((va, m))) = (&r, found) {
            m.wrote(va, addr, n);
        }
        Ok(r)
    }
}

/// Whose memory an engine reaches, and how.
#[derive(Debug, Clone)]
pub(crate) enum Vm {
    /// KFD GPU `n`: its mappings in the [`AddressSpace`].
    Kfd(usize),
    /// A PCI GPU's hub: page tables walked by its GMC.
    Pci(std::sync::Arc<pci::PciVm>),
}

/// Accesses through a [`Vm`].
impl AddressSpace {
    pub(crate) fn vm_read(&self, vm: &Vm, addr: u64, out: &mut [u8]) -> MemResult<()> {
        match vm {
            Vm::Kfd(g) => self.gpu_read(*g, addr, out),
            Vm::Pci(p) => p.read(self, addr, out),
        }
    }
    pub(crate) fn vm_read_words(&self, vm: &Vm, addr: u64, n: usize) -> MemResult<Vec<u32>> {
        match vm {
            Vm::Kfd(g) => self.gpu_read_words(*g, addr, n),
            Vm::Pci(p) => p.read_words(self, addr, n),
        }
    }
    pub(crate) fn vm_load<W: Word>(&self, vm: &Vm, addr: u64) -> MemResult<W> {
        match vm {
            Vm::Kfd(g) => self.gpu_load(*g, addr),
            Vm::Pci(p) => p.load(self, addr),
        }
    }
    pub(crate) fn vm_store<W: Word>(&self, vm: &Vm, addr: u64, v: W) -> MemResult<()> {
        match vm {
            Vm::Kfd(g) => self.gpu_store(*g, addr, v),
            Vm::Pci(p) => p.store(self, addr, v),
        }
    }
    /// Copies `len` bytes, a piece of a transfer of `whole` bytes.
    pub(crate) fn vm_copy(&self, vm: &Vm, dst: u64, src: u64, len: u64, whole: u64) -> MemResult<()> {
        match vm {
            Vm::Kfd(g) => self.gpu_copy(*g, dst, src, len, whole),
            Vm::Pci(p) => p.copy(self, dst, src, len, whole),
        }
    }
    /// Fills `len` bytes, a piece of a fill of `whole` bytes (a PCI GPU fills a page at
    /// a time with plain stores, whatever the whole).
    pub(crate) fn vm_fill(&self, vm: &Vm, dst: u64, pattern: u32, len: u64, whole: u64) -> MemResult<()> {
        match vm {
            Vm::Kfd(g) => self.gpu_fill(*g, dst, pattern, len, whole),
            Vm::Pci(p) => p.fill(self, dst, pattern, len),
        }
    }
    pub(crate) fn vm_rmw<W: Word, E>(
        &self,
        vm: &Vm,
        addr: u64,
        f: impl FnMut(W) -> Result<W, E>,
    ) -> Result<Result<W, E>, MemoryFault> {
        match vm {
            Vm::Kfd(g) => self.gpu_rmw(*g, addr, f),
            Vm::Pci(p) => p.rmw(self, addr, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::RwLock;

    /// Heap memory standing in for the mock's host mappings: `words` qwords, the GPU
    /// address of each byte being its host address, as in the mock. The first half is
    /// mapped writable to GPU 0, the second half read-only; the space knows all of it
    /// as host memory it may touch.
    struct Heap {
        words: Vec<u64>,
        space: RwLock<AddressSpace>,
    }

    impl Heap {
        fn new(words: usize) -> Heap {
            let mut words = vec![0u64; words];
            let base = words.as_mut_ptr() as usize;
            let len = words.len() * 8;
            let mut space = AddressSpace::new(1);
            space.accessible.insert(base, base + len);
            let half = (len / 2) as u64;
            let gpu = &mut space.gpus[0];
            gpu.mapped.insert(
                base as u64,
                Mapped {
                    size: half,
                    writable: true,
                    kind: "host memory",
                    shadow: None,
                },
            );
            gpu.mapped.insert(
                base as u64 + half,
                Mapped {
                    size: half,
                    writable: false,
                    kind: "host memory",
                    shadow: None,
                },
            );
            Heap {
                words,
                space: RwLock::new(space),
            }
        }

        fn base(&self) -> u64 {
            self.words.as_ptr() as u64
        }
    }

    /// Every kind of access lands where it should, little-endian, aligned or not; an
    /// access that leaves the mapping, writes the read-only half, reaches an injected
    /// fault or another GPU faults at the right byte and touches nothing. Runs under
    /// Miri (`cargo xtask miri`), which checks the raw accesses themselves.
    #[test]
    fn checked_accesses_land_inside_their_mapping() {
        let heap = Heap::new(32);
        let b = heap.base();
        let half = 128u64;
        {
            let s = heap.space.read();
            s.gpu_write(0, b + 1, &[1, 2, 3]).unwrap();
            s.gpu_store::<u32>(0, b + 8, 0xdead_beef).unwrap();
            s.gpu_store::<u32>(0, b + 45, 0x0403_0201).unwrap();
            s.gpu_store::<u64>(0, b + 16, 0x1122_3344_5566_7788).unwrap();
            s.gpu_store::<u64>(0, b + 49, 0xaabb_ccdd_eeff_0011).unwrap();
            assert_eq!(s.gpu_load::<u32>(0, b + 8), Ok(0xdead_beef));
            assert_eq!(s.gpu_load::<u32>(0, b + 45), Ok(0x0403_0201));
            assert_eq!(s.gpu_load::<u64>(0, b + 16), Ok(0x1122_3344_5566_7788));
            assert_eq!(s.gpu_load::<u64>(0, b + 49), Ok(0xaabb_ccdd_eeff_0011));
            let mut out = [0u8; 4];
            s.gpu_read(0, b, &mut out).unwrap();
            assert_eq!(out, [0, 1, 2, 3]);
            assert_eq!(s.gpu_read_words(0, b + 8, 1), Ok(vec![0xdead_beef]));
            // Read-modify-writes, aligned (the compare-exchange) and not.
            let add = |x: u32| Ok::<_, ()>(x.wrapping_add(1));
            assert_eq!(s.gpu_rmw::<u32, _>(0, b + 8, add), Ok(Ok(0xdead_beef)));
            assert_eq!(s.gpu_rmw::<u32, _>(0, b + 45, add), Ok(Ok(0x0403_0201)));
            assert_eq!(
                s.gpu_rmw::<u64, _>(0, b + 16, |x| Ok::<_, ()>(x ^ 1)),
                Ok(Ok(0x1122_3344_5566_7788))
            );
            assert_eq!(
                s.gpu_rmw::<u64, _>(0, b + 49, |_| Err::<u64, _>("refused")),
                Ok(Err("refused"))
            );
            assert_eq!(s.gpu_load::<u32>(0, b + 8), Ok(0xdead_bef0));
            assert_eq!(s.gpu_load::<u32>(0, b + 45), Ok(0x0403_0202));
            assert_eq!(s.gpu_load::<u64>(0, b + 16), Ok(0x1122_3344_5566_7789));
            assert_eq!(s.gpu_load::<u64>(0, b + 49), Ok(0xaabb_ccdd_eeff_0011));
            // An overlapping copy is a memmove; a fill keeps its pattern's phase.
            s.gpu_copy(0, b + 2, b, 8, 8).unwrap();
            assert_eq!(s.gpu_read_words(0, b, 1), Ok(vec![0x0100_0100]));
            s.gpu_fill(0, b + 33, 0x0a0b_0c0d, 7, 7).unwrap();
            let mut f = [0u8; 9];
            s.gpu_read(0, b + 32, &mut f).unwrap();
            assert_eq!(f, [0, 0x0d, 0x0c, 0x0b, 0x0a, 0x0d, 0x0c, 0x0b, 0]);
            // Event-page slots: aligned qwords of host memory the space knows.
            assert!(s.host_store_u64(b + 40, 77));
            assert_eq!(s.host_load_u64(b + 40), Some(77));
            assert!(!s.host_store_u64(b + 41, 1) && s.host_load_u64(b + 41).is_none());
            assert!(!s.host_store_u64(b + 256, 1) && s.host_load_u64(b - 8).is_none());
        }
        let before = heap.words.clone();
        {
            let mut s = heap.space.write();
            s.gpus[0].fault_addrs.insert(b + 64);
        }
        let s = heap.space.read();
        let fault = |va, write| MemoryFault {
            va,
            write,
            not_present: true,
            ..Default::default()
        };
        // Past the end of the read-only half (the end of everything mapped).
        assert_eq!(s.gpu_read(0, b + 250, &mut [0; 8]), Err(fault(b + 256, false)));
        assert_eq!(s.gpu_load::<u64>(0, b + 256), Err(fault(b + 256, false)));
        // The writable half's end is the read-only half's start: a write across it is
        // checked against the writable mapping, whose end it passes.
        assert_eq!(s.gpu_store::<u64>(0, b + half - 4, 1), Err(fault(b + half, true)));
        let read_only = MemoryFault {
            va: b + half,
            write: true,
            read_only: true,
            ..Default::default()
        };
        assert_eq!(s.gpu_store::<u32>(0, b + half, 1), Err(read_only));
        assert_eq!(s.gpu_copy(0, b + half, b, 8, 8), Err(read_only));
        assert_eq!(s.gpu_fill(0, b + 60, 0, 8, 8), Err(fault(b + 64, true)));
        assert_eq!(s.gpu_rmw::<u32, _>(0, b + 64, Ok::<u32, ()>), Err(fault(b + 64, true)));
        assert_eq!(s.gpu_read(1, b, &mut [0; 1]), Err(fault(b, false)));
        assert_eq!(s.gpu_read(0, b - 1, &mut [0; 1]), Err(fault(b - 1, false)));
        assert_eq!(s.gpu_read(0, u64::MAX, &mut [0; 2]), Err(fault(u64::MAX, false)));
        drop(s);
        assert_eq!(heap.words, before, "a refused access touched memory");
    }

    /// An executor's windows: accesses inside a mapping already checked skip the
    /// check and land in the same place; letting the lock go forgets them, so a
    /// mapping removed meanwhile faults.
    #[test]
    fn windows_are_forgotten_with_the_lock() {
        let heap = Heap::new(32);
        let b = heap.base();
        let vm = Vm::Kfd(0);
        let mut held = Held::new(heap.space.read());
        held.write(&vm, b + 3, &[9, 8, 7]).unwrap();
        held.write(&vm, b + 100, &[5]).unwrap();
        let mut out = [0u8; 4];
        held.read(&vm, b + 2, &mut out).unwrap();
        assert_eq!(out, [0, 9, 8, 7]);
        // The read-only half: reads through a window, writes refused.
        held.read(&vm, b + 200, &mut out).unwrap();
        assert!(held.write(&vm, b + 200, &[1]).unwrap_err().read_only);
        assert!(held.read(&vm, b + 250, &mut [0; 8]).is_err());
        held.unlocked(|| {
            heap.space.write().gpus[0].mapped.remove(&b);
        });
        assert!(held.read(&vm, b + 2, &mut out).unwrap_err().not_present);
        assert!(held.write(&vm, b + 3, &[1]).unwrap_err().not_present);
        drop(held);
        assert_eq!(heap.words[0], u64::from_le_bytes([0, 0, 0, 9, 8, 7, 0, 0]));
    }

    /// Accesses through a window move exactly their bytes, for every small size (the
    /// dword, qword and 16-byte moves, the others) at every alignment; one that ends
    /// at the window's end is inside it, one a byte longer is checked and faults.
    #[test]
    fn window_accesses_move_exactly_their_bytes() {
        let heap = Heap::new(32);
        let b = heap.base();
        let vm = Vm::Kfd(0);
        let held = Held::new(heap.space.read());
        let pattern: Vec<u8> = (1..=17).collect();
        for len in 1..=17usize {
            for at in [0u64, 1, 3, 8, 13] {
                let addr = b + 32 + at;
                held.write(&vm, b + 24, &[0; 48]).unwrap();
                held.write(&vm, addr, &pattern[..len]).unwrap();
                let mut all = [0u8; 48];
                held.read(&vm, b + 24, &mut all).unwrap();
                let mut want = [0u8; 48];
                want[8 + at as usize..][..len].copy_from_slice(&pattern[..len]);
                assert_eq!(all, want, "{len} bytes at +{at}");
                let mut back = vec![0xffu8; len];
                held.read(&vm, addr, &mut back).unwrap();
                assert_eq!(back, pattern[..len], "{len} bytes back from +{at}");
            }
        }
        // The writable half is [b, b + 128): a 16-byte access ending at its end is
        // inside; 17 bytes reach the read-only half, which a write may not touch.
        let end = b + 128;
        held.write(&vm, end - 16, &pattern[..16]).unwrap();
        let mut out = [0u8; 16];
        held.read(&vm, end - 16, &mut out).unwrap();
        assert_eq!(out, pattern[..16]);
        let err = held.write(&vm, end - 16, &pattern[..17]).unwrap_err();
        assert_eq!((err.va, err.write), (end, true));
        // An address past every window, near the top of the address space, faults
        // (its end would overflow).
        assert!(held.read(&vm, u64::MAX - 1, &mut out).is_err());
    }

    /// A watched mapping: a kernel's load or atomic none of whose bytes anything
    /// wrote faults at its first byte; one that covers a written byte passes (a
    /// widened load); engines' writes, fills and copies mark bytes, a copy moving the
    /// source's marks; a watched mapping is never a window, so a kernel's access
    /// through [`Held`] is checked too.
    #[test]
    fn the_sanitizer_stops_reads_of_memory_nothing_wrote() {
        let heap = Heap::new(64);
        let b = heap.base();
        {
            let mut s = heap.space.write();
            let m = s.gpus[0].mapped.get_mut(&b).unwrap();
            m.shadow = Some(std::sync::Arc::new(Shadow::new(m.size).unwrap()));
        }
        let s = heap.space.read();
        let fault = |va| Err(not_present(va, false));
        assert_eq!(s.gpu_read_as(0, b, &mut [0; 4], true), fault(b));
        // An engine's read is no use: it is not checked.
        s.gpu_read(0, b, &mut [0; 4]).unwrap();
        s.gpu_write(0, b + 16, &[1; 12]).unwrap();
        s.gpu_read_as(0, b + 16, &mut [0; 16], true).unwrap();
        assert_eq!(s.gpu_read_as(0, b + 28, &mut [0; 4], true), fault(b + 28));
        assert_eq!(
            s.gpu_rmw_as::<u32, ()>(0, b + 32, Ok, true),
            Err(not_present(b + 32, true))
        );
        s.gpu_fill(0, b + 32, 7, 8, 8).unwrap();
        assert_eq!(s.gpu_rmw_as::<u32, ()>(0, b + 32, |x| Ok(x + 1), true), Ok(Ok(7)));
        // A copy of unwritten bytes leaves its destination unwritten.
        s.gpu_copy(0, b + 64, b + 40, 8, 8).unwrap();
        assert_eq!(s.gpu_read_as(0, b + 64, &mut [0; 8], true), fault(b + 64));
        s.gpu_copy(0, b + 72, b + 16, 4, 4).unwrap();
        s.gpu_read_as(0, b + 72, &mut [0; 4], true).unwrap();
        // Through an executor's lock: no window skips the check.
        let vm = Vm::Kfd(0);
        drop(s);
        let held = Held::new(heap.space.read());
        held.read(&vm, b + 16, &mut [0; 4]).unwrap();
        assert!(held.read(&vm, b + 100, &mut [0; 4]).unwrap_err().not_present);
        held.write(&vm, b + 100, &[3; 4]).unwrap();
        held.read(&vm, b + 100, &mut [0; 4]).unwrap();
    }

    /// A fault is told with where it lies: after, before or across allocations, in
    /// one that went, in memory nothing wrote, at an injected fault; a write to
    /// read-only memory needs no words.
    #[test]
    fn faults_are_told_with_the_allocation_they_hit() {
        use sanitize::{Explained, Gone};
        let heap = Heap::new(32);
        let b = heap.base();
        let near = |s: &str| Some(Explained::Near(s.to_string()));
        let lo = format!("the 128-byte host memory allocation at {b:#x}");
        let hi = format!("the 128-byte host memory allocation at {:#x}", b + 128);
        {
            let s = heap.space.read();
            let f = s.gpu_store::<u64>(0, b + 124, 1).unwrap_err();
            assert_eq!(
                s.explain(0, &f),
                near(&format!(
                    "the first byte after the end of {lo}, where an access ran on into {hi}"
                ))
            );
            let f = s.gpu_read(0, b + 250, &mut [0; 8]).unwrap_err();
            assert_eq!(s.explain(0, &f), near(&format!("the first byte after the end of {hi}")));
            let f = MemoryFault::not_present(b + 256 + 16, false);
            assert_eq!(s.explain(0, &f), near(&format!("16 bytes after the end of {hi}")));
            let f = MemoryFault::not_present(b - 8, true);
            assert_eq!(s.explain(0, &f), near(&format!("8 bytes before {lo}")));
            let f = MemoryFault::not_present(b + (2 << 20), false);
            assert_eq!(s.explain(0, &f), near("no allocation of this GPU within 1 MiB of it"));
            assert_eq!(s.explain(0, &MemoryFault::read_only(b + 130)), None);
            assert_eq!(s.explain(1, &f), None, "no such GPU");
        }
        {
            let mut s = heap.space.write();
            s.gpus[0].fault_addrs.insert(b + 200);
            s.gpus[0].mapped.remove(&b);
            s.gone.push(Gone {
                gpu: 0,
                va: b,
                size: 128,
                kind: "VRAM",
                freed: true,
            });
            let m = s.gpus[0].mapped.get_mut(&(b + 128)).unwrap();
            m.shadow = Some(std::sync::Arc::new(Shadow::new(128).unwrap()));
        }
        let s = heap.space.read();
        let f = s.gpu_read(0, b + 4, &mut [0; 4]).unwrap_err();
        assert_eq!(
            s.explain(0, &f),
            near(&format!(
                "byte 0x4 of the 128-byte VRAM allocation at {b:#x}, freed before this access"
            ))
        );
        let f = s.gpu_read_as(0, b + 140, &mut [0; 4], true).unwrap_err();
        assert_eq!(
            s.explain(0, &f),
            Some(Explained::Unwritten(format!("byte 0xc of {hi}")))
        );
        let f = s.gpu_read(0, b + 200, &mut [0; 1]).unwrap_err();
        assert_eq!(s.explain(0, &f), near("an injected fault"));
    }

    /// Engines on two threads incrementing the same dword through the address space
    /// (an aligned compare-exchange) lose no update; under Miri, its data-race
    /// detector checks the atomics.
    #[test]
    fn atomics_from_two_threads_lose_nothing() {
        let heap = Heap::new(4);
        let b = heap.base();
        let n = if cfg!(miri) { 50 } else { 10_000 };
        std::thread::scope(|t| {
            for _ in 0..2 {
                t.spawn(|| {
                    let s = heap.space.read();
                    for _ in 0..n {
                        s.gpu_rmw::<u32, _>(0, b + 4, |x| Ok::<_, ()>(x + 1)).unwrap().unwrap();
                    }
                });
            }
        });
        assert_eq!(heap.space.read().gpu_load::<u32>(0, b + 4), Ok(2 * n));
    }
}
