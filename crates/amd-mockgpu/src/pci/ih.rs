//! The interrupt handler (OSSSYS 6.0.0, `ih_v6_0`): ring 0 of the IH, in VRAM.
//!
//! A source raises an interrupt with an [`IvEntry`] ([`Values::raise`] from a block,
//! [`RegisterFile::raise_interrupt`](super::RegisterFile::raise_interrupt) from
//! outside). The IH writes it as a 32-byte interrupt vector in the soc21 layout
//! (`amdgpu_ih_decode_iv_helper`) at `IH_RB_WPTR` in the ring `IH_RB_BASE`/`_HI` point
//! at (a memory-controller address, bits 39:8), advances the write pointer (a byte
//! offset, wrapping at the ring size `4 << IH_RB_CNTL.RB_SIZE`), writes `IH_RB_WPTR`'s
//! value to `IH_RB_WPTR_ADDR_LO/HI` when `WPTR_WRITEBACK_ENABLE` is set, and signals the
//! MSI when `ENABLE_INTR` is set. A full ring (the next write pointer would reach
//! `IH_RB_RPTR`) takes nothing: the entry is dropped and `IH_RB_WPTR.RB_OVERFLOW` set
//! if `WPTR_OVERFLOW_ENABLE` is; writing `IH_RB_CNTL` with `WPTR_OVERFLOW_CLEAR` clears
//! it. A disabled ring, a ring smaller than one entry or not wholly inside VRAM drops
//! every entry. With `RPTR_REARM` (and `ENABLE_INTR`), a write to `IH_RB_RPTR` that
//! leaves vectors unread signals the MSI again. Ring 1 (which nothing the mock raises
//! is routed to), the doorbell read pointer and interrupt storms are not modelled
//! (their registers only store).

use std::ops::Range;

use super::block::Vram;
use super::block::generated::osssys;
use super::block::{AmReg, Effect, RegisterBlock, Values};
pub use super::iv::{IV_BYTES, IvEntry};

#[derive(Debug, Clone, Copy)]
struct IhRegs {
    cntl: u32,
    base: u32,
    base_hi: u32,
    rptr: u32,
    wptr: u32,
    wptr_addr_lo: u32,
    wptr_addr_hi: u32,
    first: u32,
    last: u32,
}

fn shift_of(mask: u32) -> u32 {
    mask.trailing_zeros() & 31
}

/// What became of an interrupt offered to the IH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Written; `true` if the MSI is to be signalled.
    Written(bool),
    /// Dropped: ring disabled, unusable or full.
    Dropped,
}

/// The IH block.
#[derive(Debug)]
pub struct Ih {
    r: IhRegs,
    timestamp: u64,
    /// Vectors written since power-on.
    pub written: u64,
    /// Vectors dropped since power-on (ring disabled, unusable or full).
    pub dropped: u64,
    /// MSIs signalled since power-on (counted whether or not an eventfd took them).
    pub msis: u64,
}

impl Ih {
    /// The ring 0 registers the block decodes: CNTL, BASE, BASE_HI, RPTR, WPTR and the
    /// write-back address.
    pub fn ring_regs(t: &osssys::Table) -> [AmReg; 7] {
        [
            t.IH_RB_CNTL,
            t.IH_RB_BASE,
            t.IH_RB_BASE_HI,
            t.IH_RB_RPTR,
            t.IH_RB_WPTR,
            t.IH_RB_WPTR_ADDR_LO,
            t.IH_RB_WPTR_ADDR_HI,
        ]
    }

    /// The block with `t`'s registers, placed by `addr` (`None` if one is missing).
    pub fn new(t: &osssys::Table, addr: impl Fn(AmReg) -> Option<u32>) -> Option<Self> {
        let mut a = [0u32; 7];
        for (slot, r) in a.iter_mut().zip(Self::ring_regs(t)) {
            *slot = addr(r)?;
        }
        let first = *a.iter().min()?;
        let last = *a.iter().max()?;
        Some(Ih {
            r: IhRegs {
                cntl: a[0],
                base: a[1],
                base_hi: a[2],
                rptr: a[3],
                wptr: a[4],
                wptr_addr_lo: a[5],
                wptr_addr_hi: a[6],
                first,
                last,
            },
            timestamp: 0,
            written: 0,
            dropped: 0,
            msis: 0,
        })
    }

    /// The registers the block covers.
    pub fn range(&self) -> Range<u32> {
        self.r.first..self.r.last.saturating_add(1)
    }

    /// Offers `e` to ring 0.
    pub fn push(&mut self, v: &mut Values, vram: Option<&Vram>, e: &IvEntry) -> Delivery {
        let d = self.try_push(v, vram, e);
        match d {
            Delivery::Written(msi) => {
                self.written = self.written.saturating_add(1);
                if msi {
                    self.msis = self.msis.saturating_add(1);
                }
            }
            Delivery::Dropped => self.dropped = self.dropped.saturating_add(1),
        }
        d
    }

