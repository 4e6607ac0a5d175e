//! Property tests: every packet round-trips through its decoder over the whole range
//! of its fields, headers announce exactly the body written, the COPY_LINEAR splitter
//! covers a copy exactly, and no input makes a decoder panic.

use amd_packets::pm4::{self, *};
use amd_packets::sdma::{self, *};
use amd_packets::{GfxTarget, PacketError, patch};
use proptest::prelude::*;

fn target() -> impl Strategy<Value = GfxTarget> {
    prop_oneof![Just(GfxTarget::Gfx94), Just(GfxTarget::Gfx103), Just(GfxTarget::Gfx11)]
}

fn compare_func() -> impl Strategy<Value = CompareFunc> {
    (0u32..7).prop_map(|v| CompareFunc::from_bits(v).unwrap())
}

fn cache_policy() -> impl Strategy<Value = CachePolicy> {
    (0u32..4).prop_map(|v| CachePolicy::from_bits(v).unwrap())
}

fn swap() -> impl Strategy<Value = Swap> {
    (0u32..4).prop_map(Swap::from_bits)
}

/// A PM4 packet; SET_SH_REG keeps its values owned so the packet can borrow them.
#[derive(Clone, Debug)]
enum Pm4Spec {
    Sh(u16, Vec<u32>),
    Other(Pm4Packet<'static>),
}

impl Pm4Spec {
    fn packet(&self) -> Pm4Packet<'_> {
        match self {
            Pm4Spec::Sh(reg, values) => Pm4Packet::SetShReg(SetShReg::new(ShReg::new(*reg), values).unwrap()),
            Pm4Spec::Other(p) => *p,
        }
    }

    /// The packet as `t` carries it: gfx9's ACQUIRE_MEM has no GCR_CNTL.
    fn packet_on(&self, t: GfxTarget) -> Pm4Packet<'_> {
        match self.packet() {
            Pm4Packet::AcquireMem(a) if t.is_gfx9() => Pm4Packet::AcquireMem(AcquireMem { gcr: GcrCntl(0), ..a }),
            p => p,
        }
    }
}

/// Whether `t` has the SDMA packet (SDMA 4 has no GCR_REQ).
fn sdma_has(t: GfxTarget, p: &SdmaPacket) -> bool {
    !(t.is_gfx9() && matches!(p, SdmaPacket::GcrReq(_)))
}

