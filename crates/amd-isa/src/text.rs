//! LLVM's spelling of what every generation's disassembler prints alike: inline
//! constants and literals by the width of the operand they stand for, signed hex
//! offsets, modifier bit lists.

use std::fmt::Write as _;

/// A register range as LLVM prints it: `s4` for one, `s[4:5]` for more.
pub(crate) fn reg_range(out: &mut String, prefix: &str, first: u32, count: u32) {
    if count == 1 {
        let _ = write!(out, "{prefix}{first}");
    } else {
        let _ = write!(out, "{prefix}[{first}:{}]", first + count - 1);
    }
}

/// The operands of the 9-bit source space every generation names alike: the
/// apertures (235–239), the status bits (251–253), LDS_DIRECT (254) and the VGPRs
/// (256–511); any other number it prints as a number. The SGPRs and special registers
/// below 128, which the generations number differently, are the caller's.
pub(crate) fn common_operand(out: &mut String, n: u32, count: u32) {
    match n {
        235 => out.push_str("src_shared_base"),
        236 => out.push_str("src_shared_limit"),
        237 => out.push_str("src_private_base"),
        238 => out.push_str("src_private_limit"),
        239 => out.push_str("src_pops_exiting_wave_id"),
        251 => out.push_str("src_vccz"),
        252 => out.push_str("src_execz"),
        253 => out.push_str("src_scc"),
        254 => out.push_str("src_lds_direct"),
        256..=511 => reg_range(out, "v", n - 256, count),
        _ => {
            let _ = write!(out, "{n}");
        }
    }
}

/// The width of the values an operand carries, for constants.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Width {
    B16,
    B32,
    /// 64-bit integer.
    I64,
    /// 64-bit float: a literal is the high half.
    F64,
}

/// An inline constant (128..=248) as LLVM prints it.
pub(crate) fn inline_const(n: u32, w: Width) -> Option<String> {
    Some(match n {
        128..=192 => (n - 128).to_string(),
        193..=208 => format!("-{}", n - 192),
        240 => "0.5".into(),
        241 => "-0.5".into(),
        242 => "1.0".into(),
        243 => "-1.0".into(),
        244 => "2.0".into(),
        245 => "-2.0".into(),
        246 => "4.0".into(),
        247 => "-4.0".into(),
        248 if w == Width::F64 => "0.15915494309189532".into(),
        248 => "0.15915494".into(),
        _ => return None,
    })
}

/// A literal as LLVM prints it: the inline constant it equals, or hex.
pub(crate) fn literal(lit: u32, w: Width) -> String {
    let inline = |v: i64| (-16..=64).contains(&v).then(|| v.to_string());
    match w {
        Width::B16 => {
            let h = lit & 0xffff;
            let named = match h {
                0x3800 => Some("0.5"),
                0xb800 => Some("-0.5"),
                0x3c00 => Some("1.0"),
                0xbc00 => Some("-1.0"),
                0x4000 => Some("2.0"),
                0xc000 => Some("-2.0"),
                0x4400 => Some("4.0"),
                0xc400 => Some("-4.0"),
                0x3118 => Some("0.15915494"),
                _ => None,
            };
            inline(h as u16 as i16 as i64)
                .or(named.map(str::to_string))
                .unwrap_or_else(|| format!("{h:#x}"))
        }
        Width::B32 | Width::I64 => {
            let named = match lit {
                0x3f00_0000 => Some("0.5"),
                0xbf00_0000 => Some("-0.5"),
                0x3f80_0000 => Some("1.0"),
                0xbf80_0000 => Some("-1.0"),
                0x4000_0000 => Some("2.0"),
                0xc000_0000 => Some("-2.0"),
                0x4080_0000 => Some("4.0"),
                0xc080_0000 => Some("-4.0"),
                0x3e22_f983 => Some("0.15915494"),
                _ => None,
            };
            let named = if w == Width::B32 { named } else { None };
            inline(lit as i32 as i64)
                .or(named.map(str::to_string))
                .unwrap_or_else(|| format!("{lit:#x}"))
        }
        Width::F64 => {
            let v = u64::from(lit) << 32;
            let named = match v {
                0x3fe0_0000_0000_0000 => Some("0.5"),
                0xbfe0_0000_0000_0000 => Some("-0.5"),
                0x3ff0_0000_0000_0000 => Some("1.0"),
                0xbff0_0000_0000_0000 => Some("-1.0"),
                0x4000_0000_0000_0000 => Some("2.0"),
                0xc000_0000_0000_0000 => Some("-2.0"),
                0x4010_0000_0000_0000 => Some("4.0"),
                0xc010_0000_0000_0000 => Some("-4.0"),
                _ => None,
            };
            named.map(str::to_string).unwrap_or_else(|| format!("{lit:#x}"))
        }
    }
}

