//! Instruction cases found by `cargo xtask oracle`: each line of `tests/oracle/*.txt`
//! is one instruction, the registers before it and the registers it changes, as
//! tinygrad's RDNA3 emulator (an executable reading of AMD's ISA pseudocode) computes
//! them and as reviewed against the ISA. The interpreter must change exactly those
//! registers to exactly those values.

use amd_isa::rdna3::{WaveState, execute};

/// A register named in a case line.
enum Reg {
    Scc,
    S(usize),
    V(usize),
}

fn parse_assignment(text: &str) -> Result<(Reg, Vec<u32>), String> {
    let (name, value) = text.split_once('=').ok_or_else(|| format!("{text:?}: no '='"))?;
    let values = value
        .split(',')
        .map(|v| u32::from_str_radix(v, 16).map_err(|e| format!("{text:?}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let index = |s: &str| s.parse::<usize>().map_err(|e| format!("{text:?}: {e}"));
    let reg = match name {
        "scc" => Reg::Scc,
        _ if name.starts_with('s') => Reg::S(index(&name[1..])?),
        _ if name.starts_with('v') => Reg::V(index(&name[1..])?),
        _ => return Err(format!("{text:?}: unknown register")),
    };
    Ok((reg, values))
}

fn apply(st: &mut WaveState, assignments: &str) -> Result<(), String> {
    for a in assignments.split_whitespace() {
        let (reg, values) = parse_assignment(a)?;
        match reg {
            Reg::Scc => st.scc = values[0] != 0,
            Reg::S(s) => *st.sgpr.get_mut(s).ok_or(format!("{a}: no such SGPR"))? = values[0],
            Reg::V(r) => {
                let lanes = st.vgpr.get_mut(r).ok_or(format!("{a}: no such VGPR"))?;
                match values.len() {
                    1 => lanes.fill(values[0]),
                    32 => lanes.copy_from_slice(&values),
                    n => return Err(format!("{a}: {n} values (1 or 32 expected)")),
                }
            }
        }
    }
    Ok(())
}

/// Runs one case line; `Err` says what differs.
fn check(line: &str) -> Result<(), String> {
    let fields: Vec<&str> = line.split(" | ").collect();
    let [name, words, inputs, changes] = fields[..] else {
        return Err("expected `name encoding | dwords | inputs | changes`".into());
    };
    let words = words
        .split_whitespace()
        .map(|w| u32::from_str_radix(w, 16).map_err(|e| format!("{w}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut before = WaveState::new(48);
    apply(&mut before, inputs)?;
    let mut expected = before.clone();
    apply(&mut expected, changes)?;
    let mut got = before.clone();
    execute(&words, &mut got).map_err(|e| format!("{name}: the interpreter refuses it: {e}"))?;
    if got == expected {
        return Ok(());
    }
    let mut diffs = Vec::new();
    if got.scc != expected.scc {
        diffs.push(format!("scc {} (expected {})", got.scc as u8, expected.scc as u8));
    }
    for s in 0..128 {
        if got.sgpr[s] != expected.sgpr[s] {
            diffs.push(format!("s{s} {:#x} (expected {:#x})", got.sgpr[s], expected.sgpr[s]));
        }
    }
    for (r, (g, e)) in got.vgpr.iter().zip(&expected.vgpr).enumerate() {
        if let Some(lane) = (0..32).find(|&l| g[l] != e[l]) {
            diffs.push(format!("v{r}[{lane}] {:#x} (expected {:#x})", g[lane], e[lane]));
        }
    }
    Err(format!("{name}: {}", diffs.join(", ")))
}

#[test]
fn cases_found_by_the_oracle() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/oracle")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut count = 0;
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "txt")) {
        let text = std::fs::read_to_string(path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            count += 1;
            if let Err(e) = check(line) {
                failures.push(format!("{}:{}: {e}", path.display(), n + 1));
            }
        }
    }
    assert!(count > 0, "no cases in {dir}");
    assert!(
        failures.is_empty(),
        "{} of {count} cases fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The checker itself catches a wrong result.
#[test]
fn a_wrong_expectation_fails() {
    // v_add_f32_e32 v40, v16, v24 with 1 + 2, expected 4.
    let line = "v_add_f32 VOP2 | 06503110 | v16=3f800000 v24=40000000 | v40=40800000";
    let e = check(line).unwrap_err();
    assert!(e.contains("v40[0] 0x40400000 (expected 0x40800000)"), "{e}");
    let right = "v_add_f32 VOP2 | 06503110 | v16=3f800000 v24=40000000 | v40=40400000";
    check(right).unwrap();
}
