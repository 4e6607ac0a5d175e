//! Builds the test kernels (`tests/kernels/*.cl`) into code objects with clang-19 and
//! ld.lld-19, for each target (gfx1100 beside the sources, gfx1201 in `gfx1201/`,
//! gfx1100 in wave64 in `wave64/`, gfx1201 in wave64 in `gfx1201/wave64/`, gfx942 in
//! `gfx942/`), or checks that the committed ones are current.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, workspace_root};

/// The kernel folder.
pub fn dir() -> PathBuf {
    workspace_root().join("tests/kernels")
}

/// The targets the kernels are built for, each with its folder below [`dir`]
/// (`wave64`: gfx1100's wave64 code, `-mwavefrontsize64`, and gfx1201's in
/// `gfx1201/wave64`; gfx942, CDNA3, runs waves of 64 lanes only).
pub const TARGETS: [(&str, &str); 5] = [
    ("gfx1100", ""),
    ("gfx1201", "gfx1201"),
    ("gfx1100", WAVE64),
    ("gfx1201", GFX1201_WAVE64),
    ("gfx942", GFX942),
];

/// The folder of gfx1100's wave64 builds.
pub const WAVE64: &str = "wave64";

/// The folder of gfx1201's wave64 builds.
pub const GFX1201_WAVE64: &str = "gfx1201/wave64";

/// Whether `folder` holds wave64 builds of an RDNA target (`-mwavefrontsize64`).
pub fn is_wave64(folder: &str) -> bool {
    folder == WAVE64 || folder == GFX1201_WAVE64
}

/// The folder of the gfx942 (CDNA3) builds.
pub const GFX942: &str = "gfx942";

/// Where a target's code objects are.
pub fn target_dir(folder: &str) -> PathBuf {
    dir().join(folder)
}

