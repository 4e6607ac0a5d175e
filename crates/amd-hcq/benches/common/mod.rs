//! What the benchmarks share: the kernel they launch, the median, and the CPU cost of
//! a launch.

#![allow(dead_code)]

use std::time::Instant;

use amd_hcq::{BufferKind, Device, LaunchDims, Program};

/// The `vadd` kernel (`tests/kernels/vadd.hsaco`).
pub const VADD: &[u8] = include_bytes!("../../../../tests/kernels/vadd.hsaco");

/// The median of `v` (sorted in place).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median CPU time, in seconds, of `iters` vadd launches of 4 × 2 workgroups on
/// `dev` (the engines consume them meanwhile).
pub fn launch_cost(dev: &Device, iters: usize) -> f64 {
    let prg = Program::load(dev, VADD, "vadd").expect("vadd");
    let bufs: Vec<_> = (0..3)
        .map(|_| dev.alloc(4096, BufferKind::Device).expect("buffer"))
        .collect();
    let dims = LaunchDims {
        global: [4, 2, 1],
        local: [64, 1, 1],
    };
    let mut times = Vec::with_capacity(iters);
    for i in 0..iters as u32 {
        let t = Instant::now();
        prg.launch(&[&bufs[0], &bufs[1], &bufs[2]], &[i], dims).expect("launch");
        times.push(t.elapsed().as_secs_f64());
    }
    dev.synchronize().expect("synchronize");
    median(&mut times)
}
