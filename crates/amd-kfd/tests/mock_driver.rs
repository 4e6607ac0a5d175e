//! The KFD transport, end to end on the mock driver: discovery, memory, queues,
//! doorbells, events, the hang report, and release of everything on drop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use amd_kfd::abi::*;
use amd_kfd::sys::Sys;
use amd_kfd::topology::Visibility;
use amd_kfd::{Kfd, KfdDevice, KfdError, MemoryKind, QueueKind, Spread};
use amd_mockgpu::{GpuProfile, MemoryFault, MockConfig, MockStats, MockSys};
use nix::errno::Errno;

fn mock(gpus: Vec<GpuProfile>) -> Arc<MockSys> {
    Arc::new(MockSys::new(MockConfig {
        gpus,
        ..MockConfig::default()
    }))
}

fn open(m: &Arc<MockSys>) -> Kfd {
    Kfd::open_with(m.clone(), &Visibility::all()).expect("open /dev/kfd on the mock")
}

/// A mock with one gfx1100, KFD opened on it, and its device.
fn one_gfx1100() -> (Arc<MockSys>, Kfd, KfdDevice) {
    let m = mock(vec![GpuProfile::gfx1100()]);
    let kfd = open(&m);
    let dev = kfd.device(0).unwrap();
    (m, kfd, dev)
}

fn assert_released(m: &MockSys) {
    let s = m.stats();
    let zero = MockStats {
        vram_used: vec![0; s.vram_used.len()],
        ..MockStats::default()
    };
    assert_eq!(s, zero, "the mock still holds something");
}

#[test]
fn discovery_with_zero_one_and_several_gpus() {
    let m = mock(vec![]);
    let kfd = open(&m);
    assert!(kfd.gpus().is_empty());
    let e = kfd.device(0).unwrap_err();
    assert!(matches!(e, KfdError::NoDevice { index: 0, available: 0 }));
    assert!(e.to_string().contains("amdgpu driver"), "{e}");

    let m = mock(vec![GpuProfile::gfx1100()]);
    let kfd = open(&m);
    assert_eq!(kfd.gpus().len(), 1);
    assert_eq!(kfd.gpus()[0].node, 1, "node 0 is the CPU");
    assert_eq!(kfd.gpus()[0].gpu_id, m.gpu_id(0).unwrap());
    assert_eq!(kfd.gpus()[0].props.arch(), "gfx1100");
    assert_eq!(kfd.gpus()[0].props.drm_render_minor, 128);

    // Eleven GPUs: node order is numeric (10 after 9), whatever the directory says.
    let profiles: Vec<_> = (0..11)
        .map(|i| {
            if i % 2 == 0 {
                GpuProfile::gfx1100()
            } else {
                GpuProfile::gfx1030()
            }
        })
        .collect();
    let m = mock(profiles);
    let kfd = open(&m);
    let nodes: Vec<u32> = kfd.gpus().iter().map(|g| g.node).collect();
    assert_eq!(nodes, (1..=11).collect::<Vec<_>>());
    assert_eq!(kfd.gpus()[1].props.arch(), "gfx1030");
    let dev = kfd.device(10).unwrap();
    assert_eq!(dev.render_path().to_str(), Some("/dev/dri/renderD138"));
    assert_eq!(dev.gpu_id(), m.gpu_id(10).unwrap());
}

