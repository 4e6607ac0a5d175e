//! Command lists for the compute (PM4) and copy (SDMA) queues: one core,
//! [`CmdList`], over the engine's [`Encoding`].
//!
//! A list collects dwords and, for every value given as a [`Sym`] rather than a
//! constant, records where it lands (a *site*). Submitting binds
//! the variables and writes each site; a bound list (see [`crate::BoundQueue`])
//! rewrites only the sites whose values changed since that copy of the list last ran.
//! The core records waits, signals and timestamps the same way for both engines; an
//! [`Encoding`] says only which packets carry them, where their patchable fields sit,
//! and whether the ring must keep packets whole (SDMA) or may wrap anywhere (PM4).

use std::convert::Infallible;
use std::marker::PhantomData;

use amd_packets::pm4::recipes::{self, Signal as SignalPkt};
use amd_packets::pm4::{ReleaseMem, ReleaseMemField, WaitRegMem, WaitRegMemField};
use amd_packets::sdma::{
    self, ConstFill, ConstFillField, CopyLinear, CopyLinearField, Fence, FenceField, PollRegmem, PollRegmemField,
    Timestamp, TimestampField, Trap,
};
use amd_packets::{CmdSink, GfxTarget};

use crate::iface::DeviceInterface;
use crate::profile::Engine;
use crate::record::{Enc, Place, Recording, What};
use crate::signal::Signal;
use crate::sym::{Sym, Var};
use crate::{HcqError, Result};

/// A compute list: PM4 packets for the compute queue.
pub type ComputeQueue = CmdList<Pm4>;

/// A copy list: SDMA packets for the copy queue. Packet boundaries are kept, so that no
/// packet is split across the ring's end.
pub type CopyQueue = CmdList<Sdma>;

/// The compute engine's packets (PM4): [`ComputeQueue`].
#[derive(Debug, Clone, Copy)]
pub struct Pm4;

/// The copy engine's packets (SDMA): [`CopyQueue`].
#[derive(Debug, Clone, Copy)]
pub struct Sdma;

/// What a [`CmdList`] is encoded for: [`Pm4`] or [`Sdma`]. Sealed: the runtime's
/// rings know these two.
pub trait Encoding: sealed::Encode {}

impl Encoding for Pm4 {}
impl Encoding for Sdma {}

pub(crate) mod sealed {
    use super::*;

    /// What differs between the engines: the packets of a wait, a signal and a
    /// timestamp and where their patchable fields are, and how the ring takes the list.
    pub trait Encode: Sized + Copy + std::fmt::Debug + Send + Sync + 'static {
        /// The engine (also the profiling records' name for it).
        const ENGINE: Engine;
        /// The list's name in its `Debug` output.
        const LIST: &'static str;
        /// Dwords a new list has room for.
        const CAPACITY: usize;
        /// Whether packet boundaries are kept: the ring never splits a packet (SDMA),
        /// where PM4 dwords wrap anywhere.
        const WHOLE_PACKETS: bool;
        /// Bytes of a signal's value the packet writes (PM4 64, SDMA 32 bits).
        const SIGNAL_BYTES: u8;
        /// What a timestamp's packet can refuse.
        type StampError: Into<HcqError>;

        /// Dword offsets, in the wait packet, of the address and of the reference value.
        fn wait_fields(t: GfxTarget) -> (usize, usize);
        /// Appends "wait until the 32-bit value at `addr` is at least `value`".
        fn wait(t: GfxTarget, addr: u64, value: u32, out: &mut Vec<u32>);
        /// Dword offsets, in the first signal packet, of the address and of the value.
        fn signal_fields(t: GfxTarget) -> (usize, usize);
        /// Appends the packets writing `value` to `addr` once prior work is done,
        /// raising the KFD `event` (mailbox address, id) when given.
        fn signal(q: &mut CmdList<Self>, addr: u64, value: u64, event: Option<(u64, u32)>);
        /// Dword offset of the address in the timestamp packet.
        fn timestamp_field(t: GfxTarget) -> usize;
        /// Appends "write the GPU clock to `addr`".
        fn timestamp(t: GfxTarget, addr: u64, out: &mut Vec<u32>) -> Result<(), Self::StampError>;
        /// Appends what makes prior writes visible before a launch (PM4: a memory
        /// barrier; nothing for SDMA).
        fn barrier(q: &mut CmdList<Self>);
        /// The list as a [`Work`] for a [`Device::submit_ordered`](crate::Device::submit_ordered) closure.
        fn work(q: &mut CmdList<Self>) -> Work<'_>;
    }
}

