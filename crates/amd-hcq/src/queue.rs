//! Command builders for the compute (PM4) and copy (SDMA) queues. A builder collects
//! dwords; [`crate::Device::submit_compute`] / [`crate::Device::submit_copy`] put them
//! in the rings.

use amd_packets::pm4::recipes::{self, Signal as SignalPkt};
use amd_packets::pm4::{ReleaseMem, WaitRegMem};
use amd_packets::sdma::{self, CopyLinear, Fence, PollRegmem, Timestamp, Trap};
use amd_packets::{CmdSink, GfxTarget};

use crate::iface::DeviceInterface;
use crate::signal::Signal;
use crate::{HcqError, Result};

/// A PM4 command list for the compute queue.
#[derive(Debug, Clone)]
pub struct ComputeQueue {
    pub(crate) target: GfxTarget,
    pub(crate) cmds: Vec<u32>,
}

impl ComputeQueue {
    /// An empty list for `target`.
    pub fn new(target: GfxTarget) -> Self {
        ComputeQueue {
            target,
            cmds: Vec::with_capacity(128),
        }
    }

    /// The dwords so far.
    pub fn dwords(&self) -> &[u32] {
        &self.cmds
    }

    /// Dwords so far: the offset the next command starts at.
    pub fn len(&self) -> usize {
        self.cmds.len()
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.cmds.is_empty()
    }

    /// Stalls the queue until `sig` is at least `value` (compared in 32 bits, as
    /// WAIT_REG_MEM does).
    pub fn wait<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: u64) -> &mut Self {
        self.wait_addr(sig.addr(), value)
    }

    /// Stalls the queue until the signal value at `addr` is at least `value`.
    pub fn wait_addr(&mut self, addr: u64, value: u64) -> &mut Self {
        WaitRegMem::memory_ge(addr, value as u32).encode(self.target, &mut self.cmds);
        self
    }

    /// Sets `sig` to `value` once prior work is done (and wakes sleepers of a timeline).
    pub fn signal<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: u64) -> &mut Self {
        SignalPkt {
            address: sig.addr(),
            value,
            event: sig.event(),
        }
        .encode(self.target, &mut self.cmds);
        self
    }

    /// Writes the GPU clock into `sig`'s timestamp once prior work is done.
    pub fn timestamp<I: DeviceInterface>(&mut self, sig: &Signal<I>) -> &mut Self {
        ReleaseMem::timestamp(sig.timestamp_addr()).encode(self.target, &mut self.cmds);
        self
    }

    /// Flushes HDP and invalidates/writes back every cache level.
    pub fn memory_barrier(&mut self) -> &mut Self {
        recipes::memory_barrier(self.target, &mut self.cmds);
        self
    }

    /// Appends raw dwords (already encoded packets).
    pub fn raw(&mut self, dwords: &[u32]) -> &mut Self {
        self.cmds.put(dwords);
        self
    }
}

/// An SDMA command list for the copy queue. Packet boundaries are kept, so that no
/// packet is split across the ring's end.
#[derive(Debug, Clone)]
pub struct CopyQueue {
    pub(crate) target: GfxTarget,
    pub(crate) cmds: Vec<u32>,
    pub(crate) sizes: Vec<u32>,
    /// Indices (into `sizes`) of packets that must end on an 8-dword boundary of the
    /// ring (SDMA INDIRECT); the ring writer pads before them with NOPs.
    pub(crate) end_aligned: Vec<usize>,
}

impl CopyQueue {
    /// An empty list for `target`.
    pub fn new(target: GfxTarget) -> Self {
        CopyQueue {
            target,
            cmds: Vec::with_capacity(64),
            sizes: Vec::with_capacity(8),
            end_aligned: Vec::new(),
        }
    }

    fn mark(&mut self, start: usize) {
        self.sizes.push((self.cmds.len() - start) as u32);
    }

    /// The dwords so far.
    pub fn dwords(&self) -> &[u32] {
        &self.cmds
    }

    /// Copies `size` bytes from `src` to `dst` (split into packets of at most 4 MiB).
    pub fn copy(&mut self, dst: u64, src: u64, size: u64) -> Result<&mut Self> {
        for p in CopyLinear::split(dst, src, size)? {
            let at = p.encode(self.target, &mut self.cmds);
            self.mark(at);
        }
        Ok(self)
    }

    /// Stalls the queue until `sig` is at least `value`.
    pub fn wait<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: u64) -> &mut Self {
        self.wait_addr(sig.addr(), value)
    }

    /// Stalls the queue until the signal value at `addr` is at least `value`.
    pub fn wait_addr(&mut self, addr: u64, value: u64) -> &mut Self {
        let at = PollRegmem::memory_ge(addr, value as u32).encode(self.target, &mut self.cmds);
        self.mark(at);
        self
    }

    /// Sets `sig` to `value` once prior work is done; for a timeline, also writes its
    /// event mailbox and raises the interrupt.
    pub fn signal<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: u64) -> &mut Self {
        let at = Fence::new(sig.addr(), value as u32).encode(self.target, &mut self.cmds);
        self.mark(at);
        if let Some((mailbox, id)) = sig.event() {
            let at = Fence::new(mailbox, id).encode(self.target, &mut self.cmds);
            self.mark(at);
            // Event ids are below KFD_SIGNAL_EVENT_LIMIT, far inside 28 bits.
            if let Ok(t) = Trap::new(id) {
                let at = t.encode(self.target, &mut self.cmds);
                self.mark(at);
            }
        }
        self
    }

    /// Writes the GPU clock into `sig`'s timestamp.
    pub fn timestamp<I: DeviceInterface>(&mut self, sig: &Signal<I>) -> Result<&mut Self> {
        let t = Timestamp::new(sig.timestamp_addr())
            .map_err(|e| HcqError::InvalidArgument(format!("timestamp slot: {e}")))?;
        let at = t.encode(self.target, &mut self.cmds);
        self.mark(at);
        Ok(self)
    }

    /// Runs the `dwords` dwords of SDMA packets at `addr` (32-byte aligned) as an
    /// indirect buffer. The ring writer places the packet so it ends on an 8-dword
    /// boundary, as the engine requires.
    pub fn indirect(&mut self, addr: u64, dwords: u32) -> Result<&mut Self> {
        let ib = sdma::Indirect::new(addr, dwords)?;
        let at = ib.encode(self.target, &mut self.cmds);
        self.end_aligned.push(self.sizes.len());
        self.mark(at);
        Ok(self)
    }

    /// Largest single copy packet.
    pub const MAX_COPY: u32 = sdma::MAX_BYTES_PER_PACKET;
}
