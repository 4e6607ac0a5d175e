//! The IP discovery binary the firmware leaves at the top of VRAM, generated from a
//! profile in the layout of amdgpu's `discovery.h` ([`amd_regs::discovery`]).

use amd_regs::discovery::{
    self as dsc, BINARY_CHECKSUM_START, BINARY_SIGNATURE, DISCOVERY_TABLE_SIGNATURE, GC_TABLE_ID,
    HARVEST_TABLE_SIGNATURE, binary_header, die_header, gc_info_v1_0, gc_info_v1_2, gc_info_v1_3, gc_info_v2_1,
    gpu_info_header, harvest_table, hw_id, ip, ip_discovery_header,
};
use amd_regs::firmware::FirmwareFiles;
use amd_regs::regs::{AsicRegs, IpVersions};
use zerocopy::IntoBytes;

/// One IP block instance: hardware id, instance, version and register bases (dwords
/// of BAR 5, one per segment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpBlock {
    /// Hardware id ([`amd_regs::discovery::hw_id`]).
    pub hw_id: u16,
    /// Instance number.
    pub instance: u8,
    /// Major, minor, revision.
    pub version: (u8, u8, u8),
    /// Register segment bases.
    pub bases: Vec<u32>,
}

impl IpBlock {
    fn new(hw_id: u16, instance: u8, version: (u8, u8, u8), bases: &[u32]) -> Self {
        IpBlock {
            hw_id,
            instance,
            version,
            bases: bases.to_vec(),
        }
    }
}

/// The GC info table, in the version the GPU carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcInfo {
    /// `gc_info_v1_0`
    V1_0(gc_info_v1_0),
    /// `gc_info_v1_2`
    V1_2(gc_info_v1_2),
    /// `gc_info_v1_3`
    V1_3(gc_info_v1_3),
    /// `gc_info_v2_1` (gfx9)
    V2_1(gc_info_v2_1),
}

/// What every version of the GC table says of the shader layout, in one form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcShape {
    /// Shader engines.
    pub se: u32,
    /// Shader arrays per SE.
    pub sa_per_se: u32,
    /// CUs per shader array (2 per WGP on gfx10 and later).
    pub cu_per_sa: u32,
    /// Render backends per SE.
    pub rb_per_se: u32,
    /// L2 channels.
    pub l2_channels: u32,
    /// Wave size.
    pub wave_size: u32,
    /// Double off-chip LDS buffer.
    pub double_offchip_lds_buffer: u32,
    /// GS table depth.
    pub gs_table_depth: u32,
    /// GS primitive buffer depth.
    pub gsprim_buff_depth: u32,
    /// Max GS threads.
    pub max_gs_thds: u32,
}

impl GcInfo {
    /// The v1.0 fields, where the table is of version 1.
    pub fn v1_0(&self) -> Option<&gc_info_v1_0> {
        match self {
            GcInfo::V1_0(g) => Some(g),
            GcInfo::V1_2(g) => Some(&g.v1_0),
            GcInfo::V1_3(g) => Some(&g.v1_2.v1_0),
            GcInfo::V2_1(_) => None,
        }
    }

    /// The shader layout, from whichever version the table is.
    pub fn shape(&self) -> GcShape {
        let v1 = |g: &gc_info_v1_0| GcShape {
            se: g.gc_num_se,
            sa_per_se: g.gc_num_sa_per_se,
            cu_per_sa: 2 * (g.gc_num_wgp0_per_sa + g.gc_num_wgp1_per_sa),
            rb_per_se: g.gc_num_rb_per_se,
            l2_channels: g.gc_num_gl2c,
            wave_size: g.gc_wave_size,
            double_offchip_lds_buffer: g.gc_double_offchip_lds_buffer,
            gs_table_depth: g.gc_gs_table_depth,
            gsprim_buff_depth: g.gc_gsprim_buff_depth,
            max_gs_thds: g.gc_num_max_gs_thds,
        };
        match self {
            GcInfo::V1_0(g) => v1(g),
            GcInfo::V1_2(g) => v1(&g.v1_0),
            GcInfo::V1_3(g) => v1(&g.v1_2.v1_0),
            GcInfo::V2_1(g) => GcShape {
                se: g.gc_num_se,
                sa_per_se: g.gc_num_sh_per_se,
                cu_per_sa: g.gc_num_cu_per_sh,
                rb_per_se: g.gc_num_rb_per_se,
                l2_channels: g.gc_num_tccs,
                wave_size: g.gc_wave_size,
                double_offchip_lds_buffer: g.gc_double_offchip_lds_buffer,
                gs_table_depth: g.gc_gs_table_depth,
                gsprim_buff_depth: g.gc_gsprim_buff_depth,
                max_gs_thds: g.gc_num_max_gs_thds,
            },
        }
    }
}

