//! The interrupt handler (OSSSYS 6.0.0) as tinygrad 0.10.1's `AM_IH` sets it up:
//! rings 0 and 1 of 512 KiB in the boot region with a write-pointer page each,
//! `IH_RB_BASE`/`_HI` at the ring's memory-controller address, `IH_RB_CNTL`
//! (`MC_SPACE` 4, snooped, ring 0 with `WPTR_OVERFLOW_ENABLE` and `RPTR_REARM`,
//! ring 1 with `RB_FULL_DRAIN_ENABLE`), the write-back address of ring 0, the
//! pointers at 0, the doorbell read pointers, the storm and flood controls, then each
//! ring enabled (ring 0 with `ENABLE_INTR`).
//!
//! Two choices differ from tinygrad 0.10.1, both as Linux's `ih_v6_0` does:
//! `RB_SIZE` is `log2` of the ring's dwords (tinygrad writes one more, a ring twice
//! the size it allocated), and ring 0 gets `WPTR_WRITEBACK_ENABLE` (without it the
//! write-pointer page tinygrad reads is never written).
//!
//! [`Ih::handle`] reads the vectors between the read pointer and the written-back
//! write pointer, decodes them (`amdgpu_ih_decode_iv_helper`, and VM faults as
//! `gmc_v11_0_process_interrupt` reads them), clears an overflow as tinygrad's
//! `interrupt_handler` does, and moves `IH_RB_RPTR`.

use crate::error::{AmError, Result};
use crate::gmc::{Gmc, Hub};
use crate::ip::{AmDevice, Ip, field, with_field};
use crate::regs::generated::{doorbell, ih, osssys};

/// Each ring's size (tinygrad's `ring_size`).
pub const RING_SIZE: u64 = 512 << 10;
/// Bytes per interrupt vector.
pub const IV_BYTES: u64 = 32;

/// An interrupt vector (`struct amdgpu_iv_entry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IvEntry {
    /// `SOC21_IH_CLIENTID_*`.
    pub client_id: u32,
    /// The source id.
    pub src_id: u32,
    /// The ring (engine, queue) the source encodes.
    pub ring_id: u32,
    /// VM id.
    pub vmid: u32,
    /// 48-bit timestamp.
    pub timestamp: u64,
    /// PASID.
    pub pasid: u32,
    /// Node id.
    pub node_id: u32,
    /// Source data.
    pub src_data: [u32; 4],
}

/// A VM fault as an interrupt vector reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IvFault {
    /// The hub: GC for `SOC21_IH_CLIENTID_GFX`/`UTCL2_FAULT`, MM for
    /// `SOC21_IH_CLIENTID_VMC`/`VM_FAULT`.
    pub hub: Hub,
    /// The faulting address (page aligned, 48 bits).
    pub va: u64,
    /// Whether it was a write.
    pub write: bool,
}

impl IvEntry {
    /// Decodes 8 dwords (`amdgpu_ih_decode_iv_helper`).
    pub fn decode(dw: &[u32; 8]) -> IvEntry {
        IvEntry {
            client_id: dw[0] & 0xff,
            src_id: (dw[0] >> 8) & 0xff,
            ring_id: (dw[0] >> 16) & 0xff,
            vmid: (dw[0] >> 24) & 0xf,
            timestamp: u64::from(dw[1]) | u64::from(dw[2] & 0xffff) << 32,
            pasid: dw[3] & 0xffff,
            node_id: (dw[3] >> 16) & 0xff,
            src_data: [dw[4], dw[5], dw[6], dw[7]],
        }
    }

    /// The VM fault this vector reports, if it is one (`gmc_v11_0_process_interrupt`:
    /// page number in `src_data[0]`, address bits 47:44 in `src_data[1]` bits 3:0,
    /// bit 5 a write).
    pub fn vm_fault(&self) -> Option<IvFault> {
        let hub = match (self.client_id, self.src_id) {
            (ih::SOC21_IH_CLIENTID_VMC, ih::VMC_1_0__SRCID__VM_FAULT) => Hub::Mm,
            (ih::SOC21_IH_CLIENTID_GFX, ih::GFX_11_0_0__SRCID__UTCL2_FAULT) => Hub::Gc,
            _ => return None,
        };
        Some(IvFault {
            hub,
            va: u64::from(self.src_data[0]) << 12 | u64::from(self.src_data[1] & 0xf) << 44,
            write: self.src_data[1] & 0x20 != 0,
        })
    }

    /// Whether this is an SDMA trap (`SOC21_IH_CLIENTID_GFX`, `SDMA_TRAP`).
    pub fn is_sdma_trap(&self) -> bool {
        self.client_id == ih::SOC21_IH_CLIENTID_GFX && self.src_id == ih::GFX_11_0_0__SRCID__SDMA_TRAP
    }

