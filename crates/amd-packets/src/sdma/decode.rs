//! Decoding an SDMA stream into typed packets, and printing it.

use std::fmt;

use super::packets::*;
use super::{Opcode, SUBOP_COPY_LINEAR, SUBOP_TIMESTAMP_GET_GLOBAL};
use crate::pm4::CompareFunc;
use crate::stream::{Decode, Stream};
use crate::{GfxTarget, PacketError, join};

/// One decoded SDMA packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SdmaPacket {
    /// `SDMA_OP_NOP`
    Nop(SdmaNop),
    /// `SDMA_OP_COPY` / `COPY_LINEAR`
    CopyLinear(CopyLinear),
    /// `SDMA_OP_CONST_FILL`
    ConstFill(ConstFill),
    /// `SDMA_OP_FENCE`
    Fence(Fence),
    /// `SDMA_OP_TRAP`
    Trap(Trap),
    /// `SDMA_OP_POLL_REGMEM`
    PollRegmem(PollRegmem),
    /// `SDMA_OP_TIMESTAMP` / `GET_GLOBAL`
    Timestamp(Timestamp),
    /// `SDMA_OP_GCR_REQ`
    GcrReq(GcrReq),
    /// `SDMA_OP_INDIRECT`
    Indirect(Indirect),
    /// `SDMA_OP_ATOMIC`
    Atomic(Atomic),
}

/// The `N` dwords of a fixed-size packet, header included.
fn take<const N: usize>(words: &[u32], packet: &'static str) -> Result<[u32; N], PacketError> {
    words
        .get(..N)
        .and_then(|w| w.try_into().ok())
        .ok_or(PacketError::Truncated {
            offset: 0,
            packet,
            needed: N,
            available: words.len(),
        })
}