use sealed::Encode;

impl Encode for Pm4 {
    const ENGINE: Engine = Engine::Compute;
    const LIST: &'static str = "ComputeQueue";
    const CAPACITY: usize = 128;
    const WHOLE_PACKETS: bool = false;
    const SIGNAL_BYTES: u8 = 8;
    type StampError = Infallible;

    fn wait_fields(t: GfxTarget) -> (usize, usize) {
        (WaitRegMemField::Address.offset(t), WaitRegMemField::Reference.offset(t))
    }

    #[inline]
    fn wait(t: GfxTarget, addr: u64, value: u32, out: &mut Vec<u32>) {
        WaitRegMem::memory_ge(addr, value).encode(t, out);
    }

    fn signal_fields(t: GfxTarget) -> (usize, usize) {
        (ReleaseMemField::Address.offset(t), ReleaseMemField::Data.offset(t))
    }

    #[inline]
    fn signal(q: &mut CmdList<Self>, address: u64, value: u64, event: Option<(u64, u32)>) {
        SignalPkt { address, value, event }.encode(q.target, &mut q.cmds);
    }

    fn timestamp_field(t: GfxTarget) -> usize {
        ReleaseMemField::Address.offset(t)
    }

    #[inline]
    fn timestamp(t: GfxTarget, addr: u64, out: &mut Vec<u32>) -> Result<(), Infallible> {
        ReleaseMem::timestamp(addr).encode(t, out);
        Ok(())
    }

    #[inline]
    fn barrier(q: &mut CmdList<Self>) {
        q.memory_barrier();
    }

    fn work(q: &mut CmdList<Self>) -> Work<'_> {
        Work::Compute(q)
    }
}

impl Encode for Sdma {
    const ENGINE: Engine = Engine::Copy;
    const LIST: &'static str = "CopyQueue";
    const CAPACITY: usize = 64;
    const WHOLE_PACKETS: bool = true;
    const SIGNAL_BYTES: u8 = 4;
    type StampError = HcqError;

    fn wait_fields(t: GfxTarget) -> (usize, usize) {
        (PollRegmemField::Address.offset(t), PollRegmemField::Reference.offset(t))
    }

    fn wait(t: GfxTarget, addr: u64, value: u32, out: &mut Vec<u32>) {
        PollRegmem::memory_ge(addr, value).encode(t, out);
    }

    fn signal_fields(t: GfxTarget) -> (usize, usize) {
        (FenceField::Address.offset(t), FenceField::Data.offset(t))
    }

    fn signal(q: &mut CmdList<Self>, addr: u64, value: u64, event: Option<(u64, u32)>) {
        let t = q.target;
        q.packet(|out| Fence::new_on(t, addr, value as u32).encode(t, out));
        if let Some((mailbox, id)) = event {
            q.packet(|out| Fence::new_on(t, mailbox, id).encode(t, out));
            // Event ids are below KFD_SIGNAL_EVENT_LIMIT, far inside 28 bits.
            if let Ok(tr) = Trap::new(id) {
                q.packet(|out| tr.encode(t, out));
            }
        }
    }

    fn timestamp_field(t: GfxTarget) -> usize {
        TimestampField::Address.offset(t)
    }

    fn timestamp(t: GfxTarget, addr: u64, out: &mut Vec<u32>) -> Result<(), HcqError> {
        Timestamp::new(addr)?.encode(t, out);
        Ok(())
    }

