//! RDNA4's integer WMMA (8- and 4-bit inputs) and its sparse matrix instructions
//! (SWMMAC), wave32, with the register layouts AMD's matrix instruction calculator
//! documents (`generated/matrix_layouts.txt`, which this module's tests place matrices
//! by and read results back by).
//!
//! A layout is the same rule for every instruction, set by three numbers: the element
//! width, K, and how many consecutive k a lane holds before the other half of the wave
//! (lanes 16–31) takes the next run ([`Shape::run`]). Element k of row (column) x of a
//! dense A (B) is in lane `x + 16 h`, `h = (k / run) % 2`, at element `e = k % run +
//! run · (k / 2 run)` of the lane's registers, packed from bit 0 of the first.
//!
//! SWMMAC multiplies a 4:2 sparse A (16 × K, two values of every four consecutive k
//! stored) by a dense B (K × 16) and adds D: A's rows hold each group of four k's two
//! values as one pair, the group's pairs laid out as dense elements are with a run of
//! `run / 4` groups; SRC2's index holds four bits per group, at the pair's place (4
//! bits per pair, from bit 0; OPSEL bit 0 picks the second 16 bits where a lane's
//! indices take 16 bits or fewer): bits 1:0 the k (within the group) of the pair's
//! first value, bits 3:2 of the second. Each stored value multiplies the row of B its
//! index names; the other k of the group take no part (the hardware selects B's rows
//! by the index). C is D's registers (VDST).
//!
//! Floats sum exactly and round once as RDNA4's dense WMMA does
//! (`rdna3::matrix`); integers sum in 64 bits and wrap to 32 (clamp:
//! saturate), with NEG bits 0 and 1 marking A and B signed.

use crate::error::Trap;
use crate::field::Words;
use crate::float::exact;
use crate::float::fp8::Fp8;
use crate::rdna3::{self, Wave};

use super::fields as f4;
use super::opcodes::Vop3p;

type R<T> = Result<T, Trap>;

/// What A and B hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inputs {
    /// Halves, or bfloat16s.
    Half { bf16: bool },
    /// 8-bit floats, A's and B's formats.
    Eight { a: Fp8, b: Fp8 },
    /// Integers of `bits` (8 or 4), signed as NEG says.
    Int { bits: u32 },
}

/// What C and D hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Out {
    F32,
    /// The inputs' 16-bit format, two rows to a register.
    Half,
    I32,
}

/// An instruction's matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) inputs: Inputs,
    pub(crate) out: Out,
    /// The inner dimension (A is 16 × k, B k × 16).
    pub(crate) k: usize,
    /// Consecutive k a lane holds before lanes 16–31 take the next ones.
    pub(crate) run: usize,
    /// A is 4:2 sparse (SWMMAC).
    pub(crate) sparse: bool,
}

/// A place in the registers: the register from the operand's first, the lane, the
/// lowest bit.
type Place = (usize, usize, u32);

