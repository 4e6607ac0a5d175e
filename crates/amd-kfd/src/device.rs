//! The process-wide KFD handle ([`Kfd`]) and one GPU opened through it ([`KfdDevice`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use amd_packets::GfxTarget;
use parking_lot::Mutex;
use zerocopy::{FromBytes, IntoBytes};

use crate::abi::*;
use crate::memory::{KfdMemory, MemoryKind};
use crate::process::{DeviceShared, ProcessShared};
use crate::queue::{KfdQueue, QueueKind};
use crate::sys::{OpenMode, Sys};
use crate::topology::{GpuNode, TOPOLOGY_NODES, Visibility, discover};

use crate::{KfdError, Result, raw};

/// `/dev/kfd`.
pub const KFD_PATH: &str = "/dev/kfd";

/// Most GPU apertures [`Kfd::apertures`] accepts from the driver.
const MAX_APERTURES: u32 = 1024;

/// Size of the shared event page (tinygrad 0.10.1's 0x8000: 4096 8-byte slots).
pub const EVENT_PAGE_SIZE: usize = 0x8000;

/// The process's KFD handle: `/dev/kfd`, opened once and shared by every device, and
/// the list of visible GPUs.
#[derive(Debug, Clone)]
pub struct Kfd {
    shared: Arc<ProcessShared>,
    /// The event page every device of the process shares, while one holds it.
    event_page: Arc<Mutex<Weak<KfdMemory>>>,
}

impl Kfd {
    /// Opens `/dev/kfd` through `sys`, checks the interface version and discovers the
    /// GPUs, selected by `VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES` from the environment.
    pub fn open(sys: Arc<dyn Sys>) -> Result<Self> {
        Self::open_with(sys, &Visibility::from_env())
    }

    /// As [`Kfd::open`], with the visible GPUs given explicitly.
    pub fn open_with(sys: Arc<dyn Sys>, vis: &Visibility) -> Result<Self> {
        let kfd_fd = sys.open(Path::new(KFD_PATH), OpenMode::ReadWrite)?;
        let shared = Arc::new(ProcessShared {
            sys,
            kfd_fd,
            gpus: Vec::new(),
            deferred: Mutex::new(Vec::new()),
        });
        let mut v = kfd_ioctl_get_version_args::default();
        shared.ioctl(AMDKFD_IOC_GET_VERSION, &mut v)?;
        if v.major_version != KFD_IOCTL_MAJOR_VERSION {
            return Err(KfdError::Version {
                major: v.major_version,
                minor: v.minor_version,
            });
        }
        let gpus = discover(shared.sys.as_ref(), Path::new(TOPOLOGY_NODES), vis)?;
        // No device exists yet, so this is the only reference.
        let mut shared = shared;
        match Arc::get_mut(&mut shared) {
            Some(s) => s.gpus = gpus,
            None => return Err(KfdError::BadReply("KFD handle shared before it was built".into())),
        }
        Ok(Kfd {
            shared,
            event_page: Arc::new(Mutex::new(Weak::new())),
        })
    }

    /// The visible GPUs, in order.
    pub fn gpus(&self) -> &[GpuNode] {
        &self.shared.gpus
    }

    /// The system call layer.
    pub fn sys(&self) -> &Arc<dyn Sys> {
        &self.shared.sys
    }

    /// Errors from releases that happened in `Drop` (unmap, free, destroy), drained.
    pub fn take_deferred_errors(&self) -> Vec<KfdError> {
        std::mem::take(&mut *self.shared.deferred.lock())
    }

    /// Apertures of every GPU of the process (`AMDKFD_IOC_GET_PROCESS_APERTURES_NEW`).
    pub fn apertures(&self) -> Result<Vec<kfd_process_device_apertures>> {
        let (sys, fd) = (self.shared.sys.as_ref(), self.shared.kfd_fd);
        let n = raw::process_apertures(sys, fd, &mut [])?;
        // KFD drives at most a few dozen GPUs; a larger count is not an allocation
        // to make.
        if n > MAX_APERTURES {
            return Err(KfdError::BadReply(format!("{n} GPU apertures")));
        }
        let mut out = vec![kfd_process_device_apertures::default(); n as usize];
        let filled = raw::process_apertures(sys, fd, &mut out)?;
        out.truncate(filled as usize);
        Ok(out)
    }

    /// Opens visible GPU `index`.
    pub fn device(&self, index: usize) -> Result<KfdDevice> {
        KfdDevice::open(self, index)
    }
}

