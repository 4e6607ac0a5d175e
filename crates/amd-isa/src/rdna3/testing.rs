//! Running single instructions on one wave, for the semantics' unit tests.

use super::decode::Inst;
use super::exec::step;
use super::wave::{EXEC_LO, Wave};
use crate::error::Trap;
use crate::memory::SliceMemory;

/// Runs the instruction in `words` on a wave prepared by `setup`.
pub(crate) fn run(words: &[u32], setup: impl FnOnce(&mut Wave)) -> Result<Wave, String> {
    run_all(&[words], setup)
}

/// Runs the instructions in order (no branches) on one wave, all lanes on.
pub(crate) fn run_all(prog: &[&[u32]], setup: impl FnOnce(&mut Wave)) -> Result<Wave, String> {
    let mem = SliceMemory::new();
    let mut w = Wave::new(64, 0);
    w.s[EXEC_LO] = u32::MAX;
    setup(&mut w);
    let mut lds = vec![0u8; 1024];
    for words in prog {
        let i = Inst::decode(words).map_err(|e| e.to_string())?;
        step(&mut w, &i, &mem, &mut lds).map_err(|t| t.to_string())?;
    }
    Ok(w)
}

/// Sets VGPR `r` of every lane to `f(lane)`.
pub(crate) fn lanes(w: &mut Wave, r: usize, f: impl Fn(usize) -> u32) {
    for lane in 0..32 {
        w.v[r][lane] = f(lane);
    }
}

/// Runs the instructions with `data` mapped for the GPU at its own address (the KFD
/// mock's GPU addresses are host addresses); `setup` gets that address.
pub(crate) fn run_mem(prog: &[&[u32]], data: &mut [u8], setup: impl FnOnce(&mut Wave, u64)) -> Result<Wave, String> {
    run_mem_lds(prog, data, &mut [0u8; 1024], setup)
}

/// [`run_mem`] with `lds` as the workgroup's LDS.
pub(crate) fn run_mem_lds(
    prog: &[&[u32]],
    data: &mut [u8],
    lds: &mut [u8],
    setup: impl FnOnce(&mut Wave, u64),
) -> Result<Wave, String> {
    run_mem_trap(prog, data, lds, setup).map_err(|t| t.to_string())
}

/// [`run_mem_lds`], with the instruction's error as it is.
pub(crate) fn run_mem_trap(
    prog: &[&[u32]],
    data: &mut [u8],
    lds: &mut [u8],
    setup: impl FnOnce(&mut Wave, u64),
) -> Result<Wave, Trap> {
    let base = data.as_mut_ptr() as u64;
    let mut mem = SliceMemory::new();
    mem.map(base, data);
    let mut w = Wave::new(64, 0);
    w.s[EXEC_LO] = u32::MAX;
    setup(&mut w, base);
    for words in prog {
        let i = Inst::decode(words).map_err(|e| Trap::Refused(e.to_string()))?;
        step(&mut w, &i, &mem, lds)?;
    }
    Ok(w)
}

/// A xorshift32 sequence from `seed` (not 0): the tests' random operands.
pub(crate) fn xorshift32(mut s: u32) -> impl FnMut() -> u32 {
    move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    }
}

/// A xorshift64 sequence from `seed` (not 0).
pub(crate) fn xorshift64(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
