//! The driverless transport ([`AmIface`]): tinygrad 0.10.1's `PCIIface` over amd-am.
//!
//! ```text
//! AmIface ── Arc<AmShared> ── Mutex<AmGpu>   (GMC, IH, GFX, SDMA blocks of amd-am)
//!    │                      └─ Arc<AmDevice>  (BAR 0 for CPU access, BAR 2 doorbells)
//!    ├── AmMemory   VRAM (Device: one block per leaf; CPU-visible and uncached: one
//!    │              contiguous block the CPU reaches through BAR 0), or host pages
//!    │              mapped into the GPU's page tables at the frames the pagemap gives
//!    └── AmQueue    a ring and its pointer page in uncached VRAM, set up as an HQD of
//!                   me 1 pipe 0 queue 0 (compute) or SDMA0 queue 0, rung through BAR 2
//! ```
//!
//! Waiting sleeps on the interrupt: timeline signals end with an interrupting
//! RELEASE_MEM (compute) or TRAP (SDMA), whose vector the IH ring takes and whose MSI
//! wakes the VFIO eventfd; the sleeper then drains the ring as tinygrad 0.10.1's
//! `PCIIface.sleep` does. Without VFIO there is no eventfd and waits nap and poll.
//! Faults come from the hubs' `VM_L2_PROTECTION_FAULT_*` registers and the VM-fault
//! vectors of the interrupt ring.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use amd_am::gfx::ComputeRingDesc;
use amd_am::gmc::{Hub, Mapping};
use amd_am::ip::{AmDevice, Ip};
use amd_am::regs::generated::doorbell::{AMDGPU_NAVI10_DOORBELL_MEC_RING0, AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0};
use amd_am::sdma::SdmaRingDesc;
use amd_am::{AmGpu, BarMapping};
use amd_packets::GfxTarget;
use parking_lot::Mutex;

use crate::iface::{BufferKind, DeviceInterface, DeviceMemory, DeviceProps, HwQueue};
use crate::{HcqError, Result};

/// Bytes of the pointer page of a ring (read pointer at 0, write pointer at 0x10).
const GART_SIZE: usize = 0x1000;
/// Bytes of a compute queue's end-of-pipe buffer (tinygrad 0.10.1's size).
const EOP_SIZE: usize = 0x1000;
/// The context id of the interrupts timeline signals raise (any value: the sleeper
/// wakes on every vector).
const SIGNAL_EVENT_ID: u32 = 1;
/// How long a wait without VFIO's eventfd naps between looks at the signal.
const NAP: std::time::Duration = std::time::Duration::from_micros(200);

/// One booted GPU, shared by its transport handle, its memory and its queues (the
/// GPU stays booted while any of them lives; the last one runs `fini`).
pub struct AmShared {
    gpu: Mutex<AmGpu>,
    dev: Arc<AmDevice>,
    /// The faults reported so far (the first report stays in every later one).
    faults: Mutex<Vec<String>>,
    compute_taken: AtomicBool,
    sdma_taken: AtomicBool,
    /// The GPU's virtual address space (shared with the platform's other GPUs).
    va: amd_am::gmc::VaSpace,
}

impl std::fmt::Debug for AmShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AmShared")
            .field("device", &self.dev.pci().address().to_string())
            .finish()
    }
}

impl AmShared {
    /// Wraps a booted GPU.
    pub fn new(mut gpu: AmGpu) -> Arc<Self> {
        let dev = gpu.device().clone();
        let va = gpu.with(|b| b.gmc.va_space().clone());
        Arc::new(AmShared {
            gpu: Mutex::new(gpu),
            dev,
            faults: Mutex::new(Vec::new()),
            compute_taken: AtomicBool::new(false),
            sdma_taken: AtomicBool::new(false),
            va,
        })
    }

    /// The device.
    pub fn device(&self) -> &AmDevice {
        &self.dev
    }

    /// Runs `f` on the booted GPU's blocks, under its lock.
    pub fn with<R>(&self, f: impl for<'x> FnOnce(&mut amd_am::device::Booted<'x>) -> R) -> R {
        self.gpu.lock().with(f)
    }
}

