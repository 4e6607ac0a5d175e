//! The driverless transport of amd-hcq, modelled on tinygrad 0.10.1's `PCIIface` and
//! `AMDev`: the GPU taken from the kernel driver and driven through its PCI BARs,
//! reaching the OS only through amd-kfd's [`Sys`](amd_kfd::sys::Sys) and the registers
//! only through [`Mmio`].
//!
//! ```text
//! psp::Psp         bootloader, ring, TOC/TMR, LOAD_IP_FW, RLC autoload
//! ih::Ih           interrupt rings, vectors, VM fault decoding
//! smu::Smu         messages, driver/metrics table, DPM clocks
//! gmc::Gmc         VRAM allocators, page tables, hubs, TLB flush, faults
//!    │
//! ip::AmDevice     VRAM size, IP discovery, Registers (by IP block + instance), boot state
//!    │
//! pci::PciDevice   taken GPU: BAR 0/2/5 mappings, VFIO (MSI eventfd) or plain sysfs
//! pci::PciBus      enumeration (1002:744c), visibility, unbind, BAR resize, VFIO container
//!    │
//! Sys (files, ioctl, mmap, eventfd, poll)        Mmio (32-bit registers of BAR 5)
//! ```
//!
//! Built so far (the first steps of issue #13):
//! - [`pci`]: finding and taking the device;
//! - [`ip`]: the discovery binary read through BAR 0, parsed with every field
//!   checked, and register access by IP block and instance;
//! - [`regs`]: register names, offsets and fields generated from the Linux headers
//!   (`cargo xtask gen-am-regs`), shared with the mock PCI GPU;
//! - [`firmware`]: the firmware files, found and cut into what the PSP loads, every
//!   offset and size checked;
//! - [`psp`]: the PSP bring-up (bootloader components, ring, TMR, `LOAD_IP_FW` of
//!   each image, RLC autoload) in tinygrad 0.10.1's order and with its timeouts;
//! - [`gmc`]: VRAM allocators, GPU page tables (VRAM and host pages through the
//!   pagemap), the hubs' VM context 0, TLB flushes and fault status;
//! - [`smu`]: SMU messages, the metrics table, clocks;
//! - [`ih`]: the interrupt rings, vectors decoded (VM faults, SDMA traps, CP end of
//!   pipe), the read pointer;
//! - the pieces shared with the mock: [`vfio`] (the VFIO ABI of `<linux/vfio.h>`,
//!   checked against the system header by `tests/vfio_layout.rs`), [`discovery`]
//!   (the layout of amdgpu's `discovery.h`), [`Mmio`] and [`bar::registers`] (the
//!   mock's register model, or [`bar::VolatileBar`] on hardware);
//! - [`gfx`], [`sdma`], [`soc21`], [`device`]: the GFX and SDMA bring-up and the
//!   whole boot in tinygrad 0.10.1's order, with `fini`;
//! - [`owned`]: [`AmGpu`], a booted GPU that owns its device (what amd-hcq's
//!   driverless `DeviceInterface`, `AmIface`, holds).
//!
//! Errors are one enum, [`AmError`]. `unsafe` lives in [`bar`] (volatile access to a
//! mapped BAR), the private `os` module (BAR and host-page mappings, VFIO ioctls) and
//! [`owned`] (the device borrowed by the blocks of the same [`AmGpu`]).
#![deny(unsafe_code)]

pub mod bar;
pub mod device;
mod error;
pub mod firmware;
pub mod gfx;
pub mod gmc;
pub mod ih;
pub mod ip;
mod os;
pub mod owned;
pub mod pci;
pub mod psp;
pub mod sdma;
pub mod smu;
pub mod soc21;
mod vram_layout;

pub use amd_kfd::mmio::Mmio;
/// The IP discovery binary's layout, register tables and the VFIO ABI, from
/// `amd-regs` (shared with the mock GPU).
pub use amd_regs::{discovery, regs, vfio};
pub use error::{AmError, HostProblem, MapProblem, Result, RingProblem};
pub use os::BarMapping;
pub use owned::AmGpu;
