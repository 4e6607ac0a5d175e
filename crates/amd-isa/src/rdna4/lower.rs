//! RDNA4 instructions the RDNA3 interpreter and disassembler take as they are: those
//! of the encodings whose fields lie alike in both generations (the scalar ALU and
//! program control, the vector ALU with its DPP forms, VOP3P, VOPD, LDS) and whose
//! opcode has an RDNA3 namesake with the same pseudocode (the generated `lowering`
//! table). Lowering rewrites the opcode field to RDNA3's number and decodes the
//! result as RDNA3; everything else stays RDNA4's own.

use super::decode::{Encoding, Inst};
use super::{fields as f4, lowering};
use crate::field::{Bits, Words};
use crate::rdna3::{self, fields as f3};

/// The fields that carry the opcode in each generation, and the table for them.
type Rewrite = (Bits, Bits, fn(u16) -> Option<u16>);

/// The opcode fields to rewrite for `enc` (VOPD has two), or `None` where the
/// encoding's fields differ between the generations.
fn rewrites(enc: Encoding) -> Option<&'static [Rewrite]> {
    Some(match enc {
        Encoding::Sop1 => &[(f4::sop1::OP, f3::sop1::OP, lowering::sop1)],
        Encoding::Sop2 => &[(f4::sop2::OP, f3::sop2::OP, lowering::sop2)],
        Encoding::Sopk => &[(f4::sopk::OP, f3::sopk::OP, lowering::sopk)],
        Encoding::Sopc => &[(f4::sopc::OP, f3::sopc::OP, lowering::sopc)],
        Encoding::Sopp => &[(f4::sopp::OP, f3::sopp::OP, lowering::sopp)],
        Encoding::Vop1 => &[(f4::vop1::OP, f3::vop1::OP, lowering::vop1)],
        Encoding::Vop2 => &[(f4::vop2::OP, f3::vop2::OP, lowering::vop2)],
        Encoding::Vopc => &[(f4::vopc::OP, f3::vopc::OP, lowering::vopc)],
        Encoding::Vop3 => &[(f4::vop3::OP, f3::vop3::OP, vop3)],
        Encoding::Vop3p => &[(f4::vop3p::OP, f3::vop3p::OP, lowering::vop3p)],
        Encoding::Vopd => &[
            (f4::vopd::OPX, f3::vopd::OPX, lowering::vopd),
            (f4::vopd::OPY, f3::vopd::OPY, lowering::vopd),
        ],
        Encoding::Ds => &[(f4::ds::OP, f3::ds::OP, lowering::ds)],
        _ => return None,
    })
}

/// VOP3's opcode space holds VOP3SD's opcodes too.
fn vop3(op: u16) -> Option<u16> {
    lowering::vop3(op).or_else(|| lowering::vop3sd(op))
}

impl Inst {
    /// The RDNA3 instruction this one runs and prints as, where it has one.
    pub fn to_rdna3(&self) -> Option<rdna3::Inst> {
        if let Some(op) = self.vop2_as_vop3() {
            return self.as_vop3(op);
        }
        if self.hardware_register() {
            return None;
        }
        let mut w: Words = self.words;
        for &(ours, theirs, table) in rewrites(self.enc)? {
            let op = table(ours.get(&self.words) as u16)?;
            ours.put(&mut w, 0);
            theirs.put(&mut w, u32::from(op));
        }
        let body = self.size as usize - usize::from(self.literal.is_some());
        let mut words = w[..body].to_vec();
        words.extend(self.literal);
        Self::gfx11(&words, self.size)
    }

