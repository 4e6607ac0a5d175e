//! [`Sys`] for [`MockSys`]: the virtual files, descriptors and mappings.

#![allow(unsafe_code)]

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use amd_kfd::abi::*;
use amd_kfd::mmio::Mmio;
use amd_kfd::sys::{Fd, MapFlags, OpenMode, PollFd, Prot, Sys, SysError, SysResult};
use nix::errno::Errno;

use super::{ExecMode, MockSys, NODES, TOPOLOGY, err};
use crate::driver::bus::{self, BarMap, PCI_DEVICES, PciBus};
use crate::driver::drm::SysNode;
use crate::driver::drm::ioctl::drm_ioctl;
use crate::driver::{DOORBELL_PAGE_BYTES, Driver, FdKind};
use crate::mem::PAGE;
use crate::mem::sanitize::GUARD_BYTES as SANITIZER_GUARD_BYTES;
use crate::pci::{BAR_DOORBELL, BAR_MMIO, BAR_VRAM};

impl Sys for MockSys {
    fn watches_freed_memory(&self) -> bool {
        self.driver.lock().sanitize
    }
    fn open(&self, path: &Path, mode: OpenMode) -> SysResult<Fd> {
        if PciBus::owns(path) {
            let mut d = self.driver.lock();
            let kind = d.pci.open(path, mode).map_err(|e| SysError::at("open", path, e))?;
            return Ok(Fd(d.alloc_fd(kind)));
        }
        let kind = if path == Path::new(amd_kfd::KFD_PATH) {
            FdKind::Kfd
        } else if let Some(i) = Self::render_index(path) {
            if i >= self.driver.lock().gpus.len() {
                return Err(SysError::at("open", path, Errno::ENOENT));
            }
            FdKind::Render(i)
        } else if Self::is_virtual(path) {
            // Readable sysfs files are read with `read_file`; nothing else is emulated.
            return Err(SysError::at("open", path, Errno::ENOENT));
        } else if mode == OpenMode::ReadOnly {
            let fd = self.host.open(path, mode)?;
            self.driver.lock().fds.insert(fd.0, FdKind::Host(fd.0));
            return Ok(fd);
        } else {
            return Err(SysError::at("open", path, Errno::EACCES));
        };
        Ok(Fd(self.driver.lock().alloc_fd(kind)))
    }

    fn close(&self, fd: Fd) -> SysResult<()> {
        let kind = self.driver.lock().fds.remove(&fd.0).ok_or(err("close", Errno::EBADF))?;
        match kind {
            FdKind::Host(real) => {
                let mut d = self.driver.lock();
                if d.pci.eventfds.remove(&fd.0) {
                    // The mock does not hold the eventfd open: interrupts that
                    // signalled it are off.
                    for p in d.pci.devs.iter_mut().filter(|p| p.msi_eventfd == Some(fd.0)) {
                        p.msi_eventfd = None;
                        p.regs.set_msi_eventfd(None);
                    }
                }
                drop(d);
                self.host.close(Fd(real))
            }
            FdKind::Render(i) => {
                let mut d = self.driver.lock();
                if d.gpus[i].vm_fd == Some(fd.0) {
                    d.gpus[i].vm_fd = None;
                }
                Ok(())
            }
            FdKind::Kfd | FdKind::PciBar { .. } | FdKind::PciConfig { .. } | FdKind::Pagemap => Ok(()),
            FdKind::VfioContainer(_) | FdKind::VfioGroup(_) | FdKind::VfioDevice(_) => {
                self.driver.lock().vfio_close(kind);
                Ok(())
            }
        }
    }

    unsafe fn ioctl(&self, fd: Fd, request: u64, name: &str, arg: &mut [u8]) -> SysResult<i32> {
        let kind = self.driver.lock().fds.get(&fd.0).copied();
        match kind {
            Some(FdKind::Kfd) => self
                .kfd_ioctl(request, arg)
                .map_err(|e| err(&format!("ioctl {name}"), e)),
            Some(k @ (FdKind::VfioContainer(_) | FdKind::VfioGroup(_) | FdKind::VfioDevice(_))) => self
                .driver
                .lock()
                .vfio_ioctl(k, request, arg)
                .map_err(|e| err(&format!("ioctl {name}"), e)),
            Some(FdKind::Render(g)) => {
                drm_ioctl(&self.driver, g, request, arg).map_err(|e| err(&format!("ioctl {name}"), e))
            }
            Some(_) => Err(err(&format!("ioctl {name}"), Errno::ENOTTY)),
            None => Err(err(&format!("ioctl {name}"), Errno::EBADF)),
        }
    }

