//! How an engine of a mock PCI GPU reaches memory: every access goes through the
//! device's GMC (`crate::pci::RegisterFile::translate`, through [`Translate`]) a 4 KiB page at a time, and lands in
//! the device's VRAM, in another mock GPU's VRAM (a system address inside its BAR 0),
//! or in host memory the mock's pagemap handed out.
//!
//! VRAM and doorbells are memfds that the mock maps into its own address space once
//! ([`DevMem`]), so that engine loads and stores are the same atomic accesses as on
//! the KFD path, against the same pages the host sees through its BAR mappings.

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use amd_kfd::sys::{Fd, HostSys, MapFlags, Prot, Sys};
use parking_lot::RwLock;

use super::gpuvm::{Access, FaultKind, Hub, Target, Translate, VmFault};
use super::word::{self, Word};
use super::{AddressSpace, MemResult, MemoryFault, PAGE};

/// A memfd mapped shared and read-write into the mock's own address space, for the
/// life of the value: device memory (VRAM, the doorbell page) as the device sees it.
#[derive(Debug)]
pub(crate) struct DevMem {
    addr: usize,
    len: usize,
}

// SAFETY: the mapping is plain shared memory owned by the value; every access goes
// through raw pointers with the ordering its caller names, so sharing the owner
// between threads adds nothing a `&[AtomicU8]` would not allow.
unsafe impl Send for DevMem {}
// SAFETY: as for `Send`.
unsafe impl Sync for DevMem {}

impl DevMem {
    /// Maps the first `len` bytes of `file` (which must be at least that long, and
    /// never shrink while mapped: the mock's memfds only grow).
    pub(crate) fn map(file: &File, len: u64) -> Result<Self, String> {
        let len = usize::try_from(len).map_err(|_| format!("{len:#x} bytes do not fit the address space"))?;
        if len == 0 {
            return Err("an empty device memory".into());
        }
        // At a 2 MiB boundary, so that its huge-page regions line up with the file's
        // and can be backed by huge pages ([`super::dma::collapse`]).
        let fd = Some(Fd(file.as_raw_fd()));
        let addr = amd_kfd::sys::mmap_aligned(
            &HostSys,
            super::dma::HUGE,
            len,
            Prot::ReadWrite,
            MapFlags::SHARED,
            fd,
            0,
        )
        .map_err(|e| format!("mapping device memory: {e}"))?;
        Ok(DevMem { addr, len })
    }

    /// Bytes mapped.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The address of `[off, off + n)`, if inside the mapping.
    fn ptr(&self, off: u64, n: usize) -> Option<*mut u8> {
        let off = usize::try_from(off).ok()?;
        (off.checked_add(n)? <= self.len).then(|| (self.addr + off) as *mut u8)
    }

    /// Loads the aligned qword at `off` (Acquire: pairs with the host's store before
    /// it rang the doorbell, or the device's own Release store).
    pub(crate) fn load_u64(&self, off: u64) -> Option<u64> {
        if off % 8 != 0 {
            return None;
        }
        let p = self.ptr(off, 8)?;
        // SAFETY: 8 aligned bytes inside the live mapping (checked above).
        Some(unsafe { &*(p as *const AtomicU64) }.load(Ordering::Acquire))
    }

    /// Stores the aligned qword at `off` (Release).
    pub(crate) fn store_u64(&self, off: u64, v: u64) -> bool {
        let Some(p) = self.ptr(off, 8).filter(|_| off % 8 == 0) else {
            return false;
        };
        // SAFETY: 8 aligned bytes inside the live mapping (checked above).
        unsafe { &*(p as *const AtomicU64) }.store(v, Ordering::Release);
        true
    }
}

impl Drop for DevMem {
    fn drop(&mut self) {
        // SAFETY: the mapping is ours and no reference into it outlives `self`
        // (accessors hand out values, never references). A failure leaves the
        // address space mapped, which is harmless; Drop must not panic.
        let _ = unsafe { HostSys.munmap(self.addr, self.len) };
        super::dma::forget_collapsed(self.addr, self.addr.saturating_add(self.len));
    }
}

