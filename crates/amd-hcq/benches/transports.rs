//! The driverless transport on the mock's PCI GPU against the KFD transport on the
//! mock's KFD GPU, measured in the same run: opening (the PCI GPU's whole boot:
//! taking it from its driver, discovery, PSP firmware loads, SMU, page tables, rings),
//! the CPU cost of a launch, and copy bandwidth.
//!
//! `cargo xtask bench transports` (`HCQ_BENCH_ONLY=copies_pci` or `copies_kfd`: one
//! transport's copies alone). Lines: `bench <name>: <value> <unit> (<ratio> × <reference>)`.

use std::sync::Arc;
use std::time::Instant;

use amd_hcq::{Device, Iface, Platform};
use amd_mockgpu::{MockConfig, MockSys};

mod common;

use common::{COPY_BYTES, COPY_ROUNDS, Copies, copies, launch_cost, median};

/// A fresh platform of each transport and its first device opened, in seconds.
fn open(pci: bool) -> (f64, Platform, Device) {
    let t = Instant::now();
    let p = if pci {
        let boot = amd_am::device::BootOptions {
            firmware: amd_am::firmware::FirmwareSource::dir(amd_mockgpu::pci::firmware::DIR),
            ..amd_am::device::BootOptions::default()
        };
        Platform::pci_with_sys(Arc::new(MockSys::new(MockConfig::pci(1))), boot, Iface::MockPci).expect("PCI mock")
    } else {
        Platform::with_sys(Arc::new(MockSys::new(MockConfig::gfx1100s(1))), Iface::Mock).expect("KFD mock")
    };
    let dev = p.device(0).expect("device 0");
    (t.elapsed().as_secs_f64(), p, dev)
}

fn main() {
    common::host_state("before");
    // `HCQ_BENCH_ONLY=copies_pci` (or `copies_kfd`): that transport's copies alone,
    // twenty rounds (for a profiler).
    if let Ok(only @ ("copies_pci" | "copies_kfd")) = std::env::var("HCQ_BENCH_ONLY").as_deref() {
        let (_, _p, dev) = open(only == "copies_pci");
        let (i, o) = copies(&dev, 20, |_, _| ());
        let gbs = |s: f64| COPY_BYTES as f64 / s / 1e9;
        println!("bench {only}: in {:.2} GB/s, out {:.2} GB/s", gbs(i), gbs(o));
        return;
    }
    let mut opens = [Vec::new(), Vec::new()];
    for _ in 0..5 {
        for (i, pci) in [false, true].into_iter().enumerate() {
            opens[i].push(open(pci).0);
        }
    }
    let (kfd_open, pci_open) = (median(&mut opens[0]), median(&mut opens[1]));
    println!(
        "bench open_pci_boot: {:.1} ms median ({:.1} × opening a KFD GPU, {:.2} ms)",
        pci_open * 1e3,
        pci_open / kfd_open,
        kfd_open * 1e3
    );
    let (_, _kp, kfd) = open(false);
    let (_, _pp, pci) = open(true);
    let (kl, pl) = (launch_cost(&kfd, 5_000), launch_cost(&pci, 5_000));
    println!(
        "bench launch_cpu_cost_pci: {:.2} us median ({:.2} × KFD, {:.2} us)",
        pl * 1e6,
        pl / kl,
        kl * 1e6
    );
    // The two transports' rounds alternate (the fastest of each counts), so that the
    // machine's swings reach both.
    let (mut kc, mut pc) = (Copies::new(&kfd), Copies::new(&pci));
    for _ in 0..COPY_ROUNDS {
        kc.round(|_, _| ());
        pc.round(|_, _| ());
    }
    let ((ki, ko), (pi, po)) = (kc.best(), pc.best());
    let gbs = |s: f64| COPY_BYTES as f64 / s / 1e9;
    println!(
        "bench copy_in_64mib_pci: {:.2} GB/s ({:.2} × KFD, {:.2} GB/s; goal 0.9)",
        gbs(pi),
        ki / pi,
        gbs(ki)
    );
    println!(
        "bench copy_out_64mib_pci: {:.2} GB/s ({:.2} × KFD, {:.2} GB/s; goal 0.9)",
        gbs(po),
        ko / po,
        gbs(ko)
    );
    common::host_state("after");
}