    /// Whether this is a CP end-of-pipe interrupt.
    pub fn is_cp_eop(&self) -> bool {
        self.client_id == ih::SOC21_IH_CLIENTID_GRBM_CP && self.src_id == ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT
    }
}

/// What one [`Ih::handle`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interrupts {
    /// The vectors, oldest first.
    pub entries: Vec<IvEntry>,
    /// The ring had overflowed (vectors were dropped); the flag is cleared.
    pub overflowed: bool,
}

/// The IH of an [`AmDevice`].
#[derive(Debug)]
pub struct Ih<'a> {
    dev: &'a AmDevice,
    /// (ring, write-pointer page) VRAM offsets of rings 0 and 1.
    rings: [(u64, u64); 2],
    mc: [(u64, u64); 2],
    rptr: u64,
}

impl<'a> Ih<'a> {
    /// Takes both rings and their write-pointer pages from the boot region (zeroed
    /// on a full boot).
    pub fn new(dev: &'a AmDevice, gmc: &mut Gmc<'_>, zero: bool) -> Result<Self> {
        let mut rings = [(0, 0); 2];
        let mut mc = [(0, 0); 2];
        for i in 0..2 {
            let ring = gmc.palloc(RING_SIZE, 0x1000, zero, true)?;
            let wptr = gmc.palloc(0x1000, 0x1000, zero, true)?;
            rings[i] = (ring, wptr);
            mc[i] = (gmc.mc(ring)?, gmc.mc(wptr)?);
        }
        Ok(Ih {
            dev,
            rings,
            mc,
            rptr: 0,
        })
    }

    /// The VRAM offsets of ring `i`'s buffer and write-pointer page.
    pub fn ring(&self, i: usize) -> Option<(u64, u64)> {
        self.rings.get(i).copied()
    }

    fn wr(&self, reg: crate::regs::AmReg, v: u32) -> Result<()> {
        self.dev.regs().write_reg(Ip::Osssys, reg, v)
    }

    fn rd(&self, reg: crate::regs::AmReg) -> Result<u32> {
        self.dev.regs().read_reg(Ip::Osssys, reg)
    }

    fn upd(&self, reg: crate::regs::AmReg, fields: &[(u32, u32)]) -> Result<()> {
        let r = self.dev.regs().resolve(Ip::Osssys, 0, reg)?;
        self.dev.regs().update(r, fields);
        Ok(())
    }

    /// `AM_IH.init`.
    pub fn init(&mut self) -> Result<()> {
        use osssys::*;
        let t = self.dev.regs().tables().osssys;
        // log2 of the ring's dwords (Linux's order_base_2).
        let rb_size = (RING_SIZE / 4).trailing_zeros();
        let regs = [
            (
                t.IH_RB_BASE,
                t.IH_RB_BASE_HI,
                t.IH_RB_CNTL,
                t.IH_RB_WPTR,
                t.IH_RB_RPTR,
                t.IH_DOORBELL_RPTR,
            ),
            (
                t.IH_RB_BASE_RING1,
                t.IH_RB_BASE_HI_RING1,
                t.IH_RB_CNTL_RING1,
                t.IH_RB_WPTR_RING1,
                t.IH_RB_RPTR_RING1,
                t.IH_DOORBELL_RPTR_RING1,
            ),
        ];
        for (i, &(base, base_hi, cntl, wptr, rptr, db)) in regs.iter().enumerate() {
            let (ring_mc, wptr_mc) = self.mc[i];
            let b = ring_mc >> 8;
            self.wr(base, b as u32)?;
            self.wr(base_hi, (b >> 32) as u32)?;
            let mut c = [
                (IH_RB_CNTL__MC_SPACE_MASK, 4),
                (IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK, 1),
                (IH_RB_CNTL__RB_SIZE_MASK, rb_size),
                (IH_RB_CNTL__MC_SNOOP_MASK, 1),
                (IH_RB_CNTL__MC_RO_MASK, 0),
                (IH_RB_CNTL__MC_VMID_MASK, 0),
            ]
            .iter()
            .fold(0, |v, &(m, f)| with_field(v, m, f));
            c = if i == 0 {
                with_field(
                    with_field(
                        with_field(c, IH_RB_CNTL__WPTR_OVERFLOW_ENABLE_MASK, 1),
                        IH_RB_CNTL__RPTR_REARM_MASK,
                        1,
                    ),
                    IH_RB_CNTL__WPTR_WRITEBACK_ENABLE_MASK,
                    1,
                )
            } else {
                with_field(c, IH_RB_CNTL__RB_FULL_DRAIN_ENABLE_MASK, 1)
            };
            self.wr(cntl, c)?;
            if i == 0 {
                self.wr(t.IH_RB_WPTR_ADDR_LO, wptr_mc as u32)?;
                self.wr(t.IH_RB_WPTR_ADDR_HI, (wptr_mc >> 32) as u32)?;
            }
            self.wr(wptr, 0)?;
            self.wr(rptr, 0)?;
            let slot = (doorbell::AMDGPU_NAVI10_DOORBELL_IH + i as u32) * 2;
            self.wr(
                db,
                with_field(
                    with_field(0, IH_DOORBELL_RPTR__OFFSET_MASK, slot),
                    IH_DOORBELL_RPTR__ENABLE_MASK,
                    1,
                ),
            )?;
        }
        self.upd(
            t.IH_STORM_CLIENT_LIST_CNTL,
            &[(IH_STORM_CLIENT_LIST_CNTL__CLIENT18_IS_STORM_CLIENT_MASK, 1)],
        )?;
        self.upd(t.IH_INT_FLOOD_CNTL, &[(IH_INT_FLOOD_CNTL__FLOOD_CNTL_ENABLE_MASK, 1)])?;
        self.upd(t.IH_MSI_STORM_CTRL, &[(IH_MSI_STORM_CTRL__DELAY_MASK, 3)])?;
        self.upd(
            t.IH_RB_CNTL,
            &[(IH_RB_CNTL__RB_ENABLE_MASK, 1), (IH_RB_CNTL__ENABLE_INTR_MASK, 1)],
        )?;
        self.upd(t.IH_RB_CNTL_RING1, &[(IH_RB_CNTL__RB_ENABLE_MASK, 1)])?;
        self.rptr = 0;
        Ok(())
    }

