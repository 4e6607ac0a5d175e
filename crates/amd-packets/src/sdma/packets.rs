//! The SDMA packets, one struct each.

use super::{MAX_BYTES_PER_PACKET, Opcode, SUBOP_COPY_LINEAR, SUBOP_TIMESTAMP_GET_GLOBAL, header};
use crate::pm4::CompareFunc;
use crate::{CmdSink, GfxTarget, PacketError, lo_hi};

const fn range(packet: &'static str, field: &'static str, value: u64, limit: &'static str) -> PacketError {
    PacketError::FieldRange {
        packet,
        field,
        value,
        limit,
    }
}

// ---------------------------------------------------------------------------------
// NOP

/// `SDMA_OP_NOP`: the header plus `count` skipped dwords (14-bit count).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SdmaNop {
    count: u16,
}

impl SdmaNop {
    /// Largest `count`.
    pub const MAX_COUNT: u16 = 0x3fff;

    /// A NOP spanning `dwords` (1..=0x4000) dwords in all.
    pub const fn new(dwords: usize) -> Result<Self, PacketError> {
        if dwords == 0 || dwords > Self::MAX_COUNT as usize + 1 {
            return Err(range("SDMA_NOP", "dwords", dwords as u64, "1..=0x4000"));
        }
        Ok(SdmaNop {
            count: (dwords - 1) as u16,
        })
    }

    /// Dwords the NOP spans, header included.
    pub const fn dwords(&self) -> usize {
        self.count as usize + 1
    }

    /// Appends the packet; returns its start index in `out`.
    pub fn encode(&self, _target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&[header(Opcode::Nop, 0, (self.count as u32) << 16)]);
        let zeros = [0u32; 64];
        let mut left = self.count as usize;
        while left > 0 {
            let n = left.min(zeros.len());
            out.put(&zeros[..n]);
            left -= n;
        }
        start
    }
}

// ---------------------------------------------------------------------------------
// COPY_LINEAR

/// Byte swap applied by the SDMA engine (`*_SW` fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Swap {
    /// None.
    #[default]
    None = 0,
    /// 8 in 16.
    Swap16 = 1,
    /// 8 in 32.
    Swap32 = 2,
    /// 8 in 64.
    Swap64 = 3,
}

impl Swap {
    /// The swap for a 2-bit field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 3 {
            0 => Swap::None,
            1 => Swap::Swap16,
            2 => Swap::Swap32,
            _ => Swap::Swap64,
        }
    }
}

/// `SDMA_OP_COPY` / `SDMA_SUBOP_COPY_LINEAR`: copy `bytes` from `src` to `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CopyLinear {
    src: u64,
    dst: u64,
    bytes: u32,
    /// `TMZ`: trusted-memory copy.
    pub tmz: bool,
    /// `BACKWARDS`: copy from the end (for overlapping ranges).
    pub backwards: bool,
    /// Byte swap on the source.
    pub src_swap: Swap,
    /// Byte swap on the destination.
    pub dst_swap: Swap,
}

/// Patchable fields of [`CopyLinear`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyLinearField {
    /// Byte count − 1.
    Count,
    /// Source address, lo then hi.
    Src,
    /// Destination address, lo then hi.
    Dst,
}

impl CopyLinearField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            CopyLinearField::Count => 1,
            CopyLinearField::Src => 3,
            CopyLinearField::Dst => 5,
        }
    }
}

impl CopyLinear {
    /// Dwords, header included.
    pub const DWORDS: usize = 7;

    /// A copy of `bytes` (1..=4 MiB) from `src` to `dst`.
    pub const fn new(dst: u64, src: u64, bytes: u32) -> Result<Self, PacketError> {
        if bytes == 0 || bytes > MAX_BYTES_PER_PACKET {
            return Err(range("SDMA_COPY_LINEAR", "bytes", bytes as u64, "1..=0x400000"));
        }
        Ok(Self::raw(dst, src, bytes))
    }

    pub(super) const fn raw(dst: u64, src: u64, bytes: u32) -> Self {
        CopyLinear {
            src,
            dst,
            bytes,
            tmz: false,
            backwards: false,
            src_swap: Swap::None,
            dst_swap: Swap::None,
        }
    }

