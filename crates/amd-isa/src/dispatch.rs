//! What every generation's interpreter shares to run a dispatch: the dispatch's
//! registers ([`Dispatch`]), the instruction budget, the work counters, and the
//! scheduler that hands workgroups to threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::ExecError;
use crate::memory::Memory;

/// What a dispatch hands the interpreter, read from the queue's registers as the
/// hardware would (a PM4 DISPATCH_DIRECT's SH registers, or an AQL packet turned
/// into them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dispatch {
    /// Address of the first instruction (COMPUTE_PGM_LO/HI << 8).
    pub code_addr: u64,
    /// COMPUTE_PGM_RSRC1..3.
    pub rsrc: [u32; 3],
    /// COMPUTE_USER_DATA_0..15.
    pub user_data: [u32; 16],
    /// COMPUTE_NUM_THREAD_X/Y/Z (workgroup size).
    pub block: [u32; 3],
    /// Grid in workgroups.
    pub grid: [u32; 3],
    /// COMPUTE_TMPRING_SIZE.
    pub tmpring_size: u32,
    /// COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI << 8.
    pub scratch_base: u64,
    /// DISPATCH_INITIATOR.
    pub initiator: u32,
    /// Waves of 64 lanes (gfx10+: DISPATCH_INITIATOR without CS_W32_EN, as a kernel
    /// descriptor without ENABLE_WAVEFRONT_SIZE32 asks), else 32.
    pub wave64: bool,
}

impl Dispatch {
    /// DISPATCH_INITIATOR.PARTIAL_TG_EN: with thread dimensions, a last workgroup
    /// smaller than the block runs (without it, the threads past the last whole
    /// workgroup do not).
    pub const PARTIAL_TG_EN: u32 = 1 << 1;
    /// DISPATCH_INITIATOR.USE_THREAD_DIMENSIONS: `grid` counts threads, not
    /// workgroups (an AQL dispatch's grid is given so).
    pub const USE_THREAD_DIMENSIONS: u32 = 1 << 5;

    /// Workgroups in x, y and z: `grid`, or with thread dimensions the threads divided
    /// by the block (rounded up with PARTIAL_TG_EN, down without).
    pub fn groups(&self) -> [u32; 3] {
        if self.initiator & Self::USE_THREAD_DIMENSIONS == 0 {
            return self.grid;
        }
        let partial = self.initiator & Self::PARTIAL_TG_EN != 0;
        std::array::from_fn(|k| {
            let b = self.block[k].max(1);
            if partial {
                self.grid[k].div_ceil(b)
            } else {
                self.grid[k] / b
            }
        })
    }

    /// Workgroup `g`'s coordinates (x fastest, then y, then z).
    pub fn group_id(&self, g: u64) -> [u32; 3] {
        let [gx, gy, _] = self.groups().map(|v| u64::from(v.max(1)));
        [(g % gx) as u32, (g / gx % gy) as u32, (g / (gx * gy)) as u32]
    }

    /// The size of the workgroup at `id`: the block, or in a partial last workgroup
    /// (thread dimensions with PARTIAL_TG_EN) the threads left in each dimension.
    pub fn block_of(&self, id: [u32; 3]) -> [u32; 3] {
        if self.initiator & Self::USE_THREAD_DIMENSIONS == 0 {
            return self.block;
        }
        std::array::from_fn(|k| {
            let b = self.block[k].max(1);
            let start = u64::from(id[k]) * u64::from(b);
            (u64::from(self.grid[k]).saturating_sub(start)).min(u64::from(b)) as u32
        })
    }
}

/// Work an interpreter has done, over every dispatch of the interpreters sharing it.
#[derive(Debug, Default)]
pub struct Counters {
    /// Wave instructions executed.
    pub instructions: AtomicU64,
    /// Lane instructions: each wave instruction counts the lanes EXEC enabled when it
    /// issued.
    pub lane_instructions: AtomicU64,
}

