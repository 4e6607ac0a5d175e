//! CDNA3 (gfx940 to gfx942): the instruction set's opcode tables and instruction
//! fields, generated from AMD's machine-readable CDNA ISA as tinygrad's tables give it
//! (`cargo xtask gen-opcodes --gen cdna3`), and the decoder ([`Inst::decode`]: the
//! scalar, vector, packed and matrix, LDS, flat, scratch, global and buffer encodings;
//! VOP1/VOP2/VOPC's SDWA and DPP dwords; literals), checked against `llvm-mc-19
//! --mcpu=gfx942`'s encodings and against its reading of one probe of every opcode
//! ([`probes`]).
//!
//! The tables are CDNA4's (gfx950), a superset: they name opcodes gfx942 does not have
//! (`v_bitop3_*`, the `v_cvt_scalef32_*` conversions, among others), which the decoder
//! names as it finds them; gfx950's four-dword scaled matrix form (`VOP3PX2`) is left
//! out. The disassembler ([`Inst::llvm`]) prints what `llvm-objdump-19 --mcpu=gfx942`
//! does; the [`Interpreter`] runs CDNA3 dispatches on RDNA3's machine, each
//! instruction lowered to its RDNA3 twin where it has one ([`Inst::to_rdna3`]), CDNA3's
//! own (memory, buffer accesses typed and not, scalar stores and atomics, AccVGPRs,
//! SDWA and DPP forms, packed 32-bit operations, the 8-bit float conversions, the
//! dense and sparse matrix instructions from AMD's layout table, the VGPR indexing
//! mode) run here; what it does not run yet is in `coverage/cdna3.md` and
//! docs/limits.md, and the CDNA4 (gfx950) opcodes the tables add are refused. The
//! mock's `gfx942` profile runs its kernels.

mod coverage;
mod decode;
mod disasm;
mod exec;
mod fp8;
mod lower;
mod mfma;
mod probe;
mod smem;
#[rustfmt::skip]
#[path = "generated/fields.rs"]
pub mod fields;
#[rustfmt::skip]
#[path = "generated/lowering.rs"]
mod lowering;
#[rustfmt::skip]
#[path = "generated/not_gfx942.rs"]
mod not_gfx942;
#[rustfmt::skip]
#[path = "generated/opcodes.rs"]
pub mod opcodes;
#[rustfmt::skip]
#[path = "generated/operands.rs"]
pub mod operands;

pub use coverage::{coverage, report};
pub use decode::{DPP, DecodeError, Encoding, Ext, Inst, LITERAL, SDWA};
pub use disasm::Llvm;
pub use probe::{probes, variants};

use crate::{Dispatch, ExecError, Memory};

/// Whether gfx942 has the CDNA tables' opcode `name` (they are CDNA4's: gfx950 adds
/// to them), as LLVM 19 reads gfx942's code (the generated `not_gfx942` list).
pub(crate) fn on_gfx942(name: &str) -> bool {
    not_gfx942::NOT_GFX942.binary_search(&name).is_err()
}

/// The CDNA3 interpreter: runs whole gfx940–gfx942 dispatches (waves of 64 lanes) on
/// a [`Memory`], with the settings and counters of the RDNA3 interpreter it wraps. It
/// runs what lowers to RDNA3 and CDNA3's own forms; an instruction it does not run yet
/// (the XF32 matrix forms, SMEM's scratch forms, among others) stops the dispatch with
/// [`ExecError`] naming it.
#[derive(Debug, Clone, Default)]
pub struct Interpreter(pub crate::rdna3::Interpreter);

impl Interpreter {
    /// Runs dispatch `d` to completion.
    pub fn dispatch(&self, mem: &dyn Memory, d: &Dispatch) -> Result<(), ExecError> {
        self.0.dispatch_as::<exec::Cdna3>(mem, d)
    }
}
