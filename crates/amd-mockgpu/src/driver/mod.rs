//! The emulated KFD driver: its state and the ioctl handlers, with the kernel's
//! validation and errno values.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use amd_kfd::abi::*;
use nix::errno::Errno;
use parking_lot::{Mutex, RwLock};

pub(crate) mod bus;
pub mod drm;
mod engines;
pub(crate) mod profile;
pub(crate) mod uaccess;

use crate::engine::executor::{KernelExecutor, Rdna3Executor};
use crate::engine::{Engine, Engines, QueueExec, QueueStatus, WptrSource};
use crate::mem::ranges::RangeSet;
use crate::mem::sanitize::{Gone, Shadow};
use crate::mem::{AddressSpace, Mapped, MemoryFault, Vm};
use profile::GpuProfile;

/// First virtual file descriptor (far above real ones).
pub(crate) const FIRST_FD: i32 = 1 << 30;
/// First render minor (`/dev/dri/renderD128`).
pub(crate) const FIRST_RENDER_MINOR: u32 = 128;
pub use crate::engine::GPU_CLOCK_HZ;
/// First id of events that have no signal slot (as KFD: after the slot range).
const FIRST_NONSIGNAL_EVENT_ID: u32 = KFD_SIGNAL_EVENT_LIMIT;
/// Doorbell bytes per GPU (two pages).
pub(crate) const DOORBELL_PAGE_BYTES: u64 = 0x2000;

/// What an open virtual descriptor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FdKind {
    Kfd,
    Render(usize),
    /// A real descriptor opened for a read outside `/dev` and `/sys`.
    Host(i32),
    /// `resourceN` of a PCI device.
    PciBar {
        dev: usize,
        bar: usize,
        writable: bool,
    },
    /// `config` of a PCI device.
    PciConfig {
        dev: usize,
        writable: bool,
    },
    /// `/proc/self/pagemap`.
    Pagemap,
    /// `/dev/vfio/vfio`: a container.
    VfioContainer(u32),
    /// `/dev/vfio/noiommu-N`: a group.
    VfioGroup(u32),
    /// A VFIO device (of PCI device N).
    VfioDevice(usize),
}

#[derive(Debug, Clone)]
pub(crate) struct MemObj {
    pub(crate) va: u64,
    pub(crate) size: u64,
    pub(crate) flags: u32,
    pub(crate) gpu: usize,
    pub(crate) mmap_offset: u64,
    pub(crate) mapped_on: BTreeSet<usize>,
    /// Which bytes something wrote, where the sanitizer watches the buffer.
    pub(crate) shadow: Option<Arc<Shadow>>,
    /// The mock made the buffer's memory when it was mapped to a GPU, the process
    /// having mapped nothing there (GPU-only VRAM a client never maps, as ROCr's on a
    /// GPU without large BAR).
    pub(crate) backed: bool,
}

