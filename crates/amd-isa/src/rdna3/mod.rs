//! RDNA3 (gfx11, wave32): the decoder ([`Inst`]), the disassembler ([`Llvm`]) and the
//! interpreter ([`Interpreter`]), which runs whole dispatches.
//!
//! Each workgroup's waves run round-robin until each ends or reaches `s_barrier`,
//! which releases once every live wave of the group is there. A wave executes one
//! decoded instruction across its 32 lanes at a time, under EXEC. Memory goes through
//! the embedder's [`Memory`]: a miss is a memory fault, reported as
//! [`ExecError::Fault`] with the access and the instruction. An instruction the
//! interpreter does not implement stops the dispatch with an error naming the address,
//! the instruction and the reason.
//!
//! Coverage is per opcode of the ISA's own list ([`opcodes::SPEC`], generated from
//! AMD's machine-readable RDNA3 specification): [`coverage`] classifies each as
//! implemented or refused on purpose with the reason (graphics-only encodings, GWS,
//! GDS) and [`report`] is the table in `coverage/rdna3.md`. The semantics are split by
//! family: `salu` (scalar ALU and scalar memory), `hwreg` (the hardware registers
//! `s_getreg`/`s_setreg` reach), `control` (program control), `exec`
//! (dispatch, 32/64-bit integer and float), `fast` (the commonest VALU operations a
//! whole wave at a time), `valu` (the rest of VOP1/VOP2/VOP3), `compare`, `packed`
//! (VOP3P), `divide`, `matrix` (WMMA and dots), `crosslane` (DPP, permutes, lane reads
//! and writes), `lds`, `memory` (global, flat, scratch) and `buffer` (MUBUF/MTBUF);
//! `modifiers` says which modifiers each instruction form takes ([`modifiers()`]) and
//! applies clamp and omod where the operation's own code does not.
//! Opcodes are matched by the names [`opcodes`] generates. [`execute`] runs one
//! instruction on a [`WaveState`] given whole, for differential tests against another
//! reading of the ISA (`cargo xtask oracle`). `docs/limits.md` says what is
//! approximate or left out.

mod buffer;
mod compare;
mod control;
pub(crate) mod coverage;
mod crosslane;
mod decode;
mod disasm;
mod divide;
mod exec;
mod fast;
mod fma;
mod gather;
mod hwreg;
mod lds;
mod matrix;
mod memory;
mod modifiers;
mod salu;
mod single;
#[cfg(test)]
pub(crate) mod testing;
mod valu;
pub(crate) mod wide;
#[rustfmt::skip]
#[path = "generated/mnemonics.rs"]
mod mnemonics;
#[rustfmt::skip]
#[path = "generated/fields.rs"]
pub mod fields;
#[rustfmt::skip]
#[path = "generated/opcodes.rs"]
pub mod opcodes;
mod packed;
mod rounding;
mod wave;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub use coverage::{Entry, Status, coverage, report, takes_dpp};
pub use decode::{DecodeError, Encoding, Inst};
pub use disasm::Llvm;
pub use modifiers::{Modifiers, modifiers};
pub use single::{LDS_BYTES, WaveState, execute, execute_on, execute_with_memory};
pub(crate) use single::{decode_error, on_wave};

use crate::dispatch::{self, Dispatch, Worker};
use crate::error::{At, ExecError, Trap, TrapKind};
use crate::memory::{Memory, MemoryFault};
pub(crate) use crate::text::signed_hex;
pub(crate) use buffer::{BufferAccess, buffer, gfx9_format, lds_dma_store, lds_dma_value};
pub(crate) use coverage::{classify_probe, coverage_report, entries as coverage_entries};
pub(crate) use disasm::{depctr, scalar_reg, source, vgpr};
pub(crate) use exec::{Decoded, Flow, GroupBarrier, GroupOp, LANE_BIT};
pub(crate) use hwreg::{Field as HwField, Regs, getreg, hwreg_text, setreg};
pub(crate) use lds::{DsExtraAtomic, ds_extra_atomic};
pub(crate) use matrix::{
    Terms, WmmaInputs, WmmaLayout, WmmaMods, WmmaOperands, dot, element, float_out, float_sum, wmma, wmma_float,
};
pub(crate) use memory::{
    FlatAccess, atomic, atomic_op, atomic_result, atomic64, based_address, extra_atomic, flat_generic, global,
    pair_address, private_bytes, scratch,
};
pub(crate) use rounding::{add32, fma32, mul32, sub32, to32};
pub(crate) use salu::{ScalarLoad, inside_buffer, realtime, scalar_buffer_load, scalar_load};
pub(crate) use wave::{EXEC_LO, M0, VCC_LO, VgprRow, Wave};
use wave::{Place, TTMP7, TTMP9};

pub use crate::dispatch::Counters;

/// Most threads in a workgroup.
const MAX_WORKGROUP_THREADS: usize = 1024;

/// The RDNA3 interpreter: runs whole dispatches on a [`Memory`].
#[derive(Debug, Clone)]
pub struct Interpreter {
    /// Instructions one dispatch may execute (all waves together) before it is
    /// stopped as a runaway.
    pub max_instructions: u64,
    /// Threads a large dispatch's workgroups run on (the caller's own and helpers
    /// started for it); default: the machine's cores, or `HCQ_MOCK_THREADS`.
    pub threads: usize,
    /// The sanitizer's LDS check: an access outside the workgroup's LDS allocation
    /// stops the dispatch ([`ExecError::LdsOutside`]) rather than reading 0 or writing
    /// nothing, as the hardware's range check does. Off by default; it also turns off
    /// the whole-wave fast paths of LDS loads and stores.
    pub check_lds: bool,
    /// The sanitizer's private-memory check: an access to a lane's private (scratch)
    /// memory past what the dispatch gives each lane stops the dispatch
    /// ([`ExecError::PrivateOutside`]); on a GPU it would reach another wave's
    /// scratch, or fault. Each lane's share is COMPUTE_TMPRING_SIZE.WAVESIZE's bytes
    /// (units of 1 KiB on gfx9, 256 bytes on gfx10 and later) over the wave's lanes.
    /// Off by default: the interpreter then gives each lane up to 64 KiB, whatever the
    /// dispatch says.
    pub check_private: bool,
    counters: Arc<Counters>,
}

impl Default for Interpreter {
    fn default() -> Self {
        Interpreter {
            max_instructions: 1 << 32,
            threads: dispatch::default_threads(),
            check_lds: false,
            check_private: false,
            counters: Arc::default(),
        }
    }
}

