//! GPU discovery from the KFD sysfs topology
//! (`/sys/devices/virtual/kfd/kfd/topology/nodes/*`).

use std::collections::BTreeMap;
use std::num::IntErrorKind;
use std::path::{Path, PathBuf};

use amd_packets::GfxTarget;

use crate::raw::PAGE_SIZE;
use crate::sys::Sys;
use crate::{KfdError, Result};

/// Where KFD publishes its topology (`generation_id`, `system_properties`, `nodes/`).
pub const TOPOLOGY: &str = "/sys/devices/virtual/kfd/kfd/topology";
/// The topology's nodes, one directory each.
pub const TOPOLOGY_NODES: &str = "/sys/devices/virtual/kfd/kfd/topology/nodes";

/// A GPU node's `properties`, typed; every key (known or not) is also in `all`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeProperties {
    /// `gfx_target_version` (major·10000 + minor·100 + stepping).
    pub gfx_target_version: u32,
    /// `simd_count`: SIMDs on the GPU.
    pub simd_count: u32,
    /// `simd_per_cu`
    pub simd_per_cu: u32,
    /// `max_waves_per_simd`
    pub max_waves_per_simd: u32,
    /// `lds_size_in_kb`: LDS per workgroup processor.
    pub lds_size_in_kb: u32,
    /// `max_slots_scratch_cu`: scratch wave slots per CU.
    pub max_slots_scratch_cu: u32,
    /// `array_count`: shader arrays.
    pub array_count: u32,
    /// `simd_arrays_per_engine`
    pub simd_arrays_per_engine: u32,
    /// `cu_per_simd_array`
    pub cu_per_simd_array: u32,
    /// `wave_front_size`
    pub wave_front_size: u32,
    /// `drm_render_minor`: the render node is `/dev/dri/renderD<minor>`.
    pub drm_render_minor: u32,
    /// `num_sdma_engines`
    pub num_sdma_engines: u32,
    /// `num_sdma_xgmi_engines`
    pub num_sdma_xgmi_engines: u32,
    /// `num_sdma_queues_per_engine`
    pub num_sdma_queues_per_engine: u32,
    /// `num_cp_queues`
    pub num_cp_queues: u32,
    /// `num_xcc` (1 where absent)
    pub num_xcc: u32,
    /// `vendor_id`
    pub vendor_id: u32,
    /// `device_id`
    pub device_id: u32,
    /// `location_id` (PCI bus/device/function)
    pub location_id: u32,
    /// `domain` (PCI domain)
    pub domain: u32,
    /// `max_engine_clk_fcompute`, MHz
    pub max_engine_clk_fcompute: u32,
    /// `unique_id`
    pub unique_id: u64,
    /// Every key and value of the file, including ones not named above.
    pub all: BTreeMap<String, u64>,
}

