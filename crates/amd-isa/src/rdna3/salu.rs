//! The scalar ALU and scalar memory (SOP1, SOP2, SOPK, SOPC, SMEM), matched by the
//! ISA's names (`opcodes`). Program control (SOPP, calls and jumps through registers)
//! is in `control`.

use super::decode::Inst;
use super::exec::{Flow, R};
use super::fields as fld;
use super::opcodes::{Smem, Sop1, Sop2, Sopc, Sopk};
use super::wave::{EXEC_LO, M0, NULL, SGPRS, Wave};
use crate::error::Trap;
use crate::memory::Memory;

/// Message ids of `s_sendmsg` and `s_sendmsg_rtn_*` on gfx11, named as the assembler
/// spells them (`sendmsg(MSG_RTN_GET_REALTIME)`).
pub(crate) mod msg {
    pub(crate) const MSG_INTERRUPT: u32 = 1;
    pub(crate) const MSG_HS_TESSFACTOR: u32 = 2;
    pub(crate) const MSG_DEALLOC_VGPRS: u32 = 3;
    pub(crate) const MSG_RTN_GET_DOORBELL: u32 = 128;
    pub(crate) const MSG_RTN_GET_DDID: u32 = 129;
    pub(crate) const MSG_RTN_GET_TMA: u32 = 130;
    pub(crate) const MSG_RTN_GET_REALTIME: u32 = 131;
    pub(crate) const MSG_RTN_SAVE_WAVE: u32 = 132;
    pub(crate) const MSG_RTN_GET_TBA: u32 = 133;
}

pub(crate) fn missing(i: &Inst, name: &str) -> Trap {
    Trap::missing(format!("{:?} opcode {:#x} ({name}) is not implemented", i.enc, i.op))
}

/// Each 4-bit group of `x` → one bit, set where any bit of the group is.
fn quadmask(x: u64, groups: u32) -> u64 {
    (0..groups).fold(0, |m, g| m | (((x >> (4 * g)) & 0xf != 0) as u64) << g)
}

/// Each 4-bit group of `x` all set where any bit of it is (whole quad mode).
fn wqm(x: u64, groups: u32) -> u64 {
    (0..groups).fold(0, |m, g| {
        if (x >> (4 * g)) & 0xf != 0 {
            m | 0xf << (4 * g)
        } else {
            m
        }
    })
}

/// Leading bits equal to the sign, not counting it; -1 (all ones) for 0 and -1.
fn cls64(x: u64) -> u32 {
    match x {
        0 | u64::MAX => u32::MAX,
        _ if (x as i64) < 0 => x.leading_ones(),
        _ => x.leading_zeros(),
    }
}

/// The scalar comparison `k` of `a` with `b` (0 eq, 1 lg, 2 gt, 3 ge, 4 lt, 5 le),
/// as signed or unsigned integers.
fn compare(k: u16, a: u32, b: u32, signed: bool) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let o = if signed { (a as i32).cmp(&(b as i32)) } else { a.cmp(&b) };
    match k {
        0 => o == Equal,
        1 => o != Equal,
        2 => o == Greater,
        3 => o != Less,
        4 => o == Less,
        _ => o != Greater,
    }
}

/// SOP1: moves, counts, EXEC forms, calls and returns, and the rest.
pub(crate) fn sop1(w: &mut Wave, i: &Inst) -> R<Flow> {
    let Some(a) = Sop1Args::of(i) else {
        return Err(missing(i, "no such opcode"));
    };
    sop1_run(w, i, a)
}

/// A SOP1 instruction's opcode and operands, decoded once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sop1Args {
    op: Sop1,
    /// SDST, as a scalar register index.
    d: usize,
    /// SSRC0, as an operand number.
    s: u16,
}

impl Sop1Args {
    /// `i`'s opcode and operands when it is a SOP1 instruction with a known opcode.
    pub(crate) fn of(i: &Inst) -> Option<Sop1Args> {
        if i.enc != super::decode::Encoding::Sop1 {
            return None;
        }
        let iw = i.words();
        Some(Sop1Args {
            op: Sop1::from_op(i.op)?,
            d: fld::sop1::SDST.index(&iw),
            s: fld::sop1::SSRC0.operand(&iw),
        })
    }
}

