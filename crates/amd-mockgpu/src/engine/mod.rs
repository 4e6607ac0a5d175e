//! The engines: the command processors that consume the rings the driver registered.
//!
//! One `QueueExec` per queue holds what the engine keeps (read pointer, SH register
//! file, indirect-buffer stack, status). `Engines::run_gpu` runs every queue of a GPU
//! until each is empty, blocked or stopped (the driver calls it, then applies what
//! the engines report); a device thread per GPU does so when a doorbell rings
//! (threaded mode), or the doorbell's caller does (inline mode).
//!
//! Short packets run with the driver lock held. A dispatch, and a copy or fill longer
//! than [`SLICE_BYTES`], is a `LongOp`: `run_gpu` marks its packet in flight and
//! hands it out, and the caller runs it with the driver lock released (`run_long`),
//! holding only the shared lock on the address space, a slice at a time, and checking
//! between slices whether the queue was destroyed or the mock dropped. The packet
//! completes when the caller takes the driver lock again (`Engines::finish_long`).
//! Ring contents are hostile input: pointers are bounded by the ring, packets are
//! decoded with `amd-packets`, IB nesting is limited, and every memory access is
//! checked (`mem`).

mod aql;
pub(crate) mod executor;
mod pm4;
mod sdma;

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use parking_lot::{RwLock, RwLockReadGuard};

use amd_packets::GfxTarget;

use crate::mem::pci::DevMem;
use crate::mem::sanitize::Explained;
use crate::mem::word::Word;
use crate::mem::{AddressSpace, MemResult, MemoryFault, Vm};
use executor::{DispatchInfo, GpuMemory, KernelError, SharedExecutor};

/// Engine of a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// PM4 compute (pointers in dwords).
    Pm4,
    /// SDMA (pointers in bytes).
    Sdma,
    /// AQL: 64-byte HSA packets (pointers in packets); PM4 in the indirect buffers
    /// of AMD's vendor packet.
    Aql,
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
    /// Read pointer (dwords for PM4, bytes for SDMA, packets for AQL), as published.
    pub read_ptr: u64,
    /// Status.
    pub status: QueueStatus,
    /// Counts.
    pub counters: QueueCounters,
    /// Set by [`crate::MockSys::hang_queue`]: the engine stops consuming.
    pub hung: bool,
    /// Why the queue stopped, naming the packet (and its ring offset) or the kernel
    /// instruction; `None` while it runs.
    pub stop_reason: Option<String>,
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
    /// Where the read pointer is written back (none: not written back).
    pub(crate) rptr_addr: Option<u64>,
    pub(crate) wptr: WptrSource,
    /// The memory the queue reaches.
    pub(crate) vm: Vm,
    /// A PCI GPU's registers and interrupt handler (none for a KFD GPU).
    pub(crate) port: Option<Arc<dyn DevicePort>>,
    /// The ring id its interrupts carry (PCI GPUs: the CP's me/pipe/queue encoding,
    /// or the SDMA queue).
    pub(crate) ring_id: u8,
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
    /// The packet a `LongOp` runs, handed out and not complete yet.
    pub(crate) in_flight: Option<InFlight>,
    pub(crate) stop_reason: Option<String>,
    /// AQL queues: what retiring the packet at the read pointer does.
    pub(crate) aql: Option<aql::AqlPending>,
}

/// Where an engine finds a queue's write pointer.
#[derive(Debug, Clone)]
pub(crate) enum WptrSource {
    /// A qword in the queue's memory (KFD queues: the write pointer buffer).
    Memory(u64),
    /// The queue's doorbell slot in BAR 2 (PCI GPUs: the doorbell write carries the
    /// write pointer); byte offset into the doorbell page.
    Doorbell(Arc<DevMem>, u64),
    /// No doorbell bound: nothing can move the write pointer.
    Unbound,
}

/// The packet of a running `LongOp`: what completing it advances.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InFlight {
    pub(crate) len: usize,
    pub(crate) from_ring: bool,
}