impl Shape {
    /// The instructions this module runs.
    pub(crate) fn of(op: Vop3p) -> Option<Shape> {
        use Fp8::{E4m3, E5m2};
        use Vop3p::*;
        let (inputs, out, k, run, sparse) = match op {
            V_WMMA_I32_16X16X16_IU8 => (Inputs::Int { bits: 8 }, Out::I32, 16, 8, false),
            V_WMMA_I32_16X16X16_IU4 => (Inputs::Int { bits: 4 }, Out::I32, 16, 8, false),
            V_WMMA_I32_16X16X32_IU4 => (Inputs::Int { bits: 4 }, Out::I32, 32, 16, false),
            V_SWMMAC_F32_16X16X32_F16 => (Inputs::Half { bf16: false }, Out::F32, 32, 8, true),
            V_SWMMAC_F32_16X16X32_BF16 => (Inputs::Half { bf16: true }, Out::F32, 32, 8, true),
            V_SWMMAC_F16_16X16X32_F16 => (Inputs::Half { bf16: false }, Out::Half, 32, 8, true),
            V_SWMMAC_BF16_16X16X32_BF16 => (Inputs::Half { bf16: true }, Out::Half, 32, 8, true),
            V_SWMMAC_I32_16X16X32_IU8 => (Inputs::Int { bits: 8 }, Out::I32, 32, 16, true),
            V_SWMMAC_I32_16X16X32_IU4 => (Inputs::Int { bits: 4 }, Out::I32, 32, 16, true),
            V_SWMMAC_I32_16X16X64_IU4 => (Inputs::Int { bits: 4 }, Out::I32, 64, 32, true),
            V_SWMMAC_F32_16X16X32_FP8_FP8 => (Inputs::Eight { a: E4m3, b: E4m3 }, Out::F32, 32, 16, true),
            V_SWMMAC_F32_16X16X32_FP8_BF8 => (Inputs::Eight { a: E4m3, b: E5m2 }, Out::F32, 32, 16, true),
            V_SWMMAC_F32_16X16X32_BF8_FP8 => (Inputs::Eight { a: E5m2, b: E4m3 }, Out::F32, 32, 16, true),
            V_SWMMAC_F32_16X16X32_BF8_BF8 => (Inputs::Eight { a: E5m2, b: E5m2 }, Out::F32, 32, 16, true),
            _ => return None,
        };
        Some(Shape {
            inputs,
            out,
            k,
            run,
            sparse,
        })
    }

    /// Bits of an A or B element.
    pub(crate) fn width(&self) -> u32 {
        match self.inputs {
            Inputs::Half { .. } => 16,
            Inputs::Eight { .. } => 8,
            Inputs::Int { bits } => bits,
        }
    }

    /// Where the `e`-th `bits`-wide item of a run layout with `run` items per lane
    /// half is, for row or column `x`.
    fn place(x: usize, i: usize, run: usize, bits: u32) -> Place {
        let h = (i / run) % 2;
        let e = (i % run + run * (i / (2 * run))) as u32 * bits;
        ((e / 32) as usize, x + 16 * h, e % 32)
    }

    /// Element k of row (column) `x` of a dense A (B).
    pub(crate) fn input(&self, x: usize, k: usize) -> Place {
        Self::place(x, k, self.run, self.width())
    }

    /// Value `p` (0 or 1) of the pair sparse A's row `x` stores for group `g` (its k
    /// from `4 g` to `4 g + 3`).
    pub(crate) fn pair(&self, x: usize, g: usize, p: usize) -> Place {
        let (reg, lane, lo) = Self::place(x, g, self.run / 4, 2 * self.width());
        (reg, lane, lo + p as u32 * self.width())
    }

    /// The 4-bit index of group `g` of row `x`, in index set `set`.
    pub(crate) fn index(&self, x: usize, g: usize, set: u32) -> Place {
        let (reg, lane, lo) = Self::place(x, g, self.run / 4, 4);
        (reg, lane, lo + 16 * set)
    }

    /// Index sets a lane's index register holds.
    pub(crate) fn index_sets(&self) -> u32 {
        // The groups one lane indexes, four bits each, in a 32-bit register.
        let bits = (self.k / 4 / 2) as u32 * 4;
        32 / bits.max(16)
    }

    /// C's and D's element (row, col): a 32-bit result in register `row % 8`, 16-bit
    /// ones two rows to a register; lane `col + 16 (row / 8)`.
    pub(crate) fn output(&self, row: usize, col: usize) -> Place {
        let lane = col + 16 * (row / 8);
        match self.out {
            Out::Half => ((row % 8) / 2, lane, 16 * (row % 2) as u32),
            Out::F32 | Out::I32 => (row % 8, lane, 0),
        }
    }
}