/// `HCQ_MOCK_THREADS` when set to a positive number, else the available cores.
pub fn default_threads() -> usize {
    std::env::var("HCQ_MOCK_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Instructions between [`Memory::checkpoint`]s (a slice of a dispatch).
pub(crate) const CHECKPOINT_EVERY: u64 = 1 << 12;

/// Workgroups a dispatch needs before a second thread joins in (starting one costs
/// tens of microseconds; small dispatches stay on the engine's thread).
const PARALLEL_MIN_GROUPS: u64 = 8;

/// How long the dispatching thread runs workgroups alone before helpers join it.
const RECRUIT_AFTER: Duration = Duration::from_micros(30);

/// Workgroups from which helpers join at once: that many empty one-lane workgroups
/// take about as long as a helper's wake-up (0.04 µs each on one thread, 41 µs), any
/// real ones longer.
const RECRUIT_AT_ONCE: u64 = 1024;

/// Instructions a thread takes from the dispatch's budget at a time.
const BUDGET_CHUNK: u64 = CHECKPOINT_EVERY;

/// Instructions the dispatching thread takes at a time while it may still recruit
/// helpers: it looks at the clock at each chunk, so that helpers join about
/// [`RECRUIT_AFTER`] into a dispatch even inside a long workgroup.
const EARLY_CHUNK: u64 = 256;

/// One thread's part of a dispatch: its instruction allowance, taken from the shared
/// budget a chunk at a time, and what it did.
pub(crate) struct Worker<'b> {
    budget: &'b AtomicU64,
    limit: u64,
    /// Instructions left of the chunks taken.
    local: u64,
    /// Instructions taken from the budget (and a refused one): what ran is this less
    /// `local`, so a tick only counts `local` down.
    taken: u64,
    pub(crate) lanes: u64,
    /// Runs each time a chunk is taken (the dispatching thread's: recruiting helpers
    /// from inside a long workgroup, not only after it) until it returns false; while
    /// it is there, chunks are [`EARLY_CHUNK`] instructions.
    on_chunk: Option<&'b dyn Fn() -> bool>,
}

impl Worker<'_> {
    /// One more instruction: `Ok(true)` at a checkpoint (a new chunk), an error when
    /// the dispatch's budget is spent.
    #[inline]
    pub(crate) fn tick(&mut self) -> Result<bool, ExecError> {
        if self.local > 0 {
            self.local -= 1;
            return Ok(false);
        }
        let chunk = if self.on_chunk.is_some() {
            EARLY_CHUNK
        } else {
            BUDGET_CHUNK
        };
        // Relaxed: the budget is a counter; nothing is published through it.
        let got = self
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| Some(b - b.min(chunk)))
            .unwrap_or(0)
            .min(chunk);
        if got == 0 {
            // The instruction that found nothing left counts, as every tick does.
            self.taken += 1;
            return Err(ExecError::Budget { budget: self.limit });
        }
        self.taken += got;
        self.local = got - 1;
        if let Some(f) = self.on_chunk
            && !f()
        {
            self.on_chunk = None;
        }
        Ok(true)
    }

    /// Instructions run (ticks so far).
    pub(crate) fn used(&self) -> u64 {
        self.taken - self.local
    }
}

/// A value on cache lines of its own (two: a CPU may fetch lines in pairs).
#[repr(align(128))]
struct Line<T>(T);

/// The most workgroups a thread claims at once: a claim is a round trip of the shared
/// counter between cores, which costs 60 ns where they share a cache and 300 ns where
/// they do not (the machines measured place their vCPUs either way). 8,192 one-lane
/// workgroups on two threads, two against one, where a round trip took 340 ns: 0.66 ×
/// 2 with claims of at most 16, 0.88 with 64, 0.91 with the counters on lines of their
/// own too; where it took 60 ns: 0.93 → 0.96–0.99.
const CLAIM_MAX: u64 = 64;

/// How many workgroups a thread claims at once, with `left` not yet claimed by any
/// of `threads`: a quarter of its share, at most [`CLAIM_MAX`], at least one (claims
/// shrink as the grid runs out, so the threads finish together; many small
/// workgroups do not each cost a round trip of the shared counter between cores).
fn claim(left: u64, threads: usize) -> u64 {
    (left / (4 * threads.max(1) as u64)).clamp(1, CLAIM_MAX)
}