/// Another mock GPU's VRAM as seen through its BAR 0: a system address in
/// `[phys, phys + window)` reaches VRAM offset `address − phys`.
#[derive(Debug, Clone)]
pub(crate) struct Peer {
    pub(crate) phys: u64,
    pub(crate) window: u64,
    pub(crate) mem: Arc<DevMem>,
}

/// Fake frame number → host page, as the pagemap handed them out (shared with the
/// driver half, which adds frames when `/proc/self/pagemap` is read and drops them on
/// `munmap`). Ordered, so that a run of frames is read in one pass.
pub(crate) type PageOfPfn = Arc<RwLock<BTreeMap<u64, usize>>>;

/// An engine's view of a PCI GPU's memory: one hub of one device.
#[derive(Debug, Clone)]
pub(crate) struct PciVm {
    pub(crate) hub: Hub,
    pub(crate) gmc: Arc<dyn Translate>,
    pub(crate) vram: Arc<DevMem>,
    /// Every mock PCI GPU's BAR 0 window (this one's included).
    pub(crate) peers: Vec<Peer>,
    pub(crate) pages: PageOfPfn,
    /// The stop flag of the long operation this view serves (a dispatch, a copy): once
    /// it is set — by the unbinding or reset that ended the operation's ring, under
    /// the register file's lock — a failed translation is not latched, so a dispatch
    /// still finishing a workgroup cannot leave a fault in the GMC of the GPU the
    /// driver has reset and set up again.
    pub(crate) stop: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl PciVm {
    /// This view for the long operation `stop` stops.
    pub(crate) fn for_operation(&self, stop: &Arc<std::sync::atomic::AtomicBool>) -> PciVm {
        PciVm {
            stop: Some(stop.clone()),
            ..self.clone()
        }
    }
}

/// The fault an engine reports for a failed translation.
pub(crate) fn memory_fault(f: &VmFault) -> MemoryFault {
    let perm = f.kind == FaultKind::Permission;
    MemoryFault {
        va: f.va,
        write: f.access == Access::Write,
        not_present: !perm,
        read_only: perm && f.access == Access::Write,
        no_execute: perm && f.access == Access::Exec,
        imprecise: false,
    }
}

fn bus_error(va: u64, write: bool) -> MemoryFault {
    MemoryFault {
        va,
        write,
        not_present: true,
        ..Default::default()
    }
}

/// Splits `[va, va + len)` at 4 KiB boundaries: (address, offset into the access,
/// bytes).
fn pages(va: u64, len: usize) -> impl Iterator<Item = (u64, usize, usize)> {
    let mut done = 0usize;
    std::iter::from_fn(move || {
        if done >= len {
            return None;
        }
        let a = va.checked_add(done as u64)?;
        let room = PAGE - (a % PAGE as u64) as usize;
        let n = room.min(len - done);
        let item = (a, done, n);
        done += n;
        Some(item)
    })
}

impl PciVm {
    /// The host address of `[va, va + n)` (inside one 4 KiB page) for `access`; a
    /// failed translation is latched by the GMC (status registers, interrupt).
    fn resolve(&self, space: &AddressSpace, va: u64, n: usize, access: Access) -> MemResult<*mut u8> {
        self.resolve_as(space, va, n, access, false)
    }

    /// [`PciVm::resolve`]; `ahead`: an access its engine repeats in pieces where it
    /// fails, whose failure is not latched ([`Translate::translate_run_ahead`]).
    fn resolve_as(&self, space: &AddressSpace, va: u64, n: usize, access: Access, ahead: bool) -> MemResult<*mut u8> {
        match self.resolve_run_as(space, va, n, access, ahead)? {
            (p, k) if k == n => Ok(p),
            _ => Err(bus_error(va, access == Access::Write)),
        }
    }

    /// The host address of `va` for `access`, and how many of the `max` bytes from it
    /// lie contiguously behind it (at least one, and to the end of `va`'s 4 KiB page
    /// where `max` reaches it): in VRAM to the end of the page or fragment the
    /// translation maps; in system memory as far as the translation's run of pages
    /// goes while their frames' host pages follow each other too (a peer's BAR: within
    /// its window); a host page (a client's mapping) to the end of the 4 KiB page. A
    /// failed translation is latched by the GMC.
    fn resolve_run(&self, space: &AddressSpace, va: u64, max: usize, access: Access) -> MemResult<(*mut u8, usize)> {
        self.resolve_run_as(space, va, max, access, false)
    }