/// The driverless transport of one GPU.
#[derive(Debug)]
pub struct AmIface {
    shared: Arc<AmShared>,
    props: DeviceProps,
    /// Where interrupting signals write their event id (the KFD's event mailbox has
    /// no counterpart here; the write is the packet's, the interrupt is what counts).
    mailbox: Arc<AmMemory>,
}

impl AmIface {
    /// The transport of a booted GPU; its properties from the discovery table, as
    /// `PCIIface.__init__` computes them.
    pub fn new(shared: Arc<AmShared>) -> Result<Self> {
        let d = shared.dev.discovery();
        let gc = &d.gc.v1_0;
        let gfx_version = d
            .ip_version(Ip::Gc)
            .ok_or_else(|| HcqError::NoDevice("the discovery table has no GC block".into()))?;
        let arch = format!(
            "gfx{}{:x}{:x}",
            gfx_version / 10000,
            (gfx_version / 100) % 100,
            gfx_version % 100
        );
        let target = GfxTarget::from_version(gfx_version)
            .map_err(|_| HcqError::NoDevice(format!("{arch} ({gfx_version}) is not a supported target")))?;
        let bad = |what: &str| HcqError::NoDevice(format!("the discovery table's GC info overflows {what}"));
        let array_count = gc
            .gc_num_sa_per_se
            .checked_mul(gc.gc_num_se)
            .ok_or_else(|| bad("the shader array count"))?;
        // tinygrad: simd_count = 2 · (2 · arrays · WGPs per array), 2 SIMDs per CU.
        let cu_count = gc
            .gc_num_wgp0_per_sa
            .checked_add(gc.gc_num_wgp1_per_sa)
            .and_then(|w| w.checked_mul(array_count))
            .and_then(|w| w.checked_mul(2))
            .ok_or_else(|| bad("the CU count"))?;
        let lds_size = gc.gc_lds_size.checked_mul(1024).ok_or_else(|| bad("the LDS size"))?;
        let a = shared.dev.pci().address();
        let props = DeviceProps {
            arch,
            target,
            gfx_version,
            cu_count,
            simd_per_cu: 2,
            max_waves_per_simd: gc.gc_max_waves_per_simd,
            lds_size,
            scratch_slots_per_cu: gc.gc_max_scratch_slots_per_cu,
            array_count,
            simd_arrays_per_engine: gc.gc_num_sa_per_se,
            gpu_id: u32::from(a.domain) << 16
                | u32::from(a.bus) << 8
                | u32::from(a.device) << 3
                | u32::from(a.function),
        };
        // A new device starts afresh: the faults of the one before were its own, and
        // so are those the GPU latched for it (a dispatch of that device still
        // finishing its workgroups may latch another after the device read and
        // cleared the first, until its queue's end stops it).
        shared.faults.lock().clear();
        shared.with(|b| -> amd_am::Result<()> {
            for hub in [Hub::Gc, Hub::Mm] {
                if b.gmc.fault(hub)?.is_some() {
                    b.gmc.clear_fault(hub)?;
                }
            }
            b.ih.handle().map(|_| ())
        })?;
        let mailbox = alloc_on(&shared, 8, BufferKind::Uncached)?;
        Ok(AmIface { shared, props, mailbox })
    }

    /// The booted GPU.
    pub fn shared(&self) -> &Arc<AmShared> {
        &self.shared
    }
}

/// How the CPU reaches a buffer.
enum Cpu {
    /// It does not (VRAM outside one contiguous block).
    None,
    /// VRAM at this offset of BAR 0.
    Vram(u64),
    /// Host pages.
    Host(BarMapping),
}

/// A buffer of the driverless transport. Dropping it unmaps it from the GPU and
/// frees its VRAM (or unmaps its host pages).
pub struct AmMemory {
    shared: Arc<AmShared>,
    mapping: Mapping,
    cpu: Cpu,
    /// The other GPUs it is mapped into (at the same address), unmapped on drop.
    peers: Mutex<Vec<Arc<AmShared>>>,
}

impl std::fmt::Debug for AmMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AmMemory")
            .field("va", &format_args!("{:#x}", self.mapping.va))
            .field("size", &format_args!("{:#x}", self.mapping.size))
            .finish()
    }
}

