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
