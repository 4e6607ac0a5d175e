//! Encoding cost of a kernel launch, against plainly copying the same dwords.
//!
//! Encodes tinygrad's launch shape — wait on the timeline, memory barrier, dispatch
//! with its SET_SH_REGs, timeline signal — into a reused buffer, and compares the time
//! with copying an already-encoded copy of those dwords into the same buffer. Counts
//! heap allocations per sequence with a counting allocator. Also decodes the sequence,
//! as the mock GPU will, against the same copy.
//!
//! Run with `cargo xtask bench encode`. Each figure is one line:
//! `bench <name>: <value> <unit> (<ratio> × <reference>)`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use amd_packets::pm4::recipes::{self, Dispatch, Signal};
use amd_packets::pm4::{self, WaitRegMem};
use amd_packets::testing::sample_dispatch;
use amd_packets::{GfxTarget, lo_hi};

/// Counts allocations so the benchmark can report allocations per sequence.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so
// `System`'s guarantees carry over; the counter is a relaxed atomic with no effect on
// the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // Relaxed: a statistic, read after the measured loop on the same thread.
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract for `layout`.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (through `alloc`) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Relaxed: as in `alloc`.
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds the rest.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const T: GfxTarget = GfxTarget::Gfx11;
const TIMELINE: u64 = 0x7ff0_0000_1010;
const MAILBOX: u64 = 0x7ff0_0010_0010;

#[inline(never)]
fn encode_launch(out: &mut Vec<u32>, value: u32, kernargs: u64, grid: [u32; 3]) {
    out.clear();
    WaitRegMem::memory_ge(TIMELINE, value - 1).encode(T, out);
    recipes::memory_barrier(T, out);
    let user = lo_hi(kernargs);
    let d = Dispatch {
        grid,
        ..sample_dispatch(&user)
    };
    // The inputs are fixed and valid; an error here is a bug in the benchmark.
    d.encode(T, out).expect("valid dispatch");
    Signal {
        address: TIMELINE,
        value: value as u64,
        event: Some((MAILBOX, 2)),
    }
    .encode(T, out);
}

#[inline(never)]
fn copy_prepared(out: &mut Vec<u32>, prepared: &[u32]) {
    out.clear();
    out.extend_from_slice(prepared);
}

#[inline(never)]
fn decode_all(words: &[u32]) -> usize {
    pm4::decode(T, words).filter(|r| r.is_ok()).count()
}

/// Best per-iteration time in nanoseconds over several rounds of `iters` calls.
fn measure(iters: u32, mut f: impl FnMut(u32)) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..9 {
        let t0 = Instant::now();
        for i in 0..iters {
            f(i);
        }
        best = best.min(t0.elapsed().as_secs_f64() * 1e9 / iters as f64);
    }
    best
}

fn main() {
    let iters = 200_000;
    let mut buf = Vec::with_capacity(256);
    encode_launch(&mut buf, 7, 0x7f40_0000_0000, [4, 2, 1]);
    let prepared = buf.clone();
    let dwords = prepared.len();

    let copy = measure(iters, |_| copy_prepared(black_box(&mut buf), black_box(&prepared)));
    let before = ALLOCS.load(Ordering::Relaxed);
    let encode = measure(iters, |i| {
        encode_launch(
            black_box(&mut buf),
            black_box(7 + i),
            black_box(0x7f40_0000_0000 + i as u64),
            [4, 2, 1],
        )
    });
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert_eq!(buf.len(), dwords);
    let decode = measure(iters, |_| {
        black_box(decode_all(black_box(&prepared)));
    });

    println!(
        "bench encode_launch_sequence: {:.1} ns/seq ({:.2} × copying the same {dwords} dwords, {:.1} ns)",
        encode,
        encode / copy,
        copy
    );
    // Reported as a plain count: the goal is zero, so there is no ratio to give.
    println!(
        "bench encode_launch_sequence_allocs: {:.3} allocations/seq",
        allocs as f64 / (9.0 * iters as f64)
    );
    println!(
        "bench decode_launch_sequence: {:.1} ns/seq ({:.2} × copying the same {dwords} dwords)",
        decode,
        decode / copy
    );
}
