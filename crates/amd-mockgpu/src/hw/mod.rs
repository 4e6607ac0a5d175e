//! The hardware half: the engines that consume the rings the driver half registered.
//!
//! One [`QueueExec`] per queue holds what the engine keeps (read pointer, SH register
//! file, indirect-buffer stack, status). [`Driver::run_gpu`] runs every queue of a GPU
//! until each is empty, blocked or stopped; a device thread per GPU calls it when a
//! doorbell rings (threaded mode), or the doorbell's caller does (inline mode).
//! Ring contents are hostile input: pointers are bounded by the ring, packets are
//! decoded with `amd-packets`, IB nesting is limited, and every memory access is
//! checked ([`mem`]).

pub(crate) mod mem;
mod pm4;
mod sdma;

use std::time::Instant;

use amd_kfd::abi::KFD_HW_EXCEPTION_GPU_HANG;
use amd_packets::GfxTarget;

use crate::MemoryFault;
use crate::driver::Driver;

/// Everything a DISPATCH_DIRECT hands to the kernel executor, read from the queue's
/// SH registers as the hardware would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchInfo {
    /// GPU index in the mock.
    pub gpu: usize,
    /// Queue id.
    pub queue: u32,
    /// Address of the first instruction (COMPUTE_PGM_LO/HI << 8).
    pub code_addr: u64,
    /// COMPUTE_PGM_RSRC1..3.
    pub rsrc: [u32; 3],
    /// COMPUTE_USER_DATA_0..15.
    pub user_data: [u32; 16],
    /// COMPUTE_NUM_THREAD_X/Y/Z (workgroup size).
    pub block: [u32; 3],
    /// Grid in workgroups.
    pub grid: [u32; 3],
    /// COMPUTE_TMPRING_SIZE.
    pub tmpring_size: u32,
    /// COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI << 8.
    pub scratch_base: u64,
    /// DISPATCH_INITIATOR.
    pub initiator: u32,
}

/// Why a kernel could not run to completion.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// A memory access outside the GPU's mappings.
    #[error("memory fault at {:#x}", .0.va)]
    Fault(MemoryFault),
    /// The kernel needs something the executor does not do.
    #[error("{0}")]
    Unsupported(String),
}

/// Checked access to a GPU's memory, for kernel executors.
pub struct GpuMemory<'a> {
    driver: &'a Driver,
    gpu: usize,
}

impl<'a> GpuMemory<'a> {
    #[cfg(test)]
    pub(crate) fn for_test(driver: &'a Driver, gpu: usize) -> Self {
        GpuMemory { driver, gpu }
    }

    /// Reads bytes at `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        self.driver.gpu_read(self.gpu, addr, out)
    }
    /// Writes bytes at `addr`.
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
        self.driver.gpu_write(self.gpu, addr, data)
    }
    /// Loads a dword.
    pub fn load_u32(&self, addr: u64) -> Result<u32, MemoryFault> {
        self.driver.gpu_load_u32(self.gpu, addr)
    }
    /// Stores a dword.
    pub fn store_u32(&self, addr: u64, v: u32) -> Result<(), MemoryFault> {
        self.driver.gpu_store_u32(self.gpu, addr, v)
    }
}

/// Runs the kernels that DISPATCH_DIRECT launches. The mock records every dispatch
/// whatever the executor ([`crate::MockSys::dispatches`]); the default executor does
/// nothing more.
pub trait KernelExecutor: Send {
    /// Runs one dispatch to completion.
    fn dispatch(&mut self, mem: &GpuMemory<'_>, d: &DispatchInfo) -> Result<(), KernelError>;
}

/// The default executor: accepts every dispatch and runs nothing.
#[derive(Debug, Default)]
pub struct NoKernels;

impl KernelExecutor for NoKernels {
    fn dispatch(&mut self, _mem: &GpuMemory<'_>, _d: &DispatchInfo) -> Result<(), KernelError> {
        Ok(())
    }
}

/// Engine of a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// PM4 compute (pointers in dwords).
    Pm4,
    /// SDMA (pointers in bytes).
    Sdma,
}

/// Where a queue stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueStatus {
    /// Consumed up to the write pointer, or running.
    Running,
    /// Stopped at a WAIT_REG_MEM / POLL_REGMEM whose condition does not hold yet.
    Blocked,
    /// Stopped for good: a malformed packet or an impossible pointer.
    Error(String),
    /// Stopped for good: a memory access outside the GPU's mappings.
    Faulted(MemoryFault),
}

/// Packet counts of a queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueCounters {
    /// Packets completed (ring and IB).
    pub packets: u64,
    /// Kernel dispatches.
    pub dispatches: u64,
    /// ACQUIRE_MEM / GCR_REQ packets.
    pub cache_ops: u64,
    /// EVENT_WRITE packets.
    pub event_writes: u64,
    /// Interrupts raised.
    pub interrupts: u64,
    /// Bytes copied or filled (SDMA).
    pub bytes: u64,
}

