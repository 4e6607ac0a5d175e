//! The render node's ioctls, as `drm_ioctl()` (`drivers/gpu/drm/drm_ioctl.c`) and
//! amdgpu's `amdgpu_info_ioctl()` (`amdgpu_kms.c`) answer them: the driver version,
//! capabilities, and the `DRM_IOCTL_AMDGPU_INFO` queries libdrm's
//! `amdgpu_device_initialize` and tinygrad make.

#![allow(unsafe_code)]

use nix::errno::Errno;
use zerocopy::{FromBytes, IntoBytes};

use parking_lot::Mutex;

use super::abi::*;
use crate::driver::{Driver, uaccess};

/// `KMS_DRIVER_MAJOR.MINOR.PATCHLEVEL` of Linux 6.12's amdgpu.
pub const AMDGPU_KMS_VERSION: (i32, i32, i32) = (3, 61, 0);
/// `AMDGPU_VM_RESERVED_VRAM`: what the kernel keeps of VRAM for itself.
const VM_RESERVED_VRAM: u64 = 8 << 20;
/// The dword offset of `GB_ADDR_CONFIG` (GC segment 0 at 0x1260 plus 0x13de), the
/// one register libdrm reads at initialisation on gfx9 and later.
pub const GB_ADDR_CONFIG: u32 = 0x263e;
/// Most registers one READ_MMR_REG may read.
const MAX_MMR_READ: u32 = 128;

use amd_kfd::abi::ioc::{self, READ as IOC_READ, WRITE as IOC_WRITE};

/// A command of the render node: its kernel size and direction.
struct DrmCommand {
    size: usize,
    dir: u64,
}

fn command(nr: u8) -> Option<DrmCommand> {
    let (size, dir) = match nr {
        DRM_IOCTL_VERSION_NR => (size_of::<drm_version>(), IOC_READ | IOC_WRITE),
        DRM_IOCTL_GET_CAP_NR => (size_of::<drm_get_cap>(), IOC_READ | IOC_WRITE),
        DRM_AMDGPU_INFO_NR => (size_of::<drm_amdgpu_info>(), IOC_WRITE),
        _ => return None,
    };
    Some(DrmCommand { size, dir })
}

/// An ioctl on GPU `gpu`'s render node. As `drm_ioctl()`: another type than
/// `'d'` is ENOTTY; the core ioctls a render client may not use (GET_UNIQUE,
/// GET_MAGIC, GET_CLIENT, SET_CLIENT_CAP) are EACCES; the argument is copied by
/// the larger of the caller's and the kernel's size, in and out only where both
/// directions say so. Commands the mock does not answer are ENOTTY.
pub(crate) fn drm_ioctl(driver: &Mutex<Driver>, gpu: usize, request: u64, user: &mut [u8]) -> Result<i32, Errno> {
    if ioc::ty(request) != DRM_IOCTL_BASE {
        return Err(Errno::ENOTTY);
    }
    let nr = ioc::nr(request);
    if matches!(
        nr,
        DRM_IOCTL_GET_UNIQUE_NR | DRM_IOCTL_GET_MAGIC_NR | DRM_IOCTL_GET_CLIENT_NR | DRM_IOCTL_SET_CLIENT_CAP_NR
    ) {
        return Err(Errno::EACCES);
    }
    let cmd = command(nr).ok_or(Errno::ENOTTY)?;
    // Copied in (out) only where both the caller's and the kernel's direction say so.
    let both = ioc::dir(request) & cmd.dir;
    let (copy_in, copy_out) = (both & IOC_WRITE != 0, both & IOC_READ != 0);
    uaccess::staged(
        user,
        uaccess::ioc_size(request),
        cmd.size,
        copy_in,
        copy_out,
        |arg| match nr {
            DRM_IOCTL_VERSION_NR => uaccess::with_arg(arg, version),
            DRM_IOCTL_GET_CAP_NR => uaccess::with_arg(arg, get_cap),
            _ => {
                let a = drm_amdgpu_info::read_from_bytes(arg).map_err(|_| Errno::EINVAL)?;
                driver.lock().amdgpu_info(gpu, &a)
            }
        },
    )?
    .map(|()| 0)
}

