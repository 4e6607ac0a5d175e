//! Running CDNA3 instructions, in waves of 64 lanes. What lowers to RDNA3
//! ([`Inst::to_rdna3`]) runs as RDNA3 runs it; the memory encodings (SMEM's loads,
//! GLOBAL, FLAT, SCRATCH) read their own fields and hand RDNA3's executor the access
//! (the opcodes mapped by their gfx11 names, the generated `lowering` table);
//! program control gfx9 encodes otherwise (`s_waitcnt`'s counters, `s_endpgm`,
//! `s_barrier`), gfx940's 64-bit moves and shifted adds, the AccVGPR moves, the SDWA
//! forms, VOP1's and VOP2's DPP forms (gfx9's wave shifts and row broadcasts among
//! their controls), gfx9's `v_cmpx_*` and its clearing of a 16-bit result's high half
//! are here. Anything else stops the dispatch naming the instruction: the CDNA3
//! interpreter does not run it yet.

use super::decode::{Encoding, Inst};
use super::fields as fc;
use super::lower::scalar;
use super::lowering;
use super::opcodes::{Ds, Mubuf, Smem, Sop1, Sopc, Sopp, Vop1, Vop2, Vop3, Vop3p};
use crate::error::Trap;
use crate::field::Words;
use crate::memory::Memory;
use crate::rdna3::{self, FlatAccess, Flow, Frontend, ScalarLoad, Step, Wave, fields as r3};

/// gfx11's NULL scalar operand: no scalar base or offset.
const NULL: u16 = 124;

/// A CDNA3 instruction with what running it needs.
#[derive(Debug, Clone)]
pub(crate) enum Decoded {
    /// As RDNA3 runs it, and the CDNA3 instruction (its length, its text).
    Lowered(rdna3::Decoded, Inst),
    /// As RDNA3 runs it, a 16-bit result into the low half of VGPR `.2`, whose high
    /// half gfx9 then clears (gfx11 keeps it).
    Lowered16(rdna3::Decoded, Inst, usize),
    /// gfx9's `v_cmpx_*`: the compare (`v_cmp_*`, as RDNA3 runs it) into the lane mask
    /// at SGPR `.2` (gfx11's numbering: VCC for the 32-bit form), then EXEC the same.
    CmpX(rdna3::Decoded, Inst, usize),
    /// CDNA3's own.
    Own(Inst, Own),
}

/// What the CDNA3 interpreter makes of an instruction that does not lower.
#[derive(Debug, Clone)]
pub(crate) enum Own {
    /// Changes nothing here: the wait counters (an in-order interpreter has nothing
    /// outstanding), scheduling hints.
    Hint,
    /// `s_endpgm`.
    End,
    /// `s_barrier`.
    Barrier,
    /// A scalar load.
    ScalarLoad(ScalarLoad),
    /// A scalar load through a buffer resource (`s_buffer_load_dword*`): gfx9's V#
    /// holds the base and NUM_RECORDS where gfx11's does.
    ScalarBufferLoad(ScalarLoad),
    /// A GLOBAL access, in RDNA3's numbering; its data in AccVGPRs where `acc`.
    Global(FlatAccess, bool),
    /// `global_load_lds_*`: memory straight into LDS.
    GlobalLds(GlobalLds),
    /// A FLAT access.
    Flat(FlatAccess, bool),
    /// A SCRATCH access.
    Scratch(FlatAccess, bool),
    /// A MUBUF access (untyped, or an atomic), in RDNA3's numbering; its data in
    /// AccVGPRs where `acc`.
    Buffer(rdna3::BufferAccess, bool),
    /// `v_accvgpr_read_b32`, `v_accvgpr_write_b32`, `v_accvgpr_mov_b32`: a move from
    /// (`from_acc`) or to (`to_acc`) the AccVGPRs, which the unified register file
    /// holds from the wave's ACCUM_OFFSET.
    AccMove { from_acc: bool, to_acc: bool },
    /// `v_mov_b64`: a 64-bit move.
    MovB64(Wide),
    /// `v_lshl_add_u64`: `(S0 << S1[2:0]) + S2`, 64-bit.
    LshlAddU64(Wide),
    /// A VOP1 or VOP2 instruction with an SDWA dword.
    Sdwa(Box<Sdwa>),
    /// A VOP1 or VOP2 instruction with a DPP dword.
    Dpp(Box<Dpp>),
    /// A compare with an SDWA dword.
    SdwaCmp(Box<SdwaCmp>),
    /// `v_pk_fma_f32`, `v_pk_mul_f32`, `v_pk_add_f32`, `v_pk_mov_b32`: two 32-bit
    /// operations on register pairs.
    PkF32(Box<PkF32>),
    /// An integer dot product RDNA3 lacks or spells otherwise.
    Dot(Box<Dot>),
    /// An LDS read-modify-write RDNA3 does not have (`ds_add_f64`, the packed 16-bit
    /// adds), its data and result in AccVGPRs where `acc`.
    DsAtomic(Box<rdna3::DsExtraAtomic>, bool),
    /// The VGPR indexing mode's controls (`s_set_gpr_idx_*`).
    GprIdx(GprIdx),
    /// An 8-bit float conversion (gfx942's FNUZ formats).
    Fp8(Box<crate::fp8_ops::Fp8Inst>),
    /// A dense matrix instruction (MFMA), from AMD's layout table.
    Mfma(Box<super::mfma::MfmaOp>),
    /// A sparse matrix instruction (SMFMAC), from AMD's layout table.
    Smfmac(Box<super::mfma::SmfmacOp>),
    /// A scalar store or atomic.
    ScalarWrite(super::smem::ScalarWrite),
    /// `s_memtime` and `s_memrealtime`: the 64-bit clock to the SGPR pair from this
    /// one (gfx11's numbering).
    Clock(usize),
    /// `s_ff0_i32_b32` and `s_ff0_i32_b64`: the lowest clear bit's index (or -1) of the
    /// source (gfx11's numbering) to `sdst`.
    Ff0 { sdst: usize, src: u16, wide: bool },
    /// Refused, for the reason given.
    Refused(&'static str),
}

impl Own {
    /// Whether it works on each lane alone and writes no SGPR (a wave64 runs it as two
    /// passes of 32 lanes without keeping scalar results apart): the 64-bit moves and
    /// shifted adds, the AccVGPR moves, the packed 32-bit operations, the memory
    /// accesses, the dot products, the 8-bit float conversions, the LDS atomics.
    #[inline]
    fn lane_wise(&self) -> bool {
        matches!(
            self,
            Own::MovB64(_)
                | Own::LshlAddU64(_)
                | Own::AccMove { .. }
                | Own::PkF32(_)
                | Own::Global(..)
                | Own::GlobalLds(_)
                | Own::Flat(..)
                | Own::Scratch(..)
                | Own::Buffer(..)
                | Own::Dot(_)
                | Own::Fp8(_)
                | Own::DsAtomic(..)
        )
    }
}

/// A VOP1 or VOP2 instruction's SDWA form: its operation as an RDNA3 VOP3 instruction
/// from v0 (and v1) to v2 with the SDWA dword's modifiers, and the selects the
/// interpreter applies around it.
#[derive(Debug, Clone)]
pub(crate) struct Sdwa {
    op: rdna3::Decoded,
    vdst: usize,
    /// The sources (operand numbers, gfx11's) with their selects and sign extension;
    /// `None` for VOP1's second.
    srcs: [Option<(u16, u32, bool)>; 2],
    dst_sel: u32,
    dst_unused: u32,
    /// Whether the operation reads its destination (the multiply-accumulates): v2
    /// starts as VDST, else as 0 (a 16-bit result is then zero-extended, as gfx9's).
    accumulates: bool,
}

/// CDNA3's instructions.
pub(crate) struct Cdna3;

impl Frontend for Cdna3 {
    type Decoded = Decoded;
    fn decode(words: &[u32]) -> Result<Decoded, rdna3::DecodeError> {
        let i = Inst::decode(words)?;
        if let Some((d, mask)) = cmpx(&i) {
            return Ok(Decoded::CmpX(d, i, mask));
        }
        Ok(match i.to_rdna3() {
            Some(r) => match zeroes_high(&i) {
                Some(vdst) => Decoded::Lowered16(rdna3::Decoded::new(r), i, vdst),
                None => Decoded::Lowered(rdna3::Decoded::new(r), i),
            },
            None => Decoded::Own(i, own(&i)),
        })
    }
    const GFX12: bool = false;
    const CDNA: bool = true;
}

/// gfx9's `v_cmpx_*` (which writes its mask to VCC or SDST and to EXEC; gfx11's
/// writes EXEC alone) as the `v_cmp_*` of the same test, lowered, and the SGPR its
/// mask goes to; `None` for anything else, or a mask to NULL.
fn cmpx(i: &Inst) -> Option<(rdna3::Decoded, usize)> {
    let name = i.name()?;
    let rest = name.strip_prefix("v_cmpx_").filter(|_| i.ext.is_none())?;
    let (enc_name, field) = match i.enc {
        Encoding::Vopc => ("VOPC", fc::vopc::OP),
        Encoding::Vop3 => ("VOP3", fc::vop3::OP),
        _ => return None,
    };
    let cmp = format!("v_cmp_{rest}");
    let (_, ops) = super::opcodes::SPEC.iter().find(|(e, _)| *e == enc_name)?;
    let &(op, _) = ops.iter().find(|(_, n)| *n == cmp)?;
    let mut words = i.words;
    field.put(&mut words, u32::from(op));
    let n = usize::from(i.size);
    let c = Inst::decode(&words[..n]).ok()?;
    let lowered = c.to_rdna3()?;
    let mask = match i.enc {
        Encoding::Vopc => rdna3::VCC_LO,
        _ => scalar(fc::vop3::VDST.0.get(&words)).filter(|&m| m < 124)? as usize,
    };
    Some((rdna3::Decoded::new(lowered), mask))
}

/// The VGPR whose high half a VALU instruction with a 16-bit result clears on gfx9
/// (VOP1, VOP2, and VOP3 but where its OPSEL writes the high half), as LLVM's
/// `zeroesHigh16BitsOfDest` counts on.
fn zeroes_high(i: &Inst) -> Option<usize> {
    let w = &i.words;
    let vdst = match i.enc {
        Encoding::Vop1 | Encoding::Vop2 => fc::vop1::VDST.index(w),
        Encoding::Vop3 if fc::vop3::OPSEL.get(w) >> 3 == 0 => fc::vop3::VDST.index(w),
        _ => return None,
    };
    let listed = super::operands::operands(i.enc, i.op);
    listed
        .iter()
        .any(|o| o.field == super::operands::Field::Vdst && o.bits == 16 && o.kind == super::operands::Kind::Vgpr)
        .then_some(vdst)
}

/// gfx9's VGPR indexing mode: while MODE.GPR_IDX_EN is set, a vector instruction's
/// VGPR operands that M0[15:12] enables (bit 0 SRC0, 1 SRC1, 2 SRC2, 3 VDST) are
/// offset by M0[7:0] — LLVM's dynamic indexing into a vector in registers (`s_set_gpr_idx_on
/// s2, gpr_idx(SRC0)`, `v_mov_b32`, `s_set_gpr_idx_off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GprIdx {
    /// `s_set_gpr_idx_on`: the index from a scalar operand (gfx11's numbering), the
    /// operands it applies to; the mode on.
    On(u16, u32),
    /// `s_set_gpr_idx_off`.
    Off,
    /// `s_set_gpr_idx_idx`: a new index.
    Idx(u16),
    /// `s_set_gpr_idx_mode`: new operands.
    Mode(u32),
}

/// MODE.GPR_IDX_EN (gfx9's MODE bit 27).
const GPR_IDX_EN: u32 = 1 << 27;

/// Why an instruction the VGPR indexing mode cannot offset is refused under it.
const UNDER_GPR_IDX: &str = "the VGPR indexing mode on this instruction";

impl GprIdx {
    fn run(self, w: &mut Wave) -> Result<(), Trap> {
        let m0 = w.s[rdna3::M0];
        let index = |w: &Wave, src: u16| w.sread(src, None).map(|v| v & 0xff);
        match self {
            GprIdx::On(src, mode) => {
                w.s[rdna3::M0] = (m0 & !0xf0ff) | index(w, src)? | mode << 12;
                w.mode |= GPR_IDX_EN;
            }
            GprIdx::Off => w.mode &= !GPR_IDX_EN,
            GprIdx::Idx(src) => w.s[rdna3::M0] = (m0 & !0xff) | index(w, src)?,
            GprIdx::Mode(mode) => w.s[rdna3::M0] = (m0 & !0xf000) | mode << 12,
        }
        Ok(())
    }
}

/// Runs lowered instruction `d` (CDNA3's `i`) with the VGPR indexing mode on: a VOP1,
/// VOP2 or VOP3 instruction with its enabled VGPR operands offset, re-encoded and
/// lowered again; a scalar instruction as it is. Any other vector instruction is
/// refused.
fn indexed(w: &mut Wave, d: &rdna3::Decoded, i: &Inst, mem: &dyn Memory, lds: &mut [u8]) -> Result<Flow, Trap> {
    use crate::field::Bits;
    let (index, mode) = (w.s[rdna3::M0] & 0xff, w.s[rdna3::M0] >> 12 & 0xf);
    // The encoding's source fields (9 bits, VGPRs from 256) and its VDST (8 bits).
    let (srcs, vdst): (&[Bits], Bits) = match i.enc {
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopk | Encoding::Sopc | Encoding::Sopp | Encoding::Smem => {
            return d.run(w, mem, lds);
        }
        Encoding::Vop1 if i.ext.is_none() => (&[fc::vop1::SRC0.0], fc::vop1::VDST.0),
        Encoding::Vop2 if i.ext.is_none() => (&[fc::vop2::SRC0.0, fc::vop2::VSRC1.0], fc::vop2::VDST.0),
        Encoding::Vop3 => (
            &[fc::vop3::SRC0.0, fc::vop3::SRC1.0, fc::vop3::SRC2.0],
            fc::vop3::VDST.0,
        ),
        _ => return Err(Trap::refused("the VGPR indexing mode on this encoding".into())),
    };
    const PAST: &str = "the VGPR indexing mode took an operand past v255";
    let mut words = i.words;
    for (k, f) in srcs.iter().enumerate() {
        let n = f.get(&words);
        // VOP2's VSRC1 is a VGPR number alone.
        let (is_vgpr, base) = if i.enc == Encoding::Vop2 && k == 1 {
            (true, 0)
        } else {
            (n >= 256, 256)
        };
        if mode >> k & 1 == 1 && is_vgpr {
            let v = n - base + index;
            if v > 255 {
                return Err(Trap::refused(PAST.into()));
            }
            f.put(&mut words, base + v);
        }
    }
    // VOP3's compares write an SGPR mask through VDST.
    let vdst_is_vgpr = !(i.enc == Encoding::Vop3 && i.name().is_some_and(|n| n.starts_with("v_cmp")));
    if mode >> 3 & 1 == 1 && vdst_is_vgpr {
        let v = vdst.get(&words) + index;
        if v > 255 {
            return Err(Trap::refused(PAST.into()));
        }
        vdst.put(&mut words, v);
    }
    let moved = Inst::decode(&words[..usize::from(i.size)])
        .ok()
        .and_then(|m| m.to_rdna3())
        .ok_or_else(|| Trap::refused(UNDER_GPR_IDX.into()))?;
    rdna3::Decoded::new(moved).run_out_of_line(w, mem, lds)
}

/// Why the CDNA3 interpreter refuses the opcode `name` on purpose, where it does: what
/// gfx942 does not have, and what a compute wave without a trap handler or graphics
/// state cannot use.
pub(super) fn refusal(name: &str) -> Option<&'static str> {
    if !super::on_gfx942(name) {
        return Some("a CDNA4 (gfx950) instruction, which gfx942 does not have");
    }
    if name.starts_with("ds_gws_") {
        return Some("global wave sync (GWS) is a driver-reserved resource KFD compute queues do not get");
    }
    Some(match name {
        "s_endpgm_saved" => "ends a wave after a context save, which only a trap handler does",
        "s_rfe_restore_b64" => "returns from a trap handler; the interpreter runs no trap handler",
        "s_endpgm_ordered_ps_done" => "graphics: ends a pixel shader in ordered mode",
        // The tables give these a VOP3 opcode; LLVM's gfx942 assembler refuses their
        // `_e64` forms, and no pseudocode says what VOP3's fields would do to them.
        "v_pk_fmac_f16_e64" | "v_swap_b32_e64" | "v_accvgpr_mov_b32_e64" => {
            "a VOP3 form LLVM does not encode for gfx942 (it has the VOP1/VOP2 form only)"
        }
        "v_screen_partition_4se_b32_e32" | "v_screen_partition_4se_b32_e64" => {
            "graphics: a screen position's shader engine among four"
        }
        _ => return None,
    })
}

