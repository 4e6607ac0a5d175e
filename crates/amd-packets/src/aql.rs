//! HSA AQL packets: the 64-byte packets of an AQL queue (HSA Platform System
//! Architecture 1.2, section 2.9), AMD's vendor-specific PM4-IB packet, and the
//! layouts of the two structures the command processor reads and writes beside them,
//! `amd_queue_t` and `amd_signal_t` (ROCr's `amd_hsa_queue.h`, `amd_hsa_signal.h`).
//!
//! ```
//! use amd_packets::aql::{FenceScope, Header, KernelDispatch, Packet, PacketType};
//!
//! let d = KernelDispatch {
//!     header: Header::new(PacketType::KernelDispatch).barrier().fences(FenceScope::System),
//!     dimensions: 1,
//!     workgroup_size: [64, 1, 1],
//!     grid_size: [4096, 1, 1],
//!     private_segment_size: 0,
//!     group_segment_size: 0,
//!     kernel_object: 0x7000_0000,
//!     kernarg_address: 0x7100_0000,
//!     completion_signal: 0,
//! };
//! let words = d.to_dwords();
//! assert_eq!(Packet::decode(amd_packets::GfxTarget::Gfx11, &words), Ok(Packet::KernelDispatch(d)));
//! ```

use crate::pm4::{IndirectBuffer, Pm4Packet};
use crate::{GfxTarget, PacketError, lo_hi};

/// Bytes of a packet.
pub const PACKET_BYTES: usize = 64;
/// Dwords of a packet.
pub const PACKET_DWORDS: usize = 16;

/// `hsa_packet_type_t`: the header's bits 7:0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketType {
    /// `HSA_PACKET_TYPE_VENDOR_SPECIFIC`: the vendor's format follows in bits 31:16.
    VendorSpecific = 0,
    /// `HSA_PACKET_TYPE_INVALID`: the slot holds no packet (yet, or any more).
    Invalid = 1,
    /// `HSA_PACKET_TYPE_KERNEL_DISPATCH`
    KernelDispatch = 2,
    /// `HSA_PACKET_TYPE_BARRIER_AND`
    BarrierAnd = 3,
    /// `HSA_PACKET_TYPE_AGENT_DISPATCH`: for agents that run host functions, not GPUs.
    AgentDispatch = 4,
    /// `HSA_PACKET_TYPE_BARRIER_OR`
    BarrierOr = 5,
}

impl PacketType {
    /// The type of header bits 7:0, if it is one.
    pub const fn from_bits(v: u8) -> Option<Self> {
        Some(match v {
            0 => PacketType::VendorSpecific,
            1 => PacketType::Invalid,
            2 => PacketType::KernelDispatch,
            3 => PacketType::BarrierAnd,
            4 => PacketType::AgentDispatch,
            5 => PacketType::BarrierOr,
            _ => return None,
        })
    }
}

/// `hsa_fence_scope_t`: which memory an acquire or release fence makes coherent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum FenceScope {
    /// No fence.
    #[default]
    None = 0,
    /// The agent's own memory (its caches against its other queues).
    Agent = 1,
    /// All agents and the host.
    System = 2,
}

impl FenceScope {
    const fn from_bits(v: u16) -> Option<Self> {
        match v {
            0 => Some(FenceScope::None),
            1 => Some(FenceScope::Agent),
            2 => Some(FenceScope::System),
            _ => None,
        }
    }
}

/// A packet's 16-bit header: its type, the barrier bit, and its acquire and release
/// fence scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Bits 7:0.
    pub ty: PacketType,
    /// Bit 8: the packet starts only once every earlier packet of the queue completed.
    pub barrier: bool,
    /// Bits 10:9: the fence before the packet starts.
    pub acquire: FenceScope,
    /// Bits 12:11: the fence after it completes.
    pub release: FenceScope,
}

/// Header bit of the barrier flag.
pub const HEADER_BARRIER: u16 = 1 << 8;

impl Header {
    /// A header of type `ty`, no barrier, no fences.
    pub const fn new(ty: PacketType) -> Self {
        Header {
            ty,
            barrier: false,
            acquire: FenceScope::None,
            release: FenceScope::None,
        }
    }

    /// The same header with its barrier bit set.
    pub const fn barrier(mut self) -> Self {
        self.barrier = true;
        self
    }

