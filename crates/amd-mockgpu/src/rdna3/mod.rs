//! An RDNA3 (gfx11, wave32) interpreter: runs the kernels DISPATCH_DIRECT launches.
//!
//! Each workgroup's waves run round-robin until each ends or reaches `s_barrier`,
//! which releases once every live wave of the group is there. A wave executes one
//! decoded instruction across its 32 lanes at a time, under EXEC. Memory goes through
//! the mock's checked [`GpuMemory`]: a miss is a memory fault. An instruction the
//! interpreter does not implement stops the dispatch with an error naming the address,
//! the dwords and the encoding.
//!
//! Implemented: the scalar ALU, compares, branches and scalar loads; the vector ALU
//! for 32-bit integer and float, 64-bit integer and f64, 16-bit integer (VOP1, VOP2,
//! VOPC/VOPCX, VOP3 with and without SDST, VOPD dual issue, DPP16 row and quad
//! permutes, literals); transcendentals; readlane/writelane; LDS loads, stores and every
//! read-modify-write; global loads, stores (dword and sub-dword, d16) and atomics;
//! per-lane scratch. Not yet: VOP3P (packed f16) and f16 arithmetic, DPP8, permlane,
//! flat (segment 0) addressing, the mode register's denormal and rounding controls,
//! output modifiers (clamp, omod). The README's limits list is the full account.

mod buffer;
mod coverage;
mod decode;
mod disasm;
mod exec;
mod half;
mod lds;
mod salu;
#[cfg(test)]
mod testing;
mod valu;
#[rustfmt::skip]
mod mnemonics;
#[rustfmt::skip]
pub mod opcodes;
mod wave;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use coverage::{Entry, Status, coverage, report};
pub use decode::{DecodeError, Encoding, Inst};
pub use disasm::Llvm;

use crate::MemoryFault;
use crate::hw::{DispatchInfo, GpuMemory, KernelError, KernelExecutor};
use exec::{FAULT, Flow};
use wave::{EXEC_LO, Wave};

/// Most threads in a workgroup.
const MAX_WORKGROUP_THREADS: usize = 1024;

/// The interpreter, as the mock's kernel executor.
#[derive(Debug, Clone)]
pub struct Rdna3Executor {
    /// Instructions one dispatch may execute (all waves together) before it is
    /// stopped as a runaway.
    pub max_instructions: u64,
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
            counters: Arc::default(),
        }
    }
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
/// (most code), a map for anything outside it (called functions far away).
struct CodeCache {
    base: u64,
    window: Vec<Option<Inst>>,
    insts: HashMap<u64, Inst>,
}

/// Dwords of code the direct window covers (256 KiB).
const WINDOW_DWORDS: u64 = 1 << 16;

impl CodeCache {
    fn fetch(&mut self, mem: &GpuMemory<'_>, pc: u64) -> Result<Inst, KernelError> {
        let slot = pc
            .checked_sub(self.base)
            .filter(|d| d % 4 == 0 && d / 4 < WINDOW_DWORDS)
            .map(|d| (d / 4) as usize);
        let cached = match slot {
            Some(k) => self.window.get(k).copied().flatten(),
            None => self.insts.get(&pc).copied(),
        };
        if let Some(i) = cached {
            return Ok(i);
        }
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
        Ok(i)
    }
}

impl KernelExecutor for Rdna3Executor {
    fn fork(&self) -> Option<Box<dyn KernelExecutor>> {
        // The copy adds to the same counters.
        Some(Box::new(self.clone()))
    }

    fn dispatch(&mut self, mem: &GpuMemory<'_>, d: &DispatchInfo) -> Result<(), KernelError> {
        let mut code = CodeCache {
            base: d.code_addr,
            window: Vec::new(),
            insts: HashMap::new(),
        };
        let mut budget = self.max_instructions;
        let mut lanes = 0u64;
        let result = self.run_grid(mem, d, &mut code, &mut budget, &mut lanes);
        let c = &self.counters;
        c.instructions
            .fetch_add(self.max_instructions - budget, Ordering::Relaxed);
        c.lane_instructions.fetch_add(lanes, Ordering::Relaxed);
        result
    }
}

