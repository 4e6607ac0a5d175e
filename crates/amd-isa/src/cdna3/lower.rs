//! CDNA3 instructions the RDNA3 interpreter runs as they are: those whose opcode has
//! an RDNA3 namesake (or renamed twin) with the same pseudocode and operand sizes (the
//! generated `lowering` table), re-encoded field by field in RDNA3's encoding of the
//! same shape. The scalar ALU, program control and the VOP1, VOP2 and VOPC encodings
//! lie alike in both generations; VOP3, VOP3P and LDS differ in their fixed bits and
//! the opcode's place, and the scalar operand numbers differ in two places (gfx9's M0
//! is 124 and its NULL 125, gfx11's the other way round; gfx9's FLAT_SCRATCH and
//! XNACK_MASK, 102 to 105, are not registers gfx11 has). What does not lower — the
//! SDWA and DPP forms, AccVGPRs, anything naming FLAT_SCRATCH — stays CDNA3's own.

use super::decode::{Encoding, Inst};
use super::fields as fc;
use super::lowering;
use super::operands::{Field, Kind, operands};
use crate::field::{Bits, Fixed, Words};
use crate::rdna3::{self, fields as f3};

/// A gfx9 scalar operand number (SGPR, special register, constant or, from 256, VGPR)
/// as gfx11 numbers it; `None` for the registers gfx11 does not have.
pub(super) fn scalar(n: u32) -> Option<u32> {
    match n {
        102..=105 => None,
        124 => Some(125),
        125 => Some(124),
        n => Some(n),
    }
}

/// A re-encoding: RDNA3's fixed fields, then field pairs (CDNA3's, RDNA3's, whether
/// the value is a scalar operand number to renumber).
struct Shape {
    fixed: &'static [Fixed],
    dwords: usize,
    fields: &'static [(Bits, Bits, bool)],
}

