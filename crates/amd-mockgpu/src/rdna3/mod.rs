//! An RDNA3 (gfx11, wave32) interpreter: runs the kernels DISPATCH_DIRECT launches.
//!
//! Each workgroup's waves run round-robin until each ends or reaches `s_barrier`,
//! which releases once every live wave of the group is there. A wave executes one
//! decoded instruction across its 32 lanes at a time, under EXEC. Memory goes through
//! the mock's checked [`GpuMemory`]: a miss is a memory fault. An instruction the
//! interpreter does not implement stops the dispatch with an error naming the address,
//! the dwords and the encoding.
//!
//! Coverage is per opcode of the ISA's own list ([`opcodes::SPEC`], generated from
//! AMD's machine-readable RDNA3 specification): [`coverage`] classifies each as
//! implemented or refused on purpose with the reason (graphics-only encodings, GWS,
//! GDS) and [`report`] is the table in `ISA_COVERAGE.md`. The semantics are split by
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
mod coverage;
mod crosslane;
mod decode;
mod disasm;
mod divide;
mod exact;
mod exec;
mod fast;
mod fma;
mod gather;
mod half;
mod hwreg;
mod lds;
mod matrix;
mod memory;
mod minmax;
mod modifiers;
mod salu;
mod single;
#[cfg(test)]
mod testing;
mod valu;
#[rustfmt::skip]
mod mnemonics;
#[rustfmt::skip]
pub mod opcodes;
mod packed;
mod rounding;
mod wave;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use coverage::{Entry, Status, coverage, report, takes_dpp};
pub use decode::{DecodeError, Encoding, Inst};
pub use disasm::Llvm;
pub use modifiers::{Modifiers, modifiers};
pub use single::{LDS_BYTES, WaveState, execute, execute_with_memory};

use crate::MemoryFault;
use crate::hw::{DispatchInfo, GpuMemory, KernelError, KernelExecutor};
use exec::{Decoded, Flow};
use memory::FAULT;
use wave::{EXEC_LO, Place, Wave};

/// Most threads in a workgroup.
const MAX_WORKGROUP_THREADS: usize = 1024;

/// The interpreter, as the mock's kernel executor.
#[derive(Debug, Clone)]
pub struct Rdna3Executor {
    /// Instructions one dispatch may execute (all waves together) before it is
    /// stopped as a runaway.
    pub max_instructions: u64,
    /// Threads a large dispatch's workgroups run on (the engine's own and helpers
    /// started for it); default: the machine's cores, or `HCQ_MOCK_THREADS`.
    pub threads: usize,
    counters: Arc<Counters>,
}

/// Work the interpreter has done, over every dispatch of the executors sharing it.
#[derive(Debug, Default)]
pub struct Counters {
    /// Wave instructions executed.
    pub instructions: AtomicU64,
    /// Lane instructions: each wave instruction counts the lanes EXEC enabled when it
    /// issued.
    pub lane_instructions: AtomicU64,
}

impl Default for Rdna3Executor {
    fn default() -> Self {
        Rdna3Executor {
            max_instructions: 1 << 32,
            threads: default_threads(),
            counters: Arc::default(),
        }
    }
}

/// `HCQ_MOCK_THREADS` when set to a positive number, else the available cores.
fn default_threads() -> usize {
    std::env::var("HCQ_MOCK_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Rdna3Executor {
    /// The counters this executor (and its clones) add to.
    pub fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }
}

/// Reads back a fault that `exec` encoded in an instruction error.
fn fault_of(msg: &str) -> Option<MemoryFault> {
    let rest = msg.strip_prefix(FAULT)?;
    let bit = |i: usize| rest.as_bytes().get(i).is_some_and(|&b| b == b'1');
    let (write, read_only) = (bit(0), bit(1));
    let hex = rest.rsplit("0x").next()?;
    let va = u64::from_str_radix(hex, 16).ok()?;
    Some(MemoryFault {
        va,
        write,
        read_only,
        not_present: !read_only,
        ..Default::default()
    })
}