impl Drop for AmMemory {
    fn drop(&mut self) {
        // The peers' mappings go first, then the owner's, then (field drop) the
        // host pages.
        let m = &self.mapping;
        for peer in self.peers.get_mut().drain(..) {
            let _ = peer.with(|b| b.gmc.unmap_range(m.va, m.size));
        }
        let _ = self.shared.with(|b| b.gmc.vfree(m));
    }
}

impl AmMemory {
    /// The range `offset..offset + len` checked against the buffer.
    fn span(&self, offset: usize, len: usize) -> Result<u64> {
        let size = usize::try_from(self.mapping.size).unwrap_or(usize::MAX);
        crate::error::check_range(size, offset, len).map(|()| offset as u64)
    }

    /// Where the CPU reaches `len` bytes at `offset`: the mapping (BAR 0, or the
    /// buffer's host pages) and the bytes' offset in it.
    fn cpu_place(&self, offset: usize, len: usize) -> Result<(&BarMapping, u64)> {
        let off = self.span(offset, len)?;
        match &self.cpu {
            Cpu::None => Err(self.no_cpu()),
            Cpu::Vram(p) => Ok((self.shared.dev.pci().vram(), p + off)),
            Cpu::Host(m) => Ok((m, off)),
        }
    }

    fn no_cpu(&self) -> HcqError {
        HcqError::CpuUnreachable {
            va: self.mapping.va,
            why: "is VRAM the CPU cannot reach",
        }
    }

    fn out_of_bar(&self) -> HcqError {
        HcqError::CpuUnreachable {
            va: self.mapping.va,
            why: "is outside BAR 0",
        }
    }
}

impl DeviceMemory for Arc<AmMemory> {
    fn va(&self) -> u64 {
        self.mapping.va
    }
    fn size(&self) -> usize {
        self.mapping.size as usize
    }
    fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        let (m, at) = self.cpu_place(offset, data.len())?;
        if m.copy_from(at, data) {
            Ok(())
        } else {
            Err(self.out_of_bar())
        }
    }
    fn read(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        let (m, at) = self.cpu_place(offset, out.len())?;
        if m.copy_to(at, out) {
            Ok(())
        } else {
            Err(self.out_of_bar())
        }
    }
    fn load_u64(&self, offset: usize) -> Result<u64> {
        let (m, at) = self.cpu_place(offset, 8)?;
        // Acquire: what the GPU wrote before the value is visible after it.
        m.load_u64(at, Ordering::Acquire).ok_or(HcqError::Unaligned {
            what: "64-bit load",
            offset,
            align: 8,
        })
    }
    fn store_u64(&self, offset: usize, v: u64) -> Result<()> {
        let (m, at) = self.cpu_place(offset, 8)?;
        // Release: the CPU's writes before the value are visible to whoever sees it.
        if m.store_u64(at, v, Ordering::Release) {
            Ok(())
        } else {
            Err(HcqError::Unaligned {
                what: "64-bit store",
                offset,
                align: 8,
            })
        }
    }
}

/// A hardware queue of the driverless transport: the ring, its pointer page and
/// (compute) its end-of-pipe buffer, and the doorbell slot.
#[derive(Debug)]
pub struct AmQueue {
    shared: Arc<AmShared>,
    ring: Arc<AmMemory>,
    gart: Arc<AmMemory>,
    _eop: Option<Arc<AmMemory>>,
    /// The compute ring's MQD (VRAM `setup_ring` took), freed after the dequeue.
    mqd: Option<amd_am::gmc::Mapping>,
    doorbell: u32,
    sdma: bool,
}

impl Drop for AmQueue {
    fn drop(&mut self) {
        // The engine lets go of the ring first (a running kernel stops), then its
        // memory goes (the fields, after this).
        let (sdma, mqd) = (self.sdma, self.mqd.take());
        let _ = self.shared.with(|b| -> amd_am::Result<()> {
            if sdma {
                b.sdma.stop_ring()
            } else {
                b.gfx.dequeue(0, 0)?;
                match mqd {
                    Some(m) => b.gmc.vfree(&m),
                    None => Ok(()),
                }
            }
        });
        let taken = if self.sdma {
            &self.shared.sdma_taken
        } else {
            &self.shared.compute_taken
        };
        // Release: pairs with the Acquire of the next `create_queue`.
        taken.store(false, Ordering::Release);
    }
}

