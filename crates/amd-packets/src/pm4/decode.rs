//! Decoding a PM4 stream into typed packets, and printing it.

use std::fmt;

use super::packets::*;
use super::{Opcode, ShReg};
use crate::stream::{Decode, Stream};
use crate::{CmdSink, GfxTarget, PacketError, join};

/// One decoded PM4 packet. `SetShReg` borrows its values from the decoded stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pm4Packet<'a> {
    /// `PACKET3_NOP`
    Nop(Nop),
    /// `PACKET3_SET_SH_REG`
    SetShReg(SetShReg<'a>),
    /// `PACKET3_DISPATCH_DIRECT`
    DispatchDirect(DispatchDirect),
    /// `PACKET3_EVENT_WRITE`
    EventWrite(EventWrite),
    /// `PACKET3_ACQUIRE_MEM`
    AcquireMem(AcquireMem),
    /// `PACKET3_RELEASE_MEM`
    ReleaseMem(ReleaseMem),
    /// `PACKET3_WAIT_REG_MEM`
    WaitRegMem(WaitRegMem),
    /// `PACKET3_INDIRECT_BUFFER`
    IndirectBuffer(IndirectBuffer),
    /// `PACKET3_PRED_EXEC` (the predicated dwords follow it in the stream)
    PredExec(PredExec),
}

const P: &str = "PM4";

fn expect_count(
    op: Opcode,
    body: &[u32],
    ok: impl Fn(usize) -> bool,
    expected: &'static str,
) -> Result<(), PacketError> {
    if ok(body.len()) {
        Ok(())
    } else {
        Err(PacketError::BadCount {
            offset: 0,
            packet: op.name(),
            count: body.len(),
            expected,
        })
    }
}

/// Reads `N` body dwords after checking the header announced exactly `N`.
fn fixed<const N: usize>(op: Opcode, body: &[u32]) -> Result<[u32; N], PacketError> {
    const EXACT: [&str; 8] = ["0", "1", "2", "3", "4", "5", "6", "7"];
    let expected = EXACT.get(N).copied().unwrap_or("a fixed size");
    expect_count(op, body, |n| n == N, expected)?;
    body.try_into().map_err(|_| PacketError::BadCount {
        offset: 0,
        packet: op.name(),
        count: body.len(),
        expected,
    })
}

