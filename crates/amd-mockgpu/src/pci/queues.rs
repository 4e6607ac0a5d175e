//! GRBM queue selection, the compute hardware queue descriptors (HQDs) and the SDMA
//! ring registers: programming them binds a ring and a BAR 2 doorbell to the mock's
//! PM4 or SDMA engine.
//!
//! What tinygrad 0.10.1 writes (`AM_GFX.setup_ring`, `AM_SDMA.setup_ring`):
//! - Compute: `GRBM_GFX_CNTL` selects me 1, pipe, queue; the MQD image's dwords go
//!   to the consecutive registers `CP_MQD_BASE_ADDR` ..= `CP_HQD_PQ_WPTR_HI`
//!   (`CP_HQD_ACTIVE` 0 among them), then `CP_HQD_ACTIVE` = 1; `GRBM_GFX_CNTL` back
//!   to 0. The HQD registers are banked: each me/pipe/queue has its own, and the
//!   selection decides which a read or write reaches. The bank binds a ring while
//!   `CP_HQD_ACTIVE.ACTIVE` is set (me 1 and 2, the MECs): base `CP_HQD_PQ_BASE(_HI)
//!   << 8`, `2^(QUEUE_SIZE + 1)` dwords (`CP_HQD_PQ_CONTROL`), read pointer written
//!   back to `CP_HQD_PQ_RPTR_REPORT_ADDR(_HI)`, doorbell at dword
//!   `CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_OFFSET` of BAR 2 when `DOORBELL_EN`, first
//!   read pointer `CP_HQD_PQ_RPTR`. `CP_HQD_DEQUEUE_REQUEST` with a request clears
//!   `ACTIVE` at once (the queue is unmapped) and reads back 0.
//! - SDMA: `SDMA0_QUEUE0_MINOR_PTR_UPDATE` = 1 while the pointers change (the ring is
//!   not bound meanwhile), `RB_RPTR/_HI`, `RB_WPTR/_HI`, `RB_BASE/_HI` (>> 8),
//!   `RB_RPTR_ADDR_LO/HI`, `RB_WPTR_POLL_ADDR_LO/HI`, `DOORBELL_OFFSET.OFFSET`,
//!   `DOORBELL.ENABLE`, `MINOR_PTR_UPDATE` = 0, then `RB_CNTL` (`RB_SIZE`: 2^n
//!   dwords, `RPTR_WRITEBACK_ENABLE`, `RB_ENABLE`).
//!
//! Each activation (`CP_HQD_ACTIVE` or `RB_CNTL.RB_ENABLE` written set) gives the
//! ring a new epoch in its binding: a ring set up again with the same registers (a
//! reboot of the driver) gets a fresh engine queue.
//!
//! The doorbell slot (64 bits) holds the ring's write pointer: the host's doorbell
//! write is the write pointer (dwords for compute, bytes for SDMA), and binding a ring
//! loads the slot from its `WPTR` registers, so a slot left over from an earlier ring
//! does not run the new one. The engine reads the slot, not `WPTR_POLL_ADDR`.
//!
//! Not modelled: the graphics ring (me 0, `CP_RB0_*`), SDMA queues other than
//! SDMA0 queue 0, the EOP buffer (`CP_HQD_EOP_*` are stored, the engine writes no
//! EOP entries), VM ids other than 0, read-back of the engine's progress through
//! `CP_HQD_PQ_RPTR` / `RB_RPTR` (the report address carries it), MQD loads from
//! memory (`CP_MQD_BASE_ADDR` is stored only), queue priorities and quanta.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::block::Vram;
use super::block::generated::gc;
use super::block::{AmReg, Effect, RegisterBlock, Values};
use crate::mem::pci::DevMem;

fn shift_of(mask: u32) -> u32 {
    mask.trailing_zeros() & 31
}

fn field(value: u32, mask: u32) -> u32 {
    (value & mask) >> shift_of(mask)
}

/// Largest ring the mock binds: 2^28 dwords (1 GiB).
pub const MAX_RING_DWORDS_LOG2: u32 = 28;

/// A ring the registers can bind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RingKey {
    /// A compute HQD: micro engine (1, 2: the MECs), pipe, queue.
    Compute {
        /// `GRBM_GFX_CNTL.MEID`
        me: u8,
        /// `GRBM_GFX_CNTL.PIPEID`
        pipe: u8,
        /// `GRBM_GFX_CNTL.QUEUEID`
        queue: u8,
    },
    /// An SDMA ring: engine and queue (SDMA0 queue 0 only).
    Sdma {
        /// SDMA instance.
        engine: u8,
        /// Queue of the instance.
        queue: u8,
    },
}

