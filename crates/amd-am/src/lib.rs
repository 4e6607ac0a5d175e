//! The driverless transport of amd-hcq: PCI BARs, VFIO, IP discovery, firmware via
//! PSP, GPU page tables, SMU and ring setup, reaching registers through an `Mmio` trait.
//!
//! **Not built yet.** What exists are the pieces the transport and the mock PCI GPU
//! (`amd-mockgpu`) share:
//!
//! - [`vfio`]: the VFIO ABI of `<linux/vfio.h>` (argument structs named as in the
//!   header, flags, request numbers), checked against the system header by
//!   `tests/vfio_layout.rs`;
//! - [`discovery`]: the IP discovery binary layout of amdgpu's `discovery.h` (the table
//!   at the top of VRAM that names every IP block, its version and register bases),
//!   the hardware ids and the checksum;
//! - [`Mmio`]: the register boundary (defined in `amd-kfd` beside `Sys`, whose
//!   [`Sys::mmio`](amd_kfd::sys::Sys::mmio) hands out the mock's register model for a
//!   mapped register BAR; see [`amd_kfd::mmio`]), and [`bar::registers`], which gives
//!   that model or, on hardware, [`bar::VolatileBar`] over the mapping.
//!
//! `unsafe` lives in [`bar`] (volatile access to a mapped BAR).
#![deny(unsafe_code)]

pub mod bar;
pub mod discovery;
mod error;
pub mod firmware;
pub mod ip;
mod os;
pub mod pci;
pub mod regs;
pub mod vfio;

pub use amd_kfd::mmio::Mmio;
pub use error::{AmError, Result};
pub use os::BarMapping;
