//! What the benchmarks share: the kernel they launch, pseudo-random inputs, the
//! median, the CPU cost of a launch, copy bandwidth, and the host's state.

#![allow(dead_code)]

use std::hint::black_box;
use std::time::Instant;

use amd_hcq::{BufferKind, Device, LaunchDims, Program};

/// The whole-stack tests' helpers, for their pseudo-random inputs.
#[path = "../../tests/common/mod.rs"]
mod tests_common;

#[allow(unused_imports)] // Not every benchmark takes random inputs.
pub use tests_common::rand_u32;

mod host;
pub use host::host_state;

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

/// Bytes of each copy [`copies`] times.
pub const COPY_BYTES: usize = 64 << 20;

/// Rounds of copies a benchmark makes (the fastest of each direction counts): enough
/// that a stretch of the machine's other load (a tenth of a second to seconds here)
/// does not take them all.
pub const COPY_ROUNDS: usize = 9;

/// Best of `rounds` copies of [`COPY_BYTES`] into a device buffer and back, in seconds (in, out);
/// `each` runs at the start of every round with the source bytes and the buffer they
/// come back to.
pub fn copies(dev: &Device, rounds: usize, mut each: impl FnMut(&[u8], &mut [u8])) -> (f64, f64) {
    let mut c = Copies::new(dev);
    for _ in 0..rounds {
        c.round(&mut each);
    }
    c.best()
}

/// Copies of [`COPY_BYTES`] into a device buffer and back, a round at a time (so that
/// two devices' rounds can alternate), keeping the fastest of each direction.
pub struct Copies<'a> {
    dev: &'a Device,
    host: Vec<u8>,
    back: Vec<u8>,
    buf: amd_hcq::Buffer,
    best: (f64, f64),
}

impl<'a> Copies<'a> {
    pub fn new(dev: &'a Device) -> Copies<'a> {
        Copies {
            dev,
            host: (0..COPY_BYTES).map(|i| (i * 13 + 1) as u8).collect(),
            back: vec![0u8; COPY_BYTES],
            buf: dev.alloc(COPY_BYTES, BufferKind::Device).expect("buffer"),
            best: (f64::MAX, f64::MAX),
        }
    }

    /// One round: `each` (with the source bytes and the buffer they come back to),
    /// then a timed copy in and a timed copy out, checked.
    pub fn round(&mut self, mut each: impl FnMut(&[u8], &mut [u8])) {
        each(&self.host, &mut self.back);
        let t = Instant::now();
        self.dev.copy_in(&self.buf, 0, black_box(&self.host)).expect("copy in");
        self.dev.synchronize().expect("synchronize");
        self.best.0 = self.best.0.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        self.dev.copy_out(&mut self.back, &self.buf, 0).expect("copy out");
        self.best.1 = self.best.1.min(t.elapsed().as_secs_f64());
        assert!(self.back == self.host, "round trip");
    }

    /// The fastest copy in and out so far, in seconds.
    pub fn best(&self) -> (f64, f64) {
        self.best
    }
}
