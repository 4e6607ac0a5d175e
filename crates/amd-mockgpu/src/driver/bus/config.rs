//! PCI configuration space of the mock GPU (PCI Local Bus 3.0, §6.1; the MSI
//! capability, §6.8.1): the type-0 header from the profile, the command register,
//! and one MSI capability. Reads of the extended space (256..4096) give zeros.

use super::{BAR_DOORBELL, BAR_IO, BAR_MMIO, BAR_VRAM, PciDev};

/// Size of a PCI Express function's configuration space.
pub(crate) const CONFIG_SIZE: usize = 4096;

/// `PCI_COMMAND_IO`
pub(crate) const COMMAND_IO: u16 = 1 << 0;
/// `PCI_COMMAND_MEMORY`
pub(crate) const COMMAND_MEMORY: u16 = 1 << 1;
/// `PCI_COMMAND_MASTER`
pub(crate) const COMMAND_MASTER: u16 = 1 << 2;
/// `PCI_COMMAND_INTX_DISABLE`
pub(crate) const COMMAND_INTX_DISABLE: u16 = 1 << 10;
const COMMAND_WRITABLE: u16 = COMMAND_IO | COMMAND_MEMORY | COMMAND_MASTER | COMMAND_INTX_DISABLE;

/// `PCI_COMMAND`
pub(crate) const PCI_COMMAND: usize = 0x04;
const PCI_STATUS_CAP_LIST: u16 = 0x10;
const MSI_CAP: usize = 0xa0;
/// `PCI_MSI_FLAGS_ENABLE`
pub(crate) const MSI_ENABLE: u16 = 1 << 0;
/// `PCI_MSI_FLAGS_64BIT`
pub(crate) const MSI_64BIT: u16 = 1 << 7;

impl PciDev {
    /// The whole configuration space as it reads now.
    pub(crate) fn config_bytes(&self) -> Vec<u8> {
        let p = &self.profile;
        let mut c = vec![0u8; CONFIG_SIZE];
        let put16 = |c: &mut [u8], at: usize, v: u16| c[at..at + 2].copy_from_slice(&v.to_le_bytes());
        let put32 = |c: &mut [u8], at: usize, v: u32| c[at..at + 4].copy_from_slice(&v.to_le_bytes());
        put16(&mut c, 0x00, p.vendor);
        put16(&mut c, 0x02, p.device);
        put16(&mut c, PCI_COMMAND, self.command);
        put16(&mut c, 0x06, PCI_STATUS_CAP_LIST);
        c[0x08] = p.revision;
        c[0x09] = p.class as u8;
        c[0x0a] = (p.class >> 8) as u8;
        c[0x0b] = (p.class >> 16) as u8;
        c[0x0e] = 0; // header type 0, single function in the model
        // BARs: 0 and 2 64-bit prefetchable memory, 4 I/O, 5 32-bit memory.
        let b0 = self.bar_phys[BAR_VRAM];
        put32(&mut c, 0x10, (b0 as u32) | 0xc);
        put32(&mut c, 0x14, (b0 >> 32) as u32);
        let b2 = self.bar_phys[BAR_DOORBELL];
        put32(&mut c, 0x18, (b2 as u32) | 0xc);
        put32(&mut c, 0x1c, (b2 >> 32) as u32);
        put32(&mut c, 0x20, self.bar_phys[BAR_IO] as u32 | 1);
        put32(&mut c, 0x24, self.bar_phys[BAR_MMIO] as u32);
        put16(&mut c, 0x2c, p.subsystem_vendor);
        put16(&mut c, 0x2e, p.subsystem_device);
        c[0x34] = MSI_CAP as u8;
        c[0x3d] = 1; // INTA
        c[MSI_CAP] = 0x05; // PCI_CAP_ID_MSI
        c[MSI_CAP + 1] = 0; // last capability
        put16(&mut c, MSI_CAP + 2, self.msi_control);
        put32(&mut c, MSI_CAP + 4, self.msi_address as u32);
        put32(&mut c, MSI_CAP + 8, (self.msi_address >> 32) as u32);
        put16(&mut c, MSI_CAP + 12, self.msi_data);
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
        self.msi_control = (self.msi_control & !MSI_ENABLE) | (get16(MSI_CAP + 2) & MSI_ENABLE);
        self.msi_address = get32(MSI_CAP + 4) as u64 | (get32(MSI_CAP + 8) as u64) << 32;
        self.msi_data = get16(MSI_CAP + 12);
        n
    }
}
