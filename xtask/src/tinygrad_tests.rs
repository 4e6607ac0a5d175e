//! The Python side of `cargo xtask interpose tinygrad`: one virtual environment with
//! what tinygrad's tests import (numpy, torch for `test_ops.py`'s CPU reference,
//! pytest), tinygrad's current release (`pip install tinygrad==0.14.0` into a folder
//! of its own, beside the 0.10.1 source tree), its tests from the tinygrad tree whose
//! runtime matches the release, and a runner that counts pytest's results.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, check};

/// tinygrad's current release.
pub const CURRENT: &str = "0.14.0";
/// The commit of tinygrad's tree whose runtime is 0.14.0's (its `ops_amd.py` and
/// `support/hcq.py` are the release's, byte for byte; checked at setup).
pub const CURRENT_TREE: &str = "a9069c177a";

/// The parts of `test_ops.py` run, by name: pytest `-k` expressions.
pub const TEST_OPS_SUBSET: &[(&str, &str)] = &[
    (
        "elementwise",
        "test_add or test_sub or test_mul or test_div or test_neg or test_abs or test_relu or test_where or test_maximum or test_minimum",
    ),
    (
        "reduce",
        "test_sum or test_max or test_min or test_mean or test_var or test_std or test_argmax",
    ),
    ("matmul", "test_matmul or test_gemm or test_dot"),
    ("conv2d", "test_simple_conv2d or test_conv2d"),
    ("softmax", "test_softmax or test_log_softmax"),
    (
        "transcendental",
        "test_sin or test_cos or test_tan or test_exp or test_exp2 or test_log or test_log2 or test_sqrt or test_rsqrt or test_sigmoid or test_tanh or test_gelu",
    ),
];

/// A pytest run's counts and the tests that failed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PytestCounts {
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
    pub errors: u32,
    /// `FAILED`/`ERROR` lines of the short summary: test id and reason.
    pub failures: Vec<String>,
}

impl PytestCounts {
    /// Reads pytest's `-q -rfE` output: the summary line (`3 failed, 47 passed, 3
    /// skipped, 2 subtests passed in 68.77s`) and the `FAILED`/`ERROR` lines.
    pub fn parse(out: &str) -> Option<Self> {
        let summary = out.lines().rev().find(|l| {
            let l = l.trim_matches(|c| c == '=' || c == ' ');
            (l.contains(" passed") || l.contains(" failed") || l.contains(" skipped") || l.contains(" error"))
                && l.contains(" in ")
        })?;
        let mut c = PytestCounts::default();
        let body = summary.trim_matches(|c| c == '=' || c == ' ');
        let body = body.rsplit_once(" in ").map_or(body, |(b, _)| b);
        for part in body.split(", ") {
            let mut w = part.split_whitespace();
            let (Some(n), Some(what)) = (w.next().and_then(|n| n.parse::<u32>().ok()), w.next()) else {
                continue;
            };
            match what {
                "passed" => c.passed += n,
                "failed" => c.failed += n,
                "skipped" => c.skipped += n,
                "error" | "errors" => c.errors += n,
                // "subtests passed" and the like are parts of tests counted above.
                _ => {}
            }
        }
        c.failures = out
            .lines()
            .filter(|l| l.starts_with("FAILED ") || l.starts_with("ERROR "))
            .map(|l| l.to_string())
            .collect();
        Some(c)
    }

    pub fn line(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped{}",
            self.passed,
            self.failed,
            self.skipped,
            if self.errors > 0 {
                format!(", {} errors", self.errors)
            } else {
                String::new()
            }
        )
    }
}

/// The Python packages tinygrad's tests take: numpy, torch (the CPU reference) and
/// pytest, and hypothesis (`test_dtype.py`, `test_dtype_alu.py`, `test_randomness.py`).
const PACKAGES: [&str; 4] = ["numpy", "torch", "pytest", "hypothesis"];

/// The virtual environment with [`PACKAGES`] (made once, and given what a newer list
/// adds; torch from PyPI brings its CUDA libraries, several GB, which its CPU
/// reference does not use). Its marker file lists what it holds.
pub fn python_env(work: &Path) -> Result<PathBuf> {
    let venv = work.join("venv");
    let python = venv.join("bin/python");
    let done = venv.join(".complete");
    let want = PACKAGES.join(" ");
    let had = std::fs::read_to_string(&done).ok();
    if had.as_deref().is_some_and(|h| h.trim() == want) {
        return Ok(python);
    }
    if !python.exists() {
        println!("making a Python environment for tinygrad's tests in {}", venv.display());
        check(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv",
        )?;
    }
    check(
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet"])
            .args(PACKAGES),
        &format!("pip install {want}"),
    )?;
    std::fs::write(&done, &want)?;
    Ok(python)
}

/// `--full`'s test files beyond `test_ops.py`, whole.
pub const FULL_FILES: &[&str] = &[
    "test/backend/test_dtype.py",
    "test/backend/test_dtype_alu.py",
    "test/backend/test_transcendental.py",
    "test/backend/test_randomness.py",
    "test/backend/test_jit.py",
    "test/backend/test_uops.py",
    "test/backend/test_linearizer.py",
];

/// What `--full` leaves out of `test_ops.py`, and why: tests that fail on tinygrad's
/// own CPU device with this test tree and torch (not the GPU's doing).
pub const FULL_DESELECTED: &[(&str, &str)] = &[
    ("test_clip", "fails on DEV=CPU too (a backward pass at the clip bounds)"),
    (
        "test_pad_reflect_mode",
        "fails on DEV=CPU too (torch's reflect padding)",
    ),
    (
        "test_pad_replicate_mode",
        "fails on DEV=CPU too (torch's replicate padding)",
    ),
];

