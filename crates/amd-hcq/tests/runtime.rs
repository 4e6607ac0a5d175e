//! The runtime on the mock GPU, over both transports (the real KFD transport on the
//! mock's `/dev/kfd`, the driverless one on its PCI GPUs) and both targets (gfx1100,
//! gfx1201) from the same test code;
//! the few tests that steer the KFD mock's queues stay KFD-only.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use amd_hcq::{
    Bindings, BufferKind, Device, Graph, HcqError, KernArgs, LaunchDims, Program, Sym, TIMELINE_WRAP, Var, Work,
};
use common::{Transport, VADD, pattern, platform};

on_every_queue_and_target!(
    misuse_of_lists_and_graphs_names_the_values,
    opens_a_device_with_its_properties,
    signals_across_queues_and_devices,
    ordered_work_and_the_timeline_wrap,
    copies_of_every_size_class,
    peer_transfers_respect_both_timelines,
    a_hang_reports_the_fault,
    many_threads_submitting,
    dropping_with_work_in_flight_releases_everything,
    profiling_records_launches_and_copies_in_order,
    bound_lists_replay_and_patch,
    bound_copy_lists_replay_and_patch,
    dropped_signals_wait_for_the_work_that_writes_them,
    signals_dropped_and_made_by_many_threads,
    lists_sent_outside_the_timeline_hold_what_they_use,
    memory_mapped_on_a_peer_waits_for_the_peers_work,
    ordered_submissions_are_built_before_any_lock,
    ordered_submissions_are_sent_as_built,
);

fn opens_a_device_with_its_properties(t: Transport) {
    let (_m, p) = platform(t, 1);
    assert_eq!(p.device_count(), 1);
    let dev = p.device(0).unwrap();
    let props = dev.props();
    assert_eq!(props.arch, t.target());
    // A 7900 XTX has 96 CUs, a 9070 XT 64.
    let cus = if t.target() == "gfx1201" { 64 } else { 96 };
    assert_eq!(
        (props.cu_count, props.lds_size, props.max_waves_per_simd),
        (cus, 65536, 16)
    );
    assert!(matches!(p.device(1), Err(HcqError::NoDevice(_))));
    assert_eq!(dev.timeline(), (0, 0));
}