/// `drm_copy_field`: up to the caller's length of `value` (no NUL), and the whole
/// length back.
fn copy_field(len: &mut u64, ptr: u64, value: &str) -> Result<(), Errno> {
    let n = (*len).min(value.len() as u64) as usize;
    *len = value.len() as u64;
    if n > 0 && ptr != 0 {
        // SAFETY: the caller gave `ptr` with room for its `len` bytes (the ioctl's
        // contract), and `n` is no more.
        unsafe { uaccess::write_array(ptr, &value.as_bytes()[..n]) }?;
    }
    Ok(())
}

/// `drm_version()`: amdgpu 3.61.0, "amdgpu", date "0" (Linux 6.12 no longer
/// returns the driver's date), "AMD GPU".
fn version(v: &mut drm_version) -> Result<(), Errno> {
    (v.version_major, v.version_minor, v.version_patchlevel) = AMDGPU_KMS_VERSION;
    copy_field(&mut v.name_len, v.name, "amdgpu")?;
    copy_field(&mut v.date_len, v.date, "0")?;
    copy_field(&mut v.desc_len, v.desc, "AMD GPU")
}

/// `drm_getcap()` for a render node of a driver without display: PRIME import and
/// export, monotonic timestamps, sync objects; other capabilities EINVAL.
fn get_cap(c: &mut drm_get_cap) -> Result<(), Errno> {
    c.value = match c.capability {
        DRM_CAP_PRIME => DRM_PRIME_CAP_IMPORT_EXPORT,
        DRM_CAP_TIMESTAMP_MONOTONIC | DRM_CAP_SYNCOBJ | DRM_CAP_SYNCOBJ_TIMELINE => 1,
        _ => return Err(Errno::EINVAL),
    };
    Ok(())
}

impl Driver {
    /// `amdgpu_info_ioctl()`: the answer to `a.query`, `min(return_size, its size)`
    /// bytes of it written to `return_pointer`.
    fn amdgpu_info(&self, gpu: usize, a: &drm_amdgpu_info) -> Result<(), Errno> {
        if a.return_size == 0 || a.return_pointer == 0 {
            return Err(Errno::EINVAL);
        }
        let g = self.gpus.get(gpu).ok_or(Errno::ENODEV)?;
        let p = &g.profile;
        let vis = if p.large_bar { p.vram_size } else { 256 << 20 };
        let gtt_used: u64 = self
            .handles
            .values()
            .filter(|o| o.gpu == gpu && o.flags & amd_kfd::abi::KFD_IOC_ALLOC_MEM_FLAGS_GTT != 0)
            .map(|o| o.size)
            .sum();
        let u64_bytes = |v: u64| v.to_ne_bytes().to_vec();
        let out: Vec<u8> = match a.query {
            AMDGPU_INFO_ACCEL_WORKING => 1u32.to_ne_bytes().to_vec(),
            AMDGPU_INFO_TIMESTAMP => u64_bytes(self.gpu_clock()),
            AMDGPU_INFO_NUM_BYTES_MOVED | AMDGPU_INFO_NUM_EVICTIONS | AMDGPU_INFO_NUM_VRAM_CPU_PAGE_FAULTS => {
                u64_bytes(0)
            }
            AMDGPU_INFO_VRAM_LOST_COUNTER => 0u32.to_ne_bytes().to_vec(),
            AMDGPU_INFO_VRAM_USAGE => u64_bytes(g.vram_used),
            AMDGPU_INFO_VIS_VRAM_USAGE => u64_bytes(g.vram_used.min(vis)),
            AMDGPU_INFO_GTT_USAGE => u64_bytes(gtt_used),
            AMDGPU_INFO_VRAM_GTT => {
                let vram = p.vram_size.saturating_sub(VM_RESERVED_VRAM);
                drm_amdgpu_info_vram_gtt {
                    vram_size: vram,
                    vram_cpu_accessible_size: vis.min(vram),
                    gtt_size: p.gtt_size,
                }
                .as_bytes()
                .to_vec()
            }
            AMDGPU_INFO_MEMORY => {
                let heap = |total: u64, usable: u64, usage: u64| drm_amdgpu_heap_info {
                    total_heap_size: total,
                    usable_heap_size: usable,
                    heap_usage: usage,
                    max_allocation: usable / 4 * 3,
                };
                let vram_usable = p.vram_size.saturating_sub(VM_RESERVED_VRAM);
                drm_amdgpu_memory_info {
                    vram: heap(p.vram_size, vram_usable, g.vram_used),
                    cpu_accessible_vram: heap(vis, vis.min(vram_usable), g.vram_used.min(vis)),
                    gtt: heap(p.gtt_size, p.gtt_size, gtt_used),
                }
                .as_bytes()
                .to_vec()
            }
            AMDGPU_INFO_HW_IP_INFO => self.hw_ip_info(gpu, a.args[0], a.args[1])?.as_bytes().to_vec(),
            AMDGPU_INFO_HW_IP_COUNT => self.hw_ip_count(gpu, a.args[0])?.to_ne_bytes().to_vec(),
            AMDGPU_INFO_FW_VERSION => self.firmware(gpu, a.args[0], a.args[1], a.args[2])?.as_bytes().to_vec(),
            AMDGPU_INFO_READ_MMR_REG => self.read_mmr(gpu, a.args)?.as_bytes().to_vec(),
            AMDGPU_INFO_DEV_INFO => self.dev_info(gpu).as_bytes().to_vec(),
            _ => return Err(Errno::EINVAL),
        };
        let n = out.len().min(a.return_size as usize);
        // SAFETY: the caller gave `return_pointer` with room for `return_size` bytes
        // (the ioctl's contract), and `n` is no more.
        unsafe { uaccess::write_array(a.return_pointer, &out[..n]) }
    }

