//! The mock's file system: emulated `/dev` and `/sys`, host reads elsewhere.

use std::path::Path;

use amd_kfd::sys::{OpenMode, Sys};
use amd_mockgpu::{GpuProfile, MockConfig, MockSys};
use nix::errno::Errno;

#[test]
fn sysfs_topology_and_devices() {
    let m = MockSys::new(MockConfig {
        gpus: vec![GpuProfile::gfx1100(), GpuProfile::gfx1030().without_large_bar()],
        ..MockConfig::default()
    });
    let nodes = Path::new("/sys/devices/virtual/kfd/kfd/topology/nodes");
    // VRAM the CPU sees all of is a public frame buffer (heap type 1), else a private
    // one (2), as kfd_crat.c reports it.
    let heap = |n: u32| String::from_utf8(m.read_file(&nodes.join(format!("{n}/mem_banks/0/properties"))).unwrap());
    assert!(heap(1).unwrap().starts_with("heap_type 1\n"));
    assert!(heap(2).unwrap().starts_with("heap_type 2\n"));
    let mut names = m.list_dir(nodes).unwrap();
    names.sort();
    assert_eq!(names, ["0", "1", "2"]);
    assert_eq!(m.read_file(&nodes.join("0/gpu_id")).unwrap(), b"0\n");
    let id = String::from_utf8(m.read_file(&nodes.join("2/gpu_id")).unwrap()).unwrap();
    assert_eq!(id.trim().parse::<u32>().unwrap(), m.gpu_id(1).unwrap());
    let props = String::from_utf8(m.read_file(&nodes.join("2/properties")).unwrap()).unwrap();
    assert!(props.contains("gfx_target_version 100300\n") && props.contains("drm_render_minor 129\n"));
    assert!(m.exists(Path::new("/dev/kfd")) && m.exists(Path::new("/dev/dri/renderD129")));
    assert!(!m.exists(Path::new("/dev/dri/renderD130")));
    assert!(m.exists(Path::new("/sys/module/amdgpu")));
    // rocminfo's first question: is the module live?
    assert_eq!(
        m.read_file(Path::new("/sys/module/amdgpu/initstate")).unwrap(),
        b"live\n"
    );
    let mut module = m.list_dir(Path::new("/sys/module/amdgpu")).unwrap();
    module.sort();
    assert_eq!(module, ["initstate", "parameters"]);
    assert_eq!(m.read_file(&nodes.join("3/gpu_id")).unwrap_err().errno, Errno::ENOENT);
    assert_eq!(
        m.read_file(Path::new("/sys/class/drm/card0/device/vendor"))
            .unwrap_err()
            .errno,
        Errno::ENOENT
    );
    assert_eq!(
        m.open(Path::new("/dev/dri/renderD200"), OpenMode::ReadWrite)
            .unwrap_err()
            .errno,
        Errno::ENOENT
    );

    let kfd = m.open(Path::new("/dev/kfd"), OpenMode::ReadWrite).unwrap();
    let mut junk = [0u8; 8];
    // SAFETY: an unknown request reads nothing through pointers.
    let r = unsafe { m.ioctl(kfd, 0xdead, "JUNK", &mut junk) };
    assert_eq!(r.unwrap_err().errno, Errno::ENOTTY);
    // A request whose size is past the buffer given is refused, not read past (the
    // kernel's copy_from_user would fault: EFAULT).
    let mut short = [0u8; 3];
    let req = amd_kfd::abi::AMDKFD_IOC_GET_VERSION;
    // SAFETY: GET_VERSION carries no pointers.
    let r = unsafe { m.ioctl(kfd, req.request, req.name, &mut short) };
    assert_eq!(r.unwrap_err().errno, Errno::EFAULT);
    m.close(kfd).unwrap();
    assert_eq!(m.close(kfd).unwrap_err().errno, Errno::EBADF);
    assert_eq!(m.stats().open_fds, 0);
}

