//! The DRM ioctl ABI the mock's render nodes answer: `include/uapi/drm/drm.h` and
//! `include/uapi/drm/amdgpu_drm.h` of Linux 6.12, structs named as there. Sizes are
//! pinned here, and `tests/drm_layout.rs` compiles the headers (copied in
//! `vendor/drm/`) and compares every size and field offset.

#![allow(non_camel_case_types, missing_docs)]

use amd_regs::layout::StructLayout;

/// `DRM_IOCTL_BASE`
pub const DRM_IOCTL_BASE: u8 = b'd';
/// `DRM_COMMAND_BASE`: the first driver ioctl.
pub const DRM_COMMAND_BASE: u8 = 0x40;

/// `DRM_IOCTL_VERSION`, nr 0x00: `_IOWR('d', 0x00, struct drm_version)`.
pub const DRM_IOCTL_VERSION_NR: u8 = 0x00;
/// `DRM_IOCTL_GET_UNIQUE`
pub const DRM_IOCTL_GET_UNIQUE_NR: u8 = 0x01;
/// `DRM_IOCTL_GET_MAGIC`
pub const DRM_IOCTL_GET_MAGIC_NR: u8 = 0x02;
/// `DRM_IOCTL_GET_CLIENT`
pub const DRM_IOCTL_GET_CLIENT_NR: u8 = 0x05;
/// `DRM_IOCTL_GET_CAP`
pub const DRM_IOCTL_GET_CAP_NR: u8 = 0x0c;
/// `DRM_IOCTL_SET_CLIENT_CAP`
pub const DRM_IOCTL_SET_CLIENT_CAP_NR: u8 = 0x0d;
/// `DRM_AMDGPU_INFO` (0x05 past `DRM_COMMAND_BASE`): `_IOW`.
pub const DRM_AMDGPU_INFO_NR: u8 = DRM_COMMAND_BASE + 0x05;

amd_regs::abi_struct! {
    pub struct drm_version {
        pub version_major: i32,
        pub version_minor: i32,
        pub version_patchlevel: i32,
        pub _pad: u32,
        pub name_len: u64,
        pub name: u64,
        pub date_len: u64,
        pub date: u64,
        pub desc_len: u64,
        pub desc: u64,
    }
    size = 64;
}

amd_regs::abi_struct! {
    pub struct drm_get_cap {
        pub capability: u64,
        pub value: u64,
    }
    size = 16;
}

/// `DRM_CAP_PRIME`
pub const DRM_CAP_PRIME: u64 = 0x5;
/// `DRM_CAP_TIMESTAMP_MONOTONIC`
pub const DRM_CAP_TIMESTAMP_MONOTONIC: u64 = 0x6;
/// `DRM_CAP_SYNCOBJ`
pub const DRM_CAP_SYNCOBJ: u64 = 0x13;
/// `DRM_CAP_SYNCOBJ_TIMELINE`
pub const DRM_CAP_SYNCOBJ_TIMELINE: u64 = 0x14;
/// `DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT`
pub const DRM_PRIME_CAP_IMPORT_EXPORT: u64 = 0x3;

amd_regs::abi_struct! {
    /// `struct drm_amdgpu_info`: the query and where its answer goes (the union's four
    /// words as `args`).
    pub struct drm_amdgpu_info {
        pub return_pointer: u64,
        pub return_size: u32,
        pub query: u32,
        pub args: [u32; 4],
    }
    size = 32;
}

pub const AMDGPU_INFO_ACCEL_WORKING: u32 = 0x00;
pub const AMDGPU_INFO_HW_IP_INFO: u32 = 0x02;
pub const AMDGPU_INFO_HW_IP_COUNT: u32 = 0x03;
pub const AMDGPU_INFO_TIMESTAMP: u32 = 0x05;
pub const AMDGPU_INFO_FW_VERSION: u32 = 0x0e;
pub const AMDGPU_INFO_NUM_BYTES_MOVED: u32 = 0x0f;
pub const AMDGPU_INFO_VRAM_USAGE: u32 = 0x10;
pub const AMDGPU_INFO_GTT_USAGE: u32 = 0x11;
pub const AMDGPU_INFO_GDS_CONFIG: u32 = 0x13;
pub const AMDGPU_INFO_VRAM_GTT: u32 = 0x14;
pub const AMDGPU_INFO_READ_MMR_REG: u32 = 0x15;
pub const AMDGPU_INFO_DEV_INFO: u32 = 0x16;
pub const AMDGPU_INFO_VIS_VRAM_USAGE: u32 = 0x17;
pub const AMDGPU_INFO_NUM_EVICTIONS: u32 = 0x18;
pub const AMDGPU_INFO_MEMORY: u32 = 0x19;
pub const AMDGPU_INFO_NUM_VRAM_CPU_PAGE_FAULTS: u32 = 0x1e;
pub const AMDGPU_INFO_VRAM_LOST_COUNTER: u32 = 0x1f;

