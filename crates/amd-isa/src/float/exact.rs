//! Exact arithmetic rounded once, to f16, f32 or f64 in any of MODE's four rounding
//! modes: what the hardware computes where the host's own floating point (always
//! nearest-even here; its environment is never changed) cannot give it directly —
//! `v_div_fmas`'s scaled fused multiply-add, whose result may land among the denormals
//! or past the largest finite value, and every IEEE operation under a directed
//! rounding mode. Values are integers times powers of two in `u128`, so nothing is
//! rounded before the one rounding the format asks for.

/// An IEEE rounding direction, as MODE's 2-bit round fields encode it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Round {
    /// 0: to nearest, ties to even.
    NearestEven,
    /// 1: toward +infinity.
    Up,
    /// 2: toward -infinity.
    Down,
    /// 3: toward zero.
    Zero,
}

impl Round {
    /// The mode a 2-bit MODE round field names.
    pub(crate) fn from_bits(bits: u32) -> Round {
        match bits & 3 {
            0 => Round::NearestEven,
            1 => Round::Up,
            2 => Round::Down,
            _ => Round::Zero,
        }
    }

    /// Its name, for errors.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Round::NearestEven => "nearest-even",
            Round::Up => "toward +infinity",
            Round::Down => "toward -infinity",
            Round::Zero => "toward zero",
        }
    }
}

/// A binary floating-point format.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Format {
    /// Significand bits, the implicit one included.
    precision: i32,
    /// The largest exponent of a finite value (also the exponent bias).
    emax: i32,
    /// Exponent-field bits.
    exp_bits: u32,
}

pub(crate) const F16: Format = Format {
    precision: 11,
    emax: 15,
    exp_bits: 5,
};
pub(crate) const F32: Format = Format {
    precision: 24,
    emax: 127,
    exp_bits: 8,
};
pub(crate) const F64: Format = Format {
    precision: 53,
    emax: 1023,
    exp_bits: 11,
};

impl Format {
    /// The smallest exponent of a normal value.
    fn emin(self) -> i32 {
        1 - self.emax
    }

    /// Bits in the encoding.
    fn width(self) -> u32 {
        self.precision as u32 + self.exp_bits
    }

    /// The encoding of infinity with the sign of `neg`.
    fn infinity(self, neg: bool) -> u64 {
        self.sign(neg) | ((1u64 << self.exp_bits) - 1) << (self.precision - 1)
    }

    /// The encoding of the largest finite value with the sign of `neg`.
    fn max_finite(self, neg: bool) -> u64 {
        self.infinity(neg) - 1
    }

    fn sign(self, neg: bool) -> u64 {
        u64::from(neg) << (self.width() - 1)
    }
}

/// A finite value `±mant × 2^exp`. A sum ([`Exact::add`]) may carry, in `mant`'s last
/// bit, bits jammed together from far below the larger operand: at least 70 bits under
/// its top, so below any rounding position (53 bits at most) by more than two places,
/// where rounding sees them only as "more than zero".
#[derive(Clone, Copy, Debug)]
pub(crate) struct Exact {
    neg: bool,
    mant: u128,
    exp: i32,
}

