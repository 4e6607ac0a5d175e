//! What tests ask of the mock's PCI GPUs: their state, registers, VRAM and rings,
//! and faults to inject.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use amd_kfd::sys::Fd;
use nix::errno::Errno;

use super::MockSys;
use crate::driver::bus::{PM_PFN_MASK, PciDeviceInfo, PciRing};
use crate::engine::QueueState;
use crate::mem::PAGE;
use crate::mem::gpuvm::{Access, Hub, Target, VmFault};
use crate::pci::psp::Psp;
use crate::pci::queues::RingKey;
use crate::pci::smu::Smu;
use crate::pci::{BAR_VRAM, FirmwareCatalogue, RegisterFile};

/// A fault injected into a mock PCI GPU at register level ([`MockSys::pci_inject`];
/// [`MockSys::clear_injections`] forgets them). A missing IP block is a profile
/// setting: [`PciProfile::without_ip`](crate::pci::PciProfile::without_ip).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PciFault {
    /// The PSP does not execute the next ring command with id `cmd_id` (a
    /// `GFX_CMD_ID_*`; `None`: whatever comes next) and writes `status` into its
    /// response (the fence is written as usual).
    PspCommand {
        /// The command to fail, or any.
        cmd_id: Option<u32>,
        /// The response status (non-zero).
        status: u32,
    },
    /// The SMU stops answering: after a message, `C2PMSG_90` stays 0.
    SmuSilent,
    /// Every `mmap` of BAR `bar` (sysfs `resourceN`, or the VFIO device's region)
    /// fails with `errno`, naming the resource file.
    BarMap {
        /// BAR number.
        bar: usize,
        /// The error the mapping fails with.
        errno: Errno,
    },
}

impl MockSys {
    /// Injects `fault` into PCI GPU `dev`. False if there is no such device, no such
    /// BAR, or the device lacks the block (its IP is not in the discovery table).
    pub fn pci_inject(&self, dev: usize, fault: PciFault) -> bool {
        let mut d = self.driver.lock();
        let Some(p) = d.pci.devs.get_mut(dev) else { return false };
        match fault {
            PciFault::PspCommand { cmd_id, status } => p
                .regs
                .with_block(|b: &mut Psp| b.fail_next = Some((cmd_id, status)))
                .is_some(),
            PciFault::SmuSilent => p.regs.with_block(|b: &mut Smu| b.unresponsive = true).is_some(),
            PciFault::BarMap { bar, errno } => match p.bar_map_fail.get_mut(bar) {
                Some(slot) => {
                    *slot = Some(errno);
                    true
                }
                None => false,
            },
        }
    }

    /// Forgets the PCI GPUs' injected faults; whether one was still in force.
    pub(crate) fn clear_pci_injections(&self) -> bool {
        let mut d = self.driver.lock();
        let mut left = false;
        for p in &mut d.pci.devs {
            left |= p.regs.with_block(|b: &mut Psp| b.fail_next.take().is_some()) == Some(true);
            left |= p.regs.with_block(|b: &mut Smu| std::mem::take(&mut b.unresponsive)) == Some(true);
            for slot in &mut p.bar_map_fail {
                left |= slot.take().is_some();
            }
        }
        left
    }

    /// The PCI GPUs' state, in bus order.
    pub fn pci_devices(&self) -> Vec<PciDeviceInfo> {
        let d = self.driver.lock();
        d.pci
            .devs
            .iter()
            .map(|p| PciDeviceInfo {
                name: p.name.clone(),
                driver: p.driver,
                driver_override: p.driver_override.clone(),
                iommu_group: p.group,
                command: p.command,
                bar0_size: p.bar0_size,
                bar0_phys: p.bar_phys[BAR_VRAM],
                msi_eventfd: p.msi_eventfd.is_some(),
            })
            .collect()
    }

    /// PCI GPU `dev`'s register file (BAR 5).
    pub fn pci_registers(&self, dev: usize) -> Option<Arc<RegisterFile>> {
        self.driver.lock().pci.devs.get(dev).map(|p| p.regs.clone())
    }

    /// The PCI GPUs' firmware files and what their PSPs check loads against
    /// ([`MockConfig::pci_firmware`](crate::MockConfig::pci_firmware)).
    pub fn pci_firmware(&self) -> Arc<FirmwareCatalogue> {
        self.driver.lock().pci.firmware.clone()
    }

