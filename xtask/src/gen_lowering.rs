//! `cargo xtask gen-lowering RDNA3_DIR RDNA4_DIR [--check]`: writes
//! `crates/amd-isa/src/rdna4/generated/lowering.rs`, the RDNA4 opcodes the RDNA3
//! interpreter runs as they are: per encoding whose fields lie alike in both
//! generations (the scalar ALU, program control, the vector ALU, VOP3P, VOPD, LDS),
//! each RDNA4 opcode with its RDNA3 number where RDNA3 has an opcode of the same name
//! in that encoding (or, renamed, the one opcode there with the same pseudocode and
//! operands) whose pseudocode is the same text (or differs only in spelling, read side
//! by side, or given by neither and described alike: `SAME_MEANING`) (AMD's ISA pseudocode as
//! tinygrad extracts it into `str_pcode.py`, comments dropped and white space folded) and the same operands
//! (`operands.py`, where both list the opcode: each field's size in bits and kind;
//! WMMA's A and B, for one, are half as wide in RDNA4). An opcode whose pseudocode or operands differ, even in
//! spelling, is left out: the RDNA4 interpreter decides it on its own. The memory
//! encodings (LDS, VGLOBAL, VFLAT, VSCRATCH, VBUFFER — whose `tbuffer_*` opcodes are
//! RDNA3's MTBUF) map their opcodes by name alone: their address arithmetic (and but
//! for LDS their fields) are each generation's own, the access they make is the same.
//!
//! `--cdna3 RDNA3_DIR CDNA_DIR` writes `crates/amd-isa/src/cdna3/generated/lowering.rs`
//! the same way for CDNA3's opcodes (`generate_cdna3`).
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
];

/// The memory encodings (RDNA4's class, RDNA3's, the function named after them).
/// (LDS too: RDNA4's pseudocode spells its address arithmetic out, `CalcDsAddr`.)
const MEMORY: &[(&str, &str, &str)] = &[
    ("DSOp", "DSOp", "ds"),
    ("VGLOBALOp", "GLOBALOp", "vglobal"),
    ("VFLATOp", "FLATOp", "vflat"),
    ("VSCRATCHOp", "SCRATCHOp", "vscratch"),
    ("VBUFFEROp", "MUBUFOp", "vbuffer"),
    ("VBUFFEROp", "MTBUFOp", "vbuffer_typed"),
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
            'n' => '\n',
            't' => ' ',
            c @ ('\\' | '\'' | '"') => c,
            _ => return None,
        });
    }
    Some(out)
}

/// The `  ENCOp.NAME<sep>…` lines of a generated Python table: each line's index,
/// encoding class, opcode name and what follows `sep`.
fn table_lines<'a>(text: &'a str, sep: &'a str) -> impl Iterator<Item = (usize, &'a str, &'a str, &'a str)> {
    text.lines().enumerate().filter_map(move |(n, line)| {
        let (key, rest) = line.strip_prefix("  ")?.split_once(sep)?;
        let (enc, op) = key.split_once('.')?;
        Some((n, enc, op, rest))
    })
}

/// `  ENCOp.NAME: '…',` lines: (encoding class, opcode name) → the pseudocode, white
/// space folded.
fn pseudocode(text: &str) -> Result<BTreeMap<(String, String), String>> {
    let mut out = BTreeMap::new();
    for (n, enc, op, lit) in table_lines(text, ": ") {
        let lit = lit.trim_end().trim_end_matches(',');
        let code = unquote(lit).ok_or_else(|| format!("str_pcode.py line {}: not a string literal", n + 1))?;
        // Comments are not semantics (some name the instruction they belong to).
        let folded = code
            .lines()
            .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
            .flat_map(str::split_whitespace)
            .collect::<Vec<_>>()
            .join(" ");
        out.insert((enc.to_string(), op.to_string()), folded);
    }
    if out.is_empty() {
        return Err("str_pcode.py has no pseudocode".into());
    }
    Ok(out)
}

type Ops = BTreeMap<String, BTreeMap<String, u16>>;