impl MemObj {
    /// What memory the buffer is, as messages name it.
    pub(crate) fn kind(&self) -> &'static str {
        let f = self.flags;
        if f & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
            if f & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0 {
                "host-visible VRAM"
            } else {
                "VRAM"
            }
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_GTT != 0 {
            "GTT"
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 {
            "host memory"
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL != 0 {
            "doorbell"
        } else {
            "MMIO remap"
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct EventState {
    pub(crate) kind: u32,
    pub(crate) auto_reset: bool,
    pub(crate) signaled: bool,
    pub(crate) slot: Option<u32>,
    pub(crate) data: kfd_event_data,
}

/// A queue as the driver registered it, for the hardware half to consume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueInfo {
    /// KFD queue id.
    pub id: u32,
    /// Index of the GPU in the mock.
    pub gpu: usize,
    /// `KFD_IOC_QUEUE_TYPE_*`
    pub queue_type: u32,
    /// Ring address.
    pub ring_base: u64,
    /// Ring bytes.
    pub ring_size: u32,
    /// Address of the read pointer the engine writes.
    pub read_ptr: u64,
    /// Address of the write pointer the runtime writes.
    pub write_ptr: u64,
    /// Address of the queue's doorbell, once the doorbell page is mapped.
    pub doorbell: Option<u64>,
    /// Doorbell slot index within the GPU's doorbell page.
    pub doorbell_index: u32,
    /// EOP buffer address and size.
    pub eop: (u64, u64),
    /// Context-save area address and size.
    pub ctx_save: (u64, u32),
    /// Control stack size.
    pub ctl_stack_size: u32,
    /// CU mask set with SET_CU_MASK (empty: all CUs).
    pub cu_mask: Vec<u32>,
    /// Queue percentage and priority.
    pub percentage_priority: (u32, u32),
    /// The SDMA engine and queue of an SDMA queue.
    pub sdma: Option<SdmaQueue>,
}

/// Where KFD placed an SDMA queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdmaQueue {
    /// An XGMI engine's queue.
    pub xgmi: bool,
    /// KFD's queue id among the PCIe (or XGMI) SDMA queues.
    pub sdma_id: u32,
    /// The engine (`sdma_engine_id`: XGMI engines count after the PCIe ones).
    pub engine: u32,
    /// The queue on its engine.
    pub queue: u32,
}

#[derive(Debug)]
pub(crate) struct GpuState {
    pub(crate) target: Option<amd_packets::GfxTarget>,
    pub(crate) profile: GpuProfile,
    pub(crate) gpu_id: u32,
    pub(crate) vram_used: u64,
    pub(crate) vm_fd: Option<i32>,
    pub(crate) doorbell_page: Option<u64>,
    /// Doorbell slots of live queues (KFD's doorbell bitmap: the lowest free slot is
    /// taken, and a destroyed queue's slot is free again).
    pub(crate) doorbells_used: BTreeSet<u32>,
    /// SDMA queues in use: (XGMI, KFD's SDMA queue id).
    pub(crate) sdma_used: BTreeSet<(bool, u32)>,
    pub(crate) last_fault: Option<MemoryFault>,
}

/// Faults to inject into the next calls.
#[derive(Debug, Default)]
pub(crate) struct Injections {
    /// Outcomes of the next allocations: `None` succeeds, `Some` fails with it.
    pub(crate) alloc: VecDeque<Option<Errno>>,
    /// Outcomes of the next queue creations, likewise.
    pub(crate) create_queue: VecDeque<Option<Errno>>,
}

pub(crate) struct Driver {
    /// The engines (their queues, the kernel executors, the long operations) and the
    /// address space they reach, which the driver changes holding its lock and the
    /// space's write lock.
    pub(crate) engines: Engines,
    /// An event fired since waiters were last woken.
    pub(crate) events_dirty: bool,
    pub(crate) shutdown: bool,
    pub(crate) gpus: Vec<GpuState>,
    pub(crate) cpu_node: bool,
    pub(crate) fds: BTreeMap<i32, FdKind>,
    pub(crate) next_fd: i32,
    pub(crate) handles: BTreeMap<u64, MemObj>,
    pub(crate) next_handle: u64,
    pub(crate) events: BTreeMap<u32, EventState>,
    pub(crate) free_slots: BTreeSet<u32>,
    pub(crate) next_nonsignal_id: u32,
    pub(crate) event_page: Option<(u64, u64)>,
    pub(crate) queues: BTreeMap<u32, QueueInfo>,
    pub(crate) next_queue_id: u32,
    pub(crate) host_maps: RangeSet,
    /// The PCI devices, VFIO and pagemap.
    pub(crate) pci: bus::PciBus,
    pub(crate) inject: Injections,
    /// `AMDKFD_IOC_RUNTIME_ENABLE` turned the debugger runtime on (its `r_debug` and
    /// trap-temporary setting concern a debugger, which the mock does not have).
    pub(crate) runtime_enabled: bool,
    /// Where stopped queues are reported as the kernel's log would ([`MockConfig::kernel_log`]).
    ///
    /// [`MockConfig::kernel_log`]: crate::MockConfig::kernel_log
    pub(crate) kernel_log: Option<fn(&str)>,
    /// The sanitizer is on ([`MockConfig::sanitize`]).
    ///
    /// [`MockConfig::sanitize`]: crate::MockConfig::sanitize
    pub(crate) sanitize: bool,
    /// The sanitizer's guard gaps: where each starts (the end of the reservation
    /// before it), and its length.
    pub(crate) guards: BTreeMap<usize, usize>,
    /// The sanitizer's quarantine of address space the client unmapped.
    pub(crate) quarantine: crate::mem::sanitize::Quarantine,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("gpus", &self.gpus.len())
            .field("handles", &self.handles.len())
            .field("queues", &self.queues.len())
            .field("events", &self.events.len())
            .finish_non_exhaustive()
    }
}

type R<T> = Result<T, Errno>;

/// The GPU's XCCs (`num_xcc`, 1 where absent or 0); `None` where it does not fit
/// 32 bits.
fn xcc_count(p: &GpuProfile) -> Option<u32> {
    Some(p.prop("num_xcc").map_or(Some(1), |v| u32::try_from(v).ok())?.max(1))
}

/// The expected control-stack and CWSR sizes for a GPU, as `kfd_queue.c` computes them
/// (in 32 bits); `None` (the ioctl fails with EINVAL) where a property is missing or a
/// size overflows 32 bits.
fn cwsr_expectations(p: &GpuProfile) -> Option<(u32, u32, u32)> {
    let prop32 = |key: &str| p.prop(key).and_then(|v| u32::try_from(v).ok());
    let gfxv = prop32("gfx_target_version")?;
    let xcc = xcc_count(p)?;
    let cu = prop32("simd_count")? / prop32("simd_per_cu")?.max(1) / xcc;
    // Before gfx10.1 (NAVI10): at most 40 waves per CU and 512 per shader engine,
    // 8 control-stack bytes per wave; 32 and 12 after.
    let (wave_num, per_wave) = if gfxv < 100100 {
        let engines = prop32("array_count")? / prop32("simd_arrays_per_engine")?.max(1);
        (cu.checked_mul(40)?.min(engines.checked_mul(512)?), 8)
    } else {
        (cu.checked_mul(32)?, 12)
    };
    let vgpr: u32 = match gfxv {
        // Aqua Vanjaram (gfx9.4.2), Aldebaran, Arcturus.
        90402 | 90010 | 90008 => 0x80000,
        110000 | 110001 | 110501 | 120000 | 120001 => 0x60000,
        _ => 0x40000,
    };
    let wg = (vgpr + 0x4000 + 0x10000 + 0x1000)
        .checked_mul(cu)?
        .checked_next_multiple_of(4096)?;
    let ctl = wave_num
        .checked_mul(per_wave)?
        .checked_add(40 + 8)?
        .checked_next_multiple_of(4096)?;
    let debug = wave_num.checked_mul(32)?.checked_next_multiple_of(64)?;
    Some((ctl, ctl.checked_add(wg)?, debug))
}

impl Driver {
    /// Bytes of a queue's context-save area on GPU `g` (node order), as the clients
    /// allocate it: the CWSR size and the debugger's area, in whole pages.
    pub(crate) fn context_save_bytes(&self, g: usize) -> Option<u64> {
        let p = &self.gpus.get(g)?.profile;
        let (_, cwsr, debug) = cwsr_expectations(p)?;
        Some(((u64::from(cwsr) + u64::from(debug)) * u64::from(xcc_count(p)?)).next_multiple_of(4096))
    }