fn signals_across_queues_and_devices(t: Transport) {
    let (_m, p) = platform(t, 2);
    let (d0, d1) = (p.device(0).unwrap(), p.device(1).unwrap());
    let a = d0.new_signal(0).unwrap();
    let b = d0.new_signal(0).unwrap();
    // d1's compute waits on a (set by d0's copy queue), then sets b.
    let mut q1 = d1.compute_queue();
    q1.wait(&a, 3).signal(&b, 4);
    d1.submit_compute(&q1).unwrap();
    let mut q0 = d0.copy_queue();
    q0.signal(&a, 3);
    d0.submit_copy(&q0).unwrap();
    b.wait(4).unwrap();
    assert_eq!(a.value(), 3);

    // A wait set late by the host.
    let late = Arc::new(d0.new_signal(0).unwrap());
    let l2 = late.clone();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        l2.set(9).unwrap();
    });
    let t = Instant::now();
    late.wait(9).unwrap();
    assert!(t.elapsed() >= Duration::from_millis(25));
    setter.join().unwrap();

    // Timestamps: later ones are not smaller.
    let (s1, s2) = (d0.new_signal(0).unwrap(), d0.new_signal(0).unwrap());
    let mut q = d0.compute_queue();
    q.timestamp(&s1).memory_barrier().timestamp(&s2).signal(&s2, 1);
    d0.submit_compute(&q).unwrap();
    s2.wait(1).unwrap();
    assert!(s1.timestamp() > 0 && s1.timestamp() <= s2.timestamp());

    let never = d0.new_signal(0).unwrap();
    match never.wait_timeout(1, Duration::from_millis(20)) {
        Err(HcqError::Timeout {
            wanted: 1, current: 0, ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

fn ordered_work_and_the_timeline_wrap(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let sig = dev.new_signal(0).unwrap();
    let mut last = 0;
    for i in 1..=50u64 {
        last = dev
            .submit_ordered(i % 2 == 0, |w| {
                match w {
                    Work::Compute(q) => {
                        q.signal(&sig, i);
                    }
                    Work::Copy(q) => {
                        q.signal(&sig, i);
                    }
                }
                Ok(())
            })
            .unwrap();
    }
    dev.synchronize().unwrap();
    assert_eq!((sig.value(), last), (50, 50));
    assert_eq!(dev.timeline(), (50, 50));

    dev.set_timeline_next_for_test(TIMELINE_WRAP - 1).unwrap();
    for _ in 0..4 {
        dev.submit_ordered(false, |_| Ok(())).unwrap();
    }
    dev.synchronize().unwrap();
    let (done, submitted) = dev.timeline();
    assert_eq!(done, submitted);
    // The GPU's value restarted after 2^31; the logical value (epoch above) grows on.
    let p = amd_hcq::Point::from_logical(submitted);
    assert_eq!(p.epoch, 1);
    assert!(p.value < 10, "the timeline restarted after 2^31: {p:?}");
    assert_eq!(dev.timeline_handle().unwrap().last, p);
}

fn copies_of_every_size_class(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let big = 33 << 20; // more than all staging buffers together
    let buf = dev.alloc(big + 64, BufferKind::Device).unwrap();
    for (i, &(size, off)) in [
        (1usize, 0usize),
        (3, 5),
        (4095, 1),
        (4096, 0),
        ((4 << 20) + 3, 7),
        (9 << 20, 0),
        (big, 64),
    ]
    .iter()
    .enumerate()
    {
        let data = pattern(size, i as u32 + 1);
        dev.copy_in(&buf, off, &data).unwrap();
        let mut back = vec![0u8; size];
        dev.copy_out(&mut back, &buf, off).unwrap();
        assert!(back == data, "round trip of {size} bytes at {off}");
    }
    // Device to device, and host buffers directly.
    let other = dev.alloc(1 << 20, BufferKind::Device).unwrap();
    let data = pattern(1 << 20, 77);
    dev.copy_in(&buf, 0, &data).unwrap();
    dev.copy(&other, 0, &buf, 0, 1 << 20).unwrap();
    let host = dev.alloc(1 << 20, BufferKind::Host).unwrap();
    dev.copy(&host, 0, &other, 0, 1 << 20).unwrap();
    dev.synchronize().unwrap();
    let mut back = vec![0u8; 1 << 20];
    host.read(0, &mut back).unwrap();
    assert!(back == data);
    host.write(100, b"written by the CPU").unwrap();
    dev.copy(&other, 0, &host, 100, 18).unwrap();
    let mut small = [0u8; 18];
    dev.copy_out(&mut small, &other, 0).unwrap();
    assert_eq!(&small, b"written by the CPU");
    // Views and range checks.
    let view = buf.view(4096, 100).unwrap();
    assert_eq!(view.va(), buf.va() + 4096);
    let size = big + 64;
    let e = buf.view(big, 65).err().unwrap();
    assert_eq!(
        e,
        HcqError::OutOfBounds {
            offset: big,
            len: 65,
            size
        }
    );
    let e = dev.copy_in(&view, 1, &[0; 100]).unwrap_err();
    assert_eq!(
        e,
        HcqError::OutOfBounds {
            offset: 1,
            len: 100,
            size: 100
        }
    );
    let e = dev.copy(&other, 1 << 20, &buf, 0, 1).unwrap_err();
    let size = 1 << 20;
    assert_eq!(
        e,
        HcqError::OutOfBounds {
            offset: size,
            len: 1,
            size
        }
    );
    let mut out = [0u8; 8];
    let e = dev.copy_out(&mut out, &view, 96).unwrap_err();
    assert_eq!(
        e,
        HcqError::OutOfBounds {
            offset: 96,
            len: 8,
            size: 100
        }
    );
    let e = host.write(1 << 20, b"x").unwrap_err();
    assert_eq!(
        e,
        HcqError::OutOfBounds {
            offset: 1 << 20,
            len: 1,
            size: 1 << 20
        }
    );
    let max = isize::MAX as usize;
    assert_eq!(
        dev.alloc(0, BufferKind::Device).err(),
        Some(HcqError::BufferSize { size: 0, max })
    );
    assert_eq!(
        dev.alloc(usize::MAX, BufferKind::Host).err(),
        Some(HcqError::BufferSize { size: usize::MAX, max })
    );
}

/// Each misuse of a bound list or a graph has its own error, holding the values.
fn misuse_of_lists_and_graphs_names_the_values(t: Transport) {
    let (_m, p) = platform(t, 2);
    let (d0, d1) = (p.device(0).unwrap(), p.device(1).unwrap());
    let sig = d0.new_signal(0).unwrap();
    let mut q = d0.compute_queue();
    q.signal(&sig, 1u64);
    assert_eq!(d0.bind_copies(&q, 0).err(), Some(HcqError::ZeroCopies));
    let bound = d0.bind(&q).unwrap();
    let dwords = q.dwords().len();
    let e = bound.patch_u64(&d0, dwords - 1, 7).unwrap_err();
    assert_eq!(
        e,
        HcqError::PatchRange {
            at: dwords - 1,
            len: 2,
            dwords
        }
    );
    assert_eq!(
        d1.submit_bound(&bound).unwrap_err(),
        HcqError::WrongDevice { bound: 0, device: 1 }
    );
    // An empty list, and a copy list holding an INDIRECT packet.
    let e = d0.bind(&d0.compute_queue()).err().unwrap();
    assert!(
        matches!(e, HcqError::ListSize { list: "bound list", dwords: 0, max } if max > 0),
        "{e:?}"
    );
    let mut c = d0.copy_queue();
    c.indirect(0x10000, 8).unwrap();
    assert_eq!(d0.bind_copy(&c).err(), Some(HcqError::NestedIndirect));
    // A symbol that goes negative with the values bound.
    let x = Var::new("x");
    let mut q = d0.compute_queue();
    q.signal(&sig, Sym::from(&x) - 1u32);
    let e = q.submit(&d0, &Bindings::from([(&x, 0)])).unwrap_err();
    assert!(
        matches!(&e, HcqError::SymbolOverflow { what } if what.contains("signal value")),
        "{e:?}"
    );
    // Graphs: empty, a node of another graph, a GPU of another platform.
    let mut g: Graph = Graph::new();
    assert_eq!(g.bind().err(), Some(HcqError::EmptyGraph));
    let buf = d0.alloc(64, BufferKind::Device).unwrap();
    let mut other: Graph = Graph::new();
    other.copy(&d0, buf.va(), buf.va() + 32, 16u64, &[]).unwrap();
    let n = other.copy(&d0, buf.va(), buf.va() + 32, 16u64, &[]).unwrap();
    let e = g.copy(&d0, buf.va(), buf.va() + 32, 16u64, &[n]).unwrap_err();
    assert_eq!(e, HcqError::UnknownNode { node: 1, nodes: 0 });
    g.copy(&d0, buf.va(), buf.va() + 32, 16u64, &[]).unwrap();
    let (_m2, p2) = platform(t, 1);
    let far = p2.device(0).unwrap();
    let e = g.copy(&far, 0x1000u64, 0x2000u64, 16u64, &[]).unwrap_err();
    assert_eq!(e, HcqError::GraphPlatform { device: 0, first: 0 });
    // A trace that cannot be written names the file.
    let path = std::path::Path::new("/nonexistent-dir/trace.json");
    match d0.write_trace(path) {
        Err(HcqError::Io { path: p, kind, .. }) => {
            assert_eq!((p.as_path(), kind), (path, std::io::ErrorKind::NotFound));
        }
        other => panic!("{other:?}"),
    }
    assert!(d0.health().is_ok() && d1.health().is_ok());
}

fn peer_transfers_respect_both_timelines(t: Transport) {
    let (_m, p) = platform(t, 2);
    let (d0, d1) = (p.device(0).unwrap(), p.device(1).unwrap());
    let src = d0.alloc(5 << 20, BufferKind::Device).unwrap();
    let dst = d1.alloc(5 << 20, BufferKind::Device).unwrap();
    let data = pattern(5 << 20, 5);
    d0.copy_in(&src, 0, &data).unwrap();
    d0.transfer(&d1, &dst, &src, 5 << 20).unwrap();
    let mut back = vec![0u8; 5 << 20];
    d1.copy_out(&mut back, &dst, 0).unwrap();
    assert!(back == data);
}

#[test]
fn freed_memory_waits_for_the_gpu_and_is_reused() {
    // Without the sanitizer, which would have amd-hcq keep nothing for reuse (the
    // CI's `AMD_MOCK_SANITIZE=1` run).
    let (m, p) = common::platform_with(Transport::Kfd, 1, |c| amd_mockgpu::MockConfig { sanitize: false, ..c });
    let dev = p.device(0).unwrap();
    let sdma = m.queues().into_iter().find(|q| q.queue_type == 1).unwrap().id;
    let a = dev.alloc(1 << 20, BufferKind::Device).unwrap();
    let va = a.va();
    m.hang_queue(sdma, true);
    let b = dev.alloc(1 << 20, BufferKind::Device).unwrap();
    dev.copy(&b, 0, &a, 0, 1 << 20).unwrap();
    drop(a);
    assert_eq!(dev.memory_stats().1, 1, "held back while the copy is in flight");
    m.hang_queue(sdma, false);
    dev.synchronize().unwrap();
    assert_eq!(dev.memory_stats(), (1, 0), "released into the cache");
    let again = dev.alloc(1 << 20, BufferKind::Device).unwrap();
    assert_eq!(again.va(), va, "the cached allocation is reused");
}

fn a_hang_reports_the_fault(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    dev.set_timeout(Duration::from_millis(300));
    // A copy from memory the GPU never mapped (inside the driverless transport's
    // virtual aperture too).
    let dst = dev.alloc(4096, BufferKind::Device).unwrap();
    let v = dev
        .submit_ordered(true, |w| match w {
            Work::Copy(q) => q.copy(dst.va(), 0x7f00_1234_0000u64, 64).map(|_| ()),
            Work::Compute(_) => unreachable!(),
        })
        .unwrap();
    match dev.wait_timeline(v) {
        Err(HcqError::DeviceFault { report, kernel, .. }) => {
            match t {
                Transport::Kfd | Transport::KfdAql | Transport::KfdGfx1201 => {
                    assert!(
                        report[0]
                            .starts_with("MMU fault: 0x7F0012340000 | NotPresent=1 ReadOnly=0 NoExecute=0 imprecise=0"),
                        "{report:?}"
                    );
                    // The mock names the packet that stopped the queue.
                    assert!(report.iter().any(|l| l.contains("COPY_LINEAR")), "{report:?}");
                }
                Transport::Pci | Transport::PciGfx1201 => {
                    // The MM hub's fault registers (SDMA), and the IH's VM-fault vector.
                    assert!(
                        report
                            .iter()
                            .any(|l| l.starts_with("MMU fault:") && l.contains("0x7f0012340000")),
                        "{report:?}"
                    );
                    assert!(
                        report
                            .iter()
                            .any(|l| l.starts_with("IH VM fault: Mm hub, read at 0x7f0012340000")),
                        "{report:?}"
                    );
                }
            }
            assert_eq!(kernel.as_deref(), Some("submission"), "{report:?}");
        }
        other => panic!("{other:?}"),
    }
}

fn many_threads_submitting(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let dev: Device = dev.clone();
            std::thread::spawn(move || {
                let buf = dev.alloc(64 << 10, BufferKind::Device).unwrap();
                for i in 0..50 {
                    let data = pattern(1000 + i * 37, (t * 1000 + i) as u32);
                    dev.copy_in(&buf, i, &data).unwrap();
                    let mut back = vec![0u8; data.len()];
                    dev.copy_out(&mut back, &buf, i).unwrap();
                    assert!(back == data, "thread {t} copy {i}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    dev.synchronize().unwrap();
    let (done, submitted) = dev.timeline();
    assert_eq!(done, submitted);
    assert!(submitted >= 400);
}

fn dropping_with_work_in_flight_releases_everything(t: Transport) {
    let (m, p) = platform(t, 1);
    {
        let dev = p.device(0).unwrap();
        let a = dev.alloc(8 << 20, BufferKind::Device).unwrap();
        let b = dev.alloc(8 << 20, BufferKind::Device).unwrap();
        for _ in 0..10 {
            dev.copy(&b, 0, &a, 0, 8 << 20).unwrap();
        }
        drop((a, b, dev, p));
    }
    let s = m.stats();
    assert_eq!(
        (s.memory_handles, s.queues, s.open_fds, s.host_mappings),
        (0, 0, 0, 0),
        "{s:?}"
    );
    if t.is_pci() {
        // fini stopped both rings (no HQD active, the SDMA ring disabled).
        assert!(m.pci_rings(0).is_empty(), "{:?}", m.pci_rings(0));
    }
}

fn profiling_records_launches_and_copies_in_order(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let prg = amd_hcq::Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let bufs: Vec<_> = (0..3).map(|_| dev.alloc(4096, BufferKind::Device).unwrap()).collect();
    for b in &bufs {
        dev.fill(b, 0, 4096, 0).unwrap();
    }
    dev.set_profiling(true);
    let dims = amd_hcq::LaunchDims {
        global: [2, 1, 1],
        local: [64, 1, 1],
    };
    prg.launch(&[&bufs[0], &bufs[1], &bufs[2]], &[64], dims).unwrap();
    let t = prg.launch_timed(&[&bufs[0], &bufs[1], &bufs[2]], &[64], dims).unwrap();
    assert!(t > Duration::ZERO);
    dev.copy_in(&bufs[0], 0, &[1; 100]).unwrap();
    dev.copy(&bufs[1], 0, &bufs[0], 0, 100).unwrap();
    let recs = dev.take_profile().unwrap();
    let names: Vec<_> = recs.iter().map(|r| (r.name.as_str(), r.engine)).collect();
    use amd_hcq::Engine::*;
    assert_eq!(
        names,
        [("vadd", Compute), ("vadd", Compute), ("copy_in", Copy), ("copy", Copy)]
    );
    for w in recs.windows(2) {
        assert!(w[0].start_ns <= w[0].end_ns && w[0].end_ns <= w[1].start_ns, "{w:?}");
    }
    assert!(dev.take_profile().unwrap().is_empty(), "records are taken once");

    // As a Chrome / Perfetto trace: valid JSON, one complete event per record, named
    // tracks per device and engine.
    let trace: serde_json::Value = serde_json::from_str(&amd_hcq::chrome_trace(&recs)).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let complete: Vec<_> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(complete.len(), recs.len());
    for (e, r) in complete.iter().zip(&recs) {
        assert_eq!(e["name"], r.name.as_str());
        assert_eq!(e["pid"], r.device as u64);
        assert_eq!(e["tid"], r.engine as u8 as u64);
        let ts = e["ts"].as_f64().unwrap();
        assert!((ts - r.start_ns as f64 / 1e3).abs() < 0.01);
        assert!(e["dur"].as_f64().unwrap() >= 0.0);
    }
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"compute") && names.contains(&"copy"), "{names:?}");
    let quoted = amd_hcq::chrome_trace(&[amd_hcq::ProfileRecord {
        name: "a \"b\"\\\n".into(),
        ..recs[0].clone()
    }]);
    let v: serde_json::Value = serde_json::from_str(&quoted).unwrap();
    assert_eq!(v["traceEvents"][2]["name"], "a \"b\"\\\n");
}

fn bound_lists_replay_and_patch(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let sig = dev.new_signal(0).unwrap();
    let mut q = dev.compute_queue();
    q.memory_barrier();
    let at = q.len();
    q.signal(&sig, 7);
    let bound = dev.bind(&q).unwrap();
    let v = dev.submit_bound(&bound).unwrap();
    dev.wait_timeline(v).unwrap();
    assert_eq!(sig.value(), 7);
    // The RELEASE_MEM data dword: patched in place, replayed.
    bound.patch_u32(&dev, at + 5, 8).unwrap();
    dev.submit_bound(&bound).unwrap();
    dev.synchronize().unwrap();
    assert_eq!(sig.value(), 8);
    assert!(bound.patch_u32(&dev, bound.len(), 1).is_err());
    assert!(dev.bind(&dev.compute_queue()).is_err());
}

fn bound_copy_lists_replay_and_patch(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let (a, b, dst) = (
        dev.alloc(4096, BufferKind::Device).unwrap(),
        dev.alloc(4096, BufferKind::Device).unwrap(),
        dev.alloc(4096, BufferKind::Device).unwrap(),
    );
    let (pa, pb) = (pattern(1000, 1), pattern(1000, 2));
    dev.copy_in(&a, 0, &pa).unwrap();
    dev.copy_in(&b, 0, &pb).unwrap();
    let sig = dev.new_signal(0).unwrap();
    let mut q = dev.copy_queue();
    q.copy(dst.va(), a.va(), 1000).unwrap();
    q.signal(&sig, 5);
    let bound = dev.bind_copy(&q).unwrap();
    assert!(bound.is_copy() && bound.len() % 8 == 0);
    // Several runs: the INDIRECT packet lands at different ring offsets and must end on
    // an 8-dword boundary each time (the engine stops the queue otherwise).
    for _ in 0..5 {
        dev.submit_bound(&bound).unwrap();
        dev.submit_ordered(true, |w| match w {
            Work::Copy(q) => q.copy(dst.va() + 2048, a.va(), 3).map(|_| ()),
            Work::Compute(_) => unreachable!(),
        })
        .unwrap();
    }
    dev.synchronize().unwrap();
    let mut out = vec![0u8; 1000];
    dev.copy_out(&mut out, &dst, 0).unwrap();
    assert_eq!(out, pa);
    assert_eq!(sig.value(), 5);
    // COPY_LINEAR's source address (dwords 3, 4): patched to `b`, replayed.
    bound.patch_u64(&dev, 3, b.va()).unwrap();
    sig.set(0).unwrap();
    dev.submit_bound(&bound).unwrap();
    dev.synchronize().unwrap();
    dev.copy_out(&mut out, &dst, 0).unwrap();
    assert_eq!(out, pb);
    assert_eq!(sig.value(), 5);
    // Nothing to bind, and no INDIRECT inside a bound copy list.
    assert!(dev.bind_copy(&dev.copy_queue()).is_err());
    let mut nested = dev.copy_queue();
    nested.indirect(dst.va(), 8).unwrap();
    assert!(dev.bind_copy(&nested).is_err());
}

/// A signal dropped while submitted work still writes it keeps its slot until that work
/// is done: a new signal never sees the old work's write. A list that writes or waits
/// for a signal keeps its slot as long as the list lives. Slots come back once the work
/// is done.
fn dropped_signals_wait_for_the_work_that_writes_them(t: Transport) {
    let (_m, p) = platform(t, 2);
    let (dev, other) = (p.device(0).unwrap(), p.device(1).unwrap());
    let gate = dev.new_signal(0).unwrap();

    // A recorded list keeps its signals' slots while it lives, bound or not (nothing
    // is in flight yet: only the list holds the slot).
    let (kept_addr, bound, after) = dropped_but_held(
        &dev,
        |s| {
            let mut r = dev.compute_queue();
            r.signal(s, 5);
            dev.bind(&r).unwrap()
        },
        "a bound list holds its signal",
    );
    // Submitted on the timeline, waiting for the gate: the signal is dropped meanwhile.
    let (old_addr, (), fresh) = dropped_but_held(
        &dev,
        |s| {
            let mut q = dev.compute_queue();
            q.wait(&gate, 1).signal(s, 7);
            q.submit(&dev, &Bindings::new()).unwrap();
        },
        "the slot is held while its work runs",
    );
    // The same on the copy engine, and a signal of the other device (the platform
    // shares one page of signals).
    let (copied_addr, (), more) = dropped_but_held(
        &other,
        |s| {
            let mut c = dev.copy_queue();
            c.wait(&gate, 1).signal(s, 9);
            c.submit(&dev, &Bindings::new()).unwrap();
        },
        "the slot is held while its copy runs",
    );
    assert!(more.iter().all(|s| s.addr() != old_addr));

    gate.set(1).unwrap();
    dev.synchronize().unwrap();
    for s in fresh.iter().chain(&more).chain(&after) {
        assert_eq!(s.value(), 0, "no new signal took an old command's write");
    }
    // Once the work is done (and the bound list gone), the slots are free again.
    drop(bound);
    let free_again: Vec<_> = (0..8).map(|_| dev.new_signal(0).unwrap()).collect();
    for a in [old_addr, copied_addr, kept_addr] {
        assert!(
            free_again.iter().any(|s| s.addr() == a),
            "slot {a:#x} is reused once its work is done"
        );
    }
}

/// Makes a signal on `owner`, has `hold` record it in a list (kept or submitted, which
/// it returns) and drops it; then four new signals of `owner` must not take its slot
/// (`why`). Returns the slot's address, what `hold` returned and the new signals.
fn dropped_but_held<T>(
    owner: &Device,
    hold: impl FnOnce(&amd_hcq::Signal) -> T,
    why: &str,
) -> (u64, T, Vec<amd_hcq::Signal>) {
    let s = owner.new_signal(0).unwrap();
    let addr = s.addr();
    let held = hold(&s);
    drop(s);
    let fresh: Vec<_> = (0..4).map(|_| owner.new_signal(0).unwrap()).collect();
    assert!(fresh.iter().all(|n| n.addr() != addr), "{why}");
    (addr, held, fresh)
}

/// With every slot taken, a new signal is a clear error that counts the slots still
/// waiting for work; they come back when it is done.
#[test]
fn signal_slots_run_out_with_a_clear_error() {
    let (_m, p) = platform(Transport::Kfd, 1);
    let dev = p.device(0).unwrap();
    let gate = dev.new_signal(0).unwrap();
    let mut q = dev.compute_queue();
    q.wait(&gate, 1);
    q.submit(&dev, &Bindings::new()).unwrap();
    let mut held = Vec::new();
    let e = loop {
        match dev.new_signal(0) {
            Ok(s) => held.push(s),
            Err(e) => break e,
        }
    };
    assert!(held.len() > 60_000, "{}", held.len());
    assert!(e.to_string().contains("65536 signals are in use"), "{e}");
    assert!(matches!(e, HcqError::SignalsExhausted { slots: 65536, .. }), "{e:?}");
    held.truncate(held.len() - 10);
    let e = dev.new_signal(0).unwrap_err();
    assert!(e.to_string().contains("(10 of them wait for work"), "{e}");
    let want = HcqError::SignalsExhausted {
        slots: 65536,
        waiting: 10,
    };
    assert_eq!(e, want);
    gate.set(1).unwrap();
    dev.synchronize().unwrap();
    let again: Vec<_> = (0..10).map(|_| dev.new_signal(0).unwrap()).collect();
    assert!(dev.new_signal(0).is_err());
    drop(again);
}

/// Threads submitting writes of signals they drop at once, and making new signals they
/// keep: no kept signal ever takes one of the dropped ones' writes, while the engines
/// run concurrently on both queues.
fn signals_dropped_and_made_by_many_threads(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let threads: Vec<_> = (0..4u64)
        .map(|k| {
            let dev = dev.clone();
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                for i in 0..150u64 {
                    let old = dev.new_signal(0).unwrap();
                    let value = 1 + k * 1000 + i;
                    if i % 2 == 0 {
                        let mut q = dev.compute_queue();
                        q.signal(&old, value);
                        q.submit(&dev, &Bindings::new()).unwrap();
                    } else {
                        let mut q = dev.copy_queue();
                        q.signal(&old, value);
                        q.submit(&dev, &Bindings::new()).unwrap();
                    }
                    drop(old);
                    kept.push(dev.new_signal(0).unwrap());
                }
                kept
            })
        })
        .collect();
    let kept: Vec<_> = threads.into_iter().flat_map(|h| h.join().unwrap()).collect();
    dev.synchronize().unwrap();
    let written: Vec<u64> = kept.iter().map(|s| s.value()).filter(|&v| v != 0).collect();
    assert!(written.is_empty(), "kept signals took old writes: {written:?}");
}

/// Lists sent with `submit_compute` / `submit_copy` are outside the timeline, yet a
/// buffer or signal they use, dropped while they wait, is not reused before they are
/// done: each such list is followed by a fence that counts it done.
fn lists_sent_outside_the_timeline_hold_what_they_use(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let gate = dev.new_signal(0).unwrap();
    let finished = dev.new_signal(0).unwrap();
    let data = pattern(4096, 3);
    let src = dev.alloc(4096, BufferKind::Host).unwrap();
    src.write(0, &data).unwrap();
    let dst = dev.alloc(4096, BufferKind::Host).unwrap();

    // A copy waiting for the gate reads `src`, dropped meanwhile.
    let mut c = dev.copy_queue();
    c.wait(&gate, 1);
    c.copy(dst.va(), src.va(), 4096).unwrap();
    c.signal(&finished, 1);
    dev.submit_copy(&c).unwrap();
    drop((c, src));
    assert_eq!(dev.memory_stats().1, 1, "held back while the copy waits");
    // A launch-free compute list waiting for the gate writes a signal, dropped too.
    let old = dev.new_signal(0).unwrap();
    let old_addr = old.addr();
    let mut q = dev.compute_queue();
    q.wait(&gate, 1).signal(&old, 7);
    dev.submit_compute(&q).unwrap();
    drop((q, old));
    let fresh: Vec<_> = (0..4).map(|_| dev.new_signal(0).unwrap()).collect();
    assert!(
        fresh.iter().all(|s| s.addr() != old_addr),
        "the slot is held while its list waits"
    );
    // Memory allocated meanwhile does not get `src`'s.
    let other = dev.alloc(4096, BufferKind::Host).unwrap();
    other.write(0, &[0xee; 4096]).unwrap();

    gate.set(1).unwrap();
    finished.wait(1).unwrap();
    let mut got = vec![0u8; 4096];
    dst.read(0, &mut got).unwrap();
    assert!(got == data, "the copy read what the dropped buffer held");
    // Once the lists are done, both come back.
    let deadline = Instant::now() + Duration::from_secs(10);
    while dev.memory_stats().1 != 0 {
        assert!(
            Instant::now() < deadline,
            "the buffer is released once the copy is done"
        );
        dev.synchronize().unwrap();
        std::thread::yield_now();
    }
    for s in &fresh {
        assert_eq!(s.value(), 0);
    }
    let again: Vec<_> = (0..8).map(|_| dev.new_signal(0).unwrap()).collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut reused = again.iter().any(|s| s.addr() == old_addr);
    let mut extra = Vec::new();
    while !reused {
        assert!(
            Instant::now() < deadline,
            "the signal's slot is reused once its list is done"
        );
        let s = dev.new_signal(0).unwrap();
        reused = s.addr() == old_addr;
        extra.push(s);
    }
}

/// Memory of one GPU mapped on another and read by the other's copy engine, dropped
/// while that copy waits: it is released only once the other GPU's work is done (its
/// own GPU being idle all along).
fn memory_mapped_on_a_peer_waits_for_the_peers_work(t: Transport) {
    let (_m, p) = platform(t, 2);
    let (d0, d1) = (p.device(0).unwrap(), p.device(1).unwrap());
    let gate = d0.new_signal(0).unwrap();
    let data = pattern(4096, 11);
    let src = d1.alloc(4096, BufferKind::Host).unwrap();
    src.write(0, &data).unwrap();
    d0.map_peer(&src).unwrap();
    let dst = d0.alloc(4096, BufferKind::Host).unwrap();
    let mut c = d0.copy_queue();
    c.wait(&gate, 1);
    c.copy(dst.va(), src.va(), 4096).unwrap();
    let done = c.submit(&d0, &Bindings::new()).unwrap();
    drop((c, src));
    assert_eq!(d1.memory_stats().1, 1, "held while GPU 0's copy may still read it");
    let other = d1.alloc(4096, BufferKind::Host).unwrap();
    other.write(0, &[0xee; 4096]).unwrap();
    gate.set(1).unwrap();
    d0.wait_timeline(done).unwrap();
    let mut got = vec![0u8; 4096];
    dst.read(0, &mut got).unwrap();
    assert!(got == data, "the copy read what the dropped buffer held");
    d1.synchronize().unwrap();
    assert_eq!(d1.memory_stats().1, 0, "released once GPU 0's work is done");
}

/// A KFD mock GPU's device, profiling, with two 4 KiB buffers of VRAM.
fn profiling_with_two_buffers() -> (
    Arc<amd_mockgpu::MockSys>,
    amd_hcq::Platform,
    Device,
    amd_hcq::Buffer,
    amd_hcq::Buffer,
) {
    let (m, p) = platform(Transport::Kfd, 1);
    let dev = p.device(0).unwrap();
    dev.set_profiling(true);
    let a = dev.alloc(4096, BufferKind::Device).unwrap();
    let b = dev.alloc(4096, BufferKind::Device).unwrap();
    (m, p, dev, a, b)
}

/// Profiled copies submitted while the copy engine is stalled: their signals run out
/// before the engine has finished any, and the submission then waits for it to work
/// through them (as a full ring holds a submission back) rather than refusing with
/// `SignalsExhausted`; the engine resumes once the submitting thread is near the end.
#[test]
fn profiled_work_past_the_signal_slots_waits_for_the_gpu() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (m, _p, dev, a, b) = profiling_with_two_buffers();
    dev.synchronize().unwrap();
    let sdma = m.queues().into_iter().find(|q| q.queue_type == 1).unwrap().id;
    m.hang_queue(sdma, true);
    // Two signals a profiled copy: these run out 100 copies before the end.
    let n = amd_hcq::SIGNAL_SLOTS / 2 + 100;
    let sent = Arc::new(AtomicUsize::new(0));
    let resume = {
        let (m, sent) = (m.clone(), sent.clone());
        std::thread::spawn(move || {
            while sent.load(Ordering::Relaxed) < n - 150 {
                std::thread::sleep(Duration::from_millis(1));
            }
            // Long enough for the submitting thread to reach the last free signals.
            std::thread::sleep(Duration::from_millis(200));
            m.hang_queue(sdma, false);
        })
    };
    for i in 0..n {
        dev.copy(&b, 0, &a, 0, 64).unwrap_or_else(|e| panic!("copy {i}: {e}"));
        sent.store(i + 1, Ordering::Relaxed);
    }
    resume.join().unwrap();
    let recs = dev.take_profile().unwrap();
    assert_eq!(recs.len(), n);
}

/// Profiling a long run: more profiled copies than there are signal slots, with the
/// records taken only at the end, after a graph's profiled replay. The timestamps of
/// finished work are read as it goes, so the slots come back.
#[test]
fn profiling_more_operations_than_signal_slots() {
    let (_m, _p, dev, a, b) = profiling_with_two_buffers();
    // First a graph replayed once (its copy never runs again): its record does not
    // hold up the reading of those after it.
    let mut g = amd_hcq::Graph::new();
    g.copy(&dev, b.va(), a.va(), 64u32, &[]).unwrap();
    let g = g.bind().unwrap();
    g.replay(&Bindings::new()).unwrap();
    g.synchronize().unwrap();
    let n = amd_hcq::SIGNAL_SLOTS / 2 + 100;
    for i in 0..n {
        dev.copy(&b, 0, &a, 0, 64).unwrap_or_else(|e| panic!("copy {i}: {e}"));
    }
    let recs = dev.take_profile().unwrap();
    assert_eq!(recs.len(), n + 1);
    assert!(recs.iter().all(|r| r.name == "copy" && r.start_ns <= r.end_ns));
    for w in recs.windows(2) {
        assert!(w[0].end_ns <= w[1].start_ns, "{w:?}");
    }
}

/// A profiled graph dropped after its replay, then another profiled graph replayed on
/// the same device: reading the first one's times releases its last copy (freeing
/// memory, which asks the device how far its work is) while the second replays — on a
/// thread that must not be holding the device's timeline then.
#[test]
fn a_dropped_profiled_graph_is_released_while_another_replays() {
    let (_m, p) = platform(Transport::Kfd, 1);
    let dev = p.device(0).unwrap();
    dev.set_profiling(true);
    let a = dev.alloc(4096, BufferKind::Device).unwrap();
    let b = dev.alloc(4096, BufferKind::Device).unwrap();
    let graph = || {
        let mut g = amd_hcq::Graph::new();
        g.copy(&dev, b.va(), a.va(), 64u32, &[]).unwrap();
        g.bind().unwrap()
    };
    let first = graph();
    first.replay(&Bindings::new()).unwrap();
    first.synchronize().unwrap();
    drop(first);
    let second = graph();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..3 {
            second.replay(&Bindings::new()).unwrap();
        }
        second.synchronize().unwrap();
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the second graph's replays finish (no lock held twice)");
    assert_eq!(dev.take_profile().unwrap().len(), 4);
}

/// Runs `f` on its own thread and fails (rather than hanging) if it has not finished
/// within a minute.
fn within_a_minute(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => h.join().unwrap(),
        // The thread panicked (and dropped the sender): its panic is the failure.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("deadlocked: still running after a minute"),
    }
}

/// The closure of `submit_ordered` runs with no lock of the runtime's held: it may
/// allocate, free, make and drop signals, wait, and submit other work to the same
/// device (which then comes first on the timeline); the list it builds still runs
/// after everything before it.
fn ordered_submissions_are_built_before_any_lock(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    within_a_minute(move || {
        let src = dev.alloc(4096, BufferKind::Device).unwrap();
        let pa = pattern(4096, 11);
        dev.copy_in(&src, 0, &pa).unwrap();
        let before = dev.submit_ordered(false, |_| Ok(())).unwrap();
        for copy in [false, true] {
            let sig = dev.new_signal(0).unwrap();
            let dst = dev.alloc(4096, BufferKind::Device).unwrap();
            let mut inner = 0;
            let outer = dev
                .submit_ordered(copy, |w| {
                    // Everything a closure used to deadlock on.
                    let tmp = dev.alloc(1 << 20, BufferKind::Device)?;
                    dev.copy_in(&tmp, 0, &[1, 2, 3])?;
                    drop(tmp);
                    drop(dev.new_signal(5)?);
                    dev.synchronize()?;
                    let _ = dev.timeline_handle()?;
                    inner = dev.submit_ordered(copy, |w| {
                        match w {
                            Work::Compute(q) => {
                                q.signal(&sig, 1);
                            }
                            Work::Copy(q) => {
                                q.signal(&sig, 1);
                            }
                        }
                        Ok(())
                    })?;
                    match w {
                        Work::Compute(q) => {
                            q.wait(&sig, 1).signal(&sig, 2);
                        }
                        Work::Copy(q) => {
                            q.wait(&sig, 1);
                            q.copy(dst.va(), src.va(), 4096)?;
                            q.signal(&sig, 2);
                        }
                    }
                    Ok(())
                })
                .unwrap();
            assert!(before < inner && inner < outer, "{before} {inner} {outer}");
            dev.wait_timeline(outer).unwrap();
            assert_eq!(sig.value(), 2);
            if copy {
                let mut out = vec![0u8; 4096];
                dev.copy_out(&mut out, &dst, 0).unwrap();
                assert_eq!(out, pa);
            }
        }
        // A failing or panicking closure sends nothing and leaves the device usable: what
        // it recorded (a wait nothing satisfies) does not reach the next submission.
        let last = dev.timeline().1;
        let never = dev.new_signal(0).unwrap();
        for copy in [false, true] {
            let e = dev.submit_ordered(copy, |w| {
                match w {
                    Work::Compute(q) => {
                        q.wait(&never, 1);
                    }
                    Work::Copy(q) => {
                        q.wait(&never, 1);
                    }
                }
                Err(HcqError::InvalidArgument("mine".into()))
            });
            assert_eq!(e, Err(HcqError::InvalidArgument("mine".into())));
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                dev.submit_ordered(copy, |w| {
                    match w {
                        Work::Compute(q) => {
                            q.wait(&never, 1);
                        }
                        Work::Copy(q) => {
                            q.wait(&never, 1);
                        }
                    }
                    panic!("a closure's panic")
                })
            }));
            assert!(caught.is_err());
        }
        assert_eq!(dev.timeline().1, last);
        dev.set_timeout(Duration::from_secs(5));
        for copy in [false, true] {
            let v = dev.submit_ordered(copy, |_| Ok(())).unwrap();
            dev.wait_timeline(v).unwrap();
        }
    });
}

