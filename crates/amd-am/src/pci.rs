//! Finding and taking the GPU, as tinygrad 0.10.1's `PCIIface` does, through [`Sys`]
//! only.
//!
//! 1. [`PciBus::scan`] lists `/sys/bus/pci/devices`, keeps vendor 0x1002 with a device
//!    id of [`SUPPORTED_DEVICES`] (tinygrad 0.10.1 accepts only the Radeon RX 7900 XTX,
//!    0x744c; the transport also takes the RX 9070 XT, 0x7550), in bus order, then applies `VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES`.
//! 2. [`PciBus::open`] takes one: unbinds it from its driver (`driver/unbind`),
//!    resizes BAR 0 to the largest size `resource0_resize` offers, then, where VFIO is
//!    wanted and `/dev/vfio/vfio` exists, turns on no-IOMMU mode, binds the device to
//!    vfio-pci (`driver_override`, `drivers_probe`), joins its group to the container
//!    and routes MSI to an eventfd; if that setup fails before the group is opened it
//!    goes on without VFIO, as tinygrad does, and says why
//!    ([`PciDevice::vfio_fallback`]). It maps BARs 0 (VRAM), 2 (doorbells) and 5
//!    (registers) through the sysfs `resourceN` files (in both modes, as tinygrad
//!    does), opens `/proc/self/pagemap`, and turns on memory decoding and bus
//!    mastering in the command register.
//!
//! Every sysfs value is parsed strictly, with checked arithmetic; a missing or
//! malformed file is an error naming it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use amd_kfd::mmio::Mmio;
use amd_kfd::sys::{Fd, OpenMode, PollFd, Sys, SysError};
use amd_kfd::topology::Visibility;

use crate::error::{AmError, Result};
use crate::os::{BarMapping, vfio_buf, vfio_value};
use crate::vfio::{
    VFIO_DEVICE_SET_IRQS, VFIO_GROUP_GET_DEVICE_FD, VFIO_GROUP_SET_CONTAINER, VFIO_NOIOMMU_IOMMU,
    VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_MSI_IRQ_INDEX, VFIO_SET_IOMMU, vfio_irq_set, vfio_pci_index_to_offset,
};

/// The sysfs and VFIO paths, the BARs and the configuration-space registers the
/// transport uses, defined with the hardware's other layouts (the mock GPU serves the
/// same ones).
pub use amd_regs::pci::{
    AMD_VENDOR, BAR_DOORBELL, BAR_MMIO, BAR_VRAM, DRIVERS_PROBE, NOIOMMU_PARAM, PAGEMAP, PCI_COMMAND, PCI_COMMAND_IO,
    PCI_COMMAND_MASTER, PCI_COMMAND_MEMORY, PCI_DEVICES, VFIO_CONTAINER,
};
/// The PCI device ids the driverless transport drives, with their names: tinygrad
/// 0.10.1's `PCIIface` accepts the first; the second is a gfx1201 (GC 12.0.1), one of
/// the ids tinygrad 0.14 accepts.
pub const SUPPORTED_DEVICES: &[(u16, &str)] = &[
    (0x744c, "Radeon RX 7900 XTX (Navi 31)"),
    (0x7550, "Radeon RX 9070 XT (Navi 48)"),
];

/// The BAR 0 size index tinygrad 0.10.1 writes to `resource0_resize` (32 GiB); the
/// transport writes the largest index the file offers, which is this one on a
/// 7900 XTX.
pub const TINYGRAD_BAR0_RESIZE_INDEX: u32 = 15;

/// How to take GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciOptions {
    /// Which GPUs are visible, and in what order.
    pub visibility: Visibility,
    /// Use VFIO where `/dev/vfio/vfio` exists (tinygrad's `VFIO`, default on).
    pub vfio: bool,
}

impl Default for PciOptions {
    fn default() -> Self {
        PciOptions {
            visibility: Visibility::all(),
            vfio: true,
        }
    }
}

impl PciOptions {
    /// From the process environment: `VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES`, and
    /// `VFIO=0` to do without VFIO.
    pub fn from_env() -> Self {
        Self::from_lookup(|v| std::env::var(v).ok())
    }

    /// From the variables `lookup` returns.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let vfio = lookup("VFIO").is_none_or(|v| v.trim() != "0");
        PciOptions {
            visibility: Visibility::from_lookup(&lookup),
            vfio,
        }
    }
}

