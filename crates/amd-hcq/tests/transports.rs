//! The runtime's whole-stack work, from the same test code, over both transports:
//! KFD (the mock's `/dev/kfd`) and driverless (the mock's PCI GPU, booted by amd-am
//! with synthetic firmware).

use std::sync::Arc;

use amd_hcq::{BufferKind, Device, Iface, KernArgs, LaunchDims, Platform, Program};
use amd_mockgpu::{MockConfig, MockSys};

const VADD: &[u8] = include_bytes!("../../../tests/kernels/vadd.hsaco");

/// Each transport's platform of one mock GPU, named.
fn platforms() -> Vec<(&'static str, Arc<MockSys>, Platform)> {
    let kfd = Arc::new(MockSys::new(MockConfig::gfx1100s(1)));
    let pci = Arc::new(MockSys::new(MockConfig::pci(1)));
    vec![
        ("KFD", kfd.clone(), Platform::with_sys(kfd, Iface::Mock).unwrap()),
        ("PCI", pci.clone(), Platform::mock_pci_with(pci).unwrap()),
    ]
}

fn each(f: impl Fn(&str, &Arc<MockSys>, &Device)) {
    for (name, m, p) in platforms() {
        let dev = p.device(0).unwrap_or_else(|e| panic!("{name}: {e}"));
        f(name, &m, &dev);
    }
}

fn floats(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn vadd_with_copies_in_and_out() {
    each(|name, _, dev| {
        let prg = Program::load(dev, VADD, "vadd").unwrap();
        let n = 5000usize;
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
        let (ba, bb, bc) = (
            dev.alloc(n * 4, BufferKind::Device).unwrap(),
            dev.alloc(n * 4, BufferKind::Device).unwrap(),
            dev.alloc(n * 4, BufferKind::Device).unwrap(),
        );
        dev.copy_in(&ba, 0, &floats(&a)).unwrap();
        dev.copy_in(&bb, 0, &floats(&b)).unwrap();
        let args = KernArgs::new().buffer(&ba).buffer(&bb).buffer(&bc).u32(n as u32);
        let done = prg.enqueue(&args, LaunchDims::linear(n as u32, 256)).unwrap();
        dev.wait_timeline(done).unwrap_or_else(|e| panic!("{name}: {e}"));
        let c: Vec<f32> = dev.copy_out_vec(&bc, 0, n).unwrap();
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "{name}: element {i}");
        }
    });
}

