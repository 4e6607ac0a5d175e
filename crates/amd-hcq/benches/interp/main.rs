//! The RDNA3 interpreter's speed: lane instructions per second on vadd, the LDS tree
//! reduction, a reduction and a product shaped as tinygrad's kernels make them
//! (`reduce_group`: one barrier; `matmul_direct`: no local tile) and the tiled LDS
//! matmul, launched through the runtime on the mock GPU;
//! and `matrix`, a WMMA workload shaped like AMD's rocjitsu "matrix" (512 one-wave
//! workgroups × 128 iterations × 4 independent chains of `v_wmma_f32_16x16x16_f16`,
//! `tests/kernels/matrix.cl`), timed on one thread and on all (`HCQ_MOCK_THREADS` or the
//! cores), with its multiply-adds per second against the same products in Rust.
//! References measured in the same run: the same computation in native Rust, and,
//! where `REMU_LIB` names a `libremu.so` built from github:Qazalin/remu, remu running
//! the same code objects on the same grids (the fastest of its runs, at least three).
//! The `gfx1201_*` cases (`gfx1201_matrix` among them) run the same kernels built for
//! RDNA4 on a gfx1201 mock, the `gfx942_*` cases those built for CDNA3 (waves of 64)
//! on a gfx942 mock, each against its gfx1100 case of the same run (remu runs RDNA3
//! code only).
//! The cases' launches at each thread count and their remu runs take turns over the
//! whole run, so that a stretch of the machine's other load reaches them alike. Both
//! runs' output buffers are checked against the Rust's: a remu ratio is printed only
//! for a remu run that computed the case's values (remu keeps one barrier per
//! kernel).
//!
//! `cargo xtask bench interp` (`REMU_LIB=/path/to/libremu.so cargo xtask bench interp`
//! for the remu ratio). Lines: `bench <name>: <value> <unit> (<ratio> × <reference>)`.
//! Arguments that do not start with `-` pick cases by name (`cargo bench -p amd-hcq
//! --bench interp -- matmul`); `HCQ_BENCH_RUNS` sets the timed launches per case and
//! thread count (default 20; the matrix workloads 3), for a profiler to sample a
//! longer run or a shorter one.

#[path = "../common/mod.rs"]
mod common;
mod remu;

use common::{median, rand_u32};

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use amd_hcq::{Buffer, BufferKind, CodeObject, Device, Iface, LaunchDims, Platform, Program};
use amd_mockgpu::{GpuProfile, MockConfig, MockSys, Rdna3Executor};

/// Timed launches per case at each thread count, unless `HCQ_BENCH_RUNS` says
/// otherwise: seven rounds of [`TURN`], so that each case's fastest launches come from
/// moments spread over the run.
const RUNS: usize = 20;

/// Timed launches of a matrix workload (a second or so each), unless `HCQ_BENCH_RUNS`
/// says otherwise.
const MATRIX_RUNS: usize = 3;