const SOP1: Shape = Shape {
    fixed: &[f3::sop1::ENCODING],
    dwords: 1,
    fields: &[
        (fc::sop1::SDST.0, f3::sop1::SDST.0, true),
        (fc::sop1::SSRC0.0, f3::sop1::SSRC0.0, true),
    ],
};
const SOP2: Shape = Shape {
    fixed: &[f3::sop2::ENCODING],
    dwords: 1,
    fields: &[
        (fc::sop2::SDST.0, f3::sop2::SDST.0, true),
        (fc::sop2::SSRC0.0, f3::sop2::SSRC0.0, true),
        (fc::sop2::SSRC1.0, f3::sop2::SSRC1.0, true),
    ],
};
const SOPC: Shape = Shape {
    fixed: &[f3::sopc::ENCODING],
    dwords: 1,
    fields: &[
        (fc::sopc::SSRC0.0, f3::sopc::SSRC0.0, true),
        (fc::sopc::SSRC1.0, f3::sopc::SSRC1.0, true),
    ],
};
const SOPK: Shape = Shape {
    fixed: &[f3::sopk::ENCODING],
    dwords: 1,
    fields: &[
        (fc::sopk::SDST.0, f3::sopk::SDST.0, true),
        (fc::sopk::SIMM16, f3::sopk::SIMM16, false),
    ],
};
const SOPP: Shape = Shape {
    fixed: &[f3::sopp::ENCODING],
    dwords: 1,
    fields: &[(fc::sopp::SIMM16, f3::sopp::SIMM16, false)],
};
const VOP1: Shape = Shape {
    fixed: &[f3::vop1::ENCODING],
    dwords: 1,
    fields: &[
        (fc::vop1::VDST.0, f3::vop1::VDST.0, false),
        (fc::vop1::SRC0.0, f3::vop1::SRC0.0, true),
    ],
};
const VOP2: Shape = Shape {
    fixed: &[f3::vop2::ENCODING],
    dwords: 1,
    fields: &[
        (fc::vop2::VDST.0, f3::vop2::VDST.0, false),
        (fc::vop2::SRC0.0, f3::vop2::SRC0.0, true),
        (fc::vop2::VSRC1.0, f3::vop2::VSRC1.0, false),
    ],
};
const VOPC: Shape = Shape {
    fixed: &[f3::vopc::ENCODING],
    dwords: 1,
    fields: &[
        (fc::vopc::SRC0.0, f3::vopc::SRC0.0, true),
        (fc::vopc::VSRC1.0, f3::vopc::VSRC1.0, false),
    ],
};
/// VOP3's fields but its destination (a VGPR, or a scalar mask by the opcode).
const VOP3: Shape = Shape {
    fixed: &[f3::vop3::ENCODING],
    dwords: 2,
    fields: &[
        (fc::vop3::SRC0.0, f3::vop3::SRC0.0, true),
        (fc::vop3::SRC1.0, f3::vop3::SRC1.0, true),
        (fc::vop3::SRC2.0, f3::vop3::SRC2.0, true),
        (fc::vop3::ABS, f3::vop3::ABS, false),
        (fc::vop3::NEG, f3::vop3::NEG, false),
        (fc::vop3::OPSEL, f3::vop3::OPSEL, false),
        (fc::vop3::CLMP, f3::vop3::CLMP, false),
        (fc::vop3::OMOD, f3::vop3::OMOD, false),
    ],
};
/// VOP3's carry-out forms: a VGPR and a scalar mask destination, no ABS or OPSEL.
const VOP3SD: Shape = Shape {
    fixed: &[f3::vop3sd::ENCODING],
    dwords: 2,
    fields: &[
        (fc::vop3sd::VDST.0, f3::vop3sd::VDST.0, false),
        (fc::vop3sd::SDST.0, f3::vop3sd::SDST.0, true),
        (fc::vop3sd::SRC0.0, f3::vop3sd::SRC0.0, true),
        (fc::vop3sd::SRC1.0, f3::vop3sd::SRC1.0, true),
        (fc::vop3sd::SRC2.0, f3::vop3sd::SRC2.0, true),
        (fc::vop3sd::NEG, f3::vop3sd::NEG, false),
        (fc::vop3sd::CLMP, f3::vop3sd::CLMP, false),
        (fc::vop3sd::OMOD, f3::vop3sd::OMOD, false),
    ],
};
const VOP3P: Shape = Shape {
    fixed: &[f3::vop3p::ENCODING],
    dwords: 2,
    fields: &[
        (fc::vop3p::VDST.0, f3::vop3p::VDST.0, false),
        (fc::vop3p::SRC0.0, f3::vop3p::SRC0.0, true),
        (fc::vop3p::SRC1.0, f3::vop3p::SRC1.0, true),
        (fc::vop3p::SRC2.0, f3::vop3p::SRC2.0, true),
        (fc::vop3p::NEG, f3::vop3p::NEG, false),
        (fc::vop3p::NEG_HI, f3::vop3p::NEG_HI, false),
        (fc::vop3p::OPSEL, f3::vop3p::OPSEL, false),
        (fc::vop3p::OPSEL_HI, f3::vop3p::OPSEL_HI, false),
        (fc::vop3p::OPSEL_HI2, f3::vop3p::OPSEL_HI2, false),
        (fc::vop3p::CLMP, f3::vop3p::CLMP, false),
    ],
};
const DS: Shape = Shape {
    fixed: &[f3::ds::ENCODING],
    dwords: 2,
    fields: &[
        (fc::ds::OFFSET0, f3::ds::OFFSET0, false),
        (fc::ds::OFFSET1, f3::ds::OFFSET1, false),
        (fc::ds::ADDR.0, f3::ds::ADDR.0, false),
        (fc::ds::DATA0.0, f3::ds::DATA0.0, false),
        (fc::ds::DATA1.0, f3::ds::DATA1.0, false),
        (fc::ds::VDST.0, f3::ds::VDST.0, false),
    ],
};

