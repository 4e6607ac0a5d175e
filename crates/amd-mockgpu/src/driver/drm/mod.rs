//! The amdgpu DRM side of the mock's KFD GPUs: each render node's sysfs directory
//! (`/sys/class/drm/renderD<N>/` and its `device/`: PCI ids, `uevent`, memory
//! counters, the IP discovery tree of `amdgpu_discovery.c`) and the render node's
//! ioctls (`DRM_IOCTL_VERSION`, `DRM_IOCTL_AMDGPU_INFO`).
//!
//! Current clients read these before anything else: tinygrad 0.14 takes the GC, SDMA
//! and NBIF versions from `ip_discovery/die/0/<hw_id>/0/{major,minor,revision}`, and
//! libdrm asks the render node for its driver version and device info.

use std::path::{Path, PathBuf};

pub mod abi;
pub(crate) mod ioctl;

pub use ioctl::{AMDGPU_KMS_VERSION, GB_ADDR_CONFIG};

use crate::driver::{Driver, FIRST_RENDER_MINOR};
use crate::pci::discovery::{Discovery, IpBlock};

/// Where the render nodes' sysfs directories are.
pub(crate) const DRM_CLASS: &str = "/sys/class/drm";

/// Where sysfs names character devices by number (`/sys/dev/char/226:128` is a link
/// to render node 128's directory): libdrm checks that a descriptor is a DRM node by
/// `<major>:<minor>/device/drm` there.
pub(crate) const DEV_CHAR: &str = "/sys/dev/char";

/// The character-device major of DRM nodes (`DRM_MAJOR`).
pub const DRM_MAJOR: u32 = 226;

impl Driver {
    /// The render nodes' sysfs node at `path`, with a final link followed (as
    /// `open` and `opendir` follow it).
    pub(crate) fn drm_node(&self, path: &Path) -> Option<SysNode> {
        match self.drm_sysfs(path)? {
            SysNode::Link(t) => self.drm_sysfs(&lexical(&path.parent()?.join(t))),
            n => Some(n),
        }
    }
}

/// One node of a sysfs tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SysNode {
    /// A directory and its entries.
    Dir(Vec<String>),
    /// A file and its text.
    File(Vec<u8>),
    /// A symbolic link and its target (relative, as sysfs writes them).
    Link(PathBuf),
}

/// `hw_id_names[]` of `amdgpu_discovery.c` for the blocks the mock's profiles have:
/// the links `ip_discovery/die/<die>/<NAME>` to `<hw_id>`.
fn hw_id_name(hw_id: u16) -> Option<&'static str> {
    use amd_regs::discovery::hw_id::*;
    Some(match hw_id {
        MP1 => "MP1",
        THM => "THM",
        SMUIO => "SMUIO",
        CLKA => "CLKA",
        GC => "GC",
        VCN => "UVD",
        MMHUB => "MMHUB",
        ATHUB => "ATHUB",
        OSSSYS => "OSSSYS",
        HDP => "HDP",
        SDMA0 => "SDMA0",
        SDMA1 => "SDMA1",
        DF => "DF",
        SDMA2 => "SDMA2",
        SDMA3 => "SDMA3",
        NBIF => "NBIF",
        UMC => "UMC",
        MP0 => "MP0",
        DMU => "DMU",
        _ => return None,
    })
}

/// `path` with its `..` and `.` components resolved as text (sysfs links are
/// relative: `/sys/dev/char/../../class/drm` is `/sys/class/drm`).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

impl Driver {
    /// `/sys/dev/char` below `rel`: the render nodes' numbers, each a link to its
    /// directory; below a link, that directory's nodes.
    fn dev_char(&self, rel: &Path) -> Option<SysNode> {
        let parts: Vec<&str> = rel.iter().map(|p| p.to_str()).collect::<Option<_>>()?;
        let minors = FIRST_RENDER_MINOR..FIRST_RENDER_MINOR + self.gpus.len() as u32;
        let Some((number, rest)) = parts.split_first() else {
            return dir(minors.map(|m| format!("{DRM_MAJOR}:{m}")));
        };
        let (major, minor) = number.split_once(':')?;
        let minor: u32 = minor.parse().ok()?;
        if major.parse::<u32>().ok()? != DRM_MAJOR || !minors.contains(&minor) {
            return None;
        }
        if rest.is_empty() {
            return Some(SysNode::Link(PathBuf::from(format!("../../class/drm/renderD{minor}"))));
        }
        let mut inside = PathBuf::from(DRM_CLASS).join(format!("renderD{minor}"));
        inside.extend(rest);
        self.drm_sysfs(&inside)
    }
}

/// The PCI identity a KFD GPU's `device/` directory shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PciIdentity {
    /// `subsystem_vendor`
    pub subsystem_vendor: u16,
    /// `subsystem_device`
    pub subsystem_device: u16,
    /// `revision`
    pub revision: u8,
    /// `class` (display controller: 0x030000 VGA or 0x038000 other)
    pub class: u32,
}

