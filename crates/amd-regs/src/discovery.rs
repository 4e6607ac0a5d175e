//! The IP discovery binary of AMD GPUs, as amdgpu's `drivers/gpu/drm/amd/include/
//! discovery.h` (Linux 6.12) lays it out: a binary header with a table list and a
//! checksum, the IP discovery table (dies, and per die the IP blocks with hardware
//! id, instance, version and register base addresses), the GC info table and the
//! harvest table.
//!
//! The firmware leaves this binary at [`DISCOVERY_TMR_OFFSET`] below the top of VRAM
//! (amdgpu's `amdgpu_discovery.h`; tinygrad's `AMDev._run_discovery` reads it there
//! through BAR 0, after reading the VRAM size in MiB from `RCC_CONFIG_MEMSIZE`).
//!
//! All structs are `#pragma pack(1)` in the header; every field here is naturally
//! aligned, so `repr(C)` gives the same layout, pinned by size assertions. Read them
//! from a byte buffer with zerocopy (`read_from_prefix`), never by casting.

#![allow(non_camel_case_types)]

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `BINARY_SIGNATURE`: bytes 0x07 0x14 0x21 0x28.
pub const BINARY_SIGNATURE: u32 = 0x2821_1407;
/// `DISCOVERY_TABLE_SIGNATURE`: "IPDS".
pub const DISCOVERY_TABLE_SIGNATURE: u32 = 0x5344_5049;
/// `GC_TABLE_ID`: "GC".
pub const GC_TABLE_ID: u32 = 0x4347;
/// `HARVEST_TABLE_SIGNATURE`: "HARV".
pub const HARVEST_TABLE_SIGNATURE: u32 = 0x5652_4148;

/// `DISCOVERY_TMR_OFFSET`: the binary starts this many bytes below the top of VRAM.
pub const DISCOVERY_TMR_OFFSET: u64 = 64 << 10;
/// `DISCOVERY_TMR_SIZE`: the most the driver reads.
pub const DISCOVERY_TMR_SIZE: usize = 10 << 10;

/// `table` index `IP_DISCOVERY` in [`binary_header::table_list`].
pub const IP_DISCOVERY: usize = 0;
/// `table` index `GC`.
pub const GC: usize = 1;
/// `table` index `HARVEST_INFO`.
pub const HARVEST_INFO: usize = 2;
/// `TOTAL_TABLES`
pub const TOTAL_TABLES: usize = 6;

/// Hardware ids of IP blocks (`soc15_hw_ip.h`), the `hw_id` of an [`ip`] entry.
pub mod hw_id {
    /// `MP1_HWID`: the SMU's microprocessor.
    pub const MP1: u16 = 1;
    /// `THM_HWID`
    pub const THM: u16 = 3;
    /// `SMUIO_HWID`
    pub const SMUIO: u16 = 4;
    /// `CLKA_HWID`
    pub const CLKA: u16 = 6;
    /// `GC_HWID`: graphics and compute.
    pub const GC: u16 = 11;
    /// `UVD_HWID` (also `VCN_HWID`)
    pub const VCN: u16 = 12;
    /// `MMHUB_HWID`
    pub const MMHUB: u16 = 34;
    /// `ATHUB_HWID`
    pub const ATHUB: u16 = 35;
    /// `OSSSYS_HWID`: the interrupt handler.
    pub const OSSSYS: u16 = 40;
    /// `HDP_HWID`
    pub const HDP: u16 = 41;
    /// `SDMA0_HWID`
    pub const SDMA0: u16 = 42;
    /// `SDMA1_HWID`
    pub const SDMA1: u16 = 43;
    /// `DF_HWID`
    pub const DF: u16 = 46;
    /// `SDMA2_HWID`
    pub const SDMA2: u16 = 68;
    /// `SDMA3_HWID`
    pub const SDMA3: u16 = 69;
    /// `NBIF_HWID` (the NBIO block)
    pub const NBIF: u16 = 108;
    /// `UMC_HWID`
    pub const UMC: u16 = 150;
    /// `MP0_HWID`: the PSP's microprocessor.
    pub const MP0: u16 = 255;
    /// `DMU_HWID`: display.
    pub const DMU: u16 = 271;
}