impl Exact {
    /// `x` exactly; `None` for infinities and NaN.
    pub(crate) fn of(x: f64) -> Option<Exact> {
        if !x.is_finite() {
            return None;
        }
        let bits = x.to_bits();
        let field = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1 << 52) - 1);
        let (mant, exp) = if field == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, field - 1075)
        };
        Some(Exact {
            neg: x.is_sign_negative(),
            mant: u128::from(mant),
            exp,
        })
    }

    /// Whether the value is zero.
    fn is_zero(&self) -> bool {
        self.mant == 0
    }

    /// `self × 2^k`, exactly.
    pub(crate) fn scaled(self, k: i32) -> Exact {
        Exact {
            exp: self.exp.saturating_add(k),
            ..self
        }
    }

    /// The exact product of two values of one float each (at most 53 significant bits,
    /// so the product has at most 106).
    pub(crate) fn mul(a: Exact, b: Exact) -> Exact {
        Exact {
            neg: a.neg != b.neg,
            mant: a.mant * b.mant,
            exp: a.exp + b.exp,
        }
    }

    /// The sum of two values of at most 106 significant bits (floats or their exact
    /// products), exact but for a jammed last bit far below the larger operand's top
    /// (see [`Exact`]); an exactly zero sum of opposite signs is +0 (or -0 rounding toward -infinity,
    /// as IEEE 754 says).
    pub(crate) fn add(a: Exact, b: Exact, mode: Round) -> Exact {
        if a.is_zero() && b.is_zero() {
            let neg = if a.neg == b.neg { a.neg } else { mode == Round::Down };
            return Exact { neg, ..a };
        }
        if a.is_zero() {
            return b;
        }
        if b.is_zero() {
            return a;
        }
        // Both significands to bit 125 (headroom for the carry), then the one with the
        // smaller exponent shifted right with its lost bits jammed into its last. At
        // most 106 significant bits leave 19 zeros below: a shift of up to 19 loses
        // nothing (so a cancellation is exact), and past that the larger operand keeps
        // the sum's top at bit 124 or above, 70 bits over the jammed one.
        let (a, b) = (a.normalized(), b.normalized());
        let (big, small) = if a.exp >= b.exp { (a, b) } else { (b, a) };
        let d = (big.exp - small.exp) as u32;
        let small_mant = if d == 0 {
            small.mant
        } else if d >= 127 {
            1
        } else {
            small.mant >> d | u128::from(small.mant & ((1u128 << d) - 1) != 0)
        };
        let (neg, mant) = if big.neg == small.neg {
            (big.neg, big.mant + small_mant)
        } else if big.mant >= small_mant {
            (big.neg, big.mant - small_mant)
        } else {
            (small.neg, small_mant - big.mant)
        };
        if mant == 0 {
            // Equal magnitudes cancelled exactly (nothing was jammed: d was 0).
            return Exact {
                neg: mode == Round::Down,
                mant: 0,
                exp: 0,
            };
        }
        Exact {
            neg,
            mant,
            exp: big.exp,
        }
    }

    /// The significand moved up to bit 125.
    fn normalized(self) -> Exact {
        if self.mant == 0 {
            return self;
        }
        let shift = self.mant.leading_zeros() as i32 - 2;
        if shift <= 0 {
            return self;
        }
        Exact {
            mant: self.mant << shift,
            exp: self.exp - shift,
            ..self
        }
    }

    /// The value rounded once to `fmt` in `mode`: the encoding's bits (overflow gives
    /// infinity or the largest finite value as the mode says, underflow a denormal or
    /// a signed zero).
    pub(crate) fn round(self, fmt: Format, mode: Round) -> u64 {
        let (mant, exp) = (self.mant, self.exp);
        let sign = fmt.sign(self.neg);
        if mant == 0 {
            return sign;
        }
        let top = exp + (127 - mant.leading_zeros() as i32);
        // The weight of the result's last bit: the format's precision below the top
        // bit, but never below the denormals' last bit.
        let mut quantum = (top - (fmt.precision - 1)).max(fmt.emin() - (fmt.precision - 1));
        let shift = quantum - exp;
        // r: the truncated significand; rem against half a unit of r's last place.
        let (mut r, above_half, at_half, inexact) = if shift <= 0 {
            // `mant` fits below the quantum: exact (shift ≥ -(precision) here).
            (mant << (-shift) as u32, false, false, false)
        } else if shift > 128 {
            (0, false, false, true)
        } else {
            let r = if shift == 128 { 0 } else { mant >> shift };
            let rem = if shift == 128 {
                mant
            } else {
                mant & ((1u128 << shift) - 1)
            };
            let half = 1u128 << (shift - 1);
            (r, rem > half, rem == half, rem != 0)
        };
        let up = match mode {
            Round::NearestEven => above_half || (at_half && r & 1 == 1),
            Round::Zero => false,
            Round::Up => inexact && !self.neg,
            Round::Down => inexact && self.neg,
        };
        if up {
            r += 1;
            if r == 1u128 << fmt.precision {
                r >>= 1;
                quantum += 1;
            }
        }
        if quantum + fmt.precision - 1 > fmt.emax {
            // Overflow: infinity unless the mode rounds toward zero from this side.
            let to_inf = match mode {
                Round::NearestEven => true,
                Round::Zero => false,
                Round::Up => !self.neg,
                Round::Down => self.neg,
            };
            return if to_inf {
                fmt.infinity(self.neg)
            } else {
                fmt.max_finite(self.neg)
            };
        }
        let hidden = 1u128 << (fmt.precision - 1);
        if r < hidden {
            // A denormal (or zero): exponent field 0, quantum at the denormals'.
            return sign | r as u64;
        }
        let field = (quantum + fmt.precision - 1 + fmt.emax) as u64;
        sign | field << (fmt.precision - 1) | (r - hidden) as u64
    }
}

