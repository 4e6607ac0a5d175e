//! Matrix multiply-accumulate (WMMA with f16, bf16, 8-bit and 4-bit integer inputs),
//! the dot products (VOP3P's and the VOP2/VOPD `dot2acc` helper) and the DX9 multiply.

use super::VgprRow;
use super::exec::{R, f};
use super::opcodes::Vop3p;
use super::opcodes::op::vop3p;
use super::rounding::{add32, mul32};
use super::wave::{MODE_DENORM_F16_F64_IN, MODE_DENORM_F32_IN, Wave};
use crate::float::exact::{self, Round};
use crate::float::half;

/// WMMA's modifiers (gfx11, as AMD's matrix instruction calculator documents them):
/// `neg_lo` bits 0 and 1 negate the low 16 bits of every A and B register (the even k),
/// `neg_hi` bits 0 and 1 the high 16 bits (the odd k), so both together negate the
/// whole matrix; `neg_lo` bit 2 subtracts C instead of adding it and `neg_hi` bit 2
/// takes its absolute value first (−|C| with both); `op_sel` bit 2 puts 16-bit C and D
/// in the high halves of their registers instead of the low ones.
#[derive(Clone, Copy, Default)]
pub(crate) struct WmmaMods {
    pub(crate) neg_lo: u32,
    pub(crate) neg_hi: u32,
    pub(crate) hi_halves: bool,
    /// VOP3P clamp: results bounded to [0, 1] (NaN to 0), as every float result's.
    pub(crate) clamp: bool,
}

/// Where a generation's WMMA keeps its matrices in the wave's registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WmmaLayout {
    /// gfx11: lane `l` (and `l + 16`) holds row `l` of A and column `l` of B as 16
    /// halves in 8 VGPRs, K in order; C and D element (row, col) in register
    /// `row / 2`, lane `(row % 2) * 16 + col`.
    Gfx11,
    /// gfx12: lane `l` holds 8 of the 16 halves of row `l % 16` of A and column
    /// `l % 16` of B in 4 VGPRs, element `e` being K = `(e & 3) + 4 (l / 16) + 8 (e / 4)`;
    /// C and D element (row, col) in register `row % 8`, lane `col + 16 (row / 8)`,
    /// or for 16-bit results two to a register: register `(row % 8) / 2`, the low half
    /// for an even row (tinygrad's emulator, `test/mockgpu/amd/emu.py`, lays them out
    /// so, as AMD's RDNA4 ISA does). 8-bit inputs: lane `l` holds 8 of the 16 bytes,
    /// K = `e + 8 (l / 16)`, four to a register. (AMD's matrix instruction calculator
    /// describes both; `rdna4::matrix`'s tests check them against it.)
    Gfx12,
}

impl WmmaLayout {
    /// The lane and the element (in register order, `per` to a register) of an A or B
    /// input: row or column `i`, index `k`.
    fn input(self, i: usize, k: usize, per: usize) -> (usize, usize) {
        match self {
            WmmaLayout::Gfx11 => (i, k),
            WmmaLayout::Gfx12 if per == 4 => (i + (k >> 3) * 16, k & 7),
            WmmaLayout::Gfx12 => (i + (k >> 2 & 1) * 16, (k & 3) | (k >> 1 & 4)),
        }
    }

    /// The register (from the first) and lane of C and D element (row, col).
    fn output(self, row: usize, col: usize) -> (usize, usize) {
        match self {
            WmmaLayout::Gfx11 => (row / 2, (row % 2) * 16 + col),
            WmmaLayout::Gfx12 => (row % 8, col + 16 * (row / 8)),
        }
    }
}

/// A WMMA instruction's registers and how they are read: D's first VGPR, the sources
/// (A, B, C as operand numbers), the modifiers, the literal, the generation's layout.
#[derive(Clone, Copy)]
pub(crate) struct WmmaOperands {
    pub(crate) dst: usize,
    pub(crate) srcs: [u16; 3],
    pub(crate) mods: WmmaMods,
    pub(crate) lit: Option<u32>,
    pub(crate) layout: WmmaLayout,
}

/// `v_wmma_*_16x16x16_{f16,bf16}` (wave32): D = A · B + C for 16×16 matrices, in the
/// registers as `layout` places them; C and D as f32, or (gfx11) in each register's low
/// half (f16/bf16 results; the high half with `op_sel` bit 2), with [`WmmaMods`]'
/// negations applied (gfx11's).
pub(crate) fn wmma(w: &mut Wave, op: u16, o: WmmaOperands) -> R<()> {
    let bf16 = matches!(op, vop3p::V_WMMA_F32_16X16X16_BF16 | vop3p::V_WMMA_BF16_16X16X16_BF16);
    let half_out = matches!(op, vop3p::V_WMMA_F16_16X16X16_F16 | vop3p::V_WMMA_BF16_16X16X16_BF16);
    wmma_float(w, WmmaInputs::Half { bf16 }, half_out, o)
}

/// An input element's (register, lane, first bit), from (row or column, k).
type InPlace = fn(usize, usize) -> (usize, usize, u32);
/// An output element's (register, lane), from (row, column).
type OutPlace = fn(usize, usize) -> (usize, usize);

/// Where a generation's WMMA keeps its elements in a wave64 and in a wave32, as AMD's
/// matrix instruction calculator gives them (`-w 64`, `-w 32`).
struct Wave64Layout {
    /// A's 16-bit element (x, k) (B's (k, x) alike): (register, lane, bit) in a wave64
    /// and in a wave32; `None` where A and B lie in a wave64's lanes 0–31 as in a
    /// wave32's (their registers are copied whole).
    ab: Option<[InPlace; 2]>,
    /// C's and D's element (i, j): (register, lane) in a wave64 and in a wave32.
    cd: [OutPlace; 2],
}

/// gfx11: A and B where a wave32 has them (lanes 0–15, again in 16–31, 32–47 and
/// 48–63); C's and D's element (i, j) in register i / 4, lane 16 i % 64 + j (a wave32:
/// register i / 2, lane 16 (i % 2) + j; a 16-bit result in the same half).
const GFX11_WAVE64: Wave64Layout = Wave64Layout {
    ab: None,
    cd: [|i, j| (i / 4, 16 * i % 64 + j), |i, j| (i / 2, 16 * (i % 2) + j)],
};

/// gfx12 (16-bit inputs, f32 results): A's element (i, k) in register (k / 2) % 2 at
/// bit 16 (k % 2) of lane `32 ((k / 8) % 2) + 16 ((k / 4) % 2) + i` (a wave32: half
/// `e = (k & 3) + 4 (k / 8)` of lane `i + 16 ((k / 4) % 2)`); C's and D's (i, j) in
/// register i % 4 of lane `32 ((i / 4) % 2) + 16 (i / 8) + j` (a wave32: register i % 8,
/// lane `16 (i / 8) + j`).
const GFX12_WAVE64: Wave64Layout = Wave64Layout {
    ab: Some([
        |x, k| {
            (
                (k / 2) % 2,
                32 * ((k / 8) % 2) + 16 * ((k / 4) % 2) + x,
                16 * (k as u32 % 2),
            )
        },
        |x, k| {
            let e = (k & 3) + 4 * (k / 8);
            (e / 2, x + 16 * ((k / 4) % 2), 16 * (e as u32 % 2))
        },
    ]),
    cd: [
        |i, j| (i % 4, 32 * ((i / 4) % 2) + 16 * (i / 8) + j),
        |i, j| (i % 8, 16 * (i / 8) + j),
    ],
};

/// A WMMA in a wave64 laid out as `l` says (A and B `regs` registers each), run as the
/// wave32 one: `run` runs the
/// wave32 operation on a wave of 32 lanes holding A, B and C (in the wave32 layout)
/// from v0, v8 and v16, its D at v24 (D's registers first moved there, so a 16-bit
/// result keeps the other half); D goes back in the wave64 layout. Once on the whole
/// wave, every lane on.
fn wave64_as_wave32(
    w: &mut Wave,
    l: &Wave64Layout,
    regs: usize,
    dst: usize,
    srcs: [u16; 3],
    run: impl FnOnce(&mut Wave, usize, [u16; 3]) -> R<()>,
) -> R<()> {
    if w.exec_all() != u64::MAX {
        return Err("WMMA needs every lane of the wave enabled".into());
    }
    let mut t = Wave::new(32, w.pc);
    t.s = w.s;
    t.mode = w.mode;
    let mut moved = srcs;
    for (k, at) in [(0usize, 0usize), (1, 8)] {
        let Some(first) = srcs[k].checked_sub(256) else {
            continue;
        };
        match l.ab {
            None => {
                for r in 0..regs {
                    // The wave's own check of the register (an error past its VGPRs).
                    w.vread(srcs[k] + r as u16, 0, None)?;
                    t.v[at + r] = w.v[usize::from(first) + r];
                }
            }
            Some([in64, in32]) => {
                for x in 0..16 {
                    for kk in 0..16 {
                        let ((r64, l64, b64), (r32, l32, b32)) = (in64(x, kk), in32(x, kk));
                        let h = (w.vread_lane64(srcs[k] + r64 as u16, l64, None)? >> b64) & 0xffff;
                        let word = &mut t.v[at + r32].0[l32];
                        *word = (*word & !(0xffff << b32)) | h << b32;
                    }
                }
            }
        }
        moved[k] = 256 + at as u16;
    }
    let [cd64, cd32] = l.cd;
    for i in 0..16 {
        for j in 0..16 {
            let ((r64, l64), (r32, l32)) = (cd64(i, j), cd32(i, j));
            if srcs[2] >= 256 {
                t.v[16 + r32].0[l32] = w.vread_lane64(srcs[2] + r64 as u16, l64, None)?;
            }
            t.v[24 + r32].0[l32] = w.vread_lane64(256 + (dst + r64) as u16, l64, None)?;
        }
    }
    if srcs[2] >= 256 {
        moved[2] = 256 + 16;
    }
    run(&mut t, 24, moved)?;
    for i in 0..16 {
        for j in 0..16 {
            let ((r64, l64), (r32, l32)) = (cd64(i, j), cd32(i, j));
            w.vwrite_lane64(dst + r64, l64, t.v[24 + r32].0[l32])?;
        }
    }
    Ok(())
}

