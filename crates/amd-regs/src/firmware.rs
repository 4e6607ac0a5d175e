//! amdgpu's firmware file headers (`amdgpu_ucode.h`, Linux 6.12) and the files a
//! 7900 XTX needs: the layouts both the driverless transport (which parses them, in
//! `amd-am`) and the mock PCI GPU (which checks what it is given) read.
//!
//! The header structs keep the C names and are `repr(C)` with every field naturally
//! aligned, so their layout is the header's; sizes are pinned by assertions.

#![allow(non_camel_case_types)]

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Where tinygrad 0.10.1 looks for firmware, in order.
pub const FIRMWARE_DIRS: [&str; 2] = ["/lib/firmware/updates/amdgpu", "/lib/firmware/amdgpu"];

/// The files a 7900 XTX needs (tinygrad 0.10.1's `AMFirmware`; as
/// [`FirmwareFiles::navi31`]).
pub mod files {
    /// PSP secure OS and its bootloader components.
    pub const PSP_SOS: &str = "psp_13_0_0_sos.bin";
    /// PSP trusted applications (not loaded by tinygrad 0.10.1; parsed for checks).
    pub const PSP_TA: &str = "psp_13_0_0_ta.bin";
    /// SMU.
    pub const SMU: &str = "smu_13_0_0.bin";
    /// SDMA.
    pub const SDMA: &str = "sdma_6_0_0.bin";
    /// GFX prefetch parser.
    pub const PFP: &str = "gc_11_0_0_pfp.bin";
    /// GFX micro engine.
    pub const ME: &str = "gc_11_0_0_me.bin";
    /// Compute micro engine.
    pub const MEC: &str = "gc_11_0_0_mec.bin";
    /// IMU.
    pub const IMU: &str = "gc_11_0_0_imu.bin";
    /// RLC.
    pub const RLC: &str = "gc_11_0_0_rlc.bin";
    /// Every file `amd_am::firmware::AmFirmware::load` reads.
    pub const ALL: [&str; 8] = [PSP_SOS, SMU, SDMA, PFP, ME, MEC, IMU, RLC];
}

/// The firmware files of one GPU, named from its IP versions as amdgpu's
/// `MODULE_FIRMWARE` lines and tinygrad's `AMFirmware` name them: `psp_{MP0}_sos.bin`,
/// `smu_{MP1}.bin`, `sdma_{SDMA0}.bin` and `gc_{GC}_{pfp,me,mec,imu,rlc}.bin`, each
/// version written `major_minor_revision`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirmwareFiles {
    /// PSP secure OS and its bootloader components.
    pub psp_sos: String,
    /// SMU.
    pub smu: String,
    /// SDMA.
    pub sdma: String,
    /// GFX prefetch parser.
    pub pfp: String,
    /// GFX micro engine.
    pub me: String,
    /// Compute micro engine.
    pub mec: String,
    /// IMU.
    pub imu: String,
    /// RLC.
    pub rlc: String,
}

impl FirmwareFiles {
    /// The files of a GPU with these MP0, MP1, SDMA 0 and GC versions.
    pub fn for_versions(mp0: [u8; 3], mp1: [u8; 3], sdma: [u8; 3], gc: [u8; 3]) -> Self {
        let v = |[a, b, c]: [u8; 3]| format!("{a}_{b}_{c}");
        let gc = v(gc);
        FirmwareFiles {
            psp_sos: format!("psp_{}_sos.bin", v(mp0)),
            smu: format!("smu_{}.bin", v(mp1)),
            sdma: format!("sdma_{}.bin", v(sdma)),
            pfp: format!("gc_{gc}_pfp.bin"),
            me: format!("gc_{gc}_me.bin"),
            mec: format!("gc_{gc}_mec.bin"),
            imu: format!("gc_{gc}_imu.bin"),
            rlc: format!("gc_{gc}_rlc.bin"),
        }
    }

    /// A Radeon RX 7900 XTX's (gfx1100: MP 13.0.0, SDMA 6.0.0, GC 11.0.0): [`files`].
    pub fn navi31() -> Self {
        Self::for_versions([13, 0, 0], [13, 0, 0], [6, 0, 0], [11, 0, 0])
    }

    /// A Radeon RX 9070 XT's (gfx1201: MP 14.0.3, SDMA 7.0.1, GC 12.0.1).
    pub fn navi48() -> Self {
        Self::for_versions([14, 0, 3], [14, 0, 3], [7, 0, 1], [12, 0, 1])
    }

