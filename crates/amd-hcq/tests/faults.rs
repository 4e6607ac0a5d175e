//! Faults, timeouts, misuse and leaks, on the mock GPU: a device fails loudly, once,
//! says why, and releases everything when dropped — over both transports (KFD and
//! driverless) and both targets (gfx1100, gfx1201) from the same code, except where a
//! test steers the KFD mock's driver.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use amd_hcq::{
    AnyIface, Bindings, Buffer, BufferKind, Device, Graph, HcqError, Iface, KernArgs, LaunchDims, LaunchLimit,
    Platform, Program, SymDims, TIMELINE_WRAP,
};
use amd_mockgpu::{GpuProfile, MockConfig, MockSys};
use common::{SPIN, Transport, VADD, platform};
use nix::errno::Errno;

on_every_queue_and_target!(
    a_fault_is_sticky_fast_and_cleared_by_reopening,
    a_timeout_holds_and_is_not_a_fault,
    dropping_a_device_during_a_runaway_kernel,
    misuse_is_refused_before_the_gpu,
    dropping_everything_releases_everything,
    the_timeline_wraps_under_concurrent_submitters,
    the_largest_launch_sizes_are_errors,
    allocation_failures_name_the_size_and_kind,
    a_fault_in_a_graph_replay_names_it,
);

/// Where the faulting launches point (no allocation of either transport is there:
/// the KFD mock maps nothing this low, and it is outside the driverless transport's
/// virtual aperture).
const UNMAPPED: u64 = 0x10_0000;

/// Makes vadd on `bufs` fault: on the KFD mock, an injected fault at element 77 (or the last) of
/// the second input; on the PCI GPU, the second input pointing at unmapped memory.
/// Returns the error and the faulting address.
fn faulting_vadd(t: Transport, m: &MockSys, prg: &Program, bufs: &[Buffer], n: u32) -> (HcqError, u64) {
    match t {
        Transport::Kfd | Transport::KfdAql | Transport::KfdGfx1201 => {
            let bad = bufs[1].va() + u64::from(77.min(n - 1)) * 4;
            m.fault_address(0, bad);
            let e = prg
                .launch_timed(&[&bufs[0], &bufs[1], &bufs[2]], &[n], dims(n))
                .unwrap_err();
            (e, bad)
        }
        Transport::Pci | Transport::PciGfx1201 => {
            let args = KernArgs::new()
                .buffer(&bufs[0])
                .buffer_sym(UNMAPPED)
                .buffer(&bufs[2])
                .u32(n);
            let v = prg
                .enqueue(&args, SymDims::new([n.div_ceil(256), 1, 1], [256, 1, 1]))
                .unwrap();
            (prg.device().wait_timeline(v).unwrap_err(), UNMAPPED)
        }
    }
}