impl RingKey {
    /// The ring id the queue's interrupt vectors carry: for compute, queue in bits
    /// 6:4, me in 3:2, pipe in 1:0 (as `gfx_v11_0_eop_irq` decodes it); for SDMA,
    /// the queue.
    pub fn ring_id(self) -> u8 {
        match self {
            RingKey::Compute { me, pipe, queue } => (queue & 7) << 4 | (me & 3) << 2 | (pipe & 3),
            RingKey::Sdma { queue, .. } => queue,
        }
    }
}

/// What the registers of a ring say, once it is enabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingBinding {
    /// Which ring.
    pub key: RingKey,
    /// GPU virtual address of the ring.
    pub base: u64,
    /// Ring size in dwords (a power of two).
    pub dwords: u64,
    /// Where the engine writes its read pointer back (none: not written back).
    pub rptr_addr: Option<u64>,
    /// `WPTR_POLL_ADDR` (stored; the engine takes the write pointer from the doorbell).
    pub wptr_poll_addr: u64,
    /// Byte offset of the doorbell slot in BAR 2 (none: doorbell disabled, the ring
    /// cannot be started).
    pub doorbell: Option<u64>,
    /// The read pointer the engine starts at (dwords for compute, bytes for SDMA).
    pub rptr: u64,
    /// Which activation of the ring this is (`CP_HQD_ACTIVE` or `RB_CNTL.RB_ENABLE`
    /// written set): a ring set up again with the same registers is a new ring,
    /// whose engine queue starts afresh.
    pub epoch: u64,
}

/// Register addresses of the block.
#[derive(Debug, Clone, Copy)]
struct QRegs {
    grbm: u32,
    /// `CP_MQD_BASE_ADDR`: the first register of an HQD bank.
    hqd_first: u32,
    hqd_len: u32,
    hqd: HqdIdx,
    sdma: SdmaRegs,
}

/// Indices of HQD registers in a bank.
#[derive(Debug, Clone, Copy)]
struct HqdIdx {
    active: usize,
    base: usize,
    base_hi: usize,
    rptr: usize,
    rptr_report: usize,
    rptr_report_hi: usize,
    wptr_poll: usize,
    wptr_poll_hi: usize,
    doorbell: usize,
    control: usize,
    dequeue: usize,
    wptr_lo: usize,
    wptr_hi: usize,
}

#[derive(Debug, Clone, Copy)]
struct SdmaRegs {
    cntl: u32,
    base: u32,
    base_hi: u32,
    rptr: u32,
    rptr_hi: u32,
    wptr: u32,
    wptr_hi: u32,
    rptr_addr_lo: u32,
    rptr_addr_hi: u32,
    doorbell: u32,
    doorbell_offset: u32,
    poll_lo: u32,
    poll_hi: u32,
    minor: u32,
    first: u32,
    last: u32,
}

/// The queue block: GRBM selection, HQD banks, SDMA0 queue 0.
#[derive(Debug)]
pub struct Queues {
    r: QRegs,
    banks: BTreeMap<(u8, u8, u8), Vec<u32>>,
    doorbells: Option<Arc<DevMem>>,
    /// Bumped (Release) on every write that may change a binding; the driver half
    /// compares it (Acquire) before it looks at the bindings again.
    generation: Arc<AtomicU64>,
    /// Dequeue requests served since power-on.
    pub dequeues: u64,
    /// Activations of rings, ever (kept across resets, so epochs never repeat).
    activations: u64,
    /// The epoch of each ring's last activation.
    epochs: BTreeMap<RingKey, u64>,
    /// Long operations (a dispatch, a copy) running for a ring's activation: a write
    /// that unbinds or replaces the ring stops them at once, as a dequeue stops the
    /// waves on hardware, without waiting for the engine to look at the registers.
    watched: Vec<(RingKey, u64, Arc<AtomicBool>)>,
}

