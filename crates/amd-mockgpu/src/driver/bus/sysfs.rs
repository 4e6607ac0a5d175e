//! The PCI part of the mock's file namespace: sysfs under `/sys/bus/pci`, the `vfio`
//! module's parameter, `/dev/vfio` and `/proc/self/pagemap`, resolved to [`Node`]s
//! and answered as the kernel answers (pci-sysfs.c, bus.c, dd.c, vfio's group and
//! container files).

use std::path::{Path, PathBuf};

use amd_kfd::sys::OpenMode;
use nix::errno::Errno;

use super::{BAR_DOORBELL, BAR_IO, BAR_MMIO, BAR_VRAM, PCI_DEVICES, PciBus, PciDriver};
use crate::driver::FdKind;

pub(crate) use amd_regs::pci::PAGEMAP;
use amd_regs::pci::{DRIVERS_PROBE, NOIOMMU_PARAM, PCI_DRIVERS as DRIVERS, VFIO_CONTAINER, VFIO_MODULE};

/// The files of a device directory (`driver` and `iommu_group` come and go).
const DEV_FILES: &[&str] = &[
    "vendor",
    "device",
    "class",
    "revision",
    "subsystem_vendor",
    "subsystem_device",
    "config",
    "resource",
    "resource0",
    "resource2",
    "resource4",
    "resource5",
    "resource0_resize",
    "driver_override",
];

/// A PCI path of the mock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    DevicesDir,
    Dev(usize),
    DevFile(usize, String),
    DevDriver(usize),
    DevDriverFile(usize, String),
    DevIommuGroup(usize),
    DriversDir,
    DriverDir(PciDriver),
    DriverFile(PciDriver, String),
    DriversProbe,
    VfioModule,
    NoiommuParam,
    VfioDir,
    VfioContainer,
    VfioGroup(u32),
    Pagemap,
}

fn driver_files(bus: &PciBus, drv: PciDriver) -> Vec<String> {
    let mut v = vec!["bind".to_string(), "unbind".to_string()];
    v.extend(
        bus.devs
            .iter()
            .filter(|d| d.driver == Some(drv))
            .map(|d| d.name.clone()),
    );
    v
}

/// `sysfs_streq`: equal, ignoring one trailing newline on either side.
fn streq(a: &[u8], b: &str) -> bool {
    a.strip_suffix(b"\n").unwrap_or(a) == b.as_bytes()
}

fn text(data: &[u8]) -> Result<&str, Errno> {
    std::str::from_utf8(data).map_err(|_| Errno::EINVAL)
}

