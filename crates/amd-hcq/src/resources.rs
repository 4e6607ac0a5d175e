//! What the runtime's own operations use of a device: the scratch buffer, the
//! kernel-argument ring and the list launches are recorded in (one lock, [`Launcher`]:
//! a launch takes all three), and the staging buffers of host copies.

use std::collections::VecDeque;

use crate::iface::{BufferKind, DeviceInterface};
use crate::memory::Buffer;
use crate::queue::ComputeQueue;
use crate::timeline::Point;
use crate::{HcqError, Result};

/// Staging buffers for host↔device copies, and the size of each.
pub const STAGING_COUNT: usize = 8;
/// Bytes of one staging buffer: half an SDMA copy packet's 4 MiB, so that what the
/// engine copies into one stays in the cache the CPU reads it from.
pub const STAGING_SIZE: usize = 0x20_0000;

/// A device's scratch buffer and its COMPUTE_TMPRING_SIZE.
pub(crate) struct Scratch<I: DeviceInterface> {
    pub(crate) buf: Buffer<I>,
    pub(crate) per_lane: u32,
    pub(crate) tmpring_size: u32,
}

/// The private segment buffer descriptor of scratch at `base` (the four user SGPRs a
/// kernel asking for it gets): swizzle on; dword 3 as tinygrad writes it for the
/// target: gfx10 and later's (0x20c14000), or gfx9's (`SQ_BUF_RSRC_WORD3`: DST_SEL
/// X, Y, Z, W; NUM_FORMAT UINT, DATA_FORMAT 32, ELEMENT_SIZE 1, INDEX_STRIDE 3,
/// ADD_TID_ENABLE).
pub(crate) fn private_segment_buffer(target: amd_packets::GfxTarget, base: u64) -> [u32; 4] {
    let [lo, hi] = amd_packets::lo_hi(base);
    let word3 = if target.is_gfx9() {
        4 | 5 << 3 | 6 << 6 | 7 << 9 | 4 << 12 | 4 << 15 | 1 << 19 | 3 << 21 | 1 << 23
    } else {
        0x20c1_4000
    };
    [lo, hi | 1 << 31, u32::MAX, word3]
}

/// The kernarg region: a ring of argument blocks; a block is reused only once the
/// launch that read it has completed.
pub(crate) struct KernargRing<I: DeviceInterface> {
    pub(crate) buf: Buffer<I>,
    blocks: Blocks,
}

impl<I: DeviceInterface> KernargRing<I> {
    /// A ring over `buf` with nothing in flight.
    pub(crate) fn new(buf: Buffer<I>) -> Self {
        KernargRing {
            buf,
            blocks: Blocks::default(),
        }
    }

    /// Reserves `len` bytes aligned to `align`, waiting (`wait`) for launches still
    /// reading the space it reuses; `done` says whether a point is complete.
    #[inline]
    pub(crate) fn reserve(
        &mut self,
        len: usize,
        align: usize,
        wait: impl FnMut(Point) -> Result<()>,
        done: impl Fn(Point) -> bool,
    ) -> Result<usize> {
        self.blocks.reserve(self.buf.size(), len, align, wait, done)
    }

    /// Notes the block at `off` of `len` bytes in use until `p`.
    #[inline]
    pub(crate) fn in_use(&mut self, off: usize, len: usize, p: Point) {
        self.blocks.live.push_back((off, len, p));
    }
}

/// Reservations after a look at the oldest block found it in use before the next
/// look: the blocks a reservation does not reach are only forgotten to keep the list
/// short, and asking whether a launch is done costs a lock and a read of GPU memory.
const LOOK_EVERY: u32 = 16;

/// The blocks of an argument ring: where the next goes, and those in flight.
#[derive(Default)]
struct Blocks {
    head: usize,
    /// Blocks in flight, oldest first: (offset, length, the timeline point that frees
    /// them).
    live: VecDeque<(usize, usize, Point)>,
    /// Reservations left before the oldest block is looked at again.
    skip: u32,
}