impl Inst {
    /// The RDNA3 instruction this one runs as, where it has one.
    pub fn to_rdna3(&self) -> Option<rdna3::Inst> {
        if self.ext.is_some() {
            return None;
        }
        let w = &self.words;
        if let Some(r) = self.fmac_f64_as_fma() {
            return Some(r);
        }
        if let Some(r) = self.pkaccum_as_cvt_pk() {
            return Some(r);
        }
        if let Some(r) = self.dot2c_as_dot2() {
            return Some(r);
        }
        if let Some(r) = self.mode_access() {
            return Some(r);
        }
        if let Some(r) = self.subrev_u16_as_sub() {
            return Some(r);
        }
        if self.enc == Encoding::Vop2 && lowering::vop2(self.op).is_none() {
            return self.vop2_as_vop3();
        }
        let (shape, op, op3): (&Shape, Option<u16>, Bits) = match self.enc {
            Encoding::Sop1 => (&SOP1, lowering::sop1(self.op), f3::sop1::OP),
            Encoding::Sop2 => (&SOP2, lowering::sop2(self.op), f3::sop2::OP),
            Encoding::Sopc => (&SOPC, lowering::sopc(self.op), f3::sopc::OP),
            Encoding::Sopk => (&SOPK, lowering::sopk(self.op), f3::sopk::OP),
            Encoding::Sopp => (&SOPP, lowering::sopp(self.op), f3::sopp::OP),
            Encoding::Vop1 => (&VOP1, lowering::vop1(self.op), f3::vop1::OP),
            Encoding::Vop2 => (&VOP2, lowering::vop2(self.op), f3::vop2::OP),
            Encoding::Vopc => (&VOPC, lowering::vopc(self.op), f3::vopc::OP),
            Encoding::Vop3 => match lowering::vop3sd(self.op) {
                Some(op) => (&VOP3SD, Some(op), f3::vop3sd::OP),
                None => (&VOP3, lowering::vop3(self.op), f3::vop3::OP),
            },
            Encoding::Vop3p => (&VOP3P, lowering::vop3p(self.op), f3::vop3p::OP),
            // LDS through AccVGPRs, or GDS, is CDNA3's own.
            Encoding::Ds if fc::ds::ACC.get(w) == 0 && fc::ds::GDS.get(w) == 0 => {
                (&DS, lowering::ds(self.op), f3::ds::OP)
            }
            _ => return None,
        };
        let mut r: Words = [0; 3];
        for f in shape.fixed {
            f.bits.put(&mut r, f.value);
        }
        op3.put(&mut r, u32::from(op?));
        for &(ours, theirs, is_scalar) in shape.fields {
            let v = ours.get(w);
            // A VOP3 source of 255 names no literal on gfx9: no instruction to lower.
            if is_scalar && v == 255 && matches!(self.enc, Encoding::Vop3 | Encoding::Vop3p) {
                return None;
            }
            theirs.put(&mut r, if is_scalar { scalar(v)? } else { v });
        }
        // gfx9's LDS compare-and-swap takes the comparand first (DATA0) and the new
        // value second; gfx11's `ds_cmpstore_*` the other way round.
        if self.enc == Encoding::Ds
            && super::opcodes::Ds::from_op(self.op).is_some_and(|o| o.name().starts_with("ds_cmpst"))
        {
            f3::ds::DATA0.0.put(&mut r, fc::ds::DATA1.0.get(w));
            f3::ds::DATA1.0.put(&mut r, fc::ds::DATA0.0.get(w));
        }
        // VOP3's destination (not in its shape, as VOP3SD's is): a VGPR, or the scalar
        // mask a compare (or a lane read) writes.
        if self.enc == Encoding::Vop3 && lowering::vop3sd(self.op).is_none() {
            let d = fc::vop3::VDST.0.get(w);
            let is_scalar = operands(self.enc, self.op)
                .iter()
                .any(|o| o.field == Field::Vdst && matches!(o.kind, Kind::Sreg | Kind::Sdst | Kind::SregNovcc));
            f3::vop3::VDST.0.put(&mut r, if is_scalar { scalar(d)? } else { d });
        }
        lowered(&r, shape.dwords, self.literal)
    }
}