fn text(s: impl Into<String>) -> Option<SysNode> {
    Some(SysNode::File(s.into().into_bytes()))
}

fn dir<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Option<SysNode> {
    Some(SysNode::Dir(names.into_iter().map(Into::into).collect()))
}

/// The files of `device/` besides `ip_discovery`.
const DEVICE_FILES: &[&str] = &[
    "vendor",
    "device",
    "subsystem_vendor",
    "subsystem_device",
    "revision",
    "class",
    "uevent",
    "numa_node",
    "power_dpm_force_performance_level",
    "mem_info_vram_total",
    "mem_info_vram_used",
    "mem_info_vis_vram_total",
    "mem_info_vis_vram_used",
    "mem_info_gtt_total",
    "mem_info_gtt_used",
];

impl Driver {
    /// The node at `path` under [`DRM_CLASS`], if there is one.
    pub(crate) fn drm_sysfs(&self, path: &Path) -> Option<SysNode> {
        if let Ok(rel) = path.strip_prefix(DEV_CHAR) {
            return self.dev_char(rel);
        }
        let rel = path.strip_prefix(DRM_CLASS).ok()?;
        let parts: Vec<&str> = rel.iter().map(|p| p.to_str()).collect::<Option<_>>()?;
        let Some((node, rest)) = parts.split_first() else {
            return dir((0..self.gpus.len()).map(|i| format!("renderD{}", FIRST_RENDER_MINOR as usize + i)));
        };
        let minor: u32 = node.strip_prefix("renderD")?.parse().ok()?;
        let i = usize::try_from(minor.checked_sub(FIRST_RENDER_MINOR)?).ok()?;
        let gpu = self.gpus.get(i)?;
        let p = &gpu.profile;
        let prop = |k: &str| p.prop(k).unwrap_or(0);
        match rest {
            [] => dir(["dev", "uevent", "device"]),
            ["dev"] => text(format!("{DRM_MAJOR}:{minor}\n")),
            ["uevent"] => text(format!(
                "MAJOR={DRM_MAJOR}\nMINOR={minor}\nDEVNAME=dri/renderD{minor}\nDEVTYPE=drm_minor\n"
            )),
            ["device"] => dir(DEVICE_FILES.iter().copied().chain(["ip_discovery", "drm", "subsystem"])),
            // The device's DRM minors (the render node; the mock has no card node),
            // and its bus, which libdrm takes from the link's last component.
            ["device", "drm"] => dir([format!("renderD{minor}")]),
            ["device", "drm", n] if *n == format!("renderD{minor}") => dir(["dev"]),
            ["device", "drm", n, "dev"] if *n == format!("renderD{minor}") => text(format!("{DRM_MAJOR}:{minor}\n")),
            ["device", "subsystem"] => Some(SysNode::Link(PathBuf::from("../../../../bus/pci"))),
            ["device", f] => {
                let id = p.pci;
                let vis = if p.large_bar { p.vram_size } else { 256 << 20 };
                let vis_used = gpu.vram_used.min(vis);
                match *f {
                    "vendor" => text(format!("{:#06x}\n", prop("vendor_id"))),
                    "device" => text(format!("{:#06x}\n", prop("device_id"))),
                    "subsystem_vendor" => text(format!("{:#06x}\n", id.subsystem_vendor)),
                    "subsystem_device" => text(format!("{:#06x}\n", id.subsystem_device)),
                    "revision" => text(format!("{:#04x}\n", id.revision)),
                    "class" => text(format!("{:#08x}\n", id.class)),
                    "numa_node" => text("-1\n"),
                    "uevent" => text(self.pci_uevent(i)),
                    "power_dpm_force_performance_level" => text("auto\n"),
                    "mem_info_vram_total" => text(format!("{}\n", p.vram_size)),
                    "mem_info_vram_used" => text(format!("{}\n", gpu.vram_used)),
                    "mem_info_vis_vram_total" => text(format!("{vis}\n")),
                    "mem_info_vis_vram_used" => text(format!("{vis_used}\n")),
                    "mem_info_gtt_total" => text(format!("{}\n", p.gtt_size)),
                    "mem_info_gtt_used" => text("0\n"),
                    "ip_discovery" => dir(["die"]),
                    _ => None,
                }
            }
            ["device", "ip_discovery", rest @ ..] => ip_discovery(&p.discovery, rest),
            _ => None,
        }
    }