    pub(crate) fn new(profiles: Vec<GpuProfile>, cpu_node: bool) -> Self {
        let gpus = profiles
            .into_iter()
            .enumerate()
            .map(|(i, profile)| GpuState {
                target: profile
                    .prop("gfx_target_version")
                    .and_then(|v| u32::try_from(v).ok())
                    .and_then(|v| amd_packets::GfxTarget::from_version(v).ok()),
                profile,
                // KFD's ids look like hashes; distinct and non-zero is what matters.
                gpu_id: 0xb5e0 + 0x11 * i as u32,
                vram_used: 0,
                vm_fd: None,
                doorbell_page: None,
                doorbells_used: BTreeSet::new(),
                sdma_used: BTreeSet::new(),
                last_fault: None,
            })
            .collect::<Vec<_>>();
        let n = gpus.len();
        let space = Arc::new(RwLock::new(AddressSpace::new(n)));
        let kernels = (0..n)
            .map(|_| {
                let exec: Box<dyn KernelExecutor> = Box::new(Rdna3Executor::default());
                Arc::new(Mutex::new(exec))
            })
            .collect();
        Driver {
            engines: Engines::new(space, kernels, n),
            events_dirty: false,
            shutdown: false,
            gpus,
            cpu_node,
            fds: BTreeMap::new(),
            next_fd: FIRST_FD,
            handles: BTreeMap::new(),
            next_handle: 1,
            events: BTreeMap::new(),
            free_slots: (0..KFD_SIGNAL_EVENT_LIMIT).collect(),
            next_nonsignal_id: FIRST_NONSIGNAL_EVENT_ID,
            event_page: None,
            queues: BTreeMap::new(),
            next_queue_id: 1,
            host_maps: RangeSet::default(),
            pci: Default::default(),
            inject: Injections::default(),
            runtime_enabled: false,
            kernel_log: None,
            sanitize: false,
            guards: BTreeMap::new(),
            quarantine: Default::default(),
        }
    }

    pub(crate) fn gpu_index(&self, gpu_id: u32) -> R<usize> {
        self.gpus.iter().position(|g| g.gpu_id == gpu_id).ok_or(Errno::EINVAL)
    }

    /// The GPU with a VM acquired (what most ioctls require).
    fn gpu_with_vm(&self, gpu_id: u32) -> R<usize> {
        let i = self.gpu_index(gpu_id)?;
        if self.gpus[i].vm_fd.is_none() {
            return Err(Errno::EINVAL);
        }
        Ok(i)
    }

    pub(crate) fn alloc_fd(&mut self, kind: FdKind) -> i32 {
        let fd = self.next_fd;
        self.next_fd += 1;
        self.fds.insert(fd, kind);
        fd
    }

    /// The `/dev/kfd` mmap offset of GPU `gpu_id`'s MMIO remap page, as KFD encodes it
    /// (`KFD_MMAP_TYPE_MMIO` is 0 in bits 63:62; the id in bits 61:46).
    pub(crate) fn mmio_remap_offset(gpu_id: u32) -> u64 {
        u64::from(gpu_id & 0xffff) << 46
    }