/// Opcodes whose pseudocode is spelled differently in the two generations with the
/// same meaning, or that neither gives pseudocode for and whose descriptions in the
/// ISA agree, read side by side (encoding class, RDNA4 name, RDNA3 name, what differs).
#[rustfmt::skip]
const SAME_MEANING: &[(&str, &str, &str, &str)] = &[
    ("VOP3Op", "V_ALIGNBIT_B32", "V_ALIGNBIT_B32", "`S2.u32[4 : 0]` without RDNA3's `.u32` on the slice, which is unsigned already"),
    ("VOP3Op", "V_ALIGNBYTE_B32", "V_ALIGNBYTE_B32", "`S2.u32[1 : 0]` without RDNA3's `.u32` on the slice, which is unsigned already"),
    // SOPK: RDNA4 spells the 16-bit immediate `S0.i16` where RDNA3 says `SIMM16.i16`,
    // and computes in 32 bits what RDNA3 computes in 64 and truncates to 32 (the same
    // low 32 bits of a sum or product).
    ("SOPKOp", "S_MOVK_I32", "S_MOVK_I32", "`S0.i16` for `SIMM16.i16`"),
    ("SOPKOp", "S_CMOVK_I32", "S_CMOVK_I32", "`S0.i16` for `SIMM16.i16`"),
    ("SOPKOp", "S_MULK_I32", "S_MULK_I32", "`S0.i16` for `SIMM16.i16`; a 32-bit product for a 64-bit one truncated"),
    ("SOPKOp", "S_ADDK_CO_I32", "S_ADDK_I32", "renamed; `S0.i16` for `SIMM16.i16`; a 32-bit sum for a 64-bit one truncated"),
    // SOPP: hints and controls neither generation gives pseudocode for (or gives as
    // prose), with the same fields.
    ("SOPPOp", "S_SETKILL", "S_SETKILL", "no pseudocode in either"),
    ("SOPPOp", "S_SETHALT", "S_SETHALT", "no pseudocode in either"),
    ("SOPPOp", "S_SLEEP", "S_SLEEP", "prose; RDNA4 adds a sleep-until-event bit (its operand kind OPR_SLEEP for the same 16 bits), which an interpreter without wake-up events runs as a 0-clock sleep"),
    ("SOPPOp", "S_TRAP", "S_TRAP", "the trap id is 4 bits in RDNA4 (8 in RDNA3); the interpreter runs no trap handler and only stops the wave"),
    ("SOPPOp", "S_ROUND_MODE", "S_ROUND_MODE", "no pseudocode in either; MODE's rounding bits in both"),
    ("SOPPOp", "S_DENORM_MODE", "S_DENORM_MODE", "no pseudocode in either; MODE's denormal bits in both"),
    ("SOPPOp", "S_WAKEUP", "S_WAKEUP", "no pseudocode in either"),
    ("SOPPOp", "S_SETPRIO", "S_SETPRIO", "the same prose, its sentences in another order"),
    ("SOPPOp", "S_SENDMSGHALT", "S_SENDMSGHALT", "no pseudocode in either"),
    ("SOPPOp", "S_INCPERFLEVEL", "S_INCPERFLEVEL", "no pseudocode in either"),
    ("SOPPOp", "S_DECPERFLEVEL", "S_DECPERFLEVEL", "no pseudocode in either"),
    ("SOPPOp", "S_TTRACEDATA", "S_TTRACEDATA", "no pseudocode in either"),
    ("SOPPOp", "S_TTRACEDATA_IMM", "S_TTRACEDATA_IMM", "no pseudocode in either"),
    ("SOPPOp", "S_ICACHE_INV", "S_ICACHE_INV", "no pseudocode in either"),
    ("SOP1Op", "S_SENDMSG_RTN_B32", "S_SENDMSG_RTN_B32", "no pseudocode in either; llvm-mc-19 assembles the same message ids for gfx1100 and gfx1201 (doorbell, DDID, TMA, realtime, save-wave, TBA)"),
    ("SOP1Op", "S_SENDMSG_RTN_B64", "S_SENDMSG_RTN_B64", "no pseudocode in either; llvm-mc-19 assembles the same message ids for gfx1100 and gfx1201 (doorbell, DDID, TMA, realtime, save-wave, TBA)"),
    // The vector ALU.
    ("VOP1Op", "V_NOP_E32", "V_NOP_E32", "no pseudocode in either"),
    ("VOP3Op", "V_NOP_E64", "V_NOP_E64", "no pseudocode in either"),
    ("VOP1Op", "V_PIPEFLUSH_E32", "V_PIPEFLUSH_E32", "no pseudocode in either"),
    ("VOP3Op", "V_PIPEFLUSH_E64", "V_PIPEFLUSH_E64", "no pseudocode in either"),
    ("VOP1Op", "V_SAT_PK_U8_I16_E32", "V_SAT_PK_U8_I16_E32", "`n <= 16'0` for `n.i32 <= 0` on the same 16-bit signed value; the two bytes assembled one at a time"),
    ("VOP3Op", "V_SAT_PK_U8_I16_E64", "V_SAT_PK_U8_I16_E64", "`n <= 16'0` for `n.i32 <= 0` on the same 16-bit signed value; the two bytes assembled one at a time"),
    ("VOPDOp", "V_DUAL_DOT2ACC_F32_BF16", "V_DUAL_DOT2ACC_F32_BF16", "RDNA3 gives no pseudocode for VOPD nor a VOP2 namesake; RDNA4's (the low product added, then the high) is how RDNA3's VOP3P v_dot2_f32_bf16 adds"),
];

/// The RDNA3 name of an RDNA4 opcode [`SAME_MEANING`] pairs with one.
fn reviewed_pair(class: &str, op: &str) -> Option<&'static str> {
    SAME_MEANING
        .iter()
        .find(|&&(c, ours, _, _)| c == class && ours == op)
        .map(|&(_, _, theirs, _)| theirs)
}

/// Whether opcode `a` of RDNA3 and `b` of RDNA4 (encoding class, name) have the same
/// pseudocode (or one of [`SAME_MEANING`]) and operands.
fn same(t3: &Tables, a: (&str, &str), t4: &Tables, b: (&str, &str)) -> bool {
    let (ka, kb) = ((a.0.to_string(), a.1.to_string()), (b.0.to_string(), b.1.to_string()));
    let reviewed = a.0 == b.0 && reviewed_pair(b.0, b.1) == Some(a.1);
    // Operands where both tables list the opcode (RDNA4's leaves some VOP2 and
    // `_e64` forms out).
    // The formats' names are spelled differently across generations for the same
    // operand (`FMT_WMMA_AB_F16`, `FMT_WMMA_AB_16X16_F16`): sizes and kinds only.
    let sizes = |v: &Vec<String>| -> Vec<String> {
        v.iter()
            .map(|o| o.rsplit_once(' ').map_or(o.as_str(), |(k, _)| k).to_string())
            .collect()
    };
    let operands = match (t3.operands.get(&ka), t4.operands.get(&kb)) {
        (Some(x), Some(y)) => sizes(x) == sizes(y),
        _ => true,
    };
    // A reviewed pair was read with its operands.
    if reviewed {
        return true;
    }
    let (Some(theirs), Some(ours)) = (
        t3.code.get(&ka).or_else(|| vopd_as_vop(a.0, a.1, &t3.code)),
        t4.code.get(&kb),
    ) else {
        return false;
    };
    // RDNA4's `*_num` minimum and maximum are RDNA3's, with IEEE 754-2019's NaN rule
    // (the RDNA4 wave's: two NaNs give the first, quieted; RDNA4 has no IEEE mode).
    // The base opcodes are read side by side (`NUM_BASE`); those built from them
    // (`v_minmax_num_f32`, `v_pk_max_num_f16`) have RDNA3's pseudocode with `_num`.
    let unmarked = |n: &str| {
        n.strip_suffix("_E32")
            .or_else(|| n.strip_suffix("_E64"))
            .unwrap_or(n)
            .to_string()
    };
    let num = a.1 != b.1 && unmarked(&b.1.replace("_NUM_", "_").replace("_NUM", "")) == unmarked(a.1);
    let (ours, theirs) = (packed(ours), packed(theirs));
    let same_code = if num {
        NUM_BASE.contains(&b.1) || ours.replace("_num_", "_") == theirs
    } else {
        ours == theirs
    };
    same_code && operands
}

