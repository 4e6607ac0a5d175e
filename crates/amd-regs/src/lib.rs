//! The hardware's own definitions that the driver side and the mock GPU both need,
//! kept below both so that neither reads the other's code: register names, offsets and
//! fields generated from the Linux 6.12 amdgpu headers (`regs`), the IP discovery
//! binary's layout (`discovery`), the firmware file headers (`firmware`) and the VFIO
//! ABI (`vfio`). Layouts only: parsing and policy live with their users.
//!
//! ```text
//! amd-am (driverless transport)     amd-mockgpu (the mock PCI GPU)
//!            └──────────────┬──────────────┘
//!                      amd-regs        ← this crate: layouts and tables, pure
//! ```
//!
//! Every layout is pinned by size assertions; the register tables are checked against
//! the headers by `cargo xtask gen-am-regs --check`, the VFIO ABI against the system
//! header by `tests/vfio_layout.rs`.

#![forbid(unsafe_code)]

pub mod discovery;
pub mod firmware;
pub mod layout;
pub mod regs;
pub mod vfio;
