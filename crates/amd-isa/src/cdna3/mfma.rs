//! CDNA3's matrix instructions (MFMA, and the sparse SMFMAC below): per block, D = A × B + C for an M×K A, a
//! K×N B and M×N C and D, across the 64 lanes of a wave. Where each element lives is
//! not computed here: it is read from the table `cargo xtask matrix-layouts` generates
//! from AMD's matrix instruction calculator (`generated/mfma.rs`), so the layouts are
//! AMD's by construction.
//!
//! Arithmetic: 16-bit and 32-bit float inputs are exact in f64, where their products
//! are summed and added to C, rounded once to f32 (the hardware's internal order and
//! precision are not documented: a result may differ from a GPU's in the last bit);
//! 8-bit integers multiply and accumulate in wrapping 32-bit arithmetic; f64 as a
//! chain of fused multiply-adds in k order. D is written in all 64 lanes whatever
//! EXEC says (a matrix instruction works on the whole wave). The FP8/BF8 forms take
//! gfx942's FNUZ formats ([`crate::float::fp8`]), their products exact in f64 and
//! summed there as the 16-bit forms' are. Not run: the XF32 forms (their reduced
//! precision is not documented), the broadcast controls (CBSZ, ABID, BLGP) and f64's
//! negation modifiers.
//!
//! The sparse ones (SMFMAC, [`run_sparse`]) from the same table: A 4:2 sparse, each
//! group of four k's two stored values multiplying the rows of B their 4-bit index (in
//! SRC2's VGPR) names, added to D in place. Not run: choosing another index set with
//! CBSZ/ABID (AMD's calculator documents the first).

use super::decode::Inst;
use super::fields as fc;
use super::lower::scalar;
use super::opcodes::Vop3p;
use crate::error::Trap;
use crate::float::fp8::Fp8;
use crate::rdna3::Wave;

#[rustfmt::skip]
#[path = "generated/mfma.rs"]
mod generated;

/// An element's place: register (from the operand's first), lane of row (column) 0,
/// first bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct P(pub u8, pub u8, pub u8);

/// An MFMA operand's element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    F32,
    Xf32,
    F16,
    Bf16,
    I8,
    Fp8,
    Bf8,
    F64,
    I32,
}

impl Ty {
    fn bits(self) -> u32 {
        match self {
            Ty::F32 | Ty::Xf32 | Ty::I32 => 32,
            Ty::F16 | Ty::Bf16 => 16,
            Ty::I8 | Ty::Fp8 | Ty::Bf8 => 8,
            Ty::F64 => 64,
        }
    }
}

/// One MFMA instruction: its shape, types and element places per block (A: row 0
/// along k; B: column 0 along k; C and D: column 0 along the rows).
#[derive(Debug)]
pub(crate) struct Mfma {
    pub(crate) name: &'static str,
    pub(crate) m: u32,
    pub(crate) n: u32,
    pub(crate) k: u32,
    pub(crate) blocks: u32,
    pub(crate) a_ty: Ty,
    pub(crate) b_ty: Ty,
    pub(crate) out: Ty,
    pub(crate) a: &'static [P],
    pub(crate) b: &'static [P],
    pub(crate) cd: &'static [P],
}

/// One SMFMAC instruction: its shape, types and element places (A: each group of four
/// k's stored pair along row 0; the index: each group's 4-bit compression index along
/// row 0; B: column 0 along k; C and D: column 0 along the rows). One block.
#[derive(Debug)]
pub(crate) struct Smfmac {
    pub(crate) name: &'static str,
    pub(crate) m: u32,
    pub(crate) n: u32,
    pub(crate) k: u32,
    pub(crate) a_ty: Ty,
    pub(crate) b_ty: Ty,
    pub(crate) out: Ty,
    pub(crate) a: &'static [P],
    pub(crate) idx: &'static [P],
    pub(crate) b: &'static [P],
    pub(crate) cd: &'static [P],
}

