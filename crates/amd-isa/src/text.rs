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
