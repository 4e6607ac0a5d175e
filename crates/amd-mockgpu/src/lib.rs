//! A mock AMD GPU under the `Sys`/`Mmio` boundary.
//!
//! Everything above the `Sys` trait is the production path; the mock emulates the
//! kernel and the hardware beneath it, in layers that import only downwards (checked
//! by `cargo xtask modgraph --check`):
//!
//! ```text
//! amd-kfd · amd-am (the real transport code, unchanged)
//!    │  Sys: open / ioctl / mmap / munmap / read_file / list_dir / mmio / …
//!    ▼
//! os       MockSys: the Sys and Mmio the transports call (by path and descriptor),
//!          the device threads that run the engines, the test and injection API
//! driver   the kernel's model: KFD (topology, memory, events, queues), the render
//!          node (DRM sysfs and ioctls), the PCI bus (sysfs, binding, VFIO, pagemap),
//!          user-memory copies; it runs the engines and turns what they report into
//!          events
//! pci      the PCI GPU's hardware (module [`pci`]): the BAR 5 register file and its
//!          blocks (NBIO, RLC, GMC, IH, PSP, SMU, HQD/SDMA ring registers), IP
//!          discovery, firmware
//! engine   the command processors: a PM4 engine per compute ring, an SDMA engine per
//!          copy ring; each DISPATCH_DIRECT goes to a [`KernelExecutor`] — by default
//!          [`Rdna3Executor`], amd-isa's RDNA3 interpreter
//! mem      the GPU's view of memory: checked address spaces, PCI GPUs' memory through
//!          their GMC ([`pci::gmc::Translate`]), streaming copies
//! ```
//!
//! Paths the mock does not emulate fall through to the host only for reads outside
//! `/dev` and `/sys`.
//!
//! The real KFD transport, opened on two mock GPUs:
//!
//! ```
//! use std::sync::Arc;
//! use amd_mockgpu::{MockConfig, MockSys};
//!
//! let sys = Arc::new(MockSys::new(MockConfig::gfx1100s(2)));
//! let kfd = amd_kfd::Kfd::open(sys.clone())?;
//! assert_eq!(kfd.gpus().len(), 2);
//! let dev = amd_kfd::KfdDevice::open(&kfd, 0)?;
//! let mem = dev.alloc(4096, amd_kfd::MemoryKind::UNCACHED)?;
//! mem.write(0, &[1, 2, 3])?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]

// The layers, each using only those below it (`cargo xtask modgraph --check`):
//   os      the OS boundary: MockSys (Sys, Mmio), the device threads, the test API
//   driver  the kernel's model: KFD, DRM, the PCI bus, VFIO, pagemap
//   pci     the PCI GPU's hardware model: registers, PSP, SMU, GMC, IH, HQDs
//   engine  the command processors: PM4, SDMA; kernels run on amd-isa
//   mem     address spaces, GPU memory accesses, PCI GPU memory, page ranges
mod driver;
mod engine;
mod mem;
mod os;
pub mod pci;

pub use amd_isa::MemoryFault;
pub use driver::bus::{PCI_DEVICES, PM_PFN_MASK, PM_PRESENT, PciDeviceInfo, PciDriver, PciRing};
pub use driver::drm;
pub use driver::profile::{GpuProfile, HSA_CAP_SVMAPI_SUPPORTED};
pub use driver::{GPU_CLOCK_HZ, QueueInfo, SdmaQueue};
pub use drm::{DRM_MAJOR, PciIdentity};
pub use engine::executor::{
    DispatchInfo, GpuMemory, KernelError, KernelExecutor, NoKernels, Rdna3Executor, SharedMemory,
};
pub use engine::{Engine, QueueCounters, QueueState, QueueStatus, SLICE_BYTES, describe_fault};
pub use mem::MemResult;
pub use mem::sanitize::{
    GUARD_BYTES as SANITIZER_GUARD_BYTES, QUARANTINE_BYTES as SANITIZER_QUARANTINE_BYTES,
    QUARANTINE_RANGES as SANITIZER_QUARANTINE_RANGES,
};
pub use os::{BLOCKED_POLL_MAX, DEFAULT_IDLE_POLL, ExecMode, MockConfig, MockStats, MockSys, PciFault, Shared};
pub use pci::{PciFirmware, PciProfile};
