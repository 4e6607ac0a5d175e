//! The mock's engines: SDMA copy bandwidth against `memcpy` on the same buffers, the
//! same copy into a buffer just allocated against one already used, and
//! doorbell-to-signal latency of a one-packet PM4 submission against a thread wake-up
//! round trip, and of a one-packet AQL submission (a barrier-AND whose completion
//! signal the host waits for) against the PM4 one, all measured in the same run.
//!
//! `cargo xtask bench engines`. Lines: `bench <name>: <value> <unit> (<ratio> × <reference>)`,
//! and `bench host_state before:`/`after:` as the runtime's benches print them.

// The host-state loop the runtime's benches print, the same file.
#[path = "../../amd-hcq/benches/common/host.rs"]
mod host;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use amd_kfd::topology::Visibility;
use amd_kfd::{Kfd, KfdDevice, KfdMemory, KfdQueue, MemoryKind, QueueKind};
use amd_mockgpu::{ExecMode, MockConfig, MockSys};
use amd_packets::GfxTarget;
use amd_packets::pm4::ReleaseMem;
use amd_packets::sdma::{CopyLinear, Fence};

const T: GfxTarget = GfxTarget::Gfx11;

struct Ring {
    q: KfdQueue,
    put: u64,
    bytes: u64,
}

impl Ring {
    /// A 64 KiB ring of `kind` on `dev`.
    fn new(dev: &KfdDevice, kind: QueueKind) -> Ring {
        const BYTES: usize = 1 << 16;
        Ring {
            q: dev.create_queue(kind, BYTES).expect("queue"),
            put: 0,
            bytes: BYTES as u64,
        }
    }

    /// Copies `size` bytes from `src` to `dst` with SDMA, then fences `value` into
    /// `sig`; returns the seconds from submission to the fence.
    fn copy(&mut self, dst: &KfdMemory, src: &KfdMemory, size: usize, sig: &KfdMemory, value: u32) -> f64 {
        let mut words = Vec::new();
        CopyLinear::encode_split(T, dst.va() as u64, src.va() as u64, size as u64, &mut words).expect("split");
        Fence::new(sig.va() as u64, value).encode(T, &mut words);
        let t = Instant::now();
        self.submit(&words);
        while signal(sig).load(Ordering::Acquire) != value {
            std::hint::spin_loop();
        }
        t.elapsed().as_secs_f64()
    }

    fn submit(&mut self, words: &[u32]) {
        let sdma = self.q.kind() == QueueKind::Sdma;
        let mut pos = if sdma { self.put / 4 } else { self.put };
        for &w in words {
            let at = (pos % (self.bytes / 4)) as usize * 4;
            // The ring is CPU-visible memory of the queue; the offset is inside it.
            self.q.ring().write(at, &w.to_le_bytes()).expect("ring write");
            pos += 1;
        }
        self.put = if sdma { pos * 4 } else { pos };
        self.q.submit(self.put);
    }
}

/// The first GPU of a mock of `config`, opened through the KFD transport (the `Kfd`
/// keeps `/dev/kfd` open).
fn mock_gpu(config: MockConfig) -> (Kfd, KfdDevice) {
    let kfd = Kfd::open_with(Arc::new(MockSys::new(config)), &Visibility::all()).expect("mock KFD");
    let dev = kfd.device(0).expect("mock GPU");
    (kfd, dev)
}

/// The signal dword, read as the CPU polls it.
fn signal(mem: &KfdMemory) -> &AtomicU32 {
    // SAFETY: the buffer is a live, CPU-visible, 4096-byte mapping owned by `mem` for
    // the reference's lifetime, page aligned; the engine writes it atomically.
    unsafe { &*(mem.va() as *const AtomicU32) }
}

