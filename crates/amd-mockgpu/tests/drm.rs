//! The render node's ioctls, raw, as libdrm's `amdgpu_device_initialize` and tinygrad
//! issue them: the driver version (twice, lengths first), capabilities, the core
//! ioctls a render client may not use, and `DRM_IOCTL_AMDGPU_INFO`'s queries with
//! the kernel's sizes and errnos.

use std::path::Path;

use amd_kfd::sys::{Fd, OpenMode, Sys};
use amd_mockgpu::drm::abi::*;
use amd_mockgpu::{GpuProfile, MockConfig, MockSys};
use nix::errno::Errno;
use zerocopy::{FromBytes, FromZeros, IntoBytes};

fn request(dir: u64, nr: u8, size: usize) -> u64 {
    (dir << 30) | ((size as u64) << 16) | (u64::from(DRM_IOCTL_BASE) << 8) | u64::from(nr)
}

fn raw(m: &MockSys, fd: Fd, req: u64, bytes: &mut [u8]) -> Result<i32, Errno> {
    // SAFETY: the arguments hold pointers only into live buffers of this test, with
    // the room their lengths say.
    unsafe { m.ioctl(fd, req, "raw", bytes) }.map_err(|e| e.errno)
}

fn setup(profile: GpuProfile) -> (MockSys, Fd) {
    let m = MockSys::new(MockConfig {
        gpus: vec![profile],
        ..MockConfig::default()
    });
    let fd = m.open(Path::new("/dev/dri/renderD128"), OpenMode::ReadWrite).unwrap();
    (m, fd)
}

/// One INFO query with `args`, answered into `size` bytes.
fn info(m: &MockSys, fd: Fd, query: u32, args: [u32; 4], size: usize) -> Result<Vec<u8>, Errno> {
    let mut out = vec![0xeeu8; size];
    let mut a = drm_amdgpu_info {
        return_pointer: out.as_mut_ptr() as u64,
        return_size: size as u32,
        query,
        args,
    };
    raw(m, fd, request(1, DRM_AMDGPU_INFO_NR, 32), a.as_mut_bytes())?;
    Ok(out)
}

#[test]
fn version_caps_and_refused_core_ioctls() {
    let (m, fd) = setup(GpuProfile::gfx1100());
    // drmGetVersion: lengths first, then the strings into buffers of those lengths.
    let mut v = drm_version::new_zeroed();
    raw(&m, fd, request(3, DRM_IOCTL_VERSION_NR, 64), v.as_mut_bytes()).unwrap();
    assert_eq!((v.version_major, v.version_minor, v.version_patchlevel), (3, 61, 0));
    assert_eq!((v.name_len, v.date_len, v.desc_len), (6, 1, 7));
    let (mut name, mut date, mut desc) = (vec![0u8; 6], vec![0u8; 1], vec![0u8; 3]);
    v.name = name.as_mut_ptr() as u64;
    v.date = date.as_mut_ptr() as u64;
    v.desc = desc.as_mut_ptr() as u64;
    v.desc_len = 3;
    raw(&m, fd, request(3, DRM_IOCTL_VERSION_NR, 64), v.as_mut_bytes()).unwrap();
    assert_eq!(
        (&name[..], &date[..], &desc[..]),
        (&b"amdgpu"[..], &b"0"[..], &b"AMD"[..])
    );
    assert_eq!(v.desc_len, 7, "the whole length comes back, the copy is cut");

    let mut cap = drm_get_cap {
        capability: DRM_CAP_SYNCOBJ_TIMELINE,
        value: 9,
    };
    raw(&m, fd, request(3, DRM_IOCTL_GET_CAP_NR, 16), cap.as_mut_bytes()).unwrap();
    assert_eq!(cap.value, 1);
    cap.capability = 0x1234;
    assert_eq!(
        raw(&m, fd, request(3, DRM_IOCTL_GET_CAP_NR, 16), cap.as_mut_bytes()).unwrap_err(),
        Errno::EINVAL
    );
    // A render client may not ask who it is, nor the device's unique name.
    let mut client = [0u8; 40];
    assert_eq!(
        raw(&m, fd, request(3, DRM_IOCTL_GET_CLIENT_NR, 40), &mut client).unwrap_err(),
        Errno::EACCES
    );
    let mut unique = [0u8; 16];
    assert_eq!(
        raw(&m, fd, request(3, DRM_IOCTL_GET_UNIQUE_NR, 16), &mut unique).unwrap_err(),
        Errno::EACCES
    );
    // Another driver's type: not a DRM ioctl at all.
    let mut x = [0u8; 8];
    let kfd_version = (2 << 30) | (8 << 16) | (u64::from(b'K') << 8) | 1;
    assert_eq!(raw(&m, fd, kfd_version, &mut x).unwrap_err(), Errno::ENOTTY);
}

