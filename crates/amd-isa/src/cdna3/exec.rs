//! Running CDNA3 instructions, in waves of 64 lanes. What lowers to RDNA3
//! ([`Inst::to_rdna3`]) runs as RDNA3 runs it; the memory encodings (SMEM's loads,
//! GLOBAL, FLAT, SCRATCH) read their own fields and hand RDNA3's executor the access
//! (the opcodes mapped by their gfx11 names, the generated `lowering` table);
//! program control gfx9 encodes otherwise (`s_waitcnt`'s counters, `s_endpgm`,
//! `s_barrier`) and gfx940's 64-bit moves and shifted adds are here. Anything else
//! stops the dispatch naming the instruction: the CDNA3 interpreter does not run it
//! yet (the SDWA and DPP forms, AccVGPRs and the matrix instructions among them).

use super::decode::{Encoding, Inst};
use super::fields as fc;
use super::lower::scalar;
use super::lowering;
use super::opcodes::{Smem, Sopp, Vop1, Vop3, Vop3p};
use crate::error::Trap;
use crate::memory::Memory;
use crate::rdna3::{self, FlatAccess, Flow, Frontend, ScalarLoad, Step, Wave};

/// gfx11's NULL scalar operand: no scalar base or offset.
const NULL: u16 = 124;

/// A CDNA3 instruction with what running it needs.
#[derive(Debug, Clone)]
pub(crate) enum Decoded {
    /// As RDNA3 runs it, and the CDNA3 instruction (its length, its text).
    Lowered(rdna3::Decoded, Inst),
    /// CDNA3's own.
    Own(Inst, Own),
}

/// What the CDNA3 interpreter makes of an instruction that does not lower.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Own {
    /// Changes nothing here: the wait counters (an in-order interpreter has nothing
    /// outstanding), scheduling hints.
    Hint,
    /// `s_endpgm`.
    End,
    /// `s_barrier`.
    Barrier,
    /// A scalar load.
    ScalarLoad(ScalarLoad),
    /// A GLOBAL access, in RDNA3's numbering; its data in AccVGPRs where `acc`.
    Global(FlatAccess, bool),
    /// A FLAT access.
    Flat(FlatAccess, bool),
    /// A SCRATCH access.
    Scratch(FlatAccess, bool),
    /// `v_accvgpr_read_b32`, `v_accvgpr_write_b32`, `v_accvgpr_mov_b32`: a move from
    /// (`from_acc`) or to (`to_acc`) the AccVGPRs, which the unified register file
    /// holds from the wave's ACCUM_OFFSET.
    AccMove { from_acc: bool, to_acc: bool },
    /// `v_mov_b64`: a 64-bit move.
    MovB64,
    /// `v_lshl_add_u64`: `(S0 << S1[2:0]) + S2`, 64-bit.
    LshlAddU64,
    /// Refused, for the reason given.
    Refused(&'static str),
}

/// CDNA3's instructions.
pub(crate) struct Cdna3;

impl Frontend for Cdna3 {
    type Decoded = Decoded;
    fn decode(words: &[u32]) -> Result<Decoded, rdna3::DecodeError> {
        let i = Inst::decode(words)?;
        Ok(match i.to_rdna3() {
            Some(r) => Decoded::Lowered(rdna3::Decoded::new(r), i),
            None => Decoded::Own(i, own(&i)),
        })
    }
    const GFX12: bool = false;
    const CDNA: bool = true;
}