impl SdmaPacket {
    /// Decodes the packet at the start of `words`; returns it and the dwords it spans.
    /// Error offsets are relative to `words`.
    pub fn decode(target: GfxTarget, words: &[u32]) -> Result<(Self, usize), PacketError> {
        let hdr = PacketError::header(words)?;
        let op = hdr as u8;
        let sub_op = (hdr >> 8) as u8;
        let unknown = PacketError::UnknownOpcode {
            offset: 0,
            engine: "SDMA",
            opcode: op,
            sub_op,
            header: hdr,
        };
        let count_mask = (1u32 << target.sdma_count_bits()) - 1;
        let byte_count = |packet: &'static str, field: u32| -> Result<u32, PacketError> {
            let count = field & count_mask;
            // Bytes = count + 1; the widest count field (30 bits) cannot overflow.
            if field & !count_mask != 0 {
                return Err(PacketError::invalid(packet, "count", field));
            }
            Ok(count + 1)
        };
        let pkt = match (op, sub_op) {
            (0, 0) => {
                let nop = SdmaNop::new(((hdr >> 16) & 0x3fff) as usize + 1)?;
                if words.len() < nop.dwords() {
                    return Err(PacketError::Truncated {
                        offset: 0,
                        packet: "SDMA_NOP",
                        needed: nop.dwords(),
                        available: words.len(),
                    });
                }
                SdmaPacket::Nop(nop)
            }
            (1, SUBOP_COPY_LINEAR) => {
                let [h, count, param, sl, sh, dl, dh] = take(words, "SDMA_COPY_LINEAR")?;
                if h & (1 << 27) != 0 {
                    return Err(PacketError::invalid("SDMA_COPY_LINEAR", "broadcast", 1));
                }
                let mut p = CopyLinear::raw(join(dl, dh), join(sl, sh), byte_count("SDMA_COPY_LINEAR", count)?);
                p.tmz = h & (1 << 18) != 0;
                p.backwards = h & (1 << 25) != 0;
                p.dst_swap = Swap::from_bits(param >> 16);
                p.src_swap = Swap::from_bits(param >> 24);
                SdmaPacket::CopyLinear(p)
            }
            (11, 0) => {
                let [h, dl, dh, data, count] = take(words, "SDMA_CONST_FILL")?;
                let mut p = ConstFill::raw(join(dl, dh), data, byte_count("SDMA_CONST_FILL", count)?);
                p.swap = Swap::from_bits(h >> 16);
                p.fill_size = (h >> 30) as u8;
                SdmaPacket::ConstFill(p)
            }
            (5, 0) => {
                let [h, lo, hi, data] = take(words, "SDMA_FENCE")?;
                SdmaPacket::Fence(Fence {
                    addr: join(lo, hi),
                    data,
                    mtype: ((h >> 16) & 7) as u8,
                    cache_bits: h & Fence::CACHE_BITS_MASK,
                })
            }
            (6, 0) => {
                let [_, ctx] = take(words, "SDMA_TRAP")?;
                SdmaPacket::Trap(Trap::new(ctx & Trap::MAX_CONTEXT)?)
            }
            (8, 0) => {
                let [h, lo, hi, reference, mask, dw5] = take(words, "SDMA_POLL_REGMEM")?;
                let func = (h >> 28) & 7;
                SdmaPacket::PollRegmem(PollRegmem {
                    function: CompareFunc::from_bits(func).ok_or(PacketError::invalid(
                        "SDMA_POLL_REGMEM",
                        "func",
                        func,
                    ))?,
                    mem_poll: h & (1 << 31) != 0,
                    hdp_flush: h & (1 << 26) != 0,
                    addr: join(lo, hi),
                    reference,
                    mask,
                    interval: dw5 as u16,
                    retry_count: ((dw5 >> 16) & 0xfff) as u16,
                })
            }
            (13, SUBOP_TIMESTAMP_GET_GLOBAL) => {
                let [_, lo, hi] = take(words, "SDMA_TIMESTAMP_GET_GLOBAL")?;
                SdmaPacket::Timestamp(Timestamp::raw(join(lo, hi)))
            }
            (10, 0) => {
                let [h, al, ah, sl, sh, cl, ch, l] = take(words, "SDMA_ATOMIC")?;
                SdmaPacket::Atomic(Atomic {
                    addr: join(al, ah),
                    operation: (h >> 25) as u8,
                    src_data: join(sl, sh),
                    cmp_data: join(cl, ch),
                    looped: h >> 16 & 1 != 0,
                    loop_interval: (l & 0x1fff) as u16,
                })
            }
            // Sub-op 1: SDMA_SUBOP_USER_GCR, the same request from a user-mode queue.
            // SDMA 4 (gfx9) has no GCR_REQ.
            (17, 0 | 1) if !target.is_gfx9() => {
                let [_, p1, p2, p3, p4] = take(words, "SDMA_GCR_REQ")?;
                let base = (p1 & !0x7f) as u64 | (((p2 & 0xffff) as u64) << 32);
                let limit = (p3 & !0x7f) as u64 | (((p4 & 0xffff) as u64) << 32);
                let gcr = (p2 >> 16) | ((p3 & 7) << 16);
                let mut p = GcrReq::new(base, limit, gcr, ((p4 >> 24) & 0xf) as u8)?;
                p.user = sub_op == 1;
                SdmaPacket::GcrReq(p)
            }
            (4, 0) => {
                let [h, al, ah, size, cl, ch] = take(words, "SDMA_INDIRECT")?;
                let size = size & Indirect::MAX_DWORDS;
                if size == 0 {
                    return Err(PacketError::invalid("SDMA_INDIRECT", "ib_size", 0));
                }
                let mut p = Indirect::raw(join(al, ah), size);
                p.vmid = ((h >> 16) & 0xf) as u8;
                p.privileged = h & (1 << 31) != 0;
                p.csa_addr = join(cl, ch);
                SdmaPacket::Indirect(p)
            }
            _ => return Err(unknown),
        };
        let len = pkt.dwords();
        Ok((pkt, len))
    }

    /// Dwords the packet spans, header included.
    pub const fn dwords(&self) -> usize {
        match self {
            SdmaPacket::Nop(p) => p.dwords(),
            SdmaPacket::CopyLinear(_) => CopyLinear::DWORDS,
            SdmaPacket::ConstFill(_) => ConstFill::DWORDS,
            SdmaPacket::Fence(_) => Fence::DWORDS,
            SdmaPacket::Trap(_) => Trap::DWORDS,
            SdmaPacket::PollRegmem(_) => PollRegmem::DWORDS,
            SdmaPacket::Timestamp(_) => Timestamp::DWORDS,
            SdmaPacket::GcrReq(_) => GcrReq::DWORDS,
            SdmaPacket::Indirect(_) => Indirect::DWORDS,
            SdmaPacket::Atomic(_) => Atomic::DWORDS,
        }
    }

    /// The packet's opcode.
    pub const fn opcode(&self) -> Opcode {
        match self {
            SdmaPacket::Nop(_) => Opcode::Nop,
            SdmaPacket::CopyLinear(_) => Opcode::Copy,
            SdmaPacket::ConstFill(_) => Opcode::ConstFill,
            SdmaPacket::Fence(_) => Opcode::Fence,
            SdmaPacket::Trap(_) => Opcode::Trap,
            SdmaPacket::PollRegmem(_) => Opcode::PollRegmem,
            SdmaPacket::Timestamp(_) => Opcode::Timestamp,
            SdmaPacket::GcrReq(_) => Opcode::GcrReq,
            SdmaPacket::Indirect(_) => Opcode::Indirect,
            SdmaPacket::Atomic(_) => Opcode::Atomic,
        }
    }

    /// Appends the packet; returns its start index in `out`.
    pub fn encode(&self, target: GfxTarget, out: &mut impl crate::CmdSink) -> usize {
        match self {
            SdmaPacket::Nop(p) => p.encode(target, out),
            SdmaPacket::CopyLinear(p) => p.encode(target, out),
            SdmaPacket::ConstFill(p) => p.encode(target, out),
            SdmaPacket::Fence(p) => p.encode(target, out),
            SdmaPacket::Trap(p) => p.encode(target, out),
            SdmaPacket::PollRegmem(p) => p.encode(target, out),
            SdmaPacket::Timestamp(p) => p.encode(target, out),
            SdmaPacket::GcrReq(p) => p.encode(target, out),
            SdmaPacket::Indirect(p) => p.encode(target, out),
            SdmaPacket::Atomic(p) => p.encode(target, out),
        }
    }
}