/// Runs the SOP1 instruction `i` whose opcode and operands are `a`.
pub(crate) fn sop1_run(w: &mut Wave, i: &Inst, a: Sop1Args) -> R<Flow> {
    use Sop1::*;
    let Sop1Args { op, d, s } = a;
    if let S_GETPC_B64 | S_SETPC_B64 | S_SWAPPC_B64 = op {
        return super::control::pc(w, op, d, s);
    }
    let x = w.sread(s, i.literal)?;
    let exec = w.exec();
    let saveexec = |w: &mut Wave, new: u32| -> R<()> {
        w.swrite(d, exec)?;
        w.s[EXEC_LO] = new;
        w.scc = new != 0;
        Ok(())
    };
    let counted = |w: &mut Wave, c: u32| -> R<()> {
        w.scc = c != 0;
        w.swrite(d, c)
    };
    match op {
        S_MOV_B32 => w.swrite(d, x),
        S_MOV_B64 => {
            let v = w.sread64(s, i.literal)?;
            w.swrite64(d, v)
        }
        S_CMOV_B32 => {
            if w.scc {
                w.swrite(d, x)?;
            }
            Ok(())
        }
        S_BREV_B32 => w.swrite(d, x.reverse_bits()),
        S_CTZ_I32_B32 => w.swrite(d, if x == 0 { u32::MAX } else { x.trailing_zeros() }),
        S_CLZ_I32_U32 => w.swrite(d, if x == 0 { u32::MAX } else { x.leading_zeros() }),
        // Leading bits equal to the sign, the sign bit included; -1 for 0 and -1.
        S_CLS_I32 => w.swrite(
            d,
            match x {
                0 | u32::MAX => u32::MAX,
                _ if (x as i32) < 0 => x.leading_ones(),
                _ => x.leading_zeros(),
            },
        ),
        S_SEXT_I32_I8 => w.swrite(d, x as i8 as i32 as u32),
        S_SEXT_I32_I16 => w.swrite(d, x as i16 as i32 as u32),
        S_BITSET0_B32 | S_BITSET1_B32 => {
            let old = w.sread(d as u16, None)?;
            let bit = 1u32 << (x & 31);
            w.swrite(d, if op == S_BITSET0_B32 { old & !bit } else { old | bit })
        }
        S_ABS_I32 => counted(w, (x as i32).unsigned_abs()),
        S_BCNT0_I32_B32 => counted(w, x.count_zeros()),
        S_BCNT1_I32_B32 => counted(w, x.count_ones()),
        S_NOT_B32 => counted(w, !x),
        S_AND_SAVEEXEC_B32 => saveexec(w, x & exec),
        S_OR_SAVEEXEC_B32 => saveexec(w, x | exec),
        S_XOR_SAVEEXEC_B32 => saveexec(w, x ^ exec),
        S_NAND_SAVEEXEC_B32 => saveexec(w, !(x & exec)),
        S_NOR_SAVEEXEC_B32 => saveexec(w, !(x | exec)),
        S_XNOR_SAVEEXEC_B32 => saveexec(w, !(x ^ exec)),
        S_AND_NOT0_SAVEEXEC_B32 => saveexec(w, !x & exec),
        S_OR_NOT0_SAVEEXEC_B32 => saveexec(w, !x | exec),
        S_AND_NOT1_SAVEEXEC_B32 => saveexec(w, x & !exec),
        S_OR_NOT1_SAVEEXEC_B32 => saveexec(w, x | !exec),
        // EXEC and the destination both get the result.
        S_AND_NOT0_WREXEC_B32 | S_AND_NOT1_WREXEC_B32 => {
            let new = if op == S_AND_NOT0_WREXEC_B32 {
                !x & exec
            } else {
                x & !exec
            };
            w.s[EXEC_LO] = new;
            w.scc = new != 0;
            w.swrite(d, new)
        }
        _ => sop1_rest(w, i, d, s),
    }
    .map(|_| Flow::Next)
}

/// SOP2: 32- and 64-bit arithmetic, logic, shifts, bit fields, multiplies, selects and
/// packs.
pub(crate) fn sop2(w: &mut Wave, i: &Inst) -> R<()> {
    match Sop2Args::of(i) {
        Some(a) => sop2_run(w, i, a),
        None => Err(missing(i, "no such opcode")),
    }
}

/// A SOP2 instruction's opcode and operands, decoded once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sop2Args {
    op: Sop2,
    d: usize,
    s0: u16,
    s1: u16,
}

impl Sop2Args {
    /// `i`'s opcode and operands, when it is a SOP2 instruction the ISA has.
    pub(crate) fn of(i: &Inst) -> Option<Sop2Args> {
        if i.enc != super::decode::Encoding::Sop2 {
            return None;
        }
        let iw = i.words();
        Some(Sop2Args {
            op: Sop2::from_op(i.op)?,
            d: fld::sop2::SDST.index(&iw),
            s0: fld::sop2::SSRC0.operand(&iw),
            s1: fld::sop2::SSRC1.operand(&iw),
        })
    }
}