/// What the discovery binary describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// Version of the IP discovery table (3 or 4; the entry layout is the same with
    /// 32-bit bases).
    pub table_version: u16,
    /// The IP blocks of die 0.
    pub ips: Vec<IpBlock>,
    /// The GC table.
    pub gc: GcInfo,
    /// Harvested (fused-off) instances: hardware id and instance.
    pub harvest: Vec<(u16, u8)>,
}

/// Register bases the profiled parts share (`sienna_cichlid_ip_offset.h` and
/// `aldebaran_ip_offset.h` agree on them, and tinygrad's mock AM GPU lists the same for
/// SOC21): NBIO's six segments (Navi 21's table carries five), MP0's and MP1's, MMHUB's,
/// HDP's and OSSSYS's.
const NBIO_BASES: [u32; 6] = [
    0x0000_0000,
    0x0000_0014,
    0x0000_0D20,
    0x0001_0400,
    0x0241_B000,
    0x0404_0000,
];
const MP_BASES: [u32; 5] = [0x0001_6000, 0x00DC_0000, 0x00E0_0000, 0x00E4_0000, 0x0243_FC00];
const MMHUB_BASES: [u32; 2] = [0x0001_A000, 0x0240_8800];
const HDP_BASES: [u32; 2] = [0x0000_0F20, 0x0240_A400];
const OSSSYS_BASES: [u32; 2] = [0x0000_10A0, 0x0240_A000];

#[allow(clippy::too_many_arguments)]
fn gc_v1_0(
    major: u16,
    minor: u16,
    size: usize,
    se: u32,
    wgp0: u32,
    wgp1: u32,
    rb_per_se: u32,
    gl2c: u32,
    sa_per_se: u32,
) -> gc_info_v1_0 {
    gc_info_v1_0 {
        header: gpu_info_header {
            table_id: GC_TABLE_ID,
            version_major: major,
            version_minor: minor,
            size: size as u32,
        },
        gc_num_se: se,
        gc_num_wgp0_per_sa: wgp0,
        gc_num_wgp1_per_sa: wgp1,
        gc_num_rb_per_se: rb_per_se,
        gc_num_gl2c: gl2c,
        gc_num_gprs: 1024,
        gc_num_max_gs_thds: 32,
        gc_gs_table_depth: 32,
        gc_gsprim_buff_depth: 1792,
        gc_parameter_cache_depth: 1024,
        gc_double_offchip_lds_buffer: 1,
        gc_wave_size: 32,
        gc_max_waves_per_simd: 16,
        gc_max_scratch_slots_per_cu: 32,
        gc_lds_size: 64,
        gc_num_sc_per_se: 2,
        gc_num_sa_per_se: sa_per_se,
        gc_num_packer_per_sc: 4,
        gc_num_gl2a: 4,
    }
}

impl Discovery {
    /// The version of instance 0 of the block `hw_id`.
    pub fn version(&self, hw_id: u16) -> Option<[u8; 3]> {
        self.ips
            .iter()
            .find(|ip| ip.hw_id == hw_id && ip.instance == 0)
            .map(|ip| [ip.version.0, ip.version.1, ip.version.2])
    }

    /// The firmware files a GPU with this table's MP0, MP1, SDMA 0 and GC versions
    /// boots from, or `None` if a block is missing.
    pub fn firmware_files(&self) -> Option<FirmwareFiles> {
        Some(FirmwareFiles::for_versions(
            self.version(hw_id::MP0)?,
            self.version(hw_id::MP1)?,
            self.version(hw_id::SDMA0)?,
            self.version(hw_id::GC)?,
        ))
    }