/// A PCI address, `domain:bus:device.function` (`0000:03:00.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciAddress {
    /// Domain.
    pub domain: u16,
    /// Bus.
    pub bus: u8,
    /// Device (0..32).
    pub device: u8,
    /// Function (0..8).
    pub function: u8,
}

impl PciAddress {
    /// Parses the kernel's spelling (`%04x:%02x:%02x.%d`, lower-case hex); `None` for
    /// anything else.
    pub fn parse(s: &str) -> Option<Self> {
        let (domain, rest) = s.split_once(':')?;
        let (bus, rest) = rest.split_once(':')?;
        let (device, function) = rest.split_once('.')?;
        let hex = |t: &str, n: usize| {
            (t.len() == n && t.bytes().all(|b| b.is_ascii_hexdigit())).then(|| u32::from_str_radix(t, 16).ok())?
        };
        let device = u8::try_from(hex(device, 2)?).ok().filter(|d| *d < 32)?;
        let function = (function.len() == 1).then(|| function.parse::<u8>().ok())??;
        (function < 8).then_some(())?;
        Some(PciAddress {
            domain: u16::try_from(hex(domain, 4)?).ok()?,
            bus: u8::try_from(hex(bus, 2)?).ok()?,
            device,
            function,
        })
    }

    /// The device's sysfs directory.
    pub fn sysfs(&self) -> PathBuf {
        Path::new(PCI_DEVICES).join(self.to_string())
    }
}

impl std::fmt::Display for PciAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

/// One BAR as the kernel's `resource` file lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BarInfo {
    /// Bus (physical) address of the start.
    pub start: u64,
    /// Size in bytes (0: no BAR).
    pub size: u64,
    /// The resource flags (`IORESOURCE_*`).
    pub flags: u64,
}

/// A supported GPU found on the bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciGpu {
    /// Its address.
    pub address: PciAddress,
    /// Its PCI device id.
    pub device_id: u16,
}

fn sysfs_err(path: &Path, msg: impl Into<String>) -> AmError {
    AmError::Sysfs {
        path: path.to_path_buf(),
        msg: msg.into(),
    }
}

/// Reads a sysfs attribute as text.
pub fn read_text(sys: &dyn Sys, path: &Path) -> Result<String> {
    let bytes = sys.read_file(path)?;
    String::from_utf8(bytes).map_err(|_| sysfs_err(path, "not UTF-8 text"))
}

fn hex_digits(t: &str) -> Option<&str> {
    let t = t.strip_prefix("0x").unwrap_or(t);
    (!t.is_empty() && t.bytes().all(|b| b.is_ascii_hexdigit())).then_some(t)
}

/// Parses an id attribute (`vendor`, `device`: `0x1002\n`).
pub fn parse_id(text: &str, path: &Path) -> Result<u16> {
    hex_digits(text.trim())
        .and_then(|h| u16::from_str_radix(h, 16).ok())
        .ok_or_else(|| sysfs_err(path, format!("{:?} is not a 16-bit hexadecimal id", text.trim())))
}

/// Parses the kernel's `resource` file: one line per resource, `start end flags` in
/// `0x%016llx`; the size of a BAR is `end - start + 1`, 0 where `end` is 0.
pub fn parse_resource_table(text: &str, path: &Path) -> Result<Vec<BarInfo>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let err = |msg: &str| sysfs_err(path, format!("line {}: {msg}: {line:?}", i + 1));
        let v: Vec<u64> = line
            .split_whitespace()
            .map(|w| {
                w.strip_prefix("0x")
                    .and_then(hex_digits)
                    .and_then(|h| u64::from_str_radix(h, 16).ok())
            })
            .collect::<Option<_>>()
            .ok_or_else(|| err("not three 0x-prefixed 64-bit numbers"))?;
        let [start, end, flags] = v[..] else {
            return Err(err("not three numbers"));
        };
        let size = if end == 0 && start == 0 {
            0
        } else {
            end.checked_sub(start)
                .ok_or_else(|| err("end before start"))?
                .checked_add(1)
                .ok_or_else(|| err("size overflows 64 bits"))?
        };
        out.push(BarInfo { start, size, flags });
    }
    if out.len() <= BAR_MMIO {
        return Err(sysfs_err(
            path,
            format!("{} lines: BARs 0 to 5 need at least 6", out.len()),
        ));
    }
    Ok(out)
}