    fn barrier(_: &mut CmdList<Self>) {}

    fn work(q: &mut CmdList<Self>) -> Work<'_> {
        Work::Copy(q)
    }
}

/// A command list for one engine: its dwords, where each packet ends (for an engine
/// whose ring keeps packets whole) and what it records besides (its symbols' sites,
/// kernel arguments, launch checks). Used as [`ComputeQueue`] and [`CopyQueue`].
#[derive(Clone)]
pub struct CmdList<E> {
    pub(crate) target: GfxTarget,
    pub(crate) cmds: Vec<u32>,
    /// Dwords of each packet ([`Sdma`] only: empty for [`Pm4`]).
    pub(crate) sizes: Vec<u32>,
    /// Indices (into `sizes`) of packets that must end on an 8-dword boundary of the
    /// ring (SDMA INDIRECT); the ring writer pads before them with NOPs.
    pub(crate) end_aligned: Vec<usize>,
    pub(crate) rec: Recording,
    /// Whether the list holds dwords its caller wrote as they are
    /// ([`ComputeQueue::raw`]): an AQL queue's transcoder then decodes every packet in
    /// full (the runtime's encoders' packets it reads by their headers).
    pub(crate) raw: bool,
    engine: PhantomData<E>,
}

impl<E: Encoding> std::fmt::Debug for CmdList<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct(E::LIST);
        d.field("target", &self.target).field("cmds", &self.cmds);
        if E::WHOLE_PACKETS {
            d.field("sizes", &self.sizes).field("end_aligned", &self.end_aligned);
        }
        d.field("rec", &self.rec).finish()
    }
}

impl<E: Encoding> CmdList<E> {
    /// An empty list for `target`.
    pub fn new(target: GfxTarget) -> Self {
        CmdList {
            target,
            cmds: Vec::with_capacity(E::CAPACITY),
            sizes: if E::WHOLE_PACKETS {
                Vec::with_capacity(8)
            } else {
                Vec::new()
            },
            end_aligned: Vec::new(),
            rec: Recording::default(),
            raw: false,
            engine: PhantomData,
        }
    }

    /// A list the runtime sends once, right away, and never binds: it keeps nothing
    /// alive (the timeline covers what it names).
    pub(crate) fn transient(target: GfxTarget) -> Self {
        let mut q = Self::new(target);
        q.rec.transient = true;
        q
    }

    /// The dwords so far (sites hold 0 until submitted).
    pub fn dwords(&self) -> &[u32] {
        &self.cmds
    }

    /// Empties the list for reuse (its buffers keep their capacity).
    pub fn clear(&mut self) {
        self.cmds.clear();
        if E::WHOLE_PACKETS {
            self.sizes.clear();
            self.end_aligned.clear();
        }
        self.rec.clear();
        self.raw = false;
    }

    /// Dwords so far: the offset the next command starts at.
    pub fn len(&self) -> usize {
        self.cmds.len()
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.cmds.is_empty()
    }

    /// The variables its symbols use (the runtime's own excluded).
    pub fn vars(&self) -> Vec<Var> {
        self.rec
            .vars
            .iter()
            .filter(|v| Some(*v) != self.rec.karg_base.as_ref())
            .cloned()
            .collect()
    }

    /// Bytes of kernel arguments the list carries.
    pub fn kernarg_bytes(&self) -> usize {
        self.rec.kernargs.len()
    }

    /// Ends a packet begun at dword `start` (its size kept where packets stay whole).
    #[inline]
    fn mark(&mut self, start: usize) {
        if E::WHOLE_PACKETS {
            self.sizes.push((self.cmds.len() - start) as u32);
        }
    }

    /// Appends one packet written by `encode`.
    #[inline]
    pub(crate) fn packet(&mut self, encode: impl FnOnce(&mut Vec<u32>) -> usize) {
        let at = encode(&mut self.cmds);
        self.mark(at);
    }

