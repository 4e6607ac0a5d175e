//! Decoding gfx11 (RDNA3) instructions into typed fields. Untrusted input: a
//! truncated instruction or an unknown encoding is an error, never a panic.

use std::fmt;

use super::fields as fld;
use super::opcodes::op::{sopk, vop2, vopd};
use crate::field::{Bits, Fixed, Words};

/// The instruction encodings of gfx11 compute code.
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
    /// Vector, three sources (also VOP1/VOP2/VOPC ops in long form).
    Vop3,
    /// Packed vector.
    Vop3p,
    /// Dual-issue vector.
    Vopd,
    /// LDS.
    Ds,
    /// Flat, global, scratch memory.
    Flat,
    /// Buffer memory through a resource, untyped (and formatted).
    Mubuf,
    /// Buffer memory through a resource, with the data format in the instruction.
    Mtbuf,
}

/// One decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inst {
    /// Encoding.
    pub enc: Encoding,
    /// Opcode within the encoding.
    pub op: u16,
    /// The raw dwords (1 or 2), without the literal.
    pub dw: [u32; 2],
    /// The 32-bit literal constant, when an operand is 255.
    pub literal: Option<u32>,
    /// Size in dwords (literal included).
    pub size: u8,
    /// The DPP control dword, when src0 is `DPP16` (250) or `DPP8_FI_0`/`DPP8_FI_1`
    /// (233/234) (VOP1/VOP2/VOPC).
    pub dpp: Option<u32>,
    /// The DPP dword is DPP8 lane selects (`Some(fetch_inactive)`), not DPP16 controls.
    pub dpp8: Option<bool>,
}

pub use crate::decode::DecodeError;
use crate::decode::{dword, encoding};

/// Operand number that announces a DPP16 dword.
pub const DPP16: u32 = 250;
/// Operand number that announces a DPP8 dword (disabled lanes read 0).
pub const DPP8_FI_0: u32 = 233;
/// Operand number that announces a DPP8 dword with fetch-inactive (disabled lanes are
/// read too).
pub const DPP8_FI_1: u32 = 234;
/// Operand number of a literal constant.
pub const LITERAL: u16 = 255;

impl Inst {
    /// Decodes the instruction at the start of `words`.
    pub fn decode(words: &[u32]) -> Result<Inst, DecodeError> {
        let w0 = dword(words, 0)?;
        let first: Words = [w0, 0, 0];
        let (enc, dwords) = encoding(&ENCODINGS, w0)?;
        let two = dwords == 2;
        let w1 = if two { dword(words, 1)? } else { 0 };
        let op = enc.op().get(&first) as u16;
        let mut inst = Inst {
            enc,
            op,
            dw: [w0, w1],
            literal: None,
            size: if two { 2 } else { 1 },
            dpp: None,
            dpp8: None,
        };
        let vop = matches!(enc, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc);
        let src0 = u32::from(fld::vop1::SRC0.operand(&first));
        if vop && matches!(src0, DPP16 | DPP8_FI_0 | DPP8_FI_1) {
            inst.dpp = Some(dword(words, 1)?);
            inst.dpp8 = (src0 != DPP16).then_some(src0 == DPP8_FI_1);
            inst.size += 1;
            return Ok(inst);
        }
        // VOP3 (and its compares and carry-out forms) with a DPP dword after its two:
        // its SRC0 names the DPP16 or DPP8 form, the third dword holds the source VGPR
        // and the controls where VOP1's DPP dword has them.
        let vop3_src0 = u32::from(fld::vop3::SRC0.operand(&[w0, w1, 0]));
        if enc == Encoding::Vop3 && matches!(vop3_src0, DPP16 | DPP8_FI_0 | DPP8_FI_1) {
            inst.dpp = Some(dword(words, 2)?);
            inst.dpp8 = (vop3_src0 != DPP16).then_some(vop3_src0 == DPP8_FI_1);
            inst.size += 1;
            return Ok(inst);
        }
        // VOPD's FMAAK/FMAMK always carry a literal.
        let vopd_k = enc == Encoding::Vopd
            && [fld::vopd::OPX, fld::vopd::OPY]
                .iter()
                .any(|o| matches!(o.get(&first) as u16, vopd::V_DUAL_FMAAK_F32 | vopd::V_DUAL_FMAMK_F32));
        // s_setreg_imm32_b32, and VOP2's fmamk/fmaak (f32 and f16), carry a literal.
        let setreg_imm = enc == Encoding::Sopk && op == sopk::S_SETREG_IMM32_B32;
        let vop2_k = enc == Encoding::Vop2
            && matches!(
                op,
                vop2::V_FMAMK_F32_E32 | vop2::V_FMAAK_F32_E32 | vop2::V_FMAMK_F16_E32 | vop2::V_FMAAK_F16_E32
            );
        if inst.srcs().contains(&LITERAL) || vopd_k || setreg_imm || vop2_k {
            inst.literal = Some(dword(words, inst.size as usize)?);
            inst.size += 1;
        }
        Ok(inst)
    }

