//! Running RDNA4 instructions. What lowers to RDNA3 ([`Inst::to_rdna3`]) runs as
//! RDNA3 runs it; the memory encodings (SMEM, VGLOBAL, VFLAT, VSCRATCH) read their own
//! fields and hand RDNA3's executor the access (the vector memory opcodes mapped by
//! name, the generated `lowering` table); program control that RDNA4 changed (the split `s_wait_*`
//! counters, the split barrier, `s_endpgm`) is here. Anything else stops the dispatch
//! naming the instruction: the RDNA4 interpreter does not run it yet.

use super::decode::{Encoding, Inst};
use super::fields as f4;
use super::lowering;
use super::opcodes::{Smem, Sop1, Sop2, Sopp, Vop3p};
use crate::error::Trap;
use crate::field::Words;
use crate::memory::Memory;
use crate::rdna3::{self, FlatAccess, Flow, Frontend, ScalarLoad, Step, Wave};

/// An RDNA4 instruction with what running it needs.
#[derive(Debug, Clone)]
pub(crate) enum Decoded {
    /// As RDNA3 runs it, and its RDNA4 length in dwords (a VOP2 instruction RDNA3
    /// runs as VOP3 is one dword shorter than its RDNA3 form).
    Lowered(rdna3::Decoded, u8),
    /// RDNA4's own.
    Own(Inst, Own),
}

/// What the RDNA4 interpreter makes of an instruction that does not lower.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Own {
    /// Changes nothing here: the wait counters (an in-order interpreter has nothing
    /// outstanding), scheduling hints, `s_barrier_signal` (the wave arrives at
    /// `s_barrier_wait`), messages.
    Hint,
    /// `s_endpgm`.
    End,
    /// `s_barrier_wait`: the wave waits for the workgroup's others.
    BarrierWait,
    /// A gfx12 WMMA (f16 or bf16 inputs, f32 results): RDNA3's arithmetic, gfx12's
    /// register layout; its RDNA3 opcode.
    Wmma(u16),
    /// RDNA4's 64-bit scalar arithmetic without a carry (`s_add_nc_u64`,
    /// `s_sub_nc_u64`, `s_mul_u64`): SCC is left as it was.
    Scalar64(Sop2),
    /// A scalar load.
    ScalarLoad(ScalarLoad),
    /// A global access.
    Global(FlatAccess),
    /// A flat access (global, LDS or private memory by aperture).
    Flat(FlatAccess),
    /// A scratch access.
    Scratch(FlatAccess),
    /// Not run yet.
    Missing,
}

/// RDNA4's instructions.
pub(crate) struct Rdna4;

impl Frontend for Rdna4 {
    type Decoded = Decoded;
    fn decode(words: &[u32]) -> Result<Decoded, rdna3::DecodeError> {
        let i = Inst::decode(words)?;
        Ok(match i.to_rdna3() {
            Some(r) => Decoded::Lowered(rdna3::Decoded::new(r), i.size),
            None => Decoded::Own(i, own(&i)),
        })
    }
    const GFX12: bool = true;
}

/// What running `i` takes, for an instruction that does not lower.
fn own(i: &Inst) -> Own {
    let w = &i.words;
    match i.enc {
        Encoding::Sopp => match Sopp::from_op(i.op) {
            Some(op) if op.name().starts_with("s_wait") => Own::Hint,
            Some(Sopp::S_DELAY_ALU | Sopp::S_CLAUSE | Sopp::S_NOP | Sopp::S_SENDMSG) => Own::Hint,
            Some(Sopp::S_ENDPGM) => Own::End,
            Some(Sopp::S_BARRIER_WAIT) => Own::BarrierWait,
            _ => Own::Missing,
        },
        Encoding::Sop2 => match Sop2::from_op(i.op) {
            Some(op @ (Sop2::S_ADD_NC_U64 | Sop2::S_SUB_NC_U64 | Sop2::S_MUL_U64)) => Own::Scalar64(op),
            _ => Own::Missing,
        },
        Encoding::Vop3p => match Vop3p::from_op(i.op) {
            Some(Vop3p::V_WMMA_F32_16X16X16_F16) => Own::Wmma(rdna3::opcodes::op::vop3p::V_WMMA_F32_16X16X16_F16),
            Some(Vop3p::V_WMMA_F32_16X16X16_BF16) => Own::Wmma(rdna3::opcodes::op::vop3p::V_WMMA_F32_16X16X16_BF16),
            _ => Own::Missing,
        },
        // The workgroup barrier (-1): each wave arrives where it waits.
        Encoding::Sop1 if Sop1::from_op(i.op) == Some(Sop1::S_BARRIER_SIGNAL) => Own::Hint,
        Encoding::Smem => {
            use f4::smem::*;
            let dwords = match Smem::from_op(i.op) {
                Some(Smem::S_LOAD_B32) => 1,
                Some(Smem::S_LOAD_B64) => 2,
                Some(Smem::S_LOAD_B96) => 3,
                Some(Smem::S_LOAD_B128) => 4,
                Some(Smem::S_LOAD_B256) => 8,
                Some(Smem::S_LOAD_B512) => 16,
                _ => return Own::Missing,
            };
            Own::ScalarLoad(ScalarLoad {
                dwords,
                sdata: SDATA.index(w),
                sbase: SBASE.operand(w),
                offset: i64::from(IOFFSET.signed(w)),
                soffset: SOFFSET.operand(w),
            })
        }
        Encoding::Vglobal => lowering::vglobal(i.op).map_or(Own::Missing, |op| Own::Global(access(op, w))),
        Encoding::Vflat => lowering::vflat(i.op).map_or(Own::Missing, |op| Own::Flat(access(op, w))),
        Encoding::Vscratch => lowering::vscratch(i.op).map_or(Own::Missing, |op| Own::Scratch(access(op, w))),
        _ => Own::Missing,
    }
}

