//! The AQL packet processor: the command processor's behaviour on an AQL queue
//! (`KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`).
//!
//! The ring holds 64-byte packets; the queue's write pointer is `write_dispatch_id`
//! and its read pointer `read_dispatch_id` in the client's `amd_queue_t`, both in
//! packets. A packet whose header still says INVALID has not been published: the
//! queue waits there. A kernel dispatch becomes the registers a DISPATCH_DIRECT would
//! have, built as the firmware builds them: entry point and RSRC1..3 from the kernel
//! descriptor, LDS from the packet's group segment, the user SGPRs its
//! `kernel_code_properties` enable, scratch from `amd_queue_t`, the grid in threads
//! with partial last workgroups. A dispatch that needs more scratch than the queue
//! has asks the runtime for it as ROCr expects: the queue's `queue_inactive_signal`
//! goes from 0 to the request code (with its event), and the dispatch waits until the
//! runtime has written the new scratch and set the signal back to 0. Barrier-AND/OR
//! packets wait until all/any of their signals read 0 or less (as AMD's firmware
//! and emulator take them: a negative, error value satisfies a barrier rather than
//! stopping the queue). AMD's vendor packets: PM4-IB runs a PM4 indirect buffer;
//! BARRIER_VALUE waits until a signal's value, masked, compares as asked. When a
//! packet completes, its header is set to INVALID, `read_dispatch_id` moves past it,
//! and its completion signal (an `amd_signal_t`) gets its timestamps (profiling
//! queues), a decrement, and, with an event mailbox, the event id and an interrupt.
//!
//! Packets run one at a time and each completes before the next starts, so the
//! barrier bit and the acquire/release fences hold without more (the mock has no
//! caches to flush).

use amd_packets::aql::{self, BarrierKind, KernelDescriptor, KernelDispatch, Packet};
use amd_packets::pm4::DispatchInitiator;

use super::executor::DispatchInfo;
use super::{Engines, Exec, LongOp, QueueExec, Stop};

/// What the retiring of the packet at the read pointer needs (set when it starts).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AqlPending {
    /// The packet's slot in the ring (its header is invalidated).
    slot: u64,
    /// Its completion signal (0: none).
    signal: u64,
    /// It is a kernel dispatch.
    dispatch: bool,
    /// The GPU clock when it started.
    start_ts: u64,
}

/// LDS a workgroup may have (64 KiB on gfx10.3 to gfx12), in RSRC2.LDS_SIZE's
/// 512-byte blocks.
const MAX_LDS_BLOCKS: u32 = 128;
/// `queue_inactive_signal` values: a dispatch needs scratch (wave32: with bit 10).
const SCRATCH_REQUEST_WAVE32: u64 = 0x401;
/// `AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE`: the runtime frees the scratch after the
/// dispatch that asked for it, told so by this `queue_inactive_signal` value.
const USE_SCRATCH_ONCE: u32 = 1 << 4;
const SCRATCH_RELEASE: u64 = 0x200;