    unsafe fn ioctl_value(&self, fd: Fd, request: u64, name: &str, value: u64) -> SysResult<i32> {
        let mut d = self.driver.lock();
        match d.fds.get(&fd.0).copied() {
            Some(k @ (FdKind::VfioContainer(_) | FdKind::VfioGroup(_) | FdKind::VfioDevice(_))) => d
                .vfio_ioctl_value(k, request, value)
                .map_err(|e| err(&format!("ioctl {name}"), e)),
            Some(_) => Err(err(&format!("ioctl {name}"), Errno::ENOTTY)),
            None => Err(err(&format!("ioctl {name}"), Errno::EBADF)),
        }
    }

    fn pread(&self, fd: Fd, buf: &mut [u8], offset: u64) -> SysResult<usize> {
        let e = |errno| err("pread", errno);
        let mut d = self.driver.lock();
        match d.fds.get(&fd.0).copied().ok_or(e(Errno::EBADF))? {
            FdKind::Host(real) => {
                drop(d);
                self.host.pread(Fd(real), buf, offset)
            }
            FdKind::PciConfig { dev, .. } => Ok(d.pci.devs[dev].config_read(offset, buf)),
            FdKind::VfioDevice(dev) => d.vfio_region_read(dev, offset, buf).map_err(e),
            FdKind::Pagemap => {
                // fs/proc/task_mmu.c pagemap_read: whole 8-byte entries only.
                if offset % 8 != 0 || buf.len() % 8 != 0 {
                    return Err(e(Errno::EINVAL));
                }
                let first = offset / 8;
                for (k, chunk) in buf.chunks_exact_mut(8).enumerate() {
                    let page = first
                        .checked_add(k as u64)
                        .and_then(|vpn| vpn.checked_mul(PAGE as u64))
                        .and_then(|a| usize::try_from(a).ok());
                    let entry = match page {
                        Some(a) => {
                            let mapped = a
                                .checked_add(PAGE)
                                .is_some_and(|e| d.engines.space.read().accessible.contains(a, e))
                                && !d.pci.maps_contain(a);
                            d.pci.pagemap_entry(a, mapped)
                        }
                        None => 0,
                    };
                    chunk.copy_from_slice(&entry.to_ne_bytes());
                }
                Ok(buf.len())
            }
            _ => Err(e(Errno::EINVAL)),
        }
    }

    fn pwrite(&self, fd: Fd, buf: &[u8], offset: u64) -> SysResult<usize> {
        let e = |errno| err("pwrite", errno);
        let mut d = self.driver.lock();
        match d.fds.get(&fd.0).copied().ok_or(e(Errno::EBADF))? {
            FdKind::Host(real) => {
                drop(d);
                self.host.pwrite(Fd(real), buf, offset)
            }
            FdKind::PciConfig { dev, writable: true } => Ok(d.pci.devs[dev].config_write(offset, buf)),
            FdKind::PciConfig { writable: false, .. } => Err(e(Errno::EBADF)),
            FdKind::VfioDevice(dev) => d.vfio_region_write(dev, offset, buf).map_err(e),
            _ => Err(e(Errno::EINVAL)),
        }
    }

