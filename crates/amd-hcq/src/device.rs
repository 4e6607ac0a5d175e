//! A GPU: its transport, timeline, rings, staging buffers and the memory it holds
//! back until the GPU is done with it.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use std::collections::VecDeque;

use parking_lot::Mutex;

use crate::iface::{BufferKind, DeviceInterface, DeviceProps, HwQueue};
use crate::memory::{Buffer, BufferCache};
use crate::queue::{ComputeQueue, CopyQueue};
use crate::signal::{Signal, SignalPool};
use crate::{HcqError, Result};

/// Ring bytes of each queue (tinygrad 0.10.1's 8 MiB).
pub const RING_SIZE: usize = 0x80_0000;
/// Staging buffers for host↔device copies, and the size of each.
pub const STAGING_COUNT: usize = 8;
/// Bytes of one staging buffer (one SDMA packet's worth).
pub const STAGING_SIZE: usize = 0x40_0000;
/// The timeline restarts at 1 past this value.
pub const TIMELINE_WRAP: u64 = 1 << 31;

pub(crate) struct Ring<Q> {
    pub(crate) q: Q,
    /// Write pointer: dwords (PM4) or bytes (SDMA), never wrapped.
    pub(crate) put: u64,
    /// The read pointer as last read: the engine is at least this far, so room
    /// computed from it is there without reading the engine's pointer again.
    pub(crate) seen: u64,
    /// Lists sent outside the timeline ([`Device::submit_compute`],
    /// [`Device::submit_copy`]) so far; each is followed by a fence writing its count.
    pub(crate) plain: u64,
}

/// The devices whose work may still use something freed, each with how far its work
/// must be done first.
pub(crate) type Fences<I> = Vec<(Weak<DeviceInner<I>>, Marks)>;

/// Memory freed while work may still use it: the fences to wait for, its kind, itself.
pub(crate) type Freed<I> = (Fences<I>, BufferKind, <I as DeviceInterface>::Memory);

/// How far a device's work goes: its timeline (a logical value) and the count of lists
/// sent outside the timeline on each ring (compute, copy). Taken when something is
/// freed (what was submitted), it is the point past which nothing can still use it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    pub(crate) timeline: u64,
    pub(crate) plain: [u64; 2],
}

impl Marks {
    /// Whether work done up to `self` covers everything up to `f`.
    pub(crate) fn covers(&self, f: &Marks) -> bool {
        self.timeline >= f.timeline && self.plain[0] >= f.plain[0] && self.plain[1] >= f.plain[1]
    }
}

/// How far some devices' work is, each device asked once: what was submitted and what
/// is done. A device that is closed, or whose timeline is, is left out: it runs nothing
/// more.
pub(crate) struct Progress<I: DeviceInterface>(Vec<(Weak<DeviceInner<I>>, Marks, Marks)>);

impl<I: DeviceInterface> Progress<I> {
    pub(crate) fn of(devices: impl IntoIterator<Item = Arc<DeviceInner<I>>>) -> Self {
        let mut asked: Vec<(Weak<DeviceInner<I>>, Marks, Marks)> = Vec::new();
        for d in devices {
            let w = Arc::downgrade(&d);
            if asked.iter().any(|(x, ..)| x.ptr_eq(&w)) {
                continue;
            }
            if let Some((sent, done)) = d.marks() {
                asked.push((w, sent, done));
            }
        }
        Progress(asked)
    }

    /// Whether the work every fence names is done.
    pub(crate) fn passed(&self, fences: &Fences<I>) -> bool {
        fences.iter().all(|(w, f)| {
            self.0
                .iter()
                .find(|(d, ..)| d.ptr_eq(w))
                .is_none_or(|(_, _, done)| done.covers(f))
        })
    }

    /// The fences of the work submitted so far and not yet done: what something given
    /// back now waits for.
    pub(crate) fn outstanding(&self) -> Fences<I> {
        self.0
            .iter()
            .filter(|(_, sent, done)| !done.covers(sent))
            .map(|(w, sent, _)| (w.clone(), *sent))
            .collect()
    }
}

pub(crate) struct Timeline<I: DeviceInterface> {
    pub(crate) signal: Signal<I>,
    pub(crate) shadow: Signal<I>,
    /// The value the next submission signals.
    pub(crate) next: u64,
    /// How many times the timeline restarted at 1.
    pub(crate) epoch: u64,
    /// The lists ordered submissions are sent in, reused.
    pub(crate) compute_list: Option<ComputeQueue>,
    pub(crate) copy_list: Option<CopyQueue>,
    /// Named submissions not known to be complete (timeline point, name), oldest
    /// first: the culprit of a fault is the oldest one not done.
    pub(crate) inflight: VecDeque<(Point, OpName)>,
}

/// Whether a ring of `units` written up to the running count `put` and read up to
/// `seen` has room for `needed` more.
#[inline]
fn has_room(seen: u64, put: u64, needed: u64, units: u64) -> bool {
    put + needed - seen.min(put) <= units
}

/// Where the running count `put` falls in a ring of `size` units: a mask for the
/// power-of-two sizes rings have, no division on the submission path.
#[inline]
fn ring_pos(put: u64, size: u64) -> u64 {
    if size.is_power_of_two() {
        put & (size - 1)
    } else {
        put % size
    }
}

/// Notes a named submission in a timeline's `inflight` (for naming the culprit of a
/// fault), forgetting those up to `done` (a [`Point::logical`] known complete) once it
/// holds 32 (a short list stays in a few cache lines) and the oldest past 4,096. A
/// submitter notes its work before it rings the doorbell.
#[inline]
pub(crate) fn note_inflight(inflight: &mut VecDeque<(Point, OpName)>, p: Point, name: OpName, done: u64) {
    if inflight.len() >= 32 {
        prune_inflight(inflight, done);
    }
    inflight.push_back((p, name));
}

