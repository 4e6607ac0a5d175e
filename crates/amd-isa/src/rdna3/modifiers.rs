//! VOP3's modifiers: which an instruction may carry, and the output modifier (omod:
//! the result times 2, 4 or 0.5) and clamp for the operations whose own code does not
//! apply them.
//!
//! [`check_vop3`], [`check_dpp16`] and [`check_vop3p`] refuse, naming the instruction,
//! the modifiers the ISA does not allow there: neg and abs on a source, clamp and
//! omod where LLVM does not assemble them (the tables `cargo xtask gen-mnemonics`
//! generates from llvm-mc-19 into `mnemonics`), op_sel on an operand the ISA's operand
//! table does not make 16 bits wide (`Vop3::halves`), and neg_lo / neg_hi on a packed
//! integer operand (LLVM assembles those, but the ISA defines negation for float
//! operands only; the integer dot products and WMMA read neg_lo bits 0 and 1 as
//! signedness).
//!
//! The f32 and f64 arithmetic, the f16 arithmetic and the integer adds, subtracts,
//! multiply-adds and sums of absolute differences apply clamp and omod where they
//! compute; everything else LLVM assembles with them comes to [`apply`]:
//! - a float result (f16, f32 or f64 by the ISA name's first type; both halves of
//!   `v_cvt_pk_rtz_f16_f32` and, for clamp, `v_pack_b32_f16`): the operation runs
//!   without them, then its result is scaled and clamped to [0, 1] (NaN to 0) as the
//!   f32 arithmetic's are, in the half op_sel[3] picks for a 16-bit result;
//! - an integer result clamp cannot change (conversions from float, which saturate
//!   anyway; exponents; 16-bit min/max/median): the operation runs without it.
//!
//! The rest are refused, naming the instruction: omod on an integer result (LLVM
//! assembles it on some, but the ISA defines output modifiers for float results only)
//! and encodings LLVM rejects.

use super::decode::{Encoding, Inst};
use super::exec::{Mods, R, Vop, output_mods, output_mods64, valu_lanes};
use super::mnemonics::{VOP1_DPP16_MODIFIERS, VOP2_DPP16_MODIFIERS, VOP3_MODIFIERS, VOPC_DPP16_MODIFIERS};
use super::opcodes::{Vop3, Vop3p, Vop3sd};
use super::wave::Wave;
use crate::error::Trap;
use crate::float::ResultFormat;
use crate::float::half;

/// The modifiers LLVM assembles on one opcode (the tables `cargo xtask gen-mnemonics`
/// generates into `mnemonics`): bit k of `neg` and `abs` for source k.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Accepts {
    pub(crate) neg: u8,
    pub(crate) abs: u8,
    pub(crate) clamp: bool,
    pub(crate) omod: bool,
}

impl Accepts {
    /// No modifier (an opcode LLVM does not assemble in that form).
    pub(crate) const NONE: Accepts = Accepts {
        neg: 0,
        abs: 0,
        clamp: false,
        omod: false,
    };
}

/// The name of VOP3-numbered `op` for an error message.
fn vop3_name(op: u16) -> &'static str {
    Vop3::from_op(op)
        .map(Vop3::name)
        .or_else(|| Vop3sd::from_op(op).map(Vop3sd::name))
        .unwrap_or("this VOP3 opcode")
}

/// `what` on source `k` of `name` refused because `why`.
fn refused(what: &str, k: usize, name: &str, why: &str) -> Trap {
    Trap::refused(format!("{what} on source {k} of {name} is refused: {why}"))
}

/// The sources among `bits` (bit k for source k) that `allowed` leaves out: the first.
fn first_outside(bits: u8, allowed: u8) -> Option<usize> {
    let out = bits & !allowed;
    (out != 0).then(|| out.trailing_zeros() as usize)
}

/// Refuses the input modifiers of `accepts` leaves out (neg and abs per source).
fn check_signs(m: Mods, accepts: Accepts, name: &str) -> R<()> {
    const WHY: &str = "an encoding LLVM rejects (the ISA defines neg and abs for float operands)";
    if let Some(k) = first_outside(m.neg, accepts.neg) {
        return Err(refused("neg", k, name, WHY));
    }
    if let Some(k) = first_outside(m.abs, accepts.abs) {
        return Err(refused("abs", k, name, WHY));
    }
    Ok(())
}