/// What a float WMMA's A and B hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WmmaInputs {
    /// Halves, or bfloat16s (whose results are bfloat16s too where 16-bit).
    Half { bf16: bool },
    /// gfx12's 8-bit floats, A's and B's formats each (f32 results).
    Eight {
        a: crate::float::fp8::Fp8,
        b: crate::float::fp8::Fp8,
    },
}

/// [`wmma`] by its inputs and result width: 16-bit or 8-bit float inputs, f32 or
/// (`half_out`) 16-bit results.
pub(crate) fn wmma_float(w: &mut Wave, inputs: WmmaInputs, half_out: bool, o: WmmaOperands) -> R<()> {
    let WmmaOperands {
        dst,
        srcs,
        mods,
        lit,
        layout,
    } = o;
    if w.wave64 {
        let l = match layout {
            WmmaLayout::Gfx11 => &GFX11_WAVE64,
            _ if half_out || !matches!(inputs, WmmaInputs::Half { .. }) => {
                return Err(crate::error::Trap::missing(
                    "gfx12's WMMA in a wave64 runs the 16-bit-input forms with f32 results only".into(),
                ));
            }
            _ => &GFX12_WAVE64,
        };
        return wave64_as_wave32(w, l, 8, dst, srcs, |t, dst, srcs| {
            let o = WmmaOperands {
                dst,
                srcs,
                mods,
                lit,
                layout,
            };
            wmma_float(t, inputs, half_out, o)
        });
    }
    if w.exec() != u32::MAX {
        return Err("WMMA needs every lane of the wave enabled".into());
    }
    let bf16 = inputs == WmmaInputs::Half { bf16: true };
    if mods.hi_halves && !half_out {
        return Err("op_sel on a WMMA with 32-bit results is not defined".into());
    }
    let gfx12 = layout == WmmaLayout::Gfx12;
    if gfx12 && mods.hi_halves {
        return Err(crate::error::Trap::refused(
            "op_sel on a gfx12 WMMA: its 16-bit results are packed two to a register".into(),
        ));
    }
    // gfx12's 16-bit forms negate as gfx11's (AMD's matrix instruction calculator;
    // `rdna4::matrix`'s tests check it), its 8-bit float forms take none.
    if gfx12 && !matches!(inputs, WmmaInputs::Half { .. }) && (mods.neg_lo != 0 || mods.neg_hi != 0) {
        return Err(crate::error::Trap::refused(
            "NEG or NEG_HI on an 8-bit float WMMA: AMD's matrix instruction calculator lists no negation for these forms".into(),
        ));
    }
    let shift = if mods.hi_halves { 16 } else { 0 };
    // Element `e` of source `s` from its register's value `v` (see `input_element`).
    let convert = |w: &Wave, s: usize, e: usize, v: u32| -> f64 { input_element(w, inputs, mods, bf16, s, e, v) };
    let per = if matches!(inputs, WmmaInputs::Eight { .. }) {
        4
    } else {
        2
    };
    let input = |w: &Wave, s: usize, i: usize, k: usize| -> R<f64> {
        let (lane, e) = layout.input(i, k, per);
        Ok(convert(w, s, e, w.vread(srcs[s] + (e / per) as u16, lane, lit)?))
    };
    // A source's VGPRs, where it names enough of them (not a constant or literal).
    let vgprs = |s: usize| -> Option<&[VgprRow]> {
        let first = usize::from(srcs[s].checked_sub(256)?);
        w.v.get(first..first + 16 / per)
    };
    // f32 and bfloat16 results round in MODE's f32 direction, f16 ones in the f16 one.
    let (fmt, mode) = match (half_out, bf16) {
        (false, _) => (exact::F32, w.round32()),
        (true, true) => (exact::BF16, w.round32()),
        (true, false) => (exact::F16, w.round16_64()),
    };
    // A and B by element: `at[k][row]`, `bt[k][col]` (A transposed), each read once
    // (exact in f64).
    let mut at = [[0f64; 16]; 16];
    let mut bt = [[0f64; 16]; 16];
    let wide = match (inputs, vgprs(0), vgprs(1)) {
        (WmmaInputs::Half { .. }, Some(ra), Some(rb)) => {
            // 16-bit elements straight from the register file, each register's negations
            // one mask (`neg_lo` the low halves', `neg_hi` the high halves'), MODE's input
            // control read once.
            let mask = |s: u32| (mods.neg_lo >> s & 1) << 15 | (mods.neg_hi >> s & 1) << 31;
            let flush = if bf16 {
                w.mode & MODE_DENORM_F32_IN == 0
            } else {
                w.mode & MODE_DENORM_F16_F64_IN == 0
            };
            if bf16 {
                widen::<true>(ra, mask(0), flush, layout, &mut at) && widen::<true>(rb, mask(1), flush, layout, &mut bt)
            } else {
                widen::<false>(ra, mask(0), flush, layout, &mut at)
                    && widen::<false>(rb, mask(1), flush, layout, &mut bt)
            }
        }
        _ => false,
    };
    // Otherwise (8-bit floats, infinities or NaN, a constant or literal source) each
    // element on its own.
    if !wide {
        for i in 0..16 {
            for k in 0..16 {
                (at[k][i], bt[k][i]) = match (vgprs(0), vgprs(1)) {
                    (Some(ra), Some(rb)) => {
                        let (lane, e) = layout.input(i, k, per);
                        (convert(w, 0, e, ra[e / per][lane]), convert(w, 1, e, rb[e / per][lane]))
                    }
                    _ => (input(w, 0, i, k)?, input(w, 1, i, k)?),
                };
            }
        }
    }
    // What bounds every sum at once: each row of A's exponents, and all of B's.
    let sa = Span::of_columns(&at);
    let sb = Span::of_columns(&bt).iter().fold(Span::EMPTY, |s, &c| s.join(c));
    // Without infinities and NaN (known already where the registers were widened).
    let finite = wide || sb.finite && sa.iter().all(|s| s.finite);
    // The inputs' significant bits after the leading one (8-bit floats: at most 3).
    let p_in = match inputs {
        WmmaInputs::Half { bf16: false } => 10,
        WmmaInputs::Half { bf16: true } => 7,
        WmmaInputs::Eight { .. } => 3,
    };
    // C's and D's: f32, or the 16-bit format.
    let p_c = match (half_out, bf16) {
        (false, _) => 23,
        (true, true) => 7,
        (true, false) => 10,
    };
    let rounding = Rounding::new(fmt, mode);
    // Each column's and row's exact terms, for the elements the spans do not clear.
    let mut terms: Option<([Terms; 16], [Terms; 16])> = None;
    // C's VGPRs, where it names enough of them (not a constant or literal).
    let c_regs = srcs[2]
        .checked_sub(256)
        .and_then(|r| w.v.get(usize::from(r)..usize::from(r) + 8));
    let mut out = [[0u32; 32]; 8];
    for row in 0..16 {
        // The row's 16 sums of products, the columns side by side, in f64. Where every
        // partial sum is exact the order does not matter (-0 is the identity, as in
        // `exact_in_f64`); elsewhere the element is summed exactly below.
        let mut sums = [-0f64; 16];
        for k in 0..16 {
            let x = at[k][row];
            for (s, y) in sums.iter_mut().zip(&bt[k]) {
                *s += x * y;
            }
        }
        // The row of C, as read (its modifiers applied). A row's 16 elements are 16
        // lanes of one register in both layouts (gfx12's 16-bit C and D two rows to a
        // register, gfx11's in the half `op_sel` picks).
        let (reg0, lane0) = layout.output(row, 0);
        let (reg, shift) = if gfx12 && half_out {
            (reg0 / 2, 16 * (reg0 % 2) as u32)
        } else {
            (reg0, shift)
        };
        let mut cs = [0f64; 16];
        let (abs, neg) = (
            u64::from(mods.neg_hi >> 2 & 1) << 63,
            u64::from(mods.neg_lo >> 2 & 1) << 63,
        );
        match c_regs.and_then(|c| c.get(reg)) {
            Some(c) if !half_out => {
                let flush = w.mode & MODE_DENORM_F32_IN == 0;
                for (d, &v) in cs.iter_mut().zip(&c[lane0..lane0 + 16]) {
                    let v = if flush && v & 0x7f80_0000 == 0 {
                        v & 0x8000_0000
                    } else {
                        v
                    };
                    *d = f64::from_bits((f64::from(f(v)).to_bits() & !abs) ^ neg);
                }
            }
            Some(c) => {
                for (d, &v) in cs.iter_mut().zip(&c[lane0..lane0 + 16]) {
                    *d = f64::from_bits((element(w, (v >> shift) as u16, bf16).to_bits() & !abs) ^ neg);
                }
            }
            None => {
                // A constant or a literal.
                for (col, d) in cs.iter_mut().enumerate() {
                    let c = w.vread(srcs[2] + if srcs[2] >= 256 { reg as u16 } else { 0 }, lane0 + col, lit)?;
                    let c = if half_out {
                        element(w, (c >> shift) as u16, bf16)
                    } else {
                        f64::from(w.f32_in(f(c)))
                    };
                    *d = f64::from_bits((c.to_bits() & !abs) ^ neg);
                }
            }
        }
        // Every element of the row exact in f64 at once, from the exponents alone.
        let whole_row = finite && Span::exact(Span::of(&cs), p_c, sa[row].times(sb, p_in));
        if whole_row && !half_out && mode == Round::NearestEven && !mods.clamp {
            // The commonest case: f32 results to nearest even, a row's 16 in 16 lanes
            // of one register (both layouts), each the f64 sum rounded once.
            for (d, (c, s)) in out[reg0][lane0..lane0 + 16].iter_mut().zip(cs.iter().zip(&sums)) {
                *d = w.f32_out(((c + s) as f32).to_bits());
            }
            continue;
        }
        // gfx11's 16-bit D keeps the half of its register it does not write (gfx12
        // fills both, the other row's in its turn).
        let keep = if half_out && !gfx12 { w.v.get(dst + reg) } else { None };
        for col in 0..16 {
            let c = cs[col];
            let exact_here = whole_row || {
                let (ta, tb) = terms.get_or_insert_with(|| (Terms::of_columns(&at), Terms::of_columns(&bt)));
                finite && exact_bound(c, ta[row], tb[col], fmt == exact::F16)
            };
            let quick = if exact_here {
                let s = c + sums[col];
                (s != 0.0 || mode == Round::NearestEven).then_some(s)
            } else {
                None
            };
            let bits = quick
                .and_then(|s| rounding.exact(s))
                .unwrap_or_else(|| sum_rounded(c, (0..16).map(|k| (at[k][row], bt[k][col])), fmt, mode));
            let h = float_out(w, bits, half_out, bf16, mods.clamp);
            let lane = lane0 + col;
            out[reg][lane] = if half_out {
                let other = match keep {
                    _ if gfx12 => out[reg][lane],
                    Some(r) => r[lane],
                    None => w.vread(256 + (dst + reg) as u16, lane, None)?,
                };
                (other & !(0xffff << shift)) | h << shift
            } else {
                h
            };
        }
    }
    let regs = if gfx12 && half_out { 4 } else { 8 };
    if let Some(d) = w.v.get_mut(dst..dst + regs) {
        d.iter_mut().zip(&out[..regs]).for_each(|(d, o)| d.0 = *o);
        return Ok(());
    }
    for (r, vals) in out.iter().enumerate().take(regs) {
        for (lane, v) in vals.iter().enumerate() {
            w.vwrite(dst + r, lane, *v)?;
        }
    }
    Ok(())
}