/// Bytes a copy or fill moves per slice (with the address space locked); longer ones
/// run as a `LongOp`.
pub const SLICE_BYTES: u64 = 1 << 20;

/// Work an engine does with the driver lock released.
#[derive(Debug, Clone)]
pub(crate) enum LongOp {
    Dispatch(DispatchInfo),
    Copy { dst: u64, src: u64, len: u64 },
    Fill { dst: u64, pattern: u32, len: u64 },
}

/// A `LongOp` handed out by `Engines::run_gpu`.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) queue: u32,
    pub(crate) gpu: usize,
    /// The memory the operation reaches.
    pub(crate) vm: Vm,
    pub(crate) op: LongOp,
    /// Set (Release) to stop it; read (Acquire) between slices.
    pub(crate) stop: Arc<AtomicBool>,
    /// The packet, for a stop reason.
    pub(crate) what: String,
}

/// One step of a queue.
pub(crate) enum Step {
    Progress,
    Empty,
    Blocked,
    /// The packet is a long operation, now in flight.
    Long(LongOp, String),
    /// The packet is a long operation and another one runs on this GPU: try later.
    Deferred,
}

/// A packet's outcome.
pub(crate) enum Exec {
    Done,
    Blocked,
    /// Run these IB words next.
    Ib(Vec<u32>),
    /// Run this with the driver lock released; the packet completes after it.
    Long(LongOp),
}

/// Why a queue stops (or, for `NeedMore`, waits to read more of a ring packet).
#[derive(Debug)]
pub(crate) enum Stop {
    Fault(MemoryFault),
    /// A fault and what made it (the packet, or the kernel instruction).
    FaultIn(MemoryFault, String),
    Error(String),
    /// The packet at the ring's read pointer needs this many dwords.
    NeedMore(usize),
    /// A long operation was stopped from outside (queue destroyed, mock dropped).
    Cancelled,
}

/// Where a packet sits, for messages.
pub(crate) fn packet_place(ring_pos: Option<u64>, ring_dwords: u64) -> String {
    match ring_pos {
        Some(p) => format!(" at ring dword {:#x}", p % ring_dwords.max(1)),
        None => " in an indirect buffer".into(),
    }
}

/// A fault in words: `memory fault writing 0x1000 (page not present)`.
pub fn describe_fault(f: &MemoryFault) -> String {
    let why = if f.read_only {
        "write to a read-only page"
    } else if f.no_execute {
        "execute of a no-execute page"
    } else {
        "page not present"
    };
    let how = if f.write { "writing" } else { "reading" };
    format!("memory fault {how} {:#x} ({why})", f.va)
}

impl From<MemoryFault> for Stop {
    fn from(f: MemoryFault) -> Self {
        Stop::Fault(f)
    }
}

/// Dwords of an AQL packet.
const AQL_PACKET_DWORDS: u64 = amd_packets::aql::PACKET_DWORDS as u64;

/// Deepest IB nesting accepted (a ring IB calling one more level, as the CP allows).
pub(crate) const MAX_IB_DEPTH: usize = 2;

/// What a run of a GPU's queues did.
#[derive(Debug, Default)]
pub(crate) struct GpuRun {
    pub(crate) progressed: bool,
    pub(crate) blocked: bool,
    /// The earliest time a delayed queue may run.
    pub(crate) wake_at: Option<Instant>,
    /// A long operation for the caller to run with the driver lock released (at most
    /// one per run, so a destroyed queue's never waits behind another's).
    pub(crate) started: Option<Started>,
}

impl QueueExec {
    pub(crate) fn state(&self) -> QueueState {
        QueueState {
            read_ptr: match self.engine {
                Engine::Pm4 => self.rptr,
                Engine::Sdma => self.rptr * 4,
                Engine::Aql => self.rptr / AQL_PACKET_DWORDS,
            },
            status: self.status.clone(),
            counters: self.counters.clone(),
            hung: self.hung,
            stop_reason: self.stop_reason.clone(),
        }
    }
}