/// A queue's state as the engine sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueState {
    /// Read pointer (dwords for PM4, bytes for SDMA), as published.
    pub read_ptr: u64,
    /// Status.
    pub status: QueueStatus,
    /// Counts.
    pub counters: QueueCounters,
    /// Set by [`crate::MockSys::hang_queue`]: the engine stops consuming.
    pub hung: bool,
}

pub(crate) struct IbFrame {
    pub(crate) words: Vec<u32>,
    pub(crate) pos: usize,
}

/// What the engine keeps for one queue.
pub(crate) struct QueueExec {
    pub(crate) id: u32,
    pub(crate) gpu: usize,
    pub(crate) engine: Engine,
    pub(crate) target: GfxTarget,
    pub(crate) ring_base: u64,
    pub(crate) ring_dwords: u64,
    pub(crate) rptr_addr: u64,
    pub(crate) wptr_addr: u64,
    /// Read pointer in dwords.
    pub(crate) rptr: u64,
    pub(crate) regs: std::collections::BTreeMap<u16, u32>,
    pub(crate) ib: Vec<IbFrame>,
    /// Dwords of the ring packet that opened the current IB stack.
    pub(crate) ib_ring_len: u64,
    pub(crate) status: QueueStatus,
    pub(crate) counters: QueueCounters,
    pub(crate) hung: bool,
    pub(crate) delay: std::time::Duration,
    pub(crate) not_before: Option<Instant>,
}

/// One step of a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Progress,
    Empty,
    Blocked,
}

/// A packet's outcome.
pub(crate) enum Exec {
    Done,
    Blocked,
    /// Run these IB words next.
    Ib(Vec<u32>),
}

/// Why a queue stops (or, for `NeedMore`, waits to read more of a ring packet).
pub(crate) enum Stop {
    Fault(MemoryFault),
    Error(String),
    /// The packet at the ring's read pointer needs this many dwords.
    NeedMore(usize),
}

impl From<MemoryFault> for Stop {
    fn from(f: MemoryFault) -> Self {
        Stop::Fault(f)
    }
}

/// Deepest IB nesting accepted (a ring IB calling one more level, as the CP allows).
pub(crate) const MAX_IB_DEPTH: usize = 2;

/// What a run of a GPU's queues did.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GpuRun {
    pub(crate) progressed: bool,
    pub(crate) blocked: bool,
    /// The earliest time a delayed queue may run.
    pub(crate) wake_at: Option<Instant>,
}

impl QueueExec {
    pub(crate) fn state(&self) -> QueueState {
        QueueState {
            read_ptr: match self.engine {
                Engine::Pm4 => self.rptr,
                Engine::Sdma => self.rptr * 4,
            },
            status: self.status.clone(),
            counters: self.counters.clone(),
            hung: self.hung,
        }
    }
}

impl Driver {
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

    fn publish_rptr(&self, q: &QueueExec) -> Result<(), Stop> {
        let v = match q.engine {
            Engine::Pm4 => q.rptr,
            Engine::Sdma => q.rptr * 4,
        };
        self.gpu_store_u64(q.gpu, q.rptr_addr, v)?;
        Ok(())
    }

    /// Reads `n` ring dwords from dword position `pos`, wrapping at the ring's end.
    fn ring_words(&self, q: &QueueExec, pos: u64, n: u64) -> Result<Vec<u32>, Stop> {
        let start = pos % q.ring_dwords;
        let first = n.min(q.ring_dwords - start);
        let mut words = self.gpu_read_words(q.gpu, q.ring_base + start * 4, first as usize)?;
        if first < n {
            words.extend(self.gpu_read_words(q.gpu, q.ring_base, (n - first) as usize)?);
        }
        Ok(words)
    }