    /// Source address.
    pub const fn src(&self) -> u64 {
        self.src
    }
    /// Destination address.
    pub const fn dst(&self) -> u64 {
        self.dst
    }
    /// Bytes copied.
    pub const fn bytes(&self) -> u32 {
        self.bytes
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, target: GfxTarget) -> [u32; Self::DWORDS] {
        let hdr = header(
            Opcode::Copy,
            SUBOP_COPY_LINEAR,
            ((self.tmz as u32) << 18) | ((self.backwards as u32) << 25),
        );
        let count = (self.bytes - 1) & ((1 << target.sdma_count_bits()) - 1);
        let param = ((self.dst_swap as u32) << 16) | ((self.src_swap as u32) << 24);
        let [sl, sh] = lo_hi(self.src);
        let [dl, dh] = lo_hi(self.dst);
        [hdr, count, param, sl, sh, dl, dh]
    }

    /// Appends the packet; returns its start index in `out`.
    #[inline(always)]
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&self.to_dwords(target));
        start
    }

    /// The packets that copy `size` bytes from `src` to `dst`, each at most 4 MiB,
    /// in address order. Fails unless both exclusive ends (`src + size`, `dst + size`)
    /// fit in 64 bits.
    pub fn split(dst: u64, src: u64, size: u64) -> Result<CopySplit, PacketError> {
        if src.checked_add(size).is_none() || dst.checked_add(size).is_none() {
            return Err(range(
                "SDMA_COPY_LINEAR",
                "size",
                size,
                "ranges inside the 64-bit address space",
            ));
        }
        Ok(CopySplit { dst, src, left: size })
    }

    /// Appends the packets of [`CopyLinear::split`]; returns how many were written.
    #[inline]
    pub fn encode_split(
        target: GfxTarget,
        dst: u64,
        src: u64,
        size: u64,
        out: &mut impl CmdSink,
    ) -> Result<usize, PacketError> {
        let mut n = 0;
        for p in Self::split(dst, src, size)? {
            p.encode(target, out);
            n += 1;
        }
        Ok(n)
    }

    /// Rewrites the addresses of the packets [`CopyLinear::encode_split`] wrote at
    /// `start` in `buf` for a copy of `size` bytes, so a recorded copy can be replayed
    /// between other buffers of the same size.
    pub fn patch_split(
        target: GfxTarget,
        buf: &mut [u32],
        start: usize,
        dst: u64,
        src: u64,
        size: u64,
    ) -> Result<(), PacketError> {
        for (i, p) in Self::split(dst, src, size)?.enumerate() {
            let at = start + i * Self::DWORDS;
            crate::patch::set_u64(buf, at + CopyLinearField::Src.offset(target), p.src)?;
            crate::patch::set_u64(buf, at + CopyLinearField::Dst.offset(target), p.dst)?;
        }
        Ok(())
    }

    /// Packets needed for `size` bytes.
    pub const fn packets_for(size: u64) -> u64 {
        size.div_ceil(MAX_BYTES_PER_PACKET as u64)
    }
}

/// Iterator over the packets of a split copy (see [`CopyLinear::split`]).
#[derive(Clone, Debug)]
pub struct CopySplit {
    dst: u64,
    src: u64,
    left: u64,
}

impl Iterator for CopySplit {
    type Item = CopyLinear;

    #[inline]
    fn next(&mut self) -> Option<CopyLinear> {
        if self.left == 0 {
            return None;
        }
        let n = self.left.min(MAX_BYTES_PER_PACKET as u64);
        // n is in 1..=4 MiB, and the ranges were checked not to wrap.
        let p = CopyLinear::raw(self.dst, self.src, n as u32);
        self.dst += n;
        self.src += n;
        self.left -= n;
        Some(p)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(CopyLinear::packets_for(self.left)).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl ExactSizeIterator for CopySplit {}

// ---------------------------------------------------------------------------------
// CONSTANT_FILL

/// `SDMA_OP_CONST_FILL`: fill `bytes` at `dst` with the 32-bit pattern `data`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConstFill {
    dst: u64,
    data: u32,
    bytes: u32,
    /// Byte swap of the destination.
    pub swap: Swap,
    /// `FILLSIZE` (2 bits; the amdgpu driver's fills leave it 0).
    pub fill_size: u8,
}

/// Patchable fields of [`ConstFill`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstFillField {
    /// Destination address, lo then hi.
    Dst,
    /// The fill pattern.
    Data,
    /// Byte count − 1.
    Count,
}