    /// The instruction as text, as `llvm-objdump-19` prints it for gfx1201: where it
    /// lowers to RDNA3, RDNA3's text with RDNA4's opcode names; RDNA4's own forms
    /// that `disasm` prints; otherwise its opcode's name and encoding, without its
    /// operands (`… (Vbuffer; operands not printed)`).
    pub fn text(&self) -> String {
        if let Some(t) = super::disasm::gfx12_constant(self) {
            return t;
        }
        let Some(r) = self.to_rdna3().or_else(|| self.propagating_min_max()) else {
            return super::disasm::render(self).unwrap_or_else(|| {
                format!(
                    "{} ({:?}; operands not printed)",
                    self.name().unwrap_or("unknown opcode"),
                    self.enc
                )
            });
        };
        let mut text = r.llvm().to_string();
        let bare = |n: &str| {
            n.strip_suffix("_e32")
                .or_else(|| n.strip_suffix("_e64"))
                .unwrap_or(n)
                .to_string()
        };
        // RDNA4's name where RDNA4 renamed the opcode, or marked it `_e32`/`_e64` as
        // it gave an RDNA3 VOP3-only opcode a VOP2 form (LLVM leaves the mark off
        // where there is one form: `v_fmamk_f32`).
        let vop3 = r.enc == crate::rdna3::Encoding::Vop3;
        let rename = |text: &mut String, ours: Option<&str>, theirs: Option<&str>| {
            if let (Some(ours), Some(theirs)) = (ours, theirs)
                && (bare(ours) != bare(theirs) || vop3 && ours != theirs && bare(ours) == theirs)
            {
                *text = text.replacen(theirs, ours, 1);
            }
        };
        if self.enc == Encoding::Vopd {
            use super::opcodes::Vopd as V4;
            use crate::rdna3::opcodes::Vopd as V3;
            let half = |f4: Bits, f3: Bits| {
                let ours = V4::from_op(f4.get(&self.words) as u16).map(V4::name);
                (ours, V3::from_op(f3.get(&r.words()) as u16).map(V3::name))
            };
            for (ours, theirs) in [half(f4::vopd::OPX, f3::vopd::OPX), half(f4::vopd::OPY, f3::vopd::OPY)] {
                rename(&mut text, ours, theirs);
            }
        } else {
            rename(&mut text, self.name(), r.mnemonic());
        }
        text
    }

    /// RDNA4's IEEE 754-2019 minimum and maximum (`v_minimum_f32`, `v_maximum3_f16`,
    /// `v_minimummaximum_f32`, `v_pk_minimum_f16`, …) as the RDNA3 minimum or maximum
    /// of the same shape (`v_min_f32_e64`, `v_max3_f16`, `v_minmax_f32`,
    /// `v_pk_min_f16`): the same operands and modifiers, run under the NaN rule that
    /// propagates NaN (`Nans::Propagate`).
    pub(crate) fn propagating_min_max(&self) -> Option<rdna3::Inst> {
        use super::opcodes::op::{vop3 as v4, vop3p as p4};
        use rdna3::opcodes::op::{vop3 as v3, vop3p as p3};
        let (field4, field3) = match self.enc {
            Encoding::Vop3 => (f4::vop3::OP, f3::vop3::OP),
            Encoding::Vop3p => (f4::vop3p::OP, f3::vop3p::OP),
            _ => return None,
        };
        let op = match (self.enc, self.op) {
            (Encoding::Vop3, v4::V_MINIMUM_F32) => v3::V_MIN_F32_E64,
            (Encoding::Vop3, v4::V_MAXIMUM_F32) => v3::V_MAX_F32_E64,
            (Encoding::Vop3, v4::V_MINIMUM_F16) => v3::V_MIN_F16_E64,
            (Encoding::Vop3, v4::V_MAXIMUM_F16) => v3::V_MAX_F16_E64,
            (Encoding::Vop3, v4::V_MINIMUM_F64) => v3::V_MIN_F64,
            (Encoding::Vop3, v4::V_MAXIMUM_F64) => v3::V_MAX_F64,
            (Encoding::Vop3, v4::V_MINIMUM3_F32) => v3::V_MIN3_F32,
            (Encoding::Vop3, v4::V_MAXIMUM3_F32) => v3::V_MAX3_F32,
            (Encoding::Vop3, v4::V_MINIMUM3_F16) => v3::V_MIN3_F16,
            (Encoding::Vop3, v4::V_MAXIMUM3_F16) => v3::V_MAX3_F16,
            (Encoding::Vop3, v4::V_MINIMUMMAXIMUM_F32) => v3::V_MINMAX_F32,
            (Encoding::Vop3, v4::V_MAXIMUMMINIMUM_F32) => v3::V_MAXMIN_F32,
            (Encoding::Vop3, v4::V_MINIMUMMAXIMUM_F16) => v3::V_MINMAX_F16,
            (Encoding::Vop3, v4::V_MAXIMUMMINIMUM_F16) => v3::V_MAXMIN_F16,
            (Encoding::Vop3p, p4::V_PK_MINIMUM_F16) => p3::V_PK_MIN_F16,
            (Encoding::Vop3p, p4::V_PK_MAXIMUM_F16) => p3::V_PK_MAX_F16,
            _ => return None,
        };
        let mut w: Words = self.words;
        field4.put(&mut w, 0);
        field3.put(&mut w, u32::from(op));
        let body = self.size as usize - usize::from(self.literal.is_some());
        let mut words = w[..body].to_vec();
        words.extend(self.literal);
        Self::gfx11(&words, self.size)
    }

