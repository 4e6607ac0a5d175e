//! f16 arithmetic, 16-bit integer VOP3 forms, and packed (VOP3P) math.

use super::decode::Inst;
use super::exec::{Mods, R, f, revolutions, unsupported, vop2_only};
use super::matrix::{WmmaMods, wmma};
use super::opcodes::Vop3p;
use super::opcodes::op::{vop3, vop3p};
use super::rounding::{Unary, add16, fma16, mul16, sub16, to16, unary};
use super::wave::{MODE_ROUND, Wave};
use crate::float::exact::{F16, Round};
use crate::float::half;
use crate::float::minmax::{self, H};

/// A 16-bit float operand of `lane` (the half op_sel picks; inline constants as
/// halves), with abs/neg, as f64.
pub(crate) fn f16_src(w: &Wave, n: u16, lane: usize, lit: Option<u32>, m: Mods, k: usize) -> R<f64> {
    Ok(half::to_f32(f16_bits(w, n, lane, lit, m, k)?) as f64)
}

/// An f16 source operand's bits, op_sel, abs and neg applied.
pub(crate) fn f16_bits(w: &Wave, n: u16, lane: usize, lit: Option<u32>, m: Mods, k: usize) -> R<u16> {
    let v = packed_src(w, n, lane, lit)?;
    let mut h = if m.opsel >> k & 1 != 0 {
        (v >> 16) as u16
    } else {
        v as u16
    };
    if m.abs >> k & 1 != 0 {
        h &= 0x7fff;
    }
    if m.neg >> k & 1 != 0 {
        h ^= 0x8000;
    }
    // f16 arithmetic, compares and conversions read denormals as MODE says.
    Ok(w.f16_in(h))
}