#[test]
fn reads_outside_dev_and_sys_reach_the_host() {
    let m = MockSys::default();
    assert!(!m.read_file(Path::new("/proc/self/status")).unwrap().is_empty());
    assert!(m.list_dir(Path::new("/proc/self")).unwrap().iter().any(|n| n == "maps"));
    let fd = m.open(Path::new("/proc/self/status"), OpenMode::ReadOnly).unwrap();
    m.close(fd).unwrap();
    assert_eq!(
        m.open(Path::new("/tmp/amd-mock-write"), OpenMode::ReadWrite)
            .unwrap_err()
            .errno,
        Errno::EACCES
    );
    assert_eq!(
        m.write_file(Path::new("/tmp/amd-mock-write"), b"x").unwrap_err().errno,
        Errno::EACCES
    );
    assert_eq!(m.stats().open_fds, 0);
}

/// Each render node's sysfs directory, as amdgpu writes it: what tinygrad 0.14 reads
/// before it opens anything (`ip_discovery/die/0/<hw_id>/0/{major,minor,revision}` of
/// GC, SDMA0 and NBIF), the PCI identity and the named links to the hardware ids.
#[test]
fn render_node_sysfs_and_ip_discovery() {
    let m = MockSys::new(MockConfig {
        gpus: vec![GpuProfile::gfx1100(), GpuProfile::gfx1030()],
        ..MockConfig::default()
    });
    let read = |p: &str| String::from_utf8(m.read_file(Path::new(p)).unwrap()).unwrap();
    let list = |p: &str| {
        let mut v = m.list_dir(Path::new(p)).unwrap();
        v.sort();
        v
    };
    assert_eq!(list("/sys/class/drm"), ["renderD128", "renderD129"]);
    assert_eq!(read("/sys/class/drm/renderD129/dev"), "226:129\n");
    let dev = "/sys/class/drm/renderD128/device";
    assert_eq!(read(&format!("{dev}/vendor")), "0x1002\n");
    assert_eq!(read(&format!("{dev}/device")), "0x744c\n");
    assert_eq!(read(&format!("{dev}/class")), "0x030000\n");
    let uevent = read(&format!("{dev}/uevent"));
    assert!(
        uevent.starts_with("DRIVER=amdgpu\nPCI_CLASS=30000\nPCI_ID=1002:744C\n"),
        "{uevent}"
    );
    // location_id 34304 = bus 0x86, device 0, function 0.
    assert!(uevent.contains("PCI_SLOT_NAME=0000:86:00.0\n"), "{uevent}");
    assert_eq!(
        read(&format!("{dev}/mem_info_vram_total")),
        format!("{}\n", 24u64 << 30)
    );
    // What tinygrad 0.14 does: list die/0, keep the numeric names, read three files.
    let die = |d: &str| format!("/sys/class/drm/{d}/device/ip_discovery/die/0");
    let version = |d: &str, hw: u16| {
        let base = format!("{}/{hw}/0", die(d));
        ["major", "minor", "revision"].map(|f| read(&format!("{base}/{f}")).trim().parse::<u32>().unwrap())
    };
    let entries = list(&die("renderD128"));
    for hw in ["11", "42", "43", "108", "num_ips", "GC", "SDMA0", "NBIF"] {
        assert!(entries.iter().any(|e| e == hw), "{hw} missing from {entries:?}");
    }
    assert_eq!(version("renderD128", 11), [11, 0, 0], "GC");
    assert_eq!(version("renderD128", 42), [6, 0, 0], "SDMA0");
    assert_eq!(version("renderD128", 108), [4, 3, 0], "NBIF");
    assert_eq!(version("renderD129", 11), [10, 3, 0], "GC of the gfx1030");
    assert_eq!(version("renderD129", 68), [5, 2, 0], "SDMA2 of the gfx1030");
    assert_eq!(read(&format!("{}/num_ips", die("renderD128"))), "12\n");
    // The named link, and reads through it.
    assert_eq!(
        m.readlink(Path::new(&format!("{}/GC", die("renderD128")))).unwrap(),
        Path::new("11")
    );
    assert_eq!(read(&format!("{}/GC/0/major", die("renderD128"))), "11\n");
    assert_eq!(list(&format!("{}/GC", die("renderD128"))), ["0"]);
    let gc = format!("{}/11/0", die("renderD128"));
    assert_eq!(read(&format!("{gc}/hw_id")), "11\n");
    assert_eq!(read(&format!("{gc}/harvest")), "0x0\n");
    assert_eq!(read(&format!("{gc}/num_base_addresses")), "4\n");
    assert_eq!(
        read(&format!("{gc}/base_addr")),
        "0x00001260\n0x0000A000\n0x0001C000\n0x02402C00\n"
    );
    // The gfx1030's second VCN is fused off.
    assert_eq!(read(&format!("{}/12/1/harvest", die("renderD129"))), "0x1\n");
    // What is not there.
    for p in [
        "/sys/class/drm/renderD130/dev",
        "/sys/class/drm/renderD128/device/nothing",
        "/sys/class/drm/renderD128/device/ip_discovery/die/1",
        "/sys/class/drm/renderD128/device/ip_discovery/die/0/11/1/major",
        "/sys/class/drm/renderD128/device/ip_discovery/die/0/9999/0/major",
    ] {
        assert_eq!(m.read_file(Path::new(p)).unwrap_err().errno, Errno::ENOENT, "{p}");
    }
    assert_eq!(
        m.read_file(Path::new(dev)).unwrap_err().errno,
        Errno::EISDIR,
        "a directory is no file"
    );
}

