//! AQL queues: HSA packets through the real `amd-kfd` transport, built with the
//! `amd-packets` AQL encoders; what the packet processor does with each kind, and
//! how it stops on bad ones.

mod common;

use std::time::{Duration, Instant};

use amd_kfd::{KfdDevice, KfdMemory, KfdQueue, MemoryKind, QueueKind};
use amd_mockgpu::{ExecMode, MockSys, QueueStatus};
use amd_packets::GfxTarget;
use amd_packets::aql::{
    self, Barrier, FenceScope, Header, KernelDispatch, PACKET_BYTES, PACKET_DWORDS, PacketType, Pm4Ib,
};
use amd_packets::pm4::ReleaseMem;
use common::{kfd_gpus, xorshift64};

const T: GfxTarget = GfxTarget::Gfx11;

/// Where things sit in the test's one buffer.
const KD: usize = 0;
const KERNARG: usize = 0x1000;
const SIGNALS: usize = 0x2000;
const IB: usize = 0x3000;
const RESULT: usize = 0x4000;
const SCRATCH: usize = 0x8000;

/// `kernel_code_properties` bits.
const DISPATCH_PTR: u32 = 1 << 1;
const QUEUE_PTR: u32 = 1 << 2;
const KERNARG_PTR: u32 = 1 << 3;
const DISPATCH_ID: u32 = 1 << 4;
const PRIVATE_SEGMENT_SIZE: u32 = 1 << 6;
const WAVE32: u32 = 1 << 10;

struct Aql {
    q: KfdQueue,
    put: u64,
}

impl Aql {
    fn new(dev: &KfdDevice) -> Self {
        Aql {
            q: dev.create_queue(QueueKind::ComputeAql, 4096).unwrap(),
            put: 0,
        }
    }

    fn slot_addr(&self, index: u64) -> u64 {
        self.q.ring().va() as u64 + (index % self.slots()) * PACKET_BYTES as u64
    }

    fn slots(&self) -> u64 {
        (self.q.ring_size() / PACKET_BYTES) as u64
    }

    /// Writes `words` at the next slot, the header dword last, without ringing.
    fn write(&mut self, words: [u32; PACKET_DWORDS]) -> u64 {
        let at = ((self.put % self.slots()) as usize) * PACKET_BYTES;
        let body: Vec<u8> = words[1..].iter().flat_map(|w| w.to_le_bytes()).collect();
        self.q.ring().write(at + 4, &body).unwrap();
        self.q.ring().write(at, &words[0].to_le_bytes()).unwrap();
        self.put += 1;
        self.put - 1
    }

    /// Writes the packets and rings the doorbell.
    fn submit(&mut self, packets: &[[u32; PACKET_DWORDS]]) {
        for &p in packets {
            self.write(p);
        }
        self.q.submit(self.put);
    }

    /// The `amd_queue_t`'s address.
    fn base(&self) -> u64 {
        self.q.pointers().va() as u64
    }

    fn state(&self, m: &MockSys) -> amd_mockgpu::QueueState {
        m.queue_state(self.q.id()).unwrap()
    }
}

fn u64_at(mem: &KfdMemory, off: usize) -> u64 {
    let mut b = [0u8; 8];
    mem.read(off, &mut b).unwrap();
    u64::from_le_bytes(b)
}

fn put_u64(mem: &KfdMemory, off: usize, v: u64) {
    mem.write(off, &v.to_le_bytes()).unwrap();
}