/// Runs SOP2 instruction `i`, decoded as `a`.
pub(crate) fn sop2_run(w: &mut Wave, i: &Inst, a: Sop2Args) -> R<()> {
    use Sop2::*;
    let Sop2Args { op, d, s0, s1 } = a;
    let lit = i.literal;
    // The 64-bit forms (S1 32-bit for shifts, bit-field extracts and masks).
    let wide = match op {
        S_BFM_B64 => {
            let (width, shift) = (w.sread(s0, lit)? & 63, w.sread(s1, lit)? & 63);
            return w.swrite64(d, ((1u64 << width) - 1) << shift);
        }
        S_CSELECT_B64 => {
            let v = if w.scc {
                w.sread64(s0, lit)?
            } else {
                w.sread64(s1, lit)?
            };
            return w.swrite64(d, v);
        }
        S_LSHL_B64 => Some(w.sread64(s0, lit)? << (w.sread(s1, lit)? & 63)),
        S_LSHR_B64 => Some(w.sread64(s0, lit)? >> (w.sread(s1, lit)? & 63)),
        S_ASHR_I64 => Some(((w.sread64(s0, lit)? as i64) >> (w.sread(s1, lit)? & 63)) as u64),
        S_BFE_U64 | S_BFE_I64 => {
            let (a, c) = (w.sread64(s0, lit)?, w.sread(s1, lit)?);
            let (off, width) = (c & 63, (c >> 16) & 0x7f);
            Some(if width == 0 {
                0
            } else {
                let width = width.min(64);
                let v = a >> off;
                let v = if width == 64 { v } else { v & ((1u64 << width) - 1) };
                if op == S_BFE_I64 && width < 64 && v >> (width - 1) & 1 != 0 {
                    v | !((1u64 << width) - 1)
                } else {
                    v
                }
            })
        }
        S_AND_B64 | S_OR_B64 | S_XOR_B64 | S_NAND_B64 | S_NOR_B64 | S_XNOR_B64 | S_AND_NOT1_B64 | S_OR_NOT1_B64 => {
            let (a, b) = (w.sread64(s0, lit)?, w.sread64(s1, lit)?);
            Some(match op {
                S_AND_B64 => a & b,
                S_OR_B64 => a | b,
                S_XOR_B64 => a ^ b,
                S_NAND_B64 => !(a & b),
                S_NOR_B64 => !(a | b),
                S_XNOR_B64 => !(a ^ b),
                S_AND_NOT1_B64 => a & !b,
                _ => a | !b,
            })
        }
        _ => None,
    };
    if let Some(r) = wide {
        // SCC = result != 0.
        w.scc = r != 0;
        return w.swrite64(d, r);
    }
    let (a, b) = (w.sread(s0, lit)?, w.sread(s1, lit)?);
    // Logic, shifts and bit-field extracts set SCC = result != 0.
    let nonzero = |w: &mut Wave, r: u32| {
        w.scc = r != 0;
        r
    };
    let r = match op {
        S_ADD_U32 => {
            let (r, c) = a.overflowing_add(b);
            w.scc = c;
            r
        }
        S_SUB_U32 => {
            let (r, c) = a.overflowing_sub(b);
            w.scc = c;
            r
        }
        S_ADD_I32 => {
            let (r, o) = (a as i32).overflowing_add(b as i32);
            w.scc = o;
            r as u32
        }
        S_SUB_I32 => {
            let (r, o) = (a as i32).overflowing_sub(b as i32);
            w.scc = o;
            r as u32
        }
        S_ADDC_U32 => {
            let r = a as u64 + b as u64 + w.scc as u64;
            w.scc = r >> 32 != 0;
            r as u32
        }
        S_SUBB_U32 => {
            let need = b as u64 + w.scc as u64;
            w.scc = need > a as u64;
            (a as u64).wrapping_sub(need) as u32
        }
        // The difference wraps in 32 bits before its absolute value is taken.
        S_ABSDIFF_I32 => nonzero(w, (a as i32).wrapping_sub(b as i32).wrapping_abs() as u32),
        // SCC: the 64-bit sum of the shifted S0 and S1 does not fit 32 bits.
        S_LSHL1_ADD_U32 | S_LSHL2_ADD_U32 | S_LSHL3_ADD_U32 | S_LSHL4_ADD_U32 => {
            let sum = (u64::from(a) << (op as u16 - S_LSHL1_ADD_U32 as u16 + 1)) + u64::from(b);
            w.scc = sum >> 32 != 0;
            sum as u32
        }
        S_NAND_B32 => nonzero(w, !(a & b)),
        S_NOR_B32 => nonzero(w, !(a | b)),
        S_XNOR_B32 => nonzero(w, !(a ^ b)),
        S_OR_NOT1_B32 => nonzero(w, a | !b),
        S_LSHL_B32 => nonzero(w, a << (b & 31)),
        S_LSHR_B32 => nonzero(w, a >> (b & 31)),
        S_ASHR_I32 => nonzero(w, ((a as i32) >> (b & 31)) as u32),
        S_AND_B32 => nonzero(w, a & b),
        S_OR_B32 => nonzero(w, a | b),
        S_XOR_B32 => nonzero(w, a ^ b),
        S_AND_NOT1_B32 => nonzero(w, a & !b),
        // SCC: S0 is the one chosen (S0 < S1 for min, S0 > S1 for max).
        S_MIN_I32 => {
            w.scc = (a as i32) < (b as i32);
            (a as i32).min(b as i32) as u32
        }
        S_MIN_U32 => {
            w.scc = a < b;
            a.min(b)
        }
        S_MAX_I32 => {
            w.scc = (a as i32) > (b as i32);
            (a as i32).max(b as i32) as u32
        }
        S_MAX_U32 => {
            w.scc = a > b;
            a.max(b)
        }
        S_BFE_U32 => {
            let (off, width) = (b & 31, (b >> 16) & 0x7f);
            let r = if width == 0 {
                0
            } else {
                (a >> off) & ((1u64 << width.min(32)) - 1) as u32
            };
            nonzero(w, r)
        }
        S_BFE_I32 => {
            let (off, width) = (b & 31, (b >> 16) & 0x7f);
            let r = if width == 0 {
                0
            } else {
                let width = width.min(32);
                (((a >> off) << (32 - width)) as i32 >> (32 - width)) as u32
            };
            nonzero(w, r)
        }
        // A mask of S0 bits at S1.
        S_BFM_B32 => (((1u64 << (a & 31)) - 1) << (b & 31)) as u32,
        S_MUL_I32 => a.wrapping_mul(b),
        S_MUL_HI_U32 => ((a as u64 * b as u64) >> 32) as u32,
        S_MUL_HI_I32 => (((a as i32 as i64) * (b as i32 as i64)) >> 32) as u32,
        S_CSELECT_B32 => {
            if w.scc {
                a
            } else {
                b
            }
        }
        S_PACK_LL_B32_B16 => (a & 0xffff) | b << 16,
        S_PACK_LH_B32_B16 => (a & 0xffff) | (b & 0xffff_0000),
        S_PACK_HH_B32_B16 => a >> 16 | (b & 0xffff_0000),
        // The high half of S0 low, the low half of S1 high.
        S_PACK_HL_B32_B16 => a >> 16 | b << 16,
        other => return Err(missing(i, other.name())),
    };
    w.swrite(d, r)
}

/// SOPK: 16-bit constants, their compares and adds, hardware registers, calls.
pub(crate) fn sopk(w: &mut Wave, i: &Inst) -> R<Flow> {
    use Sopk::*;
    let iw = i.words();
    let d = fld::sopk::SDST.index(&iw);
    let simm = fld::sopk::SIMM16.get(&iw) as u16;
    let sext = simm as i16 as i32;
    let cur = w.s[d.min(127)];
    let Some(op) = Sopk::from_op(i.op) else {
        return Err(missing(i, "no such opcode"));
    };
    match op {
        S_CALL_B64 => return super::control::call(w, i),
        // The hardware registers (`hwreg`).
        S_GETREG_B32 => {
            let v = super::hwreg::getreg(
                w,
                super::hwreg::Field::from_simm16(simm),
                super::hwreg::Regs::Gfx11,
                realtime,
            )?;
            w.swrite(d, v)?;
        }
        S_SETREG_B32 | S_SETREG_IMM32_B32 => {
            let v = if op == S_SETREG_B32 {
                cur
            } else {
                i.literal.ok_or("s_setreg_imm32 without its literal")?
            };
            super::hwreg::setreg(
                w,
                super::hwreg::Field::from_simm16(simm),
                v,
                op.name(),
                super::hwreg::Regs::Gfx11,
            )?;
        }
        S_MOVK_I32 => w.swrite(d, sext as u32)?,
        // Signed against the sign-extended constant, then unsigned.
        S_CMPK_EQ_I32 | S_CMPK_LG_I32 | S_CMPK_GT_I32 | S_CMPK_GE_I32 | S_CMPK_LT_I32 | S_CMPK_LE_I32
        | S_CMPK_EQ_U32 | S_CMPK_LG_U32 | S_CMPK_GT_U32 | S_CMPK_GE_U32 | S_CMPK_LT_U32 | S_CMPK_LE_U32 => {
            let k = op as u16 - S_CMPK_EQ_I32 as u16;
            let signed = k < 6;
            let b = if signed { sext as u32 } else { simm as u32 };
            w.scc = compare(k % 6, cur, b, signed);
        }
        S_ADDK_I32 => {
            let (r, o) = (cur as i32).overflowing_add(sext);
            w.scc = o;
            w.swrite(d, r as u32)?;
        }
        S_MULK_I32 => w.swrite(d, (cur as i32).wrapping_mul(sext) as u32)?,
        // A scheduling hint.
        S_WAITCNT_VSCNT => {}
        _ => sopk_rest(w, i, d, simm)?,
    }
    Ok(Flow::Next)
}