    /// Every name, in the order the boot reads them.
    pub fn all(&self) -> [&str; 8] {
        [
            &self.psp_sos,
            &self.smu,
            &self.sdma,
            &self.pfp,
            &self.me,
            &self.mec,
            &self.imu,
            &self.rlc,
        ]
    }
}

/// `struct common_firmware_header`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct common_firmware_header {
    /// Size of the whole file (header and images).
    pub size_bytes: u32,
    /// Size of the header.
    pub header_size_bytes: u32,
    /// Header version.
    pub header_version_major: u16,
    /// Header version.
    pub header_version_minor: u16,
    /// IP version.
    pub ip_version_major: u16,
    /// IP version.
    pub ip_version_minor: u16,
    /// Firmware version.
    pub ucode_version: u32,
    /// Size of the (main) image.
    pub ucode_size_bytes: u32,
    /// Offset of the (main) image from the start of the file.
    pub ucode_array_offset_bytes: u32,
    /// CRC32 of the image.
    pub crc32: u32,
}

/// `struct psp_fw_bin_desc`: one component of a PSP or TA file.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct psp_fw_bin_desc {
    /// `PSP_FW_TYPE_*` (or `TA_FW_TYPE_*`).
    pub fw_type: u32,
    /// Component version.
    pub fw_version: u32,
    /// Offset from the header's `ucode_array_offset_bytes`.
    pub offset_bytes: u32,
    /// Size.
    pub size_bytes: u32,
}

/// `struct psp_firmware_header_v2_0` without its flexible array of
/// [`psp_fw_bin_desc`] (which follows at byte 36; at byte 40 in v2.1, after
/// `psp_aux_fw_bin_index`). `struct ta_firmware_header_v2_0` has the same layout.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct psp_firmware_header_v2_0 {
    /// Common header (version 2.0 or 2.1).
    pub header: common_firmware_header,
    /// Number of components.
    pub psp_fw_bin_count: u32,
}

/// `struct smc_firmware_header_v1_0` (the start of every SMC header version).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct smc_firmware_header_v1_0 {
    /// Common header.
    pub header: common_firmware_header,
    /// Start address.
    pub ucode_start_addr: u32,
}

/// `struct sdma_firmware_header_v2_0`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct sdma_firmware_header_v2_0 {
    /// Common header (the context thread's image at `ucode_array_offset_bytes`).
    pub header: common_firmware_header,
    /// Feature version.
    pub ucode_feature_version: u32,
    /// Context thread image size.
    pub ctx_ucode_size_bytes: u32,
    /// Context thread jump table.
    pub ctx_jt_offset: u32,
    /// Context thread jump table size.
    pub ctx_jt_size: u32,
    /// Control thread image offset (from the start of the file).
    pub ctl_ucode_offset: u32,
    /// Control thread image size.
    pub ctl_ucode_size_bytes: u32,
    /// Control thread jump table.
    pub ctl_jt_offset: u32,
    /// Control thread jump table size.
    pub ctl_jt_size: u32,
}

/// `struct sdma_firmware_header_v3_0` (SDMA 7: one image, `SDMA_UCODE_TH0`, at the
/// common header's `ucode_array_offset_bytes`, as `amdgpu_ucode_init_single_fw`
/// cuts it).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct sdma_firmware_header_v3_0 {
    /// Common header.
    pub header: common_firmware_header,
    /// Feature version.
    pub ucode_feature_version: u32,
    /// Image offset (amdgpu cuts at the common header's instead).
    pub ucode_offset_bytes: u32,
    /// Image size.
    pub ucode_size_bytes: u32,
}

/// `struct gfx_firmware_header_v2_0` (RS64 PFP, ME, MEC).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct gfx_firmware_header_v2_0 {
    /// Common header (the code at `ucode_array_offset_bytes`).
    pub header: common_firmware_header,
    /// Feature version.
    pub ucode_feature_version: u32,
    /// Code size.
    pub ucode_size_bytes: u32,
    /// Code offset.
    pub ucode_offset_bytes: u32,
    /// Data (stack) size.
    pub data_size_bytes: u32,
    /// Data (stack) offset from the start of the file.
    pub data_offset_bytes: u32,
    /// Start address, low half.
    pub ucode_start_addr_lo: u32,
    /// Start address, high half.
    pub ucode_start_addr_hi: u32,
}

/// `struct imu_firmware_header_v1_0`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct imu_firmware_header_v1_0 {
    /// Common header (the IRAM image at `ucode_array_offset_bytes`, DRAM right after).
    pub header: common_firmware_header,
    /// IRAM image size.
    pub imu_iram_ucode_size_bytes: u32,
    /// IRAM image offset.
    pub imu_iram_ucode_offset_bytes: u32,
    /// DRAM image size.
    pub imu_dram_ucode_size_bytes: u32,
    /// DRAM image offset.
    pub imu_dram_ucode_offset_bytes: u32,
}

