//! The runtime's one error type.

use amd_kfd::KfdError;
use amd_packets::PacketError;

/// What went wrong.
///
/// Misuse is refused before anything reaches the GPU, with the values involved:
///
/// ```
/// use amd_hcq::{BufferKind, HcqError, KernArgs, LaunchDims, Platform, Program};
///
/// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
/// let elf = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/kernels/saxpy.hsaco"))?;
/// let saxpy = Program::load(&dev, &elf, "saxpy")?;
/// let (x, y) = (dev.alloc(64, BufferKind::Device)?, dev.alloc(64, BufferKind::Device)?);
/// // saxpy's third argument is a float: an integer there is refused, naming both.
/// let wrong = KernArgs::new().buffer(&x).buffer(&y).i32(2).u32(16);
/// match saxpy.enqueue(&wrong, LaunchDims::linear(16, 256)) {
///     Err(HcqError::InvalidArgument(msg)) => assert!(msg.contains("float"), "{msg}"),
///     other => panic!("{other:?}"),
/// }
/// let right = KernArgs::new().buffer(&x).buffer(&y).f32(2.0).u32(16);
/// dev.wait_timeline(saxpy.enqueue(&right, LaunchDims::linear(16, 256))?)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HcqError {
    /// The transport failed (an ioctl, a mapping, an allocation).
    #[error(transparent)]
    Transport(#[from] KfdError),
    /// The driverless transport failed (a register wait, the page tables, VRAM
    /// exhausted, a ring its registers cannot describe, a system call).
    #[error(transparent)]
    Pci(#[from] amd_am::AmError),
    /// A packet could not be encoded.
    #[error(transparent)]
    Packet(#[from] PacketError),
    /// A wait timed out: the value did not come in time, and the device reports
    /// nothing wrong (a long kernel, or work waiting on a signal nobody sets).
    #[error("timeout: waited {waited_ms} ms for {what} to reach {wanted}, it is {current}")]
    Timeout {
        /// What was waited for (`the timeline of GPU 0`, `a signal`, `room in the compute ring`).
        what: String,
        /// The value waited for.
        wanted: u64,
        /// The value found.
        current: u64,
        /// How long the wait lasted.
        waited_ms: u64,
    },
    /// The device faulted (a memory fault, a hardware exception, a queue the
    /// engine stopped). Sticky: every later operation on the device returns it at
    /// once, until the device is dropped and opened again.
    #[error("GPU {device} faulted{}{}", match kernel { Some(k) => format!(" in {k}"), None => String::new() }, if report.is_empty() { String::new() } else { format!("\n{}", report.join("\n")) })]
    DeviceFault {
        /// Index of the device.
        device: usize,
        /// The kernel or copy that was running, where the runtime can tell.
        kernel: Option<String>,
        /// The transport's report, one line per fault (address, reason, the stopped
        /// queue's instruction or packet where known).
        report: Vec<String>,
    },
    /// No GPU to open, and what can be done about it.
    #[error("{0}")]
    NoDevice(String),
    /// A caller's argument the runtime rejects.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

/// Result of the runtime.
pub type Result<T, E = HcqError> = std::result::Result<T, E>;