    /// The mmap offset of a doorbell page of GPU `gpu`.
    pub(crate) fn doorbell_base(gpu: usize) -> u64 {
        (gpu as u64 + 1) << 32
    }

    pub(crate) fn gpu_clock(&self) -> u64 {
        self.engines.gpu_clock()
    }

    pub(crate) fn acquire_vm(&mut self, a: &mut kfd_ioctl_acquire_vm_args) -> R<()> {
        let i = self.gpu_index(a.gpu_id)?;
        let fd = a.drm_fd as i32;
        match self.fds.get(&fd) {
            Some(FdKind::Render(g)) if *g == i => {}
            Some(_) => return Err(Errno::EINVAL),
            None => return Err(Errno::EBADF),
        }
        match self.gpus[i].vm_fd {
            Some(existing) if existing != fd => Err(Errno::EBUSY),
            _ => {
                self.gpus[i].vm_fd = Some(fd);
                Ok(())
            }
        }
    }

    /// `kfd_ioctl_runtime_enable` (`kfd_chardev.c`): enabling twice is EBUSY, and
    /// with a queue already made EEXIST; disabling always succeeds (tinygrad 0.14
    /// calls it with `mode_mask` 0 at open). The kernel writes no capabilities.
    pub(crate) fn runtime_enable(&mut self, a: &mut kfd_ioctl_runtime_enable_args) -> R<()> {
        if a.mode_mask & KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK == 0 {
            self.runtime_enabled = false;
            return Ok(());
        }
        if self.runtime_enabled {
            return Err(Errno::EBUSY);
        }
        if !self.queues.is_empty() {
            return Err(Errno::EEXIST);
        }
        self.runtime_enabled = true;
        Ok(())
    }

    pub(crate) fn alloc_memory(&mut self, a: &mut kfd_ioctl_alloc_memory_of_gpu_args) -> R<()> {
        let i = self.gpu_with_vm(a.gpu_id)?;
        // The kernel rounds a buffer up to whole pages (tinygrad 0.10.1 asks for 16
        // bytes); the address must be page-aligned.
        let size = a.size.checked_next_multiple_of(4096).ok_or(Errno::EINVAL)?;
        if size == 0 || a.va_addr % 4096 != 0 || a.va_addr.checked_add(size).is_none() {
            return Err(Errno::EINVAL);
        }
        let domains = KFD_IOC_ALLOC_MEM_FLAGS_VRAM
            | KFD_IOC_ALLOC_MEM_FLAGS_GTT
            | KFD_IOC_ALLOC_MEM_FLAGS_USERPTR
            | KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL
            | KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP;
        if (a.flags & domains).count_ones() != 1 {
            return Err(Errno::EINVAL);
        }
        if let Some(Some(e)) = self.inject.alloc.pop_front() {
            return Err(e);
        }
        let gpu = &mut self.gpus[i];
        let vram = a.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0;
        if vram && a.flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0 && !gpu.profile.large_bar {
            return Err(Errno::EINVAL);
        }
        if vram {
            if gpu.vram_used + size > gpu.profile.vram_size {
                return Err(Errno::ENOMEM);
            }
            gpu.vram_used += size;
        }
        let userptr = a.flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0;
        if userptr && a.mmap_offset != a.va_addr {
            return Err(Errno::EINVAL);
        }
        // The sanitizer watches VRAM the CPU is not meant to touch (its stores into the
        // rest are invisible here): it starts unwritten.
        let shadow = if self.sanitize && vram && a.flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC == 0 {
            Some(Arc::new(Shadow::new(size).ok_or(Errno::ENOMEM)?))
        } else {
            None
        };
        let handle = self.next_handle;
        self.next_handle += 1;
        // Render-node mmap offsets: one page-aligned window per handle. The MMIO
        // remap page (HDP flush) is mapped through /dev/kfd, at KFD's offset for it.
        let mmap_offset = if userptr {
            a.mmap_offset
        } else if a.flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP != 0 {
            Self::mmio_remap_offset(gpu.gpu_id)
        } else {
            handle << 24
        };
        self.handles.insert(
            handle,
            MemObj {
                va: a.va_addr,
                size,
                flags: a.flags,
                gpu: i,
                mmap_offset,
                mapped_on: BTreeSet::new(),
                shadow,
                backed: false,
            },
        );
        a.handle = handle;
        a.mmap_offset = mmap_offset;
        Ok(())
    }

