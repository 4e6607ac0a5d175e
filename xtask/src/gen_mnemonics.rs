//! Generates `crates/amd-mockgpu/src/rdna3/mnemonics.rs`: what LLVM prints for a
//! sample of every opcode of every gfx11 encoding the interpreter decodes, asked of
//! `llvm-mc-19 -disassemble` (Debian's `llvm-19`) one sample instruction per opcode:
//! the mnemonic, and the operands of the sample, whose distinct register numbers tell
//! the disassembler which fields an opcode prints and how many registers each spans.
//!
//! Opcodes LLVM does not know are left out (the interpreter then prints the encoding
//! and opcode instead).

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::{Result, workspace_root};

const OUTPUT: &str = "crates/amd-mockgpu/src/rdna3/mnemonics.rs";
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
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => return Err("usage: cargo xtask gen-mnemonics [--check]".into()),
    };
    let text = generate()?;
    let out = workspace_root().join(OUTPUT);
    if check {
        if std::fs::read_to_string(&out)? != text {
            return Err(format!("{OUTPUT} is stale: run `cargo xtask gen-mnemonics`").into());
        }
        println!("{OUTPUT} is current");
    } else {
        std::fs::write(&out, text)?;
        println!("wrote {}", out.display());
    }
    Ok(())
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
        "//! indexed by opcode (\"\" where LLVM knows no instruction); VOPD halves by name."
    )?;
    writeln!(out)?;
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
    }
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
        let committed = std::fs::read_to_string(workspace_root().join(OUTPUT)).expect("read committed table");
        assert!(fresh == committed, "{OUTPUT} is stale: run `cargo xtask gen-mnemonics`");
    }
}
