//! gfx940–gfx942 (CDNA3) instructions as text, in the syntax `llvm-objdump-19
//! --mcpu=gfx942` prints: mnemonic, operands (register ranges, AccVGPRs, gfx9's
//! special registers, inline constants, literals) and modifiers (SDWA and DPP, VOP3's
//! and VOP3P's, the matrix instructions' `cbsz`/`abid`/`blgp`, the memory encodings'
//! offsets and cache controls).
//!
//! Which operands an opcode has and how many registers each spans comes from AMD's
//! operand table (`generated/operands.rs`); the order LLVM prints them in, its
//! spelling of registers, constants, counters and modifiers, are here.

use std::fmt::{self, Write as _};

use super::decode::{Encoding, Ext, Inst};
use super::fields as fld;
use super::operands::{Field, Kind, Operand, operands};
use crate::field::{Bits, Words};
use crate::text::{Width, bit_list, common_operand, inline_const, literal, reg_range, signed_hex};

/// An instruction in LLVM's syntax (see [`Inst::llvm`]).
pub struct Llvm<'a>(&'a Inst);

impl Inst {
    /// The instruction as `llvm-objdump-19 --mcpu=gfx942` prints it (without address
    /// and encoding); an opcode the tables do not name prints as its encoding and
    /// number.
    pub fn llvm(&self) -> Llvm<'_> {
        Llvm(self)
    }

    /// The mnemonic as LLVM spells it, where the encoding has such an opcode: the
    /// ISA's name with LLVM's encoding suffix (`_e32`, `_e64`, `_sdwa`, `_dpp`) and
    /// its few renames.
    pub fn mnemonic(&self) -> Option<String> {
        let name = self.name()?;
        let base = name.trim_end_matches("_e32").trim_end_matches("_e64");
        Some(match self.enc {
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => match self.ext {
                Some(Ext::Sdwa) => format!("{base}_sdwa"),
                Some(Ext::Dpp) => format!("{base}_dpp"),
                None if NO_E32.contains(&base) => base.to_string(),
                None => format!("{base}_e32"),
            },
            // VOP3's own opcodes (from 0x1c0) have no other form to tell apart.
            Encoding::Vop3 if self.op >= VOP3_ONLY && !CARRY_OUT.contains(&base) => base.to_string(),
            Encoding::Vop3 => format!("{base}_e64"),
            Encoding::Vop3p => match base {
                "v_mad_mix_f32" => "v_fma_mix_f32".into(),
                "v_mad_mixlo_f16" => "v_fma_mixlo_f16".into(),
                "v_mad_mixhi_f16" => "v_fma_mixhi_f16".into(),
                "v_accvgpr_read" => "v_accvgpr_read_b32".into(),
                "v_accvgpr_write" => "v_accvgpr_write_b32".into(),
                _ => base.to_string(),
            },
            _ => name.to_string(),
        })
    }

    /// The instruction's dwords as the field constants read them.
    fn w(&self) -> &Words {
        &self.words
    }
}

/// The first VOP3 opcode that is no VOP1, VOP2 or VOPC opcode in its long form.
const VOP3_ONLY: u16 = 0x1c0;

/// VOP2's carry-out forms, which VOP3 lists apart (VOP3SD) and LLVM names `_e64`.
const CARRY_OUT: [&str; 6] = [
    "v_add_co_u32",
    "v_sub_co_u32",
    "v_subrev_co_u32",
    "v_addc_co_u32",
    "v_subb_co_u32",
    "v_subbrev_co_u32",
];

/// The 32-bit forms LLVM names without `_e32`.
const NO_E32: [&str; 9] = [
    "v_nop",
    "v_clrexcp",
    "v_readfirstlane_b32",
    "v_swap_b32",
    "v_accvgpr_mov_b32",
    "v_fmamk_f32",
    "v_fmaak_f32",
    "v_madmk_f16",
    "v_madak_f16",
];

/// The operand `n` of the 9-bit source space spanning `count` registers, with gfx9's
/// names for the special registers.
fn scalar_reg(out: &mut String, n: u32, count: u32) {
    let range = |out: &mut String, prefix: &str, first: u32| reg_range(out, prefix, first, count);
    let pair = |out: &mut String, name: &str, lo: bool| {
        if count == 1 {
            let _ = write!(out, "{name}_{}", if lo { "lo" } else { "hi" });
        } else {
            out.push_str(name);
        }
    };
    match n {
        0..=101 => range(out, "s", n),
        102 | 103 => pair(out, "flat_scratch", n == 102),
        104 | 105 => pair(out, "xnack_mask", n == 104),
        106 | 107 => pair(out, "vcc", n == 106),
        108..=123 => range(out, "ttmp", n - 108),
        124 => out.push_str("m0"),
        125 => out.push_str("null"),
        126 | 127 => pair(out, "exec", n == 126),
        _ => common_operand(out, n, count),
    }
}

/// A vector register range: VGPRs, or AccVGPRs where `acc`.
fn vreg(out: &mut String, index: u32, count: u32, acc: bool) {
    let prefix = if acc { "a" } else { "v" };
    if count == 1 {
        let _ = write!(out, "{prefix}{index}");
    } else {
        let _ = write!(out, "{prefix}[{index}:{}]", index + count - 1);
    }
}

/// How many registers an operand of `bits` spans.
fn regs(bits: u16) -> u32 {
    u32::from(bits).div_ceil(32).max(1)
}

/// A source operand of the 9-bit space: an inline constant or the literal (as LLVM
/// prints them for the operand's width), or a register (an AccVGPR where `acc`).
fn source(out: &mut String, n: u32, op: &Operand, mnem: &str, lit: Option<u32>, acc: bool) {
    let count = regs(op.bits);
    let w = if count >= 2 {
        if mnem.contains("_f64") { Width::F64 } else { Width::I64 }
    } else if op.bits == 16 {
        Width::B16
    } else {
        Width::B32
    };
    match n {
        // 1/(2π) as a 64-bit constant, integer or float.
        248 if count >= 2 => out.push_str("0.15915494309189532"),
        255 => out.push_str(&literal(lit.unwrap_or(0), w)),
        256..=511 if acc => vreg(out, n - 256, count, true),
        _ => match inline_const(n, w) {
            Some(c) => out.push_str(&c),
            None => scalar_reg(out, n, count),
        },
    }
}

