//! `cargo xtask matrix-layouts [--check]`: where RDNA4's matrix instructions (WMMA and
//! the sparse SWMMAC) keep every element of A, B, C/D and the sparse compression
//! index, in a wave32's registers, as AMD's matrix instruction calculator
//! (github.com/ROCm/amd_matrix_instruction_calculator, `matrix_calculator.py`) gives
//! them, into `crates/amd-isa/src/rdna4/generated/matrix_layouts.txt`. The
//! interpreter's tests place matrices by that table and read results back by it, so
//! the layout the interpreter computes is checked against AMD's own description.
//!
//! And CDNA3's matrix instructions (MFMA, wave64), into
//! `crates/amd-isa/src/cdna3/generated/mfma.rs`: each one's shape, element types and,
//! per block, the place of every element of row (column) 0 — the interpreter runs
//! them from that table, so their layouts are AMD's by construction; for the sparse
//! ones (SMFMAC) A's stored pair and the 4-bit compression index of each group of four
//! k instead of A's elements.
//!
//! `AMD_MATRIX_CALCULATOR` names `matrix_calculator.py` (it needs python3 and the
//! `tabulate` module). The table is compact: for A, B and the index ("K"), the element
//! at each k of row (column) 0, for C and D each row's element of column 0; the
//! generator checks that every other row (column) is the same with the lane moved by
//! the row (column), and fails where it is not.

use std::process::Command;

use crate::Result;

const OUTPUT: &str = "crates/amd-isa/src/rdna4/generated/matrix_layouts.txt";
const OUTPUT_CDNA3: &str = "crates/amd-isa/src/cdna3/generated/mfma.rs";
const ENV: &str = "AMD_MATRIX_CALCULATOR";
/// The Python that runs the calculator (it needs the `tabulate` module).
const PYTHON_ENV: &str = "AMD_MATRIX_CALCULATOR_PYTHON";

pub fn run(args: &[String]) -> Result<()> {
    let check = crate::check_flag(args, "matrix-layouts")?;
    let calc = std::env::var(ENV).map_err(|_| {
        format!("{ENV} must name AMD's matrix_calculator.py (github.com/ROCm/amd_matrix_instruction_calculator)")
    })?;
    let text = generate(&calc)?;
    crate::write_or_check(OUTPUT, &text, check, "cargo xtask matrix-layouts")?;
    let text = generate_cdna3(&calc)?;
    crate::write_or_check(OUTPUT_CDNA3, &text, check, "cargo xtask matrix-layouts")
}

/// Runs the calculator with `args` for RDNA4.
fn calculator(calc: &str, args: &[&str]) -> Result<String> {
    calculator_for("rdna4", calc, args)
}

/// Runs the calculator with `args` for architecture `arch`.
fn calculator_for(arch: &str, calc: &str, args: &[&str]) -> Result<String> {
    let python = std::env::var(PYTHON_ENV).unwrap_or_else(|_| "python3".to_string());
    let out = Command::new(python).arg(calc).args(["-a", arch]).args(args).output()?;
    if !out.status.success() {
        return Err(format!(
            "matrix_calculator.py {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// One element's place: register (from the operand's first), lane, bits lo..=hi.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Place {
    reg: u32,
    lane: u32,
    lo: u32,
    hi: u32,
}

/// A modifier's mark on an entry: `-v0{0}` negated, `|v0{0}|` absolute value,
/// `-|v0{0}|` both (as `n`), and the entry without it.
fn mark(entry: &str) -> (char, &str) {
    let (neg, rest) = match entry.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, entry),
    };
    match (neg, rest.strip_prefix('|').and_then(|r| r.strip_suffix('|'))) {
        (true, Some(r)) => ('n', r),
        (false, Some(r)) => ('|', r),
        (true, None) => ('-', rest),
        (false, None) => ('+', rest),
    }
}

/// `v3{17}.[15:8]`, `v3{17}` (the whole register) or `v[1:0]{17}` (a register pair).
fn place(entry: &str) -> Result<Place> {
    let bad = || format!("unexpected layout entry {entry:?}");
    let rest = entry.strip_prefix('v').ok_or_else(bad)?;
    let (reg, rest) = rest.split_once('{').ok_or_else(bad)?;
    let (lane, rest) = rest.split_once('}').ok_or_else(bad)?;
    // A pair `[hi:lo]`: 64 bits from its low register.
    if let Some(pair) = reg.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let (hi, lo) = pair.split_once(':').ok_or_else(bad)?;
        let (hi, lo): (u32, u32) = (hi.parse()?, lo.parse()?);
        if hi != lo + 1 || !rest.is_empty() {
            return Err(bad().into());
        }
        return Ok(Place {
            reg: lo,
            lane: lane.parse()?,
            lo: 0,
            hi: 63,
        });
    }
    let (lo, hi) = match rest {
        "" => (0, 31),
        bits => {
            let bits = bits
                .strip_prefix(".[")
                .and_then(|b| b.strip_suffix(']'))
                .ok_or_else(bad)?;
            let (hi, lo) = bits.split_once(':').ok_or_else(bad)?;
            (lo.parse()?, hi.parse()?)
        }
    };
    Ok(Place {
        reg: reg.parse()?,
        lane: lane.parse()?,
        lo,
        hi,
    })
}