/// What CDNA3's own instruction `i` is.
fn own(i: &Inst) -> Own {
    let w = &i.words;
    if let Some(why) = i.name().and_then(refusal) {
        return Own::Refused(why);
    }
    if let Some(x) = super::fp8::decode(i) {
        return x.map_or_else(Own::Refused, |x| Own::Fp8(Box::new(x)));
    }
    match i.enc {
        Encoding::Sopp => match Sopp::from_op(i.op) {
            Some(Sopp::S_ENDPGM) => Own::End,
            Some(Sopp::S_BARRIER) => Own::Barrier,
            Some(Sopp::S_NOP | Sopp::S_WAITCNT | Sopp::S_SETPRIO | Sopp::S_SLEEP) => Own::Hint,
            Some(Sopp::S_SET_GPR_IDX_OFF) => Own::GprIdx(GprIdx::Off),
            Some(Sopp::S_SET_GPR_IDX_MODE) => Own::GprIdx(GprIdx::Mode(fc::sopp::SIMM16.get(w) & 0xf)),
            _ => Own::Refused("program control the CDNA3 interpreter does not run yet"),
        },
        Encoding::Sopc if Sopc::from_op(i.op) == Some(Sopc::S_SET_GPR_IDX_ON) => {
            match scalar(fc::sopc::SSRC0.0.get(w)) {
                Some(src) => Own::GprIdx(GprIdx::On(src as u16, fc::sopc::SSRC1.0.get(w) & 0xf)),
                None => Own::Refused("an index in FLAT_SCRATCH or XNACK_MASK"),
            }
        }
        Encoding::Sop1 if matches!(Sop1::from_op(i.op), Some(Sop1::S_FF0_I32_B32 | Sop1::S_FF0_I32_B64)) => {
            match (scalar(fc::sop1::SDST.0.get(w)), scalar(fc::sop1::SSRC0.0.get(w))) {
                (Some(sdst), Some(src)) => Own::Ff0 {
                    sdst: sdst as usize,
                    src: src as u16,
                    wide: Sop1::from_op(i.op) == Some(Sop1::S_FF0_I32_B64),
                },
                _ => Own::Refused("an operand in FLAT_SCRATCH or XNACK_MASK"),
            }
        }
        // gfx9's vector no-operation, and the clearing of exception flags the
        // interpreter does not keep.
        Encoding::Vop1
            if i.ext.is_none() && matches!(Vop1::from_op(i.op), Some(Vop1::V_NOP_E32 | Vop1::V_CLREXCP_E32)) =>
        {
            Own::Hint
        }
        Encoding::Vop3 if matches!(Vop3::from_op(i.op), Some(Vop3::V_NOP_E64 | Vop3::V_CLREXCP_E64)) => Own::Hint,
        Encoding::Sop1 if Sop1::from_op(i.op) == Some(Sop1::S_SET_GPR_IDX_IDX) => {
            match scalar(fc::sop1::SSRC0.0.get(w)) {
                Some(src) => Own::GprIdx(GprIdx::Idx(src as u16)),
                None => Own::Refused("an index in FLAT_SCRATCH or XNACK_MASK"),
            }
        }
        Encoding::Smem => smem(i),
        Encoding::Global | Encoding::Scratch if lds_dma_size(i).is_some() => global_lds(i),
        Encoding::Global | Encoding::Flat | Encoding::Scratch => {
            let acc = fc::flat::ACC.get(w) == 1;
            let op = match i.enc {
                Encoding::Global => lowering::global(i.op),
                Encoding::Flat => lowering::flat(i.op),
                _ => lowering::scratch(i.op),
            };
            let Some(op) = op.or_else(|| extra_atomic(i)) else {
                return Own::Refused("a memory opcode RDNA3 has no namesake of");
            };
            let saddr = fc::flat::SADDR.0.get(w);
            // gfx9's "off" is 0x7f; FLAT takes no scalar base.
            let saddr = match saddr {
                _ if i.enc == Encoding::Flat => NULL,
                0x7f => NULL,
                s => match scalar(s) {
                    Some(s) => s as u16,
                    None => return Own::Refused("a scalar base in FLAT_SCRATCH or XNACK_MASK"),
                },
            };
            let offset = match i.enc {
                Encoding::Flat => i64::from(fc::flat::OFFSET.get(w)),
                _ => i64::from((fc::global::OFFSET.get(w) << 19) as i32 >> 19),
            };
            let a = FlatAccess::new(
                op,
                fc::flat::VDST.0.get(w) as usize,
                saddr,
                fc::flat::DATA.operand(w),
                fc::flat::ADDR.0.get(w) as usize,
                offset,
                // An atomic returns the old value with SC0 set.
                fc::flat::SC0.get(w) == 1,
                fc::scratch::SVE.get(w) == 1,
            );
            match i.enc {
                Encoding::Global => Own::Global(a, acc),
                Encoding::Flat => Own::Flat(a, acc),
                _ => Own::Scratch(a, acc),
            }
        }
        Encoding::Mubuf => mubuf(i),
        Encoding::Mtbuf => mtbuf(i),
        Encoding::Ds => ds_atomic(i),
        Encoding::Vop3p | Encoding::Vop2 | Encoding::Vop3 if i.ext.is_none() && dot_kind(i).is_some() => dot(i),
        Encoding::Vop1 if i.ext.is_none() && Vop1::from_op(i.op) == Some(Vop1::V_MOV_B64_E32) => {
            wide_op(i, Own::MovB64)
        }
        Encoding::Vop3 if Vop3::from_op(i.op) == Some(Vop3::V_MOV_B64_E64) => wide_op(i, Own::MovB64),
        Encoding::Vop3 if Vop3::from_op(i.op) == Some(Vop3::V_LSHL_ADD_U64) => wide_op(i, Own::LshlAddU64),
        Encoding::Vop1 | Encoding::Vop2 if i.ext == Some(super::Ext::Sdwa) => sdwa(i),
        Encoding::Vop1 | Encoding::Vop2 if i.ext == Some(super::Ext::Dpp) => dpp(i),
        Encoding::Vopc if i.ext == Some(super::Ext::Sdwa) => sdwa_cmp(i),
        // AMD's CDNA3 tables and LLVM give VOPC no DPP form (LLVM reads none).
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if i.ext.is_some() => {
            Own::Refused("a compare with a DPP dword, which CDNA3 does not define")
        }
        Encoding::Vop1 if i.ext.is_none() && Vop1::from_op(i.op) == Some(Vop1::V_ACCVGPR_MOV_B32_E32) => Own::AccMove {
            from_acc: true,
            to_acc: true,
        },
        Encoding::Vop3p => match Vop3p::from_op(i.op) {
            Some(Vop3p::V_ACCVGPR_READ) => Own::AccMove {
                from_acc: true,
                to_acc: false,
            },
            Some(Vop3p::V_ACCVGPR_WRITE) => Own::AccMove {
                from_acc: false,
                to_acc: true,
            },
            Some(Vop3p::V_PK_FMA_F32 | Vop3p::V_PK_MUL_F32 | Vop3p::V_PK_ADD_F32 | Vop3p::V_PK_MOV_B32) => pk_f32(i),
            _ => match super::mfma::by_opcode(i.op) {
                Some(t) => match super::mfma::decode(i, t) {
                    Ok(x) => Own::Mfma(Box::new(x)),
                    Err(why) => Own::Refused(why),
                },
                None => match super::mfma::sparse_by_opcode(i.op) {
                    Some(t) => match super::mfma::decode_sparse(i, t) {
                        Ok(x) => Own::Smfmac(Box::new(x)),
                        Err(why) => Own::Refused(why),
                    },
                    None => Own::Refused("a packed or matrix instruction the CDNA3 interpreter does not run yet"),
                },
            },
        },
        _ => Own::Refused("an instruction the CDNA3 interpreter does not run yet"),
    }
}

/// CDNA3's LDS read-modify-writes without an RDNA3 namesake: the f64 add (HIP's
/// `atomicAdd` on a `__shared__` double) and the packed 16-bit adds, each with its
/// returning form; GDS is refused.
fn ds_atomic(i: &Inst) -> Own {
    use rdna3::extra_atomic::*;
    let w = &i.words;
    let (atomic, rtn) = match Ds::from_op(i.op) {
        Some(Ds::DS_ADD_F64) => (ADD_F64, false),
        Some(Ds::DS_ADD_RTN_F64) => (ADD_F64, true),
        Some(Ds::DS_PK_ADD_F16) => (PK_ADD_F16, false),
        Some(Ds::DS_PK_ADD_RTN_F16) => (PK_ADD_F16, true),
        Some(Ds::DS_PK_ADD_BF16) => (PK_ADD_BF16, false),
        Some(Ds::DS_PK_ADD_RTN_BF16) => (PK_ADD_BF16, true),
        _ => return Own::Refused("an LDS instruction the CDNA3 interpreter does not run yet"),
    };
    if fc::ds::GDS.get(w) == 1 {
        return Own::Refused("GDS (the global data share)");
    }
    Own::DsAtomic(
        Box::new(rdna3::DsExtraAtomic {
            atomic,
            rtn,
            addr: fc::ds::ADDR.operand(w),
            data: fc::ds::DATA0.operand(w),
            vdst: fc::ds::VDST.index(w),
            offset: fc::ds::OFFSET0.get(w) | fc::ds::OFFSET1.get(w) << 8,
        }),
        fc::ds::ACC.get(w) == 1,
    )
}

/// CDNA3's memory atomics without an RDNA3 namesake, in the numbering RDNA3's memory
/// paths take ([`rdna3::extra_atomic`]): the f64 add, minimum and maximum (HIP's
/// `atomicAdd` on a `double`), and the packed 16-bit adds RDNA4 has too.
fn extra_atomic(i: &Inst) -> Option<u16> {
    use rdna3::extra_atomic::*;
    Some(match i.name()?.split_once("_atomic_")?.1 {
        "add_f64" => ADD_F64,
        "min_f64" => MIN_F64,
        "max_f64" => MAX_F64,
        "pk_add_f16" => PK_ADD_F16,
        "pk_add_bf16" => PK_ADD_BF16,
        _ => return None,
    })
}

/// gfx9's integer dot products that RDNA3 lacks or spells otherwise, each `S2 +
/// Σ S0[k] · S1[k]` over packed elements with CLMP saturating the sum:
/// `v_dot4_i32_i8` and `v_dot8_i32_i4` (RDNA3's `_iu` forms with both sources signed),
/// `v_dot2_i32_i16` and `v_dot2_u32_u16` (16-bit halves, which RDNA3 has no dot of),
/// and the accumulating `v_dot2c_i32_i16`, `v_dot4c_i32_i8`, `v_dot8c_i32_i4` (VOP2,
/// and VOP3 with CLMP: S2 is the destination).
#[derive(Debug, Clone)]
pub(crate) struct Dot {
    kind: DotKind,
    vdst: usize,
    /// The sources, in gfx11's numbering.
    srcs: [u16; 3],
    clamp: bool,
}

/// What a [`Dot`] sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DotKind {
    /// As RDNA3's VOP3P opcode with these NEG_LO bits (1 and 2: the sources signed).
    Packed(rdna3::opcodes::Vop3p, u32),
    /// Two 16-bit halves, signed or not.
    Halves { signed: bool },
}

/// The dot product `i` is, and whether it accumulates into its destination (the `c`
/// forms); `None` for any other instruction.
fn dot_kind(i: &Inst) -> Option<(DotKind, bool)> {
    use rdna3::opcodes::Vop3p as R;
    let signed = |op| DotKind::Packed(op, 3);
    match i.enc {
        Encoding::Vop3p => Some((
            match Vop3p::from_op(i.op)? {
                Vop3p::V_DOT4_I32_I8 => signed(R::V_DOT4_I32_IU8),
                Vop3p::V_DOT8_I32_I4 => signed(R::V_DOT8_I32_IU4),
                Vop3p::V_DOT2_I32_I16 => DotKind::Halves { signed: true },
                Vop3p::V_DOT2_U32_U16 => DotKind::Halves { signed: false },
                _ => return None,
            },
            false,
        )),
        Encoding::Vop2 | Encoding::Vop3 => {
            // gfx9's VOP3 numbers VOP2's opcodes from 256.
            let op = if i.enc == Encoding::Vop3 {
                i.op.checked_sub(256)?
            } else {
                i.op
            };
            let kind = match Vop2::from_op(op)? {
                Vop2::V_DOT4C_I32_I8_E32 => signed(R::V_DOT4_I32_IU8),
                Vop2::V_DOT8C_I32_I4_E32 => signed(R::V_DOT8_I32_IU4),
                Vop2::V_DOT2C_I32_I16_E32 => DotKind::Halves { signed: true },
                _ => return None,
            };
            Some((kind, true))
        }
        _ => None,
    }
}

// The accumulating dots' VOP3 forms are their VOP2 opcodes from 256, as `dot_kind`
// reads them.
const _: () = assert!(
    Vop3::V_DOT2C_I32_I16_E64 as u16 == 256 + Vop2::V_DOT2C_I32_I16_E32 as u16
        && Vop3::V_DOT4C_I32_I8_E64 as u16 == 256 + Vop2::V_DOT4C_I32_I8_E32 as u16
        && Vop3::V_DOT8C_I32_I4_E64 as u16 == 256 + Vop2::V_DOT8C_I32_I4_E32 as u16
);

/// [`Dot`] from `i`'s fields: its sources renumbered as gfx11's; source modifiers and
/// OPSEL other than the defaults (which these integer forms have no use for; no
/// source says how the hardware would route them) are refused.
fn dot(i: &Inst) -> Own {
    let Some((kind, _)) = dot_kind(i) else {
        return Own::Refused("not a dot product");
    };
    let w = &i.words;
    let (vdst, srcs, clamp, plain) = match i.enc {
        Encoding::Vop3p => {
            use fc::vop3p as f;
            // OPSEL_HI routes 16-bit halves: the halves' dot takes only its default
            // (all set); the byte and nibble dots have no halves to route.
            let halves = matches!(kind, DotKind::Halves { .. });
            let defaults = f::OPSEL.get(w) == 0
                && (!halves || f::OPSEL_HI.get(w) == 3 && f::OPSEL_HI2.get(w) == 1)
                && f::NEG.get(w) == 0
                && f::NEG_HI.get(w) == 0;
            let srcs = [f::SRC0.operand(w), f::SRC1.operand(w), f::SRC2.operand(w)];
            (f::VDST.index(w), srcs, f::CLMP.get(w) == 1, defaults)
        }
        Encoding::Vop2 => {
            let vdst = fc::vop2::VDST.index(w);
            let srcs = [fc::vop2::SRC0.operand(w), fc::vop2::VSRC1.operand(w), 256 + vdst as u16];
            (vdst, srcs, false, true)
        }
        _ => {
            use fc::vop3 as f;
            let vdst = f::VDST.index(w);
            let defaults = f::OPSEL.get(w) == 0 && f::NEG.get(w) == 0 && f::ABS.get(w) == 0 && f::OMOD.get(w) == 0;
            let srcs = [f::SRC0.operand(w), f::SRC1.operand(w), 256 + vdst as u16];
            (vdst, srcs, f::CLMP.get(w) == 1, defaults)
        }
    };
    if !plain {
        return Own::Refused("an integer dot product with source modifiers or OPSEL");
    }
    let mut renumbered = [0u16; 3];
    for (r, &n) in renumbered.iter_mut().zip(&srcs) {
        *r = match n {
            256.. => n,
            n => match scalar(u32::from(n)) {
                Some(s) => s as u16,
                None => return Own::Refused("a source in FLAT_SCRATCH or XNACK_MASK"),
            },
        };
    }
    Own::Dot(Box::new(Dot {
        kind,
        vdst,
        srcs: renumbered,
        clamp,
    }))
}

/// Runs a [`Dot`] on the half-wave's active lanes.
fn run_dot(w: &mut Wave, x: &Dot, literal: Option<u32>) -> Result<(), Trap> {
    let exec = w.exec();
    for lane in (0..32).filter(|l| exec >> l & 1 != 0) {
        let [a, b, c] = [0, 1, 2].map(|k| w.vread(x.srcs[k], lane, literal));
        let (a, b, c) = (a?, b?, c?);
        let r = match x.kind {
            DotKind::Packed(op, neg_lo) => rdna3::dot(w, op, a, b, c, neg_lo, x.clamp),
            DotKind::Halves { signed } => {
                let half = |v: u32, k: u32| -> i64 {
                    let h = (v >> (16 * k)) as u16;
                    if signed { i64::from(h as i16) } else { i64::from(h) }
                };
                let acc = if signed { i64::from(c as i32) } else { i64::from(c) };
                let sum = acc + half(a, 0) * half(b, 0) + half(a, 1) * half(b, 1);
                match (signed, x.clamp) {
                    (true, true) => sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32,
                    (false, true) => sum.clamp(0, i64::from(u32::MAX)) as u32,
                    _ => sum as u32,
                }
            }
        };
        w.vwrite(x.vdst, lane, r)?;
    }
    Ok(())
}

/// The bytes a load into LDS reads and whether it sign-extends them (gfx942's byte,
/// short and dword forms: `global_load_lds_*`, and `buffer_load_*` with the LDS bit);
/// `None` for any other instruction. (The x3 and x4 forms are gfx950's.)
fn lds_dma_size(i: &Inst) -> Option<(usize, bool)> {
    let size = match i.enc {
        Encoding::Global => super::opcodes::Global::from_op(i.op)?
            .name()
            .strip_prefix("global_load_lds_")?,
        Encoding::Scratch => super::opcodes::Scratch::from_op(i.op)?
            .name()
            .strip_prefix("scratch_load_lds_")?,
        Encoding::Mubuf => Mubuf::from_op(i.op)?.name().strip_prefix("buffer_load_")?,
        _ => return None,
    };
    match size {
        "ubyte" => Some((1, false)),
        "sbyte" => Some((1, true)),
        "ushort" => Some((2, false)),
        "sshort" => Some((2, true)),
        "dword" => Some((4, false)),
        _ => None,
    }
}

/// `global_load_lds_*` and `scratch_load_lds_*`: each active lane reads `bytes` at its
/// GLOBAL address (SADDR plus a VGPR's offset, or a VGPR pair; plus the instruction's
/// offset) or its private address (SADDR's 32 bits, plus the VGPR where SVE says, plus
/// the offset) and writes them, extended to a dword, into LDS at M0[15:0] plus the same
/// instruction offset, a dword a lane ([`rdna3::lds_dma_store`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GlobalLds {
    bytes: usize,
    signed: bool,
    /// The scalar base's operand number in gfx11's numbering (NULL: none).
    saddr: u16,
    /// The address VGPR.
    addr: usize,
    offset: i64,
    /// From private memory (SCRATCH), the VGPR taken where the flag (SVE) says.
    scratch: Option<bool>,
}