/// What an engine of a PCI GPU reaches besides memory: the device's registers (a
/// wait on a register, the HDP flush) and its interrupt handler. The device model
/// implements it; a KFD GPU's engines have none (their interrupts go to the driver
/// as [`Report`]s, their registers are [`Engines`]' own).
pub(crate) trait DevicePort: std::fmt::Debug + Send + Sync {
    /// Reads register `reg` (a dword offset).
    fn read_reg(&self, reg: u32) -> u32;
    /// Writes register `reg`, with its side effects.
    fn write_reg(&self, reg: u32, value: u32);
    /// Raises the end-of-pipe (PM4) or trap (SDMA) interrupt of ring `ring_id` with
    /// context `ctxid`.
    fn interrupt(&self, engine: Engine, ring_id: u8, ctxid: u32);
}

/// What the engines ask of the driver, in order, after a run: KFD GPUs' interrupts
/// and faults become events there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// A RELEASE_MEM or TRAP interrupt of a KFD GPU with context `ctxid`.
    Interrupt { ctxid: u32 },
    /// A queue of KFD GPU `gpu` stopped on a memory fault.
    MemoryFault { gpu: usize, fault: MemoryFault },
    /// A queue of KFD GPU `gpu` stopped on bad input: a hung engine to the driver.
    Hang { gpu: usize },
    /// Queue `queue` stopped: waiters should look at its state.
    Stopped { queue: u32 },
}

/// What one [`Engines::run_gpu`] turn knows of its GPU.
struct Turn {
    g: usize,
    shutdown: bool,
    /// No long operation was running on the GPU when the turn began.
    free: bool,
    /// The clock, read at the first queue that waits out a delay.
    now: Option<Instant>,
}

/// Dispatches kept for inspection (the oldest are dropped beyond this).
pub(crate) const DISPATCH_LOG_LIMIT: usize = 1 << 16;

/// Every engine of the mock: the queues they consume and what they share.
pub(crate) struct Engines {
    pub(crate) execs: BTreeMap<u32, QueueExec>,
    /// The kernel executor of each GPU (engine slot).
    pub(crate) kernels: Vec<SharedExecutor>,
    /// The long operation running on a GPU (with the driver lock released): its
    /// queue and the flag that stops it.
    pub(crate) running: BTreeMap<usize, (u32, Arc<AtomicBool>)>,
    /// GPU mappings and host mappings, locked apart from the driver (engines read
    /// them without the driver lock); the driver changes them holding both.
    pub(crate) space: Arc<RwLock<AddressSpace>>,
    pub(crate) dispatch_log: VecDeque<DispatchInfo>,
    /// Per engine slot: the queue whose long operation started last (round robin
    /// between queues).
    pub(crate) last_long: BTreeMap<usize, u32>,
    /// Where the GPU clock starts.
    pub(crate) clock_origin: Instant,
    /// KFD GPUs' registers written by waits (the HDP flush handshake).
    pub(crate) kfd_regs: Vec<BTreeMap<u32, u32>>,
    /// What the driver is to do, in order (see [`Report`]).
    pub(crate) reports: Vec<Report>,
    /// The sanitizer is on ([`crate::MockConfig::sanitize`]): dispatches say so to
    /// their executor.
    pub(crate) sanitize: bool,
}

/// The mock GPU clock, in Hz (a timestamp divider of 100 per microsecond).
pub const GPU_CLOCK_HZ: u64 = amd_packets::TIMESTAMP_HZ;

impl Engines {
    pub(crate) fn new(space: Arc<RwLock<AddressSpace>>, kernels: Vec<SharedExecutor>, kfd_gpus: usize) -> Self {
        Engines {
            execs: BTreeMap::new(),
            kernels,
            running: BTreeMap::new(),
            space,
            dispatch_log: VecDeque::new(),
            last_long: BTreeMap::new(),
            clock_origin: Instant::now(),
            kfd_regs: vec![BTreeMap::new(); kfd_gpus],
            reports: Vec::new(),
            sanitize: false,
        }
    }

    /// The GPU clock in ticks of [`GPU_CLOCK_HZ`] since the engines started.
    pub(crate) fn gpu_clock(&self) -> u64 {
        self.clock_origin.elapsed().as_nanos() as u64 / (1_000_000_000 / GPU_CLOCK_HZ)
    }