impl Blocks {
    /// [`KernargRing::reserve`] in a ring of `size` bytes.
    #[inline]
    fn reserve(
        &mut self,
        size: usize,
        len: usize,
        align: usize,
        mut wait: impl FnMut(Point) -> Result<()>,
        done: impl Fn(Point) -> bool,
    ) -> Result<usize> {
        if len > size {
            return Err(HcqError::KernargsTooLarge { len, region: size });
        }
        let mut off = self.head.next_multiple_of(align);
        if off + len > size {
            off = 0;
        }
        let end = off + len;
        // Blocks are handed out in address order until the ring wraps, so the oldest
        // live blocks are the ones the new block can reach: wait for those it overlaps,
        // and forget the done ones before them (looking every LOOK_EVERY reservations
        // while the oldest is in use).
        while let Some(&(o, l, p)) = self.live.front() {
            if o < end && off < o + l {
                wait(p)?;
            } else if self.skip > 0 {
                self.skip -= 1;
                break;
            } else if !done(p) {
                self.skip = LOOK_EVERY;
                break;
            }
            self.live.pop_front();
        }
        self.head = end;
        Ok(off)
    }
}

/// What launches take of their device, together: the scratch buffer their dispatches
/// name, the ring their kernel arguments go to, and the list a launch is recorded in
/// (kept for reuse: a launch allocates nothing for it).
pub(crate) struct Launcher<I: DeviceInterface> {
    pub(crate) scratch: Option<Scratch<I>>,
    pub(crate) kernargs: Option<KernargRing<I>>,
    pub(crate) list: Option<ComputeQueue>,
    /// The last launches of constant sizes and arguments, as recorded, oldest first
    /// (emptied when the scratch buffer changes, which their dispatches name).
    pub(crate) memos: Vec<LaunchMemo>,
    /// Launches sent from a memo so far.
    pub(crate) replayed: u64,
    /// Whether launches are kept and replayed (off: each recorded anew, a benchmark's
    /// reference).
    pub(crate) replay: bool,
}

/// A launch with constant sizes and arguments ([`crate::Program::launch`],
/// [`crate::Program::enqueue`]) as it was recorded and checked: replayed while the
/// program, the sizes and the scratch buffer are the ones it was recorded with, only
/// the caller's arguments written anew.
pub(crate) struct LaunchMemo {
    /// The program's id ([`crate::Program`]s loaded apart never share one).
    pub(crate) program: u64,
    /// Grid and workgroup sizes.
    pub(crate) dims: [[u32; 3]; 2],
    /// The recorded list: packets, sites and the argument bytes.
    pub(crate) list: ComputeQueue,
    /// The caller's arguments (the kernel's buffer and value ones), in order.
    pub(crate) slots: Vec<Slot>,
}

impl LaunchMemo {
    /// Launches remembered per device: a loop over a few dozen kernels stays on the
    /// replay path (a recording is a few hundred bytes to a few KiB).
    pub(crate) const KEPT: usize = 32;
}

/// One caller's argument of a [`LaunchMemo`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    /// Its index in the kernel's arguments.
    pub(crate) arg: usize,
    /// Its byte offset in the argument bytes, and its size.
    pub(crate) at: usize,
    pub(crate) bytes: u32,
    /// A buffer (else a value).
    pub(crate) buffer: bool,
}

impl<I: DeviceInterface> Default for Launcher<I> {
    fn default() -> Self {
        Launcher {
            scratch: None,
            kernargs: None,
            list: None,
            memos: Vec::new(),
            replayed: 0,
            replay: true,
        }
    }
}

/// The staging buffers of host copies.
pub(crate) struct Staging<I: DeviceInterface> {
    /// Made at their first use (a copy of a few MiB pins only what it uses).
    pub(crate) bufs: Vec<Option<I::Memory>>,
    /// Timeline point after which each buffer is free again.
    pub(crate) busy_until: Vec<Point>,
    pub(crate) next: usize,
}

