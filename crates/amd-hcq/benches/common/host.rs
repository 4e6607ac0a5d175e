//! The host's state as benchmarks print it: a fixed loop timed on every CPU at once,
//! and a cache line's round trip between two CPUs (the benchmarks' only unsafe code besides the interp bench's remu loader: the
//! affinity calls).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Iterations of [`host_state`]'s loop (14 ms on the 2-core EPYC machine the docs'
/// figures come from at full speed, 27 ms slowed).
const HOST_LOOP: u64 = 50_000_000;

/// Prints how long a fixed integer loop takes on each CPU this process may use, all at
/// once (a thread pinned to each; at most 64 CPUs), and against the fastest of them: a
/// host that shares or throttles CPUs shows them slower than the others, or than in
/// another run; then the round trip of one cache line between the first two CPUs
/// ([`round_trip`]). Benchmarks print it before and after their figures, so that a
/// run the host slowed can be told from one the code did.
pub fn host_state(when: &str) {
    let cpus = allowed_cpus();
    let times: Vec<f64> = std::thread::scope(|s| {
        let threads: Vec<_> = (cpus.iter())
            .map(|&cpu| {
                s.spawn(move || {
                    pin_to(cpu);
                    let t = Instant::now();
                    let mut x = 0u64;
                    for i in 0..HOST_LOOP {
                        x = black_box(x.wrapping_add(i));
                    }
                    black_box(x);
                    t.elapsed().as_secs_f64()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().expect("host loop")).collect()
    });
    let fastest = times.iter().copied().fold(f64::MAX, f64::min);
    let each: Vec<String> = (cpus.iter().zip(&times))
        .map(|(c, t)| format!("CPU {c} {:.1} ms ({:.2} ×)", t * 1e3, t / fastest))
        .collect();
    let trip = match cpus[..] {
        [a, b, ..] => format!(
            "; a cache line between CPUs {a} and {b} and back: {:.0} ns",
            round_trip(a, b) * 1e9
        ),
        _ => String::new(),
    };
    println!(
        "bench host_state {when}: {}M additions on every CPU at once: {} (against the fastest CPU; a CPU above the others, or all above another run's, ran slowed by the host){trip}",
        HOST_LOOP / 1_000_000,
        each.join(", ")
    );
}

/// Round trips of one cache line between two threads pinned to CPUs `a` and `b`, each
/// waiting for the other's store: the median of 21 batches of 10,000, in seconds a
/// trip. Where the host places the two vCPUs (cores sharing a cache, or not) shows
/// here, and in every figure that crosses between the client's thread and the
/// engine's.
fn round_trip(a: usize, b: usize) -> f64 {
    const TRIPS: u64 = 10_000;
    let line = AtomicU64::new(0);
    let line = &line;
    // Two threads of their own: the caller's CPUs stay as they were.
    std::thread::scope(|s| {
        s.spawn(move || {
            pin_to(b);
            // Answers each odd value with the next even one until told to stop.
            loop {
                let v = line.load(Ordering::Acquire);
                if v == u64::MAX {
                    return;
                }
                if v % 2 == 1 {
                    line.store(v + 1, Ordering::Release);
                }
                std::hint::spin_loop();
            }
        });
        let timer = s.spawn(move || {
            pin_to(a);
            let mut batches = Vec::with_capacity(21);
            let mut v = 0;
            for _ in 0..21 {
                let t = Instant::now();
                for _ in 0..TRIPS {
                    line.store(v + 1, Ordering::Release);
                    while line.load(Ordering::Acquire) != v + 2 {
                        std::hint::spin_loop();
                    }
                    v += 2;
                }
                batches.push(t.elapsed().as_secs_f64() / TRIPS as f64);
            }
            line.store(u64::MAX, Ordering::Release);
            batches.sort_by(f64::total_cmp);
            batches[batches.len() / 2]
        });
        timer.join().expect("round trip")
    })
}

/// The CPUs this process may run on (the first 64).
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills at most
    // its size, and CPU_ISSET reads bits below CPU_SETSIZE of it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .take(64)
            .collect()
    }
}

/// Keeps the calling thread on CPU `cpu` (nothing happens where the system refuses).
fn pin_to(cpu: usize) {
    // SAFETY: as in `allowed_cpus`: a valid set, bits below CPU_SETSIZE (`cpu` came from
    // such a set).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}