#[test]
fn amdgpu_info_as_libdrm_initialises() {
    let (m, fd) = setup(GpuProfile::gfx1100());
    assert_eq!(
        info(&m, fd, AMDGPU_INFO_ACCEL_WORKING, [0; 4], 4).unwrap(),
        1u32.to_ne_bytes()
    );
    // libdrm 2.4.125's struct is 448 bytes: the kernel's 440 come back, the tail is
    // the caller's own.
    let dev = info(&m, fd, AMDGPU_INFO_DEV_INFO, [0; 4], 448).unwrap();
    assert_eq!(&dev[440..], &[0xee; 8]);
    let d = drm_amdgpu_info_device::read_from_bytes(&dev[..440]).unwrap();
    assert_eq!(
        (d.device_id, d.pci_rev, d.family),
        (0x744c, 0xc8, AMDGPU_FAMILY_GC_11_0_0)
    );
    assert_eq!(
        (d.num_shader_engines, d.num_shader_arrays_per_engine, d.cu_active_number),
        (6, 2, 96)
    );
    assert_eq!(d.gpu_counter_freq, 100_000, "the 100 MHz clock, in kHz");
    // Six SEs of two SAs, gfx11's layout: SEs 4 and 5 in columns 2 and 3.
    assert_eq!(
        d.cu_bitmap,
        [[0xff; 4], [0xff; 4], [0xff, 0xff, 0, 0], [0xff, 0xff, 0, 0]]
    );
    // tinygrad's is_wgp_active reads (cu_bitmap[se % 4][sa + (se / 4) * 2] >> 2 * wgp) & 3.
    let active = |se: usize, sa: usize, wgp: u32| (d.cu_bitmap[se % 4][sa + (se / 4) * 2] >> (2 * wgp)) & 3 == 3;
    assert!((0..6).all(|se| (0..2).all(|sa| (0..4).all(|w| active(se, sa, w)))));
    assert!(!active(0, 0, 4));
    assert_eq!(
        (d.virtual_address_offset, d.virtual_address_max),
        (0x1_0000, 0x8000_0000_0000)
    );
    assert_eq!(d.wave_front_size, 32);
    // A shorter buffer gets the start.
    assert_eq!(
        info(&m, fd, AMDGPU_INFO_DEV_INFO, [0; 4], 4).unwrap(),
        0x744cu32.to_ne_bytes()
    );
    // READ_MMR_REG of GB_ADDR_CONFIG, broadcast; a register off the kernel's list
    // is EFAULT; an SE past four, or more than 128 dwords, EINVAL.
    let gb = amd_mockgpu::drm::GB_ADDR_CONFIG;
    assert_eq!(
        info(&m, fd, AMDGPU_INFO_READ_MMR_REG, [gb, 1, u32::MAX, 0], 4)
            .unwrap()
            .len(),
        4
    );
    assert_eq!(
        info(&m, fd, AMDGPU_INFO_READ_MMR_REG, [gb, 2, u32::MAX, 0], 8).unwrap_err(),
        Errno::EFAULT
    );
    assert_eq!(
        info(&m, fd, AMDGPU_INFO_READ_MMR_REG, [gb, 1, 4, 0], 4).unwrap_err(),
        Errno::EINVAL
    );
    assert_eq!(
        info(&m, fd, AMDGPU_INFO_READ_MMR_REG, [gb, 129, u32::MAX, 0], 4).unwrap_err(),
        Errno::EINVAL
    );
    // The general rules.
    assert_eq!(info(&m, fd, 0x7777, [0; 4], 8).unwrap_err(), Errno::EINVAL);
    assert_eq!(
        info(&m, fd, AMDGPU_INFO_ACCEL_WORKING, [0; 4], 0).unwrap_err(),
        Errno::EINVAL
    );
    let mut null = drm_amdgpu_info {
        return_pointer: 0,
        return_size: 4,
        query: AMDGPU_INFO_ACCEL_WORKING,
        args: [0; 4],
    };
    assert_eq!(
        raw(&m, fd, request(1, DRM_AMDGPU_INFO_NR, 32), null.as_mut_bytes()).unwrap_err(),
        Errno::EINVAL
    );
}