/// The MFMA of VOP3P opcode `op`, if the table has it.
pub(crate) fn by_opcode(op: u16) -> Option<&'static Mfma> {
    let name = Vop3p::from_op(op)?.name();
    generated::MFMA.iter().find(|m| m.name == name)
}

/// The SMFMAC of VOP3P opcode `op`, if the table has it.
pub(crate) fn sparse_by_opcode(op: u16) -> Option<&'static Smfmac> {
    let name = Vop3p::from_op(op)?.name();
    generated::SMFMAC.iter().find(|m| m.name == name)
}

/// Every MFMA the table has.
#[cfg(test)]
pub(crate) fn all() -> &'static [Mfma] {
    generated::MFMA
}

/// A decoded MFMA: the instruction's table entry and its operands, in the unified
/// register file (AccVGPRs at the wave's ACCUM_OFFSET, added when run).
#[derive(Debug, Clone)]
pub(crate) struct MfmaOp {
    pub(crate) table: &'static Mfma,
    /// A's, B's first register and whether it is an AccVGPR.
    pub(crate) a: (u16, bool),
    pub(crate) b: (u16, bool),
    /// C: its first register and whether an AccVGPR, or a constant (RDNA3's operand
    /// number) given to every element.
    pub(crate) c: Src2,
    /// D's first register and whether it is an AccVGPR.
    pub(crate) d: (u16, bool),
}

/// MFMA's third source.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Src2 {
    Reg(u16, bool),
    Const(u16),
}