impl fmt::Display for Llvm<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = self.0;
        let mut s = String::new();
        match i.mnemonic() {
            Some(mnem) => {
                render(i, &mnem, &mut s);
                f.write_str(&s)
            }
            None => {
                let n = usize::from(i.size.min(3));
                let words: Vec<String> = i.words[..n].iter().map(|w| format!("{w:08x}")).collect();
                write!(f, "{:?} op {:#x} [{}]", i.enc, i.op, words.join(" "))
            }
        }
    }
}

/// The operands of the instruction's opcode, by field.
struct Ops(&'static [Operand]);

impl Ops {
    fn get(&self, field: Field) -> Option<&'static Operand> {
        self.0.iter().find(|o| o.field == field)
    }
}

/// The instruction's text after its mnemonic `mnem`.
fn render(i: &Inst, mnem: &str, out: &mut String) {
    out.push_str(mnem);
    let ops = Ops(operands(i.enc, i.op));
    let mut args: Vec<String> = Vec::new();
    let mut mods = String::new();
    match i.enc {
        Encoding::Sopc if mnem == "s_set_gpr_idx_on" => {
            let w = i.w();
            let mut a = String::new();
            if let Some(op) = ops.get(Field::Ssrc0) {
                source(&mut a, fld::sopc::SSRC0.0.get(w), op, mnem, i.literal, false);
            }
            let mode = fld::sopc::SSRC1.0.get(w);
            // A mode with bits past the four indices is a number.
            let mode = if mode > 15 {
                format!("{mode:#x}")
            } else {
                format!("gpr_idx({})", gpr_idx(mode))
            };
            args.extend([a, mode]);
        }
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc => {
            let w = i.w();
            for (field, at) in [
                (Field::Sdst, fld::sop2::SDST.0),
                (Field::Ssrc0, fld::sop2::SSRC0.0),
                (Field::Ssrc1, fld::sop2::SSRC1.0),
            ] {
                if let Some(op) = ops.get(field) {
                    let mut a = String::new();
                    source(&mut a, at.get(w), op, mnem, i.literal, false);
                    args.push(a);
                }
            }
        }
        Encoding::Sopk => sopk(i, mnem, &ops, &mut args),
        Encoding::Sopp => sopp(i, mnem, &mut args),
        Encoding::Smem => smem(i, mnem, &ops, &mut args, &mut mods),
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => vop_short(i, mnem, &ops, &mut args, &mut mods),
        Encoding::Vop3 => vop3(i, mnem, &ops, &mut args, &mut mods),
        Encoding::Vop3p => vop3p(i, mnem, &ops, &mut args, &mut mods),
        Encoding::Ds => ds(i, mnem, &ops, &mut args, &mut mods),
        Encoding::Flat | Encoding::Global | Encoding::Scratch => flat(i, mnem, &ops, &mut args, &mut mods),
        Encoding::Mubuf | Encoding::Mtbuf => buffer(i, mnem, &ops, &mut args, &mut mods),
    }
    if !args.is_empty() {
        out.push(' ');
        out.push_str(&args.join(", "));
    }
    out.push_str(&mods);
}

/// The hardware register `s_getreg`/`s_setreg` name, as LLVM 19 spells gfx940's.
fn hwreg(imm: u32) -> String {
    const NAMES: [(u32, &str); 17] = [
        (1, "HW_REG_MODE"),
        (2, "HW_REG_STATUS"),
        (3, "HW_REG_TRAPSTS"),
        (4, "HW_REG_HW_ID"),
        (5, "HW_REG_GPR_ALLOC"),
        (6, "HW_REG_LDS_ALLOC"),
        (7, "HW_REG_IB_STS"),
        (15, "HW_REG_SH_MEM_BASES"),
        (16, "HW_REG_TBA_LO"),
        (17, "HW_REG_TBA_HI"),
        (18, "HW_REG_TMA_LO"),
        (19, "HW_REG_TMA_HI"),
        (20, "HW_REG_XCC_ID"),
        (21, "HW_REG_SQ_PERF_SNAPSHOT_DATA"),
        (22, "HW_REG_SQ_PERF_SNAPSHOT_DATA1"),
        (23, "HW_REG_SQ_PERF_SNAPSHOT_PC_LO"),
        (24, "HW_REG_SQ_PERF_SNAPSHOT_PC_HI"),
    ];
    let (id, offset, size) = (imm & 0x3f, (imm >> 6) & 0x1f, ((imm >> 11) & 0x1f) + 1);
    let name = NAMES
        .iter()
        .find(|&&(n, _)| n == id)
        .map_or_else(|| id.to_string(), |&(_, s)| s.to_string());
    if offset == 0 && size == 32 {
        format!("hwreg({name})")
    } else {
        format!("hwreg({name}, {offset}, {size})")
    }
}

fn sopk(i: &Inst, mnem: &str, ops: &Ops, args: &mut Vec<String>) {
    let w = i.w();
    let imm = fld::sopk::SIMM16.get(w);
    let mut sdst = String::new();
    if let Some(op) = ops.get(Field::Sdst) {
        source(&mut sdst, fld::sopk::SDST.0.get(w), op, mnem, None, false);
    }
    match mnem {
        "s_getreg_b32" => args.extend([sdst, hwreg(imm)]),
        "s_setreg_b32" => args.extend([hwreg(imm), sdst]),
        "s_setreg_imm32_b32" => args.extend([hwreg(imm), literal(i.literal.unwrap_or(0), Width::I64)]),
        // s_call_b64, s_cbranch_i_fork and the like: a register pair and a branch offset.
        _ if mnem == "s_call_b64" || mnem.starts_with("s_cbranch") => args.extend([sdst, (imm as u16).to_string()]),
        _ => {
            if ops.get(Field::Sdst).is_some() {
                args.push(sdst);
            }
            args.push(format!("{imm:#x}"));
        }
    }
}