    /// The instruction's dwords as fields read them (the literal not among them).
    #[inline]
    pub fn words(&self) -> Words {
        [self.dw[0], self.dw[1], 0]
    }

    /// A DPP instruction's dwords: its first, then the DPP dword (0 where there is
    /// none), as the `*_dpp16` and `*_dpp8` field modules place their fields.
    #[inline]
    pub fn dpp_words(&self) -> Words {
        [self.dw[0], self.dpp.unwrap_or(0), 0]
    }

    /// The source operand numbers (9-bit space) the instruction reads.
    pub fn srcs(&self) -> Vec<u16> {
        let iw = self.words();
        match self.enc {
            Encoding::Sop2 => vec![fld::sop2::SSRC0.operand(&iw), fld::sop2::SSRC1.operand(&iw)],
            Encoding::Sop1 => vec![fld::sop1::SSRC0.operand(&iw)],
            Encoding::Sopc => vec![fld::sopc::SSRC0.operand(&iw), fld::sopc::SSRC1.operand(&iw)],
            Encoding::Vop1 | Encoding::Vopc | Encoding::Vop2 => vec![fld::vop1::SRC0.operand(&iw)],
            Encoding::Vop3 | Encoding::Vop3p => {
                vec![
                    fld::vop3::SRC0.operand(&iw),
                    fld::vop3::SRC1.operand(&iw),
                    fld::vop3::SRC2.operand(&iw),
                ]
            }
            Encoding::Vopd => vec![fld::vopd::SRCX0.operand(&iw), fld::vopd::SRCY0.operand(&iw)],
            _ => Vec::new(),
        }
    }

    /// The fields of a DS instruction.
    pub(crate) fn ds(&self) -> DsFields {
        use fld::ds::*;
        let iw = self.words();
        DsFields {
            offsets: [OFFSET0.get(&iw), OFFSET1.get(&iw)],
            vgprs: [ADDR.operand(&iw), DATA0.operand(&iw), DATA1.operand(&iw)],
            vdst: VDST.index(&iw),
        }
    }

    /// The fields of a VOP3P instruction.
    pub(crate) fn vop3p(&self) -> Vop3pFields {
        use fld::vop3p::*;
        let iw = self.words();
        Vop3pFields {
            dst: VDST.index(&iw),
            srcs: [SRC0.operand(&iw), SRC1.operand(&iw), SRC2.operand(&iw)],
            op_sel: [OPSEL.get(&iw), OPSEL_HI.get(&iw) | OPSEL_HI2.get(&iw) << 2],
            neg: [NEG.get(&iw), NEG_HI.get(&iw)],
            clamp: CLMP.is_set(&iw),
        }
    }
}

/// The encodings the decoder knows, each with its ENCODING field and its length in
/// dwords; the longest ENCODING fields first, as a shorter one is a prefix of
/// some longer ones (SOP2's 0b10 of SOP1's 0b101111101).
const ENCODINGS: [(Fixed, Encoding, usize); 16] = [
    (fld::sop1::ENCODING, Encoding::Sop1, fld::sop1::DWORDS),
    (fld::sopc::ENCODING, Encoding::Sopc, fld::sopc::DWORDS),
    (fld::sopp::ENCODING, Encoding::Sopp, fld::sopp::DWORDS),
    (fld::vop3p::ENCODING, Encoding::Vop3p, fld::vop3p::DWORDS),
    (fld::vop1::ENCODING, Encoding::Vop1, fld::vop1::DWORDS),
    (fld::vopc::ENCODING, Encoding::Vopc, fld::vopc::DWORDS),
    (fld::smem::ENCODING, Encoding::Smem, fld::smem::DWORDS),
    (fld::vop3::ENCODING, Encoding::Vop3, fld::vop3::DWORDS),
    (fld::vopd::ENCODING, Encoding::Vopd, fld::vopd::DWORDS),
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
    fn op(self) -> Bits {
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
            // VOPD's opcode is its first half's (OPX); OPY is read where it runs.
            Encoding::Vopd => fld::vopd::OPX,
            Encoding::Ds => fld::ds::OP,
            Encoding::Flat => fld::flat::OP,
            Encoding::Mubuf => fld::mubuf::OP,
            Encoding::Mtbuf => fld::mtbuf::OP,
        }
    }
}