/// The RDNA3 instruction of the first `dwords` of `r` and `literal`, where RDNA3 reads
/// exactly those dwords as one instruction.
pub(super) fn lowered(r: &Words, dwords: usize, literal: Option<u32>) -> Option<rdna3::Inst> {
    let mut words = r.get(..dwords)?.to_vec();
    words.extend(literal);
    let inst = rdna3::Inst::decode(&words).ok()?;
    (usize::from(inst.size) == words.len()).then_some(inst)
}

impl Inst {
    /// `s_setreg_b32` and `s_setreg_imm32_b32` of the MODE register (hwreg 1) as
    /// RDNA3's: gfx9's MODE keeps gfx11's layout in the bits a kernel sets (FP_ROUND
    /// 3:0, FP_DENORM 7:4, DX10_CLAMP, IEEE). Other hardware registers differ between
    /// the generations (their ids and fields): not lowered. (`s_getreg_b32` is in the
    /// generated table.)
    fn mode_access(&self) -> Option<rdna3::Inst> {
        use super::opcodes::op::sopk;
        use rdna3::opcodes::op::sopk as sopk3;
        const HW_REG_MODE: u32 = 1;
        if self.enc != Encoding::Sopk {
            return None;
        }
        let op3 = match self.op {
            sopk::S_SETREG_B32 => sopk3::S_SETREG_B32,
            sopk::S_SETREG_IMM32_B32 => sopk3::S_SETREG_IMM32_B32,
            _ => return None,
        };
        let w = &self.words;
        let simm16 = fc::sopk::SIMM16.get(w);
        if simm16 & 0x3f != HW_REG_MODE {
            return None;
        }
        let mut r: Words = [0; 3];
        f3::sopk::ENCODING.bits.put(&mut r, f3::sopk::ENCODING.value);
        f3::sopk::OP.put(&mut r, u32::from(op3));
        f3::sopk::SIMM16.put(&mut r, simm16);
        if self.op != sopk::S_SETREG_IMM32_B32 {
            f3::sopk::SDST.0.put(&mut r, scalar(fc::sopk::SDST.0.get(w))?);
        }
        lowered(&r, 1, self.literal)
    }

    /// `v_fmac_f64` (`D = fma(S0, S1, D)`, which gfx11 does not have) as RDNA3's
    /// `v_fma_f64` with the destination as its third source.
    fn fmac_f64_as_fma(&self) -> Option<rdna3::Inst> {
        use super::opcodes::op::{vop2, vop3};
        let fma = rdna3::opcodes::op::vop3::V_FMA_F64;
        match self.enc {
            Encoding::Vop2 if self.op == vop2::V_FMAC_F64_E32 && self.ext.is_none() => {
                let w = &self.words;
                let mut r: Words = [0; 3];
                f3::vop3::ENCODING.bits.put(&mut r, f3::vop3::ENCODING.value);
                f3::vop3::OP.put(&mut r, u32::from(fma));
                f3::vop3::SRC0.0.put(&mut r, scalar(fc::vop2::SRC0.0.get(w))?);
                f3::vop3::SRC1.0.put(&mut r, 256 + fc::vop2::VSRC1.0.get(w));
                let vdst = fc::vop2::VDST.0.get(w);
                f3::vop3::VDST.0.put(&mut r, vdst);
                f3::vop3::SRC2.0.put(&mut r, 256 + vdst);
                lowered(&r, 2, self.literal)
            }
            Encoding::Vop3 if self.op == vop3::V_FMAC_F64_E64 => self.vop3_with_d_as_s2(fma),
            _ => None,
        }
    }