    /// The GC version (major, minor, revision) of GPU `gpu`.
    fn gc_version(&self, gpu: usize) -> (u8, u8, u8) {
        self.ip_version(gpu, amd_regs::discovery::hw_id::GC)
            .unwrap_or((0, 0, 0))
    }

    fn ip_version(&self, gpu: usize, hw_id: u16) -> Option<(u8, u8, u8)> {
        let d = &self.gpus[gpu].profile.discovery;
        d.ips
            .iter()
            .find(|b| b.hw_id == hw_id && b.instance == 0)
            .map(|b| b.version)
    }

    /// SDMA engines: the discovery table's SDMA0..SDMA3 blocks.
    fn sdma_instances(&self, gpu: usize) -> u32 {
        use amd_regs::discovery::hw_id::{SDMA0, SDMA1, SDMA2, SDMA3};
        let d = &self.gpus[gpu].profile.discovery;
        d.ips
            .iter()
            .filter(|b| [SDMA0, SDMA1, SDMA2, SDMA3].contains(&b.hw_id))
            .count() as u32
    }

    /// `amdgpu_hw_ip_info()`: GFX and COMPUTE are the GC block (version major.0,
    /// one GFX ring, four compute rings as the kernel caps them), DMA the SDMA
    /// block (two rings as capped); the video and VPE types, which the mock's GPUs
    /// do not run, read as absent (an all-zero answer, as for a missing block).
    fn hw_ip_info(&self, gpu: usize, ty: u32, instance: u32) -> Result<drm_amdgpu_info_hw_ip, Errno> {
        if instance >= 1 || ty >= AMDGPU_HW_IP_NUM {
            return Err(Errno::EINVAL);
        }
        let packed = |(a, b, c): (u8, u8, u8)| (u32::from(a) << 16) | (u32::from(b) << 8) | u32::from(c);
        let gc = self.gc_version(gpu);
        let sdma = self
            .ip_version(gpu, amd_regs::discovery::hw_id::SDMA0)
            .unwrap_or((0, 0, 0));
        Ok(match ty {
            AMDGPU_HW_IP_GFX | AMDGPU_HW_IP_COMPUTE => drm_amdgpu_info_hw_ip {
                hw_ip_version_major: gc.0.into(),
                hw_ip_version_minor: 0,
                capabilities_flags: 0,
                ib_start_alignment: 32,
                ib_size_alignment: 32,
                available_rings: if ty == AMDGPU_HW_IP_GFX { 0x1 } else { 0xf },
                ip_discovery_version: packed(gc),
            },
            AMDGPU_HW_IP_DMA => drm_amdgpu_info_hw_ip {
                hw_ip_version_major: sdma.0.into(),
                hw_ip_version_minor: sdma.1.into(),
                capabilities_flags: 0,
                ib_start_alignment: 256,
                ib_size_alignment: 4,
                available_rings: (1u32 << self.sdma_instances(gpu).min(2)) - 1,
                ip_discovery_version: packed(sdma),
            },
            _ => drm_amdgpu_info_hw_ip::default(),
        })
    }