    /// Appends `cmds` — the dwords of `from`, sites written or not — with `from`'s
    /// packet boundaries; returns the dword they start at.
    #[inline]
    pub(crate) fn put_packets(&mut self, cmds: &[u32], from: &CmdList<E>) -> usize {
        let start = self.cmds.len();
        self.cmds.extend_from_slice(cmds);
        self.raw |= from.raw;
        if E::WHOLE_PACKETS {
            let first = self.sizes.len();
            self.sizes.extend_from_slice(&from.sizes);
            self.end_aligned.extend(from.end_aligned.iter().map(|k| k + first));
        }
        start
    }

    /// Appends `other`: its packets and its recording (its sites moved to where its
    /// dwords now start).
    pub(crate) fn append(&mut self, other: &CmdList<E>) {
        let base = self.put_packets(&other.cmds, other);
        self.rec.append(&other.rec, base);
    }

    /// The runtime's own wait for a timeline value: [`CmdList::wait`] with the address
    /// and value known now (nothing recorded; a transient list holds nothing).
    #[inline]
    pub(crate) fn wait_now(&mut self, addr: u64, value: u64) {
        debug_assert!(self.rec.transient);
        let at = self.cmds.len();
        // As `wait_addr` encodes a constant: the field takes the value's low 32 bits.
        E::wait(self.target, addr, value as u32, &mut self.cmds);
        self.mark(at);
    }

    /// The runtime's own signal of a timeline value: [`CmdList::signal`] with the
    /// address, value and event known now (nothing recorded).
    #[inline]
    pub(crate) fn signal_now(&mut self, addr: u64, value: u64, event: Option<(u64, u32)>) {
        debug_assert!(self.rec.transient);
        E::signal(self, addr, value, event);
    }

    /// Stalls the queue until `sig` is at least `value` (compared in 32 bits, as
    /// WAIT_REG_MEM and POLL_REGMEM do).
    #[inline]
    pub fn wait<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: impl Into<Sym>) -> &mut Self {
        self.rec.hold(sig);
        self.wait_addr(sig.addr(), value)
    }

    /// Stalls the queue until the signal value at `addr` is at least `value` (compared
    /// in 32 bits); either may be a symbol.
    #[inline]
    pub fn wait_addr(&mut self, addr: impl Into<Sym>, value: impl Into<Sym>) -> &mut Self {
        let at = self.cmds.len();
        let (addr, value) = (addr.into(), value.into());
        let (fa, fv) = E::wait_fields(self.target);
        let a = self.rec.any(&addr, Place::Cmd(at + fa), Enc::U64, "wait address");
        let v = self.rec.any(&value, Place::Cmd(at + fv), Enc::LOW32, "wait value");
        E::wait(self.target, a, v as u32, &mut self.cmds);
        self.mark(at);
        self
    }

    /// Sets `sig` to `value` once prior work is done (the copy engine writes its low
    /// 32 bits); for a timeline, also raises its event to wake sleepers.
    #[inline]
    pub fn signal<I: DeviceInterface>(&mut self, sig: &Signal<I>, value: impl Into<Sym>) -> &mut Self {
        self.rec.hold(sig);
        self.signal_addr(sig.addr(), value, sig.event())
    }

    /// Sets the signal at `addr` to `value` once prior work is done (the copy engine
    /// writes its low 32 bits), raising the KFD `event` (mailbox address, id) when
    /// given; address and value may be symbols.
    #[inline]
    pub fn signal_addr(&mut self, addr: impl Into<Sym>, value: impl Into<Sym>, event: Option<(u64, u32)>) -> &mut Self {
        let at = self.cmds.len();
        let (addr, value) = (addr.into(), value.into());
        let (fa, fv) = E::signal_fields(self.target);
        let enc = if E::SIGNAL_BYTES == 8 { Enc::U64 } else { Enc::LOW32 };
        let a = self.rec.any(&addr, Place::Cmd(at + fa), Enc::U64, "signal address");
        let v = self.rec.any(&value, Place::Cmd(at + fv), enc, "signal value");
        E::signal(self, a, v, event);
        self
    }

    /// Writes the GPU clock into `sig`'s timestamp once prior work is done.
    pub(crate) fn stamp<I: DeviceInterface>(&mut self, sig: &Signal<I>) -> Result<(), E::StampError> {
        let at = self.cmds.len();
        E::timestamp(self.target, sig.timestamp_addr(), &mut self.cmds)?;
        self.mark(at);
        self.rec.hold(sig);
        Ok(())
    }

    /// Writes the GPU clock, once prior work is done, into a slot of the list's own
    /// kernel arguments (each bound copy its own); returns the slot's offset there.
    pub(crate) fn timestamp_in_kernargs(&mut self) -> Result<usize, E::StampError> {
        let at = self.cmds.len();
        E::timestamp(self.target, 0, &mut self.cmds)?;
        self.mark(at);
        let (off, expr) = self.rec.stamp_slot();
        let place = Place::Cmd(at + E::timestamp_field(self.target));
        self.rec.site(place, Enc::U64, expr, What::field("timestamp address"));
        Ok(off)
    }
}