/// Reads `bits` at `place` of the operand starting at `first` (a VGPR operand number,
/// or a constant or literal the hardware reads in every register).
fn read(w: &Wave, first: u16, (reg, lane, lo): Place, bits: u32, lit: Option<u32>) -> R<u32> {
    let n = if first >= 256 { first + reg as u16 } else { first };
    let v = w.vread(n, lane, lit)?;
    Ok(if bits == 32 { v } else { (v >> lo) & ((1 << bits) - 1) })
}

/// Runs integer WMMA or any SWMMAC, `shape`'s, from its VOP3P words.
pub(crate) fn run(w: &mut Wave, shape: &Shape, iw: &Words, lit: Option<u32>) -> R<()> {
    use f4::vop3p::*;
    if w.wave64 {
        return Err(Trap::missing("WMMA in a wave64 is not implemented".into()));
    }
    if w.exec() != u32::MAX {
        return Err("WMMA needs every lane of the wave enabled".into());
    }
    let (a_src, b_src, c_src) = (SRC0.operand(iw), SRC1.operand(iw), SRC2.operand(iw));
    let dst = VDST.index(iw);
    let (neg, neg_hi, opsel, clamp) = (NEG.get(iw), NEG_HI.get(iw), OPSEL.get(iw), CLMP.is_set(iw));
    let int = matches!(shape.inputs, Inputs::Int { .. });
    if int && (neg & 4 != 0 || neg_hi != 0) {
        return Err(Trap::refused(
            "an integer WMMA's NEG[2] and NEG_HI are not defined (NEG bits 0 and 1 say A and B are signed)".into(),
        ));
    }
    if !int && (neg != 0 || neg_hi != 0) {
        return Err(Trap::refused(
            "negation of RDNA4's sparse float WMMA (SWMMAC) is not documented for its packed pairs".into(),
        ));
    }
    let set = opsel & 1;
    if opsel & !1 != 0 || (set != 0 && !(shape.sparse && shape.index_sets() > 1)) {
        return Err(Trap::refused(format!(
            "OPSEL {opsel:#x}: only bit 0 (index_key) of a SWMMAC with two index sets is defined"
        )));
    }
    let width = shape.width();
    // A's rows as (value, k) terms: dense, every k; sparse, the stored pairs at the
    // k their index names.
    let terms = if shape.sparse { shape.k / 2 } else { shape.k };
    let mut a = vec![(0u32, 0usize); 16 * terms];
    for x in 0..16 {
        for t in 0..terms {
            a[x * terms + t] = if shape.sparse {
                let (g, p) = (t / 2, t % 2);
                let v = read(w, a_src, shape.pair(x, g, p), width, lit)?;
                let idx = read(w, c_src, shape.index(x, g, set), 4, lit)?;
                (v, 4 * g + (idx >> (2 * p) & 3) as usize)
            } else {
                (read(w, a_src, shape.input(x, t), width, lit)?, t)
            };
        }
    }
    let mut b = vec![0u32; 16 * shape.k];
    for x in 0..16 {
        for k in 0..shape.k {
            b[x * shape.k + k] = read(w, b_src, shape.input(x, k), width, lit)?;
        }
    }
    // C: SRC2 for WMMA, D's own registers for SWMMAC.
    let c_first = if shape.sparse { 256 + dst as u16 } else { c_src };
    let mut out = [[0u32; 32]; 8];
    match shape.inputs {
        Inputs::Int { bits } => {
            let ext = |v: u32, signed: bool| -> i64 {
                if signed {
                    i64::from(((v << (32 - bits)) as i32) >> (32 - bits))
                } else {
                    i64::from(v)
                }
            };
            let (sa, sb) = (neg & 1 != 0, neg & 2 != 0);
            for row in 0..16 {
                for col in 0..16 {
                    let place = shape.output(row, col);
                    let c = read(w, c_first, place, 32, lit)?;
                    let sum = a[row * terms..(row + 1) * terms]
                        .iter()
                        .map(|&(v, k)| ext(v, sa) * ext(b[col * shape.k + k], sb))
                        .sum::<i64>()
                        + i64::from(c as i32);
                    out[place.0][place.1] = if clamp {
                        sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
                    } else {
                        sum as u32
                    };
                }
            }
        }
        inputs => float(w, shape, inputs, &a, &b, c_first, clamp, lit, &mut out)?,
    }
    let regs = if shape.out == Out::Half { 4 } else { 8 };
    for (r, vals) in out.iter().enumerate().take(regs) {
        for (lane, &v) in vals.iter().enumerate() {
            w.vwrite(dst + r, lane, v)?;
        }
    }
    Ok(())
}