/// A VGLOBAL, VFLAT or VSCRATCH instruction's access, opcode `op` in RDNA3's numbering:
/// the three encodings place their fields alike (a test checks), so VGLOBAL's names
/// read them. An atomic returns the old value when TH says so (TH_ATOMIC_RETURN, bit
/// 0 of an atomic's TH).
fn access(op: u16, w: &Words) -> FlatAccess {
    use f4::vglobal::*;
    FlatAccess {
        op,
        vdst: VDST.index(w),
        saddr: SADDR.operand(w),
        data: VSRC.operand(w),
        addr: VADDR.index(w),
        offset: i64::from(IOFFSET.signed(w)),
        returns: TH.get(w) & 1 != 0,
        sve: f4::vscratch::SVE.is_set(w),
    }
}

impl Step for Decoded {
    #[inline]
    fn size(&self) -> u8 {
        match self {
            Decoded::Lowered(_, size) => *size,
            Decoded::Own(i, _) => i.size,
        }
    }
    #[inline]
    fn is_hint(&self) -> bool {
        match self {
            Decoded::Lowered(d, _) => Step::is_hint(d),
            // One-dword hints only: the scheduler steps one dword past them.
            Decoded::Own(i, own) => matches!(own, Own::Hint) && i.size == 1,
        }
    }
    #[inline]
    fn run(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> Result<Flow, Trap> {
        let (i, own) = match self {
            Decoded::Lowered(d, _) => return d.run_out_of_line(w, mem, lds),
            Decoded::Own(i, own) => (i, own),
        };
        match own {
            Own::Hint => Ok(Flow::Next),
            Own::End => Ok(Flow::End),
            Own::BarrierWait => Ok(Flow::Barrier),
            Own::Wmma(op) => {
                use f4::vop3p::*;
                let iw = &i.words;
                let mods = rdna3::WmmaMods {
                    neg_lo: NEG.get(iw),
                    neg_hi: NEG_HI.get(iw),
                    hi_halves: OPSEL.get(iw) & 4 != 0,
                    clamp: CLMP.is_set(iw),
                };
                let srcs = [SRC0.operand(iw), SRC1.operand(iw), SRC2.operand(iw)];
                rdna3::wmma(w, *op, VDST.index(iw), srcs, mods, i.literal, rdna3::WmmaLayout::Gfx12).map(|_| Flow::Next)
            }
            Own::Scalar64(op) => {
                use f4::sop2::*;
                let (a, b) = (
                    w.sread64(SSRC0.operand(&i.words), i.literal)?,
                    w.sread64(SSRC1.operand(&i.words), i.literal)?,
                );
                let d = match op {
                    Sop2::S_ADD_NC_U64 => a.wrapping_add(b),
                    Sop2::S_SUB_NC_U64 => a.wrapping_sub(b),
                    _ => a.wrapping_mul(b),
                };
                w.swrite64(SDST.index(&i.words), d).map(|_| Flow::Next)
            }
            Own::ScalarLoad(l) => rdna3::scalar_load(w, l, mem).map(|_| Flow::Next),
            Own::Global(a) => rdna3::global(w, a, mem).map(|_| Flow::Next),
            Own::Flat(a) => rdna3::flat_generic(w, a, mem, lds).map(|_| Flow::Next),
            Own::Scratch(a) => rdna3::scratch(w, a).map(|_| Flow::Next),
            Own::Missing => Err(Trap::Missing(format!(
                "{} is not implemented for RDNA4 yet",
                i.name().unwrap_or("this opcode")
            ))),
        }
    }
    fn text(&self) -> String {
        match self {
            Decoded::Lowered(d, _) => d.text(),
            Decoded::Own(i, _) => {
                let words: Vec<String> = i.words[..i.size as usize - usize::from(i.literal.is_some())]
                    .iter()
                    .map(|w| format!("{w:08x}"))
                    .collect();
                format!(
                    "{:?} {} [{}]",
                    i.enc,
                    i.name().unwrap_or("(unknown opcode)"),
                    words.join(" ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::f4::{vflat, vglobal, vscratch};

    /// VGLOBAL, VFLAT and VSCRATCH place the fields [`super::access`] reads alike.
    #[test]
    fn vector_memory_encodings_lie_alike() {
        let fields = |vdst, vaddr, saddr, vsrc, ioffset, th, sve| (vdst, vaddr, saddr, vsrc, ioffset, th, sve);
        let global = fields(
            vglobal::VDST,
            vglobal::VADDR,
            vglobal::SADDR,
            vglobal::VSRC,
            vglobal::IOFFSET,
            vglobal::TH,
            vglobal::SVE,
        );
        assert_eq!(
            global,
            fields(
                vflat::VDST,
                vflat::VADDR,
                vflat::SADDR,
                vflat::VSRC,
                vflat::IOFFSET,
                vflat::TH,
                vflat::SVE
            )
        );
        assert_eq!(
            global,
            fields(
                vscratch::VDST,
                vscratch::VADDR,
                vscratch::SADDR,
                vscratch::VSRC,
                vscratch::IOFFSET,
                vscratch::TH,
                vscratch::SVE
            )
        );
    }
}
