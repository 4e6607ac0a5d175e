//! The engines, driven through the real `amd-kfd` transport with rings filled by the
//! `amd-packets` encoders.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use amd_kfd::topology::Visibility;
use amd_kfd::{CwsrSizes, Kfd, KfdDevice, KfdMemory, KfdQueue, MemoryKind, QueueKind};
use amd_mockgpu::{ExecMode, GpuProfile, MemoryFault, MockConfig, MockSys, QueueStatus};
use amd_packets::GfxTarget;
use amd_packets::pm4::recipes::{self, Dispatch, Signal};
use amd_packets::pm4::{self, DispatchInitiator, IndirectBuffer, ReleaseMem, WaitRegMem};
use amd_packets::sdma::{
    self, Atomic, ConstFill, CopyLinear, Fence, GcrReq, Indirect, PollRegmem, SdmaNop, Timestamp, Trap,
};
use amd_packets::testing::sample_dispatch;
use common::{kfd_gpus, xorshift64};

const T: GfxTarget = GfxTarget::Gfx11;

/// A queue and where the next packet goes (dwords for PM4, bytes for SDMA).
struct Ring {
    q: KfdQueue,
    put: u64,
    bytes: usize,
}

impl Ring {
    fn new(dev: &KfdDevice, kind: QueueKind, bytes: usize) -> Self {
        Ring {
            q: dev.create_queue(kind, bytes).unwrap(),
            put: 0,
            bytes,
        }
    }

    /// The ring's length (its buffer may be longer: allocations are whole pages).
    fn ring_dwords(&self) -> u64 {
        self.bytes as u64 / 4
    }

    /// Writes `words` at the put position (wrapping) and rings the doorbell.
    fn submit(&mut self, words: &[u32]) {
        let sdma = self.q.kind() == QueueKind::Sdma;
        let mut pos = if sdma { self.put / 4 } else { self.put };
        for &w in words {
            let at = (pos % self.ring_dwords()) as usize * 4;
            self.q.ring().write(at, &w.to_le_bytes()).unwrap();
            pos += 1;
        }
        self.put = if sdma { pos * 4 } else { pos };
        self.q.submit(self.put);
    }

    fn dword_pos(&self) -> u64 {
        if self.q.kind() == QueueKind::Sdma {
            self.put / 4
        } else {
            self.put
        }
    }
}

fn load_u32(mem: &KfdMemory, off: usize) -> u32 {
    let mut b = [0u8; 4];
    mem.read(off, &mut b).unwrap();
    u32::from_le_bytes(b)
}