/// Forgets the submissions up to `done`, and the oldest once 4,096 are noted.
#[cold]
fn prune_inflight(inflight: &mut VecDeque<(Point, OpName)>, done: u64) {
    while inflight.front().is_some_and(|(q, _)| q.logical() <= done) {
        inflight.pop_front();
    }
    if inflight.len() >= 4096 {
        inflight.pop_front();
    }
}

/// The name of a submission, for profiles and fault reports (cheap to clone).
#[derive(Clone, Debug)]
pub(crate) enum OpName {
    Static(&'static str),
    Shared(Arc<str>),
}

impl std::fmt::Display for OpName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpName::Static(s) => f.write_str(s),
            OpName::Shared(s) => f.write_str(s),
        }
    }
}

/// A device's timeline as other queues see it (see [`Device::timeline_handle`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimelineHandle {
    /// Address of the timeline signal (in the platform's signal page, which every GPU
    /// of the platform maps).
    pub addr: u64,
    /// The KFD event (mailbox address, id) a write of the timeline raises.
    pub event: Option<(u64, u32)>,
    /// The point the last submission signals.
    pub last: Point,
}

/// A point of a device's timeline: a value within an epoch (the timeline restarts at
/// 1 past [`TIMELINE_WRAP`], after all work before is done, so a point of an earlier
/// epoch is complete).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Point {
    /// Restarts of the timeline before it.
    pub epoch: u64,
    /// The timeline value on the GPU (what its signal holds; at most
    /// [`TIMELINE_WRAP`] + 1).
    pub value: u64,
}

impl Point {
    /// The point as one number that only grows: the epoch in the high 32 bits, the
    /// GPU value in the low ones. The runtime's operations return these, and
    /// [`Device::wait_timeline`] takes them.
    pub const fn logical(self) -> u64 {
        self.epoch << 32 | self.value
    }

    /// The point of a [`Point::logical`] number.
    pub const fn from_logical(v: u64) -> Point {
        Point {
            epoch: v >> 32,
            value: v & 0xffff_ffff,
        }
    }
}

pub(crate) struct Staging<I: DeviceInterface> {
    /// Made at their first use (a copy of a few MiB pins only what it uses).
    pub(crate) bufs: Vec<Option<I::Memory>>,
    /// Timeline point after which each buffer is free again.
    pub(crate) busy_until: Vec<Point>,
    pub(crate) next: usize,
}

impl<I: DeviceInterface> Staging<I> {
    /// Staging buffer `slot`, allocated from `iface` at its first use.
    pub(crate) fn buf(&mut self, iface: &I, slot: usize) -> Result<&I::Memory> {
        let b = &mut self.bufs[slot];
        if b.is_none() {
            *b = Some(iface.alloc(STAGING_SIZE, BufferKind::Host)?);
        }
        b.as_ref().ok_or(HcqError::Internal {
            what: "a staging buffer is missing after its allocation",
        })
    }
}

pub(crate) struct DeviceInner<I: DeviceInterface> {
    // Fields drop in order: the queues first (destroying a queue stops its work),
    // then the memory the work used.
    pub(crate) compute: Mutex<Ring<I::Queue>>,
    pub(crate) sdma: Mutex<Ring<I::Queue>>,
    pub(crate) iface: I,
    pub(crate) index: usize,
    pub(crate) pool: Arc<SignalPool<I>>,
    /// Written by the fence after each list sent outside the timeline: the count of
    /// such lists done on the compute ring (64 bits) and on the copy ring (32 bits).
    pub(crate) plain_done: std::sync::OnceLock<[Signal<I>; 2]>,
    pub(crate) timeline: Mutex<Option<Timeline<I>>>,
    pub(crate) staging: Mutex<Option<Staging<I>>>,
    /// Freed memory waiting for the timeline to pass the value it was freed at.
    pub(crate) pending_free: Mutex<Vec<Freed<I>>>,
    pub(crate) cache: Mutex<BufferCache<I>>,
    pub(crate) timeout: Mutex<Duration>,
    pub(crate) scratch: Mutex<Option<crate::program::Scratch<I>>>,
    pub(crate) kernargs: Mutex<Option<crate::program::KernargRing<I>>>,
    pub(crate) profiling: std::sync::atomic::AtomicBool,
    pub(crate) pending_profile: Mutex<crate::profile::ProfileLog<I>>,
    /// Where to write the trace at close (`HCQ_PROFILE`).
    pub(crate) trace_path: Option<std::path::PathBuf>,
    pub(crate) clock_offset: Mutex<Option<i128>>,
    /// Held while the timeline restarts.
    pub(crate) wrap_lock: Mutex<()>,
    /// Set once the device faulted (it does not recover); the details in `fault`.
    pub(crate) faulted: std::sync::atomic::AtomicBool,
    /// The highest logical timeline value seen completed: a wait for a value at or
    /// below it returns without reading the signal, which the engine last wrote (a
    /// cache line another core holds, on the mock).
    pub(crate) done_seen: std::sync::atomic::AtomicU64,
    /// The first fault: the kernel or copy running then, and the transport's report.
    pub(crate) fault: Mutex<Option<(Option<String>, Vec<String>)>>,
    /// The list launches are recorded into, kept for reuse.
    pub(crate) launch_list: Mutex<Option<ComputeQueue>>,
    /// The lists [`Device::submit_ordered`] builds are recorded into, reused (only
    /// ever `try_lock`ed: a build runs with its list locked).
    pub(crate) ordered_compute: Mutex<ComputeQueue>,
    pub(crate) ordered_copy: Mutex<CopyQueue>,
    /// The list a copy list sent outside the timeline is placed in with its fence
    /// (locked only under the copy ring's lock).
    pub(crate) plain_copy: Mutex<CopyQueue>,
}

