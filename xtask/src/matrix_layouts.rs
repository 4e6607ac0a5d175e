//! `cargo xtask matrix-layouts [--check]`: where RDNA4's matrix instructions (WMMA and
//! the sparse SWMMAC) keep every element of A, B, C/D and the sparse compression
//! index, in a wave32's registers, as AMD's matrix instruction calculator
//! (github.com/ROCm/amd_matrix_instruction_calculator, `matrix_calculator.py`) gives
//! them, into `crates/amd-isa/src/rdna4/generated/matrix_layouts.txt`. The
//! interpreter's tests place matrices by that table and read results back by it, so
//! the layout the interpreter computes is checked against AMD's own description.
//!
//! `AMD_MATRIX_CALCULATOR` names `matrix_calculator.py` (it needs python3 and the
//! `tabulate` module). The table is compact: for A, B and the index ("K"), the element
//! at each k of row (column) 0, for C and D each row's element of column 0; the
//! generator checks that every other row (column) is the same with the lane moved by
//! the row (column), and fails where it is not.

use std::process::Command;

use crate::Result;

const OUTPUT: &str = "crates/amd-isa/src/rdna4/generated/matrix_layouts.txt";
const ENV: &str = "AMD_MATRIX_CALCULATOR";

pub fn run(args: &[String]) -> Result<()> {
    let check = crate::check_flag(args, "matrix-layouts")?;
    let calc = std::env::var(ENV).map_err(|_| {
        format!("{ENV} must name AMD's matrix_calculator.py (github.com/ROCm/amd_matrix_instruction_calculator)")
    })?;
    let text = generate(&calc)?;
    crate::write_or_check(OUTPUT, &text, check, "cargo xtask matrix-layouts")
}

/// Runs the calculator with `args` for RDNA4.
fn calculator(calc: &str, args: &[&str]) -> Result<String> {
    let out = Command::new("python3")
        .arg(calc)
        .args(["-a", "rdna4"])
        .args(args)
        .output()?;
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

/// `v3{17}.[15:8]` or `v3{17}` (the whole register).
fn place(entry: &str) -> Result<Place> {
    let bad = || format!("unexpected layout entry {entry:?}");
    let rest = entry.strip_prefix('v').ok_or_else(bad)?;
    let (reg, rest) = rest.split_once('{').ok_or_else(bad)?;
    let (lane, rest) = rest.split_once('}').ok_or_else(bad)?;
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