/// The op_sel bits VOP3-numbered `op` may carry: its 16-bit operands
/// (`Vop3::halves`), and the bits a few opcodes read otherwise.
fn op_sel_allowed(op: u16) -> u8 {
    match Vop3::from_op(op) {
        // Fetch-inactive and bound control, not halves.
        Some(Vop3::V_PERMLANE16_B32 | Vop3::V_PERMLANEX16_B32) => 0b0011,
        // LLVM assembles op_sel on all four operands; on the 32-bit S2 and destination
        // it changes nothing.
        Some(Vop3::V_MAD_U32_U16 | Vop3::V_MAD_I32_I16) => 0b1111,
        Some(o) => o.halves(),
        None => 0,
    }
}

/// Refuses what a VOP3 instruction (VOP3-numbered `op`, VOPC's and VOP3SD's forms
/// included) carries that the ISA does not allow there (see the module's
/// documentation); clamp and omod LLVM assembles are left to the operation.
pub(crate) fn check_vop3(op: u16, m: Mods) -> R<()> {
    let name = vop3_name(op);
    let accepts = VOP3_MODIFIERS.get(usize::from(op)).copied().unwrap_or(Accepts::NONE);
    check_signs(m, accepts, name)?;
    if let Some(k) = first_outside(m.opsel, op_sel_allowed(op)) {
        let operand = if k == 3 {
            "the destination".to_string()
        } else {
            format!("source {k}")
        };
        return Err(format!(
            "op_sel on {operand} of {name} is refused: the operand is not 16 bits wide in the ISA's operand table"
        )
        .into());
    }
    let why = "an encoding LLVM rejects, with no meaning in the ISA";
    if m.clamp && !accepts.clamp {
        return Err(format!("clamp on {name} is refused: {why}").into());
    }
    if m.omod != 0 && !accepts.omod {
        return Err(format!("omod on {name} is refused: {why}").into());
    }
    Ok(())
}

/// Refuses neg and abs on the DPP16 form of a VOP1, VOP2 or VOPC instruction where
/// LLVM does not assemble them.
pub(crate) fn check_dpp16(i: &Inst, m: Mods) -> R<()> {
    let table: &[Accepts] = match i.enc {
        Encoding::Vop1 => &VOP1_DPP16_MODIFIERS,
        Encoding::Vop2 => &VOP2_DPP16_MODIFIERS,
        Encoding::Vopc => &VOPC_DPP16_MODIFIERS,
        _ => return Ok(()),
    };
    let accepts = table.get(usize::from(i.op)).copied().unwrap_or(Accepts::NONE);
    check_signs(m, accepts, &format!("the DPP16 form of {:?} opcode {:#x}", i.enc, i.op))
}

/// Refuses neg_lo / neg_hi bits on a VOP3P instruction's integer operands: every
/// packed 16-bit integer operation's, the unsigned dot products', and those of the
/// signed dot products and integer WMMA other than neg_lo bits 0 and 1 (A and B
/// signed).
pub(crate) fn check_vop3p(op: u16, neg_lo: u32, neg_hi: u32) -> R<()> {
    use Vop3p::*;
    let Some(o) = Vop3p::from_op(op) else {
        return Ok(());
    };
    let signedness = match o {
        V_PK_MAD_I16 | V_PK_MUL_LO_U16 | V_PK_ADD_I16 | V_PK_SUB_I16 | V_PK_LSHLREV_B16 | V_PK_LSHRREV_B16
        | V_PK_ASHRREV_I16 | V_PK_MAX_I16 | V_PK_MIN_I16 | V_PK_MAD_U16 | V_PK_ADD_U16 | V_PK_SUB_U16
        | V_PK_MAX_U16 | V_PK_MIN_U16 | V_DOT4_U32_U8 | V_DOT8_U32_U4 => 0,
        V_DOT4_I32_IU8 | V_DOT8_I32_IU4 | V_WMMA_I32_16X16X16_IU8 | V_WMMA_I32_16X16X16_IU4 => 0b011,
        _ => return Ok(()),
    };
    if neg_lo & !signedness != 0 || neg_hi != 0 {
        let (what, bits) = if neg_lo & !signedness != 0 {
            ("neg_lo", neg_lo & !signedness)
        } else {
            ("neg_hi", neg_hi)
        };
        return Err(refused(
            what,
            bits.trailing_zeros() as usize,
            o.name(),
            "an integer operand (the ISA defines negation for float operands only)",
        ));
    }
    Ok(())
}