impl Engines {
    /// Runs the AQL packet at ring dword `pos` (the read pointer).
    pub(super) fn exec_aql(&mut self, q: &mut QueueExec, words: &[u32], pos: u64) -> Result<(usize, Exec), Stop> {
        let index = pos / aql::PACKET_DWORDS as u64;
        let slot = q.ring_base + (pos % q.ring_dwords) * 4;
        let pkt = Packet::decode(q.target, words)
            .map_err(|e| Stop::Error(format!("AQL packet {index} (ring byte {:#x}): {e}", slot - q.ring_base)))?;
        if let Packet::Invalid(_) = pkt {
            // Not published yet: the slot is looked at again later.
            return Ok((aql::PACKET_DWORDS, Exec::Blocked));
        }
        let signal = pkt.completion_signal();
        q.aql = Some(AqlPending {
            slot,
            signal,
            dispatch: matches!(pkt, Packet::KernelDispatch(_)),
            // Only a completion signal gets the timestamps.
            start_ts: if signal != 0 { self.gpu_clock() } else { 0 },
        });
        let at = |what: &str| format!("AQL {what} {index}");
        let exec = match pkt {
            Packet::Invalid(_) => Exec::Blocked,
            Packet::KernelDispatch(d) => {
                let info = self.aql_dispatch(q, &d, slot, index).map_err(|e| match e {
                    Stop::Error(e) => Stop::Error(format!("{}: {e}", at("kernel dispatch"))),
                    Stop::Fault(f) => Stop::FaultIn(f, at("kernel dispatch")),
                    e => e,
                })?;
                match info {
                    Some(info) => Exec::Long(LongOp::Dispatch(info)),
                    // Waiting for the runtime's scratch.
                    None => Exec::Blocked,
                }
            }
            Packet::Barrier(b) => {
                let mut done = 0;
                let mut used = 0;
                for &s in b.dep_signals.iter().filter(|&&s| s != 0) {
                    used += 1;
                    let v = self.signal_value(q, s).map_err(|f| Stop::FaultIn(f, at("barrier")))?;
                    done += (v <= 0) as usize;
                }
                let met = match b.kind() {
                    BarrierKind::And => done == used,
                    BarrierKind::Or => used == 0 || done > 0,
                };
                if met { Exec::Done } else { Exec::Blocked }
            }
            Packet::BarrierValue(b) => {
                let met = match b.signal {
                    0 => true,
                    s => {
                        let v = self
                            .signal_value(q, s)
                            .map_err(|f| Stop::FaultIn(f, at("barrier-value packet")))?;
                        b.cond.holds(v & b.mask, b.value)
                    }
                };
                if met { Exec::Done } else { Exec::Blocked }
            }
            Packet::Pm4Ib(p) => {
                if p.ib.valid {
                    let words = self
                        .vm_read_words(&q.vm, p.ib.addr(), p.ib.size_dwords() as usize)
                        .map_err(|f| {
                            Stop::FaultIn(f, format!("reading the indirect buffer of {}", at("PM4-IB packet")))
                        })?;
                    Exec::Ib(words)
                } else {
                    Exec::Done
                }
            }
            Packet::AgentDispatch(p) => {
                return Err(Stop::Error(format!(
                    "{}: agent dispatch (function {}) is for agents that run host functions, not a GPU queue",
                    at("packet"),
                    p.function
                )));
            }
        };
        Ok((aql::PACKET_DWORDS, exec))
    }

    /// The value of the `amd_signal_t` at `s`.
    fn signal_value(&self, q: &QueueExec, s: u64) -> crate::mem::MemResult<i64> {
        Ok(self.vm_load::<u64>(&q.vm, s.wrapping_add(aql::signal::VALUE))? as i64)
    }

    /// The base of the queue's `amd_queue_t`: the read pointer's address less the
    /// offset the structure stores beside it.
    fn aql_queue_base(&self, q: &QueueExec) -> Result<u64, Stop> {
        let rptr = q
            .rptr_addr
            .ok_or_else(|| Stop::Error("AQL queue without a read pointer address".into()))?;
        let off = self.vm_load::<u32>(&q.vm, rptr.wrapping_add(8))?;
        rptr.checked_sub(u64::from(off)).ok_or_else(|| {
            Stop::Error(format!(
                "amd_queue_t.read_dispatch_id_field_base_byte_offset {off:#x} is beyond the read pointer {rptr:#x}"
            ))
        })
    }