impl PciBus {
    /// Resolves `path`; `None` if it is not a PCI path of the mock (or names
    /// something that does not exist now).
    pub(crate) fn node(&self, path: &Path) -> Option<Node> {
        if path == Path::new(PAGEMAP) {
            return Some(Node::Pagemap);
        }
        if self.vfio_loaded {
            if path == Path::new("/dev/vfio") {
                return Some(Node::VfioDir);
            }
            if path == Path::new(VFIO_CONTAINER) {
                return Some(Node::VfioContainer);
            }
            if path == Path::new(VFIO_MODULE) {
                return Some(Node::VfioModule);
            }
            if path == Path::new(NOIOMMU_PARAM) {
                return Some(Node::NoiommuParam);
            }
            if let Some(n) = path.to_str().and_then(|p| p.strip_prefix("/dev/vfio/noiommu-")) {
                let g: u32 = n.parse().ok()?;
                return self.groups.contains_key(&g).then_some(Node::VfioGroup(g));
            }
        }
        if path == Path::new(DRIVERS_PROBE) {
            return Some(Node::DriversProbe);
        }
        if path == Path::new(DRIVERS) {
            return Some(Node::DriversDir);
        }
        if let Ok(rel) = path.strip_prefix(DRIVERS) {
            let mut parts = rel.iter().map(|p| p.to_str());
            let drv = PciDriver::from_name(parts.next()??)?;
            if drv == PciDriver::VfioPci && !self.vfio_loaded {
                return None;
            }
            return match (parts.next(), parts.next()) {
                (None, _) => Some(Node::DriverDir(drv)),
                (Some(Some(f)), None) if driver_files(self, drv).iter().any(|n| n == f) => {
                    Some(Node::DriverFile(drv, f.to_string()))
                }
                _ => None,
            };
        }
        if path == Path::new(PCI_DEVICES) {
            return Some(Node::DevicesDir);
        }
        let rel = path.strip_prefix(PCI_DEVICES).ok()?;
        let mut parts = rel.iter().map(|p| p.to_str());
        let dev = self.dev_by_name(parts.next()??)?;
        let d = &self.devs[dev];
        let node = match parts.next() {
            None => Node::Dev(dev),
            Some(f) => match f? {
                "driver" => match parts.next() {
                    None => Node::DevDriver(dev),
                    Some(f) => {
                        let f = f?;
                        let drv = d.driver?;
                        if !driver_files(self, drv).iter().any(|n| n == f) {
                            return None;
                        }
                        Node::DevDriverFile(dev, f.to_string())
                    }
                },
                "iommu_group" => Node::DevIommuGroup(dev),
                f if DEV_FILES.contains(&f) => Node::DevFile(dev, f.to_string()),
                _ => return None,
            },
        };
        if parts.next().is_some() {
            return None;
        }
        match node {
            Node::DevDriver(_) if d.driver.is_none() => None,
            Node::DevIommuGroup(_) if d.group.is_none() => None,
            n => Some(n),
        }
    }

    /// Whether `path` is one the mock answers for (existing or not): everything
    /// under `/sys/bus/pci`, `/dev/vfio` and `/sys/module/vfio`, and the pagemap.
    pub(crate) fn owns(path: &Path) -> bool {
        path.starts_with("/sys/bus/pci")
            || path.starts_with("/dev/vfio")
            || path.starts_with(VFIO_MODULE)
            || path == Path::new(PAGEMAP)
    }

    pub(crate) fn list_dir(&self, path: &Path) -> Result<Vec<String>, Errno> {
        match self.node(path).ok_or(Errno::ENOENT)? {
            Node::DevicesDir => Ok(self.devs.iter().map(|d| d.name.clone()).collect()),
            Node::Dev(i) => {
                let d = &self.devs[i];
                let mut v: Vec<String> = DEV_FILES.iter().map(|s| s.to_string()).collect();
                if d.driver.is_some() {
                    v.push("driver".into());
                }
                if d.group.is_some() {
                    v.push("iommu_group".into());
                }
                Ok(v)
            }
            Node::DevDriver(i) => Ok(driver_files(self, self.devs[i].driver.ok_or(Errno::ENOENT)?)),
            Node::DriverDir(drv) => Ok(driver_files(self, drv)),
            Node::DriversDir => {
                let mut v = vec!["amdgpu".to_string()];
                if self.vfio_loaded {
                    v.push("vfio-pci".into());
                }
                Ok(v)
            }
            Node::VfioModule => Ok(vec!["parameters".into()]),
            Node::VfioDir => {
                let mut v = vec!["vfio".to_string()];
                v.extend(self.groups.keys().map(|g| format!("noiommu-{g}")));
                Ok(v)
            }
            _ => Err(Errno::ENOTDIR),
        }
    }

    pub(crate) fn readlink(&self, path: &Path) -> Result<PathBuf, Errno> {
        match self.node(path).ok_or(Errno::ENOENT)? {
            Node::Dev(i) => Ok(PathBuf::from(format!(
                "../../../devices/pci0000:00/0000:00:01.1/{}",
                self.devs[i].name
            ))),
            Node::DevDriver(i) => {
                let drv = self.devs[i].driver.ok_or(Errno::ENOENT)?;
                Ok(PathBuf::from(format!("../../../bus/pci/drivers/{}", drv.name())))
            }
            Node::DevIommuGroup(i) => {
                let g = self.devs[i].group.ok_or(Errno::ENOENT)?;
                Ok(PathBuf::from(format!("../../../kernel/iommu_groups/{g}")))
            }
            _ => Err(Errno::EINVAL),
        }
    }

