//! Division and square-root helpers (div_scale, div_fmas, div_fixup, ldexp, frexp,
//! rsq, sqrt), f32 and f64.

use super::decode::Inst;
use super::exec::{R, Vop, f, f64_src, output_mods, output_mods64, trans64};
use super::opcodes::op::{vop3, vop3sd};
use super::rounding::{Unary, fma32, fma64};
use super::wave::{VCC_LO, Wave};
use crate::float::exact::{self, Round};

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
pub(crate) fn valu_div(w: &mut Wave, i: &Inst, v: Vop) -> R<()> {
    let Vop { op, dst, sdst, srcs, m } = v;
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
    // div_scale's VCC: the lanes whose quotient div_fmas must scale back.
    let mut post_scale = 0u32;
    let mode = if wide { w.round16_64() } else { w.round32() };
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
                let (r, scaled) = div_scale(x(0)?, x(1)?, x(2)?, wide);
                post_scale |= u32::from(scaled) << lane;
                r
            }
            vop3::V_DIV_FMAS_F32 | vop3::V_DIV_FMAS_F64 => {
                let (a, b, c) = (x(0)?, x(1)?, x(2)?);
                if vcc >> lane & 1 != 0 {
                    div_fmas_scaled(a, b, c, wide, mode)
                } else if wide {
                    fma64(a, b, c, mode)
                } else {
                    fma32(a as f32, b as f32, c as f32, mode) as f64
                }
            }
            vop3::V_DIV_FIXUP_F32 | vop3::V_DIV_FIXUP_F64 => div_fixup(x(0)?, x(1)?, x(2)?, wide),
            vop3::V_LDEXP_F32 | vop3::V_LDEXP_F64 => {
                let e = w.vread(srcs[1], lane, lit)? as i32;
                if mode != Round::NearestEven {
                    let (v, fmt) = (x(0)?, if wide { exact::F64 } else { exact::F32 });
                    match exact::scale(v, e.clamp(-10_000, 10_000), fmt, mode) {
                        Some(bits) if wide => f64::from_bits(bits),
                        Some(bits) => f64::from(f32::from_bits(bits as u32)),
                        None => v,
                    }
                } else if wide {
                    ldexp(x(0)?, e)
                } else {
                    ldexp(x(0)?, e.clamp(-400, 400)) as f32 as f64
                }
            }
            vop3::V_RSQ_F64_E64 => {
                let v = x(0)?;
                f64::from_bits(trans64(Unary::Rsq, v, mode, 1.0 / v.sqrt()))
            }
            vop3::V_SQRT_F64_E64 => {
                let v = x(0)?;
                f64::from_bits(trans64(Unary::Sqrt, v, mode, v.sqrt()))
            }
            vop3::V_FREXP_MANT_F64_E64 => frexp64(x(0)?).0,
            _ => {
                w.vwrite(dst, lane, frexp64(f64_src(w, srcs[0], lane, lit, m, 0)?).1 as u32)?;
                continue;
            }
        };
        // VOP3's output modifier and clamp, then MODE's denormal flushing.
        if wide {
            let b = w.f64_out(output_mods64(r.to_bits(), m));
            w.vwrite(dst, lane, b as u32)?;
            w.vwrite(dst + 1, lane, (b >> 32) as u32)?;
        } else {
            w.vwrite(dst, lane, w.f32_out(output_mods((r as f32).to_bits(), m)))?;
        }
    }
    if matches!(op, vop3sd::V_DIV_SCALE_F32 | vop3sd::V_DIV_SCALE_F64) {
        // Lanes EXEC leaves out get 0, as the compares write them.
        w.mask_write(sdst.unwrap_or(VCC_LO), post_scale)?;
    }
    Ok(())
}

/// The biased exponent field of `x` in its format (f64, or f32 when not `wide`).
fn exponent(x: f64, wide: bool) -> i32 {
    if wide {
        ((x.to_bits() >> 52) & 0x7ff) as i32
    } else {
        (((x as f32).to_bits() >> 23) & 0xff) as i32
    }
}

