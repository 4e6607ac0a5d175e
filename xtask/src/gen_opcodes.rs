//! `cargo xtask gen-opcodes [--gen rdna3|rdna4|cdna3] ENUM_PY [--check]`: generates
//! `crates/amd-isa/src/<gen>/generated/opcodes.rs`, the opcode of every instruction per
//! encoding of that generation, named as the ISA names it, from the tables tinygrad
//! generates from AMD's machine-readable ISA (`tinygrad/runtime/autogen/amd/<gen>/enum.py`
//! in tinygrad's tree, and `operands.py` beside it; the files are read, not run). Each
//! encoding becomes an enum (`Vop1::V_MOV_B32 = 1`) with `from_op` and `name`, and a
//! `SPEC` table of all of them for the interpreter's coverage report; VOP3's enum also
//! gets `halves`, which operands the ISA's operand table makes 16 bits wide (those
//! VOP3's op_sel picks a half of), and the ALU encodings' enums `result_format`, the
//! float format of the destination the operand table gives (which the interpreter's
//! rounding modes and output modifiers go by).
//!
//! From `ins.py` beside them it also writes `generated/fields.rs`, where every field of
//! every encoding lies (see `gen_fields`), and for CDNA3 from `operands.py`
//! `generated/operands.rs`, every opcode's operands (see `gen_operands`).
//!
//! Get the inputs with `git -C <tinygrad> show HEAD:tinygrad/runtime/autogen/amd/rdna3/enum.py > enum.py`
//! and the same for `operands.py` and `ins.py`, into one directory (`rdna4/` for RDNA4,
//! `cdna/` for CDNA3).

use std::fmt::Write as _;

use crate::Result;

/// A generation: its name as the ISA documents name it, where its table goes, and its
/// encodings (tinygrad's class, our enum).
struct Generation {
    name: &'static str,
    output: &'static str,
    fields: &'static str,
    /// Its encodings, in the order the tables list them: lists shared with other
    /// generations, then its own.
    encodings: &'static [&'static [(&'static str, &'static str)]],
    /// `ins.py`'s forms left out of the field table.
    left_out: &'static [&'static str],
    /// Where its operand table goes (`gen_operands`), if it has one.
    operands: Option<&'static str>,
}

const RDNA3: Generation = Generation {
    name: "RDNA3",
    output: "crates/amd-isa/src/rdna3/generated/opcodes.rs",
    fields: "crates/amd-isa/src/rdna3/generated/fields.rs",
    encodings: &[COMMON_ENCODINGS, RDNA_ENCODINGS, RDNA3_ENCODINGS],
    left_out: &[],
    operands: None,
};

const RDNA4: Generation = Generation {
    name: "RDNA4",
    output: "crates/amd-isa/src/rdna4/generated/opcodes.rs",
    fields: "crates/amd-isa/src/rdna4/generated/fields.rs",
    encodings: &[COMMON_ENCODINGS, RDNA_ENCODINGS, RDNA4_ENCODINGS],
    left_out: &[],
    operands: None,
};

/// CDNA3 (gfx940 to gfx942), from tinygrad's `cdna` tables, which are CDNA4's
/// (gfx950): a superset, so the tables name some opcodes gfx942 lacks. Its four-dword
/// `VOP3PX2` form (gfx950's scaled matrix instructions) is left out.
const CDNA3: Generation = Generation {
    name: "CDNA3",
    output: "crates/amd-isa/src/cdna3/generated/opcodes.rs",
    fields: "crates/amd-isa/src/cdna3/generated/fields.rs",
    encodings: &[COMMON_ENCODINGS, CDNA3_ENCODINGS],
    left_out: &["VOP3PX2"],
    operands: Some("crates/amd-isa/src/cdna3/generated/operands.rs"),
};

/// The encodings every generation has (tinygrad's class, our enum).
const COMMON_ENCODINGS: &[(&str, &str)] = &[
    ("SOP1Op", "Sop1"),
    ("SOP2Op", "Sop2"),
    ("SOPKOp", "Sopk"),
    ("SOPCOp", "Sopc"),
    ("SOPPOp", "Sopp"),
    ("SMEMOp", "Smem"),
    ("VOP1Op", "Vop1"),
    ("VOP2Op", "Vop2"),
    ("VOPCOp", "Vopc"),
    ("VOP3Op", "Vop3"),
    ("VOP3SDOp", "Vop3sd"),
    ("VOP3POp", "Vop3p"),
];

