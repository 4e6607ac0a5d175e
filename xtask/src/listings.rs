//! `cargo xtask listings [--check]`: writes what `llvm-objdump-19` prints for every
//! instruction of every committed test kernel into `llvm-objdump/` beside the code
//! objects of each target (`tests/kernels/llvm-objdump/` for gfx1100,
//! `tests/kernels/gfx1201/llvm-objdump/` for gfx1201), one file per code object, one
//! line per instruction: the dwords in hex, a tab, the text.
//! The disassembler's test compares its text with these lines, so it runs where LLVM
//! is not installed; the check here keeps them current where it is.
//!
//! It also writes `crates/amd-isa/tests/data/rdna4_probes.txt`: one encoding of every
//! RDNA4 opcode the coverage report probes (`amd_isa::rdna4::probes`) and what
//! `llvm-mc-19 -disassemble --mcpu=gfx1201` prints for it (`-` where LLVM takes the
//! encoding for no instruction), for the disassembler's test of the forms the test
//! kernels do not use; and `crates/amd-isa/tests/data/cdna3_probes.txt`, the same for
//! every opcode of the CDNA tables (`amd_isa::cdna3::probes`) read `--mcpu=gfx942`, for
//! the CDNA3 decoder's test (`-` marks, among others, the CDNA4 opcodes gfx942 lacks);
//! and `crates/amd-isa/tests/data/cdna3_variants.txt`, four encodings of every CDNA
//! opcode with random fields (`amd_isa::cdna3::variants`) as gfx942 reads them, for the
//! disassembler's test of modifiers and operands.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Result;

const OBJDUMP: &str = "llvm-objdump-19";
const MC: &str = "llvm-mc-19";
/// The probe listings: (file, the probes, the target LLVM reads them for).
type ProbeSet = (
    &'static str,
    fn() -> Vec<(&'static str, &'static str, Vec<u32>)>,
    &'static str,
);
const PROBES: [ProbeSet; 2] = [
    (
        "crates/amd-isa/tests/data/rdna4_probes.txt",
        amd_isa::rdna4::probes,
        "gfx1201",
    ),
    (
        "crates/amd-isa/tests/data/cdna3_probes.txt",
        amd_isa::cdna3::probes,
        "gfx942",
    ),
];

/// The CDNA3 variants' listing: `PER_OPCODE` encodings of every opcode with random
/// fields (`amd_isa::cdna3::variants`), as `llvm-mc-19 --mcpu=gfx942` reads them.
const VARIANTS: &str = "crates/amd-isa/tests/data/cdna3_variants.txt";
const PER_OPCODE: usize = 4;

/// What llvm-mc-19 prints for each probe, read for `mcpu` ([`read_all`]), `-` where it
/// reads no one instruction there; with `exact`, also where it would encode what it
/// read otherwise (a bit it ignores is set, such as an odd register pair's low bit:
/// it read another instruction than the probe's bits say).
fn batch_listing(probes: &[(&str, &str, Vec<u32>)], mcpu: &str, exact: bool) -> Result<String> {
    let mut out = String::new();
    for ((encoding, name, words), read) in probes.iter().zip(read_all(probes, mcpu)?) {
        let hex: Vec<String> = words.iter().map(|w| format!("{w:08x}")).collect();
        let text = read
            .as_ref()
            .filter(|r| !exact || &r.words == words)
            .map_or("-", |r| r.text.as_str());
        writeln!(out, "{}\t{encoding} {name}\t{text}", hex.join(" "))?;
    }
    Ok(out)
}

/// [`batch_listing`] of encodings with random fields, each replaced by the encoding LLVM
/// would write for what it read there (where a bit LLVM ignores is set), kept where
/// LLVM reads that back as the same text; a probe LLVM does not read is kept with `-`.
fn canonical_listing(probes: &[(&str, &str, Vec<u32>)], mcpu: &str) -> Result<String> {
    let first = read_all(probes, mcpu)?;
    let canonical: Vec<(&str, &str, Vec<u32>)> = probes
        .iter()
        .zip(&first)
        .map(|(p, r)| (p.0, p.1, r.as_ref().map_or_else(|| p.2.clone(), |r| r.words.clone())))
        .collect();
    let second = read_all(&canonical, mcpu)?;
    let mut out = String::new();
    for (((encoding, name, words), a), b) in canonical.iter().zip(&first).zip(&second) {
        let hex: Vec<String> = words.iter().map(|w| format!("{w:08x}")).collect();
        let text = match (a, b) {
            (Some(a), Some(b)) if a.text == b.text && &b.words == words => b.text.as_str(),
            _ => "-",
        };
        writeln!(out, "{}\t{encoding} {name}\t{text}", hex.join(" "))?;
    }
    Ok(out)
}