/// SOPC: 32-bit compares, then bit tests and 64-bit equality.
pub(crate) fn sopc(w: &mut Wave, i: &Inst) -> R<()> {
    match ScalarCompare::of(i) {
        Some(c) => c.run(w, i.literal),
        None => sopc_rest(w, i),
    }
}

/// The 32-bit integer `s_cmp_*` of SOPC, decoded once: the predicate (as [`compare`]
/// takes it), signedness and sources.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScalarCompare {
    k: u16,
    signed: bool,
    s0: u16,
    s1: u16,
}

impl ScalarCompare {
    /// `i` as one, when it is one.
    pub(crate) fn of(i: &Inst) -> Option<ScalarCompare> {
        use Sopc::*;
        if i.enc != super::decode::Encoding::Sopc {
            return None;
        }
        let op = match Sopc::from_op(i.op)? {
            op @ (S_CMP_EQ_I32 | S_CMP_LG_I32 | S_CMP_GT_I32 | S_CMP_GE_I32 | S_CMP_LT_I32 | S_CMP_LE_I32
            | S_CMP_EQ_U32 | S_CMP_LG_U32 | S_CMP_GT_U32 | S_CMP_GE_U32 | S_CMP_LT_U32 | S_CMP_LE_U32) => op,
            _ => return None,
        };
        let iw = i.words();
        let k = op as u16 - S_CMP_EQ_I32 as u16;
        Some(ScalarCompare {
            k: k % 6,
            signed: k < 6,
            s0: fld::sopc::SSRC0.operand(&iw),
            s1: fld::sopc::SSRC1.operand(&iw),
        })
    }

    /// Sets SCC to the comparison (`lit`: the instruction's literal).
    pub(crate) fn run(&self, w: &mut Wave, lit: Option<u32>) -> R<()> {
        let (a, b) = (w.sread(self.s0, lit)?, w.sread(self.s1, lit)?);
        w.scc = compare(self.k, a, b, self.signed);
        Ok(())
    }
}

/// SMEM: scalar loads, buffer loads and cache controls.
pub(crate) fn smem(w: &mut Wave, i: &Inst, mem: &dyn Memory) -> R<()> {
    match scalar_load_of(i) {
        Some(load) => scalar_load(w, &load, mem),
        None => smem_rest(w, i, mem),
    }
}

/// An SMEM `s_load_b*`'s load, for running it decoded once ([`scalar_load`]); `None`
/// for anything else.
pub(crate) fn scalar_load_of(i: &Inst) -> Option<ScalarLoad> {
    use Smem::*;
    if i.enc != super::decode::Encoding::Smem {
        return None;
    }
    let n = match Smem::from_op(i.op)? {
        S_LOAD_B32 => 1,
        S_LOAD_B64 => 2,
        S_LOAD_B128 => 4,
        S_LOAD_B256 => 8,
        S_LOAD_B512 => 16,
        _ => return None,
    };
    use fld::smem::*;
    let iw = i.words();
    Some(ScalarLoad {
        dwords: n,
        sdata: SDATA.index(&iw),
        sbase: SBASE.operand(&iw),
        offset: i64::from(OFFSET.signed(&iw)),
        soffset: SOFFSET.operand(&iw),
    })
}

/// An SMEM load as the instruction's fields give it, whichever generation's encoding
/// they come from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScalarLoad {
    /// How many dwords.
    pub(crate) dwords: usize,
    /// SDATA: the first destination SGPR.
    pub(crate) sdata: usize,
    /// SBASE: the address pair's first SGPR, as an operand number.
    pub(crate) sbase: u16,
    /// The signed byte offset.
    pub(crate) offset: i64,
    /// SOFFSET: an SGPR whose value is added (NULL: none).
    pub(crate) soffset: u16,
}

impl ScalarLoad {
    /// The offset plus SOFFSET's value (none for NULL).
    #[inline]
    fn byte_offset(&self, w: &Wave) -> R<i64> {
        Ok(if usize::from(self.soffset) == NULL {
            self.offset
        } else {
            self.offset.wrapping_add(i64::from(w.sread(self.soffset, None)?))
        })
    }

    /// The dword-aligned address of an access at `SBASE + offset + SOFFSET`.
    #[inline]
    pub(crate) fn address(&self, w: &Wave) -> R<u64> {
        let base = w.sread64(self.sbase, None)?;
        Ok((base as i64).wrapping_add(self.byte_offset(w)?) as u64 & !3)
    }

    /// An access through the buffer resource (V#) at SBASE: its base address (bits
    /// 47:0), the access's byte offset into the buffer (`offset + SOFFSET`), and the
    /// buffer's size in bytes (dword 2, NUM_RECORDS).
    pub(crate) fn buffer_place(&self, w: &Wave) -> R<(u64, i64, u64)> {
        let base = w.sread64(self.sbase, None)? & 0xffff_ffff_ffff;
        let records = u64::from(w.sread(self.sbase + 2, None)?);
        Ok((base, self.byte_offset(w)?, records))
    }
}

/// Whether `len` bytes at byte offset `at` lie inside a buffer of `records` bytes (the
/// hardware's range check: what lies past the end reads 0 and is not written).
pub(crate) fn inside_buffer(at: i64, len: u64, records: u64) -> bool {
    at >= 0 && (at as u64).checked_add(len).is_some_and(|end| end <= records)
}

