//! The 8-bit floats of RDNA4's and CDNA3's conversions, dot products and matrix
//! instructions. RDNA4 takes the OCP 8-bit floating point formats: FP8 is E4M3 (bias 7,
//! no infinities, S.1111.111 the only NaN, 448 the largest value), BF8 is E5M2 (bias 15,
//! IEEE-like infinities and NaNs); tinygrad's emulator takes them so
//! (`dtypes.fp8e4m3`, `dtypes.fp8e5m2`). CDNA3 (gfx940–gfx942) takes their FNUZ
//! variants (LLVM's `Float8E4M3FNUZ` and `Float8E5M2FNUZ`, tinygrad's
//! `dtypes.fp8e4m3fnuz` and `dtypes.fp8e5m2fnuz`): biases 8 and 16, no infinities,
//! no negative zero, 1.0000.000 (0x80) the only NaN, 240 and 57344 the largest values.

/// Which 8-bit format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fp8 {
    /// OCP E4M3 (RDNA4's `fp8`).
    E4m3,
    /// OCP E5M2 (RDNA4's `bf8`).
    E5m2,
    /// E4M3 FNUZ (CDNA3's `fp8`).
    E4m3Fnuz,
    /// E5M2 FNUZ (CDNA3's `bf8`).
    E5m2Fnuz,
}

/// FNUZ's one NaN.
const FNUZ_NAN: u8 = 0x80;

impl Fp8 {
    /// The `fp8` (E4M3) or `bf8` (E5M2) format, as OCP's or (`fnuz`) as FNUZ.
    pub(crate) const fn of(bf8: bool, fnuz: bool) -> Fp8 {
        match (bf8, fnuz) {
            (false, false) => Fp8::E4m3,
            (true, false) => Fp8::E5m2,
            (false, true) => Fp8::E4m3Fnuz,
            (true, true) => Fp8::E5m2Fnuz,
        }
    }

    /// Whether it is a `bf8` (E5M2) format.
    pub(crate) const fn is_bf8(self) -> bool {
        matches!(self, Fp8::E5m2 | Fp8::E5m2Fnuz)
    }

    /// Whether it is an FNUZ format.
    const fn fnuz(self) -> bool {
        matches!(self, Fp8::E4m3Fnuz | Fp8::E5m2Fnuz)
    }

    /// (exponent bits, mantissa bits, bias).
    const fn shape(self) -> (u32, u32, i32) {
        match self {
            Fp8::E4m3 => (4, 3, 7),
            Fp8::E5m2 => (5, 2, 15),
            Fp8::E4m3Fnuz => (4, 3, 8),
            Fp8::E5m2Fnuz => (5, 2, 16),
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
            _ if self.fnuz() && b == FNUZ_NAN => return f32::NAN,
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
    /// largest value OCP's E4M3 gives its NaN and E5M2 an infinity, the FNUZ formats
    /// their NaN (an infinity too: they have none); what rounds to zero is +0 in FNUZ.
    pub(crate) fn encode(self, x: f32) -> u8 {
        let (e_bits, m_bits, bias) = self.shape();
        let fnuz = self.fnuz();
        let sign = if x.is_sign_negative() && !fnuz { 0x80u8 } else { 0 };
        // FNUZ's sign bit is set in every nonzero negative value: put back below.
        let negative = if x.is_sign_negative() && fnuz { 0x80u8 } else { 0 };
        let nan = match self {
            Fp8::E4m3 => 0x7f,
            Fp8::E5m2 => 0x7e,
            Fp8::E4m3Fnuz | Fp8::E5m2Fnuz => FNUZ_NAN,
        };
        if x.is_nan() {
            return sign | nan;
        }
        let overflow = match self {
            Fp8::E4m3 | Fp8::E4m3Fnuz | Fp8::E5m2Fnuz => nan,
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
            // Every exponent and mantissa is a finite value's.
            Fp8::E4m3Fnuz | Fp8::E5m2Fnuz => ((1 << e_bits) - 1, (1 << m_bits) - 1),
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
        let sign = sign | negative;
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
    use super::Fp8::{E4m3, E4m3Fnuz, E5m2, E5m2Fnuz};

    #[test]
    fn every_value_round_trips() {
        for f in [E4m3, E5m2, E4m3Fnuz, E5m2Fnuz] {
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

    /// The FNUZ formats as LLVM's APFloat and AMD's tables define them: 0x80 the one
    /// NaN, no infinity, no negative zero, biases 8 and 16.
    #[test]
    fn fnuz_values_and_rounding() {
        assert!(E4m3Fnuz.to_f32(0x80).is_nan());
        assert!(E5m2Fnuz.to_f32(0x80).is_nan());
        assert_eq!(E4m3Fnuz.to_f32(0x7f), 240.0);
        assert_eq!(E4m3Fnuz.to_f32(0xff), -240.0);
        assert_eq!(E4m3Fnuz.to_f32(0x40), 1.0);
        assert_eq!(E4m3Fnuz.to_f32(0x01), 2f32.powi(-10));
        assert_eq!(E4m3Fnuz.to_f32(0x08), 2f32.powi(-7));
        assert_eq!(E5m2Fnuz.to_f32(0x7f), 57344.0);
        assert_eq!(E5m2Fnuz.to_f32(0x40), 1.0);
        assert_eq!(E5m2Fnuz.to_f32(0x01), 2f32.powi(-17));
        assert_eq!(E5m2Fnuz.to_f32(0xfc), -32768.0);
        // NaN, infinities and what is past the largest value after rounding: NaN.
        for f in [E4m3Fnuz, E5m2Fnuz] {
            for x in [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, -1e30] {
                assert_eq!(f.encode(x), 0x80, "{f:?} {x}");
            }
            // No negative zero: -0 and what rounds to zero from below are +0.
            assert_eq!(f.encode(-0.0), 0);
            assert_eq!(f.encode(-1e-30), 0);
        }
        // 248 is halfway between 240 (mantissa 111) and 256: ties to even go up, past
        // the largest value; just below stays 240.
        assert_eq!(E4m3Fnuz.encode(247.9), 0x7f);
        assert_eq!(E4m3Fnuz.encode(248.0), 0x80);
        assert_eq!(E4m3Fnuz.encode(-247.9), 0xff);
        assert_eq!(E5m2Fnuz.encode(61439.0), 0x7f);
        assert_eq!(E5m2Fnuz.encode(61440.0), 0x80);
        // Subnormals: half the smallest rounds to even (0), three halves to 2 units.
        assert_eq!(E4m3Fnuz.encode(2f32.powi(-11)), 0);
        assert_eq!(E4m3Fnuz.encode(3.0 * 2f32.powi(-11)), 0x02);
        assert_eq!(E4m3Fnuz.encode(-3.0 * 2f32.powi(-11)), 0x82);
        assert_eq!(E4m3Fnuz.encode(1.0625), 0x40);
        assert_eq!(E4m3Fnuz.encode(-2.5), 0xca);
    }
}