#[test]
fn visibility_variables_select_and_reorder() {
    let m = mock(vec![
        GpuProfile::gfx1100(),
        GpuProfile::gfx1030(),
        GpuProfile::gfx1100(),
    ]);
    let ids: Vec<u32> = (0..3).map(|i| m.gpu_id(i).unwrap()).collect();
    let vis = Visibility::from_var("HIP_VISIBLE_DEVICES", "2, 0");
    let kfd = Kfd::open_with(m.clone(), &vis).unwrap();
    assert_eq!(
        kfd.gpus().iter().map(|g| g.gpu_id).collect::<Vec<_>>(),
        [ids[2], ids[0]]
    );
    assert_eq!(kfd.device(1).unwrap().gpu_id(), ids[0]);

    // VISIBLE_DEVICES wins over HIP_VISIBLE_DEVICES.
    let env = |k: &str| match k {
        "VISIBLE_DEVICES" => Some("1".to_string()),
        "HIP_VISIBLE_DEVICES" => Some("0".to_string()),
        _ => None,
    };
    let kfd = Kfd::open_with(m.clone(), &Visibility::from_lookup(env)).unwrap();
    assert_eq!(kfd.gpus().len(), 1);
    assert_eq!(kfd.gpus()[0].gpu_id, ids[1]);
    assert_eq!(Visibility::from_lookup(|_| None), Visibility::all());
    // An empty value selects nothing.
    assert!(
        Kfd::open_with(m.clone(), &Visibility::from_var("VISIBLE_DEVICES", ""))
            .unwrap()
            .gpus()
            .is_empty()
    );

    for bad in ["x", "3", "0,0", "-1"] {
        let e = Kfd::open_with(m.clone(), &Visibility::from_var("VISIBLE_DEVICES", bad)).unwrap_err();
        assert!(
            matches!(
                e,
                KfdError::Visibility {
                    var: "VISIBLE_DEVICES",
                    ..
                }
            ),
            "{bad}: {e}"
        );
    }
}

#[test]
fn malformed_properties_and_unsupported_targets() {
    let m = mock(vec![
        GpuProfile::gfx1100().with_properties_text("gfx_target_version 110000\nsimd_count lots\n"),
    ]);
    let e = Kfd::open_with(m.clone(), &Visibility::all()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties:2: simd_count: \"lots\" is not a non-negative integer"
    );

    let m = mock(vec![GpuProfile::gfx1100().with_prop("gfx_target_version", 90006)]);
    let kfd = open(&m);
    let e = kfd.device(0).unwrap_err();
    assert!(matches!(e, KfdError::UnsupportedTarget { version: 90006, .. }));
    assert_eq!(
        e.to_string(),
        "GPU gfx906 (gfx_target_version 90006) is not supported: amd-hcq drives gfx10.3, gfx11 and gfx12"
    );
    drop(kfd);
    assert_released(&m);
}

#[test]
fn every_memory_kind_on_two_gpus() {
    let m = mock(vec![GpuProfile::gfx1100(), GpuProfile::gfx1030()]);
    let kfd = open(&m);
    let (d0, d1) = (kfd.device(0).unwrap(), kfd.device(1).unwrap());
    let baseline = m.stats();
    for kind in [
        MemoryKind::DEVICE,
        MemoryKind::DEVICE_CPU_VISIBLE,
        MemoryKind::UNCACHED,
        MemoryKind::HOST,
    ] {
        let mem = d0.alloc(10_000, kind).unwrap();
        assert_eq!(mem.size(), 12_288, "rounded to pages");
        assert_eq!(mem.va() % 4096, 0);
        assert_eq!(mem.kind(), kind);
        assert!(m.is_gpu_mapped(0, mem.va() as u64, mem.size() as u64));
        assert!(!m.is_gpu_mapped(1, mem.va() as u64, 1));
        d1.map(&mem).unwrap();
        d1.map(&mem).unwrap(); // mapping twice is a no-op
        assert!(m.is_gpu_mapped(1, mem.va() as u64, mem.size() as u64));
        assert_eq!(mem.mapped_gpu_ids(), [d0.gpu_id(), d1.gpu_id()]);
        d1.unmap(&mem).unwrap();
        assert!(!m.is_gpu_mapped(1, mem.va() as u64, 1));
        assert!(m.is_gpu_mapped(0, mem.va() as u64, 1));
        d1.map(&mem).unwrap();
        if kind.cpu_visible() {
            let data: Vec<u8> = (0..mem.size()).map(|i| (i * 7) as u8).collect();
            mem.write(0, &data).unwrap();
            let mut back = vec![0; data.len()];
            mem.read(0, &mut back).unwrap();
            assert_eq!(back, data);
            assert!(
                mem.write(mem.size() - 1, &[1, 2]).is_err(),
                "writes past the end are refused"
            );
            assert!(m.is_host_mapped(mem.va(), mem.size()));
        } else {
            assert!(mem.write(0, &[1]).is_err(), "{} is not CPU-visible", kind.name());
        }
        let vram = m.stats().vram_used[0];
        assert_eq!(vram > 0, !kind.host && !kind.uncached);
        drop(mem);
        assert_eq!(m.stats(), baseline, "{} released", kind.name());
    }
    assert!(kfd.take_deferred_errors().is_empty());
}