    fn mmio(&self, addr: usize) -> Option<Arc<dyn Mmio>> {
        let d = self.driver.lock();
        let m = d.pci.maps.get(&addr)?;
        if m.bar != BAR_MMIO || m.offset != 0 {
            return None;
        }
        let regs: Arc<dyn Mmio> = d.pci.devs.get(m.dev)?.regs.clone();
        Some(regs)
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
        let e = |errno| err("mmap", errno);
        let kind = match fd {
            None => None,
            Some(fd) => Some(self.driver.lock().fds.get(&fd.0).copied().ok_or(e(Errno::EBADF))?),
        };
        let mut d = self.driver.lock();
        let mut flags = flags;
        let noreplace = flags.0 & libc::MAP_FIXED_NOREPLACE != 0;
        if d.sanitize && (flags.contains(MapFlags::FIXED) || noreplace) {
            // The client maps over address space it unmapped: no longer the
            // quarantine's to let go.
            let end = page_end(addr, len);
            let held = d.quarantine.take(addr, end);
            if noreplace {
                // Asked not to replace a mapping, the client finds the range free, as
                // without the sanitizer: where the quarantine held all of it, mapped
                // over in place (FIXED: no moment where another thread's mapping could
                // take it); else the held parts are given back first.
                if held.iter().map(|&(a, b)| b - a).sum::<usize>() == end - addr {
                    flags = MapFlags((flags.0 & !libc::MAP_FIXED_NOREPLACE) | libc::MAP_FIXED);
                } else {
                    for (a, b) in held {
                        // SAFETY: the quarantine's own inaccessible mapping, held until now.
                        let _ = unsafe { self.host.munmap(a, b - a) };
                    }
                }
            }
        }
        let fixed = flags.contains(MapFlags::FIXED);
        let anon_shared =
            MapFlags::SHARED
                .with(MapFlags::ANONYMOUS)
                .with(if fixed { MapFlags::FIXED } else { MapFlags(0) });
        // A doorbell page's GPU, whose AQL slots are set once the page is mapped.
        let mut aql_doorbells = None;
        let got = match kind {
            None => {
                if !flags.contains(MapFlags::ANONYMOUS) {
                    return Err(e(Errno::EBADF));
                }
                // No page is locked in the mock (the memory-lock limit of an
                // unprivileged test would refuse it, and nothing here moves pages).
                let flags = MapFlags(flags.0 & !MapFlags::LOCKED.0);
                if d.sanitize && !fixed && addr == 0 {
                    // SAFETY: not FIXED and no address asked: the kernel picks unused
                    // address space, nothing is replaced.
                    unsafe { self.reserve_guarded(&mut d, len, prot, flags) }?
                } else {
                    // SAFETY: forwarded with MAP_LOCKED dropped, which changes no
                    // address: this call's contract is the caller's.
                    unsafe { self.host.mmap(addr, len, prot, flags, None, offset) }?
                }
            }
            Some(FdKind::Render(i)) => {
                let obj = d
                    .handles
                    .values()
                    .find(|o| o.gpu == i && o.mmap_offset == offset && o.flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR == 0)
                    .ok_or(e(Errno::EINVAL))?;
                // The whole buffer, as its length was asked (rounded up to pages).
                if (len as u64).next_multiple_of(4096) != obj.size || !flags.contains(MapFlags::SHARED) {
                    return Err(e(Errno::EINVAL));
                }
                if obj.backed && addr as u64 == obj.va {
                    // Memory the mock made when the buffer was mapped to a GPU: the
                    // process now maps what is there.
                    return Ok(addr);
                }
                // The buffer's memory: anonymous pages at the address asked for, private
                // (one process maps them once, and private memory can have transparent
                // huge pages: large buffers then fault in 2 MiB at a time, as VRAM that
                // is already there would not fault at all).
                let anon_private =
                    MapFlags::PRIVATE
                        .with(MapFlags::ANONYMOUS)
                        .with(if fixed { MapFlags::FIXED } else { MapFlags(0) });
                // SAFETY: same range and FIXED-ness as the caller asked, so this call's
                // contract (the caller owns a FIXED range) carries over.
                let a = unsafe { self.host.mmap(addr, len, prot, anon_private, None, 0) }?;
                if len >= amd_kfd::sys::HUGE_PAGE {
                    // A hint: without it the buffer works the same, only slower to touch.
                    let _ = self.host.advise_huge_pages(a, len);
                }
                // VRAM is there before anything touches it, and the kernel pins a GTT
                // buffer's pages when it allocates them: a buffer's pages are made now
                // (a cost of the allocation), so the first copy into or out of a fresh
                // buffer, or a kernel's first pass over it, runs as fast as later ones,
                // as on the hardware (tinygrad's copy-bandwidth test times a copy
                // between two fresh 200 MB buffers). The one exception is a queue's
                // context-save area (GPU-only VRAM of exactly the size a queue of this
                // GPU takes, tens of MiB): only a preemption writes it, which the mock
                // never makes, so it is backed as it is touched, and a queue is made in
                // well under a millisecond. A buffer that happens to have that size is
                // only slower to touch the first time.
                let gpu_only =
                    obj.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 && obj.flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC == 0;
                let context_save = gpu_only && Some(obj.size) == d.context_save_bytes(i);
                if !context_save {
                    let _ = self.host.populate(a, len);
                }
                a
            }
            // The MMIO remap page (the HDP flush registers' page): one page of
            // memory; what the CPU or a queue writes there flushes nothing to flush.
            Some(FdKind::Kfd) if d.gpus.iter().any(|g| Driver::mmio_remap_offset(g.gpu_id) == offset) => {
                if len != 4096 {
                    return Err(e(Errno::EINVAL));
                }
                // SAFETY: as above.
                unsafe { self.host.mmap(addr, len, prot, anon_shared, None, 0) }?
            }
            Some(FdKind::Kfd) => {
                let gpu = (0..d.gpus.len())
                    .find(|&g| Driver::doorbell_base(g) == offset)
                    .ok_or(e(Errno::EINVAL))?;
                if len as u64 > DOORBELL_PAGE_BYTES || d.gpus[gpu].doorbell_page.is_some() {
                    return Err(e(Errno::EINVAL));
                }
                // SAFETY: as above.
                let a = unsafe { self.host.mmap(addr, len, prot, anon_shared, None, 0) }?;
                d.gpus[gpu].doorbell_page = Some(a as u64);
                // Release: the page is mapped before a doorbell can find it.
                self.doorbell_pages[gpu].store(a as u64, Ordering::Release);
                for q in d.queues.values_mut().filter(|q| q.gpu == gpu) {
                    q.doorbell = Some(a as u64 + q.doorbell_index as u64 * 8);
                }
                // The AQL slots are set once the page is memory the mock may touch
                // (below); set now, the stores would find it unmapped and do nothing.
                aql_doorbells = Some(gpu);
                a
            }
            Some(FdKind::PciBar { dev, bar, writable }) => {
                if prot == Prot::ReadWrite && !writable {
                    return Err(e(Errno::EACCES));
                }
                if let Some(err) = Self::injected_bar_failure(&d, "mmap", dev, bar) {
                    return Err(err);
                }
                // SAFETY: this call's contract carries over (same range, same FIXED-ness).
                let (got, m) = unsafe { self.map_bar(&d, addr, len, prot, flags, dev, bar, offset) }.map_err(e)?;
                self.note_bar_map(&mut d, got, m);
                return Ok(got);
            }
            Some(FdKind::VfioDevice(dev)) => {
                let (index, off) = bus::vfio_split_offset(offset);
                let bar = match index as usize {
                    b @ (BAR_VRAM | BAR_DOORBELL | BAR_MMIO) => b,
                    _ => return Err(e(Errno::EINVAL)),
                };
                if let Some(err) = Self::injected_bar_failure(&d, "mmap of the VFIO region of", dev, bar) {
                    return Err(err);
                }
                // SAFETY: as above.
                let (got, m) = unsafe { self.map_bar(&d, addr, len, prot, flags, dev, bar, off) }.map_err(e)?;
                self.note_bar_map(&mut d, got, m);
                return Ok(got);
            }
            Some(_) => return Err(e(Errno::ENODEV)),
        };
        // mmap maps whole pages: the tail of the last page is the client's too, and
        // the GPU may read it (a 16-byte scalar load of a 12-byte buffer is legal on
        // hardware).
        let end = page_end(got, len);
        d.host_maps.insert(got, end);
        let mut space = d.engines.space.write();
        if prot == Prot::None {
            space.accessible.remove(got, end);
        } else {
            space.accessible.insert(got, end);
        }
        drop(space);
        if let Some(g) = aql_doorbells {
            d.init_aql_doorbells(g);
        }
        Ok(got)
    }

