//! The PCI bus as the kernel sees it: the devices, which driver each is bound to,
//! their BAR mappings, VFIO groups and containers, and `/proc/self/pagemap`'s frame
//! numbers. The hardware behind each device is [`crate::pci`].
//!
//! ```text
//! /sys/bus/pci/devices/0000:03:00.0/   vendor device class revision subsystem_*
//!     config            256 B header + MSI capability, 4 KiB (pread/pwrite)
//!     resource          the kernel's BAR table text (13 lines)
//!     resource0         VRAM (a sparse memfd; the discovery binary at top − 64 KiB)
//!     resource2         doorbells (a sparse memfd)
//!     resource5         registers: mapped as PROT_NONE address space; accesses go
//!                       through Sys::mmio → RegisterFile (amd_kfd::mmio::Mmio)
//!     resource0_resize  supported sizes; writing n makes BAR 0 2^n MiB (unbound only)
//!     driver → amdgpu | vfio-pci, driver_override, iommu_group (vfio-pci, no-IOMMU)
//! /sys/bus/pci/drivers_probe, /sys/bus/pci/drivers/{amdgpu,vfio-pci}/{bind,unbind}
//! /sys/module/vfio/parameters/enable_unsafe_noiommu_mode
//! /dev/vfio/vfio, /dev/vfio/noiommu-N  (see `vfio`)
//! /proc/self/pagemap                   fake frame numbers for the mock's host pages
//! ```

mod config;
mod rings;
mod sysfs;
mod vfio;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use amd_regs::pci;
use nix::errno::Errno;
use nix::sys::memfd::{MFdFlags, memfd_create};

use crate::mem::PAGE;
use crate::mem::pci::{DevMem, PageOfPfn};
use crate::pci::queues::{self, RingKey};
use crate::pci::regs::{RCC_CONFIG_MEMSIZE, RegisterFile};
use crate::pci::{BAR_DOORBELL, BAR_IO, BAR_MMIO, BAR_VRAM, FirmwareCatalogue, PciProfile, model};

pub use rings::PciRing;
pub(crate) use vfio::split_offset as vfio_split_offset;

/// The sysfs directory of PCI devices.
pub use amd_regs::pci::PCI_DEVICES;

/// The driver a device is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PciDriver {
    /// The kernel's GPU driver.
    Amdgpu,
    /// VFIO's PCI driver.
    VfioPci,
}

impl PciDriver {
    /// The driver's name in sysfs.
    pub fn name(self) -> &'static str {
        match self {
            PciDriver::Amdgpu => "amdgpu",
            PciDriver::VfioPci => "vfio-pci",
        }
    }

    fn from_name(s: &str) -> Option<Self> {
        match s {
            "amdgpu" => Some(PciDriver::Amdgpu),
            "vfio-pci" => Some(PciDriver::VfioPci),
            _ => None,
        }
    }
}

/// One PCI function: its state and backing memory.
#[derive(Debug)]
pub(crate) struct PciDev {
    pub(crate) profile: PciProfile,
    /// `dddd:bb:dd.f`
    pub(crate) name: String,
    pub(crate) driver: Option<PciDriver>,
    pub(crate) driver_override: Option<String>,
    /// The no-IOMMU group while bound to vfio-pci.
    pub(crate) group: Option<u32>,
    pub(crate) bar0_size: u64,
    /// Writable configuration registers (the rest is derived from the profile).
    pub(crate) command: u16,
    pub(crate) msi_control: u16,
    pub(crate) msi_address: u64,
    pub(crate) msi_data: u16,
    pub(crate) vram: File,
    pub(crate) doorbells: File,
    pub(crate) regs: Arc<RegisterFile>,
    /// VRAM and the doorbell page as the device's engines reach them.
    pub(crate) vram_map: Arc<DevMem>,
    pub(crate) doorbell_map: Arc<DevMem>,
    /// The queue block's binding counter, and the value the engines last saw.
    pub(crate) ring_gen: Option<Arc<AtomicU64>>,
    pub(crate) ring_gen_seen: u64,
    /// The rings the queue registers bind, with their engine queues.
    pub(crate) rings: BTreeMap<RingKey, PciRing>,
    /// The eventfd (the mock's descriptor) VFIO signals for MSI.
    pub(crate) msi_eventfd: Option<i32>,
    /// Open VFIO device descriptors.
    pub(crate) vfio_device_fds: usize,
    /// Physical address of each BAR (0 for absent ones), for `resource` and config.
    pub(crate) bar_phys: [u64; 6],
    /// Fault injection: mapping BAR n fails with this errno.
    pub(crate) bar_map_fail: [Option<Errno>; 6],
}