/// Whether clang-19 and ld.lld-19 are installed.
pub fn toolchain_present() -> bool {
    ["clang-19", "ld.lld-19"].iter().all(|t| {
        Command::new(t)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Optimisation levels each kernel is built at: `name.hsaco` (-O2) and `name_O0.hsaco`.
pub const LEVELS: [(&str, &str); 2] = [("-O2", ""), ("-O0", "_O0")];

/// The marker of a source line giving clang-19 options of its own (for example
/// `// clang-19: -cl-fp32-correctly-rounded-divide-sqrt`).
const OWN_FLAGS: &str = "// clang-19:";

/// The marker of a source that has no wave64 build (it uses wave32-only builtins, the
/// WMMA ones, which CDNA3 does not have either).
const WAVE32_ONLY: &str = "// wave32 only";

/// The marker of a source that has no gfx942 build (it uses builtins only RDNA has:
/// DPP8, the lane permutes).
const RDNA_ONLY: &str = "// rdna only";

/// The marker of a source built for waves of 64 lanes only (`_w64` builtins).
const WAVE64_ONLY: &str = "// wave64 only";

/// The marker of a source with no -O0 build (inline assembly with scalar operands,
/// which -O0 keeps in VGPRs).
const OPTIMISED_ONLY: &str = "// optimised only";

/// The marker of a source line naming the only processors it is built for (for
/// example `// targets: gfx1201 gfx942`, for builtins those two have alone).
const ONLY_FOR: &str = "// targets:";

/// Whether `src` has a build for `mcpu` in the target folder `folder` at `opt`: a
/// wave32-only source has none in the wave64 folders (a wave64-only one none in the
/// others), an RDNA-only one none for
/// gfx942, one with a `// targets:` line none for a processor it does not name, an
/// optimised-only one none at -O0.
fn builds_for(src: &Path, mcpu: &str, folder: &str, opt: &str) -> Result<bool> {
    let text = std::fs::read_to_string(src)?;
    let marked = |marker: &str| text.lines().any(|l| l.trim() == marker);
    if opt == "-O0" && marked(OPTIMISED_ONLY) {
        return Ok(false);
    }
    let named = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix(ONLY_FOR))
        .all(|l| l.split_whitespace().any(|t| t == mcpu));
    Ok(named
        && match folder {
            f if is_wave64(f) => !marked(WAVE32_ONLY),
            GFX942 => !marked(WAVE32_ONLY) && !marked(RDNA_ONLY),
            _ => !marked(WAVE64_ONLY),
        })
}

/// The options a source's `// clang-19:` lines add.
fn own_flags(src: &Path) -> Result<Vec<String>> {
    Ok(std::fs::read_to_string(src)?
        .lines()
        .filter_map(|l| l.trim().strip_prefix(OWN_FLAGS))
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect())
}

/// Builds `src` (`name.cl`) into a code object for `mcpu` at `out` (waves of 64 lanes
/// with `wave64`).
pub fn build(src: &Path, out: &Path, opt: &str, mcpu: &str, wave64: bool) -> Result<()> {
    let obj = out.with_extension("o");
    let mut own = own_flags(src)?;
    if wave64 {
        own.push("-mwavefrontsize64".into());
    }
    let status = Command::new("clang-19")
        .args([
            "-x",
            "cl",
            // OpenCL C 2.0: unqualified pointers are generic (FLAT) pointers.
            "-cl-std=CL2.0",
            "-Xclang",
            "-finclude-default-header",
            "-target",
            "amdgcn-amd-amdhsa",
        ])
        .arg(format!("-mcpu={mcpu}"))
        .args(["-mcumode", opt, "-nogpulib", "-c"])
        .args(&own)
        .arg(src)
        .arg("-o")
        .arg(&obj)
        .status()?;
    if !status.success() {
        return Err(format!("clang-19 failed on {}", src.display()).into());
    }
    let status = Command::new("ld.lld-19")
        .arg("-shared")
        .arg(&obj)
        .arg("-o")
        .arg(out)
        .status()?;
    let _ = std::fs::remove_file(&obj);
    if !status.success() {
        return Err(format!("ld.lld-19 failed on {}", obj.display()).into());
    }
    Ok(())
}

/// The `.cl` sources.
pub fn sources() -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cl"))
        .collect();
    v.sort();
    Ok(v)
}

/// `cargo xtask kernels [--check]`.
pub fn run(args: &[String]) -> Result<()> {
    let check = args.iter().any(|a| a == "--check");
    if !toolchain_present() {
        return Err("clang-19 and ld.lld-19 are needed (Debian: apt-get install clang-19 lld-19)".into());
    }
    let tmp = std::env::temp_dir().join(format!("amd-hcq-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let mut stale = Vec::new();
    let sources = sources()?;
    let mut builds = Vec::new();
    for target in &TARGETS {
        for level in &LEVELS {
            builds.extend(sources.iter().map(|src| (target, level, src)));
        }
    }
    for (&(mcpu, folder), &(opt, suffix), src) in builds {
        if !builds_for(src, mcpu, folder, opt)? {
            continue;
        }
        let stem = src
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or("kernel without a name")?;
        let out = target_dir(folder);
        std::fs::create_dir_all(&out)?;
        let committed = out.join(format!("{stem}{suffix}.hsaco"));
        let fresh = tmp.join(format!("{mcpu}-{}-{stem}{suffix}.hsaco", folder.replace('/', "-")));
        build(src, &fresh, opt, mcpu, is_wave64(folder))?;
        if check {
            if std::fs::read(&committed).ok() != Some(std::fs::read(&fresh)?) {
                stale.push(committed.display().to_string());
            }
        } else {
            std::fs::copy(&fresh, &committed)?;
            println!("built {}", committed.display());
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    if !stale.is_empty() {
        return Err(format!("stale code objects (run `cargo xtask kernels`): {}", stale.join(", ")).into());
    }
    if check {
        println!("test kernels are current");
    } else if crate::listings::objdump_present() {
        crate::listings::run(&[])?;
    } else {
        println!("llvm-objdump-19 not installed: listings not rewritten (cargo xtask listings)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed code objects are what the sources build to, where the toolchain
    /// exists here.
    #[test]
    fn committed_kernels_are_current() {
        crate::check_current_where(toolchain_present(), "clang-19 / ld.lld-19 not installed", run);
    }
}