    unsafe fn munmap(&self, addr: usize, len: usize) -> SysResult<()> {
        // The driver lock, then the address space exclusively: engines access memory
        // only under the shared lock, so none is inside this range when it goes, and
        // later accesses find it gone (a memory fault).
        let mut d = self.driver.lock();
        // munmap unmaps whole pages, as mmap maps them.
        let end = page_end(addr, len);
        let quarantined = d.sanitize && end > addr;
        {
            let mut space = d.engines.space.write();
            space.accessible.remove(addr, end);
            if quarantined {
                // The quarantine: the range stays reserved, inaccessible, so that
                // nothing the kernel maps next lands where a dangling pointer points;
                // the oldest such ranges go past the quarantine's limits.
                let reserve = MapFlags::PRIVATE
                    .with(MapFlags::ANONYMOUS)
                    .with(MapFlags::NORESERVE)
                    .with(MapFlags::FIXED);
                // SAFETY: FIXED over exactly the range the caller unmaps, whose
                // contract (the caller owns it) is this call's; what was there goes,
                // as munmap would have it go.
                unsafe { self.host.mmap(addr, end - addr, Prot::None, reserve, None, 0) }?;
            } else {
                // SAFETY: forwarded unchanged: this call's contract is the caller's.
                unsafe { self.host.munmap(addr, len) }?;
            }
        }
        if quarantined {
            for (a, b) in d.quarantine.hold(addr, end) {
                // SAFETY: address space the quarantine held: the mock's own
                // inaccessible mapping, which nothing has mapped over since.
                let _ = unsafe { self.host.munmap(a, b - a) };
            }
        }
        d.host_maps.remove(addr, end);
        // Guard gaps inside the range went with it: forgotten, so that no later
        // munmap of another mapping's end unmaps what the kernel placed there since.
        let inside: Vec<usize> = d.guards.range(addr..end).map(|(&g, _)| g).collect();
        for g in inside {
            d.guards.remove(&g);
        }
        if let Some(guard) = d.guards.remove(&end) {
            // The sanitizer's gap after a reservation goes with the reservation's
            // end.
            // SAFETY: address space the mock reserved itself and never handed out.
            let _ = unsafe { self.host.munmap(end, guard) };
        }
        d.pci.forget_maps(addr, end);
        self.pci_doorbells
            .write()
            .retain(|&(a, l, _)| a.saturating_add(l) <= addr || a >= end);
        d.pci.forget_pages(addr, end);
        crate::mem::dma::forget_collapsed(addr, end);
        let end = end as u64;
        for (i, g) in d.gpus.iter_mut().enumerate() {
            if g.doorbell_page.is_some_and(|p| p >= addr as u64 && p < end) {
                g.doorbell_page = None;
                self.doorbell_pages[i].store(0, Ordering::Release);
            }
        }
        Ok(())
    }