impl ComputeQueue {
    /// Writes the GPU clock into `sig`'s timestamp once prior work is done.
    pub fn timestamp<I: DeviceInterface>(&mut self, sig: &Signal<I>) -> &mut Self {
        let Ok(()) = self.stamp(sig);
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
        self.raw = true;
        self
    }
}

impl CopyQueue {
    /// Largest single copy packet.
    pub const MAX_COPY: u32 = sdma::MAX_BYTES_PER_PACKET;

    /// Copies `size` bytes from `src` to `dst` (split into packets of at most 4 MiB).
    /// Addresses may be symbols; a symbolic size must be at most 4 MiB at submit (one
    /// packet), a constant one is split.
    ///
    /// ```
    /// use amd_hcq::{Bindings, BufferKind, Platform, Var};
    ///
    /// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
    /// let src = dev.alloc(4096, BufferKind::Host)?;
    /// let dst = dev.alloc(4096, BufferKind::Host)?;
    /// src.write_slice(0, &[9u8; 4096])?;
    /// let (to, len) = (Var::new("to"), Var::new("len"));
    /// let mut q = dev.copy_queue();
    /// q.copy(&to, src.va(), &len)?;
    /// let mut vals = Bindings::new();
    /// vals.buffer(&to, &dst).set(&len, 100);
    /// dev.wait_timeline(q.submit(&dev, &vals)?)?;
    /// assert_eq!(dst.read_vec::<u8>(99, 2)?, [9, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn copy(&mut self, dst: impl Into<Sym>, src: impl Into<Sym>, size: impl Into<Sym>) -> Result<&mut Self> {
        let (dst, src, size) = (dst.into(), src.into(), size.into());
        let t = self.target;
        if let (Some(d), Some(s), Some(n)) = (dst.as_const(), src.as_const(), size.as_const()) {
            for p in CopyLinear::split(d, s, n)? {
                self.packet(|out| p.encode(t, out));
            }
            return Ok(self);
        }
        let max = sdma::MAX_BYTES_PER_PACKET as u64;
        let sizes: Vec<(u64, Sym)> = match size.as_const() {
            Some(0) => return Ok(self),
            Some(n) => (0..n.div_ceil(max))
                .map(|k| (k * max, Sym::Const((n - k * max).min(max))))
                .collect(),
            None => vec![(0, size)],
        };
        for (k, (off, len)) in sizes.into_iter().enumerate() {
            let at = self.cmds.len();
            let place = |f: CopyLinearField| Place::Cmd(at + f.offset(t));
            let (d, s) = (&dst + off, &src + off);
            let packet = |field| What {
                index: Some(k as u32),
                ..What::field(field)
            };
            let dv = self.rec.value(&d, place(CopyLinearField::Dst), Enc::U64, || {
                packet("copy destination, packet")
            })?;
            let sv = self.rec.value(&s, place(CopyLinearField::Src), Enc::U64, || {
                packet("copy source, packet")
            })?;
            let count = Enc {
                minus_one: true,
                ..Enc::bounded(4, 1, max)
            };
            let nv = self
                .rec
                .value(&len, place(CopyLinearField::Count), count, || What::field("copy size"))?;
            let p = CopyLinear::new(dv, sv, nv.max(1) as u32)?;
            self.packet(|out| p.encode(t, out));
        }
        Ok(self)
    }

    /// Fills `size` bytes at `dst` with the 32-bit `pattern` repeated, little-endian
    /// (SDMA's constant fill, split into packets of at most 4 MiB). `dst` may be a
    /// symbol (bound to a multiple of 4); `size` is a constant multiple of 4.
    ///
    /// ```
    /// use amd_hcq::{Bindings, BufferKind, Platform};
    ///
    /// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
    /// let buf = dev.alloc(4096, BufferKind::Host)?;
    /// let mut q = dev.copy_queue();
    /// q.fill(buf.va() + 8, 0x0403_0201, 8)?;
    /// dev.wait_timeline(q.submit(&dev, &Bindings::new())?)?;
    /// assert_eq!(buf.read_vec::<u8>(4, 16)?, [0, 0, 0, 0, 1, 2, 3, 4, 1, 2, 3, 4, 0, 0, 0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fill(&mut self, dst: impl Into<Sym>, pattern: u32, size: u64) -> Result<&mut Self> {
        let dst = dst.into();
        let at = dst.as_const().unwrap_or(0);
        if size % 4 != 0 || at % 4 != 0 {
            return Err(HcqError::FillUnaligned { at, size });
        }
        let t = self.target;
        let max = u64::from(sdma::MAX_BYTES_PER_PACKET);
        for k in 0..size.div_ceil(max) {
            let (off, len) = (k * max, (size - k * max).min(max));
            let at = self.cmds.len();
            let d = &dst + off;
            let dv = self
                .rec
                .value(&d, Place::Cmd(at + ConstFillField::Dst.offset(t)), Enc::U64, || What {
                    index: Some(k as u32),
                    ..What::field("fill destination, packet")
                })?;
            // `len` is 1..=4 MiB: the packet's range.
            let p = ConstFill::new(dv, pattern, len as u32)?;
            self.packet(|out| p.encode(t, out));
        }
        Ok(self)
    }

    /// Writes the GPU clock into `sig`'s timestamp.
    pub fn timestamp<I: DeviceInterface>(&mut self, sig: &Signal<I>) -> Result<&mut Self> {
        self.stamp(sig)?;
        Ok(self)
    }

    /// Runs the `dwords` dwords of SDMA packets at `addr` (32-byte aligned) as an
    /// indirect buffer. The ring writer places the packet so it ends on an 8-dword
    /// boundary, as the engine requires.
    pub fn indirect(&mut self, addr: u64, dwords: u32) -> Result<&mut Self> {
        let ib = sdma::Indirect::new(addr, dwords)?;
        self.end_aligned.push(self.sizes.len());
        let t = self.target;
        self.packet(|out| ib.encode(t, out));
        Ok(self)
    }
}

/// The list a [`Device::submit_ordered`](crate::Device::submit_ordered) closure fills.
pub enum Work<'a> {
    /// A compute list.
    Compute(&'a mut ComputeQueue),
    /// A copy list.
    Copy(&'a mut CopyQueue),
}

impl Work<'_> {
    /// The compute list, or an error for a copy list.
    pub(crate) fn compute(&mut self) -> Result<&mut ComputeQueue> {
        match self {
            Work::Compute(q) => Ok(q),
            Work::Copy(_) => Err(HcqError::Internal {
                what: "a compute submission got the copy list",
            }),
        }
    }
}