/// `s_waitcnt`'s counters as LLVM prints them for gfx9: those below their maximum,
/// or all three where none is.
fn waitcnt(imm: u32) -> String {
    let vm = (imm & 0xf) | ((imm >> 14) & 3) << 4;
    let exp = (imm >> 4) & 7;
    let lgkm = (imm >> 8) & 0xf;
    let all = [("vmcnt", vm, 63), ("expcnt", exp, 7), ("lgkmcnt", lgkm, 15)];
    let waited: Vec<String> = all
        .iter()
        .filter(|&&(_, v, max)| v != max)
        .map(|&(n, v, _)| format!("{n}({v})"))
        .collect();
    if waited.is_empty() {
        all.iter()
            .map(|&(n, v, _)| format!("{n}({v})"))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        waited.join(" ")
    }
}

/// `s_sendmsg`'s message as LLVM 19 prints it for gfx940: by name where the message
/// takes the operation and stream its fields give (bits past them are not looked
/// at), else as three numbers where those fields are all its bits, else as one.
fn sendmsg(imm: u32) -> String {
    const SIMPLE: [(u32, &str); 8] = [
        (1, "MSG_INTERRUPT"),
        (4, "MSG_SAVEWAVE"),
        (5, "MSG_STALL_WAVE_GEN"),
        (6, "MSG_HALT_WAVES"),
        (7, "MSG_ORDERED_PS_DONE"),
        (8, "MSG_EARLY_PRIM_DEALLOC"),
        (9, "MSG_GS_ALLOC_REQ"),
        (10, "MSG_GET_DOORBELL"),
    ];
    const GS_OPS: [&str; 4] = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];
    const SYSMSG_OPS: [&str; 4] = [
        "SYSMSG_OP_ECC_ERR_INTERRUPT",
        "SYSMSG_OP_REG_RD",
        "SYSMSG_OP_HOST_TRAP_ACK",
        "SYSMSG_OP_TTRACE_PC",
    ];
    let (id, op, stream) = (imm & 0xf, (imm >> 4) & 7, (imm >> 8) & 3);
    let gs = |name: &str| {
        (1..=3)
            .contains(&op)
            .then(|| format!("sendmsg({name}, {}, {stream})", GS_OPS[op as usize]))
    };
    let named = match id {
        2 => gs("MSG_GS"),
        3 if op == 0 && stream == 0 => Some("sendmsg(MSG_GS_DONE, GS_OP_NOP)".to_string()),
        3 => gs("MSG_GS_DONE"),
        15 if (1..=4).contains(&op) && stream == 0 => {
            Some(format!("sendmsg(MSG_SYSMSG, {})", SYSMSG_OPS[op as usize - 1]))
        }
        _ => SIMPLE
            .iter()
            .find(|&&(n, _)| n == id && op == 0 && stream == 0)
            .map(|(_, name)| format!("sendmsg({name})")),
    };
    named.unwrap_or_else(|| {
        if imm >> 10 == 0 && imm & 0x88 == 0 {
            format!("sendmsg({id}, {op}, {stream})")
        } else {
            imm.to_string()
        }
    })
}

/// A number as LLVM prints most immediates: an inline constant (0 to 64) in decimal,
/// any other in hex.
fn imm_text(imm: u32) -> String {
    if imm <= 64 {
        imm.to_string()
    } else {
        format!("{imm:#x}")
    }
}

fn sopp(i: &Inst, mnem: &str, args: &mut Vec<String>) {
    let imm = fld::sopp::SIMM16.get(i.w());
    let text = match mnem {
        "s_endpgm" if imm == 0 => return,
        "s_endpgm" => imm.to_string(),
        "s_barrier"
        | "s_wakeup"
        | "s_icache_inv"
        | "s_endpgm_saved"
        | "s_ttracedata"
        | "s_set_gpr_idx_off"
        | "s_endpgm_ordered_ps_done" => return,
        "s_waitcnt" => waitcnt(imm),
        "s_sendmsg" | "s_sendmsghalt" => sendmsg(imm),
        "s_set_gpr_idx_mode" if imm > 15 => format!("{imm:#x}"),
        "s_set_gpr_idx_mode" => format!("gpr_idx({})", gpr_idx(imm)),
        // A number that is an inline constant in decimal, others in hex.
        "s_setkill" | "s_sethalt" | "s_setprio" | "s_sleep" | "s_nop" | "s_trap" | "s_incperflevel"
        | "s_decperflevel" => imm_text(imm),
        "s_ttracedata_imm" | "s_round_mode" | "s_denorm_mode" => format!("{imm:#x}"),
        // Branches: the offset in dwords, unsigned, as llvm-objdump prints it.
        _ => imm.to_string(),
    };
    args.push(text);
}

/// `s_set_gpr_idx_*`'s index modes (`SRC0,DST`).
fn gpr_idx(mode: u32) -> String {
    let names = ["SRC0", "SRC1", "SRC2", "DST"];
    (0..4)
        .filter(|b| mode >> b & 1 != 0)
        .map(|b| names[b])
        .collect::<Vec<_>>()
        .join(",")
}