    fn read_file(&self, path: &Path) -> SysResult<Vec<u8>> {
        if let Some(b) = self.firmware(path) {
            return Ok(b);
        }
        if let Some(r) = self.on_pci_bus("read", path, |pci| pci.read_file(path)) {
            return r;
        }
        if let Some(n) = self.driver.lock().drm_node(path) {
            return match n {
                SysNode::File(b) => Ok(b),
                _ => Err(SysError::at("read", path, Errno::EISDIR)),
            };
        }
        if let Some(r) = self.virtual_text(path) {
            return r;
        }
        if Self::is_virtual(path) {
            return Err(SysError::at("read", path, Errno::ENOENT));
        }
        self.host.read_file(path)
    }

    fn write_file(&self, path: &Path, data: &[u8]) -> SysResult<()> {
        if let Some(r) = self.on_pci_bus("write", path, |pci| pci.write_file(path, data)) {
            return r;
        }
        Err(SysError::at("write", path, Errno::EACCES))
    }

    fn list_dir(&self, path: &Path) -> SysResult<Vec<String>> {
        if let Some(n) = self.driver.lock().drm_node(path) {
            return match n {
                SysNode::Dir(names) => Ok(names),
                _ => Err(SysError::at("readdir", path, Errno::ENOTDIR)),
            };
        }
        let d = self.driver.lock();
        if PciBus::owns(path) {
            return d.pci.list_dir(path).map_err(|e| SysError::at("readdir", path, e));
        }
        let n_nodes = d.gpus.len() + d.cpu_node as usize;
        if path == Path::new(NODES) {
            // Directory order is not node order on real systems either.
            return Ok((0..n_nodes).rev().map(|i| i.to_string()).collect());
        }
        if path == Path::new(TOPOLOGY) {
            return Ok(vec!["nodes".into(), "system_properties".into(), "generation_id".into()]);
        }
        if path.starts_with(NODES) {
            drop(d);
            return self
                .virtual_dir(path)
                .ok_or_else(|| SysError::at("readdir", path, Errno::ENOENT));
        }
        if path == Path::new("/sys/module/amdgpu") {
            return Ok(vec!["initstate".into(), "parameters".into()]);
        }
        if Self::is_virtual(path) {
            return Err(SysError::at("readdir", path, Errno::ENOENT));
        }
        drop(d);
        self.host.list_dir(path)
    }