impl ConstFillField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            ConstFillField::Dst => 1,
            ConstFillField::Data => 3,
            ConstFillField::Count => 4,
        }
    }
}

impl ConstFill {
    /// Dwords, header included.
    pub const DWORDS: usize = 5;

    /// A fill of `bytes` (1..=4 MiB) at `dst` with `data`.
    pub const fn new(dst: u64, data: u32, bytes: u32) -> Result<Self, PacketError> {
        if bytes == 0 || bytes > MAX_BYTES_PER_PACKET {
            return Err(range("SDMA_CONST_FILL", "bytes", bytes as u64, "1..=0x400000"));
        }
        Ok(Self::raw(dst, data, bytes))
    }

    pub(super) const fn raw(dst: u64, data: u32, bytes: u32) -> Self {
        ConstFill {
            dst,
            data,
            bytes,
            swap: Swap::None,
            fill_size: 0,
        }
    }

    /// Destination address.
    pub const fn dst(&self) -> u64 {
        self.dst
    }
    /// Fill pattern.
    pub const fn data(&self) -> u32 {
        self.data
    }
    /// Bytes filled.
    pub const fn bytes(&self) -> u32 {
        self.bytes
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, target: GfxTarget) -> [u32; Self::DWORDS] {
        let hdr = header(
            Opcode::ConstFill,
            0,
            ((self.swap as u32) << 16) | ((self.fill_size as u32 & 3) << 30),
        );
        let count = (self.bytes - 1) & ((1 << target.sdma_count_bits()) - 1);
        let [dl, dh] = lo_hi(self.dst);
        [hdr, dl, dh, self.data, count]
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
// FENCE

/// `SDMA_OP_FENCE`: write `data` to `addr` once prior packets are done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fence {
    /// Destination address.
    pub addr: u64,
    /// Value written.
    pub data: u32,
    /// `MTYPE` (3 bits): memory type of the write; tinygrad writes 3 (uncached).
    pub mtype: u8,
    /// Header bits 19–28 (`GCC`, `SYS`, `SNP`, `GPA`, `L2_POLICY`, and on SDMA 6
    /// `LLC_POLICY`, `CPV`), as they stand in the header.
    pub cache_bits: u32,
}

/// Patchable fields of [`Fence`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceField {
    /// Address, lo then hi.
    Address,
    /// Value written.
    Data,
}

impl FenceField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            FenceField::Address => 1,
            FenceField::Data => 3,
        }
    }
}

impl Fence {
    /// Dwords, header included.
    pub const DWORDS: usize = 4;
    /// Mask of [`Fence::cache_bits`] within the header.
    pub const CACHE_BITS_MASK: u32 = 0x3ff << 19;
    /// `MTYPE` uncached, as tinygrad's signals.
    pub const MTYPE_UC: u8 = 3;

    /// A fence writing `data` to `addr` with `MTYPE` 3 (uncached).
    pub const fn new(addr: u64, data: u32) -> Self {
        Fence {
            addr,
            data,
            mtype: Self::MTYPE_UC,
            cache_bits: 0,
        }
    }

    /// A fence as a signal on `target`: [`Fence::new`]'s uncached `MTYPE` where the
    /// header has the field (SDMA 5 and later), 0 on SDMA 4 (gfx9), whose FENCE header
    /// has only the opcode and sub-opcode (`vega10_sdma_pkt_open.h`).
    pub const fn new_on(target: GfxTarget, addr: u64, data: u32) -> Self {
        let f = Self::new(addr, data);
        if target.is_gfx9() { f.mtype(0) } else { f }
    }

    /// Sets `MTYPE` (masked to 3 bits).
    pub const fn mtype(mut self, mtype: u8) -> Self {
        self.mtype = mtype & 7;
        self
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        let hdr = header(
            Opcode::Fence,
            0,
            ((self.mtype as u32 & 7) << 16) | (self.cache_bits & Self::CACHE_BITS_MASK),
        );
        let [lo, hi] = lo_hi(self.addr);
        [hdr, lo, hi, self.data]
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
// TRAP

/// `SDMA_OP_TRAP`: raise an interrupt carrying `int_context` (28 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Trap {
    int_context: u32,
}

impl Trap {
    /// Dwords, header included.
    pub const DWORDS: usize = 2;
    /// Largest context value.
    pub const MAX_CONTEXT: u32 = (1 << 28) - 1;

