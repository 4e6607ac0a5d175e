//! `cargo xtask rocm-run [--dir DIR]`: ROCm's clients, unmodified, on the mock GPU
//! through `libamd_interpose.so`, in the root `cargo xtask rocm-env` makes: `rocminfo`
//! (its agent list checked), then each HIP program of `tests/hip/` built with the
//! root's `hipcc --offload-arch=…` (and the options its `// hipcc:` lines give) and
//! run, on the profiles its `// profiles:` line names (all where it has none); a
//! program passes when it exits 0 and prints `ok`. All of it on each mock profile of [`PROFILES`] in turn (the
//! interposer's `AMD_MOCK_PROFILE`): a gfx1100 (RDNA3), a gfx942 (CDNA3, an MI300X
//! partition) and a gfx942-spx (a whole MI300X, 8 XCCs). Also checks that no client leaves the interposer's files behind in
//! the root's `/tmp`. Needs root (chroot does); never part of the test command (the
//! interposer's tests run the same where the root exists).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{Result, rocm_env, workspace_root};

/// The mock profiles the clients run on: `AMD_MOCK_PROFILE`, `--offload-arch` and
/// what rocminfo names the agent.
pub const PROFILES: [(&str, &str); 3] = [("gfx1100", "gfx1100"), ("gfx942", "gfx942"), ("gfx942-spx", "gfx942")];

pub fn run(args: &[String]) -> Result<()> {
    let dir = match args {
        [] => rocm_env::default_dir(),
        [flag, d] if flag == "--dir" => PathBuf::from(d),
        _ => return Err("usage: cargo xtask rocm-run [--dir DIR]".into()),
    };
    if !rocm_env::ready(&dir) {
        return Err(format!(
            "no ROCm root at {}, or one without a package the programs need (make or update \
             it with `cargo xtask rocm-env`)",
            dir.display()
        )
        .into());
    }
    if !rocm_env::is_root() {
        return Err("rocm-run needs root: chroot does (run it with sudo)".into());
    }
    let root = workspace_root();
    let built = crate::interpose::build_interposer()?;
    let work = dir.join("tmp/amd-hcq-rocm-run");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    std::fs::copy(built, work.join("libamd_interpose.so"))?;
    let inside = |p: &Path| Path::new("/tmp/amd-hcq-rocm-run").join(p.file_name().unwrap_or_default());
    let lib = inside(Path::new("libamd_interpose.so"));
    let mut failed = Vec::new();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(root.join("tests/hip"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "hip"))
        .collect();
    sources.sort();
    for src in &sources {
        std::fs::copy(src, work.join(src.file_name().unwrap_or_default()))?;
    }
    for (profile, arch) in PROFILES {
        // rocminfo.
        let t = Instant::now();
        let out = client(&dir, &lib, profile, &["rocminfo"])?;
        let name = format!("Name:                    {arch}");
        let want = ["ROCk module is loaded", name.as_str(), "*** Done ***"];
        let missing: Vec<&str> = want.iter().copied().filter(|w| !out.1.contains(w)).collect();
        if out.0 && missing.is_empty() {
            println!(
                "rocm-run: {profile}: rocminfo: ok, lists the mock's {arch} ({:.1} s)",
                t.elapsed().as_secs_f64()
            );
        } else {
            failed.push(format!("{profile}: rocminfo: missing {missing:?}:\n{}", out.1));
        }
        for src in &sources {
            let name = src
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("program")
                .to_string();
            let (flags, only) = directives(src)?;
            if let Some((profiles, why)) = only.filter(|(p, _)| !p.iter().any(|p| p == profile)) {
                println!(
                    "rocm-run: {profile}: {name}: skipped, it runs on {} {why}",
                    profiles.join(" and ")
                );
                continue;
            }
            let exe = Path::new("/tmp/amd-hcq-rocm-run").join(format!("{name}-{arch}"));
            let built = Command::new("chroot")
                .arg(&dir)
                .arg("hipcc")
                .arg(format!("--offload-arch={arch}"))
                .arg("-O2")
                .arg(inside(src))
                .arg("-o")
                .arg(&exe)
                .args(&flags)
                .output()?;
            if !built.status.success() {
                failed.push(format!(
                    "{profile}: {name}: hipcc failed:\n{}",
                    String::from_utf8_lossy(&built.stderr)
                ));
                continue;
            }
            let t = Instant::now();
            let (ok, text) = client(&dir, &lib, profile, &[exe.to_str().unwrap_or_default()])?;
            let first = text.lines().next().unwrap_or_default().to_string();
            if ok && first.starts_with("ok") {
                println!(
                    "rocm-run: {profile}: {name}: {first} ({:.1} s)",
                    t.elapsed().as_secs_f64()
                );
            } else {
                failed.push(format!("{profile}: {name}:\n{text}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    let left: Vec<String> = std::fs::read_dir(dir.join("tmp"))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("amd-interpose-"))
        .collect();
    if !left.is_empty() {
        failed.push(format!("files left behind in the root's /tmp: {left:?}"));
    }
    if !failed.is_empty() {
        return Err(format!("rocm-run: {}", failed.join("\n")).into());
    }
    println!(
        "rocm-run: rocminfo and {} HIP program(s) ran on the mock's {}",
        sources.len(),
        PROFILES.map(|p| p.0).join(" and ")
    );
    Ok(())
}

/// A program's own lines: `// hipcc: …` adds options after its source (libraries to
/// link), `// profiles: P… (why)` names the only profiles it runs on and why.
type Directives = (Vec<String>, Option<(Vec<String>, String)>);

fn directives(src: &Path) -> Result<Directives> {
    let text = std::fs::read_to_string(src)?;
    let mut flags = Vec::new();
    let mut only = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("// hipcc:") {
            flags.extend(rest.split_whitespace().map(str::to_string));
        } else if let Some(rest) = line.strip_prefix("// profiles:") {
            let (names, why) = rest.split_once('(').map_or((rest, ""), |(n, w)| (n, w));
            let why = why.trim_end_matches(')');
            only = Some((
                names.split_whitespace().map(str::to_string).collect(),
                if why.is_empty() {
                    String::new()
                } else {
                    format!("({why})")
                },
            ));
        }
    }
    Ok((flags, only))
}

/// Runs `argv` in the root under the interposer, on a mock of `profile`; whether it
/// exited 0, and its output.
fn client(dir: &Path, lib: &Path, profile: &str, argv: &[&str]) -> Result<(bool, String)> {
    let out = Command::new("chroot")
        .arg(dir)
        .arg("env")
        .arg(format!("LD_PRELOAD={}", lib.display()))
        .arg(format!("AMD_MOCK_PROFILE={profile}"))
        .args(argv)
        .output()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((out.status.success(), text))
}
