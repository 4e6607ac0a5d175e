//! Generates `crates/amd-isa/src/rdna3/generated/mnemonics.rs`: what LLVM prints for a
//! sample of every opcode of every gfx11 encoding the interpreter decodes, asked of
//! `llvm-mc-19 -disassemble` (Debian's `llvm-19`) one sample instruction per opcode:
//! the mnemonic, and the operands of the sample, whose distinct register numbers tell
//! the disassembler which fields an opcode prints and how many registers each spans.
//!
//! Opcodes LLVM does not know are left out (the interpreter then prints the encoding
//! and opcode instead).
//!
//! The same file gets, per opcode, the modifiers `llvm-mc-19` assembles on it: each
//! VOP3 sample (VOPC's and VOP3SD's forms included) is assembled with neg and abs on
//! each source in turn, with clamp and with omod (`mul:2`), and each VOP1, VOP2 and
//! VOPC sample as its DPP16 form with neg and abs on src0 and src1; the interpreter
//! refuses what LLVM rejects.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};

use amd_isa::rdna3::opcodes::Vop3sd;

use crate::Result;

const OUTPUT: &str = "crates/amd-isa/src/rdna3/generated/mnemonics.rs";
const LLVM_MC: &str = "llvm-mc-19";

/// An encoding: the table's name, its opcode count, and sample instructions for an
/// opcode (registers chosen even, so 64-bit operands are valid). LLVM rejects operand
/// fields an opcode does not use, so each sample leaves out more of them; the first
/// one LLVM accepts names the opcode.
struct Enc {
    table: &'static str,
    ops: u32,
    samples: &'static [fn(u32) -> [u32; 2]],
}

const VOP3_SRCS: [u32; 3] = [260 | 262 << 9 | 264 << 18, 260 | 262 << 9, 260];
const DS_FIELDS: [u32; 6] = [
    2 | 4 << 8 | 6 << 16 | 8 << 24,
    2 | 4 << 8 | 8 << 24,
    2 | 8 << 24,
    2 | 4 << 8 | 6 << 16,
    2 | 4 << 8,
    2,
];
/// FLAT words 1: address, data, saddr off (and SVE for scratch), destination.
const FLAT_FIELDS: [u32; 3] = [
    2 | 0x7c << 16 | 8 << 24,
    2 | 4 << 8 | 0x7c << 16,
    2 | 4 << 8 | 0x7c << 16 | 8 << 24,
];