impl Queues {
    /// The block, its registers placed by `addr` (`None` if one is missing), writing
    /// ring write pointers into `doorbells` (BAR 2's memory).
    pub(crate) fn new(
        t: &gc::Table,
        addr: impl Fn(AmReg) -> Option<u32>,
        doorbells: Option<Arc<DevMem>>,
    ) -> Option<Self> {
        let first = addr(t.CP_MQD_BASE_ADDR)?;
        let last = addr(t.CP_HQD_PQ_WPTR_HI)?;
        let hqd_len = last.checked_sub(first)?.checked_add(1)?;
        let idx = |r: AmReg| -> Option<usize> {
            let a = addr(r)?;
            (a >= first && a <= last).then(|| (a - first) as usize)
        };
        let hqd = HqdIdx {
            active: idx(t.CP_HQD_ACTIVE)?,
            base: idx(t.CP_HQD_PQ_BASE)?,
            base_hi: idx(t.CP_HQD_PQ_BASE_HI)?,
            rptr: idx(t.CP_HQD_PQ_RPTR)?,
            rptr_report: idx(t.CP_HQD_PQ_RPTR_REPORT_ADDR)?,
            rptr_report_hi: idx(t.CP_HQD_PQ_RPTR_REPORT_ADDR_HI)?,
            wptr_poll: idx(t.CP_HQD_PQ_WPTR_POLL_ADDR)?,
            wptr_poll_hi: idx(t.CP_HQD_PQ_WPTR_POLL_ADDR_HI)?,
            doorbell: idx(t.CP_HQD_PQ_DOORBELL_CONTROL)?,
            control: idx(t.CP_HQD_PQ_CONTROL)?,
            dequeue: idx(t.CP_HQD_DEQUEUE_REQUEST)?,
            wptr_lo: idx(t.CP_HQD_PQ_WPTR_LO)?,
            wptr_hi: idx(t.CP_HQD_PQ_WPTR_HI)?,
        };
        let s = [
            t.SDMA0_QUEUE0_RB_CNTL,
            t.SDMA0_QUEUE0_RB_BASE,
            t.SDMA0_QUEUE0_RB_BASE_HI,
            t.SDMA0_QUEUE0_RB_RPTR,
            t.SDMA0_QUEUE0_RB_RPTR_HI,
            t.SDMA0_QUEUE0_RB_WPTR,
            t.SDMA0_QUEUE0_RB_WPTR_HI,
            t.SDMA0_QUEUE0_RB_RPTR_ADDR_LO,
            t.SDMA0_QUEUE0_RB_RPTR_ADDR_HI,
            t.SDMA0_QUEUE0_DOORBELL,
            t.SDMA0_QUEUE0_DOORBELL_OFFSET,
            t.SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO,
            t.SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI,
            t.SDMA0_QUEUE0_MINOR_PTR_UPDATE,
        ];
        let mut a = [0u32; 14];
        for (slot, r) in a.iter_mut().zip(s) {
            *slot = addr(r)?;
        }
        let sdma = SdmaRegs {
            cntl: a[0],
            base: a[1],
            base_hi: a[2],
            rptr: a[3],
            rptr_hi: a[4],
            wptr: a[5],
            wptr_hi: a[6],
            rptr_addr_lo: a[7],
            rptr_addr_hi: a[8],
            doorbell: a[9],
            doorbell_offset: a[10],
            poll_lo: a[11],
            poll_hi: a[12],
            minor: a[13],
            first: *a.iter().min()?,
            last: *a.iter().max()?,
        };
        Some(Queues {
            r: QRegs {
                grbm: addr(t.GRBM_GFX_CNTL)?,
                hqd_first: first,
                hqd_len,
                hqd,
                sdma,
            },
            banks: BTreeMap::new(),
            doorbells,
            generation: Arc::new(AtomicU64::new(0)),
            dequeues: 0,
            activations: 0,
            epochs: BTreeMap::new(),
            watched: Vec::new(),
        })
    }

    /// The registers the block covers.
    pub fn ranges(&self) -> Vec<Range<u32>> {
        let r = &self.r;
        vec![
            r.grbm..r.grbm.saturating_add(1),
            r.hqd_first..r.hqd_first.saturating_add(r.hqd_len),
            r.sdma.first..r.sdma.last.saturating_add(1),
        ]
    }

    /// The counter bumped by every write that may change a binding.
    pub(crate) fn generation(&self) -> Arc<AtomicU64> {
        self.generation.clone()
    }

    fn bump(&mut self, v: &Values) {
        // Release: the registers are stored before the driver half sees the change.
        self.generation.fetch_add(1, Ordering::Release);
        if self.watched.is_empty() {
            return;
        }
        let live: Vec<(RingKey, u64)> = self
            .bindings(v)
            .into_iter()
            .filter_map(|b| b.ok().map(|b| (b.key, b.epoch)))
            .collect();
        self.watched.retain(|(key, epoch, stop)| {
            if live.contains(&(*key, *epoch)) {
                // Kept while the operation runs (its engine holds the other handle).
                Arc::strong_count(stop) > 1
            } else {
                // Release: pairs with the engine's Acquire load between slices.
                stop.store(true, Ordering::Release);
                false
            }
        });
    }