impl NodeProperties {
    /// Parses the text of a `properties` file. `path` names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let err = |line: Option<usize>, msg: String| KfdError::Topology {
            path: path.to_path_buf(),
            line,
            msg,
        };
        let mut all = BTreeMap::new();
        // The line each key came from, to name both lines of a duplicate.
        let mut lines: BTreeMap<String, usize> = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let mut parts = line.split_whitespace();
            let Some(key) = parts.next() else { continue };
            let value = parts
                .next()
                .ok_or_else(|| err(Some(n), format!("{:?} has no value", clip(key))))?;
            if parts.next().is_some() {
                return Err(err(Some(n), format!("{:?} is not `key value`", clip(line))));
            }
            let value: u64 = value.parse().map_err(|e: std::num::ParseIntError| {
                let why = match e.kind() {
                    IntErrorKind::PosOverflow => "does not fit 64 bits",
                    _ => "is not a non-negative integer",
                };
                err(Some(n), format!("{}: {:?} {why}", clip(key), clip(value)))
            })?;
            if let Some(first) = lines.insert(key.to_string(), n) {
                return Err(err(Some(n), format!("{} repeats the key of line {first}", clip(key))));
            }
            all.insert(key.to_string(), value);
        }
        let get = |key: &'static str| -> Result<u32> {
            let v = *all.get(key).ok_or_else(|| err(None, format!("missing {key}")))?;
            u32::try_from(v).map_err(|_| err(lines.get(key).copied(), format!("{key} {v} does not fit 32 bits")))
        };
        let opt = |key: &'static str, default: u32| -> Result<u32> {
            if all.contains_key(key) { get(key) } else { Ok(default) }
        };
        let props = NodeProperties {
            gfx_target_version: get("gfx_target_version")?,
            simd_count: get("simd_count")?,
            simd_per_cu: get("simd_per_cu")?,
            max_waves_per_simd: get("max_waves_per_simd")?,
            lds_size_in_kb: get("lds_size_in_kb")?,
            max_slots_scratch_cu: get("max_slots_scratch_cu")?,
            array_count: get("array_count")?,
            simd_arrays_per_engine: get("simd_arrays_per_engine")?,
            cu_per_simd_array: opt("cu_per_simd_array", 0)?,
            wave_front_size: opt("wave_front_size", 64)?,
            drm_render_minor: get("drm_render_minor")?,
            num_sdma_engines: opt("num_sdma_engines", 0)?,
            num_sdma_xgmi_engines: opt("num_sdma_xgmi_engines", 0)?,
            num_sdma_queues_per_engine: opt("num_sdma_queues_per_engine", 0)?,
            num_cp_queues: opt("num_cp_queues", 0)?,
            num_xcc: opt("num_xcc", 1)?,
            vendor_id: opt("vendor_id", 0)?,
            device_id: opt("device_id", 0)?,
            location_id: opt("location_id", 0)?,
            domain: opt("domain", 0)?,
            max_engine_clk_fcompute: opt("max_engine_clk_fcompute", 0)?,
            unique_id: all.get("unique_id").copied().unwrap_or(0),
            all,
        };
        // Everything computed from these values must be representable: refuse the
        // file now rather than overflow later.
        props.derived().map_err(|msg| err(None, msg))?;
        Ok(props)
    }

    /// Checks every size amd-kfd and the runtime compute from the properties (CU
    /// and wave counts, LDS bytes, context-save sizes); the error names the values
    /// whose arithmetic overflows.
    fn derived(&self) -> std::result::Result<(), String> {
        self.checked_waves_per_cu()?;
        self.checked_lds_size()?;
        CwsrSizes::compute(self)?;
        Ok(())
    }

    /// The LLVM processor name, e.g. `gfx1100` for 110000 and `gfx90a` for 90010.
    pub fn arch(&self) -> String {
        let v = self.gfx_target_version;
        format!("gfx{}{:x}{:x}", v / 10000, (v / 100) % 100, v % 100)
    }

    /// The packet family of this GPU, or a clear error for an unsupported one.
    pub fn target(&self) -> Result<GfxTarget> {
        GfxTarget::from_version(self.gfx_target_version).map_err(|_| KfdError::UnsupportedTarget {
            arch: self.arch(),
            version: self.gfx_target_version,
        })
    }

    /// Compute units (`simd_count / simd_per_cu`).
    pub fn cu_count(&self) -> u32 {
        self.simd_count.checked_div(self.simd_per_cu).unwrap_or(0)
    }

    /// Wave slots per CU (`max_waves_per_simd · simd_per_cu`); an error when the
    /// product does not fit 32 bits (properties [`NodeProperties::parse`] accepted
    /// always fit).
    pub fn waves_per_cu(&self) -> Result<u32> {
        self.checked_waves_per_cu().map_err(|m| self.invalid(m))
    }

    /// LDS bytes per workgroup processor (`lds_size_in_kb · 1024`); an error when
    /// that does not fit 32 bits (properties [`NodeProperties::parse`] accepted always
    /// fit).
    pub fn lds_size(&self) -> Result<u32> {
        self.checked_lds_size().map_err(|m| self.invalid(m))
    }

    /// The error for properties whose arithmetic fails outside a file (built by hand).
    pub(crate) fn invalid(&self, msg: String) -> KfdError {
        KfdError::InvalidArgument(format!("properties of {}: {msg}", self.arch()))
    }

    fn checked_waves_per_cu(&self) -> std::result::Result<u32, String> {
        self.max_waves_per_simd.checked_mul(self.simd_per_cu).ok_or_else(|| {
            format!(
                "max_waves_per_simd {} × simd_per_cu {} overflows 32 bits",
                self.max_waves_per_simd, self.simd_per_cu
            )
        })
    }

    fn checked_lds_size(&self) -> std::result::Result<u32, String> {
        self.lds_size_in_kb
            .checked_mul(1024)
            .ok_or_else(|| format!("lds_size_in_kb {} × 1024 bytes overflows 32 bits", self.lds_size_in_kb))
    }
}