/// Parses `resource0_resize`: a hexadecimal bit mask of the sizes BAR 0 can take
/// (bit n: 2^n MiB).
pub fn parse_resize_mask(text: &str, path: &Path) -> Result<u64> {
    hex_digits(text.trim())
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .ok_or_else(|| sysfs_err(path, format!("{:?} is not a hexadecimal size mask", text.trim())))
}

/// The largest BAR size `mask` offers: (index to write, size in bytes); `None` if it
/// offers none that fits in 64 bits.
pub fn largest_resize(mask: u64) -> Option<(u32, u64)> {
    // Bit n is 2^(n + 20) bytes: n = 43 is the largest that fits.
    (0..44u32)
        .rev()
        .find(|n| mask & (1 << n) != 0)
        .map(|n| (n, 1u64 << (n + 20)))
}

/// The supported GPUs on the bus, in bus order (before visibility).
pub fn scan(sys: &dyn Sys) -> Result<Vec<PciGpu>> {
    let dir = Path::new(PCI_DEVICES);
    let mut out = Vec::new();
    for name in sys.list_dir(dir)? {
        let Some(address) = PciAddress::parse(&name) else {
            continue;
        };
        let base = dir.join(&name);
        let vp = base.join("vendor");
        if parse_id(&read_text(sys, &vp)?, &vp)? != AMD_VENDOR {
            continue;
        }
        let dp = base.join("device");
        let device_id = parse_id(&read_text(sys, &dp)?, &dp)?;
        if SUPPORTED_DEVICES.iter().any(|(id, _)| *id == device_id) {
            out.push(PciGpu { address, device_id });
        }
    }
    out.sort_by_key(|g| g.address);
    Ok(out)
}

/// The VFIO container every device of a [`PciBus`] joins.
#[derive(Debug)]
struct Container {
    sys: Arc<dyn Sys>,
    fd: Fd,
    iommu_set: bool,
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = self.sys.close(self.fd);
    }
}

/// The supported GPUs of a machine, and the state taking them shares (the VFIO
/// container, whether VFIO works).
pub struct PciBus {
    sys: Arc<dyn Sys>,
    gpus: Vec<PciGpu>,
    want_vfio: bool,
    container: Option<Container>,
    vfio_off: Option<String>,
}

impl std::fmt::Debug for PciBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PciBus")
            .field("gpus", &self.gpus)
            .field("vfio", &self.container.is_some())
            .field("vfio_off", &self.vfio_off)
            .finish()
    }
}

/// Closes descriptors when dropped, unless taken.
struct Fds<'a> {
    sys: &'a dyn Sys,
    fds: Vec<Fd>,
}

impl Drop for Fds<'_> {
    fn drop(&mut self) {
        for fd in self.fds.drain(..).rev() {
            let _ = self.sys.close(fd);
        }
    }
}

impl PciBus {
    /// Scans the bus and applies `opts.visibility`.
    pub fn scan(sys: Arc<dyn Sys>, opts: &PciOptions) -> Result<Self> {
        let all = scan(&*sys)?;
        let gpus = opts.visibility.select(&all).map_err(AmError::Visibility)?;
        Ok(PciBus {
            sys,
            gpus,
            want_vfio: opts.vfio,
            container: None,
            vfio_off: None,
        })
    }

    /// The visible GPUs, in order.
    pub fn gpus(&self) -> &[PciGpu] {
        &self.gpus
    }

    /// Why VFIO is not used, once a device was opened without it.
    pub fn vfio_off(&self) -> Option<&str> {
        self.vfio_off.as_deref()
    }

    /// Takes visible GPU `index` (see the module doc for the steps).
    pub fn open(&mut self, index: usize) -> Result<PciDevice> {
        let gpu = self.gpus.get(index).cloned().ok_or(AmError::NoDevice {
            index,
            available: self.gpus.len(),
        })?;
        let sys = self.sys.clone();
        let addr = gpu.address;
        let name = addr.to_string();
        let dir = addr.sysfs();
        let take = |step: &'static str, e: &dyn std::fmt::Display| AmError::Take {
            device: name.clone(),
            step,
            msg: e.to_string(),
        };