    /// Runs one packet of `q` (from its IB stack, else from the ring).
    fn step(&mut self, q: &mut QueueExec) -> Result<Step, Stop> {
        if let Some(frame) = q.ib.last() {
            if frame.pos >= frame.words.len() {
                q.ib.pop();
                if q.ib.is_empty() {
                    q.rptr += q.ib_ring_len;
                    self.publish_rptr(q)?;
                }
                return Ok(Step::Progress);
            }
            let words = frame.words[frame.pos..].to_vec();
            let (len, exec) = self.exec_packet(q, &words, None)?;
            match exec {
                Exec::Blocked => return Ok(Step::Blocked),
                Exec::Done => {}
                Exec::Ib(ib) => {
                    if q.ib.len() >= MAX_IB_DEPTH {
                        return Err(Stop::Error(format!(
                            "indirect buffers nested deeper than {MAX_IB_DEPTH}"
                        )));
                    }
                    if let Some(f) = q.ib.last_mut() {
                        f.pos += len;
                    }
                    q.ib.push(IbFrame { words: ib, pos: 0 });
                    q.counters.packets += 1;
                    return Ok(Step::Progress);
                }
            }
            if let Some(f) = q.ib.last_mut() {
                f.pos += len;
            }
            q.counters.packets += 1;
            return Ok(Step::Progress);
        }

        let wptr_raw = self.gpu_load_u64(q.gpu, q.wptr_addr)?;
        let wptr = match q.engine {
            Engine::Pm4 => wptr_raw,
            Engine::Sdma => {
                if wptr_raw % 4 != 0 {
                    return Err(Stop::Error(format!(
                        "SDMA write pointer {wptr_raw:#x} is not dword aligned"
                    )));
                }
                wptr_raw / 4
            }
        };
        if wptr == q.rptr {
            return Ok(Step::Empty);
        }
        if wptr < q.rptr || wptr - q.rptr > q.ring_dwords {
            return Err(Stop::Error(format!(
                "write pointer {wptr_raw:#x} is behind the read pointer or more than a ring ahead (read pointer {:#x})",
                q.state().read_ptr
            )));
        }
        let avail = wptr - q.rptr;
        let mut n = avail.min(16);
        loop {
            let words = self.ring_words(q, q.rptr, n)?;
            match self.exec_packet(q, &words, Some(q.rptr)) {
                Err(Stop::NeedMore(needed)) => {
                    let needed = needed as u64;
                    if needed > avail || needed <= n {
                        return Err(Stop::Error(format!(
                            "packet at ring dword {:#x} needs {needed} dwords, only {avail} written",
                            q.rptr % q.ring_dwords
                        )));
                    }
                    n = needed;
                }
                Err(e) => return Err(e),
                Ok((_, Exec::Blocked)) => return Ok(Step::Blocked),
                Ok((len, Exec::Done)) => {
                    q.rptr += len as u64;
                    q.counters.packets += 1;
                    self.publish_rptr(q)?;
                    return Ok(Step::Progress);
                }
                Ok((len, Exec::Ib(ib))) => {
                    q.ib_ring_len = len as u64;
                    q.ib.push(IbFrame { words: ib, pos: 0 });
                    q.counters.packets += 1;
                    return Ok(Step::Progress);
                }
            }
        }
    }

    fn exec_packet(&mut self, q: &mut QueueExec, words: &[u32], ring_pos: Option<u64>) -> Result<(usize, Exec), Stop> {
        match q.engine {
            Engine::Pm4 => self.exec_pm4(q, words, ring_pos),
            Engine::Sdma => self.exec_sdma(q, words, ring_pos),
        }
    }

    /// Runs every queue of GPU `g` until each is empty, blocked, stopped or out of
    /// its budget of packets.
    pub(crate) fn run_gpu(&mut self, g: usize) -> GpuRun {
        const BUDGET: usize = 1 << 14;
        let mut run = GpuRun::default();
        let ids: Vec<u32> = self
            .execs
            .iter()
            .filter(|(_, q)| q.gpu == g)
            .map(|(&id, _)| id)
            .collect();
        let now = Instant::now();
        for id in ids {
            let Some(mut q) = self.execs.remove(&id) else { continue };
            if q.hung || matches!(q.status, QueueStatus::Error(_) | QueueStatus::Faulted(_)) {
                self.execs.insert(id, q);
                continue;
            }
            if let Some(t) = q.not_before {
                if now < t {
                    run.wake_at = Some(run.wake_at.map_or(t, |w| w.min(t)));
                    self.execs.insert(id, q);
                    continue;
                }
            }
            for _ in 0..BUDGET {
                match self.step(&mut q) {
                    Ok(Step::Progress) => {
                        q.status = QueueStatus::Running;
                        run.progressed = true;
                    }
                    Ok(Step::Empty) => {
                        q.status = QueueStatus::Running;
                        // A later doorbell waits out the injected delay again.
                        q.not_before = (!q.delay.is_zero()).then(|| Instant::now() + q.delay);
                        break;
                    }
                    Ok(Step::Blocked) => {
                        q.status = QueueStatus::Blocked;
                        run.blocked = true;
                        break;
                    }
                    Err(Stop::Fault(f)) => {
                        q.status = QueueStatus::Faulted(f);
                        self.memory_fault(g, f);
                        self.events_dirty = true;
                        break;
                    }
                    // A queue that stops on bad input is a hung engine to the driver, which
                    // reports it through the hardware-exception events.
                    Err(Stop::Error(e)) => {
                        q.status = QueueStatus::Error(e);
                        self.hw_exception(g, KFD_HW_EXCEPTION_GPU_HANG);
                        self.events_dirty = true;
                        break;
                    }
                    Err(Stop::NeedMore(n)) => {
                        q.status = QueueStatus::Error(format!("truncated packet needs {n} dwords"));
                        self.hw_exception(g, KFD_HW_EXCEPTION_GPU_HANG);
                        self.events_dirty = true;
                        break;
                    }
                }
            }
            self.execs.insert(id, q);
        }
        run
    }
}

/// Maps a decode error to a queue stop; a truncated ring packet asks for more dwords
/// (an IB is read whole, so there it is an error).
pub(crate) fn decode_stop(e: amd_packets::PacketError, what: &str, ring_pos: Option<u64>) -> Stop {
    match (e, ring_pos) {
        (amd_packets::PacketError::Truncated { needed, .. }, Some(_)) => Stop::NeedMore(needed),
        (e, _) => {
            let at = ring_pos
                .map(|p| format!(" at ring dword {p:#x}"))
                .unwrap_or_else(|| " in an indirect buffer".into());
            Stop::Error(format!("{what}{at}: {e}"))
        }
    }
}
