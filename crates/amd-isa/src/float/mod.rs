//! Floating point the generations share, bit-exact to the ISA: IEEE binary16
//! conversions ([`half`]), exact arithmetic rounded once in any rounding mode
//! ([`exact`]), and the VALU's minimum and maximum with their NaN and signed-zero
//! rules ([`minmax`]), and the OCP 8-bit floats of RDNA4 ([`fp8`]).

pub(crate) mod exact;

/// The float format of an instruction's result, as the ISA's operand tables give its
/// destination's (the generated opcodes' `result_format`); packed and matrix results
/// are of their elements' format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultFormat {
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE single.
    F32,
    /// IEEE double.
    F64,
}

pub(crate) mod fp8;
pub(crate) mod half;
pub(crate) mod minmax;