    /// HW_IP_COUNT: one GFX and one COMPUTE block, the SDMA instances; other types
    /// have no block (EINVAL).
    fn hw_ip_count(&self, gpu: usize, ty: u32) -> Result<u32, Errno> {
        match ty {
            AMDGPU_HW_IP_GFX | AMDGPU_HW_IP_COMPUTE => Ok(1),
            AMDGPU_HW_IP_DMA => Ok(self.sdma_instances(gpu)),
            _ => Err(Errno::EINVAL),
        }
    }

    /// `amdgpu_firmware_info()` for the firmware the mock's topology names: MEC
    /// (`fw_version`) and each SDMA engine (`sdma_fw_version`); the other types the
    /// kernel knows read as version 0; unknown types, a non-zero instance, a MEC
    /// index past 1 or an SDMA index past the engines are EINVAL.
    fn firmware(&self, gpu: usize, ty: u32, instance: u32, index: u32) -> Result<drm_amdgpu_info_firmware, Errno> {
        if instance != 0 {
            return Err(Errno::EINVAL);
        }
        let p = &self.gpus[gpu].profile;
        let prop = |k: &str| p.prop(k).and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
        let ver = match ty {
            AMDGPU_INFO_FW_GFX_MEC if index == 0 => prop("fw_version"),
            // gfx10.3 and gfx11 have no second MEC firmware.
            AMDGPU_INFO_FW_GFX_MEC if index == 1 => 0,
            AMDGPU_INFO_FW_SDMA if index < self.sdma_instances(gpu) => prop("sdma_fw_version"),
            AMDGPU_INFO_FW_GFX_ME
            | AMDGPU_INFO_FW_GFX_PFP
            | AMDGPU_INFO_FW_GFX_CE
            | AMDGPU_INFO_FW_GFX_RLC
            | AMDGPU_INFO_FW_SMC
            | AMDGPU_INFO_FW_SOS
            | AMDGPU_INFO_FW_MES => 0,
            _ => return Err(Errno::EINVAL),
        };
        Ok(drm_amdgpu_info_firmware { ver, feature: 0 })
    }

    /// READ_MMR_REG: `count` dwords from `dword_offset` on an SE/SH (`instance`:
    /// bits 0–7 SE, 8–15 SH, 0xff broadcast). Only registers on the kernel's
    /// allow list read; the mock has the one libdrm reads, GB_ADDR_CONFIG, and a
    /// register off the list is EFAULT, as the kernel answers.
    fn read_mmr(&self, gpu: usize, args: [u32; 4]) -> Result<Vec<u32>, Errno> {
        let [offset, count, instance, _flags] = args;
        let (se, sh) = (instance & 0xff, (instance >> 8) & 0xff);
        if (se != 0xff && se >= 4) || (sh != 0xff && sh >= 2) || count > MAX_MMR_READ {
            return Err(Errno::EINVAL);
        }
        let gb_addr_config = self.gb_addr_config(gpu);
        (0..count)
            .map(|i| match offset.checked_add(i) {
                Some(GB_ADDR_CONFIG) => Ok(gb_addr_config),
                _ => Err(Errno::EFAULT),
            })
            .collect()
    }

    /// GB_ADDR_CONFIG as the hardware reads (pipes, banks, shader engines; used by
    /// Mesa's address library, stored by libdrm). Values of the two boards the
    /// profiles model; not read from a GPU here.
    pub(crate) fn gb_addr_config(&self, gpu: usize) -> u32 {
        match self.gc_version(gpu).0 {
            11 => 0x0000_0545,
            _ => 0x0000_0444,
        }
    }

