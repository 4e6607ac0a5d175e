//! The amd-hcq runtime: devices, buffers, signals, compute and copy queues, programs
//! (kernels from code objects), queue programs with symbolic values, graphs, copies,
//! profiling — written as command packets straight into the GPU's queues, on the model
//! of tinygrad 0.10.1's AMD backend.
//!
//! ```text
//! amd-hcq        Platform · Device · Buffer · Signal · Program · KernArgs
//!                ComputeQueue · CopyQueue · BoundQueue · Graph · Var/Sym/Bindings
//!    │            talks to one DeviceInterface (AnyIface: KfdIface or AmIface),
//!    │            chosen by AMD_IFACE
//!    ├── amd-kfd  the KFD transport (Sys: the OS, or amd-mockgpu's MockSys)
//!    ├── amd-am   the driverless transport (PCI BARs; the OS or the mock's PCI GPU)
//!    └── amd-packets  PM4 + SDMA packets
//! ```
//!
//! Ordering: every runtime operation is ordered on the device's timeline signal —
//! it waits for the value before it and signals the next — so copies and launches run
//! in submission order on both engines, and each returns its timeline value to wait
//! on. Memory freed while work is in flight is held back until the timeline passes the
//! last value submitted at that moment.
//!
//! The examples run on the mock GPU (the `mock` feature); the same code runs on an AMD
//! GPU through `/dev/kfd`.
//!
//! Allocate, copy in, launch, copy out:
//!
//! ```
//! use amd_hcq::{BufferKind, KernArgs, LaunchDims, Platform, Program};
//!
//! let platform = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?;
//! let dev = platform.device(0)?;
//! let elf = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/kernels/vadd.hsaco"))?;
//! let vadd = Program::load(&dev, &elf, "vadd")?;
//! let n = 1000;
//! let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
//! let (a, b, c) = (
//!     dev.alloc(n * 4, BufferKind::Device)?,
//!     dev.alloc(n * 4, BufferKind::Device)?,
//!     dev.alloc(n * 4, BufferKind::Device)?,
//! );
//! dev.copy_in_slice(&a, 0, &x)?;
//! dev.copy_in_slice(&b, 0, &x)?;
//! let args = KernArgs::new().buffer(&a).buffer(&b).buffer(&c).u32(n as u32);
//! let done = vadd.enqueue(&args, LaunchDims::linear(n as u32, 256))?;
//! dev.wait_timeline(done)?;
//! let sum: Vec<f32> = dev.copy_out_vec(&c, 0, n)?;
//! assert_eq!(sum[10], 20.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Signals and queues of your own, a list bound once and replayed with new values:
//!
//! ```
//! use amd_hcq::{Bindings, Platform, Sym, Var};
//!
//! let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
//! let (gate, done) = (dev.new_signal(0)?, dev.new_signal(0)?);
//! let step = Var::new("step");
//! let mut q = dev.compute_queue();
//! q.wait(&gate, &step).signal(&done, Sym::from(&step) * 10u32);
//! let bound = dev.bind(&q)?;
//! for s in 1..=3u64 {
//!     let v = bound.submit(&Bindings::from([(&step, s)]))?;
//!     gate.set(s)?;
//!     dev.wait_timeline(v)?;
//!     assert_eq!(done.value(), 10 * s);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Profiling, and a fault that stays with the device (see [`HcqError::DeviceFault`]):
//!
//! ```
//! use amd_hcq::{BufferKind, HcqError, Platform};
//!
//! let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
//! dev.set_profiling(true);
//! let a = dev.alloc(1 << 20, BufferKind::Device)?;
//! let b = dev.alloc(1 << 20, BufferKind::Device)?;
//! dev.copy(&b, 0, &a, 0, 1 << 20)?;
//! let records = dev.take_profile()?;
//! assert_eq!(records[0].name, "copy");
//! let trace = amd_hcq::chrome_trace(&records); // for Perfetto or chrome://tracing
//! assert!(trace.starts_with("{\"traceEvents\""));
//!
//! // A copy from memory the GPU never mapped faults; the device says so from then on.
//! let v = dev.submit_ordered(true, |w| match w {
//!     amd_hcq::Work::Copy(q) => q.copy(a.va(), 0x7f00_0000_0000u64, 64).map(|_| ()),
//!     amd_hcq::Work::Compute(_) => unreachable!(),
//! })?;
//! assert!(matches!(dev.wait_timeline(v), Err(HcqError::DeviceFault { .. })));
//! assert!(matches!(dev.health(), Err(HcqError::DeviceFault { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Two GPUs: a peer transfer, and memory of one GPU used by the other once mapped:
//!
//! ```
//! use amd_hcq::{BufferKind, Platform};
//!
//! let platform = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(2))?;
//! let (d0, d1) = (platform.device(0)?, platform.device(1)?);
//! let src = d0.alloc(4096, BufferKind::Device)?;
//! let dst = d1.alloc(4096, BufferKind::Device)?;
//! d0.copy_in_slice(&src, 0, &[7u32; 1024])?;
//! // d0's copy engine writes d1's memory after both GPUs' earlier work; d1 waits for it.
//! d0.transfer(&d1, &dst, &src, 4096)?;
//! let back: Vec<u32> = d1.copy_out_vec(&dst, 0, 1024)?;
//! assert_eq!(back[1023], 7);
//! // Using d1's memory on d0 needs it mapped there first (`transfer` mapped `dst`).
//! let other = d1.alloc(4096, BufferKind::Device)?;
//! assert!(d0.copy(&other, 0, &src, 0, 64).is_err());
//! d0.map_peer(&other)?;
//! d0.wait_timeline(d0.copy(&other, 0, &src, 0, 64)?)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Graphs over several engines and devices: see [`Graph`].
#![deny(unsafe_code)]

