//! The mock PCI GPU, through `Sys` only: enumeration, BARs, binding, resize, VFIO,
//! pagemap and the register boundary; hostile input gives errno values (the IP
//! discovery binary: `discovery.rs`).

mod common;

use std::path::Path;

use amd_kfd::sys::{Fd, MapFlags, OpenMode, PollFd, Prot, Sys};
use amd_mockgpu::pci::{RCC_CONFIG_MEMSIZE, RegWrite};
use amd_mockgpu::{MockConfig, MockSys, PciDriver, PciFault, PciProfile};
use amd_mockgpu::{PM_PFN_MASK, PM_PRESENT};
use amd_regs::discovery as dsc;
use amd_regs::vfio::*;
use common::{DEV, MIB, ioctl, ioctl_value, msi_to_eventfd, p};
use nix::errno::Errno;
use zerocopy::IntoBytes;

fn dev(f: &str) -> String {
    format!("{DEV}/{f}")
}

fn text(m: &MockSys, path: &str) -> String {
    String::from_utf8(m.read_file(p(path)).unwrap()).unwrap()
}

fn two_gpus() -> MockSys {
    MockSys::new(MockConfig {
        pci: vec![PciProfile::navi31(), PciProfile::navi21()],
        ..MockConfig::pci(0)
    })
}

fn map(m: &MockSys, fd: Fd, len: usize, offset: u64) -> Result<usize, Errno> {
    // SAFETY: a shared mapping at an address the kernel picks replaces nothing.
    unsafe { m.mmap(0, len, Prot::ReadWrite, MapFlags::SHARED, Some(fd), offset) }.map_err(|e| e.errno)
}

fn unmap(m: &MockSys, addr: usize, len: usize) {
    // SAFETY: the test made the mapping and does not use it afterwards.
    unsafe { m.munmap(addr, len) }.unwrap();
}

#[test]
fn enumeration_through_sysfs() {
    let m = two_gpus();
    let mut names = m.list_dir(p("/sys/bus/pci/devices")).unwrap();
    names.sort();
    assert_eq!(names, ["0000:03:00.0", "0000:04:00.0"]);
    // What tinygrad's PCIIface selects: vendor 0x1002, device 0x744c.
    let xtx: Vec<&String> = names
        .iter()
        .filter(|n| {
            let base = format!("/sys/bus/pci/devices/{n}");
            text(&m, &format!("{base}/vendor")) == "0x1002\n" && text(&m, &format!("{base}/device")) == "0x744c\n"
        })
        .collect();
    assert_eq!(xtx, ["0000:03:00.0"]);
    assert_eq!(text(&m, &dev("class")), "0x030000\n");
    assert_eq!(text(&m, "/sys/bus/pci/devices/0000:04:00.0/device"), "0x73bf\n");
    let files = m.list_dir(p(DEV)).unwrap();
    for f in [
        "config",
        "resource",
        "resource0",
        "resource2",
        "resource5",
        "resource0_resize",
        "driver",
    ] {
        assert!(files.iter().any(|x| x == f), "{f} in {files:?}");
        assert!(m.exists(p(&dev(f))), "{f}");
    }
    assert!(!files.iter().any(|x| x == "iommu_group"));
    assert!(m.readlink(p(DEV)).unwrap().ends_with("0000:03:00.0"));
    assert_eq!(
        m.readlink(p(&dev("driver"))).unwrap(),
        p("../../../bus/pci/drivers/amdgpu")
    );
    assert_eq!(text(&m, &dev("driver_override")), "(null)\n");
    let mut drivers = m.list_dir(p("/sys/bus/pci/drivers")).unwrap();
    drivers.sort();
    assert_eq!(drivers, ["amdgpu", "vfio-pci"]);
    assert!(
        m.list_dir(p("/sys/bus/pci/drivers/amdgpu"))
            .unwrap()
            .contains(&"0000:04:00.0".to_string())
    );

    // Configuration space through the file, as libpciaccess reads it.
    let cfg = m.read_file(p(&dev("config"))).unwrap();
    assert_eq!(cfg.len(), 4096);
    assert_eq!(u16::from_le_bytes([cfg[0], cfg[1]]), 0x1002);
    assert_eq!(u16::from_le_bytes([cfg[2], cfg[3]]), 0x744c);
    assert_eq!(&cfg[9..12], &[0, 0, 3]);
    let fd = m.open(p(&dev("config")), OpenMode::ReadOnly).unwrap();
    let mut cmd = [0u8; 2];
    assert_eq!(m.pread(fd, &mut cmd, 4).unwrap(), 2);
    assert_eq!(
        u16::from_le_bytes(cmd) & 0x7,
        0x7,
        "amdgpu enabled memory, I/O and bus mastering"
    );
    assert_eq!(
        m.pwrite(fd, &[0, 0], 4).unwrap_err().errno,
        Errno::EBADF,
        "read-only descriptor"
    );
    m.close(fd).unwrap();
    // Without VFIO loaded there is no /dev/vfio.
    let bare = MockSys::new(MockConfig {
        vfio: false,
        ..MockConfig::pci(1)
    });
    assert!(!bare.exists(p("/dev/vfio/vfio")) && !bare.exists(p("/sys/module/vfio")));
    assert!(m.exists(p("/dev/vfio/vfio")));
}