impl HwQueue for AmQueue {
    fn ring_bytes(&self) -> usize {
        self.ring.size()
    }
    fn write_ring(&self, offset: usize, words: &[u32]) -> Result<()> {
        self.ring.write(offset, zerocopy::IntoBytes::as_bytes(words))
    }
    fn read_ptr(&self) -> u64 {
        // The engine writes its read pointer back to the page's first 8 bytes.
        self.gart.load_u64(0).unwrap_or(0)
    }
    fn submit(&self, write_ptr: u64) {
        // The write pointer where the engine polls it, then the doorbell (a Release
        // store: the packets and the pointer are visible before it). Both places
        // were checked when the queue was made.
        let _ = self.gart.store_u64(0x10, write_ptr);
        let _ = self.shared.dev.pci().ring_doorbell(self.doorbell, write_ptr);
    }
}

impl AmIface {
    fn alloc_arc(&self, size: usize, kind: BufferKind) -> Result<Arc<AmMemory>> {
        alloc_on(&self.shared, size, kind)
    }
}

/// `size` bytes of `kind` memory of the GPU.
fn alloc_on(shared: &Arc<AmShared>, size: usize, kind: BufferKind) -> Result<Arc<AmMemory>> {
    // An allocator or the host out of room: the error the KFD transport gives.
    let name = match kind {
        BufferKind::Host => "host memory",
        BufferKind::Device => "VRAM",
        BufferKind::DeviceCpuVisible => "host-visible VRAM",
        BufferKind::Uncached => "uncached VRAM",
    };
    let oom = |e: amd_am::AmError| -> HcqError {
        match e {
            amd_am::AmError::OutOfMemory { .. } => amd_kfd::KfdError::OutOfMemory {
                size: size as u64,
                kind: name,
            }
            .into(),
            amd_am::AmError::Sys(s) if s.errno == nix::errno::Errno::ENOMEM => amd_kfd::KfdError::OutOfMemory {
                size: size as u64,
                kind: name,
            }
            .into(),
            e => e.into(),
        }
    };
    let shared = shared.clone();
    let too_big = || HcqError::BufferSize {
        size,
        max: isize::MAX as usize,
    };
    let size64 = u64::try_from(size)
        .ok()
        .and_then(|s| s.max(1).checked_next_multiple_of(4096))
        .ok_or_else(too_big)?;
    let (mapping, cpu) = match kind {
        BufferKind::Host => {
            let len = usize::try_from(size64).map_err(|_| too_big())?;
            let host = BarMapping::anonymous(shared.dev.pci().sys(), len).map_err(|e| oom(amd_am::AmError::from(e)))?;
            let mapping = shared
                .with(|b| b.gmc.map_host(host.addr() as u64, size64))
                .map_err(oom)?;
            (mapping, Cpu::Host(host))
        }
        BufferKind::Device => (
            shared.with(|b| b.gmc.valloc(size64, false, false)).map_err(oom)?,
            Cpu::None,
        ),
        BufferKind::DeviceCpuVisible | BufferKind::Uncached => {
            let uncached = kind == BufferKind::Uncached;
            let mapping = shared.with(|b| b.gmc.valloc(size64, true, uncached)).map_err(oom)?;
            let paddr = mapping.paddrs.first().map_or(0, |p| p.0);
            (mapping, Cpu::Vram(paddr))
        }
    };
    Ok(Arc::new(AmMemory {
        shared,
        mapping,
        cpu,
        peers: Mutex::new(Vec::new()),
    }))
}

impl DeviceInterface for AmIface {
    type Memory = Arc<AmMemory>;
    type Queue = AmQueue;

