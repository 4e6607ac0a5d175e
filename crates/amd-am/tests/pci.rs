//! Finding and taking the mock PCI GPU as tinygrad 0.10.1's `PCIIface` does: the
//! supported ids in bus order, visibility, unbinding, the BAR 0 resize, VFIO with MSI
//! into an eventfd or plain sysfs, bus mastering; each failure a clear error.

use std::path::Path;
use std::sync::Arc;

use amd_am::AmError;
use amd_am::pci::{PCI_COMMAND_IO, PCI_COMMAND_MASTER, PCI_COMMAND_MEMORY, PciAddress, PciBus, PciOptions, scan};
use amd_kfd::sys::Sys;
use amd_kfd::topology::Visibility;
use amd_mockgpu::pci::RCC_CONFIG_MEMSIZE;
use amd_mockgpu::{MockConfig, MockSys, PciDriver, PciFault, PciProfile};
use nix::errno::Errno;

const MIB: u64 = 1 << 20;

fn mock(cfg: MockConfig) -> (Arc<MockSys>, Arc<dyn Sys>) {
    let m = Arc::new(MockSys::new(cfg));
    let s: Arc<dyn Sys> = m.clone();
    (m, s)
}

fn with(pci: Vec<PciProfile>) -> MockConfig {
    MockConfig {
        pci,
        ..MockConfig::pci(0)
    }
}

fn opts(vis: Visibility) -> PciOptions {
    PciOptions {
        visibility: vis,
        vfio: true,
    }
}

#[test]
fn only_the_7900_xtx_in_bus_order_and_visibility_picks() {
    let (_m, s) = mock(with(vec![
        PciProfile::navi31(),
        PciProfile::navi21(),
        PciProfile::navi31(),
        PciProfile::navi31(),
    ]));
    let names: Vec<String> = scan(&*s).unwrap().iter().map(|g| g.address.to_string()).collect();
    assert_eq!(
        names,
        ["0000:03:00.0", "0000:05:00.0", "0000:06:00.0"],
        "the Navi 21 is skipped"
    );
    assert!(scan(&*s).unwrap().iter().all(|g| g.device_id == 0x744c));

    let bus = PciBus::scan(s.clone(), &opts(Visibility::from_var("VISIBLE_DEVICES", "2,0"))).unwrap();
    let picked: Vec<String> = bus.gpus().iter().map(|g| g.address.to_string()).collect();
    assert_eq!(picked, ["0000:06:00.0", "0000:03:00.0"]);
    let hip = PciOptions::from_lookup(|v| (v == "HIP_VISIBLE_DEVICES").then(|| "1".to_string()));
    let bus = PciBus::scan(s.clone(), &hip).unwrap();
    assert_eq!(bus.gpus()[0].address, PciAddress::parse("0000:05:00.0").unwrap());
    for bad in ["3", "x", "0,0"] {
        let e = PciBus::scan(s.clone(), &opts(Visibility::from_var("VISIBLE_DEVICES", bad))).unwrap_err();
        assert!(matches!(e, AmError::Visibility(_)), "{e}");
        assert!(e.to_string().starts_with(&format!("VISIBLE_DEVICES=\"{bad}\"")), "{e}");
    }

    let (_m, none) = mock(with(vec![PciProfile::navi21()]));
    let mut bus = PciBus::scan(none, &PciOptions::default()).unwrap();
    let e = bus.open(0).unwrap_err();
    assert_eq!(e, AmError::NoDevice { index: 0, available: 0 });
    assert!(e.to_string().contains("1002:744c"), "{e}");
}

