//! Division and square-root helpers (div_scale, div_fmas, div_fixup, ldexp, frexp,
//! rsq, sqrt), f32 and f64.

use super::decode::Inst;
use super::exec::{Mods, R, f, f64_src};
use super::opcodes::op::{vop3, vop3sd};
use super::wave::{VCC_LO, Wave};

/// Whether VOP3-numbered `op` is one of [`valu_div`]'s.
pub(crate) fn covers(op: u16) -> bool {
    matches!(
        op,
        vop3sd::V_DIV_SCALE_F32
            | vop3sd::V_DIV_SCALE_F64
            | vop3::V_DIV_FMAS_F32
            | vop3::V_DIV_FMAS_F64
            | vop3::V_DIV_FIXUP_F32
            | vop3::V_DIV_FIXUP_F64
            | vop3::V_LDEXP_F32
            | vop3::V_LDEXP_F64
            | vop3::V_RSQ_F64_E64
            | vop3::V_SQRT_F64_E64
            | vop3::V_FREXP_EXP_I32_F64_E64
            | vop3::V_FREXP_MANT_F64_E64
    )
}

/// The IEEE division and square-root helpers LLVM's expansions use (div_scale,
/// div_fmas, div_fixup, ldexp, f64 rsq/sqrt/frexp), for f32 and f64.
pub(crate) fn valu_div(
    w: &mut Wave,
    i: &Inst,
    op: u16,
    dst: usize,
    sdst: Option<usize>,
    srcs: [u16; 3],
    m: Mods,
) -> R<()> {
    let exec = w.exec();
    let lit = i.literal;
    let vcc = w.vcc();
    let wide = matches!(
        op,
        vop3sd::V_DIV_SCALE_F64
            | vop3::V_DIV_FMAS_F64
            | vop3::V_DIV_FIXUP_F64
            | vop3::V_LDEXP_F64
            | vop3::V_RSQ_F64_E64
            | vop3::V_SQRT_F64_E64
            | vop3::V_FREXP_MANT_F64_E64
    );
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let x = |k: usize| -> R<f64> {
            if wide {
                f64_src(w, srcs[k], lane, lit, m, k)
            } else {
                Ok(w.f32_in(f(m.float(k, w.vread(srcs[k], lane, lit)?))) as f64)
            }
        };
        let r: f64 = match op {
            vop3sd::V_DIV_SCALE_F32 | vop3sd::V_DIV_SCALE_F64 => {
                let (s0, s1, s2) = (x(0)?, x(1)?, x(2)?);
                if s1 == 0.0 || s2 == 0.0 {
                    f64::NAN
                } else if div_needs_scaling(s1, s2, wide) {
                    return Err(format!(
                        "v_div_scale of {s2:e} / {s1:e}: operands at the range limits need scaling, which is not implemented"
                    ));
                } else {
                    s0
                }
            }
            vop3::V_DIV_FMAS_F32 | vop3::V_DIV_FMAS_F64 => {
                if vcc >> lane & 1 != 0 {
                    return Err("v_div_fmas with VCC set (a scaled division) is not implemented".into());
                }
                if wide {
                    x(0)?.mul_add(x(1)?, x(2)?)
                } else {
                    (x(0)? as f32).mul_add(x(1)? as f32, x(2)? as f32) as f64
                }
            }
            vop3::V_DIV_FIXUP_F32 | vop3::V_DIV_FIXUP_F64 => div_fixup(x(0)?, x(1)?, x(2)?, wide),
            vop3::V_LDEXP_F32 | vop3::V_LDEXP_F64 => {
                let e = w.vread(srcs[1], lane, lit)? as i32;
                let r = ldexp(x(0)?, e);
                if wide {
                    r
                } else {
                    ldexp(x(0)?, e.clamp(-400, 400)) as f32 as f64
                }
            }
            vop3::V_RSQ_F64_E64 => 1.0 / x(0)?.sqrt(),
            vop3::V_SQRT_F64_E64 => x(0)?.sqrt(),
            vop3::V_FREXP_MANT_F64_E64 => frexp64(x(0)?).0,
            _ => {
                w.vwrite(dst, lane, frexp64(f64_src(w, srcs[0], lane, lit, m, 0)?).1 as u32)?;
                continue;
            }
        };
        if wide {
            let b = r.to_bits();
            w.vwrite(dst, lane, b as u32)?;
            w.vwrite(dst + 1, lane, (b >> 32) as u32)?;
        } else {
            w.vwrite(dst, lane, w.f32_out((r as f32).to_bits()))?;
        }
    }
    if matches!(op, vop3sd::V_DIV_SCALE_F32 | vop3sd::V_DIV_SCALE_F64) {
        // No lane scales, so the "post-scale needed" mask is clear.
        w.swrite(sdst.unwrap_or(VCC_LO), 0)?;
    }
    Ok(())
}

