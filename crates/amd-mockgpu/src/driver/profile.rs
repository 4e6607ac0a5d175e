//! The GPUs the mock presents: their KFD topology properties, memory sizes, PCI
//! identity and IP blocks.

use crate::drm::PciIdentity;
use crate::pci::discovery::Discovery;

/// One mock GPU: what its sysfs `properties` say and how much memory it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProfile {
    /// A name for messages (`gfx1100`).
    pub name: &'static str,
    /// `properties` entries in file order; `drm_render_minor` is filled in per GPU.
    pub props: Vec<(String, u64)>,
    /// VRAM bytes.
    pub vram_size: u64,
    /// Whether all of VRAM is CPU-visible (resizable BAR); if not, VRAM allocations
    /// with CPU access fail with EINVAL, as the driver does.
    pub large_bar: bool,
    /// Replaces the generated `properties` text (to test malformed files).
    pub properties_override: Option<String>,
    /// GTT bytes (`mem_info_gtt_total`).
    pub gtt_size: u64,
    /// What the render node's `device/` says of the PCI function.
    pub pci: PciIdentity,
    /// The IP blocks (`device/ip_discovery`), as the card's discovery table has them.
    pub discovery: Discovery,
}

const GFX1100: &[(&str, u64)] = &[
    ("cpu_cores_count", 0),
    ("simd_count", 192),
    ("mem_banks_count", 1),
    ("caches_count", 206),
    ("io_links_count", 1),
    ("p2p_links_count", 5),
    ("cpu_core_id_base", 0),
    ("simd_id_base", 2147488032),
    ("max_waves_per_simd", 16),
    ("lds_size_in_kb", 64),
    ("gds_size_in_kb", 0),
    ("num_gws", 64),
    ("wave_front_size", 32),
    ("array_count", 12),
    ("simd_arrays_per_engine", 2),
    ("cu_per_simd_array", 8),
    ("simd_per_cu", 2),
    ("max_slots_scratch_cu", 32),
    ("gfx_target_version", 110000),
    ("vendor_id", 4098),
    ("device_id", 29772),
    ("location_id", 34304),
    ("domain", 0),
    ("drm_render_minor", 0),
    ("hive_id", 0),
    ("num_sdma_engines", 2),
    ("num_sdma_xgmi_engines", 0),
    ("num_sdma_queues_per_engine", 6),
    ("num_cp_queues", 8),
    ("max_engine_clk_fcompute", 2482),
    ("local_mem_size", 0),
    ("fw_version", 2140),
    ("capability", 671588992),
    ("debug_prop", 1495),
    ("sdma_fw_version", 20),
    ("unique_id", 11673270660693242239),
    ("num_xcc", 1),
    ("max_engine_clk_ccompute", 2400),
];

/// `HSA_CAP_SVMAPI_SUPPORTED` of a node's `capability` (`kfd_topology.h`).
pub const HSA_CAP_SVMAPI_SUPPORTED: u64 = 0x0800_0000;

/// A Radeon RX 9070 XT: where its values differ from the gfx1100 profile's, as
/// `docs/reference/rdna4.md` (3.4) establishes them for a gfx1201. No source gives a gfx1201's
/// `caches_count`, `simd_id_base`, `p2p_links_count`, `location_id` or
/// `sdma_fw_version`: those are the gfx1100 profile's; `unique_id` is one of its own;
/// the engine clock is the low end of the boards' 2400-2570 MHz.
const GFX1201_CHANGES: &[(&str, u64)] = &[
    ("simd_count", 128),
    ("num_gws", 0),
    ("array_count", 8),
    ("gfx_target_version", 120001),
    ("device_id", 30032),
    ("num_cp_queues", 4),
    ("max_engine_clk_fcompute", 2400),
    ("fw_version", 3010),
    ("capability", 0x6847_A280),
    ("unique_id", 11673270660693242240),
];