/// Scalar f16 ops (VOP1/VOP2/VOP3 numbering) and the f16 conversions: results in the
/// half op_sel[3] picks, the other half kept; `v_cvt_f32_f16` writes all 32 bits.
pub(crate) fn valu_f16(w: &mut Wave, i: &Inst, op: u16, dst: usize, srcs: [u16; 3], m: Mods) -> R<()> {
    let exec = w.exec();
    let lit = i.literal;
    let r16 = w.round16_64();
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let x = |k: usize| f16_src(w, srcs[k], lane, lit, m, k);
        let hb = |k: usize| f16_bits(w, srcs[k], lane, lit, m, k).map(H);
        let r: u16 = match op {
            vop3::V_CVT_F16_F32_E64 => {
                let a = w.f32_in(f(m.float(0, w.vread(srcs[0], lane, lit)?)));
                to16(a as f64, r16)
            }
            vop3::V_CVT_F32_F16_E64 => {
                let v = w.f32_out(super::exec::output_mods((x(0)? as f32).to_bits(), m));
                w.vwrite(dst, lane, v)?;
                continue;
            }
            // f16 unary ops: conversions with 16-bit integers, then math.
            vop3::V_CVT_F16_U16_E64 => to16(m.half(0, w.vread(srcs[0], lane, lit)?) as f64, r16),
            vop3::V_CVT_F16_I16_E64 => to16(m.half(0, w.vread(srcs[0], lane, lit)?) as i16 as f64, r16),
            vop3::V_CVT_U16_F16_E64 => x(0)? as u16,
            vop3::V_CVT_I16_F16_E64 => x(0)? as i16 as u16,
            vop3::V_RCP_F16_E64 => trans16(Unary::Rcp, x(0)?, r16, |v| 1.0 / v),
            vop3::V_SQRT_F16_E64 => trans16(Unary::Sqrt, x(0)?, r16, f64::sqrt),
            vop3::V_RSQ_F16_E64 => trans16(Unary::Rsq, x(0)?, r16, |v| 1.0 / v.sqrt()),
            vop3::V_LOG_F16_E64 => trans16(Unary::Log, x(0)?, r16, f64::log2),
            vop3::V_EXP_F16_E64 => trans16(Unary::Exp, x(0)?, r16, f64::exp2),
            vop3::V_FLOOR_F16_E64 => half::from_f64(x(0)?.floor()),
            vop3::V_CEIL_F16_E64 => half::from_f64(x(0)?.ceil()),
            vop3::V_TRUNC_F16_E64 => half::from_f64(x(0)?.trunc()),
            vop3::V_RNDNE_F16_E64 => half::from_f64(x(0)?.round_ties_even()),
            vop3::V_FRACT_F16_E64 => {
                // x + -floor(x): NaN stays NaN, infinities become NaN.
                let v = x(0)?;
                sub16(v, v.floor(), r16)
            }
            vop3::V_SIN_F16_E64 => trans16(Unary::Sin, x(0)?, r16, |v| revolutions(v).sin()),
            vop3::V_COS_F16_E64 => trans16(Unary::Cos, x(0)?, r16, |v| revolutions(v).cos()),
            vop3::V_ADD_F16_E64 => add16(x(0)?, x(1)?, r16),
            vop3::V_SUB_F16_E64 => sub16(x(0)?, x(1)?, r16),
            vop3::V_SUBREV_F16_E64 => sub16(x(1)?, x(0)?, r16),
            vop3::V_MUL_F16_E64 => mul16(x(0)?, x(1)?, r16),
            vop3::V_FMAC_F16_E64 => {
                let acc = half::to_f32(w.f16_in(w.vread(256 + dst as u16, lane, None)? as u16)) as f64;
                fma16(x(0)?, x(1)?, acc, r16)
            }
            // v_fmamk_f16: S0 * K + S1; v_fmaak_f16: S0 * S1 + K.
            vop2_only::V_FMAMK_F16_E32 | vop2_only::V_FMAAK_F16_E32 => {
                let k = half::to_f32(w.f16_in(lit.unwrap_or(0) as u16)) as f64;
                if op == vop2_only::V_FMAMK_F16_E32 {
                    fma16(x(0)?, k, x(1)?, r16)
                } else {
                    fma16(x(0)?, x(1)?, k, r16)
                }
            }
            vop3::V_MAX_F16_E64 => minmax::max(hb(0)?, hb(1)?, w.nans()).0,
            vop3::V_MIN_F16_E64 => minmax::min(hb(0)?, hb(1)?, w.nans()).0,
            _ => fma16(x(0)?, x(1)?, x(2)?, r16),
        };
        // Clamp bounds a half result to [0, 1]; the integer conversions saturate anyway.
        // Half results flush as MODE says.
        let float_out = !matches!(op, vop3::V_CVT_U16_F16_E64 | vop3::V_CVT_I16_F16_E64);
        let r = if m.clamp && float_out {
            super::valu::clamp_half(r)
        } else {
            r
        };
        let r = if float_out { w.f16_out(r) } else { r };
        write_half(w, dst, lane, r, m.opsel >> 3 & 1 != 0)?;
    }
    Ok(())
}

/// A VOP3P operand as 32 bits: registers and literals as they are; inline constants
/// replicated into both halves, float ones as halves.
pub(crate) fn packed_src(w: &Wave, n: u16, lane: usize, lit: Option<u32>) -> R<u32> {
    const HALVES: [u16; 9] = [0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118];
    let h = match n {
        128..=208 => w.vread(n, lane, lit)? as u16,
        240..=248 => HALVES[(n - 240) as usize],
        _ => return w.vread(n, lane, lit),
    };
    Ok(h as u32 | (h as u32) << 16)
}

