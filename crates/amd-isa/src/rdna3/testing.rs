//! Running single instructions on one wave, for the semantics' unit tests.

use super::decode::Inst;
use super::exec::{Flow, step};
use super::wave::{EXEC_LO, Wave};
use super::{Frontend, Step};
use crate::error::Trap;
use crate::memory::{Memory, SliceMemory};

/// Runs the instruction in `words` on a wave prepared by `setup`.
pub(crate) fn run(words: &[u32], setup: impl FnOnce(&mut Wave)) -> Result<Wave, String> {
    run_all(&[words], setup)
}

/// Runs the instructions in order (no branches) on one wave, all lanes on.
pub(crate) fn run_all(prog: &[&[u32]], setup: impl FnOnce(&mut Wave)) -> Result<Wave, String> {
    run_as::<Semantics>(prog, &mut [], &mut [0u8; 1024], |w, _| setup(w)).map_err(|t| t.to_string())
}

/// Runs one instruction on one wave as the interpreter runs it: decoded once into
/// what running it needs ([`super::exec::Decoded`]), its fast paths taken.
pub(crate) fn run_decoded(words: &[u32], setup: impl FnOnce(&mut Wave)) -> Result<Wave, String> {
    run_as::<super::Rdna3>(&[words], &mut [], &mut [0u8; 1024], |w, _| setup(w)).map_err(|t| t.to_string())
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
    run_as::<Semantics>(prog, data, lds, setup)
}

/// Runs the instructions in order, each as frontend `F` decodes and runs it, on one
/// wave (all lanes on) with `data` mapped at its own address; `setup` gets it.
pub(crate) fn run_as<F: Frontend>(
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
    let mut barrier = super::GroupBarrier::default();
    for words in prog {
        let d = F::decode(words).map_err(|e| Trap::refused(e.to_string()))?;
        // A wave64 runs vector instructions in two passes, as the scheduler does.
        let flow = if w.wave64 && d.per_half() {
            super::run_halves(&d, &mut w, &mem, lds)?
        } else {
            d.run(&mut w, &mem, lds)?
        };
        if let super::Flow::Group(op) = flow {
            barrier.apply(op, &mut w)?;
        }
    }
    Ok(w)
}

/// RDNA3 as the semantics' tests run it: every instruction through `step`, the
/// reference path (not the interpreter's specialised fast paths).
struct Semantics;

#[derive(Clone)]
struct Stepped(Inst);

impl Step for Stepped {
    fn size(&self) -> u8 {
        self.0.size
    }
    fn is_hint(&self) -> bool {
        false
    }
    fn run(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> Result<Flow, Trap> {
        step(w, &self.0, mem, lds)
    }
    fn per_half(&self) -> bool {
        super::exec::per_half(&self.0)
    }
    fn text(&self) -> String {
        self.0.to_string()
    }
}

impl Frontend for Semantics {
    type Decoded = Stepped;
    fn decode(words: &[u32]) -> Result<Stepped, super::DecodeError> {
        Inst::decode(words).map(Stepped)
    }
    const GFX12: bool = false;
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