/// What libdrm reads to tell a DRM render node by its device number:
/// `/sys/dev/char/226:<minor>` links to the node's directory, whose `device/drm` lists
/// it and whose `device/subsystem` names the bus (`pci`, the link's last component).
#[test]
fn render_nodes_by_device_number() {
    let m = MockSys::new(MockConfig::gfx1100s(2));
    let char_dir = Path::new("/sys/dev/char");
    let mut numbers = m.list_dir(char_dir).unwrap();
    numbers.sort();
    assert_eq!(numbers, ["226:128", "226:129"]);
    assert_eq!(
        m.readlink(&char_dir.join("226:129")).unwrap(),
        Path::new("../../class/drm/renderD129")
    );
    assert!(m.exists(&char_dir.join("226:128/device/drm")));
    assert_eq!(
        m.list_dir(&char_dir.join("226:129/device/drm")).unwrap(),
        ["renderD129"]
    );
    assert_eq!(m.read_file(&char_dir.join("226:129/dev")).unwrap(), b"226:129\n");
    let bus = m
        .readlink(Path::new("/sys/class/drm/renderD128/device/subsystem"))
        .unwrap();
    assert_eq!(bus.file_name().unwrap(), "pci");
    assert_eq!(
        m.read_file(&char_dir.join("226:130/dev")).unwrap_err().errno,
        Errno::ENOENT
    );
    assert!(!m.exists(&char_dir.join("227:128")));
}

/// `AMDKFD_IOC_GET_TILE_CONFIG` as KFD answers it for gfx9 and later (ROCr's image
/// support asks before anything else, and asserts on failure): GB_ADDR_CONFIG, the
/// tile arrays zero as far as the caller's room goes (32 and 16 entries at most), no
/// banks or ranks; a `gpu_id` that is no GPU is EINVAL.
#[test]
fn tile_config_as_kfd_answers_it() {
    use amd_kfd::abi::{AMDKFD_IOC_GET_TILE_CONFIG, kfd_ioctl_get_tile_config_args};
    use zerocopy::{FromBytes, IntoBytes};
    let m = MockSys::new(MockConfig::gfx1100s(1));
    let kfd = m.open(Path::new("/dev/kfd"), OpenMode::ReadWrite).unwrap();
    let mut tiles = [0xffff_ffffu32; 40];
    let mut macros = [0xffff_ffffu32; 20];
    let mut a = kfd_ioctl_get_tile_config_args {
        tile_config_ptr: tiles.as_mut_ptr() as u64,
        macro_tile_config_ptr: macros.as_mut_ptr() as u64,
        num_tile_configs: 40,
        num_macro_tile_configs: 20,
        gpu_id: m.gpu_id(0).unwrap(),
        gb_addr_config: 0,
        num_banks: 7,
        num_ranks: 7,
    };
    let req = AMDKFD_IOC_GET_TILE_CONFIG;
    // SAFETY: the arrays have the room the struct says.
    unsafe { m.ioctl(kfd, req.request, req.name, a.as_mut_bytes()) }.unwrap();
    let a = kfd_ioctl_get_tile_config_args::read_from_bytes(a.as_bytes()).unwrap();
    assert_eq!((a.num_tile_configs, a.num_macro_tile_configs), (32, 16));
    assert_eq!((a.gb_addr_config, a.num_banks, a.num_ranks), (0x545, 0, 0));
    assert!(tiles[..32].iter().all(|&t| t == 0) && tiles[32..].iter().all(|&t| t == 0xffff_ffff));
    assert!(macros[..16].iter().all(|&t| t == 0) && macros[16..].iter().all(|&t| t == 0xffff_ffff));
    let mut bad = a;
    bad.gpu_id = 12345;
    // SAFETY: as above.
    let r = unsafe { m.ioctl(kfd, req.request, req.name, bad.as_mut_bytes()) };
    assert_eq!(r.unwrap_err().errno, Errno::EINVAL);
}

