//! LDS instructions (DS) by ISA name (`opcodes::Ds`): loads and stores of every width
//! and the two-address forms, the read-modify-writes (32- and 64-bit, with their
//! `_rtn` forms), exchanges, compare-stores, wrap, the d16 half-register loads and
//! stores, lane-indexed accesses (`addtid`), append/consume counters, and the
//! cross-lane permutes and swizzles that go through the LDS crossbar.
//!
//! An access outside the workgroup's LDS reads 0 and writes nothing (the hardware's
//! range check), or, under the sanitizer's check ([`super::Interpreter::check_lds`]),
//! stops the instruction.

use super::decode::Inst;
use super::exec::{R, blend};
use super::memory::atomic_result;
use super::opcodes::Ds;
use super::opcodes::op::{ds, global};
use super::wave::{M0, Wave};
use crate::error::Trap;
use crate::memory::{Access, AccessKind};

fn missing(i: &Inst, name: &str) -> Trap {
    Trap::missing(format!("DS opcode {:#x} ({name}) is not implemented", i.op))
}

/// The `n` bytes at `a`, little-endian; `None` when any is past the LDS.
fn read(lds: &[u8], a: u32, n: usize) -> Option<u64> {
    let mut b = [0u8; 8];
    b[..n].copy_from_slice(lds.get(a as usize..(a as usize).checked_add(n)?)?);
    Some(u64::from_le_bytes(b))
}

/// The dword at `a` (any alignment), `None` when any of its bytes is past the LDS:
/// `read` for four bytes, as one bounds check and one load.
#[inline(always)]
fn read32(lds: &[u8], a: u32) -> Option<u32> {
    let a = a as usize;
    match lds.get(a..a + 4) {
        Some(&[b0, b1, b2, b3]) => Some(u32::from_le_bytes([b0, b1, b2, b3])),
        _ => None,
    }
}

/// Writes `v`'s low `n` bytes at `a`; `None`, writing nothing, when any is past the
/// LDS.
fn write(lds: &mut [u8], a: u32, v: u64, n: usize) -> Option<()> {
    lds.get_mut(a as usize..(a as usize).checked_add(n)?)?
        .copy_from_slice(&v.to_le_bytes()[..n]);
    Some(())
}

/// The workgroup's LDS as the lane-by-lane path reaches it: an access outside it
/// reads 0 and writes nothing (the hardware's range check), or, where the sanitizer
/// checks ([`Wave::check_lds`]), stops the instruction.
struct Space<'a> {
    bytes: &'a mut [u8],
    check: bool,
}

/// What an access of `n` bytes at `at` that misses a workgroup's `lds_bytes` of LDS
/// does: nothing (the hardware's range check: a load reads 0, a store writes nothing),
/// or, where the wave runs under the sanitizer's check (`check`), the instruction's
/// trap. Every path into the LDS (DS, generic pointers, RDNA4's own atomics) asks it.
#[cold]
pub(crate) fn missed(check: bool, at: u64, n: usize, kind: AccessKind, lds_bytes: usize) -> R<()> {
    if check {
        return Err(Trap::lds_outside(at, Access { kind, bytes: n }, lds_bytes));
    }
    Ok(())
}

impl Space<'_> {
    /// An access of `n` bytes at `a` that missed the LDS: [`missed`].
    fn outside(&self, a: u32, n: usize, kind: AccessKind) -> R<()> {
        missed(self.check, u64::from(a), n, kind, self.bytes.len())
    }

    fn read(&self, a: u32, n: usize) -> R<u64> {
        match read(self.bytes, a, n) {
            Some(v) => Ok(v),
            None => self.outside(a, n, AccessKind::Load).map(|_| 0),
        }
    }

    #[inline(always)]
    fn read32(&self, a: u32) -> R<u32> {
        match read32(self.bytes, a) {
            Some(v) => Ok(v),
            None => self.outside(a, 4, AccessKind::Load).map(|_| 0),
        }
    }

    /// The old value of a read-modify-write (an access outside is an atomic one).
    fn read_old(&self, a: u32, n: usize) -> R<u64> {
        match read(self.bytes, a, n) {
            Some(v) => Ok(v),
            None => self.outside(a, n, AccessKind::Atomic).map(|_| 0),
        }
    }

    fn write(&mut self, a: u32, v: u64, n: usize) -> R<()> {
        match write(self.bytes, a, v, n) {
            Some(()) => Ok(()),
            None => self.outside(a, n, AccessKind::Store),
        }
    }

    /// The new value of a read-modify-write.
    fn write_new(&mut self, a: u32, v: u64, n: usize) -> R<()> {
        match write(self.bytes, a, v, n) {
            Some(()) => Ok(()),
            None => self.outside(a, n, AccessKind::Atomic),
        }
    }
}

/// The dwords a plain LDS load or store moves a lane (1 for the 32-bit and narrower
/// ones).
fn dwords(op: Ds) -> usize {
    use Ds::*;
    match op {
        DS_LOAD_B64 | DS_STORE_B64 => 2,
        DS_LOAD_B96 | DS_STORE_B96 => 3,
        DS_LOAD_B128 | DS_STORE_B128 => 4,
        _ => 1,
    }
}

fn vread64(w: &Wave, r: u16, lane: usize) -> R<u64> {
    Ok(u64::from(w.vread(r, lane, None)?) | u64::from(w.vread(r + 1, lane, None)?) << 32)
}

fn vwrite64(w: &mut Wave, r: usize, lane: usize, v: u64) -> R<()> {
    w.vwrite(r, lane, v as u32)?;
    w.vwrite(r + 1, lane, (v >> 32) as u32)
}

/// The global atomic whose arithmetic a 64-bit LDS read-modify-write shares, by the
/// LDS opcode without its `_rtn` bit.
fn global64(op: Ds) -> Option<u16> {
    use Ds::*;
    Some(match op {
        DS_ADD_U64 => global::GLOBAL_ATOMIC_ADD_U64,
        DS_SUB_U64 => global::GLOBAL_ATOMIC_SUB_U64,
        DS_INC_U64 => global::GLOBAL_ATOMIC_INC_U64,
        DS_DEC_U64 => global::GLOBAL_ATOMIC_DEC_U64,
        DS_MIN_I64 => global::GLOBAL_ATOMIC_MIN_I64,
        DS_MAX_I64 => global::GLOBAL_ATOMIC_MAX_I64,
        DS_MIN_U64 => global::GLOBAL_ATOMIC_MIN_U64,
        DS_MAX_U64 => global::GLOBAL_ATOMIC_MAX_U64,
        DS_AND_B64 => global::GLOBAL_ATOMIC_AND_B64,
        DS_OR_B64 => global::GLOBAL_ATOMIC_OR_B64,
        DS_XOR_B64 => global::GLOBAL_ATOMIC_XOR_B64,
        _ => return None,
    })
}

