//! Vector compares (VOPC and their VOP3 forms) and float classes.

use super::decode::Inst;
use super::exec::{LANE_BIT, Lanes, Mods, R, f, f64_src, slow_only, unsupported};
use super::fast::Src;
use super::opcodes::op::vopc;
use super::packed::f16_src;
use super::wave::{Bits, EXEC_LO, MODE_DENORM_F32_IN, Wave, sparse};

/// The `v_cmpx_*` compares, which write EXEC, are the `v_cmp_*` ones this much higher.
const CMPX: u16 = vopc::V_CMPX_F_F16_E32 - vopc::V_CMP_F_F16_E32;

/// Whether VOPC opcode `op` is a `v_cmpx_*` (writes EXEC).
pub(crate) fn writes_exec(op: u16) -> bool {
    op >= vopc::V_CMPX_F_F16_E32
}

/// The integer compares come in blocks of eight predicates (F, LT, EQ, LE, GT, NE, GE,
/// T) for i16, u16, i32, u32, i64 and u64, from the F slot before `v_cmp_lt_i16` (gfx11
/// lists no F and T for the 16-bit types).
const INT_FIRST: u16 = vopc::V_CMP_LT_I16_E32 - 1;

/// What a `v_cmp_*` opcode compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compare {
    /// `v_cmp_class_*` of a float this wide: S1's bit for S0's class.
    Class(u32),
    /// Floats this wide, by predicate `k` of [`float_compare`] (the opcode's place in
    /// its type's block of 16).
    Float(u32, u16),
    /// Integers of type `t` (i16, u16, i32, u32, i64, u64), by predicate `k`.
    Int { t: u16, k: u16 },
}

fn compare_of(op: u16) -> Option<Compare> {
    Some(match op {
        vopc::V_CMP_CLASS_F16_E32 => Compare::Class(16),
        vopc::V_CMP_CLASS_F32_E32 => Compare::Class(32),
        vopc::V_CMP_CLASS_F64_E32 => Compare::Class(64),
        vopc::V_CMP_F_F16_E32..=vopc::V_CMP_T_F16_E32 => Compare::Float(16, op - vopc::V_CMP_F_F16_E32),
        vopc::V_CMP_F_F32_E32..=vopc::V_CMP_T_F32_E32 => Compare::Float(32, op - vopc::V_CMP_F_F32_E32),
        vopc::V_CMP_F_F64_E32..=vopc::V_CMP_T_F64_E32 => Compare::Float(64, op - vopc::V_CMP_F_F64_E32),
        INT_FIRST..=vopc::V_CMP_T_U64_E32 => Compare::Int {
            t: (op - INT_FIRST) / 8,
            k: (op - INT_FIRST) % 8,
        },
        _ => return None,
    })
}