    /// Reads PCI GPU `dev`'s VRAM at byte `offset` (as the GPU sees it); false if
    /// out of range.
    pub fn pci_read_vram(&self, dev: usize, offset: u64, buf: &mut [u8]) -> bool {
        let len = buf.len();
        self.with_vram(dev, offset, len, |vram| vram.read_exact_at(buf, offset))
    }

    /// Writes PCI GPU `dev`'s VRAM at byte `offset`; false if out of range.
    pub fn pci_write_vram(&self, dev: usize, offset: u64, data: &[u8]) -> bool {
        self.with_vram(dev, offset, data.len(), |vram| vram.write_all_at(data, offset))
    }

    /// Runs `io` on PCI GPU `dev`'s VRAM file where its `len` bytes at `offset` lie
    /// inside VRAM; whether they did and `io` succeeded.
    fn with_vram(&self, dev: usize, offset: u64, len: usize, io: impl FnOnce(&File) -> std::io::Result<()>) -> bool {
        let d = self.driver.lock();
        let Some(p) = d.pci.devs.get(dev) else { return false };
        let fits = offset
            .checked_add(len as u64)
            .is_some_and(|end| end <= p.profile.vram_size);
        fits && io(&p.vram).is_ok()
    }

    /// Raises PCI GPU `dev`'s MSI: signals the eventfd VFIO was given. False if
    /// none is set (interrupts off).
    pub fn pci_raise_msi(&self, dev: usize) -> bool {
        let fd = {
            let d = self.driver.lock();
            d.pci.devs.get(dev).and_then(|p| p.msi_eventfd)
        };
        fd.is_some_and(|fd| amd_kfd::sys::Sys::write(&self.host, Fd(fd), &1u64.to_ne_bytes()).is_ok())
    }

    /// The host address behind a system physical address the mock's pagemap handed
    /// out (what a GPU page table entry with the SYSTEM bit points at), or `None` if
    /// the page is not one the mock knows (never read through pagemap, or unmapped
    /// since).
    pub fn pci_phys_to_host(&self, paddr: u64) -> Option<usize> {
        let pfn = (paddr / PAGE as u64) & PM_PFN_MASK;
        let d = self.driver.lock();
        let page = *d.pci.page_of_pfn.read().get(&pfn)?;
        page.checked_add((paddr % PAGE as u64) as usize)
    }

    /// Translates `va` for `access` through PCI GPU `dev`'s `hub` (its TLB or a
    /// page-table walk in VRAM; a fault is latched in the hub's fault registers). A
    /// system page the pagemap handed out comes back as [`Target::Host`], another
    /// one as [`Target::System`]. `None` if there is no such device.
    pub fn pci_translate(&self, dev: usize, hub: Hub, va: u64, access: Access) -> Option<Result<Target, VmFault>> {
        let regs = self.pci_registers(dev)?;
        Some(regs.translate(hub, va, access).map(|t| match t {
            Target::System(pa) => self.pci_phys_to_host(pa).map_or(t, Target::Host),
            t => t,
        }))
    }
}

impl MockSys {
    /// The rings PCI GPU `dev`'s queue registers bind now, as its engines see them
    /// (brought up to date first).
    pub fn pci_rings(&self, dev: usize) -> Vec<(RingKey, PciRing)> {
        let mut d = self.driver.lock();
        d.sync_pci_rings(dev);
        d.pci
            .devs
            .get(dev)
            .map(|p| p.rings.iter().map(|(k, r)| (*k, r.clone())).collect())
            .unwrap_or_default()
    }

    /// The engine's view of ring `key` of PCI GPU `dev`, if the registers bind it.
    pub fn pci_ring_state(&self, dev: usize, key: RingKey) -> Option<QueueState> {
        let mut d = self.driver.lock();
        d.sync_pci_rings(dev);
        let id = d.pci.devs.get(dev)?.rings.get(&key)?.id;
        d.engines.execs.get(&id).map(|q| q.state())
    }

    /// Why PCI GPU `dev`'s stopped rings stopped, one line per ring the queue
    /// registers still bind (brought up to date first: a ring set up again starts
    /// afresh).
    pub fn pci_stop_reasons(&self, dev: usize) -> Vec<String> {
        let mut d = self.driver.lock();
        d.sync_pci_rings(dev);
        let slot = d.pci_slot(dev);
        d.engines
            .execs
            .values()
            .filter(|q| q.gpu == slot)
            .filter_map(|q| q.stop_reason.clone())
            .collect()
    }
}
