//! What the interpreter covers of the RDNA4 ISA, opcode by opcode, as RDNA3's report
//! does: every opcode of [`SPEC`] is assembled into a probe (from the generated field
//! table: the encoding's ENCODING and OP fields, a VGPR in each source), decoded and
//! run once on a fresh wave, and classified as implemented (it gets past the opcode;
//! a memory fault on the probe's addresses is the memory model at work), refused on
//! purpose with the reason, or missing with what the interpreter says.

use super::exec::Rdna4;
use super::fields as f;
use super::opcodes::SPEC;
use super::opcodes::op::vopd;
use crate::field::{Bits, Fixed, Src, Words};
use crate::memory::SliceMemory;
use crate::rdna3::{Entry, Status};

/// An encoding of the report: its ENCODING and OP fields, its length, and the source
/// fields the probe points at a VGPR.
struct Enc {
    encoding: Fixed,
    op: Bits,
    dwords: usize,
    srcs: &'static [Src],
}

/// The encoding named `name` in [`SPEC`].
fn encoding(name: &str) -> Option<Enc> {
    let enc = |encoding, op, dwords, srcs| {
        Some(Enc {
            encoding,
            op,
            dwords,
            srcs,
        })
    };
    match name {
        "SOP1" => enc(f::sop1::ENCODING, f::sop1::OP, f::sop1::DWORDS, &[]),
        "SOP2" => enc(f::sop2::ENCODING, f::sop2::OP, f::sop2::DWORDS, &[]),
        "SOPK" => enc(f::sopk::ENCODING, f::sopk::OP, f::sopk::DWORDS, &[]),
        "SOPC" => enc(f::sopc::ENCODING, f::sopc::OP, f::sopc::DWORDS, &[]),
        "SOPP" => enc(f::sopp::ENCODING, f::sopp::OP, f::sopp::DWORDS, &[]),
        "SMEM" => enc(f::smem::ENCODING, f::smem::OP, f::smem::DWORDS, &[]),
        "VOP1" => enc(f::vop1::ENCODING, f::vop1::OP, f::vop1::DWORDS, &[f::vop1::SRC0]),
        "VOP2" => enc(f::vop2::ENCODING, f::vop2::OP, f::vop2::DWORDS, &[f::vop2::SRC0]),
        "VOPC" => enc(f::vopc::ENCODING, f::vopc::OP, f::vopc::DWORDS, &[f::vopc::SRC0]),
        "VOP3" | "VOP3SD" => enc(
            f::vop3::ENCODING,
            f::vop3::OP,
            f::vop3::DWORDS,
            &[f::vop3::SRC0, f::vop3::SRC1, f::vop3::SRC2],
        ),
        "VOP3P" => enc(
            f::vop3p::ENCODING,
            f::vop3p::OP,
            f::vop3p::DWORDS,
            &[f::vop3p::SRC0, f::vop3p::SRC1, f::vop3p::SRC2],
        ),
        "VOPD" => enc(
            f::vopd::ENCODING,
            f::vopd::OPX,
            f::vopd::DWORDS,
            &[f::vopd::SRCX0, f::vopd::SRCY0],
        ),
        "DS" => enc(f::ds::ENCODING, f::ds::OP, f::ds::DWORDS, &[]),
        "VFLAT" => enc(f::vflat::ENCODING, f::vflat::OP, f::vflat::DWORDS, &[]),
        "VGLOBAL" => enc(f::vglobal::ENCODING, f::vglobal::OP, f::vglobal::DWORDS, &[]),
        "VSCRATCH" => enc(f::vscratch::ENCODING, f::vscratch::OP, f::vscratch::DWORDS, &[]),
        "VBUFFER" => enc(f::vbuffer::ENCODING, f::vbuffer::OP, f::vbuffer::DWORDS, &[]),
        _ => None,
    }
}

/// Why an opcode is refused on purpose, if it is.
fn refusal(encoding: &str, name: &str) -> Option<&'static str> {
    match encoding {
        "VIMAGE" | "VSAMPLE" => {
            return Some("graphics: image and sampler instructions (no image resources in compute)");
        }
        "VEXPORT" => return Some("graphics: exports to render targets and positions"),
        "VINTERP" | "VDSDIR" => return Some("graphics: pixel-shader parameter interpolation"),
        _ => {}
    }
    if name.starts_with("ds_gws_") {
        return Some("global wave sync (GWS) is a driver-reserved resource KFD compute queues do not get");
    }
    if name.starts_with("ds_bvh_stack") {
        return Some("ray tracing: the BVH traversal stack goes with image_bvh_intersect_ray");
    }
    if name == "global_atomic_ordered_add_b64" {
        return Some(
            "streamout's ordered append: it wraps the id at VGT_GS_MAX_WAVE_ID, a graphics register KFD compute queues do not program",
        );
    }
    if encoding == "VFLAT" && name.starts_with("global_") {
        return Some("a GLOBAL-only instruction: its FLAT-segment encoding is not an instruction");
    }
    if matches!(name, "s_barrier_init" | "s_barrier_join" | "s_barrier_leave") {
        return Some(super::exec::NAMED_BARRIERS);
    }
    if name == "s_alloc_vgpr" {
        return Some(super::exec::DYNAMIC_VGPRS);
    }
    if name.starts_with("global_load_tr_") {
        return Some(super::exec::TRANSPOSING_LOADS);
    }
    if name == "s_endpgm_saved" || name == "s_rfe_b64" {
        return Some("belongs to a trap handler or a context save, which the interpreter does not run");
    }
    None
}