/// The first 64 characters of hostile text, for error messages.
fn clip(s: &str) -> &str {
    match s.char_indices().nth(64) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A usable GPU node: non-zero `gpu_id`, with its parsed properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuNode {
    /// The node number (the directory name).
    pub node: u32,
    /// KFD's id for the GPU, used in every ioctl.
    pub gpu_id: u32,
    /// The node's properties.
    pub props: NodeProperties,
    /// The node directory.
    pub path: PathBuf,
}

/// Which GPUs are visible, and in what order, from `VISIBLE_DEVICES` or, if that is
/// unset, `HIP_VISIBLE_DEVICES`: comma-separated indices into the usable GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Visibility {
    var: Option<(&'static str, String)>,
}

impl Visibility {
    /// All GPUs, in node order.
    pub fn all() -> Self {
        Visibility { var: None }
    }

    /// From the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|var| std::env::var(var).ok())
    }

    /// From the variables `lookup` returns: `VISIBLE_DEVICES` wins over
    /// `HIP_VISIBLE_DEVICES`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        for var in ["VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"] {
            if let Some(v) = lookup(var) {
                return Visibility { var: Some((var, v)) };
            }
        }
        Visibility::all()
    }

    /// As if `var` (`VISIBLE_DEVICES` or `HIP_VISIBLE_DEVICES`) were set to `value`.
    pub fn from_var(var: &'static str, value: impl Into<String>) -> Self {
        Visibility {
            var: Some((var, value.into())),
        }
    }

    /// Selects and orders `gpus`.
    pub fn apply(&self, gpus: Vec<GpuNode>) -> Result<Vec<GpuNode>> {
        self.select(&gpus)
    }

    /// Selects and orders `items` (the usable GPUs of a transport, in its order):
    /// each listed index picks one item; an index that is not a number, past the
    /// end, or listed twice is an error naming the variable.
    pub fn select<T: Clone>(&self, items: &[T]) -> Result<Vec<T>> {
        let Some((var, value)) = &self.var else {
            return Ok(items.to_vec());
        };
        let err = |msg: String| KfdError::Visibility {
            var,
            value: value.clone(),
            msg,
        };
        let mut picked: Vec<usize> = Vec::new();
        for tok in value.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let i: usize = tok.parse().map_err(|_| err(format!("{tok:?} is not a GPU index")))?;
            if i >= items.len() {
                return Err(err(format!("GPU {i} does not exist ({} found)", items.len())));
            }
            if picked.contains(&i) {
                return Err(err(format!("GPU {i} is listed twice")));
            }
            picked.push(i);
        }
        Ok(picked.into_iter().map(|i| items[i].clone()).collect())
    }
}

fn read_text(sys: &dyn Sys, path: &Path) -> Result<String> {
    let bytes = sys.read_file(path)?;
    String::from_utf8(bytes).map_err(|_| KfdError::Topology {
        path: path.to_path_buf(),
        line: None,
        msg: "not UTF-8 text".into(),
    })
}

/// The usable GPUs under `nodes_dir`, ordered by node number, then selected by `vis`.
pub fn discover(sys: &dyn Sys, nodes_dir: &Path, vis: &Visibility) -> Result<Vec<GpuNode>> {
    let mut nodes: Vec<(u32, String)> = Vec::new();
    for name in sys.list_dir(nodes_dir)? {
        // Entries other than node numbers are not nodes.
        if let Ok(n) = name.parse::<u32>() {
            nodes.push((n, name));
        }
    }
    nodes.sort();
    let mut gpus = Vec::new();
    for (node, name) in nodes {
        let path = nodes_dir.join(&name);
        let id_path = path.join("gpu_id");
        // A node whose gpu_id cannot be read is not a usable GPU (as KFD's own tools
        // treat it); one that reads but does not parse is an error.
        let Ok(text) = read_text(sys, &id_path) else { continue };
        let gpu_id: u32 = text.trim().parse().map_err(|_| KfdError::Topology {
            path: id_path.clone(),
            line: Some(1),
            msg: format!("{:?} is not a GPU id", text.trim()),
        })?;
        if gpu_id == 0 {
            continue;
        }
        let props_path = path.join("properties");
        let props = NodeProperties::parse(&read_text(sys, &props_path)?, &props_path)?;
        gpus.push(GpuNode {
            node,
            gpu_id,
            props,
            path,
        });
    }
    vis.apply(gpus)
}

