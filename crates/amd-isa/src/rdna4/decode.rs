//! Decoding gfx12 (RDNA4) instructions: the encoding by its ENCODING field and the
//! length by its fields (both from the generated field table, `fields`), then the DPP
//! and literal dwords. Untrusted input: a truncated instruction or an unknown encoding
//! is an error, never a panic.

use super::fields as fld;
use super::opcodes::op::{sop2, sopk, vop2, vopd};
use crate::field::{Bits, Fixed, Src, Words};

pub use crate::decode::DecodeError;
use crate::decode::{body, dword, encoding};

/// The instruction encodings of gfx12.
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
    /// Vector, three sources (also VOP1/VOP2/VOPC ops in long form, and VOP3SD).
    Vop3,
    /// Packed vector (also WMMA and SWMMAC).
    Vop3p,
    /// Dual-issue vector.
    Vopd,
    /// Parameter interpolation.
    Vinterp,
    /// LDS direct and parameter loads.
    Vdsdir,
    /// LDS.
    Ds,
    /// Buffer memory through a resource (MUBUF and MTBUF in one).
    Vbuffer,
    /// Flat memory.
    Vflat,
    /// Global memory.
    Vglobal,
    /// Scratch memory.
    Vscratch,
    /// Image loads and stores.
    Vimage,
    /// Image samples.
    Vsample,
    /// Exports.
    Vexport,
}

/// Which DPP form an instruction takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dpp {
    /// DPP16: a row, bank and lane control.
    Dpp16,
    /// DPP8: a lane select per lane of each group of eight; disabled source lanes
    /// read 0 unless `fetch_inactive`.
    Dpp8 {
        /// FI: disabled source lanes are read too.
        fetch_inactive: bool,
    },
}

/// One decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inst {
    /// Encoding.
    pub enc: Encoding,
    /// Opcode within the encoding (VOPD: its first half's, OPX).
    pub op: u16,
    /// The instruction's dwords, a DPP dword included, the literal not; 0 past its
    /// end. The `fields` modules place their fields in these.
    pub words: Words,
    /// The 32-bit literal constant.
    pub literal: Option<u32>,
    /// Size in dwords (the DPP dword and the literal included).
    pub size: u8,
    /// The DPP form, when the instruction has a DPP dword (VOP1, VOP2 and VOPC:
    /// the second dword; VOP3 and VOP3P: the third).
    pub dpp: Option<Dpp>,
}

/// Operand number that announces a DPP16 dword.
pub const DPP16: u16 = 250;
/// Operand number that announces a DPP8 dword (disabled lanes read 0).
pub const DPP8_FI_0: u16 = 233;
/// Operand number that announces a DPP8 dword with fetch-inactive.
pub const DPP8_FI_1: u16 = 234;
/// Operand number of a literal constant.
pub const LITERAL: u16 = 255;