    fn exists(&self, path: &Path) -> bool {
        if self.firmware(path).is_some() {
            return true;
        }
        if PciBus::owns(path) {
            return self.driver.lock().pci.node(path).is_some();
        }
        if self.driver.lock().drm_node(path).is_some() {
            return true;
        }
        if path == Path::new(amd_kfd::KFD_PATH)
            || path == Path::new("/sys/module/amdgpu")
            || Self::render_index(path).is_some_and(|i| i < self.driver.lock().gpus.len())
        {
            return true;
        }
        if Self::is_virtual(path) {
            return self.list_dir(path).is_ok() || self.virtual_text(path).is_some_and(|r| r.is_ok());
        }
        self.host.exists(path)
    }

    fn readlink(&self, path: &Path) -> SysResult<PathBuf> {
        if let Some(r) = self.on_pci_bus("readlink", path, |pci| pci.readlink(path)) {
            return r;
        }
        if let Some(SysNode::Link(t)) = self.driver.lock().drm_sysfs(path) {
            return Ok(t);
        }
        if Self::is_virtual(path) {
            return Err(SysError::at("readlink", path, Errno::EINVAL));
        }
        self.host.readlink(path)
    }

    fn eventfd(&self, init: u32) -> SysResult<Fd> {
        let fd = self.host.eventfd(init)?;
        let mut d = self.driver.lock();
        d.fds.insert(fd.0, FdKind::Host(fd.0));
        d.pci.eventfds.insert(fd.0);
        Ok(fd)
    }

    fn read(&self, fd: Fd, buf: &mut [u8]) -> SysResult<usize> {
        // The descriptor looked up, then the lock let go: the read may wait, and the
        // engines need the lock to signal what it waits for.
        let kind = self.driver.lock().fds.get(&fd.0).copied();
        match kind {
            Some(FdKind::Host(real)) => self.host.read(Fd(real), buf),
            Some(_) => Err(err("read", Errno::EINVAL)),
            None => Err(err("read", Errno::EBADF)),
        }
    }

    fn write(&self, fd: Fd, buf: &[u8]) -> SysResult<usize> {
        let kind = self.driver.lock().fds.get(&fd.0).copied();
        match kind {
            Some(FdKind::Host(real)) => self.host.write(Fd(real), buf),
            Some(_) => Err(err("write", Errno::EINVAL)),
            None => Err(err("write", Errno::EBADF)),
        }
    }