    /// On a partial boot (the rings left running by an earlier boot): takes the
    /// read pointer from `IH_RB_RPTR`, so that [`Ih::handle`] reads only what came
    /// after it. A pointer outside the ring or off a vector boundary is an error.
    pub fn resume(&mut self) -> Result<()> {
        let r = u64::from(self.rd(self.dev.regs().tables().osssys.IH_RB_RPTR)?);
        if r >= RING_SIZE || r % IV_BYTES != 0 {
            return Err(AmError::Device {
                what: "IH ring 0 read pointer",
                msg: format!("{r:#x}: not a vector boundary inside the {RING_SIZE:#x}-byte ring"),
            });
        }
        self.rptr = r;
        Ok(())
    }

    fn read_vram(&self, at: u64, buf: &mut [u8]) -> Result<()> {
        if self.dev.pci().vram().read(at, buf) {
            Ok(())
        } else {
            Err(self.dev.past_bar("the IH ring", at, buf.len() as u64))
        }
    }

    /// The write pointer ring 0 wrote back (a byte offset into the ring).
    pub fn wptr(&self) -> Result<u64> {
        let mut b = [0u8; 4];
        self.read_vram(self.rings[0].1, &mut b)?;
        let raw = u32::from_le_bytes(b);
        // As Linux's `ih_v6_0_get_wptr`: the byte offset is the value without the
        // overflow flag (the register's OFFSET field is narrower than the ring).
        let off = u64::from(raw & !osssys::IH_RB_WPTR__RB_OVERFLOW_MASK);
        if off >= RING_SIZE || off % IV_BYTES != 0 {
            return Err(AmError::Device {
                what: "IH ring 0 write pointer",
                msg: format!("{raw:#x}: not a vector boundary inside the {RING_SIZE:#x}-byte ring"),
            });
        }
        Ok(off)
    }

    /// `interrupt_handler`, reading what it skips: the vectors from the read
    /// pointer to the written-back write pointer; an overflow cleared
    /// (`RB_OVERFLOW` off, `WPTR_OVERFLOW_CLEAR` pulsed); `IH_RB_RPTR` moved to the
    /// write pointer.
    pub fn handle(&mut self) -> Result<Interrupts> {
        use osssys::*;
        let t = self.dev.regs().tables().osssys;
        let wptr = self.wptr()?;
        let mut out = Interrupts::default();
        let mut r = self.rptr;
        while r != wptr {
            let mut b = [0u8; IV_BYTES as usize];
            let at = self.rings[0].0.checked_add(r).ok_or_else(|| AmError::Device {
                what: "IH ring 0 read pointer",
                msg: format!("{r:#x} overflows"),
            })?;
            self.read_vram(at, &mut b)?;
            let mut dw = [0u32; 8];
            for (d, c) in dw.iter_mut().zip(b.chunks_exact(4)) {
                *d = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            out.entries.push(IvEntry::decode(&dw));
            r = (r + IV_BYTES) % RING_SIZE;
        }
        if field(self.rd(t.IH_RB_WPTR)?, IH_RB_WPTR__RB_OVERFLOW_MASK) != 0 {
            out.overflowed = true;
            self.upd(t.IH_RB_WPTR, &[(IH_RB_WPTR__RB_OVERFLOW_MASK, 0)])?;
            self.upd(t.IH_RB_CNTL, &[(IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK, 1)])?;
            self.upd(t.IH_RB_CNTL, &[(IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK, 0)])?;
        }
        self.wr(t.IH_RB_RPTR, wptr as u32)?;
        self.rptr = wptr;
        Ok(out)
    }
}