/// The modifiers the interpreter takes on one instruction form: what it does not
/// refuse (what LLVM assembles, op_sel on 16-bit operands), and omod only where the
/// result is a float (for generators of test cases, such as `cargo xtask oracle`). Bit
/// k of each mask is source k (op_sel bit 3 the destination). In VOP3P, `neg` is
/// neg_lo and `abs` neg_hi, whose bits they are in the encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// neg (VOP3P: neg_lo) per source.
    pub neg: u8,
    /// abs (VOP3P: neg_hi) per source.
    pub abs: u8,
    /// op_sel per operand.
    pub op_sel: u8,
    /// op_sel_hi per source (VOP3P only).
    pub op_sel_hi: u8,
    /// clamp.
    pub clamp: bool,
    /// omod.
    pub omod: bool,
}

/// The modifiers the interpreter takes on opcode `op` of `encoding`: `"VOP3"` (VOP3
/// numbering, VOPC's block included), `"VOP3SD"`, `"VOP3P"`, or `"VOP1"`, `"VOP2"`,
/// `"VOPC"` for their DPP16 forms (neg and abs only); none (`Modifiers::default()`) for
/// anything else.
pub fn modifiers(encoding: &str, op: u16) -> Modifiers {
    let at = |table: &[Accepts]| table.get(usize::from(op)).copied().unwrap_or(Accepts::NONE);
    let signs = |a: Accepts| Modifiers {
        neg: a.neg,
        abs: a.abs,
        ..Modifiers::default()
    };
    match encoding {
        "VOP1" => signs(at(&VOP1_DPP16_MODIFIERS)),
        "VOP2" => signs(at(&VOP2_DPP16_MODIFIERS)),
        "VOPC" => signs(at(&VOPC_DPP16_MODIFIERS)),
        "VOP3" | "VOP3SD" => {
            let a = at(&VOP3_MODIFIERS);
            let name = super::valu::name(op).or_else(|| Vop3sd::from_op(op).map(Vop3sd::name));
            let float = name
                .and_then(|n| kind(n, result_format(op)))
                .is_some_and(|k| k != Kind::ClampChangesNothing);
            let sd = encoding == "VOP3SD";
            Modifiers {
                neg: a.neg,
                // VOP3SD has its scalar destination where VOP3 has abs and op_sel.
                abs: if sd { 0 } else { a.abs },
                op_sel: if sd { 0 } else { op_sel_allowed(op) },
                op_sel_hi: 0,
                clamp: a.clamp,
                omod: a.omod && float,
            }
        }
        "VOP3P" => {
            // What check_vop3p leaves: every neg bit on float operands, the signedness
            // bits on the integer dot products and WMMA, none on the other integers.
            let neg = match Vop3p::from_op(op) {
                None => return Modifiers::default(),
                Some(_) if check_vop3p(op, 0b111, 0).is_ok() => 0b111,
                Some(_) if check_vop3p(op, 0b011, 0).is_ok() => 0b011,
                Some(_) => 0,
            };
            let wmma = Vop3p::from_op(op).is_some_and(|o| o.name().starts_with("v_wmma"));
            Modifiers {
                neg,
                abs: if check_vop3p(op, 0, 0b111).is_ok() { 0b111 } else { 0 },
                // WMMA's op_sel bits 0 and 1 are refused (packed::vop3p).
                op_sel: if wmma { 0b100 } else { 0b111 },
                op_sel_hi: 0b111,
                clamp: true,
                omod: false,
            }
        }
        _ => Modifiers::default(),
    }
}

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
    "v_cvt_i16_f16",
    "v_cvt_u16_f16",
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

/// The float format of the result of VOP3- or VOP3SD-numbered opcode `op`.
fn result_format(op: u16) -> Option<ResultFormat> {
    super::valu::result_format(op).or_else(|| Vop3sd::from_op(op).and_then(Vop3sd::result_format))
}