    fn try_push(&mut self, v: &mut Values, vram: Option<&Vram>, e: &IvEntry) -> Delivery {
        let r = self.r;
        let cntl = v.get(r.cntl);
        let Some(vram) = vram else { return Delivery::Dropped };
        if cntl & osssys::IH_RB_CNTL__RB_ENABLE_MASK == 0 {
            return Delivery::Dropped;
        }
        let log2 = (cntl & osssys::IH_RB_CNTL__RB_SIZE_MASK) >> shift_of(osssys::IH_RB_CNTL__RB_SIZE_MASK);
        // At most 4 << 31 bytes: always fits.
        let size = 4u64 << log2;
        if size < IV_BYTES {
            return Delivery::Dropped;
        }
        let base = (u64::from(v.get(r.base)) << 8) | (u64::from(v.get(r.base_hi) & 0xff) << 40);
        let Some(ring) = vram.mc_to_offset(v, base, size) else {
            return Delivery::Dropped;
        };
        let mask = size - 1;
        let wreg = v.get(r.wptr);
        let overflow_bit = osssys::IH_RB_WPTR__RB_OVERFLOW_MASK;
        let wptr = u64::from(wreg & !3) & mask & !(IV_BYTES - 1);
        let rptr = u64::from(v.get(r.rptr) & !3) & mask & !(IV_BYTES - 1);
        let next = (wptr + IV_BYTES) & mask;
        let delivery = if next == rptr {
            if cntl & osssys::IH_RB_CNTL__WPTR_OVERFLOW_ENABLE_MASK != 0 {
                v.set(r.wptr, wreg | overflow_bit);
            }
            Delivery::Dropped
        } else {
            let dw = e.encode(self.timestamp);
            self.timestamp = self.timestamp.wrapping_add(1) & 0xffff_ffff_ffff;
            let mut bytes = [0u8; IV_BYTES as usize];
            for (c, d) in bytes.chunks_exact_mut(4).zip(dw) {
                c.copy_from_slice(&d.to_le_bytes());
            }
            let Some(at) = ring.checked_add(wptr) else {
                return Delivery::Dropped;
            };
            if !vram.write(at, &bytes) {
                return Delivery::Dropped;
            }
            // `next` < size <= 4 << 31; the register keeps bits 31:2.
            v.set(r.wptr, (next as u32 & !3) | (wreg & overflow_bit));
            Delivery::Written(cntl & osssys::IH_RB_CNTL__ENABLE_INTR_MASK != 0)
        };
        if cntl & osssys::IH_RB_CNTL__WPTR_WRITEBACK_ENABLE_MASK != 0 {
            let addr = u64::from(v.get(r.wptr_addr_lo) & !3) | (u64::from(v.get(r.wptr_addr_hi) & 0xffff) << 32);
            if let Some(off) = vram.mc_to_offset(v, addr, 4) {
                vram.write(off, &v.get(r.wptr).to_le_bytes());
            }
        }
        delivery
    }
}

impl RegisterBlock for Ih {
    fn write(&mut self, v: &mut Values, _vram: Option<&Vram>, reg: u32, value: u32) -> Effect {
        let r = self.r;
        if reg == r.cntl && value & osssys::IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK != 0 {
            let w = v.get(r.wptr);
            v.set(r.wptr, w & !osssys::IH_RB_WPTR__RB_OVERFLOW_MASK);
        }
        if reg == r.rptr {
            // RPTR_REARM: a read-pointer update that leaves vectors unread raises the
            // MSI again, so an edge-triggered interrupt is not lost (Linux sets it
            // with MSI, `ih_v6_0_rb_cntl`).
            let cntl = v.get(r.cntl);
            let on = osssys::IH_RB_CNTL__RB_ENABLE_MASK
                | osssys::IH_RB_CNTL__ENABLE_INTR_MASK
                | osssys::IH_RB_CNTL__RPTR_REARM_MASK;
            let log2 = (cntl & osssys::IH_RB_CNTL__RB_SIZE_MASK) >> shift_of(osssys::IH_RB_CNTL__RB_SIZE_MASK);
            let mask = (4u64 << log2) - 1;
            let wptr = u64::from(v.get(r.wptr) & !3) & mask;
            let rptr = u64::from(value & !3) & mask;
            if cntl & on == on && wptr != rptr {
                self.msis = self.msis.saturating_add(1);
                return Effect::Msi;
            }
        }
        Effect::None
    }

    fn reset(&mut self, _v: &mut Values) {
        self.timestamp = 0;
        self.written = 0;
        self.dropped = 0;
        self.msis = 0;
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip() {
        let e = IvEntry {
            client_id: 0x14,
            src_id: 0xb5,
            ring_id: 3,
            vmid: 9,
            pasid: 0x1234,
            node_id: 2,
            src_data: [1, 2, 3, 4],
        };
        let ts = 0xabcd_1234_5678;
        assert_eq!(IvEntry::decode(&e.encode(ts)), (e, ts));
    }
}
