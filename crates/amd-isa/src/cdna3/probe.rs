//! One encoding of every opcode of the CDNA tables, for the test that reads them as
//! LLVM does (`cargo xtask listings` writes `llvm-mc-19 --mcpu=gfx942`'s text of each).

use super::fields as f;
use super::opcodes::SPEC;
use super::operands::Field;
use crate::field::{Bits, Fixed, Src, Words};

/// An encoding as a probe builds it: its fixed fields, its opcode field, its length,
/// and the source fields a probe fills.
struct Enc {
    fixed: &'static [Fixed],
    op: Bits,
    dwords: usize,
    srcs: &'static [Src],
}

/// The encoding the tables name `name` (upper case).
fn encoding(name: &str) -> Option<Enc> {
    let enc = |fixed, op, dwords, srcs| {
        Some(Enc {
            fixed,
            op,
            dwords,
            srcs,
        })
    };
    match name {
        "SOP1" => enc(&[f::sop1::ENCODING], f::sop1::OP, f::sop1::DWORDS, &[]),
        "SOP2" => enc(&[f::sop2::ENCODING], f::sop2::OP, f::sop2::DWORDS, &[]),
        "SOPK" => enc(&[f::sopk::ENCODING], f::sopk::OP, f::sopk::DWORDS, &[]),
        "SOPC" => enc(&[f::sopc::ENCODING], f::sopc::OP, f::sopc::DWORDS, &[]),
        "SOPP" => enc(&[f::sopp::ENCODING], f::sopp::OP, f::sopp::DWORDS, &[]),
        "SMEM" => enc(&[f::smem::ENCODING], f::smem::OP, f::smem::DWORDS, &[]),
        "VOP1" => enc(&[f::vop1::ENCODING], f::vop1::OP, f::vop1::DWORDS, &[f::vop1::SRC0]),
        "VOP2" => enc(&[f::vop2::ENCODING], f::vop2::OP, f::vop2::DWORDS, &[f::vop2::SRC0]),
        "VOPC" => enc(&[f::vopc::ENCODING], f::vopc::OP, f::vopc::DWORDS, &[f::vopc::SRC0]),
        "VOP3" => enc(&[f::vop3::ENCODING], f::vop3::OP, f::vop3::DWORDS, &[f::vop3::SRC0]),
        "VOP3SD" => enc(
            &[f::vop3sd::ENCODING],
            f::vop3sd::OP,
            f::vop3sd::DWORDS,
            &[f::vop3sd::SRC0],
        ),
        "VOP3P" => enc(
            &[f::vop3p::ENCODING],
            f::vop3p::OP,
            f::vop3p::DWORDS,
            &[f::vop3p::SRC0, f::vop3p::SRC1, f::vop3p::SRC2],
        ),
        "DS" => enc(&[f::ds::ENCODING], f::ds::OP, f::ds::DWORDS, &[]),
        "FLAT" => enc(&[f::flat::ENCODING, f::flat::SEG], f::flat::OP, f::flat::DWORDS, &[]),
        "SCRATCH" => enc(
            &[f::scratch::ENCODING, f::scratch::SEG],
            f::scratch::OP,
            f::scratch::DWORDS,
            &[],
        ),
        "GLOBAL" => enc(
            &[f::global::ENCODING, f::global::SEG],
            f::global::OP,
            f::global::DWORDS,
            &[],
        ),
        "MUBUF" => enc(&[f::mubuf::ENCODING], f::mubuf::OP, f::mubuf::DWORDS, &[]),
        "MTBUF" => enc(&[f::mtbuf::ENCODING], f::mtbuf::OP, f::mtbuf::DWORDS, &[]),
        _ => None,
    }
}

