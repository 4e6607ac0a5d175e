//! The mock PCI GPU's hardware: the register file behind BAR 5 and the blocks with
//! behaviour attached to it (NBIO, RLC, GMC and its page-table walker, IH, PSP, SMU,
//! the HQD and SDMA ring registers), the IP discovery binary at the top of VRAM and
//! the firmware the PSP checks. What the kernel does with the device (sysfs, binding,
//! VFIO, pagemap) is the driver model's; the rings the registers bind run on the
//! engines.
//!
//! Why registers are not memory: a register write has side effects (a firmware
//! command, a ring pointer, an acknowledgement) that a memory mapping cannot run.
//! The mock therefore maps BAR 5 as inaccessible address space — a direct load or
//! store faults at once instead of silently reading stale memory — and answers
//! [`Sys::mmio`](amd_kfd::sys::Sys::mmio) for that address with the device's
//! [`RegisterFile`]. The host's `Sys` answers `None`, and the transport uses volatile
//! access to the mapping it made.

pub mod block;
pub mod catalogue;
pub mod discovery;
pub mod firmware;
pub mod gmc;
pub mod ih;
pub mod iv;
pub mod model;
pub mod psp;
pub mod queues;
pub mod regs;
pub mod smu;

pub use catalogue::FirmwareCatalogue;
pub use discovery::{Discovery, GcInfo, IpBlock};
pub use queues::{RingBinding, RingKey};
pub use regs::{RCC_CONFIG_MEMSIZE, RegWrite, RegisterFile};

use crate::mem::PAGE;

/// One mock PCI GPU: identity, BAR sizes, VRAM and its discovery binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciProfile {
    /// A name for messages (`navi31`).
    pub name: &'static str,
    /// PCI vendor id.
    pub vendor: u16,
    /// PCI device id.
    pub device: u16,
    /// Revision id.
    pub revision: u8,
    /// Class code (class, subclass, programming interface).
    pub class: u32,
    /// Subsystem vendor id.
    pub subsystem_vendor: u16,
    /// Subsystem id.
    pub subsystem_device: u16,
    /// VRAM bytes (a whole number of MiB, at least 1 MiB): what `RCC_CONFIG_MEMSIZE`
    /// reports and where the discovery binary goes. Backed sparsely: only pages
    /// written take memory.
    pub vram_size: u64,
    /// BAR 0 size before any resize (256 MiB without resizable BAR set up).
    pub bar0_size: u64,
    /// The BAR 0 sizes the resizable-BAR capability offers: bit n is 2^n MiB.
    pub bar0_resize_sizes: u64,
    /// BAR 2 (doorbells) size.
    pub doorbell_size: u64,
    /// BAR 5 (registers) size.
    pub mmio_size: u64,
    /// The IP discovery binary's contents.
    pub discovery: Discovery,
}

impl PciProfile {
    /// A Radeon RX 7900 XTX (Navi 31, 0x1002:0x744c, class 0x030000): BAR 0 256 MiB,
    /// resizable from 256 MiB to 32 GiB; BAR 2 2 MiB; BAR 5 1 MiB; VRAM 512 MiB here
    /// (the card has 24 GiB; [`with_vram`](Self::with_vram) sets any size, backed
    /// sparsely); the discovery binary of [`Discovery::navi31`].
    pub fn navi31() -> Self {
        PciProfile {
            name: "navi31",
            vendor: 0x1002,
            device: 0x744c,
            revision: 0xc8,
            class: 0x03_00_00,
            subsystem_vendor: 0x1002,
            subsystem_device: 0x0e3b,
            vram_size: 512 << 20,
            bar0_size: 256 << 20,
            bar0_resize_sizes: 0xff00,
            doorbell_size: 2 << 20,
            mmio_size: 1 << 20,
            discovery: Discovery::navi31(),
        }
    }

