//! The main job: adds two vectors on the first GPU, or on the mock GPU when there is
//! none (saying so), and checks every element.
//!
//! ```text
//! cargo run --release --example vadd [-- N]
//! ```
//!
//! `AMD_IFACE=KFD`, `PCI` (driverless), `MOCK` or `MOCK_PCI` forces a transport;
//! `AMD_MOCK_PROFILE=gfx1201` makes the mock an RDNA4 GPU, `gfx942` a CDNA3 one (an
//! MI300X partition; `gfx1100`, the default, an RDNA3 one).

use std::process::ExitCode;
use std::time::Instant;

use amd_hcq::{BufferKind, Iface, LaunchDims, Platform, Program};

/// The vadd kernel built for each target the project runs kernels of.
const VADD: [(&str, &[u8]); 3] = [
    ("gfx1100", include_bytes!("../kernels/vadd.hsaco")),
    ("gfx1201", include_bytes!("../kernels/gfx1201/vadd.hsaco")),
    ("gfx942", include_bytes!("../kernels/gfx942/vadd.hsaco")),
];

fn run() -> Result<(), String> {
    let n: usize = match std::env::args().nth(1) {
        Some(a) => a.parse().map_err(|_| format!("{a:?} is not an element count"))?,
        None => 1 << 20,
    };
    if n == 0 || n > u32::MAX as usize {
        return Err(format!("element count {n} out of range"));
    }
    let platform = Platform::open().map_err(|e| e.to_string())?;
    match platform.iface() {
        Iface::Kfd => println!("transport: KFD (/dev/kfd)"),
        Iface::Mock => {
            println!("transport: mock GPU (no AMD GPU found, or AMD_IFACE=MOCK): kernels run on amd-isa's interpreter")
        }
        Iface::Pci => println!("transport: PCI (driverless: the GPU's BARs, booted by amd-am)"),
        Iface::MockPci => println!(
            "transport: PCI on the mock's PCI GPU (driverless, booted with synthetic firmware; AMD_IFACE=PCI found no \
             supported GPU, or AMD_IFACE=MOCK_PCI): kernels run on amd-isa's interpreter"
        ),
    }
    let dev = platform.device(0).map_err(|e| e.to_string())?;
    let props = dev.props().clone();
    println!(
        "device 0: {} ({} CUs, {} KiB LDS)",
        props.arch,
        props.cu_count,
        props.lds_size / 1024
    );
    let (_, code) = VADD.iter().find(|(target, _)| *target == props.arch).ok_or_else(|| {
        format!(
            "the bundled vadd code objects are built for gfx1100, gfx1201 and gfx942, not {}",
            props.arch
        )
    })?;
    let prg = Program::load(&dev, code, "vadd").map_err(|e| e.to_string())?;

    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - (i % 777) as f32).collect();
    let size = n * 4;
    let alloc = || dev.alloc(size, BufferKind::Device).map_err(|e| e.to_string());
    let (ba, bb, bc) = (alloc()?, alloc()?, alloc()?);

    let t = Instant::now();
    dev.copy_in_slice(&ba, 0, &a).map_err(|e| e.to_string())?;
    dev.copy_in_slice(&bb, 0, &b).map_err(|e| e.to_string())?;
    dev.synchronize().map_err(|e| e.to_string())?;
    let copy_in = t.elapsed();

    let dims = LaunchDims {
        global: [n.div_ceil(256) as u32, 1, 1],
        local: [256, 1, 1],
    };
    let t = Instant::now();
    let gpu = prg
        .launch_timed(&[&ba, &bb, &bc], &[n as u32], dims)
        .map_err(|e| e.to_string())?;
    let launch = t.elapsed();

    let t = Instant::now();
    let out: Vec<f32> = dev.copy_out_vec(&bc, 0, n).map_err(|e| e.to_string())?;
    let copy_out = t.elapsed();

    let mut bad = 0usize;
    for i in 0..n {
        let got = out[i];
        if got != a[i] + b[i] {
            if bad < 5 {
                eprintln!("element {i}: got {got}, want {}", a[i] + b[i]);
            }
            bad += 1;
        }
    }
    let mib = size as f64 / (1 << 20) as f64;
    println!("vadd of {n} floats ({mib:.1} MiB per vector)");
    println!("  copy in:  {:>9.3} ms (2 vectors)", copy_in.as_secs_f64() * 1e3);
    println!(
        "  kernel:   {:>9.3} ms GPU time, {:.3} ms wall",
        gpu.as_secs_f64() * 1e3,
        launch.as_secs_f64() * 1e3
    );
    println!("  copy out: {:>9.3} ms", copy_out.as_secs_f64() * 1e3);
    if bad > 0 {
        return Err(format!("{bad} of {n} elements are wrong"));
    }
    println!("all {n} elements correct");
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vadd: {e}");
            ExitCode::FAILURE
        }
    }
}