#[test]
fn memory_engines_and_firmware() {
    let (m, fd) = setup(GpuProfile::gfx1100());
    let vg =
        drm_amdgpu_info_vram_gtt::read_from_bytes(&info(&m, fd, AMDGPU_INFO_VRAM_GTT, [0; 4], 24).unwrap()).unwrap();
    assert_eq!(vg.vram_size, (24 << 30) - (8 << 20), "less the kernel's reserve");
    assert_eq!(vg.vram_cpu_accessible_size, vg.vram_size, "resizable BAR");
    let mem = drm_amdgpu_memory_info::read_from_bytes(&info(&m, fd, AMDGPU_INFO_MEMORY, [0; 4], 96).unwrap()).unwrap();
    assert_eq!(mem.vram.total_heap_size, 24 << 30);
    assert_eq!(mem.vram.max_allocation, mem.vram.usable_heap_size / 4 * 3);
    let hw = |ty| {
        drm_amdgpu_info_hw_ip::read_from_bytes(&info(&m, fd, AMDGPU_INFO_HW_IP_INFO, [ty, 0, 0, 0], 32).unwrap())
            .unwrap()
    };
    let gfx = hw(AMDGPU_HW_IP_GFX);
    assert_eq!(
        (gfx.hw_ip_version_major, gfx.available_rings, gfx.ip_discovery_version),
        (11, 1, 0x0b_0000)
    );
    let dma = hw(AMDGPU_HW_IP_DMA);
    assert_eq!(
        (dma.hw_ip_version_major, dma.hw_ip_version_minor, dma.available_rings),
        (6, 0, 0x3)
    );
    assert_eq!(
        hw(6).available_rings,
        0,
        "no video engines: an absent block reads as zeros"
    );
    assert_eq!(
        info(&m, fd, AMDGPU_INFO_HW_IP_INFO, [10, 0, 0, 0], 32).unwrap_err(),
        Errno::EINVAL
    );
    assert_eq!(
        info(&m, fd, AMDGPU_INFO_HW_IP_INFO, [0, 1, 0, 0], 32).unwrap_err(),
        Errno::EINVAL
    );
    let count = |ty| {
        info(&m, fd, AMDGPU_INFO_HW_IP_COUNT, [ty, 0, 0, 0], 4).map(|b| u32::from_ne_bytes(b[..4].try_into().unwrap()))
    };
    assert_eq!(count(AMDGPU_HW_IP_DMA), Ok(2));
    assert_eq!(count(AMDGPU_HW_IP_COMPUTE), Ok(1));
    assert_eq!(count(7), Err(Errno::EINVAL));
    let fw = |ty, inst, index| {
        info(&m, fd, AMDGPU_INFO_FW_VERSION, [ty, inst, index, 0], 8)
            .map(|b| drm_amdgpu_info_firmware::read_from_bytes(&b).unwrap().ver)
    };
    assert_eq!(fw(AMDGPU_INFO_FW_GFX_MEC, 0, 0), Ok(2140), "the topology's fw_version");
    assert_eq!(fw(AMDGPU_INFO_FW_SDMA, 0, 1), Ok(20));
    assert_eq!(fw(AMDGPU_INFO_FW_SDMA, 0, 2), Err(Errno::EINVAL), "two SDMA engines");
    assert_eq!(fw(AMDGPU_INFO_FW_GFX_MEC, 1, 0), Err(Errno::EINVAL), "instance 0 only");
    assert_eq!(fw(0x99, 0, 0), Err(Errno::EINVAL));

    // The gfx1030: four SDMA engines, gfx10's CU bitmap ([se][sa]), family NV.
    let (m, fd) = setup(GpuProfile::gfx1030());
    let d = drm_amdgpu_info_device::read_from_bytes(&info(&m, fd, AMDGPU_INFO_DEV_INFO, [0; 4], 440).unwrap()).unwrap();
    assert_eq!((d.family, d.num_shader_engines), (AMDGPU_FAMILY_NV, 4));
    assert_eq!(d.cu_bitmap[3][1].count_ones() * 8, d.cu_active_number);
    let count = info(&m, fd, AMDGPU_INFO_HW_IP_COUNT, [AMDGPU_HW_IP_DMA, 0, 0, 0], 4).unwrap();
    assert_eq!(u32::from_ne_bytes(count[..4].try_into().unwrap()), 4);
}