/// The encodings RDNA3 and RDNA4 share besides those.
const RDNA_ENCODINGS: &[(&str, &str)] = &[("VOPDOp", "Vopd"), ("DSOp", "Ds")];

/// CDNA3's own encodings (the GCN lineage's memory formats; its VOP3 takes VOP3B's
/// carry-out form as `Vop3sd`, its VOP3P the matrix (MFMA) instructions).
const CDNA3_ENCODINGS: &[(&str, &str)] = &[
    ("DSOp", "Ds"),
    ("FLATOp", "Flat"),
    ("GLOBALOp", "Global"),
    ("SCRATCHOp", "Scratch"),
    ("MUBUFOp", "Mubuf"),
    ("MTBUFOp", "Mtbuf"),
];

/// RDNA4's own encodings: the memory ones renamed and split (VBUFFER for MUBUF and
/// MTBUF, VIMAGE and VSAMPLE for MIMG, VFLAT/VGLOBAL/VSCRATCH, VEXPORT, VDSDIR).
const RDNA4_ENCODINGS: &[(&str, &str)] = &[
    ("VFLATOp", "Vflat"),
    ("VGLOBALOp", "Vglobal"),
    ("VSCRATCHOp", "Vscratch"),
    ("VBUFFEROp", "Vbuffer"),
    ("VIMAGEOp", "Vimage"),
    ("VSAMPLEOp", "Vsample"),
    ("VEXPORTOp", "Vexport"),
    ("VINTERPOp", "Vinterp"),
    ("VDSDIROp", "Vdsdir"),
];

/// RDNA3's own encodings.
const RDNA3_ENCODINGS: &[(&str, &str)] = &[
    ("FLATOp", "Flat"),
    ("GLOBALOp", "Global"),
    ("SCRATCHOp", "Scratch"),
    ("MUBUFOp", "Mubuf"),
    ("MTBUFOp", "Mtbuf"),
    ("MIMGOp", "Mimg"),
    ("EXPOp", "Exp"),
    ("VINTERPOp", "Vinterp"),
    ("LDSDIROp", "Ldsdir"),
];

/// A class of the input: its name and its `(opcode name, number)` pairs.
pub type Class = (String, Vec<(String, u16)>);

/// `class NAME(ReprEnum):` blocks of `  OP = N` lines.
pub fn parse(text: &str) -> Result<Vec<Class>> {
    let mut classes: Vec<Class> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("class ") {
            let name = rest.split('(').next().unwrap_or(rest).trim().to_string();
            classes.push((name, Vec::new()));
        } else if let Some(body) = line.strip_prefix("  ") {
            let Some((op, value)) = body.split_once(" = ") else {
                continue;
            };
            let value = value.trim();
            // `V_NOP = V_NOP_E32`: a second name of an opcode listed already.
            if value.starts_with(|c: char| c.is_ascii_uppercase()) {
                continue;
            }
            let value: u16 = value.parse().map_err(|e| format!("line {}: {value:?}: {e}", n + 1))?;
            let op = op.trim();
            if !op
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                return Err(format!("line {}: {op:?} is not an opcode name", n + 1).into());
            }
            classes
                .last_mut()
                .ok_or_else(|| format!("line {}: an opcode outside a class", n + 1))?
                .1
                .push((op.to_string(), value));
        }
    }
    Ok(classes)
}

