//! The VALU's float minimum and maximum as the ISA's pseudocode gives them: -0 is less
//! than +0; a quiet NaN operand loses to the other; with MODE.IEEE set (as compute
//! kernels run), a signaling NaN operand wins, quieted. RDNA4 has no IEEE mode: its
//! `*_num` forms are IEEE 754-2019's minimumNumber and maximumNumber (any NaN loses to
//! a number; of two NaNs, the first, quieted). The three-operand forms are
//! built from these as the ISA defines them (`v_min3 = min(min(a, b), c)`,
//! `v_minmax = max(min(a, b), c)`, `v_med3` through max3). RDNA4's `v_minimum*` and
//! `v_maximum*` are IEEE 754-2019's minimum and maximum, which propagate NaN: the same
//! shapes under [`Nans::Propagate`].

/// Which NaN rule a wave's minimum and maximum follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nans {
    /// RDNA3 without MODE.IEEE: a NaN operand loses to the other.
    Legacy,
    /// RDNA3 with MODE.IEEE: a signaling NaN wins, quieted; a quiet NaN loses.
    Ieee,
    /// RDNA4 (IEEE 754-2019 minimumNumber/maximumNumber): a NaN loses to a number; of
    /// two NaNs, the first, quieted.
    Num,
    /// RDNA4's `v_minimum*`/`v_maximum*` (IEEE 754-2019 minimum/maximum): a NaN
    /// operand wins, quieted — a signaling one first, then the first quiet one.
    Propagate,
    /// CDNA3 (gfx9) without MODE.IEEE: as [`Nans::Legacy`], but the first operand's
    /// NaN is looked at first: of two NaNs, the second.
    Gfx9Legacy,
    /// CDNA3 with MODE.IEEE: as [`Nans::Ieee`], of two quiet NaNs the second.
    Gfx9Ieee,
}

/// A float format's bits as the min/max pseudocode needs them.
pub(crate) trait MinMax: Copy {
    fn nan(self) -> bool;
    /// A NaN whose quiet bit is clear.
    fn signaling(self) -> bool;
    fn quieted(self) -> Self;
    /// `self < other`, with -0 < +0.
    fn less(self, other: Self) -> bool;
    /// `self == other` as floats (+0 == -0).
    fn same(self, other: Self) -> bool;
}

/// `MinMax` for a native float type whose quiet bit is `$quiet`.
macro_rules! native_min_max {
    ($t:ty, $quiet:expr) => {
        impl MinMax for $t {
            fn nan(self) -> bool {
                self.is_nan()
            }
            fn signaling(self) -> bool {
                self.is_nan() && self.to_bits() & $quiet == 0
            }
            fn quieted(self) -> Self {
                <$t>::from_bits(self.to_bits() | $quiet)
            }
            fn less(self, other: Self) -> bool {
                self < other || (self == 0.0 && other == 0.0 && self.is_sign_negative() && !other.is_sign_negative())
            }
            fn same(self, other: Self) -> bool {
                self == other
            }
        }
    };
}

native_min_max!(f32, 0x0040_0000);
native_min_max!(f64, 0x0008_0000_0000_0000);

/// Half-precision bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct H(pub(crate) u16);

impl MinMax for H {
    fn nan(self) -> bool {
        self.0 & 0x7c00 == 0x7c00 && self.0 & 0x03ff != 0
    }
    fn signaling(self) -> bool {
        self.nan() && self.0 & 0x0200 == 0
    }
    fn quieted(self) -> Self {
        H(self.0 | 0x0200)
    }
    fn less(self, other: Self) -> bool {
        crate::float::half::to_f32(self.0).less(crate::float::half::to_f32(other.0))
    }
    fn same(self, other: Self) -> bool {
        crate::float::half::to_f32(self.0) == crate::float::half::to_f32(other.0)
    }
}