/// One float WMMA element, `c + Σ a·b` over 16 products (each row of A and column of B
/// with its [`Terms`]; `finite`: no infinite or NaN input), summed exactly and rounded
/// once to `fmt` in `mode`: the result's bits in `fmt`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn float_sum(
    c: f64,
    a: &[f64; 16],
    b: &[f64; 16],
    ta: Terms,
    tb: Terms,
    finite: bool,
    fmt: exact::Format,
    mode: Round,
) -> u64 {
    let exact = if finite {
        exact_in_f64(c, a, b, ta, tb, mode, fmt == exact::F16)
    } else {
        None
    };
    let rounded = exact.and_then(|s| Rounding::new(fmt, mode).exact(s));
    rounded.unwrap_or_else(|| sum_rounded(c, a.iter().copied().zip(b.iter().copied()), fmt, mode))
}

/// How an exact sum is rounded once to a result format in a MODE direction: to
/// nearest even straight from the f64's bits where the format's rounding allows, else
/// by [`exact::convert`]. Chosen once per instruction.
#[derive(Clone, Copy)]
struct Rounding {
    fmt: exact::Format,
    mode: Round,
    nearest: Option<Nearest>,
}

/// The result formats rounded to nearest even from an f64's bits.
#[derive(Clone, Copy)]
enum Nearest {
    F32,
    F16,
    Bf16,
}

impl Rounding {
    fn new(fmt: exact::Format, mode: Round) -> Rounding {
        let nearest = match mode {
            Round::NearestEven if fmt == exact::F32 => Some(Nearest::F32),
            Round::NearestEven if fmt == exact::F16 => Some(Nearest::F16),
            Round::NearestEven if fmt == exact::BF16 => Some(Nearest::Bf16),
            _ => None,
        };
        Rounding { fmt, mode, nearest }
    }

    /// The exact sum `s` rounded: the result's bits; `None` where [`exact::convert`]
    /// cannot round it.
    #[inline(always)]
    fn exact(self, s: f64) -> Option<u64> {
        let quick = match self.nearest {
            Some(Nearest::F32) => Some(u64::from((s as f32).to_bits())),
            Some(Nearest::F16) => half::nearest_even(s).map(u64::from),
            Some(Nearest::Bf16) => exact::bf16_nearest_even(s).map(u64::from),
            None => None,
        };
        quick.or_else(|| exact::convert(s, self.fmt, self.mode))
    }
}

/// A float WMMA result (`bits` in f32, or with `half_out` in f16 or, `bf16`,
/// bfloat16) as it is written: clamped to [0, 1] where asked (0 and 1 are exact in
/// every format, so clamping the rounded value is clamping the exact one), then a
/// denormal result as MODE's output controls say (bfloat16 as f32). A 16-bit result
/// in the low half.
#[inline(always)]
pub(crate) fn float_out(w: &Wave, bits: u64, half_out: bool, bf16: bool, clamp: bool) -> u32 {
    let bits = if clamp {
        match (half_out, bf16) {
            (false, _) => u64::from(super::exec::output_mods(bits as u32, clamp_only())),
            (true, true) => u64::from(super::exec::output_mods((bits as u32) << 16, clamp_only()) >> 16),
            (true, false) => u64::from(super::valu::clamp_half(bits as u16)),
        }
    } else {
        bits
    };
    match (half_out, bf16) {
        (false, _) => w.f32_out(bits as u32),
        (true, true) => w.f32_out((bits as u32) << 16) >> 16,
        (true, false) => u32::from(w.f16_out(bits as u16)),
    }
}

/// The exponent of the lowest set bit of `x` (finite): `x` is a whole multiple of
/// 2 to that power. Zero: a large number (it constrains nothing).
#[inline]
fn lowest_bit(x: f64) -> i32 {
    let bits = x.to_bits();
    let (e, m) = ((bits >> 52 & 0x7ff) as i32, bits & ((1 << 52) - 1));
    let m = if e == 0 { m } else { m | 1 << 52 };
    if m == 0 || !x.is_finite() {
        return i32::MAX / 4;
    }
    e.max(1) - 1075 + m.trailing_zeros() as i32
}

/// What [`exact_in_f64`] needs of a row of A or a column of B: the lowest of its
/// elements' lowest bits, and its largest magnitude.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Terms {
    low: i32,
    max: f64,
}

impl Terms {
    #[inline(always)]
    pub(crate) fn of(v: &[f64; 16]) -> Terms {
        let (mut low, mut max) = (i32::MAX / 4, 0f64);
        for &x in v {
            low = low.min(lowest_bit(x));
            max = max.max(x.abs());
        }
        Terms { low, max }
    }

    /// The terms of each column of `m` (`m[k][col]`).
    #[inline(always)]
    fn of_columns(m: &[[f64; 16]; 16]) -> [Terms; 16] {
        let (mut low, mut max) = ([i32::MAX / 4; 16], [0f64; 16]);
        for row in m {
            for (col, &x) in row.iter().enumerate() {
                low[col] = low[col].min(lowest_bit(x));
                max[col] = max[col].max(x.abs());
            }
        }
        std::array::from_fn(|col| Terms {
            low: low[col],
            max: max[col],
        })
    }
}

/// `c + Σ a[k] · b[k]` summed in f64 where that is exact (`None` where it might not
/// be; a zero sum only for rounding to nearest even, where f64's sign of zero is the
/// exact sum's: negative only when every term is -0). Every product of two
/// 16- or 8-bit floats is exact in f64 and a whole multiple of 2^(low(a) + low(b));
/// with `c` every term is a multiple of 2^L, and every partial sum, in any order, is
/// at most |c| + 16 max|a| max|b|: below 2^(L + 52) all of them are exact, and the
/// sum rounded once is the exact sum rounded once. With the f16, bf16 and 8-bit float
/// inputs of real workloads it holds for nearly every element, so WMMA sums in f64 (in
/// four independent parts) instead of exactly.
#[inline(always)]
fn exact_in_f64(c: f64, a: &[f64; 16], b: &[f64; 16], ta: Terms, tb: Terms, mode: Round, c_half: bool) -> Option<f64> {
    if !exact_bound(c, ta, tb, c_half) {
        return None;
    }
    // -0 is the sum's identity (+0 would turn an all -0 sum positive).
    let mut part = [-0f64; 4];
    for k in (0..16).step_by(4) {
        for j in 0..4 {
            part[j] += a[k + j] * b[k + j];
        }
    }
    let sum = c + ((part[0] + part[1]) + (part[2] + part[3]));
    (sum != 0.0 || mode == Round::NearestEven).then_some(sum)
}

/// A WMMA source's 16-bit elements (f16, or with `BF16` bfloat16) as f64 into `out`
/// (`out[k][i]`: element `k` of row or column `i`, as `layout` places them), each
/// register XORed with `mask` (the negations) and a denormal flushed to a signed zero
/// where `flush`: `false`, with `out` unwritten, where an element is infinite or NaN.
/// Without branches, so that the compiler widens many at once: a half's fields shifted
/// into an f64's (a subnormal half becomes a subnormal f64) times 2^1008 is its value,
/// exactly (as [`half::to_f64`]'s).
#[inline(always)]
fn widen<const BF16: bool>(
    regs: &[VgprRow],
    mask: u32,
    flush: bool,
    layout: WmmaLayout,
    out: &mut [[f64; 16]; 16],
) -> bool {
    let ones = if BF16 { 0x7f80 } else { 0x7c00 };
    // gfx11 reads 8 registers' lanes 0–15 (16–31 repeat them), gfx12 4 registers' 32.
    let (count, lanes) = if layout == WmmaLayout::Gfx11 { (8, 16) } else { (4, 32) };
    let mut special = 0u32;
    for r in &regs[..count] {
        for &v in &r[..lanes] {
            special |= u32::from(v & ones == ones) | u32::from(v >> 16 & ones == ones);
        }
    }
    if special != 0 {
        return false;
    }
    let value = |h: u32| -> f64 {
        let h = if flush && h & ones == 0 { h & 0x8000 } else { h };
        if BF16 {
            f64::from(f(h << 16))
        } else {
            let x = f64::from_bits(u64::from(h & 0x7fff) << 42) * f64::from_bits(2031 << 52);
            f64::from_bits(x.to_bits() | u64::from(h & 0x8000) << 48)
        }
    };
    if layout == WmmaLayout::Gfx11 {
        // Lane `i` holds row or column `i`, K in register order.
        for (r, regs) in regs[..8].iter().enumerate() {
            for i in 0..16 {
                let v = regs[i] ^ mask;
                out[2 * r][i] = value(v & 0xffff);
                out[2 * r + 1][i] = value(v >> 16);
            }
        }
    } else {
        // Lane `i + 16 upper` holds elements K = (e & 3) + 4 upper + 8 (e / 4) of row or
        // column `i`, two to a register.
        for (r, regs) in regs[..4].iter().enumerate() {
            for upper in 0..2 {
                let k = |e: usize| (e & 3) + 4 * upper + 8 * (e / 4);
                let (k0, k1) = (k(2 * r), k(2 * r + 1));
                for i in 0..16 {
                    let v = regs[i + 16 * upper] ^ mask;
                    out[k0][i] = value(v & 0xffff);
                    out[k1][i] = value(v >> 16);
                }
            }
        }
    }
    true
}

