//! SDMA 6.0.0 (engine 0) as tinygrad 0.10.1's `AM_SDMA` sets it up: `init` (the
//! semaphore-wait timer off, the queue-hang watchdog at 10 s, the UTCL1 response
//! mode and L2 policies, the F32 engine released, context-empty and trap interrupts
//! on), `setup_ring` for queue 0 (ring base, read-pointer write-back and
//! write-pointer poll addresses, doorbell, `RB_CNTL`), and `fini` (ring and
//! indirect buffers off, the engine halted and soft-reset).

use std::time::Duration;

use crate::error::{AmError, Result, RingProblem};
use crate::gfx::{build, doorbell_offset, field_max};
use crate::ip::{AmDevice, Ip};
use crate::regs::AmReg;
use crate::regs::generated::{doorbell, gc, nbio};

/// `SDMA0_WATCHDOG_CNTL.QUEUE_HANG_COUNT`: 100 units of 100 ms (tinygrad's 10 s).
pub const QUEUE_HANG_COUNT: u32 = 100;
/// How long `fini` holds the soft reset (tinygrad's 10 ms).
pub const SOFT_RESET_HOLD: Duration = Duration::from_millis(10);
/// `RB_CNTL.RPTR_WRITEBACK_TIMER` (tinygrad's 4).
pub const RPTR_WRITEBACK_TIMER: u32 = 4;

/// Where an SDMA queue's memory is (GPU virtual addresses) and its doorbell:
/// tinygrad's `setup_ring` arguments (engine 0, queue 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdmaRingDesc {
    /// The ring (256-byte aligned).
    pub ring: u64,
    /// Its size in bytes (a power of two that `RB_CNTL.RB_SIZE` holds).
    pub ring_size: u64,
    /// Where the engine writes the read pointer back (`RB_RPTR_ADDR`).
    pub rptr: u64,
    /// Where it polls the write pointer (`RB_WPTR_POLL_ADDR`).
    pub wptr: u64,
    /// The doorbell, in 64-bit slots of BAR 2 (`AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0`).
    pub doorbell: u32,
}

/// The doorbell slots routed to SDMA on GC 12 (tinygrad 0.14's `size=4`; Linux routes
/// 20 per SDMA instance).
pub const SDMA_DOORBELL_RANGE: u32 = 4;

/// NBIF 6.3.1's doorbell routing for SDMA: `GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL`
/// enabled with AWID 0xe, `AWADDR_31_28` 3 and the range from
/// `AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0` (in 32-bit slots), as tinygrad 0.14's
/// `doorbell_enable(port=2, …)` and Linux's `nbif_v6_3_1_sdma_doorbell_range` set it;
/// `None` where the NBIO has no such entry (GC 11's NBIO 4.3).
pub fn sdma_doorbell_route(n: &nbio::Table) -> Option<(AmReg, u32)> {
    let reg = n.GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL?;
    let fields = [
        (n.GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_ENABLE_MASK?, 1),
        (n.GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_AWID_MASK?, 0xe),
        (
            n.GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_RANGE_OFFSET_MASK?,
            doorbell::AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0 * 2,
        ),
        (
            n.GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_RANGE_SIZE_MASK?,
            SDMA_DOORBELL_RANGE,
        ),
        (
            n.GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_AWADDR_31_28_VALUE_MASK?,
            3,
        ),
    ];
    Some((reg, build(&fields)))
}

fn ring_err(field: &'static str, value: u64, problem: RingProblem) -> AmError {
    AmError::RingSetup {
        ring: "SDMA",
        field,
        value,
        problem,
    }
}