/// A KFD event owned by a device; destroyed on drop.
#[derive(Debug)]
pub struct KfdEvent {
    process: Arc<ProcessShared>,
    /// KFD's event id.
    pub id: u32,
    /// The event's 8-byte slot in the event page (signal events).
    pub slot: u32,
    /// `KFD_IOC_EVENT_*`
    pub kind: u32,
}

impl KfdEvent {
    fn create(process: &Arc<ProcessShared>, kind: u32, auto_reset: bool, event_page: Option<u64>) -> Result<Self> {
        let mut a = kfd_ioctl_create_event_args {
            event_page_offset: event_page.unwrap_or(0),
            event_type: kind,
            auto_reset: auto_reset as u32,
            ..Default::default()
        };
        process.ioctl(AMDKFD_IOC_CREATE_EVENT, &mut a)?;
        Ok(KfdEvent {
            process: process.clone(),
            id: a.event_id,
            slot: a.event_slot_index,
            kind,
        })
    }

    /// Issues `req` on `/dev/kfd` with the argument `args` makes of this event's id.
    fn by_id<T: IntoBytes + FromBytes + NoUserPointers>(
        &self,
        req: Ioctl<T>,
        args: impl FnOnce(u32) -> T,
    ) -> Result<()> {
        self.process.ioctl(req, &mut args(self.id))?;
        Ok(())
    }

    /// Signals the event from the CPU (`AMDKFD_IOC_SET_EVENT`).
    pub fn set(&self) -> Result<()> {
        self.by_id(AMDKFD_IOC_SET_EVENT, |event_id| kfd_ioctl_set_event_args {
            event_id,
            pad: 0,
        })
    }

    /// Clears the event (`AMDKFD_IOC_RESET_EVENT`).
    pub fn reset(&self) -> Result<()> {
        self.by_id(AMDKFD_IOC_RESET_EVENT, |event_id| kfd_ioctl_reset_event_args {
            event_id,
            pad: 0,
        })
    }

    /// Waits up to `timeout_ms` for the event; returns its data if it fired, `None`
    /// on timeout.
    pub fn wait(&self, timeout_ms: u32) -> Result<Option<kfd_event_data>> {
        let mut ev = [kfd_event_data::for_event(self.id)];
        match raw::wait_events(
            self.process.sys.as_ref(),
            self.process.kfd_fd,
            &mut ev,
            true,
            timeout_ms,
        )? {
            KFD_IOC_WAIT_RESULT_COMPLETE => Ok(Some(ev[0])),
            KFD_IOC_WAIT_RESULT_TIMEOUT => Ok(None),
            r => Err(KfdError::BadReply(format!("WAIT_EVENTS result {r}"))),
        }
    }
}

impl Drop for KfdEvent {
    fn drop(&mut self) {
        let destroy = |event_id| kfd_ioctl_destroy_event_args { event_id, pad: 0 };
        if let Err(e) = self.by_id(AMDKFD_IOC_DESTROY_EVENT, destroy) {
            self.process.defer(e);
        }
    }
}

/// One GPU opened through KFD: its VM, its share of the event page, its queue event and
/// its fault events.
///
/// Fields drop in declaration order: events first, then this device's hold on the
/// event page, then (once every buffer and queue is gone too) the VM.
#[derive(Debug)]
pub struct KfdDevice {
    queue_event: KfdEvent,
    mem_fault_event: KfdEvent,
    hw_fault_event: KfdEvent,
    _page_event: Option<KfdEvent>,
    event_page: Arc<KfdMemory>,
    shared: Arc<DeviceShared>,
    node: GpuNode,
    target: GfxTarget,
    render_path: PathBuf,
}

impl Drop for KfdDevice {
    fn drop(&mut self) {
        // Other devices still use the event page: take it off this GPU now rather
        // than when the last of them goes.
        if Arc::strong_count(&self.event_page) > 1
            && let Err(e) = self.event_page.unmap_from_shared(&self.shared)
        {
            self.shared.process.defer(e);
        }
    }
}