/// What CDNA3's own instruction `i` is.
fn own(i: &Inst) -> Own {
    let w = &i.words;
    match i.enc {
        Encoding::Sopp => match Sopp::from_op(i.op) {
            Some(Sopp::S_ENDPGM) => Own::End,
            Some(Sopp::S_BARRIER) => Own::Barrier,
            Some(Sopp::S_NOP | Sopp::S_WAITCNT | Sopp::S_SETPRIO | Sopp::S_SLEEP) => Own::Hint,
            _ => Own::Refused("program control the CDNA3 interpreter does not run yet"),
        },
        Encoding::Smem => smem(i),
        Encoding::Global | Encoding::Flat | Encoding::Scratch => {
            let acc = fc::flat::ACC.get(w) == 1;
            let op = match i.enc {
                Encoding::Global => lowering::global(i.op),
                Encoding::Flat => lowering::flat(i.op),
                _ => lowering::scratch(i.op),
            };
            let Some(op) = op else {
                return Own::Refused("a memory opcode RDNA3 has no namesake of");
            };
            let saddr = fc::flat::SADDR.0.get(w);
            // gfx9's "off" is 0x7f; FLAT takes no scalar base.
            let saddr = match saddr {
                _ if i.enc == Encoding::Flat => NULL,
                0x7f => NULL,
                s => match scalar(s) {
                    Some(s) => s as u16,
                    None => return Own::Refused("a scalar base in FLAT_SCRATCH or XNACK_MASK"),
                },
            };
            let offset = match i.enc {
                Encoding::Flat => i64::from(fc::flat::OFFSET.get(w)),
                _ => i64::from((fc::global::OFFSET.get(w) << 19) as i32 >> 19),
            };
            let a = FlatAccess::new(
                op,
                fc::flat::VDST.0.get(w) as usize,
                saddr,
                fc::flat::DATA.operand(w),
                fc::flat::ADDR.0.get(w) as usize,
                offset,
                // An atomic returns the old value with SC0 set.
                fc::flat::SC0.get(w) == 1,
                fc::scratch::SVE.get(w) == 1,
            );
            match i.enc {
                Encoding::Global => Own::Global(a, acc),
                Encoding::Flat => Own::Flat(a, acc),
                _ => Own::Scratch(a, acc),
            }
        }
        Encoding::Vop1 if i.ext.is_none() && Vop1::from_op(i.op) == Some(Vop1::V_MOV_B64_E32) => Own::MovB64,
        Encoding::Vop3 if Vop3::from_op(i.op) == Some(Vop3::V_MOV_B64_E64) => Own::MovB64,
        Encoding::Vop3 if Vop3::from_op(i.op) == Some(Vop3::V_LSHL_ADD_U64) => Own::LshlAddU64,
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if i.ext.is_some() => {
            Own::Refused("the SDWA and DPP forms are not run yet")
        }
        Encoding::Vop1 if i.ext.is_none() && Vop1::from_op(i.op) == Some(Vop1::V_ACCVGPR_MOV_B32_E32) => Own::AccMove {
            from_acc: true,
            to_acc: true,
        },
        Encoding::Vop3p => match Vop3p::from_op(i.op) {
            Some(Vop3p::V_ACCVGPR_READ) => Own::AccMove {
                from_acc: true,
                to_acc: false,
            },
            Some(Vop3p::V_ACCVGPR_WRITE) => Own::AccMove {
                from_acc: false,
                to_acc: true,
            },
            _ => Own::Refused("the matrix instructions are not run yet"),
        },
        _ => Own::Refused("an instruction the CDNA3 interpreter does not run yet"),
    }
}

/// SMEM: the loads (`s_load_dword…`); the rest is refused.
fn smem(i: &Inst) -> Own {
    let w = &i.words;
    let dwords = match Smem::from_op(i.op) {
        Some(Smem::S_LOAD_DWORD) => 1,
        Some(Smem::S_LOAD_DWORDX2) => 2,
        Some(Smem::S_LOAD_DWORDX4) => 4,
        Some(Smem::S_LOAD_DWORDX8) => 8,
        Some(Smem::S_LOAD_DWORDX16) => 16,
        Some(Smem::S_DCACHE_INV | Smem::S_DCACHE_WB | Smem::S_DCACHE_INV_VOL | Smem::S_DCACHE_WB_VOL) => {
            return Own::Hint;
        }
        _ => return Own::Refused("a scalar memory instruction the CDNA3 interpreter does not run yet"),
    };
    let raw = fc::smem::OFFSET.get(w);
    let (imm, soffset_en) = (fc::smem::IMM.get(w) == 1, fc::smem::SOFFSET_EN.get(w) == 1);
    // IMM: a signed 21-bit byte offset, and SOFFSET's SGPR where SOFFSET_EN; else the
    // offset field names the SGPR.
    let (offset, soffset) = match (imm, soffset_en) {
        (true, false) => (i64::from((raw << 11) as i32 >> 11), None),
        (true, true) => (i64::from((raw << 11) as i32 >> 11), Some(fc::smem::SOFFSET.0.get(w))),
        (false, true) => (0, Some(fc::smem::SOFFSET.0.get(w))),
        (false, false) => (0, Some(raw & 0x7f)),
    };
    let soffset = match soffset.map(scalar) {
        None => NULL,
        Some(Some(s)) => s as u16,
        Some(None) => return Own::Refused("a scalar offset in FLAT_SCRATCH or XNACK_MASK"),
    };
    let (Some(sdata), Some(sbase)) = (
        scalar(fc::smem::SDATA.0.get(w)),
        scalar(u32::from(fc::smem::SBASE.operand(w))),
    ) else {
        return Own::Refused("a scalar load through FLAT_SCRATCH or XNACK_MASK");
    };
    Own::ScalarLoad(ScalarLoad {
        dwords,
        sdata: sdata as usize,
        sbase: sbase as u16,
        offset,
        soffset,
    })
}