/// A DS instruction's fields (LDS and GDS).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DsFields {
    /// OFFSET0 and OFFSET1: the two-address forms' offsets in elements, together
    /// ([`DsFields::offset`]) the others' byte offset.
    pub(crate) offsets: [u32; 2],
    /// ADDR, DATA0 and DATA1: VGPRs as source operand numbers (256 + index).
    pub(crate) vgprs: [u16; 3],
    /// VDST: the destination VGPR index.
    pub(crate) vdst: usize,
}

impl DsFields {
    /// OFFSET1:OFFSET0 as one 16-bit byte offset.
    pub(crate) fn offset(&self) -> u32 {
        self.offsets[0] | self.offsets[1] << 8
    }
}

/// A VOP3P instruction's fields.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vop3pFields {
    /// VDST: the destination VGPR index.
    pub(crate) dst: usize,
    /// SRC0..SRC2: operand numbers (9-bit space).
    pub(crate) srcs: [u16; 3],
    /// OP_SEL and OP_SEL_HI, one bit per source: which half feeds the low and the
    /// high half of the result.
    pub(crate) op_sel: [u32; 2],
    /// NEG_LO and NEG_HI, one bit per source.
    pub(crate) neg: [u32; 2],
    /// CLAMP.
    pub(crate) clamp: bool,
}

impl Inst {
    /// The mnemonic LLVM prints for this opcode (without a DPP suffix), where LLVM
    /// knows the opcode. VOPD pairs have none here; [`Inst::llvm`] prints both halves.
    pub fn mnemonic(&self) -> Option<&'static str> {
        self.sample().and_then(|s| s.split(' ').next())
    }
}

/// The instruction as LLVM prints it (see [`Inst::llvm`]), then its raw dwords.
impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{:08x}", self.llvm(), self.dw[0])?;
        let base = self.size as usize - self.literal.is_some() as usize - self.dpp.is_some() as usize;
        if base > 1 {
            write!(f, " {:08x}", self.dw[1])?;
        }
        if let Some(d) = self.dpp {
            write!(f, " {d:08x}")?;
        }
        if let Some(l) = self.literal {
            write!(f, " lit {l:08x}")?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longer_encoding_fields_are_tried_first() {
        let widths: Vec<u32> = ENCODINGS.iter().map(|(f, ..)| f.bits.width()).collect();
        assert!(widths.is_sorted_by(|a, b| a >= b), "{widths:?}");
        // No encoding's value is another's of the same width.
        for (k, (a, ea, _)) in ENCODINGS.iter().enumerate() {
            for (b, eb, _) in &ENCODINGS[k + 1..] {
                assert!(a != b, "{ea:?} and {eb:?}");
            }
        }
    }

    #[test]
    fn decodes_the_vadd_encodings() {
        let cases: &[(&[u32], Encoding, u16, u8)] = &[
            (&[0xF400_0080, 0xF800_0018], Encoding::Smem, 0, 2),
            (&[0xD656_0000, 0x0401_100F], Encoding::Vop3, 0x256, 2),
            (&[0xBF89_FC07], Encoding::Sopp, 9, 1),
            (&[0x7C98_0002], Encoding::Vopc, 0x4c, 1),
            (&[0xBE82_206A], Encoding::Sop1, 0x20, 1),
            (&[0x7E02_0280], Encoding::Vop1, 1, 1),
            (&[0x4006_0205], Encoding::Vop2, 0x20, 1),
            (&[0xDC52_0000, 0x027C_0002], Encoding::Flat, 0x14, 2),
            (&[0x0604_0702], Encoding::Vop2, 3, 1),
        ];
        for &(w, enc, op, size) in cases {
            let i = Inst::decode(w).unwrap();
            assert_eq!((i.enc, i.op, i.size), (enc, op, size), "{w:x?}");
        }
        // A literal makes the instruction one dword longer.
        let i = Inst::decode(&[0x7E00_02FF, 0x3f80_0000]).unwrap();
        assert_eq!((i.size, i.literal), (2, Some(0x3f80_0000)));
        assert_eq!(Inst::decode(&[0x7E00_02FF]), Err(DecodeError::Truncated));
        assert_eq!(Inst::decode(&[0xF400_0080]), Err(DecodeError::Truncated));
        assert_eq!(Inst::decode(&[]), Err(DecodeError::Truncated));
    }
}
