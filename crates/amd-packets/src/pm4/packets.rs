//! The PM4 packets, one struct each.

use super::{Opcode, ShReg, header};
use crate::{CmdSink, GfxTarget, PacketError, lo_hi};

/// `WAIT_REG_MEM_FUNCTION` / `SDMA_PKT_POLL_REGMEM_HEADER_FUNC`: how the polled value
/// (after masking) compares with the reference. Shared by PM4 and SDMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CompareFunc {
    /// Always true.
    Always = 0,
    /// `<`
    Less = 1,
    /// `<=`
    LessEqual = 2,
    /// `==`
    Equal = 3,
    /// `!=`
    NotEqual = 4,
    /// `>=`
    GreaterEqual = 5,
    /// `>`
    Greater = 6,
}

impl CompareFunc {
    /// Every function, in encoding order.
    pub const ALL: [CompareFunc; 7] = [
        CompareFunc::Always,
        CompareFunc::Less,
        CompareFunc::LessEqual,
        CompareFunc::Equal,
        CompareFunc::NotEqual,
        CompareFunc::GreaterEqual,
        CompareFunc::Greater,
    ];

    /// The function for a 3-bit field value (7 is reserved).
    pub const fn from_bits(v: u32) -> Option<Self> {
        match v {
            0..=6 => Some(Self::ALL[v as usize]),
            _ => None,
        }
    }

    /// Whether `value & mask` passes against `reference`.
    pub const fn test(self, value: u32, mask: u32, reference: u32) -> bool {
        let v = value & mask;
        match self {
            CompareFunc::Always => true,
            CompareFunc::Less => v < reference,
            CompareFunc::LessEqual => v <= reference,
            CompareFunc::Equal => v == reference,
            CompareFunc::NotEqual => v != reference,
            CompareFunc::GreaterEqual => v >= reference,
            CompareFunc::Greater => v > reference,
        }
    }

    /// The operator as text.
    pub const fn symbol(self) -> &'static str {
        match self {
            CompareFunc::Always => "always",
            CompareFunc::Less => "<",
            CompareFunc::LessEqual => "<=",
            CompareFunc::Equal => "==",
            CompareFunc::NotEqual => "!=",
            CompareFunc::GreaterEqual => ">=",
            CompareFunc::Greater => ">",
        }
    }
}

// ---------------------------------------------------------------------------------
// NOP

/// `PACKET3_NOP`: `dwords` dwords in all (header included) that the CP skips.
///
/// One dword is encoded as the bodiless header with count `0x3fff`; longer NOPs carry
/// a zero-filled body. That makes 0x4000 dwords the longest NOP: a body of 0x4000
/// dwords would need count `0x3fff`, which means "no body".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Nop {
    dwords: u16,
}

impl Nop {
    /// A NOP spanning `dwords` (1..=0x4000) dwords.
    pub const fn new(dwords: usize) -> Result<Self, PacketError> {
        if dwords == 0 || dwords > super::MAX_BODY_DWORDS {
            return Err(PacketError::FieldRange {
                packet: "PACKET3_NOP",
                field: "dwords",
                value: dwords as u64,
                limit: "1..=0x4000",
            });
        }
        Ok(Nop { dwords: dwords as u16 })
    }

    /// Dwords the NOP spans, header included.
    pub const fn dwords(&self) -> usize {
        self.dwords as usize
    }

    /// Appends the packet; returns its start index in `out`.
    pub fn encode(&self, _target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        if self.dwords == 1 {
            out.put(&[(3 << 30) | (0x3fff << 16) | ((Opcode::Nop as u32) << 8)]);
        } else {
            out.put(&[header(Opcode::Nop, self.dwords as usize - 1)]);
            let zeros = [0u32; 64];
            let mut left = self.dwords as usize - 1;
            while left > 0 {
                let n = left.min(zeros.len());
                out.put(&zeros[..n]);
                left -= n;
            }
        }
        start
    }
}

// ---------------------------------------------------------------------------------
// SET_SH_REG

/// `PACKET3_SET_SH_REG`: writes consecutive SH registers starting at `reg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SetShReg<'a> {
    reg: ShReg,
    values: &'a [u32],
}

/// Patchable fields of [`SetShReg`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetShRegField {
    /// The value of the `i`-th register written (`reg + i`).
    Value(usize),
}

impl SetShRegField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            SetShRegField::Value(i) => 2 + i,
        }
    }
}

impl<'a> SetShReg<'a> {
    /// Writes `values` to `reg`, `reg + 1`, …; at least one value, and no more than
    /// the header's count field can carry (0x3fff).
    pub const fn new(reg: ShReg, values: &'a [u32]) -> Result<Self, PacketError> {
        if values.is_empty() || values.len() > super::MAX_BODY_DWORDS - 1 {
            return Err(PacketError::FieldRange {
                packet: "PACKET3_SET_SH_REG",
                field: "register count",
                value: values.len() as u64,
                limit: "1..=0x3fff",
            });
        }
        Ok(SetShReg { reg, values })
    }

    /// First register written.
    pub const fn reg(&self) -> ShReg {
        self.reg
    }

    /// The values, one per register.
    pub const fn values(&self) -> &'a [u32] {
        self.values
    }

    /// Total dwords, header included.
    pub const fn dwords(&self) -> usize {
        2 + self.values.len()
    }

    /// Appends the packet; returns its start index in `out`.
    #[inline]
    pub fn encode(&self, _target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&[
            header(Opcode::SetShReg, 1 + self.values.len()),
            self.reg.offset() as u32,
        ]);
        out.put(self.values);
        start
    }
}

