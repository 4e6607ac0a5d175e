//! A C program that knows only `<linux/kfd_ioctl.h>` (`tests/c/kfd_client.c`) runs
//! under the interposer: topology, VM, memory, a compute queue, a forked child that
//! closes the devices and execs, a vforked one that also close_range's and dup2's
//! over them (as CPython's subprocess does), posix_spawn, a PM4 dispatch of the
//! committed `vadd` code object rung by a plain doorbell store, an event wait and a
//! memory fault, all answered by the mock. Compiled with the system's C compiler
//! (`CC`, else `cc`) against the KFD headers of interfaces 1.17 and 1.11 kept in
//! `crates/amd-kfd/vendor`; where there is no compiler, or no `<linux/types.h>`,
//! the test says so and passes without running.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The interposer library cargo built for this test run: beside the test executable
/// (`target/<profile>/deps/`, where cargo builds the lib target's cdylib with its rlib
/// before the tests), else one level up (`cargo build`'s copy).
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let here = deps.join("libamd_interpose.so");
    if here.exists() {
        return here;
    }
    deps.parent().unwrap_or(deps).join("libamd_interpose.so")
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds `tests/c/kfd_client.c` against the KFD header in `include` and runs it
/// under the interposer, checking each step and the header's create-queue size.
fn raw_client_against(include: &Path, create_queue_bytes: usize) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        eprintln!("skipped: no C compiler ({cc})");
        return;
    }
    if !Path::new("/usr/include/linux/types.h").exists() {
        eprintln!("skipped: no <linux/types.h> (Debian: linux-libc-dev)");
        return;
    }
    let lib = library();
    assert!(lib.exists(), "{} was not built", lib.display());
    let src = manifest().join("tests/c/kfd_client.c");
    let out = std::env::temp_dir().join(format!("kfd_client-{}-{create_queue_bytes}", std::process::id()));
    let built = Command::new(&cc)
        .args(["-O1", "-pthread", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(include)
        .arg("-idirafter")
        .arg(manifest().join("tests/c/shim"))
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .output()
        .expect("running the C compiler");
    assert!(
        built.status.success(),
        "compiling {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&built.stderr)
    );
    let vadd = manifest().join("../../tests/kernels/vadd.hsaco");
    // As it is, and with the mock's sanitizer on: its address-space reservations
    // then go through the mock, which leaves a guard gap after each.
    for sanitize in ["0", "1"] {
        let run = Command::new(&out)
            .arg(&vadd)
            .env("LD_PRELOAD", &lib)
            .env("AMD_MOCK_GPUS", "1")
            .env("AMD_MOCK_SANITIZE", sanitize)
            .output()
            .expect("running the C client");
        let stdout = String::from_utf8_lossy(&run.stdout);
        let stderr = String::from_utf8_lossy(&run.stderr);
        println!("{stdout}{stderr}");
        assert!(
            run.status.success(),
            "the C client failed (AMD_MOCK_SANITIZE={sanitize}):\n{stdout}{stderr}"
        );
        let abi = format!("create_queue {create_queue_bytes} bytes");
        for step in [
            "topology: gpu_id",
            "kfd: version 1.17",
            &abi,
            "dup: a duplicate of /dev/kfd answered",
            "vm: acquired",
            "fork: the child closed its copies",
            "vfork: the child closed the devices",
            "dispatch: vadd of 1000 floats correct",
            "fault: at 0x10000",
            "all steps passed",
        ] {
            assert!(stdout.contains(step), "missing {step:?} in:\n{stdout}");
        }
    }
    let _ = std::fs::remove_file(&out);
}

/// The header of Linux 6.12 (interface 1.17: a 96-byte CREATE_QUEUE).
#[test]
fn a_raw_kfd_client_in_c_runs_on_the_mock() {
    raw_client_against(&manifest().join("../amd-kfd/vendor"), 96);
}

/// The header of Linux 6.1 (interface 1.11: an 88-byte CREATE_QUEUE), as older
/// clients are built: the mock takes its smaller structs as the kernel does.
#[test]
fn a_client_built_against_the_older_header_runs_too() {
    raw_client_against(&manifest().join("../amd-kfd/vendor/kfd-1.11"), 88);
}

/// Without the interposer, the same client finds no GPU here (no `/dev/kfd` on these
/// machines): the test above is the mock answering, not a real driver.
#[test]
fn the_interposer_only_answers_for_the_mock_paths() {
    let lib = library();
    assert!(lib.exists(), "{} was not built", lib.display());
    // A plain program reads host files through the interposer unchanged.
    let out = Command::new("cat")
        .arg(manifest().join("Cargo.toml"))
        .env("LD_PRELOAD", &lib)
        .output()
        .expect("cat");
    assert!(out.status.success());
    assert_eq!(
        out.stdout,
        std::fs::read(manifest().join("Cargo.toml")).unwrap(),
        "host files read unchanged"
    );
    // And the mock's topology appears under its real path.
    let out = Command::new("cat")
        .arg("/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties")
        .env("LD_PRELOAD", &lib)
        .env("AMD_MOCK_PROFILE", "gfx1030")
        .output()
        .expect("cat");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("gfx_target_version 100300"), "{text}");
}

