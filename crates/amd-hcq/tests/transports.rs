//! What is particular to the driverless transport on the mock's PCI GPUs (booted by
//! amd-am with synthetic firmware). The runtime's whole-stack tests — launches, copies,
//! bound lists, graphs, multi-device work, faults, profiling — run over both
//! transports from the same code in `runtime.rs`, `graphs.rs`, `faults.rs` and
//! `program.rs` (`kfd::…` and `pci::…`).

use std::sync::Arc;

use amd_hcq::{BufferKind, HcqError, Iface, Platform};
use amd_kfd::mmio::Mmio;
use amd_mockgpu::pci::gmc::{Access, Hub, Target};
use amd_mockgpu::pci::ih::Ih;
use amd_mockgpu::pci::regs::generated::osssys;
use amd_mockgpu::{MockConfig, MockSys};

/// A wait the GPU ends late sleeps on the MSI: the timeline signal's RELEASE_MEM
/// raises an end-of-pipe vector, the mock signals the VFIO eventfd, and the sleeper
/// drains the interrupt ring.
#[test]
fn waits_sleep_on_the_interrupt() {
    let m = Arc::new(MockSys::new(MockConfig::pci(1)));
    let p = Platform::mock_pci_with(m.clone()).unwrap();
    let dev = p.device(0).unwrap();
    let amd_hcq::AnyIface::Am(am) = dev.iface() else {
        panic!("not the driverless transport")
    };
    assert!(
        am.shared().device().pci().vfio().is_some(),
        "VFIO, with its MSI eventfd"
    );
    let regs = m.pci_registers(0).unwrap();
    let (written0, msis0) = regs.with_block::<Ih, _>(|ih| (ih.written, ih.msis)).unwrap();
    let gate = Arc::new(dev.new_signal(0).unwrap());
    let v = dev
        .submit_ordered(false, |w| match w {
            amd_hcq::Work::Compute(q) => {
                q.wait(&gate, 1);
                Ok(())
            }
            amd_hcq::Work::Copy(_) => unreachable!(),
        })
        .unwrap();
    let g = gate.clone();
    let opener = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        g.set(1).unwrap();
    });
    dev.wait_timeline(v).unwrap();
    opener.join().unwrap();
    let (written, msis) = regs.with_block::<Ih, _>(|ih| (ih.written, ih.msis)).unwrap();
    assert!(
        written > written0 && msis > msis0,
        "{written0} -> {written}, {msis0} -> {msis}"
    );
    // Drained: the read pointer met the write pointer.
    let rptr = regs.read32(osssys_reg(osssys::V6_0_0.IH_RB_RPTR));
    let wptr = regs.read32(osssys_reg(osssys::V6_0_0.IH_RB_WPTR));
    assert_eq!(rptr, wptr & !3, "the interrupt ring was read up to its write pointer");
    // And the timeline's signals ask for the interrupt: the mailbox is the transport's.
    let h = dev.timeline_handle().unwrap();
    assert!(h.event.is_some());
}

/// OSSSYS register `r` of a 7900 XTX, placed by its discovery table.
fn osssys_reg(r: amd_mockgpu::pci::regs::AmReg) -> u32 {
    let d = amd_mockgpu::pci::Discovery::navi31();
    amd_mockgpu::pci::model::reg_addr(&d, amd_am::discovery::hw_id::OSSSYS, r).unwrap()
}