    /// The same header with both fences of `scope`.
    pub const fn fences(mut self, scope: FenceScope) -> Self {
        self.acquire = scope;
        self.release = scope;
        self
    }

    /// The 16 bits.
    pub const fn to_bits(self) -> u16 {
        self.ty as u16 | (self.barrier as u16) << 8 | (self.acquire as u16) << 9 | (self.release as u16) << 11
    }

    /// The header of 16 bits; bits 15:13 must be zero.
    pub fn from_bits(v: u16) -> Result<Self, PacketError> {
        let bad = |field, value| PacketError::invalid("AQL header", field, value as u32);
        let ty = PacketType::from_bits(v as u8).ok_or(bad("type", v & 0xff))?;
        let acquire = FenceScope::from_bits(v >> 9 & 3).ok_or(bad("acquire fence scope", v >> 9 & 3))?;
        let release = FenceScope::from_bits(v >> 11 & 3).ok_or(bad("release fence scope", v >> 11 & 3))?;
        if v >> 13 != 0 {
            return Err(bad("reserved bits 15:13", v >> 13));
        }
        Ok(Header {
            ty,
            barrier: v & HEADER_BARRIER != 0,
            acquire,
            release,
        })
    }
}

/// `hsa_kernel_dispatch_packet_t`: runs a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelDispatch {
    /// The header (type [`PacketType::KernelDispatch`]).
    pub header: Header,
    /// `setup.dimensions`: 1 to 3.
    pub dimensions: u8,
    /// Work-items per workgroup in x, y, z (unused dimensions 1).
    pub workgroup_size: [u16; 3],
    /// Work-items in the grid in x, y, z (not workgroups; a last workgroup may be
    /// partial).
    pub grid_size: [u32; 3],
    /// Bytes of private (scratch) memory per work-item.
    pub private_segment_size: u32,
    /// Bytes of group (LDS) memory per workgroup, the dynamic part included.
    pub group_segment_size: u32,
    /// Address of the kernel's 64-byte kernel descriptor.
    pub kernel_object: u64,
    /// Address of the kernel arguments.
    pub kernarg_address: u64,
    /// The `amd_signal_t` decremented on completion (0: none).
    pub completion_signal: u64,
}

impl KernelDispatch {
    /// The packet's dwords.
    pub const fn to_dwords(&self) -> [u32; PACKET_DWORDS] {
        let [wx, wy, wz] = self.workgroup_size;
        let [ko_lo, ko_hi] = lo_hi(self.kernel_object);
        let [ka_lo, ka_hi] = lo_hi(self.kernarg_address);
        let [cs_lo, cs_hi] = lo_hi(self.completion_signal);
        [
            self.header.to_bits() as u32 | (self.dimensions as u32 & 3) << 16,
            wx as u32 | (wy as u32) << 16,
            wz as u32,
            self.grid_size[0],
            self.grid_size[1],
            self.grid_size[2],
            self.private_segment_size,
            self.group_segment_size,
            ko_lo,
            ko_hi,
            ka_lo,
            ka_hi,
            0,
            0,
            cs_lo,
            cs_hi,
        ]
    }
}

/// The 64-byte kernel descriptor a dispatch's `kernel_object` points at
/// (`llvm::amdhsa::kernel_descriptor_t`, code object v3 and later; LLVM's AMDGPUUsage,
/// "Kernel Descriptor"): what the runtime reads from a code object and the command
/// processor reads at a dispatch. The fields the command processor and the runtime
/// use; the reserved bytes are zero in every code object LLVM writes.
///
/// ```
/// use amd_packets::aql::KernelDescriptor;
///
/// let kd = KernelDescriptor {
///     group_segment_size: 1024,
///     kernarg_size: 24,
///     entry_offset: 0x1000 - 0x40,
///     rsrc1: 0x60af_0000,
///     properties: KernelDescriptor::KERNARG_SEGMENT_PTR | KernelDescriptor::WAVEFRONT_SIZE32,
///     ..KernelDescriptor::default()
/// };
/// assert_eq!(KernelDescriptor::from_bytes(&kd.to_bytes()), kd);
/// assert!(kd.has(KernelDescriptor::WAVEFRONT_SIZE32));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KernelDescriptor {
    /// `GROUP_SEGMENT_FIXED_SIZE` (byte 0): LDS bytes.
    pub group_segment_size: u32,
    /// `PRIVATE_SEGMENT_FIXED_SIZE` (byte 4): scratch bytes per work-item.
    pub private_segment_size: u32,
    /// `KERNARG_SIZE` (byte 8).
    pub kernarg_size: u32,
    /// `KERNEL_CODE_ENTRY_BYTE_OFFSET` (byte 16): the code's address less the
    /// descriptor's.
    pub entry_offset: i64,
    /// `COMPUTE_PGM_RSRC3` (byte 44).
    pub rsrc3: u32,
    /// `COMPUTE_PGM_RSRC1` (byte 48).
    pub rsrc1: u32,
    /// `COMPUTE_PGM_RSRC2` (byte 52).
    pub rsrc2: u32,
    /// `KERNEL_CODE_PROPERTIES` (byte 56): the bits below.
    pub properties: u16,
}

