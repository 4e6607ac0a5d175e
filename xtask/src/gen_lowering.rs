//! `cargo xtask gen-lowering RDNA3_DIR RDNA4_DIR [--check]`: writes
//! `crates/amd-isa/src/rdna4/generated/lowering.rs`, the RDNA4 opcodes the RDNA3
//! interpreter runs as they are: per encoding whose fields lie alike in both
//! generations (the scalar ALU, program control, the vector ALU, VOP3P, VOPD, LDS),
//! each RDNA4 opcode with its RDNA3 number where RDNA3 has an opcode of the same name
//! in that encoding whose pseudocode is the same text (AMD's ISA pseudocode as
//! tinygrad extracts it into `str_pcode.py`, white space folded) and the same operands
//! (`operands.py`: each field's size in bits and kind; WMMA's A and B, for one, are
//! half as wide in RDNA4). An opcode whose pseudocode or operands differ, even in
//! spelling, is left out: the RDNA4 interpreter decides it on its own.
//!
//! Each directory holds that generation's `enum.py`, `str_pcode.py` and `operands.py`, from
//! `git -C <tinygrad> show HEAD:tinygrad/runtime/autogen/amd/<gen>/<file>`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::Result;

const OUTPUT: &str = "crates/amd-isa/src/rdna4/generated/lowering.rs";

/// The encodings lowered (tinygrad's enum class, the function named after it).
const ENCODINGS: &[(&str, &str)] = &[
    ("SOP1Op", "sop1"),
    ("SOP2Op", "sop2"),
    ("SOPKOp", "sopk"),
    ("SOPCOp", "sopc"),
    ("SOPPOp", "sopp"),
    ("VOP1Op", "vop1"),
    ("VOP2Op", "vop2"),
    ("VOPCOp", "vopc"),
    ("VOP3Op", "vop3"),
    ("VOP3SDOp", "vop3sd"),
    ("VOP3POp", "vop3p"),
    ("VOPDOp", "vopd"),
    ("DSOp", "ds"),
];

/// A Python string literal's text (`'…'` or `"…"`, with `\n`, `\t`, `\\`, `\'` and
/// `\"` escapes).
fn unquote(lit: &str) -> Option<String> {
    let q = lit.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let body = lit.strip_prefix(q)?.strip_suffix(q)?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'n' | 't' => ' ',
            c @ ('\\' | '\'' | '"') => c,
            _ => return None,
        });
    }
    Some(out)
}

/// `  ENCOp.NAME: '…',` lines: (encoding class, opcode name) → the pseudocode, white
/// space folded.
fn pseudocode(text: &str) -> Result<BTreeMap<(String, String), String>> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix("  ") else {
            continue;
        };
        let Some((key, lit)) = rest.split_once(": ") else {
            continue;
        };
        let Some((enc, op)) = key.split_once('.') else {
            continue;
        };
        let lit = lit.trim_end().trim_end_matches(',');
        let code = unquote(lit).ok_or_else(|| format!("str_pcode.py line {}: not a string literal", n + 1))?;
        let folded = code.split_whitespace().collect::<Vec<_>>().join(" ");
        out.insert((enc.to_string(), op.to_string()), folded);
    }
    if out.is_empty() {
        return Err("str_pcode.py has no pseudocode".into());
    }
    Ok(out)
}

type Ops = BTreeMap<String, BTreeMap<String, u16>>;

/// RDNA3's ISA gives no pseudocode for VOPD: each half is the vector ALU opcode it
/// names (`v_dual_add_f32` is `v_add_f32`), whose VOP2, VOP1 or VOP3 pseudocode it
/// takes.
fn vopd_as_vop<'a>(class: &str, op: &str, code: &'a BTreeMap<(String, String), String>) -> Option<&'a String> {
    let rest = op.strip_prefix("V_DUAL_").filter(|_| class == "VOPDOp")?;
    [("VOP2Op", "_E32"), ("VOP1Op", "_E32"), ("VOP3Op", "")]
        .iter()
        .find_map(|(enc, suffix)| code.get(&(enc.to_string(), format!("V_{rest}{suffix}"))))
}

/// `  ENCOp.NAME: {"src0": (Fmt.…, 32, OpType.…), …},` lines: (encoding class, opcode
/// name) → each operand field with its size and kind (the format's name left out: it
/// is spelled differently across generations for the same operand).
fn operands(text: &str) -> Result<BTreeMap<(String, String), Vec<String>>> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix("  ") else {
            continue;
        };
        let Some((key, fields)) = rest.split_once(": {") else {
            continue;
        };
        let Some((enc, op)) = key.split_once('.') else {
            continue;
        };
        let mut list = Vec::new();
        for field in fields
            .trim_end()
            .trim_end_matches(',')
            .trim_end_matches('}')
            .split("), ")
        {
            let (name, spec) = field
                .split_once(": (")
                .ok_or_else(|| format!("operands.py line {}: {field:?}", n + 1))?;
            let mut parts = spec.trim_end_matches(')').split(", ").skip(1);
            let (size, kind) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            // RDNA4's table names VOP3's first source `vsrc0` where it takes only a
            // VGPR; RDNA3's calls the same field `src0`.
            let name = match name.trim_matches('"') {
                "vsrc0" => "src0",
                other => other,
            };
            list.push(format!("{name} {size} {kind}"));
        }
        list.sort();
        out.insert((enc.to_string(), op.to_string()), list);
    }
    if out.is_empty() {
        return Err("operands.py has no operands".into());
    }
    Ok(out)
}