impl KfdDevice {
    /// Opens visible GPU `index` of `kfd`.
    pub fn open(kfd: &Kfd, index: usize) -> Result<Self> {
        let process = &kfd.shared;
        let node = process.gpus.get(index).cloned().ok_or(KfdError::NoDevice {
            index,
            available: process.gpus.len(),
        })?;
        let target = node.props.target()?;
        let render_path = PathBuf::from(format!("/dev/dri/renderD{}", node.props.drm_render_minor));
        let drm_fd = process.sys.open(&render_path, OpenMode::ReadWrite)?;
        let shared = Arc::new(DeviceShared {
            process: process.clone(),
            gpu_id: node.gpu_id,
            drm_fd,
            doorbells: Mutex::new(None),
        });
        let mut vm = kfd_ioctl_acquire_vm_args {
            drm_fd: drm_fd.0 as u32,
            gpu_id: node.gpu_id,
        };
        process.ioctl(AMDKFD_IOC_ACQUIRE_VM, &mut vm)?;

        // The event page: allocated by the first device and registered with KFD by its
        // first event; mapped into every later device.
        let (event_page, page_event) = {
            let mut slot = kfd.event_page.lock();
            match slot.upgrade() {
                Some(page) => {
                    page.map_to_shared(&shared)?;
                    (page, None)
                }
                None => {
                    let page = Arc::new(KfdMemory::alloc(&shared, EVENT_PAGE_SIZE, MemoryKind::UNCACHED)?);
                    let ev = KfdEvent::create(process, KFD_IOC_EVENT_SIGNAL, false, Some(page.handle()))?;
                    *slot = Arc::downgrade(&page);
                    (page, Some(ev))
                }
            }
        };
        let queue_event = KfdEvent::create(process, KFD_IOC_EVENT_SIGNAL, true, None)?;
        if (queue_event.slot as usize + 1) * 8 > event_page.size() {
            return Err(KfdError::BadReply(format!(
                "event slot {} outside the event page",
                queue_event.slot
            )));
        }
        let mem_fault_event = KfdEvent::create(process, KFD_IOC_EVENT_MEMORY, false, None)?;
        let hw_fault_event = KfdEvent::create(process, KFD_IOC_EVENT_HW_EXCEPTION, false, None)?;
        Ok(KfdDevice {
            queue_event,
            mem_fault_event,
            hw_fault_event,
            _page_event: page_event,
            event_page,
            shared,
            node,
            target,
            render_path,
        })
    }

    /// KFD's id of this GPU.
    pub fn gpu_id(&self) -> u32 {
        self.shared.gpu_id
    }
    /// The topology node.
    pub fn node(&self) -> &GpuNode {
        &self.node
    }
    /// The system call layer the device was opened through.
    pub fn sys(&self) -> &Arc<dyn Sys> {
        &self.shared.process.sys
    }
    /// Packet family.
    pub fn target(&self) -> GfxTarget {
        self.target
    }
    /// Arch name, e.g. `gfx1100`.
    pub fn arch(&self) -> String {
        self.node.props.arch()
    }
    /// The render node path.
    pub fn render_path(&self) -> &Path {
        &self.render_path
    }

    /// The queue-completion event (signalled by the timeline signal's RELEASE_MEM).
    pub fn queue_event(&self) -> &KfdEvent {
        &self.queue_event
    }

    /// Address of the queue event's slot in the event page: the mailbox the GPU writes
    /// the event id to before raising the interrupt.
    pub fn queue_event_mailbox(&self) -> u64 {
        (self.event_page.va() + self.queue_event.slot as usize * 8) as u64
    }

    /// The shared event page.
    pub fn event_page(&self) -> &KfdMemory {
        &self.event_page
    }

    /// Allocates `size` bytes (rounded up to pages) of `kind`, mapped to this GPU.
    pub fn alloc(&self, size: usize, kind: MemoryKind) -> Result<KfdMemory> {
        KfdMemory::alloc(&self.shared, size, kind)
    }

    /// Maps `mem` (of any device of the same process) into this GPU too.
    pub fn map(&self, mem: &KfdMemory) -> Result<()> {
        mem.map_to_shared(&self.shared)
    }

    /// Unmaps `mem` from this GPU (it stays mapped on the others); a no-op if it is
    /// not mapped here.
    pub fn unmap(&self, mem: &KfdMemory) -> Result<()> {
        mem.unmap_from_shared(&self.shared)
    }

    /// Creates a queue of `kind` with a ring of `ring_size` bytes.
    pub fn create_queue(&self, kind: QueueKind, ring_size: usize) -> Result<KfdQueue> {
        KfdQueue::create(&self.shared, &self.node, kind, ring_size)
    }

    /// Sleeps until the queue event fires or `timeout_ms` passes; returns whether it
    /// fired.
    pub fn sleep(&self, timeout_ms: u32) -> Result<bool> {
        Ok(self.queue_event.wait(timeout_ms)?.is_some())
    }

    /// Restricts `queue` to the CUs whose bits are set in `mask` (bit i of word i/32
    /// = CU i) (`AMDKFD_IOC_SET_CU_MASK`).
    pub fn set_cu_mask(&self, queue: &KfdQueue, mask: &[u32]) -> Result<()> {
        if mask.is_empty() {
            return Err(KfdError::InvalidArgument("empty CU mask".into()));
        }
        let p = &self.shared.process;
        raw::set_cu_mask(p.sys.as_ref(), p.kfd_fd, queue.id(), mask)?;
        Ok(())
    }