#[test]
fn allocation_errors_reach_the_caller() {
    let m = mock(vec![GpuProfile::gfx1100().with_vram(1 << 20).without_large_bar()]);
    let kfd = open(&m);
    let dev = kfd.device(0).unwrap();
    let baseline = m.stats();

    let e = dev.alloc(2 << 20, MemoryKind::DEVICE).unwrap_err();
    assert!(
        matches!(
            e,
            KfdError::OutOfMemory {
                size: 0x200000,
                kind: "VRAM"
            }
        ),
        "{e}"
    );

    let e = dev.alloc(4096, MemoryKind::DEVICE_CPU_VISIBLE).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot allocate host-visible VRAM. Ensure the resizable BAR option is enabled on your system."
    );

    m.fail_next_allocs(2, Errno::ENOMEM);
    assert!(matches!(
        dev.alloc(4096, MemoryKind::HOST),
        Err(KfdError::OutOfMemory {
            kind: "host memory",
            ..
        })
    ));
    assert!(matches!(
        dev.alloc(4096, MemoryKind::UNCACHED),
        Err(KfdError::OutOfMemory { .. })
    ));

    m.fail_next_allocs(1, Errno::EINVAL);
    let e = dev.alloc(4096, MemoryKind::UNCACHED).unwrap_err();
    assert_eq!(e.errno(), Some(Errno::EINVAL));
    assert!(e.to_string().contains("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"), "{e}");

    m.fail_next_allocs(1, Errno::EIO);
    let e = dev.alloc(4096, MemoryKind::DEVICE).unwrap_err();
    assert_eq!(e.errno(), Some(Errno::EIO));
    assert!(e.to_string().contains("EIO"), "{e}");

    assert!(matches!(
        dev.alloc(0, MemoryKind::DEVICE),
        Err(KfdError::InvalidArgument(_))
    ));
    assert_eq!(m.stats(), baseline, "failed allocations leave nothing behind");
    dev.alloc(4096, MemoryKind::DEVICE).expect("allocation works again");
}