impl Interpreter {
    /// The counters this interpreter (and its clones) add to.
    pub fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }

    /// Runs dispatch `d` to completion: every workgroup, on up to
    /// [`Interpreter::threads`] threads when `mem` can be shared.
    pub fn dispatch(&self, mem: &dyn Memory, d: &Dispatch) -> Result<(), ExecError> {
        self.dispatch_as::<Rdna3>(mem, d)
    }

    /// Runs dispatch `d` with the instructions of generation `F`.
    pub(crate) fn dispatch_as<F: Frontend>(&self, mem: &dyn Memory, d: &Dispatch) -> Result<(), ExecError> {
        let mut grid = Grid::new(d, F::CDNA)?;
        grid.check_lds = self.check_lds;
        if self.check_private {
            grid.private_limit = Some(lane_scratch_bytes(d.tmpring_size, F::CDNA, F::GFX12, d.wave64));
        }
        let (instructions, lanes, result) = dispatch::run_workgroups(
            mem,
            grid.groups,
            self.threads,
            self.max_instructions,
            || Group {
                code: CodeCache {
                    base: d.code_addr,
                    window: Vec::new(),
                    insts: HashMap::new(),
                },
                waves: Vec::new(),
                lds: Vec::new(),
                last: (u64::MAX, [0; 3]),
            },
            |s, mem, me, g| {
                grid.place(d, g, &mut s.last);
                grid.waves(d, &s.last.1, &mut s.waves, F::GFX12);
                s.lds.clear();
                s.lds.resize(grid.lds_bytes, 0);
                run_group::<F>(&mut s.waves, mem, &mut s.code, me, &mut s.lds)
            },
        );
        let c = &self.counters;
        c.instructions.fetch_add(instructions, Ordering::Relaxed);
        c.lane_instructions.fetch_add(lanes, Ordering::Relaxed);
        result
    }
}

/// A generation's instructions as the interpreter runs them: how they are decoded
/// (once per dispatch and thread) and how the waves start.
pub(crate) trait Frontend {
    /// An instruction decoded with what running it needs.
    type Decoded: Step + Clone;
    /// Decodes the instruction at the start of `words`.
    fn decode(words: &[u32]) -> Result<Self::Decoded, DecodeError>;
    /// Whether the waves start as gfx12's do: the workgroup's ids in TTMP9 (x) and
    /// TTMP7 (y in bits 15:0, z in 31:16) too, as its architected SGPRs put them; no
    /// IEEE mode or DX10 clamp from RSRC1 (bits 23 and 21 mean other things there);
    /// IEEE 754-2019's NaN rule in the float minimum and maximum.
    const GFX12: bool;
    /// Whether the waves start as CDNA3's do: VGPRs granted in granules of 8 (wave64),
    /// the AccVGPRs in the same file from RSRC3's ACCUM_OFFSET.
    const CDNA: bool = false;
}

/// A decoded instruction, as a wave runs it.
pub(crate) trait Step {
    /// Its length in dwords.
    fn size(&self) -> u8;
    /// Whether running it changes nothing but the PC (an ordering or scheduling
    /// hint, one dword).
    fn is_hint(&self) -> bool;
    /// Runs it on `w`.
    fn run(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> Result<Flow, Trap>;
    /// Whether a wave64 runs it as two passes of 32 lanes (a vector instruction), not
    /// once (scalar instructions, and the vector ones that see all 64 lanes at once).
    fn per_half(&self) -> bool;
    /// Whether it may write the scalar file (a compare's mask, a carry-out, EXEC):
    /// the two passes of a wave64 keep such writes apart ([`run_halves`]); of an
    /// instruction that writes none, they need not. `true` unless known otherwise.
    fn writes_scalars(&self) -> bool {
        true
    }
    /// The instruction as an error names it.
    fn text(&self) -> String;
}

/// RDNA3's instructions.
pub(crate) struct Rdna3;

impl Frontend for Rdna3 {
    type Decoded = Decoded;
    fn decode(words: &[u32]) -> Result<Decoded, DecodeError> {
        Inst::decode(words).map(Decoded::new)
    }
    const GFX12: bool = false;
}

impl Step for Decoded {
    #[inline]
    fn size(&self) -> u8 {
        self.inst.size
    }
    #[inline]
    fn is_hint(&self) -> bool {
        Decoded::is_hint(self)
    }
    #[inline(always)]
    fn run(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> Result<Flow, Trap> {
        Decoded::run(self, w, mem, lds)
    }
    #[inline]
    fn per_half(&self) -> bool {
        exec::per_half(&self.inst)
    }
    #[inline]
    fn writes_scalars(&self) -> bool {
        exec::writes_scalars(&self.inst)
    }
    fn text(&self) -> String {
        self.inst.to_string()
    }
}

/// What a thread keeps from one workgroup to the next.
struct Group<D> {
    code: CodeCache<D>,
    waves: Vec<Wave>,
    lds: Vec<u8>,
    /// The last workgroup this thread ran and its coordinates (the next one's follow
    /// from them without a division, as a thread mostly takes workgroups in order);
    /// `u64::MAX` before the first.
    last: (u64, [u32; 3]),
}

/// Decoded instructions: a direct-indexed window of dwords from the kernel's entry
/// (most code), a map for anything outside it (called functions far away). Each is
/// decoded once per dispatch and thread, with what running it needs ([`Decoded`]: the
/// VALU's operands resolved, hints marked).
struct CodeCache<D> {
    base: u64,
    window: Vec<Option<D>>,
    insts: HashMap<u64, D>,
}

/// Dwords of code the direct window covers (256 KiB).
const WINDOW_DWORDS: u64 = 1 << 16;

impl<D: Clone> CodeCache<D> {
    /// The window slot of `pc`.
    fn slot(&self, pc: u64) -> Option<usize> {
        pc.checked_sub(self.base)
            .filter(|d| d % 4 == 0 && d / 4 < WINDOW_DWORDS)
            .map(|d| (d / 4) as usize)
    }

    /// The instruction at `pc` when it has been decoded (no copy, no error to carry:
    /// the path every instruction takes after its first run).
    #[inline]
    fn get(&self, pc: u64) -> Option<&D> {
        // A decoded instruction in the window (the commonest): one subtraction, and the
        // window's length as the bound (it never grows past WINDOW_DWORDS).
        let d = pc.wrapping_sub(self.base);
        if d & 3 == 0
            && let Some(Some(i)) = usize::try_from(d >> 2).ok().and_then(|k| self.window.get(k))
        {
            return Some(i);
        }
        self.get_rest(pc)
    }

    /// [`CodeCache::get`] for the rest: outside the window, or not decoded yet.
    #[inline(never)]
    fn get_rest(&self, pc: u64) -> Option<&D> {
        match self.slot(pc) {
            Some(k) => self.window.get(k)?.as_ref(),
            None => self.insts.get(&pc),
        }
    }