/// A C client asks the render node what libdrm asks (`tests/c/render_node.c`, built
/// with 64-bit file offsets so that `fcntl` is glibc's `fcntl64`): `stat` and
/// `fstat` give a character device 226:128, `/sys/dev/char/226:128` leads to its
/// `device/drm` and a `subsystem` link ending in `pci`, and a descriptor duplicated
/// with `F_DUPFD_CLOEXEC` reaches the mock (`DRM_IOCTL_VERSION`: amdgpu 3.x).
#[test]
fn a_render_node_is_a_drm_character_device() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        eprintln!("skipped: no C compiler ({cc})");
        return;
    }
    let src = manifest().join("tests/c/render_node.c");
    let out = std::env::temp_dir().join(format!("render_node-{}", std::process::id()));
    let built = Command::new(&cc)
        .args(["-O1", "-Wall", "-Wextra", "-Werror", "-D_FILE_OFFSET_BITS=64", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("running the C compiler");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let run = Command::new(&out)
        .env("LD_PRELOAD", library())
        .output()
        .expect("the client");
    let _ = std::fs::remove_file(&out);
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && text.trim() == "ok",
        "{text}{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// The ROCm root `cargo xtask rocm-env` makes, where it exists and this process may
/// chroot into it (else `None`, having said why the test skips).
fn rocm_root() -> Option<PathBuf> {
    let root = manifest().join("../../target/rocm-env/trixie");
    if !root.join(".rocm-env-complete").exists() {
        eprintln!("skipped: no ROCm root (make it with `cargo xtask rocm-env`)");
        return None;
    }
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !is_root {
        eprintln!("skipped: running a client in the ROCm root needs chroot, which needs root");
        return None;
    }
    Some(root)
}

/// ROCm 6.1's `rocminfo` (Debian trixie's, unmodified, in the root `cargo xtask
/// rocm-env` makes) lists the mock's gfx1100, and with `AMD_MOCK_PROFILE=gfx942` its
/// MI300X partition, with name, marketing name, compute units and ISA. Skipped where
/// that root is absent or the test cannot chroot (not root).
#[test]
fn rocm_6_1_rocminfo_lists_the_mock_gpu() {
    let Some(root) = rocm_root() else { return };
    let lib = format!("tmp/libamd_interpose-{}.so", std::process::id());
    std::fs::copy(library(), root.join(&lib)).expect("copying the library into the root");
    let rocminfo = |profile: &str| {
        let out = Command::new("chroot")
            .arg(&root)
            .args([
                "env",
                &format!("LD_PRELOAD=/{lib}"),
                &format!("AMD_MOCK_PROFILE={profile}"),
                "rocminfo",
            ])
            .output()
            .expect("chroot rocminfo");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
        text
    };
    let (rdna3, cdna3) = (rocminfo("gfx1100"), rocminfo("gfx942"));
    let _ = std::fs::remove_file(root.join(&lib));
    for (text, wants) in [
        (
            &rdna3,
            [
                "Name:                    gfx1100",
                "Marketing Name:          AMD Radeon RX 7900 XTX",
                "Compute Unit:            96",
                "amdgcn-amd-amdhsa--gfx1100",
            ],
        ),
        (
            &cdna3,
            [
                "Name:                    gfx942",
                "Marketing Name:          AMD Instinct MI300X",
                "Compute Unit:            38",
                "amdgcn-amd-amdhsa--gfx942",
            ],
        ),
    ] {
        for want in ["ROCk module is loaded", "Device Type:             GPU", "*** Done ***"]
            .into_iter()
            .chain(wants)
        {
            assert!(text.contains(want), "missing {want:?} in:\n{text}");
        }
    }
}

/// Debian's `rocminfo` (ROCm 5.2.3: libhsakmt and ROCr underneath, both unmodified)
/// lists the mock's gfx1030 as an HSA agent. Skipped where rocminfo is not installed.
#[test]
fn rocminfo_lists_the_mock_gpu() {
    if Command::new("rocminfo").arg("--help").output().is_err() {
        eprintln!("skipped: rocminfo is not installed (Debian: apt-get install rocminfo)");
        return;
    }
    let out = Command::new("rocminfo")
        .env("LD_PRELOAD", library())
        .env("AMD_MOCK_PROFILE", "gfx1030")
        .output()
        .expect("rocminfo");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for want in [
        "Name:                    gfx1030",
        "Device Type:             GPU",
        "Compute Unit:            80",
        "amdgcn-amd-amdhsa--gfx1030",
        "*** Done ***",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

/// A client that dies without exiting (`SIGKILL`, `abort`) leaves no written-out tree
/// behind: the interposer's cleaner removes it once the process is gone; one that
/// exits removes it at exit. Each runs a shell under the interposer in a fresh
/// `TMPDIR`, reading a mock file itself (so the mock starts in that process).
#[test]
fn crashed_clients_leave_no_files_behind() {
    let read = "read -r l < /sys/devices/virtual/kfd/kfd/topology/nodes/1/properties && echo \"$l\"";
    for (how, end) in [
        ("SIGKILL", "kill -KILL $$"),
        ("abort", "kill -ABRT $$"),
        ("exit", "exit 0"),
    ] {
        let tmp = std::env::temp_dir().join(format!("interpose-cleanup-{}-{how}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let out = Command::new("/bin/sh")
            .args(["-c", &format!("{read}; ls \"$TMPDIR\"; {end}")])
            .env("LD_PRELOAD", library())
            .env("TMPDIR", &tmp)
            .output()
            .expect("sh");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("amd-interpose-"),
            "{how}: the tree was written out: {text}"
        );
        assert!(
            text.lines().next().is_some_and(|l| !l.is_empty()),
            "{how}: the mock answered: {text}"
        );
        let t = std::time::Instant::now();
        let left = loop {
            let left: Vec<_> = std::fs::read_dir(&tmp)
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            if left.is_empty() || t.elapsed() > std::time::Duration::from_secs(10) {
                break left;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(left.is_empty(), "{how}: left behind {left:?}");
        let _ = std::fs::remove_dir_all(&tmp);
    }
}

/// Builds `tests/hip/{rel}.hip` with the root's `hipcc` for `arch` into the root's
/// `/{work}/{name}-{arch}`; the path inside the root.
fn hip_build(root: &Path, work: &str, rel: &str, arch: &str) -> String {
    let name = Path::new(rel).file_name().and_then(|n| n.to_str()).unwrap_or(rel);
    let src = manifest().join(format!("../../tests/hip/{rel}.hip"));
    std::fs::copy(&src, root.join(work).join(format!("{name}.hip"))).unwrap();
    let exe = format!("/{work}/{name}-{arch}");
    let built = Command::new("chroot")
        .arg(root)
        .arg("hipcc")
        .arg(format!("--offload-arch={arch}"))
        .arg("-O2")
        .arg(format!("/{work}/{name}.hip"))
        .arg("-o")
        .arg(&exe)
        .args(hip_directive(rel, "hipcc").unwrap_or_default())
        .output()
        .expect("chroot hipcc");
    assert!(
        built.status.success(),
        "{rel} for {arch}: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    exe
}

/// The words of `tests/hip/{rel}.hip`'s `// {key}: …` line up to a parenthesis (its
/// `hipcc` options, the `profiles` it runs on); `None` where it has none.
fn hip_directive(rel: &str, key: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(manifest().join(format!("../../tests/hip/{rel}.hip"))).ok()?;
    let prefix = format!("// {key}:");
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(&prefix).map(str::to_string))?;
    let words = line.split('(').next().unwrap_or_default();
    Some(words.split_whitespace().map(str::to_string).collect())
}

/// Runs the root's `exe` under the interposer (the root's `/{work}`'s copy) with
/// `env` set; whether it exited 0, and its output. A client that hangs fails after
/// two minutes rather than holding the test command up.
fn hip_run(root: &Path, work: &str, exe: &str, env: &[&str]) -> (bool, String) {
    let out = Command::new("timeout")
        .arg("120")
        .arg("chroot")
        .arg(root)
        .args(["env", &format!("LD_PRELOAD=/{work}/libamd_interpose.so")])
        .args(env)
        .arg(exe)
        .output()
        .expect("chroot the program");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A work folder in the root with the interposer in it.
fn hip_work(root: &Path, what: &str) -> String {
    let work = format!("tmp/{what}-{}", std::process::id());
    std::fs::create_dir_all(root.join(&work)).unwrap();
    std::fs::copy(library(), root.join(&work).join("libamd_interpose.so")).unwrap();
    work
}

/// A HIP program with a bug, under the mock's sanitizer on a GPU without large BAR
/// (ROCr's device memory is then GPU-only VRAM, which the sanitizer watches): its
/// kernel reads a `hipMalloc` buffer nothing wrote, and the run stops with the mock's
/// report naming the byte; without the sanitizer it runs. Skipped where the ROCm root
/// is absent or the test cannot chroot.
#[test]
fn rocm_6_1_hip_uninitialized_read_is_found_by_the_sanitizer() {
    let Some(root) = rocm_root() else { return };
    let work = hip_work(&root, "hip-sanitizer");
    let exe = hip_build(&root, &work, "sanitizer/uninitialized", "gfx1100");
    let env = |s| ["AMD_MOCK_PROFILE=gfx1100", "AMD_MOCK_LARGE_BAR=0", s];
    let (ok, text) = hip_run(&root, &work, &exe, &env("AMD_MOCK_SANITIZE=0"));
    assert!(ok && text.contains("ran: no error"), "{text}");
    let (ok, text) = hip_run(&root, &work, &exe, &env("AMD_MOCK_SANITIZE=1"));
    let _ = std::fs::remove_dir_all(root.join(&work));
    assert!(!ok, "{text}");
    assert!(
        text.contains("the sanitizer stopped a read of") && text.contains("which nothing has written"),
        "{text}"
    );
}

/// ROCm 6.1's HIP (5.7, Debian trixie's), unmodified: the programs of `tests/hip/` —
/// a vector add with events, a tiled matrix multiply in shared memory, a reduction
/// with atomics, a kernel launch as the first GPU work (the queue's first doorbell,
/// which the mock once missed), the device library's math, shuffles, ballots, atomics
/// and halves, rocThrust's and hipCUB's sorts, scans and reductions (whose gfx942
/// warp scans use DPP row broadcasts), rocBLAS's GEMMs and level-1 and -2 routines
/// (its Tensile kernels, on gfx1100 only: Debian's has none for gfx942), rocFFT's
/// forward FFT (kernels it compiles at run time) and rocRAND's generators (gfx1100
/// only, as rocBLAS) — built with the root's `hipcc --offload-arch=gfx1100` and
/// `--offload-arch=gfx942` and run on a mock of that GPU (`AMD_MOCK_PROFILE`), each
/// printing `ok`. Skipped where the ROCm root is absent or the test cannot chroot.
#[test]
fn rocm_6_1_hip_programs_run_unmodified() {
    let Some(root) = rocm_root() else { return };
    let work = hip_work(&root, "hip-test");
    let mut failed = Vec::new();
    // The libraries came to the root later: an older root lacks them.
    let needs = [
        ("primitives", "usr/include/hipcub/hipcub.hpp"),
        ("blas", "usr/include/rocblas/rocblas.h"),
        ("fft", "usr/include/rocfft/rocfft.h"),
        ("random", "usr/include/rocrand/rocrand.h"),
    ];
    let lacking: Vec<&str> = needs
        .iter()
        .filter(|(_, header)| !root.join(header).exists())
        .map(|&(name, _)| name)
        .collect();
    for name in &lacking {
        eprintln!("{name}.hip skipped: the ROCm root lacks its library (update it with `cargo xtask rocm-env`)");
    }
    let programs = [
        "vadd",
        "matmul",
        "reduce",
        "launch_first",
        "device_library",
        "primitives",
        "blas",
        "fft",
        "random",
    ];
    for arch in ["gfx1100", "gfx942"] {
        for name in programs {
            let elsewhere = hip_directive(name, "profiles").is_some_and(|p| !p.iter().any(|p| p == arch));
            if lacking.contains(&name) || elsewhere {
                continue;
            }
            let exe = hip_build(&root, &work, name, arch);
            let (ok, text) = hip_run(&root, &work, &exe, &[&format!("AMD_MOCK_PROFILE={arch}")]);
            if !(ok && text.starts_with("ok")) {
                failed.push(format!("{name} on {arch}: {text}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(root.join(&work));
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