pub const AMDGPU_HW_IP_GFX: u32 = 0;
pub const AMDGPU_HW_IP_COMPUTE: u32 = 1;
pub const AMDGPU_HW_IP_DMA: u32 = 2;
/// `AMDGPU_HW_IP_NUM`
pub const AMDGPU_HW_IP_NUM: u32 = 10;

pub const AMDGPU_INFO_FW_GFX_ME: u32 = 0x04;
pub const AMDGPU_INFO_FW_GFX_PFP: u32 = 0x05;
pub const AMDGPU_INFO_FW_GFX_CE: u32 = 0x06;
pub const AMDGPU_INFO_FW_GFX_RLC: u32 = 0x07;
pub const AMDGPU_INFO_FW_GFX_MEC: u32 = 0x08;
pub const AMDGPU_INFO_FW_SMC: u32 = 0x0a;
pub const AMDGPU_INFO_FW_SDMA: u32 = 0x0b;
pub const AMDGPU_INFO_FW_SOS: u32 = 0x0c;
pub const AMDGPU_INFO_FW_MES: u32 = 0x1a;

/// `AMDGPU_FAMILY_NV` (gfx10.x)
pub const AMDGPU_FAMILY_NV: u32 = 143;
/// `AMDGPU_FAMILY_GC_11_0_0`
pub const AMDGPU_FAMILY_GC_11_0_0: u32 = 145;
/// `AMDGPU_FAMILY_GC_12_0_0`
pub const AMDGPU_FAMILY_GC_12_0_0: u32 = 152;
/// `AMDGPU_FAMILY_AI` (Vega and the gfx9 Instinct parts, GC 9.4.3 included)
pub const AMDGPU_FAMILY_AI: u32 = 141;
/// `AMDGPU_VRAM_TYPE_HBM`
pub const AMDGPU_VRAM_TYPE_HBM: u32 = 6;
/// `AMDGPU_VRAM_TYPE_GDDR6`
pub const AMDGPU_VRAM_TYPE_GDDR6: u32 = 9;

amd_regs::abi_struct! {
    pub struct drm_amdgpu_info_hw_ip {
        pub hw_ip_version_major: u32,
        pub hw_ip_version_minor: u32,
        pub capabilities_flags: u64,
        pub ib_start_alignment: u32,
        pub ib_size_alignment: u32,
        pub available_rings: u32,
        pub ip_discovery_version: u32,
    }
    size = 32;
}

amd_regs::abi_struct! {
    pub struct drm_amdgpu_info_firmware {
        pub ver: u32,
        pub feature: u32,
    }
    size = 8;
}

amd_regs::abi_struct! {
    pub struct drm_amdgpu_info_vram_gtt {
        pub vram_size: u64,
        pub vram_cpu_accessible_size: u64,
        pub gtt_size: u64,
    }
    size = 24;
}

amd_regs::abi_struct! {
    pub struct drm_amdgpu_heap_info {
        pub total_heap_size: u64,
        pub usable_heap_size: u64,
        pub heap_usage: u64,
        pub max_allocation: u64,
    }
    size = 32;
}

amd_regs::abi_struct! {
    pub struct drm_amdgpu_memory_info {
        pub vram: drm_amdgpu_heap_info,
        pub cpu_accessible_vram: drm_amdgpu_heap_info,
        pub gtt: drm_amdgpu_heap_info,
    }
    size = 96;
}