    pub(crate) fn free_memory(&mut self, a: &kfd_ioctl_free_memory_of_gpu_args) -> R<()> {
        let obj = self.handles.get(&a.handle).ok_or(Errno::EINVAL)?;
        if !obj.mapped_on.is_empty() {
            return Err(Errno::EBUSY);
        }
        let obj = self.handles.remove(&a.handle).ok_or(Errno::EINVAL)?;
        let mut space = self.engines.space.write();
        for gpu in 0..self.gpus.len() {
            space.gone.push(Gone {
                gpu,
                va: obj.va,
                size: obj.size,
                kind: obj.kind(),
                freed: true,
            });
        }
        drop(space);
        if obj.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
            let g = &mut self.gpus[obj.gpu];
            g.vram_used = g.vram_used.saturating_sub(obj.size);
        }
        if self.event_page.is_some_and(|(va, _)| va == obj.va) {
            self.event_page = None;
        }
        Ok(())
    }

    /// Maps (or unmaps) `handle` on the GPUs in `ids`, from `n_success` on; returns
    /// the new `n_success`.
    pub(crate) fn map_memory(&mut self, handle: u64, ids: &[u32], n_success: u32, map: bool) -> (u32, R<()>) {
        let mut done = n_success;
        for &id in ids.iter().skip(n_success as usize) {
            let r = (|| {
                let g = self.gpu_with_vm(id)?;
                let obj = self.handles.get_mut(&handle).ok_or(Errno::EINVAL)?;
                // Exclusive: no engine is between a check and its access meanwhile.
                let mut space = self.engines.space.write();
                let gpu = space.gpus.get_mut(g).ok_or(Errno::EINVAL)?;
                if map {
                    obj.mapped_on.insert(g);
                    let writable = obj.flags & KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE != 0;
                    gpu.mapped.insert(
                        obj.va,
                        Mapped {
                            size: obj.size,
                            writable,
                            kind: obj.kind(),
                            shadow: obj.shadow.clone(),
                        },
                    );
                } else {
                    if !obj.mapped_on.remove(&g) {
                        return Err(Errno::EINVAL);
                    }
                    gpu.mapped.remove(&obj.va);
                    space.gone.push(Gone {
                        gpu: g,
                        va: obj.va,
                        size: obj.size,
                        kind: obj.kind(),
                        freed: false,
                    });
                }
                Ok(())
            })();
            if let Err(e) = r {
                return (done, Err(e));
            }
            done += 1;
        }
        (done, Ok(()))
    }

    pub(crate) fn create_event(&mut self, a: &mut kfd_ioctl_create_event_args) -> R<()> {
        if a.event_page_offset != 0 && self.event_page.is_none() {
            let obj = self.handles.get(&a.event_page_offset).ok_or(Errno::EINVAL)?;
            if obj.size < KFD_SIGNAL_EVENT_LIMIT as u64 * 8 {
                return Err(Errno::EINVAL);
            }
            self.event_page = Some((obj.va, obj.size));
        }
        let signal = matches!(a.event_type, KFD_IOC_EVENT_SIGNAL | KFD_IOC_EVENT_DEBUG_EVENT);
        let known = a.event_type <= KFD_IOC_EVENT_MEMORY;
        if !known {
            return Err(Errno::EINVAL);
        }
        let (id, slot) = if signal {
            let slot = self.free_slots.pop_first().ok_or(Errno::ENOSPC)?;
            (slot, Some(slot))
        } else {
            let id = self.next_nonsignal_id;
            self.next_nonsignal_id = self.next_nonsignal_id.checked_add(1).ok_or(Errno::ENOSPC)?;
            (id, None)
        };
        if let (Some(slot), Some((va, _))) = (slot, self.event_page) {
            // KFD marks a fresh slot unsignalled (all ones); the GPU writes the event
            // id there before raising the interrupt.
            self.host_store_u64(va + slot as u64 * 8, u64::MAX);
        }
        self.events.insert(
            id,
            EventState {
                kind: a.event_type,
                auto_reset: a.auto_reset != 0,
                signaled: false,
                slot,
                data: kfd_event_data::for_event(id),
            },
        );
        a.event_id = id;
        a.event_slot_index = slot.unwrap_or(0);
        a.event_trigger_data = id;
        a.event_page_offset = if signal { 1 << 40 } else { 0 };
        Ok(())
    }

    pub(crate) fn destroy_event(&mut self, id: u32) -> R<()> {
        let ev = self.events.remove(&id).ok_or(Errno::EINVAL)?;
        if let Some(s) = ev.slot {
            self.free_slots.insert(s);
        }
        Ok(())
    }

    pub(crate) fn set_event(&mut self, id: u32, signaled: bool) -> R<()> {
        let ev = self.events.get_mut(&id).ok_or(Errno::EINVAL)?;
        ev.signaled = signaled;
        Ok(())
    }