/// An MI300X partition (`gfx942`) answers as a gfx9 part: family AI, HBM, 4 shader
/// engines of one array of 10 CUs (38 active), waves of 64, SDMA 4.4 on its DMA
/// engines; its sysfs reads GC 9.4.3 and the topology's gfx942. The gfx1201 reads as
/// GC 12's family.
#[test]
fn an_mi300x_partition_reads_as_gfx9() {
    let (m, fd) = setup(GpuProfile::gfx942());
    let d = drm_amdgpu_info_device::read_from_bytes(&info(&m, fd, AMDGPU_INFO_DEV_INFO, [0; 4], 440).unwrap()).unwrap();
    assert_eq!((d.family, d.external_rev), (AMDGPU_FAMILY_AI, 0));
    assert_eq!((d.num_shader_engines, d.num_shader_arrays_per_engine), (4, 1));
    assert_eq!((d.cu_active_number, d.num_cu_per_sh, d.wave_front_size), (38, 10, 64));
    assert_eq!((d.vram_type, d.device_id), (AMDGPU_VRAM_TYPE_HBM, 0x74a1));
    // 38 CUs over 4 arrays: 9 each in the bitmap (the count the kernel cannot split).
    assert_eq!(d.cu_bitmap[0][0].count_ones(), 9);
    let dma = drm_amdgpu_info_hw_ip::read_from_bytes(
        &info(&m, fd, AMDGPU_INFO_HW_IP_INFO, [AMDGPU_HW_IP_DMA, 0, 0, 0], 32).unwrap(),
    )
    .unwrap();
    assert_eq!((dma.hw_ip_version_major, dma.hw_ip_version_minor), (4, 4));
    let read = |p: &str| String::from_utf8(m.read_file(Path::new(p)).unwrap()).unwrap();
    let gc = "/sys/class/drm/renderD128/device/ip_discovery/die/0/11/0";
    assert_eq!(
        [
            read(&format!("{gc}/major")),
            read(&format!("{gc}/minor")),
            read(&format!("{gc}/revision"))
        ]
        .map(|s| s.trim().to_string()),
        ["9", "4", "3"]
    );
    // The GPU's node (after the CPU's, where the configuration has one).
    let props = ["0", "1"]
        .iter()
        .filter_map(|n| {
            m.read_file(Path::new(&format!(
                "/sys/devices/virtual/kfd/kfd/topology/nodes/{n}/properties"
            )))
            .ok()
        })
        .map(|b| String::from_utf8(b).unwrap())
        .find(|t| t.contains("gfx_target_version 9"))
        .unwrap();
    for line in [
        "gfx_target_version 90402",
        "wave_front_size 64",
        "simd_count 152",
        "num_xcc 1",
        "device_id 29857",
    ] {
        assert!(props.lines().any(|l| l == line), "{line} in {props}");
    }

    let (m, fd) = setup(GpuProfile::gfx1201());
    let d = drm_amdgpu_info_device::read_from_bytes(&info(&m, fd, AMDGPU_INFO_DEV_INFO, [0; 4], 440).unwrap()).unwrap();
    assert_eq!(d.family, AMDGPU_FAMILY_GC_12_0_0);
}
