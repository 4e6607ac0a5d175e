//! Vector memory: FLAT, GLOBAL and SCRATCH loads, stores and atomics, the generic
//! (flat) apertures into LDS and private memory, and the atomics' arithmetic shared
//! with the LDS and buffer instructions.

use super::VgprRow;
use super::decode::Inst;
use super::exec::{R, f};
use super::fields as fld;
use super::opcodes::Global;
use super::opcodes::op::global;
use super::wave::{Bits, NULL, PRIVATE_APERTURE, SHARED_APERTURE, Wave};
use crate::error::Trap;
use crate::memory::{Access, AccessKind, Memory};

/// A FLAT, GLOBAL or SCRATCH access as the instruction's fields give it, whichever
/// generation's encoding they come from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlatAccess {
    /// The opcode, in RDNA3's numbering of its segment (FLAT, GLOBAL or SCRATCH).
    pub(crate) op: u16,
    /// VDST: the first destination VGPR.
    pub(crate) vdst: usize,
    /// SADDR: the scalar base's operand number (NULL: none).
    pub(crate) saddr: u16,
    /// DATA: the first data VGPR, as an operand number.
    pub(crate) data: u16,
    /// ADDR: the address VGPR's index.
    pub(crate) addr: usize,
    /// The signed byte offset.
    pub(crate) offset: i64,
    /// Atomics return the old value.
    pub(crate) returns: bool,
    /// SCRATCH: the address VGPR takes part.
    pub(crate) sve: bool,
    /// What the opcode does as a GLOBAL access, found when it is decoded: an atomic
    /// ([`atomic_op`]), else a load or store ([`global_kind`]; neither for an opcode
    /// [`global`] refuses).
    pub(crate) atomic: Option<AtomicOp>,
    pub(crate) kind: Option<MemOp>,
}

impl FlatAccess {
    /// The access of opcode `op` (RDNA3's numbering) with these fields, what the
    /// opcode does found once.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        op: u16,
        vdst: usize,
        saddr: u16,
        data: u16,
        addr: usize,
        offset: i64,
        returns: bool,
        sve: bool,
    ) -> FlatAccess {
        FlatAccess {
            op,
            vdst,
            saddr,
            data,
            addr,
            offset,
            returns,
            sve,
            atomic: atomic_op(op),
            kind: global_kind(op),
        }
    }
}

/// Runs a FLAT, GLOBAL or SCRATCH instruction (by its segment).
pub(crate) fn flat(w: &mut Wave, i: &Inst, mem: &dyn Memory, lds: &mut [u8]) -> R<()> {
    let iw = i.words();
    let access = flat_access(i);
    if fld::flat::SEG.matches(&iw) {
        return flat_generic(w, &access, mem, lds);
    }
    if fld::scratch::SEG.matches(&iw) {
        return scratch(w, &access);
    }
    if !fld::global::SEG.matches(&iw) {
        return Err("FLAT segment 3 does not exist".into());
    }
    global(w, &access, mem)
}

/// A FLAT-encoded instruction's access, whatever its segment.
fn flat_access(i: &Inst) -> FlatAccess {
    use fld::global::*;
    let iw = i.words();
    FlatAccess::new(
        i.op,
        VDST.index(&iw),
        SADDR.operand(&iw),
        DATA.operand(&iw),
        ADDR.index(&iw),
        i64::from(OFFSET.signed(&iw)),
        GLC.is_set(&iw),
        SVE.is_set(&iw),
    )
}

/// A GLOBAL instruction's access, for running it decoded once ([`global`]); `None`
/// for anything else (FLAT's other segments included).
pub(crate) fn global_access(i: &Inst) -> Option<FlatAccess> {
    (i.enc == super::decode::Encoding::Flat && fld::global::SEG.matches(&i.words())).then(|| flat_access(i))
}

/// A GLOBAL address from a VGPR pair (`lo`, `hi`) and the instruction's offset.
#[inline(always)]
pub(crate) fn pair_address(lo: u32, hi: u32, offset: i64) -> u64 {
    ((u64::from(lo) | u64::from(hi) << 32) as i64).wrapping_add(offset) as u64
}

/// A GLOBAL address from the scalar base `s`, a VGPR's 32-bit offset `lo` and the
/// instruction's offset.
#[inline(always)]
pub(crate) fn based_address(s: u64, lo: u32, offset: i64) -> u64 {
    (s.wrapping_add(u64::from(lo)) as i64).wrapping_add(offset) as u64
}

/// The load or store of a GLOBAL opcode other than an atomic (the ADDTID forms as the
/// dword load and store they make).
/// (Small and returned in registers: a `Result` carrying the error's `String` came back
/// through memory, and reading it stalled the one-lane path.)
#[inline]
fn global_kind(iop: u16) -> Option<MemOp> {
    let op = match iop {
        global::GLOBAL_LOAD_ADDTID_B32 => global::GLOBAL_LOAD_B32,
        global::GLOBAL_STORE_ADDTID_B32 => global::GLOBAL_STORE_B32,
        op => op,
    };
    mem_op(op)
}

/// The error for a GLOBAL opcode [`global_kind`] does not know.
#[cold]
fn unknown_global(iop: u16) -> Trap {
    Trap::missing(format!("global opcode {iop:#x} is not implemented"))
}

