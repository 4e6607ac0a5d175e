//! `cargo xtask interpose tinygrad [--gpus N]`: tinygrad 0.10.1's own tests and a
//! small tinygrad program on the mock GPU, through `libamd_interpose.so`.
//!
//! Sets up, under `target/interpose/`: tinygrad 0.10.1's source release from PyPI
//! (`pip download --no-binary :all: tinygrad==0.10.1`: the package and its `test/`),
//! completed with `tinygrad/runtime/autogen/am/`, which that release leaves out, from
//! a git checkout of tag v0.10.1 (`TINYGRAD_DIR`, else a shallow clone from GitHub;
//! a file neither has becomes an empty stand-in: only the driverless path imports its
//! contents). Then runs, with `AMD=1`, the interposer preloaded and
//! `crates/amd-interpose/tinygrad` on `PYTHONPATH` (its `sitecustomize` compiles with
//! clang-19 instead of ROCm's comgr; the runtime is tinygrad's, unmodified):
//! `test/test_hcq.py`, `crates/amd-interpose/tinygrad/sample.py`, `speed.py` and
//! `replay.py` (tinygrad's graph replay, timed). With
//! `REMU_LIB` (a built `libremu.so`, the emulator tinygrad's own mock runs kernels on)
//! and a checkout that has tinygrad's `test/mockgpu`, the same three run under
//! tinygrad's own mock (`MOCKGPU=1`) too, for comparison. Needs python3 with pip,
//! clang-19 and network access to PyPI; never part of the test command.
//!
//! `cargo xtask interpose tinygrad --vs-graph [ROUNDS]` instead alternates, ROUNDS
//! times (3 by default), `cargo bench -p amd-hcq --bench graph` with `replay.py`, and
//! prints each of the graph benchmark's replay figures (without the mock's doorbell
//! hook) as a ratio of tinygrad's replay measured in the same round: the reference
//! `cargo xtask bench graph`'s 0.5 µs goal was set against (tinygrad's ~16 µs). Each
//! figure's summary gives the median of its ratios over the rounds; the last line says
//! whether the goal holds (that median at most 0.031 × for the idle and busy figures).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{Result, check, tinygrad_tests, workspace_root};

const VERSION: &str = "0.10.1";
/// `cargo xtask bench graph`'s goal (0.5 µs) as a ratio of tinygrad's replay when it
/// was set (~16 µs).
const GOAL_RATIO: f64 = GOAL_US / 16.0;
/// The graph replay goal in µs.
const GOAL_US: f64 = 0.5;
const USAGE: &str =
    "cargo xtask interpose tinygrad [--release 0.10.1|0.14.0 [--aql] [--full]] [--gpus N] [--vs-graph [ROUNDS]]";