/// VRAM of one GPU mapped into another at the same address, through the owner's
/// BAR 0, and unmapped from both when freed.
#[test]
fn peer_memory_is_mapped_at_the_same_address_and_unmapped_with_it() {
    let m = Arc::new(MockSys::new(MockConfig::pci(2)));
    let p = Platform::mock_pci_with(m.clone()).unwrap();
    let (d0, d1) = (p.device(0).unwrap(), p.device(1).unwrap());
    let buf = d0.alloc(3 << 20, BufferKind::Device).unwrap();
    let va = buf.va();
    d1.map_peer(&buf).unwrap();
    d1.map_peer(&buf).unwrap();
    let bar0 = m.pci_devices()[0].bar0_phys;
    let owner = m.pci_translate(0, Hub::Gc, va + 0x1234, Access::Read).unwrap();
    let peer = m.pci_translate(1, Hub::Gc, va + 0x1234, Access::Read).unwrap();
    match (owner, peer) {
        (Ok(Target::Vram(off)), Ok(Target::System(pa))) => assert_eq!(pa, bar0 + off),
        other => panic!("{other:?}"),
    }
    // A buffer of GPU 1 can be written by GPU 0's copy engine once mapped there.
    let dst = d1.alloc(4096, BufferKind::Device).unwrap();
    d0.copy_in(&buf, 0, &[7u8; 4096]).unwrap();
    d0.transfer(&d1, &dst, &buf, 4096).unwrap();
    assert_eq!(d1.copy_out_vec::<u8>(&dst, 0, 4096).unwrap(), vec![7u8; 4096]);
    // Freed with its device (the allocation cache holds it until then).
    drop((buf, d0));
    match m.pci_translate(1, Hub::Gc, va + 0x1234, Access::Read).unwrap() {
        Err(_) => {}
        Ok(t) => panic!("a stale peer mapping: {t:?}"),
    }
    // GPUs of different platforms have different address spaces: no peer mapping.
    let m2 = Arc::new(MockSys::new(MockConfig::pci(1)));
    let p2 = Platform::mock_pci_with(m2).unwrap();
    let other = p2.device(0).unwrap();
    let foreign = other.alloc(4096, BufferKind::Device).unwrap();
    assert!(d1.map_peer(&foreign).is_err());
}

#[test]
fn the_driverless_transport_opens_once_per_gpu_and_again_after() {
    let m = Arc::new(MockSys::new(MockConfig::pci(1)));
    let p = Platform::mock_pci_with(m.clone()).unwrap();
    assert_eq!(p.iface(), Iface::MockPci);
    assert!(p.kfd_handle().is_none());
    let dev = p.device(0).unwrap();
    let props = dev.props().clone();
    // The discovery table's GC info gives the 7900 XTX's properties, as KFD lists them.
    let kfd = Platform::mock(MockConfig::gfx1100s(1)).unwrap().device(0).unwrap();
    let k = kfd.props();
    assert_eq!(
        (props.arch.as_str(), props.gfx_version, props.cu_count, props.lds_size),
        (k.arch.as_str(), k.gfx_version, k.cu_count, k.lds_size)
    );
    // One device at a time drives the GPU's queues.
    let e = p.device(0).unwrap_err();
    assert!(e.to_string().contains("in use"), "{e}");
    assert!(
        matches!(&e, HcqError::QueueInUse { engine: "compute" | "SDMA", gpu } if !gpu.is_empty()),
        "{e:?}"
    );
    drop(dev);
    // Opened again: the platform keeps the booted GPU.
    let dev = p.device(0).unwrap();
    let x = dev.alloc(4096, BufferKind::Device).unwrap();
    dev.copy_in(&x, 0, &[9u8; 4096]).unwrap();
    let back: Vec<u8> = dev.copy_out_vec(&x, 0, 4096).unwrap();
    assert_eq!(back, vec![9u8; 4096]);
}