    /// [`PciVm::resolve_run`]; `ahead` as in [`PciVm::resolve_as`].
    fn resolve_run_as(
        &self,
        space: &AddressSpace,
        va: u64,
        max: usize,
        access: Access,
        ahead: bool,
    ) -> MemResult<(*mut u8, usize)> {
        let write = access == Access::Write;
        if va.checked_add(max as u64).is_none() {
            return Err(bus_error(va, write));
        }
        let stop = self.stop.as_deref();
        let translated = if ahead {
            self.gmc.translate_run_ahead(self.hub, va, access, stop)
        } else {
            self.gmc.translate_run_unless(self.hub, va, access, stop)
        };
        let (target, extent) = translated.map_err(|f| f.map_or_else(|| bus_error(va, write), |f| memory_fault(&f)))?;
        let page_room = PAGE - (va % PAGE as u64) as usize;
        let (host, n) = match target {
            Target::Vram(off) => {
                let n = max.min(usize::try_from(extent).unwrap_or(usize::MAX));
                return self
                    .vram
                    .ptr(off, n)
                    .map(|p| (p, n))
                    .ok_or_else(|| bus_error(va, write));
            }
            Target::Host(a) => (a, max.min(page_room)),
            Target::System(pa) => {
                // As far as the translation holds (a run of pages), within `max`.
                let n = max.min(usize::try_from(extent).unwrap_or(usize::MAX));
                if let Some(p) = self.peers.iter().find(|p| pa >= p.phys && pa - p.phys < p.window) {
                    let n = n.min(usize::try_from(p.window - (pa - p.phys)).unwrap_or(usize::MAX));
                    return p
                        .mem
                        .ptr(pa - p.phys, n)
                        .map(|p| (p, n))
                        .ok_or_else(|| bus_error(va, write));
                }
                let pfn = pa / PAGE as u64;
                let pages = self.pages.read();
                let page = *pages.get(&pfn).ok_or_else(|| bus_error(va, write))?;
                let host = page
                    .checked_add((pa % PAGE as u64) as usize)
                    .ok_or_else(|| bus_error(va, write))?;
                // The frames that follow, while their host pages follow too.
                let (mut span, mut last) = (page_room, (pfn, page));
                for (&f, &h) in pages.range(pfn.saturating_add(1)..) {
                    if span >= n || Some(f) != last.0.checked_add(1) || Some(h) != last.1.checked_add(PAGE) {
                        break;
                    }
                    span += PAGE;
                    last = (f, h);
                }
                (host, n.min(span))
            }
        };
        // Host memory must still be mapped through the mock: it cannot go away while
        // the shared lock on the address space is held.
        let end = host.checked_add(n).ok_or_else(|| bus_error(va, write))?;
        if !space.accessible.contains(host, end) {
            return Err(bus_error(va, write));
        }
        Ok((host as *mut u8, n))
    }

    pub(crate) fn read(&self, space: &AddressSpace, va: u64, out: &mut [u8]) -> MemResult<()> {
        self.read_as(space, va, out, false)
    }

    /// The host address of `va` for a prefetch: translated as an access tried ahead
    /// (a failure latches nothing), `None` where it fails.
    pub(crate) fn resolve_for_prefetch(&self, space: &AddressSpace, va: u64, write: bool) -> Option<usize> {
        let access = if write { Access::Write } else { Access::Read };
        self.resolve_run_as(space, va, 1, access, true)
            .ok()
            .map(|(p, _)| p as usize)
    }

    /// [`PciVm::read`]; `ahead`: a read its engine repeats in pieces where it fails,
    /// whose failure is not latched.
    pub(crate) fn read_as(&self, space: &AddressSpace, va: u64, out: &mut [u8], ahead: bool) -> MemResult<()> {
        for (a, off, n) in pages(va, out.len()) {
            let p = self.resolve_as(space, a, n, Access::Read, ahead)?;
            // SAFETY: `p..p + n` is live device or host memory (resolved above, pinned
            // by the mapping's owner or the shared lock on the address space); `out`
            // is ordinary memory and cannot overlap it.
            unsafe { std::ptr::copy_nonoverlapping(p, out[off..off + n].as_mut_ptr(), n) };
        }
        Ok(())
    }