pub fn run(args: &[String]) -> Result<()> {
    let mut gpus = 2u32;
    let mut what = None;
    let mut vs_graph = None;
    let mut aql = false;
    let mut full = false;
    let mut releases = vec![VERSION, tinygrad_tests::CURRENT];
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--release" => {
                let r = it.next().map(String::as_str);
                releases = match r {
                    Some(VERSION) => vec![VERSION],
                    Some(tinygrad_tests::CURRENT) => vec![tinygrad_tests::CURRENT],
                    _ => return Err(format!("--release takes {VERSION} or {}", tinygrad_tests::CURRENT).into()),
                };
            }
            "--vs-graph" => {
                let rounds = match it.peek().map(|v| v.parse::<u32>()) {
                    Some(Ok(n)) => {
                        it.next();
                        n
                    }
                    _ => 3,
                };
                if !(1..=100).contains(&rounds) {
                    return Err("--vs-graph takes 1 to 100 rounds".into());
                }
                vs_graph = Some(rounds);
            }
            "--gpus" => {
                gpus = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|n| (1..=8).contains(n))
                    .ok_or("--gpus takes 1 to 8")?
            }
            // tinygrad 0.14 submits through AQL queues with AMD_AQL=1.
            "--aql" => aql = true,
            // The whole of test_ops.py and more of tinygrad's backend tests.
            "--full" => full = true,
            "tinygrad" => what = Some(a.clone()),
            other => {
                return Err(format!("unknown argument {other:?}; usage: {USAGE}").into());
            }
        }
    }
    if what.is_none() {
        return Err(format!("usage: {USAGE}").into());
    }
    if aql && (releases != [tinygrad_tests::CURRENT] || vs_graph.is_some()) {
        return Err(format!(
            "--aql is for --release {} alone (tinygrad 0.10.1 has no AQL queues)",
            tinygrad_tests::CURRENT
        )
        .into());
    }
    if full && (releases != [tinygrad_tests::CURRENT] || vs_graph.is_some()) {
        return Err(format!("--full is for --release {} alone", tinygrad_tests::CURRENT).into());
    }
    for (tool, why) in [
        ("python3", "runs tinygrad"),
        ("clang-19", "compiles tinygrad's kernels"),
    ] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Err(format!("{tool} is needed ({why}); Debian: apt-get install python3 clang-19").into());
        }
    }
    let root = workspace_root();
    let work = root.join("target/interpose");
    std::fs::create_dir_all(&work)?;
    let lib = build_interposer()?;
    if vs_graph.is_none() && !releases.contains(&VERSION) {
        return run_current(&work, &lib, gpus, aql, full);
    }
    let tree = tinygrad_tree(&work)?;
    // tinygrad caches compiled kernels by their source: a fresh cache per run, so a
    // changed compiler stand-in (sitecustomize.py) takes effect.
    let cache = fresh_cache(&work, VERSION)?;
    let plugin = root.join("crates/amd-interpose/tinygrad");
    let python_path = format!("{}:{}", plugin.display(), tree.display());
    // Ours: the interposer. Theirs: tinygrad's own mock on remu (MOCKGPU=1).
    let remu = std::env::var_os("REMU_LIB").map(PathBuf::from).filter(|p| p.exists());
    let run_py = |script: &Path, args: &[&str], theirs: bool| -> Result<(bool, String, f64)> {
        let t = Instant::now();
        let mut cmd = Command::new("python3");
        cmd.current_dir(&tree)
            .arg(script)
            .args(args)
            .env("AMD", "1")
            .env("CACHEDB", &cache)
            .env("PYTHONPATH", &python_path);
        if theirs {
            let dir = remu.as_deref().and_then(Path::parent).unwrap_or(Path::new("."));
            cmd.env("MOCKGPU", "1").env("LD_LIBRARY_PATH", dir);
        } else {
            cmd.env("AMD_MOCK_GPUS", gpus.to_string()).env("LD_PRELOAD", &lib);
        }
        let out = cmd.output()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok((out.status.success(), text, t.elapsed().as_secs_f64()))
    };
    if let Some(rounds) = vs_graph {
        return vs_graph_rounds(rounds, &|| run_py(&plugin.join("replay.py"), &[], false));
    }
    let scripts: [(&str, PathBuf, &[&str]); 4] = [
        ("test_hcq.py", tree.join("test/test_hcq.py"), &["-v"]),
        ("sample.py", plugin.join("sample.py"), &[]),
        ("speed.py", plugin.join("speed.py"), &[]),
        ("replay.py", plugin.join("replay.py"), &[]),
    ];
    // Every script, under the interposer's mock or (`theirs`) tinygrad's own; a summary
    // line each.
    let run_scripts = |theirs: bool, summary: &mut Vec<String>| -> Result<()> {
        let mock = if theirs {
            "tinygrad's own mock, MOCKGPU=1"
        } else {
            "amd-mockgpu through the interposer"
        };
        for (name, script, args) in &scripts {
            let (ok, text, secs) = run_py(script, args, theirs)?;
            print!("{text}");
            summary.push(format!(
                "interpose: {name} {} in {secs:.1} s ({mock}){}",
                if ok { "passed" } else { "failed" },
                last_line(&text)
            ));
        }
        Ok(())
    };
    let mut summary = Vec::new();
    println!("tinygrad {VERSION} on {gpus} mock GPU(s) through libamd_interpose.so");
    run_scripts(false, &mut summary)?;
    let theirs_ready = tree.join("test/mockgpu/mockgpu.py").exists();
    match (&remu, theirs_ready) {
        (Some(_), true) => {
            println!("the same under tinygrad's own mock (MOCKGPU=1, remu)");
            run_scripts(true, &mut summary)?;
        }
        (None, _) => println!("note: set REMU_LIB to a built libremu.so to compare with tinygrad's own mock"),
        (Some(_), false) => println!("note: no test/mockgpu in the checkout: tinygrad's own mock cannot run"),
    }
    // test_ops.py's subset, against torch on the CPU.
    let python = tinygrad_tests::python_env(&work)?;
    let ops = tree.join("test/test_ops.py");
    for (group, expr) in tinygrad_tests::TEST_OPS_SUBSET {
        let out = Command::new(&python)
            .current_dir(&tree)
            .args(["-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider"])
            .arg(&ops)
            .args(["-k", expr])
            .env("AMD", "1")
            .env("CACHEDB", &cache)
            .env("PYTHONPATH", &python_path)
            .env("AMD_MOCK_GPUS", gpus.to_string())
            .env("LD_PRELOAD", &lib)
            .output()?;
        summary.push(pytest_line(VERSION, &format!("test_ops.py {group}"), &out));
    }
    for l in &summary {
        println!("{l}");
    }
    // test_hcq's bandwidth and launch-time checks hold a GPU's speed unless tinygrad's
    // own mock (MOCKGPU) is in use; the output above names what failed.
    if releases.contains(&tinygrad_tests::CURRENT) {
        run_current(&work, &lib, gpus, false, false)?;
    }
    Ok(())
}

