//! The CPU cost of replaying a graph, on the mock GPU (threaded: the engines consume
//! off the caller's thread), against launching the same kernels one by one in the same
//! run.
//!
//! `cargo xtask bench graph`. Lines: `bench <name>: <value> <unit> (<ratio> × <reference>)`.
//!
//! Two graphs of 11 vadd launches with 5 values changed at every replay: `wide`, where
//! the input, output and scratch buffers and two element counts are used by every
//! launch, and `narrow`, where each value is used by one launch (as a model's input,
//! output and a parameter are). Grid sizes follow the counts; each line says how many
//! sites a replay evaluates. Each replay's figure is also given against a fixed loop of
//! host work timed the same way (`reference_loop_*`), which shows how fast the machine
//! was in that run. `HCQ_BENCH_RUNS` sets the timed replays per case (2000; fewer to
//! count instructions under callgrind, `--toggle-collect='*BoundGraph*replay*'`: each
//! graph is replayed four times that many, the reference loop's phase included);
//! `HCQ_BENCH_ONLY=wide` or `narrow` replays that graph only.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use amd_kfd::sys::{ForwardSys, Sys};

use amd_hcq::{
    Bindings, BoundGraph, Buffer, BufferKind, Device, Graph, Iface, KernArgs, Platform, Program, Sym, SymDims, Var,
};
use amd_mockgpu::{MockConfig, MockSys};

mod common;

use common::{VADD, median};

/// The mock, with the time its doorbell hook takes counted in `hook_ns`: that hook is
/// the mock's engine wake-up (a store to a doorbell is all hardware needs), so replay
/// time minus hook time is what the runtime itself spends.
struct TimedSys {
    mock: Arc<MockSys>,
    hook_ns: Arc<AtomicU64>,
    /// The mock with its doorbell hook timed, for the platform.
    sys: Arc<dyn Sys>,
}

impl TimedSys {
    fn new(mock: Arc<MockSys>) -> Self {
        let hook_ns = Arc::new(AtomicU64::new(0));
        let counted = hook_ns.clone();
        let sys = ForwardSys::new(mock.clone()).on_doorbell_written(move |mock, addr| {
            let t = Instant::now();
            mock.doorbell_written(addr);
            // Relaxed: read by the same thread after the submission returns.
            counted.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        });
        TimedSys {
            mock,
            hook_ns,
            sys: Arc::new(sys),
        }
    }
}

