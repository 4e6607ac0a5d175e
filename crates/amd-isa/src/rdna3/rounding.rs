//! MODE's rounding fields: bits 1:0 round f32 results, bits 3:2 f16 and f64 results (0
//! nearest-even, 1 toward +infinity, 2 toward -infinity, 3 toward zero), set by RSRC1's
//! FLOAT_MODE, `s_round_mode` and `s_setreg`. The host's floating-point environment is
//! never changed: in the default mode the host's arithmetic is the hardware's; in the
//! others the IEEE operations are computed exactly and rounded once in the mode
//! ([`crate::float::exact`]). Operations whose results do not depend on the mode (exact
//! ones: min/max, rounding to integers, class tests, conversions that widen or go to
//! integers) run as they are; the f16/bf16 dot products into f32 and the
//! mixed-precision fmas round each step of their pseudocode in the mode; WMMA and the
//! 16-bit dot products round their exact sum once; the transcendentals and roots round
//! as [`unary`] says. A float result this module does not list refuses a directed
//! mode, naming the instruction and the mode.

use super::wave::{MODE_ROUND, Wave};
use crate::error::Trap;
use crate::float::ResultFormat;
use crate::float::exact::{self, F16, F32, F64, Format, Round};
use crate::float::half;

/// Results exact in every mode (or rounded as the ISA fixes, `v_cvt_pk_rtz`), by name
/// prefix.
const EXACT: &[&str] = &[
    "v_cmp",
    "v_min",
    "v_max",
    "v_med3",
    "v_trunc",
    "v_ceil",
    "v_floor",
    "v_rndne",
    "v_frexp",
    "v_mov",
    "v_cndmask",
    "v_div_scale",
    "v_div_fixup",
    "v_pack_b32_f16",
    "v_trig_preop",
    "v_cube",
    "v_cvt_f32_f16",
    "v_cvt_f64_f32",
    "v_cvt_f64_i32",
    "v_cvt_f64_u32",
    "v_cvt_f32_ubyte",
    "v_cvt_pk_rtz",
    "v_cvt_off",
];

/// Results rounded in every mode here.
const DIRECTED: &[&str] = &[
    "v_add_f32",
    "v_sub_f32",
    "v_subrev_f32",
    "v_mul_f32",
    "v_fma_f32",
    "v_fmac_f32",
    "v_fmamk_f32",
    "v_fmaak_f32",
    "v_mul_dx9_zero_f32",
    "v_fract_f32",
    "v_cvt_f32_i32",
    "v_cvt_f32_u32",
    "v_cvt_f32_f64",
    "v_ldexp_f32",
    "v_div_fmas_f32",
    "v_add_f64",
    "v_mul_f64",
    "v_fma_f64",
    "v_fract_f64",
    "v_ldexp_f64",
    "v_div_fmas_f64",
    "v_add_f16",
    "v_sub_f16",
    "v_subrev_f16",
    "v_mul_f16",
    "v_fma_f16",
    "v_fmac_f16",
    "v_fmamk_f16",
    "v_fmaak_f16",
    "v_fract_f16",
    "v_ldexp_f16",
    "v_cvt_f16_f32",
    "v_cvt_f16_u16",
    "v_cvt_f16_i16",
    "v_pk_add_f16",
    "v_pk_mul_f16",
    "v_pk_fma_f16",
    "v_pk_fmac_f16",
    "v_fma_mix_f32",
    "v_fma_mixlo_f16",
    "v_fma_mixhi_f16",
    "v_dot2_f32_f16",
    "v_dot2_f32_bf16",
    "v_dot2acc_f32_f16",
    "v_dot2acc_f32_bf16",
    "v_dot2_f16_f16",
    "v_dot2_bf16_bf16",
    "v_wmma_f32_16x16x16_f16",
    "v_wmma_f32_16x16x16_bf16",
    "v_wmma_f16_16x16x16_f16",
    "v_wmma_bf16_16x16x16_bf16",
    "v_rcp_f32",
    "v_rcp_iflag_f32",
    "v_rsq_f32",
    "v_sqrt_f32",
    "v_exp_f32",
    "v_log_f32",
    "v_sin_f32",
    "v_cos_f32",
    "v_rcp_f16",
    "v_rsq_f16",
    "v_sqrt_f16",
    "v_exp_f16",
    "v_log_f16",
    "v_sin_f16",
    "v_cos_f16",
    "v_rcp_f64",
    "v_rsq_f64",
    "v_sqrt_f64",
];