/// `HCQ_BENCH_RUNS`, or `default`.
fn runs_or(default: usize) -> usize {
    std::env::var("HCQ_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

/// Timed launches per case at each thread count.
fn runs() -> usize {
    runs_or(RUNS)
}

/// One kernel argument.
#[derive(Clone, Copy)]
enum Arg {
    /// Index into the case's buffers.
    Buf(usize),
    U32(u32),
}

struct Case {
    name: &'static str,
    elf: &'static [u8],
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    buffers: Vec<Vec<u32>>,
    args: Vec<Arg>,
    /// The same computation in Rust, on the case's buffers.
    native: fn(&mut [Vec<u32>]),
    /// Multiply-adds per launch, for a matrix workload.
    macs: Option<f64>,
    /// The target its code object is built for, and the mock's profile it runs on.
    target: Target,
}

/// The GPU a case's code object is built for and runs on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// gfx1100 (RDNA3): remu runs these too.
    Gfx1100,
    /// gfx1201 (RDNA4).
    Gfx1201,
    /// gfx942 (CDNA3).
    Gfx942,
}

/// The `matrix` case's shape: workgroups, iterations, chains.
const MATRIX: (usize, usize, usize) = (512, 128, 4);

/// f32 values (small integers) as packed halves, two to a dword.
fn halves(v: &[f32]) -> Vec<u32> {
    let h = |x: f32| -> u32 {
        // Small integers only: exact in f16 (sign, exponent, 10-bit mantissa).
        if x == 0.0 {
            return 0;
        }
        let (s, a) = (u32::from(x < 0.0) << 15, x.abs());
        let e = a.log2().floor() as i32;
        let m = ((a / 2f32.powi(e) - 1.0) * 1024.0) as u32;
        s | ((e + 15) as u32) << 10 | m
    };
    v.chunks(2).map(|p| h(p[0]) | h(p[1]) << 16).collect()
}

/// The `matrix` case in Rust: each group's four chains of `c += a · b` on the halves
/// of A and B, in f32 (also the f16-accumulator form's reference).
fn matrix_native(b: &mut [Vec<u32>]) {
    let elem = |v: &[u32], i: usize| half_f32(half_word(v, i));
    forms_native(b, elem, |x, y| x * y, f32::to_bits);
}

/// The matrix workload's shape in Rust for another WMMA form: each group's four chains
/// of `c += a · b` on 16 × 16 matrices of `T` read from the case's buffers by `elem`
/// (the kernels place the same values in other elements: the count of multiply-adds
/// and their types are the kernel's), accumulated in `Acc`.
fn forms_native<T: Copy, Acc: Copy + Default + std::ops::Add<Output = Acc>>(
    b: &mut [Vec<u32>],
    elem: impl Fn(&[u32], usize) -> T,
    mul: impl Fn(T, T) -> Acc,
    bits: impl Fn(Acc) -> u32,
) {
    let (groups, iters, chains) = MATRIX;
    let a: Vec<T> = (0..chains * 256).map(|i| elem(&b[0], i)).collect();
    let bm: Vec<T> = (0..256).map(|i| elem(&b[1], i)).collect();
    for g in 0..groups {
        for m in 0..chains {
            let mut c = [Acc::default(); 256];
            for _ in 0..iters {
                for row in 0..16 {
                    for col in 0..16 {
                        let mut s = c[row * 16 + col];
                        for k in 0..16 {
                            s = s + mul(a[m * 256 + row * 16 + k], bm[k * 16 + col]);
                        }
                        c[row * 16 + col] = s;
                    }
                }
            }
            for (i, &v) in c.iter().enumerate() {
                let at = (g * chains + m) * 256 + i;
                if let Some(o) = b[2].get_mut(at) {
                    *o = bits(v);
                }
            }
        }
    }
}

/// Element `i` of packed 16-bit values.
fn half_word(v: &[u32], i: usize) -> u16 {
    (v[i / 2] >> (16 * (i % 2))) as u16
}

/// A half's value (normal numbers and zero: the benchmark's small integers).
fn half_f32(h: u16) -> f32 {
    let (s, e, m) = (h >> 15, (h >> 10) & 31, h & 1023);
    let v = if e == 0 {
        0.0
    } else {
        (1.0 + f32::from(m) / 1024.0) * 2f32.powi(i32::from(e) - 15)
    };
    if s == 1 { -v } else { v }
}

/// vadd's sums at every `step`th element.
fn vadd_native(b: &mut [Vec<u32>], step: usize) {
    for i in (0..b[0].len()).step_by(step) {
        b[2][i] = (f32::from_bits(b[0][i]) + f32::from_bits(b[1][i])).to_bits();
    }
}

/// Each group's sum of `per_group` floats (the reductions).
fn sums_native(b: &mut [Vec<u32>], per_group: usize) {
    for g in 0..b[1].len() {
        let s: f32 = b[0][g * per_group..(g + 1) * per_group]
            .iter()
            .map(|&x| f32::from_bits(x))
            .sum();
        b[1][g] = s.to_bits();
    }
}

/// A 64 × 64 float product by `kernel` (code object `elf`), in 16 × 16 workgroups.
fn matmul_case(kernel: &'static str, elf: &'static [u8]) -> Case {
    let n = 64usize;
    Case {
        name: kernel,
        elf,
        kernel,
        grid: [(n / 16) as u32, (n / 16) as u32, 1],
        block: [16, 16, 1],
        buffers: vec![floats(n * n, 4, 7), floats(n * n, 5, 5), vec![0; n * n]],
        args: vec![Arg::Buf(0), Arg::Buf(1), Arg::Buf(2), Arg::U32(n as u32)],
        macs: None,
        target: Target::Gfx1100,
        native: matmul_native,
    }
}

/// C = A · B of the matmul cases, n × n floats.
fn matmul_native(b: &mut [Vec<u32>]) {
    let n = (b[0].len() as f64).sqrt() as usize;
    for r in 0..n {
        for c in 0..n {
            let s: f32 = (0..n)
                .map(|k| f32::from_bits(b[0][r * n + k]) * f32::from_bits(b[1][k * n + c]))
                .sum();
            b[2][r * n + c] = s.to_bits();
        }
    }
}

fn bf16_native(b: &mut [Vec<u32>]) {
    let elem = |v: &[u32], i: usize| f32::from_bits(u32::from(half_word(v, i)) << 16);
    forms_native(b, elem, |x, y| x * y, f32::to_bits);
}

fn iu8_native(b: &mut [Vec<u32>]) {
    let elem = |v: &[u32], i: usize| (v[i / 4] >> (8 * (i % 4))) as u8 as i8;
    forms_native(b, elem, |x, y| i32::from(x) * i32::from(y), |v| v as u32);
}

fn iu4_native(b: &mut [Vec<u32>]) {
    // A nibble's signed value.
    let elem = |v: &[u32], i: usize| (((v[i / 8] >> (4 * (i % 8))) as i32) << 28 >> 28) as i8;
    forms_native(b, elem, |x, y| i32::from(x) * i32::from(y), |v| v as u32);
}

/// A case of `kernel` in `matrix_forms.cl`: the matrix workload's shape, each lane's A
/// registers (four chains) and B registers `regs` dwords from `a` and `b`.
fn form_case(name: &'static str, regs: usize, a: Vec<u32>, b: Vec<u32>, native: fn(&mut [Vec<u32>])) -> Case {
    let (groups, iters, chains) = MATRIX;
    assert!(a.len() >= 32 * chains * regs && b.len() >= 32 * regs);
    Case {
        name,
        elf: include_bytes!("../../../../tests/kernels/matrix_forms.hsaco"),
        kernel: name,
        grid: [groups as u32, 1, 1],
        block: [32, 1, 1],
        buffers: vec![a, b, vec![0; groups * 32 * chains * 8]],
        args: vec![Arg::Buf(0), Arg::Buf(1), Arg::Buf(2), Arg::U32(iters as u32)],
        macs: Some((groups * iters * chains * 16 * 16 * 16) as f64),
        target: Target::Gfx1100,
        native,
    }
}

fn floats(n: usize, seed: u32, m: u32) -> Vec<u32> {
    rand_u32(n, seed).iter().map(|&v| ((v % m) as f32).to_bits()).collect()
}

fn cases() -> Vec<Case> {
    let vadd_n = 256 * 1024;
    let red_n = 256 * 256;
    let mut all = vec![
        Case {
            name: "vadd",
            elf: include_bytes!("../../../../tests/kernels/vadd.hsaco"),
            kernel: "vadd",
            grid: [(vadd_n / 256) as u32, 1, 1],
            block: [256, 1, 1],
            buffers: vec![floats(vadd_n, 1, 1000), floats(vadd_n, 2, 1000), vec![0; vadd_n]],
            args: vec![Arg::Buf(0), Arg::Buf(1), Arg::Buf(2), Arg::U32(vadd_n as u32)],
            macs: None,
            target: Target::Gfx1100,
            native: |b| vadd_native(b, 1),
        },
        // Many one-lane workgroups (as a launch of small independent tasks is): the
        // fixed cost per workgroup. vadd indexes group × 256 + lane, so every 256th
        // element is computed.
        Case {
            name: "vadd_8192_groups_of_1_lane",
            elf: include_bytes!("../../../../tests/kernels/vadd.hsaco"),
            kernel: "vadd",
            grid: [8192, 1, 1],
            block: [1, 1, 1],
            buffers: vec![
                floats(8192 * 256, 6, 1000),
                floats(8192 * 256, 7, 1000),
                vec![0; 8192 * 256],
            ],
            args: vec![Arg::Buf(0), Arg::Buf(1), Arg::Buf(2), Arg::U32(8192 * 256)],
            macs: None,
            target: Target::Gfx1100,
            native: |b| vadd_native(b, 256),
        },
        Case {
            name: "reduce_lds",
            elf: include_bytes!("../../../../tests/kernels/reduce_lds.hsaco"),
            kernel: "reduce_lds",
            grid: [(red_n / 256) as u32, 1, 1],
            block: [256, 1, 1],
            buffers: vec![floats(red_n, 3, 64), vec![0; red_n / 256]],
            args: vec![Arg::Buf(0), Arg::Buf(1), Arg::U32(red_n as u32)],
            macs: None,
            target: Target::Gfx1100,
            native: |b| sums_native(b, 256),
        },
        // A reduction shaped as tinygrad's: partial sums in registers, one barrier, the
        // first lane adds the group's partials (remu runs this one; it cannot run the
        // tree above, whose barriers are more than one).
        Case {
            name: "reduce_group",
            elf: include_bytes!("../../../../tests/kernels/reduce_group.hsaco"),
            kernel: "reduce_group",
            grid: [(red_n / 256) as u32, 1, 1],
            block: [64, 1, 1],
            buffers: vec![floats(red_n * 4, 8, 64), vec![0; red_n / 256]],
            args: vec![Arg::Buf(0), Arg::Buf(1), Arg::U32((red_n * 4) as u32)],
            macs: None,
            target: Target::Gfx1100,
            native: |b| sums_native(b, 1024),
        },
        matmul_case("matmul", include_bytes!("../../../../tests/kernels/matmul.hsaco")),
        // The same product without local memory or barriers, as tinygrad's kernels
        // without a local tile compute it (remu runs this one; the tiled kernel above
        // waits at barriers remu does not keep).
        matmul_case(
            "matmul_direct",
            include_bytes!("../../../../tests/kernels/matmul_direct.hsaco"),
        ),
        Case {
            name: "matrix",
            elf: include_bytes!("../../../../tests/kernels/matrix.hsaco"),
            kernel: "matrix",
            grid: [MATRIX.0 as u32, 1, 1],
            block: [32, 1, 1],
            buffers: vec![
                halves(
                    &rand_u32(1024, 6)
                        .iter()
                        .map(|&v| (v % 5) as f32 - 2.0)
                        .collect::<Vec<_>>(),
                ),
                halves(
                    &rand_u32(256, 7)
                        .iter()
                        .map(|&v| (v % 3) as f32 - 1.0)
                        .collect::<Vec<_>>(),
                ),
                vec![0; 1024 * MATRIX.0],
            ],
            args: vec![Arg::Buf(0), Arg::Buf(1), Arg::Buf(2), Arg::U32(MATRIX.1 as u32)],
            macs: Some((MATRIX.0 * MATRIX.1 * MATRIX.2 * 16 * 16 * 16) as f64),
            target: Target::Gfx1100,
            native: matrix_native,
        },
        // The other WMMA forms in the same shape (bf16 and f16 inputs: small integers,
        // exact; 8- and 4-bit integers: any bits).
        form_case("matrix_bf16", 8, bf16s(1024, 8), bf16s(256, 9), bf16_native),
        form_case(
            "matrix_f16acc",
            8,
            halves(&small(2048, 10)),
            halves(&small(512, 11)),
            matrix_native,
        ),
        form_case("matrix_bf16acc", 8, bf16s(1024, 16), bf16s(256, 17), bf16_native),
        form_case("matrix_iu8", 4, rand_u32(1024, 12), rand_u32(256, 13), iu8_native),
        form_case("matrix_iu4", 2, rand_u32(1024, 14), rand_u32(256, 15), iu4_native),
    ];
    // RDNA4 and CDNA3: the same kernels built for gfx1201 (`tests/kernels/gfx1201/`)
    // and gfx942 (`tests/kernels/gfx942/`), on gfx1201 and gfx942 mocks, the same grids
    // and buffers (the matrix kernel is RDNA's alone).
    let twins: [(&'static str, &'static [u8]); 9] = [
        (
            "gfx1201_vadd",
            include_bytes!("../../../../tests/kernels/gfx1201/vadd.hsaco"),
        ),
        (
            "gfx1201_vadd_8192_groups_of_1_lane",
            include_bytes!("../../../../tests/kernels/gfx1201/vadd.hsaco"),
        ),
        (
            "gfx1201_reduce_group",
            include_bytes!("../../../../tests/kernels/gfx1201/reduce_group.hsaco"),
        ),
        (
            "gfx1201_matmul_direct",
            include_bytes!("../../../../tests/kernels/gfx1201/matmul_direct.hsaco"),
        ),
        (
            "gfx1201_matrix",
            include_bytes!("../../../../tests/kernels/gfx1201/matrix.hsaco"),
        ),
        (
            "gfx942_vadd",
            include_bytes!("../../../../tests/kernels/gfx942/vadd.hsaco"),
        ),
        (
            "gfx942_vadd_8192_groups_of_1_lane",
            include_bytes!("../../../../tests/kernels/gfx942/vadd.hsaco"),
        ),
        (
            "gfx942_reduce_group",
            include_bytes!("../../../../tests/kernels/gfx942/reduce_group.hsaco"),
        ),
        (
            "gfx942_matmul_direct",
            include_bytes!("../../../../tests/kernels/gfx942/matmul_direct.hsaco"),
        ),
    ];
    for (name, elf) in twins {
        if let Some(c) = all.iter().find(|c| Some(c.name) == gfx1100_twin(name)) {
            let twin = Case {
                name,
                elf,
                target: if name.starts_with("gfx942_") {
                    Target::Gfx942
                } else {
                    Target::Gfx1201
                },
                buffers: c.buffers.clone(),
                args: c.args.clone(),
                ..*c
            };
            all.push(twin);
        }
    }
    all
}

/// The gfx1100 case a gfx1201 or gfx942 case was made from.
fn gfx1100_twin(name: &str) -> Option<&str> {
    name.strip_prefix("gfx1201_").or_else(|| name.strip_prefix("gfx942_"))
}

/// `n` small integers (-2 to 2) as f32.
fn small(n: usize, seed: u32) -> Vec<f32> {
    rand_u32(n, seed).iter().map(|&v| (v % 5) as f32 - 2.0).collect()
}

/// `2 × n` small integers as packed bfloat16s (an f32's top half: exact).
fn bf16s(n: usize, seed: u32) -> Vec<u32> {
    small(2 * n, seed)
        .chunks(2)
        .map(|p| p[0].to_bits() >> 16 | (p[1].to_bits() >> 16) << 16)
        .collect()
}

fn upload(dev: &Device, words: &[u32]) -> Buffer {
    let b = dev.alloc(words.len() * 4 + 256, BufferKind::Device).unwrap();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    dev.copy_in(&b, 0, &bytes).unwrap();
    b
}

/// A case's launches on the interpreter.
#[derive(Clone, Copy)]
struct Timed {
    /// The median launch, in seconds.
    median: f64,
    /// The fastest launch, in seconds (what the machine's other load took least from).
    best: f64,
    /// Lane and wave instructions per launch.
    lanes: u64,
    insts: u64,
}

/// A case loaded on a mock GPU of its own whose interpreter runs on `threads` threads
/// (or as many as it takes by default), its buffers uploaded, and its launches so far.
struct Ours<'a> {
    case: &'a Case,
    /// The interpreter's instruction and lane-instruction counts so far.
    counts: Box<dyn Fn() -> (u64, u64)>,
    bufs: Vec<Buffer>,
    prg: Program,
    dev: Device,
    _platform: Platform,
    times: Vec<f64>,
    /// The counts before the first launch, and the launches since (untimed ones too:
    /// the counts include them).
    start: (u64, u64),
    launches: u64,
}