/// Whether `x` is a denormal of its format.
fn denormal(x: f64, wide: bool) -> bool {
    if wide {
        x.is_subnormal()
    } else {
        (x as f32).is_subnormal()
    }
}

/// `v_div_scale`: `s0` (the divisor `s1` or the numerator `s2` of `s2 / s1`) scaled so
/// that LLVM's Newton–Raphson division in between runs on normal numbers, and whether
/// `v_div_fmas` must scale the quotient back (VCC). The ISA's pseudocode, with the
/// scale factor `E` = 2^64 (f32) / 2^128 (f64):
///
/// - a zero divisor or numerator: NaN (`v_div_fixup` gives the answer);
/// - an exponent gap of 96 / 768 or more (the quotient may overflow): the divisor
///   times `E`, VCC set (the quotient comes out `E` times too small);
/// - a denormal divisor: both times `E` (the quotient is unchanged, and normal: the gap
///   rule caught the large ones);
/// - a divisor whose reciprocal is denormal: both divided by `E` (its reciprocal then
///   normal) — and when the quotient is denormal too, only the divisor, VCC set;
/// - a denormal quotient: the numerator times `E`, VCC set;
/// - a numerator with exponent field 23 / 53 or less: both times `E` (the remainders
///   stay normal).
///
/// Read literally the pseudocode is not self-consistent, and these choices make it so:
/// its "1 / S1 is denormal" test converts S1 to f64 first (never true for an f32), and
/// its branch for a denormal quotient with a denormal reciprocal scales the (huge)
/// divisor up by `E`, which overflows; here both are the format's own test and the
/// divisor is scaled down, the direction [`div_fmas_scaled`] undoes for a quotient
/// below 2. What must hold is end to end: `v_div_fixup(v_div_fmas(…))` over LLVM's
/// sequence is the correctly rounded quotient, which the kernel tests check bit for
/// bit against the host on every class of operand.
pub(crate) fn div_scale(s0: f64, s1: f64, s2: f64, wide: bool) -> (f64, bool) {
    let e = if wide { 128 } else { 64 };
    let (gap, tiny) = if wide { (768, 53) } else { (96, 23) };
    let (is_den, is_num) = (s0.to_bits() == s1.to_bits(), s0.to_bits() == s2.to_bits());
    let scale = |k: i32| if wide { ldexp(s0, k) } else { ldexp(s0, k) as f32 as f64 };
    let quotient_denormal = if wide {
        (s2 / s1).is_subnormal()
    } else {
        (s2 as f32 / s1 as f32).is_subnormal()
    };
    let reciprocal_denormal = if wide {
        (1.0 / s1).is_subnormal()
    } else {
        (1.0 / s1 as f32).is_subnormal()
    };
    if s1 == 0.0 || s2 == 0.0 {
        (f64::NAN, false)
    } else if exponent(s2, wide) - exponent(s1, wide) >= gap {
        (if is_den { scale(e) } else { s0 }, true)
    } else if denormal(s1, wide) {
        (scale(e), false)
    } else if reciprocal_denormal && quotient_denormal {
        (if is_den { scale(-e) } else { s0 }, true)
    } else if reciprocal_denormal {
        (scale(-e), false)
    } else if quotient_denormal {
        (if is_num { scale(e) } else { s0 }, true)
    } else if exponent(s2, wide) <= tiny {
        (scale(e), false)
    } else {
        (s0, false)
    }
}

/// `v_div_fmas` with VCC set: `a × b + c` scaled back by what `v_div_scale` took out,
/// 2^64 (f32) or 2^128 (f64) — up for a scaled quotient `c` of 2 or more (the divisor
/// was scaled up), down below that (the numerator was scaled up, or the divisor
/// down) — and rounded once, so a result among the denormals or past the largest
/// finite value rounds as the unscaled division would. (The ISA's pseudocode says
/// 2^32 / 2^64, always up: that would leave an f64 1 / 1e-310 at 5.4e290, 2^64 times
/// too small, where infinity is right.)
pub(crate) fn div_fmas_scaled(a: f64, b: f64, c: f64, wide: bool, mode: Round) -> f64 {
    let (e, bias, fmt) = if wide {
        (128, 1023, exact::F64)
    } else {
        (64, 127, exact::F32)
    };
    let k = if exponent(c, wide) > bias { e } else { -e };
    match exact::fma(a, b, c, k, fmt, mode) {
        Some(bits) if wide => f64::from_bits(bits),
        Some(bits) => f32::from_bits(bits as u32) as f64,
        // Infinities and NaN: scaling changes nothing.
        None if wide => a.mul_add(b, c),
        None => (a as f32).mul_add(b as f32, c as f32) as f64,
    }
}

