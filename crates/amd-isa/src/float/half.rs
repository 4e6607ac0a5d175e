//! IEEE binary16 conversions, with round-to-nearest-even.

/// The value of half-precision bits `h`, built from its fields (every half is exact
/// in f32; a NaN keeps its payload, quieted).
#[inline]
pub(crate) fn to_f32(h: u16) -> f32 {
    // Exact: every half is an f32 (a NaN's payload and quiet bit carried over).
    to_f64(h) as f32
}

/// The value of half-precision bits `h` as an f64, built from its fields (exact; a
/// NaN keeps its payload, quieted).
#[inline(always)]
pub(crate) fn to_f64(h: u16) -> f64 {
    let sign = u64::from(h & 0x8000) << 48;
    let (exp, mant) = (u64::from(h >> 10 & 0x1f), u64::from(h & 0x3ff));
    match exp {
        // Subnormal: mant × 2^-24, exact.
        0 => f64::from_bits(sign | (mant as f64 * f64::from_bits(0x3e70_0000_0000_0000)).to_bits()),
        31 if mant == 0 => f64::from_bits(sign | 0x7ff0_0000_0000_0000),
        31 => f64::from_bits(sign | 0x7ff8_0000_0000_0000 | mant << 42),
        _ => f64::from_bits(sign | (exp + 1008) << 52 | mant << 42),
    }
}

/// `d` rounded to the nearest half (ties to even), overflowing to infinity; a NaN is
/// the quiet NaN of its sign.
pub(crate) fn from_f64(d: f64) -> u16 {
    nearest_even(d).unwrap_or_else(|| {
        let sign = if d.is_sign_negative() { 0x8000 } else { 0 };
        sign | if d.is_nan() { 0x7e00 } else { 0x7c00 }
    })
}