fn smem(i: &Inst, mnem: &str, ops: &Ops, args: &mut Vec<String>, mods: &mut String) {
    let w = i.w();
    let reg = |field: Field, n: u32| {
        let mut s = String::new();
        let bits = ops.get(field).map_or(32, |o| o.bits);
        scalar_reg(&mut s, n, regs(bits));
        s
    };
    if mnem.starts_with("s_atc_probe") {
        // The probe's SDATA field is a number (the access's kind), not a register.
        args.push(imm_text(fld::smem::SDATA.0.get(w)));
    } else if ops.get(Field::Sdata).is_some() {
        args.push(reg(Field::Sdata, fld::smem::SDATA.0.get(w)));
    }
    if ops.get(Field::Sbase).is_some() {
        args.push(reg(Field::Sbase, u32::from(fld::smem::SBASE.operand(w))));
    }
    if ops.get(Field::Soffset).is_some() {
        // A signed 21-bit byte offset.
        let raw = fld::smem::OFFSET.get(w);
        let offset = signed_hex(i64::from((raw << 11) as i32 >> 11));
        let soffset = fld::smem::SOFFSET.0.get(w);
        let (imm, soffset_en) = (fld::smem::IMM.get(w) == 1, fld::smem::SOFFSET_EN.get(w) == 1);
        args.push(match (imm, soffset_en) {
            (true, false) => offset,
            (true, true) => format!("{} offset:{offset}", reg(Field::Soffset, soffset)),
            (false, true) => reg(Field::Soffset, soffset),
            (false, false) => reg(Field::Soffset, raw & 0x7f),
        });
    }
    if fld::smem::GLC.get(w) == 1 {
        mods.push_str(" glc");
    }
    if fld::smem::NV.get(w) == 1 {
        mods.push_str(" nv");
    }
}

/// Source modifiers: the float ones (neg, abs) and SDWA's integer sign extension.
#[derive(Clone, Copy, Default)]
struct SrcMods {
    neg: bool,
    abs: bool,
    sext: bool,
}

/// Source `n` with its modifiers as LLVM prints them: a float operand's `-|v1|` (a
/// negated constant as `neg(2)`), an integer operand's `sext(v1)`; the modifiers an
/// operand of the other kind cannot take are not printed, as LLVM does not.
fn with_mods(text: String, n: u32, float: bool, m: SrcMods) -> String {
    if !float {
        return if m.sext { format!("sext({text})") } else { text };
    }
    let t = if m.abs { format!("|{text}|") } else { text };
    // A negated constant without `|…|` would read as another constant.
    let constant = (128..=255).contains(&n);
    match (m.neg, constant && !m.abs) {
        (true, true) => format!("neg({t})"),
        (true, false) => format!("-{t}"),
        _ => t,
    }
}

/// VOP3's and SDWA's output modifier.
fn omod(mods: &mut String, clamp: bool, omod: u32) {
    if clamp {
        mods.push_str(" clamp");
    }
    mods.push_str(match omod {
        1 => " mul:2",
        2 => " mul:4",
        3 => " div:2",
        _ => "",
    });
}

/// Whether LLVM gives source `field` of `base` (the mnemonic without its encoding
/// suffix) the float input modifiers: as its format says, but for `v_cndmask_b32`'s
/// (which select bits, yet take them), a class test's mask and the second and third
/// sources of [`INT_MODS`] (integers).
fn float_mods(base: &str, field: Field, op: &Operand) -> bool {
    match field {
        _ if base == "v_cndmask_b32" => true,
        Field::Src1 | Field::Vsrc1 if base.starts_with("v_cmp_class") || base.starts_with("v_cmpx_class") => false,
        Field::Src1 | Field::Src2 if INT_MODS.contains(&base) => false,
        _ => op.float,
    }
}

/// Whether a vector destination or source is an AccVGPR by its kind alone.
fn is_acc(op: &Operand) -> bool {
    matches!(op.kind, Kind::Accvgpr | Kind::SrcAccvgpr)
}