amd_regs::abi_struct! {
    pub struct drm_amdgpu_info_gds {
        pub gds_gfx_partition_size: u32,
        pub compute_partition_size: u32,
        pub gds_total_size: u32,
        pub gws_per_gfx_partition: u32,
        pub gws_per_compute_partition: u32,
        pub oa_per_gfx_partition: u32,
        pub oa_per_compute_partition: u32,
        pub _pad: u32,
    }
    size = 32;
}

amd_regs::abi_struct! {
    /// `struct drm_amdgpu_info_device` of Linux 6.12 (440 bytes; newer headers append
    /// `userq_ip_mask`, which the kernel leaves to the caller's zeroes).
    pub struct drm_amdgpu_info_device {
        pub device_id: u32,
        pub chip_rev: u32,
        pub external_rev: u32,
        pub pci_rev: u32,
        pub family: u32,
        pub num_shader_engines: u32,
        pub num_shader_arrays_per_engine: u32,
        pub gpu_counter_freq: u32,
        pub max_engine_clock: u64,
        pub max_memory_clock: u64,
        pub cu_active_number: u32,
        pub cu_ao_mask: u32,
        pub cu_bitmap: [[u32; 4]; 4],
        pub enabled_rb_pipes_mask: u32,
        pub num_rb_pipes: u32,
        pub num_hw_gfx_contexts: u32,
        pub pcie_gen: u32,
        pub ids_flags: u64,
        pub virtual_address_offset: u64,
        pub virtual_address_max: u64,
        pub virtual_address_alignment: u32,
        pub pte_fragment_size: u32,
        pub gart_page_size: u32,
        pub ce_ram_size: u32,
        pub vram_type: u32,
        pub vram_bit_width: u32,
        pub vce_harvest_config: u32,
        pub gc_double_offchip_lds_buf: u32,
        pub prim_buf_gpu_addr: u64,
        pub pos_buf_gpu_addr: u64,
        pub cntl_sb_buf_gpu_addr: u64,
        pub param_buf_gpu_addr: u64,
        pub prim_buf_size: u32,
        pub pos_buf_size: u32,
        pub cntl_sb_buf_size: u32,
        pub param_buf_size: u32,
        pub wave_front_size: u32,
        pub num_shader_visible_vgprs: u32,
        pub num_cu_per_sh: u32,
        pub num_tcc_blocks: u32,
        pub gs_vgt_table_depth: u32,
        pub gs_prim_buffer_depth: u32,
        pub max_gs_waves_per_vgt: u32,
        pub pcie_num_lanes: u32,
        pub cu_ao_bitmap: [[u32; 4]; 4],
        pub high_va_offset: u64,
        pub high_va_max: u64,
        pub pa_sc_tile_steering_override: u32,
        pub _pad0: u32,
        pub tcc_disabled_mask: u64,
        pub min_engine_clock: u64,
        pub min_memory_clock: u64,
        pub tcp_cache_size: u32,
        pub num_sqc_per_wgp: u32,
        pub sqc_data_cache_size: u32,
        pub sqc_inst_cache_size: u32,
        pub gl1c_cache_size: u32,
        pub gl2c_cache_size: u32,
        pub mall_size: u64,
        pub enabled_rb_pipes_mask_hi: u32,
        pub shadow_size: u32,
        pub shadow_alignment: u32,
        pub csa_size: u32,
        pub csa_alignment: u32,
        pub _pad1: u32,
    }
    size = 440;
}
const _: () = assert!(std::mem::offset_of!(drm_amdgpu_info_device, cu_bitmap) == 56);
const _: () = assert!(std::mem::offset_of!(drm_amdgpu_info_device, high_va_offset) == 336);
const _: () = assert!(std::mem::offset_of!(drm_amdgpu_info_device, mall_size) == 408);

/// Every struct above: C name, size and field offsets, for the test that compares them
/// with the headers.
pub const STRUCTS: &[StructLayout] = &[
    drm_version::LAYOUT,
    drm_get_cap::LAYOUT,
    drm_amdgpu_info::LAYOUT,
    drm_amdgpu_info_hw_ip::LAYOUT,
    drm_amdgpu_info_firmware::LAYOUT,
    drm_amdgpu_info_vram_gtt::LAYOUT,
    drm_amdgpu_heap_info::LAYOUT,
    drm_amdgpu_memory_info::LAYOUT,
    drm_amdgpu_info_gds::LAYOUT,
    drm_amdgpu_info_device::LAYOUT,
];
