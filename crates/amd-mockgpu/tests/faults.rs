//! Faults, timeouts and leaks: long kernels and copies do not hold up the driver,
//! runaway work stops when its queue goes, doorbell slots are reused, and a fault's
//! event data and stop reason say what happened.

use std::sync::Arc;
use std::time::Instant;

use amd_kfd::topology::Visibility;
use amd_kfd::{Kfd, KfdDevice, QueueKind};
use amd_mockgpu::{ExecMode, MockConfig, MockSys};

fn setup(n: usize, mode: ExecMode) -> (Arc<MockSys>, Kfd, Vec<KfdDevice>) {
    let m = Arc::new(MockSys::new(MockConfig {
        mode,
        ..MockConfig::gfx1100s(n)
    }));
    let kfd = Kfd::open_with(m.clone(), &Visibility::all()).unwrap();
    let devs = (0..n).map(|i| kfd.device(i).unwrap()).collect();
    (m, kfd, devs)
}

#[test]
fn doorbell_slots_are_reused() {
    let (m, _kfd, devs) = setup(1, ExecMode::Threaded);
    let dev = &devs[0];
    let t = Instant::now();
    // Past the page's 1,024 slots: each destroyed queue gives its slot back.
    for i in 0..2000 {
        let kind = if i % 2 == 0 {
            QueueKind::Sdma
        } else {
            QueueKind::Compute
        };
        let q = dev
            .create_queue(kind, 0x1000)
            .unwrap_or_else(|e| panic!("queue {i}: {e}"));
        drop(q);
    }
    // Live queues take distinct slots, the lowest free first.
    let a = dev.create_queue(QueueKind::Sdma, 0x1000).unwrap();
    let b = dev.create_queue(QueueKind::Sdma, 0x1000).unwrap();
    assert_eq!(b.doorbell_addr() - a.doorbell_addr(), 8);
    drop(a);
    let c = dev.create_queue(QueueKind::Compute, 0x1000).unwrap();
    assert_eq!(
        c.doorbell_addr() + 8,
        b.doorbell_addr(),
        "the freed slot is taken again"
    );
    assert_eq!(m.stats().queues, 2);
    eprintln!("2000 queue create/destroy cycles: {:?}", t.elapsed());
}