impl KernelDescriptor {
    /// Its size in bytes; a descriptor sits on a 64-byte boundary.
    pub const BYTES: usize = 64;
    /// `ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER`. The user SGPRs these bits ask for are
    /// loaded in the order of the bits, lowest first.
    pub const PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
    /// `ENABLE_SGPR_DISPATCH_PTR`
    pub const DISPATCH_PTR: u16 = 1 << 1;
    /// `ENABLE_SGPR_QUEUE_PTR`
    pub const QUEUE_PTR: u16 = 1 << 2;
    /// `ENABLE_SGPR_KERNARG_SEGMENT_PTR`
    pub const KERNARG_SEGMENT_PTR: u16 = 1 << 3;
    /// `ENABLE_SGPR_DISPATCH_ID`
    pub const DISPATCH_ID: u16 = 1 << 4;
    /// `ENABLE_SGPR_FLAT_SCRATCH_INIT`
    pub const FLAT_SCRATCH_INIT: u16 = 1 << 5;
    /// `ENABLE_SGPR_PRIVATE_SEGMENT_SIZE`
    pub const PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
    /// `ENABLE_WAVEFRONT_SIZE32`
    pub const WAVEFRONT_SIZE32: u16 = 1 << 10;

    /// Reads the descriptor's 64 bytes (any 64 bytes are a descriptor).
    pub fn from_bytes(b: &[u8; Self::BYTES]) -> Self {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let mut entry = [0u8; 8];
        entry.copy_from_slice(&b[16..24]);
        KernelDescriptor {
            group_segment_size: u32_at(0),
            private_segment_size: u32_at(4),
            kernarg_size: u32_at(8),
            entry_offset: i64::from_le_bytes(entry),
            rsrc3: u32_at(44),
            rsrc1: u32_at(48),
            rsrc2: u32_at(52),
            properties: u16::from_le_bytes([b[56], b[57]]),
        }
    }

    /// The descriptor's 64 bytes, the fields it does not hold zero.
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        let mut put = |o: usize, v: &[u8]| b[o..o + v.len()].copy_from_slice(v);
        put(0, &self.group_segment_size.to_le_bytes());
        put(4, &self.private_segment_size.to_le_bytes());
        put(8, &self.kernarg_size.to_le_bytes());
        put(16, &self.entry_offset.to_le_bytes());
        put(44, &self.rsrc3.to_le_bytes());
        put(48, &self.rsrc1.to_le_bytes());
        put(52, &self.rsrc2.to_le_bytes());
        put(56, &self.properties.to_le_bytes());
        b
    }

    /// Whether a property bit is set.
    pub fn has(&self, bit: u16) -> bool {
        self.properties & bit != 0
    }
}

/// Whether a barrier packet waits for all its signals or for any one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    /// `hsa_barrier_and_packet_t`: every dependent signal at 0.
    And,
    /// `hsa_barrier_or_packet_t`: any dependent signal at 0.
    Or,
}

/// A barrier-AND or barrier-OR packet: waits on up to five signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Barrier {
    /// The header (type [`PacketType::BarrierAnd`] or [`PacketType::BarrierOr`]).
    pub header: Header,
    /// `dep_signal[5]`: the `amd_signal_t`s waited on (0: an unused slot).
    pub dep_signals: [u64; 5],
    /// The signal decremented on completion (0: none).
    pub completion_signal: u64,
}