/// The float SWMMAC: 16 terms per element, summed as the dense float WMMA sums.
#[allow(clippy::too_many_arguments)]
fn float(
    w: &Wave,
    shape: &Shape,
    inputs: Inputs,
    a: &[(u32, usize)],
    b: &[u32],
    c_first: u16,
    clamp: bool,
    lit: Option<u32>,
    out: &mut [[u32; 32]; 8],
) -> R<()> {
    let bf16 = inputs == Inputs::Half { bf16: true };
    let value = |v: u32, second: bool| -> f64 {
        match inputs {
            Inputs::Half { bf16 } => rdna3::element(w, v as u16, bf16),
            Inputs::Eight { a, b } => f64::from(if second { b } else { a }.to_f32(v as u8)),
            Inputs::Int { .. } => unreachable!("integer inputs sum in run"),
        }
    };
    let terms = shape.k / 2;
    if terms != 16 {
        return Err(Trap::missing(format!("a float matrix instruction of {terms} terms")));
    }
    let half_out = shape.out == Out::Half;
    let (fmt, mode) = match (half_out, bf16) {
        (false, _) => (exact::F32, w.round32()),
        (true, true) => (exact::BF16, w.round32()),
        (true, false) => (exact::F16, w.round16_64()),
    };
    let bvals: Vec<f64> = b.iter().map(|&v| value(v, true)).collect();
    for row in 0..16 {
        let mut ar = [0f64; 16];
        let mut ks = [0usize; 16];
        for (t, &(v, k)) in a[row * terms..(row + 1) * terms].iter().enumerate() {
            ar[t] = value(v, false);
            ks[t] = k;
        }
        let ta = rdna3::Terms::of(&ar);
        for col in 0..16 {
            let mut bc = [0f64; 16];
            for (t, &k) in ks.iter().enumerate() {
                bc[t] = bvals[col * shape.k + k];
            }
            let place = shape.output(row, col);
            let c = read(w, c_first, place, 32, lit)?;
            let c = if half_out {
                rdna3::element(w, (c >> place.2) as u16, bf16)
            } else {
                f64::from(w.f32_in(f32::from_bits(c)))
            };
            let finite = c.is_finite() && ar.iter().chain(&bc).all(|x| x.is_finite());
            let bits = rdna3::float_sum(c, &ar, &bc, ta, rdna3::Terms::of(&bc), finite, fmt, mode);
            let v = rdna3::float_out(w, bits, half_out, bf16, clamp);
            let (reg, lane, lo) = place;
            out[reg][lane] = if half_out {
                (out[reg][lane] & !(0xffff << lo)) | v << lo
            } else {
                v
            };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Encodings from `llvm-mc-19 -arch=amdgcn -mcpu=gfx1201 -show-encoding`; layouts
    //! from AMD's matrix instruction calculator (`generated/matrix_layouts.txt`).
    use super::*;
    use crate::rdna4::testing::run as run_wave;

    /// A place of the calculator's table: register, lane, bits lo..=hi.
    type Bits = (usize, usize, u32, u32);

    /// The calculator's table: (instruction, matrix, opsel) → places along k or rows.
    fn layouts() -> Vec<(String, String, u32, Vec<Bits>)> {
        include_str!("generated/matrix_layouts.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.contains(" neg"))
            .map(|l| {
                let mut it = l.split(' ');
                let inst = it.next().unwrap().to_string();
                let m = it.next().unwrap().to_string();
                let opsel = it.next().unwrap().parse().unwrap();
                let places = it
                    .map(|p| {
                        let v: Vec<u32> = p.split(':').map(|x| x.parse().unwrap()).collect();
                        (v[0] as usize, v[1] as usize, v[2], v[3])
                    })
                    .collect();
                (inst, m, opsel, places)
            })
            .collect()
    }

    /// The calculator's marks of NEG (`field` "neg") or NEG_HI on matrix `m` of
    /// `inst`: per element (along k, or C's rows) `-`, `|`, `n` (both) or `+`.
    fn negations(inst: &str, m: &str, field: &str) -> Vec<char> {
        let head = format!("{inst} {m} {field} ");
        include_str!("generated/matrix_layouts.txt")
            .lines()
            .find_map(|l| l.strip_prefix(head.as_str()))
            .unwrap_or_else(|| panic!("no {head}"))
            .chars()
            .collect()
    }

    fn op_named(name: &str) -> Vop3p {
        (0..=u16::MAX)
            .filter_map(Vop3p::from_op)
            .find(|o| o.name() == name)
            .unwrap_or_else(|| panic!("{name}"))
    }

    /// The shape of `inst`: this module's, or for the dense float WMMA (which
    /// `rdna3::wmma_float` runs) the same rule: 16-bit inputs in runs of 4, 8-bit ones in
    /// runs of 8.
    fn shape_of(inst: &str) -> Shape {
        Shape::of(op_named(inst)).unwrap_or_else(|| {
            use Fp8::{E4m3, E5m2};
            let kind = |bf8: bool| if bf8 { E5m2 } else { E4m3 };
            let eight = inst.contains("fp8_") || inst.contains("bf8_");
            let inputs = if eight {
                Inputs::Eight {
                    a: kind(inst.ends_with("bf8_fp8") || inst.ends_with("bf8_bf8")),
                    b: kind(inst.ends_with("_bf8")),
                }
            } else {
                Inputs::Half {
                    bf16: inst.ends_with("bf16"),
                }
            };
            Shape {
                inputs,
                out: if inst.starts_with("v_wmma_f32") {
                    Out::F32
                } else {
                    Out::Half
                },
                k: 16,
                run: if eight { 8 } else { 4 },
                sparse: false,
            }
        })
    }

    /// Every place this module computes is the calculator's: A, B, the index sets, C
    /// and D, for every RDNA4 matrix instruction (the dense float ones as
    /// [`shape_of`] gives them: `rdna3::WmmaLayout::Gfx12` places them so).
    #[test]
    fn layouts_are_amds() {
        let table = layouts();
        assert!(table.len() > 60, "{}", table.len());
        let mut checked = 0;
        for (inst, m, opsel, places) in &table {
            let shape = shape_of(inst);
            let w = shape.width();
            for (i, &(reg, lane, lo, hi)) in places.iter().enumerate() {
                let (ours, bits) = match m.as_str() {
                    "A" if shape.sparse => (shape.pair(0, i / 4, 0), 2 * w),
                    "A" | "B" => (shape.input(0, i), w),
                    "K" => (shape.index(0, i / 4, *opsel), 4),
                    _ => (shape.output(i, 0), if shape.out == Out::Half { 16 } else { 32 }),
                };
                assert_eq!(ours, (reg, lane, lo), "{inst} {m} opsel {opsel} element {i}");
                assert_eq!(hi - lo + 1, bits, "{inst} {m} element {i}");
                checked += 1;
            }
            if m == "K" {
                assert!(*opsel < shape.index_sets(), "{inst}");
            }
        }
        assert!(checked > 2000, "{checked}");
    }

    /// xorshift32.
    fn next(s: &mut u32) -> u32 {
        *s ^= *s << 13;
        *s ^= *s >> 17;
        *s ^= *s << 5;
        *s
    }

    /// Each instruction computes D = A · B + C with A 4:2 sparse: matrices placed by
    /// the calculator's table (not this module's layout code), the result read back by
    /// it, against the product computed here; small values, so every float sum is
    /// exact.
    #[test]
    fn sparse_and_integer_products() {
        let table = layouts();
        let places = |inst: &str, m: &str, opsel: u32| {
            table
                .iter()
                .find(|(i, mm, o, _)| i == inst && mm == m && *o == opsel)
                .map(|t| t.3.clone())
                .unwrap_or_else(|| panic!("{inst} {m}"))
        };
        // (instruction, its encoding with A at v8, B at v16, the index or C at v24 or
        // v[24:31], D at v[0:7]; index set).
        let cases: &[(&str, &[u8], u32)] = &[
            // v_swmmac_f32_16x16x32_f16 v[0:7], v[8:11], v[16:23], v24 (index_key:1)
            (
                "v_swmmac_f32_16x16x32_f16",
                &[0x00, 0x40, 0x50, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_swmmac_f32_16x16x32_f16",
                &[0x00, 0x48, 0x50, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                1,
            ),
            (
                "v_swmmac_f32_16x16x32_bf16",
                &[0x00, 0x40, 0x51, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_swmmac_f16_16x16x32_f16",
                &[0x00, 0x40, 0x52, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_swmmac_bf16_16x16x32_bf16",
                &[0x00, 0x48, 0x53, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                1,
            ),
            (
                "v_swmmac_i32_16x16x32_iu8",
                &[0x00, 0x40, 0x54, 0xcc, 0x08, 0x21, 0x62, 0x7c],
                0,
            ),
            (
                "v_swmmac_i32_16x16x32_iu4",
                &[0x00, 0x48, 0x55, 0xcc, 0x08, 0x21, 0x62, 0x3c],
                1,
            ),
            (
                "v_swmmac_i32_16x16x64_iu4",
                &[0x00, 0x40, 0x56, 0xcc, 0x08, 0x21, 0x62, 0x5c],
                0,
            ),
            (
                "v_swmmac_f32_16x16x32_fp8_fp8",
                &[0x00, 0x40, 0x57, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_swmmac_f32_16x16x32_fp8_bf8",
                &[0x00, 0x40, 0x58, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_swmmac_f32_16x16x32_bf8_fp8",
                &[0x00, 0x48, 0x59, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                1,
            ),
            (
                "v_swmmac_f32_16x16x32_bf8_bf8",
                &[0x00, 0x40, 0x5a, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            // v_wmma_i32_16x16x16_iu8 v[0:7], v[8:9], v[16:17], v[24:31] neg_lo:[1,1,0]
            (
                "v_wmma_i32_16x16x16_iu8",
                &[0x00, 0x40, 0x44, 0xcc, 0x08, 0x21, 0x62, 0x7c],
                0,
            ),
            (
                "v_wmma_i32_16x16x16_iu4",
                &[0x00, 0x40, 0x45, 0xcc, 0x08, 0x21, 0x62, 0x3c],
                0,
            ),
            (
                "v_wmma_i32_16x16x32_iu4",
                &[0x00, 0x40, 0x4a, 0xcc, 0x08, 0x21, 0x62, 0x5c],
                0,
            ),
            // The dense float WMMA, which rdna3::wmma_float runs with gfx12's layout:
            // v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[16:19], v[24:31], …
            (
                "v_wmma_f32_16x16x16_f16",
                &[0x00, 0x40, 0x40, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_wmma_f32_16x16x16_bf16",
                &[0x00, 0x40, 0x41, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_wmma_f16_16x16x16_f16",
                &[0x00, 0x40, 0x42, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_wmma_bf16_16x16x16_bf16",
                &[0x00, 0x40, 0x43, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_wmma_f32_16x16x16_fp8_fp8",
                &[0x00, 0x40, 0x46, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_wmma_f32_16x16x16_fp8_bf8",
                &[0x00, 0x40, 0x47, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_wmma_f32_16x16x16_bf8_fp8",
                &[0x00, 0x40, 0x48, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
            (
                "v_wmma_f32_16x16x16_bf8_bf8",
                &[0x00, 0x40, 0x49, 0xcc, 0x08, 0x21, 0x62, 0x1c],
                0,
            ),
        ];
        let mut seed = 0x1234_5678u32;
        for &(inst, enc, set) in cases {
            let words = crate::rdna4::testing::dwords(enc);
            let shape = shape_of(inst);
            let neg = words[1] >> 29;
            let (sa, sb) = (neg & 1 != 0, neg & 2 != 0);
            let (pa, pb, pd) = (places(inst, "A", 0), places(inst, "B", 0), places(inst, "D", 0));
            let pk = shape.sparse.then(|| places(inst, "K", set));
            let pc = if shape.sparse { pd.clone() } else { places(inst, "C", 0) };
            let k = shape.k;
            // A value and its code in A's format (B's: `second`): small integers, or
            // halves of them, that every format holds and whose sums are exact.
            let pick = |s: &mut u32, signed: bool, second: bool| -> (f64, u32) {
                let r = next(s);
                match shape.inputs {
                    Inputs::Int { bits } => {
                        let v = (r % (1 << bits)) as i64 - if signed { 1 << (bits - 1) } else { 0 };
                        (v as f64, (v as u32) & ((1 << bits) - 1))
                    }
                    Inputs::Half { bf16: true } => {
                        let v = f64::from((r % 5) as i32 - 2);
                        (v, (v as f32).to_bits() >> 16)
                    }
                    Inputs::Half { bf16: false } => {
                        let v = f64::from((r % 9) as i32 - 4) / 2.0;
                        (v, u32::from(crate::float::half::from_f64(v)))
                    }
                    Inputs::Eight { a, b } => {
                        // ±{0, 0.5, 1, 1.5, 2}: E4M3 (bias 7) and E5M2 (bias 15) codes.
                        let v = f64::from((r % 9) as i32 - 4) / 2.0;
                        let (e4m3, e5m2) = match (v.abs() * 2.0) as u32 {
                            0 => (0, 0),
                            1 => (0x30, 0x38),
                            2 => (0x38, 0x3c),
                            3 => (0x3c, 0x3e),
                            _ => (0x40, 0x40),
                        };
                        let code = if (if second { b } else { a }) == Fp8::E4m3 {
                            e4m3
                        } else {
                            e5m2
                        };
                        (v, code | u32::from(v < 0.0) << 7)
                    }
                }
            };
            let mut va = vec![vec![0f64; k]; 16];
            let mut vb = vec![vec![0f64; 16]; k];
            let mut vc = [[0f64; 16]; 16];
            let mut regs = vec![[0u32; 32]; 32];
            let put =
                |regs: &mut Vec<[u32; 32]>, base: usize, (reg, lane, lo, hi): (usize, usize, u32, u32), v: u32| {
                    let mask = if hi - lo == 31 {
                        u32::MAX
                    } else {
                        ((1 << (hi - lo + 1)) - 1) << lo
                    };
                    let r = &mut regs[base + reg][lane];
                    *r = (*r & !mask) | (v << lo) & mask;
                };
            let moved = |(reg, lane, lo, hi): (usize, usize, u32, u32), by: usize| (reg, lane + by, lo, hi);
            for x in 0..16 {
                if shape.sparse {
                    for g in 0..k / 4 {
                        // Two distinct k of the four, in order.
                        let r = next(&mut seed);
                        let (i0, i1) = match r % 6 {
                            0 => (0, 1),
                            1 => (0, 2),
                            2 => (0, 3),
                            3 => (1, 2),
                            4 => (1, 3),
                            _ => (2, 3),
                        };
                        let (v0, v1) = (pick(&mut seed, sa, false), pick(&mut seed, sa, false));
                        va[x][4 * g + i0] = v0.0;
                        va[x][4 * g + i1] = v1.0;
                        let pair = v0.1 | v1.1 << shape.width();
                        put(&mut regs, 8, moved(pa[4 * g], x), pair);
                        let pk = pk.as_ref().unwrap();
                        put(&mut regs, 24, moved(pk[4 * g], x), (i0 | i1 << 2) as u32);
                    }
                } else {
                    for kk in 0..k {
                        let v = pick(&mut seed, sa, false);
                        va[x][kk] = v.0;
                        put(&mut regs, 8, moved(pa[kk], x), v.1);
                    }
                }
                for kk in 0..k {
                    let v = pick(&mut seed, sb, true);
                    vb[kk][x] = v.0;
                    put(&mut regs, 16, moved(pb[kk], x), v.1);
                }
            }
            let c_base = if shape.sparse { 0 } else { 24 };
            for (row, cs) in vc.iter_mut().enumerate() {
                for (col, cv) in cs.iter_mut().enumerate() {
                    let c = f64::from((next(&mut seed) % 17) as i32 - 8);
                    *cv = c;
                    let bits = match shape.out {
                        Out::I32 => c as i32 as u32,
                        Out::F32 => (c as f32).to_bits(),
                        Out::Half if matches!(shape.inputs, Inputs::Half { bf16: true }) => (c as f32).to_bits() >> 16,
                        Out::Half => u32::from(crate::float::half::from_f64(c)),
                    };
                    put(&mut regs, c_base, moved(pc[row], col), bits);
                }
            }
            // The dense 16-bit float forms again under each NEG and NEG_HI bit, the
            // reference negated as the calculator's marks say.
            let mut variants: Vec<(Vec<u32>, &str, &str)> = vec![(words.clone(), "", "")];
            if !shape.sparse && matches!(shape.inputs, Inputs::Half { .. }) {
                for (m, bit) in [("A", 0), ("B", 1), ("C", 2)] {
                    let mut lo = words.clone();
                    lo[1] |= 1 << (29 + bit);
                    let mut hi = words.clone();
                    hi[0] |= 1 << (8 + bit);
                    variants.push((lo, m, "neg"));
                    variants.push((hi, m, "neg_hi"));
                }
            }
            for (words, m, field) in variants {
                let marks: Vec<char> = if field.is_empty() {
                    Vec::new()
                } else {
                    negations(inst, m, field)
                };
                let sign = |x: f64, at: usize, which: &str| -> f64 {
                    if which != m {
                        return x;
                    }
                    match marks[at] {
                        '-' => -x,
                        '|' => x.abs(),
                        'n' => -x.abs(),
                        _ => x,
                    }
                };
                let wave = run_wave(&[&words], |w| {
                    w.v[..32].iter_mut().zip(&regs).for_each(|(d, s)| d.0 = *s);
                })
                .unwrap_or_else(|e| panic!("{inst} {field} {m}: {e:?}"));
                for row in 0..16 {
                    for col in 0..16 {
                        let products: f64 = (0..k)
                            .map(|kk| sign(va[row][kk], kk, "A") * sign(vb[kk][col], kk, "B"))
                            .sum();
                        let want = sign(vc[row][col], row, "C") + products;
                        let (reg, lane, lo, hi) = moved(pd[row], col);
                        let v = wave.v[reg][lane];
                        let got = match shape.out {
                            Out::I32 => f64::from(v as i32),
                            Out::F32 => f64::from(f32::from_bits(v)),
                            Out::Half => {
                                let h = (v >> lo) & 0xffff;
                                assert_eq!(hi - lo, 15);
                                if matches!(shape.inputs, Inputs::Half { bf16: true }) {
                                    f64::from(f32::from_bits(h << 16))
                                } else {
                                    f64::from(crate::float::half::to_f32(h as u16))
                                }
                            }
                        };
                        assert_eq!(got, want, "{inst} index set {set} {field} {m}: D[{row}][{col}]");
                    }
                }
            }
        }
    }
}
