//! CDNA3's 8-bit float conversions, in gfx942's FNUZ formats: `v_cvt_f32_fp8`,
//! `v_cvt_f32_bf8` and their packed forms (VOP1, its SDWA form choosing the byte or
//! 16-bit half, and VOP3), `v_cvt_pk_{fp8,bf8}_f32` and `v_cvt_sr_{fp8,bf8}_f32`
//! (VOP3, OPSEL choosing the half or byte written), read into what [`crate::fp8_ops`]
//! runs. Clamp and output modifiers, a DPP form, and OPSEL where the instruction has
//! no use for it are refused.

use super::decode::{Encoding, Ext, Inst};
use super::fields as fc;
use super::lower::scalar;
use crate::fp8_ops::{Fp8Inst, Fp8Op};

/// SDWA's whole-dword select.
const SDWA_DWORD: u32 = 6;

/// The 8-bit float conversion `i` is, with its operands; `None` for any other
/// instruction, a refusal's reason for a form not run.
pub(super) fn decode(i: &Inst) -> Option<Result<Fp8Inst, &'static str>> {
    let op = Fp8Op::of(i.name()?, true)?;
    Some(operands(i, op))
}

fn operands(i: &Inst, op: Fp8Op) -> Result<Fp8Inst, &'static str> {
    const MODIFIERS: &str = "clamp, output or source modifiers on an 8-bit float conversion: not run";
    let w = &i.words;
    let gfx11 = |n: u32| {
        scalar(n)
            .map(|s| s as u16)
            .ok_or("an 8-bit float conversion's source in FLAT_SCRATCH or XNACK_MASK")
    };
    let packed = matches!(op, Fp8Op::ToF32 { packed: true, .. });
    let (vdst, srcs, sel, neg, abs) = match (i.enc, i.ext) {
        (Encoding::Vop1, None) => (
            fc::vop1::VDST.index(w),
            [gfx11(fc::vop1::SRC0.0.get(w))?, 0, 0],
            0,
            0,
            0,
        ),
        (Encoding::Vop1, Some(Ext::Sdwa)) => {
            use fc::vop2_sdwa as f;
            let mods = f::CLMP.get(w) | f::OMOD.get(w) | f::SRC0_NEG.get(w) | f::SRC0_ABS.get(w);
            if mods != 0 || f::DST_SEL.get(w) != SDWA_DWORD {
                return Err(MODIFIERS);
            }
            let src = match f::S0.get(w) {
                1 => gfx11(f::VSRC0.0.get(w))?,
                _ => 256 + f::VSRC0.0.get(w) as u16,
            };
            // BYTE_0..3 for one value, WORD_0 and WORD_1 for a pair; DWORD reads the
            // lowest.
            let sel = match (f::SRC0_SEL.get(w), packed) {
                (SDWA_DWORD, _) => 0,
                (s @ 0..=3, false) => s,
                (s @ 4..=5, true) => s - 4,
                _ => return Err("an SDWA select an 8-bit float conversion does not read"),
            };
            (fc::vop1::VDST.index(w), [src, 0, 0], sel, 0, 0)
        }
        (Encoding::Vop1, Some(_)) => return Err("a DPP form of an 8-bit float conversion: not run"),
        (Encoding::Vop3, None) => {
            use fc::vop3 as f;
            if f::CLMP.get(w) != 0 || f::OMOD.get(w) != 0 {
                return Err(MODIFIERS);
            }
            let (neg, abs, opsel) = (f::NEG.get(w), f::ABS.get(w), f::OPSEL.get(w));
            let srcs = [gfx11(f::SRC0.0.get(w))?, gfx11(f::SRC1.0.get(w))?, 0];
            let sel = match op {
                // gfx942's VOP3 conversions to f32 read byte (half) 0: LLVM takes no
                // OPSEL for them.
                Fp8Op::ToF32 { .. } if neg | abs | opsel != 0 => return Err(MODIFIERS),
                Fp8Op::ToF32 { .. } => 0,
                // OPSEL[3] writes the high half; OPSEL[3:2] the byte.
                Fp8Op::FromF32 { stochastic: false, .. } if opsel & 7 == 0 => opsel >> 3,
                // S1 is the random bits: no modifiers.
                Fp8Op::FromF32 { stochastic: true, .. } if (neg | abs) & !1 != 0 => return Err(MODIFIERS),
                Fp8Op::FromF32 { stochastic: true, .. } if opsel & 3 == 0 => opsel >> 2,
                _ => return Err("OPSEL bits an 8-bit float conversion does not read"),
            };
            (f::VDST.index(w), srcs, sel, neg, abs)
        }
        _ => return Err("an 8-bit float conversion in an encoding CDNA3 does not define"),
    };
    Ok(Fp8Inst::new(op, vdst, srcs, sel, [neg, abs]))
}