impl Barrier {
    /// Which barrier it is.
    pub const fn kind(&self) -> BarrierKind {
        match self.header.ty {
            PacketType::BarrierOr => BarrierKind::Or,
            _ => BarrierKind::And,
        }
    }

    /// The packet's dwords.
    pub const fn to_dwords(&self) -> [u32; PACKET_DWORDS] {
        let mut w = [0u32; PACKET_DWORDS];
        w[0] = self.header.to_bits() as u32;
        let mut i = 0;
        while i < 5 {
            let [lo, hi] = lo_hi(self.dep_signals[i]);
            w[2 + 2 * i] = lo;
            w[3 + 2 * i] = hi;
            i += 1;
        }
        let [lo, hi] = lo_hi(self.completion_signal);
        w[14] = lo;
        w[15] = hi;
        w
    }
}

/// AMD's vendor-specific format of a PM4 indirect buffer (`AMD_AQL_FORMAT_PM4_IB`).
pub const AMD_AQL_FORMAT_PM4_IB: u16 = 1;

/// `amd_aql_pm4_ib_packet_t`: runs a PM4 indirect buffer in the queue's order (the
/// vendor-specific packet tinygrad and ROCr use for PM4 work on an AQL queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pm4Ib {
    /// The header (type [`PacketType::VendorSpecific`]).
    pub header: Header,
    /// The PM4 `INDIRECT_BUFFER` packet the command processor runs.
    pub ib: IndirectBuffer,
    /// `dw_count_remain`: dwords of the packet after the embedded PM4 packet, as the
    /// command processor skips them (10).
    pub dw_count_remain: u32,
    /// The signal decremented on completion (0: none).
    pub completion_signal: u64,
}

impl Pm4Ib {
    /// `dw_count_remain` of a well-formed packet.
    pub const DW_COUNT_REMAIN: u32 = 10;

    /// A packet running the IB of `size_dwords` at `addr`.
    pub fn new(header: Header, addr: u64, size_dwords: u32, completion_signal: u64) -> Result<Self, PacketError> {
        Ok(Pm4Ib {
            header,
            ib: IndirectBuffer::new(addr, size_dwords)?,
            dw_count_remain: Self::DW_COUNT_REMAIN,
            completion_signal,
        })
    }

    /// The packet's dwords.
    pub fn to_dwords(&self, target: GfxTarget) -> [u32; PACKET_DWORDS] {
        let mut w = [0u32; PACKET_DWORDS];
        w[0] = self.header.to_bits() as u32 | (AMD_AQL_FORMAT_PM4_IB as u32) << 16;
        w[1..5].copy_from_slice(&self.ib.to_dwords(target));
        w[5] = self.dw_count_remain;
        let [lo, hi] = lo_hi(self.completion_signal);
        w[14] = lo;
        w[15] = hi;
        w
    }
}

/// AMD's vendor-specific format of a wait on a signal's value
/// (`AMD_AQL_FORMAT_BARRIER_VALUE`).
pub const AMD_AQL_FORMAT_BARRIER_VALUE: u16 = 2;

/// `hsa_signal_condition32_t`: how a [`BarrierValue`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Condition {
    /// `HSA_SIGNAL_CONDITION_EQ`
    Eq = 0,
    /// `HSA_SIGNAL_CONDITION_NE`
    Ne = 1,
    /// `HSA_SIGNAL_CONDITION_LT`
    Lt = 2,
    /// `HSA_SIGNAL_CONDITION_GTE`
    Gte = 3,
}

impl Condition {
    /// Whether `lhs` (the masked signal value) stands in this relation to `rhs`,
    /// compared signed.
    pub const fn holds(self, lhs: i64, rhs: i64) -> bool {
        match self {
            Condition::Eq => lhs == rhs,
            Condition::Ne => lhs != rhs,
            Condition::Lt => lhs < rhs,
            Condition::Gte => lhs >= rhs,
        }
    }
}

/// `hsa_amd_barrier_value_packet_t`: waits until a signal's value, masked, stands in
/// `cond` to `value` (HIP's stream waits and markers on gfx90a and gfx94x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BarrierValue {
    /// The header (type [`PacketType::VendorSpecific`]).
    pub header: Header,
    /// The `amd_signal_t` waited on (0: none, the wait holds at once).
    pub signal: u64,
    /// The value compared with.
    pub value: i64,
    /// The mask applied to the signal's value first.
    pub mask: i64,
    /// The comparison.
    pub cond: Condition,
    /// The signal decremented on completion (0: none).
    pub completion_signal: u64,
}

