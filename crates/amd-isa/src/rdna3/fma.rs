//! f32 fused multiply-adds for a whole wave: on the host's FMA unit where it has one
//! (detected at run time: the build assumes only baseline x86-64, where `mul_add` is a
//! library call per lane), else [`fma32`] lane by lane. Both round once, as the ISA's
//! `v_fma_f32` does.

#![allow(unsafe_code)]

use super::exec::{f, fma32};

/// `a × b + c` for every lane, as bits.
pub(crate) fn fma_wave(a: &[u32; 32], b: &[u32; 32], c: &[u32; 32]) -> [u32; 32] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has FMA (and the AVX it implies), checked just above; that is
        // all `fma_wave_fma` requires.
        return unsafe { fma_wave_fma(a, b, c) };
    }
    std::array::from_fn(|l| fma32(f(a[l]), f(b[l]), f(c[l])).to_bits())
}

/// [`fma_wave`] compiled for FMA: `mul_add` is one instruction, and the loop vectorizes.
///
/// # Safety
///
/// The CPU must support FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma_wave_fma(a: &[u32; 32], b: &[u32; 32], c: &[u32; 32]) -> [u32; 32] {
    let mut out = [0u32; 32];
    for (l, o) in out.iter_mut().enumerate() {
        *o = f(a[l]).mul_add(f(b[l]), f(c[l])).to_bits();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FMA unit's results are `mul_add`'s, NaNs and infinities included.
    #[test]
    fn matches_mul_add() {
        let mut bits = crate::rdna3::testing::xorshift64(0x9e37_79b9_7f4a_7c15);
        let mut next = || bits() as u32;
        for _ in 0..2000 {
            let a: [u32; 32] = std::array::from_fn(|_| next());
            let b: [u32; 32] = std::array::from_fn(|l| if l % 5 == 0 { 0x7f80_0000 } else { next() });
            let c: [u32; 32] = std::array::from_fn(|l| if l % 7 == 0 { 0x7fc0_0001 } else { next() });
            let got = fma_wave(&a, &b, &c);
            for l in 0..32 {
                let want = f(a[l]).mul_add(f(b[l]), f(c[l]));
                assert!(
                    got[l] == want.to_bits() || (f(got[l]).is_nan() && want.is_nan()),
                    "lane {l}"
                );
            }
        }
    }
}