/// Writes a SET_SH_REG of a fixed number (1..=14) of registers without building a
/// slice first; the hot path of a dispatch. Returns the start index in `out`.
#[inline(always)]
pub fn set_sh_reg<const N: usize>(out: &mut impl CmdSink, reg: ShReg, values: [u32; N]) -> usize {
    const { assert!(N >= 1 && N <= 14) };
    let start = out.len();
    // One put of a constant length: the compiler keeps this buffer in registers.
    let mut words = [0u32; 16];
    words[0] = header(Opcode::SetShReg, 1 + N);
    words[1] = reg.offset() as u32;
    words[2..2 + N].copy_from_slice(&values);
    out.put(&words[..2 + N]);
    start
}

// ---------------------------------------------------------------------------------
// DISPATCH_DIRECT

/// `COMPUTE_DISPATCH_INITIATOR` bits carried by DISPATCH_DIRECT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DispatchInitiator(pub u32);

impl DispatchInitiator {
    /// `COMPUTE_SHADER_EN`: launch the compute shader.
    pub const COMPUTE_SHADER_EN: Self = Self(1 << 0);
    /// `PARTIAL_TG_EN`: allow a partial last thread group.
    pub const PARTIAL_TG_EN: Self = Self(1 << 1);
    /// `FORCE_START_AT_000`: start at workgroup (0,0,0), ignoring COMPUTE_START_*.
    pub const FORCE_START_AT_000: Self = Self(1 << 2);
    /// `ORDERED_APPEND_ENBL`
    pub const ORDERED_APPEND_ENBL: Self = Self(1 << 3);
    /// `ORDER_MODE`
    pub const ORDER_MODE: Self = Self(1 << 6);
    /// `USE_THREAD_DIMENSIONS`: grid given in threads, not workgroups.
    pub const USE_THREAD_DIMENSIONS: Self = Self(1 << 5);
    /// `CS_W32_EN`: wave32.
    pub const CS_W32_EN: Self = Self(1 << 15);
    /// What tinygrad 0.10.1 sends: wave32, start at zero, shader enabled.
    pub const DEFAULT: Self = Self(Self::CS_W32_EN.0 | Self::FORCE_START_AT_000.0 | Self::COMPUTE_SHADER_EN.0);

    /// Both sets of bits.
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// `PACKET3_DISPATCH_DIRECT`: launch a grid of `dims` workgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DispatchDirect {
    /// Workgroups in x, y, z.
    pub dims: [u32; 3],
    /// Initiator bits.
    pub initiator: DispatchInitiator,
}

/// Patchable fields of [`DispatchDirect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DispatchDirectField {
    /// Grid size in workgroups, dimension 0..3.
    Dim(usize),
}

impl DispatchDirectField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            DispatchDirectField::Dim(i) => 1 + i,
        }
    }
}

impl DispatchDirect {
    /// Dwords, header included.
    pub const DWORDS: usize = 5;

    /// A dispatch of `dims` workgroups with the default initiator.
    pub const fn new(dims: [u32; 3]) -> Self {
        DispatchDirect {
            dims,
            initiator: DispatchInitiator::DEFAULT,
        }
    }

    /// Sets the initiator bits.
    pub const fn initiator(mut self, initiator: DispatchInitiator) -> Self {
        self.initiator = initiator;
        self
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        [
            header(Opcode::DispatchDirect, 4),
            self.dims[0],
            self.dims[1],
            self.dims[2],
            self.initiator.0,
        ]
    }

    /// Appends the packet; returns its start index in `out`.
    #[inline(always)]
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&self.to_dwords(target));
        start
    }
}

// ---------------------------------------------------------------------------------
// EVENT_WRITE

/// A VGT event type (`enum VGT_EVENT_TYPE`, 6 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventType(u8);

impl EventType {
    /// `CS_PARTIAL_FLUSH`: wait for prior compute work to finish.
    pub const CS_PARTIAL_FLUSH: Self = Self(0x07);
    /// `CACHE_FLUSH_TS`
    pub const CACHE_FLUSH_TS: Self = Self(0x04);
    /// `CACHE_FLUSH_AND_INV_TS_EVENT`: the end-of-pipe event RELEASE_MEM uses.
    pub const CACHE_FLUSH_AND_INV_TS_EVENT: Self = Self(0x14);
    /// `BOTTOM_OF_PIPE_TS`
    pub const BOTTOM_OF_PIPE_TS: Self = Self(0x28);
    /// `CS_DONE`
    pub const CS_DONE: Self = Self(0x2f);

    /// The event with raw value `v` (0..=63).
    pub const fn new(v: u8) -> Result<Self, PacketError> {
        if v > 0x3f {
            return Err(PacketError::FieldRange {
                packet: "EVENT_TYPE",
                field: "event type",
                value: v as u64,
                limit: "0..=0x3f",
            });
        }
        Ok(Self(v))
    }

    /// The raw value.
    pub const fn raw(self) -> u8 {
        self.0
    }

    /// The spec name, where known.
    pub const fn name(self) -> Option<&'static str> {
        match self.0 {
            0x04 => Some("CACHE_FLUSH_TS"),
            0x07 => Some("CS_PARTIAL_FLUSH"),
            0x14 => Some("CACHE_FLUSH_AND_INV_TS_EVENT"),
            0x28 => Some("BOTTOM_OF_PIPE_TS"),
            0x2f => Some("CS_DONE"),
            _ => None,
        }
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "EVENT[{:#x}]", self.0),
        }
    }
}

