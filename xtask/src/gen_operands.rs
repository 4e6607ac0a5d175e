//! `generated/operands.rs` of a generation (CDNA3 today): every opcode's operands as
//! the operand table tinygrad generates from AMD's machine-readable ISA gives them
//! (`operands.py`: `  VOP2Op.V_ADD_F32: {"src0": (Fmt.FMT_NUM_F32, 32,
//! OpType.OPR_SRC), …},` lines): the field, its width in bits and its kind. The
//! disassembler takes from it how many registers each operand spans and whether it
//! may be an AccVGPR; the interpreter will take the same. For CDNA3 the two opcodes
//! gfx950 dropped are added by hand ([`CDNA3_ONLY`]).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::Result;
use crate::gen_opcodes::Class;

/// Operand lines (in `operands.py`'s syntax) of the gfx940–gfx942 opcodes that the
/// CDNA4 table `operands.py` no longer lists, as the CDNA3 ISA guide gives them: the
/// two XF32 matrix multiplies (two packed sources of two dwords each; four and sixteen
/// accumulators).
pub const CDNA3_ONLY: &str = concat!(
    "  VOP3POp.V_MFMA_F32_16X16X8_XF32: {",
    "\"src0\": (Fmt.FMT_NUM_PK2_F32, 64, OpType.OPR_SRC_VGPR_OR_ACCVGPR), ",
    "\"src1\": (Fmt.FMT_NUM_PK2_F32, 64, OpType.OPR_SRC_VGPR_OR_ACCVGPR), ",
    "\"src2\": (Fmt.FMT_NUM_PK4_F32, 128, OpType.OPR_SRC_VGPR_OR_ACCVGPR_OR_CONST), ",
    "\"vdst\": (Fmt.FMT_NUM_PK4_F32, 128, OpType.OPR_VGPR_OR_ACCVGPR)},\n",
    "  VOP3POp.V_MFMA_F32_32X32X4_XF32: {",
    "\"src0\": (Fmt.FMT_NUM_PK2_F32, 64, OpType.OPR_SRC_VGPR_OR_ACCVGPR), ",
    "\"src1\": (Fmt.FMT_NUM_PK2_F32, 64, OpType.OPR_SRC_VGPR_OR_ACCVGPR), ",
    "\"src2\": (Fmt.FMT_NUM_PK16_F32, 512, OpType.OPR_SRC_VGPR_OR_ACCVGPR_OR_CONST), ",
    "\"vdst\": (Fmt.FMT_NUM_PK16_F32, 512, OpType.OPR_VGPR_OR_ACCVGPR)},\n",
);

/// One operand line's parts: (field, bits, kind, float), the kind without `OPR_`;
/// `float` where the format's elements are floats (F16, BF16, F32, F64) — the
/// operands that take the float input modifiers (neg, abs).
type Parsed = (String, u16, String, bool);

/// The operand entries of `class` in `operands`, each by its opcode name as `ops`
/// spells it (the table names some opcodes without their `_E32`/`_E64` suffix).
fn entries(operands: &str, class: &str, ops: &[(String, u16)]) -> Result<Vec<(u16, Vec<Parsed>)>> {
    let prefix = format!("{class}.");
    let mut out = Vec::new();
    for (n, line) in operands.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix(&prefix) else {
            continue;
        };
        let at = || format!("operands line {}", n + 1);
        let (name, fields) = rest
            .split_once(": {")
            .ok_or_else(|| format!("{}: no field list", at()))?;
        let number = [name.to_string(), format!("{name}_E64"), format!("{name}_E32")]
            .iter()
            .find_map(|c| ops.iter().find(|(o, _)| o == c).map(|&(_, v)| v))
            .ok_or_else(|| format!("{}: no {class} opcode {name}", at()))?;
        let mut parsed = Vec::new();
        // `"src0": (Fmt.FMT_NUM_F32, 32, OpType.OPR_SRC)`
        for field in fields.trim_end_matches(['}', ',']).split("), ") {
            let (key, value) = field
                .split_once(": (")
                .ok_or_else(|| format!("{}: field {field:?}", at()))?;
            let parts: Vec<&str> = value.trim_end_matches(')').split(", ").collect();
            let [fmt, bits, kind] = parts.as_slice() else {
                return Err(format!("{}: field {field:?}", at()).into());
            };
            let bits: u16 = bits.parse().map_err(|_| format!("{}: width {bits:?}", at()))?;
            let kind = kind
                .strip_prefix("OpType.OPR_")
                .ok_or_else(|| format!("{}: kind {kind:?}", at()))?;
            let element = fmt.rsplit('_').next().unwrap_or("");
            let float = matches!(element, "F16" | "BF16" | "F32" | "F64");
            parsed.push((key.trim().trim_matches('"').to_string(), bits, kind.to_string(), float));
        }
        out.push((number, parsed));
    }
    out.sort_by_key(|&(op, _)| op);
    if let Some(p) = out.windows(2).find(|p| p[0].0 == p[1].0) {
        return Err(format!("{class} opcode {} is listed twice", p[0].0).into());
    }
    Ok(out)
}

