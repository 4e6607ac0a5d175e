//! The KFD transport of amd-hcq: `/dev/kfd` ioctls, sysfs topology, doorbells and
//! events, reaching the operating system only through the [`sys::Sys`] trait.
//!
//! ```text
//! amd-hcq            runtime (devices, queues, signals, programs)
//!    │
//!    └── amd-kfd     ← this crate
//!          Kfd ─────── /dev/kfd, opened once per process; GPU discovery
//!          KfdDevice ─ render node + VM, event page share, queue and fault events
//!          KfdMemory ─ VRAM / GTT / USERPTR buffers, mapped to one or more GPUs
//!          KfdQueue ── PM4 or SDMA ring, pointers, doorbell
//!          Sys ─────── HostSys (the OS) or amd-mockgpu's MockSys (an emulated driver)
//! ```
//!
//! [`mmio::Mmio`] is the register boundary of the driverless transport, defined here
//! beside [`sys::Sys`] so that `amd-am` and the mock can share it.
//!
//! `unsafe` lives in two modules: [`sys`] (the system calls of [`sys::HostSys`]) and
//! `raw` (ioctls with embedded pointers, the mappings this crate owns, and atomic
//! access to queue pointers and doorbells).
#![deny(unsafe_code)]

pub mod abi;
mod device;
mod error;
mod memory;
pub mod mmio;
mod process;
mod queue;
mod raw;
pub mod sys;
pub mod topology;

pub use device::{EVENT_PAGE_SIZE, FaultReport, KFD_PATH, Kfd, KfdDevice, KfdEvent};
pub use error::{KfdError, Result};
pub use memory::{KfdMemory, MemoryKind, Spread};
pub use process::DOORBELL_MAP_SIZE;
pub use queue::{EOP_BUFFER_SIZE, KfdQueue, QueueKind};
pub use raw::{Cell64, PAGE_SIZE};
pub use topology::CwsrSizes;