fn copy_bandwidth() {
    let (_kfd, dev) = mock_gpu(MockConfig::default());
    let size = 64usize << 20;
    let src = dev.alloc(size, MemoryKind::HOST).expect("src");
    let dst = dev.alloc(size, MemoryKind::DEVICE_CPU_VISIBLE).expect("dst");
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).expect("signal");
    let pattern: Vec<u8> = (0..size).map(|i| (i * 31 + 7) as u8).collect();
    src.write(0, &pattern).expect("fill src");
    dst.write(0, &pattern).expect("touch dst");
    let mut ring = Ring::new(&dev, QueueKind::Sdma);

    let mut best_memcpy = f64::MAX;
    let mut best_sdma = f64::MAX;
    for round in 1..=7u32 {
        let t = Instant::now();
        // SAFETY: both are live mappings of `size` bytes owned by `src`/`dst`, which
        // do not overlap, and no engine touches them between submissions.
        unsafe { std::ptr::copy_nonoverlapping(src.va() as *const u8, dst.va() as *mut u8, size) };
        best_memcpy = best_memcpy.min(t.elapsed().as_secs_f64());

        best_sdma = best_sdma.min(ring.copy(&dst, &src, size, &sig, round));
    }
    let gbs = |s: f64| size as f64 / s / 1e9;
    println!(
        "bench sdma_copy_64mib: {:.2} GB/s ({:.2} × memcpy on the same buffers, {:.2} GB/s)",
        gbs(best_sdma),
        best_memcpy / best_sdma,
        gbs(best_memcpy)
    );
}

/// Median time for a thread to wake another through a condvar and be woken back.
fn wake_round_trip(iters: usize) -> f64 {
    let pair = Arc::new((Mutex::new(0u64), Condvar::new()));
    let p2 = pair.clone();
    let echo = std::thread::spawn(move || {
        let (m, c) = &*p2;
        let mut seen = 0;
        loop {
            let mut g = m.lock().expect("lock");
            while *g == seen {
                g = c.wait(g).expect("wait");
            }
            if *g == u64::MAX {
                return;
            }
            *g += 1;
            seen = *g;
            c.notify_all();
        }
    });
    let (m, c) = &*pair;
    let mut times = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        let mut g = m.lock().expect("lock");
        *g += 1;
        let want = *g + 1;
        c.notify_all();
        while *g != want {
            g = c.wait(g).expect("wait");
        }
        times.push(t.elapsed().as_secs_f64());
    }
    *m.lock().expect("lock") = u64::MAX;
    c.notify_all();
    echo.join().expect("echo thread");
    median(&mut times)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn latency(mode: ExecMode, iters: usize) -> f64 {
    latency_after(mode, iters, Duration::ZERO)
}

/// [`latency`] with the engine left idle for `pause` (the host thread busy) before each
/// submission.
fn latency_after(mode: ExecMode, iters: usize, pause: Duration) -> f64 {
    let (_kfd, dev) = mock_gpu(MockConfig {
        mode,
        ..MockConfig::default()
    });
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).expect("signal");
    let mut ring = Ring::new(&dev, QueueKind::Compute);
    let mut times = Vec::with_capacity(iters);
    let mut words = Vec::with_capacity(8);
    for i in 1..=iters as u32 {
        words.clear();
        ReleaseMem::new(sig.va() as u64, amd_packets::pm4::DataSel::Data32)
            .data(i as u64)
            .encode(T, &mut words);
        let idle = Instant::now();
        while idle.elapsed() < pause {
            std::hint::spin_loop();
        }
        let t = Instant::now();
        ring.submit(&words);
        while signal(&sig).load(Ordering::Acquire) != i {
            std::hint::spin_loop();
        }
        times.push(t.elapsed().as_secs_f64());
    }
    median(&mut times)
}

/// Median doorbell-to-completion-signal time of one AQL packet: a barrier-AND with no
/// dependencies whose `amd_signal_t` the host spins on.
fn aql_latency(mode: ExecMode, iters: usize) -> f64 {
    use amd_packets::aql::{Barrier, FenceScope, Header, PACKET_BYTES, PacketType};
    let (_kfd, dev) = mock_gpu(MockConfig {
        mode,
        ..MockConfig::default()
    });
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).expect("signal");
    let q = dev.create_queue(QueueKind::ComputeAql, 1 << 16).expect("AQL queue");
    // SAFETY: `value` of the amd_signal_t at the start of the live, page-aligned,
    // CPU-visible buffer `sig` owns; the engine decrements it atomically.
    let value = unsafe { &*((sig.va() + 8) as *const AtomicU64) };
    let slots = (q.ring_size() / PACKET_BYTES) as u64;
    let packet = Barrier {
        header: Header::new(PacketType::BarrierAnd).barrier().fences(FenceScope::System),
        dep_signals: [0; 5],
        completion_signal: sig.va() as u64,
    }
    .to_dwords();
    let bytes: Vec<u8> = packet.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut times = Vec::with_capacity(iters);
    for i in 0..iters as u64 {
        value.store(1, Ordering::Release);
        q.ring()
            .write(((i % slots) as usize) * PACKET_BYTES, &bytes)
            .expect("ring write");
        let t = Instant::now();
        q.submit(i + 1);
        while value.load(Ordering::Acquire) != 0 {
            std::hint::spin_loop();
        }
        times.push(t.elapsed().as_secs_f64());
    }
    median(&mut times)
}