    /// `struct drm_amdgpu_info_device` from the GPU's topology and IP discovery
    /// table (`amdgpu_kms.c`); fields the kernel derives from fuses or clocks the
    /// mock does not model are those of the board the profile names.
    fn dev_info(&self, gpu: usize) -> drm_amdgpu_info_device {
        let p = &self.gpus[gpu].profile;
        let prop = |k: &str| p.prop(k).and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
        let gc = self.gc_version(gpu);
        let shape = p.discovery.gc.shape();
        let se = shape.se.max(1);
        let sa = shape.sa_per_se.max(1);
        let cus = prop("simd_count") / prop("simd_per_cu").max(1);
        let per_sa = (cus / (se * sa)).min(32);
        let sa_mask = if per_sa == 32 { u32::MAX } else { (1 << per_sa) - 1 };
        let mut cu_bitmap = [[0u32; 4]; 4];
        for i in 0..se.min(8) as usize {
            for j in 0..sa.min(2) as usize {
                // gfx11 folds SEs 4–7 into columns 2–3 (gfx_v11_0_get_cu_info);
                // gfx9 and gfx10 have at most four SEs here, one row each.
                let (row, col) = if gc.0 >= 11 { (i % 4, j + (i / 4) * 2) } else { (i, j) };
                if row < 4 && col < 4 {
                    cu_bitmap[row][col] = sa_mask;
                }
            }
        }
        let rbs = shape.rb_per_se * se;
        // amdgpu_discovery_set_ip_blocks's families; gfx9 parts report their
        // external revision as the chip's (0 here).
        let (family, external_rev) = match gc.0 {
            12.. => (AMDGPU_FAMILY_GC_12_0_0, 1),
            11 => (AMDGPU_FAMILY_GC_11_0_0, 1),
            10 => (AMDGPU_FAMILY_NV, 0x28),
            _ => (AMDGPU_FAMILY_AI, 0),
        };
        let gfx9 = gc.0 == 9;
        let wide = gc.0 >= 11;
        drm_amdgpu_info_device {
            device_id: prop("device_id"),
            chip_rev: 0,
            external_rev,
            pci_rev: p.pci.revision.into(),
            family,
            num_shader_engines: se,
            num_shader_arrays_per_engine: sa,
            // The 100 MHz clock the mock's timestamps count, in kHz.
            gpu_counter_freq: (crate::GPU_CLOCK_HZ / 1000) as u32,
            max_engine_clock: u64::from(prop("max_engine_clk_fcompute")) * 1000,
            max_memory_clock: match (gfx9, wide) {
                (true, _) => 1_300_000,
                (_, true) => 1_249_000,
                _ => 1_000_000,
            },
            cu_active_number: cus,
            cu_ao_mask: 0,
            cu_bitmap,
            enabled_rb_pipes_mask: if rbs >= 32 { u32::MAX } else { (1 << rbs) - 1 },
            num_rb_pipes: rbs,
            num_hw_gfx_contexts: 8,
            pcie_gen: 4,
            ids_flags: 0,
            virtual_address_offset: 1 << 16,
            virtual_address_max: 0x8000_0000_0000,
            virtual_address_alignment: 4096,
            pte_fragment_size: 0x20_0000,
            gart_page_size: 4096,
            vram_type: if gfx9 {
                AMDGPU_VRAM_TYPE_HBM
            } else {
                AMDGPU_VRAM_TYPE_GDDR6
            },
            vram_bit_width: match (gfx9, wide) {
                (true, _) => 8192,
                (_, true) => 384,
                _ => 256,
            },
            gc_double_offchip_lds_buf: shape.double_offchip_lds_buffer,
            wave_front_size: shape.wave_size,
            num_shader_visible_vgprs: 256,
            num_cu_per_sh: shape.cu_per_sa,
            num_tcc_blocks: shape.l2_channels,
            gs_vgt_table_depth: shape.gs_table_depth,
            gs_prim_buffer_depth: shape.gsprim_buff_depth,
            max_gs_waves_per_vgt: shape.max_gs_thds,
            pcie_num_lanes: 16,
            high_va_offset: 0xffff_8000_0000_0000,
            high_va_max: 0xffff_ffff_ffbf_0000,
            min_engine_clock: 500_000,
            min_memory_clock: 96_000,
            gl2c_cache_size: if wide { 6144 } else { 4096 },
            mall_size: match (gfx9, wide) {
                (true, _) => 256 << 20,
                (_, true) => 96 << 20,
                _ => 128 << 20,
            },
            ..Default::default()
        }
    }
}