/// VOP3's 16-bit operands from `operands.py` (`  VOP3Op.V_ADD_F16: {"src0": (Fmt…,
/// 16, OpType…), …},` lines): per opcode name of `ops`, bit k for source k (`src0` or
/// `vsrc0`, `src1`, `src2`), bit 3 for `vdst`. The table names some opcodes by their
/// alias without `_E64`.
fn halves(operands: &str, ops: &[(String, u16)]) -> Result<Vec<(String, u8)>> {
    let mut out = Vec::new();
    for (n, line) in operands.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("VOP3Op.") else {
            continue;
        };
        let (name, fields) = rest
            .split_once(": {")
            .ok_or_else(|| format!("operands line {}: no field list", n + 1))?;
        let op = [name.to_string(), format!("{name}_E64")]
            .into_iter()
            .find(|c| ops.iter().any(|(o, _)| o == c))
            .ok_or_else(|| format!("operands line {}: no VOP3 opcode {name}", n + 1))?;
        let mut mask = 0u8;
        // `"src0": (Fmt.FMT_NUM_F16, 16, OpType.OPR_VGPR)`: the size follows the format.
        for field in fields.split("), ") {
            let Some((key, value)) = field.split_once(": (") else {
                continue;
            };
            let size = value.split(", ").nth(1).unwrap_or("");
            let bit = match key.trim().trim_matches('"') {
                "src0" | "vsrc0" => 1,
                "src1" => 2,
                "src2" => 4,
                "vdst" => 8,
                _ => 0,
            };
            if size == "16" {
                mask |= bit;
            }
        }
        if mask != 0 {
            out.push((op, mask));
        }
    }
    if out.is_empty() {
        return Err("operands.py names no 16-bit VOP3 operand".into());
    }
    out.sort_by_key(|(op, _)| ops.iter().position(|(o, _)| o == op));
    Ok(out)
}

/// The float format of each opcode's result, from `operands.py` (`  VOP1Op.V_CVT_F32_I32:
/// {"vdst": (Fmt.FMT_NUM_F32, …), …},` lines: the destination's format, `vdst`, VOPD's
/// `vdsty` or a scalar `sdst`): per opcode name of `ops` of `class` (the table names some
/// VOP3 opcodes by their alias without `_E64`), the `ResultFormat` variant; integer,
/// bit and mask results have none.
fn result_formats(operands: &str, class: &str, ops: &[(String, u16)]) -> Result<Vec<(String, &'static str)>> {
    let prefix = format!("{class}.");
    let mut out = Vec::new();
    for (n, line) in operands.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix(&prefix) else {
            continue;
        };
        let (name, fields) = rest
            .split_once(": {")
            .ok_or_else(|| format!("operands line {}: no field list", n + 1))?;
        let Some(op) = [name.to_string(), format!("{name}_E64"), format!("{name}_E32")]
            .into_iter()
            .find(|c| ops.iter().any(|(o, _)| o == c))
        else {
            return Err(format!("operands line {}: no {class} opcode {name}", n + 1).into());
        };
        // The vector destination where there is one (VOP3SD's `sdst` is its carry
        // or condition mask), else the scalar one.
        let field = |names: &[&str]| {
            fields.split("), ").find_map(|field| {
                let (key, value) = field.split_once(": (")?;
                names.contains(&key.trim().trim_matches('"')).then_some(value)
            })
        };
        let dst = field(&["vdst", "vdsty"]).or_else(|| field(&["sdst"]));
        let fmt = dst.and_then(|v| v.split(',').next()).map(str::trim);
        let variant = match fmt {
            Some("Fmt.FMT_NUM_F16" | "Fmt.FMT_NUM_PK2_F16" | "Fmt.FMT_WMMA_DC_F16") => "F16",
            Some("Fmt.FMT_NUM_BF16" | "Fmt.FMT_NUM_PK2_BF16" | "Fmt.FMT_WMMA_DC_BF16") => "Bf16",
            Some("Fmt.FMT_NUM_F32" | "Fmt.FMT_WMMA_DC_F32") => "F32",
            Some("Fmt.FMT_NUM_F64") => "F64",
            _ => continue,
        };
        out.push((op, variant));
    }
    out.sort_by_key(|(op, _)| ops.iter().position(|(o, _)| o == op));
    Ok(out)
}