fn load_u64(mem: &KfdMemory, off: usize) -> u64 {
    let mut b = [0u8; 8];
    mem.read(off, &mut b).unwrap();
    u64::from_le_bytes(b)
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// The dwords `f` encodes.
fn pm4<R>(f: impl FnOnce(&mut Vec<u32>) -> R) -> Vec<u32> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

#[test]
fn signals_timestamps_and_events_in_both_modes() {
    for mode in [ExecMode::Inline, ExecMode::Threaded] {
        let (m, _kfd, devs) = kfd_gpus(1, mode);
        let dev = &devs[0];
        let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
        let s = sig.va() as u64;
        let mut c = Ring::new(dev, QueueKind::Compute, 0x10000);
        let mut d = Ring::new(dev, QueueKind::Sdma, 0x10000);
        c.submit(&pm4(|b| {
            ReleaseMem::timestamp(s + 8).encode(T, b);
            Signal {
                address: s,
                value: 1,
                event: Some((dev.queue_event_mailbox(), dev.queue_event().id)),
            }
            .encode(T, b);
            ReleaseMem::timestamp(s + 16).encode(T, b);
        }));
        // The timeline's interrupt wakes a sleeper through the event mailbox.
        assert!(dev.sleep(5000).unwrap(), "{mode:?}: the queue event fired");
        wait_for("the compute signal", || load_u32(&sig, 0) == 1);
        wait_for("the second timestamp", || load_u64(&sig, 16) != 0);
        let (t1, t2) = (load_u64(&sig, 8), load_u64(&sig, 16));
        assert!(t1 > 0 && t1 <= t2, "{t1} {t2}");
        assert_eq!(
            m.queue_state(c.q.id()).unwrap().read_ptr,
            c.put,
            "read pointer published in dwords"
        );

        d.submit(&pm4(|b| {
            Timestamp::new(s + 24).unwrap().encode(T, b);
            Fence::new(s + 4, 7).encode(T, b);
        }));
        wait_for("the SDMA fence", || load_u32(&sig, 4) == 7);
        let t3 = load_u64(&sig, 24);
        assert!(t3 >= t2, "SDMA and compute share one clock: {t2} {t3}");
        let st = m.queue_state(d.q.id()).unwrap();
        assert_eq!(st.read_ptr, d.put, "SDMA read pointer in bytes");
        assert_eq!(st.status, QueueStatus::Running);
        // A trap with the event's id fires it too, once its mailbox is written.
        d.submit(&pm4(|b| {
            Fence::new(dev.queue_event_mailbox(), dev.queue_event().id).encode(T, b);
            Trap::new(dev.queue_event().id).unwrap().encode(T, b);
        }));
        assert!(dev.sleep(5000).unwrap(), "{mode:?}: the SDMA trap fired the event");
        // An interrupt whose mailbox was not written does not fire the event.
        d.submit(&pm4(|b| Trap::new(dev.queue_event().id).unwrap().encode(T, b)));
        wait_for("the bare trap", || m.queue_state(d.q.id()).unwrap().read_ptr == d.put);
        assert!(!dev.sleep(0).unwrap());
    }
}

#[test]
fn waits_between_queues_and_gpus() {
    let (_m, _kfd, devs) = kfd_gpus(2, ExecMode::Threaded);
    let shared = devs[0].alloc(4096, MemoryKind::UNCACHED).unwrap();
    devs[1].map(&shared).unwrap();
    let s = shared.va() as u64;
    let mut c0 = Ring::new(&devs[0], QueueKind::Compute, 0x1000);
    let mut d0 = Ring::new(&devs[0], QueueKind::Sdma, 0x1000);
    let mut c1 = Ring::new(&devs[1], QueueKind::Compute, 0x1000);

    // GPU0 compute waits for GPU1, which waits for GPU0's SDMA, which waits for the host.
    c0.submit(&pm4(|b| {
        WaitRegMem::memory_ge(s + 4, 2).encode(T, b);
        ReleaseMem::signal(s + 8, 3).encode(T, b);
    }));
    c1.submit(&pm4(|b| {
        WaitRegMem::memory_ge(s, 1).encode(T, b);
        ReleaseMem::signal(s + 4, 2).encode(T, b);
    }));
    d0.submit(&pm4(|b| {
        PollRegmem::memory_ge(s + 12, 9).encode(T, b);
        Fence::new(s, 1).encode(T, b);
    }));
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(
        [load_u32(&shared, 0), load_u32(&shared, 4), load_u32(&shared, 8)],
        [0, 0, 0],
        "all blocked"
    );
    // The host releases the chain with a plain store; nothing rings.
    shared.write(12, &9u32.to_le_bytes()).unwrap();
    wait_for("the chain of waits", || load_u32(&shared, 8) == 3);
    assert_eq!([load_u32(&shared, 0), load_u32(&shared, 4)], [1, 2]);
}

#[test]
fn copies_from_one_byte_to_64_mib() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Threaded);
    let dev = &devs[0];
    let max = 64 << 20;
    let src = dev.alloc(max + 8192, MemoryKind::HOST).unwrap();
    let dst = dev.alloc(max + 8192, MemoryKind::DEVICE_CPU_VISIBLE).unwrap();
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let mut next = xorshift64(0x1234_5678);
    let data: Vec<u8> = (0..max + 8192).map(|_| next() as u8).collect();
    src.write(0, &data).unwrap();
    let mut d = Ring::new(dev, QueueKind::Sdma, 0x10000);
    for (i, &(size, so, dof)) in [
        (1usize, 0usize, 0usize),
        (3, 1, 3),
        (4097, 5, 2),
        ((4 << 20) + 5, 7, 1),
        (max, 0, 0),
    ]
    .iter()
    .enumerate()
    {
        let (s, t) = (src.va() as u64 + so as u64, dst.va() as u64 + dof as u64);
        let value = i as u32 + 1;
        d.submit(&pm4(|b| {
            CopyLinear::encode_split(T, t, s, size as u64, b).unwrap();
            Fence::new(sig.va() as u64, value).encode(T, b);
        }));
        wait_for("the copy's fence", || load_u32(&sig, 0) == value);
        let mut back = vec![0u8; size];
        dst.read(dof, &mut back).unwrap();
        assert!(back == data[so..so + size], "copy of {size} bytes differs");
    }
    // A fill, then the byte after it untouched.
    d.submit(&pm4(|b| {
        ConstFill::new(dst.va() as u64 + 1, 0xa1b2_c3d4, 7)
            .unwrap()
            .encode(T, b);
        Fence::new(sig.va() as u64, 99).encode(T, b);
    }));
    wait_for("the fill", || load_u32(&sig, 0) == 99);
    let mut back = [0u8; 9];
    dst.read(0, &mut back).unwrap();
    assert_eq!(&back[1..8], &[0xd4, 0xc3, 0xb2, 0xa1, 0xd4, 0xc3, 0xb2]);
    assert_eq!(back[8], data[8]);
    assert!(m.queue_state(d.q.id()).unwrap().counters.bytes > max as u64);
}

