//! PM4 type-3 packets for the compute (MEC) queue, as laid out in the amdgpu `nvd.h`
//! header (gfx10/gfx11).
//!
//! Header: `3 << 30 | count << 16 | opcode << 8`, where `count` is the number of body
//! dwords minus one. One exception: a NOP whose count is `0x3fff` has no body (the
//! single-dword filler the kernel driver uses).

mod decode;
mod packets;
pub mod recipes;
pub mod regs;

pub use decode::{Pm4Packet, Pm4Stream, decode};
pub use packets::*;
pub use regs::ShReg;

/// The opcodes this crate encodes and decodes (`PACKET3_*` in nvd.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    /// `PACKET3_NOP`
    Nop = 0x10,
    /// `PACKET3_DISPATCH_DIRECT`
    DispatchDirect = 0x15,
    /// `PACKET3_PRED_EXEC`
    PredExec = 0x23,
    /// `PACKET3_WAIT_REG_MEM`
    WaitRegMem = 0x3c,
    /// `PACKET3_INDIRECT_BUFFER`
    IndirectBuffer = 0x3f,
    /// `PACKET3_EVENT_WRITE`
    EventWrite = 0x46,
    /// `PACKET3_RELEASE_MEM`
    ReleaseMem = 0x49,
    /// `PACKET3_ACQUIRE_MEM`
    AcquireMem = 0x58,
    /// `PACKET3_SET_SH_REG`
    SetShReg = 0x76,
}

impl Opcode {
    /// The opcode for a header's opcode byte, if this crate knows it.
    pub const fn from_u8(op: u8) -> Option<Self> {
        Some(match op {
            0x10 => Opcode::Nop,
            0x15 => Opcode::DispatchDirect,
            0x23 => Opcode::PredExec,
            0x3c => Opcode::WaitRegMem,
            0x3f => Opcode::IndirectBuffer,
            0x46 => Opcode::EventWrite,
            0x49 => Opcode::ReleaseMem,
            0x58 => Opcode::AcquireMem,
            0x76 => Opcode::SetShReg,
            _ => return None,
        })
    }

    /// The spec name without the `PACKET3_` prefix.
    pub const fn name(self) -> &'static str {
        match self {
            Opcode::Nop => "NOP",
            Opcode::DispatchDirect => "DISPATCH_DIRECT",
            Opcode::PredExec => "PRED_EXEC",
            Opcode::WaitRegMem => "WAIT_REG_MEM",
            Opcode::IndirectBuffer => "INDIRECT_BUFFER",
            Opcode::EventWrite => "EVENT_WRITE",
            Opcode::ReleaseMem => "RELEASE_MEM",
            Opcode::AcquireMem => "ACQUIRE_MEM",
            Opcode::SetShReg => "SET_SH_REG",
        }
    }
}

/// Largest body a type-3 header can announce (`count` is 14 bits).
pub const MAX_BODY_DWORDS: usize = 0x4000;

/// The type-3 header for a packet with `body_dwords` (1..=0x4000) dwords after it.
#[inline(always)]
pub const fn header(op: Opcode, body_dwords: usize) -> u32 {
    (3 << 30) | ((((body_dwords as u32).wrapping_sub(1)) & 0x3fff) << 16) | ((op as u32) << 8)
}
