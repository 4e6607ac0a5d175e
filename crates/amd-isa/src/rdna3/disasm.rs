//! gfx11 instructions as text, in the syntax `llvm-objdump-19` prints: mnemonic,
//! operands (register ranges, special registers, inline constants, literals) and
//! modifiers.
//!
//! Which operands an opcode prints, in which order and how many registers each spans
//! comes from the generated sample table (`mnemonics.rs`): each opcode's sample was
//! disassembled by llvm-mc-19 with a distinct register number in every field, so a
//! register of the sample names the field it came from. The encodings' bit layouts
//! and LLVM's spelling of constants, counters and modifiers are here.

use std::fmt::{self, Write as _};

use super::decode::{Encoding, Inst};
use super::fields as fld;
use super::opcodes::op::sopk;
use crate::field::Bits;
use crate::text::{Width, bit_list, common_operand, inline_const, literal, reg_range, signed_hex};

/// An instruction in LLVM's syntax (see [`Inst::llvm`]).
pub struct Llvm<'a>(pub(crate) &'a Inst);

impl Inst {
    /// The instruction as `llvm-objdump-19` prints it (without address and encoding).
    pub fn llvm(&self) -> Llvm<'_> {
        Llvm(self)
    }

    /// The opcode's sample as llvm-mc-19 printed it (mnemonic and operands).
    pub(crate) fn sample(&self) -> Option<&'static str> {
        use super::mnemonics as m;
        let op = self.op as usize;
        let table: &[&str] = match self.enc {
            Encoding::Sop2 => &m::SOP2,
            Encoding::Sopk => &m::SOPK,
            Encoding::Sop1 => &m::SOP1,
            Encoding::Sopc => &m::SOPC,
            Encoding::Sopp => &m::SOPP,
            Encoding::Smem => &m::SMEM,
            Encoding::Vop1 => &m::VOP1,
            Encoding::Vop2 => &m::VOP2,
            Encoding::Vopc => &m::VOPC,
            Encoding::Vop3 => &m::VOP3,
            Encoding::Vop3p => return m::VOP3P.get(op & 0x7f).copied().filter(|n| !n.is_empty()),
            Encoding::Ds => &m::DS,
            Encoding::Mubuf => &m::MUBUF,
            Encoding::Mtbuf => &m::MTBUF,
            Encoding::Flat => {
                let iw = self.words();
                if fld::flat::SEG.matches(&iw) {
                    &m::FLAT
                } else if fld::scratch::SEG.matches(&iw) {
                    &m::SCRATCH
                } else {
                    &m::GLOBAL
                }
            }
            Encoding::Vopd => return None,
        };
        table.get(op).copied().filter(|n| !n.is_empty())
    }
}

/// One operand of a sample: a register range (class `v` or `s`, first register,
/// count) or other text (an implicit register, a placeholder).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    Reg { vgpr: bool, first: u32, count: u32 },
    Text(&'a str),
}

fn parse_tok(t: &str) -> Tok<'_> {
    let reg = |class: char| -> Option<Tok<'_>> {
        let rest = t.strip_prefix(class)?;
        let vgpr = class == 'v';
        if let Some(range) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            let (a, b) = range.split_once(':')?;
            let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
            return Some(Tok::Reg {
                vgpr,
                first: a,
                count: b.checked_sub(a)? + 1,
            });
        }
        Some(Tok::Reg {
            vgpr,
            first: rest.parse().ok()?,
            count: 1,
        })
    };
    reg('v').or_else(|| reg('s')).unwrap_or(Tok::Text(t))
}

/// A sample split into its mnemonic and operand list (modifiers after the operands
/// are not operands).
fn split(sample: &str) -> (&str, Vec<Tok<'_>>) {
    let (mnem, rest) = sample.split_once(' ').unwrap_or((sample, ""));
    let mut toks = Vec::new();
    let mut rest = rest;
    while !rest.is_empty() {
        // One operand up to the next ", " outside parentheses (`hwreg(16, 0, 1)` is one).
        let mut depth = 0;
        let mut end = rest.len();
        for (k, c) in rest.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 && rest[k..].starts_with(", ") => {
                    end = k;
                    break;
                }
                _ => {}
            }
        }
        let t = &rest[..end];
        toks.push(parse_tok(if t.contains('(') {
            t
        } else {
            t.split(' ').next().unwrap_or(t)
        }));
        rest = rest[end..].trim_start_matches(',').trim_start();
    }
    (mnem, toks)
}