/// A GPU opened by the runtime. Cheap to clone; the last clone releases everything
/// (work still running is abandoned: [`Device::synchronize`] first to finish it).
pub struct Device<I: DeviceInterface = crate::AnyIface> {
    pub(crate) inner: Arc<DeviceInner<I>>,
}

impl<I: DeviceInterface> Clone for Device<I> {
    fn clone(&self) -> Self {
        Device {
            inner: self.inner.clone(),
        }
    }
}

impl<I: DeviceInterface> std::fmt::Debug for Device<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("index", &self.inner.index)
            .field("arch", &self.props().arch)
            .finish()
    }
}

impl<I: DeviceInterface> DeviceInner<I> {
    /// Completed timeline value.
    pub(crate) fn completed(&self) -> u64 {
        let done = self.timeline.lock().as_ref().map_or(0, |t| {
            Point {
                epoch: t.epoch,
                value: t.signal.value(),
            }
            .logical()
        });
        // Release: a thread that finds a value here (Acquire) sees what the GPU wrote
        // before it, as this thread does after its read of the signal.
        self.done_seen.fetch_max(done, std::sync::atomic::Ordering::AcqRel);
        done
    }

    /// The device's sticky fault, if it has one (no transport call).
    #[inline]
    pub(crate) fn check(&self) -> Result<()> {
        // Acquire: pairs with the Release store in `record_fault`, so the report is there.
        if self.faulted.load(std::sync::atomic::Ordering::Acquire) {
            return Err(self.fault_error());
        }
        Ok(())
    }

    /// The sticky fault as an error.
    pub(crate) fn fault_error(&self) -> HcqError {
        let (kernel, report) = self.fault.lock().clone().unwrap_or_default();
        HcqError::DeviceFault {
            device: self.index,
            kernel,
            report,
        }
    }

    /// Asks the transport (without waiting) whether the device faulted; records it.
    pub(crate) fn poll_fault(&self) -> Result<()> {
        self.check()?;
        let report = self.iface.hang_report();
        if report.is_empty() {
            return Ok(());
        }
        self.record_fault(report);
        Err(self.fault_error())
    }

    /// Makes the device's fault sticky (the first report wins).
    pub(crate) fn record_fault(&self, report: Vec<String>) {
        let culprit = self.culprit();
        let mut f = self.fault.lock();
        if f.is_none() {
            *f = Some((culprit, report));
        }
        // Release: the report is stored before the flag says it is there.
        self.faulted.store(true, std::sync::atomic::Ordering::Release);
    }

    /// The oldest named submission not done (unknown while a submitter holds the
    /// timeline: this may run under it).
    fn culprit(&self) -> Option<String> {
        let tl = self.timeline.try_lock()?;
        let t = tl.as_ref()?;
        let done = t.signal.value();
        t.inflight
            .iter()
            .find(|(p, _)| p.epoch == t.epoch && p.value > done)
            .map(|(_, n)| n.to_string())
    }

    /// What the last wait saw complete, as a [`Point::logical`] number.
    pub(crate) fn seen_done(&self) -> u64 {
        // Acquire: pairs with `completed`.
        self.done_seen.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether the work up to `p` is done.
    pub(crate) fn is_done(&self, p: Point) -> bool {
        match self.timeline.lock().as_ref() {
            Some(t) => p.epoch < t.epoch || t.signal.value() >= p.value,
            None => true,
        }
    }

    /// The logical timeline values of the last submission and of the work done, read
    /// together; `None` once the timeline is closed (its queues are gone: nothing more
    /// runs).
    pub(crate) fn progress(&self) -> Option<(u64, u64)> {
        self.timeline.lock().as_ref().map(|t| {
            let at = |value| Point { epoch: t.epoch, value }.logical();
            (at(t.next - 1), at(t.signal.value()))
        })
    }

    /// The value the last submission signals.
    pub(crate) fn last_submitted(&self) -> u64 {
        self.timeline.lock().as_ref().map_or(0, |t| {
            Point {
                epoch: t.epoch,
                value: t.next - 1,
            }
            .logical()
        })
    }

    /// The lists sent outside the timeline so far and those done, per ring.
    fn plain_marks(&self) -> ([u64; 2], [u64; 2]) {
        let sent = [self.compute.lock().plain, self.sdma.lock().plain];
        let done = match self.plain_done.get() {
            Some([c, s]) => [c.value(), count_from_low32(sent[1], s.value() as u32)],
            None => sent,
        };
        (sent, done)
    }

    /// What was submitted so far and what is done; `None` once the timeline is closed
    /// (the queues are gone: nothing more runs).
    pub(crate) fn marks(&self) -> Option<(Marks, Marks)> {
        let (last, done) = self.progress()?;
        let (sent, plain_done) = self.plain_marks();
        Some((
            Marks {
                timeline: last,
                plain: sent,
            },
            Marks {
                timeline: done,
                plain: plain_done,
            },
        ))
    }

    /// Releases freed memory the GPU is done with into the cache. No lock of this
    /// device's is held while other devices are asked how far their work is.
    pub(crate) fn reclaim(&self) {
        // Notes the timeline's progress for later waits.
        self.completed();
        let pending = std::mem::take(&mut *self.pending_free.lock());
        if pending.is_empty() {
            return;
        }
        let now = Progress::of(
            pending
                .iter()
                .flat_map(|(fences, ..)| fences.iter().filter_map(|(w, _)| w.upgrade())),
        );
        let mut free = Vec::new();
        let mut still = Vec::new();
        for (fences, kind, mem) in pending {
            if now.passed(&fences) {
                free.push((kind, mem));
            } else {
                still.push((fences, kind, mem));
            }
        }
        if !still.is_empty() {
            self.pending_free.lock().append(&mut still);
        }
        let mut cache = self.cache.lock();
        for (kind, mem) in free {
            cache.put(kind, mem);
        }
    }

    /// Waits for `dwords` (PM4) or `bytes` (SDMA) of room in a ring.
    #[inline]
    fn wait_for_room(&self, ring: &mut Ring<I::Queue>, needed: u64, ring_units: u64, what: &str) -> Result<()> {
        // Room known from the last look at the read pointer: the common case.
        if has_room(ring.seen, ring.put, needed, ring_units) {
            return Ok(());
        }
        self.wait_for_room_slow(ring, needed, ring_units, what)
    }

    /// [`DeviceInner::wait_for_room`] past what the last look at the read pointer saw.
    #[cold]
    fn wait_for_room_slow(&self, ring: &mut Ring<I::Queue>, needed: u64, ring_units: u64, what: &str) -> Result<()> {
        ring.seen = ring.q.read_ptr();
        if has_room(ring.seen, ring.put, needed, ring_units) {
            return Ok(());
        }
        let timeout = *self.timeout.lock();
        let start = Instant::now();
        let mut polled = Duration::ZERO;
        while !has_room(ring.q.read_ptr(), ring.put, needed, ring_units) {
            // A faulted device never drains its ring.
            if start.elapsed() >= polled {
                self.poll_fault()?;
                polled = start.elapsed() + Duration::from_millis(1);
            }
            if start.elapsed() > timeout {
                return Err(HcqError::Timeout {
                    what: format!("room in the {what} ring"),
                    wanted: ring.put + needed - ring_units,
                    current: ring.q.read_ptr(),
                    waited_ms: start.elapsed().as_millis() as u64,
                });
            }
            std::thread::yield_now();
        }
        ring.seen = ring.q.read_ptr();
        Ok(())
    }

    /// Writes PM4 dwords into the compute ring (wrapping anywhere) and rings it.
    pub(crate) fn push_compute(&self, cmds: &[u32]) -> Result<()> {
        let mut ring = self.compute.lock();
        self.write_compute(&mut ring, [cmds])
    }

    /// Writes `parts` one after the other into the locked compute ring and rings the
    /// doorbell once.
    #[inline(always)]
    fn write_compute<const N: usize>(&self, ring: &mut Ring<I::Queue>, parts: [&[u32]; N]) -> Result<()> {
        let dwords = (ring.q.ring_bytes() / 4) as u64;
        let len = parts.iter().map(|p| p.len() as u64).sum::<u64>();
        if len > dwords {
            return Err(HcqError::ListSize {
                list: "list for the compute ring",
                dwords: len as usize,
                max: dwords as usize,
            });
        }
        self.wait_for_room(ring, len, dwords, "compute")?;
        let mut at = ring.put;
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let start = ring_pos(at, dwords);
            let first = (part.len() as u64).min(dwords - start) as usize;
            ring.q.write_ring(start as usize * 4, &part[..first])?;
            if first < part.len() {
                ring.q.write_ring(0, &part[first..])?;
            }
            at += part.len() as u64;
        }
        ring.put += len;
        let put = ring.put;
        ring.q.submit(put);
        Ok(())
    }