#[test]
fn vfio_sequence_unbinds_resizes_and_routes_msi() {
    let (m, s) = mock(MockConfig::pci(1));
    let before = m.pci_devices()[0].clone();
    assert_eq!(before.driver, Some(PciDriver::Amdgpu));
    assert_eq!(before.bar0_size, 256 * MIB);
    let mut bus = PciBus::scan(s, &PciOptions::default()).unwrap();
    let dev = bus.open(0).unwrap();
    let info = m.pci_devices()[0].clone();
    assert_eq!(info.driver, Some(PciDriver::VfioPci));
    assert_eq!(info.driver_override.as_deref(), Some("vfio-pci"));
    assert_eq!(info.bar0_size, 32 << 30, "resized to the largest size offered");
    assert!(info.msi_eventfd);
    assert_eq!(
        info.command & (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER),
        PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER
    );
    assert!(dev.vfio().is_some() && dev.vfio_fallback().is_none());
    assert_eq!(dev.vfio().unwrap().group_id, info.iommu_group.unwrap());
    assert_eq!(dev.vram().len() as u64, 32 << 30);
    assert_eq!(dev.bar(0).unwrap().start, info.bar0_phys);
    assert_eq!(dev.doorbells().len() as u64, 2 * MIB);
    assert_eq!(dev.registers().size_dwords() as u64, MIB / 4);
    assert_eq!(dev.registers().read32(RCC_CONFIG_MEMSIZE), 512, "VRAM in MiB");

    // VRAM through the mapping is the GPU's VRAM.
    assert!(dev.vram().write(0x1000, b"host"));
    let mut got = [0u8; 4];
    assert!(m.pci_read_vram(0, 0x1000, &mut got));
    assert_eq!(&got, b"host");
    assert!(m.pci_write_vram(0, 0x2000, b"gpu!"));
    assert!(dev.vram().read(0x2000, &mut got));
    assert_eq!(&got, b"gpu!");
    assert!(!dev.vram().read((32 << 30) - 2, &mut got), "past the BAR");
    assert!(!dev.vram().write(u64::MAX, b"x"));

    // Doorbells: the 64-bit slots of BAR 2, the last one included.
    dev.ring_doorbell((2 * MIB / 8 - 1) as u32, 0).unwrap();
    for index in [(2 * MIB / 8) as u32, u32::MAX] {
        let e = dev.ring_doorbell(index, 0).unwrap_err();
        assert_eq!(
            e,
            AmError::DoorbellSlot {
                index,
                bar_size: 2 * MIB
            }
        );
        assert!(e.to_string().contains("slots 0 to 262143"), "{e}");
    }

    // MSI arrives in the eventfd.
    assert_eq!(dev.wait_interrupt(0).unwrap(), 0);
    assert!(m.pci_raise_msi(0));
    assert!(m.pci_raise_msi(0));
    assert_eq!(dev.wait_interrupt(1000).unwrap(), 2);
    assert_eq!(dev.wait_interrupt(0).unwrap(), 0, "consumed");

    // Taken devices are busy: a second taker cannot unbind it.
    let (_, s2) = (m.clone(), m.clone() as Arc<dyn Sys>);
    let mut other = PciBus::scan(s2, &PciOptions::default()).unwrap();
    let e = other.open(0).unwrap_err();
    match &e {
        AmError::Take { device, step, msg } => {
            assert_eq!((device.as_str(), *step), ("0000:03:00.0", "unbind"));
            assert!(msg.contains("vfio-pci") && msg.contains("EBUSY"), "{msg}");
        }
        e => panic!("{e}"),
    }
    drop(other);

    drop(dev);
    assert!(!m.pci_devices()[0].msi_eventfd, "closing the device turned MSI off");
    drop(bus);
    let st = m.stats();
    assert_eq!(
        (st.open_fds, st.host_mappings),
        (0, 0),
        "everything closed and unmapped"
    );
}

