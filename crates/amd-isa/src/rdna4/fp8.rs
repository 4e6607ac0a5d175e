//! RDNA4's 8-bit float instructions (OCP's formats): the conversions to and from f32
//! and the dot products `v_dot4_f32_{fp8,bf8}_{fp8,bf8}`, read from RDNA4's encodings
//! into what [`crate::fp8_ops`] runs.

use super::decode::{Encoding, Inst};
use super::fields as f4;
use crate::fp8_ops::{Fp8Inst, Fp8Op};

/// The 8-bit float instruction `i` is, with its operands; `None` for any other
/// instruction, a refusal's reason for one with modifiers not run (a conversion to
/// f32 with source modifiers, clamp or an output modifier; a dot product with
/// negations or clamp).
pub(crate) fn decode(i: &Inst) -> Option<Result<Fp8Inst, &'static str>> {
    let op = Fp8Op::of(i.name()?, false)?;
    let iw = &i.words;
    // (destination, sources, OPSEL, NEG, ABS, clamp or output modifier set)
    let (vdst, srcs, opsel, neg, abs, out_mods) = match i.enc {
        Encoding::Vop1 => (
            f4::vop1::VDST.index(iw),
            [f4::vop1::SRC0.operand(iw), 0, 0],
            0,
            0,
            0,
            false,
        ),
        Encoding::Vop3 => {
            use f4::vop3::*;
            (
                VDST.index(iw),
                [SRC0.operand(iw), SRC1.operand(iw), SRC2.operand(iw)],
                OPSEL.get(iw),
                NEG.get(iw),
                ABS.get(iw),
                CLMP.is_set(iw) || OMOD.get(iw) != 0,
            )
        }
        Encoding::Vop3p => {
            use f4::vop3p::*;
            if NEG.get(iw) | NEG_HI.get(iw) != 0 || CLMP.is_set(iw) {
                return Some(Err("negations or clamp on an 8-bit float dot product: not run"));
            }
            (
                VDST.index(iw),
                [SRC0.operand(iw), SRC1.operand(iw), SRC2.operand(iw)],
                0,
                0,
                0,
                false,
            )
        }
        _ => return None,
    };
    if out_mods || (matches!(op, Fp8Op::ToF32 { .. }) && (neg | abs) != 0) {
        return Some(Err("modifiers on an 8-bit float conversion: not run"));
    }
    let sel = match op {
        // OPSEL[1:0] picks the byte, its two bits reversed (byte_sel).
        Fp8Op::ToF32 { packed: false, .. } => (opsel & 1) << 1 | (opsel >> 1 & 1),
        Fp8Op::ToF32 { packed: true, .. } => opsel & 1,
        // OPSEL[3] writes the high half.
        Fp8Op::FromF32 { stochastic: false, .. } => opsel >> 3 & 1,
        Fp8Op::FromF32 { stochastic: true, .. } => opsel >> 2 & 3,
        Fp8Op::Dot4 { .. } => 0,
    };
    Some(Ok(Fp8Inst::new(op, vdst, srcs, sel, [neg, abs])))
}
