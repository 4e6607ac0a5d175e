//! `cargo xtask golden-capture [--check]`: the command streams tinygrad 0.14.0 builds
//! for gfx1100 and gfx12 on its own mock GPU, into
//! `golden/tinygrad-0.14.0-streams.json` (`crates/amd-packets/tests/golden_0_14.rs`
//! compares the encoders with them dword for dword). Runs
//! `xtask/capture/tinygrad_0_14_streams.py` once per target with
//! `DEV=MOCK+AMD:LLVM:<arch>` in the Python environment and the tinygrad 0.14.0
//! release that `cargo xtask interpose tinygrad` sets up under `target/interpose/`
//! (`TINYGRAD_DIR` names a tinygrad tree at the release's commit; without it one is
//! cloned). `--check` fails where the committed file differs from a fresh capture.

use std::process::Command;

use crate::{Result, tinygrad_tests};

const OUTPUT: &str = "golden/tinygrad-0.14.0-streams.json";
const SCRIPT: &str = "xtask/capture/tinygrad_0_14_streams.py";
/// The targets captured: tinygrad's mock GPU of each generation.
const ARCHS: &[&str] = &["gfx1100", "gfx1201"];

pub fn run(args: &[String]) -> Result<()> {
    let check = crate::check_flag(args, "golden-capture")?;
    let root = crate::workspace_root();
    let work = root.join("target/interpose");
    std::fs::create_dir_all(&work)?;
    let python = tinygrad_tests::python_env(&work)?;
    let (site, tree) = tinygrad_tests::current_release(&work, &python)?;
    let bin = tinygrad_tests::clang_dir(&work)?;
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let script = root.join(SCRIPT);
    let mut parts = Vec::new();
    for arch in ARCHS {
        let out = Command::new(&python)
            .arg(&script)
            .arg("capture")
            .current_dir(&tree)
            .env("DEV", format!("MOCK+AMD:LLVM:{arch}"))
            .env("PYTHONPATH", format!("{}:{}", site.display(), tree.display()))
            .env("PATH", &path)
            .output()?;
        if !out.status.success() {
            return Err(format!(
                "capturing tinygrad {}'s streams for {arch} failed:\n{}",
                tinygrad_tests::CURRENT,
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        let part = work.join(format!("streams-{arch}.json"));
        std::fs::write(&part, &out.stdout)?;
        parts.push(part);
    }
    let merged = Command::new(&python).arg(&script).arg("merge").args(&parts).output()?;
    if !merged.status.success() {
        return Err(format!(
            "merging the captures failed:\n{}",
            String::from_utf8_lossy(&merged.stderr)
        )
        .into());
    }
    let text = String::from_utf8(merged.stdout)?;
    crate::write_or_check(OUTPUT, &text, check, "cargo xtask golden-capture")
}

#[cfg(test)]
mod tests {
    /// The committed streams are what tinygrad 0.14.0 builds, where its environment is
    /// set up here (`cargo xtask interpose tinygrad` or `golden-capture` made it; a
    /// test does not download tinygrad, torch or a tinygrad tree).
    #[test]
    fn committed_streams_are_current() {
        let work = crate::workspace_root().join("target/interpose");
        let ready = work.join("venv/.complete").exists()
            && work
                .join(format!(
                    "tinygrad-{}/.complete-test-extra",
                    super::tinygrad_tests::CURRENT
                ))
                .exists();
        crate::check_current_where(
            ready,
            "tinygrad 0.14.0's environment is not set up (run `cargo xtask golden-capture` once)",
            super::run,
        );
    }
}