fn global_lds(i: &Inst) -> Own {
    let w = &i.words;
    let Some((bytes, signed)) = lds_dma_size(i) else {
        return Own::Refused("not a load into LDS");
    };
    let saddr = match fc::flat::SADDR.0.get(w) {
        0x7f => NULL,
        s => match scalar(s) {
            Some(s) => s as u16,
            None => return Own::Refused("a scalar base in FLAT_SCRATCH or XNACK_MASK"),
        },
    };
    Own::GlobalLds(GlobalLds {
        bytes,
        signed,
        saddr,
        addr: fc::flat::ADDR.0.get(w) as usize,
        offset: i64::from((fc::global::OFFSET.get(w) << 19) as i32 >> 19),
        scratch: (i.enc == Encoding::Scratch).then(|| fc::scratch::SVE.get(w) == 1),
    })
}

impl GlobalLds {
    fn run(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> Result<(), Trap> {
        if let Some(sve) = self.scratch {
            let base = if self.saddr == NULL {
                0
            } else {
                i64::from(w.sread(self.saddr, None)?)
            };
            let exec = w.exec();
            for lane in (0..32).filter(|l| exec >> l & 1 != 0) {
                let v = if sve {
                    i64::from(w.vread(256 + self.addr as u16, lane, None)?)
                } else {
                    0
                };
                let a = base.wrapping_add(v).wrapping_add(self.offset);
                let mut b = [0u8; 4];
                b[..self.bytes].copy_from_slice(rdna3::private_bytes(
                    w,
                    lane,
                    a,
                    self.bytes,
                    crate::memory::AccessKind::Load,
                )?);
                let v = rdna3::lds_dma_value(&b, self.bytes, self.signed);
                rdna3::lds_dma_store(w, lds, lane, self.offset, v)?;
            }
            return Ok(());
        }
        let sbase = if self.saddr == NULL {
            None
        } else {
            Some(w.sread64(self.saddr, None)?)
        };
        let last = self.addr + usize::from(sbase.is_none());
        if last >= w.v.len() {
            return Err(beyond(w, last));
        }
        let exec = w.exec();
        for lane in (0..32).filter(|l| exec >> l & 1 != 0) {
            let lo = w.v[self.addr][lane];
            let at = match sbase {
                Some(s) => rdna3::based_address(s, lo, self.offset),
                None => rdna3::pair_address(lo, w.v[self.addr + 1][lane], self.offset),
            };
            let mut b = [0u8; 4];
            mem.read(at, &mut b[..self.bytes]).map_err(Trap::load(self.bytes))?;
            let v = rdna3::lds_dma_value(&b, self.bytes, self.signed);
            rdna3::lds_dma_store(w, lds, lane, self.offset, v)?;
        }
        Ok(())
    }
}

/// A MUBUF instruction as RDNA3's buffer access with a gfx9 resource: the loads and
/// stores, typed (`_format_`: the V#'s gfx9 data format read as gfx11's of the same
/// layout) or not, the loads into LDS and the atomics (SC0 returns an atomic's old
/// value); the cache write-back and invalidate (`buffer_wbl2`, `buffer_inv`: gfx940's
/// agent- and system-scope fences) change nothing in the mock's coherent memory.
fn mubuf(i: &Inst) -> Own {
    use fc::mubuf as f;
    let w = &i.words;
    if matches!(Mubuf::from_op(i.op), Some(Mubuf::BUFFER_WBL2 | Mubuf::BUFFER_INV)) {
        return Own::Hint;
    }
    let Some(op) = lowering::mubuf(i.op).or_else(|| extra_atomic(i)) else {
        return Own::Refused("a buffer opcode RDNA3 has no namesake of");
    };
    // A load into LDS: RDNA3's LDS form of the load (the data VGPR unused).
    let op = if f::LDS.get(w) == 1 {
        use rdna3::opcodes::Mubuf as R;
        match lds_dma_size(i) {
            Some((1, false)) => R::BUFFER_LOAD_LDS_U8 as u16,
            Some((1, true)) => R::BUFFER_LOAD_LDS_I8 as u16,
            Some((2, false)) => R::BUFFER_LOAD_LDS_U16 as u16,
            Some((2, true)) => R::BUFFER_LOAD_LDS_I16 as u16,
            Some(_) => R::BUFFER_LOAD_LDS_B32 as u16,
            // The typed load: one component through the V#'s format.
            None if Mubuf::from_op(i.op) == Some(Mubuf::BUFFER_LOAD_FORMAT_X) => R::BUFFER_LOAD_LDS_FORMAT_X as u16,
            None => {
                return Own::Refused(
                    "a buffer load into LDS other than of a byte, short, dword or one typed component",
                );
            }
        }
    } else {
        op
    };
    let (Some(srsrc), Some(soffset)) = (
        scalar(u32::from(f::SRSRC.operand(w))),
        scalar(u32::from(f::SOFFSET.operand(w))),
    ) else {
        return Own::Refused("a buffer resource or SOFFSET in FLAT_SCRATCH or XNACK_MASK");
    };
    Own::Buffer(
        rdna3::BufferAccess {
            op,
            mtbuf: false,
            format: 0,
            offset: u64::from(f::OFFSET.get(w)),
            returns: f::SC0.get(w) == 1,
            vaddr: f::VADDR.operand(w),
            vdata: f::VDATA.index(w),
            srsrc: srsrc as u16,
            soffset: soffset as u16,
            offen: f::OFFEN.get(w) == 1,
            idxen: f::IDXEN.get(w) == 1,
            tfe: false,
            gfx9: true,
        },
        f::ACC.get(w) == 1,
    )
}

/// An MTBUF instruction (`tbuffer_*`: a typed access whose data format the instruction
/// carries, DFMT and NFMT) as RDNA3's, whose opcodes are numbered alike, with that
/// format read as gfx11's of the same layout.
fn mtbuf(i: &Inst) -> Own {
    use fc::mtbuf as f;
    let w = &i.words;
    let (Some(srsrc), Some(soffset)) = (
        scalar(u32::from(f::SRSRC.operand(w))),
        scalar(u32::from(f::SOFFSET.operand(w))),
    ) else {
        return Own::Refused("a buffer resource or SOFFSET in FLAT_SCRATCH or XNACK_MASK");
    };
    Own::Buffer(
        rdna3::BufferAccess {
            op: i.op,
            mtbuf: true,
            format: rdna3::gfx9_format(f::DFMT.get(w), f::NFMT.get(w)),
            offset: u64::from(f::OFFSET.get(w)),
            returns: false,
            vaddr: f::VADDR.operand(w),
            vdata: f::VDATA.index(w),
            srsrc: srsrc as u16,
            soffset: soffset as u16,
            offen: f::OFFEN.get(w) == 1,
            idxen: f::IDXEN.get(w) == 1,
            tfe: false,
            gfx9: true,
        },
        f::ACC.get(w) == 1,
    )
}

/// The source modifiers an SDWA or DPP dword gives: each source's NEG and ABS bits
/// (bit k for source k).
#[derive(Clone, Copy)]
struct ExtMods {
    neg: [bool; 2],
    abs: [bool; 2],
    clamp: u32,
    omod: u32,
}

/// A VOP1 or VOP2 instruction's operation as the RDNA3 VOP3 instruction
/// `op v2, v0[, v1]` with `m`'s modifiers on its float sources (RDNA3's VOP1 and VOP2
/// opcodes are VOP3's from 0x180 and 0x100; VOP2's that RDNA3 has as VOP3 only, that
/// number), and whether its first and second sources are floats; `None` where RDNA3
/// has no such operation.
fn ext_as_vop3(i: &Inst, m: ExtMods) -> Option<(rdna3::Decoded, [bool; 2])> {
    let vop1 = i.enc == Encoding::Vop1;
    if !vop1 && let Some(op) = lowering::vop2_as_vop3sd(i.op) {
        // A carry-out form (`v_add_co_u32`, `v_addc_co_u32`, …): gfx11's VOP3SD, its
        // carry to VCC and, where it takes one, from VCC. Integer operands: no float
        // modifiers.
        if m.omod != 0 || m.neg.iter().chain(&m.abs).any(|&b| b) {
            return None;
        }
        let vcc = u32::from(rdna3::VCC_LO as u16);
        let mut r: Words = [0; 3];
        r3::vop3sd::ENCODING.bits.put(&mut r, r3::vop3sd::ENCODING.value);
        r3::vop3sd::OP.put(&mut r, u32::from(op));
        r3::vop3sd::VDST.0.put(&mut r, 2);
        r3::vop3sd::SDST.0.put(&mut r, vcc);
        r3::vop3sd::SRC0.0.put(&mut r, 256);
        r3::vop3sd::SRC1.0.put(&mut r, 257);
        if rdna3::opcodes::Vop3sd::from_op(op).is_some_and(|o| o.name().contains("_ci_")) {
            r3::vop3sd::SRC2.0.put(&mut r, vcc);
        }
        r3::vop3sd::CLMP.put(&mut r, m.clamp);
        let op = super::lower::lowered(&r, 2, None)?;
        return Some((rdna3::Decoded::new(op), [false; 2]));
    }
    let op3 = if vop1 {
        lowering::vop1(i.op).map(|op| 0x180 + op)
    } else {
        lowering::vop2(i.op)
            .map(|op| 0x100 + op)
            .or_else(|| lowering::vop2_as_vop3(i.op))
    }?;
    let listed = super::operands::operands(i.enc, i.op);
    let float = |field| listed.iter().any(|o| o.field == field && o.float);
    let floats = [
        float(super::operands::Field::Src0),
        float(super::operands::Field::Vsrc1),
    ];
    let bits = |b: [bool; 2]| (0..2).map(|k| u32::from(floats[k] && b[k]) << k).sum::<u32>();
    let mut r: Words = [0; 3];
    r3::vop3::ENCODING.bits.put(&mut r, r3::vop3::ENCODING.value);
    r3::vop3::OP.put(&mut r, u32::from(op3));
    r3::vop3::VDST.0.put(&mut r, 2);
    r3::vop3::SRC0.0.put(&mut r, 256);
    if !vop1 {
        r3::vop3::SRC1.0.put(&mut r, 257);
    }
    r3::vop3::NEG.put(&mut r, bits(m.neg));
    r3::vop3::ABS.put(&mut r, bits(m.abs));
    r3::vop3::CLMP.put(&mut r, m.clamp);
    r3::vop3::OMOD.put(&mut r, m.omod);
    let op = super::lower::lowered(&r, 2, None)?;
    Some((rdna3::Decoded::new(op), floats))
}

/// A VOP1 or VOP2 instruction's SDWA form, where its operation has an RDNA3 VOP3 form
/// (RDNA3's VOP1 and VOP2 opcodes are VOP3's from 0x180 and 0x100), or for the carry
/// forms a VOP3SD one (their carry in VCC).
fn sdwa(i: &Inst) -> Own {
    use fc::vop2_sdwa as f;
    let w = &i.words;
    let vop1 = i.enc == Encoding::Vop1;
    // The float sources' negation and absolute value; an integer source's SEXT is
    // applied with its select.
    let m = ExtMods {
        neg: [f::SRC0_NEG.get(w) == 1, f::SRC1_NEG.get(w) == 1],
        abs: [f::SRC0_ABS.get(w) == 1, f::SRC1_ABS.get(w) == 1],
        clamp: f::CLMP.get(w),
        omod: f::OMOD.get(w),
    };
    let Some((op, [f0, f1])) = ext_as_vop3(i, m) else {
        return Own::Refused("an SDWA form whose operation the CDNA3 interpreter does not run yet");
    };
    let Some([s0, s1]) = sdwa_sources(w, [f0, f1]) else {
        return Own::Refused("an SDWA source in FLAT_SCRATCH or XNACK_MASK");
    };
    Own::Sdwa(Box::new(Sdwa {
        op,
        vdst: fc::vop2::VDST.index(w),
        srcs: [Some(s0), (!vop1).then_some(s1)],
        dst_sel: f::DST_SEL.get(w),
        dst_unused: f::DST_UNUSED.get(w),
        accumulates: i.name().is_some_and(|n| n.contains("mac") || n.contains("dot")),
    }))
}

/// A DPP dword's lane move: the first source's VGPR (gfx11's numbering), the control,
/// the rows and banks it writes, and whether an invalid or inactive source reads 0
/// (BOUND_CTRL) rather than leaving the lane unwritten. VOP1, VOP2 and VOPC place the
/// dword alike.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DppMove {
    vsrc0: u16,
    ctrl: u32,
    row_mask: u32,
    bank_mask: u32,
    bound_zero: bool,
    /// Whether some lane reads a lane of the other half of the wave (the wave shifts
    /// and rotations, `row_bcast`): a wave64 then reads every lane's source before
    /// either half writes.
    whole_wave: bool,
}

impl DppMove {
    /// The move instruction `i`'s DPP dword gives; `None` for a control [`dpp_lane`]
    /// does not know.
    fn new(i: &Inst) -> Option<DppMove> {
        use fc::vop2_dpp16 as f;
        let w = &i.words;
        let ctrl = f::DPP.get(w);
        let sources = (0..64).map(|lane| (lane, dpp_lane(ctrl, lane)));
        let whole_wave = sources.clone().any(|(lane, s)| s.is_some_and(|s| s / 32 != lane / 32));
        sources.clone().any(|(_, s)| s.is_some()).then_some(DppMove {
            vsrc0: f::VSRC0.operand(w),
            ctrl,
            row_mask: f::ROW_MASK.get(w),
            bank_mask: f::BANK_MASK.get(w),
            bound_zero: f::BC.get(w) == 1,
            whole_wave,
        })
    }

    /// The first source of each lane of half `half` of the wave, and the lanes the
    /// instruction writes: the active ones whose row and bank are on and whose source
    /// lane is valid and active, or, with BOUND_CTRL, reads 0.
    fn gather(&self, w: &Wave, half: usize) -> Result<([u32; 32], u32), Trap> {
        let (exec, all) = (w.s[rdna3::EXEC_LO + half], w.exec_all());
        let (mut src, mut write) = ([0u32; 32], 0u32);
        for (lane, v) in src.iter_mut().enumerate() {
            let whole = half * 32 + lane;
            if exec >> lane & 1 == 0
                || self.row_mask >> (whole / 16 % 4) & 1 == 0
                || self.bank_mask >> (whole % 16 / 4) & 1 == 0
            {
                continue;
            }
            match dpp_lane(self.ctrl, whole).filter(|&s| all >> s & 1 != 0) {
                Some(s) => *v = w.vread_lane64(self.vsrc0, s, None)?,
                None if self.bound_zero => *v = 0,
                None => continue,
            }
            write |= 1 << lane;
        }
        Ok((src, write))
    }
}

/// The lane of a wave of 64 that lane `lane` reads under DPP control `ctrl`: the
/// quad permutation, the row shifts and rotation, the mirrors, gfx9's wave shifts and
/// rotations by one lane and row broadcasts (`row_bcast:15`, lane 15 of the row before,
/// for rows 1 to 3; `row_bcast:31`, lane 31, for rows 2 and 3), gfx90a's row broadcast
/// (`row_newbcast`); `None` where the source lies outside the row or the wave, or a
/// broadcast gives the row nothing.
fn dpp_lane(ctrl: u32, lane: usize) -> Option<usize> {
    let (row, pos) = (lane & !15, lane & 15);
    let n = (ctrl & 15) as usize;
    match ctrl {
        0x000..=0x0ff => Some((lane & !3) + ((ctrl as usize >> (2 * (lane & 3))) & 3)),
        0x101..=0x10f => (pos + n < 16).then_some(lane + n),
        0x111..=0x11f => (pos >= n).then(|| lane - n),
        0x121..=0x12f => Some(row + (pos + 16 - n) % 16),
        0x130 => (lane < 63).then_some(lane + 1),
        0x134 => Some((lane + 1) % 64),
        0x138 => lane.checked_sub(1),
        0x13c => Some((lane + 63) % 64),
        0x140 => Some(row + 15 - pos),
        0x141 => Some(row + (pos & 8) + 7 - (pos & 7)),
        0x142 => row.checked_sub(1),
        0x143 => (row >= 32).then_some(31),
        0x150..=0x15f => Some(row + n),
        _ => None,
    }
}

/// A VOP1 or VOP2 instruction's DPP form: its operation as an RDNA3 VOP3 instruction
/// from v0 (and v1) to v2 with the DPP dword's float modifiers, and the lane move.
#[derive(Debug, Clone)]
pub(crate) struct Dpp {
    op: rdna3::Decoded,
    vdst: usize,
    mv: DppMove,
    vsrc1: Option<u16>,
    accumulates: bool,
}

/// The refusal of a DPP control [`dpp_lane`] does not know.
const DPP_CTRL_NOT_YET: &str = "a DPP control the CDNA3 interpreter does not run yet";

/// A VOP1 or VOP2 instruction's DPP form, where its operation has an RDNA3 VOP3 form
/// and its control is one [`dpp_lane`] runs.
fn dpp(i: &Inst) -> Own {
    use fc::vop2_dpp16 as f;
    let w = &i.words;
    let vop1 = i.enc == Encoding::Vop1;
    let Some(mv) = DppMove::new(i) else {
        return Own::Refused(DPP_CTRL_NOT_YET);
    };
    let m = ExtMods {
        neg: [f::SRC0_NEG.get(w) == 1, f::SRC1_NEG.get(w) == 1],
        abs: [f::SRC0_ABS.get(w) == 1, f::SRC1_ABS.get(w) == 1],
        clamp: 0,
        omod: 0,
    };
    let Some((op, _)) = ext_as_vop3(i, m) else {
        return Own::Refused("a DPP form whose operation the CDNA3 interpreter does not run yet");
    };
    Own::Dpp(Box::new(Dpp {
        op,
        vdst: fc::vop2::VDST.index(w),
        mv,
        vsrc1: (!vop1).then(|| fc::vop2::VSRC1.operand(w)),
        accumulates: i.name().is_some_and(|n| n.contains("mac") || n.contains("dot")),
    }))
}

