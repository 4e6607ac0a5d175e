//! VOP3's output modifier (omod: the result times 2, 4 or 0.5) and clamp for the
//! operations whose own code does not apply them. The f32 and f64 arithmetic, the f16
//! arithmetic and the integer adds, subtracts, multiply-adds and sums of absolute
//! differences apply them where they compute; everything else LLVM assembles with
//! them comes here:
//! - a float result (f16, f32 or f64 by the ISA name's first type; both halves of
//!   `v_cvt_pk_rtz_f16_f32` and `v_pack_b32_f16`): the operation runs without them,
//!   then its result is scaled and clamped to [0, 1] (NaN to 0) as the f32 arithmetic's
//!   are, in the half op_sel[3] picks for a 16-bit result;
//! - an integer result clamp cannot change (conversions from float, which saturate
//!   anyway; exponents; 16-bit min/max/median): the operation runs without it.
//!
//! The rest are refused, naming the instruction: omod on an integer result (the ISA
//! defines output modifiers for float results only) and encodings LLVM rejects.

use super::decode::Inst;
use super::exact::{F16, F32, F64};
use super::exec::{Mods, R, output_mods, output_mods64, valu_lanes};
use super::half;
use super::wave::Wave;

/// Which halves of the destination a 16-bit float result fills.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Halves {
    /// One half (op_sel[3] picks which).
    One,
    /// Both halves of the register.
    Both,
}

/// How a result takes clamp and omod.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    F16(Halves),
    F32,
    F64,
    /// An integer result that clamp leaves as it is.
    ClampChangesNothing,
}

/// Integer results clamp leaves alone, by name prefix.
const CLAMP_CHANGES_NOTHING: &[&str] = &[
    "v_cvt_i32_f",
    "v_cvt_u32_f",
    "v_cvt_floor_i32_f32",
    "v_cvt_nearest_i32_f32",
    "v_cvt_norm_",
    "v_cvt_pk_norm_",
    "v_cvt_pk_i16_f32",
    "v_cvt_pk_u16_f32",
    "v_cvt_pk_u8_f32",
    "v_frexp_exp_",
    "v_min3_i16",
    "v_min3_u16",
    "v_max3_i16",
    "v_max3_u16",
    "v_med3_i16",
    "v_med3_u16",
];

fn kind(name: &str) -> Option<Kind> {
    if matches!(name, "v_cvt_pk_rtz_f16_f32" | "v_pack_b32_f16") {
        return Some(Kind::F16(Halves::Both));
    }
    if CLAMP_CHANGES_NOTHING.iter().any(|p| name.starts_with(p)) {
        return Some(Kind::ClampChangesNothing);
    }
    match super::rounding::result_format(name)? {
        f if f == F16 => Some(Kind::F16(Halves::One)),
        f if f == F32 => Some(Kind::F32),
        f if f == F64 => Some(Kind::F64),
        _ => None,
    }
}

/// A half's value after omod and clamp.
fn half_mods(h: u16, m: Mods) -> u16 {
    if m.omod == 0 && !m.clamp {
        return h;
    }
    let x = f64::from(half::to_f32(h)) * [1.0, 2.0, 4.0, 0.5][usize::from(m.omod & 3)];
    let h = half::from_f64(x);
    if m.clamp { super::valu::clamp_half(h) } else { h }
}