    /// The register tables of this table's IP versions (GC, MMHUB, OSSSYS, NBIF,
    /// MP0, MP1), or `None` if a block is missing or no table covers its version.
    pub fn asic_regs(&self) -> Option<AsicRegs> {
        let v = |hw: u16| self.version(hw);
        AsicRegs::for_versions(&IpVersions {
            gc: v(hw_id::GC)?,
            mmhub: v(hw_id::MMHUB)?,
            osssys: v(hw_id::OSSSYS)?,
            nbio: v(hw_id::NBIF)?,
            mp0: v(hw_id::MP0)?,
            mp1: v(hw_id::MP1)?,
        })
        .ok()
    }

    /// A Radeon RX 7900 XTX (Navi 31): GC 11.0.0, PSP (MP0) 13.0.0, SMU (MP1) 13.0.0,
    /// NBIO 4.3.0, MMHUB 3.0.0, OSSSYS 6.0.0, SDMA 6.0.0 ×2, HDP 6.0.0, SMUIO 13.0.0;
    /// table version 4 with 32-bit bases; GC info v1.2 (6 SEs × 2 SAs × 4 WGPs: 96
    /// CUs, as the KFD profile `gfx1100` says).
    ///
    /// Register bases are those of the SOC21 parts (tinygrad's mock AM GPU,
    /// `test/mockgpu/am/amgpu.py`, lists the same GC, SDMA, MMHUB, NBIO, MP0/MP1, HDP
    /// and OSSSYS bases); SMUIO, ATHUB and DF bases follow the Navi 2x layout
    /// (`sienna_cichlid_ip_offset.h`), which SOC21 keeps for those blocks.
    pub fn navi31() -> Self {
        let gc_bases = [0x0000_1260, 0x0000_A000, 0x0001_C000, 0x0240_2C00];
        let mut gc = gc_info_v1_2 {
            v1_0: gc_v1_0(1, 2, size_of::<gc_info_v1_2>(), 6, 4, 0, 4, 24, 2),
            ..Default::default()
        };
        gc.gc_num_tcp_per_sa = 8;
        gc.gc_num_sdp_interface = 24;
        gc.gc_num_tcps = 96;
        gc.gc_num_tcp_per_wpg = 2;
        gc.gc_tcp_l1_size = 16;
        gc.gc_num_sqc_per_wgp = 1;
        gc.gc_l1_instruction_cache_size_per_sqc = 32;
        gc.gc_l1_data_cache_size_per_sqc = 16;
        gc.gc_gl1c_per_sa = 1;
        gc.gc_gl1c_size_per_instance = 256;
        gc.gc_gl2c_per_gpu = 24;
        Discovery {
            table_version: 4,
            ips: vec![
                IpBlock::new(hw_id::GC, 0, (11, 0, 0), &gc_bases),
                IpBlock::new(hw_id::SDMA0, 0, (6, 0, 0), &gc_bases),
                IpBlock::new(hw_id::SDMA1, 0, (6, 0, 0), &gc_bases),
                IpBlock::new(hw_id::MMHUB, 0, (3, 0, 0), &MMHUB_BASES),
                IpBlock::new(hw_id::ATHUB, 0, (3, 0, 0), &[0x0000_0C00, 0x0240_8C00]),
                IpBlock::new(hw_id::NBIF, 0, (4, 3, 0), &NBIO_BASES),
                IpBlock::new(hw_id::MP0, 0, (13, 0, 0), &MP_BASES),
                IpBlock::new(hw_id::MP1, 0, (13, 0, 0), &MP_BASES),
                IpBlock::new(hw_id::HDP, 0, (6, 0, 0), &HDP_BASES),
                IpBlock::new(hw_id::OSSSYS, 0, (6, 0, 0), &OSSSYS_BASES),
                IpBlock::new(
                    hw_id::SMUIO,
                    0,
                    (13, 0, 0),
                    &[0x0001_6800, 0x0001_6A00, 0x0044_0000, 0x0240_1000],
                ),
                IpBlock::new(hw_id::DF, 0, (4, 3, 0), &[0x0000_7000, 0x0240_B800]),
            ],
            gc: GcInfo::V1_2(gc),
            harvest: Vec::new(),
        }
    }