    /// A trap with context `int_context` (at most 28 bits).
    pub const fn new(int_context: u32) -> Result<Self, PacketError> {
        if int_context > Self::MAX_CONTEXT {
            return Err(range("SDMA_TRAP", "int_context", int_context as u64, "0..=0xfffffff"));
        }
        Ok(Trap { int_context })
    }

    /// The interrupt context.
    pub const fn int_context(&self) -> u32 {
        self.int_context
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        [header(Opcode::Trap, 0, 0), self.int_context]
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
// POLL_REGMEM

/// `SDMA_OP_POLL_REGMEM`: stall until `(value at addr & mask) func reference`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PollRegmem {
    /// Comparison.
    pub function: CompareFunc,
    /// `MEM_POLL`: poll memory (else a register).
    pub mem_poll: bool,
    /// `HDP_FLUSH`: the HDP flush handshake form.
    pub hdp_flush: bool,
    /// Address polled (memory), or register offset (register form).
    pub addr: u64,
    /// Reference value.
    pub reference: u32,
    /// Mask applied to the polled value.
    pub mask: u32,
    /// Poll interval (16 bits).
    pub interval: u16,
    /// Retries before giving up (12 bits; 0xfff retries forever).
    pub retry_count: u16,
}

/// Patchable fields of [`PollRegmem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollRegmemField {
    /// Address, lo then hi.
    Address,
    /// Reference value.
    Reference,
}

impl PollRegmemField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            PollRegmemField::Address => 1,
            PollRegmemField::Reference => 3,
        }
    }
}

impl PollRegmem {
    /// Dwords, header included.
    pub const DWORDS: usize = 6;
    /// Retry count that never gives up.
    pub const RETRY_FOREVER: u16 = 0xfff;

    /// Wait until the dword at `addr` is `>= reference`, full mask, interval 4, retry
    /// forever (tinygrad's `wait`).
    pub const fn memory_ge(addr: u64, reference: u32) -> Self {
        Self::memory(addr, CompareFunc::GreaterEqual, reference)
    }

    /// Wait on the dword at `addr` with `function`.
    pub const fn memory(addr: u64, function: CompareFunc, reference: u32) -> Self {
        PollRegmem {
            function,
            mem_poll: true,
            hdp_flush: false,
            addr,
            reference,
            mask: u32::MAX,
            interval: 4,
            retry_count: Self::RETRY_FOREVER,
        }
    }

    /// Sets the mask.
    pub const fn mask(mut self, mask: u32) -> Self {
        self.mask = mask;
        self
    }

    /// Sets the interval and retry count (masked to 12 bits).
    pub const fn timing(mut self, interval: u16, retry_count: u16) -> Self {
        self.interval = interval;
        self.retry_count = retry_count & 0xfff;
        self
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        let hdr = header(
            Opcode::PollRegmem,
            0,
            ((self.hdp_flush as u32) << 26) | ((self.function as u32) << 28) | ((self.mem_poll as u32) << 31),
        );
        let [lo, hi] = lo_hi(self.addr);
        let dw5 = self.interval as u32 | ((self.retry_count as u32 & 0xfff) << 16);
        [hdr, lo, hi, self.reference, self.mask, dw5]
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
// TIMESTAMP

/// `SDMA_OP_TIMESTAMP` / `GET_GLOBAL`: write the 64-bit global GPU timestamp to `addr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timestamp {
    addr: u64,
}

/// Patchable fields of [`Timestamp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimestampField {
    /// Address, lo then hi.
    Address,
}

impl TimestampField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            TimestampField::Address => 1,
        }
    }
}

impl Timestamp {
    /// Dwords, header included.
    pub const DWORDS: usize = 3;

    /// A timestamp write to the 8-byte-aligned `addr`.
    pub const fn new(addr: u64) -> Result<Self, PacketError> {
        if addr % 8 != 0 {
            return Err(range("SDMA_TIMESTAMP_GET_GLOBAL", "address", addr, "8-byte aligned"));
        }
        Ok(Timestamp { addr })
    }

    pub(super) const fn raw(addr: u64) -> Self {
        Timestamp { addr }
    }