/// `v_min_*`.
pub(crate) fn min<T: MinMax>(a: T, b: T, nans: Nans) -> T {
    pick(a, b, nans, a.less(b))
}

/// `v_max_*`.
pub(crate) fn max<T: MinMax>(a: T, b: T, nans: Nans) -> T {
    pick(a, b, nans, b.less(a))
}

fn pick<T: MinMax>(a: T, b: T, nans: Nans, a_wins: bool) -> T {
    if nans == Nans::Propagate {
        return if a.signaling() {
            a.quieted()
        } else if b.signaling() {
            b.quieted()
        } else if a.nan() {
            a
        } else if b.nan() || !a_wins {
            b
        } else {
            a
        };
    }
    let ieee = matches!(nans, Nans::Ieee | Nans::Gfx9Ieee);
    let gfx9 = matches!(nans, Nans::Gfx9Legacy | Nans::Gfx9Ieee);
    if ieee && a.signaling() {
        a.quieted()
    } else if ieee && b.signaling() {
        b.quieted()
    } else if nans == Nans::Num && a.nan() && b.nan() {
        a.quieted()
    } else if gfx9 && a.nan() {
        // gfx9's pseudocode tests the first operand for NaN before the second.
        b
    } else if b.nan() {
        a
    } else if a.nan() || !a_wins {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod gfx9 {
    use super::*;

    /// Of two quiet NaNs, gfx9 returns the second and RDNA3 the first; otherwise the
    /// rules agree.
    #[test]
    fn two_nans_give_the_second_on_gfx9() {
        let (q1, q2) = (f32::from_bits(0x7fc0_0001), f32::from_bits(0x7fc0_0002));
        for (gfx9, rdna3) in [(Nans::Gfx9Ieee, Nans::Ieee), (Nans::Gfx9Legacy, Nans::Legacy)] {
            assert_eq!(min(q1, q2, gfx9).to_bits(), q2.to_bits());
            assert_eq!(max(q1, q2, gfx9).to_bits(), q2.to_bits());
            assert_eq!(min(q1, q2, rdna3).to_bits(), q1.to_bits());
            for (a, b) in [(q1, 1.0), (1.0, q2), (-0.0, 0.0), (0.0, -0.0), (2.0, -3.0)] {
                assert_eq!(min(a, b, gfx9).to_bits(), min(a, b, rdna3).to_bits(), "{a} {b}");
                assert_eq!(max(a, b, gfx9).to_bits(), max(a, b, rdna3).to_bits(), "{a} {b}");
            }
        }
        let s = f32::from_bits(0x7f80_0001);
        assert_eq!(
            max(q1, s, Nans::Gfx9Ieee).to_bits(),
            0x7fc0_0001,
            "a signaling NaN wins, quieted"
        );
    }
}

/// `v_min3_*`.
pub(crate) fn min3<T: MinMax>(a: T, b: T, c: T, nans: Nans) -> T {
    min(min(a, b, nans), c, nans)
}

/// `v_max3_*`.
pub(crate) fn max3<T: MinMax>(a: T, b: T, c: T, nans: Nans) -> T {
    max(max(a, b, nans), c, nans)
}

/// `v_med3_*`: with a NaN operand, min3; else the largest is dropped and the larger of
/// the other two kept.
pub(crate) fn med3<T: MinMax>(a: T, b: T, c: T, nans: Nans) -> T {
    if a.nan() || b.nan() || c.nan() {
        return min3(a, b, c, nans);
    }
    let top = max3(a, b, c, nans);
    if top.same(a) {
        max(b, c, nans)
    } else if top.same(b) {
        max(a, c, nans)
    } else {
        max(a, b, nans)
    }
}

/// `v_minmax_*`: max(min(a, b), c).
pub(crate) fn minmax<T: MinMax>(a: T, b: T, c: T, nans: Nans) -> T {
    max(min(a, b, nans), c, nans)
}

/// `v_maxmin_*`: min(max(a, b), c).
pub(crate) fn maxmin<T: MinMax>(a: T, b: T, c: T, nans: Nans) -> T {
    min(max(a, b, nans), c, nans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_zeros_order() {
        assert_eq!(min(0.0f32, -0.0, Nans::Ieee).to_bits(), 0x8000_0000);
        assert_eq!(min(-0.0f32, 0.0, Nans::Ieee).to_bits(), 0x8000_0000);
        assert_eq!(max(-0.0f32, 0.0, Nans::Legacy).to_bits(), 0);
        assert_eq!(max(0.0f64, -0.0, Nans::Ieee).to_bits(), 0);
    }

    #[test]
    fn nans_by_mode() {
        let snan = f32::from_bits(0x7f80_0001);
        let qnan = f32::from_bits(0x7fc0_0000);
        assert_eq!(min(snan, 1.0, Nans::Ieee).to_bits(), 0x7fc0_0001);
        assert_eq!(max(1.0, snan, Nans::Ieee).to_bits(), 0x7fc0_0001);
        assert_eq!(min(snan, 1.0, Nans::Legacy), 1.0);
        assert_eq!(min(qnan, 1.0, Nans::Ieee), 1.0);
        assert_eq!(max(2.0, qnan, Nans::Ieee), 2.0);
        assert_eq!(min(H(0x7c01), H(0x3c00), Nans::Ieee), H(0x7e01));
        assert_eq!(min(H(0x7e00), H(0x3c00), Nans::Ieee), H(0x3c00));
        assert_eq!(med3(H(0x3c00), H(0x4000), H(0x4200), Nans::Ieee), H(0x4000));
    }

    #[test]
    fn med3_is_the_middle() {
        for (a, b, c) in [(1.0f32, 2.0, 3.0), (3.0, 1.0, 2.0), (2.0, 3.0, 1.0), (2.0, 2.0, 1.0)] {
            let mut v = [a, b, c];
            v.sort_by(|x, y| x.partial_cmp(y).unwrap());
            assert_eq!(med3(a, b, c, Nans::Ieee), v[1]);
        }
        // A NaN operand: min3.
        assert_eq!(med3(f32::NAN, 5.0, 4.0, Nans::Ieee), 4.0);
    }

    #[test]
    fn nans_as_rdna4_takes_them() {
        let (qnan, snan) = (f32::from_bits(0x7fc0_0002), f32::from_bits(0x7f80_0001));
        // A NaN, signaling or quiet, loses to a number, which comes back unchanged.
        assert_eq!(max(snan, 1.0, Nans::Num), 1.0);
        assert_eq!(min(2.0, qnan, Nans::Num), 2.0);
        // Two NaNs: the first, quieted (RDNA3 without IEEE mode returns it as it is).
        assert_eq!(max(snan, qnan, Nans::Num).to_bits(), 0x7fc0_0001);
        assert_eq!(max(snan, qnan, Nans::Legacy).to_bits(), 0x7f80_0001);
        assert_eq!(min(-0.0f32, 0.0, Nans::Num).to_bits(), 0x8000_0000);
        // IEEE 754-2019 minimum and maximum: a NaN wins, quieted; a signaling one
        // before a quiet one; -0 below +0.
        let p = Nans::Propagate;
        assert!(min(1.0f32, qnan, p).is_nan() && max(qnan, 1.0f32, p).is_nan());
        assert_eq!(max(qnan, snan, p).to_bits(), 0x7fc0_0001);
        assert_eq!(min(f32::from_bits(0x7fc0_0002), qnan, p).to_bits(), 0x7fc0_0002);
        assert_eq!(min(0.0f32, -0.0, p).to_bits(), 0x8000_0000);
        assert_eq!(max(-0.0f32, 0.0, p).to_bits(), 0);
        assert_eq!(min(1.0f32, 2.0, p), 1.0);
        assert_eq!(max(1.0f32, 2.0, p), 2.0);
    }
}