    /// A Radeon RX 9070 XT (Navi 48, gfx1201, as the KFD profile `gfx1201`: 4 SEs × 2
    /// SAs × 4 WGPs, 64 CUs): GC 12.0.1, SDMA 7.0.1 ×2, PSP (MP0) and SMU (MP1) 14.0.3,
    /// NBIF 6.3.1, MMHUB and ATHUB 4.1.0, OSSSYS 7.0.0, HDP 7.0.0, SMUIO 14.0.2 (the
    /// versions `docs/reference/rdna4.md` establishes); GC info v1.3. No public source gives a
    /// gfx1201's register bases (Linux 6.12 has no IP offset header for it; the
    /// driver reads them from the card's table): these are Navi 31's. The KFD path,
    /// and tinygrad 0.14 on it, read the versions only.
    pub fn navi48() -> Self {
        let mut d = Discovery::navi31();
        let version = |id: u16| match id {
            hw_id::GC => (12, 0, 1),
            hw_id::SDMA0 | hw_id::SDMA1 => (7, 0, 1),
            hw_id::MP0 | hw_id::MP1 => (14, 0, 3),
            hw_id::NBIF => (6, 3, 1),
            hw_id::MMHUB | hw_id::ATHUB => (4, 1, 0),
            hw_id::OSSSYS | hw_id::HDP => (7, 0, 0),
            hw_id::SMUIO => (14, 0, 2),
            _ => (0, 0, 0),
        };
        for ip in &mut d.ips {
            let v = version(ip.hw_id);
            if v.0 != 0 {
                ip.version = v;
            }
        }
        if let GcInfo::V1_2(mut gc) = d.gc {
            gc.v1_0.gc_num_se = 4;
            gc.v1_0.gc_num_gl2c = 16;
            gc.gc_num_tcps = 64;
            gc.v1_0.header.version_minor = 3;
            gc.v1_0.header.size = size_of::<gc_info_v1_3>() as u32;
            // GC info 1.3 (the version Linux 6.12 adds for GC 12). No public source
            // gives a gfx1201's cache sizes and line sizes: 1.3's fields are 0 here.
            d.gc = GcInfo::V1_3(gc_info_v1_3 {
                v1_2: gc,
                ..Default::default()
            });
        }
        d
    }

    /// A Radeon RX 6900 XT-class Navi 21 (gfx1030, as the KFD profile `gfx1030`: 4 SEs
    /// × 2 SAs × 5 WGPs): GC 10.3.0, MP0/MP1 11.0.7, NBIO 2.3.0, MMHUB 2.1.0, OSSSYS
    /// 5.0.3, SDMA 5.2.0 ×4, HDP 5.0.3, SMUIO 11.0.7; table version 3; GC info v1.0;
    /// one VCN instance harvested. Register bases from Linux 6.12's
    /// `sienna_cichlid_ip_offset.h`.
    pub fn navi21() -> Self {
        let gc_bases = [0x0000_1260, 0x0000_A000, 0x0001_C000, 0x0240_2C00];
        Discovery {
            table_version: 3,
            ips: vec![
                IpBlock::new(hw_id::GC, 0, (10, 3, 0), &gc_bases),
                IpBlock::new(hw_id::SDMA0, 0, (5, 2, 0), &gc_bases),
                IpBlock::new(hw_id::SDMA1, 0, (5, 2, 0), &gc_bases),
                IpBlock::new(hw_id::SDMA2, 0, (5, 2, 0), &gc_bases),
                IpBlock::new(hw_id::SDMA3, 0, (5, 2, 0), &gc_bases),
                IpBlock::new(hw_id::MMHUB, 0, (2, 1, 0), &MMHUB_BASES),
                IpBlock::new(hw_id::ATHUB, 0, (2, 1, 0), &[0x0000_0C00, 0x0240_8C00]),
                IpBlock::new(hw_id::NBIF, 0, (2, 3, 0), &NBIO_BASES[..5]),
                IpBlock::new(hw_id::MP0, 0, (11, 0, 7), &MP_BASES),
                IpBlock::new(hw_id::MP1, 0, (11, 0, 7), &MP_BASES),
                IpBlock::new(hw_id::HDP, 0, (5, 0, 3), &HDP_BASES),
                IpBlock::new(hw_id::OSSSYS, 0, (5, 0, 3), &OSSSYS_BASES),
                IpBlock::new(
                    hw_id::SMUIO,
                    0,
                    (11, 0, 7),
                    &[0x0001_6800, 0x0001_6A00, 0x0044_0000, 0x0240_1000],
                ),
                IpBlock::new(hw_id::DF, 0, (3, 7, 0), &[0x0000_7000, 0x0240_B800]),
                IpBlock::new(hw_id::VCN, 0, (3, 0, 0), &[0x0000_7800, 0x0000_7E00, 0x0240_3000]),
                IpBlock::new(hw_id::VCN, 1, (3, 0, 0), &[0x0000_7B00, 0x0001_2000, 0x0244_5000]),
            ],
            gc: GcInfo::V1_0(gc_v1_0(1, 0, size_of::<gc_info_v1_0>(), 4, 5, 0, 4, 16, 2)),
            harvest: vec![(hw_id::VCN, 1)],
        }
    }