    fn props(&self) -> &DeviceProps {
        &self.props
    }
    fn alloc(&self, size: usize, kind: BufferKind) -> Result<Self::Memory> {
        self.alloc_arc(size, kind)
    }
    fn map(&self, mem: &Self::Memory) -> Result<()> {
        // tinygrad 0.10.1's `PCIIface.map`: the owner's pages at the same virtual
        // address, as system addresses (VRAM through the owner's BAR 0).
        if Arc::ptr_eq(&mem.shared, &self.shared) {
            return Ok(());
        }
        let mut peers = mem.peers.lock();
        if peers.iter().any(|p| Arc::ptr_eq(p, &self.shared)) {
            return Ok(());
        }
        let owner = mem.shared.device().pci();
        if !mem.shared.va.same(&self.shared.va) {
            // One-off: Device::map_peer refuses this as HcqError::OtherPlatform before
            // the transport sees it; here the GPUs have only their PCI addresses.
            return Err(HcqError::InvalidArgument(format!(
                "GPU {} and GPU {} were opened by different platforms (their virtual address spaces differ)",
                owner.address(),
                self.shared.dev.pci().address()
            )));
        }
        let m = &mem.mapping;
        // A GPU opens only when its BAR 0 shows the top of VRAM (where the discovery
        // table lies), so its VRAM is all behind BAR 0 and `PeerUnreachable` guards
        // the arithmetic on outside values rather than a state a test can reach.
        let paddrs = if m.flags.system {
            m.paddrs.clone()
        } else {
            let bar = owner
                .bar(0)
                .filter(|b| b.size > 0)
                .ok_or_else(|| HcqError::PeerUnreachable {
                    gpu: owner.address().to_string(),
                    paddr: m.paddrs.first().map_or(0, |p| p.0),
                    size: m.size,
                    bar_size: 0,
                })?;
            m.paddrs
                .iter()
                .map(|&(p, size)| {
                    p.checked_add(size)
                        .filter(|&end| end <= bar.size)
                        .and_then(|_| bar.start.checked_add(p))
                        .map(|a| (a, size))
                        .ok_or_else(|| HcqError::PeerUnreachable {
                            gpu: owner.address().to_string(),
                            paddr: p,
                            size,
                            bar_size: bar.size,
                        })
                })
                .collect::<Result<Vec<_>>>()?
        };
        let flags = amd_am::gmc::MapFlags {
            system: true,
            ..m.flags
        };
        self.shared.with(|b| b.gmc.map_range(m.va, &paddrs, flags))?;
        peers.push(self.shared.clone());
        Ok(())
    }
    fn create_queue(&self, sdma: bool, ring_size: usize) -> Result<Self::Queue> {
        let taken = if sdma {
            &self.shared.sdma_taken
        } else {
            &self.shared.compute_taken
        };
        // Acquire: pairs with the Release of the dropped queue that held the slot.
        if taken.swap(true, Ordering::Acquire) {
            return Err(HcqError::QueueInUse {
                engine: if sdma { "SDMA" } else { "compute" },
                gpu: self.shared.dev.pci().address().to_string(),
            });
        }
        let release = || taken.store(false, Ordering::Release);
        let made = (|| -> Result<AmQueue> {
            let ring = self.alloc_arc(ring_size, BufferKind::Uncached)?;
            let gart = self.alloc_arc(GART_SIZE, BufferKind::Uncached)?;
            let (doorbell, eop, mqd) = if sdma {
                let d = SdmaRingDesc {
                    ring: ring.va(),
                    ring_size: ring.size() as u64,
                    rptr: gart.va(),
                    wptr: gart.va() + 0x10,
                    doorbell: AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0,
                };
                self.shared.with(|b| b.sdma.setup_ring(&d))?;
                (AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0, None, None)
            } else {
                let eop = self.alloc_arc(EOP_SIZE, BufferKind::Device)?;
                let d = ComputeRingDesc {
                    ring: ring.va(),
                    ring_size: ring.size() as u64,
                    rptr: gart.va(),
                    wptr: gart.va() + 0x10,
                    eop: eop.va(),
                    eop_size: EOP_SIZE as u64,
                    doorbell: AMDGPU_NAVI10_DOORBELL_MEC_RING0,
                    pipe: 0,
                    queue: 0,
                };
                let ring = self.shared.with(|b| b.gfx.setup_ring(&mut b.gmc, &d))?;
                (AMDGPU_NAVI10_DOORBELL_MEC_RING0, Some(eop), Some(ring.mqd))
            };
            Ok(AmQueue {
                shared: self.shared.clone(),
                ring,
                gart,
                _eop: eop,
                mqd,
                doorbell,
                sdma,
            })
        })();
        if made.is_err() {
            release();
        }
        made
    }
    fn queue_event(&self) -> Option<(u64, u32)> {
        Some((self.mailbox.va(), SIGNAL_EVENT_ID))
    }
    fn sleep(&self, timeout_ms: u32) -> Result<bool> {
        let pci = self.shared.dev.pci();
        if pci.vfio().is_none() {
            std::thread::sleep(NAP.min(std::time::Duration::from_millis(u64::from(timeout_ms))));
            return Ok(false);
        }
        // The MSI eventfd, then the interrupt ring drained as tinygrad's
        // `interrupt_handler` does (fault vectors kept for the report).
        let n = pci.wait_interrupt(i32::try_from(timeout_ms).unwrap_or(i32::MAX))?;
        if n > 0 {
            self.hang_report();
        }
        Ok(n > 0)
    }
    fn hang_report(&self) -> Vec<String> {
        // Why rings stopped, where the system knows (an emulated GPU names the packet
        // or instruction; hardware says nothing here) — read before and after the
        // fault registers: the GMC latches a fault when the access is made, before its
        // ring stops, so a stop between the readings shows its fault in the registers
        // and its reason in the second reading, and one before them both in the first.
        let pci = self.shared.dev.pci();
        let address = pci.address().to_string();
        let mut stops = pci.sys().pci_stop_reasons(&address);
        let found = self.shared.with(|b| -> amd_am::Result<Vec<String>> {
            let mut lines = Vec::new();
            for hub in [Hub::Gc, Hub::Mm] {
                if let Some(f) = b.gmc.fault(hub)? {
                    lines.push(format!("MMU fault: {f}"));
                    b.gmc.clear_fault(hub)?;
                }
            }
            for e in b.ih.handle()?.entries {
                if let Some(f) = e.vm_fault() {
                    lines.push(format!(
                        "IH VM fault: {:?} hub, {} at {:#x} (client {:#x}, source {:#x})",
                        f.hub,
                        if f.write { "write" } else { "read" },
                        f.va,
                        e.client_id,
                        e.src_id
                    ));
                }
            }
            Ok(lines)
        });
        stops.extend(pci.sys().pci_stop_reasons(&address));
        let mut faults = self.shared.faults.lock();
        let mut lines = found.unwrap_or_else(|e| vec![format!("(no fault report: {e})")]);
        lines.extend(stops);
        for l in lines {
            if !faults.contains(&l) {
                faults.push(l);
            }
        }
        faults.clone()
    }
}

