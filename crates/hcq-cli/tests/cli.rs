//! The `hcq` tool, run as users run it, on the mock GPU.

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Output, Stdio};

use amd_packets::GfxTarget;
use amd_packets::pm4::ReleaseMem;

const KERNELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/kernels");

fn hcq(args: &[impl AsRef<OsStr>], stdin: Option<&str>) -> Output {
    hcq_env(args, stdin, &[])
}

fn hcq_env(args: &[impl AsRef<OsStr>], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(args)
        .env("AMD_IFACE", "MOCK")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(s) = stdin {
        c.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    drop(c.stdin.take());
    c.wait_with_output().unwrap()
}

/// `hcq run vadd.hsaco vadd` in `grid` workgroups of `block`, an `--arg` for each of
/// `args`.
fn run_vadd(grid: &str, block: &str, args: [&str; 4]) -> Vec<String> {
    let vadd = format!("{KERNELS}/vadd.hsaco");
    let mut v: Vec<String> = ["run", &vadd, "vadd", "--grid", grid, "--block", block]
        .map(String::from)
        .to_vec();
    for a in args {
        v.extend(["--arg".to_string(), a.to_string()]);
    }
    v
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn info_lists_the_mock_gpu() {
    let o = hcq(&["info"], None);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("transport: the mock GPU"), "{out}");
    assert!(
        out.contains("GPU 0: gfx1100") && out.contains("compute units       96"),
        "{out}"
    );
}

/// `AMD_MOCK_PROFILE=gfx1201` with the driverless transport: a gfx1201 PCI GPU booted
/// by amd-am, and a kernel of its own build run on it.
#[test]
fn a_gfx1201_on_the_driverless_transport() {
    let env = [("AMD_IFACE", "MOCK_PCI"), ("AMD_MOCK_PROFILE", "gfx1201")];
    let o = hcq_env(&["info"], None, &env);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("transport: PCI (driverless) on the mock GPU"), "{out}");
    assert!(
        out.contains("GPU 0: gfx1201") && out.contains("packet family       Gfx12"),
        "{out}"
    );
    let vadd = format!("{KERNELS}/gfx1201/vadd.hsaco");
    let mut args = run_vadd(
        "4",
        "256",
        ["buf:f32:1000=iota", "buf:f32:1000=2.5", "buf:f32:1000", "u32:1000"],
    );
    args[1] = vadd;
    let o = hcq_env(&args, None, &env);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("arg 2: F32[1000] = 2.5 3.5 4.5 5.5 6.5 7.5 8.5 9.5 10.5 11.5 12.5 13.5 14.5 15.5 16.5 17.5 …"),
        "{out}"
    );
}

#[test]
fn run_launches_a_kernel_and_prints_its_buffers() {
    let o = hcq(
        &run_vadd(
            "4",
            "256",
            ["buf:f32:1000=iota", "buf:f32:1000=2.5", "buf:f32:1000", "u32:1000"],
        ),
        None,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("kernel vadd: grid [4, 1, 1] × block [256, 1, 1]"), "{out}");
    assert!(
        out.contains("arg 2: F32[1000] = 2.5 3.5 4.5 5.5 6.5 7.5 8.5 9.5 10.5 11.5 12.5 13.5 14.5 15.5 16.5 17.5 …"),
        "{out}"
    );
    // A float where the kernel takes uint: the runtime's message, exit 1.
    let o = hcq(
        &run_vadd("1", "64", ["buf:f32:4", "buf:f32:4", "buf:f32:4", "f32:1"]),
        None,
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("argument 3: a f32 for a uint"), "{err}");
}

/// A kernel told a count past its buffers, under the mock's sanitizer: the run fails
/// with the fault, and the report names the buffer it ran off (without the
/// sanitizer the overrun may land in the next buffer and go unseen).
#[test]
fn run_under_the_sanitizer_names_the_buffer_a_kernel_ran_off() {
    let o = hcq_env(
        &run_vadd(
            "5",
            "256",
            ["buf:f32:1024=iota", "buf:f32:1024=2.5", "buf:f32:1024", "u32:1100"],
        ),
        None,
        &[("AMD_MOCK_SANITIZE", "1")],
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("faulted in vadd"), "{err}");
    assert!(
        err.contains("the first byte after the end of the 4096-byte VRAM allocation at"),
        "{err}"
    );
}

#[test]
fn disasm_shows_kernels_descriptors_and_code() {
    let o = hcq(&["disasm", &format!("{KERNELS}/saxpy.hsaco")], None);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("target amdgcn-amd-amdhsa--gfx1100"), "{out}");
    assert!(out.contains("kernel saxpy"), "{out}");
    assert!(out.contains("arg 2: Value - at 16 (4 B) float"), "{out}");
    assert!(out.contains("s_load_b") && out.contains("s_endpgm"), "{out}");
}