    /// One XCD partition of an AMD Instinct MI300X (gfx942, as the KFD profile
    /// `gfx942`): GC 9.4.3, SDMA 4.4.2 ×2, PSP (MP0) and SMU (MP1) 13.0.6, NBIO 7.9.0,
    /// MMHUB 1.8.0, OSSSYS and HDP 4.4.2, SMUIO 13.0.3, DF 4.3.0; table version 4; GC
    /// info v2.1 (4 SEs × 1 SA × 10 CUs, of which the KFD profile has 38 active;
    /// 16 L2 channels of a 4 MiB L2). Linux has no IP offset header for GC 9.4.3 (the
    /// driver reads them from the card's table): the register bases are MI200's
    /// (`aldebaran_ip_offset.h`), whose GC segment 0 (0x2000) and NBIO segment 2
    /// (0xd20) the PM4 streams of every client assume. The KFD path, and tinygrad 0.14
    /// on it, read the versions only.
    pub fn mi300x_xcd() -> Self {
        let gc_bases = [0x0000_2000, 0x0000_A000, 0x0240_2C00];
        let gc = gc_info_v2_1 {
            header: gpu_info_header {
                table_id: GC_TABLE_ID,
                version_major: 2,
                version_minor: 1,
                size: size_of::<gc_info_v2_1>() as u32,
            },
            gc_num_se: 4,
            gc_num_cu_per_sh: 10,
            gc_num_sh_per_se: 1,
            gc_num_rb_per_se: 0,
            gc_num_tccs: 16,
            gc_num_gprs: 1024,
            gc_num_max_gs_thds: 32,
            gc_gs_table_depth: 32,
            gc_gsprim_buff_depth: 1792,
            gc_parameter_cache_depth: 1024,
            gc_double_offchip_lds_buffer: 1,
            gc_wave_size: 64,
            gc_max_waves_per_simd: 8,
            gc_max_scratch_slots_per_cu: 32,
            gc_lds_size: 64,
            gc_num_sc_per_se: 1,
            gc_num_packer_per_sc: 1,
            gc_num_tcp_per_sh: 10,
            gc_tcp_size_per_cu: 32,
            gc_num_sdp_interface: 16,
            gc_num_cu_per_sqc: 2,
            gc_instruction_cache_size_per_sqc: 64,
            gc_scalar_data_cache_size_per_sqc: 16,
            gc_tcc_size: 4096,
        };
        Discovery {
            table_version: 4,
            ips: vec![
                IpBlock::new(hw_id::GC, 0, (9, 4, 3), &gc_bases),
                IpBlock::new(hw_id::SDMA0, 0, (4, 4, 2), &[0x0000_1260, 0x0001_2540, 0x0040_A800]),
                IpBlock::new(hw_id::SDMA1, 0, (4, 4, 2), &[0x0000_1860, 0x0001_2560, 0x0040_AC00]),
                IpBlock::new(hw_id::MMHUB, 0, (1, 8, 0), &MMHUB_BASES),
                IpBlock::new(hw_id::ATHUB, 0, (1, 8, 0), &[0x0000_0C20, 0x0240_8C00]),
                IpBlock::new(hw_id::NBIF, 0, (7, 9, 0), &NBIO_BASES),
                IpBlock::new(hw_id::MP0, 0, (13, 0, 6), &MP_BASES),
                IpBlock::new(hw_id::MP1, 0, (13, 0, 6), &MP_BASES),
                IpBlock::new(hw_id::HDP, 0, (4, 4, 2), &HDP_BASES),
                IpBlock::new(hw_id::OSSSYS, 0, (4, 4, 2), &OSSSYS_BASES),
                IpBlock::new(
                    hw_id::SMUIO,
                    0,
                    (13, 0, 3),
                    &[0x0001_6800, 0x0001_6A00, 0x0240_1000, 0x0344_0000],
                ),
                IpBlock::new(hw_id::DF, 0, (4, 3, 0), &[0x0000_7000, 0x0240_B800, 0x07C0_0000]),
            ],
            gc: GcInfo::V2_1(gc),
            harvest: Vec::new(),
        }
    }