fn put_u32(mem: &KfdMemory, off: usize, v: u32) {
    mem.write(off, &v.to_le_bytes()).unwrap();
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// Signal `i` of the buffer: an `amd_signal_t` with `value`, its event mailbox and id
/// the device's queue event when `event` is set.
fn signal(dev: &KfdDevice, mem: &KfdMemory, i: usize, value: i64, event: bool) -> u64 {
    let off = SIGNALS + i * aql::signal::BYTES as usize;
    mem.write(off, &[0u8; 64]).unwrap();
    put_u64(mem, off, aql::signal::KIND_USER as u64);
    put_u64(mem, off + 8, value as u64);
    if event {
        put_u64(mem, off + 16, dev.queue_event_mailbox());
        put_u32(mem, off + 24, dev.queue_event().id);
    }
    mem.va() as u64 + off as u64
}

fn signal_value(mem: &KfdMemory, addr: u64) -> i64 {
    u64_at(mem, (addr - mem.va() as u64) as usize + 8) as i64
}

/// A kernel descriptor at `KD` with `properties`, its code 256 bytes on, RSRC2 asking
/// for 9 user SGPRs and workgroup ids x.
fn descriptor(mem: &KfdMemory, properties: u32, group_fixed: u32, private_fixed: u32) -> u64 {
    let mut kd = [0u8; 64];
    kd[0..4].copy_from_slice(&group_fixed.to_le_bytes());
    kd[4..8].copy_from_slice(&private_fixed.to_le_bytes());
    kd[16..24].copy_from_slice(&256i64.to_le_bytes());
    kd[44..48].copy_from_slice(&0x11u32.to_le_bytes());
    kd[48..52].copy_from_slice(&0x2233u32.to_le_bytes());
    // USER_SGPR_COUNT 9, TGID_X_EN, and an LDS_SIZE the packet replaces.
    kd[52..56].copy_from_slice(&(9u32 << 1 | 1 << 7 | 0x1ff << 15).to_le_bytes());
    kd[56..58].copy_from_slice(&(properties as u16).to_le_bytes());
    mem.write(KD, &kd).unwrap();
    mem.va() as u64 + KD as u64
}

fn header(ty: PacketType) -> Header {
    Header::new(ty).barrier().fences(FenceScope::System)
}

fn dispatch(mem: &KfdMemory, kernel_object: u64, completion_signal: u64) -> KernelDispatch {
    KernelDispatch {
        header: header(PacketType::KernelDispatch),
        dimensions: 2,
        workgroup_size: [8, 4, 1],
        grid_size: [20, 8, 1],
        private_segment_size: 16,
        group_segment_size: 1000,
        kernel_object,
        kernarg_address: mem.va() as u64 + KERNARG as u64,
        completion_signal,
    }
}

fn barrier(ty: PacketType, deps: &[u64], completion_signal: u64) -> [u32; PACKET_DWORDS] {
    let mut dep_signals = [0; 5];
    dep_signals[..deps.len()].copy_from_slice(deps);
    Barrier {
        header: header(ty),
        dep_signals,
        completion_signal,
    }
    .to_dwords()
}

/// A PM4-IB packet whose indirect buffer (at `IB + 256 * n`) writes `value` at
/// `RESULT + 4 * n`.
fn pm4_write(mem: &KfdMemory, n: usize, value: u32, completion_signal: u64) -> [u32; PACKET_DWORDS] {
    let mut ib = Vec::new();
    ReleaseMem::signal(mem.va() as u64 + (RESULT + 4 * n) as u64, value as u64).encode(T, &mut ib);
    let bytes: Vec<u8> = ib.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.write(IB + 256 * n, &bytes).unwrap();
    Pm4Ib::new(
        header(PacketType::VendorSpecific),
        mem.va() as u64 + (IB + 256 * n) as u64,
        ib.len() as u32,
        completion_signal,
    )
    .unwrap()
    .to_dwords(T)
}

fn result(mem: &KfdMemory, n: usize) -> u32 {
    let mut b = [0u8; 4];
    mem.read(RESULT + 4 * n, &mut b).unwrap();
    u32::from_le_bytes(b)
}

/// A PM4-IB, a kernel dispatch and a barrier-AND on the two: the dispatch's registers
/// as the firmware builds them, each completion signal decremented (with timestamps
/// and its event), each header invalidated, `read_dispatch_id` past all three.
#[test]
fn dispatch_barrier_and_pm4_packets_complete_as_the_firmware_does() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Inline);
    // The code is made up: record the dispatch, run nothing.
    m.set_kernel_executor(Box::new(amd_mockgpu::NoKernels));
    let dev = &devs[0];
    let mem = dev.alloc(0x10000, MemoryKind::UNCACHED).unwrap();
    let kd = descriptor(
        &mem,
        DISPATCH_PTR | QUEUE_PTR | KERNARG_PTR | DISPATCH_ID | PRIVATE_SEGMENT_SIZE | WAVE32,
        256,
        0,
    );
    let mut q = Aql::new(dev);
    let scratch = mem.va() as u64 + SCRATCH as u64;
    q.q.set_aql_scratch(0x1234, scratch, 64, [1, 2, 3, 4]).unwrap();
    let s1 = signal(dev, &mem, 1, 1, false);
    let s2 = signal(dev, &mem, 2, 1, true);
    let s3 = signal(dev, &mem, 3, 5, false);
    q.submit(&[
        pm4_write(&mem, 0, 7, s1),
        dispatch(&mem, kd, s2).to_dwords(),
        barrier(PacketType::BarrierAnd, &[s1, s2], s3),
    ]);
    assert_eq!(result(&mem, 0), 7, "the PM4 indirect buffer ran");
    assert_eq!([s1, s2, s3].map(|s| signal_value(&mem, s)), [0, 0, 4]);
    assert!(dev.sleep(1000).unwrap(), "the dispatch's signal raised its event");
    let off2 = (s2 - mem.va() as u64) as usize;
    let (start, end) = (u64_at(&mem, off2 + 32), u64_at(&mem, off2 + 40));
    assert!(start > 0 && start <= end, "profiling timestamps {start} {end}");
    let st = q.state(&m);
    assert_eq!(st.status, QueueStatus::Running);
    assert_eq!(st.read_ptr, 3, "read pointer in packets");
    assert_eq!(q.q.read_ptr(), 3, "read_dispatch_id");
    for i in 0..3 {
        let at = i * PACKET_BYTES;
        let mut h = [0u8; 2];
        q.q.ring().read(at, &mut h).unwrap();
        assert_eq!(h[0], PacketType::Invalid as u8, "slot {i}'s header invalidated");
    }

    let ds = m.dispatches();
    assert_eq!(ds.len(), 1);
    let r = &ds[0].regs;
    assert_eq!(r.code_addr, kd + 256);
    // LDS: the packet's 1000 bytes are 2 blocks of 512.
    assert_eq!(r.rsrc, [0x2233, 9 << 1 | 1 << 7 | 2 << 15, 0x11]);
    let lo_hi = |v: u64| [v as u32, (v >> 32) as u32];
    let mut want = Vec::new();
    want.extend(lo_hi(q.slot_addr(1)));
    want.extend(lo_hi(q.base()));
    want.extend(lo_hi(mem.va() as u64 + KERNARG as u64));
    want.extend([1, 0, 16]);
    assert_eq!(
        &r.user_data[..9],
        &want[..],
        "dispatch ptr, queue ptr, kernarg, dispatch id, private size"
    );
    assert_eq!((r.block, r.grid), ([8, 4, 1], [20, 8, 1]));
    assert_eq!(r.groups(), [3, 2, 1], "a partial last workgroup in x");
    let thread_dims = amd_isa::Dispatch::USE_THREAD_DIMENSIONS | amd_isa::Dispatch::PARTIAL_TG_EN;
    assert_eq!(r.initiator & thread_dims, thread_dims);
    assert_eq!((r.tmpring_size, r.scratch_base), (0x1234, scratch));
    assert_eq!(st.counters.dispatches, 1);
}