/// A packet the engine refuses stops the ring; the wait ends with the device's fault
/// naming it (the mock's stop reason), not with a timeout.
#[test]
fn a_bad_packet_is_a_fault_naming_it() {
    let m = Arc::new(MockSys::new(MockConfig::pci(1)));
    let p = Platform::mock_pci_with(m.clone()).unwrap();
    let dev = p.device(0).unwrap();
    dev.set_timeout(std::time::Duration::from_secs(5));
    // A type-3 header with opcode 0x01 (no such PM4 packet) and one body dword.
    let v = dev
        .submit_ordered(false, |w| match w {
            amd_hcq::Work::Compute(q) => {
                q.raw(&[0xc000_0100, 0]);
                Ok(())
            }
            amd_hcq::Work::Copy(_) => unreachable!(),
        })
        .unwrap();
    match dev.wait_timeline(v) {
        Err(amd_hcq::HcqError::DeviceFault { report, .. }) => {
            assert!(
                report.iter().any(|l| l.contains("stopped") && l.contains("opcode")),
                "{report:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(dev.health().is_err());
    // Reopened, the ring is set up again and runs.
    drop(dev);
    let dev = p.device(0).unwrap();
    let x = dev.alloc(4096, BufferKind::Device).unwrap();
    dev.copy_in(&x, 0, &[3u8; 64]).unwrap();
    assert_eq!(dev.copy_out_vec::<u8>(&x, 0, 64).unwrap(), vec![3u8; 64]);
    let v = dev.submit_ordered(false, |_| Ok(())).unwrap();
    dev.wait_timeline(v).unwrap();
}

/// On the driverless transport, device memory is not mapped for the CPU (only
/// host-visible VRAM is, through BAR 0): a CPU access to it is refused naming the
/// buffer, and copies go through the copy engine.
#[test]
fn device_memory_is_not_the_cpus_on_the_driverless_transport() {
    let p = Platform::mock_pci(MockConfig::pci(1)).unwrap();
    let dev = p.device(0).unwrap();
    let buf = dev.alloc(4096, BufferKind::Device).unwrap();
    match buf.write(0, &[1, 2, 3]) {
        Err(HcqError::CpuUnreachable { va, why }) => {
            assert_eq!(va, buf.va());
            assert!(why.contains("VRAM"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    let mut out = [0u8; 4];
    assert!(matches!(buf.read(0, &mut out), Err(HcqError::CpuUnreachable { .. })));
    dev.copy_in(&buf, 0, &[9u8; 16]).unwrap();
    assert_eq!(dev.copy_out_vec::<u8>(&buf, 0, 16).unwrap(), vec![9u8; 16]);
    let visible = dev.alloc(4096, BufferKind::DeviceCpuVisible).unwrap();
    visible.write(0, &[5u8; 8]).unwrap();
}

/// A gfx1201 (`AMD_MOCK_PROFILE=gfx1201` with `AMD_IFACE=MOCK_PCI`) over the driverless
/// transport: booted by amd-am as a GC 12 GPU, its target from the discovery table,
/// its vadd build run on the RDNA4 interpreter, copies through SDMA 7.
#[test]
fn a_gfx1201_runs_through_the_driverless_transport() {
    const VADD_GFX1201: &[u8] = include_bytes!("../../../tests/kernels/gfx1201/vadd.hsaco");
    let p = Platform::mock_pci(MockConfig::named_pci("gfx1201", 1).unwrap()).unwrap();
    let dev = p.device(0).unwrap();
    let props = dev.props();
    assert_eq!(
        (props.arch.as_str(), props.gfx_version, props.target),
        ("gfx1201", 120001, amd_packets::GfxTarget::Gfx12)
    );
    assert_eq!(props.cu_count, 64);
    let n = 3000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 7.0 - i as f32).collect();
    let bufs: Vec<_> = (0..3).map(|_| dev.alloc(n * 4, BufferKind::Device).unwrap()).collect();
    dev.copy_in_slice(&bufs[0], 0, &a).unwrap();
    dev.copy_in_slice(&bufs[1], 0, &b).unwrap();
    let prg = amd_hcq::Program::load(&dev, VADD_GFX1201, "vadd").unwrap();
    let dims = amd_hcq::LaunchDims {
        global: [n.div_ceil(256) as u32, 1, 1],
        local: [256, 1, 1],
    };
    prg.launch(&[&bufs[0], &bufs[1], &bufs[2]], &[n as u32], dims).unwrap();
    let c: Vec<f32> = dev.copy_out_vec(&bufs[2], 0, n).unwrap();
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "c[{i}]");
    }
    // The gfx1100 build is refused: its code object names another target.
    let e = amd_hcq::Program::load(&dev, common_vadd_gfx1100(), "vadd").unwrap_err();
    assert!(e.to_string().contains("gfx1100"), "{e}");
}

fn common_vadd_gfx1100() -> &'static [u8] {
    include_bytes!("../../../tests/kernels/vadd.hsaco")
}

/// The PCI mock's profiles by target name, as `AMD_MOCK_PROFILE` gives them.
#[test]
fn pci_profiles_are_named_by_target() {
    for (name, device) in [("gfx1100", 0x744c), ("gfx1201", 0x7550), ("gfx1030", 0x73bf)] {
        let c = MockConfig::named_pci(name, 2).unwrap();
        assert_eq!(c.pci.len(), 2);
        assert!(c.gpus.is_empty());
        assert_eq!(c.pci[0].device, device, "{name}");
    }
    assert!(MockConfig::named_pci("gfx90a", 1).is_none());
}