/// Runs a DPP instruction: on one half-wave's active lanes, or, where its move crosses
/// halves, on both halves, every source read before either half writes.
fn run_dpp(w: &mut Wave, x: &Dpp, mem: &dyn Memory, lds: &mut [u8]) -> Result<(), Trap> {
    moved(w, &x.mv, |w, m| dpp_half(w, x, m, mem, lds))
}

/// Runs `f` with the moved first sources ([`DppMove::gather`]) of the current half, or,
/// where the move crosses halves, of each half in turn, all gathered first; the wave's
/// current half is as before after.
fn moved(
    w: &mut Wave,
    mv: &DppMove,
    mut f: impl FnMut(&mut Wave, ([u32; 32], u32)) -> Result<(), Trap>,
) -> Result<(), Trap> {
    if !mv.whole_wave {
        let m = mv.gather(w, w.half)?;
        return f(w, m);
    }
    let m = [mv.gather(w, 0)?, mv.gather(w, 1)?];
    f(w, m[w.half])?;
    w.swap_halves();
    let second = f(w, m[w.half]);
    w.swap_halves();
    second
}

/// One half of a DPP instruction, given its moved first sources and the lanes it
/// writes ([`DppMove::gather`]): the operation, as [`run_sdwa`] runs it in v0, v1 and
/// v2, on those lanes alone.
fn dpp_half(
    w: &mut Wave,
    x: &Dpp,
    (src0, write): ([u32; 32], u32),
    mem: &dyn Memory,
    lds: &mut [u8],
) -> Result<(), Trap> {
    let exec = w.exec();
    let mut ins = [src0, [0u32; 32], [0u32; 32]];
    for lane in (0..32).filter(|l| write >> l & 1 != 0) {
        if let Some(n) = x.vsrc1 {
            ins[1][lane] = w.vread(n, lane, None)?;
        }
        if x.accumulates {
            ins[2][lane] = w.vread(256 + x.vdst as u16, lane, None)?;
        }
    }
    w.s[rdna3::EXEC_LO + w.half] = exec & write;
    let results = run_in_scratch(w, &ins, &x.op, mem, lds);
    w.s[rdna3::EXEC_LO + w.half] = exec;
    for (lane, &v) in results?.iter().enumerate() {
        if write >> lane & 1 != 0 {
            w.vwrite(x.vdst, lane, v)?;
        }
    }
    Ok(())
}

/// An SDWA dword's two sources (VOP1, VOP2 and VOPC place them alike): each a VGPR,
/// or with S0/S1 set an SGPR or constant (gfx11's numbering), with its select and, for
/// an integer source (`floats` false), its sign extension; `None` for FLAT_SCRATCH or
/// XNACK_MASK.
fn sdwa_sources(w: &Words, floats: [bool; 2]) -> Option<[(u16, u32, bool); 2]> {
    use fc::vop2_sdwa as f;
    let src = |n: u32, scalar_bit: u32| if scalar_bit == 1 { scalar(n) } else { Some(256 + n) };
    let s0 = src(f::VSRC0.0.get(w), f::S0.get(w))?;
    let s1 = src(fc::vop2::VSRC1.0.get(w), f::S1.get(w))?;
    Some([
        (s0 as u16, f::SRC0_SEL.get(w), !floats[0] && f::SRC0_SEXT.get(w) == 1),
        (s1 as u16, f::SRC1_SEL.get(w), !floats[1] && f::SRC1_SEXT.get(w) == 1),
    ])
}

/// A compare's SDWA form: the compare as the RDNA3 VOP3 instruction `v_cmp_* mask, v0,
/// v1`, the sources with their selects and sign extension, and whether it is a
/// `v_cmpx_*` (EXEC takes the mask too).
#[derive(Debug, Clone)]
pub(crate) struct SdwaCmp {
    op: rdna3::Decoded,
    srcs: [(u16, u32, bool); 2],
    mask: usize,
    cmpx: bool,
}

/// VOPC's SDWA form: the mask goes to VCC, or with SD set to the SGPR pair SDST names.
fn sdwa_cmp(i: &Inst) -> Own {
    use fc::vopc_sdwa_sdst as f;
    const NOT_YET: &str = "an SDWA compare the CDNA3 interpreter does not run yet";
    let w = &i.words;
    let Some(name) = i.name() else {
        return Own::Refused(NOT_YET);
    };
    let cmpx = name.starts_with("v_cmpx_");
    let base = name.replacen("v_cmpx_", "v_cmp_", 1);
    let op = match super::opcodes::SPEC.iter().find(|(e, _)| *e == "VOPC") {
        Some((_, ops)) => ops.iter().find(|(_, n)| *n == base).map(|&(op, _)| op),
        None => None,
    };
    let Some(op3) = op.and_then(lowering::vopc) else {
        return Own::Refused(NOT_YET);
    };
    let mask = if f::SD.get(w) == 1 {
        match scalar(f::SDST.0.get(w)).filter(|&m| m < 124) {
            Some(m) => m as usize,
            None => return Own::Refused(NOT_YET),
        }
    } else {
        rdna3::VCC_LO
    };
    let listed = super::operands::operands(i.enc, i.op);
    let float = |field| listed.iter().any(|o| o.field == field && o.float);
    let (f0, f1) = (
        float(super::operands::Field::Src0),
        float(super::operands::Field::Vsrc1),
    );
    let mut r: Words = [0; 3];
    r3::vop3::ENCODING.bits.put(&mut r, r3::vop3::ENCODING.value);
    r3::vop3::OP.put(&mut r, u32::from(op3));
    r3::vop3_sdst::VDST.0.put(&mut r, mask as u32);
    r3::vop3::SRC0.0.put(&mut r, 256);
    r3::vop3::SRC1.0.put(&mut r, 257);
    let bit = |f: bool, b: crate::field::Bits| u32::from(f && b.get(w) == 1);
    r3::vop3::NEG.put(&mut r, bit(f0, f::SRC0_NEG) | bit(f1, f::SRC1_NEG) << 1);
    r3::vop3::ABS.put(&mut r, bit(f0, f::SRC0_ABS) | bit(f1, f::SRC1_ABS) << 1);
    let Some(op) = super::lower::lowered(&r, 2, None) else {
        return Own::Refused(NOT_YET);
    };
    let Some(srcs) = sdwa_sources(w, [f0, f1]) else {
        return Own::Refused("an SDWA source in FLAT_SCRATCH or XNACK_MASK");
    };
    Own::SdwaCmp(Box::new(SdwaCmp {
        op: rdna3::Decoded::new(op),
        srcs,
        mask,
        cmpx,
    }))
}

/// Runs an SDWA compare on the half-wave: the selected sources in v0 and v1 (saved
/// and put back), the compare as RDNA3's into the mask, and for `v_cmpx_*` EXEC.
fn run_sdwa_cmp(w: &mut Wave, x: &SdwaCmp, mem: &dyn Memory, lds: &mut [u8]) -> Result<(), Trap> {
    let exec = w.exec();
    let mut ins = [[0u32; 32]; 2];
    for (k, &(n, sel, sext)) in x.srcs.iter().enumerate() {
        for lane in (0..32).filter(|l| exec >> l & 1 != 0) {
            ins[k][lane] = select(w.vread(n, lane, None)?, sel, sext);
        }
    }
    run_in_scratch(w, &ins, &x.op, mem, lds)?;
    if x.cmpx {
        w.s[rdna3::EXEC_LO + w.half] = w.s[x.mask + w.half];
    }
    Ok(())
}

/// The bits an SDWA select takes (BYTE_0..3, WORD_0..1, DWORD): their shift and width.
fn sel_bits(sel: u32) -> (u32, u32) {
    match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        _ => (0, 32),
    }
}

/// An SDWA source: the selected bits, zero- or sign-extended.
fn select(v: u32, sel: u32, sext: bool) -> u32 {
    let (shift, width) = sel_bits(sel);
    if width == 32 {
        return v;
    }
    let x = (v >> shift) & ((1 << width) - 1);
    if sext && x >> (width - 1) & 1 == 1 {
        x | !((1 << width) - 1)
    } else {
        x
    }
}

/// An SDWA result placed in the destination's selected bits; the rest zero
/// (UNUSED_PAD), the result's sign (UNUSED_SEXT) or the destination's (PRESERVE).
fn place(result: u32, old: u32, sel: u32, unused: u32) -> u32 {
    let (shift, width) = sel_bits(sel);
    if width == 32 {
        return result;
    }
    let mask = ((1u32 << width) - 1) << shift;
    let placed = (result << shift) & mask;
    // The bits above the selected ones (none above WORD_1 and BYTE_3).
    let above = (u64::from(u32::MAX) << (shift + width)) as u32;
    match unused {
        1 if result >> (width - 1) & 1 == 1 => placed | above,
        2 => placed | (old & !mask),
        _ => placed,
    }
}

/// Runs `op` (an RDNA3 instruction over v0, v1, …) on the half-wave with `rows` in
/// v0, v1, … — those VGPRs saved first and put back after, whatever happens — and
/// returns what it left in the last of them.
fn run_in_scratch(
    w: &mut Wave,
    rows: &[[u32; 32]],
    op: &rdna3::Decoded,
    mem: &dyn Memory,
    lds: &mut [u8],
) -> Result<[u32; 32], Trap> {
    let n = rows.len();
    if n == 0 || n > 3 || w.v.len() < n {
        return Err(Trap::refused(format!(
            "an SDWA or DPP form needs {n} VGPRs the wave has not"
        )));
    }
    let mut saved = [[0u32; 32]; 3];
    for (k, row) in rows.iter().enumerate() {
        saved[k] = w.v[k].0;
        w.v[k].0 = *row;
    }
    let r = op.run_out_of_line(w, mem, lds);
    let last = w.v[n - 1].0;
    for (k, row) in saved[..n].iter().enumerate() {
        w.v[k].0 = *row;
    }
    r.map(|_| last)
}

/// Runs an SDWA instruction on the half-wave's active lanes: the selected sources go
/// into v0 and v1 and the destination's old value into v2 (those three saved and put
/// back), the operation runs as RDNA3's, and its result is placed into VDST.
fn run_sdwa(w: &mut Wave, x: &Sdwa, mem: &dyn Memory, lds: &mut [u8]) -> Result<(), Trap> {
    let exec = w.exec();
    let (mut ins, mut old) = ([[0u32; 32]; 3], [0u32; 32]);
    // The lane indexes three rows and the wave's registers at once.
    #[allow(clippy::needless_range_loop)]
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        for (k, s) in x.srcs.iter().enumerate() {
            if let &Some((n, sel, sext)) = s {
                ins[k][lane] = select(w.vread(n, lane, None)?, sel, sext);
            }
        }
        old[lane] = w.vread(256 + x.vdst as u16, lane, None)?;
    }
    if x.accumulates {
        ins[2] = old;
    }
    let results = run_in_scratch(w, &ins, &x.op, mem, lds)?;
    for lane in 0..32 {
        if exec >> lane & 1 != 0 {
            let v = place(results[lane], old[lane], x.dst_sel, x.dst_unused);
            w.vwrite(x.vdst, lane, v)?;
        }
    }
    Ok(())
}

/// A packed 32-bit instruction of gfx90a and later (`v_pk_*_f32`, `v_pk_mov_b32`):
/// each half of the 64-bit result takes, from each 64-bit source, the dword OPSEL
/// (low half) or OPSEL_HI (high half) selects, with NEG (low) or NEG_HI (high)
/// negating a float source. The float operations run as RDNA3's VOP3 `v_fma_f32`,
/// `v_mul_f32` and `v_add_f32` over v0.. (the MODE register's rounding and denormal
/// modes, CLMP), once per half.
#[derive(Debug, Clone)]
pub(crate) struct PkF32 {
    /// Per half (low, high), the operation over v0, v1 (and v2) into the last; `None`
    /// for `v_pk_mov_b32`.
    ops: Option<[rdna3::Decoded; 2]>,
    /// The sources' first registers, in RDNA3's numbering.
    srcs: [u16; 3],
    /// How many sources the operation reads.
    nsrc: usize,
    /// Per half, per source: which dword of the pair.
    sel: [[u16; 3]; 2],
    vdst: usize,
}

fn pk_f32(i: &Inst) -> Own {
    use fc::vop3p as f;
    let w = &i.words;
    let op = Vop3p::from_op(i.op);
    let (op3, nsrc) = match op {
        Some(Vop3p::V_PK_FMA_F32) => (rdna3::opcodes::op::vop3::V_FMA_F32, 3),
        Some(Vop3p::V_PK_MUL_F32) => (rdna3::opcodes::op::vop3::V_MUL_F32_E64, 2),
        Some(Vop3p::V_PK_ADD_F32) => (rdna3::opcodes::op::vop3::V_ADD_F32_E64, 2),
        _ => (0, 2),
    };
    let (opsel, opsel_hi) = (f::OPSEL.get(w), f::OPSEL_HI.get(w) | f::OPSEL_HI2.get(w) << 2);
    // v_pk_mov_b32 takes both dwords by OPSEL (its low half from S0, its high half
    // from S1).
    let mov = op == Some(Vop3p::V_PK_MOV_B32);
    let sel = [0, 1].map(|h| {
        let bits = if h == 0 || mov { opsel } else { opsel_hi };
        [0, 1, 2].map(|k| (bits >> k & 1) as u16)
    });
    let mut srcs = [0u16; 3];
    for (k, src) in [f::SRC0, f::SRC1, f::SRC2].into_iter().enumerate().take(nsrc) {
        let n = src.operand(w);
        srcs[k] = match n {
            256.. => n,
            // A pair of SGPRs, VCC or EXEC (numbered alike in gfx9 and gfx11; LLVM
            // allocates VCC as a pair of values); not M0, NULL or the trap registers.
            0..=101 | 106 | 126 => n,
            // An inline constant is one dword: both halves must take it as their low
            // dword (compilers clear its OPSEL_HI bit); what its high dword reads as,
            // the ISA does not say.
            128..=208 | 240..=248 if sel[0][k] == 0 && sel[1][k] == 0 => n,
            128..=208 | 240..=248 => {
                return Own::Refused("a packed 32-bit operation reading a constant's high dword (undefined)");
            }
            _ => return Own::Refused("a packed 32-bit operation on a special register"),
        };
    }
    let ops = if mov {
        None
    } else {
        let (neg, neg_hi, clamp) = (f::NEG.get(w), f::NEG_HI.get(w), f::CLMP.get(w));
        let half = |negs: u32| -> Option<rdna3::Decoded> {
            let mut r: Words = [0; 3];
            r3::vop3::ENCODING.bits.put(&mut r, r3::vop3::ENCODING.value);
            r3::vop3::OP.put(&mut r, u32::from(op3));
            r3::vop3::VDST.0.put(&mut r, nsrc as u32 - 1);
            r3::vop3::SRC0.0.put(&mut r, 256);
            r3::vop3::SRC1.0.put(&mut r, 257);
            if nsrc == 3 {
                r3::vop3::SRC2.0.put(&mut r, 258);
            }
            r3::vop3::NEG.put(&mut r, negs & ((1 << nsrc) - 1));
            r3::vop3::CLMP.put(&mut r, clamp);
            let op = super::lower::lowered(&r, 2, None)?;
            Some(rdna3::Decoded::new(op))
        };
        match (half(neg), half(neg_hi)) {
            (Some(lo), Some(hi)) => Some([lo, hi]),
            _ => return Own::Refused("a packed 32-bit operation RDNA3's VOP3 cannot express"),
        }
    };
    Own::PkF32(Box::new(PkF32 {
        ops,
        srcs,
        nsrc,
        sel,
        vdst: f::VDST.index(w),
    }))
}

/// Runs a packed 32-bit instruction on the half-wave's active lanes: both halves are
/// computed before either is written (the destination may be a source).
fn run_pk_f32(w: &mut Wave, x: &PkF32, mem: &dyn Memory, lds: &mut [u8]) -> Result<(), Trap> {
    let exec = w.exec();
    let active = || (0..32).filter(move |lane| exec >> lane & 1 != 0);
    let mut out = [[0u32; 32]; 2];
    for (h, half) in out.iter_mut().enumerate() {
        let mut rows = [[0u32; 32]; 3];
        for (k, row) in rows.iter_mut().enumerate().take(x.nsrc) {
            // A constant is read as the operation's 32-bit float form (its `sel`
            // is 0: a register pair's next dword otherwise).
            for lane in active() {
                row[lane] = w.vread(x.srcs[k] + x.sel[h][k], lane, None)?;
            }
        }
        *half = match &x.ops {
            Some(ops) => run_in_scratch(w, &rows[..x.nsrc], &ops[h], mem, lds)?,
            // v_pk_mov_b32: the low half from S0, the high half from S1.
            None => rows[h],
        };
    }
    for lane in active() {
        w.vwrite(x.vdst, lane, out[0][lane])?;
        w.vwrite(x.vdst + 1, lane, out[1][lane])?;
    }
    Ok(())
}