/// Whether `c` plus 16 products of a row and a column with these [`Terms`] sums exactly
/// in f64, in any order (see [`exact_in_f64`]); `c` need not be finite.
#[inline(always)]
fn exact_bound(c: f64, ta: Terms, tb: Terms, c_half: bool) -> bool {
    if !c.is_finite() {
        return false;
    }
    let products = 16.0 * ta.max * tb.max;
    // With `c` a half (`c_half`), first with what any half bounds (every finite half is
    // a multiple of 2^-24 and at most 65504): that nearly always holds, and `c`'s own
    // lowest bit is not needed; else, and otherwise, with `c`'s own.
    let loose = c_half && below_exact_limit(HALF_LOW.min(ta.low + tb.low), HALF_MAX + products);
    loose || below_exact_limit(lowest_bit(c).min(ta.low + tb.low), c.abs() + products)
}

/// The binary exponents of a set of f64 values: the least of the nonzero ones and the
/// greatest, and whether all are finite. A value with `p` significant bits after its
/// leading one is a whole multiple of 2^(exponent − p) and below 2^(exponent + 1).
#[derive(Clone, Copy, Debug)]
struct Span {
    low: i32,
    high: i32,
    finite: bool,
}

impl Span {
    /// No value (zeros only): it constrains nothing.
    const EMPTY: Span = Span {
        low: 1 << 20,
        high: -(1 << 20),
        finite: true,
    };

    #[inline(always)]
    fn of(v: &[f64; 16]) -> Span {
        let (mut low, mut high, mut top) = (0x7ffu32, 0u32, 0u32);
        for &x in v {
            let bits = x.to_bits();
            let e = (bits >> 52 & 0x7ff) as u32;
            top = top.max(e);
            // Zeros (and an f64 subnormal, which no input here is) set no exponent.
            if e != 0 {
                low = low.min(e);
                high = high.max(e);
            }
        }
        if high == 0 {
            return Span {
                finite: top < 0x7ff,
                ..Span::EMPTY
            };
        }
        Span {
            low: low as i32 - 1023,
            high: high as i32 - 1023,
            finite: top < 0x7ff,
        }
    }

    /// The span of each column of `m` (`m[k][col]`), from the exponent fields side by
    /// side.
    #[inline(always)]
    fn of_columns(m: &[[f64; 16]; 16]) -> [Span; 16] {
        let (mut low, mut high) = ([0x7ffu32; 16], [0u32; 16]);
        for row in m {
            for col in 0..16 {
                let e = (row[col].to_bits() >> 52 & 0x7ff) as u32;
                low[col] = low[col].min(if e == 0 { 0x7ff } else { e });
                high[col] = high[col].max(e);
            }
        }
        std::array::from_fn(|col| match (low[col], high[col]) {
            (_, 0) => Span::EMPTY,
            (low, high) => Span {
                low: low as i32 - 1023,
                high: high as i32 - 1023,
                finite: high < 0x7ff,
            },
        })
    }

    #[inline(always)]
    fn join(self, o: Span) -> Span {
        Span {
            low: self.low.min(o.low),
            high: self.high.max(o.high),
            finite: self.finite && o.finite,
        }
    }

    /// The products of an element of `self` and one of `o`, each with `p` significant
    /// bits after the leading one: (the exponent every product is a multiple of, the
    /// exponent 16 of them stay below).
    #[inline(always)]
    fn times(self, o: Span, p: i32) -> (i32, i32) {
        (self.low - p + (o.low - p), self.high + 1 + o.high + 1 + 4)
    }

    /// Whether `c` (each element with `p_c` significant bits after the leading one)
    /// plus 16 products spanning `products` (see [`Span::times`]) sums exactly in f64
    /// in any order: every term a multiple of 2^L and every partial sum below
    /// 2^(L + 52), as [`exact_in_f64`] asks.
    #[inline(always)]
    fn exact(c: Span, p_c: i32, products: (i32, i32)) -> bool {
        let low = (c.low - p_c).min(products.0);
        // |c| < 2^(high + 1), the products' sum < 2^products.1: the two below 2^(top + 1).
        let top = (c.high + 1).max(products.1);
        c.finite && top < low + 52
    }
}

/// The weight of a half's lowest possible bit, and the largest finite half.
const HALF_LOW: i32 = -24;
const HALF_MAX: f64 = 65504.0;

/// Whether a sum whose terms are all multiples of 2^`low`, every partial sum of which
/// is at most `size` in magnitude, is exact in f64 (`size` < 2^(low + 52)).
#[inline(always)]
fn below_exact_limit(low: i32, size: f64) -> bool {
    let e = low + 52;
    if e >= 1023 {
        return size.is_finite();
    }
    e >= -1022 && size < f64::from_bits(((e + 1023) as u64) << 52)
}

/// Element `e` of source `s` (0 for A, 1 for B) of a float WMMA from its register's
/// value `v`: for 16-bit inputs the low half for an even element, the high half for an
/// odd one, negated as `neg_lo` / `neg_hi` say; 8-bit ones four to a register, in the
/// 16-bit inputs' element order. (A function of its own, always inlined: as a closure
/// it was called, and WMMA runs it 512 times.)
#[inline(always)]
fn input_element(w: &Wave, inputs: WmmaInputs, mods: WmmaMods, bf16: bool, s: usize, e: usize, v: u32) -> f64 {
    if let WmmaInputs::Eight { a, b } = inputs {
        let byte = (v >> (8 * (e % 4))) as u8;
        return f64::from(if s == 0 { a } else { b }.to_f32(byte));
    }
    let neg = if e % 2 == 0 { mods.neg_lo } else { mods.neg_hi };
    let h = (v >> (16 * (e % 2))) as u16 ^ if neg >> s & 1 != 0 { 0x8000 } else { 0 };
    element(w, h, bf16)
}

/// A 16-bit float element as the hardware reads it: a half through MODE's f16 input
/// control, a bfloat16 (f32's range) through the f32 one.
#[inline(always)]
pub(crate) fn element(w: &Wave, h: u16, bf16: bool) -> f64 {
    if bf16 {
        f64::from(w.f32_in(f(u32::from(h) << 16)))
    } else {
        half::to_f64(w.f16_in(h))
    }
}

/// `c + Σ a·b` as WMMA and the 16-bit dot products compute it: summed exactly and
/// rounded once to `fmt` (f32, f16 or bfloat16) in `mode`, the encoding's bits. With an
/// infinite or NaN term, the f64 sum instead (its infinities are the result's); a NaN
/// result is the first NaN term (C, then each product's A and B in order), quieted, or
/// where none is (an infinity times zero, infinities of both signs) the positive quiet
/// NaN — chosen here, not left to the host's arithmetic, whose NaN sign and payload
/// Rust leaves unspecified (an optimised build gave others than a debug one).
pub(crate) fn sum_rounded(
    c: f64,
    products: impl IntoIterator<Item = (f64, f64)>,
    fmt: exact::Format,
    mode: Round,
) -> u64 {
    let mut sum = exact::Sum::new();
    let mut finite = sum.add(c);
    let mut naive = c;
    let mut first_nan = c.is_nan().then_some(c);
    for (a, b) in products {
        finite &= sum.add_product(a, b);
        naive += a * b;
        if first_nan.is_none() {
            first_nan = [a, b].into_iter().find(|x| x.is_nan());
        }
    }
    if finite {
        return sum.round(fmt, mode);
    }
    if naive.is_nan() {
        // The NaN's bits: sign, then its payload's top bits, the quiet bit set.
        let x = first_nan.map_or(0x7ff8_0000_0000_0000, f64::to_bits);
        let sign = x >> 63;
        return if fmt == exact::F16 {
            sign << 15 | 0x7e00 | (x >> 42 & 0x1ff)
        } else if fmt == exact::BF16 {
            sign << 15 | 0x7fc0 | (x >> 45 & 0x3f)
        } else {
            sign << 31 | 0x7fc0_0000 | (x >> 29 & 0x3f_ffff)
        };
    }
    // Infinite: its sign alone.
    let single = (naive as f32).to_bits();
    if fmt == exact::F16 {
        u64::from(half::from_f64(naive))
    } else if fmt == exact::BF16 {
        u64::from(single >> 16)
    } else {
        u64::from(single)
    }
}

/// Modifiers that only clamp.
fn clamp_only() -> super::exec::Mods {
    super::exec::Mods {
        clamp: true,
        ..super::exec::Mods::NONE
    }
}