/// A packed (VOP3P) operation's pseudocode in one form: RDNA3 computes the high half
/// of `tmp` first and RDNA4 the low half, after declaring it (`declare tmp : 32'B`),
/// and RDNA3 reads the result as `tmp.b32`. The halves are independent assignments to
/// disjoint bits of `tmp`, so their order is no part of the meaning: sorted here.
fn packed(code: &str) -> String {
    let mut statements: Vec<&str> = code
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "declare tmp : 32'B")
        .collect();
    let halves = statements.len().saturating_sub(1);
    if halves == 2 && statements[..halves].iter().all(|s| s.starts_with("tmp[")) {
        statements[..halves].sort_unstable();
    }
    statements.join("; ").replace("D0.b32 = tmp.b32", "D0.b32 = tmp")
}

/// RDNA4's base `*_num` minimum and maximum: IEEE 754-2019 minimumNumber and
/// maximumNumber, RDNA3's non-IEEE-mode minimum and maximum but for two NaN operands
/// (the first, quieted), which is the NaN rule RDNA4's waves run with.
const NUM_BASE: &[&str] = &[
    "V_MIN_NUM_F32_E32",
    "V_MAX_NUM_F32_E32",
    "V_MIN_NUM_F32_E64",
    "V_MAX_NUM_F32_E64",
    "V_MIN_NUM_F16_E32",
    "V_MAX_NUM_F16_E32",
    "V_MIN_NUM_F16_E64",
    "V_MAX_NUM_F16_E64",
    "V_MIN_NUM_F64_E32",
    "V_MAX_NUM_F64_E32",
    "V_MIN_NUM_F64_E64",
    "V_MAX_NUM_F64_E64",
    "V_DUAL_MIN_NUM_F32",
    "V_DUAL_MAX_NUM_F32",
];