/// `table_info`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct table_info {
    /// Byte offset from the start of the binary.
    pub offset: u16,
    /// Byte sum of the table ([`checksum`]).
    pub checksum: u16,
    /// Table size.
    pub size: u16,
    /// Padding.
    pub padding: u16,
}

/// `binary_header`: the start of the binary.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct binary_header {
    /// [`BINARY_SIGNATURE`]
    pub binary_signature: u32,
    /// Version.
    pub version_major: u16,
    /// Version.
    pub version_minor: u16,
    /// Byte sum of the binary after this field, up to `binary_size`.
    pub binary_checksum: u16,
    /// Size of the whole binary.
    pub binary_size: u16,
    /// Where each table is, by `table` index.
    pub table_list: [table_info; TOTAL_TABLES],
}

/// `die_info`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct die_info {
    /// Die id.
    pub die_id: u16,
    /// Byte offset of the die's [`die_header`] from the start of the binary.
    pub die_offset: u16,
}

/// `ip_discovery_header`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct ip_discovery_header {
    /// [`DISCOVERY_TABLE_SIGNATURE`]
    pub signature: u32,
    /// Table version (the [`ip`] entry layout: `ip` ≤ 2, `ip_v3`, `ip_v4`).
    pub version: u16,
    /// Table size, from this header to the end of the last die's entries.
    pub size: u16,
    /// Table id.
    pub id: u32,
    /// Number of dies.
    pub num_dies: u16,
    /// Up to 16 dies.
    pub die_info: [die_info; 16],
    /// Version 4: bit 0 `base_addr_64_bit` (base addresses are 64-bit); earlier
    /// versions: padding.
    pub flags: u16,
}

/// `die_header`: followed by `num_ips` [`ip`] entries.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct die_header {
    /// Die id.
    pub die_id: u16,
    /// Number of IP entries that follow.
    pub num_ips: u16,
}

/// `ip` / `ip_v3` / `ip_v4` (same first 8 bytes): one IP block instance, followed by
/// `num_base_address` base addresses (`u32`, or `u64` where the discovery header says
/// `base_addr_64_bit`), in dwords of the register BAR, one per register segment.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct ip {
    /// Hardware id ([`hw_id`]).
    pub hw_id: u16,
    /// Instance of the IP (`number_instance` in `ip`, `instance_number` in v3/v4).
    pub instance_number: u8,
    /// Number of base addresses that follow.
    pub num_base_address: u8,
    /// Version: major.
    pub major: u8,
    /// Version: minor.
    pub minor: u8,
    /// Version: revision.
    pub revision: u8,
    /// `ip`: harvest (low 4 bits); v3/v4: sub-revision (low 4 bits), variant (high 4).
    pub variant_sub_revision: u8,
}

/// `gpu_info_header`: the start of the GC table.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct gpu_info_header {
    /// [`GC_TABLE_ID`]
    pub table_id: u32,
    /// Table version: which `gc_info_v*` follows.
    pub version_major: u16,
    /// Table version.
    pub version_minor: u16,
    /// Size of the header and data in bytes.
    pub size: u32,
}