    pub(crate) fn write(&self, space: &AddressSpace, va: u64, data: &[u8]) -> MemResult<()> {
        self.write_as(space, va, data, false)
    }

    /// [`PciVm::write`]; `ahead` as in [`PciVm::read_as`].
    pub(crate) fn write_as(&self, space: &AddressSpace, va: u64, data: &[u8], ahead: bool) -> MemResult<()> {
        for (a, off, n) in pages(va, data.len()) {
            let p = self.resolve_as(space, a, n, Access::Write, ahead)?;
            // SAFETY: as in `read`, writable by the translation's permission.
            unsafe { std::ptr::copy_nonoverlapping(data[off..off + n].as_ptr(), p, n) };
        }
        Ok(())
    }

    pub(crate) fn read_words(&self, space: &AddressSpace, va: u64, n: usize) -> MemResult<Vec<u32>> {
        let mut words = vec![0u32; n];
        self.read(space, va, zerocopy::IntoBytes::as_mut_bytes(words.as_mut_slice()))?;
        Ok(words)
    }

    /// Loads a word (atomically, Acquire, where aligned).
    pub(crate) fn load<W: Word>(&self, space: &AddressSpace, va: u64) -> MemResult<W> {
        if va % W::BYTES as u64 == 0 {
            let p = self.resolve(space, va, W::BYTES, Access::Read)?;
            // SAFETY: aligned bytes of live memory (resolved above); atomic against the
            // host's and other engines' accesses.
            return Ok(unsafe { W::load(p) });
        }
        word::read_unaligned(|b| self.read(space, va, b))
    }

    /// Stores a word (atomically, Release, where aligned: it publishes what the
    /// engine did before).
    pub(crate) fn store<W: Word>(&self, space: &AddressSpace, va: u64, v: W) -> MemResult<()> {
        if va % W::BYTES as u64 == 0 {
            let p = self.resolve(space, va, W::BYTES, Access::Write)?;
            // SAFETY: as in `load`, the bytes writable.
            unsafe { W::store(p, v) };
            return Ok(());
        }
        let (b, n) = word::bytes_of(v);
        self.write(space, va, &b[..n])
    }

    /// Copies `len` bytes (memmove semantics where the ranges overlap).
    pub(crate) fn copy(&self, space: &AddressSpace, dst: u64, src: u64, len: u64, whole: u64) -> MemResult<()> {
        let n = usize::try_from(len).map_err(|_| bus_error(dst, true))?;
        if dst.abs_diff(src) < len {
            // Overlapping: the source is read whole first.
            let mut buf = vec![0u8; n];
            self.read(space, src, &mut buf)?;
            return self.write(space, dst, &buf);
        }
        // Apart: piece by piece, from the one translation to the other (no bounce
        // buffer), each side translated again only where its last translation ends (a
        // system page, or a VRAM page or fragment). A fault stops the copy where it
        // is, as the engine's would.
        // Pieces that continue the previous one on both sides join it, so long runs
        // are copied as one.
        let mut run: Option<(*const u8, *mut u8, usize)> = None;
        let flush = |run: Option<(*const u8, *mut u8, usize)>| {
            if let Some((from, to, k)) = run {
                // SAFETY: every piece of the run was resolved as live device or host
                // memory (pinned by its owner or the shared lock on the address
                // space), readable at `from` and writable at `to` by its translation's
                // permission, and each piece continues the previous one on both
                // sides; `dma::copy` allows overlap (two pages that map one frame).
                unsafe { super::dma::copy(to, from, k, whole) };
                // A copy of a huge page or more (not a ring's or a signal's few bytes):
                // its memory asked to be huge pages, once a region.
                if whole >= super::dma::HUGE as u64 {
                    super::dma::collapse(from as usize, k);
                    super::dma::collapse(to as usize, k);
                }
            }
        };
        // What is left of each side's last translation: where, and how many bytes.
        let (mut src_left, mut dst_left) = ((std::ptr::null_mut::<u8>(), 0), (std::ptr::null_mut::<u8>(), 0));
        let mut done = 0usize;
        while done < n {
            let (Some(d), Some(s)) = (dst.checked_add(done as u64), src.checked_add(done as u64)) else {
                flush(run);
                return Err(bus_error(dst, true));
            };
            // The source first, as the engine reads before it writes.
            let mut fault = None;
            if src_left.1 == 0 {
                match self.resolve_run(space, s, n - done, Access::Read) {
                    Ok(r) => src_left = r,
                    Err(e) => fault = Some(e),
                }
            }
            if fault.is_none() && dst_left.1 == 0 {
                match self.resolve_run(space, d, n - done, Access::Write) {
                    Ok(r) => dst_left = r,
                    Err(e) => fault = Some(e),
                }
            }
            if let Some(e) = fault {
                // What came before the fault is copied, as the engine's would be.
                flush(run);
                return Err(e);
            }
            let k = src_left.1.min(dst_left.1);
            let (from, to) = (src_left.0 as *const u8, dst_left.0);
            src_left = (src_left.0.wrapping_add(k), src_left.1 - k);
            dst_left = (dst_left.0.wrapping_add(k), dst_left.1 - k);
            run = match run {
                Some((f, t, len))
                    if std::ptr::eq(f.wrapping_add(len), from) && std::ptr::eq(t.wrapping_add(len), to) =>
                {
                    Some((f, t, len + k))
                }
                other => {
                    flush(other);
                    Some((from, to, k))
                }
            };
            done += k;
        }
        flush(run);
        Ok(())
    }

