//! Matrix multiply-accumulate (WMMA with f16 and bf16 inputs) and the dot-product and
//! DX9 multiply helpers.

use super::exec::{R, f};
use super::half;
use super::opcodes::op::vop3p;
use super::wave::Wave;

/// `v_wmma_*_16x16x16_{f16,bf16}` (wave32): D = A · B + C for 16×16 matrices. Lane `l`
/// (and `l + 16`) holds row `l` of A and column `l` of B as 16 halves in 8 VGPRs; C and
/// D element (row, col) live in register `row / 2`, lane `(row % 2) * 16 + col` (f32),
/// or in that register's low half (f16/bf16 results).
pub(crate) fn wmma(w: &mut Wave, op: u16, dst: usize, srcs: [u16; 3], lit: Option<u32>) -> R<()> {
    if w.exec() != u32::MAX {
        return Err("WMMA needs every lane of the wave enabled".into());
    }
    let bf16 = matches!(op, vop3p::V_WMMA_F32_16X16X16_BF16 | vop3p::V_WMMA_BF16_16X16X16_BF16);
    let half_out = matches!(op, vop3p::V_WMMA_F16_16X16X16_F16 | vop3p::V_WMMA_BF16_16X16X16_BF16);
    let elem = |h: u16| -> f64 {
        if bf16 {
            f((h as u32) << 16) as f64
        } else {
            half::to_f32(h) as f64
        }
    };
    let input = |w: &Wave, base: u16, lane: usize, k: usize| -> R<f64> {
        let v = w.vread(base + (k / 2) as u16, lane, lit)?;
        Ok(elem((v >> (16 * (k % 2))) as u16))
    };
    let mut out = [[0u32; 32]; 8];
    for row in 0..16 {
        for col in 0..16 {
            let lane = (row % 2) * 16 + col;
            let c = w.vread(srcs[2] + if srcs[2] >= 256 { (row / 2) as u16 } else { 0 }, lane, lit)?;
            let c = if half_out { elem(c as u16) } else { f(c) as f64 };
            let mut sum = c;
            for k in 0..16 {
                sum += input(w, srcs[0], row, k)? * input(w, srcs[1], col, k)?;
            }
            out[row / 2][lane] = if half_out {
                let h = if bf16 {
                    // f32 to bf16, nearest-even (NaN stays NaN).
                    let b = (sum as f32).to_bits();
                    if (sum as f32).is_nan() {
                        (b >> 16) as u16 | 0x40
                    } else {
                        ((b + 0x7fff + (b >> 16 & 1)) >> 16) as u16
                    }
                } else {
                    half::from_f64(sum)
                };
                (w.vread(256 + (dst + row / 2) as u16, lane, None)? & 0xffff_0000) | h as u32
            } else {
                (sum as f32).to_bits()
            };
        }
    }
    for (r, vals) in out.iter().enumerate() {
        for (lane, v) in vals.iter().enumerate() {
            w.vwrite(dst + r, lane, *v)?;
        }
    }
    Ok(())
}

/// DX9 multiply: a zero operand gives +0 (even against infinity or NaN).
pub(crate) fn mul_dx9(x: f32, y: f32) -> f32 {
    if x == 0.0 || y == 0.0 { 0.0 } else { x * y }
}

/// `acc + a.lo * b.lo + a.hi * b.hi` over packed halves, rounded once to f32.
pub(crate) fn dot2(a: u32, b: u32, acc: f32) -> f32 {
    let h = |v: u32, hi: bool| half::to_f32(if hi { (v >> 16) as u16 } else { v as u16 }) as f64;
    (h(a, false) * h(b, false) + h(a, true) * h(b, true) + acc as f64) as f32
}