    /// `v_cvt_pkaccum_u8_f32` (byte `S1[1:0]` of D replaced by `f32_to_u8(S0)`, which
    /// gfx11 does not have) as RDNA3's `v_cvt_pk_u8_f32` with the destination as its
    /// third source (the same pseudocode with S2 for D).
    fn pkaccum_as_cvt_pk(&self) -> Option<rdna3::Inst> {
        let pkaccum = self.enc == Encoding::Vop3
            && super::opcodes::Vop3::from_op(self.op) == Some(super::opcodes::Vop3::V_CVT_PKACCUM_U8_F32_E64)
            && fc::vop3::OPSEL.get(&self.words) == 0;
        pkaccum.then(|| self.vop3_with_d_as_s2(rdna3::opcodes::op::vop3::V_CVT_PK_U8_F32))?
    }

    /// This VOP3 instruction as RDNA3's VOP3 `op3` of the same sources, modifiers (ABS,
    /// NEG, CLMP, OMOD) and destination, with the destination as its third source: the
    /// accumulating forms gfx11 spells with an S2.
    fn vop3_with_d_as_s2(&self, op3: u16) -> Option<rdna3::Inst> {
        use fc::vop3 as f;
        let w = &self.words;
        let mut r: Words = [0; 3];
        f3::vop3::ENCODING.bits.put(&mut r, f3::vop3::ENCODING.value);
        f3::vop3::OP.put(&mut r, u32::from(op3));
        for (ours, theirs) in [(f::SRC0.0, f3::vop3::SRC0.0), (f::SRC1.0, f3::vop3::SRC1.0)] {
            theirs.put(&mut r, scalar(ours.get(w))?);
        }
        for (ours, theirs) in [
            (f::ABS, f3::vop3::ABS),
            (f::NEG, f3::vop3::NEG),
            (f::CLMP, f3::vop3::CLMP),
            (f::OMOD, f3::vop3::OMOD),
        ] {
            theirs.put(&mut r, ours.get(w));
        }
        let vdst = f::VDST.0.get(w);
        f3::vop3::VDST.0.put(&mut r, vdst);
        f3::vop3::SRC2.0.put(&mut r, 256 + vdst);
        lowered(&r, 2, self.literal)
    }

    /// `v_dot2c_f32_f16_e64` (`D += S0.lo · S1.lo + S0.hi · S1.hi`, accumulating in D;
    /// gfx11 has the VOP2 form alone) as RDNA3's VOP3P `v_dot2_f32_f16` with D as its
    /// third source: the same pseudocode (`tmp = S2; tmp += lo product; tmp += hi
    /// product`), CLMP as VOP3P's. Without source modifiers or OPSEL only (no pseudocode
    /// says what VOP3's would do to the packed halves).
    fn dot2c_as_dot2(&self) -> Option<rdna3::Inst> {
        use fc::vop3 as f;
        let w = &self.words;
        if self.enc != Encoding::Vop3
            || super::opcodes::Vop3::from_op(self.op) != Some(super::opcodes::Vop3::V_DOT2C_F32_F16_E64)
            || f::ABS.get(w) | f::NEG.get(w) | f::OPSEL.get(w) | f::OMOD.get(w) != 0
        {
            return None;
        }
        let mut r: Words = [0; 3];
        f3::vop3p::ENCODING.bits.put(&mut r, f3::vop3p::ENCODING.value);
        f3::vop3p::OP.put(&mut r, u32::from(rdna3::opcodes::op::vop3p::V_DOT2_F32_F16));
        for (ours, theirs) in [(f::SRC0.0, f3::vop3p::SRC0.0), (f::SRC1.0, f3::vop3p::SRC1.0)] {
            theirs.put(&mut r, scalar(ours.get(w))?);
        }
        let vdst = f::VDST.0.get(w);
        f3::vop3p::VDST.0.put(&mut r, vdst);
        f3::vop3p::SRC2.0.put(&mut r, 256 + vdst);
        // VOP3P's defaults: each source's high half from its high half.
        f3::vop3p::OPSEL_HI.put(&mut r, 3);
        f3::vop3p::OPSEL_HI2.put(&mut r, 1);
        f3::vop3p::CLMP.put(&mut r, f::CLMP.get(w));
        lowered(&r, 2, self.literal)
    }

