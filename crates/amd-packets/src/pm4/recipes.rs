//! Packet sequences the compute queue sends as a unit: the memory barrier, a kernel
//! dispatch with its register setup, and the signal of a timeline.
//!
//! Each returns the dword offsets (within the sink) of the values a graph replay may
//! change, so a recorded command buffer can be patched in place.

use super::packets::*;
use super::regs::{GFX103_CP_COHER_START_DELAY, gfx11};
use super::{Opcode, ShReg, header, set_sh_reg};
use crate::{CmdSink, GfxTarget, PacketError, SliceSink, lo_hi};

/// `regBIF_BX_PF1_GPU_HDP_FLUSH_REQ` / `_DONE` (0x106, 0x107) in NBIO segment 2
/// (base 0xd20): the registers the HDP flush handshake writes and polls. The same on
/// the gfx10.3 and gfx11 parts tinygrad 0.10.1 drives, and on gfx9.4.3 (NBIO 7.9's
/// `regBIF_BX_PF0_GPU_HDP_FLUSH_REQ`, 0x106 in segment 2, whose base is 0xd20 on the
/// soc15 parts, `aldebaran_ip_offset.h`).
pub const fn hdp_flush_regs(_target: GfxTarget) -> (u32, u32) {
    (0x106 + 0xd20, 0x107 + 0xd20)
}

/// Flush HDP (so host writes through the BAR are visible), then invalidate and write
/// back every GPU cache level.
pub fn memory_barrier(target: GfxTarget, out: &mut impl CmdSink) -> usize {
    let (req, done) = hdp_flush_regs(target);
    let start = WaitRegMem::write_wait_reg(req, done, u32::MAX).encode(target, out);
    AcquireMem::barrier(target).encode(target, out);
    start
}

/// Where [`Signal::encode`] put the values a replay may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalOffsets {
    /// Signal address (lo, hi).
    pub address: usize,
    /// Signal value (lo, hi).
    pub value: usize,
}

/// A signal write: RELEASE_MEM of `value` to `address` with cache flush and interrupt,
/// and, for a timeline that sleeping waiters watch, a second RELEASE_MEM writing the
/// KFD event id to the event mailbox with that id as interrupt context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal {
    /// Address of the signal value.
    pub address: u64,
    /// Value written (low 32 bits).
    pub value: u64,
    /// `(mailbox address, event id)` of the KFD event to raise, if any.
    pub event: Option<(u64, u32)>,
}

impl Signal {
    /// Appends the packets; returns the offsets of the patchable values.
    #[inline]
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> SignalOffsets {
        let start = ReleaseMem::signal_on(target, self.address, self.value).encode(target, out);
        if let Some((mailbox, event_id)) = self.event {
            ReleaseMem::new(mailbox, DataSel::Data32)
                .data(event_id as u64)
                .int_sel(IntSel::AfterWriteConfirm)
                .int_ctxid(event_id)
                .encode(target, out);
        }
        SignalOffsets {
            address: start + ReleaseMemField::Address.offset(target),
            value: start + ReleaseMemField::Data.offset(target),
        }
    }
}

/// Everything a kernel dispatch sets, as tinygrad 0.10.1's `AMDComputeQueue.exec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch<'a> {
    /// Address of the kernel's first instruction (256-byte aligned; COMPUTE_PGM_LO/HI
    /// hold it shifted right by 8).
    pub code_addr: u64,
    /// `COMPUTE_PGM_RSRC1`.
    pub rsrc1: u32,
    /// `COMPUTE_PGM_RSRC2`.
    pub rsrc2: u32,
    /// `COMPUTE_PGM_RSRC3`.
    pub rsrc3: u32,
    /// `COMPUTE_TMPRING_SIZE` (scratch waves and wave size).
    pub tmpring_size: u32,
    /// Scratch base address (256-byte aligned); written to
    /// COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI on gfx9.4 and gfx11 and later (architected
    /// flat scratch), ignored on gfx10.3, whose scratch base travels in the
    /// private-segment user SGPRs instead.
    pub scratch_base: u64,
    /// COMPUTE_USER_DATA_0.. (at most 16): private segment descriptor, dispatch
    /// pointer, kernarg pointer, as the kernel descriptor asks.
    pub user_data: &'a [u32],
    /// Workgroup size (COMPUTE_NUM_THREAD_X/Y/Z).
    pub block: [u32; 3],
    /// Grid size in workgroups.
    pub grid: [u32; 3],
    /// DISPATCH_DIRECT initiator.
    pub initiator: DispatchInitiator,
}