    /// The registers of a kernel dispatch packet, as the firmware programs them; `None`
    /// while it waits for the runtime to give the queue scratch.
    fn aql_dispatch(
        &mut self,
        q: &mut QueueExec,
        d: &KernelDispatch,
        slot: u64,
        index: u64,
    ) -> Result<Option<DispatchInfo>, Stop> {
        if d.kernel_object % 64 != 0 {
            return Err(Stop::Error(format!(
                "kernel_object {:#x} is not a 64-byte aligned kernel descriptor",
                d.kernel_object
            )));
        }
        let mut bytes = [0u8; KernelDescriptor::BYTES];
        self.space.read().vm_read(&q.vm, d.kernel_object, &mut bytes)?;
        let desc = KernelDescriptor::from_bytes(&bytes);
        let entry = desc.entry_offset;
        let code_addr = d
            .kernel_object
            .checked_add_signed(entry)
            .filter(|a| a % 256 == 0)
            .ok_or_else(|| {
                Stop::Error(format!(
                    "kernel descriptor at {:#x}: entry offset {:#x} does not give a 256-byte aligned address",
                    d.kernel_object, entry
                ))
            })?;
        let wave32 = desc.has(KernelDescriptor::WAVEFRONT_SIZE32);
        // The packet's sizes include the descriptor's fixed ones; a packet that gives
        // less gets those.
        let group = d.group_segment_size.max(desc.group_segment_size);
        let private = d.private_segment_size.max(desc.private_segment_size);
        let lds_blocks = group.div_ceil(512);
        if lds_blocks > MAX_LDS_BLOCKS {
            return Err(Stop::Error(format!(
                "group segment of {group} bytes is more than the {} bytes of LDS a workgroup has",
                MAX_LDS_BLOCKS * 512
            )));
        }
        let rsrc2 = desc.rsrc2 & !(0x1ff << 15) | lds_blocks << 15;
        let base = self.aql_queue_base(q)?;
        let load32 = |off: u64| self.vm_load::<u32>(&q.vm, base + off);
        let load64 = |off: u64| self.vm_load::<u64>(&q.vm, base + off);
        let scratch_base = load64(aql::queue::SCRATCH_BACKING_MEMORY_LOCATION)?;
        if private > 0 {
            let lane = load32(aql::queue::SCRATCH_WAVE64_LANE_BYTE_SIZE)?;
            if scratch_base == 0 || lane < private {
                self.request_scratch(q, base, private, lane)?;
                return Ok(None);
            }
        }
        // The SGPRs the descriptor enables, in the ABI's order; at most 4 + 2 × 5 + 1 =
        // 15 of the 16 COMPUTE_USER_DATA registers.
        let mut user_data = [0u32; 16];
        let mut n = 0;
        let mut push = |words: &[u32]| {
            user_data[n..n + words.len()].copy_from_slice(words);
            n += words.len();
        };
        if desc.has(KernelDescriptor::PRIVATE_SEGMENT_BUFFER) {
            for i in 0..4 {
                push(&[load32(aql::queue::SCRATCH_RESOURCE_DESCRIPTOR + 4 * i)?]);
            }
        }
        for (bit, v) in [
            (KernelDescriptor::DISPATCH_PTR, slot),
            (KernelDescriptor::QUEUE_PTR, base),
            (KernelDescriptor::KERNARG_SEGMENT_PTR, d.kernarg_address),
            (KernelDescriptor::DISPATCH_ID, index),
            (KernelDescriptor::FLAT_SCRATCH_INIT, scratch_base),
        ] {
            if desc.has(bit) {
                push(&amd_packets::lo_hi(v));
            }
        }
        if desc.has(KernelDescriptor::PRIVATE_SEGMENT_SIZE) {
            push(&[private]);
        }
        let dims = usize::from(d.dimensions);
        let block = std::array::from_fn(|k| if k < dims { u32::from(d.workgroup_size[k]) } else { 1 });
        let grid = std::array::from_fn(|k| if k < dims { d.grid_size[k] } else { 1 });
        Ok(Some(DispatchInfo {
            gpu: q.gpu,
            queue: q.id,
            target: q.target,
            sanitize: self.sanitize,
            regs: amd_isa::Dispatch {
                code_addr,
                rsrc: [desc.rsrc1, rsrc2, desc.rsrc3],
                user_data,
                block,
                grid,
                tmpring_size: load32(aql::queue::COMPUTE_TMPRING_SIZE)?,
                scratch_base,
                // The DISPATCH_INITIATOR the firmware builds for an AQL dispatch.
                initiator: DispatchInitiator::COMPUTE_SHADER_EN
                    .with(DispatchInitiator::PARTIAL_TG_EN)
                    .with(DispatchInitiator::USE_THREAD_DIMENSIONS)
                    .with(if wave32 {
                        DispatchInitiator::CS_W32_EN
                    } else {
                        DispatchInitiator(0)
                    })
                    .0,
                wave64: !wave32,
            },
        }))
    }

