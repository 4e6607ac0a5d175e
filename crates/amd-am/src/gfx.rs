//! GFX 11.0.0 (the compute side) as tinygrad 0.10.1's `AM_GFX` sets it up after the
//! PSP's RLC autoload: the RS64 micro-engines' start addresses, the GC hub, the
//! "golden" registers tinygrad writes, the shader memory apertures of every VM id,
//! the MEC doorbell range and the MEC started; compute queues set up by GRBM
//! selection and the HQD registers from an MQD image (`setup_ring`); clock gating;
//! and `fini`, which dequeues, halts the MEC and turns VM context 0 of the GC hub
//! off, leaving the GPU as the next (partial) boot expects it.
//!
//! Waits poll every millisecond for at most [`Gfx::timeout`] (tinygrad's
//! `wait_reg` bound, 10 s). Where tinygrad's RLC autoload wait is wrong, the
//! condition is Linux's (`gfx_v11_0_wait_for_rlc_autoload_complete`): `CP_STAT` 0 and
//! `RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE` 1.

use std::time::{Duration, Instant};

use crate::error::{AmError, Result, RingProblem};
use crate::firmware::{AmFirmware, Rs64};
use crate::gmc::{Gmc, Hub, Mapping, PAGE};
use crate::ip::{AmDevice, GcGen, Ip, Reg, field, with_field};
use crate::psp::WAIT_REG_TIMEOUT;
use crate::regs::AmReg;
use crate::regs::generated::{gc, soc21_enum};

/// The MQD's header dword (Linux's `gfx_v11_0_compute_mqd_init`, as tinygrad).
pub const MQD_HEADER: u32 = 0xC031_0800;
/// `CP_HQD_HQ_STATUS0` in the MQD (tinygrad 0.10.1's value).
pub const HQ_STATUS0: u32 = 0x2000_4000;
/// Bytes of the MQD (one page, as tinygrad's `valloc(0x1000)`).
pub const MQD_SIZE: u64 = PAGE;
/// The dword of `struct v11_compute_mqd` where the register image starts
/// (`cp_mqd_base_addr_lo`, offset 0x80 in `v11_structs.h`).
pub const MQD_REGS_DWORD: usize = 0x80;
/// `CP_MEC_DOORBELL_RANGE_UPPER` (tinygrad 0.10.1's value).
pub const MEC_DOORBELL_RANGE_UPPER: u32 = 0x450;
/// The pause after the MEC is started (tinygrad's 50 ms; Linux waits there too).
pub const MEC_START_DELAY: Duration = Duration::from_millis(50);
/// The bit tinygrad (after Linux's gfx11 golden settings) sets in `TCP_CNTL`.
pub const TCP_CNTL_GOLDEN: u32 = 0x2000_0000;
/// `GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL` and `_3_CTRL` on GC 12 (Linux's
/// `nbif_v6_3_1_gc_doorbell_init`): enabled, AWID 3 and 6, `AWADDR_31_28` 3.
pub const GC_DOORBELL_ROUTE: [u32; 2] = [0x3000_0007, 0x3000_000d];
/// Compute pipes of GC 11's MEC (me 1); GC 12's has 2.
pub const MEC_PIPES: u8 = 4;
/// Queues of a compute pipe.
pub const QUEUES_PER_PIPE: u8 = 8;

/// Where a compute queue's memory is (GPU virtual addresses) and which hardware
/// queue and doorbell it takes: tinygrad's `setup_ring` arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComputeRingDesc {
    /// The ring (256-byte aligned).
    pub ring: u64,
    /// Its size in bytes: a power of two that `CP_HQD_PQ_CONTROL.QUEUE_SIZE` holds.
    pub ring_size: u64,
    /// Where the CP writes the read pointer back (`CP_HQD_PQ_RPTR_REPORT_ADDR`).
    pub rptr: u64,
    /// Where the CP polls the write pointer (`CP_HQD_PQ_WPTR_POLL_ADDR`).
    pub wptr: u64,
    /// The end-of-pipe buffer (256-byte aligned).
    pub eop: u64,
    /// Its size in bytes (a power of two).
    pub eop_size: u64,
    /// The doorbell, in 64-bit slots of BAR 2 (`AMDGPU_NAVI10_DOORBELL_MEC_RING0`).
    pub doorbell: u32,
    /// MEC pipe (0–3).
    pub pipe: u8,
    /// Queue of the pipe (0–7).
    pub queue: u8,
}

/// A compute queue set up by [`Gfx::setup_ring`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputeRing {
    /// What it was set up from.
    pub desc: ComputeRingDesc,
    /// The MQD (uncached VRAM).
    pub mqd: Mapping,
    /// The register image written to `CP_MQD_BASE_ADDR ..= CP_HQD_PQ_WPTR_HI`.
    pub image: Vec<u32>,
}

fn ring_err(field: &'static str, value: u64, problem: RingProblem) -> AmError {
    AmError::RingSetup {
        ring: "compute",
        field,
        value,
        problem,
    }
}