/// A GLOBAL load, store or atomic. (Inlined into each generation's caller: it reads
/// the access's fields once where they were just decoded.)
#[inline(always)]
pub(crate) fn global(w: &mut Wave, access: &FlatAccess, mem: &dyn Memory) -> R<()> {
    let &FlatAccess {
        op: iop,
        vdst,
        saddr,
        data,
        addr,
        offset,
        returns: glc,
        ..
    } = access;
    let exec = w.exec();
    // global_load_addtid_b32 / global_store_addtid_b32: SADDR + OFFSET[11:0] + lane × 4,
    // then a dword load or store.
    let addtid = matches!(iop, global::GLOBAL_LOAD_ADDTID_B32 | global::GLOBAL_STORE_ADDTID_B32);
    // The scalar base once; the address VGPRs (a pair without SADDR) once.
    let sbase = if usize::from(saddr) == NULL {
        None
    } else {
        Some(w.sread64(saddr, None)?)
    };
    let (r, pair) = (addr, usize::from(saddr) == NULL && !addtid);
    if r + usize::from(pair) >= w.v.len() && !addtid && exec != 0 {
        // Past the wave's VGPRs: the read says so.
        let lane = exec.trailing_zeros() as usize;
        if pair {
            w.vread64(256 + addr as u16, lane, None)?;
        } else {
            w.vread(256 + addr as u16, lane, None)?;
        }
    }
    let addtid_base = sbase.unwrap_or(0).wrapping_add((offset & 0xfff) as u64);
    let in_range = addtid || r + usize::from(pair) < w.v.len();
    // One lane on (a one-lane workgroup, a loop's last lane): its address alone and
    // its access, as the lane-by-lane path below makes it, without the span's buffers.
    if exec != 0 && exec & exec.wrapping_sub(1) == 0 && in_range && access.atomic.is_none() {
        let lane = exec.trailing_zeros() as usize;
        let a = match (addtid, sbase) {
            (true, _) => addtid_base.wrapping_add(4 * w.lane_id(lane) as u64),
            (false, None) => pair_address(w.v[r][lane], w.v[r + 1][lane], offset),
            (false, Some(s)) => based_address(s, w.v[r][lane], offset),
        };
        let kind = access.kind.ok_or_else(|| unknown_global(iop))?;
        let len = kind.len();
        if let Some(next) = w.stride_ahead(a) {
            mem.prefetch(next, !kind.is_load());
        }
        // A dword to or from a register the wave has (the commonest access): moved
        // straight, without the general forms' buffer. (DATA is an operand number,
        // 256 + the VGPR; below 256 the subtraction wraps past every VGPR.)
        let data_vgpr = usize::from(data).wrapping_sub(256);
        match kind {
            MemOp::Load(1) if vdst < w.v.len() => {
                let mut b = [0u8; 4];
                mem.read(a, &mut b).map_err(Trap::load(4))?;
                w.v[vdst][lane] = u32::from_le_bytes(b);
            }
            MemOp::Store(1) if data_vgpr < w.v.len() => {
                let v = w.v[data_vgpr][lane];
                mem.write(a, &v.to_le_bytes()).map_err(Trap::store(4))?;
            }
            _ if kind.is_load() => {
                let mut buf = [0u8; 16];
                mem.read(a, &mut buf[..len]).map_err(Trap::load(len))?;
                kind.load(w, lane, vdst, &buf)?;
            }
            _ => {
                let (bytes, _) = kind.store_bytes(w, lane, data)?;
                mem.write(a, &bytes[..len]).map_err(Trap::store(len))?;
            }
        }
        return Ok(());
    }
    // A whole wave's dword load whose lanes' addresses are one base plus each lane's
    // 32-bit VGPR (a scalar base, or address pairs whose high halves agree): found,
    // bounded and gathered in 32-bit arithmetic.
    if exec == u32::MAX
        && in_range
        && !addtid
        && let Some(MemOp::Load(dwords)) = global_kind(iop)
        && near_load(w, r, sbase, offset, vdst, dwords, mem)
    {
        return Ok(());
    }
    // Every lane's address, the inactive ones too (no later step reads those): a
    // loop without branches over whole registers.
    let mut addrs = [0u64; 32];
    if addtid {
        for (lane, a) in addrs.iter_mut().enumerate() {
            *a = addtid_base.wrapping_add(4 * w.lane_id(lane) as u64);
        }
    } else if in_range {
        let lo = &w.v[r];
        match sbase {
            None => {
                let hi = &w.v[r + 1];
                for ((a, &lo), &hi) in addrs.iter_mut().zip(lo).zip(hi) {
                    *a = pair_address(lo, hi, offset);
                }
            }
            Some(s) => {
                for (a, &lo) in addrs.iter_mut().zip(lo) {
                    *a = based_address(s, lo, offset);
                }
            }
        }
    }
    if let Some(AtomicOp { wide, cmpswap }) = atomic_op(iop) {
        // Atomics: the old value returns when GLC is set. 64-bit ones take register
        // pairs; compare-swaps take the comparand after the data.
        for (lane, &a) in addrs.iter().enumerate() {
            if exec >> lane & 1 == 0 {
                continue;
            }
            if wide {
                let d = w.vread64(data, lane, None)?;
                let cmp = if cmpswap { w.vread64(data + 2, lane, None)? } else { 0 };
                let old = atomic64(iop, mem, a, d, cmp)?;
                if glc {
                    w.vwrite(vdst, lane, old as u32)?;
                    w.vwrite(vdst + 1, lane, (old >> 32) as u32)?;
                }
            } else {
                let d = w.vread(data, lane, None)?;
                let cmp = if cmpswap { w.vread(data + 1, lane, None)? } else { 0 };
                let old = atomic(iop, mem, a, d, cmp)?;
                if glc {
                    w.vwrite(vdst, lane, old)?;
                }
            }
        }
        return Ok(());
    }
    // (Looked up again rather than read from `access`: reading the field on the
    // whole-wave paths cost matmul_direct 2.7 % through the compiler's other choices.)
    let kind = global_kind(iop).ok_or_else(|| unknown_global(iop))?;
    let len = kind.len();
    if exec == u32::MAX && unit_stride(w, &addrs, kind, vdst, usize::from(data - 256), mem) {
        return Ok(());
    }
    // A wave's accesses usually fall in one small span: check and move it once.
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    if exec == u32::MAX {
        for &a in &addrs {
            lo = lo.min(a);
            hi = hi.max(a);
        }
    } else {
        for lane in Bits(exec) {
            lo = lo.min(addrs[lane]);
            hi = hi.max(addrs[lane]);
        }
    }
    let span_len = hi
        .checked_add(len as u64)
        .and_then(|h| h.checked_sub(lo))
        .map(|n| n as usize)
        .filter(|&n| n <= SPAN);
    if let (Some(n), MemOp::Store(dwords)) = (span_len, kind)
        // More bytes than the lanes store leave a gap: no single write then.
        && n <= exec.count_ones() as usize * len
        && store_span(w, exec, &addrs, lo, n, usize::from(data - 256), dwords, mem)
    {
        return Ok(());
    }
    if kind.is_load() && exec != 0 {
        // Room past SPAN for a lane's last dword: the masked offsets below are in
        // bounds whatever they are, with no check in the loop.
        let mut span = [0u8; SPAN + 16];
        if let Some(n) = span_len {
            if mem.read_ahead(lo, &mut span[..n]).is_ok() {
                if let MemOp::Load(dwords) = kind {
                    if vdst + dwords <= w.v.len() && dwords <= 4 && !super::exec::slow_only() {
                        for k in 0..dwords {
                            let mut out = w.v[vdst + k];
                            if exec == u32::MAX {
                                for (lane, o) in out.iter_mut().enumerate() {
                                    // Inside the span by its construction (the mask
                                    // changes nothing).
                                    let at = ((addrs[lane] - lo) as usize & (SPAN - 1)) + 4 * k;
                                    let b = &span[at..at + 4];
                                    *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                                }
                                w.v[vdst + k] = out;
                                continue;
                            }
                            for lane in Bits(exec) {
                                let at = (addrs[lane] - lo) as usize + 4 * k;
                                // Inside the span by its construction.
                                if let Some(b) = span.get(at..at + 4) {
                                    out[lane] = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                                }
                            }
                            w.v[vdst + k] = out;
                        }
                        return Ok(());
                    }
                }
                for (lane, &a) in addrs.iter().enumerate() {
                    if exec >> lane & 1 != 0 {
                        let mut buf = [0u8; 16];
                        let at = (a - lo) as usize;
                        buf[..len].copy_from_slice(&span[at..at + len]);
                        kind.load(w, lane, vdst, &buf)?;
                    }
                }
                return Ok(());
            }
        }
    }
    // Lane by lane (a span with a hole faults at the first lane that touches it).
    if kind.is_load() {
        for (lane, &a) in addrs.iter().enumerate() {
            if exec >> lane & 1 != 0 {
                let mut buf = [0u8; 16];
                mem.read(a, &mut buf[..len]).map_err(Trap::load(len))?;
                kind.load(w, lane, vdst, &buf)?;
            }
        }
        return Ok(());
    }
    store_runs(w, exec, &addrs, kind, data, len, mem)
}

