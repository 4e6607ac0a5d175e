//! Regressions found by the fuzz targets (`fuzz/`): hostile ring contents and kernels
//! stop their queue with an error; they never panic or exhaust the host.

use std::sync::Arc;

use amd_kfd::topology::Visibility;
use amd_kfd::{Kfd, KfdDevice, KfdMemory, KfdQueue, MemoryKind, QueueKind};
use amd_mockgpu::{MockConfig, MockSys, QueueStatus, Rdna3Executor};
use amd_packets::GfxTarget;
use amd_packets::pm4::DispatchInitiator;
use amd_packets::pm4::recipes::Dispatch;

const T: GfxTarget = GfxTarget::Gfx11;

fn setup() -> (Arc<MockSys>, KfdDevice) {
    let m = Arc::new(MockSys::new(MockConfig::gfx1100s(1).inline()));
    let mut exec = Rdna3Executor::default();
    exec.max_instructions = 4096;
    m.set_kernel_executor(Box::new(exec));
    let kfd = Kfd::open_with(m.clone(), &Visibility::all()).unwrap();
    let dev = kfd.device(0).unwrap();
    (m, dev)
}

/// Writes `words` at the start of `q`'s ring and submits them.
fn submit(q: &KfdQueue, words: &[u32]) {
    for (i, w) in words.iter().enumerate() {
        q.ring().write(i * 4, &w.to_le_bytes()).unwrap();
    }
    q.submit(words.len() as u64);
}

/// `s_endpgm`
const S_ENDPGM: u32 = 0xbfb0_0000;

/// A dispatch of one `s_endpgm` kernel, and the memory holding it.
fn dispatch(dev: &KfdDevice, block: [u32; 3], grid: [u32; 3]) -> (KfdMemory, Vec<u32>) {
    let code = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    code.write(0, &S_ENDPGM.to_le_bytes()).unwrap();
    let mut words = Vec::new();
    Dispatch {
        code_addr: code.va() as u64,
        rsrc1: 0x40af_0080,
        rsrc2: 0x9e,
        rsrc3: 0,
        tmpring_size: 0,
        scratch_base: 0,
        user_data: &[],
        block,
        grid,
        initiator: DispatchInitiator::DEFAULT,
    }
    .encode(T, &mut words)
    .unwrap();
    (code, words)
}

/// Found by `mock_rings`: COMPUTE_NUM_THREAD_X/Y/Z of 2^32 - 1 made the interpreter
/// allocate a wave per 32 of 2^64 threads (out of memory; in a debug build the
/// product overflowed).
#[test]
fn a_workgroup_of_more_than_1024_threads_stops_the_queue() {
    let (m, dev) = setup();
    for block in [
        [u32::MAX; 3],
        [u32::MAX, 1, 1],
        [1025, 1, 1],
        [512, 2, 2],
        [0x10_0000, 0x10_0000, 0x10_0000],
    ] {
        let q = dev.create_queue(QueueKind::Compute, 0x1000).unwrap();
        let (_code, words) = dispatch(&dev, block, [1, 1, 1]);
        submit(&q, &words);
        match m.queue_state(q.id()).unwrap().status {
            QueueStatus::Error(e) => assert!(e.contains("more than 1024"), "{block:?}: {e}"),
            s => panic!("{block:?}: {s:?}"),
        }
    }
    // 1024 threads, in any shape, run.
    for block in [[1024, 1, 1], [32, 32, 1], [8, 8, 16]] {
        let q = dev.create_queue(QueueKind::Compute, 0x1000).unwrap();
        let (_code, words) = dispatch(&dev, block, [2, 1, 1]);
        submit(&q, &words);
        let st = m.queue_state(q.id()).unwrap();
        assert_eq!(st.status, QueueStatus::Running, "{block:?}");
        assert_eq!(st.read_ptr, words.len() as u64);
    }
}

/// Found by `mock_rings`: COMPUTE_DIM_X/Y/Z whose product passes 2^64 workgroups
/// overflowed the count of workgroups (a panic in a debug build, a wrong count in a
/// release one).
#[test]
fn a_grid_of_more_than_2_pow_64_workgroups_stops_the_queue() {
    let (m, dev) = setup();
    for grid in [[u32::MAX; 3], [u32::MAX, u32::MAX, 2], [1 << 31, 1 << 31, 4]] {
        let q = dev.create_queue(QueueKind::Compute, 0x1000).unwrap();
        let (_code, words) = dispatch(&dev, [32, 1, 1], grid);
        submit(&q, &words);
        match m.queue_state(q.id()).unwrap().status {
            QueueStatus::Error(e) => assert!(e.contains("more than 2^64"), "{grid:?}: {e}"),
            s => panic!("{grid:?}: {s:?}"),
        }
    }
    // 3 × 2^62 is accepted, and runs until the instruction budget stops it; a grid with a zero dimension runs nothing.
    let q = dev.create_queue(QueueKind::Compute, 0x1000).unwrap();
    let (_code, words) = dispatch(&dev, [32, 1, 1], [1 << 31, 1 << 31, 3]);
    submit(&q, &words);
    match m.queue_state(q.id()).unwrap().status {
        QueueStatus::Error(e) => assert!(!e.contains("more than 2^64"), "{e}"),
        s => panic!("{s:?}"),
    }
    for grid in [[0, u32::MAX, u32::MAX], [u32::MAX, 0, 1]] {
        let q = dev.create_queue(QueueKind::Compute, 0x1000).unwrap();
        let (_code, words) = dispatch(&dev, [32, 1, 1], grid);
        submit(&q, &words);
        let st = m.queue_state(q.id()).unwrap();
        assert_eq!(st.status, QueueStatus::Running, "{grid:?}");
        assert_eq!(st.read_ptr, words.len() as u64);
    }
}
