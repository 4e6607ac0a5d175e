//! IEEE binary16 conversions, with round-to-nearest-even.

/// The value of half-precision bits `h`.
pub(crate) fn to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let (exp, mant) = ((h >> 10) & 0x1f, (h & 0x3ff) as f32);
    match exp {
        0 => sign * mant * (-24f32).exp2(),
        31 if mant == 0.0 => sign * f32::INFINITY,
        31 => f32::from_bits(0x7fc0_0000 | ((h as u32 & 0x3ff) << 13)) * sign.signum(),
        _ => sign * (1.0 + mant / 1024.0) * (exp as f32 - 15.0).exp2(),
    }
}

/// `d` rounded to the nearest half (ties to even), overflowing to infinity.
pub(crate) fn from_f64(d: f64) -> u16 {
    let sign = if d.is_sign_negative() { 0x8000 } else { 0 };
    let a = d.abs();
    if a.is_nan() {
        return 0x7e00 | sign;
    }
    // 65504 is the largest half; from halfway to the next binade up, infinity.
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 6.103_515_625e-5 {
        // Subnormal: whole units of 2^-24 (1024 of them rounds up to the least normal).
        return sign | (a * 16_777_216.0).round_ties_even() as u16;
    }
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let m = a / (e as f64).exp2();
    let q = ((m - 1.0) * 1024.0).round_ties_even() as u16;
    let (e, q) = if q == 1024 { (e + 1, 0) } else { (e, q) };
    sign | ((e + 15) as u16) << 10 | q
}

#[cfg(test)]
mod tests {
    use super::*;

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