const ENCODINGS: &[Enc] = &[
    Enc {
        table: "SOP2",
        ops: 0x60,
        samples: &[|op| [0x8000_0000 | op << 23 | 4 << 16 | 6 << 8 | 2, 0]],
    },
    Enc {
        table: "SOPK",
        ops: 0x1d,
        samples: &[|op| [0xb000_0000 | op << 23 | 4 << 16 | 0x10, 0]],
    },
    Enc {
        table: "SOP1",
        ops: 0x100,
        samples: &[|op| [0xbe80_0000 | 4 << 16 | op << 8 | 2, 0]],
    },
    Enc {
        table: "SOPC",
        ops: 0x80,
        samples: &[|op| [0xbf00_0000 | op << 16 | 4 << 8 | 2, 0]],
    },
    Enc {
        table: "SOPP",
        ops: 0x80,
        samples: &[|op| [0xbf80_0000 | op << 16, 0]],
    },
    Enc {
        table: "SMEM",
        ops: 0x100,
        samples: &[
            |op| [0xf400_0000 | op << 18 | 4 << 6 | 1, 0xf800_0000],
            |op| [0xf400_0000 | op << 18, 0xf800_0000],
        ],
    },
    Enc {
        table: "VOP1",
        ops: 0x100,
        // Without operands for those that take none (v_nop, v_pipeflush).
        samples: &[
            |op| [0x7e00_0000 | 2 << 17 | op << 9 | 260, 0],
            |op| [0x7e00_0000 | op << 9, 0],
        ],
    },
    Enc {
        table: "VOP2",
        ops: 0x3e,
        samples: &[|op| [op << 25 | 2 << 17 | 6 << 9 | 260, 0]],
    },
    Enc {
        table: "VOPC",
        ops: 0x100,
        samples: &[|op| [0x7c00_0000 | op << 17 | 6 << 9 | 260, 0]],
    },
    Enc {
        table: "VOP3",
        ops: 0x400,
        samples: &[
            |op| [0xd400_0000 | op << 16 | 2, VOP3_SRCS[0]],
            |op| [0xd400_0000 | op << 16 | 2, VOP3_SRCS[1]],
            |op| [0xd400_0000 | op << 16 | 2, VOP3_SRCS[2]],
            |op| [0xd400_0000 | op << 16, 0],
        ],
    },
    Enc {
        table: "VOP3P",
        ops: 0x80,
        samples: &[
            |op| [0xcc00_4000 | op << 16 | 2, 0x1800_0000 | VOP3_SRCS[0]],
            |op| [0xcc00_4000 | op << 16 | 2, 0x1800_0000 | VOP3_SRCS[1]],
        ],
    },
    Enc {
        table: "DS",
        ops: 0x100,
        samples: &[
            |op| [0xd800_0000 | op << 18, DS_FIELDS[0]],
            |op| [0xd800_0000 | op << 18, DS_FIELDS[1]],
            |op| [0xd800_0000 | op << 18, DS_FIELDS[2]],
            |op| [0xd800_0000 | op << 18, DS_FIELDS[3]],
            |op| [0xd800_0000 | op << 18, DS_FIELDS[4]],
            |op| [0xd800_0000 | op << 18, DS_FIELDS[5]],
            |op| [0xd800_0000 | op << 18, 0],
        ],
    },
    Enc {
        table: "MUBUF",
        ops: 0x100,
        // vaddr v2, vdata v4, s[8:11], soffset 0 (inline), no offen/idxen.
        samples: &[|op| [0xe000_0000 | op << 18, 2 | 4 << 8 | 2 << 16 | 0x80 << 24]],
    },
    Enc {
        table: "MTBUF",
        ops: 0x10,
        // As MUBUF, format 22 (BUF_FMT_32_FLOAT).
        samples: &[|op| [0xe800_0000 | 22 << 19 | op << 15, 2 | 4 << 8 | 2 << 16 | 0x80 << 24]],
    },
    Enc {
        table: "FLAT",
        ops: 0x80,
        samples: &[
            |op| [0xdc00_0000 | op << 18, FLAT_FIELDS[0]],
            |op| [0xdc00_0000 | op << 18, FLAT_FIELDS[1]],
            |op| [0xdc00_0000 | op << 18, FLAT_FIELDS[2]],
        ],
    },
    Enc {
        table: "SCRATCH",
        ops: 0x80,
        samples: &[
            |op| [0xdc01_0000 | op << 18, FLAT_FIELDS[0] | 1 << 23],
            |op| [0xdc01_0000 | op << 18, FLAT_FIELDS[1] | 1 << 23],
            |op| [0xdc01_0000 | op << 18, FLAT_FIELDS[2] | 1 << 23],
        ],
    },
    Enc {
        table: "GLOBAL",
        ops: 0x80,
        samples: &[
            |op| [0xdc02_0000 | op << 18, FLAT_FIELDS[0]],
            |op| [0xdc02_0000 | op << 18, FLAT_FIELDS[1]],
            |op| [0xdc02_0000 | op << 18, FLAT_FIELDS[2]],
        ],
    },
];

/// Whether an encoding's samples are one dword.
fn one_dword(table: &str) -> bool {
    matches!(
        table,
        "SOP2" | "SOPK" | "SOP1" | "SOPC" | "SOPP" | "VOP1" | "VOP2" | "VOPC"
    )
}