impl Step for Decoded {
    #[inline]
    fn size(&self) -> u8 {
        match self {
            Decoded::Lowered(_, i) | Decoded::Own(i, _) => i.size,
        }
    }
    #[inline]
    fn is_hint(&self) -> bool {
        match self {
            Decoded::Lowered(d, _) => Step::is_hint(d),
            Decoded::Own(i, own) => matches!(own, Own::Hint) && i.size == 1,
        }
    }
    fn per_half(&self) -> bool {
        match self {
            Decoded::Lowered(d, _) => Step::per_half(d),
            Decoded::Own(_, own) => matches!(
                own,
                Own::MovB64
                    | Own::LshlAddU64
                    | Own::AccMove { .. }
                    | Own::Global(..)
                    | Own::Flat(..)
                    | Own::Scratch(..)
            ),
        }
    }
    #[inline]
    fn run(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> Result<Flow, Trap> {
        let (i, own) = match self {
            Decoded::Lowered(d, _) => return d.run(w, mem, lds),
            Decoded::Own(i, own) => (i, own),
        };
        match own {
            Own::Hint => Ok(Flow::Next),
            Own::End => Ok(Flow::End),
            Own::Barrier => Ok(Flow::Barrier),
            Own::ScalarLoad(l) => rdna3::scalar_load(w, l, mem).map(|_| Flow::Next),
            Own::Global(a, acc) => rdna3::global(w, &in_file(w, a, *acc), mem).map(|_| Flow::Next),
            Own::Flat(a, acc) => rdna3::flat_generic(w, &in_file(w, a, *acc), mem, lds).map(|_| Flow::Next),
            Own::Scratch(a, acc) => rdna3::scratch(w, &in_file(w, a, *acc)).map(|_| Flow::Next),
            &Own::AccMove { from_acc, to_acc } => acc_move(w, i, from_acc, to_acc).map(|_| Flow::Next),
            Own::MovB64 => wide(w, i, |s| s[0]).map(|_| Flow::Next),
            Own::LshlAddU64 => wide(w, i, |s| (s[0] << (s[1] & 7)).wrapping_add(s[2])).map(|_| Flow::Next),
            Own::Refused(why) => Err(Trap::refused(format!("{}: {why}", i.llvm()))),
        }
    }
    fn text(&self) -> String {
        match self {
            Decoded::Lowered(_, i) | Decoded::Own(i, _) => i.llvm().to_string(),
        }
    }
}

/// A memory access's data registers where they are in the unified file: past the
/// wave's ACCUM_OFFSET for AccVGPRs.
fn in_file(w: &Wave, a: &FlatAccess, acc: bool) -> FlatAccess {
    let mut a = *a;
    if acc {
        a.vdst += w.acc_base;
        a.data += w.acc_base as u16;
    }
    a
}

/// An AccVGPR move on the half-wave's active lanes: the source an AccVGPR where
/// `from_acc` (else a VGPR, an SGPR or a constant), the destination one where
/// `to_acc`.
fn acc_move(w: &mut Wave, i: &Inst, from_acc: bool, to_acc: bool) -> Result<(), Trap> {
    let words = &i.words;
    let (dst, src) = if i.enc == Encoding::Vop1 {
        (fc::vop1::VDST.index(words), fc::vop1::SRC0.operand(words))
    } else {
        (fc::vop3p::VDST.index(words), fc::vop3p::SRC0.operand(words))
    };
    let src = match src {
        256.. if from_acc => src + w.acc_base as u16,
        256.. => src,
        n => scalar(u32::from(n)).ok_or("a source in FLAT_SCRATCH or XNACK_MASK")? as u16,
    };
    let dst = if to_acc { dst + w.acc_base } else { dst };
    let exec = w.exec();
    for lane in 0..32 {
        if exec >> lane & 1 != 0 {
            let v = w.vread(src, lane, i.literal)?;
            w.vwrite(dst, lane, v)?;
        }
    }
    Ok(())
}

/// Runs a 64-bit operation of up to three sources on the half-wave's active lanes:
/// `f` of the sources (a 32-bit source zero-extended), into the VGPR pair VDST
/// names. `v_mov_b64` (VOP1 or VOP3) and `v_lshl_add_u64` (VOP3).
fn wide(w: &mut Wave, i: &Inst, f: impl Fn([u64; 3]) -> u64) -> Result<(), Trap> {
    let words = &i.words;
    let (vdst, srcs): (usize, [(u16, bool); 3]) = if i.enc == Encoding::Vop1 {
        let s0 = fc::vop1::SRC0.operand(words);
        (fc::vop1::VDST.index(words), [(s0, true), (0, false), (0, false)])
    } else {
        let src = |b: crate::field::Src| b.operand(words);
        let shifted = Vop3::from_op(i.op) == Some(Vop3::V_LSHL_ADD_U64);
        (
            fc::vop3::VDST.index(words),
            [
                (src(fc::vop3::SRC0), true),
                (src(fc::vop3::SRC1), shifted),
                (src(fc::vop3::SRC2), shifted),
            ],
        )
    };
    // Renumber the scalar operands as gfx11 does (M0, NULL).
    let mut ops = [0u16; 3];
    for (k, &(n, used)) in srcs.iter().enumerate() {
        if used {
            ops[k] = if n < 256 {
                scalar(u32::from(n)).ok_or("a source in FLAT_SCRATCH or XNACK_MASK")? as u16
            } else {
                n
            };
        }
    }
    let exec = w.exec();
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let mut s = [0u64; 3];
        for (k, &(_, used)) in srcs.iter().enumerate() {
            if used {
                // The shift amount is a 32-bit source; the others 64-bit.
                s[k] = if k == 1 {
                    u64::from(w.vread(ops[k], lane, i.literal)?)
                } else {
                    w.vread64(ops[k], lane, i.literal)?
                };
            }
        }
        let v = f(s);
        w.vwrite(vdst, lane, v as u32)?;
        w.vwrite(vdst + 1, lane, (v >> 32) as u32)?;
    }
    Ok(())
}