    /// Decodes the instruction at `pc` into the cache.
    #[inline(never)]
    fn fetch<F: Frontend<Decoded = D>>(&mut self, mem: &dyn Memory, pc: u64) -> Result<(), ExecError> {
        let slot = self.slot(pc);
        // Up to three dwords (an instruction and its literal); fewer at the end of
        // the code's mapping.
        let mut words = Vec::new();
        let mut fault = None;
        for n in (1..=3usize).rev() {
            let mut b = vec![0u8; n * 4];
            match mem.read(pc, &mut b) {
                Ok(()) => {
                    words = b
                        .chunks(4)
                        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect();
                    break;
                }
                Err(f) => fault = Some(f),
            }
        }
        if words.is_empty() {
            let fault = fault.unwrap_or_else(|| MemoryFault::not_present(pc, false));
            return Err(ExecError::Fetch { fault, pc });
        }
        let i = F::decode(&words).map_err(|e| ExecError::Decode {
            pc,
            words: words[..words.len().min(2)].to_vec(),
            reason: e.to_string(),
        })?;
        match slot {
            Some(k) => {
                if self.window.len() <= k {
                    self.window.resize(k + 1, None);
                }
                self.window[k] = Some(i);
            }
            None => {
                self.insts.insert(pc, i);
            }
        }
        Ok(())
    }
}

/// A dispatch's shape and its waves' initial state.
struct Grid {
    /// Lanes of a wave: 32, or 64 for a wave64 dispatch.
    wave_lanes: usize,
    user_sgprs: usize,
    tgid_en: [bool; 3],
    tidig: u32,
    vgprs: usize,
    /// CDNA3: the first AccVGPR's index in the unified file.
    acc_base: usize,
    /// CDNA3's waves (gfx9's float minimum and maximum).
    cdna: bool,
    block: [usize; 3],
    threads: usize,
    lds_bytes: usize,
    /// [`Interpreter::check_lds`].
    check_lds: bool,
    /// [`Interpreter::check_private`]: each lane's private bytes.
    private_limit: Option<usize>,
    groups: u64,
    /// Workgroups in x and y (`Dispatch::groups`).
    dims: [u32; 2],
    /// Waves of a whole workgroup.
    full_waves: usize,
    /// Each wave's lanes' thread ids (VGPR 0 as a wave starts), 32 lanes an entry: a
    /// wave64 has two. The same for every whole workgroup of the dispatch.
    ids: Vec<[u32; 32]>,
}

impl Grid {
    fn new(d: &Dispatch, cdna: bool) -> Result<Grid, ExecError> {
        let rsrc2 = d.rsrc[1];
        let [bx, by, bz] = d.block.map(|v| v.max(1) as usize);
        // The registers come from the ring: a workgroup has at most 1024 threads.
        let threads = bx
            .checked_mul(by)
            .and_then(|t| t.checked_mul(bz))
            .filter(|&t| t <= MAX_WORKGROUP_THREADS)
            .ok_or(ExecError::WorkgroupTooLarge {
                block: d.block,
                max: MAX_WORKGROUP_THREADS,
            })?;
        let [gx, gy, gz] = d.groups().map(u64::from);
        let groups = gx
            .checked_mul(gy)
            .and_then(|t| t.checked_mul(gz))
            .ok_or(ExecError::GridTooLarge { grid: d.grid })?;
        let (wave_lanes, tidig) = (if d.wave64 { 64 } else { 32 }, (rsrc2 >> 11) & 3);
        Ok(Grid {
            wave_lanes,
            user_sgprs: ((rsrc2 >> 1) & 0x1f) as usize,
            tgid_en: [rsrc2 >> 7 & 1 != 0, rsrc2 >> 8 & 1 != 0, rsrc2 >> 9 & 1 != 0],
            tidig,
            ids: lane_ids([bx, by, bz], threads, tidig, wave_lanes),
            // RSRC1.VGPRS in granules of 8 registers (wave32, and CDNA3's wave64, whose
            // count takes in the AccVGPRs) or 4 (RDNA's wave64).
            vgprs: (((d.rsrc[0] & 0x3f) + 1) * if d.wave64 && !cdna { 4 } else { 8 }) as usize,
            // RSRC3.ACCUM_OFFSET: (offset / 4) - 1.
            acc_base: if cdna {
                (((d.rsrc[2] & 0x3f) + 1) * 4) as usize
            } else {
                0
            },
            cdna,
            block: [bx, by, bz],
            threads,
            // RSRC2.LDS_SIZE, in 512-byte blocks on gfx11.
            lds_bytes: (((rsrc2 >> 15) & 0x1ff) * 512) as usize,
            check_lds: false,
            private_limit: None,
            groups,
            dims: [gx as u32, gy as u32],
            full_waves: threads.div_ceil(wave_lanes),
        })
    }

    /// Makes `at` (the workgroup this thread ran before and its coordinates) workgroup
    /// `g` and its coordinates ([`Dispatch::group_id`]): counted on from the last
    /// where `g` follows it (in place, each coordinate a store of its own: the next
    /// reads of them are not held up waiting for a wider value to be put together).
    #[inline]
    fn place(&self, d: &Dispatch, g: u64, at: &mut (u64, [u32; 3])) {
        let id = &mut at.1;
        if at.0.checked_add(1) == Some(g) {
            let [gx, gy] = self.dims;
            if id[0] + 1 < gx {
                id[0] += 1;
            } else {
                id[0] = 0;
                if id[1] + 1 < gy {
                    id[1] += 1;
                } else {
                    id[1] = 0;
                    id[2] += 1;
                }
            }
        } else {
            *id = d.group_id(g);
        }
        at.0 = g;
    }