/// gfx11's integer WMMA (16×16×16, 8- or 4-bit inputs, i32 accumulators): the layout
/// of the f16 forms (elements packed four or eight to a register in the same order),
/// with neg_lo bits 0 and 1 marking A and B signed; clamp saturates. (gfx12's are
/// `rdna4::matrix`'s.)
pub(crate) fn wmma_int(
    w: &mut Wave,
    four: bool,
    dst: usize,
    srcs: [u16; 3],
    neg_lo: u32,
    clamp: bool,
    lit: Option<u32>,
) -> R<()> {
    let layout = WmmaLayout::Gfx11;
    if w.wave64 {
        return wave64_as_wave32(w, &GFX11_WAVE64, if four { 2 } else { 4 }, dst, srcs, |t, dst, srcs| {
            wmma_int(t, four, dst, srcs, neg_lo, clamp, lit)
        });
    }
    if w.exec() != u32::MAX {
        return Err("WMMA needs every lane of the wave enabled".into());
    }
    let bits = if four { 4 } else { 8 };
    let per = 32 / bits;
    let input = |w: &Wave, base: u16, i: usize, k: usize, signed: bool| -> R<i64> {
        let (lane, e) = layout.input(i, k, 2);
        let e = e as u32;
        let v = w.vread(base + (e / per) as u16, lane, lit)?;
        let x = (v >> (bits * (e % per))) & ((1 << bits) - 1);
        Ok(if signed {
            i64::from(((x << (32 - bits)) as i32) >> (32 - bits))
        } else {
            i64::from(x)
        })
    };
    let (sa, sb) = (neg_lo & 1 == 1, neg_lo & 2 == 2);
    // A and B by element (`at[k][row]`, `bt[k][col]`), each read once.
    let mut at = [[0i32; 16]; 16];
    let mut bt = [[0i32; 16]; 16];
    // A source's VGPRs, where it names enough of them (not a constant or literal).
    let vgprs = |s: u16| -> Option<&[VgprRow]> {
        let first = usize::from(s.checked_sub(256)?);
        w.v.get(first..first + 16 / per as usize)
    };
    if let (Some(ra), Some(rb)) = (vgprs(srcs[0]), vgprs(srcs[1])) {
        // Straight from the register file: lane `i` holds row or column `i`, its
        // elements packed in register order.
        let element = |v: u32, e: u32, signed: bool| -> i32 {
            let x = v >> (bits * (e % per)) << (32 - bits);
            if signed {
                (x as i32) >> (32 - bits)
            } else {
                (x >> (32 - bits)) as i32
            }
        };
        for k in 0..16 {
            let (r, e) = ((k as u32 / per) as usize, k as u32);
            for i in 0..16 {
                at[k][i] = element(ra[r][i], e, sa);
                bt[k][i] = element(rb[r][i], e, sb);
            }
        }
    } else {
        for i in 0..16 {
            for k in 0..16 {
                at[k][i] = input(w, srcs[0], i, k, sa)? as i32;
                bt[k][i] = input(w, srcs[1], i, k, sb)? as i32;
            }
        }
    }
    let mut out = [[0u32; 32]; 8];
    for row in 0..16 {
        // The row's 16 sums of products, the columns side by side: 16 products of 8-bit
        // values stay within an i32.
        let mut sums = [0i32; 16];
        for (ak, bk) in at.iter().zip(&bt) {
            for (s, y) in sums.iter_mut().zip(bk) {
                *s += ak[row] * y;
            }
        }
        let (reg, lane0) = layout.output(row, 0);
        for (col, &sum) in sums.iter().enumerate() {
            let lane = lane0 + col;
            let c = match srcs[2].checked_sub(256).and_then(|r| w.v.get(usize::from(r) + reg)) {
                Some(c) => c[lane],
                None => w.vread(srcs[2] + if srcs[2] >= 256 { reg as u16 } else { 0 }, lane, lit)?,
            };
            let sum = i64::from(c as i32) + i64::from(sum);
            out[reg][lane] = if clamp {
                sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
            } else {
                sum as u32
            };
        }
    }
    if let Some(d) = w.v.get_mut(dst..dst + 8) {
        d.iter_mut().zip(&out).for_each(|(d, o)| d.0 = *o);
        return Ok(());
    }
    for (r, vals) in out.iter().enumerate() {
        for (lane, v) in vals.iter().enumerate() {
            w.vwrite(dst + r, lane, *v)?;
        }
    }
    Ok(())
}

/// The VOP3P dot products, `c + Σ a[k] · b[k]` over the packed elements of `a` and
/// `b`: `v_dot2_f32_f16`/`_bf16` (two halves or bfloat16s, an f32 accumulator, each
/// add rounded as [`dot2_f32`] says) and `v_dot4_*_u8`/`v_dot8_*_u4` (bytes or nibbles, a 32-bit accumulator;
/// neg_lo bits 0 and 1 make A and B signed in the `_iu` forms; clamp saturates).
pub(crate) fn dot(w: &Wave, op: Vop3p, a: u32, b: u32, c: u32, neg_lo: u32, clamp: bool) -> u32 {
    use Vop3p::*;
    if let V_DOT2_F32_F16 | V_DOT2_F32_BF16 = op {
        return dot2_f32(w, a, b, f32::from_bits(c), op == V_DOT2_F32_BF16).to_bits();
    }
    let (bits, n) = if matches!(op, V_DOT4_I32_IU8 | V_DOT4_U32_U8) {
        (8, 4)
    } else {
        (4, 8)
    };
    let signed_op = matches!(op, V_DOT4_I32_IU8 | V_DOT8_I32_IU4);
    let (sa, sb) = (signed_op && neg_lo & 1 == 1, signed_op && neg_lo & 2 == 2);
    let elem = |v: u32, k: u32, s: bool| -> i64 {
        let x = (v >> (bits * k)) & ((1 << bits) - 1);
        if s {
            i64::from(((x << (32 - bits)) as i32) >> (32 - bits))
        } else {
            i64::from(x)
        }
    };
    let acc = if signed_op { i64::from(c as i32) } else { i64::from(c) };
    let sum = (0..n).fold(acc, |t, k| t + elem(a, k, sa) * elem(b, k, sb));
    match (signed_op, clamp) {
        (true, true) => sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32,
        (false, true) => sum.clamp(0, i64::from(u32::MAX)) as u32,
        _ => sum as u32,
    }
}

/// DX9 multiply: a zero operand gives +0 (even against infinity or NaN).
pub(crate) fn mul_dx9(x: f32, y: f32, mode: Round) -> f32 {
    if x == 0.0 || y == 0.0 { 0.0 } else { mul32(x, y, mode) }
}

/// `acc + a.lo * b.lo + a.hi * b.hi` over packed halves (or bfloat16s) in f32, as the
/// ISA's pseudocode has it: `tmp = S2; tmp += lo product; tmp += hi product`, each
/// product and each sum rounded to f32 in MODE's direction (the products of halves and
/// of bfloat16s are exact but at f32's range limits). Denormals as each step would
/// have them alone: a half through `f16_to_f32` (MODE's f16 input control), the
/// accumulator as an f32 input, the result as an f32 output.
pub(crate) fn dot2_f32(w: &Wave, a: u32, b: u32, acc: f32, bf16: bool) -> f32 {
    let mode = w.round32();
    let e = |v: u32, hi: bool| -> f32 {
        let h = if hi { v >> 16 } else { v & 0xffff };
        if bf16 {
            f32::from_bits(h << 16)
        } else {
            half::to_f32(w.f16_in(h as u16))
        }
    };
    let tmp = add32(w.f32_in(acc), mul32(e(a, false), e(b, false), mode), mode);
    let r = add32(tmp, mul32(e(a, true), e(b, true), mode), mode);
    f32::from_bits(w.f32_out(r.to_bits()))
}

#[cfg(test)]
mod tests {
    //! Encodings from `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`.
    use crate::rdna3::testing::{lanes, run};

    /// With a half accumulator the shortcut's bound is the halves' own: C's lowest bit
    /// can be 2^-24, so products of 2^28 with C = 2^-24 are not summed in f64 (their
    /// sum needs 57 bits), nor with C = 2^-20 · 3 (55 bits); with C = 1 they are.
    #[test]
    fn the_half_bound_takes_the_lowest_half_bit() {
        use super::{Terms, exact_in_f64};
        use crate::float::exact::Round;
        let (a, b) = ([16384f64; 16], [16384f64; 16]);
        let (ta, tb) = (Terms::of(&a), Terms::of(&b));
        for c in [2f64.powi(-24), 3.0 * 2f64.powi(-20)] {
            assert_eq!(exact_in_f64(c, &a, &b, ta, tb, Round::NearestEven, true), None, "{c:e}");
        }
        assert_eq!(
            exact_in_f64(1.0, &a, &b, ta, tb, Round::Up, true),
            Some(2f64.powi(32) + 1.0)
        );
    }

    /// The whole-row bound from exponents alone: wherever it clears a row, the f64 sum
    /// (products in order, then C) is exact — what the exact sum rounded once gives, in
    /// every rounding mode and format — over halves, bfloat16s and f32 or half
    /// accumulators whose exponents spread up to and past the 52 bits it allows; and it
    /// clears most sets within a few binades and refuses some near its limit.
    #[test]
    fn span_bound_clears_only_exact_rows() {
        use super::{Rounding, Span, sum_rounded};
        use crate::float::exact::{self, Round};
        let mut rnd = crate::rdna3::testing::xorshift32(0x0bad_5eed);
        let (mut cleared, mut narrow, mut refused) = (0, 0, 0);
        for round in 0..6000u32 {
            let bf16 = round % 2 == 1;
            // Exponent fields from `base` to `base + spread` (a third of the sets narrow:
            // within four binades of 1, as real data is).
            let narrow_set = round % 3 == 0;
            let (base, spread) = if narrow_set {
                (13, rnd() % 4)
            } else {
                (1 + rnd() % 10, rnd() % 20)
            };
            let element = |x: u32| -> f64 {
                if x % 17 == 0 {
                    return 0.0;
                }
                let (sign, mant) = (x >> 31 << 15, x >> 8 & 0x3ff);
                let e = base + (x >> 20) % (spread + 1);
                if bf16 {
                    f64::from(f32::from_bits((sign | (e + 112) << 7 | mant & 0x7f) << 16))
                } else {
                    crate::float::half::to_f64((sign | e << 10 | mant) as u16)
                }
            };
            let mut a: [f64; 16] = std::array::from_fn(|_| element(rnd()));
            let mut b: [f64; 16] = std::array::from_fn(|_| element(rnd()));
            // A third of the sets at the bound's edge: one product as fine as the spans
            // allow (odd significands at the least exponent), the rest as large (all-ones
            // significands at the greatest), all of one sign, so the sum needs every bit
            // the bound counts.
            let edge = round % 3 == 1;
            if edge {
                // B's greatest exponent one below A's every other set, so that the
                // spans' width takes every value.
                let row = |spread: u32| -> [f64; 16] {
                    let (lo, hi) = if bf16 {
                        let e = |e: u32, m: u32| f64::from(f32::from_bits(((e + 112) << 7 | m) << 16));
                        (e(base, 1), e(base + spread, 0x7f))
                    } else {
                        let e = |e: u32, m: u32| crate::float::half::to_f64((e << 10 | m) as u16);
                        (e(base, 1), e(base + spread, 0x3ff))
                    };
                    std::array::from_fn(|k| if k == 0 { lo } else { hi })
                };
                (a, b) = (row(spread), row(spread.saturating_sub(round / 7 % 2)));
            }
            let half_c = round % 5 == 0 && !edge;
            let c = if half_c {
                element(rnd())
            } else {
                // An f32 within 2^±8 of 1 for the narrow sets, else anywhere from 2^-37 to 2^52.
                let x = rnd();
                let e = if edge {
                    // As large as the products' sum, with an odd significand: the sum
                    // then needs one bit more than the products alone.
                    (15.0 * a[1] * b[1]).log2().floor() as u32 + 127
                } else if narrow_set {
                    119 + x % 17
                } else {
                    90 + x % 90
                };
                let sign = if edge { 0 } else { x & 0x8000_0000 };
                // Every other edge set has no C: the products' own bound is the limit.
                let none = edge && round / 6 % 2 == 0;
                f64::from(f32::from_bits(sign | e << 23 | x >> 9 & 0x7f_ffff | u32::from(edge)))
                    * f64::from(u8::from(!none))
            };
            let (p_in, p_c) = (
                if bf16 { 7 } else { 10 },
                if half_c && !bf16 {
                    10
                } else if half_c {
                    7
                } else {
                    23
                },
            );
            let mut cs = [0f64; 16];
            cs[0] = c;
            let ok = Span::exact(Span::of(&cs), p_c, Span::of(&a).times(Span::of(&b), p_in));
            narrow += usize::from(narrow_set);
            if !ok {
                refused += 1;
                continue;
            }
            cleared += usize::from(narrow_set);
            let mut sum = -0f64;
            for k in 0..16 {
                sum += a[k] * b[k];
            }
            let s = c + sum;
            // Exact: the exact sum is an f64, so rounding it up and down both give `s`.
            let products = a.iter().copied().zip(b.iter().copied());
            if s != 0.0 {
                for mode in [Round::Up, Round::Down] {
                    assert_eq!(
                        sum_rounded(c, products.clone(), exact::F64, mode),
                        s.to_bits(),
                        "round {round}"
                    );
                }
            }
            for mode in [Round::NearestEven, Round::Up, Round::Down, Round::Zero] {
                for fmt in [exact::F32, exact::F16, exact::BF16] {
                    let want = sum_rounded(c, a.iter().copied().zip(b.iter().copied()), fmt, mode);
                    if s != 0.0 || mode == Round::NearestEven {
                        assert_eq!(Rounding::new(fmt, mode).exact(s), Some(want), "round {round} {mode:?}");
                    }
                }
            }
        }
        assert!(cleared * 10 >= narrow * 9, "cleared {cleared} of {narrow} narrow sets");
        assert!(refused > 100, "refused {refused}");
    }