/// tinygrad's kernel cache for `version` (`CACHEDB`), emptied.
fn fresh_cache(work: &Path, version: &str) -> Result<PathBuf> {
    let cache = work.join(format!("cache-{version}.db"));
    match std::fs::remove_file(&cache) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(cache),
    }
}

/// A summary line of one pytest run, its failures after it, and the output itself
/// when it gave no summary.
fn pytest_line(version: &str, what: &str, out: &std::process::Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    match tinygrad_tests::PytestCounts::parse(&text) {
        Some(c) => {
            let mut l = format!("interpose: tinygrad {version} {what}: {}", c.line());
            for f in &c.failures {
                l.push_str(&format!("\n    {f}"));
            }
            l
        }
        None => format!("interpose: tinygrad {version} {what}: no pytest summary:\n{text}"),
    }
}

/// tinygrad's current release, unmodified, on the mock: its `test_hcq.py` and the
/// `test_ops.py` subset, compiling with LLVM (`DEV=AMD:LLVM`, tinygrad's own
/// libLLVM backend) and its compile worker pool on, as it defaults; with `aql`, its
/// compute queues are AQL queues (`AMD_AQL=1`); with `full`, the whole `test_ops.py`
/// but [`tinygrad_tests::FULL_DESELECTED`] and [`tinygrad_tests::FULL_FILES`] (a
/// kernel may run longer than tinygrad's 30 s wait here: `HCQDEV_WAIT_TIMEOUT_MS` is
/// raised to 10 minutes). `AMD_MOCK_PROFILE` picks the GPU, as for any client.
fn run_current(work: &Path, lib: &Path, gpus: u32, aql: bool, full: bool) -> Result<()> {
    let version = tinygrad_tests::CURRENT;
    let python = tinygrad_tests::python_env(work)?;
    let (site, tree) = tinygrad_tests::current_release(work, &python)?;
    let bin = tinygrad_tests::clang_dir(work)?;
    let cache = fresh_cache(work, version)?;
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let queues = if aql { ", AQL queues (AMD_AQL=1)" } else { "" };
    println!("tinygrad {version} on {gpus} mock GPU(s) through libamd_interpose.so (DEV=AMD:LLVM{queues})");
    let pytest = |file: &str, expr: Option<&str>| -> Result<std::process::Output> {
        let mut cmd = Command::new(&python);
        cmd.current_dir(&tree)
            .args(["-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", file])
            .env("DEV", "AMD:LLVM")
            .env("CACHEDB", &cache)
            .env("PYTHONPATH", &site)
            .env("PATH", &path)
            .env("AMD_MOCK_GPUS", gpus.to_string())
            .env("AMD_AQL", if aql { "1" } else { "0" })
            .env("LD_PRELOAD", lib);
        if full {
            cmd.env("HCQDEV_WAIT_TIMEOUT_MS", "600000");
        }
        if let Some(e) = expr {
            cmd.args(["-k", e]);
        }
        Ok(cmd.output()?)
    };
    if full {
        let mut summary = Vec::new();
        let except: Vec<String> = tinygrad_tests::FULL_DESELECTED
            .iter()
            .map(|(t, why)| {
                println!("test_ops.py: leaving out {t}: {why}");
                format!("not {t}")
            })
            .collect();
        let out = pytest("test/backend/test_ops.py", Some(&except.join(" and ")))?;
        summary.push(pytest_line(version, "test_ops.py (all but the above)", &out));
        println!("{}", summary[0]);
        for file in tinygrad_tests::FULL_FILES {
            let name = file.rsplit('/').next().unwrap_or(file);
            summary.push(pytest_line(version, name, &pytest(file, None)?));
            println!("{}", summary.last().map_or("", String::as_str));
        }
        println!("summary:");
        for l in &summary {
            println!("{l}");
        }
        return Ok(());
    }
    let mut summary = vec![pytest_line(
        version,
        "test_hcq.py",
        &pytest("test/device/test_hcq.py", None)?,
    )];
    for (group, expr) in tinygrad_tests::TEST_OPS_SUBSET {
        let out = pytest("test/backend/test_ops.py", Some(expr))?;
        summary.push(pytest_line(version, &format!("test_ops.py {group}"), &out));
    }
    for l in &summary {
        println!("{l}");
    }
    Ok(())
}