#[test]
fn bar_table_as_the_kernel_prints_it() {
    let m = MockSys::new(MockConfig::pci(1));
    let t = text(&m, &dev("resource"));
    let lines: Vec<(u64, u64, u64)> = t
        .lines()
        .map(|l| {
            let v: Vec<u64> = l
                .split(' ')
                .map(|x| u64::from_str_radix(x.strip_prefix("0x").unwrap(), 16).unwrap())
                .collect();
            assert_eq!(l.len(), 3 * 18 + 2, "{l}");
            (v[0], v[1], v[2])
        })
        .collect();
    assert_eq!(lines.len(), 13);
    let size = |i: usize| {
        if lines[i].1 == 0 {
            0
        } else {
            lines[i].1 - lines[i].0 + 1
        }
    };
    assert_eq!(size(0), 256 * MIB);
    assert_eq!(size(1), 0);
    assert_eq!(size(2), 2 * MIB);
    assert_eq!(size(4), 256);
    assert_eq!(size(5), MIB);
    assert_eq!(size(6), 128 << 10);
    assert_eq!(lines[0].2, 0x14220c, "64-bit prefetchable memory");
    assert_eq!(lines[5].2, 0x40200, "32-bit memory");
    assert_eq!(lines[4].2 & 0x100, 0x100, "I/O");
    assert!(lines[7..].iter().all(|&l| l == (0, 0, 0)));
    assert_eq!(lines[0].0, m.pci_devices()[0].bar0_phys);
    // The config space BARs agree with the table.
    let cfg = m.read_file(p(&dev("config"))).unwrap();
    let bar = |o: usize| u32::from_le_bytes(cfg[o..o + 4].try_into().unwrap()) as u64;
    assert_eq!((bar(0x10) & !0xf) | bar(0x14) << 32, lines[0].0);
    assert_eq!(bar(0x24), lines[5].0);
}

#[test]
fn vram_through_bar0() {
    let m = MockSys::new(MockConfig::pci(1));
    let fd = m.open(p(&dev("resource0")), OpenMode::ReadWrite).unwrap();
    let len = (256 * MIB) as usize;
    let a = map(&m, fd, len, 0).unwrap();
    // SAFETY: `a` is a live, writable mapping of `len` bytes made above and unmapped
    // only at the end of the test.
    let bar = unsafe { std::slice::from_raw_parts_mut(a as *mut u8, len) };
    bar[0x1000..0x1004].copy_from_slice(&0xdead_beef_u32.to_le_bytes());
    let mut got = [0u8; 4];
    assert!(m.pci_read_vram(0, 0x1000, &mut got));
    assert_eq!(u32::from_le_bytes(got), 0xdead_beef);
    assert!(m.pci_write_vram(0, 0x2000, b"from the GPU"));
    assert_eq!(&bar[0x2000..0x200c], b"from the GPU");
    // A window at an offset, at a fixed address (as tinygrad maps CPU-visible VRAM).
    let w = map(&m, fd, 0x2000, 0x2000).unwrap();
    // SAFETY: the window is a live 8 KiB mapping made above.
    let win = unsafe { std::slice::from_raw_parts(w as *const u8, 0x2000) };
    assert_eq!(&win[..12], b"from the GPU");
    assert_eq!(
        map(&m, fd, 0x1000, 0x800).unwrap_err(),
        Errno::EINVAL,
        "unaligned offset"
    );
    assert_eq!(
        map(&m, fd, 0x2000, 256 * MIB - 0x1000).unwrap_err(),
        Errno::EINVAL,
        "past the BAR"
    );
    assert_eq!(map(&m, fd, 0x1000, u64::MAX - 0xfff).unwrap_err(), Errno::EINVAL);
    // SAFETY: a private mapping is refused before anything is mapped.
    let private = unsafe { m.mmap(0, 0x1000, Prot::ReadWrite, MapFlags::PRIVATE, Some(fd), 0) };
    assert_eq!(private.unwrap_err().errno, Errno::EINVAL);
    let ro = m.open(p(&dev("resource0")), OpenMode::ReadOnly).unwrap();
    assert_eq!(map(&m, ro, 0x1000, 0).unwrap_err(), Errno::EACCES);
    // Doorbells are memory too.
    let db = m.open(p(&dev("resource2")), OpenMode::ReadWrite).unwrap();
    let d = map(&m, db, (2 * MIB) as usize, 0).unwrap();
    // The register BAR is address space whose registers are reached through mmio.
    let r5 = m.open(p(&dev("resource5")), OpenMode::ReadWrite).unwrap();
    let r = map(&m, r5, MIB as usize, 0).unwrap();
    let regs = m.mmio(r).expect("the mock's register model");
    assert_eq!(regs.size_dwords(), (MIB / 4) as u32);
    assert_eq!(regs.read32(RCC_CONFIG_MEMSIZE), 512, "VRAM in MiB");
    // What the transport will call: the model here, volatile access on hardware.
    // SAFETY: `r` is the live register mapping made above, unmapped after `via` is
    // dropped.
    let via = unsafe { amd_am::bar::registers(&m, r, MIB as usize) };
    via.write32(0x40, 0x55);
    assert_eq!(regs.read32(0x40), 0x55);
    assert_eq!(
        m.pci_registers(0).unwrap().take_writes(),
        [RegWrite { reg: 0x40, value: 0x55 }]
    );
    drop(via);
    assert!(m.mmio(a).is_none() && m.mmio(r + 0x1000).is_none());
    assert!(amd_kfd::sys::HostSys.mmio(r).is_none());
    unmap(&m, r, MIB as usize);
    assert!(m.mmio(r).is_none());
    for (addr, len) in [(a, len), (w, 0x2000), (d, (2 * MIB) as usize)] {
        unmap(&m, addr, len);
    }
    for f in [fd, ro, db, r5] {
        m.close(f).unwrap();
    }
    let s = m.stats();
    assert_eq!((s.open_fds, s.host_mappings), (0, 0));
}

