//! The amd-hcq runtime: devices, buffers, signals, compute and copy queues, copies.
//!
//! ```text
//! amd-hcq        Platform · Device · Buffer · Signal · ComputeQueue · CopyQueue
//!    │            talks to one DeviceInterface (KfdIface), chosen by AMD_IFACE
//!    ├── amd-kfd  the KFD transport (Sys: the OS, or amd-mockgpu's MockSys)
//!    └── amd-packets  PM4 + SDMA packets
//! ```
//!
//! Ordering: every runtime operation is ordered on the device's timeline signal —
//! it waits for the value before it and signals the next — so copies and launches run
//! in submission order on both engines. Memory freed while work is in flight is held
//! back until the timeline passes the last value submitted at that moment.
#![deny(unsafe_code)]

mod args;
mod bind;
mod codeobj;
mod copy;
mod device;
mod error;
mod graph;
mod iface;
mod memory;
mod msgpack;
mod platform;
mod profile;
mod program;
mod queue;
mod signal;
mod submit;
mod sym;

pub use args::{KernArgs, ScalarType};
pub use bind::{BoundQueue, DEFAULT_COPIES};
pub use codeobj::{ArgInfo, ArgKind, CodeObject, KernelDescriptor, KernelInfo};
pub use device::{Device, Point, RING_SIZE, STAGING_COUNT, STAGING_SIZE, TIMELINE_WRAP, TimelineHandle, Work};
pub use error::{HcqError, Result};
pub use graph::{BoundGraph, Graph, Node};
pub use iface::{BufferKind, DeviceInterface, DeviceMemory, DeviceProps, HwQueue, KfdIface};
pub use memory::{Buffer, CACHE_LIMIT};
pub use platform::{Iface, Platform};
pub use profile::{Engine, ProfileRecord, chrome_trace};
pub use program::{DEFAULT_SCRATCH_PER_LANE, GPU_CLOCK_HZ, KERNARG_REGION, LaunchDims, MAX_SCRATCH, Program};
pub use queue::{ComputeQueue, CopyQueue, SymDims};
pub use signal::{DEFAULT_TIMEOUT, SIGNAL_SLOT, SIGNAL_SLOTS, Signal, default_timeout};
pub use sym::{Bindings, Sym, Var};

/// The mock GPU's configuration (the `mock` feature): what [`Platform::mock`] takes,
/// without a direct dependency on `amd-mockgpu`.
#[cfg(feature = "mock")]
pub mod mock {
    pub use amd_mockgpu::{ExecMode, GpuProfile, MockConfig, MockSys};
}