    fn doorbell_written(&self, addr: usize) {
        // Acquire: pairs with the Release store of the page's address at mmap.
        let g = self.doorbell_pages.iter().position(|p| {
            let p = p.load(Ordering::Acquire);
            p != 0 && (addr as u64).wrapping_sub(p) < DOORBELL_PAGE_BYTES
        });
        // A PCI GPU's doorbell BAR: the slot written carries the write pointer, so
        // waking the GPU's engine slot is all that is left to do.
        let g = g.or_else(|| {
            self.pci_doorbells
                .read()
                .iter()
                .find(|&&(a, l, _)| addr.wrapping_sub(a) < l)
                .map(|&(_, _, slot)| slot)
        });
        let Some(g) = g else { return };
        match self.mode {
            ExecMode::Inline => {
                let d = self.driver.lock();
                self.wake_locked(g, d);
            }
            ExecMode::Threaded => {
                // A running engine only needs the kick; a sleeping one is notified under
                // the driver lock (see `device_thread` for why SeqCst).
                self.kicks[g].store(true, Ordering::SeqCst);
                // A sleeping engine holds the driver lock only between announcing the
                // sleep and waiting, or between waking and saying so: wait for one of
                // those short moments to pass rather than queue for the lock behind
                // the engine's work.
                let mut spins = 0u32;
                while self.sleeping[g].load(Ordering::SeqCst) {
                    if let Some(_d) = self.driver.try_lock() {
                        self.gpu_wake[g].notify_one();
                        break;
                    }
                    spins += 1;
                    if spins < 64 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
        }
    }

    fn stop_reasons(&self, gpu_id: u32) -> Vec<String> {
        let index = self.driver.lock().gpu_index(gpu_id).ok();
        index.map(|g| MockSys::stop_reasons(self, g)).unwrap_or_default()
    }

    fn pci_stop_reasons(&self, address: &str) -> Vec<String> {
        let dev = self.driver.lock().pci.dev_by_name(address);
        dev.map(|d| MockSys::pci_stop_reasons(self, d)).unwrap_or_default()
    }

    fn poll(&self, fds: &mut [PollFd], timeout_ms: i32) -> SysResult<usize> {
        {
            let d = self.driver.lock();
            if fds.iter().any(|p| !matches!(d.fds.get(&p.fd.0), Some(FdKind::Host(_)))) {
                return Err(err("poll", Errno::EINVAL));
            }
        }
        self.host.poll(fds, timeout_ms)
    }
}

impl MockSys {
    /// The sanitizer's anonymous mapping at an address the kernel picks: `len` bytes
    /// as asked, then [`SANITIZER_GUARD_BYTES`] of inaccessible address space of the
    /// mock's own, remembered so that it goes when the mapping's end is unmapped.
    ///
    /// # Safety
    /// As `mmap` without MAP_FIXED: nothing is replaced.
    unsafe fn reserve_guarded(&self, d: &mut Driver, len: usize, prot: Prot, flags: MapFlags) -> SysResult<usize> {
        let e = |errno| err("mmap", errno);
        let body = len
            .checked_next_multiple_of(PAGE)
            .filter(|&b| b > 0)
            .ok_or(e(Errno::EINVAL))?;
        let whole = body.checked_add(SANITIZER_GUARD_BYTES).ok_or(e(Errno::ENOMEM))?;
        let reserve = MapFlags::PRIVATE.with(MapFlags::ANONYMOUS).with(MapFlags::NORESERVE);
        // SAFETY: not MAP_FIXED: the kernel picks unused address space.
        let a = unsafe { self.host.mmap(0, whole, Prot::None, reserve, None, 0) }?;
        if prot != Prot::None || flags != reserve {
            // SAFETY: FIXED over the start of the reservation just made, which nothing
            // else knows of yet.
            if let Err(x) = unsafe { self.host.mmap(a, len, prot, flags.with(MapFlags::FIXED), None, 0) } {
                // SAFETY: the reservation just made, unused.
                let _ = unsafe { self.host.munmap(a, whole) };
                return Err(x);
            }
        }
        d.guards.insert(a + body, SANITIZER_GUARD_BYTES);
        Ok(a)
    }

    /// `op` on `path` by the PCI bus where the path is its (`None` where not).
    fn on_pci_bus<T>(
        &self,
        op: &'static str,
        path: &Path,
        f: impl FnOnce(&mut PciBus) -> Result<T, Errno>,
    ) -> Option<SysResult<T>> {
        PciBus::owns(path).then(|| f(&mut self.driver.lock().pci).map_err(|e| SysError::at(op, path, e)))
    }

    /// A firmware file under [`crate::pci::firmware::DIR`] (one of the configured
    /// [`PciFirmware`](crate::PciFirmware) files), served when the mock has PCI GPUs.
    fn firmware(&self, path: &Path) -> Option<Vec<u8>> {
        let name = path.strip_prefix(crate::pci::firmware::DIR).ok()?.to_str()?;
        let d = self.driver.lock();
        if d.pci.devs.is_empty() {
            return None;
        }
        d.pci.firmware.file(name).map(<[u8]>::to_vec)
    }

    /// The failure injected into mappings of BAR `bar` of PCI device `dev`, naming
    /// the BAR's resource file.
    fn injected_bar_failure(d: &Driver, op: &str, dev: usize, bar: usize) -> Option<SysError> {
        let p = d.pci.devs.get(dev)?;
        let errno = (*p.bar_map_fail.get(bar)?)?;
        let path = Path::new(PCI_DEVICES).join(&p.name).join(format!("resource{bar}"));
        Some(SysError::at(op, &path, errno))
    }

    /// Records a BAR mapping the mock made (and, for doorbells, where a doorbell
    /// write wakes an engine).
    fn note_bar_map(&self, d: &mut Driver, got: usize, m: BarMap) {
        if m.bar == BAR_DOORBELL {
            let slot = d.pci_slot(m.dev);
            self.pci_doorbells.write().push((got, m.len, slot));
        }
        d.pci.maps.insert(got, m);
        d.host_maps.insert(got, got + m.len);
    }

    /// Maps `len` bytes of BAR `bar` of PCI device `dev` from byte `offset`
    /// (`pci_mmap_resource`: page-aligned, inside the BAR, shared): VRAM and
    /// doorbells map their memfds; BAR 5 maps inaccessible address space, its
    /// registers being reached through `Sys::mmio`.
    ///
    /// # Safety
    /// As [`Sys::mmap`]: with `MAP_FIXED` the caller owns the range it replaces.
    #[allow(clippy::too_many_arguments)]
    unsafe fn map_bar(
        &self,
        d: &Driver,
        addr: usize,
        len: usize,
        prot: Prot,
        flags: MapFlags,
        dev: usize,
        bar: usize,
        offset: u64,
    ) -> Result<(usize, BarMap), Errno> {
        let p = d.pci.devs.get(dev).ok_or(Errno::ENODEV)?;
        let fits = offset.checked_add(len as u64).is_some_and(|end| end <= p.bar_size(bar));
        if len == 0 || offset % PAGE as u64 != 0 || !fits || !flags.contains(MapFlags::SHARED) {
            return Err(Errno::EINVAL);
        }
        let fixed = if flags.contains(MapFlags::FIXED) {
            MapFlags::FIXED
        } else {
            MapFlags(0)
        };
        let got = match bar {
            BAR_VRAM | BAR_DOORBELL => {
                let file = if bar == BAR_VRAM { &p.vram } else { &p.doorbells };
                let fd = Fd(file.as_raw_fd());
                // SAFETY: the memfd is open for the call; FIXED-ness as the caller
                // asked, so this call's contract carries over.
                unsafe {
                    self.host
                        .mmap(addr, len, prot, MapFlags::SHARED.with(fixed), Some(fd), offset)
                }
            }
            _ => {
                let f = MapFlags::PRIVATE
                    .with(MapFlags::ANONYMOUS)
                    .with(MapFlags::NORESERVE)
                    .with(fixed);
                // SAFETY: as above; the mapping is address space only.
                unsafe { self.host.mmap(addr, len, Prot::None, f, None, 0) }
            }
        }
        .map_err(|e| e.errno)?;
        Ok((got, BarMap { dev, bar, offset, len }))
    }
}

/// The end of the whole pages `len` bytes from `addr` cover (the address space's
/// end where that overflows: nothing is mapped there).
pub(crate) fn page_end(addr: usize, len: usize) -> usize {
    addr.checked_add(len)
        .and_then(|e| e.checked_next_multiple_of(PAGE))
        .unwrap_or(usize::MAX)
}
