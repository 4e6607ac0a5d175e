//! One encoding of every opcode of the CDNA tables, for the test that reads them as
//! LLVM does (`cargo xtask listings` writes `llvm-mc-19 --mcpu=gfx942`'s text of each).

use super::fields as f;
use super::opcodes::SPEC;
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