impl BarrierValue {
    /// The packet's dwords.
    pub const fn to_dwords(&self) -> [u32; PACKET_DWORDS] {
        let mut w = [0u32; PACKET_DWORDS];
        w[0] = self.header.to_bits() as u32 | (AMD_AQL_FORMAT_BARRIER_VALUE as u32) << 16;
        let [s0, s1] = lo_hi(self.signal);
        let [v0, v1] = lo_hi(self.value as u64);
        let [m0, m1] = lo_hi(self.mask as u64);
        let [c0, c1] = lo_hi(self.completion_signal);
        w[2] = s0;
        w[3] = s1;
        w[4] = v0;
        w[5] = v1;
        w[6] = m0;
        w[7] = m1;
        w[8] = self.cond as u32;
        w[14] = c0;
        w[15] = c1;
        w
    }
}

/// `hsa_agent_dispatch_packet_t`: a function call for an agent that runs them (a
/// host agent). Decoded so that a GPU queue can name what it refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgentDispatch {
    /// The header (type [`PacketType::AgentDispatch`]).
    pub header: Header,
    /// The function's number.
    pub function: u16,
    /// Where the result goes.
    pub return_address: u64,
    /// The four arguments.
    pub args: [u64; 4],
    /// The signal decremented on completion (0: none).
    pub completion_signal: u64,
}

/// A decoded packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Packet {
    /// The slot holds no packet: the packet processor waits for its header.
    Invalid(Header),
    /// A kernel dispatch.
    KernelDispatch(KernelDispatch),
    /// A barrier-AND or barrier-OR.
    Barrier(Barrier),
    /// AMD's PM4 indirect buffer.
    Pm4Ib(Pm4Ib),
    /// AMD's wait on a signal's value.
    BarrierValue(BarrierValue),
    /// An agent dispatch.
    AgentDispatch(AgentDispatch),
}

const fn qword(w: &[u32; PACKET_DWORDS], i: usize) -> u64 {
    w[i] as u64 | (w[i + 1] as u64) << 32
}

impl Packet {
    /// Decodes the 16 dwords of a packet. `target` decodes the PM4 packet a vendor
    /// packet embeds.
    pub fn decode(target: GfxTarget, words: &[u32]) -> Result<Packet, PacketError> {
        let w: &[u32; PACKET_DWORDS] =
            words
                .get(..PACKET_DWORDS)
                .and_then(|w| w.try_into().ok())
                .ok_or(PacketError::Truncated {
                    offset: 0,
                    packet: "AQL packet",
                    needed: PACKET_DWORDS,
                    available: words.len(),
                })?;
        let header = Header::from_bits(w[0] as u16)?;
        let completion_signal = qword(w, 14);
        Ok(match header.ty {
            PacketType::Invalid => Packet::Invalid(header),
            PacketType::KernelDispatch => {
                let dimensions = (w[0] >> 16 & 3) as u8;
                if dimensions == 0 || w[0] >> 18 != 0 {
                    return Err(PacketError::invalid("AQL kernel dispatch", "setup", w[0] >> 16));
                }
                let workgroup_size = [w[1] as u16, (w[1] >> 16) as u16, w[2] as u16];
                if w[2] >> 16 != 0 {
                    return Err(PacketError::invalid("AQL kernel dispatch", "reserved0", w[2] >> 16));
                }
                Packet::KernelDispatch(KernelDispatch {
                    header,
                    dimensions,
                    workgroup_size,
                    grid_size: [w[3], w[4], w[5]],
                    private_segment_size: w[6],
                    group_segment_size: w[7],
                    kernel_object: qword(w, 8),
                    kernarg_address: qword(w, 10),
                    completion_signal,
                })
            }
            PacketType::BarrierAnd | PacketType::BarrierOr => {
                let mut dep_signals = [0u64; 5];
                for (i, d) in dep_signals.iter_mut().enumerate() {
                    *d = qword(w, 2 + 2 * i);
                }
                Packet::Barrier(Barrier {
                    header,
                    dep_signals,
                    completion_signal,
                })
            }
            PacketType::AgentDispatch => Packet::AgentDispatch(AgentDispatch {
                header,
                function: (w[0] >> 16) as u16,
                return_address: qword(w, 2),
                args: [qword(w, 4), qword(w, 6), qword(w, 8), qword(w, 10)],
                completion_signal,
            }),
            PacketType::VendorSpecific => {
                let format = (w[0] >> 16) as u16;
                if format == AMD_AQL_FORMAT_BARRIER_VALUE {
                    let cond = match w[8] {
                        0 => Condition::Eq,
                        1 => Condition::Ne,
                        2 => Condition::Lt,
                        3 => Condition::Gte,
                        c => return Err(PacketError::invalid("AMD barrier-value packet", "cond", c)),
                    };
                    return Ok(Packet::BarrierValue(BarrierValue {
                        header,
                        signal: qword(w, 2),
                        value: qword(w, 4) as i64,
                        mask: qword(w, 6) as i64,
                        cond,
                        completion_signal,
                    }));
                }
                if format != AMD_AQL_FORMAT_PM4_IB {
                    return Err(PacketError::invalid(
                        "AQL vendor-specific packet",
                        "AMD format",
                        format as u32,
                    ));
                }
                let ib = match Pm4Packet::decode(target, &w[1..5]).map_err(|e| e.rebased(1))? {
                    (Pm4Packet::IndirectBuffer(ib), 4) => ib,
                    (_, _) => {
                        return Err(PacketError::InvalidField {
                            offset: 1,
                            packet: "AMD PM4-IB packet",
                            field: "PM4 command (INDIRECT_BUFFER expected)",
                            value: w[1],
                        });
                    }
                };
                Packet::Pm4Ib(Pm4Ib {
                    header,
                    ib,
                    dw_count_remain: w[5],
                    completion_signal,
                })
            }
        })
    }