/// VOP1, VOP2 and VOPC, with their SDWA or DPP dword.
fn vop_short(i: &Inst, mnem: &str, ops: &Ops, args: &mut Vec<String>, mods: &mut String) {
    let w = i.w();
    let base = mnem
        .trim_end_matches("_e32")
        .trim_end_matches("_sdwa")
        .trim_end_matches("_dpp");
    let vopc = i.enc == Encoding::Vopc;
    let sdwa = i.ext == Some(Ext::Sdwa);
    let dpp = i.ext == Some(Ext::Dpp);
    // The destination.
    if vopc {
        if sdwa && fld::vopc_sdwa_sdst::SD.get(w) == 1 {
            let mut s = String::new();
            scalar_reg(&mut s, fld::vopc_sdwa_sdst::SDST.0.get(w), 2);
            args.push(s);
        } else {
            args.push("vcc".into());
        }
    } else if let Some(op) = ops.get(Field::Vdst) {
        let mut s = String::new();
        let n = fld::vop1::VDST.0.get(w);
        match op.kind {
            Kind::Sreg | Kind::Sdst | Kind::SregNovcc => scalar_reg(&mut s, n, regs(op.bits)),
            _ => vreg(&mut s, n, regs(op.bits), is_acc(op)),
        }
        args.push(s);
    }
    let carry_out = base.ends_with("_co_u32");
    let carry_in = matches!(base, "v_addc_co_u32" | "v_subb_co_u32" | "v_subbrev_co_u32");
    if carry_out {
        if sdwa && fld::vop2_sdwa_sdst::SD.get(w) == 1 {
            let mut s = String::new();
            scalar_reg(&mut s, fld::vop2_sdwa_sdst::SDST.0.get(w), 2);
            args.push(s);
        } else {
            args.push("vcc".into());
        }
    }
    // The sources.
    let (m0, m1) = if sdwa {
        (
            SrcMods {
                neg: fld::vop2_sdwa::SRC0_NEG.get(w) == 1,
                abs: fld::vop2_sdwa::SRC0_ABS.get(w) == 1,
                sext: fld::vop2_sdwa::SRC0_SEXT.get(w) == 1,
            },
            SrcMods {
                neg: fld::vop2_sdwa::SRC1_NEG.get(w) == 1,
                abs: fld::vop2_sdwa::SRC1_ABS.get(w) == 1,
                sext: fld::vop2_sdwa::SRC1_SEXT.get(w) == 1,
            },
        )
    } else if dpp {
        (
            SrcMods {
                neg: fld::vop2_dpp16::SRC0_NEG.get(w) == 1,
                abs: fld::vop2_dpp16::SRC0_ABS.get(w) == 1,
                sext: false,
            },
            SrcMods {
                neg: fld::vop2_dpp16::SRC1_NEG.get(w) == 1,
                abs: fld::vop2_dpp16::SRC1_ABS.get(w) == 1,
                sext: false,
            },
        )
    } else {
        (SrcMods::default(), SrcMods::default())
    };
    if let Some(op) = ops.get(Field::Src0) {
        let mut s = String::new();
        let n = if sdwa {
            let n = fld::vop2_sdwa::VSRC0.0.get(w);
            if fld::vop2_sdwa::S0.get(w) == 1 { n } else { n + 256 }
        } else if dpp {
            256 + fld::vop2_dpp16::VSRC0.0.get(w)
        } else {
            fld::vop2::SRC0.0.get(w)
        };
        if dpp {
            vreg(&mut s, n - 256, regs(op.bits), is_acc(op));
        } else {
            source(&mut s, n, op, mnem, i.literal.filter(|_| !sdwa), is_acc(op));
        }
        args.push(with_mods(s, n, float_mods(base, Field::Src0, op), m0));
    }
    let k = format!("{:#x}", i.literal.unwrap_or(0));
    if matches!(base, "v_fmamk_f32" | "v_madmk_f16") {
        args.push(k.clone());
    }
    if let Some(op) = ops.get(Field::Vsrc1) {
        let mut s = String::new();
        let n = fld::vop2::VSRC1.0.get(w);
        let n = if sdwa && fld::vop2_sdwa::S1.get(w) == 1 {
            n
        } else {
            n + 256
        };
        source(&mut s, n, op, mnem, None, false);
        args.push(with_mods(s, n, float_mods(base, Field::Vsrc1, op), m1));
    }
    if matches!(base, "v_fmaak_f32" | "v_madak_f16") {
        args.push(k);
    }
    if carry_in || base == "v_cndmask_b32" {
        args.push("vcc".into());
    }
    if sdwa {
        sdwa_mods(i, vopc, ops.get(Field::Vsrc1).is_some() || vopc, mods);
    } else if dpp {
        dpp_mods(i, mods);
    }
}

/// The SDWA dword's selects as LLVM prints them.
fn sdwa_mods(i: &Inst, vopc: bool, two: bool, mods: &mut String) {
    let w = i.w();
    const SEL: [&str; 8] = ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "7"];
    // LLVM names the reserved value 3 as it does 0.
    const UNUSED: [&str; 4] = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "UNUSED_PAD"];
    // The 8-bit float conversions' SDWA forms write a whole VGPR (or two): LLVM
    // prints no destination select for them.
    let converts8 = i.name().is_some_and(|n| crate::fp8_ops::Fp8Op::of(n, true).is_some());
    if !vopc {
        omod(mods, fld::vop2_sdwa::CLMP.get(w) == 1, fld::vop2_sdwa::OMOD.get(w));
    }
    if !vopc && !converts8 {
        let _ = write!(
            mods,
            " dst_sel:{} dst_unused:{}",
            SEL[fld::vop2_sdwa::DST_SEL.get(w) as usize],
            UNUSED[fld::vop2_sdwa::DST_UNUSED.get(w) as usize]
        );
    }
    let _ = write!(mods, " src0_sel:{}", SEL[fld::vop2_sdwa::SRC0_SEL.get(w) as usize]);
    if two {
        let _ = write!(mods, " src1_sel:{}", SEL[fld::vop2_sdwa::SRC1_SEL.get(w) as usize]);
    }
}

/// The DPP dword's controls as LLVM prints them.
fn dpp_mods(i: &Inst, mods: &mut String) {
    let w = i.w();
    let ctrl = fld::vop2_dpp16::DPP.get(w);
    let c = match ctrl {
        0x00..=0xff => {
            let q: Vec<String> = (0..4).map(|k| ((ctrl >> (2 * k)) & 3).to_string()).collect();
            format!("quad_perm:[{}]", q.join(","))
        }
        0x101..=0x10f => format!("row_shl:{}", ctrl - 0x100),
        0x111..=0x11f => format!("row_shr:{}", ctrl - 0x110),
        0x121..=0x12f => format!("row_ror:{}", ctrl - 0x120),
        0x130 => "wave_shl:1".into(),
        0x134 => "wave_rol:1".into(),
        0x138 => "wave_shr:1".into(),
        0x13c => "wave_ror:1".into(),
        0x140 => "row_mirror".into(),
        0x141 => "row_half_mirror".into(),
        0x142 => "row_bcast:15".into(),
        0x143 => "row_bcast:31".into(),
        0x150..=0x15f => format!("row_newbcast:{}", ctrl - 0x150),
        _ => format!("{ctrl:#x}"),
    };
    let _ = write!(
        mods,
        " {c} row_mask:{:#x} bank_mask:{:#x}",
        fld::vop2_dpp16::ROW_MASK.get(w),
        fld::vop2_dpp16::BANK_MASK.get(w)
    );
    if fld::vop2_dpp16::BC.get(w) == 1 {
        mods.push_str(" bound_ctrl:1");
    }
}

/// A vector or scalar destination of VOP3/VOP3P by its kind.
fn dest(out: &mut String, n: u32, op: &Operand, acc: bool) {
    match op.kind {
        Kind::Sreg | Kind::Sdst | Kind::SregNovcc => scalar_reg(out, n, regs(op.bits)),
        _ => vreg(out, n, regs(op.bits), acc || is_acc(op)),
    }
}

/// The VOP3 forms whose integer operands take a modifier (`sext`) in LLVM.
const INT_MODS: [&str; 5] = [
    "v_ldexp_f16",
    "v_ldexp_f32",
    "v_ldexp_f64",
    "v_cvt_pk_u8_f32",
    "v_trig_preop_f64",
];

