//! RDNA4's own instructions as `llvm-objdump-19 --mcpu=gfx1201` prints them: the
//! split wait counters and the program-control forms RDNA3 prints alike, SMEM, the
//! vector memory encodings (VGLOBAL, VSCRATCH, VFLAT) with their cache controls, the
//! scalar float ALU and WMMA's f32 forms. What lowers to RDNA3 prints as RDNA3 does
//! ([`Inst::text`]); the rest is not printed here yet.

use std::fmt::Write as _;

use super::decode::{Encoding, Inst};
use super::fields as f4;
use super::opcodes::{Sop1, Sop2, Sopc, Sopk, Sopp, Vop3p};
use crate::fp8_ops::Fp8Op;
use crate::rdna3::{Regs, hwreg_text, scalar_reg, signed_hex, source, vgpr};

/// NULL, where a scalar operand is left out.
const NULL: u32 = 124;

/// The registers an access moves, by the opcode's data type (`_b64`: 2; `_b96`: 3;
/// `_b128`: 4; everything narrower than 64 bits: 1); a compare-swap's data is twice
/// that (the comparand follows).
fn data_dwords(name: &str) -> u32 {
    let ty = name.rsplit('_').next().unwrap_or("");
    match ty {
        // A block moves up to 32 dwords (as M0 selects).
        "block" => 32,
        "b64" | "u64" | "i64" | "f64" => 2,
        "b96" => 3,
        "b128" => 4,
        _ => 1,
    }
}

/// ` scope:SCOPE_*` for a nonzero SCOPE field.
fn scope(out: &mut String, scope: u32) {
    match scope {
        1 => out.push_str(" scope:SCOPE_SE"),
        2 => out.push_str(" scope:SCOPE_DEV"),
        3 => out.push_str(" scope:SCOPE_SYS"),
        _ => {}
    }
}

/// RDNA4's own LDS read-modify-writes as LLVM prints them: their operands lie as
/// those of the RDNA3 operation of the same shape (`ds_min_num_f32` as `ds_min_f32`,
/// `ds_cond_sub_u32` and `ds_sub_clamp_u32` as `ds_sub_u32`, the packed adds as
/// `ds_add_u32`), printed as RDNA3 prints that, under RDNA4's name.
fn ds_as_rdna3(i: &Inst, name: &str) -> Option<String> {
    use crate::rdna3::opcodes::Ds;
    let rtn = name.contains("_rtn_");
    let shape = match name {
        _ if name.starts_with("ds_min_num_") || name.starts_with("ds_max_num_") => name.replace("_num", ""),
        _ if name.starts_with("ds_cond_sub_") || name.starts_with("ds_sub_clamp_") => {
            if rtn { "ds_sub_rtn_u32" } else { "ds_sub_u32" }.to_string()
        }
        _ if name.starts_with("ds_pk_add_") => if rtn { "ds_add_rtn_u32" } else { "ds_add_u32" }.to_string(),
        _ => return None,
    };
    let op = (0..256u16).find(|&op| Ds::from_op(op).is_some_and(|d| d.name() == shape))?;
    let mut w = i.words;
    f4::ds::OP.put(&mut w, u32::from(op));
    let r = crate::rdna3::Inst::decode(&w[..2]).ok()?;
    Some(r.llvm().to_string().replacen(shape.as_str(), name, 1))
}

/// `s_version`'s operand as LLVM 19 prints it for gfx12: the microcode version's name
/// (or number) and the wave-size and MDP flags, joined as an expression; hex where
/// bits outside those are set.
fn version(imm: u32) -> String {
    const NAMES: [(u32, &str); 4] = [
        (0, "UC_VERSION_GFX7"),
        (4, "UC_VERSION_GFX10"),
        (6, "UC_VERSION_GFX11"),
        (9, "UC_VERSION_GFX12"),
    ];
    const FLAGS: [(u32, &str); 3] = [
        (1 << 13, "UC_VERSION_W64_BIT"),
        (1 << 14, "UC_VERSION_W32_BIT"),
        (1 << 15, "UC_VERSION_MDP_BIT"),
    ];
    if imm & 0x1f00 != 0 {
        return format!("{imm:#x}");
    }
    let v = imm & 0xff;
    let mut text = NAMES
        .iter()
        .find(|&&(n, _)| n == v)
        .map_or_else(|| v.to_string(), |&(_, name)| name.to_string());
    for (bit, flag) in FLAGS {
        if imm & bit != 0 {
            if text.contains('|') {
                text = format!("({text})");
            }
            text = format!("{text}|{flag}");
        }
    }
    text
}