/// `submit_ordered` sends its list as built: a symbol (it binds none) or a kernel
/// launch (it places no kernel arguments) is an error naming what to use instead, and
/// nothing is sent — neither the list nor its timeline value.
fn ordered_submissions_are_sent_as_built(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let sig = dev.new_signal(0).unwrap();
    let x = Var::new("x");
    let saxpy = Program::load(&dev, common::SAXPY.of(t), "saxpy").unwrap();
    let (a, b) = (
        dev.alloc(256, BufferKind::Device).unwrap(),
        dev.alloc(256, BufferKind::Device).unwrap(),
    );
    let args = KernArgs::new().buffer(&a).buffer(&b).f32(2.0).u32(64);
    dev.synchronize().unwrap();
    let last = dev.timeline();
    for copy in [false, true] {
        let e = dev
            .submit_ordered(copy, |w| {
                match w {
                    Work::Compute(q) => {
                        q.signal(&sig, x.clone() + 1);
                    }
                    Work::Copy(q) => {
                        q.signal(&sig, x.clone() + 1);
                    }
                }
                Ok(())
            })
            .unwrap_err();
        let want = HcqError::NotSentAsBuilt {
            call: "Device::submit_ordered",
            variable: Some("x".into()),
            launch: false,
        };
        assert_eq!(e, want);
        let what = if copy {
            "CopyQueue::submit"
        } else {
            "ComputeQueue::submit"
        };
        assert!(
            e.to_string().contains("variable x") && e.to_string().contains(what),
            "{e}"
        );
    }
    let e = dev
        .submit_ordered(false, |w| match w {
            Work::Compute(q) => q.exec(&saxpy, &args, LaunchDims::linear(64, 64)).map(|_| ()),
            Work::Copy(_) => unreachable!(),
        })
        .unwrap_err();
    let want = HcqError::NotSentAsBuilt {
        call: "Device::submit_ordered",
        variable: None,
        launch: true,
    };
    assert_eq!(e, want);
    assert!(e.to_string().contains("Program::enqueue"), "{e}");
    assert_eq!(dev.timeline(), last);
    // The same list through the door that binds: the value arrives.
    let mut q = dev.compute_queue();
    q.signal(&sig, x.clone() + 1);
    let v = q.submit(&dev, Bindings::new().set(&x, 41)).unwrap();
    dev.wait_timeline(v).unwrap();
    assert_eq!(sig.value(), 42);
    // Nothing else ran: the refused lists would have set the signal to 1.
    assert_eq!(dev.timeline().1, last.1 + 1);
    // And the plain list still goes out.
    let v = dev
        .submit_ordered(false, |w| match w {
            Work::Compute(q) => {
                q.signal(&sig, 43);
                Ok(())
            }
            Work::Copy(_) => unreachable!(),
        })
        .unwrap();
    dev.wait_timeline(v).unwrap();
    assert_eq!(sig.value(), 43);
}