/// Builds `libamd_interpose.so` (release); its path.
pub fn build_interposer() -> Result<PathBuf> {
    let root = workspace_root();
    println!("building libamd_interpose.so (release)");
    check(
        Command::new(env!("CARGO"))
            .current_dir(&root)
            .args(["build", "--release", "-p", "amd-interpose"]),
        "cargo build -p amd-interpose",
    )?;
    Ok(root.join("target/release/libamd_interpose.so"))
}

/// The `speed:` or `sample:` line of a script's output, as a suffix.
fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| {
            l.starts_with("speed:")
                || l.starts_with("sample:")
                || l.starts_with("replay:")
                || l.starts_with("Ran ")
                || l.starts_with("OK")
                || l.starts_with("FAILED")
        })
        .map(|l| format!(": {l}"))
        .unwrap_or_default()
}

/// The `--vs-graph` rounds: the graph benchmark, then tinygrad's replay (`replay`, a
/// run of `replay.py`), `rounds` times; each replay figure of ours as a ratio of
/// tinygrad's from the same round, then the ranges over the rounds.
fn vs_graph_rounds(rounds: u32, replay: &dyn Fn() -> Result<(bool, String, f64)>) -> Result<()> {
    let root = workspace_root();
    // (figure, ours in µs, ratio) of every round.
    let mut all: Vec<(String, f64, f64)> = Vec::new();
    let mut theirs_all = Vec::new();
    println!("building the graph benchmark");
    check(
        Command::new(env!("CARGO"))
            .current_dir(&root)
            .args(["bench", "--no-run", "--quiet", "-p", "amd-hcq", "--bench", "graph"]),
        "cargo bench --no-run --bench graph",
    )?;
    for round in 1..=rounds {
        let out = Command::new(env!("CARGO"))
            .current_dir(&root)
            .args(["bench", "--quiet", "-p", "amd-hcq", "--bench", "graph"])
            .output()?;
        let ours = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(format!("the graph benchmark failed: {}\n{ours}", out.status).into());
        }
        let (ok, text, _) = replay()?;
        let theirs = text
            .lines()
            .find_map(|l| l.strip_prefix("replay: "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|_| ok)
            .ok_or_else(|| format!("replay.py gave no figure:\n{text}"))?;
        theirs_all.push(theirs);
        println!("round {round}: tinygrad {VERSION} replays its graph in {theirs:.2} us (median, engines idle)");
        for (name, us) in graph_figures(&ours) {
            let ratio = us / theirs;
            println!("  {name}: {us:.2} us without the mock's doorbell hook = {ratio:.3} × tinygrad's replay");
            all.push((name, us, ratio));
        }
    }
    let range = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() - 1])
    };
    let (lo, hi) = range(&mut theirs_all);
    println!(
        "vs-graph: tinygrad {VERSION}'s replay {lo:.2}–{hi:.2} us over {rounds} round(s); the 0.5 us goal against its ~16 us is {GOAL_RATIO:.3} ×"
    );
    let mut goal_misses = 0;
    let mut names: Vec<&String> = all.iter().map(|a| &a.0).collect();
    names.sort();
    names.dedup();
    for name in names {
        let mut us: Vec<f64> = all.iter().filter(|a| &a.0 == name).map(|a| a.1).collect();
        let mut r: Vec<f64> = all.iter().filter(|a| &a.0 == name).map(|a| a.2).collect();
        let under = r.iter().filter(|&&x| x <= GOAL_RATIO).count();
        let under_us = us.iter().filter(|&&x| x <= GOAL_US).count();
        let ((ulo, uhi), (rlo, rhi)) = (range(&mut us), range(&mut r));
        let mid = median_of_sorted(&r);
        println!(
            "vs-graph: {name}: {ulo:.2}–{uhi:.2} us, {rlo:.3}–{rhi:.3} × tinygrad's replay, median {mid:.3} × (at most {GOAL_RATIO:.3} × in {under} of {} rounds, at most {GOAL_US} us in {under_us})",
            r.len()
        );
        if !name.ends_with("host_slept") {
            goal_misses += usize::from(mid > GOAL_RATIO);
        }
    }
    println!(
        "vs-graph: the goal (idle and busy, median over the rounds at most {GOAL_RATIO:.3} × tinygrad's replay) {}",
        if goal_misses == 0 { "holds" } else { "does not hold" }
    );
    Ok(())
}