/// Packed 16-bit math (VOP3P): each half of the result from the source halves
/// op_sel (low) and op_sel_hi (high) pick, with neg_lo / neg_hi on float operands.
pub(crate) fn vop3p(w: &mut Wave, i: &Inst) -> R<()> {
    let op = i.op;
    let f = i.vop3p();
    let (dst, srcs, [op_sel, op_sel_hi], [neg_lo, neg_hi]) = (f.dst, f.srcs, f.op_sel, f.neg);
    super::modifiers::check_vop3p(op, neg_lo, neg_hi)?;
    // A directed rounding mode: only what is computed in it runs.
    if w.mode & MODE_ROUND != 0 {
        if let Some(o) = Vop3p::from_op(op) {
            super::rounding::check(w, o.result_format(), o.name())?;
        }
    }
    // Mixed precision, dot products and integer WMMA (clamp included) by name.
    if matches!(
        op,
        vop3p::V_DOT2_F32_F16
            ..=vop3p::V_FMA_MIXHI_F16 | vop3p::V_WMMA_I32_16X16X16_IU8 | vop3p::V_WMMA_I32_16X16X16_IU4
    ) {
        return super::valu::vop3p(w, i);
    }
    // Clamp: integer sums, differences and multiply-adds saturate, f16 results are
    // bounded to [0, 1]; shifts, min and max cannot leave their range.
    let clamp = f.clamp;
    if matches!(op, vop3p::V_WMMA_F32_16X16X16_F16..=vop3p::V_WMMA_BF16_16X16X16_BF16) {
        // op_sel bit 2 picks the 16-bit C/D halves; op_sel_hi has no meaning for WMMA
        // (LLVM writes all ones by default and accepts others, which change nothing).
        // op_sel bits 0 and 1 are an encoding LLVM rejects ("not a valid operand"):
        // no instruction LLVM emits or assembles has them, and the ISA gives them no
        // meaning. Clamp (which LLVM's assembler does not offer on float WMMA) bounds
        // the results as VOP3P clamp bounds every float result.
        if op_sel & 3 != 0 {
            return Err(format!(
                "WMMA with op_sel {op_sel:#b} is refused: an encoding LLVM rejects, with no meaning in the ISA"
            )
            .into());
        }
        let mods = WmmaMods {
            neg_lo,
            neg_hi,
            hi_halves: op_sel & 4 != 0,
            clamp,
        };
        let layout = super::matrix::WmmaLayout::Gfx11;
        return wmma(
            w,
            op,
            super::matrix::WmmaOperands {
                dst,
                srcs,
                mods,
                lit: i.literal,
                layout,
            },
        );
    }
    let float = matches!(op, vop3p::V_PK_FMA_F16..=vop3p::V_PK_MAX_F16);
    if !matches!(op, vop3p::V_PK_MAD_I16..=vop3p::V_PK_MAX_F16) {
        return Err(unsupported(i));
    }
    let r16 = w.round16_64();
    let exec = w.exec();
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let mut v = [0u32; 3];
        for (k, src) in srcs.iter().enumerate() {
            v[k] = packed_src(w, *src, lane, i.literal)?;
        }
        let mut out = 0u32;
        for hi in [false, true] {
            let (sel, neg) = if hi { (op_sel_hi, neg_hi) } else { (op_sel, neg_lo) };
            let x: [u16; 3] = std::array::from_fn(|k| {
                let h = (v[k] >> (16 * (sel >> k & 1))) as u16;
                match (float, neg >> k & 1 != 0) {
                    (true, true) => w.f16_in(h ^ 0x8000),
                    (true, false) => w.f16_in(h),
                    _ => h,
                }
            });
            let f = |k: usize| half::to_f32(x[k]) as f64;
            let (a, b, c) = (x[0], x[1], x[2]);
            let r: u16 = match op {
                vop3p::V_PK_MAD_I16 if clamp => {
                    (i32::from(a as i16) * i32::from(b as i16) + i32::from(c as i16)).clamp(-32768, 32767) as u16
                }
                vop3p::V_PK_MAD_I16 => (a as i16).wrapping_mul(b as i16).wrapping_add(c as i16) as u16,
                vop3p::V_PK_MUL_LO_U16 if clamp => (u32::from(a) * u32::from(b)).min(0xffff) as u16,
                vop3p::V_PK_MUL_LO_U16 => a.wrapping_mul(b),
                vop3p::V_PK_ADD_I16 if clamp => (a as i16).saturating_add(b as i16) as u16,
                vop3p::V_PK_ADD_I16 => (a as i16).wrapping_add(b as i16) as u16,
                vop3p::V_PK_SUB_I16 if clamp => (a as i16).saturating_sub(b as i16) as u16,
                vop3p::V_PK_SUB_I16 => (a as i16).wrapping_sub(b as i16) as u16,
                // Packed shifts: each half of S1 by the low 4 bits of S0's.
                vop3p::V_PK_LSHLREV_B16 => b << (a & 15),
                vop3p::V_PK_LSHRREV_B16 => b >> (a & 15),
                vop3p::V_PK_ASHRREV_I16 => ((b as i16) >> (a & 15)) as u16,
                vop3p::V_PK_MAX_I16 => (a as i16).max(b as i16) as u16,
                vop3p::V_PK_MIN_I16 => (a as i16).min(b as i16) as u16,
                vop3p::V_PK_MAD_U16 if clamp => (u32::from(a) * u32::from(b) + u32::from(c)).min(0xffff) as u16,
                vop3p::V_PK_MAD_U16 => a.wrapping_mul(b).wrapping_add(c),
                vop3p::V_PK_ADD_U16 if clamp => a.saturating_add(b),
                vop3p::V_PK_ADD_U16 => a.wrapping_add(b),
                vop3p::V_PK_SUB_U16 if clamp => a.saturating_sub(b),
                vop3p::V_PK_SUB_U16 => a.wrapping_sub(b),
                vop3p::V_PK_MAX_U16 => a.max(b),
                vop3p::V_PK_MIN_U16 => a.min(b),
                // Rounded once, in MODE's f16 rounding.
                vop3p::V_PK_FMA_F16 => fma16(f(0), f(1), f(2), r16),
                vop3p::V_PK_ADD_F16 => add16(f(0), f(1), r16),
                vop3p::V_PK_MUL_F16 => mul16(f(0), f(1), r16),
                vop3p::V_PK_MIN_F16 => minmax::min(H(a), H(b), w.nans()).0,
                _ => minmax::max(H(a), H(b), w.nans()).0,
            };
            let r = if clamp && float { super::valu::clamp_half(r) } else { r };
            let r = if float { w.f16_out(r) } else { r };
            out |= (r as u32) << if hi { 16 } else { 0 };
        }
        w.vwrite(dst, lane, out)?;
    }
    Ok(())
}