/// The encodings, each with its ENCODING field and its length in dwords; the longest
/// ENCODING fields first, as a shorter one is a prefix of some longer ones (SOP2's 0b10
/// of SOP1's 0b101111101).
const ENCODINGS: [(Fixed, Encoding, usize); 22] = [
    (fld::sop1::ENCODING, Encoding::Sop1, fld::sop1::DWORDS),
    (fld::sopc::ENCODING, Encoding::Sopc, fld::sopc::DWORDS),
    (fld::sopp::ENCODING, Encoding::Sopp, fld::sopp::DWORDS),
    (fld::vop3p::ENCODING, Encoding::Vop3p, fld::vop3p::DWORDS),
    (fld::vinterp::ENCODING, Encoding::Vinterp, fld::vinterp::DWORDS),
    (fld::vdsdir::ENCODING, Encoding::Vdsdir, fld::vdsdir::DWORDS),
    (fld::vflat::ENCODING, Encoding::Vflat, fld::vflat::DWORDS),
    (fld::vglobal::ENCODING, Encoding::Vglobal, fld::vglobal::DWORDS),
    (fld::vscratch::ENCODING, Encoding::Vscratch, fld::vscratch::DWORDS),
    (fld::vop1::ENCODING, Encoding::Vop1, fld::vop1::DWORDS),
    (fld::vopc::ENCODING, Encoding::Vopc, fld::vopc::DWORDS),
    (fld::smem::ENCODING, Encoding::Smem, fld::smem::DWORDS),
    (fld::vop3::ENCODING, Encoding::Vop3, fld::vop3::DWORDS),
    (fld::vopd::ENCODING, Encoding::Vopd, fld::vopd::DWORDS),
    (fld::ds::ENCODING, Encoding::Ds, fld::ds::DWORDS),
    (fld::vbuffer::ENCODING, Encoding::Vbuffer, fld::vbuffer::DWORDS),
    (fld::vimage::ENCODING, Encoding::Vimage, fld::vimage::DWORDS),
    (fld::vsample::ENCODING, Encoding::Vsample, fld::vsample::DWORDS),
    (fld::vexport::ENCODING, Encoding::Vexport, fld::vexport::DWORDS),
    (fld::sopk::ENCODING, Encoding::Sopk, fld::sopk::DWORDS),
    (fld::sop2::ENCODING, Encoding::Sop2, fld::sop2::DWORDS),
    (fld::vop2::ENCODING, Encoding::Vop2, fld::vop2::DWORDS),
];

impl Encoding {
    /// The encoding's OP field (VOPD: OPX), `None` for exports, which have none.
    fn op(self) -> Option<Bits> {
        Some(match self {
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
            Encoding::Vopd => fld::vopd::OPX,
            Encoding::Vinterp => fld::vinterp::OP,
            Encoding::Vdsdir => fld::vdsdir::OP,
            Encoding::Ds => fld::ds::OP,
            Encoding::Vbuffer => fld::vbuffer::OP,
            Encoding::Vflat => fld::vflat::OP,
            Encoding::Vglobal => fld::vglobal::OP,
            Encoding::Vscratch => fld::vscratch::OP,
            Encoding::Vimage => fld::vimage::OP,
            Encoding::Vsample => fld::vsample::OP,
            Encoding::Vexport => return None,
        })
    }

    /// The source operand fields that may hold a literal or announce DPP.
    fn srcs(self) -> &'static [Src] {
        match self {
            Encoding::Sop2 => &[fld::sop2::SSRC0, fld::sop2::SSRC1],
            Encoding::Sop1 => &[fld::sop1::SSRC0],
            Encoding::Sopc => &[fld::sopc::SSRC0, fld::sopc::SSRC1],
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => &[fld::vop1::SRC0],
            Encoding::Vop3 | Encoding::Vop3p => &[fld::vop3::SRC0, fld::vop3::SRC1, fld::vop3::SRC2],
            Encoding::Vopd => &[fld::vopd::SRCX0, fld::vopd::SRCY0],
            _ => &[],
        }
    }
}