/// The interrupt control register of each compute pipe of the MEC (me 1) that `g`'s
/// GC has: 4 on GC 11, 2 on GC 12 (whose headers have no `CP_ME1_PIPE2/3_INT_CNTL`).
pub fn mec_pipe_int_cntl(g: &gc::Table) -> Vec<AmReg> {
    [
        Some(g.CP_ME1_PIPE0_INT_CNTL),
        Some(g.CP_ME1_PIPE1_INT_CNTL),
        g.CP_ME1_PIPE2_INT_CNTL,
        g.CP_ME1_PIPE3_INT_CNTL,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A ring's doorbell (in 64-bit slots) as its register's offset field `mask` holds it,
/// in 32-bit slots (`doorbell * 2`), or [`AmError::RingIndex`] naming `ring` if it does
/// not fit.
pub(crate) fn doorbell_offset(ring: &'static str, doorbell: u32, mask: u32) -> Result<u32> {
    let max = field_max(mask);
    doorbell.checked_mul(2).filter(|&v| v <= max).ok_or(AmError::RingIndex {
        ring,
        field: "doorbell",
        value: doorbell,
        max: max / 2,
    })
}

/// The largest value of the register field `mask`.
pub(crate) fn field_max(mask: u32) -> u32 {
    mask >> mask.trailing_zeros()
}

/// `(size / 4).bit_length() - 2` of a power-of-two `size` in bytes: log2 of its
/// dwords minus one (the CP's `2^(n + 1)` dwords), if it fits `mask`; `field` names
/// the size in errors.
fn log2_dwords_minus_1(size: u64, field: &'static str, mask: u32) -> Result<u32> {
    let dwords = size / 4;
    if size % 4 != 0 || !dwords.is_power_of_two() || dwords < 2 {
        return Err(ring_err(field, size, RingProblem::NotPowerOfTwo { min: 8 }));
    }
    let v = dwords.ilog2() - 1;
    if v > field_max(mask) {
        // 2^(max + 1) dwords of 4 bytes; `v` is at most 61, so the shift is below 64.
        let max = 1u64.checked_shl(field_max(mask) + 3).unwrap_or(u64::MAX);
        return Err(ring_err(field, size, RingProblem::TooLarge { max }));
    }
    Ok(v)
}

/// The GFX block of an [`AmDevice`].
#[derive(Debug)]
pub struct Gfx<'a> {
    dev: &'a AmDevice,
    ucode_start: [(Rs64, u64); 3],
    rings: Vec<(u8, u8)>,
    /// The bound on each register wait ([`WAIT_REG_TIMEOUT`] unless changed).
    pub timeout: Duration,
}

impl<'a> Gfx<'a> {
    /// The block on `dev`, with the RS64 engines' start addresses from `fw`.
    pub fn new(dev: &'a AmDevice, fw: &AmFirmware) -> Self {
        Gfx {
            dev,
            ucode_start: fw.ucode_start,
            rings: Vec::new(),
            timeout: WAIT_REG_TIMEOUT,
        }
    }

    /// GC's registers at this GPU's version.
    fn gc(&self) -> &'static gc::Table {
        self.dev.regs().tables().gc
    }

    fn reg(&self, r: AmReg) -> Result<Reg> {
        self.dev.regs().resolve(Ip::Gc, 0, r)
    }

    fn wr(&self, r: AmReg, v: u32) -> Result<()> {
        self.dev.regs().write(self.reg(r)?, v);
        Ok(())
    }

    fn rd(&self, r: AmReg) -> Result<u32> {
        Ok(self.dev.regs().read(self.reg(r)?))
    }

    fn upd(&self, r: AmReg, fields: &[(u32, u32)]) -> Result<()> {
        self.dev.regs().update(self.reg(r)?, fields);
        Ok(())
    }

    fn wr_pair(&self, lo: AmReg, hi: AmReg, v: u64) -> Result<()> {
        self.wr(lo, v as u32)?;
        self.wr(hi, (v >> 32) as u32)
    }

    /// `_grbm_select`: which me/pipe/queue (and VM id) the banked registers reach.
    fn grbm_select(&self, me: u8, pipe: u8, queue: u8, vmid: u8) -> Result<()> {
        self.wr(
            self.gc().GRBM_GFX_CNTL,
            build(&[
                (gc::GRBM_GFX_CNTL__MEID_MASK, u32::from(me)),
                (gc::GRBM_GFX_CNTL__PIPEID_MASK, u32::from(pipe)),
                (gc::GRBM_GFX_CNTL__VMID_MASK, u32::from(vmid)),
                (gc::GRBM_GFX_CNTL__QUEUEID_MASK, u32::from(queue)),
            ]),
        )
    }

    fn ucode_start(&self, e: Rs64) -> u64 {
        self.ucode_start.iter().find(|(k, _)| *k == e).map_or(0, |&(_, s)| s)
    }

    /// Linux's wait for the RLC autoload: `CP_STAT` 0 and `BOOTLOAD_COMPLETE` set.
    fn wait_rlc_autoload(&self) -> Result<()> {
        let (cp_stat, boot) = (
            self.reg(self.gc().CP_STAT)?,
            self.reg(self.gc().RLC_RLCS_BOOTLOAD_STATUS)?,
        );
        let regs = self.dev.regs();
        let start = Instant::now();
        loop {
            let (c, b) = (regs.read(cp_stat), regs.read(boot));
            let done = field(b, gc::RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK) == 1;
            if c == 0 && done {
                return Ok(());
            }
            if start.elapsed() >= self.timeout {
                let (reg, mask, value, last) = if c != 0 {
                    ("CP_STAT", u32::MAX, 0, c)
                } else {
                    (
                        "RLC_RLCS_BOOTLOAD_STATUS",
                        gc::RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK,
                        gc::RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK,
                        b,
                    )
                };
                return Err(AmError::Timeout {
                    step: "GFX: RLC autoload",
                    reg,
                    mask,
                    value,
                    last,
                    timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The MEC pipes this GC has (4 on GC 11, 2 on GC 12).
    fn mec_pipes(&self) -> usize {
        usize::from(Rs64::Mec.pipes(self.dev.regs().gc_gen()))
    }

    /// `_config_gfx_rs64`: each pipe's program counter start (the firmware's
    /// `ucode_start_addr >> 2`) for PFP and ME (me 0) and the MEC (me 1), on the
    /// pipes of [`Rs64::pipes`] (GC 11: 2, 2, 4; GC 12: 1, 1, 2), then each engine's
    /// pipes reset and released.
    fn config_rs64(&self) -> Result<()> {
        let g = self.dev.regs().gc_gen();
        let engines = [
            Rs64Regs {
                engine: Rs64::Pfp,
                start: (self.gc().CP_PFP_PRGRM_CNTR_START, self.gc().CP_PFP_PRGRM_CNTR_START_HI),
                me: 0,
                pipes: Rs64::Pfp.pipes(g),
                cntl: self.gc().CP_ME_CNTL,
                resets: &[
                    gc::CP_ME_CNTL__PFP_PIPE0_RESET_MASK,
                    gc::CP_ME_CNTL__PFP_PIPE1_RESET_MASK,
                ],
            },
            Rs64Regs {
                engine: Rs64::Me,
                start: (self.gc().CP_ME_PRGRM_CNTR_START, self.gc().CP_ME_PRGRM_CNTR_START_HI),
                me: 0,
                pipes: Rs64::Me.pipes(g),
                cntl: self.gc().CP_ME_CNTL,
                resets: &[gc::CP_ME_CNTL__ME_PIPE0_RESET_MASK, gc::CP_ME_CNTL__ME_PIPE1_RESET_MASK],
            },
            Rs64Regs {
                engine: Rs64::Mec,
                start: (
                    self.gc().CP_MEC_RS64_PRGRM_CNTR_START,
                    self.gc().CP_MEC_RS64_PRGRM_CNTR_START_HI,
                ),
                me: 1,
                pipes: Rs64::Mec.pipes(g),
                cntl: self.gc().CP_MEC_RS64_CNTL,
                resets: &MEC_PIPE_RESETS,
            },
        ];
        for Rs64Regs {
            engine,
            start: (lo, hi),
            me,
            pipes,
            cntl,
            resets,
        } in engines
        {
            let pc = self.ucode_start(engine) >> 2;
            for pipe in 0..pipes {
                self.grbm_select(me, pipe, 0, 0)?;
                self.wr_pair(lo, hi, pc)?;
            }
            self.grbm_select(0, 0, 0, 0)?;
            let resets = &resets[..usize::from(pipes).min(resets.len())];
            let set: Vec<(u32, u32)> = resets.iter().map(|&m| (m, 1)).collect();
            self.upd(cntl, &set)?;
            let clear: Vec<(u32, u32)> = resets.iter().map(|&m| (m, 0)).collect();
            self.upd(cntl, &clear)?;
        }
        Ok(())
    }

    /// NBIF 6.3.1's doorbell routing for GC: ports 0 and 3 (tinygrad 0.14's
    /// `doorbell_enable(port=0, awid=3)` and `(port=3, awid=6)`, the values of Linux's
    /// `nbif_v6_3_1_gc_doorbell_init`). Without an NBIF that has the entries (GC 11's
    /// NBIO 4.3), nothing is written.
    fn route_gc_doorbells(&self) -> Result<()> {
        let n = self.dev.regs().tables().nbio;
        for (reg, value) in [
            (n.GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL, GC_DOORBELL_ROUTE[0]),
            (n.GDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL, GC_DOORBELL_ROUTE[1]),
        ] {
            if let Some(r) = reg {
                self.dev.regs().write_reg(Ip::Nbio, r, value)?;
            }
        }
        Ok(())
    }

    /// `AM_GFX.init`, in tinygrad 0.10.1's order (GC 12: with tinygrad 0.14's and
    /// Linux's differences: no `TCP_CNTL` golden bit, GC doorbells routed in NBIF).
    pub fn init(&mut self, gmc: &mut Gmc<'_>) -> Result<()> {
        self.wait_rlc_autoload()?;
        self.config_rs64()?;
        gmc.init_hub(Hub::Gc)?;
        let gfx12 = self.dev.regs().gc_gen() == GcGen::Gfx12;
        // A GC 11 golden setting; GC 12's golden list (Linux's `gfx_v12_0`) has none
        // for `TCP_CNTL`, and the bit is unnamed in its header.
        if !gfx12 {
            let tcp = self.rd(self.gc().TCP_CNTL)?;
            self.wr(self.gc().TCP_CNTL, tcp | TCP_CNTL_GOLDEN)?;
        }
        self.upd(
            self.gc().RLC_SRM_CNTL,
            &[
                (gc::RLC_SRM_CNTL__SRM_ENABLE_MASK, 1),
                (gc::RLC_SRM_CNTL__AUTO_INCR_ADDR_MASK, 1),
            ],
        )?;
        if gfx12 {
            self.route_gc_doorbells()?;
        }
        self.upd(self.gc().GRBM_CNTL, &[(self.gc().GRBM_CNTL__READ_TIMEOUT_MASK, 0xff)])?;
        for vmid in 0..16 {
            self.grbm_select(0, 0, 0, vmid)?;
            self.wr(
                self.gc().SH_MEM_CONFIG,
                build(&[
                    (gc::SH_MEM_CONFIG__ADDRESS_MODE_MASK, soc21_enum::SH_MEM_ADDRESS_MODE_64),
                    (
                        gc::SH_MEM_CONFIG__ALIGNMENT_MODE_MASK,
                        soc21_enum::SH_MEM_ALIGNMENT_MODE_UNALIGNED,
                    ),
                    (gc::SH_MEM_CONFIG__INITIAL_INST_PREFETCH_MASK, 3),
                ]),
            )?;
            // LDS at 0x1000_0000_0000_0000, scratch at 0x2000_0000_0000_0000 (4 GiB each).
            self.wr(
                self.gc().SH_MEM_BASES,
                build(&[
                    (gc::SH_MEM_BASES__SHARED_BASE_MASK, 1),
                    (gc::SH_MEM_BASES__PRIVATE_BASE_MASK, 2),
                ]),
            )?;
        }
        self.grbm_select(0, 0, 0, 0)?;
        self.wr(self.gc().CP_MEC_DOORBELL_RANGE_LOWER, 0)?;
        self.wr(self.gc().CP_MEC_DOORBELL_RANGE_UPPER, MEC_DOORBELL_RANGE_UPPER)?;
        let mut start = vec![(gc::CP_MEC_RS64_CNTL__MEC_INVALIDATE_ICACHE_MASK, 0)];
        let n = self.mec_pipes();
        start.extend(MEC_PIPE_RESETS[..n].iter().map(|&m| (m, 0)));
        start.extend(MEC_PIPE_ACTIVE[..n].iter().map(|&m| (m, 1)));
        start.push((gc::CP_MEC_RS64_CNTL__MEC_HALT_MASK, 0));
        self.upd(self.gc().CP_MEC_RS64_CNTL, &start)?;
        std::thread::sleep(MEC_START_DELAY);
        Ok(())
    }

    /// `AM_GFX.fini`: every queue set up here dequeued (tinygrad dequeues me 1 pipe
    /// 0 queue 0, the only one it sets up) with `RESET_WAVES` and the SPI's compute
    /// queue reset; the MEC's icache invalidated, its pipes reset, inactive and
    /// halted; VM context 0 of the GC hub off.
    pub fn fini(&mut self) -> Result<()> {
        let mut queues = std::mem::take(&mut self.rings);
        if queues.is_empty() {
            queues.push((0, 0));
        }
        for (pipe, queue) in queues {
            self.grbm_select(1, pipe, queue, 0)?;
            // 1: DRAIN_PIPE, 2: RESET_WAVES.
            self.wr(self.gc().CP_HQD_DEQUEUE_REQUEST, 2)?;
            self.wr(self.gc().SPI_COMPUTE_QUEUE_RESET, 1)?;
        }
        self.grbm_select(0, 0, 0, 0)?;
        let mut stop = vec![(gc::CP_MEC_RS64_CNTL__MEC_INVALIDATE_ICACHE_MASK, 1)];
        let n = self.mec_pipes();
        stop.extend(MEC_PIPE_RESETS[..n].iter().map(|&m| (m, 1)));
        stop.extend(MEC_PIPE_ACTIVE[..n].iter().map(|&m| (m, 0)));
        stop.push((gc::CP_MEC_RS64_CNTL__MEC_HALT_MASK, 1));
        self.upd(self.gc().CP_MEC_RS64_CNTL, &stop)?;
        self.wr(self.gc().GCVM_CONTEXT0_CNTL, 0)
    }

    /// Dequeues me 1 `pipe` `queue` as [`Gfx::fini`] dequeues each queue (waves
    /// reset) and forgets it; the ring's memory is the caller's to free after.
    pub fn dequeue(&mut self, pipe: u8, queue: u8) -> Result<()> {
        self.grbm_select(1, pipe, queue, 0)?;
        // 1: DRAIN_PIPE, 2: RESET_WAVES.
        self.wr(self.gc().CP_HQD_DEQUEUE_REQUEST, 2)?;
        self.grbm_select(0, 0, 0, 0)?;
        self.rings.retain(|&r| r != (pipe, queue));
        Ok(())
    }

    /// The queues set up so far (pipe, queue).
    pub fn queues(&self) -> &[(u8, u8)] {
        &self.rings
    }

    /// The register image of a compute queue's MQD (`CP_MQD_BASE_ADDR ..=
    /// CP_HQD_PQ_WPTR_HI`), as tinygrad's `v11_compute_mqd` fills it, with the MQD
    /// at GPU address `mqd_va`, for the GC registers `g`.
    pub fn mqd_image(g: &gc::Table, d: &ComputeRingDesc, mqd_va: u64) -> Result<Vec<u32>> {
        let pipes = mec_pipe_int_cntl(g).len() as u8;
        for (field, value, count) in [("pipe", d.pipe, pipes), ("queue", d.queue, QUEUES_PER_PIPE)] {
            if value >= count {
                return Err(AmError::RingIndex {
                    ring: "compute",
                    field,
                    value: value.into(),
                    max: u32::from(count) - 1,
                });
            }
        }
        for (field, a) in [("ring", d.ring), ("eop", d.eop)] {
            if a % 256 != 0 {
                return Err(ring_err(field, a, RingProblem::Misaligned { align: 256 }));
            }
        }
        let queue_size = log2_dwords_minus_1(d.ring_size, "ring_size", gc::CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK)?;
        let eop_size = log2_dwords_minus_1(d.eop_size, "eop_size", gc::CP_HQD_EOP_CONTROL__EOP_SIZE_MASK)?;
        let db = doorbell_offset(
            "compute",
            d.doorbell,
            gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK,
        )?;
        let first = g.CP_MQD_BASE_ADDR.offset;
        let len = g.CP_HQD_PQ_WPTR_HI.offset - first + 1;
        let mut img = vec![0u32; len as usize];
        let mut set = |r: AmReg, v: u32| {
            if let Some(slot) = r.offset.checked_sub(first).and_then(|i| img.get_mut(i as usize)) {
                *slot = v;
            }
        };
        let (ring, eop) = (d.ring >> 8, d.eop >> 8);
        set(g.CP_MQD_BASE_ADDR, mqd_va as u32);
        set(g.CP_MQD_BASE_ADDR_HI, (mqd_va >> 32) as u32);
        set(
            g.CP_HQD_PERSISTENT_STATE,
            build(&[
                (gc::CP_HQD_PERSISTENT_STATE__PRELOAD_SIZE_MASK, 0x55),
                (gc::CP_HQD_PERSISTENT_STATE__PRELOAD_REQ_MASK, 1),
            ]),
        );
        set(g.CP_HQD_PIPE_PRIORITY, 2);
        set(g.CP_HQD_QUEUE_PRIORITY, 0xf);
        set(g.CP_HQD_QUANTUM, 0x111);
        set(g.CP_HQD_PQ_BASE, ring as u32);
        set(g.CP_HQD_PQ_BASE_HI, (ring >> 32) as u32);
        set(g.CP_HQD_PQ_RPTR_REPORT_ADDR, d.rptr as u32);
        set(g.CP_HQD_PQ_RPTR_REPORT_ADDR_HI, (d.rptr >> 32) as u32);
        set(g.CP_HQD_PQ_WPTR_POLL_ADDR, d.wptr as u32);
        set(g.CP_HQD_PQ_WPTR_POLL_ADDR_HI, (d.wptr >> 32) as u32);
        set(
            g.CP_HQD_PQ_DOORBELL_CONTROL,
            build(&[
                (gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK, db),
                (gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK, 1),
            ]),
        );
        set(
            g.CP_HQD_PQ_CONTROL,
            build(&[
                (gc::CP_HQD_PQ_CONTROL__RPTR_BLOCK_SIZE_MASK, 5),
                (gc::CP_HQD_PQ_CONTROL__UNORD_DISPATCH_MASK, 1),
                (gc::CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK, queue_size),
            ]),
        );
        set(
            g.CP_HQD_IB_CONTROL,
            build(&[(gc::CP_HQD_IB_CONTROL__MIN_IB_AVAIL_SIZE_MASK, 3)]),
        );
        set(g.CP_HQD_HQ_STATUS0, HQ_STATUS0);
        set(g.CP_MQD_CONTROL, build(&[(gc::CP_MQD_CONTROL__PRIV_STATE_MASK, 1)]));
        set(g.CP_HQD_VMID, 0);
        set(g.CP_HQD_EOP_BASE_ADDR, eop as u32);
        set(g.CP_HQD_EOP_BASE_ADDR_HI, (eop >> 32) as u32);
        set(
            g.CP_HQD_EOP_CONTROL,
            build(&[(gc::CP_HQD_EOP_CONTROL__EOP_SIZE_MASK, eop_size)]),
        );
        Ok(img)
    }

    /// `setup_ring`: the MQD (uncached VRAM) written with its header and register
    /// image and flushed through HDP; me 1, `pipe`, `queue` selected; the image
    /// written to `CP_MQD_BASE_ADDR ..= CP_HQD_PQ_WPTR_HI`; `CP_HQD_ACTIVE` set;
    /// the selection cleared; the pipe's time-stamp and generic-0 interrupts on.
    pub fn setup_ring(&mut self, gmc: &mut Gmc<'_>, d: &ComputeRingDesc) -> Result<ComputeRing> {
        // Everything checked before anything is allocated or written.
        Self::mqd_image(self.gc(), d, 0)?;
        let mqd = gmc.valloc(MQD_SIZE, true, true)?;
        let image = match Self::mqd_image(self.gc(), d, mqd.va) {
            Ok(i) => i,
            Err(e) => {
                let _ = gmc.vfree(&mqd);
                return Err(e);
            }
        };
        let mut bytes = vec![0u8; MQD_SIZE as usize];
        bytes[..4].copy_from_slice(&MQD_HEADER.to_le_bytes());
        for (i, w) in image.iter().enumerate() {
            let at = (MQD_REGS_DWORD + i) * 4;
            if let Some(b) = bytes.get_mut(at..at + 4) {
                b.copy_from_slice(&w.to_le_bytes());
            }
        }
        let paddr = mqd.paddrs.first().map_or(0, |p| p.0);
        if !self.dev.pci().vram().write(paddr, &bytes) {
            let _ = gmc.vfree(&mqd);
            return Err(self.dev.past_bar("the MQD", paddr, MQD_SIZE));
        }
        gmc.flush_hdp()?;

        self.grbm_select(1, d.pipe, d.queue, 0)?;
        let base = self.reg(self.gc().CP_MQD_BASE_ADDR)?;
        let regs = self.dev.regs();
        for (i, &w) in image.iter().enumerate() {
            let addr =
                u32::try_from(i)
                    .ok()
                    .and_then(|i| base.addr.checked_add(i))
                    .ok_or(AmError::RegisterAddress {
                        name: "CP_MQD_BASE_ADDR (MQD image)",
                        ip: "GC",
                        base: base.addr,
                        offset: i as u32,
                    })?;
            regs.write(
                Reg {
                    name: "CP_HQD (MQD image)",
                    ip: Ip::Gc,
                    addr,
                },
                w,
            );
        }
        self.wr(self.gc().CP_HQD_ACTIVE, 1)?;
        self.grbm_select(0, 0, 0, 0)?;
        // `mqd_image` took the pipe only if this GC has it; the pipes' registers have
        // the same fields.
        let int_cntl = mec_pipe_int_cntl(self.gc())
            .get(usize::from(d.pipe))
            .copied()
            .ok_or(AmError::RingIndex {
                ring: "compute",
                field: "pipe",
                value: d.pipe.into(),
                max: 0,
            })?;
        self.upd(
            int_cntl,
            &[
                (gc::CP_ME1_PIPE0_INT_CNTL__TIME_STAMP_INT_ENABLE_MASK, 1),
                (gc::CP_ME1_PIPE0_INT_CNTL__GENERIC0_INT_ENABLE_MASK, 1),
            ],
        )?;
        if !self.rings.contains(&(d.pipe, d.queue)) {
            self.rings.push((d.pipe, d.queue));
        }
        Ok(ComputeRing { desc: *d, mqd, image })
    }

    /// `set_clockgating_state`: into RLC safe mode (wait for the RLC to take the
    /// command), coarse-grain clock gating and light sleep on, the CP's write-pointer
    /// polling and idle interrupts, SDMA0's clock-gating interrupt, the medium-grain
    /// overrides off; out of safe mode.
    pub fn set_clockgating_state(&self) -> Result<()> {
        let safe = |msg: u32| build(&[(gc::RLC_SAFE_MODE__MESSAGE_MASK, msg), (gc::RLC_SAFE_MODE__CMD_MASK, 1)]);
        self.wr(self.gc().RLC_SAFE_MODE, safe(1))?;
        self.dev.regs().wait(
            "GFX: enter RLC safe mode",
            self.reg(self.gc().RLC_SAFE_MODE)?,
            gc::RLC_SAFE_MODE__CMD_MASK,
            0,
            self.timeout,
        )?;
        self.upd(
            self.gc().RLC_CGCG_CGLS_CTRL,
            &[
                (gc::RLC_CGCG_CGLS_CTRL__CGCG_GFX_IDLE_THRESHOLD_MASK, 0x36),
                (gc::RLC_CGCG_CGLS_CTRL__CGCG_EN_MASK, 1),
                (gc::RLC_CGCG_CGLS_CTRL__CGLS_REP_COMPANSAT_DELAY_MASK, 0xf),
                (gc::RLC_CGCG_CGLS_CTRL__CGLS_EN_MASK, 1),
            ],
        )?;
        self.upd(
            self.gc().CP_RB_WPTR_POLL_CNTL,
            &[
                (gc::CP_RB_WPTR_POLL_CNTL__POLL_FREQUENCY_MASK, 0x100),
                (gc::CP_RB_WPTR_POLL_CNTL__IDLE_POLL_COUNT_MASK, 0x90),
            ],
        )?;
        self.upd(
            self.gc().CP_INT_CNTL,
            &[
                (gc::CP_INT_CNTL__CNTX_BUSY_INT_ENABLE_MASK, 1),
                (gc::CP_INT_CNTL__CNTX_EMPTY_INT_ENABLE_MASK, 1),
                (gc::CP_INT_CNTL__CMP_BUSY_INT_ENABLE_MASK, 1),
                (gc::CP_INT_CNTL__GFX_IDLE_INT_ENABLE_MASK, 1),
            ],
        )?;
        self.upd(
            self.gc().SDMA0_RLC_CGCG_CTRL,
            &[(gc::SDMA0_RLC_CGCG_CTRL__CGCG_INT_ENABLE_MASK, 1)],
        )?;
        self.upd(
            self.gc().RLC_CGTT_MGCG_OVERRIDE,
            &[
                (gc::RLC_CGTT_MGCG_OVERRIDE__PERFMON_CLOCK_STATE_MASK, 0),
                (gc::RLC_CGTT_MGCG_OVERRIDE__GFXIP_FGCG_OVERRIDE_MASK, 0),
                (gc::RLC_CGTT_MGCG_OVERRIDE__GFXIP_REPEATER_FGCG_OVERRIDE_MASK, 0),
                (gc::RLC_CGTT_MGCG_OVERRIDE__GRBM_CGTT_SCLK_OVERRIDE_MASK, 0),
                (gc::RLC_CGTT_MGCG_OVERRIDE__RLC_CGTT_SCLK_OVERRIDE_MASK, 0),
                (gc::RLC_CGTT_MGCG_OVERRIDE__GFXIP_MGCG_OVERRIDE_MASK, 0),
                (gc::RLC_CGTT_MGCG_OVERRIDE__GFXIP_CGLS_OVERRIDE_MASK, 0),
                (gc::RLC_CGTT_MGCG_OVERRIDE__GFXIP_CGCG_OVERRIDE_MASK, 0),
            ],
        )?;
        self.wr(self.gc().RLC_SAFE_MODE, safe(0))
    }
}

/// What `_config_gfx_rs64` programs for one RS64 engine.
struct Rs64Regs {
    engine: Rs64,
    /// `CP_*_PRGRM_CNTR_START` and `_HI`.
    start: (AmReg, AmReg),
    /// The micro engine the pipes belong to (`GRBM_GFX_CNTL.MEID`).
    me: u8,
    pipes: u8,
    /// The register holding the pipes' reset bits.
    cntl: AmReg,
    resets: &'static [u32],
}

const MEC_PIPE_RESETS: [u32; 4] = [
    gc::CP_MEC_RS64_CNTL__MEC_PIPE0_RESET_MASK,
    gc::CP_MEC_RS64_CNTL__MEC_PIPE1_RESET_MASK,
    gc::CP_MEC_RS64_CNTL__MEC_PIPE2_RESET_MASK,
    gc::CP_MEC_RS64_CNTL__MEC_PIPE3_RESET_MASK,
];
const MEC_PIPE_ACTIVE: [u32; 4] = [
    gc::CP_MEC_RS64_CNTL__MEC_PIPE0_ACTIVE_MASK,
    gc::CP_MEC_RS64_CNTL__MEC_PIPE1_ACTIVE_MASK,
    gc::CP_MEC_RS64_CNTL__MEC_PIPE2_ACTIVE_MASK,
    gc::CP_MEC_RS64_CNTL__MEC_PIPE3_ACTIVE_MASK,
];

/// A register value from `(mask, value)` fields (tinygrad's `build`).
pub fn build(fields: &[(u32, u32)]) -> u32 {
    fields.iter().fold(0, |v, &(m, f)| with_field(v, m, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc() -> ComputeRingDesc {
        ComputeRingDesc {
            ring: 0x7f00_0001_0000,
            ring_size: 0x10000,
            rptr: 0x7f00_0002_0000,
            wptr: 0x7f00_0002_0010,
            eop: 0x7f00_0003_0000,
            eop_size: 0x1000,
            doorbell: 4,
            pipe: 0,
            queue: 0,
        }
    }

    #[test]
    fn mqd_registers_lie_in_the_image() {
        // The HQD window is the same on GC 11 and GC 12 (`v12_structs.h` keeps it too).
        for g in gc::VERSIONS {
            assert_eq!(g.CP_MQD_BASE_ADDR, gc::V11_0_0.CP_MQD_BASE_ADDR);
            assert_eq!(g.CP_HQD_PQ_WPTR_HI, gc::V11_0_0.CP_HQD_PQ_WPTR_HI);
        }
        let g = &gc::V11_0_0;
        let first = g.CP_MQD_BASE_ADDR.offset;
        let last = g.CP_HQD_PQ_WPTR_HI.offset;
        for r in [
            g.CP_HQD_PERSISTENT_STATE,
            g.CP_HQD_HQ_STATUS0,
            g.CP_MQD_CONTROL,
            g.CP_HQD_EOP_CONTROL,
            g.CP_HQD_ACTIVE,
            g.CP_HQD_VMID,
            g.CP_HQD_IB_CONTROL,
        ] {
            assert!(
                (first..=last).contains(&r.offset) && r.seg == g.CP_MQD_BASE_ADDR.seg,
                "{}",
                r.name
            );
        }
        // `v11_structs.h`: cp_mqd_base_addr_lo at dword 0x80, cp_hqd_pq_wptr_hi at 0xb7.
        assert_eq!(MQD_REGS_DWORD as u32 + last - first, 0xb7);
    }

    #[test]
    fn image_as_tinygrad_fills_it() {
        let g = &gc::V11_0_0;
        let img = Gfx::mqd_image(g, &desc(), 0x7f00_0004_0000).unwrap();
        let at = |r: AmReg| img[(r.offset - g.CP_MQD_BASE_ADDR.offset) as usize];
        assert_eq!(at(g.CP_MQD_BASE_ADDR), 0x0004_0000);
        assert_eq!(at(g.CP_MQD_BASE_ADDR_HI), 0x7f00);
        assert_eq!(at(g.CP_HQD_PQ_BASE), (0x7f00_0001_0000u64 >> 8) as u32);
        assert_eq!(
            field(at(g.CP_HQD_PQ_CONTROL), gc::CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK),
            13
        );
        assert_eq!(
            field(
                at(g.CP_HQD_PQ_DOORBELL_CONTROL),
                gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK
            ),
            8
        );
        assert_eq!(
            field(at(g.CP_HQD_EOP_CONTROL), gc::CP_HQD_EOP_CONTROL__EOP_SIZE_MASK),
            9
        );
        assert_eq!(at(g.CP_HQD_ACTIVE), 0);
        assert_eq!(at(g.CP_HQD_HQ_STATUS0), HQ_STATUS0);
    }

    #[test]
    fn bad_descriptions_are_refused_naming_the_field() {
        let setup = |field, value, problem| AmError::RingSetup {
            ring: "compute",
            field,
            value,
            problem,
        };
        let index = |field, value, max| AmError::RingIndex {
            ring: "compute",
            field,
            value,
            max,
        };
        let pow2 = RingProblem::NotPowerOfTwo { min: 8 };
        let cases = [
            (
                ComputeRingDesc {
                    ring_size: 0x3000,
                    ..desc()
                },
                setup("ring_size", 0x3000, pow2),
            ),
            (ComputeRingDesc { ring_size: 0, ..desc() }, setup("ring_size", 0, pow2)),
            (ComputeRingDesc { ring_size: 4, ..desc() }, setup("ring_size", 4, pow2)),
            (
                ComputeRingDesc {
                    ring: 0x7f00_0001_0010,
                    ..desc()
                },
                setup("ring", 0x7f00_0001_0010, RingProblem::Misaligned { align: 256 }),
            ),
            (
                ComputeRingDesc {
                    eop: 0x7f00_0003_0080,
                    ..desc()
                },
                setup("eop", 0x7f00_0003_0080, RingProblem::Misaligned { align: 256 }),
            ),
            (ComputeRingDesc { eop_size: 6, ..desc() }, setup("eop_size", 6, pow2)),
            (ComputeRingDesc { pipe: 4, ..desc() }, index("pipe", 4, 3)),
            (ComputeRingDesc { queue: 8, ..desc() }, index("queue", 8, 7)),
            (
                ComputeRingDesc {
                    doorbell: 0x200_0000,
                    ..desc()
                },
                index("doorbell", 0x200_0000, 0x1ff_ffff),
            ),
            (
                ComputeRingDesc {
                    doorbell: u32::MAX,
                    ..desc()
                },
                index("doorbell", u32::MAX, 0x1ff_ffff),
            ),
        ];
        for (d, want) in cases {
            assert_eq!(Gfx::mqd_image(&gc::V11_0_0, &d, 0).unwrap_err(), want, "{d:?}");
        }
        // The largest doorbell the field holds is taken.
        let top = ComputeRingDesc {
            doorbell: 0x1ff_ffff,
            ..desc()
        };
        assert!(Gfx::mqd_image(&gc::V11_0_0, &top, 0).is_ok());
        assert_eq!(
            setup("ring_size", 0x3000, pow2).to_string(),
            "compute ring: ring_size 0x3000: not a power of two of at least 8 bytes: pass a power of two"
        );
        assert_eq!(
            index("pipe", 4, 3).to_string(),
            "compute ring: pipe 4 is out of range: use 0 to 3"
        );
        // QUEUE_SIZE and EOP_SIZE hold more than a `u64` size reaches; a narrower
        // field (3 bits: at most 2^8 dwords) names its limit.
        assert_eq!(log2_dwords_minus_1(1 << 10, "ring_size", 0x7), Ok(7));
        assert_eq!(
            log2_dwords_minus_1(1 << 11, "ring_size", 0x7),
            Err(setup("ring_size", 1 << 11, RingProblem::TooLarge { max: 1 << 10 }))
        );
    }
}