/// A `--register-layout --csv` table: its rows of places.
fn table(csv: &str) -> Result<Vec<Vec<Place>>> {
    csv.lines()
        .skip_while(|l| !l.contains("]["))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').skip(1).map(place).collect())
        .collect()
}

/// The table's first row (`by_row`: first column), checked to be every other row's
/// (column's) with the lane moved by the row (column).
fn compact(t: &[Vec<Place>], by_row: bool, what: &str) -> Result<Vec<Place>> {
    let cols = t.first().map_or(0, Vec::len);
    if cols == 0 || t.iter().any(|row| row.len() != cols) {
        return Err(format!("{what}: an empty or ragged table").into());
    }
    let first: Vec<Place> = if by_row {
        t[0].clone()
    } else {
        t.iter().map(|r| r[0]).collect()
    };
    for (r, row) in t.iter().enumerate() {
        for (c, p) in row.iter().enumerate() {
            let (x, at) = if by_row { (r, c) } else { (c, r) };
            let expect = Place {
                lane: first[at].lane + x as u32,
                ..first[at]
            };
            if *p != expect {
                return Err(format!("{what}: element ({r}, {c}) is {p:?}, not row 0's moved by {x} lanes").into());
            }
        }
    }
    Ok(first)
}

fn generate(calc: &str) -> Result<String> {
    let version = calculator(calc, &["-v"])?;
    let list = calculator(calc, &["-L"])?;
    let mut out = format!(
        "# RDNA4 (wave32) matrix instructions' register layouts, from {} (`cargo xtask matrix-layouts`).\n\
         # <instruction> <matrix> <opsel> then one place per element, reg:lane:lo:hi (bits lo..=hi of\n\
         # register reg from the operand's first, lane of row/column 0): A and K (the sparse index)\n\
         # along k of row 0, B along k of column 0, C and D along the rows of column 0. Every other\n\
         # row (column) is the same with the lane moved by the row (column).\n",
        version.trim()
    );
    for inst in list.lines().skip(1).map(str::trim).filter(|l| !l.is_empty()) {
        let sparse = inst.starts_with("v_swmmac");
        let mut matrices: Vec<(&str, &str, Vec<&str>)> =
            vec![("A", "-A", vec![]), ("B", "-B", vec![]), ("D", "-D", vec![])];
        if !sparse {
            matrices.push(("C", "-C", vec![]));
        } else {
            matrices.push(("K", "-k", vec!["--opsel", "0"]));
            matrices.push(("K", "-k", vec!["--opsel", "1"]));
        }
        for (name, flag, extra) in matrices {
            let mut args = vec!["-i", inst, flag, "-R", "-c"];
            args.extend(&extra);
            let csv = match calculator(calc, &args) {
                Ok(csv) => csv,
                // The 64-index form has one set of indices: no OPSEL 1.
                Err(_) if extra.last() == Some(&"1") => continue,
                Err(e) => return Err(e),
            };
            let what = format!("{inst} {}", args.join(" "));
            // A and K are M rows by K columns (along k of row 0); B is K by N, C and D
            // M by N (along the rows of column 0).
            let places = compact(&table(&csv)?, matches!(name, "A" | "K"), &what)?;
            let opsel = extra.last().copied().unwrap_or("0");
            out.push_str(&format!("{inst} {name} {opsel}"));
            for p in places {
                out.push_str(&format!(" {}:{}:{}:{}", p.reg, p.lane, p.lo, p.hi));
            }
            out.push('\n');
        }
        // The negation modifiers of the dense 16-bit float forms: NEG / NEG_HI bit 0 on
        // A, bit 1 on B, bit 2 on C.
        let sixteen = inst.starts_with("v_wmma") && (inst.ends_with("_f16") || inst.ends_with("_bf16"));
        if sixteen {
            for (name, flag, bit) in [("A", "-A", "1"), ("B", "-B", "2"), ("C", "-C", "4")] {
                for field in ["--neg", "--neg_hi"] {
                    let csv = calculator(calc, &["-i", inst, flag, "-R", "-c", field, bit])?;
                    let marks = neg_marks(&csv, name != "A", &format!("{inst} {flag} {field} {bit}"))?;
                    out.push_str(&format!("{inst} {name} {} {marks}\n", &field[2..]));
                }
            }
        }
    }
    Ok(out)
}