/// [`global`]'s whole-wave dword loads (`dwords` of 1 to 4 a lane, every lane on) from
/// `base + v[r][lane]`, where `base` is the scalar base plus the offset or, without a
/// scalar base, the high halves `v[r + 1]` shift up and the offset when every lane's
/// are the same (so that each lane's 64-bit address is that sum). The lanes' span is
/// read at once and each lane's dwords taken from it. `false` (nothing loaded) where
/// that does not hold, the span is larger than [`SPAN`] or a read faults: the general
/// path then does it, faulting at the right lane.
#[inline(always)]
fn near_load(
    w: &mut Wave,
    r: usize,
    sbase: Option<u64>,
    offset: i64,
    vdst: usize,
    dwords: usize,
    mem: &dyn Memory,
) -> bool {
    if !(1..=4).contains(&dwords) || vdst + dwords > w.v.len() || super::exec::slow_only() {
        return false;
    }
    let base = match sbase {
        Some(s) => s.wrapping_add(offset as u64),
        None => {
            let hi = &w.v[r + 1];
            // One test for all lanes: any lane's high half unlike lane 0's sets a bit.
            if hi.iter().fold(0, |acc, &h| acc | (h ^ hi[0])) != 0 {
                return false;
            }
            (u64::from(hi[0]) << 32).wrapping_add(offset as u64)
        }
    };
    let lo = w.v[r];
    let len = 4 * dwords;
    // Lane after lane (the commonest access): one read straight into the registers.
    let stride = len as u32;
    let off = lo
        .iter()
        .zip(0u32..)
        .fold(0, |acc, (&x, l)| acc | (x ^ lo[0].wrapping_add(stride * l)));
    // (The last lane's offset must not wrap past 32 bits: a lane whose offset wraps
    // reads far below the others.)
    if off == 0
        && lo[0].checked_add(31 * stride).is_some()
        && let Some(start) = base
            .checked_add(u64::from(lo[0]))
            .filter(|a| a.checked_add(32 * len as u64).is_some())
    {
        let regs = &mut w.v[vdst..vdst + dwords];
        return match dwords {
            1 => move_lanes::<1, 128>(regs, start, true, mem),
            2 => move_lanes::<2, 256>(regs, start, true, mem),
            3 => move_lanes::<3, 384>(regs, start, true, mem),
            _ => move_lanes::<4, 512>(regs, start, true, mem),
        };
    }
    let (min, max) = super::wide::run(Bounds(&lo));
    let n = (max - min) as usize + len;
    // Lane l's address is base + lo[l] without a wrap between the lowest and highest.
    let Some(start) = base
        .checked_add(u64::from(min))
        .filter(|_| base.checked_add(u64::from(max) + len as u64).is_some())
    else {
        return false;
    };
    // A span that fits a short buffer reads into one (less to zero: a wave reading
    // two or three rows' same element spans a few dozen bytes).
    if n <= SHORT_SPAN {
        gather::<{ SHORT_SPAN + 16 }, SHORT_SPAN>(w, &lo, min, n, start, vdst, dwords, mem)
    } else if n <= SPAN {
        gather::<{ SPAN + 16 }, SPAN>(w, &lo, min, n, start, vdst, dwords, mem)
    } else {
        false
    }
}

/// Bytes of the short buffer [`gather`] may use.
const SHORT_SPAN: usize = 128;

/// [`near_load`]'s read of a span of `n` (at most `S`) bytes at `start`, the lanes' dwords
/// then taken from it at their offsets from `min`. `B` is `S` + 16: room past the span
/// for a lane's last dword, so the masked offsets are in bounds whatever they are,
/// with no check in the loop.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn gather<const B: usize, const S: usize>(
    w: &mut Wave,
    lo: &[u32; 32],
    min: u32,
    n: usize,
    start: u64,
    vdst: usize,
    dwords: usize,
    mem: &dyn Memory,
) -> bool {
    let mut span = [0u8; B];
    if mem.read_ahead(start, &mut span[..n]).is_err() {
        return false;
    }
    for k in 0..dwords {
        let out = &mut w.v[vdst + k];
        // The span from dword k on, S + 4 bytes: every masked offset's dword lies
        // inside it, with no check per lane.
        let from = &span[4 * k..4 * k + S + 4];
        for (o, &x) in out.iter_mut().zip(lo) {
            // Inside the span by its construction (the mask changes nothing).
            let at = (x - min) as usize & (S - 1);
            let b = &from[at..at + 4];
            *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
    }
    true
}

/// The lowest and highest of a wave's 32-bit values, for [`super::wide::run`] (one
/// instruction each on AVX2, several on baseline x86-64).
struct Bounds<'a>(&'a [u32; 32]);

impl super::wide::Whole for Bounds<'_> {
    type Out = (u32, u32);
    #[inline(always)]
    fn run(self) -> (u32, u32) {
        self.0.iter().fold((u32::MAX, 0), |(a, b), &x| (a.min(x), b.max(x)))
    }
}

/// The stores of [`flat`] that no single span covers: a run of lanes in order whose
/// bytes follow each other (a row of a tile) goes out as one write; runs are written
/// in lane order, so a later lane still wins where two write the same bytes, and no
/// byte between runs is touched. (Out of line: its buffer would grow every access's
/// frame.)
#[inline(never)]
fn store_runs(w: &Wave, exec: u32, addrs: &[u64; 32], kind: MemOp, data: u16, len: usize, mem: &dyn Memory) -> R<()> {
    // The tests' reference: one write per lane, each lane's bytes read one by one.
    let slow = super::exec::slow_only();
    let mut run = [0u8; SPAN];
    let (mut start, mut n) = (0u64, 0usize);
    for (lane, &a) in addrs.iter().enumerate() {
        if exec >> lane & 1 == 0 {
            continue;
        }
        if !(n > 0 && !slow && start.checked_add(n as u64) == Some(a) && n + len <= SPAN) {
            if n > 0 {
                write_run(mem, start, &run[..n], len)?;
            }
            (start, n) = (a, 0);
        }
        match kind {
            // Whole dwords straight from the registers.
            MemOp::Store(dwords) if !slow && usize::from(data - 256) + dwords <= w.v.len() => {
                let regs = &w.v[usize::from(data - 256)..][..dwords];
                for (k, reg) in regs.iter().enumerate() {
                    run[n + 4 * k..n + 4 * k + 4].copy_from_slice(&reg[lane].to_le_bytes());
                }
            }
            _ => {
                let (buf, _) = kind.store_bytes(w, lane, data)?;
                run[n..n + len].copy_from_slice(&buf[..len]);
            }
        }
        n += len;
    }
    if n > 0 {
        write_run(mem, start, &run[..n], len)?;
    }
    Ok(())
}

/// A whole wave's dword load or store (every lane on) where lane `l`'s address is
/// the first lane's plus `l` times the access size, as one read or write between
/// memory and the registers. `false` (nothing moved) otherwise, and on a fault: the
/// general path then does it, faulting at the right lane.
fn unit_stride(w: &mut Wave, addrs: &[u64; 32], kind: MemOp, vdst: usize, data: usize, mem: &dyn Memory) -> bool {
    let (dwords, load) = match kind {
        MemOp::Load(d) => (d, true),
        MemOp::Store(d) => (d, false),
        _ => return false,
    };
    let reg = if load { vdst } else { data };
    if !(1..=4).contains(&dwords) || reg + dwords > w.v.len() || super::exec::slow_only() {
        return false;
    }
    let (base, stride) = (addrs[0], 4 * dwords as u64);
    // One test for all lanes: any lane off the line sets a bit.
    let off = addrs
        .iter()
        .zip(0u64..)
        .fold(0u64, |acc, (&a, l)| acc | (a ^ base.wrapping_add(stride * l)));
    if off != 0 || base.checked_add(32 * stride).is_none() {
        return false;
    }
    let regs = &mut w.v[reg..reg + dwords];
    match dwords {
        1 => move_lanes::<1, 128>(regs, base, load, mem),
        2 => move_lanes::<2, 256>(regs, base, load, mem),
        3 => move_lanes::<3, 384>(regs, base, load, mem),
        _ => move_lanes::<4, 512>(regs, base, load, mem),
    }
}

