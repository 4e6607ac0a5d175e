//! RDNA4 (gfx1200, gfx1201): the instruction set's opcode tables and instruction
//! fields, generated from AMD's machine-readable RDNA4 ISA as tinygrad's tables give it
//! (`cargo xtask gen-opcodes --gen rdna4`: 1,563 opcodes in 23 encodings); the decoder
//! ([`Inst::decode`]: every encoding, the DPP forms of VOP1/VOP2/VOPC and of
//! VOP3/VOP3P, literals; tested against every instruction of the gfx1201 test
//! kernels as `llvm-objdump-19` reads them); and the [`Interpreter`].
//!
//! RDNA4 runs on RDNA3's machine (its waves, scheduler, memory and arithmetic), its
//! waves started as gfx12's (workgroup ids in TTMP9/TTMP7, no IEEE mode, IEEE
//! 754-2019 minimum and maximum). An RDNA4 instruction whose encoding lies as RDNA3's
//! does and whose opcode has an RDNA3 counterpart of the same meaning
//! ([`Inst::to_rdna3`], the table `cargo xtask gen-lowering` generates from AMD's ISA
//! as tinygrad extracts it: the same name and pseudocode, a rename, a VOP2 form of an
//! RDNA3 VOP3 opcode, the `*_num` minimum and maximum) is that RDNA3 instruction: it
//! runs and prints ([`Inst::text`]) as it. The memory encodings (SMEM, VGLOBAL,
//! VFLAT, VSCRATCH, VBUFFER, their opcodes mapped by name) read their own fields (24-bit
//! offsets, TH) and hand RDNA3's executor the access; the split `s_wait_*` counters
//! and barrier, `s_endpgm`, the 64-bit scalar adds, the scalar float ALU's f32 forms,
//! the new atomics and WMMA's f32 forms (gfx12's register layout over RDNA3's
//! arithmetic) are RDNA4's own; the scalar float ALU's f16 forms and the
//! transcendentals with a scalar result run as the RDNA3 VALU instruction on lane 0,
//! and the IEEE 754-2019 `v_minimum*`/`v_maximum*` as RDNA3's minimum and maximum with
//! NaN propagating; the 8-bit float conversions, dot products and WMMA are in `fp8`
//! and `matrix`. What none covers stops the dispatch naming the instruction: among
//! what compilers emit, SWMMAC, the 4-bit WMMA and the images. Every instruction of the gfx1201 test kernels prints ([`Inst::text`])
//! as `llvm-objdump-19` prints it; [`report`] is the opcode-by-opcode coverage in
//! `coverage/rdna4.md` (`cargo xtask isa-coverage rdna4`). What
//! changes against RDNA3 is in `docs/reference/rdna4.md`.

mod coverage;
mod decode;
mod disasm;
mod exec;
mod fp8;
mod lower;
mod matrix;
#[cfg(test)]
mod semantics;
#[cfg(test)]
mod testing;
#[rustfmt::skip]
#[path = "generated/lowering.rs"]
mod lowering;
#[rustfmt::skip]
#[path = "generated/fields.rs"]
pub mod fields;
#[rustfmt::skip]
#[path = "generated/opcodes.rs"]
pub mod opcodes;

pub use coverage::{coverage, probes, report};
pub use decode::{DPP8_FI_0, DPP8_FI_1, DPP16, DecodeError, Dpp, Encoding, Inst, LITERAL};

use crate::{Dispatch, ExecError, Memory};

/// The RDNA4 interpreter: runs whole gfx12 dispatches on a [`Memory`], with the
/// settings and counters of the RDNA3 interpreter it wraps (the machine is the same;
/// the instructions are RDNA4's, and the workgroup ids are in TTMP9 and TTMP7 as well,
/// as gfx12's architected SGPRs put them).
#[derive(Debug, Clone, Default)]
pub struct Interpreter(pub crate::rdna3::Interpreter);

impl Interpreter {
    /// Runs dispatch `d` to completion.
    pub fn dispatch(&self, mem: &dyn Memory, d: &Dispatch) -> Result<(), ExecError> {
        self.0.dispatch_as::<exec::Rdna4>(mem, d)
    }
}

/// Runs the RDNA4 instruction in `words` (its dwords, literal included) on `state`, a
/// wave of a one-wave workgroup started as gfx12 starts waves (IEEE 754-2019's
/// minimumNumber rule; MODE's rounding and denormal bits are `state.mode`'s, gfx12
/// having no IEEE or DX10_CLAMP bit). No memory is mapped (see [`execute_on`]); LDS is
/// `state.lds`. As [`crate::rdna3::execute`] does for RDNA3.
pub fn execute(words: &[u32], state: &mut crate::rdna3::WaveState) -> Result<(), ExecError> {
    execute_on(words, state, &crate::memory::SliceMemory::new())
}

