//! Vector ALU opcodes by ISA name that `exec::valu` does not cover: f64 rounding,
//! 16-bit integer and f16 arithmetic of VOP3, packs and normalised conversions,
//! byte sums of absolute differences, cube-map helpers, register swaps and relative
//! moves, and the VOP2 leftovers (`v_xnor_b32`, 24-bit high
//! multiplies, `v_pk_fmac_f16`).
//!
//! Opcodes come in VOP3 numbering (VOP2 from `exec::VOP2_IN_VOP3`, VOP1 from
//! `exec::VOP1_IN_VOP3`), as `exec::valu` receives them; each is matched by its name
//! without the `_e32` / `_e64` suffix.

use super::decode::Inst;
use super::exec::{
    Mods, R, VOP1_IN_VOP3, VOP1_IN_VOP3_LAST, VOP2_IN_VOP3, VOP2_IN_VOP3_LAST, f64_src, sat_i32, sat_u32,
};
use super::matrix::{self, wmma_int};
use super::opcodes::{Vop1, Vop2, Vop3, Vop3p};
use super::packed::{f16_bits, f16_src, packed_src, write_half};
use super::rounding::{fma16, fma32, ldexp, sub64, to16};
use super::wave::{M0, Wave};
use crate::error::Trap;
use crate::float::exact::{self, F16};
use crate::float::half;
use crate::float::minmax::{self, H};

/// The name of VOP3-numbered opcode `op`, without its encoding suffix.
pub(crate) fn name(op: u16) -> Option<&'static str> {
    let n = match op {
        VOP2_IN_VOP3..=VOP2_IN_VOP3_LAST => Vop3::from_op(op)
            .map(Vop3::name)
            .or_else(|| Vop2::from_op(op - VOP2_IN_VOP3).map(Vop2::name)),
        VOP1_IN_VOP3..=VOP1_IN_VOP3_LAST => Vop3::from_op(op)
            .map(Vop3::name)
            .or_else(|| Vop1::from_op(op - VOP1_IN_VOP3).map(Vop1::name)),
        _ => Vop3::from_op(op).map(Vop3::name),
    }?;
    Some(n.strip_suffix("_e32").or_else(|| n.strip_suffix("_e64")).unwrap_or(n))
}

/// The float format of VOP3-numbered opcode `op`'s result, from the ISA's operand
/// tables (its VOP3 form's, else its VOP2 or VOP1 form's).
pub(crate) fn result_format(op: u16) -> Option<crate::float::ResultFormat> {
    match Vop3::from_op(op) {
        Some(o) => o.result_format(),
        None => match op {
            VOP2_IN_VOP3..=VOP2_IN_VOP3_LAST => Vop2::from_op(op - VOP2_IN_VOP3)?.result_format(),
            VOP1_IN_VOP3..=VOP1_IN_VOP3_LAST => Vop1::from_op(op - VOP1_IN_VOP3)?.result_format(),
            _ => None,
        },
    }
}

fn missing(i: &Inst, op: u16, name: &str) -> Trap {
    Trap::missing(format!(
        "{:?} opcode {:#x} (VOP3 numbering {op:#x}, {name}) is not implemented",
        i.enc, i.op
    ))
}

/// Absolute difference.
fn ad(x: u32, y: u32) -> u32 {
    x.abs_diff(y)
}

/// `acc` plus the absolute differences of the four bytes, in 64 bits (the caller wraps
/// or saturates).
fn sad_u8(a: u32, b: u32, acc: u32) -> u64 {
    (0..4).fold(u64::from(acc), |t, k| {
        t + u64::from(ad(a >> (8 * k) & 0xff, b >> (8 * k) & 0xff))
    })
}

/// Sum of absolute differences skipping the bytes of `b` that are 0.
fn msad_u8(a: u32, b: u32, acc: u32) -> u64 {
    (0..4).fold(u64::from(acc), |t, k| {
        let (x, y) = (a >> (8 * k) & 0xff, b >> (8 * k) & 0xff);
        if y == 0 { t } else { t + u64::from(ad(x, y)) }
    })
}