    /// The destination address (the engine ignores bits 2:0).
    pub const fn addr(&self) -> u64 {
        self.addr
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        let [lo, hi] = lo_hi(self.addr);
        [header(Opcode::Timestamp, SUBOP_TIMESTAMP_GET_GLOBAL, 0), lo, hi]
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
// ATOMIC

/// `SDMA_OP_ATOMIC`: an atomic operation on the qword (or dword) at `addr` with
/// `src_data` (and `cmp_data` for a compare-and-swap); `loop` retries a compare-swap
/// every `loop_interval` clocks until it succeeds. ROCr ends its copies with one
/// ([`Atomic::ADD64`] of -1: a signal's decrement).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Atomic {
    /// The memory operated on.
    pub addr: u64,
    /// `OPERATION` (7 bits): the TC atomic operation.
    pub operation: u8,
    /// The operand.
    pub src_data: u64,
    /// The compare value of a compare-and-swap.
    pub cmp_data: u64,
    /// `L`: loop until a compare-and-swap succeeds.
    pub looped: bool,
    /// Clocks between the loop's tries (13 bits).
    pub loop_interval: u16,
}

impl Atomic {
    /// Dwords, header included.
    pub const DWORDS: usize = 8;
    /// `SDMA_ATOMIC_ADD64`: adds `src_data` to the qword at `addr`.
    pub const ADD64: u8 = 47;

    /// A 64-bit add of `value` at `addr` (8-byte aligned).
    pub const fn add64(addr: u64, value: u64) -> Result<Self, PacketError> {
        if addr % 8 != 0 {
            return Err(range("SDMA_ATOMIC", "addr", addr, "8-byte aligned"));
        }
        Ok(Atomic {
            addr,
            operation: Self::ADD64,
            src_data: value,
            cmp_data: 0,
            looped: false,
            loop_interval: 0,
        })
    }

    /// The packet's dwords.
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        let [al, ah] = lo_hi(self.addr);
        let [sl, sh] = lo_hi(self.src_data);
        let [cl, ch] = lo_hi(self.cmp_data);
        [
            header(
                Opcode::Atomic,
                0,
                (self.looped as u32) << 16 | (self.operation as u32 & 0x7f) << 25,
            ),
            al,
            ah,
            sl,
            sh,
            cl,
            ch,
            self.loop_interval as u32 & 0x1fff,
        ]
    }

    /// Appends the packet; returns its start index in `out`.
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&self.to_dwords(target));
        start
    }
}

// GCR_REQ

/// `SDMA_OP_GCR_REQ`: cache control over `[base, limit]` (48-bit, 128-byte granular
/// addresses) with a 19-bit `GCR_CNTL` (the ACQUIRE_MEM bit layout). SDMA 5 and later:
/// SDMA 4 (gfx9) has no such packet, and the decoder refuses it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GcrReq {
    base: u64,
    limit: u64,
    gcr_control: u32,
    vmid: u8,
    /// Sub-op `SDMA_SUBOP_USER_GCR` (1): the same request as user-mode queues send
    /// it (ROCr), where the kernel driver's has sub-op 0.
    pub user: bool,
}

impl GcrReq {
    /// Dwords, header included.
    pub const DWORDS: usize = 5;
    const VA_MASK: u64 = ((1 << 48) - 1) & !0x7f;

    /// A request for `gcr_control` over `[base, limit]`; both addresses 48-bit and
    /// 128-byte aligned, `gcr_control` 19 bits, `vmid` 4 bits.
    pub const fn new(base: u64, limit: u64, gcr_control: u32, vmid: u8) -> Result<Self, PacketError> {
        if base & !Self::VA_MASK != 0 {
            return Err(range("SDMA_GCR_REQ", "base", base, "48-bit, 128-byte aligned"));
        }
        if limit & !Self::VA_MASK != 0 {
            return Err(range("SDMA_GCR_REQ", "limit", limit, "48-bit, 128-byte aligned"));
        }
        if gcr_control >= 1 << 19 {
            return Err(range("SDMA_GCR_REQ", "gcr_control", gcr_control as u64, "19 bits"));
        }
        if vmid > 15 {
            return Err(range("SDMA_GCR_REQ", "vmid", vmid as u64, "0..=15"));
        }
        Ok(GcrReq {
            base,
            limit,
            gcr_control,
            vmid,
            user: false,
        })
    }