fn pm4_packet() -> impl Strategy<Value = Pm4Spec> {
    let nop = (1usize..=0x4000).prop_map(|n| Pm4Packet::Nop(Nop::new(n).unwrap()));
    let dispatch = (any::<[u32; 3]>(), any::<u32>()).prop_map(|(dims, init)| {
        Pm4Packet::DispatchDirect(DispatchDirect::new(dims).initiator(DispatchInitiator(init)))
    });
    let event = (0u8..64, 0u8..16, proptest::option::of(any::<u64>())).prop_map(|(e, i, a)| {
        let ev = EventWrite::new(EventType::new(e).unwrap(), i);
        Pm4Packet::EventWrite(match a {
            Some(a) => ev.address(a),
            None => ev,
        })
    });
    let acquire = (any::<u32>(), any::<u64>(), any::<u64>(), any::<u32>(), any::<u32>()).prop_map(
        |(coher_cntl, size, base, poll_interval, gcr)| {
            Pm4Packet::AcquireMem(AcquireMem {
                coher_cntl,
                size,
                base,
                poll_interval,
                gcr: GcrCntl(gcr),
            })
        },
    );
    let release = (
        (0u8..64, 0u8..16, any::<u32>(), cache_policy(), any::<bool>()),
        (0u32..4, 0u32..7, 0u32..6),
        (any::<u64>(), any::<u64>(), any::<u32>()),
    )
        .prop_map(|((e, i, gcr, cp, ex), (dst, int, data), (address, value, ctx))| {
            Pm4Packet::ReleaseMem(
                ReleaseMem::new(address, DataSel::from_bits(data).unwrap())
                    .event(EventType::new(e).unwrap(), i)
                    .gcr(ReleaseGcr(gcr))
                    .cache_policy(cp)
                    .execute(ex)
                    .dst_sel(DstSel::from_bits(dst).unwrap())
                    .int_sel(IntSel::from_bits(int).unwrap())
                    .data(value)
                    .int_ctxid(ctx),
            )
        });
    let location = prop_oneof![
        any::<u64>().prop_map(|addr| WaitLocation::Memory { addr }),
        (any::<u32>(), any::<u32>()).prop_map(|(reg0, reg1)| WaitLocation::Registers { reg0, reg1 }),
    ];
    let wait = (
        compare_func(),
        location,
        any::<bool>(),
        any::<bool>(),
        any::<u32>(),
        any::<u32>(),
        any::<u16>(),
    )
        .prop_map(|(function, location, op, pfp, reference, mask, poll_interval)| {
            Pm4Packet::WaitRegMem(WaitRegMem {
                function,
                location,
                operation: if op {
                    WaitOperation::WriteWaitWriteReg
                } else {
                    WaitOperation::WaitRegMem
                },
                engine: if pfp { EngineSel::Pfp } else { EngineSel::Me },
                reference,
                mask,
                poll_interval,
            })
        });
    let ib = (
        any::<u64>(),
        1u32..=IndirectBuffer::MAX_DWORDS,
        any::<[bool; 4]>(),
        0u8..16,
        cache_policy(),
    )
        .prop_map(|(addr, size, [valid, chain, pre_ena, pre_resume], vmid, cp)| {
            let mut ib = IndirectBuffer::new(addr & !3, size).unwrap();
            ib.valid = valid;
            ib.chain = chain;
            ib.pre_ena = pre_ena;
            ib.pre_resume = pre_resume;
            ib.vmid = vmid;
            ib.cache_policy = cp;
            Pm4Packet::IndirectBuffer(ib)
        });
    let pred = (any::<u8>(), 0u16..=PredExec::MAX_EXEC_DWORDS)
        .prop_map(|(mask, n)| Pm4Packet::PredExec(PredExec::new(mask, n).unwrap()));
    let sh = (any::<u16>(), proptest::collection::vec(any::<u32>(), 1..200)).prop_map(|(r, v)| Pm4Spec::Sh(r, v));
    prop_oneof![
        nop.prop_map(Pm4Spec::Other),
        dispatch.prop_map(Pm4Spec::Other),
        event.prop_map(Pm4Spec::Other),
        acquire.prop_map(Pm4Spec::Other),
        release.prop_map(Pm4Spec::Other),
        wait.prop_map(Pm4Spec::Other),
        ib.prop_map(Pm4Spec::Other),
        pred.prop_map(Pm4Spec::Other),
        sh,
    ]
}