/// `gc_info_v1_0`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct gc_info_v1_0 {
    /// Version 1.0.
    pub header: gpu_info_header,
    /// Shader engines.
    pub gc_num_se: u32,
    /// WGPs of kind 0 per shader array.
    pub gc_num_wgp0_per_sa: u32,
    /// WGPs of kind 1 per shader array.
    pub gc_num_wgp1_per_sa: u32,
    /// Render backends per SE.
    pub gc_num_rb_per_se: u32,
    /// GL2 cache channels.
    pub gc_num_gl2c: u32,
    /// GPRs.
    pub gc_num_gprs: u32,
    /// Max GS threads.
    pub gc_num_max_gs_thds: u32,
    /// GS table depth.
    pub gc_gs_table_depth: u32,
    /// GS primitive buffer depth.
    pub gc_gsprim_buff_depth: u32,
    /// Parameter cache depth.
    pub gc_parameter_cache_depth: u32,
    /// Double off-chip LDS buffer.
    pub gc_double_offchip_lds_buffer: u32,
    /// Wave size.
    pub gc_wave_size: u32,
    /// Max waves per SIMD.
    pub gc_max_waves_per_simd: u32,
    /// Max scratch slots per CU.
    pub gc_max_scratch_slots_per_cu: u32,
    /// LDS size in KiB.
    pub gc_lds_size: u32,
    /// Scan converters per SE.
    pub gc_num_sc_per_se: u32,
    /// Shader arrays per SE.
    pub gc_num_sa_per_se: u32,
    /// Packers per SC.
    pub gc_num_packer_per_sc: u32,
    /// GL2 arbiters.
    pub gc_num_gl2a: u32,
}

/// `gc_info_v1_2`: [`gc_info_v1_0`], then v1.1's and v1.2's cache fields.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct gc_info_v1_2 {
    /// Version 1.2 header and the v1.0 fields.
    pub v1_0: gc_info_v1_0,
    /// v1.1: TCPs per SA.
    pub gc_num_tcp_per_sa: u32,
    /// v1.1: SDP interfaces.
    pub gc_num_sdp_interface: u32,
    /// v1.1: TCPs.
    pub gc_num_tcps: u32,
    /// TCPs per WGP.
    pub gc_num_tcp_per_wpg: u32,
    /// TCP L1 size (KiB).
    pub gc_tcp_l1_size: u32,
    /// SQCs per WGP.
    pub gc_num_sqc_per_wgp: u32,
    /// L1 instruction cache size per SQC (KiB).
    pub gc_l1_instruction_cache_size_per_sqc: u32,
    /// L1 data cache size per SQC (KiB).
    pub gc_l1_data_cache_size_per_sqc: u32,
    /// GL1 caches per SA.
    pub gc_gl1c_per_sa: u32,
    /// GL1 cache size per instance (KiB).
    pub gc_gl1c_size_per_instance: u32,
    /// GL2 caches per GPU.
    pub gc_gl2c_per_gpu: u32,
}

/// `gc_info_v1_3`: [`gc_info_v1_2`], then the cache sizes and line sizes v1.3 adds.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct gc_info_v1_3 {
    /// Version 1.3 header and the v1.0 to v1.2 fields.
    pub v1_2: gc_info_v1_2,
    /// TCP (vector L1) size per CU (KiB).
    pub gc_tcp_size_per_cu: u32,
    /// TCP cache line (bytes).
    pub gc_tcp_cache_line_size: u32,
    /// Instruction cache size per SQC (KiB).
    pub gc_instruction_cache_size_per_sqc: u32,
    /// Instruction cache line (bytes).
    pub gc_instruction_cache_line_size: u32,
    /// Scalar data cache size per SQC (KiB).
    pub gc_scalar_data_cache_size_per_sqc: u32,
    /// Scalar data cache line (bytes).
    pub gc_scalar_data_cache_line_size: u32,
    /// TCC (L2) size (KiB).
    pub gc_tcc_size: u32,
    /// TCC cache line (bytes).
    pub gc_tcc_cache_line_size: u32,
}

