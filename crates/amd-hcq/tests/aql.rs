//! AQL compute queues in the runtime: devices opened with one, lists sent as AQL
//! packets (checked against what the mock's AQL engine saw), the indirect-buffer area
//! reused as it wraps, and what refuses them. (The launch, list, graph and fault tests
//! of `graphs.rs`, `program.rs`, `runtime.rs` and `faults.rs` run on AQL queues too:
//! their `kfd_aql` modules.)

mod common;

use std::sync::Arc;

use amd_hcq::{Bindings, BufferKind, HcqError, Iface, KernArgs, Platform, Program, QueueFormat, SymDims};
use amd_kfd::abi::{KFD_IOC_QUEUE_TYPE_COMPUTE, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL};
use amd_mockgpu::{MockConfig, MockSys};
use common::{Transport, VADD, platform};

fn kfd_mock() -> (Arc<MockSys>, Platform) {
    let m = Arc::new(MockSys::new(MockConfig::gfx1100s(1)));
    let p = Platform::with_sys(m.clone(), Iface::Mock).unwrap();
    (m, p)
}

/// The compute queue of the mock's first GPU.
fn compute_queue(m: &MockSys) -> amd_mockgpu::QueueInfo {
    m.queues()
        .into_iter()
        .find(|q| {
            matches!(
                q.queue_type,
                KFD_IOC_QUEUE_TYPE_COMPUTE | KFD_IOC_QUEUE_TYPE_COMPUTE_AQL
            )
        })
        .expect("a compute queue")
}

