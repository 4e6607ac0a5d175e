//! Floating point the generations share, bit-exact to the ISA: IEEE binary16
//! conversions ([`half`]), exact arithmetic rounded once in any rounding mode
//! ([`exact`]), and the VALU's minimum and maximum with their NaN and signed-zero
//! rules ([`minmax`]), and the OCP 8-bit floats of RDNA4 ([`fp8`]).

pub(crate) mod exact;
pub(crate) mod fp8;
pub(crate) mod half;
pub(crate) mod minmax;