impl Rdna3Executor {
    fn run_grid(
        &self,
        mem: &GpuMemory<'_>,
        d: &DispatchInfo,
        code: &mut CodeCache,
        budget: &mut u64,
        lanes: &mut u64,
    ) -> Result<(), KernelError> {
        // FLOAT_MODE: only round-to-nearest-even and kept f16/f64 denormals are modelled.
        let float_mode = (d.rsrc[0] >> 12) & 0xff;
        if float_mode & 0xf != 0 || float_mode & 0xc0 != 0xc0 {
            return Err(KernelError::Unsupported(format!(
                "RSRC1 FLOAT_MODE {float_mode:#x}: only nearest-even rounding and kept f16/f64 denormals are implemented"
            )));
        }
        let rsrc2 = d.rsrc[1];
        let user_sgprs = ((rsrc2 >> 1) & 0x1f) as usize;
        let tgid_en = [rsrc2 >> 7 & 1 != 0, rsrc2 >> 8 & 1 != 0, rsrc2 >> 9 & 1 != 0];
        let tidig = (rsrc2 >> 11) & 3;
        let vgprs = (((d.rsrc[0] & 0x3f) + 1) * 8) as usize;
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
        let n_waves = threads.div_ceil(32);
        // RSRC2.LDS_SIZE, in 512-byte blocks on gfx11.
        let lds_bytes = (((rsrc2 >> 15) & 0x1ff) * 512) as usize;
        for gz in 0..d.grid[2] {
            for gy in 0..d.grid[1] {
                for gx in 0..d.grid[0] {
                    let mut waves: Vec<Wave> = (0..n_waves)
                        .map(|wi| {
                            let mut w = Wave::new(vgprs, d.code_addr);
                            // RSRC1.FLOAT_MODE has MODE's layout.
                            w.mode = (d.rsrc[0] >> 12) & 0xff;
                            w.s[..user_sgprs.min(16)].copy_from_slice(&d.user_data[..user_sgprs.min(16)]);
                            let mut next = user_sgprs;
                            for (k, id) in [gx, gy, gz].into_iter().enumerate() {
                                if tgid_en[k] {
                                    w.s[next] = id;
                                    next += 1;
                                }
                            }
                            let mut exec = 0u32;
                            for lane in 0..32 {
                                let t = wi * 32 + lane;
                                if t >= threads {
                                    continue;
                                }
                                exec |= 1 << lane;
                                let (x, y, z) = (t % bx, (t / bx) % by, t / (bx * by));
                                w.v[0][lane] = if tidig == 0 {
                                    x as u32
                                } else {
                                    (x | y << 10 | z << 20) as u32
                                };
                            }
                            w.s[EXEC_LO] = exec;
                            w
                        })
                        .collect();
                    let mut lds = vec![0u8; lds_bytes];
                    run_group(&mut waves, mem, code, budget, lanes, &mut lds)?;
                }
            }
        }
        Ok(())
    }
}

fn run_group(
    waves: &mut [Wave],
    mem: &GpuMemory<'_>,
    code: &mut CodeCache,
    budget: &mut u64,
    lanes: &mut u64,
    lds: &mut [u8],
) -> Result<(), KernelError> {
    loop {
        let mut progressed = false;
        for w in waves.iter_mut().filter(|w| !w.done && !w.at_barrier) {
            progressed = true;
            loop {
                if *budget == 0 {
                    return Err(KernelError::Unsupported(
                        "the dispatch ran past its instruction budget".into(),
                    ));
                }
                *budget -= 1;
                if *budget % CHECKPOINT_EVERY == 0 {
                    mem.checkpoint()?;
                }
                *lanes += w.exec().count_ones() as u64;
                let i = code.fetch(mem, w.pc)?;
                let flow = exec::step(w, &i, mem, lds).map_err(|e| match fault_of(&e) {
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