#[test]
fn packets_straddle_the_ring_end() {
    for kind in [QueueKind::Compute, QueueKind::Sdma] {
        let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Inline);
        let dev = &devs[0];
        let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
        let mut r = Ring::new(dev, kind, 1024); // 256 dwords
        for round in 1..=40u32 {
            // Pad so the next signal packet starts 3 dwords before the end at times.
            let pad = ((253 - r.dword_pos() % 256) % 256).min(if round % 3 == 0 { 200 } else { 0 }) as usize;
            let words = pm4(|b| match kind {
                QueueKind::Compute => {
                    if pad > 0 {
                        pm4::Nop::new(pad).unwrap().encode(T, b);
                    }
                    ReleaseMem::signal(sig.va() as u64, round as u64).encode(T, b);
                }
                QueueKind::Sdma => {
                    if pad > 0 {
                        SdmaNop::new(pad).unwrap().encode(T, b);
                    }
                    Fence::new(sig.va() as u64, round).encode(T, b);
                }
                QueueKind::ComputeAql => unreachable!("PM4 and SDMA rings only"),
            });
            let start = r.dword_pos() % 256;
            r.submit(&words);
            assert_eq!(
                load_u32(&sig, 0),
                round,
                "{kind:?} round {round} (packet at ring dword {start}): {:?}",
                m.queue_state(r.q.id())
            );
        }
        let st = m.queue_state(r.q.id()).unwrap();
        assert_eq!(st.status, QueueStatus::Running);
        assert!(
            r.put / if kind == QueueKind::Sdma { 4 } else { 1 } > 512,
            "wrapped more than twice"
        );
    }
}

/// ROCr's SDMA packets: the user-mode GCR_REQ (sub-op 1) is a cache operation, and
/// SDMA_ATOMIC ADD64 of -1 decrements a signal (how ROCr completes a copy); an atomic
/// operation the mock does not know stops the queue naming it.
#[test]
fn rocr_sdma_atomics_and_user_gcr_requests() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Inline);
    let dev = &devs[0];
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    sig.write(8, &5u64.to_le_bytes()).unwrap();
    let mut d = Ring::new(dev, QueueKind::Sdma, 4096);
    let mut gcr = GcrReq::all(1 << 15 | 1 << 6);
    gcr.user = true;
    d.submit(&pm4(|b| {
        gcr.encode(T, b);
        Atomic::add64(sig.va() as u64 + 8, u64::MAX).unwrap().encode(T, b);
        Atomic::add64(sig.va() as u64 + 8, u64::MAX).unwrap().encode(T, b);
    }));
    assert_eq!(load_u64(&sig, 8), 3, "two decrements");
    let st = m.queue_state(d.q.id()).unwrap();
    assert_eq!((st.status, st.counters.cache_ops), (QueueStatus::Running, 1));
    d.submit(&pm4(|b| {
        Atomic {
            operation: 46,
            ..Atomic::add64(sig.va() as u64 + 8, 1).unwrap()
        }
        .encode(T, b);
    }));
    match m.queue_state(d.q.id()).unwrap().status {
        QueueStatus::Error(e) => assert!(e.contains("SDMA_ATOMIC operation 46"), "{e}"),
        s => panic!("{s:?}"),
    }
    assert_eq!(load_u64(&sig, 8), 3);
}