    /// The address of the signal counting the lists sent outside the timeline that are
    /// done on ring `ring` (0 compute, 1 copy).
    fn plain_done_addr(&self, ring: usize) -> Result<u64> {
        self.plain_done
            .get()
            .and_then(|s| s.get(ring))
            .map(Signal::addr)
            .ok_or(HcqError::DeviceClosing { device: self.index })
    }

    /// Sends a compute list outside the timeline, followed by the fence that counts it
    /// done (so that what it uses is not freed before).
    pub(crate) fn push_compute_plain(&self, cmds: &[u32], target: amd_packets::GfxTarget) -> Result<()> {
        let addr = self.plain_done_addr(0)?;
        let mut ring = self.compute.lock();
        let count = ring.plain + 1;
        let mut fence = [0u32; 16];
        let mut sink = amd_packets::SliceSink::new(&mut fence);
        amd_packets::pm4::ReleaseMem::signal(addr, count).encode(target, &mut sink);
        let n = sink.finish().ok_or(HcqError::Internal {
            what: "a RELEASE_MEM packet does not fit its buffer",
        })?;
        self.write_compute(&mut ring, [cmds, &fence[..n]])?;
        ring.plain = count;
        Ok(())
    }

    /// Sends a copy list outside the timeline, followed by the fence that counts it
    /// done (32 bits of the count).
    pub(crate) fn push_copy_plain(&self, q: &CopyQueue) -> Result<()> {
        let addr = self.plain_done_addr(1)?;
        let mut ring = self.sdma.lock();
        let count = ring.plain + 1;
        // The packets and the fence, placed as one list in a list reused under the
        // ring's lock; it holds nothing (the caller's list keeps what it refers to).
        let mut all = self.plain_copy.lock();
        all.clear();
        all.append_packets(&q.cmds, &q.sizes, &q.end_aligned);
        all.signal_addr(addr, count, None);
        self.write_copy(&mut ring, &all)?;
        ring.plain = count;
        Ok(())
    }

    /// Writes SDMA packets into the copy ring: whole packets only before the ring's
    /// end (what does not fit is preceded by zeros — NOPs — to the end and restarts at
    /// 0), and INDIRECT packets padded with NOPs to end on an 8-dword boundary.
    pub(crate) fn push_copy(&self, q: &CopyQueue) -> Result<()> {
        let mut ring = self.sdma.lock();
        self.write_copy(&mut ring, q)
    }

    /// Writes `q` into the locked copy ring and rings the doorbell.
    #[inline(always)]
    fn write_copy(&self, ring: &mut Ring<I::Queue>, q: &CopyQueue) -> Result<()> {
        let bytes = ring.q.ring_bytes() as u64;
        let words = place_sdma(q, (ring_pos(ring.put, bytes) / 4) as usize, (bytes / 4) as usize)?;
        let total = words.len() as u64 * 4;
        self.wait_for_room(ring, total, bytes, "SDMA")?;
        let at = ring_pos(ring.put, bytes) as usize;
        let first = words.len().min((bytes as usize - at) / 4);
        ring.q.write_ring(at, &words[..first])?;
        if first < words.len() {
            ring.q.write_ring(0, &words[first..])?;
        }
        ring.put += total;
        let put = ring.put;
        ring.q.submit(put);
        Ok(())
    }
}

