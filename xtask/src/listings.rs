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
//! the CDNA3 decoder's test (`-` marks, among others, the CDNA4 opcodes gfx942 lacks).

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

/// What llvm-mc-19 prints for each probe, read for `mcpu`.
fn probe_listing(probes: Vec<(&str, &str, Vec<u32>)>, mcpu: &str) -> Result<String> {
    let mut out = String::new();
    for (encoding, name, words) in probes {
        let bytes: Vec<String> = words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .map(|b| format!("{b:#04x}"))
            .collect();
        let mut child = Command::new(MC)
            .args(["-arch=amdgcn", &format!("-mcpu={mcpu}"), "-disassemble"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        std::io::Write::write_all(
            child.stdin.as_mut().ok_or("llvm-mc's stdin")?,
            bytes.join(",").as_bytes(),
        )?;
        let done = child.wait_with_output()?;
        let lines: Vec<&str> = std::str::from_utf8(&done.stdout)?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with(".text"))
            .collect();
        let warned = !done.stderr.is_empty();
        // An operand LLVM marks invalid (a probe's VGPR where the form takes an SGPR)
        // is no instruction to compare with either.
        let text = match lines.as_slice() {
            [one] if !warned && !one.contains("/*Invalid") => *one,
            _ => "-",
        };
        let hex: Vec<String> = words.iter().map(|w| format!("{w:08x}")).collect();
        writeln!(out, "{}\t{encoding} {name}\t{text}", hex.join(" "))?;
    }
    Ok(out)
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
    for (file, probes, mcpu) in PROBES {
        let fresh = probe_listing(probes(), mcpu)?;
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