impl Inst {
    /// Decodes the instruction at the start of `words`.
    pub fn decode(words: &[u32]) -> Result<Inst, DecodeError> {
        let (enc, dwords) = encoding(&ENCODINGS, dword(words, 0)?)?;
        let mut w = body(words, dwords)?;
        let mut size = dwords;
        // DPP: src0 names the DPP dword that follows.
        let src0 = enc.srcs().first().map(|s| s.operand(&w));
        let dpp = match (enc, src0) {
            (Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p, Some(s)) => match s {
                DPP16 => Some(Dpp::Dpp16),
                DPP8_FI_0 | DPP8_FI_1 => Some(Dpp::Dpp8 {
                    fetch_inactive: s == DPP8_FI_1,
                }),
                _ => None,
            },
            _ => None,
        };
        if dpp.is_some() {
            w[size] = dword(words, size)?;
            size += 1;
        }
        let op = enc.op().map_or(0, |f| f.get(&w)) as u16;
        // Literals: a source operand of 255, or an opcode that always carries one
        // (s_setreg_imm32_b32, the scalar and vector fmamk/fmaak, VOPD's FMAAK/FMAMK).
        let always = match enc {
            Encoding::Sopk => op == sopk::S_SETREG_IMM32_B32,
            Encoding::Sop2 => matches!(op, sop2::S_FMAAK_F32 | sop2::S_FMAMK_F32),
            Encoding::Vop2 => matches!(
                op,
                vop2::V_FMAMK_F32_E32 | vop2::V_FMAAK_F32_E32 | vop2::V_FMAMK_F16_E32 | vop2::V_FMAAK_F16_E32
            ),
            Encoding::Vopd => [fld::vopd::OPX, fld::vopd::OPY]
                .iter()
                .any(|o| matches!(o.get(&w) as u16, vopd::V_DUAL_FMAAK_F32 | vopd::V_DUAL_FMAMK_F32)),
            _ => false,
        };
        let literal = if dpp.is_none() && (always || enc.srcs().iter().any(|s| s.operand(&w) == LITERAL)) {
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
            dpp,
        })
    }

    /// The opcode's name as the ISA (and LLVM, in lower case) spells it, where the
    /// encoding has such an opcode; VOPD names its first half.
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
            Encoding::Vopd => Vopd::from_op(op).map(Vopd::name),
            Encoding::Vinterp => Vinterp::from_op(op).map(Vinterp::name),
            Encoding::Vdsdir => Vdsdir::from_op(op).map(Vdsdir::name),
            Encoding::Ds => Ds::from_op(op).map(Ds::name),
            Encoding::Vbuffer => Vbuffer::from_op(op).map(Vbuffer::name),
            Encoding::Vflat => Vflat::from_op(op).map(Vflat::name),
            Encoding::Vglobal => Vglobal::from_op(op).map(Vglobal::name),
            Encoding::Vscratch => Vscratch::from_op(op).map(Vscratch::name),
            Encoding::Vimage => Vimage::from_op(op).map(Vimage::name),
            Encoding::Vsample => Vsample::from_op(op).map(Vsample::name),
            Encoding::Vexport => Vexport::from_op(op).map(Vexport::name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longer_encoding_fields_are_tried_first() {
        let widths: Vec<u32> = ENCODINGS.iter().map(|(f, ..)| f.bits.width()).collect();
        assert!(widths.is_sorted_by(|a, b| a >= b), "{widths:?}");
        for (k, (a, ea, _)) in ENCODINGS.iter().enumerate() {
            for (b, eb, _) in &ENCODINGS[k + 1..] {
                assert!(a != b, "{ea:?} and {eb:?}");
            }
        }
    }

    /// Instructions as `llvm-mc-19 -arch=amdgcn -mcpu=gfx1201 -show-encoding` assembles
    /// them (its bytes, little-endian), with the encoding, the opcode's name and the
    /// size the decoder must find.
    #[test]
    fn decodes_what_llvm_assembles() {
        #[rustfmt::skip]
        let cases: &[(&str, &[u8], Encoding, &str, u8)] = &[
            ("s_mov_b32 s0, s1", &[0x01, 0x00, 0x80, 0xbe], Encoding::Sop1, "s_mov_b32", 1),
            ("s_mov_b32 s0, 0x12345678", &[0xff, 0x00, 0x80, 0xbe, 0x78, 0x56, 0x34, 0x12], Encoding::Sop1, "s_mov_b32", 2),
            ("s_add_co_u32 s0, s1, s2", &[0x01, 0x02, 0x00, 0x80], Encoding::Sop2, "s_add_co_u32", 1),
            ("s_movk_i32 s0, 0x1234", &[0x34, 0x12, 0x00, 0xb0], Encoding::Sopk, "s_movk_i32", 1),
            ("s_cmp_eq_u32 s0, s1", &[0x00, 0x01, 0x06, 0xbf], Encoding::Sopc, "s_cmp_eq_u32", 1),
            ("s_wait_loadcnt 0x0", &[0x00, 0x00, 0xc0, 0xbf], Encoding::Sopp, "s_wait_loadcnt", 1),
            ("s_wait_kmcnt 0x0", &[0x00, 0x00, 0xc7, 0xbf], Encoding::Sopp, "s_wait_kmcnt", 1),
            ("s_endpgm", &[0x00, 0x00, 0xb0, 0xbf], Encoding::Sopp, "s_endpgm", 1),
            ("s_load_b64 s[0:1], s[2:3], 0x123456", &[0x01, 0x20, 0x00, 0xf4, 0x56, 0x34, 0x12, 0xf8], Encoding::Smem, "s_load_b64", 2),
            ("s_setreg_imm32_b32 hwreg(HW_REG_MODE), 0x1234", &[0x01, 0xf8, 0x80, 0xb9, 0x34, 0x12, 0x00, 0x00], Encoding::Sopk, "s_setreg_imm32_b32", 2),
            ("v_mov_b32_e32 v0, v1", &[0x01, 0x03, 0x00, 0x7e], Encoding::Vop1, "v_mov_b32_e32", 1),
            ("v_fmamk_f32 v0, v1, 0x40000000, v2", &[0x01, 0x05, 0x00, 0x58, 0x00, 0x00, 0x00, 0x40], Encoding::Vop2, "v_fmamk_f32_e32", 2),
            ("v_cmp_eq_u32_e32 vcc_lo, v1, v2", &[0x01, 0x05, 0x94, 0x7c], Encoding::Vopc, "v_cmp_eq_u32_e32", 1),
            ("v_add_f32_e64 v0, |v1|, -v2", &[0x00, 0x01, 0x03, 0xd5, 0x01, 0x05, 0x02, 0x40], Encoding::Vop3, "v_add_f32_e64", 2),
            ("v_add_co_u32 v0, s0, v1, v2", &[0x00, 0x00, 0x00, 0xd7, 0x01, 0x05, 0x02, 0x00], Encoding::Vop3, "v_add_co_u32", 2),
            ("v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]", &[0x00, 0x40, 0x40, 0xcc, 0x08, 0x19, 0x02, 0x1c], Encoding::Vop3p, "v_wmma_f32_16x16x16_f16", 2),
            ("v_dual_fmaak_f32 v0, v1, v2, 0x40000000 :: v_dual_mov_b32 v3, v4", &[0x01, 0x05, 0x50, 0xc8, 0x04, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x40], Encoding::Vopd, "v_dual_fmaak_f32", 3),
            ("v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", &[0xfa, 0x02, 0x00, 0x7e, 0x01, 0xb1, 0x00, 0xff], Encoding::Vop1, "v_mov_b32_e32", 2),
            ("v_add_f32_e64_dpp v0, v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", &[0x00, 0x00, 0x03, 0xd5, 0xfa, 0x04, 0x02, 0x00, 0x01, 0xb1, 0x00, 0xff], Encoding::Vop3, "v_add_f32_e64", 3),
            ("ds_load_b32 v0, v1 offset:16", &[0x10, 0x00, 0xd8, 0xd8, 0x01, 0x00, 0x00, 0x00], Encoding::Ds, "ds_load_b32", 2),
            ("global_load_b32 v0, v1, s[2:3] offset:-16", &[0x02, 0x00, 0x05, 0xee, 0x00, 0x00, 0x00, 0x00, 0x01, 0xf0, 0xff, 0xff], Encoding::Vglobal, "global_load_b32", 3),
            ("flat_load_b32 v0, v[1:2]", &[0x7c, 0x00, 0x05, 0xec, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00], Encoding::Vflat, "flat_load_b32", 3),
            ("scratch_load_b32 v0, off, s2 offset:32", &[0x02, 0x00, 0x05, 0xed, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00], Encoding::Vscratch, "scratch_load_b32", 3),
            ("buffer_load_b32 v0, v1, s[4:7], s2 offen offset:64", &[0x02, 0x00, 0x05, 0xc4, 0x00, 0x08, 0x80, 0x40, 0x01, 0x40, 0x00, 0x00], Encoding::Vbuffer, "buffer_load_b32", 3),
            ("tbuffer_load_format_x v0, v1, s[4:7], s2 format:[BUF_FMT_32_FLOAT] offen", &[0x02, 0x00, 0x20, 0xc4, 0x00, 0x08, 0x00, 0x4b, 0x01, 0x00, 0x00, 0x00], Encoding::Vbuffer, "tbuffer_load_format_x", 3),
            ("image_load v[0:3], v1, s[4:11] dmask:0xf dim:SQ_RSRC_IMG_1D", &[0x00, 0x00, 0xc0, 0xd3, 0x00, 0x08, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00], Encoding::Vimage, "image_load", 3),
            ("image_sample v[0:3], v1, s[4:11], s[12:15] dmask:0xf dim:SQ_RSRC_IMG_1D", &[0x00, 0xc0, 0xc6, 0xe7, 0x00, 0x08, 0x00, 0x06, 0x01, 0x00, 0x00, 0x00], Encoding::Vsample, "image_sample", 3),
            ("v_interp_p10_f32 v0, v1, v2, v3 wait_exp:0", &[0x00, 0x00, 0x00, 0xcd, 0x01, 0x05, 0x0e, 0x04], Encoding::Vinterp, "v_interp_p10_f32", 2),
            ("ds_direct_load v0", &[0x00, 0x00, 0x10, 0xce], Encoding::Vdsdir, "ds_direct_load", 1),
        ];
        for &(text, bytes, enc, name, size) in cases {
            let words: Vec<u32> = bytes
                .chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            let i = Inst::decode(&words).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((i.enc, i.name(), i.size), (enc, Some(name), size), "{text}");
            // Every dword is needed: one fewer is truncated.
            assert_eq!(
                Inst::decode(&words[..words.len() - 1]),
                Err(DecodeError::Truncated),
                "{text}"
            );
        }
        // The DPP forms and the literal land where the field modules read them.
        let dpp8 = Inst::decode(&[0x7e00_02e9, 0xde54_c101]).unwrap();
        assert_eq!(dpp8.dpp, Some(Dpp::Dpp8 { fetch_inactive: false }));
        assert_eq!(fld::vop1_dpp8::LANE_SEL_0.get(&dpp8.words), 1);
        assert_eq!(fld::vop1_dpp8::VSRC0.index(&dpp8.words), 1);
        let vop3_dpp = Inst::decode(&[0xd503_0000, 0x0002_04fa, 0xff00_b101]).unwrap();
        assert_eq!(vop3_dpp.dpp, Some(Dpp::Dpp16));
        assert_eq!(fld::vop3_dpp16::DPP.get(&vop3_dpp.words), 0xb1);
        assert_eq!(fld::vop3_dpp16::ROW_MASK.get(&vop3_dpp.words), 0xf);
        let global = Inst::decode(&[0xee05_0002, 0, 0xffff_f001]).unwrap();
        assert_eq!(fld::vglobal::IOFFSET.signed(&global.words), -16);
        assert_eq!(fld::vglobal::SADDR.operand(&global.words), 2);
        let lit = Inst::decode(&[0xbe80_00ff, 0x1234_5678]).unwrap();
        assert_eq!(lit.literal, Some(0x1234_5678));
        assert_eq!(Inst::decode(&[]), Err(DecodeError::Truncated));
        assert_eq!(Inst::decode(&[0xffff_ffff]), Err(DecodeError::Unknown(0xffff_ffff)));
    }
}