/// The probe of opcode `op` of `enc`: the encoding, the opcode, a VGPR (v2) in each
/// source field (VOPD: the other half a move), the rest 0.
fn probe(name: &str, enc: &Enc, op: u16) -> Vec<u32> {
    let mut w: Words = [0; 3];
    enc.encoding.bits.put(&mut w, enc.encoding.value);
    if name == "VOPD" {
        // X holds the opcode where X has it (4 bits), else Y does (X a move).
        if op < 16 {
            f::vopd::OPX.put(&mut w, u32::from(op));
            f::vopd::OPY.put(&mut w, u32::from(vopd::V_DUAL_MOV_B32));
        } else {
            f::vopd::OPX.put(&mut w, u32::from(vopd::V_DUAL_MOV_B32));
            f::vopd::OPY.put(&mut w, u32::from(op));
        }
    } else {
        enc.op.put(&mut w, u32::from(op));
    }
    for s in enc.srcs {
        s.0.put(&mut w, 258);
    }
    let mut words = w[..enc.dwords].to_vec();
    // Room for a literal the opcode always carries (fmaak/fmamk, s_setreg_imm32).
    words.push(0);
    words
}

/// Runs one probe (RDNA4's NaN rule).
fn run(words: &[u32], mem: &SliceMemory<'_>) -> Status {
    crate::rdna3::classify_probe::<Rdna4>(words, mem, Some(crate::float::minmax::Nans::Num), |_| None)
}

/// One encoding of every opcode of the RDNA4 ISA the report probes (every encoding
/// but the graphics-only ones), in [`SPEC`] order: its encoding's name, its name and
/// its dwords (a VGPR in each source field, the rest 0). The disassembler's test
/// compares their text with LLVM's.
pub fn probes() -> Vec<(&'static str, &'static str, Vec<u32>)> {
    let mut out = Vec::new();
    for &(encoding, ops) in SPEC {
        let Some(enc) = self::encoding(encoding) else {
            continue;
        };
        for &(op, name) in ops {
            let words = probe(encoding, &enc, op);
            if let Ok(i) = super::Inst::decode(&words) {
                out.push((encoding, name, words[..usize::from(i.size)].to_vec()));
            }
        }
    }
    out
}

/// Every opcode of the RDNA4 ISA with how the interpreter treats it, in [`SPEC`] order.
pub fn coverage() -> Vec<Entry> {
    let mem = SliceMemory::new();
    crate::rdna3::coverage_entries(SPEC, |encoding, op, name| {
        match (refusal(encoding, name), self::encoding(encoding)) {
            (Some(why), _) => Status::Refused(why),
            (None, Some(enc)) => run(&probe(encoding, &enc, op), &mem),
            (None, None) => Status::Missing(format!("no probe for {encoding}")),
        }
    })
}

/// The coverage report (`coverage/rdna4.md`): per encoding, how many opcodes are
/// implemented, refused and missing; the refusals with their reasons; the missing
/// opcodes by name.
pub fn report() -> String {
    crate::rdna3::coverage_report(
        "RDNA4",
        "`cargo xtask isa-coverage rdna4`",
        "`rdna4::opcodes`",
        SPEC,
        &coverage(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed report is what the interpreter does now (`cargo xtask
    /// isa-coverage rdna4` rewrites it).
    #[test]
    fn committed_report_is_current() {
        crate::rdna3::coverage::checks::assert_committed("rdna4.md", &report(), "isa-coverage rdna4");
    }

    #[test]
    fn classifies_known_opcodes() {
        let c = coverage();
        let find = |enc: &str, name: &str| crate::rdna3::coverage::checks::status(&c, enc, name);
        // Lowered to RDNA3, RDNA4's own, refused.
        assert_eq!(find("VOP2", "v_add_f32_e32"), Status::Implemented);
        assert_eq!(find("SOP2", "s_add_f32"), Status::Implemented);
        assert_eq!(find("VGLOBAL", "global_load_b32"), Status::Implemented);
        assert!(matches!(find("VIMAGE", "image_load"), Status::Refused(_)));
        assert_eq!(find("VBUFFER", "buffer_load_b32"), Status::Implemented);
        assert_eq!(find("VBUFFER", "buffer_atomic_pk_add_bf16"), Status::Implemented);
        assert_eq!(find("VOP3P", "v_swmmac_f32_16x16x32_f16"), Status::Implemented);
    }

    /// Every encoding the interpreter has fields for gets a probe, and each probe
    /// decodes to the opcode it was built from.
    #[test]
    fn probes_decode_to_their_opcode() {
        for &(encoding, ops) in SPEC {
            let Some(enc) = self::encoding(encoding) else {
                assert!(
                    refusal(encoding, "").is_some(),
                    "{encoding} has neither a probe nor a refusal"
                );
                continue;
            };
            for &(op, name) in ops {
                let words = probe(encoding, &enc, op);
                let i = super::super::Inst::decode(&words).unwrap_or_else(|e| panic!("{name}: {e}"));
                let expect = if encoding == "VOPD" && op >= 16 {
                    vopd::V_DUAL_MOV_B32
                } else {
                    op
                };
                assert_eq!(i.op, expect, "{name}");
            }
        }
    }
}