/// `PACKET3_EVENT_WRITE`: raise a pipeline event. Events with index 1–3 (ZPASS,
/// pipeline statistics) carry a destination address; the rest are one dword.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventWrite {
    /// The event.
    pub event: EventType,
    /// `EVENT_INDEX` (4 bits); 4 for `*_PARTIAL_FLUSH`.
    pub index: u8,
    /// Destination address for the sampling events.
    pub address: Option<u64>,
}

impl EventWrite {
    /// `EVENT_INDEX` of the partial-flush events (nvd.h: `4 - *S_PARTIAL_FLUSH`).
    pub const INDEX_PARTIAL_FLUSH: u8 = 4;

    /// `CS_PARTIAL_FLUSH` with its index: wait until prior dispatches finish.
    pub const fn cs_partial_flush() -> Self {
        EventWrite {
            event: EventType::CS_PARTIAL_FLUSH,
            index: Self::INDEX_PARTIAL_FLUSH,
            address: None,
        }
    }

    /// Any event and index (masked to 4 bits).
    pub const fn new(event: EventType, index: u8) -> Self {
        EventWrite {
            event,
            index: index & 0xf,
            address: None,
        }
    }

    /// Adds the destination address.
    pub const fn address(mut self, addr: u64) -> Self {
        self.address = Some(addr);
        self
    }

    /// Appends the packet; returns its start index in `out`.
    #[inline(always)]
    pub fn encode(&self, _target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        let dw = self.event.0 as u32 | ((self.index as u32 & 0xf) << 8);
        match self.address {
            None => out.put(&[header(Opcode::EventWrite, 1), dw]),
            Some(a) => {
                let [lo, hi] = lo_hi(a);
                out.put(&[header(Opcode::EventWrite, 3), dw, lo, hi]);
            }
        }
        start
    }
}

// ---------------------------------------------------------------------------------
// ACQUIRE_MEM

/// `GCR_CNTL` of ACQUIRE_MEM (19 bits): which caches to invalidate or write back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct GcrCntl(pub u32);

impl GcrCntl {
    /// `GLI_INV` = ALL (2-bit field at 0: 0 NOP, 1 ALL, 2 RANGE, 3 FIRST_LAST).
    pub const GLI_INV_ALL: Self = Self(1 << 0);
    /// `GL1_RANGE` (2 bits at 2).
    pub const GL1_RANGE_SHIFT: u32 = 2;
    /// `GLM_WB`: write back the metadata cache.
    pub const GLM_WB: Self = Self(1 << 4);
    /// `GLM_INV`: invalidate the metadata cache.
    pub const GLM_INV: Self = Self(1 << 5);
    /// `GLK_WB`: write back the scalar cache.
    pub const GLK_WB: Self = Self(1 << 6);
    /// `GLK_INV`: invalidate the scalar cache.
    pub const GLK_INV: Self = Self(1 << 7);
    /// `GLV_INV`: invalidate the vector L0 cache.
    pub const GLV_INV: Self = Self(1 << 8);
    /// `GL1_INV`: invalidate GL1.
    pub const GL1_INV: Self = Self(1 << 9);
    /// `GL2_US`
    pub const GL2_US: Self = Self(1 << 10);
    /// `GL2_RANGE` (2 bits at 11).
    pub const GL2_RANGE_SHIFT: u32 = 11;
    /// `GL2_DISCARD`
    pub const GL2_DISCARD: Self = Self(1 << 13);
    /// `GL2_INV`: invalidate L2.
    pub const GL2_INV: Self = Self(1 << 14);
    /// `GL2_WB`: write back L2.
    pub const GL2_WB: Self = Self(1 << 15);
    /// `SEQ` (2 bits at 16: 0 parallel, 1 forward, 2 reverse).
    pub const SEQ_SHIFT: u32 = 16;
    /// `RANGE_IS_PA`
    pub const RANGE_IS_PA: Self = Self(1 << 18);
    /// The 19 defined bits.
    pub const MASK: u32 = (1 << 19) - 1;

    /// Invalidate and write back every level, as tinygrad's `memory_barrier`.
    pub const ALL: Self = Self(
        Self::GLI_INV_ALL.0
            | Self::GLM_WB.0
            | Self::GLM_INV.0
            | Self::GLK_WB.0
            | Self::GLK_INV.0
            | Self::GLV_INV.0
            | Self::GL1_INV.0
            | Self::GL2_INV.0
            | Self::GL2_WB.0,
    );
    /// [`GcrCntl::ALL`] less the instruction cache and L2, as tinygrad's `exec`
    /// sends before each dispatch.
    pub const BEFORE_DISPATCH: Self = Self(Self::ALL.0 & !(Self::GLI_INV_ALL.0 | Self::GL2_INV.0 | Self::GL2_WB.0));