/// The forms RDNA3 shares whose operands LLVM prints otherwise for gfx12: `s_call_b64`'s
/// offset in decimal, `s_round_mode`'s and `s_ttracedata_imm`'s in hex, `s_wait_alu`'s
/// dependency counters, `s_version`'s names, `s_sendmsg_rtn_*`'s gfx12 messages.
pub(crate) fn gfx12_constant(i: &Inst) -> Option<String> {
    let name = i.name()?;
    let w = &i.words;
    match i.enc {
        Encoding::Sopk if Sopk::from_op(i.op) == Some(Sopk::S_CALL_B64) => {
            let mut out = format!("{name} ");
            scalar_reg(&mut out, f4::sopk::SDST.0.get(w), 2);
            let _ = write!(out, ", {}", f4::sopk::SIMM16.get(w) as u16 as i16);
            Some(out)
        }
        Encoding::Sopp if matches!(Sopp::from_op(i.op), Some(Sopp::S_ROUND_MODE | Sopp::S_TTRACEDATA_IMM)) => {
            Some(format!("{name} {:#x}", f4::sopp::SIMM16.get(w)))
        }
        Encoding::Sopp if Sopp::from_op(i.op) == Some(Sopp::S_WAIT_ALU) => {
            Some(format!("{name} {}", crate::rdna3::depctr(f4::sopp::SIMM16.get(w))))
        }
        Encoding::Sopk if Sopk::from_op(i.op) == Some(Sopk::S_VERSION) => {
            Some(format!("{name} {}", version(f4::sopk::SIMM16.get(w))))
        }
        Encoding::Sop1
            if matches!(
                Sop1::from_op(i.op),
                Some(Sop1::S_SENDMSG_RTN_B32 | Sop1::S_SENDMSG_RTN_B64)
            ) =>
        {
            let mut out = format!("{name} ");
            let regs = if name.ends_with("_b64") { 2 } else { 1 };
            scalar_reg(&mut out, f4::sop1::SDST.0.get(w), regs);
            let _ = write!(out, ", {}", crate::text::sendmsg_rtn(f4::sop1::SSRC0.0.get(w), true));
            Some(out)
        }
        _ => None,
    }
}

