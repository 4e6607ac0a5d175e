//! `cargo xtask listings [--check]`: writes what `llvm-objdump-19` prints for every
//! instruction of every committed test kernel into `llvm-objdump/` beside the code
//! objects of each target (`tests/kernels/llvm-objdump/` for gfx1100,
//! `tests/kernels/gfx1201/llvm-objdump/` for gfx1201), one file per code object, one
//! line per instruction: the dwords in hex, a tab, the text.
//! The disassembler's test compares its text with these lines, so it runs where LLVM
//! is not installed; the check here keeps them current where it is.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Result;

const OBJDUMP: &str = "llvm-objdump-19";

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