    /// Both sets of bits.
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// `CP_COHER_CNTL` of gfx9's ACQUIRE_MEM (`soc15d.h`): gfx9 names its cache actions
/// there, where gfx10 and later have [`GcrCntl`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CoherCntl(pub u32);

impl CoherCntl {
    /// `TC_NC_ACTION_ENA`: L2 action on non-coherent lines.
    pub const TC_NC_ACTION: Self = Self(1 << 3);
    /// `TC_WC_ACTION_ENA`: L2 action on write-combined lines.
    pub const TC_WC_ACTION: Self = Self(1 << 4);
    /// `TC_INV_METADATA_ACTION_ENA`
    pub const TC_INV_METADATA_ACTION: Self = Self(1 << 5);
    /// `TCL1_VOL_ACTION_ENA`
    pub const TCL1_VOL_ACTION: Self = Self(1 << 15);
    /// `TC_WB_ACTION_ENA`: write back L2.
    pub const TC_WB_ACTION: Self = Self(1 << 18);
    /// `TCL1_ACTION_ENA`: invalidate the vector L1 caches.
    pub const TCL1_ACTION: Self = Self(1 << 22);
    /// `TC_ACTION_ENA`: invalidate L2.
    pub const TC_ACTION: Self = Self(1 << 23);
    /// `SH_KCACHE_ACTION_ENA`: invalidate the scalar cache.
    pub const SH_KCACHE_ACTION: Self = Self(1 << 27);
    /// `SH_ICACHE_ACTION_ENA`: invalidate the instruction cache.
    pub const SH_ICACHE_ACTION: Self = Self(1 << 29);

    /// Every cache level, as the kernel's `gfx_v9_4_3_emit_mem_sync` (and tinygrad's
    /// gfx9 `memory_barrier`).
    pub const ALL: Self = Self(
        Self::SH_ICACHE_ACTION.0
            | Self::SH_KCACHE_ACTION.0
            | Self::TC_ACTION.0
            | Self::TCL1_ACTION.0
            | Self::TC_WB_ACTION.0,
    );
    /// The scalar and vector L1 caches, as tinygrad's gfx9 `exec` before each dispatch
    /// ([`GcrCntl::BEFORE_DISPATCH`]'s counterpart).
    pub const BEFORE_DISPATCH: Self = Self(Self::SH_KCACHE_ACTION.0 | Self::TCL1_ACTION.0);
}

/// `PACKET3_ACQUIRE_MEM`: wait for and apply cache actions over a range. gfx10 and
/// later: 8 dwords, the actions in `GCR_CNTL`; gfx9: 7 dwords (no `GCR_CNTL`), the
/// actions in `COHER_CNTL` ([`CoherCntl`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AcquireMem {
    /// `COHER_CNTL` (dword 1).
    pub coher_cntl: u32,
    /// `COHER_SIZE` (dword 2) and `COHER_SIZE_HI` (dword 3), written whole.
    pub size: u64,
    /// `COHER_BASE_LO` / `_HI` (dwords 4–5).
    pub base: u64,
    /// `POLL_INTERVAL` (dword 6).
    pub poll_interval: u32,
    /// `GCR_CNTL` (dword 7; gfx10 and later, not encoded on gfx9).
    pub gcr: GcrCntl,
}

impl AcquireMem {
    /// Most dwords, header included (gfx10 and later; see [`AcquireMem::dwords`]).
    pub const DWORDS: usize = 8;

    /// The packet's length on `target`, header included.
    pub const fn dwords(target: GfxTarget) -> usize {
        if target.is_gfx9() { 7 } else { 8 }
    }

    /// Cache actions `gcr` over all memory (size `u64::MAX` from base 0, as tinygrad).
    pub const fn all(gcr: GcrCntl) -> Self {
        AcquireMem {
            coher_cntl: 0,
            size: u64::MAX,
            base: 0,
            poll_interval: 0,
            gcr,
        }
    }

    /// gfx9's form: cache actions `coher` over all memory, size and poll interval as
    /// the kernel's `gfx_v9_4_3_emit_mem_sync` writes them (`COHER_SIZE_HI` is 8 bits
    /// there).
    pub const fn gfx9_all(coher: CoherCntl) -> Self {
        AcquireMem {
            coher_cntl: coher.0,
            size: 0xff_ffff_ffff,
            base: 0,
            poll_interval: 0xa,
            gcr: GcrCntl(0),
        }
    }

    /// Every cache level written back and invalidated, in `target`'s form.
    pub const fn barrier(target: GfxTarget) -> Self {
        if target.is_gfx9() {
            Self::gfx9_all(CoherCntl::ALL)
        } else {
            Self::all(GcrCntl::ALL)
        }
    }

    /// The invalidation before a dispatch (scalar and vector L1; not the instruction
    /// cache or L2), in `target`'s form.
    pub const fn before_dispatch(target: GfxTarget) -> Self {
        if target.is_gfx9() {
            Self::gfx9_all(CoherCntl::BEFORE_DISPATCH)
        } else {
            Self::all(GcrCntl::BEFORE_DISPATCH)
        }
    }

    /// The packet's dwords: all of them on gfx10 and later, the first
    /// [`AcquireMem::dwords`] (7) on gfx9, whose last dword is then 0.
    #[inline(always)]
    pub const fn to_dwords(&self, target: GfxTarget) -> [u32; Self::DWORDS] {
        let [sl, sh] = lo_hi(self.size);
        let [bl, bh] = lo_hi(self.base);
        let (count, gcr) = if target.is_gfx9() { (6, 0) } else { (7, self.gcr.0) };
        [
            header(Opcode::AcquireMem, count),
            self.coher_cntl,
            sl,
            sh,
            bl,
            bh,
            self.poll_interval,
            gcr,
        ]
    }

    /// Appends the packet; returns its start index in `out`.
    #[inline(always)]
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        let words = self.to_dwords(target);
        out.put(&words[..Self::dwords(target)]);
        start
    }
}