/// The count whose low 32 bits are `low`, at most `sent` and within 2^32 below it: what
/// a 32-bit fence of a running count says is done.
fn count_from_low32(sent: u64, low: u32) -> u64 {
    let behind = (sent as u32).wrapping_sub(low);
    sent.saturating_sub(u64::from(behind))
}

/// The dwords to write at ring dword `pos` of a ring of `ring` dwords for `q`: its
/// packets, none reaching the ring's end (zeros fill to the end and the packet restarts
/// at 0), with zeros before each end-aligned packet so it ends on 8 dwords.
fn place_sdma(q: &CopyQueue, start: usize, ring: usize) -> Result<Vec<u32>> {
    let mut out = Vec::with_capacity(q.cmds.len() + 16);
    let mut pos = start;
    let mut at = 0usize;
    let mut aligned = q.end_aligned.iter().peekable();
    for (k, &s) in q.sizes.iter().enumerate() {
        let s = s as usize;
        let align = aligned.next_if_eq(&&k).is_some();
        let pad = |pos: usize| if align { (8 - (pos + s) % 8) % 8 } else { 0 };
        if pos + pad(pos) + s >= ring {
            out.resize(out.len() + (ring - pos), 0);
            pos = 0;
        }
        let p = pad(pos);
        out.resize(out.len() + p, 0);
        out.extend_from_slice(&q.cmds[at..at + s]);
        pos += p + s;
        at += s;
        if out.len() >= ring {
            return Err(HcqError::ListSize {
                list: "list for the copy ring",
                dwords: q.cmds.len(),
                max: ring - 1,
            });
        }
    }
    Ok(out)
}

/// Runs `f` on the list in `spare`, or on a new one (`fresh`) when another build has it
/// (another thread's, or the one `f` is called from); the list is emptied (`clear`)
/// before `f`, in case an earlier `f` panicked, and after, outside any other lock.
fn on_spare<Q, R>(spare: &Mutex<Q>, fresh: impl FnOnce() -> Q, clear: fn(&mut Q), f: impl FnOnce(&mut Q) -> R) -> R {
    let mut held = spare.try_lock();
    let mut own;
    let q = match held.as_deref_mut() {
        Some(q) => q,
        None => {
            own = fresh();
            &mut own
        }
    };
    clear(q);
    let r = f(q);
    clear(q);
    r
}

/// Whether a list built for [`Device::submit_ordered`] can go out as built (no symbol
/// to bind, no kernel arguments to place).
fn sent_as_built(rec: &crate::queue::Recording) -> Result<()> {
    not_plain(rec, "Device::submit_ordered")
}

/// [`HcqError::NotSentAsBuilt`] for a list `call` sends as built, unless it holds no
/// symbol and no kernel arguments.
fn not_plain(rec: &crate::queue::Recording, call: &'static str) -> Result<()> {
    if rec.is_plain() {
        return Ok(());
    }
    let launch = !rec.kernargs.is_empty();
    Err(HcqError::NotSentAsBuilt {
        call,
        // A launch's own variables (its kernel-argument address) are not the caller's.
        variable: if launch {
            None
        } else {
            rec.vars.first().map(|v| v.name().to_string())
        },
        launch,
    })
}

impl<I: DeviceInterface> Device<I> {
    /// Opens a device over `iface`, sharing `pool` (the platform's signal page) or
    /// creating it.
    pub(crate) fn with_iface(iface: I, index: usize, pool: Option<Arc<SignalPool<I>>>) -> Result<Self> {
        let pool = match pool {
            Some(p) => {
                iface.map(&p.mem)?;
                p
            }
            None => Arc::new(SignalPool::new(&iface)?),
        };
        let compute = Ring {
            q: iface.create_queue(false, RING_SIZE)?,
            put: 0,
            seen: 0,
            plain: 0,
        };
        let sdma = Ring {
            q: iface.create_queue(true, RING_SIZE)?,
            put: 0,
            seen: 0,
            plain: 0,
        };
        let iface_target = iface.props().target;
        let inner = Arc::new(DeviceInner {
            iface,
            index,
            pool,
            plain_done: std::sync::OnceLock::new(),
            timeline: Mutex::new(None),
            compute: Mutex::new(compute),
            sdma: Mutex::new(sdma),
            staging: Mutex::new(None),
            pending_free: Mutex::new(Vec::new()),
            cache: Mutex::new(BufferCache::default()),
            timeout: Mutex::new(crate::signal::default_timeout()),
            scratch: Mutex::new(None),
            kernargs: Mutex::new(None),
            profiling: std::sync::atomic::AtomicBool::new(false),
            pending_profile: Mutex::new(crate::profile::ProfileLog::default()),
            clock_offset: Mutex::new(None),
            wrap_lock: Mutex::new(()),
            faulted: std::sync::atomic::AtomicBool::new(false),
            done_seen: std::sync::atomic::AtomicU64::new(0),
            fault: Mutex::new(None),
            launch_list: Mutex::new(None),
            ordered_compute: Mutex::new(ComputeQueue::new(iface_target)),
            ordered_copy: Mutex::new(CopyQueue::new(iface_target)),
            plain_copy: Mutex::new(CopyQueue::new(iface_target)),
            trace_path: crate::profile::env_trace_path(index),
        });
        let signal = Signal::new(&inner, 0, true)?;
        let shadow = Signal::new(&inner, 0, true)?;
        let _ = inner
            .plain_done
            .set([Signal::new(&inner, 0, false)?, Signal::new(&inner, 0, false)?]);
        *inner.timeline.lock() = Some(Timeline {
            signal,
            shadow,
            next: 1,
            epoch: 0,
            compute_list: None,
            copy_list: None,
            inflight: VecDeque::new(),
        });
        inner.pool.register(&inner);
        let dev = Device { inner };
        // The kernel-argument region is made now, as tinygrad 0.10.1 makes it when it
        // opens a device: the first launch does not pay for allocating and pinning
        // 16 MiB, and a device that cannot have it fails to open rather than at its
        // first launch.
        drop(dev.kernarg_ring()?);
        if dev.inner.trace_path.is_some() {
            dev.set_profiling(true);
            dev.calibrate_clock()?;
        }
        Ok(dev)
    }