fn pattern(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[test]
fn copies_of_every_kind_and_size() {
    each(|name, _, dev| {
        // Host → device through the staging ring (past one staging buffer),
        // device → device, device → host buffer, back to the CPU.
        let n = (5 << 20) + 12;
        let data = pattern(n, 3);
        let a = dev.alloc(n, BufferKind::Device).unwrap();
        let b = dev.alloc(n, BufferKind::Device).unwrap();
        let h = dev.alloc(n, BufferKind::Host).unwrap();
        dev.copy_in(&a, 0, &data).unwrap();
        dev.wait_timeline(dev.copy(&b, 0, &a, 0, n).unwrap()).unwrap();
        dev.wait_timeline(dev.copy(&h, 0, &b, 4, n - 4).unwrap()).unwrap();
        let mut back = vec![0u8; n];
        dev.copy_out(&mut back, &b, 0).unwrap();
        assert!(back == data, "{name}: device round trip");
        let mut hb = vec![0u8; n - 4];
        h.read(0, &mut hb).unwrap();
        assert!(hb[..] == data[4..], "{name}: into a host buffer");
        // CPU-visible and uncached memory the CPU writes directly.
        for kind in [BufferKind::DeviceCpuVisible, BufferKind::Uncached] {
            let v = dev.alloc(4096, kind).unwrap();
            v.write(0, &data[..4096]).unwrap();
            let d = dev.alloc(4096, BufferKind::Device).unwrap();
            dev.wait_timeline(dev.copy(&d, 0, &v, 0, 4096).unwrap()).unwrap();
            let got: Vec<u8> = dev.copy_out_vec(&d, 0, 4096).unwrap();
            assert!(got[..] == data[..4096], "{name}: {kind:?}");
        }
    });
}

#[test]
fn signals_between_the_cpu_and_both_engines() {
    each(|name, _, dev| {
        let (go, mid, done) = (
            dev.new_signal(0).unwrap(),
            dev.new_signal(0).unwrap(),
            dev.new_signal(0).unwrap(),
        );
        // Compute waits for the CPU, then signals; SDMA waits for compute.
        let mut c = dev.compute_queue();
        c.wait(&go, 1u64).signal(&mid, 2u64);
        let mut s = dev.copy_queue();
        s.wait(&mid, 2u64).signal(&done, 3u64);
        dev.submit_compute(&c).unwrap();
        dev.submit_copy(&s).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!((mid.value(), done.value()), (0, 0), "{name}");
        go.set(1).unwrap();
        done.wait(3).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(mid.value(), 2, "{name}");
        // A wait nobody ends is a timeout, not a fault.
        let e = go.wait_timeout(9, std::time::Duration::from_millis(50)).unwrap_err();
        assert!(matches!(e, amd_hcq::HcqError::Timeout { .. }), "{name}: {e}");
        assert!(dev.health().is_ok(), "{name}");
    });
}

#[test]
fn a_bound_list_and_a_graph_replayed() {
    use amd_hcq::{Bindings, Graph, Sym, Var};
    each(|name, _, dev| {
        // A bound compute list with a symbolic value.
        let (gate, out) = (dev.new_signal(0).unwrap(), dev.new_signal(0).unwrap());
        let step = Var::new("step");
        let mut q = dev.compute_queue();
        q.wait(&gate, &step).signal(&out, Sym::from(&step) * 10u32);
        let bound = dev.bind(&q).unwrap();
        for s in 1..=5u64 {
            let v = bound.submit(&Bindings::from([(&step, s)])).unwrap();
            gate.set(s).unwrap();
            dev.wait_timeline(v).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(out.value(), 10 * s, "{name}");
        }

        // A graph: copy in, vadd, copy out, replayed with new buffers.
        let prg = Program::load(dev, VADD, "vadd").unwrap();
        let n = 3000u32;
        let (x, y, z, hin, hout) = (
            Var::new("x"),
            Var::new("y"),
            Var::new("z"),
            Var::new("hin"),
            Var::new("hout"),
        );
        let bytes = n as usize * 4;
        let mut g = Graph::new();
        let c = g.copy(dev, &x, &hin, bytes as u32, &[]).unwrap();
        let k = g
            .exec(
                &prg,
                &KernArgs::new().buffer_sym(&x).buffer_sym(&y).buffer_sym(&z).u32(n),
                amd_hcq::SymDims::new([n.div_ceil(256), 1, 1], [256u32, 1, 1]),
                &[c],
            )
            .unwrap();
        g.copy(dev, &hout, &z, bytes as u32, &[k]).unwrap();
        let g = g.bind().unwrap();
        let (bx, by, bz) = (
            dev.alloc(bytes, BufferKind::Device).unwrap(),
            dev.alloc(bytes, BufferKind::Device).unwrap(),
            dev.alloc(bytes, BufferKind::Device).unwrap(),
        );
        let ones: Vec<f32> = vec![1.0; n as usize];
        dev.copy_in(&by, 0, &floats(&ones)).unwrap();
        for round in 0..4u32 {
            let a: Vec<f32> = (0..n).map(|i| (i * (round + 1)) as f32).collect();
            let hin_b = dev.alloc(bytes, BufferKind::Host).unwrap();
            hin_b.write(0, &floats(&a)).unwrap();
            let hout_b = dev.alloc(bytes, BufferKind::Host).unwrap();
            let mut vals = Bindings::new();
            vals.buffer(&x, &bx)
                .buffer(&y, &by)
                .buffer(&z, &bz)
                .buffer(&hin, &hin_b)
                .buffer(&hout, &hout_b);
            let ends = g.replay(&vals).unwrap();
            dev.wait_timeline(ends[0]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut got = vec![0u8; bytes];
            hout_b.read(0, &mut got).unwrap();
            assert!(
                got == floats(&a.iter().map(|v| v + 1.0).collect::<Vec<_>>()),
                "{name}: round {round}"
            );
        }
    });
}

#[test]
fn a_fault_is_reported_and_sticky() {
    each(|name, _, dev| {
        dev.set_timeout(std::time::Duration::from_secs(5));
        let dst = dev.alloc(4096, BufferKind::Device).unwrap();
        // A copy from memory the GPU never mapped (a low address: no host mapping on
        // the KFD mock, outside the VM aperture on the PCI GPU).
        let v = dev
            .submit_ordered(true, |w| match w {
                amd_hcq::Work::Copy(q) => q.copy(dst.va(), 0x10_0000u64, 64).map(|_| ()),
                amd_hcq::Work::Compute(_) => unreachable!(),
            })
            .unwrap();
        match dev.wait_timeline(v) {
            Err(amd_hcq::HcqError::DeviceFault { report, .. }) => {
                assert!(report[0].starts_with("MMU fault"), "{name}: {report:?}");
                println!("{name}: {report:?}");
            }
            other => panic!("{name}: {other:?}"),
        }
        assert!(
            matches!(dev.health(), Err(amd_hcq::HcqError::DeviceFault { .. })),
            "{name}"
        );
    });
}

#[test]
fn the_driverless_transport_opens_once_per_gpu_and_again_after() {
    let m = Arc::new(MockSys::new(MockConfig::pci(1)));
    let p = Platform::mock_pci_with(m.clone()).unwrap();
    assert_eq!(p.iface(), Iface::MockPci);
    assert!(p.kfd_handle().is_none());
    let dev = p.device(0).unwrap();
    let props = dev.props().clone();
    // The discovery table's GC info gives the 7900 XTX's properties, as KFD lists them.
    let kfd = Platform::mock(MockConfig::gfx1100s(1)).unwrap().device(0).unwrap();
    let k = kfd.props();
    assert_eq!(
        (props.arch.as_str(), props.gfx_version, props.cu_count, props.lds_size),
        (k.arch.as_str(), k.gfx_version, k.cu_count, k.lds_size)
    );
    // One device at a time drives the GPU's queues.
    let e = p.device(0).unwrap_err();
    assert!(e.to_string().contains("in use"), "{e}");
    drop(dev);
    // Opened again: the platform keeps the booted GPU.
    let dev = p.device(0).unwrap();
    let x = dev.alloc(4096, BufferKind::Device).unwrap();
    dev.copy_in(&x, 0, &[9u8; 4096]).unwrap();
    let back: Vec<u8> = dev.copy_out_vec(&x, 0, 4096).unwrap();
    assert_eq!(back, vec![9u8; 4096]);
}
