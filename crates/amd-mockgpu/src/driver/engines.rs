//! The driver's side of the engines: it runs them, takes what they report (KFD
//! interrupts and faults become events), and keeps PCI GPUs' rings in line with
//! their registers around each run.

use crate::driver::Driver;
use crate::engine::{GpuRun, Report, Started, Stop};
use crate::mem::MemResult;

impl Driver {
    /// Runs engine slot `g`'s queues (see `Engines::run_gpu`): a PCI GPU's rings are
    /// brought in line with its registers first, and a long operation it starts is
    /// watched by its ring's registers.
    pub(crate) fn run_gpu(&mut self, g: usize) -> GpuRun {
        if let Some(dev) = self.pci_dev_of_slot(g) {
            self.sync_pci_rings(dev);
        }
        let run = self.engines.run_gpu(g, self.shutdown);
        if let Some(s) = &run.started {
            self.watch_pci_long(g, s.queue, &s.stop);
        }
        self.take_reports();
        run
    }

    /// Completes (or stops) the queue of a long operation once it ran.
    pub(crate) fn finish_long(&mut self, s: &Started, result: Result<(), Stop>) {
        self.engines.finish_long(s, result);
        self.take_reports();
    }

    /// What the engines reported, in order: KFD interrupts signal their events,
    /// faults and hangs fire the exception events, a stopped queue wakes waiters.
    pub(crate) fn take_reports(&mut self) {
        if self.engines.reports.is_empty() {
            return;
        }
        let mut reports = std::mem::take(&mut self.engines.reports);
        for r in reports.drain(..) {
            match r {
                Report::Interrupt { ctxid } => self.interrupt(ctxid),
                Report::MemoryFault { gpu, fault } => self.memory_fault(gpu, fault),
                Report::Hang { gpu } => self.hw_exception(gpu, amd_kfd::abi::KFD_HW_EXCEPTION_GPU_HANG),
                Report::Stopped { queue } => {
                    self.events_dirty = true;
                    if let (Some(log), Some(why)) = (
                        self.kernel_log,
                        self.engines.execs.get(&queue).and_then(|q| q.stop_reason.as_deref()),
                    ) {
                        log(why);
                    }
                }
            }
        }
        // The vector's room is kept for the next run.
        self.engines.reports = reports;
    }

    /// Raises the interrupt of a RELEASE_MEM or TRAP with context `ctxid`: as KFD's
    /// handler, a signal event with that id fires if its event-page slot was written.
    pub(crate) fn interrupt(&mut self, ctxid: u32) {
        let page = self.event_page;
        let Some(ev) = self.events.get(&ctxid) else { return };
        if ev.kind != amd_kfd::abi::KFD_IOC_EVENT_SIGNAL {
            return;
        }
        let fire = match (page, ev.slot) {
            (Some((va, _)), Some(slot)) => {
                let addr = va + slot as u64 * 8;
                match self.host_load_u64(addr) {
                    Some(v) if v != u64::MAX => {
                        self.host_store_u64(addr, u64::MAX);
                        true
                    }
                    _ => false,
                }
            }
            _ => true,
        };
        if fire && let Some(ev) = self.events.get_mut(&ctxid) {
            ev.signaled = true;
            self.events_dirty = true;
        }
    }
}

/// The driver's own accesses (under the driver lock): each takes the shared lock on
/// the address space for the one access. Every writer of the address space holds the
/// driver lock, so none is queued while these run and they never wait; each guard is
/// a temporary, so none nests.
impl Driver {
    pub(crate) fn gpu_mapped(&self, g: usize, addr: u64, len: u64) -> bool {
        self.engines.space.read().gpu_mapped(g, addr, len)
    }
    pub(crate) fn gpu_load_u64(&self, g: usize, addr: u64) -> MemResult<u64> {
        self.engines.space.read().gpu_load(g, addr)
    }
    pub(crate) fn host_load_u64(&self, addr: u64) -> Option<u64> {
        self.engines.space.read().host_load_u64(addr)
    }
    pub(crate) fn host_store_u64(&self, addr: u64, v: u64) -> bool {
        self.engines.space.read().host_store_u64(addr, v)
    }
}
