//! The instruction fields of a generation, `crates/amd-isa/src/<gen>/generated/fields.rs`,
//! from tinygrad's `ins.py` (generated from AMD's machine-readable ISA): one module per
//! encoding (`vop3`, and the forms with a DPP dword, `vop1_dpp16`), one constant per
//! field (`vop3::SRC0`) typed by what the field names (`amd_isa::field`). Written by
//! `cargo xtask gen-opcodes`, which reads `ins.py` beside `enum.py`.

use std::fmt::Write as _;

use crate::Result;

/// A field: its name, its type in `amd_isa::field`, its bits, and the fixed value of
/// an encoding field.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Field {
    name: String,
    kind: &'static str,
    hi: u32,
    lo: u32,
    value: Option<u32>,
}

/// A class of `ins.py`: its name, the class it extends, its own fields.
#[derive(Clone, Debug)]
struct Class {
    name: String,
    base: String,
    fields: Vec<Field>,
}

/// tinygrad's field classes, and ours.
const KINDS: &[(&str, &str)] = &[
    ("FixedBitField", "Fixed"),
    ("EnumBitField", "Bits"),
    ("BitField", "Bits"),
    ("VGPRField", "Vgpr"),
    ("SGPRField", "Sgpr"),
    ("SSrcField", "Src"),
    ("SrcField", "Src"),
    ("SBaseField", "Sbase"),
    ("SRsrcField", "Srsrc"),
    ("VDSTYField", "VdstY"),
];

/// What each type of field names, for the generated docs.
fn meaning(kind: &str) -> &'static str {
    match kind {
        "Fixed" => "names the encoding",
        "Vgpr" => "a VGPR",
        "Sgpr" => "a scalar operand",
        "Src" => "a source operand",
        "Sbase" => "a scalar register pair, in pairs",
        "Srsrc" => "a resource's first SGPR, in fours",
        "VdstY" => "VOPD's second destination, without its lowest bit",
        _ => "",
    }
}

/// A number as Python writes it (`0b110110`, `12`).
fn number(s: &str) -> Option<u32> {
    match s.strip_prefix("0b") {
        Some(b) => u32::from_str_radix(b, 2).ok(),
        None => s.parse().ok(),
    }
}

/// `class NAME(BASE):` blocks of `  field = Kind(hi, lo, …)` lines; other lines are
/// skipped, and so are the classes `left_out` names (and those that extend them).
fn parse(text: &str, left_out: &[&str]) -> Result<Vec<Class>> {
    let mut classes: Vec<Class> = Vec::new();
    let mut skipping = false;
    for (n, line) in text.lines().enumerate() {
        let at = |m: &str| format!("ins.py line {}: {m}", n + 1);
        if let Some(rest) = line.strip_prefix("class ") {
            let (name, base) = rest
                .trim_end_matches("):")
                .split_once('(')
                .ok_or_else(|| at("a class without its base"))?;
            skipping = left_out.contains(&name) || left_out.contains(&base);
            if skipping {
                continue;
            }
            classes.push(Class {
                name: name.to_string(),
                base: base.to_string(),
                fields: Vec::new(),
            });
            continue;
        }
        let Some(body) = line.strip_prefix("  ").filter(|_| !skipping) else {
            continue;
        };
        let Some((name, value)) = body.split_once(" = ") else {
            continue;
        };
        let Some((kind, args)) = value.split_once('(') else {
            continue;
        };
        let kind = KINDS
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, ours)| *ours)
            .ok_or_else(|| at(&format!("unknown field type {kind}")))?;
        let mut args = args.split(", ").map(|a| a.trim_end_matches(')'));
        let mut arg = |what: &str| {
            args.next()
                .and_then(number)
                .ok_or_else(|| at(&format!("{name}: no {what}")))
        };
        let (hi, lo) = (arg("high bit")?, arg("low bit")?);
        let value = if kind == "Fixed" { Some(arg("value")?) } else { None };
        if hi >= 96 {
            return Err(at(&format!("{name}: bit {hi} lies past the third dword")).into());
        }
        if lo > hi || hi / 32 != lo / 32 {
            return Err(at(&format!("{name}: bits {hi}:{lo} do not lie in one dword")).into());
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(at(&format!("{name:?} is not a field name")).into());
        }
        classes
            .last_mut()
            .ok_or_else(|| at("a field outside a class"))?
            .fields
            .push(Field {
                name: name.to_string(),
                kind,
                hi,
                lo,
                value,
            });
    }
    Ok(classes)
}

/// A class's fields with those of the classes it extends (its own replace theirs),
/// without the literal (the decoder keeps it apart).
fn resolve(classes: &[Class], name: &str) -> Result<Vec<Field>> {
    let class = classes
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| format!("ins.py: no class {name}"))?;
    let mut fields = if class.base == "Inst" {
        Vec::new()
    } else {
        resolve(classes, &class.base)?
    };
    for f in &class.fields {
        match fields.iter_mut().find(|g| g.name == f.name) {
            Some(g) => *g = f.clone(),
            None => fields.push(f.clone()),
        }
    }
    fields.retain(|f| f.name != "literal");
    Ok(fields)
}