/// `a + b` rounded once to `fmt` in `mode` (operands exact in f64); `None` when an
/// operand is infinite or NaN (the host's result is then exact in every mode).
pub(crate) fn add(a: f64, b: f64, fmt: Format, mode: Round) -> Option<u64> {
    Some(Exact::add(Exact::of(a)?, Exact::of(b)?, mode).round(fmt, mode))
}

/// `a × b` rounded once to `fmt` in `mode`; `None` for infinite or NaN operands.
pub(crate) fn mul(a: f64, b: f64, fmt: Format, mode: Round) -> Option<u64> {
    Some(Exact::mul(Exact::of(a)?, Exact::of(b)?).round(fmt, mode))
}

/// `(a × b + c) × 2^scale` rounded once to `fmt` in `mode`; `None` for infinite or NaN
/// operands.
pub(crate) fn fma(a: f64, b: f64, c: f64, scale: i32, fmt: Format, mode: Round) -> Option<u64> {
    let p = Exact::mul(Exact::of(a)?, Exact::of(b)?);
    Some(Exact::add(p, Exact::of(c)?, mode).scaled(scale).round(fmt, mode))
}

/// `x` (exact in f64) rounded to `fmt` in `mode`; `None` for infinities and NaN.
pub(crate) fn convert(x: f64, fmt: Format, mode: Round) -> Option<u64> {
    Some(Exact::of(x)?.round(fmt, mode))
}

/// `x × 2^e` (`x` exact in f64) rounded once to `fmt` in `mode`; `None` for infinities
/// and NaN.
pub(crate) fn scale(x: f64, e: i32, fmt: Format, mode: Round) -> Option<u64> {
    Some(Exact::of(x)?.scaled(e).round(fmt, mode))
}

/// `x` rounded to the nearest bfloat16, ties to even, where the result is a normal
/// bfloat16 or the overflow to infinity (|x| from 2^-126 to below 2^128): the 52-bit
/// significand rounded to 7 bits in place, a carry moving the exponent (past the
/// largest bfloat16, to the infinity's bits), the exponent rebased; and zeros. `None`
/// elsewhere (denormals, infinities, NaN): [`convert`] rounds those.
#[inline]
pub(crate) fn bf16_nearest_even(x: f64) -> Option<u16> {
    let bits = x.to_bits();
    let abs = bits & !(1 << 63);
    let sign = ((bits >> 48) & 0x8000) as u16;
    if abs == 0 {
        return Some(sign);
    }
    if !((1023 - 126) << 52..(1023 + 128) << 52).contains(&abs) {
        return None;
    }
    Some(sign | (round_off(abs, 45) - ((1023 - 127) << 7)) as u16)
}

/// A positive f64's bits `abs` with its lowest `drop` significand bits rounded off to
/// nearest, ties to even (half a unit, less one, plus the kept bits' last), without a
/// branch: a carry out of the significand moves the exponent field up. The narrow
/// formats' normal-range rounding ([`bf16_nearest_even`],
/// [`crate::float::half::nearest_even`]) rebases the exponent of what it returns.
#[inline(always)]
pub(crate) fn round_off(abs: u64, drop: u32) -> u64 {
    (abs + (1 << (drop - 1)) - 1 + (abs >> drop & 1)) >> drop
}

/// bfloat16: f32's exponent range with 8 significant bits.
pub(crate) const BF16: Format = Format {
    precision: 8,
    emax: 127,
    exp_bits: 8,
};

/// The weight of [`Sum`]'s lowest bit: below the last bit of a product of two f32
/// denormals (2^-149 · 2^-149).
const SUM_LOW: i32 = -320;
/// [`Sum`]'s width in 64-bit limbs (two's complement): weights up to 2^383, past
/// any sum of a few thousand f32 products.
const SUM_LIMBS: usize = 11;

/// An exact sum of finite values (floats of at most f32's range and their exact
/// products), rounded once at the end: what the matrix and 16-bit dot products
/// compute, with nothing rounded between their additions.
#[derive(Clone, Copy)]
pub(crate) struct Sum {
    limbs: [u64; SUM_LIMBS],
    /// Whether every term so far was -0 (the sign an all-zero sum keeps).
    all_negative_zero: bool,
}

impl Sum {
    pub(crate) fn new() -> Sum {
        Sum {
            limbs: [0; SUM_LIMBS],
            all_negative_zero: true,
        }
    }

    /// Adds `x` exactly. `false` (nothing added) for a value outside the range above:
    /// infinities, NaN, or an exponent past f32 products'.
    #[must_use]
    pub(crate) fn add(&mut self, x: f64) -> bool {
        match Exact::of(x) {
            Some(e) => self.add_exact(e),
            None => false,
        }
    }