    /// The waves of the workgroup at `id` (x, y, z), in `waves` (whose allocations
    /// are reused).
    fn waves(&self, d: &Dispatch, id: &[u32; 3], waves: &mut Vec<Wave>, gfx12: bool) {
        let &[gx, gy, gz] = id;
        // A partial last workgroup (thread dimensions) has fewer threads.
        let (block, threads, n, whole) = if d.initiator & Dispatch::USE_THREAD_DIMENSIONS == 0 {
            (self.block, self.threads, self.full_waves, true)
        } else {
            let b = d.block_of(*id).map(|v| v.max(1) as usize);
            let t = b[0] * b[1] * b[2];
            (b, t, t.div_ceil(self.wave_lanes), b == self.block)
        };
        let own_ids = if whole {
            Vec::new()
        } else {
            lane_ids(block, threads, self.tidig, self.wave_lanes)
        };
        waves.truncate(n);
        while waves.len() < n {
            waves.push(Wave::new(self.vgprs, d.code_addr));
        }
        for (wi, w) in waves.iter_mut().enumerate() {
            w.reset(self.vgprs, d.code_addr);
            if self.wave_lanes == 64 {
                w.wave64 = true;
                w.v_other.resize(w.v.len(), VgprRow::default());
            }
            // At most 32 waves (1024 threads), under 256 KiB of LDS (RSRC2.LDS_SIZE is 9
            // bits of 512 bytes): both fit.
            w.place = Place {
                wave: wi as u32,
                waves: n as u32,
                lds_bytes: self.lds_bytes as u32,
                acc_base: self.acc_base as u32,
            };
            // RSRC1.FLOAT_MODE has MODE's layout; DX10_CLAMP (bit 21) and IEEE_MODE
            // (bit 23) are MODE bits 8 and 9 (gfx12 has neither).
            w.check_lds = self.check_lds;
            w.private_limit = self.private_limit;
            w.mode = (d.rsrc[0] >> 12) & 0xff;
            if !gfx12 {
                w.mode |= (d.rsrc[0] >> 21 & 1) << 8 | (d.rsrc[0] >> 23 & 1) << 9;
            }
            w.nan_rule = if gfx12 {
                Some(crate::float::minmax::Nans::Num)
            } else if self.cdna {
                // gfx9's order of NaN operands (IEEE or not as MODE says at each use).
                Some(crate::float::minmax::Nans::Gfx9Legacy)
            } else {
                None
            };
            let user = self.user_sgprs.min(16);
            w.s[..user].copy_from_slice(&d.user_data[..user]);
            let mut next = self.user_sgprs;
            for (k, id) in [gx, gy, gz].into_iter().enumerate() {
                if self.tgid_en[k] {
                    w.s[next] = id;
                    next += 1;
                }
            }
            if gfx12 {
                w.s[TTMP9] = gx;
                w.s[TTMP7] = gy & 0xffff | gz << 16;
            }
            // The lanes' thread ids: the dispatch's table, or a partial workgroup's own.
            let first = wi * self.wave_lanes;
            let lanes = threads.saturating_sub(first).min(self.wave_lanes);
            let per = if self.wave_lanes == 64 { 2 } else { 1 };
            let table = if whole { &self.ids } else { &own_ids };
            w.v[0].0 = table[wi * per];
            if per == 2 {
                w.v_other[0].0 = table[wi * per + 1];
            }
            let mask = |n: usize| if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
            w.s[EXEC_LO] = mask(lanes);
            if w.wave64 {
                w.s[EXEC_LO + 1] = mask(lanes.saturating_sub(32));
            }
        }
    }
}

/// The thread ids of a workgroup of `threads` threads shaped `block`, in waves of
/// `wave_lanes` (x fastest, then y, then z; x alone in VGPR 0 when `tidig` is 0, else x,
/// y and z packed 10 bits apart), 32 lanes an entry. Lanes past the threads are 0.
fn lane_ids(block: [usize; 3], threads: usize, tidig: u32, wave_lanes: usize) -> Vec<[u32; 32]> {
    let [bx, by, _] = block;
    let mut ids = vec![[0u32; 32]; threads.div_ceil(wave_lanes) * (wave_lanes / 32)];
    let (mut x, mut y, mut z) = (0, 0, 0);
    for t in 0..threads {
        ids[t / 32][t % 32] = if tidig == 0 { x } else { x | y << 10 | z << 20 } as u32;
        x += 1;
        if x == bx {
            x = 0;
            y += 1;
            if y == by {
                y = 0;
                z += 1;
            }
        }
    }
    ids
}

/// Runs vector instruction `d` on wave64 `w` as the hardware issues it: lanes 0 to 31,
/// then 32 to 63. Both passes read the scalar registers as they were before the
/// instruction (a scalar source is read once: the first pass's half of a mask
/// destination must not reach the second pass's reads of the same SGPR); each pass
/// writes its own half of a mask.
#[inline(never)]
pub(crate) fn run_halves(d: &impl Step, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> Result<Flow, Trap> {
    if !d.writes_scalars() {
        // No scalar results to keep apart: the passes run back to back, and a half
        // with no active lane, on which such an instruction changes nothing, is
        // skipped (a wave of a few lanes, a one-lane workgroup's, runs one pass).
        let mut flow = Flow::Next;
        if w.exec() != 0 {
            flow = d.run(w, mem, lds)?;
        }
        w.swap_halves();
        let second = if w.exec() != 0 { d.run(w, mem, lds) } else { Ok(flow) };
        w.swap_halves();
        return second;
    }
    let before = w.s;
    d.run(w, mem, lds)?;
    let first = std::mem::replace(&mut w.s, before);
    w.swap_halves();
    let second = d.run(w, mem, lds);
    w.swap_halves();
    // What the first pass changed, over the second's file (a select, not a branch, a
    // register: the loop vectorises).
    for ((s, &a), &b) in w.s.iter_mut().zip(&first).zip(&before) {
        *s = if a != b { a } else { *s };
    }
    second
}

/// A wave's trap as the dispatch's error (out of the scheduler's loop, which it would
/// otherwise grow past what the compiler inlines into it).
#[cold]
#[inline(never)]
fn trapped(t: Trap, pc: u64, d: &impl Step) -> ExecError {
    exec_error(t, pc, d.text())
}

/// Each lane's share of the private memory COMPUTE_TMPRING_SIZE gives a wave: WAVESIZE
/// (bits 24:12 on gfx9, 26:12 on gfx11, 29:12 on gfx12) in units of 1 KiB (gfx9) or
/// 256 bytes, over the wave's lanes.
fn lane_scratch_bytes(tmpring_size: u32, gfx9: bool, gfx12: bool, wave64: bool) -> usize {
    let (bits, unit) = match (gfx9, gfx12) {
        (true, _) => (13, 1024),
        (false, false) => (15, 256),
        (false, true) => (18, 256),
    };
    ((tmpring_size >> 12) & ((1 << bits) - 1)) as usize * unit / if wave64 { 64 } else { 32 }
}

/// A workgroup barrier operation, out of the scheduler's loop (RDNA4's, rare).
#[cold]
#[inline(never)]
fn group_op(barrier: &mut GroupBarrier, op: GroupOp, w: &mut Wave, d: &impl Step) -> Result<(), ExecError> {
    barrier.apply(op, w).map_err(|t| trapped(t, w.pc, d))
}

/// An instruction's trap as the dispatch's error, naming the instruction.
pub(crate) fn exec_error(t: Trap, pc: u64, inst: String) -> ExecError {
    let at = At { pc, inst };
    match t.into_kind() {
        TrapKind::Fault(fault, access) => ExecError::Fault { fault, access, at },
        TrapKind::LdsOutside(offset, access, lds_bytes) => ExecError::LdsOutside {
            offset,
            access,
            lds_bytes,
            at,
        },
        TrapKind::PrivateOutside(offset, access, lane_bytes) => ExecError::PrivateOutside {
            offset,
            access,
            lane_bytes,
            at,
        },
        TrapKind::Missing(reason) | TrapKind::Refused(reason) => ExecError::Unsupported { at, reason },
    }
}

fn run_group<F: Frontend>(
    waves: &mut [Wave],
    mem: &dyn Memory,
    code: &mut CodeCache<F::Decoded>,
    me: &mut Worker<'_>,
    lds: &mut [u8],
) -> Result<(), ExecError> {
    let mut barrier = GroupBarrier::default();
    // The last EXEC seen and its lanes.
    let mut seen = (u64::MAX, 64);
    loop {
        let mut progressed = false;
        for w in waves.iter_mut().filter(|w| !w.done && !w.at_barrier) {
            progressed = true;
            loop {
                if me.tick()? {
                    mem.checkpoint().map_err(|_| ExecError::Stopped)?;
                }
                // Counted again only when EXEC changes (a population count is a
                // dozen instructions in the baseline x86-64 build).
                let exec = w.exec_all();
                if exec != seen.0 {
                    seen = (exec, u64::from(exec.count_ones()));
                }
                me.lanes += seen.1;
                let d = match code.get(w.pc) {
                    Some(d) => d,
                    None => {
                        code.fetch::<F>(mem, w.pc)?;
                        code.get(w.pc).ok_or(ExecError::Fetch {
                            // fetch just put it there.
                            fault: MemoryFault::not_present(w.pc, false),
                            pc: w.pc,
                        })?
                    }
                };
                if d.is_hint() {
                    // Nothing to run (one dword: SOPP).
                    w.pc += 4;
                    continue;
                }
                let flow = if w.wave64 && d.per_half() {
                    run_halves(d, w, mem, lds)
                } else {
                    d.run(w, mem, lds)
                };
                // The common case first, as a branch of its own (a jump table over
                // every outcome is mispredicted more often).
                if let Ok(Flow::Next) = flow {
                    w.pc += d.size() as u64 * 4;
                    continue;
                }
                let flow = match flow {
                    Ok(flow) => flow,
                    Err(t) => return Err(trapped(t, w.pc, d)),
                };
                match flow {
                    Flow::Next => w.pc += d.size() as u64 * 4,
                    Flow::Jump(imm) => w.pc = (w.pc + 4).wrapping_add_signed(imm as i64 * 4),
                    Flow::Goto(to) => w.pc = to,
                    Flow::Barrier => {
                        w.pc += 4;
                        w.at_barrier = true;
                        break;
                    }
                    Flow::End => {
                        w.done = true;
                        break;
                    }
                    Flow::Group(op) => {
                        group_op(&mut barrier, op, w, d)?;
                        w.pc += d.size() as u64 * 4;
                    }
                }
            }
        }
        if waves.iter().all(|w| w.done) {
            return Ok(());
        }
        if !progressed {
            // Every live wave waits at the barrier: release them.
            waves.iter_mut().for_each(|w| w.at_barrier = false);
            barrier.complete();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::SharedMemory;
    use std::sync::atomic::AtomicU8;

    /// COMPUTE_TMPRING_SIZE's WAVESIZE per generation (field width, unit) over the
    /// wave's lanes; WAVES (bits 11:0) does not count.
    #[test]
    fn each_lanes_share_of_the_waves_scratch() {
        // gfx9: 6 KiB a wave, 96 bytes for each of its 64 lanes.
        assert_eq!(lane_scratch_bytes(6 << 12 | 0xfff, true, false, true), 96);
        // gfx11: 16 × 256 bytes: 128 for a wave32's lanes, 64 for a wave64's.
        assert_eq!(lane_scratch_bytes(16 << 12 | 0x20, false, false, false), 128);
        assert_eq!(lane_scratch_bytes(16 << 12, false, false, true), 64);
        // Bit 29 is WAVESIZE's top bit on gfx12 alone; bit 25 on gfx11 and gfx12, not gfx9.
        assert_eq!(lane_scratch_bytes(1 << 29, false, true, false), (1 << 17) * 256 / 32);
        assert_eq!(lane_scratch_bytes(1 << 29, false, false, false), 0);
        assert_eq!(lane_scratch_bytes(1 << 25, true, false, true), 0);
        assert_eq!(lane_scratch_bytes(1 << 25, false, false, true), (1 << 13) * 256 / 64);
    }

    /// Bytes at one address that several threads' views reach (relaxed byte
    /// accesses: the workgroups of these tests write disjoint words).
    struct Shared {
        base: u64,
        bytes: Vec<AtomicU8>,
    }

    impl Shared {
        fn at(&self, addr: u64, len: usize, write: bool) -> Result<&[AtomicU8], MemoryFault> {
            usize::try_from(addr.wrapping_sub(self.base))
                .ok()
                .and_then(|off| self.bytes.get(off..off.checked_add(len)?))
                .ok_or(MemoryFault::not_present(addr, write))
        }
    }

    impl Memory for Shared {
        fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
            let b = self.at(addr, out.len(), false)?;
            out.iter_mut().zip(b).for_each(|(o, b)| *o = b.load(Ordering::Relaxed));
            Ok(())
        }
        fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
            let b = self.at(addr, data.len(), true)?;
            b.iter().zip(data).for_each(|(b, &v)| b.store(v, Ordering::Relaxed));
            Ok(())
        }
        fn atomic_u32(&self, _: u64, _: &mut dyn FnMut(u32) -> Option<u32>) -> Result<Option<u32>, MemoryFault> {
            unimplemented!("not used by these tests")
        }
        fn atomic_u64(&self, _: u64, _: &mut dyn FnMut(u64) -> Option<u64>) -> Result<Option<u64>, MemoryFault> {
            unimplemented!("not used by these tests")
        }
        fn share(&self) -> Option<&dyn SharedMemory> {
            Some(self)
        }
    }

    impl SharedMemory for Shared {
        fn open(&self) -> Box<dyn Memory + '_> {
            Box::new(self)
        }
    }

    impl Memory for &Shared {
        fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
            (**self).read(addr, out)
        }
        fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
            (**self).write(addr, data)
        }
        fn atomic_u32(&self, a: u64, f: &mut dyn FnMut(u32) -> Option<u32>) -> Result<Option<u32>, MemoryFault> {
            (**self).atomic_u32(a, f)
        }
        fn atomic_u64(&self, a: u64, f: &mut dyn FnMut(u64) -> Option<u64>) -> Result<Option<u64>, MemoryFault> {
            (**self).atomic_u64(a, f)
        }
    }

