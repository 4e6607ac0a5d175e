//! Decoding gfx940–gfx942 (CDNA3) instructions: the encoding by its ENCODING field (and
//! the flat family's SEG field), the length by its fields, then the SDWA or DPP dword
//! and the literal. Untrusted input: a truncated instruction or an unknown encoding is
//! an error, never a panic.

use super::fields as fld;
use super::opcodes::op::{sopk, vop2};
use crate::field::{Fixed, Src, Words};

pub use crate::decode::DecodeError;
use crate::decode::{body, dword, encoding};

/// The instruction encodings of gfx940–gfx942 that compute code uses (no graphics
/// interpolation, images or exports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Scalar, two sources.
    Sop2,
    /// Scalar, 16-bit constant.
    Sopk,
    /// Scalar, one source.
    Sop1,
    /// Scalar compare.
    Sopc,
    /// Scalar program control.
    Sopp,
    /// Scalar memory.
    Smem,
    /// Vector, one source.
    Vop1,
    /// Vector, two sources.
    Vop2,
    /// Vector compare.
    Vopc,
    /// Vector, three sources (also VOP1/VOP2/VOPC opcodes in long form, and VOP3B's
    /// carry-out form).
    Vop3,
    /// Packed vector (also the matrix MFMA instructions and the AccVGPR moves).
    Vop3p,
    /// LDS.
    Ds,
    /// Flat memory (SEG 0).
    Flat,
    /// Scratch memory (SEG 1).
    Scratch,
    /// Global memory (SEG 2).
    Global,
    /// Buffer memory through a resource.
    Mubuf,
    /// Typed buffer memory.
    Mtbuf,
}

/// The extra dword a VOP1, VOP2 or VOPC instruction names in its first source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ext {
    /// SDWA: sub-dword selects of the sources and destination.
    Sdwa,
    /// DPP: a lane permutation of the first source (row, bank and lane controls).
    Dpp,
}

/// One decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inst {
    /// The encoding.
    pub enc: Encoding,
    /// The opcode, in the encoding's numbering.
    pub op: u16,
    /// The instruction's dwords (its SDWA or DPP dword included), 0 past its end.
    pub words: Words,
    /// The literal constant, where a source names one.
    pub literal: Option<u32>,
    /// Its length in dwords, the literal included.
    pub size: u8,
    /// Its SDWA or DPP dword.
    pub ext: Option<Ext>,
}

/// Operand number that announces an SDWA dword.
pub const SDWA: u16 = 249;
/// Operand number that announces a DPP dword.
pub const DPP: u16 = 250;
/// Operand number of a literal constant.
pub const LITERAL: u16 = 255;

/// The encodings, each with its ENCODING field and its length in dwords; the longest
/// ENCODING fields first, as a shorter one is a prefix of some longer ones (SOP2's 0b10
/// of SOP1's 0b101111101). VOP3B shares VOP3's field; the flat family shares one and
/// is told apart by SEG.
const ENCODINGS: [(Fixed, Encoding, usize); 15] = [
    (fld::sop1::ENCODING, Encoding::Sop1, fld::sop1::DWORDS),
    (fld::sopc::ENCODING, Encoding::Sopc, fld::sopc::DWORDS),
    (fld::sopp::ENCODING, Encoding::Sopp, fld::sopp::DWORDS),
    (fld::vop3p::ENCODING, Encoding::Vop3p, fld::vop3p::DWORDS),
    (fld::vop1::ENCODING, Encoding::Vop1, fld::vop1::DWORDS),
    (fld::vopc::ENCODING, Encoding::Vopc, fld::vopc::DWORDS),
    (fld::smem::ENCODING, Encoding::Smem, fld::smem::DWORDS),
    (fld::vop3::ENCODING, Encoding::Vop3, fld::vop3::DWORDS),
    (fld::ds::ENCODING, Encoding::Ds, fld::ds::DWORDS),
    (fld::flat::ENCODING, Encoding::Flat, fld::flat::DWORDS),
    (fld::mubuf::ENCODING, Encoding::Mubuf, fld::mubuf::DWORDS),
    (fld::mtbuf::ENCODING, Encoding::Mtbuf, fld::mtbuf::DWORDS),
    (fld::sopk::ENCODING, Encoding::Sopk, fld::sopk::DWORDS),
    (fld::sop2::ENCODING, Encoding::Sop2, fld::sop2::DWORDS),
    (fld::vop2::ENCODING, Encoding::Vop2, fld::vop2::DWORDS),
];

impl Encoding {
    /// The encoding's OP field.
    fn op(self) -> crate::field::Bits {
        match self {
            Encoding::Sop2 => fld::sop2::OP,
            Encoding::Sopk => fld::sopk::OP,
            Encoding::Sop1 => fld::sop1::OP,
            Encoding::Sopc => fld::sopc::OP,
            Encoding::Sopp => fld::sopp::OP,
            Encoding::Smem => fld::smem::OP,
            Encoding::Vop1 => fld::vop1::OP,
            Encoding::Vop2 => fld::vop2::OP,
            Encoding::Vopc => fld::vopc::OP,
            Encoding::Vop3 => fld::vop3::OP,
            Encoding::Vop3p => fld::vop3p::OP,
            Encoding::Ds => fld::ds::OP,
            Encoding::Flat => fld::flat::OP,
            Encoding::Scratch => fld::scratch::OP,
            Encoding::Global => fld::global::OP,
            Encoding::Mubuf => fld::mubuf::OP,
            Encoding::Mtbuf => fld::mtbuf::OP,
        }
    }