    /// The packet's header.
    pub const fn header(&self) -> Header {
        match self {
            Packet::Invalid(h) => *h,
            Packet::KernelDispatch(p) => p.header,
            Packet::Barrier(p) => p.header,
            Packet::Pm4Ib(p) => p.header,
            Packet::BarrierValue(p) => p.header,
            Packet::AgentDispatch(p) => p.header,
        }
    }

    /// The signal the packet decrements on completion (0: none).
    pub const fn completion_signal(&self) -> u64 {
        match self {
            Packet::Invalid(_) => 0,
            Packet::KernelDispatch(p) => p.completion_signal,
            Packet::Barrier(p) => p.completion_signal,
            Packet::Pm4Ib(p) => p.completion_signal,
            Packet::BarrierValue(p) => p.completion_signal,
            Packet::AgentDispatch(p) => p.completion_signal,
        }
    }
}

impl std::fmt::Display for Packet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Packet::Invalid(_) => write!(f, "INVALID"),
            Packet::KernelDispatch(p) => write!(
                f,
                "KERNEL_DISPATCH kernel_object={:#x} grid={:?} workgroup={:?} kernarg={:#x}",
                p.kernel_object, p.grid_size, p.workgroup_size, p.kernarg_address
            ),
            Packet::Barrier(p) => write!(
                f,
                "BARRIER_{} deps={:x?}",
                if p.kind() == BarrierKind::And { "AND" } else { "OR" },
                p.dep_signals
            ),
            Packet::Pm4Ib(p) => write!(f, "PM4_IB addr={:#x} dwords={}", p.ib.addr(), p.ib.size_dwords()),
            Packet::BarrierValue(p) => write!(
                f,
                "BARRIER_VALUE signal={:#x} (value & {:#x}) {:?} {}",
                p.signal, p.mask, p.cond, p.value
            ),
            Packet::AgentDispatch(p) => write!(f, "AGENT_DISPATCH function={}", p.function),
        }
    }
}