    /// Records a memory fault on GPU `gpu` and fires every memory event.
    pub(crate) fn memory_fault(&mut self, gpu: usize, f: MemoryFault) {
        let Some(g) = self.gpus.get_mut(gpu) else { return };
        g.last_fault = Some(f);
        let gpu_id = g.gpu_id;
        for ev in self.events.values_mut().filter(|e| e.kind == KFD_IOC_EVENT_MEMORY) {
            ev.data.memory_exception_data = kfd_hsa_memory_exception_data {
                failure: kfd_memory_exception_failure {
                    NotPresent: f.not_present as u32,
                    ReadOnly: f.read_only as u32,
                    NoExecute: f.no_execute as u32,
                    imprecise: f.imprecise as u32,
                },
                va: f.va,
                gpu_id,
                ErrorType: KFD_MEM_ERR_NO_RAS,
            };
            ev.signaled = true;
        }
    }

    /// Fires every hardware-exception event for GPU `gpu`.
    pub(crate) fn hw_exception(&mut self, gpu: usize, reset_cause: u32) {
        let Some(g) = self.gpus.get(gpu) else { return };
        let gpu_id = g.gpu_id;
        for ev in self
            .events
            .values_mut()
            .filter(|e| e.kind == KFD_IOC_EVENT_HW_EXCEPTION)
        {
            ev.data.set_hw_exception_data(kfd_hsa_hw_exception_data {
                reset_type: KFD_HW_EXCEPTION_WHOLE_GPU_RESET,
                reset_cause,
                // kfd_signal_reset_event: a whole-GPU reset loses VRAM.
                memory_lost: 1,
                gpu_id,
            });
            ev.signaled = true;
        }
    }

    /// Checks the events of a wait; `Ok(true)` if the wait is satisfied. Fills in the
    /// entries' data and consumes auto-reset signals when it is.
    pub(crate) fn poll_events(&mut self, entries: &mut [kfd_event_data], wait_all: bool) -> R<bool> {
        let mut fired = Vec::with_capacity(entries.len());
        for e in entries.iter() {
            let ev = self.events.get(&e.event_id).ok_or(Errno::EINVAL)?;
            fired.push(ev.signaled);
        }
        let done = if wait_all {
            fired.iter().all(|&f| f)
        } else {
            fired.iter().any(|&f| f)
        };
        if done {
            for (e, &f) in entries.iter_mut().zip(&fired) {
                let Some(ev) = self.events.get_mut(&e.event_id) else {
                    continue;
                };
                if f {
                    let id = e.event_id;
                    *e = ev.data;
                    e.event_id = id;
                    if ev.auto_reset || ev.kind != KFD_IOC_EVENT_SIGNAL {
                        ev.signaled = false;
                    }
                }
            }
        }
        Ok(done)
    }

