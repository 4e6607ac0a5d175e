//! Vector compares (VOPC and their VOP3 forms) and float classes.

use super::decode::Inst;
use super::exec::{Mods, R, f, f64_src, unsupported};
use super::opcodes::op::vopc;
use super::packed::f16_src;
use super::wave::{EXEC_LO, Wave};

pub(crate) fn vcmp(w: &mut Wave, i: &Inst, op: u16, sdst: usize, srcs: [u16; 2], m: Mods) -> R<()> {
    if m.clamp || m.omod != 0 {
        return Err("clamp or omod on a compare is not implemented".into());
    }
    // v_cmpx_*: the same compares 0x80 up, writing EXEC instead.
    let (op, sdst) = if op >= 0x80 { (op - 0x80, EXEC_LO) } else { (op, sdst) };
    let exec = w.exec();
    let mut mask = 0u32;
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        // v_cmp_class_f16/f32/f64: S1's bit for S0's class.
        if (0x7d..=0x7f).contains(&op) {
            let (bits, width) = match op {
                vopc::V_CMP_CLASS_F16_E32 => (w.vread(srcs[0], lane, i.literal)? as u64 & 0xffff, 16),
                vopc::V_CMP_CLASS_F32_E32 => (w.vread(srcs[0], lane, i.literal)? as u64, 32),
                _ => (w.vread64(srcs[0], lane, i.literal)?, 64),
            };
            let sign = 1u64 << (width - 1);
            let bits = if m.abs & 1 != 0 { bits & !sign } else { bits };
            let bits = if m.neg & 1 != 0 { bits ^ sign } else { bits };
            let select = w.vread(srcs[1], lane, i.literal)?;
            mask |= (select >> float_class(bits, width) & 1) << lane;
            continue;
        }
        // Float compares: f16 from 0x00, f32 from 0x10, f64 from 0x20.
        if op < 0x30 {
            let (x, y) = match op >> 4 {
                0 => (
                    f16_src(w, srcs[0], lane, i.literal, m, 0)?,
                    f16_src(w, srcs[1], lane, i.literal, m, 1)?,
                ),
                1 => {
                    let (a, b) = (w.vread(srcs[0], lane, i.literal)?, w.vread(srcs[1], lane, i.literal)?);
                    (w.f32_in(f(m.float(0, a))) as f64, w.f32_in(f(m.float(1, b))) as f64)
                }
                _ => (
                    f64_src(w, srcs[0], lane, i.literal, m, 0)?,
                    f64_src(w, srcs[1], lane, i.literal, m, 1)?,
                ),
            };
            mask |= (float_compare(op & 0xf, x, y) as u32) << lane;
            continue;
        }
        // Integer compares: i16, u16, i32, u32, i64, u64 in groups of eight from 0x30.
        if !(0x30..0x60).contains(&op) {
            return Err(unsupported(i));
        }
        let (family, k) = ((op - 0x30) >> 3, op & 7);
        let o = if family >= 4 {
            let (a, b) = (
                w.vread64(srcs[0], lane, i.literal)?,
                w.vread64(srcs[1], lane, i.literal)?,
            );
            if family == 4 {
                (a as i64).cmp(&(b as i64))
            } else {
                a.cmp(&b)
            }
        } else {
            let (a, b) = (w.vread(srcs[0], lane, i.literal)?, w.vread(srcs[1], lane, i.literal)?);
            let (a, b) = if family < 2 {
                (m.half(0, a) as u32, m.half(1, b) as u32)
            } else {
                (a, b)
            };
            match family {
                0 => (a as u16 as i16).cmp(&(b as u16 as i16)),
                2 => (a as i32).cmp(&(b as i32)),
                _ => a.cmp(&b),
            }
        };
        use std::cmp::Ordering::{Equal, Greater, Less};
        let r = match k {
            0 => false,
            1 => o == Less,
            2 => o == Equal,
            3 => o != Greater,
            4 => o == Greater,
            5 => o != Equal,
            6 => o != Less,
            _ => true,
        };
        mask |= (r as u32) << lane;
    }
    w.swrite(sdst, mask)
}

/// The class bit `v_cmp_class` tests for float `bits` of `width` (16, 32, 64): 0
/// signaling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0,
/// 7 +denormal, 8 +normal, 9 +inf.
pub(crate) fn float_class(bits: u64, width: u32) -> u32 {
    let mant_bits = match width {
        16 => 10,
        32 => 23,
        _ => 52,
    };
    let exp_mask = (1u64 << (width - 1 - mant_bits)) - 1;
    let (neg, exp, mant) = (
        bits >> (width - 1) & 1 != 0,
        bits >> mant_bits & exp_mask,
        bits & ((1 << mant_bits) - 1),
    );
    let side = |n: u32, p: u32| if neg { n } else { p };
    match (exp, mant) {
        (e, m) if e == exp_mask && m != 0 => {
            if m >> (mant_bits - 1) & 1 != 0 {
                1
            } else {
                0
            }
        }
        (e, _) if e == exp_mask => side(2, 9),
        (0, 0) => side(5, 6),
        (0, _) => side(4, 7),
        _ => side(3, 8),
    }
}

/// VOPC float predicate `k`: F, LT, EQ, LE, GT, LG, GE, O, U, NGE, NLG, NGT, NLE,
/// NEQ, NLT, T. The N forms are true when unordered.
pub(crate) fn float_compare(k: u16, x: f64, y: f64) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let o = x.partial_cmp(&y);
    match k {
        0 => false,
        1 => o == Some(Less),
        2 => o == Some(Equal),
        3 => matches!(o, Some(Less | Equal)),
        4 => o == Some(Greater),
        5 => matches!(o, Some(Less | Greater)),
        6 => matches!(o, Some(Greater | Equal)),
        7 => o.is_some(),
        8 => o.is_none(),
        9 => o != Some(Greater) && o != Some(Equal),
        10 => o != Some(Less) && o != Some(Greater),
        11 => o != Some(Greater),
        12 => o != Some(Less) && o != Some(Equal),
        13 => o != Some(Equal),
        14 => o != Some(Less),
        _ => true,
    }
}