impl<'a> Ours<'a> {
    fn new(case: &'a Case, threads: Option<usize>) -> Ours<'a> {
        let config = match case.target {
            Target::Gfx1201 => MockConfig {
                gpus: vec![GpuProfile::gfx1201()],
                ..MockConfig::default()
            },
            Target::Gfx942 => MockConfig {
                gpus: vec![GpuProfile::gfx942()],
                ..MockConfig::default()
            },
            Target::Gfx1100 => MockConfig::gfx1100s(1),
        };
        let m = Arc::new(MockSys::new(config));
        let mut exec = Rdna3Executor::default();
        if let Some(t) = threads {
            exec.threads = t;
        }
        let counters = exec.counters();
        let counts = Box::new(move || {
            (
                counters.instructions.load(Ordering::Relaxed),
                counters.lane_instructions.load(Ordering::Relaxed),
            )
        });
        m.set_kernel_executor(Box::new(exec));
        let platform = Platform::with_sys(m, Iface::Mock).unwrap();
        let dev = platform.device(0).unwrap();
        let prg = Program::load(&dev, case.elf, case.kernel).unwrap();
        let bufs: Vec<Buffer> = case.buffers.iter().map(|b| upload(&dev, b)).collect();
        let start = counts();
        Ours {
            case,
            start,
            counts,
            bufs,
            prg,
            dev,
            _platform: platform,
            times: Vec::new(),
            launches: 0,
        }
    }

    /// One untimed launch.
    fn warm(&mut self) {
        self.launch();
        self.times.pop();
    }

    /// One timed launch.
    fn launch(&mut self) {
        let buf_args: Vec<&Buffer> = (self.case.args.iter())
            .filter_map(|a| match a {
                Arg::Buf(i) => Some(&self.bufs[*i]),
                Arg::U32(_) => None,
            })
            .collect();
        let vals: Vec<u32> = (self.case.args.iter())
            .filter_map(|a| match a {
                Arg::U32(v) => Some(*v),
                Arg::Buf(_) => None,
            })
            .collect();
        let dims = LaunchDims {
            global: self.case.grid,
            local: self.case.block,
        };
        let t = Instant::now();
        self.prg.launch_timed(&buf_args, &vals, dims).unwrap();
        self.times.push(t.elapsed().as_secs_f64());
        self.launches += 1;
    }

    /// The timed launches' figures, the buffers checked against the case's Rust.
    fn timed(mut self) -> Timed {
        let runs = self.launches.max(1);
        let (insts, lanes) = (self.counts)();
        let (insts, lanes) = ((insts - self.start.0) / runs, (lanes - self.start.1) / runs);
        if self.case.macs.is_none() {
            let got: Vec<Vec<u32>> = (self.bufs.iter())
                .zip(&self.case.buffers)
                .map(|(b, w)| self.dev.copy_out_vec(b, 0, w.len()).unwrap())
                .collect();
            if let Err(e) = same_as_native(self.case, &got) {
                panic!("the interpreter's {} differs from native Rust: {e}", self.case.name);
            }
        }
        let best = self.times.iter().copied().fold(f64::MAX, f64::min);
        Timed {
            median: median(&mut self.times),
            best,
            lanes,
            insts,
        }
    }
}

/// Timed launches a case makes in one turn of [`ours_each`] (three: the default 20
/// launches come in seven rounds, each with a remu run of the case, so that both
/// sides' fastest come from more of the host's stretches).
const TURN: usize = 3;

/// Each case's launches on the interpreter on its thread count (`None`: the default),
/// each on a mock GPU of its own. The cases take turns, [`TURN`] launches at a time
/// (see [`take_turns`]).
fn ours_each(runs_of: &[(&Case, Option<usize>)], runs: usize) -> Vec<Timed> {
    let mut all: Vec<Ours> = runs_of.iter().map(|&(c, t)| Ours::new(c, t)).collect();
    take_turns(std::slice::from_mut(&mut all), runs, |_| {});
    all.into_iter().map(Ours::timed).collect()
}

/// Launches every group's mocks in turns until each has made `runs` timed launches:
/// in each round every mock of every group makes [`TURN`] launches (fewer in the
/// last), then `after_group(g)` runs (a reference's run of group `g`'s case). So that
/// the machine's swings, which last from a tenth of a second to seconds here, reach
/// every mock alike, and the fastest launches of each come from moments spread over
/// the whole run. Each turn starts with an untimed launch, so that the timed ones run
/// as back-to-back launches do: the turn before ran another mock's buffers through the
/// caches (vadd's 24 MiB twice is more than this machine's L3), its engine went on
/// spinning for a next submission for a while (`MockConfig::idle_poll`), and the
/// interpreter's helper threads have been parked since their last launch.
fn take_turns(groups: &mut [Vec<Ours>], runs: usize, mut after_group: impl FnMut(usize)) {
    let mut left = runs;
    while left > 0 {
        let n = left.min(TURN);
        for (g, mocks) in groups.iter_mut().enumerate() {
            for o in mocks.iter_mut() {
                o.warm();
                (0..n).for_each(|_| o.launch());
            }
            after_group(g);
        }
        left -= n;
    }
}

/// Whether `got` (a run's buffers) holds what the case's Rust computes, or the first
/// word that differs. The matrix cases are left out: their kernels place results in
/// other elements than the Rust does (the WMMA tests check their values).
fn same_as_native(case: &Case, got: &[Vec<u32>]) -> Result<(), String> {
    let mut want = case.buffers.clone();
    (case.native)(&mut want);
    for (b, (g, w)) in got.iter().zip(&want).enumerate() {
        if let Some(i) = (0..w.len()).find(|&i| g.get(i) != Some(&w[i])) {
            return Err(format!(
                "buffer {b} word {i}: {:#x}, native Rust {:#x}",
                g.get(i).copied().unwrap_or(0),
                w[i]
            ));
        }
    }
    Ok(())
}

fn native(case: &Case) -> f64 {
    let mut bufs = case.buffers.clone();
    let mut times = Vec::new();
    // The matrix workload takes a second or so in Rust: as many runs as ours.
    let n = if case.macs.is_some() { MATRIX_RUNS } else { RUNS };
    for _ in 0..n {
        let t = Instant::now();
        (case.native)(black_box(&mut bufs));
        times.push(t.elapsed().as_secs_f64());
    }
    black_box(&bufs);
    median(&mut times)
}

/// Runs of each case on remu at the least (the fastest is the reference, as ours is);
/// one a round of [`take_turns`] when there are more rounds.
const REMU_RUNS: usize = 3;

/// A case set up for remu: its code from the kernel's entry, its buffers (remu reads
/// and writes host memory, so the kernel arguments hold these buffers' host
/// addresses) and its runs so far.
struct OnRemu {
    code: Vec<u32>,
    kernargs: Vec<u64>,
    /// Never resized once the kernel arguments point into them.
    bufs: Vec<Vec<u32>>,
    times: Vec<f64>,
    /// Why remu could not run the case, once it could not.
    failed: Option<String>,
}

impl OnRemu {
    fn new(case: &Case) -> Result<OnRemu, String> {
        let co = CodeObject::parse(case.elf).map_err(|e| e.to_string())?;
        let k = co.kernel(case.kernel).map_err(|e| e.to_string())?;
        let entry = (k.descriptor_offset as i64 + k.descriptor.entry_offset) as usize;
        let code: Vec<u32> = co.image[entry..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // The output buffers get slack past their end, as on the mock.
        let mut bufs: Vec<Vec<u32>> = case.buffers.iter().map(|b| [b.clone(), vec![0; 64]].concat()).collect();
        let mut kernargs = vec![0u8; (k.descriptor.kernarg_size as usize).max(64).next_multiple_of(8)];
        for (a, info) in case.args.iter().zip(&k.args) {
            let at = info.offset as usize;
            match a {
                Arg::Buf(i) => kernargs[at..at + 8].copy_from_slice(&(bufs[*i].as_mut_ptr() as u64).to_le_bytes()),
                Arg::U32(v) => kernargs[at..at + 4].copy_from_slice(&v.to_le_bytes()),
            }
        }
        let kernargs: Vec<u64> = kernargs
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        Ok(OnRemu {
            code,
            kernargs,
            bufs,
            times: Vec::new(),
            failed: None,
        })
    }

    /// One timed run, unless an earlier one failed.
    fn run(&mut self, r: &remu::Remu, case: &Case) {
        if self.failed.is_some() {
            return;
        }
        let t = Instant::now();
        let status = r.run(&self.code, case.grid, case.block, &self.kernargs);
        self.times.push(t.elapsed().as_secs_f64());
        black_box(&mut self.bufs);
        if status != 0 {
            self.failed = Some(format!("remu returned {status}"));
        }
    }

    /// Seconds for one launch on remu (the fastest run; remu's single runs swing by
    /// 15 % here), or why it could not run. A ratio only against runs that computed
    /// the case's values.
    fn secs(&self, case: &Case) -> Result<f64, String> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if case.macs.is_none() {
            same_as_native(case, &self.bufs).map_err(|e| format!("remu's result differs from native Rust: {e}"))?;
        }
        Ok(self.times.iter().copied().fold(f64::MAX, f64::min))
    }
}

/// The fixed cost of a workgroup (issue #36's "workgroup start"): a launch of 8,192
/// one-lane workgroups of an empty kernel against a launch of one, on one thread.
fn workgroup_start() {
    let case = |groups: u32| Case {
        name: "workgroup_start",
        elf: include_bytes!("../../../../tests/kernels/empty.hsaco"),
        kernel: "empty",
        grid: [groups, 1, 1],
        block: [1, 1, 1],
        buffers: vec![vec![0; 1]],
        args: vec![Arg::Buf(0)],
        macs: None,
        target: Target::Gfx1100,
        native: |_| {},
    };
    let (many, one) = (case(8192), case(1));
    let t = ours_each(&[(&many, Some(1)), (&one, Some(1))], runs());
    let (many, one) = (t[0].median, t[1].median);
    println!(
        "bench interp workgroup_start: {:.3} us a workgroup on 1 thread (8,192 one-lane workgroups of an empty kernel in {:.2} ms, less a one-workgroup launch's {:.3} ms; goal 0.2 us)",
        (many - one) / 8191.0 * 1e6,
        many * 1e3,
        one * 1e3,
    );
}

fn main() {
    common::host_state("before");
    let remu = std::env::var("REMU_LIB").ok().map(|p| remu::Remu::load(&p));
    if remu.is_none() {
        println!("(REMU_LIB not set: no remu ratio; build remu yourself and point REMU_LIB at libremu.so)");
    }
    let wanted: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if wanted.is_empty() || wanted.iter().any(|w| w == "workgroup_start") {
        workgroup_start();
    }
    let all = cases();
    let picked: Vec<&Case> = all
        .iter()
        .filter(|c| wanted.is_empty() || wanted.iter().any(|w| w == c.name))
        .collect();
    // Each matrix case's fastest one-thread launch, for its gfx1201 twin.
    let mut matrix_best: Vec<(&str, f64)> = Vec::new();
    for &case in picked.iter().filter(|c| c.macs.is_some()) {
        let best = matrix(case);
        let of = gfx1100_twin(case.name).and_then(|n| matrix_best.iter().find(|(m, _)| *m == n));
        if let Some(&(_, of)) = of {
            against_gfx1100(case.name, best, of, "s");
        }
        matrix_best.push((case.name, best));
    }
    // The other cases at 1, 2, 4, … threads up to the executor's default (the cores,
    // or HCQ_MOCK_THREADS), every case's counts and its remu runs taking turns: the
    // most threads give the case's rate, and each count is compared with one thread
    // in this run.
    let most = Rdna3Executor::default().threads.max(1);
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|&n| n < most)
        .collect();
    counts.push(most);
    let rated: Vec<&Case> = picked.into_iter().filter(|c| c.macs.is_none()).collect();
    let mut mocks: Vec<Vec<Ours>> = (rated.iter())
        .map(|&c| counts.iter().map(|&n| Ours::new(c, Some(n))).collect())
        .collect();
    let mut refs: Vec<Result<OnRemu, String>> = match &remu {
        Some(Ok(_)) => (rated.iter())
            .map(|&c| {
                if c.target != Target::Gfx1100 {
                    Err("remu runs RDNA3 code only".to_string())
                } else {
                    OnRemu::new(c)
                }
            })
            .collect(),
        Some(Err(e)) => rated.iter().map(|_| Err(e.clone())).collect(),
        None => Vec::new(),
    };
    let remu_run = |refs: &mut [Result<OnRemu, String>], g: usize| {
        if let (Some(Ok(r)), Some(Ok(on))) = (&remu, refs.get_mut(g)) {
            on.run(r, rated[g]);
        }
    };
    take_turns(&mut mocks, runs(), |g| remu_run(&mut refs, g));
    for g in 0..refs.len() {
        while matches!(&refs[g], Ok(on) if on.times.len() < REMU_RUNS && on.failed.is_none()) {
            remu_run(&mut refs, g);
        }
    }
    common::host_state("after");
    let timed: Vec<Vec<Timed>> = (mocks.into_iter())
        .map(|m| m.into_iter().map(Ours::timed).collect())
        .collect();
    let remus = refs.iter().map(Some).chain(std::iter::repeat(None));
    for ((&case, t), on_remu) in rated.iter().zip(&timed).zip(remus) {
        report(case, &counts, t, on_remu);
        // A gfx1201 or gfx942 case against its gfx1100 twin of the same run, fastest
        // launches.
        let twin = gfx1100_twin(case.name).and_then(|of| rated.iter().position(|c| c.name == of));
        if let Some(k) = twin {
            against_gfx1100(case.name, t[0].best, timed[k][0].best, "ms");
        }
    }
}