/// Barriers wait for their signals (OR: any at 0 or less; AND: all; AMD's
/// barrier-value: a masked comparison), and an INVALID
/// header at the write index is waited for; the device thread takes each up when the
/// host changes the memory.
#[test]
fn barriers_and_unpublished_packets_wait() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Threaded);
    let dev = &devs[0];
    let mem = dev.alloc(0x10000, MemoryKind::UNCACHED).unwrap();
    let mut q = Aql::new(dev);
    let a = signal(dev, &mem, 0, 1, false);
    let b = signal(dev, &mem, 1, 1, false);
    q.submit(&[barrier(PacketType::BarrierOr, &[a, b], 0), pm4_write(&mem, 0, 1, 0)]);
    wait_for("the blocked OR", || q.state(&m).status == QueueStatus::Blocked);
    assert_eq!(result(&mem, 0), 0);
    put_u64(&mem, (b - mem.va() as u64) as usize + 8, 0);
    wait_for("the OR on one signal", || result(&mem, 0) == 1);

    q.submit(&[barrier(PacketType::BarrierAnd, &[a, b], 0), pm4_write(&mem, 1, 2, 0)]);
    wait_for("the blocked AND", || q.state(&m).status == QueueStatus::Blocked);
    assert_eq!(result(&mem, 1), 0);
    // A negative (error) value satisfies a barrier, as AMD's firmware takes it.
    put_u64(&mem, (a - mem.va() as u64) as usize + 8, (-1i64) as u64);
    wait_for("the AND on both", || result(&mem, 1) == 2);

    // AMD's barrier-value packet: the signal's value under the mask, compared.
    let bv = aql::BarrierValue {
        header: header(PacketType::VendorSpecific),
        signal: b,
        value: 5,
        mask: 0xff,
        cond: aql::Condition::Eq,
        completion_signal: 0,
    };
    q.submit(&[bv.to_dwords(), pm4_write(&mem, 3, 4, 0)]);
    wait_for("the blocked barrier-value", || {
        q.state(&m).status == QueueStatus::Blocked
    });
    put_u64(&mem, (b - mem.va() as u64) as usize + 8, 0x1_0006);
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(result(&mem, 3), 0, "0x10006 & 0xff is not 5");
    put_u64(&mem, (b - mem.va() as u64) as usize + 8, 0x1_0005);
    wait_for("the barrier-value", || result(&mem, 3) == 4);

    // A packet reserved and announced but not yet published.
    let mut p = pm4_write(&mem, 2, 3, 0);
    let real = p[0];
    p[0] = p[0] & !0xff | PacketType::Invalid as u32;
    let slot = q.write(p);
    q.q.submit(q.put);
    wait_for("the wait on the header", || q.state(&m).status == QueueStatus::Blocked);
    assert_eq!(result(&mem, 2), 0);
    q.q.ring()
        .write(((slot % q.slots()) as usize) * PACKET_BYTES, &real.to_le_bytes())
        .unwrap();
    wait_for("the published packet", || result(&mem, 2) == 3);
    assert_eq!(q.q.read_ptr(), 7);
}

