//! Generates `crates/amd-packets/src/pm4/regs_generated.rs` from the Linux amdgpu
//! register headers (`gc_9_4_3_offset.h`, `gc_10_3_0_offset.h`, `gc_11_0_0_offset.h`
//! of linux-6.12).
//!
//! Every `COMPUTE_*` register of GC segment 0 whose SET_SH_REG offset lies in the SH
//! window (0x2c00..0x3000) is emitted, per target, as an `ShReg` constant, plus a
//! sorted name table for disassembly.
//!
//! Where the headers come from, first match wins: `--linux DIR` (a kernel source tree),
//! `$AMD_LINUX_SRC`, or `/usr/src/linux-source-6.12.tar.xz` (Debian's
//! `linux-source-6.12`), from which only the two headers are extracted.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Result;

/// GC register segment 0 base of gfx10.3 and gfx11 (`GC_BASE__INST0_SEG0`,
/// sienna_cichlid_ip_offset.h; the same value on gfx11 parts).
const GC_SEG0: u32 = 0x1260;
/// GC register segment 0 base of gfx9 (`GC_BASE__INST0_SEG0`, vega20_ip_offset.h and
/// aldebaran_ip_offset.h; gfx9.4.3's own offsets come from IP discovery, which gives
/// the same base).
const GC_SEG0_GFX9: u32 = 0x2000;
/// `PACKET3_SET_SH_REG_START` and `_END` (nvd.h).
const SH_START: u32 = 0x2c00;
const SH_END: u32 = 0x3000;

const HEADER_DIR: &str = "drivers/gpu/drm/amd/include/asic_reg/gc";
const TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";

struct Family {
    module: &'static str,
    doc: &'static str,
    header: &'static str,
    prefix: &'static str,
    /// GC segment 0 base of the family.
    seg0: u32,
}

const FAMILIES: [Family; 3] = [
    Family {
        module: "gfx94",
        doc: "gfx9.4 (CDNA3)",
        header: "gc_9_4_3_offset.h",
        prefix: "reg",
        seg0: GC_SEG0_GFX9,
    },
    Family {
        module: "gfx103",
        doc: "gfx10.3 (RDNA2)",
        header: "gc_10_3_0_offset.h",
        prefix: "mm",
        seg0: GC_SEG0,
    },
    Family {
        module: "gfx11",
        doc: "gfx11 (RDNA3)",
        header: "gc_11_0_0_offset.h",
        prefix: "reg",
        seg0: GC_SEG0,
    },
];

pub const OUTPUT: &str = "crates/amd-packets/src/pm4/regs_generated.rs";

pub fn run(args: &[String]) -> Result<()> {
    run_from_linux(args, &members(), OUTPUT, "gen-regs", generate)
}

fn members() -> Vec<String> {
    FAMILIES.iter().map(|f| format!("{HEADER_DIR}/{}", f.header)).collect()
}

/// A generator's task `[--linux DIR] [--check]`: `generate` from the Linux sources
/// (see [`linux_sources`]; `members` are the files it reads) writes or checks
/// `output`.
pub fn run_from_linux(
    args: &[String],
    members: &[String],
    output: &str,
    task: &str,
    generate: fn(&Path) -> Result<String>,
) -> Result<()> {
    let mut linux: Option<PathBuf> = None;
    let mut check = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--linux" => linux = Some(it.next().ok_or("--linux needs a directory")?.into()),
            "--check" => check = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let sources = linux_sources(linux, members)?
        .ok_or("no Linux headers: pass --linux DIR, set AMD_LINUX_SRC, or install linux-source-6.12")?;
    let text = generate(&sources.root())?;
    crate::write_or_check(output, &text, check, &format!("cargo xtask {task}"))
}

/// A Linux source tree: one given, or headers extracted from the tarball.
pub enum LinuxSources {
    /// A directory named by `--linux` or `AMD_LINUX_SRC`.
    Given(PathBuf),
    /// Headers extracted into a temporary folder.
    Extracted(Extracted),
}

impl LinuxSources {
    /// The kernel source root.
    pub fn root(&self) -> PathBuf {
        match self {
            LinuxSources::Given(d) => d.clone(),
            LinuxSources::Extracted(e) => e.root(),
        }
    }
}

/// Where the headers come from, first match wins: `given`, `$AMD_LINUX_SRC`, or
/// `members` extracted from Debian's tarball (`None` where it is not installed).
pub fn linux_sources(given: Option<PathBuf>, members: &[String]) -> Result<Option<LinuxSources>> {
    match given.or_else(|| std::env::var_os("AMD_LINUX_SRC").map(PathBuf::from)) {
        Some(d) => Ok(Some(LinuxSources::Given(d))),
        None => Ok(extract_members(members)?.map(LinuxSources::Extracted)),
    }
}

/// For a test: the committed `output` is what `generate` makes of the headers, where
/// they exist here.
#[cfg(test)]
pub fn assert_current(members: &[String], output: &str, task: &str, generate: fn(&Path) -> Result<String>) {
    let sources = match linux_sources(None, members) {
        Ok(Some(s)) => s,
        Ok(None) => {
            eprintln!("skipped: no Linux headers here (install linux-source-6.12 or set AMD_LINUX_SRC)");
            return;
        }
        Err(e) => panic!("extracting the headers failed: {e}"),
    };
    let fresh = generate(&sources.root()).expect("generate");
    let committed = std::fs::read_to_string(crate::workspace_root().join(output)).expect("read the committed file");
    assert!(fresh == committed, "{output} is stale: run `cargo xtask {task}`");
}