/// [`unit_stride`]'s move of `D` dwords a lane (`B` = 128 × `D` bytes: a buffer no
/// larger than the access, which is zeroed for each one). `regs` holds `D` registers
/// (`false`, nothing moved, otherwise).
#[inline(always)]
fn move_lanes<const D: usize, const B: usize>(regs: &mut [VgprRow], base: u64, load: bool, mem: &dyn Memory) -> bool {
    let Ok(regs) = <&mut [VgprRow; D]>::try_from(regs) else {
        return false;
    };
    if D == 1 && cfg!(target_endian = "little") {
        // One dword a lane: the register's bytes are the memory's, in order. A load
        // lands in the register only whole (a failed one leaves it as it was, for the
        // lane-by-lane path that follows).
        use zerocopy::IntoBytes;
        if load {
            let mut got = [0u32; 32];
            if mem.read_ahead(base, got.as_mut_bytes()).is_err() {
                return false;
            }
            regs[0].0 = got;
            return true;
        }
        return mem.write_ahead(base, regs[0].0.as_bytes()).is_ok();
    }
    let mut bytes = [0u8; B];
    if load {
        if mem.read_ahead(base, &mut bytes).is_err() {
            return false;
        }
        lanes_from_bytes::<D>(regs, &bytes);
        true
    } else {
        lanes_to_bytes::<D>(regs, &mut bytes);
        mem.write_ahead(base, &bytes).is_ok()
    }
}

/// Registers `regs[k]` from `D` dwords per lane, lane after lane, little-endian (the
/// sizes fixed, so the loops carry no bounds checks and one dword a lane is a copy).
#[inline(always)]
fn lanes_from_bytes<const D: usize>(regs: &mut [VgprRow; D], bytes: &[u8]) {
    for (lane, chunk) in bytes.chunks_exact(4 * D).take(32).enumerate() {
        for (reg, b) in regs.iter_mut().zip(chunk.chunks_exact(4)) {
            reg[lane & 31] = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
    }
}

/// The inverse of [`lanes_from_bytes`].
#[inline(always)]
fn lanes_to_bytes<const D: usize>(regs: &[VgprRow; D], bytes: &mut [u8]) {
    for (lane, chunk) in bytes.chunks_exact_mut(4 * D).take(32).enumerate() {
        for (reg, b) in regs.iter().zip(chunk.chunks_exact_mut(4)) {
            b.copy_from_slice(&reg[lane & 31].to_le_bytes());
        }
    }
}

/// Writes a run of lanes' stores (`len` bytes each) at `start` in one piece, or when
/// that faults, lane by lane up to the lane that faults, as the lanes would alone.
fn write_run(mem: &dyn Memory, start: u64, run: &[u8], len: usize) -> R<()> {
    if mem.write_ahead(start, run).is_ok() {
        return Ok(());
    }
    for (k, piece) in run.chunks(len).enumerate() {
        mem.write(start + (k * len) as u64, piece)
            .map_err(Trap::store(piece.len()))?;
    }
    Ok(())
}

/// Bytes a wave's access may span to be moved in one piece.
const SPAN: usize = 512;

/// A dword store whose lanes cover `[lo, lo + n)` without a gap, as one write: the
/// same bytes the lane-by-lane writes leave (later lanes win where lanes overlap), and
/// no byte the wave does not write (another workgroup may be writing next to it).
/// `false` (nothing written) when there is a gap, a register past the wave's, or a
/// fault: the lane-by-lane path then does it.
#[allow(clippy::too_many_arguments)]
fn store_span(
    w: &Wave,
    exec: u32,
    addrs: &[u64; 32],
    lo: u64,
    n: usize,
    data: usize,
    dwords: usize,
    mem: &dyn Memory,
) -> bool {
    if exec == 0 || data + dwords > w.v.len() || super::exec::slow_only() {
        return false;
    }
    let mut span = [0u8; SPAN];
    let mut covered = [0u64; SPAN / 64];
    for lane in Bits(exec) {
        let at = (addrs[lane] - lo) as usize;
        for k in 0..dwords {
            let b = at + 4 * k;
            span[b..b + 4].copy_from_slice(&w.v[data + k][lane].to_le_bytes());
            if b % 64 <= 60 {
                covered[b / 64] |= 0xf << (b % 64);
            } else {
                for byte in b..b + 4 {
                    covered[byte / 64] |= 1 << (byte % 64);
                }
            }
        }
    }
    let (full, rest) = (n / 64, n % 64);
    let tail = (1u64 << rest) - 1;
    let whole = covered[..full].iter().all(|&c| c == u64::MAX) && (rest == 0 || covered[full] & tail == tail);
    whole && mem.write_ahead(lo, &span[..n]).is_ok()
}

/// Which half of a register a 16-bit (d16) load fills; the other half is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Whole,
    Lo,
    Hi,
}

/// What a GLOBAL or SCRATCH load or store opcode moves.
#[derive(Clone, Copy, Debug)]
pub(crate) enum MemOp {
    /// Whole dwords into consecutive registers.
    Load(usize),
    /// Whole dwords from consecutive registers.
    Store(usize),
    /// 1 or 2 bytes, zero- or sign-extended, into a register or one of its halves.
    LoadSmall { bytes: usize, signed: bool, part: Part },
    /// 1 or 2 bytes from the low or high half of a register.
    StoreSmall { bytes: usize, hi: bool },
}

#[inline]
pub(crate) fn mem_op(op: u16) -> Option<MemOp> {
    // FLAT, GLOBAL, SCRATCH and MUBUF number their plain loads and stores alike.
    use Global::*;
    let small = |bytes, signed, part| MemOp::LoadSmall { bytes, signed, part };
    Some(match Global::from_op(op)? {
        GLOBAL_LOAD_U8 => small(1, false, Part::Whole),
        GLOBAL_LOAD_I8 => small(1, true, Part::Whole),
        GLOBAL_LOAD_U16 => small(2, false, Part::Whole),
        GLOBAL_LOAD_I16 => small(2, true, Part::Whole),
        GLOBAL_LOAD_B32 => MemOp::Load(1),
        GLOBAL_LOAD_B64 => MemOp::Load(2),
        GLOBAL_LOAD_B96 => MemOp::Load(3),
        GLOBAL_LOAD_B128 => MemOp::Load(4),
        GLOBAL_STORE_B8 => MemOp::StoreSmall { bytes: 1, hi: false },
        GLOBAL_STORE_B16 => MemOp::StoreSmall { bytes: 2, hi: false },
        GLOBAL_STORE_B32 => MemOp::Store(1),
        GLOBAL_STORE_B64 => MemOp::Store(2),
        GLOBAL_STORE_B96 => MemOp::Store(3),
        GLOBAL_STORE_B128 => MemOp::Store(4),
        GLOBAL_LOAD_D16_U8 => small(1, false, Part::Lo),
        GLOBAL_LOAD_D16_I8 => small(1, true, Part::Lo),
        GLOBAL_LOAD_D16_B16 => small(2, false, Part::Lo),
        GLOBAL_LOAD_D16_HI_U8 => small(1, false, Part::Hi),
        GLOBAL_LOAD_D16_HI_I8 => small(1, true, Part::Hi),
        GLOBAL_LOAD_D16_HI_B16 => small(2, false, Part::Hi),
        GLOBAL_STORE_D16_HI_B8 => MemOp::StoreSmall { bytes: 1, hi: true },
        GLOBAL_STORE_D16_HI_B16 => MemOp::StoreSmall { bytes: 2, hi: true },
        _ => return None,
    })
}

impl MemOp {
    pub(crate) fn is_load(self) -> bool {
        matches!(self, MemOp::Load(_) | MemOp::LoadSmall { .. })
    }

    /// Bytes moved per lane.
    pub(crate) fn len(self) -> usize {
        match self {
            MemOp::Load(n) | MemOp::Store(n) => 4 * n,
            MemOp::LoadSmall { bytes, .. } | MemOp::StoreSmall { bytes, .. } => bytes,
        }
    }