    /// The `resource` file: start, end and flags of each of the 13 resources.
    fn resource_text(&self, i: usize) -> String {
        let d = &self.devs[i];
        let mut s = String::new();
        let mut line = |start: u64, size: u64, flags: u64| {
            let (start, end) = if size == 0 { (0, 0) } else { (start, start + size - 1) };
            s.push_str(&format!("0x{start:016x} 0x{end:016x} 0x{flags:016x}\n"));
        };
        // IORESOURCE_MEM | PREFETCH | MEM_64 | SIZEALIGN, with the BAR's type bits.
        const MEM64_PREF: u64 = 0x0014_220c;
        line(d.bar_phys[BAR_VRAM], d.bar_size(BAR_VRAM), MEM64_PREF);
        line(0, 0, 0);
        line(d.bar_phys[BAR_DOORBELL], d.bar_size(BAR_DOORBELL), MEM64_PREF);
        line(0, 0, 0);
        line(d.bar_phys[BAR_IO], d.bar_size(BAR_IO), 0x0004_0101);
        line(d.bar_phys[BAR_MMIO], d.bar_size(BAR_MMIO), 0x0004_0200);
        line(d.bar_phys[BAR_MMIO] + d.bar_size(BAR_MMIO), 128 << 10, 0x0004_6200);
        for _ in 0..6 {
            line(0, 0, 0);
        }
        s
    }

    pub(crate) fn read_file(&self, path: &Path) -> Result<Vec<u8>, Errno> {
        let node = self.node(path).ok_or(Errno::ENOENT)?;
        let (i, f) = match node {
            Node::DevFile(i, f) => (i, f),
            Node::NoiommuParam => return Ok(if self.noiommu { b"Y\n".to_vec() } else { b"N\n".to_vec() }),
            Node::DriverFile(..) | Node::DevDriverFile(..) | Node::DriversProbe => return Err(Errno::EIO),
            Node::Pagemap | Node::VfioContainer | Node::VfioGroup(_) => return Err(Errno::EINVAL),
            _ => return Err(Errno::EISDIR),
        };
        let d = &self.devs[i];
        let p = &d.profile;
        let s = match f.as_str() {
            "vendor" => format!("0x{:04x}\n", p.vendor),
            "device" => format!("0x{:04x}\n", p.device),
            "class" => format!("0x{:06x}\n", p.class),
            "revision" => format!("0x{:02x}\n", p.revision),
            "subsystem_vendor" => format!("0x{:04x}\n", p.subsystem_vendor),
            "subsystem_device" => format!("0x{:04x}\n", p.subsystem_device),
            "resource" => self.resource_text(i),
            "resource0_resize" => format!("{:016x}\n", p.bar0_resize_sizes),
            "driver_override" => format!("{}\n", d.driver_override.as_deref().unwrap_or("(null)")),
            "config" => return Ok(d.config_bytes()),
            // BAR files are mapped, not read.
            _ => return Err(Errno::EINVAL),
        };
        Ok(s.into_bytes())
    }