/// Compares S0 with S1 in every lane of EXEC into the mask at `sdst` (EXEC for
/// `v_cmpx_*`); lanes outside EXEC get 0.
pub(crate) fn vcmp(w: &mut Wave, i: &Inst, op: u16, sdst: usize, srcs: [u16; 2], m: Mods) -> R<()> {
    let (op, sdst) = compare_and_target(op, sdst);
    // A compare's result is a mask, with nothing for clamp to bound: on a float
    // compare (LLVM assembles `clamp` there) the mask is written as without it. omod,
    // and clamp on an integer compare, are encodings LLVM rejects.
    let compare = compare_of(op);
    let float = matches!(compare, Some(Compare::Float(..)));
    if m.omod != 0 || (m.clamp && !float) {
        return Err(format!(
            "{} on an {} compare is refused: an encoding LLVM rejects, with no meaning in the ISA",
            if m.omod != 0 { "omod" } else { "clamp" },
            if float { "float" } else { "integer" }
        )
        .into());
    }
    let exec = w.exec();
    if let Some(mask) = compare.and_then(|c| whole_wave(w, c, srcs, m, i.literal, exec)) {
        return w.mask_write(sdst, mask & exec);
    }
    let mut mask = 0u32;
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let r = match compare.ok_or_else(|| unsupported(i))? {
            // The f16 form's operands are both 16 bits wide: op_sel picks their halves.
            Compare::Class(width) => {
                let bits = match width {
                    16 => u64::from(m.half(0, w.vread(srcs[0], lane, i.literal)?)),
                    32 => w.vread(srcs[0], lane, i.literal)? as u64,
                    _ => w.vread64(srcs[0], lane, i.literal)?,
                };
                let sign = 1u64 << (width - 1);
                let bits = if m.abs & 1 != 0 { bits & !sign } else { bits };
                let bits = if m.neg & 1 != 0 { bits ^ sign } else { bits };
                let select = w.vread(srcs[1], lane, i.literal)?;
                let select = if width == 16 {
                    u32::from(m.half(1, select))
                } else {
                    select
                };
                select >> float_class(bits, width) & 1 != 0
            }
            Compare::Float(width, k) => {
                let (x, y) = match width {
                    16 => (
                        f16_src(w, srcs[0], lane, i.literal, m, 0)?,
                        f16_src(w, srcs[1], lane, i.literal, m, 1)?,
                    ),
                    32 => {
                        let (a, b) = (w.vread(srcs[0], lane, i.literal)?, w.vread(srcs[1], lane, i.literal)?);
                        (w.f32_in(f(m.float(0, a))) as f64, w.f32_in(f(m.float(1, b))) as f64)
                    }
                    _ => (
                        f64_src(w, srcs[0], lane, i.literal, m, 0)?,
                        f64_src(w, srcs[1], lane, i.literal, m, 1)?,
                    ),
                };
                float_compare(k, x, y)
            }
            Compare::Int { t, k } => int_compare(w, i, t, k, lane, srcs, m)?,
        };
        mask |= (r as u32) << lane;
    }
    w.mask_write(sdst, mask)
}

/// The `v_cmp_*` opcode a VOPC opcode compares by, and where its mask goes: EXEC for a
/// `v_cmpx_*`, else `sdst`.
fn compare_and_target(op: u16, sdst: usize) -> (u16, usize) {
    if writes_exec(op) {
        (op - CMPX, EXEC_LO)
    } else {
        (op, sdst)
    }
}

/// A 32-bit integer or f32 compare without modifiers, of registers and constants
/// (nearly every compare a compiler emits), its operands resolved when decoded: what
/// [`vcmp`]'s whole-wave path does, without finding out each time that it applies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastCompare {
    kind: WholeKind,
    a: Src,
    b: Src,
    /// One past the highest VGPR read (0: none), checked against the wave's.
    top: u16,
    /// The mask's destination (EXEC_LO for `v_cmpx_*`).
    sdst: usize,
}

impl FastCompare {
    /// Compare `i` (opcode, destination, sources, modifiers as [`vcmp`] takes them),
    /// when it is one this runs.
    pub(crate) fn of(i: &Inst, sdst: usize, srcs: [u16; 2], m: Mods) -> Option<FastCompare> {
        if m != Mods::NONE {
            return None;
        }
        let (op, sdst) = compare_and_target(i.op, sdst);
        let kind = WholeKind::of(compare_of(op)?)?;
        let (a, b) = (Src::of(srcs[0], i.literal)?, Src::of(srcs[1], i.literal)?);
        let top = [a, b]
            .iter()
            .filter_map(|s| s.vgpr())
            .map(|r| r as u16 + 1)
            .max()
            .unwrap_or(0);
        Some(FastCompare { kind, a, b, top, sdst })
    }

    /// Runs the compare on `w`: `Ok(false)` (nothing done) where [`vcmp`] must (a
    /// VGPR past the wave's, f32 input denormals flushed, the lane-by-lane path
    /// forced).
    #[inline(always)]
    pub(crate) fn run(&self, w: &mut Wave) -> R<bool> {
        if usize::from(self.top) > w.v.len()
            || (matches!(self.kind, WholeKind::F32(_)) && w.mode & MODE_DENORM_F32_IN == 0)
            || slow_only()
        {
            return Ok(false);
        }
        let lanes = |s: Src| match s {
            Src::Vgpr(r) => Lanes::Vgpr(usize::from(r)),
            s => Lanes::Same(s.scalar(w)),
        };
        let exec = w.exec();
        let mask = compare_lanes(w, self.kind, lanes(self.a), lanes(self.b), exec);
        w.mask_write(self.sdst, mask & exec)?;
        Ok(true)
    }
}