pub fn run(args: &[String]) -> Result<()> {
    let check = crate::check_flag(args, "gen-mnemonics")?;
    crate::write_or_check(OUTPUT, &generate()?, check, "cargo xtask gen-mnemonics")
}

/// `s_nop 0x7f` between the samples: the first instruction after it is the sample's.
const MARKER: &str = "0x7f 0x00 0x80 0xbf";

/// VOPD: v_dual_X v1, v2, v3 :: v_dual_Y v4, v5, v6, the other half a move (whose
/// second source field must be 0).
fn vopd_sample(opx: u32, opy: u32) -> [u32; 2] {
    let vsrcx1 = if opx == 8 { 0 } else { 3 };
    let vsrcy1 = if opy == 8 { 0 } else { 6 };
    [
        0xc800_0000 | opx << 22 | opy << 17 | vsrcx1 << 9 | 258,
        1 << 24 | 2 << 17 | vsrcy1 << 9 | 261,
    ]
}

/// The VOPD halves: X opcodes (16, with Y a move) and Y opcodes (32, with X a move).
fn vopd_tables() -> Result<[Vec<Option<String>>; 2]> {
    let x = Enc {
        table: "VOPD_X",
        ops: 16,
        samples: &[|op| vopd_sample(op, 8)],
    };
    let y = Enc {
        table: "VOPD_Y",
        ops: 32,
        samples: &[|op| vopd_sample(8, op)],
    };
    let first = |l: &str| l.split_whitespace().next().map(str::to_string);
    let second = |l: &str| {
        l.split_once(":: ")
            .and_then(|(_, y)| y.split_whitespace().next().map(str::to_string))
    };
    let xs = disassemble(&x, x.samples[0])?
        .into_iter()
        .map(|l| l.and_then(|l| first(&l)))
        .collect();
    let ys = disassemble(&y, y.samples[0])?
        .into_iter()
        .map(|l| l.and_then(|l| second(&l)))
        .collect();
    Ok([xs, ys])
}

/// The mnemonic of each opcode: the first sample LLVM accepts.
fn mnemonics(enc: &Enc) -> Result<Vec<Option<String>>> {
    let mut names = vec![None; enc.ops as usize];
    for sample in enc.samples {
        let found = disassemble(enc, *sample)?;
        for (n, f) in names.iter_mut().zip(found) {
            if n.is_none() {
                *n = f;
            }
        }
    }
    Ok(names)
}

/// Disassembles `sample` of every opcode; the printed line where LLVM accepts it.
fn disassemble(enc: &Enc, sample: fn(u32) -> [u32; 2]) -> Result<Vec<Option<String>>> {
    let mut input = String::new();
    for op in 0..enc.ops {
        let w = sample(op);
        let words = if one_dword(enc.table) { &w[..1] } else { &w[..] };
        let bytes: Vec<String> = words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .map(|b| format!("{b:#04x}"))
            .collect();
        // Trailing zeros: room for a literal the opcode implies (as VOP2 fmamk does).
        writeln!(input, "{MARKER}\n{} 0x00 0x00 0x00 0x00", bytes.join(" "))?;
    }
    writeln!(input, "{MARKER}")?;
    let mut child = Command::new(LLVM_MC)
        .args(["-arch=amdgcn", "-mcpu=gfx1100", "-disassemble"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{LLVM_MC}: {e} (install llvm-19)"))?;
    child.stdin.take().ok_or("no stdin")?.write_all(input.as_bytes())?;
    let out = child.wait_with_output()?;
    // Samples LLVM rejects: "<stdin>:LINE:COL: warning: invalid instruction encoding".
    let stderr = String::from_utf8_lossy(&out.stderr);
    let invalid: std::collections::HashSet<usize> = stderr
        .lines()
        .filter(|l| l.contains("invalid instruction encoding"))
        .filter_map(|l| l.split(':').nth(1)?.parse().ok())
        .collect();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut names = Vec::new();
    let mut after_marker = false;
    for line in stdout.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('.') {
            continue;
        }
        if line == "s_nop 0x7f" {
            after_marker = true;
            continue;
        }
        if after_marker {
            let text = strip_comments(line.split("//").next().unwrap_or(line))
                .trim()
                .to_string();
            names.push((!text.starts_with("v_illegal")).then_some(text));
            after_marker = false;
        }
    }
    // A sample that decoded to nothing at all left no line: rebuild by position from
    // the markers is not possible then, so require one line per sample.
    if names.len() != enc.ops as usize {
        return Err(format!(
            "{}: {} mnemonics for {} samples (an opcode swallowed its marker)",
            enc.table,
            names.len(),
            enc.ops
        )
        .into());
    }
    Ok(names
        .into_iter()
        .enumerate()
        .map(|(op, n)| if invalid.contains(&(2 * op + 2)) { None } else { n })
        .collect())
}

/// `text` without LLVM's `/*...*/` remarks (on operands the sample fills with a
/// register class the opcode does not take).
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some((before, after)) = rest.split_once("/*") {
        out.push_str(before);
        rest = after.split_once("*/").map_or("", |(_, a)| a);
    }
    out.push_str(rest);
    out
}

