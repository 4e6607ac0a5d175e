//! Running RDNA4 instructions on one wave, for the semantics' unit tests (as
//! `rdna3::testing` does for RDNA3).

use super::exec::Rdna4;
use crate::error::Trap;
use crate::float::minmax::Nans;
use crate::rdna3::Wave;

/// Runs the instructions in order (no branches) on one wave started as gfx12 starts
/// it (IEEE 754-2019's minimumNumber rule), all 32 lanes on, with `data` mapped at its
/// own address; `setup` gets that address.
pub(crate) fn run_mem(prog: &[&[u32]], data: &mut [u8], setup: impl FnOnce(&mut Wave, u64)) -> Result<Wave, Trap> {
    run_mem_lds(prog, data, &mut [0u8; 1024], setup)
}

/// [`run_mem`] with `lds` as the workgroup's LDS.
pub(crate) fn run_mem_lds(
    prog: &[&[u32]],
    data: &mut [u8],
    lds: &mut [u8],
    setup: impl FnOnce(&mut Wave, u64),
) -> Result<Wave, Trap> {
    crate::rdna3::testing::run_as::<Rdna4>(prog, data, lds, |w, base| {
        w.nan_rule = Some(Nans::Num);
        setup(w, base)
    })
}

/// [`run_mem`] without memory.
pub(crate) fn run(prog: &[&[u32]], setup: impl FnOnce(&mut Wave)) -> Result<Wave, Trap> {
    run_mem(prog, &mut [], |w, _| setup(w))
}

/// `llvm-mc`'s little-endian encoding bytes as dwords.
pub(crate) fn dwords(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