/// `v_div_fixup`: the special cases of `s2 / s1` (NaN, infinities, zeros, overflow and
/// underflow), else the quotient estimate `s0` with the quotient's sign. A NaN estimate
/// from ordinary operands is an overflow inside the scaled division (a quotient past
/// even the scaled range makes LLVM's correction steps ∞ − ∞): infinity, as tinygrad's
/// emulator has it from the hardware.
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
    // NaN operands come back quieted (an f32's already is, widened to f64).
    let quiet = |x: f64| f64::from_bits(x.to_bits() | 1 << 51);
    if s2.is_nan() {
        quiet(s2)
    } else if s1.is_nan() {
        quiet(s1)
    } else if (s1 == 0.0 && s2 == 0.0) || (s1.is_infinite() && s2.is_infinite()) {
        // The ISA's default NaN here, negative (0xffc00000 as an f32), as x86's.
        f64::from_bits(0xfff8_0000_0000_0000)
    } else if s1 == 0.0 || s2.is_infinite() {
        signed(f64::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 || exp < min_diff {
        signed(0.0)
    } else if s1_exp == max_exp || s0.is_nan() {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// LLVM's correctly rounded division as clang-19 emits it for gfx1100 (f32 with
    /// `-cl-fp32-correctly-rounded-divide-sqrt`, and f64), on these helpers, with a
    /// reciprocal `ulps` units off the correctly rounded one (the hardware's `v_rcp`
    /// is within 1 ulp, so the f64 sequence is also tried with one an ulp off).
    fn llvm_div(n: f64, d: f64, wide: bool, ulps: i64) -> f64 {
        let rcp = |x: f64| {
            if wide {
                let r = 1.0 / x;
                if r.is_finite() && r != 0.0 {
                    f64::from_bits((r.to_bits() as i64 + ulps) as u64)
                } else {
                    r
                }
            } else {
                let r = 1.0 / x as f32;
                let r = if r.is_finite() && r != 0.0 {
                    f32::from_bits((r.to_bits() as i64 + ulps) as u32)
                } else {
                    r
                };
                r as f64
            }
        };
        let fma = |a: f64, b: f64, c: f64| {
            if wide {
                a.mul_add(b, c)
            } else {
                (a as f32).mul_add(b as f32, c as f32) as f64
            }
        };
        let mul = |a: f64, b: f64| if wide { a * b } else { (a as f32 * b as f32) as f64 };
        let (den, _) = div_scale(d, d, n, wide);
        let mut r = rcp(den);
        let (num, vcc) = div_scale(n, d, n, wide);
        let res = if wide {
            for _ in 0..2 {
                let e = fma(-den, r, 1.0);
                r = fma(r, e, r);
            }
            let q = mul(num, r);
            let rem = fma(-den, q, num);
            if vcc {
                div_fmas_scaled(rem, r, q, true, Round::NearestEven)
            } else {
                rem.mul_add(r, q)
            }
        } else {
            let e = fma(-den, r, 1.0);
            r = fma(e, r, r);
            let q = mul(num, r);
            let rem = fma(-den, q, num);
            let q = fma(rem, r, q);
            let rem = fma(-den, q, num);
            if vcc {
                div_fmas_scaled(rem, r, q, false, Round::NearestEven)
            } else {
                fma(rem, r, q)
            }
        };
        div_fixup(res, d, n, wide)
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// Operands of every class: zeros, denormals, the extremes, powers of two and
    /// random significands at every exponent.
    fn operands(wide: bool) -> Vec<f64> {
        let mut v = vec![0.0, 1.0, 3.0, 0.1, f64::INFINITY, f64::NAN, 1e-310, 1e-40];
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..400 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v.push(if wide {
                f64::from_bits(s)
            } else {
                f32::from_bits(s as u32) as f64
            });
        }
        if wide {
            v.extend([
                f64::MAX,
                f64::MIN_POSITIVE,
                5e-324,
                2.2e-308,
                1.5 * 2f64.powi(1000),
                2f64.powi(-1000),
            ]);
        } else {
            v.extend(
                [
                    f32::MAX,
                    f32::MIN_POSITIVE,
                    1e-45,
                    1.1e-38,
                    1.5 * 2f32.powi(100),
                    2f32.powi(-100),
                    2f32.powi(127),
                ]
                .map(f64::from),
            );
        }
        let neg: Vec<f64> = v.iter().map(|x| -x).collect();
        v.extend(neg);
        v.retain(|x| !x.is_nan() || x.is_sign_positive());
        if !wide {
            // f32 operands only (1e-310 flushes to 0 there).
            v.iter_mut().for_each(|x| *x = *x as f32 as f64);
        }
        v
    }

    #[test]
    fn llvm_division_is_correctly_rounded_everywhere() {
        for wide in [false, true] {
            let ops = operands(wide);
            for &n in &ops {
                for &d in &ops {
                    let want = if wide { n / d } else { (n as f32 / d as f32) as f64 };
                    // f64 refines its reciprocal twice, so one off by an ulp still
                    // gives the right quotient; f32 refines once, and is checked with
                    // the correctly rounded reciprocal the interpreter's v_rcp gives.
                    let rcp_errors: &[i64] = if wide { &[0, -1, 1] } else { &[0] };
                    for &ulps in rcp_errors {
                        let got = llvm_div(n, d, wide, ulps);
                        assert!(
                            same(got, want),
                            "{} {n:e} / {d:e}: {got:e}, want {want:e} (rcp {ulps:+} ulp)",
                            if wide { "f64" } else { "f32" }
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn scaling_cases() {
        // f64 1 / 1e-310: the gap rule scales the divisor by 2^128 and sets VCC; the
        // quotient comes back up by 2^128 to overflow (the ISA text's 2^64 gave 5.4e290).
        let (den, vcc) = div_scale(1e-310, 1e-310, 1.0, true);
        assert!(vcc && den == 1e-310 * 2f64.powi(128));
        assert_eq!(
            div_scale(1.0, 1e-310, 1.0, true),
            (1.0, true),
            "the numerator is left alone"
        );
        assert_eq!(llvm_div(1.0, 1e-310, true, 0), f64::INFINITY);
        // A denormal quotient: the numerator scaled up, VCC set.
        assert_eq!(
            div_scale(1e-30, 1e10, 1e-30, false),
            (1e-30f32 as f64 * 2f64.powi(64), true)
        );
        // A denormal divisor: both scaled, no VCC.
        let d = 1e-40f32 as f64;
        assert_eq!(div_scale(d, d, 1e-35, false), (d * 2f64.powi(64), false));
        // A huge divisor (its reciprocal denormal): both scaled down.
        assert_eq!(
            div_scale(2f64.powi(127), 2f64.powi(127), 4.0, false),
            (2f64.powi(63), false)
        );
        // Zeros: NaN, left to div_fixup.
        assert!(div_scale(0.0, 1.0, 0.0, false).0.is_nan());
        // div_fmas: up by 2^64 for a quotient of 2 or more, down below.
        assert_eq!(
            div_fmas_scaled(0.0, 1.0, 4.0, false, Round::NearestEven),
            4.0 * 2f64.powi(64)
        );
        assert_eq!(
            div_fmas_scaled(0.0, 1.0, 1.0, false, Round::NearestEven),
            2f64.powi(-64)
        );
        // A NaN estimate from ordinary operands is an overflow.
        assert_eq!(div_fixup(f64::NAN, -1.0, 3.0, true), f64::NEG_INFINITY);
    }
}