/// Runs workgroups `0..groups`, on this thread and, for large grids, on up to
/// `threads - 1` more (when `mem` can be shared). Each thread makes its own state with
/// `state` (code cache, waves, LDS: reused from one workgroup to the next) and runs a
/// workgroup with `run`. Workgroups are handed out in order, a few at a time
/// ([`claim`]); when one fails, the ones after it are not started, those before it
/// finish, and the error of the first failing workgroup is the dispatch's (as running
/// them in order would give).
/// Returns (instructions, lane instructions, result).
pub(crate) fn run_workgroups<S>(
    mem: &dyn Memory,
    groups: u64,
    threads: usize,
    budget: u64,
    state: impl Fn() -> S + Sync,
    run: impl Fn(&mut S, &dyn Memory, &mut Worker<'_>, u64) -> Result<(), ExecError> + Sync,
) -> (u64, u64, Result<(), ExecError>) {
    // Each shared counter on lines of its own: a thread reads `limit` at every
    // workgroup, the others write `next` and `left` as they claim.
    let left = Line(AtomicU64::new(budget));
    let left = &left.0;
    let next = Line(AtomicU64::new(0));
    let next = &next.0;
    // The first failing workgroup and its error; no workgroup at or after it starts.
    let failed: parking_lot::Mutex<Option<(u64, ExecError)>> = parking_lot::Mutex::new(None);
    let limit = Line(AtomicU64::new(u64::MAX));
    let limit = &limit.0;
    // `tick` runs after each workgroup and each chunk of the budget taken (the
    // dispatching thread's, to recruit helpers).
    let work = |mem: &dyn Memory, tick: Option<&dyn Fn() -> bool>| -> (u64, u64) {
        let mut me = Worker {
            budget: left,
            limit: budget,
            local: 0,
            taken: 0,
            lanes: 0,
            on_chunk: tick,
        };
        let mut s = state();
        // The workgroups this thread has claimed and not run: `g..end`.
        let (mut g, mut end) = (0, 0);
        loop {
            if g >= end {
                // Relaxed: each index is taken once; the limit only narrows.
                let n = claim(groups.saturating_sub(next.load(Ordering::Relaxed)), threads);
                g = next.fetch_add(n, Ordering::Relaxed);
                end = g.saturating_add(n).min(groups);
            }
            if g >= groups || g >= limit.load(Ordering::Relaxed) {
                break;
            }
            let this = g;
            g += 1;
            if let Err(e) = run(&mut s, mem, &mut me, this) {
                let mut f = failed.lock();
                if f.as_ref().is_none_or(|(at, _)| this < *at) {
                    limit.fetch_min(this, Ordering::Relaxed);
                    *f = Some((this, e));
                }
            }
            if let Some(t) = tick {
                t();
            }
        }
        (me.used(), me.lanes)
    };
    let shared = if groups >= PARALLEL_MIN_GROUPS && threads > 1 {
        mem.share()
    } else {
        None
    };
    let (mut used, mut lanes) = (0, 0);
    match shared {
        None => (used, lanes) = work(mem, None),
        Some(shared) => {
            let helpers = threads - 1;
            let work = &work;
            let start = Instant::now();
            crate::pool::scope(|s| {
                // Helpers join at once on a grid of RECRUIT_AT_ONCE workgroups or
                // more, else once this thread has worked RECRUIT_AFTER with workgroups
                // left: waking a parked thread costs tens of microseconds on the
                // virtual machines the project runs on (starting one, 40 µs to almost
                // a millisecond), more than a small dispatch takes on one.
                let others = parking_lot::Mutex::new(Vec::new());
                let recruited = std::cell::Cell::new(false);
                // Whether helpers may still be recruited (false once they are, or
                // once no workgroup is left to give them).
                let tick = || {
                    if recruited.get() {
                        return false;
                    }
                    // (Relaxed: a stale count only recruits helpers that find nothing.)
                    if next.load(Ordering::Relaxed) >= groups {
                        return false;
                    }
                    if groups >= RECRUIT_AT_ONCE || start.elapsed() >= RECRUIT_AFTER {
                        recruited.set(true);
                        let mut o = others.lock();
                        for _ in 0..helpers {
                            o.push(s.spawn(|| work(&*shared.open(), None)));
                        }
                        return false;
                    }
                    true
                };
                (used, lanes) = work(mem, Some(&tick));
                let others = others.into_inner();
                // Waiting for the helpers with this thread's hold released: one of
                // them may be waiting for a writer that waits for this thread.
                let mut others = Some(others);
                mem.unlocked(&mut || {
                    for h in others.take().into_iter().flatten() {
                        match h.join() {
                            Ok((u, l)) => {
                                used += u;
                                lanes += l;
                            }
                            Err(_) => {
                                let mut f = failed.lock();
                                if f.is_none() {
                                    *f = Some((0, ExecError::Panicked));
                                }
                            }
                        }
                    }
                });
            });
        }
    }
    let result = match failed.into_inner() {
        Some((_, e)) => Err(e),
        None => Ok(()),
    };
    (used, lanes, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claims are a quarter of a thread's share of what is left, between one and
    /// CLAIM_MAX workgroups.
    #[test]
    fn claims_shrink_as_the_grid_runs_out() {
        assert_eq!(claim(8192, 2), CLAIM_MAX);
        assert_eq!(claim(100, 2), 12);
        assert_eq!(claim(100, 64), 1);
        assert_eq!(claim(7, 2), 1);
        assert_eq!(claim(0, 2), 1);
        assert_eq!(claim(u64::MAX, 0), CLAIM_MAX);
    }
}