/// The median of sorted, non-empty `v` (the mean of the middle two for an even count).
fn median_of_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Each replay figure of the graph benchmark's output: its name and the median
/// without the mock's doorbell hook, in µs.
fn graph_figures(out: &str) -> Vec<(String, f64)> {
    out.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("bench graph_replay_")?;
            let (name, rest) = rest.split_once(": ")?;
            let (_, after) = rest.split_once(" us median, ")?;
            let us = after.split_whitespace().next()?.parse().ok()?;
            Some((name.to_string(), us))
        })
        .collect()
}

/// tinygrad 0.10.1's release tree, completed; made once.
fn tinygrad_tree(work: &Path) -> Result<PathBuf> {
    let tree = work.join(format!("tinygrad-{VERSION}"));
    let done = tree.join(".complete");
    if done.exists() {
        return Ok(tree);
    }
    let dl = work.join("download");
    std::fs::create_dir_all(&dl)?;
    println!("downloading tinygrad {VERSION}'s source release from PyPI");
    check(
        Command::new("python3")
            .args(["-m", "pip", "download", "--no-deps", "--no-binary", ":all:"])
            .arg(format!("tinygrad=={VERSION}"))
            .arg("-d")
            .arg(&dl),
        "pip download",
    )?;
    let sdist = dl.join(format!("tinygrad-{VERSION}.tar.gz"));
    let _ = std::fs::remove_dir_all(&tree);
    check(
        Command::new("tar").arg("xzf").arg(&sdist).arg("-C").arg(work),
        "unpacking the source release",
    )?;
    complete_autogen_am(work, &tree)?;
    std::fs::write(&done, b"")?;
    Ok(tree)
}