/// What `_rtn` adds to a read-modify-write's opcode: `ds_add_rtn_u32` to
/// `ds_max_rtn_f32` are `ds_add_u32` to `ds_max_f32` plus this, and the 64-bit forms
/// alike.
const RTN: u16 = ds::DS_ADD_RTN_U32 - ds::DS_ADD_U32;
const _: () = assert!(ds::DS_ADD_RTN_U64 - ds::DS_ADD_U64 == RTN && ds::DS_MAX_RTN_F64 - ds::DS_MAX_F64 == RTN);

/// The plain form of a `_rtn` opcode, and whether it returns the old value.
fn plain(op: u16) -> (u16, bool) {
    if matches!(op, ds::DS_ADD_RTN_U32..=ds::DS_MAX_RTN_F32 | ds::DS_ADD_RTN_U64..=ds::DS_MAX_RTN_F64) {
        (op - RTN, true)
    } else {
        (op, false)
    }
}

/// The global atomic whose arithmetic a 32-bit LDS read-modify-write shares.
fn global32(op: Ds) -> Option<u16> {
    use Ds::*;
    Some(match op {
        DS_ADD_U32 => global::GLOBAL_ATOMIC_ADD_U32,
        DS_SUB_U32 => global::GLOBAL_ATOMIC_SUB_U32,
        DS_INC_U32 => global::GLOBAL_ATOMIC_INC_U32,
        DS_DEC_U32 => global::GLOBAL_ATOMIC_DEC_U32,
        DS_MIN_I32 => global::GLOBAL_ATOMIC_MIN_I32,
        DS_MAX_I32 => global::GLOBAL_ATOMIC_MAX_I32,
        DS_MIN_U32 => global::GLOBAL_ATOMIC_MIN_U32,
        DS_MAX_U32 => global::GLOBAL_ATOMIC_MAX_U32,
        DS_AND_B32 => global::GLOBAL_ATOMIC_AND_B32,
        DS_OR_B32 => global::GLOBAL_ATOMIC_OR_B32,
        DS_XOR_B32 => global::GLOBAL_ATOMIC_XOR_B32,
        DS_CMPSTORE_B32 => global::GLOBAL_ATOMIC_CMPSWAP_B32,
        DS_MIN_F32 => global::GLOBAL_ATOMIC_MIN_F32,
        DS_MAX_F32 => global::GLOBAL_ATOMIC_MAX_F32,
        DS_ADD_F32 => global::GLOBAL_ATOMIC_ADD_F32,
        _ => return None,
    })
}

/// Runs DS opcode `i.op` for every lane of EXEC.
pub(crate) fn ds(w: &mut Wave, i: &Inst, lds: &mut [u8]) -> R<()> {
    let Some(op) = Ds::from_op(i.op) else {
        return Err(missing(i, "no such opcode"));
    };
    ds_op(w, i, op, lds)
}

/// [`ds()`] with the opcode already named (`op` is `i.op`'s).
pub(crate) fn ds_op(w: &mut Wave, i: &Inst, op: Ds, lds: &mut [u8]) -> R<()> {
    use Ds::*;
    if !w.check_lds && whole_wave(w, i, op, lds).is_some() {
        return Ok(());
    }
    // The 32-bit read-modify-writes: the plain form and, for `_rtn`, whether the old
    // value returns (ds_add_rtn_f32 is apart from the others).
    let (rmw, rtn) = match op {
        DS_ADD_RTN_F32 => (Some(DS_ADD_F32), true),
        _ => match plain(i.op) {
            // The 32-bit block, below its `_rtn` forms.
            (p, r) if p < ds::DS_ADD_RTN_U32 => (
                Ds::from_op(p).filter(|&p| global32(p).is_some() || matches!(p, DS_RSUB_U32 | DS_MSKOR_B32)),
                r,
            ),
            _ => (None, false),
        },
    };
    let plain_ops = matches!(
        op,
        DS_STORE_B32
            | DS_STORE_B64
            | DS_STORE_B96
            | DS_STORE_B128
            | DS_STORE_2ADDR_B32
            | DS_STORE_2ADDR_STRIDE64_B32
            | DS_STORE_B8
            | DS_STORE_B16
            | DS_LOAD_B32
            | DS_LOAD_B64
            | DS_LOAD_B96
            | DS_LOAD_B128
            | DS_LOAD_2ADDR_B32
            | DS_LOAD_2ADDR_STRIDE64_B32
            | DS_LOAD_I8
            | DS_LOAD_U8
            | DS_LOAD_I16
            | DS_LOAD_U16
            | DS_STOREXCHG_RTN_B32
    );
    if rmw.is_none() && !plain_ops {
        return ds_rest(w, i, lds);
    }
    let f = i.ds();
    let ([off0, off1], offset, [addr, d0, d1], vdst) = (f.offsets, f.offset(), f.vgprs, f.vdst);
    let exec = w.exec();
    let mut lds = Space {
        bytes: lds,
        check: w.check_lds,
    };
    for lane in (0..32).filter(|l| exec >> l & 1 == 1) {
        let base = w.vread(addr, lane, None)?;
        let a = base.wrapping_add(offset);
        match op {
            DS_STORE_B32 => lds.write(a, u64::from(w.vread(d0, lane, None)?), 4)?,
            DS_STORE_B8 | DS_STORE_B16 => {
                let n = if op == DS_STORE_B8 { 1 } else { 2 };
                lds.write(a, u64::from(w.vread(d0, lane, None)?), n)?;
            }
            DS_STORE_B64 | DS_STORE_B96 | DS_STORE_B128 => {
                for k in 0..dwords(op) {
                    let v = w.vread(d0 + k as u16, lane, None)?;
                    lds.write(a.wrapping_add(4 * k as u32), u64::from(v), 4)?;
                }
            }
            DS_STORE_2ADDR_B32 | DS_STORE_2ADDR_STRIDE64_B32 => {
                let stride = if op == DS_STORE_2ADDR_B32 { 4 } else { 256 };
                lds.write(base.wrapping_add(off0 * stride), u64::from(w.vread(d0, lane, None)?), 4)?;
                lds.write(base.wrapping_add(off1 * stride), u64::from(w.vread(d1, lane, None)?), 4)?;
            }
            DS_LOAD_B32 => w.vwrite(vdst, lane, lds.read32(a)?)?,
            DS_LOAD_B64 | DS_LOAD_B96 | DS_LOAD_B128 => {
                for k in 0..dwords(op) {
                    w.vwrite(vdst + k, lane, lds.read32(a.wrapping_add(4 * k as u32))?)?;
                }
            }
            DS_LOAD_2ADDR_B32 | DS_LOAD_2ADDR_STRIDE64_B32 => {
                let stride = if op == DS_LOAD_2ADDR_B32 { 4 } else { 256 };
                let (x, y) = (
                    lds.read32(base.wrapping_add(off0 * stride))?,
                    lds.read32(base.wrapping_add(off1 * stride))?,
                );
                w.vwrite(vdst, lane, x)?;
                w.vwrite(vdst + 1, lane, y)?;
            }
            // Sub-dword loads, zero- or sign-extended.
            DS_LOAD_I8 | DS_LOAD_U8 | DS_LOAD_I16 | DS_LOAD_U16 => {
                let n = if matches!(op, DS_LOAD_I8 | DS_LOAD_U8) { 1 } else { 2 };
                let raw = lds.read(a, n)?;
                let v = match op {
                    DS_LOAD_I8 => raw as u8 as i8 as i32 as u32,
                    DS_LOAD_I16 => raw as u16 as i16 as i32 as u32,
                    _ => raw as u32,
                };
                w.vwrite(vdst, lane, v)?;
            }
            DS_STOREXCHG_RTN_B32 => {
                let old = lds.read_old(a, 4)? as u32;
                lds.write_new(a, u64::from(w.vread(d0, lane, None)?), 4)?;
                w.vwrite(vdst, lane, old)?;
            }
            // The read-modify-writes, sharing the global atomics' arithmetic; rsub and
            // mskor exist only here. gfx11 compare-store: DATA0 is the new value,
            // DATA1 the comparand, as the global cmpswap's data pair.
            _ => {
                let Some(p) = rmw else {
                    return Err(missing(i, op.name()));
                };
                let (old, x) = (lds.read_old(a, 4)? as u32, w.vread(d0, lane, None)?);
                let new = match p {
                    DS_RSUB_U32 => x.wrapping_sub(old),
                    DS_MSKOR_B32 => (old & !x) | w.vread(d1, lane, None)?,
                    _ => {
                        let g = global32(p).ok_or_else(|| missing(i, op.name()))?;
                        let cmp = if p == DS_CMPSTORE_B32 {
                            w.vread(d1, lane, None)?
                        } else {
                            0
                        };
                        atomic_result(g, u64::from(old), u64::from(x), u64::from(cmp))? as u32
                    }
                };
                lds.write_new(a, u64::from(new), 4)?;
                if rtn {
                    w.vwrite(vdst, lane, old)?;
                }
            }
        }
    }
    Ok(())
}