/// One XCD partition of an AMD Instinct MI300X in CPX mode (`num_xcc` 1: eight such
/// nodes per card), where its values differ from the gfx1100 profile's: as the
/// partitions of a real MI300X node list them (ROCm's k8s-device-plugin test data,
/// `testdata/topo-mi300-cpx`), for the first partition of a card alone in its
/// machine. `io_links_count` is 1 and `p2p_links_count` 0 (the mock has no sibling
/// partitions or second CPU socket to link to); `simd_id_base` is the first GPU's
/// (`kfd_crat.c`'s 0x80001000); `hive_id` is 0 (no xGMI hive).
const GFX942_CHANGES: &[(&str, u64)] = &[
    ("simd_count", 152),
    ("caches_count", 80),
    ("p2p_links_count", 0),
    ("simd_id_base", 2147487744),
    ("max_waves_per_simd", 8),
    ("wave_front_size", 64),
    ("array_count", 4),
    ("simd_arrays_per_engine", 1),
    ("cu_per_simd_array", 10),
    ("simd_per_cu", 4),
    ("gfx_target_version", 90402),
    ("device_id", 29857),
    ("location_id", 1280),
    ("num_sdma_engines", 2),
    ("num_sdma_xgmi_engines", 0),
    ("num_sdma_queues_per_engine", 8),
    ("num_cp_queues", 24),
    ("max_engine_clk_fcompute", 2100),
    ("fw_version", 177),
    ("capability", 0xAC77_A280),
    ("debug_prop", 1511),
    ("sdma_fw_version", 24),
    ("unique_id", 16404946649897475633),
    ("max_engine_clk_ccompute", 2750),
];

/// A Radeon RX 6800 XT: where its values differ from the gfx1100 profile's.
const GFX1030_CHANGES: &[(&str, u64)] = &[
    ("simd_count", 160),
    ("caches_count", 170),
    ("p2p_links_count", 0),
    ("simd_id_base", 2147487744),
    ("array_count", 8),
    ("cu_per_simd_array", 10),
    ("gfx_target_version", 100300),
    ("device_id", 29631),
    ("location_id", 3072),
    ("num_sdma_engines", 4),
    ("num_sdma_queues_per_engine", 2),
    ("max_engine_clk_fcompute", 2250),
    ("fw_version", 115),
    ("sdma_fw_version", 83),
    ("unique_id", 9876543210123456789),
    ("max_engine_clk_ccompute", 2100),
];

/// The gfx1100 profile's properties, in its order, with `changes` in place of its
/// values.
fn props(changes: &[(&str, u64)]) -> Vec<(String, u64)> {
    debug_assert!(changes.iter().all(|(k, _)| GFX1100.iter().any(|(b, _)| b == k)));
    GFX1100
        .iter()
        .map(|&(k, v)| {
            let v = changes.iter().find(|(c, _)| *c == k).map_or(v, |&(_, c)| c);
            (k.to_string(), v)
        })
        .collect()
}

impl GpuProfile {
    /// A Radeon RX 7900 XTX: gfx1100, 96 CUs, 24 GiB, resizable BAR.
    pub fn gfx1100() -> Self {
        Self::desktop("gfx1100", &[], 24 << 30, (0x0e3b, 0xc8), Discovery::navi31())
    }

    /// A Radeon RX 9070 XT: gfx1201, 64 CUs, 16 GiB, resizable BAR. Its kernels run on
    /// amd-isa's RDNA4 interpreter.
    pub fn gfx1201() -> Self {
        Self::desktop(
            "gfx1201",
            GFX1201_CHANGES,
            16 << 30,
            (0x0e3b, 0xc0),
            Discovery::navi48(),
        )
    }

    /// One XCD partition of an AMD Instinct MI300X in CPX mode: gfx942, 38 CUs in
    /// 4 shader engines, waves of 64, 24 GiB (an eighth of the card's 192 GiB, as
    /// the partition's memory bank reads in NPS1 mode), large BAR. Its kernels run
    /// on amd-isa's CDNA3 interpreter.
    pub fn gfx942() -> Self {
        GpuProfile {
            name: "gfx942",
            props: props(GFX942_CHANGES),
            vram_size: 25_767_706_624,
            large_bar: true,
            properties_override: None,
            gtt_size: 16 << 30,
            pci: PciIdentity {
                subsystem_vendor: 0x1002,
                subsystem_device: 0x74a1,
                revision: 0,
                // A processing accelerator (class 0x12), as Instinct cards are.
                class: 0x12_0000,
            },
            discovery: Discovery::mi300x_xcd(),
        }
    }

