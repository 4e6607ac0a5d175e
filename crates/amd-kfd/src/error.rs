//! The crate's one error type.

use std::path::PathBuf;

use nix::errno::Errno;

use crate::sys::SysError;

/// What went wrong in the KFD transport.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KfdError {
    /// A system call failed (the ioctl name, path and errno are in the inner error).
    #[error(transparent)]
    Sys(#[from] SysError),
    /// No GPU at the index asked for.
    #[error("no GPU {index}: {available} KFD GPU(s) visible{}", if *available == 0 { " (is the amdgpu driver loaded, and /dev/kfd readable?)" } else { "" })]
    NoDevice {
        /// The index asked for.
        index: usize,
        /// How many GPUs are visible.
        available: usize,
    },
    /// Topology text that does not parse.
    #[error("{}{}: {msg}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Topology {
        /// The sysfs file.
        path: PathBuf,
        /// 1-based line, where one is at fault.
        line: Option<usize>,
        /// What is wrong.
        msg: String,
    },
    /// A `VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES` value that does not select GPUs.
    #[error("{var}={value:?}: {msg}")]
    Visibility {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong.
        msg: String,
    },
    /// A GPU of a family this runtime does not drive.
    #[error("GPU {arch} (gfx_target_version {version}) is not supported: amd-hcq drives gfx10.3, gfx11 and gfx12")]
    UnsupportedTarget {
        /// The arch name, e.g. `gfx906`.
        arch: String,
        /// KFD's `gfx_target_version`.
        version: u32,
    },
    /// The KFD interface is older than this crate needs.
    #[error("KFD interface {major}.{minor} is not supported (needs 1.x)")]
    Version {
        /// Major version reported.
        major: u32,
        /// Minor version reported.
        minor: u32,
    },
    /// VRAM with CPU access could not be allocated (EINVAL from the driver).
    #[error("Cannot allocate host-visible VRAM. Ensure the resizable BAR option is enabled on your system.")]
    HostVisibleVram,
    /// The driver has no memory for the request (ENOMEM).
    #[error("Cannot allocate memory: no memory is available for {size} bytes of {kind}.")]
    OutOfMemory {
        /// Bytes asked for.
        size: u64,
        /// The kind of memory.
        kind: &'static str,
    },
    /// A caller's argument that the transport rejects before asking the driver.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The driver answered with something that cannot be right.
    #[error("unexpected answer from the driver: {0}")]
    BadReply(String),
}

impl KfdError {
    /// The errno behind a failed system call, if this is one.
    pub fn errno(&self) -> Option<Errno> {
        match self {
            KfdError::Sys(e) => Some(e.errno),
            _ => None,
        }
    }
}

/// Result of this crate.
pub type Result<T, E = KfdError> = std::result::Result<T, E>;
