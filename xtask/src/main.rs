//! Workspace tasks, run as `cargo xtask <task>`.
//!
//! - `gen-regs [--linux DIR] [--check]`: regenerate the SH register tables of
//!   `amd-packets` from the Linux amdgpu register headers.
//! - `gen-am-regs [--linux DIR] [--check]`: regenerate the mock PCI GPU's register,
//!   field and PSP/SMU constant tables from the same headers.
//! - `gen-mnemonics [--check]`: regenerate the interpreter's sample table (mnemonics
//!   and operand shapes) from llvm-mc-19.
//! - `gen-opcodes [--gen rdna3|rdna4|cdna3] ENUM_PY [--check]`: regenerate a generation's opcode enums
//!   and instruction fields from tinygrad's tables of that generation (`enum.py`, with
//!   `operands.py` and `ins.py` beside it; generated from AMD's ISA XML).
//! - `gen-lowering RDNA3_DIR RDNA4_DIR [--check]`: regenerate the table of RDNA4 opcodes the
//!   RDNA3 interpreter runs as they are (same name, same pseudocode); with `--cdna3
//!   RDNA3_DIR CDNA_DIR`, the same for CDNA3's opcodes.
//! - `kernels [--check]`: build `tests/kernels/*.cl` into `.hsaco` beside them with
//!   clang-19 (or check that the committed ones are current); then run `listings`.
//! - `listings [--check]`: write llvm-objdump-19's text of every committed kernel into
//!   `tests/kernels/llvm-objdump/` (the disassembler's reference).
//! - `rocm-env [--dir DIR]`: a Debian trixie root with ROCm's rocminfo and HIP
//!   (debootstrap; needs root and the network) to run ROCm clients against the mock.
//! - `rocm-run [--dir DIR]`: in that root, rocminfo and the HIP programs of
//!   `tests/hip/` (built with its hipcc for gfx1100) run unmodified on the mock
//!   through `libamd_interpose.so`, their outputs checked (needs root).
//! - `golden-capture [--check]`: capture tinygrad 0.14.0's command streams for gfx1100
//!   and gfx12 on its own mock GPU into `golden/tinygrad-0.14.0-streams.json`.
//! - `isa-coverage [rdna3|rdna4|cdna3] [--check]`: run every RDNA3 (or RDNA4) opcode through the interpreter
//!   and write `crates/amd-isa/coverage/rdna3.md` (`rdna4.md`): implemented / refused / missing
//!   per encoding.
//! - `matrix-layouts [--check]`: RDNA4's WMMA and SWMMAC register layouts from AMD's
//!   matrix instruction calculator (`AMD_MATRIX_CALCULATOR` names its
//!   `matrix_calculator.py`) into `crates/amd-isa/src/rdna4/generated/matrix_layouts.txt`,
//!   and CDNA3's MFMA shapes and layouts into `crates/amd-isa/src/cdna3/generated/mfma.rs`.
//! - `oracle [--ops PATTERN] [--rounds N] [--seed S]`: compare the interpreter with
//!   tinygrad's RDNA3 emulator instruction by instruction (needs `TINYGRAD_DIR`,
//!   python3 and clang-19; offline, never in the test command).
//! - `interpose tinygrad [--release 0.10.1|0.14.0 [--aql]] [--gpus N] [--vs-graph [ROUNDS]]`:
//!   run tinygrad 0.10.1's and 0.14.0's `test_hcq.py` and a named subset of their
//!   `test_ops.py` (against torch on the CPU), and small tinygrad programs, on the mock
//!   GPU through `libamd_interpose.so`, or (`--vs-graph`) alternate the graph benchmark
//!   with tinygrad 0.10.1's own graph replay, timed; `--aql` runs tinygrad 0.14's
//!   compute queues as AQL queues (`AMD_AQL=1`) (downloads tinygrad, numpy, torch
//!   and pytest from PyPI; needs python3 and clang-19; never in the test command).
//! - `fuzz-seeds`: write seed corpora for the cargo-fuzz targets into `fuzz/corpus/`.
//! - `bench [NAME]`: run the benchmarks (`encode`, `engines`, `runtime`, `interp`, `graph`, `transports`), each printing
//!   `bench <name>: <value> <unit> (<ratio> × <reference>)` lines.
//! - `miri`: the unit tests of the raw-memory code (the mock's checked GPU memory,
//!   streaming copies, thread pool, lane gathers and ioctl array copies, the register
//!   window, bound-list stores) under Miri (needs nightly's `miri` component; never in
//!   the test command).
//! - `bench-count`: a graph replay's instructions and the cache lines it touches, counted
//!   under callgrind against launching the same kernels one by one (needs valgrind;
//!   the figure a loaded machine does not move).
//! - `modgraph [--check]`: each library crate's module graph, import circles and layer
//!   order, written into `docs/architecture.md` (or checked against it and the rules).