impl<'a> Pm4Packet<'a> {
    /// Decodes the packet at the start of `words`; returns it and the dwords it spans.
    /// Error offsets are relative to `words`.
    pub fn decode(target: GfxTarget, words: &'a [u32]) -> Result<(Self, usize), PacketError> {
        let hdr = PacketError::header(words)?;
        let ty = (hdr >> 30) as u8;
        if ty != 3 {
            return Err(PacketError::BadPacketType {
                offset: 0,
                ty,
                header: hdr,
            });
        }
        let opcode = (hdr >> 8) as u8;
        let count = ((hdr >> 16) & 0x3fff) as usize;
        let Some(op) = Opcode::from_u8(opcode) else {
            return Err(PacketError::UnknownOpcode {
                offset: 0,
                engine: P,
                opcode,
                sub_op: 0,
                header: hdr,
            });
        };
        // A NOP with count 0x3fff is the one-dword filler.
        let body_len = if op == Opcode::Nop && count == 0x3fff {
            0
        } else {
            count + 1
        };
        let total = 1 + body_len;
        let Some(body) = words.get(1..total) else {
            return Err(PacketError::Truncated {
                offset: 0,
                packet: op.name(),
                needed: total,
                available: words.len(),
            });
        };
        let pkt = match op {
            Opcode::Nop => Pm4Packet::Nop(Nop::new(total)?),
            Opcode::SetShReg => {
                expect_count(op, body, |n| n >= 2, "at least 2")?;
                let reg = body[0];
                if reg > u16::MAX as u32 {
                    return Err(PacketError::invalid(op.name(), "register offset", reg));
                }
                Pm4Packet::SetShReg(SetShReg::new(ShReg::new(reg as u16), &body[1..])?)
            }
            Opcode::DispatchDirect => {
                let [x, y, z, init] = fixed(op, body)?;
                Pm4Packet::DispatchDirect(DispatchDirect {
                    dims: [x, y, z],
                    initiator: DispatchInitiator(init),
                })
            }
            Opcode::EventWrite => {
                expect_count(op, body, |n| n == 1 || n == 3, "1 or 3")?;
                let dw = body[0];
                let event = EventType::new((dw & 0x3f) as u8)?;
                let index = ((dw >> 8) & 0xf) as u8;
                let mut ev = EventWrite::new(event, index);
                if let [_, lo, hi] = *body {
                    ev = ev.address(join(lo, hi));
                }
                Pm4Packet::EventWrite(ev)
            }
            Opcode::AcquireMem if target.is_gfx9() => {
                let [coher_cntl, sl, sh, bl, bh, poll_interval] = fixed(op, body)?;
                Pm4Packet::AcquireMem(AcquireMem {
                    coher_cntl,
                    size: join(sl, sh),
                    base: join(bl, bh),
                    poll_interval,
                    gcr: GcrCntl(0),
                })
            }
            Opcode::AcquireMem => {
                let [coher_cntl, sl, sh, bl, bh, poll_interval, gcr] = fixed(op, body)?;
                Pm4Packet::AcquireMem(AcquireMem {
                    coher_cntl,
                    size: join(sl, sh),
                    base: join(bl, bh),
                    poll_interval,
                    gcr: GcrCntl(gcr),
                })
            }
            Opcode::ReleaseMem => {
                let [ev, sel, al, ah, dl, dh, ctx] = fixed(op, body)?;
                let name = op.name();
                let field = |v: u32, f: &'static str| PacketError::invalid(name, f, v);
                Pm4Packet::ReleaseMem(ReleaseMem {
                    event: EventType::new((ev & 0x3f) as u8)?,
                    event_index: ((ev >> 8) & 0xf) as u8,
                    gcr: ReleaseGcr(ev & ReleaseGcr::MASK),
                    cache_policy: CachePolicy::from_bits((ev >> 25) & 3).ok_or(field(ev, "CACHE_POLICY"))?,
                    execute: ev & (1 << 28) != 0,
                    dst_sel: DstSel::from_bits((sel >> 16) & 3).ok_or(field((sel >> 16) & 3, "DST_SEL"))?,
                    int_sel: IntSel::from_bits((sel >> 24) & 7).ok_or(field((sel >> 24) & 7, "INT_SEL"))?,
                    data_sel: DataSel::from_bits(sel >> 29).ok_or(field(sel >> 29, "DATA_SEL"))?,
                    address: join(al, ah),
                    data: join(dl, dh),
                    int_ctxid: ctx,
                })
            }
            Opcode::WaitRegMem => {
                let [info, a, b, reference, mask, interval] = fixed(op, body)?;
                let name = op.name();
                let function =
                    CompareFunc::from_bits(info & 7).ok_or(PacketError::invalid(name, "FUNCTION", info & 7))?;
                let location = if info & (1 << 4) != 0 {
                    WaitLocation::Memory { addr: join(a, b) }
                } else {
                    WaitLocation::Registers { reg0: a, reg1: b }
                };
                let operation = match (info >> 6) & 3 {
                    0 => WaitOperation::WaitRegMem,
                    1 => WaitOperation::WriteWaitWriteReg,
                    v => return Err(PacketError::invalid(name, "OPERATION", v)),
                };
                let engine = match (info >> 8) & 3 {
                    0 => EngineSel::Me,
                    1 => EngineSel::Pfp,
                    v => return Err(PacketError::invalid(name, "ENGINE", v)),
                };
                if interval > u16::MAX as u32 {
                    return Err(PacketError::invalid(name, "POLL_INTERVAL", interval));
                }
                Pm4Packet::WaitRegMem(WaitRegMem {
                    function,
                    location,
                    operation,
                    engine,
                    reference,
                    mask,
                    poll_interval: interval as u16,
                })
            }
            Opcode::IndirectBuffer => {
                let [lo, hi, ctl] = fixed(op, body)?;
                let mut ib = IndirectBuffer::new(join(lo, hi), ctl & IndirectBuffer::MAX_DWORDS)
                    .map_err(|_| PacketError::invalid(op.name(), "IB_BASE/IB_SIZE", ctl))?;
                ib.chain = ctl & (1 << 20) != 0;
                ib.pre_ena = ctl & (1 << 21) != 0;
                ib.valid = ctl & (1 << 23) != 0;
                ib.vmid = ((ctl >> 24) & 0xf) as u8;
                ib.cache_policy = CachePolicy::from_bits((ctl >> 28) & 3).ok_or(PacketError::invalid(
                    op.name(),
                    "CACHE_POLICY",
                    ctl,
                ))?;
                ib.pre_resume = ctl & (1 << 30) != 0;
                Pm4Packet::IndirectBuffer(ib)
            }
            Opcode::PredExec => {
                let [dw] = fixed(op, body)?;
                if dw & 0x00ff_c000 != 0 {
                    return Err(PacketError::invalid(op.name(), "reserved bits 14..24", dw));
                }
                Pm4Packet::PredExec(PredExec::new((dw >> 24) as u8, (dw & 0x3fff) as u16)?)
            }
        };
        Ok((pkt, total))
    }