/// A GPU node's capability does not claim the SVM API (`HSA_CAP_SVMAPI_SUPPORTED`):
/// the mock answers no `AMDKFD_IOC_SVM`, so a client must not take that path.
#[test]
fn capability_claims_no_svm() {
    let m = MockSys::new(MockConfig::gfx1100s(1));
    let props = String::from_utf8(
        m.read_file(Path::new("/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties"))
            .unwrap(),
    )
    .unwrap();
    let cap: u64 = props
        .lines()
        .find_map(|l| l.strip_prefix("capability "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(cap & amd_mockgpu::HSA_CAP_SVMAPI_SUPPORTED, 0, "{cap:#x}");
    assert_ne!(cap, 0, "the rest of the card's capability stays");
}

/// The MMIO remap page (ROCr's HDP flush) as KFD gives it: an allocation with
/// `KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP` returns KFD's `/dev/kfd` offset for it (the
/// GPU id in bits 61:46, type MMIO), and one page maps there, writable; other
/// sizes are EINVAL.
#[test]
fn the_mmio_remap_page_maps_through_dev_kfd() {
    use amd_kfd::abi::*;
    use amd_kfd::sys::{MapFlags, Prot};
    use zerocopy::IntoBytes;
    let m = MockSys::new(MockConfig::gfx1100s(1));
    let gpu_id = m.gpu_id(0).unwrap();
    let kfd = m.open(Path::new("/dev/kfd"), OpenMode::ReadWrite).unwrap();
    let render = m.open(Path::new("/dev/dri/renderD128"), OpenMode::ReadWrite).unwrap();
    let mut vm = kfd_ioctl_acquire_vm_args {
        drm_fd: render.0 as u32,
        gpu_id,
    };
    let req = AMDKFD_IOC_ACQUIRE_VM;
    // SAFETY: ACQUIRE_VM carries no pointers.
    unsafe { m.ioctl(kfd, req.request, req.name, vm.as_mut_bytes()) }.unwrap();
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: 0x7f00_0000_0000,
        size: 4096,
        handle: 0,
        mmap_offset: 0,
        gpu_id,
        flags: KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
    };
    let req = AMDKFD_IOC_ALLOC_MEMORY_OF_GPU;
    // SAFETY: ALLOC_MEMORY_OF_GPU reads no pointers for an MMIO remap page.
    unsafe { m.ioctl(kfd, req.request, req.name, a.as_mut_bytes()) }.unwrap();
    assert_eq!(a.mmap_offset, u64::from(gpu_id) << 46);
    // SAFETY: a fresh mapping the kernel places replaces nothing.
    let page = unsafe { m.mmap(0, 4096, Prot::ReadWrite, MapFlags::SHARED, Some(kfd), a.mmap_offset) }.unwrap();
    // SAFETY: the page was just mapped, read-write, 4096 bytes.
    unsafe { (page as *mut u32).write_volatile(1) };
    // SAFETY: as above, and a wrong size maps nothing.
    let two = unsafe { m.mmap(0, 8192, Prot::ReadWrite, MapFlags::SHARED, Some(kfd), a.mmap_offset) };
    assert_eq!(two.unwrap_err().errno, Errno::EINVAL);
}
