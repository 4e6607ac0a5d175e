//! `miri`: the unit tests of the project's raw-memory code under Miri, which checks
//! each access for undefined behaviour (out of bounds, misaligned, use after free,
//! data races between the threads it runs, invalid values).
//!
//! Covered: the mock's checked GPU memory accesses over heap memory (`amd-mockgpu`
//! `mem`: every access kind, faults, an executor's windows, atomics from two
//! threads, the sanitizer's checked loads and the fault reports), its streaming copies and fills (`mem::dma`; Miri runs
//! the streaming stores as aligned plain stores and its copy threshold is 1 KiB
//! instead of 64, so the tests that size themselves from it finish), the interpreter's
//! scoped thread pool and lane gathers and its slice memory (`amd-isa` `pool`,
//! `rdna3::gather`, `memory`), the mock driver's
//! copies of ioctl arrays (`uaccess`), the driverless
//! transport's volatile register window (`amd-am` `bar`) and the stores of bound-list
//! patches (`amd-kfd` `memory`'s view). What cannot run under Miri: ioctls, file and
//! fixed or shared mappings (the KFD and VFIO paths, the mock's mappings), and the
//! mock's memory model itself, in which the engine threads and the host share GPU
//! memory without synchronisation as a GPU and its host do.
//!
//! Needs nightly with the `miri` component (`rustup +nightly component add miri
//! rust-src`); about four minutes on two cores once Miri's sysroot is built (the
//! first run builds it, about a minute more). Never part of the test command.

use std::process::Command;

use crate::{Result, workspace_root};

/// (package, test-name filters) run under Miri.
const RUNS: &[(&str, &[&str])] = &[
    ("amd-mockgpu", &["mem::tests", "mem::dma::", "driver::uaccess::"]),
    ("amd-isa", &["pool::", "rdna3::gather::", "memory::"]),
    ("amd-am", &["bar::"]),
    ("amd-kfd", &["memory::tests::view_"]),
];

/// Miri's flags: the mock's pool threads live as long as the process (so leaks are
/// not errors), and GPU addresses are integers by nature (so integer-to-pointer casts
/// are allowed without a warning each).
const FLAGS: &str = "-Zmiri-ignore-leaks -Zmiri-permissive-provenance";

pub fn run(args: &[String]) -> Result<()> {
    if let Some(a) = args.first() {
        return Err(format!("miri takes no arguments (got {a:?})").into());
    }
    let has_miri = Command::new("cargo")
        .args(["+nightly", "miri", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_miri {
        return Err("miri needs nightly's miri component: rustup +nightly component add miri rust-src".into());
    }
    for (package, filters) in RUNS {
        println!("miri: {package}: {}", filters.join(" "));
        let status = Command::new("cargo")
            .current_dir(workspace_root())
            .env("MIRIFLAGS", FLAGS)
            .args(["+nightly", "miri", "test", "-p", package, "--lib", "--"])
            .args(filters.iter())
            .status()?;
        if !status.success() {
            return Err(format!("the Miri run of {package} failed ({status}): see its output above").into());
        }
    }
    println!("miri: no undefined behaviour found in the tests above");
    Ok(())
}