impl PciDev {
    pub(crate) fn bar_size(&self, bar: usize) -> u64 {
        match bar {
            BAR_VRAM => self.bar0_size,
            BAR_DOORBELL => self.profile.doorbell_size,
            BAR_IO => 256,
            BAR_MMIO => self.profile.mmio_size,
            _ => 0,
        }
    }
}

/// A mapping of a BAR made through the mock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BarMap {
    pub(crate) dev: usize,
    pub(crate) bar: usize,
    pub(crate) offset: u64,
    pub(crate) len: usize,
}

/// A VFIO container.
#[derive(Debug, Default)]
pub(crate) struct Container {
    pub(crate) iommu: Option<u64>,
    pub(crate) groups: BTreeSet<u32>,
    /// Its descriptor was closed: it lives on only while a group holds it.
    pub(crate) closed: bool,
}

/// An open no-IOMMU group.
#[derive(Debug, Default)]
pub(crate) struct GroupState {
    pub(crate) open: bool,
    pub(crate) container: Option<u32>,
}

/// Everything PCI the mock driver holds (under the driver lock).
#[derive(Debug, Default)]
pub(crate) struct PciBus {
    pub(crate) devs: Vec<PciDev>,
    /// Whether the `vfio` and `vfio-pci` modules are loaded.
    pub(crate) vfio_loaded: bool,
    /// `vfio`'s `enable_unsafe_noiommu_mode`.
    pub(crate) noiommu: bool,
    pub(crate) groups: BTreeMap<u32, GroupState>,
    pub(crate) containers: BTreeMap<u32, Container>,
    pub(crate) next_container: u32,
    /// Mappings of BARs, by start address.
    pub(crate) maps: BTreeMap<usize, BarMap>,
    /// The mock's eventfds (descriptor numbers), which VFIO accepts for interrupts.
    pub(crate) eventfds: BTreeSet<i32>,
    /// Fake physical frames of host pages (pagemap), both ways.
    pub(crate) pfn_of_page: HashMap<usize, u64>,
    /// Shared with the engines, which resolve system addresses without the driver lock.
    pub(crate) page_of_pfn: PageOfPfn,
    pub(crate) next_pfn: u64,
    /// The firmware files served under [`firmware::DIR`] and the PSPs' catalogue.
    pub(crate) firmware: Arc<FirmwareCatalogue>,
}

/// The first fake frame number handed out for host memory: 4 GiB, below every BAR
/// (which the mock places from 512 GiB up), so no system address aliases a BAR.
pub(crate) const FIRST_HOST_PFN: u64 = (4 << 30) / PAGE as u64;