// ---------------------------------------------------------------------------------
// RELEASE_MEM

/// Cache actions of RELEASE_MEM (bits 12–22 of its event dword): `GCR_*` on gfx10 and
/// later, `EOP_*_ACTION_EN` on gfx9 (the `GFX9_` constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ReleaseGcr(pub u32);

impl ReleaseGcr {
    /// gfx9 `EOP_TCL1_VOL_ACTION_EN`
    pub const GFX9_TCL1_VOL_ACTION: Self = Self(1 << 12);
    /// gfx9 `EOP_TC_VOL_ACTION_EN` (L2)
    pub const GFX9_TC_VOL_ACTION: Self = Self(1 << 13);
    /// gfx9 `EOP_TC_WB_ACTION_EN`: write back L2.
    pub const GFX9_TC_WB_ACTION: Self = Self(1 << 15);
    /// gfx9 `EOP_TCL1_ACTION_EN`: invalidate the vector L1 caches.
    pub const GFX9_TCL1_ACTION: Self = Self(1 << 16);
    /// gfx9 `EOP_TC_ACTION_EN`: invalidate L2.
    pub const GFX9_TC_ACTION: Self = Self(1 << 17);
    /// gfx9 `EOP_TC_NC_ACTION_EN`
    pub const GFX9_TC_NC_ACTION: Self = Self(1 << 19);
    /// gfx9 `EOP_TC_MD_ACTION_EN` (L2 metadata)
    pub const GFX9_TC_MD_ACTION: Self = Self(1 << 21);
    /// gfx9: the flush of the kernel's fence (`gfx_v9_4_3_ring_emit_fence`).
    pub const GFX9_FLUSH: Self =
        Self(Self::GFX9_TCL1_ACTION.0 | Self::GFX9_TC_ACTION.0 | Self::GFX9_TC_WB_ACTION.0 | Self::GFX9_TC_MD_ACTION.0);

    /// Write back and invalidate the data caches, in `target`'s bits.
    pub const fn flush(target: GfxTarget) -> Self {
        if target.is_gfx9() {
            Self::GFX9_FLUSH
        } else {
            Self::FLUSH
        }
    }

    /// `GCR_GLM_WB`
    pub const GLM_WB: Self = Self(1 << 12);
    /// `GCR_GLM_INV`
    pub const GLM_INV: Self = Self(1 << 13);
    /// `GCR_GLV_INV`
    pub const GLV_INV: Self = Self(1 << 14);
    /// `GCR_GL1_INV`
    pub const GL1_INV: Self = Self(1 << 15);
    /// `GCR_GL2_US`
    pub const GL2_US: Self = Self(1 << 16);
    /// `GCR_GL2_RANGE` (2 bits at 17).
    pub const GL2_RANGE_SHIFT: u32 = 17;
    /// `GCR_GL2_DISCARD`
    pub const GL2_DISCARD: Self = Self(1 << 19);
    /// `GCR_GL2_INV`
    pub const GL2_INV: Self = Self(1 << 20);
    /// `GCR_GL2_WB`
    pub const GL2_WB: Self = Self(1 << 21);
    /// `GCR_SEQ`
    pub const SEQ: Self = Self(1 << 22);
    /// The defined bits.
    pub const MASK: u32 = 0x7ff << 12;
    /// Write back and invalidate the data caches, as tinygrad's `signal`.
    pub const FLUSH: Self = Self(
        Self::GLV_INV.0
            | Self::GL1_INV.0
            | Self::GL2_INV.0
            | Self::GLM_WB.0
            | Self::GLM_INV.0
            | Self::GL2_WB.0
            | Self::SEQ.0,
    );
}

/// `DATA_SEL` of RELEASE_MEM: what is written to the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DataSel {
    /// Nothing.
    None = 0,
    /// The low 32 bits of `data`.
    Data32 = 1,
    /// All 64 bits of `data`.
    Data64 = 2,
    /// The 64-bit GPU clock counter.
    GpuClock = 3,
    /// The 64-bit system clock counter (`send_cp_perfcounter_hi_lo` in later headers).
    SystemClock = 4,
    /// GDS data (`store_gds_data_to_memory`).
    GdsData = 5,
}

/// `INT_SEL` of RELEASE_MEM: whether and when an interrupt is raised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum IntSel {
    /// No interrupt.
    None = 0,
    /// Interrupt only (no data write).
    InterruptOnly = 1,
    /// Interrupt once the data write is confirmed.
    AfterWriteConfirm = 2,
    /// Send data after the write is confirmed.
    DataAfterWriteConfirm = 3,
    /// Unconditionally send `int_ctxid`.
    UnconditionalCtxId = 4,
    /// Send `int_ctxid` on a 32-bit compare.
    CtxIdCompare32 = 5,
    /// Send `int_ctxid` on a 64-bit compare.
    CtxIdCompare64 = 6,
}

/// `DST_SEL` of RELEASE_MEM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DstSel {
    /// Memory controller.
    Memory = 0,
    /// TC/L2.
    TcL2 = 1,
    /// Queue write-pointer register.
    QueueWritePointer = 2,
    /// Queue write-pointer poll-mask bit.
    QueueWritePointerPollMask = 3,
}