fn generate(generation: &Generation, text: &str, operands: &str) -> Result<String> {
    let classes = parse(text)?;
    let g = generation.name;
    let mut out = format!(
        "\
// @generated by `cargo xtask gen-opcodes` from tinygrad's {g} tables (enum.py and
// operands.py, generated from AMD's {g} ISA XML); do not edit.
//! Every {g} opcode per encoding, named as the ISA names it.

"
    );
    let (mut spec, mut consts) = (String::new(), String::new());
    for &(class, name) in generation.encodings.iter().copied().flatten() {
        let ops = &classes
            .iter()
            .find(|(c, _)| c == class)
            .ok_or_else(|| format!("no class {class} in the input"))?
            .1;
        if ops.is_empty() {
            return Err(format!("{class} has no opcodes").into());
        }
        out.push_str(&opcode_enum(name, ops));
        if matches!(
            name,
            "Vop1" | "Vop2" | "Vop3" | "Vop3sd" | "Vop3p" | "Vopd" | "Sop1" | "Sop2"
        ) {
            out.push_str(&result_format_fn(&result_formats(operands, class, ops)?));
        }
        if name == "Vop3" {
            let arms = crate::lines(&halves(operands, ops)?, |(op, mask)| {
                format!("            Self::{op} => {mask:#06b},")
            });
            write!(
                out,
                "
    /// Which operands the ISA's operand table makes 16 bits wide: bit k for
    /// source k, bit 3 for the destination (the operands VOP3's op_sel picks
    /// a half of).
    pub const fn halves(self) -> u8 {{
        match self {{
{arms}            _ => 0,
        }}
    }}
"
            )?;
        }
        out.push_str("}\n\n");
        let lower = name.to_lowercase();
        let numbers = crate::lines(ops, |(op, v)| format!("        pub const {op}: u16 = {v};"));
        write!(
            consts,
            "    /// {name} opcode numbers, for matching a raw opcode by name.
    #[allow(missing_docs)]
    pub mod {lower} {{
{numbers}    }}
"
        )?;
        let names = crate::lines(ops, |(op, v)| format!("        ({v}, {:?}),", op.to_lowercase()));
        write!(spec, "    (\"{}\", &[\n{names}    ]),\n", name.to_uppercase())?;
    }
    write!(
        out,
        "\
/// Every encoding (upper case, as the ISA names it) with its opcodes and names.
pub static SPEC: &[(&str, &[(u16, &str)])] = &[
{spec}];

/// Opcode numbers as constants, per encoding (`op::vop3::V_ADD_F32_E64`).
pub mod op {{
{consts}}}
"
    )?;
    Ok(out)
}

/// An encoding's opcodes as an enum with `from_op` and `name`, its `impl` left open
/// for the properties that follow.
fn opcode_enum(name: &str, ops: &[(String, u16)]) -> String {
    let n = ops.len();
    let variants = crate::lines(ops, |(op, v)| format!("    {op} = {v},"));
    let by_number = crate::lines(ops, |(op, v)| format!("            {v} => Self::{op},"));
    let names = crate::lines(ops, |(op, _)| {
        format!("            Self::{op} => {:?},", op.to_lowercase())
    });
    format!(
        "\
/// {name} opcodes ({n} of them).
#[allow(non_camel_case_types, missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum {name} {{
{variants}}}

impl {name} {{
    /// The opcode numbered `op`, if the encoding has one.
    pub const fn from_op(op: u16) -> Option<Self> {{
        Some(match op {{
{by_number}            _ => return None,
        }})
    }}

    /// The name as LLVM spells it (lower case).
    pub const fn name(self) -> &'static str {{
        match self {{
{names}        }}
    }}
"
    )
}

/// `result_format`, from each opcode's destination format (none for the rest).
fn result_format_fn(formats: &[(String, &str)]) -> String {
    let body = if formats.is_empty() {
        "        let _ = self;\n        None\n".to_string()
    } else {
        let arms = crate::lines(formats, |(op, f)| format!("            Self::{op} => {f},"));
        format!(
            "        use crate::float::ResultFormat::*;
        Some(match self {{
{arms}            _ => return None,
        }})
"
        )
    };
    format!(
        "
    /// The float format of the result, as the ISA's operand table gives its
    /// destination's (`None` for an integer, bit or mask result).
    pub const fn result_format(self) -> Option<crate::float::ResultFormat> {{
{body}    }}
"
    )
}