    /// Raises the interrupt of a RELEASE_MEM or TRAP of `q` with context `ctxid`:
    /// KFD GPUs report it to the driver, which signals the event; PCI GPUs write a
    /// CP end-of-pipe or SDMA trap vector into their IH ring.
    pub(crate) fn interrupt(&mut self, q: &QueueExec, ctxid: u32) {
        match &q.port {
            Some(p) => p.interrupt(q.engine, q.ring_id, ctxid),
            None => self.reports.push(Report::Interrupt { ctxid }),
        }
    }

    /// A GPU register read by a wait. KFD GPUs: the HDP flush handshake (DONE mirrors
    /// REQ), and whatever else was written. PCI GPUs: the register file behind BAR 5.
    pub(crate) fn reg_read(&self, q: &QueueExec, reg: u32) -> u32 {
        match &q.port {
            Some(p) => p.read_reg(reg),
            None => self.kfd_regs.get(q.gpu).and_then(|r| r.get(&reg).copied()).unwrap_or(0),
        }
    }

    /// A GPU register write by a wait. KFD GPUs: writing the HDP flush request
    /// completes the flush at once (there is no host data path cache to flush). PCI
    /// GPUs: a write to the register file, with its side effects.
    pub(crate) fn reg_write(&mut self, q: &QueueExec, reg: u32, value: u32) {
        if let Some(p) = &q.port {
            return p.write_reg(reg, value);
        }
        let (req, done) = amd_packets::pm4::recipes::hdp_flush_regs(q.target);
        let Some(r) = self.kfd_regs.get_mut(q.gpu) else { return };
        r.insert(reg, value);
        if reg == req {
            r.insert(done, value);
        }
    }

    // The engines' own accesses (packets run under the driver lock): each takes the
    // shared lock on the address space for the one access. Every writer of the
    // address space holds the driver lock, so none is queued while these run and they
    // never wait; each guard is a temporary, so none nests.
    fn vm_read_words(&self, vm: &Vm, addr: u64, n: usize) -> MemResult<Vec<u32>> {
        self.space.read().vm_read_words(vm, addr, n)
    }
    fn vm_load<W: Word>(&self, vm: &Vm, addr: u64) -> MemResult<W> {
        self.space.read().vm_load(vm, addr)
    }
    fn vm_store<W: Word>(&self, vm: &Vm, addr: u64, v: W) -> MemResult<()> {
        self.space.read().vm_store(vm, addr, v)
    }
    fn vm_copy(&self, vm: &Vm, dst: u64, src: u64, len: u64) -> MemResult<()> {
        self.space.read().vm_copy(vm, dst, src, len, len)
    }
    fn vm_fill(&self, vm: &Vm, dst: u64, pattern: u32, len: u64) -> MemResult<()> {
        self.space.read().vm_fill(vm, dst, pattern, len, len)
    }

    fn publish_rptr(&self, q: &QueueExec) -> Result<(), Stop> {
        let v = match q.engine {
            Engine::Pm4 => q.rptr,
            Engine::Sdma => q.rptr * 4,
            Engine::Aql => q.rptr / AQL_PACKET_DWORDS,
        };
        if let Some(a) = q.rptr_addr {
            self.vm_store::<u64>(&q.vm, a, v)?;
        }
        Ok(())
    }

    /// Reads `n` ring dwords from dword position `pos`, wrapping at the ring's end.
    fn ring_words(&self, q: &QueueExec, pos: u64, n: u64) -> Result<Vec<u32>, Stop> {
        let start = pos % q.ring_dwords;
        let first = n.min(q.ring_dwords - start);
        let at = start
            .checked_mul(4)
            .and_then(|o| q.ring_base.checked_add(o))
            .ok_or_else(|| Stop::Error(format!("ring base {:#x} wraps the address space", q.ring_base)))?;
        let mut words = self.vm_read_words(&q.vm, at, first as usize)?;
        if first < n {
            words.extend(self.vm_read_words(&q.vm, q.ring_base, (n - first) as usize)?);
        }
        Ok(words)
    }