/// A dispatch that needs more scratch than the queue has asks for it through the
/// queue's `queue_inactive_signal` (as ROCr expects) and runs once the runtime has
/// given it and cleared the signal.
#[test]
fn a_dispatch_asks_the_runtime_for_scratch() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Threaded);
    m.set_kernel_executor(Box::new(amd_mockgpu::NoKernels));
    let dev = &devs[0];
    let mem = dev.alloc(0x10000, MemoryKind::UNCACHED).unwrap();
    let kd = descriptor(&mem, KERNARG_PTR | WAVE32, 0, 48);
    let mut q = Aql::new(dev);
    let inactive = signal(dev, &mem, 0, 0, true);
    q.q.pointers()
        .write(aql::queue::QUEUE_INACTIVE_SIGNAL as usize, &inactive.to_le_bytes())
        .unwrap();
    let done = signal(dev, &mem, 1, 1, false);
    let mut d = dispatch(&mem, kd, done);
    d.private_segment_size = 0;
    q.submit(&[d.to_dwords()]);
    assert!(dev.sleep(5000).unwrap(), "the request raised the signal's event");
    assert_eq!(signal_value(&mem, inactive), 0x401, "a wave32 scratch request");
    assert_eq!(q.state(&m).status, QueueStatus::Blocked);
    assert_eq!(q.q.read_ptr(), 0, "read_dispatch_id names the waiting packet");
    assert!(m.dispatches().is_empty());
    // The runtime's answer: scratch of 48 bytes a lane (the descriptor's fixed size),
    // then the signal back at 0.
    q.q.set_aql_scratch(0x40, mem.va() as u64 + SCRATCH as u64, 48, [0; 4])
        .unwrap();
    put_u64(&mem, (inactive - mem.va() as u64) as usize + 8, 0);
    wait_for("the dispatch", || signal_value(&mem, done) == 0);
    assert_eq!(m.dispatches().len(), 1);
    assert_eq!(signal_value(&mem, inactive), 0, "no second request");
}