/// 16-bit integer VOP3 ops: sources and destination are register halves picked by op_sel;
/// the other half of the destination is preserved.
pub(crate) fn valu16(w: &mut Wave, i: &Inst, op: u16, dst: usize, srcs: [u16; 3], m: Mods) -> R<()> {
    let exec = w.exec();
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let (a, b) = (
            m.half(0, w.vread(srcs[0], lane, i.literal)?),
            m.half(1, w.vread(srcs[1], lane, i.literal)?),
        );
        let r = match op {
            vop3::V_ADD_NC_U16 if m.clamp => a.saturating_add(b),
            vop3::V_SUB_NC_U16 if m.clamp => a.saturating_sub(b),
            vop3::V_ADD_NC_U16 => a.wrapping_add(b),
            vop3::V_SUB_NC_U16 => a.wrapping_sub(b),
            vop3::V_MUL_LO_U16 => a.wrapping_mul(b),
            vop3::V_MAX_U16 => a.max(b),
            vop3::V_MAX_I16 => (a as i16).max(b as i16) as u16,
            vop3::V_MIN_U16 => a.min(b),
            _ => (a as i16).min(b as i16) as u16,
        };
        write_half(w, dst, lane, r, m.opsel >> 3 & 1 != 0)?;
    }
    Ok(())
}

/// Writes the 16-bit `r` into the high or low half of `dst`, keeping the other half.
pub(crate) fn write_half(w: &mut Wave, dst: usize, lane: usize, r: u16, high: bool) -> R<()> {
    let old = w.vread(256 + dst as u16, lane, None)?;
    let new = if high {
        (old & 0xffff) | (r as u32) << 16
    } else {
        (old & 0xffff_0000) | r as u32
    };
    w.vwrite(dst, lane, new)
}

/// An f16 transcendental or root of `x` (a half, exact in f64): `host(x)` rounded to
/// nearest-even, or in MODE's f16 direction ([`unary`]).
fn trans16(op: Unary, x: f64, mode: Round, host: impl Fn(f64) -> f64) -> u16 {
    let near = half::from_f64(host(x));
    if mode == Round::NearestEven {
        return near;
    }
    unary(op, x, F16, mode).map_or(near, |b| b as u16)
}