/// The instruction in LLVM's syntax, where this module prints its encoding.
pub(crate) fn render(i: &Inst) -> Option<String> {
    let name = i.name()?;
    let w = &i.words;
    let mut out = String::from(name);
    match i.enc {
        Encoding::Sopp => {
            let imm = f4::sopp::SIMM16.get(w);
            match Sopp::from_op(i.op)? {
                Sopp::S_ENDPGM | Sopp::S_WAIT_IDLE | Sopp::S_BARRIER_LEAVE => {}
                _ if name.starts_with("s_wait_") => {
                    let _ = write!(out, " {imm:#x}");
                }
                // LLVM prints the barrier's id in decimal where it is small.
                Sopp::S_BARRIER_WAIT if imm <= 64 => {
                    let _ = write!(out, " {imm}");
                }
                Sopp::S_BARRIER_WAIT => {
                    let _ = write!(out, " {imm:#x}");
                }
                // The forms RDNA3 has under the same name and number print as RDNA3's.
                op => {
                    let r = crate::rdna3::Inst::decode(&[w[0]]).ok()?;
                    return (r.mnemonic() == Some(op.name())).then(|| r.llvm().to_string());
                }
            }
        }
        Encoding::Sop1 => {
            let op = Sop1::from_op(i.op)?;
            let src = f4::sop1::SSRC0.operand(w).into();
            // The barrier and sleep operations take a source alone.
            if !matches!(
                op,
                Sop1::S_BARRIER_SIGNAL
                    | Sop1::S_BARRIER_SIGNAL_ISFIRST
                    | Sop1::S_BARRIER_INIT
                    | Sop1::S_BARRIER_JOIN
                    | Sop1::S_SLEEP_VAR
            ) {
                out.push(' ');
                scalar_reg(&mut out, f4::sop1::SDST.0.get(w), 1);
                out.push(',');
            }
            out.push(' ');
            source(&mut out, src, 1, i.literal, name);
        }
        Encoding::Sopk => {
            // The hardware registers (the rest lowers to RDNA3).
            let simm = f4::sopk::SIMM16.get(w);
            let sdst = f4::sopk::SDST.0.get(w);
            out.push(' ');
            match Sopk::from_op(i.op)? {
                Sopk::S_GETREG_B32 => {
                    scalar_reg(&mut out, sdst, 1);
                    out.push_str(", ");
                    hwreg_text(&mut out, simm, Regs::Gfx12);
                }
                Sopk::S_SETREG_B32 => {
                    hwreg_text(&mut out, simm, Regs::Gfx12);
                    out.push_str(", ");
                    scalar_reg(&mut out, sdst, 1);
                }
                Sopk::S_SETREG_IMM32_B32 => {
                    hwreg_text(&mut out, simm, Regs::Gfx12);
                    // In decimal where it is an inline constant's value, else in hex.
                    let k = i.literal?;
                    let _ = if (-16..=64).contains(&(k as i32)) {
                        write!(out, ", {}", k as i32)
                    } else {
                        write!(out, ", {k:#x}")
                    };
                }
                _ => return None,
            }
        }
        Encoding::Ds => return ds_as_rdna3(i, name),
        Encoding::Vbuffer => {
            // The forms without cache controls (other TH and SCOPE values and a typed
            // access's format other than 0 are not printed here); an atomic's TH 1
            // returns the old value.
            use f4::vbuffer::*;
            let atomic = name.contains("_atomic_");
            let th = TH.get(w);
            if NV.is_set(w) || TFE.get(w) != 0 || SCOPE.get(w) != 0 || th > u32::from(atomic) {
                return None;
            }
            let typed = name.starts_with("tbuffer_");
            if typed && FORMAT.get(w) != 0 {
                return None;
            }
            // A format access moves one component per letter of `x`, `xy`, `xyz`, `xyzw`
            // (d16: two to a register).
            let data = if let Some((_, xyzw)) = name.split_once("format_") {
                let n = xyzw.len() as u32;
                if name.contains("_d16_") { n.div_ceil(2) } else { n }
            } else if name.contains("cmpswap") {
                2 * data_dwords(name)
            } else {
                data_dwords(name)
            };
            out.push(' ');
            vgpr(&mut out, VDATA.0.get(w), data);
            out.push_str(", ");
            match (IDXEN.get(w) != 0, OFFEN.get(w) != 0) {
                (false, false) => out.push_str("off"),
                (true, true) => vgpr(&mut out, VADDR.0.get(w), 2),
                _ => vgpr(&mut out, VADDR.0.get(w), 1),
            }
            out.push_str(", ");
            scalar_reg(&mut out, RSRC.get(w), 4);
            out.push_str(", ");
            match SOFFSET.0.get(w) {
                NULL => out.push_str("null"),
                s => scalar_reg(&mut out, s, 1),
            }
            if IDXEN.get(w) != 0 {
                out.push_str(" idxen");
            }
            if OFFEN.get(w) != 0 {
                out.push_str(" offen");
            }
            if typed {
                out.push_str(" format:[BUF_FMT_INVALID]");
            }
            if IOFFSET.get(w) != 0 {
                let _ = write!(out, " offset:{}", IOFFSET.get(w));
            }
            if atomic && th == 1 {
                out.push_str(" th:TH_ATOMIC_RETURN");
            }
        }
        Encoding::Vop1 if super::fp8::decode(i).is_some() => {
            // v_cvt_f32_fp8/bf8 (a VGPR from one byte) and the packed forms (two).
            let pair = name.contains("_pk_");
            out.push(' ');
            vgpr(&mut out, f4::vop1::VDST.0.get(w), if pair { 2 } else { 1 });
            out.push_str(", ");
            source(&mut out, f4::vop1::SRC0.operand(w).into(), 1, i.literal, name);
        }
        Encoding::Vop3 if super::fp8::decode(i).is_some() => {
            // The VOP3 forms: OPSEL as LLVM names it per instruction (`byte_sel` for a
            // byte, `op_sel` for a half); source modifiers are not printed here.
            let Some(Ok(x)) = super::fp8::decode(i) else {
                return None;
            };
            if x.neg | x.abs != 0 {
                return None;
            }
            let nsrc = if matches!(x.op, Fp8Op::ToF32 { .. }) { 1 } else { 2 };
            out.push(' ');
            let pair = matches!(x.op, Fp8Op::ToF32 { packed: true, .. });
            vgpr(&mut out, x.vdst as u32, if pair { 2 } else { 1 });
            for &src in &x.srcs[..nsrc] {
                out.push_str(", ");
                source(&mut out, src.into(), 1, i.literal, name);
            }
            match x.op {
                Fp8Op::ToF32 { packed: true, .. } if x.sel != 0 => out.push_str(" op_sel:[1,0]"),
                Fp8Op::FromF32 { stochastic: false, .. } if x.sel != 0 => out.push_str(" op_sel:[0,0,1]"),
                Fp8Op::ToF32 { packed: true, .. } | Fp8Op::FromF32 { stochastic: false, .. } => {}
                _ if x.sel != 0 => {
                    let _ = write!(out, " byte_sel:{}", x.sel);
                }
                _ => {}
            }
        }
        Encoding::Sop2 => {
            let op = Sop2::from_op(i.op)?;
            let count = match op {
                Sop2::S_ADD_NC_U64 | Sop2::S_SUB_NC_U64 | Sop2::S_MUL_U64 => 2,
                _ if name.ends_with("_f32") || name.ends_with("_f16") => 1,
                _ => return None,
            };
            out.push(' ');
            scalar_reg(&mut out, f4::sop2::SDST.0.get(w), count);
            for s in [f4::sop2::SSRC0, f4::sop2::SSRC1] {
                out.push_str(", ");
                source(&mut out, s.operand(w).into(), count, i.literal, name);
            }
            if matches!(Sop2::from_op(i.op)?, Sop2::S_FMAAK_F32 | Sop2::S_FMAMK_F32) {
                let k = format!("{:#x}", i.literal?);
                // fmamk: the constant between the sources.
                if Sop2::from_op(i.op)? == Sop2::S_FMAMK_F32 {
                    let (head, last) = out.rsplit_once(", ")?;
                    out = format!("{head}, {k}, {last}");
                } else {
                    let _ = write!(out, ", {k}");
                }
            }
        }
        Encoding::Sopc => {
            Sopc::from_op(i.op).filter(|op| op.name().ends_with("_f32") || op.name().ends_with("_f16"))?;
            for (k, s) in [f4::sopc::SSRC0, f4::sopc::SSRC1].into_iter().enumerate() {
                out.push_str(if k == 0 { " " } else { ", " });
                source(&mut out, s.operand(w).into(), 1, i.literal, name);
            }
        }
        Encoding::Smem => {
            use f4::smem::*;
            if name == "s_dcache_inv" {
                return Some(out);
            }
            if NV.is_set(w) || SCOPE.get(w) != 0 || TH.get(w) != 0 {
                return None;
            }
            let offset = signed_hex(i64::from(IOFFSET.signed(w)));
            // The probes: the 7-bit probe value, the base, then the offset as a load's.
            if name.starts_with("s_atc_probe") {
                let _ = write!(out, " {}, ", SDATA.0.get(w));
                let regs = if name == "s_atc_probe_buffer" { 4 } else { 2 };
                scalar_reg(&mut out, SBASE.operand(w).into(), regs);
                match SOFFSET.0.get(w) {
                    NULL => {
                        let _ = write!(out, ", {offset}");
                    }
                    s => {
                        out.push_str(", ");
                        scalar_reg(&mut out, s, 1);
                        let _ = write!(out, " offset:{offset}");
                    }
                }
                return Some(out);
            }
            // The prefetches: the base (none for the PC-relative ones), the offset, the
            // offset register (`null` printed) and the 7-bit length field, as numbers.
            if name.contains("prefetch") {
                out.push(' ');
                if !name.ends_with("_pc_rel") {
                    let regs = if name.starts_with("s_buffer_") { 4 } else { 2 };
                    scalar_reg(&mut out, SBASE.operand(w).into(), regs);
                    out.push_str(", ");
                }
                let _ = write!(out, "{offset}, ");
                scalar_reg(&mut out, SOFFSET.0.get(w), 1);
                let _ = write!(out, ", {}", SDATA.0.get(w));
                return Some(out);
            }
            let buffer = name.starts_with("s_buffer_load_");
            if !(name.starts_with("s_load_") || buffer) || NV.is_set(w) || SCOPE.get(w) != 0 || TH.get(w) != 0 {
                return None;
            }
            let dwords = match name.rsplit('_').next()? {
                "b32" | "u8" | "i8" | "u16" | "i16" => 1,
                "b64" => 2,
                "b96" => 3,
                "b128" => 4,
                "b256" => 8,
                "b512" => 16,
                _ => return None,
            };
            out.push(' ');
            scalar_reg(&mut out, SDATA.0.get(w), dwords);
            out.push_str(", ");
            // A buffer load's base is a four-SGPR resource.
            scalar_reg(&mut out, SBASE.operand(w).into(), if buffer { 4 } else { 2 });
            let offset = i64::from(IOFFSET.signed(w));
            match SOFFSET.0.get(w) {
                NULL => {
                    let _ = write!(out, ", {}", signed_hex(offset));
                }
                s => {
                    out.push_str(", ");
                    scalar_reg(&mut out, s, 1);
                    let _ = write!(out, " offset:{}", signed_hex(offset));
                }
            }
        }
        Encoding::Vglobal | Encoding::Vscratch | Encoding::Vflat => {
            // The three place their fields alike (`exec`'s test checks).
            use f4::vglobal::*;
            if NV.is_set(w) {
                return None;
            }
            let atomic = name.contains("_atomic_");
            let th = TH.get(w);
            // An atomic's TH bit 0 returns the old value; other TH values are not
            // printed here.
            if th > u32::from(atomic) {
                return None;
            }
            let returns = atomic && th == 1;
            let data = data_dwords(name);
            let store = name.contains("_store_");
            let saddr = SADDR.0.get(w);
            let mut ops: Vec<String> = Vec::new();
            let reg = |n: u32, count: u32| {
                let mut s = String::new();
                vgpr(&mut s, n, count);
                s
            };
            if (!store && !atomic) || returns {
                ops.push(reg(VDST.0.get(w), data));
            }
            // The address: scratch's VGPR only with SVE; 64 bits without SADDR; none
            // for the `addtid` forms (the lane's id is the offset).
            if !name.contains("_addtid_") {
                ops.push(match i.enc {
                    Encoding::Vscratch if !f4::vscratch::SVE.is_set(w) => "off".into(),
                    Encoding::Vscratch => reg(VADDR.0.get(w), 1),
                    Encoding::Vflat => reg(VADDR.0.get(w), 2),
                    _ => reg(VADDR.0.get(w), if saddr == NULL { 2 } else { 1 }),
                });
            }
            if store || atomic {
                let count = if name.contains("cmpswap") { 2 * data } else { data };
                ops.push(reg(VSRC.0.get(w), count));
            }
            match (i.enc, saddr) {
                (Encoding::Vflat, _) => {}
                (_, NULL) => ops.push("off".into()),
                (Encoding::Vscratch, s) => {
                    let mut r = String::new();
                    scalar_reg(&mut r, s, 1);
                    ops.push(r);
                }
                (_, s) => {
                    let mut r = String::new();
                    scalar_reg(&mut r, s, 2);
                    ops.push(r);
                }
            }
            let _ = write!(out, " {}", ops.join(", "));
            let offset = IOFFSET.signed(w);
            if offset != 0 {
                let _ = write!(out, " offset:{offset}");
            }
            if returns {
                out.push_str(" th:TH_ATOMIC_RETURN");
            }
            scope(&mut out, SCOPE.get(w));
        }
        Encoding::Vop3p => {
            use f4::vop3p::*;
            let op = Vop3p::from_op(i.op)?;
            // The dense WMMAs: D's VGPRs, each source's, and whether NEG is the integer
            // forms' signedness of A and B (LLVM's `neg_lo:[a,b,0]`).
            let (dst, counts, signs) = match op {
                Vop3p::V_WMMA_F32_16X16X16_F16 | Vop3p::V_WMMA_F32_16X16X16_BF16 => (8, [4, 4, 8], false),
                Vop3p::V_WMMA_F16_16X16X16_F16 | Vop3p::V_WMMA_BF16_16X16X16_BF16 => (4, [4, 4, 4], false),
                Vop3p::V_WMMA_I32_16X16X16_IU8 => (8, [2, 2, 8], true),
                Vop3p::V_WMMA_I32_16X16X16_IU4 => (8, [1, 1, 8], true),
                _ => return None,
            };
            let neg = NEG.get(w);
            if (neg != 0 && !signs) || neg & 4 != 0 || NEG_HI.get(w) != 0 || OPSEL.get(w) != 0 || CLMP.is_set(w) {
                return None;
            }
            out.push(' ');
            vgpr(&mut out, VDST.0.get(w), dst);
            for (src, count) in [SRC0, SRC1, SRC2].into_iter().zip(counts) {
                out.push_str(", ");
                source(&mut out, src.operand(w).into(), count, i.literal, name);
            }
            if neg != 0 {
                let _ = write!(out, " neg_lo:[{},{},0]", neg & 1, neg >> 1 & 1);
            }
        }
        _ => return None,
    }
    Some(out)
}