/// Every instruction line of `hcq disasm`, for every committed kernel, is what
/// llvm-objdump-19 prints (the committed listings, `cargo xtask listings`).
#[test]
fn disasm_matches_llvm_objdump_for_every_committed_kernel() {
    // The gfx1100 builds, then the gfx1201 ones (RDNA4's decoder, chosen by the code
    // object's target), then the gfx942 ones (CDNA3's).
    let root = std::path::Path::new(KERNELS);
    for (dir, at_least) in [
        (root.to_path_buf(), 10_000),
        (root.join("gfx1201"), 5_000),
        (root.join("gfx942"), 20_000),
    ] {
        let mut codes: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "hsaco"))
            .collect();
        codes.sort();
        assert!(codes.len() >= 40, "{}", dir.display());
        let mut total = 0;
        for code in codes {
            let stem = code.file_stem().unwrap().to_str().unwrap();
            let listing = std::fs::read_to_string(dir.join("llvm-objdump").join(format!("{stem}.txt"))).unwrap();
            let o = hcq(&["disasm", code.to_str().unwrap()], None);
            let (out, err) = text(&o);
            assert!(o.status.success(), "{stem}: {err}");
            // "  1700: s_mov_b32 s2, exec_lo     // be82007e"
            let ours: Vec<(String, String)> = out
                .lines()
                .filter_map(|l| {
                    let (asm, raw) = l.split_once(" // ")?;
                    let (_, asm) = asm.split_once(": ")?;
                    Some((raw.to_string(), asm.trim_end().to_string()))
                })
                .collect();
            let theirs: Vec<(String, String)> = listing
                .lines()
                .map(|l| {
                    let (raw, asm) = l.split_once('\t').unwrap();
                    (raw.to_string(), asm.to_string())
                })
                .collect();
            assert_eq!(ours.len(), theirs.len(), "{stem}: instruction count");
            for (a, b) in ours.iter().zip(&theirs) {
                assert_eq!(a, b, "{}: {stem}", dir.display());
            }
            total += ours.len();
        }
        assert!(total > at_least, "{}: {total} instructions", dir.display());
    }
}

#[test]
fn decode_reads_hex_dwords() {
    let mut words = Vec::new();
    ReleaseMem::signal(0x7ff0_0000_1000, 7).encode(GfxTarget::Gfx11, &mut words);
    let hex: Vec<String> = words.iter().map(|w| format!("{w:#010x}")).collect();
    let input = format!("# a signal\n{}\n", hex.join(", "));
    let o = hcq(&["decode"], Some(&input));
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.trim_start().starts_with("0: RELEASE_MEM"), "{out}");
    // gfx9.4's 7-dword ACQUIRE_MEM reads as one packet with --target gfx942, not
    // with gfx11's 8-dword layout.
    let mut words = Vec::new();
    amd_packets::pm4::recipes::memory_barrier(GfxTarget::Gfx94, &mut words);
    let hex: Vec<String> = words.iter().map(|w| format!("{w:#010x}")).collect();
    let o = hcq(&["decode", "--target", "gfx942"], Some(&hex.join(" ")));
    let (out, err) = text(&o);
    assert!(o.status.success() && out.contains("ACQUIRE_MEM"), "{out}{err}");
    let o = hcq(&["decode"], Some(&hex.join(" ")));
    assert_eq!(o.status.code(), Some(1), "gfx11 reads the 7-dword form as truncated");
    let o = hcq(&["decode"], Some("0x12345678 zz"));
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("line 1: \"zz\" is not a 32-bit hex dword"), "{err}");
}

#[test]
fn usage_errors_exit_2_with_the_usage() {
    for args in [
        &[][..],
        &["bogus"],
        &["run", "x"],
        &["decode", "--target", "gfx9"],
        &["run", "f", "k", "--grid", "0"],
    ] {
        let o = hcq(args, None);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("usage:"), "{args:?}: {err}");
    }
    let o = hcq(&["disasm", "/nonexistent.hsaco"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("/nonexistent.hsaco: No such file"));
    let o = hcq(&["--help"], None);
    assert!(o.status.success() && text(&o).0.contains("hcq run FILE KERNEL"));
}

/// `HCQ_PROFILE=FILE` makes the runtime write a Chrome / Perfetto trace when the
/// device closes.
#[test]
fn hcq_profile_writes_a_trace() {
    let path = std::env::temp_dir().join(format!("hcq-trace-{}.json", std::process::id()));
    let o = hcq_env(
        &run_vadd("1", "64", ["buf:f32:64=1", "buf:f32:64=2", "buf:f32:64", "u32:64"]),
        None,
        &[("HCQ_PROFILE", path.to_str().unwrap())],
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let trace = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let events: Vec<&str> = trace.split("\"ph\":\"X\"").skip(1).collect();
    assert!(events.iter().any(|e| e.contains("\"name\":\"vadd\"")), "{trace}");
    assert!(events.iter().any(|e| e.contains("\"name\":\"copy_in\"")), "{trace}");
    assert!(
        trace.starts_with("{\"traceEvents\":[") && trace.ends_with("]}"),
        "{trace}"
    );
}