    /// Whole-memory request for `gcr_control` (as the amdgpu driver emits).
    pub const fn all(gcr_control: u32) -> Self {
        GcrReq {
            base: 0,
            limit: 0,
            gcr_control: gcr_control & ((1 << 19) - 1),
            vmid: 0,
            user: false,
        }
    }

    /// Range start.
    pub const fn base(&self) -> u64 {
        self.base
    }
    /// Range end.
    pub const fn limit(&self) -> u64 {
        self.limit
    }
    /// `GCR_CNTL` bits.
    pub const fn gcr_control(&self) -> u32 {
        self.gcr_control
    }
    /// VMID.
    pub const fn vmid(&self) -> u8 {
        self.vmid
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        [
            header(Opcode::GcrReq, self.user as u8, 0),
            self.base as u32 & !0x7f,
            ((self.base >> 32) as u32 & 0xffff) | ((self.gcr_control & 0xffff) << 16),
            ((self.gcr_control >> 16) & 7) | (self.limit as u32 & !0x7f),
            ((self.limit >> 32) as u32 & 0xffff) | ((self.vmid as u32 & 0xf) << 24),
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
// INDIRECT

/// `SDMA_OP_INDIRECT`: execute an indirect buffer of `size_dwords` at `addr`.
///
/// The engine requires the packet to *end* on an 8-dword boundary of the ring; pad
/// with [`Indirect::padding_at`] NOP dwords first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Indirect {
    addr: u64,
    size_dwords: u32,
    /// `VMID` (4 bits).
    pub vmid: u8,
    /// `PRIV`
    pub privileged: bool,
    /// Context-save area address.
    pub csa_addr: u64,
}

/// Patchable fields of [`Indirect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndirectField {
    /// IB address, lo then hi.
    Address,
    /// IB size in dwords.
    Size,
}

impl IndirectField {
    /// Dword offset of the field from the packet header.
    pub const fn offset(self, _target: GfxTarget) -> usize {
        match self {
            IndirectField::Address => 1,
            IndirectField::Size => 3,
        }
    }
}

impl Indirect {
    /// Dwords, header included.
    pub const DWORDS: usize = 6;
    /// Largest IB (`IB_SIZE` is 20 bits).
    pub const MAX_DWORDS: u32 = (1 << 20) - 1;

    /// An IB of `size_dwords` (1..=0xfffff) at the 32-byte-aligned `addr`.
    pub const fn new(addr: u64, size_dwords: u32) -> Result<Self, PacketError> {
        if addr % 32 != 0 {
            return Err(range("SDMA_INDIRECT", "address", addr, "32-byte aligned"));
        }
        if size_dwords == 0 || size_dwords > Self::MAX_DWORDS {
            return Err(range("SDMA_INDIRECT", "size", size_dwords as u64, "1..=0xfffff dwords"));
        }
        Ok(Self::raw(addr, size_dwords))
    }

    pub(super) const fn raw(addr: u64, size_dwords: u32) -> Self {
        Indirect {
            addr,
            size_dwords,
            vmid: 0,
            privileged: false,
            csa_addr: 0,
        }
    }

    /// IB address.
    pub const fn addr(&self) -> u64 {
        self.addr
    }
    /// IB size in dwords.
    pub const fn size_dwords(&self) -> u32 {
        self.size_dwords
    }

    /// NOP dwords to write at ring dword position `ring_pos` so that an INDIRECT
    /// packet written after them ends on an 8-dword boundary.
    pub const fn padding_at(ring_pos: usize) -> usize {
        (8 - (ring_pos + Self::DWORDS) % 8) % 8
    }

    /// The packet's dwords.
    #[inline(always)]
    pub const fn to_dwords(&self, _target: GfxTarget) -> [u32; Self::DWORDS] {
        let hdr = header(
            Opcode::Indirect,
            0,
            ((self.vmid as u32 & 0xf) << 16) | ((self.privileged as u32) << 31),
        );
        let [al, ah] = lo_hi(self.addr);
        let [cl, ch] = lo_hi(self.csa_addr);
        [hdr, al, ah, self.size_dwords, cl, ch]
    }

    /// Appends the packet; returns its start index in `out`.
    #[inline(always)]
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> usize {
        let start = out.len();
        out.put(&self.to_dwords(target));
        start
    }
}