/// What llvm-mc-19 reads in each probe, for `mcpu`: [`mc_batch`] over chunks of the
/// probes; where llvm-mc crashes on a chunk (LLVM 19 does on some SDWA and matrix
/// encodings), over its halves, down to the probes it crashes on, which it reads as
/// nothing.
fn read_all(probes: &[(&str, &str, Vec<u32>)], mcpu: &str) -> Result<Vec<Option<Read>>> {
    fn reads(probes: &[Vec<u32>], mcpu: &str, out: &mut Vec<Option<Read>>) -> Result<()> {
        match mc_batch(probes, mcpu)? {
            Some(t) => out.extend(t),
            None if probes.len() == 1 => out.push(None),
            None => {
                let (a, b) = probes.split_at(probes.len() / 2);
                reads(a, mcpu, out)?;
                reads(b, mcpu, out)?;
            }
        }
        Ok(())
    }
    let words: Vec<Vec<u32>> = probes.iter().map(|p| p.2.clone()).collect();
    let mut all = Vec::with_capacity(words.len());
    for chunk in words.chunks(256) {
        reads(chunk, mcpu, &mut all)?;
    }
    Ok(all)
}

/// One instruction as llvm-mc read it: its text, and its encoding as LLVM would write
/// it.
#[derive(Clone)]
struct Read {
    text: String,
    words: Vec<u32>,
}

/// The marker after probe `k` of a batch: `s_nop 0x8000 + k`, as LLVM prints it.
fn marker(k: usize) -> (u32, String) {
    let imm = 0x8000 | (k as u32 & 0x7fff);
    (0xbf80_0000 | imm, format!("s_nop {imm:#x}"))
}

