//! Synthetic firmware files of every type tinygrad 0.10.1 loads (the mock's, built
//! from `amdgpu_ucode.h`'s layouts), shared by the firmware and boot tests.

#![allow(dead_code)]

use std::path::PathBuf;

#[allow(unused_imports)] // each test uses some
pub use amd_mockgpu::pci::firmware::{
    ME_START, MEC_START, PFP_START, SOS_PARTS, blob, build_file as file, common, imu_file, rlc_file, rs64_file,
    sdma_file, sdma_v3_file, smu_file, sos_file,
};

/// Every file, by name.
pub fn all_files() -> Vec<(&'static str, Vec<u8>)> {
    amd_mockgpu::pci::firmware::files()
}

/// A fresh directory holding `files`.
pub fn dir_with(name: &str, files: &[(&str, Vec<u8>)]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("amd-am-fw-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for (n, b) in files {
        std::fs::write(d.join(n), b).unwrap();
    }
    d
}
