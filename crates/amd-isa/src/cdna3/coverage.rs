//! What the interpreter covers of the CDNA3 ISA, opcode by opcode, as RDNA3's and
//! RDNA4's reports do: every opcode's probe ([`super::probes`]: the encoding, the
//! opcode, a VGPR in the first source fields, the rest 0) is decoded and run once on
//! a fresh wave of 64 lanes, and classified as implemented (it gets past the opcode; a
//! memory fault on the probe's addresses is the memory model at work) or missing, with
//! what the interpreter says. The tables are CDNA4's (gfx950): opcodes gfx942 does not
//! have are counted too.

use std::collections::HashMap;

use super::exec::Cdna3;
use super::opcodes::SPEC;
use crate::memory::SliceMemory;
use crate::rdna3::{Entry, Status};

/// Runs one probe (gfx9's NaN rule); an instruction the interpreter does not run yet
/// is missing with the reason. A packed (VOP3P, not matrix) probe runs with OPSEL_HI's
/// bits set, as LLVM encodes such an instruction without an `op_sel_hi` of its own
/// (and the only form it takes of some: the 16-bit dot products); the matrix
/// instructions use those bits otherwise.
fn run(encoding: &str, name: &str, words: &[u32], mem: &SliceMemory<'_>) -> Status {
    let mut w: crate::field::Words = [0; 3];
    w[..words.len().min(3)].copy_from_slice(&words[..words.len().min(3)]);
    if encoding == "VOP3P" && !name.contains("mfma") && !name.starts_with("v_accvgpr") {
        super::fields::vop3p::OPSEL_HI.put(&mut w, 3);
        super::fields::vop3p::OPSEL_HI2.put(&mut w, 1);
    }
    crate::rdna3::classify_probe::<Cdna3>(
        &w[..words.len().min(3)],
        mem,
        Some(crate::float::minmax::Nans::Gfx9Legacy),
        super::exec::Decoded::not_run,
    )
}

/// Every opcode of the CDNA3 tables with how the interpreter treats it, in [`SPEC`]
/// order.
pub fn coverage() -> Vec<Entry> {
    let mem = SliceMemory::new();
    let probes: HashMap<(&str, &str), Vec<u32>> = super::probes()
        .into_iter()
        .map(|(encoding, name, words)| ((encoding, name), words))
        .collect();
    crate::rdna3::coverage_entries(SPEC, |encoding, _, name| {
        match (super::exec::refusal(name), probes.get(&(encoding, name))) {
            (Some(why), _) => Status::Refused(why),
            (None, Some(words)) => run(encoding, name, words, &mem),
            (None, None) => Status::Missing(format!("no probe for {encoding}")),
        }
    })
}

/// The coverage report (`coverage/cdna3.md`): per encoding, how many opcodes are
/// implemented and missing; the missing opcodes by name.
pub fn report() -> String {
    crate::rdna3::coverage_report(
        "CDNA3",
        "`cargo xtask isa-coverage cdna3`",
        "`cdna3::opcodes`",
        SPEC,
        &coverage(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed report is what the interpreter does now (`cargo xtask
    /// isa-coverage cdna3` rewrites it).
    #[test]
    fn committed_report_is_current() {
        crate::rdna3::coverage::checks::assert_committed("cdna3.md", &report(), "isa-coverage cdna3");
    }

    #[test]
    fn classifies_known_opcodes() {
        let c = coverage();
        let find = |enc: &str, name: &str| crate::rdna3::coverage::checks::status(&c, enc, name);
        // Lowered to RDNA3, CDNA3's own, not run yet.
        assert_eq!(find("VOP2", "v_add_f32_e32"), Status::Implemented);
        assert_eq!(find("VOP3", "v_lshl_add_u64"), Status::Implemented);
        assert_eq!(find("GLOBAL", "global_load_dword"), Status::Implemented);
        assert_eq!(find("VOP3P", "v_accvgpr_write"), Status::Implemented);
        assert_eq!(find("VOP3P", "v_mfma_f32_32x32x8_f16"), Status::Implemented);
        assert_eq!(find("VOP3P", "v_smfmac_f32_16x16x32_f16"), Status::Implemented);
        assert!(matches!(find("VOP3P", "v_mfma_f32_16x16x8_xf32"), Status::Missing(_)));
        assert_eq!(find("VOP3P", "v_dot4_i32_i8"), Status::Implemented);
        assert_eq!(find("VOP2", "v_dot4c_i32_i8_e32"), Status::Implemented);
        assert_eq!(find("MUBUF", "buffer_load_dword"), Status::Implemented);
        assert_eq!(find("MUBUF", "buffer_atomic_add"), Status::Implemented);
        assert_eq!(find("MUBUF", "buffer_load_format_d16_hi_x"), Status::Implemented);
        assert_eq!(find("MTBUF", "tbuffer_load_format_x"), Status::Implemented);
        assert_eq!(find("SMEM", "s_atomic_cmpswap_x2"), Status::Implemented);
        assert!(matches!(find("SMEM", "s_scratch_load_dword"), Status::Missing(_)));
        // gfx942's program control, clocks, constant compares and CK's buffer atomics;
        // CDNA4's opcodes and GWS refused.
        assert_eq!(find("SOPP", "s_trap"), Status::Implemented);
        assert_eq!(find("SMEM", "s_memtime"), Status::Implemented);
        assert_eq!(find("SOP1", "s_ff0_i32_b64"), Status::Implemented);
        assert_eq!(find("VOPC", "v_cmpx_tru_f32_e32"), Status::Implemented);
        assert_eq!(find("MUBUF", "buffer_atomic_pk_add_f16"), Status::Implemented);
        assert_eq!(find("VOP3P", "v_dot2_u32_u16"), Status::Implemented);
        assert!(matches!(find("VOP3", "v_bitop3_b32"), Status::Refused(_)));
        assert!(matches!(find("MUBUF", "buffer_atomic_pk_add_bf16"), Status::Refused(_)));
        assert!(matches!(find("DS", "ds_gws_sema_v"), Status::Refused(_)));
    }

    /// What gfx942 does not have is refused, never run: the opcodes LLVM 19 reads as
    /// no gfx942 instruction are not among those the interpreter runs (a list that
    /// named a gfx942 opcode would refuse real code).
    #[test]
    fn runs_nothing_gfx942_lacks() {
        let c = coverage();
        let refused = c
            .iter()
            .filter(|e| !super::super::on_gfx942(e.name))
            .inspect(|e| assert!(matches!(e.status, Status::Refused(_)), "{} runs", e.name))
            .count();
        assert!(refused > 90, "{refused} opcodes gfx942 lacks");
        assert!(super::super::on_gfx942("v_mad_mix_f32") && super::super::on_gfx942("s_trap"));
    }
}