/// An AQL queue's doorbell slot starts at `u64::MAX` (nothing published), so that a
/// client storing its first packet's index, 0, changes the slot's value: the
/// interposer notices plain doorbell stores by their changes. A second queue made
/// after the page was mapped starts so too.
#[test]
fn aql_doorbells_start_at_nothing_published() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Inline);
    let dev = &devs[0];
    let mem = dev.alloc(0x10000, MemoryKind::UNCACHED).unwrap();
    let slot = |q: &Aql| {
        let (page, len) = m.doorbell_page(0).expect("the doorbell page is mapped");
        let a = q.q.doorbell_addr();
        assert!(a >= page && a + 8 <= page + len);
        // SAFETY: the slot is an aligned qword of the doorbell page, mapped for the
        // mock's life; the mock and the client store it atomically.
        unsafe { &*(a as *const std::sync::atomic::AtomicU64) }.load(std::sync::atomic::Ordering::Acquire)
    };
    let mut first = Aql::new(dev);
    let second = Aql::new(dev);
    assert_eq!((slot(&first), slot(&second)), (u64::MAX, u64::MAX));
    first.submit(&[pm4_write(&mem, 0, 5, 0)]);
    assert_eq!(slot(&first), 0, "the doorbell carries the last packet's index");
    assert_eq!(result(&mem, 0), 5);
}

/// Each malformed packet stops its queue with a reason naming the AQL packet, never
/// a panic; other queues run on.
#[test]
fn bad_packets_stop_the_queue_with_a_reason() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Inline);
    m.set_kernel_executor(Box::new(amd_mockgpu::NoKernels));
    let dev = &devs[0];
    let mem = dev.alloc(0x10000, MemoryKind::UNCACHED).unwrap();
    let good = descriptor(&mem, KERNARG_PTR | WAVE32, 0, 0);
    let d = dispatch(&mem, good, 0);
    let with = |f: &dyn Fn(&mut KernelDispatch)| {
        let mut d = d;
        d.private_segment_size = 0;
        f(&mut d);
        d.to_dwords()
    };
    let mut bad_type = d.to_dwords();
    bad_type[0] = bad_type[0] & !0xff | 9;
    let mut vendor3 = pm4_write(&mem, 0, 1, 0);
    vendor3[0] = vendor3[0] & 0xffff | 3 << 16;
    let mut agent = [0u32; PACKET_DWORDS];
    agent[0] = PacketType::AgentDispatch as u32 | 5 << 16;
    let cases: Vec<(&str, [u32; PACKET_DWORDS], &str)> = vec![
        ("an unknown packet type", bad_type, "type"),
        ("vendor format 3", vendor3, "AMD format"),
        ("an agent dispatch", agent, "agent dispatch"),
        (
            "a misaligned descriptor",
            with(&|d| d.kernel_object = good + 4),
            "64-byte aligned",
        ),
        ("too much LDS", with(&|d| d.group_segment_size = 70_000), "LDS"),
        (
            "scratch with no way to ask",
            with(&|d| d.private_segment_size = 64),
            "queue_inactive_signal",
        ),
    ];
    for (what, packet, needle) in cases {
        let mut q = Aql::new(dev);
        q.submit(&[packet]);
        let st = q.state(&m);
        let reason = st.stop_reason.unwrap_or_default();
        assert!(matches!(st.status, QueueStatus::Error(_)), "{what}: {:?}", st.status);
        assert!(reason.contains("AQL") && reason.contains(needle), "{what}: {reason}");
        assert_eq!(q.q.read_ptr(), 0, "{what}: the bad packet is not consumed");
    }
    // A descriptor nothing is mapped at is a memory fault in the packet.
    let mut q = Aql::new(dev);
    q.submit(&[with(&|d| d.kernel_object = 0x7777_0000_0000)]);
    let st = q.state(&m);
    assert!(matches!(st.status, QueueStatus::Faulted(_)), "{:?}", st.status);
    assert!(st.stop_reason.unwrap().contains("AQL kernel dispatch 0"));
    // The device still runs other queues.
    let mut q = Aql::new(dev);
    q.submit(&[pm4_write(&mem, 1, 9, 0)]);
    assert_eq!(result(&mem, 1), 9);
}