/// Loads `l.dwords` dwords from `SBASE + offset + SOFFSET` (dword-aligned) into SDATA.
#[inline]
pub(crate) fn scalar_load(w: &mut Wave, l: &ScalarLoad, mem: &dyn Memory) -> R<()> {
    let n = l.dwords;
    let addr = l.address(w)?;
    let mut buf = [0u8; 64];
    let buf = buf.get_mut(..n * 4).ok_or("a scalar load of more than 16 dwords")?;
    mem.read(addr, buf).map_err(Trap::load(n * 4))?;
    // Into SGPRs below NULL (the commonest destinations): the dwords straight in (up
    // to four without a loop, which became a call into the C library).
    if l.sdata + n <= NULL {
        let dword = |k: usize| u32::from_le_bytes([buf[4 * k], buf[4 * k + 1], buf[4 * k + 2], buf[4 * k + 3]]);
        let d = l.sdata;
        match n {
            1 => w.s[d] = dword(0),
            2 => (w.s[d], w.s[d + 1]) = (dword(0), dword(1)),
            4 => (w.s[d], w.s[d + 1], w.s[d + 2], w.s[d + 3]) = (dword(0), dword(1), dword(2), dword(3)),
            _ => {
                for (k, r) in w.s[d..d + n].iter_mut().enumerate() {
                    *r = dword(k);
                }
            }
        }
        return Ok(());
    }
    for k in 0..n {
        let b = &buf[k * 4..k * 4 + 4];
        w.swrite(l.sdata + k, u32::from_le_bytes([b[0], b[1], b[2], b[3]]))?;
    }
    Ok(())
}

/// The SOP1 opcodes beyond the 32-bit moves, counts and EXEC forms.
fn sop1_rest(w: &mut Wave, i: &Inst, d: usize, s: u16) -> R<()> {
    use Sop1::*;
    let Some(op) = Sop1::from_op(i.op) else {
        return Err(missing(i, "no such opcode"));
    };
    let x64 = || w.sread64(s, i.literal);
    let exec64 = u64::from(w.s[EXEC_LO]) | u64::from(w.s[EXEC_LO + 1]) << 32;
    match op {
        S_CMOV_B64 => {
            let v = x64()?;
            if w.scc {
                w.swrite64(d, v)?;
            }
            Ok(())
        }
        S_BREV_B64 => {
            let v = x64()?.reverse_bits();
            w.swrite64(d, v)
        }
        S_CTZ_I32_B64 => {
            let v = x64()?;
            w.swrite(d, if v == 0 { u32::MAX } else { v.trailing_zeros() })
        }
        S_CLZ_I32_U64 => {
            let v = x64()?;
            w.swrite(d, if v == 0 { u32::MAX } else { v.leading_zeros() })
        }
        S_CLS_I32_I64 => {
            let v = x64()?;
            w.swrite(d, cls64(v))
        }
        S_BITSET0_B64 | S_BITSET1_B64 => {
            let bit = 1u64 << (w.sread(s, i.literal)? & 63);
            let old = w.sread64(d as u16, None)?;
            w.swrite64(d, if op == S_BITSET0_B64 { old & !bit } else { old | bit })
        }
        S_BITREPLICATE_B64_B32 => {
            let x = w.sread(s, i.literal)?;
            let r = (0..32).fold(0u64, |r, b| r | (u64::from(x >> b & 1) * 3) << (2 * b));
            w.swrite64(d, r)
        }
        S_BCNT0_I32_B64 | S_BCNT1_I32_B64 => {
            let v = x64()?;
            let c = if op == S_BCNT0_I32_B64 {
                v.count_zeros()
            } else {
                v.count_ones()
            };
            w.scc = c != 0;
            w.swrite(d, c)
        }
        S_QUADMASK_B32 | S_WQM_B32 => {
            let mask = if op == S_QUADMASK_B32 { quadmask } else { wqm };
            let r = mask(u64::from(w.sread(s, i.literal)?), 8) as u32;
            w.scc = r != 0;
            w.swrite(d, r)
        }
        S_QUADMASK_B64 | S_WQM_B64 => {
            let mask = if op == S_QUADMASK_B64 { quadmask } else { wqm };
            let r = mask(x64()?, 16);
            w.scc = r != 0;
            w.swrite64(d, r)
        }
        S_NOT_B64 => {
            let r = !x64()?;
            w.scc = r != 0;
            w.swrite64(d, r)
        }
        // The wave64 EXEC forms: the old 64-bit EXEC to the destination, the new one
        // from it and the source; SCC = new EXEC != 0. (A wave32 wave runs the lanes of
        // EXEC_LO.)
        S_AND_SAVEEXEC_B64
        | S_OR_SAVEEXEC_B64
        | S_XOR_SAVEEXEC_B64
        | S_NAND_SAVEEXEC_B64
        | S_NOR_SAVEEXEC_B64
        | S_XNOR_SAVEEXEC_B64
        | S_AND_NOT0_SAVEEXEC_B64
        | S_OR_NOT0_SAVEEXEC_B64
        | S_AND_NOT1_SAVEEXEC_B64
        | S_OR_NOT1_SAVEEXEC_B64
        | S_AND_NOT0_WREXEC_B64
        | S_AND_NOT1_WREXEC_B64 => {
            let x = x64()?;
            let e = exec64;
            let new = match op {
                S_AND_SAVEEXEC_B64 => x & e,
                S_OR_SAVEEXEC_B64 => x | e,
                S_XOR_SAVEEXEC_B64 => x ^ e,
                S_NAND_SAVEEXEC_B64 => !(x & e),
                S_NOR_SAVEEXEC_B64 => !(x | e),
                S_XNOR_SAVEEXEC_B64 => !(x ^ e),
                S_AND_NOT0_SAVEEXEC_B64 | S_AND_NOT0_WREXEC_B64 => !x & e,
                S_OR_NOT0_SAVEEXEC_B64 => !x | e,
                S_AND_NOT1_SAVEEXEC_B64 | S_AND_NOT1_WREXEC_B64 => x & !e,
                _ => x | !e,
            };
            let wrexec = matches!(op, S_AND_NOT0_WREXEC_B64 | S_AND_NOT1_WREXEC_B64);
            w.swrite64(d, if wrexec { new } else { e })?;
            w.s[EXEC_LO] = new as u32;
            w.s[EXEC_LO + 1] = (new >> 32) as u32;
            w.scc = new != 0;
            Ok(())
        }
        // Relative moves: SGPR numbers offset by M0.
        S_MOVRELS_B32 | S_MOVRELS_B64 => {
            let from = usize::from(s)
                .checked_add(w.s[M0] as usize)
                .filter(|&n| n < SGPRS)
                .ok_or_else(|| format!("s_movrels source s{s} + m0 {} outside the SGPRs", w.s[M0]))?;
            if op == S_MOVRELS_B32 {
                w.swrite(d, w.s[from])
            } else {
                let v = w.sread64(from as u16, None)?;
                w.swrite64(d, v)
            }
        }
        S_MOVRELD_B32 | S_MOVRELD_B64 => {
            let to = d
                .checked_add(w.s[M0] as usize)
                .filter(|&n| n < SGPRS)
                .ok_or_else(|| format!("s_movreld destination s{d} + m0 {} outside the SGPRs", w.s[M0]))?;
            if op == S_MOVRELD_B32 {
                let v = w.sread(s, i.literal)?;
                w.swrite(to, v)
            } else {
                let v = x64()?;
                w.swrite64(to, v)
            }
        }
        S_MOVRELSD_2_B32 => {
            let m0 = w.s[M0] as usize;
            let (from, to) = (usize::from(s) + (m0 & 0x3ff), d + ((m0 >> 16) & 0x3ff));
            if from >= SGPRS || to >= SGPRS {
                return Err(format!("s_movrelsd_2 s{to} <- s{from} outside the SGPRs").into());
            }
            w.swrite(to, w.s[from])
        }
        S_RFE_B64 => Err("s_rfe_b64 returns from a trap handler; the interpreter runs none".into()),
        // Messages with a reply: the real-time clock (100 MHz, as REFCLK counts);
        // no doorbell id, no trap handler addresses, nothing to save.
        S_SENDMSG_RTN_B32 | S_SENDMSG_RTN_B64 => {
            use msg::*;
            let v = match fld::sop1::SSRC0.0.get(&i.words()) {
                MSG_RTN_GET_REALTIME => realtime(),
                MSG_RTN_GET_DOORBELL | MSG_RTN_GET_DDID | MSG_RTN_GET_TMA | MSG_RTN_SAVE_WAVE | MSG_RTN_GET_TBA => 0,
                m => return Err(format!("{} of message {m:#x}: no such message", op.name()).into()),
            };
            if op == S_SENDMSG_RTN_B32 {
                w.swrite(d, v as u32)
            } else {
                w.swrite64(d, v)
            }
        }
        other => Err(missing(i, other.name())),
    }
}