fn kind(name: &str, result: Option<ResultFormat>) -> Option<Kind> {
    if matches!(name, "v_cvt_pk_rtz_f16_f32" | "v_pack_b32_f16") {
        return Some(Kind::F16(Halves::Both));
    }
    if CLAMP_CHANGES_NOTHING.iter().any(|p| name.starts_with(p)) {
        return Some(Kind::ClampChangesNothing);
    }
    match result? {
        ResultFormat::F16 => Some(Kind::F16(Halves::One)),
        // A bfloat16 result is made from an f32 one, as the rounding modes treat it.
        ResultFormat::F32 | ResultFormat::Bf16 => Some(Kind::F32),
        ResultFormat::F64 => Some(Kind::F64),
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
pub(crate) fn apply(w: &mut Wave, i: &Inst, v: Vop) -> R<()> {
    let Vop { op, dst, m, .. } = v;
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
        )
        .into())
    };
    let Some(kind) = kind(name, result_format(op)) else {
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
        return valu_lanes(w, i, Vop { m: bare, ..v });
    }
    valu_lanes(w, i, Vop { m: bare, ..v })?;
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
    fn modifiers_the_isa_does_not_allow_are_refused() {
        let refusal = |words: &[u32]| one(words, 0, 0, 0).map(|_| ()).unwrap_err();
        let refused = |words: &[u32], what: &[&str]| {
            let e = refusal(words);
            assert!(what.iter().all(|w| e.contains(w)), "{e}");
        };
        // neg and abs where LLVM rejects them: v_add_nc_u32_e64 v1, -v2, v3 and
        // v_cvt_f32_i32_e64 v1, |v2| (integer operands), and neg on source 1 of a
        // one-source instruction (v_cvt_f32_f64_e64).
        refused(&[0xd525_0001, 0x2002_0702], &["neg", "source 0", "v_add_nc_u32_e64"]);
        refused(&[0xd585_0101, 0x0000_0102], &["abs", "source 0", "v_cvt_f32_i32_e64"]);
        refused(&[0xd58f_0001, 0x4000_0102], &["neg", "source 1", "v_cvt_f32_f64_e64"]);
        // op_sel on an operand that is not 16 bits wide: source 0 of v_add_f32_e64, the
        // mask v_cmp_eq_f16_e64 writes; on v_cmp_eq_f16's sources it picks halves, and
        // on v_mad_u32_u16's 32-bit S2 (op_sel:[0,0,1,0], as LLVM assembles it) it
        // changes nothing.
        refused(&[0xd503_0801, 0x0002_0702], &["op_sel", "source 0", "v_add_f32_e64"]);
        refused(
            &[0xd402_4001, 0x0002_0702],
            &["op_sel", "destination", "v_cmp_eq_f16_e64"],
        );
        assert!(one(&[0xd402_0801, 0x0002_0702], 0, 0, 0).is_ok());
        assert_eq!(
            one(&[0xd659_2001, 0x0412_0702], 3, 4, 5).unwrap(),
            one(&[0xd659_0001, 0x0412_0702], 3, 4, 5).unwrap()
        );
        // clamp and omod where LLVM rejects them: v_cndmask_b32_e64 clamp,
        // v_pack_b32_f16 mul:2 (clamp it takes), v_dot2_f16_f16 clamp,
        // v_movrels_b32_e64 clamp.
        refused(&[0xd501_8001, 0x0002_0702], &["clamp", "v_cndmask_b32_e64"]);
        refused(&[0xd711_0001, 0x0802_0702], &["omod", "v_pack_b32_f16"]);
        assert!(one(&[0xd711_8001, 0x0002_0702], 0, 0, 0).is_ok());
        refused(&[0xd666_8001, 0x0412_0702], &["clamp", "v_dot2_f16_f16"]);
        refused(&[0xd5c3_8001, 0x0000_0102], &["clamp", "v_movrels_b32_e64"]);
        // DPP16: v_add_nc_u32_dpp v1, -v2, v3 quad_perm:[0,1,2,3].
        refused(&[0x4a02_06fa, 0xff10_e402], &["neg", "source 0", "DPP16"]);
        assert!(one(&[0x4a02_06fa, 0xff00_e402], 0, 0, 0).is_ok());
        // VOP3P: neg_lo on v_pk_add_u16 (LLVM assembles it; the operands are integers)
        // is refused; v_dot4_i32_iu8 neg_lo:[1,1,0] marks A and B signed, neg_hi there
        // is refused.
        refused(&[0xcc0a_4002, 0x3802_0d04], &["neg_lo", "v_pk_add_u16"]);
        assert!(one(&[0xcc16_4002, 0x7c22_0d04], 0, 0, 0).is_ok());
        refused(&[0xcc16_4102, 0x1c22_0d04], &["neg_hi", "v_dot4_i32_iu8"]);
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