#[test]
fn queues_with_the_sizes_the_kernel_checks() {
    for profile in [GpuProfile::gfx1100(), GpuProfile::gfx1030()] {
        let m = mock(vec![profile.clone()]);
        let kfd = open(&m);
        let dev = kfd.device(0).unwrap();
        let compute = dev.create_queue(QueueKind::Compute, 0x80_0000).expect("compute queue");
        let sdma = dev.create_queue(QueueKind::Sdma, 0x80_0000).expect("SDMA queue");
        let infos = m.queues();
        assert_eq!(infos.len(), 2);
        let ci = infos.iter().find(|q| q.id == compute.id()).unwrap();
        let si = infos.iter().find(|q| q.id == sdma.id()).unwrap();
        assert_eq!(ci.queue_type, KFD_IOC_QUEUE_TYPE_COMPUTE);
        assert_eq!(si.queue_type, KFD_IOC_QUEUE_TYPE_SDMA);
        assert_eq!(ci.ring_base, compute.ring().va() as u64);
        assert_eq!(ci.ring_size, 0x80_0000);
        assert_eq!(ci.write_ptr, compute.pointers().va() as u64);
        assert_eq!(ci.read_ptr, compute.pointers().va() as u64 + 8);
        assert_eq!(ci.eop.1, 0x1000);
        assert_eq!(ci.percentage_priority, (100, 15));
        // tinygrad 0.10.1's formulas: 96 CUs (gfx1100) or 80 (gfx1030), 32 waves per CU.
        let cus = (profile.prop("simd_count").unwrap() / 2) as u32;
        assert_eq!(ci.ctl_stack_size, (12 * cus * 32 + 8 + 40).next_multiple_of(4096));
        assert_eq!(si.eop, (0, 0));

        // Doorbells: one mapping per device, 8 bytes apart, where the mock rings them.
        assert_eq!(Some(compute.doorbell_addr() as u64), ci.doorbell);
        assert_eq!(Some(sdma.doorbell_addr() as u64), si.doorbell);
        assert_eq!(sdma.doorbell_addr() - compute.doorbell_addr(), 8);
        compute.submit(0x1234);
        let mut wptr = [0u8; 8];
        compute.pointers().read(0, &mut wptr).unwrap();
        assert_eq!(u64::from_ne_bytes(wptr), 0x1234);
        assert_eq!(compute.read_ptr(), 0);

        dev.set_cu_mask(&compute, &[0xffff_0000, 0xffff]).unwrap();
        assert_eq!(
            m.queues().iter().find(|q| q.id == compute.id()).unwrap().cu_mask,
            [0xffff_0000, 0xffff]
        );
        assert!(dev.set_cu_mask(&compute, &[]).is_err());

        assert!(matches!(
            dev.create_queue(QueueKind::Sdma, 1000),
            Err(KfdError::InvalidArgument(_))
        ));
        let before = m.stats();
        m.fail_next_queue_creation(Errno::ENOSPC);
        let e = dev.create_queue(QueueKind::Compute, 0x1000).unwrap_err();
        assert_eq!(e.errno(), Some(Errno::ENOSPC));
        assert!(e.to_string().contains("AMDKFD_IOC_CREATE_QUEUE"));
        assert_eq!(m.stats(), before, "a failed queue frees its buffers");
        drop((compute, sdma, dev, kfd));
        assert_released(&m);
    }
}