    /// Fills `len` bytes at `dst` with `pattern`'s little-endian bytes, repeated.
    pub(crate) fn fill(&self, space: &AddressSpace, dst: u64, pattern: u32, len: u64) -> MemResult<()> {
        let n = usize::try_from(len).map_err(|_| bus_error(dst, true))?;
        let bytes = pattern.to_le_bytes();
        let mut chunk = [0u8; PAGE];
        for (a, off, k) in pages(dst, n) {
            for (i, b) in chunk[..k].iter_mut().enumerate() {
                *b = bytes[(off + i) % 4];
            }
            let p = self.resolve(space, a, k, Access::Write)?;
            // SAFETY: as in `write`.
            unsafe { std::ptr::copy_nonoverlapping(chunk.as_ptr(), p, k) };
        }
        Ok(())
    }

    /// As the KFD path's `gpu_rmw`: `f(old)` replaces the word unless it refuses;
    /// atomic where aligned.
    pub(crate) fn rmw<W: Word, E>(
        &self,
        space: &AddressSpace,
        va: u64,
        mut f: impl FnMut(W) -> Result<W, E>,
    ) -> Result<Result<W, E>, MemoryFault> {
        if va % W::BYTES as u64 != 0 {
            let old = self.load(space, va)?;
            return Ok(match f(old) {
                Ok(new) => self.store(space, va, new).map(|_| Ok(old))?,
                Err(e) => Err(e),
            });
        }
        let p = self.resolve(space, va, W::BYTES, Access::Write)?;
        // SAFETY: aligned bytes of live memory, writable (resolved above).
        Ok(unsafe { W::update(p, f) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::memfd::{MFdFlags, memfd_create};

    /// Two VRAM mappings: a 64 KiB fragment at `FRAG` onto VRAM 0, and sixteen 4 KiB
    /// pages at `PAGES` onto VRAM 0x8_0000 in reverse order, the sixth missing.
    #[derive(Debug)]
    struct Tables;

    const FRAG: u64 = 0x10_0000;
    const PAGES: u64 = 0x20_0000;

    impl Translate for Tables {
        fn translate_run_unless(
            &self,
            hub: Hub,
            va: u64,
            access: Access,
            _: Option<&std::sync::atomic::AtomicBool>,
        ) -> Result<(Target, u64), Option<VmFault>> {
            let fault = VmFault {
                hub,
                va,
                access,
                kind: FaultKind::Invalid { level: 3 },
            };
            match va {
                FRAG..0x11_0000 => Ok((Target::Vram(va - FRAG), 0x11_0000 - va)),
                PAGES..0x21_0000 if (va - PAGES) / 0x1000 != 5 => {
                    let page = (va - PAGES) / 0x1000;
                    let at = 0x8_0000 + (15 - page) * 0x1000 + va % 0x1000;
                    Ok((Target::Vram(at), 0x1000 - va % 0x1000))
                }
                // Eight system pages as one run of frames 0x100.. (as a walk of
                // following PTEs gives them).
                SYSTEM..0x31_0000 if (va - SYSTEM) < 0x8000 => {
                    Ok((Target::System(0x10_0000 + va - SYSTEM), SYSTEM + 0x8000 - va))
                }
                _ => Err(Some(fault)),
            }
        }
    }

    const SYSTEM: u64 = 0x30_0000;

    fn vm() -> PciVm {
        let fd = memfd_create("pci-vm-test", MFdFlags::MFD_CLOEXEC).expect("memfd");
        let file = File::from(fd);
        file.set_len(0x10_0000).expect("size");
        PciVm {
            hub: Hub::Gc,
            gmc: Arc::new(Tables),
            vram: Arc::new(DevMem::map(&file, 0x10_0000).expect("map")),
            peers: Vec::new(),
            pages: Default::default(),
            stop: None,
        }
    }

    /// Device memory is mapped at a huge-page boundary; a region a large copy touches
    /// is asked to be a huge page once, until its memory is forgotten, and keeps its
    /// contents.
    #[test]
    fn device_memory_lines_up_with_huge_pages_and_keeps_its_contents() {
        use super::super::dma::{HUGE, ask_huge, collapse, collapse_asked};
        let fd = memfd_create("pci-vram-test", MFdFlags::MFD_CLOEXEC).expect("memfd");
        let file = File::from(fd);
        let len = 2 * HUGE as u64;
        file.set_len(len).expect("size");
        let m = DevMem::map(&file, len).expect("map");
        assert_eq!(m.addr % HUGE, 0, "{:#x}", m.addr);
        let pattern = |off: u64| off.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        for off in (0..len).step_by(4096) {
            assert!(m.store_u64(off, pattern(off)));
        }
        // From the middle of the first region into the second: both asked for.
        collapse(m.addr + HUGE / 2, HUGE);
        assert!(collapse_asked(m.addr) && collapse_asked(m.addr + HUGE));
        // The collapse itself, made here rather than on the asking thread's time (a
        // kernel without MADV_COLLAPSE leaves the pages as they are).
        ask_huge(m.addr);
        ask_huge(m.addr + HUGE);
        for off in (0..len).step_by(4096) {
            assert_eq!(m.load_u64(off), Some(pattern(off)), "{off:#x}");
        }
        // Forgetting (as dropping device memory and unmapping host memory do), at
        // addresses no mapping can have (the kernel's half: the request just fails).
        let nowhere = 0xffff_9000_0000_0000usize;
        collapse(nowhere, 3 * HUGE);
        assert!((0..3).all(|k| collapse_asked(nowhere + k * HUGE)));
        super::super::dma::forget_collapsed(nowhere + HUGE, nowhere + 3 * HUGE);
        assert!(collapse_asked(nowhere) && !collapse_asked(nowhere + HUGE) && !collapse_asked(nowhere + 2 * HUGE));
        super::super::dma::forget_collapsed(nowhere, nowhere + HUGE);
        assert!(!collapse_asked(nowhere));
    }

    /// A prefetch's host address is the one an access would use; where nothing maps
    /// there is none (and the translation is tried ahead: nothing is latched).
    #[test]
    fn prefetches_resolve_what_maps_and_nothing_else() {
        let (vm, space) = (vm(), AddressSpace::new(1));
        let at = vm.vram.ptr(8, 1).map(|p| p as usize);
        assert!(at.is_some());
        assert_eq!(vm.resolve_for_prefetch(&space, FRAG + 8, false), at);
        assert_eq!(vm.resolve_for_prefetch(&space, PAGES + 5 * 0x1000, true), None);
        assert_eq!(vm.resolve_for_prefetch(&space, u64::MAX, false), None);
    }

    /// A copy runs as far as both translations hold at once (a fragment onto pages in
    /// any order), and a fault on either side stops it where it is: what came before is
    /// copied, nothing after.
    #[test]
    fn copies_follow_fragments_and_pages_and_stop_at_a_fault() {
        let (vm, space) = (vm(), AddressSpace::new(1));
        let src: Vec<u8> = (0..0x1_0000u32).map(|i| (i * 7 + i / 4096) as u8).collect();
        vm.write(&space, FRAG, &src).expect("the fragment");
        // Five pages, the first from mid-page: all of it lands, page by page.
        vm.copy(&space, PAGES + 0x800, FRAG + 0x10, 0x4800, 0x4800)
            .expect("before the hole");
        let mut got = vec![0u8; 0x4800];
        vm.read(&space, PAGES + 0x800, &mut got).expect("read back");
        assert!(got == src[0x10..0x4810], "a fragment onto pages");
        // Across the hole: the bytes before it are copied, and the error names it.
        let marker = vec![0xa5u8; 0x2000];
        vm.write(&space, PAGES + 6 * 0x1000, &marker).expect("past the hole");
        let e = vm
            .copy(&space, PAGES + 0x4000, FRAG, 0x4000, 0x4000)
            .expect_err("the hole faults");
        assert_eq!((e.va, e.write, e.not_present), (PAGES + 0x5000, true, true), "{e:?}");
        vm.read(&space, PAGES + 0x4000, &mut got[..0x1000]).expect("read back");
        assert!(got[..0x1000] == src[..0x1000], "before the fault");
        let mut after = vec![0u8; 0x2000];
        vm.read(&space, PAGES + 6 * 0x1000, &mut after).expect("read back");
        assert!(after == marker, "nothing past the fault");
        // From pages onto the fragment (the pages the first copy filled, page 4 aside,
        // which the second overwrote): the whole run.
        vm.copy(&space, FRAG + 0x8000, PAGES + 0x800, 0x3800, 0x3800)
            .expect("onto the fragment");
        let mut back = vec![0u8; 0x3800];
        vm.read(&space, FRAG + 0x8000, &mut back).expect("read back");
        assert!(back == src[0x10..0x3810], "pages onto the fragment");
    }

    /// A run of system frames is copied as far as their host pages follow each other
    /// too: frames 0x100..0x104 onto host pages in order, 0x104..0x108 in reverse;
    /// every byte lands where its own frame's page is.
    #[test]
    fn system_runs_follow_their_host_pages() {
        let (vm, mut space) = (vm(), AddressSpace::new(1));
        let mut host = vec![0u8; 9 * PAGE];
        let base = host.as_mut_ptr() as usize;
        let page0 = base.next_multiple_of(PAGE);
        space.accessible.insert(page0, page0 + 8 * PAGE);
        let page_of = |k: usize| page0 + if k < 4 { k } else { 11 - k } * PAGE;
        {
            let mut pages = vm.pages.write();
            for k in 0..8 {
                pages.insert(0x100 + k as u64, page_of(k));
            }
        }
        let src: Vec<u8> = (0..0x8000u32).map(|i| (i * 3 + i / 4096) as u8).collect();
        vm.write(&space, FRAG, &src).expect("the fragment");
        vm.copy(&space, SYSTEM + 0x10, FRAG + 0x10, 0x7ff0, 0x7ff0)
            .expect("onto system pages");
        for k in 0..8 {
            let at = page_of(k) - base;
            let from = if k == 0 { 0x10 } else { 0 };
            assert!(
                host[at + from..at + PAGE] == src[k * PAGE + from..(k + 1) * PAGE],
                "frame {k}"
            );
        }
        // And back, from the system pages onto VRAM.
        vm.copy(&space, FRAG + 0x8000, SYSTEM, 0x8000, 0x8000)
            .expect("from system pages");
        let mut back = vec![0u8; 0x7ff0];
        vm.read(&space, FRAG + 0x8010, &mut back).expect("read back");
        assert!(back == src[0x10..], "round trip");
        drop(host);
    }

    #[test]
    fn pages_split_at_4k_boundaries() {
        let v: Vec<_> = pages(0xff0, 0x1020).collect();
        assert_eq!(v, [(0xff0, 0, 0x10), (0x1000, 0x10, 0x1000), (0x2000, 0x1010, 0x10)]);
        assert_eq!(pages(u64::MAX - 3, 8).count(), 1);
        assert_eq!(pages(0, 0).count(), 0);
    }
}