    /// Stops `stop`'s operation when activation `epoch` of ring `key` ends (its
    /// registers unbind or replace it) — at once if it already has.
    pub(crate) fn watch(&mut self, v: &Values, key: RingKey, epoch: u64, stop: Arc<AtomicBool>) {
        self.watched.retain(|(_, _, s)| Arc::strong_count(s) > 1);
        let live = self
            .bindings(v)
            .into_iter()
            .any(|b| b.is_ok_and(|b| b.key == key && b.epoch == epoch));
        if live {
            self.watched.push((key, epoch, stop));
        } else {
            // Release: pairs with the engine's Acquire load between slices.
            stop.store(true, Ordering::Release);
        }
    }

    fn activate(&mut self, key: RingKey) {
        self.activations = self.activations.wrapping_add(1);
        self.epochs.insert(key, self.activations);
    }

    /// The me/pipe/queue `GRBM_GFX_CNTL` selects.
    fn selected(&self, v: &Values) -> (u8, u8, u8) {
        let g = v.get(self.r.grbm);
        (
            field(g, gc::GRBM_GFX_CNTL__MEID_MASK) as u8,
            field(g, gc::GRBM_GFX_CNTL__PIPEID_MASK) as u8,
            field(g, gc::GRBM_GFX_CNTL__QUEUEID_MASK) as u8,
        )
    }

    fn set_slot(&self, doorbell: Option<u64>, wptr: u64) {
        if let (Some(off), Some(page)) = (doorbell, &self.doorbells) {
            // An offset outside the page binds nothing (the driver half reports it).
            let _ = page.store_u64(off, wptr);
        }
    }

    fn hqd_doorbell(&self, bank: &[u32]) -> Option<u64> {
        let ctl = bank[self.r.hqd.doorbell];
        (ctl & gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK != 0)
            .then(|| u64::from(field(ctl, gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK)) * 4)
    }

    fn sdma_doorbell(&self, v: &Values) -> Option<u64> {
        let s = &self.r.sdma;
        (v.get(s.doorbell) & gc::SDMA0_QUEUE0_DOORBELL__ENABLE_MASK != 0).then(|| {
            u64::from(field(
                v.get(s.doorbell_offset),
                gc::SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK,
            )) * 4
        })
    }

    fn pair(lo: u32, hi: u32) -> u64 {
        u64::from(hi) << 32 | u64::from(lo)
    }