/// Byte offsets in `amd_signal_t` (64 bytes), the signal a packet completes.
pub mod signal {
    /// `kind`: 1 user, -1 doorbell (i64).
    pub const KIND: u64 = 0;
    /// `value` (i64): completion subtracts 1.
    pub const VALUE: u64 = 8;
    /// `event_mailbox_ptr`: where the event id is written to wake a waiter (0: none).
    pub const EVENT_MAILBOX_PTR: u64 = 16;
    /// `event_id`: the KFD event raised after the decrement.
    pub const EVENT_ID: u64 = 24;
    /// `start_ts`: the GPU clock when a dispatch started (profiling queues).
    pub const START_TS: u64 = 32;
    /// `end_ts`: the GPU clock when it ended.
    pub const END_TS: u64 = 40;
    /// Bytes of the structure.
    pub const BYTES: u64 = 64;
    /// `AMD_SIGNAL_KIND_USER`
    pub const KIND_USER: i64 = 1;
}

/// Byte offsets in `amd_queue_t` (256 bytes), the queue descriptor the command
/// processor finds from the read pointer's address.
pub mod queue {
    /// `write_dispatch_id` (u64): packets written (the queue's write pointer).
    pub const WRITE_DISPATCH_ID: u64 = 56;
    /// `read_dispatch_id` (u64): packets consumed (the queue's read pointer).
    pub const READ_DISPATCH_ID: u64 = 128;
    /// `read_dispatch_id_field_base_byte_offset` (u32): `READ_DISPATCH_ID`, from which
    /// the command processor finds the structure's base.
    pub const READ_DISPATCH_ID_FIELD_BASE_BYTE_OFFSET: u64 = 136;
    /// `compute_tmpring_size` (u32): COMPUTE_TMPRING_SIZE for the queue's dispatches.
    pub const COMPUTE_TMPRING_SIZE: u64 = 140;
    /// `scratch_resource_descriptor[4]`: the private segment buffer descriptor.
    pub const SCRATCH_RESOURCE_DESCRIPTOR: u64 = 144;
    /// `scratch_backing_memory_location` (u64): the scratch memory's base.
    pub const SCRATCH_BACKING_MEMORY_LOCATION: u64 = 160;
    /// `scratch_backing_memory_byte_size` (u64).
    pub const SCRATCH_BACKING_MEMORY_BYTE_SIZE: u64 = 168;
    /// `scratch_wave64_lane_byte_size` (u32).
    pub const SCRATCH_WAVE64_LANE_BYTE_SIZE: u64 = 176;
    /// `queue_properties` (u32, `AMD_QUEUE_PROPERTIES_*`).
    pub const QUEUE_PROPERTIES: u64 = 180;
    /// `queue_inactive_signal` (u64).
    pub const QUEUE_INACTIVE_SIGNAL: u64 = 192;
    /// Bytes of the structure.
    pub const BYTES: u64 = 256;
    /// `AMD_QUEUE_PROPERTIES_IS_PTR64`
    pub const PROPERTIES_IS_PTR64: u32 = 1 << 1;
    /// `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING`: dispatches write their signals'
    /// start and end timestamps.
    pub const PROPERTIES_ENABLE_PROFILING: u32 = 1 << 3;
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: GfxTarget = GfxTarget::Gfx11;

    #[test]
    fn kernel_descriptor_fields_sit_at_their_offsets() {
        // Every byte its own value: each field reads the bytes at its offset.
        let bytes: [u8; 64] = std::array::from_fn(|i| i as u8);
        let kd = KernelDescriptor::from_bytes(&bytes);
        assert_eq!(kd.group_segment_size, 0x0302_0100);
        assert_eq!(kd.private_segment_size, 0x0706_0504);
        assert_eq!(kd.kernarg_size, 0x0b0a_0908);
        assert_eq!(kd.entry_offset, 0x1716_1514_1312_1110);
        assert_eq!((kd.rsrc3, kd.rsrc1, kd.rsrc2), (0x2f2e_2d2c, 0x3332_3130, 0x3736_3534));
        assert_eq!(kd.properties, 0x3938);
        // Written back, the bytes it holds come back and the rest are zero.
        let held = [0..12, 16..24, 44..58];
        for (i, b) in kd.to_bytes().iter().enumerate() {
            let want = if held.iter().any(|r| r.contains(&i)) {
                i as u8
            } else {
                0
            };
            assert_eq!(*b, want, "byte {i}");
        }
        // A negative entry offset (code before its descriptor) reads back as one.
        let back = KernelDescriptor {
            entry_offset: -0x100,
            ..kd
        };
        assert_eq!(KernelDescriptor::from_bytes(&back.to_bytes()), back);
    }