/// The rounding format of a result of float format `f` (bfloat16 results are
/// rounded from f32 by the operations that make them, under the f32 mode).
pub(crate) fn format_of(f: ResultFormat) -> Format {
    match f {
        ResultFormat::F16 => F16,
        ResultFormat::Bf16 | ResultFormat::F32 => F32,
        ResultFormat::F64 => F64,
    }
}

/// The ISA name without its encoding's marks (`v_add_f32_e64` and `v_dual_add_f32` are
/// `v_add_f32`).
fn base(name: &str) -> String {
    let n = name.trim_end_matches("_e32").trim_end_matches("_e64");
    match n.strip_prefix("v_dual_") {
        Some(rest) => format!("v_{rest}"),
        None => n.to_string(),
    }
}

/// `Ok` unless MODE rounds the result of `name` (of float format `result`, from the
/// ISA's operand tables) in a direction this interpreter does not compute for it.
pub(crate) fn check(w: &Wave, result: Option<ResultFormat>, name: &str) -> Result<(), Trap> {
    if w.mode & MODE_ROUND == 0 {
        return Ok(());
    }
    let n = base(name);
    let Some(fmt) = result.map(format_of) else {
        return Ok(());
    };
    let mode = if fmt == F32 { w.round32() } else { w.round16_64() };
    if mode == Round::NearestEven || EXACT.iter().any(|p| n.starts_with(p)) || DIRECTED.contains(&n.as_str()) {
        return Ok(());
    }
    Err(format!(
        "{name} rounding {} (MODE round bits {:#x}) is not implemented",
        mode.name(),
        w.mode & MODE_ROUND
    )
    .into())
}

/// An exact result's bits in `fmt`, or `host` (the nearest-even result, right in every
/// mode for infinite and NaN operands) when an operand is not finite.
fn or_host(r: Option<u64>, host: u64) -> u64 {
    r.unwrap_or(host)
}

/// `a + b` in f32, rounded in `mode`.
pub(crate) fn add32(a: f32, b: f32, mode: Round) -> f32 {
    if mode == Round::NearestEven {
        return a + b;
    }
    f32::from_bits(or_host(exact::add(a.into(), b.into(), F32, mode), u64::from((a + b).to_bits())) as u32)
}

/// `a - b` in f32, rounded in `mode` (a subtraction, not an addition of `-b`, so NaN
/// operands come out as the host's subtraction gives them).
pub(crate) fn sub32(a: f32, b: f32, mode: Round) -> f32 {
    if mode == Round::NearestEven {
        return a - b;
    }
    f32::from_bits(or_host(
        exact::add(a.into(), (-b).into(), F32, mode),
        u64::from((a - b).to_bits()),
    ) as u32)
}

/// `a × b` in f32, rounded in `mode`.
pub(crate) fn mul32(a: f32, b: f32, mode: Round) -> f32 {
    if mode == Round::NearestEven {
        return a * b;
    }
    f32::from_bits(or_host(exact::mul(a.into(), b.into(), F32, mode), u64::from((a * b).to_bits())) as u32)
}

/// `a × b + c` in f32, rounded once in `mode`.
pub(crate) fn fma32(a: f32, b: f32, c: f32, mode: Round) -> f32 {
    if mode == Round::NearestEven {
        return a.mul_add(b, c);
    }
    let host = a.mul_add(b, c);
    f32::from_bits(or_host(
        exact::fma(a.into(), b.into(), c.into(), 0, F32, mode),
        u64::from(host.to_bits()),
    ) as u32)
}