/// Instructions between [`GpuMemory::checkpoint`]s (a slice of a dispatch).
const CHECKPOINT_EVERY: u64 = 1 << 12;

/// Decoded instructions: a direct-indexed window of dwords from the kernel's entry
/// (most code), a map for anything outside it (called functions far away). Each is
/// decoded once per dispatch and thread, with what running it needs ([`Decoded`]: the
/// VALU's operands resolved, hints marked).
struct CodeCache {
    base: u64,
    window: Vec<Option<Decoded>>,
    insts: HashMap<u64, Decoded>,
}

/// Dwords of code the direct window covers (256 KiB).
const WINDOW_DWORDS: u64 = 1 << 16;

impl CodeCache {
    /// The window slot of `pc`.
    fn slot(&self, pc: u64) -> Option<usize> {
        pc.checked_sub(self.base)
            .filter(|d| d % 4 == 0 && d / 4 < WINDOW_DWORDS)
            .map(|d| (d / 4) as usize)
    }

    /// The instruction at `pc` when it has been decoded (no copy, no error to carry:
    /// the path every instruction takes after its first run).
    #[inline]
    fn get(&self, pc: u64) -> Option<&Decoded> {
        match self.slot(pc) {
            Some(k) => self.window.get(k)?.as_ref(),
            None => self.insts.get(&pc),
        }
    }