/// Signed hex as LLVM formats it (`-0x10`).
pub(crate) fn signed_hex(v: i64) -> String {
    if v < 0 {
        format!("-{:#x}", v.unsigned_abs())
    } else {
        format!("{v:#x}")
    }
}

/// `[a,b,c]` of the low `n` bits of `v`.
pub(crate) fn bit_list(v: u32, n: usize) -> String {
    let bits: Vec<String> = (0..n).map(|i| ((v >> i) & 1).to_string()).collect();
    format!("[{}]", bits.join(","))
}

/// `s_sendmsg_rtn_*`'s message (its `SSRC0` field) as LLVM 19 prints it for gfx11 or
/// (`gfx12`) gfx12: by name where it has one for that generation (the ids of its message
/// table, read back from llvm-mc-19 for all 256), else as `sendmsg(id, 0, 0)`.
pub(crate) fn sendmsg_rtn(id: u32, gfx12: bool) -> String {
    // (id, name, on gfx11, on gfx12)
    const NAMES: [(u32, &str, bool, bool); 14] = [
        (1, "MSG_INTERRUPT", true, true),
        (2, "MSG_HS_TESSFACTOR", true, true),
        (3, "MSG_DEALLOC_VGPRS", true, true),
        (5, "MSG_STALL_WAVE_GEN", true, false),
        (6, "MSG_HALT_WAVES", true, false),
        (9, "MSG_GS_ALLOC_REQ", true, true),
        (128, "MSG_RTN_GET_DOORBELL", true, true),
        (129, "MSG_RTN_GET_DDID", true, true),
        (130, "MSG_RTN_GET_TMA", true, true),
        (131, "MSG_RTN_GET_REALTIME", true, true),
        (132, "MSG_RTN_SAVE_WAVE", true, true),
        (133, "MSG_RTN_GET_TBA", true, true),
        (134, "MSG_RTN_GET_TBA_TO_PC", true, true),
        (135, "MSG_RTN_GET_SE_AID_ID", false, true),
    ];
    match NAMES
        .iter()
        .find(|&&(n, _, on11, on12)| n == id && if gfx12 { on12 } else { on11 })
    {
        Some((_, name, ..)) => format!("sendmsg({name})"),
        None => format!("sendmsg({id}, 0, 0)"),
    }
}

#[cfg(test)]
mod sendmsg_tests {
    /// As llvm-mc-19 disassembles `s_sendmsg_rtn_b32 s0, <id>` for gfx1100 and gfx1201.
    #[test]
    fn names_messages_per_generation() {
        for (id, gfx11, gfx12) in [
            (0, "sendmsg(0, 0, 0)", "sendmsg(0, 0, 0)"),
            (3, "sendmsg(MSG_DEALLOC_VGPRS)", "sendmsg(MSG_DEALLOC_VGPRS)"),
            (5, "sendmsg(MSG_STALL_WAVE_GEN)", "sendmsg(5, 0, 0)"),
            (128, "sendmsg(MSG_RTN_GET_DOORBELL)", "sendmsg(MSG_RTN_GET_DOORBELL)"),
            (134, "sendmsg(MSG_RTN_GET_TBA_TO_PC)", "sendmsg(MSG_RTN_GET_TBA_TO_PC)"),
            (135, "sendmsg(135, 0, 0)", "sendmsg(MSG_RTN_GET_SE_AID_ID)"),
        ] {
            assert_eq!(super::sendmsg_rtn(id, false), gfx11);
            assert_eq!(super::sendmsg_rtn(id, true), gfx12);
        }
    }
}