/// Assembles `lines` (one instruction each); whether LLVM accepts each.
fn assembles(lines: &[String]) -> Result<Vec<bool>> {
    let mut child = Command::new(LLVM_MC)
        .args(["-arch=amdgcn", "-mcpu=gfx1100", "-show-encoding"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{LLVM_MC}: {e} (install llvm-19)"))?;
    let mut input = lines.join("\n");
    input.push('\n');
    child.stdin.take().ok_or("no stdin")?.write_all(input.as_bytes())?;
    let out = child.wait_with_output()?;
    // "<stdin>:LINE:COL: error: ..." for each line LLVM rejects.
    let rejected: std::collections::HashSet<usize> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(": error:"))
        .filter_map(|l| l.split(':').nth(1)?.parse().ok())
        .collect();
    Ok((1..=lines.len()).map(|n| !rejected.contains(&n)).collect())
}

/// A mnemonic and its operands.
type Form = (String, Vec<String>);

/// A sample split into its mnemonic and operands, with a form LLVM assembles: the
/// disassembler prints some operands in a register class the assembler refuses there
/// (`v_cndmask_b32_e64`'s mask as a VGPR), so the last, then every source after the
/// first, becomes an SGPR where that is what it takes.
fn assemblable(
    samples: &[Option<String>],
    ndst: impl Fn(usize, &str) -> usize,
    tail: &str,
) -> Result<Vec<Option<Form>>> {
    let split = |s: &str| -> (String, Vec<String>) {
        let (m, rest) = s.split_once(' ').unwrap_or((s, ""));
        let ops = rest.split(", ").filter(|o| !o.is_empty()).map(str::to_string).collect();
        (m.to_string(), ops)
    };
    let sgpr = |o: &str| {
        o.strip_prefix('v')
            .filter(|r| r.bytes().all(|b| b.is_ascii_digit()))
            .map(|r| format!("s{r}"))
    };
    let mut forms: Vec<Vec<Form>> = Vec::new();
    for (op, s) in samples.iter().enumerate() {
        let Some(s) = s else {
            forms.push(Vec::new());
            continue;
        };
        let (m, ops) = split(s);
        let mut last = ops.clone();
        if let Some(l) = last.last_mut().and_then(|l| sgpr(l).map(|s| (l, s))) {
            *l.0 = l.1;
        }
        let d = ndst(op, &m);
        let mut scalars = ops.clone();
        for o in scalars.iter_mut().skip(d + 1) {
            if let Some(s) = sgpr(o) {
                *o = s;
            }
        }
        forms.push(vec![(m.clone(), ops), (m.clone(), last), (m, scalars)]);
    }
    let lines: Vec<String> = forms
        .iter()
        .flatten()
        .map(|(m, o)| format!("{m} {}{tail}", o.join(", ")))
        .collect();
    let mut ok = assembles(&lines)?.into_iter();
    Ok(forms
        .into_iter()
        .map(|f| {
            let good: Vec<bool> = ok.by_ref().take(f.len()).collect();
            f.into_iter().zip(good).find(|(_, good)| *good).map(|(f, _)| f)
        })
        .collect())
}

/// One opcode's probes: `(what, line)` for neg and abs on each source, clamp and omod.
fn probes(m: &str, ops: &[String], ndst: usize, dpp: bool) -> Vec<(Probe, String)> {
    let tail = if dpp {
        " quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf"
    } else {
        ""
    };
    let line = |ops: &[String], extra: &str| format!("{m} {}{tail}{extra}", ops.join(", "));
    let mut out = Vec::new();
    for k in 0..ops.len().saturating_sub(ndst).min(if dpp { 2 } else { 3 }) {
        let mut o = ops.to_vec();
        o[ndst + k] = format!("-{}", ops[ndst + k]);
        out.push((Probe::Neg(k), line(&o, "")));
        o[ndst + k] = format!("|{}|", ops[ndst + k]);
        out.push((Probe::Abs(k), line(&o, "")));
    }
    if !dpp {
        out.push((Probe::Clamp, line(ops, " clamp")));
        out.push((Probe::Omod, line(ops, " mul:2")));
    }
    out
}

/// A modifier a probe asks LLVM for.
#[derive(Clone, Copy)]
enum Probe {
    Neg(usize),
    Abs(usize),
    Clamp,
    Omod,
}

/// What LLVM assembles on each opcode of an encoding, as `Accepts` literals (`None`
/// where the opcode has no sample LLVM assembles). `dpp`: the VOP1/VOP2/VOPC sample
/// as its DPP16 form.
fn accepted(table: &str, samples: &[Option<String>], dpp: bool) -> Result<Vec<Option<String>>> {
    let ndst = |op: usize, m: &str| {
        if m.starts_with("v_cmpx") {
            0
        } else if table == "VOP3" && u16::try_from(op).ok().and_then(Vop3sd::from_op).is_some() {
            2
        } else {
            1
        }
    };
    // `_e32` becomes `_dpp`; a VOP2-only name (`v_dot2acc_f32_f16`) stays, LLVM taking
    // the DPP16 form from the controls.
    let dpp_name = |m: &str| {
        m.strip_suffix("_e32")
            .map_or_else(|| m.to_string(), |b| format!("{b}_dpp"))
    };
    let renamed: Vec<Option<String>> = samples
        .iter()
        .map(|s| {
            let s = s.as_ref()?;
            if !dpp {
                return Some(s.clone());
            }
            let (m, rest) = s.split_once(' ')?;
            Some(format!("{} {rest}", dpp_name(m)))
        })
        .collect();
    // (The DPP16 form must assemble itself: fmamk, readfirstlane, ... have none.)
    let tail = if dpp {
        " quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf"
    } else {
        ""
    };
    let forms = assemblable(&renamed, ndst, tail)?;
    let mut lines = Vec::new();
    let mut owner = Vec::new();
    for (op, f) in forms.iter().enumerate() {
        let Some((m, ops)) = f else { continue };
        for (probe, line) in probes(m, ops, ndst(op, m), dpp) {
            lines.push(line);
            owner.push((op, probe));
        }
    }
    let ok = assembles(&lines)?;
    // (neg, abs, clamp, omod) per opcode, or none.
    let mut acc: Vec<Option<(u8, u8, bool, bool)>> =
        forms.iter().map(|f| f.as_ref().map(|_| (0, 0, false, false))).collect();
    for ((op, probe), good) in owner.into_iter().zip(ok) {
        let Some(a) = acc[op].as_mut().filter(|_| good) else {
            continue;
        };
        match probe {
            Probe::Neg(k) => a.0 |= 1 << k,
            Probe::Abs(k) => a.1 |= 1 << k,
            Probe::Clamp => a.2 = true,
            Probe::Omod => a.3 = true,
        }
    }
    Ok(acc
        .into_iter()
        .map(|a| {
            a.map(|(neg, abs, clamp, omod)| {
                format!("Accepts {{ neg: {neg:#05b}, abs: {abs:#05b}, clamp: {clamp}, omod: {omod} }}")
            })
        })
        .collect())
}

fn generate() -> Result<String> {
    let mut out = String::new();
    writeln!(
        out,
        "// @generated by `cargo xtask gen-mnemonics` from {LLVM_MC}; do not edit."
    )?;
    writeln!(
        out,
        "//! gfx11 samples as LLVM prints them (mnemonic and operands), per encoding,"
    )?;
    writeln!(
        out,
        "//! indexed by opcode (\"\" where LLVM knows no instruction); VOPD halves by name;"
    )?;
    writeln!(
        out,
        "//! and the modifiers LLVM assembles on each VOP3 opcode and each VOP1, VOP2 and"
    )?;
    writeln!(out, "//! VOPC opcode's DPP16 form.")?;
    writeln!(out)?;
    writeln!(out, "use super::modifiers::Accepts;")?;
    writeln!(out)?;
    let mut tables = String::new();
    for enc in ENCODINGS {
        let names = mnemonics(enc)?;
        if names.iter().all(Option::is_none) {
            return Err(format!("{LLVM_MC} decoded no {} instruction", enc.table).into());
        }
        writeln!(out, "pub(crate) static {}: [&str; {}] = [", enc.table, enc.ops)?;
        for n in &names {
            writeln!(out, "    {:?},", n.as_deref().unwrap_or(""))?;
        }
        writeln!(out, "];")?;
        let which = match enc.table {
            "VOP3" => Some(("VOP3_MODIFIERS", false)),
            "VOP1" | "VOP2" | "VOPC" => Some(("", true)),
            _ => None,
        };
        if let Some((name, dpp)) = which {
            let name = if dpp {
                format!("{}_DPP16_MODIFIERS", enc.table)
            } else {
                name.to_string()
            };
            let acc = accepted(enc.table, &names, dpp)?;
            let what = if dpp { "DPP16 form" } else { "VOP3 opcode" };
            writeln!(
                tables,
                "/// The modifiers LLVM assembles on each {} {what} (none where it has none).",
                enc.table
            )?;
            writeln!(tables, "pub(crate) static {name}: [Accepts; {}] = [", enc.ops)?;
            for a in &acc {
                writeln!(tables, "    {},", a.as_deref().unwrap_or("Accepts::NONE"))?;
            }
            writeln!(tables, "];")?;
        }
    }
    out.push_str(&tables);
    for (table, names) in ["VOPD_X", "VOPD_Y"].into_iter().zip(vopd_tables()?) {
        writeln!(out, "pub(crate) static {table}: [&str; {}] = [", names.len())?;
        for n in &names {
            writeln!(out, "    {:?},", n.as_deref().unwrap_or(""))?;
        }
        writeln!(out, "];")?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed table is what llvm-mc-19 gives, where it is installed.
    #[test]
    fn generated_mnemonics_are_current() {
        if Command::new(LLVM_MC).arg("--version").output().is_err() {
            eprintln!("skipped: {LLVM_MC} is not installed");
            return;
        }
        let fresh = generate().expect("generate");
        let committed = std::fs::read_to_string(crate::workspace_root().join(OUTPUT)).expect("read committed table");
        assert!(fresh == committed, "{OUTPUT} is stale: run `cargo xtask gen-mnemonics`");
    }
}