/// Iterator over the packets of an SDMA stream (see [`crate::Stream`]).
pub type SdmaStream<'a> = Stream<'a, SdmaPacket>;

/// Decodes an SDMA stream.
pub fn decode(target: GfxTarget, words: &[u32]) -> SdmaStream<'_> {
    Stream::new(target, words)
}

impl Decode<'_> for SdmaPacket {
    fn decode_one(target: GfxTarget, words: &[u32]) -> Result<(Self, usize), PacketError> {
        Self::decode(target, words)
    }
}

impl fmt::Display for SdmaPacket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SdmaPacket::Nop(p) => write!(f, "SDMA_NOP ({} dwords)", p.dwords()),
            SdmaPacket::CopyLinear(p) => {
                write!(
                    f,
                    "SDMA_COPY_LINEAR dst = {:#x} src = {:#x} bytes = {:#x}",
                    p.dst(),
                    p.src(),
                    p.bytes()
                )?;
                if p.backwards {
                    f.write_str(" backwards")?;
                }
                if p.tmz {
                    f.write_str(" tmz")?;
                }
                Ok(())
            }
            SdmaPacket::ConstFill(p) => {
                write!(
                    f,
                    "SDMA_CONST_FILL dst = {:#x} data = {:#010x} bytes = {:#x}",
                    p.dst(),
                    p.data(),
                    p.bytes()
                )
            }
            SdmaPacket::Fence(p) => write!(
                f,
                "SDMA_FENCE addr = {:#x} data = {:#x} mtype = {}",
                p.addr, p.data, p.mtype
            ),
            SdmaPacket::Trap(p) => write!(f, "SDMA_TRAP int_context = {:#x}", p.int_context()),
            SdmaPacket::PollRegmem(p) => write!(
                f,
                "SDMA_POLL_REGMEM {}[{:#x}] & {:#x} {} {:#x} interval = {} retry = {:#x}",
                if p.mem_poll { "mem" } else { "reg" },
                p.addr,
                p.mask,
                p.function.symbol(),
                p.reference,
                p.interval,
                p.retry_count
            ),
            SdmaPacket::Timestamp(p) => {
                write!(f, "SDMA_TIMESTAMP_GET_GLOBAL addr = {:#x}", p.addr())
            }
            SdmaPacket::GcrReq(p) => write!(
                f,
                "SDMA_GCR_REQ base = {:#x} limit = {:#x} gcr_cntl = {:#x} vmid = {}",
                p.base(),
                p.limit(),
                p.gcr_control(),
                p.vmid()
            ),
            SdmaPacket::Indirect(p) => {
                write!(
                    f,
                    "SDMA_INDIRECT addr = {:#x} size = {} dwords vmid = {}",
                    p.addr(),
                    p.size_dwords(),
                    p.vmid
                )
            }
            SdmaPacket::Atomic(p) => write!(
                f,
                "SDMA_ATOMIC op = {} addr = {:#x} src = {:#x} cmp = {:#x}{}",
                p.operation,
                p.addr,
                p.src_data,
                p.cmp_data,
                if p.looped { " loop" } else { "" }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: GfxTarget = GfxTarget::Gfx11;

    /// SDMA 4 (gfx9.4): no GCR_REQ, a FENCE without MTYPE, 22-bit byte counts.
    #[test]
    fn sdma4_differences() {
        let t = GfxTarget::Gfx94;
        let mut buf = Vec::new();
        GcrReq::all(0).encode(T, &mut buf);
        assert!(matches!(
            SdmaPacket::decode(t, &buf),
            Err(PacketError::UnknownOpcode { opcode: 17, .. })
        ));
        assert!(SdmaPacket::decode(T, &buf).is_ok());
        buf.clear();
        Fence::new_on(t, 0x1000, 1).encode(t, &mut buf);
        assert_eq!(buf, [5, 0x1000, 0, 1]);
        buf.clear();
        Fence::new_on(T, 0x1000, 1).encode(T, &mut buf);
        assert_eq!(buf[0], 5 | 3 << 16);
        // A 4 MiB copy is the most one packet moves on SDMA 4.
        let words = [1, (4 << 20) - 1, 0, 0, 0, 0, 0];
        assert!(SdmaPacket::decode(t, &words).is_ok());
        let words = [1, 4 << 20, 0, 0, 0, 0, 0];
        assert!(SdmaPacket::decode(t, &words).is_err());
        assert!(SdmaPacket::decode(T, &words).is_ok());
    }

    /// ROCr 6.1's cache flush before a copy (`BuildGCRCommand`: sub-op
    /// SDMA_SUBOP_USER_GCR, GL2 and GLK write-back) decodes, and re-encodes as it was.
    /// ROCr 6.1's end of a copy (`BuildAtomicDecrementCommand`: SDMA_ATOMIC_ADD64 of
    /// -1 at the signal's value) decodes, and re-encodes as it was.
    #[test]
    fn rocr_atomic_decrements_decode() {
        let words = [0x5e00_000a, 0x1000, 0x7f00, u32::MAX, u32::MAX, 0, 0, 0];
        let (p, len) = SdmaPacket::decode(T, &words).unwrap();
        assert_eq!(len, 8);
        assert_eq!(
            p,
            SdmaPacket::Atomic(Atomic::add64(0x7f00_0000_1000, u64::MAX).unwrap())
        );
        assert_eq!(
            p.to_string(),
            "SDMA_ATOMIC op = 47 addr = 0x7f0000001000 src = 0xffffffffffffffff cmp = 0x0"
        );
        let mut out = Vec::new();
        p.encode(T, &mut out);
        assert_eq!(out, words);
    }

    #[test]
    fn rocr_user_gcr_requests_decode() {
        let words = [0x0000_0111, 0, (1 << 15 | 1 << 6) << 16, 0, 0];
        let (p, len) = SdmaPacket::decode(T, &words).unwrap();
        let SdmaPacket::GcrReq(g) = p else { panic!("{p:?}") };
        assert_eq!((len, g.user, g.gcr_control()), (5, true, 1 << 15 | 1 << 6));
        assert_eq!(g.to_dwords(T), words);
        let mut bad = words;
        bad[0] = 0x0000_0211;
        assert!(SdmaPacket::decode(T, &bad).is_err(), "sub-op 2");
    }

    #[test]
    fn zero_dwords_are_one_dword_nops() {
        let items: Vec<_> = decode(T, &[0, 0, 0]).map(|r| r.unwrap()).collect();
        assert_eq!(items.len(), 3);
        assert!(
            items
                .iter()
                .all(|(_, p)| *p == SdmaPacket::Nop(SdmaNop::new(1).unwrap()))
        );
    }

    #[test]
    fn count_width_follows_the_target() {
        let mut big = CopyLinear::raw(0x2000, 0x1000, 1).to_dwords(T);
        big[1] = 0x0100_0000; // 16 MiB + 1: fits SDMA 6's 30 bits, not SDMA 5's 22
        assert!(
            matches!(SdmaPacket::decode(GfxTarget::Gfx11, &big), Ok((SdmaPacket::CopyLinear(c), 7)) if c.bytes() == 0x0100_0001)
        );
        assert!(matches!(
            SdmaPacket::decode(GfxTarget::Gfx103, &big),
            Err(PacketError::InvalidField { field: "count", .. })
        ));
    }

    #[test]
    fn errors_name_opcode_and_offset() {
        let mut buf = Vec::new();
        Fence::new(0x1000, 1).encode(T, &mut buf);
        buf.push(0x0000_0301); // COPY with sub-op 3 (SOA): not decoded
        match decode(T, &buf).nth(1) {
            Some(Err(PacketError::UnknownOpcode {
                offset: 4,
                opcode: 1,
                sub_op: 3,
                ..
            })) => {}
            other => panic!("{other:?}"),
        }
        let e = SdmaPacket::decode(T, &[0x0000_0005, 1]).unwrap_err();
        assert!(matches!(
            e,
            PacketError::Truncated {
                needed: 4,
                available: 2,
                ..
            }
        ));
        assert!(e.to_string().contains("SDMA_FENCE"));
    }

    #[test]
    fn indirect_padding_ends_on_eight_dwords() {
        for pos in 0..32 {
            let pad = Indirect::padding_at(pos);
            assert!(pad < 8);
            assert_eq!((pos + pad + Indirect::DWORDS) % 8, 0);
        }
    }
}