#[test]
fn a_wrong_context_save_size_is_refused_like_the_kernel_does() {
    // The mock checks compute queues against its own copy of kfd_queue.c: the right
    // sizes pass, a control stack of another size or a short save area do not.
    let (m, _kfd, dev) = one_gfx1100();
    let sizes = amd_kfd::CwsrSizes::for_props(&dev.node().props).unwrap();
    let ring = dev.alloc(0x1000, MemoryKind::UNCACHED).unwrap();
    let gart = dev.alloc(0x1000, MemoryKind::UNCACHED).unwrap();
    let eop = dev.alloc(0x1000, MemoryKind::DEVICE).unwrap();
    let cwsr = dev.alloc(sizes.allocation_size().unwrap(), MemoryKind::DEVICE).unwrap();
    let args = kfd_ioctl_create_queue_args {
        ring_base_address: ring.va() as u64,
        write_pointer_address: gart.va() as u64,
        read_pointer_address: gart.va() as u64 + 8,
        ring_size: 0x1000,
        gpu_id: dev.gpu_id(),
        queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE,
        queue_percentage: 100,
        queue_priority: 15,
        eop_buffer_address: eop.va() as u64,
        eop_buffer_size: 0x1000,
        ctx_save_restore_address: cwsr.va() as u64,
        ctx_save_restore_size: sizes.ctx_save_restore_size().unwrap(),
        ctl_stack_size: sizes.ctl_stack_size,
        ..Default::default()
    };
    let kfd_fd = m
        .open(std::path::Path::new("/dev/kfd"), amd_kfd::sys::OpenMode::ReadWrite)
        .unwrap();
    let create = |mut a: kfd_ioctl_create_queue_args| {
        let req = AMDKFD_IOC_CREATE_QUEUE;
        // SAFETY: the create-queue argument holds no pointers into this process.
        unsafe { m.ioctl(kfd_fd, req.request, req.name, zerocopy::IntoBytes::as_mut_bytes(&mut a)) }.map(|_| a.queue_id)
    };
    let id = create(args).expect("the kernel's sizes are accepted");
    let destroy = kfd_ioctl_destroy_queue_args { queue_id: id, pad: 0 };
    let mut d = destroy;
    // SAFETY: no pointers in the argument.
    unsafe {
        m.ioctl(
            kfd_fd,
            AMDKFD_IOC_DESTROY_QUEUE.request,
            "DESTROY",
            zerocopy::IntoBytes::as_mut_bytes(&mut d),
        )
    }
    .unwrap();
    let bad_ctl = kfd_ioctl_create_queue_args {
        ctl_stack_size: args.ctl_stack_size + 4096,
        ..args
    };
    assert_eq!(create(bad_ctl).unwrap_err().errno, Errno::EINVAL);
    let short = kfd_ioctl_create_queue_args {
        ctx_save_restore_size: args.ctx_save_restore_size - 4096,
        ..args
    };
    assert_eq!(create(short).unwrap_err().errno, Errno::EINVAL);
    let small_eop = kfd_ioctl_create_queue_args {
        eop_buffer_size: 0x800,
        ..args
    };
    assert_eq!(create(small_eop).unwrap_err().errno, Errno::EINVAL);
    let unmapped_ring = kfd_ioctl_create_queue_args {
        ring_base_address: 0x1000_0000,
        ..args
    };
    assert_eq!(create(unmapped_ring).unwrap_err().errno, Errno::EINVAL);
    m.close(kfd_fd).unwrap();
}

#[test]
fn freeing_mapped_memory_is_busy_and_unknown_handles_are_invalid() {
    let (m, _kfd, dev) = one_gfx1100();
    let mem = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let fd = m
        .open(std::path::Path::new("/dev/kfd"), amd_kfd::sys::OpenMode::ReadWrite)
        .unwrap();
    let call = |handle: u64| {
        let mut a = kfd_ioctl_free_memory_of_gpu_args { handle };
        let req = AMDKFD_IOC_FREE_MEMORY_OF_GPU;
        // SAFETY: the free argument holds no pointers.
        unsafe { m.ioctl(fd, req.request, req.name, zerocopy::IntoBytes::as_mut_bytes(&mut a)) }
    };
    assert_eq!(call(mem.handle()).unwrap_err().errno, Errno::EBUSY);
    assert_eq!(call(0xdead).unwrap_err().errno, Errno::EINVAL);
    m.close(fd).unwrap();
}

#[test]
fn events_wait_time_out_and_wake() {
    let m = mock(vec![GpuProfile::gfx1100(), GpuProfile::gfx1100()]);
    let kfd = open(&m);
    let d0 = kfd.device(0).unwrap();
    let d1 = kfd.device(1).unwrap();
    // One event page for the process, in every device; distinct mailboxes inside it.
    assert_eq!(m.event_page(), Some(d0.event_page().va() as u64));
    assert_eq!(d0.event_page().va(), d1.event_page().va());
    assert!(m.is_gpu_mapped(1, d0.event_page().va() as u64, 0x8000));
    let page = d0.event_page().va() as u64..d0.event_page().va() as u64 + 0x8000;
    assert!(page.contains(&d0.queue_event_mailbox()) && page.contains(&d1.queue_event_mailbox()));
    assert_ne!(d0.queue_event_mailbox(), d1.queue_event_mailbox());
    assert_eq!(d0.queue_event_mailbox(), page.start + d0.queue_event().slot as u64 * 8);

    let t = Instant::now();
    assert!(!d0.sleep(30).unwrap(), "nothing signalled: times out");
    assert!(t.elapsed() >= Duration::from_millis(30));

    let id = d0.queue_event().id;
    let m2 = m.clone();
    let waker = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        m2.signal_event(id)
    });
    let t = Instant::now();
    assert!(d0.sleep(10_000).unwrap(), "woken by the signal");
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(waker.join().unwrap());
    assert!(!d0.sleep(0).unwrap(), "the queue event resets itself");

    d1.queue_event().set().unwrap();
    assert!(d1.sleep(0).unwrap());
    d1.queue_event().set().unwrap();
    d1.queue_event().reset().unwrap();
    assert!(!d1.sleep(0).unwrap());
}