    /// WMMA's f64 shortcut: wherever it takes an element, the element is what the
    /// exact sum rounded once gives, in every rounding mode and format; over random
    /// f16 and bfloat16 operands of every magnitude (subnormals, zeros of both signs,
    /// the largest values) and f32 accumulators; and it must take nine in ten of the
    /// sets whose elements lie within a few binades, as real data's do.
    #[test]
    fn wmma_f64_shortcut_is_exact() {
        use super::{Terms, exact_in_f64, sum_rounded};
        use crate::float::exact::{self, Round};
        use crate::float::half;
        let mut rnd = crate::rdna3::testing::xorshift32(0x1234_5678);
        let (mut taken, mut total) = (0, 0);
        for round in 0..4000 {
            let bf16 = round % 2 == 1;
            // Every third set narrow (exponents near one another), as real data is.
            let narrow = round % 3 == 0;
            let elem = |r: &mut dyn FnMut() -> u32| -> f64 {
                let mut h = r() as u16;
                if narrow {
                    h = (h & 0x83ff) | 0x3800;
                }
                if h & 0x7c00 == 0x7c00 && !bf16 {
                    h &= !0x4000; // finite halves only
                }
                if bf16 {
                    let v = f32::from_bits(u32::from(h) << 16);
                    if v.is_finite() { f64::from(v) } else { 1.0 }
                } else {
                    f64::from(half::to_f32(h))
                }
            };
            let mut a = [0f64; 16];
            let mut b = [0f64; 16];
            for k in 0..16 {
                a[k] = elem(&mut rnd);
                b[k] = elem(&mut rnd);
            }
            // An accumulator as a running sum has it (narrow), or any finite f32.
            let c = if narrow && round % 3 == 0 {
                // A half denormal: the lowest bit any half has.
                f64::from((rnd() % 1024) as f32) * 2f64.powi(-24)
            } else if narrow {
                f64::from((rnd() % 8192) as f32 / 64.0 - 64.0)
            } else {
                f64::from(f32::from_bits(rnd() & 0xbfff_ffff))
            };
            total += usize::from(narrow);
            // Every fourth narrow set cancels to zero: B's second half the negated
            // first, A's halves equal, C zero of either sign (and all -0 terms).
            let (mut a, mut b, mut c) = (a, b, c);
            if narrow && round % 4 == 0 {
                for k in 0..8 {
                    (a[k + 8], b[k + 8]) = (a[k], -b[k]);
                }
                c = if round % 8 == 0 { 0.0 } else { -0.0 };
                if round % 16 == 0 {
                    (a, b, c) = ([-0.0; 16], [0.0; 16], -0.0);
                }
            }
            let mut took = false;
            // The half bound only where C is a half (the narrow sets'); both ways there.
            let c_is_half = f64::from(half::to_f32(half::from_f64(c))) == c;
            let halves: &[bool] = if c_is_half { &[false, true] } else { &[false] };
            for (mode, &c_half) in [Round::NearestEven, Round::Up, Round::Down, Round::Zero]
                .into_iter()
                .flat_map(|m| halves.iter().map(move |h| (m, h)))
            {
                let Some(s) = exact_in_f64(c, &a, &b, Terms::of(&a), Terms::of(&b), mode, c_half) else {
                    continue;
                };
                took |= mode == Round::NearestEven;
                for fmt in [exact::F32, exact::F16, exact::BF16] {
                    let want = sum_rounded(c, a.iter().copied().zip(b.iter().copied()), fmt, mode);
                    assert_eq!(exact::convert(s, fmt, mode), Some(want), "round {round} {mode:?}");
                }
                if mode == Round::NearestEven {
                    assert_eq!(
                        u64::from((s as f32).to_bits()),
                        sum_rounded(c, a.iter().copied().zip(b.iter().copied()), exact::F32, mode),
                        "round {round}"
                    );
                }
            }
            taken += usize::from(narrow && took);
        }
        assert!(
            taken * 10 >= total * 9,
            "the shortcut took {taken} of {total} narrow sets"
        );
    }

    /// The f16/bf16 dot products round as the ISA's pseudocode adds: the accumulator
    /// and the low product first, then the high product, each sum rounded in MODE's
    /// direction.
    #[test]
    fn dot_products_round_after_each_add() {
        use crate::float::exact::Round::{self, *};
        use crate::float::half;
        use crate::rdna3::wave::Wave;
        // Every denormal kept, f32 results rounded in `mode`.
        let dot2_f32 = |a: u32, b: u32, acc: f32, bf16: bool, mode: Round| {
            let mut w = Wave::new(8, 0);
            w.mode = 0xf0 | mode as u32;
            super::dot2_f32(&w, a, b, acc, bf16)
        };
        let h = |x: f32| u32::from(half::from_f64(x.into()));
        let pair = |lo: u32, hi: u32| lo | hi << 16;
        let bf = |x: f32| x.to_bits() >> 16;
        // 2^24 + 1 ties to even (2^24) before 2^-48 comes: 2^24, where one rounding of
        // the whole sum would give 2^24 + 2.
        let tiny = h(2f32.powi(-24));
        let (a, b) = (pair(h(1.0), tiny), pair(h(1.0), tiny));
        assert_eq!(dot2_f32(a, b, 2f32.powi(24), false, NearestEven), 2f32.powi(24));
        // Toward +infinity each sum rounds up: 2^24 + 2, then 2^24 + 4.
        assert_eq!(dot2_f32(a, b, 2f32.powi(24), false, Up), 2f32.powi(24) + 4.0);
        // The order matters: 2^60 + 2^-120 rounds to 2^60, then - 2^60 leaves 0.
        let (a, b) = (
            pair(bf(2f32.powi(-60)), bf(2f32.powi(30))),
            pair(bf(2f32.powi(-60)), bf(-(2f32.powi(30)))),
        );
        assert_eq!(dot2_f32(a, b, 2f32.powi(60), true, NearestEven), 0.0);
        // 1 ± 2^-30 in each direction.
        let eps = h(2f32.powi(-15));
        let up = f32::from_bits(1f32.to_bits() + 1);
        let down = f32::from_bits(1f32.to_bits() - 1);
        for (mode, plus, minus) in [
            (NearestEven, 1.0, 1.0),
            (Up, up, 1.0),
            (Down, 1.0, down),
            (Zero, 1.0, down),
        ] {
            let (a, b) = (pair(eps, 0), pair(eps, 0));
            assert_eq!(dot2_f32(a, b, 1.0, false, mode), plus, "{mode:?}");
            let (a, b) = (pair(eps | 0x8000, 0), pair(eps, 0));
            assert_eq!(dot2_f32(a, b, 1.0, false, mode), minus, "{mode:?}");
        }
        // An exact cancellation is +0, or -0 rounding down; infinities and NaN as the
        // host has them; overflow to infinity, or the largest finite value toward zero.
        let (a, b) = (pair(h(1.0), 0), pair(h(1.0), 0));
        assert_eq!(dot2_f32(a, b, -1.0, false, NearestEven).to_bits(), 0);
        assert_eq!(dot2_f32(a, b, -1.0, false, Down).to_bits(), (-0.0f32).to_bits());
        assert!(dot2_f32(pair(h(f32::INFINITY), 0), b, f32::NEG_INFINITY, false, Up).is_nan());
        let big = pair(bf(f32::MAX), 0);
        assert_eq!(dot2_f32(big, pair(bf(2.0), 0), 0.0, true, NearestEven), f32::INFINITY);
        assert_eq!(dot2_f32(big, pair(bf(2.0), 0), 0.0, true, Zero), f32::MAX);
        // Random halves and accumulators, to nearest: the host's two f32 sums.
        let mut next = crate::rdna3::testing::xorshift32(0x9e37_79b9);
        for _ in 0..100_000 {
            let (a, b) = (next(), next());
            let acc = f32::from_bits(next());
            let e = |v: u32| half::to_f32(v as u16);
            let want = acc + e(a) * e(b) + e(a >> 16) * e(b >> 16);
            let got = dot2_f32(a, b, acc, false, NearestEven);
            assert!(
                got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                "{a:#x} · {b:#x} + {acc:e}"
            );
        }
    }