#[cfg(all(test, feature = "mock"))]
mod tests {
    use crate::iface::DeviceMemory;
    use crate::{BufferKind, HcqError, Platform};

    /// The driverless transport's 64-bit accesses (the signals') refuse an offset that
    /// is not a multiple of 8, naming it; an aligned one works.
    #[test]
    fn a_64_bit_access_at_an_unaligned_offset_is_refused() {
        let p = Platform::mock_pci(amd_mockgpu::MockConfig::pci(1)).unwrap();
        let dev = p.device(0).unwrap();
        for kind in [BufferKind::DeviceCpuVisible, BufferKind::Host] {
            let buf = dev.alloc(4096, kind).unwrap();
            let m = buf.memory();
            m.store_u64(8, 0x1234_5678_9abc_def0).unwrap();
            assert_eq!(m.load_u64(8).unwrap(), 0x1234_5678_9abc_def0);
            assert!(matches!(
                m.load_u64(12),
                Err(HcqError::Unaligned {
                    what: "64-bit load",
                    offset: 12,
                    align: 8
                })
            ));
            let e = m.store_u64(4, 1).unwrap_err();
            assert_eq!(
                e.to_string(),
                "unaligned 64-bit store at 0x4: the offset must be a multiple of 8"
            );
        }
    }
}