fn sdma_packet() -> impl Strategy<Value = SdmaPacket> {
    let max = sdma::MAX_BYTES_PER_PACKET;
    let nop = (1usize..=0x4000).prop_map(|n| SdmaPacket::Nop(SdmaNop::new(n).unwrap()));
    let copy = (
        any::<u64>(),
        any::<u64>(),
        1..=max,
        any::<bool>(),
        any::<bool>(),
        swap(),
        swap(),
    )
        .prop_map(|(dst, src, bytes, tmz, backwards, ss, ds)| {
            let mut c = CopyLinear::new(dst, src, bytes).unwrap();
            c.tmz = tmz;
            c.backwards = backwards;
            c.src_swap = ss;
            c.dst_swap = ds;
            SdmaPacket::CopyLinear(c)
        });
    let fill = (any::<u64>(), any::<u32>(), 1..=max, swap(), 0u8..4).prop_map(|(dst, data, bytes, sw, fs)| {
        let mut f = ConstFill::new(dst, data, bytes).unwrap();
        f.swap = sw;
        f.fill_size = fs;
        SdmaPacket::ConstFill(f)
    });
    let fence = (any::<u64>(), any::<u32>(), 0u8..8, any::<u32>()).prop_map(|(addr, data, mtype, bits)| {
        SdmaPacket::Fence(Fence {
            addr,
            data,
            mtype,
            cache_bits: bits & Fence::CACHE_BITS_MASK,
        })
    });
    let trap = (0..=Trap::MAX_CONTEXT).prop_map(|c| SdmaPacket::Trap(Trap::new(c).unwrap()));
    let poll = (
        compare_func(),
        any::<bool>(),
        any::<bool>(),
        any::<u64>(),
        any::<u32>(),
        any::<u32>(),
        any::<u16>(),
        0u16..0x1000,
    )
        .prop_map(
            |(function, mem_poll, hdp_flush, addr, reference, mask, interval, retry_count)| {
                SdmaPacket::PollRegmem(PollRegmem {
                    function,
                    mem_poll,
                    hdp_flush,
                    addr,
                    reference,
                    mask,
                    interval,
                    retry_count,
                })
            },
        );
    let ts = any::<u64>().prop_map(|a| SdmaPacket::Timestamp(Timestamp::new(a & !7).unwrap()));
    let va = || (0u64..(1 << 41)).prop_map(|v| v << 7);
    let gcr = (va(), va(), 0u32..(1 << 19), 0u8..16)
        .prop_map(|(b, l, g, v)| SdmaPacket::GcrReq(GcrReq::new(b, l, g, v).unwrap()));
    let ind = (
        any::<u64>(),
        1..=Indirect::MAX_DWORDS,
        0u8..16,
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(addr, size, vmid, privileged, csa)| {
            let mut i = Indirect::new(addr & !31, size).unwrap();
            i.vmid = vmid;
            i.privileged = privileged;
            i.csa_addr = csa;
            SdmaPacket::Indirect(i)
        });
    prop_oneof![nop, copy, fill, fence, trap, poll, ts, gcr, ind]
}

/// 512 cases per property, or `PROPTEST_CASES` for a longer run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

