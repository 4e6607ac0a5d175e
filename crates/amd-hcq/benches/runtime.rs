//! The runtime's CPU cost and copy bandwidth on the mock GPU (threaded: the engines
//! consume off the caller's thread), each against a reference measured in this run.
//!
//! `cargo xtask bench runtime`. Lines: `bench <name>: <value> <unit> (<ratio> × <reference>)`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use amd_hcq::{Iface, Platform, QueueFormat};
use amd_mockgpu::{MockConfig, MockSys};
use amd_packets::pm4::WaitRegMem;
use amd_packets::pm4::recipes::{self, Signal};
use amd_packets::testing::sample_dispatch;
use amd_packets::{GfxTarget, lo_hi};

mod common;

use common::{COPY_BYTES, COPY_ROUNDS, copies, launch_cost, median};

/// The pure-encoding cost of the same launch sequence (amd-packets' benchmark shape).
fn encode_only(iters: usize) -> f64 {
    let mut buf = Vec::with_capacity(256);
    let mut times = Vec::with_capacity(iters);
    for i in 0..iters as u32 {
        let t = Instant::now();
        buf.clear();
        WaitRegMem::memory_ge(0x7ff0_0000_1010, i).encode(GfxTarget::Gfx11, &mut buf);
        recipes::memory_barrier(GfxTarget::Gfx11, &mut buf);
        let user = lo_hi(0x7f40_0000_0000 + i as u64);
        sample_dispatch(&user)
            .encode(GfxTarget::Gfx11, &mut buf)
            .expect("valid dispatch");
        Signal {
            address: 0x7ff0_0000_1010,
            value: i as u64 + 1,
            event: Some((0x7ff0_0010_0010, 2)),
        }
        .encode(GfxTarget::Gfx11, &mut buf);
        black_box(&buf);
        times.push(t.elapsed().as_secs_f64());
    }
    median(&mut times)
}

fn main() {
    common::host_state("before");
    if std::env::var("HCQ_BENCH_ONLY").is_ok_and(|v| v == "launch_aql") {
        let m = Arc::new(MockSys::new(MockConfig::default()));
        let p = Platform::with_sys(m, Iface::Mock)
            .expect("mock platform")
            .with_queue_format(QueueFormat::Aql);
        let dev = p.device(0).expect("mock GPU with an AQL queue");
        let aql = launch_cost(&dev, 20_000);
        println!("bench launch_cpu_cost_aql: {:.2} us median", aql * 1e6);
        return;
    }
    let m = Arc::new(MockSys::new(MockConfig::default()));
    let p = Platform::with_sys(m, Iface::Mock).expect("mock platform");
    let dev = p.device(0).expect("mock GPU");
    let iters = 20_000;
    let launch = launch_cost(&dev, iters);
    let encode = encode_only(iters);
    println!(
        "bench launch_cpu_cost: {:.2} us median ({:.1} × encoding the same sequence, {:.3} us; goal 0.30 us)",
        launch * 1e6,
        launch / encode,
        encode * 1e6
    );
    // `HCQ_BENCH_ONLY=launch`: that figure alone (for a profiler; `launch_aql`, the
    // AQL queue's alone).
    if std::env::var("HCQ_BENCH_ONLY").is_ok_and(|v| v == "launch") {
        return;
    }
    // The same launches with replay off: each recorded and checked anew.
    dev.set_launch_replay_for_test(false);
    let recorded = launch_cost(&dev, iters);
    dev.set_launch_replay_for_test(true);
    println!(
        "bench launch_cpu_cost_recorded: {:.2} us median ({:.2} × replaying the recording, {:.2} us in this run; \
         every launch recorded and checked anew)",
        recorded * 1e6,
        recorded / launch,
        launch * 1e6
    );
    // The same launches on a device whose compute queue is an AQL queue (the PM4 list
    // sent as a kernel dispatch packet and PM4-IB packets).
    let m_aql = Arc::new(MockSys::new(MockConfig::default()));
    let p_aql = Platform::with_sys(m_aql, Iface::Mock)
        .expect("mock platform")
        .with_queue_format(QueueFormat::Aql);
    let dev_aql = p_aql.device(0).expect("mock GPU with an AQL queue");
    let aql = launch_cost(&dev_aql, iters);
    println!(
        "bench launch_cpu_cost_aql: {:.2} us median ({:.2} × the PM4 queue's {:.2} us in this run)",
        aql * 1e6,
        aql / launch,
        launch * 1e6
    );
    drop(dev_aql);

    // memcpy of the same bytes, timed in the same rounds.
    let mut best_memcpy = f64::MAX;
    let (best_in, best_out) = copies(&dev, COPY_ROUNDS, |host, back| {
        let t = Instant::now();
        back.copy_from_slice(black_box(host));
        best_memcpy = best_memcpy.min(t.elapsed().as_secs_f64());
    });
    let gbs = |s: f64| COPY_BYTES as f64 / s / 1e9;
    println!(
        "bench copy_in_64mib: {:.2} GB/s ({:.2} × memcpy, {:.2} GB/s; goal 0.5)",
        gbs(best_in),
        best_memcpy / best_in,
        gbs(best_memcpy)
    );
    println!(
        "bench copy_out_64mib: {:.2} GB/s ({:.2} × memcpy, {:.2} GB/s; goal 0.8)",
        gbs(best_out),
        best_memcpy / best_out,
        gbs(best_memcpy)
    );
    common::host_state("after");
}
