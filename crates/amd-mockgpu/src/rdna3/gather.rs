//! Dword reads from the LDS for a whole wave, when every lane's address is in range:
//! the bounds are checked once for the wave rather than once per lane.

#![allow(unsafe_code)]

/// The dwords at `base[l] + off` (any alignment) for every lane `l`, or `None` when
/// any of them reaches past `lds` (the caller then reads lane by lane).
#[inline(always)]
pub(crate) fn dwords(lds: &[u8], base: &[u32; 32], off: u32) -> Option<[u32; 32]> {
    let top = base.iter().copied().max().unwrap_or(0);
    // In u64: neither the sum nor `base[l] + off` (at most it) wraps.
    if u64::from(top) + u64::from(off) + 4 > lds.len() as u64 {
        return None;
    }
    let p = lds.as_ptr();
    let mut out = [0u32; 32];
    for (o, &b) in out.iter_mut().zip(base) {
        // SAFETY: b + off + 4 <= top + off + 4 <= lds.len() (checked above, without
        // overflow), so the four bytes from b + off are inside `lds`; `read_unaligned`
        // takes any alignment.
        *o = u32::from_le(unsafe { p.add(b as usize + off as usize).cast::<u32>().read_unaligned() });
    }
    Some(out)
}