#[test]
fn indirect_buffers() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Inline);
    let dev = &devs[0];
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let ib = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let s = sig.va() as u64;

    // PM4: ring → IB → nested IB.
    let inner = pm4(|b| {
        ReleaseMem::signal(s + 4, 2).encode(T, b);
    });
    ib.write(2048, zerocopy::IntoBytes::as_bytes(&inner[..])).unwrap();
    let outer = pm4(|b| {
        ReleaseMem::signal(s, 1).encode(T, b);
        IndirectBuffer::new(ib.va() as u64 + 2048, inner.len() as u32)
            .unwrap()
            .encode(T, b);
        ReleaseMem::signal(s + 8, 3).encode(T, b);
    });
    ib.write(0, zerocopy::IntoBytes::as_bytes(&outer[..])).unwrap();
    let mut c = Ring::new(dev, QueueKind::Compute, 4096);
    c.submit(&pm4(|b| {
        IndirectBuffer::new(ib.va() as u64, outer.len() as u32)
            .unwrap()
            .encode(T, b);
        ReleaseMem::signal(s + 12, 4).encode(T, b);
    }));
    assert_eq!([0, 4, 8, 12].map(|o| load_u32(&sig, o)), [1, 2, 3, 4]);
    assert_eq!(m.queue_state(c.q.id()).unwrap().read_ptr, c.put);

    // SDMA: INDIRECT ending on an 8-dword boundary runs; one that does not stops the queue.
    let sdma_ib = pm4(|b| {
        Fence::new(s + 16, 5).encode(T, b);
    });
    ib.write(1024, zerocopy::IntoBytes::as_bytes(&sdma_ib[..])).unwrap();
    let mut d = Ring::new(dev, QueueKind::Sdma, 4096);
    let pad = Indirect::padding_at(d.dword_pos() as usize);
    d.submit(&pm4(|b| {
        if pad > 0 {
            SdmaNop::new(pad).unwrap().encode(T, b);
        }
        Indirect::new(ib.va() as u64 + 1024, sdma_ib.len() as u32)
            .unwrap()
            .encode(T, b);
    }));
    assert_eq!(load_u32(&sig, 16), 5);
    d.submit(&pm4(|b| {
        if Indirect::padding_at(d.dword_pos() as usize) == 0 {
            SdmaNop::new(1).unwrap().encode(T, b);
        }
        Indirect::new(ib.va() as u64 + 1024, sdma_ib.len() as u32)
            .unwrap()
            .encode(T, b);
    }));
    match m.queue_state(d.q.id()).unwrap().status {
        QueueStatus::Error(e) => assert!(e.contains("8-dword boundary"), "{e}"),
        s => panic!("{s:?}"),
    }

    // IBs nested three deep are refused.
    let selfref = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let me = pm4(|b| {
        IndirectBuffer::new(selfref.va() as u64, 4).unwrap().encode(T, b);
    });
    selfref.write(0, zerocopy::IntoBytes::as_bytes(&me[..])).unwrap();
    let mut c2 = Ring::new(dev, QueueKind::Compute, 4096);
    c2.submit(&me);
    match m.queue_state(c2.q.id()).unwrap().status {
        QueueStatus::Error(e) => assert!(e.contains("nested"), "{e}"),
        s => panic!("{s:?}"),
    }
}

#[test]
fn faults_hangs_and_garbage_stop_only_their_queue() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Threaded);
    let dev = &devs[0];
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let s = sig.va() as u64;

    // A copy to memory the GPU has not mapped: the queue faults, the report names it.
    let mut d = Ring::new(dev, QueueKind::Sdma, 4096);
    d.submit(&pm4(|b| {
        CopyLinear::new(0x7f00_1234_0000, s, 64).unwrap().encode(T, b);
        Fence::new(s, 1).encode(T, b);
    }));
    wait_for("the fault", || {
        matches!(m.queue_state(d.q.id()).unwrap().status, QueueStatus::Faulted(_))
    });
    assert_eq!(
        dev.hang_report().unwrap(),
        ["MMU fault: 0x7F0012340000 | NotPresent=1 ReadOnly=0 NoExecute=0 imprecise=0"]
    );
    assert_eq!(load_u32(&sig, 0), 0, "nothing after the fault ran");
    let reason = m.queue_state(d.q.id()).unwrap().stop_reason.unwrap();
    assert!(
        reason.contains(
            "memory fault writing 0x7f0012340000 (page not present) in SDMA_COPY_LINEAR dst = 0x7f0012340000"
        ) && reason.contains("at ring dword 0x0"),
        "{reason}"
    );

    // An injected fault address inside mapped memory.
    m.fault_address(0, s + 0x100);
    let mut c = Ring::new(dev, QueueKind::Compute, 4096);
    c.submit(&pm4(|b| {
        ReleaseMem::signal(s + 0x100, 1).encode(T, b);
    }));
    wait_for("the injected fault", || {
        m.queue_state(c.q.id()).unwrap().status
            == QueueStatus::Faulted(MemoryFault {
                va: s + 0x100,
                not_present: true,
                write: true,
                ..Default::default()
            })
    });

    // Garbage: the queue stops with an error naming the opcode and the ring offset.
    let mut g = Ring::new(dev, QueueKind::Compute, 4096);
    g.submit(&[0xc000_ee00, 1, 2, 3]);
    wait_for("the decode error", || {
        matches!(m.queue_state(g.q.id()).unwrap().status, QueueStatus::Error(_))
    });
    let QueueStatus::Error(e) = m.queue_state(g.q.id()).unwrap().status else {
        unreachable!()
    };
    assert!(e.contains("0xee") && e.contains("ring dword 0x0"), "{e}");

    // A hung queue: its waiter times out; released, it completes.
    let mut h = Ring::new(dev, QueueKind::Compute, 4096);
    assert!(m.hang_queue(h.q.id(), true));
    h.submit(&pm4(|b| {
        Signal {
            address: s + 8,
            value: 5,
            event: Some((dev.queue_event_mailbox(), dev.queue_event().id)),
        }
        .encode(T, b);
    }));
    assert!(!dev.sleep(50).unwrap(), "a hung queue signals nothing");
    assert_eq!(load_u32(&sig, 8), 0);
    m.hang_queue(h.q.id(), false);
    assert!(dev.sleep(5000).unwrap());
    assert_eq!(load_u32(&sig, 8), 5);

    // The process and the other queues are fine.
    let mut ok = Ring::new(dev, QueueKind::Sdma, 4096);
    ok.submit(&pm4(|b| Fence::new(s + 12, 6).encode(T, b)));
    wait_for("a healthy queue", || load_u32(&sig, 12) == 6);
}