/// SMEM buffer loads through a buffer resource (V#) and the cache controls.
fn smem_rest(w: &mut Wave, i: &Inst, mem: &dyn Memory) -> R<()> {
    use Smem::*;
    let op = Smem::from_op(i.op).ok_or_else(|| missing(i, "no such opcode"))?;
    let dwords = match op {
        S_BUFFER_LOAD_B32 => 1,
        S_BUFFER_LOAD_B64 => 2,
        S_BUFFER_LOAD_B128 => 4,
        S_BUFFER_LOAD_B256 => 8,
        S_BUFFER_LOAD_B512 => 16,
        // The mock has no scalar or L1 cache to invalidate, and no address
        // translation cache to probe.
        S_GL1_INV | S_DCACHE_INV | S_ATC_PROBE | S_ATC_PROBE_BUFFER => return Ok(()),
        other => return Err(missing(i, other.name())),
    };
    use fld::smem::*;
    let iw = i.words();
    let load = ScalarLoad {
        dwords,
        sdata: SDATA.index(&iw),
        sbase: SBASE.operand(&iw),
        offset: i64::from(OFFSET.signed(&iw)),
        soffset: SOFFSET.operand(&iw),
    };
    scalar_buffer_load(w, &load, mem, None)
}

/// An SMEM buffer load: `l.dwords` dwords (or, with `small`, one value of that many
/// bytes, sign-extended when asked) at `offset + SOFFSET` (dword-aligned for whole
/// dwords) in the buffer whose resource (V#) is at SBASE: its base address (bits
/// 47:0) and size in bytes (dword 2). What lies past the buffer's end reads as 0, as
/// the hardware's range check gives.
pub(crate) fn scalar_buffer_load(
    w: &mut Wave,
    l: &ScalarLoad,
    mem: &dyn Memory,
    small: Option<(usize, bool)>,
) -> R<()> {
    let (base, at, records) = l.buffer_place(w)?;
    let inside = |at: i64, len: u64| inside_buffer(at, len, records);
    if let Some((bytes, signed)) = small {
        let mut b = [0u8; 2];
        if inside(at, bytes as u64) {
            mem.read(base.wrapping_add(at as u64), &mut b[..bytes])
                .map_err(Trap::load(bytes))?;
        }
        let v = match (bytes, signed) {
            (1, false) => u32::from(b[0]),
            (1, true) => b[0] as i8 as i32 as u32,
            (_, false) => u32::from(u16::from_le_bytes(b)),
            (_, true) => i16::from_le_bytes(b) as i32 as u32,
        };
        return w.swrite(l.sdata, v);
    }
    let start = at & !3;
    for k in 0..l.dwords {
        let at = start.wrapping_add(4 * k as i64);
        let v = if inside(at, 4) {
            let mut b = [0u8; 4];
            mem.read(base.wrapping_add(at as u64), &mut b).map_err(Trap::load(4))?;
            u32::from_le_bytes(b)
        } else {
            0
        };
        w.swrite(l.sdata + k, v)?;
    }
    Ok(())
}

/// A real-time clock at 100 MHz, from the host's monotonic clock.
pub(crate) fn realtime() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    (START.get_or_init(std::time::Instant::now).elapsed().as_nanos() / 10) as u64
}