/// A gfx1201 or gfx942 case's fastest one-thread launch (`ours`, seconds) against its gfx1100
/// twin's of the same run, printed in `unit` ("s" or "ms").
fn against_gfx1100(name: &str, ours: f64, theirs: f64, unit: &str) {
    let scale = if unit == "ms" { 1e3 } else { 1.0 };
    println!(
        "bench interp {name} vs gfx1100: {:.3} {unit} on 1 thread ({:.2} × the gfx1100 build's {:.3} {unit}; fastest launches)",
        ours * scale,
        theirs / ours,
        theirs * scale
    );
}

/// A matrix workload: its time on one thread and on all, and its multiply-adds a
/// second against the same products in Rust. Returns its fastest launch on one thread.
fn matrix(case: &Case) -> f64 {
    let macs = case.macs.unwrap_or(0.0);
    let all_threads = Rdna3Executor::default().threads;
    let t = ours_each(&[(case, Some(1)), (case, None)], runs_or(MATRIX_RUNS));
    let (one, all) = (t[0].median, t[1].median);
    let nat = native(case);
    println!(
        "bench interp {}: {:.3} s on 1 thread (the fastest launch {:.3} s), {:.3} s on {all_threads} ({:.2} × 1 thread); {:.1} M multiply-adds/s on 1 thread ({:.4} × native Rust, {:.3} s)",
        case.name,
        one,
        t[0].best,
        all,
        one / all,
        macs / one / 1e6,
        nat / one,
        nat,
    );
    t[0].best
}