/// The RDNA3 opcode an RDNA4 one without a namesake was renamed from
/// (`s_add_co_i32` from `s_add_i32`, `v_mad_co_u64_u32` from `v_mad_u64_u32`): the one
/// opcode of the encoding with the same pseudocode, where both operand tables list
/// them alike, formats included (WMMA's pseudocode is one text for every type, and
/// `v_s_exp_f32`'s is `v_exp_f32`'s with a scalar destination).
fn renamed<'a>(t3: &'a Tables, t4: &Tables, class: &str, op: &str) -> Option<&'a str> {
    let key = (class.to_string(), op.to_string());
    let (code, operands) = (t4.code.get(&key)?, t4.operands.get(&key)?);
    let mut found = t3.ops.get(class)?.keys().filter(|n| {
        let k = (class.to_string(), n.to_string());
        t3.code.get(&k) == Some(code) && t3.operands.get(&k) == Some(operands)
    });
    let name = found.next()?;
    found.next().is_none().then_some(name.as_str())
}

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
    for (n, enc, op, fields) in table_lines(text, ": {") {
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
            let mut parts = spec.trim_end_matches(')').split(", ");
            let (format, size, kind) = (
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
            );
            // RDNA4's table names VOP3's first source `vsrc0` where it takes only a
            // VGPR, and a scalar destination's kind OPR_SREG; RDNA3's calls the same
            // field `src0`, and the kind OPR_SDST.
            let name = match name.trim_matches('"') {
                "vsrc0" => "src0",
                other => other,
            };
            let kind = match kind {
                "OpType.OPR_SDST" => "OpType.OPR_SREG",
                other => other,
            };
            list.push(format!("{name} {size} {kind} {format}"));
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

/// Writes, after a blank line and the doc line `doc`, `const fn name(op: u16) ->
/// Option<u16>`: each pair's RDNA4 opcode to its RDNA3 one, in order, the opcode's name
/// as a comment.
fn write_map(out: &mut String, doc: &str, name: &str, mut pairs: Vec<(u16, u16, &str)>) -> Result<()> {
    if pairs.is_empty() {
        write!(
            out,
            "\n/// {doc}\npub(crate) const fn {name}(_op: u16) -> Option<u16> {{\n    None\n}}\n"
        )?;
        return Ok(());
    }
    pairs.sort();
    let arms = crate::lines(&pairs, |(n4, n3, op)| {
        format!("        {n4} => {n3}, // {}", op.to_lowercase())
    });
    write!(
        out,
        "
/// {doc}
pub(crate) const fn {name}(op: u16) -> Option<u16> {{
    Some(match op {{
{arms}        _ => return None,
    }})
}}
"
    )?;
    Ok(())
}

/// Writes the map `name` of a memory encoding's opcodes by name: each opcode of class
/// `ours.1` of generation `ours.0` whose `rename`d name class `theirs.1` of RDNA3 has,
/// with that opcode's number; `doc` makes the doc line of how many of how many.
fn by_name(
    out: &mut String,
    ours: (&Tables, &str),
    theirs: (&Tables, &str),
    name: &str,
    rename: impl Fn(&str) -> String,
    doc: impl Fn(usize, usize) -> String,
) -> Result<()> {
    let (Some(o), Some(o3)) = (ours.0.ops.get(ours.1), theirs.0.ops.get(theirs.1)) else {
        return Err(format!("{}/{} is missing from a generation's enum.py", ours.1, theirs.1).into());
    };
    let pairs: Vec<(u16, u16, &str)> = o
        .iter()
        .filter_map(|(op, &n)| Some((n, *o3.get(&rename(op))?, op.as_str())))
        .collect();
    write_map(out, &doc(pairs.len(), o.len()), name, pairs)
}

fn generate(rdna3: &Path, rdna4: &Path) -> Result<String> {
    let (t3, t4) = (generation(rdna3)?, generation(rdna4)?);
    let mut out = String::from(
        "\
// @generated by `cargo xtask gen-lowering` from tinygrad's RDNA3 and RDNA4 tables
// (enum.py, str_pcode.py); do not edit.
//! The RDNA4 opcodes whose RDNA3 namesake has the same pseudocode, with the RDNA3
//! number, per encoding.
",
    );
    let mut total = 0;
    for &(class, name) in ENCODINGS {
        let (Some(o3), Some(o4)) = (t3.ops.get(class), t4.ops.get(class)) else {
            return Err(format!("{class} is missing from a generation's enum.py").into());
        };
        let pairs: Vec<(u16, u16, &str)> = o4
            .iter()
            .filter_map(|(op, &n4)| {
                // RDNA4 marks `_e64` the VOP3 forms of opcodes that gained a VOP2 one
                // (`v_lshlrev_b64_e64`); RDNA3's VOP3-only namesake has no mark.
                let num = op.replace("_NUM_", "_").replace("_NUM", "");
                let name3 = [
                    op.as_str(),
                    op.strip_suffix("_E64").unwrap_or(op),
                    &num,
                    num.strip_suffix("_E64").unwrap_or(&num),
                ]
                .into_iter()
                .find(|n| o3.contains_key(*n))
                .or_else(|| reviewed_pair(class, op).filter(|n| o3.contains_key(*n)))
                .or_else(|| renamed(&t3, &t4, class, op))?;
                same(&t3, (class, name3), &t4, (class, op)).then_some((n4, o3[name3], op.as_str()))
            })
            .collect();
        total += pairs.len();
        let doc = format!("{class}: {} of RDNA4's {} opcodes.", pairs.len(), o4.len());
        write_map(&mut out, &doc, name, pairs)?;
    }
    // RDNA4's VOP2 opcodes whose RDNA3 namesake is VOP3 only (`v_lshlrev_b64`,
    // `v_mul_f64`): RDNA3 runs them in their VOP3 form.
    let (o3, o4) = (&t3.ops["VOP3Op"], &t4.ops["VOP2Op"]);
    let pairs: Vec<(u16, u16, &str)> = o4
        .iter()
        .filter(|(op, _)| !t3.ops["VOP2Op"].contains_key(*op))
        .filter_map(|(op, &n4)| {
            let num = op.replace("_NUM_", "_");
            let name3 = [op.strip_suffix("_E32")?, num.strip_suffix("_E32")?]
                .into_iter()
                .find(|n| o3.contains_key(*n))?;
            let n3 = o3[name3];
            same(&t3, ("VOP3Op", name3), &t4, ("VOP2Op", op)).then_some((n4, n3, op.as_str()))
        })
        .collect();
    let doc = format!(
        "VOP2Op: {} RDNA4 opcodes whose RDNA3 namesake is VOP3 only, with its VOP3 number.",
        pairs.len()
    );
    write_map(&mut out, &doc, "vop2_as_vop3", pairs)?;
    // The memory encodings: opcodes by name alone. Their fields lie differently, so
    // the RDNA4 executor reads them itself and hands RDNA3's the access; their
    // pseudocode differs in the address arithmetic and the cache controls, which each
    // generation's fields give.
    for &(class4, class3, name) in MEMORY {
        let doc = |n: usize, of: usize| format!("{class4}: {n} of RDNA4's {of} opcodes, by name ({class3} in RDNA3).");
        by_name(&mut out, (&t4, class4), (&t3, class3), name, |op| op.to_string(), doc)?;
    }
    if total == 0 {
        return Err("no RDNA4 opcode has an RDNA3 namesake with the same pseudocode".into());
    }
    Ok(out)
}

pub fn run(args: &[String]) -> Result<()> {
    const USAGE: &str = "usage: cargo xtask gen-lowering [--cdna3] RDNA3_DIR RDNA4_DIR|CDNA_DIR [--check]";
    let (cdna3, args) = match args {
        [flag, rest @ ..] if flag == "--cdna3" => (true, rest),
        rest => (false, rest),
    };
    let (a, b, check) = match args {
        [a, b] => (a, b, false),
        [a, b, c] if c == "--check" => (a, b, true),
        _ => return Err(USAGE.into()),
    };
    if cdna3 {
        let fresh = generate_cdna3(Path::new(a), Path::new(b))?;
        let regen = format!("cargo xtask gen-lowering --cdna3 {a} {b}");
        return crate::write_or_check(CDNA3_OUTPUT, &fresh, check, &regen);
    }
    let fresh = generate(Path::new(a), Path::new(b))?;
    crate::write_or_check(OUTPUT, &fresh, check, &format!("cargo xtask gen-lowering {a} {b}"))
}

const CDNA3_OUTPUT: &str = "crates/amd-isa/src/cdna3/generated/lowering.rs";

/// An opcode's pseudocode; for a VOP1, VOP2 or VOPC opcode's long (`_E64`) form, to
/// which the tables may give none of its own, its short form's.
fn short_form<'a>(t: &'a Tables, k: &(String, String)) -> Option<&'a String> {
    t.code.get(k).or_else(|| {
        let base = k.1.strip_suffix("_E64").filter(|_| k.0 == "VOP3Op")?;
        ["VOP1Op", "VOP2Op", "VOPCOp"]
            .iter()
            .find_map(|c| t.code.get(&(c.to_string(), format!("{base}_E32"))))
    })
}

