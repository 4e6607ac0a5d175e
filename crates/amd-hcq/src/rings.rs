//! Submission: a device's two rings and its timeline under one lock, and the ring
//! writers (PM4 dwords wrap anywhere; SDMA packets never cross the ring's end).
//!
//! Every submitter holds [`Submission::engines`] from the timeline value it takes to
//! the doorbell it rings, so that ring order and value order agree whatever thread
//! submits; lists sent outside the timeline take the same lock for their ring.

use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::aql::AqlLane;
use crate::fence::{DeviceLink, Marks};
use crate::iface::{DeviceInterface, HwQueue};
use crate::queue::{CmdList, CopyQueue, Encoding, Pm4, Sdma};
use crate::signal::Signal;
use crate::timeline::{OpName, Point, Timeline};
use crate::{HcqError, Result};

/// Ring bytes of each queue (tinygrad 0.10.1's 8 MiB).
pub const RING_SIZE: usize = 0x80_0000;

/// A device's submission state.
pub(crate) struct Submission<I: DeviceInterface> {
    /// The timeline and the rings: what every submission takes.
    pub(crate) engines: Mutex<Engines<I>>,
    /// Held while the timeline restarts: one thread restarts (waiting for all work
    /// first, without `engines` held, so that waits and other devices' progress checks
    /// go on), the others wait here and find nothing left to do.
    pub(crate) restart: Mutex<()>,
    /// The highest logical timeline value seen completed: a wait for a value at or
    /// below it returns without reading the signal, which the engine last wrote (a
    /// cache line another core holds, on the mock).
    pub(crate) done_seen: AtomicU64,
}

/// One ring of a device.
pub(crate) struct Ring<Q> {
    pub(crate) q: Q,
    /// Write pointer: dwords (PM4), bytes (SDMA) or packets (AQL), never wrapped.
    put: u64,
    /// The read pointer as last read: the engine is at least this far, so room
    /// computed from it is there without reading the engine's pointer again.
    seen: u64,
    /// Lists sent outside the timeline ([`crate::Device::submit_compute`],
    /// [`crate::Device::submit_copy`]) so far; each is followed by a fence writing its
    /// count.
    plain: u64,
}

impl<Q: HwQueue> Ring<Q> {
    pub(crate) fn new(q: Q) -> Self {
        Ring {
            q,
            put: 0,
            seen: 0,
            plain: 0,
        }
    }
}

/// One engine's part of the submission state: its ring, the list the runtime's own
/// ordered submissions are built in, the list a list sent outside the timeline is
/// placed in with its fence, and the fence's signal. The lists are reused (no
/// allocation per submission) and transient (they keep nothing alive: the timeline
/// covers what they name).
pub(crate) struct Lane<I: DeviceInterface, E> {
    // The ring first: fields drop in order, and destroying a queue stops its work
    // before the signals it writes go.
    pub(crate) ring: Ring<I::Queue>,
    ordered: CmdList<E>,
    plain: CmdList<E>,
    /// Written by the fence after each list sent outside the timeline: the count of
    /// such lists done (its low 32 bits where the engine writes 32).
    plain_done: Signal<I>,
    /// An AQL compute queue's state (its lists go out as AQL packets).
    pub(crate) aql: Option<AqlLane<I>>,
}

impl<I: DeviceInterface, E: Encoding> Lane<I, E> {
    pub(crate) fn new(
        ring: Ring<I::Queue>,
        plain_done: Signal<I>,
        target: amd_packets::GfxTarget,
        aql: Option<AqlLane<I>>,
    ) -> Self {
        Lane {
            ring,
            ordered: CmdList::transient(target),
            plain: CmdList::transient(target),
            plain_done,
            aql,
        }
    }

    /// The lists sent outside the timeline so far, and those done.
    fn plain_marks(&self) -> (u64, u64) {
        let sent = self.ring.plain;
        let v = self.plain_done.value();
        let done = if E::SIGNAL_BYTES == 8 {
            v
        } else {
            count_from_low32(sent, v as u32)
        };
        (sent, done)
    }
}

/// The timeline and each engine's lane.
pub(crate) struct Engines<I: DeviceInterface> {
    // The lanes first: their rings stop their work before the timeline's signals go.
    pub(crate) compute: Lane<I, Pm4>,
    pub(crate) sdma: Lane<I, Sdma>,
    pub(crate) timeline: Timeline<I>,
}

/// Which lane of a device an engine's lists go to.
pub(crate) trait OnRing: Encoding {
    /// The engine's lane, and the timeline.
    fn lane<I: DeviceInterface>(e: &mut Engines<I>) -> (&mut Lane<I, Self>, &mut Timeline<I>);
}

impl OnRing for Pm4 {
    #[inline(always)]
    fn lane<I: DeviceInterface>(e: &mut Engines<I>) -> (&mut Lane<I, Self>, &mut Timeline<I>) {
        (&mut e.compute, &mut e.timeline)
    }
}