/// A `--register-layout --csv` output of a blocked (MFMA) instruction: each block's
/// table.
fn block_tables(csv: &str) -> Result<Vec<Vec<Vec<Place>>>> {
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in csv.lines() {
        if line.starts_with("Block ") {
            if let Some(text) = cur.take() {
                blocks.push(table(&text)?);
            }
            cur = Some(String::new());
        } else if let Some(text) = cur.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    if let Some(text) = cur {
        blocks.push(table(&text)?);
    }
    Ok(blocks)
}

/// An MFMA operand's element type, as its name spells it.
fn mfma_type(t: &str) -> Option<(&'static str, u32)> {
    Some(match t {
        "f32" => ("F32", 32),
        "xf32" => ("Xf32", 32),
        "f16" => ("F16", 16),
        "bf16" => ("Bf16", 16),
        "i8" => ("I8", 8),
        "fp8" => ("Fp8", 8),
        "bf8" => ("Bf8", 8),
        "f64" => ("F64", 64),
        "i32" => ("I32", 32),
        _ => return None,
    })
}

/// `v_mfma_f32_16x16x4_4b_f16` → (output, (M, N, K), blocks, A's type, B's type).
#[allow(clippy::type_complexity)]
fn mfma_shape(
    name: &str,
) -> Option<(
    &'static str,
    (u32, u32, u32),
    u32,
    (&'static str, u32),
    (&'static str, u32),
)> {
    let mut t = name
        .strip_prefix("v_mfma_")
        .or_else(|| name.strip_prefix("v_smfmac_"))?
        .split('_');
    let out = mfma_type(t.next()?)?.0;
    let mut dims = t.next()?.split('x').map(|d| d.parse::<u32>().ok());
    let (m, n, k) = (dims.next()??, dims.next()??, dims.next()??);
    let rest: Vec<&str> = t.collect();
    let (blocks, types) = match rest
        .first()
        .and_then(|b| b.strip_suffix('b'))
        .and_then(|b| b.parse().ok())
    {
        Some(b) => (b, &rest[1..]),
        None => (1, &rest[..]),
    };
    let (a, b) = match *types {
        [ab] => (mfma_type(ab)?, mfma_type(ab)?),
        [a, b] => (mfma_type(a)?, mfma_type(b)?),
        _ => return None,
    };
    Some((out, (m, n, k), blocks, a, b))
}

/// One matrix's places, per block: row 0 along k (A), column 0 along k (B), column 0
/// along the rows (C, D); each checked to be every other row's (column's) with the
/// lane moved.
fn mfma_places(calc: &str, inst: &str, flag: &str, width: u32) -> Result<Vec<Place>> {
    let csv = calculator_for("cdna3", calc, &["-i", inst, flag, "-R", "-c"])?;
    let mut all = Vec::new();
    for (b, t) in block_tables(&csv)?.iter().enumerate() {
        let what = format!("{inst} {flag} block {b}");
        let places = compact(t, flag == "-A" || flag == "-k", &what)?;
        if places
            .iter()
            .any(|p| p.hi + 1 - p.lo != width || p.lane > 63 || p.reg > 255)
        {
            return Err(format!("{what}: an element not {width} bits wide in one lane of 64").into());
        }
        all.extend(places);
    }
    Ok(all)
}

fn generate_cdna3(calc: &str) -> Result<String> {
    let version = calculator_for("cdna3", calc, &["-v"])?;
    let list = calculator_for("cdna3", calc, &["-L"])?;
    let mut out = format!(
        "// @generated by `cargo xtask matrix-layouts` from {}\n\
         // (github.com/ROCm/amd_matrix_instruction_calculator, `-a cdna3`). Do not edit.\n\
         //\n\
         // CDNA3's dense matrix instructions: shape, element types, and per block the place of\n\
         // every element of row 0 of A (along k), column 0 of B (along k) and column 0 of C and\n\
         // D (along the rows): P(register from the operand's first, lane, first bit). Every\n\
         // other row (column) is the same with the lane moved by the row (column).\n\
         \n\
         use super::super::mfma::{{Mfma, P, Smfmac, Ty}};\n\
         \n\
         /// The MFMA instructions the calculator describes for CDNA3.\n\
         pub(crate) const MFMA: &[Mfma] = &[\n",
        version.trim()
    );
    let places = |v: &[Place]| -> String {
        v.iter()
            .map(|p| format!("P({}, {}, {})", p.reg, p.lane, p.lo))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for inst in list.lines().skip(1).map(str::trim).filter(|l| l.starts_with("v_mfma_")) {
        let (ty_out, (m, n, k), blocks, (ta, wa), (tb, wb)) =
            mfma_shape(inst).ok_or_else(|| format!("{inst}: a name whose shape is not read here"))?;
        let w_out = if ty_out == "F64" { 64 } else { 32 };
        let a = mfma_places(calc, inst, "-A", wa)?;
        let b = mfma_places(calc, inst, "-B", wb)?;
        let c = mfma_places(calc, inst, "-C", w_out)?;
        let d = mfma_places(calc, inst, "-D", w_out)?;
        if c != d {
            return Err(format!("{inst}: C and D are laid out differently").into());
        }
        if a.len() != (blocks * k) as usize || b.len() != (blocks * k) as usize || d.len() != (blocks * m) as usize {
            return Err(format!("{inst}: the tables do not match the shape {m}x{n}x{k}, {blocks} blocks").into());
        }
        out.push_str(&format!(
            "    Mfma {{\n        name: \"{inst}\",\n        m: {m},\n        n: {n},\n        k: {k},\n        blocks: {blocks},\n        \
             a_ty: Ty::{ta},\n        b_ty: Ty::{tb},\n        out: Ty::{ty_out},\n        a: &[{}],\n        b: &[{}],\n        cd: &[{}],\n    }},\n",
            places(&a),
            places(&b),
            places(&d)
        ));
    }
    out.push_str("];\n");
    out.push_str(
        "\n/// The sparse matrix instructions (SMFMAC): A 4:2 sparse, each group of four k's two\n\
         /// values one pair (`a`: the pair's place per group, its first value from the bit\n\
         /// given, the second after it), `idx` the 4-bit compression index of each group in\n\
         /// SRC2's register; B, C and D as the dense ones'.\n\
         pub(crate) const SMFMAC: &[Smfmac] = &[\n",
    );
    for inst in list
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| l.starts_with("v_smfmac_"))
    {
        let (ty_out, (m, n, k), blocks, (ta, wa), (tb, wb)) =
            mfma_shape(inst).ok_or_else(|| format!("{inst}: a name whose shape is not read here"))?;
        let w_out = if ty_out == "F64" { 64 } else { 32 };
        if blocks != 1 {
            return Err(format!("{inst}: a sparse instruction of {blocks} blocks").into());
        }
        // A: every k of a group names the group's pair (two elements' bits).
        let a_k = mfma_places(calc, inst, "-A", 2 * wa)?;
        let idx_k = mfma_places(calc, inst, "-k", 4)?;
        let per_group = |v: &[Place], what: &str| -> Result<Vec<Place>> {
            if v.len() != k as usize {
                return Err(format!("{inst}: {what} has {} places for K {k}", v.len()).into());
            }
            v.chunks(4)
                .map(|g| {
                    if g.iter().all(|p| *p == g[0]) {
                        Ok(g[0])
                    } else {
                        Err(format!("{inst}: {what}'s group of four k is not one place").into())
                    }
                })
                .collect()
        };
        let a = per_group(&a_k, "A")?;
        let idx = per_group(&idx_k, "the index")?;
        let b = mfma_places(calc, inst, "-B", wb)?;
        let d = mfma_places(calc, inst, "-D", w_out)?;
        if b.len() != k as usize || d.len() != m as usize {
            return Err(format!("{inst}: the tables do not match the shape {m}x{n}x{k}").into());
        }
        out.push_str(&format!(
            "    Smfmac {{\n        name: \"{inst}\",\n        m: {m},\n        n: {n},\n        k: {k},\n        \
             a_ty: Ty::{ta},\n        b_ty: Ty::{tb},\n        out: Ty::{ty_out},\n        a: &[{}],\n        idx: &[{}],\n        \
             b: &[{}],\n        cd: &[{}],\n    }},\n",
            places(&a),
            places(&idx),
            places(&b),
            places(&d)
        ));
    }
    out.push_str("];\n");
    Ok(out)
}

/// The marks along the first row (`by_col`: column) of a table with modifiers,
/// checked to be every row's (column's).
fn neg_marks(csv: &str, by_col: bool, what: &str) -> Result<String> {
    let rows: Vec<Vec<char>> = csv
        .lines()
        .skip_while(|l| !l.contains("]["))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').skip(1).map(|e| mark(e).0).collect())
        .collect();
    let cols = rows.first().map_or(0, Vec::len);
    if cols == 0 || rows.iter().any(|row| row.len() != cols) {
        return Err(format!("{what}: an empty or ragged table").into());
    }
    let first: Vec<char> = if by_col {
        rows.iter().map(|r| r[0]).collect()
    } else {
        rows[0].clone()
    };
    for (r, row) in rows.iter().enumerate() {
        for (c, &m) in row.iter().enumerate() {
            if m != first[if by_col { r } else { c }] {
                return Err(format!("{what}: the mark at ({r}, {c}) differs from its row's (column's) first").into());
            }
        }
    }
    Ok(first.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calculator's output is outside input: an empty or ragged table is an error.
    #[test]
    fn empty_or_ragged_tables_are_errors() {
        let p = Place {
            reg: 0,
            lane: 0,
            lo: 0,
            hi: 31,
        };
        assert!(compact(&[], true, "t").is_err());
        assert!(compact(&[vec![p, p], vec![p]], false, "t").is_err());
        assert!(neg_marks("A[M][K],0\n0,v0{0}\n1\n", true, "t").is_err());
        assert_eq!(compact(&[vec![p]], true, "t").unwrap(), vec![p]);
    }

    #[test]
    fn marks_parse() {
        assert_eq!(mark("-v0{0}.[15:0]"), ('-', "v0{0}.[15:0]"));
        assert_eq!(mark("|v0{1}|"), ('|', "v0{1}"));
        assert_eq!(mark("-|v0{1}|"), ('n', "v0{1}"));
        assert_eq!(mark("v0{1}"), ('+', "v0{1}"));
    }

    #[test]
    fn mfma_names_parse() {
        assert_eq!(
            mfma_shape("v_mfma_f32_16x16x4_4b_f16"),
            Some(("F32", (16, 16, 4), 4, ("F16", 16), ("F16", 16)))
        );
        assert_eq!(
            mfma_shape("v_mfma_f32_16x16x32_fp8_bf8"),
            Some(("F32", (16, 16, 32), 1, ("Fp8", 8), ("Bf8", 8)))
        );
        assert_eq!(mfma_shape("v_mfma_f64_4x4x4_4b_f64").map(|s| s.2), Some(4));
        assert_eq!(
            mfma_shape("v_smfmac_f32_16x16x32_f16"),
            Some(("F32", (16, 16, 32), 1, ("F16", 16), ("F16", 16)))
        );
        assert_eq!(mfma_shape("v_mfma_f32_16x16_f16"), None);
        assert_eq!(
            place("v[1:0]{16}").unwrap(),
            Place {
                reg: 0,
                lane: 16,
                lo: 0,
                hi: 63
            }
        );
        assert!(place("v[3:0]{16}").is_err());
        let csv = "Block 0\nA[M][K],0\n0,v0{0}\nBlock 1\nA[M][K],0\n0,v0{4}\n";
        assert_eq!(block_tables(csv).unwrap().len(), 2);
    }

    #[test]
    fn places_parse() {
        assert_eq!(
            place("v3{17}.[15:8]").unwrap(),
            Place {
                reg: 3,
                lane: 17,
                lo: 8,
                hi: 15
            }
        );
        assert_eq!(
            place("v0{0}").unwrap(),
            Place {
                reg: 0,
                lane: 0,
                lo: 0,
                hi: 31
            }
        );
        assert!(place("-v0{0}").is_err());
        assert!(place("v0{0}.[3").is_err());
    }

    /// The committed table is what AMD's calculator says, where it is present.
    #[test]
    fn committed_table_is_current() {
        crate::check_current_where(
            std::env::var_os(ENV).is_some(),
            "AMD_MATRIX_CALCULATOR is not set (AMD's matrix_calculator.py)",
            run,
        );
    }
}