impl<I: DeviceInterface> Default for Staging<I> {
    fn default() -> Self {
        Staging {
            busy_until: vec![Point::default(); STAGING_COUNT],
            bufs: (0..STAGING_COUNT).map(|_| None).collect(),
            next: 0,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    fn point(value: u64) -> Point {
        Point { epoch: 0, value }
    }

    /// A block that reaches blocks in flight waits for exactly those; one that reaches
    /// none waits for nothing; the offsets wrap to 0 where a block does not fit.
    #[test]
    fn gfx9_scratch_descriptor_is_gfx9_s_word3() {
        use amd_packets::GfxTarget;
        assert_eq!(super::private_segment_buffer(GfxTarget::Gfx94, 0)[3], 0x00ea_4fac);
        assert_eq!(super::private_segment_buffer(GfxTarget::Gfx11, 0)[3], 0x20c1_4000);
    }

    #[test]
    fn an_argument_block_waits_for_the_blocks_it_reuses() {
        let mut b = Blocks::default();
        let waited = RefCell::new(Vec::new());
        let wait = |p: Point| {
            waited.borrow_mut().push(p.value);
            Ok(())
        };
        let offs: Vec<usize> = (1..=4)
            .map(|v| {
                let off = b.reserve(1024, 200, 64, wait, |_| false).unwrap();
                b.live.push_back((off, 200, point(v)));
                off
            })
            .collect();
        assert_eq!(offs, [0, 256, 512, 768]);
        assert!(waited.borrow().is_empty());
        // 968 + 200 does not fit: back to 0, over the first block only.
        assert_eq!(b.reserve(1024, 200, 64, wait, |_| false).unwrap(), 0);
        assert_eq!(*waited.borrow(), [1]);
        b.live.push_back((0, 200, point(5)));
        // 300 bytes from 256: over the second and third.
        assert_eq!(b.reserve(1024, 300, 64, wait, |_| false).unwrap(), 256);
        assert_eq!(*waited.borrow(), [1, 2, 3]);
        assert!(matches!(
            b.reserve(1024, 1025, 64, wait, |_| false),
            Err(HcqError::KernargsTooLarge {
                len: 1025,
                region: 1024
            })
        ));
    }

    /// Done blocks are forgotten though no reservation reaches them: the list stays
    /// within the blocks in flight and LOOK_EVERY more, and a look is made at most
    /// once every LOOK_EVERY reservations while the oldest is in use.
    #[test]
    fn done_argument_blocks_are_forgotten() {
        let mut b = Blocks::default();
        // Looks that found the oldest block in use.
        let (looks, gpu) = (Cell::new(0), Cell::new(0u64));
        let done = |p: Point| {
            let d = p.value <= gpu.get();
            looks.set(looks.get() + usize::from(!d));
            d
        };
        let never = |_: Point| -> Result<()> { panic!("no block is reused in a ring this large") };
        for v in 1..=10_000u64 {
            // The GPU 50 launches behind.
            gpu.set(v.saturating_sub(50));
            let off = b.reserve(1 << 30, 64, 64, never, done).unwrap();
            b.live.push_back((off, 64, point(v)));
            assert!(
                b.live.len() <= 50 + LOOK_EVERY as usize + 1,
                "{} blocks noted",
                b.live.len()
            );
        }
        // A look finding the oldest in use, then none for LOOK_EVERY reservations.
        assert!(
            looks.get() <= 10_000 / (LOOK_EVERY as usize + 1) + 1,
            "{} looks",
            looks.get()
        );
        // Everything done: the next reservation forgets all.
        gpu.set(u64::MAX);
        b.skip = 0;
        b.reserve(1 << 30, 64, 64, never, done).unwrap();
        assert!(b.live.is_empty());
    }
}