pub fn run(args: &[String]) -> Result<()> {
    const USAGE: &str = "usage: cargo xtask gen-opcodes [--gen rdna3|rdna4|cdna3] ENUM_PY [--check]";
    let (generation, rest) = match args {
        [g, name, rest @ ..] if g == "--gen" => match name.as_str() {
            "rdna3" => (&RDNA3, rest),
            "rdna4" => (&RDNA4, rest),
            "cdna3" => (&CDNA3, rest),
            _ => return Err(USAGE.into()),
        },
        rest => (&RDNA3, rest),
    };
    let (input, check) = match rest {
        [p] => (p, false),
        [p, c] if c == "--check" => (p, true),
        _ => return Err(USAGE.into()),
    };
    let text = std::fs::read_to_string(input).map_err(|e| format!("{input}: {e}"))?;
    let beside = std::path::Path::new(input).with_file_name("operands.py");
    let operands = std::fs::read_to_string(&beside).map_err(|e| format!("{}: {e}", beside.display()))?;
    let fresh = generate(generation, &text, &operands)?;
    let ins = std::path::Path::new(input).with_file_name("ins.py");
    let ins = std::fs::read_to_string(&ins).map_err(|e| format!("{}: {e}", ins.display()))?;
    let fields = crate::gen_fields::generate(generation.name, &ins, generation.left_out)?;
    let gen_flag = if generation.name == "RDNA3" {
        String::new()
    } else {
        format!("--gen {} ", generation.name.to_lowercase())
    };
    let regen = format!("cargo xtask gen-opcodes {gen_flag}{input}");
    crate::write_or_check(generation.output, &fresh, check, &regen)?;
    crate::write_or_check(generation.fields, &fields, check, &regen)?;
    if let Some(output) = generation.operands {
        // The decoder's `Encoding` takes VOP3's carry-out forms (`Vop3sd`) as VOP3.
        let encodings: Vec<(&str, &str)> = generation
            .encodings
            .iter()
            .copied()
            .flatten()
            .map(|&(class, name)| (class, if name == "Vop3sd" { "Vop3" } else { name }))
            .collect();
        let all = format!("{operands}\n{}", crate::gen_operands::CDNA3_ONLY);
        let table = crate::gen_operands::generate(generation.name, &all, &parse(&text)?, &encodings)?;
        crate::write_or_check(output, &table, check, &regen)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_classes_and_refuses_garbage() {
        let ok = "class SOP1Op(ReprEnum):\n  S_MOV_B32 = 0\n  S_MOV_B64 = 1\n\nclass X(ReprEnum):\n  A = 3\n";
        let c = parse(ok).unwrap();
        assert_eq!(c[0].1, [("S_MOV_B32".to_string(), 0), ("S_MOV_B64".to_string(), 1)]);
        assert!(parse("class A(ReprEnum):\n  B = x\n").is_err());
        let alias = parse("class A(ReprEnum):\n  B_E32 = 1\n  B = B_E32\n").unwrap();
        assert_eq!(alias[0].1.len(), 1, "aliases are skipped");
        assert!(parse("class A(ReprEnum):\n  B = 70000\n").is_err());
        assert!(parse("  B = 1\n").is_err());
        assert!(parse("class A(ReprEnum):\n  b() = 1\n").is_err());
    }

    #[test]
    fn reads_sixteen_bit_operands() {
        let ops = [("V_ADD_F16_E64".to_string(), 306), ("V_MAD_U32_U16".to_string(), 601)];
        let text = concat!(
            "  VOP3Op.V_ADD_F16: {\"src0\": (Fmt.FMT_NUM_F16, 16, OpType.OPR_VGPR), ",
            "\"src1\": (Fmt.FMT_NUM_F16, 16, OpType.OPR_SRC), \"vdst\": (Fmt.FMT_NUM_F16, 16, OpType.OPR_VGPR)},\n",
            "  VOP3Op.V_MAD_U32_U16: {\"src0\": (Fmt.FMT_NUM_U16, 16, OpType.OPR_VGPR), ",
            "\"src2\": (Fmt.FMT_NUM_U32, 32, OpType.OPR_SRC), \"vdst\": (Fmt.FMT_NUM_U32, 32, OpType.OPR_VGPR)},\n",
        );
        assert_eq!(
            halves(text, &ops).unwrap(),
            [
                ("V_ADD_F16_E64".to_string(), 0b1011),
                ("V_MAD_U32_U16".to_string(), 0b0001)
            ]
        );
        assert!(halves("  VOP3Op.V_NONE: {\"src0\": (F, 16, O)},\n", &ops).is_err());
    }
}
