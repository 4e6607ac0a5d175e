//! PM4 (compute), SDMA (copy) and AQL ([`aql`]) command packets for AMD GPUs: typed encoders that
//! write dwords into a caller's buffer, and decoders that turn a dword stream back
//! into typed packets.
//!
//! ```text
//! amd-hcq        queues build command buffers from these packets
//!    │
//!    ├── amd-kfd / amd-am   put the dwords in hardware rings
//!    └── amd-packets        ← this crate: pure encode/decode, no I/O, no unsafe
//!
//! amd-mockgpu    consumes rings through the decoders here
//! ```
//!
//! Targets are gfx10.3 (RDNA2) and gfx11 (RDNA3), named by [`GfxTarget`]. Every
//! encoder and decoder takes the target, so a family whose layouts differ can be added
//! without reshaping the API.
//!
//! Encoders never allocate: they append to a [`CmdSink`] (a `Vec<u32>` that is reused,
//! or a fixed [`SliceSink`]). Fields that a graph replay may change later (addresses,
//! signal values, grid and block sizes, copy source and destination) have documented
//! dword offsets: each packet has a field enum whose `offset` says where the field sits
//! in what the encoder wrote, and [`patch`] rewrites them in place.
//!
//! Decoders never panic: every malformed input is a [`PacketError`] that names the
//! dword offset.
//!
//! ```
//! use amd_packets::{GfxTarget, pm4::{self, ReleaseMem}};
//!
//! let t = GfxTarget::Gfx11;
//! let mut buf = Vec::new();
//! ReleaseMem::signal(0x7ff0_0000_1000, 7).encode(t, &mut buf);
//! let line = pm4::decode(t, &buf).next().unwrap().unwrap().1.to_string();
//! assert!(line.starts_with("RELEASE_MEM"));
//! ```
#![forbid(unsafe_code)]

pub mod aql;
mod error;
pub mod patch;
pub mod pm4;
pub mod sdma;
mod sink;
mod stream;
mod target;
#[cfg(any(test, feature = "test-utils"))]
pub mod testing;

pub use error::PacketError;

/// The error the decoders return: the crate's one error type, whose decode variants
/// (`UnknownOpcode`, `Truncated`, `BadCount`, `BadPacketType`, `InvalidField`) carry the
/// dword offset.
pub type DecodeError = PacketError;
pub use sink::{CmdSink, SliceSink};
pub use stream::{Decode, Stream};
pub use target::{GfxTarget, version_from_name};

/// The clock of the timestamps the engines write (RELEASE_MEM's and SDMA TIMESTAMP's
/// GPU clock counter, an AQL completion signal's start and end): 100 MHz on gfx10.3
/// and gfx11, as tinygrad 0.10.1 takes it (it divides ticks by 100 for microseconds).
pub const TIMESTAMP_HZ: u64 = 100_000_000;

/// Splits a 64-bit value into its low and high dwords, the order packets store them in.
#[inline(always)]
pub const fn lo_hi(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

/// Joins a low and a high dword into a 64-bit value.
#[inline(always)]
pub const fn join(lo: u32, hi: u32) -> u64 {
    (lo as u64) | ((hi as u64) << 32)
}