    /// Puts the bytes a load read into `lane`'s registers from `vdst`.
    pub(crate) fn load(self, w: &mut Wave, lane: usize, vdst: usize, buf: &[u8; 16]) -> R<()> {
        match self {
            MemOp::LoadSmall { bytes, signed, part } => {
                let v = match (bytes, signed) {
                    (1, false) => buf[0] as u32,
                    (1, true) => buf[0] as i8 as i32 as u32,
                    (_, false) => u16::from_le_bytes([buf[0], buf[1]]) as u32,
                    (_, true) => i16::from_le_bytes([buf[0], buf[1]]) as i32 as u32,
                };
                let old = w.vread(256 + vdst as u16, lane, None)?;
                let v = match part {
                    Part::Whole => v,
                    Part::Lo => (old & 0xffff_0000) | (v & 0xffff),
                    Part::Hi => (old & 0xffff) | v << 16,
                };
                w.vwrite(vdst, lane, v)
            }
            _ => {
                for k in 0..self.len() / 4 {
                    let b = &buf[k * 4..k * 4 + 4];
                    w.vwrite(vdst + k, lane, u32::from_le_bytes([b[0], b[1], b[2], b[3]]))?;
                }
                Ok(())
            }
        }
    }

    /// The bytes a store writes for `lane`, from its registers at `data`.
    pub(crate) fn store_bytes(self, w: &Wave, lane: usize, data: u16) -> R<([u8; 16], usize)> {
        let mut buf = [0u8; 16];
        match self {
            MemOp::StoreSmall { bytes, hi } => {
                let v = w.vread(data, lane, None)?;
                let v = if hi { v >> 16 } else { v };
                buf[..bytes].copy_from_slice(&v.to_le_bytes()[..bytes]);
            }
            _ => {
                for k in 0..self.len() / 4 {
                    buf[k * 4..k * 4 + 4].copy_from_slice(&w.vread(data + k as u16, lane, None)?.to_le_bytes());
                }
            }
        }
        Ok((buf, self.len()))
    }
}

/// FLAT (segment 0) loads and stores: each lane's 64-bit address picks LDS (the shared
/// aperture), its private memory (the private aperture) or global memory.
pub(crate) fn flat_generic(w: &mut Wave, access: &FlatAccess, mem: &dyn Memory, lds: &mut [u8]) -> R<()> {
    // RDNA3's offset is 13 bits, signed as for GLOBAL (LLVM emits only non-negative
    // ones for FLAT).
    let &FlatAccess {
        op, vdst, data, offset, ..
    } = access;
    let addr = 256 + access.addr as u16;
    if let Some(atomic) = atomic_op(op) {
        return flat_atomic(w, access, atomic, mem, lds);
    }
    let kind = mem_op(op).ok_or_else(|| Trap::missing(format!("flat opcode {op:#x} is not implemented")))?;
    let len = kind.len();
    let exec = w.exec();
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = (w.vread64(addr, lane, None)? as i64).wrapping_add(offset) as u64;
        let in_aperture = |base: u64| a.checked_sub(base).filter(|&d| d < 1 << 32).map(|d| d as usize);
        let mut buf = [0u8; 16];
        if let Some(off) = in_aperture(SHARED_APERTURE) {
            // LDS outside the allocation reads 0 and ignores writes, as DS does (or,
            // under the sanitizer's check, stops).
            let lds_bytes = lds.len();
            let range = lds.get_mut(off..off.saturating_add(len));
            if range.is_none() {
                let missed = if kind.is_load() {
                    AccessKind::Load
                } else {
                    AccessKind::Store
                };
                super::lds::missed(w.check_lds, off as u64, len, missed, lds_bytes)?;
            }
            if kind.is_load() {
                if let Some(r) = range {
                    buf[..len].copy_from_slice(r);
                }
                kind.load(w, lane, vdst, &buf)?;
            } else if let Some(r) = range {
                r.copy_from_slice(&kind.store_bytes(w, lane, data)?.0[..len]);
            }
        } else if let Some(off) = in_aperture(PRIVATE_APERTURE) {
            let (load, stored) = (kind.is_load(), kind.store_bytes(w, lane, data)?.0);
            let access = if load { AccessKind::Load } else { AccessKind::Store };
            let r = private_bytes(w, lane, off as i64, len, access)?;
            if load {
                buf[..len].copy_from_slice(r);
                kind.load(w, lane, vdst, &buf)?;
            } else {
                r.copy_from_slice(&stored[..len]);
            }
        } else if kind.is_load() {
            mem.read(a, &mut buf[..len]).map_err(Trap::load(len))?;
            kind.load(w, lane, vdst, &buf)?;
        } else {
            let (bytes, _) = kind.store_bytes(w, lane, data)?;
            mem.write(a, &bytes[..len]).map_err(Trap::store(len))?;
        }
    }
    Ok(())
}

/// FLAT atomics: global memory, LDS or the lane's private memory, by aperture.
fn flat_atomic(
    w: &mut Wave,
    access: &FlatAccess,
    AtomicOp { wide, cmpswap }: AtomicOp,
    mem: &dyn Memory,
    lds: &mut [u8],
) -> R<()> {
    let &FlatAccess {
        op,
        vdst,
        data,
        offset,
        returns: glc,
        ..
    } = access;
    let addr = 256 + access.addr as u16;
    let exec = w.exec();
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = (w.vread64(addr, lane, None)? as i64).wrapping_add(offset) as u64;
        let (d, cmp) = if wide {
            let cmp = if cmpswap { w.vread64(data + 2, lane, None)? } else { 0 };
            (w.vread64(data, lane, None)?, cmp)
        } else {
            let cmp = if cmpswap {
                w.vread(data + 1, lane, None)? as u64
            } else {
                0
            };
            (w.vread(data, lane, None)? as u64, cmp)
        };
        let old = match a.checked_sub(SHARED_APERTURE).filter(|&o| o < 1 << 32) {
            Some(off) => {
                let n = if wide { 8 } else { 4 };
                let off = off as usize;
                // Outside the allocation: reads 0, writes nothing, as DS does (or,
                // under the sanitizer's check, stops).
                let mut b = [0u8; 8];
                match lds.get(off..off + n) {
                    Some(src) => b[..n].copy_from_slice(src),
                    None => super::lds::missed(w.check_lds, off as u64, n, AccessKind::Atomic, lds.len())?,
                }
                let old = u64::from_le_bytes(b);
                let new = atomic_result(op, old, d, cmp)?;
                if let Some(dst) = lds.get_mut(off..off + n) {
                    dst.copy_from_slice(&new.to_le_bytes()[..n]);
                }
                old
            }
            None if a.checked_sub(PRIVATE_APERTURE).is_some_and(|o| o < 1 << 32) => {
                // The lane's own memory: no other lane can race it.
                let n = if wide { 8 } else { 4 };
                let bytes = private_bytes(w, lane, (a - PRIVATE_APERTURE) as i64, n, AccessKind::Atomic)?;
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(bytes);
                let old = u64::from_le_bytes(b);
                let new = atomic_result(op, old, d, cmp)?;
                bytes.copy_from_slice(&new.to_le_bytes()[..n]);
                old
            }
            None if wide => atomic64(op, mem, a, d, cmp)?,
            None => atomic(op, mem, a, d as u32, cmp as u32)? as u64,
        };
        if glc {
            w.vwrite(vdst, lane, old as u32)?;
            if wide {
                w.vwrite(vdst + 1, lane, (old >> 32) as u32)?;
            }
        }
    }
    Ok(())
}