    /// The source fields that may name a literal (VOP3 and VOP3P take none on gfx9).
    fn literal_srcs(self) -> &'static [Src] {
        match self {
            Encoding::Sop2 => &[fld::sop2::SSRC0, fld::sop2::SSRC1],
            Encoding::Sop1 => &[fld::sop1::SSRC0],
            Encoding::Sopc => &[fld::sopc::SSRC0, fld::sopc::SSRC1],
            Encoding::Vop1 => &[fld::vop1::SRC0],
            Encoding::Vop2 => &[fld::vop2::SRC0],
            Encoding::Vopc => &[fld::vopc::SRC0],
            _ => &[],
        }
    }
}

impl Inst {
    /// Decodes the instruction at the start of `words`.
    pub fn decode(words: &[u32]) -> Result<Inst, DecodeError> {
        let w0 = dword(words, 0)?;
        let (mut enc, dwords) = encoding(&ENCODINGS, w0)?;
        if enc == Encoding::Flat {
            let seg = [fld::flat::SEG, fld::scratch::SEG, fld::global::SEG];
            enc = match seg.iter().position(|s| s.matches(&[w0, 0, 0])) {
                Some(0) => Encoding::Flat,
                Some(1) => Encoding::Scratch,
                Some(2) => Encoding::Global,
                _ => return Err(DecodeError::Unknown(w0)),
            };
        }
        let mut w = body(words, dwords)?;
        let mut size = dwords;
        let op = enc.op().get(&w) as u16;
        // VOP1, VOP2 and VOPC: the first source may name an SDWA or DPP dword.
        let ext = match enc {
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => match fld::vop1::SRC0.operand(&w) {
                SDWA => Some(Ext::Sdwa),
                DPP => Some(Ext::Dpp),
                _ => None,
            },
            _ => None,
        };
        if ext.is_some() {
            w[size] = dword(words, size)?;
            size += 1;
        }
        // Literals: a source of 255, or an opcode that always carries one
        // (s_setreg_imm32_b32, the VOP2 multiply-adds with a constant).
        let always = match enc {
            Encoding::Sopk => op == sopk::S_SETREG_IMM32_B32,
            Encoding::Vop2 => matches!(
                op,
                vop2::V_FMAMK_F32_E32 | vop2::V_FMAAK_F32_E32 | vop2::V_MADMK_F16_E32 | vop2::V_MADAK_F16_E32
            ),
            _ => false,
        };
        let literal = if ext.is_none() && (always || enc.literal_srcs().iter().any(|s| s.operand(&w) == LITERAL)) {
            size += 1;
            Some(dword(words, size - 1)?)
        } else {
            None
        };
        Ok(Inst {
            enc,
            op,
            words: w,
            literal,
            size: size as u8,
            ext,
        })
    }

    /// The opcode's name as the ISA (and LLVM, in lower case) spells it, where the
    /// encoding has such an opcode.
    pub fn name(&self) -> Option<&'static str> {
        use super::opcodes::*;
        let op = self.op;
        match self.enc {
            Encoding::Sop2 => Sop2::from_op(op).map(Sop2::name),
            Encoding::Sopk => Sopk::from_op(op).map(Sopk::name),
            Encoding::Sop1 => Sop1::from_op(op).map(Sop1::name),
            Encoding::Sopc => Sopc::from_op(op).map(Sopc::name),
            Encoding::Sopp => Sopp::from_op(op).map(Sopp::name),
            Encoding::Smem => Smem::from_op(op).map(Smem::name),
            Encoding::Vop1 => Vop1::from_op(op).map(Vop1::name),
            Encoding::Vop2 => Vop2::from_op(op).map(Vop2::name),
            Encoding::Vopc => Vopc::from_op(op).map(Vopc::name),
            Encoding::Vop3 => Vop3::from_op(op)
                .map(Vop3::name)
                .or_else(|| Vop3sd::from_op(op).map(Vop3sd::name)),
            Encoding::Vop3p => Vop3p::from_op(op).map(Vop3p::name),
            Encoding::Ds => Ds::from_op(op).map(Ds::name),
            Encoding::Flat => Flat::from_op(op).map(Flat::name),
            Encoding::Scratch => Scratch::from_op(op).map(Scratch::name),
            Encoding::Global => Global::from_op(op).map(Global::name),
            Encoding::Mubuf => Mubuf::from_op(op).map(Mubuf::name),
            Encoding::Mtbuf => Mtbuf::from_op(op).map(Mtbuf::name),
        }
    }
}