/// Runs a VOP3 operation with clamp or omod its own code does not apply (see the
/// module's documentation).
pub(crate) fn apply(
    w: &mut Wave,
    i: &Inst,
    op: u16,
    dst: usize,
    sdst: Option<usize>,
    srcs: [u16; 3],
    m: Mods,
) -> R<()> {
    let name = super::valu::name(op)
        .or_else(|| super::opcodes::Vop3sd::from_op(op).map(|o| o.name()))
        .unwrap_or("this opcode");
    let refuse = |why: &str| {
        Err(format!(
            "{} on {name} is refused: {why}",
            match (m.clamp, m.omod != 0) {
                (true, true) => "clamp and omod",
                (true, false) => "clamp",
                _ => "omod",
            }
        ))
    };
    let Some(kind) = kind(name) else {
        return refuse("an encoding LLVM rejects, with no meaning in the ISA");
    };
    let bare = Mods {
        clamp: false,
        omod: 0,
        ..m
    };
    if kind == Kind::ClampChangesNothing {
        if m.omod != 0 {
            return refuse("the ISA defines output modifiers for float results only");
        }
        return valu_lanes(w, i, op, dst, sdst, srcs, bare);
    }
    valu_lanes(w, i, op, dst, sdst, srcs, bare)?;
    let exec = w.exec();
    for lane in (0..32).filter(|l| exec >> l & 1 == 1) {
        match kind {
            Kind::F32 => {
                let v = w.vread(256 + dst as u16, lane, None)?;
                w.vwrite(dst, lane, output_mods(v, m))?;
            }
            Kind::F64 => {
                let lo = w.vread(256 + dst as u16, lane, None)?;
                let hi = w.vread(256 + dst as u16 + 1, lane, None)?;
                let v = output_mods64(u64::from(lo) | u64::from(hi) << 32, m);
                w.vwrite(dst, lane, v as u32)?;
                w.vwrite(dst + 1, lane, (v >> 32) as u32)?;
            }
            Kind::F16(which) => {
                let v = w.vread(256 + dst as u16, lane, None)?;
                let (lo, hi) = (half_mods(v as u16, m), half_mods((v >> 16) as u16, m));
                let v = match (which, m.opsel & 8 != 0) {
                    (Halves::Both, _) => u32::from(lo) | u32::from(hi) << 16,
                    (Halves::One, false) => (v & 0xffff_0000) | u32::from(lo),
                    (Halves::One, true) => (v & 0xffff) | u32::from(hi) << 16,
                };
                w.vwrite(dst, lane, v)?;
            }
            Kind::ClampChangesNothing => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Encodings from `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`.
    use crate::rdna3::testing::{lanes, run};

    fn one(words: &[u32], a: u32, b: u32, c: u32) -> Result<(u32, u32), String> {
        let w = run(words, |w| {
            lanes(w, 1, |_| 0x1234_5678);
            lanes(w, 2, |_| a);
            lanes(w, 3, |_| b);
            lanes(w, 4, |_| c);
        })?;
        Ok((w.v[1][0], w.v[2][0]))
    }

    #[test]
    fn float_results_take_omod_and_clamp() {
        let f = |x: f32| x.to_bits();
        // v_add_f16_e64 v1, v2, v3 mul:2: (1 + 2) · 2 = 6 in the low half, the high kept.
        assert_eq!(
            one(&[0xd532_0001, 0x0802_0702], 0x3c00, 0x4000, 0).unwrap().0,
            0x1234_4600
        );
        // op_sel[3] (dword 0 bit 14; LLVM 19 has no gfx1100 spelling for it here): into
        // the high half, where the f16 arithmetic puts it.
        assert_eq!(
            one(&[0xd532_4001, 0x0802_0702], 0x3c00, 0x4000, 0).unwrap().0,
            0x4600_5678
        );
        // v_sqrt_f16_e64 v1, v2 div:2: sqrt(4) / 2 = 1.
        assert_eq!(
            one(&[0xd5d5_0001, 0x1800_0102], 0x4400, 0, 0).unwrap().0 & 0xffff,
            0x3c00
        );
        // v_cvt_f32_f16_e64 v1, v2 mul:4: 1.5 · 4.
        assert_eq!(one(&[0xd58b_0001, 0x1000_0102], 0x3e00, 0, 0).unwrap().0, f(6.0));
        // v_ldexp_f32 v1, v2, v3 clamp: 0.75 · 2^1 clamped to 1; omod 0.5 (div:2) 0.75.
        assert_eq!(one(&[0xd71c_8001, 0x0002_0702], f(0.75), 1, 0).unwrap().0, f(1.0));
        assert_eq!(one(&[0xd71c_0001, 0x1802_0702], f(0.75), 1, 0).unwrap().0, f(0.75));
        // v_subrev_f32_e64 v1, v2, v3 clamp: 1 - 3 = -2 clamps to 0; mul:4 gives 8 from
        // 3 - 1.
        assert_eq!(one(&[0xd505_8001, 0x0002_0702], f(3.0), f(1.0), 0).unwrap().0, 0);
        assert_eq!(one(&[0xd505_0001, 0x1002_0702], f(1.0), f(3.0), 0).unwrap().0, f(8.0));
        // v_floor_f64 v[1:2], v[2:3] mul:2 (v2:v3 = -1.5): floor -2, times 2 is -4;
        // with clamp 0.
        let w = run(&[0xd59a_0001, 0x0800_0102], |w| {
            lanes(w, 2, |_| 0);
            lanes(w, 3, |_| ((-1.5f64).to_bits() >> 32) as u32);
        })
        .unwrap();
        assert_eq!(f64::from_bits(u64::from(w.v[1][0]) | u64::from(w.v[2][0]) << 32), -4.0);
        let w = run(&[0xd59a_8001, 0x0000_0102], |w| {
            lanes(w, 2, |_| 0);
            lanes(w, 3, |_| ((-1.5f64).to_bits() >> 32) as u32);
        })
        .unwrap();
        assert_eq!(u64::from(w.v[1][0]) | u64::from(w.v[2][0]) << 32, 0);
        // The division helpers apply them too: v_sqrt_f64 v[1:2], v[2:3] of 16 with
        // clamp is 1, with mul:4 16; v_div_fixup_f32 v1, v2, v3, v4 div:2 (S0 = 3 with
        // the quotient's sign, + / +) 1.5.
        let sqrt64 = |d0: u32, d1: u32| {
            let w = run(&[d0, d1], |w| {
                lanes(w, 2, |_| 0);
                lanes(w, 3, |_| (16f64.to_bits() >> 32) as u32);
            })
            .unwrap();
            f64::from_bits(u64::from(w.v[1][0]) | u64::from(w.v[2][0]) << 32)
        };
        assert_eq!(sqrt64(0xd5b4_8001, 0x0000_0102), 1.0);
        assert_eq!(sqrt64(0xd5b4_0001, 0x1000_0102), 16.0);
        assert_eq!(
            one(&[0xd627_0001, 0x1c12_0702], f(3.0), f(2.0), f(6.0)).unwrap().0,
            f(1.5)
        );
        // v_cvt_pk_rtz_f16_f32 v1, v2, v3 clamp: both halves clamped (2 → 1, -1 → 0).
        assert_eq!(
            one(&[0xd52f_8001, 0x0002_0702], f(2.0), f(-1.0), 0).unwrap().0,
            0x0000_3c00
        );
    }

    #[test]
    fn integer_results_under_clamp() {
        // v_cvt_i32_f32_e64 v1, v2 clamp: saturating already.
        assert_eq!(
            one(&[0xd588_8001, 0x0000_0102], 3e9f32.to_bits(), 0, 0).unwrap().0,
            i32::MAX as u32
        );
        // v_min3_u16 v1, v2, v3, v4 clamp: unchanged.
        assert_eq!(one(&[0xd64b_8001, 0x0412_0702], 7, 5, 9).unwrap().0 & 0xffff, 5);
        // v_mul_u32_u24_e64 v1, v2, v3 clamp: 0xffffff² saturates; without clamp wraps.
        assert_eq!(
            one(&[0xd50b_8001, 0x0002_0702], 0xff_ffff, 0xff_ffff, 0).unwrap().0,
            u32::MAX
        );
        assert_eq!(
            one(&[0xd50b_0001, 0x0002_0702], 0xff_ffff, 0xff_ffff, 0).unwrap().0,
            0xfe00_0001
        );
        // v_mad_i32_i24 v1, v2, v3, v4 clamp: -2^23 · 2^23-1 - 2^31 saturates to i32::MIN.
        assert_eq!(
            one(&[0xd60a_8001, 0x0412_0702], 0x80_0000, 0x7f_ffff, 0x8000_0000)
                .unwrap()
                .0,
            0x8000_0000
        );
        // v_sad_u8 v1, v2, v3, v4 clamp: 4 · 255 + 0xffff_ff00 saturates.
        assert_eq!(
            one(&[0xd622_8001, 0x0412_0702], u32::MAX, 0, 0xffff_ff00).unwrap().0,
            u32::MAX
        );
        assert_eq!(
            one(&[0xd622_0001, 0x0412_0702], u32::MAX, 0, 0xffff_ff00).unwrap().0,
            0x2fc
        );
        // v_div_scale_f32 v1, s10, v2, v3, v4 mul:4: 2 / 1 · 4 (no scaling needed).
        assert_eq!(
            one(
                &[0xd6fc_0a01, 0x1412_0702],
                2f32.to_bits(),
                1f32.to_bits(),
                2f32.to_bits()
            )
            .unwrap()
            .0,
            8f32.to_bits()
        );
        // v_subrev_co_u32 v1, s10, v2, v3 clamp: 1 - 2 saturates to 0.
        assert_eq!(one(&[0xd702_8a01, 0x0002_0702], 2, 1, 0).unwrap().0, 0);
        // omod on an integer result is refused, naming the instruction (the f64
        // conversion too).
        let e = one(&[0xd588_0001, 0x0800_0102], 0, 0, 0).unwrap_err();
        assert!(e.contains("v_cvt_i32_f32") && e.contains("float results only"), "{e}");
        let e = one(&[0xd583_0001, 0x0800_0102], 0, 0, 0).unwrap_err();
        assert!(e.contains("v_cvt_i32_f64") && e.contains("float results only"), "{e}");
        // With clamp it saturates as without (v2:v3 = 2^40).
        assert_eq!(
            one(
                &[0xd583_8001, 0x0000_0102],
                0,
                (2f64.powi(40).to_bits() >> 32) as u32,
                0
            )
            .unwrap()
            .0,
            i32::MAX as u32
        );
        // Clamp on v_mul_lo_u32 (LLVM rejects it) is refused.
        assert!(
            one(&[0xd72c_8001, 0x0002_0702], 1, 1, 0)
                .unwrap_err()
                .contains("LLVM rejects")
        );
    }

    #[test]
    fn sixty_four_bit_multiply_adds_carry_and_saturate() {
        // v_mad_u64_u32 v[1:2], s10, v3, v4, v[5:6] (clamp: dword 0 bit 15).
        let mad = |d0: u32, a: u32, b: u32, c: u64| {
            let w = run(&[d0, 0x0416_0903], |w| {
                lanes(w, 3, |_| a);
                lanes(w, 4, |_| b);
                lanes(w, 5, |_| c as u32);
                lanes(w, 6, |_| (c >> 32) as u32);
            })
            .unwrap();
            (u64::from(w.v[1][0]) | u64::from(w.v[2][0]) << 32, w.s[10])
        };
        let (max, m) = (u32::MAX, u64::from(u32::MAX));
        // (2^32-1)² + 2^64-1 = 2^65 - 2^33: bit 64 set, low 64 bits 2^64 - 2^33.
        assert_eq!(
            mad(0xd6fe_0a01, max, max, u64::MAX),
            (u64::MAX - (2 * m + 1) + 1 - 1, u32::MAX)
        );
        assert_eq!(mad(0xd6fe_8a01, max, max, u64::MAX), (u64::MAX, u32::MAX));
        assert_eq!(mad(0xd6fe_0a01, 3, 4, 5), (17, 0));
        // v_mad_i64_i32: -1 · 1 + 0 is -1, bit 64 of the 65-bit result set.
        let (r, c) = mad(0xd6ff_0a01, u32::MAX, 1, 0);
        assert_eq!((r, c), (u64::MAX, u32::MAX));
        // i64::MAX + 2^31 · 2^31 saturates under clamp.
        let (r, _) = mad(0xd6ff_8a01, 0x8000_0000, 0x8000_0000, i64::MAX as u64);
        assert_eq!(r, i64::MAX as u64);
    }
}