#[test]
fn two_devices_share_one_container() {
    let (m, s) = mock(MockConfig::pci(2));
    let mut bus = PciBus::scan(s, &PciOptions::default()).unwrap();
    let a = bus.open(0).unwrap();
    let b = bus.open(1).unwrap();
    assert_ne!(a.vfio().unwrap().group_id, b.vfio().unwrap().group_id);
    assert!(m.pci_devices().iter().all(|d| d.msi_eventfd));
    assert!(m.pci_raise_msi(1));
    assert_eq!(b.wait_interrupt(1000).unwrap(), 1);
    assert_eq!(a.wait_interrupt(0).unwrap(), 0);
    drop((a, b, bus));
    assert_eq!(m.stats().open_fds, 0);
}

#[test]
fn without_vfio_sysfs_bars_and_the_command_register() {
    for (cfg, vfio_opt) in [
        (
            MockConfig {
                vfio: false,
                ..MockConfig::pci(1)
            },
            true,
        ),
        (MockConfig::pci(1), false),
    ] {
        let (m, s) = mock(cfg);
        let mut bus = PciBus::scan(
            s,
            &PciOptions {
                vfio: vfio_opt,
                ..Default::default()
            },
        )
        .unwrap();
        let dev = bus.open(0).unwrap();
        let info = m.pci_devices()[0].clone();
        assert_eq!(info.driver, None, "unbound, not given to vfio-pci");
        assert_eq!(info.driver_override, None);
        assert_eq!(
            info.command & 0x7,
            PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER
        );
        assert!(dev.vfio().is_none());
        assert_eq!(dev.wait_interrupt(0).unwrap(), 0);
        assert_eq!(dev.registers().read32(RCC_CONFIG_MEMSIZE), 512);
        drop((dev, bus));
        assert_eq!(m.stats().open_fds, 0);
    }
}

#[test]
fn resize_only_when_offered_and_larger() {
    let mut small = PciProfile::navi31();
    small.bar0_resize_sizes = 0;
    let mut half = PciProfile::navi31();
    half.bar0_resize_sizes = 1 << 9 | 1 << 8;
    let (m, s) = mock(with(vec![small, half]));
    let mut bus = PciBus::scan(s, &PciOptions::default()).unwrap();
    let (a, b) = (bus.open(0).unwrap(), bus.open(1).unwrap());
    assert_eq!(m.pci_devices()[0].bar0_size, 256 * MIB);
    assert_eq!(a.vram().len() as u64, 256 * MIB);
    assert_eq!(m.pci_devices()[1].bar0_size, 512 * MIB);
    assert_eq!(b.vram().len() as u64, 512 * MIB);
}

#[test]
fn an_unmappable_bar_names_the_step_and_file_and_leaks_nothing() {
    for (bar, step) in [
        (0, "map BAR 0 (VRAM)"),
        (2, "map BAR 2 (doorbells)"),
        (5, "map BAR 5 (registers)"),
    ] {
        let (m, s) = mock(MockConfig::pci(1));
        assert!(m.pci_inject(
            0,
            PciFault::BarMap {
                bar,
                errno: Errno::ENOMEM
            }
        ));
        let mut bus = PciBus::scan(s, &PciOptions::default()).unwrap();
        let e = bus.open(0).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, AmError::Take { step: s, .. } if s == step), "{text}");
        assert!(
            text.contains(&format!("/sys/bus/pci/devices/0000:03:00.0/resource{bar}")) && text.contains("ENOMEM"),
            "{text}"
        );
        drop(bus);
        let st = m.stats();
        assert_eq!((st.open_fds, st.host_mappings), (0, 0), "BAR {bar}");
    }
}

#[test]
fn a_missing_device_directory_is_an_error_naming_the_file() {
    // A directory whose name looks like a device but is not one of the mock's.
    let (_m, s) = mock(MockConfig::pci(1));
    let e = amd_am::pci::read_text(&*s, Path::new("/sys/bus/pci/devices/0000:09:00.0/vendor")).unwrap_err();
    assert!(
        e.to_string().contains("/sys/bus/pci/devices/0000:09:00.0/vendor"),
        "{e}"
    );
}