/// Cache policy of a 2-bit `CACHE_POLICY` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CachePolicy {
    /// LRU.
    Lru = 0,
    /// Stream.
    Stream = 1,
    /// NOA (RELEASE_MEM) / bypass (INDIRECT_BUFFER).
    Noa = 2,
    /// Bypass.
    Bypass = 3,
}

macro_rules! from_bits {
    ($ty:ident { $($v:literal => $var:ident),* $(,)? }) => {
        impl $ty {
            /// The value for a raw field, if defined.
            pub const fn from_bits(v: u32) -> Option<Self> {
                match v { $($v => Some($ty::$var),)* _ => None }
            }
        }
    };
}
from_bits!(DataSel { 0 => None, 1 => Data32, 2 => Data64, 3 => GpuClock, 4 => SystemClock, 5 => GdsData });
from_bits!(IntSel {
    0 => None, 1 => InterruptOnly, 2 => AfterWriteConfirm, 3 => DataAfterWriteConfirm,
    4 => UnconditionalCtxId, 5 => CtxIdCompare32, 6 => CtxIdCompare64,
});
from_bits!(DstSel { 0 => Memory, 1 => TcL2, 2 => QueueWritePointer, 3 => QueueWritePointerPollMask });
from_bits!(CachePolicy { 0 => Lru, 1 => Stream, 2 => Noa, 3 => Bypass });

/// `PACKET3_RELEASE_MEM`: after prior work reaches `event`, apply cache actions, write
/// data to `address`, and optionally interrupt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReleaseMem {
    /// The event waited for.
    pub event: EventType,
    /// `EVENT_INDEX` (4 bits): 5 end of pipe, 6 shader done.
    pub event_index: u8,
    /// Cache actions.
    pub gcr: ReleaseGcr,
    /// Cache policy of the write.
    pub cache_policy: CachePolicy,
    /// `EXECUTE` bit.
    pub execute: bool,
    /// Where the write goes.
    pub dst_sel: DstSel,
    /// Interrupt behaviour.
    pub int_sel: IntSel,
    /// What is written.
    pub data_sel: DataSel,
    /// Destination address.
    pub address: u64,
    /// Data for [`DataSel::Data32`] / [`DataSel::Data64`] (also the compare value for
    /// the conditional interrupts).
    pub data: u64,
    /// `INT_CTXID`, the context id delivered with the interrupt.
    pub int_ctxid: u32,
}

/// Patchable fields of [`ReleaseMem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseMemField {
    /// Destination address, lo then hi dword.
    Address,
    /// Data, lo then hi dword.
    Data,
    /// `INT_CTXID`.
    IntCtxId,
}

impl ReleaseMemField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            ReleaseMemField::Address => 3,
            ReleaseMemField::Data => 5,
            ReleaseMemField::IntCtxId => 7,
        }
    }
}

impl ReleaseMem {
    /// Dwords, header included.
    pub const DWORDS: usize = 8;
    /// `event_index__mec_release_mem__end_of_pipe`
    pub const END_OF_PIPE: u8 = 5;
    /// `event_index__mec_release_mem__shader_done`
    pub const SHADER_DONE: u8 = 6;

    /// An end-of-pipe release writing `data_sel` to `address`, no cache actions, no
    /// interrupt.
    pub const fn new(address: u64, data_sel: DataSel) -> Self {
        ReleaseMem {
            event: EventType::CACHE_FLUSH_AND_INV_TS_EVENT,
            event_index: Self::END_OF_PIPE,
            gcr: ReleaseGcr(0),
            cache_policy: CachePolicy::Lru,
            execute: false,
            dst_sel: DstSel::Memory,
            int_sel: IntSel::None,
            data_sel,
            address,
            data: 0,
            int_ctxid: 0,
        }
    }

    /// Signal: flush caches, write the low 32 bits of `value`, interrupt after the
    /// write (tinygrad's `signal`). The cache bits are gfx10 and later's: on gfx9 use
    /// [`ReleaseMem::signal_on`].
    pub const fn signal(address: u64, value: u64) -> Self {
        Self::new(address, DataSel::Data32)
            .data(value)
            .gcr(ReleaseGcr::FLUSH)
            .int_sel(IntSel::AfterWriteConfirm)
    }

    /// [`ReleaseMem::signal`] with `target`'s cache-flush bits.
    pub const fn signal_on(target: GfxTarget, address: u64, value: u64) -> Self {
        Self::signal(address, value).gcr(ReleaseGcr::flush(target))
    }

    /// Write the GPU clock counter to `address` at end of pipe (tinygrad's `timestamp`).
    pub const fn timestamp(address: u64) -> Self {
        Self::new(address, DataSel::GpuClock)
    }