/// Where [`Dispatch::encode`] put the values a replay may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchOffsets {
    /// COMPUTE_PGM_LO/HI (code address >> 8).
    pub code_addr: usize,
    /// COMPUTE_PGM_RSRC1, RSRC2.
    pub rsrc: usize,
    /// COMPUTE_TMPRING_SIZE.
    pub tmpring_size: usize,
    /// COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI (scratch base >> 8), where written.
    pub scratch_base: Option<usize>,
    /// COMPUTE_USER_DATA_0.. .
    pub user_data: usize,
    /// COMPUTE_NUM_THREAD_X/Y/Z.
    pub block: usize,
    /// DISPATCH_DIRECT grid x/y/z.
    pub grid: usize,
}

impl Dispatch<'_> {
    /// Most user SGPRs COMPUTE_USER_DATA_* can set.
    pub const MAX_USER_DATA: usize = 16;
    /// Most dwords a dispatch sequence takes (gfx11 with 16 user data dwords).
    pub const MAX_DWORDS: usize = 84;

    /// Appends the dispatch: cache invalidation, register setup, DISPATCH_DIRECT and a
    /// CS partial flush. Fails only for a misaligned code address or more than 16 user
    /// data dwords.
    #[inline]
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> Result<DispatchOffsets, PacketError> {
        if self.code_addr % 256 != 0 {
            return Err(PacketError::FieldRange {
                packet: "dispatch",
                field: "code address",
                value: self.code_addr,
                limit: "256-byte aligned",
            });
        }
        if self.user_data.len() > Self::MAX_USER_DATA {
            return Err(PacketError::FieldRange {
                packet: "dispatch",
                field: "user data dwords",
                value: self.user_data.len() as u64,
                limit: "0..=16",
            });
        }
        // Assemble on the stack and hand the sink one slice: one capacity check and
        // one copy instead of one per packet.
        let mut words = [0u32; Self::MAX_DWORDS];
        let mut local = SliceSink::new(&mut words);
        let o = self.encode_parts(target, &mut local);
        // MAX_DWORDS bounds the sequence on every target (a unit test encodes the
        // longest one); should that ever break, fail rather than emit a partial one.
        let len = local.finish().ok_or(PacketError::FieldRange {
            packet: "dispatch",
            field: "sequence dwords",
            value: Self::MAX_DWORDS as u64 + 1,
            limit: "Dispatch::MAX_DWORDS",
        })?;
        let start = out.len();
        out.put(&words[..len]);
        Ok(o.rebased(start))
    }

    /// The sequence itself, offsets counted from `out`'s length on entry.
    #[inline(always)]
    fn encode_parts(&self, target: GfxTarget, out: &mut impl CmdSink) -> DispatchOffsets {
        // The COMPUTE_* offsets are the same on gfx10.3, gfx11 and gfx12, and on gfx9.4
        // but for RSRC3 (a unit test compares the tables); the gfx11 table names them,
        // and the target decides which optional registers exist.
        use gfx11 as r;
        AcquireMem::before_dispatch(target).encode(target, out);
        let code_addr = set_sh_reg(out, r::COMPUTE_PGM_LO, lo_hi(self.code_addr >> 8)) + 2;
        let rsrc = set_sh_reg(out, r::COMPUTE_PGM_RSRC1, [self.rsrc1, self.rsrc2]) + 2;
        let rsrc3 = if target.is_gfx9() {
            super::regs::gfx94::COMPUTE_PGM_RSRC3
        } else {
            r::COMPUTE_PGM_RSRC3
        };
        set_sh_reg(out, rsrc3, [self.rsrc3]);
        let tmpring_size = set_sh_reg(out, r::COMPUTE_TMPRING_SIZE, [self.tmpring_size]) + 2;
        let scratch_base = match target {
            GfxTarget::Gfx94 | GfxTarget::Gfx11 | GfxTarget::Gfx12 => {
                Some(set_sh_reg(out, r::COMPUTE_DISPATCH_SCRATCH_BASE_LO, lo_hi(self.scratch_base >> 8)) + 2)
            }
            GfxTarget::Gfx103 => {
                set_sh_reg(out, GFX103_CP_COHER_START_DELAY, [0x20]);
                None
            }
        };
        set_sh_reg(out, r::COMPUTE_RESTART_X, [0; 4]);
        set_sh_reg(out, r::COMPUTE_STATIC_THREAD_MGMT_SE0, [u32::MAX; 2]);
        set_sh_reg(out, r::COMPUTE_STATIC_THREAD_MGMT_SE2, [u32::MAX; 2]);
        if target.gfx11_or_later() {
            set_sh_reg(out, r::COMPUTE_STATIC_THREAD_MGMT_SE4, [u32::MAX; 4]);
        }
        let user_data = out.len() + 2;
        if !self.user_data.is_empty() {
            out.put(&[
                header(Opcode::SetShReg, 1 + self.user_data.len()),
                r::COMPUTE_USER_DATA_0.offset() as u32,
            ]);
            out.put(self.user_data);
        }
        let [bx, by, bz] = self.block;
        let block = set_sh_reg(out, r::COMPUTE_START_X, [0, 0, 0, bx, by, bz, 0, 0]) + 5;
        set_sh_reg(out, r::COMPUTE_RESOURCE_LIMITS, [0]);
        let grid = DispatchDirect::new(self.grid)
            .initiator(self.initiator)
            .encode(target, out)
            + 1;
        EventWrite::cs_partial_flush().encode(target, out);
        DispatchOffsets {
            code_addr,
            rsrc,
            tmpring_size,
            scratch_base,
            user_data,
            block,
            grid,
        }
    }
}