/// CDNA3 opcodes whose pseudocode reads otherwise than their RDNA3 namesake's with the
/// same meaning on CDNA3's waves, read side by side (class, CDNA3 name, RDNA3 name,
/// what differs).
#[rustfmt::skip]
const CDNA3_SAME_MEANING: &[(&str, &str, &str, &str)] = &[
    ("SOP1Op", "S_SEXT_I32_I8", "S_SEXT_I32_I8", "the same pseudocode; RDNA3's operand table sizes the source as 16 bits where gfx9's says 8 (both read its low byte)"),
    ("VOP3Op", "V_ADD_U16_E64", "V_ADD_NC_U16", "the same pseudocode under gfx11's name"),
    ("VOP3Op", "V_SUB_U16_E64", "V_SUB_NC_U16", "the same pseudocode under gfx11's name"),
    ("VOP3Op", "V_MUL_LEGACY_F32", "V_MUL_DX9_ZERO_F32_E64", "the same pseudocode under gfx11's name"),
    ("VOP3Op", "V_ALIGNBIT_B32_E64", "V_ALIGNBIT_B32", "RDNA3 casts the shift's bit range to u32, which it is already"),
    ("VOP3Op", "V_ALIGNBYTE_B32_E64", "V_ALIGNBYTE_B32", "as v_alignbit_b32"),
    ("VOP2Op", "V_PK_FMAC_F16_E32", "V_PK_FMAC_F16_E32", "the two independent halves written in the other order"),
    ("VOP1Op", "V_SAT_PK_U8_I16_E32", "V_SAT_PK_U8_I16_E32", "the same saturation (gfx9 builds the result in a temporary; `n <= 0` and `n >= 255` alike)"),
    ("SOPKOp", "S_ADDK_I32", "S_ADDK_I32", "RDNA3 widens to 64 bits and truncates where gfx9 adds in 32: the same sum and overflow test"),
    ("VOP3POp", "V_MAD_MIX_F32", "V_FMA_MIX_F32", "gfx90a's and gfx940's mix operations are fused: LLVM names them v_fma_mix_* there and selects them for fused multiply-adds of widened halves; the tables keep gfx9's name and its unfused text"),
    ("VOP3POp", "V_MAD_MIXLO_F16", "V_FMA_MIXLO_F16", "as v_mad_mix_f32"),
    ("VOP3POp", "V_MAD_MIXHI_F16", "V_FMA_MIXHI_F16", "as v_mad_mix_f32"),
    ("SOPKOp", "S_MULK_I32", "S_MULK_I32", "as s_addk_i32: the low 32 bits of the product either way"),
    ("SOPKOp", "S_CMPK_EQ_I32", "S_CMPK_EQ_I32", "RDNA3 compares the sign-extended constant in 64 bits, gfx9 in 32: the same test"),
    ("SOPKOp", "S_CMPK_LG_I32", "S_CMPK_LG_I32", "as s_cmpk_eq_i32"),
    ("SOPKOp", "S_CMPK_GT_I32", "S_CMPK_GT_I32", "as s_cmpk_eq_i32"),
    ("SOPKOp", "S_CMPK_GE_I32", "S_CMPK_GE_I32", "as s_cmpk_eq_i32"),
    ("SOPKOp", "S_CMPK_LT_I32", "S_CMPK_LT_I32", "as s_cmpk_eq_i32"),
    ("SOPKOp", "S_CMPK_LE_I32", "S_CMPK_LE_I32", "as s_cmpk_eq_i32"),
    ("VOP3Op", "V_READLANE_B32", "V_READLANE_B32", "RDNA3 takes the lane from S1's bits 5:0 in a wave of 64 lanes, as CDNA3 (whose waves all are) always does"),
    ("VOP3Op", "V_WRITELANE_B32", "V_WRITELANE_B32", "as v_readlane_b32"),
    ("VOP1Op", "V_READFIRSTLANE_B32_E32", "V_READFIRSTLANE_B32_E32", "RDNA3's wave64 branch is CDNA3's text (the lowest active lane of 64)"),
    ("VOP3Op", "V_READFIRSTLANE_B32_E64", "V_READFIRSTLANE_B32_E64", "as its VOP1 form"),
    ("VOP3Op", "V_SAT_PK_U8_I16_E64", "V_SAT_PK_U8_I16_E64", "as its VOP1 form"),
    ("VOP2Op", "V_MIN_F32_E32", "V_MIN_F32_E32", "gfx9 tests the first operand for NaN before the second (of two NaNs, the second), which the CDNA3 wave's NaN rule (Gfx9Ieee, Gfx9Legacy) gives; RDNA3 spells -0 < +0 out as a lambda where gfx9 lists the two signed-zero cases"),
    ("VOP2Op", "V_MAX_F32_E32", "V_MAX_F32_E32", "as v_min_f32"),
    ("VOP2Op", "V_MIN_F16_E32", "V_MIN_F16_E32", "as v_min_f32"),
    ("VOP2Op", "V_MAX_F16_E32", "V_MAX_F16_E32", "as v_min_f32"),
    ("VOP3Op", "V_MIN_F32_E64", "V_MIN_F32_E64", "as v_min_f32"),
    ("VOP3Op", "V_MAX_F32_E64", "V_MAX_F32_E64", "as v_min_f32"),
    ("VOP3Op", "V_MIN_F16_E64", "V_MIN_F16_E64", "as v_min_f32"),
    ("VOP3Op", "V_MAX_F16_E64", "V_MAX_F16_E64", "as v_min_f32"),
    ("VOP3Op", "V_MIN_F64", "V_MIN_F64", "as v_min_f32"),
    ("VOP3Op", "V_MAX_F64", "V_MAX_F64", "as v_min_f32"),
    ("VOP3Op", "V_MAD_LEGACY_U16_E64", "V_MAD_U16", "gfx9's legacy form spells out the zeroed high half of its 16-bit result (OPSEL[3] clear) that the CDNA3 wave applies to every 16-bit result; with OPSEL[3] set both write the high half and keep the low"),
    ("VOP3Op", "V_MAD_LEGACY_I16_E64", "V_MAD_I16", "as v_mad_legacy_u16"),
    ("VOP3Op", "V_FMA_LEGACY_F16_E64", "V_FMA_F16", "as v_mad_legacy_u16"),
    ("VOP3Op", "V_DIV_FIXUP_LEGACY_F16_E64", "V_DIV_FIXUP_F16", "as v_mad_legacy_u16"),
    ("VOP3Op", "V_CVT_PKRTZ_F16_F32", "V_CVT_PK_RTZ_F16_F32_E64", "the same pseudocode under gfx11's name (the search by pseudocode also compares operand sizes, and RDNA3's operand table names the VOP3 form without the `_E64` its pseudocode table has)"),
    // Program control whose pseudocode gfx9 words otherwise (or gives none): the trap
    // (a trap ID to the handler, which the interpreter does not run: the dispatch stops
    // naming it), the halts, and the hints RDNA3 runs as no-ops (messages, priority and
    // performance levels, trace data, the instruction cache, wake-ups, the kill flag).
    ("SOPPOp", "S_TRAP", "S_TRAP", "the trap ID in SIMM16[7:0] to the trap handler, as on gfx11"),
    ("SOPPOp", "S_SETHALT", "S_SETHALT", "SIMM16[0] halts the wave, as on gfx11"),
    ("SOPPOp", "S_SENDMSGHALT", "S_SENDMSGHALT", "a message, then the wave halts, as on gfx11"),
    ("SOPPOp", "S_SENDMSG", "S_SENDMSG", "a message to the host or the shader processor's firmware (gfx9's ids differ from gfx11's, but none changes a compute wave's results)"),
    ("SOPPOp", "S_ICACHE_INV", "S_ICACHE_INV", "an instruction-cache invalidation (code is not modified while a dispatch runs)"),
    ("SOPPOp", "S_INCPERFLEVEL", "S_INCPERFLEVEL", "a performance-counter level, no effect on results"),
    ("SOPPOp", "S_DECPERFLEVEL", "S_DECPERFLEVEL", "as s_incperflevel"),
    ("SOPPOp", "S_TTRACEDATA", "S_TTRACEDATA", "thread-trace data, no effect on results"),
    ("SOPPOp", "S_WAKEUP", "S_WAKEUP", "wakes the workgroup's sleeping waves, which run one after the other here"),
    ("SOPPOp", "S_SETKILL", "S_SETKILL", "the wave's kill flag, which only graphics waves act on"),
    // The constant compares: gfx9's `tru` is gfx11's `t`, and its 16-bit `f`/`t` have
    // gfx11 twins in 32 bits only (the result does not read the operands).
    ("VOPCOp", "V_CMP_TRU_F16_E32", "V_CMP_T_F16_E32", "gfx11 names `tru` `t`: every active lane's bit set"),
    ("VOPCOp", "V_CMP_TRU_F32_E32", "V_CMP_T_F32_E32", "as v_cmp_tru_f16"),
    ("VOPCOp", "V_CMP_TRU_F64_E32", "V_CMP_T_F64_E32", "as v_cmp_tru_f16"),
    ("VOPCOp", "V_CMP_F_I16_E32", "V_CMP_F_I32_E32", "every active lane's bit clear, whatever the operands' size"),
    ("VOPCOp", "V_CMP_T_I16_E32", "V_CMP_T_I32_E32", "every active lane's bit set, whatever the operands' size"),
    ("VOPCOp", "V_CMP_F_U16_E32", "V_CMP_F_U32_E32", "as v_cmp_f_i16"),
    ("VOPCOp", "V_CMP_T_U16_E32", "V_CMP_T_U32_E32", "as v_cmp_t_i16"),
    ("VOP3Op", "V_CMP_TRU_F16_E64", "V_CMP_T_F16_E64", "as its VOPC form"),
    ("VOP3Op", "V_CMP_TRU_F32_E64", "V_CMP_T_F32_E64", "as its VOPC form"),
    ("VOP3Op", "V_CMP_TRU_F64_E64", "V_CMP_T_F64_E64", "as its VOPC form"),
    ("VOP3Op", "V_CMP_F_I16_E64", "V_CMP_F_I32_E64", "as its VOPC form"),
    ("VOP3Op", "V_CMP_T_I16_E64", "V_CMP_T_I32_E64", "as its VOPC form"),
    ("VOP3Op", "V_CMP_F_U16_E64", "V_CMP_F_U32_E64", "as its VOPC form"),
    ("VOP3Op", "V_CMP_T_U16_E64", "V_CMP_T_U32_E64", "as its VOPC form"),
];