/// Lane `l`'s bit set where `p(l)`, for the lanes of `exec`.
#[inline(always)]
fn mask(exec: u32, p: impl Fn(usize) -> bool) -> u32 {
    if sparse(exec) {
        return Bits(exec).fold(0u32, |m, l| m | u32::from(p(l)) << l);
    }
    (0..32).fold(0u32, |m, l| m | u32::from(p(l)) << l) & exec
}

/// Integer compare predicate `k` (as [`ordered`] takes it) of every lane's operands
/// (`a(l)`, `b(l)`), for the lanes of `exec`: one loop per predicate, each lane's bit
/// from a table, so the loops vectorize.
#[inline(always)]
fn int_mask<T: Ord + Copy>(exec: u32, k: u16, a: impl Fn(usize) -> T, b: impl Fn(usize) -> T) -> u32 {
    match k {
        0 => 0,
        1 => lanes_where(exec, |l| a(l) < b(l)),
        2 => lanes_where(exec, |l| a(l) == b(l)),
        3 => lanes_where(exec, |l| a(l) <= b(l)),
        4 => lanes_where(exec, |l| a(l) > b(l)),
        5 => lanes_where(exec, |l| a(l) != b(l)),
        6 => lanes_where(exec, |l| a(l) >= b(l)),
        _ => exec,
    }
}

/// Lane `l`'s bit set where `p(l)`, for the lanes of `exec`, every lane evaluated.
#[inline(always)]
fn lanes_where(exec: u32, p: impl Fn(usize) -> bool) -> u32 {
    // One loop with the bits ORed in (a reduction the compiler vectorizes).
    let mut m = 0u32;
    for (l, &bit) in LANE_BIT.iter().enumerate() {
        m |= if p(l) { bit } else { 0 };
    }
    m & exec
}

/// The 32-bit integer and f32 compares without modifiers, a whole wave at a time: the
/// mask for the lanes of EXEC, or `None` for the lane-by-lane path.
fn whole_wave(w: &Wave, compare: Compare, srcs: [u16; 2], m: Mods, lit: Option<u32>, exec: u32) -> Option<u32> {
    if m != Mods::NONE || slow_only() {
        return None;
    }
    let kind = WholeKind::of(compare)?;
    // f32 inputs as they are only (MODE keeps input denormals).
    if matches!(kind, WholeKind::F32(_)) && w.mode & MODE_DENORM_F32_IN == 0 {
        return None;
    }
    let (la, lb) = (Lanes::of(w, srcs[0], lit)?, Lanes::of(w, srcs[1], lit)?);
    Some(compare_lanes(w, kind, la, lb, exec))
}

/// Compare `kind` of operands `a` and `b` in the lanes of `exec` (their bits only): a
/// few lanes (one-lane workgroups, a loop's last lanes) one by one, else the whole
/// wave at once.
#[inline(always)]
fn compare_lanes(w: &Wave, kind: WholeKind, a: Lanes, b: Lanes, exec: u32) -> u32 {
    if sparse(exec) {
        let lane = |s: &Lanes, l: usize| match *s {
            Lanes::Vgpr(r) => w.v[r][l],
            Lanes::Same(k) => k,
        };
        return Bits(exec).fold(0, |m, l| m | u32::from(kind.holds(lane(&a, l), lane(&b, l))) << l);
    }
    let (mut at, mut bt) = ([0u32; 32], [0u32; 32]);
    let (a, b) = (a.in_place(w, &mut at), b.in_place(w, &mut bt));
    super::wide::run(WholeCompare { kind, a, b, exec })
}

/// The compares [`whole_wave`] runs, each with its predicate.
#[derive(Clone, Copy, Debug)]
enum WholeKind {
    I32(u16),
    U32(u16),
    F32(u16),
}

impl WholeKind {
    /// The whole-wave form of `compare`: the 32-bit integer and f32 ones.
    fn of(compare: Compare) -> Option<WholeKind> {
        Some(match compare {
            Compare::Int { t: 2, k } => WholeKind::I32(k),
            Compare::Int { t: 3, k } => WholeKind::U32(k),
            Compare::Float(32, k) => WholeKind::F32(k),
            _ => return None,
        })
    }

