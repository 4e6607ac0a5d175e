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

use super::gmc::{Access, Hub, VmFault};
use super::model::Vram;
use super::regs::generated::{ih, osssys};
use super::regs::{AmReg, Effect, RegisterBlock, Values};

/// Bytes per interrupt vector.
pub const IV_BYTES: u64 = 32;

/// One interrupt vector, as `amdgpu_iv_entry` names its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IvEntry {
    /// `SOC21_IH_CLIENTID_*`.
    pub client_id: u8,
    /// The client's source id (`GFX_11_0_0__SRCID__*`, ...).
    pub src_id: u8,
    /// The ring (engine, queue) the source encodes.
    pub ring_id: u8,
    /// VM id (4 bits).
    pub vmid: u8,
    /// Process address space id.
    pub pasid: u16,
    /// Node id.
    pub node_id: u8,
    /// Source data.
    pub src_data: [u32; 4],
}

impl IvEntry {
    /// The 8 dwords written to the ring: dw0 client, source, ring, VM id (bits 27:24);
    /// dw1 and dw2 bits 15:0 the 48-bit timestamp; dw3 PASID (15:0) and node id
    /// (23:16); dw4..7 the source data.
    pub fn encode(&self, timestamp: u64) -> [u32; 8] {
        [
            u32::from(self.client_id)
                | u32::from(self.src_id) << 8
                | u32::from(self.ring_id) << 16
                | u32::from(self.vmid & 0xf) << 24,
            timestamp as u32,
            ((timestamp >> 32) & 0xffff) as u32,
            u32::from(self.pasid) | u32::from(self.node_id) << 16,
            self.src_data[0],
            self.src_data[1],
            self.src_data[2],
            self.src_data[3],
        ]
    }

    /// Decodes a vector as `amdgpu_ih_decode_iv_helper` does: the entry and its
    /// timestamp.
    pub fn decode(dw: &[u32; 8]) -> (IvEntry, u64) {
        let e = IvEntry {
            client_id: dw[0] as u8,
            src_id: (dw[0] >> 8) as u8,
            ring_id: (dw[0] >> 16) as u8,
            vmid: ((dw[0] >> 24) & 0xf) as u8,
            pasid: dw[3] as u16,
            node_id: (dw[3] >> 16) as u8,
            src_data: [dw[4], dw[5], dw[6], dw[7]],
        };
        (e, u64::from(dw[1]) | (u64::from(dw[2] & 0xffff) << 32))
    }

    /// The vector a VM fault raises: the GC hub's UTCL2 (`SOC21_IH_CLIENTID_GFX`,
    /// `UTCL2_FAULT`) or the MM hub's VMC (`SOC21_IH_CLIENTID_VMC`, `VM_FAULT`), with
    /// the page number in `src_data[0]`, address bits 47:44 in `src_data[1]` bits 3:0
    /// and bit 5 set for a write, as `gmc_v11_0_process_interrupt` reads them.
    pub fn vm_fault(f: &VmFault) -> IvEntry {
        let (client, src) = match f.hub {
            Hub::Gc => (ih::SOC21_IH_CLIENTID_GFX, ih::GFX_11_0_0__SRCID__UTCL2_FAULT),
            Hub::Mm => (ih::SOC21_IH_CLIENTID_VMC, ih::VMC_1_0__SRCID__VM_FAULT),
        };
        let write = if f.access == Access::Write { 0x20 } else { 0 };
        IvEntry {
            client_id: client as u8,
            src_id: src as u8,
            src_data: [(f.va >> 12) as u32, ((f.va >> 44) & 0xf) as u32 | write, 0, 0],
            ..IvEntry::default()
        }
    }

    /// A CP end-of-pipe interrupt (`SOC21_IH_CLIENTID_GRBM_CP`, `CP_EOP_INTERRUPT`)
    /// for `ring_id` (me, pipe, queue as the CP encodes them), with `context` (a
    /// RELEASE_MEM's interrupt context) in `src_data[0]`.
    pub fn cp_eop(ring_id: u8, vmid: u8, pasid: u16, context: u32) -> IvEntry {
        IvEntry {
            client_id: ih::SOC21_IH_CLIENTID_GRBM_CP as u8,
            src_id: ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT as u8,
            ring_id,
            vmid,
            pasid,
            node_id: 0,
            src_data: [context, 0, 0, 0],
        }
    }

    /// An SDMA trap (`SOC21_IH_CLIENTID_GFX`, `SDMA_TRAP`) for `ring_id`, with the
    /// trap packet's context in `src_data[0]`.
    pub fn sdma_trap(ring_id: u8, vmid: u8, pasid: u16, context: u32) -> IvEntry {
        IvEntry {
            client_id: ih::SOC21_IH_CLIENTID_GFX as u8,
            src_id: ih::GFX_11_0_0__SRCID__SDMA_TRAP as u8,
            ring_id,
            vmid,
            pasid,
            node_id: 0,
            src_data: [context, 0, 0, 0],
        }
    }
}

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
    /// The block, its registers placed by `addr` (`None` if one is missing).
    pub fn new(addr: impl Fn(AmReg) -> Option<u32>) -> Option<Self> {
        let regs = [
            osssys::IH_RB_CNTL,
            osssys::IH_RB_BASE,
            osssys::IH_RB_BASE_HI,
            osssys::IH_RB_RPTR,
            osssys::IH_RB_WPTR,
            osssys::IH_RB_WPTR_ADDR_LO,
            osssys::IH_RB_WPTR_ADDR_HI,
        ];
        let mut a = [0u32; 7];
        for (slot, r) in a.iter_mut().zip(regs) {
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