impl DispatchOffsets {
    /// The same offsets moved `by` dwords further.
    pub const fn rebased(self, by: usize) -> Self {
        DispatchOffsets {
            code_addr: self.code_addr + by,
            rsrc: self.rsrc + by,
            tmpring_size: self.tmpring_size + by,
            scratch_base: match self.scratch_base {
                Some(s) => Some(s + by),
                None => None,
            },
            user_data: self.user_data + by,
            block: self.block + by,
            grid: self.grid + by,
        }
    }
}

/// The first SH register of the user SGPRs, for callers that lay them out.
pub const USER_DATA_0: ShReg = gfx11::COMPUTE_USER_DATA_0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pm4::{Pm4Packet, decode};
    use crate::testing::sample_dispatch as dispatch;

    #[test]
    fn offsets_point_at_the_values() {
        for t in GfxTarget::ALL {
            let mut buf = vec![0xdead; 3];
            let d = dispatch(&[0x1234, 0x5678]);
            let o = d.encode(t, &mut buf).unwrap();
            assert_eq!(buf[o.code_addr..o.code_addr + 2], crate::lo_hi(d.code_addr >> 8));
            assert_eq!(buf[o.rsrc..o.rsrc + 2], [d.rsrc1, d.rsrc2]);
            assert_eq!(buf[o.tmpring_size], d.tmpring_size);
            assert_eq!(buf[o.user_data..o.user_data + 2], [0x1234, 0x5678]);
            assert_eq!(buf[o.block..o.block + 3], d.block);
            assert_eq!(buf[o.grid..o.grid + 3], d.grid);
            match o.scratch_base {
                Some(s) => assert_eq!(buf[s..s + 2], crate::lo_hi(d.scratch_base >> 8)),
                None => assert_eq!(t, GfxTarget::Gfx103),
            }
            // The whole sequence decodes.
            assert!(decode(t, &buf[3..]).all(|r| r.is_ok()));
        }
    }

    #[test]
    fn gfx103_skips_the_gfx11_only_registers() {
        let mut buf = Vec::new();
        dispatch(&[1, 2]).encode(GfxTarget::Gfx103, &mut buf).unwrap();
        let regs: Vec<_> = decode(GfxTarget::Gfx103, &buf)
            .filter_map(|r| match r.unwrap().1 {
                Pm4Packet::SetShReg(s) => Some(s.reg()),
                _ => None,
            })
            .collect();
        assert!(regs.contains(&GFX103_CP_COHER_START_DELAY));
        assert!(!regs.contains(&gfx11::COMPUTE_STATIC_THREAD_MGMT_SE4));
        assert!(!regs.contains(&gfx11::COMPUTE_DISPATCH_SCRATCH_BASE_LO));
    }

    /// gfx9.4's dispatch, dword by dword from `soc15d.h` and `gc_9_4_3_offset.h`: the
    /// 7-dword ACQUIRE_MEM with its actions in COHER_CNTL (the scalar and vector L1,
    /// as tinygrad 0.14's gfx9 `exec`), RSRC3 at 0x22d, the scratch base written, no
    /// SE4..7 masks.
    #[test]
    fn gfx94_dispatch_uses_gfx9_packets_and_offsets() {
        let t = GfxTarget::Gfx94;
        let mut buf = Vec::new();
        dispatch(&[1, 2]).encode(t, &mut buf).unwrap();
        // PACKET3(ACQUIRE_MEM = 0x58, count 5); SH_KCACHE (27) | TCL1 (22).
        assert_eq!(buf[..7], [0xc005_5800, 0x0840_0000, u32::MAX, 0xff, 0, 0, 0xa]);
        let regs: Vec<_> = decode(t, &buf)
            .filter_map(|r| match r.unwrap().1 {
                Pm4Packet::SetShReg(s) => Some((s.reg().offset(), s.values().to_vec())),
                _ => None,
            })
            .collect();
        assert!(regs.contains(&(0x22d, vec![0])), "{regs:x?}");
        assert!(!regs.iter().any(|r| r.0 == gfx11::COMPUTE_PGM_RSRC3.offset()));
        assert!(
            !regs
                .iter()
                .any(|r| r.0 == gfx11::COMPUTE_STATIC_THREAD_MGMT_SE4.offset())
        );
        assert!(regs.contains(&(0x210, crate::lo_hi(0x7f50_0000_0000 >> 8).to_vec())));
        assert_eq!(
            crate::pm4::regs::gfx94::COMPUTE_PGM_RSRC3.name_on(t),
            Some("COMPUTE_PGM_RSRC3")
        );
        // The same sequence does not decode as gfx11's (its ACQUIRE_MEM is 8 dwords).
        assert!(decode(GfxTarget::Gfx11, &buf).any(|r| r.is_err()));
    }

    /// gfx9.4's barrier and signal: ACQUIRE_MEM of every level (the kernel's
    /// `gfx_v9_4_3_emit_mem_sync`) and RELEASE_MEM with the kernel fence's EOP flush.
    #[test]
    fn gfx94_barrier_and_signal() {
        let t = GfxTarget::Gfx94;
        let mut buf = Vec::new();
        let at = memory_barrier(t, &mut buf);
        assert_eq!(at, 0);
        // ICACHE (29) | KCACHE (27) | TC (23) | TCL1 (22) | TC_WB (18).
        assert_eq!(buf[7..], [0xc005_5800, 0x28c4_0000, u32::MAX, 0xff, 0, 0, 0xa]);
        let mut sig = Vec::new();
        let o = Signal {
            address: 0x7f00_0000_1000,
            value: 9,
            event: None,
        }
        .encode(t, &mut sig);
        // CACHE_FLUSH_AND_INV_TS_EVENT (0x14), index 5, TCL1 | TC | TC_WB | TC_MD.
        assert_eq!(sig[1], 0x0023_8514);
        assert_eq!(sig[o.value], 9);
        for t in GfxTarget::ALL {
            let mut b = Vec::new();
            memory_barrier(t, &mut b);
            assert!(decode(t, &b).all(|r| r.is_ok()), "{t}");
        }
    }

    #[test]
    fn the_longest_dispatch_fits_max_dwords() {
        let user = [7u32; Dispatch::MAX_USER_DATA];
        for t in GfxTarget::ALL {
            let mut buf = Vec::new();
            dispatch(&user).encode(t, &mut buf).unwrap();
            assert!(buf.len() <= Dispatch::MAX_DWORDS);
            if t == GfxTarget::Gfx11 {
                assert_eq!(buf.len(), Dispatch::MAX_DWORDS);
            }
        }
    }

    #[test]
    fn bad_dispatches_are_errors() {
        let mut buf = Vec::new();
        let mut d = dispatch(&[0; 17]);
        assert!(d.encode(GfxTarget::Gfx11, &mut buf).is_err());
        d.user_data = &[];
        d.code_addr += 4;
        assert!(d.encode(GfxTarget::Gfx11, &mut buf).is_err());
    }
}