/// `struct rlc_firmware_header_v2_0`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct rlc_firmware_header_v2_0 {
    /// Common header (RLC_G at `ucode_array_offset_bytes`).
    pub header: common_firmware_header,
    /// Feature version.
    pub ucode_feature_version: u32,
    /// Jump table.
    pub jt_offset: u32,
    /// Jump table size.
    pub jt_size: u32,
    /// Save and restore.
    pub save_and_restore_offset: u32,
    /// Clear state descriptor.
    pub clear_state_descriptor_offset: u32,
    /// Scratch RAM locations.
    pub avail_scratch_ram_locations: u32,
    /// Register restore list size.
    pub reg_restore_list_size: u32,
    /// Register list format start.
    pub reg_list_format_start: u32,
    /// Separate register list format start.
    pub reg_list_format_separate_start: u32,
    /// Starting offsets.
    pub starting_offsets_start: u32,
    /// Register list format size.
    pub reg_list_format_size_bytes: u32,
    /// Register list format offset.
    pub reg_list_format_array_offset_bytes: u32,
    /// Register list size.
    pub reg_list_size_bytes: u32,
    /// Register list offset.
    pub reg_list_array_offset_bytes: u32,
    /// Separate register list format size.
    pub reg_list_format_separate_size_bytes: u32,
    /// Separate register list format offset.
    pub reg_list_format_separate_array_offset_bytes: u32,
    /// Separate register list size.
    pub reg_list_separate_size_bytes: u32,
    /// Separate register list offset.
    pub reg_list_separate_array_offset_bytes: u32,
}

/// `struct rlc_firmware_header_v2_1`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct rlc_firmware_header_v2_1 {
    /// v2.0.
    pub v2_0: rlc_firmware_header_v2_0,
    /// Direct register list length.
    pub reg_list_format_direct_reg_list_length: u32,
    /// Save/restore list CNTL version.
    pub save_restore_list_cntl_ucode_ver: u32,
    /// Save/restore list CNTL feature version.
    pub save_restore_list_cntl_feature_ver: u32,
    /// Save/restore list CNTL size.
    pub save_restore_list_cntl_size_bytes: u32,
    /// Save/restore list CNTL offset.
    pub save_restore_list_cntl_offset_bytes: u32,
    /// Save/restore list GPM version.
    pub save_restore_list_gpm_ucode_ver: u32,
    /// Save/restore list GPM feature version.
    pub save_restore_list_gpm_feature_ver: u32,
    /// Save/restore list GPM size.
    pub save_restore_list_gpm_size_bytes: u32,
    /// Save/restore list GPM offset.
    pub save_restore_list_gpm_offset_bytes: u32,
    /// Save/restore list SRM version.
    pub save_restore_list_srm_ucode_ver: u32,
    /// Save/restore list SRM feature version.
    pub save_restore_list_srm_feature_ver: u32,
    /// Save/restore list SRM size.
    pub save_restore_list_srm_size_bytes: u32,
    /// Save/restore list SRM offset.
    pub save_restore_list_srm_offset_bytes: u32,
}

/// `struct rlc_firmware_header_v2_2`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct rlc_firmware_header_v2_2 {
    /// v2.1.
    pub v2_1: rlc_firmware_header_v2_1,
    /// IRAM image size.
    pub rlc_iram_ucode_size_bytes: u32,
    /// IRAM image offset.
    pub rlc_iram_ucode_offset_bytes: u32,
    /// DRAM image size.
    pub rlc_dram_ucode_size_bytes: u32,
    /// DRAM image offset.
    pub rlc_dram_ucode_offset_bytes: u32,
}

/// `struct rlc_firmware_header_v2_3`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct rlc_firmware_header_v2_3 {
    /// v2.2.
    pub v2_2: rlc_firmware_header_v2_2,
    /// RLCP version.
    pub rlcp_ucode_version: u32,
    /// RLCP feature version.
    pub rlcp_ucode_feature_version: u32,
    /// RLCP image size.
    pub rlcp_ucode_size_bytes: u32,
    /// RLCP image offset.
    pub rlcp_ucode_offset_bytes: u32,
    /// RLCV version.
    pub rlcv_ucode_version: u32,
    /// RLCV feature version.
    pub rlcv_ucode_feature_version: u32,
    /// RLCV image size.
    pub rlcv_ucode_size_bytes: u32,
    /// RLCV image offset.
    pub rlcv_ucode_offset_bytes: u32,
}