/// [`execute`] with `mem` as the GPU's memory.
pub fn execute_on(words: &[u32], state: &mut crate::rdna3::WaveState, mem: &dyn Memory) -> Result<(), ExecError> {
    use crate::rdna3::{Flow, Frontend, GroupBarrier, Step};
    let d = exec::Rdna4::decode(words).map_err(|e| crate::rdna3::decode_error(words, e))?;
    crate::rdna3::on_wave(state, |w, lds| {
        w.nan_rule = Some(crate::float::minmax::Nans::Num);
        let error = |t| crate::rdna3::exec_error(t, 0, d.text());
        if let Flow::Group(op) = d.run(w, mem, lds).map_err(error)? {
            GroupBarrier::default().apply(op, w).map_err(error)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::fields;
    use super::opcodes::*;
    use crate::field::Bits;

    /// The OP field of a one-dword instruction (or of an instruction's first dword).
    fn op(field: Bits, w0: u32) -> u16 {
        field.get(&[w0, 0, 0]) as u16
    }

    /// Opcode numbers read out of `llvm-mc-19 -arch=amdgcn -mcpu=gfx1201 -show-encoding`'s
    /// encodings (the words below, little-endian dwords), against the generated tables.
    #[test]
    fn opcodes_agree_with_llvm_encodings() {
        // s_wait_loadcnt 0x0: 0xbfc00000; s_wait_kmcnt 0x0: 0xbfc70000 (SOPP op 22:16).
        assert_eq!(
            Sopp::from_op(op(fields::sopp::OP, 0xbfc0_0000)),
            Some(Sopp::S_WAIT_LOADCNT)
        );
        assert_eq!(
            Sopp::from_op(op(fields::sopp::OP, 0xbfc7_0000)),
            Some(Sopp::S_WAIT_KMCNT)
        );
        // s_barrier_signal -1: 0xbe804ec1 (SOP1 op 15:8).
        assert_eq!(
            Sop1::from_op(op(fields::sop1::OP, 0xbe80_4ec1)),
            Some(Sop1::S_BARRIER_SIGNAL)
        );
        // v_add_f32_e32 v0, v1, v2: 0x06000501 (VOP2 op 30:25).
        assert_eq!(
            Vop2::from_op(op(fields::vop2::OP, 0x0600_0501)),
            Some(Vop2::V_ADD_F32_E32)
        );
        // global_load_b32 v0, v1, s[0:1]: 0xee050000 (VGLOBAL op 21:14).
        assert_eq!(
            Vglobal::from_op(op(fields::vglobal::OP, 0xee05_0000)),
            Some(Vglobal::GLOBAL_LOAD_B32)
        );
        // buffer_load_b32 v0, v1, s[0:3], null offen: 0xc405007c (VBUFFER op 21:14).
        assert_eq!(
            Vbuffer::from_op(op(fields::vbuffer::OP, 0xc405_007c)),
            Some(Vbuffer::BUFFER_LOAD_B32)
        );
        // v_wmma_f32_16x16x16_f16: 0xcc404000 (VOP3P op 22:16).
        assert_eq!(
            Vop3p::from_op(op(fields::vop3p::OP, 0xcc40_4000)),
            Some(Vop3p::V_WMMA_F32_16X16X16_F16)
        );
        // Each word's ENCODING field names the encoding it was assembled in, and no
        // other encoding's field of the same width does.
        let cases = [
            (fields::sopp::ENCODING, 0xbfc0_0000),
            (fields::sop1::ENCODING, 0xbe80_4ec1),
            (fields::vop2::ENCODING, 0x0600_0501),
            (fields::vglobal::ENCODING, 0xee05_0000),
            (fields::vbuffer::ENCODING, 0xc405_007c),
            (fields::vop3p::ENCODING, 0xcc40_4000),
        ];
        for &(enc, w0) in &cases {
            assert!(enc.matches(&[w0, 0, 0]), "{w0:#x}");
            for &(other, _) in &cases {
                if other != enc && other.bits.width() == enc.bits.width() {
                    assert!(!other.matches(&[w0, 0, 0]), "{w0:#x} {other:?}");
                }
            }
        }
    }

    #[test]
    fn every_encoding_is_listed_once_with_its_opcodes() {
        let total: usize = SPEC.iter().map(|(_, ops)| ops.len()).sum();
        assert_eq!((SPEC.len(), total), (23, 1563));
        for (enc, ops) in SPEC {
            let mut seen = std::collections::BTreeSet::new();
            assert!(ops.iter().all(|(op, _)| seen.insert(*op)), "{enc}: an opcode twice");
        }
    }
}