    /// The binary: binary header, IP discovery table (one die), GC table and harvest
    /// table, each with its checksum, and the binary's checksum. `None` if it does not
    /// fit the format's 16-bit offsets or its 8-bit counts.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        let mut out = vec![0u8; size_of::<binary_header>()];
        let mut bhdr = binary_header {
            binary_signature: BINARY_SIGNATURE,
            version_major: 1,
            version_minor: 0,
            ..Default::default()
        };

        // IP discovery table: header, die header, entries.
        let ihdr_at = out.len();
        out.resize(ihdr_at + size_of::<ip_discovery_header>(), 0);
        let die_at = out.len();
        out.extend_from_slice(
            die_header {
                die_id: 0,
                num_ips: u16::try_from(self.ips.len()).ok()?,
            }
            .as_bytes(),
        );
        for b in &self.ips {
            let entry = ip {
                hw_id: b.hw_id,
                instance_number: b.instance,
                num_base_address: u8::try_from(b.bases.len()).ok()?,
                major: b.version.0,
                minor: b.version.1,
                revision: b.version.2,
                variant_sub_revision: 0,
            };
            out.extend_from_slice(entry.as_bytes());
            for base in &b.bases {
                out.extend_from_slice(&base.to_le_bytes());
            }
        }
        let ip_size = out.len() - ihdr_at;
        let mut ihdr = ip_discovery_header {
            signature: DISCOVERY_TABLE_SIGNATURE,
            version: self.table_version,
            size: u16::try_from(ip_size).ok()?,
            id: 0,
            num_dies: 1,
            ..Default::default()
        };
        ihdr.die_info[0] = dsc::die_info {
            die_id: 0,
            die_offset: u16::try_from(die_at).ok()?,
        };
        out[ihdr_at..die_at].copy_from_slice(ihdr.as_bytes());
        bhdr.table_list[dsc::IP_DISCOVERY] = table(ihdr_at, &out[ihdr_at..])?;

        // GC table.
        let gc_at = out.len();
        match &self.gc {
            GcInfo::V1_0(g) => out.extend_from_slice(g.as_bytes()),
            GcInfo::V1_2(g) => out.extend_from_slice(g.as_bytes()),
            GcInfo::V1_3(g) => out.extend_from_slice(g.as_bytes()),
            GcInfo::V2_1(g) => out.extend_from_slice(g.as_bytes()),
        }
        bhdr.table_list[dsc::GC] = table(gc_at, &out[gc_at..])?;

        // Harvest table.
        let hv_at = out.len();
        let mut hv = harvest_table::default();
        hv.header.signature = HARVEST_TABLE_SIGNATURE;
        hv.header.version = 1;
        if self.harvest.len() > hv.list.len() {
            return None;
        }
        for (slot, &(id, inst)) in hv.list.iter_mut().zip(&self.harvest) {
            slot.hw_id = id;
            slot.number_instance = inst;
        }
        out.extend_from_slice(hv.as_bytes());
        bhdr.table_list[dsc::HARVEST_INFO] = table(hv_at, &out[hv_at..])?;

        bhdr.binary_size = u16::try_from(out.len()).ok()?;
        out[..size_of::<binary_header>()].copy_from_slice(bhdr.as_bytes());
        let sum = dsc::checksum(&out[BINARY_CHECKSUM_START..]);
        bhdr.binary_checksum = sum;
        out[..size_of::<binary_header>()].copy_from_slice(bhdr.as_bytes());
        (out.len() <= dsc::DISCOVERY_TMR_SIZE).then_some(out)
    }
}

fn table(at: usize, bytes: &[u8]) -> Option<dsc::table_info> {
    Some(dsc::table_info {
        offset: u16::try_from(at).ok()?,
        checksum: dsc::checksum(bytes),
        size: u16::try_from(bytes.len()).ok()?,
        padding: 0,
    })
}