const SRCS: [(Field, Bits); 3] = [
    (Field::Src0, fld::vop3::SRC0.0),
    (Field::Src1, fld::vop3::SRC1.0),
    (Field::Src2, fld::vop3::SRC2.0),
];

fn vop3(i: &Inst, mnem: &str, ops: &Ops, args: &mut Vec<String>, mods: &mut String) {
    let w = i.w();
    let base = mnem.trim_end_matches("_e64");
    let carry_form = ops.get(Field::Sdst).is_some();
    if let Some(op) = ops.get(Field::Vdst) {
        let mut s = String::new();
        dest(&mut s, fld::vop3::VDST.0.get(w), op, false);
        args.push(s);
    }
    if let Some(op) = ops.get(Field::Sdst) {
        let mut s = String::new();
        scalar_reg(&mut s, fld::vop3sd::SDST.0.get(w), regs(op.bits));
        args.push(s);
    }
    let (abs, neg) = (
        if carry_form { 0 } else { fld::vop3::ABS.get(w) },
        fld::vop3::NEG.get(w),
    );
    for (k, (field, at)) in SRCS.iter().enumerate() {
        if let Some(op) = ops.get(*field) {
            let mut s = String::new();
            let n = at.get(w);
            source(&mut s, n, op, mnem, None, is_acc(op));
            // An integer operand's NEG bit is its sign extension, in the few forms
            // LLVM gives integer modifiers.
            let m = SrcMods {
                neg: neg >> k & 1 == 1,
                abs: abs >> k & 1 == 1,
                sext: neg >> k & 1 == 1 && INT_MODS.contains(&base),
            };
            args.push(with_mods(s, n, float_mods(base, *field, op), m));
        }
    }
    // VOPC in its long form names its mask destination; VOP2's carry-in forms their
    // carry source.
    if base == "v_cndmask_b32" && ops.get(Field::Src2).is_none() {
        let mut s = String::new();
        scalar_reg(&mut s, fld::vop3::SRC2.0.get(w), 2);
        args.push(s);
    }
    let opsel = if carry_form { 0 } else { fld::vop3::OPSEL.get(w) };
    if opsel != 0 {
        let n = ops
            .0
            .iter()
            .filter(|o| matches!(o.field, Field::Src0 | Field::Src1 | Field::Src2))
            .count();
        // The sources' bits, then the destination's (OPSEL[3]); the stochastic
        // conversions' byte select (OPSEL[3:2]) takes the last two.
        let list = if base.starts_with("v_cvt_sr_") {
            bit_list(opsel, 4)
        } else {
            let mut l = bit_list(opsel, n);
            l.pop();
            let _ = write!(l, "{}{}]", if n > 0 { "," } else { "" }, opsel >> 3 & 1);
            l
        };
        let _ = write!(mods, " op_sel:{list}");
    }
    omod(mods, fld::vop3::CLMP.get(w) == 1, fld::vop3::OMOD.get(w));
}

fn vop3p(i: &Inst, mnem: &str, ops: &Ops, args: &mut Vec<String>, mods: &mut String) {
    let w = i.w();
    let matrix = mnem.starts_with("v_mfma") || mnem.starts_with("v_smfmac");
    let (acc_cd, acc) = if matrix {
        (fld::vop3p_mfma::ACC_CD.get(w) == 1, fld::vop3p_mfma::ACC.get(w))
    } else {
        (false, 0)
    };
    if let Some(op) = ops.get(Field::Vdst) {
        let mut s = String::new();
        dest(&mut s, fld::vop3p::VDST.0.get(w), op, acc_cd);
        args.push(s);
    }
    let nsrc = SRCS.iter().filter(|(f, _)| ops.get(*f).is_some()).count();
    let full = (1 << nsrc) - 1;
    // The mixed-precision forms take VOP3's source modifiers: NEG as neg, NEG_HI as
    // abs.
    let mix = mnem.starts_with("v_fma_mix");
    let (neg_lo, neg_hi) = (fld::vop3p::NEG.get(w), fld::vop3p::NEG_HI.get(w));
    for (k, (field, at)) in SRCS.iter().enumerate() {
        if let Some(op) = ops.get(*field) {
            let mut s = String::new();
            // The sparse forms' third source is an index VGPR, not an accumulator.
            let c = acc_cd && mnem.starts_with("v_mfma");
            let a = is_acc(op) || if k == 2 { c } else { acc >> k & 1 == 1 };
            let n = at.get(w);
            source(&mut s, n, op, mnem, None, a);
            if mix {
                let m = SrcMods {
                    neg: neg_lo >> k & 1 == 1,
                    abs: neg_hi >> k & 1 == 1,
                    sext: false,
                };
                s = with_mods(s, n, true, m);
            }
            args.push(s);
        }
    }
    if matrix {
        let (cbsz, abid, blgp) = (
            fld::vop3p_mfma::CBSZ.get(w),
            fld::vop3p_mfma::ABID.get(w),
            fld::vop3p_mfma::BLGP.get(w),
        );
        for (name, v) in [("cbsz", cbsz), ("abid", abid)] {
            if v != 0 {
                let _ = write!(mods, " {name}:{v}");
            }
        }
        // The f64 forms take BLGP's bits as the sources' negations.
        if blgp != 0 && mnem.starts_with("v_mfma_f64") {
            let _ = write!(mods, " neg:{}", bit_list(blgp, 3));
        } else if blgp != 0 {
            let _ = write!(mods, " blgp:{blgp}");
        }
        return;
    }
    if mnem.starts_with("v_accvgpr_") {
        return;
    }
    let opsel = fld::vop3p::OPSEL.get(w);
    let opsel_hi = fld::vop3p::OPSEL_HI.get(w) | fld::vop3p::OPSEL_HI2.get(w) << 2;
    // The mixed-precision forms' op_sel_hi picks f16 sources: none is the default.
    let default_hi = if mnem.starts_with("v_fma_mix") { 0 } else { full };
    let (neg_lo, neg_hi) = (fld::vop3p::NEG.get(w), fld::vop3p::NEG_HI.get(w));
    if opsel & full != 0 {
        let _ = write!(mods, " op_sel:{}", bit_list(opsel, nsrc));
    }
    if opsel_hi & full != default_hi {
        let _ = write!(mods, " op_sel_hi:{}", bit_list(opsel_hi, nsrc));
    }
    if neg_lo & full != 0 && !mix {
        let _ = write!(mods, " neg_lo:{}", bit_list(neg_lo, nsrc));
    }
    if neg_hi & full != 0 && !mix {
        let _ = write!(mods, " neg_hi:{}", bit_list(neg_hi, nsrc));
    }
    if fld::vop3p::CLMP.get(w) == 1 {
        mods.push_str(" clamp");
    }
}