// The documentation's examples run on the mock GPU.
#[cfg(all(doctest, not(feature = "mock")))]
compile_error!(
    "amd-hcq's documentation examples run on the mock GPU: test them with `--features mock` \
     (the workspace's `cargo test --workspace` enables it through hcq)"
);

mod am;
mod any;
mod aql;
mod args;
mod bind;
mod codeobj;
mod copy;
mod device;
mod error;
mod fence;
mod graph;
mod health;
mod iface;
mod launch;
mod memory;
mod msgpack;
mod platform;
mod profile;
mod program;
mod queue;
mod record;
mod resources;
mod rings;
mod signal;
mod submit;
mod sym;
mod timeline;
mod trace;

pub use am::{AmIface, AmMemory, AmQueue, AmShared};
pub use amd_kfd::Spread;
pub use any::{AnyIface, AnyMemory, AnyQueue};
pub use aql::QueueFormat;
pub use args::{KernArgs, ScalarType};
pub use bind::{BoundQueue, DEFAULT_COPIES};
pub use codeobj::{ArgInfo, ArgKind, CodeObject, KernelDescriptor, KernelInfo};
pub use device::Device;
pub use error::{ArgProblem, HcqError, KernelLimit, LaunchLimit, Result};
pub use graph::{BoundGraph, Graph, Node, ReplayEnds};
pub use iface::{BufferKind, DeviceInterface, DeviceMemory, DeviceProps, HwQueue, KfdIface};
pub use launch::{LaunchDims, SymDims};
pub use memory::{Buffer, CACHE_LIMIT};
pub use platform::{Iface, Platform};
pub use profile::{Engine, GPU_CLOCK_HZ, ProfileRecord, chrome_trace};
pub use program::{DEFAULT_SCRATCH_PER_LANE, KERNARG_REGION, MAX_SCRATCH, Program};
pub use queue::{CmdList, ComputeQueue, CopyQueue, Encoding, Pm4, Sdma, Work};
pub use resources::{STAGING_COUNT, STAGING_SIZE};
pub use rings::RING_SIZE;
pub use signal::{DEFAULT_TIMEOUT, SIGNAL_SLOT, SIGNAL_SLOTS, Signal, default_timeout};
pub use sym::{Bindings, Sym, Var};
pub use timeline::{Point, TIMELINE_WRAP, TimelineHandle};

/// The mock GPU's configuration (the `mock` feature): what [`Platform::mock`] takes,
/// without a direct dependency on `amd-mockgpu`.
#[cfg(feature = "mock")]
pub mod mock {
    pub use amd_mockgpu::{ExecMode, GpuProfile, MockConfig, MockSys};
}
