//! On a machine with an AMD GPU: `cargo test -p amd-hcq --features hw`. Opens the first
//! GPU through `/dev/kfd`, copies data through it and back, and times a transfer.
//! Where there is no KFD GPU, says so and does nothing.
#![cfg(feature = "hw")]

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
        let mut out = vec![0u8; n * 4];
        dev.copy_out(&mut out, &c, 0).unwrap();
        assert!(
            out.chunks(4)
                .all(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]]) == 3.0)
        );
    }
}

const VADD: &[u8] = include_bytes!("../../../tests/kernels/vadd.hsaco");
