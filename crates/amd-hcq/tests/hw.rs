//! On a machine with an AMD GPU: `cargo test -p amd-hcq --features hw`. Opens the first
//! GPU through `/dev/kfd`, copies data through it and back, and times a transfer.
//! Where there is no KFD GPU, says so and does nothing.
//!
//! With `AMD_IFACE=PCI` as well (as root; see docs/runtime.md, "The driverless transport"),
//! the driverless test takes the first supported GPU from amdgpu, boots it and runs
//! vadd. Without that variable it does nothing: taking the GPU away from its driver
//! must be asked for.
#![cfg(feature = "hw")]

mod common;

use amd_hcq::{BufferKind, Platform};

#[test]
fn copies_round_trip_on_the_first_gpu() {
    let p = match Platform::kfd() {
        Ok(p) if p.device_count() > 0 => p,
        Ok(_) | Err(_) => {
            eprintln!("skipped: no AMD GPU through /dev/kfd here");
            return;
        }
    };
    let dev = p.device(0).expect("open GPU 0");
    eprintln!("GPU 0: {}", dev.props().arch);
    let data: Vec<u8> = (0..(9 << 20)).map(|i| (i * 7 + 3) as u8).collect();
    let buf = dev.alloc(data.len(), BufferKind::Device).expect("VRAM");
    dev.copy_in(&buf, 0, &data).expect("copy in");
    let mut back = vec![0u8; data.len()];
    dev.copy_out(&mut back, &buf, 0).expect("copy out");
    assert!(back == data);
    dev.invalidate_caches().expect("cache invalidation");

    // Signals across both queues, and a launch where the code object fits the GPU.
    let sig = dev.new_signal(0).expect("signal");
    let mut q = dev.copy_queue();
    q.signal(&sig, 5);
    dev.submit_copy(&q).expect("submit");
    sig.wait(5).expect("SDMA signal");
    if dev.props().arch == "gfx1100" {
        let prg = amd_hcq::Program::load(&dev, VADD, "vadd").expect("vadd");
        let n = 1 << 16;
        let ones: Vec<u8> = (0..n).flat_map(|_| 1.5f32.to_le_bytes()).collect();
        let (a, c) = (
            dev.alloc(n * 4, BufferKind::Device).unwrap(),
            dev.alloc(n * 4, BufferKind::Device).unwrap(),
        );
        dev.copy_in(&a, 0, &ones).unwrap();
        let dims = amd_hcq::LaunchDims {
            global: [(n / 256) as u32, 1, 1],
            local: [256, 1, 1],
        };
        let t = prg.launch_timed(&[&a, &a, &c], &[n as u32], dims).expect("launch");
        eprintln!("vadd of {n} floats: {t:?} GPU time");
        let out = common::download(&dev, &c, n);
        assert!(out.iter().all(|&w| f32::from_bits(w) == 3.0));
    }
}

/// The driverless transport on a real 7900 XTX: take it from amdgpu, boot it with the
/// installed firmware, run vadd, let `fini` leave it for the next boot.
#[test]
fn driverless_vadd_on_the_first_pci_gpu() {
    if std::env::var("AMD_IFACE").ok().as_deref() != Some("PCI") {
        eprintln!("skipped: set AMD_IFACE=PCI (as root) to take the GPU from amdgpu and boot it driverless");
        return;
    }
    let p = match Platform::pci() {
        Ok(p) if p.device_count() > 0 => p,
        Ok(_) => {
            eprintln!("skipped: no supported AMD GPU on the PCI bus");
            return;
        }
        Err(e) => panic!("scanning the PCI bus: {e}"),
    };
    let dev = p
        .device(0)
        .expect("take and boot GPU 0 (needs root: see docs/runtime.md)");
    eprintln!("GPU 0 (driverless): {}", dev.props().arch);
    assert_eq!(dev.props().arch, "gfx1100", "the committed vadd is for gfx1100");
    let prg = amd_hcq::Program::load(&dev, VADD, "vadd").expect("vadd");
    let n = 1usize << 20;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let bufs: Vec<_> = (0..3).map(|_| dev.alloc(n * 4, BufferKind::Device).unwrap()).collect();
    dev.copy_in_slice(&bufs[0], 0, &a).unwrap();
    dev.copy_in_slice(&bufs[1], 0, &a).unwrap();
    let args = amd_hcq::KernArgs::new()
        .buffer(&bufs[0])
        .buffer(&bufs[1])
        .buffer(&bufs[2])
        .u32(n as u32);
    let t = std::time::Instant::now();
    dev.wait_timeline(prg.enqueue(&args, amd_hcq::LaunchDims::linear(n as u32, 256)).unwrap())
        .expect("vadd on the driverless transport");
    eprintln!("vadd of {n} floats: {:?} including the launch", t.elapsed());
    let out: Vec<f32> = dev.copy_out_vec(&bufs[2], 0, n).unwrap();
    assert!(out.iter().zip(&a).all(|(c, x)| *c == 2.0 * x));
}

const VADD: &[u8] = include_bytes!("../../../tests/kernels/vadd.hsaco");