/// The scalar operand `n` (of the 9-bit source space) spanning `count` registers.
pub(crate) fn scalar_reg(out: &mut String, n: u32, count: u32) {
    let range = |out: &mut String, prefix: &str, first: u32| reg_range(out, prefix, first, count);
    match n {
        0..=105 => range(out, "s", n),
        106 => out.push_str(if count == 1 { "vcc_lo" } else { "vcc" }),
        107 => out.push_str("vcc_hi"),
        108..=123 => range(out, "ttmp", n - 108),
        124 => out.push_str("null"),
        125 => out.push_str("m0"),
        126 => out.push_str(if count == 1 { "exec_lo" } else { "exec" }),
        127 => out.push_str("exec_hi"),
        _ => common_operand(out, n, count),
    }
}

/// Whether an operand of `mnem` carries 16-bit values (its last type is 16-bit).
fn is_16bit(mnem: &str) -> bool {
    let base = mnem
        .trim_end_matches("_e32")
        .trim_end_matches("_e64")
        .trim_end_matches("_dpp");
    ["_f16", "_i16", "_u16", "_b16"].iter().any(|s| base.ends_with(s))
}

/// A source operand of the 9-bit space.
pub(crate) fn source(out: &mut String, n: u32, count: u32, lit: Option<u32>, mnem: &str) {
    let w = if count >= 2 {
        if mnem.contains("_f64") { Width::F64 } else { Width::I64 }
    } else if is_16bit(mnem) {
        Width::B16
    } else {
        Width::B32
    };
    if n == 255 {
        out.push_str(&literal(lit.unwrap_or(0), w));
    } else if let Some(c) = inline_const(n, w) {
        out.push_str(&c);
    } else {
        scalar_reg(out, n, count);
    }
}

pub(crate) fn vgpr(out: &mut String, n: u32, count: u32) {
    scalar_reg(out, 256 + (n & 0xff), count);
}

impl fmt::Display for Llvm<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        match render(self.0, &mut s) {
            Some(()) => f.write_str(&s),
            None => write!(f, "{:?} op {:#x}", self.0.enc, self.0.op),
        }
    }
}