/// The tinygrad tree to read from: `$TINYGRAD_DIR`, else `work/<name>`, cloned from
/// GitHub with `clone_args` the first time (`why` says what for). A clone that fails
/// leaves nothing behind and is the error.
pub fn checkout(work: &Path, name: &str, clone_args: &[&str], why: &str) -> Result<PathBuf> {
    if let Some(d) = std::env::var_os("TINYGRAD_DIR") {
        return Ok(PathBuf::from(d));
    }
    let clone = work.join(name);
    if !clone.exists() {
        println!("cloning tinygrad ({why})");
        let cloned = check(
            Command::new("git")
                .args(["clone", "--quiet"])
                .args(clone_args)
                .arg("https://github.com/tinygrad/tinygrad")
                .arg(&clone),
            "git clone tinygrad",
        );
        if cloned.is_err() {
            let _ = std::fs::remove_dir_all(&clone);
        }
        cloned?;
    }
    Ok(clone)
}

/// tinygrad's current release installed (without dependencies: it has none it needs
/// here) into a folder of its own, and the `test/` (and `extra/hip_gpu_driver/`, which its mock GPU reads) of its tree beside it; made once.
/// Returns (the folder to put on `PYTHONPATH`, the folder that holds `test/`).
pub fn current_release(work: &Path, python: &Path) -> Result<(PathBuf, PathBuf)> {
    let base = work.join(format!("tinygrad-{CURRENT}"));
    let site = base.join("site");
    let tests = base.join("tree");
    // The marker names what is unpacked: `test/` and, for tinygrad's own mock GPU
    // (`cargo xtask golden-capture`), the KFD header it reads from `extra/`.
    let done = base.join(".complete-test-extra");
    if done.exists() {
        return Ok((site, tests));
    }
    let _ = std::fs::remove_dir_all(&base);
    println!("installing tinygrad {CURRENT} from PyPI");
    check(
        Command::new(python)
            .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
            .arg(&site)
            .arg(format!("tinygrad=={CURRENT}")),
        "pip install tinygrad",
    )?;
    let why = format!("for the tests of {CURRENT}, at {CURRENT_TREE}");
    let git = checkout(work, "tinygrad-git-current", &["--filter=blob:none"], &why)?;
    // The tree's runtime must be the release's: the tests are taken from it.
    for f in ["tinygrad/runtime/ops_amd.py", "tinygrad/runtime/support/hcq.py"] {
        let tree = Command::new("git")
            .arg("-C")
            .arg(&git)
            .args(["show", &format!("{CURRENT_TREE}:{f}")])
            .output()?;
        let installed = std::fs::read(site.join(f))?;
        if !tree.status.success() || tree.stdout != installed {
            return Err(format!(
                "{f} at {CURRENT_TREE} in {} is not tinygrad {CURRENT}'s: its tests would not match the release",
                git.display()
            )
            .into());
        }
    }
    std::fs::create_dir_all(&tests)?;
    let archive = Command::new("git")
        .arg("-C")
        .arg(&git)
        .args(["archive", CURRENT_TREE, "test", "extra/hip_gpu_driver"])
        .output()?;
    if !archive.status.success() {
        return Err(format!(
            "git archive {CURRENT_TREE} test extra/hip_gpu_driver failed in {}",
            git.display()
        )
        .into());
    }
    let mut tar = Command::new("tar")
        .arg("x")
        .arg("-C")
        .arg(&tests)
        .stdin(std::process::Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = tar.stdin.take() {
        use std::io::Write;
        stdin.write_all(&archive.stdout)?;
    }
    if !tar.wait()?.success() {
        return Err("unpacking tinygrad's tests failed".into());
    }
    std::fs::write(&done, b"")?;
    Ok((site, tests))
}

/// A folder with `clang` → `clang-19`: tinygrad's CPU device (the tests copy through
/// it) runs `clang`, which Debian names by version.
pub fn clang_dir(work: &Path) -> Result<PathBuf> {
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin)?;
    let link = bin.join("clang");
    if !link.exists() {
        let clang = Command::new("sh").args(["-c", "command -v clang-19"]).output()?;
        let path = String::from_utf8_lossy(&clang.stdout).trim().to_string();
        if path.is_empty() {
            return Err("clang-19 is needed (Debian: apt-get install clang-19)".into());
        }
        std::os::unix::fs::symlink(path, &link)?;
    }
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::PytestCounts;

    #[test]
    fn reads_pytests_summary_and_failures() {
        let out = "..F.\nFAILED test/backend/test_ops.py::TestOps::test_sin - Exception: forward pass\n\
                   ERROR test/x.py::t - boom\n\
                   ===== 1 failed, 47 passed, 3 skipped, 1 error, 46 subtests passed in 68.77s (0:01:08) =====\n";
        let c = PytestCounts::parse(out).unwrap();
        assert_eq!((c.passed, c.failed, c.skipped, c.errors), (47, 1, 3, 1));
        assert_eq!(c.failures.len(), 2);
        assert_eq!(c.line(), "47 passed, 1 failed, 3 skipped, 1 errors");
        let quiet = "28 passed, 5 skipped, 14 subtests passed in 7.57s\n";
        assert_eq!(
            PytestCounts::parse(quiet).unwrap().line(),
            "28 passed, 0 failed, 5 skipped"
        );
        assert!(PytestCounts::parse("no tests ran\n").is_none());
    }
}