/// The fields of every encoding of `text` (an `ins.py`) but the classes `left_out`
/// names.
pub fn generate(generation: &str, text: &str, left_out: &[&str]) -> Result<String> {
    let classes = parse(text, left_out)?;
    let mut out = format!(
        "\
// @generated by `cargo xtask gen-opcodes` from tinygrad's {generation} ins.py (generated
// from AMD's {generation} ISA XML); do not edit.
//! Where every field of every {generation} encoding lies: a module per encoding, and
//! one per form that extends one (a DPP dword, a scalar destination), a constant per
//! field. A literal constant is not a field here: the decoder keeps it apart.

"
    );
    let mut emitted: Vec<(String, Vec<Field>)> = Vec::new();
    for class in &classes {
        let fields = resolve(&classes, &class.name)?;
        // A form that differs only by its literal has its encoding's fields.
        if emitted.iter().any(|(name, f)| *f == fields && class.base == *name) {
            continue;
        }
        if fields.is_empty() {
            return Err(format!("ins.py: {} has no fields", class.name).into());
        }
        let kinds: std::collections::BTreeSet<&str> = fields.iter().map(|f| f.kind).collect();
        let module = class.name.to_lowercase();
        writeln!(out, "/// The fields of {}.", class.name)?;
        writeln!(out, "pub mod {module} {{")?;
        writeln!(
            out,
            "    use crate::field::{{{}}};",
            kinds.iter().copied().collect::<Vec<_>>().join(", ")
        )?;
        let dwords = fields.iter().map(|f| f.hi / 32 + 1).max().unwrap_or(1);
        writeln!(out, "    /// How many dwords the form is long, without a literal.")?;
        writeln!(out, "    pub const DWORDS: usize = {dwords};")?;
        for f in &fields {
            let what = meaning(f.kind);
            let (hi, lo) = (f.hi, f.lo);
            let upper = f.name.to_uppercase();
            match f.value {
                Some(v) => {
                    let v = format!("{v:#0w$b}", w = (hi - lo + 3) as usize);
                    writeln!(out, "    /// {upper} ({hi}:{lo}) = {v}: {what}.")?;
                    writeln!(out, "    pub const {upper}: Fixed = Fixed::new({hi}, {lo}, {v});")?;
                }
                None => {
                    let what = if what.is_empty() {
                        String::new()
                    } else {
                        format!(", {what}")
                    };
                    writeln!(out, "    /// {upper} ({hi}:{lo}){what}.")?;
                    writeln!(out, "    pub const {upper}: {} = {}::new({hi}, {lo});", f.kind, f.kind)?;
                }
            }
        }
        writeln!(out, "}}")?;
        writeln!(out)?;
        emitted.push((class.name.clone(), fields));
    }
    out.pop();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "class VOP1(Inst):\n  encoding = FixedBitField(31, 25, 0b0111111)\n  op = EnumBitField(16, 9, VOP1Op, {VOP1Op.V_NOP})\n  vdst = VGPRField(24, 17)\n  src0 = SrcField(8, 0)\nclass VOP1_LIT(VOP1):\n  op = EnumBitField(16, 9, VOP1Op, {VOP1Op.V_NOP})\n  literal = BitField(63, 32)\nclass VOP1_DPP16(VOP1):\n  vsrc0 = VGPRField(39, 32)\n  fi = BitField(50, 50)\n";

    #[test]
    fn generates_a_module_per_form_with_inherited_fields() {
        let out = generate("RDNA3", SAMPLE, &[]).unwrap();
        assert!(out.contains("pub mod vop1 {"), "{out}");
        assert!(out.contains("pub const ENCODING: Fixed = Fixed::new(31, 25, 0b0111111);"));
        assert!(out.contains("pub const SRC0: Src = Src::new(8, 0);"));
        assert!(!out.contains("vop1_lit"), "a literal-only form adds nothing");
        assert!(out.contains("pub const DWORDS: usize = 1;"), "{out}");
        let dpp = &out[out.find("pub mod vop1_dpp16").unwrap()..];
        assert!(dpp.contains("VDST: Vgpr = Vgpr::new(24, 17)") && dpp.contains("FI: Bits = Bits::new(50, 50)"));
        assert!(dpp.contains("pub const DWORDS: usize = 2;"), "{dpp}");
    }

    #[test]
    fn refuses_what_it_cannot_place() {
        let bad = |body: &str| generate("RDNA3", &format!("class A(Inst):\n  {body}\n"), &[]).is_err();
        assert!(bad("x = MysteryField(3, 0)"), "unknown types are refused");
        assert!(bad("x = BitField(40, 20)"), "a field across two dwords");
        assert!(bad("x = BitField(2, 5)"), "hi below lo");
        assert!(bad("x = BitField(127, 120)"), "past the third dword");
        assert!(bad("x = BitField(a, 0)"));
        assert!(bad("X() = BitField(1, 0)"));
        assert!(
            generate("RDNA3", "  x = BitField(1, 0)\n", &[]).is_err(),
            "outside a class"
        );
        assert!(
            generate("RDNA3", "class B(A):\n  x = BitField(1, 0)\n", &[]).is_err(),
            "unknown base"
        );
    }
}