#[test]
fn hang_report_reads_the_fault_events() {
    let (m, _kfd, dev) = one_gfx1100();
    assert!(dev.hang_report().unwrap().is_empty());
    m.inject_memory_fault(
        0,
        MemoryFault {
            va: 0x7F00_1234_0000,
            not_present: true,
            ..Default::default()
        },
    );
    assert_eq!(
        dev.hang_report().unwrap(),
        ["MMU fault: 0x7F0012340000 | NotPresent=1 ReadOnly=0 NoExecute=0 imprecise=0"]
    );
    m.inject_hw_exception(0);
    let report = dev.hang_report().unwrap();
    assert_eq!(
        report,
        [format!(
            "HW fault: reset_type=0 reset_cause=0 memory_lost=1 gpu_id={}",
            dev.gpu_id()
        )]
    );
}

#[test]
fn clocks_memory_and_apertures() {
    let m = mock(vec![GpuProfile::gfx1100(), GpuProfile::gfx1030()]);
    let kfd = open(&m);
    let dev = kfd.device(1).unwrap();
    let free = dev.available_memory().unwrap();
    assert_eq!(free, 16 << 30);
    let mem = dev.alloc(1 << 20, MemoryKind::DEVICE).unwrap();
    assert_eq!(dev.available_memory().unwrap(), free - (1 << 20));
    drop(mem);
    let a = dev.clock_counters().unwrap();
    std::thread::sleep(Duration::from_millis(2));
    let b = dev.clock_counters().unwrap();
    assert!(b.gpu_clock_counter > a.gpu_clock_counter && b.cpu_clock_counter > a.cpu_clock_counter);
    assert_eq!(a.system_clock_freq, 1_000_000_000);
    let ap = kfd.apertures().unwrap();
    assert_eq!(
        ap.iter().map(|a| a.gpu_id).collect::<Vec<_>>(),
        [m.gpu_id(0).unwrap(), m.gpu_id(1).unwrap()]
    );
    assert!(ap.iter().all(|a| a.gpuvm_limit > a.gpuvm_base));
}

#[test]
fn everything_is_released_in_order_on_drop() {
    let m = mock(vec![GpuProfile::gfx1100(), GpuProfile::gfx1030()]);
    {
        let kfd = open(&m);
        let d0 = kfd.device(0).unwrap();
        let d1 = kfd.device(1).unwrap();
        let q0 = d0.create_queue(QueueKind::Compute, 0x10000).unwrap();
        let q1 = d1.create_queue(QueueKind::Sdma, 0x10000).unwrap();
        let shared = d0.alloc(1 << 20, MemoryKind::HOST).unwrap();
        d1.map(&shared).unwrap();
        let vram = d1.alloc(1 << 20, MemoryKind::DEVICE).unwrap();
        assert!(m.stats().queues == 2 && m.stats().memory_handles > 5);
        // Drop the devices first: buffers and queues keep what they need alive, and
        // the first device's event page outlives it for the second.
        drop(d0);
        assert!(d1.sleep(0).is_ok());
        drop((q0, q1, shared, vram, d1));
        assert!(
            kfd.take_deferred_errors().is_empty(),
            "{:?}",
            kfd.take_deferred_errors()
        );
    }
    assert_released(&m);
}