impl PciBus {
    pub(crate) fn new(
        profiles: Vec<PciProfile>,
        vfio_loaded: bool,
        firmware: Arc<FirmwareCatalogue>,
    ) -> Result<Self, String> {
        let mut devs = Vec::with_capacity(profiles.len());
        for (i, p) in profiles.into_iter().enumerate() {
            p.check()?;
            let bus = u8::try_from(i + 3).map_err(|_| "too many PCI GPUs (at most 252)".to_string())?;
            let name = format!("0000:{bus:02x}:00.0");
            let memfd = |what: &str, size: u64| -> Result<File, String> {
                let fd = memfd_create(format!("mockgpu-{name}-{what}").as_str(), MFdFlags::MFD_CLOEXEC)
                    .map_err(|e| format!("memfd_create for {what}: {e}"))?;
                let f = File::from(fd);
                f.set_len(size).map_err(|e| format!("sizing {what}: {e}"))?;
                Ok(f)
            };
            let vram = memfd("vram", p.vram_size.max(p.bar0_size))?;
            let doorbells = memfd("doorbells", p.doorbell_size)?;
            let bin = p
                .discovery
                .to_bytes()
                .ok_or_else(|| format!("{}: the discovery table does not fit its format", p.name))?;
            vram.write_all_at(&bin, p.vram_size - amd_regs::discovery::DISCOVERY_TMR_OFFSET)
                .map_err(|e| format!("writing the discovery table: {e}"))?;
            let regs = Arc::new(RegisterFile::new(
                (p.mmio_size / 4) as u32,
                &[(RCC_CONFIG_MEMSIZE, (p.vram_size >> 20) as u32)],
            ));
            let vram_model = vram.try_clone().map_err(|e| format!("duplicating VRAM: {e}"))?;
            let vram_map = Arc::new(DevMem::map(&vram, p.vram_size)?);
            let doorbell_map = Arc::new(DevMem::map(&doorbells, p.doorbell_size)?);
            model::attach(
                &regs,
                &p.discovery,
                Arc::new(vram_model),
                p.vram_size,
                Some(doorbell_map.clone()),
                firmware.clone(),
            );
            let ring_gen = regs.with_block(|q: &mut queues::Queues| q.generation());
            let i = i as u64;
            let high = 0x80_0000_0000 + i * 0x10_0000_0000;
            let bar_phys = [
                high,
                0,
                high + 0x8_0000_0000,
                0,
                0xe000 + i * 0x100,
                0xe000_0000 + i * 0x20_0000,
            ];
            devs.push(PciDev {
                name,
                driver: Some(PciDriver::Amdgpu),
                driver_override: None,
                group: None,
                bar0_size: p.bar0_size,
                command: pci::PCI_COMMAND_IO | pci::PCI_COMMAND_MEMORY | pci::PCI_COMMAND_MASTER,
                msi_control: pci::PCI_MSI_FLAGS_64BIT,
                msi_address: 0,
                msi_data: 0,
                vram,
                doorbells,
                regs,
                vram_map,
                doorbell_map,
                ring_gen,
                ring_gen_seen: u64::MAX,
                rings: BTreeMap::new(),
                msi_eventfd: None,
                vfio_device_fds: 0,
                bar_phys,
                bar_map_fail: [None; 6],
                profile: p,
            });
        }
        Ok(PciBus {
            devs,
            vfio_loaded,
            next_pfn: FIRST_HOST_PFN,
            firmware,
            ..Default::default()
        })
    }

    pub(crate) fn dev_by_name(&self, name: &str) -> Option<usize> {
        self.devs.iter().position(|d| d.name == name)
    }

    /// Binds device `i` to `drv`, as the driver's probe would.
    pub(crate) fn bind(&mut self, i: usize, drv: PciDriver) -> Result<(), Errno> {
        if self.devs[i].driver.is_some() {
            return Err(Errno::EBUSY);
        }
        match drv {
            PciDriver::Amdgpu => {
                let d = &mut self.devs[i];
                d.command |= pci::PCI_COMMAND_IO | pci::PCI_COMMAND_MEMORY | pci::PCI_COMMAND_MASTER;
                d.regs.reset();
            }
            PciDriver::VfioPci => {
                // No IOMMU here: vfio-pci's probe fails unless no-IOMMU mode is on.
                if !self.vfio_loaded {
                    return Err(Errno::ENODEV);
                }
                if !self.noiommu {
                    return Err(Errno::EINVAL);
                }
                let g = (0u32..).find(|g| !self.groups.contains_key(g)).ok_or(Errno::ENOSPC)?;
                self.groups.insert(g, GroupState::default());
                self.devs[i].group = Some(g);
            }
        }
        self.devs[i].driver = Some(drv);
        Ok(())
    }

    /// Unbinds device `i` from its driver.
    pub(crate) fn unbind(&mut self, i: usize) -> Result<(), Errno> {
        match self.devs[i].driver {
            None => return Err(Errno::ENODEV),
            Some(PciDriver::Amdgpu) => {
                // pci_disable_device: bus mastering off.
                self.devs[i].command &= !pci::PCI_COMMAND_MASTER;
            }
            Some(PciDriver::VfioPci) => {
                // The kernel waits for the group and device to be released; the mock
                // refuses instead of blocking.
                let g = self.devs[i].group;
                if self.devs[i].vfio_device_fds > 0 || g.is_some_and(|g| self.groups.get(&g).is_some_and(|s| s.open)) {
                    return Err(Errno::EBUSY);
                }
                if let Some(g) = g {
                    self.detach_group(g);
                    self.groups.remove(&g);
                }
                self.devs[i].group = None;
            }
        }
        self.devs[i].driver = None;
        Ok(())
    }