    /// `s_getreg_b32`, `s_setreg_b32` or `s_setreg_imm32_b32`: the same opcodes and
    /// pseudocode as RDNA3's, but gfx12 numbers its hardware registers its own way
    /// (`docs/reference/rdna4.md` 1.6), so they run and print as RDNA4's own.
    fn hardware_register(&self) -> bool {
        use super::opcodes::op::sopk::{S_GETREG_B32, S_SETREG_B32, S_SETREG_IMM32_B32};
        self.enc == Encoding::Sopk && matches!(self.op, S_GETREG_B32 | S_SETREG_B32 | S_SETREG_IMM32_B32)
    }

    /// RDNA3's VOP3 number of a VOP2 opcode that RDNA3 has in VOP3 only.
    fn vop2_as_vop3(&self) -> Option<u16> {
        let op = (self.enc == Encoding::Vop2 && self.dpp.is_none()).then_some(self.op)?;
        lowering::vop2(op).is_none().then(|| lowering::vop2_as_vop3(op))?
    }

    /// This VOP2 instruction in RDNA3's VOP3 encoding, as opcode `op` (VOP2's VSRC1
    /// is VOP3's SRC1, a VGPR).
    fn as_vop3(&self, op: u16) -> Option<rdna3::Inst> {
        let mut w: Words = [0; 3];
        f3::vop3::ENCODING.bits.put(&mut w, f3::vop3::ENCODING.value);
        f3::vop3::OP.put(&mut w, u32::from(op));
        f3::vop3::VDST.0.put(&mut w, f4::vop2::VDST.index(&self.words) as u32);
        f3::vop3::SRC0
            .0
            .put(&mut w, u32::from(f4::vop2::SRC0.operand(&self.words)));
        f3::vop3::SRC1
            .0
            .put(&mut w, u32::from(f4::vop2::VSRC1.operand(&self.words)));
        let mut words = w[..f3::vop3::DWORDS].to_vec();
        words.extend(self.literal);
        rdna3::Inst::decode(&words)
            .ok()
            .filter(|i| i.size as usize == words.len())
    }

    /// `words` decoded as RDNA3, if that is `size` dwords long and gfx11 has it.
    fn gfx11(words: &[u32], size: u8) -> Option<rdna3::Inst> {
        // Only what gfx11 has: RDNA 3.5's scalar float ALU, which the RDNA3 tables
        // list, is no gfx1100 instruction (LLVM knows none of it for gfx1100). Vector
        // opcodes LLVM 19 does not assemble (`v_swap_b16`, `v_mov_b16_e64`) are
        // gfx1100's all the same.
        use rdna3::Encoding::{Sop1, Sop2, Sopc};
        rdna3::Inst::decode(words)
            .ok()
            .filter(|i| i.size == size && (!matches!(i.enc, Sop1 | Sop2 | Sopc) || i.mnemonic().is_some()))
    }
}

/// Where a scalar instruction run as a VALU one ([`Inst::scalar_as_valu`]) puts lane
/// 0's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarOut {
    /// The whole dword, into the SGPR.
    B32,
    /// An f16 result: the low half, the high half zeroed (as `v_s_rcp_f16`'s
    /// pseudocode writes it).
    F16,
    /// A compare: lane 0's bit, into SCC.
    Scc,
}