/// Finite `x` rounded to the nearest half, ties to even, from its bits (what
/// [`crate::float::exact::Exact::round`] gives for f16 in that mode, without its
/// 128-bit arithmetic): infinity past the largest half, a signed zero below half the
/// smallest denormal. `None` for infinities and NaN.
#[inline]
pub(crate) fn nearest_even(x: f64) -> Option<u16> {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    // Where the result is a normal half or the overflow to infinity (|x| from 2^-14 to
    // below 2^16), without a branch: the 52-bit significand rounded to 10 bits in place
    // (a carry out of it moves the exponent up, which past 2^15 makes the infinity's
    // bits), then the exponent rebased from f64's bias to the half's.
    let abs = bits & !(1 << 63);
    if ((1023 - 14) << 52..(1023 + 16) << 52).contains(&abs) {
        return Some(sign | (super::exact::round_off(abs, 42) - ((1023 - 15) << 10)) as u16);
    }
    let field = ((bits >> 52) & 0x7ff) as i32;
    if field == 0x7ff {
        return None;
    }
    if field == 0 {
        // Zero or an f64 denormal: far below half of 2^-24.
        return Some(sign);
    }
    let e = field - 1023;
    if e > 15 {
        return Some(sign | 0x7c00);
    }
    // Below 2^-14 (the range above went the first way): a denormal result, whose last
    // bit weighs 2^-24; value = mant × 2^(e - 52).
    let mant = bits & ((1u64 << 52) - 1) | 1 << 52;
    let shift = 42 + (-14 - e) as u32;
    if shift > 54 {
        // Below half of 2^-24 (mant < 2^53).
        return Some(sign);
    }
    let (r, rem, half) = (mant >> shift, mant & ((1u64 << shift) - 1), 1u64 << (shift - 1));
    let r = r + u64::from(rem > half || (rem == half && r & 1 == 1));
    // Units of 2^-24 (1024 of them: the least normal, whose bits those are).
    Some(sign | r as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`nearest_even`] is exact rounding: against [`crate::float::exact`] on every
    /// half, the midpoints between neighbours and the values next to them, and random
    /// doubles over the halves' range and beyond.
    #[test]
    fn nearest_even_is_exact_rounding() {
        use crate::float::exact::{F16, Round, convert};
        let check = |x: f64| {
            let want = convert(x, F16, Round::NearestEven).map(|b| b as u16);
            assert_eq!(nearest_even(x), want, "{x:e} ({:#018x})", x.to_bits());
        };
        for h in 0..0x7c00u16 {
            let (lo, hi) = (f64::from(to_f32(h)), f64::from(to_f32(h + 1)));
            for x in [lo, (lo + hi) / 2.0, hi] {
                for v in [x, -x] {
                    check(v);
                    check(f64::from_bits(v.to_bits() + 1));
                    check(f64::from_bits(v.to_bits().wrapping_sub(1)));
                }
            }
        }
        let mut r = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            // Exponents from 2^-40 to 2^20, any significand and sign.
            let field = 1023 - 40 + (r >> 52) % 61;
            check(f64::from_bits(r & 0x800f_ffff_ffff_ffff | field << 52));
        }
        for x in [
            0.0, -0.0, 65504.0, 65519.99, 65520.0, 1e300, -1e300, 5e-324, 2.98e-8, 2.99e-8,
        ] {
            check(x);
        }
        assert_eq!(nearest_even(f64::INFINITY), None);
        assert_eq!(nearest_even(f64::NAN), None);
    }

    /// Every half converts to the value its fields give (checked against the formula
    /// written with powers of two), in f32 and in f64; an infinity to the infinity of
    /// its sign, a NaN to the quiet NaN of its sign with its payload.
    #[test]
    fn every_half_converts() {
        for h in 0..=u16::MAX {
            let sign = if h & 0x8000 != 0 { -1.0f64 } else { 1.0 };
            let (exp, mant) = (i32::from(h >> 10 & 0x1f), f64::from(h & 0x3ff));
            let (narrow, wide) = (to_f32(h), to_f64(h));
            let want = match exp {
                0 => sign * mant * 2f64.powi(-24),
                31 if mant == 0.0 => sign * f64::INFINITY,
                31 => {
                    let payload = u32::from(h & 0x3ff);
                    assert_eq!(
                        narrow.to_bits(),
                        u32::from(h & 0x8000) << 16 | 0x7fc0_0000 | payload << 13
                    );
                    f64::from_bits(u64::from(h & 0x8000) << 48 | 0x7ff8_0000_0000_0000 | u64::from(payload) << 42)
                }
                _ => sign * (1.0 + mant / 1024.0) * 2f64.powi(exp - 15),
            };
            assert_eq!(wide.to_bits(), want.to_bits(), "{h:#x}");
            if !want.is_nan() {
                assert_eq!(f64::from(narrow).to_bits(), want.to_bits(), "{h:#x}");
            }
        }
    }

    #[test]
    fn round_trips_every_half() {
        for h in 0..=u16::MAX {
            let x = to_f32(h);
            if x.is_nan() {
                assert!(to_f32(from_f64(x as f64)).is_nan());
            } else {
                assert_eq!(from_f64(x as f64), h, "{h:#06x} = {x}");
            }
        }
    }

    #[test]
    fn rounds_to_nearest_even() {
        assert_eq!(from_f64(1.0 + 1.0 / 2048.0), 0x3c00, "a tie goes to the even 1.0");
        assert_eq!(from_f64(1.0 + 3.0 / 2048.0), 0x3c02, "a tie goes to the even 1+2/1024");
        assert_eq!(from_f64(65519.0), 0x7bff);
        assert_eq!(from_f64(65520.0), 0x7c00);
        assert_eq!(from_f64(-1e-9), 0x8000);
        assert_eq!(from_f64(3.0 * (-25f64).exp2()), 0x0002, "subnormal tie to even");
        assert_eq!(from_f64(1023.5 * (-24f64).exp2()), 0x0400, "rounds up into the normals");
    }
}
