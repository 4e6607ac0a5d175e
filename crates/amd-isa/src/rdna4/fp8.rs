//! RDNA4's 8-bit float instructions ([`crate::float::fp8`]'s formats): the
//! conversions to f32 (`v_cvt_f32_fp8`, `v_cvt_pk_f32_bf8`, …), from f32
//! (`v_cvt_pk_fp8_f32`, and `v_cvt_sr_fp8_f32`'s stochastic rounding as its pseudocode
//! adds the random bits), and the dot products `v_dot4_f32_{fp8,bf8}_{fp8,bf8}`.

use super::decode::{Encoding, Inst};
use super::fields as f4;
use crate::error::Trap;
use crate::float::fp8::Fp8;
use crate::rdna3::{Wave, add32, mul32};

type R<T> = Result<T, Trap>;

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
    /// The operation instruction `i` is, if it is one.
    pub(crate) fn of(i: &Inst) -> Option<Fp8Op> {
        let name = i.name()?;
        let kind = |s: &str| if s == "bf8" { Fp8::E5m2 } else { Fp8::E4m3 };
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

    /// Runs it for every lane of EXEC.
    pub(crate) fn run(self, w: &mut Wave, i: &Inst) -> R<()> {
        let iw = &i.words;
        let lit = i.literal;
        // (destination, sources, OPSEL, NEG, ABS, clamp or output modifier set)
        let (vdst, srcs, opsel, neg, abs, out_mods) = match i.enc {
            Encoding::Vop1 => (
                f4::vop1::VDST.index(iw),
                [f4::vop1::SRC0.operand(iw), 0, 0],
                0,
                0,
                0,
                false,
            ),
            Encoding::Vop3 => {
                use f4::vop3::*;
                (
                    VDST.index(iw),
                    [SRC0.operand(iw), SRC1.operand(iw), SRC2.operand(iw)],
                    OPSEL.get(iw),
                    NEG.get(iw),
                    ABS.get(iw),
                    CLMP.is_set(iw) || OMOD.get(iw) != 0,
                )
            }
            Encoding::Vop3p => {
                use f4::vop3p::*;
                let mods = NEG.get(iw) | NEG_HI.get(iw);
                if mods != 0 || CLMP.is_set(iw) {
                    return Err(Trap::missing(format!(
                        "{}: negations or clamp on an 8-bit float dot product are not implemented",
                        i.name().unwrap_or("v_dot4")
                    )));
                }
                (
                    VDST.index(iw),
                    [SRC0.operand(iw), SRC1.operand(iw), SRC2.operand(iw)],
                    0,
                    0,
                    0,
                    false,
                )
            }
            _ => return Err("not an 8-bit float instruction".into()),
        };
        if out_mods || (matches!(self, Fp8Op::ToF32 { .. }) && (neg | abs) != 0) {
            return Err(Trap::missing(format!(
                "{}: modifiers on an 8-bit float conversion are not implemented",
                i.name().unwrap_or("this conversion")
            )));
        }
        // An f32 source with its abs and neg applied.
        let f32_src = |w: &Wave, k: usize, lane: usize| -> R<f32> {
            let mut v = w.vread(srcs[k], lane, lit)?;
            if abs >> k & 1 != 0 {
                v &= 0x7fff_ffff;
            }
            if neg >> k & 1 != 0 {
                v ^= 0x8000_0000;
            }
            Ok(f32::from_bits(v))
        };
        let exec = w.exec();
        for lane in (0..32).filter(|l| exec >> l & 1 == 1) {
            match self {
                Fp8Op::ToF32 { kind, packed: false } => {
                    // OPSEL[1:0] picks the byte, its two bits reversed (byte_sel).
                    let byte = (opsel & 1) << 1 | (opsel >> 1 & 1);
                    let b = (w.vread(srcs[0], lane, lit)? >> (8 * byte)) as u8;
                    w.vwrite(vdst, lane, kind.to_f32(b).to_bits())?;
                }
                Fp8Op::ToF32 { kind, packed: true } => {
                    let v = w.vread(srcs[0], lane, lit)? >> if opsel & 1 != 0 { 16 } else { 0 };
                    w.vwrite(vdst, lane, kind.to_f32(v as u8).to_bits())?;
                    w.vwrite(vdst + 1, lane, kind.to_f32((v >> 8) as u8).to_bits())?;
                }
                Fp8Op::FromF32 {
                    kind,
                    stochastic: false,
                } => {
                    let pair = u32::from(kind.encode(f32_src(w, 0, lane)?))
                        | u32::from(kind.encode(f32_src(w, 1, lane)?)) << 8;
                    // OPSEL[3] writes the high half; the other half is kept.
                    let shift = if opsel & 8 != 0 { 16 } else { 0 };
                    let old = w.vread(256 + vdst as u16, lane, None)?;
                    w.vwrite(vdst, lane, (old & !(0xffff << shift)) | pair << shift)?;
                }
                Fp8Op::FromF32 { kind, stochastic: true } => {
                    // The random bits (S1's top 20 or 21) added to the mantissa, which
                    // wraps around within its 23 bits, then rounded to nearest even.
                    let x = f32_src(w, 0, lane)?.to_bits();
                    let r = w.vread(srcs[1], lane, lit)? >> if kind == Fp8::E4m3 { 12 } else { 11 };
                    let m = (x & 0x7f_ffff).wrapping_add(r) & 0x7f_ffff;
                    let b = u32::from(kind.encode(f32::from_bits(x & !0x7f_ffff | m)));
                    let shift = 8 * (opsel >> 2 & 3);
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