    /// Runs a float WMMA (`d0` its first dword: D v26, A v2, B v10, C v18) with A and B
    /// rows (1, 2^-15, 0, …) — 2^-15 an f16 denormal — so each element is
    /// C + 1 + 2^-30, in MODE `mode`; returns D(5, 9)'s register.
    fn wmma_tiny(d0: u32, mode: u32, c: u32, bf16: bool) -> u32 {
        let (one, tiny) = if bf16 {
            (1f32.to_bits() >> 16, 2f32.powi(-15).to_bits() >> 16)
        } else {
            (0x3c00, 0x0200)
        };
        let w = run(&[d0, 0x1c4a_1502], |w| {
            w.mode = mode;
            for reg in 2..18 {
                lanes(w, reg, |_| 0);
            }
            lanes(w, 2, |_| tiny << 16 | one);
            lanes(w, 10, |_| tiny << 16 | one);
            for reg in 18..26 {
                lanes(w, reg, |_| c);
            }
        })
        .unwrap();
        w.v[26 + 5 / 2][16 + 9]
    }

    #[test]
    fn float_wmma_sums_exactly_and_rounds_once_in_the_mode() {
        let (kept, f16_flushed, f32_flushed) = (0xf0, 0x30, 0xc0);
        // v_wmma_f32_16x16x16_f16: 2^24 + 1 + 2^-30 rounds to 2^24 + 2 (an f64 sum
        // would drop 2^-30 and tie to 2^24); the f16 input control flushing 2^-15
        // leaves the tie; toward zero and -infinity 2^24, toward +infinity 2^24 + 2.
        let f32_wmma = |mode: u32| f32::from_bits(wmma_tiny(0xcc40_401a, mode, 2f32.powi(24).to_bits(), false));
        let (big, next) = (2f32.powi(24), 2f32.powi(24) + 2.0);
        assert_eq!(f32_wmma(kept), next);
        assert_eq!(f32_wmma(f16_flushed), big);
        assert_eq!(f32_wmma(f32_flushed), next, "halves follow the f16 control");
        assert_eq!(f32_wmma(kept | 3), big);
        assert_eq!(f32_wmma(kept | 2), big);
        assert_eq!(f32_wmma(kept | 1), next);
        assert_eq!(f32_wmma(kept | 1 << 2), next, "the f16/f64 field leaves f32 results");
        // v_wmma_f16_16x16x16_f16: 2048 + 1 + 2^-30 in halves (ulp 2 at 2048), in the
        // f16 field's direction; the other half of D kept.
        let f16_wmma = |mode: u32| wmma_tiny(0xcc42_401a, mode, 0x6800, false);
        assert_eq!(f16_wmma(kept) & 0xffff, 0x6801);
        assert_eq!(f16_wmma(f16_flushed) & 0xffff, 0x6800);
        assert_eq!(f16_wmma(kept | 2 << 2) & 0xffff, 0x6800);
        assert_eq!(f16_wmma(kept | 1 << 2) & 0xffff, 0x6801);
        assert_eq!(f16_wmma(kept | 2) & 0xffff, 0x6801, "the f32 field leaves halves");
        // v_wmma_bf16_16x16x16_bf16: 256 + 1 + 2^-30 (2^-15 a normal bfloat16) to 258,
        // down to 256 in the f32 field's direction.
        let bf16_wmma = |mode: u32| wmma_tiny(0xcc43_401a, mode, 256f32.to_bits() >> 16, true) & 0xffff;
        assert_eq!(bf16_wmma(kept), 258f32.to_bits() >> 16);
        assert_eq!(bf16_wmma(kept | 2), 256f32.to_bits() >> 16);
        assert_eq!(bf16_wmma(f16_flushed), 258f32.to_bits() >> 16);
        // A denormal f32 C (2^-130) with the halves' 2^-15 flushed: 1 + 2^-130 toward
        // +infinity is 1 + ulp, or 1 when the f32 input control flushes C.
        // 2^-130 = 2^19 · 2^-149 (`powi` of -130 would underflow through 2^130).
        let tiny_c = 0x0008_0000;
        let up_kept = f32::from_bits(wmma_tiny(0xcc40_401a, f16_flushed | 1, tiny_c, false));
        assert_eq!(up_kept, f32::from_bits(1f32.to_bits() + 1));
        let up_flushed = f32::from_bits(wmma_tiny(0xcc40_401a, 0x20 | 1, tiny_c, false));
        assert_eq!(up_flushed, 1.0);
        // clamp (dword 0 bit 15): 2^24 + 2 to 1; 2048 + 1 to 1 (0x3c00, the high half
        // kept); a negative C below -1 - 2^-30 to 0.
        assert_eq!(
            f32::from_bits(wmma_tiny(0xcc40_c01a, kept, 2f32.powi(24).to_bits(), false)),
            1.0
        );
        assert_eq!(wmma_tiny(0xcc42_c01a, kept, 0x6800, false), 0x3c00);
        assert_eq!(
            f32::from_bits(wmma_tiny(0xcc40_c01a, kept, (-4f32).to_bits(), false)),
            0.0
        );
        assert_eq!(
            wmma_tiny(0xcc43_c01a, kept, 256f32.to_bits() >> 16, true) & 0xffff,
            1f32.to_bits() >> 16
        );
        // Infinities and NaN as the f64 sum has them.
        assert_eq!(
            f32::from_bits(wmma_tiny(0xcc40_401a, kept, f32::INFINITY.to_bits(), false)),
            f32::INFINITY
        );
    }

    /// Every float WMMA form against its definition, element by element: C plus the
    /// 16 products summed exactly and rounded once (`sum_rounded`), written as the form
    /// writes it. Random registers (typical narrow data, every bit pattern, cancelling
    /// rows, infinities and NaN), MODE's rounding and denormal controls, the negations,
    /// `op_sel`'s high halves and clamp; through the decoded path and the plain one.
    #[test]
    fn float_wmma_is_the_exact_sum_of_every_element() {
        use super::{element, float_out, sum_rounded};
        use crate::float::exact;
        use crate::rdna3::testing::{run, run_decoded, xorshift32};
        use crate::rdna3::wave::Wave;
        let mut rnd = xorshift32(0x2545_f491);
        for round in 0..240u32 {
            use super::vop3p::{
                V_WMMA_BF16_16X16X16_BF16, V_WMMA_F16_16X16X16_F16, V_WMMA_F32_16X16X16_BF16, V_WMMA_F32_16X16X16_F16,
            };
            let op = [
                V_WMMA_F32_16X16X16_F16,
                V_WMMA_F32_16X16X16_BF16,
                V_WMMA_F16_16X16X16_F16,
                V_WMMA_BF16_16X16X16_BF16,
            ][round as usize % 4];
            let bf16 = matches!(op, V_WMMA_F32_16X16X16_BF16 | V_WMMA_BF16_16X16X16_BF16);
            let half_out = matches!(op, V_WMMA_F16_16X16X16_F16 | V_WMMA_BF16_16X16X16_BF16);
            let r = rnd();
            // Sets of zeros (`kind` 3) negate C alone, so that every product is -0.
            let kind = round % 5;
            let keep = if kind == 3 { 4 } else { 7 };
            let (neg_lo, neg_hi) = (r & keep, r >> 3 & keep);
            let hi_halves = half_out && r >> 6 & 1 == 1;
            let clamp = r >> 7 & 3 == 0;
            let mode = rnd() & 0xff;
            // D v26, A v2, B v10, C v18.
            let d0 =
                0xcc00_401a | u32::from(op) << 16 | neg_hi << 8 | u32::from(hi_halves) << 13 | u32::from(clamp) << 15;
            let d1 = 0x1802_1502 | 0x112 << 18 | neg_lo << 29;
            // A 16-bit element: narrow (small multiples of 2^-4, both signs), any bit
            // pattern, or (`kind` 3) zeros and ones; every 16th round's set holds an
            // infinity or NaN.
            let half = |x: u32| -> u32 {
                let h = match kind {
                    0 | 1 if bf16 => (f32::from((x % 257) as u16) / 16.0 - 8.0).to_bits() >> 16,
                    0 | 1 => u32::from(crate::float::half::from_f64(f64::from(x % 257) / 16.0 - 8.0)),
                    2 => x & 0xffff,
                    3 => [0, 0x3c00, 0x8000, 0xbc00][(x % if round % 2 == 0 { 2 } else { 4 }) as usize],
                    _ => x & 0x83ff | 0x1000,
                };
                if round % 16 != 15
                    && (if bf16 {
                        h & 0x7f80 == 0x7f80
                    } else {
                        h & 0x7c00 == 0x7c00
                    })
                {
                    h & 0x3fff
                } else {
                    h
                }
            };
            let mut regs = vec![[0u32; 32]; 34];
            for (r, lanes) in regs.iter_mut().enumerate() {
                for v in lanes.iter_mut() {
                    *v = if kind == 3 && (2..10).contains(&r) {
                        // A all -0: with B's zeros and ones every product is -0.
                        0x8000_8000
                    } else if kind == 3 && (18..26).contains(&r) {
                        [0, 0x8000_8000][(rnd() % 2) as usize]
                    } else if (18..26).contains(&r) && !half_out && kind < 2 {
                        (((rnd() % 4001) as f32 - 2000.0) / 4.0).to_bits()
                    } else if (18..26).contains(&r) && !half_out && kind == 2 {
                        rnd()
                    } else {
                        half(rnd()) | half(rnd()) << 16
                    };
                }
            }
            let mut w = Wave::new(64, 0);
            w.mode = mode;
            let (fmt, rounding) = match (half_out, bf16) {
                (false, _) => (exact::F32, w.round32()),
                (true, true) => (exact::BF16, w.round32()),
                (true, false) => (exact::F16, w.round16_64()),
            };
            // A's element (row or column `i`, index `k`) of source `s` (A at v2, B at v10).
            let input = |s: u32, i: usize, k: usize| -> f64 {
                let v = regs[2 + 8 * s as usize + k / 2][i] >> (16 * (k % 2));
                let neg = if k % 2 == 0 { neg_lo } else { neg_hi } >> s & 1;
                element(&w, v as u16 ^ (neg as u16) << 15, bf16)
            };
            let shift = if hi_halves { 16 } else { 0 };
            let mut want = [[0u32; 32]; 8];
            for row in 0..16 {
                for col in 0..16 {
                    let (reg, lane) = (row / 2, (row % 2) * 16 + col);
                    let c = regs[18 + reg][lane];
                    let c = if half_out {
                        element(&w, (c >> shift) as u16, bf16)
                    } else {
                        f64::from(w.f32_in(f32::from_bits(c)))
                    };
                    let c = if neg_hi & 4 != 0 { c.abs() } else { c };
                    let c = if neg_lo & 4 != 0 { -c } else { c };
                    let products = (0..16).map(|k| (input(0, row, k), input(1, col, k)));
                    let bits = sum_rounded(c, products, fmt, rounding);
                    let h = float_out(&w, bits, half_out, bf16, clamp);
                    want[reg][lane] = if half_out {
                        regs[26 + reg][lane] & !(0xffff << shift) | h << shift
                    } else {
                        h
                    };
                }
            }
            let setup = |w: &mut Wave| {
                w.mode = mode;
                w.v[..34].iter_mut().zip(&regs).for_each(|(d, s)| d.0 = *s);
            };
            for got in [run_decoded(&[d0, d1], setup), run(&[d0, d1], setup)] {
                assert_eq!(
                    got.unwrap().v[26..34],
                    want,
                    "round {round}: {d0:#x} {d1:#x}, MODE {mode:#x}"
                );
            }
        }
    }