    /// A Radeon RX 9070 XT (Navi 48, 0x1002:0x7550, gfx1201): the discovery binary of
    /// [`Discovery::navi48`] (GC 12.0.1, MP 14.0.3, SDMA 7.0.1, NBIF 6.3.1, MMHUB 4.1.0,
    /// OSSSYS 7.0.0), VRAM 512 MiB here; BARs as [`navi31`](Self::navi31).
    pub fn navi48() -> Self {
        PciProfile {
            name: "navi48",
            device: 0x7550,
            revision: 0xc0,
            subsystem_device: 0x0e3c,
            discovery: Discovery::navi48(),
            ..Self::navi31()
        }
    }

    /// A Navi 21 (0x1002:0x73bf, gfx1030): the discovery binary of
    /// [`Discovery::navi21`], VRAM 256 MiB here; otherwise as [`navi31`](Self::navi31).
    pub fn navi21() -> Self {
        PciProfile {
            name: "navi21",
            device: 0x73bf,
            revision: 0xc1,
            subsystem_device: 0x0e3a,
            vram_size: 256 << 20,
            discovery: Discovery::navi21(),
            ..Self::navi31()
        }
    }

    /// Sets the VRAM size.
    pub fn with_vram(mut self, bytes: u64) -> Self {
        self.vram_size = bytes;
        self
    }

    /// Leaves every instance of IP `hw_id` (an `amd_regs::discovery::hw_id`) out of
    /// the discovery table: the device has no such block, and the registers it
    /// would have placed have no behaviour (fault injection: a missing IP block).
    pub fn without_ip(mut self, hw_id: u16) -> Self {
        self.discovery.ips.retain(|ip| ip.hw_id != hw_id);
        self
    }

    pub(crate) fn check(&self) -> Result<(), String> {
        let mib = 1u64 << 20;
        if self.vram_size < mib || self.vram_size % mib != 0 || self.vram_size >> 20 > u32::MAX as u64 {
            return Err(format!(
                "{}: VRAM size {:#x} is not a whole number of MiB",
                self.name, self.vram_size
            ));
        }
        for (what, size) in [
            ("BAR 0", self.bar0_size),
            ("BAR 2", self.doorbell_size),
            ("BAR 5", self.mmio_size),
        ] {
            if !size.is_power_of_two() || size < PAGE as u64 || size > 1 << 40 {
                return Err(format!(
                    "{}: {what} size {size:#x} is not a power of two from 4 KiB to 1 TiB",
                    self.name
                ));
            }
        }
        if self.mmio_size / 4 > u32::MAX as u64 {
            return Err(format!("{}: BAR 5 too large", self.name));
        }
        if self.bar0_resize_sizes >> 21 != 0 {
            return Err(format!("{}: resize sizes past 1 TiB", self.name));
        }
        Ok(())
    }
}

/// The firmware files of the mock's PCI GPUs: what the mock serves under
/// [`firmware::DIR`] and what their PSPs check loads against (the
/// [`FirmwareCatalogue`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PciFirmware {
    /// The synthetic files of [`firmware::files`].
    #[default]
    Synthetic,
    /// tinygrad 0.10.1's files ([`catalogue::file_names`]) read from this host
    /// directory when the mock is created (such as `/lib/firmware/amdgpu`). A missing
    /// file is neither served nor catalogued; a directory that cannot be listed is an
    /// invalid configuration.
    Dir(std::path::PathBuf),
}

impl PciFirmware {
    /// The files and their catalogue.
    pub fn catalogue(&self) -> Result<FirmwareCatalogue, String> {
        match self {
            PciFirmware::Synthetic => Ok(FirmwareCatalogue::synthetic()),
            PciFirmware::Dir(d) => FirmwareCatalogue::from_dir(d),
        }
    }
}

/// PCI BAR numbers the mock backs.
pub(crate) use amd_regs::pci::{BAR_DOORBELL, BAR_IO, BAR_MMIO, BAR_VRAM};