        // Unbind from the kernel driver (amdgpu, or vfio-pci from an earlier run).
        let driver = dir.join("driver");
        if sys.exists(&driver) {
            let drv = sys
                .readlink(&driver)
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "its driver".into());
            sys.write_file(&driver.join("unbind"), name.as_bytes())
                .map_err(|e| AmError::Take {
                    device: name.clone(),
                    step: "unbind",
                    msg: format!("from {drv}: {e}"),
                })?;
        }

        // Resize BAR 0 to the largest size offered, if larger than now.
        let resource = dir.join("resource");
        let mut bars = parse_resource_table(&read_text(&*sys, &resource)?, &resource)?;
        let resize = dir.join("resource0_resize");
        if sys.exists(&resize)
            && let Some((n, size)) = largest_resize(parse_resize_mask(&read_text(&*sys, &resize)?, &resize)?)
            && size > bars[BAR_VRAM].size
        {
            sys.write_file(&resize, n.to_string().as_bytes())
                .map_err(|e| take("resize BAR 0", &e))?;
            bars = parse_resource_table(&read_text(&*sys, &resource)?, &resource)?;
        }

        // VFIO, or plain sysfs.
        let mut fds = Fds {
            sys: &*sys,
            fds: Vec::new(),
        };
        let mut vfio = None;
        let mut vfio_fallback = None;
        if self.want_vfio && self.vfio_off.is_none() && sys.exists(Path::new(VFIO_CONTAINER)) {
            match self.bind_vfio(&name, &dir) {
                Ok(group) => vfio = Some(self.attach_vfio(&name, group, &mut fds)?),
                Err(why) => {
                    self.vfio_off = Some(why.clone());
                    vfio_fallback = Some(why);
                }
            }
        } else if let Some(why) = &self.vfio_off {
            vfio_fallback = Some(why.clone());
        }

        let pagemap = sys.open(Path::new(PAGEMAP), OpenMode::ReadOnly)?;
        fds.fds.push(pagemap);

        let mut maps = Vec::new();
        for bar in [BAR_VRAM, BAR_DOORBELL, BAR_MMIO] {
            let info = bars[bar];
            let path = dir.join(format!("resource{bar}"));
            let len = usize::try_from(info.size)
                .ok()
                .filter(|&l| l > 0)
                .ok_or_else(|| sysfs_err(&resource, format!("BAR {bar} has size {:#x}", info.size)))?;
            let fd = sys.open(&path, OpenMode::ReadWrite)?;
            fds.fds.push(fd);
            let m = BarMapping::map(&sys, fd, len, 0, &path).map_err(|e| AmError::Take {
                device: name.clone(),
                step: match bar {
                    BAR_VRAM => "map BAR 0 (VRAM)",
                    BAR_DOORBELL => "map BAR 2 (doorbells)",
                    _ => "map BAR 5 (registers)",
                },
                msg: e.to_string(),
            })?;
            maps.push(Arc::new(m));
        }
        let [vram, doorbells, mmio_bar] = <[Arc<BarMapping>; 3]>::try_from(maps).map_err(|_| AmError::Take {
            device: name.clone(),
            step: "map BARs",
            msg: "three BARs expected".into(),
        })?;
        let registers = mmio_bar.registers();

        // Memory decoding and bus mastering (libpciaccess's `pci_device_enable` and
        // tinygrad's PCI_COMMAND_MASTER write).
        let (cfg_fd, cfg_off, cfg_path) = match &vfio {
            Some(v) => (
                v.device,
                vfio_pci_index_to_offset(VFIO_PCI_CONFIG_REGION_INDEX),
                PathBuf::from(format!("VFIO device {name} config region")),
            ),
            None => {
                let p = dir.join("config");
                let fd = sys.open(&p, OpenMode::ReadWrite)?;
                fds.fds.push(fd);
                (fd, 0, p)
            }
        };
        let mut cmd = [0u8; 2];
        let n = sys
            .pread(cfg_fd, &mut cmd, cfg_off + PCI_COMMAND as u64)
            .map_err(|e| SysError {
                path: Some(cfg_path.clone()),
                ..e
            })?;
        if n != 2 {
            return Err(sysfs_err(&cfg_path, "short read of the command register"));
        }
        let enable = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | if vfio.is_none() { PCI_COMMAND_IO } else { 0 };
        let new = u16::from_le_bytes(cmd) | enable;
        sys.pwrite(cfg_fd, &new.to_le_bytes(), cfg_off + PCI_COMMAND as u64)
            .map_err(|e| take("enable bus mastering", &e))?;
        if vfio.is_none() {
            // The sysfs config descriptor is not needed any more.
            if let Some(fd) = fds.fds.pop() {
                let _ = sys.close(fd);
            }
        }

        let owned = std::mem::take(&mut fds.fds);
        drop(fds);
        Ok(PciDevice {
            sys: sys.clone(),
            gpu,
            bars,
            vram,
            doorbells,
            registers,
            mmio_bar,
            pagemap,
            vfio,
            vfio_fallback,
            fds: owned,
        })
    }

    /// Binds the device to vfio-pci in no-IOMMU mode and opens the container the first
    /// time; the IOMMU group number. An error here means "no VFIO" (a reason).
    fn bind_vfio(&mut self, name: &str, dir: &Path) -> std::result::Result<u32, String> {
        let sys = self.sys.clone();
        let s = |e: SysError| e.to_string();
        if self.container.is_none() {
            sys.write_file(Path::new(NOIOMMU_PARAM), b"1").map_err(s)?;
            let fd = sys.open(Path::new(VFIO_CONTAINER), OpenMode::ReadWrite).map_err(s)?;
            let c = Container {
                sys: sys.clone(),
                fd,
                iommu_set: false,
            };
            let ok = vfio_value(
                &*sys,
                fd,
                crate::vfio::VFIO_CHECK_EXTENSION,
                "VFIO_CHECK_EXTENSION",
                VFIO_NOIOMMU_IOMMU,
            )
            .map_err(s)?;
            if ok <= 0 {
                return Err(format!("{VFIO_CONTAINER}: no-IOMMU mode is not supported"));
            }
            self.container = Some(c);
        }
        sys.write_file(&dir.join("driver_override"), b"vfio-pci").map_err(s)?;
        sys.write_file(Path::new(DRIVERS_PROBE), name.as_bytes()).map_err(s)?;
        let group_link = dir.join("iommu_group");
        let group = sys
            .readlink(&group_link)
            .map_err(|e| format!("{e} (vfio-pci did not take the device: is the vfio-pci module loaded?)"))?;
        group
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse::<u32>().ok())
            .ok_or_else(|| format!("{}: {} is not an IOMMU group", group_link.display(), group.display()))
    }

    /// Opens the group and the device and routes MSI to an eventfd.
    fn attach_vfio(&mut self, name: &str, group: u32, fds: &mut Fds<'_>) -> Result<VfioDevice> {
        let sys = self.sys.clone();
        let take = |step: &'static str, e: SysError| AmError::Take {
            device: name.to_string(),
            step,
            msg: e.to_string(),
        };
        let container = self.container.as_mut().ok_or_else(|| AmError::Take {
            device: name.to_string(),
            step: "VFIO",
            msg: "no container".into(),
        })?;
        let gpath = PathBuf::from(format!("/dev/vfio/noiommu-{group}"));
        let gfd = sys.open(&gpath, OpenMode::ReadWrite)?;
        fds.fds.push(gfd);
        vfio_buf(
            &*sys,
            gfd,
            VFIO_GROUP_SET_CONTAINER,
            "VFIO_GROUP_SET_CONTAINER",
            &mut container.fd.0.to_ne_bytes(),
        )
        .map_err(|e| take("VFIO_GROUP_SET_CONTAINER", e))?;
        if !container.iommu_set {
            vfio_value(
                &*sys,
                container.fd,
                VFIO_SET_IOMMU,
                "VFIO_SET_IOMMU",
                VFIO_NOIOMMU_IOMMU,
            )
            .map_err(|e| take("VFIO_SET_IOMMU", e))?;
            container.iommu_set = true;
        }
        let mut cname = name.as_bytes().to_vec();
        cname.push(0);
        let dev = vfio_buf(
            &*sys,
            gfd,
            VFIO_GROUP_GET_DEVICE_FD,
            "VFIO_GROUP_GET_DEVICE_FD",
            &mut cname,
        )
        .map_err(|e| take("VFIO_GROUP_GET_DEVICE_FD", e))?;
        let device = Fd(dev);
        fds.fds.push(device);
        let irq = sys.eventfd(0)?;
        fds.fds.push(irq);
        let mut set = vfio_irq_set::trigger_eventfd(VFIO_PCI_MSI_IRQ_INDEX, irq.0);
        vfio_buf(&*sys, device, VFIO_DEVICE_SET_IRQS, "VFIO_DEVICE_SET_IRQS", &mut set)
            .map_err(|e| take("VFIO_DEVICE_SET_IRQS (MSI)", e))?;
        Ok(VfioDevice {
            group: gfd,
            device,
            irq,
            group_id: group,
        })
    }
}

