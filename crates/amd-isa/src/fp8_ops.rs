//! The 8-bit float instructions RDNA4 and CDNA3 share: the conversions to f32
//! (`v_cvt_f32_fp8`, `v_cvt_pk_f32_bf8`, …) and from f32 (`v_cvt_pk_fp8_f32`, and
//! `v_cvt_sr_fp8_f32`'s stochastic rounding as its pseudocode adds the random bits), and
//! RDNA4's dot products `v_dot4_f32_{fp8,bf8}_{fp8,bf8}`. Each generation's decoder
//! reads its own encodings into an [`Fp8Inst`] (the operation, in its generation's
//! formats: OCP's on RDNA4, FNUZ on CDNA3, [`Fp8`]); it runs here.

use crate::error::Trap;
use crate::float::fp8::Fp8;
use crate::rdna3::{Wave, add32, mul32};

/// One of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fp8Op {
    /// An 8-bit float to f32, or (`packed`) two of them to an f32 pair.
    ToF32 { kind: Fp8, packed: bool },
    /// Two f32s to a pair of 8-bit floats in one half of the destination, or
    /// (`stochastic`) one, its mantissa plus random bits first, to one byte.
    FromF32 { kind: Fp8, stochastic: bool },
    /// `D = C + Σ a[k] · b[k]` over four 8-bit floats, in f32.
    Dot4 { a: Fp8, b: Fp8 },
}

impl Fp8Op {
    /// The operation mnemonic `name` (with or without `_e32`/`_e64`) names, its
    /// formats OCP's or (`fnuz`) the FNUZ ones; `None` for any other instruction.
    pub(crate) fn of(name: &str, fnuz: bool) -> Option<Fp8Op> {
        let kind = |s: &str| Fp8::of(s == "bf8", fnuz);
        let bare = name
            .strip_suffix("_e32")
            .or_else(|| name.strip_suffix("_e64"))
            .unwrap_or(name);
        Some(match bare {
            "v_cvt_f32_fp8" | "v_cvt_f32_bf8" => Fp8Op::ToF32 {
                kind: kind(&bare[10..]),
                packed: false,
            },
            "v_cvt_pk_f32_fp8" | "v_cvt_pk_f32_bf8" => Fp8Op::ToF32 {
                kind: kind(&bare[13..]),
                packed: true,
            },
            "v_cvt_pk_fp8_f32" | "v_cvt_pk_bf8_f32" => Fp8Op::FromF32 {
                kind: kind(&bare[9..12]),
                stochastic: false,
            },
            "v_cvt_sr_fp8_f32" | "v_cvt_sr_bf8_f32" => Fp8Op::FromF32 {
                kind: kind(&bare[9..12]),
                stochastic: true,
            },
            _ => {
                let rest = bare.strip_prefix("v_dot4_f32_")?;
                let (a, b) = rest.split_once('_')?;
                let eight = |s: &str| matches!(s, "fp8" | "bf8");
                if !eight(a) || !eight(b) {
                    return None;
                }
                Fp8Op::Dot4 { a: kind(a), b: kind(b) }
            }
        })
    }
}

/// An 8-bit float instruction with its operands, as a decoder read them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fp8Inst {
    pub(crate) op: Fp8Op,
    pub(crate) vdst: usize,
    /// The sources, in gfx11's operand numbering (VGPRs from 256).
    pub(crate) srcs: [u16; 3],
    /// [`Fp8Op::ToF32`]: the byte (one value) or 16-bit half (a pair) of S0 read;
    /// [`Fp8Op::FromF32`]: the 16-bit half (a pair) or byte (stochastic) of VDST
    /// written, the rest of it kept.
    pub(crate) sel: u32,
    /// The f32 sources' negation and absolute value (bit k for source k).
    pub(crate) neg: u32,
    pub(crate) abs: u32,
}

impl Fp8Inst {
    /// `op` from `vdst` and `srcs` with `sel` and the f32 sources' `neg` and `abs`.
    pub(crate) fn new(op: Fp8Op, vdst: usize, srcs: [u16; 3], sel: u32, [neg, abs]: [u32; 2]) -> Fp8Inst {
        Fp8Inst {
            op,
            vdst,
            srcs,
            sel,
            neg,
            abs,
        }
    }

    /// Runs it for every active lane of the half-wave; `lit` is the instruction's
    /// literal.
    pub(crate) fn run(&self, w: &mut Wave, lit: Option<u32>) -> Result<(), Trap> {
        let (vdst, srcs, sel) = (self.vdst, self.srcs, self.sel);
        // An f32 source with its abs and neg applied.
        let f32_src = |w: &Wave, k: usize, lane: usize| -> Result<f32, Trap> {
            let mut v = w.vread(srcs[k], lane, lit)?;
            if self.abs >> k & 1 != 0 {
                v &= 0x7fff_ffff;
            }
            if self.neg >> k & 1 != 0 {
                v ^= 0x8000_0000;
            }
            Ok(f32::from_bits(v))
        };
        let exec = w.exec();
        for lane in (0..32).filter(|l| exec >> l & 1 == 1) {
            match self.op {
                Fp8Op::ToF32 { kind, packed: false } => {
                    let b = (w.vread(srcs[0], lane, lit)? >> (8 * sel)) as u8;
                    w.vwrite(vdst, lane, kind.to_f32(b).to_bits())?;
                }
                Fp8Op::ToF32 { kind, packed: true } => {
                    let v = w.vread(srcs[0], lane, lit)? >> (16 * sel);
                    w.vwrite(vdst, lane, kind.to_f32(v as u8).to_bits())?;
                    w.vwrite(vdst + 1, lane, kind.to_f32((v >> 8) as u8).to_bits())?;
                }
                Fp8Op::FromF32 {
                    kind,
                    stochastic: false,
                } => {
                    let pair = u32::from(kind.encode(f32_src(w, 0, lane)?))
                        | u32::from(kind.encode(f32_src(w, 1, lane)?)) << 8;
                    let shift = 16 * sel;
                    let old = w.vread(256 + vdst as u16, lane, None)?;
                    w.vwrite(vdst, lane, (old & !(0xffff << shift)) | pair << shift)?;
                }
                Fp8Op::FromF32 { kind, stochastic: true } => {
                    // The random bits (S1's top 20 or 21) added to the mantissa, which
                    // wraps around within its 23 bits, then rounded to nearest even.
                    let x = f32_src(w, 0, lane)?.to_bits();
                    let r = w.vread(srcs[1], lane, lit)? >> if kind.is_bf8() { 11 } else { 12 };
                    let m = (x & 0x7f_ffff).wrapping_add(r) & 0x7f_ffff;
                    let b = u32::from(kind.encode(f32::from_bits(x & !0x7f_ffff | m)));
                    let shift = 8 * sel;
                    let old = w.vread(256 + vdst as u16, lane, None)?;
                    w.vwrite(vdst, lane, (old & !(0xff << shift)) | b << shift)?;
                }
                Fp8Op::Dot4 { a, b } => {
                    let (x, y) = (w.vread(srcs[0], lane, lit)?, w.vread(srcs[1], lane, lit)?);
                    let mode = w.round32();
                    let mut acc = w.f32_in(f32::from_bits(w.vread(srcs[2], lane, lit)?));
                    for k in 0..4 {
                        let p = mul32(a.to_f32((x >> (8 * k)) as u8), b.to_f32((y >> (8 * k)) as u8), mode);
                        acc = add32(acc, p, mode);
                    }
                    w.vwrite(vdst, lane, w.f32_out(acc.to_bits()))?;
                }
            }
        }
        Ok(())
    }
}