/// SOPC bit tests and 64-bit equality.
fn sopc_rest(w: &mut Wave, i: &Inst) -> R<()> {
    use Sopc::*;
    let iw = i.words();
    let (s0, s1) = (fld::sopc::SSRC0.operand(&iw), fld::sopc::SSRC1.operand(&iw));
    let op = Sopc::from_op(i.op).ok_or_else(|| missing(i, "no such opcode"))?;
    w.scc = match op {
        S_BITCMP0_B32 | S_BITCMP1_B32 => {
            let (a, b) = (w.sread(s0, i.literal)?, w.sread(s1, i.literal)?);
            (a >> (b & 31) & 1 == 1) == (op == S_BITCMP1_B32)
        }
        S_BITCMP0_B64 | S_BITCMP1_B64 => {
            let (a, b) = (w.sread64(s0, i.literal)?, w.sread(s1, i.literal)?);
            (a >> (b & 63) & 1 == 1) == (op == S_BITCMP1_B64)
        }
        S_CMP_EQ_U64 | S_CMP_LG_U64 => {
            let (a, b) = (w.sread64(s0, i.literal)?, w.sread64(s1, i.literal)?);
            (a == b) == (op == S_CMP_EQ_U64)
        }
        other => return Err(missing(i, other.name())),
    };
    Ok(())
}

