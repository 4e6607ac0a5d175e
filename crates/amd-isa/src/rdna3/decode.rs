//! Decoding gfx11 (RDNA3) instructions into typed fields. Untrusted input: a
//! truncated instruction or an unknown encoding is an error, never a panic.

use std::fmt;

use super::opcodes::op::{sopk, vop2, vopd};

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

/// Why an instruction cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The code ends inside the instruction.
    #[error("truncated instruction")]
    Truncated,
    /// An encoding the interpreter does not know.
    #[error("unknown encoding of {0:#010x}")]
    Unknown(u32),
}

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
        let w0 = *words.first().ok_or(DecodeError::Truncated)?;
        // Each format's ENCODING field, as the ISA's microcode formats give it: 9 bits
        // (31:23) for SOP1, SOPC and SOPP, 4 (31:28) for SOPK, 2 (31:30) for SOP2, 6
        // (31:26) for the 64-bit formats, 8 (31:24) for VOP3P, 7 (31:25) for VOP1 and
        // VOPC, and bit 31 clear for VOP2.
        let (enc, two) = match w0 >> 23 {
            0x17d => (Encoding::Sop1, false),
            0x17e => (Encoding::Sopc, false),
            0x17f => (Encoding::Sopp, false),
            _ => match w0 >> 28 {
                0xb => (Encoding::Sopk, false),
                0x8..=0xa => (Encoding::Sop2, false),
                _ => match w0 >> 26 {
                    0x3d => (Encoding::Smem, true),
                    0x35 => (Encoding::Vop3, true),
                    0x32 => (Encoding::Vopd, true),
                    0x36 => (Encoding::Ds, true),
                    0x37 => (Encoding::Flat, true),
                    0x38 => (Encoding::Mubuf, true),
                    0x3a => (Encoding::Mtbuf, true),
                    _ if w0 >> 24 == 0xcc => (Encoding::Vop3p, true),
                    _ => match w0 >> 25 {
                        0x3f => (Encoding::Vop1, false),
                        0x3e => (Encoding::Vopc, false),
                        _ if w0 >> 31 == 0 => (Encoding::Vop2, false),
                        _ => return Err(DecodeError::Unknown(w0)),
                    },
                },
            },
        };
        let w1 = if two {
            *words.get(1).ok_or(DecodeError::Truncated)?
        } else {
            0
        };
        let op = match enc {
            Encoding::Sop2 => (w0 >> 23) & 0x7f,
            Encoding::Sopk => (w0 >> 23) & 0x1f,
            Encoding::Sop1 => (w0 >> 8) & 0xff,
            Encoding::Sopc | Encoding::Sopp => (w0 >> 16) & 0x7f,
            Encoding::Smem => (w0 >> 18) & 0xff,
            Encoding::Vop1 => (w0 >> 9) & 0xff,
            Encoding::Vop2 => (w0 >> 25) & 0x3f,
            Encoding::Vopc => (w0 >> 17) & 0xff,
            Encoding::Vop3 | Encoding::Vop3p => (w0 >> 16) & 0x3ff,
            Encoding::Vopd => (w0 >> 22) & 0xf,
            Encoding::Ds => (w0 >> 18) & 0xff,
            Encoding::Flat => (w0 >> 18) & 0x7f,
            Encoding::Mubuf => (w0 >> 18) & 0xff,
            Encoding::Mtbuf => (w0 >> 15) & 0xf,
        } as u16;
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
        if vop && w0 & 0x1ff == DPP16 {
            inst.dpp = Some(*words.get(1).ok_or(DecodeError::Truncated)?);
            inst.size += 1;
            return Ok(inst);
        }
        if vop && matches!(w0 & 0x1ff, DPP8_FI_0 | DPP8_FI_1) {
            inst.dpp = Some(*words.get(1).ok_or(DecodeError::Truncated)?);
            inst.dpp8 = Some(w0 & 0x1ff == DPP8_FI_1);
            inst.size += 1;
            return Ok(inst);
        }
        // VOPD's FMAAK/FMAMK always carry a literal.
        let vopd_k = enc == Encoding::Vopd
            && [(w0 >> 22) & 0xf, (w0 >> 17) & 0x1f]
                .iter()
                .any(|&o| matches!(o as u16, vopd::V_DUAL_FMAAK_F32 | vopd::V_DUAL_FMAMK_F32));
        // s_setreg_imm32_b32, and VOP2's fmamk/fmaak (f32 and f16), carry a literal.
        let setreg_imm = enc == Encoding::Sopk && op == sopk::S_SETREG_IMM32_B32;
        let vop2_k = enc == Encoding::Vop2
            && matches!(
                op,
                vop2::V_FMAMK_F32_E32 | vop2::V_FMAAK_F32_E32 | vop2::V_FMAMK_F16_E32 | vop2::V_FMAAK_F16_E32
            );
        if inst.srcs().contains(&LITERAL) || vopd_k || setreg_imm || vop2_k {
            let lit = *words.get(inst.size as usize).ok_or(DecodeError::Truncated)?;
            inst.literal = Some(lit);
            inst.size += 1;
        }
        Ok(inst)
    }

    /// The source operand numbers (9-bit space) the instruction reads.
    pub fn srcs(&self) -> Vec<u16> {
        let [w0, w1] = self.dw;
        match self.enc {
            Encoding::Sop2 => vec![(w0 & 0xff) as u16, ((w0 >> 8) & 0xff) as u16],
            Encoding::Sop1 | Encoding::Sopc => {
                let mut v = vec![(w0 & 0xff) as u16];
                if self.enc == Encoding::Sopc {
                    v.push(((w0 >> 8) & 0xff) as u16);
                }
                v
            }
            Encoding::Vop1 | Encoding::Vopc | Encoding::Vop2 => vec![(w0 & 0x1ff) as u16],
            Encoding::Vop3 | Encoding::Vop3p => {
                vec![
                    (w1 & 0x1ff) as u16,
                    ((w1 >> 9) & 0x1ff) as u16,
                    ((w1 >> 18) & 0x1ff) as u16,
                ]
            }
            Encoding::Vopd => vec![(w0 & 0x1ff) as u16, (w1 & 0x1ff) as u16],
            _ => Vec::new(),
        }
    }

    /// Bits `lo..=hi` of dword `i`.
    pub fn bits(&self, i: usize, hi: u32, lo: u32) -> u32 {
        (self.dw[i] >> lo) & ((1u64 << (hi - lo + 1)) - 1) as u32
    }

    /// The fields of a DS instruction.
    pub(crate) fn ds(&self) -> DsFields {
        DsFields {
            offsets: [self.bits(0, 7, 0), self.bits(0, 15, 8)],
            vgprs: [self.bits(1, 7, 0), self.bits(1, 15, 8), self.bits(1, 23, 16)].map(|v| 256 + v as u16),
            vdst: self.bits(1, 31, 24) as usize,
        }
    }

    /// The fields of a VOP3P instruction.
    pub(crate) fn vop3p(&self) -> Vop3pFields {
        Vop3pFields {
            dst: self.bits(0, 7, 0) as usize,
            srcs: [self.bits(1, 8, 0), self.bits(1, 17, 9), self.bits(1, 26, 18)].map(|v| v as u16),
            op_sel: [self.bits(0, 13, 11), self.bits(1, 28, 27) | self.bits(0, 14, 14) << 2],
            neg: [self.bits(1, 31, 29), self.bits(0, 10, 8)],
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