/// The instruction's text; `None` where LLVM knows no instruction of this opcode.
fn render(i: &Inst, out: &mut String) -> Option<()> {
    if i.enc == Encoding::Vopd {
        return vopd(i, out);
    }
    let sample = i.sample()?;
    let (mnem, toks) = split(sample);
    let iw = i.words();
    let v = |b: Bits| b.get(&iw);
    if mnem == "v_mov_b16_e32" && i.enc == Encoding::Vop1 && i.dpp.is_none() {
        return true16_mov(i, mnem, out);
    }
    match i.enc {
        Encoding::Sopp => return sopp(i, mnem, !toks.is_empty(), out),
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if i.dpp.is_some() => {
            out.push_str(mnem.strip_suffix("_e32").unwrap_or(mnem));
            out.push_str("_dpp");
        }
        Encoding::Vop3 if i.dpp.is_some() => {
            out.push_str(mnem.strip_suffix("_e64").unwrap_or(mnem));
            out.push_str("_e64_dpp");
        }
        _ => out.push_str(mnem),
    }
    let mut ops: Vec<String> = Vec::with_capacity(toks.len());
    for t in &toks {
        let mut o = String::new();
        match (i.enc, *t) {
            (Encoding::Sop2 | Encoding::Sop1 | Encoding::Sopk, Tok::Reg { first: 4, count, .. }) => {
                scalar_reg(&mut o, v(fld::sop2::SDST.0), count)
            }
            (Encoding::Sop2 | Encoding::Sop1 | Encoding::Sopc, Tok::Reg { first: 2, count, .. }) => {
                source(&mut o, v(fld::sop2::SSRC0.0), count, i.literal, mnem)
            }
            (Encoding::Sop2, Tok::Reg { first: 6, count, .. }) | (Encoding::Sopc, Tok::Reg { first: 4, count, .. }) => {
                source(&mut o, v(fld::sop2::SSRC1.0), count, i.literal, mnem)
            }
            (Encoding::Sopk, Tok::Text(t)) if t.starts_with("hwreg(") => {
                super::hwreg::hwreg_text(&mut o, v(fld::sopk::SIMM16), super::hwreg::Regs::Gfx11);
            }
            (Encoding::Sopk, Tok::Text(_)) => {
                let imm = match i.literal {
                    Some(l) if i.op == sopk::S_SETREG_IMM32_B32 => l,
                    _ => v(fld::sopk::SIMM16),
                };
                let _ = write!(o, "{imm:#x}");
            }
            (Encoding::Smem, Tok::Reg { first: 4, count, .. }) => scalar_reg(&mut o, v(fld::smem::SDATA.0), count),
            (Encoding::Smem, Tok::Reg { first: 2, count, .. }) => {
                scalar_reg(&mut o, fld::smem::SBASE.operand(&iw).into(), count)
            }
            (Encoding::Smem, Tok::Text("null")) => {
                let soff = v(fld::smem::SOFFSET.0);
                let off = i64::from(fld::smem::OFFSET.signed(&iw));
                match (soff, off) {
                    (124, 0) => o.push_str("null"),
                    (124, off) => o.push_str(&signed_hex(off)),
                    (s, 0) => scalar_reg(&mut o, s, 1),
                    (s, off) => {
                        scalar_reg(&mut o, s, 1);
                        let _ = write!(o, " offset:{}", signed_hex(off));
                    }
                }
            }
            (Encoding::Vop1 | Encoding::Vop2, Tok::Reg { first: 2, count, vgpr }) => {
                // VOP1's VDST, or (v_readfirstlane) a scalar destination in its place.
                if vgpr {
                    vgpr_field(&mut o, v(fld::vop2::VDST.0), count)
                } else {
                    scalar_reg(&mut o, v(fld::vop1_sdst::VDST.0), count)
                }
            }
            (Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc, Tok::Reg { first: 4, count, .. }) => match i.dpp {
                Some(_) => {
                    use fld::vop2_dpp16::*;
                    let dw = i.dpp_words();
                    let dpp16 = i.dpp8.is_none();
                    let mut r = String::new();
                    vgpr(&mut r, VSRC0.0.get(&dw), count);
                    o.push_str(&modified(
                        r,
                        dpp16 && SRC0_NEG.is_set(&dw),
                        dpp16 && SRC0_ABS.is_set(&dw),
                    ));
                }
                None => source(&mut o, v(fld::vop2::SRC0.0), count, i.literal, mnem),
            },
            (Encoding::Vop2 | Encoding::Vopc, Tok::Reg { first: 6, count, .. }) => {
                use fld::vop2_dpp16::*;
                let dw = i.dpp_words();
                let mut r = String::new();
                vgpr(&mut r, v(fld::vop2::VSRC1.0), count);
                match i.dpp {
                    Some(_) if i.dpp8.is_none() => o.push_str(&modified(r, SRC1_NEG.is_set(&dw), SRC1_ABS.is_set(&dw))),
                    _ => o.push_str(&r),
                }
            }
            // fmaak/fmamk's constant K: LLVM prints it in hex whatever its value.
            (Encoding::Vop2, Tok::Text(t)) if t.starts_with("0x") => {
                let k = i.literal.unwrap_or(0);
                let _ = write!(o, "{:#x}", if is_16bit(mnem) { k & 0xffff } else { k });
            }
            (Encoding::Vop3 | Encoding::Vop3p, Tok::Reg { first: 2, count, vgpr }) => {
                // VDST, or (v_cmp, v_readlane) a scalar destination in its place.
                if vgpr {
                    vgpr_field(&mut o, v(fld::vop3::VDST.0), count)
                } else {
                    scalar_reg(&mut o, v(fld::vop3_sdst::VDST.0), count)
                }
            }
            (Encoding::Vop3, Tok::Reg { first: 0, count, .. }) => scalar_reg(&mut o, v(fld::vop3sd::SDST.0), count),
            (
                Encoding::Vop3 | Encoding::Vop3p,
                Tok::Reg {
                    first: f @ (4 | 6 | 8),
                    count,
                    ..
                },
            ) => {
                use fld::vop3::*;
                let k = (f - 4) / 2;
                let mut r = String::new();
                match i.dpp {
                    // A DPP form's first source: the VGPR its DPP dword names.
                    Some(_) if k == 0 => vgpr(&mut r, fld::vop2_dpp16::VSRC0.0.get(&i.dpp_words()), count),
                    _ => source(&mut r, v([SRC0, SRC1, SRC2][k as usize].0), count, i.literal, mnem),
                }
                let sd = is_vop3sd(&toks);
                // The mixed-precision FMAs take VOP3's source modifiers: NEG (VOP3P's
                // NEG_LO) as neg, NEG_HI (where VOP3 has ABS) as abs.
                let mix = i.enc == Encoding::Vop3p && mnem.starts_with("v_fma_mix");
                let vop3 = i.enc == Encoding::Vop3 || mix;
                let neg = v(NEG) >> k & 1 == 1;
                let abs = vop3 && !sd && v(ABS) >> k & 1 == 1;
                o.push_str(&modified(r, neg && vop3, abs));
            }
            (Encoding::Ds, Tok::Reg { first, count, .. }) => {
                use fld::ds::*;
                let n = match first {
                    2 => ADDR,
                    4 => DATA0,
                    6 => DATA1,
                    _ => VDST,
                };
                vgpr(&mut o, v(n.0), count);
            }
            (Encoding::Flat, Tok::Reg { first: 2, count, .. }) => {
                use fld::global::*;
                let saddr = v(SADDR.0);
                if fld::scratch::SEG.matches(&iw) && !SVE.is_set(&iw) {
                    o.push_str("off");
                } else {
                    let count = if SEG.matches(&iw) && saddr != 124 && saddr != 125 {
                        1
                    } else {
                        count
                    };
                    vgpr(&mut o, v(ADDR.0), count);
                }
            }
            // Stores' samples have data in v0 (LLVM took the first sample).
            (
                Encoding::Flat,
                Tok::Reg {
                    first: 0 | 4, count, ..
                },
            ) => vgpr(&mut o, v(fld::flat::DATA.0), count),
            (Encoding::Flat, Tok::Reg { count, .. }) => vgpr(&mut o, v(fld::flat::VDST.0), count),
            (Encoding::Flat, Tok::Text("off")) => {
                let saddr = v(fld::flat::SADDR.0);
                if saddr == 124 || saddr == 125 {
                    o.push_str("off");
                } else {
                    let count = if fld::scratch::SEG.matches(&iw) { 1 } else { 2 };
                    scalar_reg(&mut o, saddr, count);
                }
            }
            // Buffers: data v4, address "off", resource s[8:11], soffset "0" in the samples.
            // TFE adds a dword to the data (LLVM counts it for stores too).
            (Encoding::Mubuf | Encoding::Mtbuf, Tok::Reg { vgpr: true, count, .. }) => {
                vgpr(&mut o, v(fld::mubuf::VDATA.0), count + v(fld::mubuf::TFE))
            }
            (Encoding::Mubuf | Encoding::Mtbuf, Tok::Reg { vgpr: false, count, .. }) => {
                scalar_reg(&mut o, fld::mubuf::SRSRC.operand(&iw).into(), count)
            }
            (Encoding::Mubuf | Encoding::Mtbuf, Tok::Text("off")) => {
                use fld::mubuf::*;
                match (IDXEN.is_set(&iw), OFFEN.is_set(&iw)) {
                    (false, false) => o.push_str("off"),
                    (true, true) => vgpr(&mut o, v(VADDR.0), 2),
                    _ => vgpr(&mut o, v(VADDR.0), 1),
                }
            }
            (Encoding::Mubuf | Encoding::Mtbuf, Tok::Text(_)) => {
                source(&mut o, v(fld::mubuf::SOFFSET.0), 1, None, "b32")
            }
            // `s_sendmsg_rtn_*`'s message, from SSRC0 (the sample's is one id).
            (Encoding::Sop1, Tok::Text(t)) if t.starts_with("sendmsg(") => {
                o.push_str(&crate::text::sendmsg_rtn(v(fld::sop1::SSRC0.0), false))
            }
            (_, Tok::Text(t)) => o.push_str(t),
            (_, Tok::Reg { .. }) => return None,
        }
        ops.push(o);
    }
    // A returning atomic (glc) prints its destination first.
    if i.enc == Encoding::Flat && mnem.contains("_atomic_") && fld::flat::GLC.is_set(&iw) {
        let data = toks.iter().find_map(|t| match t {
            Tok::Reg {
                first: 0 | 4, count, ..
            } => Some(*count),
            _ => None,
        });
        let count = data.map_or(1, |c| if mnem.contains("cmpswap") { c / 2 } else { c });
        let mut d = String::new();
        vgpr(&mut d, v(fld::flat::VDST.0), count.max(1));
        ops.insert(0, d);
    }
    if !ops.is_empty() {
        out.push(' ');
        out.push_str(&ops.join(", "));
    }
    modifiers(i, mnem, &toks, out);
    Some(())
}