    pub(crate) fn create_queue(&mut self, a: &mut kfd_ioctl_create_queue_args) -> R<()> {
        let g = self.gpu_with_vm(a.gpu_id)?;
        if let Some(Some(e)) = self.inject.create_queue.pop_front() {
            return Err(e);
        }
        if a.queue_percentage > KFD_MAX_QUEUE_PERCENTAGE || a.queue_priority > KFD_MAX_QUEUE_PRIORITY {
            return Err(Errno::EINVAL);
        }
        if a.ring_size != 0 && !a.ring_size.is_power_of_two() {
            return Err(Errno::EINVAL);
        }
        if a.ring_base_address % 256 != 0 {
            return Err(Errno::EINVAL);
        }
        let compute = matches!(
            a.queue_type,
            KFD_IOC_QUEUE_TYPE_COMPUTE | KFD_IOC_QUEUE_TYPE_COMPUTE_AQL
        );
        match a.queue_type {
            KFD_IOC_QUEUE_TYPE_COMPUTE
            | KFD_IOC_QUEUE_TYPE_COMPUTE_AQL
            | KFD_IOC_QUEUE_TYPE_SDMA
            | KFD_IOC_QUEUE_TYPE_SDMA_XGMI
            | KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID => {}
            _ => return Err(Errno::EINVAL),
        }
        if a.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID {
            // kfd_ioctl_create_queue: an engine past the PCIe and XGMI ones.
            let (pcie, xgmi, _) = Self::sdma_layout(&self.gpus[g].profile);
            if a.sdma_engine_id >= pcie + xgmi {
                return Err(Errno::EINVAL);
            }
        }
        // kfd_queue_acquire_buffers: the ring and both pointers must be mapped buffers.
        let mapped = |addr: u64, len: u64| self.gpu_mapped(g, addr, len);
        if !mapped(a.write_pointer_address, 8) || !mapped(a.read_pointer_address, 8) {
            return Err(Errno::EINVAL);
        }
        if !mapped(a.ring_base_address, a.ring_size as u64) {
            return Err(Errno::EINVAL);
        }
        if compute {
            let (ctl, cwsr, debug) = cwsr_expectations(&self.gpus[g].profile).ok_or(Errno::EINVAL)?;
            if a.eop_buffer_address != 0
                && (a.eop_buffer_size < 4096 || !mapped(a.eop_buffer_address, a.eop_buffer_size))
            {
                return Err(Errno::EINVAL);
            }
            if a.ctl_stack_size != ctl || a.ctx_save_restore_size < cwsr {
                return Err(Errno::EINVAL);
            }
            // One save area per XCC (`kfd_queue_acquire_buffers`).
            let xccs = xcc_count(&self.gpus[g].profile).ok_or(Errno::EINVAL)?;
            let total = ((a.ctx_save_restore_size as u64 + debug as u64) * u64::from(xccs)).next_multiple_of(4096);
            if !mapped(a.ctx_save_restore_address, total) {
                return Err(Errno::EINVAL);
            }
        }
        let target = self.gpus[g].target.ok_or(Errno::EINVAL)?;
        if a.ring_size < 1024 {
            return Err(Errno::EINVAL);
        }
        let sdma = if compute {
            None
        } else {
            Some(self.allocate_sdma_queue(g, a.queue_type, a.sdma_engine_id)?)
        };
        let gpu = &mut self.gpus[g];
        let slots = (DOORBELL_PAGE_BYTES / 8) as u32;
        let index = (0..slots)
            .find(|i| !gpu.doorbells_used.contains(i))
            .ok_or(Errno::ENOSPC)?;
        gpu.doorbells_used.insert(index);
        if let Some(q) = sdma {
            gpu.sdma_used.insert((q.xgmi, q.sdma_id));
        }
        let doorbell_page = gpu.doorbell_page;
        let id = self.next_queue_id;
        self.next_queue_id += 1;
        a.queue_id = id;
        a.doorbell_offset = Self::doorbell_base(g) + index as u64 * 8;
        let engine = match a.queue_type {
            _ if sdma.is_some() => Engine::Sdma,
            KFD_IOC_QUEUE_TYPE_COMPUTE_AQL => Engine::Aql,
            _ => Engine::Pm4,
        };
        // The engine starts at the read pointer the queue was created with.
        let start = self.gpu_load_u64(g, a.read_pointer_address).unwrap_or(0);
        let rptr = match engine {
            Engine::Pm4 => start,
            Engine::Sdma => start / 4,
            // An AQL read pointer counts packets of 16 dwords.
            Engine::Aql => start.checked_mul(16).ok_or(Errno::EINVAL)?,
        };
        self.engines.execs.insert(
            id,
            QueueExec {
                id,
                gpu: g,
                engine,
                target,
                ring_base: a.ring_base_address,
                ring_dwords: a.ring_size as u64 / 4,
                rptr_addr: Some(a.read_pointer_address),
                wptr: WptrSource::Memory(a.write_pointer_address),
                vm: Vm::Kfd(g),
                port: None,
                ring_id: 0,
                rptr,
                regs: BTreeMap::new(),
                ib: Vec::new(),
                ib_ring_len: 0,
                status: QueueStatus::Running,
                counters: Default::default(),
                hung: false,
                delay: std::time::Duration::ZERO,
                not_before: None,
                in_flight: None,
                stop_reason: None,
                aql: None,
            },
        );
        self.queues.insert(
            id,
            QueueInfo {
                id,
                gpu: g,
                queue_type: match sdma {
                    Some(q) if q.xgmi => KFD_IOC_QUEUE_TYPE_SDMA_XGMI,
                    Some(_) => KFD_IOC_QUEUE_TYPE_SDMA,
                    None => a.queue_type,
                },
                sdma,
                ring_base: a.ring_base_address,
                ring_size: a.ring_size,
                read_ptr: a.read_pointer_address,
                write_ptr: a.write_pointer_address,
                doorbell: doorbell_page.map(|p| p + index as u64 * 8),
                doorbell_index: index,
                eop: (a.eop_buffer_address, a.eop_buffer_size),
                ctx_save: (a.ctx_save_restore_address, a.ctx_save_restore_size),
                ctl_stack_size: a.ctl_stack_size,
                cu_mask: Vec::new(),
                percentage_priority: (a.queue_percentage, a.queue_priority),
            },
        );
        self.init_aql_doorbells(g);
        Ok(())
    }

    /// Sets the doorbell slots of GPU `g`'s AQL queues to `u64::MAX`, "nothing
    /// published": an AQL client rings with the index of its last packet, 0 for the
    /// first, and a doorbell store that leaves the slot's value as it was is one a
    /// watcher of the page (the interposer's, for clients that store doorbells
    /// plainly) cannot see. Real doorbells are writes, not values; this only makes
    /// the first one a change.
    pub(crate) fn init_aql_doorbells(&self, g: usize) {
        for q in self.queues.values() {
            if let (true, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, Some(db)) = (q.gpu == g, q.queue_type, q.doorbell) {
                self.host_store_u64(db, u64::MAX);
            }
        }
    }

    /// DESTROY_QUEUE's bookkeeping: forgets the queue and frees its doorbell slot.
    /// Whether queue `id` has a long operation running.
    pub(crate) fn is_running(&self, id: u32) -> bool {
        self.engines.running.values().any(|(qid, _)| *qid == id)
    }