// Each header's C name, size and field offsets, for the test that compares them with
// `vendor/amdgpu_ucode.h` (Linux 6.12, copied unchanged) as a C compiler lays it out.
crate::layout::layouts! {
    common_firmware_header {
        size_bytes, header_size_bytes, header_version_major, header_version_minor, ip_version_major,
        ip_version_minor, ucode_version, ucode_size_bytes, ucode_array_offset_bytes, crc32,
    }
    psp_fw_bin_desc { fw_type, fw_version, offset_bytes, size_bytes }
    psp_firmware_header_v2_0 { header, psp_fw_bin_count }
    smc_firmware_header_v1_0 { header, ucode_start_addr }
    sdma_firmware_header_v2_0 {
        header, ucode_feature_version, ctx_ucode_size_bytes, ctx_jt_offset, ctx_jt_size, ctl_ucode_offset,
        ctl_ucode_size_bytes, ctl_jt_offset, ctl_jt_size,
    }
    sdma_firmware_header_v3_0 { header, ucode_feature_version, ucode_offset_bytes, ucode_size_bytes }
    gfx_firmware_header_v2_0 {
        header, ucode_feature_version, ucode_size_bytes, ucode_offset_bytes, data_size_bytes, data_offset_bytes,
        ucode_start_addr_lo, ucode_start_addr_hi,
    }
    imu_firmware_header_v1_0 {
        header, imu_iram_ucode_size_bytes, imu_iram_ucode_offset_bytes, imu_dram_ucode_size_bytes,
        imu_dram_ucode_offset_bytes,
    }
    rlc_firmware_header_v2_0 {
        header, ucode_feature_version, jt_offset, jt_size, save_and_restore_offset, clear_state_descriptor_offset,
        avail_scratch_ram_locations, reg_restore_list_size, reg_list_format_start, reg_list_format_separate_start,
        starting_offsets_start, reg_list_format_size_bytes, reg_list_format_array_offset_bytes, reg_list_size_bytes,
        reg_list_array_offset_bytes, reg_list_format_separate_size_bytes,
        reg_list_format_separate_array_offset_bytes, reg_list_separate_size_bytes,
        reg_list_separate_array_offset_bytes,
    }
    rlc_firmware_header_v2_1 {
        v2_0, reg_list_format_direct_reg_list_length, save_restore_list_cntl_ucode_ver,
        save_restore_list_cntl_feature_ver, save_restore_list_cntl_size_bytes, save_restore_list_cntl_offset_bytes,
        save_restore_list_gpm_ucode_ver, save_restore_list_gpm_feature_ver, save_restore_list_gpm_size_bytes,
        save_restore_list_gpm_offset_bytes, save_restore_list_srm_ucode_ver, save_restore_list_srm_feature_ver,
        save_restore_list_srm_size_bytes, save_restore_list_srm_offset_bytes,
    }
    rlc_firmware_header_v2_2 {
        v2_1, rlc_iram_ucode_size_bytes, rlc_iram_ucode_offset_bytes, rlc_dram_ucode_size_bytes,
        rlc_dram_ucode_offset_bytes,
    }
    rlc_firmware_header_v2_3 {
        v2_2, rlcp_ucode_version, rlcp_ucode_feature_version, rlcp_ucode_size_bytes, rlcp_ucode_offset_bytes,
        rlcv_ucode_version, rlcv_ucode_feature_version, rlcv_ucode_size_bytes, rlcv_ucode_offset_bytes,
    }
}

const _: () = assert!(size_of::<common_firmware_header>() == 32);
const _: () = assert!(size_of::<psp_fw_bin_desc>() == 16);
const _: () = assert!(size_of::<psp_firmware_header_v2_0>() == 36);
const _: () = assert!(size_of::<smc_firmware_header_v1_0>() == 36);
const _: () = assert!(size_of::<sdma_firmware_header_v2_0>() == 64);
const _: () = assert!(size_of::<sdma_firmware_header_v3_0>() == 44);
const _: () = assert!(size_of::<gfx_firmware_header_v2_0>() == 60);
const _: () = assert!(size_of::<imu_firmware_header_v1_0>() == 48);
const _: () = assert!(size_of::<rlc_firmware_header_v2_0>() == 104);
const _: () = assert!(size_of::<rlc_firmware_header_v2_1>() == 156);
const _: () = assert!(size_of::<rlc_firmware_header_v2_2>() == 172);
const _: () = assert!(size_of::<rlc_firmware_header_v2_3>() == 204);