/// One encoding of every opcode of the tables, in their order: its encoding's name,
/// its name and its dwords. Those are the encoding's fixed fields, the opcode, and a
/// VGPR (v2) in the first source field (in VOP3P the first two, and all three for the
/// matrix instructions; the AccVGPR moves only the first); the rest is 0, as a source
/// the opcode does not read must be, and so is a literal the opcode always carries.
pub fn probes() -> Vec<(&'static str, &'static str, Vec<u32>)> {
    let mut out = Vec::new();
    for &(name, ops) in SPEC {
        let Some(enc) = encoding(name) else {
            continue;
        };
        for &(op, opname) in ops {
            let mut w: Words = [0; 3];
            for fixed in enc.fixed {
                fixed.bits.put(&mut w, fixed.value);
            }
            enc.op.put(&mut w, u32::from(op));
            // VOP3P: the matrix instructions read three VGPR sources, the packed ones
            // two (or three, the third then s0).
            let srcs = match enc.srcs {
                [a, ..] if opname.starts_with("v_accvgpr") => &[*a][..],
                [a, b, _] if name == "VOP3P" && !opname.contains("mfma") => &[*a, *b][..],
                all => all,
            };
            for s in srcs {
                s.0.put(&mut w, 258);
            }
            let mut words = w[..enc.dwords].to_vec();
            words.push(0);
            if let Ok(i) = super::Inst::decode(&words) {
                out.push((name, opname, words[..usize::from(i.size)].to_vec()));
            }
        }
    }
    out
}

/// `per_opcode` encodings of every opcode of the tables with every other bit random
/// (a fixed seed, so the list is the same each time): its encoding's name, its name
/// and its dwords (as many as the decoder reads). In VOP1, VOP2 and VOPC the second
/// and third of each opcode's variants name an SDWA and a DPP dword; a few fields
/// that make almost any encoding invalid keep their usual value. For the
/// disassembler's test of modifiers, offsets and operands that the probes leave 0.
pub fn variants(per_opcode: usize) -> Vec<(&'static str, &'static str, Vec<u32>)> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    };
    let mut out = Vec::new();
    for &(name, ops) in SPEC {
        let Some(enc) = encoding(name) else {
            continue;
        };
        for &(op, opname) in ops {
            for k in 0..per_opcode {
                let mut w: Words = [random(), random(), random()];
                for fixed in enc.fixed {
                    fixed.bits.put(&mut w, fixed.value);
                }
                enc.op.put(&mut w, u32::from(op));
                if let ([src0], 1 | 2) = (enc.srcs, k) {
                    if matches!(name, "VOP1" | "VOP2" | "VOPC") {
                        src0.0.put(
                            &mut w,
                            if k == 1 {
                                u32::from(super::SDWA)
                            } else {
                                u32::from(super::DPP)
                            },
                        );
                    }
                }
                // Fields that make most encodings invalid, kept to their usual value:
                // GDS (gfx940 has none), a FLAT access's SADDR (it takes none: 0), VOP3's
                // op_sel on every other variant (only 16-bit operations take it).
                match name {
                    "DS" => f::ds::GDS.put(&mut w, 0),
                    "FLAT" => f::flat::SADDR.0.put(&mut w, 0),
                    "VOP3" | "VOP3SD" if k % 2 == 0 => f::vop3::OPSEL.put(&mut w, 0),
                    _ => {}
                }
                // VOP3's modifiers (which integer operations refuse): none on the
                // first of four variants, only the output's on the second, only the
                // sources' on the third, all on the fourth.
                if matches!(name, "VOP3" | "VOP3SD") {
                    let (output, sources) = match k % 4 {
                        0 => (false, false),
                        1 => (true, false),
                        2 => (false, true),
                        _ => (true, true),
                    };
                    if !output {
                        f::vop3::OMOD.put(&mut w, 0);
                        f::vop3::CLMP.put(&mut w, 0);
                    }
                    if !sources {
                        f::vop3::NEG.put(&mut w, 0);
                        if name == "VOP3" {
                            f::vop3::ABS.put(&mut w, 0);
                        }
                    }
                }
                // Operand fields the opcode does not read must be 0.
                if let Ok(i) = super::Inst::decode(&w) {
                    let listed = super::operands::operands(i.enc, i.op);
                    let unused = |field| !listed.iter().any(|o| o.field == field);
                    let fields: &[(Field, Bits)] = match name {
                        "VOP3" | "VOP3SD" | "VOP3P" => {
                            &[(Field::Src1, f::vop3::SRC1.0), (Field::Src2, f::vop3::SRC2.0)]
                        }
                        "DS" => &[
                            (Field::Vdst, f::ds::VDST.0),
                            (Field::Data0, f::ds::DATA0.0),
                            (Field::Data1, f::ds::DATA1.0),
                        ],
                        _ => &[],
                    };
                    for &(field, bits) in fields {
                        if unused(field) {
                            bits.put(&mut w, 0);
                        }
                    }
                }
                if let Ok(i) = super::Inst::decode(&w) {
                    out.push((name, opname, w[..usize::from(i.size)].to_vec()));
                }
            }
        }
    }
    out
}