fn ds(i: &Inst, mnem: &str, ops: &Ops, args: &mut Vec<String>, mods: &mut String) {
    let w = i.w();
    let acc = fld::ds::ACC.get(w) == 1;
    for (field, at, is_data) in [
        (Field::Vdst, fld::ds::VDST.0, true),
        (Field::Addr, fld::ds::ADDR.0, false),
        (Field::Data0, fld::ds::DATA0.0, true),
        (Field::Data1, fld::ds::DATA1.0, true),
    ] {
        if let Some(op) = ops.get(field) {
            let mut s = String::new();
            vreg(&mut s, at.get(w), regs(op.bits), acc && is_data);
            args.push(s);
        }
    }
    let (o0, o1) = (fld::ds::OFFSET0.get(w), fld::ds::OFFSET1.get(w));
    // The two-address forms (`ds_write2_b32`, `ds_read2st64_b32`) have two offsets.
    if ["read2", "write2", "xchg2"].iter().any(|p| mnem.contains(p)) {
        if o0 != 0 {
            let _ = write!(mods, " offset0:{o0}");
        }
        if o1 != 0 {
            let _ = write!(mods, " offset1:{o1}");
        }
    } else if mnem == "ds_swizzle_b32" && o0 | o1 << 8 != 0 {
        let _ = write!(mods, " offset:{}", swizzle(o0 | o1 << 8));
    } else if o0 | o1 << 8 != 0 {
        let _ = write!(mods, " offset:{}", o0 | o1 << 8);
    }
    if fld::ds::GDS.get(w) == 1 {
        mods.push_str(" gds");
    }
}

/// `ds_swizzle_b32`'s offset as LLVM prints it: a quad permutation, a swap, reverse
/// or broadcast within groups, a bit-mask permutation (per lane-id bit, from the
/// highest: `0` or `1` forced, `p` kept, `i` inverted), or a number.
fn swizzle(imm: u32) -> String {
    if imm & 0xff00 == 0x8000 {
        let lanes: Vec<String> = (0..4).map(|k| ((imm >> (2 * k)) & 3).to_string()).collect();
        return format!("swizzle(QUAD_PERM,{})", lanes.join(","));
    }
    if imm & 0x8000 != 0 {
        return imm.to_string();
    }
    let (and, or, xor) = (imm & 0x1f, (imm >> 5) & 0x1f, (imm >> 10) & 0x1f);
    if and == 0x1f && or == 0 && xor.count_ones() == 1 {
        return format!("swizzle(SWAP,{xor})");
    }
    if and == 0x1f && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
        return format!("swizzle(REVERSE,{})", xor + 1);
    }
    let group = 0x1f - and + 1;
    if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
        return format!("swizzle(BROADCAST,{group},{or})");
    }
    let (p0, p1) = (or ^ xor, ((0x1f & and) | or) ^ xor);
    let mask: String = (0..5)
        .rev()
        .map(|b| match (p0 >> b & 1, p1 >> b & 1) {
            (0, 0) => '0',
            (1, 1) => '1',
            (0, _) => 'p',
            _ => 'i',
        })
        .collect();
    format!("swizzle(BITMASK_PERM,\"{mask}\")")
}

/// The cache controls gfx940 prints after a memory instruction.
fn cache(mods: &mut String, sc0: u32, nt: u32, sc1: u32) {
    for (name, v) in [("sc0", sc0), ("nt", nt), ("sc1", sc1)] {
        if v == 1 {
            let _ = write!(mods, " {name}");
        }
    }
}

fn flat(i: &Inst, mnem: &str, ops: &Ops, args: &mut Vec<String>, mods: &mut String) {
    let w = i.w();
    let acc = fld::flat::ACC.get(w) == 1;
    let saddr = fld::flat::SADDR.0.get(w);
    let sc0 = fld::flat::SC0.get(w);
    // An atomic returns the old value (names a destination) only with SC0 set; a load
    // to LDS has none.
    let returns = !mnem.contains("_atomic_") || sc0 == 1;
    if let Some(op) = ops.get(Field::Vdst).filter(|_| returns && !mnem.contains("_load_lds_")) {
        let mut s = String::new();
        vreg(&mut s, fld::flat::VDST.0.get(w), regs(op.bits), acc);
        args.push(s);
    }
    let addr = fld::flat::ADDR.0.get(w);
    let mut a = String::new();
    match i.enc {
        Encoding::Scratch if fld::scratch::SVE.get(w) == 0 => a.push_str("off"),
        Encoding::Scratch => vreg(&mut a, addr, 1, false),
        Encoding::Global if saddr != 0x7f => vreg(&mut a, addr, 1, false),
        _ => vreg(&mut a, addr, 2, false),
    }
    args.push(a);
    if let Some(op) = ops.get(Field::Data) {
        let mut s = String::new();
        vreg(&mut s, fld::flat::DATA.0.get(w), regs(op.bits), acc);
        args.push(s);
    }
    match i.enc {
        Encoding::Global | Encoding::Scratch => {
            let mut s = String::new();
            if saddr == 0x7f {
                s.push_str("off");
            } else {
                scalar_reg(&mut s, saddr, if i.enc == Encoding::Global { 2 } else { 1 });
            }
            args.push(s);
        }
        _ => {}
    }
    // LLVM reads a FLAT offset as 13 bits, unsigned (global's and scratch's are signed).
    let offset = if i.enc == Encoding::Flat {
        i64::from(fld::global::OFFSET.get(w))
    } else {
        i64::from((fld::global::OFFSET.get(w) << 19) as i32 >> 19)
    };
    if offset != 0 {
        let _ = write!(mods, " offset:{offset}");
    }
    cache(mods, sc0, fld::flat::NT.get(w), fld::flat::SC1.get(w));
}