impl SdmaRingDesc {
    /// `RB_CNTL.RB_SIZE` (log2 of the ring's dwords) and the doorbell offset
    /// (`doorbell * 2`), or what is wrong.
    pub fn check(&self) -> Result<(u32, u32)> {
        let dwords = self.ring_size / 4;
        if self.ring_size % 4 != 0 || !dwords.is_power_of_two() {
            return Err(ring_err(
                "ring_size",
                self.ring_size,
                RingProblem::NotPowerOfTwo { min: 4 },
            ));
        }
        let rb_size = dwords.ilog2();
        let rb_max = field_max(gc::SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK);
        if rb_size > rb_max {
            // 2^max dwords of 4 bytes; `rb_size` is at most 61, so the shift is below 64.
            let max = 1u64.checked_shl(rb_max + 2).unwrap_or(u64::MAX);
            return Err(ring_err("ring_size", self.ring_size, RingProblem::TooLarge { max }));
        }
        if self.ring % 256 != 0 {
            return Err(ring_err("ring", self.ring, RingProblem::Misaligned { align: 256 }));
        }
        for (field, a) in [("rptr", self.rptr), ("wptr", self.wptr)] {
            if a % 4 != 0 {
                return Err(ring_err(field, a, RingProblem::Misaligned { align: 4 }));
            }
        }
        let db = doorbell_offset("SDMA", self.doorbell, gc::SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK)?;
        Ok((rb_size, db))
    }
}

/// The SDMA block of an [`AmDevice`] (engine 0; its registers are GC's).
#[derive(Debug)]
pub struct Sdma<'a> {
    dev: &'a AmDevice,
    ring: Option<SdmaRingDesc>,
}

impl<'a> Sdma<'a> {
    /// The block on `dev`.
    pub fn new(dev: &'a AmDevice) -> Self {
        Sdma { dev, ring: None }
    }