/// Median time to create and destroy a compute queue (its ring, EOP buffer and
/// context-save area allocated and freed with it) against the same for an SDMA queue
/// (a ring and no context-save area), in the same run.
fn queue_creation(iters: usize) {
    let (_kfd, dev) = mock_gpu(MockConfig::default());
    let time = |kind: QueueKind| {
        let mut times = Vec::with_capacity(iters);
        for _ in 0..iters {
            let t = Instant::now();
            drop(dev.create_queue(kind, 1 << 16).expect("queue"));
            times.push(t.elapsed().as_secs_f64());
        }
        median(&mut times)
    };
    let (compute, sdma) = (time(QueueKind::Compute), time(QueueKind::Sdma));
    println!(
        "bench compute_queue_creation: {:.2} ms median ({:.1} × an SDMA queue's {:.3} ms; goal 1 ms)",
        compute * 1e3,
        compute / sdma,
        sdma * 1e3
    );
}

/// An SDMA copy into a buffer just allocated (its pages not yet touched) against the
/// same copy into it once used.
fn cold_copy() {
    let (_kfd, dev) = mock_gpu(MockConfig::default());
    let size = 256usize << 20;
    let src = dev.alloc(size, MemoryKind::HOST).expect("src");
    src.write(0, &vec![0x5au8; size]).expect("fill src");
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).expect("signal");
    let mut ring = Ring::new(&dev, QueueKind::Sdma);
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for round in 0..3u32 {
        let dst = dev.alloc(size, MemoryKind::DEVICE_CPU_VISIBLE).expect("dst");
        for (k, times) in [&mut cold, &mut warm].into_iter().enumerate() {
            let value = round * 2 + k as u32 + 1;
            times.push(ring.copy(&dst, &src, size, &sig, value));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (c, w) = (median(&mut cold), median(&mut warm));
    let gbs = |s: f64| size as f64 / s / 1e9;
    println!(
        "bench sdma_copy_into_fresh_256mib: {:.2} GB/s ({:.2} × the same copy into the buffer once used, {:.2} GB/s; goal 1.0)",
        gbs(c),
        w / c,
        gbs(w)
    );
}

fn main() {
    host::host_state("before");
    queue_creation(20);
    copy_bandwidth();
    cold_copy();
    let wake = wake_round_trip(2000);
    for (mode, name, goal) in [
        (ExecMode::Threaded, "threaded", 20.0),
        (ExecMode::Inline, "inline", 2.0),
    ] {
        let l = latency(mode, 2000);
        println!(
            "bench doorbell_to_signal_{name}: {:.2} us median ({:.2} × a thread wake-up round trip, {:.2} us; goal {goal} us)",
            l * 1e6,
            l / wake,
            wake * 1e6
        );
        if mode == ExecMode::Threaded {
            let pause = Duration::from_micros(50);
            let idle = latency_after(mode, 2000, pause);
            println!(
                "bench doorbell_to_signal_idle_{name}: {:.2} us median, the engine idle {} us before each ({:.2} × back to back; goal 1 us)",
                idle * 1e6,
                pause.as_micros(),
                idle / l
            );
        }
        let a = aql_latency(mode, 2000);
        println!(
            "bench aql_doorbell_to_signal_{name}: {:.2} us median ({:.2} × the PM4 submission's {:.2} us)",
            a * 1e6,
            a / l,
            l * 1e6
        );
    }
    host::host_state("after");
}
