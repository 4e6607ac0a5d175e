//! The runtime's one error type.

use amd_kfd::KfdError;
use amd_packets::PacketError;

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HcqError {
    /// The transport failed (an ioctl, a mapping, an allocation).
    #[error(transparent)]
    Transport(#[from] KfdError),
    /// A packet could not be encoded.
    #[error(transparent)]
    Packet(#[from] PacketError),
    /// A wait timed out: the GPU did not reach the value. Carries the transport's fault
    /// report (MMU fault address and reason, if any).
    #[error("device hang: waited {waited_ms} ms for signal value {wanted}, it is {current}{}", if report.is_empty() { String::new() } else { format!("\n{}", report.join("\n")) })]
    DeviceHang {
        /// The value waited for.
        wanted: u64,
        /// The value found.
        current: u64,
        /// How long the wait lasted.
        waited_ms: u64,
        /// The transport's report, one line per fault.
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