    #[test]
    fn header_bits_are_those_of_hsa() {
        // tinygrad 0.14's AQL_HDR: barrier, system acquire and release scopes.
        let h = Header::new(PacketType::KernelDispatch)
            .barrier()
            .fences(FenceScope::System);
        assert_eq!(h.to_bits(), 2 | 1 << 8 | 2 << 9 | 2 << 11);
        assert_eq!(Header::from_bits(h.to_bits()), Ok(h));
        assert!(Header::from_bits(9).is_err(), "type 9 is no HSA type");
        assert!(Header::from_bits(2 | 3 << 9).is_err(), "fence scope 3 is reserved");
        assert!(Header::from_bits(2 | 1 << 13).is_err(), "bits 15:13 are reserved");
    }

    #[test]
    fn every_packet_kind_round_trips() {
        let h = |t| Header::new(t).barrier().fences(FenceScope::Agent);
        let b = Barrier {
            header: h(PacketType::BarrierOr),
            dep_signals: [0x1000, 0, 0x2040, 0, 0x7fff_0000_0000],
            completion_signal: 0x3000,
        };
        assert_eq!(b.kind(), BarrierKind::Or);
        assert_eq!(Packet::decode(T, &b.to_dwords()), Ok(Packet::Barrier(b)));
        let ib = Pm4Ib::new(h(PacketType::VendorSpecific), 0x1_0000_1000, 12, 0x40).unwrap();
        let w = ib.to_dwords(T);
        // As tinygrad 0.14 writes it: PACKET3(INDIRECT_BUFFER, 2), then 10 remaining.
        assert_eq!(w[1], 0xc002_3f00);
        assert_eq!(w[5], 10);
        assert_eq!(Packet::decode(T, &w), Ok(Packet::Pm4Ib(ib)));
        let bv = BarrierValue {
            header: h(PacketType::VendorSpecific),
            signal: 0x5000,
            value: -3,
            mask: i64::MAX,
            cond: Condition::Lt,
            completion_signal: 0x6000,
        };
        assert_eq!(Packet::decode(T, &bv.to_dwords()), Ok(Packet::BarrierValue(bv)));
        let mut bad = bv.to_dwords();
        bad[8] = 4;
        assert!(Packet::decode(T, &bad).is_err(), "condition 4");
        assert!(Condition::Lt.holds(-5, -3) && !Condition::Gte.holds(-5, -3));
        let mut inv = [0u32; 16];
        inv[0] = 1;
        assert_eq!(
            Packet::decode(T, &inv),
            Ok(Packet::Invalid(Header::new(PacketType::Invalid)))
        );
    }

    #[test]
    fn malformed_packets_are_errors() {
        let d = KernelDispatch {
            header: Header::new(PacketType::KernelDispatch),
            dimensions: 3,
            workgroup_size: [8, 8, 4],
            grid_size: [64, 64, 4],
            private_segment_size: 16,
            group_segment_size: 1024,
            kernel_object: 0x1000,
            kernarg_address: 0x2000,
            completion_signal: 0x3000,
        };
        let w = d.to_dwords();
        assert_eq!(Packet::decode(T, &w), Ok(Packet::KernelDispatch(d)));
        assert!(matches!(
            Packet::decode(T, &w[..15]),
            Err(PacketError::Truncated { needed: 16, .. })
        ));
        let mut bad = w;
        bad[0] &= !(3 << 16);
        assert!(Packet::decode(T, &bad).is_err(), "zero dimensions");
        let mut bad = w;
        bad[2] |= 1 << 16;
        assert!(Packet::decode(T, &bad).is_err(), "reserved0");
        let mut v = Pm4Ib::new(Header::new(PacketType::VendorSpecific), 0x1000, 4, 0)
            .unwrap()
            .to_dwords(T);
        v[0] = v[0] & 0xffff | 3 << 16;
        assert!(Packet::decode(T, &v).is_err(), "vendor format 3");
        let mut v = Pm4Ib::new(Header::new(PacketType::VendorSpecific), 0x1000, 4, 0)
            .unwrap()
            .to_dwords(T);
        v[1] = 0xc000_1000; // PACKET3_NOP
        assert!(Packet::decode(T, &v).is_err(), "not an INDIRECT_BUFFER");
    }
}