/// SMEM: the loads (`s_load_dword…`), the stores and atomics ([`super::smem`]), the
/// clocks, the cache controls and ATC probes (hints); the scratch forms are refused.
fn smem(i: &Inst) -> Own {
    let w = &i.words;
    // A load's (dwords, through a buffer resource); `None` for a store or atomic.
    let load = match Smem::from_op(i.op) {
        Some(Smem::S_LOAD_DWORD) => Some((1, false)),
        Some(Smem::S_LOAD_DWORDX2) => Some((2, false)),
        Some(Smem::S_LOAD_DWORDX4) => Some((4, false)),
        Some(Smem::S_LOAD_DWORDX8) => Some((8, false)),
        Some(Smem::S_LOAD_DWORDX16) => Some((16, false)),
        Some(Smem::S_BUFFER_LOAD_DWORD) => Some((1, true)),
        Some(Smem::S_BUFFER_LOAD_DWORDX2) => Some((2, true)),
        Some(Smem::S_BUFFER_LOAD_DWORDX4) => Some((4, true)),
        Some(Smem::S_BUFFER_LOAD_DWORDX8) => Some((8, true)),
        Some(Smem::S_BUFFER_LOAD_DWORDX16) => Some((16, true)),
        Some(
            Smem::S_DCACHE_INV
            | Smem::S_DCACHE_WB
            | Smem::S_DCACHE_INV_VOL
            | Smem::S_DCACHE_WB_VOL
            | Smem::S_DCACHE_DISCARD
            | Smem::S_DCACHE_DISCARD_X2
            // Probes of the address translation cache: prefetch hints, no result.
            | Smem::S_ATC_PROBE
            | Smem::S_ATC_PROBE_BUFFER,
        ) => {
            return Own::Hint;
        }
        // The shader clock and the real-time counter: both the 100 MHz count the
        // RDNA3 interpreter's clocks give (docs/limits.md).
        Some(Smem::S_MEMTIME | Smem::S_MEMREALTIME) => {
            return match scalar(fc::smem::SDATA.0.get(w)) {
                Some(sdata) => Own::Clock(sdata as usize),
                None => Own::Refused("a clock read into FLAT_SCRATCH or XNACK_MASK"),
            };
        }
        _ => None,
    };
    let raw = fc::smem::OFFSET.get(w);
    let (imm, soffset_en) = (fc::smem::IMM.get(w) == 1, fc::smem::SOFFSET_EN.get(w) == 1);
    // IMM: a signed 21-bit byte offset, and SOFFSET's SGPR where SOFFSET_EN; else the
    // offset field names the SGPR.
    let (offset, soffset) = match (imm, soffset_en) {
        (true, false) => (i64::from((raw << 11) as i32 >> 11), None),
        (true, true) => (i64::from((raw << 11) as i32 >> 11), Some(fc::smem::SOFFSET.0.get(w))),
        (false, true) => (0, Some(fc::smem::SOFFSET.0.get(w))),
        (false, false) => (0, Some(raw & 0x7f)),
    };
    let soffset = match soffset.map(scalar) {
        None => NULL,
        Some(Some(s)) => s as u16,
        Some(None) => return Own::Refused("a scalar offset in FLAT_SCRATCH or XNACK_MASK"),
    };
    let (Some(sdata), Some(sbase)) = (
        scalar(fc::smem::SDATA.0.get(w)),
        scalar(u32::from(fc::smem::SBASE.operand(w))),
    ) else {
        return Own::Refused("a scalar memory access through FLAT_SCRATCH or XNACK_MASK");
    };
    let at = ScalarLoad {
        dwords: load.map_or(1, |l| l.0),
        sdata: sdata as usize,
        sbase: sbase as u16,
        offset,
        soffset,
    };
    match load {
        Some((_, true)) => Own::ScalarBufferLoad(at),
        Some((_, false)) => Own::ScalarLoad(at),
        None => match super::smem::decode(i, at) {
            Some(x) => Own::ScalarWrite(x),
            None => Own::Refused("a scalar memory instruction the CDNA3 interpreter does not run yet"),
        },
    }
}

impl Decoded {
    /// Why the interpreter does not run this instruction yet, if it does not.
    pub(crate) fn not_run(&self) -> Option<&'static str> {
        match self {
            Decoded::Own(_, Own::Refused(why)) => Some(why),
            _ => None,
        }
    }
}

impl Step for Decoded {
    #[inline]
    fn size(&self) -> u8 {
        match self {
            Decoded::Lowered(_, i) | Decoded::Lowered16(_, i, _) | Decoded::CmpX(_, i, _) | Decoded::Own(i, _) => {
                i.size
            }
        }
    }
    #[inline]
    fn is_hint(&self) -> bool {
        match self {
            Decoded::Lowered(d, _) => Step::is_hint(d),
            Decoded::Lowered16(..) | Decoded::CmpX(..) => false,
            Decoded::Own(i, own) => matches!(own, Own::Hint) && i.size == 1,
        }
    }
    #[inline]
    fn writes_scalars(&self) -> bool {
        match self {
            Decoded::Lowered(d, _) | Decoded::Lowered16(d, _, _) => Step::writes_scalars(d),
            Decoded::CmpX(..) => true,
            Decoded::Own(_, own) => !own.lane_wise(),
        }
    }
    #[inline]
    fn per_half(&self) -> bool {
        match self {
            Decoded::Lowered(d, _) | Decoded::Lowered16(d, _, _) | Decoded::CmpX(d, _, _) => Step::per_half(d),
            // A lane move across halves runs both itself.
            Decoded::Own(_, Own::Dpp(x)) => !x.mv.whole_wave,
            // The SDWA forms write a compare's mask, or VCC as a carry, per half.
            Decoded::Own(_, own) => own.lane_wise() || matches!(own, Own::Sdwa(_) | Own::SdwaCmp(_)),
        }
    }
    #[inline]
    fn run(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> Result<Flow, Trap> {
        let (i, own) = match self {
            Decoded::Lowered(d, i) => {
                if w.mode & GPR_IDX_EN != 0 {
                    return indexed(w, d, i, mem, lds);
                }
                return d.run(w, mem, lds);
            }
            Decoded::Lowered16(..) | Decoded::CmpX(..) if w.mode & GPR_IDX_EN != 0 => {
                return Err(Trap::refused(UNDER_GPR_IDX.into()));
            }
            &Decoded::Lowered16(ref d, _, vdst) => {
                let flow = d.run_out_of_line(w, mem, lds)?;
                let exec = w.exec();
                for lane in 0..32 {
                    if exec >> lane & 1 != 0 {
                        let v = w.vread(256 + vdst as u16, lane, None)?;
                        w.vwrite(vdst, lane, v & 0xffff)?;
                    }
                }
                return Ok(flow);
            }
            &Decoded::CmpX(ref d, _, mask) => {
                let flow = d.run_out_of_line(w, mem, lds)?;
                // This half's mask (the low or high SGPR of the pair) is its EXEC.
                w.s[rdna3::EXEC_LO + w.half] = w.s[mask + w.half];
                return Ok(flow);
            }
            Decoded::Own(i, own) => (i, own),
        };
        if w.mode & GPR_IDX_EN != 0
            && !matches!(
                own,
                Own::Hint
                    | Own::End
                    | Own::Barrier
                    | Own::ScalarLoad(_)
                    | Own::ScalarBufferLoad(_)
                    | Own::GprIdx(_)
                    | Own::Clock(_)
                    | Own::Ff0 { .. }
                    | Own::ScalarWrite(_)
            )
        {
            return Err(Trap::refused(UNDER_GPR_IDX.into()));
        }
        match own {
            Own::Hint => Ok(Flow::Next),
            Own::GprIdx(x) => x.run(w).map(|_| Flow::Next),
            Own::End => Ok(Flow::End),
            Own::Barrier => Ok(Flow::Barrier),
            Own::ScalarLoad(l) => rdna3::scalar_load(w, l, mem).map(|_| Flow::Next),
            Own::ScalarBufferLoad(l) => rdna3::scalar_buffer_load(w, l, mem, None).map(|_| Flow::Next),
            Own::Global(a, acc) => rdna3::global(w, &in_file(w, a, *acc), mem).map(|_| Flow::Next),
            Own::GlobalLds(x) => x.run(w, mem, lds).map(|_| Flow::Next),
            Own::Flat(a, acc) => rdna3::flat_generic(w, &in_file(w, a, *acc), mem, lds).map(|_| Flow::Next),
            Own::Scratch(a, acc) => rdna3::scratch(w, &in_file(w, a, *acc)).map(|_| Flow::Next),
            &Own::Buffer(a, acc) => {
                let a = rdna3::BufferAccess {
                    vdata: a.vdata + if acc { w.place.acc_base as usize } else { 0 },
                    ..a
                };
                rdna3::buffer(w, &a, mem, lds).map(|_| Flow::Next)
            }
            &Own::AccMove { from_acc, to_acc } => acc_move(w, i, from_acc, to_acc).map(|_| Flow::Next),
            Own::MovB64(x) => mov_b64(w, x, i.literal).map(|_| Flow::Next),
            Own::LshlAddU64(x) => lshl_add_u64(w, x, i.literal).map(|_| Flow::Next),
            Own::Sdwa(x) => run_sdwa(w, x, mem, lds).map(|_| Flow::Next),
            Own::Dpp(x) => run_dpp(w, x, mem, lds).map(|_| Flow::Next),
            Own::SdwaCmp(x) => run_sdwa_cmp(w, x, mem, lds).map(|_| Flow::Next),
            Own::PkF32(x) => run_pk_f32(w, x, mem, lds).map(|_| Flow::Next),
            Own::Dot(x) => run_dot(w, x, i.literal).map(|_| Flow::Next),
            Own::Fp8(x) => x.run(w, i.literal).map(|_| Flow::Next),
            &Own::DsAtomic(ref x, acc) => {
                // AccVGPRs hold the data and the result where ACC says.
                let base = if acc { w.place.acc_base } else { 0 };
                let x = rdna3::DsExtraAtomic {
                    data: x.data + base as u16,
                    vdst: x.vdst + base as usize,
                    ..**x
                };
                rdna3::ds_extra_atomic(w, &x, lds).map(|_| Flow::Next)
            }
            Own::Mfma(x) => super::mfma::run(w, x).map(|_| Flow::Next),
            Own::Smfmac(x) => super::mfma::run_sparse(w, x).map(|_| Flow::Next),
            Own::ScalarWrite(x) => x.run(w, mem).map(|_| Flow::Next),
            &Own::Clock(sdata) => w.swrite64(sdata, rdna3::realtime()).map(|_| Flow::Next),
            &Own::Ff0 { sdst, src, wide } => {
                let v = if wide {
                    w.sread64(src, i.literal)?
                } else {
                    u64::from(w.sread(src, i.literal)?) | 0xffff_ffff_0000_0000
                };
                let first = if v == u64::MAX {
                    -1
                } else {
                    (!v).trailing_zeros() as i32
                };
                w.swrite(sdst, first as u32).map(|_| Flow::Next)
            }
            // The dispatch's error names the instruction itself.
            Own::Refused(why) => Err(Trap::refused((*why).to_string())),
        }
    }
    fn text(&self) -> String {
        match self {
            Decoded::Lowered(_, i) | Decoded::Lowered16(_, i, _) | Decoded::CmpX(_, i, _) | Decoded::Own(i, _) => {
                i.llvm().to_string()
            }
        }
    }
}

/// A memory access's data registers where they are in the unified file: past the
/// wave's ACCUM_OFFSET for AccVGPRs.
fn in_file(w: &Wave, a: &FlatAccess, acc: bool) -> FlatAccess {
    let mut a = *a;
    if acc {
        a.vdst += w.place.acc_base as usize;
        a.data += w.place.acc_base as u16;
    }
    a
}

/// An AccVGPR move on the half-wave's active lanes: the source an AccVGPR where
/// `from_acc` (else a VGPR, an SGPR or a constant), the destination one where
/// `to_acc`.
fn acc_move(w: &mut Wave, i: &Inst, from_acc: bool, to_acc: bool) -> Result<(), Trap> {
    let words = &i.words;
    let (dst, src) = if i.enc == Encoding::Vop1 {
        (fc::vop1::VDST.index(words), fc::vop1::SRC0.operand(words))
    } else {
        (fc::vop3p::VDST.index(words), fc::vop3p::SRC0.operand(words))
    };
    let src = match src {
        256.. if from_acc => src + w.place.acc_base as u16,
        256.. => src,
        n => scalar(u32::from(n)).ok_or("a source in FLAT_SCRATCH or XNACK_MASK")? as u16,
    };
    let dst = if to_acc { dst + w.place.acc_base as usize } else { dst };
    let exec = w.exec();
    for lane in 0..32 {
        if exec >> lane & 1 != 0 {
            let v = w.vread(src, lane, i.literal)?;
            w.vwrite(dst, lane, v)?;
        }
    }
    Ok(())
}

/// A 64-bit operation's operands, read from the instruction once: the VGPR pair it
/// writes and its sources in RDNA3's numbering (`v_mov_b64` reads the first alone;
/// `v_lshl_add_u64` all three, the second its 32-bit shift).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wide {
    vdst: usize,
    srcs: [u16; 3],
}

/// `v_mov_b64` (VOP1 or VOP3) or `v_lshl_add_u64` (VOP3) as `own`, its operands read.
fn wide_op(i: &Inst, own: fn(Wide) -> Own) -> Own {
    let words = &i.words;
    let (vdst, srcs) = if i.enc == Encoding::Vop1 {
        (fc::vop1::VDST.index(words), [fc::vop1::SRC0.operand(words), 0, 0])
    } else {
        let src = |b: crate::field::Src| b.operand(words);
        let shifted = Vop3::from_op(i.op) == Some(Vop3::V_LSHL_ADD_U64);
        (
            fc::vop3::VDST.index(words),
            [
                src(fc::vop3::SRC0),
                if shifted { src(fc::vop3::SRC1) } else { 0 },
                if shifted { src(fc::vop3::SRC2) } else { 0 },
            ],
        )
    };
    // Renumber the scalar operands as gfx11 does (M0, NULL).
    let mut renumbered = [0; 3];
    for (k, &n) in srcs.iter().enumerate() {
        renumbered[k] = if n < 256 {
            match scalar(u32::from(n)) {
                Some(r) => r as u16,
                None => return Own::Refused("a source in FLAT_SCRATCH or XNACK_MASK"),
            }
        } else {
            n
        };
    }
    own(Wide { vdst, srcs: renumbered })
}

/// A 64-bit value for each of a half-wave's 32 lanes, as its low and high words
/// (the VGPR pair's two rows): kept apart, the lanes' arithmetic runs on 32-bit words
/// and vectorises.
struct Pairs {
    lo: [u32; 32],
    hi: [u32; 32],
}

impl Pairs {
    /// Source operand `n` (RDNA3's numbering): a scalar or constant read once for all
    /// lanes, a VGPR pair's rows copied.
    fn read(w: &Wave, n: u16, literal: Option<u32>) -> Result<Pairs, Trap> {
        if n < 256 {
            let v = w.vread64(n, 0, literal)?;
            return Ok(Pairs {
                lo: [v as u32; 32],
                hi: [(v >> 32) as u32; 32],
            });
        }
        let r = usize::from(n - 256);
        match (w.v.get(r), w.v.get(r + 1)) {
            (Some(lo), Some(hi)) => Ok(Pairs { lo: lo.0, hi: hi.0 }),
            _ => Err(beyond(w, r + 1)),
        }
    }

    /// Writes the active lanes' values into the VGPR pair from `vdst`.
    fn write(&self, w: &mut Wave, vdst: usize) -> Result<(), Trap> {
        if vdst + 1 >= w.v.len() {
            return Err(beyond(w, vdst + 1));
        }
        let exec = w.exec();
        let (lo, hi) = w.v[vdst..vdst + 2].split_at_mut(1);
        let (lo, hi) = (&mut lo[0].0, &mut hi[0].0);
        if exec == u32::MAX {
            *lo = self.lo;
            *hi = self.hi;
            return Ok(());
        }
        for lane in 0..32 {
            // All ones where the lane is active.
            let take = 0u32.wrapping_sub(u32::from(exec & rdna3::LANE_BIT[lane] != 0));
            lo[lane] = (lo[lane] & !take) | (self.lo[lane] & take);
            hi[lane] = (hi[lane] & !take) | (self.hi[lane] & take);
        }
        Ok(())
    }
}

/// `v_lshl_add_u64`'s lanes, (a << by) + c, compiled for AVX2 where the CPU has it:
/// one shift amount for all lanes where `uniform` gives it, else each lane's `by`.
struct ShiftAdd<'a> {
    a: &'a Pairs,
    by: &'a [u32; 32],
    uniform: Option<u32>,
    c: &'a Pairs,
}

impl crate::rdna3::wide::Whole for ShiftAdd<'_> {
    type Out = Pairs;
    #[inline(always)]
    fn run(self) -> Pairs {
        #[inline(always)]
        fn lanes(a: &Pairs, c: &Pairs, by: impl Fn(usize) -> u32) -> Pairs {
            let mut out = Pairs {
                lo: [0; 32],
                hi: [0; 32],
            };
            for lane in 0..32 {
                let (lo, hi, n) = (a.lo[lane], a.hi[lane], by(lane));
                // The bits the low word shifts into the high one (none for a shift of 0).
                let carried = ((u64::from(lo) << n) >> 32) as u32;
                let (sum_lo, carry) = (lo << n).overflowing_add(c.lo[lane]);
                out.lo[lane] = sum_lo;
                out.hi[lane] = ((hi << n) | carried)
                    .wrapping_add(c.hi[lane])
                    .wrapping_add(u32::from(carry));
            }
            out
        }
        match self.uniform {
            Some(n) => lanes(self.a, self.c, |_| n),
            None => lanes(self.a, self.c, |lane| self.by[lane]),
        }
    }
}

fn beyond(w: &Wave, r: usize) -> Trap {
    Trap::refused(format!("v{r} beyond the wave's {} VGPRs", w.v.len()))
}

/// `v_mov_b64` on the half-wave's active lanes.
fn mov_b64(w: &mut Wave, x: &Wide, literal: Option<u32>) -> Result<(), Trap> {
    Pairs::read(w, x.srcs[0], literal)?.write(w, x.vdst)
}