    pub(crate) fn destroy_queue(&mut self, id: u32) -> R<()> {
        let q = self.queues.remove(&id).ok_or(Errno::EINVAL)?;
        self.engines.execs.remove(&id);
        // A long operation of the queue stops at its next slice; the ioctl waits
        // for that (as KFD waits for the queue's preemption).
        for (qid, stop) in self.engines.running.values() {
            if *qid == id {
                // Release: pairs with the engine's Acquire load between slices.
                stop.store(true, Ordering::Release);
            }
        }
        if let Some(g) = self.gpus.get_mut(q.gpu) {
            g.doorbells_used.remove(&q.doorbell_index);
            if let Some(s) = q.sdma {
                g.sdma_used.remove(&(s.xgmi, s.sdma_id));
            }
        }
        Ok(())
    }

    /// The GPU's SDMA engines as its topology gives them: PCIe engines, XGMI
    /// engines, queues per engine.
    fn sdma_layout(profile: &GpuProfile) -> (u32, u32, u32) {
        let prop = |k| profile.prop(k).and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
        (
            prop("num_sdma_engines"),
            prop("num_sdma_xgmi_engines"),
            prop("num_sdma_queues_per_engine"),
        )
    }

    /// `allocate_sdma_queue` (`kfd_device_queue_manager.c`): a plain SDMA (or XGMI)
    /// queue takes the lowest free queue id, its engine the id modulo the engine
    /// count; a queue for a chosen engine (interface 1.17) takes the lowest free id
    /// on that engine. None free is ENOMEM.
    fn allocate_sdma_queue(&self, g: usize, queue_type: u32, engine_id: u32) -> R<SdmaQueue> {
        let (pcie, xgmi_engines, per_engine) = Self::sdma_layout(&self.gpus[g].profile);
        let used = &self.gpus[g].sdma_used;
        let (xgmi, engines, first) = match queue_type {
            KFD_IOC_QUEUE_TYPE_SDMA => (false, pcie, None),
            KFD_IOC_QUEUE_TYPE_SDMA_XGMI => (true, xgmi_engines, None),
            _ if engine_id < pcie => (false, pcie, Some(engine_id)),
            _ => (true, xgmi_engines, Some(engine_id - pcie)),
        };
        if engines == 0 {
            return Err(Errno::ENOMEM);
        }
        let step = if first.is_some() { engines } else { 1 };
        let sdma_id = (first.unwrap_or(0)..engines.saturating_mul(per_engine))
            .step_by(step as usize)
            .find(|i| !used.contains(&(xgmi, *i)))
            .ok_or(Errno::ENOMEM)?;
        let engine = sdma_id % engines;
        Ok(SdmaQueue {
            xgmi,
            sdma_id,
            engine: if xgmi { pcie + engine } else { engine },
            queue: sdma_id / engines,
        })
    }

    pub(crate) fn update_queue(&mut self, a: &kfd_ioctl_update_queue_args) -> R<()> {
        if a.queue_percentage > KFD_MAX_QUEUE_PERCENTAGE || a.queue_priority > KFD_MAX_QUEUE_PRIORITY {
            return Err(Errno::EINVAL);
        }
        if a.ring_size != 0 && !a.ring_size.is_power_of_two() {
            return Err(Errno::EINVAL);
        }
        let q = self.queues.get_mut(&a.queue_id).ok_or(Errno::EINVAL)?;
        q.ring_base = a.ring_base_address;
        q.ring_size = a.ring_size;
        if let Some(e) = self.engines.execs.get_mut(&a.queue_id) {
            e.ring_base = a.ring_base_address;
            e.ring_dwords = a.ring_size as u64 / 4;
        }
        q.percentage_priority = (a.queue_percentage, a.queue_priority);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwsr_expectations_refuse_sizes_past_32_bits() {
        let g = GpuProfile::gfx1100();
        let (ctl, cwsr, debug) = cwsr_expectations(&g).unwrap();
        assert_eq!((ctl, debug), (0xa000, 96 * 32 * 32));
        assert_eq!(cwsr, ctl + (0x75000 * 96u32).next_multiple_of(4096));
        for (key, value) in [
            ("simd_count", u32::MAX as u64),
            ("simd_count", u64::MAX),
            ("simd_count", 9000 * 2),
            ("gfx_target_version", u64::MAX),
            ("num_xcc", u64::MAX),
            ("simd_per_cu", u32::MAX as u64 + 1),
        ] {
            assert_eq!(
                cwsr_expectations(&g.clone().with_prop(key, value)),
                None,
                "{key} {value}"
            );
        }
        // The target is not the low 32 bits of an oversized version.
        let d = Driver::new(vec![g.with_prop("gfx_target_version", (1 << 32) + 110000)], true);
        assert_eq!(d.gpus[0].target, None);
    }
}