/// The CDNA3 memory encodings, whose opcodes map by name ([`gfx11_name`]) (SMEM's
/// loads the interpreter reads by their own names).
const CDNA3_MEMORY: &[(&str, &str, &str)] = &[
    ("DSOp", "DSOp", "ds"),
    ("GLOBALOp", "GLOBALOp", "global"),
    ("FLATOp", "FLATOp", "flat"),
    ("SCRATCHOp", "SCRATCHOp", "scratch"),
    ("MUBUFOp", "MUBUFOp", "mubuf"),
];

/// A gfx9 memory opcode's gfx11 name: the data types by size (`dword` → `b32`,
/// `ubyte` → `u8`, `_x2` atomics → 64-bit), the 16-bit loads' `d16` first, the LDS
/// reads and writes as loads and stores, the atomics by their typed names.
fn gfx11_name(op: &str) -> String {
    let (seg, rest) = op.split_once('_').unwrap_or((op, ""));
    // Atomics: `GLOBAL_ATOMIC_SMIN_X2` → `GLOBAL_ATOMIC_MIN_I64`.
    if let Some(a) = rest.strip_prefix("ATOMIC_") {
        let (base, wide) = a.strip_suffix("_X2").map_or((a, false), |b| (b, true));
        let typed = match base {
            "SWAP" | "CMPSWAP" | "AND" | "OR" | "XOR" => format!("{base}_B{}", if wide { 64 } else { 32 }),
            "ADD" | "SUB" | "INC" | "DEC" => format!("{base}_U{}", if wide { 64 } else { 32 }),
            "SMIN" | "SMAX" => format!("{}_I{}", &base[1..], if wide { 64 } else { 32 }),
            "UMIN" | "UMAX" => format!("{}_U{}", &base[1..], if wide { 64 } else { 32 }),
            other => other.to_string(),
        };
        return format!("{seg}_ATOMIC_{typed}");
    }
    let types = [
        ("DWORDX2", "B64"),
        ("DWORDX3", "B96"),
        ("DWORDX4", "B128"),
        ("DWORDX8", "B256"),
        ("DWORDX16", "B512"),
        ("DWORD", "B32"),
        ("UBYTE", "U8"),
        ("SBYTE", "I8"),
        ("USHORT", "U16"),
        ("SSHORT", "I16"),
        ("BYTE", "B8"),
        ("SHORT", "B16"),
    ];
    let mut parts: Vec<String> = rest.split('_').map(str::to_string).collect();
    for p in parts.iter_mut() {
        if let Some(&(_, t)) = types.iter().find(|(g, _)| p == g) {
            *p = t.to_string();
        }
    }
    // The typed forms: `LOAD_FORMAT_D16_HI_X` → `LOAD_D16_HI_FORMAT_X`.
    let format = parts.iter().position(|p| p == "FORMAT");
    if let (Some(f), Some(d)) = (format, parts.iter().position(|p| p == "D16")) {
        let fmt = parts.remove(f);
        let d = if f < d { d - 1 } else { d };
        let after = if parts.get(d + 1).is_some_and(|p| p == "HI") {
            d + 2
        } else {
            d + 1
        };
        parts.insert(after, fmt);
    } else if let Some(d) = parts.iter().position(|p| p == "D16").filter(|&d| d > 0 && seg != "DS") {
        // `LOAD_U8_D16_HI` → `LOAD_D16_HI_U8`, `STORE_B16_D16_HI` → `STORE_D16_HI_B16`
        // (LDS keeps the type first).
        let ty = parts.remove(d - 1);
        parts.push(ty);
    }
    let name = format!("{seg}_{}", parts.join("_"));
    // LDS: reads and writes are loads and stores; the two-address forms say so.
    if seg == "DS" {
        return name
            .replace("DS_READ2ST64_", "DS_LOAD_2ADDR_STRIDE64_")
            .replace("DS_WRITE2ST64_", "DS_STORE_2ADDR_STRIDE64_")
            .replace("DS_READ2_", "DS_LOAD_2ADDR_")
            .replace("DS_WRITE2_", "DS_STORE_2ADDR_")
            .replace("DS_READ_", "DS_LOAD_")
            .replace("DS_WRITE_", "DS_STORE_")
            .replace("DS_WRXCHG2ST64_", "DS_STOREXCHG_2ADDR_STRIDE64_")
            .replace("DS_WRXCHG2_", "DS_STOREXCHG_2ADDR_")
            .replace("DS_WRXCHG_", "DS_STOREXCHG_")
            .replace("DS_CMPST_", "DS_CMPSTORE_");
    }
    name
}