/// `v_lshl_add_u64` on the half-wave's active lanes: (S0 << S1[2:0]) + S2. A shift
/// for every lane (a constant, nearly always) is one amount for all.
fn lshl_add_u64(w: &mut Wave, x: &Wide, literal: Option<u32>) -> Result<(), Trap> {
    let [s0, s1, s2] = x.srcs;
    let a = Pairs::read(w, s0, literal)?;
    let c = Pairs::read(w, s2, literal)?;
    let mut by = [0u32; 32];
    let uniform = if s1 < 256 {
        Some(w.vread(s1, 0, literal)? & 7)
    } else {
        let r = usize::from(s1 - 256);
        let row = w.v.get(r).ok_or_else(|| beyond(w, r))?;
        for (b, &v) in by.iter_mut().zip(row.iter()) {
            *b = v & 7;
        }
        None
    };
    let out = crate::rdna3::wide::run(ShiftAdd {
        a: &a,
        by: &by,
        uniform,
        c: &c,
    });
    out.write(w, x.vdst)
}

#[cfg(test)]
pub(super) mod tests {
    use super::{Cdna3, rdna3};
    use crate::rdna3::testing::run_as;

    /// s[4:7] = a gfx9 V# of 64 bytes at `base` with word 3 `word3` (its data format:
    /// `0x27000` is DATA_FORMAT 32, NUM_FORMAT float).
    pub(in crate::cdna3) fn vsharp(w: &mut crate::rdna3::Wave, base: u64, word3: u32) {
        w.s[4..8].copy_from_slice(&[base as u32, (base >> 32) as u32, 64, word3]);
    }