/// The dword loads and stores, a whole wave at a time, as the lane-by-lane path does
/// them (stores in lane order, so the last lane wins). `None` when the instruction is
/// not one of them or names registers past the wave's (the lane-by-lane path reports
/// that).
fn whole_wave(w: &mut Wave, i: &Inst, op: Ds, lds: &mut [u8]) -> Option<()> {
    use Ds::*;
    let f = i.ds();
    let ([off0, off1], offset, vdst) = (f.offsets, f.offset(), f.vdst);
    // VGPR indices (the fields are source operand numbers, 256 + index).
    let [addr, d0, d1] = f.vgprs.map(|v| usize::from(v - 256));
    let regs = w.v.len();
    if super::exec::slow_only() {
        return None;
    }
    let base = *w.v.get(addr)?;
    let exec = w.exec();
    // Outside the LDS: 0, and nothing written (the sanitizer's check runs the
    // lane-by-lane path).
    let rd = |lds: &[u8], a: u32| read32(lds, a).unwrap_or(0);
    match op {
        DS_LOAD_B32 | DS_LOAD_B64 | DS_LOAD_B96 | DS_LOAD_B128 => {
            let n = dwords(op);
            if vdst + n > regs {
                return None;
            }
            if n == 1 && exec == u32::MAX && super::gather::dwords_into(lds, &base, &[offset], &mut w.v[vdst..vdst + 1])
            {
                return Some(());
            }
            for k in 0..n {
                let at = offset.wrapping_add(4 * k as u32);
                let mut out = w.v[vdst + k];
                blend(&mut out, exec, |l| rd(lds, base[l].wrapping_add(at)));
                w.v[vdst + k] = out;
            }
        }
        DS_LOAD_2ADDR_B32 | DS_LOAD_2ADDR_STRIDE64_B32 => {
            if vdst + 2 > regs {
                return None;
            }
            let stride = if op == DS_LOAD_2ADDR_B32 { 4 } else { 256 };
            let (a0, a1) = (off0 * stride, off1 * stride);
            if exec == u32::MAX {
                // Every lane: both dwords in one pass, without a select.
                if super::gather::dwords_into(lds, &base, &[a0, a1], &mut w.v[vdst..vdst + 2]) {
                    return Some(());
                }
                let (mut x, mut y) = ([0u32; 32], [0u32; 32]);
                for l in 0..32 {
                    x[l] = rd(lds, base[l].wrapping_add(a0));
                    y[l] = rd(lds, base[l].wrapping_add(a1));
                }
                w.v[vdst].0 = x;
                w.v[vdst + 1].0 = y;
                return Some(());
            }
            for (k, off) in [a0, a1].into_iter().enumerate() {
                let mut out = w.v[vdst + k];
                blend(&mut out, exec, |l| rd(lds, base[l].wrapping_add(off)));
                w.v[vdst + k] = out;
            }
        }
        DS_STORE_B32 | DS_STORE_B64 | DS_STORE_B96 | DS_STORE_B128 => {
            let n = dwords(op);
            if d0 + n > regs {
                return None;
            }
            if exec == u32::MAX && n == 1 {
                // Every lane, one dword each, in lane order (the last lane to a dword
                // wins).
                for (&b, &v) in base.iter().zip(w.v[d0].iter()) {
                    let a = b.wrapping_add(offset) as usize;
                    if let Some(dst) = lds.get_mut(a..a + 4) {
                        dst.copy_from_slice(&v.to_le_bytes());
                    }
                }
                return Some(());
            }
            for lane in (0..32).filter(|l| exec >> l & 1 != 0) {
                let a = base[lane].wrapping_add(offset);
                for k in 0..n {
                    let _ = write(lds, a.wrapping_add(4 * k as u32), u64::from(w.v[d0 + k][lane]), 4);
                }
            }
        }
        DS_STORE_2ADDR_B32 | DS_STORE_2ADDR_STRIDE64_B32 => {
            if d0.max(d1) >= regs {
                return None;
            }
            let stride = if op == DS_STORE_2ADDR_B32 { 4 } else { 256 };
            for lane in (0..32).filter(|l| exec >> l & 1 != 0) {
                let _ = write(lds, base[lane].wrapping_add(off0 * stride), u64::from(w.v[d0][lane]), 4);
                let _ = write(lds, base[lane].wrapping_add(off1 * stride), u64::from(w.v[d1][lane]), 4);
            }
        }
        _ => return None,
    }
    Some(())
}