mod bench_count;
mod fuzz_seeds;
mod gen_am_regs;
mod gen_fields;
mod gen_lowering;
mod gen_mnemonics;
mod gen_opcodes;
mod gen_operands;
mod gen_regs;
mod golden_capture;
mod interpose;
mod isa_coverage;
mod kernels;
mod listings;
mod matrix_layouts;
mod miri;
mod modgraph;
mod oracle;
mod rocm_env;
mod rocm_run;
mod tinygrad_tests;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("gen-regs") => gen_regs::run(&args[1..]),
        Some("gen-am-regs") => gen_am_regs::run(&args[1..]),
        Some("gen-mnemonics") => gen_mnemonics::run(&args[1..]),
        Some("gen-opcodes") => gen_opcodes::run(&args[1..]),
        Some("gen-lowering") => gen_lowering::run(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("bench-count") => bench_count::run(&args[1..]),
        Some("kernels") => kernels::run(&args[1..]),
        Some("isa-coverage") => isa_coverage::run(&args[1..]),
        Some("listings") => listings::run(&args[1..]),
        Some("oracle") => oracle::run(&args[1..]),
        Some("matrix-layouts") => matrix_layouts::run(&args[1..]),
        Some("miri") => miri::run(&args[1..]),
        Some("modgraph") => modgraph::run(&args[1..]),
        Some("fuzz-seeds") => fuzz_seeds::run(&args[1..]),
        Some("interpose") => interpose::run(&args[1..]),
        Some("golden-capture") => golden_capture::run(&args[1..]),
        Some("rocm-env") => rocm_env::run(&args[1..]),
        Some("rocm-run") => rocm_run::run(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask gen-regs [--linux DIR] [--check] | gen-am-regs [--linux DIR] [--check] | gen-mnemonics [--check] | gen-opcodes [--gen rdna3|rdna4|cdna3] ENUM_PY [--check] | gen-lowering [--cdna3] RDNA3_DIR RDNA4_DIR|CDNA_DIR [--check] | kernels [--check] | isa-coverage [rdna3|rdna4|cdna3] [--check] | listings [--check] | oracle [--ops PATTERN] [--rounds N] [--seed S] | matrix-layouts [--check] | interpose tinygrad [--release 0.10.1|0.14.0 [--aql]] [--gpus N] [--vs-graph [ROUNDS]] | golden-capture [--check] | rocm-env [--dir DIR] | rocm-run [--dir DIR] | fuzz-seeds | bench [NAME] | bench-count | miri | modgraph [--check]"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `cmd`; an error naming `what` if it cannot start or fails.
pub fn check(cmd: &mut std::process::Command, what: &str) -> Result<()> {
    let s = cmd.status().map_err(|e| format!("{what}: {e}"))?;
    if s.success() {
        Ok(())
    } else {
        Err(format!("{what} failed: {s}").into())
    }
}

/// The arguments of a task that takes only `[--check]`: whether to check.
pub fn check_flag(args: &[String], task: &str) -> Result<bool> {
    match args {
        [] => Ok(false),
        [a] if a == "--check" => Ok(true),
        _ => Err(format!("usage: cargo xtask {task} [--check]").into()),
    }
}

/// Writes `text` to `output` (a path from the workspace root), or with `check` fails
/// where the committed file differs; `regen` is the command that rewrites it.
pub fn write_or_check(output: &str, text: &str, check: bool, regen: &str) -> Result<()> {
    let path = workspace_root().join(output);
    if check {
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
            return Err(format!("{output} is stale: run `{regen}`").into());
        }
        println!("{output} is current");
    } else {
        std::fs::write(&path, text)?;
        println!("wrote {output}");
    }
    Ok(())
}

/// For a test that the committed outputs of `run` are current: runs `run --check`
/// where the tool it needs is `present`, else says what was `missing`.
#[cfg(test)]
pub fn check_current_where(present: bool, missing: &str, run: fn(&[String]) -> Result<()>) {
    if !present {
        eprintln!("skipped: {missing}");
        return;
    }
    if let Err(e) = run(&["--check".to_string()]) {
        panic!("{e}");
    }
}

/// Each item's line for a generated file, each ended by a newline.
pub fn lines<T>(items: &[T], line: impl Fn(&T) -> String) -> String {
    items.iter().map(|i| line(i) + "\n").collect()
}

/// The workspace root (the parent of this crate).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// Every benchmark: (name, package, bench target).
const BENCHES: &[(&str, &str, &str)] = &[
    ("encode", "amd-packets", "encode"),
    ("engines", "amd-mockgpu", "engines"),
    ("runtime", "amd-hcq", "runtime"),
    ("interp", "amd-hcq", "interp"),
    ("graph", "amd-hcq", "graph"),
    ("transports", "amd-hcq", "transports"),
];

fn bench(args: &[String]) -> Result<()> {
    let wanted = args.first().map(String::as_str);
    let mut ran = 0;
    for (name, package, target) in BENCHES {
        if wanted.is_some_and(|w| w != *name) {
            continue;
        }
        ran += 1;
        let status = Command::new(env!("CARGO"))
            .current_dir(workspace_root())
            .args(["bench", "--quiet", "-p", package, "--bench", target])
            .status()?;
        if !status.success() {
            return Err(format!("benchmark {name} failed: {status}").into());
        }
    }
    if ran == 0 {
        let names: Vec<_> = BENCHES.iter().map(|b| b.0).collect();
        return Err(format!(
            "no benchmark named {:?}; known: {}",
            wanted.unwrap_or(""),
            names.join(", ")
        )
        .into());
    }
    Ok(())
}