/// The VFIO side of a taken device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VfioDevice {
    /// `/dev/vfio/noiommu-N`.
    pub group: Fd,
    /// The device descriptor.
    pub device: Fd,
    /// The eventfd MSI signals.
    pub irq: Fd,
    /// The IOMMU group number.
    pub group_id: u32,
}

/// A GPU taken from the kernel: its BARs mapped, VFIO or not. Dropping it unmaps
/// the BARs and closes its descriptors (the device stays unbound from amdgpu).
pub struct PciDevice {
    sys: Arc<dyn Sys>,
    gpu: PciGpu,
    bars: Vec<BarInfo>,
    vram: Arc<BarMapping>,
    doorbells: Arc<BarMapping>,
    registers: Arc<dyn Mmio>,
    mmio_bar: Arc<BarMapping>,
    pagemap: Fd,
    vfio: Option<VfioDevice>,
    vfio_fallback: Option<String>,
    fds: Vec<Fd>,
}

impl std::fmt::Debug for PciDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PciDevice")
            .field("gpu", &self.gpu)
            .field("vram", &self.vram)
            .field("doorbells", &self.doorbells)
            .field("mmio", &self.mmio_bar)
            .field("vfio", &self.vfio)
            .field("vfio_fallback", &self.vfio_fallback)
            .finish()
    }
}