/// `gc_info_v2_1`: the GC table of gfx9 parts (GC 9.4.3 carries version 2.1): counts
/// per shader array ("SH") where gfx10 and later count WGPs, and v2.1's cache sizes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct gc_info_v2_1 {
    /// Version 2.1.
    pub header: gpu_info_header,
    /// Shader engines.
    pub gc_num_se: u32,
    /// CUs per shader array.
    pub gc_num_cu_per_sh: u32,
    /// Shader arrays per SE.
    pub gc_num_sh_per_se: u32,
    /// Render backends per SE.
    pub gc_num_rb_per_se: u32,
    /// L2 (TCC) channels.
    pub gc_num_tccs: u32,
    /// GPRs.
    pub gc_num_gprs: u32,
    /// Max GS threads.
    pub gc_num_max_gs_thds: u32,
    /// GS table depth.
    pub gc_gs_table_depth: u32,
    /// GS primitive buffer depth.
    pub gc_gsprim_buff_depth: u32,
    /// Parameter cache depth.
    pub gc_parameter_cache_depth: u32,
    /// Double off-chip LDS buffer.
    pub gc_double_offchip_lds_buffer: u32,
    /// Wave size.
    pub gc_wave_size: u32,
    /// Max waves per SIMD.
    pub gc_max_waves_per_simd: u32,
    /// Max scratch slots per CU.
    pub gc_max_scratch_slots_per_cu: u32,
    /// LDS size in KiB.
    pub gc_lds_size: u32,
    /// Scan converters per SE.
    pub gc_num_sc_per_se: u32,
    /// Packers per SC.
    pub gc_num_packer_per_sc: u32,
    /// v2.1: TCPs per shader array.
    pub gc_num_tcp_per_sh: u32,
    /// v2.1: TCP (vector L1) size per CU (KiB).
    pub gc_tcp_size_per_cu: u32,
    /// v2.1: SDP interfaces.
    pub gc_num_sdp_interface: u32,
    /// v2.1: CUs per SQC.
    pub gc_num_cu_per_sqc: u32,
    /// v2.1: instruction cache size per SQC (KiB).
    pub gc_instruction_cache_size_per_sqc: u32,
    /// v2.1: scalar data cache size per SQC (KiB).
    pub gc_scalar_data_cache_size_per_sqc: u32,
    /// v2.1: TCC (L2) size (KiB).
    pub gc_tcc_size: u32,
}

/// `harvest_info_header`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct harvest_info_header {
    /// [`HARVEST_TABLE_SIGNATURE`]
    pub signature: u32,
    /// Table version.
    pub version: u32,
}

/// `harvest_info`: an IP instance fused off (`hw_id` 0 ends the list).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct harvest_info {
    /// Hardware id ([`hw_id`]).
    pub hw_id: u16,
    /// Instance of the IP.
    pub number_instance: u8,
    /// Reserved.
    pub reserved: u8,
}

/// `harvest_table`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct harvest_table {
    /// Header.
    pub header: harvest_info_header,
    /// Up to 32 harvested instances.
    pub list: [harvest_info; 32],
}

const _: () = assert!(size_of::<table_info>() == 8);
const _: () = assert!(size_of::<binary_header>() == 60);
const _: () = assert!(size_of::<die_info>() == 4);
const _: () = assert!(size_of::<ip_discovery_header>() == 80);
const _: () = assert!(size_of::<die_header>() == 4);
const _: () = assert!(size_of::<ip>() == 8);
const _: () = assert!(size_of::<gpu_info_header>() == 12);
const _: () = assert!(size_of::<gc_info_v1_0>() == 88);
const _: () = assert!(size_of::<gc_info_v1_2>() == 132);
const _: () = assert!(size_of::<gc_info_v1_3>() == 164);
const _: () = assert!(size_of::<gc_info_v2_1>() == 108);
const _: () = assert!(size_of::<harvest_table>() == 136);

/// The byte sum amdgpu checks (`amdgpu_discovery_calculate_checksum`): every byte
/// added into a `u16` that wraps.
pub fn checksum(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |s, &b| s.wrapping_add(b as u16))
}

/// Where the binary header's checksum starts: right after `binary_checksum`.
pub const BINARY_CHECKSUM_START: usize = std::mem::offset_of!(binary_header, binary_size);