/// The LDS opcodes beyond the plain loads, stores and 32-bit read-modify-writes.
fn ds_rest(w: &mut Wave, i: &Inst, lds: &mut [u8]) -> R<()> {
    use Ds::*;
    let op = Ds::from_op(i.op).ok_or_else(|| missing(i, "no such opcode"))?;
    let f = i.ds();
    let ([off0, off1], offset, [addr, d0, d1], vdst) = (f.offsets, f.offset(), f.vgprs, f.vdst);
    let exec = w.exec();
    let lanes = || (0..32).filter(move |l| exec >> l & 1 == 1);
    let mut lds = Space {
        bytes: lds,
        check: w.check_lds,
    };
    match op {
        DS_NOP => return Ok(()),
        // Counters at M0's base plus the offset: the old value to every lane, the
        // counter moved by the number of lanes.
        // (Once for a whole wave64: its 64 lanes count together.)
        DS_APPEND | DS_CONSUME => {
            let a = (w.s[M0] & 0xffff).wrapping_add(offset);
            let old = lds.read_old(a, 4)? as u32;
            let all = w.exec_all();
            let n = all.count_ones();
            let new = if op == DS_APPEND {
                old.wrapping_add(n)
            } else {
                old.wrapping_sub(n)
            };
            lds.write_new(a, u64::from(new), 4)?;
            for l in (0..64).filter(|l| all >> l & 1 == 1) {
                w.vwrite_lane64(vdst, l, old)?;
            }
            return Ok(());
        }
        // Cross-lane moves through the LDS crossbar (no LDS memory is touched).
        // All lanes of the wave at once (64 in a wave64, which runs these once).
        DS_PERMUTE_B32 | DS_BPERMUTE_B32 => {
            let n = if w.wave64 { 64 } else { 32 };
            let exec = w.exec_all();
            let mut out = [0u32; 64];
            let mut hit = [false; 64];
            for l in 0..n {
                let sel = ((w.vread_lane64(addr, l, None)?.wrapping_add(offset) / 4) % n as u32) as usize;
                if op == DS_PERMUTE_B32 {
                    if exec >> l & 1 == 1 {
                        out[sel] = w.vread_lane64(d0, l, None)?;
                        hit[sel] = true;
                    }
                } else if exec >> sel & 1 == 1 {
                    out[l] = w.vread_lane64(d0, sel, None)?;
                }
            }
            for l in (0..n).filter(|l| exec >> l & 1 == 1) {
                let v = if op == DS_PERMUTE_B32 && !hit[l] { 0 } else { out[l] };
                w.vwrite_lane64(vdst, l, v)?;
            }
            return Ok(());
        }
        // The source is in the ADDR field (`ds_swizzle_b32 vdst, vsrc offset:…`).
        DS_SWIZZLE_B32 => {
            let src: Vec<u32> = (0..32).map(|l| w.vread(addr, l, None)).collect::<R<_>>()?;
            for l in lanes() {
                let j = swizzle_lane(offset, l);
                let v = if exec >> j & 1 == 1 { src[j] } else { 0 };
                w.vwrite(vdst, l, v)?;
            }
            return Ok(());
        }
        DS_BVH_STACK_RTN_B32 => {
            return Err("ds_bvh_stack_rtn_b32 (ray tracing's traversal stack) is refused".into());
        }
        _ => {}
    }
    for lane in lanes() {
        let base = w.vread(addr, lane, None)?;
        let a = base.wrapping_add(offset);
        match op {
            DS_STORE_ADDTID_B32 => {
                let at = (offset + (w.s[M0] & 0xffff)).wrapping_add(4 * lane as u32);
                lds.write(at, u64::from(w.vread(d0, lane, None)?), 4)?;
            }
            DS_LOAD_ADDTID_B32 => {
                let at = (offset + (w.s[M0] & 0xffff)).wrapping_add(4 * lane as u32);
                w.vwrite(vdst, lane, lds.read32(at)?)?;
            }
            // Half-register stores: the high half's byte or half-word.
            DS_STORE_B8_D16_HI | DS_STORE_B16_D16_HI => {
                let n = if op == DS_STORE_B8_D16_HI { 1 } else { 2 };
                lds.write(a, u64::from(w.vread(d0, lane, None)? >> 16), n)?;
            }
            // Half-register loads: into the low or high 16 bits, the other half kept.
            DS_LOAD_U8_D16 | DS_LOAD_U8_D16_HI | DS_LOAD_I8_D16 | DS_LOAD_I8_D16_HI | DS_LOAD_U16_D16
            | DS_LOAD_U16_D16_HI => {
                let byte = matches!(
                    op,
                    DS_LOAD_U8_D16 | DS_LOAD_U8_D16_HI | DS_LOAD_I8_D16 | DS_LOAD_I8_D16_HI
                );
                let raw = lds.read(a, if byte { 1 } else { 2 })? as u16;
                let h = match op {
                    DS_LOAD_I8_D16 | DS_LOAD_I8_D16_HI => raw as u8 as i8 as i16 as u16,
                    _ => raw,
                };
                let hi = matches!(op, DS_LOAD_U8_D16_HI | DS_LOAD_I8_D16_HI | DS_LOAD_U16_D16_HI);
                let old = w.vread(256 + vdst as u16, lane, None)?;
                let v = if hi {
                    (old & 0xffff) | u32::from(h) << 16
                } else {
                    (old & 0xffff_0000) | u32::from(h)
                };
                w.vwrite(vdst, lane, v)?;
            }
            DS_STORE_2ADDR_B64 | DS_STORE_2ADDR_STRIDE64_B64 => {
                let stride = if op == DS_STORE_2ADDR_B64 { 8 } else { 512 };
                lds.write(base.wrapping_add(off0 * stride), vread64(w, d0, lane)?, 8)?;
                lds.write(base.wrapping_add(off1 * stride), vread64(w, d1, lane)?, 8)?;
            }
            DS_LOAD_2ADDR_B64 | DS_LOAD_2ADDR_STRIDE64_B64 => {
                let stride = if op == DS_LOAD_2ADDR_B64 { 8 } else { 512 };
                let x = lds.read(base.wrapping_add(off0 * stride), 8)?;
                let y = lds.read(base.wrapping_add(off1 * stride), 8)?;
                vwrite64(w, vdst, lane, x)?;
                vwrite64(w, vdst + 2, lane, y)?;
            }
            DS_STOREXCHG_2ADDR_RTN_B32
            | DS_STOREXCHG_2ADDR_STRIDE64_RTN_B32
            | DS_STOREXCHG_2ADDR_RTN_B64
            | DS_STOREXCHG_2ADDR_STRIDE64_RTN_B64 => {
                let wide = matches!(op, DS_STOREXCHG_2ADDR_RTN_B64 | DS_STOREXCHG_2ADDR_STRIDE64_RTN_B64);
                let n = if wide { 8 } else { 4 };
                let stride = n as u32
                    * if matches!(op, DS_STOREXCHG_2ADDR_RTN_B32 | DS_STOREXCHG_2ADDR_RTN_B64) {
                        1
                    } else {
                        64
                    };
                let (a1, a2) = (base.wrapping_add(off0 * stride), base.wrapping_add(off1 * stride));
                let (old1, old2) = (lds.read_old(a1, n)?, lds.read_old(a2, n)?);
                let (x, y) = if wide {
                    (vread64(w, d0, lane)?, vread64(w, d1, lane)?)
                } else {
                    (u64::from(w.vread(d0, lane, None)?), u64::from(w.vread(d1, lane, None)?))
                };
                lds.write_new(a1, x, n)?;
                lds.write_new(a2, y, n)?;
                if wide {
                    vwrite64(w, vdst, lane, old1)?;
                    vwrite64(w, vdst + 2, lane, old2)?;
                } else {
                    w.vwrite(vdst, lane, old1 as u32)?;
                    w.vwrite(vdst + 1, lane, old2 as u32)?;
                }
            }
            DS_CONDXCHG32_RTN_B64 => {
                let a0 = a & 0xfff8;
                let data = vread64(w, d0, lane)?;
                let (r0, r1) = (lds.read_old(a0, 4)? as u32, lds.read_old(a0 + 4, 4)? as u32);
                if data >> 31 & 1 == 1 {
                    lds.write_new(a0, data & 0x7fff_ffff, 4)?;
                }
                if data >> 63 == 1 {
                    lds.write_new(a0 + 4, (data >> 32) & 0x7fff_ffff, 4)?;
                }
                w.vwrite(vdst, lane, r0)?;
                w.vwrite(vdst + 1, lane, r1)?;
            }
            _ => rmw(w, i, op, &mut lds, lane, a, (d0, d1, vdst))?,
        }
    }
    Ok(())
}