    /// `uevent` of GPU `i`'s PCI device (`pci_uevent` in `drivers/pci/pci-driver.c`).
    pub(crate) fn pci_uevent(&self, i: usize) -> String {
        let p = &self.gpus[i].profile;
        let prop = |k: &str| p.prop(k).unwrap_or(0);
        let (vendor, device) = (prop("vendor_id"), prop("device_id"));
        let id = p.pci;
        format!(
            "DRIVER=amdgpu\nPCI_CLASS={:X}\nPCI_ID={vendor:04X}:{device:04X}\nPCI_SUBSYS_ID={:04X}:{:04X}\n\
             PCI_SLOT_NAME={}\nMODALIAS=pci:v{vendor:08X}d{device:08X}sv{:08X}sd{:08X}bc{:02X}sc{:02X}i{:02X}\n",
            id.class,
            id.subsystem_vendor,
            id.subsystem_device,
            self.pci_slot_name(i),
            id.subsystem_vendor,
            id.subsystem_device,
            id.class >> 16,
            (id.class >> 8) & 0xff,
            id.class & 0xff,
        )
    }

    /// `domain:bus:device.function` of GPU `i`, from its topology's `domain` and
    /// `location_id` (bus << 8 | devfn), as KFD computes `location_id`.
    pub(crate) fn pci_slot_name(&self, i: usize) -> String {
        let p = &self.gpus[i].profile;
        let loc = p.prop("location_id").unwrap_or(0);
        let domain = p.prop("domain").unwrap_or(0);
        format!(
            "{:04x}:{:02x}:{:02x}.{}",
            domain & 0xffff,
            (loc >> 8) & 0xff,
            (loc >> 3) & 0x1f,
            loc & 7
        )
    }
}

/// `ip_discovery/…` (`amdgpu_discovery_sysfs_recurse`): `die/<die>/` holds `num_ips`,
/// one directory per hardware id with one directory per instance (`hw_id`,
/// `num_instance`, `major`, `minor`, `revision`, `harvest`, `num_base_addresses`,
/// `base_addr`), and a link per named hardware id to its number.
fn ip_discovery(d: &Discovery, rest: &[&str]) -> Option<SysNode> {
    let mut ids: Vec<u16> = d.ips.iter().map(|b| b.hw_id).collect();
    ids.sort_unstable();
    ids.dedup();
    // A path through a named link reads as through its target.
    if let ["die", "0", name, inner @ ..] = rest
        && !inner.is_empty()
        && name.parse::<u16>().is_err()
    {
        let id = ids.iter().find(|&&i| hw_id_name(i) == Some(*name))?.to_string();
        let target: Vec<&str> = ["die", "0", id.as_str()]
            .into_iter()
            .chain(inner.iter().copied())
            .collect();
        return ip_discovery(d, &target);
    }
    let block = |hw: &str, inst: &str| -> Option<&IpBlock> {
        let (hw, inst): (u16, u8) = (hw.parse().ok()?, inst.parse().ok()?);
        d.ips.iter().find(|b| b.hw_id == hw && b.instance == inst)
    };
    match rest {
        [] => dir(["die"]),
        ["die"] => dir(["0"]),
        ["die", "0"] => dir(std::iter::once("num_ips".to_string())
            .chain(ids.iter().map(|i| i.to_string()))
            .chain(ids.iter().filter_map(|&i| hw_id_name(i)).map(String::from))),
        ["die", "0", "num_ips"] => text(format!("{}\n", d.ips.len())),
        ["die", "0", name] if name.parse::<u16>().is_err() => {
            let id = ids.iter().find(|&&i| hw_id_name(i) == Some(*name))?;
            Some(SysNode::Link(PathBuf::from(id.to_string())))
        }
        ["die", "0", hw] => {
            let hw: u16 = hw.parse().ok()?;
            let mut inst: Vec<u8> = d.ips.iter().filter(|b| b.hw_id == hw).map(|b| b.instance).collect();
            if inst.is_empty() {
                return None;
            }
            inst.sort_unstable();
            dir(inst.iter().map(|i| i.to_string()))
        }
        ["die", "0", hw, inst] => {
            block(hw, inst)?;
            dir([
                "hw_id",
                "num_instance",
                "major",
                "minor",
                "revision",
                "harvest",
                "num_base_addresses",
                "base_addr",
            ])
        }
        ["die", "0", hw, inst, f] => {
            let b = block(hw, inst)?;
            let harvested = d.harvest.contains(&(b.hw_id, b.instance));
            match *f {
                "hw_id" => text(format!("{}\n", b.hw_id)),
                "num_instance" => text(format!("{}\n", b.instance)),
                "major" => text(format!("{}\n", b.version.0)),
                "minor" => text(format!("{}\n", b.version.1)),
                "revision" => text(format!("{}\n", b.version.2)),
                "harvest" => text(format!("0x{:01X}\n", u8::from(harvested))),
                "num_base_addresses" => text(format!("{}\n", b.bases.len())),
                "base_addr" => text(b.bases.iter().map(|a| format!("0x{a:08X}\n")).collect::<String>()),
                _ => None,
            }
        }
        _ => None,
    }
}