    /// Decodes the instruction at `pc` into the cache.
    #[inline(never)]
    fn fetch(&mut self, mem: &GpuMemory<'_>, pc: u64) -> Result<(), KernelError> {
        let slot = self.slot(pc);
        // Up to three dwords (an instruction and its literal); fewer at the end of
        // the code's mapping.
        let mut words = Vec::new();
        for n in (1..=3usize).rev() {
            let mut b = vec![0u8; n * 4];
            if mem.read(pc, &mut b).is_ok() {
                words = b
                    .chunks(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                break;
            }
        }
        if words.is_empty() {
            return Err(KernelError::FaultAt {
                fault: MemoryFault {
                    va: pc,
                    not_present: true,
                    ..Default::default()
                },
                context: format!("fetching the instruction at {pc:#x}"),
            });
        }
        let i = Inst::decode(&words).map_err(|e| {
            KernelError::Unsupported(format!("at {pc:#x} [{:08x?}]: {e}", &words[..words.len().min(2)]))
        })?;
        let i = Decoded::new(i);
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

impl KernelExecutor for Rdna3Executor {
    fn fork(&self) -> Option<Box<dyn KernelExecutor>> {
        // The copy adds to the same counters.
        Some(Box::new(self.clone()))
    }

    fn dispatch(&mut self, mem: &GpuMemory<'_>, d: &DispatchInfo) -> Result<(), KernelError> {
        let grid = Grid::new(d)?;
        let budget = AtomicU64::new(self.max_instructions);
        let (instructions, lanes, result) = run_grid(mem, d, &grid, &budget, self.threads);
        let c = &self.counters;
        c.instructions.fetch_add(instructions, Ordering::Relaxed);
        c.lane_instructions.fetch_add(lanes, Ordering::Relaxed);
        result
    }
}

/// A dispatch's shape and its waves' initial state.
struct Grid {
    user_sgprs: usize,
    tgid_en: [bool; 3],
    tidig: u32,
    vgprs: usize,
    block: [usize; 3],
    threads: usize,
    lds_bytes: usize,
    groups: u64,
}

impl Grid {
    fn new(d: &DispatchInfo) -> Result<Grid, KernelError> {
        let rsrc2 = d.rsrc[1];
        let [bx, by, bz] = d.block.map(|v| v.max(1) as usize);
        // The registers come from the ring: a workgroup has at most 1024 threads.
        let threads = bx
            .checked_mul(by)
            .and_then(|t| t.checked_mul(bz))
            .filter(|&t| t <= MAX_WORKGROUP_THREADS)
            .ok_or_else(|| {
                KernelError::Unsupported(format!(
                    "a workgroup of {bx}×{by}×{bz} threads (COMPUTE_NUM_THREAD_X/Y/Z): more than \
                     {MAX_WORKGROUP_THREADS}"
                ))
            })?;
        let [gx, gy, gz] = d.grid.map(u64::from);
        let groups = gx.checked_mul(gy).and_then(|t| t.checked_mul(gz)).ok_or_else(|| {
            KernelError::Unsupported(format!(
                "a grid of {gx}×{gy}×{gz} workgroups (COMPUTE_DIM_X/Y/Z): more than 2^64 in all"
            ))
        })?;
        Ok(Grid {
            user_sgprs: ((rsrc2 >> 1) & 0x1f) as usize,
            tgid_en: [rsrc2 >> 7 & 1 != 0, rsrc2 >> 8 & 1 != 0, rsrc2 >> 9 & 1 != 0],
            tidig: (rsrc2 >> 11) & 3,
            vgprs: (((d.rsrc[0] & 0x3f) + 1) * 8) as usize,
            block: [bx, by, bz],
            threads,
            // RSRC2.LDS_SIZE, in 512-byte blocks on gfx11.
            lds_bytes: (((rsrc2 >> 15) & 0x1ff) * 512) as usize,
            groups,
        })
    }

    /// The waves of workgroup `g` (x fastest, then y, then z), in `waves` (whose
    /// allocations are reused).
    fn waves(&self, d: &DispatchInfo, g: u64, waves: &mut Vec<Wave>) {
        let (gx, gy, gz) = (
            (g % u64::from(d.grid[0])) as u32,
            (g / u64::from(d.grid[0]) % u64::from(d.grid[1])) as u32,
            (g / (u64::from(d.grid[0]) * u64::from(d.grid[1]))) as u32,
        );
        let [bx, by, _] = self.block;
        let n = self.threads.div_ceil(32);
        waves.truncate(n);
        while waves.len() < n {
            waves.push(Wave::new(self.vgprs, d.code_addr));
        }
        for (wi, w) in waves.iter_mut().enumerate() {
            w.reset(self.vgprs, d.code_addr);
            // At most 32 waves (1024 threads), under 256 KiB of LDS (RSRC2.LDS_SIZE is 9
            // bits of 512 bytes): both fit.
            w.place = Place {
                wave: wi as u32,
                waves: n as u32,
                lds_bytes: self.lds_bytes as u32,
            };
            // RSRC1.FLOAT_MODE has MODE's layout; DX10_CLAMP (bit 21) and IEEE_MODE
            // (bit 23) are MODE bits 8 and 9.
            w.mode = (d.rsrc[0] >> 12) & 0xff | (d.rsrc[0] >> 21 & 1) << 8 | (d.rsrc[0] >> 23 & 1) << 9;
            let user = self.user_sgprs.min(16);
            w.s[..user].copy_from_slice(&d.user_data[..user]);
            let mut next = self.user_sgprs;
            for (k, id) in [gx, gy, gz].into_iter().enumerate() {
                if self.tgid_en[k] {
                    w.s[next] = id;
                    next += 1;
                }
            }
            // The wave's first thread id divided out once, then counted up (x fastest).
            let first = wi * 32;
            let lanes = self.threads.saturating_sub(first).min(32);
            let (mut x, mut y, mut z) = (first % bx, (first / bx) % by, first / (bx * by));
            for lane in 0..lanes {
                w.v[0][lane] = if self.tidig == 0 {
                    x as u32
                } else {
                    (x | y << 10 | z << 20) as u32
                };
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
            w.s[EXEC_LO] = if lanes == 32 { u32::MAX } else { (1u32 << lanes) - 1 };
        }
    }
}

/// Workgroups a dispatch needs before a second thread joins in (starting one costs
/// tens of microseconds; small dispatches stay on the engine's thread).
const PARALLEL_MIN_GROUPS: u64 = 8;

/// How long the dispatching thread runs workgroups alone before helpers join it.
const RECRUIT_AFTER: std::time::Duration = std::time::Duration::from_micros(30);

/// Instructions a thread takes from the dispatch's budget at a time.
const BUDGET_CHUNK: u64 = CHECKPOINT_EVERY;

/// One thread's part of a dispatch: its instruction allowance, taken from the shared
/// budget a chunk at a time, and what it did.
struct Worker<'b> {
    budget: &'b AtomicU64,
    local: u64,
    used: u64,
    lanes: u64,
}

impl Worker<'_> {
    /// One more instruction: `Ok(true)` at a checkpoint (a new chunk), an error when
    /// the dispatch's budget is spent.
    fn tick(&mut self) -> Result<bool, KernelError> {
        self.used += 1;
        if self.local > 0 {
            self.local -= 1;
            return Ok(false);
        }
        // Relaxed: the budget is a counter; nothing is published through it.
        let got = self
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| Some(b - b.min(BUDGET_CHUNK)))
            .unwrap_or(0)
            .min(BUDGET_CHUNK);
        if got == 0 {
            return Err(KernelError::Unsupported(
                "the dispatch ran past its instruction budget".into(),
            ));
        }
        self.local = got - 1;
        Ok(true)
    }
}

/// Runs every workgroup of the dispatch, on this thread and, for large grids, on up
/// to `threads - 1` more. Workgroups are handed out in order; when one fails, the ones
/// after it are not started, those before it finish, and the error of the first
/// failing workgroup is the dispatch's (as running them in order would give).
/// Returns (instructions, lane instructions, result).
fn run_grid(
    mem: &GpuMemory<'_>,
    d: &DispatchInfo,
    grid: &Grid,
    budget: &AtomicU64,
    threads: usize,
) -> (u64, u64, Result<(), KernelError>) {
    let next = AtomicU64::new(0);
    // The first failing workgroup and its error; no workgroup at or after it starts.
    let failed: parking_lot::Mutex<Option<(u64, KernelError)>> = parking_lot::Mutex::new(None);
    let limit = AtomicU64::new(u64::MAX);
    // `tick` runs after each workgroup (the dispatching thread's, to recruit helpers).
    let work = |mem: &GpuMemory<'_>, tick: Option<&dyn Fn()>| -> (u64, u64) {
        let mut me = Worker {
            budget,
            local: 0,
            used: 0,
            lanes: 0,
        };
        let mut code = CodeCache {
            base: d.code_addr,
            window: Vec::new(),
            insts: HashMap::new(),
        };
        let (mut waves, mut lds) = (Vec::new(), Vec::new());
        loop {
            // Relaxed: each index is taken once; the limit only narrows.
            let g = next.fetch_add(1, Ordering::Relaxed);
            if g >= grid.groups || g >= limit.load(Ordering::Relaxed) {
                break;
            }
            grid.waves(d, g, &mut waves);
            lds.clear();
            lds.resize(grid.lds_bytes, 0);
            if let Err(e) = run_group(&mut waves, mem, &mut code, &mut me, &mut lds) {
                let mut f = failed.lock();
                if f.as_ref().is_none_or(|(at, _)| g < *at) {
                    limit.fetch_min(g, Ordering::Relaxed);
                    *f = Some((g, e));
                }
            }
            if let Some(t) = tick {
                t();
            }
        }
        (me.used, me.lanes)
    };
    let helpers = if grid.groups >= PARALLEL_MIN_GROUPS {
        threads.saturating_sub(1)
    } else {
        0
    };
    let (mut used, mut lanes) = (0, 0);
    if helpers == 0 {
        (used, lanes) = work(mem, None);
    } else {
        let shared = mem.share();
        let work = &work;
        let start = std::time::Instant::now();
        crate::pool::scope(|s| {
            // Helpers join once this thread has worked RECRUIT_AFTER with workgroups
            // left: waking a parked thread costs tens of microseconds on the virtual
            // machines the project runs on (starting one, 40 µs to almost a
            // millisecond), more than a small dispatch takes on one.
            let others = parking_lot::Mutex::new(Vec::new());
            let recruited = std::cell::Cell::new(false);
            let tick = || {
                if !recruited.get() && start.elapsed() >= RECRUIT_AFTER {
                    recruited.set(true);
                    let mut o = others.lock();
                    for _ in 0..helpers {
                        o.push(s.spawn(|| work(&GpuMemory::open(&shared), None)));
                    }
                }
            };
            (used, lanes) = work(mem, Some(&tick));
            let others = others.into_inner();
            // Waiting for the helpers with this thread's lock released: one of them may
            // be waiting for a writer that waits for this thread.
            mem.unlocked(|| {
                for h in others {
                    match h.join() {
                        Ok((u, l)) => {
                            used += u;
                            lanes += l;
                        }
                        Err(_) => {
                            let mut f = failed.lock();
                            if f.is_none() {
                                *f = Some((0, KernelError::Unsupported("a dispatch thread panicked".into())));
                            }
                        }
                    }
                }
            });
        });
    }
    let result = match failed.into_inner() {
        Some((_, e)) => Err(e),
        None => Ok(()),
    };
    (used, lanes, result)
}