/// Timed replays (and sets of launches) per case, unless `HCQ_BENCH_RUNS` says otherwise.
fn runs() -> usize {
    std::env::var("HCQ_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(2000)
}

struct Setup {
    dev: Device,
    prg: Program,
    bufs: Vec<Buffer>,
}

fn dims(n: &Var) -> SymDims {
    SymDims::new([(Sym::from(n) + 255u32) / 256u32, 1.into(), 1.into()], [256, 1, 1])
}

/// Values for replay `i`: buffers rotate (over 7, so each of the 4 bound copies sees
/// new addresses at every run it makes), counts change.
fn values(s: &Setup, vars: &[Var; 5], i: usize, out: &mut Bindings) {
    let k = s.bufs.len();
    out.buffer(&vars[0], &s.bufs[i % k])
        .buffer(&vars[1], &s.bufs[(i + 1) % k])
        .buffer(&vars[2], &s.bufs[(i + 2) % k])
        .set(&vars[3], 64 + (i % 64) as u64)
        .set(&vars[4], 32 + (i % 32) as u64);
}

/// The same 11 launches, built and submitted one by one (never inlined: `cargo xtask
/// bench-count` counts inside it).
#[inline(never)]
fn one_by_one(s: &Setup, i: usize) {
    let k = s.bufs.len();
    let (a, out, tmp) = (&s.bufs[i % k], &s.bufs[(i + 1) % k], &s.bufs[(i + 2) % k]);
    let (n, m) = (64 + (i % 64) as u32, 32 + (i % 32) as u32);
    let d = |c: u32| SymDims::new([c.div_ceil(256), 1, 1], [256, 1, 1]);
    s.prg
        .enqueue(&KernArgs::new().buffer(a).buffer(a).buffer(tmp).u32(n), d(n))
        .expect("launch");
    for _ in 0..9 {
        s.prg
            .enqueue(&KernArgs::new().buffer(tmp).buffer(a).buffer(tmp).u32(n), d(n))
            .expect("launch");
    }
    s.prg
        .enqueue(&KernArgs::new().buffer(tmp).buffer(tmp).buffer(out).u32(m), d(m))
        .expect("launch");
}

/// The replays compute what they should: out = 22 × input on the first m elements.
fn check(s: &Setup, graph: &amd_hcq::BoundGraph, vars: &[Var; 5]) {
    let input: Vec<f32> = (0..1024).map(|i| (i % 97) as f32).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
    s.dev.copy_in(&s.bufs[0], 0, &bytes).expect("copy in");
    let mut vals = Bindings::new();
    values(s, vars, 0, &mut vals);
    graph.replay(&vals).expect("replay");
    graph.synchronize().expect("synchronize");
    let mut out = vec![0u8; 32 * 4];
    s.dev.copy_out(&mut out, &s.bufs[1], 0).expect("copy out");
    for (i, c) in out.chunks(4).enumerate() {
        let got = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        assert_eq!(got, 22.0 * input[i], "element {i} of the graph's output");
    }
}

/// Replay times of a graph: medians in seconds, with engines idle (each replay after
/// the previous one finished and the engine thread went back to sleep; the host thread
/// busy between replays, as a training loop's is), the same with the host thread
/// asleep between replays (its own wake-up — cold caches, a core leaving its idle
/// state — counts then), and busy (bursts of replays, fewer than the bound copies,
/// while the engines run earlier ones); `own` leaves out the mock's doorbell hook.
/// `reference` is a fixed loop of host work timed as the idle replays are (after a
/// replay finished and the same pause): how fast this machine was during the run.
struct Timings {
    reference: f64,
    /// What timing adds to an idle replay's time without the hook: the stopwatch
    /// around it and the hook's own.
    timer: f64,
    idle: f64,
    idle_own: f64,
    slept: f64,
    slept_own: f64,
    busy: f64,
    busy_own: f64,
}

/// A fixed piece of host work (400 dependent multiply-adds over a 4 KiB table, about
/// 2,000 instructions), the reference the replays are measured against.
fn reference_work(seed: u64, table: &[u64]) -> u64 {
    let mut x = seed;
    for k in 0..400usize {
        let at = ((x >> 40) as usize + k) % table.len();
        x = x.wrapping_mul(6364136223846793005).wrapping_add(table[at]);
    }
    x
}

/// Keeps the thread busy for `d` (the host's own work between two steps).
fn spin_for(d: std::time::Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

fn measure(graph: &BoundGraph, sys: &TimedSys, mut set: impl FnMut(usize, &mut Bindings)) -> Timings {
    let iters = runs();
    let hook = || sys.hook_ns.load(Ordering::Relaxed) as f64 * 1e-9;
    let mut vals = Bindings::new();
    let table: Vec<u64> = (0..512u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let mut reference = Vec::with_capacity(iters);
    for i in 0..iters {
        set(i, &mut vals);
        graph.replay(&vals).expect("replay");
        graph.synchronize().expect("synchronize");
        spin_for(std::time::Duration::from_micros(50));
        let t = Instant::now();
        std::hint::black_box(reference_work(std::hint::black_box(i as u64), &table));
        reference.push(t.elapsed().as_secs_f64());
    }
    let mut timed = |i: usize, total: &mut Vec<f64>, own: &mut Vec<f64>| {
        set(i, &mut vals);
        let h = hook();
        let t = Instant::now();
        graph.replay(&vals).expect("replay");
        let e = t.elapsed().as_secs_f64();
        total.push(e);
        own.push(e - (hook() - h));
    };
    let (mut idle, mut idle_own, mut busy, mut busy_own) = (vec![], vec![], vec![], vec![]);
    let (mut slept, mut slept_own) = (vec![], vec![]);
    let pause = std::time::Duration::from_micros(50);
    let mut timer = Vec::with_capacity(iters);
    for i in 0..iters {
        timed(i, &mut idle, &mut idle_own);
        graph.synchronize().expect("synchronize");
        spin_for(pause);
        // The stopwatch around a hook timed as `TimedSys` times it, with nothing in
        // either, in the same state: what timing adds to `idle_own`.
        let h = hook();
        let t = Instant::now();
        let inner = Instant::now();
        std::hint::black_box(&sys.mock);
        sys.hook_ns
            .fetch_add(inner.elapsed().as_nanos() as u64, Ordering::Relaxed);
        timer.push(t.elapsed().as_secs_f64() - (hook() - h));
        spin_for(pause);
    }
    for i in 0..iters {
        timed(i, &mut slept, &mut slept_own);
        graph.synchronize().expect("synchronize");
        std::thread::sleep(pause);
    }
    let mut i = 0;
    while busy.len() < iters {
        for _ in 0..amd_hcq::DEFAULT_COPIES - 1 {
            timed(i, &mut busy, &mut busy_own);
            i += 1;
        }
        graph.synchronize().expect("synchronize");
    }
    Timings {
        reference: median(&mut reference),
        timer: median(&mut timer),
        idle: median(&mut idle),
        idle_own: median(&mut idle_own),
        slept: median(&mut slept),
        slept_own: median(&mut slept_own),
        busy: median(&mut busy),
        busy_own: median(&mut busy_own),
    }
}

fn report(what: &str, graph: &BoundGraph, t: &Timings, single: f64) {
    for (engines, total, own, goal) in [
        ("idle", t.idle, t.idle_own, "; goal 0.5 us"),
        ("busy", t.busy, t.busy_own, "; goal 0.5 us"),
        ("idle_host_slept", t.slept, t.slept_own, ""),
    ] {
        println!(
            "bench graph_replay_{what}_{engines}: {:.2} us median, {:.2} us without the mock's doorbell hook, {} sites ({:.3} × launching them one by one, {:.2} us; {:.2} × the reference loop{goal})",
            total * 1e6,
            own * 1e6,
            graph.sites(),
            own / single,
            single * 1e6,
            own / t.reference,
        );
    }
    println!(
        "bench reference_loop_{what}: {:.2} us median for 400 dependent multiply-adds, timed as the idle replays are (this machine's speed in this run)",
        t.reference * 1e6
    );
    println!(
        "bench timer_{what}: {:.3} us median for the stopwatch and the hook's timing around nothing, after the same pause (included in each figure without the hook)",
        t.timer * 1e6
    );
}

fn main() {
    common::host_state("before");
    let sys = TimedSys::new(Arc::new(MockSys::new(MockConfig::default())));
    let p = Platform::with_sys(sys.sys.clone(), Iface::Mock).expect("mock platform");
    let dev = p.device(0).expect("mock GPU");
    let prg = Program::load(&dev, VADD, "vadd").expect("vadd");
    let bufs = (0..7)
        .map(|_| dev.alloc(4096, BufferKind::Device).expect("buffer"))
        .collect();
    let s = Setup { dev, prg, bufs };

    // The same launches one by one (engines idle at the start of each set).
    let iters = runs();
    let mut single = Vec::with_capacity(iters);
    for i in 0..iters {
        let t = Instant::now();
        one_by_one(&s, i);
        single.push(t.elapsed().as_secs_f64());
        s.dev.synchronize().expect("synchronize");
    }
    let single = median(&mut single);

    // Every value used by every launch: 59 sites change at each replay.
    let vars = ["input", "output", "tmp", "n", "m"].map(Var::new);
    let (a, out, tmp, n, mm) = (&vars[0], &vars[1], &vars[2], &vars[3], &vars[4]);
    let mut g = Graph::new();
    let first = KernArgs::new().buffer_sym(a).buffer_sym(a).buffer_sym(tmp).sym_u32(n);
    g.exec(&s.prg, &first, dims(n), &[]).expect("record");
    for _ in 0..9 {
        let mid = KernArgs::new().buffer_sym(tmp).buffer_sym(a).buffer_sym(tmp).sym_u32(n);
        g.exec(&s.prg, &mid, dims(n), &[]).expect("record");
    }
    let last = KernArgs::new()
        .buffer_sym(tmp)
        .buffer_sym(tmp)
        .buffer_sym(out)
        .sym_u32(mm);
    g.exec(&s.prg, &last, dims(mm), &[]).expect("record");
    let graph = g.bind().expect("bind");
    let only = std::env::var("HCQ_BENCH_ONLY").ok();
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let wide = wanted("wide").then(|| measure(&graph, &sys, |i, vals| values(&s, &vars, i, vals)));
    if let Some(wide) = &wide {
        check(&s, &graph, &vars);
        report("wide", &graph, wide, single);
    }

    // Each of the 5 values used by one launch, as a model's input, output and a
    // parameter are.
    let lvars = ["input", "output", "n", "m", "b"].map(Var::new);
    let (input, output, ln, lm, b) = (&lvars[0], &lvars[1], &lvars[2], &lvars[3], &lvars[4]);
    let (t, c) = (&s.bufs[5], &s.bufs[6]);
    let fixed = SymDims::new([1, 1, 1], [256, 1, 1]);
    let mut g = Graph::new();
    let first = KernArgs::new()
        .buffer_sym(input)
        .buffer_sym(input)
        .buffer(t)
        .sym_u32(ln);
    g.exec(&s.prg, &first, dims(ln), &[]).expect("record");
    for k in 0..9 {
        let mid = if k == 4 {
            KernArgs::new().buffer(t).buffer_sym(b).buffer(t).u32(64)
        } else {
            KernArgs::new().buffer(t).buffer(c).buffer(t).u32(64)
        };
        g.exec(&s.prg, &mid, fixed.clone(), &[]).expect("record");
    }
    let last = KernArgs::new().buffer(t).buffer(t).buffer_sym(output).sym_u32(lm);
    g.exec(&s.prg, &last, dims(lm), &[]).expect("record");
    let lgraph = g.bind().expect("bind");
    if !wanted("narrow") {
        return;
    }
    let narrow = measure(&lgraph, &sys, |i, vals| {
        // Over 5 buffers: each bound copy sees new addresses at every run.
        vals.buffer(input, &s.bufs[i % 5])
            .buffer(output, &s.bufs[(i + 1) % 5])
            .buffer(b, &s.bufs[(i + 2) % 5])
            .set(ln, 64 + (i % 64) as u64)
            .set(lm, 32 + (i % 32) as u64);
    });
    report("narrow", &lgraph, &narrow, single);
    let Some(wide) = wide else { return };

    // The floor under any submission on the mock: one packet through the ring and its
    // doorbell, engines idle (waking the mock's engine thread is part of it).
    let sig = s.dev.new_signal(1).expect("signal");
    let mut q = s.dev.compute_queue();
    q.wait(&sig, 1);
    let mut doorbell = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        s.dev.submit_compute(&q).expect("submit");
        doorbell.push(t.elapsed().as_secs_f64());
        s.dev.synchronize().expect("synchronize");
        spin_for(std::time::Duration::from_micros(50));
    }
    let doorbell = median(&mut doorbell);
    println!(
        "bench ring_doorbell_idle: {:.2} us median for one packet through the ring, engines idle (the mock's wake-up; {:.3} × a wide replay)",
        doorbell * 1e6,
        doorbell / wide.idle
    );
    // The same after the engines went to sleep: idle for longer than they poll (10 × that, at least 1 ms).
    let pause = (MockConfig::default().idle_poll * 10).max(std::time::Duration::from_millis(1));
    let mut asleep = Vec::with_capacity(iters.min(500));
    for _ in 0..iters.min(500) {
        let t = Instant::now();
        s.dev.submit_compute(&q).expect("submit");
        asleep.push(t.elapsed().as_secs_f64());
        s.dev.synchronize().expect("synchronize");
        std::thread::sleep(pause);
    }
    let asleep = median(&mut asleep);
    println!(
        "bench ring_doorbell_asleep: {:.2} us median for the same packet after {} us idle, past the engines' idle poll ({:.1} × the idle figure: waking the engine's thread)",
        asleep * 1e6,
        pause.as_micros(),
        asleep / doorbell
    );

    // Throughput with no host wait: replays pipelined through the bound copies,
    // against the same launches one by one.
    let reps = runs();
    let mut vals = Bindings::new();
    let t = Instant::now();
    for i in 0..reps {
        values(&s, &vars, i, &mut vals);
        graph.replay(&vals).expect("replay");
    }
    graph.synchronize().expect("synchronize");
    let pipelined = reps as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for i in 0..reps {
        one_by_one(&s, i);
    }
    s.dev.synchronize().expect("synchronize");
    let sequential = reps as f64 / t.elapsed().as_secs_f64();
    check(&s, &graph, &vars);
    println!(
        "bench graph_replays_per_second: {:.0} /s pipelined, no host wait ({:.2} × the same launches one by one, {:.0} sets/s)",
        pipelined,
        pipelined / sequential,
        sequential
    );
    common::host_state("after");
}