/// Batched stores land where asked, within the view; a store outside it is refused
/// with its offset, after the stores before it.
#[test]
fn batched_stores_stay_inside_their_view() {
    let (_m, _kfd, dev) = one_gfx1100();
    let mem = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    mem.write_le_all(64, 32, &[(0, 0x1122, 2), (8, 0x5566_7788_99aa_bbcc, 8)])
        .unwrap();
    let mut back = [0u8; 16];
    mem.read(64, &mut back).unwrap();
    assert_eq!(&back[..2], &[0x22, 0x11]);
    assert_eq!(
        u64::from_le_bytes(back[8..16].try_into().unwrap()),
        0x5566_7788_99aa_bbcc
    );
    let e = mem.write_le_all(64, 32, &[(4, 7, 4), (28, 1, 8)]).unwrap_err();
    assert!(e.to_string().contains("0x1c"), "{e}");
    mem.read(68, &mut back[..4]).unwrap();
    assert_eq!(
        u32::from_le_bytes(back[..4].try_into().unwrap()),
        7,
        "the store before it"
    );
    assert!(mem.write_le_all(64, 32, &[(0, 1, 3)]).is_err(), "3-byte store");
    assert!(mem.write_le_all(4090, 32, &[]).is_err(), "view outside the buffer");
}

/// One value spread over several places lands at each, within the view; a place
/// outside it, a size that is not 1, 2, 4 or 8, and a range of offsets past the list
/// are refused.
#[test]
fn spread_stores_stay_inside_their_view() {
    let (_m, _kfd, dev) = one_gfx1100();
    let mem = dev.alloc(4096, MemoryKind::UNCACHED).unwrap();
    let spread = |value, from, to, bytes| Spread { value, from, to, bytes };
    let offsets = [0, 24, 8, 20, 30];
    let values = [
        spread(0x1122_3344, 0, 2, 4),
        spread(0x5566_7788_99aa_bbcc, 2, 3, 8),
        spread(0xabcd, 3, 4, 2),
        spread(0xef, 4, 5, 1),
    ];
    mem.write_le_spread(64, 32, &values, &offsets).unwrap();
    let mut back = [0u8; 32];
    mem.read(64, &mut back).unwrap();
    let word = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    assert_eq!(word(&back, 0), 0x1122_3344);
    assert_eq!(word(&back, 24), 0x1122_3344);
    assert_eq!(
        u64::from_le_bytes(back[8..16].try_into().unwrap()),
        0x5566_7788_99aa_bbcc
    );
    assert_eq!(&back[20..22], &[0xcd, 0xab]);
    assert_eq!(back[30], 0xef);
    assert_eq!(back[31], 0, "a 1-byte store writes one byte");
    let e = mem
        .write_le_spread(64, 32, &[spread(9, 0, 3, 4)], &[4, 28, 29])
        .unwrap_err();
    assert!(e.to_string().contains("0x1d"), "{e}");
    mem.read(64, &mut back).unwrap();
    assert_eq!(word(&back, 4), 9, "the stores before it");
    assert_eq!(word(&back, 28), 9, "the stores before it");
    let e = mem.write_le_spread(64, 32, &[spread(1, 0, 1, 3)], &[0]).unwrap_err();
    assert!(e.to_string().contains("a store of 3 bytes"), "{e}");
    assert!(
        mem.write_le_spread(64, 4, &[spread(1, 0, 1, 8)], &[0]).is_err(),
        "a store wider than the view"
    );
    assert!(
        mem.write_le_spread(64, 32, &[spread(1, 1, 3, 4)], &offsets[..2])
            .is_err(),
        "offsets past the list"
    );
    assert!(
        mem.write_le_spread(4090, 32, &[], &[]).is_err(),
        "view outside the buffer"
    );
}
