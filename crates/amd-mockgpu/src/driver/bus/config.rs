//! PCI configuration space of the mock GPU (PCI Local Bus 3.0, §6.1; the MSI
//! capability, §6.8.1): the type-0 header from the profile, the command register,
//! and one MSI capability. Reads of the extended space (256..4096) give zeros.

use amd_regs::pci::{
    PCI_BASE_ADDRESS_0, PCI_CAP_ID_MSI, PCI_CAPABILITY_LIST, PCI_CFG_SPACE_EXP_SIZE, PCI_CLASS_PROG, PCI_COMMAND,
    PCI_COMMAND_INTX_DISABLE, PCI_COMMAND_IO, PCI_COMMAND_MASTER, PCI_COMMAND_MEMORY, PCI_DEVICE_ID, PCI_HEADER_TYPE,
    PCI_INTERRUPT_PIN, PCI_MSI_ADDRESS_HI, PCI_MSI_ADDRESS_LO, PCI_MSI_DATA_64, PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE,
    PCI_REVISION_ID, PCI_STATUS, PCI_STATUS_CAP_LIST, PCI_SUBSYSTEM_ID, PCI_SUBSYSTEM_VENDOR_ID, PCI_VENDOR_ID,
};

use super::{BAR_DOORBELL, BAR_IO, BAR_MMIO, BAR_VRAM, PciDev};

/// Size of a PCI Express function's configuration space.
pub(crate) const CONFIG_SIZE: usize = PCI_CFG_SPACE_EXP_SIZE;
const COMMAND_WRITABLE: u16 = PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE;
/// Where the mock's one capability, MSI, sits.
const MSI_CAP: usize = 0xa0;

impl PciDev {
    /// The whole configuration space as it reads now.
    pub(crate) fn config_bytes(&self) -> Vec<u8> {
        let p = &self.profile;
        let mut c = vec![0u8; CONFIG_SIZE];
        let put16 = |c: &mut [u8], at: usize, v: u16| c[at..at + 2].copy_from_slice(&v.to_le_bytes());
        let put32 = |c: &mut [u8], at: usize, v: u32| c[at..at + 4].copy_from_slice(&v.to_le_bytes());
        put16(&mut c, PCI_VENDOR_ID, p.vendor);
        put16(&mut c, PCI_DEVICE_ID, p.device);
        put16(&mut c, PCI_COMMAND, self.command);
        put16(&mut c, PCI_STATUS, PCI_STATUS_CAP_LIST);
        c[PCI_REVISION_ID] = p.revision;
        c[PCI_CLASS_PROG..PCI_CLASS_PROG + 3].copy_from_slice(&p.class.to_le_bytes()[..3]);
        c[PCI_HEADER_TYPE] = 0; // header type 0, single function in the model
        // BARs: 0 and 2 64-bit prefetchable memory, 4 I/O, 5 32-bit memory.
        let b0 = self.bar_phys[BAR_VRAM];
        let bar = |n: usize| PCI_BASE_ADDRESS_0 + 4 * n;
        put32(&mut c, bar(BAR_VRAM), (b0 as u32) | 0xc);
        put32(&mut c, bar(BAR_VRAM + 1), (b0 >> 32) as u32);
        let b2 = self.bar_phys[BAR_DOORBELL];
        put32(&mut c, bar(BAR_DOORBELL), (b2 as u32) | 0xc);
        put32(&mut c, bar(BAR_DOORBELL + 1), (b2 >> 32) as u32);
        put32(&mut c, bar(BAR_IO), self.bar_phys[BAR_IO] as u32 | 1);
        put32(&mut c, bar(BAR_MMIO), self.bar_phys[BAR_MMIO] as u32);
        put16(&mut c, PCI_SUBSYSTEM_VENDOR_ID, p.subsystem_vendor);
        put16(&mut c, PCI_SUBSYSTEM_ID, p.subsystem_device);
        c[PCI_CAPABILITY_LIST] = MSI_CAP as u8;
        c[PCI_INTERRUPT_PIN] = 1; // INTA
        c[MSI_CAP] = PCI_CAP_ID_MSI;
        c[MSI_CAP + 1] = 0; // last capability
        put16(&mut c, MSI_CAP + PCI_MSI_FLAGS, self.msi_control);
        put32(&mut c, MSI_CAP + PCI_MSI_ADDRESS_LO, self.msi_address as u32);
        put32(&mut c, MSI_CAP + PCI_MSI_ADDRESS_HI, (self.msi_address >> 32) as u32);
        put16(&mut c, MSI_CAP + PCI_MSI_DATA_64, self.msi_data);
        c
    }

    /// Reads `buf.len()` bytes at `offset`; fewer at the end of the space.
    pub(crate) fn config_read(&self, offset: u64, buf: &mut [u8]) -> usize {
        let c = self.config_bytes();
        let Ok(at) = usize::try_from(offset) else { return 0 };
        let Some(src) = c.get(at..) else { return 0 };
        let n = src.len().min(buf.len());
        buf[..n].copy_from_slice(&src[..n]);
        n
    }

    /// Writes `data` at `offset`: the command register's writable bits and the MSI
    /// capability's enable, address and data take effect; other bytes are read-only
    /// (writes to them are dropped, as hardware drops them). Returns the bytes
    /// consumed.
    pub(crate) fn config_write(&mut self, offset: u64, data: &[u8]) -> usize {
        let mut c = self.config_bytes();
        let Ok(at) = usize::try_from(offset) else { return 0 };
        if at >= c.len() {
            return 0;
        }
        let n = data.len().min(c.len() - at);
        c[at..at + n].copy_from_slice(&data[..n]);
        let get16 = |at: usize| u16::from_le_bytes([c[at], c[at + 1]]);
        let get32 = |at: usize| u32::from_le_bytes([c[at], c[at + 1], c[at + 2], c[at + 3]]);
        self.command = (self.command & !COMMAND_WRITABLE) | (get16(PCI_COMMAND) & COMMAND_WRITABLE);
        self.msi_control =
            (self.msi_control & !PCI_MSI_FLAGS_ENABLE) | (get16(MSI_CAP + PCI_MSI_FLAGS) & PCI_MSI_FLAGS_ENABLE);
        self.msi_address =
            get32(MSI_CAP + PCI_MSI_ADDRESS_LO) as u64 | (get32(MSI_CAP + PCI_MSI_ADDRESS_HI) as u64) << 32;
        self.msi_data = get16(MSI_CAP + PCI_MSI_DATA_64);
        n
    }
}