    /// gfx9's `v_subrev_u16` (D = S1 − S0, VOP2 and VOP3), which gfx11 does not have:
    /// its `v_sub_nc_u16` (VOP3) with the sources swapped (and their OPSEL bits).
    fn subrev_u16_as_sub(&self) -> Option<rdna3::Inst> {
        use super::opcodes::{Vop2, Vop3};
        let w = &self.words;
        let (src0, src1, vdst, opsel, clamp) = match self.enc {
            Encoding::Vop2 if Vop2::from_op(self.op) == Some(Vop2::V_SUBREV_U16_E32) => (
                scalar(fc::vop2::SRC0.0.get(w))?,
                256 + fc::vop2::VSRC1.0.get(w),
                fc::vop2::VDST.0.get(w),
                0,
                0,
            ),
            Encoding::Vop3 if Vop3::from_op(self.op) == Some(Vop3::V_SUBREV_U16_E64) => {
                use fc::vop3 as f;
                // Integer sources take no float modifiers; gfx9's VOP3 has no literal.
                let (a, b) = (f::SRC0.0.get(w), f::SRC1.0.get(w));
                if f::NEG.get(w) | f::ABS.get(w) | f::OMOD.get(w) != 0 || a == 255 || b == 255 {
                    return None;
                }
                let opsel = f::OPSEL.get(w);
                let swapped = (opsel & !3) | (opsel & 1) << 1 | (opsel >> 1 & 1);
                (scalar(a)?, scalar(b)?, f::VDST.0.get(w), swapped, f::CLMP.get(w))
            }
            _ => return None,
        };
        let mut r: Words = [0; 3];
        f3::vop3::ENCODING.bits.put(&mut r, f3::vop3::ENCODING.value);
        f3::vop3::OP.put(&mut r, u32::from(rdna3::opcodes::op::vop3::V_SUB_NC_U16));
        f3::vop3::VDST.0.put(&mut r, vdst);
        f3::vop3::SRC0.0.put(&mut r, src1);
        f3::vop3::SRC1.0.put(&mut r, src0);
        f3::vop3::OPSEL.put(&mut r, opsel);
        f3::vop3::CLMP.put(&mut r, clamp);
        lowered(&r, 2, self.literal)
    }