// Each struct's C name, size and field offsets, for the test that compares them with
// `vendor/discovery.h` (Linux 6.12, copied unchanged) as a C compiler lays it out.
crate::layout::layouts! {
    table_info { offset, checksum, size, padding }
    binary_header { binary_signature, version_major, version_minor, binary_checksum, binary_size, table_list }
    die_info { die_id, die_offset }
    ip_discovery_header { signature, version, size, id, num_dies, die_info, flags }
    die_header { die_id, num_ips }
    ip { hw_id, instance_number, num_base_address, major, minor, revision, variant_sub_revision }
    gpu_info_header { table_id, version_major, version_minor, size }
    gc_info_v1_0 {
        header, gc_num_se, gc_num_wgp0_per_sa, gc_num_wgp1_per_sa, gc_num_rb_per_se, gc_num_gl2c,
        gc_num_gprs, gc_num_max_gs_thds, gc_gs_table_depth, gc_gsprim_buff_depth, gc_parameter_cache_depth,
        gc_double_offchip_lds_buffer, gc_wave_size, gc_max_waves_per_simd, gc_max_scratch_slots_per_cu,
        gc_lds_size, gc_num_sc_per_se, gc_num_sa_per_se, gc_num_packer_per_sc, gc_num_gl2a,
    }
    gc_info_v1_2 {
        v1_0, gc_num_tcp_per_sa, gc_num_sdp_interface, gc_num_tcps, gc_num_tcp_per_wpg, gc_tcp_l1_size,
        gc_num_sqc_per_wgp, gc_l1_instruction_cache_size_per_sqc, gc_l1_data_cache_size_per_sqc,
        gc_gl1c_per_sa, gc_gl1c_size_per_instance, gc_gl2c_per_gpu,
    }
    gc_info_v1_3 {
        v1_2, gc_tcp_size_per_cu, gc_tcp_cache_line_size, gc_instruction_cache_size_per_sqc,
        gc_instruction_cache_line_size, gc_scalar_data_cache_size_per_sqc, gc_scalar_data_cache_line_size,
        gc_tcc_size, gc_tcc_cache_line_size,
    }
    gc_info_v2_1 {
        header, gc_num_se, gc_num_cu_per_sh, gc_num_sh_per_se, gc_num_rb_per_se, gc_num_tccs, gc_num_gprs,
        gc_num_max_gs_thds, gc_gs_table_depth, gc_gsprim_buff_depth, gc_parameter_cache_depth,
        gc_double_offchip_lds_buffer, gc_wave_size, gc_max_waves_per_simd, gc_max_scratch_slots_per_cu,
        gc_lds_size, gc_num_sc_per_se, gc_num_packer_per_sc, gc_num_tcp_per_sh, gc_tcp_size_per_cu,
        gc_num_sdp_interface, gc_num_cu_per_sqc, gc_instruction_cache_size_per_sqc,
        gc_scalar_data_cache_size_per_sqc, gc_tcc_size,
    }
    harvest_info_header { signature, version }
    harvest_info { hw_id, number_instance, reserved }
    harvest_table { header, list }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_follow_the_header() {
        assert_eq!(BINARY_CHECKSUM_START, 10);
        assert_eq!(std::mem::offset_of!(binary_header, table_list), 12);
        assert_eq!(std::mem::offset_of!(ip_discovery_header, num_dies), 12);
        assert_eq!(std::mem::offset_of!(ip_discovery_header, die_info), 14);
        assert_eq!(std::mem::offset_of!(ip_discovery_header, flags), 78);
        assert_eq!(std::mem::offset_of!(gc_info_v1_0, gc_lds_size), 12 + 14 * 4);
        assert_eq!(std::mem::offset_of!(gc_info_v1_2, gc_gl2c_per_gpu), 128);
        assert_eq!(checksum(&[0xff; 258]), (0xffu32 * 258 % 65536) as u16);
    }
}