/// Prints a case's figures: its rate on the most threads against native Rust, each
/// thread count against one thread, and remu against one thread and the most.
fn report(case: &Case, counts: &[usize], timed: &[Timed], on_remu: Option<&Result<OnRemu, String>>) {
    let (one, best_one) = (timed[0].median, timed[0].best);
    let most = *counts.last().expect("one count at least");
    let Timed {
        median: secs,
        best: best_all,
        lanes,
        insts,
    } = *timed.last().expect("one count at least");
    let rate = lanes as f64 / secs;
    let nat = native(case);
    println!(
        "bench interp {}: {:.1} M lane-instr/s ({:.2} M wave-instr/s, {} lane-instr per launch, {:.2} ms, {most} threads) ({:.4} × native Rust)",
        case.name,
        rate / 1e6,
        insts as f64 / secs / 1e6,
        lanes,
        secs * 1e3,
        nat / secs,
    );
    let parts: Vec<String> = (counts.iter().zip(timed))
        .map(|(&n, t)| {
            format!(
                "{n}: {:.2} ms ({:.2} × 1 thread, {:.2} × {n})",
                t.median * 1e3,
                one / t.median,
                one / t.median / n as f64
            )
        })
        .collect();
    // The fastest launches too: the machine's other load only adds time, so these
    // are the counts' own costs where a stretch of that load took the medians.
    let fastest: Vec<String> = (counts.iter().zip(timed).skip(1))
        .map(|(&n, t)| format!("{n}: {:.2} × {n}", best_one / t.best / n as f64))
        .collect();
    println!(
        "bench interp {} threads: {} (medians; the counts' launches take turns; the fastest launches: {})",
        case.name,
        parts.join("; "),
        if fastest.is_empty() {
            "one count".to_string()
        } else {
            fastest.join(", ")
        }
    );
    let Some(on_remu) = on_remu else { return };
    let secs_runs = (on_remu.as_ref().map_err(Clone::clone)).and_then(|on| Ok((on.secs(case)?, on.times.len())));
    match secs_runs {
        // Fastest against fastest: the machine's other load only adds time.
        Ok((t, n)) => println!(
            "bench interp {} vs remu: {:.2} ms on remu ({:.1} × remu on one thread, {:.1} × on {most}; the fastest of {n} remu runs and of {} of ours, taking turns with the other cases)",
            case.name,
            t * 1e3,
            t / best_one,
            t / best_all,
            runs()
        ),
        Err(e) => println!("bench interp {} vs remu: not measured: {e}", case.name),
    }
}