/// `x` (an f64, or an integer below 2^53) to f32, rounded in `mode`.
pub(crate) fn to32(x: f64, mode: Round) -> f32 {
    if mode == Round::NearestEven {
        return x as f32;
    }
    f32::from_bits(or_host(exact::convert(x, F32, mode), u64::from((x as f32).to_bits())) as u32)
}

/// `a + b` in f64, rounded in `mode`.
pub(crate) fn add64(a: f64, b: f64, mode: Round) -> f64 {
    if mode == Round::NearestEven {
        return a + b;
    }
    f64::from_bits(or_host(exact::add(a, b, F64, mode), (a + b).to_bits()))
}

/// `a - b` in f64, rounded in `mode`.
pub(crate) fn sub64(a: f64, b: f64, mode: Round) -> f64 {
    if mode == Round::NearestEven {
        return a - b;
    }
    f64::from_bits(or_host(exact::add(a, -b, F64, mode), (a - b).to_bits()))
}

/// `a × b` in f64, rounded in `mode`.
pub(crate) fn mul64(a: f64, b: f64, mode: Round) -> f64 {
    if mode == Round::NearestEven {
        return a * b;
    }
    f64::from_bits(or_host(exact::mul(a, b, F64, mode), (a * b).to_bits()))
}

/// `a × b + c` in f64, rounded once in `mode`.
pub(crate) fn fma64(a: f64, b: f64, c: f64, mode: Round) -> f64 {
    if mode == Round::NearestEven {
        return a.mul_add(b, c);
    }
    f64::from_bits(or_host(exact::fma(a, b, c, 0, F64, mode), a.mul_add(b, c).to_bits()))
}

/// `x × 2^e` in `fmt`, rounded once in `mode` (into the denormals too).
pub(crate) fn ldexp(x: f64, e: i32, fmt: Format, mode: Round) -> Option<u64> {
    exact::scale(x, e, fmt, mode)
}

/// `a + b` (halves, or anything exact in f64) as a half, rounded once in `mode`.
pub(crate) fn add16(a: f64, b: f64, mode: Round) -> u16 {
    if mode == Round::NearestEven {
        // Two halves sum exactly in f64.
        return half::from_f64(a + b);
    }
    exact::add(a, b, F16, mode).map_or_else(|| half::from_f64(a + b), |r| r as u16)
}

/// `a - b` (halves) as a half, rounded once in `mode`.
pub(crate) fn sub16(a: f64, b: f64, mode: Round) -> u16 {
    if mode == Round::NearestEven {
        return half::from_f64(a - b);
    }
    exact::add(a, -b, F16, mode).map_or_else(|| half::from_f64(a - b), |r| r as u16)
}

/// `a × b` (halves) as a half, rounded in `mode`.
pub(crate) fn mul16(a: f64, b: f64, mode: Round) -> u16 {
    if mode == Round::NearestEven {
        return half::from_f64(a * b);
    }
    exact::mul(a, b, F16, mode).map_or_else(|| half::from_f64(a * b), |r| r as u16)
}

/// `a × b + c` (halves) as a half, rounded once in `mode`. The sum of a product of
/// halves and a half can need more bits than f64 has, so rounding it to f64 first and
/// then to half would round twice; to nearest, the f64 sum is rounded to odd instead
/// (its TwoSum error says which way; 53 bits ≥ 11 + 2 make the second rounding right),
/// as `exec::fma32` does for f32.
pub(crate) fn fma16(a: f64, b: f64, c: f64, mode: Round) -> u16 {
    if mode != Round::NearestEven {
        return exact::fma(a, b, c, 0, F16, mode).map_or_else(|| half::from_f64(a.mul_add(b, c)), |r| r as u16);
    }
    // The product of two halves is exact in f64.
    let p = a * b;
    let s = p + c;
    if !s.is_finite() {
        return half::from_f64(a.mul_add(b, c));
    }
    let v = s - p;
    let err = (p - (s - v)) + (c - v);
    let bits = s.to_bits();
    let odd = if err != 0.0 && bits & 1 == 0 {
        // The odd neighbour on the exact sum's side: up in magnitude when the error has
        // the sum's sign.
        if (err > 0.0) == (s > 0.0) { bits + 1 } else { bits - 1 }
    } else {
        bits
    };
    half::from_f64(f64::from_bits(odd))
}