    /// A VOP2 instruction that RDNA3 has in VOP3 only, as that: the carry-out forms
    /// (their carry in VCC, which VOP3SD names as its mask destination, and as the
    /// carry-in source of those that take one) and the 16-bit operations.
    fn vop2_as_vop3(&self) -> Option<rdna3::Inst> {
        let w = &self.words;
        let mut r: Words = [0; 3];
        let vcc = u32::from(rdna3::VCC_LO as u16);
        if let Some(op) = lowering::vop2_as_vop3sd(self.op) {
            f3::vop3sd::ENCODING.bits.put(&mut r, f3::vop3sd::ENCODING.value);
            f3::vop3sd::OP.put(&mut r, u32::from(op));
            f3::vop3sd::SDST.0.put(&mut r, vcc);
            let carry_in = rdna3::opcodes::Vop3sd::from_op(op).is_some_and(|o| o.name().contains("_ci_"));
            if carry_in {
                f3::vop3sd::SRC2.0.put(&mut r, vcc);
            }
        } else {
            let op = lowering::vop2_as_vop3(self.op)?;
            f3::vop3::ENCODING.bits.put(&mut r, f3::vop3::ENCODING.value);
            f3::vop3::OP.put(&mut r, u32::from(op));
        }
        f3::vop3::VDST.0.put(&mut r, fc::vop2::VDST.0.get(w));
        f3::vop3::SRC0.0.put(&mut r, scalar(fc::vop2::SRC0.0.get(w))?);
        f3::vop3::SRC1.0.put(&mut r, 256 + fc::vop2::VSRC1.0.get(w));
        lowered(&r, 2, self.literal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Instructions as `llvm-mc-19 --mcpu=gfx942` encodes them lower to the RDNA3
    /// instruction `llvm-mc-19 --mcpu=gfx1100` prints as the same operation (in its
    /// wave32 syntax: a lane mask is one SGPR there, two in the wave64 these run in).
    #[test]
    fn lowers_to_the_rdna3_instruction_of_the_same_meaning() {
        for (words, text) in [
            // v_add_f32_e32 v2, v6, v7
            (&[0x0204_0f06u32][..], "v_add_f32_e32 v2, v6, v7"),
            // v_add_u32_e32 v11, v4, v5 (gfx11: v_add_nc_u32)
            (&[0x6816_0b04], "v_add_nc_u32_e32 v11, v4, v5"),
            // s_and_saveexec_b64 s[2:3], vcc
            (&[0xbe82_206a], "s_and_saveexec_b64 s[2:3], vcc"),
            // s_mov_b32 s2, m0: gfx9's M0 is 124, gfx11's 125
            (&[0xbe82_007c], "s_mov_b32 s2, m0"),
            // v_lshl_or_b32 v0, s2, 8, v0
            (&[0xd200_0000, 0x0401_1002], "v_lshl_or_b32 v0, s2, 8, v0"),
            // v_cmp_gt_u32_e64 s[4:5], v1, v2
            (&[0xd0cc_0004, 0x0002_0501], "v_cmp_gt_u32_e64 s4, v1, v2"),
            // v_mad_u64_u32 v[0:1], s[4:5], v2, v3, v[4:5]
            (&[0xd1e8_0400, 0x0412_0702], "v_mad_u64_u32 v[0:1], s4, v2, v3, v[4:5]"),
            // v_sub_co_u32_e32 v16, vcc, 0, v8: VOP3SD in gfx11, VCC its mask
            (&[0x3420_1080], "v_sub_co_u32 v16, vcc_lo, 0, v8"),
            // v_subrev_u16_e32 v8, 25, v8 (a tinygrad uint8 kernel): gfx11's
            // v_sub_nc_u16 with the sources swapped
            (&[0x5010_1099], "v_sub_nc_u16 v8, v8, 25"),
            // v_subrev_u16_e64 v1, s2, v3
            (&[0xd128_0001, 0x0002_0602], "v_sub_nc_u16 v1, v3, s2"),
            // v_fmac_f64_e32 v[8:9], 0.5, v[0:1]: gfx11's v_fma_f64 with D as S2
            (&[0x0810_00f0], "v_fma_f64 v[8:9], 0.5, v[0:1], v[8:9]"),
            // v_cvt_pkaccum_u8_f32 v0, v1, v2: gfx11's v_cvt_pk_u8_f32 with D as S2
            (&[0xd1f0_0000, 0x0002_0501], "v_cvt_pk_u8_f32 v0, v1, v2, v0"),
            // v_dot2c_f32_f16_e64 v0, v1, v2 clamp: gfx11's v_dot2_f32_f16 with D as S2
            (&[0xd137_8000, 0x0002_0501], "v_dot2_f32_f16 v0, v1, v2, v0 clamp"),
            // ds_write2_b32 v1, v2, v3 offset0:4 offset1:8
            (
                &[0xd81c_0804, 0x0003_0201],
                "ds_store_2addr_b32 v1, v2, v3 offset0:4 offset1:8",
            ),
        ] {
            let i = Inst::decode(words).unwrap();
            let r = i.to_rdna3().unwrap_or_else(|| panic!("{text}: does not lower"));
            assert_eq!(r.llvm().to_string(), text);
        }
        // FLAT_SCRATCH has no gfx11 number; an SDWA form and an AccVGPR read do not
        // lower.
        for words in [
            &[0xbe82_0066u32][..],                 // s_mov_b32 s2, flat_scratch_lo
            &[0x0204_06f9, 0x0606_0006],           // v_add_f32_sdwa
            &[0xd86c_0000 | 1 << 25, 0x0100_0002], // ds_read_b32 a1, v2
        ] {
            assert!(Inst::decode(words).unwrap().to_rdna3().is_none(), "{words:x?}");
        }
    }
}