/// What a generation says of its opcodes: per encoding class, their numbers; per
/// opcode, its pseudocode and its operands.
struct Tables {
    ops: Ops,
    code: BTreeMap<(String, String), String>,
    operands: BTreeMap<(String, String), Vec<String>>,
}

/// A generation's tables.
fn generation(dir: &Path) -> Result<Tables> {
    let read = |f: &str| {
        let p = dir.join(f);
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    };
    let ops = crate::gen_opcodes::parse(&read("enum.py")?)?
        .into_iter()
        .map(|(class, ops)| (class, ops.into_iter().collect()))
        .collect();
    Ok(Tables {
        ops,
        code: pseudocode(&read("str_pcode.py")?)?,
        operands: operands(&read("operands.py")?)?,
    })
}

fn generate(rdna3: &Path, rdna4: &Path) -> Result<String> {
    let (t3, t4) = (generation(rdna3)?, generation(rdna4)?);
    let mut out = String::new();
    writeln!(
        out,
        "// @generated by `cargo xtask gen-lowering` from tinygrad's RDNA3 and RDNA4 tables"
    )?;
    writeln!(out, "// (enum.py, str_pcode.py); do not edit.")?;
    writeln!(
        out,
        "//! The RDNA4 opcodes whose RDNA3 namesake has the same pseudocode, with the RDNA3"
    )?;
    writeln!(out, "//! number, per encoding.")?;
    let mut total = 0;
    for &(class, name) in ENCODINGS {
        let (Some(o3), Some(o4)) = (t3.ops.get(class), t4.ops.get(class)) else {
            return Err(format!("{class} is missing from a generation's enum.py").into());
        };
        let pairs: Vec<(u16, u16, &str)> = o4
            .iter()
            .filter_map(|(op, &n4)| {
                let n3 = *o3.get(op)?;
                let key = (class.to_string(), op.clone());
                let theirs = t3.code.get(&key).or_else(|| vopd_as_vop(class, op, &t3.code))?;
                let same_operands = t3.operands.get(&key) == t4.operands.get(&key);
                (theirs == t4.code.get(&key)? && same_operands).then_some((n4, n3, op.as_str()))
            })
            .collect();
        total += pairs.len();
        writeln!(out)?;
        writeln!(out, "/// {class}: {} of RDNA4's {} opcodes.", pairs.len(), o4.len())?;
        if pairs.is_empty() {
            writeln!(out, "pub(crate) const fn {name}(_op: u16) -> Option<u16> {{")?;
            writeln!(out, "    None")?;
            writeln!(out, "}}")?;
            continue;
        }
        writeln!(out, "pub(crate) const fn {name}(op: u16) -> Option<u16> {{")?;
        writeln!(out, "    Some(match op {{")?;
        let mut pairs = pairs;
        pairs.sort();
        for (n4, n3, op) in pairs {
            writeln!(out, "        {n4} => {n3}, // {}", op.to_lowercase())?;
        }
        writeln!(out, "        _ => return None,")?;
        writeln!(out, "    }})")?;
        writeln!(out, "}}")?;
    }
    if total == 0 {
        return Err("no RDNA4 opcode has an RDNA3 namesake with the same pseudocode".into());
    }
    Ok(out)
}

pub fn run(args: &[String]) -> Result<()> {
    const USAGE: &str = "usage: cargo xtask gen-lowering RDNA3_DIR RDNA4_DIR [--check]";
    let (a, b, check) = match args {
        [a, b] => (a, b, false),
        [a, b, c] if c == "--check" => (a, b, true),
        _ => return Err(USAGE.into()),
    };
    let fresh = generate(Path::new(a), Path::new(b))?;
    crate::write_or_check(OUTPUT, &fresh, check, &format!("cargo xtask gen-lowering {a} {b}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_python_string_literals() {
        assert_eq!(unquote(r"'a\nb'").as_deref(), Some("a b"));
        assert_eq!(unquote(r#""it's \"x\"""#).as_deref(), Some("it's \"x\""));
        assert_eq!(unquote(r"'back\\slash'").as_deref(), Some(r"back\slash"));
        assert_eq!(unquote("'open"), None);
        assert_eq!(unquote(r"'\q'"), None, "unknown escapes are refused");
        let p = pseudocode("PCODE = {\n  VOP1Op.V_NOP_E32: 'nothing\\n  here',\n}\n").unwrap();
        assert_eq!(p[&("VOP1Op".into(), "V_NOP_E32".into())], "nothing here");
        assert!(pseudocode("  VOP1Op.X: unquoted,\n").is_err());
        let o = operands("  VOP3POp.V_X: {\"src0\": (Fmt.FMT_A, 128, OpType.OPR_VGPR), \"vdst\": (Fmt.FMT_B, 256, OpType.OPR_VGPR)},\n").unwrap();
        assert_eq!(
            o[&("VOP3POp".into(), "V_X".into())],
            ["src0 128 OpType.OPR_VGPR", "vdst 256 OpType.OPR_VGPR"]
        );
        let v = operands("  VOP3Op.V_Y: {\"vsrc0\": (Fmt.FMT_A, 32, OpType.OPR_VGPR)},\n").unwrap();
        assert_eq!(
            v[&("VOP3Op".into(), "V_Y".into())],
            ["src0 32 OpType.OPR_VGPR"],
            "vsrc0 is src0"
        );
    }
}