    /// Each lane of workgroup g stores g at (g × 32 + lane) × 4: s_lshl_b32 s3, s2, 7;
    /// v_lshlrev_b32 v2, 2, v0; v_add_nc_u32 v2, s3, v2; v_mov_b32 v1, s2;
    /// global_store_b32 v2, v1, s[0:1]; s_endpgm.
    const STORE_GROUP_ID: [u32; 7] = [
        0x8403_8702,
        0x3004_0082,
        0x4a04_0403,
        0x7e02_0202,
        0xdc6a_0000,
        0x0000_0102,
        0xbfb0_0000,
    ];

    /// STORE_GROUP_ID in memory with room for `room` groups' output after it, and its
    /// dispatch over `groups` workgroups of `lanes` lanes: (memory, dispatch, where the
    /// output starts).
    fn store_group_id(groups: u32, room: usize, lanes: u32) -> (Shared, Dispatch, u64) {
        let mut mem = vec![0u32; 1024 + room * 32];
        mem[..STORE_GROUP_ID.len()].copy_from_slice(&STORE_GROUP_ID);
        let base = 0x7f00_0000_0000u64;
        let m = Shared {
            base,
            bytes: mem.iter().flat_map(|w| w.to_le_bytes()).map(AtomicU8::new).collect(),
        };
        let out = base + 4096;
        let mut user_data = [0u32; 16];
        user_data[0] = out as u32;
        user_data[1] = (out >> 32) as u32;
        let d = Dispatch {
            code_addr: base,
            // FLOAT_MODE 0xf0: nearest-even, denormals kept; 8 VGPRs.
            rsrc: [0xf0 << 12, 2 << 1 | 1 << 7, 0],
            user_data,
            block: [lanes, 1, 1],
            grid: [groups, 1, 1],
            ..Dispatch::default()
        };
        (m, d, out)
    }