/// The read-modify-writes: 32-bit float compare-store and wrap, and every 64-bit one.
fn rmw(w: &mut Wave, i: &Inst, op: Ds, lds: &mut Space, lane: usize, a: u32, regs: (u16, u16, usize)) -> R<()> {
    use Ds::*;
    let (d0, d1, vdst) = regs;
    let (base_op, rtn) = plain(i.op);
    let base = Ds::from_op(base_op).ok_or_else(|| missing(i, op.name()))?;
    // The 64-bit block, from ds_add_u64.
    let wide = base_op >= ds::DS_ADD_U64;
    let n = if wide { 8 } else { 4 };
    let old = lds.read_old(a, n)?;
    let (x, y) = if wide {
        (vread64(w, d0, lane)?, vread64(w, d1, lane).unwrap_or(0))
    } else {
        (
            u64::from(w.vread(d0, lane, None)?),
            u64::from(w.vread(d1, lane, None).unwrap_or(0)),
        )
    };
    let fmin = |a: f64, b: f64| if b < a { b } else { a };
    let fmax = |a: f64, b: f64| if b > a { b } else { a };
    let new = match base {
        // ds_storexchg_rtn_b64 (its plain number is ds_store_b64's).
        _ if op == DS_STOREXCHG_RTN_B64 => x,
        DS_CMPSTORE_F32 => {
            if f32::from_bits(old as u32) == f32::from_bits(y as u32) {
                x
            } else {
                old
            }
        }
        DS_WRAP_RTN_B32 => {
            let (o, d, d2) = (old as u32, x as u32, y as u32);
            u64::from(if o >= d { o - d } else { o.wrapping_add(d2) })
        }
        DS_RSUB_U64 => x.wrapping_sub(old),
        DS_MSKOR_B64 => (old & !x) | y,
        DS_CMPSTORE_B64 => {
            if old == y {
                x
            } else {
                old
            }
        }
        DS_CMPSTORE_F64 => {
            if f64::from_bits(old) == f64::from_bits(y) {
                x
            } else {
                old
            }
        }
        DS_MIN_F64 => fmin(f64::from_bits(old), f64::from_bits(x)).to_bits(),
        DS_MAX_F64 => fmax(f64::from_bits(old), f64::from_bits(x)).to_bits(),
        other => match global64(other) {
            Some(g) => atomic_result(g, old, x, 0)?,
            None => return Err(missing(i, op.name())),
        },
    };
    lds.write_new(a, new, n)?;
    if rtn || base == DS_WRAP_RTN_B32 {
        if wide {
            vwrite64(w, vdst, lane, old)?;
        } else {
            w.vwrite(vdst, lane, old as u32)?;
        }
    }
    Ok(())
}

/// The lane `ds_swizzle_b32` with `offset` reads for lane `l` (wave32).
fn swizzle_lane(offset: u32, l: usize) -> usize {
    let i = l as u32;
    let j = if offset >= 0xe000 {
        // FFT decomposition.
        let mask = offset & 0x1f;
        let j = (i & 0x1f).reverse_bits() >> 27;
        (j >> mask.count_ones()) | (i & mask)
    } else if offset >= 0xc000 {
        // Rotate within the masked bits, by offset[9:5] (right when offset[10]).
        let (mask, r) = (offset & 0x1f, (offset >> 5) & 0x1f);
        let rot = if offset >> 10 & 1 == 1 {
            i.wrapping_sub(r)
        } else {
            i.wrapping_add(r)
        };
        (i & mask) | (rot & !mask)
    } else if offset >> 15 & 1 == 1 {
        // Any of the 4 lanes of a quad, by two bits per lane.
        (i & !3) | (offset >> (2 * (i & 3))) & 3
    } else {
        // Bit masks within 32 lanes: ((lane & and) | or) ^ xor.
        let (and, or, xor) = (offset & 0x1f, (offset >> 5) & 0x1f, (offset >> 10) & 0x1f);
        ((i & and) | or) ^ xor
    };
    (j & 0x1f) as usize
}

