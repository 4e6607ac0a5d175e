//! The driverless transport of amd-hcq: PCI BARs, VFIO, IP discovery, firmware via
//! PSP, GPU page tables, SMU and ring setup, reaching registers through an `Mmio` trait.
//!
//! **Not built yet.** This crate is an empty shell in the workspace (see the README's
//! crate map).
#![deny(unsafe_code)]