    /// Adds `a × b` exactly; `false` as [`Sum::add`].
    #[must_use]
    pub(crate) fn add_product(&mut self, a: f64, b: f64) -> bool {
        match (Exact::of(a), Exact::of(b)) {
            (Some(a), Some(b)) => self.add_exact(Exact::mul(a, b)),
            _ => false,
        }
    }

    fn add_exact(&mut self, x: Exact) -> bool {
        self.all_negative_zero &= x.is_zero() && x.neg;
        if x.is_zero() {
            return true;
        }
        let top = x.exp + (127 - x.mant.leading_zeros() as i32);
        if x.exp < SUM_LOW || top >= SUM_LOW + 64 * SUM_LIMBS as i32 - 2 {
            return false;
        }
        let at = (x.exp - SUM_LOW) as usize;
        let (limb, shift) = (at / 64, at % 64);
        // The significand spread over three limbs from `limb` up.
        let lo = x.mant << shift;
        let hi = if shift == 0 {
            0
        } else {
            (x.mant >> (128 - shift)) as u64
        };
        let parts = [lo as u64, (lo >> 64) as u64, hi];
        let mut carry = false;
        for k in limb..SUM_LIMBS {
            let p = parts.get(k - limb).copied().unwrap_or(0);
            let (cur, c) = if x.neg {
                // Subtract: add the complement, carry (borrow) inverted.
                let (v, b1) = self.limbs[k].overflowing_sub(p);
                let (v, b2) = v.overflowing_sub(u64::from(carry));
                (v, b1 || b2)
            } else {
                let (v, c1) = self.limbs[k].overflowing_add(p);
                let (v, c2) = v.overflowing_add(u64::from(carry));
                (v, c1 || c2)
            };
            self.limbs[k] = cur;
            carry = c;
            if !carry && k >= limb + 2 {
                break;
            }
        }
        true
    }

    /// The sum's sign (`Equal` for zero).
    pub(crate) fn sign(&self) -> std::cmp::Ordering {
        if self.limbs[SUM_LIMBS - 1] >> 63 == 1 {
            std::cmp::Ordering::Less
        } else if self.limbs.iter().any(|&l| l != 0) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }

    /// The sum rounded once to `fmt` in `mode`: the encoding's bits. An exact zero is
    /// -0 when every term was -0, otherwise +0 (-0 rounding toward -infinity), as
    /// IEEE 754 adds.
    pub(crate) fn round(&self, fmt: Format, mode: Round) -> u64 {
        let neg = self.limbs[SUM_LIMBS - 1] >> 63 == 1;
        let mut mag = self.limbs;
        if neg {
            // Two's complement negation.
            let mut carry = true;
            for l in mag.iter_mut() {
                let (v, c) = (!*l).overflowing_add(u64::from(carry));
                *l = v;
                carry = c;
            }
        }
        let Some(top_limb) = (0..SUM_LIMBS).rev().find(|&k| mag[k] != 0) else {
            let neg = self.all_negative_zero || mode == Round::Down;
            return fmt.sign(neg);
        };
        // The 128 bits from `low` up (the top ones), the rest jammed into the last one:
        // whole limbs, each shifted once.
        let top = top_limb * 64 + 63 - mag[top_limb].leading_zeros() as usize;
        let low = top.saturating_sub(127);
        let (limb, shift) = (low / 64, low % 64);
        let at = |k: usize| u128::from(mag.get(k).copied().unwrap_or(0));
        let mut mant = at(limb) >> shift | at(limb + 1) << (64 - shift);
        if shift > 0 {
            mant |= at(limb + 2) << (128 - shift);
        }
        let below = mag[..limb].iter().any(|&l| l != 0) || mag[limb] & ((1u64 << shift) - 1) != 0;
        let (mant, exp) = (mant | u128::from(below), SUM_LOW + low as i32);
        Exact { neg, mant, exp }.round(fmt, mode)
    }
}

/// A value known only as the f64 `q` nearest it (or within an ulp) and the side of
/// `q` it lies on (`Less`: below `q`, `Equal`: `q` itself), rounded to `fmt` in
/// `mode`. Exact for any format no wider than f64: the value and `q` plus or minus a
/// quarter of `q`'s last place lie between the same two f64 neighbours of `q`, and
/// round alike. `None` for an infinite or NaN `q`.
pub(crate) fn round_beside(q: f64, side: std::cmp::Ordering, fmt: Format, mode: Round) -> Option<u64> {
    let e = Exact::of(q)?;
    let e = match side {
        std::cmp::Ordering::Equal => e,
        _ if e.is_zero() => return None,
        side => {
            // Away from zero when the value is above a positive q or below a negative one.
            let away = (side == std::cmp::Ordering::Greater) != e.neg;
            let m = e.mant << 2;
            Exact {
                mant: if away { m + 1 } else { m - 1 },
                exp: e.exp - 2,
                ..e
            }
        }
    };
    Some(e.round(fmt, mode))
}