    /// GC's registers (SDMA's are in GC's segments) at this GPU's version.
    fn gc(&self) -> &'static gc::Table {
        self.dev.regs().tables().gc
    }

    fn wr(&self, r: AmReg, v: u32) -> Result<()> {
        self.dev.regs().write_reg(Ip::Gc, r, v)
    }

    fn upd(&self, r: AmReg, fields: &[(u32, u32)]) -> Result<()> {
        let reg = self.dev.regs().resolve(Ip::Gc, 0, r)?;
        self.dev.regs().update(reg, fields);
        Ok(())
    }

    fn wr_pair(&self, lo: AmReg, hi: AmReg, v: u64) -> Result<()> {
        self.wr(lo, v as u32)?;
        self.wr(hi, (v >> 32) as u32)
    }

    /// `AM_SDMA.init` (on GC 12 without the registers and fields GC 12 lacks, and
    /// with SDMA's doorbells routed in NBIF: [`sdma_doorbell_route`]).
    pub fn init(&self) -> Result<()> {
        let g = self.gc();
        // GC 12's SDMA has no semaphore-wait timer.
        if let Some(r) = g.SDMA0_SEM_WAIT_FAIL_TIMER_CNTL {
            self.wr(r, 0)?;
        }
        self.upd(
            self.gc().SDMA0_WATCHDOG_CNTL,
            &[(gc::SDMA0_WATCHDOG_CNTL__QUEUE_HANG_COUNT_MASK, QUEUE_HANG_COUNT)],
        )?;
        self.upd(
            self.gc().SDMA0_UTCL1_CNTL,
            &[
                (gc::SDMA0_UTCL1_CNTL__RESP_MODE_MASK, 3),
                (gc::SDMA0_UTCL1_CNTL__REDO_DELAY_MASK, 9),
            ],
        )?;
        // Reads no-allocate, writes bypass (GC 12's page register has no LLC field).
        let mut page = vec![
            (gc::SDMA0_UTCL1_PAGE__RD_L2_POLICY_MASK, 2),
            (gc::SDMA0_UTCL1_PAGE__WR_L2_POLICY_MASK, 3),
        ];
        page.extend(g.SDMA0_UTCL1_PAGE__LLC_NOALLOC_MASK.map(|m| (m, 1)));
        self.upd(g.SDMA0_UTCL1_PAGE, &page)?;
        // The engine out of halt (GC 12: `SDMA0_MCU_CNTL`, without a second thread).
        let mut cntl = vec![(gc::SDMA0_F32_CNTL__HALT_MASK, 0)];
        cntl.extend(g.SDMA0_F32_CNTL__TH1_RESET_MASK.map(|m| (m, 0)));
        self.upd(g.SDMA0_F32_CNTL, &cntl)?;
        self.upd(
            self.gc().SDMA0_CNTL,
            &[
                (gc::SDMA0_CNTL__CTXEMPTY_INT_ENABLE_MASK, 1),
                (gc::SDMA0_CNTL__TRAP_ENABLE_MASK, 1),
            ],
        )?;
        if let Some((reg, value)) = sdma_doorbell_route(self.dev.regs().tables().nbio) {
            self.dev.regs().write_reg(Ip::Nbio, reg, value)?;
        }
        Ok(())
    }

    /// `setup_ring` for SDMA0 queue 0, in tinygrad's order: pointer updates held
    /// (`MINOR_PTR_UPDATE`), read and write pointers 0, base, read-pointer
    /// write-back and write-pointer poll addresses, doorbell offset and enable,
    /// pointer updates released, `RB_CNTL` (size, write-back every 2^4, poll, privileged,
    /// enabled), indirect buffers on.
    pub fn setup_ring(&mut self, d: &SdmaRingDesc) -> Result<()> {
        let (rb_size, db) = d.check()?;
        self.wr(self.gc().SDMA0_QUEUE0_MINOR_PTR_UPDATE, 1)?;
        self.wr_pair(self.gc().SDMA0_QUEUE0_RB_RPTR, self.gc().SDMA0_QUEUE0_RB_RPTR_HI, 0)?;
        self.wr_pair(self.gc().SDMA0_QUEUE0_RB_WPTR, self.gc().SDMA0_QUEUE0_RB_WPTR_HI, 0)?;
        self.wr_pair(
            self.gc().SDMA0_QUEUE0_RB_BASE,
            self.gc().SDMA0_QUEUE0_RB_BASE_HI,
            d.ring >> 8,
        )?;
        self.wr_pair(
            self.gc().SDMA0_QUEUE0_RB_RPTR_ADDR_LO,
            self.gc().SDMA0_QUEUE0_RB_RPTR_ADDR_HI,
            d.rptr,
        )?;
        self.wr_pair(
            self.gc().SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO,
            self.gc().SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI,
            d.wptr,
        )?;
        self.upd(
            self.gc().SDMA0_QUEUE0_DOORBELL_OFFSET,
            &[(gc::SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK, db)],
        )?;
        self.upd(
            self.gc().SDMA0_QUEUE0_DOORBELL,
            &[(gc::SDMA0_QUEUE0_DOORBELL__ENABLE_MASK, 1)],
        )?;
        self.wr(self.gc().SDMA0_QUEUE0_MINOR_PTR_UPDATE, 0)?;
        self.wr(
            self.gc().SDMA0_QUEUE0_RB_CNTL,
            build(&[
                (gc::SDMA0_QUEUE0_RB_CNTL__RB_VMID_MASK, 0),
                (gc::SDMA0_QUEUE0_RB_CNTL__RPTR_WRITEBACK_ENABLE_MASK, 1),
                (
                    gc::SDMA0_QUEUE0_RB_CNTL__RPTR_WRITEBACK_TIMER_MASK,
                    RPTR_WRITEBACK_TIMER,
                ),
                (gc::SDMA0_QUEUE0_RB_CNTL__F32_WPTR_POLL_ENABLE_MASK, 1),
                (gc::SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK, rb_size),
                (gc::SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK, 1),
                (gc::SDMA0_QUEUE0_RB_CNTL__RB_PRIV_MASK, 1),
            ]),
        )?;
        self.upd(
            self.gc().SDMA0_QUEUE0_IB_CNTL,
            &[(gc::SDMA0_QUEUE0_IB_CNTL__IB_ENABLE_MASK, 1)],
        )?;
        self.ring = Some(*d);
        Ok(())
    }

    /// Stops the ring set up by [`Sdma::setup_ring`] (ring and indirect buffers
    /// off, as [`Sdma::fini`] begins) without halting the engine; the ring's memory
    /// is the caller's to free after.
    pub fn stop_ring(&mut self) -> Result<()> {
        self.disable_ring()?;
        self.ring = None;
        Ok(())
    }

    /// The ring and indirect buffers of SDMA0 queue 0 off.
    fn disable_ring(&self) -> Result<()> {
        self.upd(
            self.gc().SDMA0_QUEUE0_RB_CNTL,
            &[(gc::SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK, 0)],
        )?;
        self.upd(
            self.gc().SDMA0_QUEUE0_IB_CNTL,
            &[(gc::SDMA0_QUEUE0_IB_CNTL__IB_ENABLE_MASK, 0)],
        )
    }

    /// The ring set up, if any.
    pub fn ring(&self) -> Option<&SdmaRingDesc> {
        self.ring.as_ref()
    }

    /// `AM_SDMA.fini`: the ring and indirect buffers off, the F32 engine halted
    /// with thread 1 in reset, `GRBM_SOFT_RESET.SOFT_RESET_SDMA0` held 10 ms.
    pub fn fini(&mut self) -> Result<()> {
        self.disable_ring()?;
        let g = self.gc();
        let mut cntl = vec![(gc::SDMA0_F32_CNTL__HALT_MASK, 1)];
        cntl.extend(g.SDMA0_F32_CNTL__TH1_RESET_MASK.map(|m| (m, 1)));
        self.upd(g.SDMA0_F32_CNTL, &cntl)?;
        self.wr(
            self.gc().GRBM_SOFT_RESET,
            build(&[(gc::GRBM_SOFT_RESET__SOFT_RESET_SDMA0_MASK, 1)]),
        )?;
        std::thread::sleep(SOFT_RESET_HOLD);
        self.wr(self.gc().GRBM_SOFT_RESET, 0)?;
        self.ring = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_checked() {
        let d = SdmaRingDesc {
            ring: 0x7f00_0000_0000,
            ring_size: 0x10000,
            rptr: 0x7f00_0001_0000,
            wptr: 0x7f00_0001_0010,
            doorbell: 0x100,
        };
        assert_eq!(d.check().unwrap(), (14, 0x200));
        let setup = |field, value, problem| AmError::RingSetup {
            ring: "SDMA",
            field,
            value,
            problem,
        };
        let pow2 = RingProblem::NotPowerOfTwo { min: 4 };
        let cases = [
            (
                SdmaRingDesc { ring_size: 0x3000, ..d },
                setup("ring_size", 0x3000, pow2),
            ),
            (SdmaRingDesc { ring_size: 0, ..d }, setup("ring_size", 0, pow2)),
            (
                SdmaRingDesc { ring: d.ring + 4, ..d },
                setup("ring", d.ring + 4, RingProblem::Misaligned { align: 256 }),
            ),
            (
                SdmaRingDesc { rptr: d.rptr + 1, ..d },
                setup("rptr", d.rptr + 1, RingProblem::Misaligned { align: 4 }),
            ),
            (
                SdmaRingDesc { wptr: d.wptr + 2, ..d },
                setup("wptr", d.wptr + 2, RingProblem::Misaligned { align: 4 }),
            ),
            (
                SdmaRingDesc {
                    doorbell: u32::MAX,
                    ..d
                },
                AmError::RingIndex {
                    ring: "SDMA",
                    field: "doorbell",
                    value: u32::MAX,
                    max: 0x1ff_ffff,
                },
            ),
            // RB_SIZE holds log2 of at most 2^31 dwords: 8 GiB.
            (
                SdmaRingDesc {
                    ring_size: 1 << 62,
                    ..d
                },
                setup("ring_size", 1 << 62, RingProblem::TooLarge { max: 1 << 33 }),
            ),
        ];
        for (bad, want) in cases {
            assert_eq!(bad.check(), Err(want), "{bad:?}");
        }
        assert_eq!(
            SdmaRingDesc {
                ring_size: 1 << 33,
                ..d
            }
            .check()
            .map(|c| c.0),
            Ok(31)
        );
        assert_eq!(
            setup("ring_size", 1 << 62, RingProblem::TooLarge { max: 1 << 33 }).to_string(),
            "SDMA ring: ring_size 0x4000000000000000: larger than the register field holds: pass at most 0x200000000"
        );
    }
}