    /// Whether the predicate holds for one lane's operands.
    #[inline(always)]
    fn holds(self, a: u32, b: u32) -> bool {
        match self {
            WholeKind::I32(k) => ordered(k, (a as i32).cmp(&(b as i32))),
            WholeKind::U32(k) => ordered(k, a.cmp(&b)),
            WholeKind::F32(k) => float_compare(k, f64::from(f(a)), f64::from(f(b))),
        }
    }
}

/// A whole-wave compare, for [`super::wide::run`].
struct WholeCompare<'a> {
    kind: WholeKind,
    a: &'a [u32; 32],
    b: &'a [u32; 32],
    exec: u32,
}

impl super::wide::Whole for WholeCompare<'_> {
    type Out = u32;
    #[inline(always)]
    fn run(self) -> u32 {
        let (a, b, exec) = (self.a, self.b, self.exec);
        match self.kind {
            WholeKind::I32(k) => int_mask(exec, k, |l| a[l] as i32, |l| b[l] as i32),
            WholeKind::U32(k) => int_mask(exec, k, |l| a[l], |l| b[l]),
            WholeKind::F32(k) => mask(exec, |l| float_compare(k, f64::from(f(a[l])), f64::from(f(b[l])))),
        }
    }
}

/// Integer compare predicate `k` on `lane`'s operands of type `t` (i16, u16, i32, u32,
/// i64, u64).
fn int_compare(w: &Wave, i: &Inst, t: u16, k: u16, lane: usize, srcs: [u16; 2], m: Mods) -> R<bool> {
    let o = if t >= 4 {
        let (a, b) = (
            w.vread64(srcs[0], lane, i.literal)?,
            w.vread64(srcs[1], lane, i.literal)?,
        );
        if t == 4 { (a as i64).cmp(&(b as i64)) } else { a.cmp(&b) }
    } else {
        let (a, b) = (w.vread(srcs[0], lane, i.literal)?, w.vread(srcs[1], lane, i.literal)?);
        let (a, b) = if t < 2 {
            (m.half(0, a) as u32, m.half(1, b) as u32)
        } else {
            (a, b)
        };
        match t {
            0 => (a as u16 as i16).cmp(&(b as u16 as i16)),
            2 => (a as i32).cmp(&(b as i32)),
            _ => a.cmp(&b),
        }
    };
    Ok(ordered(k, o))
}

/// Integer compare predicate `k` (F, LT, EQ, LE, GT, NE, GE, T) on an ordering.
#[inline(always)]
fn ordered(k: u16, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    match k {
        0 => false,
        1 => o == Less,
        2 => o == Equal,
        3 => o != Greater,
        4 => o == Greater,
        5 => o != Equal,
        6 => o != Less,
        _ => true,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdna3::opcodes::SPEC;

    /// Each VOPC opcode compares what its name says, and the `v_cmpx_*` ones are the
    /// `v_cmp_*` ones [`CMPX`] higher.
    #[test]
    fn compares_by_name() {
        const FLOAT: [&str; 16] = [
            "f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "t",
        ];
        const INT: [&str; 8] = ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"];
        const TYPES: [&str; 6] = ["i16", "u16", "i32", "u32", "i64", "u64"];
        let place = |list: &[&str], x: &str| list.iter().position(|&y| y == x).map(|k| k as u16);
        let vopc = SPEC.iter().find(|(e, _)| *e == "VOPC").map_or(&[][..], |(_, ops)| *ops);
        assert!(vopc.len() > 100);
        for &(op, name) in vopc {
            let body = name.strip_suffix("_e32").unwrap_or(name);
            let (cmpx, body) = match body.strip_prefix("v_cmpx_") {
                Some(b) => (true, b),
                None => (false, body.strip_prefix("v_cmp_").unwrap_or(body)),
            };
            assert_eq!(writes_exec(op), cmpx, "{name}");
            let (predicate, ty) = body.rsplit_once('_').unwrap_or_default();
            let width = ty[1..].parse().unwrap_or(0);
            let want = match predicate {
                "class" => Some(Compare::Class(width)),
                _ if ty.starts_with('f') => place(&FLOAT, predicate).map(|k| Compare::Float(width, k)),
                _ => place(&TYPES, ty)
                    .zip(place(&INT, predicate))
                    .map(|(t, k)| Compare::Int { t, k }),
            };
            assert!(want.is_some(), "{name}");
            assert_eq!(compare_of(if cmpx { op - CMPX } else { op }), want, "{name}");
        }
    }
}