#[test]
fn delayed_consumption() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Threaded);
    let dev = &devs[0];
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let mut c = Ring::new(dev, QueueKind::Compute, 4096);
    assert!(m.delay_queue(c.q.id(), Duration::from_millis(40)));
    let t = Instant::now();
    c.submit(&pm4(|b| {
        ReleaseMem::signal(sig.va() as u64, 1).encode(T, b);
    }));
    wait_for("the delayed signal", || load_u32(&sig, 0) == 1);
    assert!(t.elapsed() >= Duration::from_millis(35), "{:?}", t.elapsed());
}

#[test]
fn dispatches_reach_the_kernel_executor_with_their_registers() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Inline);
    // The code address is made up: record the dispatch, run nothing.
    m.set_kernel_executor(Box::new(amd_mockgpu::NoKernels));
    let dev = &devs[0];
    let mut c = Ring::new(dev, QueueKind::Compute, 4096);
    let user = [0x1111, 0x2222];
    c.submit(&pm4(|b| {
        recipes::memory_barrier(T, b);
        Dispatch {
            block: [64, 2, 1],
            ..sample_dispatch(&user)
        }
        .encode(T, b)
        .unwrap();
    }));
    let ds = m.dispatches();
    assert_eq!(ds.len(), 1);
    let d = &ds[0];
    assert_eq!(d.regs.code_addr, 0x7f30_0000_1700);
    assert_eq!(d.regs.rsrc, [0x40bf_0080, 0x9e, 0]);
    assert_eq!(&d.regs.user_data[..2], &user);
    assert_eq!((d.regs.block, d.regs.grid), ([64, 2, 1], [4, 2, 1]));
    assert_eq!((d.regs.tmpring_size, d.regs.scratch_base), (0x10200, 0x7f50_0000_0000));
    assert_eq!(d.regs.initiator, DispatchInitiator::DEFAULT.0);
    let st = m.queue_state(c.q.id()).unwrap();
    assert_eq!(
        (st.counters.dispatches, st.counters.event_writes, st.counters.cache_ops),
        (1, 1, 2)
    );
}

/// Long operations (dispatches) of queues on one GPU take turns: each queue's next
/// starts only after every other queue with one ready has started its own.
#[test]
fn queues_take_turns_at_long_operations() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Threaded);
    m.set_kernel_executor(Box::new(amd_mockgpu::NoKernels));
    let dev = &devs[0];
    let gate = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let g = gate.va() as u64;
    let mut rings: Vec<Ring> = (0..3).map(|_| Ring::new(dev, QueueKind::Compute, 0x4000)).collect();
    // Each queue waits at the gate, then has three dispatches and a signal of its own.
    for (i, r) in rings.iter_mut().enumerate() {
        r.submit(&pm4(|b| {
            WaitRegMem::memory_ge(g, 1).encode(T, b);
            for _ in 0..3 {
                sample_dispatch(&[]).encode(T, b).unwrap();
            }
            ReleaseMem::signal(g + 8 + 4 * i as u64, 1).encode(T, b);
        }));
    }
    std::thread::sleep(Duration::from_millis(10));
    assert!(m.dispatches().is_empty(), "every queue waits at the gate");
    // A plain store opens it: the engine sees it on its next look at the blocked queues.
    gate.write(0, &1u32.to_le_bytes()).unwrap();
    wait_for("the three queues", || (0..3).all(|i| load_u32(&gate, 8 + 4 * i) == 1));
    let mut ids: Vec<u32> = rings.iter().map(|r| r.q.id()).collect();
    let order: Vec<u32> = m.dispatches().iter().map(|d| d.queue).collect();
    // Whichever queue saw the gate open first went first; then each in turn.
    let mut first: Vec<u32> = order.iter().copied().take(3).collect();
    first.sort_unstable();
    ids.sort_unstable();
    assert_eq!(first, ids, "queue ids {order:?}");
    assert_eq!(order, order[..3].repeat(3), "queue ids {order:?}");
}