    /// Asks the runtime for scratch as ROCr expects the firmware to: the queue's
    /// `queue_inactive_signal` goes from 0 to the request code, its event mailbox gets
    /// the event id and the event fires. A request already made (the signal not back
    /// at 0) is not repeated.
    fn request_scratch(&mut self, q: &mut QueueExec, base: u64, private: u32, lane: u32) -> Result<(), Stop> {
        let sig = self.vm_load::<u64>(&q.vm, base + aql::queue::QUEUE_INACTIVE_SIGNAL)?;
        if sig == 0 {
            return Err(Stop::Error(format!(
                "it needs {private} bytes of scratch per work-item, the queue has {lane}, and its amd_queue_t has \
                 no queue_inactive_signal to ask the runtime for more"
            )));
        }
        self.notify_runtime(q, sig, SCRATCH_REQUEST_WAVE32)
    }

    /// Sets the runtime's queue signal `sig` from 0 to `code` and raises its event; a
    /// signal not at 0 is left alone (the runtime has not answered the last one).
    fn notify_runtime(&mut self, q: &mut QueueExec, sig: u64, code: u64) -> Result<(), Stop> {
        let set = self
            .space
            .read()
            .vm_rmw::<u64, ()>(&q.vm, sig.wrapping_add(aql::signal::VALUE), |v| {
                if v == 0 { Ok(code) } else { Err(()) }
            })?;
        if set.is_ok() {
            self.raise_signal_event(q, sig)?;
        }
        Ok(())
    }

    /// Writes signal `s`'s event id into its mailbox and raises the interrupt (none
    /// without a mailbox).
    fn raise_signal_event(&mut self, q: &mut QueueExec, s: u64) -> Result<(), Stop> {
        let mailbox = self.vm_load::<u64>(&q.vm, s.wrapping_add(aql::signal::EVENT_MAILBOX_PTR))?;
        if mailbox != 0 {
            let id = self.vm_load::<u32>(&q.vm, s.wrapping_add(aql::signal::EVENT_ID))?;
            self.vm_store::<u64>(&q.vm, mailbox, u64::from(id))?;
            q.counters.interrupts += 1;
            self.interrupt(q, id);
        }
        Ok(())
    }

    /// Retires the AQL packet at the read pointer: its header becomes INVALID, the
    /// read pointer moves past it, and its completion signal is completed.
    pub(super) fn aql_retire(&mut self, q: &mut QueueExec, len: u64) -> Result<(), Stop> {
        let p = q.aql.take();
        if let Some(p) = p {
            self.space
                .read()
                .vm_rmw::<u32, ()>(&q.vm, p.slot, |w| Ok(w & !0xff | aql::PacketType::Invalid as u32))?
                .ok();
        }
        q.rptr += len;
        self.publish_rptr(q)?;
        // Most packets (tinygrad's all) have neither a completion signal nor a
        // dispatch's scratch to give back: nothing more to read.
        let Some(p) = p.filter(|p| p.signal != 0 || p.dispatch) else {
            return Ok(());
        };
        let base = self.aql_queue_base(q)?;
        let props = self.vm_load::<u32>(&q.vm, base + aql::queue::QUEUE_PROPERTIES)?;
        if p.dispatch && props & USE_SCRATCH_ONCE != 0 {
            // The runtime gave this dispatch scratch for it alone: it may take it back.
            let sig = self.vm_load::<u64>(&q.vm, base + aql::queue::QUEUE_INACTIVE_SIGNAL)?;
            if sig != 0 {
                self.notify_runtime(q, sig, SCRATCH_RELEASE)?;
            }
        }
        if p.signal == 0 {
            return Ok(());
        }
        let s = p.signal;
        if props & aql::queue::PROPERTIES_ENABLE_PROFILING != 0 {
            self.vm_store::<u64>(&q.vm, s.wrapping_add(aql::signal::START_TS), p.start_ts)?;
            self.vm_store::<u64>(&q.vm, s.wrapping_add(aql::signal::END_TS), self.gpu_clock())?;
        }
        self.space
            .read()
            .vm_rmw::<u64, ()>(&q.vm, s.wrapping_add(aql::signal::VALUE), |v| Ok(v.wrapping_sub(1)))?
            .ok();
        self.raise_signal_event(q, s)
    }
}