fn buffer(i: &Inst, mnem: &str, ops: &Ops, args: &mut Vec<String>, mods: &mut String) {
    let w = i.w();
    let acc = fld::mubuf::ACC.get(w) == 1;
    let (offen, idxen) = (fld::mubuf::OFFEN.get(w) == 1, fld::mubuf::IDXEN.get(w) == 1);
    if ops.get(Field::Vdata).is_none() && ops.get(Field::Srsrc).is_none() {
        // buffer_wbl2, buffer_inv: cache controls only.
        cache(
            mods,
            fld::mubuf::SC0.get(w),
            fld::mubuf::NT.get(w),
            fld::mubuf::SC1.get(w),
        );
        return;
    }
    // A load to LDS (LDS set) names no data register.
    let to_lds = i.enc == Encoding::Mubuf && fld::mubuf::LDS.get(w) == 1;
    if let Some(op) = ops.get(Field::Vdata).filter(|_| !to_lds) {
        let mut s = String::new();
        vreg(&mut s, fld::mubuf::VDATA.0.get(w), regs(op.bits), acc);
        args.push(s);
    }
    let mut a = String::new();
    match (offen, idxen) {
        (false, false) => a.push_str("off"),
        (true, true) => vreg(&mut a, fld::mubuf::VADDR.0.get(w), 2, false),
        _ => vreg(&mut a, fld::mubuf::VADDR.0.get(w), 1, false),
    }
    args.push(a);
    let mut r = String::new();
    scalar_reg(&mut r, u32::from(fld::mubuf::SRSRC.operand(w)), 4);
    args.push(r);
    let mut so = String::new();
    let soffset = ops.get(Field::Soffset).copied().unwrap_or(Operand {
        field: Field::Soffset,
        bits: 32,
        kind: Kind::SsrcNolit,
        float: false,
    });
    source(&mut so, fld::mubuf::SOFFSET.0.get(w), &soffset, mnem, None, false);
    args.push(so);
    if i.enc == Encoding::Mtbuf {
        let (dfmt, nfmt) = (fld::mtbuf::DFMT.get(w), fld::mtbuf::NFMT.get(w));
        if let Some(f) = buffer_format(dfmt, nfmt) {
            let _ = write!(mods, " format:[{f}]");
        }
    }
    if idxen {
        mods.push_str(" idxen");
    }
    if offen {
        mods.push_str(" offen");
    }
    let offset = fld::mubuf::OFFSET.get(w);
    if offset != 0 {
        let _ = write!(mods, " offset:{offset}");
    }
    if i.enc == Encoding::Mtbuf {
        cache(
            mods,
            fld::mtbuf::SC0.get(w),
            fld::mtbuf::NT.get(w),
            fld::mtbuf::SC1.get(w),
        );
    } else {
        cache(
            mods,
            fld::mubuf::SC0.get(w),
            fld::mubuf::NT.get(w),
            fld::mubuf::SC1.get(w),
        );
        if fld::mubuf::LDS.get(w) == 1 {
            mods.push_str(" lds");
        }
    }
}

/// MTBUF's data and number formats as LLVM names them for gfx9, each left out where
/// it is the default (`BUF_DATA_FORMAT_8`, `BUF_NUM_FORMAT_UNORM`); `None` where both
/// are.
fn buffer_format(dfmt: u32, nfmt: u32) -> Option<String> {
    const DATA: [&str; 16] = [
        "BUF_DATA_FORMAT_INVALID",
        "BUF_DATA_FORMAT_8",
        "BUF_DATA_FORMAT_16",
        "BUF_DATA_FORMAT_8_8",
        "BUF_DATA_FORMAT_32",
        "BUF_DATA_FORMAT_16_16",
        "BUF_DATA_FORMAT_10_11_11",
        "BUF_DATA_FORMAT_11_11_10",
        "BUF_DATA_FORMAT_10_10_10_2",
        "BUF_DATA_FORMAT_2_10_10_10",
        "BUF_DATA_FORMAT_8_8_8_8",
        "BUF_DATA_FORMAT_32_32",
        "BUF_DATA_FORMAT_16_16_16_16",
        "BUF_DATA_FORMAT_32_32_32",
        "BUF_DATA_FORMAT_32_32_32_32",
        "BUF_DATA_FORMAT_RESERVED_15",
    ];
    const NUM: [&str; 8] = [
        "BUF_NUM_FORMAT_UNORM",
        "BUF_NUM_FORMAT_SNORM",
        "BUF_NUM_FORMAT_USCALED",
        "BUF_NUM_FORMAT_SSCALED",
        "BUF_NUM_FORMAT_UINT",
        "BUF_NUM_FORMAT_SINT",
        "BUF_NUM_FORMAT_RESERVED_6",
        "BUF_NUM_FORMAT_FLOAT",
    ];
    let mut parts = Vec::new();
    if dfmt != 1 {
        parts.push(DATA[dfmt as usize & 15]);
    }
    if nfmt != 0 {
        parts.push(NUM[nfmt as usize & 7]);
    }
    (!parts.is_empty()).then(|| parts.join(","))
}