/// The sign of `a × b − c` (operands finite), exactly.
pub(crate) fn cmp_product(a: f64, b: f64, c: f64) -> Option<std::cmp::Ordering> {
    let p = Exact::mul(Exact::of(a)?, Exact::of(b)?);
    let d = Exact::add(p, Exact::of(-c)?, Round::NearestEven);
    Some(if d.is_zero() {
        std::cmp::Ordering::Equal
    } else if d.neg {
        std::cmp::Ordering::Less
    } else {
        std::cmp::Ordering::Greater
    })
}

/// An integer rounded to `fmt` in `mode`.
#[cfg(test)]
pub(crate) fn from_int(x: i64, fmt: Format, mode: Round) -> u64 {
    Exact {
        neg: x < 0,
        mant: u128::from(x.unsigned_abs()),
        exp: 0,
    }
    .round(fmt, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`bf16_nearest_even`] is [`convert`]'s rounding wherever it gives one: random
    /// doubles over bfloat16's range and past it, each bfloat16's neighbours and the
    /// midpoints between them.
    #[test]
    fn bf16_nearest_even_is_exact_rounding() {
        let check = |x: f64| {
            if let Some(h) = bf16_nearest_even(x) {
                assert_eq!(Some(u64::from(h)), convert(x, BF16, Round::NearestEven), "{x:e}");
            }
        };
        let mut r = 0x2545_f491_4f6c_dd1du64;
        let mut taken = 0;
        for _ in 0..200_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            let field = 1023 - 140 + (r >> 52) % 280;
            let x = f64::from_bits(r & 0x800f_ffff_ffff_ffff | field << 52);
            check(x);
            taken += usize::from(bf16_nearest_even(x).is_some());
        }
        assert!(taken > 150_000, "{taken}");
        for h in (0x0080u32..0x7f80).step_by(7) {
            let (lo, hi) = (
                f64::from(f32::from_bits(h << 16)),
                f64::from(f32::from_bits((h + 1) << 16)),
            );
            for x in [lo, (lo + hi) / 2.0, hi] {
                for v in [x, -x] {
                    check(v);
                    check(f64::from_bits(v.to_bits() + 1));
                    check(f64::from_bits(v.to_bits() - 1));
                }
            }
        }
        // The largest bfloat16's neighbourhood: the midpoint to the next binade overflows.
        let max = f64::from(f32::from_bits(0x7f7f_0000));
        for x in [max, max * (1.0 + 2f64.powi(-9)), max * (1.0 + 2f64.powi(-8)), 0.0, -0.0] {
            check(x);
        }
        assert_eq!(bf16_nearest_even(-0.0), Some(0x8000));
    }
    use Round::*;

    #[test]
    fn sums_are_exact_and_round_once() {
        // Random sums of 17 products of halves, as WMMA forms them: the exact sum is
        // an integer count of 2^-48 below 2^85, so an i128 holds it; Rust rounds i128
        // to f32 and f64 to nearest-even (the scaling by 2^-48 is then exact), and a
        // directed result r must bracket it: r·2^48 on the mode's side of the sum,
        // its neighbour toward the sum on the other.
        let mut next = crate::rdna3::testing::xorshift32(0x5eed_0017);
        let half = |bits: u32| {
            let h = (bits & 0xffff) as u16;
            let v = f64::from(crate::float::half::to_f32(h));
            if v.is_finite() { v } else { 1.0 }
        };
        let scaled = |x: f64| (x * 2f64.powi(48)) as i128;
        for _ in 0..20_000 {
            let mut sum = Sum::new();
            let mut exact = 0i128;
            let terms = 1 + next() % 17;
            for _ in 0..terms {
                let (a, b) = (half(next()), half(next()));
                assert!(sum.add_product(a, b));
                // Halves are multiples of 2^-24.
                let s24 = |x: f64| (x * 2f64.powi(24)) as i128;
                exact += s24(a) * s24(b);
            }
            let want32 = (exact as f32 * 2f32.powi(-48)).to_bits();
            assert_eq!(sum.round(F32, NearestEven), u64::from(want32), "{exact}");
            let want64 = (exact as f64 * 2f64.powi(-48)).to_bits();
            assert_eq!(sum.round(F64, NearestEven), want64, "{exact}");
            for mode in [Up, Down, Zero] {
                let r = f32::from_bits(sum.round(F32, mode) as u32);
                let r_s = scaled(f64::from(r));
                let toward = |r: f32| {
                    if r_s > exact {
                        f32::from_bits(if r > 0.0 { r.to_bits() - 1 } else { r.to_bits() + 1 })
                    } else {
                        f32::from_bits(if r >= 0.0 { r.to_bits() + 1 } else { r.to_bits() - 1 })
                    }
                };
                match mode {
                    Up => assert!(r_s >= exact),
                    Down => assert!(r_s <= exact),
                    _ => assert!(r_s.abs() <= exact.abs() && (r_s == 0 || (r_s > 0) == (exact > 0))),
                }
                if r_s != exact {
                    // The neighbour toward the exact sum lies past it.
                    let n = scaled(f64::from(toward(r)));
                    assert!((n - exact).signum() == (exact - r_s).signum(), "{mode:?} {exact} {r}");
                }
            }
        }
        // Far apart and cancelling: 2^100 + 2^-100 - 2^100 is 2^-100 exactly.
        let mut s = Sum::new();
        assert!(s.add(2f64.powi(100)) && s.add(2f64.powi(-100)) && s.add(-(2f64.powi(100))));
        assert_eq!(s.round(F64, NearestEven), 2f64.powi(-100).to_bits());
        // A far-below part decides a directed rounding: 1 + 2^-200.
        let mut s = Sum::new();
        assert!(s.add(1.0) && s.add_product(2f64.powi(-100), 2f64.powi(-100)));
        assert_eq!(s.round(F32, Up), u64::from(1f32.to_bits() + 1));
        assert_eq!(s.round(F32, NearestEven), u64::from(1f32.to_bits()));
        assert_eq!(s.sign(), std::cmp::Ordering::Greater);
        // Negative sums, and zeros: -0 only from -0 terms alone or toward -infinity.
        let mut s = Sum::new();
        assert!(s.add(-1.0) && s.add_product(-(2f64.powi(-100)), 2f64.powi(-100)));
        assert_eq!(s.round(F32, Down), u64::from((-1f32).to_bits() + 1));
        assert_eq!(s.round(F32, Up), u64::from((-1f32).to_bits()));
        let mut s = Sum::new();
        assert!(s.add(-0.0) && s.add_product(-0.0, 5.0));
        assert_eq!(s.round(F32, NearestEven), u64::from((-0f32).to_bits()));
        let mut s = Sum::new();
        assert!(s.add(1.5) && s.add(-1.5));
        assert_eq!(s.round(F16, NearestEven), 0);
        assert_eq!(s.round(F16, Down), 0x8000);
        assert_eq!(s.sign(), std::cmp::Ordering::Equal);
        // bfloat16: 256 + 1 ties to even (256); + 2^-30 more rounds up (258).
        let mut s = Sum::new();
        assert!(s.add(256.0) && s.add(1.0));
        assert_eq!(s.round(BF16, NearestEven), u64::from(256f32.to_bits() >> 16));
        assert!(s.add_product(2f64.powi(-15), 2f64.powi(-15)));
        assert_eq!(s.round(BF16, NearestEven), u64::from(258f32.to_bits() >> 16));
        // Overflow as the mode says; values past the range are not taken.
        let mut s = Sum::new();
        assert!(s.add(f64::from(f32::MAX)) && s.add(f64::from(f32::MAX)));
        assert_eq!(s.round(F32, NearestEven), u64::from(f32::INFINITY.to_bits()));
        assert_eq!(s.round(F32, Zero), u64::from(f32::MAX.to_bits()));
        assert!(!s.add(f64::MAX) && !s.add(f64::INFINITY) && !s.add(f64::NAN));
        assert!(!s.add(f64::from_bits(1)), "an f64 denormal is below the range");
    }

    #[test]
    fn a_value_beside_its_nearest_rounds_as_itself() {
        use std::cmp::Ordering::*;
        // 1/3 lies above its f64 nearest (0x3fd5555555555555 · 3 < 1).
        let q = 1.0 / 3.0;
        assert_eq!(cmp_product(q, 3.0, 1.0), Some(Less));
        assert_eq!(round_beside(q, Greater, F64, Up), Some(q.to_bits() + 1));
        assert_eq!(round_beside(q, Greater, F64, Down), Some(q.to_bits()));
        assert_eq!(round_beside(q, Greater, F64, NearestEven), Some(q.to_bits()));
        // Coarser formats round the value itself: 1/3 in f32 is 0x3eaaaaab up.
        assert_eq!(round_beside(q, Greater, F32, Up), Some(0x3eaa_aaab));
        assert_eq!(round_beside(q, Greater, F32, Zero), Some(0x3eaa_aaaa));
        // A value equal to q is q in every mode; beside 1.0 from below, down is 1 - ulp/2.
        assert_eq!(round_beside(1.0, Equal, F64, Down), Some(1f64.to_bits()));
        assert_eq!(round_beside(1.0, Less, F64, Down), Some(1f64.to_bits() - 1));
        assert_eq!(round_beside(-1.0, Less, F64, Down), Some((-1f64).to_bits() + 1));
        assert_eq!(round_beside(f64::INFINITY, Less, F64, Down), None);
    }

    fn f32s(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }

    #[test]
    fn nearest_even_matches_the_host() {
        // Random f32 sums, products and fmas against the host (nearest-even).
        let mut bits = crate::rdna3::testing::xorshift32(0x1234_5678);
        // Every exponent, denormals included.
        let mut next = || f32::from_bits(bits());
        for _ in 0..200_000 {
            let (a, b, c) = (next(), next(), next());
            if !(a.is_finite() && b.is_finite() && c.is_finite()) {
                continue;
            }
            let (x, y, z) = (a as f64, b as f64, c as f64);
            assert_eq!(
                add(x, y, F32, NearestEven).map(f32s).map(f32::to_bits),
                Some((a + b).to_bits()),
                "{a:e} + {b:e}"
            );
            assert_eq!(
                mul(x, y, F32, NearestEven).map(|r| r as u32),
                Some((a * b).to_bits()),
                "{a:e} * {b:e}"
            );
            assert_eq!(
                fma(x, y, z, 0, F32, NearestEven).map(|r| r as u32),
                Some(a.mul_add(b, c).to_bits()),
                "fma {a:e} {b:e} {c:e}"
            );
            let (d, e, g) = (x * 1.1e200, y * 3.3e-250, z * 7.7e-20);
            assert_eq!(
                fma(d, e, g, 0, F64, NearestEven),
                Some(d.mul_add(e, g).to_bits()),
                "fma {d:e} {e:e} {g:e}"
            );
            assert_eq!(add(d, g, F64, NearestEven), Some((d + g).to_bits()));
            assert_eq!(
                convert(d * e, F32, NearestEven).map(|r| r as u32),
                Some(((d * e) as f32).to_bits())
            );
        }
    }

    #[test]
    fn directed_modes_step_one_ulp() {
        let third = 1.0f64 / 3.0;
        // 1/3 in f32: nearest rounds down (0x3eaaaaab is above: ...aab), check both sides.
        let lo = convert(third, F32, Down).unwrap() as u32;
        let hi = convert(third, F32, Up).unwrap() as u32;
        assert_eq!(hi, lo + 1);
        assert!((f32::from_bits(lo) as f64) < third && (f32::from_bits(hi) as f64) > third);
        assert_eq!(convert(third, F32, Zero).unwrap() as u32, lo);
        assert_eq!(convert(-third, F32, Zero).unwrap() as u32, lo | 0x8000_0000);
        assert_eq!(convert(-third, F32, Down).unwrap() as u32, hi | 0x8000_0000);
        // 1 + 2^-30 in f32: up gives 1 + 2^-23, down and zero give 1.
        let x = 1.0 + (-30f64).exp2();
        assert_eq!(
            add(1.0, (-30f64).exp2(), F32, Up),
            Some(u64::from((1.0f32 + f32::EPSILON).to_bits()))
        );
        assert_eq!(add(1.0, (-30f64).exp2(), F32, Down), Some(u64::from(1.0f32.to_bits())));
        assert_eq!(convert(x, F32, NearestEven), Some(u64::from(1.0f32.to_bits())));
        // An exact result is the same in every mode.
        for m in [NearestEven, Up, Down, Zero] {
            assert_eq!(mul(1.5, 2.0, F32, m), Some(u64::from(3.0f32.to_bits())));
        }
        // x - x is +0, except toward -infinity: -0.
        assert_eq!(add(1.5, -1.5, F32, Up), Some(0));
        assert_eq!(add(1.5, -1.5, F32, Down), Some(0x8000_0000));
        assert_eq!(add(-0.0, -0.0, F32, Up), Some(0x8000_0000));
        assert_eq!(add(0.0, -0.0, F32, NearestEven), Some(0));
        assert_eq!(add(0.0, -0.0, F32, Down), Some(0x8000_0000));
    }

    #[test]
    fn overflow_and_underflow_follow_the_mode() {
        let max = f32::MAX as f64;
        // MAX × 2 overflows: infinity to nearest and away, MAX toward zero.
        assert_eq!(mul(max, 2.0, F32, NearestEven), Some(0x7f80_0000));
        assert_eq!(mul(max, 2.0, F32, Zero), Some(0x7f7f_ffff));
        assert_eq!(mul(max, 2.0, F32, Up), Some(0x7f80_0000));
        assert_eq!(mul(max, 2.0, F32, Down), Some(0x7f7f_ffff));
        assert_eq!(mul(-max, 2.0, F32, Down), Some(0xff80_0000));
        assert_eq!(mul(-max, 2.0, F32, Up), Some(0xff7f_ffff));
        // Just above MAX by less than half an ulp: nearest gives MAX, up gives infinity.
        let above = max * (1.0 + (-30f64).exp2());
        assert_eq!(convert(above, F32, NearestEven), Some(0x7f7f_ffff));
        assert_eq!(convert(above, F32, Up), Some(0x7f80_0000));
        // Half the least denormal: nearest gives 0 (tie to even), up the least denormal.
        let tiny = (-150f64).exp2();
        assert_eq!(convert(tiny, F32, NearestEven), Some(0));
        assert_eq!(convert(tiny, F32, Up), Some(1));
        assert_eq!(convert(-tiny, F32, Down), Some(0x8000_0001));
        assert_eq!(convert(-tiny, F32, Zero), Some(0x8000_0000));
        assert_eq!(
            convert(tiny * 3.0, F32, NearestEven),
            Some(2),
            "1.5 denormal units: tie to even 2"
        );
        // Halves: 65519 is below the tie, 65520 ties to infinity; toward zero stays at 65504.
        assert_eq!(convert(65519.0, F16, NearestEven), Some(0x7bff));
        assert_eq!(convert(65520.0, F16, NearestEven), Some(0x7c00));
        assert_eq!(convert(1e9, F16, Zero), Some(0x7bff));
        assert_eq!(convert(5.960_464_477_539_063e-8, F16, NearestEven), Some(1));
        // Integers: 2^24 + 1 in f32 rounds to even (down), up gives 2^24 + 2.
        assert_eq!(
            from_int((1 << 24) + 1, F32, NearestEven),
            u64::from(16_777_216f32.to_bits())
        );
        assert_eq!(from_int((1 << 24) + 1, F32, Up), u64::from(16_777_218f32.to_bits()));
        assert_eq!(
            from_int(-((1 << 24) + 1), F32, Up),
            u64::from((-16_777_216f32).to_bits())
        );
        assert_eq!(from_int(i64::MIN, F64, NearestEven), (-(2f64.powi(63))).to_bits());
    }

    #[test]
    fn fma_scaled_rounds_once() {
        // (1 + 2^-52) × 1 + 0 scaled by 2^-1074 lands among the f64 denormals.
        let a = 1.0 + f64::EPSILON;
        let got = fma(a, 1.0, 0.0, -1074, F64, NearestEven).unwrap();
        assert_eq!(got, 1, "just above 2^-1074 rounds to the least denormal");
        // 1.5 × 2^-1074: a tie between 1 and 2 units, to even 2.
        assert_eq!(fma(1.5, 1.0, 0.0, -1074, F64, NearestEven), Some(2));
        // Exact values just off a tie round by their side of it, where rounding the
        // fma first (onto the tie) and then scaling would round to even.
        let e = (-60f64).exp2();
        assert_eq!(fma(1.5, 1.0, -e, -1074, F64, NearestEven), Some(1));
        assert_eq!(fma(2.5, 1.0, e, -1074, F64, NearestEven), Some(3));
        // Scaled past the largest finite value: infinity.
        assert_eq!(
            fma(1.0, 1.0, 0.0, 1024, F64, NearestEven),
            Some(f64::INFINITY.to_bits())
        );
        assert_eq!(
            fma(1.0, 1.0, 0.0, 1023, F64, NearestEven),
            Some(2f64.powi(1023).to_bits())
        );
        // Tiny addends far below the product only stick.
        assert_eq!(fma(1.0, 1.0, 1e-300, 0, F64, Up), Some((1.0 + f64::EPSILON).to_bits()));
        assert_eq!(
            fma(1.0, 1.0, -1e-300, 0, F64, Zero),
            Some((1.0 - f64::EPSILON / 2.0).to_bits())
        );
        assert_eq!(fma(1.0, 1.0, -1e-300, 0, F64, NearestEven), Some(1f64.to_bits()));
    }
}