/// Decodes `i`, an MFMA of `table`; a refusal's reason where it uses what is not run.
pub(crate) fn decode(i: &Inst, table: &'static Mfma) -> Result<MfmaOp, &'static str> {
    use fc::vop3p_mfma as f;
    let w = &i.words;
    if matches!(table.a_ty, Ty::Xf32) {
        return Err("an XF32 matrix instruction (its reduced precision is not documented)");
    }
    if f::CBSZ.get(w) != 0 || f::ABID.get(w) != 0 || f::BLGP.get(w) != 0 {
        return Err("a matrix instruction with broadcast controls (CBSZ, ABID, BLGP)");
    }
    let acc = f::ACC.get(w);
    let acc_cd = f::ACC_CD.get(w) == 1;
    let vgpr = |n: u16| n.checked_sub(256);
    let a = vgpr(f::SRC0.operand(w)).ok_or("a matrix operand A that is not a register")?;
    let b = vgpr(f::SRC1.operand(w)).ok_or("a matrix operand B that is not a register")?;
    let c = match f::SRC2.operand(w) {
        n @ 256.. => Src2::Reg(n - 256, acc_cd),
        n @ (128..=208 | 240..=248) => Src2::Const(n),
        n => match scalar(u32::from(n)) {
            Some(s) if s < 106 => Src2::Const(s as u16),
            _ => return Err("a matrix operand C in a special register"),
        },
    };
    Ok(MfmaOp {
        table,
        a: (a, acc & 1 != 0),
        b: (b, acc & 2 != 0),
        c,
        d: (f::VDST.index(w) as u16, acc_cd),
    })
}

/// A decoded SMFMAC: the table entry, A's and B's first registers (AccVGPRs where
/// marked), the index's VGPR, and D's first register (also C).
#[derive(Debug, Clone)]
pub(crate) struct SmfmacOp {
    pub(crate) table: &'static Smfmac,
    pub(crate) a: (u16, bool),
    pub(crate) b: (u16, bool),
    pub(crate) idx: u16,
    pub(crate) d: (u16, bool),
}

/// Decodes `i`, an SMFMAC of `table`; a refusal's reason where it uses what is not run.
pub(crate) fn decode_sparse(i: &Inst, table: &'static Smfmac) -> Result<SmfmacOp, &'static str> {
    use fc::vop3p_mfma as f;
    let w = &i.words;
    if f::CBSZ.get(w) != 0 || f::ABID.get(w) != 0 || f::BLGP.get(w) != 0 {
        return Err(
            "a sparse matrix instruction choosing an index set (CBSZ, ABID) or with BLGP: AMD's calculator \
             documents the first set only",
        );
    }
    let acc = f::ACC.get(w);
    let vgpr = |n: u16| n.checked_sub(256);
    let a = vgpr(f::SRC0.operand(w)).ok_or("a matrix operand A that is not a register")?;
    let b = vgpr(f::SRC1.operand(w)).ok_or("a matrix operand B that is not a register")?;
    let idx = vgpr(f::SRC2.operand(w)).ok_or("a sparse matrix index that is not a VGPR")?;
    let acc_cd = f::ACC_CD.get(w) == 1;
    Ok(SmfmacOp {
        table,
        a: (a, acc & 1 != 0),
        b: (b, acc & 2 != 0),
        idx,
        d: (f::VDST.index(w) as u16, acc_cd),
    })
}

/// Runs `x` on all 64 lanes of `w`: D = A × B + D, A's stored values each times the
/// row of B its index names (bits 1:0 of a group's index the k, within the group, of
/// the pair's first value, bits 3:2 of its second); the other k of a group take no
/// part. Sums as the dense forms': exact in f64 and rounded once to f32, or wrapping
/// 32-bit integers.
pub(crate) fn run_sparse(w: &mut Wave, x: &SmfmacOp) -> Result<(), Trap> {
    let t = x.table;
    let (ab, bb) = (t.a_ty.bits(), t.b_ty.bits());
    let groups = (t.k / 4) as usize;
    // Each row's stored values with the k they multiply.
    let mut terms: Vec<(u64, usize)> = Vec::with_capacity(t.m as usize * groups * 2);
    for r in 0..t.m {
        for g in 0..groups {
            let index = element(w, (x.idx, false), t.idx[g], r, 4)?;
            for v in 0..2u32 {
                let p = t.a[g];
                let place = P(p.0, p.1, p.2 + (v * ab) as u8);
                let value = element(w, x.a, place, r, ab)?;
                terms.push((value, 4 * g + (index >> (2 * v) & 3) as usize));
            }
        }
    }
    let mut b = vec![0u64; (t.n * t.k) as usize];
    for c in 0..t.n {
        for (kk, &p) in t.b.iter().enumerate() {
            b[(c * t.k) as usize + kk] = element(w, x.b, p, c, bb)?;
        }
    }
    let mut out = Vec::with_capacity((t.m * t.n) as usize);
    for r in 0..t.m as usize {
        let p = t.cd[r];
        let row = &terms[r * 2 * groups..(r + 1) * 2 * groups];
        for c in 0..t.n {
            let acc = element(w, x.d, p, c, 32)?;
            let bc = &b[(c * t.k) as usize..((c + 1) * t.k) as usize];
            let d = match t.out {
                Ty::I32 => {
                    let s = row.iter().fold(acc as u32 as i32, |s, &(v, kk)| {
                        s.wrapping_add(i32::from(v as u8 as i8).wrapping_mul(i32::from(bc[kk] as u8 as i8)))
                    });
                    u64::from(s as u32)
                }
                _ => {
                    let dot: f64 = row
                        .iter()
                        .map(|&(v, kk)| value(t.a_ty, v) * value(t.b_ty, bc[kk]))
                        .sum();
                    u64::from(((dot + f64::from(f32::from_bits(acc as u32))) as f32).to_bits())
                }
            };
            out.push((p, c, d));
        }
    }
    let base = u32::from(x.d.0) + if x.d.1 { w.place.acc_base } else { 0 };
    for (p, c, d) in out {
        w.vwrite_lane64(
            (base + u32::from(p.0)) as usize,
            (u32::from(p.1) + c) as usize,
            d as u32,
        )?;
    }
    Ok(())
}

/// Reads the `bits`-bit element at `p` (lane moved by `shift`) of the operand whose
/// first register is `first`.
fn element(w: &Wave, (first, acc): (u16, bool), p: P, shift: u32, bits: u32) -> Result<u64, Trap> {
    let base = u32::from(first) + if acc { w.place.acc_base } else { 0 } + u32::from(p.0);
    let lane = (u32::from(p.1) + shift) as usize;
    if lane >= 64 {
        return Err(Trap::refused("a matrix element past lane 63".to_string()));
    }
    let reg = |r: u32| w.vread_lane64(256 + r as u16, lane, None);
    let lo = u64::from(reg(base)?);
    let v = if bits == 64 {
        lo | u64::from(reg(base + 1)?) << 32
    } else {
        lo
    };
    Ok(if bits >= 32 { v } else { (v >> p.2) & ((1 << bits) - 1) })
}

/// An input element as f64 (floats) or its integer value.
fn value(ty: Ty, raw: u64) -> f64 {
    match ty {
        Ty::F32 | Ty::Xf32 => f64::from(f32::from_bits(raw as u32)),
        Ty::F16 => f64::from(crate::float::half::to_f32(raw as u16)),
        Ty::Bf16 => f64::from(f32::from_bits((raw as u32) << 16)),
        Ty::I8 => f64::from(raw as u8 as i8),
        Ty::F64 => f64::from_bits(raw),
        Ty::Fp8 => f64::from(Fp8::E4m3Fnuz.to_f32(raw as u8)),
        Ty::Bf8 => f64::from(Fp8::E5m2Fnuz.to_f32(raw as u8)),
        // Not an input type.
        Ty::I32 => 0.0,
    }
}

/// Runs `x` on all 64 lanes of `w`.
pub(crate) fn run(w: &mut Wave, x: &MfmaOp) -> Result<(), Trap> {
    let t = x.table;
    let (m, n, k) = (t.m, t.n, t.k);
    let (ab, bb, ob) = (t.a_ty.bits(), t.b_ty.bits(), t.out.bits());
    let mut out: Vec<(P, u32, u64)> = Vec::with_capacity((t.blocks * m * n) as usize);
    // C given as a constant is the same for every element: read once.
    enum C {
        Regs(u16, bool),
        Value(u64),
    }
    let c_src = match x.c {
        Src2::Const(op) => C::Value(constant(w, op, t.out)?),
        Src2::Reg(first, acc) => C::Regs(first, acc),
    };
    for blk in 0..t.blocks {
        let a_row = &t.a[(blk * k) as usize..((blk + 1) * k) as usize];
        let b_col = &t.b[(blk * k) as usize..((blk + 1) * k) as usize];
        // A's rows and B's columns of this block, read once.
        let mut a = vec![0u64; (m * k) as usize];
        for r in 0..m {
            for (kk, &p) in a_row.iter().enumerate() {
                a[(r * k) as usize + kk] = element(w, x.a, p, r, ab)?;
            }
        }
        let mut b = vec![0u64; (n * k) as usize];
        for c in 0..n {
            for (kk, &p) in b_col.iter().enumerate() {
                b[(c * k) as usize + kk] = element(w, x.b, p, c, bb)?;
            }
        }
        for r in 0..m {
            let p = t.cd[(blk * m + r) as usize];
            for c in 0..n {
                // C's element in registers, or the constant.
                let acc = match c_src {
                    C::Regs(first, acc) => element(w, (first, acc), p, c, ob)?,
                    C::Value(value) => value,
                };
                let ar = &a[(r * k) as usize..((r + 1) * k) as usize];
                let bc = &b[(c * k) as usize..((c + 1) * k) as usize];
                let d = match t.out {
                    Ty::I32 => {
                        let s = ar.iter().zip(bc).fold(acc as u32 as i32, |s, (&x, &y)| {
                            s.wrapping_add(i32::from(x as u8 as i8).wrapping_mul(i32::from(y as u8 as i8)))
                        });
                        u64::from(s as u32)
                    }
                    Ty::F64 => {
                        let s = ar.iter().zip(bc).fold(f64::from_bits(acc), |s, (&x, &y)| {
                            f64::from_bits(x).mul_add(f64::from_bits(y), s)
                        });
                        s.to_bits()
                    }
                    _ => {
                        let dot: f64 = ar
                            .iter()
                            .zip(bc)
                            .map(|(&x, &y)| value(t.a_ty, x) * value(t.b_ty, y))
                            .sum();
                        u64::from(((dot + f64::from(f32::from_bits(acc as u32))) as f32).to_bits())
                    }
                };
                out.push((p, c, d));
            }
        }
    }
    // D is written after every source is read: it may overlap C (or A and B).
    let base = u32::from(x.d.0) + if x.d.1 { w.place.acc_base } else { 0 };
    for (p, c, d) in out {
        let lane = (u32::from(p.1) + c) as usize;
        let r = (base + u32::from(p.0)) as usize;
        w.vwrite_lane64(r, lane, d as u32)?;
        if ob == 64 {
            w.vwrite_lane64(r + 1, lane, (d >> 32) as u32)?;
        }
    }
    Ok(())
}

/// C given as a constant (an inline constant or an SGPR), in the output's type.
fn constant(w: &Wave, op: u16, out: Ty) -> Result<u64, Trap> {
    match out {
        Ty::F64 => w.sread64(op, None),
        _ => w.sread(op, None).map(u64::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Words;
    use crate::rdna3::{Frontend, Step};

    /// The encoding `llvm-mc-19 --mcpu=gfx942` gives `v_mfma_f32_16x16x16_f16
    /// v[32:35], v[0:1], v[8:9], v[16:19]`, built from the fields.
    #[test]
    fn encodes_as_llvm_does() {
        let t = all().iter().find(|m| m.name == "v_mfma_f32_16x16x16_f16").unwrap();
        assert_eq!(
            encode(77, (0, false), (8, false), Some((16, false)), (32, false)),
            [0xd3cd_0020, 0x0442_1100]
        );
        // A[m][k] of 16x16x16: lane m + 16·(k / 4), register (k % 4) / 2, bits 16·(k % 2)
        // (AMD's calculator's table, as the generator read it).
        for (k, p) in t.a.iter().enumerate() {
            assert_eq!(*p, P((k % 4 / 2) as u8, (16 * (k / 4)) as u8, (16 * (k % 2)) as u8));
        }
        // D[m][n] of 32x32x8: lane n + 32·((m / 4) % 2), register 4·(m / 8) + m % 4.
        let t = all().iter().find(|m| m.name == "v_mfma_f32_32x32x8_f16").unwrap();
        for (m, p) in t.cd.iter().enumerate() {
            assert_eq!(*p, P((4 * (m / 8) + m % 4) as u8, (32 * ((m / 4) % 2)) as u8, 0));
        }
    }

    fn encode(op: u16, a: (u16, bool), b: (u16, bool), c: Option<(u16, bool)>, d: (u16, bool)) -> [u32; 2] {
        use fc::vop3p_mfma as f;
        let mut r: Words = [0; 3];
        f::ENCODING.bits.put(&mut r, f::ENCODING.value);
        f::OP.put(&mut r, u32::from(op));
        f::VDST.0.put(&mut r, u32::from(d.0));
        f::SRC0.0.put(&mut r, 256 + u32::from(a.0));
        f::SRC1.0.put(&mut r, 256 + u32::from(b.0));
        // No C: the inline constant 0.
        f::SRC2.0.put(&mut r, c.map_or(128, |c| 256 + u32::from(c.0)));
        f::ACC.put(&mut r, u32::from(a.1) | u32::from(b.1) << 1);
        f::ACC_CD.put(&mut r, u32::from(d.1));
        [r[0], r[1]]
    }

    /// Writes `v` at element place `p` (lane moved by `shift`) of the operand at `first`.
    fn put(w: &mut Wave, first: u32, p: P, shift: u32, bits: u32, v: u64) {
        let lane = (u32::from(p.1) + shift) as usize;
        let r = (first + u32::from(p.0)) as usize;
        let old = w.vread_lane64(256 + r as u16, lane, None).unwrap();
        let word = if bits >= 32 {
            v as u32
        } else {
            let mask = ((1u32 << bits) - 1) << p.2;
            (old & !mask) | ((v as u32) << p.2 & mask)
        };
        w.vwrite_lane64(r, lane, word).unwrap();
        if bits == 64 {
            w.vwrite_lane64(r + 1, lane, (v >> 32) as u32).unwrap();
        }
    }

    /// A small integer as the element type's bits.
    fn bits_of(ty: Ty, v: i32) -> u64 {
        match ty {
            Ty::F32 => u64::from((v as f32).to_bits()),
            Ty::F16 => u64::from(crate::float::half::from_f64(f64::from(v))),
            Ty::Bf16 => u64::from((v as f32).to_bits() >> 16),
            Ty::I8 => u64::from(v as i8 as u8),
            Ty::I32 => u64::from(v as u32),
            Ty::F64 => (v as f64).to_bits(),
            Ty::Fp8 => u64::from(Fp8::E4m3Fnuz.encode(v as f32)),
            Ty::Bf8 => u64::from(Fp8::E5m2Fnuz.encode(v as f32)),
            Ty::Xf32 => unreachable!("not run"),
        }
    }

    /// Every MFMA the interpreter runs (f16, bf16, f32, i8, f64 and gfx942's FP8/BF8
    /// forms, blocked ones too), its matrices placed by AMD's table in VGPRs or AccVGPRs, computes D = A × B
    /// + C on small integers (exact in every type), C in place of D or apart.
    #[test]
    fn every_mfma_multiplies_its_blocks() {
        let mut next = crate::rdna3::testing::xorshift32(0x5eed_1234);
        let mut ran = 0;
        for t in all() {
            let Some(op) = (0..128).find(|&op| by_opcode(op).is_some_and(|m| m.name == t.name)) else {
                panic!("{}: no opcode", t.name)
            };
            if t.a_ty == Ty::Xf32 {
                continue;
            }
            for (acc, in_place) in [(false, false), (true, true)] {
                let mut w = Wave::new(256, 0);
                w.wave64 = true;
                w.v_other.resize(w.v.len(), crate::rdna3::VgprRow::default());
                w.place.acc_base = 128;
                let (ab, bb, ob) = (t.a_ty.bits(), t.b_ty.bits(), t.out.bits());
                let (m, n, k) = (t.m, t.n, t.k);
                let small = |next: &mut dyn FnMut() -> u32| (next() % 7) as i32 - 3;
                let (a_at, b_at, c_at) = (0u32, 16u32, 32u32);
                let d_at = if in_place { c_at } else { 80 };
                let file = |at: u32, in_acc: bool| at + if in_acc { 128 } else { 0 };
                let mut want = Vec::new();
                for blk in 0..t.blocks {
                    let av: Vec<i32> = (0..m * k).map(|_| small(&mut next)).collect();
                    let bv: Vec<i32> = (0..k * n).map(|_| small(&mut next)).collect();
                    let cv: Vec<i32> = (0..m * n).map(|_| small(&mut next)).collect();
                    // A's rows and B's columns, each line along k from its place in
                    // the table, the lane moved by the line.
                    let along_k = &t.a[(blk * k) as usize..((blk + 1) * k) as usize];
                    let b_along_k = &t.b[(blk * k) as usize..((blk + 1) * k) as usize];
                    let a_value: &dyn Fn(u32, u32) -> i32 = &|r, kk| av[(r * k + kk) as usize];
                    let b_value: &dyn Fn(u32, u32) -> i32 = &|c, kk| bv[(kk * n + c) as usize];
                    for (places, first, lines, bits, ty, at) in [
                        (along_k, file(a_at, acc), m, ab, t.a_ty, a_value),
                        (b_along_k, file(b_at, false), n, bb, t.b_ty, b_value),
                    ] {
                        for line in 0..lines {
                            for (kk, &p) in places.iter().enumerate() {
                                put(&mut w, first, p, line, bits, bits_of(ty, at(line, kk as u32)));
                            }
                        }
                    }
                    for r in 0..m {
                        for c in 0..n {
                            let p = t.cd[(blk * m + r) as usize];
                            put(
                                &mut w,
                                file(c_at, acc),
                                p,
                                c,
                                ob,
                                bits_of(t.out, cv[(r * n + c) as usize]),
                            );
                            let dot: i32 = (0..k)
                                .map(|kk| av[(r * k + kk) as usize] * bv[(kk * n + c) as usize])
                                .sum();
                            want.push((p, c, bits_of(t.out, dot + cv[(r * n + c) as usize])));
                        }
                    }
                }
                let words = encode(
                    op,
                    (a_at as u16, acc),
                    (b_at as u16, false),
                    Some((c_at as u16, acc)),
                    (d_at as u16, acc),
                );
                let d = super::super::exec::Cdna3::decode(&words).unwrap();
                d.run(&mut w, &crate::memory::SliceMemory::new(), &mut [])
                    .unwrap_or_else(|e| panic!("{}: {e}", t.name));
                for (p, c, v) in want {
                    let got = element(&w, (d_at as u16, acc), p, c, ob).unwrap();
                    assert_eq!(got, v, "{} (acc {acc}): D at {p:?} column {c}", t.name);
                }
                ran += 1;
            }
        }
        // Every form but the two XF32 ones, twice.
        assert_eq!(ran, 2 * (all().len() - 2), "runs");
    }

    /// Every SMFMAC (f16, bf16, i8 and the FP8/BF8 forms), its matrices placed by AMD's
    /// table (A's stored pairs and their 4-bit indices, two distinct k of each group of
    /// four, in random order), computes D = A × B + D on small integers against the dense
    /// product of the A the index describes; A in AccVGPRs or not.
    #[test]
    fn every_smfmac_multiplies_its_sparse_a() {
        let mut next = crate::rdna3::testing::xorshift32(0x5a5e_0042);
        let mut ran = 0;
        for t in generated::SMFMAC {
            let op = (0..128)
                .find(|&op| sparse_by_opcode(op).is_some_and(|m| m.name == t.name))
                .unwrap_or_else(|| panic!("{}: no opcode", t.name));
            for acc in [false, true] {
                let mut w = Wave::new(256, 0);
                w.wave64 = true;
                w.v_other.resize(w.v.len(), crate::rdna3::VgprRow::default());
                w.place.acc_base = 128;
                let (ab, bb) = (t.a_ty.bits(), t.b_ty.bits());
                let (m, n, k) = (t.m, t.n, t.k);
                let small = |next: &mut dyn FnMut() -> u32| (next() % 7) as i32 - 3;
                let (a_at, b_at, i_at, d_at) = (0u32, 16u32, 40u32, 48u32);
                let a_first = a_at + if acc { 128 } else { 0 };
                // The dense A the pairs and indices describe.
                let mut dense = vec![0i32; (m * k) as usize];
                for r in 0..m {
                    for (g, (&pa, &pi)) in t.a.iter().zip(t.idx).enumerate() {
                        let first = next() % 4;
                        let second = (first + 1 + next() % 3) % 4;
                        put(&mut w, i_at, pi, r, 4, u64::from(first | second << 2));
                        for (v, pos) in [first, second].into_iter().enumerate() {
                            let x = small(&mut next);
                            dense[(r * k) as usize + 4 * g + pos as usize] = x;
                            let place = P(pa.0, pa.1, pa.2 + (v as u32 * ab) as u8);
                            put(&mut w, a_first, place, r, ab, bits_of(t.a_ty, x));
                        }
                    }
                }
                let bv: Vec<i32> = (0..k * n).map(|_| small(&mut next)).collect();
                for c in 0..n {
                    for (kk, &p) in t.b.iter().enumerate() {
                        put(
                            &mut w,
                            b_at,
                            p,
                            c,
                            bb,
                            bits_of(t.b_ty, bv[(kk as u32 * n + c) as usize]),
                        );
                    }
                }
                let mut want = Vec::new();
                for r in 0..m {
                    let p = t.cd[r as usize];
                    for c in 0..n {
                        let cv = small(&mut next);
                        put(&mut w, d_at, p, c, 32, bits_of(t.out, cv));
                        let dot: i32 = (0..k)
                            .map(|kk| dense[(r * k + kk) as usize] * bv[(kk * n + c) as usize])
                            .sum();
                        want.push((p, c, bits_of(t.out, dot + cv)));
                    }
                }
                let [w0, w1] = encode(op, (a_at as u16, acc), (b_at as u16, false), None, (d_at as u16, false));
                let mut words: Words = [w0, w1, 0];
                fc::vop3p_mfma::SRC2.0.put(&mut words, 256 + i_at);
                let words = [words[0], words[1]];
                let d = super::super::exec::Cdna3::decode(&words).unwrap();
                d.run(&mut w, &crate::memory::SliceMemory::new(), &mut [])
                    .unwrap_or_else(|e| panic!("{}: {e}", t.name));
                for (p, c, v) in want {
                    let got = element(&w, (d_at as u16, false), p, c, 32).unwrap();
                    assert_eq!(got, v, "{} (acc {acc}): D at {p:?} column {c}", t.name);
                }
                ran += 1;
            }
        }
        assert_eq!(ran, 2 * 14, "gfx942's 14 SMFMAC forms, twice");
    }
}

#[cfg(test)]
mod hostile {
    use super::*;
    use crate::rdna3::{Frontend, Step};

    /// MFMA words with random operand fields (registers past the wave's, constants,
    /// broadcast controls, AccVGPR bits) on a wave of few VGPRs decode, and run or stop
    /// with an error: never a panic.
    #[test]
    fn random_matrix_words_run_or_stop_with_an_error() {
        let mut next = crate::rdna3::testing::xorshift64(0x4d46_4d41_2024);
        let ops: Vec<u16> = (0..128)
            .filter(|&op| by_opcode(op).is_some() || sparse_by_opcode(op).is_some())
            .collect();
        let (mut ran, mut stopped) = (0, 0);
        for _ in 0..4000 {
            let x = next();
            let op = ops[(x % ops.len() as u64) as usize];
            let mut words = [
                0xd380_0000 | u32::from(op) << 16 | (x >> 8) as u32 & 0xffff,
                (x >> 32) as u32,
            ];
            if x >> 1 & 1 == 0 {
                // Half the words without broadcast controls, A and B in registers.
                words[0] &= !(0x7f << 8);
                words[1] = (words[1] & !(7 << 29)) | 1 << 8 | 1 << 17;
            }
            let Ok(d) = super::super::exec::Cdna3::decode(&words) else {
                continue;
            };
            let mut w = Wave::new(if x & 1 == 0 { 16 } else { 256 }, 0);
            w.wave64 = true;
            w.v_other.resize(w.v.len(), crate::rdna3::VgprRow::default());
            w.place.acc_base = (x >> 60) as u32 * 16;
            match d.run(&mut w, &crate::memory::SliceMemory::new(), &mut []) {
                Ok(_) => ran += 1,
                Err(_) => stopped += 1,
            }
        }
        assert!(ran > 100 && stopped > 100, "{ran} ran, {stopped} stopped");
    }
}