    /// Sets the data.
    pub const fn data(mut self, data: u64) -> Self {
        self.data = data;
        self
    }
    /// Sets the cache actions.
    pub const fn gcr(mut self, gcr: ReleaseGcr) -> Self {
        self.gcr = ReleaseGcr(gcr.0 & ReleaseGcr::MASK);
        self
    }
    /// Sets the interrupt behaviour.
    pub const fn int_sel(mut self, int_sel: IntSel) -> Self {
        self.int_sel = int_sel;
        self
    }
    /// Sets the interrupt context id.
    pub const fn int_ctxid(mut self, ctxid: u32) -> Self {
        self.int_ctxid = ctxid;
        self
    }
    /// Sets the event and its index (masked to 4 bits).
    pub const fn event(mut self, event: EventType, index: u8) -> Self {
        self.event = event;
        self.event_index = index & 0xf;
        self
    }
    /// Sets where the write goes.
    pub const fn dst_sel(mut self, dst_sel: DstSel) -> Self {
        self.dst_sel = dst_sel;
        self
    }
    /// Sets the cache policy of the write.
    pub const fn cache_policy(mut self, policy: CachePolicy) -> Self {
        self.cache_policy = policy;
        self
    }
    /// Sets the `EXECUTE` bit.
    pub const fn execute(mut self, execute: bool) -> Self {
        self.execute = execute;
        self
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        let event_dw = self.event.0 as u32
            | ((self.event_index as u32 & 0xf) << 8)
            | (self.gcr.0 & ReleaseGcr::MASK)
            | ((self.cache_policy as u32) << 25)
            | ((self.execute as u32) << 28);
        let sel_dw = ((self.dst_sel as u32) << 16) | ((self.int_sel as u32) << 24) | ((self.data_sel as u32) << 29);
        let [al, ah] = lo_hi(self.address);
        let [dl, dh] = lo_hi(self.data);
        [
            header(Opcode::ReleaseMem, 7),
            event_dw,
            sel_dw,
            al,
            ah,
            dl,
            dh,
            self.int_ctxid,
        ]
    }

    /// Appends the packet; returns its start index in `out`.
    #[inline(always)]
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&self.to_dwords(target));
        start
    }
}

// ---------------------------------------------------------------------------------
// WAIT_REG_MEM

/// What WAIT_REG_MEM polls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitLocation {
    /// A dword in memory (`MEM_SPACE` = 1).
    Memory {
        /// Its address (4-byte aligned).
        addr: u64,
    },
    /// Registers (`MEM_SPACE` = 0), as dword register offsets. A plain wait polls
    /// `reg0`; [`WaitOperation::WriteWaitWriteReg`] first writes the reference to
    /// `reg0`, then polls `reg1`.
    Registers {
        /// Dword 2.
        reg0: u32,
        /// Dword 3.
        reg1: u32,
    },
}

/// `WAIT_REG_MEM_OPERATION`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WaitOperation {
    /// Poll until the compare passes.
    WaitRegMem = 0,
    /// Write the reference to one register, then poll the other (used for the HDP
    /// flush handshake).
    WriteWaitWriteReg = 1,
}

/// `WAIT_REG_MEM_ENGINE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EngineSel {
    /// Micro engine.
    Me = 0,
    /// Prefetch parser.
    Pfp = 1,
}

/// `PACKET3_WAIT_REG_MEM`: stall the queue until `(value & mask) func reference`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WaitRegMem {
    /// Comparison.
    pub function: CompareFunc,
    /// What is polled.
    pub location: WaitLocation,
    /// Plain wait or write-then-wait.
    pub operation: WaitOperation,
    /// Which engine waits.
    pub engine: EngineSel,
    /// Reference value (dword 4).
    pub reference: u32,
    /// Mask applied to the polled value (dword 5).
    pub mask: u32,
    /// `POLL_INTERVAL` (dword 6, 16 bits).
    pub poll_interval: u16,
}

/// Patchable fields of [`WaitRegMem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitRegMemField {
    /// Polled address (memory form), lo then hi dword.
    Address,
    /// Reference value.
    Reference,
}

impl WaitRegMemField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            WaitRegMemField::Address => 2,
            WaitRegMemField::Reference => 4,
        }
    }
}

impl WaitRegMem {
    /// Dwords, header included.
    pub const DWORDS: usize = 7;

    /// Wait until the dword at `addr` is `>= value` (tinygrad's `wait`).
    pub const fn memory_ge(addr: u64, value: u32) -> Self {
        Self::memory(addr, CompareFunc::GreaterEqual, value)
    }

    /// Wait on the dword at `addr` with `function` against `reference`, full mask,
    /// poll interval 4.
    pub const fn memory(addr: u64, function: CompareFunc, reference: u32) -> Self {
        WaitRegMem {
            function,
            location: WaitLocation::Memory { addr },
            operation: WaitOperation::WaitRegMem,
            engine: EngineSel::Me,
            reference,
            mask: u32::MAX,
            poll_interval: 4,
        }
    }

    /// Write `reference` to register `write`, then wait until register `poll`
    /// compares `>=` (the HDP flush request/done handshake).
    pub const fn write_wait_reg(write: u32, poll: u32, reference: u32) -> Self {
        WaitRegMem {
            function: CompareFunc::GreaterEqual,
            location: WaitLocation::Registers {
                reg0: write,
                reg1: poll,
            },
            operation: WaitOperation::WriteWaitWriteReg,
            engine: EngineSel::Me,
            reference,
            mask: u32::MAX,
            poll_interval: 4,
        }
    }

    /// Sets the mask.
    pub const fn mask(mut self, mask: u32) -> Self {
        self.mask = mask;
        self
    }
    /// Sets the poll interval.
    pub const fn poll_interval(mut self, interval: u16) -> Self {
        self.poll_interval = interval;
        self
    }
    /// Sets the waiting engine.
    pub const fn engine(mut self, engine: EngineSel) -> Self {
        self.engine = engine;
        self
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        let (mem_space, a, b) = match self.location {
            WaitLocation::Memory { addr } => (1, addr as u32, (addr >> 32) as u32),
            WaitLocation::Registers { reg0, reg1 } => (0, reg0, reg1),
        };
        let info =
            self.function as u32 | (mem_space << 4) | ((self.operation as u32) << 6) | ((self.engine as u32) << 8);
        [
            header(Opcode::WaitRegMem, 6),
            info,
            a,
            b,
            self.reference,
            self.mask,
            self.poll_interval as u32,
        ]
    }