#[test]
fn a_panicking_kernel_executor_stops_only_its_queue() {
    struct Panics;
    impl amd_mockgpu::KernelExecutor for Panics {
        fn dispatch(
            &mut self,
            _: &amd_mockgpu::GpuMemory<'_>,
            _: &amd_mockgpu::DispatchInfo,
        ) -> Result<(), amd_mockgpu::KernelError> {
            panic!("executor bug")
        }
    }
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Threaded);
    m.set_kernel_executor(Box::new(Panics));
    let dev = &devs[0];
    let mut c = Ring::new(dev, QueueKind::Compute, 4096);
    c.submit(&pm4(|b| {
        Dispatch {
            code_addr: 0x7f30_0000_1700,
            rsrc1: 0x40bf_0080,
            rsrc2: 0x9e,
            rsrc3: 0,
            tmpring_size: 0,
            scratch_base: 0,
            user_data: &[],
            block: [32, 1, 1],
            grid: [1, 1, 1],
            initiator: DispatchInitiator::DEFAULT,
        }
        .encode(T, b)
        .unwrap();
    }));
    let t = Instant::now();
    loop {
        match m.queue_state(c.q.id()).unwrap().status {
            QueueStatus::Error(e) => {
                assert!(e.contains("panicked: executor bug"), "{e}");
                break;
            }
            _ if t.elapsed() > Duration::from_secs(10) => panic!("the queue never stopped"),
            _ => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    // The device thread lives on: another queue still runs.
    m.set_kernel_executor(Box::new(amd_mockgpu::NoKernels));
    let mut c2 = Ring::new(dev, QueueKind::Compute, 4096);
    c2.submit(&pm4(|b| recipes::memory_barrier(T, b)));
    let t = Instant::now();
    while m.queue_state(c2.q.id()).unwrap().read_ptr == 0 {
        assert!(t.elapsed() < Duration::from_secs(10), "the device thread died");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn many_threads_many_submissions_none_lost() {
    let (m, _kfd, devs) = kfd_gpus(2, ExecMode::Threaded);
    let devs = Arc::new(devs);
    let per_thread = 300u32;
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let devs = devs.clone();
            let m2 = m.clone();
            std::thread::spawn(move || {
                let dev = &devs[t % 2];
                let kind = if t < 2 { QueueKind::Compute } else { QueueKind::Sdma };
                let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
                let mut r = Ring::new(dev, kind, 4096);
                for k in 1..=per_thread {
                    let words = pm4(|b| match kind {
                        QueueKind::Compute => {
                            ReleaseMem::signal(sig.va() as u64, k as u64).encode(T, b);
                        }
                        QueueKind::Sdma => {
                            Fence::new(sig.va() as u64, k).encode(T, b);
                        }
                        QueueKind::ComputeAql => unreachable!("PM4 and SDMA rings only"),
                    });
                    r.submit(&words);
                    wait_for("a completion", || load_u32(&sig, 0) == k);
                }
                (r.q.id(), m2.queue_state(r.q.id()).unwrap())
            })
        })
        .collect();
    for h in handles {
        let (id, st) = h.join().unwrap();
        assert_eq!(st.counters.packets, per_thread as u64, "queue {id}: every packet once");
        assert_eq!(st.status, QueueStatus::Running);
        assert!(m.queue_state(id).is_none(), "a destroyed queue is gone from the engine");
    }
}

#[test]
fn gfx1030_runs_the_same_streams() {
    let m = Arc::new(MockSys::new(MockConfig {
        gpus: vec![GpuProfile::gfx1030()],
        mode: ExecMode::Inline,
        ..MockConfig::default()
    }));
    let kfd = Kfd::open_with(m.clone(), &Visibility::all()).unwrap();
    let dev = kfd.device(0).unwrap();
    let t = dev.target();
    assert_eq!(t, GfxTarget::Gfx103);
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let mut d = Ring::new(&dev, QueueKind::Sdma, 4096);
    let mut words = Vec::new();
    Fence::new(sig.va() as u64, 3).encode(t, &mut words);
    d.submit(&words);
    assert_eq!(load_u32(&sig, 0), 3);
    let _ = (sdma::MAX_BYTES_PER_PACKET, words.len());
}

/// How many of the 4 KiB pages of `[va, va + len)` are resident, from
/// `/proc/self/pagemap` (bit 63 of each page's entry: present); `None` where the
/// host does not let the process read it.
fn resident_pages(va: usize, len: usize) -> Option<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open("/proc/self/pagemap").ok()?;
    f.seek(SeekFrom::Start((va / 4096 * 8) as u64)).ok()?;
    let mut buf = vec![0u8; len.div_ceil(4096) * 8];
    f.read_exact(&mut buf).ok()?;
    Some(buf.chunks_exact(8).filter(|e| e[7] & 0x80 != 0).count())
}