    /// A NaN result is the first NaN term quieted, or the positive quiet NaN where the
    /// sum makes one (infinity times zero), whatever the host's arithmetic would give.
    #[test]
    fn a_nan_sum_is_chosen_not_left_to_the_host() {
        use super::sum_rounded;
        use crate::float::exact;
        let round = crate::float::exact::Round::NearestEven;
        let signalling = f64::from_bits(0xfff0_0000_dead_0000);
        let quiet_other = f64::from_bits(0x7ff8_0000_0000_0001);
        let nan_sum = |c: f64, products: &[(f64, f64)]| sum_rounded(c, products.iter().copied(), exact::F32, round);
        // C's NaN first, then the products' in order: quieted, sign and payload's top
        // bits kept.
        assert_eq!(
            nan_sum(signalling, &[(quiet_other, 1.0)]),
            0xffc0_0000 | 0xdead_0000 >> 29
        );
        assert_eq!(
            nan_sum(1.0, &[(2.0, signalling), (quiet_other, 1.0)]),
            0xffc0_0000 | 0xdead_0000 >> 29
        );
        assert_eq!(nan_sum(1.0, &[(2.0, 3.0), (quiet_other, signalling)]), 0x7fc0_0000);
        // Made by the sum: +∞ · 0, +∞ + -∞.
        assert_eq!(nan_sum(0.0, &[(f64::INFINITY, 0.0)]), 0x7fc0_0000);
        assert_eq!(nan_sum(f64::INFINITY, &[(f64::NEG_INFINITY, 1.0)]), 0x7fc0_0000);
        // In 16-bit formats too.
        assert_eq!(sum_rounded(0.0, [(f64::INFINITY, 0.0)], exact::BF16, round), 0x7fc0);
        assert_eq!(sum_rounded(0.0, [(f64::INFINITY, 0.0)], exact::F16, round), 0x7e00);
    }

    #[test]
    fn half_dot_products_sum_exactly_and_flush() {
        // v_dot2_f16_f16 v1, v2, v3, v4 / v_dot2_bf16_bf16: S2 + lo·lo + hi·hi.
        let dot = |op: u32, mode: u32, a: u32, b: u32, c: u32| {
            let w = run(&[op, 0x0412_0702], |w| {
                w.mode = mode;
                lanes(w, 2, |_| a);
                lanes(w, 3, |_| b);
                lanes(w, 4, |_| c);
            })
            .unwrap();
            w.v[1][0] & 0xffff
        };
        let (f16, bf16) = (0xd666_0001, 0xd667_0001);
        // 2048 + 1·1 + 2^-15·2^-15 (a denormal half): 2050; flushed inputs 2048; down 2048.
        let (a, b) = (0x0200_3c00, 0x0200_3c00);
        assert_eq!(dot(f16, 0xf0, a, b, 0x6800), 0x6801);
        assert_eq!(dot(f16, 0xb0, a, b, 0x6800), 0x6800, "f16 inputs flushed");
        assert_eq!(dot(f16, 0xf0 | 2 << 2, a, b, 0x6800), 0x6800);
        assert_eq!(dot(f16, 0xf0 | 2, a, b, 0x6800), 0x6801, "f32's field");
        // A denormal result (2^-15 + 0) flushed by the f16 output control to +0.
        assert_eq!(dot(f16, 0xf0, 0x0200, 0x3c00, 0), 0x0200);
        assert_eq!(dot(f16, 0x70, 0x0200, 0x3c00, 0), 0);
        // bfloat16: 256 + 1 + 2^-30 is 258, down 256; a bfloat16 denormal (2^-130)
        // times 2 flushed by the f32 input control.
        let bf = |x: f32| x.to_bits() >> 16;
        let (a, b) = (bf(2f32.powi(-15)) << 16 | bf(1.0), bf(2f32.powi(-15)) << 16 | bf(1.0));
        assert_eq!(dot(bf16, 0xf0, a, b, bf(256.0)), bf(258.0));
        assert_eq!(dot(bf16, 0xf0 | 2, a, b, bf(256.0)), bf(256.0));
        let den = bf(f32::from_bits(0x0008_0000)); // 2^-130
        assert_eq!(dot(bf16, 0xf0, den, bf(2.0), 0), bf(f32::from_bits(0x0010_0000)));
        assert_eq!(dot(bf16, 0xe0, den, bf(2.0), 0), 0);
    }

    /// The integer WMMA forms against their definition, element by element: C plus 16
    /// products of 8- or 4-bit elements (signed where `neg_lo` says), wrapping or (clamp)
    /// saturating to 32 bits; random registers and accumulators near the limits.
    #[test]
    fn integer_wmma_is_the_sum_of_every_element() {
        use crate::rdna3::testing::{run, run_decoded, xorshift32};
        use crate::rdna3::wave::Wave;
        let mut rnd = xorshift32(0x1b87_3593);
        for round in 0..64u32 {
            let four = round % 2 == 1;
            let (neg_lo, clamp) = (round / 2 % 4, round / 8 % 2 == 1);
            // D v26, A v2, B v10, C v18 (iu8: A and B 4 VGPRs each, iu4: 2).
            let op = if four {
                super::vop3p::V_WMMA_I32_16X16X16_IU4
            } else {
                super::vop3p::V_WMMA_I32_16X16X16_IU8
            };
            let d0 = 0xcc00_401a | u32::from(op) << 16 | u32::from(clamp) << 15;
            let d1 = 0x1802_1502 | 0x112 << 18 | neg_lo << 29;
            let mut regs = vec![[0u32; 32]; 34];
            for (r, lanes) in regs.iter_mut().enumerate() {
                for v in lanes.iter_mut() {
                    *v = match rnd() % 4 {
                        0 if (18..26).contains(&r) => {
                            [i32::MAX as u32 - rnd() % 1024, i32::MIN as u32 + rnd() % 1024][(rnd() % 2) as usize]
                        }
                        _ => rnd(),
                    };
                }
            }
            let (bits, per) = if four { (4, 8) } else { (8, 4) };
            let element = |first: usize, i: usize, k: usize, signed: bool| -> i64 {
                let x = i64::from(regs[first + k / per][i] >> (bits * (k % per)) & ((1 << bits) - 1));
                if signed && x >= 1 << (bits - 1) {
                    x - (1 << bits)
                } else {
                    x
                }
            };
            let mut want = [[0u32; 32]; 8];
            for row in 0..16 {
                for col in 0..16 {
                    let (reg, lane) = (row / 2, (row % 2) * 16 + col);
                    let products: i64 = (0..16)
                        .map(|k| element(2, row, k, neg_lo & 1 == 1) * element(10, col, k, neg_lo & 2 == 2))
                        .sum();
                    let sum = i64::from(regs[18 + reg][lane] as i32) + products;
                    want[reg][lane] = if clamp {
                        sum.clamp(i32::MIN.into(), i32::MAX.into())
                    } else {
                        sum
                    } as u32;
                }
            }
            let setup = |w: &mut Wave| w.v[..34].iter_mut().zip(&regs).for_each(|(d, s)| d.0 = *s);
            for got in [run_decoded(&[d0, d1], setup), run(&[d0, d1], setup)] {
                assert_eq!(got.unwrap().v[26..34], want, "round {round}: {d0:#x} {d1:#x}");
            }
        }
    }

    #[test]
    fn integer_wmma() {
        // v_wmma_i32_16x16x16_iu8 v[0:7], v[8:11], v[12:15], v[0:7] neg_lo:[1,1,0]:
        // A all -1 (signed), B all 2: each element 16 × -2 plus C.
        let w = run(&[0xcc44_4000, 0x7c02_1908], |w| {
            for r in 8..12 {
                lanes(w, r, |_| 0xffff_ffff);
            }
            for r in 12..16 {
                lanes(w, r, |_| 0x0202_0202);
            }
            for r in 0..8 {
                lanes(w, r, |_| 100);
            }
        })
        .unwrap();
        assert!((0..8).all(|r| w.v[r].iter().all(|&v| v == (100 - 32) as u32)));
        // Unsigned (no neg_lo): 255 × 2 × 16
        let w = run(&[0xcc44_4000, 0x1c02_1908], |w| {
            for r in 8..12 {
                lanes(w, r, |_| 0xffff_ffff);
            }
            for r in 12..16 {
                lanes(w, r, |_| 0x0202_0202);
            }
        })
        .unwrap();
        assert_eq!(w.v[3][17], 255 * 2 * 16);
        // v_wmma_i32_16x16x16_iu4: row r of A is r (unsigned nibbles), B all 1
        let w = run(&[0xcc45_4000, 0x1c02_1908], |w| {
            for r in 8..10 {
                lanes(w, r, |l| (l as u32 % 16) * 0x1111_1111);
            }
            for r in 12..14 {
                lanes(w, r, |_| 0x1111_1111);
            }
        })
        .unwrap();
        // Row 5 (VGPR 2, lanes 16..31), any column: 16 × 5.
        assert_eq!(w.v[2][16 + 7], 80);
        // Lanes off: refused.
        assert!(run(&[0xcc45_4000, 0x1c02_1908], |w| w.s[crate::rdna3::wave::EXEC_LO] = 1).is_err());
    }
}