    /// Appends the packet; returns its start index in `out`.
    #[inline(always)]
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&self.to_dwords(target));
        start
    }
}

// ---------------------------------------------------------------------------------
// PRED_EXEC

/// `PACKET3_PRED_EXEC`: the `exec_count` dwords after the packet run only on the
/// XCCs (compute dies) of `xcc_mask`; the others skip them. A partition with several
/// XCCs (an MI300X in SPX mode) runs one queue on each of its XCCs' command
/// processors: per-XCC state (each XCC's scratch base) and once-only work (a signal,
/// a timestamp) go under it. On gfx9.4.3 the firmware honours it in indirect buffers,
/// not in the ring (tinygrad 0.14 wraps ring submissions in an IB for that).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PredExec {
    xcc_mask: u8,
    exec_count: u16,
}

impl PredExec {
    /// Dwords, header included.
    pub const DWORDS: usize = 2;
    /// Largest `EXEC_COUNT` (14 bits).
    pub const MAX_EXEC_DWORDS: u16 = 0x3fff;

    /// The next `exec_count` (0..=0x3fff) dwords on the XCCs of `xcc_mask`.
    pub const fn new(xcc_mask: u8, exec_count: u16) -> Result<Self, PacketError> {
        if exec_count > Self::MAX_EXEC_DWORDS {
            return Err(PacketError::FieldRange {
                packet: "PRED_EXEC",
                field: "EXEC_COUNT",
                value: exec_count as u64,
                limit: "0..=0x3fff",
            });
        }
        Ok(PredExec { xcc_mask, exec_count })
    }

    /// The XCCs that run the predicated dwords (bit `i`: XCC `i`).
    pub const fn xcc_mask(&self) -> u8 {
        self.xcc_mask
    }
    /// How many dwords after the packet it covers.
    pub const fn exec_count(&self) -> u16 {
        self.exec_count
    }
    /// Whether XCC `xcc` runs the predicated dwords.
    pub const fn runs_on(&self, xcc: u32) -> bool {
        xcc < 8 && self.xcc_mask & (1 << xcc) != 0
    }

    /// Appends the packet; returns its start index in `out`.
    pub fn encode(&self, _target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&[
            header(Opcode::PredExec, 1),
            (self.xcc_mask as u32) << 24 | self.exec_count as u32,
        ]);
        start
    }
}

// ---------------------------------------------------------------------------------
// INDIRECT_BUFFER

/// `PACKET3_INDIRECT_BUFFER`: execute `size_dwords` dwords at `addr`, then return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndirectBuffer {
    addr: u64,
    size_dwords: u32,
    /// `INDIRECT_BUFFER_VALID`
    pub valid: bool,
    /// `CHAIN`: continue in the IB without returning.
    pub chain: bool,
    /// `PRE_ENA`
    pub pre_ena: bool,
    /// `VMID` (4 bits).
    pub vmid: u8,
    /// Cache policy of the fetch.
    pub cache_policy: CachePolicy,
    /// `PRE_RESUME`
    pub pre_resume: bool,
}

/// Patchable fields of [`IndirectBuffer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndirectBufferField {
    /// IB address, lo then hi dword.
    Address,
}

impl IndirectBufferField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            IndirectBufferField::Address => 1,
        }
    }
}

impl IndirectBuffer {
    /// Dwords, header included.
    pub const DWORDS: usize = 4;
    /// Largest IB (`IB_SIZE` is 20 bits).
    pub const MAX_DWORDS: u32 = (1 << 20) - 1;

    /// A valid IB of `size_dwords` (1..=0xfffff) at the 4-byte-aligned `addr`.
    pub const fn new(addr: u64, size_dwords: u32) -> Result<Self, PacketError> {
        if addr % 4 != 0 {
            return Err(PacketError::FieldRange {
                packet: "PACKET3_INDIRECT_BUFFER",
                field: "address",
                value: addr,
                limit: "4-byte aligned",
            });
        }
        if size_dwords == 0 || size_dwords > Self::MAX_DWORDS {
            return Err(PacketError::FieldRange {
                packet: "PACKET3_INDIRECT_BUFFER",
                field: "size",
                value: size_dwords as u64,
                limit: "1..=0xfffff dwords",
            });
        }
        Ok(IndirectBuffer {
            addr,
            size_dwords,
            valid: true,
            chain: false,
            pre_ena: false,
            vmid: 0,
            cache_policy: CachePolicy::Lru,
            pre_resume: false,
        })
    }

    /// IB address.
    pub const fn addr(&self) -> u64 {
        self.addr
    }

    /// IB length in dwords.
    pub const fn size_dwords(&self) -> u32 {
        self.size_dwords
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        let ctl = self.size_dwords
            | ((self.chain as u32) << 20)
            | ((self.pre_ena as u32) << 21)
            | ((self.valid as u32) << 23)
            | ((self.vmid as u32 & 0xf) << 24)
            | ((self.cache_policy as u32) << 28)
            | ((self.pre_resume as u32) << 30);
        let [lo, hi] = lo_hi(self.addr);
        [header(Opcode::IndirectBuffer, 3), lo, hi, ctl]
    }

    /// Appends the packet; returns its start index in `out`.
    #[inline(always)]
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&self.to_dwords(target));
        start
    }
}
