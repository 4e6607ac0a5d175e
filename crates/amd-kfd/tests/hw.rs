//! On a machine with an AMD GPU: `cargo test -p amd-kfd --features hw`. Opens the
//! first GPU through the real `/dev/kfd` and allocates, maps and frees one buffer of
//! each kind. Where there is no KFD device, says so and does nothing.
#![cfg(feature = "hw")]

use std::path::Path;
use std::sync::Arc;

use amd_kfd::sys::HostSys;
use amd_kfd::{Kfd, MemoryKind, QueueKind};

#[test]
fn first_gpu_allocates_maps_and_frees_every_kind() {
    if !Path::new(amd_kfd::KFD_PATH).exists() {
        eprintln!(
            "skipped: no {} here (no AMD GPU or no amdgpu driver)",
            amd_kfd::KFD_PATH
        );
        return;
    }
    let kfd = Kfd::open(Arc::new(HostSys)).expect("open /dev/kfd");
    if kfd.gpus().is_empty() {
        eprintln!("skipped: /dev/kfd lists no usable GPU");
        return;
    }
    let dev = kfd.device(0).expect("open GPU 0");
    eprintln!("GPU 0: {} (gpu_id {})", dev.arch(), dev.gpu_id());
    for kind in [
        MemoryKind::DEVICE,
        MemoryKind::DEVICE_CPU_VISIBLE,
        MemoryKind::UNCACHED,
        MemoryKind::HOST,
    ] {
        let mem = match dev.alloc(1 << 20, kind) {
            Ok(m) => m,
            Err(e) if kind == MemoryKind::DEVICE_CPU_VISIBLE => {
                eprintln!("{}: {e}", kind.name());
                continue;
            }
            Err(e) => panic!("{}: {e}", kind.name()),
        };
        if kind.cpu_visible() {
            mem.write(0, &[0x5a; 64]).unwrap();
            let mut back = [0u8; 64];
            mem.read(0, &mut back).unwrap();
            assert_eq!(back, [0x5a; 64]);
        }
    }
    let q = dev.create_queue(QueueKind::Sdma, 0x10000).expect("SDMA queue");
    assert_eq!(q.read_ptr(), 0);
    drop(q);
    assert!(dev.hang_report().unwrap().is_empty());
    assert!(kfd.take_deferred_errors().is_empty());
}
