//! Dword reads from the LDS for a whole wave, when every lane's address is in range:
//! the bounds are checked once for the wave rather than once per lane, and the reads
//! are AVX2's gathers where the CPU has them (detected at run time, as `fma` does).

#![allow(unsafe_code)]

use super::VgprRow;

/// Writes into `out[k][l]` the dword at `base[l] + offs[k]` (any alignment) for every
/// lane `l` and every `k < offs.len().min(out.len())`, and returns true; returns false,
/// writing nothing, when any of them reaches past `lds` (the caller then reads lane by
/// lane). One bounds check covers every offset.
#[inline(always)]
pub(crate) fn dwords_into(lds: &[u8], base: &[u32; 32], offs: &[u32], out: &mut [VgprRow]) -> bool {
    let far = offs.iter().copied().max().unwrap_or(0);
    // The highest base address any lane may have: every read ends inside `lds`.
    let Some(lim) = (lds.len() as u64)
        .checked_sub(u64::from(far) + 4)
        .map(|l| u32::try_from(l).unwrap_or(u32::MAX))
    else {
        return false;
    };
    // One compare per lane, folded without a branch (the compiler does it four lanes
    // at a time).
    if base.iter().fold(false, |over, &b| over | (b > lim)) {
        return false;
    }
    // The gathers' indices are signed 32-bit: an LDS of up to 2 GiB (any real one).
    #[cfg(target_arch = "x86_64")]
    if lds.len() <= i32::MAX as usize && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 and `lds` is under 2^31 bytes, checked just above;
        // every read is inside `lds`, checked above (what `gather_avx2` requires).
        unsafe { gather_avx2(lds, base, offs, out) };
        return true;
    }
    // SAFETY: every read is inside `lds`, checked above (what `dwords_unchecked`
    // requires).
    unsafe { dwords_unchecked(lds, base, offs, out) };
    true
}

/// [`dwords_into`]'s reads one lane at a time, on CPUs without AVX2.
///
/// # Safety
///
/// For every lane `l` and every `k < offs.len()`, the four bytes from
/// `base[l] + offs[k]` must be inside `lds`.
unsafe fn dwords_unchecked(lds: &[u8], base: &[u32; 32], offs: &[u32], out: &mut [VgprRow]) {
    let p = lds.as_ptr();
    for (o, &off) in out.iter_mut().zip(offs) {
        for (o, &b) in o.iter_mut().zip(base) {
            // SAFETY: the four bytes from b + off are inside `lds` (the caller's
            // promise); `read_unaligned` takes any alignment.
            *o = u32::from_le(unsafe { p.add(b as usize + off as usize).cast::<u32>().read_unaligned() });
        }
    }
}

/// [`dwords_into`]'s reads with AVX2's gathers, eight lanes at a time.
///
/// # Safety
///
/// The CPU must support AVX2, and for every lane `l` and every `k < offs.len()` the
/// four bytes from `base[l] + offs[k]` must be inside `lds` (so each such sum is below
/// 2^31, as the gathers' signed indices need: `lds` is shorter than that).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gather_avx2(lds: &[u8], base: &[u32; 32], offs: &[u32], out: &mut [VgprRow]) {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_i32gather_epi32, _mm256_loadu_si256, _mm256_set1_epi32, _mm256_storeu_si256,
    };
    // Byte addresses: the gathers' scale is 1, and they take any alignment.
    let p = lds.as_ptr().cast::<i32>();
    for (o, &off) in out.iter_mut().zip(offs) {
        for (o8, b8) in o.chunks_exact_mut(8).zip(base.chunks_exact(8)) {
            // SAFETY: `b8` and `o8` are eight u32s each (unaligned loads and stores
            // take them as they are); every `b + off` is in range and fits an i32 (the
            // caller's promise), so each gathered dword is inside `lds`.
            unsafe {
                let at = _mm256_add_epi32(
                    _mm256_loadu_si256(b8.as_ptr().cast::<__m256i>()),
                    _mm256_set1_epi32(off as i32),
                );
                let v = _mm256_i32gather_epi32::<1>(p, at);
                _mm256_storeu_si256(o8.as_mut_ptr().cast::<__m256i>(), v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways of reading — the AVX2 gathers where this CPU has them, and the lane
    /// by lane reads other CPUs take — give what slicing the LDS gives, for random
    /// in-range bases and offsets.
    #[test]
    fn gathers_and_lane_reads_agree() {
        let lds: Vec<u8> = (0..65536u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut next = crate::rdna3::testing::xorshift32(0x1234_5678);
        for _ in 0..500 {
            let offs = [next() % 1024, next() % 1024];
            let base: [u32; 32] = std::array::from_fn(|_| next() % (65536 - 1024 - 4));
            let want: Vec<VgprRow> = offs
                .iter()
                .map(|&o| {
                    VgprRow(std::array::from_fn(|l| {
                        let a = (base[l] + o) as usize;
                        u32::from_le_bytes([lds[a], lds[a + 1], lds[a + 2], lds[a + 3]])
                    }))
                })
                .collect();
            let mut lanes = [VgprRow::default(); 2];
            // SAFETY: every base + offset + 4 is below 65536 - 1024 - 4 + 1024 + 4.
            unsafe { dwords_unchecked(&lds, &base, &offs, &mut lanes) };
            assert_eq!(lanes.to_vec(), want);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut gathered = [VgprRow::default(); 2];
                // SAFETY: AVX2 is there; every read is inside `lds` (as above), which is
                // far below 2^31 bytes.
                unsafe { gather_avx2(&lds, &base, &offs, &mut gathered) };
                assert_eq!(gathered.to_vec(), want);
            }
        }
    }

    #[test]
    fn reads_every_lane_or_nothing() {
        let lds: Vec<u8> = (0..256u32).map(|i| i as u8).collect();
        let mut base = [0u32; 32];
        for (l, b) in base.iter_mut().enumerate() {
            *b = (l * 7) as u32; // unaligned for most lanes
        }
        let mut out = [VgprRow([0xdead_beefu32; 32]); 2];
        assert!(dwords_into(&lds, &base, &[0, 12], &mut out));
        for (o, off) in out.iter().zip([0usize, 12]) {
            for (l, &got) in o.iter().enumerate() {
                let a = l * 7 + off;
                assert_eq!(got, u32::from_le_bytes([lds[a], lds[a + 1], lds[a + 2], lds[a + 3]]));
            }
        }
        // The last dword exactly at the end is in; one byte further is not, and then
        // nothing is written.
        base[31] = 256 - 4 - 12;
        assert!(dwords_into(&lds, &base, &[0, 12], &mut out));
        base[31] += 1;
        let mut out = [VgprRow([7u32; 32]); 2];
        assert!(!dwords_into(&lds, &base, &[0, 12], &mut out));
        assert!(out.iter().all(|o| o.iter().all(|&v| v == 7)));
        // Addresses near 2^32 do not wrap into range.
        base[31] = u32::MAX;
        assert!(!dwords_into(&lds, &base, &[0], &mut out[..1]));
        assert!(
            !dwords_into(&[0u8; 3], &[0; 32], &[0], &mut out[..1]),
            "shorter than a dword"
        );
    }
}