impl OnRing for Sdma {
    #[inline(always)]
    fn lane<I: DeviceInterface>(e: &mut Engines<I>) -> (&mut Lane<I, Self>, &mut Timeline<I>) {
        (&mut e.sdma, &mut e.timeline)
    }
}

/// Writes `q` into `ring` and rings the doorbell: PM4 dwords wrap anywhere (or go as
/// AQL packets on an AQL queue), SDMA packets are placed whole.
#[inline(always)]
fn write_list<E: Encoding, I: DeviceInterface>(
    ring: &mut Ring<I::Queue>,
    aql: Option<&mut AqlLane<I>>,
    q: &CmdList<E>,
    dev: &dyn DeviceLink<I>,
) -> Result<()> {
    if E::WHOLE_PACKETS {
        write_copy(ring, q, dev)
    } else {
        write_compute(ring, aql, [&q.cmds], !q.raw, dev)
    }
}

impl<I: DeviceInterface> Engines<I> {
    pub(crate) fn new(compute: Lane<I, Pm4>, sdma: Lane<I, Sdma>, timeline: Timeline<I>) -> Self {
        Engines {
            compute,
            sdma,
            timeline,
        }
    }

    /// The format of the compute queue.
    pub(crate) fn compute_format(&self) -> crate::QueueFormat {
        self.compute.ring.q.format()
    }

    /// Tells an AQL compute lane of a loaded kernel (its dispatches go out by its
    /// descriptor); nothing for a PM4 one.
    pub(crate) fn aql_kernel(&mut self, code_addr: u64, k: crate::aql::AqlKernel) {
        if let Some(aql) = self.compute.aql.as_mut() {
            aql.add_kernel(code_addr, k);
        }
    }

    /// Keeps an AQL compute queue's scratch (its `amd_queue_t`) the device's; nothing
    /// for a PM4 one, whose dispatches carry their scratch.
    pub(crate) fn aql_scratch(
        &self,
        target: amd_packets::GfxTarget,
        tmpring_size: u32,
        base: u64,
        lane_bytes: u32,
    ) -> Result<()> {
        if self.compute.aql.is_none() {
            return Ok(());
        }
        let descriptor = crate::resources::private_segment_buffer(target, base);
        self.compute
            .ring
            .q
            .set_aql_scratch(tmpring_size, base, lane_bytes, descriptor)
    }

    /// What was submitted so far and what is done.
    pub(crate) fn marks(&self) -> (Marks, Marks) {
        let (c_sent, c_done) = self.compute.plain_marks();
        let (s_sent, s_done) = self.sdma.plain_marks();
        (
            Marks {
                timeline: self.timeline.last().logical(),
                plain: [c_sent, s_sent],
            },
            Marks {
                timeline: self.timeline.done().logical(),
                plain: [c_done, s_done],
            },
        )
    }

    /// An ordered submission of the runtime's: `build` records into the timeline's list
    /// of the engine, between the wait for the last value and the signal of the next;
    /// the list goes to the ring in one write, then the timeline advances (a list that
    /// cannot be sent takes no value). `done` is what the device saw complete.
    #[inline]
    pub(crate) fn ordered<E: OnRing>(
        &mut self,
        name: OpName,
        done: u64,
        dev: &dyn DeviceLink<I>,
        build: impl FnOnce(&mut CmdList<E>) -> Result<()>,
    ) -> Result<Point> {
        let (lane, timeline) = E::lane(self);
        let value = timeline.next().value;
        let sig = timeline.signal();
        let q = &mut lane.ordered;
        q.clear();
        q.wait_now(sig.addr(), value - 1);
        build(q)?;
        q.signal_now(sig.addr(), value, sig.event());
        write_list(&mut lane.ring, lane.aql.as_mut(), q, dev)?;
        Ok(timeline.advance(name, done))
    }

    /// Writes PM4 dwords into the compute ring (wrapping anywhere) and rings it.
    #[inline]
    pub(crate) fn push_compute(&mut self, cmds: &[u32], dev: &dyn DeviceLink<I>) -> Result<()> {
        write_compute(&mut self.compute.ring, self.compute.aql.as_mut(), [cmds], false, dev)
    }

    /// Writes SDMA packets into the copy ring and rings it.
    #[inline]
    pub(crate) fn push_copy(&mut self, q: &CopyQueue, dev: &dyn DeviceLink<I>) -> Result<()> {
        write_copy(&mut self.sdma.ring, q, dev)
    }

    /// Sends a list outside the timeline, followed by the fence that counts it done
    /// (so that what it uses is not freed before).
    pub(crate) fn push_plain<E: OnRing>(&mut self, q: &CmdList<E>, dev: &dyn DeviceLink<I>) -> Result<()> {
        let (lane, _) = E::lane(self);
        let addr = lane.plain_done.addr();
        let count = lane.ring.plain + 1;
        // The packets and the fence, placed as one list; it holds nothing (the caller's
        // list keeps what it refers to).
        let all = &mut lane.plain;
        all.clear();
        all.put_packets(&q.cmds, q);
        all.signal_addr(addr, count, None);
        write_list(&mut lane.ring, lane.aql.as_mut(), all, dev)?;
        lane.ring.plain = count;
        Ok(())
    }
}