/// The SOPK conditional move and hints.
fn sopk_rest(w: &mut Wave, i: &Inst, d: usize, simm: u16) -> R<()> {
    use Sopk::*;
    let op = Sopk::from_op(i.op).ok_or_else(|| missing(i, "no such opcode"))?;
    match op {
        S_CMOVK_I32 => {
            if w.scc {
                w.swrite(d, simm as i16 as i32 as u32)?;
            }
            Ok(())
        }
        // s_version: which ISA the code was built for; s_waitcnt_{vm,exp,lgkm}cnt:
        // scheduling hints (each instruction completes before the next here).
        S_VERSION | S_WAITCNT_VMCNT | S_WAITCNT_EXPCNT | S_WAITCNT_LGKMCNT => Ok(()),
        other => Err(missing(i, other.name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdna3::testing::run;

    fn pair(w: &mut Wave, n: usize, v: u64) {
        w.s[n] = v as u32;
        w.s[n + 1] = (v >> 32) as u32;
    }

    fn get(w: &Wave, n: usize) -> u64 {
        u64::from(w.s[n]) | u64::from(w.s[n + 1]) << 32
    }

    /// Encodings from `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`.
    #[test]
    fn sixty_four_bit_bit_operations() {
        let x = 0x8000_0000_0000_00f1u64;
        let setx = |w: &mut Wave| pair(w, 4, x);
        // s_brev_b64 s[2:3], s[4:5]
        assert_eq!(get(&run(&[0xbe82_0504], setx).unwrap(), 2), x.reverse_bits());
        // s_bcnt1_i32_b64 s2, s[4:5] / s_bcnt0_i32_b64
        let w = run(&[0xbe82_1904], setx).unwrap();
        assert_eq!((w.s[2], w.scc), (6, true));
        assert_eq!(run(&[0xbe82_1704], setx).unwrap().s[2], 58);
        // s_clz_i32_u64, s_cls_i32_i64, s_ctz_i32_b64 s2, s[4:5]
        assert_eq!(run(&[0xbe82_0b04], setx).unwrap().s[2], 0);
        assert_eq!(run(&[0xbe82_0d04], setx).unwrap().s[2], 1);
        assert_eq!(run(&[0xbe82_0904], setx).unwrap().s[2], 0);
        assert_eq!(run(&[0xbe82_0b04], |w| pair(w, 4, 0)).unwrap().s[2], u32::MAX);
        // s_not_b64 s[2:3], s[4:5]
        let w = run(&[0xbe82_1f04], setx).unwrap();
        assert_eq!((get(&w, 2), w.scc), (!x, true));
        // s_bitset1_b64 / s_bitset0_b64 s[2:3], s4 (bit 40)
        let w = run(&[0xbe82_1304], |w| w.s[4] = 40).unwrap();
        assert_eq!(get(&w, 2), 1 << 40);
        let w = run(&[0xbe82_1104], |w| {
            w.s[4] = 40;
            pair(w, 2, u64::MAX);
        })
        .unwrap();
        assert_eq!(get(&w, 2), !(1u64 << 40));
        // s_bitreplicate_b64_b32 s[2:3], s4
        assert_eq!(get(&run(&[0xbe82_1404], |w| w.s[4] = 0b101).unwrap(), 2), 0b11_0011);
        // s_cmov_b64 s[2:3], s[4:5]: only with SCC
        assert_eq!(get(&run(&[0xbe82_0304], setx).unwrap(), 2), 0);
        let w = run(&[0xbe82_0304], |w| {
            setx(w);
            w.scc = true;
        })
        .unwrap();
        assert_eq!(get(&w, 2), x);
    }

    #[test]
    fn quad_masks_and_whole_quad_mode() {
        // s_quadmask_b32 s2, s3 / s_wqm_b32 s2, s3
        let w = run(&[0xbe82_1a03], |w| w.s[3] = 0x0100_0f10).unwrap();
        assert_eq!((w.s[2], w.scc), (0b100_0110, true));
        assert_eq!(run(&[0xbe82_1c03], |w| w.s[3] = 0x0100_0f10).unwrap().s[2], 0x0f00_0ff0);
        // s_quadmask_b64 / s_wqm_b64 s[2:3], s[4:5]
        let w = run(&[0xbe82_1b04], |w| pair(w, 4, 1 << 60)).unwrap();
        assert_eq!(get(&w, 2), 1 << 15);
        let w = run(&[0xbe82_1d04], |w| pair(w, 4, 1 << 61)).unwrap();
        assert_eq!(get(&w, 2), 0xf << 60);
        let w = run(&[0xbe82_1a03], |_| {}).unwrap();
        assert!(!w.scc, "an empty mask clears SCC");
    }

    #[test]
    fn wave64_exec_forms() {
        // s_and_saveexec_b64 s[2:3], s[4:5]
        let w = run(&[0xbe82_2104], |w| {
            pair(w, 4, 0x0000_0001_0000_00ff);
            pair(w, EXEC_LO, 0x0000_0003_0000_000f);
        })
        .unwrap();
        assert_eq!(get(&w, 2), 0x0000_0003_0000_000f, "the old EXEC");
        assert_eq!(get(&w, EXEC_LO), 0x0000_0001_0000_000f);
        assert!(w.scc);
        // s_and_not1_wrexec_b64 s[2:3], s[4:5]: the result to both
        let w = run(&[0xbe82_3704], |w| {
            pair(w, 4, 0xff);
            pair(w, EXEC_LO, 0x0f);
        })
        .unwrap();
        assert_eq!((get(&w, 2), get(&w, EXEC_LO)), (0xf0, 0xf0));
    }

    #[test]
    fn relative_moves_and_bounds() {
        // s_movrels_b32 s2, s4 with m0 = 3: s2 = s7
        let w = run(&[0xbe82_4004], |w| {
            w.s[M0] = 3;
            w.s[7] = 77;
        })
        .unwrap();
        assert_eq!(w.s[2], 77);
        // s_movreld_b32 s2, s4 with m0 = 5: s7 = s4
        let w = run(&[0xbe82_4204], |w| {
            w.s[M0] = 5;
            w.s[4] = 44;
        })
        .unwrap();
        assert_eq!(w.s[7], 44);
        // s_movrelsd_2_b32 s2, s4: source offset m0[9:0], destination offset m0[25:16]
        let w = run(&[0xbe82_4404], |w| {
            w.s[M0] = 2 << 16 | 1;
            w.s[5] = 55;
        })
        .unwrap();
        assert_eq!(w.s[4], 55);
        // Past the SGPRs: an error, not a panic.
        assert!(run(&[0xbe82_4004], |w| w.s[M0] = 1000).is_err());
        assert!(run(&[0xbe82_4204], |w| w.s[M0] = u32::MAX).is_err());
    }

    #[test]
    fn bit_compares_and_64_bit_equality() {
        // s_bitcmp1_b32 s2, s3
        assert!(run(&[0xbf0d_0302], |w| (w.s[2], w.s[3]) = (0x10, 4)).unwrap().scc);
        assert!(!run(&[0xbf0d_0302], |w| (w.s[2], w.s[3]) = (0x10, 3)).unwrap().scc);
        // s_bitcmp0_b64 s[2:3], s4 (bit 40 clear)
        assert!(run(&[0xbf0e_0402], |w| w.s[4] = 40).unwrap().scc);
        // s_cmp_eq_u64 / s_cmp_lg_u64 s[2:3], s[4:5]: the high halves count
        let differ = |w: &mut Wave| {
            pair(w, 2, 1 << 33);
            pair(w, 4, 1 << 34);
        };
        assert!(!run(&[0xbf10_0402], differ).unwrap().scc);
        assert!(run(&[0xbf11_0402], differ).unwrap().scc);
    }

    #[test]
    fn buffer_loads_stay_inside_the_buffer() {
        // s_buffer_load_b64 s[2:3], s[4:7], 0x8 against a V# of 12 bytes: dword 2 of
        // the buffer and 0 for the dword past its end (no memory access there: the
        // buffer's base is unmapped, so any read would fault).
        let vsharp = |w: &mut Wave| {
            pair(w, 4, 0x7000_0000_0000);
            w.s[6] = 12;
        };
        let e = run(&[0xf424_0082, 0xf800_0008], vsharp).err().unwrap_or_default();
        assert!(e.contains("memory fault"), "{e}");
        let w = run(&[0xf424_0082, 0xf800_0008], |w| {
            vsharp(w);
            w.s[6] = 8;
        })
        .unwrap();
        assert_eq!((w.s[2], w.s[3]), (0, 0), "past the end reads 0");
        // s_dcache_inv: nothing to invalidate.
        run(&[0xf484_0000, 0], |_| {}).unwrap();
    }

    #[test]
    fn bitfield_masks_and_half_packs() {
        // s_bfm_b64 s[2:3], s4, s5: 36 ones shifted by 20
        let w = run(&[0x9582_0504], |w| (w.s[4], w.s[5]) = (36, 20)).unwrap();
        assert_eq!(get(&w, 2), ((1u64 << 36) - 1) << 20);
        // s_pack_hl_b32_b16 s2, s3, s4
        let w = run(&[0x9a82_0403], |w| (w.s[3], w.s[4]) = (0x1111_2222, 0x3333_4444)).unwrap();
        assert_eq!(w.s[2], 0x4444_1111);
    }

    #[test]
    fn conditional_constants() {
        // s_cmovk_i32 s2, 0xfff0: sign-extended, only with SCC
        assert_eq!(run(&[0xb102_fff0], |_| {}).unwrap().s[2], 0);
        assert_eq!(run(&[0xb102_fff0], |w| w.scc = true).unwrap().s[2], 0xffff_fff0);
    }

    #[test]
    fn masks_and_counts() {
        assert_eq!(quadmask(0x0000_0f10, 8), 0b110);
        assert_eq!(wqm(0x0000_0210, 8), 0x0000_0ff0);
        assert_eq!(cls64(0xffff_0000_0000_0000), 16, "the sign bit counts");
        assert_eq!(cls64(1), 63);
        assert_eq!(cls64(0), u32::MAX);
    }

    #[test]
    fn messages_with_replies() {
        // s_sendmsg_rtn_b32 s2, sendmsg(MSG_RTN_GET_REALTIME): a clock that moves.
        let t0 = run(&[0xbe82_4c83], |_| {}).unwrap().s[2];
        std::thread::sleep(std::time::Duration::from_millis(2));
        let t1 = run(&[0xbe82_4c83], |_| {}).unwrap().s[2];
        assert!(t1.wrapping_sub(t0) >= 100_000, "{t0} {t1}: 2 ms at 100 MHz");
        // s_sendmsg_rtn_b64 s[2:3], sendmsg(MSG_RTN_GET_TMA): no trap handler, 0.
        assert_eq!(get(&run(&[0xbe82_4d82], |w| pair(w, 2, 7)).unwrap(), 2), 0);
    }
}