/// `len` bytes of `lane`'s private memory at `a` for an access of `kind`, grown on
/// first use; an access outside [`PRIVATE_LIMIT`] is an error, and under the
/// sanitizer's check one past the dispatch's share for each lane
/// ([`Wave::private_limit`]) a trap.
pub(crate) fn private_bytes(w: &mut Wave, lane: usize, a: i64, len: usize, kind: AccessKind) -> R<&mut [u8]> {
    let end = a
        .checked_add(len as i64)
        .filter(|&e| a >= 0 && e as usize <= PRIVATE_LIMIT)
        .ok_or_else(|| format!("private access at {a:#x} outside the {PRIVATE_LIMIT} bytes of each lane"))?;
    let (a, end) = (a as usize, end as usize);
    if let Some(limit) = w.private_limit.filter(|&l| end > l) {
        return Err(Trap::private_outside(a as u64, Access { kind, bytes: len }, limit));
    }
    let id = w.lane_id(lane);
    w.private_used = true;
    let mem = &mut w.private[id];
    if mem.len() < end {
        mem.resize(end.next_multiple_of(256), 0);
    }
    Ok(&mut mem[a..end])
}

/// Private memory each lane may use.
pub(crate) const PRIVATE_LIMIT: usize = 64 << 10;

/// Scratch loads and stores: each lane's private memory, addressed by
/// `[vaddr if SVE] + [saddr] + offset`.
pub(crate) fn scratch(w: &mut Wave, access: &FlatAccess) -> R<()> {
    let &FlatAccess {
        op,
        vdst,
        saddr,
        data,
        offset,
        sve,
        ..
    } = access;
    let addr = 256 + access.addr as u16;
    let kind = mem_op(op).ok_or_else(|| Trap::missing(format!("scratch opcode {op:#x} is not implemented")))?;
    let base = if usize::from(saddr) == NULL {
        0
    } else {
        w.sread(saddr, None)? as i64
    };
    let exec = w.exec();
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let v = if sve { w.vread(addr, lane, None)? as i64 } else { 0 };
        let a = base.wrapping_add(v).wrapping_add(offset);
        let len = kind.len();
        if kind.is_load() {
            let mut buf = [0u8; 16];
            buf[..len].copy_from_slice(private_bytes(w, lane, a, len, AccessKind::Load)?);
            kind.load(w, lane, vdst, &buf)?;
        } else {
            let (buf, _) = kind.store_bytes(w, lane, data)?;
            private_bytes(w, lane, a, len, AccessKind::Store)?.copy_from_slice(&buf[..len]);
        }
    }
    Ok(())
}

/// What an atomic reads and writes back, by its opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AtomicOp {
    /// 64-bit: data, comparand and the old value in register pairs.
    pub(crate) wide: bool,
    /// A compare-swap: the comparand follows the data.
    pub(crate) cmpswap: bool,
}

/// Atomics RDNA3 does not have, RDNA4's and CDNA3's, numbered above GLOBAL's opcode
/// field (7 bits) so that their memory encodings can hand them to the same paths
/// (`atomic_op`, `atomic_result`).
pub(crate) mod extra_atomic {
    /// IEEE 754-2019 minimumNumber (a NaN loses to a number; of two, the data's,
    /// quieted; -0 below +0).
    pub(crate) const MIN_NUM_F32: u16 = 0x100;
    /// IEEE 754-2019 maximumNumber.
    pub(crate) const MAX_NUM_F32: u16 = 0x101;
    /// Subtracts where the memory holds at least the data, else leaves it.
    pub(crate) const COND_SUB_U32: u16 = 0x102;
    /// Two halves added, each rounded to nearest even.
    pub(crate) const PK_ADD_F16: u16 = 0x103;
    /// Two bfloat16s added, each rounded to nearest even.
    pub(crate) const PK_ADD_BF16: u16 = 0x104;
    /// [`MIN_NUM_F32`] on f64 (LDS only).
    pub(crate) const MIN_NUM_F64: u16 = 0x105;
    /// [`MAX_NUM_F32`] on f64 (LDS only).
    pub(crate) const MAX_NUM_F64: u16 = 0x106;
    /// CDNA3's f64 add, rounded to nearest even.
    pub(crate) const ADD_F64: u16 = 0x107;
    /// CDNA3's f64 minimum as its pseudocode has it: `data < old ? data : old` (a NaN
    /// on either side keeps the old value, as does -0 against +0).
    pub(crate) const MIN_F64: u16 = 0x108;
    /// `data > old ? data : old`.
    pub(crate) const MAX_F64: u16 = 0x109;
    /// The first and last of them.
    pub(crate) const FIRST: u16 = MIN_NUM_F32;
    pub(crate) const LAST: u16 = MAX_F64;
}

/// The new value of RDNA4's and CDNA3's own atomics ([`extra_atomic`]).
fn extra_atomic_result(op: u16, old64: u64, data64: u64) -> R<u64> {
    use crate::float::exact::{self, Round};
    use crate::float::minmax::{self, Nans};
    use extra_atomic::*;
    // The pseudocode puts the data first: `isNAN(src) && isNAN(tmp)` keeps the data's.
    let (old, data) = (old64 as u32, data64 as u32);
    let (o, d) = (f(old), f(data));
    let (o64, d64) = (f64::from_bits(old64), f64::from_bits(data64));
    let halves = |bf16: bool| -> u32 {
        let add = |x: u16, y: u16| -> u16 {
            let (x, y) = if bf16 {
                (f64::from(f(u32::from(x) << 16)), f64::from(f(u32::from(y) << 16)))
            } else {
                (
                    f64::from(crate::float::half::to_f32(x)),
                    f64::from(crate::float::half::to_f32(y)),
                )
            };
            let fmt = if bf16 { exact::BF16 } else { exact::F16 };
            match exact::add(x, y, fmt, Round::NearestEven) {
                Some(bits) => bits as u16,
                // An infinity or NaN: the host's sum, converted.
                None if bf16 => (((x + y) as f32).to_bits() >> 16) as u16,
                None => crate::float::half::from_f64(x + y),
            }
        };
        let lo = add(data as u16, old as u16);
        let hi = add((data >> 16) as u16, (old >> 16) as u16);
        u32::from(lo) | u32::from(hi) << 16
    };
    Ok(match op {
        MIN_NUM_F64 => return Ok(minmax::min(d64, o64, Nans::Num).to_bits()),
        MAX_NUM_F64 => return Ok(minmax::max(d64, o64, Nans::Num).to_bits()),
        ADD_F64 => return Ok((o64 + d64).to_bits()),
        MIN_F64 => return Ok(if d64 < o64 { data64 } else { old64 }),
        MAX_F64 => return Ok(if d64 > o64 { data64 } else { old64 }),
        MIN_NUM_F32 => minmax::min(d, o, Nans::Num).to_bits(),
        MAX_NUM_F32 => minmax::max(d, o, Nans::Num).to_bits(),
        COND_SUB_U32 => {
            if old >= data {
                old - data
            } else {
                old
            }
        }
        PK_ADD_F16 => halves(false),
        PK_ADD_BF16 => halves(true),
        other => return Err(Trap::missing(format!("atomic opcode {other:#x} is not implemented"))),
    }
    .into())
}