/// `x` (exact in f64: an f32 or a 16-bit integer) as a half, rounded in `mode`.
pub(crate) fn to16(x: f64, mode: Round) -> u16 {
    if mode == Round::NearestEven {
        return half::from_f64(x);
    }
    exact::convert(x, F16, mode).map_or_else(|| half::from_f64(x), |r| r as u16)
}

/// The transcendental and root operations.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Unary {
    /// `1 / x` (`v_rcp_*`, `v_rcp_iflag_f32`).
    Rcp,
    /// `sqrt(x)`.
    Sqrt,
    /// `1 / sqrt(x)`.
    Rsq,
    /// `2^x`.
    Exp,
    /// `log2(x)`.
    Log,
    /// `sin(2πx)` (the argument in turns, reduced exactly first: `exec::revolutions`).
    Sin,
    /// `cos(2πx)`.
    Cos,
}

/// `op(x)` for `x` exact in f64 (an f16, f32 or f64 operand), rounded to `fmt` in
/// `mode`, a directed one (nearest-even results are the host's, computed by the
/// callers as before). The hardware approximates these (within an ulp or so, more
/// for f64 `rcp`/`rsq`, which LLVM refines); the pseudocode writes each as exact
/// arithmetic (`1.0 / S0`, `sqrt(S0)`, `pow(2.0, S0)`, …) in MODE's direction, which
/// is what this computes:
/// - `rcp`, `sqrt`, `rsq`: the correctly rounded result in every format — the f64
///   nearest the exact value, which side of it the exact value lies on (an exact
///   product's sign: `q·x − 1`, `q² − x`, `q²·x − 1`), then [`exact::round_beside`];
/// - `exp`, `log`, `sin`, `cos`: the host's f64 result rounded to `fmt` in `mode`
///   (right unless the exact value lies within an f64 ulp of a representable value
///   of `fmt`).
///
/// `None` where the result does not depend on the mode (infinite, NaN, zero or, for
/// the roots, negative operands; `exp`/`log`/`sin`/`cos` results that are not finite):
/// the caller's nearest-even value is right.
pub(crate) fn unary(op: Unary, x: f64, fmt: Format, mode: Round) -> Option<u64> {
    use std::cmp::Ordering::*;
    if !x.is_finite() || x == 0.0 {
        return None;
    }
    match op {
        Unary::Rcp => {
            let q = 1.0 / x;
            if q.is_infinite() {
                // Past f64's range (x a tiny f64 denormal): beyond the largest finite
                // value, on x's side.
                return exact::round_beside(f64::MAX.copysign(x), if x > 0.0 { Greater } else { Less }, fmt, mode);
            }
            // 1/x − q has the sign of (1 − q·x)/x.
            let side = exact::cmp_product(q, x, 1.0)?.reverse();
            let side = if x < 0.0 { side.reverse() } else { side };
            exact::round_beside(q, side, fmt, mode)
        }
        Unary::Sqrt => {
            if x < 0.0 {
                return None;
            }
            let q = x.sqrt();
            // sqrt(x) − q has the sign of x − q².
            let side = exact::cmp_product(q, q, x)?.reverse();
            exact::round_beside(q, side, fmt, mode)
        }
        Unary::Rsq => {
            if x < 0.0 {
                return None;
            }
            // x = m · 4^k with m in [1, 4): 1/sqrt(x) = 2^-k / sqrt(m), the scaling
            // exact (the result is normal for every positive f64).
            let (f, fe) = super::divide::frexp64(x);
            let (m, k) = if fe.rem_euclid(2) == 1 {
                (f * 2.0, (fe - 1) / 2)
            } else {
                (f * 4.0, (fe - 2) / 2)
            };
            // The f64 nearest 1/sqrt(m), found from the host's (within an ulp) by the
            // sign of q²·m − 1, which a q² split in two makes exact.
            let side_of = |q: f64| -> Option<std::cmp::Ordering> {
                let hi = q * q;
                let lo = q.mul_add(q, -hi);
                let mut s = exact::Sum::new();
                let ok = s.add_product(hi, m) && s.add_product(lo, m) && s.add(-1.0);
                // 1/sqrt(m) − q has the sign of 1 − q²·m.
                ok.then(|| s.sign().reverse())
            };
            let mut q = 1.0 / m.sqrt();
            let mut side = side_of(q)?;
            for _ in 0..2 {
                let next = match side {
                    Greater => f64::from_bits(q.to_bits() + 1),
                    Less => f64::from_bits(q.to_bits() - 1),
                    Equal => break,
                };
                let s = side_of(next)?;
                if s == side {
                    q = next;
                    side = s;
                } else {
                    // The value lies between q and next: either brackets it.
                    break;
                }
            }
            exact::round_beside(q * 2f64.powi(-k), side, fmt, mode)
        }
        Unary::Exp | Unary::Log | Unary::Sin | Unary::Cos => {
            let v = match op {
                Unary::Exp => x.exp2(),
                Unary::Log => x.log2(),
                Unary::Sin => super::exec::revolutions(x).sin(),
                _ => super::exec::revolutions(x).cos(),
            };
            if !v.is_finite() {
                return None;
            }
            exact::convert(v, fmt, mode)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Round::*;

    /// The neighbour of a positive finite `r` in `dir` (+1 up, -1 down) in `fmt`.
    fn step(r: f64, dir: i64, fmt: Format) -> f64 {
        if fmt == F64 {
            f64::from_bits((r.to_bits() as i64 + dir) as u64)
        } else {
            f64::from(f32::from_bits((((r as f32).to_bits() as i64) + dir) as u32))
        }
    }

    #[test]
    fn roots_round_in_every_direction() {
        use std::cmp::Ordering::{self, *};
        // Each result r checked by exact products: for positive values, r is on the
        // mode's side of the exact value and its neighbour toward it is past it.
        // side(r): the exact value's side of r, from the sign of an exact product.
        let check = |op: Unary, x: f64, fmt: Format, side: &dyn Fn(f64) -> Option<Ordering>| {
            for mode in [Up, Down, Zero] {
                let bits = unary(op, x, fmt, mode).unwrap_or_else(|| panic!("{op:?}({x:e}) {fmt:?} {mode:?}"));
                let r = if fmt == F64 {
                    f64::from_bits(bits)
                } else {
                    f64::from(f32::from_bits(bits as u32))
                };
                // Past the range (an infinite r or neighbour): checked below.
                let Some(s) = side(r) else { continue };
                if s == Equal {
                    continue;
                }
                let want = if mode == Up { Less } else { Greater };
                assert_eq!(s, want, "{op:?}({x:e}) {mode:?} gave {r:e}");
                let toward = step(r, if mode == Up { -1 } else { 1 }, fmt);
                if let Some(t) = side(toward) {
                    assert_eq!(t, want.reverse(), "{op:?}({x:e}) {mode:?}: {r:e} is not the nearest");
                }
            }
        };
        let mut next = crate::rdna3::testing::xorshift32(0x0dd_5eed);
        for n in 0..20_000 {
            // f32 operands of exponents -100..100, and f64 ones over their whole range.
            let x32 = f64::from(f32::from_bits((next() & 0x007f_ffff) | (27 + next() % 200) << 23));
            let x64 = f64::from_bits(
                (u64::from(next()) << 32 | u64::from(next())) & 0x000f_ffff_ffff_ffff
                    | u64::from(1 + next() % 2046) << 52,
            );
            let x64 = if n % 5 == 0 {
                f64::from_bits(x64.to_bits() & 0x000f_ffff_ffff_ffff | 1)
            } else {
                x64
            };
            // rcp: the exact value's side of r is that of 1 - r·x.
            check(Unary::Rcp, x32, F32, &|r| {
                exact::cmp_product(r, x32, 1.0).map(Ordering::reverse)
            });
            check(Unary::Rcp, x64, F64, &|r| {
                exact::cmp_product(r, x64, 1.0).map(Ordering::reverse)
            });
            // sqrt: of x - r².
            check(Unary::Sqrt, x32, F32, &|r| {
                exact::cmp_product(r, r, x32).map(Ordering::reverse)
            });
            check(Unary::Sqrt, x64, F64, &|r| {
                exact::cmp_product(r, r, x64).map(Ordering::reverse)
            });
            // rsq (f32): of 1 - r²·x, r² exact in f64.
            check(Unary::Rsq, x32, F32, &|r| {
                exact::cmp_product(r * r, x32, 1.0).map(Ordering::reverse)
            });
        }
        // f64 rsq: up and down are neighbours unless the root is exact; 1/sqrt(4^k).
        for x in [2.0, 3.0, 0.7, 1e300, 1e-320, 1.5e-310, f64::MAX] {
            let (u, d) = (
                unary(Unary::Rsq, x, F64, Up).unwrap(),
                unary(Unary::Rsq, x, F64, Down).unwrap(),
            );
            assert_eq!(u, d + 1, "rsq({x:e})");
            let near = 1.0 / x.sqrt();
            assert!(near.to_bits() == u || near.to_bits() == d, "rsq({x:e})");
        }
        assert_eq!(unary(Unary::Rsq, 16.0, F64, Up), Some(0.25f64.to_bits()));
        assert_eq!(
            unary(Unary::Rsq, 5e-324, F64, Down),
            Some(2f64.powi(537).to_bits()),
            "2^-1074 is 4^-537"
        );
        assert_eq!(unary(Unary::Rsq, 0.25, F16, Zero), Some(0x4000));
        // Halves: 1/3 toward zero is 0x3555 (nearest 0x3555 lies below 1/3), up 0x3556.
        assert_eq!(unary(Unary::Rcp, 3.0, F16, Zero), Some(0x3555));
        assert_eq!(unary(Unary::Rcp, 3.0, F16, Up), Some(0x3556));
        // Past f64's range: 1 / 2^-1074 is infinity up, the largest finite value toward zero.
        assert_eq!(unary(Unary::Rcp, 5e-324, F64, Up), Some(f64::INFINITY.to_bits()));
        assert_eq!(unary(Unary::Rcp, 5e-324, F64, Zero), Some(f64::MAX.to_bits()));
        assert_eq!(unary(Unary::Rcp, -5e-324, F64, Up), Some((-f64::MAX).to_bits()));
        // Negative operands: -1/3 rounds down in magnitude toward +infinity.
        assert_eq!(unary(Unary::Rcp, -3.0, F32, Up), Some(0xbeaa_aaaa));
        assert_eq!(unary(Unary::Rcp, -3.0, F32, Down), Some(0xbeaa_aaab));
        // Mode-independent results are left to the caller.
        for x in [0.0, -0.0, f64::INFINITY, f64::NAN] {
            assert_eq!(unary(Unary::Rcp, x, F32, Up), None);
        }
        assert_eq!(unary(Unary::Sqrt, -4.0, F32, Up), None);
        // The approximations: the host's f64 value rounded, so up and down are
        // neighbours around it (or equal where it is exact: 2^3).
        for (op, x) in [
            (Unary::Exp, 0.3),
            (Unary::Log, 3.0),
            (Unary::Sin, 0.1),
            (Unary::Cos, 0.1),
        ] {
            let (u, d) = (unary(op, x, F32, Up).unwrap(), unary(op, x, F32, Down).unwrap());
            assert_eq!(u, d + 1, "{op:?}({x})");
        }
        assert_eq!(unary(Unary::Exp, 3.0, F32, Up), Some(u64::from(8f32.to_bits())));
        assert_eq!(unary(Unary::Sin, -0.1, F16, Zero).map(|b| b & 0x8000), Some(0x8000));
        assert_eq!(
            unary(Unary::Log, 0.5, F16, Down),
            Some(0xbc00),
            "log2(0.5) = -1 exactly"
        );
    }

    /// Results are classified by the ISA's operand tables (the destination's format),
    /// not by the name.
    #[test]
    fn opcodes_classify_by_their_result() {
        use super::super::opcodes::{Vop1, Vop3, Vop3p, Vopd};
        use ResultFormat as R;
        assert_eq!(Vop1::V_CVT_F32_I32_E32.result_format(), Some(R::F32));
        assert_eq!(Vop1::V_CVT_I32_F32_E32.result_format(), None);
        assert_eq!(Vop3::V_FMA_F16.result_format(), Some(R::F16));
        assert_eq!(Vop3::V_FREXP_EXP_I32_F64_E64.result_format(), None);
        assert_eq!(Vop3::V_ADD_F64.result_format(), Some(R::F64));
        assert_eq!(Vop3::V_BFE_U32.result_format(), None);
        assert_eq!(Vop3::V_DOT2_BF16_BF16.result_format(), Some(R::Bf16));
        assert_eq!(Vop3p::V_WMMA_F16_16X16X16_F16.result_format(), Some(R::F16));
        assert_eq!(Vopd::V_DUAL_FMAC_F32.result_format(), Some(R::F32));
        // A compare's result is a mask; VOP3SD's scalar destination is a mask beside
        // its vector result.
        assert_eq!(Vop3::V_CMP_LT_F32_E64.result_format(), None);
        assert_eq!(
            super::super::opcodes::Vop3sd::V_DIV_SCALE_F32.result_format(),
            Some(R::F32)
        );
        assert_eq!(format_of(R::Bf16), F32);
        assert_eq!(base("v_dual_fmac_f32"), "v_fmac_f32");
        assert_eq!(base("v_sqrt_f32_e64"), "v_sqrt_f32");
    }

    #[test]
    fn directed_modes_refuse_what_they_do_not_compute() {
        use ResultFormat::{F16 as H, F32 as S, F64 as D};
        let mut w = Wave::new(8, 0);
        // Toward zero for f32 (bits 1:0 = 3), nearest for f16/f64.
        w.mode |= 3;
        assert!(check(&w, Some(S), "v_add_f32_e64").is_ok());
        assert!(check(&w, Some(S), "v_min_f32_e64").is_ok());
        assert!(check(&w, None, "v_cvt_i32_f32_e64").is_ok());
        assert!(
            check(&w, Some(H), "v_sqrt_f16_e64").is_ok(),
            "f16 rounds to nearest here"
        );
        assert!(check(&w, Some(S), "v_sqrt_f32_e64").is_ok());
        assert!(check(&w, Some(S), "v_dot2_f32_f16").is_ok());
        assert!(check(&w, Some(S), "v_dual_dot2acc_f32_bf16").is_ok());
        assert!(check(&w, Some(S), "v_wmma_f32_16x16x16_f16").is_ok());
        // A float result this module does not know is refused, naming the mode.
        let e = check(&w, Some(S), "v_made_up_f32").unwrap_err().to_string();
        assert!(e.contains("v_made_up_f32") && e.contains("toward zero"), "{e}");
        // f16/f64 toward +infinity.
        w.mode = (w.mode & !MODE_ROUND) | 1 << 2;
        assert!(
            check(&w, Some(S), "v_made_up_f32").is_ok(),
            "f32 rounds to nearest here"
        );
        assert!(check(&w, Some(D), "v_rcp_f64_e64").is_ok());
        assert!(check(&w, Some(D), "v_fma_f64").is_ok());
        assert!(check(&w, Some(D), "v_made_up_f64").is_err());
    }

    /// Directed f32 results against a reference built independently: the host's
    /// nearest result, moved one ulp when the exact value (the f64 product, or the f64
    /// sum plus its TwoSum error) lies on the other side of it.
    #[test]
    fn directed_f32_matches_a_reference_through_f64() {
        fn directed(s: f64, err: f64, mode: Round) -> f32 {
            let r = s as f32;
            if !r.is_finite() {
                // Overflow: the reference is the largest finite value or infinity.
                let max = f32::MAX.copysign(s as f32);
                return match (mode, s > 0.0) {
                    (Zero, _) | (Up, false) | (Down, true) => max,
                    _ => r,
                };
            }
            // Where the exact value s + err lies relative to r.
            let diff = (s - r as f64) + err;
            let step_up = |x: f32| {
                if x == 0.0 {
                    f32::from_bits(1)
                } else if x > 0.0 {
                    f32::from_bits(x.to_bits() + 1)
                } else {
                    f32::from_bits(x.to_bits() - 1)
                }
            };
            let step_down = |x: f32| -step_up(-x);
            match mode {
                NearestEven => r,
                Up if diff > 0.0 => step_up(r),
                Down if diff < 0.0 => step_down(r),
                Zero if diff != 0.0 && (diff > 0.0) != (r > 0.0) && r != 0.0 => {
                    if r > 0.0 {
                        step_down(r)
                    } else {
                        step_up(r)
                    }
                }
                Zero if r == 0.0 => 0.0f32.copysign(s as f32),
                _ => r,
            }
        }
        let mut next = crate::rdna3::testing::xorshift32(0x2545_f491);
        for _ in 0..100_000 {
            let (a, b) = (f32::from_bits(next()), f32::from_bits(next()));
            // Operands within 2^40 of each other, so the f64 sum's TwoSum error is exact.
            let b = if (a.abs() / b.abs()).log2().abs() > 40.0 {
                a * 1.5
            } else {
                b
            };
            if !a.is_finite() || !b.is_finite() || (a as f64 * b as f64).abs() < f64::from(f32::MIN_POSITIVE) {
                continue;
            }
            for mode in [NearestEven, Up, Down, Zero] {
                let p = a as f64 * b as f64;
                let want = directed(p, 0.0, mode);
                assert_eq!(mul32(a, b, mode).to_bits(), want.to_bits(), "{a:e} * {b:e} {mode:?}");
                let (x, y) = (a as f64, b as f64);
                let sum = x + y;
                let v = sum - x;
                let err = (x - (sum - v)) + (y - v);
                let got = add32(a, b, mode);
                if sum != 0.0 || err != 0.0 {
                    let want = directed(sum, err, mode);
                    assert_eq!(got.to_bits(), want.to_bits(), "{a:e} + {b:e} {mode:?}");
                }
            }
        }
    }

    #[test]
    fn halves_round_once() {
        // 1 + 2^-11 + 2^-22 as a half: nearest goes up (above the tie), toward zero down.
        let x = 1.0 + (-11f64).exp2() + (-22f64).exp2();
        assert_eq!(to16(x, NearestEven), 0x3c01);
        assert_eq!(to16(x, Zero), 0x3c00);
        assert_eq!(to16(-x, Down), 0xbc01);
        // fma of halves whose exact value needs more than 53 bits: 2^-24 × 2^-24 + 1.0
        // rounds to 1.0 nearest, up to the next half above 1 toward +infinity.
        let t = (-24f64).exp2();
        assert_eq!(fma16(t, t, 1.0, NearestEven), 0x3c00);
        assert_eq!(fma16(t, t, 1.0, Up), 0x3c01);
        // To nearest, the rounded-to-odd f64 path agrees with the exact one on every
        // kind of operand.
        let mut bits = crate::rdna3::testing::xorshift32(0x1234_5678);
        let mut half_of = || f64::from(half::to_f32(bits() as u16));
        for _ in 0..200_000 {
            let (a, b, c) = (half_of(), half_of(), half_of());
            if let Some(r) = exact::fma(a, b, c, 0, F16, NearestEven) {
                assert_eq!(fma16(a, b, c, NearestEven), r as u16, "fma {a:e} {b:e} {c:e}");
            }
        }
        // Overflow toward zero stays at 65504.
        assert_eq!(add16(65504.0, 65504.0, Zero), 0x7bff);
        assert_eq!(add16(65504.0, 65504.0, NearestEven), 0x7c00);
        // Integer conversions: 2049 is not a half; up gives 2050, down 2048.
        assert_eq!(to16(2049.0, Up), 0x6801);
        assert_eq!(to16(2049.0, Down), 0x6800);
    }
}