/// A compute queue's context-save area (tens of MiB of GPU-only VRAM, which only a
/// preemption writes) is backed as it is touched, so creating the queue costs no
/// zeroing of it; every other buffer (GPU-only VRAM too, which a copy or kernel may
/// sweep right after allocating it) has its pages from the start. A GPU-only buffer
/// of exactly a context-save area's size is backed as touched, and an engine's write
/// makes its page.
#[test]
fn only_context_save_areas_are_backed_as_touched() {
    let m = Arc::new(MockSys::new(MockConfig::default()));
    let kfd = Kfd::open_with(m.clone(), &Visibility::all()).unwrap();
    let dev = kfd.device(0).unwrap();
    let q = dev.create_queue(QueueKind::Compute, 1 << 16).unwrap();
    let (cwsr, size) = m.queues()[0].ctx_save;
    assert!(size >= 40 << 20, "a 7900 XTX's context-save area: {size:#x}");
    let Some(pages) = resident_pages(cwsr as usize, size as usize) else {
        eprintln!("skipped: /proc/self/pagemap cannot be read here");
        return;
    };
    assert!(pages < 512, "{pages} of {} pages resident", size / 4096);
    for kind in [MemoryKind::DEVICE_CPU_VISIBLE, MemoryKind::UNCACHED, MemoryKind::DEVICE] {
        let b = dev.alloc(4 << 20, kind).unwrap();
        assert_eq!(resident_pages(b.va(), 4 << 20), Some(1024), "{kind:?}");
    }
    let bytes = CwsrSizes::for_props(&dev.node().props)
        .unwrap()
        .allocation_size()
        .unwrap();
    let alike = dev.alloc(bytes, MemoryKind::DEVICE).unwrap();
    assert_eq!(resident_pages(alike.va(), bytes), Some(0));
    // Written by an engine, its page appears.
    let t = dev.target();
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let mut d = Ring::new(&dev, QueueKind::Sdma, 4096);
    let mut words = Vec::new();
    Fence::new(alike.va() as u64 + 8192, 5).encode(t, &mut words);
    Fence::new(sig.va() as u64, 6).encode(t, &mut words);
    d.submit(&words);
    let start = Instant::now();
    while load_u32(&sig, 0) != 6 {
        assert!(start.elapsed() < Duration::from_secs(10), "the fences");
        std::thread::yield_now();
    }
    // (A 2 MiB transparent huge page where the host gives one.)
    let touched = resident_pages(alike.va(), bytes).unwrap_or(0);
    assert!((1..=512).contains(&touched), "{touched}");
    drop(q);
}

/// A device thread with nothing to run polls its doorbells for `idle_poll` before it
/// sleeps: work submitted inside that window and after it runs alike, the thread is
/// seen asleep only once the window has passed, and dropping the mock does not wait
/// the window out.
#[test]
fn an_idle_engine_polls_then_sleeps_and_takes_doorbells_either_way() {
    for poll in [Duration::ZERO, Duration::from_micros(300), Duration::from_secs(60)] {
        let m = Arc::new(MockSys::new(MockConfig {
            idle_poll: poll,
            ..MockConfig::gfx1100s(1)
        }));
        let kfd = Kfd::open_with(m.clone(), &Visibility::all()).unwrap();
        let dev = kfd.device(0).unwrap();
        let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
        let mut c = Ring::new(&dev, QueueKind::Compute, 0x10000);
        for (i, pause) in [0, 1, 2000, 0, 5000].into_iter().enumerate() {
            std::thread::sleep(Duration::from_micros(pause));
            c.submit(&pm4(|b| {
                Signal {
                    address: sig.va() as u64,
                    value: i as u64 + 1,
                    event: None,
                }
                .encode(T, b)
            }));
            wait_for("the signal", || load_u32(&sig, 0) == i as u32 + 1);
        }
        if poll < Duration::from_secs(1) {
            // Asleep within the window and the time to get there.
            assert!(m.wait_for_sleeping_gpu(&[0], Duration::from_secs(10)), "{poll:?}");
        } else {
            // Still polling: not asleep.
            assert!(!m.wait_for_sleeping_gpu(&[0], Duration::from_millis(50)), "{poll:?}");
        }
        drop((c, sig, dev, kfd));
        let t = Instant::now();
        drop(Arc::into_inner(m).expect("the last reference to the mock"));
        assert!(t.elapsed() < Duration::from_secs(30), "the drop waited the poll out");
    }
}