/// Every item of a decoded stream of `len` dwords prints; an error points inside the
/// stream and ends it.
fn check_stream<P: std::fmt::Display>(
    items: Vec<Result<(usize, P), PacketError>>,
    len: usize,
) -> Result<(), TestCaseError> {
    for (i, item) in items.iter().enumerate() {
        match item {
            Ok((at, p)) => {
                prop_assert!(*at < len);
                let _ = p.to_string();
            }
            Err(e) => {
                prop_assert!(e.offset().is_some_and(|o| o < len));
                prop_assert_eq!(i, items.len() - 1);
                let _ = e.to_string();
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn pm4_roundtrip(t in target(), spec in pm4_packet()) {
        let p = spec.packet();
        let mut buf = vec![0xdead_beef]; // packets start wherever the sink is
        let at = p.encode(t, &mut buf);
        prop_assert_eq!(at, 1);
        let (back, len) = Pm4Packet::decode(t, &buf[1..]).unwrap();
        prop_assert_eq!(back, spec.packet_on(t));
        prop_assert_eq!(len, buf.len() - 1);
        // The header's count is the body length − 1 (the one-dword NOP aside).
        let hdr = buf[1];
        prop_assert_eq!(hdr >> 30, 3);
        let count = ((hdr >> 16) & 0x3fff) as usize;
        if len == 1 {
            prop_assert_eq!(count, 0x3fff);
        } else {
            prop_assert_eq!(count + 1, len - 1);
        }
    }

    #[test]
    fn sdma_roundtrip(t in target(), p in sdma_packet()) {
        prop_assume!(sdma_has(t, &p));
        let mut buf = Vec::new();
        p.encode(t, &mut buf);
        let (back, len) = SdmaPacket::decode(t, &buf).unwrap();
        prop_assert_eq!(back, p);
        prop_assert_eq!(len, buf.len());
        prop_assert_eq!(len, p.dwords());
    }

    #[test]
    fn pm4_streams_decode_packet_by_packet(t in target(), specs in proptest::collection::vec(pm4_packet(), 0..12)) {
        let mut buf = Vec::new();
        let starts: Vec<usize> = specs.iter().map(|s| s.packet().encode(t, &mut buf)).collect();
        let decoded: Vec<_> = pm4::decode(t, &buf).map(|r| r.unwrap()).collect();
        prop_assert_eq!(decoded.len(), specs.len());
        for ((at, p), (start, spec)) in decoded.iter().zip(starts.iter().zip(&specs)) {
            prop_assert_eq!(at, start);
            prop_assert_eq!(*p, spec.packet_on(t));
        }
    }

    #[test]
    fn sdma_streams_decode_packet_by_packet(t in target(), ps in proptest::collection::vec(sdma_packet(), 0..12)) {
        let ps: Vec<_> = ps.into_iter().filter(|p| sdma_has(t, p)).collect();
        let mut buf = Vec::new();
        let starts: Vec<usize> = ps.iter().map(|p| p.encode(t, &mut buf)).collect();
        let decoded: Vec<_> = sdma::decode(t, &buf).map(|r| r.unwrap()).collect();
        let want: Vec<_> = starts.into_iter().zip(ps).collect();
        prop_assert_eq!(decoded, want);
    }

    #[test]
    fn copy_split_covers_the_range_exactly(
        t in target(),
        dst in any::<u64>(),
        src in any::<u64>(),
        size in prop_oneof![0u64..0x1000, 0u64..=(64 << 20) + 5, Just(0x40_0000), Just(0x40_0001)],
    ) {
        let fits = src.checked_add(size).is_some() && dst.checked_add(size).is_some();
        let split = CopyLinear::split(dst, src, size);
        prop_assert_eq!(split.is_ok(), fits);
        let Ok(split) = split else { return Ok(()) };
        let expected = size.div_ceil(0x40_0000) as usize;
        prop_assert_eq!(split.len(), expected);
        let (mut s, mut d) = (src, dst);
        let mut buf = Vec::new();
        let mut n = 0;
        for p in split {
            prop_assert!(p.bytes() >= 1 && p.bytes() <= sdma::MAX_BYTES_PER_PACKET);
            prop_assert_eq!((p.src(), p.dst()), (s, d));
            s += p.bytes() as u64;
            d += p.bytes() as u64;
            p.encode(t, &mut buf);
            n += 1;
        }
        prop_assert_eq!(n, expected);
        prop_assert_eq!((s - src, d - dst), (size, size));
        let mut again = vec![0];
        prop_assert_eq!(CopyLinear::encode_split(t, dst, src, size, &mut again).unwrap(), expected);
        prop_assert_eq!(&again[1..], &buf[..]);
        // A recorded copy patched to other addresses equals a fresh encode.
        let (dst2, src2) = (dst.wrapping_add(0x1234_5000) % (u64::MAX - size), src / 3);
        CopyLinear::patch_split(t, &mut again, 1, dst2, src2, size).unwrap();
        let mut fresh = vec![0];
        CopyLinear::encode_split(t, dst2, src2, size, &mut fresh).unwrap();
        prop_assert_eq!(again, fresh);
    }

    #[test]
    fn random_dwords_never_panic(t in target(), words in proptest::collection::vec(any::<u32>(), 0..64)) {
        check_stream(pm4::decode(t, &words).collect(), words.len())?;
        check_stream(sdma::decode(t, &words).collect(), words.len())?;
    }

    /// Random bodies behind plausible headers reach the per-packet field checks.
    #[test]
    fn plausible_headers_never_panic(
        t in target(),
        op in prop_oneof![Just(0x10u32), Just(0x15), Just(0x3c), Just(0x3f), Just(0x46), Just(0x49), Just(0x58), Just(0x76)],
        count in prop_oneof![0u32..10, Just(0x3fff), any::<u32>()],
        sdma_op in prop_oneof![0u32..20, any::<u32>()],
        body in proptest::collection::vec(any::<u32>(), 0..12),
    ) {
        let mut words = vec![(3 << 30) | ((count & 0x3fff) << 16) | (op << 8)];
        words.extend(&body);
        let _ = pm4::decode(t, &words).count();
        let mut words = vec![(sdma_op & 0xff) | (count << 8)];
        words.extend(&body);
        let _ = sdma::decode(t, &words).count();
    }

    #[test]
    fn patched_dispatch_equals_a_fresh_one(
        t in target(),
        a in (any::<u64>(), any::<[u32; 3]>(), any::<[u32; 3]>(), any::<u64>(), any::<u64>()),
        b in (any::<u64>(), any::<[u32; 3]>(), any::<[u32; 3]>(), any::<u64>(), any::<u64>()),
    ) {
        let build = |(code, grid, block, kernargs, scratch): (u64, [u32; 3], [u32; 3], u64, u64), out: &mut Vec<u32>| {
            let user = amd_packets::lo_hi(kernargs);
            pm4::recipes::Dispatch {
                code_addr: code & !0xff,
                rsrc1: 1,
                rsrc2: 2,
                rsrc3: 0,
                tmpring_size: 3,
                scratch_base: scratch & !0xff,
                user_data: &user,
                block,
                grid,
                initiator: DispatchInitiator::DEFAULT,
            }
            .encode(t, out)
            .unwrap()
        };
        let mut buf = Vec::new();
        let o = build(a, &mut buf);
        let (code, grid, block, kernargs, scratch) = b;
        patch::set_u64(&mut buf, o.code_addr, (code & !0xff) >> 8).unwrap();
        patch::set_slice(&mut buf, o.grid, &grid).unwrap();
        patch::set_slice(&mut buf, o.block, &block).unwrap();
        patch::set_u64(&mut buf, o.user_data, kernargs).unwrap();
        if let Some(s) = o.scratch_base {
            patch::set_u64(&mut buf, s, (scratch & !0xff) >> 8).unwrap();
        }
        let mut fresh = Vec::new();
        build(b, &mut fresh);
        prop_assert_eq!(buf, fresh);
    }
}

#[test]
fn set_sh_reg_limits() {
    let max = vec![7u32; 0x3fff];
    let p = SetShReg::new(ShReg::new(0), &max).unwrap();
    let mut buf = Vec::new();
    p.encode(GfxTarget::Gfx11, &mut buf);
    assert_eq!(buf.len(), 0x4001);
    assert_eq!(
        Pm4Packet::decode(GfxTarget::Gfx11, &buf).unwrap(),
        (Pm4Packet::SetShReg(p), 0x4001)
    );
    assert!(SetShReg::new(ShReg::new(0), &vec![0; 0x4000]).is_err());
    assert!(SetShReg::new(ShReg::new(0), &[]).is_err());
}

#[test]
fn constructors_reject_out_of_range_values() {
    assert!(CopyLinear::new(0, 0, 0).is_err());
    assert!(CopyLinear::new(0, 0, sdma::MAX_BYTES_PER_PACKET + 1).is_err());
    assert!(ConstFill::new(0, 0, 0).is_err());
    assert!(Trap::new(1 << 28).is_err());
    assert!(Timestamp::new(4).is_err());
    assert!(Indirect::new(16, 8).is_err());
    assert!(Indirect::new(32, 0).is_err());
    assert!(GcrReq::new(1 << 48, 0, 0, 0).is_err());
    assert!(GcrReq::new(0x40, 0, 0, 0).is_err());
    assert!(GcrReq::new(0, 0, 1 << 19, 0).is_err());
    assert!(GcrReq::new(0, 0, 0, 16).is_err());
    assert!(IndirectBuffer::new(2, 8).is_err());
    assert!(IndirectBuffer::new(4, 1 << 20).is_err());
    assert!(Nop::new(0).is_err());
    // 0x4001 dwords would need the count that marks the one-dword NOP.
    assert!(Nop::new(0x4001).is_err());
    let mut buf = Vec::new();
    Nop::new(0x4000).unwrap().encode(GfxTarget::Gfx11, &mut buf);
    let (back, len) = Pm4Packet::decode(GfxTarget::Gfx11, &buf).unwrap();
    assert_eq!((back, len), (Pm4Packet::Nop(Nop::new(0x4000).unwrap()), 0x4000));
    assert!(SdmaNop::new(0x4001).is_err());
    assert!(EventType::new(64).is_err());
    assert!(CopyLinear::split(0, u64::MAX - 4, 4).is_ok());
    assert!(
        CopyLinear::split(0, u64::MAX - 4, 5).is_err(),
        "the exclusive end must fit in 64 bits"
    );
}