    /// Appends the packet; returns its start index in `out`.
    pub fn encode(&self, target: GfxTarget, out: &mut impl CmdSink) -> usize {
        match self {
            Pm4Packet::Nop(p) => p.encode(target, out),
            Pm4Packet::SetShReg(p) => p.encode(target, out),
            Pm4Packet::DispatchDirect(p) => p.encode(target, out),
            Pm4Packet::EventWrite(p) => p.encode(target, out),
            Pm4Packet::AcquireMem(p) => p.encode(target, out),
            Pm4Packet::ReleaseMem(p) => p.encode(target, out),
            Pm4Packet::WaitRegMem(p) => p.encode(target, out),
            Pm4Packet::IndirectBuffer(p) => p.encode(target, out),
            Pm4Packet::PredExec(p) => p.encode(target, out),
        }
    }

    /// The packet's opcode.
    pub const fn opcode(&self) -> Opcode {
        match self {
            Pm4Packet::Nop(_) => Opcode::Nop,
            Pm4Packet::SetShReg(_) => Opcode::SetShReg,
            Pm4Packet::DispatchDirect(_) => Opcode::DispatchDirect,
            Pm4Packet::EventWrite(_) => Opcode::EventWrite,
            Pm4Packet::AcquireMem(_) => Opcode::AcquireMem,
            Pm4Packet::ReleaseMem(_) => Opcode::ReleaseMem,
            Pm4Packet::WaitRegMem(_) => Opcode::WaitRegMem,
            Pm4Packet::IndirectBuffer(_) => Opcode::IndirectBuffer,
            Pm4Packet::PredExec(_) => Opcode::PredExec,
        }
    }
}

/// Iterator over the packets of a PM4 stream (see [`crate::Stream`]).
pub type Pm4Stream<'a> = Stream<'a, Pm4Packet<'a>>;

/// Decodes a PM4 stream.
pub fn decode(target: GfxTarget, words: &[u32]) -> Pm4Stream<'_> {
    Stream::new(target, words)
}

impl<'a> Decode<'a> for Pm4Packet<'a> {
    fn decode_one(target: GfxTarget, words: &'a [u32]) -> Result<(Self, usize), PacketError> {
        Self::decode(target, words)
    }
}