impl PciDevice {
    /// The system interface the device was taken through.
    pub fn sys(&self) -> &Arc<dyn Sys> {
        &self.sys
    }

    /// Which GPU.
    pub fn gpu(&self) -> &PciGpu {
        &self.gpu
    }

    /// Its address.
    pub fn address(&self) -> PciAddress {
        self.gpu.address
    }

    /// BAR `i` as the `resource` file listed it after the resize.
    pub fn bar(&self, i: usize) -> Option<BarInfo> {
        self.bars.get(i).copied()
    }

    /// BAR 0 (VRAM, as much as the BAR shows), mapped.
    pub fn vram(&self) -> &BarMapping {
        &self.vram
    }

    /// BAR 2 (doorbells), mapped.
    pub fn doorbells(&self) -> &BarMapping {
        &self.doorbells
    }

    /// Rings doorbell `index` (a 64-bit slot of BAR 2, e.g.
    /// `AMDGPU_NAVI10_DOORBELL_MEC_RING0`) with `wptr`, the ring's new write pointer,
    /// as tinygrad 0.10.1's `AMDQueueDesc.doorbell[0] = wptr` does. A slot outside
    /// BAR 2 is [`AmError::DoorbellSlot`].
    pub fn ring_doorbell(&self, index: u32, wptr: u64) -> Result<()> {
        let off = u64::from(index) * 8;
        // Release: the packets (and the write pointer in memory) written before this
        // call are visible to the engine before the doorbell.
        if !self.doorbells.store_u64(off, wptr, Ordering::Release) {
            return Err(AmError::DoorbellSlot {
                index,
                bar_size: self.doorbells.len() as u64,
            });
        }
        self.sys.doorbell_written(self.doorbells.addr() + off as usize);
        Ok(())
    }

    /// The registers of BAR 5 (the mock's model, or volatile access on hardware).
    pub fn registers(&self) -> Arc<dyn Mmio> {
        self.registers.clone()
    }

    /// `/proc/self/pagemap`, open for reading.
    pub fn pagemap(&self) -> Fd {
        self.pagemap
    }

    /// The VFIO descriptors, when the device is driven through VFIO.
    pub fn vfio(&self) -> Option<&VfioDevice> {
        self.vfio.as_ref()
    }

    /// Why VFIO was wanted but not used, if so.
    pub fn vfio_fallback(&self) -> Option<&str> {
        self.vfio_fallback.as_deref()
    }

