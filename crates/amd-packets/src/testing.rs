//! Sample packets for tests, examples and benchmarks (feature `test-utils`).

use crate::pm4::DispatchInitiator;
use crate::pm4::recipes::Dispatch;

/// A dispatch of 4 × 2 workgroups of 64 work-items: a kernel at `0x7f30_0000_1700`
/// with scratch, its user SGPRs set from `user_data`.
pub const fn sample_dispatch(user_data: &[u32]) -> Dispatch<'_> {
    Dispatch {
        code_addr: 0x7f30_0000_1700,
        rsrc1: 0x40bf_0080,
        rsrc2: 0x9e,
        rsrc3: 0,
        tmpring_size: 0x10200,
        scratch_base: 0x7f50_0000_0000,
        user_data,
        block: [64, 1, 1],
        grid: [4, 2, 1],
        initiator: DispatchInitiator::DEFAULT,
    }
}

/// A dispatch of `n` work-items in workgroups of 256, without scratch: the kernel at
/// `code_addr` with its descriptor's `rsrc` words, its user SGPRs set from `user_data`.
pub const fn linear_dispatch(code_addr: u64, rsrc: [u32; 3], user_data: &[u32], n: u32) -> Dispatch<'_> {
    Dispatch {
        code_addr,
        rsrc1: rsrc[0],
        rsrc2: rsrc[1],
        rsrc3: rsrc[2],
        tmpring_size: 0,
        scratch_base: 0,
        user_data,
        block: [256, 1, 1],
        grid: [n.div_ceil(256), 1, 1],
        initiator: DispatchInitiator::DEFAULT,
    }
}

/// A deterministic xorshift generator for random test values (no dependency), from
/// `seed` (not 0).
pub fn xorshift64(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