#[test]
fn unbind_override_probe_and_resize() {
    let m = MockSys::new(MockConfig::pci(1));
    // Resizing needs the device unbound.
    assert_eq!(
        m.write_file(p(&dev("resource0_resize")), b"15").unwrap_err().errno,
        Errno::EBUSY
    );
    assert_eq!(text(&m, &dev("resource0_resize")), "000000000000ff00\n");
    // The seed's sequence: unbind through the driver link, then resize to 32 GiB.
    assert!(m.exists(p(&dev("driver"))));
    m.write_file(p(&dev("driver/unbind")), b"0000:03:00.0").unwrap();
    assert!(!m.exists(p(&dev("driver"))));
    assert_eq!(m.readlink(p(&dev("driver"))).unwrap_err().errno, Errno::ENOENT);
    assert_eq!(m.pci_devices()[0].command & 0x4, 0, "amdgpu turned bus mastering off");
    m.write_file(p(&dev("resource0_resize")), b"15\n").unwrap();
    assert_eq!(m.pci_devices()[0].bar0_size, 32 << 30);
    let first = text(&m, &dev("resource")).lines().next().unwrap().to_string();
    let v: Vec<u64> = first
        .split(' ')
        .map(|x| u64::from_str_radix(&x[2..], 16).unwrap())
        .collect();
    assert_eq!(v[1] - v[0] + 1, 32 << 30);
    for bad in [&b"7"[..], b"16", b"64", b"99999999999999999999", b"abc", b"", b"0x"] {
        assert_eq!(
            m.write_file(p(&dev("resource0_resize")), bad).unwrap_err().errno,
            Errno::EINVAL
        );
    }
    // The whole 32 GiB BAR maps (sparse), and VRAM is still where it was.
    let fd = m.open(p(&dev("resource0")), OpenMode::ReadWrite).unwrap();
    let a = map(&m, fd, 32 << 30, 0).unwrap();
    unmap(&m, a, 32 << 30);
    m.close(fd).unwrap();

    // Override to vfio-pci: the probe fails until no-IOMMU mode is on.
    m.write_file(p(&dev("driver_override")), b"vfio-pci\n").unwrap();
    assert_eq!(text(&m, &dev("driver_override")), "vfio-pci\n");
    assert_eq!(
        text(&m, "/sys/module/vfio/parameters/enable_unsafe_noiommu_mode"),
        "N\n"
    );
    m.write_file(p("/sys/bus/pci/drivers_probe"), b"0000:03:00.0").unwrap();
    assert_eq!(m.pci_devices()[0].driver, None);
    assert_eq!(m.readlink(p(&dev("iommu_group"))).unwrap_err().errno, Errno::ENOENT);
    m.write_file(p("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode"), b"1")
        .unwrap();
    m.write_file(p("/sys/bus/pci/drivers_probe"), b"0000:03:00.0\n")
        .unwrap();
    let info = &m.pci_devices()[0];
    assert_eq!((info.driver, info.iommu_group), (Some(PciDriver::VfioPci), Some(0)));
    let group = m.readlink(p(&dev("iommu_group"))).unwrap();
    assert_eq!(group, p("../../../kernel/iommu_groups/0"));
    assert_eq!(group.file_name().unwrap(), "0");
    assert!(m.exists(p("/dev/vfio/noiommu-0")));
    assert_eq!(
        m.readlink(p(&dev("driver"))).unwrap(),
        p("../../../bus/pci/drivers/vfio-pci")
    );
    // Back to amdgpu: clear the override, unbind, probe.
    m.write_file(p(&dev("driver_override")), b"\n").unwrap();
    assert_eq!(text(&m, &dev("driver_override")), "(null)\n");
    m.write_file(p("/sys/bus/pci/drivers/vfio-pci/unbind"), b"0000:03:00.0")
        .unwrap();
    assert!(!m.exists(p("/dev/vfio/noiommu-0")));
    m.write_file(p("/sys/bus/pci/drivers_probe"), b"0000:03:00.0").unwrap();
    assert_eq!(m.pci_devices()[0].driver, Some(PciDriver::Amdgpu));
    // Hostile writes.
    assert_eq!(
        m.write_file(p("/sys/bus/pci/drivers_probe"), b"0000:99:00.0")
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    assert_eq!(
        m.write_file(p(&dev("driver/unbind")), b"0000:99:00.0")
            .unwrap_err()
            .errno,
        Errno::ENODEV
    );
    assert_eq!(
        m.write_file(p("/sys/bus/pci/drivers/vfio-pci/unbind"), b"0000:03:00.0")
            .unwrap_err()
            .errno,
        Errno::ENODEV,
        "not bound to vfio-pci"
    );
    assert_eq!(
        m.write_file(p(&dev("driver_override")), &[b'x'; 5000])
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    assert_eq!(
        m.write_file(p(&dev("driver_override")), &[0xff, 0xfe])
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    assert_eq!(
        m.write_file(p(&dev("vendor")), b"0x1234").unwrap_err().errno,
        Errno::EACCES
    );
    assert_eq!(
        m.write_file(p("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode"), b"maybe")
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
}

/// Takes PCI GPU 0 from amdgpu to vfio-pci as tinygrad 0.10.1 does.
fn to_vfio(m: &MockSys) {
    m.write_file(p(&dev("driver/unbind")), b"0000:03:00.0").unwrap();
    m.write_file(p(&dev("resource0_resize")), b"15").unwrap();
    m.write_file(p("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode"), b"1")
        .unwrap();
    m.write_file(p(&dev("driver_override")), b"vfio-pci").unwrap();
    m.write_file(p("/sys/bus/pci/drivers_probe"), b"0000:03:00.0").unwrap();
}

/// A mock whose first GPU is bound to vfio-pci, with a VFIO container and the GPU's
/// group open.
fn vfio_opened() -> (MockSys, Fd, Fd) {
    let m = MockSys::new(MockConfig::pci(1));
    to_vfio(&m);
    let container = m.open(p("/dev/vfio/vfio"), OpenMode::ReadWrite).unwrap();
    let group = m.open(p("/dev/vfio/noiommu-0"), OpenMode::ReadWrite).unwrap();
    (m, container, group)
}

#[test]
fn the_seeds_vfio_sequence() {
    let m = MockSys::new(MockConfig::pci(1));
    to_vfio(&m);
    let container = m.open(p("/dev/vfio/vfio"), OpenMode::ReadWrite).unwrap();
    assert_eq!(
        ioctl_value(&m, container, VFIO_GET_API_VERSION, 0),
        Ok(VFIO_API_VERSION)
    );
    assert_eq!(
        ioctl_value(&m, container, VFIO_CHECK_EXTENSION, VFIO_NOIOMMU_IOMMU),
        Ok(1)
    );
    assert_eq!(
        ioctl_value(&m, container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU),
        Ok(0)
    );
    let g = m.readlink(p(&dev("iommu_group"))).unwrap();
    let g = g.file_name().unwrap().to_str().unwrap();
    let group = m
        .open(p(&format!("/dev/vfio/noiommu-{g}")), OpenMode::ReadWrite)
        .unwrap();
    assert_eq!(
        m.open(p(&format!("/dev/vfio/noiommu-{g}")), OpenMode::ReadWrite)
            .unwrap_err()
            .errno,
        Errno::EBUSY
    );
    let mut st = vfio_group_status { argsz: 8, flags: 0 };
    ioctl(&m, group, VFIO_GROUP_GET_STATUS, st.as_mut_bytes()).unwrap();
    assert_eq!(st.flags, VFIO_GROUP_FLAGS_VIABLE);
    // The device needs a container with an IOMMU driver first.
    assert_eq!(
        ioctl(&m, group, VFIO_GROUP_GET_DEVICE_FD, &mut b"0000:03:00.0\0".to_vec()),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        ioctl_value(&m, container, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU),
        Err(Errno::EINVAL),
        "no group yet"
    );
    ioctl(&m, group, VFIO_GROUP_SET_CONTAINER, &mut container.0.to_ne_bytes()).unwrap();
    ioctl(&m, group, VFIO_GROUP_GET_STATUS, st.as_mut_bytes()).unwrap();
    assert_eq!(st.flags, VFIO_GROUP_FLAGS_VIABLE | VFIO_GROUP_FLAGS_CONTAINER_SET);
    assert_eq!(
        ioctl_value(&m, container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU),
        Err(Errno::ENODEV)
    );
    ioctl_value(&m, container, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU).unwrap();
    assert_eq!(
        ioctl(&m, group, VFIO_GROUP_GET_DEVICE_FD, &mut b"0000:04:00.0\0".to_vec()),
        Err(Errno::ENODEV)
    );
    let device = Fd(ioctl(&m, group, VFIO_GROUP_GET_DEVICE_FD, &mut b"0000:03:00.0\0".to_vec()).unwrap());

    let mut info = vfio_device_info {
        argsz: size_of::<vfio_device_info>() as u32,
        ..Default::default()
    };
    ioctl(&m, device, VFIO_DEVICE_GET_INFO, info.as_mut_bytes()).unwrap();
    assert_eq!(
        (info.num_regions, info.num_irqs),
        (VFIO_PCI_NUM_REGIONS, VFIO_PCI_NUM_IRQS)
    );
    assert_ne!(info.flags & VFIO_DEVICE_FLAGS_PCI, 0);
    let region = |index: u32| {
        let mut r = vfio_region_info {
            argsz: 32,
            index,
            ..Default::default()
        };
        ioctl(&m, device, VFIO_DEVICE_GET_REGION_INFO, r.as_mut_bytes()).map(|_| r)
    };
    let bar0 = region(VFIO_PCI_BAR0_REGION_INDEX).unwrap();
    assert_eq!(bar0.size, 32 << 30);
    assert_ne!(bar0.flags & VFIO_REGION_INFO_FLAG_MMAP, 0);
    let bar5 = region(VFIO_PCI_BAR5_REGION_INDEX).unwrap();
    assert_eq!((bar5.size, bar5.offset), (MIB, 5 << 40));
    let cfg = region(VFIO_PCI_CONFIG_REGION_INDEX).unwrap();
    assert_eq!(cfg.size, 4096);
    assert_eq!(region(9).unwrap_err(), Errno::EINVAL);

    // Bus mastering through the config region, as tinygrad 0.10.1 does through libpciaccess.
    let mut cmd = [0u8; 2];
    m.pread(device, &mut cmd, cfg.offset + 4).unwrap();
    let cmd = u16::from_le_bytes(cmd);
    assert_eq!(cmd & 0x4, 0);
    m.pwrite(device, &(cmd | 0x4).to_le_bytes(), cfg.offset + 4).unwrap();
    assert_eq!(m.pci_devices()[0].command & 0x4, 0x4);

    // MSI into an eventfd.
    let mut irq = vfio_irq_info {
        argsz: 16,
        index: VFIO_PCI_MSI_IRQ_INDEX,
        ..Default::default()
    };
    ioctl(&m, device, VFIO_DEVICE_GET_IRQ_INFO, irq.as_mut_bytes()).unwrap();
    assert_eq!(irq.count, 1);
    assert_ne!(irq.flags & VFIO_IRQ_INFO_EVENTFD, 0);
    let efd = msi_to_eventfd(&m, device);
    assert!(m.pci_devices()[0].msi_eventfd);
    let mut pfd = [PollFd {
        fd: efd,
        readable: true,
        ready: false,
    }];
    assert_eq!(m.poll(&mut pfd, 0).unwrap(), 0);
    assert!(m.pci_raise_msi(0));
    assert_eq!(m.poll(&mut pfd, 1000).unwrap(), 1);
    let mut n = [0u8; 8];
    m.read(efd, &mut n).unwrap();
    assert_eq!(u64::from_ne_bytes(n), 1);

    // BARs through the device descriptor: VRAM holds the discovery binary; BAR 5 is
    // the register model.
    let vram = 512 * MIB;
    let a = map(&m, device, (vram) as usize, bar0.offset).unwrap();
    // SAFETY: a live mapping of `vram` bytes, unmapped below.
    let sig = unsafe { std::ptr::read_unaligned((a + (vram - dsc::DISCOVERY_TMR_OFFSET) as usize) as *const u32) };
    assert_eq!(sig, dsc::BINARY_SIGNATURE);
    let r = map(&m, device, MIB as usize, bar5.offset).unwrap();
    let regs = m.mmio(r).unwrap();
    assert_eq!(regs.read32(RCC_CONFIG_MEMSIZE), 512);
    regs.write32(0x1234, 0xabcd);
    let mut v = [0u8; 4];
    m.pread(device, &mut v, bar5.offset + 0x1234 * 4).unwrap();
    assert_eq!(u32::from_le_bytes(v), 0xabcd);
    m.pwrite(device, &7u32.to_le_bytes(), bar5.offset + 8).unwrap();
    let file = m.pci_registers(0).unwrap();
    assert_eq!(
        file.take_writes(),
        [
            RegWrite {
                reg: 0x1234,
                value: 0xabcd
            },
            RegWrite { reg: 2, value: 7 }
        ]
    );
    assert_eq!(
        m.pread(device, &mut v, bar5.offset + 2).unwrap_err().errno,
        Errno::EINVAL,
        "unaligned"
    );
    ioctl_value(&m, device, VFIO_DEVICE_RESET, 0).unwrap();
    assert_eq!(regs.read32(0x1234), 0);

    // Unbinding while the device is open is refused (the kernel would wait).
    assert_eq!(
        m.write_file(p(&dev("driver/unbind")), b"0000:03:00.0")
            .unwrap_err()
            .errno,
        Errno::EBUSY
    );
    unmap(&m, a, vram as usize);
    unmap(&m, r, MIB as usize);
    m.close(device).unwrap();
    assert!(
        !m.pci_devices()[0].msi_eventfd,
        "closing the device turns interrupts off"
    );
    m.close(group).unwrap();
    m.close(container).unwrap();
    m.close(efd).unwrap();
    let s = m.stats();
    assert_eq!((s.open_fds, s.host_mappings), (0, 0));
    m.write_file(p(&dev("driver/unbind")), b"0000:03:00.0").unwrap();
}

#[test]
fn an_open_device_holds_its_group_in_the_container() {
    let (m, container, group) = vfio_opened();
    ioctl(&m, group, VFIO_GROUP_SET_CONTAINER, &mut container.0.to_ne_bytes()).unwrap();
    ioctl_value(&m, container, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU).unwrap();
    let device = Fd(ioctl(&m, group, VFIO_GROUP_GET_DEVICE_FD, &mut b"0000:03:00.0\0".to_vec()).unwrap());
    assert_eq!(ioctl_value(&m, group, VFIO_GROUP_UNSET_CONTAINER, 0), Err(Errno::EBUSY));
    m.close(group).unwrap();
    m.close(container).unwrap();
    let status = |m: &MockSys| {
        let g = m.open(p("/dev/vfio/noiommu-0"), OpenMode::ReadWrite).unwrap();
        let mut st = vfio_group_status { argsz: 8, flags: 0 };
        ioctl(m, g, VFIO_GROUP_GET_STATUS, st.as_mut_bytes()).unwrap();
        m.close(g).unwrap();
        st.flags
    };
    assert_ne!(
        status(&m) & VFIO_GROUP_FLAGS_CONTAINER_SET,
        0,
        "the device still holds it"
    );
    m.close(device).unwrap();
    assert_eq!(status(&m) & VFIO_GROUP_FLAGS_CONTAINER_SET, 0);
    assert_eq!(m.stats().open_fds, 0);
}

#[test]
fn pagemap_resolves_back_to_host_memory() {
    let m = MockSys::new(MockConfig::pci(1));
    let len = 4 * 4096;
    // SAFETY: an anonymous mapping at a kernel-chosen address replaces nothing.
    let a = unsafe {
        m.mmap(
            0,
            len,
            Prot::ReadWrite,
            MapFlags::SHARED.with(MapFlags::ANONYMOUS),
            None,
            0,
        )
    }
    .unwrap();
    // SAFETY: the mapping above is live and writable; unmapped below.
    let buf = unsafe { std::slice::from_raw_parts_mut(a as *mut u8, len) };
    for (i, page) in buf.chunks_mut(4096).enumerate() {
        page.fill(i as u8 + 1);
    }
    let pm = m.open(p("/proc/self/pagemap"), OpenMode::ReadOnly).unwrap();
    let mut entries = vec![0u8; 4 * 8];
    assert_eq!(m.pread(pm, &mut entries, (a / 4096 * 8) as u64).unwrap(), 32);
    let mut frames = Vec::new();
    for (i, e) in entries.chunks(8).enumerate() {
        let e = u64::from_ne_bytes(e.try_into().unwrap());
        assert_ne!(e & PM_PRESENT, 0);
        let phys = (e & PM_PFN_MASK) * 4096;
        frames.push(phys);
        let host = m.pci_phys_to_host(phys + 0x10).unwrap();
        assert_eq!(host, a + i * 4096 + 0x10);
        // SAFETY: `host` lies inside the live mapping (checked just above).
        assert_eq!(unsafe { *(host as *const u8) }, i as u8 + 1);
    }
    frames.sort();
    frames.dedup();
    assert_eq!(frames.len(), 4);
    assert!(
        frames.iter().all(|&f| f < m.pci_devices()[0].bar0_phys),
        "no alias of a BAR"
    );
    // Reading again gives the same frames.
    let mut again = vec![0u8; 32];
    m.pread(pm, &mut again, (a / 4096 * 8) as u64).unwrap();
    assert_eq!(again, entries);
    // Pages the mock did not map read as not present; partial entries are refused.
    let mut one = [0u8; 8];
    m.pread(pm, &mut one, 8).unwrap();
    assert_eq!(u64::from_ne_bytes(one), 0);
    assert_eq!(m.pread(pm, &mut one, 4).unwrap_err().errno, Errno::EINVAL);
    assert_eq!(m.pread(pm, &mut [0u8; 5], 8).unwrap_err().errno, Errno::EINVAL);
    assert_eq!(m.pread(pm, &mut one, u64::MAX - 7).unwrap(), 8);
    assert_eq!(
        m.open(p("/proc/self/pagemap"), OpenMode::ReadWrite).unwrap_err().errno,
        Errno::EACCES
    );
    unmap(&m, a, len);
    assert!(m.pci_phys_to_host(frames[0]).is_none(), "freed pages are forgotten");
    m.close(pm).unwrap();
}

#[test]
fn hostile_ioctls_and_paths_give_errors() {
    let (m, container, group) = vfio_opened();
    // Bad container descriptors.
    assert_eq!(
        ioctl(&m, group, VFIO_GROUP_SET_CONTAINER, &mut [1, 2]),
        Err(Errno::EFAULT)
    );
    assert_eq!(
        ioctl(&m, group, VFIO_GROUP_SET_CONTAINER, &mut 9999i32.to_ne_bytes()),
        Err(Errno::EBADF)
    );
    assert_eq!(
        ioctl(&m, group, VFIO_GROUP_SET_CONTAINER, &mut group.0.to_ne_bytes()),
        Err(Errno::EBADF)
    );
    ioctl(&m, group, VFIO_GROUP_SET_CONTAINER, &mut container.0.to_ne_bytes()).unwrap();
    assert_eq!(
        ioctl(&m, group, VFIO_GROUP_SET_CONTAINER, &mut container.0.to_ne_bytes()),
        Err(Errno::EINVAL)
    );
    ioctl_value(&m, container, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU).unwrap();
    assert_eq!(
        ioctl_value(&m, container, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU),
        Err(Errno::EINVAL)
    );
    // Names without NUL, not UTF-8, empty.
    for name in [&b"0000:03:00.0"[..], b"", b"\xff\xfe\0", b"\0"] {
        assert!(ioctl(&m, group, VFIO_GROUP_GET_DEVICE_FD, &mut name.to_vec()).is_err());
    }
    let device = Fd(ioctl(
        &m,
        group,
        VFIO_GROUP_GET_DEVICE_FD,
        &mut b"0000:03:00.0\0trailing".to_vec(),
    )
    .unwrap());
    // Struct requests given values, value requests given structs, unknown requests.
    for req in [VFIO_DEVICE_GET_INFO, VFIO_DEVICE_GET_REGION_INFO, VFIO_DEVICE_SET_IRQS] {
        assert_eq!(ioctl_value(&m, device, req, 0x7fff_0000), Err(Errno::EFAULT));
    }
    assert_eq!(
        ioctl(&m, container, VFIO_CHECK_EXTENSION, &mut [0; 8]),
        Err(Errno::EINVAL)
    );
    assert_eq!(ioctl(&m, device, 0x3b00 + 150, &mut [0; 64]), Err(Errno::ENOTTY));
    assert_eq!(
        ioctl(&m, Fd(4242), VFIO_DEVICE_GET_INFO, &mut [0; 64]),
        Err(Errno::EBADF)
    );
    assert_eq!(ioctl_value(&m, Fd(4242), VFIO_DEVICE_RESET, 0), Err(Errno::EBADF));
    // argsz too small, larger than the buffer, buffers too short.
    let mut r = vfio_region_info {
        argsz: 8,
        index: 0,
        ..Default::default()
    };
    assert_eq!(
        ioctl(&m, device, VFIO_DEVICE_GET_REGION_INFO, r.as_mut_bytes()),
        Err(Errno::EINVAL)
    );
    r.argsz = 4096;
    assert_eq!(
        ioctl(&m, device, VFIO_DEVICE_GET_REGION_INFO, r.as_mut_bytes()),
        Err(Errno::EINVAL)
    );
    r.argsz = 32;
    r.index = u32::MAX;
    assert_eq!(
        ioctl(&m, device, VFIO_DEVICE_GET_REGION_INFO, r.as_mut_bytes()),
        Err(Errno::EINVAL)
    );
    for req in [
        VFIO_DEVICE_GET_INFO,
        VFIO_DEVICE_GET_REGION_INFO,
        VFIO_DEVICE_GET_IRQ_INFO,
        VFIO_DEVICE_SET_IRQS,
    ] {
        assert!(ioctl(&m, device, req, &mut []).is_err());
        assert!(ioctl(&m, device, req, &mut [0xff; 3]).is_err());
    }
    // SET_IRQS: counts that overflow, data past argsz, unknown eventfds, two actions.
    let irq = |flags: u32, index: u32, start: u32, count: u32, data: &[u8], argsz: Option<u32>| {
        let mut v = vfio_irq_set {
            argsz: argsz.unwrap_or(20 + data.len() as u32),
            flags,
            index,
            start,
            count,
        }
        .as_bytes()
        .to_vec();
        v.extend_from_slice(data);
        ioctl(&m, device, VFIO_DEVICE_SET_IRQS, &mut v)
    };
    let ev = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
    assert_eq!(irq(ev, 1, 0, u32::MAX, &[0; 4], None), Err(Errno::EINVAL));
    assert_eq!(irq(ev, 1, u32::MAX, 1, &[0; 4], None), Err(Errno::EINVAL));
    assert_eq!(irq(ev, 1, 0, 1, &[0; 4], Some(22)), Err(Errno::EINVAL));
    assert_eq!(irq(ev, 1, 0, 1, &4242i32.to_ne_bytes(), None), Err(Errno::EINVAL));
    assert_eq!(
        irq(ev, 1, 0, 1, &group.0.to_ne_bytes(), None),
        Err(Errno::EINVAL),
        "not an eventfd"
    );
    assert_eq!(irq(ev, 1, 0, 0, &[], None), Err(Errno::EINVAL));
    assert_eq!(
        irq(ev | VFIO_IRQ_SET_DATA_BOOL, 1, 0, 1, &[0; 4], None),
        Err(Errno::EINVAL)
    );
    assert_eq!(irq(ev | 1 << 9, 1, 0, 1, &[0; 4], None), Err(Errno::EINVAL));
    assert_eq!(irq(ev, 77, 0, 1, &[0; 4], None), Err(Errno::EINVAL));
    assert_eq!(
        irq(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_MASK, 1, 0, 1, &[], None),
        Err(Errno::ENOTTY)
    );
    irq(ev, 1, 0, 1, &(-1i32).to_ne_bytes(), None).unwrap();
    irq(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, 1, 0, 0, &[], None).unwrap();
    // Random arguments to every request never panic.
    let mut next = common::xorshift64(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let len = (next() % 48) as usize;
        let mut arg: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if len >= 4 && next() % 2 == 0 {
            arg[..4].copy_from_slice(&(len as u32).to_ne_bytes());
        }
        let req = VFIO_GET_API_VERSION + next() % 14;
        let fd = [container, group, device][(next() % 3) as usize];
        let _ = ioctl(&m, fd, req, &mut arg);
        let _ = ioctl_value(&m, fd, req, next());
    }
    // Region reads and maps out of range.
    let mut b = [0u8; 16];
    assert_eq!(m.pread(device, &mut b, 5 << 40 | MIB).unwrap_err().errno, Errno::EINVAL);
    assert_eq!(m.pread(device, &mut b, u64::MAX).unwrap_err().errno, Errno::EINVAL);
    assert_eq!(
        m.pread(device, &mut b, 7 << 40 | 4090).unwrap(),
        6,
        "config space ends at 4 KiB"
    );
    assert_eq!(m.pread(device, &mut b, 7 << 40 | 5000).unwrap(), 0);
    assert_eq!(
        map(&m, device, 4096, 7 << 40).unwrap_err(),
        Errno::EINVAL,
        "config does not map"
    );
    assert_eq!(
        map(&m, device, 4096, 4 << 40).unwrap_err(),
        Errno::EINVAL,
        "I/O does not map"
    );
    assert_eq!(map(&m, device, 2 * MIB as usize, 5 << 40).unwrap_err(), Errno::EINVAL);
    // Hostile paths.
    for path in [
        "/sys/bus/pci/devices/../devices",
        "/sys/bus/pci/devices/0000:03:00.0/driver/unbind/x",
        "/sys/bus/pci/devices/0000:03:00.0/nonexistent",
        "/sys/bus/pci/devices/0000:03:00.0/resource0/x",
        "/sys/bus/pci/devices/0000:99:00.0/vendor",
        "/sys/bus/pci/drivers/nouveau/bind",
        "/dev/vfio/noiommu-99999999999999999999",
        "/dev/vfio/noiommu--1",
        "/dev/vfio/noiommu-7",
        "/dev/vfio/",
    ] {
        assert!(m.read_file(p(path)).is_err(), "{path}");
        assert!(m.write_file(p(path), b"0000:03:00.0").is_err(), "{path}");
        let _ = m.open(p(path), OpenMode::ReadWrite);
        let _ = m.list_dir(p(path));
        let _ = m.readlink(p(path));
    }
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"/sys/bus/pci/devices/\xff\xfe/vendor");
    assert_eq!(m.read_file(Path::new(bad)).unwrap_err().errno, Errno::ENOENT);
    assert!(!m.exists(Path::new(bad)));
    assert_eq!(m.read_file(p(&dev("resource0"))).unwrap_err().errno, Errno::EINVAL);
    assert_eq!(m.read_file(p(&dev("driver/unbind"))).unwrap_err().errno, Errno::EIO);
    assert_eq!(
        m.open(p(&dev("vendor")), OpenMode::ReadOnly).unwrap_err().errno,
        Errno::ENOENT
    );
    m.close(device).unwrap();
    m.close(group).unwrap();
    m.close(container).unwrap();
    assert_eq!(m.stats().open_fds, 0);
}

#[test]
fn a_bar_that_cannot_be_mapped_fails_with_its_resource_named() {
    let m = MockSys::new(MockConfig::pci(1));
    assert!(m.pci_inject(
        0,
        PciFault::BarMap {
            bar: 2,
            errno: Errno::ENOMEM
        }
    ));
    assert!(!m.pci_inject(
        0,
        PciFault::BarMap {
            bar: 6,
            errno: Errno::ENOMEM
        }
    ));
    let fd2 = m.open(p(&dev("resource2")), OpenMode::ReadWrite).unwrap();
    // SAFETY: a shared mapping at an address the kernel picks replaces nothing.
    let e = unsafe { m.mmap(0, 4096, Prot::ReadWrite, MapFlags::SHARED, Some(fd2), 0) }.unwrap_err();
    assert_eq!(e.errno, Errno::ENOMEM);
    assert_eq!(e.path.as_deref(), Some(p(&dev("resource2"))));
    assert!(e.to_string().contains("resource2"), "{e}");
    // The other BARs map.
    let fd0 = m.open(p(&dev("resource0")), OpenMode::ReadWrite).unwrap();
    let a = map(&m, fd0, 4096, 0).unwrap();
    unmap(&m, a, 4096);
    // Through VFIO too: region 2 of the device fails the same way.
    to_vfio(&m);
    let c = m.open(p("/dev/vfio/vfio"), OpenMode::ReadWrite).unwrap();
    let g = m.open(p("/dev/vfio/noiommu-0"), OpenMode::ReadWrite).unwrap();
    let mut cfd = c.0;
    ioctl(&m, g, VFIO_GROUP_SET_CONTAINER, cfd.as_mut_bytes()).unwrap();
    ioctl_value(&m, c, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU).unwrap();
    let d = Fd(ioctl(&m, g, VFIO_GROUP_GET_DEVICE_FD, &mut b"0000:03:00.0\0".to_vec()).unwrap());
    let e = map(&m, d, 4096, 2u64 << 40).unwrap_err();
    assert_eq!(e, Errno::ENOMEM);
    assert!(map(&m, d, 4096, 0).is_ok(), "region 0 maps");
    // Cleared: BAR 2 maps again.
    assert!(m.clear_injections());
    let a = map(&m, fd2, 4096, 0).unwrap();
    unmap(&m, a, 4096);
}