    /// Runs STORE_GROUP_ID over `groups` workgroups on `threads` threads, with room for
    /// `room` groups' output: (output words, result, lane instructions, the first byte
    /// past the output).
    fn dispatch(groups: u32, room: usize, threads: usize) -> (Vec<u32>, Result<(), ExecError>, u64, u64) {
        let (m, d, _) = store_group_id(groups, room, 32);
        let end = m.base + m.bytes.len() as u64;
        let exec = Interpreter {
            threads,
            ..Interpreter::default()
        };
        let counters = exec.counters();
        let result = exec.dispatch(&m, &d);
        let lanes = counters.lane_instructions.load(Ordering::Relaxed);
        let bytes: Vec<u8> = m.bytes.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        let words = bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        (words.skip(1024).collect(), result, lanes, end)
    }

    /// A memory that records the prefetches it is asked for.
    struct Prefetched {
        inner: Shared,
        asked: parking_lot::Mutex<Vec<(u64, bool)>>,
    }

    impl Memory for Prefetched {
        fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
            self.inner.read(addr, out)
        }
        fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryFault> {
            self.inner.write(addr, data)
        }
        fn prefetch(&self, addr: u64, write: bool) {
            self.asked.lock().push((addr, write));
        }
        fn atomic_u32(&self, a: u64, f: &mut dyn FnMut(u32) -> Option<u32>) -> Result<Option<u32>, MemoryFault> {
            self.inner.atomic_u32(a, f)
        }
        fn atomic_u64(&self, a: u64, f: &mut dyn FnMut(u64) -> Option<u64>) -> Result<Option<u64>, MemoryFault> {
            self.inner.atomic_u64(a, f)
        }
    }

    /// One-lane workgroups each storing at the next 128 bytes: from the third on, the
    /// store's line two workgroups ahead is prefetched (the stride seen twice); the
    /// results are those of a run without prefetching.
    #[test]
    fn a_steady_stride_is_prefetched_ahead() {
        let groups = 8u32;
        let (inner, d, out) = store_group_id(groups, groups as usize, 1);
        let m = Prefetched {
            inner,
            asked: parking_lot::Mutex::new(Vec::new()),
        };
        Interpreter::default().dispatch(&m, &d).unwrap();
        let want: Vec<(u64, bool)> = (2..u64::from(groups)).map(|g| (out + (g + 2) * 128, true)).collect();
        assert_eq!(*m.asked.lock(), want);
        for g in 0..groups as usize {
            let mut b = [0u8; 4];
            m.read(out + g as u64 * 128, &mut b).unwrap();
            assert_eq!(u32::from_le_bytes(b), g as u32, "workgroup {g}'s store");
        }
    }

    /// RSRC1's FLOAT_MODE becomes each wave's MODE: f16/f64 flushing (0x30: f32
    /// denormals kept, f16/f64 flushed both ways) and directed rounding are taken as
    /// they are.
    #[test]
    fn float_mode_sets_the_waves_mode() {
        let d = |float_mode: u32| Dispatch {
            rsrc: [float_mode << 12, 0, 0],
            block: [32, 1, 1],
            grid: [1, 1, 1],
            ..Dispatch::default()
        };
        let mut waves = Vec::new();
        // 0x30, and 0x39: the same with f32 toward +infinity, f16/f64 toward -infinity.
        for mode in [0x30, 0x39] {
            Grid::new(&d(mode), false)
                .unwrap()
                .waves(&d(mode), &[0; 3], &mut waves, false);
            assert_eq!(waves[0].mode & 0xff, mode);
        }
    }

    /// The code cache finds an instruction by its exact address: in the window by
    /// its dword, outside it in the map; an address between two dwords (a jump
    /// through registers can make one) or below the window finds nothing decoded.
    #[test]
    fn code_cache_finds_only_the_exact_address() {
        let base = 0x7f00_0000_1000u64;
        let mut c = CodeCache {
            base,
            window: vec![Some(7u32), None, Some(9)],
            insts: HashMap::from([(base - 0x100, 1u32), (base + 4 * WINDOW_DWORDS + 8, 2)]),
        };
        assert_eq!(c.get(base), Some(&7));
        assert_eq!(c.get(base + 4), None);
        assert_eq!(c.get(base + 8), Some(&9));
        for pc in [base + 1, base + 2, base + 3, base + 10, base - 4, base + 12] {
            assert_eq!(c.get(pc), None, "{pc:#x}");
        }
        assert_eq!(c.get(base - 0x100), Some(&1));
        assert_eq!(c.get(base + 4 * WINDOW_DWORDS + 8), Some(&2));
        c.window.resize(WINDOW_DWORDS as usize, Some(5));
        assert_eq!(c.get(base + 4 * (WINDOW_DWORDS - 1)), Some(&5));
        assert_eq!(c.get(base + 4 * WINDOW_DWORDS), None);
        assert_eq!(c.get(base + 6), None);
    }

    /// A thread's next workgroup starts from zeroed registers, not the last one's:
    /// each workgroup stores v5 and s20 as it finds them, then sets them (s_lshl_b32
    /// s3, s2, 3; v_mov_b32 v2, s3; v_mov_b32 v3, v5; v_mov_b32 v4, s20;
    /// global_store_b64 v2, v[3:4], s[0:1]; v_mov_b32 v5, 77; s_mov_b32 s20, 99;
    /// s_endpgm), one lane and all 32.
    #[test]
    fn each_workgroup_starts_from_zeroed_registers() {
        const CODE: [u32; 11] = [
            0x8403_8302,
            0x7e04_0203,
            0x7e06_0305,
            0x7e08_0214,
            0xdc6e_0000,
            0x0000_0302,
            0x7e0a_02ff,
            0x0000_004d,
            0xbe94_00ff,
            0x0000_0063,
            0xbfb0_0000,
        ];
        for lanes in [1, 32] {
            let (mut m, d, out) = store_group_id(6, 1, lanes);
            for (k, w) in CODE.iter().enumerate() {
                for (b, v) in w.to_le_bytes().into_iter().enumerate() {
                    m.bytes[k * 4 + b] = AtomicU8::new(v);
                }
            }
            let exec = Interpreter {
                threads: 1,
                ..Interpreter::default()
            };
            exec.dispatch(&m, &d).unwrap();
            let at = (out - m.base) as usize;
            let got: Vec<u8> = m.bytes[at..at + 6 * 8]
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect();
            assert_eq!(got, vec![0; 6 * 8], "{lanes} lanes");
        }
    }

    /// Each wave knows its number in the workgroup, the workgroup's waves and its LDS
    /// (what `s_getreg` reads of HW_ID1, STATUS and LDS_ALLOC).
    #[test]
    fn waves_know_their_place() {
        // 100 threads: 4 waves; RSRC2.LDS_SIZE 3 blocks of 512 bytes.
        let d = Dispatch {
            rsrc: [0, 3 << 15, 0],
            block: [10, 10, 1],
            grid: [2, 1, 1],
            ..Dispatch::default()
        };
        let mut waves = Vec::new();
        Grid::new(&d, false)
            .unwrap()
            .waves(&d, &d.group_id(1), &mut waves, false);
        let places: Vec<Place> = waves.iter().map(|w| w.place).collect();
        let want: Vec<Place> = (0..4)
            .map(|wave| Place {
                wave,
                waves: 4,
                lds_bytes: 1536,
                acc_base: 0,
            })
            .collect();
        assert_eq!(places, want);
    }

    /// A grid in threads (an AQL dispatch's): with PARTIAL_TG_EN the last workgroup in
    /// each dimension holds the threads left, its local ids counted in its own size;
    /// without it, those threads do not run.
    #[test]
    fn thread_dimensions_make_partial_last_workgroups() {
        let d = |initiator| Dispatch {
            rsrc: [0, 1 << 7 | 2 << 11, 0],
            block: [16, 4, 1],
            grid: [40, 6, 1],
            initiator,
            ..Dispatch::default()
        };
        let partial = d(Dispatch::USE_THREAD_DIMENSIONS | Dispatch::PARTIAL_TG_EN);
        assert_eq!(partial.groups(), [3, 2, 1]);
        assert_eq!(d(Dispatch::USE_THREAD_DIMENSIONS).groups(), [2, 1, 1]);
        assert_eq!(
            d(0).groups(),
            [40, 6, 1],
            "without thread dimensions the grid counts workgroups"
        );
        let grid = Grid::new(&partial, false).unwrap();
        assert_eq!(grid.groups, 6);
        let mut waves = Vec::new();
        // Workgroup (2, 1): 8 × 2 threads, one wave of 16 lanes.
        grid.waves(&partial, &partial.group_id(5), &mut waves, false);
        assert_eq!(waves.len(), 1);
        assert_eq!(waves[0].s[EXEC_LO], 0xffff);
        assert_eq!(waves[0].s[0], 2, "TGID_X");
        let ids: Vec<u32> = waves[0].v[0][..16].to_vec();
        let want: Vec<u32> = (0..16).map(|t| (t % 8) | ((t / 8) << 10)).collect();
        assert_eq!(ids, want, "x counts to the partial width, then y");
        // Workgroup (0, 0): whole, 64 threads in two waves.
        grid.waves(&partial, &[0; 3], &mut waves, false);
        assert_eq!(waves.len(), 2);
        assert_eq!(waves[1].s[EXEC_LO], u32::MAX);
    }

    /// Wave64 instruction by instruction (encodings from `llvm-mc-19 -mcpu=gfx1100
    /// -mattr=+wavefrontsize64`): a compare into an SGPR pair and a select by it
    /// across 64 lanes, readlane/writelane of lanes past 31, the mbcnt pair counting
    /// lanes 0 to 63, readfirstlane with only the high half active, and a VOP3SD whose
    /// carry-out pair is also its scalar source (both halves read the old value).
    #[test]
    fn wave64_instructions_see_64_lanes() {
        use crate::rdna3::testing::run_all;
        let words = |b: &[u8]| -> Vec<u32> {
            b.chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let prog: Vec<Vec<u32>> = vec![
            words(&[0x00, 0x00, 0x4c, 0xd4, 0xa8, 0x02, 0x02, 0x00]), // v_cmp_gt_u32 s[0:1], 40, v1
            words(&[0x02, 0x00, 0x01, 0xd5, 0x87, 0x12, 0x01, 0x00]), // v_cndmask_b32 v2, 7, 9, s[0:1]
            words(&[0x04, 0x00, 0x60, 0xd7, 0x01, 0x51, 0x01, 0x00]), // v_readlane_b32 s4, v1, 40
            words(&[0x03, 0x00, 0x61, 0xd7, 0x05, 0x64, 0x01, 0x00]), // v_writelane_b32 v3, s5, 50
            words(&[0x04, 0x00, 0x1f, 0xd7, 0xc1, 0x00, 0x01, 0x00]), // v_mbcnt_lo_u32_b32 v4, -1, 0
            words(&[0x04, 0x00, 0x20, 0xd7, 0xc1, 0x08, 0x02, 0x00]), // v_mbcnt_hi_u32_b32 v4, -1, v4
            words(&[0x06, 0x08, 0xfe, 0xd6, 0x01, 0x11, 0x0c, 0x02]), // v_mad_u64_u32 v[6:7], s[8:9], v1, s8, 3
        ];
        let refs: Vec<&[u32]> = prog.iter().map(|p| &p[..]).collect();
        let w = run_all(&refs, |w| {
            w.wave64 = true;
            w.v_other = vec![VgprRow::default(); w.v.len()];
            w.s[EXEC_LO + 1] = u32::MAX;
            for lane in 0..32 {
                w.v[1][lane] = lane as u32;
                w.v_other[1][lane] = 32 + lane as u32;
            }
            w.s[5] = 0x5555;
            w.s[8] = 1000;
        })
        .unwrap();
        // Lanes whose v1 is below 40: lanes 0 to 39.
        assert_eq!((w.s[0], w.s[1]), (u32::MAX, 0xff));
        let v2: Vec<u32> = w.v[2].iter().chain(&w.v_other[2]).copied().collect();
        assert!(
            v2.iter().enumerate().all(|(l, &v)| v == if l < 40 { 9 } else { 7 }),
            "{v2:?}"
        );
        assert_eq!(w.s[4], 40, "readlane of lane 40");
        assert_eq!((w.v_other[3][18], w.v[3][18]), (0x5555, 0), "writelane of lane 50 only");
        let ids: Vec<u32> = w.v[4].iter().chain(&w.v_other[4]).copied().collect();
        assert_eq!(ids, (0..64).collect::<Vec<u32>>(), "mbcnt counts the wave's lanes");
        // v1 × 1000 + 3 in every lane: the high half read s8 before the low half's
        // carry-out (0) replaced it.
        assert_eq!((w.v[6][5], w.v_other[6][5]), (5003, 37_003));
        assert_eq!((w.s[8], w.s[9]), (0, 0), "no carries");
        // readfirstlane with only lanes 32 to 63 on reads lane 32.
        let w = run_all(&[&[0x7e14_0501]], |w| {
            w.wave64 = true;
            w.v_other = vec![VgprRow::default(); w.v.len()];
            w.s[EXEC_LO] = 0;
            w.s[EXEC_LO + 1] = 0b110;
            w.v_other[1][1] = 77;
        })
        .unwrap();
        assert_eq!(w.s[10], 77);
        // ds_append v5 (counter at M0 = 0): every lane of the wave gets the old count,
        // the counter grows by the wave's 64 active lanes, once.
        let mut lds = [0u8; 1024];
        lds[..4].copy_from_slice(&10u32.to_le_bytes());
        let w = crate::rdna3::testing::run_mem_lds(&[&[0xd8f8_0000, 0x0500_0000]], &mut [0u8; 16], &mut lds, |w, _| {
            w.wave64 = true;
            w.v_other = vec![VgprRow::default(); w.v.len()];
            w.s[EXEC_LO + 1] = u32::MAX;
        })
        .unwrap();
        assert_eq!(u32::from_le_bytes(lds[..4].try_into().unwrap()), 74);
        assert!(w.v[5].iter().chain(&w.v_other[5]).all(|&v| v == 10));
    }

    /// gfx12's waves: the workgroup's ids in TTMP9 (x) and TTMP7 (y low, z high),
    /// besides the SGPRs RSRC2 enables; no IEEE mode.
    #[test]
    fn gfx12_waves_start_as_gfx12s_do() {
        use crate::float::minmax::Nans;
        // RSRC1 bit 23: IEEE_MODE on gfx11, DISABLE_PERF on gfx12.
        let d = Dispatch {
            rsrc: [1 << 23, 1 << 7, 0],
            block: [32, 1, 1],
            grid: [3, 5, 7],
            ..Dispatch::default()
        };
        // Workgroup 3 × 5 × 4 + 3 × 2 + 1: x 1, y 2, z 4.
        let g = 3 * 5 * 4 + 3 * 2 + 1;
        for gfx12 in [false, true] {
            let mut waves = Vec::new();
            Grid::new(&d, false)
                .unwrap()
                .waves(&d, &d.group_id(g), &mut waves, gfx12);
            let w = &waves[0];
            assert_eq!(w.s[0], 1, "TGID_X_EN puts x after the user SGPRs");
            let ttmp = (w.s[TTMP9], w.s[TTMP7]);
            assert_eq!(ttmp, if gfx12 { (1, 2 | 4 << 16) } else { (0, 0) });
            let nans = if gfx12 { Nans::Num } else { Nans::Ieee };
            assert_eq!(w.nans(), nans, "gfx12 has no IEEE mode, and IEEE 754-2019's NaN rule");
        }
    }

    /// A dispatch of `grid` workgroups of `block` threads, the other registers 0.
    fn shaped(block: [u32; 3], grid: [u32; 3]) -> Dispatch {
        Dispatch {
            block,
            grid,
            ..Dispatch::default()
        }
    }

    /// A thread's next workgroup's coordinates follow from its last one's, in x, then
    /// y, then z, as `Dispatch::group_id` numbers them; a workgroup that does not follow
    /// (another thread took the ones between) is placed from its number.
    #[test]
    fn following_workgroups_are_placed_without_division() {
        let d = shaped([32, 1, 1], [3, 5, 7]);
        let grid = Grid::new(&d, false).unwrap();
        let mut at = (u64::MAX, [0; 3]);
        for g in 0..3 * 5 * 7 {
            grid.place(&d, g, &mut at);
            assert_eq!(at, (g, d.group_id(g)), "workgroup {g}");
        }
        for (prev, g) in [(4, 9), (9, 4), (0, 104), (u64::MAX, 0)] {
            let mut at = (prev, [0, 0, 0]);
            grid.place(&d, g, &mut at);
            assert_eq!(at, (g, d.group_id(g)), "{g} after {prev}");
        }
    }

    /// Registers no GPU runs are refused with their values.
    #[test]
    fn impossible_shapes_are_typed_errors() {
        let d = shaped([1024, 2, 1], [1, 1, 1]);
        let e = Interpreter::default().dispatch(&crate::SliceMemory::new(), &d);
        assert_eq!(
            e,
            Err(ExecError::WorkgroupTooLarge {
                block: [1024, 2, 1],
                max: 1024
            })
        );
        let d = shaped([0; 3], [u32::MAX; 3]);
        let e = Interpreter::default().dispatch(&crate::SliceMemory::new(), &d);
        assert_eq!(e, Err(ExecError::GridTooLarge { grid: [u32::MAX; 3] }));
    }

    #[test]
    fn workgroups_run_on_several_threads_with_the_same_results() {
        // 64 workgroups, claimed one or a few at a time; 1,000, sixteen at a time
        // until the last ones.
        for (groups, threads) in [(64, 1), (64, 2), (64, 3), (1000, 2), (1000, 3)] {
            let (out, r, lanes, _) = dispatch(groups, groups as usize, threads);
            r.unwrap();
            assert!(
                out.chunks(32)
                    .enumerate()
                    .all(|(g, c)| c.iter().all(|&v| v == g as u32)),
                "{groups} workgroups, {threads} threads"
            );
            assert_eq!(lanes, u64::from(groups) * 32 * 6, "every instruction counted once");
        }
    }

    #[test]
    fn the_first_failing_workgroup_is_the_one_reported() {
        // Room for 10 groups: groups 10..64 fault; whatever thread gets there first,
        // the fault reported is group 10's first lane.
        for threads in [1, 2, 4] {
            let (out, r, _, end) = dispatch(64, 10, threads);
            let Err(ExecError::Fault { fault, .. }) = r else {
                panic!("{r:?}");
            };
            assert_eq!(fault.va, end, "{threads} threads: group 10's first lane");
            assert!(
                out.chunks(32)
                    .enumerate()
                    .all(|(g, c)| c.iter().all(|&v| v == g as u32))
            );
        }
    }
}