    /// Free VRAM in bytes (`AMDKFD_IOC_AVAILABLE_MEMORY`).
    pub fn available_memory(&self) -> Result<u64> {
        let mut a = kfd_ioctl_get_available_memory_args {
            gpu_id: self.gpu_id(),
            ..Default::default()
        };
        self.shared.process.ioctl(AMDKFD_IOC_AVAILABLE_MEMORY, &mut a)?;
        Ok(a.available)
    }

    /// GPU, CPU and system clock counters, read together.
    pub fn clock_counters(&self) -> Result<kfd_ioctl_get_clock_counters_args> {
        let mut a = kfd_ioctl_get_clock_counters_args {
            gpu_id: self.gpu_id(),
            ..Default::default()
        };
        self.shared.process.ioctl(AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut a)?;
        Ok(a)
    }

    /// What the driver knows of a fault: memory-fault and hardware-exception events,
    /// polled without waiting, as lines such as
    /// `MMU fault: 0x7F0012340000 | NotPresent=1 ReadOnly=0 NoExecute=0 imprecise=0`.
    /// Empty when neither fired. [`KfdDevice::fault_report`] gives the same events
    /// whole (with the GPU and error type) and the transport's stop reasons; both
    /// consume the events, so call one of them.
    pub fn hang_report(&self) -> Result<Vec<String>> {
        let r = self.fault_report()?;
        let mut report = Vec::new();
        if let Some(m) = &r.memory {
            report.push(FaultReport::memory_line(m));
        }
        if let Some(h) = &r.hw {
            report.push(FaultReport::hw_line(h));
        }
        Ok(report)
    }

    /// The fault events of this GPU (polled without waiting) with all their data,
    /// and the transport's account of why its queues stopped
    /// ([`Sys::stop_reasons`]: the mock names the packet or instruction; the real
    /// driver has no such channel and gives none).
    pub fn fault_report(&self) -> Result<FaultReport> {
        // The stop reasons are asked for before and after the events are read: the
        // first asking lets a transport raise what it holds (the mock's engines hand
        // their reports to the driver then); the second sees the reason of every stop
        // whose events were read, since a transport raises a stop's events only once
        // it can name it (a stop between the two readings may show its reason alone).
        let sys = &self.shared.process.sys;
        let _ = sys.stop_reasons(self.gpu_id());
        let memory = self
            .mem_fault_event
            .wait(0)?
            .map(|ev| ev.memory_exception_data)
            .filter(|m| m.gpu_id != 0);
        let hw = self
            .hw_fault_event
            .wait(0)?
            .map(|ev| ev.hw_exception_data())
            .filter(|h| h.gpu_id != 0);
        let stop_reasons = sys.stop_reasons(self.gpu_id());
        Ok(FaultReport {
            memory,
            hw,
            stop_reasons,
        })
    }
}

/// A GPU's fault events and the transport's stop reasons
/// ([`KfdDevice::fault_report`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultReport {
    /// The memory-exception event's data (`kfd_hsa_memory_exception_data`), if it
    /// fired: address, GPU, failure bits, error type.
    pub memory: Option<kfd_hsa_memory_exception_data>,
    /// The hardware-exception event's data, if it fired.
    pub hw: Option<kfd_hsa_hw_exception_data>,
    /// Why queues stopped, where the transport knows (the mock does; the kernel
    /// driver does not say).
    pub stop_reasons: Vec<String>,
}

impl FaultReport {
    fn memory_line(m: &kfd_hsa_memory_exception_data) -> String {
        let f = m.failure;
        format!(
            "MMU fault: 0x{:X} | NotPresent={} ReadOnly={} NoExecute={} imprecise={}",
            m.va, f.NotPresent, f.ReadOnly, f.NoExecute, f.imprecise
        )
    }

    fn hw_line(h: &kfd_hsa_hw_exception_data) -> String {
        format!(
            "HW fault: reset_type={} reset_cause={} memory_lost={} gpu_id={}",
            h.reset_type, h.reset_cause, h.memory_lost, h.gpu_id
        )
    }

    /// Whether nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.memory.is_none() && self.hw.is_none() && self.stop_reasons.is_empty()
    }

    /// One line per item: the memory fault (with its GPU and error type), the
    /// hardware exception, then each stop reason.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(m) = &self.memory {
            out.push(format!(
                "{} gpu_id={} ErrorType={}",
                Self::memory_line(m),
                m.gpu_id,
                m.ErrorType
            ));
        }
        if let Some(h) = &self.hw {
            out.push(Self::hw_line(h));
        }
        out.extend(self.stop_reasons.iter().cloned());
        out
    }
}