#[test]
fn a_device_opens_with_the_compute_queue_format_asked_for() {
    let (m, p) = kfd_mock();
    let dev = p.device_with(0, QueueFormat::Aql).unwrap();
    assert_eq!(dev.queue_format(), QueueFormat::Aql);
    assert_eq!(compute_queue(&m).queue_type, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
    drop(dev);
    let dev = p.device_with(0, QueueFormat::Pm4).unwrap();
    assert_eq!(dev.queue_format(), QueueFormat::Pm4);
    assert_eq!(compute_queue(&m).queue_type, KFD_IOC_QUEUE_TYPE_COMPUTE);
    drop(dev);
    let p = p.with_queue_format(QueueFormat::Aql);
    assert_eq!(p.device(0).unwrap().queue_format(), QueueFormat::Aql);

    // The driverless transport sets up PM4 rings only.
    let (_m, pci) = platform(Transport::Pci, 1);
    match pci.device_with(0, QueueFormat::Aql) {
        Err(e @ HcqError::QueueFormatUnsupported { .. }) => {
            assert!(e.to_string().contains("KFD transport"), "{e}")
        }
        other => panic!("{other:?}"),
    }

    // HCQ_COMPUTE_QUEUE's values.
    assert_eq!(QueueFormat::parse("AQL").unwrap(), QueueFormat::Aql);
    assert_eq!(QueueFormat::parse(" pm4 ").unwrap(), QueueFormat::Pm4);
    assert_eq!(QueueFormat::parse("").unwrap(), QueueFormat::Pm4);
    let e = QueueFormat::parse("hsa").unwrap_err();
    assert!(
        e.to_string().contains("HCQ_COMPUTE_QUEUE") && e.to_string().contains("pm4 or aql"),
        "{e}"
    );
}

/// A list of two dispatches with a barrier and a signal between them goes out as
/// PM4-IB, kernel dispatch, PM4-IB, kernel dispatch, PM4-IB packets; the engine's
/// dispatches are the firmware's (grid in work-items, the kernel's descriptor), the
/// results right, and a symbolic value bound at submit reaches the packet.
#[test]
fn lists_go_as_kernel_dispatch_and_pm4_ib_packets() {
    let (m, p) = kfd_mock();
    let dev = p.device_with(0, QueueFormat::Aql).unwrap();
    let vadd = Program::load(&dev, VADD.gfx1100, "vadd").unwrap();
    let n = 1000u32;
    let a = dev.alloc(4 * n as usize, BufferKind::Host).unwrap();
    let b = dev.alloc(4 * n as usize, BufferKind::Host).unwrap();
    let c = dev.alloc(4 * n as usize, BufferKind::Host).unwrap();
    let d = dev.alloc(4 * n as usize, BufferKind::Host).unwrap();
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    a.write_slice(0, &x).unwrap();
    b.write_slice(0, &x).unwrap();
    let sig = dev.new_signal(0).unwrap();
    let count = amd_hcq::Var::new("count");
    let mut q = dev.compute_queue();
    let dims = || SymDims::new([n.div_ceil(256), 1, 1], [256, 1, 1]);
    // c = a + b; d = c + c over `count` elements, bound at submit.
    q.exec(&vadd, &KernArgs::new().buffer(&a).buffer(&b).buffer(&c).u32(n), dims())
        .unwrap();
    q.memory_barrier();
    q.signal(&sig, 7);
    q.exec(
        &vadd,
        &KernArgs::new().buffer(&c).buffer(&c).buffer(&d).sym_u32(&count),
        dims(),
    )
    .unwrap();
    let before = m.queue_state(compute_queue(&m).id).unwrap().read_ptr;
    dev.wait_timeline(q.submit(&dev, &Bindings::from([(&count, u64::from(n - 10))])).unwrap())
        .unwrap();
    assert_eq!(sig.value(), 7);
    let got: Vec<f32> = d.read_vec(0, n as usize).unwrap();
    for (i, &g) in got.iter().enumerate() {
        let want = if i < (n - 10) as usize { 4.0 * i as f32 } else { 0.0 };
        assert_eq!(g, want, "element {i}");
    }
    let st = m.queue_state(compute_queue(&m).id).unwrap();
    assert_eq!(st.read_ptr - before, 5, "five packets: IB, dispatch, IB, dispatch, IB");
    assert_eq!(st.counters.dispatches, 2);
    let ds = m.dispatches();
    let thread_dims = 1 << 5 | 1 << 1;
    for d in &ds {
        assert_eq!(
            d.regs.initiator & thread_dims,
            thread_dims,
            "USE_THREAD_DIMENSIONS | PARTIAL_TG_EN"
        );
        assert_eq!(
            (d.regs.grid, d.regs.block),
            ([1024, 1, 1], [256, 1, 1]),
            "the grid in work-items"
        );
        assert_eq!(d.regs.code_addr, vadd.code_addr());
    }
    // The kernel-argument pointer (the first user SGPRs: vadd asks for no others) is
    // each dispatch's own block.
    let karg = |k: usize| ds[k].regs.user_data[0] as u64 | (ds[k].regs.user_data[1] as u64) << 32;
    assert_ne!(karg(0), karg(1));
    assert_eq!(karg(0) % 64, 0);
}

/// More PM4 than the indirect-buffer area holds, over many submissions: the area is
/// reused once the packets that read it were consumed, and every list's last signal
/// lands; a single list larger than the area is refused before anything is sent.
#[test]
fn the_indirect_buffer_area_is_reused_as_it_wraps() {
    let (_m, p) = kfd_mock();
    let dev = p.device_with(0, QueueFormat::Aql).unwrap();
    let sig = dev.new_signal(0).unwrap();
    // 4,096 signals of 8 dwords: 128 KiB of PM4 a list; 200 lists, 25 MiB.
    let mut q = dev.compute_queue();
    let v = amd_hcq::Var::new("v");
    for _ in 0..4096 {
        q.signal(&sig, &v);
    }
    let mut last = 0;
    for round in 1..=200u64 {
        last = q.submit(&dev, &Bindings::from([(&v, round)])).unwrap();
    }
    dev.wait_timeline(last).unwrap();
    assert_eq!(sig.value(), 200);
    // 17 MiB in one list.
    let mut big = dev.compute_queue();
    for _ in 0..(17 << 20) / 32 {
        big.signal(&sig, 1);
    }
    match big.submit(&dev, &Bindings::new()) {
        Err(e @ HcqError::ListSize { .. }) => assert!(e.to_string().contains("AQL"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(sig.value(), 200, "nothing of the refused list ran");
}

/// A list with more PM4 between its dispatches than one PM4-IB packet can name (2^20 - 1
/// dwords) goes as two such packets, in order: every signal lands, the last one last.
#[test]
fn pm4_past_one_indirect_buffer_goes_as_two() {
    let (m, p) = kfd_mock();
    let dev = p.device_with(0, QueueFormat::Aql).unwrap();
    let sig = dev.new_signal(0).unwrap();
    let mut q = dev.compute_queue();
    // 132,000 signals of 8 dwords: 1,056,000 dwords.
    let n = 132_000u64;
    for i in 1..=n {
        q.signal(&sig, i);
    }
    let before = m.queue_state(compute_queue(&m).id).unwrap().read_ptr;
    dev.wait_timeline(q.submit(&dev, &Bindings::new()).unwrap()).unwrap();
    assert_eq!(sig.value(), n);
    let st = m.queue_state(compute_queue(&m).id).unwrap();
    assert_eq!(st.read_ptr - before, 2, "two PM4-IB packets");
}

/// Dwords a list's caller wrote as they are (`ComputeQueue::raw`) are decoded in full
/// on an AQL queue: a packet the decoder refuses is an error at submit, nothing is
/// sent, and the device goes on.
#[test]
fn raw_dwords_are_decoded_before_they_are_sent() {
    let (m, p) = kfd_mock();
    let dev = p.device_with(0, QueueFormat::Aql).unwrap();
    let sig = dev.new_signal(0).unwrap();
    let mut q = dev.compute_queue();
    q.signal(&sig, 1);
    // A type-3 header with opcode 0x01 (no such PM4 packet) and one body dword.
    q.raw(&[0xc000_0100, 0]);
    let before = m.queue_state(compute_queue(&m).id).unwrap().read_ptr;
    let e = q.submit(&dev, &Bindings::new()).unwrap_err();
    assert!(e.to_string().contains("opcode"), "{e}");
    assert_eq!(m.queue_state(compute_queue(&m).id).unwrap().read_ptr, before);
    let mut ok = dev.compute_queue();
    ok.signal(&sig, 2);
    dev.wait_timeline(ok.submit(&dev, &Bindings::new()).unwrap()).unwrap();
    assert_eq!(sig.value(), 2, "the refused list's signal never ran");
}

/// A gfx942 device (an MI300X partition's profile) on an AQL queue: kernels in
/// scratch (the -O0 build keeps its values there) run from their descriptors, RSRC3's
/// AccVGPR offset included, as the firmware would dispatch them.
#[test]
fn a_gfx942_device_runs_kernels_from_an_aql_queue() {
    let m = Arc::new(MockSys::new(MockConfig::named("gfx942", 1).unwrap()));
    let p = Platform::with_sys(m.clone(), Iface::Mock).unwrap();
    let dev = p.device_with(0, QueueFormat::Aql).unwrap();
    assert_eq!(dev.props().arch, "gfx942");
    assert_eq!(compute_queue(&m).queue_type, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
    let builds: [&[u8]; 2] = [
        include_bytes!("../../../tests/kernels/gfx942/private.hsaco"),
        include_bytes!("../../../tests/kernels/gfx942/private_O0.hsaco"),
    ];
    for elf in builds {
        let prg = Program::load(&dev, elf, "private_array").unwrap();
        let n = 700;
        let idx = common::rand_u32(n, 14);
        let bi = common::upload(&dev, &idx);
        let out = dev.alloc(n * 4, BufferKind::Device).unwrap();
        let dims = amd_hcq::LaunchDims {
            // The kernel takes its index as workgroup id × 256 + lane.
            global: [n.div_ceil(256) as u32, 1, 1],
            local: [256, 1, 1],
        };
        prg.launch_timed(&[&bi, &out], &[n as u32], dims)
            .unwrap_or_else(|e| panic!("{e:?}: {:?}", common::stop_reasons(&m)));
        assert_eq!(common::download(&dev, &out, n), common::private_array_expected(&idx));
    }
}

/// A whole MI300X in SPX mode (8 XCCs in one partition) is refused when a device is
/// opened, on either queue format, with an error that names the partition mode to
/// use: every XCC's command processor would run the queue, and the runtime keeps
/// neither its signals to one XCC nor each XCC's scratch apart yet.
#[test]
fn a_multi_xcc_partition_is_refused_with_the_mode_to_use() {
    let m = Arc::new(MockSys::new(MockConfig::named("gfx942-spx", 1).unwrap()));
    let p = Platform::with_sys(m, Iface::Mock).unwrap();
    for format in [QueueFormat::Pm4, QueueFormat::Aql] {
        let Err(e) = p.device_with(0, format) else {
            panic!("{format:?}: opened");
        };
        assert_eq!(
            e,
            HcqError::MultiXcc {
                arch: "gfx942".into(),
                xccs: 8
            }
        );
        assert!(e.to_string().contains("CPX"), "{e}");
    }
}