/// The atomic `op` is, if it is one (GLOBAL numbering; FLAT and MUBUF number their
/// atomics alike; RDNA4's own above them, [`extra_atomic`]).
pub(crate) fn atomic_op(op: u16) -> Option<AtomicOp> {
    let (wide, cmpswap) = match op {
        extra_atomic::MIN_NUM_F64
        | extra_atomic::MAX_NUM_F64
        | extra_atomic::ADD_F64
        | extra_atomic::MIN_F64
        | extra_atomic::MAX_F64 => (true, false),
        extra_atomic::FIRST..=extra_atomic::LAST => (false, false),
        global::GLOBAL_ATOMIC_CMPSWAP_B32 | global::GLOBAL_ATOMIC_CMPSWAP_F32 => (false, true),
        global::GLOBAL_ATOMIC_CMPSWAP_B64 => (true, true),
        global::GLOBAL_ATOMIC_SWAP_B32..=global::GLOBAL_ATOMIC_DEC_U32
        | global::GLOBAL_ATOMIC_MIN_F32..=global::GLOBAL_ATOMIC_MAX_F32
        | global::GLOBAL_ATOMIC_ADD_F32 => (false, false),
        global::GLOBAL_ATOMIC_SWAP_B64..=global::GLOBAL_ATOMIC_DEC_U64 => (true, false),
        _ => return None,
    };
    Some(AtomicOp { wide, cmpswap })
}

/// 32-bit global atomics: returns the value before the operation (atomic against
/// other engines and the host).
pub(crate) fn atomic(op: u16, mem: &dyn Memory, a: u64, data: u32, cmp: u32) -> R<u32> {
    let mut refused = None;
    let old = mem
        .atomic_u32(a, &mut |old| {
            atomic_result(op, old.into(), data.into(), cmp.into())
                .map(|v| v as u32)
                .map_err(|e| refused = Some(e))
                .ok()
        })
        .map_err(Trap::atomic(4))?;
    old.ok_or_else(|| refused.unwrap_or_else(|| "the atomic was refused".into()))
}

/// 64-bit global atomics (`global_atomic_swap_b64` to `global_atomic_dec_u64`):
/// returns the value before the operation.
pub(crate) fn atomic64(op: u16, mem: &dyn Memory, a: u64, data: u64, cmp: u64) -> R<u64> {
    let mut refused = None;
    let old = mem
        .atomic_u64(a, &mut |old| {
            atomic_result(op, old, data, cmp).map_err(|e| refused = Some(e)).ok()
        })
        .map_err(Trap::atomic(8))?;
    old.ok_or_else(|| refused.unwrap_or_else(|| "the atomic was refused".into()))
}