    /// Random instructions decode and run on a wave of 64 lanes without a panic: an
    /// error, or a result.
    #[test]
    fn random_instructions_run_or_stop_with_an_error() {
        use crate::rdna3::{Frontend, Wave};
        let mem = crate::memory::SliceMemory::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut ran = 0;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let words = [x as u32, (x >> 32) as u32, x.rotate_left(29) as u32];
            let Ok(d) = Cdna3::decode(&words) else { continue };
            let mut w = Wave::new(256, 0);
            w.s[crate::rdna3::EXEC_LO] = u32::MAX;
            w.s[crate::rdna3::EXEC_LO + 1] = u32::MAX;
            w.wave64 = true;
            w.v_other.resize(w.v.len(), crate::rdna3::VgprRow::default());
            let mut lds = vec![0u8; 1024];
            if crate::rdna3::run_halves(&d, &mut w, &mem, &mut lds).is_ok() {
                ran += 1;
            }
        }
        assert!(ran > 1000, "{ran} of the random instructions ran");
    }

    /// A wave of 64 lanes, every lane on, with VGPR `r` of lane `l` `f(r, l)` for
    /// VGPRs 0 to 3.
    fn wave64(w: &mut crate::rdna3::Wave, f: impl Fn(usize, usize) -> u32) {
        w.wave64 = true;
        w.s[crate::rdna3::EXEC_LO + 1] = u32::MAX;
        w.v_other.resize(w.v.len(), crate::rdna3::VgprRow::default());
        for r in 0..4 {
            for lane in 0..32 {
                w.v[r][lane] = f(r, lane);
                w.v_other[r][lane] = f(r, 32 + lane);
            }
        }
    }

    /// VGPR `r` of every lane of a wave of 64.
    fn lanes64(w: &crate::rdna3::Wave, r: usize) -> Vec<u32> {
        (0..64)
            .map(|l| if l < 32 { w.v[r][l] } else { w.v_other[r][l - 32] })
            .collect()
    }

    /// `v_lshl_add_u64` against 64-bit arithmetic: every shift (an inline constant,
    /// and a VGPR with a shift a lane, its bits past [2:0] ignored), a carry out of the
    /// low word, a scalar pair as the addend, and lanes EXEC leaves off unwritten in
    /// both halves of a wave64.
    #[test]
    fn lshl_add_u64_shifts_carries_and_keeps_inactive_lanes() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let a: Vec<u64> = (0..64).map(|_| next()).collect();
        let c: Vec<u64> = (0..64)
            .map(|l| if l % 3 == 0 { u64::MAX - l } else { next() })
            .collect();
        let shifts: Vec<u32> = (0..64).map(|l| (l as u32 * 5) ^ 0x58).collect();
        let scalar = 0xffff_ffff_0000_0001u64;
        let exec = 0xf0f0_1234_ffff_fffeu64;
        // (src1, src2) in gfx9's numbering: constants 0 to 4 and v6; v[2:3] or s[10:11].
        let mut cases: Vec<(u32, u32)> = (0..5).map(|k| (128 + k, 258)).collect();
        cases.push((262, 258));
        cases.push((129, 10));
        // Both builds of the lanes' loop: AVX2 (where the CPU has it) and baseline.
        let builds = [false, true].map(|baseline| cases.iter().map(move |&c| (baseline, c)));
        for (baseline, (src1, src2)) in builds.into_iter().flatten() {
            crate::rdna3::wide::BASELINE_ONLY.with(|b| b.set(baseline));
            let words = [0xd208_0004, 256 | src1 << 9 | src2 << 18];
            let w = run_as::<Cdna3>(&[&words], &mut [], &mut [0; 64], |w, _| {
                w.wave64 = true;
                w.v_other.resize(w.v.len(), crate::rdna3::VgprRow::default());
                w.s[crate::rdna3::EXEC_LO] = exec as u32;
                w.s[crate::rdna3::EXEC_LO + 1] = (exec >> 32) as u32;
                w.s[10] = scalar as u32;
                w.s[11] = (scalar >> 32) as u32;
                for lane in 0..64 {
                    let (rows, l) = if lane < 32 {
                        (&mut w.v, lane)
                    } else {
                        (&mut w.v_other, lane - 32)
                    };
                    let values = [a[lane], c[lane], 0x5555_5555_aaaa_aaaa];
                    for (k, v) in values.into_iter().enumerate() {
                        rows[2 * k][l] = v as u32;
                        rows[2 * k + 1][l] = (v >> 32) as u32;
                    }
                    rows[6][l] = shifts[lane];
                }
            })
            .unwrap_or_else(|e| panic!("src1 {src1}, src2 {src2}: {e}"));
            crate::rdna3::wide::BASELINE_ONLY.with(|b| b.set(false));
            for lane in 0..64 {
                let (rows, l) = if lane < 32 {
                    (&w.v, lane)
                } else {
                    (&w.v_other, lane - 32)
                };
                let got = u64::from(rows[4][l]) | u64::from(rows[5][l]) << 32;
                let by = if src1 == 262 { shifts[lane] & 7 } else { src1 - 128 };
                let addend = if src2 == 10 { scalar } else { c[lane] };
                let want = if exec >> lane & 1 != 0 {
                    (a[lane] << by).wrapping_add(addend)
                } else {
                    0x5555_5555_aaaa_aaaa
                };
                assert_eq!(got, want, "lane {lane}, src1 {src1}, src2 {src2}, baseline {baseline}");
            }
        }
    }

    /// `scratch_load_lds_*` read each lane's private memory (what `scratch_store_dword`
    /// put there) into LDS at M0 + the offset + 4 × the lane, on a wave of 64: a dword
    /// from a VGPR's address, a short sign-extended from a VGPR's address plus 2, a byte
    /// from SADDR's address plus 1 (the VGPR unused).
    #[test]
    fn scratch_load_lds_reads_each_lanes_private_memory() {
        // scratch_store_dword v1, v2, off
        let store: &[u32] = &[0xdc70_6000, 0x007f_0201];
        // scratch_load_lds_dword v1, off
        let dword: &[u32] = &[0xdca8_6000, 0x007f_0001];
        // scratch_load_lds_sshort v1, off offset:2
        let short: &[u32] = &[0xdca4_6002, 0x007f_0001];
        // scratch_load_lds_ubyte off, s3 offset:1
        let byte: &[u32] = &[0xdc98_4001, 0x0003_0000];
        let setup = |w: &mut crate::rdna3::Wave, _| {
            wave64(w, |r, lane| match r {
                1 => 8,
                2 => 0x8001_0000 | (lane as u32) << 24 | 0x7f00 | lane as u32,
                _ => 0,
            });
            w.s[crate::rdna3::M0] = 64;
            w.s[3] = 8;
        };
        let at = |lds: &[u8], lane: usize, offset: usize| {
            u32::from_le_bytes(lds[64 + offset + 4 * lane..68 + offset + 4 * lane].try_into().unwrap())
        };
        for (load, offset, want) in [
            (dword, 0, &(|l: u32| 0x8001_7f00 | l << 24 | l) as &dyn Fn(u32) -> u32),
            (short, 2, &|l: u32| (0x8001 | l << 8) as u16 as i16 as u32),
            (byte, 1, &|_: u32| 0x7f),
        ] {
            let mut lds = vec![0u8; 512];
            run_as::<Cdna3>(&[store, load], &mut [], &mut lds, setup).unwrap();
            for lane in 0..64 {
                assert_eq!(
                    at(&lds, lane, offset),
                    want(lane as u32),
                    "lane {lane}, offset {offset}"
                );
            }
        }
    }

    /// `global_load_lds_dword v[4:5], off offset:16` on a wave of 64: lane L's dword
    /// from its address plus 16 lands at M0 + 16 + 4 × L; a dword past the LDS is
    /// written nothing of, or, under the sanitizer's LDS check, stops the instruction.
    #[test]
    fn global_load_lds_puts_a_dword_a_lane_from_m0() {
        let words = [0xdca8_8010, 0x007f_0004];
        let mut data: Vec<u8> = (0..80u32).flat_map(|k| (0xa000 + k).to_le_bytes()).collect();
        let run = |m0: u32, check: bool, data: &mut [u8], lds: &mut [u8]| {
            run_as::<Cdna3>(&[&words], data, lds, |w, base| {
                wave64(w, |_, _| 0);
                w.check_lds = check;
                w.s[crate::rdna3::M0] = m0;
                for lane in 0..64 {
                    let a = base + 4 * lane as u64;
                    let (rows, l) = if lane < 32 {
                        (&mut w.v, lane)
                    } else {
                        (&mut w.v_other, lane - 32)
                    };
                    rows[4][l] = a as u32;
                    rows[5][l] = (a >> 32) as u32;
                }
            })
        };
        let dword = |lds: &[u8], at: usize| u32::from_le_bytes(lds[at..at + 4].try_into().unwrap());
        let mut lds = vec![0xeeu8; 512];
        run(8, false, &mut data, &mut lds).unwrap();
        for lane in 0..64 {
            assert_eq!(dword(&lds, 8 + 16 + 4 * lane), 0xa004 + lane as u32, "lane {lane}");
        }
        assert_eq!(dword(&lds, 20), 0xeeee_eeee, "below M0 + 16");
        // From 300: lanes 49 to 63 would pass the 512 bytes.
        let mut lds = vec![0xeeu8; 512];
        run(300, false, &mut data, &mut lds).unwrap();
        assert_eq!(dword(&lds, 316 + 4 * 48), 0xa004 + 48);
        assert!(lds[316 + 4 * 49..].iter().all(|&b| b == 0xee), "nothing past the LDS");
        let Err(e) = run(300, true, &mut data, &mut lds) else {
            panic!("no trap past the LDS under the check");
        };
        assert_eq!(
            e.kind(),
            &crate::error::TrapKind::LdsOutside(
                512,
                crate::Access {
                    kind: crate::AccessKind::Store,
                    bytes: 4
                },
                512
            )
        );
    }

    /// gfx9's wave shifts and rotations by one lane and its row broadcasts move a
    /// wave64's values across rows and halves; a move into the register it reads
    /// reads every lane before any is written; without BOUND_CTRL a lane with no
    /// source keeps its value, with it reads 0; ROW_MASK keeps rows unwritten.
    #[test]
    fn dpp_wave_shifts_and_row_broadcasts() {
        let value = |lane: usize| 1000 + lane as u32;
        // (the instruction, from llvm-mc-19 -mcpu=gfx942, and what lane l then holds)
        type Want = fn(usize) -> u32;
        let cases: [(&str, [u32; 2], Want); 7] = [
            ("v_mov_b32_dpp v1, v1 wave_shl:1", [0x7e02_02fa, 0xff01_3001], |l| {
                1000 + if l < 63 { l + 1 } else { l } as u32
            }),
            ("v_mov_b32_dpp v1, v1 wave_rol:1", [0x7e02_02fa, 0xff01_3401], |l| {
                1000 + ((l + 1) % 64) as u32
            }),
            (
                "v_mov_b32_dpp v1, v1 wave_shr:1 bound_ctrl:1",
                [0x7e02_02fa, 0xff09_3801],
                |l| {
                    if l == 0 { 0 } else { 1000 + l as u32 - 1 }
                },
            ),
            ("v_mov_b32_dpp v1, v1 wave_ror:1", [0x7e02_02fa, 0xff01_3c01], |l| {
                1000 + ((l + 63) % 64) as u32
            }),
            // Rows 1, 2 and 3 take lanes 15, 31 and 47; row 0 has no source.
            (
                "v_mov_b32_dpp v1, v1 row_bcast:15",
                [0x7e02_02fa, 0xff01_4201],
                |l| match l / 16 {
                    0 => 1000 + l as u32,
                    r => 1000 + 16 * r as u32 - 1,
                },
            ),
            (
                "v_mov_b32_dpp v1, v1 row_bcast:31 bound_ctrl:1",
                [0x7e02_02fa, 0xff09_4301],
                |l| {
                    if l < 32 { 0 } else { 1031 }
                },
            ),
            // As LLVM's scans use it: rows 1 and 3 add lane 15 of the row before.
            (
                "v_add_u32_dpp v1, v1, v1 row_bcast:15 row_mask:0xa",
                [0x6802_02fa, 0xaf01_4201],
                |l| match l / 16 {
                    1 | 3 => 2000 + l as u32 + 16 * (l / 16) as u32 - 1,
                    _ => 1000 + l as u32,
                },
            ),
        ];
        for (text, words, want) in cases {
            let w = run_as::<Cdna3>(&[&words], &mut [], &mut [0; 64], |w, _| wave64(w, |_, l| value(l)))
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            let expected: Vec<u32> = (0..64).map(want).collect();
            assert_eq!(lanes64(&w, 1), expected, "{text}");
        }
    }

    /// An inactive source lane reads as a lane with no source; an inactive lane is not
    /// written.
    #[test]
    fn dpp_wave_shift_from_an_inactive_lane() {
        // v_mov_b32_dpp v2, v1 wave_shr:1 bound_ctrl:1
        let words = [0x7e04_02fa, 0xff09_3801];
        let w = run_as::<Cdna3>(&[&words], &mut [], &mut [0; 64], |w, _| {
            wave64(w, |r, l| 100 * r as u32 + l as u32);
            // Lane 31 (the last of the first half) and lane 40 off.
            w.s[crate::rdna3::EXEC_LO] = !(1 << 31);
            w.s[crate::rdna3::EXEC_LO + 1] = !(1 << 8);
        })
        .unwrap();
        let got = lanes64(&w, 2);
        assert_eq!(got[0], 0, "no lane before lane 0");
        assert_eq!(got[1], 100);
        assert_eq!(got[31], 231, "inactive: not written");
        assert_eq!(got[32], 0, "its source, lane 31, inactive");
        assert_eq!(got[33], 132, "across halves");
        assert_eq!(got[40], 240, "inactive: not written");
        assert_eq!(got[41], 0, "its source, lane 40, inactive");
        assert_eq!(got[63], 162);
    }

    /// gfx9's VGPR indexing mode: `s_set_gpr_idx_on` offsets the VGPR operands its mode
    /// names by M0[7:0] (the index and mode kept in M0, its other bits kept) until
    /// `s_set_gpr_idx_off`; `_idx` and `_mode` change them; an SDWA form under the mode
    /// and an index past v255 are refused.
    #[test]
    fn vgpr_indexing_mode_offsets_the_operands_it_names() {
        use crate::rdna3::{M0, Wave};
        let setup = |w: &mut Wave, _| {
            for r in 0..8 {
                for lane in 0..32 {
                    w.v[r][lane] = 100 * r as u32 + lane as u32;
                }
            }
            (w.s[3], w.s[4], w.s[5], w.s[M0]) = (2, 3, 254, 0xabcd_0000);
        };
        let on_src0_dst: &[u32] = &[0xbf11_0903]; // s_set_gpr_idx_on s3, gpr_idx(SRC0,DST)
        let mov: &[u32] = &[0x7e02_0302]; // v_mov_b32 v1, v2
        let idx: &[u32] = &[0xbe80_3204]; // s_set_gpr_idx_idx s4
        let mode_src1: &[u32] = &[0xbf9d_0002]; // s_set_gpr_idx_mode gpr_idx(SRC1)
        let add: &[u32] = &[0x6802_0102]; // v_add_u32 v1, v2, v0
        let off: &[u32] = &[0xbf9c_0000]; // s_set_gpr_idx_off
        let mov_after: &[u32] = &[0x7e0a_0302]; // v_mov_b32 v5, v2
        let w = run_as::<Cdna3>(
            &[on_src0_dst, mov, idx, mode_src1, add, off, mov_after],
            &mut [],
            &mut [0; 64],
            setup,
        )
        .unwrap();
        for lane in 0..32 {
            // v3 = v4 (index 2 on both), then v1 = v2 + v3 (index 3 on SRC1 alone).
            assert_eq!(w.v[3][lane], 400 + lane as u32);
            assert_eq!(w.v[1][lane], 200 + 400 + 2 * lane as u32);
            assert_eq!(w.v[5][lane], 200 + lane as u32, "after s_set_gpr_idx_off");
        }
        assert_eq!(w.s[M0], 0xabcd_2003);
        // v_cvt_f32_u32_sdwa v1, v2 ... under the mode: refused, not run unindexed.
        let sdwa: &[u32] = &[0x7e02_0cf9, 0x0001_1602];
        let Err(e) = run_as::<Cdna3>(&[on_src0_dst, sdwa], &mut [], &mut [0; 64], setup) else {
            panic!("an SDWA form ran under the indexing mode")
        };
        assert!(e.to_string().contains("indexing mode"), "{e}");
        // s_set_gpr_idx_on s5, gpr_idx(SRC0,DST): v2 + 254 is past v255.
        let far: &[u32] = &[0xbf11_0905];
        let Err(e) = run_as::<Cdna3>(&[far, mov], &mut [], &mut [0; 64], setup) else {
            panic!("an index past v255 ran")
        };
        assert!(e.to_string().contains("past v255"), "{e}");
    }

    /// The carry forms' SDWA dwords (a 64-bit add split in two, as LLVM makes it of a
    /// byte widened to 64 bits): the selected byte is added, the carry goes to VCC and
    /// the carry-in form reads it back.
    #[test]
    fn sdwa_carry_forms_write_and_read_vcc() {
        use crate::rdna3::{VCC_LO, Wave};
        // v_add_co_u32_sdwa v0, vcc, v0, v13 src1_sel:BYTE_0
        let add: &[u32] = &[0x3200_1af9, 0x0006_0600];
        // v_addc_co_u32_sdwa v1, vcc, v1, v13, vcc src1_sel:BYTE_1
        let addc: &[u32] = &[0x3802_1af9, 0x0106_0601];
        let setup = |w: &mut Wave, _| {
            for lane in 0..32 {
                w.v[0][lane] = 0xffff_ff80;
                w.v[1][lane] = 7;
                w.v[13][lane] = 0x5500 | (8 * lane as u32);
            }
        };
        let w = run_as::<Cdna3>(&[add, addc], &mut [], &mut [0; 64], setup).unwrap();
        for lane in 0..32 {
            let sum = 0xffff_ff80u64 + 8 * lane as u64;
            assert_eq!(w.v[0][lane], sum as u32, "lane {lane}");
            // 7 + 0x55 + the first add's carry (lanes 16 and up); no carry out.
            assert_eq!(w.v[1][lane], 7 + 0x55 + (sum >> 32) as u32, "lane {lane}");
        }
        assert_eq!(w.s[VCC_LO], 0, "the second add carries nowhere");
        let w = run_as::<Cdna3>(&[add], &mut [], &mut [0; 64], setup).unwrap();
        assert_eq!(w.s[VCC_LO], 0xffff_0000);
    }

    /// `s_buffer_load_dword*` through a gfx9 V#: the base from dwords 0–1, the offset
    /// (immediate or SGPR) added, what lies past NUM_RECORDS read as 0.
    #[test]
    fn scalar_buffer_loads_through_a_gfx9_resource() {
        use crate::rdna3::Wave;
        let mut data: Vec<u8> = (0..64u32).flat_map(|k| (0x100 + k).to_le_bytes()).collect();
        let setup = |w: &mut Wave, base: u64| {
            // V#: base, stride 0 (word 1's top half), NUM_RECORDS 24 bytes, gfx9's word 3.
            (w.s[4], w.s[5], w.s[6], w.s[7]) = (base as u32, (base >> 32) as u32 & 0xffff, 24, 0x0002_7fac);
            w.s[2] = 8;
        };
        // s_buffer_load_dwordx2 s[8:9], s[4:7], 0x10: bytes 16–23, inside.
        let x2: &[u32] = &[0xc026_0202, 0x0000_0010];
        // s_buffer_load_dword s8, s[4:7], s2: byte 8.
        let one: &[u32] = &[0xc020_0202, 0x0000_0002];
        // s_buffer_load_dwordx4 s[8:11], s[4:7], 0xc: bytes 12–27, the last past 24.
        let x4: &[u32] = &[0xc02a_0202, 0x0000_000c];
        let w = run_as::<Cdna3>(&[x2], &mut data, &mut [0; 64], setup).unwrap();
        assert_eq!((w.s[8], w.s[9]), (0x104, 0x105));
        let w = run_as::<Cdna3>(&[one], &mut data, &mut [0; 64], setup).unwrap();
        assert_eq!(w.s[8], 0x102);
        let w = run_as::<Cdna3>(&[x4], &mut data, &mut [0; 64], setup).unwrap();
        assert_eq!(w.s[8..12], [0x103, 0x104, 0x105, 0]);
    }

    /// gfx9's integer dot products: the VOP3 form of an accumulating one with CLMP, an
    /// SGPR or a literal source, the unsigned 16-bit one saturating.
    #[test]
    fn integer_dot_products_accumulate_and_saturate() {
        use crate::rdna3::Wave;
        let setup = |w: &mut Wave, _| {
            for lane in 0..32 {
                // Bytes 0x7f, 0x7f, 0x7f, 0x7f (and -1s) against 0x7f: 4 · 127 · 127.
                w.v[1][lane] = i32::MAX as u32 - lane as u32;
                w.v[2][lane] = 0x7f7f_7f7f;
                w.v[3][lane] = if lane % 2 == 0 { 0x7f7f_7f7f } else { 0xffff_ffff };
                w.v[4][lane] = u32::MAX - 10;
            }
            w.s[2] = 0x0002_0003;
        };
        let run = |words: &[u32]| run_as::<Cdna3>(&[words], &mut [], &mut [0; 64], setup).unwrap();
        // v_dot4c_i32_i8_e64 v1, v2, v3 clamp: the accumulator near i32::MAX saturates
        // for the positive products, takes 4 · -127 for the -1s.
        let w = run(&[0xd139_8001, 0x0002_0702]);
        assert_eq!(w.v[1][0], i32::MAX as u32);
        assert_eq!(w.v[1][1], (i32::MAX as u32 - 1).wrapping_sub(4 * 127));
        // v_dot2c_i32_i16_e64 v1, s2, v3: 3 · 0x7f7f + 2 · 0x7f7f added, wrapping.
        let w = run(&[0xd138_0001, 0x0002_0602]);
        assert_eq!(w.v[1][0], (i32::MAX as u32).wrapping_add(5 * 0x7f7f));
        assert_eq!(w.v[1][1], (i32::MAX as u32 - 1).wrapping_sub(3 + 2));
        // v_dot4c_i32_i8_e32 v1, 0x1020304, v3: a literal source.
        let w = run(&[0x7202_06ff, 0x0102_0304]);
        assert_eq!(w.v[1][0], (i32::MAX as u32).wrapping_add((1 + 2 + 3 + 4) * 127));
        // v_dot2_u32_u16 v1, v2, v3, v4 clamp: past u32::MAX, saturated.
        let w = run(&[0xd3a7_c001, 0x1c12_0702]);
        assert_eq!(w.v[1][0], u32::MAX);
    }

    /// CDNA3's MUBUF through a gfx9 resource: atomics return the old value with SC0
    /// alone, an access past NUM_RECORDS does nothing (a load reads 0), the SGPR offset
    /// moves the address but not the range check, ACC puts the data in AccVGPRs; a
    /// typed load through the V#'s format (32-bit float: the dword as it is).
    #[test]
    fn buffer_accesses_through_a_gfx9_resource() {
        use crate::rdna3::{EXEC_LO, Wave};
        // buffer_atomic_add v1, v2, s[4:7], 0 offen sc0 / without sc0
        let add_rtn: &[u32] = &[0xe108_5000, 0x8001_0102];
        let add: &[u32] = &[0xe108_1000, 0x8001_0102];
        // buffer_load_dword a1, v2, s[4:7], 0 offen
        let load_acc: &[u32] = &[0xe050_1000, 0x8081_0102];
        // buffer_load_dword v1, v2, s[4:7], s8 offen offset:4
        let load_soff: &[u32] = &[0xe050_1004, 0x0801_0102];
        // buffer_load_format_x v1, v2, s[4:7], 0 offen
        let format: &[u32] = &[0xe000_1000, 0x8001_0102];
        let setup = |w: &mut Wave, base: u64| {
            // 64 bytes of records, gfx9's DATA_FORMAT 32 / NUM_FORMAT float.
            vsharp(w, base, 0x27000);
            w.s[8] = 8;
            w.s[EXEC_LO] = u32::MAX;
            w.place.acc_base = 16;
            for lane in 0..32 {
                w.v[1][lane] = 100 + lane as u32;
                w.v[2][lane] = 4 * lane as u32;
            }
        };
        let words = |d: &[u8]| -> Vec<u32> { d.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect() };
        let fresh = || -> Vec<u8> { (0..32u32).flat_map(|k| (1000 + k).to_le_bytes()).collect() };

        let mut data = fresh();
        let w = run_as::<Cdna3>(&[add_rtn], &mut data, &mut [0; 64], setup).unwrap();
        for (lane, &now) in words(&data).iter().enumerate() {
            let inside = lane < 16;
            let was = 1000 + lane as u32;
            assert_eq!(now, if inside { was + 100 + lane as u32 } else { was }, "lane {lane}");
            assert_eq!(w.v[1][lane], if inside { was } else { 0 }, "lane {lane}'s old value");
        }
        let mut data = fresh();
        let w = run_as::<Cdna3>(&[add], &mut data, &mut [0; 64], setup).unwrap();
        assert_eq!(words(&data)[3], 1003 + 103);
        assert_eq!(w.v[1][3], 103, "no old value without SC0");

        let mut data = fresh();
        let w = run_as::<Cdna3>(&[load_acc], &mut data, &mut [0; 64], setup).unwrap();
        assert_eq!(
            (w.v[17][5], w.v[17][16], w.v[1][5]),
            (1005, 0, 105),
            "into a1, the AccVGPR"
        );

        let mut data = fresh();
        let w = run_as::<Cdna3>(&[load_soff], &mut data, &mut [0; 64], setup).unwrap();
        // Lane l reads byte 4l + 4 + 8 (checked at 4l + 4, inside for l < 15).
        assert_eq!((w.v[1][0], w.v[1][14], w.v[1][15]), (1003, 1017, 0));

        let w = run_as::<Cdna3>(&[format], &mut fresh(), &mut [0; 64], setup).unwrap();
        assert_eq!((w.v[1][3], w.v[1][15], w.v[1][16]), (1003, 1015, 0));

        // buffer_load_format_x v1, s[4:7], 0 offen lds: the typed load into LDS (32-bit
        // float: each lane's dword at M0 + 4 × the lane).
        let lds_format: &[u32] = &[0xe001_1000, 0x8001_0001];
        let mut lds = [0u8; 256];
        run_as::<Cdna3>(&[lds_format], &mut fresh(), &mut lds, |w, base| {
            setup(w, base);
            w.s[crate::rdna3::M0] = 16;
            for lane in 0..32 {
                w.v[1][lane] = 4 * lane as u32;
            }
        })
        .unwrap();
        assert_eq!(
            [0, 15, 16].map(|l| u32::from_le_bytes(lds[16 + 4 * l..20 + 4 * l].try_into().unwrap())),
            [1000, 1015, 0],
            "inside NUM_RECORDS, then 0"
        );

        // buffer_wbl2 sc1, buffer_inv sc0 sc1: an agent-scope release and a system-scope
        // acquire (LLVM's gfx942 fences) run, changing nothing.
        let fences: [&[u32]; 2] = [&[0xe0a0_8000, 0], &[0xe0a4_c000, 0]];
        let w = run_as::<Cdna3>(&fences, &mut fresh(), &mut [0; 64], setup).unwrap();
        assert_eq!(w.v[1][3], 103);
    }

    /// gfx942's program control and scalar odds and ends: `s_trap` stops the dispatch
    /// naming its ID; the cache and no-operation hints change nothing; the clocks write
    /// a 64-bit count that does not go back; `s_ff0` finds the lowest clear bit (-1 for
    /// none); the constant compares set or clear every active lane's bit, `v_cmpx` in
    /// EXEC too.
    #[test]
    fn program_control_clocks_and_constant_compares() {
        use crate::rdna3::{EXEC_LO, VCC_LO};
        let none = |_: &mut crate::rdna3::Wave, _| {};
        // s_trap 2
        let err = run_as::<Cdna3>(&[&[0xbf92_0002]], &mut [], &mut [0; 64], none)
            .err()
            .expect("a trap stops the wave");
        assert!(err.to_string().contains("s_trap 2"), "{err}");
        // s_icache_inv, v_nop (VOP3), s_dcache_discard s[0:1], 0, v_clrexcp
        let hints: [&[u32]; 4] = [&[0xbf93_0000], &[0xd140_0000, 0], &[0xc0a2_0000, 0], &[0x7e00_6a00]];
        let w = run_as::<Cdna3>(&hints, &mut [], &mut [0; 64], |w, _| w.s[0] = 7).unwrap();
        assert_eq!(w.s[0], 7);
        // s_memtime s[4:5]; s_memrealtime s[6:7]
        let clocks: [&[u32]; 2] = [&[0xc090_0100, 0], &[0xc094_0180, 0]];
        let w = run_as::<Cdna3>(&clocks, &mut [], &mut [0; 64], |w, _| w.s[4..8].fill(0xdead_beef)).unwrap();
        let (t0, t1) = (
            u64::from(w.s[4]) | u64::from(w.s[5]) << 32,
            u64::from(w.s[6]) | u64::from(w.s[7]) << 32,
        );
        assert!(t0 <= t1 && t1 < 1 << 50, "{t0:#x} then {t1:#x}");
        // s_ff0_i32_b32 s0, s1
        for (s1, first) in [(0xffff_00ffu32, 8), (u32::MAX, -1), (0, 0), (0x7fff_ffff, 31)] {
            let w = run_as::<Cdna3>(&[&[0xbe80_0e01]], &mut [], &mut [0; 64], |w, _| w.s[1] = s1).unwrap();
            assert_eq!(w.s[0] as i32, first, "s_ff0_i32_b32 of {s1:#x}");
        }
        // s_ff0_i32_b64 s0, s[2:3]
        for (v, first) in [(u64::MAX, -1), (0xffff_ffff, 32), (!(1u64 << 45), 45)] {
            let w = run_as::<Cdna3>(&[&[0xbe80_0f02]], &mut [], &mut [0; 64], |w, _| {
                w.s[2] = v as u32;
                w.s[3] = (v >> 32) as u32;
            })
            .unwrap();
            assert_eq!(w.s[0] as i32, first, "s_ff0_i32_b64 of {v:#x}");
        }
        let exec = 0x00ff_ff0f;
        let lanes = |w: &mut crate::rdna3::Wave, _| {
            w.s[EXEC_LO] = exec;
            w.s[VCC_LO] = 0x5555_5555;
            w.s[4] = 0x5555_5555;
        };
        // v_cmp_tru_f32_e32 vcc, v0, v1
        let w = run_as::<Cdna3>(&[&[0x7c9e_0300]], &mut [], &mut [0; 64], lanes).unwrap();
        assert_eq!(w.s[VCC_LO], exec);
        // v_cmp_f_i16_e32 vcc, v0, v1
        let w = run_as::<Cdna3>(&[&[0x7d40_0300]], &mut [], &mut [0; 64], lanes).unwrap();
        assert_eq!(w.s[VCC_LO], 0);
        // v_cmpx_t_u16_e64 s[4:5], v0, v1
        let w = run_as::<Cdna3>(&[&[0xd0bf_0004, 0x0002_0300]], &mut [], &mut [0; 64], lanes).unwrap();
        assert_eq!((w.s[4], w.s[EXEC_LO]), (exec, exec));
        // v_sat_pk_u8_i16_e64 v1, v2: the VOP1 operation in VOP3
        let w = run_as::<Cdna3>(&[&[0xd18f_0001, 0x0000_0102]], &mut [], &mut [0; 64], |w, _| {
            w.v[2][0] = 0x0123_ff80;
        })
        .unwrap();
        assert_eq!(w.v[1][0] & 0xffff, 0xff00);
    }

    /// gfx9's MTBUF opcodes are gfx11's, numbered alike (`mtbuf` hands the opcode over
    /// as it is): the same operation by name, gfx9's `format_d16` spelled `d16_format`.
    #[test]
    fn mtbuf_opcodes_are_numbered_as_gfx11s() {
        for op in 0..16u16 {
            let ours = super::super::opcodes::Mtbuf::from_op(op).unwrap().name();
            let theirs = rdna3::opcodes::Mtbuf::from_op(op).unwrap().name();
            assert_eq!(ours.replace("format_d16", "d16_format"), theirs, "opcode {op}");
        }
        assert!(super::super::opcodes::Mtbuf::from_op(16).is_none());
    }

    /// `v_dot2c_f32_f16`'s VOP3 form (RDNA3's VOP3P `v_dot2_f32_f16` with D as S2)
    /// computes what its VOP2 form (RDNA3's `v_dot2acc_f32_f16`) does, on halves whose
    /// products and partial sums round (a large accumulator, small products).
    #[test]
    fn dot2c_forms_agree() {
        let mut next = crate::rdna3::testing::xorshift32(0xd072);
        let (a, b, c): (Vec<u32>, Vec<u32>, Vec<u32>) = (0..32)
            .map(|_| {
                (
                    next() & 0x7bff_7bff,
                    next() & 0x7bff_7bff,
                    (next() >> 2).wrapping_add(0x3000_0000),
                )
            })
            .fold((vec![], vec![], vec![]), |(mut a, mut b, mut c), (x, y, z)| {
                a.push(x);
                b.push(y);
                c.push(z);
                (a, b, c)
            });
        // v_dot2c_f32_f16_e32 v0, v1, v2; v_dot2c_f32_f16_e64 v3, v1, v2
        let w = run_as::<Cdna3>(
            &[&[0x6e00_0501], &[0xd137_0003, 0x0002_0501]],
            &mut [],
            &mut [0; 64],
            |w, _| {
                for l in 0..32 {
                    (w.v[0][l], w.v[1][l], w.v[2][l], w.v[3][l]) = (c[l], a[l], b[l], c[l]);
                }
            },
        )
        .unwrap();
        for l in 0..32 {
            assert_eq!(w.v[3][l], w.v[0][l], "lane {l}");
        }
        assert!((0..32).any(|l| w.v[0][l] != c[l]), "the products change the sums");
    }

    /// MUBUF's float atomics (Composable Kernel's split-K reductions use the packed
    /// f16 add): the f64 add returning the old value with SC0, the f64 maximum, and the
    /// packed add of two halves, through a gfx9 resource.
    #[test]
    fn buffer_float_atomics() {
        use crate::rdna3::{EXEC_LO, Wave};
        // buffer_atomic_add_f64 v[10:11], v2, s[4:7], 0 offen sc0
        let add: &[u32] = &[0xe13c_5000, 0x8001_0a02];
        // buffer_atomic_max_f64 v[10:11], v2, s[4:7], 0 offen
        let max: &[u32] = &[0xe144_1000, 0x8001_0a02];
        // buffer_atomic_pk_add_f16 v1, v2, s[4:7], 0 offen
        let pk: &[u32] = &[0xe138_1000, 0x8001_0102];
        let setup = |w: &mut Wave, base: u64| {
            vsharp(w, base, 0x27000);
            w.s[EXEC_LO] = 0xff;
            for lane in 0..8 {
                let d = 1.25f64 + lane as f64;
                w.v[2][lane] = 8 * lane as u32;
                w.v[10][lane] = d.to_bits() as u32;
                w.v[11][lane] = (d.to_bits() >> 32) as u32;
                // 0.5 and 0.25 in f16
                w.v[1][lane] = 0x3400_3800;
            }
        };
        let fresh = || -> Vec<u8> { (0..8).flat_map(|k| (k as f64 * 2.0 - 5.0).to_le_bytes()).collect() };
        let f64s = |d: &[u8]| -> Vec<f64> { d.chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect() };
        let mut data = fresh();
        let w = run_as::<Cdna3>(&[add], &mut data, &mut [0; 64], setup).unwrap();
        for (k, now) in f64s(&data).into_iter().enumerate() {
            let was = k as f64 * 2.0 - 5.0;
            assert_eq!(now, was + 1.25 + k as f64, "lane {k}");
            let old = u64::from(w.v[10][k]) | u64::from(w.v[11][k]) << 32;
            assert_eq!(f64::from_bits(old), was, "lane {k}'s old value");
        }
        let mut data = fresh();
        run_as::<Cdna3>(&[max], &mut data, &mut [0; 64], setup).unwrap();
        for (k, now) in f64s(&data).into_iter().enumerate() {
            assert_eq!(now, (k as f64 * 2.0 - 5.0).max(1.25 + k as f64), "lane {k}");
        }
        // 1.0 and 2.0 in f16 in each record's low dword
        let mut data: Vec<u8> = (0..8).flat_map(|_| [0x00, 0x3c, 0x00, 0x40, 0, 0, 0, 0]).collect();
        run_as::<Cdna3>(&[pk], &mut data, &mut [0; 64], setup).unwrap();
        for k in 0..8 {
            let d = u32::from_le_bytes(data[8 * k..8 * k + 4].try_into().unwrap());
            // 1.5 and 2.25
            assert_eq!(d, 0x4080_3e00, "lane {k}");
        }
    }

    /// The typed forms read gfx9's data formats: MUBUF's from the V# (8_8_8_8 UNORM:
    /// bytes as k/255; 16_16 FLOAT into packed halves by the d16 form), MTBUF's from the
    /// instruction (16_16 UINT, and a byte stored as 8 UINT); a pair gfx11 has no format
    /// for (32-bit UNORM) is refused naming it.
    #[test]
    fn typed_buffer_accesses_read_gfx9_formats() {
        use crate::rdna3::{EXEC_LO, Wave};
        // buffer_load_format_xyzw v[10:13], v2, s[4:7], 0 offen
        let xyzw: &[u32] = &[0xe00c_1000, 0x8001_0a02];
        // buffer_load_format_d16_xy v1, v2, s[4:7], 0 offen
        let d16: &[u32] = &[0xe024_1000, 0x8001_0102];
        // tbuffer_load_format_xy v[10:11], v2, s[4:7], 0 format:[BUF_DATA_FORMAT_16_16,BUF_NUM_FORMAT_UINT] offen
        let t_xy: &[u32] = &[0xea28_9000, 0x8001_0a02];
        // tbuffer_store_format_x v1, v2, s[4:7], 0 format:[BUF_NUM_FORMAT_UINT] offen (8 UINT)
        let t_store: &[u32] = &[0xea0a_1000, 0x8001_0102];
        // tbuffer_load_format_x v1, v2, s[4:7], 0 format:[BUF_DATA_FORMAT_32] offen (UNORM)
        let t_bad: &[u32] = &[0xe820_1000, 0x8001_0102];
        let with = |dfmt: u32, nfmt: u32| {
            move |w: &mut Wave, base: u64| {
                vsharp(w, base, dfmt << 15 | nfmt << 12);
                w.s[EXEC_LO] = 0xf;
                for lane in 0..4 {
                    w.v[2][lane] = 4 * lane as u32;
                    w.v[1][lane] = 0x1234_5600 | lane as u32;
                }
            }
        };
        let bytes = || -> Vec<u8> { (0..64u8).map(|k| k.wrapping_mul(17)).collect() };
        // 8_8_8_8 UNORM (10, 0)
        let w = run_as::<Cdna3>(&[xyzw], &mut bytes(), &mut [0; 64], with(10, 0)).unwrap();
        for lane in 0..4 {
            for c in 0..4 {
                let b = ((4 * lane + c) as u8).wrapping_mul(17);
                assert_eq!(
                    f32::from_bits(w.v[10 + c][lane]),
                    f32::from(b) / 255.0,
                    "lane {lane}, component {c}"
                );
            }
        }
        // 16_16 FLOAT (5, 7) through the d16 form: the two halves packed as they are.
        let mut d = bytes();
        let w = run_as::<Cdna3>(&[d16], &mut d, &mut [0; 64], with(5, 7)).unwrap();
        assert_eq!(w.v[1][2], u32::from_le_bytes(d[8..12].try_into().unwrap()));
        // MTBUF: 16_16 UINT, each half zero-extended into its VGPR.
        let w = run_as::<Cdna3>(&[t_xy], &mut bytes(), &mut [0; 64], with(0, 0)).unwrap();
        let b = bytes();
        assert_eq!(
            (w.v[10][1], w.v[11][1]),
            (
                u32::from(u16::from_le_bytes([b[4], b[5]])),
                u32::from(u16::from_le_bytes([b[6], b[7]]))
            )
        );
        // 8 UINT: each lane's low byte at its offset, the rest of the dword kept.
        let mut d = bytes();
        run_as::<Cdna3>(&[t_store], &mut d, &mut [0; 64], with(0, 0)).unwrap();
        assert_eq!(&d[4..8], &[0x01, 5 * 17, 6 * 17, 7 * 17]);
        let err = run_as::<Cdna3>(&[t_bad], &mut bytes(), &mut [0; 64], with(0, 0))
            .err()
            .expect("no gfx11 format");
        assert!(err.to_string().contains("not a format"), "{err}");
    }

    /// A compare's SDWA form compares the selected bytes and words (sign-extended
    /// where SEXT says) into VCC or the SGPR pair it names, and `v_cmpx` into EXEC too.
    #[test]
    fn sdwa_compares_select_their_sources() {
        // v_cmp_gt_u32_sdwa vcc, v1, v2 src0_sel:BYTE_1 src1_sel:WORD_0
        let gt: &[u32] = &[0x7d98_04f9, 0x0401_0001];
        // v_cmpx_lt_i32_sdwa s[4:5], sext(v1), v2 src0_sel:BYTE_0 src1_sel:DWORD
        let lt: &[u32] = &[0x7da2_04f9, 0x0608_8401];
        let setup = |w: &mut crate::rdna3::Wave, _| {
            for lane in 0..32u32 {
                // Byte 1 of v1 is the lane, byte 0 the lane's negation (-lane).
                w.v[1][lane as usize] = 0xabcd_0000 | lane << 8 | (lane.wrapping_neg() & 0xff);
                w.v[2][lane as usize] = 0x7777_0000 | 16;
            }
        };
        let w = run_as::<Cdna3>(&[gt], &mut [], &mut [0; 64], setup).unwrap();
        assert_eq!(w.s[crate::rdna3::VCC_LO], !((1u32 << 17) - 1), "lane > 16");
        let w = run_as::<Cdna3>(&[lt], &mut [], &mut [0; 64], |w, base| {
            setup(w, base);
            for lane in 0..32 {
                w.v[2][lane] = 0;
            }
        })
        .unwrap();
        // sext(-lane) < 0 but for lane 0 (zero-extended, no byte would be).
        assert_eq!(w.s[4], !1);
        assert_eq!(w.s[crate::rdna3::EXEC_LO], !1);
    }

    /// gfx90a's packed 32-bit operations (encodings from `llvm-mc-19 --mcpu=gfx942`):
    /// each half takes the dwords OPSEL / OPSEL_HI choose, negated by NEG / NEG_HI;
    /// `v_pk_mov_b32` picks both by OPSEL.
    #[test]
    fn packed_32_bit_operations_select_and_negate_per_half() {
        // v_pk_add_f32 v[4:5], v[2:3], v[6:7] op_sel:[1,0] op_sel_hi:[0,1] neg_lo:[0,1]
        let add: &[u32] = &[0xd3b2_4804, 0x5002_0d02];
        // v_pk_mov_b32 v[4:5], v[2:3], v[6:7] op_sel:[1,0]
        let mov: &[u32] = &[0xd3b3_4804, 0x1802_0d02];
        // v_pk_fma_f32 v[4:5], v[2:3], v[6:7], v[8:9] neg_hi:[0,0,1]
        let fma: &[u32] = &[0xd3b0_4404, 0x1c22_0d02];
        let f = |x: f32| x.to_bits();
        let setup = |w: &mut crate::rdna3::Wave, _| {
            for lane in 0..32 {
                let l = lane as f32;
                w.v[2][lane] = f(l);
                w.v[3][lane] = f(100.0 + l);
                w.v[6][lane] = f(0.5);
                w.v[7][lane] = f(2.0 * l);
                w.v[8][lane] = f(3.0);
                w.v[9][lane] = f(7.0);
            }
        };
        let w = run_as::<Cdna3>(&[add], &mut [], &mut [0; 64], setup).unwrap();
        for lane in 0..32 {
            let l = lane as f32;
            assert_eq!(w.v[4][lane], f(100.0 + l - 0.5), "low: S0's high dword − S1's low");
            assert_eq!(w.v[5][lane], f(l + 2.0 * l), "high: S0's low dword + S1's high");
        }
        let w = run_as::<Cdna3>(&[mov], &mut [], &mut [0; 64], setup).unwrap();
        assert_eq!((w.v[4][3], w.v[5][3]), (f(103.0), f(0.5)));
        let w = run_as::<Cdna3>(&[fma], &mut [], &mut [0; 64], setup).unwrap();
        for lane in 0..32 {
            let l = lane as f32;
            assert_eq!(w.v[4][lane], f(l.mul_add(0.5, 3.0)));
            assert_eq!(w.v[5][lane], f((100.0 + l).mul_add(2.0 * l, -7.0)));
        }
        // An inline constant as both halves' low dword (OPSEL_HI clear for it), as
        // clang writes it: v_pk_fma_f32 v[22:23], v[20:21], 2.0, v[20:21] op_sel_hi:[1,0,1]
        let fma_k: &[u32] = &[0xd3b0_4016, 0x0c51_e914];
        let w = run_as::<Cdna3>(&[fma_k], &mut [], &mut [0; 64], |w, _| {
            for lane in 0..32 {
                w.v[20][lane] = f(lane as f32);
                w.v[21][lane] = f(-1.5);
            }
        })
        .unwrap();
        assert_eq!((w.v[22][7], w.v[23][7]), (f(21.0), f(-4.5)));
        // VCC as a pair of values, its low dword for both halves (as LLVM allocated it in
        // a tinygrad convolution): v_pk_fma_f32 v[40:41], v[28:29], vcc, v[40:41]
        // op_sel_hi:[1,0,1]
        let fma_vcc: &[u32] = &[0xd3b0_4028, 0x0ca0_d51c];
        let w = run_as::<Cdna3>(&[fma_vcc], &mut [], &mut [0; 64], |w, _| {
            w.s[crate::rdna3::VCC_LO] = f(0.25);
            w.s[crate::rdna3::VCC_LO + 1] = f(9.0);
            for lane in 0..32 {
                w.v[28][lane] = f(lane as f32);
                w.v[29][lane] = f(8.0);
                w.v[40][lane] = f(1.0);
                w.v[41][lane] = f(2.0);
            }
        })
        .unwrap();
        assert_eq!((w.v[40][8], w.v[41][8]), (f(3.0), f(4.0)));
        // Its high dword is not defined: refused. v_pk_mul_f32 v[4:5], v[2:3], 2.0
        let mul_k: &[u32] = &[0xd3b1_4004, 0x1801_e902];
        let Err(e) = run_as::<Cdna3>(&[mul_k], &mut [], &mut [0; 64], |_, _| {}) else {
            panic!("a constant's high dword read")
        };
        assert!(e.to_string().contains("high dword"), "{e}");
    }

    /// gfx9's SOPK arithmetic and signed compares, and `v_alignbit_b32`, as RDNA3's.
    #[test]
    fn sopk_signed_forms_and_alignbit() {
        // s_addk_i32 s0, 0x7fff; s_cmpk_lt_i32 s1, 0xffff (-1); v_alignbit_b32 v4, v2, v3, 8
        let prog: [&[u32]; 3] = [&[0xb700_7fff], &[0xb301_ffff], &[0xd1ce_0004, 0x0222_0702]];
        let w = run_as::<Cdna3>(&prog[..1], &mut [], &mut [0; 64], |w, _| w.s[0] = 0x7fff_ffff).unwrap();
        assert_eq!((w.s[0], w.scc), (0x8000_7ffe, true), "signed overflow sets SCC");
        let w = run_as::<Cdna3>(&prog[1..], &mut [], &mut [0; 64], |w, _| {
            w.s[1] = -2i32 as u32;
            for lane in 0..32 {
                w.v[2][lane] = 0x1122_3344;
                w.v[3][lane] = 0x5566_7700 | lane as u32;
            }
        })
        .unwrap();
        assert!(w.scc, "-2 < -1, signed");
        assert_eq!(w.v[4][5], 0x4455_6677);
    }

    /// gfx9's `v_cmpx_*` writes its mask to VCC (or SDST) and to EXEC, so the next
    /// instruction runs on the lanes that passed.
    #[test]
    fn cmpx_sets_the_mask_and_exec() {
        for prog in [
            &[0x7db8_0501u32][..],       // v_cmpx_gt_u32_e32 vcc, v1, v2
            &[0xd0dc_0004, 0x0002_0501], // v_cmpx_gt_u32_e64 s[4:5], v1, v2
        ] {
            let w = run_as::<Cdna3>(&[prog, &[0x7e06_0287]], &mut [], &mut [0; 64], |w, _| {
                for lane in 0..32 {
                    w.v[1][lane] = lane as u32;
                    w.v[2][lane] = 20;
                }
            })
            .unwrap();
            let passed = !((1u32 << 21) - 1); // lanes 21 to 31
            let mask = if prog.len() == 1 { crate::rdna3::VCC_LO } else { 4 };
            assert_eq!(w.s[mask], passed, "{prog:x?}");
            assert_eq!(w.s[crate::rdna3::EXEC_LO], passed);
            for lane in 0..32 {
                assert_eq!(w.v[3][lane], if lane > 20 { 7 } else { 0 }, "lane {lane}");
            }
        }
    }

    /// `(x % 40 * 7) % 40` as clang builds it for gfx942: remainders by a multiply by
    /// the reciprocal, 16-bit multiplies (whose results' high halves gfx9 clears), an
    /// SDWA multiply of a high word, a 16-bit subtract.
    #[test]
    fn sixteen_bit_arithmetic_and_sdwa_compute_a_remainder() {
        let prog: [&[u32]; 10] = [
            &[0xbe80_00ff, 0xcccc_cccd], // s_mov_b32 s0, 0xcccccccd
            &[0x7e50_02a8],              // v_mov_b32_e32 v40, 40
            &[0xd286_0000, 0x0000_0101], // v_mul_hi_u32 v0, v1, s0
            &[0x2000_0085],              // v_lshrrev_b32_e32 v0, 5, v0
            &[0xd285_0000, 0x0001_5100], // v_mul_lo_u32 v0, v0, 40
            &[0x6a00_0101],              // v_sub_u32_e32 v0, v1, v0: v0 = v1 % 40
            &[0x5202_0087],              // v_mul_lo_u16_e32 v1, 7, v0
            &[0x1004_02ff, 0x0000_0667], // v_mul_u32_u24_e32 v2, 0x667, v1
            &[0x5204_50f9, 0x0605_0602], // v_mul_lo_u16_sdwa v2, v2, v40 … src0_sel:WORD_1
            &[0x4e02_0501],              // v_sub_u16_e32 v1, v1, v2
        ];
        let w = run_as::<Cdna3>(&prog, &mut [], &mut [0; 64], |w, _| {
            for lane in 0..32 {
                w.v[1][lane] = (lane as u32).wrapping_mul(2_654_435_761);
            }
        })
        .unwrap();
        for lane in 0..32 {
            let j = (lane as u32).wrapping_mul(2_654_435_761) % 40;
            assert_eq!(w.v[1][lane], j * 7 % 40, "lane {lane}");
        }
    }
}