    pub(crate) fn pool(&self) -> Arc<SignalPool<I>> {
        self.inner.pool.clone()
    }

    /// The GPU's properties.
    pub fn props(&self) -> &DeviceProps {
        self.inner.iface.props()
    }

    /// The transport.
    pub fn iface(&self) -> &I {
        &self.inner.iface
    }

    /// Index among the platform's GPUs.
    pub fn index(&self) -> usize {
        self.inner.index
    }

    /// A new signal with `value`, owned by this device (its hang report is this
    /// device's).
    pub fn new_signal(&self, value: u64) -> Result<Signal<I>> {
        Signal::new(&self.inner, value, false)
    }

    /// A compute command list for this device's family.
    pub fn compute_queue(&self) -> ComputeQueue {
        ComputeQueue::new(self.props().target)
    }

    /// A copy command list for this device's family.
    pub fn copy_queue(&self) -> CopyQueue {
        CopyQueue::new(self.props().target)
    }

    /// Submits a compute list as built, not ordered on the timeline (the caller orders
    /// it with its own signals). A fence after it counts it done, so the buffers and
    /// signals it uses are not reused before. A list with symbols or kernel arguments
    /// goes through [`ComputeQueue::submit`] instead.
    pub fn submit_compute(&self, q: &ComputeQueue) -> Result<()> {
        self.inner.check()?;
        not_plain(&q.rec, "Device::submit_compute")?;
        self.inner.push_compute_plain(&q.cmds, self.props().target)
    }

    /// Submits a copy list as built, not ordered on the timeline (followed by a fence, as
    /// [`Device::submit_compute`]). A list with symbols goes through
    /// [`CopyQueue::submit`] instead.
    pub fn submit_copy(&self, q: &CopyQueue) -> Result<()> {
        self.inner.check()?;
        not_plain(&q.rec, "Device::submit_copy")?;
        self.inner.push_copy_plain(q)
    }