/// Room wanted in a ring: `needed` more of its `units` (dwords for PM4, bytes for
/// SDMA); `what` names the ring in a timeout.
#[derive(Clone, Copy)]
struct Room<'a> {
    needed: u64,
    units: u64,
    what: &'a str,
}

impl Room<'_> {
    /// Whether the ring, written up to the running count `put` and read up to `seen`,
    /// has the room.
    #[inline]
    fn fits(self, seen: u64, put: u64) -> bool {
        put + self.needed - seen.min(put) <= self.units
    }
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

impl<Q: HwQueue> Ring<Q> {
    /// Waits for `room` in the ring.
    #[inline]
    fn wait_for_room<I: DeviceInterface>(&mut self, room: Room<'_>, dev: &dyn DeviceLink<I>) -> Result<()> {
        // Room known from the last look at the read pointer: the common case.
        if room.fits(self.seen, self.put) {
            return Ok(());
        }
        self.wait_for_room_slow(room, dev)
    }

    /// [`Ring::wait_for_room`] past what the last look at the read pointer saw.
    #[cold]
    fn wait_for_room_slow<I: DeviceInterface>(&mut self, room: Room<'_>, dev: &dyn DeviceLink<I>) -> Result<()> {
        self.seen = self.q.read_ptr();
        if room.fits(self.seen, self.put) {
            return Ok(());
        }
        let timeout = dev.timeout();
        let start = Instant::now();
        let mut polled = Duration::ZERO;
        while !room.fits(self.q.read_ptr(), self.put) {
            // A faulted device never drains its ring.
            if start.elapsed() >= polled {
                dev.poll_fault()?;
                polled = start.elapsed() + Duration::from_millis(1);
            }
            if start.elapsed() > timeout {
                return Err(HcqError::Timeout {
                    what: format!("room in the {} ring", room.what),
                    wanted: self.put + room.needed - room.units,
                    current: self.q.read_ptr(),
                    waited_ms: start.elapsed().as_millis() as u64,
                });
            }
            std::thread::yield_now();
        }
        self.seen = self.q.read_ptr();
        Ok(())
    }
}

/// Writes `parts` one after the other into the compute ring and rings the doorbell
/// once (on an AQL queue, as AQL packets: see [`crate::aql`]).
#[inline(always)]
fn write_compute<I: DeviceInterface, const N: usize>(
    ring: &mut Ring<I::Queue>,
    aql: Option<&mut AqlLane<I>>,
    parts: [&[u32]; N],
    encoded: bool,
    dev: &dyn DeviceLink<I>,
) -> Result<()> {
    if let Some(a) = aql {
        return a.write(&ring.q, &mut ring.put, &mut ring.seen, &parts, encoded, dev);
    }
    let dwords = (ring.q.ring_bytes() / 4) as u64;
    let len = parts.iter().map(|p| p.len() as u64).sum::<u64>();
    if len > dwords {
        return Err(HcqError::ListSize {
            list: "list for the compute ring",
            dwords: len as usize,
            max: dwords as usize,
        });
    }
    let room = Room {
        needed: len,
        units: dwords,
        what: "compute",
    };
    ring.wait_for_room(room, dev)?;
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
    ring.q.submit(ring.put);
    Ok(())
}

/// Writes SDMA packets into the copy ring: whole packets only before the ring's end
/// (what does not fit is preceded by zeros — NOPs — to the end and restarts at 0), and
/// INDIRECT packets padded with NOPs to end on an 8-dword boundary; rings the doorbell.
#[inline(always)]
fn write_copy<E: Encoding, Q: HwQueue, I: DeviceInterface>(
    ring: &mut Ring<Q>,
    q: &CmdList<E>,
    dev: &dyn DeviceLink<I>,
) -> Result<()> {
    let bytes = ring.q.ring_bytes() as u64;
    let words = place_sdma(q, (ring_pos(ring.put, bytes) / 4) as usize, (bytes / 4) as usize)?;
    let total = words.len() as u64 * 4;
    let room = Room {
        needed: total,
        units: bytes,
        what: "SDMA",
    };
    ring.wait_for_room(room, dev)?;
    let at = ring_pos(ring.put, bytes) as usize;
    let first = words.len().min((bytes as usize - at) / 4);
    ring.q.write_ring(at, &words[..first])?;
    if first < words.len() {
        ring.q.write_ring(0, &words[first..])?;
    }
    ring.put += total;
    ring.q.submit(ring.put);
    Ok(())
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
fn place_sdma<E: Encoding>(q: &CmdList<E>, start: usize, ring: usize) -> Result<Vec<u32>> {
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