fn vgpr_field(out: &mut String, n: u32, count: u32) {
    vgpr(out, n, count)
}

/// Whether a VOP3 sample has a scalar carry/condition destination (VOP3SD).
fn is_vop3sd(toks: &[Tok<'_>]) -> bool {
    toks.iter().any(|t| {
        matches!(
            t,
            Tok::Reg {
                vgpr: false,
                first: 0,
                ..
            }
        )
    })
}

fn modified(r: String, neg: bool, abs: bool) -> String {
    match (neg, abs) {
        (false, false) => r,
        (true, false) => format!("-{r}"),
        (false, true) => format!("|{r}|"),
        (true, true) => format!("-|{r}|"),
    }
}

/// Modifiers after the operands.
fn modifiers(i: &Inst, mnem: &str, toks: &[Tok<'_>], out: &mut String) {
    let iw = i.words();
    let v = |b: Bits| b.get(&iw);
    let srcs = toks
        .iter()
        .filter(|t| matches!(t, Tok::Reg { first: 4 | 6 | 8, .. }))
        .count();
    match i.enc {
        Encoding::Smem => {
            flag(out, v(fld::smem::GLC), " glc");
            flag(out, v(fld::smem::DLC), " dlc");
        }
        Encoding::Vop3 => {
            use fld::vop3::*;
            let sd = is_vop3sd(toks);
            // OPSEL: a bit per source, then the destination's (bit 3).
            let opsel = v(OPSEL);
            if !sd && opsel != 0 {
                let _ = write!(
                    out,
                    " op_sel:{}",
                    bit_list((opsel & 7) | (opsel >> 3) << srcs, srcs + 1)
                );
            }
            flag(out, v(CLMP), " clamp");
            match v(OMOD) {
                1 => out.push_str(" mul:2"),
                2 => out.push_str(" mul:4"),
                3 => out.push_str(" div:2"),
                _ => {}
            }
            if i.dpp.is_some() {
                dpp(i, out);
            }
        }
        Encoding::Vop3p => {
            let f = i.vop3p();
            let ([op_sel, op_sel_hi], [neg_lo, neg_hi]) = (f.op_sel, f.neg);
            let mask = (1 << srcs) - 1;
            if op_sel & mask != 0 {
                let _ = write!(out, " op_sel:{}", bit_list(op_sel, srcs));
            }
            // op_sel_hi is all ones unless printed; the mixed-precision FMAs' is zeros.
            let default = if mnem.starts_with("v_fma_mix") { 0 } else { mask };
            if op_sel_hi & mask != default {
                let _ = write!(out, " op_sel_hi:{}", bit_list(op_sel_hi, srcs));
            }
            // (The mixed-precision FMAs print theirs on the sources.)
            let mix = mnem.starts_with("v_fma_mix");
            if !mix && neg_lo & mask != 0 {
                let _ = write!(out, " neg_lo:{}", bit_list(neg_lo, srcs));
            }
            if !mix && neg_hi & mask != 0 {
                let _ = write!(out, " neg_hi:{}", bit_list(neg_hi, srcs));
            }
            flag(out, f.clamp.into(), " clamp");
        }
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if i.dpp.is_some() => dpp(i, out),
        Encoding::Ds => {
            let (o0, o1) = (v(fld::ds::OFFSET0), v(fld::ds::OFFSET1));
            if mnem.contains("2addr") {
                if o0 != 0 {
                    let _ = write!(out, " offset0:{o0}");
                }
                if o1 != 0 {
                    let _ = write!(out, " offset1:{o1}");
                }
            } else if o0 | o1 << 8 != 0 {
                let _ = write!(out, " offset:{}", o0 | o1 << 8);
            }
            flag(out, v(fld::ds::GDS), " gds");
        }
        Encoding::Mubuf | Encoding::Mtbuf => {
            use fld::mubuf::*;
            if i.enc == Encoding::Mtbuf {
                let f = v(fld::mtbuf::FORMAT);
                if f != 1 {
                    match super::buffer::FORMATS.get(f as usize) {
                        Some(name) => {
                            let _ = write!(out, " format:[{name}]");
                        }
                        None => {
                            let _ = write!(out, " format:{f}");
                        }
                    }
                }
            }
            flag(out, v(IDXEN), " idxen");
            flag(out, v(OFFEN), " offen");
            if v(OFFSET) != 0 {
                let _ = write!(out, " offset:{}", v(OFFSET));
            }
            flag(out, v(GLC), " glc");
            flag(out, v(SLC), " slc");
            flag(out, v(DLC), " dlc");
            flag(out, v(TFE), " tfe");
        }
        Encoding::Flat => {
            use fld::flat::*;
            // LLVM prints FLAT's offset as 12 bits unsigned, GLOBAL's and
            // SCRATCH's as 13 bits signed.
            let off = if SEG.matches(&iw) {
                i64::from(v(OFFSET) & 0xfff)
            } else {
                i64::from(OFFSET.signed(&iw))
            };
            if off != 0 {
                let _ = write!(out, " offset:{off}");
            }
            flag(out, v(GLC), " glc");
            flag(out, v(SLC), " slc");
            flag(out, v(DLC), " dlc");
        }
        _ => {}
    }
}

fn flag(out: &mut String, bit: u32, text: &str) {
    if bit & 1 == 1 {
        out.push_str(text);
    }
}

/// The DPP16 or DPP8 controls of a VOP1/VOP2/VOPC instruction.
fn dpp(i: &Inst, out: &mut String) {
    let dw = i.dpp_words();
    if let Some(fi) = i.dpp8 {
        use fld::vop2_dpp8::*;
        let sel: Vec<String> = [
            LANE_SEL_0, LANE_SEL_1, LANE_SEL_2, LANE_SEL_3, LANE_SEL_4, LANE_SEL_5, LANE_SEL_6, LANE_SEL_7,
        ]
        .iter()
        .map(|f| f.get(&dw).to_string())
        .collect();
        let _ = write!(out, " dpp8:[{}]", sel.join(","));
        if fi {
            out.push_str(" fi:1");
        }
        return;
    }
    use fld::vop2_dpp16::{BANK_MASK, BC, DPP, FI, ROW_MASK};
    let ctrl = DPP.get(&dw);
    use super::crosslane::dpp_ctrl::*;
    let _ = match ctrl {
        QUAD_PERM_FIRST..=QUAD_PERM_LAST => write!(
            out,
            " quad_perm:[{},{},{},{}]",
            ctrl & 3,
            (ctrl >> 2) & 3,
            (ctrl >> 4) & 3,
            (ctrl >> 6) & 3
        ),
        ROW_SHL_FIRST..=ROW_SHL_LAST => write!(out, " row_shl:{}", ctrl & 0xf),
        ROW_SHR_FIRST..=ROW_SHR_LAST => write!(out, " row_shr:{}", ctrl & 0xf),
        ROW_ROR_FIRST..=ROW_ROR_LAST => write!(out, " row_ror:{}", ctrl & 0xf),
        ROW_MIRROR => write!(out, " row_mirror"),
        ROW_HALF_MIRROR => write!(out, " row_half_mirror"),
        ROW_SHARE_FIRST..=ROW_SHARE_LAST => write!(out, " row_share:{}", ctrl & 0xf),
        ROW_XMASK_FIRST..=ROW_XMASK_LAST => write!(out, " row_xmask:{}", ctrl & 0xf),
        _ => write!(out, " dpp_ctrl:{ctrl:#x}"),
    };
    let _ = write!(
        out,
        " row_mask:{:#x} bank_mask:{:#x}",
        ROW_MASK.get(&dw),
        BANK_MASK.get(&dw)
    );
    if BC.is_set(&dw) {
        out.push_str(" bound_ctrl:1");
    }
    if FI.is_set(&dw) {
        out.push_str(" fi:1");
    }
}

/// Program control: counters, delays, messages and branch offsets as LLVM spells them.
fn sopp(i: &Inst, mnem: &str, has_operand: bool, out: &mut String) -> Option<()> {
    out.push_str(mnem);
    if !has_operand {
        return Some(());
    }
    let imm = fld::sopp::SIMM16.get(&i.words());
    out.push(' ');
    match mnem {
        "s_waitcnt" => {
            let (exp, lgkm, vm) = (imm & 7, (imm >> 4) & 0x3f, (imm >> 10) & 0x3f);
            let mut parts = Vec::new();
            if vm != 0x3f {
                parts.push(format!("vmcnt({vm})"));
            }
            if exp != 7 {
                parts.push(format!("expcnt({exp})"));
            }
            if lgkm != 0x3f {
                parts.push(format!("lgkmcnt({lgkm})"));
            }
            if parts.is_empty() {
                parts = vec![
                    format!("vmcnt({vm})"),
                    format!("expcnt({exp})"),
                    format!("lgkmcnt({lgkm})"),
                ];
            }
            out.push_str(&parts.join(" "));
        }
        "s_delay_alu" => {
            const ID: [&str; 12] = [
                "NO_DEP",
                "VALU_DEP_1",
                "VALU_DEP_2",
                "VALU_DEP_3",
                "VALU_DEP_4",
                "TRANS32_DEP_1",
                "TRANS32_DEP_2",
                "TRANS32_DEP_3",
                "FMA_ACCUM_CYCLE_1",
                "SALU_CYCLE_1",
                "SALU_CYCLE_2",
                "SALU_CYCLE_3",
            ];
            const SKIP: [&str; 6] = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"];
            let (id0, skip, id1) = (imm & 0xf, (imm >> 4) & 7, (imm >> 7) & 0xf);
            let mut parts = Vec::new();
            if id0 != 0 {
                parts.push(format!("instid0({})", ID.get(id0 as usize)?));
            }
            if skip != 0 {
                parts.push(format!("instskip({})", SKIP.get(skip as usize)?));
            }
            if id1 != 0 {
                parts.push(format!("instid1({})", ID.get(id1 as usize)?));
            }
            if parts.is_empty() {
                out.push('0');
            } else {
                out.push_str(&parts.join(" | "));
            }
        }
        "s_sendmsg" | "s_sendmsghalt" => {
            use super::salu::msg;
            let name = match imm {
                msg::MSG_INTERRUPT => Some("MSG_INTERRUPT"),
                msg::MSG_HS_TESSFACTOR => Some("MSG_HS_TESSFACTOR"),
                msg::MSG_DEALLOC_VGPRS => Some("MSG_DEALLOC_VGPRS"),
                _ => None,
            };
            match name {
                Some(n) => {
                    let _ = write!(out, "sendmsg({n})");
                }
                None => {
                    let _ = write!(out, "sendmsg({}, {}, {})", imm & 0xff, (imm >> 8) & 7, (imm >> 11) & 3);
                }
            }
        }
        "s_waitcnt_depctr" => out.push_str(&depctr(imm)),
        "s_clause" | "s_set_inst_prefetch_distance" => {
            let _ = write!(out, "{imm:#x}");
        }
        m if m.starts_with("s_branch") || m.starts_with("s_cbranch") => {
            let _ = write!(out, "{imm}");
        }
        _ if imm <= 64 => {
            let _ = write!(out, "{imm}");
        }
        _ => {
            let _ = write!(out, "{imm:#x}");
        }
    }
    Some(())
}

/// `v_mov_b16_e32` with LLVM 19's true16 operands: an 8-bit VGPR field is the
/// register (bits 6:0) and its half (bit 7: `.h`); a constant is a 16-bit integer
/// (the float inline constants as their f16 bits).
fn true16_mov(i: &Inst, mnem: &str, out: &mut String) -> Option<()> {
    let iw = i.words();
    let half = |f: u32| format!("v{}.{}", f & 0x7f, if f & 0x80 != 0 { 'h' } else { 'l' });
    let src = fld::vop1::SRC0.0.get(&iw);
    let text = match src {
        256..=511 => half(src - 256),
        240..=248 => {
            const F16: [u32; 9] = [0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118];
            format!("{:#x}", F16[(src - 240) as usize])
        }
        255 => {
            let l = i.literal.unwrap_or(0) & 0xffff;
            let v = l as u16 as i16;
            if (-16..=64).contains(&v) {
                v.to_string()
            } else {
                format!("{l:#x}")
            }
        }
        _ => {
            let mut o = String::new();
            source(&mut o, src, 1, i.literal, mnem);
            o
        }
    };
    let _ = write!(out, "{mnem} {}, {text}", half(fld::vop1::VDST.0.get(&iw)));
    Some(())
}

/// `s_waitcnt_depctr`'s (gfx12: `s_wait_alu`'s) fields as LLVM prints them: those that
/// differ from their defaults, or every one where none does; hex where bits outside
/// the fields are set.
pub(crate) fn depctr(imm: u32) -> String {
    // (name, shift, width, default), in LLVM's order.
    const FIELDS: [(&str, u32, u32, u32); 7] = [
        ("depctr_hold_cnt", 7, 1, 1),
        ("depctr_sa_sdst", 0, 1, 1),
        ("depctr_va_vdst", 12, 4, 0xf),
        ("depctr_va_sdst", 9, 3, 7),
        ("depctr_va_ssrc", 8, 1, 1),
        ("depctr_va_vcc", 1, 1, 1),
        ("depctr_vm_vsrc", 2, 3, 7),
    ];
    if imm & !0xff9f != 0 {
        return format!("{imm:#x}");
    }
    let value = |shift: u32, width: u32| (imm >> shift) & ((1 << width) - 1);
    let any_set = FIELDS.iter().any(|&(_, sh, w, d)| value(sh, w) != d);
    let parts: Vec<String> = FIELDS
        .iter()
        .filter(|&&(_, sh, w, d)| !any_set || value(sh, w) != d)
        .map(|&(name, sh, w, _)| format!("{name}({})", value(sh, w)))
        .collect();
    parts.join(" ")
}

/// A VOPD pair: `x :: y`, each half with its own operands.
fn vopd(i: &Inst, out: &mut String) -> Option<()> {
    use super::mnemonics as m;
    use fld::vopd::*;
    let iw = i.words();
    let v = |b: Bits| b.get(&iw);
    let x = *m::VOPD_X.get(v(OPX) as usize).filter(|n| !n.is_empty())?;
    let y = *m::VOPD_Y.get(v(OPY) as usize).filter(|n| !n.is_empty())?;
    let vdstx = VDSTX.index(&iw);
    let vdsty = VDSTY.index(&iw, vdstx) as u32;
    let vdstx = vdstx as u32;
    let half = |name: &str, dst: u32, src0: u32, vsrc1: u32| -> String {
        let mut s = format!("{name} ");
        vgpr(&mut s, dst, 1);
        s.push_str(", ");
        source(&mut s, src0, 1, i.literal, name);
        // fmaak/fmamk's constant K, in hex whatever its value (as LLVM prints it).
        let lit = format!("{:#x}", i.literal.unwrap_or(0));
        let mut v1 = String::new();
        vgpr(&mut v1, vsrc1, 1);
        match name {
            "v_dual_mov_b32" => {}
            "v_dual_fmaak_f32" => {
                let _ = write!(s, ", {v1}, {lit}");
            }
            "v_dual_fmamk_f32" => {
                let _ = write!(s, ", {lit}, {v1}");
            }
            _ => {
                let _ = write!(s, ", {v1}");
            }
        }
        s
    };
    out.push_str(&half(x, vdstx, v(SRCX0.0), v(VSRCX1.0)));
    out.push_str(" :: ");
    out.push_str(&half(y, vdsty, v(SRCY0.0), v(VSRCY1.0)));
    Some(())
}