    /// Submits work ordered on the device timeline: waits for everything submitted
    /// before, runs `build`, then signals the next timeline value, which it returns.
    /// `build` records into the list it is given and runs before any of the runtime's
    /// locks is taken, so it may allocate, wait or submit other work; the list is then
    /// sent with the timeline held, so ring order and value order are the same,
    /// whatever thread submits. The list goes out as built: a symbol or a kernel launch
    /// in it is an error and nothing is sent (submit those with
    /// [`ComputeQueue::submit`], [`CopyQueue::submit`] or [`Program::enqueue`]), and
    /// the memory it names by address must outlive the work, as with any list.
    ///
    /// [`Program::enqueue`]: crate::Program::enqueue
    pub fn submit_ordered(&self, copy: bool, build: impl FnOnce(&mut Work<'_>) -> Result<()>) -> Result<u64> {
        self.inner.check()?;
        let name = OpName::Static("submission");
        // The device's list is reused (no allocation per submit). Lists hold the signals
        // they name until sent (what is freed before waits for the timeline only from
        // then), and are emptied with no lock of the timeline or the rings held (what
        // they kept may be freed then).
        let p = if copy {
            on_spare(
                &self.inner.ordered_copy,
                || self.copy_queue(),
                CopyQueue::clear,
                |q| {
                    build(&mut Work::Copy(q))?;
                    sent_as_built(&q.rec)?;
                    self.submit_point(true, name, |w| {
                        w.copy()?.append_packets(&q.cmds, &q.sizes, &q.end_aligned);
                        Ok(())
                    })
                },
            )?
        } else {
            on_spare(
                &self.inner.ordered_compute,
                || self.compute_queue(),
                ComputeQueue::clear,
                |q| {
                    build(&mut Work::Compute(q))?;
                    sent_as_built(&q.rec)?;
                    self.submit_point(false, name, |w| {
                        w.compute()?.cmds.extend_from_slice(&q.cmds);
                        Ok(())
                    })
                },
            )?
        };
        Ok(p.logical())
    }

    /// The runtime's own ordered submissions: `build` records into the timeline's list,
    /// with the timeline locked, between the wait for its last value and the signal of
    /// its next (which it returns), and the list goes to the ring in one write. Only
    /// the runtime's code runs there (it takes no lock of the device and frees
    /// nothing): a user's list is built first, by [`Device::submit_ordered`].
    pub(crate) fn submit_point(
        &self,
        copy: bool,
        name: OpName,
        build: impl FnOnce(&mut Work<'_>) -> Result<()>,
    ) -> Result<Point> {
        self.inner.check()?;
        let mut tl = self.lock_timeline()?;
        let t = tl.as_mut().ok_or(HcqError::DeviceClosing { device: self.index() })?;
        let value = t.next;
        let point = Point { epoch: t.epoch, value };
        // The timeline's lists are reused (no allocation per submit) and sent as soon as
        // built, under its lock: what they refer to is covered by the timeline when
        // freed, so they keep nothing alive.
        if copy {
            let q = t.copy_list.get_or_insert_with(|| {
                let mut q = CopyQueue::new(self.props().target);
                q.rec.transient = true;
                q
            });
            q.clear();
            q.wait(&t.signal, value - 1);
            build(&mut Work::Copy(q))?;
            q.signal(&t.signal, value);
            note_inflight(&mut t.inflight, point, name, self.inner.seen_done());
            if let Err(e) = self.inner.push_copy(q) {
                t.inflight.pop_back();
                return Err(e);
            }
        } else {
            let q = t.compute_list.get_or_insert_with(|| {
                let mut q = ComputeQueue::new(self.props().target);
                q.rec.transient = true;
                q
            });
            q.clear();
            q.wait(&t.signal, value - 1);
            build(&mut Work::Compute(q))?;
            q.signal(&t.signal, value);
            note_inflight(&mut t.inflight, point, name, self.inner.seen_done());
            if let Err(e) = self.inner.push_compute(&q.cmds) {
                t.inflight.pop_back();
                return Err(e);
            }
        }
        t.next += 1;
        Ok(point)
    }

    /// The timeline, locked with room for one more value (restarting it first when it
    /// passed [`TIMELINE_WRAP`]).
    #[inline]
    pub(crate) fn lock_timeline(&self) -> Result<parking_lot::MutexGuard<'_, Option<Timeline<I>>>> {
        loop {
            let tl = self.inner.timeline.lock();
            match tl.as_ref() {
                Some(t) if t.next > TIMELINE_WRAP => {
                    drop(tl);
                    self.wrap_timeline()?;
                }
                _ => return Ok(tl),
            }
        }
    }

    /// Waits for the work up to timeline point `p`.
    #[inline]
    pub fn wait_point(&self, p: Point) -> Result<()> {
        self.wait_timeline(p.logical())
    }

    /// The timeline as other queues see it: its signal's address, the event a write
    /// of it raises, and the point the last submission signals. A list that waits for
    /// `addr` to reach `last.value` runs after everything submitted so far; a list
    /// submitted with [`ComputeQueue::submit`] or [`CopyQueue::submit`] gets its own
    /// point. The address changes when the timeline restarts (past
    /// [`TIMELINE_WRAP`] values): take a new handle for each list.
    pub fn timeline_handle(&self) -> Result<TimelineHandle> {
        let tl = self.inner.timeline.lock();
        let t = tl.as_ref().ok_or(HcqError::DeviceClosing { device: self.index() })?;
        Ok(TimelineHandle {
            addr: t.signal.addr(),
            event: t.signal.event(),
            last: Point {
                epoch: t.epoch,
                value: t.next - 1,
            },
        })
    }

    /// Address of the timeline signal and the value the last submission signals.
    pub fn timeline_snapshot(&self) -> Result<(u64, u64)> {
        let tl = self.inner.timeline.lock();
        let t = tl.as_ref().ok_or(HcqError::DeviceClosing { device: self.index() })?;
        Ok((t.signal.addr(), t.next - 1))
    }

    /// The timeline's completed point and the point the last submission will
    /// signal, as [`Point::logical`] numbers.
    pub fn timeline(&self) -> (u64, u64) {
        (self.inner.completed(), self.inner.last_submitted())
    }

    /// Waits for timeline `value`: spins, yields, and after 2 s sleeps in the
    /// transport's queue event. A fault of the device ends it at once with
    /// [`HcqError::DeviceFault`]; the value not coming in time is
    /// [`HcqError::Timeout`].
    #[inline]
    pub fn wait_timeline(&self, value: u64) -> Result<()> {
        if value <= self.inner.done_seen.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(());
        }
        self.wait_timeline_slow(value)
    }

    /// [`Device::wait_timeline`] for a value the last wait did not see done.
    #[cold]
    fn wait_timeline_slow(&self, value: u64) -> Result<()> {
        let timeout = *self.inner.timeout.lock();
        // Logical values only grow, across restarts of the GPU's value too.
        crate::signal::wait_until(Some(&*self.inner), true, value, timeout, "the timeline", || {
            self.inner.completed()
        })
    }

    /// The device's state, without waiting: `Ok` while healthy, else the sticky
    /// [`HcqError::DeviceFault`] every operation returns until the device is dropped
    /// and opened again.
    pub fn health(&self) -> Result<()> {
        self.inner.poll_fault()
    }

    /// Waits until everything submitted so far is done, then releases memory freed
    /// meanwhile.
    pub fn synchronize(&self) -> Result<()> {
        let last = self.inner.last_submitted();
        self.wait_timeline(last)?;
        self.inner.reclaim();
        Ok(())
    }

    /// Restarts the timeline at 1 (values are 32 bits on the GPU): waits for all work
    /// and swaps in the shadow signal. One thread
    /// restarts; the others wait for it and find nothing left to do.
    fn wrap_timeline(&self) -> Result<()> {
        let _wrapping = self.inner.wrap_lock.lock();
        let last = match self.inner.timeline.lock().as_ref() {
            Some(t) if t.next > TIMELINE_WRAP => Point {
                epoch: t.epoch,
                value: t.next - 1,
            }
            .logical(),
            _ => return Ok(()),
        };
        // Every submitter now waits for this lock, so `last` stays the last value.
        self.wait_timeline(last)?;
        self.inner.reclaim();
        let mut tl = self.inner.timeline.lock();
        if let Some(t) = tl.as_mut() {
            std::mem::swap(&mut t.signal, &mut t.shadow);
            t.signal.set(0)?;
            t.next = 1;
            t.epoch += 1;
        }
        Ok(())
    }

    /// Sets the timeline's next value (tests of the wrap).
    #[doc(hidden)]
    pub fn set_timeline_next_for_test(&self, next: u64) -> Result<()> {
        self.synchronize()?;
        let mut tl = self.inner.timeline.lock();
        if let Some(t) = tl.as_mut() {
            t.signal.set(next - 1)?;
            t.next = next;
        }
        Ok(())
    }