/// What llvm-mc-19 prints for each probe, read for `mcpu` in one run of it (`None`
/// where it crashes): each probe on a line of its own and a marker instruction after
/// it ([`marker`]), so a probe's text is the one instruction LLVM prints between the
/// marker before it and its own, where LLVM warned of nothing on its line and marked
/// no operand invalid; with the encoding LLVM would write for it (`-show-encoding`).
fn mc_batch(probes: &[Vec<u32>], mcpu: &str) -> Result<Option<Vec<Option<Read>>>> {
    let hex = |words: &[u32]| {
        let bytes: Vec<String> = words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .map(|b| format!("{b:#04x}"))
            .collect();
        bytes.join(",")
    };
    let mut input = String::new();
    for (k, words) in probes.iter().enumerate() {
        writeln!(input, "{}\n{}", hex(words), hex(&[marker(k).0]))?;
    }
    let mut child = Command::new(MC)
        .args([
            "-arch=amdgcn",
            &format!("-mcpu={mcpu}"),
            "-disassemble",
            "-show-encoding",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("llvm-mc's stdin")?;
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, input.as_bytes()));
    let done = child.wait_with_output()?;
    // A crash may close the pipe before all input is written.
    let written = writer.join().map_err(|_| "llvm-mc's input writer failed")?;
    if !done.status.success() {
        return Ok(None);
    }
    written?;
    // Probe k is on line 2k + 1.
    let mut warned = vec![false; probes.len()];
    for line in std::str::from_utf8(&done.stderr)?.lines() {
        let Some((l, _)) = line.strip_prefix("<stdin>:").and_then(|r| r.split_once(':')) else {
            continue;
        };
        let l: usize = l.parse()?;
        if l % 2 == 1 {
            if let Some(w) = warned.get_mut(l / 2) {
                *w = true;
            }
        }
    }
    let lines: Vec<(&str, &str)> = std::str::from_utf8(&done.stdout)?
        .lines()
        .filter_map(|l| l.split_once("; encoding: "))
        .map(|(t, e)| (t.trim(), e.trim()))
        .collect();
    // Where each marker stands among the printed instructions.
    let mut at = Vec::with_capacity(probes.len());
    let mut from = 0;
    for k in 0..probes.len() {
        let text = marker(k).1;
        let found = lines[from..].iter().position(|l| l.0 == text).map(|j| from + j);
        if let Some(j) = found {
            from = j + 1;
        }
        at.push(found);
    }
    let texts = (0..probes.len())
        .map(|k| {
            let before = if k == 0 { Some(0) } else { at[k - 1].map(|j| j + 1) };
            let (start, end) = (before?, at[k]?);
            let (text, enc) = lines[start];
            // A comment in the text marks an operand or control LLVM takes as invalid.
            if end != start + 1 || warned[k] || text.contains("/*") {
                return None;
            }
            let bytes = enc
                .trim_start_matches('[')
                .trim_end_matches(']')
                .split(',')
                .map(|b| u8::from_str_radix(b.trim_start_matches("0x"), 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            let words = bytes
                .chunks(4)
                .map(|c| c.try_into().ok().map(u32::from_le_bytes))
                .collect::<Option<Vec<u32>>>()?;
            Some(Read {
                text: text.to_string(),
                words,
            })
        })
        .collect();
    Ok(Some(texts))
}

/// The listing folder of a target's code objects in `code_dir`.
pub fn dir(code_dir: &Path) -> PathBuf {
    code_dir.join("llvm-objdump")
}

/// Whether llvm-objdump-19 runs here.
pub fn objdump_present() -> bool {
    Command::new(OBJDUMP)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The listing of one code object for `mcpu`.
pub fn listing(hsaco: &Path, mcpu: &str) -> Result<String> {
    let out = Command::new(OBJDUMP)
        .args(["-d", &format!("--mcpu={mcpu}"), "--no-leading-addr"])
        .arg(hsaco)
        .output()?;
    if !out.status.success() {
        return Err(format!("{OBJDUMP} failed on {}", hsaco.display()).into());
    }
    let text = String::from_utf8(out.stdout)?;
    let mut listing = String::new();
    for line in text.lines() {
        // "\tv_add_f32_e32 v1, v2, v3     // 000000001A80: 7E0402E9 DE54C102 <sym+0x10>"
        let Some((asm, raw)) = line.split_once("// ") else {
            continue;
        };
        let Some((_, words)) = raw.split_once(": ") else {
            continue;
        };
        let asm = asm.trim();
        if asm.is_empty() || asm == "s_code_end" {
            continue;
        }
        let words: Vec<&str> = words
            .split_whitespace()
            .take_while(|w| w.len() == 8 && w.chars().all(|c| c.is_ascii_hexdigit()))
            .collect();
        writeln!(listing, "{}\t{asm}", words.join(" ").to_lowercase())?;
    }
    Ok(listing)
}

pub fn run(args: &[String]) -> Result<()> {
    let check = crate::check_flag(args, "listings")?;
    if !objdump_present() {
        return Err(format!("{OBJDUMP} is needed (Debian: apt-get install llvm-19)").into());
    }
    let mut stale = Vec::new();
    // The wave64 builds have no listings: gfx1100's are the disassembler's reference.
    for (mcpu, folder) in crate::kernels::TARGETS
        .into_iter()
        .filter(|t| t.1 != crate::kernels::WAVE64)
    {
        let code_dir = crate::kernels::target_dir(folder);
        let mut codes: Vec<PathBuf> = std::fs::read_dir(&code_dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "hsaco"))
            .collect();
        codes.sort();
        std::fs::create_dir_all(dir(&code_dir))?;
        for code in codes {
            let stem = code
                .file_stem()
                .and_then(|s| s.to_str())
                .ok_or("kernel without a name")?;
            let path = dir(&code_dir).join(format!("{stem}.txt"));
            let fresh = listing(&code, mcpu)?;
            if check {
                if std::fs::read_to_string(&path).ok().as_deref() != Some(fresh.as_str()) {
                    stale.push(path.display().to_string());
                }
            } else {
                std::fs::write(&path, fresh)?;
                println!("wrote {}", path.display());
            }
        }
    }
    let mut listings = Vec::new();
    for (file, probes, mcpu) in PROBES {
        listings.push((file, batch_listing(&probes(), mcpu, false)?));
    }
    listings.push((
        VARIANTS,
        canonical_listing(&amd_isa::cdna3::variants(PER_OPCODE), "gfx942")?,
    ));
    for (file, fresh) in listings {
        let path = crate::workspace_root().join(file);
        if check {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(fresh.as_str()) {
                stale.push(file.to_string());
            }
        } else {
            std::fs::write(&path, fresh)?;
            println!("wrote {file}");
        }
    }
    if !stale.is_empty() {
        return Err(format!("stale listings (run `cargo xtask listings`): {}", stale.join(", ")).into());
    }
    if check {
        println!("listings are current");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed listings are what llvm-objdump-19 prints, where it is installed.
    #[test]
    fn committed_listings_are_current() {
        let missing = format!("{OBJDUMP} is not installed");
        crate::check_current_where(objdump_present(), &missing, run);
    }
}
