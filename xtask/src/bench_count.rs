//! `bench-count`: what a graph replay costs the CPU in instructions and in cache lines,
//! counted by callgrind, so that the figure does not depend on how loaded the machine
//! is (the wall-clock `bench graph` does).
//!
//! The graph benchmark runs twice per graph under callgrind, with `HCQ_BENCH_RUNS` at
//! 100 and 300, counting only inside `BoundGraph::replay` (the mock's doorbell hook
//! included); the difference over the 800 replays between the two runs (each graph is
//! replayed four times `HCQ_BENCH_RUNS`) is the cost of one replay, start-up and
//! first runs cancelled out. The reference is the same 11 launches built and submitted
//! one by one (`one_by_one`, 200 sets between the two runs), counted the same way. The
//! cache simulation is small enough (16 KiB first level, 64 KiB last) that the engine
//! thread's work between replays evicts a replay's lines: its misses count the lines a
//! replay touches. Needs valgrind; never in the test command.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{Result, workspace_root};

/// The counts read from a callgrind profile.
const EVENTS: [&str; 4] = ["Ir", "I1mr", "D1mr", "D1mw"];

pub fn run(args: &[String]) -> Result<()> {
    if let Some(a) = args.first() {
        return Err(format!("bench-count takes no arguments (got {a:?})").into());
    }
    if Command::new("valgrind").arg("--version").output().is_err() {
        return Err("bench-count needs valgrind (apt-get install valgrind)".into());
    }
    let exe = build()?;
    let dir = workspace_root().join("target").join("callgrind");
    std::fs::create_dir_all(&dir)?;
    let single = per_op(&exe, &dir, "narrow", "*graph::one_by_one*", 200.0)?;
    for graph in ["narrow", "wide"] {
        let r = per_op(&exe, &dir, graph, "*BoundGraph*replay*", 800.0)?;
        println!(
            "bench graph_replay_{graph}_instructions: {:.0} per replay, lines missed: {:.0} of code, {:.0} of data read, {:.0} written (mock hook included; {:.3} × launching them one by one, {:.0})",
            r[0],
            r[1],
            r[2],
            r[3],
            r[0] / single[0],
            single[0]
        );
    }
    Ok(())
}

/// Builds the graph benchmark; the path of its executable.
fn build() -> Result<PathBuf> {
    let out = Command::new(env!("CARGO"))
        .current_dir(workspace_root())
        .args([
            "bench",
            "--no-run",
            "--quiet",
            "-p",
            "amd-hcq",
            "--bench",
            "graph",
            "--features",
            "mock",
            "--message-format=json",
        ])
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err(format!("building the graph benchmark failed: {}", out.status).into());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter(|l| l.contains("\"reason\":\"compiler-artifact\"") && l.contains("\"name\":\"graph\""))
        .find_map(|l| json_string(l, "executable"))
        .map(PathBuf::from)
        .ok_or_else(|| "cargo did not name the graph benchmark's executable".into())
}

/// The string value of `"key":"…"` in a line of cargo's JSON output (paths only: no
/// escapes are expected, and one is refused).
fn json_string(line: &str, key: &str) -> Option<String> {
    let start = line.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let rest = &line[start..];
    let end = rest.find('"')?;
    let s = &rest[..end];
    (!s.contains('\\')).then(|| s.to_string())
}

/// `EVENTS` per operation: the benchmark of `graph` counted inside `toggle` with 100
/// and 300 runs, the difference divided by `ops`.
fn per_op(exe: &Path, dir: &Path, graph: &str, toggle: &str, ops: f64) -> Result<[f64; 4]> {
    let mut totals = Vec::new();
    for runs in [100, 300] {
        let tag = if toggle.contains("replay") {
            "replay"
        } else {
            "one_by_one"
        };
        let out = dir.join(format!("{graph}.{tag}.{runs}.out"));
        let status = Command::new("valgrind")
            .args([
                "--tool=callgrind",
                "--cache-sim=yes",
                "--I1=16384,8,64",
                "--D1=16384,8,64",
                "--LL=65536,8,64",
            ])
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(format!("--toggle-collect={toggle}"))
            .arg(exe)
            .env("HCQ_BENCH_ONLY", graph)
            .env("HCQ_BENCH_RUNS", runs.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        if !status.success() {
            return Err(format!("callgrind of the {graph} graph ({runs} runs) failed: {status}").into());
        }
        totals.push(totals_of(&out)?);
    }
    let mut per = [0.0; 4];
    for (p, e) in per.iter_mut().zip(EVENTS) {
        let (a, b) = (totals[0].get(e), totals[1].get(e));
        let (Some(&a), Some(&b)) = (a, b) else {
            return Err(format!("callgrind's profile has no {e} count").into());
        };
        *p = (b as f64 - a as f64) / ops;
    }
    Ok(per)
}

/// The event totals of a callgrind profile (its `events:` and `totals:` lines).
fn totals_of(path: &Path) -> Result<HashMap<String, u64>> {
    let text = std::fs::read_to_string(path)?;
    let names = text
        .lines()
        .find_map(|l| l.strip_prefix("events:"))
        .ok_or_else(|| format!("{}: no events line", path.display()))?;
    let values = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
        .ok_or_else(|| format!("{}: no totals line", path.display()))?;
    let mut out = HashMap::new();
    for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
        let v = v
            .parse()
            .map_err(|_| format!("{}: count {v:?} of {n} is not a number", path.display()))?;
        out.insert(n.to_string(), v);
    }
    Ok(out)
}