    pub(crate) fn write_file(&mut self, path: &Path, data: &[u8]) -> Result<(), Errno> {
        match self.node(path).ok_or(Errno::ENOENT)? {
            Node::DevDriverFile(i, f) => {
                let drv = self.devs[i].driver.ok_or(Errno::ENODEV)?;
                self.driver_file(drv, &f, data)
            }
            Node::DriverFile(drv, f) => self.driver_file(drv, &f, data),
            Node::DriversProbe => {
                let i = self
                    .devs
                    .iter()
                    .position(|d| streq(data, &d.name))
                    .ok_or(Errno::EINVAL)?;
                self.probe(i);
                Ok(())
            }
            Node::NoiommuParam => {
                // kstrtobool
                self.noiommu = match data.first() {
                    Some(b'1' | b'y' | b'Y') => true,
                    Some(b'0' | b'n' | b'N') => false,
                    _ => return Err(Errno::EINVAL),
                };
                Ok(())
            }
            Node::DevFile(i, f) => match f.as_str() {
                "driver_override" => {
                    // driver_set_override: at most a page; one trailing newline
                    // dropped; empty clears.
                    if data.len() >= super::PAGE {
                        return Err(Errno::EINVAL);
                    }
                    let s = text(data)?;
                    let s = s.strip_suffix('\n').unwrap_or(s);
                    self.devs[i].driver_override = (!s.is_empty()).then(|| s.to_string());
                    Ok(())
                }
                "resource0_resize" => {
                    let s = text(data)?.trim();
                    let n: u64 = if let Some(h) = s.strip_prefix("0x") {
                        u64::from_str_radix(h, 16)
                    } else {
                        s.parse()
                    }
                    .map_err(|_| Errno::EINVAL)?;
                    let d = &mut self.devs[i];
                    if n >= 64 || d.profile.bar0_resize_sizes & (1 << n) == 0 {
                        return Err(Errno::EINVAL);
                    }
                    if d.driver.is_some() {
                        return Err(Errno::EBUSY);
                    }
                    let size = (1u64 << 20).checked_shl(n as u32).ok_or(Errno::EINVAL)?;
                    if size > d.bar0_size && size > d.profile.vram_size {
                        d.vram.set_len(size).map_err(|_| Errno::ENOMEM)?;
                    }
                    d.bar0_size = size;
                    Ok(())
                }
                "config" => {
                    self.devs[i].config_write(0, data);
                    Ok(())
                }
                _ => Err(Errno::EACCES),
            },
            _ => Err(Errno::EACCES),
        }
    }

    fn driver_file(&mut self, drv: PciDriver, f: &str, data: &[u8]) -> Result<(), Errno> {
        let i = self
            .devs
            .iter()
            .position(|d| streq(data, &d.name))
            .ok_or(Errno::ENODEV)?;
        match f {
            "unbind" => {
                if self.devs[i].driver != Some(drv) {
                    return Err(Errno::ENODEV);
                }
                self.unbind(i)
            }
            "bind" => self.bind(i, drv),
            _ => Err(Errno::EACCES),
        }
    }

    /// What opening `path` gives, for the PCI paths that open.
    pub(crate) fn open(&mut self, path: &Path, mode: OpenMode) -> Result<FdKind, Errno> {
        let writable = mode == OpenMode::ReadWrite;
        match self.node(path).ok_or(Errno::ENOENT)? {
            Node::Pagemap if writable => Err(Errno::EACCES),
            Node::Pagemap => Ok(FdKind::Pagemap),
            Node::DevFile(i, f) => match f.as_str() {
                "config" => Ok(FdKind::PciConfig { dev: i, writable }),
                "resource0" => Ok(FdKind::PciBar {
                    dev: i,
                    bar: BAR_VRAM,
                    writable,
                }),
                "resource2" => Ok(FdKind::PciBar {
                    dev: i,
                    bar: BAR_DOORBELL,
                    writable,
                }),
                "resource5" => Ok(FdKind::PciBar {
                    dev: i,
                    bar: BAR_MMIO,
                    writable,
                }),
                // Attributes are read and written whole (`read_file`/`write_file`).
                _ => Err(Errno::ENOENT),
            },
            Node::VfioContainer => {
                let id = self.next_container;
                self.next_container = self.next_container.checked_add(1).ok_or(Errno::EMFILE)?;
                self.containers.insert(id, Default::default());
                Ok(FdKind::VfioContainer(id))
            }
            Node::VfioGroup(g) => {
                let s = self.groups.get_mut(&g).ok_or(Errno::ENOENT)?;
                if s.open {
                    return Err(Errno::EBUSY);
                }
                s.open = true;
                Ok(FdKind::VfioGroup(g))
            }
            _ => Err(Errno::ENOENT),
        }
    }
}
