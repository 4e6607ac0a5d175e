//! SDMA packets for the copy queue, as laid out in the amdgpu
//! `navi10_sdma_pkt_open.h` (SDMA 5.x, gfx10.3) and `sdma_v6_0_0_pkt_open.h` (SDMA 6,
//! gfx11) headers.
//!
//! Header: `op` in bits 7:0, `sub_op` in bits 15:8, packet-specific fields above.
//! A zero dword is a one-dword NOP, which is how ring tails are padded.

mod decode;
mod packets;

pub use decode::{SdmaPacket, SdmaStream, decode};
pub use packets::*;

/// The opcodes this crate encodes and decodes (`SDMA_OP_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    /// `SDMA_OP_NOP`
    Nop = 0,
    /// `SDMA_OP_COPY`
    Copy = 1,
    /// `SDMA_OP_INDIRECT`
    Indirect = 4,
    /// `SDMA_OP_FENCE`
    Fence = 5,
    /// `SDMA_OP_TRAP`
    Trap = 6,
    /// `SDMA_OP_POLL_REGMEM`
    PollRegmem = 8,
    /// `SDMA_OP_ATOMIC`
    Atomic = 10,
    /// `SDMA_OP_CONST_FILL`
    ConstFill = 11,
    /// `SDMA_OP_TIMESTAMP`
    Timestamp = 13,
    /// `SDMA_OP_GCR_REQ`
    GcrReq = 17,
}

/// `SDMA_SUBOP_COPY_LINEAR`
pub const SUBOP_COPY_LINEAR: u8 = 0;
/// `SDMA_SUBOP_TIMESTAMP_GET_GLOBAL`
pub const SUBOP_TIMESTAMP_GET_GLOBAL: u8 = 2;

/// Largest copy or fill one packet does: 4 MiB (`copy_max_bytes` of the amdgpu SDMA
/// 5.2 and 6.0 drivers; the SDMA 5 count field is 22 bits).
pub const MAX_BYTES_PER_PACKET: u32 = 0x40_0000;

/// The header dword: `op | sub_op << 8 | fields`.
#[inline(always)]
pub const fn header(op: Opcode, sub_op: u8, fields: u32) -> u32 {
    (op as u32) | ((sub_op as u32) << 8) | fields
}