/// An LDS read-modify-write RDNA3 does not have (RDNA4's and CDNA3's, numbered as
/// [`super::extra_atomic`]), decoded: the atomic, whether it returns the old value, the
/// address VGPR (an operand number), the data (a pair for the 64-bit forms), the
/// destination and the offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DsExtraAtomic {
    pub(crate) atomic: u16,
    pub(crate) rtn: bool,
    pub(crate) addr: u16,
    pub(crate) data: u16,
    pub(crate) vdst: usize,
    pub(crate) offset: u32,
}

/// Runs `x` lane by lane in EXEC: the dword (or, for the f64 forms, the pair) at the
/// address plus the offset, out-of-range bytes read as 0 and not written, as RDNA3's
/// LDS does (or, under the sanitizer's check, a trap: [`missed`]).
pub(crate) fn ds_extra_atomic(w: &mut Wave, x: &DsExtraAtomic, lds: &mut [u8]) -> R<()> {
    let wide = super::atomic_op(x.atomic).is_some_and(|a| a.wide);
    let n = if wide { 8 } else { 4 };
    let exec = w.exec();
    for lane in (0..32).filter(|l| exec >> l & 1 == 1) {
        let a = w.vread(x.addr, lane, None)?.wrapping_add(x.offset) as usize;
        let lds_bytes = lds.len();
        let slot = a.checked_add(n).and_then(|end| lds.get_mut(a..end));
        if slot.is_none() {
            missed(w.check_lds, a as u64, n, AccessKind::Atomic, lds_bytes)?;
        }
        let mut old = [0u8; 8];
        if let Some(s) = &slot {
            old[..n].copy_from_slice(s);
        }
        let old = u64::from_le_bytes(old);
        let data = if wide {
            w.vread64(x.data, lane, None)?
        } else {
            u64::from(w.vread(x.data, lane, None)?)
        };
        let new = super::atomic_result(x.atomic, old, data, 0)?;
        if let Some(s) = slot {
            s.copy_from_slice(&new.to_le_bytes()[..n]);
        }
        if x.rtn {
            w.vwrite(x.vdst, lane, old as u32)?;
            if wide {
                w.vwrite(x.vdst + 1, lane, (old >> 32) as u32)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Encodings from `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`. The
    //! runner's LDS is 1 KiB, zeroed.
    use super::*;
    use crate::rdna3::testing::{lanes, run, run_all};

    /// v1 = 8 × lane (an address per lane), v[2:3] and v[4:5] 64-bit data.
    fn setup(w: &mut Wave, x: impl Fn(usize) -> u64, y: impl Fn(usize) -> u64) {
        lanes(w, 1, |l| 8 * l as u32);
        lanes(w, 2, |l| x(l) as u32);
        lanes(w, 3, |l| (x(l) >> 32) as u32);
        lanes(w, 4, |l| y(l) as u32);
        lanes(w, 5, |l| (y(l) >> 32) as u32);
    }

    fn v64(w: &Wave, r: usize, l: usize) -> u64 {
        u64::from(w.v[r][l]) | u64::from(w.v[r + 1][l]) << 32
    }

    const LOAD_B64: [u32; 2] = [0xd9d8_0000, 0x0600_0001]; // ds_load_b64 v[6:7], v1

    #[test]
    fn sixty_four_bit_read_modify_writes() {
        let big = |l: usize| (1u64 << 40) + l as u64;
        // ds_add_u64 v1, v[2:3] twice, then ds_add_rtn_u64 v[6:7], v1, v[2:3]
        let add = [0xd900_0000, 0x0000_0201];
        let add_rtn = [0xd980_0000, 0x0600_0201];
        let w = run_all(&[&add, &add, &add_rtn], |w| setup(w, big, |_| 0)).unwrap();
        assert_eq!(v64(&w, 6, 5), 2 * big(5), "the old value, with carries across halves");
        // ds_max_rtn_i64: signed
        let max = [0xd998_0000, 0x0600_0201];
        let w = run_all(&[&max, &LOAD_B64], |w| setup(w, |_| (-5i64) as u64, |_| 0)).unwrap();
        assert_eq!((v64(&w, 6, 0), w.v[6][0]), (0, 0), "max(0, -5) is 0");
        // ds_rsub_u64: data - old
        let rsub = [0xd908_0000, 0x0000_0201];
        let w = run_all(&[&add, &rsub, &rsub, &LOAD_B64], |w| setup(w, big, |_| 0)).unwrap();
        assert_eq!(v64(&w, 6, 3), big(3), "x - (x - x) = x");
        // ds_mskor_b64 v1, v[2:3], v[4:5]: (old & !mask) | bits
        let mskor = [0xd930_0000, 0x0004_0201];
        let w = run_all(&[&mskor, &LOAD_B64], |w| setup(w, |_| 0, |_| 0xf0 << 32)).unwrap();
        assert_eq!(v64(&w, 6, 1), 0xf0 << 32);
    }

    #[test]
    fn compare_stores_and_exchanges() {
        // ds_cmpstore_rtn_b64 v[6:7], v1, v[2:3], v[4:5]: store DATA0 where old == DATA1
        let cmp = [0xd9c0_0000, 0x0604_0201];
        let w = run_all(&[&cmp, &LOAD_B64], |w| {
            setup(w, |l| 100 + l as u64, |l| (l % 2) as u64 * 7)
        })
        .unwrap();
        assert_eq!(v64(&w, 6, 0), 100, "lane 0 compared 0 with 0");
        assert_eq!(v64(&w, 6, 1), 0, "lane 1 compared 0 with 7");
        // ds_storexchg_rtn_b64 v[6:7], v1, v[2:3]
        let xchg = [0xd9b4_0000, 0x0600_0201];
        let w = run_all(&[&xchg, &xchg], |w| setup(w, |l| 9 + l as u64, |_| 0)).unwrap();
        assert_eq!(v64(&w, 6, 2), 11, "the first exchange's value came back");
        // ds_cmpstore_f32 v1, v2, v3: a float compare, so -0.0 matches 0.0
        let cmpf = [0xd844_0000, 0x0003_0201];
        let ld = [0xd8d8_0000, 0x0600_0001]; // ds_load_b32 v6, v1
        let w = run_all(&[&cmpf, &ld], |w| {
            lanes(w, 1, |l| 4 * l as u32);
            lanes(w, 2, |_| 2.5f32.to_bits());
            lanes(w, 3, |_| (-0.0f32).to_bits());
        })
        .unwrap();
        assert_eq!(w.v[6][4], 2.5f32.to_bits());
        // ds_wrap_rtn_b32 v6, v1, v2, v3: old >= d ? old - d : old + d2
        let wrap = [0xd8d0_0000, 0x0603_0201];
        let w = run_all(&[&wrap, &wrap], |w| {
            lanes(w, 1, |l| 4 * l as u32);
            lanes(w, 2, |_| 1);
            lanes(w, 3, |_| 10);
        })
        .unwrap();
        assert_eq!(w.v[6][0], 10, "0 + 10 first, then 10 returned before 10 - 1");
    }

    #[test]
    fn two_address_64_bit_and_exchange_pairs() {
        // ds_store_2addr_b64 v1, v[2:3], v[4:5] offset0:1 offset1:3 (×8 bytes), then
        // ds_load_2addr_b64 v[6:9], v1 offset0:1 offset1:3
        let st = [0xd938_0301, 0x0004_0201];
        let ld = [0xd9dc_0301, 0x0600_0001];
        let w = run_all(&[&st, &ld], |w| {
            setup(w, |l| 0x1111 << 32 | l as u64, |l| 0x2222 << 32 | l as u64);
            lanes(w, 1, |l| 32 * l as u32);
        })
        .unwrap();
        assert_eq!((v64(&w, 6, 3), v64(&w, 8, 3)), (0x1111 << 32 | 3, 0x2222 << 32 | 3));
        // ds_storexchg_2addr_rtn_b32 v[6:7], v1, v2, v3 offset1:2 (×4 bytes) twice
        let x = [0xd8b8_0200, 0x0603_0201];
        let w = run_all(&[&x, &x], |w| {
            lanes(w, 1, |l| 16 * l as u32);
            lanes(w, 2, |l| 10 + l as u32);
            lanes(w, 3, |l| 20 + l as u32);
        })
        .unwrap();
        assert_eq!((w.v[6][1], w.v[7][1]), (11, 21));
    }

    #[test]
    fn half_register_loads_and_stores() {
        // ds_store_b16_d16_hi v1, v2 then ds_load_u8_d16_hi v6, v1 and ds_load_i8_d16 v6, v1
        let st = [0xda84_0000, 0x0000_0201];
        let hi = [0xda8c_0000, 0x0600_0001];
        let lo = [0xda90_0000, 0x0600_0001];
        let w = run_all(&[&st, &hi, &lo], |w| {
            lanes(w, 1, |l| 4 * l as u32);
            lanes(w, 2, |_| 0x80f0_0000);
            lanes(w, 6, |_| 0x1234_5678);
        })
        .unwrap();
        // The stored half is 0x80f0: its low byte 0xf0 (zero-extended) to the high
        // half, then sign-extended to the low half.
        assert_eq!(w.v[6][0], 0x00f0_fff0);
    }

    #[test]
    fn permutes_and_swizzles() {
        // ds_bpermute_b32 v6, v1, v2: lane l reads lane (v1/4) % 32
        let bperm = [0xdacc_0000, 0x0600_0201];
        let w = run(&bperm, |w| {
            lanes(w, 1, |l| 4 * (31 - l as u32) + 128);
            lanes(w, 2, |l| 100 + l as u32);
        })
        .unwrap();
        assert_eq!((w.v[6][0], w.v[6][31]), (131, 100));
        // ds_permute_b32 v6, v1, v2: lane l writes lane (v1/4) % 32; lanes nobody
        // writes get 0.
        let perm = [0xdac8_0000, 0x0600_0201];
        let w = run(&perm, |w| {
            lanes(w, 1, |l| 4 * ((l as u32 + 1) % 32));
            lanes(w, 2, |l| 100 + l as u32);
            w.s[crate::rdna3::wave::EXEC_LO] = !1;
        })
        .unwrap();
        assert_eq!((w.v[6][2], w.v[6][1]), (101, 0), "lane 0 is off: lane 1 gets nothing");
        // ds_swizzle_b32 v6, v2 offset:swizzle(BITMASK_PERM,"01pip") and QUAD_PERM 3,2,1,0
        let bitmask = [0xd8d4_0907, 0x0600_0002];
        let quad = [0xd8d4_801b, 0x0600_0002];
        let w = run(&bitmask, |w| lanes(w, 2, |l| l as u32)).unwrap();
        assert_eq!(w.v[6][0], 0b01010);
        assert_eq!(w.v[6][7], 0b01101);
        let w = run(&quad, |w| lanes(w, 2, |l| l as u32)).unwrap();
        assert_eq!(&w.v[6][4..8], &[7, 6, 5, 4]);
        // Rotate and FFT modes.
        assert_eq!(swizzle_lane(0xc000 | 1 << 5, 31), 0, "rotate left by 1 over all bits");
        assert_eq!(swizzle_lane(0xc000 | 1 << 10 | 1 << 5, 0), 31, "and right");
        assert_eq!(swizzle_lane(0xe000, 1), 16, "FFT: bit-reversed lane");
    }

    #[test]
    fn counters_and_lane_indexed_accesses() {
        // ds_append v6 then ds_consume v6 offset:4, M0 = 0x20
        let append = [0xd8f8_0000, 0x0600_0000];
        let consume = [0xd8f4_0004, 0x0600_0000];
        let w = run_all(&[&append, &append], |w| {
            w.s[M0] = 0x20;
            w.s[crate::rdna3::wave::EXEC_LO] = 0xff;
        })
        .unwrap();
        assert_eq!(w.v[6][3], 8, "the counter before the second append");
        let w = run(&consume, |w| w.s[M0] = 0x20).unwrap();
        assert_eq!(w.v[6][0], 0);
        // ds_store_addtid_b32 v2 offset:16 and ds_load_addtid_b32 v6 offset:16
        let st = [0xdac0_0010, 0x0000_0200];
        let ld = [0xdac4_0010, 0x0600_0000];
        let w = run_all(&[&st, &ld], |w| {
            lanes(w, 2, |l| 7 * l as u32);
            w.s[M0] = 0x40;
        })
        .unwrap();
        assert_eq!(w.v[6][9], 63);
        // ds_nop does nothing; ds_condxchg32_rtn_b64 writes each half whose bit 31 is set.
        run(&[0xd850_0000, 0], |_| {}).unwrap();
        let cx = [0xd9f8_0000, 0x0600_0201];
        let w = run_all(&[&cx, &cx], |w| setup(w, |_| 0x0000_0005_8000_0009, |_| 0)).unwrap();
        assert_eq!((w.v[6][0], w.v[7][0]), (9, 0), "low half written, high half not");
    }

    /// The whole-wave loads and stores give what the lane-by-lane path gives: lanes
    /// that collide (the last one wins), addresses past the LDS (read 0, write
    /// nothing), some lanes off, the destination overlapping the address.
    #[test]
    fn whole_wave_matches_the_lane_by_lane_path() {
        let ds = |op: u32, off0: u32, off1: u32, vdst: u32, d1: u32, d0: u32, addr: u32| {
            [
                0xd800_0000 | op << 18 | off1 << 8 | off0,
                vdst << 24 | d1 << 16 | d0 << 8 | addr,
            ]
        };
        let prog = [
            ds(13, 4, 0, 0, 0, 2, 1),   // ds_store_b32 v1, v2 offset:4
            ds(77, 0, 1, 0, 0, 3, 1),   // ds_store_b64 v1, v[3:4] offset:256
            ds(223, 8, 0, 0, 0, 4, 1),  // ds_store_b128 v1, v[4:7] offset:8
            ds(222, 0, 2, 0, 0, 5, 1),  // ds_store_b96 v1, v[5:7] offset:512
            ds(14, 1, 7, 0, 6, 5, 1),   // ds_store_2addr_b32 v1, v5, v6 offset0:1 offset1:7
            ds(15, 1, 2, 0, 2, 3, 1),   // ds_store_2addr_stride64_b32 v1, v3, v2 offset0:1 offset1:2
            ds(54, 4, 0, 10, 0, 0, 1),  // ds_load_b32 v10, v1 offset:4
            ds(118, 0, 1, 11, 0, 0, 1), // ds_load_b64 v[11:12], v1 offset:256
            ds(255, 8, 0, 13, 0, 0, 1), // ds_load_b128 v[13:16], v1 offset:8
            ds(254, 0, 2, 17, 0, 0, 1), // ds_load_b96 v[17:19], v1 offset:512
            ds(55, 1, 7, 20, 0, 0, 1),  // ds_load_2addr_b32 v[20:21], v1 offset0:1 offset1:7
            ds(56, 1, 2, 22, 0, 0, 1),  // ds_load_2addr_stride64_b32 v[22:23], v1 offset0:1 offset1:2
            ds(55, 0, 3, 1, 0, 0, 1),   // ds_load_2addr_b32 v[1:2], v1 offset1:3
        ];
        let prog: Vec<&[u32]> = prog.iter().map(|p| &p[..]).collect();
        let exec = std::cell::Cell::new(0u32);
        let past_the_end = std::cell::Cell::new(true);
        let setup = |w: &mut Wave| {
            // Lanes 0..16 apart, 16..24 on one address, the rest at or past the end of the
            // 1 KiB LDS, or (every lane in range) on unaligned addresses.
            lanes(w, 1, |l| match l {
                0..16 => 12 * l as u32,
                16..24 => 40,
                _ if !past_the_end.get() => 7 * l as u32 + 1,
                // Dwords that straddle the end of the LDS (read 0, write nothing).
                24 => 1018,
                25 => 1021,
                _ => 1000 + l as u32,
            });
            for r in 2..8 {
                lanes(w, r, |l| (r as u32) << 16 | l as u32);
            }
            w.s[crate::rdna3::wave::EXEC_LO] = exec.get();
        };
        let cases = [u32::MAX, 0xbfff_fdff, 0x0001_0004]
            .into_iter()
            .flat_map(|m| [(m, true), (m, false)]);
        for (mask, past) in cases {
            exec.set(mask);
            past_the_end.set(past);
            let fast = run_all(&prog, setup).unwrap();
            crate::rdna3::exec::SLOW_ONLY.with(|s| s.set(true));
            let slow = run_all(&prog, setup);
            crate::rdna3::exec::SLOW_ONLY.with(|s| s.set(false));
            assert_eq!(fast.v, slow.unwrap().v, "EXEC {mask:#x}, past the end {past}");
        }
    }

    /// Under the sanitizer's check an LDS access outside the allocation stops the
    /// instruction, naming the first lane's offset, the access and the allocation;
    /// without it the same access reads 0 and writes nothing.
    #[test]
    fn the_sanitizer_stops_an_access_outside_the_lds() {
        use crate::error::TrapKind;
        use crate::memory::{Access, AccessKind};
        use crate::rdna3::testing::run_mem_trap;
        let load: &[u32] = &[0xd8d8_0000, 0x0100_0002]; // ds_load_b32 v1, v2
        let store: &[u32] = &[0xd834_0008, 0x0000_0302]; // ds_store_b32 v2, v3 offset:8
        let add: &[u32] = &[0xd800_0000, 0x0000_0302]; // ds_add_u32 v2, v3
        // v2 = 4 × lane: lanes 16 and up are past 64 bytes of LDS.
        let setup = |check: bool| {
            move |w: &mut Wave, _| {
                w.check_lds = check;
                lanes(w, 2, |l| 4 * l as u32);
                lanes(w, 3, |l| 100 + l as u32);
                lanes(w, 1, |_| 7);
            }
        };
        let cases = [
            (load, 0x40, AccessKind::Load),
            (store, 0x40, AccessKind::Store),
            (add, 0x40, AccessKind::Atomic),
        ];
        for (words, offset, kind) in cases {
            let mut lds = [0x11u8; 64];
            let err = run_mem_trap(&[words], &mut [], &mut lds, setup(true))
                .err()
                .expect("a trap");
            let access = Access { kind, bytes: 4 };
            assert_eq!(*err.kind(), TrapKind::LdsOutside(offset, access, 64), "{kind:?}");
            let mut lds = [0x11u8; 64];
            let w = run_mem_trap(&[words], &mut [], &mut lds, setup(false)).unwrap();
            if kind == AccessKind::Load {
                assert_eq!(w.v[1][15], 0x1111_1111);
                assert_eq!(w.v[1][16], 0, "read as 0 past the end");
            } else {
                assert_eq!(
                    lds[60..64],
                    if kind == AccessKind::Store {
                        [113, 0, 0, 0]
                    } else {
                        [0x11 + 115, 0x11, 0x11, 0x11]
                    }
                );
            }
        }
        // Through generic (FLAT) pointers into the LDS aperture too.
        let flat: &[u32] = &[0xdc50_0000, 0x017c_0004]; // flat_load_b32 v1, v[4:5]
        let mut lds = [0u8; 64];
        let err = run_mem_trap(&[flat], &mut [], &mut lds, |w, _| {
            w.check_lds = true;
            lanes(w, 4, |l| {
                (super::super::wave::SHARED_APERTURE as u32).wrapping_add(8 * l as u32)
            });
            lanes(w, 5, |_| (super::super::wave::SHARED_APERTURE >> 32) as u32);
        })
        .err()
        .expect("a trap");
        let access = Access {
            kind: AccessKind::Load,
            bytes: 4,
        };
        assert_eq!(*err.kind(), TrapKind::LdsOutside(0x40, access, 64));
    }
}