/// Context-save sizes of a compute queue, as the kernel computes them
/// (`kfd_queue_ctx_save_restore_size`, linux 6.12) and tinygrad 0.10.1 mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwsrSizes {
    /// Control stack bytes (`ctl_stack_size`).
    pub ctl_stack_size: u32,
    /// Workgroup data bytes.
    pub wg_data_size: u32,
    /// Debugger bytes after the save area.
    pub debug_memory_size: u32,
    /// The partition's XCCs (`num_xcc`): each saves its waves into an area of its own
    /// (the save area and the debugger's bytes), one after another in the allocation.
    pub xccs: u32,
}

impl CwsrSizes {
    /// The sizes for a GPU with these properties (gfx10.1 and later). An error for
    /// a GPU without compute units, or whose sizes overflow (the message names the
    /// values).
    pub fn for_props(props: &NodeProperties) -> Result<Self> {
        match Self::compute(props) {
            Ok(Some(s)) => Ok(s),
            Ok(None) => Err(KfdError::InvalidArgument(format!(
                "{} has no compute units",
                props.arch()
            ))),
            Err(msg) => Err(props.invalid(msg)),
        }
    }

    /// [`CwsrSizes::for_props`] with the error as text (`None`: no compute units).
    /// Every step is checked: the properties come from sysfs. The kernel computes
    /// these in 32 bits (`u32` fields of `kfd_node_properties`), so a size that
    /// does not fit 32 bits is an error here, not a wrapped number.
    pub(crate) fn compute(props: &NodeProperties) -> std::result::Result<Option<Self>, String> {
        let gfxv = props.gfx_target_version;
        let xcc = props.num_xcc.max(1);
        let cu = props.cu_count() / xcc;
        if cu == 0 {
            return Ok(None);
        }
        let what = || {
            format!(
                "simd_count {} / simd_per_cu {} / num_xcc {xcc} = {cu} CUs",
                props.simd_count, props.simd_per_cu
            )
        };
        let over = |step: &str| format!("{}: {step} overflows 32 bits", what());
        // Before gfx10.1 (NAVI10): at most 40 waves per CU and 512 per shader engine,
        // 8 control-stack bytes per wave; 32 and 12 from gfx10.1 on.
        let (wave_num, per_wave) = if gfxv < 100100 {
            let engines = props.array_count / props.simd_arrays_per_engine.max(1);
            let waves = cu.checked_mul(40).ok_or_else(|| over("× 40 waves per CU"))?;
            let cap = engines
                .checked_mul(512)
                .ok_or_else(|| format!("{engines} shader engines × 512 waves overflows 32 bits"))?;
            (waves.min(cap), 8)
        } else {
            (cu.checked_mul(32).ok_or_else(|| over("× 32 waves per CU"))?, 12)
        };
        let vgpr_per_cu: u32 = match gfxv {
            // Aqua Vanjaram (gfx942), Aldebaran (gfx90a), Arcturus (gfx908).
            90402 | 90010 | 90008 => 0x80000,
            110000 | 110001 | 110501 | 120000 | 120001 => 0x60000,
            _ => 0x40000,
        };
        let page = PAGE_SIZE as u32;
        let wg = (vgpr_per_cu + 0x4000 + 0x10000 + 0x1000)
            .checked_mul(cu)
            .and_then(|v| v.checked_next_multiple_of(page))
            .ok_or_else(|| over("× the workgroup context data per CU"))?;
        let ctl = wave_num
            .checked_mul(per_wave)
            .and_then(|v| v.checked_add(40 + 8))
            .and_then(|v| v.checked_next_multiple_of(page))
            .ok_or_else(|| over("× the control-stack bytes per wave"))?;
        let debug = wave_num
            .checked_mul(32)
            .and_then(|v| v.checked_next_multiple_of(64))
            .ok_or_else(|| over("× 32 debugger bytes per wave"))?;
        let sizes = CwsrSizes {
            ctl_stack_size: ctl,
            wg_data_size: wg,
            debug_memory_size: debug,
            xccs: xcc,
        };
        // The ioctl's ctx_save_restore_size, and the allocation, must fit too.
        sizes.checked_total().ok_or_else(|| {
            over(&format!(
                "control stack {ctl:#x} + workgroup data {wg:#x} + debugger {debug:#x}"
            ))
        })?;
        Ok(Some(sizes))
    }