    /// `drivers_probe` for device `i`: binds an unbound device to its override, or
    /// to amdgpu. A probe that fails leaves it unbound, as the kernel does.
    pub(crate) fn probe(&mut self, i: usize) {
        if self.devs[i].driver.is_some() {
            return;
        }
        let drv = match &self.devs[i].driver_override {
            Some(o) => match PciDriver::from_name(o) {
                Some(d) => d,
                None => return,
            },
            None => PciDriver::Amdgpu,
        };
        let _ = self.bind(i, drv);
    }

    /// The device in no-IOMMU group `g`.
    pub(crate) fn dev_of_group(&self, g: u32) -> Option<usize> {
        self.devs.iter().position(|d| d.group == Some(g))
    }

    /// Pagemap entry of the page at `addr`, given whether the mock mapped it for the
    /// caller: present with a fake frame number, or 0.
    pub(crate) fn pagemap_entry(&mut self, page: usize, mapped: bool) -> u64 {
        if !mapped {
            return 0;
        }
        let pfn = match self.pfn_of_page.get(&page) {
            Some(&p) => p,
            None => {
                let p = self.next_pfn;
                self.next_pfn += 1;
                self.pfn_of_page.insert(page, p);
                self.page_of_pfn.write().insert(p, page);
                p
            }
        };
        PM_PRESENT | (pfn & PM_PFN_MASK)
    }

    /// Forgets the frames of pages in `[start, end)` (unmapped: the memory is freed).
    pub(crate) fn forget_pages(&mut self, start: usize, end: usize) {
        if self.pfn_of_page.is_empty() {
            return;
        }
        let gone: Vec<usize> = self
            .pfn_of_page
            .keys()
            .copied()
            .filter(|&p| p >= start && p < end)
            .collect();
        let mut pages = self.page_of_pfn.write();
        for p in gone {
            if let Some(pfn) = self.pfn_of_page.remove(&p) {
                pages.remove(&pfn);
            }
        }
    }

    /// Takes group `g` out of its container (the container's IOMMU driver goes with
    /// its last group; a closed container goes too).
    pub(crate) fn detach_group(&mut self, g: u32) -> Option<u32> {
        let c = self.groups.get_mut(&g)?.container.take()?;
        if let Some(cont) = self.containers.get_mut(&c) {
            cont.groups.remove(&g);
            if cont.groups.is_empty() {
                cont.iommu = None;
                if cont.closed {
                    self.containers.remove(&c);
                }
            }
        }
        Some(c)
    }

    /// Whether `addr` lies in a BAR mapping.
    pub(crate) fn maps_contain(&self, addr: usize) -> bool {
        self.maps
            .range(..=addr)
            .next_back()
            .is_some_and(|(a, m)| addr < a.saturating_add(m.len))
    }

    /// Removes BAR mappings overlapping `[start, end)`.
    pub(crate) fn forget_maps(&mut self, start: usize, end: usize) {
        let gone: Vec<usize> = self
            .maps
            .range(..end)
            .filter(|(a, m)| a.saturating_add(m.len) > start)
            .map(|(a, _)| *a)
            .collect();
        for a in gone {
            self.maps.remove(&a);
        }
    }
}

/// The page map's bits the mock serves.
pub use amd_regs::pci::{PM_PFN_MASK, PM_PRESENT};

/// What the mock knows of its PCI devices, for tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciDeviceInfo {
    /// `dddd:bb:dd.f`
    pub name: String,
    /// Bound driver.
    pub driver: Option<PciDriver>,
    /// `driver_override`.
    pub driver_override: Option<String>,
    /// No-IOMMU group, while bound to vfio-pci.
    pub iommu_group: Option<u32>,
    /// The PCI command register.
    pub command: u16,
    /// BAR 0 size now.
    pub bar0_size: u64,
    /// Physical address of BAR 0.
    pub bar0_phys: u64,
    /// Whether an eventfd is set for MSI.
    pub msi_eventfd: bool,
}