/// `SRC_VGPR_OR_ACCVGPR` as `SrcVgprOrAccvgpr`, `src0` as `Src0`.
fn camel(s: &str) -> String {
    s.split('_')
        .map(|w| {
            let w = w.to_lowercase();
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The operand table of a generation: `encodings` are (tinygrad's class, the decoder's
/// `Encoding` variant) pairs; `classes` the opcode classes of `enum.py`.
pub fn generate(name: &str, operands: &str, classes: &[Class], encodings: &[(&str, &str)]) -> Result<String> {
    let mut arms = String::new();
    let (mut fields, mut kinds) = (BTreeSet::new(), BTreeSet::new());
    for &(class, variant) in encodings {
        let ops = &classes
            .iter()
            .find(|(c, _)| c == class)
            .ok_or_else(|| format!("no class {class} in the input"))?
            .1;
        let list = entries(operands, class, ops)?;
        if list.is_empty() {
            return Err(format!("operands.py has no {class} entry").into());
        }
        for (op, parsed) in list {
            let items: Vec<String> = parsed
                .iter()
                .map(|(field, bits, kind, float)| {
                    fields.insert(camel(field));
                    kinds.insert(camel(kind));
                    format!(
                        "O {{ field: F::{}, bits: {bits}, kind: K::{}, float: {float} }}",
                        camel(field),
                        camel(kind)
                    )
                })
                .collect();
            writeln!(arms, "        (E::{variant}, {op}) => &[{}],", items.join(", "))?;
        }
    }
    let fields = crate::lines(&fields.into_iter().collect::<Vec<_>>(), |f| format!("    {f},"));
    let kinds = crate::lines(&kinds.into_iter().collect::<Vec<_>>(), |k| {
        let upper = k
            .chars()
            .enumerate()
            .flat_map(|(i, c)| {
                let sep = (i > 0 && c.is_uppercase()).then_some('_');
                sep.into_iter().chain(c.to_uppercase())
            })
            .collect::<String>();
        format!("    /// `OPR_{upper}` in AMD's operand table.\n    {k},")
    });
    Ok(format!(
        "\
// @generated by `cargo xtask gen-opcodes` from tinygrad's {name} tables (operands.py,
// generated from AMD's {name} ISA XML); do not edit.
//! Every {name} opcode's operands as AMD's operand table gives them: the instruction
//! field, its width in bits and its kind.

use super::Encoding as E;

/// An instruction field that carries an operand (as AMD's operand table names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Field {{
{fields}}}
use Field as F;

/// What an operand field may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {{
{kinds}}}
use Kind as K;

/// One operand of an opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Operand {{
    /// The field it is in.
    pub field: Field,
    /// Its width in bits (a register range of `bits / 32` registers, at least one).
    pub bits: u16,
    /// What it may name.
    pub kind: Kind,
    /// Whether its values are floats (F16, BF16, F32, F64 elements): it takes the
    /// float input modifiers (neg, abs).
    pub float: bool,
}}

use Operand as O;

/// The operands of opcode `op` of encoding `enc` (VOP3's carry-out forms under
/// `Vop3`); none for an opcode the table does not list.
pub fn operands(enc: E, op: u16) -> &'static [Operand] {{
    match (enc, op) {{
{arms}        _ => &[],
    }}
}}
"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_operand_lines_and_refuses_garbage() {
        let ops = [("V_ADD_F32_E32".to_string(), 1), ("V_NOP".to_string(), 0)];
        let text = concat!(
            "  VOP2Op.V_ADD_F32: {\"src0\": (Fmt.FMT_NUM_F32, 32, OpType.OPR_SRC), ",
            "\"vdst\": (Fmt.FMT_NUM_F32, 32, OpType.OPR_VGPR)},\n",
        );
        let e = entries(text, "VOP2Op", &ops).unwrap();
        assert_eq!(
            e,
            [(
                1,
                vec![
                    ("src0".to_string(), 32, "SRC".to_string(), true),
                    ("vdst".to_string(), 32, "VGPR".to_string(), true)
                ]
            )]
        );
        assert!(
            entries(
                "  VOP2Op.V_NONE: {\"src0\": (F, 32, OpType.OPR_SRC)},\n",
                "VOP2Op",
                &ops
            )
            .is_err()
        );
        assert!(
            entries(
                "  VOP2Op.V_ADD_F32: {\"src0\": (F, x, OpType.OPR_SRC)},\n",
                "VOP2Op",
                &ops
            )
            .is_err()
        );
        assert!(entries("  VOP2Op.V_ADD_F32: {\"src0\": (F, 32, SRC)},\n", "VOP2Op", &ops).is_err());
        assert_eq!(camel("SRC_VGPR_OR_ACCVGPR"), "SrcVgprOrAccvgpr");
    }
}