    /// Invalidates and writes back every GPU cache (HDP flush + ACQUIRE_MEM), ordered
    /// on the timeline, and waits for it.
    pub fn invalidate_caches(&self) -> Result<()> {
        let v = self.submit_ordered(false, |w| {
            w.compute()?.memory_barrier();
            Ok(())
        })?;
        self.wait_timeline(v)
    }

    /// Sets how long waits last before [`HcqError::Timeout`] (default: 30 s or
    /// `HCQDEV_WAIT_TIMEOUT_MS`).
    pub fn set_timeout(&self, timeout: Duration) {
        *self.inner.timeout.lock() = timeout;
    }

    /// Allocations held in the reuse cache, and freed ones waiting for the GPU.
    pub fn memory_stats(&self) -> (usize, usize) {
        self.inner.reclaim();
        (self.inner.cache.lock().len(), self.inner.pending_free.lock().len())
    }

    /// Allocates `size` bytes of `kind` (reusing a cached allocation of that size).
    ///
    /// ```
    /// use amd_hcq::{BufferKind, Platform};
    ///
    /// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
    /// let vram = dev.alloc(4096, BufferKind::Device)?; // not CPU-visible: copy through the GPU
    /// dev.copy_in_slice(&vram, 0, &[1u32, 2, 3])?;
    /// let host = dev.alloc(4096, BufferKind::Host)?; // CPU-visible: read and write directly
    /// dev.wait_timeline(dev.copy(&host, 0, &vram, 0, 12)?)?;
    /// assert_eq!(host.read_vec::<u32>(0, 3)?, [1, 2, 3]);
    /// // Sizes the transport cannot give are errors that say what was asked for.
    /// let e = dev.alloc(1 << 50, BufferKind::Device).unwrap_err();
    /// assert!(e.to_string().contains("1125899906842624"), "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn alloc(&self, size: usize, kind: BufferKind) -> Result<Buffer<I>> {
        self.inner.check()?;
        if size == 0 || size > isize::MAX as usize {
            return Err(HcqError::BufferSize {
                size,
                max: isize::MAX as usize,
            });
        }
        self.inner.reclaim();
        let mem = match self.inner.cache.lock().take(kind, size) {
            Some(m) => m,
            None => self.inner.iface.alloc(size, kind)?,
        };
        Ok(Buffer::new(&self.inner, mem, kind, size))
    }

    /// Maps `buf` (of another device of the same platform) into this GPU, for peer
    /// access.
    pub fn map_peer(&self, buf: &Buffer<I>) -> Result<()> {
        let r = buf.residency();
        let key = crate::memory::device_key(&self.inner);
        if r.on(key) {
            return Ok(());
        }
        if r.platform != crate::memory::platform_key(&self.inner) {
            return Err(HcqError::OtherPlatform {
                what: "a buffer".into(),
                owner: r.owner,
                device: self.index(),
            });
        }
        self.inner.iface.map(buf.memory())?;
        r.add(key);
        Ok(())
    }
}

/// The list a [`Device::submit_ordered`] closure fills.
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

    /// The copy list, or an error for a compute list.
    pub(crate) fn copy(&mut self) -> Result<&mut CopyQueue> {
        match self {
            Work::Copy(q) => Ok(q),
            Work::Compute(_) => Err(HcqError::Internal {
                what: "a copy submission got the compute list",
            }),
        }
    }
}

impl<I: DeviceInterface> Drop for DeviceInner<I> {
    fn drop(&mut self) {
        self.write_env_trace();
        // Nothing waits here: work still running when the last handle goes is
        // abandoned. The fields drop in declaration order, so the queues are destroyed
        // (the driver preempts them; the mock ends their dispatches) before any memory
        // their packets or kernels use is freed.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use amd_packets::GfxTarget;

    /// A 32-bit fence of a running count: the count done, across the 32-bit wrap.
    #[test]
    fn counts_from_their_low_32_bits() {
        assert_eq!(count_from_low32(0, 0), 0);
        assert_eq!(count_from_low32(5, 5), 5);
        assert_eq!(count_from_low32(5, 3), 3);
        let w = 1u64 << 32;
        assert_eq!(count_from_low32(w + 2, 2), w + 2);
        assert_eq!(count_from_low32(w + 2, u32::MAX), w - 1);
        assert_eq!(count_from_low32(w + 2, 0), w);
        assert_eq!(count_from_low32(3 * w + 7, 7), 3 * w + 7);
        // Never above what was sent, never below 0.
        assert_eq!(count_from_low32(3, u32::MAX), 0);
    }

    /// Every start position in a small ring: packets never reach the ring's end, the
    /// INDIRECT packet ends on 8 dwords, and only zeros (NOPs) are added.
    #[test]
    fn sdma_placement_wraps_and_aligns_indirect_packets() {
        let mut q = CopyQueue::new(GfxTarget::Gfx11);
        q.wait_addr(0x1000, 1);
        q.indirect(0x2000, 8).unwrap();
        q.copy(0x3000, 0x4000, 64).unwrap();
        let ring = 64;
        for start in 0..ring {
            let out = place_sdma(&q, start, ring).unwrap();
            assert!(out.len() < ring);
            let (mut pos, mut i, mut at) = (start, 0, 0);
            for (k, &s) in q.sizes.iter().enumerate() {
                while out[i] == 0 {
                    i += 1;
                    pos = (pos + 1) % ring;
                }
                let s = s as usize;
                assert_eq!(&out[i..i + s], &q.cmds[at..at + s], "start {start}, packet {k}");
                assert!(pos + s < ring, "start {start}: packet {k} reaches the ring's end");
                if q.end_aligned.contains(&k) {
                    assert_eq!((pos + s) % 8, 0, "start {start}: INDIRECT ends at {}", pos + s);
                }
                i += s;
                pos += s;
                at += s;
            }
            assert_eq!(i, out.len());
        }
        // A list longer than the ring is an error, not a wrap onto itself.
        assert!(place_sdma(&q, 0, 16).is_err());
    }
}