    /// The rings the registers bind now: each enabled ring, or why its registers
    /// cannot bind it.
    pub fn bindings(&self, v: &Values) -> Vec<Result<RingBinding, (RingKey, String)>> {
        let mut out = Vec::new();
        let h = self.r.hqd;
        for (&(me, pipe, queue), bank) in &self.banks {
            if !(1..=2).contains(&me) || bank[h.active] & gc::CP_HQD_ACTIVE__ACTIVE_MASK == 0 {
                continue;
            }
            let key = RingKey::Compute { me, pipe, queue };
            let qs = field(bank[h.control], gc::CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK) + 1;
            let base = Self::pair(bank[h.base], bank[h.base_hi]).checked_mul(256);
            out.push(match (base, qs <= MAX_RING_DWORDS_LOG2) {
                (None, _) => Err((key, "CP_HQD_PQ_BASE does not fit 64 bits once shifted by 8".into())),
                (_, false) => Err((
                    key,
                    format!("CP_HQD_PQ_CONTROL.QUEUE_SIZE {} is past the largest ring", qs - 1),
                )),
                (Some(base), true) => Ok(RingBinding {
                    key,
                    base,
                    dwords: 1 << qs,
                    rptr_addr: Some(Self::pair(bank[h.rptr_report] & !3, bank[h.rptr_report_hi])),
                    wptr_poll_addr: Self::pair(bank[h.wptr_poll] & !3, bank[h.wptr_poll_hi]),
                    doorbell: self.hqd_doorbell(bank),
                    rptr: u64::from(bank[h.rptr]),
                    epoch: self.epochs.get(&key).copied().unwrap_or(0),
                }),
            });
        }
        let s = &self.r.sdma;
        let cntl = v.get(s.cntl);
        if cntl & gc::SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK != 0 && v.get(s.minor) & 1 == 0 {
            let key = RingKey::Sdma { engine: 0, queue: 0 };
            let size = field(cntl, gc::SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK);
            let base = Self::pair(v.get(s.base), v.get(s.base_hi)).checked_mul(256);
            let rptr = Self::pair(v.get(s.rptr), v.get(s.rptr_hi));
            out.push(match base {
                None => Err((
                    key,
                    "SDMA0_QUEUE0_RB_BASE does not fit 64 bits once shifted by 8".into(),
                )),
                Some(_) if size > MAX_RING_DWORDS_LOG2 => Err((
                    key,
                    format!("SDMA0_QUEUE0_RB_CNTL.RB_SIZE {size} is past the largest ring"),
                )),
                Some(_) if rptr % 4 != 0 => Err((key, format!("SDMA0_QUEUE0_RB_RPTR {rptr:#x} is not dword aligned"))),
                Some(base) => Ok(RingBinding {
                    key,
                    base,
                    dwords: 1 << size,
                    rptr_addr: (cntl & gc::SDMA0_QUEUE0_RB_CNTL__RPTR_WRITEBACK_ENABLE_MASK != 0)
                        .then(|| Self::pair(v.get(s.rptr_addr_lo) & !3, v.get(s.rptr_addr_hi))),
                    wptr_poll_addr: Self::pair(v.get(s.poll_lo) & !3, v.get(s.poll_hi)),
                    doorbell: self.sdma_doorbell(v),
                    rptr,
                    epoch: self.epochs.get(&key).copied().unwrap_or(0),
                }),
            });
        }
        out
    }

    /// The HQD registers of me/pipe/queue (`None` if never written).
    pub fn hqd(&self, me: u8, pipe: u8, queue: u8) -> Option<&[u32]> {
        self.banks.get(&(me, pipe, queue)).map(Vec::as_slice)
    }
}

impl RegisterBlock for Queues {
    fn write(&mut self, v: &mut Values, _vram: Option<&Vram>, reg: u32, value: u32) -> Effect {
        let r = self.r;
        if reg == r.grbm {
            return Effect::None;
        }
        if let Some(i) = reg.checked_sub(r.hqd_first).filter(|&i| i < r.hqd_len) {
            let i = i as usize;
            let sel = self.selected(v);
            let h = r.hqd;
            let bank = self.banks.entry(sel).or_insert_with(|| vec![0; r.hqd_len as usize]);
            bank[i] = value;
            if i == h.dequeue && value & gc::CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ_MASK != 0 {
                // The queue drains and unmaps at once.
                bank[h.active] = 0;
                bank[h.dequeue] = 0;
                self.dequeues = self.dequeues.saturating_add(1);
            }
            if i == h.active && value & gc::CP_HQD_ACTIVE__ACTIVE_MASK != 0 {
                let (me, pipe, queue) = sel;
                self.activate(RingKey::Compute { me, pipe, queue });
            }
            let bank = &self.banks[&sel];
            if [h.active, h.wptr_lo, h.wptr_hi, h.doorbell].contains(&i)
                && bank[h.active] & gc::CP_HQD_ACTIVE__ACTIVE_MASK != 0
            {
                self.set_slot(self.hqd_doorbell(bank), Self::pair(bank[h.wptr_lo], bank[h.wptr_hi]));
            }
            self.bump(v);
            return Effect::None;
        }
        let s = r.sdma;
        if reg == s.cntl && value & gc::SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK != 0 {
            self.activate(RingKey::Sdma { engine: 0, queue: 0 });
        }
        if [s.cntl, s.wptr, s.wptr_hi, s.doorbell, s.doorbell_offset, s.minor].contains(&reg) {
            self.set_slot(self.sdma_doorbell(v), Self::pair(v.get(s.wptr), v.get(s.wptr_hi)));
        }
        self.bump(v);
        Effect::None
    }

    fn read(&mut self, v: &mut Values, reg: u32) -> Option<u32> {
        let i = reg.checked_sub(self.r.hqd_first).filter(|&i| i < self.r.hqd_len)?;
        let sel = self.selected(v);
        Some(self.banks.get(&sel).map_or(0, |b| b[i as usize]))
    }

    fn reset(&mut self, v: &mut Values) {
        self.banks.clear();
        self.epochs.clear();
        self.dequeues = 0;
        self.bump(v);
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
