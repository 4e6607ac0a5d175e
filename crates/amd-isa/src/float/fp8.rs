//! The 8-bit floats of RDNA4's conversions, dot products and WMMA, in the OCP 8-bit
//! floating point formats: FP8 is E4M3 (bias 7, no infinities, S.1111.111 the only
//! NaN, 448 the largest value), BF8 is E5M2 (bias 15, IEEE-like infinities and NaNs).
//! tinygrad's emulator takes them so (`dtypes.fp8e4m3`, `dtypes.fp8e5m2`).

/// Which 8-bit format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fp8 {
    /// E4M3 (`fp8`).
    E4m3,
    /// E5M2 (`bf8`).
    E5m2,
}

impl Fp8 {
    /// (exponent bits, mantissa bits, bias).
    const fn shape(self) -> (u32, u32, i32) {
        match self {
            Fp8::E4m3 => (4, 3, 7),
            Fp8::E5m2 => (5, 2, 15),
        }
    }

    /// The value of `b` (exact in f32).
    pub(crate) fn to_f32(self, b: u8) -> f32 {
        let (e_bits, m_bits, bias) = self.shape();
        let sign = if b & 0x80 != 0 { -1.0f32 } else { 1.0 };
        let e = u32::from(b & 0x7f) >> m_bits;
        let m = u32::from(b) & ((1 << m_bits) - 1);
        let e_max = (1 << e_bits) - 1;
        match self {
            Fp8::E4m3 if e == e_max && m == (1 << m_bits) - 1 => return f32::NAN.copysign(sign),
            Fp8::E5m2 if e == e_max && m == 0 => return f32::INFINITY * sign,
            Fp8::E5m2 if e == e_max => return f32::NAN.copysign(sign),
            _ => {}
        }
        let frac = m as f32 / (1 << m_bits) as f32;
        let v = if e == 0 {
            frac * 2f32.powi(1 - bias)
        } else {
            (1.0 + frac) * 2f32.powi(e as i32 - bias)
        };
        sign * v
    }

    /// `x` rounded to nearest even, without saturation: a NaN stays NaN; beyond the
    /// largest value E4M3 gives its NaN and E5M2 an infinity.
    pub(crate) fn encode(self, x: f32) -> u8 {
        let (e_bits, m_bits, bias) = self.shape();
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        let nan = match self {
            Fp8::E4m3 => 0x7f,
            Fp8::E5m2 => 0x7e,
        };
        if x.is_nan() {
            return sign | nan;
        }
        let overflow = match self {
            Fp8::E4m3 => nan,
            Fp8::E5m2 => 0x7c,
        };
        let a = f64::from(x.abs());
        if a.is_infinite() {
            return sign | overflow;
        }
        // The value in units of the smallest subnormal, rounded to nearest even.
        let min_exp = 1 - bias - m_bits as i32;
        let (e_top, m_top) = match self {
            Fp8::E4m3 => ((1 << e_bits) - 1, (1 << m_bits) - 2),
            Fp8::E5m2 => ((1 << e_bits) - 2, (1 << m_bits) - 1),
        };
        // The exponent of `a` (its binade), not below the subnormals'.
        // (An f32 subnormal is far below the 8-bit formats' subnormals: its binade
        // does not matter, it rounds to zero.)
        let exp = ((x.to_bits() >> 23 & 0xff) as i32 - 127).max(1 - bias);
        let quantum = 2f64.powi(exp - m_bits as i32);
        let q = (a / quantum).round_ties_even();
        let units = q * quantum / 2f64.powi(min_exp);
        // Encode from the rounded value (a carry into the next binade is fine).
        let units = units as u64;
        if units == 0 {
            return sign;
        }
        let largest = ((1u64 << m_bits) + m_top as u64) << (e_top - 1);
        if units > largest {
            return sign | overflow;
        }
        let (e, m) = if units < 1 << m_bits {
            (0, units)
        } else {
            let top = 63 - units.leading_zeros() as i32; // the leading one's position
            let e = top - m_bits as i32 + 1;
            (e as u64, (units >> (e - 1)) & ((1 << m_bits) - 1))
        };
        sign | (e << m_bits | m) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::Fp8::{E4m3, E5m2};

    #[test]
    fn every_value_round_trips() {
        for f in [E4m3, E5m2] {
            for b in 0..=255u8 {
                let x = f.to_f32(b);
                if x.is_nan() {
                    assert!(f.encode(x) & 0x7f == f.encode(f32::NAN) & 0x7f, "{f:?} {b:#x}");
                } else {
                    assert_eq!(f.encode(x), b, "{f:?} {b:#x} = {x}");
                }
            }
        }
    }

    #[test]
    fn known_values_and_rounding() {
        assert_eq!(E4m3.to_f32(0x7e), 448.0);
        assert_eq!(E4m3.to_f32(0x01), 2f32.powi(-9));
        assert!(E4m3.to_f32(0x7f).is_nan());
        assert_eq!(E5m2.to_f32(0x7b), 57344.0);
        assert_eq!(E5m2.to_f32(0x7c), f32::INFINITY);
        assert!(E5m2.to_f32(0x7d).is_nan());
        assert_eq!(E5m2.to_f32(0x01), 2f32.powi(-16));
        // 464 is halfway between 448 and the first value past it: ties to even keep
        // 448 (mantissa 110); anything more overflows to E4M3's NaN. E5M2's halfway
        // point, 61440, ties to the even side past 57344 (mantissa 11): infinity.
        assert_eq!(E4m3.encode(464.0), 0x7e);
        assert_eq!(E4m3.encode(465.0), 0x7f);
        assert_eq!(E4m3.encode(-1e9), 0xff);
        assert_eq!(E5m2.encode(61439.0), 0x7b);
        assert_eq!(E5m2.encode(61440.0), 0x7c);
        // 1.0625 is halfway between 1.0 and 1.125 (E4M3): even is 1.0; 1.1875 to 1.25.
        assert_eq!(E4m3.encode(1.0625), 0x38);
        assert_eq!(E4m3.encode(1.1875), 0x3a);
        // Below half the smallest subnormal: zero, with the sign.
        assert_eq!(E4m3.encode(2f32.powi(-11)), 0);
        assert_eq!(E4m3.encode(-2f32.powi(-11)), 0x80);
        assert_eq!(E4m3.encode(3.0 * 2f32.powi(-11)), 0x01);
    }
}