/// A replay whose launch faults is what the fault report names, on the replay that
/// faulted, not on earlier good ones.
fn a_fault_in_a_graph_replay_names_it(t: Transport) {
    let (m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let n = 256u32;
    let bufs: Vec<Buffer> = (0..3)
        .map(|_| dev.alloc(n as usize * 4, BufferKind::Device).unwrap())
        .collect();
    // Written before use (the sanitizer, AMD_MOCK_SANITIZE=1, stops a read of VRAM
    // nothing wrote).
    for b in &bufs {
        dev.wait_timeline(dev.fill(b, 0, n as usize * 4, 0).unwrap()).unwrap();
    }
    let b = amd_hcq::Var::new("b");
    let mut g = Graph::new();
    let args = KernArgs::new().buffer(&bufs[0]).buffer_sym(&b).buffer(&bufs[2]).u32(n);
    g.exec(&prg, &args, SymDims::new([1, 1, 1], [256, 1, 1]), &[]).unwrap();
    let graph = g.bind().unwrap();
    let good = Bindings::from([(&b, bufs[1].va())]);
    for _ in 0..3 {
        graph.replay(&good).unwrap();
    }
    graph.synchronize().unwrap();
    let bad = match t {
        Transport::Kfd | Transport::KfdAql | Transport::KfdGfx1201 => {
            m.fault_address(0, bufs[1].va() + 77 * 4);
            good.clone()
        }
        Transport::Pci | Transport::PciGfx1201 => Bindings::from([(&b, UNMAPPED)]),
    };
    graph.replay(&bad).unwrap();
    match graph.synchronize().unwrap_err() {
        HcqError::DeviceFault { kernel, report, .. } => {
            assert_eq!(kernel.as_deref(), Some("graph replay"), "{report:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(graph.replay(&good), Err(HcqError::DeviceFault { .. })));
}

/// What the driverless transport's GPU has free: VRAM and virtual space.
fn am_free(dev: &Device) -> Option<(u64, u64)> {
    match dev.iface() {
        AnyIface::Am(a) => Some(
            a.shared()
                .with(|b| (b.gmc.allocators().0.free_bytes(), b.gmc.va_space().free_bytes())),
        ),
        AnyIface::Kfd(_) => None,
    }
}

fn floats(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn dims(n: u32) -> LaunchDims {
    LaunchDims {
        global: [n.div_ceil(256), 1, 1],
        local: [256, 1, 1],
    }
}

/// Launches the spin kernel for `iters` steps on one wave; returns its timeline value.
fn spin(prg: &Program, out: &Buffer, iters: u32) -> u64 {
    let d = SymDims::new([1, 1, 1], [32, 1, 1]);
    prg.enqueue(&KernArgs::new().buffer(out).u32(iters), d).unwrap()
}

/// Runs vadd (`t`'s build) on `dev` and checks it.
fn vadd_works(t: Transport, dev: &Device) {
    let prg = Program::load(dev, VADD.of(t), "vadd").unwrap();
    let n = 300;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let bufs: Vec<Buffer> = (0..3).map(|_| dev.alloc(n * 4, BufferKind::Device).unwrap()).collect();
    dev.copy_in(&bufs[0], 0, &floats(&a)).unwrap();
    dev.copy_in(&bufs[1], 0, &floats(&a)).unwrap();
    prg.launch_timed(&[&bufs[0], &bufs[1], &bufs[2]], &[n as u32], dims(n as u32))
        .unwrap();
    let mut out = vec![0u8; n * 4];
    dev.copy_out(&mut out, &bufs[2], 0).unwrap();
    assert_eq!(out, floats(&a.iter().map(|x| 2.0 * x).collect::<Vec<_>>()));
}

/// Nothing held but what an open platform holds (its `/dev/kfd` descriptor).
fn assert_released(m: &MockSys, platform_open: bool) {
    let s = m.stats();
    assert_eq!(
        (
            s.memory_handles,
            s.queues,
            s.events,
            s.open_fds,
            s.host_mappings,
            s.gpu_mappings
        ),
        (0, 0, 0, platform_open as usize, 0, 0),
        "{s:?}"
    );
    assert!(s.vram_used.iter().all(|&v| v == 0), "{s:?}");
}

/// The first error carries the report; every later operation returns the same error
/// at once; the device works again once dropped and reopened.
fn a_fault_is_sticky_fast_and_cleared_by_reopening(t: Transport) {
    let (m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let fresh = am_free(&dev);
    assert!(dev.health().is_ok());
    let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let n = 256usize;
    let bufs: Vec<Buffer> = (0..3).map(|_| dev.alloc(n * 4, BufferKind::Device).unwrap()).collect();
    for b in &bufs {
        dev.wait_timeline(dev.fill(b, 0, n * 4, 0).unwrap()).unwrap();
    }
    let started = Instant::now();
    let (first, bad) = faulting_vadd(t, &m, &prg, &bufs, n as u32);
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    let report = match &first {
        HcqError::DeviceFault {
            device: 0,
            kernel,
            report,
        } => {
            assert_eq!(kernel.as_deref(), Some("vadd"));
            match t {
                Transport::Kfd | Transport::KfdAql | Transport::KfdGfx1201 => {
                    assert!(
                        report[0].starts_with(&format!("MMU fault: 0x{bad:X} | NotPresent=1")),
                        "{report:?}"
                    );
                    // The KFD mock's report names the instruction.
                    assert!(report.iter().any(|l| l.contains("global_load")), "{report:?}");
                }
                Transport::Pci | Transport::PciGfx1201 => {
                    // The GC hub's fault registers, and the IH's fault vector.
                    assert!(report[0].starts_with("MMU fault: "), "{report:?}");
                    assert!(
                        report
                            .iter()
                            .any(|l| l.starts_with("IH VM fault: Gc hub, read at 0x100000")),
                        "{report:?}"
                    );
                }
            }
            report.clone()
        }
        other => panic!("{other:?}"),
    };
    let text = first.to_string();
    assert!(text.starts_with("GPU 0 faulted in vadd\nMMU fault: "), "{text}");
    // Every later operation: the same error, at once.
    type Op<'a> = Box<dyn Fn() -> amd_hcq::Result<()> + 'a>;
    let later: Vec<(&str, Op)> = vec![
        ("health", Box::new(|| dev.health())),
        ("alloc", Box::new(|| dev.alloc(4096, BufferKind::Host).map(|_| ()))),
        (
            "launch",
            Box::new(|| prg.launch(&[&bufs[0], &bufs[1], &bufs[2]], &[1], dims(1)).map(|_| ())),
        ),
        ("copy", Box::new(|| dev.copy(&bufs[0], 0, &bufs[2], 0, 64).map(|_| ()))),
        ("copy_in", Box::new(|| dev.copy_in(&bufs[0], 0, &[1, 2, 3, 4]))),
        ("synchronize", Box::new(|| dev.synchronize())),
        ("load", Box::new(|| Program::load(&dev, VADD.of(t), "vadd").map(|_| ()))),
        (
            "signal",
            Box::new(|| dev.new_signal(0)?.wait_timeout(1, Duration::from_secs(5))),
        ),
    ];
    for (what, op) in &later {
        let t = Instant::now();
        match op() {
            Err(HcqError::DeviceFault { report: r, kernel, .. }) => {
                assert_eq!(r, report, "{what}");
                assert_eq!(kernel.as_deref(), Some("vadd"), "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
        assert!(t.elapsed() < Duration::from_millis(10), "{what} took {:?}", t.elapsed());
    }
    drop(later);
    drop((prg, bufs, dev));
    if !t.is_pci() {
        assert_released(&m, true);
        // The injected fault stays with the address, which a new device may reuse.
        m.clear_fault_addresses(0);
    }
    // Reopened, the GPU works (and the driverless one has what it had when fresh).
    let dev = p.device(0).unwrap();
    assert_eq!(am_free(&dev), fresh);
    let health = dev.health();
    assert!(health.is_ok(), "{health:?}");
    vadd_works(t, &dev);
}

/// A plain timeout is not a fault: a 500 ms wait on a kernel of seconds returns in
/// time, and the device is fine.
fn a_timeout_holds_and_is_not_a_fault(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, SPIN.of(t), "spin").unwrap();
    let out = dev.alloc(4096, BufferKind::Host).unwrap();
    dev.set_timeout(Duration::from_millis(500));
    // A kernel that does not end by itself (dropping the device at the end stops it).
    let v = spin(&prg, &out, u32::MAX);
    let t = Instant::now();
    match dev.wait_timeline(v) {
        Err(HcqError::Timeout { wanted, current, .. }) => {
            assert_eq!(wanted, v);
            assert!(current < v);
        }
        other => panic!("{other:?}"),
    }
    // The upper bound catches a wait that ignores its timeout (the kernel never
    // ends), with room for a loaded machine.
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_millis(2000),
        "{took:?}"
    );
    assert!(dev.health().is_ok());
    // An allocation and an ioctl from another thread do not wait for the kernel
    // (were they to, they would not return); the bound leaves room for a loaded
    // machine. (Timed inside the thread: starting and joining a thread takes long on
    // a loaded 2-core machine.)
    let d2 = dev.clone();
    let (took, parts) = std::thread::spawn(move || {
        let t = Instant::now();
        let b = d2.alloc(1 << 20, BufferKind::Device).unwrap();
        let a = t.elapsed();
        d2.map_peer(&b).unwrap();
        let m = t.elapsed();
        drop(b);
        (t.elapsed(), (a, m))
    })
    .join()
    .unwrap();
    assert!(
        took < Duration::from_millis(1000),
        "{took:?} (allocated at {:?}, mapped at {:?})",
        parts.0,
        parts.1
    );
    assert!(dev.timeline().0 < v, "the kernel still runs");
}

/// Dropping the last handle during a runaway kernel returns promptly and releases
/// everything; the GPU opens again.
fn dropping_a_device_during_a_runaway_kernel(t: Transport) {
    let (m, p) = platform(t, 1);
    let fresh = am_free(&p.device(0).unwrap());
    {
        let dev = p.device(0).unwrap();
        let prg = Program::load(&dev, SPIN.of(t), "spin").unwrap();
        let out = dev.alloc(4096, BufferKind::Host).unwrap();
        let v = spin(&prg, &out, u32::MAX);
        std::thread::sleep(Duration::from_millis(50));
        assert!(dev.timeline().0 < v);
        let t = Instant::now();
        drop((prg, out, dev));
        // The kernel never ends by itself: a drop that waited for it would not return.
        assert!(t.elapsed() < Duration::from_millis(2000), "{:?}", t.elapsed());
    }
    if !t.is_pci() {
        assert_released(&m, true);
    }
    let dev = p.device(0).unwrap();
    assert_eq!(am_free(&dev), fresh);
    vadd_works(t, &dev);
}

/// Misuse is refused before it reaches the GPU, naming both sides; the device stays
/// healthy.
fn misuse_is_refused_before_the_gpu(t: Transport) {
    let (_m, p) = platform(t, 2);
    let (d0, d1) = (p.device(0).unwrap(), p.device(1).unwrap());
    let prg = Program::load(&d0, VADD.of(t), "vadd").unwrap();
    let a0 = d0.alloc(4096, BufferKind::Device).unwrap();
    let b1 = d1.alloc(4096, BufferKind::Device).unwrap();
    d0.fill(&a0, 0, 4096, 0).unwrap();
    d1.fill(&b1, 0, 4096, 0).unwrap();
    let not_mapped = |what: &str| HcqError::NotMapped {
        what: what.into(),
        owner: 1,
        device: 0,
    };
    let e = prg.launch(&[&a0, &b1, &a0], &[8], dims(8)).unwrap_err();
    assert!(
        e.to_string()
            .contains("argument 1 is memory of GPU 1 not mapped on GPU 0 (Device::map_peer maps it)"),
        "{e}"
    );
    assert_eq!(e, not_mapped("kernel vadd, argument 1"));
    let e = d0.copy(&a0, 0, &b1, 0, 64).unwrap_err();
    assert_eq!(e, not_mapped("the source"));
    assert!(
        e.to_string()
            .contains("the source is memory of GPU 1 not mapped on GPU 0"),
        "{e}"
    );
    assert!(d0.copy_in(&b1, 0, &[0; 16]).is_err());
    // Another platform's memory cannot even be mapped.
    let (_m2, p2) = platform(t, 1);
    let other = p2.device(0).unwrap();
    let x = other.alloc(4096, BufferKind::Device).unwrap();
    let e = prg.launch(&[&a0, &x, &a0], &[8], dims(8)).unwrap_err();
    assert!(
        e.to_string()
            .contains("memory of another platform's GPU 0, not reachable from GPU 0"),
        "{e}"
    );
    let other_platform = |what: &str| HcqError::OtherPlatform {
        what: what.into(),
        owner: 0,
        device: 0,
    };
    assert_eq!(e, other_platform("kernel vadd, argument 1"));
    assert_eq!(d0.map_peer(&x).unwrap_err(), other_platform("a buffer"));
    // A view past its buffer.
    let e = a0.view(4000, 200).err().unwrap();
    assert_eq!(
        e,
        HcqError::OutOfBounds {
            offset: 4000,
            len: 200,
            size: 4096
        }
    );
    assert!(d0.health().is_ok() && d1.health().is_ok());
    // Mapped, the peer buffer is fine.
    d0.map_peer(&b1).unwrap();
    prg.launch_timed(&[&a0, &b1, &a0], &[8], dims(8)).unwrap();
    if t.is_pci() {
        return;
    }

    // A code object for gfx1100 on a gfx1030.
    let m = Arc::new(MockSys::new(MockConfig {
        gpus: vec![GpuProfile::gfx1030()],
        ..MockConfig::default()
    }));
    let p3 = Platform::with_sys(m, Iface::Mock).unwrap();
    let rdna2 = p3.device(0).unwrap();
    let e = Program::load(&rdna2, VADD.gfx1100, "vadd").unwrap_err();
    assert!(
        e.to_string()
            .contains("the code object is for gfx1100 (amdgcn-amd-amdhsa--gfx1100); GPU 0 is gfx1030"),
        "{e}"
    );
    let want = HcqError::CodeObjectTarget {
        processor: "gfx1100".into(),
        target: "amdgcn-amd-amdhsa--gfx1100".into(),
        device: 0,
        arch: "gfx1030".into(),
    };
    assert_eq!(e, want);
    assert!(rdna2.health().is_ok());
}

/// Opening, loading, launching, copying, binding and replaying, then dropping it all,
/// leaves the driver holding nothing, with or without a fault; the GPU opens again.
fn dropping_everything_releases_everything(t: Transport) {
    for fault in [false, true] {
        let (m, p) = platform(t, 1);
        let fresh = am_free(&p.device(0).unwrap());
        {
            let dev = p.device(0).unwrap();
            vadd_works(t, &dev);
            let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
            let a = dev.alloc(4096, BufferKind::Device).unwrap();
            // Written before the kernels read it (under the sanitizer a read of VRAM
            // nothing wrote stops the kernel).
            dev.fill(&a, 0, 4096, 0).unwrap();
            let mut q = dev.compute_queue();
            q.exec(
                &prg,
                &KernArgs::new().buffer(&a).buffer(&a).buffer(&a).u32(16),
                dims(16),
            )
            .unwrap();
            let bound = dev.bind(&q).unwrap();
            bound.submit(&Bindings::new()).unwrap();
            let mut g = Graph::new();
            let k = g
                .exec(
                    &prg,
                    &KernArgs::new().buffer(&a).buffer(&a).buffer(&a).u32(16),
                    dims(16),
                    &[],
                )
                .unwrap();
            g.copy(&dev, a.va() + 2048, a.va(), 1024u32, &[k]).unwrap();
            let g = g.bind().unwrap();
            g.replay(&Bindings::new()).unwrap();
            if fault {
                let bufs = [a.clone(), a.clone(), a.clone()];
                let (e, _) = faulting_vadd(t, &m, &prg, &bufs, 16);
                assert!(matches!(e, HcqError::DeviceFault { .. }), "{e:?}");
            } else {
                dev.synchronize().unwrap();
            }
            drop((g, bound, q, a, prg, dev));
        }
        match t {
            Transport::Kfd | Transport::KfdAql | Transport::KfdGfx1201 => {
                drop(p);
                assert_released(&m, false);
                let p = Platform::with_sys(m.clone(), Iface::Mock).unwrap();
                if !fault {
                    vadd_works(t, &p.device(0).unwrap());
                }
            }
            Transport::Pci | Transport::PciGfx1201 => {
                // The platform keeps the GPU booted: a new device finds what the
                // first had, and works, fault or not.
                let dev = p.device(0).unwrap();
                assert_eq!(am_free(&dev), fresh);
                vadd_works(t, &dev);
                drop((dev, p));
                assert_eq!(m.stats().open_fds, 0, "{:?}", m.stats());
            }
        }
    }
}

/// A fault the driverless transport's GPU latches after a device read and cleared its
/// own (a dispatch of that device still finishing its workgroups can latch one) is
/// not the next device's: a new device on the booted GPU starts with none latched.
#[test]
fn a_new_driverless_device_does_not_inherit_a_latched_fault() {
    for t in [Transport::Pci, Transport::PciGfx1201] {
        let (m, p) = platform(t, 1);
        vadd_works(t, &p.device(0).unwrap());
        // The GPU latches a fault at an address no device mapped, as an engine's
        // failed translation does.
        let latched = m.pci_translate(
            0,
            amd_mockgpu::pci::gmc::Hub::Gc,
            UNMAPPED,
            amd_mockgpu::pci::gmc::Access::Read,
        );
        assert!(matches!(latched, Some(Err(_))), "{latched:?}");
        // (Asked at once: a wait asks only once it has waited a while.)
        let dev = p.device(0).unwrap();
        dev.health().unwrap();
        vadd_works(t, &dev);
    }
}

/// One-lane workgroups reading and writing a steady stride make the interpreter
/// prefetch lines two workgroups ahead, past the buffers' ends for the last ones: on
/// the driverless transport that latches no fault (the device stays healthy) and the
/// results are right.
#[test]
fn prefetches_past_the_buffers_latch_no_fault() {
    for t in [Transport::Pci, Transport::PciGfx1201] {
        let (_m, p) = platform(t, 1);
        let dev = p.device(0).unwrap();
        let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
        // vadd's element is group × 256 + lane: one lane a group, 1 KiB apart.
        let groups = 8u32;
        let n = groups as usize * 256;
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let bufs: Vec<Buffer> = (0..3).map(|_| dev.alloc(n * 4, BufferKind::Device).unwrap()).collect();
        dev.copy_in(&bufs[0], 0, &floats(&a)).unwrap();
        dev.copy_in(&bufs[1], 0, &floats(&a)).unwrap();
        let one_lane = LaunchDims {
            global: [groups, 1, 1],
            local: [1, 1, 1],
        };
        prg.launch_timed(&[&bufs[0], &bufs[1], &bufs[2]], &[n as u32], one_lane)
            .unwrap();
        dev.health().unwrap();
        let mut out = vec![0u8; n * 4];
        dev.copy_out(&mut out, &bufs[2], 0).unwrap();
        let got = out.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        for (i, v) in got.enumerate() {
            let want = if i % 256 == 0 { 2.0 * i as f32 } else { 0.0 };
            assert_eq!(v, want, "{t:?} element {i}");
        }
    }
}

/// One faulting load is one fault: the interpreter's whole-span attempts before the
/// lane that faults latch nothing, so the driverless transport's report has the
/// mapping error without MORE_FAULTS (bit 0 of the status).
#[test]
fn one_faulting_load_latches_one_fault() {
    let t = Transport::Pci;
    let (m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let bufs: Vec<Buffer> = (0..3).map(|_| dev.alloc(64, BufferKind::Device).unwrap()).collect();
    let (e, _) = faulting_vadd(t, &m, &prg, &bufs, 16);
    let HcqError::DeviceFault { report, .. } = e else {
        panic!("{e:?}");
    };
    let mmu: Vec<&String> = report.iter().filter(|l| l.starts_with("MMU fault")).collect();
    assert_eq!(mmu.len(), 1, "{report:?}");
    assert!(
        mmu[0].contains("STATUS: 0x100 0x100000 (read, mapping error)"),
        "{report:?}"
    );
}

/// Many threads submitting across the timeline's restart: no error, every value once.
fn the_timeline_wraps_under_concurrent_submitters(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    dev.set_timeline_next_for_test(TIMELINE_WRAP - 50).unwrap();
    let threads = 6;
    let per = 60;
    let results: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let dev = dev.clone();
                s.spawn(move || {
                    let mut seen = Vec::new();
                    for _ in 0..per {
                        let v = dev.submit_ordered(false, |_| Ok(())).unwrap();
                        dev.wait_timeline(v).unwrap();
                        seen.push(v);
                    }
                    seen
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Values are logical (epoch in the high half): distinct, increasing per thread,
    // and the run crossed the GPU value's restart.
    let mut all: Vec<u64> = results.iter().flatten().copied().collect();
    all.sort_unstable();
    let n = all.len();
    all.dedup();
    assert_eq!(all.len(), n, "a value was handed out twice");
    assert_eq!(n, threads * per);
    assert!(
        all.iter().any(|v| v >> 32 == 0) && all.iter().any(|v| v >> 32 == 1),
        "{all:?}"
    );
    for r in &results {
        assert!(r.windows(2).all(|w| w[0] < w[1]), "{r:?}");
    }
    let h = dev.timeline_handle().unwrap();
    assert_eq!((h.last.epoch, h.last.value), (1, all[n - 1] & 0xffff_ffff));
    dev.synchronize().unwrap();
}

/// The largest launch sizes are errors, not panics (this runs in a debug build).
fn the_largest_launch_sizes_are_errors(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let a = dev.alloc(4096, BufferKind::Device).unwrap();
    for axis in 0..3 {
        // A grid of 2^32 - 1 single work-item groups is a valid launch; these are not.
        for (g, l, want) in [
            (u32::MAX, 2, LaunchLimit::Total32),
            (1, u32::MAX, LaunchLimit::Workgroup16),
            (u32::MAX, 256, LaunchLimit::Total32),
            (1 << 24, 256, LaunchLimit::Total32),
            (65536, 65536, LaunchLimit::Workgroup16),
            (0, 1, LaunchLimit::ZeroSize),
        ] {
            let mut d = LaunchDims {
                global: [1, 1, 1],
                local: [1, 1, 1],
            };
            d.global[axis] = g;
            d.local[axis] = l;
            let r = prg.launch(&[&a, &a, &a], &[1], d);
            match r {
                Err(HcqError::LaunchDims {
                    kernel,
                    grid,
                    workgroup,
                    limit,
                }) => {
                    assert_eq!(kernel, "vadd");
                    assert_eq!(grid, d.global.map(u64::from), "{d:?}");
                    assert_eq!(workgroup, d.local.map(u64::from), "{d:?}");
                    assert_eq!(limit, want, "{d:?}");
                }
                other => panic!("{d:?}: {other:?}"),
            }
        }
    }
    assert!(dev.health().is_ok());
}

/// The k-th allocation or queue creation failing, for every k, while opening a device
/// and running vadd: a typed error each time, and nothing leaks.
#[test]
fn every_allocation_and_queue_creation_failing_in_turn() {
    let m = Arc::new(MockSys::new(MockConfig::gfx1100s(1)));
    let run = |m: &Arc<MockSys>| -> amd_hcq::Result<()> {
        let p = Platform::with_sys(m.clone(), Iface::Mock)?;
        let dev = p.device(0)?;
        let prg = Program::load(&dev, VADD.gfx1100, "vadd")?;
        let n = 64;
        let bufs = (0..3)
            .map(|_| dev.alloc(n * 4, BufferKind::Device))
            .collect::<amd_hcq::Result<Vec<_>>>()?;
        dev.copy_in(&bufs[0], 0, &floats(&[1.0; 64]))?;
        prg.launch_timed(&[&bufs[0], &bufs[0], &bufs[1]], &[n as u32], dims(n as u32))?;
        let mut out = vec![0u8; n * 4];
        dev.copy_out(&mut out, &bufs[1], 0)?;
        assert_eq!(out, floats(&[2.0; 64]));
        Ok(())
    };
    let mut failures = 0;
    for (queue, errno) in [(false, Errno::ENOMEM), (false, Errno::EINVAL), (true, Errno::ENOSPC)] {
        for k in 0.. {
            if queue {
                m.fail_queue_creation_after(k, errno);
            } else {
                m.fail_alloc_after(k, errno);
            }
            let r = run(&m);
            let reached = !m.clear_injections();
            assert_released(&m, false);
            if !reached {
                r.unwrap();
                break;
            }
            match r {
                Err(HcqError::Transport(_)) => failures += 1,
                // The scratch buffer's allocation, named with its size.
                Err(HcqError::ScratchAlloc { bytes, per_lane, .. }) => {
                    assert!(bytes > 0 && per_lane > 0, "{bytes} {per_lane}");
                    failures += 1
                }
                other => panic!("failure {k} ({errno}, queue {queue}): {other:?}"),
            }
        }
    }
    assert!(failures >= 10, "{failures}");
}

/// A failed allocation says how much of which memory.
fn allocation_failures_name_the_size_and_kind(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let uncached = match t {
        Transport::Kfd | Transport::KfdAql | Transport::KfdGfx1201 => "uncached GTT memory",
        Transport::Pci | Transport::PciGfx1201 => "uncached VRAM",
    };
    for (kind, name) in [
        (BufferKind::Host, "host memory"),
        (BufferKind::Device, "VRAM"),
        (BufferKind::Uncached, uncached),
        (BufferKind::DeviceCpuVisible, "host-visible VRAM"),
    ] {
        let e = dev.alloc(1 << 40, kind).unwrap_err().to_string();
        assert!(
            e.starts_with("Cannot allocate memory: no memory is available for 1099511627776 bytes of"),
            "{kind:?}: {e}"
        );
        assert!(e.contains(name), "{kind:?}: {e}");
    }
    assert!(dev.alloc(usize::MAX - 10, BufferKind::Host).is_err());
    assert!(dev.health().is_ok());
}