impl fmt::Display for Pm4Packet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.opcode().name())?;
        match self {
            Pm4Packet::Nop(p) => write!(f, " ({} dwords)", p.dwords()),
            Pm4Packet::SetShReg(p) => {
                write!(f, " {} =", p.reg())?;
                for v in p.values() {
                    write!(f, " {v:#010x}")?;
                }
                Ok(())
            }
            Pm4Packet::DispatchDirect(p) => {
                write!(
                    f,
                    " grid = {}x{}x{} initiator = {:#x}",
                    p.dims[0], p.dims[1], p.dims[2], p.initiator.0
                )
            }
            Pm4Packet::EventWrite(p) => {
                write!(f, " {} index = {}", p.event, p.index)?;
                match p.address {
                    Some(a) => write!(f, " addr = {a:#x}"),
                    None => Ok(()),
                }
            }
            Pm4Packet::AcquireMem(p) => write!(
                f,
                " base = {:#x} size = {:#x} coher_cntl = {:#x} gcr_cntl = {:#x} poll = {}",
                p.base, p.size, p.coher_cntl, p.gcr.0, p.poll_interval
            ),
            Pm4Packet::ReleaseMem(p) => write!(
                f,
                " {} index = {} gcr = {:#x} data_sel = {:?} int_sel = {:?} dst_sel = {:?} addr = {:#x} data = {:#x} ctxid = {}",
                p.event, p.event_index, p.gcr.0, p.data_sel, p.int_sel, p.dst_sel, p.address, p.data, p.int_ctxid
            ),
            Pm4Packet::WaitRegMem(p) => {
                match p.location {
                    WaitLocation::Memory { addr } => write!(f, " mem[{addr:#x}]")?,
                    WaitLocation::Registers { reg0, reg1 } => match p.operation {
                        WaitOperation::WaitRegMem => write!(f, " reg[{reg0:#x}]")?,
                        WaitOperation::WriteWaitWriteReg => write!(f, " write reg[{reg0:#x}], poll reg[{reg1:#x}]")?,
                    },
                }
                write!(
                    f,
                    " & {:#x} {} {:#x} interval = {}",
                    p.mask,
                    p.function.symbol(),
                    p.reference,
                    p.poll_interval
                )
            }
            Pm4Packet::IndirectBuffer(p) => write!(
                f,
                " addr = {:#x} size = {} dwords{}",
                p.addr(),
                p.size_dwords(),
                if p.valid { "" } else { " (not valid)" }
            ),
            Pm4Packet::PredExec(p) => write!(f, " xcc_mask = {:#04x} next {} dwords", p.xcc_mask(), p.exec_count()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pm4::regs::gfx11;

    const T: GfxTarget = GfxTarget::Gfx11;

    #[test]
    fn set_sh_reg_prints_like_a_disassembly() {
        let mut buf = Vec::new();
        SetShReg::new(gfx11::COMPUTE_PGM_LO, &[0x1a00, 0])
            .unwrap()
            .encode(T, &mut buf);
        let (pkt, len) = Pm4Packet::decode(T, &buf).unwrap();
        assert_eq!(len, 4);
        assert_eq!(pkt.to_string(), "SET_SH_REG COMPUTE_PGM_LO = 0x00001a00 0x00000000");
    }

    #[test]
    fn errors_name_the_offset() {
        let mut buf = Vec::new();
        EventWrite::cs_partial_flush().encode(T, &mut buf);
        buf.push(0xc000_ff00); // unknown opcode 0xff
        let items: Vec<_> = decode(T, &buf).collect();
        assert_eq!(items.len(), 2);
        assert!(matches!(
            items[1],
            Err(PacketError::UnknownOpcode {
                offset: 2,
                opcode: 0xff,
                ..
            })
        ));

        let trunc = [super::super::header(Opcode::ReleaseMem, 7), 0, 0];
        assert!(matches!(
            decode(T, &trunc).next(),
            Some(Err(PacketError::Truncated {
                offset: 0,
                needed: 8,
                available: 3,
                ..
            }))
        ));
        assert!(matches!(
            decode(T, &[0x8000_0000]).next(),
            Some(Err(PacketError::BadPacketType { ty: 2, .. }))
        ));
        let bad_count = [super::super::header(Opcode::DispatchDirect, 2), 1, 2];
        assert!(matches!(
            decode(T, &bad_count).next(),
            Some(Err(PacketError::BadCount { count: 2, .. }))
        ));
    }

    /// PRED_EXEC as tinygrad 0.14 writes it for a multi-XCC GPU (`PACKET3(PRED_EXEC,
    /// 0)`, then `xcc_mask << 24 | dwords`); the decoder refuses reserved bits and a
    /// longer body, and the constructor a count past 14 bits.
    #[test]
    fn pred_exec_is_the_mask_and_the_count() {
        let t = GfxTarget::Gfx94;
        let mut buf = Vec::new();
        PredExec::new(0b100, 9).unwrap().encode(t, &mut buf);
        assert_eq!(buf, [0xc000_2300, 0x0400_0009]);
        let (pkt, len) = Pm4Packet::decode(t, &buf).unwrap();
        assert_eq!(len, 2);
        let Pm4Packet::PredExec(p) = pkt else { panic!("{pkt:?}") };
        assert!(p.runs_on(2) && !p.runs_on(0) && !p.runs_on(8));
        assert_eq!(pkt.to_string(), "PRED_EXEC xcc_mask = 0x04 next 9 dwords");
        assert!(PredExec::new(0xff, 0x4000).is_err());
        assert!(matches!(
            Pm4Packet::decode(t, &[0xc000_2300, 0x0000_4000]),
            Err(PacketError::InvalidField { .. })
        ));
        assert!(matches!(
            Pm4Packet::decode(t, &[0xc001_2300, 1, 2]),
            Err(PacketError::BadCount { count: 2, .. })
        ));
    }

    #[test]
    fn one_dword_nop() {
        let mut buf = Vec::new();
        Nop::new(1).unwrap().encode(T, &mut buf);
        Nop::new(3).unwrap().encode(T, &mut buf);
        assert_eq!(buf, [0xffff_1000, 0xc001_1000, 0, 0]);
        let pkts: Vec<_> = decode(T, &buf).map(|r| r.unwrap()).collect();
        assert_eq!(
            pkts,
            [
                (0, Pm4Packet::Nop(Nop::new(1).unwrap())),
                (1, Pm4Packet::Nop(Nop::new(3).unwrap()))
            ]
        );
    }
}