/// Random packets: valid types with random fields, addresses sometimes inside a mapped
/// buffer (descriptors, signals, indirect buffers), sometimes not. The host never
/// panics, and every queue ends consumed, blocked, stopped or faulted.
#[test]
fn random_packets_never_panic_the_host() {
    let (m, _kfd, devs) = kfd_gpus(1, ExecMode::Inline);
    m.set_kernel_executor(Box::new(amd_mockgpu::NoKernels));
    let dev = &devs[0];
    let mem = dev.alloc(0x10000, MemoryKind::UNCACHED).unwrap();
    let mut rng = xorshift64(0x5eed_0a91);
    let base = mem.va() as u64;
    // Random bytes in the buffer: descriptors, signals and IBs read from it are noise.
    let noise: Vec<u8> = (0..0x10000).map(|_| rng() as u8).collect();
    mem.write(0, &noise).unwrap();
    let types = [0u32, 1, 2, 3, 4, 5, 6, 0xff];
    for round in 0..150 {
        let mut q = Aql::new(dev);
        let mut packets = Vec::new();
        for _ in 0..1 + rng() % 4 {
            let mut p = [0u32; PACKET_DWORDS];
            for w in p.iter_mut() {
                *w = rng() as u32;
            }
            // A well-formed header most of the time (a type, the barrier bit, fence
            // scopes 0 to 2), with 1 to 3 dimensions or a vendor format of 0 to 2.
            if rng() % 8 != 0 {
                let ty = types[(rng() % types.len() as u64) as usize];
                let fences = (rng() % 3) as u32 | ((rng() % 3) as u32) << 2;
                p[0] = ty | ((rng() % 2) as u32) << 8 | fences << 9 | ((rng() % 3) as u32) << 16;
                if ty == 2 {
                    p[0] |= 1 << 16;
                    p[2] &= 0xffff;
                }
            }
            // Qword fields pointed into the buffer half the time.
            for k in (2..PACKET_DWORDS).step_by(2) {
                if rng() % 2 == 0 {
                    let a = (base + rng() % 0x10000) & !0x3f;
                    p[k] = a as u32;
                    p[k + 1] = (a >> 32) as u32;
                }
            }
            packets.push(p);
        }
        q.submit(&packets);
        let st = q.state(&m);
        assert!(
            matches!(
                st.status,
                QueueStatus::Running | QueueStatus::Blocked | QueueStatus::Error(_) | QueueStatus::Faulted(_)
            ),
            "round {round}: {:?}",
            st.status
        );
        if matches!(st.status, QueueStatus::Error(_) | QueueStatus::Faulted(_)) {
            assert!(st.stop_reason.is_some(), "round {round}: a stopped queue says why");
        }
    }
}