/// A scalar instruction run as the VALU instruction of the same operation on lane 0
/// (its scalar operands are the same in every lane).
#[derive(Debug, Clone)]
pub(crate) struct ScalarValu {
    /// The RDNA3 VALU instruction: VOP3, writing v0 (compares: VCC).
    pub(crate) inst: rdna3::Inst,
    /// The SGPR the result goes to (not for compares).
    pub(crate) sdst: usize,
    pub(crate) out: ScalarOut,
    /// Whether the SGPR is the accumulator too (`s_fmac_f16`): v0 starts as it.
    pub(crate) acc: bool,
    /// The NaN rule while it runs, where it is not the wave's (`s_minimum_f32`).
    pub(crate) rule: Option<crate::float::minmax::Nans>,
}

impl Inst {
    /// RDNA4's scalar instructions that are the VALU's operations on scalar operands,
    /// as that VALU instruction ([`ScalarValu`]): the transcendentals with a scalar
    /// result (`v_s_exp_f32 s5, s1` as `v_exp_f32_e64`), the scalar float ALU's f16
    /// forms (`s_add_f16` as `v_add_f16_e64`, `s_cmp_lt_f16` as `v_cmp_lt_f16_e64`, the
    /// conversions and roundings), and `s_minimum_f32`/`s_maximum_f32` and their f16
    /// forms (the VALU's minimum under the NaN-propagating rule). Rounding, denormals
    /// and NaNs are then the VALU's, which the ISA gives the SALU too.
    pub(crate) fn scalar_as_valu(&self) -> Option<ScalarValu> {
        use super::opcodes::op::{sop1 as s1, sop2 as s2, sopc as c4, vop3 as v4};
        use crate::float::minmax::Nans::Propagate;
        use ScalarOut as Out;
        use rdna3::opcodes::op::vop3 as v3;
        let (op, out, rule) = match (self.enc, self.op) {
            (Encoding::Vop3, v4::V_S_EXP_F32) => (v3::V_EXP_F32_E64, Out::B32, None),
            (Encoding::Vop3, v4::V_S_EXP_F16) => (v3::V_EXP_F16_E64, Out::F16, None),
            (Encoding::Vop3, v4::V_S_LOG_F32) => (v3::V_LOG_F32_E64, Out::B32, None),
            (Encoding::Vop3, v4::V_S_LOG_F16) => (v3::V_LOG_F16_E64, Out::F16, None),
            (Encoding::Vop3, v4::V_S_RCP_F32) => (v3::V_RCP_F32_E64, Out::B32, None),
            (Encoding::Vop3, v4::V_S_RCP_F16) => (v3::V_RCP_F16_E64, Out::F16, None),
            (Encoding::Vop3, v4::V_S_RSQ_F32) => (v3::V_RSQ_F32_E64, Out::B32, None),
            (Encoding::Vop3, v4::V_S_RSQ_F16) => (v3::V_RSQ_F16_E64, Out::F16, None),
            (Encoding::Vop3, v4::V_S_SQRT_F32) => (v3::V_SQRT_F32_E64, Out::B32, None),
            (Encoding::Vop3, v4::V_S_SQRT_F16) => (v3::V_SQRT_F16_E64, Out::F16, None),
            (Encoding::Sop1, s1::S_CVT_F16_F32) => (v3::V_CVT_F16_F32_E64, Out::F16, None),
            (Encoding::Sop1, s1::S_CVT_F32_F16 | s1::S_CVT_HI_F32_F16) => (v3::V_CVT_F32_F16_E64, Out::B32, None),
            (Encoding::Sop1, s1::S_CEIL_F16) => (v3::V_CEIL_F16_E64, Out::F16, None),
            (Encoding::Sop1, s1::S_FLOOR_F16) => (v3::V_FLOOR_F16_E64, Out::F16, None),
            (Encoding::Sop1, s1::S_TRUNC_F16) => (v3::V_TRUNC_F16_E64, Out::F16, None),
            (Encoding::Sop1, s1::S_RNDNE_F16) => (v3::V_RNDNE_F16_E64, Out::F16, None),
            (Encoding::Sop2, s2::S_CVT_PK_RTZ_F16_F32) => (v3::V_CVT_PK_RTZ_F16_F32_E64, Out::B32, None),
            (Encoding::Sop2, s2::S_ADD_F16) => (v3::V_ADD_F16_E64, Out::F16, None),
            (Encoding::Sop2, s2::S_SUB_F16) => (v3::V_SUB_F16_E64, Out::F16, None),
            (Encoding::Sop2, s2::S_MUL_F16) => (v3::V_MUL_F16_E64, Out::F16, None),
            (Encoding::Sop2, s2::S_FMAC_F16) => (v3::V_FMAC_F16_E64, Out::F16, None),
            (Encoding::Sop2, s2::S_MIN_NUM_F16) => (v3::V_MIN_F16_E64, Out::F16, None),
            (Encoding::Sop2, s2::S_MAX_NUM_F16) => (v3::V_MAX_F16_E64, Out::F16, None),
            (Encoding::Sop2, s2::S_MINIMUM_F32) => (v3::V_MIN_F32_E64, Out::B32, Some(Propagate)),
            (Encoding::Sop2, s2::S_MAXIMUM_F32) => (v3::V_MAX_F32_E64, Out::B32, Some(Propagate)),
            (Encoding::Sop2, s2::S_MINIMUM_F16) => (v3::V_MIN_F16_E64, Out::F16, Some(Propagate)),
            (Encoding::Sop2, s2::S_MAXIMUM_F16) => (v3::V_MAX_F16_E64, Out::F16, Some(Propagate)),
            (Encoding::Sopc, c4::S_CMP_LT_F16) => (v3::V_CMP_LT_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_EQ_F16) => (v3::V_CMP_EQ_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_LE_F16) => (v3::V_CMP_LE_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_GT_F16) => (v3::V_CMP_GT_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_LG_F16) => (v3::V_CMP_LG_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_GE_F16) => (v3::V_CMP_GE_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_O_F16) => (v3::V_CMP_O_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_U_F16) => (v3::V_CMP_U_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_NGE_F16) => (v3::V_CMP_NGE_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_NLG_F16) => (v3::V_CMP_NLG_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_NGT_F16) => (v3::V_CMP_NGT_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_NLE_F16) => (v3::V_CMP_NLE_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_NEQ_F16) => (v3::V_CMP_NEQ_F16_E64, Out::Scc, None),
            (Encoding::Sopc, c4::S_CMP_NLT_F16) => (v3::V_CMP_NLT_F16_E64, Out::Scc, None),
            _ => return None,
        };
        let ws = &self.words;
        let mut w: Words = [0; 3];
        f3::vop3::ENCODING.bits.put(&mut w, f3::vop3::ENCODING.value);
        f3::vop3::OP.put(&mut w, u32::from(op));
        let (sdst, srcs): (usize, [u16; 2]) = match self.enc {
            Encoding::Vop3 => {
                // The VOP3 word as it is (modifiers included), writing v0.
                w = *ws;
                f4::vop3::OP.put(&mut w, 0);
                f3::vop3::OP.put(&mut w, u32::from(op));
                f3::vop3::VDST.0.put(&mut w, 0);
                (f4::vop3::VDST.0.get(ws) as usize, [u16::MAX; 2])
            }
            Encoding::Sop1 => (f4::sop1::SDST.index(ws), [f4::sop1::SSRC0.operand(ws), u16::MAX]),
            Encoding::Sop2 => (
                f4::sop2::SDST.index(ws),
                [f4::sop2::SSRC0.operand(ws), f4::sop2::SSRC1.operand(ws)],
            ),
            // The compare's VOP3 destination: VCC, which the run keeps.
            _ => (
                rdna3::VCC_LO,
                [f4::sopc::SSRC0.operand(ws), f4::sopc::SSRC1.operand(ws)],
            ),
        };
        if self.enc != Encoding::Vop3 {
            let vdst = if out == Out::Scc { rdna3::VCC_LO as u32 } else { 0 };
            f3::vop3::VDST.0.put(&mut w, vdst);
            for (field, s) in [f3::vop3::SRC0, f3::vop3::SRC1].into_iter().zip(srcs) {
                if s != u16::MAX {
                    field.0.put(&mut w, u32::from(s));
                }
            }
            // s_cvt_hi_f32_f16 reads the high half: op_sel for source 0.
            if self.enc == Encoding::Sop1 && self.op == s1::S_CVT_HI_F32_F16 {
                f3::vop3::OPSEL.put(&mut w, 1);
            }
        }
        let mut words = w[..f3::vop3::DWORDS].to_vec();
        words.extend(self.literal);
        let size = words.len() as u8;
        let acc = self.enc == Encoding::Sop2 && self.op == s2::S_FMAC_F16;
        Some(ScalarValu {
            inst: Self::gfx11(&words, size)?,
            sdst,
            out,
            acc,
            rule,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lowered encodings lie alike in both generations but for the opcode field:
    /// the same ENCODING, and the fields the RDNA3 interpreter reads at the same bits.
    #[test]
    fn lowered_encodings_lie_alike() {
        assert_eq!(f4::sop1::ENCODING, f3::sop1::ENCODING);
        assert_eq!(f4::sop2::ENCODING, f3::sop2::ENCODING);
        assert_eq!(f4::sopk::ENCODING, f3::sopk::ENCODING);
        assert_eq!(f4::sopc::ENCODING, f3::sopc::ENCODING);
        assert_eq!(f4::sopp::ENCODING, f3::sopp::ENCODING);
        assert_eq!(f4::vop1::ENCODING, f3::vop1::ENCODING);
        assert_eq!(f4::vop2::ENCODING, f3::vop2::ENCODING);
        assert_eq!(f4::vopc::ENCODING, f3::vopc::ENCODING);
        assert_eq!(f4::vop3::ENCODING, f3::vop3::ENCODING);
        assert_eq!(f4::vop3p::ENCODING, f3::vop3p::ENCODING);
        assert_eq!(f4::vopd::ENCODING, f3::vopd::ENCODING);
        assert_eq!(f4::ds::ENCODING, f3::ds::ENCODING);
        assert_eq!((f4::sop1::SDST, f4::sop1::SSRC0), (f3::sop1::SDST, f3::sop1::SSRC0));
        assert_eq!(
            (f4::sop2::SDST, f4::sop2::SSRC0, f4::sop2::SSRC1),
            (f3::sop2::SDST, f3::sop2::SSRC0, f3::sop2::SSRC1)
        );
        assert_eq!((f4::sopk::SDST, f4::sopk::SIMM16), (f3::sopk::SDST, f3::sopk::SIMM16));
        assert_eq!((f4::sopc::SSRC0, f4::sopc::SSRC1), (f3::sopc::SSRC0, f3::sopc::SSRC1));
        assert_eq!(f4::sopp::SIMM16, f3::sopp::SIMM16);
        assert_eq!((f4::vop1::VDST, f4::vop1::SRC0), (f3::vop1::VDST, f3::vop1::SRC0));
        assert_eq!(
            (f4::vop2::VDST, f4::vop2::SRC0, f4::vop2::VSRC1),
            (f3::vop2::VDST, f3::vop2::SRC0, f3::vop2::VSRC1)
        );
        assert_eq!((f4::vopc::SRC0, f4::vopc::VSRC1), (f3::vopc::SRC0, f3::vopc::VSRC1));
        assert_eq!(
            (f4::vop3::VDST, f4::vop3::SRC0, f4::vop3::SRC1, f4::vop3::SRC2),
            (f3::vop3::VDST, f3::vop3::SRC0, f3::vop3::SRC1, f3::vop3::SRC2)
        );
        assert_eq!(
            (
                f4::vop3::OMOD,
                f4::vop3::NEG,
                f4::vop3::ABS,
                f4::vop3::CLMP,
                f4::vop3::OPSEL
            ),
            (
                f3::vop3::OMOD,
                f3::vop3::NEG,
                f3::vop3::ABS,
                f3::vop3::CLMP,
                f3::vop3::OPSEL
            )
        );
        assert_eq!(f4::vop3sd::SDST, f3::vop3sd::SDST);
        assert_eq!(
            (
                f4::vop3p::VDST,
                f4::vop3p::SRC0,
                f4::vop3p::SRC1,
                f4::vop3p::SRC2,
                f4::vop3p::NEG
            ),
            (
                f3::vop3p::VDST,
                f3::vop3p::SRC0,
                f3::vop3p::SRC1,
                f3::vop3p::SRC2,
                f3::vop3p::NEG
            )
        );
        assert_eq!(
            (
                f4::vop3p::NEG_HI,
                f4::vop3p::CLMP,
                f4::vop3p::OPSEL,
                f4::vop3p::OPSEL_HI,
                f4::vop3p::OPSEL_HI2
            ),
            (
                f3::vop3p::NEG_HI,
                f3::vop3p::CLMP,
                f3::vop3p::OPSEL,
                f3::vop3p::OPSEL_HI,
                f3::vop3p::OPSEL_HI2
            )
        );
        assert_eq!(
            (f4::vopd::VDSTX, f4::vopd::VDSTY, f4::vopd::SRCX0, f4::vopd::SRCY0),
            (f3::vopd::VDSTX, f3::vopd::VDSTY, f3::vopd::SRCX0, f3::vopd::SRCY0)
        );
        assert_eq!(
            (f4::vopd::VSRCX1, f4::vopd::VSRCY1),
            (f3::vopd::VSRCX1, f3::vopd::VSRCY1)
        );
        assert_eq!(
            (
                f4::ds::VDST,
                f4::ds::ADDR,
                f4::ds::DATA0,
                f4::ds::DATA1,
                f4::ds::OFFSET0,
                f4::ds::OFFSET1
            ),
            (
                f3::ds::VDST,
                f3::ds::ADDR,
                f3::ds::DATA0,
                f3::ds::DATA1,
                f3::ds::OFFSET0,
                f3::ds::OFFSET1
            )
        );
        // The DPP dwords too.
        assert_eq!(
            (
                f4::vop2_dpp16::DPP,
                f4::vop2_dpp16::ROW_MASK,
                f4::vop2_dpp16::BANK_MASK,
                f4::vop2_dpp16::FI
            ),
            (
                f3::vop2_dpp16::DPP,
                f3::vop2_dpp16::ROW_MASK,
                f3::vop2_dpp16::BANK_MASK,
                f3::vop2_dpp16::FI
            )
        );
        assert_eq!(f4::vop2_dpp8::LANE_SEL_7, f3::vop2_dpp8::LANE_SEL_7);
    }

    #[test]
    fn lowers_by_the_table_and_keeps_the_rest() {
        // v_add_f32_e32 v0, v1, v2 (VOP2 3 in both).
        let add = Inst::decode(&[0x0600_0501]).unwrap();
        assert_eq!(
            add.to_rdna3().map(|i| i.llvm().to_string()).as_deref(),
            Some("v_add_f32_e32 v0, v1, v2")
        );
        // s_wait_loadcnt 0x0: RDNA4's own.
        assert_eq!(Inst::decode(&[0xbfc0_0000]).unwrap().to_rdna3(), None);
        // global_load_b32: another layout.
        assert_eq!(Inst::decode(&[0xee05_0002, 0, 0xffff_f001]).unwrap().to_rdna3(), None);
        // s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s0 and the same of STATUS: gfx12's
        // hardware registers are RDNA4's own.
        assert_eq!(Inst::decode(&[0xb900_1801]).unwrap().to_rdna3(), None);
        assert_eq!(Inst::decode(&[0xb900_1802]).unwrap().to_rdna3(), None);
        // v_lshlrev_b64_e32 v[0:1], 2, v[0:1]: VOP2 in RDNA4, VOP3 in RDNA3.
        let shift = Inst::decode(&[0x3e00_0082]).unwrap().to_rdna3().unwrap();
        assert_eq!(shift.llvm().to_string(), "v_lshlrev_b64 v[0:1], 2, v[0:1]");
    }
}