/// Adds `tinygrad/runtime/autogen/am/`, which the 0.10.1 release leaves out, from a
/// checkout of tag v0.10.1.
fn complete_autogen_am(work: &Path, tree: &Path) -> Result<()> {
    const DIR: &str = "tinygrad/runtime/autogen/am";
    let tag = format!("v{VERSION}");
    // Without a checkout (offline), every read from it below fails and the modules are
    // stand-ins.
    let why = format!("{tag}, for {DIR}, missing from the release");
    let git = tinygrad_tests::checkout(work, "tinygrad-git", &["--depth", "1", "--branch", &tag], &why)
        .unwrap_or_else(|_| work.join("tinygrad-git"));
    let listed = Command::new("git")
        .arg("-C")
        .arg(&git)
        .args(["ls-tree", "--name-only", &tag, &format!("{DIR}/")])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    // What tinygrad 0.10.1 imports from the package (ops_amd.py, support/am/amdev.py).
    let needed = [
        "am",
        "mp_11_0",
        "mp_13_0_0",
        "nbio_4_3_0",
        "mmhub_3_0_0",
        "gc_11_0_0",
        "osssys_6_0_0",
        "smu_v13_0_0",
    ];
    let out = tree.join(DIR);
    std::fs::create_dir_all(&out)?;
    let mut stand_ins = Vec::new();
    for m in needed {
        let path = format!("{DIR}/{m}.py");
        let text = listed
            .contains(&path)
            .then(|| {
                Command::new("git")
                    .arg("-C")
                    .arg(&git)
                    .args(["show", &format!("{tag}:{path}")])
                    .output()
                    .ok()
                    .filter(|o| o.status.success())
                    .map(|o| o.stdout)
            })
            .flatten();
        match text {
            Some(t) => std::fs::write(out.join(format!("{m}.py")), t)?,
            None => {
                std::fs::write(
                    out.join(format!("{m}.py")),
                    "# Stand-in: not readable from the tinygrad checkout here. Only the driverless\n\
                     # (AM) path uses this module's contents; the KFD path only imports it.\n",
                )?;
                stand_ins.push(m);
            }
        }
    }
    // For tinygrad's own mock (the comparison): its test/mockgpu and the KFD header it
    // reads, where the checkout has them.
    for dir in ["test/mockgpu", "extra/hip_gpu_driver"] {
        let archive = Command::new("git")
            .arg("-C")
            .arg(&git)
            .args(["archive", &tag, dir])
            .output()
            .ok()
            .filter(|o| o.status.success() && !o.stdout.is_empty());
        if let Some(a) = archive {
            let mut tar = Command::new("tar")
                .arg("x")
                .arg("-C")
                .arg(tree)
                .stdin(std::process::Stdio::piped())
                .spawn()?;
            if let Some(mut stdin) = tar.stdin.take() {
                use std::io::Write;
                stdin.write_all(&a.stdout)?;
            }
            tar.wait()?;
        }
    }
    // The release's test/ is not a package; tinygrad's mock imports `test.mockgpu`.
    let init = tree.join("test/__init__.py");
    if !init.exists() {
        std::fs::write(init, b"")?;
    }
    if !stand_ins.is_empty() {
        println!(
            "note: {} from {} could not be read; empty stand-ins written (the KFD path only imports them)",
            stand_ins.join(", "),
            git.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{graph_figures, median_of_sorted};

    /// The graph benchmark's replay lines give their name and the figure without the
    /// hook; its other lines give nothing.
    #[test]
    fn reads_the_graph_benchmarks_replay_figures() {
        let out = "bench graph_replay_wide_idle: 4.26 us median, 0.85 us without the mock's doorbell hook, 59 sites (0.048 × launching them one by one, 17.65 us; 0.56 × the reference loop; goal 0.5 us)\n\
                   bench reference_loop_wide: 1.53 us median for 400 dependent multiply-adds\n\
                   bench graph_replay_narrow_busy: 0.55 us median, 0.47 us without the mock's doorbell hook, 12 sites (0.027 × launching them one by one, 17.65 us; 0.23 × the reference loop; goal 0.5 us)\n\
                   bench graph_replays_per_second: 3983 /s pipelined, no host wait\n";
        assert_eq!(
            graph_figures(out),
            [("wide_idle".to_string(), 0.85), ("narrow_busy".to_string(), 0.47)]
        );
    }

    #[test]
    fn the_median_of_odd_and_even_counts() {
        assert_eq!(median_of_sorted(&[0.01, 0.02, 0.5]), 0.02);
        assert_eq!(median_of_sorted(&[0.01, 0.02, 0.04, 0.5]), 0.03);
        assert_eq!(median_of_sorted(&[0.7]), 0.7);
    }
}