/// The value an atomic (GLOBAL numbering, see [`atomic_op`]) leaves in memory, from
/// the old value, the data and the comparand (zero-extended).
pub(crate) fn atomic_result(op: u16, old: u64, data: u64, cmp: u64) -> R<u64> {
    // GLOBAL numbering (FLAT and MUBUF number their atomics alike); the 64-bit forms
    // share the 32-bit ones' arithmetic.
    use Global::*;
    if (extra_atomic::FIRST..=extra_atomic::LAST).contains(&op) {
        return extra_atomic_result(op, old, data);
    }
    let op = Global::from_op(op).ok_or_else(|| Trap::missing(format!("atomic opcode {op:#x} is not implemented")))?;
    let (op, wide) = match op {
        GLOBAL_ATOMIC_SWAP_B64 => (GLOBAL_ATOMIC_SWAP_B32, true),
        GLOBAL_ATOMIC_CMPSWAP_B64 => (GLOBAL_ATOMIC_CMPSWAP_B32, true),
        GLOBAL_ATOMIC_ADD_U64 => (GLOBAL_ATOMIC_ADD_U32, true),
        GLOBAL_ATOMIC_SUB_U64 => (GLOBAL_ATOMIC_SUB_U32, true),
        GLOBAL_ATOMIC_MIN_I64 => (GLOBAL_ATOMIC_MIN_I32, true),
        GLOBAL_ATOMIC_MIN_U64 => (GLOBAL_ATOMIC_MIN_U32, true),
        GLOBAL_ATOMIC_MAX_I64 => (GLOBAL_ATOMIC_MAX_I32, true),
        GLOBAL_ATOMIC_MAX_U64 => (GLOBAL_ATOMIC_MAX_U32, true),
        GLOBAL_ATOMIC_AND_B64 => (GLOBAL_ATOMIC_AND_B32, true),
        GLOBAL_ATOMIC_OR_B64 => (GLOBAL_ATOMIC_OR_B32, true),
        GLOBAL_ATOMIC_XOR_B64 => (GLOBAL_ATOMIC_XOR_B32, true),
        GLOBAL_ATOMIC_INC_U64 => (GLOBAL_ATOMIC_INC_U32, true),
        GLOBAL_ATOMIC_DEC_U64 => (GLOBAL_ATOMIC_DEC_U32, true),
        op => (op, false),
    };
    let mask = if wide { u64::MAX } else { 0xffff_ffff };
    let signed = |v: u64| if wide { v as i64 } else { v as u32 as i32 as i64 };
    let float = |g: fn(f32, f32) -> f32| g(f(old as u32), f(data as u32)).to_bits() as u64;
    let r = match op {
        GLOBAL_ATOMIC_SWAP_B32 => data,
        GLOBAL_ATOMIC_CMPSWAP_B32 => {
            if old == cmp {
                data
            } else {
                old
            }
        }
        GLOBAL_ATOMIC_ADD_U32 => old.wrapping_add(data),
        GLOBAL_ATOMIC_SUB_U32 => old.wrapping_sub(data),
        // Subtract, clamped at 0.
        GLOBAL_ATOMIC_CSUB_U32 => old.saturating_sub(data),
        GLOBAL_ATOMIC_MIN_I32 => {
            if signed(old) <= signed(data) {
                old
            } else {
                data
            }
        }
        GLOBAL_ATOMIC_MIN_U32 => old.min(data),
        GLOBAL_ATOMIC_MAX_I32 => {
            if signed(old) >= signed(data) {
                old
            } else {
                data
            }
        }
        GLOBAL_ATOMIC_MAX_U32 => old.max(data),
        GLOBAL_ATOMIC_AND_B32 => old & data,
        GLOBAL_ATOMIC_OR_B32 => old | data,
        GLOBAL_ATOMIC_XOR_B32 => old ^ data,
        // Wrapping increment and decrement against the data as a limit.
        GLOBAL_ATOMIC_INC_U32 => {
            if old >= data {
                0
            } else {
                old + 1
            }
        }
        GLOBAL_ATOMIC_DEC_U32 => {
            if old == 0 || old > data {
                data
            } else {
                old - 1
            }
        }
        // A float comparison (so -0.0 matches 0.0, NaN nothing).
        GLOBAL_ATOMIC_CMPSWAP_F32 => {
            if f(old as u32) == f(cmp as u32) {
                data
            } else {
                old
            }
        }
        // As the ISA's pseudocode has it, `src < tmp ? src : tmp`: the memory's value
        // (its bits, a NaN's too) stays unless the data compares below (above) it, so a
        // NaN on either side leaves memory as it is.
        GLOBAL_ATOMIC_MIN_F32 => {
            if f(data as u32) < f(old as u32) {
                data
            } else {
                old
            }
        }
        GLOBAL_ATOMIC_MAX_F32 => {
            if f(data as u32) > f(old as u32) {
                data
            } else {
                old
            }
        }
        GLOBAL_ATOMIC_ADD_F32 => float(|x, y| x + y),
        other => {
            return Err(Trap::missing(format!(
                "atomic opcode {:#x} ({}) is not implemented",
                other as u16,
                other.name()
            )));
        }
    };
    Ok(r & mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdna3::opcodes::SPEC;

    fn table(encoding: &str) -> &'static [(u16, &'static str)] {
        SPEC.iter()
            .find(|(e, _)| *e == encoding)
            .map_or(&[][..], |(_, ops)| *ops)
    }

    /// FLAT, SCRATCH and MUBUF give their loads, stores and atomics GLOBAL's numbers,
    /// which `mem_op`, `atomic_op` and `atomic_result` rely on.
    #[test]
    fn memory_encodings_number_alike() {
        let global = table("GLOBAL");
        let mut checked = 0;
        for (encoding, prefix) in [("FLAT", "flat_"), ("SCRATCH", "scratch_"), ("MUBUF", "buffer_")] {
            for &(n, name) in table(encoding) {
                let rest = name.strip_prefix(prefix);
                if let Some(&(g, _)) = global
                    .iter()
                    .find(|(_, gn)| rest.is_some() && gn.strip_prefix("global_") == rest)
                {
                    assert_eq!(n, g, "{name}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked} pairs");
    }

    /// Every GLOBAL atomic and nothing else is one; the 64-bit ones are wide and the
    /// compare-swaps read a comparand.
    #[test]
    fn atomics_by_name() {
        for &(n, name) in table("GLOBAL") {
            let a = atomic_op(n);
            assert_eq!(a.is_some(), name.starts_with("global_atomic_"), "{name}");
            if let Some(a) = a {
                assert_eq!(a.wide, name.ends_with("64"), "{name}");
                assert_eq!(a.cmpswap, name.contains("_cmpswap_"), "{name}");
            }
        }
    }

    /// CDNA3's f64 atomics: the add rounds as f64 arithmetic does; the minimum and
    /// maximum are their pseudocode's compare-selects (a NaN on either side, or a zero
    /// of the other sign, keeps the old value), all 64-bit.
    #[test]
    fn cdna3_f64_atomics() {
        use extra_atomic::{ADD_F64, MAX_F64, MIN_F64};
        let r = |op, old: f64, data: f64| f64::from_bits(atomic_result(op, old.to_bits(), data.to_bits(), 0).unwrap());
        assert_eq!(r(ADD_F64, 0.1, 0.2), 0.1 + 0.2);
        assert_eq!(r(ADD_F64, f64::MAX, f64::MAX), f64::INFINITY);
        assert_eq!((r(MIN_F64, 2.0, -3.5), r(MAX_F64, 2.0, -3.5)), (-3.5, 2.0));
        assert_eq!(r(MIN_F64, 2.0, f64::NAN), 2.0);
        assert!(r(MIN_F64, f64::NAN, 2.0).is_nan());
        assert_eq!(r(MAX_F64, -1.0, f64::NAN), -1.0);
        assert!(r(MIN_F64, 0.0, -0.0).is_sign_positive());
        assert!(r(MAX_F64, -0.0, 0.0).is_sign_negative());
        for op in [ADD_F64, MIN_F64, MAX_F64] {
            assert_eq!(atomic_op(op).map(|a| (a.wide, a.cmpswap)), Some((true, false)));
        }
    }

    /// Stores and loads of whole spans give what the lane-by-lane path gives: lanes in
    /// a row, in reverse, on one address (the last lane wins), with gaps (written lane
    /// by lane), partly past the buffer (a fault after the lanes before it); addressed
    /// by a scalar base and a VGPR offset, or by VGPR pairs.
    /// A scalar base and VGPR offsets that wrap past 32 bits part-way along the wave:
    /// the lanes after the wrap read far below the first ones (a fault here), not the
    /// bytes that follow them.
    #[test]
    fn wrapping_offsets_are_not_a_row() {
        use crate::rdna3::testing::{lanes, run_mem_trap};
        // global_load_b32 v10, v1, s[4:5]
        let load = [0xdc52_0000u32, 10 << 24 | 4 << 16 | 1];
        let mut data = vec![0x5au8; 512];
        let sbase = std::cell::Cell::new(0u64);
        let r = run_mem_trap(&[&load], &mut data, &mut [0u8; 1024], |w, base| {
            let s = base.wrapping_sub(0xffff_fff0);
            sbase.set(s);
            w.s[4] = s as u32;
            w.s[5] = (s >> 32) as u32;
            // Lane 0 at base; lane 4's offset wraps to 0: the scalar base itself.
            lanes(w, 1, |l| 0xffff_fff0u32.wrapping_add(4 * l as u32));
        });
        match r {
            Err(t) => match t.into_kind() {
                crate::error::TrapKind::Fault(f, _) => assert_eq!(f.va, sbase.get(), "lane 4's address"),
                other => panic!("expected a fault, got {other:?}"),
            },
            Ok(w) => panic!("expected a fault, got {:?}", w.v[10]),
        }
    }

    #[test]
    fn whole_span_accesses_match_the_lane_by_lane_path() {
        use crate::rdna3::exec::SLOW_ONLY;
        use crate::rdna3::testing::{lanes, run_mem_trap};
        use crate::rdna3::wide::BASELINE_ONLY;
        // SADDR s[4:5] with the offset in v1, or (SADDR null) the address pair v[6:7].
        let global = |op: u32, vdst: u32, data: u32, pair: bool| {
            let (saddr, addr) = if pair { (124, 6) } else { (4, 1) };
            [0xdc02_0000 | op << 18, vdst << 24 | saddr << 16 | data << 8 | addr]
        };
        // Lane after lane at the access size of each op (every lane on: one read or
        // write), backwards, all on one address, spread, past the buffer's end.
        let patterns: [fn(usize) -> u32; 8] = [
            |l| 4 * l as u32,
            |l| 16 * (31 - l as u32),
            |_| 8,
            |l| 8 * l as u32,
            |l| 12 * l as u32,
            |l| 16 * l as u32,
            |l| 200 + 16 * l as u32,
            |l| 4 + 8 * l as u32,
        ];
        let cases = [(26, 20), (27, 21), (28, 22), (29, 23)]
            .into_iter()
            .flat_map(|ops| patterns.map(|p| (ops, p)))
            .flat_map(|c| [(c, 0xffff_bfffu32), (c, u32::MAX)]);
        for ((((op, load), pattern), exec), pair) in cases.flat_map(|c| [(c, false), (c, true)]) {
            {
                let prog = [global(op, 0, 2, pair), global(load, 10, 0, pair)];
                let prog: Vec<&[u32]> = prog.iter().map(|p| &p[..]).collect();
                let run = |slow: bool| {
                    let mut data = vec![0xeeu8; 512];
                    SLOW_ONLY.with(|s| s.set(slow));
                    let at = std::cell::Cell::new(0u64);
                    let w = run_mem_trap(&prog, &mut data, &mut [0u8; 1024], |w, base| {
                        at.set(base);
                        w.s[4] = base as u32;
                        w.s[5] = (base >> 32) as u32;
                        lanes(w, 1, pattern);
                        lanes(w, 6, |l| (base + u64::from(pattern(l))) as u32);
                        lanes(w, 7, |l| ((base + u64::from(pattern(l))) >> 32) as u32);
                        for r in 2..6 {
                            lanes(w, r, |l| (r as u32) << 24 | l as u32);
                        }
                        w.s[crate::rdna3::wave::EXEC_LO] = exec;
                    });
                    SLOW_ONLY.with(|s| s.set(false));
                    // A fault as its offset into the buffer.
                    let offset = |e: Trap| match e.into_kind() {
                        crate::error::TrapKind::Fault(f, _) => Some(f.va - at.get()),
                        _ => None,
                    };
                    (w.map(|w| w.v[10..14].to_vec()).map_err(offset), data)
                };
                let slow = run(true);
                // The whole-wave path in each of its builds (AVX2 where the CPU has it,
                // baseline).
                for baseline in [false, true] {
                    BASELINE_ONLY.with(|b| b.set(baseline));
                    let fast = run(false);
                    BASELINE_ONLY.with(|b| b.set(false));
                    assert_eq!(fast, slow, "op {op}, exec {exec:#x}, pair {pair}, baseline {baseline}");
                }
            }
        }
    }
}