fn run_group(
    waves: &mut [Wave],
    mem: &GpuMemory<'_>,
    code: &mut CodeCache,
    me: &mut Worker<'_>,
    lds: &mut [u8],
) -> Result<(), KernelError> {
    loop {
        let mut progressed = false;
        for w in waves.iter_mut().filter(|w| !w.done && !w.at_barrier) {
            progressed = true;
            loop {
                if me.tick()? {
                    mem.checkpoint()?;
                }
                // Every lane (most instructions) without counting them.
                let exec = w.exec();
                me.lanes += if exec == u32::MAX {
                    32
                } else {
                    u64::from(exec.count_ones())
                };
                let d = match code.get(w.pc) {
                    Some(d) => d,
                    None => {
                        code.fetch(mem, w.pc)?;
                        code.get(w.pc).ok_or_else(|| {
                            // fetch just put it there.
                            KernelError::Unsupported(format!("no instruction cached at {:#x}", w.pc))
                        })?
                    }
                };
                if d.is_hint() {
                    // Nothing to run (one dword: SOPP).
                    w.pc += 4;
                    continue;
                }
                let i = &d.inst;
                let flow = d.run(w, mem, lds).map_err(|e| match fault_of(&e) {
                    Some(fault) => KernelError::FaultAt {
                        fault,
                        context: format!("at {:#x}: {i}", w.pc),
                    },
                    None => KernelError::Unsupported(format!("at {:#x}: {i}: {e}", w.pc)),
                })?;
                match flow {
                    Flow::Next => w.pc += i.size as u64 * 4,
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
                }
            }
        }
        if waves.iter().all(|w| w.done) {
            return Ok(());
        }
        if !progressed {
            // Every live wave waits at the barrier: release them.
            waves.iter_mut().for_each(|w| w.at_barrier = false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::mem::{AddressSpace, Mapped, Vm};

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

    /// Runs STORE_GROUP_ID over `groups` workgroups on `threads` threads, with room for
    /// `room` groups' output: (output words, result, lane instructions, the first byte
    /// past the output).
    fn dispatch(groups: u32, room: usize, threads: usize) -> (Vec<u32>, Result<(), KernelError>, u64, u64) {
        let mut mem = vec![0u32; 1024 + room * 32];
        mem[..STORE_GROUP_ID.len()].copy_from_slice(&STORE_GROUP_ID);
        let base = mem.as_mut_ptr() as usize;
        let bytes = mem.len() * 4;
        let mut space = AddressSpace::new(1);
        space.gpus[0].mapped.insert(
            base as u64,
            Mapped {
                size: bytes as u64,
                writable: true,
            },
        );
        space.accessible.insert(base, base + bytes);
        let space = parking_lot::RwLock::new(space);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let out = base as u64 + 4096;
        let mut user_data = [0u32; 16];
        user_data[0] = out as u32;
        user_data[1] = (out >> 32) as u32;
        let d = DispatchInfo {
            code_addr: base as u64,
            // FLOAT_MODE 0xf0: nearest-even, denormals kept; 8 VGPRs.
            rsrc: [0xf0 << 12, 2 << 1 | 1 << 7, 0],
            user_data,
            block: [32, 1, 1],
            grid: [groups, 1, 1],
            ..DispatchInfo::default()
        };
        let mut exec = Rdna3Executor {
            threads,
            ..Rdna3Executor::default()
        };
        let counters = exec.counters();
        let result = exec.dispatch(&GpuMemory::new(&space, &Vm::Kfd(0), &stop), &d);
        let lanes = counters.lane_instructions.load(Ordering::Relaxed);
        (mem[1024..].to_vec(), result, lanes, (base + bytes) as u64)
    }

    /// RSRC1's FLOAT_MODE becomes each wave's MODE: f16/f64 flushing (0x30: f32
    /// denormals kept, f16/f64 flushed both ways) and directed rounding are taken as
    /// they are.
    #[test]
    fn float_mode_sets_the_waves_mode() {
        let d = |float_mode: u32| DispatchInfo {
            rsrc: [float_mode << 12, 0, 0],
            block: [32, 1, 1],
            grid: [1, 1, 1],
            ..DispatchInfo::default()
        };
        let mut waves = Vec::new();
        // 0x30, and 0x39: the same with f32 toward +infinity, f16/f64 toward -infinity.
        for mode in [0x30, 0x39] {
            Grid::new(&d(mode)).unwrap().waves(&d(mode), 0, &mut waves);
            assert_eq!(waves[0].mode & 0xff, mode);
        }
    }

    /// Each wave knows its number in the workgroup, the workgroup's waves and its LDS
    /// (what `s_getreg` reads of HW_ID1, STATUS and LDS_ALLOC).
    #[test]
    fn waves_know_their_place() {
        // 100 threads: 4 waves; RSRC2.LDS_SIZE 3 blocks of 512 bytes.
        let d = DispatchInfo {
            rsrc: [0, 3 << 15, 0],
            block: [10, 10, 1],
            grid: [2, 1, 1],
            ..DispatchInfo::default()
        };
        let mut waves = Vec::new();
        Grid::new(&d).unwrap().waves(&d, 1, &mut waves);
        let places: Vec<Place> = waves.iter().map(|w| w.place).collect();
        let want: Vec<Place> = (0..4)
            .map(|wave| Place {
                wave,
                waves: 4,
                lds_bytes: 1536,
            })
            .collect();
        assert_eq!(places, want);
    }

    #[test]
    fn workgroups_run_on_several_threads_with_the_same_results() {
        for threads in [1, 2, 3] {
            let (out, r, lanes, _) = dispatch(64, 64, threads);
            r.unwrap();
            assert!(
                out.chunks(32)
                    .enumerate()
                    .all(|(g, c)| c.iter().all(|&v| v == g as u32)),
                "{threads} threads"
            );
            assert_eq!(lanes, 64 * 32 * 6, "every instruction counted once");
        }
    }

    #[test]
    fn the_first_failing_workgroup_is_the_one_reported() {
        // Room for 10 groups: groups 10..64 fault; whatever thread gets there first,
        // the fault reported is group 10's first lane.
        for threads in [1, 2, 4] {
            let (out, r, _, end) = dispatch(64, 10, threads);
            let Err(KernelError::FaultAt { fault, .. }) = r else {
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