    /// (`ctx_save_restore_size`, allocation bytes), if both fit 32 bits: one save
    /// area and debugger area per XCC, page-rounded together, as KFD checks the
    /// allocation (`kfd_queue_acquire_buffers`).
    fn checked_total(&self) -> Option<(u32, u32)> {
        let save = self.ctl_stack_size.checked_add(self.wg_data_size)?;
        let alloc = save
            .checked_add(self.debug_memory_size)?
            .checked_mul(self.xccs.max(1))?
            .checked_next_multiple_of(PAGE_SIZE as u32)?;
        Some((save, alloc))
    }

    fn total_error(&self) -> KfdError {
        KfdError::InvalidArgument(format!(
            "context-save sizes {:#x} + {:#x} + {:#x} overflow 32 bits",
            self.ctl_stack_size, self.wg_data_size, self.debug_memory_size
        ))
    }

    /// `ctx_save_restore_size` (control stack + workgroup data); an error if the
    /// sum does not fit 32 bits (never for sizes [`CwsrSizes::for_props`] made).
    pub fn ctx_save_restore_size(&self) -> Result<u32> {
        self.checked_total().map(|t| t.0).ok_or_else(|| self.total_error())
    }

    /// Bytes of the context-save allocation ((save area + debugger bytes) × XCCs,
    /// page-rounded); an error if that does not fit 32 bits (never for sizes
    /// [`CwsrSizes::for_props`] made).
    pub fn allocation_size(&self) -> Result<usize> {
        self.checked_total()
            .map(|t| t.1 as usize)
            .ok_or_else(|| self.total_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "gfx_target_version 110000\nsimd_count 192\nsimd_per_cu 2\nmax_waves_per_simd 16\n\
        lds_size_in_kb 64\nmax_slots_scratch_cu 32\narray_count 12\nsimd_arrays_per_engine 2\n\
        drm_render_minor 128\nunique_id 11673270660693242239\nsome_future_key 5\n";

    #[test]
    fn parses_and_keeps_unknown_keys() {
        let p = NodeProperties::parse(P, Path::new("props")).unwrap();
        assert_eq!(p.arch(), "gfx1100");
        assert_eq!(p.cu_count(), 96);
        assert_eq!(p.waves_per_cu().unwrap(), 32);
        assert_eq!(p.lds_size().unwrap(), 65536);
        assert_eq!(p.unique_id, 11673270660693242239);
        assert_eq!(p.all["some_future_key"], 5);
        assert_eq!(p.num_xcc, 1);
        assert_eq!(p.target().unwrap(), GfxTarget::Gfx11);
    }

    #[test]
    fn errors_name_file_and_line() {
        let bad = P.replace("simd_count 192", "simd_count twelve");
        let e = NodeProperties::parse(&bad, Path::new("/x/properties")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/x/properties:2: simd_count: \"twelve\" is not a non-negative integer"
        );
        let e = NodeProperties::parse("simd_count\n", Path::new("p")).unwrap_err();
        assert!(e.to_string().contains("p:1"), "{e}");
        let e = NodeProperties::parse("a 1 2\n", Path::new("p")).unwrap_err();
        assert!(e.to_string().contains("p:1"), "{e}");
        let missing = P.replace("drm_render_minor 128\n", "");
        let e = NodeProperties::parse(&missing, Path::new("p")).unwrap_err();
        assert!(e.to_string().contains("missing drm_render_minor"), "{e}");
        let huge = P.replace("simd_count 192", "simd_count 99999999999");
        assert!(NodeProperties::parse(&huge, Path::new("p")).is_err());
    }

    #[test]
    fn arch_names_and_unsupported_targets() {
        let mut p = NodeProperties::parse(P, Path::new("p")).unwrap();
        p.gfx_target_version = 90010;
        assert_eq!(p.arch(), "gfx90a");
        let e = p.target().unwrap_err();
        assert!(e.to_string().contains("gfx90a"), "{e}");
        p.gfx_target_version = 100300;
        assert_eq!(p.arch(), "gfx1030");
    }

    #[test]
    fn cwsr_sizes_match_tinygrad_for_a_7900_xtx() {
        let text = "gfx_target_version 110000\nsimd_count 192\nsimd_per_cu 2\nmax_waves_per_simd 16\n\
            lds_size_in_kb 64\nmax_slots_scratch_cu 32\narray_count 12\nsimd_arrays_per_engine 2\n\
            drm_render_minor 128\n";
        let props = NodeProperties::parse(text, Path::new("p")).unwrap();
        let s = CwsrSizes::for_props(&props).unwrap();
        // The seed: max_cu_id + 1 = 96 CUs, max_wave_id + 1 = 32 waves per CU.
        let round = |v: u32| v.next_multiple_of(4096);
        assert_eq!(s.wg_data_size, round((0x60000 + 0x4000 + 0x10000 + 0x1000) * 96));
        assert_eq!(s.ctl_stack_size, round(12 * 96 * 32 + 8 + 40));
        assert_eq!(s.debug_memory_size, (96 * 32 * 32u32).next_multiple_of(64));
        assert_eq!(s.allocation_size().unwrap() % 4096, 0);
    }

    /// An RX 9070 XT (gfx1201, 64 CUs): the sizes the kernel computes, which a Radeon
    /// AI PRO R9700 (also gfx1201, 64 CUs) prints in sysfs.
    #[test]
    fn cwsr_sizes_of_a_gfx1201() {
        let text = "gfx_target_version 120001\nsimd_count 128\nsimd_per_cu 2\nmax_waves_per_simd 16\n\
            lds_size_in_kb 64\nmax_slots_scratch_cu 32\narray_count 8\nsimd_arrays_per_engine 2\n\
            drm_render_minor 128\n";
        let props = NodeProperties::parse(text, Path::new("p")).unwrap();
        assert_eq!(props.target().unwrap(), GfxTarget::Gfx12);
        let s = CwsrSizes::for_props(&props).unwrap();
        assert_eq!(s.ctl_stack_size, 28_672);
        assert_eq!(s.ctl_stack_size + s.wg_data_size, 30_699_520);
        assert_eq!(s.debug_memory_size, 65_536);
    }

    /// One XCD partition of an MI300X (gfx942, 38 CUs, 4 shader engines): gfx9's
    /// rules (`kfd_queue_ctx_save_restore_size`): min(38 × 40, 4 × 512) = 1,520 waves
    /// of 8 control-stack bytes, 0x80000 VGPR bytes per CU.
    #[test]
    fn cwsr_sizes_of_an_mi300x_partition() {
        let text = "gfx_target_version 90402\nsimd_count 152\nsimd_per_cu 4\nmax_waves_per_simd 8\n\
            lds_size_in_kb 64\nmax_slots_scratch_cu 32\narray_count 4\nsimd_arrays_per_engine 1\n\
            drm_render_minor 128\nnum_xcc 1\n";
        let props = NodeProperties::parse(text, Path::new("p")).unwrap();
        assert_eq!(props.target().unwrap(), GfxTarget::Gfx94);
        let s = CwsrSizes::for_props(&props).unwrap();
        assert_eq!(s.ctl_stack_size, (1520 * 8 + 48u32).next_multiple_of(4096));
        assert_eq!(
            s.wg_data_size,
            ((0x80000 + 0x4000 + 0x10000 + 0x1000) * 38u32).next_multiple_of(4096)
        );
        assert_eq!(s.debug_memory_size, 1520 * 32);
    }
}