    /// A whole AMD Instinct MI300X in SPX mode (its default): gfx942 on 8 XCCs of 38
    /// CUs (304), 32 shader engines, waves of 64, 192 GiB, large BAR; the properties a
    /// real one's node reads (`num_xcc` 8, `array_count` 32, `simd_count` 1216), else
    /// the CPX partition's. Its queues run on one command processor standing for
    /// XCC 0 (see docs/mock.md); its kernels on amd-isa's CDNA3 interpreter.
    pub fn gfx942_spx() -> Self {
        Self::gfx942()
            .with_prop("simd_count", 1216)
            .with_prop("array_count", 32)
            .with_prop("caches_count", 626)
            .with_prop("num_xcc", 8)
            .with_vram(206_141_652_992)
    }

    /// The profile named `name` (`gfx1100`, `gfx1201`, `gfx1030`, `gfx942` or
    /// `gfx942-spx`), as `AMD_MOCK_PROFILE` names it.
    pub fn named(name: &str) -> Option<Self> {
        match name.trim() {
            "gfx1100" => Some(Self::gfx1100()),
            "gfx1201" => Some(Self::gfx1201()),
            "gfx942" => Some(Self::gfx942()),
            "gfx942-spx" => Some(Self::gfx942_spx()),
            "gfx1030" => Some(Self::gfx1030()),
            _ => None,
        }
    }

    /// A Radeon RX 6800 XT: gfx1030, 80 CUs, 16 GiB, resizable BAR.
    pub fn gfx1030() -> Self {
        Self::desktop(
            "gfx1030",
            GFX1030_CHANGES,
            16 << 30,
            (0x0e3a, 0xc1),
            Discovery::navi21(),
        )
    }

    /// A desktop card (resizable BAR, 16 GiB of GTT, an AMD subsystem and display
    /// class): its name, its properties' `changes` from gfx1100's, its VRAM, its PCI
    /// subsystem device and revision, and its discovery table.
    fn desktop(
        name: &'static str,
        changes: &[(&str, u64)],
        vram_size: u64,
        (subsystem_device, revision): (u16, u8),
        discovery: Discovery,
    ) -> Self {
        GpuProfile {
            name,
            props: props(changes),
            vram_size,
            large_bar: true,
            properties_override: None,
            gtt_size: 16 << 30,
            pci: PciIdentity {
                subsystem_vendor: 0x1002,
                subsystem_device,
                revision,
                class: 0x03_0000,
            },
            discovery,
        }
    }

    /// Sets (or adds) a property.
    pub fn with_prop(mut self, key: &str, value: u64) -> Self {
        match self.props.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value,
            None => self.props.push((key.to_string(), value)),
        }
        self
    }

    /// Sets the VRAM size.
    pub fn with_vram(mut self, bytes: u64) -> Self {
        self.vram_size = bytes;
        self
    }

    /// Without resizable BAR: CPU-visible VRAM allocations fail with EINVAL.
    pub fn without_large_bar(mut self) -> Self {
        self.large_bar = false;
        self
    }

    /// Serves `text` as the `properties` file instead of the generated one.
    pub fn with_properties_text(mut self, text: impl Into<String>) -> Self {
        self.properties_override = Some(text.into());
        self
    }

    /// A property's value.
    pub fn prop(&self, key: &str) -> Option<u64> {
        self.props.iter().find(|(k, _)| k == key).map(|e| e.1)
    }

    /// The `properties` file with `render_minor` filled in.
    pub fn properties_text(&self, render_minor: u32) -> String {
        if let Some(t) = &self.properties_override {
            return t.clone();
        }
        let mut s = String::new();
        for (k, v) in &self.props {
            let v = match k.as_str() {
                "drm_render_minor" => render_minor as u64,
                // The mock answers no AMDKFD_IOC_SVM: it does not claim the SVM API
                // that a real card's capability has (ROCr would call it).
                "capability" => *v & !HSA_CAP_SVMAPI_SUPPORTED,
                _ => *v,
            };
            s.push_str(&format!("{k} {v}\n"));
        }
        s
    }
}