/// Whether `v_div_scale` would scale `s2 / s1` (the hardware's conditions: operands
/// far apart in exponent, a denormal divisor, reciprocal or quotient, a tiny
/// numerator).
pub(crate) fn div_needs_scaling(s1: f64, s2: f64, wide: bool) -> bool {
    if !s1.is_finite() || !s2.is_finite() {
        return false;
    }
    if wide {
        let exp = |x: f64| ((x.to_bits() >> 52) & 0x7ff) as i32;
        exp(s2) - exp(s1) >= 768
            || s1.is_subnormal()
            || (1.0 / s1).is_subnormal()
            || (s2 / s1).is_subnormal()
            || exp(s2) <= 53
    } else {
        let (s1, s2) = (s1 as f32, s2 as f32);
        let exp = |x: f32| ((x.to_bits() >> 23) & 0xff) as i32;
        exp(s2) - exp(s1) >= 96
            || s1.is_subnormal()
            || (1.0 / s1).is_subnormal()
            || (s2 / s1).is_subnormal()
            || exp(s2) <= 23
    }
}

/// `v_div_fixup`: the special cases of `s2 / s1` (NaN, infinities, zeros, overflow and
/// underflow), else the quotient estimate `s0` with the quotient's sign.
pub(crate) fn div_fixup(s0: f64, s1: f64, s2: f64, wide: bool) -> f64 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |v: f64| if neg { -v } else { v };
    let (exp, min_diff, max_exp) = if wide {
        (
            ((s2.to_bits() >> 52) & 0x7ff) as i32 - ((s1.to_bits() >> 52) & 0x7ff) as i32,
            -1075,
            0x7ff,
        )
    } else {
        let e = |x: f64| (((x as f32).to_bits() >> 23) & 0xff) as i32;
        (e(s2) - e(s1), -150, 0xff)
    };
    let s1_exp = if wide {
        ((s1.to_bits() >> 52) & 0x7ff) as i32
    } else {
        (((s1 as f32).to_bits() >> 23) & 0xff) as i32
    };
    if s2.is_nan() {
        s2
    } else if s1.is_nan() {
        s1
    } else if (s1 == 0.0 && s2 == 0.0) || (s1.is_infinite() && s2.is_infinite()) {
        f64::NAN
    } else if s1 == 0.0 || s2.is_infinite() {
        signed(f64::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 || exp < min_diff {
        signed(0.0)
    } else if s1_exp == max_exp {
        signed(f64::INFINITY)
    } else {
        signed(s0.abs())
    }
}

/// `x * 2^e`, rounded once (to a denormal or zero when it underflows).
pub(crate) fn ldexp(x: f64, e: i32) -> f64 {
    let (m, ex) = frexp64(x);
    if m == 0.0 || !m.is_finite() {
        return x;
    }
    // x = m * 2^ex with |m| in [0.5, 1): the result is m * 2^t.
    let t = ex.saturating_add(e);
    let pow = |k: i32| f64::from_bits(((k + 1023) as u64) << 52);
    match t {
        1025.. => f64::INFINITY.copysign(x),
        1024 => (m * 2.0) * pow(1023),
        -1021..=1023 => m * pow(t),
        // 2^t is a denormal power of two (or half the least one): one rounding.
        -1074..=-1022 => m * f64::from_bits(1 << (t + 1074)),
        -1075 => (m / 2.0) * f64::from_bits(1),
        _ => 0.0f64.copysign(x),
    }
}

/// `x` as `mant * 2^exp` (f64), `|mant|` in [0.5, 1); zero, infinities and NaN give
/// themselves and exponent 0.
pub(crate) fn frexp64(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    // Denormals: scale into the normals first.
    let (x, bias) = if x.is_subnormal() {
        (x * 2f64.powi(64), -64)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1022;
    (f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52)), exp + bias)
}