/// An MI300X in SPX mode (8 XCCs): a compute queue takes one context-save area per
/// XCC (amd-kfd allocates eight, the mock checks for eight), and PRED_EXEC runs the
/// dwords after it where its mask names XCC 0 — the command processor the mock's
/// queue stands for — and skips them where it does not, in an indirect buffer and in
/// the ring; a count past the buffer's end stops the queue.
#[test]
fn an_spx_partition_predicates_packets_by_xcc() {
    let t = GfxTarget::Gfx94;
    let m = Arc::new(MockSys::new(MockConfig {
        mode: ExecMode::Inline,
        gpus: vec![GpuProfile::gfx942_spx()],
        ..MockConfig::default()
    }));
    let kfd = Kfd::open_with(m.clone(), &Visibility::all()).unwrap();
    let dev = kfd.device(0).unwrap();
    let sizes = CwsrSizes::for_props(&dev.node().props).unwrap();
    assert_eq!(sizes.xccs, 8);
    let one = (sizes.ctx_save_restore_size().unwrap() + sizes.debug_memory_size) as usize;
    assert_eq!(sizes.allocation_size().unwrap(), (one * 8).next_multiple_of(4096));
    let sig = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let ib = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let s = sig.va() as u64;
    // Per-XCC signals, as tinygrad 0.14 sets each XCC's scratch base.
    let body = pm4(|b| {
        for xcc in 0..8u32 {
            let write = pm4(|w| {
                ReleaseMem::signal(s + 4 * u64::from(xcc), u64::from(10 + xcc)).encode(t, w);
            });
            pm4::PredExec::new(1 << xcc, write.len() as u16).unwrap().encode(t, b);
            b.extend_from_slice(&write);
        }
        ReleaseMem::signal(s + 64, 99).encode(t, b);
    });
    ib.write(0, zerocopy::IntoBytes::as_bytes(&body[..])).unwrap();
    let mut c = Ring::new(&dev, QueueKind::Compute, 4096);
    let skipped = pm4(|b| {
        ReleaseMem::signal(s + 68, 1).encode(t, b);
    });
    c.submit(&pm4(|b| {
        IndirectBuffer::new(ib.va() as u64, body.len() as u32)
            .unwrap()
            .encode(t, b);
        // In the ring too (the firmware's limit to IBs is not the mock's).
        pm4::PredExec::new(0b10, skipped.len() as u16).unwrap().encode(t, b);
        b.extend_from_slice(&skipped);
        ReleaseMem::signal(s + 72, 2).encode(t, b);
    }));
    let got: Vec<u32> = (0..8).map(|x| load_u32(&sig, 4 * x)).collect();
    assert_eq!(got, [10, 0, 0, 0, 0, 0, 0, 0], "only XCC 0's signal is written");
    assert_eq!(load_u32(&sig, 64), 99);
    assert_eq!([load_u32(&sig, 68), load_u32(&sig, 72)], [0, 2]);
    assert_eq!(m.queue_state(c.q.id()).unwrap().read_ptr, c.put);
    // A predicate past the end of its buffer.
    let short = pm4(|b| {
        pm4::PredExec::new(0b10, 100).unwrap().encode(t, b);
        ReleaseMem::signal(s + 76, 3).encode(t, b);
    });
    ib.write(2048, zerocopy::IntoBytes::as_bytes(&short[..])).unwrap();
    c.submit(&pm4(|b| {
        IndirectBuffer::new(ib.va() as u64 + 2048, short.len() as u32)
            .unwrap()
            .encode(t, b);
    }));
    match m.queue_state(c.q.id()).unwrap().status {
        QueueStatus::Error(e) => assert!(e.contains("PRED_EXEC") && e.contains("past the buffer's end"), "{e}"),
        s => panic!("{s:?}"),
    }
}