/// The CDNA3 opcodes the RDNA3 interpreter runs as they are: per ALU encoding, each
/// with its RDNA3 number where RDNA3 has an opcode of the same name (VOP3's own
/// without CDNA3's `_E64`) or, renamed, the one opcode of the encoding with the same
/// pseudocode, and the pseudocode is the same text and the operands the same sizes
/// (their kinds differ in what each encoding allows, literals above all, not in
/// meaning); the memory encodings by their gfx11 names.
fn generate_cdna3(rdna3: &Path, cdna: &Path) -> Result<String> {
    let (t3, tc) = (generation(rdna3)?, generation(cdna)?);
    let mut out = String::from(
        "\
// @generated by `cargo xtask gen-lowering --cdna3` from tinygrad's RDNA3 and CDNA
// tables (enum.py, str_pcode.py, operands.py); do not edit.
//! The CDNA3 opcodes whose RDNA3 namesake (or renamed twin) has the same pseudocode
//! and operand sizes, with the RDNA3 number, per encoding; the memory opcodes by
//! their gfx11 names.
",
    );
    let sizes = |t: &Tables, k: &(String, String)| -> Option<Vec<String>> {
        t.operands.get(k).map(|v| {
            v.iter()
                .map(|o| o.split(' ').take(2).collect::<Vec<_>>().join(" "))
                .collect()
        })
    };
    // gfx9's SOPK pseudocode calls the 16-bit constant S0 (S1 in the compares, whose
    // S0 is the register); gfx11's calls it SIMM16.
    let cdna_code = |k: &(String, String)| -> Option<String> {
        let code = short_form(&tc, k)?;
        Some(if k.0 != "SOPKOp" {
            code.clone()
        } else if code.contains("S1.") {
            code.replace("S1.", "SIMM16.")
        } else {
            code.replace("S0.", "SIMM16.")
        })
    };
    let rdna3_code = |k: &(String, String)| short_form(&t3, k);
    let same_code = |kc: &(String, String), k3: &(String, String)| -> bool {
        let (Some(a), Some(b)) = (cdna_code(kc), rdna3_code(k3)) else {
            return false;
        };
        let a = &a;
        let operands = match (sizes(&tc, kc), sizes(&t3, k3)) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        };
        packed(a) == packed(b) && operands
    };
    let mut total = 0;
    // The ALU encodings RDNA4's table lowers, but VOPD (CDNA3 has none).
    for &(class_c, name) in ENCODINGS.iter().filter(|(c, _)| *c != "VOPDOp") {
        let class_3 = class_c;
        let (Some(oc), Some(o3)) = (tc.ops.get(class_c), t3.ops.get(class_3)) else {
            return Err(format!("{class_c} is missing from a generation's enum.py").into());
        };
        let pairs: Vec<(u16, u16, &str)> = oc
            .iter()
            .filter_map(|(op, &nc)| {
                // CDNA3's pseudocode and operand tables name VOP3's own opcodes without
                // the enum's `_E64`.
                let kc = [op.as_str(), op.strip_suffix("_E64").unwrap_or(op)]
                    .into_iter()
                    .map(|n| (class_c.to_string(), n.to_string()))
                    .find(|k| short_form(&tc, k).is_some())
                    .unwrap_or_else(|| (class_c.to_string(), op.clone()));
                if let Some(&(_, _, theirs, _)) = CDNA3_SAME_MEANING.iter().find(|r| r.0 == class_c && r.1 == op) {
                    return o3.get(theirs).map(|&n3| (nc, n3, op.as_str()));
                }
                let by_name = [op.as_str(), op.strip_suffix("_E64").unwrap_or(op)]
                    .into_iter()
                    .find(|n| o3.contains_key(*n));
                let name3 = by_name.or_else(|| {
                    let code = cdna_code(&kc)?;
                    let mut found = o3.keys().filter(|n| {
                        let k3 = (class_3.to_string(), n.to_string());
                        rdna3_code(&k3) == Some(&code) && sizes(&t3, &k3) == sizes(&tc, &kc)
                    });
                    let n = found.next()?;
                    found.next().is_none().then_some(n.as_str())
                })?;
                let k3 = (class_3.to_string(), name3.to_string());
                same_code(&kc, &k3).then_some((nc, o3[name3], op.as_str()))
            })
            .collect();
        total += pairs.len();
        let doc = format!("{class_c}: {} of CDNA3's {} opcodes.", pairs.len(), oc.len());
        write_map(&mut out, &doc, name, pairs)?;
    }
    // CDNA3's VOP2 opcodes that RDNA3 has in VOP3 only, by name or renamed, with the
    // same pseudocode: the carry-out forms (`v_add_co_u32_e32`, whose carry VOP3SD
    // writes to the SGPR pair it names: VCC here) and the 16-bit ones
    // (`v_add_u16_e32`, gfx11's `v_add_nc_u16`).
    for (class_3, name) in [("VOP3SDOp", "vop2_as_vop3sd"), ("VOP3Op", "vop2_as_vop3")] {
        let (oc, o3) = (&tc.ops["VOP2Op"], &t3.ops[class_3]);
        let pairs: Vec<(u16, u16, &str)> = oc
            .iter()
            .filter(|(op, _)| {
                let k = ("VOP2Op".to_string(), op.to_string());
                !t3.ops["VOP2Op"].contains_key(*op) || !same_code(&k, &k)
            })
            .filter_map(|(op, &nc)| {
                let kc = ("VOP2Op".to_string(), op.clone());
                let code = cdna_code(&kc)?;
                let base = op.strip_suffix("_E32")?;
                let name3 = o3.contains_key(base).then_some(base).or_else(|| {
                    let mut found = o3
                        .keys()
                        .filter(|n| t3.code.get(&(class_3.to_string(), n.to_string())) == Some(&code));
                    let n = found.next()?;
                    found.next().is_none().then_some(n.as_str())
                })?;
                let k3 = (class_3.to_string(), name3.to_string());
                same_code(&kc, &k3).then_some((nc, o3[name3], op.as_str()))
            })
            .collect();
        let doc = format!(
            "VOP2Op: {} CDNA3 opcodes that RDNA3 has as {class_3} only, with that number.",
            pairs.len()
        );
        write_map(&mut out, &doc, name, pairs)?;
    }
    for &(class_c, class_3, name) in CDNA3_MEMORY {
        let doc = |n: usize, of: usize| format!("{class_c}: {n} of CDNA3's {of} opcodes, by their gfx11 names.");
        by_name(&mut out, (&tc, class_c), (&t3, class_3), name, gfx11_name, doc)?;
    }
    if total == 0 {
        return Err("no CDNA3 opcode has an RDNA3 namesake with the same pseudocode".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_gfx9_memory_opcodes_as_gfx11_does() {
        for (gfx9, gfx11) in [
            ("GLOBAL_LOAD_DWORDX4", "GLOBAL_LOAD_B128"),
            ("GLOBAL_LOAD_UBYTE_D16_HI", "GLOBAL_LOAD_D16_HI_U8"),
            ("GLOBAL_STORE_SHORT_D16_HI", "GLOBAL_STORE_D16_HI_B16"),
            ("GLOBAL_ATOMIC_SMIN_X2", "GLOBAL_ATOMIC_MIN_I64"),
            ("FLAT_ATOMIC_CMPSWAP", "FLAT_ATOMIC_CMPSWAP_B32"),
            ("S_LOAD_DWORDX8", "S_LOAD_B256"),
            ("DS_READ2ST64_B32", "DS_LOAD_2ADDR_STRIDE64_B32"),
            ("DS_WRITE_B8_D16_HI", "DS_STORE_B8_D16_HI"),
            ("BUFFER_LOAD_FORMAT_D16_XY", "BUFFER_LOAD_D16_FORMAT_XY"),
            ("BUFFER_STORE_FORMAT_D16_HI_X", "BUFFER_STORE_D16_HI_FORMAT_X"),
            ("BUFFER_LOAD_FORMAT_XYZ", "BUFFER_LOAD_FORMAT_XYZ"),
            ("DS_WRXCHG_RTN_B32", "DS_STOREXCHG_RTN_B32"),
        ] {
            assert_eq!(gfx11_name(gfx9), gfx11, "{gfx9}");
        }
    }

    #[test]
    fn reads_python_string_literals() {
        assert_eq!(unquote(r"'a\nb'").as_deref(), Some("a\nb"));
        assert_eq!(unquote(r#""it's \"x\"""#).as_deref(), Some("it's \"x\""));
        assert_eq!(unquote(r"'back\\slash'").as_deref(), Some(r"back\slash"));
        assert_eq!(unquote("'open"), None);
        assert_eq!(unquote(r"'\q'"), None, "unknown escapes are refused");
        let p = pseudocode("PCODE = {\n  VOP1Op.V_NOP_E32: 'nothing // at all\\n  here',\n}\n").unwrap();
        assert_eq!(
            p[&("VOP1Op".into(), "V_NOP_E32".into())],
            "nothing here",
            "comments dropped"
        );
        assert!(pseudocode("  VOP1Op.X: unquoted,\n").is_err());
        let o = operands("  VOP3POp.V_X: {\"src0\": (Fmt.FMT_A, 128, OpType.OPR_VGPR), \"vdst\": (Fmt.FMT_B, 256, OpType.OPR_VGPR)},\n").unwrap();
        assert_eq!(
            o[&("VOP3POp".into(), "V_X".into())],
            [
                "src0 128 OpType.OPR_VGPR Fmt.FMT_A",
                "vdst 256 OpType.OPR_VGPR Fmt.FMT_B"
            ]
        );
        let v = operands("  VOP3Op.V_Y: {\"vsrc0\": (Fmt.FMT_A, 32, OpType.OPR_VGPR)},\n").unwrap();
        assert_eq!(
            v[&("VOP3Op".into(), "V_Y".into())],
            ["src0 32 OpType.OPR_VGPR Fmt.FMT_A"],
            "vsrc0 is src0"
        );
    }
}
