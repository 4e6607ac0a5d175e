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
//! out. No interpreter yet: a CDNA3 kernel does not run on the mock, and a CDNA3
//! target is not one the runtime opens (docs/limits.md).

mod decode;
mod disasm;
mod probe;
#[rustfmt::skip]
#[path = "generated/fields.rs"]
pub mod fields;
#[rustfmt::skip]
#[path = "generated/opcodes.rs"]
pub mod opcodes;
#[rustfmt::skip]
#[path = "generated/operands.rs"]
pub mod operands;

pub use decode::{DPP, DecodeError, Encoding, Ext, Inst, LITERAL, SDWA};
pub use disasm::Llvm;
pub use probe::{probes, variants};
