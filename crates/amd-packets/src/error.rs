//! The crate's one error type.

/// Why a packet could not be built or a stream could not be decoded.
///
/// Decode errors carry `offset`, the dword index in the decoded stream where the
/// offending packet starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PacketError {
    /// A KFD `gfx_target_version` outside the supported families.
    #[error("unsupported GPU target version {version} (supported: gfx10.3 = 1003xx, gfx11 = 110xxx)")]
    UnsupportedTarget {
        /// The version asked for.
        version: u32,
    },
    /// A processor name that is not of the form `gfx<major><minor><stepping>`.
    #[error("{name:?} is not a GPU processor name such as gfx1100")]
    BadTargetName {
        /// The name given.
        name: String,
    },
    /// A value does not fit the field that carries it.
    #[error("{packet}: {field} = {value:#x} is out of range ({limit})")]
    FieldRange {
        /// Packet name, as in the spec (`SDMA_COPY_LINEAR`).
        packet: &'static str,
        /// Field name.
        field: &'static str,
        /// The rejected value.
        value: u64,
        /// What the field accepts.
        limit: &'static str,
    },
    /// The stream ends inside a packet.
    #[error("truncated {packet} at dword {offset}: needs {needed} dwords, {available} left")]
    Truncated {
        /// Dword offset of the packet header.
        offset: usize,
        /// Packet name (or `header`).
        packet: &'static str,
        /// Dwords the packet needs, header included.
        needed: usize,
        /// Dwords left in the stream from the header on.
        available: usize,
    },
    /// An opcode this decoder does not know.
    #[error("unknown {engine} opcode {opcode:#x} (sub-op {sub_op:#x}) at dword {offset}, header {header:#010x}")]
    UnknownOpcode {
        /// Dword offset of the packet header.
        offset: usize,
        /// `PM4` or `SDMA`.
        engine: &'static str,
        /// The opcode.
        opcode: u8,
        /// The SDMA sub-opcode (0 for PM4).
        sub_op: u8,
        /// The whole header dword.
        header: u32,
    },
    /// A PM4 header whose type is not 3.
    #[error("PM4 packet type {ty} at dword {offset} is not supported (header {header:#010x}); only type-3 packets are")]
    BadPacketType {
        /// Dword offset of the header.
        offset: usize,
        /// The packet type (bits 31:30).
        ty: u8,
        /// The whole header dword.
        header: u32,
    },
    /// The header's body length does not match what the packet has.
    #[error("{packet} at dword {offset} has a body of {count} dwords, expected {expected}")]
    BadCount {
        /// Dword offset of the header.
        offset: usize,
        /// Packet name.
        packet: &'static str,
        /// Body dwords the header announces.
        count: usize,
        /// What the packet needs.
        expected: &'static str,
    },
    /// A field holds a value the packet does not define.
    #[error("{packet} at dword {offset}: {field} = {value:#x} is not a valid value")]
    InvalidField {
        /// Dword offset of the header.
        offset: usize,
        /// Packet name.
        packet: &'static str,
        /// Field name.
        field: &'static str,
        /// The value found.
        value: u32,
    },
    /// A patch would write outside the command buffer.
    #[error("patch at dword {offset} (+{len}) is outside a buffer of {buf_len} dwords")]
    PatchOutOfBounds {
        /// Requested dword offset.
        offset: usize,
        /// Dwords the patch writes.
        len: usize,
        /// Length of the buffer.
        buf_len: usize,
    },
}

impl PacketError {
    /// The header dword at the start of `words`, or the error an empty stream gives.
    pub(crate) fn header(words: &[u32]) -> Result<u32, Self> {
        words.first().copied().ok_or(PacketError::Truncated {
            offset: 0,
            packet: "header",
            needed: 1,
            available: 0,
        })
    }

    /// A field a decoder does not accept, at offset 0 of the packet.
    pub(crate) fn invalid(packet: &'static str, field: &'static str, value: u32) -> Self {
        PacketError::InvalidField {
            offset: 0,
            packet,
            field,
            value,
        }
    }

    /// The same error with its stream offset moved by `base` (used when a packet is
    /// decoded from a sub-slice of a larger stream).
    pub fn rebased(self, base: usize) -> Self {
        use PacketError::*;
        match self {
            Truncated {
                offset,
                packet,
                needed,
                available,
            } => Truncated {
                offset: offset + base,
                packet,
                needed,
                available,
            },
            UnknownOpcode {
                offset,
                engine,
                opcode,
                sub_op,
                header,
            } => UnknownOpcode {
                offset: offset + base,
                engine,
                opcode,
                sub_op,
                header,
            },
            BadPacketType { offset, ty, header } => BadPacketType {
                offset: offset + base,
                ty,
                header,
            },
            BadCount {
                offset,
                packet,
                count,
                expected,
            } => BadCount {
                offset: offset + base,
                packet,
                count,
                expected,
            },
            InvalidField {
                offset,
                packet,
                field,
                value,
            } => InvalidField {
                offset: offset + base,
                packet,
                field,
                value,
            },
            other => other,
        }
    }

    /// The dword offset a decode error points at, if it is one.
    pub fn offset(&self) -> Option<usize> {
        use PacketError::*;
        match *self {
            Truncated { offset, .. }
            | UnknownOpcode { offset, .. }
            | BadPacketType { offset, .. }
            | BadCount { offset, .. }
            | InvalidField { offset, .. } => Some(offset),
            _ => None,
        }
    }
}