/// An f32 in [-1, 1] as a signed 16-bit normalised integer (NaN → 0).
fn snorm16(x: f64) -> u16 {
    if x.is_nan() {
        return 0;
    }
    (x.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16
}

/// An f32 in [0, 1] as an unsigned 16-bit normalised integer (NaN → 0).
fn unorm16(x: f64) -> u16 {
    if x.is_nan() {
        return 0;
    }
    (x.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u16
}

/// The median of three.
fn med3<T: PartialOrd + Copy>(a: T, b: T, c: T) -> T {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    if c < lo {
        lo
    } else if c > hi {
        hi
    } else {
        c
    }
}

/// Cube-map face selection: which of x, y, z is the major axis (2, 1, 0).
fn cube_axis(x: f32, y: f32, z: f32) -> u8 {
    if z.abs() >= x.abs() && z.abs() >= y.abs() {
        2
    } else if y.abs() >= x.abs() {
        1
    } else {
        0
    }
}

/// Runs the VOP3-numbered opcode `op` for every lane of EXEC.
pub(crate) fn valu(w: &mut Wave, i: &Inst, op: u16, dst: usize, srcs: [u16; 3], m: Mods) -> R<()> {
    let Some(n) = name(op) else {
        return Err(missing(i, op, "no such opcode"));
    };
    let lit = i.literal;
    let exec = w.exec();
    let hi_dst = m.opsel >> 3 & 1 != 0;
    // Whole-wave and register-file operations first.
    match n {
        "v_nop" | "v_pipeflush" => return Ok(()),
        // Wave64 only: a no-op in a wave32 wave.
        "v_permlane64_b32" => return Ok(()),
        "v_swap_b32" | "v_swap_b16" | "v_swaprel_b32" | "v_movrelsd_2_b32" => {
            let m0 = w.s[M0] as usize;
            let src = srcs[0]
                .checked_sub(256)
                .ok_or_else(|| format!("{n} with a scalar source"))? as usize;
            let (from, to) = match n {
                "v_swaprel_b32" | "v_movrelsd_2_b32" => (src + (m0 & 0x3ff), dst + ((m0 >> 16) & 0x3ff)),
                _ => (src, dst),
            };
            for lane in (0..32).filter(|l| exec >> l & 1 == 1) {
                let (a, b) = (
                    w.vread(256 + from as u16, lane, None)?,
                    w.vread(256 + to as u16, lane, None)?,
                );
                match n {
                    "v_movrelsd_2_b32" => w.vwrite(to, lane, a)?,
                    "v_swap_b16" => {
                        // The halves op_sel picks (low halves without it).
                        let (ha, hb) = (m.half(0, a), if hi_dst { (b >> 16) as u16 } else { b as u16 });
                        write_half(w, to, lane, ha, hi_dst)?;
                        write_half(w, from, lane, hb, m.opsel & 1 != 0)?;
                    }
                    _ => {
                        w.vwrite(to, lane, a)?;
                        w.vwrite(from, lane, b)?;
                    }
                }
            }
            return Ok(());
        }
        _ => {}
    }
    for lane in (0..32).filter(|l| exec >> l & 1 == 1) {
        let raw = |k: usize| w.vread(srcs[k], lane, lit);
        let h = |k: usize| -> R<u16> { Ok(m.half(k, raw(k)?)) };
        let x16 = |k: usize| f16_src(w, srcs[k], lane, lit, m, k);
        let hb = |k: usize| f16_bits(w, srcs[k], lane, lit, m, k).map(H);
        let ieee = w.nans();
        let x64 = |k: usize| f64_src(w, srcs[k], lane, lit, m, k);
        let f32s = |k: usize| -> R<f32> { Ok(w.f32_in(f32::from_bits(m.float(k, raw(k)?)))) };
        // A 16-bit result into the half op_sel names; a 32-bit one; a 64-bit one.
        enum Out {
            Half(u16),
            Word(u32),
            Pair(u64),
            Quad([u32; 4]),
        }
        let out = match n {
            // f64 rounding and conversions.
            "v_trunc_f64" => Out::Pair(x64(0)?.trunc().to_bits()),
            "v_ceil_f64" => Out::Pair(x64(0)?.ceil().to_bits()),
            "v_floor_f64" => Out::Pair(x64(0)?.floor().to_bits()),
            "v_rndne_f64" => Out::Pair(x64(0)?.round_ties_even().to_bits()),
            "v_fract_f64" => {
                let v = x64(0)?;
                Out::Pair(sub64(v, v.floor(), w.round16_64()).to_bits())
            }
            // Saturating, NaN to 0 (Rust's float-to-int casts do exactly that).
            "v_cvt_u32_f64" => Out::Word(x64(0)? as u32),
            "v_trig_preop_f64" => Out::Pair(trig_preop(x64(0)?, raw(1)? & 31).to_bits()),
            "v_cvt_off_f32_i4" => Out::Word((((raw(0)? as i32) << 28 >> 28) as f32 / 16.0).to_bits()),
            // 16-bit integer moves, conversions and arithmetic.
            "v_mov_b16" => Out::Half(h(0)?),
            "v_not_b16" => Out::Half(!h(0)?),
            "v_cvt_i32_i16" => Out::Word(h(0)? as i16 as i32 as u32),
            "v_cvt_u32_u16" => Out::Word(u32::from(h(0)?)),
            "v_add_nc_i16" | "v_sub_nc_i16" => {
                let (a, b) = (h(0)? as i16, h(1)? as i16);
                let r = match (n, m.clamp) {
                    ("v_add_nc_i16", true) => a.saturating_add(b),
                    ("v_add_nc_i16", false) => a.wrapping_add(b),
                    (_, true) => a.saturating_sub(b),
                    _ => a.wrapping_sub(b),
                };
                Out::Half(r as u16)
            }
            "v_lshlrev_b16" => Out::Half(h(1)? << (h(0)? & 15)),
            "v_lshrrev_b16" => Out::Half(h(1)? >> (h(0)? & 15)),
            "v_ashrrev_i16" => Out::Half(((h(1)? as i16) >> (h(0)? & 15)) as u16),
            "v_and_b16" => Out::Half(h(0)? & h(1)?),
            "v_or_b16" => Out::Half(h(0)? | h(1)?),
            "v_xor_b16" => Out::Half(h(0)? ^ h(1)?),
            "v_mad_u16" => {
                let r = u32::from(h(0)?) * u32::from(h(1)?) + u32::from(h(2)?);
                Out::Half(if m.clamp { r.min(0xffff) as u16 } else { r as u16 })
            }
            "v_mad_i16" => {
                let r = i32::from(h(0)? as i16) * i32::from(h(1)? as i16) + i32::from(h(2)? as i16);
                Out::Half(if m.clamp {
                    r.clamp(-32768, 32767) as i16 as u16
                } else {
                    r as u16
                })
            }
            // Clamp saturates the 32-bit sum.
            "v_mad_u32_u16" => Out::Word(sat_u32(
                u64::from(u32::from(h(0)?) * u32::from(h(1)?)) + u64::from(raw(2)?),
                m.clamp,
            )),
            "v_mad_i32_i16" => {
                let p = i64::from(i32::from(h(0)? as i16) * i32::from(h(1)? as i16));
                Out::Word(sat_i32(p + i64::from(raw(2)? as i32), m.clamp))
            }
            "v_min3_i16" => Out::Half((h(0)? as i16).min(h(1)? as i16).min(h(2)? as i16) as u16),
            "v_max3_i16" => Out::Half((h(0)? as i16).max(h(1)? as i16).max(h(2)? as i16) as u16),
            "v_med3_i16" => Out::Half(med3(h(0)? as i16, h(1)? as i16, h(2)? as i16) as u16),
            "v_min3_u16" => Out::Half(h(0)?.min(h(1)?).min(h(2)?)),
            "v_max3_u16" => Out::Half(h(0)?.max(h(1)?).max(h(2)?)),
            "v_med3_u16" => Out::Half(med3(h(0)?, h(1)?, h(2)?)),
            // The halves op_sel picks, their sign bits under abs and neg (as LLVM
            // assembles them on S0 and S1).
            "v_cndmask_b16" => {
                let mask = w.sread(srcs[2], lit)?;
                let k = usize::from(mask >> lane & 1 == 1);
                Out::Half(m.half_signed(k, raw(k)?))
            }
            // f16 arithmetic.
            "v_min3_f16" => Out::Half(minmax::min3(hb(0)?, hb(1)?, hb(2)?, ieee).0),
            "v_max3_f16" => Out::Half(minmax::max3(hb(0)?, hb(1)?, hb(2)?, ieee).0),
            "v_med3_f16" => Out::Half(minmax::med3(hb(0)?, hb(1)?, hb(2)?, ieee).0),
            "v_maxmin_f16" => Out::Half(minmax::maxmin(hb(0)?, hb(1)?, hb(2)?, ieee).0),
            "v_minmax_f16" => Out::Half(minmax::minmax(hb(0)?, hb(1)?, hb(2)?, ieee).0),
            // `S0.f16 * 2.0 ** 32'I(S1.i16)`: the exponent is S1's 16 bits (the half
            // op_sel picks) as a signed integer; S1 is typed f16 in the ISA's operand
            // table and LLVM assembles neg and abs on it, which act on its bit 15.
            "v_ldexp_f16" => {
                let e = i32::from(m.half_signed(1, raw(1)?) as i16);
                let v = x16(0)?;
                Out::Half(ldexp(v, e, F16, w.round16_64()).map_or_else(|| half::from_f64(v), |r| r as u16))
            }
            "v_frexp_mant_f16" => {
                let v = x16(0)?;
                Out::Half(half::from_f64(if v.is_finite() {
                    super::divide::frexp64(v).0
                } else {
                    v
                }))
            }
            "v_frexp_exp_i16_f16" => {
                let v = x16(0)?;
                Out::Half(if v.is_finite() {
                    super::divide::frexp64(v).1 as i16 as u16
                } else {
                    0
                })
            }
            "v_div_fixup_f16" => Out::Half(div_fixup16(x16(0)?, x16(1)?, x16(2)?)),
            // `tmp = S2; tmp += lo product; tmp += hi product` summed exactly and
            // rounded once (as tinygrad's executable pseudocode has it), in MODE's f16
            // direction for halves and f32 direction for bfloat16s. Denormals: halves
            // by the f16 controls, bfloat16s (f32's range) by the f32 ones, inputs
            // and result.
            // neg and abs on the packed S0 and S1 act on both halves (LLVM folds a
            // negated or absolute `<2 x half>` into them); on S2 on the half op_sel picks.
            "v_dot2_f16_f16" | "v_dot2_bf16_bf16" => {
                let bf = n == "v_dot2_bf16_bf16";
                let packed = |k: usize| -> R<u32> {
                    let v = packed_src(w, srcs[k], lane, lit)?;
                    let v = if m.abs >> k & 1 != 0 { v & 0x7fff_7fff } else { v };
                    Ok(if m.neg >> k & 1 != 0 { v ^ 0x8000_8000 } else { v })
                };
                let (a, b) = (packed(0)?, packed(1)?);
                let elem = |h: u16| matrix::element(w, h, bf);
                let c = if bf { elem(m.half_signed(2, raw(2)?)) } else { x16(2)? };
                let products = [
                    (elem(a as u16), elem(b as u16)),
                    (elem((a >> 16) as u16), elem((b >> 16) as u16)),
                ];
                Out::Half(if bf {
                    let r = matrix::sum_rounded(c, products, exact::BF16, w.round32()) as u32;
                    (w.f32_out(r << 16) >> 16) as u16
                } else {
                    w.f16_out(matrix::sum_rounded(c, products, exact::F16, w.round16_64()) as u16)
                })
            }
            "v_cvt_norm_i16_f16" => Out::Half(snorm16(x16(0)?)),
            "v_cvt_norm_u16_f16" => Out::Half(unorm16(x16(0)?)),
            "v_sat_pk_u8_i16" => {
                let v = raw(0)?;
                let sat = |x: i16| x.clamp(0, 255) as u16;
                Out::Half(sat(v as u16 as i16) | sat((v >> 16) as u16 as i16) << 8)
            }
            // Packs of two 16-bit results: S0's in the low half.
            "v_pack_b32_f16" => {
                let (a, b) = (half::from_f64(x16(0)?), half::from_f64(x16(1)?));
                Out::Word(u32::from(a) | u32::from(b) << 16)
            }
            "v_cvt_pk_norm_i16_f16" => Out::Word(u32::from(snorm16(x16(0)?)) | u32::from(snorm16(x16(1)?)) << 16),
            "v_cvt_pk_norm_u16_f16" => Out::Word(u32::from(unorm16(x16(0)?)) | u32::from(unorm16(x16(1)?)) << 16),
            "v_cvt_pk_norm_i16_f32" => {
                Out::Word(u32::from(snorm16(f64::from(f32s(0)?))) | u32::from(snorm16(f64::from(f32s(1)?))) << 16)
            }
            "v_cvt_pk_norm_u16_f32" => {
                Out::Word(u32::from(unorm16(f64::from(f32s(0)?))) | u32::from(unorm16(f64::from(f32s(1)?))) << 16)
            }
            "v_cvt_pk_u16_u32" => Out::Word(raw(0)?.min(0xffff) | raw(1)?.min(0xffff) << 16),
            "v_cvt_pk_i16_i32" => {
                let s = |v: u32| (v as i32).clamp(-32768, 32767) as i16 as u16 as u32;
                Out::Word(s(raw(0)?) | s(raw(1)?) << 16)
            }
            "v_cvt_pk_i16_f32" => {
                let s = |x: f32| (x as i32).clamp(-32768, 32767) as i16 as u16 as u32;
                Out::Word(s(f32s(0)?) | s(f32s(1)?) << 16)
            }
            "v_cvt_pk_u16_f32" => {
                let s = |x: f32| (x as u32).min(0xffff);
                Out::Word(s(f32s(0)?) | s(f32s(1)?) << 16)
            }
            "v_cvt_pk_u8_f32" => {
                let byte = (raw(1)? & 3) * 8;
                let v = f32s(0)?.round_ties_even() as u8 as u32;
                Out::Word((raw(2)? & !(0xff << byte)) | v << byte)
            }
            "v_bfm_b32" => Out::Word((((1u64 << (raw(0)? & 31)) - 1) as u32) << (raw(1)? & 31)),
            // Byte arithmetic: sums of absolute differences and averages.
            // Clamp saturates each sum at its width (32 bits; 16 for the packed ones).
            "v_sad_u8" => Out::Word(sat_u32(sad_u8(raw(0)?, raw(1)?, raw(2)?), m.clamp)),
            "v_sad_hi_u8" => Out::Word(sat_u32(
                (sad_u8(raw(0)?, raw(1)?, 0) << 16) + u64::from(raw(2)?),
                m.clamp,
            )),
            "v_sad_u16" => {
                let (a, b) = (raw(0)?, raw(1)?);
                let sum = u64::from(raw(2)?) + u64::from(ad(a & 0xffff, b & 0xffff)) + u64::from(ad(a >> 16, b >> 16));
                Out::Word(sat_u32(sum, m.clamp))
            }
            "v_sad_u32" => Out::Word(sat_u32(u64::from(ad(raw(0)?, raw(1)?)) + u64::from(raw(2)?), m.clamp)),
            "v_msad_u8" => Out::Word(sat_u32(msad_u8(raw(0)?, raw(1)?, raw(2)?), m.clamp)),
            "v_lerp_u8" => {
                let (a, b, c) = (raw(0)?, raw(1)?, raw(2)?);
                Out::Word((0..4).fold(0, |t, k| {
                    let s = 8 * k;
                    t | (((a >> s & 0xff) + (b >> s & 0xff) + (c >> s & 1)) >> 1) << s
                }))
            }
            "v_qsad_pk_u16_u8" | "v_mqsad_pk_u16_u8" => {
                let s0 = w.vread64(srcs[0], lane, lit)?;
                let b = raw(1)?;
                let acc = w.vread64(srcs[2], lane, lit)?;
                let f = if n == "v_qsad_pk_u16_u8" { sad_u8 } else { msad_u8 };
                Out::Pair((0..4).fold(0u64, |t, k| {
                    let part = f((s0 >> (8 * k)) as u32, b, (acc >> (16 * k) & 0xffff) as u32);
                    let part = if m.clamp { part.min(0xffff) } else { part & 0xffff };
                    t | part << (16 * k)
                }))
            }
            "v_mqsad_u32_u8" => {
                let s0 = w.vread64(srcs[0], lane, lit)?;
                let b = raw(1)?;
                let mut q = [0u32; 4];
                for (k, o) in q.iter_mut().enumerate() {
                    let acc = w.vread(srcs[2] + k as u16, lane, lit)?;
                    *o = sat_u32(msad_u8((s0 >> (8 * k)) as u32, b, acc), m.clamp);
                }
                Out::Quad(q)
            }
            // f32 leftovers.
            "v_fma_dx9_zero_f32" | "v_fmac_dx9_zero_f32" => {
                let c = if n == "v_fmac_dx9_zero_f32" {
                    f32::from_bits(w.vread(256 + dst as u16, lane, None)?)
                } else {
                    f32s(2)?
                };
                let (a, b) = (f32s(0)?, f32s(1)?);
                let r = if a == 0.0 || b == 0.0 { c } else { a.mul_add(b, c) };
                Out::Word(w.f32_out(r.to_bits()))
            }
            "v_mullit_f32" => {
                let (a, b, c) = (f32s(0)?, f32s(1)?, f32s(2)?);
                let r = if b == -f32::MAX || b == f32::NEG_INFINITY || b.is_nan() || c <= 0.0 || c.is_nan() {
                    -f32::MAX
                } else {
                    a * b
                };
                Out::Word(r.to_bits())
            }
            "v_cubeid_f32" | "v_cubesc_f32" | "v_cubetc_f32" | "v_cubema_f32" => {
                let (x, y, z) = (f32s(0)?, f32s(1)?, f32s(2)?);
                let axis = cube_axis(x, y, z);
                let r = match (n, axis) {
                    ("v_cubeid_f32", 2) => {
                        if z < 0.0 {
                            5.0
                        } else {
                            4.0
                        }
                    }
                    ("v_cubeid_f32", 1) => {
                        if y < 0.0 {
                            3.0
                        } else {
                            2.0
                        }
                    }
                    ("v_cubeid_f32", _) => {
                        if x < 0.0 {
                            1.0
                        } else {
                            0.0
                        }
                    }
                    ("v_cubesc_f32", 2) => {
                        if z < 0.0 {
                            -x
                        } else {
                            x
                        }
                    }
                    ("v_cubesc_f32", 1) => x,
                    ("v_cubesc_f32", _) => {
                        if x < 0.0 {
                            z
                        } else {
                            -z
                        }
                    }
                    ("v_cubetc_f32", 1) => {
                        if y < 0.0 {
                            -z
                        } else {
                            z
                        }
                    }
                    ("v_cubetc_f32", _) => -y,
                    (_, 2) => z * 2.0,
                    (_, 1) => y * 2.0,
                    _ => x * 2.0,
                };
                Out::Word(r.to_bits())
            }
            "v_xnor_b32" => Out::Word(!(raw(0)? ^ raw(1)?)),
            "v_mul_hi_u32_u24" => {
                Out::Word(((u64::from(raw(0)? & 0xff_ffff) * u64::from(raw(1)? & 0xff_ffff)) >> 32) as u32)
            }
            "v_mul_hi_i32_i24" => {
                let s24 = |v: u32| i64::from((v << 8) as i32 >> 8);
                Out::Word(((s24(raw(0)?) * s24(raw(1)?)) >> 32) as u32)
            }
            "v_pk_fmac_f16" => {
                let (a, b) = (packed_src(w, srcs[0], lane, lit)?, packed_src(w, srcs[1], lane, lit)?);
                let c = w.vread(256 + dst as u16, lane, None)?;
                // Inputs and results flush as MODE says, as v_pk_fma_f16's.
                let hv =
                    |v: u32, hi: bool| f64::from(half::to_f32(w.f16_in(if hi { (v >> 16) as u16 } else { v as u16 })));
                let r = w.round16_64();
                let lo = w.f16_out(fma16(hv(a, false), hv(b, false), hv(c, false), r));
                let hi = w.f16_out(fma16(hv(a, true), hv(b, true), hv(c, true), r));
                Out::Word(u32::from(lo) | u32::from(hi) << 16)
            }
            other => return Err(missing(i, op, other)),
        };
        let out = match out {
            Out::Half(r) if m.clamp && clamped_float(n) => Out::Half(clamp_half(r)),
            Out::Pair(r) if m.clamp && clamped_float(n) => Out::Pair(super::exec::output_mods64(r, m)),
            out => out,
        };
        // f16 and f64 results flush as MODE says.
        let out = match out {
            Out::Half(r) if clamped_float(n) => Out::Half(w.f16_out(r)),
            Out::Pair(r) if clamped_float(n) => Out::Pair(w.f64_out(r)),
            out => out,
        };
        match out {
            Out::Half(r) => write_half(w, dst, lane, r, hi_dst)?,
            Out::Word(r) => w.vwrite(dst, lane, r)?,
            Out::Pair(r) => {
                w.vwrite(dst, lane, r as u32)?;
                w.vwrite(dst + 1, lane, (r >> 32) as u32)?;
            }
            Out::Quad(q) => {
                for (k, v) in q.into_iter().enumerate() {
                    w.vwrite(dst + k, lane, v)?;
                }
            }
        }
    }
    Ok(())
}

/// The VOP3P opcodes `packed::vop3p` does not cover: mixed-precision fma, and the dot
/// products and integer WMMA (their arithmetic in `matrix`).
pub(crate) fn vop3p(w: &mut Wave, i: &Inst) -> R<()> {
    use Vop3p::*;
    let op =
        Vop3p::from_op(i.op).ok_or_else(|| Trap::missing(format!("VOP3P opcode {:#x} is not implemented", i.op)))?;
    let f = i.vop3p();
    let (dst, srcs, [op_sel, op_sel_hi], [neg_lo, neg_hi]) = (f.dst, f.srcs, f.op_sel, f.neg);
    let clamp = f.clamp;
    let lit = i.literal;
    if matches!(op, V_WMMA_I32_16X16X16_IU8 | V_WMMA_I32_16X16X16_IU4) {
        return wmma_int(w, op == V_WMMA_I32_16X16X16_IU4, dst, srcs, neg_lo, clamp, lit);
    }
    // The dot products route S0's and S1's 16-bit halves as every VOP3P op does: the
    // low half from the half op_sel picks, the high half from the one op_sel_hi picks.
    // S2 is a 32-bit accumulator with no halves to pick: its op_sel and op_sel_hi bits
    // (LLVM writes op_sel_hi 1) leave it whole. neg_lo / neg_hi bits 0 and 1 negate
    // S0's and S1's low / high halves in the float forms (the integer forms read bits
    // 0 and 1 of neg_lo as signedness); on the f32 accumulator, as on the
    // mixed-precision fmas' 32-bit operands, neg_hi bit 2 takes its absolute value and
    // neg_lo bit 2 negates it. Clamp bounds an f32 result to [0, 1] and saturates an
    // integer one.
    let routed = |v: u32, k: usize| -> u32 {
        let half = |hi: bool| if hi { v >> 16 } else { v & 0xffff };
        let float = matches!(op, V_DOT2_F32_F16 | V_DOT2_F32_BF16);
        let sign = |neg: u32| if float && neg >> k & 1 != 0 { 0x8000 } else { 0 };
        (half(op_sel >> k & 1 != 0) ^ sign(neg_lo)) | (half(op_sel_hi >> k & 1 != 0) ^ sign(neg_hi)) << 16
    };
    let exec = w.exec();
    for lane in (0..32).filter(|l| exec >> l & 1 == 1) {
        let raw = |k: usize| packed_src(w, srcs[k], lane, lit);
        let r: u32 = match op {
            V_FMA_MIX_F32 | V_FMA_MIXLO_F16 | V_FMA_MIXHI_F16 => {
                // Each input as the pseudocode converts it: an f32 (MODE's f32 input
                // control) or a half through `f16_to_f32` (the f16 input control).
                let x = |k: usize| -> R<f64> {
                    let v = if op_sel_hi >> k & 1 == 0 {
                        f64::from(w.f32_in(f32::from_bits(w.vread(srcs[k], lane, lit)?)))
                    } else {
                        let v = raw(k)?;
                        f64::from(half::to_f32(w.f16_in((v >> (16 * (op_sel >> k & 1))) as u16)))
                    };
                    // neg_hi is |x| for the mixed forms, neg_lo -x.
                    let v = if neg_hi >> k & 1 == 1 { v.abs() } else { v };
                    Ok(if neg_lo >> k & 1 == 1 { -v } else { v })
                };
                // As the pseudocode has it: an f32 fma (rounded once in MODE's f32
                // direction), then for the f16 forms `f32_to_f16` (rounded in the f16
                // direction); clamping after rounding is clamping before, 0 and 1 being
                // exact.
                // Denormal results as an f32 result, then (the f16 forms) as an f32
                // input and an f16 result of the conversion.
                let (a, b, c) = (x(0)?, x(1)?, x(2)?);
                let r = f32::from_bits(w.f32_out(fma32(a as f32, b as f32, c as f32, w.round32()).to_bits()));
                match op {
                    V_FMA_MIX_F32 => (if clamp { r.clamp(0.0, 1.0) } else { r }).to_bits(),
                    _ => {
                        let h = w.f16_out(to16(w.f32_in(r).into(), w.round16_64()));
                        let h = if clamp {
                            half::from_f64(half::to_f32(h).clamp(0.0, 1.0).into())
                        } else {
                            h
                        };
                        let h = u32::from(h);
                        let old = w.vread(256 + dst as u16, lane, None)?;
                        if op == V_FMA_MIXLO_F16 {
                            (old & 0xffff_0000) | h
                        } else {
                            (old & 0xffff) | h << 16
                        }
                    }
                }
            }
            // Dot products: packed halves (inline constants as halves) or packed integers.
            V_DOT2_F32_F16 | V_DOT2_F32_BF16 => {
                let (a, b) = (routed(raw(0)?, 0), routed(raw(1)?, 1));
                let c = f32::from_bits(w.vread(srcs[2], lane, lit)?);
                let c = if neg_hi & 4 != 0 { c.abs() } else { c };
                let c = if neg_lo & 4 != 0 { -c } else { c };
                let r = matrix::dot(w, op, a, b, c.to_bits(), neg_lo, clamp);
                if clamp {
                    f32::from_bits(r).clamp(0.0, 1.0).to_bits()
                } else {
                    r
                }
            }
            V_DOT4_I32_IU8 | V_DOT4_U32_U8 | V_DOT8_I32_IU4 | V_DOT8_U32_U4 => {
                let (a, b) = (w.vread(srcs[0], lane, lit)?, w.vread(srcs[1], lane, lit)?);
                let (a, b) = (routed(a, 0), routed(b, 1));
                matrix::dot(w, op, a, b, w.vread(srcs[2], lane, lit)?, neg_lo, clamp)
            }
            other => return Err(format!("VOP3P {} is not implemented", other.name()).into()),
        };
        w.vwrite(dst, lane, r)?;
    }
    Ok(())
}

/// The first 1216 fraction bits of 2/π, most significant first.
const TWO_OVER_PI: [u64; 19] = [
    0xa2f9_836e_4e44_1529,
    0xfc27_57d1_f534_ddc0,
    0xdb62_9599_3c43_9041,
    0xfe51_63ab_debb_c561,
    0xb724_6e3a_424d_d2e0,
    0x0649_2eea_09d1_921c,
    0xfe1d_eb1c_b129_a73e,
    0xe882_35f5_2ebb_4484,
    0xe99c_7026_b45f_7e41,
    0x3991_d639_8353_39f4,
    0x9c84_5f8b_bdf9_283b,
    0x1ff8_97ff_de05_980f,
    0xef2f_118b_5a0a_6d1f,
    0x6d36_7ecf_27cb_09b7,
    0x4f46_3f66_9e5f_ea2d,
    0x7527_bac7_ebe5_f17b,
    0x3d07_39f7_8a52_92ea,
    0x6bfb_5fb1_1f8d_5d08,
    0x5603_3046_fc7b_6bab,
];

/// `v_trig_preop_f64`: 53 bits of 2/π, from fraction bit 53 × `sel` (further for
/// large `x`), scaled to their place (the ISA keeps 1201 bits; beyond them, 0).
fn trig_preop(x: f64, sel: u32) -> f64 {
    let exp = ((x.to_bits() >> 52) & 0x7ff) as i32;
    let mut shift = sel as i32 * 53;
    if exp > 1077 {
        shift += exp - 1077;
    }
    let bit = |n: i32| -> u64 {
        if n >= 1201 {
            return 0;
        }
        TWO_OVER_PI[(n / 64) as usize] >> (63 - n % 64) & 1
    };
    let chunk = (0..53).fold(0u64, |c, k| c << 1 | bit(shift + k));
    let mut scale = -53 - shift;
    if exp >= 1968 {
        scale += 128;
    }
    super::divide::ldexp(chunk as f64, scale)
}

/// The float results of this module's operations that VOP3's clamp bounds to [0, 1]:
/// the type right after the operation's name (`v_trunc_f64`, `v_min3_f16`).
fn clamped_float(name: &str) -> bool {
    const FLOAT: &[&str] = &[
        "v_ceil_f64",
        "v_floor_f64",
        "v_fract_f64",
        "v_rndne_f64",
        "v_trunc_f64",
        "v_trig_preop_f64",
        "v_ldexp_f16",
        "v_max3_f16",
        "v_maxmin_f16",
        "v_med3_f16",
        "v_min3_f16",
        "v_minmax_f16",
        "v_div_fixup_f16",
        "v_frexp_mant_f16",
    ];
    FLOAT.contains(&name)
}

/// A half result clamped to [0, 1] (NaN to 0).
pub(crate) fn clamp_half(h: u16) -> u16 {
    let x = half::to_f32(h);
    if x.is_nan() || x < 0.0 {
        0
    } else if x > 1.0 {
        0x3c00
    } else {
        h
    }
}

/// Whether `op` is one of this module's that clamp saturates or bounds.
pub(crate) fn clamps(op: u16) -> bool {
    name(op).is_some_and(clamped_float)
        || matches!(
            name(op),
            Some(
                "v_add_nc_i16"
                    | "v_sub_nc_i16"
                    | "v_mad_u16"
                    | "v_mad_i16"
                    | "v_mad_u32_u16"
                    | "v_mad_i32_i16"
                    | "v_sad_u8"
                    | "v_sad_hi_u8"
                    | "v_sad_u16"
                    | "v_sad_u32"
                    | "v_msad_u8"
                    | "v_qsad_pk_u16_u8"
                    | "v_mqsad_pk_u16_u8"
                    | "v_mqsad_u32_u8"
            )
        )
}

/// `v_div_fixup_f16`: the special cases of a quotient (S1 the denominator, S2 the
/// numerator), else S0 with the quotient's sign.
fn div_fixup16(s0: f64, s1: f64, s2: f64) -> u16 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |v: f64| if neg { -v } else { v };
    let r = if s2.is_nan() || s1.is_nan() {
        return half::from_f64(if s2.is_nan() { s2 } else { s1 }) | 0x0200;
    } else if (s1 == 0.0 && s2 == 0.0) || (s1.is_infinite() && s2.is_infinite()) {
        return 0xfe00;
    } else if s1 == 0.0 || s2.is_infinite() {
        signed(f64::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 {
        signed(0.0)
    } else {
        signed(s0.abs())
    };
    half::from_f64(r)
}

#[cfg(test)]
mod tests {
    //! Encodings from `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`.
    use super::*;
    use crate::rdna3::testing::{lanes, run};

    /// v4, v6, v8 (and v5, v9 for 64-bit operands) set to the given words.
    fn set(w: &mut Wave, v4: u32, v6: u32, v8: u32) {
        lanes(w, 4, |_| v4);
        lanes(w, 6, |_| v6);
        lanes(w, 8, |_| v8);
    }

    fn run3(words: &[u32], v4: u32, v6: u32, v8: u32) -> u32 {
        run(words, |w| set(w, v4, v6, v8)).unwrap().v[2][0]
    }

    fn f64_of(w: &Wave, r: usize) -> f64 {
        f64::from_bits(u64::from(w.v[r][0]) | u64::from(w.v[r + 1][0]) << 32)
    }

    fn with_f64(x: f64) -> impl FnOnce(&mut Wave) {
        move |w| {
            lanes(w, 4, |_| x.to_bits() as u32);
            lanes(w, 5, |_| (x.to_bits() >> 32) as u32);
        }
    }

    const H1: u32 = 0x3c00; // 1.0 as f16
    const H2: u32 = 0x4000; // 2.0
    const H3: u32 = 0x4200; // 3.0

    #[test]
    fn f64_rounding_and_conversion() {
        assert_eq!(f64_of(&run(&[0x7e04_2f04], with_f64(-2.75)).unwrap(), 2), -2.0, "trunc");
        assert_eq!(f64_of(&run(&[0x7e04_7d04], with_f64(-2.75)).unwrap(), 2), 0.25, "fract");
        assert!(f64_of(&run(&[0x7e04_7d04], with_f64(f64::INFINITY)).unwrap(), 2).is_nan());
        assert_eq!(
            run(&[0x7e04_2b04], with_f64(-3.5)).unwrap().v[2][0],
            0,
            "u32 saturates at 0"
        );
        assert_eq!(run(&[0x7e04_2b04], with_f64(5e9)).unwrap().v[2][0], u32::MAX);
        // v_cvt_off_f32_i4: the low nibble as a signed sixteenth
        assert_eq!(f32::from_bits(run3(&[0x7e04_1d04], 0xf9, 0, 0)), -7.0 / 16.0);
    }

    #[test]
    fn sixteen_bit_integers() {
        // v_not_b16_e64 keeps the other half of the destination.
        let w = run(&[0xd5e9_0002, 0x0000_0104], |w| {
            set(w, 0x1234_00ff, 0, 0);
            lanes(w, 2, |_| 0xabcd_0000);
        })
        .unwrap();
        assert_eq!(w.v[2][0], 0xabcd_ff00);
        assert_eq!(run3(&[0x7e04_d504], 0x8001, 0, 0), 0xffff_8001, "v_cvt_i32_i16");
        // v_add_nc_i16 clamp saturates; shifts take their count from S0
        assert_eq!(run3(&[0xd70d_8002, 0x0002_0d04], 0x7ff0, 0x0100, 0) & 0xffff, 0x7fff);
        assert_eq!(run3(&[0xd738_0002, 0x0002_0d04], 4, 0x0123, 0) & 0xffff, 0x1230);
        assert_eq!(run3(&[0xd73a_0002, 0x0002_0d04], 4, 0x8000, 0) & 0xffff, 0xf800);
        // v_mad_u16 clamp, v_mad_i32_i16, v_med3_i16
        assert_eq!(run3(&[0xd641_8002, 0x0422_0d04], 300, 300, 5) & 0xffff, 0xffff);
        assert_eq!(run3(&[0xd65a_0002, 0x0422_0d04], 0xfffe, 3, 100), 94);
        assert_eq!(run3(&[0xd650_0002, 0x0422_0d04], 0xfff0, 7, 3) & 0xffff, 3);
        // v_cndmask_b16 v2, v4, v6, s0: S1 where the lane's mask bit is set
        let w = run(&[0xd65d_0002, 0x0002_0d04], |w| {
            set(w, 0x1111, 0x2222, 0);
            w.s[0] = 0b10;
        })
        .unwrap();
        assert_eq!((w.v[2][0] & 0xffff, w.v[2][1] & 0xffff), (0x1111, 0x2222));
    }

    #[test]
    fn source_modifiers_on_sixteen_bit_and_packed_operands() {
        // v_ldexp_f16_e32 v2, v4, v6: the exponent is S1's low half as a signed
        // integer (1 · 2^2), whatever its high half holds.
        assert_eq!(run3(&[0x7604_0d04], H1, 0x0001_0002, 0) & 0xffff, 0x4400);
        assert_eq!(run3(&[0x7604_0d04], H1, 0x7fff_fffe, 0) & 0xffff, 0x3400);
        // v_ldexp_f16_e64 v2, v4, -v6: neg flips the exponent's bit 15 (S1 is typed
        // f16): 0x8001 becomes 1, so 1 · 2^1. With op_sel:[0,1,0] (dword 0 bit 12, no
        // LLVM 19 spelling) the exponent is S1's high half: 1 · 2^3.
        assert_eq!(run3(&[0xd53b_0002, 0x4002_0d04], H1, 0x8001, 0) & 0xffff, 0x4000);
        assert_eq!(run3(&[0xd53b_1002, 0x0002_0d04], H1, 0x0003_0001, 0) & 0xffff, 0x4800);
        // v_dot2_f16_f16 v2, -v4, v6, v8: both halves of S0 negated, 1 - 2·1 - 1·3.
        let (a, b) = (H1 << 16 | H2, H3 << 16 | H1);
        assert_eq!(run3(&[0xd666_0002, 0x2422_0d04], a, b, H1) & 0xffff, 0xc400);
        // v_dot2_f16_f16 v2, |v4|, v6, -v8: |(-2, -1)|, -1 + 2 + 3.
        assert_eq!(
            run3(&[0xd666_0102, 0x8422_0d04], a | 0x8000_8000, b, H1) & 0xffff,
            0x4400
        );
        // v_dot2_bf16_bf16 v2, v4, -v6, v8 (1.0 = 0x3f80): 1 - 2 - 3 = -4 (0xc080).
        let (a, b) = (0x3f80_4000, 0x4040_3f80);
        assert_eq!(run3(&[0xd667_0002, 0x4422_0d04], a, b, 0x3f80) & 0xffff, 0xc080);
    }

    #[test]
    fn f16_arithmetic_and_packs() {
        // v_min3_f16, v_dot2_f16_f16 (1·3 + 2·1 + 1), v_pack_b32_f16
        assert_eq!(run3(&[0xd649_0002, 0x0422_0d04], H3, H1, H2) & 0xffff, H1);
        assert_eq!(
            run3(&[0xd666_0002, 0x0422_0d04], H2 << 16 | H1, H1 << 16 | H3, H1) & 0xffff,
            0x4600
        );
        assert_eq!(run3(&[0xd711_0002, 0x0002_0d04], H1, H2, 0), H2 << 16 | H1);
        // v_div_fixup_f16: 0/0 is NaN, x/0 infinite with the quotient's sign
        assert_eq!(run3(&[0xd654_0002, 0x0422_0d04], H1, 0, 0) & 0xffff, 0xfe00);
        assert_eq!(run3(&[0xd654_0002, 0x0422_0d04], H1, 0x8000, H2) & 0xffff, 0xfc00);
        assert_eq!(run3(&[0xd654_0002, 0x0422_0d04], H3, H2, 0xc000) & 0xffff, 0xc200);
        // v_pk_fmac_f16 v2, v4, v6: both halves accumulate into v2
        let w = run(&[0x7804_0d04], |w| {
            set(w, H2 << 16 | H1, H3 << 16 | H3, 0);
            lanes(w, 2, |_| H1 << 16 | H1);
        })
        .unwrap();
        assert_eq!(w.v[2][0], 0x4700 << 16 | 0x4400, "2·3+1 = 7, 1·3+1 = 4");
        // v_ldexp_f16, v_frexp_exp_i16_f16, v_cvt_norm_i16_f16, v_sat_pk_u8_i16
        assert_eq!(run3(&[0x7604_0d04], H3, 2, 0) & 0xffff, 0x4a00, "3·4 = 12");
        assert_eq!(run3(&[0x7e04_b504], H3, 0, 0) & 0xffff, 2, "3 = 0.75·2^2");
        assert_eq!(run3(&[0x7e04_c704], 0xbc00, 0, 0) & 0xffff, 0x8001, "-1.0 → -32767");
        assert_eq!(
            run3(&[0x7e04_c504], 0xff80_0120, 0, 0) & 0xffff,
            0x00ff,
            "(-128, 288) → (0, 255)"
        );
    }

    #[test]
    fn packs_and_conversions_of_32_bit_values() {
        let one = 1.0f32.to_bits();
        let w = run3(&[0xd721_0002, 0x0002_0d04], one, (-2.0f32).to_bits(), 0);
        assert_eq!(w, 0x8001_7fff, "snorm: 1.0 and -2.0 (clamped to -1)");
        assert_eq!(run3(&[0xd723_0002, 0x0002_0d04], 70_000, 12, 0), 12 << 16 | 0xffff);
        assert_eq!(
            run3(
                &[0xd706_0002, 0x0002_0d04],
                (-40_000.0f32).to_bits(),
                3.7f32.to_bits(),
                0
            ),
            3 << 16 | 0x8000
        );
        // v_cvt_pk_u8_f32 v2, v4, v6, v8: into byte v6 of v8
        assert_eq!(
            run3(&[0xd626_0002, 0x0422_0d04], 200.4f32.to_bits(), 2, 0x1111_1111),
            0x11c8_1111
        );
        assert_eq!(run3(&[0xd71d_0002, 0x0002_0d04], 4, 8, 0), 0xf00, "v_bfm_b32");
    }

    #[test]
    fn byte_sums_and_averages() {
        let (a, b) = (0x0a14_1e28u32, 0x0514_2800u32);
        // |10-5| + 0 + |30-40| + |40-0| = 55, plus 7
        assert_eq!(run3(&[0xd622_0002, 0x0422_0d04], a, b, 7), 62);
        // masked: the zero byte of S1 is skipped
        assert_eq!(run3(&[0xd639_0002, 0x0422_0d04], a, b, 7), 22);
        assert_eq!(
            run3(&[0xd624_0002, 0x0422_0d04], 0x0001_0010, 0x0003_0001, 1),
            1 + 15 + 2,
            "v_sad_u16"
        );
        // v_lerp_u8: rounded byte averages
        assert_eq!(
            run3(&[0xd615_0002, 0x0422_0d04], 0x0001_0203, 0x0001_0302, 0x0000_0101),
            0x0001_0303
        );
        // v_qsad_pk_u16_u8 v[2:3], v[4:5], v6, v[8:9]: four windows of S0
        let w = run(&[0xd63a_0002, 0x0422_0d04], |w| {
            lanes(w, 4, |_| 0x0403_0201);
            lanes(w, 5, |_| 0x0000_0005);
            lanes(w, 6, |_| 0x0403_0201);
        })
        .unwrap();
        assert_eq!(w.v[2][0] & 0xffff, 0, "window 0 matches");
        assert_eq!(w.v[2][0] >> 16, 1 + 1 + 1 + 1, "window 1 is one off in each byte");
        // v_mqsad_u32_u8 v[2:5], v[6:7], v8, v[10:13]
        let w = run(&[0xd63d_0002, 0x042a_1106], |w| {
            lanes(w, 6, |_| 0x0403_0201);
            lanes(w, 8, |_| 0x0403_0201);
            lanes(w, 12, |_| 100);
        })
        .unwrap();
        // Window 2 is bytes 3,4,0,0 against 1,2,3,4.
        assert_eq!((w.v[2][0], w.v[4][0]), (0, 100 + 2 + 2 + 3 + 4));
    }

    #[test]
    fn float_leftovers_and_cube_maps() {
        let f = |x: f32| x.to_bits();
        assert_eq!(run3(&[0x0a04_0d04], f(1.5), f(4.0), 0), f(2.5), "v_subrev_f32");
        assert_eq!(
            run3(&[0xd609_0002, 0x0422_0d04], f(0.0), f(f32::INFINITY), f(3.0)),
            f(3.0),
            "dx9 zero"
        );
        assert_eq!(
            run3(&[0xd60c_0002, 0x0422_0d04], f(0.5), f(-3.0), f(1.0)),
            f(3.0),
            "face -y"
        );
        assert_eq!(
            run3(&[0xd60f_0002, 0x0422_0d04], f(0.5), f(-3.0), f(1.0)),
            f(-6.0),
            "2 × major axis"
        );
        assert_eq!(
            run3(&[0x3c04_0d04], 0xf0f0_0000, 0xff00_ff00, 0),
            !(0xf0f0_0000u32 ^ 0xff00_ff00)
        );
        assert_eq!(
            run3(&[0x1804_0d04], 0xff_ffff, 0xff_ffff, 0),
            ((0xff_ffffu64 * 0xff_ffff) >> 32) as u32
        );
        assert_eq!(
            run3(&[0x1404_0d04], 0x80_0000, 0x80_0000, 0),
            ((1i64 << 46) >> 32) as u32,
            "-2^23 squared"
        );
    }

    #[test]
    fn swaps_relative_moves_and_no_ops() {
        // v_swap_b32 v2, v4
        let w = run(&[0x7e04_cb04], |w| {
            lanes(w, 2, |_| 22);
            lanes(w, 4, |_| 44);
        })
        .unwrap();
        assert_eq!((w.v[2][0], w.v[4][0]), (44, 22));
        // v_swaprel_b32 v2, v4 with m0 = (1 << 16) | 2: swaps v3 and v6
        let w = run(&[0x7e04_d104], |w| {
            lanes(w, 3, |_| 33);
            lanes(w, 6, |_| 66);
            w.s[M0] = 1 << 16 | 2;
        })
        .unwrap();
        assert_eq!((w.v[3][0], w.v[6][0]), (66, 33));
        run(&[0x7e00_0000], |_| {}).unwrap();
    }

    #[test]
    fn packed_shifts_mixed_fma_and_dots() {
        // v_pk_lshlrev_b16 / v_pk_ashrrev_i16 v2, v4, v6: per half
        assert_eq!(
            run3(&[0xcc04_4002, 0x1802_0d04], 0x0004_0001, 0x0001_0003, 0),
            0x0010_0006
        );
        assert_eq!(
            run3(&[0xcc06_4002, 0x1802_0d04], 0x0004_0001, 0x8000_fff0, 0),
            0xf800_fff8
        );
        let f = |x: f32| x.to_bits();
        // v_fma_mix_f32 v2, v4, v6, v8 op_sel_hi:[1,0,1]: v4 and v8 as low halves (f16)
        assert_eq!(run3(&[0xcc20_4002, 0x0c22_0d04], H3, f(2.5), H1), f(8.5));
        // v_fma_mixhi_f16 op_sel:[1,0,0]: v4's high half; the result to v2's high half
        let w = run(&[0xcc22_4802, 0x0c22_0d04], |w| {
            set(w, H2 << 16, f(1.5), H1);
            lanes(w, 2, |_| 0x1234);
        })
        .unwrap();
        assert_eq!(w.v[2][0], 0x4400 << 16 | 0x1234, "2 × 1.5 + 1 = 4");
        // v_fma_mix_f32 v2, -v4, |v6|, v8: all f32
        assert_eq!(run3(&[0xcc20_0202, 0x2422_0d04], f(2.0), f(-3.0), f(10.0)), f(4.0));
        // Rounded once, in MODE's direction: v_fma_mix_f32 v2, v4, v6, v8 (all f32),
        // (1 + 2^-23)² = 1 + 2^-22 + 2^-46; v_fma_mixhi_f16 from a half and an f32,
        // (1 + 2^-10)² = 1 + 2^-9 + 2^-20.
        let x = f32::from_bits(1f32.to_bits() + 1);
        for (round, f32_bits, f16_bits) in [
            (0, 2, 0x3c02),
            (0b0101, 3, 0x3c03),
            (0b1010, 2, 0x3c02),
            (0b1111, 2, 0x3c02),
        ] {
            let w = run(&[0xcc20_0002, 0x0422_0d04], |w| {
                set(w, f(x), f(x), 0);
                w.mode = w.mode & !0xf | round;
            })
            .unwrap();
            assert_eq!(w.v[2][0], 1f32.to_bits() + f32_bits, "MODE round {round:#b}");
            let w = run(&[0xcc22_4802, 0x0c22_0d04], |w| {
                set(w, 0x3c01 << 16, f(1.0 + 2f32.powi(-10)), 0);
                w.mode = w.mode & !0xf | round;
            })
            .unwrap();
            assert_eq!(w.v[2][0] >> 16, f16_bits, "MODE round {round:#b}");
        }
        // Denormals as the pseudocode's steps have them: v_fma_mix_f32 v2, v4, v6, v8
        // op_sel_hi:[1,0,1] with the least f16 denormal × 1.0 + 0 is 2^-24 with f16
        // denormals kept, 0 when f16 inputs flush (f16_to_f32), 2^-24 again when only
        // f16 outputs flush (the result is an f32).
        use crate::rdna3::wave::{MODE_DENORM_F16_F64_IN, MODE_DENORM_F16_F64_OUT};
        for (clear, want) in [
            (0, 2f32.powi(-24)),
            (MODE_DENORM_F16_F64_IN, 0.0),
            (MODE_DENORM_F16_F64_OUT, 2f32.powi(-24)),
        ] {
            let w = run(&[0xcc20_4002, 0x0c22_0d04], |w| {
                set(w, 0x0001, f(1.0), 0);
                w.mode &= !clear;
            })
            .unwrap();
            assert_eq!(f32::from_bits(w.v[2][0]), want, "MODE {clear:#x} cleared");
        }
        // dots: f16 and bf16 halves into f32
        assert_eq!(
            run3(&[0xcc13_4002, 0x1c22_0d04], H2 << 16 | H1, H3 << 16 | H3, f(1.0)),
            f(10.0)
        );
        let bf = |x: f32| x.to_bits() >> 16;
        assert_eq!(
            run3(
                &[0xcc1a_4002, 0x1c22_0d04],
                bf(2.0) << 16 | bf(1.0),
                bf(3.0) << 16 | bf(4.0),
                f(0.5)
            ),
            f(10.5)
        );
        // v_dot4_i32_iu8 neg_lo:[1,0,0]: A signed, B unsigned
        assert_eq!(
            run3(&[0xcc16_4002, 0x3c22_0d04], 0x0000_00ff, 0x0000_00ff, 1000),
            (1000 - 255) as u32
        );
        // v_dot4_u32_u8 clamp saturates
        assert_eq!(
            run3(&[0xcc17_c002, 0x1c22_0d04], 0xffff_ffff, 0xffff_ffff, u32::MAX - 5),
            u32::MAX
        );
        // v_dot8_i32_iu4 neg_lo:[1,1,0]: signed nibbles (-1 × -1 eight times)
        assert_eq!(run3(&[0xcc18_4002, 0x7c22_0d04], 0xffff_ffff, 0xffff_ffff, 2), 10);
    }

    /// op_sel / op_sel_hi route the dot products' S0 and S1 halves, neg_lo / neg_hi
    /// negate the float forms' halves; the f32 accumulator is read whole, negated by
    /// neg_lo[2], made absolute by neg_hi[2]; clamp bounds the f32 result.
    #[test]
    fn dot_products_with_op_sel_and_neg() {
        let f = |x: f32| x.to_bits();
        let (a, b) = (H2 << 16 | H1, H3 << 16 | H3);
        // v_dot2_f32_f16 v2, v4, v6, v8: 1·3 + 2·3 + 1.
        assert_eq!(run3(&[0xcc13_4002, 0x1c22_0d04], a, b, f(1.0)), f(10.0));
        // op_sel:[1,0,0]: S0's low element from its high half: 2·3 + 2·3 + 1.
        assert_eq!(run3(&[0xcc13_4802, 0x1c22_0d04], a, b, f(1.0)), f(13.0));
        // op_sel_hi:[0,1,1]: S0's high element from its low half: 1·3 + 1·3 + 1.
        assert_eq!(run3(&[0xcc13_4002, 0x1422_0d04], a, b, f(1.0)), f(7.0));
        // neg_lo:[1,0,0]: -1·3 + 2·3 + 1; neg_hi:[0,1,0]: 1·3 + 2·(-3) + 1.
        assert_eq!(run3(&[0xcc13_4002, 0x3c22_0d04], a, b, f(1.0)), f(4.0));
        assert_eq!(run3(&[0xcc13_4202, 0x1c22_0d04], a, b, f(1.0)), f(-2.0));
        // v_dot2_f32_bf16 op_sel:[0,1,0] neg_hi:[1,0,0]: S1's low element from its high
        // half (4), S0's high element negated: 1·4 + (-2)·4 + 0.5.
        let bf = |x: f32| x.to_bits() >> 16;
        assert_eq!(
            run3(
                &[0xcc1a_5102, 0x1c22_0d04],
                bf(2.0) << 16 | bf(1.0),
                bf(4.0) << 16 | bf(3.0),
                f(0.5)
            ),
            f(-3.5)
        );
        // v_dot4_u32_u8 v2, v4, v6, v8 op_sel:[1,0,0]: bytes 0-1 from bytes 2-3.
        assert_eq!(run3(&[0xcc17_4002, 0x1c22_0d04], 0x0403_0201, 0x0101_0101, 0), 10);
        assert_eq!(run3(&[0xcc17_4802, 0x1c22_0d04], 0x0403_0201, 0x0101_0101, 0), 14);
        // v_dot8_u32_u4 op_sel_hi:[1,0,1]: S1's high nibbles from its low half.
        assert_eq!(run3(&[0xcc19_4002, 0x0c22_0d04], 0x1111_1111, 0x0000_2222, 0), 16);
        // The f32 accumulator: op_sel:[0,0,1] and op_sel_hi:[1,1,0] leave it whole,
        // neg_lo:[0,0,1] negates it, neg_hi:[0,0,1] takes its absolute value, both -|c|.
        assert_eq!(run3(&[0xcc13_6002, 0x1c22_0d04], a, b, f(1.0)), f(10.0));
        assert_eq!(run3(&[0xcc13_0002, 0x1c22_0d04], a, b, f(1.0)), f(10.0));
        assert_eq!(run3(&[0xcc13_4002, 0x9c22_0d04], a, b, f(1.0)), f(8.0));
        assert_eq!(run3(&[0xcc13_4402, 0x1c22_0d04], a, b, f(-1.0)), f(10.0));
        assert_eq!(run3(&[0xcc13_4402, 0x9c22_0d04], a, b, f(1.0)), f(8.0));
        assert_eq!(run3(&[0xcc13_4002, 0x1c22_0d04], a, b, f(-1.0)), f(8.0));
        // clamp: 9 + 1 to 1, 9 - 20 to 0, 0.25 - 0.25 + 0.5 kept.
        assert_eq!(run3(&[0xcc13_c002, 0x1c22_0d04], a, b, f(1.0)), f(1.0));
        assert_eq!(run3(&[0xcc13_c002, 0x1c22_0d04], a, b, f(-20.0)), f(0.0));
        assert_eq!(run3(&[0xcc13_c002, 0x1c22_0d04], a, b, f(-8.5)), f(0.5));
        // v_dot4_i32_iu8 op_sel:[0,0,1]: the 32-bit accumulator whole as well.
        assert_eq!(run3(&[0xcc16_6002, 0x1c22_0d04], 0x0403_0201, 0x0101_0101, 5), 15);
    }

    #[test]
    fn dual_issue_bfloat_dot() {
        // v_dual_dot2acc_f32_bf16 v1, v2, v3 :: v_dual_mov_b32 v4, v5 (X opcode 13; LLVM
        // 19 has no gfx1100 spelling of it, so the encoding is v_dual_dot2acc_f32_f16's
        // with the X opcode raised by one): 0.5 + 1·4 + 2·3.
        let bf = |x: f32| x.to_bits() >> 16;
        let w = run(&[0xcb50_0702, 0x0104_0105], |w| {
            lanes(w, 1, |_| 0.5f32.to_bits());
            lanes(w, 2, |_| bf(2.0) << 16 | bf(1.0));
            lanes(w, 3, |_| bf(3.0) << 16 | bf(4.0));
            lanes(w, 5, |_| 55);
        })
        .unwrap();
        assert_eq!((f32::from_bits(w.v[1][0]), w.v[4][0]), (10.5, 55));
    }

    #[test]
    fn trig_preop_gives_successive_bits_of_two_over_pi() {
        // v_trig_preop_f64 v[2:3], v[4:5], v6
        let chunk = |x: f64, sel: u32| {
            let w = run(&[0xd72f_0002, 0x0002_0d04], |w| {
                with_f64(x)(w);
                lanes(w, 6, |_| sel);
            })
            .unwrap();
            f64_of(&w, 2)
        };
        // The first 53 bits of 2/π, truncated (the nearest double is …883).
        assert_eq!(chunk(1.0, 0).to_bits(), 0x3fe4_5f30_6dc9_c882);
        // The chunks add up to 2/π to far beyond a double's precision.
        let (a, b, c) = (chunk(1.0, 0), chunk(1.0, 1), chunk(1.0, 2));
        assert!(b > 0.0 && b < a * 2f64.powi(-52) && c < b * 2f64.powi(-52));
        assert_eq!(a + b, std::f64::consts::FRAC_2_PI);
        // Large inputs move the window further down.
        assert!(chunk(2f64.powi(100), 0) < a * 2f64.powi(-40));
        // Deep chunks are tiny but there (until they fall below the smallest double);
        // past the 1201 bits the ISA keeps, 0 (sel 31 with the largest exponent starts
        // at bit 31 × 53 + 970).
        assert!(chunk(1.0, 18) > 0.0);
        assert_eq!(chunk(f64::MAX, 31), 0.0);
    }
}