/// Headers extracted into a temporary folder, removed on drop.
pub struct Extracted {
    tmp: PathBuf,
}

impl Extracted {
    /// The kernel source root inside the temporary folder.
    pub fn root(&self) -> PathBuf {
        self.tmp.join("linux-source-6.12")
    }
}

impl Drop for Extracted {
    fn drop(&mut self) {
        // A leftover temporary folder is harmless; nothing to report.
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

/// Extracts `members` (paths inside the kernel tree) from Debian's linux-source
/// tarball into a temporary folder, or `None` if the tarball is not installed.
pub fn extract_members(members: &[String]) -> Result<Option<Extracted>> {
    if !Path::new(TARBALL).exists() {
        return Ok(None);
    }
    let tmp = std::env::temp_dir().join(format!(
        "amd-hcq-linux-headers-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&tmp)?;
    let extracted = Extracted { tmp: tmp.clone() };
    let status = Command::new("tar")
        .arg("-xJf")
        .arg(TARBALL)
        .arg("-C")
        .arg(&tmp)
        .args(members.iter().map(|m| format!("linux-source-6.12/{m}")))
        .status()?;
    if !status.success() {
        return Err(format!("tar could not extract {members:?} from {TARBALL}").into());
    }
    Ok(Some(extracted))
}

/// Parses `#define <prefix>NAME 0xVALUE` lines into (name, value, base_idx).
pub fn parse_header(text: &str, prefix: &str) -> Vec<(String, u32, u32)> {
    let mut values = std::collections::BTreeMap::new();
    let mut base_idx = std::collections::BTreeMap::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        if parts.next() != Some("#define") {
            continue;
        }
        let (Some(name), Some(value)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Some(name) = name.strip_prefix(prefix) else {
            continue;
        };
        let parsed = match value.strip_prefix("0x") {
            Some(hex) => u32::from_str_radix(hex, 16).ok(),
            None => value.parse().ok(),
        };
        let Some(v) = parsed else { continue };
        if let Some(reg) = name.strip_suffix("_BASE_IDX") {
            base_idx.insert(reg.to_string(), v);
        } else {
            values.insert(name.to_string(), v);
        }
    }
    values
        .into_iter()
        .filter_map(|(name, v)| base_idx.get(&name).map(|&b| (name, v, b)))
        .collect()
}

pub fn generate(linux: &Path) -> Result<String> {
    let mut out = format!(
        "\
// @generated by `cargo xtask gen-regs` from linux-6.12
// drivers/gpu/drm/amd/include/asic_reg/gc/{{gc_9_4_3,gc_10_3_0,gc_11_0_0}}_offset.h. Do not edit.
//
// SET_SH_REG offset = register + GC_BASE__INST0_SEG0 ({GC_SEG0_GFX9:#x} on gfx9, {GC_SEG0:#x} on gfx10.3
// and gfx11) - PACKET3_SET_SH_REG_START ({SH_START:#x}).

use super::ShReg;
"
    );
    for fam in &FAMILIES {
        let path = linux.join(HEADER_DIR).join(fam.header);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut regs: Vec<(String, u32)> = parse_header(&text, fam.prefix)
            .into_iter()
            .filter(|(name, v, base)| {
                name.starts_with("COMPUTE_") && *base == 0 && (SH_START..SH_END).contains(&(v + fam.seg0))
            })
            .map(|(name, v, _)| (name, v + fam.seg0 - SH_START))
            .collect();
        if regs.is_empty() {
            return Err(format!("{}: no COMPUTE_* SH registers found", path.display()).into());
        }
        regs.sort_by_key(|r| (r.1, r.0.clone()));
        writeln!(out)?;
        writeln!(out, "/// SH registers of {}, as SET_SH_REG offsets.", fam.doc)?;
        writeln!(out, "pub mod {} {{", fam.module)?;
        writeln!(out, "    use super::ShReg;")?;
        for (name, off) in &regs {
            writeln!(out, "    /// `{}{name}`", fam.prefix)?;
            writeln!(out, "    pub const {name}: ShReg = ShReg::new({off:#05x});")?;
        }
        writeln!(out)?;
        writeln!(
            out,
            "    /// (offset, name), sorted by offset; of aliases at one offset, the name"
        )?;
        writeln!(
            out,
            "    /// that sorts last (`STATIC_THREAD_MGMT_SE0` over `DESTINATION_EN_SE0`)."
        )?;
        writeln!(out, "    pub(crate) const NAMES: &[(u16, &str)] = &[")?;
        let mut names: std::collections::BTreeMap<u32, &str> = std::collections::BTreeMap::new();
        for (name, off) in &regs {
            let e = names.entry(*off).or_insert(name);
            if name.as_str() > *e {
                *e = name;
            }
        }
        for (off, name) in &names {
            writeln!(out, "        ({off:#05x}, \"{name}\"),")?;
        }
        writeln!(out, "    ];")?;
        writeln!(out, "}}")?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed tables match what the headers give, where the headers exist here.
    #[test]
    fn generated_registers_are_current() {
        assert_current(&members(), OUTPUT, "gen-regs", generate);
    }

    #[test]
    fn parses_defines() {
        let text = "#define regCOMPUTE_PGM_LO 0x1bac\n#define regCOMPUTE_PGM_LO_BASE_IDX 0\n#define regX 12\n";
        assert_eq!(
            parse_header(text, "reg"),
            vec![("COMPUTE_PGM_LO".to_string(), 0x1bac, 0)]
        );
    }
}