    /// Moves `q`'s read pointer past the ring packet of `len` dwords that completed
    /// (an AQL packet is retired: see `aql_retire`).
    fn advance_ring(&mut self, q: &mut QueueExec, len: u64) -> Result<(), Stop> {
        if q.engine == Engine::Aql {
            return self.aql_retire(q, len);
        }
        q.rptr += len;
        self.publish_rptr(q)
    }

    /// Completes the packet of `len` dwords at the front of `q` (ring or IB).
    fn complete(&mut self, q: &mut QueueExec, len: usize, from_ring: bool) -> Result<(), Stop> {
        q.counters.packets += 1;
        if from_ring {
            self.advance_ring(q, len as u64)
        } else {
            if let Some(f) = q.ib.last_mut() {
                f.pos += len;
            }
            Ok(())
        }
    }

    /// Runs one packet of `q` (from its IB stack, else from the ring). A long
    /// operation is started only if `may_start`.
    fn step(&mut self, q: &mut QueueExec, may_start: bool) -> Result<Step, Stop> {
        if let Some(frame) = q.ib.last() {
            if frame.pos >= frame.words.len() {
                q.ib.pop();
                if q.ib.is_empty() {
                    self.advance_ring(q, q.ib_ring_len)?;
                }
                return Ok(Step::Progress);
            }
            let words = frame.words[frame.pos..].to_vec();
            let (len, exec) = self.exec_packet(q, &words, None)?;
            match exec {
                Exec::Blocked => return Ok(Step::Blocked),
                Exec::Done => {}
                Exec::Long(op) => return Ok(self.start_long(q, op, len, false, may_start, None)),
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
            self.complete(q, len, false)?;
            return Ok(Step::Progress);
        }

        let wptr_raw = match &q.wptr {
            WptrSource::Memory(a) => self.vm_load::<u64>(&q.vm, *a)?,
            // Bound to a slot inside the page (checked when bound).
            WptrSource::Doorbell(page, off) => page
                .load_u64(*off)
                .ok_or_else(|| Stop::Error(format!("doorbell offset {off:#x} is outside the doorbell page")))?,
            WptrSource::Unbound => return Ok(Step::Empty),
        };
        let wptr = match q.engine {
            Engine::Pm4 => wptr_raw,
            Engine::Aql => wptr_raw
                .checked_mul(AQL_PACKET_DWORDS)
                .ok_or_else(|| Stop::Error(format!("AQL write_dispatch_id {wptr_raw:#x} is past any ring")))?,
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
        // A PM4 packet is read 16 dwords at a time (more when it needs them); an AQL
        // packet is 16 dwords.
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
                    self.complete(q, len, true)?;
                    return Ok(Step::Progress);
                }
                Ok((len, Exec::Long(op))) => {
                    return Ok(self.start_long(q, op, len, true, may_start, Some(q.rptr)));
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

    /// Marks the packet of `op` in flight (or defers it when another long operation
    /// runs on this GPU).
    fn start_long(
        &mut self,
        q: &mut QueueExec,
        op: LongOp,
        len: usize,
        from_ring: bool,
        may_start: bool,
        ring_pos: Option<u64>,
    ) -> Step {
        if !may_start {
            return Step::Deferred;
        }
        q.in_flight = Some(InFlight { len, from_ring });
        let what = match &op {
            LongOp::Dispatch(info) => {
                q.counters.dispatches += 1;
                if self.dispatch_log.len() >= DISPATCH_LOG_LIMIT {
                    self.dispatch_log.pop_front();
                }
                self.dispatch_log.push_back(info.clone());
                match (q.engine, ring_pos) {
                    (Engine::Aql, Some(p)) => format!("AQL kernel dispatch {}", p / AQL_PACKET_DWORDS),
                    _ => format!("DISPATCH_DIRECT{}", packet_place(ring_pos, q.ring_dwords)),
                }
            }
            LongOp::Copy { .. } => format!("SDMA_COPY_LINEAR{}", packet_place(ring_pos, q.ring_dwords)),
            LongOp::Fill { .. } => format!("SDMA_CONST_FILL{}", packet_place(ring_pos, q.ring_dwords)),
        };
        Step::Long(op, what)
    }

    fn exec_packet(&mut self, q: &mut QueueExec, words: &[u32], ring_pos: Option<u64>) -> Result<(usize, Exec), Stop> {
        match (q.engine, ring_pos) {
            (Engine::Aql, Some(pos)) => self.exec_aql(q, words, pos),
            // An AQL queue's indirect buffers hold PM4.
            (Engine::Pm4 | Engine::Aql, _) => self.exec_pm4(q, words, ring_pos),
            (Engine::Sdma, _) => self.exec_sdma(q, words, ring_pos),
        }
    }

    /// Stops `q` for good on `stop`, recording why, and raises what the driver would:
    /// the memory-fault events for a fault, the hardware-exception events otherwise.
    /// A fault of KFD GPU `g` (`None`: a PCI GPU's) in words, with what made it and,
    /// where the memory layer can tell, what the address was
    /// ([`AddressSpace::explain`]).
    fn fault_words(&self, g: Option<usize>, f: &MemoryFault, what: Option<&str>) -> String {
        let at = what.map(|w| format!(" in {w}")).unwrap_or_default();
        match g.and_then(|g| self.space.read().explain(g, f)) {
            Some(Explained::Unwritten(byte)) => format!(
                "the sanitizer stopped a read of {:#x}{at}: {byte}, which nothing has written",
                f.va
            ),
            Some(Explained::Near(near)) => format!("{}{at}: {near}", describe_fault(f)),
            None => format!("{}{at}", describe_fault(f)),
        }
    }

    fn stop_queue(&mut self, q: &mut QueueExec, stop: Stop) {
        // A PCI GPU's GMC latched a fault itself (status registers, IH vector); a
        // stopped PCI queue is only seen in its state.
        let g = q.port.is_none().then_some(q.gpu);
        let (fault, reason) = match stop {
            Stop::Cancelled => return,
            Stop::Fault(f) => (Some(f), self.fault_words(g, &f, None)),
            Stop::FaultIn(f, what) => (Some(f), self.fault_words(g, &f, Some(&what))),
            Stop::Error(e) => (None, e),
            Stop::NeedMore(n) => (None, format!("truncated packet needs {n} dwords")),
        };
        q.stop_reason = Some(format!("queue {} stopped: {reason}", q.id));
        match fault {
            Some(f) => {
                q.status = QueueStatus::Faulted(f);
                if let Some(gpu) = g {
                    self.reports.push(Report::MemoryFault { gpu, fault: f });
                }
            }
            None => {
                q.status = QueueStatus::Error(reason);
                // A queue that stops on bad input is a hung engine to the driver, which
                // reports it through the hardware-exception events.
                if let Some(gpu) = g {
                    self.reports.push(Report::Hang { gpu });
                }
            }
        }
        self.reports.push(Report::Stopped { queue: q.id });
    }

    /// Runs every queue of GPU `g` until each is empty, blocked, stopped or out of
    /// its budget of packets; starts at most one long operation.
    pub(crate) fn run_gpu(&mut self, g: usize, shutdown: bool) -> GpuRun {
        let mut run = GpuRun::default();
        // Round robin for long operations: the queue after the last one to start goes
        // first. The queues are taken out while they run (a queue's packets reach the
        // engines' other state, never the other queues).
        let after = self.last_long.get(&g).copied().unwrap_or(0);
        let mut execs = std::mem::take(&mut self.execs);
        let mut turn = Turn {
            g,
            shutdown,
            free: !self.running.contains_key(&g),
            now: None,
        };
        for (&id, q) in execs.range_mut((Bound::Excluded(after), Bound::Unbounded)) {
            self.run_queue(id, q, &mut turn, &mut run);
        }
        for (&id, q) in execs.range_mut(..=after) {
            self.run_queue(id, q, &mut turn, &mut run);
        }
        self.execs = execs;
        run
    }

    /// One queue's part of [`Engines::run_gpu`].
    #[inline]
    fn run_queue(&mut self, id: u32, q: &mut QueueExec, turn: &mut Turn, run: &mut GpuRun) {
        const BUDGET: usize = 1 << 14;
        let g = turn.g;
        if q.gpu != g
            || q.hung
            || q.in_flight.is_some()
            || matches!(q.status, QueueStatus::Error(_) | QueueStatus::Faulted(_))
        {
            return;
        }
        if let Some(t) = q.not_before {
            // The clock read once a turn, where a queue waits out a delay.
            let now = *turn.now.get_or_insert_with(Instant::now);
            if now < t {
                run.wake_at = Some(run.wake_at.map_or(t, |w| w.min(t)));
                return;
            }
        }
        for _ in 0..BUDGET {
            // No long operation runs on the GPU, and none started this turn.
            let may_start = run.started.is_none() && turn.free;
            match self.step(q, may_start) {
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
                Ok(Step::Deferred) => break,
                Ok(Step::Long(op, what)) => {
                    q.status = QueueStatus::Running;
                    let stop = Arc::new(AtomicBool::new(turn.shutdown));
                    self.running.insert(g, (id, stop.clone()));
                    self.last_long.insert(g, id);
                    // A PCI GPU's view carries the stop flag: an operation stopped
                    // by an unbinding or reset latches no more faults.
                    let vm = match &q.vm {
                        Vm::Pci(p) => Vm::Pci(Arc::new(p.for_operation(&stop))),
                        vm => vm.clone(),
                    };
                    run.started = Some(Started {
                        queue: id,
                        gpu: g,
                        vm,
                        op,
                        stop,
                        what,
                    });
                    break;
                }
                Err(stop) => {
                    self.stop_queue(q, stop);
                    break;
                }
            }
        }
    }

    /// Completes (or stops) the queue of a long operation once it ran; a queue
    /// destroyed meanwhile is gone and nothing happens to it.
    pub(crate) fn finish_long(&mut self, s: &Started, result: Result<(), Stop>) {
        if self.running.get(&s.gpu).is_some_and(|(id, _)| *id == s.queue) {
            self.running.remove(&s.gpu);
        }
        let Some(mut q) = self.execs.remove(&s.queue) else {
            return;
        };
        let Some(f) = q.in_flight.take() else {
            self.execs.insert(s.queue, q);
            return;
        };
        let result = result.and_then(|()| {
            if let LongOp::Copy { len, .. } | LongOp::Fill { len, .. } = s.op {
                q.counters.bytes += len;
            }
            self.complete(&mut q, f.len, f.from_ring)
        });
        match result {
            Ok(()) => q.status = QueueStatus::Running,
            // Stopped from outside with the queue still there (the mock is being
            // dropped): the packet stays where it was.
            Err(Stop::Cancelled) => {}
            Err(Stop::Fault(fault)) => self.stop_queue(&mut q, Stop::FaultIn(fault, s.what.clone())),
            Err(Stop::FaultIn(fault, at)) => self.stop_queue(&mut q, Stop::FaultIn(fault, format!("{at}, {}", s.what))),
            Err(e) => self.stop_queue(&mut q, e),
        }
        self.execs.insert(s.queue, q);
    }
}

/// Runs a long operation with the driver lock released: the address space is locked
/// shared one slice at a time, and the operation ends early when `s.stop` is set.
pub(crate) fn run_long(space: &RwLock<AddressSpace>, kernels: &SharedExecutor, s: &Started) -> Result<(), Stop> {
    let vm = &s.vm;
    let stopped = || s.stop.load(Ordering::Acquire);
    match &s.op {
        LongOp::Dispatch(info) => {
            let mut exec = kernels.lock();
            let mem = GpuMemory::new(space, vm, &s.stop);
            // An executor that panics (a bug in it) stops this queue with an error
            // rather than taking the device thread down with it.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| exec.dispatch(&mem, info)))
                .unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    Err(KernelError::Unsupported(format!("the kernel executor panicked: {msg}")))
                });
            match result {
                Ok(()) => Ok(()),
                // Whatever a stopped dispatch met after its stop is not its queue's.
                Err(_) if stopped() => Err(Stop::Cancelled),
                Err(KernelError::Fault(f)) => Err(Stop::Fault(f)),
                Err(KernelError::Exec(amd_isa::ExecError::Stopped)) | Err(KernelError::Stopped) => Err(Stop::Cancelled),
                Err(KernelError::Exec(amd_isa::ExecError::Fault { fault, at, .. })) => {
                    Err(Stop::FaultIn(fault, format!("kernel {at}")))
                }
                Err(KernelError::Exec(amd_isa::ExecError::Fetch { fault, pc })) => Err(Stop::FaultIn(
                    fault,
                    format!("kernel fetching the instruction at {pc:#x}"),
                )),
                Err(KernelError::Exec(e)) => Err(Stop::Error(format!("kernel: {e}"))),
                Err(KernelError::Unsupported(e)) => Err(Stop::Error(format!("kernel: {e}"))),
            }
        }
        &LongOp::Copy { dst, src, len } => copy_slices(space, vm, dst, src, len, &stopped),
        &LongOp::Fill { dst, pattern, len } => {
            let mut space = space.read();
            let mut done = 0u64;
            while done < len {
                if stopped() {
                    return Err(Stop::Cancelled);
                }
                // Slices of whole dwords keep the pattern in phase.
                let n = (len - done).min(SLICE_BYTES);
                let d = dst.checked_add(done).ok_or(MemoryFault {
                    va: dst,
                    not_present: true,
                    write: true,
                    ..Default::default()
                })?;
                space.vm_fill(vm, d, pattern, n, len)?;
                done += n;
                RwLockReadGuard::bump(&mut space);
            }
            Ok(())
        }
    }
}

/// `len` bytes from `src` to `dst` a slice at a time, each slice under the shared lock
/// on the address space (released between slices for a writer that waits), until
/// `stopped` says so. Overlapping ranges copy as memmove: back to front when the
/// destination starts inside the source.
fn copy_slices(
    space: &RwLock<AddressSpace>,
    vm: &Vm,
    dst: u64,
    src: u64,
    len: u64,
    stopped: &dyn Fn() -> bool,
) -> Result<(), Stop> {
    let mut space = space.read();
    let backward = dst > src && dst - src < len;
    let mut done = 0u64;
    while done < len {
        if stopped() {
            return Err(Stop::Cancelled);
        }
        let n = (len - done).min(SLICE_BYTES);
        let off = if backward { len - done - n } else { done };
        let (Some(d), Some(s)) = (dst.checked_add(off), src.checked_add(off)) else {
            return Err(Stop::Fault(MemoryFault {
                va: dst,
                not_present: true,
                write: true,
                ..Default::default()
            }));
        };
        space.vm_copy(vm, d, s, n, len)?;
        done += n;
        RwLockReadGuard::bump(&mut space);
    }
    Ok(())
}

/// Maps a decode error to a queue stop; a truncated ring packet asks for more dwords
/// (an IB is read whole, so there it is an error).
pub(crate) fn decode_stop(e: amd_packets::PacketError, what: &str, ring_pos: Option<u64>, ring_dwords: u64) -> Stop {
    match (e, ring_pos) {
        (amd_packets::PacketError::Truncated { needed, .. }, Some(_)) => Stop::NeedMore(needed),
        (e, _) => Stop::Error(format!("{what}{}: {e}", packet_place(ring_pos, ring_dwords))),
    }
}

/// A fault while the packet `pkt` ran, told with the packet and where it was (see
/// [`packet_place`]); other stops as they are.
pub(crate) fn fault_in_packet(e: Stop, pkt: &dyn std::fmt::Display, ring_pos: Option<u64>, ring_dwords: u64) -> Stop {
    match e {
        Stop::Fault(f) => Stop::FaultIn(f, format!("{pkt}{}", packet_place(ring_pos, ring_dwords))),
        e => e,
    }
}