    /// Waits up to `timeout_ms` (negative: forever) for the MSI eventfd and consumes
    /// its count: how many interrupts arrived (0 on timeout, and always 0 without
    /// VFIO, where there is no interrupt: the caller polls).
    pub fn wait_interrupt(&self, timeout_ms: i32) -> Result<u64> {
        let Some(v) = &self.vfio else { return Ok(0) };
        let mut p = [PollFd {
            fd: v.irq,
            readable: true,
            ready: false,
        }];
        if self.sys.poll(&mut p, timeout_ms)? == 0 {
            return Ok(0);
        }
        let mut n = [0u8; 8];
        // Non-blocking: another waiter may have taken the count since the poll.
        let got = match self.sys.read(v.irq, &mut n) {
            Err(e) if e.errno == nix::errno::Errno::EAGAIN => return Ok(0),
            r => r?,
        };
        if got != 8 {
            return Err(AmError::Take {
                device: self.gpu.address.to_string(),
                step: "read the MSI eventfd",
                msg: format!("{got} bytes instead of 8"),
            });
        }
        Ok(u64::from_ne_bytes(n))
    }
}

impl Drop for PciDevice {
    fn drop(&mut self) {
        for fd in self.fds.drain(..).rev() {
            let _ = self.sys.close(fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_strictly() {
        let a = PciAddress::parse("0000:03:00.0").unwrap();
        assert_eq!((a.domain, a.bus, a.device, a.function), (0, 3, 0, 0));
        assert_eq!(a.to_string(), "0000:03:00.0");
        assert_eq!(PciAddress::parse("10de:ff:1f.7").unwrap().to_string(), "10de:ff:1f.7");
        for bad in [
            "",
            "0000:03:00",
            "0000:03:20.0",
            "0000:03:00.8",
            "000:03:00.0",
            "0000:3:00.0",
            "0000:+3:00.0",
            "0000:03:00.00",
            "devices",
            "0000:03:00.0 ",
        ] {
            assert_eq!(PciAddress::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ids_and_masks() {
        let p = Path::new("/x/vendor");
        assert_eq!(parse_id("0x1002\n", p).unwrap(), 0x1002);
        for bad in ["", "0x", "0x10020", "+1002", "0x-1", "zz"] {
            let e = parse_id(bad, p).unwrap_err().to_string();
            assert!(e.starts_with("/x/vendor: "), "{e}");
        }
        assert_eq!(parse_resize_mask("000000000000ff00\n", p).unwrap(), 0xff00);
        assert_eq!(largest_resize(0xff00), Some((15, 32 << 30)));
        assert_eq!(largest_resize(0), None);
        assert_eq!(largest_resize(1 << 63 | 1), Some((0, 1 << 20)), "2^63 MiB does not fit");
        assert_eq!(largest_resize(1 << 63), None);
        assert_eq!(largest_resize(1 << 43), Some((43, 1 << 63)));
        assert_eq!(largest_resize(1 << 44), None);
    }

    #[test]
    fn resource_table() {
        let p = Path::new("/x/resource");
        let line = |s: u64, e: u64, f: u64| format!("0x{s:016x} 0x{e:016x} 0x{f:016x}\n");
        let mut t = line(0x1_0000_0000, 0x1_0fff_ffff, 0x14220c);
        t += &line(0, 0, 0);
        t += &line(0xd000_0000, 0xd01f_ffff, 0x14220c);
        t += &line(0, 0, 0);
        t += &line(0xe000, 0xe0ff, 0x101);
        t += &line(0xfe00_0000, 0xfe0f_ffff, 0x40200);
        let bars = parse_resource_table(&t, p).unwrap();
        assert_eq!(bars[0].size, 256 << 20);
        assert_eq!(bars[1].size, 0);
        assert_eq!(
            bars[5],
            BarInfo {
                start: 0xfe00_0000,
                size: 1 << 20,
                flags: 0x40200
            }
        );
        let e = parse_resource_table(&(line(0, u64::MAX, 0) + &t), p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1: size overflows"), "{e}");
        assert!(parse_resource_table(&line(5, 4, 0), p).is_err());
        assert!(parse_resource_table("0x1 0x2\n", p).is_err());
        assert!(parse_resource_table(&t.replace("0x0000000000000101", "0x10g"), p).is_err());
        let short: String = t.lines().take(5).map(|l| format!("{l}\n")).collect();
        let e = parse_resource_table(&short, p).unwrap_err().to_string();
        assert!(e.contains("/x/resource") && e.contains("5 lines"), "{e}");
    }
}
