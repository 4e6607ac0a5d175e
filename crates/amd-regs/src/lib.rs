//! The hardware's own definitions that the driver side and the mock GPU both need,
//! kept below both so that neither reads the other's code: register names, offsets and
//! fields generated from the Linux 6.12 amdgpu headers (`regs`), the IP discovery
//! binary's layout (`discovery`), the firmware file headers (`firmware`), the VFIO
//! ABI (`vfio`) and PCI as Linux shows the GPU (`pci`: configuration space, BARs,
//! sysfs paths). Layouts only: parsing and policy live with their users.
//!
//! ```text
//! amd-am (driverless transport)     amd-mockgpu (the mock PCI GPU)
//!            └──────────────┬──────────────┘
//!                      amd-regs        ← this crate: layouts and tables, pure
//! ```
//!
//! Every layout is pinned by size assertions and compared with its header by a C
//! compiler: the IP discovery layouts with amdgpu's `discovery.h` (copied in
//! `vendor/`, `tests/discovery_layout.rs`), the VFIO ABI with the system's
//! `<linux/vfio.h>` (`tests/vfio_layout.rs`), the PCI constants with
//! `<linux/pci_regs.h>` (`tests/pci_regs.rs`); the register tables are regenerated from
//! the headers and compared by `cargo xtask gen-am-regs --check`. The firmware headers
//! (`amdgpu_ucode.h` is kernel-internal) are pinned by size assertions only.

#![forbid(unsafe_code)]

pub mod discovery;
pub mod firmware;
pub mod layout;
pub mod pci;
pub mod psp_if;
pub mod regs;
pub mod vfio;
